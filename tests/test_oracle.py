"""python-chess as the oracle: seeded random playouts, compared at every ply.

At each position of each playout:

* our legal moves, as UCI strings, equal python-chess's ``board.legal_moves``
  (standard chess writes castling e1g1; Chess960 writes king-takes-rook, e1h1,
  with python-chess in ``chess960=True`` mode), and ``parse_uci`` maps each string
  back to our move;
* ``noisy_moves`` are exactly the captures (en passant included) and promotions,
  or every legal move when in check, and ``quiet_moves`` exactly the other legal
  moves, each once (the search's two stages); ``is_check`` agrees;
* ``key()`` equals ``chess.polyglot.zobrist_hash``;
* ``fen()`` equals python-chess's ``board.fen()``: ``en_passant="legal"`` (the ep
  square only when an en-passant capture is legal) and X-FEN castling
  (``shredder=False``: K/Q/k/q for the outermost rook, the rook's file letter
  otherwise, which is plain KQkq in standard chess).  Our FEN round-trips, and a
  Chess960 position also parses from python-chess's Shredder-FEN;
* for every legal move, push then pop restores every array of ``board.pos``
  exactly, except the two dead stack slots the move wrote (``history[ply]`` and
  ``keys[ply + 1]``), and the incremental key after the push equals the key
  recomputed from scratch;
* a null move (when not in check) gives python-chess's key, move list and FEN
  after ``push(chess.Move.null())`` (all FEN fields but the full-move number,
  which python-chess advances after Black's null move and we leave alone), and
  pop restores the arrays the same way.
"""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest

from conftest import assert_restored, snapshot
from engine.board import Board
from engine.fen import KIWIPETE
from engine.position import compute_key

TRICKY_STANDARD = [
    KIWIPETE,
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "8/8/8/1k6/3Pp3/8/8/4KQ2 b - d3 0 1",
    "1b1k4/8/8/1rPpK3/8/8/8/8 w - d6 0 1",
    "r3k2r/1b4bq/8/8/8/8/7B/R3K2R w KQkq - 0 1",
    "rnbqkb1r/ppppp1pp/7n/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
]
TRICKY_960 = [
    "r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1",
    "8/8/8/4B2b/6nN/8/5P2/2R1K2k w Q - 0 1",
    "2r5/8/8/8/8/8/6PP/k2KR3 w K - 0 1",
    "4r3/3k4/8/8/8/8/6PP/qR1K1R2 w KQ - 0 1",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1",
]


