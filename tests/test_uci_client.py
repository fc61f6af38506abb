"""Numbat through python-chess's real UCI client, as lichess-bot and many tools drive it.

Every test fails if python-chess logs a warning or error about our output.
"""

from __future__ import annotations

import logging
import queue
import random
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.engine
import pytest

from conftest import SYZYGY_DIR
from engine.evaluate import N_TERMS
from engine.fen import KIWIPETE

REPO = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(REPO / "run_engine.py")]


@pytest.fixture()
def engine(caplog: pytest.LogCaptureFixture) -> Iterator[chess.engine.SimpleEngine]:
    caplog.set_level(logging.WARNING, logger="chess.engine")
    eng = chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=60)
    eng.ping()  # isready/readyok, as GUIs do before the first go
    yield eng
    eng.quit()
    complaints = [r.getMessage() for r in caplog.records if r.name.startswith("chess.engine")]
    assert not complaints, complaints


def test_identity_and_options(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("Numbat")
    names = set(engine.options)
    for name in ("Hash", "Clear Hash", "Threads", "Ponder", "MultiPV", "Move Overhead", "UCI_Chess960",
                 "UCI_ShowWDL"):
        assert name in names
    assert engine.options["Hash"].max >= 4096


# A value other than the default for each option, chosen so that its effect can be seen
# where one can be (options the engine adds later get a generic non-default value).
OPTION_VALUES = {
    "Threads": "2", "Hash": "8", "MultiPV": "2", "Move Overhead": "50", "Ponder": "true",
    "UCI_Chess960": "true", "UCI_ShowWDL": "true", "OwnBook": "false", "Book Best Move": "true",
    "BookFile": str(REPO / "books" / "numbat.bin"), "EvalFile": str(REPO / "engine" / "weights_start.txt"),
    "SyzygyPath": str(SYZYGY_DIR), "SyzygyProbeDepth": "2", "Syzygy50MoveRule": "false", "SyzygyProbeLimit": "5",
    "UCI_LimitStrength": "true", "UCI_Elo": "1800", "Skill Level": "10", "UCI_AnalyseMode": "true",
    "UCI_Opponent": "GM 2800 human Magnus Carlsen",
}


def declared_options(lines: list[str]) -> dict[str, tuple[str, dict[str, str]]]:
    """(type, {default/min/max: value}) of each ``option name ... type ...`` line, by name."""
    options = {}
    for line in lines:
        if line.startswith("option name "):
            name, rest = line[len("option name "):].split(" type ", 1)
            kind, *fields = rest.split()
            options[name] = (kind, dict(zip(fields[::2], fields[1::2], strict=True)))
    return options


def setoption_line(name: str, kind: str, fields: dict[str, str]) -> str:
    """``setoption`` with OPTION_VALUES' value, or else a value other than the default."""
    if kind == "button":
        return f"setoption name {name}"
    value = OPTION_VALUES.get(name)
    if value is None:
        if kind == "check":
            value = "false" if fields["default"] == "true" else "true"
        elif kind == "spin":
            default, high = int(fields["default"]), int(fields["max"])
            value = str(default + 1 if default < high else default - 1)
        else:
            value = fields["default"]
    return f"setoption name {name} value {value}"


def converse(steps: list[tuple[list[str], str]], timeout: float = 120.0) -> list[str]:
    """Run the engine over a raw pipe: send each step's lines, then read its output up to
    a line starting with the step's marker (``bestmove``, ``readyok``) before going on, as a
    GUI waits; return every line it wrote."""
    proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdin is not None and proc.stdout is not None
    output: queue.Queue[str | None] = queue.Queue()
    reader = threading.Thread(target=lambda: [*map(output.put, proc.stdout), output.put(None)], daemon=True)
    reader.start()
    lines: list[str] = []
    try:
        for sent, marker in steps:
            proc.stdin.write("".join(line + "\n" for line in sent))
            proc.stdin.flush()
            start = len(lines)
            while len(lines) == start or not lines[-1].startswith(marker):
                line = output.get(timeout=timeout)
                assert line is not None, f"the engine ended before {marker!r}: {lines[-5:]}"
                lines.append(line.rstrip("\n"))
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=timeout) == 0
    finally:
        proc.kill()
        stderr = proc.stderr.read() if proc.stderr is not None else ""
    assert "Traceback" not in stderr, stderr[-2000:]
    return lines


