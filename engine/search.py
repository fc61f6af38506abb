"""The search kernel: negamax alpha-beta with principal variation search (PVS).

This is the sequence of the lectures, each idea a named step of one function:
minimax → alpha-beta → move ordering → transposition table → null move →
quiescence and extensions.  Iterative deepening, aspiration windows and time
control are the Python driver's job (``engine.searcher``); this kernel searches one
root window to one depth and returns the score.

Why one function: numba cannot cache a function that calls a recursive function
(https://github.com/numba/numba/issues/6061), but a self-recursive function called straight from Python
caches fine.  So ``search`` is the only recursive kernel, it is only ever called
from Python (at the root, ``ply == 0``), and quiescence search is its
``depth <= 0`` branch rather than a second recursive function.

Scores are centipawns from the side to move's point of view; ``MATE - n`` means
"mate in n plies from the root".  The search is fail-soft.

The per-thread working arrays are the fields of one ``SearchData`` record
(``SEARCH_DATA_DTYPE``); the ``control`` array (``new_control``: K_* stop flag and node
limit) is shared by every thread of a search and passed on its own, and the Syzygy
tables come packed in one array (``engine.syzygy.pack_tablebases``), unpacked only to
probe:

    moves, scores      int32[MAX_PLY + 1, MAX_MOVES]  move list and ordering keys per ply (``moveorder``)
    picker             int32[2 * (MAX_PLY + 1), PICKER_SIZE]  move-picker state per ply, and per ply for
                                                       a singular search (``moveorder.picker_row``)
    quiets             int32[MAX_PLY + 1, QUIETS_MAX]  quiet moves tried per ply (history malus)
    killers            int32[MAX_PLY + 2, 2]           two quiet moves that cut off at each ply
    history            int32[2, 4096]                  butterfly history by side, from|to<<6
    continuation       int16[1024, 1024]               continuation history: [piece and square of the move one or
                                                       two plies back][piece and square of this move]
    path_moves         int32[MAX_PLY + 2]              piece << 6 | to of the move made at each ply (0: none, null)
    counter_moves      int32[16, 64]                   reply that refuted (piece, to) last time
    correction         int32[2, 2**PAWN_CACHE_BITS]    eval correction by side and pawn placement, 1/GRAIN cp
    pv                 int32[MAX_PLY + 1, MAX_PLY + 1] triangular principal-variation table
    pv_len             int32[MAX_PLY + 1]              length of the PV from each ply
    static_eval        int32[MAX_PLY + 2]              static evaluation along the path
    excluded           int32[MAX_PLY + 2]              move excluded by a singular search
    nmp_min_ply        int64[1]                        null moves only from this ply on (0; set while
                                                       a null-move verification search runs)
    root_moves         int32[MAX_MOVES]                root moves, best first (set by Python)
    root_scores        int32[MAX_MOVES]                score of each root move this iteration
    root_nodes         int64[MAX_MOVES]                nodes spent below each root move (zeroed by Python per depth)
    root_info          int64[2]                        ROOT_COUNT, ROOT_PV_START (MultiPV line)
    counters           int64[COUNTERS_SIZE]            C_* statistics (nodes, seldepth, tbhits), then the
                                                       cutoff table from C_CUTOFFS (see ``cutoff_slot``)
    reductions         int32[LMR_TABLE_SIZE, LMR_TABLE_SIZE]  late-move reduction by depth and move number
    config             int32[14]                       CFG_* switches (all on in play) and Syzygy settings
    params             int32[PARAMS_SIZE]              P_* tunable margins and divisors (``KERNEL_TUNABLES``)

``config`` lets the tests switch pruning off to check the textbook claim that
alpha-beta returns the minimax value, and lets ``search_stats --without`` measure
what each step does to the tree (``SEARCH_STEPS`` names them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.defs import (
    BISHOP,
    H_MOVE,
    KNIGHT,
    MAX_MOVES,
    MAX_PLY,
    PAWN,
    QUEEN,
    ROOK,
    ST_CASTLING,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    U64_ZERO,
)
from engine.evaluate import PAWN_CACHE_BITS, evaluate, pawn_slot
from engine.intrinsics import popcount
from engine.jit import hot_njit, new_record, njit
from engine.move import PROMOTION, move_kind, move_promo_type, move_to
from engine.movegen import GEN_NOISY, GEN_QUIET, LIST_START, generate_moves
from engine.moveorder import (
    PICKER_SIZE,
    SEE_VALUE,
    captured_type,
    is_quiet,
    next_move,
    pick_next,
    picked_slot,
    picker_row,
    piece_to_index,
    quiet_history,
    score_captures,
    see_ge,
    skip_quiet_moves,
    start_picker,
    start_root_picker,
    update_quiet_history,
)
from engine.position import (
    check_squares,
    gives_check_fast,
    in_check,
    key_after,
    make_move,
    make_null_move,
    unmake_move,
    unmake_null_move,
)
from engine.syzygy import TB_FAIL, probe_wdl, unpack_tablebases
from engine.tt import (
    BOUND_EXACT,
    BOUND_LOWER,
    BOUND_UPPER,
    EVAL_NONE,
    MATE,
    MATE_IN_MAX_PLY,
    TB_WIN,
    entry_bound,
    entry_depth,
    entry_eval,
    entry_move,
    entry_score,
    score_from_tt,
    score_to_tt,
    tt_prefetch,
    tt_probe,
    tt_store,
)

INFINITE = MATE + 1
DRAW = 0

# ---------------------------------------------------------------------------
# Search constants, in one place (the ones the tuner moves are declared further down,
# with their ranges).  Depths and reductions are in plies, margins in centipawns.  What
# is left inline is the algorithm itself: the one ply a move or a null move takes, null
# windows (beta - 1, beta), "two plies back" (the same side to move), and a reduced
# search keeping at least one ply.
# ---------------------------------------------------------------------------
RFP_IMPROVING_DEPTH = 1      # reverse futility: depth counted this much less when improving (the eval likelier holds)
NMP_VERIFY_DEPTH = 12        # from this depth a null-move cutoff is verified by a real search, ...
NMP_VERIFY_GUARD = 3         # ... with null moves off for its first guard / divisor of the depth (plies below
NMP_VERIFY_GUARD_DIVISOR = 4  # ... its node), where a zugzwang that fooled the null move shows
IIR_REDUCTION = 1            # internal iterative reduction by this much (a node never searched well; the next
                             # iteration has a TT move)
LMP_NOT_IMPROVING_DIVISOR = 2  # late-move pruning's move count divided by this when the eval is not improving
LMR_MIN_DEPTH = 3            # late-move reductions from this depth ...
LMR_MIN_MOVES = 2            # ... for moves after the first few
LMR_BASE = 0.81              # reduction = base + ln(depth) * ln(move number) / divisor
LMR_DIVISOR = 2.31
LMR_TABLE_SIZE = 64          # ... tabulated by depth and move number below this (larger ones read the last entry)
LMR_PV_NODE = 1              # ... one ply less in PV nodes (their score is wanted exactly)
LMR_NOT_IMPROVING = 1        # ... one ply more when the eval is not improving
LMR_GIVES_CHECK = 1          # ... one ply less for a checking move
SINGULAR_TT_DEPTH_MARGIN = 3  # singular extension if the TT entry is at most this much shallower than the node
                              # (a trustworthy score), ...
SINGULAR_DEPTH_DIVISOR = 2   # ... the other moves searched to (depth - 1) / divisor (a cheap look)
SINGULAR_EXTENSION = 1       # a singular TT move is searched this much deeper ...
SINGULAR_NEGATIVE_EXTENSION = -1  # ... and this much when another move nearly matches it and it beats beta
CHECK_EXTENSION = 1          # a checking move is searched this much deeper
HISTORY_AGING_DIVISOR = 2    # between searches every history entry is divided by this (old lessons fade)
QUIETS_MAX = 64              # quiet moves per node remembered for the history malus (later ones get none)
TB_DEPTH_BONUS = 6           # a tablebase result is stored as if searched this much deeper
TB_PLY_MARGIN = 12           # probes make captures internally: keep clear of the stack's end
CORRECTION_GRAIN = 256       # correction history: entries in 1/GRAIN centipawn, by side and pawn placement
CORRECTION_WEIGHT_SCALE = 256  # ... a search of depth d moves an entry weight / SCALE of the way to its result, ...
CORRECTION_WEIGHT_OFFSET = 1   # ... weight = min(d + offset, P_CORRECTION_MAX_WEIGHT's value)


# ---------------------------------------------------------------------------
# Tuned at run time.  The SPSA tuner (``engine.tools.spsa``) moves these margins and
# divisors between games, so the kernel reads them from ``sd.params`` instead of
# constants: a tuning run needs no recompile.  Each is declared once, below: its name
# (also its UCI option in tuning mode), default, the range the tuner keeps to, and its
# step, the perturbation at the end of a run (OpenBench's ``c_end``).  The declaration
# returns the tunable's index in ``sd.params``, a plain module-level int, so numba
# compiles ``params[P_...]`` with a constant index; ``KERNEL_TUNABLES`` (in this order)
# gives the defaults.  The driver's tunables (late-move reduction table, aspiration
# window) are in ``engine.searcher``.
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Tunable:
    """A search parameter the tuner may move: its name (also its UCI option in tuning mode) and range."""

    name: str
    default: int
    low: int
    high: int
    step: float


_kernel_tunables: list[Tunable] = []


def _tunable(name: str, default: int, low: int, high: int, step: float) -> int:
    """Declare a kernel tunable; its index in ``sd.params`` (the ``P_<name>`` constant it is assigned to)."""
    _kernel_tunables.append(Tunable(name, default, low, high, step))
    return len(_kernel_tunables) - 1


# In ``sd.params`` order; the arguments: name, default, low, high, step.
# Reverse futility pruning up to max depth, when eval - margin * depth still beats beta.
P_RFP_MARGIN = _tunable("RFP_MARGIN", 84, 30, 150, 8)
P_RFP_MAX_DEPTH = _tunable("RFP_MAX_DEPTH", 6, 4, 12, 1)
# Null move: R = base + depth / depth divisor + min((eval - beta) / eval divisor, eval max).
P_NMP_EVAL_DIVISOR = _tunable("NMP_EVAL_DIVISOR", 213, 80, 400, 20)
# Late-move pruning: skip quiets after base + depth^2 moves.
P_LMP_BASE = _tunable("LMP_BASE", 4, 0, 10, 1)
# Futility pruning of quiets up to max depth, when eval + base + margin * depth <= alpha.
P_FUTILITY_MAX_DEPTH = _tunable("FUTILITY_MAX_DEPTH", 7, 3, 10, 1)
P_FUTILITY_BASE = _tunable("FUTILITY_BASE", 77, 0, 200, 12)
P_FUTILITY_MARGIN = _tunable("FUTILITY_MARGIN", 79, 40, 180, 10)
# Prune quiets, and captures, whose SEE loses more than margin * depth.
P_SEE_QUIET_MARGIN = _tunable("SEE_QUIET_MARGIN", 55, 20, 140, 8)
P_SEE_CAPTURE_MARGIN = _tunable("SEE_CAPTURE_MARGIN", 99, 40, 200, 10)
# History score (butterfly plus both continuations) per ply of reduction removed or added.
P_LMR_HISTORY_DIVISOR = _tunable("LMR_HISTORY_DIVISOR", 17291, 4096, 32768, 1200)
P_DELTA_MARGIN = _tunable("DELTA_MARGIN", 263, 50, 400, 20)  # quiescence delta pruning
# History bonus = min(slope * depth - offset, max): shallow cutoffs teach too.
P_HISTORY_BONUS_SLOPE = _tunable("HISTORY_BONUS_SLOPE", 171, 60, 320, 16)
P_HISTORY_BONUS_OFFSET = _tunable("HISTORY_BONUS_OFFSET", 71, 0, 200, 12)
P_HISTORY_BONUS_MAX = _tunable("HISTORY_BONUS_MAX", 2127, 800, 4096, 150)
P_CORRECTION_LIMIT = _tunable("CORRECTION_LIMIT", 70, 16, 160, 8)  # correction history: at most this many cp either way
# SPSA run 2 adds the depth limits and reductions run 1 left fixed.
P_NMP_MIN_DEPTH = _tunable("NMP_MIN_DEPTH", 3, 1, 6, 1)  # null-move pruning from this depth
P_NMP_BASE_REDUCTION = _tunable("NMP_BASE_REDUCTION", 3, 1, 6, 1)
P_NMP_DEPTH_DIVISOR = _tunable("NMP_DEPTH_DIVISOR", 4, 2, 8, 1)
P_NMP_EVAL_MAX = _tunable("NMP_EVAL_MAX", 3, 1, 6, 1)  # a huge eval margin still reduces at most this much more
P_IIR_MIN_DEPTH = _tunable("IIR_MIN_DEPTH", 4, 2, 8, 1)  # internal iterative reduction without a TT move
P_LMP_MAX_DEPTH = _tunable("LMP_MAX_DEPTH", 8, 3, 12, 1)  # late-move pruning up to this depth
P_SEE_PRUNE_MAX_DEPTH = _tunable("SEE_PRUNE_MAX_DEPTH", 8, 3, 12, 1)  # SEE pruning up to this depth
# Quiescence searches captures and checks whose SEE keeps at least this.
P_QS_SEE_THRESHOLD = _tunable("QS_SEE_THRESHOLD", 0, -150, 100, 15)
# Singular extension: the TT move searched alone from this depth, against beta = tt score - margin / 10 * depth
# (in tenths, for the tuner's sake).
P_SINGULAR_MIN_DEPTH = _tunable("SINGULAR_MIN_DEPTH", 8, 5, 12, 1)
P_SINGULAR_MARGIN_X10 = _tunable("SINGULAR_MARGIN_X10", 20, 5, 60, 4)
# Correction history's weight = min(depth + offset, this): deeper results teach more.
P_CORRECTION_MAX_WEIGHT = _tunable("CORRECTION_MAX_WEIGHT", 16, 4, 48, 3)
KERNEL_TUNABLES = tuple(_kernel_tunables)
PARAMS_SIZE = len(KERNEL_TUNABLES)
PARAM_INDEX = {t.name: i for i, t in enumerate(KERNEL_TUNABLES)}
if any(globals().get("P_" + name) != i for name, i in PARAM_INDEX.items()):  # a P_ name and its string disagree
    raise ImportError("engine.search: each tunable must be assigned to P_<its name>")

# Layout of SearchData.counters
C_NODES, C_SELDEPTH, C_TBHITS = 0, 1, 2
C_CUTOFFS = 3                # beta cutoffs by remaining depth (1, 2, 3, 4+), TT move or not, first move or not
CUTOFF_DEPTHS = 4
COUNTERS_SIZE = C_CUTOFFS + CUTOFF_DEPTHS * 4
# Layout of the control array (shared by threads)
K_STOP, K_NODE_LIMIT = 0, 1
CONTROL_SIZE = 2
# Layout of SearchData.root_info
ROOT_COUNT, ROOT_PV_START = 0, 1
# Layout of SearchData.config
CFG_TT_CUTOFFS, CFG_NULL_MOVE, CFG_MOVE_PRUNING, CFG_REDUCTIONS, CFG_QUIESCENCE, CFG_EXTENSIONS = 0, 1, 2, 3, 4, 5
CFG_MATE_DISTANCE = 6
CFG_TB_PIECES, CFG_TB_DEPTH, CFG_TB_RULE50 = 7, 8, 9  # Syzygy: piece limit (0 = off), probe depth, 50-move rule
CFG_REVERSE_FUTILITY, CFG_IIR = 10, 11
CFG_SINGULAR, CFG_COUNTER_MOVE = 12, 13                # within "extensions" and move ordering
# Search steps that ``config`` can switch off, by the names the tools take (``search_stats --without``)
SEARCH_STEPS = {
    "tt-cutoffs": CFG_TT_CUTOFFS,              # Step 4
    "reverse-futility": CFG_REVERSE_FUTILITY,  # Step 7
    "null-move": CFG_NULL_MOVE,                # Step 8
    "iir": CFG_IIR,                            # Step 9
    "move-pruning": CFG_MOVE_PRUNING,          # Step 12: late-move, futility and SEE pruning
    "extensions": CFG_EXTENSIONS,              # Steps 13-14
    "singular": CFG_SINGULAR,                  # Step 13 alone
    "countermove": CFG_COUNTER_MOVE,           # Step 10: the countermove's place in the order
    "reductions": CFG_REDUCTIONS,              # Step 15
}
CONFIG_SIZE = 14

SEARCH_DATA_FIELDS = [
    ("moves", np.int32, (MAX_PLY + 1, MAX_MOVES)),
    ("scores", np.int32, (MAX_PLY + 1, MAX_MOVES)),
    ("picker", np.int32, (2 * (MAX_PLY + 1), PICKER_SIZE)),
    ("quiets", np.int32, (MAX_PLY + 1, QUIETS_MAX)),
    ("killers", np.int32, (MAX_PLY + 2, 2)),
    ("history", np.int32, (2, 4096)),
    ("continuation", np.int16, (1024, 1024)),
    ("path_moves", np.int32, (MAX_PLY + 2,)),
    ("counter_moves", np.int32, (16, 64)),
    ("correction", np.int32, (2, 1 << PAWN_CACHE_BITS)),
    ("pv", np.int32, (MAX_PLY + 1, MAX_PLY + 1)),
    ("pv_len", np.int32, (MAX_PLY + 1,)),
    ("static_eval", np.int32, (MAX_PLY + 2,)),
    ("excluded", np.int32, (MAX_PLY + 2,)),
    ("nmp_min_ply", np.int64, (1,)),
    ("root_moves", np.int32, (MAX_MOVES,)),
    ("root_scores", np.int32, (MAX_MOVES,)),
    ("root_nodes", np.int64, (MAX_MOVES,)),
    ("root_info", np.int64, (2,)),
    ("counters", np.int64, (COUNTERS_SIZE,)),
    ("reductions", np.int32, (LMR_TABLE_SIZE, LMR_TABLE_SIZE)),
    ("config", np.int32, (CONFIG_SIZE,)),
    ("params", np.int32, (PARAMS_SIZE,)),
]
SEARCH_DATA_DTYPE = np.dtype(SEARCH_DATA_FIELDS, align=True)
SearchData = np.record  # one record of SEARCH_DATA_DTYPE; its fields read as arrays (``sd.killers``)


def reduction_table(base: float = LMR_BASE, divisor: float = LMR_DIVISOR) -> np.ndarray:
    """Late-move reductions: base + ln(depth) ln(moves) / divisor, in plies."""
    table = np.zeros((LMR_TABLE_SIZE, LMR_TABLE_SIZE), dtype=np.int32)
    for depth in range(1, LMR_TABLE_SIZE):
        for count in range(1, LMR_TABLE_SIZE):
            table[depth, count] = int(base + math.log(depth) * math.log(count) / divisor)
    return table


def new_control() -> np.ndarray:
    """The ``control`` array of a search (K_STOP, K_NODE_LIMIT), shared by all its threads."""
    return np.zeros(CONTROL_SIZE, dtype=np.int64)


def new_search_data() -> SearchData:
    """Fresh working arrays for one search thread, in one record (see ``new_record``)."""
    sd = new_record(SEARCH_DATA_DTYPE)
    sd.reductions[:] = reduction_table()
    sd.config[:] = _default_config()
    sd.params[:] = default_params()
    return sd


def default_params() -> np.ndarray:
    """The kernel's tunables at their defaults, in ``sd.params`` order."""
    return np.array([t.default for t in KERNEL_TUNABLES], dtype=np.int32)


