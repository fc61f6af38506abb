"""The UCI front end: reads commands on stdin, writes protocol lines on stdout.

This module imports nothing from numba at import time, so ``uci`` is answered at
once.  The compiled core (``engine.board`` and what it pulls in) is loaded in a
background thread as soon as ``uci`` has been answered, and every command that
needs it (``isready``, ``position``, ``go``, ...) waits for that load to finish.
When the kernels were never compiled (a source install that skipped ``numbat
warmup``), the line after ``uciok`` says so, the compile starts at once in worker
processes, and ``readyok`` waits for it: no search ever compiles on its own clock.

Each input line is one command.  Lines are split on any whitespace, so CRLF
endings and tabs are harmless.  A line the engine cannot act on gets exactly one
``info string`` saying why, and the engine's state stays as it was (or, for an
illegal move inside ``position ... moves``, at the last good position, which the
message names).
"""

from __future__ import annotations

import math
import os
import queue
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from engine import ENGINE_AUTHOR, ENGINE_NAME, __version__
from engine.strength import ELO_MAX, ELO_MIN, SKILL_MAX, StrengthLevel, level_from_options

if TYPE_CHECKING:  # the compiled core loads in the background, after ``uci`` is answered
    from engine.board import Board
    from engine.book import OpeningBook
    from engine.searcher import Searcher, SearchInfo, SearchStats
    from engine.timeman import Limits

# The first start of a source install that skipped ``numbat warmup`` compiles every kernel.
COLD_START_MESSAGE = ("compiling the engine's kernels for this machine, once: about a minute on two cores; "
                      "readyok follows when they are ready ('numbat warmup' does this ahead of time)")

MATE = 32000                  # engine.tt.MATE (a test checks): mate in n plies scores MATE - n ...
MATE_IN_MAX_PLY = MATE - 256  # ... and scores beyond this are mates
WDL_SCALE = 90.0     # centipawns per unit of the logistic win-probability model
WDL_OFFSET = 150.0   # advantage at which a win becomes as likely as not


def win_draw_loss(score: int) -> tuple[int, int, int]:
    """Expected (win, draw, loss) per mille for a score, from a logistic model of game results."""
    if score >= MATE_IN_MAX_PLY:
        return 1000, 0, 0
    if score <= -MATE_IN_MAX_PLY:
        return 0, 0, 1000
    win = int(1000 / (1 + math.exp((WDL_OFFSET - score) / WDL_SCALE)))
    loss = int(1000 / (1 + math.exp((WDL_OFFSET + score) / WDL_SCALE)))
    return win, 1000 - win - loss, loss


def format_score(score: int) -> str:
    """UCI ``cp X`` or ``mate N`` (N in moves, negative when we are mated)."""
    if score >= MATE_IN_MAX_PLY:
        return f"mate {(MATE - score + 1) // 2}"
    if score <= -MATE_IN_MAX_PLY:
        return f"mate {-((MATE + score) // 2)}"
    return f"cp {score}"


def format_info(info: SearchInfo, show_wdl: bool = False) -> str:
    """The UCI ``info`` line of an ``engine.searcher.SearchInfo``."""
    if info.depth == 0:  # no legal move: mated or stalemated
        return f"info depth 0 score {format_score(info.score)}"
    bound = f" {info.bound}" if info.bound else ""
    if show_wdl:
        bound += " wdl {} {} {}".format(*win_draw_loss(info.score))
    return (f"info depth {info.depth} seldepth {info.seldepth} multipv {info.multipv} "
            f"score {format_score(info.score)}{bound} nodes {info.nodes} nps {int(info.nodes / info.seconds)} "
            f"hashfull {info.hashfull} tbhits {info.tbhits} time {int(info.seconds * 1000)} pv {' '.join(info.pv)}")


