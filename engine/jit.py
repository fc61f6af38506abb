"""The one place numba is configured: its cache, the CPU it compiles for, the kernel decorators.

Where the compiled kernels live, which CPU they are compiled for and how a wheel's
kernels reach the cache is ``engine.kernelcache``'s (it imports no numba, so the UCI
front end can ask it before anything loads).  Importing this module points numba at
that cache and CPU, imports numba, files the engine's kernels in the cache by their
place in the package (``PackageCacheLocator``) and installs the patches to numba's
internals (``engine.numba_patches``: a faster start and compile, the same machine code;
off with ``NUMBAT_NUMBA_PATCHES=0``).  The LLVM intrinsics the kernels use (popcount,
bit scans, prefetch) are in ``engine.intrinsics``.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

from engine.kernelcache import (  # noqa: F401  (re-exported: the cache's names as the rest of the engine knows them)
    CACHE_DIR,
    KERNEL_CPU,
    PACKAGE_DIR,
    PORTABLE_CPU,
    PYTHON_ONLY_MODULES,
    install_shipped_kernels,
    kernels_compiled,
    source_hash,
)

install_shipped_kernels()
os.environ["NUMBA_CACHE_DIR"] = str(CACHE_DIR)
if KERNEL_CPU != "native":
    os.environ["NUMBA_CPU_NAME"] = KERNEL_CPU
    os.environ["NUMBA_CPU_FEATURES"] = ""  # the level's own features, not this machine's

import numba  # noqa: E402  (must follow the NUMBA_* assignments)
import numpy as np  # noqa: E402
from numba.core.caching import CacheImpl, UserProvidedCacheLocator  # noqa: E402

from engine import numba_patches  # noqa: E402


class PackageCacheLocator(UserProvidedCacheLocator):
    """Files an engine kernel in the cache under its module's folder inside the package (``engine``).

    Numba's own locator names the folder after the absolute path of the source, which
    differs between the machine that built a wheel and every machine that installs it.
    The cache directory is already keyed by a hash of the sources, so the path adds nothing.
    """

    @classmethod
    def get_suitable_cache_subpath(cls, py_file: str) -> str:
        """``engine`` for a module of the package (the only files this locator takes)."""
        return Path(py_file).resolve().parent.relative_to(PACKAGE_DIR.parent).as_posix()

    @classmethod
    def from_function(cls, py_func, py_file):  # type: ignore[no-untyped-def]
        """A locator for a kernel of this package; None (numba's own locators then) for anything else."""
        if not Path(py_file).resolve().is_relative_to(PACKAGE_DIR):
            return None
        return super().from_function(py_func, py_file)


if PackageCacheLocator not in CacheImpl._locator_classes:
    CacheImpl._locator_classes.insert(0, PackageCacheLocator)
numba_patches.install()


def njit(*args, **kwargs):
    """``numba.njit`` with the project defaults: disk cache, no GIL, numpy errors."""
    kwargs.setdefault("cache", True)
    kwargs.setdefault("nogil", True)
    kwargs.setdefault("error_model", "numpy")
    return numba.njit(*args, **kwargs)


def hot_njit(*args, **kwargs):
    """``njit`` for per-node kernels: compiled without numba's reference counting.

    With the runtime (NRT) on, every array taken out of a namedtuple or passed to a
    non-inlined function costs an atomic incref/decref pair; in make/unmake and the
    move generator that made perft five times slower.  A hot kernel never allocates,
    so it needs no runtime: it only reads and writes arrays its caller owns.
    """
    kwargs["_nrt"] = False
    return njit(*args, **kwargs)


def new_record(dtype: np.dtype, **fields: np.ndarray) -> np.record:
    """A record of ``dtype`` whose fields read as arrays (``pos.board``) in Python and in kernels.

    Fields named in ``fields`` start as a copy of the array given; the others are zero.

    The position, the lookup tables, the evaluator and the search data are one record
    each rather than a namedtuple of arrays: numba passes a record as one pointer, where
    it passes every array of a namedtuple as seven to eleven machine words.  The
    recursive search copies its arguments at every node, so that difference is paid at
    every node.  The record is a view into a one-element array, which it keeps alive.
    """
    record = np.zeros(1, dtype=dtype).view(np.recarray)[0]
    for name, array in fields.items():
        record[name][...] = array
    return record


def field_views(record: np.record) -> SimpleNamespace:
    """The fields of ``record`` as plain attributes: arrays viewing the record's memory.

    ``record.field`` goes through numpy's ``recarray`` attribute lookup, some 5 µs a
    read, where these cost an attribute lookup; a view sees every write a kernel makes
    to the record.  The search driver reads its search data through them.
    """
    return SimpleNamespace(**{name: record[name] for name in record.dtype.names})
