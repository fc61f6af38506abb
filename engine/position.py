"""The position: numpy arrays, the mutation primitives, and make/unmake.

``Position`` is a record whose fields are arrays (``POSITION_DTYPE``; numba passes
it as one pointer and caches kernels that take it, where it cannot cache jitclasses):

    board        int8[64]               piece code on each square (0 = empty)
    pieces       uint64[7]              bitboard per piece type, both colours (index 0 unused)
    colors       uint64[2]              bitboard per colour
    state        int32[ST_SIZE]         side, ep, castling, clocks, ply, Chess960 (engine.defs)
    history      int32[GAME_STACK, 5]   undo record of each move made (engine.defs H_*)
    keys         uint64[GAME_STACK]     Polyglot key of every position, keys[state[ST_PLY]] current
    castle_rook  int8[4]                rook square of each castling right (-1 if none)
    castle_mask  int8[64]               rights lost when a piece leaves or lands on a square

Every change of a square goes through ``put_piece``, ``remove_piece`` and
``move_piece``: each updates the mailbox, both bitboards and the current key
together, so they cannot drift apart.  ``make_move`` saves what it cannot recompute
in ``history`` and pushes a new key; ``unmake_move`` replays the primitives backwards
on the dead key slot and pops it.

The en-passant square is stored only when an enemy pawn stands beside the pawn
that just moved two squares: exactly the condition under which Polyglot hashes it.
"""

from __future__ import annotations

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
    zob_castle,
    zob_ep,
    zob_piece,
    zob_side,
)
from engine.defs import (
    BISHOP,
    GAME_STACK,
    H_CAPTURED,
    H_CASTLING,
    H_EP,
    H_HALFMOVE,
    H_MOVE,
    H_SIZE,
    KING,
    KNIGHT,
    NO_SQUARE,
    PAWN,
    QUEEN,
    ROOK,
    ST_CASTLING,
    ST_EP,
    ST_FULLMOVE,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    ST_SIZE,
    U64_ONE,
    U64_ZERO,
)
from engine.intrinsics import lsb
from engine.jit import hot_njit, new_record, njit
from engine.move import CASTLING, EN_PASSANT, PROMOTION, move_from, move_kind, move_promo_type, move_to

POSITION_DTYPE = np.dtype([
    ("board", np.int8, (64,)),
    ("pieces", np.uint64, (7,)),
    ("colors", np.uint64, (2,)),
    ("state", np.int32, (ST_SIZE,)),
    ("history", np.int32, (GAME_STACK, H_SIZE)),
    ("keys", np.uint64, (GAME_STACK,)),
    ("castle_rook", np.int8, (4,)),
    ("castle_mask", np.int8, (64,)),
], align=True)
Position = np.record  # one record of POSITION_DTYPE


def empty_position() -> Position:
    """A Position with no pieces and all stacks zeroed."""
    pos = new_record(POSITION_DTYPE)
    pos.castle_rook[:] = -1
    return pos


def copy_position(pos: Position) -> Position:
    """A deep copy (every array copied)."""
    return new_record(POSITION_DTYPE, **{name: pos[name] for name in POSITION_DTYPE.names})


# ---------------------------------------------------------------------------
# Mutation primitives
# ---------------------------------------------------------------------------

@njit(inline="always")
def put_piece(pos, tab, piece, sq):
    """Place ``piece`` on the empty square ``sq``."""
    bit = square_bb(sq)
    pos.board[sq] = piece
    pos.pieces[piece & 7] |= bit
    pos.colors[piece >> 3] |= bit
    pos.keys[pos.state[ST_PLY]] ^= zob_piece(tab, piece, sq)


@njit(inline="always")
def remove_piece(pos, tab, sq):
    """Remove the piece standing on ``sq``."""
    piece = pos.board[sq]
    bit = square_bb(sq)
    pos.board[sq] = 0
    pos.pieces[piece & 7] ^= bit
    pos.colors[piece >> 3] ^= bit
    pos.keys[pos.state[ST_PLY]] ^= zob_piece(tab, piece, sq)


@njit(inline="always")
def move_piece(pos, tab, frm, to):
    """Move the piece on ``frm`` to the empty square ``to``."""
    piece = pos.board[frm]
    both = square_bb(frm) | square_bb(to)
    pos.board[frm] = 0
    pos.board[to] = piece
    pos.pieces[piece & 7] ^= both
    pos.colors[piece >> 3] ^= both
    pos.keys[pos.state[ST_PLY]] ^= zob_piece(tab, piece, frm) ^ zob_piece(tab, piece, to)


