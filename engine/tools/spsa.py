"""SPSA tuning of the search's parameters by self-play, the method of fishtest and OpenBench.

This module owns a tuning run: its schedule, the games it plays, its checkpoint and its
picture.  The parameters are the search's tunables (``engine.searcher.TUNABLES``), which
an engine started with ``NUMBAT_TUNE=1`` lists as UCI spin options; normal users never
see them.

The algorithm (simultaneous perturbation stochastic approximation), per iteration ``k``
of ``N`` planned, for every parameter ``i`` at once:

* draw ``delta_i`` = +1 or -1 at random;
* play one game pair (same opening, colours reversed) between an engine at
  ``theta + c_k delta`` and one at ``theta - c_k delta``, values rounded to integers;
* with ``R`` = the first engine's points minus the second's (-2 to +2), move
  ``theta_i += a_k R / (c_k delta_i)``, kept within the parameter's range.

The gains shrink as ``c_k = c / (k + 1)^0.101`` and ``a_k = a / (A + k + 1)^0.602``
with ``A = N / 10``.  As in OpenBench, each parameter states its perturbation at the
end of the run, ``c_end`` (the tunable's ``step``), and ``r_end``, the learning rate at
the end (0.002); from them ``c = c_end N^0.101`` and ``a = r_end c_end^2 (A + N)^0.602``.

Progress is measured as well as followed: every ``check_every``-th pair is a *check
pair*, the current values against the values the run started from, and their running
Elo (with its 95% interval) is the run's estimate of what it has gained so far.

**Against an opponent** (``--opponent``, for example Ethereal): self-play rewards what
beats the engine itself, which is not always what beats others.  With an opponent each
iteration plays four games from one opening: the engine at ``theta + c_k delta`` and the
engine at ``theta - c_k delta`` each play it with both colours against the opponent,
and ``R`` = the first one's points minus the second one's (-2 to +2, as above).  A check
pair is then the current values against the opponent with both colours, so the check
Elo is the current values' Elo against the opponent.  The opponent may search its own
number of nodes or plies (``nodes=N`` or ``depth=N`` among its keys; Ethereal 12 does not
obey ``go nodes``), so that it can be matched in strength.

Workers (``--concurrency``) each own two engine processes (three with an opponent),
reused from game to game, and take iterations from a shared counter; each finished pair
updates the values at once (asynchronous SPSA, as OpenBench's workers do).  The
perturbation of iteration ``k`` is drawn from a generator seeded by the run's seed and
``k``, and its opening is the book's ``k``-th pair, so the run needs no random state
beyond its checkpoint.

The checkpoint is a small JSON file, rewritten after every pair (``--state``): the
run's settings, the current values, the counts, the values every ``record_every``
iterations and the check pairs.  A run stopped at any point resumes from it, on any
machine: ``python -m engine.tools.spsa --state F`` goes on where it stopped.  ``--plot``
draws each parameter's path (in steps from where it started) and the running Elo of
the check pairs, with matplotlib (``pip install numbat[tools]``).

Command line (start a run, or resume it: the settings are read from the file)::

    python -m engine.tools.spsa --state docs/tuning/spsa-1.json --engine cmd="python run_engine.py" \\
        --openings ../shared/data/openings/8moves_v3.pgn --nodes 25000 --iterations 8000 \\
        --concurrency 2 --minutes 150 --plot docs/tuning/spsa-1.png
    python -m engine.tools.spsa --state docs/tuning/spsa-1.json --report    # values, setoption lines
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine.tools import stats
from engine.tools.engines import EngineConfig, MatchError, quiet_engine_log
from engine.tools.match import (
    DrawAdjudication,
    GamePlayer,
    GameRecord,
    MatchConfig,
    OpeningBook,
    ResignAdjudication,
    TimeControl,
    parse_engine,
)
from engine.tools.progress import stop_on_sigterm

ALPHA = 0.602          # exponent of the learning rate's decay (Spall's recommended value)
GAMMA = 0.101          # exponent of the perturbation's decay
A_SHARE = 0.1          # the stability constant A as a share of the planned iterations
R_END = 0.002          # learning rate at the end of the run (OpenBench's default)
CHECK_EVERY = 8        # every this many pairs, one check pair: current values against the start
RECORD_EVERY = 10      # keep the values every this many iterations (the plot's paths)
HANG_TIMEOUT = 30.0    # seconds before a silent engine is killed in fixed-work games: a move takes well
                       # under 1 s here, and a hung engine holds its worker this long (Ethereal 12 without
                       # restart=on hung every 20 minutes, 2026-12-05)
ELO_WINDOW = 100       # the plot's running Elo: over the last this many check pairs
STATE_VERSION = 1
TUNING_SWITCH = "NUMBAT_TUNE"  # engine.uci.TUNING_SWITCH (a test checks), set for the engines we start


@dataclass
class Parameter:
    """One tuned parameter: its value now (a real number; engines get it rounded) and its range."""

    name: str
    value: float
    start: float
    low: int
    high: int
    c_end: float
    r_end: float = R_END

    def clamp(self, x: float) -> float:
        """``x`` kept within the range."""
        return min(max(x, float(self.low)), float(self.high))


@dataclass
class Schedule:
    """SPSA's gains for a run of ``iterations`` pairs."""

    iterations: int
    alpha: float = ALPHA
    gamma: float = GAMMA
    a_share: float = A_SHARE

    @property
    def stability(self) -> float:
        """The constant A."""
        return self.a_share * self.iterations

    def c_k(self, param: Parameter, k: int) -> float:
        """Perturbation of ``param`` at iteration ``k`` (0-based); ``c_end`` at the last one."""
        c = param.c_end * self.iterations ** self.gamma
        return c / (k + 1) ** self.gamma

    def a_k(self, param: Parameter, k: int) -> float:
        """Learning gain of ``param`` at iteration ``k``; ``r_end c_end^2`` at the last one."""
        a = param.r_end * param.c_end ** 2 * (self.stability + self.iterations) ** self.alpha
        return a / (self.stability + k + 1) ** self.alpha


