"""The search's tunables and the SPSA tuner: hidden from users, live in tuning mode, a run that resumes."""

from __future__ import annotations

import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import pytest

from engine import search
from engine.board import Board
from engine.searcher import DRIVER_TUNABLES, TUNABLES, Searcher
from engine.timeman import Limits
from engine.tools import spsa
from engine.tools.match import parse_engine
from engine.uci import TUNING_SWITCH

REPO = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(REPO / "run_engine.py")]
MIDGAME = "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 8"


def uci_lines(text: str, tuning: bool) -> list[str]:
    """The output of a fresh engine fed ``text``, with or without the tuning switch."""
    env = {**os.environ, TUNING_SWITCH: "1" if tuning else "0"}
    out = subprocess.run(ENGINE, input=text, capture_output=True, text=True, timeout=120, cwd="/", env=env)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_every_tunable_has_its_index_its_default_and_a_range_around_it() -> None:
    names = [t.name for t in TUNABLES]
    assert len(names) == len(set(names))
    # The kernel reads a tunable at P_<name>, the place its declaration holds in sd.params.
    assert [getattr(search, "P_" + t.name) for t in search.KERNEL_TUNABLES] == list(range(search.PARAMS_SIZE))
    assert sorted(n for n in dir(search) if n.startswith("P_")) == sorted("P_" + t.name for t in search.KERNEL_TUNABLES)
    assert all(type(getattr(search, "P_" + t.name)) is int for t in search.KERNEL_TUNABLES)  # numba: a constant
    defaults = search.default_params()
    for t in search.KERNEL_TUNABLES:
        assert search.PARAM_INDEX[t.name] == getattr(search, "P_" + t.name)
        assert defaults[search.PARAM_INDEX[t.name]] == t.default, t.name
    for t in TUNABLES:
        assert t.low < t.default < t.high and 0 < t.step < t.high - t.low, t.name
    assert {t.name for t in DRIVER_TUNABLES} == {"LMR_BASE_X100", "LMR_DIVISOR_X100", "ASPIRATION_DELTA"}
    assert (search.new_search_data().params == search.default_params()).all()
    assert spsa.TUNING_SWITCH == TUNING_SWITCH


def test_tunables_are_uci_options_only_in_tuning_mode() -> None:
    normal = uci_lines("uci\nsetoption name RFP_MARGIN value 80\nisready\nquit\n", tuning=False)
    assert not any("RFP_MARGIN" in line for line in normal if line.startswith("option"))
    assert any("unknown option 'RFP_MARGIN'" in line for line in normal)
    tuning = uci_lines("uci\nsetoption name RFP_MARGIN value 999\nisready\nquit\n", tuning=True)
    declared = [line for line in tuning if line.startswith("option name")]
    for t in TUNABLES:
        assert f"option name {t.name} type spin default {t.default} min {t.low} max {t.high}" in declared
    assert any("RFP_MARGIN must be between 30 and 150" in line for line in tuning)
    assert tuning[-1] == "readyok"


def test_a_tunable_set_through_uci_changes_the_search_and_its_default_restores_it() -> None:
    env = {**os.environ, TUNING_SWITCH: "1"}
    with chess.engine.SimpleEngine.popen_uci(ENGINE, env=env) as engine:
        engine.configure({"OwnBook": False})

        def nodes(values: dict[str, int]) -> int:
            engine.configure(values)
            info = engine.analyse(chess.Board(MIDGAME), chess.engine.Limit(depth=9), game=object())
            return int(info["nodes"])

        default = nodes({})
        rfp, divisor = search.KERNEL_TUNABLES[search.P_RFP_MARGIN].default, round(search.LMR_DIVISOR * 100)
        assert nodes({"RFP_MARGIN": rfp}) == default
        assert nodes({"RFP_MARGIN": 140}) != default
        assert nodes({"RFP_MARGIN": rfp, "LMR_DIVISOR_X100": 150}) != default
        assert nodes({"LMR_DIVISOR_X100": divisor}) == default


def test_searcher_tunables_reach_every_thread_and_the_reduction_table() -> None:
    searcher = Searcher(hash_mb=8)
    searcher.set_threads(2)
    searcher.set_tunable("FUTILITY_MARGIN", 123)
    searcher.set_tunable("LMR_BASE_X100", 100)
    searcher.set_threads(3)  # a helper made after the change gets the values in use
    for sd in [searcher.sd] + [h.sd for h in searcher.helpers]:
        assert sd.params[search.P_FUTILITY_MARGIN] == 123
        assert (sd.reductions == search.reduction_table(1.0, search.LMR_DIVISOR)).all()
    searcher.set_tunable("ASPIRATION_DELTA", 35)
    assert searcher.aspiration_delta == 35
    with pytest.raises(KeyError):
        searcher.set_tunable("NO_SUCH_THING", 1)
    best, _ = searcher.think(Board(MIDGAME), Limits(depth=6), None)
    assert best != 0


