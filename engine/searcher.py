"""The Python side of the search: iterative deepening, aspiration windows, MultiPV,
time control, the worker thread and its Lazy SMP helpers.

``Searcher.think`` calls the numba kernel ``engine.search.search`` once per depth
(and per aspiration re-search and MultiPV line) with the root at ply 0.  The
kernel runs without the GIL; ``stop`` raises the shared stop flag, and so does a
watchdog thread when the hard time limit passes (only a search with a clock, or a
ponder search that may get one, starts it), and the kernel returns within a node.
Between iterations Python decides whether another depth fits in the soft limit (from
depth 5 stretched or shrunk by the best root move's share of the last iteration's nodes:
a contested move earns more time, a settled one less; and by how the score moved: a score
below our last move's, or below the one three iterations back, earns more), and
reports each finished depth through the ``on_info`` callback as a ``SearchInfo`` (the
UCI layer writes it as an ``info`` line; ``bench`` and the tools pass ``None``: nothing is
built).  How the soft limit stretches is the time policy's (``engine.timeman``); this
module only measures what it needs.  The kernel never reads a
clock and never prints.

With ``Threads`` above 1 the search is Lazy SMP: each helper thread runs its own
iterative deepening over its own copy of the position, with its own ``SearchData``
(histories, killers, stacks) and evaluator, and shares only the transposition table
and the ``control`` array (the stop flag) with the main thread.  The helpers report
nothing; what they find reaches the main thread through the table, whose lockless
entries (``engine.tt``) survive two threads writing at once.  A helper's next depth is
never below the one the main thread is searching, and odd-numbered helpers go one
deeper, so that the table holds results a step ahead of the main thread.  The main
thread alone decides when to stop and which move to play.  A search with a node
limit (``go nodes``) runs on the main thread only, so that it stays reproducible.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from engine.board import Board
from engine.defs import MAX_PLY, ST_PLY
from engine.evaluate import Evaluator, load_weights, make_evaluator
from engine.jit import field_views
from engine.search import (
    C_CUTOFFS,
    C_NODES,
    C_SELDEPTH,
    C_TBHITS,
    CFG_TB_DEPTH,
    CFG_TB_PIECES,
    CFG_TB_RULE50,
    CUTOFF_DEPTHS,
    INFINITE,
    K_NODE_LIMIT,
    K_STOP,
    KERNEL_TUNABLES,
    LMR_BASE,
    LMR_DIVISOR,
    PARAM_INDEX,
    ROOT_COUNT,
    ROOT_PV_START,
    SearchData,
    Tunable,
    age_history,
    clear_heuristics,
    new_control,
    new_search_data,
    reduction_table,
    search,
    tt_move_of,
)
from engine.strength import StrengthLevel
from engine.syzygy import SyzygyTables, empty_tablebases, make_scratch, pack_tablebases
from engine.timeman import SOFT_LIMIT_NEXT_DEPTH, Limits, allocate, soft_limit_scale
from engine.tt import MATE, MATE_IN_MAX_PLY, clear_table, hashfull, new_table

if TYPE_CHECKING:
    from engine.tablebase import RootTablebase  # python-chess, imported when SyzygyPath is set

ASPIRATION_MIN_DEPTH = 4     # full window below this depth
ASPIRATION_DELTA = 17        # first half-width of the window, grown by half on each fail
ASPIRATION_MAX_DELTA = 500   # past this half-width, the side that failed opens fully
BOUND_REPORT_AFTER = 1.0     # seconds: report lowerbound/upperbound lines only in long searches
WATCHDOG_PERIOD = 0.010      # longest sleep of the watchdog between clock checks
MAX_SEARCH_DEPTH = MAX_PLY - 8
MAX_THREADS = 256            # the Threads option's upper end

# The driver's tunables, beside the kernel's (``engine.search.KERNEL_TUNABLES``): the
# late-move reduction table's two constants in hundredths, and the aspiration window.
DRIVER_TUNABLES = (
    Tunable("LMR_BASE_X100", round(LMR_BASE * 100), 0, 150, 8),
    Tunable("LMR_DIVISOR_X100", round(LMR_DIVISOR * 100), 150, 350, 12),
    Tunable("ASPIRATION_DELTA", ASPIRATION_DELTA, 8, 50, 3),
)
TUNABLES = KERNEL_TUNABLES + DRIVER_TUNABLES


def widen_window(alpha: int, beta: int, score: int, delta: int) -> tuple[int, int, int]:
    """The aspiration window after ``score`` fell outside (alpha, beta): (alpha, beta, delta).

    A fail low also pulls beta down to the middle of the old window.  The side that failed
    moves ``delta`` past the score, and ``delta`` grows by half each time; once it passes
    ``ASPIRATION_MAX_DELTA`` that side opens fully.  Without that limit a mate hidden behind
    null-move cutoffs, which return exactly beta, would take more than a dozen re-searches,
    each reported as a larger and less true ``lowerbound``.
    """
    wide = delta > ASPIRATION_MAX_DELTA
    if score <= alpha:
        beta = (alpha + beta) // 2
        alpha = -INFINITE if wide else max(score - delta, -INFINITE)
    else:
        beta = INFINITE if wide else min(score + delta, INFINITE)
    return alpha, beta, delta + delta // 2


@dataclass
class Helper:
    """A Lazy SMP helper's own arrays: everything its searches write but the shared table."""

    sd: SearchData
    ev: Evaluator        # its pawn cache and attack maps are written by every evaluation
    scratch: np.ndarray  # the tablebase prober's scratch buffer
    fields: SimpleNamespace = field(init=False)  # sd's arrays, read fast from Python

    def __post_init__(self) -> None:
        self.fields = field_views(self.sd)


