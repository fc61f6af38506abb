"""The compiled kernels survive the process: a fresh process loads them all from the disk cache."""

from __future__ import annotations

import ast
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


KERNEL_DECORATORS = {"njit", "hot_njit", "jit", "intrinsic", "overload", "overload_method", "register_jitable",
                     "vectorize", "guvectorize", "cfunc", "jitclass", "generated_jit", "stencil"}


def decorator_names(node: ast.AST) -> set[str]:
    """The names of the decorators of a function or class (``njit`` for ``@njit(inline="always")`` too)."""
    names = set()
    for decorator in getattr(node, "decorator_list", []):
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", ""))
    return names


def test_modules_left_out_of_the_cache_key_define_no_kernels() -> None:
    """What numba compiles must be in the hash: a pure-Python module compiles nothing when
    imported, decorates nothing as a kernel, and calls no numba decorator."""
    import importlib

    import numba

    from engine.jit import PACKAGE_DIR, PYTHON_ONLY_MODULES

    for name in sorted(PYTHON_ONLY_MODULES):
        tree = ast.parse((PACKAGE_DIR / name).read_text())
        for node in ast.walk(tree):
            assert not decorator_names(node) & KERNEL_DECORATORS, f"{name}:{getattr(node, 'lineno', '?')}"
            if isinstance(node, ast.Call):
                called = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                assert called not in KERNEL_DECORATORS, f"{name}:{node.lineno} calls {called}"
        if name == "__main__.py":
            continue  # importing it runs the command line
        module_name = "engine" if name == "__init__.py" else f"engine.{name[:-3]}"
        module = importlib.import_module(module_name)
        for attribute, value in vars(module).items():
            if isinstance(value, numba.core.dispatcher.Dispatcher):
                assert value.py_func.__module__ != module_name, f"{module_name}.{attribute} is a kernel"


def test_kernels_read_no_name_from_modules_left_out_of_the_cache_key() -> None:
    """A kernel freezes the globals it reads into its machine code: a constant it read from a
    module outside the hash would stay stale in the cache after an edit."""
    from engine.jit import PACKAGE_DIR, PYTHON_ONLY_MODULES

    unhashed = {"engine" if name == "__init__.py" else f"engine.{name[:-3]}" for name in PYTHON_ONLY_MODULES}
    for path in sorted(PACKAGE_DIR.glob("*.py")):
        if path.name in PYTHON_ONLY_MODULES:
            continue
        tree = ast.parse(path.read_text())
        imported = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
                    and node.module in unhashed for alias in node.names}
        for function in ast.walk(tree):
            if isinstance(function, ast.FunctionDef) and decorator_names(function) & KERNEL_DECORATORS:
                read = {node.id for node in ast.walk(function) if isinstance(node, ast.Name)}
                assert not read & imported, f"{path.name}: {function.name} reads {read & imported}"


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


def test_inlined_ir_is_shared_only_between_callers_compiled_alike(tmp_path: Path) -> None:
    """The untyped IR of an inlined callee depends on its caller's flags (and locals): the
    patched inliner makes it once per callee and caller state, not once per callee."""
    (tmp_path / "inlining_kernels.py").write_text(textwrap.dedent(
        """
        from numba import njit

        @njit(inline="always")
        def twice(n):
            return 2 * n

        @njit(cache=True)
        def plus_one(n):
            return twice(n) + 1

        @njit(cache=True)
        def plus_two(n):  # compiled as plus_one is: shares twice's IR
            return twice(n) + 2

        @njit(cache=True, _nrt=False)
        def plus_three(n):  # other flags: twice's IR made again
            return twice(n) + 3
        """
    ))
    code = textwrap.dedent(
        """
        import sys
        from numba.core.inline_closurecall import InlineWorker
        counts = [0]
        untyped = InlineWorker.run_untyped_passes
        def counted_untyped(self, *args, **kwargs):
            counts[0] += 1
            return untyped(self, *args, **kwargs)
        InlineWorker.run_untyped_passes = counted_untyped
        if sys.argv[1] == "engine":
            import engine.jit
        import inlining_kernels as k
        print(k.plus_one(5), k.plus_two(5), k.plus_three(5), counts[0])
        """
    )

    def run(which: str) -> list[str]:
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / which), "PYTHONPATH": str(tmp_path)}
        return subprocess.run([sys.executable, "-c", code, which], cwd=REPO, env=env, capture_output=True, text=True,
                              check=True).stdout.split()

    assert run("numba") == ["11", "12", "13", "3"]
    assert run("engine") == ["11", "12", "13", "2"]


