"""perft: count the leaf nodes of the legal move tree, the move generator's exam.

The last ply is bulk-counted (the generator's GEN_COUNT mode) instead of being
made and unmade.  ``perft_kernel`` is self-recursive, so it must only ever be
called straight from Python (https://github.com/numba/numba/issues/6061: a cached function that calls a
recursive one breaks in the next process).
"""

from __future__ import annotations

import numpy as np

from engine.board import Board
from engine.defs import MAX_MOVES, MAX_PLY
from engine.jit import hot_njit
from engine.movegen import GEN_ALL, GEN_COUNT, LIST_START, generate_moves
from engine.position import make_move, unmake_move


@hot_njit
def perft_kernel(pos, tab, moves, depth):
    """Leaf count of the legal move tree ``depth`` plies deep; ``moves`` has a row per depth."""
    if depth <= 0:
        return 1
    if depth == 1:
        return generate_moves(pos, tab, moves, LIST_START, GEN_COUNT)
    start = depth * MAX_MOVES
    end = generate_moves(pos, tab, moves, start, GEN_ALL)
    total = 0
    for i in range(start, end):
        make_move(pos, tab, moves[i])
        total += perft_kernel(pos, tab, moves, depth - 1)
        unmake_move(pos, tab)
    return total


def new_move_buffer() -> np.ndarray:
    """A move buffer with one MAX_MOVES row per depth."""
    return np.zeros((MAX_PLY + 1) * MAX_MOVES, dtype=np.int32)


def perft(board: Board, depth: int) -> int:
    """Number of leaf nodes ``depth`` plies below ``board``."""
    return int(perft_kernel(board.pos, board.tab, new_move_buffer(), depth))


def divide(board: Board, depth: int) -> list[tuple[str, int]]:
    """(uci move, leaf count) for each root move, as ``go perft`` prints them."""
    buffer = new_move_buffer()
    result = []
    for move in board.legal_moves():
        board.push(move)
        count = perft_kernel(board.pos, board.tab, buffer, depth - 1)
        board.pop()
        result.append((board.move_to_uci(move), int(count)))
    return result
