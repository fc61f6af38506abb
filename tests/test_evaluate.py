"""The weighted-feature evaluation: symmetry, one test per feature, the start position,
and basic mates (KQK, KRK, KBNK) won by the engine."""

from __future__ import annotations

import random

import chess
import numpy as np
import pytest

import engine.evaluate as E
from conftest import random_playout_fens
from engine.board import Board
from engine.evaluate import evaluate, load_weights, make_evaluator, trace_position
from engine.searcher import Searcher
from engine.timeman import Limits

WEIGHTS = load_weights()


def white_score(fen: str, weights: np.ndarray = WEIGHTS) -> int:
    """Static evaluation of ``fen`` in centipawns for White."""
    board = Board(fen)
    score = int(evaluate(board.pos, board.tab, make_evaluator(weights)))
    return score if board.turn == 0 else -score


def counts(fen: str) -> np.ndarray:
    """Traced feature counts, int[2, N_TERMS] (White's row, Black's row)."""
    board = Board(fen)
    ev = make_evaluator(WEIGHTS, traced=True)
    trace_position(board.pos, board.tab, ev)
    return ev.feature_counts[:, :E.N_TERMS].copy()


def contribution(fen: str, term: int) -> float:
    """What ``term`` adds to White's score in ``fen`` (middlegame/endgame blended by phase)."""
    board = Board(fen)
    ev = make_evaluator(WEIGHTS, traced=True)
    trace_position(board.pos, board.tab, ev)
    phase = ev.feature_counts[0, E.TRACE_PHASE]
    diff = int(ev.feature_counts[0, term]) - int(ev.feature_counts[1, term])
    return diff * (WEIGHTS[term, 0] * phase + WEIGHTS[term, 1] * (24 - phase)) / 24


def test_colour_flipped_positions_score_the_same_for_the_side_to_move() -> None:
    for fen in random_playout_fens(300, seed=5):
        board = Board(fen)
        mirror = Board(chess.Board(fen).mirror().fen())
        ev = make_evaluator()
        assert evaluate(board.pos, board.tab, ev) == evaluate(mirror.pos, mirror.tab, ev), fen


def test_start_position_is_within_a_tempo_of_zero() -> None:
    tempo = max(WEIGHTS[E.TEMPO])
    assert abs(white_score(chess.STARTING_FEN)) <= tempo
    assert white_score(chess.STARTING_FEN) > 0  # the side to move has the tempo


def test_trace_reproduces_the_score() -> None:
    """The weighted sum of the traced counts, with the complexity term's clamp, is the score:
    the tuner's model is the kernel."""
    for fen in random_playout_fens(50, seed=9):
        board = Board(fen)
        ev = make_evaluator(WEIGHTS, traced=True)
        score = trace_position(board.pos, board.tab, ev)
        x = ev.feature_counts[0, :E.N_TERMS].astype(np.int64) - ev.feature_counts[1, :E.N_TERMS]
        phase, scale, mop_up = (int(v) for v in ev.feature_counts[0, E.TRACE_PHASE:E.TRACE_MOPUP + 1])
        complexity = slice(E.COMPLEXITY, E.COMPLEXITY + len(E.COMPLEXITY_LABELS))
        counts = np.abs(x[complexity])       # traced under the colour the endgame score favours
        x[complexity] = 0
        mg, eg = int(x @ WEIGHTS[:, 0]), int(x @ WEIGHTS[:, 1])
        if eg != 0:                          # complexity: never more than takes the advantage to 0
            bonus = max(int(counts @ WEIGHTS[complexity, 1]), -abs(eg))
            eg += bonus if eg > 0 else -bonus
        eg = E._divide(eg * scale, 64) + mop_up
        white = E._divide(mg * phase + eg * (24 - phase), 24)
        assert (white if board.turn == 0 else -white) == score


def test_search_path_and_traced_path_agree() -> None:
    """The search sums material and piece-square weights from a precomputed table; the
    traced path counts them term by term.  Both must give the same score."""
    ev = make_evaluator()
    for fen in random_playout_fens(100, seed=13):
        board = Board(fen)
        traced = make_evaluator(WEIGHTS, traced=True)
        assert evaluate(board.pos, board.tab, ev) == trace_position(board.pos, board.tab, traced), fen


