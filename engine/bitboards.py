"""Attack tables and the Tables bundle every kernel receives.

Leaper attacks (knight, king, pawn) are 64-entry uint64 arrays.  Slider attacks use
"fancy" magic bitboards: for square ``sq`` the relevant occupancy bits are
multiplied by a magic number, shifted down, and the result indexes that square's
slice (``offset[sq]`` onwards) of one shared ``slider`` array.  Magic numbers are
searched for at start-up by a seeded, cached kernel (a few milliseconds).

``between[a, b]`` holds the squares strictly between two aligned squares and
``line[a, b]`` the whole rank, file or diagonal through them (0 if not aligned).

The Polyglot Zobrist numbers are laid out for direct indexing by our codes:
``zob_piece[piece_code, sq]``, ``zob_castle[rights]`` (xor of the four rights' keys
for each 4-bit combination), ``zob_ep[file]`` and ``zob_side[0]`` (white to move).

Big tables are passed to kernels inside the ``Tables`` record rather than read as
globals, so numba never freezes megabytes into compiled code.
"""

from __future__ import annotations

import os

import numpy as np

from engine.defs import BISHOP, BLACK, KING, KNIGHT, PAWN, QUEEN, ROOK, U64_ONE, U64_ZERO, WHITE
from engine.intrinsics import popcount
from engine.jit import CACHE_DIR, new_record, njit

Tables = np.record
"""The lookup tables, four arrays in one record of ``TABLES_DTYPE`` (``engine.jit.new_record``):

    square   uint64[12, 64]      per-square rows: SQ_KNIGHT, SQ_KING, SQ_PAWN + colour (attacks),
                                 then the magic-bitboard rows SQ_ROOK_MASK .. SQ_BISHOP_OFFSET
    slider   uint64[N]           shared magic attack table of rooks and bishops
    rays     uint64[2, 64, 64]   RAY_BETWEEN (squares strictly between a and b), RAY_LINE (whole line)
    zobrist  uint64[17, 64]      Polyglot keys: rows 0-15 by piece code; row ZOB_EXTRA holds
                                 castling (by rights mask), en-passant file and side to move
"""

SQ_KNIGHT, SQ_KING, SQ_PAWN = 0, 1, 2  # SQ_PAWN + colour
SQ_ROOK_MASK, SQ_ROOK_MAGIC, SQ_ROOK_SHIFT, SQ_ROOK_OFFSET = 4, 5, 6, 7
SQ_BISHOP_MASK, SQ_BISHOP_MAGIC, SQ_BISHOP_SHIFT, SQ_BISHOP_OFFSET = 8, 9, 10, 11
SQ_ROWS = 12
RAY_BETWEEN, RAY_LINE = 0, 1
ZOB_EXTRA = 16                      # row of the non-piece keys
ZOB_CASTLE, ZOB_EP, ZOB_SIDE = 0, 16, 24  # column offsets within that row

ROOK_DIRECTIONS = np.array([[1, 0], [-1, 0], [0, 1], [0, -1]], dtype=np.int64)
BISHOP_DIRECTIONS = np.array([[1, 1], [1, -1], [-1, 1], [-1, -1]], dtype=np.int64)
SLIDER_TABLE_SIZE = 64 * 4096 + 64 * 512  # upper bound while the magics are searched
# Every square's slice holds 2**(its mask's bits) entries, whatever its magic number:
# 102,400 for the rooks and 5,248 for the bishops.
SLIDER_ENTRIES = 107_648

TABLES_DTYPE = np.dtype([
    ("square", np.uint64, (SQ_ROWS, 64)),
    ("slider", np.uint64, (SLIDER_ENTRIES,)),
    ("rays", np.uint64, (2, 64, 64)),
    ("zobrist", np.uint64, (ZOB_EXTRA + 1, 64)),
], align=True)


@njit(inline="always")
def square_bb(sq):
    """Bitboard with only square ``sq`` set."""
    return U64_ONE << np.uint64(sq)


@njit(inline="always")
def rook_attacks(tab, sq, occ):
    """Rook attacks from ``sq`` given the occupancy ``occ`` (magic lookup)."""
    sqt = tab.square
    index = ((occ & sqt[SQ_ROOK_MASK, sq]) * sqt[SQ_ROOK_MAGIC, sq]) >> sqt[SQ_ROOK_SHIFT, sq]
    return tab.slider[np.int64(sqt[SQ_ROOK_OFFSET, sq]) + np.int64(index)]


@njit(inline="always")
def bishop_attacks(tab, sq, occ):
    """Bishop attacks from ``sq`` given the occupancy ``occ`` (magic lookup)."""
    sqt = tab.square
    index = ((occ & sqt[SQ_BISHOP_MASK, sq]) * sqt[SQ_BISHOP_MAGIC, sq]) >> sqt[SQ_BISHOP_SHIFT, sq]
    return tab.slider[np.int64(sqt[SQ_BISHOP_OFFSET, sq]) + np.int64(index)]


