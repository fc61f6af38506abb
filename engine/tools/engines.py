"""Engine processes for the tools: which engines, how to start one, and asking it for a move under a watchdog.

This module owns the plumbing that :mod:`engine.tools.match` (games) and
:mod:`engine.tools.suite` (test positions) share, built on python-chess's
engine client (``chess.engine.SimpleEngine.popen_uci`` / ``popen_xboard``):

* :data:`NUMBAT_COMMAND` and :data:`STOCKFISH_PATH`, the engines the tools start
  when none is given;
* :class:`EngineConfig`, how to start one engine, and :class:`EngineProcess`,
  one running engine: started on demand, killable from any thread, restartable;
* :func:`play_move`, one move asked for under a limit while a watchdog kills
  the engine if it is still silent at a deadline; the :class:`MoveAttempt` says
  what went wrong, if anything (:data:`FAILURES`).  What a failure costs is the
  caller's rule: the match runner forfeits the game (time, illegal move,
  crash), the suite runner fails the position;
* :func:`score_text`, a reported score as ``+0.35`` or ``-M4``, and
  :func:`quiet_engine_log`.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.engine

from engine.tools.data import REPO_ROOT

NUMBAT_COMMAND = (sys.executable, str(REPO_ROOT / "run_engine.py"))
"""Numbat's command line: this repository's ``run_engine.py`` under the running interpreter."""

STOCKFISH_PATH = "/usr/games/stockfish"
"""Debian's Stockfish binary, the tools' default opponent, labeller and judge."""

INFO = chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
"""Search information requested with every move (score, depth, time)."""

FAILURES = ("killed", "timeout", "crash", "error")
"""What :attr:`MoveAttempt.failure` can be: the watchdog ``"killed"`` a hung engine; python-chess gave up
waiting (``"timeout"``); the process died by itself (``"crash"``); the engine broke the protocol, e.g. sent
an illegal move (``"error"``)."""


class MatchError(RuntimeError):
    """A match or suite cannot go on: an engine does not start, rejects an option, or the configuration is wrong."""


@dataclass
class EngineConfig:
    """How to start one engine."""

    cmd: list[str]
    """Command line (program and arguments)."""
    name: str = ""
    """Name used in results and PGN; defaults to the program's file name."""
    proto: str = "uci"
    """``"uci"`` or ``"xboard"``."""
    options: dict[str, str] = field(default_factory=dict)
    """Engine options, set with ``setoption`` (UCI) or ``option`` (xboard) after start-up."""
    workdir: str | None = None
    """Working directory of the engine process (default: the current one)."""
    env: dict[str, str] = field(default_factory=dict)
    """Environment variables set for the engine process only, on top of this process's."""
    nodes: int | None = None
    """Nodes per move for this engine alone, in place of a fixed-work match's limit (node odds)."""
    depth: int | None = None
    """Depth per move for this engine alone, in place of a fixed-work match's limit (for an
    engine that does not obey ``go nodes``, as Ethereal 12 does not)."""
    restart: bool = False
    """Start a fresh process for every game (cutechess-cli's ``restart=on``), for an engine that
    leaks over a long run: Ethereal 12 keeps every search thread's stack mapped, and after about
    32,000 moves its process reaches the kernel's map limit and stops answering ``go``."""

    def own_limits(self) -> dict[str, int]:
        """This engine's own ``nodes`` and ``depth``, those that are set."""
        return {key: value for key, value in (("nodes", self.nodes), ("depth", self.depth)) if value is not None}

    def __post_init__(self) -> None:
        if not self.cmd:
            raise ValueError("engine command is empty")
        if self.proto not in ("uci", "xboard"):
            raise ValueError(f"proto must be uci or xboard, got {self.proto!r}")
        if not self.name:
            self.name = Path(self.cmd[0]).name


