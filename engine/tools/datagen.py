"""Labelled training positions for tuning the evaluation (Texel tuning).

    python -m engine.tools.datagen --pgn /work/matches/*.pgn --out texel.txt
    python -m engine.tools.datagen --selfplay 2000 --play-nodes 2000 --depth 8 --out texel.txt
    python -m engine.tools.datagen --selfplay 500 --save-games games.pgn     # collect only
    python -m engine.tools.datagen --fens selfplay.txt --depth 8 --out relabelled.txt

This module owns the whole pipeline from games to a tuning file:

1. *Collect* positions: every position of the games in ``--pgn`` files (after
   ``--skip-plies``; games whose result is ``*`` are skipped) and/or of
   ``--selfplay N`` games that Stockfish plays against itself at
   ``--play-nodes`` per move from random positions of an ``--openings`` file
   (EPD or PGN).  Self-play games diverge through a random legal move with
   probability ``--random-prob`` and a random choice among the ``--multipv``
   best moves within ``--multipv-margin`` centipawns, both during the first
   ``--random-plies`` plies.  A game ends by the rules (mate, stalemate,
   threefold repetition, fifty moves, insufficient material), by adjudication
   once ``|score|`` stays above ``--adjudicate-score`` for
   ``--adjudicate-plies`` plies, or at ``--max-plies`` (result from the sign of
   the last score, a draw within 100 cp).  Each position carries its game's
   final result.  ``--fens`` files (``FEN;score;result`` lines, the format this
   tool and ``engine.tools.selfplay`` write) give positions with their results
   as they stand, so that Numbat's own self-play can be relabelled by Stockfish;
   their FENs are read as Chess960 (X-FEN), which standard positions also are.
2. *Deduplicate* by FEN without the move counters (first occurrence kept) and
   *filter*: side to move in check, fewer than ``--min-pieces`` pieces, with
   ``--drop-tb`` anything with 5 pieces or fewer, with ``--quiet-game-move``
   positions whose next move in the game is a capture, promotion or check.
3. *Label* each position (in a seeded random order) with Stockfish at
   ``--depth`` (or ``--nodes``), 1 thread, Hash 16, one engine process per
   ``--workers`` thread.  Positions whose best move (``pv[0]``) is a capture, a
   promotion or gives check, and positions with a mate score, are dropped.
4. *Write* ``--out``: one position a line, ``FEN;score;result``, the score in
   centipawns and the result (1.0, 0.5, 0.0) both from White's point of view,
   at most ``--limit`` lines; then print a summary.
"""

from __future__ import annotations

import argparse
import queue
import random
import shlex
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import chess
import chess.engine
import chess.pgn

from engine.tools.data import default_path, require_data
from engine.tools.engines import STOCKFISH_PATH

try:
    from tqdm import tqdm
except ImportError:  # pragma: no cover
    tqdm = None

DEFAULT_OPENINGS = default_path("openings")  # None without ../shared/data
RESULTS = {"1-0": "1.0", "0-1": "0.0", "1/2-1/2": "0.5"}
MATE_CP = 32000          # mate scores as centipawns while playing (adjudication only)
CAP_DRAW_BAND = 100      # at the ply cap, |last score| within this is a draw

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Sample:
    """One collected position: full FEN, game result ("1.0"/"0.5"/"0.0") and the move played from it."""

    fen: str
    result: str
    move: str | None  # UCI of the next move in the game, None for a game's last position
    chess960: bool = False  # castling rights read as X-FEN (Chess960)


@dataclass
class Stats:
    """Counters for the summary."""

    games: int = 0
    games_skipped: int = 0
    read: int = 0
    unique: int = 0
    dropped: Counter = field(default_factory=Counter)
    filtered: int = 0
    labelled: int = 0
    written: int = 0
    terminations: Counter = field(default_factory=Counter)


# ---------------------------------------------------------------- engines


def open_engine(path: str, hash_mb: int = 16) -> chess.engine.SimpleEngine:
    """Start one engine process (``path``: a command line, quoted as in a shell), 1 thread, ``hash_mb`` MB of hash."""
    engine = chess.engine.SimpleEngine.popen_uci(shlex.split(path))
    engine.configure({"Threads": 1, "Hash": hash_mb})
    return engine