@dataclass
class RunSettings:
    """What defines a run; fixed when it starts and read back from its checkpoint."""

    engine: dict[str, Any]
    """The engine as ``EngineConfig`` fields (``cmd``, ``options``, ``workdir``)."""
    iterations: int
    seed: int
    openings: str | None = None
    nodes: int | None = None
    tc: str | None = None
    check_every: int = CHECK_EVERY
    record_every: int = RECORD_EVERY
    tb_path: str | None = None
    opponent: dict[str, Any] | None = None
    """The fixed opponent as ``EngineConfig`` fields; None: self-play."""


@dataclass
class TuningState:
    """A run's checkpoint: its settings, its parameters now and what its games said."""

    settings: RunSettings
    params: list[Parameter]
    iteration: int = 0
    """Tuning pairs finished (check pairs are not iterations)."""
    pairs: int = 0
    """Pairs finished, tuning and check."""
    games: int = 0
    plus_wdl: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Tuning games: wins, draws and losses of the engine at theta + c delta."""
    faults: int = 0
    """Games an engine forfeited (time, illegal move or crash)."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """``{"iteration": k, "values": {name: value}}`` every ``record_every`` iterations."""
    checks: list[list[float]] = field(default_factory=list)
    """Check pairs: ``[iteration, points of the current values]`` (0 to 2)."""
    started: str = ""
    updated: str = ""
    seconds: float = 0.0
    """Wall time spent playing, over all sessions of the run."""

    # -- arithmetic ---------------------------------------------------------------

    @property
    def schedule(self) -> Schedule:
        return Schedule(self.settings.iterations)

    def perturbation(self, k: int) -> dict[str, int]:
        """The +-1 sign of each parameter at iteration ``k`` (a function of the seed and ``k`` only)."""
        rng = random.Random(self.settings.seed * 1_000_003 + k)
        return {p.name: rng.choice((-1, 1)) for p in self.params}

    def sides(self, k: int) -> tuple[dict[str, int], dict[str, int]]:
        """The two engines' values at iteration ``k``: theta + c_k delta and theta - c_k delta, rounded."""
        delta = self.perturbation(k)
        plus, minus = {}, {}
        for p in self.params:
            step = self.schedule.c_k(p, k) * delta[p.name]
            plus[p.name] = round(p.clamp(p.value + step))
            minus[p.name] = round(p.clamp(p.value - step))
        return plus, minus

    def update(self, k: int, result: float) -> None:
        """Move every value after iteration ``k``'s pair, where ``result`` = plus points - minus points."""
        delta = self.perturbation(k)
        for p in self.params:
            p.value = p.clamp(p.value + self.schedule.a_k(p, k) * result / (self.schedule.c_k(p, k) * delta[p.name]))

    def current(self) -> dict[str, int]:
        """The values now, rounded as an engine would get them."""
        return {p.name: round(p.value) for p in self.params}

    def start_values(self) -> dict[str, int]:
        """The values the run started from."""
        return {p.name: round(p.start) for p in self.params}

    def record(self) -> None:
        """Keep the values of this iteration in the history."""
        self.history.append({"iteration": self.iteration, "values": {p.name: round(p.value, 3) for p in self.params}})

    def check_elo(self, last: int | None = None) -> stats.EloEstimate:
        """Elo of the current values over the start values (against the opponent, when the run has one)
        from the check pairs (the last ``last`` ones)."""
        return pair_points_elo(self.checks if last is None else self.checks[-last:])

    # -- files ---------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["version"] = STATE_VERSION
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TuningState:
        if data.get("version") != STATE_VERSION:
            raise ValueError(f"checkpoint version {data.get('version')!r}, this tool reads {STATE_VERSION}")
        data = dict(data)
        del data["version"]
        settings = RunSettings(**data.pop("settings"))
        params = [Parameter(**p) for p in data.pop("params")]
        return cls(settings=settings, params=params, **data)

    def save(self, path: Path) -> None:
        """Write the checkpoint atomically (a run killed mid-write keeps the previous one)."""
        self.updated = datetime.now(UTC).isoformat(timespec="seconds")
        temporary = path.with_suffix(path.suffix + ".tmp")
        temporary.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, path)

    @classmethod
    def load(cls, path: Path) -> TuningState:
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")))


