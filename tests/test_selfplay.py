"""Evaluation data from self-play: quiet labelled positions, reproducible and resumable runs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess

from engine.tools import selfplay

OPENINGS = [
    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
    "rnbqkb1r/pppppppp/5n2/8/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 1 2",
    "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
]


def run(tmp_path: Path, name: str, games: int, *extra: str) -> list[str]:
    openings = tmp_path / "openings.epd"
    openings.write_text("\n".join(OPENINGS) + "\n")
    out = tmp_path / name
    code = selfplay.main(["--out", str(out), "--games", str(games), "--nodes", "800", "--openings", str(openings),
                          "--max-plies", "120", "--no-progress", *extra])
    assert code == 0
    return out.read_text().splitlines()


def test_positions_are_quiet_and_carry_the_game_result(tmp_path: Path) -> None:
    lines = run(tmp_path, "data.txt", 3)
    progress = json.loads((tmp_path / "data.txt.progress.json").read_text())
    assert progress["games"] == 3 and progress["positions"] == len(lines) > 30
    assert sum(progress["results"]) == 3
    for line in lines:
        fen, score, result = line.split(";")
        board = chess.Board(fen)
        assert board.is_valid() and not board.is_check(), fen
        assert abs(int(score)) < selfplay.MATE_BOUND
        assert result in ("1.0", "0.5", "0.0")


def test_a_resumed_run_writes_what_one_run_writes(tmp_path: Path) -> None:
    whole = run(tmp_path, "whole.txt", 4)
    run(tmp_path, "parts.txt", 2)
    parts = run(tmp_path, "parts.txt", 4)
    assert parts == whole


def test_adjudication_needs_the_scores_to_agree_long_enough() -> None:
    cfg = selfplay.SelfPlaySettings(win_plies=3, win_score=500, draw_from=10, draw_plies=3, draw_score=10)
    assert selfplay.adjudicate([600, 700, 800], 20, cfg) == (1.0, "adjudicated win")
    assert selfplay.adjudicate([-600, -700, -800], 20, cfg) == (0.0, "adjudicated win")
    assert selfplay.adjudicate([600, 400, 800], 20, cfg) is None
    assert selfplay.adjudicate([5, -5, 0], 20, cfg) == (0.5, "adjudicated draw")
    assert selfplay.adjudicate([5, -5, 0], 8, cfg) is None  # too early for a draw


def test_a_run_stopped_by_sigterm_resumes_without_losing_or_repeating_a_game(tmp_path: Path) -> None:
    whole = run(tmp_path, "whole.txt", 8)
    openings = tmp_path / "openings.epd"
    out = tmp_path / "stopped.txt"
    command = [sys.executable, "-m", "engine.tools.selfplay", "--out", str(out), "--games", "8", "--nodes", "800",
               "--openings", str(openings), "--max-plies", "120", "--no-progress"]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[1], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    progress_file = tmp_path / "stopped.txt.progress.json"
    deadline = time.time() + 120
    while time.time() < deadline:  # stop it once a few games are in
        if progress_file.exists() and json.loads(progress_file.read_text())["games"] >= 2:
            break
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    stopped = json.loads(progress_file.read_text())
    assert 2 <= stopped["games"] < 8, stopped
    assert len(out.read_text().splitlines()) == stopped["positions"]
    assert run(tmp_path, "stopped.txt", 8) == whole


def test_a_stop_just_after_a_checkpoint_keeps_the_data_and_the_count_in_step(tmp_path: Path, monkeypatch) -> None:
    """The window the SIGTERM test hits only now and then, made certain: the stop lands
    right after a game's checkpoint is written, before the loop goes on."""
    whole = run(tmp_path, "whole.txt", 5)
    original = selfplay.Progress.save
    calls = {"n": 0}

    def save_then_stop(self: selfplay.Progress, path: Path) -> None:
        original(self, path)
        calls["n"] += 1
        if calls["n"] == 2:  # the second game's checkpoint
            raise KeyboardInterrupt

    monkeypatch.setattr(selfplay.Progress, "save", save_then_stop)
    stopped_lines = run(tmp_path, "stopped.txt", 5)
    stopped = json.loads((tmp_path / "stopped.txt.progress.json").read_text())
    assert stopped["games"] in (1, 2)  # the game being counted is kept or dropped, never half-kept
    assert len(stopped_lines) == stopped["positions"] > 0
    assert stopped_lines == whole[:len(stopped_lines)]
    monkeypatch.setattr(selfplay.Progress, "save", original)
    assert run(tmp_path, "stopped.txt", 5) == whole