def test_every_kernel_tunable_is_read_by_the_search() -> None:
    """Each tunable at one end of its range or the other changes the tree of depth-10
    searches, and back at its default restores it: a parameter the kernel never read would
    tune nothing."""
    searcher = Searcher(hash_mb=8)

    # The middlegame, and the same with Black a rook down: big eval margins at null-move nodes.
    positions = [MIDGAME, MIDGAME.replace("r1bq1rk1", "2bq1rk1")]

    def nodes() -> list[int]:
        counts = []
        for fen in positions:
            searcher.new_game()
            searcher.think(Board(fen), Limits(depth=10), None)
            counts.append(searcher.nodes())
        return counts

    default = nodes()
    for t in search.KERNEL_TUNABLES:
        at_ends = []
        for end in (t.low, t.high):
            searcher.set_tunable(t.name, end)
            at_ends.append(nodes())
        searcher.set_tunable(t.name, t.default)
        assert any(n != default for n in at_ends), t.name
    assert nodes() == default


def small_state(iterations: int = 200, seed: int = 7) -> spsa.TuningState:
    settings = spsa.RunSettings(engine={"cmd": ["none"]}, iterations=iterations, seed=seed, nodes=1000,
                                check_every=4, record_every=5)
    return spsa.new_state(settings, TUNABLES, ["RFP_MARGIN", "FUTILITY_BASE", "LMR_BASE_X100"])


def test_the_gain_schedule_ends_at_c_end_and_r_end() -> None:
    state = small_state(iterations=1000)
    schedule = state.schedule
    p = state.params[0]
    last = schedule.iterations - 1
    assert math.isclose(schedule.c_k(p, last), p.c_end, rel_tol=1e-3)
    assert math.isclose(schedule.a_k(p, last), p.r_end * p.c_end ** 2, rel_tol=1e-3)
    assert schedule.c_k(p, 0) > schedule.c_k(p, 500) > schedule.c_k(p, last)
    assert schedule.a_k(p, 0) > schedule.a_k(p, 500) > schedule.a_k(p, last)


def test_sides_are_the_values_plus_and_minus_the_perturbation_within_range() -> None:
    state = small_state()
    state.params[1].value = 0.0  # FUTILITY_BASE at its lower end: the minus side is clamped
    plus, minus = state.sides(3)
    delta = state.perturbation(3)
    assert delta == state.perturbation(3) and set(delta.values()) <= {-1, 1}
    for p in state.params:
        c = state.schedule.c_k(p, 3)
        assert plus[p.name] == round(p.clamp(p.value + c * delta[p.name]))
        assert minus[p.name] == round(p.clamp(p.value - c * delta[p.name]))
        assert p.low <= minus[p.name] <= p.high and p.low <= plus[p.name] <= p.high


def test_spsa_climbs_towards_a_hidden_optimum() -> None:
    """A fake match whose expected score favours values nearer a hidden optimum: the run
    must move every parameter towards it (a tuner that ignored results would not)."""
    optimum = {"RFP_MARGIN": 110, "FUTILITY_BASE": 40, "LMR_BASE_X100": 100}
    state = small_state(iterations=3000)
    for p in state.params:
        p.r_end = 0.02
    rng = random.Random(5)

    def strength(values: dict[str, int]) -> float:
        return -sum(((values[n] - optimum[n]) / 20) ** 2 for n in optimum)

    def play(a: dict[str, int], b: dict[str, int], pair: int) -> tuple[tuple[float, float], int]:
        edge = 1 / (1 + 10 ** ((strength(b) - strength(a)) * 40 / 400))
        return (float(rng.random() < edge), float(rng.random() < edge)), 0

    spsa.run(state, None, concurrency=1, play=play, progress=False)
    assert state.iteration == 3000
    for p in state.params:
        assert abs(p.value - optimum[p.name]) < abs(p.start - optimum[p.name]) / 2, (p.name, p.value)
    assert state.check_elo().elo > 0  # the check pairs saw the gain
    assert sum(state.plus_wdl) == 2 * state.iteration


