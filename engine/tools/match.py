"""Engine-vs-engine matches: paired openings, real clocks, adjudication, PGN output, Elo and SPRT.

This module owns playing games between engines and turning the games into
results: clocks, adjudication, forfeits, PGN, scheduling and the report.
Starting the engines and asking them for a move under a watchdog is
:mod:`engine.tools.engines`; the arithmetic lives in :mod:`engine.tools.stats`.

How a match is played
---------------------
* **Pairings.** Two engines play each other.  With more engines every pair
  meets (round robin); with ``gauntlet`` the first engine meets each of the
  others.
* **Openings.** Lines of an EPD file or games of a PGN file (the game's moves
  are played to its end, or to ``opening_plies``), shuffled with a seed.  Every
  opening is played twice with colours reversed; the two games form a *pair*,
  the unit of the pentanomial statistics.  ``rounds * games`` games are played
  per pairing, each consecutive two on a new opening.
* **Limits.** A clock ``base+increment`` in seconds, kept by the runner: the
  measured wall time of each move is subtracted, the increment added after the
  move (with ``moves/base+increment``, a repeating control, ``base`` is added again
  after each period and ``movestogo`` is sent), and a side whose clock goes below ``-timemargin`` loses on time (a draw
  if the opponent has no mating material).  Or fixed ``nodes``, ``depth`` or
  ``movetime`` per move.  The clock includes the engine's ``ucinewgame`` /
  ``isready`` handshake before its first move of a game.
* **Game end.** Checkmate, stalemate, insufficient material, fifty-move rule and
  threefold repetition are applied automatically.  Adjudication: draw when both
  engines' scores stay near zero (``DrawAdjudication``), loss when an engine's
  score stays very negative (``ResignAdjudication``), the Syzygy result when
  ``tb_path`` is given and the position has few enough pieces, and a draw after
  ``maxmoves`` moves.
* **Faults.** An engine that returns an illegal move or no move, whose process
  dies, or that runs out of time loses the game; the fault is counted for that
  engine, and the engine is restarted before its next game.  A watchdog kills an
  engine that hangs well past its clock (or ``hang_timeout`` under node/depth
  limits); that counts as a time loss.
* **Concurrency.** ``concurrency`` worker threads, each with its own engine
  processes, play pairs of games from a shared queue.
* **SPRT.** With two engines and an :class:`SprtConfig`, the GSPRT on the
  pentanomial counts is updated after every finished pair, and the match stops
  as soon as it accepts H0 or H1 (games still running are abandoned and not
  counted).

Command line::

    python -m engine.tools.match \\
        --engine cmd="python run_engine.py" name=numbat option.Hash=16 \\
        --engine cmd=/usr/games/stockfish name=sf option.UCI_LimitStrength=true option.UCI_Elo=1500 \\
        --openings ../shared/data/openings/noob_3moves.epd --tc 10+0.1 --rounds 50 \\
        --concurrency 2 --pgn games.pgn --sprt elo0=0 elo1=5

API: build a :class:`MatchConfig` and call :func:`run_match`, which returns a
:class:`MatchResult`; :func:`format_report` renders it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import queue
import random
import shlex
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from itertools import combinations
from pathlib import Path
from typing import Any, TextIO

import chess
import chess.engine
import chess.pgn
import chess.syzygy

from engine.tools import stats
from engine.tools.data import require_data
from engine.tools.engines import EngineConfig, EngineProcess, MatchError, play_move, quiet_engine_log, score_text
from engine.tools.progress import ProgressBar, stop_on_sigterm

MATE_CP = 100_000
"""Centipawn value given to mate scores when comparing them with adjudication thresholds."""

HANG_GRACE = 5.0
"""Seconds past an engine's clock (or movetime) after which the watchdog kills it."""


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TimeControl:
    """A clock: ``base`` seconds plus ``increment`` seconds after each move.

    With ``moves`` it is a repeating control, as in "40 moves in 5 minutes": each side
    gets ``base`` seconds more after every ``moves`` of its own moves, and is told at
    each move how many are left in its period (UCI ``movestogo``).
    """

    base: float
    increment: float = 0.0
    moves: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse ``"10+0.1"``, ``"60"``, ``"1:30+1"`` (seconds, or minutes:seconds) or
        ``"40/60"`` and ``"40/1:00+0.5"`` (moves per period, cutechess's notation)."""
        moves: int | None = None
        moves_text, slash, clock_text = text.rpartition("/")
        if slash:
            if not moves_text.isdigit() or int(moves_text) <= 0:
                raise ValueError(f"bad time control {text!r}: moves per period must be a positive integer")
            moves = int(moves_text)
        base_text, _, inc_text = clock_text.partition("+")
        if ":" in base_text:
            minutes, _, seconds = base_text.partition(":")
            base = 60.0 * float(minutes) + float(seconds)
        else:
            base = float(base_text)
        increment = float(inc_text) if inc_text else 0.0
        if base <= 0 or increment < 0:
            raise ValueError(f"bad time control {text!r}")
        return cls(base, increment, moves)

    def moves_to_go(self, moves_made: int) -> int | None:
        """Moves left in the current period for a side that has made ``moves_made`` moves."""
        if self.moves is None:
            return None
        return self.moves - moves_made % self.moves

    def after_move(self, moves_made: int) -> float:
        """Seconds added to a clock once its side has made its ``moves_made``-th move."""
        period_done = self.moves is not None and moves_made % self.moves == 0
        return self.increment + (self.base if period_done else 0.0)

    def __str__(self) -> str:
        clock = f"{self.base:g}+{self.increment:g}"
        return clock if self.moves is None else f"{self.moves}/{clock}"


@dataclass(frozen=True)
class DrawAdjudication:
    """Draw when, from full move ``movenumber`` on, both engines' last ``movecount`` scores are within
    ``score`` cp of 0."""

    movenumber: int = 40
    movecount: int = 8
    score: int = 10


@dataclass(frozen=True)
class ResignAdjudication:
    """Loss for an engine whose own score was ``-score`` cp or worse on each of its last ``movecount`` moves.

    With ``twosided`` the opponent must agree: its last ``movecount`` scores must be ``+score`` or better.
    """

    movecount: int = 3
    score: int = 600
    twosided: bool = False


@dataclass(frozen=True)
class SprtConfig:
    """SPRT hypotheses in logistic Elo and the error rates."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05


@dataclass
class MatchConfig:
    """Everything :func:`run_match` needs."""

    engines: list[EngineConfig]
    """Two or more engines; with ``gauntlet`` the first plays all the others."""
    openings: str | None = None
    """EPD or PGN file of openings (``.pgn`` means PGN); ``None`` plays from the start position."""
    opening_order: str = "random"
    """``"random"`` (shuffled with ``seed``) or ``"sequential"``."""
    opening_plies: int | None = None
    """Play at most this many plies of each PGN opening (default: the whole game)."""
    seed: int | None = None
    """Seed of the opening shuffle; ``None`` picks one (reported in the result)."""
    chess960: bool = False
    """The openings are Chess960 positions (``UCI_Chess960`` is set for the engines that have it)."""
    tc: TimeControl | None = None
    nodes: int | None = None
    depth: int | None = None
    movetime: float | None = None
    """Seconds per move."""
    timemargin_ms: int = 0
    """How far below zero a clock (or past movetime) may go before it is a time loss."""
    games: int = 2
    """Games per round and pairing; each consecutive two share an opening with colours reversed."""
    rounds: int = 1
    """Rounds; a pairing plays ``rounds * games`` games."""
    concurrency: int = 1
    draw: DrawAdjudication | None = None
    resign: ResignAdjudication | None = None
    tb_path: str | None = None
    """Syzygy directory (several joined with ``os.pathsep``) for tablebase adjudication."""
    maxmoves: int | None = None
    """Adjudicate a draw after this many moves by each side (counted from the end of the opening)."""
    pgn_out: str | None = None
    """PGN file the games are appended to."""
    state_path: str | None = None
    """JSON file holding every finished game's result, rewritten after each game; when it exists at the
    start, the match resumes from it (see :class:`MatchState`)."""
    sprt: SprtConfig | None = None
    gauntlet: bool = False
    event: str = "Numbat match"
    progress: bool = True
    """Show a progress bar on stderr."""
    start_timeout: float = 60.0
    """Seconds an engine gets to answer ``uci``/``isready`` (or the xboard handshake) at start-up."""
    hang_timeout: float = 600.0
    """Seconds a move may take under node/depth limits before the engine is killed as hung."""

    def validate(self) -> None:
        """Raise :class:`MatchError` when the configuration cannot be played."""
        if len(self.engines) < 2:
            raise MatchError("a match needs at least two engines")
        if self.tc is None and self.nodes is None and self.depth is None and self.movetime is None:
            raise MatchError("give a limit: tc, nodes, depth or movetime")
        if self.games < 1 or self.rounds < 1 or self.concurrency < 1:
            raise MatchError("games, rounds and concurrency must be at least 1")
        if self.sprt is not None and (len(self.engines) != 2):
            raise MatchError("SPRT needs exactly two engines")
        if self.opening_order not in ("random", "sequential"):
            raise MatchError("opening order must be random or sequential")


def parse_key_values(tokens: Sequence[str], what: str) -> dict[str, str]:
    """Split ``key=value`` tokens into a dict; :class:`ValueError` names the bad token."""
    result: dict[str, str] = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key:
            raise ValueError(f"{what}: expected key=value, got {token!r}")
        result[key] = value
    return result


def parse_engine(tokens: Sequence[str]) -> EngineConfig:
    """An :class:`EngineConfig` from ``cmd=... name=... proto=uci|xboard dir=... nodes=N depth=N
    restart=on|off option.NAME=VALUE env.NAME=VALUE`` tokens (``env.``: an environment variable for
    that engine's process alone; ``nodes``, ``depth``: that engine's own limit per move in a fixed-work
    match; ``restart=on``: a fresh process for every game)."""
    pairs = parse_key_values(tokens, "--engine")
    options = {k[len("option."):]: v for k, v in pairs.items() if k.startswith("option.")}
    env = {k[len("env."):]: v for k, v in pairs.items() if k.startswith("env.")}
    known = ("cmd", "name", "proto", "dir", "nodes", "depth", "restart")
    unknown = [k for k in pairs if not k.startswith(("option.", "env.")) and k not in known]
    if unknown:
        raise ValueError(f"--engine: unknown key(s) {', '.join(unknown)}")
    if "cmd" not in pairs:
        raise ValueError("--engine needs cmd=COMMAND")
    return EngineConfig(cmd=shlex.split(pairs["cmd"]), name=pairs.get("name", ""),
                        proto=pairs.get("proto", "uci"), options=options, workdir=pairs.get("dir"), env=env,
                        nodes=int(pairs["nodes"]) if "nodes" in pairs else None,
                        depth=int(pairs["depth"]) if "depth" in pairs else None,
                        restart=_parse_bool(pairs.get("restart", "off")))


def _parse_bool(text: str) -> bool:
    """``true/false``, ``yes/no``, ``1/0``."""
    lowered = text.lower()
    if lowered in ("true", "yes", "1", "on"):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"expected a boolean, got {text!r}")


def parse_settings(cls: type, tokens: Sequence[str], what: str) -> Any:
    """Instantiate a frozen dataclass of numbers/bools from ``key=value`` tokens, defaults for missing keys."""
    pairs = parse_key_values(tokens, what)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    kwargs: dict[str, Any] = {}
    for key, value in pairs.items():
        if key not in fields:
            raise ValueError(f"{what}: unknown key {key!r} (known: {', '.join(fields)})")
        kind = fields[key].type
        if kind in ("bool", bool):
            kwargs[key] = _parse_bool(value)
        elif kind in ("int", int):
            kwargs[key] = int(value)
        else:
            kwargs[key] = float(value)
    return cls(**kwargs)


# ---------------------------------------------------------------------------
# Openings
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Opening:
    """A start position and the book moves played from it."""

    fen: str = chess.STARTING_FEN
    moves: tuple[str, ...] = ()
    """Book moves in UCI notation."""
    chess960: bool = False
    """A Chess960 position (castling rights name the rooks; engines get ``UCI_Chess960``)."""

    def board(self) -> chess.Board:
        """The board after the book moves, with the moves on its stack (for repetitions and PGN)."""
        board = chess.Board(self.fen, chess960=self.chess960)
        for uci in self.moves:
            board.push_uci(uci)
        return board


def parse_opening_line(line: str, chess960: bool = False) -> Opening:
    """An :class:`Opening` from an EPD line, or a FEN with move counters (as in the opening books)."""
    tokens = line.split()
    if len(tokens) >= 6 and tokens[4].isdigit() and tokens[5].isdigit():
        board = chess.Board(" ".join(tokens[:6]), chess960=chess960)
    else:
        board, _ = chess.Board.from_epd(line, chess960=chess960)
    return Opening(board.fen(), chess960=chess960)


class OpeningBook:
    """Openings from an EPD or PGN file in a fixed (seeded) order, parsed on demand; thread-safe.

    EPD lines are kept as text; PGN games are found by file offset and read when
    first asked for, so large books start instantly.
    """

    def __init__(self, path: str | None, order: str = "random", seed: int = 0,
                 plies: int | None = None, chess960: bool = False) -> None:
        self.path = path
        self.plies = plies
        self.chess960 = chess960
        self._lines: list[str] = []
        self._offsets: list[int] = []
        self._cache: dict[int, Opening] = {}
        self._lock = threading.Lock()
        if path is None:
            self._size = 1
            return
        if path.lower().endswith(".pgn"):
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                while True:
                    offset = handle.tell()
                    if chess.pgn.read_headers(handle) is None:
                        break
                    self._offsets.append(offset)
            self._size = len(self._offsets)
        else:
            with open(path, encoding="utf-8-sig", errors="replace") as handle:
                self._lines = [ln.strip() for ln in handle if ln.strip() and not ln.lstrip().startswith("#")]
            self._size = len(self._lines)
        if self._size == 0:
            raise MatchError(f"no openings in {path}")
        self._order = list(range(self._size))
        if order == "random":
            random.Random(seed).shuffle(self._order)

    def __len__(self) -> int:
        return self._size

    def get(self, index: int) -> Opening:
        """Opening number ``index`` of the shuffled order (wrapping around at the end of the file)."""
        if self.path is None:
            return Opening(chess960=self.chess960)
        entry = self._order[index % self._size]
        with self._lock:
            cached = self._cache.get(entry)
        if cached is not None:
            return cached
        opening = self._read(entry)
        with self._lock:
            self._cache[entry] = opening
        return opening

    def _read(self, entry: int) -> Opening:
        """Parse one entry of the file."""
        assert self.path is not None
        if self._lines:
            try:
                return parse_opening_line(self._lines[entry], self.chess960)
            except ValueError as exc:
                raise MatchError(f"{self.path}: bad opening line {self._lines[entry]!r}: {exc}") from exc
        with open(self.path, encoding="utf-8-sig", errors="replace") as handle:
            handle.seek(self._offsets[entry])
            game = chess.pgn.read_game(handle)
        if game is None or game.errors:
            raise MatchError(f"{self.path}: cannot read game {entry + 1}")
        moves = [m.uci() for m in game.mainline_moves()]
        if self.plies is not None:
            moves = moves[: self.plies]
        return Opening(game.board().fen(), tuple(moves), self.chess960)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass
class GameRecord:
    """One finished game."""

    white: str
    black: str
    result: str
    """``"1-0"``, ``"0-1"`` or ``"1/2-1/2"``."""
    termination: str
    """Why the game ended, e.g. ``"checkmate"``, ``"time forfeit"``, ``"adjudication: draw by scores"``."""
    opening_fen: str
    """Position where the engines took over."""
    plies: int
    """Plies played by the engines."""
    pairing: int
    """Index of the pairing in :attr:`MatchResult.pairings`."""
    pair: int
    """Index of the opening pair within the pairing."""
    slot: int
    """0 for the first game of the pair (pairing's first engine has White), 1 for the reversed game."""
    fault: str | None = None
    """``"time"``, ``"illegal"`` or ``"crash"`` when an engine forfeited."""
    faulty_engine: str | None = None
    pgn: str = ""

    def score_for(self, name: str) -> float:
        """Points (1, 0.5 or 0) that engine ``name`` scored in this game."""
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == (name == self.white) else 0.0


@dataclass
class EngineStats:
    """Totals of one engine over the whole match."""

    name: str
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    time_losses: int = 0
    illegal_moves: int = 0
    crashes: int = 0

    @property
    def points(self) -> float:
        """Wins plus half the draws."""
        return self.wins + 0.5 * self.draws


@dataclass
class PairingResult:
    """Results of engine ``first`` against engine ``second``, from ``first``'s point of view."""

    first: str
    second: str
    wins: int = 0
    draws: int = 0
    losses: int = 0
    pentanomial: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    """Pair counts for pair scores 0, 0.5, 1, 1.5, 2 of ``first``."""

    @property
    def games(self) -> int:
        """Games finished."""
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Points of ``first``."""
        return self.wins + 0.5 * self.draws

    @property
    def score(self) -> float:
        """Score fraction of ``first`` (0.5 before any game)."""
        return self.points / self.games if self.games else 0.5

    def elo(self) -> stats.EloEstimate:
        """Elo of ``first`` with a 95% interval: pentanomial when pairs exist, else trinomial."""
        if sum(self.pentanomial) > 0:
            return stats.elo_pentanomial(self.pentanomial)
        return stats.elo_trinomial([self.losses, self.draws, self.wins])

    def los(self) -> float:
        """Likelihood that ``first`` is stronger: pentanomial when pairs exist, else from wins/losses."""
        if sum(self.pentanomial) > 0:
            return stats.los_pentanomial(self.pentanomial)
        return stats.los(self.wins, self.losses)


@dataclass
class MatchResult:
    """Everything a match produced."""

    config: MatchConfig
    pairings: list[PairingResult]
    engines: dict[str, EngineStats]
    games: list[GameRecord]
    seed: int
    """The opening shuffle seed actually used."""
    sprt: stats.SprtResult | None = None
    stopped: str = "completed"
    """``"completed"``, ``"SPRT H0"``, ``"SPRT H1"`` or ``"interrupted"``."""
    elapsed: float = 0.0
    """Wall seconds."""


# ---------------------------------------------------------------------------
# Resumable state
# ---------------------------------------------------------------------------

STATE_VERSION = 1


def match_fingerprint(config: MatchConfig) -> dict[str, Any]:
    """What must not change between a match and its resumption: engines (names, options, environment), openings,
    limits, games per round, adjudication and SPRT.  The engines' commands and folders may change (a
    checkout elsewhere on another machine), and so may rounds and concurrency."""
    def settings(value: Any) -> Any:
        return dataclasses.asdict(value) if value is not None else None

    return {
        "engines": [{"name": e.name, "proto": e.proto, "options": dict(e.options),
                     **({"env": dict(e.env)} if e.env else {}),   # absent when empty: older states resume
                     **e.own_limits()}
                    for e in config.engines],
        "openings": Path(config.openings).name if config.openings else None,
        "opening_order": config.opening_order, "opening_plies": config.opening_plies,
        "chess960": config.chess960,
        "tc": str(config.tc) if config.tc is not None else None,
        "nodes": config.nodes, "depth": config.depth, "movetime": config.movetime,
        "timemargin_ms": config.timemargin_ms, "games": config.games,
        "draw": settings(config.draw), "resign": settings(config.resign),
        "tb": config.tb_path is not None, "maxmoves": config.maxmoves,
        "sprt": settings(config.sprt), "gauntlet": config.gauntlet,
    }


@dataclass
class MatchState:
    """A match's checkpoint: its fingerprint, the opening seed and one row per finished game.

    A row is ``[pairing, pair, slot, result, termination, fault, faulty engine]``, a few
    dozen bytes, so a 10,000-game match fits in a file small enough to commit.  Games under
    way when a match stops are not in it, and are played again on resumption.
    """

    fingerprint: dict[str, Any]
    seed: int
    games: list[list[Any]] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> MatchState:
        """Read a checkpoint written by :meth:`save`."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        if data.get("version") != STATE_VERSION:
            raise MatchError(f"{path}: not a match state of version {STATE_VERSION}")
        return cls(data["fingerprint"], int(data["seed"]), [list(row) for row in data["games"]])

    def save(self, path: str | Path) -> None:
        """Write the checkpoint atomically (a stop mid-write leaves the previous one)."""
        path = Path(path)
        body = {"version": STATE_VERSION, "seed": self.seed, "fingerprint": self.fingerprint}
        # The header indented, then one game a line (a diff of the committed file is the new games).
        text = json.dumps(body, indent=1)[:-2] + ',\n "games": [\n'
        text += ",\n".join("  " + json.dumps(row) for row in self.games) + "\n ]\n}\n"
        scratch = path.with_name(path.name + ".tmp")
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, path)

    def record(self, game: GameRecord) -> None:
        """Add a finished game."""
        self.games.append([game.pairing, game.pair, game.slot, game.result, game.termination, game.fault,
                           game.faulty_engine])

    def records(self, pairings: Sequence[PairingResult]) -> list[GameRecord]:
        """The finished games as :class:`GameRecord` objects (without moves or PGN)."""
        out = []
        for pairing, pair, slot, result, termination, fault, faulty in self.games:
            first, second = pairings[pairing].first, pairings[pairing].second
            white, black = (first, second) if slot == 0 else (second, first)
            out.append(GameRecord(white, black, result, termination, "", 0, pairing, pair, slot, fault, faulty))
        return out


