"""The UCI front end: reads commands on stdin, writes protocol lines on stdout.

This module imports nothing from numba at import time, so ``uci`` is answered at
once.  The compiled core (``engine.board`` and what it pulls in) is loaded in a
background thread as soon as ``uci`` has been answered, and every command that
needs it (``isready``, ``position``, ``go``, ...) waits for that load to finish.

Each input line is one command.  Lines are split on any whitespace, so CRLF
endings and tabs are harmless.  A line the engine cannot act on gets exactly one
``info string`` saying why, and the engine's state stays as it was (or, for an
illegal move inside ``position ... moves``, at the last good position, which the
message names).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TextIO

from engine import ENGINE_AUTHOR, ENGINE_NAME, __version__

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


class UciError(ValueError):
    """A command line the engine cannot act on; its message goes out as ``info string``."""


class Output:
    """Line-oriented, thread-safe, flushed writer for stdout."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, line: str) -> None:
        """Write one protocol line and flush it."""
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def info(self, text: str) -> None:
        """Write an ``info string`` line (single line, whatever ``text`` holds)."""
        self.send("info string " + " ".join(text.split()))


class CoreLoader:
    """Imports the compiled core once, in a background thread."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self) -> None:
        """Begin loading (idempotent)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._load, name="numbat-core-loader", daemon=True)
            self._thread.start()

    def _load(self) -> None:
        try:
            import engine.board  # noqa: F401  (loads numba and every cached kernel)
            import engine.perft  # noqa: F401

            engine.board.Board()  # tables and the first kernels into memory
        except BaseException as exc:  # reported on the next command that needs the core
            self._error = exc

    def wait(self) -> None:
        """Block until the core is loaded; re-raise a load failure."""
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise RuntimeError(f"engine core failed to load: {self._error!r}")


def parse_int(token: str, name: str, low: int, high: int) -> int:
    """An integer token clamped to [low, high]; UciError if it is not an integer."""
    try:
        value = int(token)
    except ValueError:
        raise UciError(f"{name} needs an integer, got {token!r}") from None
    return max(low, min(high, value))