def test_a_stopped_run_resumes_from_its_checkpoint_to_the_same_values(tmp_path: Path) -> None:
    """Deterministic fake games: 60 pairs in one go, or 25 then the rest after a reload, end equal."""

    def play(a: dict[str, int], b: dict[str, int], pair: int) -> tuple[tuple[float, float], int]:
        first = 1.0 if (a["RFP_MARGIN"] + pair) % 3 == 0 else 0.5
        second = 0.0 if (b["FUTILITY_BASE"] + pair) % 5 == 0 else 0.5
        return (first, second), 0

    whole = small_state(iterations=60)
    spsa.run(whole, None, play=play, progress=False)

    path = tmp_path / "state.json"
    part = small_state(iterations=60)
    spsa.run(part, path, max_pairs=25, play=play, progress=False)
    saved = json.loads(path.read_text())
    assert saved["pairs"] == 25 and saved["iteration"] < 25  # every fourth pair is a check pair
    resumed = spsa.TuningState.load(path)
    spsa.run(resumed, path, play=play, progress=False)
    assert resumed.iteration == whole.iteration == 60
    assert [p.value for p in resumed.params] == pytest.approx([p.value for p in whole.params], abs=1e-9)
    assert resumed.checks == whole.checks and resumed.history == whole.history
    assert spsa.TuningState.load(path).to_json()["params"] == resumed.to_json()["params"]


def test_report_and_running_elo() -> None:
    state = small_state()
    state.checks = [[i, 1.5] for i in range(10)]
    curve = spsa.running_elo(state)
    assert len(curve) == 10 and curve[-1][1] > 0 and curve[-1][2] <= curve[-1][1] <= curve[-1][3]
    text = spsa.report(state)
    rfp = search.KERNEL_TUNABLES[search.P_RFP_MARGIN].default
    assert f"setoption name RFP_MARGIN value {rfp}" in text and "10 check pairs" in text


def test_the_tuner_plays_real_games_with_the_tunables_set(tmp_path: Path) -> None:
    """Two real engines in tuning mode, very short fixed-node games: two pairs, a checkpoint, a report."""
    path = tmp_path / "run.json"
    pgn = tmp_path / "games.pgn"
    code = spsa.main(["--state", str(path), "--engine", f"cmd={sys.executable} {REPO / 'run_engine.py'}",
                      "option.OwnBook=false", "--nodes", "1500", "--iterations", "100", "--params",
                      "RFP_MARGIN,ASPIRATION_DELTA", "--max-pairs", "2", "--pgn", str(pgn)])
    assert code == 0
    state = spsa.TuningState.load(path)
    assert state.pairs == 2 and state.games == 4 and state.iteration == 2 and state.faults == 0
    assert pgn.read_text().count("[Result ") == 4
    # The switch reached the tuner's engines alone: an engine this process starts later (as
    # the next tests' do) must not list the tunables, which would load numba before uciok.
    assert TUNING_SWITCH not in os.environ


def test_the_checkpoint_keeps_an_engines_environment() -> None:
    engine = parse_engine(["cmd=python run_engine.py", "env.NUMBAT_EXAMPLE=1", "option.Hash=16"])
    assert spsa.engine_settings(engine)["env"] == {"NUMBAT_EXAMPLE": "1"}
    assert "env" not in spsa.engine_settings(parse_engine(["cmd=python run_engine.py"]))


def opponent_state(iterations: int = 200, seed: int = 7) -> spsa.TuningState:
    """A small run against a fixed opponent (the opponent's command is never started by the fakes)."""
    state = small_state(iterations, seed)
    state.settings.opponent = {"cmd": ["none"], "nodes": 500}
    return state