@dataclass
class PvLine:
    """One MultiPV line of a finished iteration."""

    score: int
    moves: list[int]
    bound: str = ""


@dataclass
class SearchInfo:
    """What one UCI ``info`` line reports (``engine.uci.format_info`` writes it)."""

    depth: int
    score: int
    multipv: int = 1
    seldepth: int = 0
    bound: str = ""          # "", "lowerbound" or "upperbound"
    nodes: int = 0
    seconds: float = 0.0
    hashfull: int = 0
    tbhits: int = 0
    pv: list[str] = field(default_factory=list)  # UCI moves, a legal line


@dataclass
class SearchStats:
    """Figures of the last search, for the students' ``info string``."""

    iteration_nodes: list[int] = field(default_factory=list)
    # cutoffs[d, t, f]: beta cutoffs at remaining depth d + 1 (the last row: 4 or more),
    # t = 1 if a TT move was tried first, f = 1 if the first move searched made the cutoff
    cutoffs: np.ndarray = field(default_factory=lambda: np.zeros((CUTOFF_DEPTHS, 2, 2), dtype=np.int64))

    @property
    def fail_high(self) -> int:
        """Beta cutoffs in the main search."""
        return int(self.cutoffs.sum())

    @property
    def fail_high_first(self) -> int:
        """Beta cutoffs made by the first move searched."""
        return int(self.cutoffs[:, :, 1].sum())



def opponent_has_bare_king(board: Board) -> bool:
    """Whether the side not to move has its king alone (KQK, KRK, ... to be mated)."""
    placement = board.fen().split()[0]
    pieces = [c for c in placement if c.isalpha() and c not in "kK"]
    theirs = [c for c in pieces if c.islower() == (board.turn == 0)]
    return not theirs and bool(pieces)



