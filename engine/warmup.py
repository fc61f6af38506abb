"""Compile every kernel once, and load the cached kernels fast when the engine starts.

``numbat warmup`` runs each compiled entry point on a small input with the argument
types the engine uses, which makes numba compile and cache it.  The install command
in the README runs it, so the first game after installing starts as fast as every
later one.  ``load_kernels`` is what the UCI loop runs at start-up: it loads the
kernels a game needs from that cache.
"""

from __future__ import annotations

import gc
import time


def settle_heap() -> None:
    """Move every object alive now (numba, numpy, the loaded kernels: some 70,000) out of
    the garbage collector's reach, so that a collection during a search scans only what
    the search loop allocates, not the whole compiler.  No collection first: after
    loading, it would find a handful of garbage objects and cost 0.06 s of start-up."""
    gc.freeze()


def load_kernels() -> None:
    """Bring the kernels a game needs into memory (from the disk cache when warm).

    Kernels used only by other commands (``go perft``, ``eval``, Syzygy files) load
    when first used, which is quick because a cache hit skips numba's compiler set-up
    (``engine.jit``).
    """
    from engine.board import Board
    from engine.searcher import Searcher
    from engine.timeman import Limits

    Searcher(hash_mb=1).think(Board(), Limits(depth=1), lambda line: None)
    settle_heap()


def warm_up() -> float:
    """Compile (or load) every kernel; return the seconds it took."""
    start = time.perf_counter()
    from engine.board import Board
    from engine.fen import KIWIPETE
    from engine.perft import divide, perft

    board = Board(KIWIPETE)
    perft(board, 2)
    divide(board, 2)
    board.noisy_moves()
    board.is_check()
    board.push_null()
    board.pop()
    board.push(board.legal_moves()[0])
    board.fen()
    board.pop()

    from engine.minimax import minimax
    from engine.searcher import Searcher
    from engine.timeman import Limits
    import numpy as np

    searcher = Searcher(hash_mb=1)
    searcher.think(board, Limits(depth=3), lambda line: None)
    # The ponder move of a one-move PV comes from the TT (a search this deep rarely needs it).
    from engine.defs import ST_PLY
    from engine.search import tt_move_of

    tt_move_of(searcher.tt, board.pos.keys[board.pos.state[ST_PLY]])
    searcher.new_game()
    minimax(board.pos, board.tab, searcher.ev, np.zeros((8, 256), dtype=np.int32), np.zeros(1, dtype=np.int64), 1, 0)

    # Syzygy probing: empty tables have the same array types as loaded ones.
    from engine.syzygy import empty_tablebases, make_scratch, probe_table, probe_wdl

    tablebases = empty_tablebases()
    endgame = Board("8/8/8/3k4/8/8/3P4/4K3 w - - 0 1")
    probe_wdl(tablebases, endgame.pos, endgame.tab, make_scratch())
    probe_table(tablebases, endgame.pos, make_scratch())
    return time.perf_counter() - start