def pair_points_elo(checks: Sequence[Sequence[float]]) -> stats.EloEstimate:
    """Pentanomial Elo of ``[iteration, pair points]`` rows (points 0, 0.5, ..., 2 for the first engine)."""
    counts = [0] * 5
    for _, points in checks:
        counts[min(max(round(points * 2), 0), 4)] += 1
    return stats.elo_pentanomial(counts)


def new_state(settings: RunSettings, tunables: Sequence[Any], names: Sequence[str] | None = None,
              r_end: float = R_END) -> TuningState:
    """A fresh run over ``tunables`` (objects with name, default, low, high, step), or the ``names`` among them."""
    chosen = [t for t in tunables if names is None or t.name in names]
    if names is not None:
        unknown = sorted(set(names) - {t.name for t in chosen})
        if unknown:
            raise ValueError(f"no tunable named {', '.join(unknown)}")
    params = [Parameter(t.name, float(t.default), float(t.default), t.low, t.high, float(t.step), r_end)
              for t in chosen]
    now = datetime.now(UTC).isoformat(timespec="seconds")
    return TuningState(settings=settings, params=params, started=now, updated=now)


# ---------------------------------------------------------------------------
# Playing
# ---------------------------------------------------------------------------

PairPlayer = Callable[[dict[str, int], dict[str, int] | None, int], tuple[tuple[float, ...], int] | None]
"""(values of engine A, values of engine B, pair number) -> (points, forfeits), None: stopped.

Self-play: A's points in its two games against B.  Against an opponent: A's points in its
two games against it, then B's in its two (a check pair passes B as None and gets A's two).
"""
OPPONENT = "opponent"  # the opponent's name in the games of a run that has one


