"""Perft suites: parse every perft file format we ship, and a full-depth benchmark.

The full suites live in ``../shared/data/perft`` next to the repository (the
default ``--data-dir`` when that folder exists); ``tests/data/perft`` holds the
small copies the tests use, ``--data-dir tests/data/perft`` runs those.  Two
formats occur:

* EPD lines: a FEN (4 or 6 fields, spacing may vary) followed by ``;``-separated
  ``D<depth> <count>`` records, e.g. ``<fen> ;D1 20 ;D2 400`` or ``<fen>; D4 23441``.
* python-chess ``.perft`` blocks: ``id <name>``, ``epd <fen>``, then one
  ``perft <depth> <count>`` line per depth; ``#`` starts a comment.

Chess960: ``ethereal_fischer960.epd`` uses Shredder-FEN castling letters and is
loaded with ``chess960=True``; ``.perft`` files are too, as python-chess's own
perft runner does (its X-FEN cases put the king on c1).  The flag only changes how
castling is written in UCI, never the move counts.

Command line (runs every listed depth of every position, shallow to deep)::

    python -m engine.tools.perft_suite                       # everything, full depth
    python -m engine.tools.perft_suite --max-nodes 1000000   # skip counts above 1e6
    python -m engine.tools.perft_suite --files perftsuite.epd cpw_perft_results.epd

It prints progress (a tqdm bar on a terminal when tqdm is installed, else plain
lines, e.g. when logging to a file), one summary per file
(positions, depths checked, mismatches, nodes, nps) and exits with status 1 when
any count differs.  Files run cheapest first: at full depth the whole set is tens
of hours, and the deepest CPW counts (startpos D9, position 6 D9) are beyond reach
of any single machine, so use ``--max-nodes`` for a bounded run.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from engine.tools.data import default_path, require_data
from engine.tools.progress import stop_on_sigterm

DATA_DIR = default_path("perft")
"""``../shared/data/perft``, or None when the shared data folder is absent."""

# Cheapest first, so a long full-depth run finishes as many files as possible.
DEFAULT_FILES = (
    "ferdy_double_checks_perft.epd",
    "python-chess_tricky.perft",
    "perftsuite.epd",
    "ethereal_standard.epd",
    "whittington_special_moves_perft.epd",
    "ferdy_enpassant_perft.epd",
    "ethereal_fischer960.epd",
    "marcel_van_kervinck_perft.epd",
    "cpw_perft_results.epd",
)

_DEPTH_RECORD = re.compile(r"^D(\d+)\s+(\d+)$")


@dataclass(frozen=True)
class PerftCase:
    """One position of a perft file with its expected counts."""

    source: str  # file name
    line: int  # 1-based line of the FEN (the ``epd`` line in .perft files)
    fen: str  # whitespace-normalised
    counts: tuple[tuple[int, int], ...]  # (depth, nodes), ascending depth
    chess960: bool = False
    name: str = ""  # ``id`` of .perft blocks

    @property
    def label(self) -> str:
        """Short identification for messages: ``file:line [id]``."""
        tag = f"{self.source}:{self.line}"
        return f"{tag} [{self.name}]" if self.name else tag

    @property
    def max_depth(self) -> int:
        return self.counts[-1][0]


class PerftFormatError(ValueError):
    """A line of a perft file that cannot be parsed."""


def _normalise_fen(fen: str) -> str:
    return " ".join(fen.split())


def _sorted_counts(source: str, line: int, pairs: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    depths = [d for d, _ in pairs]
    if len(set(depths)) != len(depths):
        raise PerftFormatError(f"{source}:{line}: depth listed twice")
    if any(d < 1 for d in depths):
        raise PerftFormatError(f"{source}:{line}: depth must be at least 1")
    return tuple(sorted(pairs))


def parse_epd_line(text: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """(fen, ((depth, count), ...)) of one EPD perft line, counts by ascending depth.

    Accepts ``;D1 20 ;D2 400`` and ``; D1 20; D2 400`` with any spacing.
    """
    fen, *records = text.split(";")
    fen = _normalise_fen(fen)
    if not fen:
        raise PerftFormatError(f"no FEN in {text!r}")
    pairs = []
    for record in records:
        record = " ".join(record.split())
        if not record:
            continue
        match = _DEPTH_RECORD.match(record)
        if not match:
            raise PerftFormatError(f"bad depth record {record!r} in {text!r}")
        pairs.append((int(match.group(1)), int(match.group(2))))
    if not pairs:
        raise PerftFormatError(f"no depth records in {text!r}")
    return fen, _sorted_counts("<line>", 0, pairs)


def parse_epd_text(text: str, source: str = "<text>", chess960: bool = False) -> list[PerftCase]:
    """Every case of an EPD perft file (blank lines and ``#`` comments skipped)."""
    cases = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.replace("\0", "").strip()
        if not line or line.startswith("#"):
            continue
        try:
            fen, counts = parse_epd_line(line)
        except PerftFormatError as exc:
            raise PerftFormatError(f"{source}:{number}: {exc}") from None
        cases.append(PerftCase(source, number, fen, counts, chess960))
    return cases


def parse_perft_text(text: str, source: str = "<text>", chess960: bool = True) -> list[PerftCase]:
    """Every case of a python-chess ``.perft`` file (``id`` / ``epd`` / ``perft`` blocks)."""
    cases: list[PerftCase] = []
    pairs: list[tuple[int, int]] = []
    name: str = ""
    fen: str | None = None
    fen_line = 0

    def flush() -> None:
        if fen is None:
            return
        if not pairs:
            raise PerftFormatError(f"{source}:{fen_line}: epd without perft lines")
        cases.append(PerftCase(source, fen_line, fen, _sorted_counts(source, fen_line, pairs), chess960, name))

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#") or line.startswith("%"):
            continue
        command, _, arg = line.partition(" ")
        arg = arg.strip()
        if command == "id":
            flush()
            name, fen, pairs = arg, None, []
        elif command == "epd":
            if fen is not None:  # a new position without a new id
                flush()
                name, pairs = "", []
            fen, fen_line = _normalise_fen(arg), number
        elif command == "perft":
            if fen is None:
                raise PerftFormatError(f"{source}:{number}: perft line before any epd line")
            parts = arg.split()
            if len(parts) != 2 or not all(p.isdigit() for p in parts):
                raise PerftFormatError(f"{source}:{number}: bad perft line {line!r}")
            pairs.append((int(parts[0]), int(parts[1])))
        else:
            raise PerftFormatError(f"{source}:{number}: unknown command {command!r}")
    flush()
    return cases


def is_chess960_file(path: Path | str) -> bool:
    """Whether a perft file is loaded in Chess960 mode (see the module docstring)."""
    name = Path(path).name.lower()
    return "960" in name or "fischer" in name or name.endswith(".perft")


def resolve(name: str | Path, data_dir: Path | None = DATA_DIR) -> Path:
    """A perft file named by path, or by file name inside ``data_dir`` (when there is one)."""
    path = Path(name)
    if path.exists() or data_dir is None:
        return path
    return data_dir / path


def load_file(name: str | Path, chess960: bool | None = None,
              data_dir: Path | None = DATA_DIR) -> list[PerftCase]:
    """Cases of a perft file in either format; ``chess960`` defaults by file name."""
    path = resolve(name, data_dir)
    if chess960 is None:
        chess960 = is_chess960_file(path)
    text = path.read_text()
    if path.suffix == ".perft":
        return parse_perft_text(text, path.name, chess960)
    return parse_epd_text(text, path.name, chess960)


def sample_cases(cases: list[PerftCase], size: int, seed: int) -> list[PerftCase]:
    """A seeded random sample of ``size`` cases, kept in file order."""
    if size >= len(cases):
        return list(cases)
    picks = sorted(random.Random(seed).sample(range(len(cases)), size))
    return [cases[i] for i in picks]


def deepest_under(case: PerftCase, cap: int) -> tuple[int, int]:
    """(depth, count) of the deepest listed depth with count <= cap.

    When every listed count is above the cap, the shallowest listed depth: each
    position is checked at least once.
    """
    fitting = [pair for pair in case.counts if pair[1] <= cap]
    return fitting[-1] if fitting else case.counts[0]


def run_perft(case: PerftCase, depth: int) -> int:
    """Our perft count for ``case`` at ``depth`` (a fresh Board each time)."""
    from engine.board import Board
    from engine.perft import perft

    return perft(Board(case.fen, chess960=case.chess960), depth)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

@dataclass
class FileResult:
    name: str
    positions: int = 0
    skipped: int = 0
    checks: int = 0
    mismatches: int = 0
    errors: int = 0
    nodes: int = 0
    seconds: float = 0.0
    complete: bool = False

    def summary(self) -> str:
        nps = self.nodes / self.seconds if self.seconds > 0 else 0.0
        text = (f"{self.name}: positions {self.positions}, depths checked {self.checks}, "
                f"mismatches {self.mismatches}, errors {self.errors}, nodes {self.nodes:,}, "
                f"time {self.seconds:.1f} s, nps {nps:,.0f}")
        if self.skipped:
            text += f", positions skipped (over --max-nodes) {self.skipped}"
        if not self.complete:
            text += "  [INTERRUPTED]"
        return text


def _progress(total: int, desc: str):
    """A tqdm bar on a terminal when tqdm is installed; None means plain log lines."""
    if not sys.stdout.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit="pos", file=sys.stdout, dynamic_ncols=True)


