"""Syzygy WDL probing speed: our numba prober against python-chess on one position set.

    python -m engine.tools.tb_speed [--path DIR] [--positions N] [--seed S]

Draws seeded random legal positions from every ``*.rtbw`` table of the directory
(both colourings, both sides to move, some with a legal en-passant capture),
checks that both probers agree on every one, then times:

* python-chess ``Tablebase.probe_wdl`` called once per position;
* our ``engine.syzygy.probe_wdl`` inside one numba loop, as the search calls it
  (each position is first written into a ``Position``; that set-up is timed
  separately and subtracted);
* our ``probe_wdl_board`` from Python (per-call dispatch overhead included);
* the search itself: seeded random 5- to 8-piece endgames (``SEARCH_MATERIALS``)
  searched to ``--search-depth`` with probing off and then on, fresh hash each
  time; the nodes per second of both runs and their ratio.

The random-position helpers are shared with ``tests/test_syzygy.py``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import chess
import chess.syzygy
import numpy as np

from engine.defs import ST_CASTLING, ST_EP, ST_HALFMOVE, ST_PLY, ST_SIDE
from engine.jit import njit
from engine.position import put_piece
from engine.syzygy import probe_wdl
from engine.tools.data import default_path, require_data

DEFAULT_PATH = default_path("syzygy")
"""``../shared/data/syzygy/regular``, or None when the shared data folder is absent."""
LETTER_TYPES = {"P": chess.PAWN, "N": chess.KNIGHT, "B": chess.BISHOP, "R": chess.ROOK, "Q": chess.QUEEN,
                "K": chess.KING}
PAWN_SQUARES = [sq for sq in chess.SQUARES if 1 <= chess.square_rank(sq) <= 6]
SEARCH_MATERIALS = ["KRPvKR", "KQvKRP", "KBPvKN", "KRPPvKR", "KRNvKRP", "KQPvKQ", "KRBPvKRP", "KRPPvKRP",
                    "KNPPvKBP", "KQRvKQR"]


def table_names(directory: str | Path) -> list[str]:
    """Stems of every ``*.rtbw`` file in ``directory``, sorted."""
    return sorted(p.stem for p in Path(directory).glob("*.rtbw"))


def _place(board: chess.Board, rng: random.Random, colour: chess.Color, letters: str) -> bool:
    """Put ``letters`` of ``colour`` on random empty squares (pawns on ranks 2-7)."""
    for letter in letters:
        piece_type = LETTER_TYPES[letter]
        choices = PAWN_SQUARES if piece_type == chess.PAWN else chess.SQUARES
        empty = [sq for sq in choices if board.piece_at(sq) is None]
        if not empty:
            return False
        board.set_piece_at(rng.choice(empty), chess.Piece(piece_type, colour))
    return True


def random_position(rng: random.Random, name: str, *, flipped: bool, turn: chess.Color) -> chess.Board | None:
    """A random legal position of table ``name`` (colours swapped when ``flipped``), or None."""
    first, second = name.split("v")
    board = chess.Board(None)
    board.turn = turn
    white, black = (second, first) if flipped else (first, second)
    if not (_place(board, rng, chess.WHITE, white) and _place(board, rng, chess.BLACK, black)):
        return None
    return board if board.is_valid() else None


def random_ep_position(rng: random.Random, name: str, *, flipped: bool) -> chess.Board | None:
    """A random position of ``name`` right after a double pawn push that can be taken en passant."""
    first, second = name.split("v")
    white, black = (second, first) if flipped else (first, second)
    if "P" not in white or "P" not in black:
        return None
    turn = rng.choice([chess.WHITE, chess.BLACK])
    mover = not turn
    file = rng.randrange(8)
    side_file = file + rng.choice([-1, 1])
    if not 0 <= side_file < 8:
        return None
    push_rank = 3 if mover == chess.WHITE else 4  # rank 4 for white's push, rank 5 for black's
    step = -8 if mover == chess.WHITE else 8  # from the pushed pawn back towards its start
    pushed = chess.square(file, push_rank)
    board = chess.Board(None)
    board.turn = turn
    board.set_piece_at(pushed, chess.Piece(chess.PAWN, mover))
    board.set_piece_at(chess.square(side_file, push_rank), chess.Piece(chess.PAWN, turn))
    mover_letters, taker_letters = (white, black) if mover == chess.WHITE else (black, white)
    mover_letters = mover_letters.replace("P", "", 1)
    taker_letters = taker_letters.replace("P", "", 1)
    if not _place(board, rng, mover, mover_letters) or not _place(board, rng, turn, taker_letters):
        return None
    if board.piece_at(pushed + step) or board.piece_at(pushed + 2 * step):
        return None
    board.ep_square = pushed + step
    if not board.is_valid() or not board.has_legal_en_passant():
        return None
    return board


def random_positions(names: list[str], per_table: int, seed: int, ep_per_table: int = 0) -> list[chess.Board]:
    """``per_table`` random legal positions of each table (half colour-swapped), plus ep ones."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    for name in names:
        made = 0
        tries = 0
        while made < per_table and tries < 100 * per_table:
            tries += 1
            board = random_position(rng, name, flipped=bool(made & 2), turn=bool(made & 1))
            if board is not None:
                boards.append(board)
                made += 1
        made = 0
        tries = 0
        while made < ep_per_table and tries < 200 * ep_per_table:
            tries += 1
            board = random_ep_position(rng, name, flipped=bool(made & 1))
            if board is not None:
                boards.append(board)
                made += 1
    return boards


