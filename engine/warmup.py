"""Compile every kernel once, and load the cached kernels fast when the engine starts.

``numbat warmup`` runs each compiled entry point on a small input with the argument
types the engine uses, which makes numba compile and cache it.  ``load_kernels`` is
what the UCI loop runs at start-up: it loads the kernels a game needs from that cache
(and, on a cold cache, has ``warm_up`` compile them first).

A cold compile is staged for two cores.  Numba compiles a kernel's callees before the
kernel, and takes a callee from the disk cache when it is there, so the search (the
largest compile by far) waits for nothing if its large callees are compiled first, side
by side: stage one compiles the evaluation in one process and the tablebase prober with
the move generator in another; stage two compiles the search in one process and
everything else (perft, the board operations, the teaching minimax) in the other.  The
calling process then loads every kernel from the cache the workers filled, which
compiles whatever a worker left out.  ``abort_warm_up`` stops a cold compile at once (the
UCI loop calls it on ``quit``, so that a GUI closing the engine mid-compile does not wait for it).
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections.abc import Callable
from multiprocessing import get_context
from multiprocessing.process import BaseProcess


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


def warm_evaluation() -> None:
    """The static evaluation, with the argument types the search passes it."""
    from engine.board import Board
    from engine.evaluate import evaluate, make_evaluator
    from engine.fen import KIWIPETE

    board = Board(KIWIPETE)
    evaluate(board.pos, board.tab, make_evaluator())


def warm_tablebases() -> None:
    """Syzygy probing (empty tables have the same array types as loaded ones), and the staged
    move generator the search calls (the tablebase prober compiles its other modes)."""
    import numpy as np
    from numba import typeof, types

    from engine.board import Board
    from engine.movegen import GEN_ALL, GEN_QUIET, generate_moves
    from engine.syzygy import empty_tablebases, make_scratch, probe_table, probe_wdl

    tablebases = empty_tablebases()
    endgame = Board("8/8/8/3k4/8/8/3P4/4K3 w - - 0 1")
    probe_wdl(tablebases, endgame.pos, endgame.tab, make_scratch())
    probe_table(tablebases, endgame.pos, make_scratch())
    # The search names the mode as a constant, so numba compiles a version for each mode it names.
    moves = np.zeros(256, dtype=np.int32)
    for mode in (GEN_ALL, GEN_QUIET):
        generate_moves.compile((typeof(endgame.pos), typeof(endgame.tab), typeof(moves), types.int64,
                                types.literal(mode)))


def warm_search() -> None:
    """The search kernel and everything the driver calls around it."""
    from engine.board import Board
    from engine.defs import ST_PLY
    from engine.fen import KIWIPETE
    from engine.search import tt_move_of
    from engine.searcher import Searcher
    from engine.timeman import Limits

    board = Board(KIWIPETE)
    searcher = Searcher(hash_mb=1)
    searcher.think(board, Limits(depth=3), lambda line: None)
    # The ponder move of a one-move PV comes from the TT (a search this deep rarely needs it).
    tt_move_of(searcher.tt, board.pos.keys[board.pos.state[ST_PLY]])
    searcher.new_game()


def warm_board() -> None:
    """Perft, divide, the board operations the UCI layer calls one move at a time, and the
    plain minimax of the lectures (``engine.minimax``)."""
    import numpy as np

    from engine.board import Board
    from engine.evaluate import make_evaluator
    from engine.fen import KIWIPETE
    from engine.minimax import minimax
    from engine.perft import divide, perft

    board = Board(KIWIPETE)
    board.legal_prefix(board.legal_moves()[:2])
    perft(board, 2)
    divide(board, 2)
    board.noisy_moves()
    board.is_check()
    board.push_null()
    board.pop()
    board.push(board.legal_moves()[0])
    board.fen()
    board.pop()
    start = Board()
    moves, counters = np.zeros((8, 256), dtype=np.int32), np.zeros(1, dtype=np.int64)
    minimax(start.pos, start.tab, make_evaluator(), moves, counters, 1, 0)


# Stages of a cold compile: the steps of a stage run side by side, each stage after the
# one before (the search takes its callees from the first stage's cache).  Within a
# stage, longest first.
WARM_UP_STAGES: tuple[dict[str, Callable[[], None]], ...] = (
    {"evaluation": warm_evaluation, "tablebases": warm_tablebases},
    {"search": warm_search, "board": warm_board},
)
WARM_UP_STEPS: dict[str, Callable[[], None]] = {name: step for stage in WARM_UP_STAGES for name, step in stage.items()}


def _exit_when_orphaned(parent: int) -> None:
    """End this worker once its parent is gone (a GUI may kill an engine that is slow to quit)."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _run_step(name: str, parent: int) -> None:
    """Run one warm-up step (the target of a worker process); end with the parent process."""
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    WARM_UP_STEPS[name]()


class WarmUpAborted(Exception):
    """A cold warm-up stopped by ``abort_warm_up``."""


_workers: list[BaseProcess] = []  # the worker processes of the warm-up in progress
_workers_lock = threading.Lock()
_aborted = threading.Event()


def abort_warm_up() -> None:
    """Stop a warm-up in progress: kill its worker processes and start no further step.

    Without it, a process quitting during a cold compile would wait for the compile
    under way in each worker (up to a minute) before it could exit.
    """
    with _workers_lock:
        _aborted.set()
        for process in _workers:
            process.kill()


def compile_in_workers(jobs: int) -> None:
    """Run each stage's steps in fresh spawned processes, ``jobs`` at a time, stage after stage.

    Spawned, so that each imports numba cleanly.  A worker that fails leaves its kernels
    out of the cache; the calling process's own pass compiles them (and shows the error).
    Raises WarmUpAborted once ``abort_warm_up`` has been called.
    """
    context = get_context("spawn")
    for stage in WARM_UP_STAGES:
        names = list(stage)
        for first in range(0, len(names), jobs):
            with _workers_lock:
                if _aborted.is_set():
                    raise WarmUpAborted
                batch = [context.Process(target=_run_step, args=(name, os.getpid()), name=f"numbat-warmup-{name}",
                                         daemon=True) for name in names[first:first + jobs]]
                for process in batch:
                    process.start()
                _workers.extend(batch)
            for process in batch:
                process.join()
            with _workers_lock:
                for process in batch:
                    _workers.remove(process)
    if _aborted.is_set():
        raise WarmUpAborted


def default_jobs() -> int:
    """Processes for a cold warm-up: one per core the process may use, at most one per step of a stage."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, max(len(stage) for stage in WARM_UP_STAGES)))


def cache_is_empty() -> bool:
    """True when numba's cache for these sources and this CPU lacks the compiled search."""
    from engine.jit import kernels_compiled

    return not kernels_compiled()


def warm_up(jobs: int | None = None) -> float:
    """Compile (or load) every kernel; return the seconds it took.

    With ``jobs`` > 1 the steps compile in that many fresh processes first (spawned, so
    each imports numba cleanly); this process then runs every step itself, which loads
    what they cached and compiles anything they left out.  By default (``None``) the
    steps run in parallel on an empty cache (``default_jobs``) and in this process
    otherwise, where starting workers would cost more than the few kernels left.
    """
    start = time.perf_counter()
    if jobs is None:
        jobs = default_jobs() if cache_is_empty() else 1
    if jobs > 1:
        compile_in_workers(jobs)
    for step in WARM_UP_STEPS.values():
        step()
    return time.perf_counter() - start