class UciEngine:
    """State and command handlers of one UCI session."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.core = CoreLoader()
        self.chess960 = False
        self.debug = False
        self._board = None  # engine.board.Board once the core is loaded
        self.commands: dict[str, Callable[[list[str]], None]] = {
            "uci": self.cmd_uci,
            "isready": self.cmd_isready,
            "debug": self.cmd_debug,
            "setoption": self.cmd_setoption,
            "ucinewgame": self.cmd_ucinewgame,
            "position": self.cmd_position,
            "go": self.cmd_go,
            "stop": self.cmd_stop,
            "ponderhit": self.cmd_ponderhit,
            "d": self.cmd_display,
            "help": self.cmd_help,
        }

    # -- helpers -----------------------------------------------------------

    @property
    def board(self):
        """The current position (loads the core on first use)."""
        if self._board is None:
            self.core.wait()
            from engine.board import Board

            self._board = Board(chess960=self.chess960)
        return self._board

    def handle(self, line: str) -> bool:
        """Run one input line; False when the session should end."""
        tokens = line.split()
        if not tokens:
            return True
        name, args = tokens[0], tokens[1:]
        if name == "quit":
            return False
        handler = self.commands.get(name)
        if handler is None:
            self.out.info(f"unknown command: {name!r} (try 'help')")
            return True
        try:
            handler(args)
        except UciError as exc:
            self.out.info(f"error: {exc}")
        except Exception as exc:  # never let one bad line end the session
            self.out.info(f"error: {name} failed: {exc!r}")
        return True

    # -- commands ----------------------------------------------------------

    def cmd_uci(self, args: list[str]) -> None:
        """Identify the engine and list its options."""
        self.out.send(f"id name {ENGINE_NAME} {__version__}")
        self.out.send(f"id author {ENGINE_AUTHOR}")
        self.out.send("option name UCI_Chess960 type check default false")
        self.out.send("uciok")
        self.core.start()

    def cmd_isready(self, args: list[str]) -> None:
        """Answer once the compiled core is loaded."""
        self.core.wait()
        self.out.send("readyok")

    def cmd_debug(self, args: list[str]) -> None:
        """``debug on|off``."""
        if args not in (["on"], ["off"]):
            raise UciError("usage: debug on|off")
        self.debug = args[0] == "on"

    def cmd_setoption(self, args: list[str]) -> None:
        """``setoption name <id> [value <x>]``."""
        if not args or args[0] != "name":
            raise UciError("usage: setoption name <id> [value <x>]")
        if "value" in args:
            split = args.index("value")
            name, value = " ".join(args[1:split]), " ".join(args[split + 1:])
        else:
            name, value = " ".join(args[1:]), ""
        if name.lower() == "uci_chess960":
            if value.lower() not in ("true", "false"):
                raise UciError(f"UCI_Chess960 takes true or false, got {value!r}")
            self.chess960 = value.lower() == "true"
            if self._board is not None:
                self._board.chess960 = self.chess960
        else:
            raise UciError(f"unknown option {name!r}")

    def cmd_ucinewgame(self, args: list[str]) -> None:
        """Forget the previous game."""
        self.core.wait()

    def cmd_position(self, args: list[str]) -> None:
        """``position startpos|fen <fen> [moves <m1> ...]``."""
        from engine.board import Board, FenError, IllegalMoveError

        if not args:
            raise UciError("usage: position startpos|fen <fen> [moves ...]")
        if "moves" in args:
            split = args.index("moves")
            setup, moves = args[:split], args[split + 1:]
        else:
            setup, moves = args, []
        if setup == ["startpos"]:
            fen = STARTING_FEN
        elif setup and setup[0] == "fen" and len(setup) > 1:
            fen = " ".join(setup[1:])
        else:
            raise UciError(f"position needs 'startpos' or 'fen <fen>', got {' '.join(setup)!r}")
        self.core.wait()
        try:
            board = Board(fen, chess960=self.chess960)
        except FenError as exc:
            raise UciError(f"invalid FEN {fen!r}: {exc}; position unchanged") from None
        for index, text in enumerate(moves):
            try:
                board.push_uci(text)
            except IllegalMoveError:
                self._board = board
                raise UciError(
                    f"illegal move {text!r} (move {index + 1} of the list); position set up to the "
                    f"move before it: {board.fen()}"
                ) from None
        self._board = board

    def cmd_go(self, args: list[str]) -> None:
        """``go perft N`` (search limits arrive with the search)."""
        if args and args[0] == "perft":
            if len(args) != 2:
                raise UciError("usage: go perft <depth>")
            depth = parse_int(args[1], "perft depth", 1, 20)
            self.run_perft(depth)
            return
        raise UciError("only 'go perft <depth>' is available in this build")

    def run_perft(self, depth: int) -> None:
        """Stockfish's divide format: one ``move: count`` line per root move, then the total."""
        from engine.perft import divide

        total = 0
        for text, count in divide(self.board, depth):
            self.out.send(f"{text}: {count}")
            total += count
        self.out.send("")
        self.out.send(f"Nodes searched: {total}")

    def cmd_stop(self, args: list[str]) -> None:
        """Stop a running search (none can run yet)."""

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The opponent played the expected move (no pondering yet)."""

    def cmd_display(self, args: list[str]) -> None:
        """Non-UCI ``d``: the board, its FEN and its Polyglot key."""
        board = self.board
        for line in board.ascii().splitlines():
            self.out.send(line)
        self.out.send(f"Fen: {board.fen()}")
        self.out.send(f"Key: {board.key():016X}")

    def cmd_help(self, args: list[str]) -> None:
        """List the commands."""
        names = " ".join(sorted([*self.commands, "quit"]))
        self.out.info(f"{ENGINE_NAME} speaks UCI; commands: {names}")


def main(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Run a UCI session until ``quit`` or end of input."""
    if stdin is None:
        stdin = sys.stdin
        if hasattr(stdin, "reconfigure"):
            stdin.reconfigure(errors="replace")  # a stray byte must not end the session
    engine = UciEngine(Output(stdout or sys.stdout))
    while True:
        try:
            line = stdin.readline()
        except KeyboardInterrupt:
            break
        if not line:
            break
        if not engine.handle(line):
            break
    return 0