# ---------------------------------------------------------------------------
# Attacks
# ---------------------------------------------------------------------------

@njit(inline="always")
def attackers_to(pos, tab, sq, occ):
    """Pieces of both colours attacking ``sq`` with occupancy ``occ``."""
    p = pos.pieces
    rooks = p[ROOK] | p[QUEEN]
    bishops = p[BISHOP] | p[QUEEN]
    return ((pawn_attacks(tab, 0, sq) & p[PAWN] & pos.colors[1])
            | (pawn_attacks(tab, 1, sq) & p[PAWN] & pos.colors[0])
            | (knight_attacks(tab, sq) & p[KNIGHT])
            | (king_attacks(tab, sq) & p[KING])
            | (rook_attacks(tab, sq, occ) & rooks)
            | (bishop_attacks(tab, sq, occ) & bishops))


@njit(inline="always")
def is_attacked(pos, tab, sq, by, occ):
    """True when colour ``by`` attacks ``sq`` with occupancy ``occ``."""
    p = pos.pieces
    them = pos.colors[by]
    if pawn_attacks(tab, by ^ 1, sq) & p[PAWN] & them:
        return True
    if knight_attacks(tab, sq) & p[KNIGHT] & them:
        return True
    if king_attacks(tab, sq) & p[KING] & them:
        return True
    if rook_attacks(tab, sq, occ) & (p[ROOK] | p[QUEEN]) & them:
        return True
    return (bishop_attacks(tab, sq, occ) & (p[BISHOP] | p[QUEEN]) & them) != U64_ZERO


@njit(inline="always")
def king_square(pos, colour):
    """Square of ``colour``'s king."""
    return lsb(pos.pieces[KING] & pos.colors[colour])


@njit(inline="always")
def in_check(pos, tab):
    """True when the side to move is in check."""
    us = pos.state[ST_SIDE]
    return is_attacked(pos, tab, king_square(pos, us), us ^ 1, pos.colors[0] | pos.colors[1])


@njit(inline="always")
def gives_check_by_making(pos, tab, move):
    """Whether ``move`` checks, by making it: for castling, en passant and promotions (rare)."""
    make_move(pos, tab, move)
    result = in_check(pos, tab)
    unmake_move(pos, tab)
    return result


@hot_njit
def gives_check(pos, tab, move):
    """True when the legal ``move`` checks the opponent (decided without making it).

    A direct check comes from the moved piece on its new square; a discovered check
    from one of our sliders whose line to the enemy king the move opens.  Castling,
    en passant and promotions (rare) are simply made and tested.  A caller asking
    about many moves of one node computes ``check_squares`` once and uses
    ``gives_check_fast``; this is that pair for a single move.
    """
    king, pawn, knight, bishop, rook, discoverers = check_squares(pos, tab)
    return gives_check_fast(pos, tab, move, king, pawn, knight, bishop, rook, discoverers)


@njit(inline="always")
def line_blockers(pos, tab, ksq, sliders, owners, occ):
    """Pieces of ``owners`` standing alone between ``ksq`` and a rook, bishop or queen of
    ``sliders`` (bitboards): pinned pieces when ``sliders`` are the enemy's, pieces whose
    move uncovers a check when they are ours and ``ksq`` is the enemy king."""
    p = pos.pieces
    snipers = ((rook_attacks(tab, ksq, U64_ZERO) & (p[ROOK] | p[QUEEN]))
               | (bishop_attacks(tab, ksq, U64_ZERO) & (p[BISHOP] | p[QUEEN]))) & sliders
    blockers = U64_ZERO
    while snipers:
        sniper = lsb(snipers)
        snipers &= snipers - U64_ONE
        between = between_bb(tab, ksq, sniper) & occ
        if (between & (between - U64_ONE)) == U64_ZERO and (between & owners) != U64_ZERO:
            blockers |= between
    return blockers


@njit(inline="always")
def check_squares(pos, tab):
    """What it takes for a move of the side to move to check the enemy king.

    Computed once per node, so that telling whether each of many moves checks costs
    a few bit tests (``gives_check_fast``).  Returns the enemy king's square; the
    squares from which our pawn, knight, bishop and rook (a queen: either of the last
    two) would attack it as the board stands; and our pieces that alone stand between
    one of our sliders and that king (moving off the line uncovers a check).
    """
    us = pos.state[ST_SIDE]
    them = us ^ 1
    king = lsb(pos.pieces[KING] & pos.colors[them])
    occ = pos.colors[0] | pos.colors[1]
    own = pos.colors[us]
    return (king, pawn_attacks(tab, them, king), knight_attacks(tab, king), bishop_attacks(tab, king, occ),
            rook_attacks(tab, king, occ), line_blockers(pos, tab, king, own, own, occ))


