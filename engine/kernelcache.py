"""Where the compiled kernels live, which CPU they are built for, and whether they are there yet.

The cache.  Numba's on-disk cache keys every compiled function by its own file only,
so an edit in another module would leave stale machine code behind.  We therefore key
the whole cache directory by a hash of the engine's kernel modules: any edit of one
gives a fresh directory, and an unchanged install always finds its warm cache.  Inside
it, ``engine.jit`` files a kernel under its module's place in the package (``engine/``),
not under the folder the package happens to be installed in, so that a cache built in
one place (a wheel's build, a checkout) serves the same sources anywhere.

The directory is ``$NUMBAT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/numbat`` (default
``~/.cache/numbat``), with a ``numba-<hash>-<cpu>`` subfolder.

The CPU.  By default numba compiles for the machine it runs on, and code compiled so
may use instructions another machine lacks.  On an x86-64 machine that has the
x86-64-v3 level (AVX2, BMI1/2, LZCNT, POPCNT, MOVBE, FMA: Intel cores since Haswell,
AMD cores since Excavator) the engine compiles for that level instead, and such code
runs on any machine that has it.  That is what lets a wheel carry its kernels compiled
(``engine/kernels/``, filled when the wheel is built): on first use they are copied
into the user's cache, and nothing is compiled.  Another machine compiles for itself,
as numba does by default; ``NUMBAT_CPU=native`` asks for that everywhere.

This module imports no numba (``engine.jit`` does, after reading it), so the UCI front
end can tell at once whether a start will have to compile.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


# Pure-Python modules: they define no kernel and no constant a kernel reads, so editing
# them must not throw away minutes of compiled code.  Every other module of the package
# (this one, ``jit``, ``intrinsics``, ``numba_patches`` and the kernel modules) is in the hash.
# (tests/test_cache.py checks that these define nothing numba compiles and that no
# hashed module imports from them.)
PYTHON_ONLY_MODULES = frozenset({
    "__init__.py", "__main__.py", "bench.py", "board.py", "book.py", "cli.py", "fen.py", "searcher.py",
    "strength.py", "tablebase.py", "timeman.py", "uci.py", "warmup.py",
})


def kernel_modules() -> list[Path]:
    """The package's own modules that numba compiles or reads, in a fixed order (sub-packages are not the engine's)."""
    return sorted(path for path in PACKAGE_DIR.glob("*.py") if path.name not in PYTHON_ONLY_MODULES)


def source_hash() -> str:
    """Short hash of every kernel module of the package."""
    digest = hashlib.sha256()
    for path in kernel_modules():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


# The portable CPU level: LLVM's name for it, and the features (as LLVM names them) a
# machine must have to run code built for it.
PORTABLE_CPU = "x86-64-v3"
PORTABLE_FEATURES = frozenset({
    "avx", "avx2", "bmi", "bmi2", "cx16", "f16c", "fma", "lzcnt", "movbe", "popcnt", "sahf", "sse4.1", "sse4.2",
    "ssse3", "xsave",
})
CPU_SWITCH = "NUMBAT_CPU"  # "native": compile for this machine even where the portable level runs


def host_has_portable_level() -> bool:
    """True on an x86-64 machine whose CPU has every feature of ``PORTABLE_CPU``."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    import llvmlite.binding as llvm

    features = llvm.get_host_cpu_features()
    return all(features.get(name, False) for name in PORTABLE_FEATURES)


def kernel_cpu() -> str:
    """The CPU the kernels are compiled for: ``PORTABLE_CPU``, or ``"native"`` (this machine's own)."""
    if os.environ.get(CPU_SWITCH, "").strip().lower() == "native":
        return "native"
    return PORTABLE_CPU if host_has_portable_level() else "native"


def cache_root() -> Path:
    """Folder under which the hash-keyed numba cache directories live."""
    explicit = os.environ.get("NUMBAT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "numbat"


SHIPPED_KERNELS = PACKAGE_DIR / "kernels"  # a wheel's compiled kernels (``engine.tools.wheel`` fills it)
KERNEL_CPU = kernel_cpu()
CACHE_NAME = f"numba-{source_hash()}-{KERNEL_CPU}"
CACHE_DIR = cache_root() / CACHE_NAME
PYTHON_TAG = f"py{sys.version_info[0]}{sys.version_info[1]}"  # numba files each kernel under its Python


def kernels_compiled(cache: Path = CACHE_DIR) -> bool:
    """True when ``cache`` holds the search kernel compiled for this Python (the last kernel a warm-up makes)."""
    return any((cache / "engine").glob(f"search.search-*.{PYTHON_TAG}.nbi"))


def install_shipped_kernels() -> bool:
    """Copy a wheel's compiled kernels for these sources and this CPU into the cache, if the cache lacks them.

    Copied rather than used in place: the install folder may be read-only, and numba
    writes to its cache when a kernel it lacks is compiled.  The copy goes to a
    temporary folder renamed into place, so engines started side by side never see
    half of it.  Returns True when the cache holds them afterwards.
    """
    shipped = SHIPPED_KERNELS / CACHE_NAME
    if kernels_compiled() or not kernels_compiled(shipped):
        return kernels_compiled()
    staging = CACHE_DIR.with_name(f"{CACHE_NAME}.{os.getpid()}.tmp")
    try:
        shutil.copytree(shipped, staging)
        if CACHE_DIR.exists():  # a partial cache (a compile broken off): the shipped one replaces it
            shutil.rmtree(CACHE_DIR, ignore_errors=True)
        os.replace(staging, CACHE_DIR)
    except OSError:  # a read-only home, or another engine copied them first
        shutil.rmtree(staging, ignore_errors=True)
    return kernels_compiled()
