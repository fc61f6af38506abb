"""Gauntlet: Numbat against a ladder of Debian engines, with a rating estimate on the CCRL scale.

This module owns the ladder (which opponents, how to start them, and the
published ratings they are anchored to) and the rating estimate.  Games are
played by :func:`engine.tools.match.run_match`, one opponent after the other;
opponents whose binary is missing are skipped.

Rating estimate (logistic Elo, see :mod:`engine.tools.stats`):

* per opponent, the *performance* ``anchor + D(score)``, where ``D`` turns the
  score fraction into an Elo difference (undefined at 0% or 100%);
* combined, the maximum-likelihood rating over all anchored opponents at once
  (:func:`engine.tools.stats.fit_rating`), with a 95% error bar from the Fisher
  information.  Unanchored opponents are played and shown but left out of it.

The anchors mix lists (CCRL 40/15 for Phalanx and Glaurung, Stockfish's own
calibration onto CCRL 40/4 for its ``UCI_Elo`` rungs) and were measured at
longer time controls than a quick gauntlet, so the estimate is a rough
placement, not a CCRL rating.

Command line::

    python -m engine.tools.gauntlet --tc 10+0.1 --rounds 10 --concurrency 2
    python -m engine.tools.gauntlet --list                 # ladder, anchors, what is installed
    python -m engine.tools.gauntlet --only phalanx,stockfish-1600 --tc 5+0.05 --rounds 4
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path

from engine.tools import stats
from engine.tools.data import DEFAULTS, ORIGINS, default_path, require_data
from engine.tools.engines import NUMBAT_COMMAND, EngineConfig, MatchError, quiet_engine_log
from engine.tools.match import (
    DrawAdjudication,
    MatchConfig,
    MatchResult,
    ResignAdjudication,
    TimeControl,
    parse_key_values,
    run_match,
)

DEFAULT_OPENINGS = default_path("openings")
"""Opening book used when none is given (in the shared data folder next to the repository; None without it)."""

DEFAULT_STOCKFISH_ELOS = (1350, 1600, 1800, 2000)
"""``UCI_Elo`` rungs of the limited-strength Stockfish opponents."""

GLAURUNG_MIN_TC = TimeControl(5.0, 0.05)
"""Glaurung 2.2 loses on time below this control, so it is skipped under faster ones."""

# Published ratings used as anchors: opponent key -> (rating or None, where the number comes from).
# None means "unanchored": we know of no published rating for that build, so none is invented.
ANCHORS: dict[str, tuple[float | None, str]] = {
    # CCRL 40/15 list, entry "Phalanx XXIV" (figure given in the project's issue).  Debian's package
    # is Phalanx XXV (25-1); it is anchored on the XXIV number, so treat this rung as approximate.
    "phalanx": (2521.0, "CCRL 40/15, Phalanx XXIV"),
    # CCRL 40/15 list, entry "Glaurung 2.2" (figure given in the project's issue); Debian ships 2.2.
    "glaurung": (2793.0, "CCRL 40/15, Glaurung 2.2"),
    "sjaakii": (None, "unanchored"),
    "hoichess": (None, "unanchored"),
    "gnuchess": (None, "unanchored"),
    "toga2": (None, "unanchored"),
}

STOCKFISH_ANCHOR_SOURCE = "Stockfish UCI_Elo (CCRL 40/4 fit)"
"""Stockfish 15.1 (Debian's version), src/search.cpp, struct Skill: ``UCI_Elo`` is mapped to a skill level
"using anchoring to CCRL Elo (goldfish 1.13 = 2000) and a fit through Ordo derived Elo for match (TC 60+0.6)".
The rung's ``UCI_Elo`` is therefore its anchor."""


@dataclass(frozen=True)
class Opponent:
    """One rung of the ladder."""

    key: str
    """Short name, also the engine name in results and PGN."""
    engine: EngineConfig
    anchor: float | None
    """Published rating, or None when unanchored."""
    source: str
    """Where :attr:`anchor` comes from."""

    def installed(self) -> bool:
        """Whether the engine's program can be found."""
        program = self.engine.cmd[0]
        return shutil.which(program) is not None or (os.path.isfile(program) and os.access(program, os.X_OK))


def _program(name: str) -> str:
    """``/usr/games/NAME`` if it exists (Debian puts games there, often outside PATH), else NAME for PATH lookup."""
    games = Path("/usr/games") / name
    return str(games) if games.exists() else name


def default_ladder(stockfish_elos: Sequence[int] = DEFAULT_STOCKFISH_ELOS) -> list[Opponent]:
    """The Debian ladder, weakest-looking first: xboard engines, UCI engines, then Stockfish rungs."""
    specs = [
        ("phalanx", [_program("phalanx")], "xboard"),
        ("sjaakii", [_program("sjaakii")], "xboard"),
        ("hoichess", [_program("hoichess")], "xboard"),
        ("gnuchess", [_program("gnuchess"), "--uci"], "uci"),
        ("glaurung", [_program("glaurung")], "uci"),
        ("toga2", [_program("toga2")], "uci"),
    ]
    ladder = []
    for key, cmd, proto in specs:
        anchor, source = ANCHORS[key]
        ladder.append(Opponent(key, EngineConfig(cmd=cmd, name=key, proto=proto), anchor, source))
    for elo in stockfish_elos:
        options = {"UCI_LimitStrength": "true", "UCI_Elo": str(elo), "Threads": "1"}
        ladder.append(Opponent(f"stockfish-{elo}",
                               EngineConfig(cmd=[_program("stockfish")], name=f"stockfish-{elo}", options=options),
                               float(elo), STOCKFISH_ANCHOR_SOURCE))
    return ladder


@dataclass
class GauntletRow:
    """Numbat's result against one opponent."""

    opponent: Opponent
    result: MatchResult | None
    """None when the opponent was skipped or failed."""
    note: str = ""

    @property
    def points(self) -> float:
        """Numbat's points."""
        return self.result.pairings[0].points if self.result else 0.0

    @property
    def games(self) -> int:
        """Games finished."""
        return self.result.pairings[0].games if self.result else 0

    def performance(self) -> float | None:
        """``anchor + Elo(score)``; None when unanchored, unplayed or infinite."""
        if self.opponent.anchor is None or not self.games:
            return None
        perf = stats.performance_rating(self.opponent.anchor, self.points / self.games)
        return perf if abs(perf) != float("inf") else None


def run_gauntlet(engine: EngineConfig, ladder: Sequence[Opponent], base: MatchConfig,
                 log: bool = True) -> list[GauntletRow]:
    """Play ``engine`` against each installed opponent with the settings of ``base`` (its engines are replaced)."""
    rows: list[GauntletRow] = []
    for opponent in ladder:
        if not opponent.installed():
            rows.append(GauntletRow(opponent, None, f"skipped: {opponent.engine.cmd[0]} not installed"))
            continue
        if opponent.key == "glaurung" and base.tc is not None and (
                base.tc.base < GLAURUNG_MIN_TC.base or base.tc.increment < GLAURUNG_MIN_TC.increment):
            rows.append(GauntletRow(opponent, None, f"skipped: loses on time below {GLAURUNG_MIN_TC}"))
            continue
        if opponent.engine.proto == "xboard" and base.nodes is not None:
            rows.append(GauntletRow(opponent, None, "skipped: xboard engines have no reliable node limit"))
            continue
        config = replace(base, engines=[engine, opponent.engine], gauntlet=False, sprt=None,
                         event=f"Numbat gauntlet vs {opponent.key}")
        if log:
            print(f"--- {engine.name} vs {opponent.key}", file=sys.stderr, flush=True)
        try:
            rows.append(GauntletRow(opponent, run_match(config)))
        except MatchError as exc:
            rows.append(GauntletRow(opponent, None, f"failed: {exc}"))
        last = rows[-1].result
        if last is not None and last.stopped == "interrupted":
            break
    return rows


def _elo_text(estimate: stats.EloEstimate) -> str:
    """``-120 +- 85`` from an Elo estimate."""
    return f"{stats.format_elo(estimate.elo)} +- {stats.format_number(estimate.error)}"


def format_table(engine_name: str, rows: Sequence[GauntletRow]) -> str:
    """A Markdown table (readable in a terminal too) with the combined rating estimate underneath."""
    lines = ["| opponent | anchor | anchor source | games | W-D-L | score | Elo diff (95%) | performance |",
             "|---|---:|---|---:|---|---:|---:|---:|"]
    fit_input: list[tuple[float, float, float]] = []
    faults = {"time": 0, "illegal": 0, "crash": 0}
    for row in rows:
        opp = row.opponent
        anchor = f"{opp.anchor:.0f}" if opp.anchor is not None else "unanchored"
        if row.result is None:
            lines.append(f"| {opp.key} | {anchor} | {opp.source} | - | - | - | {row.note} | - |")
            continue
        pairing = row.result.pairings[0]
        own = row.result.engines[engine_name]
        faults["time"] += own.time_losses
        faults["illegal"] += own.illegal_moves
        faults["crash"] += own.crashes
        perf = row.performance()
        perf_text = f"{perf:.0f}" if perf is not None else ("-" if opp.anchor is None else "out of range")
        lines.append(f"| {opp.key} | {anchor} | {opp.source} | {pairing.games} | "
                     f"{pairing.wins}-{pairing.draws}-{pairing.losses} | {100 * pairing.score:.1f}% | "
                     f"{_elo_text(pairing.elo())} | {perf_text} |")
        if opp.anchor is not None and pairing.games:
            fit_input.append((opp.anchor, pairing.points, float(pairing.games)))
    lines.append("")
    fit = stats.fit_rating(fit_input)
    if not fit_input:
        lines.append("Rating estimate: none (no anchored opponent played).")
    elif abs(fit.rating) == float("inf"):
        lines.append(f"Rating estimate: unbounded ({'won' if fit.rating > 0 else 'lost'} every anchored game).")
    else:
        lines.append(f"Rating estimate: {fit.rating:.0f} +- {fit.error:.0f} (95%), maximum-likelihood fit over "
                     f"{len(fit_input)} anchored opponents, {fit.games:.0f} games, logistic Elo.")
    lines.append(f"{engine_name} faults: {faults['time']} time losses, {faults['illegal']} illegal moves, "
                 f"{faults['crash']} crashes.")
    return "\n".join(lines)


def machine_description() -> str:
    """Date, CPU model, core count and Python version, for the record next to measured numbers."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"{date.today().isoformat()}, {cpu}, {os.cpu_count()} logical cores, "
            f"Python {platform.python_version()}, {platform.system()} {platform.release()}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the gauntlet from the command line; exit status 0, or 2 on a usage error."""
    ap = argparse.ArgumentParser(prog="python -m engine.tools.gauntlet",
                                 description="Play Numbat against a ladder of Debian engines and estimate "
                                             "its rating from the opponents' published ratings.")
    ap.add_argument("--engine", help="engine under test (default: Numbat, sys.executable run_engine.py)")
    ap.add_argument("--name", default="numbat", help="name of the engine under test")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="option of the engine under test")
    ap.add_argument("--tc", type=TimeControl.parse, default=TimeControl(10.0, 0.1),
                    help="clock BASE+INC in seconds (default 10+0.1)")
    ap.add_argument("--nodes", type=int, help="nodes per move instead of a clock (xboard engines may refuse)")
    ap.add_argument("--rounds", type=int, default=10, help="opening pairs per opponent (default 10 = 20 games)")
    ap.add_argument("--concurrency", type=int, default=1, help="games played at once (default 1)")
    ap.add_argument("--openings", default=str(DEFAULT_OPENINGS) if DEFAULT_OPENINGS and DEFAULT_OPENINGS.exists()
                    else None, help="EPD or PGN openings (default: ../shared/data/openings/noob_3moves.epd "
                                    "when it exists, else the start position)")
    ap.add_argument("--seed", type=int, default=1, help="opening shuffle seed (default 1: same openings each run)")
    ap.add_argument("--timemargin", type=int, default=0, metavar="MS", help="clock tolerance in milliseconds")
    ap.add_argument("--sf-elo", default=",".join(map(str, DEFAULT_STOCKFISH_ELOS)),
                    help="comma-separated UCI_Elo rungs for Stockfish (default 1350,1600,1800,2000)")
    ap.add_argument("--only", help="comma-separated opponent keys to play (e.g. phalanx,stockfish-1600)")
    ap.add_argument("--pgn", metavar="FILE", help="append all games to this PGN file")
    ap.add_argument("--no-adjudication", action="store_true",
                    help="play every game out (default: draw 40/8/10 and resign 3/600 adjudication)")
    ap.add_argument("--list", action="store_true", help="show the ladder and exit")
    ap.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = ap.parse_args(argv)
    if args.openings is not None:
        require_data(args.openings, "openings", "--openings FILE")
    elif not args.list:
        print(f"note: no opening book ({DEFAULTS['openings']} not found): every game starts from the start "
              f"position; give --openings FILE, {ORIGINS['openings']}", file=sys.stderr)

    quiet_engine_log()
    ladder = default_ladder([int(x) for x in args.sf_elo.split(",") if x.strip()])
    if args.only:
        wanted = {k.strip() for k in args.only.split(",")}
        unknown = wanted - {o.key for o in ladder}
        if unknown:
            ap.error(f"unknown opponent(s): {', '.join(sorted(unknown))}")
        ladder = [o for o in ladder if o.key in wanted]
    if args.list:
        for o in ladder:
            anchor = f"{o.anchor:.0f}" if o.anchor is not None else "unanchored"
            state = "installed" if o.installed() else "missing"
            print(f"{o.key:<18}{anchor:>11}  {o.source:<36}{state:<10}{shlex.join(o.engine.cmd)} ({o.engine.proto})")
        return 0

    try:
        options = parse_key_values(args.option, "--option")
    except ValueError as exc:
        ap.error(str(exc))
    cmd = shlex.split(args.engine) if args.engine else list(NUMBAT_COMMAND)
    engine = EngineConfig(cmd=cmd, name=args.name, options=options)
    adjudicate = not args.no_adjudication
    base = MatchConfig(engines=[], openings=args.openings, seed=args.seed,
                       tc=None if args.nodes else args.tc, nodes=args.nodes, timemargin_ms=args.timemargin,
                       games=2, rounds=args.rounds, concurrency=args.concurrency,
                       draw=DrawAdjudication() if adjudicate else None,
                       resign=ResignAdjudication() if adjudicate else None,
                       pgn_out=args.pgn, progress=not args.no_progress)
    rows = run_gauntlet(engine, ladder, base)
    limit = f"nodes {args.nodes}" if args.nodes else f"tc {args.tc}"
    print(f"Gauntlet of {engine.name} ({shlex.join(cmd)}), {limit}, {args.rounds} opening pairs per opponent, "
          f"openings {args.openings or 'start position'} (seed {args.seed})")
    print(f"Machine: {machine_description()}")
    print()
    print(format_table(engine.name, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