@njit(inline="always")
def knight_attacks(tab, sq):
    """Squares a knight on ``sq`` attacks."""
    return tab.square[SQ_KNIGHT, sq]


@njit(inline="always")
def king_attacks(tab, sq):
    """Squares a king on ``sq`` attacks."""
    return tab.square[SQ_KING, sq]


@njit(inline="always")
def pawn_attacks(tab, colour, sq):
    """Squares a pawn of ``colour`` on ``sq`` attacks."""
    return tab.square[SQ_PAWN + colour, sq]


@njit(inline="always")
def between_bb(tab, a, b):
    """Squares strictly between ``a`` and ``b`` on a shared line (empty if none)."""
    return tab.rays[RAY_BETWEEN, a, b]


@njit(inline="always")
def line_bb(tab, a, b):
    """The whole line through ``a`` and ``b`` (empty if they share none)."""
    return tab.rays[RAY_LINE, a, b]


@njit(inline="always")
def zob_piece(tab, piece, sq):
    """Polyglot key of ``piece`` (our code) on ``sq``."""
    return tab.zobrist[piece, sq]


@njit(inline="always")
def zob_castle(tab, rights):
    """Polyglot key of a castling-rights mask."""
    return tab.zobrist[ZOB_EXTRA, ZOB_CASTLE + rights]


@njit(inline="always")
def zob_ep(tab, file):
    """Polyglot key of an en-passant file."""
    return tab.zobrist[ZOB_EXTRA, ZOB_EP + file]


@njit(inline="always")
def zob_side(tab):
    """Polyglot key of White to move."""
    return tab.zobrist[ZOB_EXTRA, ZOB_SIDE]


@njit
def _ray_attacks(sq, occ, directions, skip_edges):
    """Slow reference slider attacks (or relevant-occupancy mask when skip_edges)."""
    result = U64_ZERO
    f0, r0 = sq & 7, sq >> 3
    for d in range(directions.shape[0]):
        df, dr = directions[d, 0], directions[d, 1]
        f, r = f0 + df, r0 + dr
        while 0 <= f < 8 and 0 <= r < 8:
            if skip_edges and not (0 <= f + df < 8 and 0 <= r + dr < 8):
                break
            bit = square_bb(r * 8 + f)
            result |= bit
            if occ & bit:
                break
            f += df
            r += dr
    return result


@njit
def _next_random(state):
    """xorshift64* step on a one-element uint64 state array."""
    x = state[0]
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[0] = x
    return x * np.uint64(2685821657736338717)


@njit
def _fill_magics(directions, masks, magics, shifts, offsets, slider, start, seed):
    """Find a magic for every square and fill its slice of ``slider``; returns end offset."""
    rng = np.full(1, np.uint64(seed), dtype=np.uint64)
    occupancies = np.zeros(4096, dtype=np.uint64)
    reference = np.zeros(4096, dtype=np.uint64)
    used = np.zeros(4096, dtype=np.int64)
    epoch = 0
    offset = start
    for sq in range(64):
        mask = _ray_attacks(sq, U64_ZERO, directions, True)
        bits = popcount(mask)
        size = 1 << bits
        subset = U64_ZERO
        for i in range(size):  # Carry-Rippler walk over every subset of the mask
            occupancies[i] = subset
            reference[i] = _ray_attacks(sq, subset, directions, False)
            subset = (subset - mask) & mask
        shift = np.uint64(64 - bits)
        while True:
            magic = _next_random(rng) & _next_random(rng) & _next_random(rng)
            if popcount((mask * magic) >> np.uint64(56)) < 6:
                continue
            epoch += 1
            ok = True
            for i in range(size):
                index = np.int64((occupancies[i] * magic) >> shift)
                if used[index] != epoch:
                    used[index] = epoch
                    slider[offset + index] = reference[i]
                elif slider[offset + index] != reference[i]:
                    ok = False
                    break
            if ok:
                break
        masks[sq], magics[sq], shifts[sq], offsets[sq] = mask, magic, shift, offset
        offset += size
    return offset


@njit
def _fill_leapers(knight, king, pawn, between, line):
    """Fill leaper attacks and the between/line tables."""
    knight_steps = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
    king_steps = ((1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1))
    for sq in range(64):
        f, r = sq & 7, sq >> 3
        for df, dr in knight_steps:
            if 0 <= f + df < 8 and 0 <= r + dr < 8:
                knight[sq] |= square_bb((r + dr) * 8 + f + df)
        for df, dr in king_steps:
            if 0 <= f + df < 8 and 0 <= r + dr < 8:
                king[sq] |= square_bb((r + dr) * 8 + f + df)
        for df in (-1, 1):
            if 0 <= f + df < 8:
                if r < 7:
                    pawn[WHITE, sq] |= square_bb((r + 1) * 8 + f + df)
                if r > 0:
                    pawn[BLACK, sq] |= square_bb((r - 1) * 8 + f + df)
    for a in range(64):
        for df, dr in king_steps:
            f, r = (a & 7) + df, (a >> 3) + dr
            ray = U64_ZERO
            while 0 <= f < 8 and 0 <= r < 8:
                b = r * 8 + f
                between[a, b] = ray
                ray |= square_bb(b)
                f += df
                r += dr
            full = ray | square_bb(a)
            f, r = (a & 7) - df, (a >> 3) - dr
            while 0 <= f < 8 and 0 <= r < 8:
                full |= square_bb(r * 8 + f)
                f -= df
                r -= dr
            f, r = (a & 7) + df, (a >> 3) + dr
            while 0 <= f < 8 and 0 <= r < 8:
                line[a, r * 8 + f] = full
                f += df
                r += dr


