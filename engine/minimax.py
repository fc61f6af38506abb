"""Plain minimax (negamax form), the lectures' starting point, kept as a reference.

No pruning, no ordering, no tables: every move to ``depth`` plies, the static
evaluation at the leaves, mate and stalemate scored as in ``engine.search``.  The
tests use it to check that alpha-beta returns exactly the minimax value while
visiting fewer nodes.  ``counters[0]`` counts the nodes visited.

Self-recursive, so (https://github.com/numba/numba/issues/6061) it is only ever called straight from Python.
"""

from __future__ import annotations

from engine.evaluate import evaluate
from engine.jit import hot_njit
from engine.movegen import GEN_ALL, LIST_START, generate_moves
from engine.position import in_check, make_move, unmake_move
from engine.tt import MATE


@hot_njit
def minimax(pos, tab, ev, moves, counters, depth, ply):
    """Negamax value of the position ``depth`` plies deep; ``moves`` has one row per ply."""
    counters[0] += 1
    if depth <= 0:
        return evaluate(pos, tab, ev)
    count = generate_moves(pos, tab, moves[ply], LIST_START, GEN_ALL)
    if count == 0:
        return -MATE + ply if in_check(pos, tab) else 0
    best = -MATE - 1
    for i in range(count):
        make_move(pos, tab, moves[ply, i])
        score = -minimax(pos, tab, ev, moves, counters, depth - 1, ply + 1)
        unmake_move(pos, tab)
        if score > best:
            best = score
    return best