class Searcher:
    """Owns the transposition table and the search threads' arrays."""

    def __init__(self, hash_mb: int = 16) -> None:
        self.control = new_control()
        self.sd = new_search_data()
        self.fields = field_views(self.sd)  # the same arrays, read fast from Python (``field_views``)
        self.tt = new_table(hash_mb)
        self.weights = load_weights()  # the evaluation's weight table (``EvalFile``)
        self.ev = make_evaluator(self.weights)  # one per searching thread (scratch attack maps)
        self.multipv = 1
        self.tunables = {t.name: t.default for t in TUNABLES}  # current values (``set_tunable``)
        self.aspiration_delta = ASPIRATION_DELTA
        self.strength: StrengthLevel | None = None  # a weakened level (``engine.strength``), None: full strength
        self.strength_rng = random.Random()
        self._lines_wanted = 1  # MultiPV lines this search computes (more than MultiPV when weakened)
        self._node_limit_after_depth_1 = 0  # a weakened level's node budget (``think``), 0: none
        self.last_lines: list[PvLine] = []  # the lines of the last finished iteration, best first
        self.move_overhead = 0.030
        self.stats = SearchStats()
        self._pondering = False
        self._start = 0.0
        self._soft: float | None = None
        self._hard: float | None = None
        self._lock = threading.Lock()
        self._stop_requested = False
        self._completed_depth = 0
        self._partial: PvLine | None = None  # what the unfinished iteration proved (see _deepen)
        self.previous_score: int | None = None  # the score of our last search's move (falling eval)
        self._starting_clocks = [0.0, 0.0]  # each side's largest clock this game (sudden-death reserve)
        self._iteration_scores: list[int] = []   # the best score of each finished iteration of this search
        self.tablebase: RootTablebase | None = None  # when SyzygyPath is set
        self.tb_tables = empty_tablebases()  # our numba WDL prober's tables (probes inside the search)
        self.tb_max_pieces = 0
        self.tb_scratch = make_scratch()
        self.tb_probe_limit = 7      # SyzygyProbeLimit
        self.tb_rule50 = True        # Syzygy50MoveRule
        self.tb_probe_depth = 1      # SyzygyProbeDepth (probes inside the search)
        self._tb_score: int | None = None
        self._root_tbhits = 0
        self.helpers: list[Helper] = []  # Threads - 1 Lazy SMP helpers
        self._helper_threads: list[threading.Thread] = []
        self._main_depth = 0  # the depth the main thread is searching (helpers keep up with it)
        self.helper_errors: list[BaseException] = []

    # -- configuration -----------------------------------------------------

    def resize_hash(self, megabytes: int) -> None:
        """Replace the transposition table by an empty one of ``megabytes`` MB."""
        del self.tt  # free the old table before allocating the new one
        try:
            self.tt = new_table(megabytes)
        except MemoryError:
            self.tt = new_table(16)
            raise MemoryError(f"cannot allocate {megabytes} MB for the hash table; using 16 MB") from None

    def set_threads(self, count: int) -> None:
        """Search with ``count`` threads: this one and ``count - 1`` helpers (not while searching)."""
        count = max(1, min(count, MAX_THREADS))
        while len(self.helpers) < count - 1:
            sd = new_search_data()
            sd.params[:] = self.sd.params  # the tunables as set, not their defaults
            sd.reductions[:] = self.sd.reductions
            self.helpers.append(Helper(sd, make_evaluator(self.weights), make_scratch()))
        del self.helpers[count - 1:]

    def set_tunable(self, name: str, value: int) -> None:
        """Give the search parameter ``name`` (one of ``TUNABLES``) the value ``value`` (not while searching)."""
        if name not in self.tunables:
            raise KeyError(f"no tunable named {name!r}")
        self.tunables[name] = value
        every_sd = [self.sd] + [helper.sd for helper in self.helpers]
        if name in PARAM_INDEX:
            for sd in every_sd:
                sd.params[PARAM_INDEX[name]] = value
        elif name in ("LMR_BASE_X100", "LMR_DIVISOR_X100"):
            table = reduction_table(self.tunables["LMR_BASE_X100"] / 100,
                                    max(self.tunables["LMR_DIVISOR_X100"], 1) / 100)
            for sd in every_sd:
                sd.reductions[:] = table
        elif name == "ASPIRATION_DELTA":
            self.aspiration_delta = value

    def set_weights(self, weights: np.ndarray) -> None:
        """Evaluate with ``weights`` from now on (``EvalFile``; not while searching).

        Every thread gets a new Evaluator, since its pawn cache and piece-square table hold
        sums of the old weights, and the transposition table is emptied: its entries keep
        static evaluations and scores of the old ones.
        """
        self.weights = weights
        self.ev = make_evaluator(weights)
        for helper in self.helpers:
            helper.ev = make_evaluator(weights)
        clear_table(self.tt)

    def new_game(self) -> None:
        """Forget everything learnt (``ucinewgame``)."""
        clear_table(self.tt)
        clear_heuristics(self.sd)
        self.previous_score = None
        self._starting_clocks = [0.0, 0.0]
        for helper in self.helpers:
            clear_heuristics(helper.sd)

    def _allocate(self, limits: Limits, side: int) -> tuple[float | None, float | None]:
        """(soft, hard) limits for ``side``, which also learns its starting clock for this game."""
        clock = limits.wtime if side == 0 else limits.btime
        if clock is not None:
            self._starting_clocks[side] = max(self._starting_clocks[side], clock)
        return allocate(limits, side, self.move_overhead, self._starting_clocks[side])

    def load_tablebases(self, path: str) -> list[str]:
        """Open the Syzygy folders of ``path`` (``os.pathsep``-joined; empty: none) for the root
        filter and the probes inside the search; return the messages for the user."""
        from engine.syzygy import load_tablebases
        from engine.tablebase import RootTablebase

        if self.tablebase is not None:
            self.tablebase.close()
            self.tablebase = None
        self.tb_tables, self.tb_max_pieces = empty_tablebases(), 0
        if path.strip() in ("", "<empty>"):
            return ["Syzygy tablebases off"]
        tablebase = RootTablebase(path)
        tables, max_pieces, messages = load_tablebases(path)
        count = int(tables.file_size.shape[0])
        self.tablebase = tablebase if tablebase.table_count else None
        self.tb_tables, self.tb_max_pieces = tables, max_pieces
        return [*dict.fromkeys(tablebase.messages + messages),
                f"found {count} Syzygy WDL tables (up to {max_pieces} pieces)"]

    @property
    def tb_tables(self) -> SyzygyTables:
        """Our numba WDL prober's tables, for probes inside the search."""
        return self._tb_tables

    @tb_tables.setter
    def tb_tables(self, tables: SyzygyTables) -> None:
        self._tb_tables = tables
        self._tb_packed = pack_tablebases(tables)  # the search's form of them

    def nodes(self) -> int:
        """Nodes searched so far by every thread."""
        return int(self.fields.counters[C_NODES]) + sum(int(h.fields.counters[C_NODES]) for h in self.helpers)

    def clear_hash(self) -> None:
        """Empty the transposition table (``Clear Hash``)."""
        clear_table(self.tt)

    # -- control from the UCI thread ----------------------------------------

    def stop(self) -> None:
        """Make a running search return as soon as possible."""
        self._pondering = False
        self._request_stop()

    def _request_stop(self) -> None:
        """Raise the kernel's stop flag, but never before depth 1 is complete (it takes
        about a millisecond and guarantees a searched move rather than an arbitrary one)."""
        self._stop_requested = True
        if self._completed_depth >= 1:
            self.control[K_STOP] = 1

    def ponderhit(self, limits: Limits, side: int) -> None:
        """The predicted move was played: from now on the clock counts."""
        with self._lock:
            self._start = time.perf_counter()
            self._soft, self._hard = self._allocate(limits, side)
            self._pondering = False

    def elapsed(self) -> float:
        """Seconds since the search (or the ponderhit) started."""
        return time.perf_counter() - self._start

    # -- the search ------------------------------------------------------------

    def think(self, board: Board, limits: Limits, on_info: Callable[[SearchInfo], None] | None,
              start: float | None = None) -> tuple[int, int]:
        """Search ``board`` under ``limits``; returns (best move, ponder move), 0 for none.

        ``on_info`` receives what each UCI ``info`` line reports; with ``None`` nothing is built.

        ``start`` is the ``time.perf_counter()`` at which the clock started (when ``go``
        arrived); by default, now.
        """
        self._start = time.perf_counter() if start is None else start
        self._pondering = limits.ponder
        self._soft, self._hard = (None, None) if (limits.infinite or limits.ponder) else \
            self._allocate(limits, board.turn)
        self.control[K_STOP] = 0
        self._stop_requested = False
        self._completed_depth = 0
        bare_king = False
        self._lines_wanted = self.multipv
        self._node_limit_after_depth_1 = 0
        if self.strength is not None:
            # The level's node budget applies from depth 2: depth 1 always completes, so
            # the move played is a searched one even when one ply costs more than the budget.
            bare_king = opponent_has_bare_king(board)
            budget = self.strength.node_budget(bare_king)
            if not limits.nodes or budget < limits.nodes:
                self._node_limit_after_depth_1 = budget
                limits = dataclasses.replace(limits, nodes=budget)
            self._lines_wanted = max(self.multipv, self.strength.candidates)
        self.control[K_NODE_LIMIT] = 0 if self._node_limit_after_depth_1 else (limits.nodes or 0)
        self.stats = SearchStats()

        root_moves = board.legal_moves()
        if limits.searchmoves:
            wanted = set()
            for text in limits.searchmoves:
                try:
                    wanted.add(board.parse_uci(text))
                except ValueError:
                    pass
            root_moves = [m for m in root_moves if m in wanted] or root_moves
        if not root_moves:
            if on_info is not None:
                on_info(SearchInfo(depth=0, score=-MATE if board.is_check() else 0))
            return 0, 0
        root_moves = self._tablebase_filter(board, root_moves, limits)
        if len(root_moves) == 1 and self._soft is not None:
            self._soft = min(self._soft, 0.01)  # forced move: answer at once

        # The watchdog enforces the hard limit, which a ponderhit may set later; a search
        # with neither (depth, nodes, mate, infinite) ends by itself or by ``stop``, and
        # starting a thread for it would cost a millisecond or more on a busy machine.
        if self._hard is None and not self._pondering:
            best, ponder = self._iterate(board, limits, root_moves, on_info)
        else:
            watchdog = threading.Thread(target=self._watch, name="numbat-watchdog", daemon=True)
            done = threading.Event()
            self._done = done
            watchdog.start()
            try:
                best, ponder = self._iterate(board, limits, root_moves, on_info)
            finally:
                done.set()
                watchdog.join()
        if self.strength is not None and len(self.last_lines) > 1:
            chosen = self.strength.choose(self.last_lines, self.strength_rng, bare_king)
            line = self.last_lines[chosen]
            best = line.moves[0]
            ponder = line.moves[1] if len(line.moves) > 1 else self._ponder_from_tt(board, best)
            if chosen and on_info is not None:
                # The last info line is the move played, with its own searched depth and score:
                # GUIs and match runners show (and adjudicate on) the last line they read.
                on_info(self._info_line(board, self._completed_depth, 1, line))
        return best, ponder

    def _tablebase_filter(self, board: Board, root_moves: list[int], limits: Limits) -> list[int]:
        """Keep the root moves that preserve the tablebase result (all moves when not covered)."""
        self._tb_score, self._root_tbhits = None, 0
        if self.tablebase is None or self.tablebase.max_pieces == 0 or limits.searchmoves:
            return root_moves
        import chess

        cboard = chess.Board(board.fen(), chess960=board.chess960)
        if not self.tablebase.covers(cboard, self.tb_probe_limit):
            return root_moves
        result = self.tablebase.rank_root(cboard, self.tb_rule50)
        if result is None:
            return root_moves
        keep = {board.parse_uci(text) for text in result.moves}
        self._tb_score, self._root_tbhits = result.score, result.probes
        return [m for m in root_moves if m in keep] or root_moves

    def _watch(self) -> None:
        """Raise the stop flag when the hard limit passes (pondering suspends the clock).

        The thread sleeps until the deadline, waking at most every ``WATCHDOG_PERIOD``
        to notice a ponderhit: it never competes with the search for a core.
        """
        while True:
            with self._lock:
                hard = self._hard
                pondering = self._pondering
            if hard is not None and not pondering:
                remaining = hard - self.elapsed()
                if remaining <= 0:
                    self._request_stop()
                    return
                timeout = min(remaining, WATCHDOG_PERIOD)
            else:
                timeout = WATCHDOG_PERIOD
            if self._done.wait(timeout):
                return

    def _iterate(self, board: Board, limits: Limits, root_moves: list[int],
                 on_info: Callable[[SearchInfo], None] | None) -> tuple[int, int]:
        """Iterative deepening with aspiration windows, helpers alongside; returns (best, ponder)."""
        data = self.fields
        count = len(root_moves)
        data.root_moves[:count] = root_moves
        data.root_info[ROOT_COUNT] = count
        data.counters[:] = 0
        data.config[CFG_TB_PIECES] = min(self.tb_max_pieces, self.tb_probe_limit)
        data.config[CFG_TB_DEPTH] = self.tb_probe_depth
        data.config[CFG_TB_RULE50] = int(self.tb_rule50)
        self.tt.generation[0] += 1
        age_history(self.sd)
        max_depth = min(limits.depth or MAX_SEARCH_DEPTH, MAX_SEARCH_DEPTH)
        self._main_depth = 1
        if not limits.nodes:
            self._start_helpers(board, root_moves, max_depth)
        try:
            return self._deepen(board, limits, count, max_depth, on_info)
        finally:
            self._stop_helpers()

    def _deepen(self, board: Board, limits: Limits, count: int, max_depth: int,
                on_info: Callable[[SearchInfo], None] | None) -> tuple[int, int]:
        """The main thread's iterations over the ``count`` root moves; returns (best, ponder)."""
        sd, data, ev, scratch = self.sd, self.fields, self.ev, self.tb_scratch
        lines: list[PvLine] = [PvLine(0, [int(data.root_moves[0])])]
        previous_scores: dict[int, int] = {}
        self._iteration_scores = []
        for depth in range(1, max_depth + 1):
            self._main_depth = depth
            iteration_start_nodes = int(data.counters[C_NODES])
            data.root_nodes[:] = 0
            multipv = min(self._lines_wanted, count)
            new_lines: list[PvLine] = []
            data.counters[C_SELDEPTH] = 0
            self._partial = None
            for pv_index in range(multipv):
                data.root_info[ROOT_PV_START] = pv_index
                guess = previous_scores.get(int(data.root_moves[pv_index]))

                report_bound = None if on_info is None else \
                    functools.partial(self._report_bound, board, depth, pv_index, on_info=on_info)
                score = self._search_root(sd, data, board, ev, scratch, depth, pv_index, count, guess, report_bound)
                if self.control[K_STOP]:
                    break
                pv = self._root_pv(data) or [int(data.root_moves[pv_index])]
                new_lines.append(PvLine(score, pv))
            if self.control[K_STOP] and depth > 1:
                # An unfinished iteration: keep the last complete one, unless a root move
                # proved itself within it (it failed high, or its search finished above
                # alpha before the stop).  Single PV only: MultiPV lines need every move.
                if multipv == 1 and self._partial is not None:
                    lines = [self._partial]
                    if on_info is not None:
                        on_info(self._info_line(board, depth, 1, self._partial))
                break
            if new_lines:
                # Each line searched the moves the lines before it left over, so a later line
                # can come back higher (the table and the histories changed in between): show
                # the lines best first, and start the next iteration in that order.
                order = sorted(range(len(new_lines)), key=lambda k: -new_lines[k].score)
                data.root_moves[:len(new_lines)] = [int(data.root_moves[k]) for k in order]
                new_lines = [new_lines[k] for k in order]
                lines = new_lines + lines[len(new_lines):] if len(new_lines) < len(lines) else new_lines
                lines = lines[:multipv]
                for line in new_lines:
                    previous_scores[line.moves[0]] = line.score
            self._completed_depth = depth
            self._iteration_scores.append(lines[0].score)
            if self._node_limit_after_depth_1:
                self.control[K_NODE_LIMIT] = self._node_limit_after_depth_1
                if self.nodes() >= self._node_limit_after_depth_1:
                    self.control[K_STOP] = 1
            if self._stop_requested:
                self.control[K_STOP] = 1
            self.stats.iteration_nodes.append(int(data.counters[C_NODES]) - iteration_start_nodes)
            if on_info is not None:
                for index, line in enumerate(new_lines[:self.multipv]):  # a weakened level's extra lines are its own
                    on_info(self._info_line(board, depth, index + 1, line))
            if self.control[K_STOP]:
                break
            if self._should_stop_after(depth, lines[0].score, limits, self._soft_limit_scale(depth, multipv, count)):
                break

        if multipv == 1 and self._iteration_scores:
            self.previous_score = self._iteration_scores[-1]
        self.last_lines = lines

        self.stats.cutoffs = data.counters[C_CUTOFFS:C_CUTOFFS + CUTOFF_DEPTHS * 4].reshape(CUTOFF_DEPTHS, 2, 2).copy()
        best = lines[0].moves[0]
        ponder = lines[0].moves[1] if len(lines[0].moves) > 1 else self._ponder_from_tt(board, best)
        return best, ponder

    def _search_root(self, sd: SearchData, data: SimpleNamespace, board: Board, ev: Evaluator, scratch: np.ndarray,
                     depth: int, pv_index: int, count: int, guess: int | None,
                     on_bound: Callable[[int, str], None] | None) -> int:
        """One iteration of one PV line: the kernel in an aspiration window around ``guess``,
        widened and searched again until the score falls inside (or the stop flag rises).
        ``data`` holds the arrays of ``sd`` (``field_views``)."""
        delta = self.aspiration_delta
        if depth >= ASPIRATION_MIN_DEPTH and guess is not None and abs(guess) < MATE_IN_MAX_PLY:
            alpha, beta = max(guess - delta, -INFINITE), min(guess + delta, INFINITE)
        else:
            alpha, beta = -INFINITE, INFINITE
        while True:
            data.root_scores[pv_index:count] = -INFINITE
            score = int(search(board.pos, board.tab, self.tt, sd, self.control, ev, self._tb_packed, scratch,
                               alpha, beta, depth, 0))
            if self.control[K_STOP]:
                if sd is self.sd and data.pv_len[0] > 0:  # a root move finished above alpha
                    self._partial = self._root_line(data, count)
                return score
            self._sort_root(data, pv_index, count)
            if alpha < score < beta:
                return score
            if sd is self.sd:  # a fail high proves its move; a fail low casts doubt on all
                self._partial = self._root_line(data, count) if score >= beta and data.pv_len[0] > 0 else None
            if on_bound is not None:
                on_bound(score, "upperbound" if score <= alpha else "lowerbound")
            alpha, beta, delta = widen_window(alpha, beta, score, delta)

    # -- Lazy SMP helpers ----------------------------------------------------------

    def _start_helpers(self, board: Board, root_moves: list[int], max_depth: int) -> None:
        """Start one thread per helper on its own copy of the root position."""
        self._helper_threads = []
        for number, helper in enumerate(self.helpers, start=1):
            thread = threading.Thread(target=self._help, args=(helper, number, board.copy(), root_moves, max_depth),
                                      name=f"numbat-helper-{number}", daemon=True)
            thread.start()
            self._helper_threads.append(thread)

    def _stop_helpers(self) -> None:
        """Raise the stop flag and wait for the helpers (each returns within a node)."""
        if not self._helper_threads:
            return
        self.control[K_STOP] = 1
        for thread in self._helper_threads:
            thread.join()
        self._helper_threads = []

    def _help(self, helper: Helper, number: int, board: Board, root_moves: list[int], max_depth: int) -> None:
        """A helper's iterative deepening: searches that only fill the shared table."""
        try:
            sd, data, count = helper.sd, helper.fields, len(root_moves)
            data.root_moves[:count] = root_moves
            data.root_info[ROOT_COUNT] = count
            data.root_info[ROOT_PV_START] = 0
            data.counters[:] = 0
            data.config[:] = self.fields.config
            age_history(sd)
            guess = None
            depth = 0
            while not self.control[K_STOP]:
                depth = max(depth + 1, self._main_depth + number % 2)
                if depth > max_depth:
                    return
                guess = self._search_root(sd, helper.fields, board, helper.ev, helper.scratch, depth, 0, count, guess,
                                          None)
        except Exception as error:  # a helper must never take the engine down: the main thread plays on
            self.helper_errors.append(error)

    def _soft_limit_scale(self, depth: int, multipv: int, count: int) -> float:
        """The time policy's factor on the soft limit after ``depth`` (``engine.timeman.soft_limit_scale``)."""
        nodes = self.fields.root_nodes[:count]  # sorted: the first root move is the best
        return soft_limit_scale(depth, multipv, int(nodes[0]), int(nodes.sum()), self._iteration_scores,
                                self.previous_score, MATE_IN_MAX_PLY)

    def _should_stop_after(self, depth: int, score: int, limits: Limits, time_scale: float) -> bool:
        """Whether the finished ``depth`` should be the last one (``time_scale`` stretches the soft limit)."""
        if limits.mate and score >= MATE_IN_MAX_PLY and (MATE - score + 1) // 2 <= limits.mate:
            return True
        if self.control[K_NODE_LIMIT] and self.fields.counters[C_NODES] >= self.control[K_NODE_LIMIT]:
            return True
        with self._lock:
            soft, pondering = self._soft, self._pondering
        return soft is not None and not pondering and self.elapsed() >= SOFT_LIMIT_NEXT_DEPTH * soft * time_scale

    @staticmethod
    def _root_pv(data: SimpleNamespace) -> list[int]:
        """The kernel's principal variation from the root (empty if no root move raised alpha)."""
        return data.pv[0, : data.pv_len[0]].tolist()

    @classmethod
    def _root_line(cls, data: SimpleNamespace, count: int) -> PvLine:
        """The kernel's root PV as a lower-bound line, scored with its first move's score."""
        moves = cls._root_pv(data)
        index = int(np.flatnonzero(data.root_moves[:count] == moves[0])[0])
        return PvLine(int(data.root_scores[index]), moves, "lowerbound")

    @staticmethod
    def _sort_root(data: SimpleNamespace, start: int, count: int) -> None:
        """Stable sort of root moves ``start:count`` by this iteration's scores."""
        order = np.argsort(-data.root_scores[start:count], kind="stable") + start
        data.root_moves[start:count] = data.root_moves[order]
        data.root_scores[start:count] = data.root_scores[order]
        data.root_nodes[start:count] = data.root_nodes[order]

    def _ponder_from_tt(self, board: Board, best: int) -> int:
        """A reply to ``best`` from the transposition table, if it is legal."""
        board.push(best)
        try:
            move = int(tt_move_of(self.tt, board.pos.keys[board.pos.state[ST_PLY]]))
            return move if move and move in board.legal_moves() else 0
        finally:
            board.pop()

    def _legal_prefix(self, board: Board, moves: list[int]) -> list[str]:
        """UCI text of the longest legal prefix of ``moves`` (a PV must be playable)."""
        return board.line_to_uci(moves[:board.legal_prefix(moves)])

    def _info_line(self, board: Board, depth: int, multipv: int, line: PvLine) -> SearchInfo:
        """What the ``info`` line of one finished PV reports."""
        score = line.score
        if self._tb_score is not None and abs(score) < MATE_IN_MAX_PLY:
            score = self._tb_score  # the tables know better than the evaluation
        return SearchInfo(depth=depth, score=score, multipv=multipv,
                          seldepth=max(int(self.fields.counters[C_SELDEPTH]), depth),
                          bound=line.bound if self._tb_score is None else "", nodes=self.nodes(),
                          seconds=max(self.elapsed(), 1e-6), hashfull=int(hashfull(self.tt)), tbhits=self._tbhits(),
                          pv=self._legal_prefix(board, line.moves))

    def _tbhits(self) -> int:
        """Tablebase probes of every thread, and of the root filter."""
        return (int(self.fields.counters[C_TBHITS]) + sum(int(h.fields.counters[C_TBHITS]) for h in self.helpers)
                + self._root_tbhits)

    def _report_bound(self, board: Board, depth: int, pv_index: int, score: int, bound: str,
                      on_info: Callable[[SearchInfo], None]) -> None:
        """An aspiration fail, reported only in long searches (GUIs show it as a tentative score)."""
        if self.elapsed() < BOUND_REPORT_AFTER or pv_index >= self.multipv:
            return
        move = int(self.fields.root_moves[pv_index])
        on_info(self._info_line(board, depth, pv_index + 1, PvLine(score, [move], bound)))
