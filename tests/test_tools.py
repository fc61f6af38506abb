"""The match, PGN-statistics and suite runners (engine.tools.match / pgn_stats / suite) and the engine
plumbing they share (engine.tools.engines), end to end.

The Numbat tests start the real engine (``run_engine.py``) and need it to answer
``go nodes N``.  The runner's own bookkeeping (faults, pairs, SPRT stop) is
checked with a tiny scripted UCI engine written to a temporary directory, so it
needs no engine binary.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import numpy as np
import pytest

from engine.tools.engines import EngineConfig, EngineProcess, MatchError, play_move
from engine.tools.match import (
    GamePlayer,
    MatchConfig,
    MatchState,
    Opening,
    SprtConfig,
    TimeControl,
    parse_engine,
    run_match,
)
from engine.tools.pgn_stats import clock_use, move_times, read_games, tally
from engine.tools.pgn_stats import main as pgn_stats_main
from engine.tools.progress import ProgressBar
from engine.tools.stats import elo_pentanomial, sprt_pentanomial
from engine.tools.suite import load_suite, run_suite

REPO = Path(__file__).resolve().parents[1]
NUMBAT = [sys.executable, str(REPO / "run_engine.py")]

VALID_RESULTS = {"1-0", "0-1", "1/2-1/2"}

# A scripted UCI engine: plays seeded random legal moves; with the argument
# "illegal" it answers its third search of each process with an illegal move,
# with "crash" it exits at its third search, with "hang" it never answers it;
# "log:PATH" appends each search's go command to PATH, "starts:PATH" each start
# and setoption.
SCRIPTED_ENGINE = '''
import random
import sys

import chess

mode = sys.argv[1]
rng = random.Random(7)
board = chess.Board()
searches = 0
for line in sys.stdin:
    tokens = line.split()
    if not tokens:
        continue
    if mode.startswith("starts:") and tokens[0] in ("uci", "setoption"):
        with open(mode[7:], "a") as log:
            print("start" if tokens[0] == "uci" else line.strip(), file=log)
    if tokens[0] == "uci":
        print("id name scripted", flush=True)
        print("option name Tuned type spin default 0 min 0 max 10", flush=True)
        print("uciok", flush=True)
    elif tokens[0] == "isready":
        print("readyok", flush=True)
    elif tokens[0] == "position":
        rest = tokens[1:]
        if rest[0] == "startpos":
            board = chess.Board()
            rest = rest[1:]
        else:
            board = chess.Board(" ".join(rest[1:7]))
            rest = rest[7:]
        for uci in rest[1:] if rest and rest[0] == "moves" else []:
            board.push_uci(uci)
    elif tokens[0] == "go":
        searches += 1
        if mode.startswith("log:"):
            with open(mode[4:], "a") as log:
                print(("white " if board.turn else "black ") + line.strip(), file=log)
        if mode == "illegal" and searches == 3:
            print("bestmove a1a1", flush=True)
            continue
        if mode == "crash" and searches == 3:
            sys.exit(3)
        if mode == "hang" and searches == 3:
            continue
        move = rng.choice(sorted(board.legal_moves, key=lambda m: m.uci()))
        print("info depth 1 score cp 0 nodes 1", flush=True)
        print("bestmove " + move.uci(), flush=True)
    elif tokens[0] == "quit":
        break
'''


def _scripted(tmp_path: Path, mode: str, name: str) -> EngineConfig:
    """An EngineConfig for the scripted engine in ``mode``."""
    script = tmp_path / "scripted_engine.py"
    script.write_text(SCRIPTED_ENGINE)
    return EngineConfig(cmd=[sys.executable, str(script), mode], name=name)


def _read_games(path: Path) -> list[chess.pgn.Game]:
    """Every game of a PGN file."""
    games = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


ENV_ENGINE = """
import os, sys
for line in sys.stdin:
    if line.strip() == "uci":
        print("id name " + os.environ.get("NUMBAT_TEST_VARIABLE", "unset"), flush=True)
        print("uciok", flush=True)
    elif line.strip() == "isready":
        print("readyok", flush=True)
    elif line.strip() == "quit":
        break