def open_state(config: MatchConfig, seed: int) -> MatchState | None:
    """The checkpoint at ``config.state_path``: loaded and checked against ``config`` when the file
    exists, else a new empty one with opening seed ``seed``; None without a state path."""
    if config.state_path is None:
        return None
    fingerprint = match_fingerprint(config)
    path = Path(config.state_path)
    if not path.exists():
        return MatchState(fingerprint, seed)
    state = MatchState.load(path)
    changed = sorted(k for k in fingerprint.keys() | state.fingerprint.keys()
                     if fingerprint.get(k) != state.fingerprint.get(k))
    if changed:
        raise MatchError(f"{path} is a different match: {', '.join(changed)} changed "
                         "(start a new state file for a new match)")
    if config.seed is not None and config.seed != state.seed:
        raise MatchError(f"{path} was played with opening seed {state.seed}, not {config.seed}")
    return state


# ---------------------------------------------------------------------------
# Playing one game
# ---------------------------------------------------------------------------


def _move_comment(info: chess.engine.InfoDict, turn: chess.Color, elapsed: float) -> str:
    """Cutechess-style comment ``+0.35/12 0.123s`` (score/depth, then the time used)."""
    score = score_text(info.get("score"), turn)
    depth = info.get("depth")
    head = score + (f"/{depth}" if depth is not None else "")
    return f"{head} {elapsed:.3f}s".strip()


