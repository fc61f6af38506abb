"""Match statistics from finished PGN files: pool several runs of a match into one verdict.

    python -m engine.tools.pgn_stats A.pgn B.pgn [--first NAME] [--pairs 33,213,446,247,30]
                                     [--sprt elo0=0 elo1=10] [--times]

This module owns reading back the games that ``engine.tools.match --pgn`` wrote, so
that matches played side by side (two runs with different seeds, one per core) or
across days can be judged as one: the same report as the match runner's (W/D/L,
Elo with its 95% interval, LOS, SPRT, each engine's time losses, illegal moves and
crashes, how the games ended), over every game of every file.

Pairs.  The runner writes ``Round "P.S"``: opening pair ``P`` of its run and slot ``S``
(1: the pairing's first engine has White, 2: the colours reversed).  Within one file,
the two games of pair ``P`` between the same two engines form a pentanomial pair.
Pair numbers restart in every file, so pairs never span files.  A game whose partner
is missing (a run stopped between a pair's two games) counts in W/D/L only.

Whose point of view.  A pairing's first engine is the one with White in slot 1, as
in the runner; ``--first NAME`` makes ``NAME`` the first engine of every pairing it
plays in (the engine under test).

Faults come from the ``Termination`` tag (``time forfeit``, ``illegal move``, ``engine
crash``).  A forfeit happens on the forfeiting side's move, so a lost forfeit is the
loser's; a drawn one (``time forfeit (opponent cannot mate)``) is charged to the side
to move in the game's last position.

``--pairs`` adds pentanomial counts recorded elsewhere (say, an earlier session's
report, lowest pair score first) to the one pairing the files hold, and ``--sprt``
runs the GSPRT of :mod:`engine.tools.stats` on the pooled pairs.

``--times`` adds each engine's thinking time per move, mean and median, read from the
runner's move comments (``+0.35/12 0.123s``; book moves carry none), and, under a
``base+increment`` clock, the mean time of its first ``EARLY_MOVES`` moves and the
clock it had left when the game ended (the base, plus an increment per move made,
minus the time used): whether a change that wins spends more of the clock or spends
the same time better, and how much of the clock a time manager leaves unused.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import chess
import chess.pgn

from engine.tools import stats
from engine.tools.match import (
    EngineStats,
    GameRecord,
    PairingResult,
    SprtConfig,
    TimeControl,
    complete_pair,
    count_game,
    parse_settings,
    results_lines,
)

FAULTS = (("time forfeit", "time"), ("illegal move", "illegal"), ("engine crash", "crash"))
"""Termination tag prefixes the runner writes for a forfeit, and the fault each one is."""


def _fault_of(termination: str) -> str | None:
    """The fault (``"time"``, ``"illegal"``, ``"crash"``) a Termination tag records, or None."""
    for prefix, fault in FAULTS:
        if termination.startswith(prefix):
            return fault
    return None


def read_games(paths: Sequence[str | Path]) -> list[tuple[int, GameRecord]]:
    """Every finished game of the files, with the index of the file it came from.

    The records carry the names, result, termination, fault and the ``Round`` tag's pair
    and slot; ``pairing`` is left at -1 for :func:`tally` to assign.  Unfinished games
    (``Result "*"``) are skipped.  Raises ``ValueError`` on a game without a ``P.S`` round.
    """
    games: list[tuple[int, GameRecord]] = []
    for index, path in enumerate(paths):
        with open(path, encoding="utf-8") as handle:
            while True:
                offset = handle.tell()
                headers = chess.pgn.read_headers(handle)
                if headers is None:
                    break
                result = headers.get("Result", "*")
                if result not in ("1-0", "0-1", "1/2-1/2"):
                    continue
                try:
                    pair_text, slot_text = headers.get("Round", "").split(".")
                    pair, slot = int(pair_text) - 1, int(slot_text) - 1
                except ValueError:
                    raise ValueError(f"{path}: game {headers.get('White')} - {headers.get('Black')} has Round "
                                     f"{headers.get('Round')!r}, not the runner's PAIR.SLOT") from None
                white, black = headers.get("White", "?"), headers.get("Black", "?")
                termination = headers.get("Termination", "")
                fault = _fault_of(termination)
                faulty = None
                if fault is not None:
                    if result == "1-0":
                        faulty = black
                    elif result == "0-1":
                        faulty = white
                    else:
                        faulty = _side_to_move_at_end(handle, offset, white, black)
                games.append((index, GameRecord(white, black, result, termination, headers.get("OpeningFEN", ""),
                                                int(headers.get("PlyCount", "0") or 0), -1, pair, slot,
                                                fault, faulty)))
    return games


MOVE_TIME = re.compile(r"^(?:[+-](?:\d+\.\d+|M\d+))?(?:/\d+)?\s*(\d+(?:\.\d+)?)s(?:\s|$)")
"""The time a move took, at the start of the runner's comment ``+0.35/12 0.123s`` (score and depth
optional).  A fault's note appended to the last comment (``book exp: 0.273s used``, the forfeiting
engine's time, on its opponent's move) is not a move time."""


def _timed_games(paths: Sequence[str | Path]) -> Iterator[tuple[chess.pgn.Game, list[tuple[chess.Color, float]]]]:
    """Every finished game of the files, with the (mover, seconds) of each timed move in order."""
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                if game.headers.get("Result", "*") == "*":
                    continue
                timed = []
                for node in game.mainline():
                    match = MOVE_TIME.search(node.comment)
                    if match:  # made by the side not to move at this node
                        timed.append((not node.turn(), float(match.group(1))))
                yield game, timed


def _names(game: chess.pgn.Game) -> dict[chess.Color, str]:
    """The engine name of each colour."""
    return {chess.WHITE: game.headers.get("White", "?"), chess.BLACK: game.headers.get("Black", "?")}


def move_times(paths: Sequence[str | Path]) -> dict[str, list[float]]:
    """Seconds each engine thought per move, by engine name, over every finished game of the files."""
    times: dict[str, list[float]] = {}
    for game, timed in _timed_games(paths):
        names = _names(game)
        for mover, spent in timed:
            times.setdefault(names[mover], []).append(spent)
    return times


EARLY_MOVES = 20
"""The opening stretch whose time per move ``--times`` reports on its own (an engine's own moves)."""


@dataclass
class ClockUse:
    """How one engine used a ``base+increment`` clock over the finished games of some files."""

    early: list[float] = field(default_factory=list)   # seconds per move, its first EARLY_MOVES moves of each game
    left: list[float] = field(default_factory=list)    # seconds on its clock when each game ended


def clock_use(paths: Sequence[str | Path]) -> dict[str, ClockUse]:
    """Each engine's early move times and clock at the end, by name, over the files' finished games
    played under one ``base+increment`` period (games under other controls are left out)."""
    use: dict[str, ClockUse] = {}
    for game, timed in _timed_games(paths):
        try:
            control = TimeControl.parse(game.headers.get("TimeControl", ""))
        except ValueError:
            continue
        if control.moves is not None:
            continue
        names = _names(game)
        clock = {chess.WHITE: control.base, chess.BLACK: control.base}
        count = {chess.WHITE: 0, chess.BLACK: 0}
        for mover, spent in timed:
            clock[mover] += control.increment - spent
            count[mover] += 1
            if count[mover] <= EARLY_MOVES:
                use.setdefault(names[mover], ClockUse()).early.append(spent)
        for colour in (chess.WHITE, chess.BLACK):
            if count[colour]:
                use.setdefault(names[colour], ClockUse()).left.append(clock[colour])
    return use


def time_lines(times: dict[str, list[float]], clocks: dict[str, ClockUse] | None = None) -> list[str]:
    """Per engine: moves timed, mean and median seconds per move; then, for the games under a
    ``base+increment`` clock, the mean of its first moves and the mean clock left at the end."""
    lines = [f"time per move {name}: {statistics.fmean(values):.3f} s mean, {statistics.median(values):.3f} s median "
             f"over {len(values)} moves" for name, values in sorted(times.items()) if values]
    for name, use in sorted((clocks or {}).items()):
        if use.left:
            lines.append(f"clock {name}: {statistics.fmean(use.early):.3f} s a move in its first {EARLY_MOVES} moves, "
                         f"{statistics.fmean(use.left):.2f} s left at the end (mean over {len(use.left)} games, "
                         f"lowest {min(use.left):.2f} s)")
    return lines


def _side_to_move_at_end(handle: TextIO, offset: int, white: str, black: str) -> str:
    """Name of the side to move in the last position of the game that starts at ``offset``."""
    resume = handle.tell()
    handle.seek(offset)
    game = chess.pgn.read_game(handle)
    handle.seek(resume)
    assert game is not None
    return white if game.end().board().turn == chess.WHITE else black


def tally(games: Sequence[tuple[int, GameRecord]],
          first: str | None = None) -> tuple[list[PairingResult], dict[str, EngineStats]]:
    """Pairings (W/D/L and pentanomial) and engine totals over ``games`` from :func:`read_games`.

    ``first`` names the engine whose point of view its pairings take.
    """
    pairings: list[PairingResult] = []
    by_names: dict[frozenset[str], int] = {}
    engines: dict[str, EngineStats] = {}
    pending: dict[tuple[int, int, int], float] = {}
    for file_index, game in games:
        names = frozenset((game.white, game.black))
        if names not in by_names:
            if first in names:
                other = game.black if game.white == first else game.white
                pair_names = (first, other)
            else:
                pair_names = (game.white, game.black) if game.slot == 0 else (game.black, game.white)
            by_names[names] = len(pairings)
            pairings.append(PairingResult(*pair_names))
        game.pairing = by_names[names]
        for name in (game.white, game.black):
            engines.setdefault(name, EngineStats(name))
        score = count_game(game, pairings[game.pairing], engines)
        complete_pair(pending, (file_index, game.pairing, game.pair), pairings[game.pairing], score)
    return pairings, engines


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m engine.tools.pgn_stats`` argument parser."""
    ap = argparse.ArgumentParser(
        prog="python -m engine.tools.pgn_stats",
        description="Pool the games of match PGN files into one report: W/D/L, pentanomial Elo, LOS, SPRT, faults.")
    ap.add_argument("pgn", nargs="+", help="PGN files written by engine.tools.match --pgn")
    ap.add_argument("--first", metavar="NAME", help="report from this engine's point of view (the engine under test)")
    ap.add_argument("--pairs", metavar="LL,LD,DD,WD,WW",
                    help="pentanomial pair counts from elsewhere, lowest pair score first, added to the one pairing")
    ap.add_argument("--sprt", nargs="*", metavar="KEY=VALUE",
                    help="SPRT on the pooled pairs: elo0=0 elo1=5 alpha=0.05 beta=0.05 (defaults shown)")
    ap.add_argument("--times", action="store_true",
                    help="also each engine's thinking time per move (mean, median) from the move comments, "
                         "and its clock left at the end of each base+increment game")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Print the pooled report; exit status 0, or 2 on a bad argument or file."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        extra = [int(n) for n in args.pairs.split(",")] if args.pairs else None
        sprt_config = parse_settings(SprtConfig, args.sprt, "--sprt") if args.sprt is not None else None
        if extra is not None and (len(extra) != 5 or any(n < 0 for n in extra)):
            raise ValueError(f"--pairs needs five counts of at least 0, not {args.pairs}")
        games = read_games(args.pgn)
        pairings, engines = tally(games, args.first)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    unpaired = sum(p.games for p in pairings) - 2 * sum(sum(p.pentanomial) for p in pairings)
    if extra is not None:
        if len(pairings) != 1:
            parser.error(f"--pairs adds to one pairing, and the files hold {len(pairings)}")
        pairings[0].pentanomial = [a + b for a, b in zip(pairings[0].pentanomial, extra, strict=True)]
    sprt = None
    if sprt_config is not None:
        if len(pairings) != 1:
            parser.error(f"--sprt judges one pairing, and the files hold {len(pairings)}")
        s = sprt_config
        sprt = stats.sprt_pentanomial(pairings[0].pentanomial, s.elo0, s.elo1, s.alpha, s.beta)
    lines = [f"{len(games)} games from {len(args.pgn)} file(s)"
             + (f", {unpaired} without their pair's other game" if unpaired else "")
             + (f", plus {sum(extra)} recorded pairs" if extra else "")]
    lines += results_lines(pairings, engines, [game for _, game in games], sprt)
    if args.times:
        lines += [""] + time_lines(move_times(args.pgn), clock_use(args.pgn))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