def test_every_option_is_accepted_and_takes_effect() -> None:
    """Every option the engine declares, set over a raw pipe: not one error line, and the
    effects that show in the output (Chess960 castling, MultiPV, WDL, EvalFile, SyzygyPath,
    OwnBook) are there."""
    options = declared_options(converse([(["uci"], "uciok")]))
    assert set(OPTION_VALUES) <= set(options), set(OPTION_VALUES) - set(options)
    settings = [setoption_line(name, *declaration) for name, declaration in options.items()]
    full_strength = ["setoption name UCI_LimitStrength value false", "setoption name Skill Level value 20",
                     "setoption name UCI_AnalyseMode value false"]  # so that the searches below show it all
    lines = converse([
        (["uci", *settings, *full_strength, "isready"], "readyok"),
        ([f"position fen {KIWIPETE} moves e1h1", "d", "go depth 4"], "bestmove"),  # e1h1: castling in Chess960
        (["position startpos", "go wtime 3000 btime 3000"], "bestmove"),
    ])
    notes = [line for line in lines if line.startswith("info string")]
    assert not [note for note in notes if note.startswith("info string error")], notes
    ready = lines.index("readyok")
    assert [line for line in lines[:ready] if line.startswith("info string")] == [
        f"info string EvalFile {OPTION_VALUES['EvalFile']}: {N_TERMS} evaluation weights loaded",
        "info string found 35 Syzygy WDL tables (up to 4 pieces)",
    ]
    assert "Fen: r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R4RK1 b kq - 1 1" in lines
    first, second = [index for index, line in enumerate(lines) if line.startswith("bestmove")]
    analysis = [line for line in lines[:first] if line.startswith("info depth 4 ")]
    assert {line.split(" multipv ")[1].split()[0] for line in analysis} == {"1", "2"}  # MultiPV 2
    assert all(" wdl " in line for line in analysis)  # UCI_ShowWDL
    assert any(line.startswith("info depth") for line in lines[first + 1:second])  # OwnBook off: a search


def test_self_play_game_with_clock_never_flags() -> None:
    white = chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=60)
    black = chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=60)
    white.ping()  # GUIs wait for readyok before starting the clocks
    black.ping()
    try:
        board = chess.Board()
        clocks = [2.0, 2.0]
        increment = 0.05
        while not board.is_game_over(claim_draw=True) and board.ply() < 120:
            side = 0 if board.turn == chess.WHITE else 1
            player = white if side == 0 else black
            limit = chess.engine.Limit(white_clock=clocks[0], black_clock=clocks[1],
                                       white_inc=increment, black_inc=increment)
            start = time.perf_counter()
            result = player.play(board, limit)
            clocks[side] -= time.perf_counter() - start
            assert clocks[side] > 0, f"side {side} lost on time at ply {board.ply()}"
            clocks[side] += increment
            assert result.move in board.legal_moves
            board.push(result.move)
    finally:
        white.quit()
        black.quit()


