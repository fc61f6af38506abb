"""Board: UCI move text in both castling modes, promotions, bad move strings, push/pop."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest

from conftest import assert_restored, snapshot
from engine.board import Board, IllegalMoveError
from engine.fen import KIWIPETE, STARTING_FEN

# Both sides can castle both ways.
CASTLE_FEN = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1"


def ucis(board: Board) -> set[str]:
    return {board.move_to_uci(m) for m in board.legal_moves()}


def test_standard_castling_is_written_as_king_move() -> None:
    board = Board(CASTLE_FEN)
    assert not board.chess960
    moves = ucis(board)
    assert {"e1g1", "e1c1"} <= moves
    assert not {"e1h1", "e1a1"} & moves
    short = board.parse_uci("e1g1")
    assert board.move_to_uci(short) == "e1g1"
    # King-takes-rook is accepted as well in standard mode, and is the same move.
    assert board.parse_uci("e1h1") == short
    assert board.parse_uci("e1a1") == board.parse_uci("e1c1")
    board.push_uci("e1g1")
    assert board.fen() == "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 b kq - 1 1"
    board.push_uci("e8c8")
    assert board.fen() == "2kr3r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1 w - - 2 2"


def test_chess960_castling_is_written_king_takes_rook() -> None:
    board = Board(CASTLE_FEN, chess960=True)
    assert board.chess960
    moves = ucis(board)
    assert {"e1h1", "e1a1"} <= moves
    assert not {"e1g1", "e1c1"} & moves
    short = board.parse_uci("e1h1")
    assert board.move_to_uci(short) == "e1h1"
    # The two-square king move still parses to castling.
    assert board.parse_uci("e1g1") == short
    board.push_uci("e1a1")
    assert board.fen() == "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/2KR3R b kq - 1 1"


def test_chess960_flag_only_changes_the_text() -> None:
    board = Board(CASTLE_FEN)
    moves = board.legal_moves()
    standard = [board.move_to_uci(m) for m in moves]
    board.chess960 = True
    assert board.legal_moves() == moves
    chess960 = [board.move_to_uci(m) for m in moves]
    assert {s for s, c in zip(standard, chess960, strict=True) if s != c} == {"e1g1", "e1c1"}
    assert {c for s, c in zip(standard, chess960, strict=True) if s != c} == {"e1h1", "e1a1"}


def test_chess960_king_next_to_its_rook() -> None:
    # King b1, rook a1: a-side castling takes the king to c1, one square away, so
    # "b1c1" is the plain king move and only "b1a1" is castling.
    fen = "6kr/8/8/8/8/8/8/RK5R w HAh - 0 1"
    board = Board(fen, chess960=True)
    theirs = chess.Board(fen, chess960=True)
    assert ucis(board) == {m.uci() for m in theirs.legal_moves}
    castle = board.parse_uci("b1a1")
    plain = board.parse_uci("b1c1")
    assert castle != plain
    board.push(castle)
    theirs.push_uci("b1a1")
    assert board.fen() == theirs.fen()
    board.pop()
    board.push(plain)
    theirs.pop()
    theirs.push_uci("b1c1")
    assert board.fen() == theirs.fen()


def test_chess960_castling_where_the_king_does_not_move() -> None:
    # King g1, rook h1: h-side castling leaves the king on g1 (the rook jumps to f1).
    fen = "6kr/8/8/8/8/8/8/6KR w Hh - 0 1"
    board = Board(fen, chess960=True)
    theirs = chess.Board(fen, chess960=True)
    assert ucis(board) == {m.uci() for m in theirs.legal_moves}
    board.push_uci("g1h1")
    theirs.push_uci("g1h1")
    assert board.fen() == theirs.fen() == "6kr/8/8/8/8/8/8/5RK1 b k - 1 1"


def test_chess960_king_not_moving_has_no_null_spelling() -> None:
    """"g1g1" (from == to) is not a UCI move, even where castling leaves the king on g1."""
    board = Board("6kr/8/8/8/8/8/8/6KR w Hh - 0 1", chess960=True)
    with pytest.raises(IllegalMoveError):
        board.parse_uci("g1g1")


@pytest.mark.parametrize("piece", "qrbn")
def test_promotions(piece: str) -> None:
    board = Board("1r5k/P7/8/8/8/8/8/K7 w - - 0 1")
    moves = ucis(board)
    assert {"a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8r", "a7b8b", "a7b8n"} <= moves
    for uci in (f"a7a8{piece}", f"a7b8{piece}"):
        move = board.parse_uci(uci)
        assert board.move_to_uci(move) == uci
        before = board.fen()
        board.push(move)
        theirs = chess.Board(before)
        theirs.push_uci(uci)
        assert board.fen() == theirs.fen()
        board.pop()
        assert board.fen() == before


def test_black_promotion_and_en_passant_text() -> None:
    board = Board("k7/8/8/8/3pP3/8/6p1/K4N2 b - e3 0 1")
    moves = ucis(board)
    assert {"d4e3", "g2g1q", "g2f1n", "g2g1n"} <= moves
    board.push_uci("d4e3")
    assert board.fen() == "k7/8/8/8/8/4p3/6p1/K4N2 w - - 0 2"


MALFORMED = ["", "e2", "e2e", "e2e4qq", "e2-e4", "E2E4", "e9e4", "i2i4", "e0e4", "0000", "a7a8k",
             "a7a8x", "e2e4 ", " e2e4", "a7a8Q"]


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_move_strings(text: str) -> None:
    board = Board("1r5k/P7/8/8/8/8/4P3/K7 w - - 0 1")
    with pytest.raises(IllegalMoveError):
        board.parse_uci(text)


ILLEGAL = [
    (STARTING_FEN, "e2e5"),  # pawn too far
    (STARTING_FEN, "e7e5"),  # not our piece
    (STARTING_FEN, "e1g1"),  # castling through pieces
    (STARTING_FEN, "e1h1"),
    (STARTING_FEN, "e2e4q"),  # promotion suffix on a plain move
    (STARTING_FEN, "g1g3"),  # knight can't go there
    (STARTING_FEN, "a1a1"),
    ("1r5k/P7/8/8/8/8/8/K7 w - - 0 1", "a7a8"),  # promotion without a piece
    ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", "e1g1"),  # no castling right
    ("4k3/8/8/8/8/8/5r2/4K2R w K - 0 1", "e1g1"),  # castling through an attacked square
    ("4k3/8/8/8/8/8/8/4K2r w - - 0 1", "e1f1"),  # staying in check along the rank
    ("4k3/8/8/8/8/8/8/r3K2R w K - 0 1", "e1g1"),  # castling out of check
    ("4k3/8/8/8/8/8/8/r2BK3 w - - 0 1", "d1e2"),  # pinned piece
    ("8/8/8/KPp4r/8/8/8/7k w - c6 0 1", "b5c6"),  # en passant exposing the king on the rank
]


@pytest.mark.parametrize("fen,text", ILLEGAL)
def test_illegal_moves(fen: str, text: str) -> None:
    board = Board(fen)
    with pytest.raises(IllegalMoveError):
        board.parse_uci(text)
    with pytest.raises(IllegalMoveError):
        board.push_uci(text)
    assert board.fen() == Board(fen).fen()  # nothing was played


def test_illegal_move_error_is_a_value_error() -> None:
    assert issubclass(IllegalMoveError, ValueError)


def test_push_uci_pop_and_copy() -> None:
    board = Board(KIWIPETE)
    before = snapshot(board.pos)
    key = board.key()
    move = board.push_uci("e2a6")
    assert board.ply == 1 and board.turn == 1
    twin = board.copy()
    board.pop()
    assert board.key() == key and board.fen() == KIWIPETE
    assert_restored(before, board.pos, 0)
    # The copy is independent of the original.
    assert twin.fen() != board.fen()
    twin.push_uci("b4c3")
    assert board.fen() == KIWIPETE
    assert board.move_to_uci(move) == "e2a6"


def test_null_move() -> None:
    board = Board("rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3")
    before = snapshot(board.pos)
    board.push_null()
    theirs = chess.Board(board.fen())  # the ep square is gone, black to move
    assert board.turn == 1 and " b KQkq - 1 3" in board.fen()
    assert board.key() == chess.polyglot.zobrist_hash(theirs)
    board.pop()
    assert_restored(before, board.pos, 0)
    assert board.fen() == "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"


def test_key_after_predicts_the_key_of_every_ordinary_move() -> None:
    """The search prefetches the child's TT bucket from ``key_after`` before making the move:
    it must give the real key for quiet moves, captures and en passant (castling, promotions
    and moves that change castling rights or create an en-passant square may differ)."""
    from engine.defs import NO_SQUARE, ST_CASTLING, ST_EP
    from engine.move import CASTLING, PROMOTION, move_kind
    from engine.position import key_after

    fens = [STARTING_FEN, KIWIPETE, "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"]
    checked = 0
    for fen in fens:
        board = Board(fen)
        for move in board.legal_moves():
            predicted = int(key_after(board.pos, board.tab, move))
            castling_before = int(board.pos.state[ST_CASTLING])
            board.push(move)
            changed = board.pos.state[ST_CASTLING] != castling_before or board.pos.state[ST_EP] != NO_SQUARE
            actual = board.key()
            board.pop()
            if move_kind(move) in (CASTLING, PROMOTION) or changed:
                continue
            assert predicted == actual, board.move_to_uci(move)
            checked += 1
    assert checked > 100


def test_legal_prefix_matches_playing_the_line_move_by_move() -> None:
    """``legal_prefix`` (one kernel call) agrees with checking each move of a line against
    ``legal_moves`` and pushing it, for random game lines spoilt at a random point by a
    random word, and leaves the position as it found it."""
    rng = random.Random(7)
    for start in (STARTING_FEN, KIWIPETE, CASTLE_FEN, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"):
        for trial in range(25):
            board = Board(start)
            line: list[int] = []
            walker = board.copy()
            for _ in range(rng.randrange(1, 30)):
                moves = walker.legal_moves()
                if not moves:
                    break
                line.append(rng.choice(moves))
                walker.push(line[-1])
            if trial % 5 and line:  # four lines in five go wrong somewhere: a random word, or a
                # move of the starting position, which the line may have made illegal (or not)
                spoilt = rng.randrange(1 << 16) if trial % 2 else rng.choice(board.legal_moves())
                line[rng.randrange(len(line))] = spoilt
            expected, replay = 0, board.copy()
            for move in line:
                if move not in replay.legal_moves():
                    break
                replay.push(move)
                expected += 1
            before = {name: getattr(board.pos, name).copy() for name in ("board", "pieces", "colors", "state")}
            assert board.legal_prefix(line) == expected, (start, line)
            for name, array in before.items():
                assert (getattr(board.pos, name) == array).all(), name
            assert board.fen() == Board(start).fen()


def test_line_to_uci_writes_castling_in_the_board_mode() -> None:
    for chess960, expected in ((False, ["e1g1", "e8c8"]), (True, ["e1h1", "e8a8"])):
        board = Board(CASTLE_FEN, chess960=chess960)
        line = [board.parse_uci("e1g1")]
        board.push(line[0])
        line.append(board.parse_uci("e8c8"))
        board.pop()
        assert board.line_to_uci(line) == expected
