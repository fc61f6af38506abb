"""Legal move generation straight into a caller-owned int32 buffer.

``generate_moves(pos, tab, moves, start, mode)`` writes moves from ``moves[start]``
on and returns the index after the last one.  Modes:

    GEN_ALL     every legal move
    GEN_NOISY   legal captures, en passant and promotions (quiescence); in check,
                every legal evasion, since a quiescence node in check must see them all
    GEN_QUIET   the rest: legal moves that neither capture nor promote, castling
                included; in check none (GEN_NOISY has given every evasion), so
                that GEN_NOISY and then GEN_QUIET together give GEN_ALL's moves
    GEN_COUNT   writes nothing and returns ``start`` + number of legal moves
                (bulk counting at the last ply of perft)

Legality is decided during generation, never by make-and-test:

1. King moves: each destination is tested for attack with the king lifted off
   the board, so it cannot hide behind itself from a slider.
2. Double check: only the king moves.
3. Single check: other pieces may only capture the checker or block
   (``check_mask``).
4. Pins: a pinned piece moves only along the line through its king.
5. En passant is rare and subtle (the rank pin of two pawns), so it is verified
   by recomputing the attackers on the king with both pawns moved.
6. Castling (any king and rook files, for Chess960): the squares the king and rook
   cross must be empty and the king's path unattacked, tested without the
   castling rook so an x-ray behind it is seen.
"""

import numpy as np

from engine.bitboards import (
    between_bb,
    bishop_attacks,
    king_attacks,
    knight_attacks,
    line_bb,
    pawn_attacks,
    rook_attacks,
    square_bb,
)
from engine.defs import (
    BACK_RANKS,
    BISHOP,
    FILE_A,
    FILE_H,
    KING,
    KNIGHT,
    NO_SQUARE,
    PAWN,
    QUEEN,
    RANK_3,
    RANK_6,
    ROOK,
    ST_CASTLING,
    ST_EP,
    ST_PLY,
    ST_SIDE,
    U64_ALL,
    U64_ONE,
    U64_ZERO,
    WHITE,
)
from engine.intrinsics import lsb, popcount
from engine.jit import hot_njit, njit
from engine.move import (
    CASTLE_FLAG,
    CASTLING,
    EN_PASSANT,
    EP_FLAG,
    PROMO_BISHOP,
    PROMO_KNIGHT,
    PROMO_QUEEN,
    PROMO_ROOK,
    PROMO_SHIFT,
    PROMOTION,
    move_from,
    move_kind,
    move_to,
)
from engine.position import attackers_to, castling_squares, is_attacked, line_blockers, make_move, unmake_move

GEN_ALL, GEN_NOISY, GEN_COUNT, GEN_QUIET = 0, 1, 2, 3
# The first slot of a move list, for kernels that call ``generate_moves``.  It is an int64,
# not the literal 0: numba compiles a callee once per distinct literal argument, so a
# literal start would compile the generator again beside the calls with a variable start.
# (The mode stays a literal on purpose: each mode's copy drops the other modes' branches.)
LIST_START = np.int64(0)

_U8 = np.uint64(8)
_U7 = np.uint64(7)
_U9 = np.uint64(9)


@njit(inline="always")
def _add_from(moves, n, frm, targets, count_only):
    """Add one move from ``frm`` to every square of ``targets``."""
    if count_only:
        return n + popcount(targets)
    while targets:
        moves[n] = frm | (lsb(targets) << 6)
        n += 1
        targets &= targets - U64_ONE
    return n


@njit(inline="always")
def _add_pawn_moves(moves, n, targets, delta, count_only):
    """Add a pawn move to every square of ``targets``, coming from ``to - delta``."""
    if count_only:
        return n + popcount(targets)
    while targets:
        to = lsb(targets)
        moves[n] = (to - delta) | (to << 6)
        n += 1
        targets &= targets - U64_ONE
    return n


@njit(inline="always")
def _add_promotions(moves, n, targets, delta, count_only):
    """Add the four promotions for every square of ``targets`` (from ``to - delta``)."""
    if count_only:
        return n + 4 * popcount(targets)
    while targets:
        to = lsb(targets)
        base = (to - delta) | (to << 6)
        moves[n] = base | PROMO_QUEEN
        moves[n + 1] = base | PROMO_KNIGHT
        moves[n + 2] = base | PROMO_ROOK
        moves[n + 3] = base | PROMO_BISHOP
        n += 4
        targets &= targets - U64_ONE
    return n


