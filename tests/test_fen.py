"""FEN / X-FEN / Shredder-FEN in and out: invalid input raises FenError with a clear message."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest

from engine.bitboards import tables
from engine.board import Board
from engine.fen import KIWIPETE, STARTING_FEN, FenError, parse_fen
from engine.perft import perft

START = STARTING_FEN
PLACEMENT = START.split()[0]

# (id, fen, regex the message must match)
BAD_FENS = [
    ("empty string", "", r"6 fields"),
    ("only spaces", "   ", r"6 fields"),
    ("one field", PLACEMENT, r"6 fields.*got 1"),
    ("three fields", f"{PLACEMENT} w KQkq", r"got 3"),
    ("seven fields", f"{START} extra", r"got 7"),
    ("seven ranks", "rnbqkbnr/pppppppp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 ranks.*got 7"),
    ("nine ranks", "rnbqkbnr/pppppppp/8/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 ranks.*got 9"),
    ("rank of 7 squares", "rnbqkbnr/pppppppp/7/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 squares"),
    ("empty rank", "rnbqkbnr/pppppppp//8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 squares"),
    ("rank of 9 squares by digits", "rnbqkbnr/pppppppp/81/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 squares"),
    ("rank of 9 pieces", "rnbqkbnrp/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 squares"),
    ("piece after 8 empty squares", "rnbqkbnr/pppppppp/8p/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 squares"),
    ("piece after a full rank", "rnbqkbnr/pppppppp/7pp/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"8 squares"),
    ("digit 9", "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"invalid character '9'"),
    ("digit 0", "rnbqkbnr/pppppppp/08/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"invalid character '0'"),
    ("bad piece letter", "rnbqkbnr/pppppppp/8/8/3X4/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", r"invalid character 'X'"),
    ("missing white king", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w kq - 0 1", r"white.*one king.*found 0"),
    ("missing black king", "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", r"black.*one king.*found 0"),
    ("no kings", "8/8/8/8/8/8/8/8 w - - 0 1", r"one king"),
    ("two white kings", "rnbqkbnr/pppppppp/8/8/8/3K4/PPPPPPPP/RNBQKBNR w kq - 0 1", r"white.*one king.*found 2"),
    ("two black kings", "k3k3/8/8/8/8/8/8/4K3 w - - 0 1", r"black.*one king.*found 2"),
    ("white pawn on rank 1", "4k3/8/8/8/8/8/8/P3K3 w - - 0 1", r"pawn on the back rank \(a1\)"),
    ("black pawn on rank 8", "p3k3/8/8/8/8/8/8/4K3 w - - 0 1", r"pawn on the back rank \(a8\)"),
    ("white pawn on rank 8", "4k2P/8/8/8/8/8/8/4K3 b - - 0 1", r"pawn on the back rank \(h8\)"),
    ("side x", f"{PLACEMENT} x KQkq - 0 1", r"side to move"),
    ("side upper-case W", f"{PLACEMENT} W KQkq - 0 1", r"side to move"),
    ("side not to move in check", "4k3/8/8/8/8/8/4R3/4K3 w - - 0 1", r"not to move is in check"),
    ("side not to move in check (black)", "4k3/8/8/8/8/8/4r3/4K3 b - - 0 1", r"not to move is in check"),
    ("kings touching", "8/8/8/8/8/3kK3/8/8 w - - 0 1", r"not to move is in check"),
    ("castling junk digit", f"{PLACEMENT} w KQkq1 - 0 1", r"castling"),
    ("castling repeated letter", f"{PLACEMENT} w KKQkq - 0 1", r"castling"),
    ("castling bad letter", f"{PLACEMENT} w x - 0 1", r"castling"),
    ("castling dash plus letter", f"{PLACEMENT} w -K - 0 1", r"castling"),
    ("castling letter plus dash", f"{PLACEMENT} w K- - 0 1", r"castling"),
    ("ep off the board", f"{PLACEMENT} w KQkq e9 0 1", r"en-passant"),
    ("ep bad file", f"{PLACEMENT} w KQkq z6 0 1", r"en-passant"),
    ("ep three characters", f"{PLACEMENT} w KQkq e66 0 1", r"en-passant"),
    ("ep wrong rank for white", "rnbqkbnr/pppp1ppp/8/8/4p3/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", r"wrong rank"),
    ("ep wrong rank for black", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e6 0 1", r"wrong rank"),
    ("ep without a double push", f"{PLACEMENT} w KQkq e6 0 1", r"double pawn push"),
    ("ep with the origin square occupied", "rnbqkbnr/pppppppp/8/4p3/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1",
     r"double pawn push"),
    ("halfmove not a number", f"{PLACEMENT} w KQkq - x 1", r"integers"),
    ("fullmove not a number", f"{PLACEMENT} w KQkq - 0 one", r"integers"),
    ("negative halfmove", f"{PLACEMENT} w KQkq - -1 1", r"out of range"),
]


@pytest.mark.parametrize("fen,pattern", [(f, p) for _, f, p in BAD_FENS], ids=[i for i, _, _ in BAD_FENS])
@pytest.mark.parametrize("chess960", [False, True], ids=["standard", "chess960"])
def test_bad_fen_raises_fen_error(fen: str, pattern: str, chess960: bool) -> None:
    with pytest.raises(FenError, match=pattern):
        Board(fen, chess960=chess960)


def test_fen_error_is_a_value_error() -> None:
    assert issubclass(FenError, ValueError)
    with pytest.raises(ValueError):
        parse_fen("not a fen", tables())


GOOD_FENS = [
    START,
    KIWIPETE,
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # ep capture legal: kept
    "rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b KQkq d3 0 2",
    "4k3/8/8/8/8/8/8/4K2R w K - 57 120",
    "4k3/8/8/8/8/8/8/R3K3 b Q - 0 1",
    "r3k3/8/8/8/8/8/8/4K3 w q - 0 1",
    "8/8/8/8/8/8/8/K6k b - - 99 300",
]


@pytest.mark.parametrize("fen", GOOD_FENS)
def test_good_fen_round_trips(fen: str) -> None:
    board = Board(fen)
    assert board.fen() == fen
    assert board.fen() == chess.Board(fen).fen()
    assert board.key() == chess.polyglot.zobrist_hash(chess.Board(fen))


def test_fen_normalisation() -> None:
    # Four fields get the default clocks; extra spaces are ignored.
    assert Board("4k3/8/8/8/8/8/8/4K2R w K -").fen() == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    assert Board("  4k3/8/8/8/8/8/8/4K2R   w K -  3  7 ").fen() == "4k3/8/8/8/8/8/8/4K2R w K - 3 7"
    # An en-passant square no pawn can use is dropped (as python-chess writes it).
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
    assert Board(fen).fen() == chess.Board(fen).fen() == fen.replace("e3", "-")
    # Pseudo-legal but illegal en passant (the capturing pawn is pinned along the rank):
    # not in the FEN, but hashed, as Polyglot and python-chess do.
    fen = "1b1k4/8/8/1rPpK3/8/8/8/8 w - d6 0 1"
    assert Board(fen).fen() == chess.Board(fen).fen() == fen.replace("d6", "-")
    assert Board(fen).key() == chess.polyglot.zobrist_hash(chess.Board(fen))
    # Castling rights without their rook or king are dropped, as python-chess cleans them.
    for fen in ("4k3/8/8/8/8/8/8/4K3 w KQkq - 0 1", "r3k2r/8/8/8/8/8/8/R3K3 w KQkq - 0 1",
                "r3k2r/8/8/8/8/8/3K4/R6R w KQkq - 0 1"):
        ours, theirs = Board(fen), chess.Board(fen)
        assert ours.fen() == theirs.fen()
        assert ours.key() == chess.polyglot.zobrist_hash(theirs)
    # A full-move number of 0 becomes 1, as in python-chess.
    assert Board("4k3/8/8/8/8/8/8/4K3 w - - 0 0").fen() == "4k3/8/8/8/8/8/8/4K3 w - - 0 1"


def test_standard_mode_keeps_only_standard_castling_rights() -> None:
    """In standard chess a castling right needs the king on e1/e8 and the rook on a/h.

    python-chess (``chess960=False``) drops any other right, so its FEN, its Polyglot
    key and its move list have no such castling; ours must agree (the key must equal
    ``chess.polyglot.zobrist_hash`` for every position).  In Chess960 mode the same
    FEN keeps the rights.
    """
    fen = "r3k2r/8/8/8/8/8/8/R2K3R w KQkq - 0 1"
    ours, theirs = Board(fen), chess.Board(fen)
    assert ours.fen() == theirs.fen() == "r3k2r/8/8/8/8/8/8/R2K3R w kq - 0 1"
    assert ours.key() == chess.polyglot.zobrist_hash(theirs)
    assert {ours.move_to_uci(m) for m in ours.legal_moves()} == {m.uci() for m in theirs.legal_moves}
    ours, theirs = Board(fen, chess960=True), chess.Board(fen, chess960=True)
    assert ours.fen() == theirs.fen() == fen
    assert ours.key() == chess.polyglot.zobrist_hash(theirs)


# ---------------------------------------------------------------------------
# Chess960: X-FEN and Shredder-FEN castling
# ---------------------------------------------------------------------------

CHESS960_FENS = [
    # (Shredder-FEN, X-FEN we write)
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
     "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9"),
    ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9",
     "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w KQkq - 1 9"),
    ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9",
     "b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w KQ - 1 9"),
    ("qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w hf - 0 9",
     "qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w kq - 0 9"),
    # An inner rook keeps its file letter in X-FEN (another rook stands beyond it).
    ("4k3/8/8/8/8/8/8/RR2K3 w B - 0 1", "4k3/8/8/8/8/8/8/RR2K3 w B - 0 1"),
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1"),
    ("rr2k1rr/8/8/8/8/8/8/RR2K1RR w BGbg - 0 1", "rr2k1rr/8/8/8/8/8/8/RR2K1RR w GBgb - 0 1"),
    ("rr2k1rr/8/8/8/8/8/8/RR2K1RR w AHah - 0 1", "rr2k1rr/8/8/8/8/8/8/RR2K1RR w KQkq - 0 1"),
]


@pytest.mark.parametrize("shredder,xfen", CHESS960_FENS)
def test_chess960_castling_fields(shredder: str, xfen: str) -> None:
    theirs = chess.Board(shredder, chess960=True)
    for text in (shredder, xfen):
        ours = Board(text, chess960=True)
        assert ours.chess960
        assert ours.fen() == xfen == theirs.fen()
        assert ours.key() == chess.polyglot.zobrist_hash(theirs)
        assert {ours.move_to_uci(m) for m in ours.legal_moves()} == {m.uci() for m in theirs.legal_moves}


def test_chess960_all_start_positions() -> None:
    """Every Chess960 start position, read as Shredder-FEN and as X-FEN."""
    for number in range(960):
        theirs = chess.Board.from_chess960_pos(number)
        for text in (theirs.fen(shredder=True), theirs.fen()):
            ours = Board(text, chess960=True)
            assert ours.fen() == theirs.fen(), f"position {number} from {text}"
            assert ours.key() == chess.polyglot.zobrist_hash(theirs), f"position {number}"
            assert perft(ours, 1) == theirs.legal_moves.count(), f"position {number}"


def test_standard_castling_letters_in_chess960_mode() -> None:
    """KQkq means the outermost rooks, so a standard FEN reads the same in both modes."""
    a, b = Board(START, chess960=True), Board(START)
    assert a.fen() == b.fen() == START
    assert a.key() == b.key()


# ---------------------------------------------------------------------------
# Robustness: garbage in, FenError out, never anything else
# ---------------------------------------------------------------------------

def _mutations(rng: random.Random, fen: str, count: int):
    alphabet = "pnbrqkPNBRQK0123456789/ -wabcdefghKQkqx"
    for _ in range(count):
        chars = list(fen)
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(3)
            i = rng.randrange(len(chars) + (op == 1))
            if op == 0 and chars:
                chars[min(i, len(chars) - 1)] = rng.choice(alphabet)
            elif op == 1:
                chars.insert(i, rng.choice(alphabet))
            elif chars:
                del chars[min(i, len(chars) - 1)]
        yield "".join(chars)


def test_mutated_fens_raise_fen_error_or_agree_with_python_chess() -> None:
    rng = random.Random(4242)
    accepted = 0
    for base in (START, KIWIPETE, "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
                 "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"):
        for fen in _mutations(rng, base, 400):
            try:
                ours = Board(fen)
            except FenError:
                continue
            accepted += 1
            ours.legal_moves()
            ours.fen()
            try:
                theirs = chess.Board(fen)
            except ValueError:
                continue  # python-chess is stricter about some spellings (e.g. "44")
            if theirs.status() != chess.STATUS_VALID:
                continue
            assert ours.fen() == theirs.fen(), fen
            assert ours.key() == chess.polyglot.zobrist_hash(theirs), fen
            assert {ours.move_to_uci(m) for m in ours.legal_moves()} == {m.uci() for m in theirs.legal_moves}, fen
    assert accepted > 50
