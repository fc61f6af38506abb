"""Build one self-contained engine file, the way OpenBench and other testers build engines.

    python -m engine.tools.build --out numbat-x [--no-warm]      (what ``make EXE=numbat-x`` runs)

The file is a Python zip application (PEP 441): a ``#!`` line naming the interpreter
that built it (which has numpy, numba and python-chess), then a zip holding the
``engine`` package, ``books/numbat.bin`` and a small launcher, ``__main__.py``.

Numba caches machine code beside real source files only, never inside a zip.  So the
launcher unpacks the zip's sources once into ``<cache>/build-<hash>/`` (``<cache>`` is
the engine's own cache folder: ``$NUMBAT_CACHE_DIR``, else ``$XDG_CACHE_HOME/numbat``,
else ``~/.cache/numbat``; ``<hash>`` is a hash of every packed file), and runs the
engine from there.  Unpacking goes to a temporary folder renamed into place, so engines
started side by side never see half a tree.  The build then runs the file's
``warmup``, which compiles every kernel into the cache for that unpacked tree: the
source folder the file was built in may be deleted afterwards, as OpenBench does.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

from engine.tools.data import REPO_ROOT

LAUNCHER = '''\
"""Numbat launcher: unpack the engine beside its numba cache once, then run it."""
import os
import sys
import zipfile
from pathlib import Path

SOURCE_HASH = "{source_hash}"


def cache_root():
    explicit = os.environ.get("NUMBAT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "numbat"


def unpacked_tree():
    target = cache_root() / ("build-" + SOURCE_HASH)
    if not (target / ".complete").exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(target.name + ".%d.tmp" % os.getpid())
        with zipfile.ZipFile(os.path.dirname(os.path.abspath(__file__))) as archive:
            members = [name for name in archive.namelist() if name != "__main__.py"]
            archive.extractall(staging, members)
        (staging / ".complete").write_text(SOURCE_HASH)
        try:
            os.replace(staging, target)
        except OSError:  # another engine unpacked the same tree first
            import shutil
            shutil.rmtree(staging, ignore_errors=True)
    return target


sys.path.insert(0, str(unpacked_tree()))
from engine.cli import main  # noqa: E402

sys.exit(main())
'''


def packed_files(root: Path = REPO_ROOT) -> list[Path]:
    """Every file the engine needs at run time, relative to ``root``, in a fixed order: the
    engine package's own modules and weights (not its developer tools), and the book."""
    files = [path.relative_to(root) for path in (root / "engine").glob("*")
             if path.is_file() and path.suffix in (".py", ".txt")]
    files.append(Path("books") / "numbat.bin")
    return sorted(files)


def tree_hash(root: Path, files: list[Path]) -> str:
    """Short hash of the packed files' names and contents."""
    digest = hashlib.sha256()
    for rel in files:
        digest.update(rel.as_posix().encode() + b"\0")
        digest.update((root / rel).read_bytes())
    return digest.hexdigest()[:16]


def build(out: Path, root: Path = REPO_ROOT, interpreter: str = sys.executable) -> str:
    """Write the engine file ``out``; return the hash of the tree it carries."""
    files = packed_files(root)
    source_hash = tree_hash(root, files)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("__main__.py", LAUNCHER.format(source_hash=source_hash))
        for rel in files:
            archive.write(root / rel, rel.as_posix())
    staging = out.with_name(out.name + ".tmp")
    staging.write_bytes(b"#!" + interpreter.encode() + b"\n" + buffer.getvalue())
    staging.chmod(staging.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    os.replace(staging, out)
    return source_hash


def main(argv: list[str] | None = None) -> int:
    """Build the file, then warm its numba cache unless told not to."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("numbat"), help="engine file to write (default: numbat)")
    parser.add_argument("--no-warm", action="store_true", help="skip compiling the kernels into the cache")
    args = parser.parse_args(argv)
    missing = [name for name in ("numpy", "numba", "chess") if _cannot_import(name)]
    if missing:
        print(f"{sys.executable} lacks {', '.join(missing)}: run `{sys.executable} -m pip install "
              f"numpy numba==0.68.1 chess tqdm` first", file=sys.stderr)
        return 2
    source_hash = build(args.out)
    print(f"wrote {args.out} (source {source_hash})")
    if not args.no_warm:
        return subprocess.run([str(args.out.resolve()), "warmup"], check=False).returncode
    return 0


def _cannot_import(module: str) -> bool:
    """True if ``module`` is not importable by this interpreter."""
    import importlib.util

    return importlib.util.find_spec(module) is None


if __name__ == "__main__":
    sys.exit(main())