def _default_config() -> np.ndarray:
    """Every search feature on, tablebase probing off until tables are loaded."""
    config = np.ones(CONFIG_SIZE, dtype=np.int32)
    config[CFG_TB_PIECES] = 0
    return config


@hot_njit
def clear_heuristics(sd):
    """Forget killers, history, countermoves and eval corrections (new game)."""
    sd.killers[:, :] = 0
    sd.history[:, :] = 0
    sd.continuation[:, :] = 0
    sd.counter_moves[:, :] = 0
    sd.correction[:, :] = 0


@hot_njit
def age_history(sd):
    """Divide the history scores between searches (by HISTORY_AGING_DIVISOR) so old lessons fade."""
    for side in range(2):
        for i in range(4096):
            sd.history[side, i] //= HISTORY_AGING_DIVISOR
    for row in range(1024):
        for i in range(1024):
            sd.continuation[row, i] //= HISTORY_AGING_DIVISOR
    sd.killers[:, :] = 0


@hot_njit(inline="always")
def is_repetition(pos, ply):
    """True if the current position occurred before, within the reversible moves.

    One earlier occurrence is scored as a draw, in the tree and before the root alike: if
    repeating is good for one side it will repeat again, so the search need not wait for
    the third time.  (Waiting for the third time with the game's history, as the rules
    have it, let the winning side spend moves on positions it had already seen, and the
    basic mates no longer came within the fifty-move rule.)
    """
    current = pos.state[ST_PLY]
    key = pos.keys[current]
    back = pos.state[ST_HALFMOVE]
    if back > current:
        back = current
    i = 4
    while i <= back:
        if pos.keys[current - i] == key:
            return True
        i += 2
    return False