# One position per feature where White has it and Black has not: (fen, first term, terms,
# expected sign of White's gain).  The feature's count must favour White, raising its
# weight must raise White's score, and the tuned weights must value it the way chess does.
FEATURES = {
    "material": ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", E.MATERIAL + 3, 1, +1),
    "doubled pawns": ("4k3/4p3/8/8/8/4P3/4P3/4K3 w - - 0 1", E.PAWN_DOUBLED, 1, -1),
    "isolated pawn": ("4k3/5pp1/8/8/8/8/P5P1/4K3 w - - 0 1", E.PAWN_ISOLATED_FILE, 8, -1),
    "backward pawn": ("4k3/8/8/4p3/2P5/3P4/8/4K3 w - - 0 1", E.PAWN_BACKWARD_RANK, 16, -1),
    "connected pawns": ("4k3/p1p5/8/8/3PP3/8/8/4K3 w - - 0 1", E.PAWN_CONNECTED_SQUARE, 32, +1),
    "passed pawn": ("4k3/8/1P6/8/8/8/8/4K3 w - - 0 1", E.PASSED, 8, +1),
    "candidate passer": ("4k3/8/1p6/8/1PP5/8/8/4K3 w - - 0 1", E.CANDIDATE, 8, +1),
    "free path": ("4k3/8/1P6/8/8/6p1/6B1/4K3 w - - 0 1", E.PASSED_FREE, 8, +1),
    "king near passer": ("8/8/1PK5/8/8/8/8/6k1 w - - 0 1", E.PASSED_OWN_KING, 8, -1),
    "enemy king far from passer": ("8/8/1PK5/8/8/8/8/6k1 w - - 0 1", E.PASSED_ENEMY_KING, 8, +1),
    "king attackers": ("rnb3k1/5ppp/q7/6N1/8/3B4/5PPP/3Q1RK1 w - - 0 1", E.KING_ZONE_ATTACKS, 4, +1),
    # (with queens, rooks and knights on: self-play weights value a queen's safe check
    # slightly below zero in the endgame, where there is no king attack to support)
    "safe checks": ("6k1/5ppp/1n6/8/8/2N5/1q3PPP/3Q1RK1 w - - 0 1", E.SAFE_CHECKS, 4, +1),
    "bishop pair": ("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1", E.BISHOP_PAIR, 1, +1),
    # (with queens on: the rook's file is a middlegame asset, and the fitted endgame weight,
    # beside the rook's mobility, is near zero)
    "rook on open file": ("q3k3/pp6/8/8/8/8/PP6/Q2RK3 w - - 0 1", E.ROOK_OPEN_FILE, 1, +1),
    "rook on seventh": ("6k1/1R3ppp/8/8/8/8/5PPP/6K1 w - - 0 1", E.ROOK_ON_SEVENTH, 1, +1),
    "outpost": ("4k3/pp6/8/3N4/2P5/8/8/4K3 w - - 0 1", E.OUTPOST, 2, +1),
    "threat by pawn": ("4k3/8/3n4/4P3/8/8/8/4K3 w - - 0 1", E.THREAT_BY_PAWN, 4, +1),
    "threat by minor": ("4k3/8/3r4/8/4N3/8/8/4K3 w - - 0 1", E.THREAT_BY_MINOR, 2, +1),
    "hanging piece": ("4k3/8/3n4/8/8/8/8/3RK3 w - - 0 1", E.HANGING, 1, +1),
    "tempo": ("4k3/4p3/8/8/8/8/4P3/4K3 w - - 0 1", E.TEMPO, 1, +1),
}


@pytest.mark.parametrize("feature", sorted(FEATURES))
def test_each_feature_is_counted_moves_the_total_and_has_its_chess_sign(feature: str) -> None:
    fen, first, size, sign = FEATURES[feature]
    terms = range(first, first + size)
    found = counts(fen)
    assert sum(int(found[0, t]) - int(found[1, t]) for t in terms) != 0, "the feature is not counted"
    used = [t for t in terms if found[0, t] != found[1, t]]
    bumped = WEIGHTS.copy()
    for t in used:
        bumped[t] += 50 * np.sign(int(found[0, t]) - int(found[1, t]))
    assert white_score(fen, bumped) > white_score(fen), "the weight does not reach the total"
    assert sign * sum(contribution(fen, t) for t in used) > 0, "tuned weight has the wrong sign"


def test_a_pawn_shelter_is_worth_more_than_none() -> None:
    """Every file around each king takes one shelter row (a table by how far ahead our
    nearest pawn stands), so the count alone cannot favour a side: the fitted weights must.
    White's king has f2, g2 and h2 in front of it, Black's none."""
    fen = "r2q1rk1/8/8/8/8/8/5PPP/R2Q1RK1 w - - 0 1"
    found = counts(fen)
    rows = range(E.KING_SHELTER, E.KING_SHELTER + 64)
    # h, f and g (the king's file, read as b) one rank ahead for White; none ahead for Black
    assert [t - E.KING_SHELTER for t in rows if found[0, t]] == [8 * 0 + 1, 8 * 2 + 1, 32 + 8 * 1 + 1]
    assert [t - E.KING_SHELTER for t in rows if found[1, t]] == [8 * 0 + 7, 8 * 2 + 7, 32 + 8 * 1 + 7]
    assert sum(contribution(fen, t) for t in rows) > 0