class _EnginePair:
    """One worker's engine processes (the two tuned ones, and the opponent if any) and the games it plays."""

    def __init__(self, settings: RunSettings, book: OpeningBook, stop: threading.Event,
                 pgn_out: str | None) -> None:
        # Only these engine processes see the tuning switch (so they list the tunables).
        env = {**settings.engine.get("env", {}), TUNING_SWITCH: "1"}
        engines = [EngineConfig(**{**settings.engine, "name": name, "env": env}) for name in ("A", "B")]
        self.against = settings.opponent is not None
        if settings.opponent is not None:
            engines.append(EngineConfig(**{**settings.opponent, "name": OPPONENT}))
        config = MatchConfig(
            engines=engines, openings=settings.openings, nodes=settings.nodes,
            tc=TimeControl.parse(settings.tc) if settings.tc else None,
            draw=DrawAdjudication(movenumber=40, movecount=8, score=10),
            resign=ResignAdjudication(movecount=3, score=600, twosided=True),
            tb_path=settings.tb_path, progress=False, hang_timeout=HANG_TIMEOUT)
        self.player = GamePlayer(config, stop)
        self.book = book
        self.pgn_out = pgn_out
        self.lock = threading.Lock()

    def play_pair(self, values_a: dict[str, int], values_b: dict[str, int] | None, pair: int,
                  pgn_lock: threading.Lock) -> tuple[tuple[float, ...], int] | None:
        """The points of the pair's games from opening ``pair`` (as :data:`PairPlayer` says), and the
        forfeits; None when stopped."""
        tuned = [("A", values_a)] + ([("B", values_b)] if values_b is not None else [])
        for name, values in tuned:
            try:
                self.player.slots[name].set_options(dict(values))
            except Exception as exc:  # an engine that rejects an option cannot be tuned at all
                raise MatchError(f"engine {name} rejected the tunables: {exc!r} (is {TUNING_SWITCH}=1 set?)") \
                    from exc
        opening = self.book.get(pair)
        if self.against:   # each tuned engine against the opponent, both colours
            seatings = [(name, white, black) for name, _ in tuned
                        for white, black in ((name, OPPONENT), (OPPONENT, name))]
        else:
            seatings = [("A", "A", "B"), ("A", "B", "A")]
        faults = 0
        games: list[GameRecord] = []
        points: list[float] = []
        for slot, (scored, white, black) in enumerate(seatings):
            game = self.player.play_game(white, black, opening, 0, pair, slot)
            if game is None:
                return None
            games.append(game)
            points.append(game.score_for(scored))
            faults += game.fault is not None
        if self.pgn_out:
            with pgn_lock, open(self.pgn_out, "a", encoding="utf-8") as handle:
                for game in games:
                    handle.write(game.pgn + "\n\n")
        return tuple(points), faults

    def close(self) -> None:
        self.player.close()