def _syzygy_max_pieces(path: str) -> int:
    """Largest piece count among the ``*.rtbw`` tables under the ``os.pathsep``-separated directories."""
    largest = 0
    for directory in path.split(os.pathsep):
        for table in Path(directory).glob("*.rtbw"):
            largest = max(largest, sum(ch.isalpha() for ch in table.stem) - 1)  # minus the 'v'
    return largest


class GamePlayer:
    """Plays games for one worker thread: owns that worker's engine processes and tablebase handle."""

    def __init__(self, config: MatchConfig, stop: threading.Event) -> None:
        self.config = config
        self.stop = stop
        self.slots = {e.name: EngineProcess(e, config.start_timeout) for e in config.engines}
        self.tablebase: chess.syzygy.Tablebase | None = None
        self.tb_pieces = 0
        if config.tb_path:
            self.tablebase = chess.syzygy.open_tablebase(config.tb_path.split(os.pathsep)[0])
            for extra in config.tb_path.split(os.pathsep)[1:]:
                self.tablebase.add_directory(extra)
            self.tb_pieces = _syzygy_max_pieces(config.tb_path)
        self.margin = config.timemargin_ms / 1000.0

    def close(self) -> None:
        """Quit every engine and close the tablebase."""
        for slot in self.slots.values():
            slot.quit()
        if self.tablebase is not None:
            self.tablebase.close()

    def _limit(self, clocks: dict[bool, float], moves_made: int, game_key: object,
               engine: EngineConfig | None = None) -> chess.engine.Limit:
        """The search limit for the next move, by a side (``engine``) that has made ``moves_made`` moves.

        In a fixed-work match (``nodes`` or ``depth``) an engine's own ``nodes`` or ``depth``
        replaces the match's: node or depth odds."""
        cfg = self.config
        nodes, depth = cfg.nodes, cfg.depth
        if engine is not None and engine.own_limits() and (nodes is not None or depth is not None):
            nodes, depth = engine.nodes, engine.depth
        limit = chess.engine.Limit(nodes=nodes, depth=depth, time=cfg.movetime)
        if cfg.tc is not None:
            limit.white_clock = max(clocks[chess.WHITE], 0.001)
            limit.black_clock = max(clocks[chess.BLACK], 0.001)
            limit.white_inc = cfg.tc.increment
            limit.black_inc = cfg.tc.increment
            limit.remaining_moves = cfg.tc.moves_to_go(moves_made)
            limit.clock_id = game_key  # xboard: send "level" once per game
        return limit

    def _deadline(self, clock: float) -> float:
        """Seconds after which the watchdog kills a silent engine."""
        cfg = self.config
        if cfg.tc is not None:
            return max(clock, 0.0) + self.margin + HANG_GRACE
        if cfg.movetime is not None:
            return cfg.movetime + self.margin + HANG_GRACE
        return cfg.hang_timeout

    def _tablebase_result(self, board: chess.Board) -> str | None:
        """``"1-0"``/``"0-1"``/``"1/2-1/2"`` from Syzygy WDL (50-move rule respected), or None when not probed."""
        if self.tablebase is None or chess.popcount(board.occupied) > self.tb_pieces or board.castling_rights:
            return None
        wdl = self.tablebase.get_wdl(board)
        if wdl is None:
            return None
        if -1 <= wdl <= 1:
            return "1/2-1/2"
        side_wins = wdl > 0
        return "1-0" if side_wins == (board.turn == chess.WHITE) else "0-1"

    def play_game(self, white: str, black: str, opening: Opening, pairing: int, pair: int,
                  slot: int) -> GameRecord | None:
        """Play one game to its end; None when the match was stopped during it."""
        cfg = self.config
        board = opening.board()
        start_fen = board.fen()
        names = {chess.WHITE: white, chess.BLACK: black}
        base = cfg.tc.base if cfg.tc is not None else 0.0
        clocks = {chess.WHITE: base, chess.BLACK: base}
        moves_made = {chess.WHITE: 0, chess.BLACK: 0}  # each side's moves this game, for repeating controls
        game_key = object()
        window = max(cfg.draw.movecount if cfg.draw else 0, cfg.resign.movecount if cfg.resign else 0, 1)
        # Each engine's recent scores in centipawns from its own point of view (None: no score sent).
        own_scores: dict[bool, deque[int | None]] = {c: deque(maxlen=window) for c in chess.COLORS}
        played: list[tuple[chess.Move, str]] = []
        result, termination = "*", ""
        fault: str | None = None
        faulty: str | None = None
        detail = ""  # extra words for the final PGN comment, e.g. the illegal move sent

        for name in dict.fromkeys((white, black)):
            self.slots[name].begin_game()

        while True:
            if self.stop.is_set():
                return None
            ended = self._game_over(board, len(played))
            if ended is not None:
                result, termination = ended
                break
            side = board.turn
            seat = self.slots[names[side]]
            attempt = play_move(seat, board, self._limit(clocks, moves_made[side], game_key, seat.config),
                                self._deadline(clocks[side]), game_key)
            play, elapsed = attempt.play, attempt.elapsed

            if cfg.tc is not None:
                clocks[side] -= elapsed
            over_time = ((cfg.tc is not None and clocks[side] < -self.margin)
                         or (cfg.movetime is not None and elapsed > cfg.movetime + self.margin)
                         or attempt.hung)
            loss = "0-1" if side == chess.WHITE else "1-0"
            if attempt.failure == "crash":
                result, termination, fault = loss, "engine crash", "crash"
            elif over_time:
                fault = "time"
                if board.has_insufficient_material(not side):
                    result, termination = "1/2-1/2", "time forfeit (opponent cannot mate)"
                else:
                    result, termination = loss, "time forfeit" + (" (engine hung, killed)" if attempt.failure else "")
                detail = f"{names[side]}: {elapsed:.3f}s used" + (
                    f", clock {clocks[side]:+.3f}s" if cfg.tc is not None else "")
            elif attempt.failure is not None:  # "error": the engine broke the protocol, e.g. an illegal move
                result, termination, fault = loss, "illegal move", "illegal"
                detail = f"{names[side]}: {attempt.message}"
            elif play is not None and play.resigned:
                result, termination = loss, "engine resigned"
            elif play is None or play.move is None or play.move not in board.legal_moves:
                result, termination, fault = loss, "illegal move (no move)", "illegal"
            if fault is not None:
                faulty = names[side]
                seat.discard()  # a faulty engine is restarted before its next game
            if result != "*":
                break

            assert play is not None and play.move is not None
            moves_made[side] += 1
            if cfg.tc is not None:
                clocks[side] += cfg.tc.after_move(moves_made[side])
            score = play.info.get("score")
            cp = score.pov(side).score(mate_score=MATE_CP) if score is not None else None
            own_scores[side].append(cp)
            played.append((play.move, _move_comment(play.info, side, elapsed)))
            board.push(play.move)

            adjudged = self._adjudicate_scores(board, own_scores)
            if adjudged is not None:
                result, termination = adjudged
                break

        pgn = self._pgn(opening, played, names, result, termination, detail, start_fen, pairing, pair, slot)
        return GameRecord(white, black, result, termination, start_fen, len(played), pairing, pair, slot,
                          fault, faulty, pgn)

    def _game_over(self, board: chess.Board, engine_plies: int) -> tuple[str, str] | None:
        """Result and reason if the rules, the tablebase or the move cap end the game here."""
        outcome = board.outcome(claim_draw=False)
        if outcome is not None:
            reason = {
                chess.Termination.CHECKMATE: "checkmate",
                chess.Termination.STALEMATE: "stalemate",
                chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
                chess.Termination.SEVENTYFIVE_MOVES: "fifty-move rule",
                chess.Termination.FIVEFOLD_REPETITION: "threefold repetition",
            }.get(outcome.termination, outcome.termination.name.lower())
            return outcome.result(), reason
        if board.halfmove_clock >= 100:
            return "1/2-1/2", "fifty-move rule"
        if board.is_repetition(3):
            return "1/2-1/2", "threefold repetition"
        tb = self._tablebase_result(board)
        if tb is not None:
            return tb, "adjudication: tablebase"
        if self.config.maxmoves is not None and engine_plies >= 2 * self.config.maxmoves:
            return "1/2-1/2", "adjudication: max moves"
        return None

    def _adjudicate_scores(self, board: chess.Board,
                           own_scores: dict[bool, deque[int | None]]) -> tuple[str, str] | None:
        """Draw or resign adjudication from the engines' recent scores, after a move was made."""
        draw, resign = self.config.draw, self.config.resign
        if resign is not None:
            for colour in chess.COLORS:
                mine = list(own_scores[colour])[-resign.movecount:]
                theirs = list(own_scores[not colour])[-resign.movecount:]
                lost = len(mine) == resign.movecount and all(s is not None and s <= -resign.score for s in mine)
                if lost and resign.twosided:
                    lost = (len(theirs) == resign.movecount
                            and all(s is not None and s >= resign.score for s in theirs))
                if lost:
                    return ("0-1" if colour == chess.WHITE else "1-0"), "adjudication: resign"
        if draw is not None and board.fullmove_number >= draw.movenumber:
            quiet = True
            for colour in chess.COLORS:
                recent = list(own_scores[colour])[-draw.movecount:]
                quiet = quiet and len(recent) == draw.movecount and all(
                    s is not None and abs(s) <= draw.score for s in recent)
            if quiet:
                return "1/2-1/2", "adjudication: draw by scores"
        return None

    def _pgn(self, opening: Opening, played: list[tuple[chess.Move, str]], names: dict[bool, str],
             result: str, termination: str, detail: str, start_fen: str, pairing: int, pair: int,
             slot: int) -> str:
        """The game as PGN text, book moves marked ``book`` and engine moves with score/depth/time."""
        cfg = self.config
        game = chess.pgn.Game()
        game.setup(chess.Board(opening.fen, chess960=opening.chess960))
        game.headers["Event"] = cfg.event
        game.headers["Site"] = "?"
        game.headers["Date"] = date.today().strftime("%Y.%m.%d")
        game.headers["Round"] = f"{pair + 1}.{slot + 1}"
        game.headers["White"] = names[chess.WHITE]
        game.headers["Black"] = names[chess.BLACK]
        game.headers["Result"] = result
        game.headers["Termination"] = termination
        game.headers["TimeControl"] = str(cfg.tc) if cfg.tc is not None else "-"
        limits = [f"{k}={v}" for k, v in (("nodes", cfg.nodes), ("depth", cfg.depth),
                                          ("movetime", cfg.movetime)) if v is not None]
        if cfg.nodes is not None or cfg.depth is not None:  # odds: an engine with its own limit
            for name in dict.fromkeys(names.values()):
                limits += [f"{key}.{name}={value}" for key, value in self.slots[name].config.own_limits().items()]
        if limits:
            game.headers["Limit"] = " ".join(limits)
        game.headers["OpeningFEN"] = start_fen
        game.headers["PlyCount"] = str(len(opening.moves) + len(played))
        node: chess.pgn.GameNode = game
        for uci in opening.moves:
            node = node.add_variation(chess.Move.from_uci(uci), comment="book")
        for move, comment in played:
            node = node.add_variation(move, comment=comment)
        if detail:
            node.comment = f"{node.comment} {detail}".strip()
        return str(game)