def test_candidate_passer_needs_as_many_helpers_as_sentries() -> None:
    """c4 with b4 beside it against b6 is a candidate; alone against b6 and d6 it is not."""
    candidates = slice(E.CANDIDATE, E.CANDIDATE + 8)
    assert counts("4k3/8/1p6/8/1PP5/8/8/4K3 w - - 0 1")[0, candidates].sum() == 1
    assert counts("4k3/8/1p1p4/8/2P5/8/8/4K3 w - - 0 1")[0, candidates].sum() == 0
    # A pawn blocked on its file is no candidate, however many helpers it has (b2, d2).
    assert counts("4k3/8/2p5/8/2P5/8/1P1P4/4K3 w - - 0 1")[0, candidates].sum() == 0


# ---------------------------------------------------------------------------
# Optional terms: computed by the search only when their weights are not all zero
# ---------------------------------------------------------------------------

def with_optional_weights() -> np.ndarray:
    """The shipped weights with a nonzero, distinct weight on every optional row."""
    weights = WEIGHTS.copy()
    for _, first, rows in E.OPTIONAL_ROWS:
        for row in range(first, first + rows):
            weights[row] = (7 + row % 13, -5 + row % 11)
    return weights


def without_optional_weights() -> np.ndarray:
    """The shipped weights with every optional row at zero: the base terms alone."""
    weights = WEIGHTS.copy()
    for _, first, rows in E.OPTIONAL_ROWS:
        weights[first:first + rows] = 0
    return weights


def test_an_optional_term_is_on_exactly_when_one_of_its_rows_is_nonzero() -> None:
    assert not E.optional_terms_on(without_optional_weights()).any()
    assert E.optional_terms_on(with_optional_weights()).all()
    one = without_optional_weights()
    one[E.SPACE] = (1, 0)
    assert E.optional_terms_on(one).tolist() == [int(term == E.OPT_SPACE) for term in range(E.N_OPTIONAL)]


def test_optional_terms_keep_the_evaluation_colour_symmetric_and_traceable() -> None:
    """With every optional weight nonzero, a position and its mirror score alike, and the
    search's path (optional terms switched on by their weights) equals the traced one."""
    weights = with_optional_weights()
    ev = make_evaluator(weights)
    assert ev.optional_on.all()
    for fen in random_playout_fens(150, seed=21):
        board = Board(fen)
        mirror = Board(chess.Board(fen).mirror().fen())
        score = int(evaluate(board.pos, board.tab, ev))
        assert score == int(evaluate(mirror.pos, mirror.tab, ev)), fen
        assert score == trace_position(board.pos, board.tab, make_evaluator(weights, traced=True)), fen


def danger_rows(fen: str) -> list[int]:
    """White's attack units on the black king, as the danger rows the trace counted."""
    row = counts(fen)[0, E.KING_DANGER:E.KING_DANGER + 24]
    return [units + 1 for units in np.flatnonzero(row) for _ in range(int(row[units]))]


def test_king_danger_adds_attack_units_and_safe_checks() -> None:
    # Knight g5 (2) and rook h1 (3) both hit g8's zone (f7, h7); no safe check.
    assert danger_rows("6k1/5ppp/8/6N1/8/8/8/4K2R w - - 0 1") == [5]
    # The knight alone is no attack.
    assert danger_rows("6k1/5ppp/8/6N1/8/8/8/4K3 w - - 0 1") == []
    # The queen alone is (5, hitting f7), and it has safe checks on d8 and a8: one kind, 4.
    assert danger_rows("6k1/5ppp/8/3Q4/8/8/8/4K3 w - - 0 1") == [9]


def danger_index_rows(fen: str) -> list[int]:
    """The rows of White's king danger index on the black king that the trace counted."""
    return [int(row) for row in np.flatnonzero(counts(fen)[0, E.KING_DANGER_INDEX:E.KING_DANGER_INDEX + 32])]


def test_the_king_danger_index_adds_its_inputs_in_danger_points() -> None:
    # Knight g5 and rook h1 on g8's six-square area: 2 attackers x (4 + 3), 3 attacks on it
    # as 11 x 9 x 3 // 6 = 49; f7 and h7 weak (only the king guards them) +20; g7 a shield
    # pawn -6; no safe check; no queen -69; adjustment -5: 3 points, row 0.
    assert danger_index_rows("6k1/5ppp/8/6N1/8/8/8/4K2R w - - 0 1") == [0]
    # The knight alone is no attack, and nor is it beside a rook far from the king.
    assert danger_index_rows("6k1/5ppp/8/6N1/8/8/8/4K3 w - - 0 1") == []
    assert danger_index_rows("6k1/5ppp/8/6N1/8/8/8/R3K3 w - - 0 1") == []
    # The queen alone is: 1 x 2, one attack (f7) 16, f7 weak 10, g7 and h7 -12, safe
    # checks from d8 and a8 2 x 24, adjustment -5: 59 points, row 7.
    assert danger_index_rows("6k1/5ppp/8/3Q4/8/8/8/4K3 w - - 0 1") == [7]
    # A rook on f8 guards f7 a second time (not weak: three shield pawns, -18) and shuts the
    # eighth rank (no safe check): 18 - 18 - 5 = -5 points, which count for nothing.
    assert danger_index_rows("5rk1/5ppp/8/3Q4/8/8/8/4K3 w - - 0 1") == []


