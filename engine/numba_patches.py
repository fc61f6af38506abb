"""Four patches to numba's internals: a faster start on a cache hit, a faster compile on a miss.

* A cache hit loads without numba's compiler set-up (``Cache.load_overload`` replaced);
* a miss first imports numba's array maths without its optional BLAS probe (no
  ``scipy.linalg``);
* then spares numba's front end work it would repeat many times while compiling
  the search (recursive return types, inlined callees' untyped IR, scope copies);
* and lets SSA reconstruction rewrite, for each variable it fixes, only the blocks
  that mention that variable.

The machine code is the same, instruction for instruction (``engine.tools.cache_diff``
compares two caches); ``tests/test_cache.py`` tests each patch, and runs the engine
without them too.

They reach into private numba classes (``Cache``, ``TypeInferer``, ``InlineWorker``,
``ir.Scope``, ``numba.core.ssa``), so ``install`` applies them only on the numba versions they were verified
against (``VERIFIED_NUMBA_VERSIONS``); on any other version numba runs as it comes, with
one warning.  ``NUMBAT_NUMBA_PATCHES=0`` turns them off on any version.

numba is imported inside the functions only: ``engine.jit`` sets numba's cache directory
before anything imports numba, and then calls ``install``.
"""

from __future__ import annotations

import copy
import os
import sys
import warnings
from collections import defaultdict

VERIFIED_NUMBA_VERSIONS = frozenset({"0.68.1"})
SWITCH = "NUMBAT_NUMBA_PATCHES"  # 0 (or false, no, off): plain numba
_OFF = frozenset({"0", "false", "no", "off"})

_installed: bool | None = None  # None until ``install`` has decided


def decide(numba_version: str, switch: str | None) -> tuple[bool, str | None]:
    """(apply the patches?, a warning to give or None) for numba's version and the switch's value."""
    if switch is not None and switch.strip().lower() in _OFF:
        return False, None
    if numba_version not in VERIFIED_NUMBA_VERSIONS:
        verified = ", ".join(sorted(VERIFIED_NUMBA_VERSIONS))
        return False, (f"numba {numba_version} is not a version Numbat's patches to numba were verified against "
                       f"({verified}): running plain numba, which starts and compiles slower")
    return True, None


def install() -> bool:
    """Apply the patches if ``decide`` says so (it decides once per process); return whether they are on."""
    global _installed
    if _installed is None:
        import numba

        apply, warning = decide(numba.__version__, os.environ.get(SWITCH))
        if warning is not None:
            warnings.warn(warning, RuntimeWarning, stacklevel=2)
        if apply:
            _load_cached_kernel_without_compiler_setup()
        _installed = apply
    return _installed


def installed() -> bool:
    """Whether the patches are on in this process."""
    return bool(_installed)


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


def _untyped_ir_key(worker, function) -> tuple | None:
    """What the untyped IR that ``InlineWorker.run_untyped_passes`` makes of ``function`` depends on.

    Besides the callee's own code, globals and closure, numba's untyped pipeline reads the
    *caller's* compile state, which the worker carries: its flags (``no_rewrites`` decides
    which rewrite passes run, ``enable_ssa`` whether SSA is built; ``flags.summary()`` is
    the value form numba mangles symbols with), its ``locals`` (with-lifting and the
    callee's own inlines see them), the pipeline's class (with-lifting compiles with it)
    and the target, by the classes of the typing and target contexts (numba makes a
    target context per compile, so not by identity).  None when the state is not
    hashable (no memo then).
    """
    try:
        return (function, worker.flags.summary(), frozenset((worker.locals or {}).items()), type(worker.pipeline),
                type(worker.typingctx), type(worker.targetctx))
    except TypeError:
        return None


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
      per callee and caller state (``_untyped_ir_key``) and copied, with a fresh
      identity per call site as before.
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
    plain_inline_function = InlineWorker.inline_function

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

    untyped_ir: dict[tuple, object] = {}
    scope_copies: dict[int, ir.Scope] | None = None  # while inline_ir copies a callee: scope id -> its copy

    def inline_function(self: InlineWorker, caller_ir, block, i, function, arg_typs=None):
        nonlocal scope_copies
        if self.flags is None:
            return plain_inline_function(self, caller_ir, block, i, function, arg_typs)
        # run_untyped_passes first sets enable_ssa on the caller's own flags: so does a memo hit.
        self.flags.enable_ssa = False
        key = _untyped_ir_key(self, function)
        callee_ir = untyped_ir.get(key) if key is not None else None
        if callee_ir is None:
            callee_ir = self.run_untyped_passes(function)
            if key is not None:
                untyped_ir[key] = callee_ir
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


