"""Compile every kernel once, and load the cached kernels fast when the engine starts.

``numbat warmup`` runs each compiled entry point on a small input with the argument
types the engine uses, which makes numba compile and cache it.  The install command
in the README runs it, so the first game after installing starts as fast as every
later one.  ``load_kernels`` is what the UCI loop runs at start-up: it loads the
kernels a game needs from that cache, skipping numba's compiler set-up.
"""

from __future__ import annotations

import gc
import time


def settle_heap() -> None:
    """Move every object alive now (numba, numpy, the loaded kernels: hundreds of
    thousands) out of the garbage collector's reach, so that a collection during a
    search scans only what the search loop allocates, not the whole compiler."""
    gc.collect()
    gc.freeze()


def skip_compiler_setup_on_cache_hits() -> None:
    """From now on in this process, a kernel found in numba's disk cache loads without numba's compiler.

    Before it even looks in the cache, numba sets up its whole compiler: it imports and
    registers hundreds of typing and lowering implementations (0.2 s of a 1 s start
    here).  Machine code loaded from the cache needs none of that, only numba's
    runtime (NRT), which it links against; so we start the runtime and let a cache
    lookup go straight to the disk.  A miss still compiles correctly, because numba's
    compiler sets itself up before compiling.  Calling this twice is harmless.
    """
    import engine.jit  # noqa: F401  (points numba at our cache before numba is imported)
    from numba.core.caching import Cache
    from numba.core.registry import cpu_target
    from numba.core.runtime import rtsys

    def load_overload(cache: Cache, signature: object, target_context: object) -> object:
        with cache._guard_against_spurious_io_errors():
            return cache._load_overload(signature, target_context)

    rtsys.initialize(cpu_target.target_context)
    Cache.load_overload = load_overload  # type: ignore[method-assign]


def load_kernels() -> None:
    """Bring the kernels a game needs into memory (from the disk cache when warm).

    Kernels used only by other commands (``go perft``, ``eval``, Syzygy files) load
    when first used, which is quick once numba's compiler set-up is skipped.
    """
    skip_compiler_setup_on_cache_hits()
    from engine.board import Board
    from engine.searcher import Searcher
    from engine.timeman import Limits

    Searcher(hash_mb=1).think(Board(), Limits(depth=1), lambda line: None)
    settle_heap()


def warm_up() -> float:
    """Compile (or load) every kernel; return the seconds it took."""
    start = time.perf_counter()
    from engine.board import Board
    from engine.perft import divide, perft

    board = Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
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
    searcher.new_game()
    minimax(board.pos, board.tab, searcher.ev, np.zeros((8, 256), dtype=np.int32), np.zeros(1, dtype=np.int64), 1, 0)

    # Syzygy probing: empty tables have the same array types as loaded ones.
    from engine.syzygy import empty_tablebases, make_scratch, probe_table, probe_wdl

    tablebases = empty_tablebases()
    endgame = Board("8/8/8/3k4/8/8/3P4/4K3 w - - 0 1")
    probe_wdl(tablebases, endgame.pos, endgame.tab, make_scratch())
    probe_table(tablebases, endgame.pos, make_scratch())
    return time.perf_counter() - start