"""


def test_engine_environment_reaches_that_engine_alone(tmp_path: Path) -> None:
    script = tmp_path / "env_engine.py"
    script.write_text(ENV_ENGINE)
    config = parse_engine([f"cmd={sys.executable} {script}", "env.NUMBAT_TEST_VARIABLE=seen", "option.Hash=8"])
    assert config.env == {"NUMBAT_TEST_VARIABLE": "seen"} and config.options == {"Hash": "8"}
    with_variable = EngineProcess(EngineConfig(cmd=config.cmd, name="with", env=config.env))
    without = EngineProcess(EngineConfig(cmd=config.cmd, name="without"))
    try:
        assert with_variable.get().id["name"] == "seen"
        assert without.get().id["name"] == "unset"
    finally:
        with_variable.quit()
        without.quit()
    assert "NUMBAT_TEST_VARIABLE" not in os.environ


def test_numbat_self_match_writes_valid_pgn(tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    config = MatchConfig(
        engines=[EngineConfig(cmd=NUMBAT, name="numbat"), EngineConfig(cmd=NUMBAT, name="numbat")],
        nodes=2000, games=2, rounds=1, maxmoves=100, pgn_out=str(pgn), progress=False,
        start_timeout=300.0, hang_timeout=120.0)
    result = run_match(config)
    assert len(result.games) == 2
    assert {g.result for g in result.games} <= VALID_RESULTS
    for stats in result.engines.values():
        assert (stats.time_losses, stats.illegal_moves, stats.crashes) == (0, 0, 0)
    assert sum(result.pairings[0].pentanomial) == 1

    games = _read_games(pgn)
    assert len(games) == 2
    assert [g.headers["White"] for g in games] == ["numbat", "numbat-2"]
    assert [g.headers["Black"] for g in games] == ["numbat-2", "numbat"]
    for game in games:
        assert not game.errors
        assert game.headers["Result"] in VALID_RESULTS
        assert game.headers["Termination"]
        board = game.end().board()
        if game.headers["Termination"] == "checkmate":
            assert board.is_checkmate()


def test_chess960_match_plays_legal_games_from_chess960_openings(tmp_path: Path) -> None:
    """Openings with castling rights on rooks away from the a/h files, both engines in Chess960
    mode: every game is legal as a Chess960 game, and the PGN says so."""
    epd = tmp_path / "frc.epd"
    epd.write_text("nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w KQkq - 0 1\n"
                   "bbrnkqnr/pppppppp/8/8/8/8/PPPPPPPP/BBRNKQNR w KQkq - 0 1\n")
    pgn = tmp_path / "frc.pgn"
    config = MatchConfig(
        engines=[EngineConfig(cmd=NUMBAT, name="numbat"), EngineConfig(cmd=NUMBAT, name="numbat")],
        openings=str(epd), chess960=True, nodes=1500, games=2, rounds=2, maxmoves=60, pgn_out=str(pgn),
        progress=False, start_timeout=300.0, hang_timeout=120.0)
    result = run_match(config)
    assert len(result.games) == 4
    for stats in result.engines.values():
        assert (stats.time_losses, stats.illegal_moves, stats.crashes) == (0, 0, 0)
    for game in _read_games(pgn):
        assert game.headers["Variant"] == "Chess960" and not game.errors
        board = game.board()
        assert board.chess960 and board.castling_rights  # the rights survived the opening's parse
        for move in game.mainline_moves():
            assert move in board.legal_moves
            board.push(move)


def test_numbat_suite_solves_mate_in_one(tmp_path: Path) -> None:
    epd = tmp_path / "mate.epd"
    epd.write_text('6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - bm Ra8#; id "back-rank mate";\n')
    results = run_suite([epd], EngineConfig(cmd=NUMBAT, name="numbat"), nodes=2000, progress=False,
                        start_timeout=300.0, hang_timeout=120.0)
    assert results[0].total == 1
    assert results[0].solved == 1, results[0].results[0]


def test_runner_counts_illegal_moves_and_pairs(tmp_path: Path) -> None:
    pgn = tmp_path / "faults.pgn"
    config = MatchConfig(engines=[_scripted(tmp_path, "random", "good"), _scripted(tmp_path, "illegal", "bad")],
                         nodes=1, games=4, maxmoves=30, pgn_out=str(pgn), progress=False, seed=3)
    result = run_match(config)
    bad, good = result.engines["bad"], result.engines["good"]
    assert bad.illegal_moves == 4 and bad.losses == 4
    assert good.wins == 4 and good.illegal_moves == 0
    assert result.pairings[0].pentanomial == [0, 0, 0, 0, 2]
    games = _read_games(pgn)
    assert len(games) == 4
    assert all(g.headers["Termination"] == "illegal move" for g in games)


@pytest.mark.parametrize(("mode", "failure"), [("hang", "killed"), ("crash", "crash"), ("illegal", "error")])
def test_play_move_tells_a_hang_from_a_crash_and_an_illegal_move(tmp_path: Path, mode: str, failure: str) -> None:
    process = EngineProcess(_scripted(tmp_path, mode, mode))
    board, game, limit = chess.Board(), object(), chess.engine.Limit(nodes=1)
    try:
        for _ in range(2):
            attempt = play_move(process, board, limit, deadline=30.0, game=game)
            assert attempt.failure is None and attempt.play is not None and attempt.play.move in board.legal_moves
            board.push(attempt.play.move)
        attempt = play_move(process, board, limit, deadline=0.5, game=game)
        assert (attempt.failure, attempt.play, attempt.hung) == (failure, None, mode == "hang")
        assert ("a1a1" in attempt.message) == (mode == "illegal")
    finally:
        process.quit()


def test_time_control_parses_fischer_and_repeating_clocks() -> None:
    assert TimeControl.parse("10+0.1") == TimeControl(10.0, 0.1)
    assert TimeControl.parse("1:30+1") == TimeControl(90.0, 1.0)
    assert TimeControl.parse("40/60") == TimeControl(60.0, 0.0, 40)
    assert TimeControl.parse("40/1:00+0.5") == TimeControl(60.0, 0.5, 40)
    assert str(TimeControl.parse("40/60")) == "40/60+0"
    assert TimeControl.parse(str(TimeControl(5.0, 0.05, 20))) == TimeControl(5.0, 0.05, 20)
    for bad in ("0/60", "x/60", "40/0", "40/-5", "10+-1"):
        with pytest.raises(ValueError):
            TimeControl.parse(bad)


def test_repeating_control_sends_movestogo_and_refills_the_clock(tmp_path: Path) -> None:
    """3 moves in 60 s: each side hears movestogo 3, 2, 1, 3, ... and gets 60 s more after its third move."""
    log = tmp_path / "go.txt"
    config = MatchConfig(engines=[_scripted(tmp_path, f"log:{log}", "a"), _scripted(tmp_path, "random", "b")],
                         tc=TimeControl.parse("3/60"), games=2, maxmoves=7, progress=False, seed=5)
    result = run_match(config)
    assert len(result.games) == 2
    assert all(g.fault is None for g in result.games)
    lines = log.read_text().split("\n")[:-1]
    by_side: dict[str, list[dict[str, float]]] = {"white": [], "black": []}
    for line in lines:
        side, _, go = line.partition(" ")
        words = go.split()
        by_side[side].append({words[i]: float(words[i + 1]) for i in range(1, len(words) - 1, 2)})
    # Engine "a" plays White in the first game (7 of its moves) and Black in the second.
    white = by_side["white"]
    assert [int(go["movestogo"]) for go in white] == [3, 2, 1, 3, 2, 1, 3]
    # "a" has spent almost nothing: its clock stays near 60 s within a period, then grows by 60 s.
    clocks = [go["wtime"] / 1000 for go in white]
    assert all(55 < c <= 60 for c in clocks[:3])
    assert all(115 < c <= 120 for c in clocks[3:6])
    assert 175 < clocks[6] <= 180
    assert [int(go["movestogo"]) for go in by_side["black"]][:4] == [3, 2, 1, 3]


def test_pgn_stats_reads_back_what_the_runner_counted(tmp_path: Path) -> None:
    pgn = tmp_path / "two_pairings.pgn"
    runs = []
    for names, modes, games in ((("good", "bad"), ("random", "illegal"), 4),
                                (("left", "right"), ("random", "random"), 6)):
        config = MatchConfig(engines=[_scripted(tmp_path, modes[0], names[0]), _scripted(tmp_path, modes[1], names[1])],
                             nodes=1, games=games, maxmoves=30, pgn_out=str(pgn), progress=False, seed=5)
        runs.append(run_match(config))
    pairings, engines = tally(read_games([pgn]))
    assert len(pairings) == 2
    for run, pooled in zip(runs, pairings, strict=True):
        counted = run.pairings[0]
        assert (pooled.first, pooled.second) == (counted.first, counted.second)
        assert (pooled.wins, pooled.draws, pooled.losses) == (counted.wins, counted.draws, counted.losses)
        assert pooled.pentanomial == counted.pentanomial
        for name, totals in run.engines.items():
            assert engines[name] == totals
    assert engines["bad"].illegal_moves == 4


def _write_game(handle, white: str, black: str, round_tag: str, result: str, termination: str,
                moves: str = "e2e4") -> None:
    """Append one game in the runner's header layout."""
    game = chess.pgn.Game()
    game.headers.update(White=white, Black=black, Round=round_tag, Result=result, Termination=termination)
    node = game
    for uci in moves.split():
        node = node.add_variation(chess.Move.from_uci(uci))
    handle.write(str(game) + "\n\n")