@njit(inline="always")
def _pawn_pushes_up(pawns, us):
    """Squares one rank ahead of ``pawns`` from ``us``'s point of view."""
    return pawns << _U8 if us == WHITE else pawns >> _U8


@njit(inline="always")
def _pawn_captures_west(pawns, us):
    """Squares a pawn of ``us`` attacks towards the a-file."""
    return (pawns & ~FILE_A) << _U7 if us == WHITE else (pawns & ~FILE_A) >> _U9


@njit(inline="always")
def _pawn_captures_east(pawns, us):
    """Squares a pawn of ``us`` attacks towards the h-file."""
    return (pawns & ~FILE_H) << _U9 if us == WHITE else (pawns & ~FILE_H) >> _U7


@njit(inline="always")
def _en_passant_is_legal(pos, tab, frm, ep, ksq, occ, enemy):
    """True when our pawn on ``frm`` may take en passant on ``ep`` without exposing the king.

    Checked by recomputing the king's attackers with both pawns moved: this catches the
    rank pin of two pawns and a checker that is the pawn being taken.
    """
    captured_bb = square_bb(ep ^ 8)
    after = (occ ^ square_bb(frm) ^ captured_bb) | square_bb(ep)
    return (attackers_to(pos, tab, ksq, after) & enemy & ~captured_bb) == U64_ZERO


@njit(inline="always")
def _castling_is_legal(pos, tab, us, ksq, king_bb, rook_sq, occ):
    """True when castling with the rook on ``rook_sq`` is open and safe (the caller has
    checked the right and that the king is not in check)."""
    them = us ^ 1
    king_to, rook_to = castling_squares(us, ksq, rook_sq)
    rook_bb = square_bb(rook_sq)
    king_path = between_bb(tab, ksq, king_to) | square_bb(king_to)
    rook_path = between_bb(tab, rook_sq, rook_to) | square_bb(rook_to)
    if (king_path | rook_path) & occ & ~king_bb & ~rook_bb:
        return False
    occ_castle = occ ^ king_bb ^ rook_bb
    path = king_path
    while path:
        sq = lsb(path)
        path &= path - U64_ONE
        if is_attacked(pos, tab, sq, them, occ_castle):
            return False
    return True


