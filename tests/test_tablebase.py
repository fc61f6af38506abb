"""Syzygy tablebases at the root: wins converted within the DTZ bound, draws held, bad files survived."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess.syzygy
import pytest

from conftest import REPO, SYZYGY_DIR, collect_lines
from engine.board import Board
from engine.searcher import Searcher
from engine.tablebase import TB_WIN_SCORE, RootTablebase
from engine.timeman import Limits

TABLES = SYZYGY_DIR  # WDL for all 3-4-man tables, DTZ (.rtbz) for the 3-man ones these tests probe


@pytest.fixture(scope="module")
def oracle() -> chess.syzygy.Tablebase:
    """python-chess's reader over the test tables."""
    tablebase = chess.syzygy.open_tablebase(str(TABLES))
    yield tablebase
    tablebase.close()


@pytest.fixture(scope="module")
def searcher() -> Searcher:
    """A searcher with the test tables loaded."""
    s = Searcher(hash_mb=4)
    s.tablebase = RootTablebase(str(TABLES))
    assert s.tablebase.max_pieces == 4 and not s.tablebase.messages
    return s


def random_position(rng: random.Random, white: str, black: str, turn: bool) -> chess.Board:
    """A random legal position with the given extra pieces (pawns off the back ranks)."""
    while True:
        board = chess.Board(None)
        squares = rng.sample(range(64), 2 + len(white) + len(black))
        board.set_piece_at(squares[0], chess.Piece(chess.KING, chess.WHITE))
        board.set_piece_at(squares[1], chess.Piece(chess.KING, chess.BLACK))
        for sq, symbol in zip(squares[2:], white.upper() + black.lower(), strict=True):
            board.set_piece_at(sq, chess.Piece.from_symbol(symbol))
        board.turn = turn
        if board.is_valid() and board.legal_moves.count():
            return board


def engine_move(searcher: Searcher, board: chess.Board, lines: list[str] | None = None) -> chess.Move:
    """Numbat's move in ``board`` at a small fixed depth."""
    ours = Board(board.fen())
    best, _ = searcher.think(ours, Limits(depth=4), collect_lines(lines if lines is not None else []))
    return chess.Move.from_uci(ours.move_to_uci(best))


def best_defence(oracle: chess.syzygy.Tablebase, board: chess.Board) -> chess.Move:
    """The defender's move with the best tablebase result, then the longest DTZ."""
    def resistance(move: chess.Move) -> tuple[int, int]:
        board.push(move)
        try:
            return -oracle.probe_wdl(board), abs(oracle.probe_dtz(board))
        finally:
            board.pop()
    return max(board.legal_moves, key=resistance)


@pytest.mark.parametrize("white", ["Q", "R", "P"])
def test_wins_are_converted_within_the_dtz_bound(white: str, searcher: Searcher, oracle) -> None:
    """KQvK and KRvK end in mate, KPvK in a promotion; every stretch between zeroing
    moves (pawn moves, captures, mate) is no longer than the DTZ where it began."""
    rng = random.Random(7)
    converted = 0
    while converted < 4:
        board = random_position(rng, white, "", chess.WHITE)
        if oracle.probe_wdl(board) != 2:
            continue
        start = board.fen()
        deadline = abs(oracle.probe_dtz(board)) + 1  # Syzygy DTZ may be one ply off (rounding)
        plies = 0
        while not (board.is_checkmate() or board.move_stack and board.peek().promotion):
            assert plies < 200, f"no conversion from {start}"
            if board.turn == chess.WHITE:
                move = engine_move(searcher, board)
                zeroing = board.is_zeroing(move)
                board.push(move)
                if not board.is_checkmate() and not move.promotion:
                    assert oracle.probe_wdl(board) == -2, f"{move} spoiled the win in {board.fen()}"
            else:
                move = best_defence(oracle, board)
                zeroing = board.is_zeroing(move)
                board.push(move)
            plies += 1
            if zeroing or board.is_checkmate():
                deadline = plies + (0 if board.is_game_over() or board.peek().promotion
                                    else abs(oracle.probe_dtz(board)) + 1)
            assert plies <= deadline, f"no zeroing move within the DTZ bound from {start}: {board.fen()}"
        converted += 1