def test_against_an_opponent_spsa_climbs_towards_what_beats_it() -> None:
    """Fake games against a fixed opponent, whose expected score rises nearer a hidden optimum:
    each iteration reports four games (A's two, then B's two), the run moves every parameter
    towards the optimum, and the check pairs are the current values' games against the opponent."""
    optimum = {"RFP_MARGIN": 110, "FUTILITY_BASE": 40, "LMR_BASE_X100": 100}
    state = opponent_state(iterations=3000)
    for p in state.params:
        p.r_end = 0.02
    rng = random.Random(6)
    calls = {"tuning": 0, "check": 0}

    def strength(values: dict[str, int]) -> float:
        return -sum(((values[n] - optimum[n]) / 20) ** 2 for n in optimum)

    def games(values: dict[str, int]) -> tuple[float, float]:
        edge = 1 / (1 + 10 ** (-strength(values) * 40 / 400))   # the opponent is as strong as the optimum
        return float(rng.random() < edge), float(rng.random() < edge)

    def play(a: dict[str, int], b: dict[str, int] | None, pair: int) -> tuple[tuple[float, ...], int]:
        if b is None:
            calls["check"] += 1
            return games(a), 0
        calls["tuning"] += 1
        return games(a) + games(b), 0

    early = opponent_state(iterations=3000)
    spsa.run(state, None, concurrency=1, play=play, progress=False)
    assert state.iteration == 3000 == calls["tuning"] and len(state.checks) == calls["check"] > 0
    assert state.games == 4 * calls["tuning"] + 2 * calls["check"]
    for p in state.params:
        assert abs(p.value - optimum[p.name]) < abs(p.start - optimum[p.name]) / 2, (p.name, p.value)
    # The check Elo is against the opponent: the late checks score better than the start values would.
    start_points = sum(sum(games(early.start_values())) for _ in range(400)) / 400
    late_points = sum(points for _, points in state.checks[-100:]) / 100
    assert late_points > start_points + 0.2
    assert "against the opponent" in spsa.status_line(state)


def test_against_an_opponent_the_tuner_plays_real_games_with_node_odds(tmp_path: Path) -> None:
    """Real engines: the tuned pair in tuning mode and an opponent at its own node count.  Two
    tuning iterations of four games, one check pair of two, the opponent's limit in the PGN."""
    path = tmp_path / "run.json"
    pgn = tmp_path / "games.pgn"
    command = f"cmd={sys.executable} {REPO / 'run_engine.py'}"
    code = spsa.main(["--state", str(path), "--engine", command, "option.OwnBook=false", "--opponent", command,
                      "nodes=600", "option.OwnBook=false", "--nodes", "1500", "--iterations", "100", "--params",
                      "RFP_MARGIN", "--check-every", "3", "--max-pairs", "3", "--pgn", str(pgn)])
    assert code == 0
    state = spsa.TuningState.load(path)
    assert state.settings.opponent is not None and state.settings.opponent["nodes"] == 600
    assert state.pairs == 3 and state.iteration == 2 and len(state.checks) == 1 and state.faults == 0
    assert state.games == 10
    text = pgn.read_text()
    assert text.count("[Result ") == 10
    assert text.count('[Limit "nodes=1500 nodes.opponent=600"]') == 10
    # Every game has the opponent on one side, and each tuned engine met it with both colours.
    assert text.count('[White "opponent"]') == 5 and text.count('[Black "opponent"]') == 5
    assert TUNING_SWITCH not in os.environ


def test_an_engines_own_limit_replaces_the_matchs() -> None:
    """``nodes=N`` or ``depth=N`` among an engine's keys: parsed, kept by the checkpoint and the
    match's fingerprint only when given, and sent in place of a fixed-work match's limit (and
    never in a timed match, where the clock is the limit)."""
    import threading

    from engine.tools.match import GamePlayer, MatchConfig, TimeControl, match_fingerprint

    odds = parse_engine(["cmd=python run_engine.py", "name=weak", "nodes=700"])
    shallow = parse_engine(["cmd=python run_engine.py", "name=shallow", "depth=9"])
    plain = parse_engine(["cmd=python run_engine.py", "name=main"])
    assert (odds.nodes, odds.depth, shallow.nodes, shallow.depth, plain.nodes, plain.depth) == \
        (700, None, None, 9, None, None)
    assert spsa.engine_settings(odds)["nodes"] == 700 and spsa.engine_settings(shallow)["depth"] == 9
    assert not {"nodes", "depth"} & set(spsa.engine_settings(plain))
    config = MatchConfig(engines=[odds, shallow, plain], nodes=5000, progress=False)
    engines = match_fingerprint(config)["engines"]
    assert engines[0]["nodes"] == 700 and engines[1]["depth"] == 9 and not {"nodes", "depth"} & set(engines[2])
    player = GamePlayer(config, threading.Event())
    clocks = {chess.WHITE: 10.0, chess.BLACK: 10.0}
    limits = [player._limit(clocks, 0, None, engine) for engine in (odds, shallow, plain)]
    assert [(limit.nodes, limit.depth) for limit in limits] == [(700, None), (None, 9), (5000, None)]
    timed = GamePlayer(MatchConfig(engines=[odds, plain], tc=TimeControl.parse("10+0.1"), progress=False),
                       threading.Event())
    limit = timed._limit(clocks, 0, None, odds)
    assert limit.nodes is None and limit.white_clock == 10.0
    with pytest.raises(ValueError, match="unknown key"):
        parse_engine(["cmd=python run_engine.py", "movetime=3"])