def _polyglot_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Polyglot's 781 random numbers rearranged for our piece codes and rights bits."""
    import chess.polyglot

    randoms = np.array(chess.polyglot.POLYGLOT_RANDOM_ARRAY, dtype=np.uint64)
    zob_piece = np.zeros((16, 64), dtype=np.uint64)
    for colour in (WHITE, BLACK):
        for piece_type in (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING):
            # Polyglot orders "black pawn, white pawn, black knight, ...".
            kind = (piece_type - 1) * 2 + (1 if colour == WHITE else 0)
            zob_piece[colour << 3 | piece_type] = randoms[64 * kind: 64 * kind + 64]
    zob_castle = np.zeros(16, dtype=np.uint64)
    for rights in range(16):
        for bit in range(4):
            if rights >> bit & 1:
                zob_castle[rights] ^= randoms[768 + bit]
    return zob_piece, zob_castle, randoms[772:780].copy(), randoms[780:781].copy()


def build_tables() -> Tables:
    """Compute every table (compiled kernels, a few milliseconds when cached)."""
    knight = np.zeros(64, dtype=np.uint64)
    king = np.zeros(64, dtype=np.uint64)
    pawn = np.zeros((2, 64), dtype=np.uint64)
    between = np.zeros((64, 64), dtype=np.uint64)
    line = np.zeros((64, 64), dtype=np.uint64)
    _fill_leapers(knight, king, pawn, between, line)
    slider = np.zeros(SLIDER_TABLE_SIZE, dtype=np.uint64)
    rook = [np.zeros(64, dtype=np.uint64) for _ in range(3)] + [np.zeros(64, dtype=np.int64)]
    bishop = [np.zeros(64, dtype=np.uint64) for _ in range(3)] + [np.zeros(64, dtype=np.int64)]
    end = _fill_magics(ROOK_DIRECTIONS, *rook, slider, 0, 0x9E3779B97F4A7C15)
    end = _fill_magics(BISHOP_DIRECTIONS, *bishop, slider, end, 0xD1B54A32D192ED03)
    piece_keys, castle_keys, ep_keys, side_key = _polyglot_tables()
    square = np.zeros((SQ_ROWS, 64), dtype=np.uint64)
    square[SQ_KNIGHT], square[SQ_KING], square[SQ_PAWN:SQ_PAWN + 2] = knight, king, pawn
    square[SQ_ROOK_MASK:SQ_ROOK_OFFSET + 1] = np.array(rook, dtype=np.uint64)
    square[SQ_BISHOP_MASK:SQ_BISHOP_OFFSET + 1] = np.array(bishop, dtype=np.uint64)
    zobrist = np.zeros((ZOB_EXTRA + 1, 64), dtype=np.uint64)
    zobrist[:16] = piece_keys
    zobrist[ZOB_EXTRA, ZOB_CASTLE:ZOB_CASTLE + 16] = castle_keys
    zobrist[ZOB_EXTRA, ZOB_EP:ZOB_EP + 8] = ep_keys
    zobrist[ZOB_EXTRA, ZOB_SIDE] = side_key[0]
    assert end == SLIDER_ENTRIES, end
    return new_record(TABLES_DTYPE, square=square, slider=slider[:end], rays=np.stack([between, line]),
                      zobrist=zobrist)


_TABLES: Tables | None = None


def tables() -> Tables:
    """The process-wide tables: loaded from the cache folder, else built and saved there.

    The magic search takes a few tenths of a second, so the finished tables are kept
    as ``tables.npz`` beside numba's cache (same source-hash key).
    """
    global _TABLES
    if _TABLES is None:
        path = CACHE_DIR / "tables.npz"
        try:
            with np.load(path) as saved:
                _TABLES = new_record(TABLES_DTYPE, **{name: saved[name] for name in TABLES_DTYPE.names})
        except (OSError, KeyError, ValueError):
            _TABLES = build_tables()
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(f".{os.getpid()}.npz")
                np.savez(tmp, **{name: _TABLES[name] for name in TABLES_DTYPE.names})
                os.replace(tmp, path)
            except OSError:
                pass  # a read-only cache only costs start-up time
    return _TABLES