# ---------------------------------------------------------------------------
# Scheduling and bookkeeping
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Job:
    """One opening pair (or a lone game) of one pairing."""

    pairing: int
    pair: int
    slots: tuple[int, ...]


def _unique_names(engines: list[EngineConfig]) -> None:
    """Make engine names unique by suffixing repeats with ``-2``, ``-3``, ..."""
    seen: dict[str, int] = {}
    for engine in engines:
        count = seen.get(engine.name, 0) + 1
        seen[engine.name] = count
        if count > 1:
            engine.name = f"{engine.name}-{count}"


def count_game(game: GameRecord, pairing: PairingResult, engines: dict[str, EngineStats]) -> float:
    """Add ``game`` to its pairing's W/D/L and both engines' totals; return the pairing's first engine's points."""
    score = game.score_for(pairing.first)
    if score == 1.0:
        pairing.wins += 1
    elif score == 0.0:
        pairing.losses += 1
    else:
        pairing.draws += 1
    for name in (game.white, game.black):
        es = engines[name]
        es.games += 1
        points = game.score_for(name)
        es.wins += points == 1.0
        es.draws += points == 0.5
        es.losses += points == 0.0
    if game.faulty_engine is not None:
        es = engines[game.faulty_engine]
        es.time_losses += game.fault == "time"
        es.illegal_moves += game.fault == "illegal"
        es.crashes += game.fault == "crash"
    return score


