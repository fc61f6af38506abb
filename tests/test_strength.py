"""Playing against Numbat and analysing with it: the book only in games, strength levels, GUI options."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import chess
import chess.engine
import chess.polyglot
import pytest

from conftest import collect_lines
from engine.board import Board
from engine.searcher import Searcher, opponent_has_bare_king
from engine.strength import (
    BARE_KING_NODES,
    ELO_MAX,
    ELO_MIN,
    SKILL_MAX,
    StrengthLevel,
    level_from_options,
    skill_to_elo,
)
from engine.timeman import Limits, allocate

REPO = Path(__file__).resolve().parents[1]
ENGINE = [sys.executable, str(REPO / "run_engine.py")]
SHIPPED_BOOK = REPO / "books" / "numbat.bin"
BOOK_POSITION = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"  # the example


@pytest.fixture()
def engine(caplog: pytest.LogCaptureFixture) -> Iterator[chess.engine.SimpleEngine]:
    caplog.set_level(logging.WARNING, logger="chess.engine")
    eng = chess.engine.SimpleEngine.popen_uci(ENGINE, timeout=60)
    eng.ping()
    yield eng
    eng.quit()
    complaints = [r.getMessage() for r in caplog.records if r.name.startswith("chess.engine")]
    assert not complaints, complaints


def book_moves(fen: str) -> set[str]:
    """The shipped book's moves in ``fen``."""
    with chess.polyglot.open_reader(SHIPPED_BOOK) as reader:
        return {entry.move.uci() for entry in reader.find_all(chess.Board(fen))}


# ---------------------------------------------------------------------------
# The book plays only in games
# ---------------------------------------------------------------------------