def pack_positions(boards: list[chess.Board]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mailboxes int8[N, 64], side int8[N], ep square int8[N]) in the engine's piece codes."""
    n = len(boards)
    mailbox = np.zeros((n, 64), dtype=np.int8)
    side = np.zeros(n, dtype=np.int8)
    ep = np.full(n, 64, dtype=np.int8)
    for i, board in enumerate(boards):
        for sq, piece in board.piece_map().items():
            mailbox[i, sq] = (0 if piece.color == chess.WHITE else 8) | piece.piece_type
        side[i] = 0 if board.turn == chess.WHITE else 1
        if board.ep_square is not None and board.has_pseudo_legal_en_passant():
            ep[i] = board.ep_square
    return mailbox, side, ep


@njit
def _load(pos, tab, mailbox, side, ep, i):
    """Write position ``i`` of the packed arrays into ``pos`` (no castling, ply 0)."""
    pos.pieces[:] = 0
    pos.colors[:] = 0
    pos.state[ST_PLY] = 0
    pos.keys[0] = 0
    for sq in range(64):
        pos.board[sq] = 0
    for sq in range(64):
        if mailbox[i, sq] != 0:
            put_piece(pos, tab, mailbox[i, sq], sq)
    pos.state[ST_SIDE] = side[i]
    pos.state[ST_EP] = ep[i]
    pos.state[ST_CASTLING] = 0
    pos.state[ST_HALFMOVE] = 0


@njit
def setup_only(pos, tab, mailbox, side, ep, rounds):
    """Only the set-up work of ``probe_all`` (timed to subtract it)."""
    total = 0
    for _ in range(rounds):
        for i in range(mailbox.shape[0]):
            _load(pos, tab, mailbox, side, ep, i)
            total += pos.state[ST_SIDE]
    return total


@njit
def probe_all(tb, pos, tab, scratch, mailbox, side, ep, out, rounds):
    """Probe every packed position ``rounds`` times; results of the last round in ``out``."""
    for _ in range(rounds):
        for i in range(mailbox.shape[0]):
            _load(pos, tab, mailbox, side, ep, i)
            out[i] = probe_wdl(tb, pos, tab, scratch)