class Checker:
    """Compares one of our Boards with a python-chess Board, position by position."""

    def __init__(self, ours: Board, theirs: chess.Board, label: str) -> None:
        self.ours, self.theirs, self.label = ours, theirs, label
        self.chess960 = theirs.chess960
        self.positions = 0

    def context(self) -> str:
        moves = " ".join(m.uci() for m in self.theirs.move_stack)
        return f"[{self.label}] at {self.theirs.fen()} (chess960={self.chess960}) after moves: {moves or '-'}"

    def check(self) -> None:
        ours, theirs = self.ours, self.theirs
        ctx = self.context()
        self.positions += 1

        our_moves = ours.legal_moves()
        ucis = [ours.move_to_uci(m) for m in our_moves]
        their_moves = {m.uci(): m for m in theirs.legal_moves}
        assert len(set(ucis)) == len(ucis), f"duplicate moves {sorted(ucis)} {ctx}"
        assert set(ucis) == set(their_moves), (
            f"legal moves differ: extra {sorted(set(ucis) - set(their_moves))}, "
            f"missing {sorted(set(their_moves) - set(ucis))} {ctx}")
        for move, uci in zip(our_moves, ucis, strict=True):
            assert ours.parse_uci(uci) == move, f"parse_uci({uci!r}) is not our move {move} {ctx}"

        in_check = theirs.is_check()
        assert ours.is_check() == in_check, f"is_check {ours.is_check()} {ctx}"
        noisy = {ours.move_to_uci(m) for m in ours.noisy_moves()}
        if in_check:
            expected_noisy = set(their_moves)
        else:
            expected_noisy = {u for u, m in their_moves.items() if theirs.is_capture(m) or m.promotion}
        assert noisy == expected_noisy, (
            f"noisy moves: extra {sorted(noisy - expected_noisy)}, missing {sorted(expected_noisy - noisy)} {ctx}")
        quiet = [ours.move_to_uci(m) for m in ours.quiet_moves()]
        assert len(noisy) + len(quiet) == len(ucis) and set(quiet) == set(their_moves) - noisy, (
            f"quiet moves {sorted(quiet)} are not the legal moves less the noisy ones {ctx}")

        assert ours.key() == chess.polyglot.zobrist_hash(theirs), f"key {ours.key():#x} {ctx}"
        fen = ours.fen()
        assert fen == theirs.fen(), f"fen {fen!r} {ctx}"
        # Our FEN parses back to the same FEN.  (The key may legitimately change: Polyglot
        # hashes a pseudo-legal en-passant square that the "legal" FEN leaves out, as
        # python-chess does; so compare it with python-chess on the same FEN.)
        again = Board(fen, chess960=self.chess960)
        assert again.fen() == fen, f"fen round trip gave {again.fen()!r} {ctx}"
        assert again.key() == chess.polyglot.zobrist_hash(chess.Board(fen, chess960=self.chess960)), (
            f"key of our FEN reparsed {ctx}")
        if self.chess960:
            shredder = theirs.fen(shredder=True)
            from_shredder = Board(shredder, chess960=True)
            assert from_shredder.fen() == fen and from_shredder.key() == again.key(), (
                f"Shredder-FEN {shredder!r} parsed to {from_shredder.fen()!r} {ctx}")

        # make/unmake of every legal move restores every array.
        pos, ply = ours.pos, ours.ply
        before = snapshot(pos)
        for move, uci in zip(our_moves, ucis, strict=True):
            ours.push(move)
            assert ours.ply == ply + 1
            assert ours.key() == int(compute_key(pos, ours.tab)), f"incremental key after {uci} {ctx}"
            ours.pop()
            assert_restored(before, pos, ply, f"after push/pop of {uci} {ctx}")

        # The null move.
        if not in_check:
            ours.push_null()
            theirs.push(chess.Move.null())
            try:
                null_ctx = f"after a null move {ctx}"
                assert ours.key() == chess.polyglot.zobrist_hash(theirs), f"key {null_ctx}"
                assert ours.fen().split()[:5] == theirs.fen().split()[:5], f"fen {ours.fen()!r} {null_ctx}"
                null_moves = {ours.move_to_uci(m) for m in ours.legal_moves()}
                assert null_moves == {m.uci() for m in theirs.legal_moves}, f"legal moves {null_ctx}"
            finally:
                theirs.pop()
                ours.pop()
            assert_restored(before, pos, ply, f"after push_null/pop {ctx}")

    def pick(self, rng: random.Random) -> str | None:
        """A random legal move, biased towards the rare kinds so playouts exercise them.

        Half the time a promotion, an en-passant capture or a double pawn push that
        lands beside an enemy pawn (offering en passant) is taken when there is one;
        castling a fifth of the time; otherwise a pawn move a quarter of the time;
        otherwise any move.
        """
        board = self.theirs
        moves = sorted(board.legal_moves, key=chess.Move.uci)
        if not moves:
            return None
        enemy_pawns = board.pieces(chess.PAWN, not board.turn)

        def offers_ep(m: chess.Move) -> bool:
            if board.piece_type_at(m.from_square) != chess.PAWN or abs(m.to_square - m.from_square) != 16:
                return False
            return any(chess.square_distance(m.to_square, p) == 1
                       and chess.square_rank(p) == chess.square_rank(m.to_square) for p in enemy_pawns)

        special = [m for m in moves if m.promotion or board.is_en_passant(m) or offers_ep(m)]
        castling = [m for m in moves if board.is_castling(m)]
        pawn = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN]
        if special and rng.random() < 0.5:
            moves = special
        elif castling and rng.random() < 0.2:
            moves = castling
        elif pawn and rng.random() < 0.25:
            moves = pawn
        return rng.choice(moves).uci()

    def play(self, rng: random.Random, plies: int) -> None:
        """Check the current position, then play up to ``plies`` random moves checking each."""
        self.check()
        for _ in range(plies):
            uci = self.pick(rng)
            if uci is None:
                break
            self.ours.push_uci(uci)
            self.theirs.push_uci(uci)
            self.check()


def test_standard_playouts() -> None:
    rng = random.Random(1001)
    total = 0
    for game in range(8):
        checker = Checker(Board(), chess.Board(), f"standard game {game}")
        checker.play(rng, 150)
        total += checker.positions
    assert total >= 1000


def test_chess960_playouts() -> None:
    rng = random.Random(960)
    starts = [518, 0, 959] + rng.sample(range(960), 9)
    total = 0
    for i, number in enumerate(starts):
        theirs = chess.Board.from_chess960_pos(number)
        # Alternate between python-chess's Shredder-FEN and X-FEN as our input.
        fen = theirs.fen(shredder=True) if i % 2 == 0 else theirs.fen()
        checker = Checker(Board(fen, chess960=True), theirs, f"chess960 start {number} from {fen}")
        checker.play(rng, 110)
        total += checker.positions
    assert total >= 1000