def test_closedness_counts_pawns_rams_and_open_files() -> None:
    assert E.closedness(Board(chess.STARTING_FEN).pos) == 4                         # 16 pawns / 4
    assert E.closedness(Board("4k3/pppppppp/PPPPPPPP/8/8/8/8/4K3 w - - 0 1").pos) == 8  # (16 + 16) / 4
    assert E.closedness(Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1").pos) == 0            # (0 - 16) / 4, at least 0
    found = counts(chess.STARTING_FEN)
    for block in (E.CLOSED_KNIGHT, E.CLOSED_ROOK):
        assert found[0, block + 4] == found[1, block + 4] == 2
        assert found[:, block:block + 9].sum() == 4


def test_space_counts_safe_centre_squares_and_those_behind_pawns_twice() -> None:
    found = counts(chess.STARTING_FEN)
    assert found[0, E.SPACE] == found[1, E.SPACE] == 8   # c3-f4; c2-f2 hold pawns
    # 1. e4: the pawn leaves e2 for e4 (still 8 squares), and e2, e3 lie behind it (2 more).
    assert counts("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")[0, E.SPACE] == 10


def test_pawn_push_threats_need_a_safe_push() -> None:
    assert counts("4k3/8/8/3n4/8/4P3/8/4K3 w - - 0 1")[0, E.PAWN_PUSH_THREAT] == 1   # e4 hits d5
    assert counts("4k3/8/8/3n1p2/8/4P3/8/4K3 w - - 0 1")[0, E.PAWN_PUSH_THREAT] == 0  # f5 guards e4
    assert counts("4k3/8/8/2n5/8/8/3P4/4K3 w - - 0 1")[0, E.PAWN_PUSH_THREAT] == 1    # d2-d4 hits c5


def test_a_bishop_walled_in_its_corner_is_counted() -> None:
    assert counts("4k3/8/8/8/8/8/1P6/B3K3 w - - 0 1")[0, E.CORNERED_BISHOP] == 1
    assert counts("4k3/8/8/8/8/8/2P5/B3K3 w - - 0 1")[0, E.CORNERED_BISHOP] == 0
    assert counts("4k2b/6p1/8/8/8/8/8/4K3 w - - 0 1")[1, E.CORNERED_BISHOP] == 1


def test_a_minor_piece_right_behind_a_pawn_of_either_colour_is_counted() -> None:
    assert counts("4k3/8/8/8/8/4P3/4N3/4K3 w - - 0 1")[0, E.MINOR_BEHIND_PAWN] == 1      # Ne2, e3
    assert counts("4k3/8/8/8/3p4/3B4/8/4K3 w - - 0 1")[0, E.MINOR_BEHIND_PAWN + 1] == 1  # Bd3, black d4
    assert counts("4k3/3n4/3p4/8/8/8/8/4K3 w - - 0 1")[1, E.MINOR_BEHIND_PAWN] == 1      # Nd7, d6
    assert counts("4k3/8/8/8/4N3/4P3/8/4K3 w - - 0 1")[0, E.MINOR_BEHIND_PAWN] == 0      # in front of it


def test_a_bishop_counts_its_rammed_pawns_on_its_colour_and_holds_the_long_diagonal() -> None:
    # d4 and e3 are dark squares, rammed by d5 and e4: two for the dark bishop c1, none for f1.
    fen = "4k3/8/8/3p4/3Pp3/4P3/8/2B1KB2 w - - 0 1"
    assert counts(fen)[:, E.BISHOP_RAMMED_PAWNS].tolist() == [2, 0]
    assert counts(chess.Board(fen).mirror().fen())[:, E.BISHOP_RAMMED_PAWNS].tolist() == [0, 2]
    # With the light bishop alone, nothing: the rammed pawns stand on dark squares.
    assert counts("4k3/8/8/3p4/3Pp3/4P3/8/4KB2 w - - 0 1")[0, E.BISHOP_RAMMED_PAWNS] == 0
    assert counts("4k3/8/8/8/8/8/1B6/4K3 w - - 0 1")[0, E.BISHOP_LONG_DIAGONAL] == 1   # b2 sees d4, e5
    assert counts("4k3/8/8/8/8/2N5/1B6/4K3 w - - 0 1")[0, E.BISHOP_LONG_DIAGONAL] == 1  # through a piece
    assert counts("4k3/8/8/8/8/2P5/1B6/4K3 w - - 0 1")[0, E.BISHOP_LONG_DIAGONAL] == 0  # not a pawn
    assert counts("4k3/8/8/8/3B4/8/8/4K3 w - - 0 1")[0, E.BISHOP_LONG_DIAGONAL] == 0    # in the centre
    assert counts("4k3/6b1/8/8/8/8/8/4K3 w - - 0 1")[1, E.BISHOP_LONG_DIAGONAL] == 1    # g7


def test_king_defenders_and_the_distance_to_the_pawns() -> None:
    found = counts(chess.STARTING_FEN)   # d2, e2, f2 and the bishop f1 (the queen does not count)
    assert found[0, E.KING_DEFENDERS + 4] == found[1, E.KING_DEFENDERS + 4] == 1
    assert found[:, E.KING_DEFENDERS:E.KING_DEFENDERS + E.MAX_DEFENDERS + 1].sum() == 2
    assert counts("4k3/8/8/8/8/8/8/4K3 w - - 0 1")[:, E.KING_DEFENDERS].tolist() == [1, 1]
    found = counts("4k3/8/8/8/8/8/P7/4K3 w - - 0 1")     # both kings four files from the a-pawn
    assert found[0, E.KING_PAWN_FILE + 4] == found[1, E.KING_PAWN_FILE + 4] == 1
    found = counts("7k/8/8/8/8/8/P7/K7 w - - 0 1")
    assert found[0, E.KING_PAWN_FILE] == 1 and found[1, E.KING_PAWN_FILE + 7] == 1
    assert counts("4k3/8/8/8/8/8/8/4K3 w - - 0 1")[:, E.KING_PAWN_FILE:E.KING_PAWN_FILE + 8].sum() == 0


def test_the_king_shelter_and_the_pawn_storm_are_counted_file_by_file() -> None:
    shelter = E.KING_SHELTER
    storm = E.KING_STORM_FILE
    # King g1 behind f2, g2 and h3 (files h, g, f read as a, b, c).  Black's pawns in front
    # of it: f7 (six ranks ahead), g4 (three, free) and h4 (three, rammed by h3).
    fen = "6k1/5ppp/8/8/6pp/7P/5PP1/6K1 w - - 0 1"
    found = counts(fen)
    assert found[0, shelter + 8 * 2 + 1] == 1            # f2: side file c, one rank ahead
    assert found[0, shelter + 32 + 8 * 1 + 1] == 1       # g2: the king's file b, one rank ahead
    assert found[0, shelter + 8 * 0 + 2] == 1            # h3: side file a, two ranks ahead
    assert found[0, storm + 8 * 2 + 6] == 1              # f7: free
    assert found[0, storm + 8 * 1 + 3] == 1              # g4: free
    assert found[0, storm + 32 + 8 * 0 + 3] == 1         # h4, just in front of h3: rammed
    assert found[0, shelter:shelter + 64].sum() == 3 and found[0, storm:storm + 64].sum() == 3
    # Black counts from its own side of the board: the mirror image gives Black the same rows.
    mirrored = counts(chess.Board(fen).mirror().fen())
    assert mirrored[1, shelter:storm + 64].tolist() == found[0, shelter:storm + 64].tolist()
    # A file without a pawn reads as distance 7.
    found = counts("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    assert found[0, shelter + 32 + 8 * 3 + 7] == 1       # the king's own e-file (read as d)
    assert found[0, shelter + 8 * 3 + 7] == 1 and found[0, shelter + 8 * 2 + 7] == 1   # d and f
    assert found[1, storm + 8 * 3 + 7] == 2              # d and e (storms do not tell the king's file)


def test_connected_isolated_and_backward_pawns_in_detail() -> None:
    # White: f4-g4 a phalanx (g reads as b, f as c), an isolated a2 on a closed file
    # (a7 ahead) and an isolated d3 on an open one.  Black's a7 is isolated on a file
    # closed by a2, which stands ahead of it from Black's side.
    found = counts("4k3/p7/8/8/5PP1/3P4/P7/4K3 w - - 0 1")
    assert found[0, E.PAWN_CONNECTED_SQUARE + 4 * 3 + 2] == 1    # f4
    assert found[0, E.PAWN_CONNECTED_SQUARE + 4 * 3 + 1] == 1    # g4
    assert found[0, E.PAWN_ISOLATED_FILE + 0] == 1               # a2, closed (a7 ahead)
    assert found[0, E.PAWN_ISOLATED_FILE + 4 + 3] == 1           # d3, open
    assert found[1, E.PAWN_ISOLATED_FILE + 0] == 1               # a7, closed
    # Backward: c2 behind b3 and d3, its stop square c3 guarded by Black's b4; the c-file
    # ahead of it is closed by c6.
    found = counts("4k3/8/2p5/8/1p6/1P1P4/2P5/4K3 w - - 0 1")
    assert found[0, E.PAWN_BACKWARD_RANK:E.PAWN_BACKWARD_RANK + 16].sum() == 1
    assert found[0, E.PAWN_BACKWARD_RANK + 1] == 1               # closed, on its 2nd rank
    found = counts("4k3/8/8/8/1p6/1P1P4/2P5/4K3 w - - 0 1")
    assert found[0, E.PAWN_BACKWARD_RANK + 8 + 1] == 1           # the same on an open file
    # Every pawn is counted once at most among connected, isolated and backward: here
    # White's b3 and d3 are connected (c2 guards them) and c2 is backward; Black's b4 is isolated.
    assert found[0, E.PAWN_CONNECTED_SQUARE:E.PAWN_BACKWARD_RANK + 16].sum() == 3
    assert found[1, E.PAWN_CONNECTED_SQUARE:E.PAWN_BACKWARD_RANK + 16].sum() == 1


def test_a_weights_file_with_the_coarse_twin_rows_scores_as_it_did(tmp_path) -> None:
    """A weights file written before the coarse pawn and shield/storm rows were folded into
    their detailed twins (2026-12-06) loads with each coarse weight added to every row that
    counts its feature: one isolated pawn scores the old isolated weight plus its file's."""
    legacy = {"pawns.isolated": (-10, -20), "king_safety.shield.missing": (-30, 5), "king_safety.storm.2": (-7, 0)}
    path = tmp_path / "legacy.txt"
    path.write_text("".join(f"{name} {mg} {eg}\n" for name, (mg, eg) in legacy.items()))
    weights = E.load_weights(path)
    assert weights[E.PAWN_ISOLATED_FILE:E.PAWN_ISOLATED_FILE + 8].tolist() == [[-10, -20]] * 8
    missing = [E.KING_SHELTER + kind + 8 * f + 7 for kind in (0, 32) for f in range(4)]
    assert weights[missing].tolist() == [[-30, 5]] * 8
    assert weights[E.KING_SHELTER + 6, 0] == 0                   # a pawn six ranks ahead is not missing
    storm = [E.KING_STORM_FILE + kind + 8 * f + 2 for kind in (0, 32) for f in range(4)]
    assert weights[storm].tolist() == [[-7, 0]] * 8
    assert np.count_nonzero(weights) == 2 * 8 + 2 * 8 + 8        # nothing else (the storm row has no eg)


def test_threats_by_attacker_and_victim_count_what_no_enemy_pawn_guards() -> None:
    # The knight d4 hits the bishop e6 and the rook c6; the rook a1 hits the pawn a7.
    found = counts("4k3/p7/2r1b3/8/3N4/8/8/R3K3 w - - 0 1")
    assert found[0, E.THREAT_MINOR_ON + 2] == 1 and found[0, E.THREAT_MINOR_ON + 3] == 1
    assert found[0, E.THREAT_ROOK_ON + 0] == 1
    # A pawn on d7 guards e6 and c6: the knight's threats no longer count.
    found = counts("4k3/p2p4/2r1b3/8/3N4/8/8/R3K3 w - - 0 1")
    assert found[0, E.THREAT_MINOR_ON:E.THREAT_MINOR_ON + 5].sum() == 0
    # The count belongs to the attacker whoever is to move: the queen d1 hits the knight d7.
    found = counts("4k3/3n4/8/8/8/8/8/3QK3 b - - 0 1")
    assert found[0, E.THREAT_QUEEN_ON + 1] == 1
    assert found[1, E.THREAT_MINOR_ON + 4] == 0 and found[1, E.THREAT_QUEEN_ON:E.THREAT_QUEEN_ON + 5].sum() == 0


def test_a_passed_pawn_push_is_safe_when_its_stop_square_is_empty_and_unguarded() -> None:
    assert counts("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1")[0, E.PASSED_SAFE_PUSH + 4] == 1
    assert counts("8/4k3/8/3P4/8/8/8/4K3 w - - 0 1")[0, E.PASSED_SAFE_PUSH + 4] == 0   # the king guards d6
    assert counts("4k3/8/3n4/3P4/8/8/8/4K3 w - - 0 1")[0, E.PASSED_SAFE_PUSH + 4] == 0  # d6 is taken
    assert counts("4k3/8/8/8/3p4/8/8/4K3 w - - 0 1")[1, E.PASSED_SAFE_PUSH + 4] == 1


def test_threats_by_the_king_and_on_weak_pawns() -> None:
    assert counts("4k3/8/8/8/8/8/3n4/4K3 w - - 0 1")[0, E.THREAT_BY_KING] == 1
    assert counts("4k3/8/8/3p4/8/8/8/3RK3 w - - 0 1")[0, E.WEAK_PAWN] == 1    # Rd1 hits d5
    assert counts("4k3/8/4p3/3p4/8/8/8/3RK3 w - - 0 1")[0, E.WEAK_PAWN] == 0  # e6 guards it
    assert counts("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1")[0, E.WEAK_PAWN] == 0   # a pawn's hit is not counted


def test_mobility_more_squares_is_better() -> None:
    for block, size in ((E.MOBILITY_KNIGHT, 9), (E.MOBILITY_BISHOP, 14), (E.MOBILITY_ROOK, 15)):
        mg = WEIGHTS[block:block + size, 0] + WEIGHTS[block:block + size, 1]
        assert mg[size - 3:].mean() > mg[:3].mean()
    assert counts("4k3/8/8/8/3B4/8/8/4K3 w - - 0 1")[0, E.MOBILITY_BISHOP + 13] == 1


def test_piece_square_tables_prefer_central_knights() -> None:
    assert white_score("4k3/8/8/8/3N4/8/8/4K3 w - - 0 1") > white_score("4k3/8/8/8/8/8/8/N3K3 w - - 0 1")


def test_drawish_material_is_scaled_down() -> None:
    # Two knights cannot mate, nor can a bishop: the endgame part is scaled to nothing.
    assert abs(white_score("4k3/8/8/8/8/8/8/2N1K1N1 w - - 0 1")) < 100
    assert abs(white_score("4k3/8/8/8/8/8/8/2B1K3 w - - 0 1")) < 50
    opposite = white_score("4k3/pp3b2/8/8/8/8/PPP2B2/4K3 w - - 0 1")       # a pawn up, bishops of
    same = white_score("4k3/pp2b3/8/8/8/8/PPP2B2/4K3 w - - 0 1")           # opposite and same colour
    assert 0 < opposite < same


def random_mate_start(pieces: str, seed: int) -> str:
    """A legal position with White's ``pieces`` against a bare black king, White to move."""
    rng = random.Random(seed)
    while True:
        board = chess.Board(None)
        squares = rng.sample(range(64), 2 + len(pieces))
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for symbol, sq in zip(pieces, squares[2:], strict=True):
            board.set_piece_at(sq, chess.Piece.from_symbol(symbol))
        if pieces == "BN" and bool(chess.BB_DARK_SQUARES & chess.BB_SQUARES[squares[2]]) != (seed % 2 == 0):
            continue  # even seeds: a dark-squared bishop, odd seeds: a light-squared one
        board.turn = chess.WHITE
        if board.is_valid() and not board.is_game_over() and not board.was_into_check():
            black = board.copy()
            black.turn = chess.BLACK
            if not any(black.is_capture(m) for m in black.legal_moves) and not board.is_check():
                return board.fen()


def play_out(fen: str, nodes: int) -> chess.Board:
    """Numbat plays both sides from ``fen`` until the game ends; the final python-chess board.

    A node budget per move (the defender gets half) keeps the game the same on every
    machine and under any load: about 0.4 s per move here.
    """
    searcher = Searcher(hash_mb=16)
    ours = Board(fen)
    oracle = chess.Board(fen)
    while not oracle.is_game_over(claim_draw=True):
        best, _ = searcher.think(ours, Limits(nodes=nodes if oracle.turn else nodes // 2), lambda line: None)
        text = ours.move_to_uci(best)
        oracle.push_uci(text)
        ours.push_uci(text)
    return oracle


@pytest.mark.parametrize("pieces,seed", [("Q", 1), ("R", 2), ("BN", 3), ("BN", 4)])
def test_basic_mates_are_won_within_the_fifty_move_rule(pieces: str, seed: int) -> None:
    final = play_out(random_mate_start(pieces, seed), nodes=300_000)
    assert final.is_checkmate() and final.turn == chess.BLACK, final.fen()


def complexity_counts(fen: str) -> list[list[int]]:
    """The complexity counts the trace recorded, per colour (total pawns, passed pawns,
    pawns on both flanks, pawn ending, adjustment)."""
    found = counts(fen)[:, E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS)]
    return found.tolist()


def test_complexity_counts_go_to_the_side_the_endgame_score_favours() -> None:
    # White's d5, f2 and g2 against a bare king: three pawns, all passed, on both flanks,
    # a pawn ending, and the constant; all under White, who is better.
    fen = "8/5k2/8/3P4/8/8/5PP1/4K3 w - - 0 1"
    assert complexity_counts(fen) == [[3, 3, 1, 1, 1], [0, 0, 0, 0, 0]]
    assert complexity_counts(chess.Board(fen).mirror().fen()) == [[0, 0, 0, 0, 0], [3, 3, 1, 1, 1]]
    # Rooks and pawns on the king's flank only, Black a pawn up: counted under Black.
    assert complexity_counts("6k1/5ppp/8/8/8/8/6PP/r5K1 w - - 0 1")[1] == [5, 0, 0, 0, 1]


def test_complexity_shrinks_an_advantage_to_nothing_but_never_turns_it_round() -> None:
    fen = "8/5k2/8/3P4/8/8/5PP1/4K3 w - - 0 1"   # a pawn ending: the score is the endgame's
    board = Board(fen)
    off = WEIGHTS.copy()
    off[E.COMPLEXITY:E.COMPLEXITY + len(E.COMPLEXITY_LABELS)] = 0
    base = int(evaluate(board.pos, board.tab, make_evaluator(off)))
    assert base > 200
    helps = off.copy()
    helps[E.COMPLEXITY + E.C_PASSED_PAWNS] = (0, 10)
    assert int(evaluate(board.pos, board.tab, make_evaluator(helps))) == base + 30
    hopeless = off.copy()
    hopeless[E.COMPLEXITY + E.C_ADJUSTMENT] = (0, -10_000)
    assert int(evaluate(board.pos, board.tab, make_evaluator(hopeless))) == 0
    mirror = Board(chess.Board(fen).mirror().fen())
    assert int(evaluate(mirror.pos, mirror.tab, make_evaluator(hopeless))) == 0
    # Brought to zero, Black's rook against a bare king keeps Black's mop-up (the side the
    # endgame score favoured is decided before the term), exactly as its mirror image does.
    rook = Board("8/8/8/3k4/8/8/8/r3K3 w - - 0 1")
    rook_mirror = Board(chess.Board("8/8/8/3k4/8/8/8/r3K3 w - - 0 1").mirror().fen())
    assert int(evaluate(rook.pos, rook.tab, make_evaluator(hopeless))) == \
        int(evaluate(rook_mirror.pos, rook_mirror.tab, make_evaluator(hopeless))) < -200
    # Its middlegame weights are not used.
    unused = off.copy()
    unused[E.COMPLEXITY + E.C_ADJUSTMENT] = (500, 0)
    assert int(evaluate(board.pos, board.tab, make_evaluator(unused))) == base


def test_a_weights_file_without_the_optional_rows_plays_as_one_with_them_at_zero(tmp_path) -> None:
    from engine.uci import weights_file_problem

    text = "\n".join(line for line in E.WEIGHTS_FILE.read_text().splitlines()
                     if line.split()[0] not in E.OPTIONAL_TERM_NAMES)
    assert weights_file_problem(text, E.TERM_NAMES, E.OPTIONAL_TERM_NAMES) is None
    assert weights_file_problem(text, E.TERM_NAMES) is not None
    path = tmp_path / "old.txt"
    path.write_text(text + "\n")
    assert np.array_equal(load_weights(path), without_optional_weights())


def test_a_weights_file_naming_only_files_a_to_d_of_the_piece_square_table_mirrors_them(tmp_path) -> None:
    from engine.uci import weights_file_problem

    weights = load_weights()
    east = E.MIRRORED_PSQT_NAMES
    lines = E.WEIGHTS_FILE.read_text().splitlines()
    old = "\n".join(line for line in lines if not line.startswith("#") and line.split()[0] not in east)
    assert weights_file_problem(old, E.TERM_NAMES, E.OMITTABLE_TERM_NAMES) is None
    assert weights_file_problem(old, E.TERM_NAMES, E.OPTIONAL_TERM_NAMES) is not None
    (tmp_path / "old.txt").write_text(old + "\n")
    mirrored = load_weights(tmp_path / "old.txt")
    knight = E.PSQT + 64  # the knight's rows: a1 .. h8
    d3, e3, g1, b1 = knight + 19, knight + 20, knight + 6, knight + 1
    assert mirrored[e3].tolist() == weights[d3].tolist() and mirrored[g1].tolist() == weights[b1].tolist()
    # A square the file names keeps its own weight, mirror image or not.
    (tmp_path / "new.txt").write_text(old + "\npsqt.knight.e3 11 -7\n")
    assert load_weights(tmp_path / "new.txt")[e3].tolist() == [11, -7]
    assert load_weights(tmp_path / "new.txt")[d3].tolist() == weights[d3].tolist()


def test_the_piece_square_table_tells_the_kings_side_from_the_queens_side() -> None:
    base = load_weights()
    weights = base.copy()
    f3 = E.PSQT + 64 + 21  # the knight on f3, not its mirror image c3
    weights[f3] += 40
    before, after = make_evaluator(base), make_evaluator(weights)

    def gain(fen: str) -> int:
        board = Board(fen)
        return int(evaluate(board.pos, board.tab, after)) - int(evaluate(board.pos, board.tab, before))

    assert gain("4k3/4p3/8/8/8/5N2/4P3/4K3 w - - 0 1") == 40
    assert gain("4k3/4p3/8/8/8/2N5/4P3/4K3 w - - 0 1") == 0
    assert gain("4k3/4p3/5n2/8/8/8/4P3/4K3 b - - 0 1") == 40  # f6 is Black's f3
