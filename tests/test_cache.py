"""The compiled kernels survive the process: a fresh process loads them all from the disk cache."""

from __future__ import annotations

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
