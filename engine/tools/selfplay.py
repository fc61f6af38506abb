"""Evaluation data from Numbat's own games: self-play at fixed nodes, quiet positions labelled.

The lectures Numbat comes from end with programs that learnt their evaluation from
their own play (Samuel's checkers player, TD-Gammon).  This module owns that pipeline's
first half: it plays Numbat against itself, in-process (no UCI), one engine per worker
process, and writes every quiet position of each game with two labels,

* the score of the search that chose the move (``--nodes`` per move, far deeper than
  the static evaluation it will teach), in centipawns for White, and
* the game's result for White (1, 0.5 or 0),

as ``FEN;score;result`` lines, the format ``engine.tools.tune`` reads.  The tuner blends
the two (``--result-weight``).

Games start from a random opening of ``--openings`` (EPD or PGN; with ``--chess960`` the
positions are Chess960 start positions), and in their first ``--random-plies`` plies a
random legal move is played instead of the searched one with probability
``--random-prob``, so that games diverge.  A game ends by the rules (mate, stalemate,
threefold repetition, fifty moves, insufficient material), by adjudication (a win once
both sides' scores agree on at least ``--win-score`` for ``--win-plies`` plies; a draw
once from ply ``--draw-from`` they stay within ``--draw-score`` for ``--draw-plies``
plies) or at ``--max-plies`` (a draw).

A position is written when it is *quiet* and informative: from ``--skip-plies`` plies
after the opening, the side to move not in check, the chosen move neither a capture nor
a promotion nor a check, and no mate score.  Positions repeat rarely once games diverge;
the tuner's input is not deduplicated here.

Game ``g`` uses a generator seeded by ``--seed`` and ``g`` only, and the workers' games
come back in order, so a run is reproducible and resumable: ``<out>.progress.json``
records the games finished, and the same command goes on from there, appending to
``--out`` (bulk data: keep it out of git).

    python -m engine.tools.selfplay --games 20000 --nodes 5000 --workers 2 --out /work/data/selfplay.txt
    python -m engine.tools.selfplay --games 2000 --chess960 --openings ../shared/data/openings/FRC_openings.epd \\
        --out /work/data/selfplay960.txt
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import time
from collections.abc import Generator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import chess

from engine.defs import MAX_PLY
from engine.tools.data import SHARED_DATA
from engine.tools.match import OpeningBook
from engine.tools.progress import stop_on_sigterm
from engine.tt import TB_WIN

DEFAULT_OPENINGS = SHARED_DATA / "openings" / "8moves_v3.pgn"
MATE_BOUND = TB_WIN - MAX_PLY  # |score| at or above this is a mate or tablebase score: not a label


@dataclass(frozen=True)
class SelfPlaySettings:
    """How games are played and positions chosen (the same for every game of a run)."""

    nodes: int = 5000
    openings: str | None = None
    chess960: bool = False
    seed: int = 1
    random_plies: int = 16
    random_prob: float = 0.08
    skip_plies: int = 4
    win_score: int = 1000
    win_plies: int = 8
    draw_from: int = 80
    draw_score: int = 10
    draw_plies: int = 12
    max_plies: int = 400
    hash_mb: int = 16


@dataclass
class GameData:
    """One finished game: its result for White, why it ended, and its labelled positions."""

    index: int
    result: float
    reason: str
    plies: int
    positions: list[tuple[str, int]]
    """(FEN, search score in centipawns for White) of each quiet position."""

    def lines(self) -> list[str]:
        """The ``FEN;score;result`` lines of its positions."""
        result = "1.0" if self.result == 1.0 else "0.0" if self.result == 0.0 else "0.5"
        return [f"{fen};{score};{result}" for fen, score in self.positions]


class SelfPlayer:
    """One worker's engine (a ``Searcher``, reused across games) and its opening book."""

    def __init__(self, settings: SelfPlaySettings) -> None:
        from engine.searcher import Searcher

        self.settings = settings
        self.searcher = Searcher(hash_mb=settings.hash_mb)
        self.book = OpeningBook(settings.openings, "sequential")

    def play(self, index: int) -> GameData:
        """Play game ``index`` to its end."""
        from engine.board import Board
        from engine.timeman import Limits

        cfg = self.settings
        rng = random.Random(cfg.seed * 1_000_003 + index)
        opening = self.book.get(rng.randrange(len(self.book)))
        board = chess.Board(opening.fen, chess960=cfg.chess960)
        for uci in opening.moves:
            board.push_uci(uci)
        ours = Board(opening.fen, chess960=cfg.chess960)
        for uci in opening.moves:
            ours.push_uci(uci)
        self.searcher.new_game()
        positions: list[tuple[str, int]] = []
        white_scores: list[int] = []  # each searched move's score, for White
        plies = 0
        result, reason = 0.5, "move cap"
        while True:
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result = 1.0 if outcome.winner is chess.WHITE else 0.0 if outcome.winner is chess.BLACK else 0.5
                reason = outcome.termination.name.lower()
                break
            if plies >= cfg.max_plies:
                break
            if plies < cfg.random_plies and rng.random() < cfg.random_prob:
                move = rng.choice(list(board.legal_moves))
                white_scores.clear()  # a random move breaks the run of agreeing scores
            else:
                best, _ = self.searcher.think(ours, Limits(nodes=cfg.nodes), None)
                move = chess.Move.from_uci(ours.move_to_uci(best))
                if move not in board.legal_moves:  # never happens; a bad move would poison the data
                    raise RuntimeError(f"game {index}: the search chose {move} in {board.fen()}")
                score = self.searcher.last_lines[0].score if self.searcher.last_lines else 0
                white = score if board.turn == chess.WHITE else -score
                white_scores.append(white)
                if (plies >= cfg.skip_plies and abs(score) < MATE_BOUND and not board.is_check()
                        and not board.is_capture(move) and move.promotion is None and not board.gives_check(move)):
                    positions.append((board.fen(), white))
                ended = adjudicate(white_scores, len(board.move_stack), cfg)
                if ended is not None:
                    result, reason = ended
                    board.push(move)
                    plies += 1
                    break
            board.push(move)
            ours.push_uci(move.uci())
            plies += 1
        return GameData(index, result, reason, plies, positions)