def run(state: TuningState, state_path: Path | None, concurrency: int = 1, max_pairs: int | None = None,
        deadline: float | None = None, pgn_out: str | None = None, progress: bool = True,
        play: PairPlayer | None = None) -> TuningState:
    """Play pairs until the run's iterations are done, ``max_pairs`` more pairs or the ``deadline`` (time.time()).

    ``play`` replaces the engines (tests); by default each worker starts its own two.
    The checkpoint is saved after every pair.
    """
    lock = threading.Lock()
    pgn_lock = threading.Lock()
    stop = threading.Event()
    errors: list[BaseException] = []
    book = OpeningBook(state.settings.openings, "random", state.settings.seed)
    against = state.settings.opponent is not None
    # Jobs are numbered from the pairs already played; job j is a check pair when
    # (j + 1) % check_every == 0.  The numbers of jobs in flight when a run stops are used again.
    next_job = [state.pairs]
    next_iteration = [state.iteration]
    pairs_this_session = [0]
    started = time.time()
    last_status = [0.0]
    in_flight = [0]  # jobs taken and not finished

    def take_job() -> tuple[int, bool, int] | None:
        with lock:
            if stop.is_set() or state.iteration >= state.settings.iterations:
                return None
            if max_pairs is not None and pairs_this_session[0] + in_flight[0] >= max_pairs:
                return None
            if deadline is not None and time.time() >= deadline:
                return None
            job = next_job[0]
            next_job[0] += 1
            is_check = (job + 1) % state.settings.check_every == 0
            k = -1
            if not is_check:
                k = next_iteration[0]
                next_iteration[0] += 1
            in_flight[0] += 1
            return job, is_check, k

    def finish(is_check: bool, k: int, scores: tuple[float, ...], faults: int) -> None:
        points = scores[0] + scores[1]   # A's two games (against B, or against the opponent)
        with lock:
            in_flight[0] -= 1
            pairs_this_session[0] += 1
            state.pairs += 1
            state.games += len(scores)
            state.faults += faults
            if is_check:
                state.checks.append([state.iteration, points])
            else:
                # Against an opponent scores[2:] are B's two games against it; in self-play B has 2 - points.
                other = scores[2] + scores[3] if against else 2.0 - points
                state.update(k, points - other)
                state.iteration += 1
                for score in scores[:2]:
                    state.plus_wdl[{1.0: 0, 0.5: 1, 0.0: 2}[score]] += 1
                if state.iteration % state.settings.record_every == 0:
                    state.record()
            if state_path is not None:
                state.save(state_path)
            if progress and time.time() - last_status[0] > 30:
                last_status[0] = time.time()
                print(status_line(state), file=sys.stderr, flush=True)

    def worker(engines: _EnginePair | None) -> None:
        try:
            while True:
                taken = take_job()
                if taken is None:
                    return
                job, is_check, k = taken
                values_b: dict[str, int] | None
                if is_check:
                    # Against an opponent, a check pair is the current values' two games against it.
                    values_a, values_b = state.current(), (None if against else state.start_values())
                else:
                    values_a, values_b = state.sides(k)
                if play is not None:
                    outcome = play(values_a, values_b, job)
                else:
                    assert engines is not None
                    outcome = engines.play_pair(values_a, values_b, job, pgn_lock)
                if outcome is None:
                    with lock:
                        in_flight[0] -= 1
                    return
                finish(is_check, k, outcome[0], outcome[1])
        except BaseException as exc:  # noqa: BLE001 - reported after the other workers stop
            errors.append(exc)
            stop.set()
        finally:
            if engines is not None:
                engines.close()

    if not state.history:
        state.record()
    threads = []
    for _ in range(max(1, concurrency)):
        engines = None if play is not None else _EnginePair(state.settings, book, stop, pgn_out)
        threads.append(threading.Thread(target=worker, args=(engines,), daemon=True))
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)
    except KeyboardInterrupt:
        stop.set()
        for thread in threads:
            thread.join()
    with lock:
        state.seconds += time.time() - started
        if state_path is not None:
            state.save(state_path)
    if errors:
        raise errors[0]
    return state


# ---------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------

def status_line(state: TuningState) -> str:
    """One line: iterations, games, the check pairs' Elo."""
    elo = state.check_elo()
    measured = "against the opponent" if state.settings.opponent is not None else "over the start values"
    return (f"iteration {state.iteration}/{state.settings.iterations}, {state.games} games, "
            f"{len(state.checks)} check pairs: {elo.format()} {measured}, {state.faults} forfeits")


