"""Move ordering: static exchange evaluation, move scores, and picking the next move.

Alpha-beta prunes most when the best move comes first, so moves are tried in this
order (highest score first):

    TT move                            SCORE_TT
    good captures and queen promotions SCORE_GOOD_CAPTURE + MVV-LVA  (SEE >= 0)
    killer 1, killer 2, countermove    SCORE_KILLER1 / SCORE_KILLER2 / SCORE_COUNTER
    quiet moves                        butterfly plus continuation history (each |h| < HISTORY_MAX)
    losing captures                    SCORE_BAD_CAPTURE + MVV-LVA   (SEE < 0)
    under-promotions                   SCORE_UNDERPROMOTION

The search takes its moves one at a time from a move picker (``next_move``), which
generates them in stages: the TT move, before any move is generated; the captures and
promotions (``GEN_NOISY``; in check, every evasion); and only once no winning capture
is left, the quiet moves (``GEN_QUIET``), appended to the same row and scored then.  So
a node where the TT move or a capture cuts off never generates or scores its quiet
moves.  Nor does a node whose search has given up on its quiet moves (late-move or
futility pruning, ``skip_quiet_moves``) before the picker reaches them; if they are in
the row already, the ones not yet picked are dropped from it, so that they are not
picked only to be thrown away.  A picker's state is one row of ``SearchData.picker``
(``P_*`` columns).

MVV-LVA (most valuable victim, least valuable attacker) is ``64 * victim - attacker``
on piece types.  ``pick_next`` does one step of selection sort, so a cutoff after the
first few moves never pays for sorting the rest.  Each move's score is kept as a key,
``score << INDEX_BITS`` plus its reversed place in the row (``order_key``), in a row
of ``scores`` beside the row of ``moves``: the highest key is then the highest score,
ties going to the earliest place, and a pick is one plain maximum.  A swap writes the
two moves' new places into their keys.
"""

from __future__ import annotations

import numpy as np

from engine.bitboards import bishop_attacks, rook_attacks, square_bb
from engine.defs import BISHOP, H_MOVE, KNIGHT, MAX_MOVES, PAWN, QUEEN, ROOK, ST_PLY, ST_SIDE, U64_ZERO
from engine.intrinsics import lsb
from engine.jit import hot_njit, njit
from engine.move import CASTLING, EN_PASSANT, PROMOTION, move_from, move_kind, move_promo_type, move_to
from engine.movegen import GEN_NOISY, GEN_QUIET, LIST_START, generate_moves, is_legal_move
from engine.position import attackers_to

SEE_VALUE = np.array([0, 100, 320, 330, 500, 950, 20000, 0], dtype=np.int64)  # by piece type

# Scores stay within +-2**22, so that a key (score << INDEX_BITS) fits in int32.
SCORE_TT = 1 << 22
SCORE_GOOD_CAPTURE = 1 << 20
SCORE_KILLER1 = (1 << 19) + 2
SCORE_KILLER2 = (1 << 19) + 1
SCORE_COUNTER = 1 << 19
SCORE_BAD_CAPTURE = -(1 << 20)
SCORE_UNDERPROMOTION = -(1 << 21)
HISTORY_MAX = 16384
INDEX_BITS = 8  # a key keeps its move's reversed place in the row in its low bits
PLACE_MASK = (1 << INDEX_BITS) - 1
assert MAX_MOVES == 1 << INDEX_BITS
assert 3 * HISTORY_MAX < SCORE_COUNTER and SCORE_TT << INDEX_BITS < 1 << 31

# The move picker's stages, in the order it goes through them
STAGE_TT_MOVE, STAGE_NOISY, STAGE_ALL_MOVES = 0, 1, 2
# Layout of a picker's state, one int32 row of SearchData.picker (``picker_row``)
P_STAGE, P_INDEX, P_COUNT = 0, 1, 2       # stage, next place of the move row to pick, moves in the row
P_TT_MOVE, P_TT_FIRST = 3, 4              # the TT move; 1 if it is legal (tried first, skipped later)
P_KILLER1, P_KILLER2, P_COUNTER = 5, 6, 7  # ordering moves: killers as the node found them, countermove
P_PREVIOUS1, P_PREVIOUS2 = 8, 9           # continuation-history rows (the moves one and two plies back)
P_CHECKED, P_USE_COUNTER = 10, 11         # 1 if in check (evasions only); 1 if the countermove is scored
P_SKIP_QUIETS = 12                        # 1 once the search wants no more quiet moves (``skip_quiet_moves``)
PICKER_SIZE = 13