def run_file(path: Path, args: argparse.Namespace, log) -> FileResult:
    cases = load_file(path)
    if args.sample:
        cases = sample_cases(cases, args.sample, args.seed)
    result = FileResult(path.name)
    plan = []
    for case in cases:
        checks = [(d, n) for d, n in case.counts
                  if (args.max_nodes is None or n <= args.max_nodes)
                  and (args.max_depth is None or d <= args.max_depth)]
        if checks:
            plan.append((case, checks))
        else:
            result.skipped += 1
    expected_total = sum(n for _, checks in plan for _, n in checks)
    log(f"### {path.name}: {len(plan)} positions, {sum(len(c) for _, c in plan)} depths, "
        f"{expected_total:,} nodes expected")
    bar = _progress(len(plan), path.name)
    last_report = time.perf_counter()
    started = last_report
    try:
        for index, (case, checks) in enumerate(plan, 1):
            for depth, expected in checks:
                if expected >= args.announce:
                    log(f"  {case.label} D{depth}: {expected:,} nodes expected ...")
                t0 = time.perf_counter()
                try:
                    got = run_perft(case, depth)
                except Exception as exc:  # a FEN we reject is a failure, not a crash
                    result.errors += 1
                    log(f"  ERROR {case.label}: {case.fen!r} (chess960={case.chess960}): {exc!r}")
                    break
                dt = time.perf_counter() - t0
                result.seconds += dt
                result.nodes += got
                result.checks += 1
                if got != expected:
                    result.mismatches += 1
                    log(f"  MISMATCH {case.label}: {case.fen!r} (chess960={case.chess960}) "
                        f"D{depth} expected {expected} got {got}")
                elif expected >= args.announce:
                    log(f"  ok {case.label} D{depth}: {got:,} nodes in {dt:.1f} s ({got / dt:,.0f} nps)")
            result.positions = index
            if bar is not None:
                bar.update(1)
                if result.seconds > 0:
                    bar.set_postfix(nodes=f"{result.nodes:.3g}", nps=f"{result.nodes / result.seconds:.3g}",
                                    bad=result.mismatches + result.errors)
            else:
                now = time.perf_counter()
                if now - last_report >= args.report_every or index == len(plan):
                    last_report = now
                    nps = result.nodes / result.seconds if result.seconds else 0.0
                    log(f"  {path.name}: {index}/{len(plan)} positions, {result.checks} depths, "
                        f"{result.nodes:,} nodes, {nps:,.0f} nps, {result.mismatches} mismatches, "
                        f"elapsed {now - started:.0f} s")
        result.complete = True
    except KeyboardInterrupt:
        log("interrupted")
    finally:
        if bar is not None:
            bar.close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.tools.perft_suite",
        description="Run perft files and compare every listed count (full depth by default).")
    parser.add_argument("--files", nargs="+", default=list(DEFAULT_FILES),
                        help="perft files: names in the data dir or paths (default: all, cheapest first)")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR,
                        help=f"folder of the perft files (default {DATA_DIR or '../shared/data/perft, absent here'})")
    parser.add_argument("--max-nodes", type=int, default=None, help="skip counts above N (default: none)")
    parser.add_argument("--max-depth", type=int, default=None, help="skip depths above D (default: none)")
    parser.add_argument("--sample", type=int, default=0, help="only a seeded sample of N positions per file")
    parser.add_argument("--seed", type=int, default=1, help="seed for --sample")
    parser.add_argument("--report-every", type=float, default=10.0,
                        help="seconds between plain progress lines (without tqdm)")
    parser.add_argument("--announce", type=int, default=1_000_000_000,
                        help="log each check whose expected count is at least N (default 1e9)")
    args = parser.parse_args(argv)
    stop_on_sigterm()  # `kill PID` still prints the summary

    def log(text: str) -> None:
        print(text, flush=True)

    paths = [resolve(name, args.data_dir) for name in args.files]
    if args.data_dir is None and not all(path.exists() for path in paths):
        require_data(None, "perft", "--data-dir DIR")  # file names but no folder to find them in
    if args.data_dir is not None and not args.data_dir.is_dir():
        require_data(args.data_dir, "perft", "--data-dir DIR")
    for path in paths:
        require_data(path, "perft", "--data-dir DIR (or --files PATH ...)")

    t0 = time.perf_counter()
    from engine.board import Board
    from engine.perft import perft

    perft(Board(), 1)  # load or compile the kernels before timing anything
    log(f"engine ready in {time.perf_counter() - t0:.1f} s")

    results: list[FileResult] = []
    interrupted = False
    for path in paths:
        result = run_file(path, args, log)
        results.append(result)
        if not result.complete:
            interrupted = True
            break

    log("")
    log("=== summary ===")
    for result in results:
        log(result.summary())
    total = FileResult("TOTAL", complete=not interrupted and len(results) == len(paths))
    for result in results:
        total.positions += result.positions
        total.skipped += result.skipped
        total.checks += result.checks
        total.mismatches += result.mismatches
        total.errors += result.errors
        total.nodes += result.nodes
        total.seconds += result.seconds
    log(total.summary())
    if total.mismatches or total.errors:
        return 1
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