def format_search_stats(stats: SearchStats) -> str:
    """The students' ``info string`` after a search: effective branching factor and first-move cutoffs."""
    nodes = [n for n in stats.iteration_nodes if n > 0]
    ebf = f"{nodes[-1] / nodes[-2]:.2f}" if len(nodes) >= 2 else "n/a"
    rate = f"{100 * stats.fail_high_first / stats.fail_high:.1f}%" if stats.fail_high else "n/a"
    return (f"effective branching factor {ebf} (nodes of the last depth / the one before), "
            f"first-move cutoffs {rate} of {stats.fail_high} beta cutoffs")


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
    """Imports the compiled core once, in a background thread (compiling it first on a cold cache)."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self, compile_first: bool = False) -> None:
        """Begin loading (idempotent); with ``compile_first``, compile every kernel first, in parallel."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._load, args=(compile_first,), name="numbat-core-loader",
                                            daemon=True)
            self._thread.start()

    def _load(self, compile_first: bool) -> None:
        try:
            from engine.warmup import load_kernels, warm_up

            if compile_first:
                warm_up()  # in worker processes, one per core: the way ``numbat warmup`` compiles
            load_kernels()  # numba, the tables and every cached kernel into memory
        except BaseException as exc:  # reported on the next command that needs the core
            self._error = exc

    def wait(self) -> None:
        """Block until the core is loaded; re-raise a load failure."""
        self.start()
        assert self._thread is not None
        self._thread.join()
        if self._error is not None:
            raise RuntimeError(f"engine core failed to load: {self._error!r}")

    def abort(self) -> None:
        """Stop a cold compile still under way, so that the process can exit at once."""
        if self._thread is not None and self._thread.is_alive():
            from engine.warmup import abort_warm_up

            abort_warm_up()


def parse_int(token: str, name: str, low: int, high: int) -> int:
    """An integer token clamped to [low, high]; UciError if it is not an integer."""
    try:
        value = int(token)
    except ValueError:
        raise UciError(f"{name} needs an integer, got {token!r}") from None
    return max(low, min(high, value))


OptionValue = bool | int | str | None  # check, spin, string; None for a button


@dataclass
class Option:
    """One UCI option as ``uci`` lists it; ``value`` holds the current setting."""

    name: str
    kind: str  # check, spin, button, string
    default: OptionValue = None
    low: int = 0
    high: int = 0
    value: OptionValue = None

    def declaration(self) -> str:
        """The ``option name ...`` line."""
        text = f"option name {self.name} type {self.kind}"
        if self.kind == "check":
            text += f" default {'true' if self.default else 'false'}"
        elif self.kind == "spin":
            text += f" default {self.default} min {self.low} max {self.high}"
        elif self.kind == "string":
            text += f" default {self.default if self.default not in (None, '') else '<empty>'}"
        return text

    def parse(self, text: str) -> OptionValue:
        """The value ``text`` sets, or UciError when it does not fit the option."""
        if self.kind == "check":
            if text.lower() not in ("true", "false"):
                raise UciError(f"option {self.name} takes true or false, got {text!r}")
            return text.lower() == "true"
        if self.kind == "spin":
            try:
                number = int(text)
            except ValueError:
                raise UciError(f"option {self.name} takes an integer, got {text!r}") from None
            if not self.low <= number <= self.high:
                raise UciError(f"option {self.name} must be between {self.low} and {self.high}, got {number}")
            return number
        if self.kind == "string":
            return "" if text == "<empty>" else text
        return None


MAX_WEIGHT = 100_000  # centipawns: a sanity bound on an EvalFile (tuned weights are a few hundred)


def _small_integer(text: str) -> bool:
    """Whether ``text`` is an integer within +-MAX_WEIGHT."""
    try:
        return abs(int(text)) <= MAX_WEIGHT
    except ValueError:
        return False


