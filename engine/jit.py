"""The one place numba is configured and imported.

Numba's on-disk cache keys every compiled function by its own file only, so an edit
in another module would leave stale machine code behind.  We therefore key the
whole cache directory by a hash of every engine source file: any edit anywhere
gives a fresh directory, and an unchanged install always finds its warm cache.

The directory is ``$NUMBAT_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/numbat``
(default ``~/.cache/numbat``), with a ``numba-<hash>`` subfolder.

Two adjustments to numba itself live here too, both tested in ``tests/test_cache.py``
against the pinned numba: a cache hit loads without numba's compiler set-up (a
faster start), and a miss spares numba's front end work it would repeat many times
while compiling the search (a faster compile, the same machine code).
"""

from __future__ import annotations

import copy
import hashlib
import os
import sys
from pathlib import Path
from types import SimpleNamespace

PACKAGE_DIR = Path(__file__).resolve().parent


# Pure-Python modules: they define no kernel and no constant a kernel reads, so editing
# them must not throw away two minutes of compiled code.  (A test checks that none of
# them mentions njit.)
PYTHON_ONLY_MODULES = frozenset({
    "__init__.py", "__main__.py", "bench.py", "board.py", "cli.py", "fen.py", "searcher.py", "tablebase.py",
    "strength.py", "timeman.py", "uci.py", "warmup.py",
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


def _import_numba_array_support_without_scipy() -> None:
    """Import numba's array maths without its optional BLAS probe.

    ``numba.np.arraymath`` probes for BLAS by importing ``scipy.linalg`` (0.4 s here),
    which the engine never uses (no ``np.dot``).  Hiding ``scipy.linalg`` for that one
    import keeps compiling fast; the entry is removed again straight after.
    """
    hidden = "scipy.linalg" not in sys.modules
    if hidden:
        sys.modules["scipy.linalg"] = None  # type: ignore[assignment]
    try:
        import numba.np.arraymath  # noqa: F401
    finally:
        if hidden:
            del sys.modules["scipy.linalg"]


def _spare_repeated_compiler_work() -> None:
    """Spare numba's front end three repeated jobs, which made the search's compile slow (a miss only).

    Measured under cProfile on a cold cache, the search kernel's compile spent about
    half its time re-typing the whole function and a quarter copying inlined code:

    * At every recursive call it meets, numba's type inference clones itself and
      re-types the whole function without recursion, to learn the return type (32
      times for ``search``).  The first answer is kept and given again; ``unify``
      then checks that the function's final return type is that answer, so a
      function whose return type changed while it was typed fails to compile
      rather than compiling wrongly.
    * Every ``inline="always"`` call runs the untyped pipeline over the callee again,
      inlining the callee's own inlined calls again, before copying its IR in
      (2,046 inlines of a few hundred functions).  The callee's IR is now made once
      per function and copied, with a fresh identity per call site as before.
    * Copying a callee's IR deep-copies each block apart, and with each block the
      whole variable scope of the function.  One copy of the scope now serves every
      block of the same copy (the inliner then moves all blocks to the caller's scope).

    The machine code is the same, instruction for instruction; the cold compile of
    everything ``numbat warmup`` compiles fell from 13.6 to 5.4 minutes.
    """
    from numba.core import errors, ir, typeinfer
    from numba.core.inline_closurecall import InlineWorker

    if getattr(typeinfer.TypeInferer, "_numbat_patched", False):
        return
    typeinfer.TypeInferer._numbat_patched = True
    partial_return_type = typeinfer.TypeInferer.return_types_from_partial
    unify = typeinfer.TypeInferer.unify

    def return_types_from_partial(self: typeinfer.TypeInferer) -> object:
        known = self.__dict__.get("_numbat_partial_return")
        if known is None:
            known = partial_return_type(self)
            self._numbat_partial_return = known
        return known

    def checked_unify(self: typeinfer.TypeInferer, raise_errors: bool = True) -> tuple:
        typdict, return_type, calltypes = unify(self, raise_errors)
        known = self.__dict__.get("_numbat_partial_return")
        if known is not None and known != return_type:
            raise errors.TypingError(f"recursive call typed as returning {known}, function returns {return_type}")
        return typdict, return_type, calltypes

    typeinfer.TypeInferer.return_types_from_partial = return_types_from_partial  # type: ignore[method-assign]
    typeinfer.TypeInferer.unify = checked_unify  # type: ignore[method-assign]

    untyped_ir: dict[object, object] = {}
    scope_copies: dict[int, ir.Scope] | None = None  # while inline_ir copies a callee: scope id -> its copy

    def inline_function(self: InlineWorker, caller_ir, block, i, function, arg_typs=None):
        nonlocal scope_copies
        callee_ir = untyped_ir.get(function)
        if callee_ir is None:
            callee_ir = untyped_ir[function] = self.run_untyped_passes(function)
        fresh = callee_ir.copy()  # inline_ir deep-copies the blocks it changes
        fresh.func_id = callee_ir.func_id.derive()
        scope_copies = {}
        try:
            return self.inline_ir(caller_ir, block, i, fresh, function.__code__.co_freevars, arg_typs=arg_typs)
        finally:
            scope_copies = None

    def deepcopy_scope(self: ir.Scope, memo: dict) -> ir.Scope:
        if scope_copies is not None and id(self) in scope_copies:
            return scope_copies[id(self)]
        clone = ir.Scope.__new__(ir.Scope)
        memo[id(self)] = clone
        clone.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if scope_copies is not None:
            scope_copies[id(self)] = clone
        return clone

    InlineWorker.inline_function = inline_function  # type: ignore[method-assign]
    ir.Scope.__deepcopy__ = deepcopy_scope  # type: ignore[attr-defined]


def _load_cached_kernel_without_compiler_setup() -> None:
    """Let a kernel found in the disk cache load without numba's compiler set-up.

    Before it even looks in the cache, numba sets up its whole compiler: it imports and
    registers hundreds of typing and lowering implementations (0.3 s of a 1 s start
    here).  Machine code loaded from the cache needs none of that, only numba's
    runtime (NRT), which it links against.  So a lookup goes straight to the disk, and
    only a miss prepares the compiler (numba's compiler then sets itself up as usual).
    """
    from numba.core.caching import Cache
    from numba.core.runtime import rtsys

    def load_overload(cache: Cache, signature: object, target_context: object) -> object:
        rtsys.initialize(target_context)  # once per process; a no-op afterwards
        loaded = None
        with cache._guard_against_spurious_io_errors():
            loaded = cache._load_overload(signature, target_context)
        if loaded is None:  # a miss: the compiler runs next
            _import_numba_array_support_without_scipy()
            _spare_repeated_compiler_work()
        return loaded

    Cache.load_overload = load_overload  # type: ignore[method-assign]


_load_cached_kernel_without_compiler_setup()
from numba import types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba.core import cgutils  # noqa: E402


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


@intrinsic
def popcount(typingctx, bb):
    """Number of set bits of a uint64 (LLVM ctpop: one POPCNT instruction)."""
    if not isinstance(bb, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(bb), codegen


@intrinsic
def lsb(typingctx, bb):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz: one TZCNT)."""
    if not isinstance(bb, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.int64(bb), codegen


@intrinsic
def msb(typingctx, bb):
    """Index of the highest set bit of a non-zero uint64 (63 minus LLVM ctlz)."""
    if not isinstance(bb, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        zeros = builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))
        return builder.sub(ir.Constant(ir.IntType(64), 63), zeros)

    return types.int64(bb), codegen


@intrinsic
def prefetch(typingctx, arr, index):
    """Ask the CPU to load the cache line of ``arr.flat[index]`` now (LLVM prefetch, no effect
    on the program's results): a later read of it then need not wait for memory."""
    if not isinstance(arr, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, value=args[0])
        address = builder.bitcast(builder.gep(array.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        llvm_prefetch = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(llvm_prefetch, [address, i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.void(arr, index), codegen