@njit(inline="always")
def order_key(score, index):
    """Key of a move with ``score`` at place ``index`` of its row: higher score first, then earlier place."""
    return (np.int64(score) << INDEX_BITS) | (PLACE_MASK - np.int64(index))


@njit(inline="always")
def key_score(key):
    """The score a key was made from."""
    return np.int64(key) >> INDEX_BITS


@njit(inline="always")
def is_capture(pos, move):
    """True for captures and en passant (castling takes its own rook, which is no capture)."""
    kind = move_kind(move)
    if kind == EN_PASSANT:
        return True
    return kind != CASTLING and pos.board[move_to(move)] != 0


@njit(inline="always")
def is_quiet(pos, move):
    """Neither a capture nor a promotion: the moves that killers, countermoves and history learn from."""
    return not is_capture(pos, move) and move_kind(move) != PROMOTION


@njit(inline="always")
def captured_type(pos, move):
    """Piece type a move captures (PAWN for en passant, 0 for none)."""
    kind = move_kind(move)
    if kind == EN_PASSANT:
        return PAWN
    if kind == CASTLING:
        return 0
    return pos.board[move_to(move)] & 7


@hot_njit(inline="always")
def see_ge(pos, tab, move, threshold):
    """Static exchange evaluation: does ``move`` win at least ``threshold`` centipawns?

    Inlined where it is called: a call would pass every array of ``pos`` and ``tab``
    (94 machine words), which cost about as much as the exchange itself.

    Plays out the capture sequence on the target square, each side recapturing
    with its least valuable attacker and stopping when continuing would lose;
    sliders behind a capturer join in (x-rays).  Pins are ignored.
    """
    kind = move_kind(move)
    if kind == CASTLING or kind == PROMOTION:
        return 0 >= threshold
    frm = move_from(move)
    to = move_to(move)
    swap = SEE_VALUE[captured_type(pos, move)] - threshold
    if swap < 0:
        return False
    swap = SEE_VALUE[pos.board[frm] & 7] - swap
    if swap <= 0:
        return True
    occ = (pos.colors[0] | pos.colors[1]) ^ square_bb(frm) ^ square_bb(to)
    if kind == EN_PASSANT:
        occ ^= square_bb(to ^ 8)
    p = pos.pieces
    bishops = p[BISHOP] | p[QUEEN]
    rooks = p[ROOK] | p[QUEEN]
    attackers = attackers_to(pos, tab, to, occ) & occ
    side = pos.state[ST_SIDE]
    result = 1
    while True:
        side ^= 1
        attackers &= occ
        mine = attackers & pos.colors[side]
        if mine == U64_ZERO:
            break
        result ^= 1
        if mine & p[PAWN]:
            swap = SEE_VALUE[PAWN] - swap
            if swap < result:
                break
            occ ^= square_bb(lsb(mine & p[PAWN]))
            attackers |= bishop_attacks(tab, to, occ) & bishops
        elif mine & p[KNIGHT]:
            swap = SEE_VALUE[KNIGHT] - swap
            if swap < result:
                break
            occ ^= square_bb(lsb(mine & p[KNIGHT]))
        elif mine & p[BISHOP]:
            swap = SEE_VALUE[BISHOP] - swap
            if swap < result:
                break
            occ ^= square_bb(lsb(mine & p[BISHOP]))
            attackers |= bishop_attacks(tab, to, occ) & bishops
        elif mine & p[ROOK]:
            swap = SEE_VALUE[ROOK] - swap
            if swap < result:
                break
            occ ^= square_bb(lsb(mine & p[ROOK]))
            attackers |= rook_attacks(tab, to, occ) & rooks
        elif mine & p[QUEEN]:
            swap = SEE_VALUE[QUEEN] - swap
            if swap < result:
                break
            occ ^= square_bb(lsb(mine & p[QUEEN]))
            attackers |= (bishop_attacks(tab, to, occ) & bishops) | (rook_attacks(tab, to, occ) & rooks)
        else:  # only the king is left: it may capture only if nothing defends
            if attackers & ~pos.colors[side]:
                return result == 0
            return result == 1
    return result == 1