def main(argv: list[str] | None = None) -> int:
    """Run the comparison and print probes per second and the speed ratio."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--path", default=str(DEFAULT_PATH) if DEFAULT_PATH else None,
                        help="Syzygy directory (default: ../shared/data/syzygy/regular; "
                             "tests/data/syzygy/regular holds the 3-4-man WDL tables)")
    parser.add_argument("--positions", type=int, default=100, help="random positions per table")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--search-positions", type=int, default=30, help="endgames for the search nps test")
    parser.add_argument("--search-depth", type=int, default=10, help="search depth for the search nps test")
    args = parser.parse_args(argv)

    from engine.board import Board
    from engine.syzygy import TB_FAIL, load_tablebases, make_scratch, probe_wdl_board

    require_data(args.path, "syzygy", "--path DIR")
    names = table_names(args.path)
    if not names:
        print(f"no .rtbw tables in {args.path}", file=sys.stderr)
        return 1
    boards = random_positions(names, args.positions, args.seed, ep_per_table=max(1, args.positions // 10))
    n = len(boards)
    ep_count = sum(1 for b in boards if b.has_legal_en_passant())
    print(f"tables: {len(names)} in {args.path}")
    print(f"positions: {n} ({ep_count} with a legal en-passant capture), seed {args.seed}")

    t0 = time.perf_counter()
    tb, max_pieces, messages = load_tablebases(args.path)
    load_time = time.perf_counter() - t0
    for line in messages:
        print(line)
    print(f"load_tablebases: {max_pieces}-man, {load_time * 1000:.1f} ms")

    reference = chess.syzygy.open_tablebase(args.path)
    t0 = time.perf_counter()
    expected = [reference.probe_wdl(b) for b in boards]
    pc_time = time.perf_counter() - t0

    t0 = time.perf_counter()
    board = Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
    mailbox, side, ep = pack_positions(boards)
    out = np.zeros(n, dtype=np.int64)
    scratch = make_scratch()
    probe_all(tb, board.pos, board.tab, scratch, mailbox[:1], side[:1], ep[:1], out[:1], 1)
    setup_only(board.pos, board.tab, mailbox[:1], side[:1], ep[:1], 1)
    print(f"kernels ready in {time.perf_counter() - t0:.1f} s (compile or cache load)")

    rounds = max(1, int(200_000 // n))
    t0 = time.perf_counter()
    probe_all(tb, board.pos, board.tab, scratch, mailbox, side, ep, out, rounds)
    probe_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    setup_only(board.pos, board.tab, mailbox, side, ep, rounds)
    setup_time = time.perf_counter() - t0
    kernel_time = max(probe_time - setup_time, 1e-9)

    engine_boards = [Board(b.fen()) for b in boards]
    t0 = time.perf_counter()
    py_values = [probe_wdl_board(tb, eb, scratch) for eb in engine_boards]
    call_time = time.perf_counter() - t0

    mismatches = sum(1 for a, b, c in zip(expected, out, py_values, strict=True) if a != b or a != c)
    failures = int(np.sum(out == TB_FAIL))
    print(f"agreement: {n - mismatches}/{n} positions equal to python-chess ({failures} without result)")
    pc_rate = n / pc_time
    kernel_rate = n * rounds / kernel_time
    call_rate = n / call_time
    print(f"python-chess probe_wdl      : {pc_rate:12,.0f} probes/s")
    print(f"numbat probe_wdl (njit loop): {kernel_rate:12,.0f} probes/s  "
          f"({rounds} rounds, set-up {setup_time / (n * rounds) * 1e9:.0f} ns/pos subtracted)")
    print(f"numbat probe_wdl_board (Py) : {call_rate:12,.0f} probes/s")
    print(f"speed ratio (njit loop / python-chess): {kernel_rate / pc_rate:.1f}x")
    print(f"speed ratio (Python call / python-chess): {call_rate / pc_rate:.1f}x")
    search_nps(args.path, args.search_positions, args.search_depth, args.seed)
    return 0 if mismatches == 0 else 2


def search_nps(path: str, count: int, depth: int, seed: int) -> None:
    """Print search nps on random 5-8 piece endgames with in-search probing off and on."""
    from engine.board import Board
    from engine.searcher import Searcher
    from engine.syzygy import load_tablebases
    from engine.timeman import Limits

    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < count:
        board = random_position(rng, rng.choice(SEARCH_MATERIALS), flipped=rng.random() < 0.5,
                                turn=rng.choice([chess.WHITE, chess.BLACK]))
        if board is not None and not board.is_check() and not board.is_game_over():
            fens.append(board.fen())
    tables, max_pieces, _ = load_tablebases(path)
    searcher = Searcher(hash_mb=16)
    rates = {}
    for label, pieces in (("probing off", 0), ("probing on", max_pieces)):
        searcher.tb_tables, searcher.tb_max_pieces = tables, pieces
        nodes = hits = 0
        elapsed = 0.0
        for fen in fens:
            searcher.new_game()
            start = time.perf_counter()
            searcher.think(Board(fen), Limits(depth=depth), None)
            elapsed += time.perf_counter() - start
            nodes += int(searcher.sd.counters[0])
            hits += int(searcher.sd.counters[2])
        rates[label] = nodes / elapsed
        print(f"search, {len(fens)} endgames of 5-8 pieces at depth {depth}, {label}: "
              f"{nodes:,} nodes, {hits:,} tbhits, {rates[label]:,.0f} nps")
    print(f"search nps ratio (probing on / off): {rates['probing on'] / rates['probing off']:.2f}")


if __name__ == "__main__":
    sys.exit(main())