def adjudicate(white_scores: Sequence[int], ply: int, cfg: SelfPlaySettings) -> tuple[float, str] | None:
    """A result when the last scores (for White) settle the game, else None."""
    recent = white_scores[-cfg.win_plies:]
    if len(recent) == cfg.win_plies:
        if all(s >= cfg.win_score for s in recent):
            return 1.0, "adjudicated win"
        if all(s <= -cfg.win_score for s in recent):
            return 0.0, "adjudicated win"
    recent = white_scores[-cfg.draw_plies:]
    if ply >= cfg.draw_from and len(recent) == cfg.draw_plies and all(abs(s) <= cfg.draw_score for s in recent):
        return 0.5, "adjudicated draw"
    return None


# -- worker processes ------------------------------------------------------------

_PLAYER: SelfPlayer | None = None


def _init_worker(settings: SelfPlaySettings) -> None:
    global _PLAYER
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _PLAYER = SelfPlayer(settings)


def _play(index: int) -> GameData:
    assert _PLAYER is not None
    return _PLAYER.play(index)


def play_games(settings: SelfPlaySettings, first: int, count: int, workers: int = 1) -> Generator[GameData, None, None]:
    """Games ``first`` .. ``first + count - 1``, in order, played by ``workers`` processes (1: this one)."""
    indices = range(first, first + count)
    if workers <= 1:
        player = SelfPlayer(settings)
        for index in indices:
            yield player.play(index)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(workers, initializer=_init_worker, initargs=(settings,)) as pool:
        yield from pool.imap(_play, indices, chunksize=1)