@hot_njit
def generate_moves(pos, tab, moves, start, mode):
    """Write the legal moves of ``mode`` from ``moves[start]``; return the end index."""
    count_only = mode == GEN_COUNT
    noisy = mode == GEN_NOISY
    quiet = mode == GEN_QUIET
    n = start
    st = pos.state
    us = st[ST_SIDE]
    them = us ^ 1
    pieces = pos.pieces
    own = pos.colors[us]
    enemy = pos.colors[them]
    occ = own | enemy
    king_bb = pieces[KING] & own
    ksq = lsb(king_bb)
    checkers = attackers_to(pos, tab, ksq, occ) & enemy
    in_check = checkers != U64_ZERO
    if in_check:
        if quiet:
            return n  # GEN_NOISY gave every evasion
        noisy = False  # quiescence in check needs every evasion

    # Step 1. King moves, tested with the king lifted off the board.
    king_targets = king_attacks(tab, ksq) & ~own
    if noisy:
        king_targets &= enemy
    elif quiet:
        king_targets &= ~enemy
    occ_without_king = occ ^ king_bb
    while king_targets:
        to = lsb(king_targets)
        king_targets &= king_targets - U64_ONE
        if not is_attacked(pos, tab, to, them, occ_without_king):
            if not count_only:
                moves[n] = ksq | (to << 6)
            n += 1

    # Step 2. Double check: nothing but a king move helps.
    if in_check and (checkers & (checkers - U64_ONE)):
        return n

    # Step 3. Squares other pieces may move to: capture or block a single checker.
    if in_check:
        check_mask = between_bb(tab, ksq, lsb(checkers)) | checkers
    else:
        check_mask = U64_ALL
    if noisy:
        targets = enemy & check_mask
    elif quiet:
        targets = ~occ  # not in check here: no mask
    else:
        targets = ~own & check_mask

    # Step 4. Pinned pieces: own pieces alone between the king and an enemy slider.
    pinned = line_blockers(pos, tab, ksq, enemy, own, occ)
    rook_like = pieces[ROOK] | pieces[QUEEN]
    bishop_like = pieces[BISHOP] | pieces[QUEEN]

    # Step 5. Knights (a pinned knight can never move).
    knights = pieces[KNIGHT] & own & ~pinned
    while knights:
        frm = lsb(knights)
        knights &= knights - U64_ONE
        n = _add_from(moves, n, frm, knight_attacks(tab, frm) & targets, count_only)

    # Step 6. Sliders; a pinned one stays on the line through its king.
    sliders = bishop_like & own
    while sliders:
        frm = lsb(sliders)
        sliders &= sliders - U64_ONE
        attacks = bishop_attacks(tab, frm, occ) & targets
        if pinned & square_bb(frm):
            attacks &= line_bb(tab, ksq, frm)
        n = _add_from(moves, n, frm, attacks, count_only)
    sliders = rook_like & own
    while sliders:
        frm = lsb(sliders)
        sliders &= sliders - U64_ONE
        attacks = rook_attacks(tab, frm, occ) & targets
        if pinned & square_bb(frm):
            attacks &= line_bb(tab, ksq, frm)
        n = _add_from(moves, n, frm, attacks, count_only)

    # Step 7. Pawns: unpinned ones set-wise, pinned ones one by one along their pin line.
    pawns = pieces[PAWN] & own
    empty = ~occ
    up = 8 if us == WHITE else -8
    west = 7 if us == WHITE else -9
    east = 9 if us == WHITE else -7
    double_rank = RANK_3 if us == WHITE else RANK_6
    free_pawns = pawns & ~pinned
    single = _pawn_pushes_up(free_pawns, us) & empty
    double = _pawn_pushes_up(single & double_rank, us) & empty & check_mask
    single &= check_mask
    cap_west = _pawn_captures_west(free_pawns, us) & enemy & check_mask
    cap_east = _pawn_captures_east(free_pawns, us) & enemy & check_mask
    if not quiet:
        n = _add_promotions(moves, n, single & BACK_RANKS, up, count_only)
        n = _add_promotions(moves, n, cap_west & BACK_RANKS, west, count_only)
        n = _add_promotions(moves, n, cap_east & BACK_RANKS, east, count_only)
        n = _add_pawn_moves(moves, n, cap_west & ~BACK_RANKS, west, count_only)
        n = _add_pawn_moves(moves, n, cap_east & ~BACK_RANKS, east, count_only)
    if not noisy:
        n = _add_pawn_moves(moves, n, single & ~BACK_RANKS, up, count_only)
        n = _add_pawn_moves(moves, n, double, up + up, count_only)
    pinned_pawns = pawns & pinned
    if pinned_pawns and not in_check:
        while pinned_pawns:
            frm = lsb(pinned_pawns)
            pinned_pawns &= pinned_pawns - U64_ONE
            bit = square_bb(frm)
            pin_line = line_bb(tab, ksq, frm)
            push1 = _pawn_pushes_up(bit, us) & empty
            push2 = _pawn_pushes_up(push1 & double_rank, us) & empty
            caps = (_pawn_captures_west(bit, us) | _pawn_captures_east(bit, us)) & enemy
            dests = (push1 | push2 | caps) & pin_line
            promos = dests & BACK_RANKS
            if quiet:
                promos = U64_ZERO
            if count_only:
                n += 4 * popcount(promos)
            else:
                while promos:
                    to = lsb(promos)
                    promos &= promos - U64_ONE
                    base = frm | (to << 6)
                    moves[n] = base | PROMO_QUEEN
                    moves[n + 1] = base | PROMO_KNIGHT
                    moves[n + 2] = base | PROMO_ROOK
                    moves[n + 3] = base | PROMO_BISHOP
                    n += 4
            quiet_or_cap = dests & ~BACK_RANKS
            if noisy:
                quiet_or_cap &= caps
            elif quiet:
                quiet_or_cap &= ~caps
            n = _add_from(moves, n, frm, quiet_or_cap, count_only)

    # Step 8. En passant, verified by recomputing the king's attackers.
    ep = st[ST_EP]
    if ep != NO_SQUARE and not quiet:
        capturers = pawn_attacks(tab, them, ep) & pawns
        while capturers:
            frm = lsb(capturers)
            capturers &= capturers - U64_ONE
            if _en_passant_is_legal(pos, tab, frm, ep, ksq, occ, enemy):
                if not count_only:
                    moves[n] = frm | (ep << 6) | EP_FLAG
                n += 1

    # Step 9. Castling (never out of check, never in quiescence).
    if not in_check and not noisy:
        rights = st[ST_CASTLING] >> (2 * us) & 3
        for side in range(2):
            if rights >> side & 1:
                rook_sq = pos.castle_rook[2 * us + side]
                if _castling_is_legal(pos, tab, us, ksq, king_bb, rook_sq, occ):
                    if not count_only:
                        moves[n] = ksq | (rook_sq << 6) | CASTLE_FLAG
                    n += 1
    return n