@njit(inline="always")
def piece_to_index(pos, move):
    """Continuation-history index of a move about to be made: its piece code << 6 | target square."""
    return (np.int32(pos.board[move_from(move)]) << 6) | move_to(move)


@njit(inline="always")
def quiet_history(history, continuation, side, move, piece_to, previous1, previous2):
    """History score of a quiet move: its butterfly entry for ``side`` plus its continuation
    entries after the moves one and two plies back (rows ``previous1``, ``previous2``)."""
    return (history[side, move & 4095] + np.int32(continuation[previous1, piece_to])
            + np.int32(continuation[previous2, piece_to]))


@njit(inline="always")
def history_gravity(h, bonus):
    """A history entry ``h`` after ``bonus``: towards +-HISTORY_MAX, slower the closer it already is."""
    return h + bonus - h * abs(bonus) // HISTORY_MAX


@hot_njit(inline="always")
def update_quiet_history(sd, side, move, piece_to, previous1, previous2, bonus):
    """The butterfly entry and the two continuation entries (after the moves one and two
    plies back) of a quiet move learn the same bonus (``history_gravity``).  Row 0 stands
    for no move (before the root, after a null move) and learns nothing, so it reads 0."""
    index = move & 4095
    sd.history[side, index] = history_gravity(sd.history[side, index], bonus)
    if previous1 != 0:
        sd.continuation[previous1, piece_to] = history_gravity(np.int32(sd.continuation[previous1, piece_to]), bonus)
    if previous2 != 0:
        sd.continuation[previous2, piece_to] = history_gravity(np.int32(sd.continuation[previous2, piece_to]), bonus)


@njit(inline="always")
def mvv_lva(pos, move):
    """Most valuable victim first, least valuable attacker breaking ties."""
    victim = captured_type(pos, move)
    if move_kind(move) == PROMOTION:
        victim += move_promo_type(move)
    return 64 * victim - (pos.board[move_from(move)] & 7)


@hot_njit
def score_moves(pos, tab, moves, scores, ply_row, start, count, tt_move, killer1, killer2, counter, history, side,
                continuation, previous1, previous2):
    """Fill ``scores[ply_row, start:count]`` with the keys of ``moves[ply_row, start:count]``.

    The keys order the moves as the module docstring says."""
    for i in range(start, count):
        move = moves[ply_row, i]
        kind = move_kind(move)
        if move == tt_move:
            score = SCORE_TT
        elif kind == PROMOTION and move_promo_type(move) != QUEEN:
            score = SCORE_UNDERPROMOTION + move_promo_type(move)
        elif is_capture(pos, move) or kind == PROMOTION:
            victim = captured_type(pos, move)
            attacker = pos.board[move_from(move)] & 7
            good = SEE_VALUE[victim] >= SEE_VALUE[attacker] or see_ge(pos, tab, move, 0)
            score = (SCORE_GOOD_CAPTURE if good else SCORE_BAD_CAPTURE) + mvv_lva(pos, move)
        elif move == killer1:
            score = SCORE_KILLER1
        elif move == killer2:
            score = SCORE_KILLER2
        elif move == counter:
            score = SCORE_COUNTER
        else:
            score = quiet_history(history, continuation, side, move, piece_to_index(pos, move), previous1, previous2)
        scores[ply_row, i] = order_key(score, i)


@hot_njit
def score_captures(pos, moves, scores, ply_row, count):
    """Keys for quiescence: MVV-LVA (evasions and quiet moves score 0)."""
    for i in range(count):
        move = moves[ply_row, i]
        kind = move_kind(move)
        if kind == PROMOTION and move_promo_type(move) != QUEEN:
            score = -1000
        elif is_capture(pos, move) or kind == PROMOTION:
            score = 1000 + mvv_lva(pos, move)
        else:
            score = 0
        scores[ply_row, i] = order_key(score, i)