@njit(inline="always")
def gives_check_fast(pos, tab, move, king, pawn_checks, knight_checks, bishop_checks, rook_checks, discoverers):
    """``gives_check`` from the ``check_squares`` of the node (same answer, no call).

    A slider's direct check is read off squares computed before the move: the line
    from its new square to the king cannot run through its old square, or it would
    be giving check already.  Castling, en passant and promotions are made and tested.
    """
    if move_kind(move) != 0:
        return gives_check_by_making(pos, tab, move)
    frm = move_from(move)
    to_bb = square_bb(move_to(move))
    piece_type = pos.board[frm] & 7
    if piece_type == PAWN:
        direct = pawn_checks
    elif piece_type == KNIGHT:
        direct = knight_checks
    elif piece_type == BISHOP:
        direct = bishop_checks
    elif piece_type == ROOK:
        direct = rook_checks
    elif piece_type == QUEEN:
        direct = bishop_checks | rook_checks
    else:
        direct = U64_ZERO
    if direct & to_bb:
        return True
    # Discovered check: the piece leaves the line between our slider and the king.
    return (discoverers & square_bb(frm)) != U64_ZERO and (line_bb(tab, frm, king) & to_bb) == U64_ZERO


@hot_njit
def checkers(pos, tab):
    """Bitboard of the enemy pieces giving check to the side to move."""
    us = pos.state[ST_SIDE]
    occ = pos.colors[0] | pos.colors[1]
    return attackers_to(pos, tab, king_square(pos, us), occ) & pos.colors[us ^ 1]


@njit(inline="always")
def castling_squares(us, king_from, rook_from):
    """(king_to, rook_to) of a castling move: g/f files for h-side, c/d for a-side."""
    base = 56 * us
    if rook_from > king_from:
        return base + 6, base + 5
    return base + 2, base + 3


@njit(inline="always")
def pawn_can_take_ep(pos, tab, ep_sq, capturer):
    """True when a pawn of ``capturer`` attacks ``ep_sq`` (Polyglot's ep condition)."""
    return (pawn_attacks(tab, capturer ^ 1, ep_sq) & pos.pieces[PAWN] & pos.colors[capturer]) != U64_ZERO


# ---------------------------------------------------------------------------
# Make and unmake
# ---------------------------------------------------------------------------

@hot_njit(inline="always")
def key_after(pos, tab, move):
    """The key the position will have after ``move``, for prefetching its TT bucket early.

    Castling rights, a new en-passant square, castling and promotion are left out: for
    those rare moves the prefetch fetches a useless line, which costs nothing in results.
    """
    frm = move_from(move)
    to = move_to(move)
    piece = pos.board[frm]
    key = pos.keys[pos.state[ST_PLY]] ^ zob_side(tab) ^ zob_piece(tab, piece, frm) ^ zob_piece(tab, piece, to)
    kind = move_kind(move)
    if kind == EN_PASSANT:
        key ^= zob_piece(tab, pos.board[to ^ 8], to ^ 8)
    elif pos.board[to] != 0 and kind != CASTLING:
        key ^= zob_piece(tab, pos.board[to], to)
    if pos.state[ST_EP] != NO_SQUARE:
        key ^= zob_ep(tab, pos.state[ST_EP] & 7)
    return key