class EngineProcess:
    """One engine process used by one thread: started on demand, killable from any thread, restartable.

    :meth:`get` starts the engine (and sets its options) when none is running;
    :meth:`kill` is what a watchdog calls; :meth:`discard` drops a faulty
    engine so the next :meth:`get` starts a fresh one.
    """

    def __init__(self, config: EngineConfig, start_timeout: float = 60.0) -> None:
        self.config = config
        self.start_timeout = start_timeout
        self.engine: chess.engine.SimpleEngine | None = None
        self.killed = threading.Event()
        self.fresh = False
        """Whether the process has played no game yet (``restart=on`` does not restart such a one)."""
        self.run_options: dict[str, str | int] = {}
        """Options set by the caller on top of the configured ones (the SPSA's values), sent again to
        every process started after them, so that a restart keeps them."""

    def get(self) -> chess.engine.SimpleEngine:
        """The running engine, starting (and configuring) it first if needed."""
        if self.engine is None:
            self.engine = self._start()
            self.killed.clear()
            self.fresh = True
        return self.engine

    def _start(self) -> chess.engine.SimpleEngine:
        """Spawn, configure and ping the engine; :class:`MatchError` when it does not come up."""
        cfg = self.config
        popen = (chess.engine.SimpleEngine.popen_uci if cfg.proto == "uci"
                 else chess.engine.SimpleEngine.popen_xboard)
        try:
            # setpgrp: a Ctrl-C in the terminal reaches the runner, not the engines.
            engine = popen(cfg.cmd, timeout=self.start_timeout, setpgrp=True, cwd=cfg.workdir,
                           env={**os.environ, **cfg.env} if cfg.env else None)
        except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError) as exc:
            raise MatchError(f"engine {cfg.name}: cannot start {shlex.join(cfg.cmd)}: {exc!r}") from exc
        try:
            if cfg.options:
                engine.configure(cfg.options)
            if self.run_options:
                engine.configure(self.run_options)
            engine.ping()
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError) as exc:
            engine.close()
            raise MatchError(f"engine {cfg.name}: start-up failed: {exc!r}") from exc
        return engine

    def begin_game(self) -> None:
        """Make ready for a new game: with ``restart=on`` a process that has played a game is replaced."""
        if self.config.restart and not self.fresh:
            self.quit()
        self.get()
        self.fresh = False

    def set_options(self, options: dict[str, str | int]) -> None:
        """Set ``options`` now (starting the engine if needed) and in every process started later."""
        self.run_options = dict(options)
        self.get().configure(options)

    def kill(self) -> None:
        """Kill the process now (safe from any thread); the next :meth:`get` starts a fresh one."""
        engine = self.engine
        if engine is not None:
            self.killed.set()
            engine.close()

    def discard(self) -> None:
        """Kill the process and forget it, so the next game starts a new one."""
        self.kill()
        self.engine = None

    def quit(self) -> None:
        """Ask the engine to quit, then make sure the process is gone."""
        engine = self.engine
        self.engine = None
        if engine is None:
            return
        try:
            engine.quit()
        except Exception:  # noqa: BLE001 - a dead or hung engine is closed below either way
            pass
        engine.close()


@dataclass
class MoveAttempt:
    """What came of asking an engine for one move."""

    play: chess.engine.PlayResult | None
    """The engine's answer; None when it failed."""
    elapsed: float
    """Wall seconds from the request to the answer (or the failure)."""
    failure: str | None = None
    """None when the engine answered, else one of :data:`FAILURES`."""
    message: str = ""
    """With ``"error"``: python-chess's description of what the engine did wrong."""

    @property
    def hung(self) -> bool:
        """Whether the engine did not answer in time (killed by the watchdog, or python-chess timed out)."""
        return self.failure in ("killed", "timeout")


def play_move(process: EngineProcess, board: chess.Board, limit: chess.engine.Limit, deadline: float,
              game: object, info: chess.engine.Info = INFO) -> MoveAttempt:
    """Ask ``process``'s engine (started first if needed) for its move in ``board`` under ``limit``.

    A watchdog kills the engine if it has not answered ``deadline`` seconds after
    the request.  ``game`` is python-chess's game key: a new object sends
    ``ucinewgame`` (UCI) or ``new`` (xboard).  After a failure the process is
    left as it is; the caller decides whether to :meth:`~EngineProcess.discard` it.
    """
    engine = process.get()
    watchdog = threading.Timer(deadline, process.kill)
    watchdog.daemon = True
    failure: str | None = None
    message = ""
    play: chess.engine.PlayResult | None = None
    start = time.perf_counter()
    watchdog.start()
    try:
        play = engine.play(board, limit, game=game, info=info)
    except chess.engine.EngineTerminatedError:
        failure = "killed" if process.killed.is_set() else "crash"
    except TimeoutError:
        failure = "timeout"
    except chess.engine.EngineError as exc:
        failure, message = "error", str(exc)
    finally:
        watchdog.cancel()
    return MoveAttempt(play, time.perf_counter() - start, failure, message)


def score_text(score: chess.engine.PovScore | None, turn: chess.Color) -> str:
    """A reported score from the mover's view: ``+0.35``, ``+M3`` or ``-M4``; empty without one."""
    if score is None:
        return ""
    pov = score.pov(turn)
    mate = pov.mate()
    if mate is not None:
        return f"{'+' if mate > 0 else '-'}M{abs(mate)}"
    cp = pov.score()
    return f"{cp / 100:+.2f}" if cp is not None else ""


def quiet_engine_log(show: bool = False) -> None:
    """Hide python-chess's WARNING lines about unexpected engine output unless ``show``; errors still show."""
    logging.getLogger("chess.engine").setLevel(logging.WARNING if show else logging.ERROR)