def test_tablebase_score_and_tbhits_are_reported(searcher: Searcher) -> None:
    lines: list[str] = []
    engine_move(searcher, chess.Board("8/8/8/4k3/8/8/8/KQ6 w - - 0 1"), lines)
    last = [line for line in lines if " pv " in line][-1]
    assert f"score cp {TB_WIN_SCORE}" in last or " score mate " in last
    assert int(last.split(" tbhits ")[1].split()[0]) > 0


def test_drawn_kpvk_is_not_spoiled(searcher: Searcher, oracle) -> None:
    """In drawn KPvK positions every Numbat move, for either side, keeps the draw."""
    rng = random.Random(11)
    checked = 0
    while checked < 12:
        board = random_position(rng, "P", "", rng.choice([chess.WHITE, chess.BLACK]))
        if oracle.probe_wdl(board) != 0:
            continue
        for _ in range(6):
            if board.is_game_over():
                break
            board.push(engine_move(searcher, board))
            assert board.is_game_over() or oracle.probe_wdl(board) == 0, f"spoiled: {board.fen()}"
        checked += 1


def test_corrupt_and_missing_tables_leave_the_engine_playing(tmp_path: Path) -> None:
    """A truncated table and a missing folder give info strings; the engine still answers."""
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("KQvK.rtbw", "KQvK.rtbz"):
        data = (TABLES / name).read_bytes()
        (broken / name).write_bytes(data[: len(data) // 3])
    shutil.copy(TABLES / "KRvK.rtbw", broken / "KRvK.rtbw")
    (broken / "KRvK.rtbz").write_bytes(b"\x00" * 100)
    script = "\n".join([
        "uci",
        f"setoption name SyzygyPath value {broken}:{tmp_path / 'missing'}",
        "position fen 8/8/8/4k3/8/8/8/KQ6 w - - 0 1", "go depth 6",
        "position fen 8/8/8/4k3/8/8/8/KR6 w - - 0 1", "go depth 6",
        "isready", "quit", ""])
    proc = subprocess.run([sys.executable, str(REPO / "run_engine.py")], input=script, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.splitlines()
    assert any("does not exist" in line for line in out if line.startswith("info string"))
    bestmoves = [line.split()[1] for line in out if line.startswith("bestmove")]
    assert len(bestmoves) == 2 and "readyok" in out
    assert chess.Move.from_uci(bestmoves[0]) in chess.Board("8/8/8/4k3/8/8/8/KQ6 w - - 0 1").legal_moves
    assert chess.Move.from_uci(bestmoves[1]) in chess.Board("8/8/8/4k3/8/8/8/KR6 w - - 0 1").legal_moves


def test_probes_inside_the_search_find_the_win(searcher: Searcher) -> None:
    """A 5-piece root is beyond the 4-piece tables; the numba prober answers after the capture."""
    from engine.syzygy import load_tablebases

    tables, max_pieces, messages = load_tablebases(str(TABLES))
    assert max_pieces == 4 and not messages
    searcher.tb_tables, searcher.tb_max_pieces = tables, max_pieces
    try:
        lines: list[str] = []
        fen = "3r3k/8/8/8/8/8/1P6/3QK3 w - - 0 1"  # KQPvKR: the queen wins the rook at once
        best, _ = searcher.think(Board(fen), Limits(depth=6), collect_lines(lines))
        assert Board(fen).move_to_uci(best) == "d1d8"
        last = [line for line in lines if " pv " in line][-1]
        assert int(last.split(" tbhits ")[1].split()[0]) > 0
        score = last.split(" score ")[1].split()
        assert score[0] == "mate" or int(score[1]) >= TB_WIN_SCORE - 10
    finally:
        searcher.tb_tables, searcher.tb_max_pieces = searcher.tb_tables, 0