@njit(inline="always")
def make_move(pos, tab, move):
    """Play a legal ``move`` in place."""
    st = pos.state
    ply = st[ST_PLY]
    us = st[ST_SIDE]
    them = us ^ 1
    frm, to, kind = move_from(move), move_to(move), move_kind(move)
    record = pos.history[ply]
    record[H_MOVE] = move
    record[H_CASTLING] = st[ST_CASTLING]
    record[H_EP] = st[ST_EP]
    record[H_HALFMOVE] = st[ST_HALFMOVE]
    st[ST_PLY] = ply + 1
    key = pos.keys[ply] ^ zob_side(tab)
    if st[ST_EP] != NO_SQUARE:
        key ^= zob_ep(tab, st[ST_EP] & 7)
        st[ST_EP] = NO_SQUARE
    pos.keys[ply + 1] = key

    piece = pos.board[frm]
    captured = 0
    st[ST_HALFMOVE] += 1
    if kind == CASTLING:
        king_to, rook_to = castling_squares(us, frm, to)
        rook = pos.board[to]
        remove_piece(pos, tab, frm)
        remove_piece(pos, tab, to)
        put_piece(pos, tab, piece, king_to)
        put_piece(pos, tab, rook, rook_to)
    else:
        if kind == EN_PASSANT:
            captured = pos.board[to ^ 8]
            remove_piece(pos, tab, to ^ 8)
        elif pos.board[to] != 0:
            captured = pos.board[to]
            remove_piece(pos, tab, to)
        move_piece(pos, tab, frm, to)
        if piece & 7 == PAWN:
            st[ST_HALFMOVE] = 0
            if kind == PROMOTION:
                remove_piece(pos, tab, to)
                put_piece(pos, tab, (us << 3) | move_promo_type(move), to)
            elif to ^ frm == 16:
                ep_sq = (frm + to) >> 1
                if pawn_can_take_ep(pos, tab, ep_sq, them):
                    st[ST_EP] = ep_sq
                    pos.keys[ply + 1] ^= zob_ep(tab, ep_sq & 7)
        if captured != 0:
            st[ST_HALFMOVE] = 0
    record[H_CAPTURED] = captured

    rights = st[ST_CASTLING]
    if rights != 0:
        new_rights = rights & ~(pos.castle_mask[frm] | pos.castle_mask[to])
        if new_rights != rights:
            pos.keys[ply + 1] ^= zob_castle(tab, rights) ^ zob_castle(tab, new_rights)
            st[ST_CASTLING] = new_rights
    st[ST_FULLMOVE] += us
    st[ST_SIDE] = them


@njit(inline="always")
def unmake_move(pos, tab):
    """Take back the last move made with ``make_move``."""
    st = pos.state
    ply = st[ST_PLY] - 1
    record = pos.history[ply]
    move = record[H_MOVE]
    them = st[ST_SIDE]
    us = them ^ 1
    frm, to, kind = move_from(move), move_to(move), move_kind(move)
    # The primitives below xor the dead key slot keys[ply + 1]; keys[ply] stays intact.
    if kind == CASTLING:
        king_to, rook_to = castling_squares(us, frm, to)
        king = pos.board[king_to]
        rook = pos.board[rook_to]
        remove_piece(pos, tab, king_to)
        remove_piece(pos, tab, rook_to)
        put_piece(pos, tab, king, frm)
        put_piece(pos, tab, rook, to)
    else:
        if kind == PROMOTION:
            remove_piece(pos, tab, to)
            put_piece(pos, tab, (us << 3) | PAWN, to)
        move_piece(pos, tab, to, frm)
        captured = record[H_CAPTURED]
        if captured != 0:
            put_piece(pos, tab, captured, to ^ 8 if kind == EN_PASSANT else to)
    st[ST_CASTLING] = record[H_CASTLING]
    st[ST_EP] = record[H_EP]
    st[ST_HALFMOVE] = record[H_HALFMOVE]
    st[ST_FULLMOVE] -= us
    st[ST_SIDE] = us
    st[ST_PLY] = ply


@hot_njit
def make_null_move(pos, tab):
    """Pass the move to the opponent (null-move pruning); undo with unmake_null_move."""
    st = pos.state
    ply = st[ST_PLY]
    record = pos.history[ply]
    record[H_MOVE] = 0
    record[H_CAPTURED] = 0
    record[H_CASTLING] = st[ST_CASTLING]
    record[H_EP] = st[ST_EP]
    record[H_HALFMOVE] = st[ST_HALFMOVE]
    key = pos.keys[ply] ^ zob_side(tab)
    if st[ST_EP] != NO_SQUARE:
        key ^= zob_ep(tab, st[ST_EP] & 7)
        st[ST_EP] = NO_SQUARE
    pos.keys[ply + 1] = key
    st[ST_HALFMOVE] += 1
    st[ST_SIDE] ^= 1
    st[ST_PLY] = ply + 1


@hot_njit
def unmake_null_move(pos, tab):
    """Take back a null move."""
    st = pos.state
    ply = st[ST_PLY] - 1
    record = pos.history[ply]
    st[ST_EP] = record[H_EP]
    st[ST_HALFMOVE] = record[H_HALFMOVE]
    st[ST_SIDE] ^= 1
    st[ST_PLY] = ply


@hot_njit
def compute_key(pos, tab):
    """Polyglot key recomputed from scratch (for setting up and for checking)."""
    key = U64_ZERO
    for sq in range(64):
        if pos.board[sq] != 0:
            key ^= zob_piece(tab, pos.board[sq], sq)
    key ^= zob_castle(tab, pos.state[ST_CASTLING])
    if pos.state[ST_EP] != NO_SQUARE:
        key ^= zob_ep(tab, pos.state[ST_EP] & 7)
    if pos.state[ST_SIDE] == 0:
        key ^= zob_side(tab)
    return key