def weights_file_problem(text: str, term_names: list[str], optional: frozenset[str] = frozenset(),
                         legacy: frozenset[str] = frozenset()) -> str | None:
    """What is wrong with a weights file's text (``name mg eg`` lines naming every term), or None.

    Terms in ``optional`` may be left out (``load_weights`` says what they read as), so a
    file written before such a term existed still loads; names in ``legacy`` (terms an
    older layout had, which ``load_weights`` folds into the present ones) are accepted."""
    known = set(term_names) | legacy
    named: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 3 or not all(_small_integer(field) for field in fields[1:]):
            return f"line {number} is not 'name mg eg' with two integers of at most {MAX_WEIGHT:,}"
        if fields[0] not in known:
            return f"line {number} names no evaluation term ({fields[0]!r})"
        if fields[0] in named:
            return f"line {number} names {fields[0]} a second time"
        named.add(fields[0])
    missing = [name for name in term_names if name not in named and name not in optional]
    if missing:
        return f"{len(missing)} of the {len(term_names)} terms are missing (the first: {missing[0]})"
    return None


def default_options() -> list[Option]:
    """Every option, with Stockfish's names, types and ranges."""
    return [
        Option("Threads", "spin", 1, 1, 256),
        Option("Hash", "spin", 16, 1, 65536),
        Option("Clear Hash", "button"),
        Option("Ponder", "check", False),
        Option("MultiPV", "spin", 1, 1, 256),
        Option("Move Overhead", "spin", 30, 0, 5000),
        Option("UCI_Chess960", "check", False),
        Option("UCI_ShowWDL", "check", False),
        Option("OwnBook", "check", True),
        Option("BookFile", "string", "<default>"),
        Option("EvalFile", "string", "<default>"),
        Option("Book Best Move", "check", False),
        Option("SyzygyPath", "string", "<empty>"),
        Option("SyzygyProbeDepth", "spin", 1, 1, 100),
        Option("Syzygy50MoveRule", "check", True),
        Option("SyzygyProbeLimit", "spin", 7, 0, 7),
        Option("UCI_LimitStrength", "check", False),
        Option("UCI_Elo", "spin", ELO_MAX, ELO_MIN, ELO_MAX),
        Option("Skill Level", "spin", SKILL_MAX, 0, SKILL_MAX),
        Option("UCI_AnalyseMode", "check", False),
        Option("UCI_Opponent", "string", "<empty>"),
    ]


TUNING_SWITCH = "NUMBAT_TUNE"  # set (not 0): the search's tunables are UCI options too (``engine.tools.spsa``)


def tuning_mode() -> bool:
    """Whether this process lists the search's tunables as options (for the SPSA tuner, never for users)."""
    return os.environ.get(TUNING_SWITCH, "0").strip().lower() not in ("", "0", "false", "no", "off")


def tuning_options() -> list[Option]:
    """One spin option per search tunable, named as in the code, with its default and the tuner's range."""
    from engine.searcher import TUNABLES  # the compiled core: loaded early, in tuning mode only

    return [Option(t.name, "spin", t.default, t.low, t.high) for t in TUNABLES]


# Options that only inform the engine: setting one never interrupts a search (a GUI may
# send them while the engine ponders).
INFORMATIONAL_OPTIONS = frozenset({"ponder", "uci_opponent", "uci_analysemode"})
STRENGTH_OPTIONS = frozenset({"uci_limitstrength", "uci_elo", "skill level"})


@dataclass
class GoArgs:
    """The tokens of one ``go`` command."""

    numbers: dict[str, int] = field(default_factory=dict)  # wtime, btime, ..., depth, nodes, perft
    flags: set[str] = field(default_factory=set)           # infinite, ponder
    searchmoves: list[str] = field(default_factory=list)


