"""The one place numba is configured: the cache key and the kernel decorators.

Numba's on-disk cache keys every compiled function by its own file only, so an edit
in another module would leave stale machine code behind.  We therefore key the
whole cache directory by a hash of every engine source file: any edit anywhere
gives a fresh directory, and an unchanged install always finds its warm cache.

The directory is ``$NUMBAT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/numbat``
(default ``~/.cache/numbat``), with a ``numba-<hash>`` subfolder.

Importing this module sets numba's cache directory, imports numba and installs the
patches to numba's internals (``engine.numba_patches``: a faster start and compile, the
same machine code; off with ``NUMBAT_NUMBA_PATCHES=0``).  The LLVM intrinsics the
kernels use (popcount, bit scans, prefetch) are in ``engine.intrinsics``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import SimpleNamespace

PACKAGE_DIR = Path(__file__).resolve().parent


# Pure-Python modules: they define no kernel and no constant a kernel reads, so editing
# them must not throw away minutes of compiled code.  Every other module of the package
# (this one, ``intrinsics``, ``numba_patches`` and the kernel modules) is in the hash.
# (tests/test_cache.py checks that these define nothing numba compiles and that no
# hashed module imports from them.)
PYTHON_ONLY_MODULES = frozenset({
    "__init__.py", "__main__.py", "bench.py", "board.py", "book.py", "cli.py", "fen.py", "searcher.py",
    "strength.py", "tablebase.py", "timeman.py", "uci.py", "warmup.py",
})


def source_hash() -> str:
    """Short hash of every kernel-bearing ``.py`` file of the package (tools excluded)."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        rel = path.relative_to(PACKAGE_DIR)
        if rel.parts[0] == "tools" or (len(rel.parts) == 1 and rel.name in PYTHON_ONLY_MODULES):
            continue
        digest.update(str(rel).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_root() -> Path:
    """Folder under which the hash-keyed numba cache directories live."""
    explicit = os.environ.get("NUMBAT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "numbat"


CACHE_DIR = cache_root() / f"numba-{source_hash()}"
os.environ["NUMBA_CACHE_DIR"] = str(CACHE_DIR)

import numba  # noqa: E402  (must follow the NUMBA_CACHE_DIR assignment)
import numpy as np  # noqa: E402

from engine import numba_patches  # noqa: E402

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