def test_analysis_multipv_3_and_stop(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    seen: dict[int, chess.engine.InfoDict] = {}
    with engine.analysis(board, multipv=3) as analysis:
        for info in analysis:
            if "multipv" in info and "pv" in info:
                seen[info["multipv"]] = info
            if len(seen) == 3 and all(i.get("depth", 0) >= 6 for i in seen.values()):
                break
    assert set(seen) == {1, 2, 3}
    first_moves = {info["pv"][0] for info in seen.values()}
    assert len(first_moves) == 3
    for info in seen.values():
        replay = board.copy()
        for move in info["pv"]:
            assert move in replay.legal_moves
            replay.push(move)
    scores = [seen[i]["score"].relative.score(mate_score=100000) for i in (1, 2, 3)]
    assert scores == sorted(scores, reverse=True)


def test_ponder_and_ponderhit(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    limit = chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.1, black_inc=0.1)
    result = engine.play(board, limit, ponder=True)
    assert result.move in board.legal_moves and result.ponder is not None
    board.push(result.move)
    board.push(result.ponder)  # the predicted reply: python-chess sends ponderhit
    second = engine.play(board, limit, ponder=True)
    assert second.move in board.legal_moves
    board.push(second.move)
    other = next(iter(board.legal_moves)) if second.ponder is None else \
        next(m for m in board.legal_moves if m != second.ponder)
    board.push(other)  # a different reply: python-chess stops the ponder search and starts afresh
    third = engine.play(board, chess.engine.Limit(time=0.2))
    assert third.move in board.legal_moves


@pytest.mark.parametrize("limit", [
    chess.engine.Limit(depth=5),
    chess.engine.Limit(nodes=3000),
    chess.engine.Limit(time=0.3),
])
def test_limits(engine: chess.engine.SimpleEngine, limit: chess.engine.Limit) -> None:
    board = chess.Board(KIWIPETE)
    start = time.perf_counter()
    info = engine.analyse(board, limit)
    elapsed = time.perf_counter() - start
    assert info["pv"][0] in board.legal_moves
    if limit.depth:
        assert info["depth"] == limit.depth
    if limit.nodes:
        assert info["nodes"] <= limit.nodes + 200
    if limit.time:
        assert elapsed < limit.time + 0.2


def test_mate_limit(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1")
    info = engine.analyse(board, chess.engine.Limit(mate=3))
    assert info["score"].relative == chess.engine.Mate(3)


def test_chess960_game_start(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board.from_chess960_pos(7)
    board.chess960 = True
    result = engine.play(board, chess.engine.Limit(depth=4))
    assert result.move in board.legal_moves


def test_fuzzed_input_never_kills_the_engine() -> None:
    """Ten thousand seeded random and mutated lines, then a normal request must still work."""
    rng = random.Random(20261123)
    valid = [
        "uci", "isready", "ucinewgame", "debug on", "debug off", "d", "eval", "help", "stop", "ponderhit",
        "position startpos", "position startpos moves e2e4 e7e5 g1f3",
        f"position fen {KIWIPETE} moves e1g1",
        "go depth 2", "go nodes 500", "go movetime 5", "go wtime 100 btime 100 winc 1 binc 1", "go perft 2",
        "go infinite", "go ponder wtime 100 btime 100", "go mate 1", "go searchmoves e2e4 d2d4 depth 2",
        "setoption name Hash value 2", "setoption name MultiPV value 2", "setoption name Clear Hash",
        "setoption name UCI_Chess960 value true", "setoption name UCI_Chess960 value false",
        "setoption name Move Overhead value 30", "setoption name UCI_ShowWDL value true",
    ]
    words = ["go", "position", "fen", "moves", "startpos", "setoption", "name", "value", "depth", "perft",
             "wtime", "searchmoves", "Hash", "-1", "0", "99999999999999999999", "e2e4", "e7e8q", "a1a1", "x",
             "\t", "\x00", "é", "8/8/8/8/8/8/8/8", "w", "KQkq", "-", "infinite", "nodes", "mate", "movetime"]
    alphabet = "abcdefgh12345678 /-kqrbnpKQRBNP\t\r"

    def mutate(line: str) -> str:
        chars = list(line)
        for _ in range(rng.randint(1, 4)):
            action = rng.random()
            position = rng.randrange(len(chars) + 1)
            if action < 0.4 and chars:
                del chars[min(position, len(chars) - 1)]
            elif action < 0.8:
                chars.insert(position, rng.choice(alphabet))
            else:
                chars[position:position] = list(" " + rng.choice(words) + " ")
        return "".join(chars)

    lines = []
    for _ in range(10_000):
        kind = rng.random()
        if kind < 0.45:
            line = mutate(rng.choice(valid))
        elif kind < 0.75:
            line = " ".join(rng.choice(words) for _ in range(rng.randint(0, 8)))
        elif kind < 0.9:
            line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        else:
            line = rng.choice(valid)
        if "perft" in line:
            line = line.replace("perft", "perft 2 ")  # any depth above 4 is a legitimate hour-long request
        lines.append(line.replace("\n", " "))
    final = "position startpos moves e2e4 e7e5 g1f3 b8c6"
    script = "\n".join(lines) + "\nstop\nsetoption name UCI_Chess960 value false\nsetoption name MultiPV value 1\n" \
        f"{final}\nd\ngo depth 4\nisready\nquit\n"
    out = subprocess.run(ENGINE, input=script.encode("utf-8", "replace"), capture_output=True, timeout=600)
    assert out.returncode == 0, out.stderr.decode(errors="replace")[-2000:]
    assert "Traceback" not in out.stderr.decode(errors="replace")
    text = out.stdout.decode("utf-8", "replace").splitlines()
    board = chess.Board()
    for move in final.split()[3:]:
        board.push_uci(move)
    marker = len(text) - 1 - text[::-1].index(f"Fen: {board.fen()}")
    tail = text[marker:]
    assert "readyok" in tail
    best = [line for line in tail if line.startswith("bestmove")]
    assert len(best) == 1 and chess.Move.from_uci(best[0].split()[1]) in board.legal_moves