def test_ssa_reconstruction_rewrites_only_the_blocks_that_mention_each_variable(tmp_path: Path) -> None:
    """numba's SSA pass rewrites every block once per variable it fixes; the patched pass
    visits only the blocks that mention it, and the IR it makes, the LLVM IR and the
    result are the same as numba's."""
    (tmp_path / "ssa_kernel.py").write_text(textwrap.dedent(
        """
        from numba import njit

        @njit(cache=True)
        def walk(n):
            total = 0
            best = 0
            carry = 1
            for i in range(n):
                step = i % 7
                if step == 0:
                    total += i
                elif step == 1:
                    total -= 3
                    carry = carry * 3 % 101
                elif step == 2:
                    total ^= i
                elif step == 3:
                    best += carry
                else:
                    for j in range(step):
                        if (i + j) % 3 == 0:
                            best += 1
                        else:
                            carry += j
                if total > 100:
                    best = max(best, total)
                    total = 0
            return total * 1000000 + best * 1000 + carry
        """
    ))
    code = textwrap.dedent(
        """
        import copy, contextlib, hashlib, io, sys
        import engine.jit  # before numba: NUMBAT_CACHE_DIR is the cache
        from engine import numba_patches
        from numba.core import compiler, ir, ssa
        numba_patches._reconstruct_ssa_block_by_block()
        plain, patched = ssa._numbat_plain_run_ssa, ssa._run_ssa
        import ssa_kernel

        visits = [0]
        block_pass = ssa._run_ssa_block_pass
        def counted_block_pass(states, blk, handler):
            for stmt in block_pass(states, blk, handler):
                visits[0] += 1
                yield stmt
        ssa._run_ssa_block_pass = counted_block_pass

        def text(blocks):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                for label, block in blocks.items():
                    print(label)
                    block.dump()
            scope = next(iter(blocks.values())).scope
            return out.getvalue(), sorted(scope.localvars._con), dict(scope.redefined)

        # The pass itself, on two copies of one function's IR: the same IR, the same new names.
        blocks = compiler.run_frontend(ssa_kernel.walk.py_func).blocks
        twin = copy.deepcopy(blocks)
        visits[0] = 0
        by_numba = plain(twin)
        numba_visits = visits[0]
        visits[0] = 0
        ours = patched(blocks)
        our_visits = visits[0]
        same_ir = text(by_numba) == text(ours)
        shares_no_block = not any(new is old for new in ours.values() for old in blocks.values())

        # The whole compile, with numba's pass or ours (as the engine compiles: cache miss patches on).
        if sys.argv[1] == "numba":
            ssa._run_ssa = plain
        result = ssa_kernel.walk(500)
        llvm = hashlib.sha256(ssa_kernel.walk.inspect_llvm(ssa_kernel.walk.signatures[0]).encode()).hexdigest()
        print(result, llvm, same_ir, shares_no_block, numba_visits, our_visits)
        """
    )

    def run(which: str) -> list[str]:
        env = {**os.environ, "NUMBAT_CACHE_DIR": str(tmp_path / which), "PYTHONPATH": str(tmp_path)}
        env.pop("NUMBAT_NUMBA_PATCHES", None)
        return subprocess.run([sys.executable, "-c", code, which], cwd=REPO, env=env, capture_output=True, text=True,
                              check=True).stdout.split()

    plain, patched = run("numba"), run("engine")
    assert patched[:2] == plain[:2]  # the same result, the same LLVM IR
    assert patched[2:4] == ["True", "True"]
    numba_visits, our_visits = int(patched[4]), int(patched[5])
    assert 0 < our_visits < numba_visits / 2


def test_numba_patches_apply_only_to_verified_numba_and_can_be_switched_off() -> None:
    from engine.numba_patches import VERIFIED_NUMBA_VERSIONS, decide

    for version in VERIFIED_NUMBA_VERSIONS:
        assert decide(version, None) == (True, None)
        assert decide(version, "1") == (True, None)
        for off in ("0", "false", "OFF", " no "):
            assert decide(version, off) == (False, None)
    apply, warning = decide("0.1.0", None)
    assert not apply and warning is not None and "numba 0.1.0" in warning
    assert decide("0.1.0", "0") == (False, None)  # switched off: no warning either

    code = textwrap.dedent(
        """
        import sys, warnings
        import numba
        from numba.core.caching import Cache
        plain = Cache.load_overload
        if sys.argv[1] != "-":
            numba.__version__ = sys.argv[1]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import engine.jit
            import engine.intrinsics
        from engine import numba_patches
        print(numba_patches.installed(), Cache.load_overload is plain, len(caught))
        """
    )

    def run(version: str, switch: str | None) -> list[str]:
        env = {key: value for key, value in os.environ.items() if key != "NUMBAT_NUMBA_PATCHES"}
        if switch is not None:
            env["NUMBAT_NUMBA_PATCHES"] = switch
        return subprocess.run([sys.executable, "-c", code, version], cwd=REPO, env=env, capture_output=True,
                              text=True, check=True).stdout.split()

    assert run("-", None) == ["True", "False", "0"]
    assert run("0.1.0", None) == ["False", "True", "1"]  # plain numba, one warning
    assert run("-", "0") == ["False", "True", "0"]


def test_engine_compiles_and_runs_without_the_numba_patches(tmp_path: Path) -> None:
    """NUMBAT_NUMBA_PATCHES=0: plain numba compiles the move generator into an empty cache,
    perft counts right, and a second process loads it from that cache."""
    code = textwrap.dedent(
        """
        from engine.board import Board
        from engine.fen import KIWIPETE
        from engine.perft import perft, perft_kernel
        from numba.core import ssa
        from numba.core.caching import Cache
        from numba.core.inline_closurecall import InlineWorker
        from numba.core.typeinfer import TypeInferer
        patched = [f.__module__ for f in (Cache.load_overload, InlineWorker.inline_function, TypeInferer.unify,
                                          ssa._run_ssa) if f.__module__.startswith("engine")]
        counts = perft(Board(), 3), perft(Board(KIWIPETE), 3)
        stats = perft_kernel.stats
        print(*counts, sum(stats.cache_hits.values()), sum(stats.cache_misses.values()), len(patched))
        """
    )
    env = {**os.environ, "NUMBAT_NUMBA_PATCHES": "0", "NUMBAT_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["8902", "97862", "0", "1", "0"], ["8902", "97862", "1", "0", "0"]]
