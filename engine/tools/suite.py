"""EPD test suites: best-move (``bm``), avoid-move (``am``) and STS point scoring.

This module owns reading test-suite EPD files, asking an engine for its move in
each position (through :func:`engine.tools.engines.play_move`) and scoring the
answers.

* ``bm`` / ``am`` (WAC, ECM, Arasan, ...): a position is solved when the
  engine's move is one of the ``bm`` moves (if any are given) and none of the
  ``am`` moves.  python-chess's ``Board.from_epd`` parses both (SAN).
* STS point scoring (Strategic Test Suite): the move earns the points listed for
  it, 0 if unlisted; the best move earns 10.  The points come from ``c8`` (points)
  and ``c9`` (the same moves in UCI) when both are present and agree, else from
  ``c0`` written as ``"f5=10, Be5+=2, Bf2=3"`` (SAN).  A ``c0`` that is not such a
  list (Arasan and WAC use it for free text) is ignored.

Every position is searched as a new game (``ucinewgame``), with a fixed
``movetime``, ``depth`` or ``nodes``.  The engine is restarted if it crashes or
hangs; that position counts as failed.

Command line::

    python -m engine.tools.suite ../shared/data/tactics/wac_revised_arasan.epd --movetime 0.5
    python -m engine.tools.suite ../shared/data/tactics/sts1-15_v4_sf15_points.epd --depth 8 --limit 100
    python -m engine.tools.suite FILE.epd --movetime 1 --engine "/usr/games/stockfish"

The default engine is Numbat (:data:`engine.tools.engines.NUMBAT_COMMAND`,
``sys.executable run_engine.py`` from the repository root).  API:
:func:`load_suite` and :func:`run_suite`; :func:`format_summary` renders the
results.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chess
import chess.engine

from engine.tools.data import require_data
from engine.tools.engines import (
    NUMBAT_COMMAND,
    EngineConfig,
    EngineProcess,
    MatchError,
    play_move,
    quiet_engine_log,
    score_text,
)
from engine.tools.match import parse_key_values
from engine.tools.progress import ProgressBar

HANG_GRACE = 10.0
"""Seconds past the movetime (or :data:`HANG_TIMEOUT` under depth/nodes) before a silent engine is killed."""

HANG_TIMEOUT = 600.0
"""Seconds a depth- or node-limited search may take before the engine is killed as hung."""

FAILURE_TEXT = {"killed": "timeout (killed)", "timeout": "timeout", "crash": "crash", "error": "error: "}
"""How a failed answer (:data:`engine.tools.engines.FAILURES`) is reported; ``"error: "`` is followed by the message."""

_POINTS_ITEM = re.compile(r"^\s*(\S+?)\s*=\s*(\d+)\s*$")


# ---------------------------------------------------------------------------
# Reading suites
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SuitePosition:
    """One test position and what counts as a right answer."""

    id: str
    fen: str
    best: tuple[chess.Move, ...] = ()
    """``bm`` moves: one of them must be played (when any are given)."""
    avoid: tuple[chess.Move, ...] = ()
    """``am`` moves: none of them may be played."""
    points: dict[chess.Move, int] = field(default_factory=dict)
    """STS points per move (empty for plain bm/am suites)."""

    @property
    def max_points(self) -> int:
        """Points of the best answer (0 without STS points)."""
        return max(self.points.values(), default=0)

    def board(self) -> chess.Board:
        """A fresh board of the position."""
        return chess.Board(self.fen)

    def expected_text(self) -> str:
        """What a right answer is, in SAN, e.g. ``bm Qg6``, ``am Nxg3`` or ``f5=10 Be5+=2``."""
        board = self.board()
        if self.points:
            ranked = sorted(self.points.items(), key=lambda kv: -kv[1])
            return " ".join(f"{board.san(m)}={p}" for m, p in ranked)
        parts = []
        if self.best:
            parts.append("bm " + " ".join(board.san(m) for m in self.best))
        if self.avoid:
            parts.append("am " + " ".join(board.san(m) for m in self.avoid))
        return "; ".join(parts)

    def judge(self, move: chess.Move | None) -> tuple[bool, int]:
        """``(solved, points)`` for the engine's move; STS counts a solve when the move earns full points."""
        if move is None:
            return False, 0
        if self.points:
            earned = self.points.get(move, 0)
            return earned == self.max_points, earned
        solved = (not self.best or move in self.best) and move not in self.avoid
        return solved, 0