@pytest.mark.parametrize("chess960", [False, True], ids=["standard", "chess960"])
def test_tricky_start_playouts(chess960: bool) -> None:
    rng = random.Random(77 + chess960)
    fens = TRICKY_960 if chess960 else TRICKY_STANDARD
    total = 0
    for fen in fens:
        for game in range(2):
            theirs = chess.Board(fen, chess960=chess960)
            checker = Checker(Board(fen, chess960=chess960), theirs, f"{fen} game {game}")
            checker.play(rng, 40)
            total += checker.positions
    assert total >= 200


def test_standard_castling_as_king_move_after_playout() -> None:
    """Castling in a standard game is e1g1 / e8c8 in both libraries, and our push matches."""
    ours, theirs = Board(), chess.Board()
    for uci in "e2e4 e7e5 g1f3 b8c6 f1c4 d7d6 b1c3 c8e6 d2d3 d8d7 c1e3".split():
        ours.push_uci(uci)
        theirs.push_uci(uci)
    assert "e8c8" in {ours.move_to_uci(m) for m in ours.legal_moves()}
    for uci in ("e8c8", "e1g1"):
        ours.push_uci(uci)
        theirs.push_uci(uci)
        assert ours.fen() == theirs.fen()
        assert ours.key() == chess.polyglot.zobrist_hash(theirs)



def test_gives_check_matches_python_chess() -> None:
    """``gives_check`` (decided without making the move) and the search's per-node form
    ``gives_check_fast`` agree with python-chess on every legal move along seeded playouts
    from positions rich in checks, pins and discoveries."""
    from engine.jit import njit
    from engine.position import check_squares, gives_check, gives_check_fast

    @njit(cache=False)
    def gives_check_per_node(pos, tab, move):
        king, pawn, knight, bishop, rook, discoverers = check_squares(pos, tab)
        return gives_check_fast(pos, tab, move, king, pawn, knight, bishop, rook, discoverers)

    rng = random.Random(2024)
    starts = [chess.STARTING_FEN, KIWIPETE,
              "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
              "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
              "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"]
    compared = checks = 0
    for fen in starts:
        for _ in range(8):
            theirs = chess.Board(fen)
            for _ in range(60):
                if theirs.is_game_over():
                    break
                ours = Board(theirs.fen())
                for move in ours.legal_moves():
                    expected = theirs.gives_check(chess.Move.from_uci(ours.move_to_uci(move)))
                    assert bool(gives_check(ours.pos, ours.tab, move)) == expected, (theirs.fen(), move)
                    assert bool(gives_check_per_node(ours.pos, ours.tab, move)) == expected, (theirs.fen(), move)
                    compared += 1
                    checks += expected
                theirs.push(rng.choice(list(theirs.legal_moves)))
    assert compared > 20000 and checks > 500


def test_is_legal_move_accepts_exactly_the_generated_moves() -> None:
    """The search plays the TT move before generating moves, after ``is_legal_move``
    has vetted the 16-bit word (it may belong to a colliding position).  Over seeded
    playouts in standard chess and Chess960, with pins, checks, en passant, castling
    and promotions, every one of the 65,536 words is accepted exactly when
    ``generate_moves`` lists it."""
    import numpy as np

    from engine.jit import njit
    from engine.movegen import is_legal_move

    @njit(cache=False)
    def accepted_words(pos, tab, out):
        for word in range(65536):
            out[word] = is_legal_move(pos, tab, word)

    out = np.zeros(65536, dtype=np.bool_)
    rng = random.Random(77)
    positions = 0
    seen_kinds: set[int] = set()
    for fen, chess960 in [(f, False) for f in [chess.STARTING_FEN, *TRICKY_STANDARD]] + [(f, True) for f in TRICKY_960]:
        for _ in range(3):
            theirs = chess.Board(fen, chess960=chess960)
            for _ in range(40):
                if theirs.is_game_over():
                    break
                ours = Board(theirs.fen(), chess960=chess960)
                accepted_words(ours.pos, ours.tab, out)
                legal = sorted(int(m) for m in ours.legal_moves())
                accepted = np.flatnonzero(out).tolist()
                assert accepted == legal, (
                    f"{theirs.fen()}: accepted but not legal {sorted(set(accepted) - set(legal))}, "
                    f"legal but refused {sorted(set(legal) - set(accepted))}")
                seen_kinds.update(m >> 14 for m in legal)
                positions += 1
                theirs.push(rng.choice(list(theirs.legal_moves)))
    assert positions > 500 and seen_kinds == {0, 1, 2, 3}