def parallel(items: Iterable[T], work: Callable[[chess.engine.SimpleEngine, T], R], workers: int,
             engine_path: str) -> Generator[R, None, None]:
    """Run ``work(engine, item)`` over ``items`` on ``workers`` threads, each with its own engine.

    Results are yielded in completion order.  Closing the generator early (for
    instance once a limit is reached) stops the threads after their current
    item and quits their engines.  A crashed engine is restarted once per item.
    """
    source = iter(items)
    lock = threading.Lock()
    stop = threading.Event()
    results: queue.Queue = queue.Queue(maxsize=max(64, 16 * workers))
    done = object()  # a worker's last message

    def put(value: Any) -> None:
        while not stop.is_set():
            try:
                results.put(value, timeout=0.2)
                return
            except queue.Full:
                continue

    def run() -> None:
        engine = None
        try:
            engine = open_engine(engine_path)
            while not stop.is_set():
                with lock:
                    try:
                        item = next(source)
                    except StopIteration:
                        break
                try:
                    value = work(engine, item)
                except (chess.engine.EngineTerminatedError, chess.engine.EngineError):
                    try:
                        engine.close()
                    except Exception:  # pragma: no cover - already dead
                        pass
                    engine = open_engine(engine_path)
                    value = work(engine, item)
                put(value)
        except BaseException as exc:  # hand the failure to the consumer
            put(exc)
        finally:
            if engine is not None:
                try:
                    engine.quit()
                except Exception:  # pragma: no cover
                    pass
            put(done)

    threads = [threading.Thread(target=run, daemon=True) for _ in range(max(1, workers))]
    for thread in threads:
        thread.start()
    finished = 0
    try:
        while finished < len(threads):
            value = results.get()
            if value is done:
                finished += 1
            elif isinstance(value, BaseException):
                raise value
            else:
                yield value
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)


class Progress:
    """A tqdm bar when tqdm is installed and progress is on, else a plain line every ``interval`` seconds."""

    def __init__(self, desc: str, total: int | None, unit: str, enabled: bool, interval: float = 60.0) -> None:
        self.desc, self.total, self.unit = desc, total, unit
        self.done = 0
        self.postfix = ""
        self.interval = interval
        self.start = self.last = time.monotonic()
        self.bar = (tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True, file=sys.stderr,
                         mininterval=1.0)
                    if enabled and tqdm is not None else None)

    def update(self, n: int = 1, postfix: str = "") -> None:
        """Count ``n`` more units and show ``postfix``."""
        self.done += n
        self.postfix = postfix
        if self.bar is not None:
            if postfix:
                self.bar.set_postfix_str(postfix, refresh=False)
            self.bar.update(n)
            return
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            self._line(now)

    def _line(self, now: float) -> None:
        total = f"/{self.total}" if self.total else ""
        rate = self.done / max(1e-9, now - self.start)
        print(f"{self.desc}: {self.done}{total} {self.unit} ({rate:.1f}/s) {self.postfix}",
              file=sys.stderr, flush=True)

    def close(self) -> None:
        """Finish the bar, or print a last plain line."""
        if self.bar is not None:
            self.bar.close()
        else:
            self._line(time.monotonic())


# ---------------------------------------------------------------- collecting