def parse_points(board: chess.Board, ops: dict[str, Any]) -> dict[chess.Move, int]:
    """STS points from ``c8``/``c9`` (points / UCI moves) or from ``c0`` (``"SAN=points, ..."``); {} if none."""
    c8, c9 = ops.get("c8"), ops.get("c9")
    if isinstance(c8, str) and isinstance(c9, str):
        values, moves = c8.split(), c9.split()
        if len(values) == len(moves) and values:
            try:
                return {board.parse_uci(m): int(v) for m, v in zip(moves, values, strict=True)}
            except ValueError:
                pass
    c0 = ops.get("c0")
    if isinstance(c0, str) and "=" in c0:
        points: dict[chess.Move, int] = {}
        for item in c0.split(","):
            match = _POINTS_ITEM.match(item)
            if match is None:
                return {}
            try:
                points[board.parse_san(match.group(1))] = int(match.group(2))
            except ValueError:
                return {}
        return points
    return {}


def _moves_op(value: Any) -> tuple[chess.Move, ...]:
    """A ``bm``/``am`` operand as python-chess parsed it (a list of moves), as a tuple."""
    if isinstance(value, list):
        return tuple(m for m in value if isinstance(m, chess.Move))
    return ()


def load_suite(path: str | Path, limit: int | None = None) -> list[SuitePosition]:
    """The positions of an EPD suite (at most ``limit``); :class:`ValueError` names a bad line."""
    positions: list[SuitePosition] = []
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        for number, line in enumerate(handle, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                board, ops = chess.Board.from_epd(text)
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}") from exc
            ident = ops.get("id")
            positions.append(SuitePosition(
                id=ident if isinstance(ident, str) else f"{Path(path).stem}.{number}",
                fen=board.fen(),
                best=_moves_op(ops.get("bm")),
                avoid=_moves_op(ops.get("am")),
                points=parse_points(board, ops),
            ))
            if limit is not None and len(positions) >= limit:
                break
    return positions


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


@dataclass
class PositionResult:
    """The engine's answer to one position."""

    id: str
    expected: str
    got: str
    """The move in SAN, or what went wrong (``"crash"``, ``"timeout"``, ``"error: ..."``)."""
    solved: bool
    points: int
    max_points: int
    depth: int | None = None
    score: str = ""
    seconds: float = 0.0


@dataclass
class SuiteResult:
    """All answers for one suite file."""

    name: str
    path: str
    results: list[PositionResult] = field(default_factory=list)

    @property
    def total(self) -> int:
        """Positions run."""
        return len(self.results)

    @property
    def solved(self) -> int:
        """Positions solved (for STS: answered with the full-points move)."""
        return sum(r.solved for r in self.results)

    @property
    def points(self) -> int:
        """STS points earned."""
        return sum(r.points for r in self.results)

    @property
    def max_points(self) -> int:
        """STS points available."""
        return sum(r.max_points for r in self.results)

    @property
    def is_sts(self) -> bool:
        """Whether the suite carries STS points."""
        return self.max_points > 0

    def failures(self) -> list[PositionResult]:
        """Positions not solved, in file order."""
        return [r for r in self.results if not r.solved]

    def groups(self) -> dict[str, list[PositionResult]]:
        """Results grouped by id prefix (``"STS(v1.0) Undermine.001"`` -> ``"STS(v1.0) Undermine"``)."""
        grouped: dict[str, list[PositionResult]] = {}
        for r in self.results:
            grouped.setdefault(r.id.rsplit(".", 1)[0], []).append(r)
        return grouped


def solve_position(process: EngineProcess, position: SuitePosition, limit: chess.engine.Limit,
                   hang_timeout: float = HANG_TIMEOUT) -> PositionResult:
    """Ask the engine for its move in ``position`` and judge it; a crash or hang restarts the engine.

    The engine is killed as hung after ``movetime + HANG_GRACE`` seconds, or
    ``hang_timeout`` seconds when the limit has no time.
    """
    board = position.board()
    deadline = (limit.time + HANG_GRACE) if limit.time is not None else hang_timeout
    attempt = play_move(process, board, limit, deadline, game=object())  # a new game: ucinewgame
    move = attempt.play.move if attempt.play is not None else None
    info: chess.engine.InfoDict = attempt.play.info if attempt.play is not None else {}
    if attempt.failure is not None:
        got = FAILURE_TEXT[attempt.failure] + attempt.message
        process.discard()
    elif move is None:
        got = "no move"
    else:
        got = board.san(move)
    solved, points = position.judge(move)
    return PositionResult(position.id, position.expected_text(), got, solved, points, position.max_points,
                          info.get("depth"), score_text(info.get("score"), board.turn), attempt.elapsed)