@dataclass
class Progress:
    """``<out>.progress.json``: the run's settings and how far it got."""

    settings: dict[str, Any]
    games: int = 0
    positions: int = 0
    results: list[int] | None = None
    """White wins, draws, Black wins."""
    seconds: float = 0.0
    bytes: int = 0
    """Length of the data file after the last game recorded (a resumed run cuts anything after it)."""

    @classmethod
    def load(cls, path: Path) -> Progress | None:
        if not path.exists():
            return None
        return cls(**json.loads(path.read_text(encoding="utf-8")))

    def save(self, path: Path) -> None:
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(asdict(self), indent=1) + "\n", encoding="utf-8")
        os.replace(temporary, path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.tools.selfplay", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="FEN;score;result lines are appended here")
    parser.add_argument("--games", type=int, required=True, help="games the run should reach in all")
    parser.add_argument("--workers", type=int, default=1, help="processes, one engine each")
    parser.add_argument("--openings", default=None, help=f"EPD or PGN (default: {DEFAULT_OPENINGS})")
    defaults = SelfPlaySettings()
    for name, value in asdict(defaults).items():
        if name == "openings":
            continue
        flag = "--" + name.replace("_", "-")
        if isinstance(value, bool):
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, type=type(value), default=value)
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)

    progress_path = args.out.with_name(args.out.name + ".progress.json")
    progress = Progress.load(progress_path)
    if progress is not None:
        settings = SelfPlaySettings(**progress.settings)
        print(f"resuming after {progress.games} games ({progress.positions} positions); settings from "
              f"{progress_path}", file=sys.stderr)
    else:
        openings = args.openings or str(DEFAULT_OPENINGS)
        if not Path(openings).exists():
            print(f"error: no openings at {openings}: give --openings FILE (EPD or PGN)", file=sys.stderr)
            return 2
        values = {name: getattr(args, name) for name in asdict(defaults) if name != "openings"}
        settings = SelfPlaySettings(openings=openings, **values)
        progress = Progress(asdict(settings), results=[0, 0, 0])
        args.out.parent.mkdir(parents=True, exist_ok=True)
    assert progress.results is not None
    todo = args.games - progress.games
    if todo <= 0:
        print(f"{progress.games} games already played", file=sys.stderr)
        return 0
    from tqdm import tqdm

    stop_on_sigterm()
    if args.out.exists() and args.out.stat().st_size > progress.bytes:
        with open(args.out, "r+b") as handle:  # a game written but not recorded: it is played again
            handle.truncate(progress.bytes)
    started = time.time()
    bar = tqdm(total=args.games, initial=progress.games, unit="game", disable=args.no_progress, mininterval=2.0)
    with open(args.out, "a", encoding="utf-8") as out:
        games = play_games(settings, progress.games, todo, args.workers)
        # ``progress`` is replaced, never changed in place, so that a stop (SIGTERM or Ctrl-C,
        # raised between any two bytecodes) always finds it consistent with the data file up
        # to ``progress.bytes``: a game written but not yet counted is cut off again below.
        try:
            for game in games:
                out.write("".join(line + "\n" for line in game.lines()))
                out.flush()
                counted = counted_game(progress, game, out.tell(), time.time() - started)
                started = time.time()
                counted.save(progress_path)
                progress = counted
                bar.update(1)
                bar.set_postfix(positions=progress.positions)
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
        finally:
            games.close()  # ends the worker pool
            out.truncate(progress.bytes)
            progress.save(progress_path)
    bar.close()
    print(f"{progress.games} games, {progress.positions} positions, results (1-0, draw, 0-1) {progress.results}, "
          f"{progress.seconds:.0f} s", file=sys.stderr)
    return 0


def counted_game(progress: Progress, game: GameData, length: int, seconds: float) -> Progress:
    """The progress after one more game, written to the data file, which is now ``length`` bytes long."""
    assert progress.results is not None
    results = list(progress.results)
    results[0 if game.result == 1.0 else 1 if game.result == 0.5 else 2] += 1
    return replace(progress, games=progress.games + 1, positions=progress.positions + len(game.positions),
                   results=results, seconds=progress.seconds + seconds, bytes=length)


if __name__ == "__main__":
    sys.exit(main())
