"""The compiled kernels survive the process: a fresh process loads them all from the disk cache."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHECK = textwrap.dedent(
    """
    import sys, time
    start = time.perf_counter()
    from engine.warmup import warm_up
    warm_up()
    elapsed = time.perf_counter() - start
    import numba
    hits = misses = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("engine"):
            continue
        for value in vars(module).values():
            if isinstance(value, numba.core.registry.CPUDispatcher):
                hits += sum(value.stats.cache_hits.values())
                misses += sum(value.stats.cache_misses.values())
    print(hits, misses, elapsed)
    """
)


def run_check() -> tuple[int, int, float]:
    out = subprocess.run([sys.executable, "-c", CHECK], cwd=REPO, capture_output=True, text=True, check=True)
    hits, misses, elapsed = out.stdout.split()
    return int(hits), int(misses), float(elapsed)


def test_second_process_compiles_nothing() -> None:
    run_check()  # compiles whatever is not cached yet
    hits, misses, elapsed = run_check()
    assert misses == 0, f"{misses} kernels were recompiled in a fresh process"
    assert hits >= 5, f"only {hits} kernels came from the cache"
    assert elapsed < 3.0, f"warm start took {elapsed:.2f} s"


def test_modules_left_out_of_the_cache_key_define_no_kernels() -> None:
    from engine.jit import PACKAGE_DIR, PYTHON_ONLY_MODULES

    for name in PYTHON_ONLY_MODULES:
        text = (PACKAGE_DIR / name).read_text()
        assert "njit" not in text, name


def test_engine_start_loads_cached_kernels_without_numba_compiler_setup() -> None:
    code = textwrap.dedent(
        """
        import sys
        from engine.warmup import load_kernels
        load_kernels()
        setup_skipped = "numba.cpython.setobj" not in sys.modules  # one of numba's compiler registries
        from engine.board import Board
        from engine.perft import perft  # a kernel load_kernels left for later
        print(setup_skipped, perft(Board(), 3))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "8902"]


def test_cache_miss_still_compiles_once_compiler_setup_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "fresh_kernel.py").write_text(textwrap.dedent(
        """
        from numba import njit

        @njit(cache=True)
        def distinct(values):
            seen = set()  # needs numba's set implementation, registered by the compiler set-up
            for value in values:
                seen.add(value)
            return len(seen)
        """
    ))
    code = textwrap.dedent(
        """
        import numpy as np
        import engine.jit  # installs the cache-hit path that skips numba's compiler set-up
        import fresh_kernel
        print(fresh_kernel.distinct(np.array([3, 1, 3, 2, 1])), sum(fresh_kernel.distinct.stats.cache_hits.values()))
        """
    )
    env = {**os.environ, "NUMBAT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["3", "0"], ["3", "1"]]  # compiled by the first process, loaded by the second


def test_compiling_a_recursive_kernel_types_and_inlines_each_function_once(tmp_path: Path) -> None:
    """engine.jit spares numba's front end its repeated work on a cache miss (the search's
    compile takes about a third of the time), and the compiled kernel computes the same."""
    (tmp_path / "recursive_kernel.py").write_text(textwrap.dedent(
        """
        from numba import njit

        @njit(inline="always")
        def leaf_value(n):
            return (n * 7919) % 13 - 6

        @njit(inline="always")
        def children(n):
            return 2 + n % 2

        @njit(cache=True)
        def negamax(n, depth, alpha, beta):
            if depth == 0:
                return leaf_value(n)
            best = -1000
            for child in range(children(n)):
                if child == 0:
                    score = -negamax(3 * n + child, depth - 1, -beta, -alpha)
                else:  # a null-window probe, then a re-search: three recursive call sites
                    score = -negamax(3 * n + child, depth - 1, -alpha - 1, -alpha)
                    if alpha < score < beta:
                        score = -negamax(3 * n + child, depth - 1, -beta, -score)
                best = max(best, score)
                alpha = max(alpha, score)
                if alpha >= beta:
                    break
            return best + leaf_value(depth) - leaf_value(depth)
        """
    ))
    code = textwrap.dedent(
        """
        import sys
        from numba.core import typeinfer
        from numba.core.inline_closurecall import InlineWorker
        counts = {"partial": 0, "untyped": 0}
        partial, untyped = typeinfer.TypeInferer.return_types_from_partial, InlineWorker.run_untyped_passes
        def counted_partial(self):
            counts["partial"] += 1
            return partial(self)
        def counted_untyped(self, *args, **kwargs):
            counts["untyped"] += 1
            return untyped(self, *args, **kwargs)
        typeinfer.TypeInferer.return_types_from_partial = counted_partial
        InlineWorker.run_untyped_passes = counted_untyped
        if sys.argv[1] == "engine":
            import engine.jit  # its cache-miss path installs the compile-time savings
        import recursive_kernel
        print(recursive_kernel.negamax(1, 6, -1000, 1000), counts["partial"], counts["untyped"])
        """
    )
    def run(which: str) -> list[str]:
        # numba is imported before engine.jit, so NUMBA_CACHE_DIR (not NUMBAT_CACHE_DIR) is the cache: empty here
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / which), "PYTHONPATH": str(tmp_path)}
        return subprocess.run([sys.executable, "-c", code, which], cwd=REPO, env=env, capture_output=True, text=True,
                              check=True).stdout.split()

    plain, patched = run("numba"), run("engine")
    assert patched[0] == plain[0]              # the same root value
    assert int(plain[1]) >= 3 and patched[1] == "1"  # partial typing once, not once per recursive call
    assert int(plain[2]) > int(patched[2]) == 2     # each inlined function's IR made once