def _ssa_rewrite_blocks(blocks: dict, labels: list, states: dict, handler: object) -> dict:
    """numba's ``ssa._run_block_rewrite`` over the blocks at ``labels`` only; every other block is kept.

    A block that neither defines nor uses the variable being fixed comes out of numba's
    rewrite with the same statements in a new ``ir.Block``: keeping the block object
    instead is the same IR.  ``labels`` are in the blocks' order, so the rewritten
    blocks see the handler's state (fresh names, the definition map, phi nodes) in the
    order numba would have them.
    """
    from numba.core import ir
    from numba.core.ssa import _run_ssa_block_pass

    newblocks = dict(blocks)  # the same keys in the same order
    for label in labels:
        blk = blocks[label]
        newblk = ir.Block(scope=blk.scope, loc=blk.loc)
        states["label"] = label
        states["block"] = blk
        newbody = []
        for stmt in _run_ssa_block_pass(states, blk, handler):
            assert stmt is not None
            newbody.append(stmt)
        newblk.body = newbody
        newblocks[label] = newblk
    return newblocks


def _reconstruct_ssa_block_by_block() -> None:
    """Let numba's SSA reconstruction rewrite, per variable, only the blocks that mention it.

    For each variable assigned more than once (or used where its one definition does not
    dominate), numba's ``ssa._run_ssa`` rewrites every block of the function twice: once
    to give each assignment a fresh name (``_fresh_vars``), once to point each use at
    its reaching definition (``_fix_ssa_vars``).  The search has thousands of blocks and
    thousands of such variables: 5.6 million statement visits, a fifth of its compile.

    Fixing one variable only renames that variable, and adds phi nodes for it; it never
    adds, removes or moves another variable's mentions.  So the blocks that mention each
    variable are found once, up front, and each variable's two rewrites visit those
    blocks only, in the same order as numba.  Everything else is numba's own code: the
    handlers (``_FreshVarHandler``, ``_FixSSAVars``), the phi locations, the walk for
    the reaching definition up the dominator tree and into predecessors (which reads
    and extends the definition and phi maps of any block, rewritten or not) and the phi
    insertion at the end.  A block that is not visited is one whose every statement
    numba's handlers would return unchanged, without reading or changing any state.

    As numba does, the function gets new ``ir.Block`` objects when there is anything to
    fix (the result shares no block with the blocks passed in) and its own blocks back
    when there is nothing.  Checked on every SSA pass of ``numbat warmup``: run side by
    side on copies, both passes made the same IR and the same new names; numba's pass
    took 11.4 s of the search's compile, this one 1.0 s.
    """
    from numba.core import errors, ssa
    from numba.core.analysis import compute_cfg_from_blocks

    if getattr(ssa, "_numbat_patched", False):
        return
    ssa._numbat_patched = True
    ssa._numbat_plain_run_ssa = ssa._run_ssa  # for tests: the unpatched pass

    def run_ssa(blocks: dict) -> dict:
        if not blocks:
            return {}
        cfg = compute_cfg_from_blocks(blocks)
        df_plus = ssa._iterated_domfronts(cfg)
        violators = ssa._find_defs_violators(blocks, cfg)
        cache_list_vars = ssa._CacheListVars()
        if violators:
            mentioned_in: defaultdict[str, list] = defaultdict(list)  # violator -> labels, in block order
            for label, blk in blocks.items():
                names = {var.name for stmt in blk.body for var in stmt.list_vars()}
                for name in names:
                    if name in violators:
                        mentioned_in[name].append(label)
            # numba's first rewrite replaces every block: so do we, with a copy of each
            blocks = {label: blk.copy() for label, blk in blocks.items()}
        for varname in violators:
            labels = mentioned_in[varname]
            # numba's _fresh_vars
            states = ssa._make_states(blocks)
            states["varname"] = varname
            states["defmap"] = defmap = defaultdict(list)
            blocks = _ssa_rewrite_blocks(blocks, labels, states, ssa._FreshVarHandler())
            # numba's _fix_ssa_vars
            states = ssa._make_states(blocks)
            states["varname"] = varname
            states["defmap"] = defmap
            states["phimap"] = phimap = defaultdict(list)
            states["cfg"] = cfg
            states["phi_locations"] = ssa._compute_phi_locations(df_plus, defmap)
            blocks = _ssa_rewrite_blocks(blocks, labels, states, ssa._FixSSAVars(cache_list_vars))
            for label, philist in phimap.items():
                curblk = blocks[label]
                curblk.body = philist + curblk.body
        if compute_cfg_from_blocks(blocks) != cfg:
            raise errors.CompilerError("CFG mutated in SSA pass")
        return blocks

    ssa._run_ssa = run_ssa


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
            _reconstruct_ssa_block_by_block()
        return loaded

    Cache.load_overload = load_overload  # type: ignore[method-assign]