@njit(inline="always")
def pick_next(moves, scores, ply_row, index, count):
    """Swap the move with the highest key in ``index:count`` into ``index`` and return it.

    The keys hold each move's current place, so the highest key is the best score, ties
    going to the earliest place, and the scan is a plain maximum over int32, which the
    compiler vectorises (four or eight keys per instruction); the indices are unsigned,
    which spares numba's negative-index fix-up.  Selection costs most at nodes where
    every move is tried, since each pick scans all the moves left: ``engine.tools.profile``
    over ``bench`` put a sixth of the search's samples in a scalar scan, about 14% in a
    vectorised one that packed the places at each step, and 8.5% in this one.
    """
    row = np.uint64(ply_row)
    start = np.uint64(index)
    key = scores[row, start]
    for i in range(start + np.uint64(1), np.uint64(count)):
        key = max(key, scores[row, i])
    best = np.uint64(PLACE_MASK - (key & PLACE_MASK))
    if best != start:
        move = moves[row, best]
        moves[row, best] = moves[row, start]
        moves[row, start] = move
        # The move displaced from ``start`` takes the picked move's place: both keys learn their new places.
        scores[row, best] = order_key(key_score(scores[row, start]), best)
        scores[row, start] = order_key(key_score(key), start)
    return moves[row, start]


# ---------------------------------------------------------------------------
# The move picker: a node's moves one at a time, generated in stages
# ---------------------------------------------------------------------------

@njit(inline="always")
def picker_row(ply, excluded):
    """Row of ``SearchData.picker`` for a node at ``ply``.  The singular search of a TT move
    (``excluded`` set) runs at its node's ply while that node is still picking its moves,
    so it keeps its state in a row of its own."""
    return 2 * ply + (1 if excluded != 0 else 0)


@hot_njit(inline="always")
def start_picker(pos, tab, sd, ply, picker, tt_move, previous1, previous2, checked, use_counter):
    """Set up ``picker`` for a node at ``ply``: the TT move comes first, then the staged moves.

    Returns whether the TT move is tried first: the word may come from a position whose
    key collided, so its move is played only if legal.  The killers are taken as they
    are now (a singular search at this ply may change them before they are scored).
    """
    tt_first = tt_move != 0 and is_legal_move(pos, tab, tt_move)
    picker[P_STAGE] = STAGE_TT_MOVE
    picker[P_INDEX] = 0
    picker[P_COUNT] = 1 if tt_first else 0
    picker[P_TT_MOVE] = tt_move
    picker[P_TT_FIRST] = 1 if tt_first else 0
    picker[P_KILLER1] = sd.killers[ply, 0]
    picker[P_KILLER2] = sd.killers[ply, 1]
    picker[P_COUNTER] = 0
    picker[P_PREVIOUS1] = previous1
    picker[P_PREVIOUS2] = previous2
    picker[P_CHECKED] = 1 if checked else 0
    picker[P_USE_COUNTER] = 1 if use_counter else 0
    picker[P_SKIP_QUIETS] = 0
    return tt_first


@njit(inline="always")
def start_root_picker(sd, picker, first, count):
    """Set up ``picker`` for the root: ``count`` moves of ``sd.root_moves`` from ``first``, in
    the driver's order (best first), copied into row 0; nothing is generated."""
    for i in range(count):
        sd.moves[0, i] = sd.root_moves[first + i]
        sd.scores[0, i] = order_key(MAX_MOVES - i, i)  # keep the driver's order
    picker[P_STAGE] = STAGE_ALL_MOVES
    picker[P_INDEX] = 0
    picker[P_COUNT] = count
    picker[P_TT_MOVE] = 0
    picker[P_TT_FIRST] = 0
    picker[P_SKIP_QUIETS] = 0


@hot_njit(inline="always")
def _score_new_moves(pos, tab, sd, ply, picker, start, end):
    """Keys for the moves ``start:end`` of row ``ply``, with the picker's ordering moves."""
    score_moves(pos, tab, sd.moves, sd.scores, ply, start, end, picker[P_TT_MOVE], picker[P_KILLER1],
                picker[P_KILLER2], picker[P_COUNTER], sd.history, pos.state[ST_SIDE], sd.continuation,
                picker[P_PREVIOUS1], picker[P_PREVIOUS2])