def run_suite(paths: Sequence[str | Path], engine: EngineConfig | None = None, *, movetime: float | None = None,
              depth: int | None = None, nodes: int | None = None, limit: int | None = None,
              progress: bool = True, start_timeout: float = 60.0,
              hang_timeout: float = HANG_TIMEOUT) -> list[SuiteResult]:
    """Run every suite in ``paths`` with one engine (default: Numbat) and return one result per file.

    Give at least one of ``movetime`` (seconds), ``depth`` or ``nodes``.
    ``limit`` keeps the first N positions of each file; ``start_timeout`` and
    ``hang_timeout`` bound the engine's start-up and a depth/node-limited search.  Raises
    :class:`~engine.tools.engines.MatchError` when the engine does not start.
    """
    if movetime is None and depth is None and nodes is None:
        raise ValueError("give movetime, depth or nodes")
    config = engine or EngineConfig(cmd=list(NUMBAT_COMMAND), name="numbat")
    search_limit = chess.engine.Limit(time=movetime, depth=depth, nodes=nodes)
    suites = [(Path(p), load_suite(p, limit)) for p in paths]
    bar = ProgressBar(sum(len(positions) for _, positions in suites), "pos", progress)
    process = EngineProcess(config, start_timeout)
    results: list[SuiteResult] = []
    try:
        for path, positions in suites:
            suite = SuiteResult(path.stem, str(path))
            results.append(suite)
            for position in positions:
                suite.results.append(solve_position(process, position, search_limit, hang_timeout))
                text = f"{suite.name} {suite.solved}/{suite.total}"
                if suite.is_sts:
                    text += f" {suite.points}/{suite.max_points} pts"
                bar.update(text)
    finally:
        bar.close()
        process.quit()
    return results


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def format_summary(results: Sequence[SuiteResult], max_failures: int | None = 50, by_group: bool = True) -> str:
    """Summary table per suite (and per STS theme), then the failures (id, expected, got)."""
    lines = [f"{'suite':<36}{'solved':>12}{'%':>7}{'points':>14}{'%':>7}{'time':>9}"]

    def row(name: str, rs: Sequence[PositionResult]) -> str:
        solved = sum(r.solved for r in rs)
        pts, best = sum(r.points for r in rs), sum(r.max_points for r in rs)
        secs = sum(r.seconds for r in rs)
        pct = 100.0 * solved / len(rs) if rs else 0.0
        points = f"{pts}/{best}" if best else "-"
        ppct = f"{100.0 * pts / best:.1f}" if best else "-"
        return f"{name[:35]:<36}{f'{solved}/{len(rs)}':>12}{pct:>7.1f}{points:>14}{ppct:>7}{secs:>8.1f}s"

    for suite in results:
        lines.append(row(suite.name, suite.results))
        groups = suite.groups()
        if by_group and suite.is_sts and len(groups) > 1:
            for name, rs in groups.items():
                lines.append(row("  " + name, rs))
    for suite in results:
        failures = suite.failures()
        if not failures:
            continue
        lines.append("")
        shown = failures if max_failures is None else failures[:max_failures]
        lines.append(f"failures in {suite.name} ({len(failures)}):")
        for r in shown:
            extra = f" ({r.points}/{r.max_points} pts)" if r.max_points else ""
            info = f" [{r.score}/{r.depth}]" if r.depth is not None else ""
            lines.append(f"  {r.id}: expected {r.expected}; got {r.got}{extra}{info}")
        if len(shown) < len(failures):
            lines.append(f"  ... and {len(failures) - len(shown)} more")
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run suites from the command line; exit status 0, or 2 when the engine or a file fails."""
    ap = argparse.ArgumentParser(prog="python -m engine.tools.suite",
                                 description="Run EPD test suites (bm/am, STS points) against an engine.")
    ap.add_argument("files", nargs="+", help="EPD files")
    ap.add_argument("--movetime", type=float, help="seconds per position")
    ap.add_argument("--depth", type=int, help="depth per position")
    ap.add_argument("--nodes", type=int, help="nodes per position")
    ap.add_argument("--engine", help="engine command line (default: Numbat, sys.executable run_engine.py)")
    ap.add_argument("--proto", choices=("uci", "xboard"), default="uci", help="engine protocol")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="engine option")
    ap.add_argument("--limit", type=int, help="first N positions of each file")
    ap.add_argument("--failures", type=int, default=50, help="failures listed per suite (default 50; -1: all)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if args.movetime is None and args.depth is None and args.nodes is None:
        ap.error("give --movetime, --depth or --nodes")
    for path in args.files:
        require_data(path, "tactics", "the FILE arguments (e.g. ../shared/data/tactics/wac_revised_arasan.epd)",
                     default=False)
    quiet_engine_log()
    try:
        options = parse_key_values(args.option, "--option")
        engine = None
        if args.engine:
            cmd = shlex.split(args.engine)
            engine = EngineConfig(cmd=cmd, proto=args.proto, options=options)
        elif options:
            engine = EngineConfig(cmd=list(NUMBAT_COMMAND), name="numbat", options=options)
        results = run_suite(args.files, engine, movetime=args.movetime, depth=args.depth, nodes=args.nodes,
                            limit=args.limit, progress=not args.no_progress)
    except (ValueError, OSError, MatchError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_summary(results, None if args.failures < 0 else args.failures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
