"""The repository speaks of the product: no internal numbering of work periods in its text.

A phrase like "session" or "issue" followed by a number means nothing to a reader; a date,
a commit or a version does.  This test greps every tracked text file for such phrases (its
own examples build the phrases from pieces, so that this file passes too).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NUMBERING = re.compile(r"\b(sessions?|issues?)\s+#?[0-9]+", re.IGNORECASE)
# Used only where git is missing (a source tree without its history): what a checkout
# ignores or builds, never tracked text.
UNTRACKED_DIRS = {".git", "build", "dist", "__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache",
                  ".venv", "venv", ".tox", ".eggs"}


def tracked_files(root: Path) -> list[Path]:
    """The files git tracks under ``root``, or, without git, every file outside build and cache folders."""
    if shutil.which("git") is not None and (root / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True)
        if listed.returncode == 0:  # else (say, git refusing a checkout owned by another user) the walk below
            return [root / name for name in listed.stdout.decode().split("\0") if name]
    return [path for path in sorted(root.rglob("*"))
            if path.is_file() and not UNTRACKED_DIRS.intersection(path.relative_to(root).parts[:-1])
            and not path.relative_to(root).parts[0].endswith(".egg-info")]


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file (a NUL byte, or not UTF-8)."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def numbering_in(paths: list[Path], root: Path) -> list[str]:
    """``file:line: text`` of every line that names a numbered session or issue."""
    found = []
    for path in paths:
        text = text_of(path) if path.is_file() else None  # a tracked file deleted in the work tree is skipped
        for number, line in enumerate((text or "").splitlines(), 1):
            if NUMBERING.search(line):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()[:160]}")
    return found


def test_the_pattern_finds_numbering_and_spares_other_numbers(tmp_path: Path) -> None:
    notes = f"Fixed in Session {75}.\nsee issue #{59}\nissues {3} and 4\nok: issued 5 times\n"
    (tmp_path / "notes.md").write_text(notes)
    (tmp_path / "code.py").write_text("x = 1  # https://github.com/numba/numba/issues/6061\nSESSIONS = 3\n")
    (tmp_path / "blob.bin").write_bytes(b"session " + b"1\0\xff")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "cached.txt").write_text(f"session {2}\n")
    found = numbering_in(tracked_files(tmp_path), tmp_path)  # no .git here: the walk over the files
    assert found == [f"notes.md:1: Fixed in Session {75}.", f"notes.md:2: see issue #{59}",
                     f"notes.md:3: issues {3} and 4"]


def test_no_tracked_file_names_a_numbered_session_or_issue() -> None:
    files = tracked_files(REPO)
    assert any(path.name == "search.py" for path in files)  # the listing found the sources
    found = numbering_in(files, REPO)
    assert not found, "internal numbering (name a date, a commit or a version instead):\n" + "\n".join(found)
