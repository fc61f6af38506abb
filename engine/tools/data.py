"""The repository root, where the benchmark and suite commands find their data, and a clear message when it is missing.

The full data set (perft suites, tactics suites, opening books, Syzygy tables) is
not part of the repository: it lives in ``<repo>/../shared/data`` when that folder
exists (see its SOURCES.md).  The tests only use the small copies in
``tests/data`` (listed with their origins in ``tests/data/SOURCES.md``).

* :data:`REPO_ROOT` is the repository root, the one definition every tool
  resolves repository paths from.
* :func:`shared_data_dir` is ``<repo>/../shared/data`` if it exists, else None.
* :func:`default_path` is the tools' default for one kind of data (``"perft"``,
  ``"syzygy"``, ``"openings"``, ``"tactics"``; see :data:`DEFAULTS`), or None
  without the shared folder.
* :func:`require_data` exits with a message naming what is missing, where such
  files come from and which option points elsewhere, instead of a traceback.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository root: the parent of the ``engine`` package."""

SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
"""The full data set, next to the repository (it may not exist)."""

TEST_DATA = REPO_ROOT / "tests" / "data"
"""The small subsets the tests use (always in the repository)."""

ORIGINS = {
    "perft": ("perft suites (EPD ';D1 n ;D2 n' lines or python-chess .perft blocks): the suites listed in "
              "tests/data/SOURCES.md (sunfish perftsuite.epd, Ethereal standard.epd and fischer.epd, "
              "ChrisWhittington/Chess-EPDs, python-chess examples/perft); small copies are in tests/data/perft"),
    "syzygy": ("Syzygy tables (*.rtbw, *.rtbz): https://tablebase.lichess.ovh/tables/standard/ ; "
               "the 3-4-man WDL tables are also in tests/data/syzygy/regular"),
    "openings": ("opening books (EPD or PGN): https://github.com/official-stockfish/books "
                 "(noob_3moves.epd, 8moves_v3.pgn, UHO_4060_v4.epd, ...)"),
    "tactics": ("EPD test suites (bm/am, STS): WAC, ECM and Arasan from https://github.com/jdart1/arasan-chess "
                "(tests/), STS from https://github.com/fsmosca/STS-Rating"),
}
"""Where each kind of data comes from, for the missing-data message."""

DEFAULTS = {
    "perft": SHARED_DATA / "perft",
    "syzygy": SHARED_DATA / "syzygy" / "regular",
    "openings": SHARED_DATA / "openings" / "noob_3moves.epd",
    "tactics": SHARED_DATA / "tactics",
}
"""The tools' default path for each kind of data, inside the shared data folder."""


def shared_data_dir() -> Path | None:
    """``<repo>/../shared/data`` if that folder exists, else None."""
    return SHARED_DATA if SHARED_DATA.is_dir() else None


def default_path(kind: str) -> Path | None:
    """The default path for ``kind`` (a key of :data:`DEFAULTS`), or None without the shared folder."""
    return DEFAULTS[kind] if shared_data_dir() is not None else None


def missing_message(path: str | Path | None, kind: str, option: str, *, default: bool = True) -> str:
    """The text :func:`require_data` prints (``default``: whether the tool has a default path)."""
    if path is None:
        lines = [f"error: no {kind} data: the default {DEFAULTS[kind]} is not there, "
                 f"because {SHARED_DATA} does not exist"]
    else:
        lines = [f"error: not found: {path}"]
    lines.append(f"  needed: {ORIGINS[kind]}")
    hint = f"  use {option} to point elsewhere"
    if default and path is not None and Path(path) != DEFAULTS[kind]:
        hint += f" (default: {DEFAULTS[kind]})"
    lines.append(hint)
    return "\n".join(lines)


def require_data(path: str | Path | None, kind: str, option: str, *, default: bool = True,
                 status: int = 2) -> Path:
    """``path`` as a Path when it exists; otherwise print what is missing and exit with ``status``.

    ``kind`` is a key of :data:`ORIGINS` (``"perft"``, ``"syzygy"``, ``"openings"``,
    ``"tactics"``), ``option`` the command-line option that points elsewhere, and
    ``default`` whether that option defaults to :data:`DEFAULTS` ``[kind]``.
    ``path`` None means the tool had no default because the shared folder is absent.
    """
    if path is not None and Path(path).exists():
        return Path(path)
    print(missing_message(path, kind, option, default=default), file=sys.stderr)
    raise SystemExit(status)