@hot_njit(inline="always")
def insufficient_material(pos):
    """Bare kings, or a single minor piece against a bare king."""
    p = pos.pieces
    if p[PAWN] | p[ROOK] | p[QUEEN]:
        return False
    return popcount(p[KNIGHT] | p[BISHOP]) <= 1


@hot_njit(inline="always")
def has_non_pawn_material(pos, side):
    """True when ``side`` has a piece other than king and pawns (null move is then safe)."""
    p = pos.pieces
    return ((p[KNIGHT] | p[BISHOP] | p[ROOK] | p[QUEEN]) & pos.colors[side]) != U64_ZERO


@njit(inline="always")
def cutoff_slot(depth, had_tt_move, first):
    """Index in ``counters`` of a beta cutoff's cell: remaining depth, TT move tried first, first move."""
    bucket = min(depth, CUTOFF_DEPTHS) - 1
    return C_CUTOFFS + 4 * bucket + (2 if had_tt_move else 0) + (1 if first else 0)


@hot_njit
def search(pos, tab, tt, sd, control, ev, tb_packed, scratch, alpha, beta, depth, ply):
    """Score of the position searched ``depth`` plies deep within (alpha, beta); root at ply 0."""
    config = sd.config
    params = sd.params
    counters = sd.counters
    pv_node = beta - alpha > 1
    root = ply == 0
    sd.pv_len[ply] = 0

    # Step 1. Node bookkeeping: obey a stop already given (a node not searched is not
    # counted, so a node budget is never overrun), count the node, obey the node limit.
    if control[K_STOP] != 0:
        return 0
    counters[C_NODES] += 1
    if ply > counters[C_SELDEPTH]:
        counters[C_SELDEPTH] = ply
    if control[K_NODE_LIMIT] > 0 and counters[C_NODES] >= control[K_NODE_LIMIT]:
        control[K_STOP] = 1
        return 0
    if ply >= MAX_PLY - 1:
        return evaluate(pos, tab, ev)

    # Step 2. Draws: fifty-move rule, repetition, insufficient material.
    if not root:
        if pos.state[ST_HALFMOVE] >= 100 or insufficient_material(pos) or is_repetition(pos, ply):
            return DRAW

    # Step 3. Mate distance pruning: no line can beat a mate already found closer to the root.
    if not root and config[CFG_MATE_DISTANCE]:
        if alpha < -MATE + ply:
            alpha = -MATE + ply
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha

    checked = in_check(pos, tab)
    side = pos.state[ST_SIDE]
    key = pos.keys[pos.state[ST_PLY]]
    excluded = sd.excluded[ply]

    # Step 4. Transposition table: a deep enough entry ends the node; its move is tried first.
    tt_move = 0
    tt_hit = False
    tt_score = 0
    tt_depth = -1
    tt_bound = 0
    tt_eval = 0
    if excluded == 0:
        data = tt_probe(tt, key)
        if data != U64_ZERO:
            tt_hit = True
            tt_move = entry_move(data)
            tt_score = score_from_tt(entry_score(data), ply)
            tt_depth = entry_depth(data)
            tt_bound = entry_bound(data)
            tt_eval = entry_eval(data)
    if (tt_hit and not pv_node and config[CFG_TT_CUTOFFS] and tt_depth >= max(depth, 0)
            and ((tt_bound == BOUND_LOWER and tt_score >= beta) or (tt_bound == BOUND_UPPER and tt_score <= alpha)
                 or tt_bound == BOUND_EXACT)):
        return tt_score

    # Step 4b. Endgame tablebases: right after a capture or pawn move (only those change
    # the material, so only then can a probe newly succeed) the table knows the result.
    tb_pieces = config[CFG_TB_PIECES]
    tb_floor = -INFINITE    # in PV nodes the table's bound limits the searched score
    tb_ceiling = INFINITE
    if (tb_pieces > 0 and not root and depth > 0 and excluded == 0 and pos.state[ST_HALFMOVE] == 0
            and pos.state[ST_CASTLING] == 0 and ply < MAX_PLY - TB_PLY_MARGIN):
        pieces = popcount(pos.colors[0] | pos.colors[1])
        if pieces < tb_pieces or (pieces == tb_pieces and depth >= config[CFG_TB_DEPTH]):
            wdl = probe_wdl(unpack_tablebases(tb_packed), pos, tab, scratch)
            if wdl != TB_FAIL:
                counters[C_TBHITS] += 1
                draw_band = 1 if config[CFG_TB_RULE50] else 0  # cursed wins / blessed losses
                if wdl > draw_band:
                    tb_value, tb_bound = TB_WIN - ply, BOUND_LOWER
                elif wdl < -draw_band:
                    tb_value, tb_bound = -TB_WIN + ply, BOUND_UPPER
                else:
                    tb_value, tb_bound = DRAW, BOUND_EXACT
                if (tb_bound == BOUND_EXACT or (tb_bound == BOUND_LOWER and tb_value >= beta)
                        or (tb_bound == BOUND_UPPER and tb_value <= alpha)):
                    tt_store(tt, key, 0, score_to_tt(tb_value, ply), EVAL_NONE,
                             min(depth + TB_DEPTH_BONUS, MAX_PLY - 1), tb_bound)
                    return tb_value
                if pv_node:  # search on for a PV, but within what the table proves
                    if tb_bound == BOUND_LOWER:
                        tb_floor = tb_value
                        alpha = max(alpha, tb_value)
                    else:
                        tb_ceiling = tb_value

    # Step 4c. Static evaluation: quiescence stands pat on it and the pruning steps
    # measure their margins from it.  In check there is none.  The TT keeps the raw
    # evaluation; what earlier searches learnt of its error for this side and pawn
    # placement (correction history, Step 19b) is added, at the horizon too (where
    # standing pat on the raw evaluation played some 16 Elo weaker).  An entry may hold
    # none (EVAL_NONE: a tablebase result, a node in check); then we evaluate.
    static_eval = -INFINITE
    raw_eval = EVAL_NONE
    correction_slot = U64_ZERO  # pawn_slot is a uint64: an int 0 would unify to float64
    if not checked and (depth > 0 or config[CFG_QUIESCENCE]):
        raw_eval = tt_eval if tt_hit and tt_eval != EVAL_NONE else evaluate(pos, tab, ev)
        correction_slot = pawn_slot(pos)
        static_eval = raw_eval + sd.correction[side, correction_slot] // CORRECTION_GRAIN

    # Step 5. Quiescence search at the horizon: captures (every evasion in check) and,
    # on its first ply only, quiet checks that do not lose material: many combinations
    # end in a quiet check that the static evaluation cannot see coming.
    if depth <= 0:
        if not config[CFG_QUIESCENCE]:
            return evaluate(pos, tab, ev)
        if checked:
            best = -INFINITE
            stand_pat = -INFINITE
        else:
            stand_pat = static_eval
            best = stand_pat
            if stand_pat >= beta:
                return stand_pat
            if stand_pat > alpha:
                alpha = stand_pat
        count = generate_moves(pos, tab, sd.moves[ply], LIST_START, GEN_NOISY)
        if count == 0:
            # Mated; or no capture at all, and then no quiet check is looked for either
            # (the rule as measured: WAC and games in the README).
            return -MATE + ply if checked else best
        score_captures(pos, sd.moves, sd.scores, ply, count)
        # The first quiescence ply has depth 0; deeper ones count down from there.  (A
        # null move's search may enter quiescence below 0: no quiet checks there.)
        quiet_checks_next = not checked and depth == 0
        ck_king, ck_pawn, ck_knight, ck_bishop, ck_rook, ck_discoverers = (
            0, U64_ZERO, U64_ZERO, U64_ZERO, U64_ZERO, U64_ZERO)
        best_move = 0
        i = 0
        quiet_stage = False
        while True:
            if i == count:
                if not quiet_checks_next:
                    break
                # The captures are done: now the quiet moves, of which only checks are searched.
                quiet_checks_next = False
                quiet_stage = True
                ck_king, ck_pawn, ck_knight, ck_bishop, ck_rook, ck_discoverers = check_squares(pos, tab)
                count = generate_moves(pos, tab, sd.moves[ply], count, GEN_QUIET)
                continue
            if quiet_stage:
                move = sd.moves[ply, i]
            else:
                move = pick_next(sd.moves, sd.scores, ply, i, count)
            i += 1
            if not checked:
                if quiet_stage:
                    if not gives_check_fast(pos, tab, move, ck_king, ck_pawn, ck_knight, ck_bishop, ck_rook,
                                            ck_discoverers):
                        continue
                else:
                    if move_kind(move) == PROMOTION and move_promo_type(move) != QUEEN:
                        continue
                    # Delta pruning: even winning the piece for free cannot reach alpha.
                    gain = SEE_VALUE[captured_type(pos, move)]
                    if move_kind(move) == PROMOTION:
                        gain += SEE_VALUE[QUEEN] - SEE_VALUE[PAWN]
                    if stand_pat + gain + params[P_DELTA_MARGIN] <= alpha:
                        continue
                # SEE pruning: moves that lose material are not worth a look.
                if not see_ge(pos, tab, move, params[P_QS_SEE_THRESHOLD]):
                    continue
            tt_prefetch(tt, key_after(pos, tab, move))  # the child probes it first thing
            make_move(pos, tab, move)
            # depth - 1 (<= -1) is passed on, not a literal: a literal argument would type a
            # second overload of this recursive kernel, which numba's cache cannot reload.
            score = -search(pos, tab, tt, sd, control, ev, tb_packed, scratch, -beta, -alpha, depth - 1, ply + 1)
            unmake_move(pos, tab)
            if control[K_STOP] != 0:
                return 0
            if score > best:
                best = score
                if score > alpha:
                    best_move = move
                    if score >= beta:
                        break
                    alpha = score
        if best == -INFINITE:
            best = -MATE + ply  # in check, and every evasion was ... none: mated
        bound = BOUND_LOWER if best >= beta else BOUND_UPPER
        tt_store(tt, key, best_move, score_to_tt(best, ply), raw_eval, 0, bound)
        return best

    # Step 6. Whether the static evaluation improved on our previous move.
    if checked:
        sd.static_eval[ply] = -INFINITE
        improving = False
    else:
        sd.static_eval[ply] = static_eval
        # No evaluation two plies back (near the root): no evidence of getting worse.  A node
        # in check two plies back has no evaluation either (-INFINITE, which everything
        # beats): compare with four plies back instead, and claim nothing if that was in check too.
        if ply < 2:
            improving = True
        elif sd.static_eval[ply - 2] != -INFINITE:
            improving = static_eval > sd.static_eval[ply - 2]
        else:
            improving = ply >= 4 and sd.static_eval[ply - 4] != -INFINITE and static_eval > sd.static_eval[ply - 4]
    eval_estimate = static_eval
    if tt_hit and not checked and (
            (tt_bound == BOUND_LOWER and tt_score > static_eval) or (tt_bound == BOUND_UPPER and tt_score < static_eval)
            or tt_bound == BOUND_EXACT):
        eval_estimate = tt_score  # the TT score is a better guess than the static eval

    # Step 7. Reverse futility pruning: far above beta at low depth, assume a cutoff.
    if (config[CFG_REVERSE_FUTILITY] and not pv_node and not checked and excluded == 0
            and depth <= params[P_RFP_MAX_DEPTH]
            and eval_estimate - params[P_RFP_MARGIN] * (depth - (RFP_IMPROVING_DEPTH if improving else 0)) >= beta
            and abs(beta) < MATE_IN_MAX_PLY):
        return eval_estimate

    # Step 8. Null-move pruning: if passing still beats beta, a real move surely does.
    previous_null = pos.state[ST_PLY] > 0 and pos.history[pos.state[ST_PLY] - 1, H_MOVE] == 0
    if (config[CFG_NULL_MOVE] and not pv_node and not checked and excluded == 0 and not previous_null
            and depth >= params[P_NMP_MIN_DEPTH] and eval_estimate >= beta and abs(beta) < MATE_IN_MAX_PLY
            and ply >= sd.nmp_min_ply[0] and has_non_pawn_material(pos, side)):
        r = (params[P_NMP_BASE_REDUCTION] + depth // params[P_NMP_DEPTH_DIVISOR]
             + min((eval_estimate - beta) // params[P_NMP_EVAL_DIVISOR], params[P_NMP_EVAL_MAX]))
        sd.path_moves[ply] = 0
        make_null_move(pos, tab)
        tt_prefetch(tt, pos.keys[pos.state[ST_PLY]])
        score = -search(pos, tab, tt, sd, control, ev, tb_packed, scratch, -beta, -beta + 1, depth - 1 - r, ply + 1)
        unmake_null_move(pos, tab)
        if control[K_STOP] != 0:
            return 0
        if score >= beta:
            if score >= MATE_IN_MAX_PLY:
                score = beta  # do not trust mate scores from a null-move search
            if depth < NMP_VERIFY_DEPTH or sd.nmp_min_ply[0] > 0:
                return score
            # Verification search (zugzwang guard): the same node without null moves near here.
            sd.nmp_min_ply[0] = ply + NMP_VERIFY_GUARD * (depth - r) // NMP_VERIFY_GUARD_DIVISOR
            verified = search(pos, tab, tt, sd, control, ev, tb_packed, scratch, beta - 1, beta, depth - r, ply)
            sd.nmp_min_ply[0] = 0
            if verified >= beta:
                return score
        sd.pv_len[ply] = 0

    # Step 9. Internal iterative reduction: without a TT move this node was never searched well.
    if config[CFG_IIR] and tt_move == 0 and depth >= params[P_IIR_MIN_DEPTH] and excluded == 0:
        depth -= IIR_REDUCTION

    # Step 10. Move ordering in stages (``moveorder.next_move``): the TT move before any
    # move is generated, then captures and promotions (every evasion in check), and the
    # quiet moves only once no winning capture is left.  The root's list comes from
    # Python, already ordered.
    # Killers are shared by all nodes of a ply.  The grandchildren's were learnt under
    # another node of this ply: they start afresh for this node's subtree.
    sd.killers[ply + 2, 0] = 0
    sd.killers[ply + 2, 1] = 0
    # The continuation rows: the moves one and two plies back (row 0 before the root or after a null move).
    previous1 = sd.path_moves[ply - 1] if ply >= 1 else 0
    previous2 = sd.path_moves[ply - 2] if ply >= 2 else 0
    picker = sd.picker[picker_row(ply, excluded)]
    if root:
        first = sd.root_info[ROOT_PV_START]
        start_root_picker(sd, picker, first, sd.root_info[ROOT_COUNT] - first)
        tt_move_first = False
    else:
        tt_move_first = start_picker(pos, tab, sd, ply, picker, tt_move, previous1, previous2, checked,
                                     config[CFG_COUNTER_MOVE] != 0)

    # Step 11. The move loop: PVS with late-move reductions and shallow-depth pruning.
    # Shallow-depth pruning (Step 12) works below the root, once a line that is not mated
    # is in hand.  Its late-move and futility rules look at the node, not at the move:
    # how many moves were searched, and whether the static evaluation plus a margin
    # still reaches alpha.  So they are worked out here, once.
    prune_moves = config[CFG_MOVE_PRUNING] != 0 and not root
    late_move_count = (params[P_LMP_BASE] + depth * depth) // (1 if improving else LMP_NOT_IMPROVING_DIVISOR)
    late_move_pruning = depth <= params[P_LMP_MAX_DEPTH]
    futility_pruning = depth <= params[P_FUTILITY_MAX_DEPTH] and not checked  # in check there is no static eval
    futility_value = static_eval + params[P_FUTILITY_BASE] + params[P_FUTILITY_MARGIN] * depth
    best = -INFINITE
    best_move = 0
    original_alpha = alpha
    moves_searched = 0
    quiets_tried = 0
    skip_quiets = False
    while True:
        # Step 12a. Late-move and futility pruning: after enough moves, or when even a
        # margin on the static evaluation stays below alpha, no quiet move left is worth
        # a search, and the picker is told to skip them all: those not generated yet
        # never are.  Quiet checks go too.  Sparing them searched every one, losing
        # material or not, a ply deeper (the check extension), and kept the picker
        # generating and scoring the quiet moves only to ask each whether it checks.
        # A mate that ends in a quiet check is still seen where it matters most: on
        # quiescence's first ply, and in nodes that search their quiet moves.
        if (prune_moves and not skip_quiets and best > -MATE_IN_MAX_PLY
                and ((late_move_pruning and moves_searched >= late_move_count)
                     or (futility_pruning and futility_value <= alpha))):
            skip_quiets = True
            skip_quiet_moves(pos, sd, ply, picker)
        move = next_move(pos, tab, sd, ply, picker)
        if move == 0:
            break
        slot = picked_slot(picker)
        if move == excluded:
            continue
        quiet = is_quiet(pos, move)

        # Step 12b. SEE pruning: at low depth a move that loses more than a margin per
        # ply of depth is not worth a search, whether it checks or not.
        if (prune_moves and best > -MATE_IN_MAX_PLY and depth <= params[P_SEE_PRUNE_MAX_DEPTH]
                and not see_ge(pos, tab, move,
                               -(params[P_SEE_QUIET_MARGIN] if quiet else params[P_SEE_CAPTURE_MARGIN]) * depth)):
            continue

        # The child probes its bucket first thing: ask for it before making the move.
        tt_prefetch(tt, key_after(pos, tab, move))

        # Step 13. Singular extension: is the TT move much better than every other move?
        extension = 0
        if (move == tt_move and not root and excluded == 0 and depth >= params[P_SINGULAR_MIN_DEPTH]
                and config[CFG_EXTENSIONS] and config[CFG_SINGULAR]
                and tt_depth >= depth - SINGULAR_TT_DEPTH_MARGIN and tt_bound != BOUND_UPPER
                and abs(tt_score) < MATE_IN_MAX_PLY):
            singular_beta = tt_score - params[P_SINGULAR_MARGIN_X10] * depth // 10
            sd.excluded[ply] = move
            score = search(pos, tab, tt, sd, control, ev, tb_packed, scratch, singular_beta - 1, singular_beta,
                           (depth - 1) // SINGULAR_DEPTH_DIVISOR, ply)
            sd.excluded[ply] = 0
            if control[K_STOP] != 0:
                return 0
            if score < singular_beta:
                extension = SINGULAR_EXTENSION
            elif singular_beta >= beta:
                return singular_beta  # multi-cut: several moves beat beta
            elif tt_score >= beta:
                # Negative extension: another move nearly matches the TT move, whose score
                # already beats beta; the cutoff does not hang on it, so it is searched a ply less.
                extension = SINGULAR_NEGATIVE_EXTENSION
        piece_to = piece_to_index(pos, move)
        sd.path_moves[ply] = piece_to
        nodes_before = counters[C_NODES]
        make_move(pos, tab, move)
        move_checks = in_check(pos, tab)

        # Step 14. Check extension: never let a check disappear over the horizon.
        if config[CFG_EXTENSIONS] and move_checks and extension == 0:
            extension = CHECK_EXTENSION
        new_depth = depth - 1 + extension

        # Step 15. Principal variation search with late-move reductions.
        if moves_searched == 0:
            score = -search(pos, tab, tt, sd, control, ev, tb_packed, scratch, -beta, -alpha, new_depth, ply + 1)
        else:
            reduction = 0
            if (config[CFG_REDUCTIONS] and depth >= LMR_MIN_DEPTH and moves_searched >= LMR_MIN_MOVES
                    and (quiet or sd.scores[ply, slot] < 0)):
                reduction = sd.reductions[min(depth, LMR_TABLE_SIZE - 1), min(moves_searched, LMR_TABLE_SIZE - 1)]
                if pv_node:
                    reduction -= LMR_PV_NODE
                if not improving:
                    reduction += LMR_NOT_IMPROVING
                if move_checks:
                    reduction -= LMR_GIVES_CHECK
                if quiet:
                    # Floor division on purpose: any bad history reduces one ply more (rounding
                    # towards zero instead lost 23 Elo in a test on 2026-11-28).
                    reduction -= quiet_history(sd.history, sd.continuation, side, move, piece_to, previous1,
                                               previous2) // params[P_LMR_HISTORY_DIVISOR]
                if reduction < 0:
                    reduction = 0
                if reduction > new_depth - 1:
                    reduction = max(new_depth - 1, 0)
            score = -search(pos, tab, tt, sd, control, ev, tb_packed, scratch, -alpha - 1, -alpha,
                            new_depth - reduction, ply + 1)
            if score > alpha and reduction > 0:
                score = -search(pos, tab, tt, sd, control, ev, tb_packed, scratch, -alpha - 1, -alpha,
                                new_depth, ply + 1)
            if score > alpha and score < beta:
                score = -search(pos, tab, tt, sd, control, ev, tb_packed, scratch, -beta, -alpha, new_depth, ply + 1)
        unmake_move(pos, tab)
        if control[K_STOP] != 0:
            return 0
        moves_searched += 1
        if quiet and quiets_tried < QUIETS_MAX:
            sd.quiets[ply, quiets_tried] = move
            quiets_tried += 1

        if root:
            sd.root_scores[sd.root_info[ROOT_PV_START] + slot] = score if (moves_searched == 1 or score > alpha) \
                else -INFINITE
            # The time manager reads how much of the effort went to the move that stays best.
            sd.root_nodes[sd.root_info[ROOT_PV_START] + slot] += counters[C_NODES] - nodes_before

        # Step 16. Keep the best move; raise alpha; cut off at beta.
        if score > best:
            best = score
            if score > alpha:
                best_move = move
                sd.pv[ply, 0] = move
                length = sd.pv_len[ply + 1]
                for j in range(length):
                    sd.pv[ply, j + 1] = sd.pv[ply + 1, j]
                sd.pv_len[ply] = length + 1
                if score >= beta:
                    # (the root's first move is the last iteration's best: its TT move)
                    counters[cutoff_slot(depth, tt_move_first or root, moves_searched == 1)] += 1
                    break
                alpha = score

    # Step 17. No move searched: in a singular search the excluded TT move is the only
    # legal move (the search fails low); anywhere else there is none: mate or stalemate.
    if moves_searched == 0:
        if excluded != 0:
            return alpha
        return -MATE + ply if checked else DRAW

    if pv_node:
        best = min(max(best, tb_floor), tb_ceiling)

    # Step 18. Learn from a cutoff: killers, countermove and history for quiet moves.
    if best >= beta and best_move != 0 and is_quiet(pos, best_move):
        if sd.killers[ply, 0] != best_move:
            sd.killers[ply, 1] = sd.killers[ply, 0]
            sd.killers[ply, 0] = best_move
        if pos.state[ST_PLY] > 0:
            previous = pos.history[pos.state[ST_PLY] - 1, H_MOVE]
            if previous != 0:
                sd.counter_moves[pos.board[move_to(previous)], move_to(previous)] = best_move
        bonus = min(params[P_HISTORY_BONUS_SLOPE] * depth - params[P_HISTORY_BONUS_OFFSET], params[P_HISTORY_BONUS_MAX])
        for j in range(quiets_tried):
            tried = sd.quiets[ply, j]
            update_quiet_history(sd, side, tried, piece_to_index(pos, tried), previous1, previous2,
                                 bonus if tried == best_move else -bonus)

    # Step 19. Store the result in the transposition table.
    if excluded == 0:
        if best >= beta:
            bound = BOUND_LOWER
        elif best > original_alpha:
            bound = BOUND_EXACT
        elif best == tb_floor:
            bound = BOUND_LOWER  # the table's win, which no searched line improved on
        else:
            bound = BOUND_UPPER
        tt_store(tt, key, best_move, score_to_tt(best, ply), raw_eval, depth, bound)

        # Step 19b. Correction history: where a quiet search result says the static
        # evaluation of this pawn structure is off, remember by how much.  Only results
        # that bound the evaluation's error from the right side count.
        if (not checked and (best_move == 0 or is_quiet(pos, best_move))
                and abs(best) < TB_WIN - MAX_PLY and best != tb_floor
                and not (bound == BOUND_LOWER and best <= static_eval)
                and not (bound == BOUND_UPPER and best >= static_eval)):
            limit = params[P_CORRECTION_LIMIT]
            error = max(-limit, min(best - raw_eval, limit)) * CORRECTION_GRAIN
            weight = min(depth + CORRECTION_WEIGHT_OFFSET, params[P_CORRECTION_MAX_WEIGHT])
            entry = sd.correction[side, correction_slot]
            sd.correction[side, correction_slot] = ((entry * (CORRECTION_WEIGHT_SCALE - weight) + error * weight)
                                                    // CORRECTION_WEIGHT_SCALE)
    return best


@hot_njit
def tt_move_of(tt, key):
    """Best move the TT holds for ``key`` (0 if none): used to extend short PVs."""
    data = tt_probe(tt, key)
    if data == U64_ZERO:
        return 0
    return entry_move(data)