def test_pgn_stats_pools_files_pairs_and_recorded_counts(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "a.pgn", tmp_path / "b.pgn"
    with open(first, "w", encoding="utf-8") as handle:
        _write_game(handle, "exp", "main", "1.1", "1-0", "checkmate")
        _write_game(handle, "main", "exp", "1.2", "1/2-1/2", "threefold repetition")   # pair 1: 1.5 points
        _write_game(handle, "exp", "main", "2.1", "0-1", "time forfeit")              # its pair never finished
    with open(second, "w", encoding="utf-8") as handle:
        _write_game(handle, "main", "exp", "1.1", "1-0", "adjudication: resign")      # pair numbers restart
        # White (exp) to move and out of time, but Black cannot mate: a draw, still exp's forfeit.
        _write_game(handle, "exp", "main", "1.2", "1/2-1/2", "time forfeit (opponent cannot mate)", "e2e4 e7e5")
        _write_game(handle, "exp", "main", "2.1", "*", "")                             # unfinished: skipped
    pairings, engines = tally(read_games([first, second]), first="exp")
    assert len(pairings) == 1
    pooled = pairings[0]
    assert (pooled.first, pooled.second) == ("exp", "main")
    assert (pooled.wins, pooled.draws, pooled.losses) == (1, 2, 2)
    assert pooled.pentanomial == [0, 1, 0, 1, 0]  # b.pgn's pair scores 0.5 for exp
    assert (engines["exp"].time_losses, engines["main"].time_losses) == (2, 0)

    assert pgn_stats_main([str(first), str(second), "--first", "exp", "--pairs", "3,10,20,12,5",
                           "--sprt", "elo0=0", "elo1=10"]) == 0
    out = capsys.readouterr().out
    counts = [3, 11, 20, 13, 5]
    assert out.startswith("5 games from 2 file(s), 1 without their pair's other game, plus 50 recorded pairs")
    assert f"Elo {elo_pentanomial(counts).format()}" in out
    assert f"SPRT {sprt_pentanomial(counts, 0, 10).format()}" in out
    with pytest.raises(SystemExit):
        pgn_stats_main([str(first), "--pairs", "1,2,3"])


def test_pgn_stats_times_each_engines_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pgn = tmp_path / "timed.pgn"
    game = chess.pgn.Game()
    game.headers.update(White="exp", Black="main", Round="1.1", Result="1/2-1/2", Termination="adjudication",
                        TimeControl="10+0.1")
    node = game.add_variation(chess.Move.from_uci("e2e4"), comment="book")
    for uci, comment in (("e7e5", "-0.20/9 0.300s"), ("g1f3", "+0.31/10 0.100s"), ("b8c6", "-0.25/10 0.700s"),
                         ("f1b5", "+0.30/11 0.400s"), ("a7a6", "book exp: 0.900s used")):  # exp then forfeited
        node = node.add_variation(chess.Move.from_uci(uci), comment=comment)
    pgn.write_text(str(game) + "\n\n", encoding="utf-8")
    assert move_times([pgn]) == {"main": [0.3, 0.7], "exp": [0.1, 0.4]}  # the book move has no time
    use = clock_use([pgn])
    assert use["exp"].early == [0.1, 0.4] and use["main"].early == [0.3, 0.7]
    # Each timed move adds the increment and takes its time: 10 + 2 x 0.1 - 0.5 and 10 + 2 x 0.1 - 1.0.
    assert use["exp"].left == pytest.approx([9.7]) and use["main"].left == pytest.approx([9.2])
    assert pgn_stats_main([str(pgn), "--times"]) == 0
    out = capsys.readouterr().out
    assert "time per move exp: 0.250 s mean, 0.250 s median over 2 moves" in out
    assert "time per move main: 0.500 s mean, 0.500 s median over 2 moves" in out
    assert "clock exp: 0.250 s a move in its first 20 moves, 9.70 s left at the end (mean over 1 games" in out
    assert "clock main: 0.500 s a move in its first 20 moves, 9.20 s left at the end (mean over 1 games" in out


def test_sprt_stops_a_decided_match(tmp_path: Path) -> None:
    config = MatchConfig(engines=[_scripted(tmp_path, "random", "good"), _scripted(tmp_path, "illegal", "bad")],
                         nodes=1, games=2, rounds=50, progress=False, seed=3,
                         sprt=SprtConfig(elo0=0, elo1=400, alpha=0.05, beta=0.05))
    result = run_match(config)
    assert result.stopped == "SPRT H1"
    assert result.sprt is not None and result.sprt.decision == "H1"
    assert len(result.games) < 100


def test_a_match_resumes_from_its_state_file_without_replaying_a_game(tmp_path: Path) -> None:
    state, pgn = tmp_path / "match.json", tmp_path / "games.pgn"

    def config(rounds: int, **changes: object) -> MatchConfig:
        settings: dict[str, object] = dict(
            engines=[_scripted(tmp_path, "random", "a"), _scripted(tmp_path, "random", "b")], nodes=1,
            rounds=rounds, maxmoves=20, pgn_out=str(pgn), state_path=str(state), progress=False)
        settings.update(changes)
        return MatchConfig(**settings)  # type: ignore[arg-type]

    first = run_match(config(rounds=2))
    seed = first.seed
    assert len(MatchState.load(state).games) == 4
    # Drop the last game, as if the match had been stopped while it was being played.
    saved = MatchState.load(state)
    saved.games.pop()
    saved.save(state)
    # Resume (on "another machine": the engines' commands may differ) with two more rounds.
    resumed = run_match(config(rounds=4, concurrency=2))
    assert resumed.seed == seed
    rows = MatchState.load(state).games
    assert sorted((pair, slot) for _, pair, slot, *_ in rows) == [(p, s) for p in range(4) for s in (0, 1)]
    assert len(resumed.games) == 8 and resumed.engines["a"].games == 8
    assert sum(resumed.pairings[0].pentanomial) == 4
    played = [g.headers["Round"] for g in _read_games(pgn)]
    assert sorted(played[:4]) == ["1.1", "1.2", "2.1", "2.2"]
    assert sorted(played[4:]) == ["2.2", "3.1", "3.2", "4.1", "4.2"]  # the dropped game, then the new rounds
    # Openings follow the recorded seed: the replayed game starts where its partner did.
    games = _read_games(pgn)
    first_of_pair = [g for g in games[:4] if g.headers["Round"] == "2.1"][0]
    replayed = [g for g in games[4:] if g.headers["Round"] == "2.2"][0]
    assert replayed.headers["OpeningFEN"] == first_of_pair.headers["OpeningFEN"]
    # A different match cannot resume from this state.
    with pytest.raises(MatchError, match="nodes"):
        run_match(config(rounds=4, nodes=2))
    with pytest.raises(MatchError, match="seed"):
        run_match(config(rounds=4, seed=seed + 1))


def test_a_resumed_sprt_that_was_decided_plays_no_more_games(tmp_path: Path) -> None:
    state = tmp_path / "sprt.json"
    config = MatchConfig(engines=[_scripted(tmp_path, "random", "good"), _scripted(tmp_path, "illegal", "bad")],
                         nodes=1, games=2, rounds=50, progress=False, seed=3, state_path=str(state),
                         sprt=SprtConfig(elo0=0, elo1=400, alpha=0.05, beta=0.05))
    decided = run_match(config)
    assert decided.stopped == "SPRT H1"
    again = run_match(config)
    assert again.stopped == "SPRT H1" and len(again.games) == len(decided.games)
    assert again.pairings[0].pentanomial == decided.pairings[0].pentanomial


def test_suite_reads_bm_am_and_sts_points(tmp_path: Path) -> None:
    epd = tmp_path / "mixed.epd"
    epd.write_text(
        '1kr5/3n4/q3p2p/p2n2p1/PppB1P2/5BP1/1P2Q2P/3R2K1 w - - bm f5; id "STS.001"; '
        'c0 "f5=10, Be5+=2, Bf2=3, Bg4=2";\n'
        '2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - bm Qg6; id "WAC.001"; c0 "free text, not points";\n'
        '6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - am Rb1; id "avoid";\n')
    sts, wac, avoid = load_suite(epd)
    board = sts.board()
    assert sts.max_points == 10
    assert sts.judge(board.parse_san("f5")) == (True, 10)
    assert sts.judge(board.parse_san("Bf2")) == (False, 3)
    assert sts.judge(board.parse_san("Kh1")) == (False, 0)
    assert not wac.points
    assert wac.judge(wac.board().parse_san("Qg6")) == (True, 0)
    assert wac.judge(wac.board().parse_san("Qh4")) == (False, 0)
    assert avoid.judge(avoid.board().parse_san("Ra8#")) == (True, 0)
    assert avoid.judge(avoid.board().parse_san("Rb1")) == (False, 0)


def test_progress_bar_counts_and_can_be_switched_off(capsys: pytest.CaptureFixture[str]) -> None:
    bar = ProgressBar(2, "pos", enabled=True)
    bar.update("first")
    bar.update("second")
    bar.close()
    shown = capsys.readouterr().err
    assert "2/2" in shown and "second" in shown
    silent = ProgressBar(2, "pos", enabled=False)
    silent.update("first")
    silent.close()
    assert silent.done == 1 and capsys.readouterr().err == ""


def test_search_stats_cutoff_table_gives_rates_and_shares() -> None:
    from engine.tools.search_stats import cutoff_table

    cutoffs = np.zeros((4, 2, 2), dtype=np.int64)
    cutoffs[0, 0] = [10, 90]   # depth 1, no TT move: 10 later-move cutoffs, 90 first-move
    cutoffs[3, 1] = [30, 70]   # depth 4+, TT move
    rows = {tuple(line.split()[:2]): line.split()[2:] for line in cutoff_table(cutoffs).splitlines()[1:]}
    assert rows[("1", "no")] == ["100", "90.0%", "25.0%"]
    assert rows[("4+", "yes")] == ["100", "70.0%", "75.0%"]
    assert rows[("2", "yes")] == ["0", "n/a", "0.0%"]
    assert len(rows) == 8


def test_search_stats_without_reverse_futility_counts_the_easy_cutoffs(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Switching reverse futility off searches the nodes it would prune: more cutoffs, a higher first-move rate."""
    from engine.tools import search_stats

    def run(*extra: str) -> tuple[int, int, float]:
        monkeypatch.setattr(sys, "argv", ["search_stats", "--depth", "7", "--from-depth", "6", *extra])
        assert search_stats.main() == 0
        out = capsys.readouterr().out
        nodes = int(next(line for line in out.splitlines() if line.startswith("nodes:")).split()[1])
        words = next(line for line in out.splitlines() if line.startswith("first-move cutoffs:")).split()
        return nodes, int(words[-3]), float(words[2].rstrip("%"))

    nodes, cutoffs, rate = run()
    nodes_off, cutoffs_off, rate_off = run("--without", "reverse-futility")
    assert nodes_off > nodes and cutoffs_off > cutoffs
    assert rate_off > rate


def test_search_stats_rejects_an_unknown_step(capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.tools import search_stats

    monkeypatch.setattr(sys, "argv", ["search_stats", "--without", "null-move,alpha-beta"])
    with pytest.raises(SystemExit) as exit_info:
        search_stats.main()
    assert exit_info.value.code == 2
    assert "unknown search step(s) alpha-beta" in capsys.readouterr().err


def test_profile_writes_a_perf_map_that_names_the_search(tmp_path: Path) -> None:
    """The perf map names ``search`` at the address the kernel was loaded at, next to its object code."""
    stem = tmp_path / "search"
    subprocess.run([sys.executable, "-m", "engine.tools.profile", "--depth", "2", "--object", str(stem)],
                   check=True, cwd=REPO, timeout=300)
    info = json.loads(stem.with_suffix(".json").read_text())
    perf_map = Path(f"/tmp/perf-{info['pid']}.map")
    try:
        entries = {}
        for line in perf_map.read_text().splitlines():
            address, size, name = line.split(" ", 2)
            entries[name] = (int(address, 16), int(size, 16))
    finally:
        perf_map.unlink()
    search_symbols = [name for name in info["addresses"] if name.startswith("_ZN6engine6search6search")]
    assert len(search_symbols) == 1
    assert entries["engine.search.search"][0] == info["addresses"][search_symbols[0]]
    assert entries["engine.search.search"][1] > 10_000  # the whole search, helpers inlined
    assert "engine.movegen.generate_moves" in entries
    assert stem.with_suffix(".o").read_bytes()[:4] == b"\x7fELF"


def test_threads_tool_reports_time_to_depth_per_thread_count(capsys: pytest.CaptureFixture[str]) -> None:
    from engine.tools import threads

    assert threads.main(["--depth", "6", "--threads", "1,2", "--hash", "8", "--no-progress"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    assert [row[0] for row in rows] == ["1", "2"]
    assert rows[0][3] == "1.00x"
    for row in rows:
        assert float(row[1]) > 0 and int(row[4]) > 1000


def test_cache_diff_tells_identical_machine_code_from_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.tools.cache_diff import main as cache_diff

    def fill_cache(name: str, body: str) -> Path:
        source = tmp_path / name / "tiny_kernel.py"
        source.parent.mkdir()
        source.write_text(f"from numba import njit\n\n@njit(cache=True)\ndef tiny(x):\n    return {body}\n")
        code = "import tiny_kernel; print(tiny_kernel.tiny(3))"
        env = {"PATH": "/usr/bin:/bin", "NUMBA_CACHE_DIR": str(tmp_path / name / "cache"),
               "PYTHONPATH": str(source.parent)}
        subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
        return tmp_path / name / "cache"

    first, same, changed = fill_cache("a", "x * 7 + 1"), fill_cache("b", "x * 7 + 1"), fill_cache("c", "x * x - 5")
    monkeypatch.syspath_prepend(str(tmp_path / "a"))  # a cache entry names its module, which unpickling imports
    assert cache_diff([str(first), str(same)]) == 0
    assert "1 kernels identical, 0 differ" in capsys.readouterr().out
    assert cache_diff([str(first), str(changed)]) == 1
    assert "differs: tiny_kernel.tiny" in capsys.readouterr().out


def test_speed_splits_bench_time_at_the_kernel_calls() -> None:
    """``speed``'s driver figure: a real share of a whole ``bench``, and the kernel is restored."""
    import engine.searcher
    from engine.tools.speed import driver_time

    kernel = engine.searcher.search
    least, most, total = driver_time(1)
    assert 0.0 < least <= most < total
    assert least < 0.5 * total  # nearly all of bench is the kernel's
    assert engine.searcher.search is kernel


def test_calibration_results_round_trip_and_table(tmp_path) -> None:
    """The calibration's results file resumes by setting, and its README table says which settings are on label."""
    from engine.tools.calibrate import load_results, markdown_table, save_results

    entries = {
        1400: {"elo": 1400, "games": 100, "wins": 40, "draws": 10, "losses": 50, "elo_diff": -34.9, "elo_low": -101.2,
               "elo_high": 30.0, "tc": "10+0.1", "acpl": 81.4, "blunder_share": 0.061},
        1900: {"elo": 1900, "games": 100, "wins": 20, "draws": 10, "losses": 70, "elo_diff": -191.0, "elo_low": -260.0,
               "elo_high": -130.0, "tc": "10+0.1", "acpl": None, "blunder_share": None},
    }
    path = tmp_path / "calibration.json"
    save_results(path, entries)
    assert load_results(path) == entries
    rows = markdown_table(list(entries.values())).splitlines()
    assert rows[2] == "| 1400 | 100 | 40-10-50 | -35 (-101 to +30) | yes | 81 cp | 6.1% |"
    assert rows[3].startswith("| 1900 | 100 | 20-10-70 | -191 (-260 to -130) | no |")


def test_compile_times_report_sums_each_kernels_own_seconds() -> None:
    """The compile report: step times and their total, then kernels ranked by their own
    seconds (a kernel compiled twice is one row with both compiles counted)."""
    from engine.tools.compile_times import report

    result = {"steps": {"search": 30.0, "board": 5.0},
              "kernels": [["search.search", "(a)", 28.0, 20.0], ["movegen.generate_moves", "(b)", 4.0, 4.0],
                          ["movegen.generate_moves", "(c)", 3.5, 3.5], ["tt.hashfull", "(d)", 0.2, 0.2]]}
    lines = report(result, top=2)
    assert "| all | 35.0 |" in lines
    search_row = lines.index("| search.search | 1 | 20.0 | 28.0 |")
    assert search_row < lines.index("| movegen.generate_moves | 2 | 7.5 | 7.5 |")
    assert lines[-1] == "| (1 more) | 1 | 0.2 | |"


def test_warm_up_stages_compile_the_search_after_its_callees_and_default_to_one_job_per_core() -> None:
    """``numbat warmup`` compiles the search's large callees (evaluation, tablebase prober) in the
    stage before the search, runs every step once, and never starts more workers than a stage
    has steps or the machine has cores."""
    import os

    from engine.warmup import WARM_UP_STAGES, WARM_UP_STEPS, default_jobs

    names = [list(stage) for stage in WARM_UP_STAGES]
    search_stage = next(i for i, stage in enumerate(names) if "search" in stage)
    earlier = {name for stage in names[:search_stage] for name in stage}
    assert {"evaluation", "tablebases"} <= earlier
    assert sorted(WARM_UP_STEPS) == sorted(name for stage in names for name in stage)
    assert 1 <= default_jobs() <= min(max(map(len, names)), len(os.sched_getaffinity(0)))


def test_datagen_relabels_a_fens_file_keeping_results_and_chess960_castling(tmp_path: Path) -> None:
    """``datagen --fens`` reads FEN;score;result lines (X-FEN castling kept), drops checks, relabels the rest."""
    from engine.tools import datagen

    chess960_start = "bnrbkrqn/pppppppp/8/8/8/8/PPPPPPPP/BNRBKRQN w KQkq - 0 1"  # rooks on c and f
    in_check = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
    source = tmp_path / "selfplay.txt"
    source.write_text(f"{chess.STARTING_FEN};777;1.0\n{chess960_start};-777;0.0\n{in_check};-900;0.0\nnot a record\n")
    samples = list(datagen.fens_samples(source))
    assert [(s.fen, s.result) for s in samples] == [(chess.STARTING_FEN, "1.0"), (chess960_start, "0.0"),
                                                     (in_check, "0.0")]
    assert all(s.chess960 for s in samples)  # and "not a record" was skipped (the list above)
    # Read as standard chess, the Chess960 start would lose its castling rights; read as X-FEN it keeps them.
    rooks_on_c_and_f = chess.BB_C1 | chess.BB_F1 | chess.BB_C8 | chess.BB_F8
    assert chess.Board(chess960_start, chess960=True).castling_rights == rooks_on_c_and_f
    assert datagen.filter_reason(samples[2], 3, False, False) == "in check"

    class Recorder:  # the board the labelling engine is given keeps the Chess960 castling rights
        def analyse(self, board: chess.Board, limit: chess.engine.Limit) -> dict:
            self.board = board.copy()
            return {}

    recorder = Recorder()
    assert datagen.label(recorder, samples[1], chess.engine.Limit(depth=1)).reason == "no score or pv"  # type: ignore[arg-type]
    assert recorder.board.chess960 and recorder.board.castling_rights == rooks_on_c_and_f

    out = tmp_path / "relabelled.txt"
    numbat = f"{sys.executable} {Path(__file__).resolve().parents[1] / 'run_engine.py'}"
    assert datagen.main(["--fens", str(source), "--depth", "3", "--engine", numbat, "--out", str(out),
                         "--no-progress"]) == 0
    lines = [line.split(";") for line in out.read_text().splitlines()]
    assert sorted((fen, result) for fen, _, result in lines) == sorted(
        [(chess.STARTING_FEN, "1.0"), (chess960_start, "0.0")])
    assert all(abs(int(score)) < 200 for _, score, _ in lines)  # fresh scores from the engine, not the file's


def test_restart_on_plays_each_game_in_a_fresh_process_that_keeps_the_run_options(tmp_path: Path) -> None:
    """``restart=on`` (cutechess-cli's key) starts the engine anew for every game, for engines that
    leak over a long run as Ethereal 12 does; options the caller set for the run (the SPSA's
    values) reach every new process.  An engine without it keeps one process."""
    fresh_log, kept_log = tmp_path / "fresh.txt", tmp_path / "kept.txt"
    fresh = _scripted(tmp_path, f"starts:{fresh_log}", "fresh")
    fresh.restart = True
    kept = _scripted(tmp_path, f"starts:{kept_log}", "kept")
    assert parse_engine(["cmd=x", "restart=on"]).restart and not parse_engine(["cmd=x"]).restart
    player = GamePlayer(MatchConfig(engines=[fresh, kept], maxmoves=6, progress=False), threading.Event())
    player.slots["fresh"].set_options({"Tuned": 5})
    player.slots["kept"].set_options({"Tuned": 3})
    for slot in range(3):
        game = player.play_game("fresh", "kept", Opening(), 0, 0, slot)
        assert game is not None and game.fault is None and game.plies == 12   # maxmoves counts moves
    player.close()
    assert fresh_log.read_text().splitlines() == ["start", "setoption name Tuned value 5"] * 3
    assert kept_log.read_text().splitlines() == ["start", "setoption name Tuned value 3"]