class UciEngine:
    """State and command handlers of one UCI session."""

    def __init__(self, out: Output) -> None:
        self.out = out
        self.core = CoreLoader()
        self.chess960 = False
        self.debug = False
        self._board: Board | None = None  # once the core is loaded
        # What the last ``position`` set up: (FEN, Chess960) and its move list.  A GUI
        # resends the whole game every move; a list that extends the last one only
        # plays the new moves (replaying 180 moves took some 11 ms, more than 1+0.01's increment).
        self._position_setup: tuple[str, bool] | None = None
        self._position_moves: list[str] = []
        options = default_options()
        self.tunable_keys: frozenset[str] = frozenset()
        if tuning_mode():
            tunables = tuning_options()
            self.tunable_keys = frozenset(option.name.lower() for option in tunables)
            options += tunables
        self.options = {option.name.lower(): option for option in options}
        for option in self.options.values():
            option.value = option.default
        self._searcher: Searcher | None = None  # created on first use
        self._search_thread: threading.Thread | None = None
        self._release = threading.Event()  # lets a finished infinite/ponder search report
        self._limits: Limits | None = None
        self.line_arrived = time.perf_counter()  # arrival time of the line being handled
        self._book: OpeningBook | None = None  # once loaded
        self._book_loaded = False
        self._book_rng = random.Random()
        self._eval_file_in_use = "<default>"  # the EvalFile whose weights the searcher has
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
            "bench": self.cmd_bench,
            "eval": self.cmd_eval,
            "help": self.cmd_help,
        }

    # -- helpers -----------------------------------------------------------

    @property
    def board(self) -> Board:
        """The current position (loads the core on first use)."""
        if self._board is None:
            self.core.wait()
            from engine.board import Board

            self._board = Board(chess960=self.chess960)
        return self._board

    def spin(self, name: str) -> int:
        """The value of the spin option ``name`` (lower case)."""
        value = self.options[name].value
        assert isinstance(value, int), (name, value)
        return value

    def check(self, name: str) -> bool:
        """The value of the check option ``name`` (lower case)."""
        return bool(self.options[name].value)

    def text(self, name: str) -> str:
        """The value of the string option ``name`` (lower case)."""
        return str(self.options[name].value)

    def handle(self, line: str) -> bool:
        """Run one input line; False when the session should end."""
        tokens = line.split()
        if not tokens:
            return True
        name, args = tokens[0], tokens[1:]
        if name == "quit":
            self.wait_for_search()
            return False
        handler = self.commands.get(name)
        if handler is None:
            self.out.info(f"unknown command: {name!r} (try 'help')")
            return True
        try:
            handler(args)
        except UciError as exc:
            self.out.info(f"error: {exc}")
        except MemoryError as exc:
            self.out.info(f"error: {exc}")
        except Exception as exc:  # never let one bad line end the session
            self.out.info(f"error: {name} failed: {exc!r}")
        return True

    # -- commands ----------------------------------------------------------

    def cmd_uci(self, args: list[str]) -> None:
        """Identify the engine and list its options."""
        self.out.send(f"id name {ENGINE_NAME} {__version__}")
        self.out.send(f"id author {ENGINE_AUTHOR}")
        for option in self.options.values():
            self.out.send(option.declaration())
        self.out.send("uciok")
        from engine.kernelcache import install_shipped_kernels

        cold = not install_shipped_kernels()
        if cold:  # said at once, here and to a terminal: the first readyok is a minute away
            self.out.info(COLD_START_MESSAGE)
            print(f"numbat: {COLD_START_MESSAGE}", file=sys.stderr, flush=True)
        self.core.start(compile_first=cold)

    def cmd_isready(self, args: list[str]) -> None:
        """Answer once the compiled core is loaded (and compiled, on a cold start): a search can then run at once."""
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
        option = self.options.get(name.lower())
        if option is None:
            raise UciError(f"unknown option {name!r}")
        if option.kind != "button" and value == "" and option.kind != "string":
            raise UciError(f"option {option.name} needs a value")
        new_value = option.parse(value)
        if option.name.lower() not in INFORMATIONAL_OPTIONS:
            self.wait_for_search()
        self.apply_option(option, new_value)

    def apply_option(self, option: Option, value: OptionValue) -> None:
        """Store an option's new value and act on it."""
        key = option.name.lower()
        if option.kind != "button":
            option.value = value
        if key == "uci_chess960":
            self.chess960 = bool(value)
            if self._board is not None:
                self._board.chess960 = self.chess960
        elif key == "threads" and self._searcher is not None:
            self._searcher.set_threads(self.spin(key))
        elif key == "hash" and self._searcher is not None:
            self._searcher.resize_hash(self.spin(key))
        elif key == "clear hash" and self._searcher is not None:
            self._searcher.clear_hash()
        elif key == "multipv" and self._searcher is not None:
            self._searcher.multipv = self.spin(key)
        elif key == "move overhead" and self._searcher is not None:
            self._searcher.move_overhead = self.spin(key) / 1000
        elif key == "bookfile":
            self._book = None
            self._book_loaded = False
            if self.check("ownbook"):
                self.load_book()
        elif key == "evalfile":  # checked now, so that a bad file is named at once
            if self._searcher is None:
                _ = self.searcher  # created with the current options, EvalFile's weights included
            else:
                self.load_eval_file(self._searcher)
        elif key == "ownbook" and value and not self._book_loaded:
            self.load_book()
        elif key in STRENGTH_OPTIONS and self._searcher is not None:
            self._searcher.strength = self.strength_level()
        elif key == "syzygypath":
            self.load_tablebases()
        elif key.startswith("syzygy") and self._searcher is not None:
            self._configure_tablebases(self._searcher)
        elif key in self.tunable_keys and self._searcher is not None:
            self._searcher.set_tunable(option.name, self.spin(key))

    def load_tablebases(self) -> None:
        """Have the searcher open the SyzygyPath folders; problems and the result go out as info strings."""
        for message in self.searcher.load_tablebases(self.text("syzygypath")):
            self.out.info(message)

    def _configure_tablebases(self, searcher: Searcher) -> None:
        """Hand the Syzygy options to the searcher (which owns the tables)."""
        searcher.tb_probe_limit = self.spin("syzygyprobelimit")
        searcher.tb_probe_depth = self.spin("syzygyprobedepth")
        searcher.tb_rule50 = self.check("syzygy50moverule")

    @property
    def searcher(self) -> Searcher:
        """The searcher (created on first use, with the current options)."""
        if self._searcher is None:
            self.core.wait()
            from engine.searcher import Searcher

            searcher = Searcher(hash_mb=self.spin("hash"))
            searcher.multipv = self.spin("multipv")
            searcher.set_threads(self.spin("threads"))
            searcher.move_overhead = self.spin("move overhead") / 1000
            searcher.strength = self.strength_level()
            self._configure_tablebases(searcher)
            for key in self.tunable_keys:
                searcher.set_tunable(self.options[key].name, self.spin(key))
            self._searcher = searcher
            if self.text("evalfile") not in ("", "<default>"):
                self.load_eval_file(searcher)
        return self._searcher

    def load_eval_file(self, searcher: Searcher) -> None:
        """Hand the searcher the EvalFile's weights; a bad file gets an info string and changes nothing."""
        from pathlib import Path

        from engine.evaluate import LEGACY_TERM_NAMES, OMITTABLE_TERM_NAMES, TERM_NAMES, WEIGHTS_FILE, load_weights

        option = self.options["evalfile"]
        name = str(option.value)
        path = WEIGHTS_FILE if name in ("", "<default>") else Path(name).expanduser()
        weights = None
        try:
            problem = weights_file_problem(path.read_text(), TERM_NAMES, OMITTABLE_TERM_NAMES, LEGACY_TERM_NAMES)
            if problem is None:
                weights = load_weights(path)
        except OSError as exc:
            problem = f"cannot be read ({exc.strerror or exc})"
        except UnicodeDecodeError:
            problem = "is not a text file"
        if weights is None:
            kept = self._eval_file_in_use
            kept = "the shipped weights" if kept in ("", "<default>") else f"the weights of {kept}"
            self.out.info(f"EvalFile {name}: {problem}; the evaluation keeps {kept}")
            option.value = self._eval_file_in_use
            return
        searcher.set_weights(weights)
        self._eval_file_in_use = name
        self.out.info(f"EvalFile {path}: {len(TERM_NAMES)} evaluation weights loaded")

    def load_book(self) -> OpeningBook | None:
        """Open the BookFile (once); a bad file gets one info string and no book."""
        if self._book_loaded:
            return self._book
        self._book_loaded = True
        from engine.book import BookError, OpeningBook, default_book_path

        name = self.text("bookfile")
        path = default_book_path() if name in ("", "<default>") else name
        if path is None:
            self.out.info("no opening book found (the shipped books/numbat.bin is missing); playing without a book")
            return None
        try:
            self._book = OpeningBook(path)
        except BookError as exc:
            self.out.info(f"{exc}; playing without a book")
            self._book = None
        return self._book

    def _book_ponder(self, move: int) -> str:
        """' ponder Y' with the heaviest book reply to ``move``, or '' when the book ends there."""
        after = self.board.copy()
        after.push(move)
        replies: list[tuple[int, int]] = self._book.moves(after) if self._book is not None else []
        if not replies:
            return ""
        reply = max(replies, key=lambda e: e[1])[0]
        return f" ponder {after.move_to_uci(reply)}"

    def strength_level(self) -> StrengthLevel | None:
        """The weakened level the strength options ask for (``engine.strength``), or None."""
        return level_from_options(self.check("uci_limitstrength"), self.spin("uci_elo"), self.spin("skill level"))

    def book_move(self, limits: Limits) -> int:
        """A move from the book for ``go``, or 0.

        The book plays only in games: a ``go`` with a game clock (``wtime``/``btime``) or a
        ``movetime``, with OwnBook on, one PV and UCI_AnalyseMode off.  Every analysis request
        (``depth``, ``nodes``, ``mate``, ``infinite``, ``ponder``, ``searchmoves``, MultiPV above 1)
        gets a real search with its ``info`` lines.
        """
        in_game = limits.wtime is not None or limits.btime is not None or limits.movetime is not None
        analysis = (limits.depth or limits.nodes or limits.mate or limits.infinite or limits.ponder
                    or limits.searchmoves or self.spin("multipv") > 1 or self.check("uci_analysemode"))
        if not self.check("ownbook") or not in_game or analysis:
            return 0
        book = self.load_book()
        if book is None:
            return 0
        return book.choose(self.board, self._book_rng, self.check("book best move"))

    def searching(self) -> bool:
        """True while a search thread runs."""
        return self._search_thread is not None and self._search_thread.is_alive()

    def wait_for_search(self) -> None:
        """Stop a running search and wait for its bestmove (before changing state)."""
        if self.searching():
            self.cmd_stop([])
        if self._search_thread is not None:
            self._search_thread.join()
            self._search_thread = None

    def cmd_ucinewgame(self, args: list[str]) -> None:
        """Forget the previous game: hash table, history, killers."""
        self.wait_for_search()
        self.searcher.new_game()

    def cmd_position(self, args: list[str]) -> None:
        """``position startpos|fen <fen> [moves <m1> ...]``."""
        from engine.board import STARTING_FEN, Board, FenError, IllegalMoveError

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
        self.wait_for_search()
        self.core.wait()
        setup_key = (fen, self.chess960)
        played = len(self._position_moves)
        if (self._board is not None and setup_key == self._position_setup
                and moves[:played] == self._position_moves):
            board = self._board.copy()  # the same game, some moves on: play only those
        else:
            try:
                board = Board(fen, chess960=self.chess960)
            except FenError as exc:
                raise UciError(f"invalid FEN {fen!r}: {exc}; position unchanged") from None
            played = 0
        for index in range(played, len(moves)):
            try:
                board.push_uci(moves[index])
            except IllegalMoveError:
                self._set_position(board, setup_key, moves[:index])
                raise UciError(
                    f"illegal move {moves[index]!r} (move {index + 1} of the list); position set up to the "
                    f"move before it: {board.fen()}"
                ) from None
        self._set_position(board, setup_key, moves)

    def _set_position(self, board: Board, setup_key: tuple[str, bool], moves: list[str]) -> None:
        """Make ``board`` the current position, remembering how it was set up."""
        self._board = board
        self._position_setup = setup_key
        self._position_moves = list(moves)

    GO_INT_TOKENS = {"wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime", "perft"}
    GO_FLAG_TOKENS = {"infinite", "ponder"}
    # The smallest meaningful value of each numeric limit (movestogo 0 means "none", as some GUIs send it).
    GO_LOWEST = {"wtime": 0, "btime": 0, "winc": 0, "binc": 0, "movetime": 0, "movestogo": 0, "depth": 1,
                 "nodes": 1, "mate": 1}

    def parse_go(self, args: list[str]) -> GoArgs:
        """The tokens of ``go``; UciError on anything malformed."""
        parsed = GoArgs()
        i = 0
        while i < len(args):
            token = args[i]
            if token in self.GO_FLAG_TOKENS:
                parsed.flags.add(token)
                i += 1
            elif token in self.GO_INT_TOKENS:
                if i + 1 >= len(args):
                    raise UciError(f"go {token} needs a number")
                try:
                    parsed.numbers[token] = int(args[i + 1])
                except ValueError:
                    raise UciError(f"go {token} needs an integer, got {args[i + 1]!r}") from None
                i += 2
            elif token == "searchmoves":
                moves = []
                i += 1
                while i < len(args) and args[i] not in self.GO_INT_TOKENS | self.GO_FLAG_TOKENS:
                    moves.append(args[i])
                    i += 1
                parsed.searchmoves = moves
            else:
                raise UciError(f"unknown go token {token!r}")
        return parsed

    def cmd_go(self, args: list[str]) -> None:
        """``go`` with any UCI limits, or ``go perft N``."""
        parsed = self.parse_go(args)
        if "perft" in parsed.numbers:
            self.wait_for_search()
            self.run_perft(max(1, min(parsed.numbers["perft"], 20)))
            return
        from engine.timeman import Limits

        if self.searching():
            raise UciError("a search is running; send stop first")
        for text in parsed.searchmoves:
            try:
                self.board.parse_uci(text)
            except ValueError:
                raise UciError(f"searchmoves: {text!r} is not a legal move here") from None

        # Out-of-range numbers still get an answer (a GUI waits for ``bestmove``), with
        # the value clamped to the nearest meaningful one and said so.
        numbers: dict[str, int] = {}
        for name, low in self.GO_LOWEST.items():
            if name in parsed.numbers:
                value = parsed.numbers[name]
                if value < low:
                    self.out.info(f"warning: go {name} {value} is out of range; using {low}")
                numbers[name] = max(value, low)

        def seconds(name: str) -> float | None:
            return numbers[name] / 1000 if name in numbers else None

        limits = Limits(
            wtime=seconds("wtime"), btime=seconds("btime"), winc=seconds("winc") or 0.0,
            binc=seconds("binc") or 0.0,
            movestogo=numbers.get("movestogo") or None,  # 0: none
            movetime=seconds("movetime"),
            depth=numbers.get("depth"), nodes=numbers.get("nodes"), mate=numbers.get("mate"),
            infinite="infinite" in parsed.flags, ponder="ponder" in parsed.flags,
            searchmoves=list(parsed.searchmoves),
        )
        received = time.perf_counter()  # the clock runs from here, as in Stockfish
        move = self.book_move(limits)
        if move:
            self.out.info(f"book move {self.board.move_to_uci(move)}")
            self.out.send(f"bestmove {self.board.move_to_uci(move)}{self._book_ponder(move)}")
            return
        board = self.board.copy()
        searcher = self.searcher
        self._limits = limits
        self._release.clear()
        self._search_thread = threading.Thread(target=self._search_and_report, args=(searcher, board, limits, received),
                                               name="numbat-search", daemon=True)
        self._search_thread.start()

    def _search_and_report(self, searcher: Searcher, board: Board, limits: Limits, received: float) -> None:
        """Search thread: think, wait if the GUI must release the result, print bestmove."""
        try:
            show_wdl = self.check("uci_showwdl")
            best, ponder = searcher.think(board, limits, lambda info: self.out.send(format_info(info, show_wdl)),
                                          start=received)
        except Exception as exc:  # a crash must still answer bestmove
            self.out.info(f"error: search failed: {exc!r}")
            moves = board.legal_moves()
            best, ponder = (moves[0] if moves else 0), 0
        if limits.infinite or limits.ponder:
            self._release.wait()  # UCI: never report before stop/ponderhit in these modes
        while searcher.helper_errors:
            self.out.info(f"error: a helper thread failed: {searcher.helper_errors.pop()!r}")
        self.out.info(format_search_stats(searcher.stats))
        if not best:
            self.out.send("bestmove 0000")
        elif ponder:
            self.out.send(f"bestmove {board.move_to_uci(best)} ponder {self._ponder_text(board, best, ponder)}")
        else:
            self.out.send(f"bestmove {board.move_to_uci(best)}")

    @staticmethod
    def _ponder_text(board: Board, best: int, ponder: int) -> str:
        """UCI text of the ponder move, written in the position after ``best``."""
        board.push(best)
        try:
            return board.move_to_uci(ponder)
        finally:
            board.pop()

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
        """Stop the search; it answers bestmove at once."""
        if self._searcher is not None:
            self._searcher.stop()
        self._release.set()

    def cmd_ponderhit(self, args: list[str]) -> None:
        """The opponent played the predicted move: the search continues on our clock."""
        if not self.searching() or self._limits is None:
            return
        self._limits.ponder = False
        self.searcher.ponderhit(self._limits, self.board.turn)
        self._release.set()

    def cmd_bench(self, args: list[str]) -> None:
        """Non-UCI ``bench [depth]``: the fixed benchmark search, with the ``EvalFile`` in use.

        With the default weights its node count is the build's signature; with an
        ``EvalFile`` it is that file's, so a tester can bench a candidate before a match.
        """
        from engine.bench import BENCH_DEPTH, run_bench

        depth = parse_int(args[0], "bench depth", 1, 30) if args else BENCH_DEPTH
        self.wait_for_search()
        self.core.wait()
        weights = None
        if self._eval_file_in_use not in ("", "<default>"):
            weights = self.searcher.weights
            self.out.info(f"bench with the weights of EvalFile {self._eval_file_in_use}")
        run_bench(depth, self.out.send, weights)

    def cmd_display(self, args: list[str]) -> None:
        """Non-UCI ``d``: the board, its FEN and its Polyglot key."""
        board = self.board
        for line in board.ascii().splitlines():
            self.out.send(line)
        self.out.send(f"Fen: {board.fen()}")
        self.out.send(f"Key: {board.key():016X}")

    def cmd_eval(self, args: list[str]) -> None:
        """Non-UCI ``eval``: the static evaluation of the current position, term by term."""
        from engine.evaluate import explain

        for line in explain(self.board, self.searcher.ev.weights):
            self.out.send(line)

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
    lines: queue.Queue[tuple[str, float]] = queue.Queue()

    def read_input() -> None:
        """Reader thread: stamp each line with its arrival time (the clock of ``go`` starts then)."""
        try:
            for line in stdin:
                lines.put((line, time.perf_counter()))
        except (KeyboardInterrupt, OSError, ValueError):
            pass
        lines.put(("", time.perf_counter()))

    threading.Thread(target=read_input, name="numbat-stdin", daemon=True).start()
    while True:
        try:
            line, arrived = lines.get()
        except KeyboardInterrupt:
            break
        if not line:
            engine.wait_for_search()
            break
        engine.line_arrived = arrived
        if not engine.handle(line):
            break
    engine.core.abort()
    return 0