def complete_pair(pending: dict[Any, float], key: Any, pairing: PairingResult, score: float) -> bool:
    """Hold ``score`` until the other game of pair ``key`` arrives; then add the pair to the pentanomial.

    Returns True when this game completed a pair."""
    if key not in pending:
        pending[key] = score
        return False
    pairing.pentanomial[round(2 * (pending.pop(key) + score))] += 1
    return True


def _status_line(result: MatchResult) -> str:
    """Progress text: the first engine's running W/D/L and Elo, plus the LLR under SPRT."""
    first = result.engines[result.config.engines[0].name]
    line = f"{first.name} W{first.wins} D{first.draws} L{first.losses}"
    if len(result.pairings) == 1:
        elo = result.pairings[0].elo()
    else:
        elo = stats.elo_trinomial([first.losses, first.draws, first.wins])
    if first.games:
        line += f" Elo {stats.format_elo(elo.elo)} +- {stats.format_number(elo.error)}"
    if result.sprt is not None:
        line += f" LLR {result.sprt.llr:.2f} ({result.sprt.lower:.2f},{result.sprt.upper:.2f})"
    return line


def run_match(config: MatchConfig, on_game: Callable[[GameRecord], None] | None = None) -> MatchResult:
    """Play the match described by ``config`` and return its results.

    ``on_game`` is called in the calling thread after each finished game.
    Raises :class:`MatchError` when an engine cannot be started or configured.
    A ``KeyboardInterrupt`` stops the match cleanly; the partial result is
    returned with ``stopped == "interrupted"``.
    """
    config.validate()
    # Work on copies: names may be made unique, and the caller's configs stay as they were.
    config = dataclasses.replace(config, engines=[dataclasses.replace(e) for e in config.engines])
    _unique_names(config.engines)
    seed = config.seed if config.seed is not None else random.SystemRandom().randrange(2**31)
    state = open_state(config, seed)
    if state is not None:
        seed = state.seed  # a resumed match keeps its openings
    book = OpeningBook(config.openings, config.opening_order, seed, config.opening_plies, config.chess960)
    names = [e.name for e in config.engines]
    if config.gauntlet:
        index_pairs = [(0, j) for j in range(1, len(names))]
    else:
        index_pairs = list(combinations(range(len(names)), 2))
    pairings = [PairingResult(names[i], names[j]) for i, j in index_pairs]

    result = MatchResult(config, pairings, {n: EngineStats(n) for n in names}, [], seed)
    pending: dict[tuple[int, int], float] = {}
    finished: set[tuple[int, int, int]] = set()
    if state is not None:  # resume: count the games already played, in the order they finished
        for game in state.records(pairings):
            result.games.append(game)
            complete_pair(pending, (game.pairing, game.pair), pairings[game.pairing],
                          count_game(game, pairings[game.pairing], result.engines))
            finished.add((game.pairing, game.pair, game.slot))
    if config.sprt is not None:
        s = config.sprt
        result.sprt = stats.sprt_pentanomial(pairings[0].pentanomial, s.elo0, s.elo1, s.alpha, s.beta)
        if result.sprt.decision != "continue":
            result.stopped = f"SPRT {result.sprt.decision}"

    per_pairing = config.rounds * config.games
    jobs: queue.Queue[_Job] = queue.Queue()
    for pair in range((per_pairing + 1) // 2):
        all_slots = (0, 1) if 2 * pair + 1 < per_pairing else (0,)
        for p in range(len(pairings)):
            slots = tuple(slot for slot in all_slots if (p, pair, slot) not in finished)
            if slots and result.stopped == "completed":
                jobs.put(_Job(p, pair, slots))
    stop = threading.Event()
    events: queue.Queue[tuple[str, Any]] = queue.Queue()

    def worker() -> None:
        player = GamePlayer(config, stop)
        try:
            while not stop.is_set():
                try:
                    job = jobs.get_nowait()
                except queue.Empty:
                    break
                opening = book.get(job.pair)
                first, second = pairings[job.pairing].first, pairings[job.pairing].second
                for slot in job.slots:
                    white, black = (first, second) if slot == 0 else (second, first)
                    record = player.play_game(white, black, opening, job.pairing, job.pair, slot)
                    if record is None:
                        return
                    events.put(("game", record))
        except MatchError as exc:
            events.put(("error", exc))
        except Exception as exc:  # noqa: BLE001 - reported to the main thread, which re-raises
            events.put(("error", MatchError(f"worker failed: {exc!r}\n{traceback.format_exc()}")))
        finally:
            player.close()
            events.put(("done", None))

    total_games = per_pairing * len(pairings)
    progress = ProgressBar(total_games, "game", config.progress, done=len(result.games))
    pgn_file: TextIO | None = open(config.pgn_out, "a", encoding="utf-8") if config.pgn_out else None
    error: MatchError | None = None
    threads = [threading.Thread(target=worker, name=f"match-worker-{k}", daemon=True)
               for k in range(min(config.concurrency, max(jobs.qsize(), 1)))]
    started = time.perf_counter()

    def record_game(game: GameRecord) -> None:
        result.games.append(game)
        pairing = pairings[game.pairing]
        score = count_game(game, pairing, result.engines)
        if complete_pair(pending, (game.pairing, game.pair), pairing, score):
            if config.sprt is not None and result.stopped == "completed":
                s = config.sprt
                result.sprt = stats.sprt_pentanomial(pairing.pentanomial, s.elo0, s.elo1, s.alpha, s.beta)
                if result.sprt.decision != "continue":
                    result.stopped = f"SPRT {result.sprt.decision}"
                    stop.set()
        if pgn_file is not None:
            pgn_file.write(game.pgn + "\n\n")
            pgn_file.flush()
        if state is not None and config.state_path is not None:
            state.record(game)
            state.save(config.state_path)
        progress.update(_status_line(result))
        if on_game is not None:
            on_game(game)

    try:
        for thread in threads:
            thread.start()
        alive = len(threads)
        while alive:
            try:
                kind, payload = events.get(timeout=0.5)
            except queue.Empty:
                continue
            except KeyboardInterrupt:
                if result.stopped == "completed":
                    result.stopped = "interrupted"
                stop.set()
                continue
            if kind == "game":
                record_game(payload)
            elif kind == "error":
                error = error or payload
                stop.set()
            elif kind == "done":
                alive -= 1
    finally:
        stop.set()
        for thread in threads:
            thread.join()
        progress.close()
        if pgn_file is not None:
            pgn_file.close()
    result.elapsed = time.perf_counter() - started
    if error is not None:
        raise error
    return result


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def _limit_text(config: MatchConfig) -> str:
    """Human-readable limit, e.g. ``tc 10+0.1`` or ``nodes 1000``."""
    parts = []
    if config.tc is not None:
        parts.append(f"tc {config.tc}")
    if config.nodes is not None:
        parts.append(f"nodes {config.nodes}")
    if config.depth is not None:
        parts.append(f"depth {config.depth}")
    if config.movetime is not None:
        parts.append(f"movetime {config.movetime:g}s")
    return ", ".join(parts)


def format_report(result: MatchResult) -> str:
    """The end-of-match summary as text."""
    cfg = result.config
    lines = [f"Match: {_limit_text(cfg)}, {len(result.games)} games in {result.elapsed:.1f}s, "
             f"openings {cfg.openings or 'start position'} (seed {result.seed}), {result.stopped}"]
    lines += results_lines(result.pairings, result.engines, result.games, result.sprt)
    return "\n".join(lines)


def results_lines(pairings: Sequence[PairingResult], engines: dict[str, EngineStats],
                  games: Sequence[GameRecord], sprt: stats.SprtResult | None) -> list[str]:
    """The report's body: each pairing's score, Elo and LOS, the SPRT, each engine's totals and faults, and
    how the games ended."""
    lines: list[str] = []
    for p in pairings:
        elo = p.elo()
        pairs = sum(p.pentanomial)
        lines.append("")
        lines.append(f"{p.first} vs {p.second}: W {p.wins}  D {p.draws}  L {p.losses}  "
                     f"score {p.points:g}/{p.games} ({100 * p.score:.1f}%)")
        kind = f"pentanomial, {pairs} pairs {p.pentanomial}" if pairs else "trinomial"
        lines.append(f"  Elo {elo.format()}  (95%, logistic, {kind})")
        lines.append(f"  LOS {100 * p.los():.1f}%")
    if sprt is not None:
        lines.append(f"  SPRT {sprt.format()}")
    lines.append("")
    header = f"{'engine':<24}{'games':>7}{'score':>9}{'W':>6}{'D':>6}{'L':>6}{'time':>6}{'illegal':>9}{'crash':>7}"
    lines.append(header)
    for es in engines.values():
        lines.append(f"{es.name:<24}{es.games:>7}{es.points:>9g}{es.wins:>6}{es.draws:>6}{es.losses:>6}"
                     f"{es.time_losses:>6}{es.illegal_moves:>9}{es.crashes:>7}")
    terminations: dict[str, int] = {}
    for game in games:
        terminations[game.termination] = terminations.get(game.termination, 0) + 1
    if terminations:
        lines.append("")
        lines.append("terminations: " + ", ".join(f"{k} {v}" for k, v in sorted(terminations.items())))
    return lines


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``python -m engine.tools.match`` argument parser."""
    ap = argparse.ArgumentParser(
        prog="python -m engine.tools.match",
        description="Play engine matches (UCI or xboard) with paired openings; report Elo, LOS and SPRT.")
    ap.add_argument("--engine", action="append", nargs="+", required=True, metavar="KEY=VALUE",
                    help='engine spec: cmd="COMMAND" [name=NAME] [proto=uci|xboard] [dir=DIR] '
                         "[option.NAME=VALUE ...]; give it once per engine")
    ap.add_argument("--openings", help="EPD or PGN file of openings (default: the start position)")
    ap.add_argument("--order", choices=("random", "sequential"), default="random", help="opening order")
    ap.add_argument("--seed", type=int, help="opening shuffle seed (default: random, printed)")
    ap.add_argument("--opening-plies", type=int, help="play at most N plies of each PGN opening")
    ap.add_argument("--chess960", action="store_true",
                    help="the openings are Chess960 positions (e.g. FRC_openings.epd)")
    ap.add_argument("--tc", type=TimeControl.parse, help="clock BASE+INC in seconds, e.g. 10+0.1, or MOVES/BASE+INC "
                    "for a repeating control, e.g. 40/60 (40 moves in 60 s, movestogo sent)")
    ap.add_argument("--nodes", type=int, help="nodes per move")
    ap.add_argument("--depth", type=int, help="depth per move")
    ap.add_argument("--movetime", type=float, help="seconds per move")
    ap.add_argument("--timemargin", type=int, default=0, metavar="MS",
                    help="milliseconds a clock may go below zero before it is a loss (default 0)")
    ap.add_argument("--games", type=int, default=2, help="games per round and pairing (default 2: one pair)")
    ap.add_argument("--rounds", type=int, default=1, help="rounds (default 1)")
    ap.add_argument("--concurrency", type=int, default=1, help="games played at once (default 1)")
    ap.add_argument("--draw", nargs="*", metavar="KEY=VALUE",
                    help="draw adjudication: movenumber=40 movecount=8 score=10 (defaults shown)")
    ap.add_argument("--resign", nargs="*", metavar="KEY=VALUE",
                    help="resign adjudication: movecount=3 score=600 [twosided=false] (defaults shown)")
    ap.add_argument("--tb", metavar="PATH", help="Syzygy directory for tablebase adjudication")
    ap.add_argument("--maxmoves", type=int, help="adjudicate a draw after N moves per side")
    ap.add_argument("--pgn", metavar="FILE", help="append the games to this PGN file")
    ap.add_argument("--state", metavar="FILE",
                    help="checkpoint: every finished game's result, rewritten after each game (small enough to "
                         "commit); if FILE exists the match resumes from it, on any machine")
    ap.add_argument("--sprt", nargs="*", metavar="KEY=VALUE",
                    help="SPRT: elo0=0 elo1=5 alpha=0.05 beta=0.05 (defaults shown; logistic Elo)")
    ap.add_argument("--gauntlet", action="store_true", help="the first engine plays each of the others")
    ap.add_argument("--event", default="Numbat match", help="PGN Event tag")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--engine-log", action="store_true",
                    help="show python-chess warnings about engine output (hidden by default: xboard engines chat)")
    ap.add_argument("--start-timeout", type=float, default=60.0, help="seconds for an engine to start")
    ap.add_argument("--hang-timeout", type=float, default=600.0,
                    help="seconds a node/depth-limited move may take before the engine is killed")
    return ap


def config_from_args(args: argparse.Namespace) -> MatchConfig:
    """A :class:`MatchConfig` from parsed command-line arguments."""
    return MatchConfig(
        engines=[parse_engine(tokens) for tokens in args.engine],
        openings=args.openings, opening_order=args.order, opening_plies=args.opening_plies, seed=args.seed,
        chess960=args.chess960,
        tc=args.tc, nodes=args.nodes, depth=args.depth, movetime=args.movetime, timemargin_ms=args.timemargin,
        games=args.games, rounds=args.rounds, concurrency=args.concurrency,
        draw=parse_settings(DrawAdjudication, args.draw, "--draw") if args.draw is not None else None,
        resign=parse_settings(ResignAdjudication, args.resign, "--resign") if args.resign is not None else None,
        tb_path=args.tb, maxmoves=args.maxmoves, pgn_out=args.pgn, state_path=args.state,
        sprt=parse_settings(SprtConfig, args.sprt, "--sprt") if args.sprt is not None else None,
        gauntlet=args.gauntlet, event=args.event, progress=not args.no_progress,
        start_timeout=args.start_timeout, hang_timeout=args.hang_timeout)


def main(argv: Sequence[str] | None = None) -> int:
    """Run a match from the command line; exit status 0 when done, 2 on a configuration or engine error,
    130 on Ctrl-C."""
    parser = build_parser()
    args = parser.parse_args(argv)
    quiet_engine_log(args.engine_log)
    if args.openings:
        require_data(args.openings, "openings", "--openings FILE", default=False)
    for directory in (args.tb or "").split(os.pathsep):
        if directory:
            require_data(directory, "syzygy", "--tb PATH", default=False)
    try:
        config = config_from_args(args)
        config.validate()
    except (ValueError, MatchError) as exc:
        parser.error(str(exc))
    stop_on_sigterm()  # the games under way are dropped; the report and any --state file are complete
    try:
        result = run_match(config)
    except MatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(format_report(result))
    return 130 if result.stopped == "interrupted" else 0


if __name__ == "__main__":
    sys.exit(main())