def pgn_samples(path: Path, skip_plies: int, stats: Stats) -> Iterator[Sample]:
    """Every position of every finished game in ``path`` from ply ``skip_plies`` on, with the game result."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            try:
                game = chess.pgn.read_game(handle)
            except (ValueError, UnicodeDecodeError):  # pragma: no cover - damaged file
                stats.games_skipped += 1
                continue
            if game is None:
                return
            result = RESULTS.get(game.headers.get("Result", "*"))
            if result is None or game.errors:
                stats.games_skipped += 1
                continue
            stats.games += 1
            board = game.board()
            ply = 0
            for move in game.mainline_moves():
                if ply >= skip_plies:
                    yield Sample(board.fen(), result, move.uci())
                board.push(move)
                ply += 1
            if ply >= skip_plies:
                yield Sample(board.fen(), result, None)


def fens_samples(path: Path) -> Iterator[Sample]:
    """Every ``FEN;score;result`` line of ``path`` (read by the tuner's reader) as a sample with that result."""
    from engine.tools.tune import load_positions

    fens, _, results = load_positions(path)
    for fen, result in zip(fens, results, strict=True):
        yield Sample(fen, f"{result:.1f}", None, chess960=True)


def load_openings(path: Path) -> list[str]:
    """Start positions from an EPD file (one per line) or a PGN file (each game's final position)."""
    fens: list[str] = []
    if path.suffix.lower() == ".pgn":
        with open(path, encoding="utf-8", errors="replace") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                fens.append(game.end().board().fen())
        return fens
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            fields = line.split(";")[0].split()
            if len(fields) >= 4:  # checked when drawn (see start_board): parsing them all up front is slow
                fens.append(" ".join(fields[:4]) + " 0 1")
    return fens


def start_board(openings: list[str], rng: random.Random) -> chess.Board:
    """A random valid start position from ``openings`` (invalid entries are redrawn, up to 100 times)."""
    for _ in range(100):
        try:
            board = chess.Board(rng.choice(openings))
        except ValueError:
            continue
        if board.is_valid() and board.outcome() is None:
            return board
    raise ValueError("no valid start position among the openings")


@dataclass(frozen=True)
class SelfplayConfig:
    """How self-play games are played."""

    openings: list[str]
    seed: int
    play_nodes: int
    multipv: int
    multipv_margin: int
    random_plies: int
    random_prob: float
    adjudicate_score: int
    adjudicate_plies: int
    max_plies: int
    skip_plies: int


@dataclass
class SelfplayGame:
    """One finished self-play game."""

    samples: list[Sample]
    termination: str
    pgn: str


def play_game(engine: chess.engine.SimpleEngine, index: int, cfg: SelfplayConfig) -> SelfplayGame:
    """Play self-play game number ``index`` (seeded by ``cfg.seed`` and ``index``) and return its positions."""
    rng = random.Random(cfg.seed * 1_000_003 + index)
    board = start_board(cfg.openings, rng)
    limit = chess.engine.Limit(nodes=cfg.play_nodes)
    fens: list[tuple[str, str]] = []
    score = 0
    streak = 0
    result = None
    termination = ""
    ply = 0
    while True:
        outcome = board.outcome()
        if outcome is not None:
            result = outcome.result()
            termination = outcome.termination.name.lower()
            break
        if board.halfmove_clock >= 100 or board.is_repetition(3):  # claimable draws, cheaper than claim_draw=True
            result = "1/2-1/2"
            termination = "fifty_moves" if board.halfmove_clock >= 100 else "threefold_repetition"
            break
        if ply >= cfg.max_plies:
            result = "1/2-1/2" if abs(score) <= CAP_DRAW_BAND else ("1-0" if score > 0 else "0-1")
            termination = "max_plies"
            break
        opening_phase = ply < cfg.random_plies
        if opening_phase and rng.random() < cfg.random_prob:
            move = rng.choice(list(board.legal_moves))
        else:
            multipv = cfg.multipv if opening_phase else 1
            infos = engine.analyse(board, limit, multipv=multipv, game=index)
            infos = [info for info in infos if info.get("pv")]
            best = infos[0]["score"].relative.score(mate_score=MATE_CP)
            candidates = [info["pv"][0] for info in infos
                          if best - info["score"].relative.score(mate_score=MATE_CP) <= cfg.multipv_margin]
            move = rng.choice(candidates)
            score = infos[0]["score"].white().score(mate_score=MATE_CP)
            streak = streak + 1 if abs(score) > cfg.adjudicate_score else 0
            if streak >= cfg.adjudicate_plies:
                result = "1-0" if score > 0 else "0-1"
                termination = "adjudication"
                break
        fens.append((board.fen(), move.uci()))
        board.push(move)
        ply += 1
    fens.append((board.fen(), ""))
    label = RESULTS[result]
    samples = [Sample(fen, label, move or None) for fen, move in fens[cfg.skip_plies:]]
    game = chess.pgn.Game.from_board(board)
    game.headers["Event"] = "datagen selfplay"
    game.headers["Site"] = "?"
    game.headers["Round"] = str(index + 1)
    game.headers["White"] = game.headers["Black"] = f"stockfish nodes={cfg.play_nodes}"
    game.headers["Result"] = result
    game.headers["Termination"] = termination
    return SelfplayGame(samples, termination, str(game))


# ---------------------------------------------------------------- filtering and labelling


def dedup_key(fen: str) -> str:
    """The FEN without the halfmove and fullmove counters."""
    return " ".join(fen.split()[:4])


def filter_reason(sample: Sample, min_pieces: int, drop_tb: bool, quiet_game_move: bool) -> str | None:
    """Why ``sample`` is dropped before labelling, or None to keep it."""
    board = chess.Board(sample.fen, chess960=sample.chess960)
    if board.is_check():
        return "in check"
    pieces = chess.popcount(board.occupied)
    if pieces < min_pieces:
        return f"< {min_pieces} pieces"
    if drop_tb and pieces <= 5:
        return "<= 5 pieces (--drop-tb)"
    if board.is_game_over():
        return "game over"
    if quiet_game_move and sample.move:
        move = chess.Move.from_uci(sample.move)
        if board.is_capture(move) or move.promotion or board.gives_check(move):
            return "game move not quiet"
    return None


@dataclass(frozen=True)
class Label:
    """The outcome of labelling one sample: an output line, or the reason it was dropped."""

    line: str | None
    reason: str | None
    pieces: int
    score: int


def label(engine: chess.engine.SimpleEngine, sample: Sample, limit: chess.engine.Limit) -> Label:
    """Search ``sample`` and return its ``FEN;score;result`` line unless its best move is not quiet or it is a mate."""
    board = chess.Board(sample.fen, chess960=sample.chess960)
    pieces = chess.popcount(board.occupied)
    info = engine.analyse(board, limit)
    score = info.get("score")
    pv = info.get("pv")
    if score is None or not pv:
        return Label(None, "no score or pv", pieces, 0)
    if score.is_mate():
        return Label(None, "mate score", pieces, 0)
    move = pv[0]
    if board.is_capture(move) or move.promotion or board.gives_check(move):
        return Label(None, "best move not quiet", pieces, 0)
    cp = score.white().score()
    assert cp is not None  # not a mate score
    return Label(f"{sample.fen};{cp};{sample.result}", None, pieces, cp)


def piece_bucket(pieces: int) -> str:
    """The summary bucket of a piece count."""
    for top, name in ((8, "<=8"), (16, "9-16"), (24, "17-24")):
        if pieces <= top:
            return name
    return "25-32"


# ---------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.tools.datagen",
                                     description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    src = parser.add_argument_group("sources")
    src.add_argument("--pgn", nargs="+", type=Path, default=[], metavar="FILE", help="PGN files to take positions from")
    src.add_argument("--fens", nargs="+", type=Path, default=[], metavar="FILE",
                     help="FEN;score;result files whose positions and results to relabel")
    src.add_argument("--skip-plies", type=int, default=8, help="positions before this ply of a PGN game are skipped")
    src.add_argument("--selfplay", type=int, default=0, metavar="N", help="number of Stockfish self-play games")
    src.add_argument("--openings", type=Path, default=DEFAULT_OPENINGS,
                     help="EPD or PGN start positions for self-play (default: ../shared/data/openings/noob_3moves.epd)")
    src.add_argument("--seed", type=int, default=1, help="seed for openings, randomness and labelling order")
    src.add_argument("--play-nodes", type=int, default=2000, help="Stockfish nodes per self-play move")
    src.add_argument("--multipv", type=int, default=3, help="self-play picks among this many best moves ...")
    src.add_argument("--multipv-margin", type=int, default=15, help="... those within this many cp of the best")
    src.add_argument("--random-plies", type=int, default=20,
                     help="plies from the start position during which MultiPV choice and random moves apply")
    src.add_argument("--random-prob", type=float, default=0.05, help="chance of a random legal move in those plies")
    src.add_argument("--adjudicate-score", type=int, default=1000, help="adjudicate once |score| stays above this ...")
    src.add_argument("--adjudicate-plies", type=int, default=10, help="... for this many plies")
    src.add_argument("--max-plies", type=int, default=300, help="self-play games stop after this many plies")
    src.add_argument("--selfplay-skip", type=int, default=0,
                     help="positions before this ply of a self-play game (counted from its start position) are skipped")
    src.add_argument("--save-games", type=Path, default=None, metavar="PGN", help="also write the self-play games here")

    flt = parser.add_argument_group("filters")
    flt.add_argument("--min-pieces", type=int, default=3, help="drop positions with fewer pieces (kings included)")
    flt.add_argument("--drop-tb", action="store_true", help="drop positions with 5 pieces or fewer")
    flt.add_argument("--quiet-game-move", action="store_true",
                     help="drop positions whose next game move is a capture, promotion or check (saves labelling)")

    lab = parser.add_argument_group("labelling")
    lab.add_argument("--depth", type=int, default=8, help="Stockfish depth per position")
    lab.add_argument("--nodes", type=int, default=None, help="Stockfish nodes per position instead of --depth")
    lab.add_argument("--workers", type=int, default=1, help="Stockfish processes (threads) in parallel")
    lab.add_argument("--engine", default=STOCKFISH_PATH, help="UCI engine command used to play and label")
    lab.add_argument("--out", type=Path, default=None, help="output file (FEN;score;result); none: collect only")
    lab.add_argument("--limit", type=int, default=None, metavar="N", help="write at most N positions")
    parser.add_argument("--no-progress", action="store_true", help="plain progress lines instead of tqdm bars")
    args = parser.parse_args(argv)
    if not args.pgn and not args.selfplay and not args.fens:
        parser.error("nothing to do: give --pgn files, --fens files and/or --selfplay N")

    start = time.monotonic()
    progress_on = not args.no_progress
    stats = Stats()
    samples: dict[str, Sample] = {}

    def add(sample: Sample) -> None:
        stats.read += 1
        samples.setdefault(dedup_key(sample.fen), sample)

    for path in args.pgn:
        bar = Progress(f"reading {path.name}", None, "pos", progress_on)
        for sample in pgn_samples(path, args.skip_plies, stats):
            add(sample)
            bar.update()
        bar.close()
    pgn_games = stats.games
    for path in args.fens:
        bar = Progress(f"reading {path.name}", None, "pos", progress_on)
        for sample in fens_samples(path):
            add(sample)
            bar.update()
        bar.close()

    if args.selfplay:
        openings = load_openings(require_data(args.openings, "openings", "--openings FILE"))
        if not openings:
            parser.error(f"no start positions in {args.openings}")
        cfg = SelfplayConfig(openings, args.seed, args.play_nodes, max(1, args.multipv), args.multipv_margin,
                             args.random_plies, args.random_prob, args.adjudicate_score, args.adjudicate_plies,
                             args.max_plies, args.selfplay_skip)
        games_out = open(args.save_games, "w", encoding="utf-8") if args.save_games else None
        bar = Progress("self-play", args.selfplay, "game", progress_on)
        try:
            for game in parallel(range(args.selfplay), lambda eng, i: play_game(eng, i, cfg),
                                 args.workers, args.engine):
                stats.games += 1
                stats.terminations[game.termination] += 1
                for sample in game.samples:
                    add(sample)
                if games_out is not None:
                    games_out.write(game.pgn + "\n\n")
                bar.update(1, f"{stats.read} pos, {len(samples)} unique")
        finally:
            bar.close()
            if games_out is not None:
                games_out.close()
    collect_time = time.monotonic() - start

    stats.unique = len(samples)
    kept: list[Sample] = []
    for sample in samples.values():
        reason = filter_reason(sample, args.min_pieces, args.drop_tb, args.quiet_game_move)
        if reason is None:
            kept.append(sample)
        else:
            stats.dropped[reason] += 1
    stats.filtered = len(kept)
    samples.clear()
    random.Random(args.seed).shuffle(kept)

    buckets: Counter = Counter()
    results: Counter = Counter()
    abs_sum = 0
    over_500 = 0
    label_time = 0.0
    if args.out is not None and kept and args.limit != 0:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        limit = chess.engine.Limit(nodes=args.nodes) if args.nodes else chess.engine.Limit(depth=args.depth)
        label_start = time.monotonic()
        bar = Progress("labelling", len(kept), "pos", progress_on)
        with open(args.out, "w", encoding="utf-8") as out:
            labels = parallel(kept, lambda eng, s: label(eng, s, limit), args.workers, args.engine)
            try:
                for item in labels:
                    stats.labelled += 1
                    if item.line is None:
                        stats.dropped[item.reason] += 1
                    else:
                        out.write(item.line + "\n")
                        stats.written += 1
                        buckets[piece_bucket(item.pieces)] += 1
                        results[item.line.rsplit(";", 1)[1]] += 1
                        abs_sum += abs(item.score)
                        over_500 += abs(item.score) > 500
                    bar.update(1, f"{stats.written} written")
                    if args.limit is not None and stats.written >= args.limit:
                        break
            finally:
                labels.close()
                bar.close()
        label_time = time.monotonic() - label_start

    elapsed = time.monotonic() - start
    print(f"games: {pgn_games} from PGN ({stats.games_skipped} skipped), {stats.games - pgn_games} self-play"
          + (f" ({', '.join(f'{k} {v}' for k, v in stats.terminations.most_common())})" if stats.terminations else ""))
    print(f"positions read {stats.read}, after dedup {stats.unique}, after filters {stats.filtered}, "
          f"labelled {stats.labelled}, written {stats.written}")
    if stats.dropped:
        print("dropped: " + ", ".join(f"{reason} {count}" for reason, count in stats.dropped.most_common()))
    print(f"time {elapsed:.0f} s (collect {collect_time:.0f} s, label {label_time:.0f} s); "
          f"{stats.labelled / max(label_time, 1e-9):.1f} labelled pos/s, "
          f"{stats.written / max(elapsed, 1e-9):.1f} written pos/s overall")
    if stats.written:
        n = stats.written
        print("pieces: " + ", ".join(f"{b} {buckets[b]} ({100 * buckets[b] / n:.1f}%)"
                                     for b in ("<=8", "9-16", "17-24", "25-32")))
        print(f"score: mean |score| {abs_sum / n:.0f} cp, |score| > 500 {100 * over_500 / n:.1f}%")
        print("results: " + ", ".join(f"{r} {results[r]} ({100 * results[r] / n:.1f}%)" for r in ("1.0", "0.5", "0.0")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