@hot_njit(inline="always")
def _generate_noisy(pos, tab, sd, ply, picker):
    """Stage 2: the captures and promotions (in check every evasion, and no quiet stage), scored."""
    previous = pos.history[pos.state[ST_PLY] - 1, H_MOVE] if pos.state[ST_PLY] > 0 else 0
    if previous != 0 and picker[P_USE_COUNTER] != 0:
        picker[P_COUNTER] = sd.counter_moves[pos.board[move_to(previous)], move_to(previous)]
    count = generate_moves(pos, tab, sd.moves[ply], LIST_START, GEN_NOISY)
    picker[P_STAGE] = STAGE_ALL_MOVES if picker[P_CHECKED] != 0 else STAGE_NOISY
    picker[P_INDEX] = 0
    picker[P_COUNT] = count
    _score_new_moves(pos, tab, sd, ply, picker, LIST_START, count)
    if picker[P_STAGE] == STAGE_ALL_MOVES and picker[P_SKIP_QUIETS] != 0:
        _drop_quiet_moves(pos, sd, ply, picker)  # quiet evasions, when the search wants none


@hot_njit(inline="always")
def _add_quiet_moves(pos, tab, sd, ply, picker):
    """Stage 3: the quiet moves appended to the row after its noisy ones, scored; none
    at all once the search has given up on them (``skip_quiet_moves``)."""
    picker[P_STAGE] = STAGE_ALL_MOVES
    if picker[P_SKIP_QUIETS] != 0:
        return
    count = np.int64(picker[P_COUNT])  # an int64 start, as everywhere (see movegen.LIST_START)
    end = generate_moves(pos, tab, sd.moves[ply], count, GEN_QUIET)
    _score_new_moves(pos, tab, sd, ply, picker, count, end)
    picker[P_COUNT] = end


@hot_njit(inline="always")
def _drop_quiet_moves(pos, sd, ply, picker):
    """Remove the quiet moves not yet picked from row ``ply``; the others keep their order."""
    kept = np.int64(picker[P_INDEX])
    for i in range(picker[P_INDEX], picker[P_COUNT]):
        move = sd.moves[ply, i]
        if not is_quiet(pos, move):
            sd.moves[ply, kept] = move
            sd.scores[ply, kept] = order_key(key_score(sd.scores[ply, i]), kept)  # its key learns its new place
            kept += 1
    picker[P_COUNT] = kept


@hot_njit(inline="always")
def skip_quiet_moves(pos, sd, ply, picker):
    """From now on ``next_move`` returns no quiet move: the search has given up on them.

    Quiet moves not generated yet never will be; those already in the row and not yet
    picked are dropped from it (once, rather than scanned at every later pick).  The
    losing captures and under-promotions still come.
    """
    picker[P_SKIP_QUIETS] = 1
    if picker[P_STAGE] == STAGE_ALL_MOVES:
        _drop_quiet_moves(pos, sd, ply, picker)


@hot_njit(inline="always")
def next_move(pos, tab, sd, ply, picker):
    """The node's next move, best first (module docstring), or 0 when none is left.

    Each stage is generated when the one before it is used up: the TT move alone, then the
    noisy moves, and the quiet ones as soon as the best noisy move left is a losing capture
    or an under-promotion (those go after the quiet moves), unless the search skips them
    (``skip_quiet_moves``).  ``picked_slot`` is the place in row ``ply`` of the move returned.
    """
    while True:
        stage = picker[P_STAGE]
        index = picker[P_INDEX]
        count = picker[P_COUNT]
        if index == count:
            if stage == STAGE_ALL_MOVES:
                return 0
            if stage == STAGE_TT_MOVE:
                _generate_noisy(pos, tab, sd, ply, picker)
            else:
                _add_quiet_moves(pos, tab, sd, ply, picker)
            continue
        picker[P_INDEX] = index + 1
        if stage == STAGE_TT_MOVE:
            return picker[P_TT_MOVE]
        move = pick_next(sd.moves, sd.scores, ply, index, count)
        if stage == STAGE_NOISY and key_score(sd.scores[ply, index]) < SCORE_GOOD_CAPTURE:
            # Only losing captures and under-promotions are left: the quiet moves go first
            # (unless the search skips them: then nothing was added, and the pick stands).
            _add_quiet_moves(pos, tab, sd, ply, picker)
            if picker[P_COUNT] != count:
                move = pick_next(sd.moves, sd.scores, ply, index, picker[P_COUNT])
        if picker[P_TT_FIRST] != 0 and move == picker[P_TT_MOVE]:
            continue  # tried first already
        return move


@njit(inline="always")
def picked_slot(picker):
    """Place in its row of the move ``next_move`` returned last."""
    return picker[P_INDEX] - 1
