"""The testers' build (``make EXE=...``, ``engine.tools.build``): one file that runs after its source is gone.

The full rehearsal (``make``, move the file, delete the source, ``./numbat-x bench``
prints the bench signature) compiles every kernel for the unpacked tree, minutes of
work: it is a benchmark command (README, "Developing").  These tests build without the
warm-up and check everything else: the file is standalone, unpacks itself into the
cache folder, and speaks UCI from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from engine.tools.build import build, packed_files, tree_hash

REPO = Path(__file__).resolve().parents[1]


def copy_source(target: Path) -> Path:
    """A copy of the files the build packs, plus the Makefile, as an unpacked source archive would hold."""
    for rel in packed_files(REPO) + [Path("Makefile")]:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target / rel)
    return target


def test_built_file_speaks_uci_after_its_source_is_deleted(tmp_path: Path) -> None:
    source = copy_source(tmp_path / "src")
    cache = tmp_path / "cache"
    env = {**os.environ, "NUMBAT_CACHE_DIR": str(cache)}
    subprocess.run([sys.executable, "-m", "engine.tools.build", "--out", "numbat-x", "--no-warm"], cwd=source,
                   env=env, check=True, capture_output=True, timeout=120)
    engine = tmp_path / "numbat-x"
    shutil.move(source / "numbat-x", engine)
    shutil.rmtree(source)
    assert os.access(engine, os.X_OK)
    assert engine.read_bytes().startswith(b"#!" + sys.executable.encode() + b"\n")
    out = subprocess.run([str(engine)], input="uci\nquit\n", capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120)
    lines = out.stdout.splitlines()
    assert lines[0].startswith("id name Numbat") and "uciok" in lines
    unpacked = [p for p in cache.iterdir() if p.name.startswith("build-")]
    assert len(unpacked) == 1 and (unpacked[0] / ".complete").exists()
    assert (unpacked[0] / "engine" / "search.py").exists() and (unpacked[0] / "books" / "numbat.bin").exists()


def test_the_tree_hash_follows_the_contents(tmp_path: Path) -> None:
    source = copy_source(tmp_path / "src")
    files = packed_files(source)
    assert Path("engine/search.py") in files and Path("books/numbat.bin") in files
    assert not any("__pycache__" in rel.parts for rel in files)
    before = tree_hash(source, files)
    (source / "engine" / "uci.py").write_text((source / "engine" / "uci.py").read_text() + "\n# edited\n")
    assert tree_hash(source, files) != before
    out = tmp_path / "numbat-x"
    digest = build(out, source)
    with zipfile.ZipFile(out) as archive:
        names = set(archive.namelist())
        assert "__main__.py" in names and "engine/cli.py" in names
        assert digest in archive.read("__main__.py").decode()
