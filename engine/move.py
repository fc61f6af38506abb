"""The move: a 16-bit integer, and the one place its layout is defined.

    bits  0-5   from square
    bits  6-11  to square
    bits 12-13  promotion piece minus KNIGHT (0 knight, 1 bishop, 2 rook, 3 queen)
    bits 14-15  kind: 0 normal, 1 promotion, 2 en passant, 3 castling

Castling is always encoded as *king takes own rook* (from = king square,
to = rook square).  This covers standard chess and Chess960 alike; the UCI layer
prints ``e1g1`` in standard chess and ``e1h1`` with ``UCI_Chess960``.

Move 0 (from == to == a1) is never a real move: it stands for "no move", and for the
null move in a position's history.
"""

from engine.jit import njit

NORMAL, PROMOTION, EN_PASSANT, CASTLING = 0, 1, 2, 3
KIND_SHIFT = 14
PROMO_SHIFT = 12

# Precomputed high bits of a move, for generators that add them to from | to << 6.
PROMO_KNIGHT = (PROMOTION << KIND_SHIFT) | (0 << PROMO_SHIFT)
PROMO_BISHOP = (PROMOTION << KIND_SHIFT) | (1 << PROMO_SHIFT)
PROMO_ROOK = (PROMOTION << KIND_SHIFT) | (2 << PROMO_SHIFT)
PROMO_QUEEN = (PROMOTION << KIND_SHIFT) | (3 << PROMO_SHIFT)
EP_FLAG = EN_PASSANT << KIND_SHIFT
CASTLE_FLAG = CASTLING << KIND_SHIFT


@njit(inline="always")
def move_from(move):
    """From square of a move."""
    return move & 63


@njit(inline="always")
def move_to(move):
    """To square of a move (the rook's square for castling)."""
    return (move >> 6) & 63


@njit(inline="always")
def move_kind(move):
    """Kind of a move: NORMAL, PROMOTION, EN_PASSANT or CASTLING."""
    return move >> KIND_SHIFT


@njit(inline="always")
def move_promo_type(move):
    """Piece type a promotion creates (KNIGHT..QUEEN)."""
    return ((move >> PROMO_SHIFT) & 3) + 2


def move_fields(move: int) -> tuple[int, int, int, int]:
    """(from, to, kind, promotion piece type or 0) of a move, in plain Python."""
    kind = move >> KIND_SHIFT
    promo = ((move >> PROMO_SHIFT) & 3) + 2 if kind == PROMOTION else 0
    return move & 63, (move >> 6) & 63, kind, promo