@hot_njit(inline="always")
def is_legal_move(pos, tab, move):
    """True when the 16-bit word ``move`` is a legal move here, exactly as ``generate_moves``
    would write it.

    The search asks this of the transposition table's move so that it can play that move
    before generating the others: the word may come from another position whose key
    collided, so it is checked from scratch, with the generator's rules (king lifted off
    the board, check mask, pins, en passant and castling by the same helpers).
    """
    frm = move_from(move)
    to = move_to(move)
    kind = move_kind(move)
    st = pos.state
    us = st[ST_SIDE]
    them = us ^ 1
    piece = pos.board[frm]
    if piece == 0 or piece >> 3 != us or (kind != PROMOTION and (move >> PROMO_SHIFT) & 3 != 0):
        return False
    piece_type = piece & 7
    pieces = pos.pieces
    own = pos.colors[us]
    enemy = pos.colors[them]
    occ = own | enemy
    king_bb = pieces[KING] & own
    ksq = lsb(king_bb)
    to_bb = square_bb(to)
    checkers = attackers_to(pos, tab, ksq, occ) & enemy

    if kind == CASTLING:
        if piece_type != KING or checkers != U64_ZERO:
            return False
        rights = st[ST_CASTLING] >> (2 * us) & 3
        for side in range(2):
            if rights >> side & 1 and pos.castle_rook[2 * us + side] == to:
                return _castling_is_legal(pos, tab, us, ksq, king_bb, to, occ)
        return False
    if to_bb & own:
        return False
    if kind == EN_PASSANT:
        return (piece_type == PAWN and to == st[ST_EP] and st[ST_EP] != NO_SQUARE
                and (pawn_attacks(tab, us, frm) & to_bb) != U64_ZERO
                and _en_passant_is_legal(pos, tab, frm, to, ksq, occ, enemy))

    # Can the piece reach ``to`` at all?  Pawns reach the back rank only by promoting.
    if piece_type == PAWN:
        if (kind == PROMOTION) != ((to_bb & BACK_RANKS) != U64_ZERO):
            return False
        up = 8 if us == WHITE else -8
        start_rank = 1 if us == WHITE else 6
        if pawn_attacks(tab, us, frm) & to_bb:
            reachable = (to_bb & enemy) != U64_ZERO
        elif to == frm + up:
            reachable = (to_bb & occ) == U64_ZERO
        elif to == frm + 2 * up and frm >> 3 == start_rank:
            reachable = ((to_bb | square_bb(frm + up)) & occ) == U64_ZERO
        else:
            reachable = False
        if not reachable:
            return False
    elif kind == PROMOTION:
        return False
    elif piece_type == KNIGHT:
        if (knight_attacks(tab, frm) & to_bb) == U64_ZERO:
            return False
    elif piece_type == BISHOP:
        if (bishop_attacks(tab, frm, occ) & to_bb) == U64_ZERO:
            return False
    elif piece_type == ROOK:
        if (rook_attacks(tab, frm, occ) & to_bb) == U64_ZERO:
            return False
    elif piece_type == QUEEN:
        if ((bishop_attacks(tab, frm, occ) | rook_attacks(tab, frm, occ)) & to_bb) == U64_ZERO:
            return False
    else:  # the king: a step onto a square not attacked once it has left its own
        if (king_attacks(tab, frm) & to_bb) == U64_ZERO:
            return False
        return not is_attacked(pos, tab, to, them, occ ^ king_bb)

    # Not the king: in check it must capture or block a single checker, and a pinned
    # piece stays on the line through its king.
    if checkers != U64_ZERO:
        if checkers & (checkers - U64_ONE):
            return False
        if ((between_bb(tab, ksq, lsb(checkers)) | checkers) & to_bb) == U64_ZERO:
            return False
    if line_blockers(pos, tab, ksq, enemy, own, occ) & square_bb(frm):
        return (line_bb(tab, ksq, frm) & to_bb) != U64_ZERO
    return True


@hot_njit
def legal_prefix_length(pos, tab, moves, count):
    """How many of ``moves[:count]``, played one after another from here, are legal: the
    playable part of a principal variation.  The position is left as it was.

    The driver checks every PV it reports this way, once per iteration; one call here
    replaces a move generation, a make and an unmake from Python for each move.
    """
    room = pos.history.shape[0] - 1 - pos.state[ST_PLY]  # never write past the game stack
    n = 0
    while n < count and n < room and is_legal_move(pos, tab, moves[n]):
        make_move(pos, tab, moves[n])
        n += 1
    for _ in range(n):
        unmake_move(pos, tab)
    return n