def report(state: TuningState) -> str:
    """The values now against the start, the check Elo, and the ``setoption`` lines of the values."""
    lines = [status_line(state), "", f"{'parameter':<22} {'start':>8} {'now':>9} {'steps':>7}  range"]
    for p in state.params:
        moved = (p.value - p.start) / p.c_end if p.c_end else 0.0
        lines.append(f"{p.name:<22} {p.start:>8.0f} {p.value:>9.2f} {moved:>+7.2f}  {p.low}..{p.high}")
    lines.append("")
    lines += [f"setoption name {name} value {value}" for name, value in state.current().items()]
    lines += ["", f"as match options (with env.{TUNING_SWITCH}=1 among each engine's keys):",
              " ".join(f"option.{name}={value}" for name, value in state.current().items())]
    return "\n".join(lines)


def running_elo(state: TuningState, window: int = ELO_WINDOW) -> list[tuple[int, float, float, float]]:
    """(iteration, Elo, lower, upper) of the check pairs, over the last ``window`` of them at each."""
    points = []
    for end in range(1, len(state.checks) + 1):
        estimate = pair_points_elo(state.checks[max(0, end - window):end])
        points.append((int(state.checks[end - 1][0]), estimate.elo, estimate.lower, estimate.upper))
    return points


def plot(state: TuningState, path: Path) -> None:
    """Each parameter's path in steps (c_end) from its start, and the check pairs' running Elo."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_values, ax_elo) = plt.subplots(2, 1, figsize=(10, 9), sharex=True,
                                            gridspec_kw={"height_ratios": [3, 2]})
    iterations = [h["iteration"] for h in state.history]
    colours = plt.get_cmap("tab20")
    ax_values.set_prop_cycle(color=[colours(i) for i in range(20)])  # twenty distinct colours, one per parameter
    for p in state.params:
        path_steps = [(h["values"][p.name] - p.start) / p.c_end for h in state.history]
        ax_values.plot(iterations, path_steps, label=p.name, linewidth=1)
    ax_values.axhline(0, color="grey", linewidth=0.5)
    ax_values.set_ylabel("value - start, in steps (c_end)")
    ax_values.legend(fontsize=7, ncol=3, loc="upper left")
    ax_values.set_title(f"SPSA: {state.iteration} of {state.settings.iterations} iterations, {state.games} games"
                        + (f", {state.settings.nodes} nodes per move" if state.settings.nodes else
                           f", {state.settings.tc}"))
    curve = running_elo(state)
    if curve:
        xs = [c[0] for c in curve]
        finite = [(c[2] if math.isfinite(c[2]) else -100.0, c[3] if math.isfinite(c[3]) else 100.0) for c in curve]
        ax_elo.fill_between(xs, [f[0] for f in finite], [f[1] for f in finite], alpha=0.25, label="95%")
        measured = "against the opponent" if state.settings.opponent is not None else "over the start"
        ax_elo.plot(xs, [c[1] for c in curve], label=f"Elo {measured}, last {ELO_WINDOW} check pairs")
    ax_elo.axhline(0, color="grey", linewidth=0.5)
    ax_elo.set_xlabel("iteration")
    ax_elo.set_ylabel("Elo")
    ax_elo.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m engine.tools.spsa", description=__doc__.split("\n\n")[0])
    parser.add_argument("--state", type=Path, required=True, help="checkpoint JSON (created, or resumed from)")
    parser.add_argument("--engine", nargs="+", metavar="KEY=VALUE",
                        help="cmd=... [dir=...] [option.NAME=VALUE ...], as for engine.tools.match "
                             "(a new run; on resuming, the engine to use from now on)")
    parser.add_argument("--opponent", nargs="+", metavar="KEY=VALUE",
                        help="tune against this engine instead of by self-play: cmd=... [dir=...] [nodes=N | depth=N] "
                             "[option.NAME=VALUE ...] (a new run; on resuming, the opponent to use from now on)")
    parser.add_argument("--openings", help="EPD or PGN openings (new run)")
    parser.add_argument("--nodes", type=int, help="nodes per move (new run)")
    parser.add_argument("--tc", help="time control base+inc in seconds, instead of --nodes (new run)")
    parser.add_argument("--iterations", type=int, default=8000, help="planned pairs N (new run)")
    parser.add_argument("--params", help="comma-separated tunables to tune (new run; default: all)")
    parser.add_argument("--seed", type=int, default=1, help="perturbations and openings (new run)")
    parser.add_argument("--r-end", type=float, default=R_END, help="learning rate at the end (new run)")
    parser.add_argument("--check-every", type=int, default=CHECK_EVERY, help="one check pair in this many")
    parser.add_argument("--tb", help="Syzygy folder for adjudication (new run)")
    parser.add_argument("--concurrency", type=int, default=1, help="workers, two engines each (three with an opponent)")
    parser.add_argument("--max-pairs", type=int, help="stop after this many pairs this session")
    parser.add_argument("--minutes", type=float, help="stop after this many minutes this session")
    parser.add_argument("--pgn", help="append the games to this PGN file")
    parser.add_argument("--plot", type=Path, help="draw the run into this PNG (after playing)")
    parser.add_argument("--report", action="store_true", help="print the values and stop (no games)")
    return parser


def engine_settings(engine: EngineConfig) -> dict[str, Any]:
    """What the checkpoint keeps of the tuned engine (its name is A or B per game)."""
    settings: dict[str, Any] = {"cmd": engine.cmd, "proto": engine.proto, "options": engine.options,
                                "workdir": engine.workdir}
    if engine.env:   # absent when empty, as in checkpoints written before engines had one
        settings["env"] = engine.env
    settings.update(engine.own_limits())   # an engine's own limit, when it has one
    if engine.restart:   # absent when off, as in checkpoints written before engines had it
        settings["restart"] = True
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.state.exists():
        state = TuningState.load(args.state)
        if args.engine:  # the same engine elsewhere, e.g. a checkout at another path on a new machine
            engine = parse_engine(args.engine)
            state.settings.engine = engine_settings(engine)
        if args.opponent:
            if state.settings.opponent is None:
                print("this run tunes by self-play: it cannot take an --opponent", file=sys.stderr)
                return 2
            state.settings.opponent = engine_settings(parse_engine(args.opponent))
    else:
        if args.report:
            print(f"no checkpoint at {args.state}", file=sys.stderr)
            return 2
        if not args.engine or (args.nodes is None) == (args.tc is None):
            print("a new run needs --engine and exactly one of --nodes and --tc", file=sys.stderr)
            return 2
        engine = parse_engine(args.engine)
        settings = RunSettings(engine=engine_settings(engine),
                               iterations=args.iterations, seed=args.seed, openings=args.openings,
                               nodes=args.nodes, tc=args.tc, check_every=args.check_every, tb_path=args.tb,
                               opponent=engine_settings(parse_engine(args.opponent)) if args.opponent else None)
        from engine.searcher import TUNABLES

        names = args.params.split(",") if args.params else None
        state = new_state(settings, TUNABLES, names, args.r_end)
        args.state.parent.mkdir(parents=True, exist_ok=True)
        state.save(args.state)
    if not args.report:
        quiet_engine_log()
        stop_on_sigterm()  # the games under way are dropped, the engines quit, the checkpoint is written
        deadline = time.time() + 60 * args.minutes if args.minutes else None
        try:
            run(state, args.state, args.concurrency, args.max_pairs, deadline, args.pgn)
        except MatchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    if args.plot:
        try:
            plot(state, args.plot)
        except ImportError:
            print("matplotlib is not installed (pip install numbat[tools]): no plot", file=sys.stderr)
    print(report(state))
    return 0


if __name__ == "__main__":
    sys.exit(main())
