"""Common test setup: the repository on sys.path, the data directory, small helpers.

The test data lives in the repository, in ``tests/data`` (small copies and subsets
of the full data set; origins and licences in ``tests/data/SOURCES.md``), so the
suite runs on a fresh clone.  Perft files are parsed by ``engine.tools.perft_suite``
(the perft benchmark command parses them the same way).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from engine.tools.positions import random_playout_fens  # noqa: E402,F401  (tests import it from here)

DATA = REPO / "tests" / "data"
PERFT_DIR = DATA / "perft"
SYZYGY_DIR = DATA / "syzygy" / "regular"  # every 3-4-man WDL table; DTZ for the 3-man ones


def snapshot(pos) -> dict[str, np.ndarray]:
    """A copy of every array of a Position, by field name."""
    return {name: getattr(pos, name).copy() for name in pos.dtype.names}


def assert_restored(before: dict[str, np.ndarray], pos, ply: int, context: str = "") -> None:
    """Every array of ``pos`` equals ``before`` except the dead stack slots of one make/unmake.

    Making a move (or a null move) at ``ply`` writes its undo record into
    ``history[ply]`` and the child's key into ``keys[ply + 1]``; unmake leaves both
    behind (they are above the live stack and are overwritten by the next make).
    Everything else, including every other history row and key slot, must be
    restored bit for bit.
    """
    for name, old in before.items():
        new = getattr(pos, name)
        assert new.dtype == old.dtype and new.shape == old.shape, f"pos.{name} changed type/shape {context}"
        if name == "history":
            pairs = [(old[:ply], new[:ply]), (old[ply + 1:], new[ply + 1:])]
        elif name == "keys":
            pairs = [(old[:ply + 1], new[:ply + 1]), (old[ply + 2:], new[ply + 2:])]
        else:
            pairs = [(old, new)]
        for a, b in pairs:
            if a.tobytes() != b.tobytes():  # bit-for-bit, and much faster than array_equal
                diff = np.argwhere(old != new)[:5].tolist()
                raise AssertionError(f"pos.{name} not restored {context}: first differing indices {diff}")


def collect_lines(lines: list[str]):
    """An ``on_info`` callback for ``Searcher.think`` that keeps each report as its UCI ``info`` line."""
    from engine.uci import format_info

    return lambda info: lines.append(format_info(info))
