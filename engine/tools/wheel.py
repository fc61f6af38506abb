"""Build the wheel users install: the engine with every kernel already compiled.

    python -m engine.tools.wheel [--outdir dist]        (what ``make wheel`` runs)

1. ``numbat warmup`` runs in a fresh process whose cache is an empty temporary folder,
   compiling every kernel for the portable CPU level (``engine.jit.PORTABLE_CPU``); the
   machine that builds must have that level, since the warm-up runs what it compiles.
2. That cache is copied into ``engine/kernels/`` (cleared first; git ignores it), where
   ``engine.jit`` looks for it on a user's first start.
3. ``python -m build --wheel`` packs the package with it.  The wheel is tagged for this
   Python and for Linux x86-64: numba files compiled code per Python version, and the
   code is x86-64 machine code.

The wheel holds no path of the machine that built it: the cache files its kernels under
their place in the package (``engine.jit.PackageCacheLocator``), and its folder is named
by a hash of the sources and the CPU level, which an installed copy computes alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from engine.tools.data import REPO_ROOT

KERNELS = REPO_ROOT / "engine" / "kernels"


def compile_portable_kernels(cache_root: Path) -> Path:
    """Compile every kernel for the portable level into a fresh cache under ``cache_root``; return its folder."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("NUMBA_")}
    env.update(NUMBAT_CACHE_DIR=str(cache_root), NUMBAT_CPU="")
    probe = ("import engine.jit as j, sys; "
             "sys.exit(0 if j.KERNEL_CPU == j.PORTABLE_CPU and j.kernels_compiled() else 3)")
    subprocess.run([sys.executable, "-m", "engine.cli", "warmup"], cwd=REPO_ROOT, env=env, check=True)
    if subprocess.run([sys.executable, "-c", probe], cwd=REPO_ROOT, env=env, check=False).returncode != 0:
        raise SystemExit("this machine lacks the portable CPU level (x86-64-v3): it cannot build the kernels")
    folders = [path for path in cache_root.iterdir() if path.is_dir() and path.name.startswith("numba-")]
    assert len(folders) == 1, folders
    return folders[0]


def wheel_tags() -> list[str]:
    """``bdist_wheel`` options: this CPython version, no ABI, this Linux platform."""
    python_tag = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform_tag = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return [f"--python-tag={python_tag}", f"--plat-name={platform_tag}"]


def build_wheel(outdir: Path) -> Path:
    """Compile, stage and pack; return the wheel written."""
    if sys.platform != "linux" or sysconfig.get_platform() != "linux-x86_64":
        raise SystemExit("the wheel with compiled kernels is built on Linux x86-64 only")
    shutil.rmtree(KERNELS, ignore_errors=True)  # compiled afresh, never copied from an earlier build
    with tempfile.TemporaryDirectory(prefix="numbat-wheel-") as scratch:
        cache = compile_portable_kernels(Path(scratch))
        shutil.copytree(cache, KERNELS / cache.name)
    shutil.rmtree(REPO_ROOT / "build", ignore_errors=True)  # setuptools reuses what it finds there
    before = set(outdir.glob("*.whl")) if outdir.exists() else set()
    command = [sys.executable, "-m", "build", "--wheel", "--outdir", str(outdir)]
    command += [f"-C--build-option={option}" for option in wheel_tags()]
    subprocess.run(command, cwd=REPO_ROOT, check=True)
    written = sorted(set(outdir.glob("*.whl")) - before) or sorted(outdir.glob("numbat-*.whl"))
    return written[-1]


def main(argv: list[str] | None = None) -> int:
    """Build the wheel and print its path."""
    parser = argparse.ArgumentParser(prog="python -m engine.tools.wheel", description=__doc__.split("\n\n")[0])
    parser.add_argument("--outdir", type=Path, default=REPO_ROOT / "dist", help="folder for the wheel (default: dist)")
    args = parser.parse_args(argv)
    print(build_wheel(args.outdir.resolve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