def test_analysis_of_a_book_position_gets_three_searched_lines(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(BOOK_POSITION)
    assert book_moves(BOOK_POSITION), "the example must be a book position"
    for limit in (chess.engine.Limit(depth=8), chess.engine.Limit(time=0.5)):
        infos = engine.analyse(board, limit, multipv=3)
        assert len(infos) == 3
        moves = set()
        for info in infos:
            assert "score" in info and info["pv"] and info.get("depth", 0) >= 1
            assert info["pv"][0] in board.legal_moves
            moves.add(info["pv"][0])
        assert len(moves) == 3
    single = engine.analyse(board, chess.engine.Limit(depth=6))  # MultiPV 1, UCI_AnalyseMode set by python-chess
    assert single["depth"] >= 6 and single["pv"]


def test_a_clocked_go_in_the_same_position_plays_a_book_move(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board(BOOK_POSITION)
    expected = book_moves(BOOK_POSITION)
    for limit in (chess.engine.Limit(white_clock=60, black_clock=60), chess.engine.Limit(time=1.0)):
        result = engine.play(board, limit, info=chess.engine.INFO_ALL)
        assert result.move.uci() in expected
        assert "depth" not in result.info  # answered from the book: no search


@pytest.mark.parametrize("go", ["go depth 3", "go nodes 3000", "go mate 2 movetime 300",
                                "go wtime 60000 btime 60000 searchmoves a2a3"])
def test_analysis_go_commands_never_use_the_book(go: str) -> None:
    out = uci_session(["position startpos", go], wait_for="bestmove")
    assert not any("book move" in line for line in out), out
    assert any(line.startswith("info depth") and " pv " in line for line in out), out


def uci_session(commands: list[str], wait_for: str = "bestmove", timeout: float = 60.0) -> list[str]:
    """Run ``commands`` in a fresh engine; return its output up to the line starting with ``wait_for``."""
    proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdin and proc.stdout
    proc.stdin.write("uci\nisready\n" + "\n".join(commands) + "\n")
    proc.stdin.flush()
    lines = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline().strip()
        lines.append(line)
        if line.startswith(wait_for):
            break
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    proc.wait(timeout=30)
    return lines


# ---------------------------------------------------------------------------
# Strength levels
# ---------------------------------------------------------------------------

def test_skill_level_and_uci_elo_map_onto_the_same_level() -> None:
    assert level_from_options(False, ELO_MAX, SKILL_MAX) is None  # the defaults: full strength
    for skill in range(SKILL_MAX):
        by_skill = level_from_options(False, ELO_MAX, skill)
        by_elo = level_from_options(True, skill_to_elo(skill), SKILL_MAX)
        assert by_skill == by_elo and by_skill is not None
    assert skill_to_elo(0) == ELO_MIN
    assert level_from_options(True, 1000, 20) == StrengthLevel.at_elo(ELO_MIN)  # clamped into the range
    levels = [StrengthLevel.at_elo(elo) for elo in range(ELO_MIN, ELO_MAX + 1, 100)]
    assert all(a.nodes < b.nodes and a.noise_cp > b.noise_cp for a, b in pairwise(levels))
    assert levels[-1].noise_cp == 0


class FakeRng:
    """A Gaussian source that returns the given values in turn."""

    def __init__(self, values: list[float]) -> None:
        self.values = list(values)

    def gauss(self, mu: float, sigma: float) -> float:
        return self.values.pop(0)


class Line:
    def __init__(self, score: int, move: int) -> None:
        self.score, self.moves = score, [move]


def test_choice_is_among_close_lines_and_never_gives_up_a_mate() -> None:
    level = StrengthLevel.at_elo(ELO_MIN)
    lines = [Line(50, 1), Line(40, 2), Line(-500, 3)]
    # noise +0 / +30 / +1000: the second line wins; the third is too far below the best to be chosen
    assert level.choose(lines, FakeRng([0.0, 30.0, 1000.0])) == 1
    assert level.choose(lines, FakeRng([0.0, -30.0])) == 0
    mate = [Line(31_990, 1), Line(40, 2)]
    assert level.choose(mate, FakeRng([0.0, 1000.0])) == 0
    assert level.choose(lines, FakeRng([0.0, 30.0]), bare_king=True) == 0


def test_lowest_level_varies_its_moves_and_stays_within_its_budget() -> None:
    searcher = Searcher(hash_mb=4)
    searcher.strength = StrengthLevel.at_elo(ELO_MIN)
    board = Board()
    legal = set(board.legal_moves())
    played = set()
    for _ in range(20):
        searcher.new_game()
        lines: list[str] = []
        best, _ = searcher.think(board, Limits(wtime=60, btime=60), collect_lines(lines))
        assert best in legal
        played.add(best)
        depths = [int(line.split()[2]) for line in lines if line.startswith("info depth")]
        assert depths and min(depths) == 1  # a real search, its real depths reported
        # The budget holds from depth 2 on; depth 1 always completes (a searched move, never a default).
        nodes_after_depth_1 = [int(line.split(" nodes ")[1].split()[0]) for line in lines
                               if line.startswith("info depth") and int(line.split()[2]) >= 2]
        assert all(n <= searcher.strength.nodes for n in nodes_after_depth_1)
        assert searcher.nodes() <= searcher.strength.nodes or max(depths) == 1
    assert len(played) > 1


def test_a_weak_level_never_thinks_longer_than_full_strength() -> None:
    """The budget only adds a node limit: every level stops within the full-strength soft limit."""
    limits = Limits(wtime=2.0, btime=2.0, winc=0.02, binc=0.02)
    soft, _ = allocate(limits, 0, 0.030)
    searcher = Searcher(hash_mb=4)
    board = Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    for elo in range(ELO_MIN, ELO_MAX + 1, 300):
        searcher.strength = StrengthLevel.at_elo(elo)
        searcher.new_game()
        start = time.perf_counter()
        best, _ = searcher.think(board, limits, None)
        assert time.perf_counter() - start <= soft + 0.05, elo
        assert best in board.legal_moves()


def test_a_weak_level_answers_a_clocked_go_over_uci() -> None:
    out = uci_session(["setoption name UCI_LimitStrength value true", f"setoption name UCI_Elo value {ELO_MIN + 300}",
                       "position startpos moves e2e4 e7e5", "go wtime 2000 btime 2000 winc 20 binc 20"])
    assert out[-1].startswith("bestmove")
    after_e5 = chess.Board("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2")
    assert chess.Move.from_uci(out[-1].split()[1]) in after_e5.legal_moves
    assert not [line for line in out if line.startswith("info string error")]


def test_a_tiny_budget_still_plays_a_searched_move_in_a_busy_middlegame() -> None:
    """Depth 1 of four lines with quiescence can cost more than the lowest budget: it completes anyway."""
    searcher = Searcher(hash_mb=4)
    searcher.strength = StrengthLevel.at_elo(ELO_MIN)
    board = Board("r1bq1rk1/pp2ppbp/2np2p1/2n5/P3PP2/N1P2N2/1PB3PP/R1B1QRK1 b - - 0 1")
    lines: list[str] = []
    best, _ = searcher.think(board, Limits(wtime=10, btime=10, winc=0.1, binc=0.1), collect_lines(lines))
    assert any(line.startswith("info depth 1 ") for line in lines)
    assert len(searcher.last_lines) == 4  # the choice is made among four searched lines ...
    assert best in {line_moves.moves[0] for line_moves in searcher.last_lines}
    assert not any(" multipv 2 " in line for line in lines)  # ... but only MultiPV's one line is shown
    last = lines[-1].split()
    assert last[last.index("pv") + 1] == board.move_to_uci(best)  # the last line shown is the move played


def test_bare_king_detection() -> None:
    assert opponent_has_bare_king(Board("8/8/8/4k3/8/8/8/R3K3 w - - 0 1"))
    assert not opponent_has_bare_king(Board("8/8/8/4k3/8/8/8/R3K3 b - - 0 1"))
    assert not opponent_has_bare_king(Board())
    assert not opponent_has_bare_king(Board("8/8/8/4k3/8/8/8/4K3 w - - 0 1"))


@pytest.mark.parametrize("fen", ["8/8/8/4k3/8/8/8/3QK3 w - - 0 1", "8/8/8/4k3/8/8/8/R3K3 w - - 0 1",
                                 "8/8/6K1/8/7R/6k1/8/8 w - - 0 1", "8/8/6K1/7R/8/5k2/8/8 w - - 0 1"],
                         ids=["KQK", "KRK", "KRK-edge", "KRK-near"])
def test_lowest_level_mates_a_bare_king_within_the_fifty_move_rule(fen: str) -> None:
    """Each move is searched as a GUI asks for it: the start position and the moves since (so
    the engine sees the repetitions it must avoid).  With the old 20,000-node floor the last two
    positions ran into the fifty-move rule."""
    weak = Searcher(hash_mb=4)
    weak.strength = StrengthLevel.at_elo(ELO_MIN)
    defender = Searcher(hash_mb=4)
    game = chess.Board(fen)
    while not game.is_game_over(claim_draw=True):
        player = weak if game.turn == chess.WHITE else defender
        board = Board(fen)
        for played in game.move_stack:
            board.push_uci(played.uci())
        limits = Limits(wtime=60, btime=60) if player is weak else Limits(nodes=BARE_KING_NODES)
        best, _ = player.think(board, limits, None)
        game.push(chess.Move.from_uci(board.move_to_uci(best)))
    assert game.is_checkmate(), f"{game.result(claim_draw=True)} after {game.fullmove_number} moves: {game.fen()}"
    assert game.halfmove_clock < 100


# ---------------------------------------------------------------------------
# Options GUIs send
# ---------------------------------------------------------------------------

def test_gui_options_are_accepted_quietly_and_ponder_works_with_a_limit() -> None:
    out = uci_session([
        "setoption name UCI_Opponent value GM 2800 human Magnus Carlsen",
        "setoption name UCI_AnalyseMode value false",
        "setoption name Ponder value true",
        "setoption name Skill Level value 3",
        "position startpos moves d2d4",
        "go ponder wtime 5000 btime 5000 winc 50 binc 50",
        "setoption name Ponder value false",  # a GUI may change it during a game: the search goes on
        "ponderhit",
    ])
    assert out[-1].startswith("bestmove"), out
    move = out[-1].split()[1]
    after_d4 = chess.Board("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1")
    assert chess.Move.from_uci(move) in after_d4.legal_moves
    assert not [line for line in out if line.startswith("info string")
                and "effective branching factor" not in line and "Syzygy" not in line], out
