"""Syzygy WDL tablebase probing: file parsing in Python, every probe in numba.

What this module owns
=====================
``load_tablebases(paths)`` scans directories for ``*.rtbw`` files, memory-maps each
one, parses its header into small numpy arrays and returns a ``SyzygyTables``
namedtuple.  ``probe_wdl(tb, pos, tab, scratch)`` is a ``hot_njit`` kernel (no
allocation, no Python objects) that the search can call on its ``Position``; it
returns the win/draw/loss value for the side to move, or ``TB_FAIL``.

How a Syzygy WDL file is built (a student's summary)
====================================================
*What is stored.*  For one material balance, e.g. ``KQvKR``, the file holds one
small number per position: 0 loss, 1 blessed loss (lost, but the 50-move rule
saves it), 2 draw, 3 cursed win, 4 win, always for the side to move.  A file
usually contains two such tables, one per side to move ("split" flag).  The colour
named first in the file name is the table's "white"; a position where that
material belongs to black is probed with the colours swapped (and, when pawns
are present, the board turned upside down) and the side to move swapped.  When
both sides have the same material only the white-to-move table exists.  Values
need only be right when the best move is not a capture: the generator may store
anything convenient where a capture wins, so a probe must also try every capture
(see "captures" below).  Positions with castling rights are not covered and en
passant is ignored by the tables themselves.

*File layout* (all multi-byte header fields little-endian):

    bytes 0-3   magic 71 E8 23 5D
    byte 4      flags: bit 0 = two side-to-move tables, bit 1 = one table per
                pawn file (always set for tables with pawns)
    ...         piece-order records: pawnless files have one record, pawn files
                one per leading-pawn file a..d.  A record is an "order" byte (low
                nibble for the white-to-move table, high nibble for black), a
                second order byte when both colours have pawns, then one byte per
                piece listing the piece codes (same low/high nibble split) in the
                order the index encodes them.  Piece codes are colour << 3 | type
                with pawn=1 .. king=6, exactly the engine's own codes.
    (pad to an even offset)
    ...         one compression header per sub-table (file a..d, then side)
    ...         every sub-table's block index, then every sub-table's block
                size list, then every sub-table's compressed blocks (each
                sub-table's blocks start on a 64-byte boundary)
    last 16     trailing bytes the prober never reads (a checksum); every file is
                16 bytes longer than a multiple of 64

*Turning a position into an index.*  Symmetry first: without pawns the board can
be mirrored left-right, top-bottom and along the a1-h8 diagonal, so the first
piece of the list is moved into the ten-square triangle a1-d1-d4.  With pawns only
the left-right mirror is allowed; the "leading" pawns (the colour with fewer pawns)
decide which file a..d the position belongs to, and each file has its own table.
Then pieces are grouped: the leading group (three distinct pieces, the two kings
together when nothing else is unique, or the leading pawns) gets a hand-made
numbering that folds in the symmetry (31332 or 462 cases for pawnless tables);
every further group of identical pieces is numbered as a combination of squares
(the combinatorial number system: sorted squares s1 < s2 < ... give
C(s1,1) + C(s2,2) + ..., with squares already taken by earlier groups skipped).
The group numbers are combined mixed-radix, and the "order" nibble says at which
position of that mixed-radix number the leading group sits.

*Compression.*  The value sequence (in index order) was compressed with a
"pairs" scheme: repeatedly the most frequent adjacent pair of symbols is given a
new symbol, building a binary tree where every symbol stands for a run of
values.  The symbols are then written with a canonical Huffman code.  To find the
value at index ``i``:

1. The index table has one 6-byte entry (uint32 block, uint16 offset) per
   ``2**idxbits`` indices, describing the middle of that span; from there the list
   of block sizes (uint16 "values in block - 1") is walked forward or backward to
   the block holding ``i`` and the position inside it.
2. The block (``2**blocksize`` bytes) is a big-endian bit stream of Huffman codes.
   Canonical codes are decoded by comparing the next 64 bits with a per-length
   lower bound ``base[len]``; the symbol number is the first symbol of that length
   plus the distance above the bound.  Symbols are skipped while their run of
   values ends before the wanted position.
3. The symbol found is descended through its pair tree (3 bytes per symbol: two
   12-bit children; 0xFFF as right child marks a leaf whose first byte is the
   value) until a leaf remains.  ``symlen[s]`` (run length - 1) is precomputed at
   load time.

A compression header: byte 0 flags; with bit 7 set the whole sub-table is the
single value in byte 1 and the header ends there.  Otherwise byte 1 is log2 of the
block size, byte 2 ``idxbits``, byte 3 extra entries of the size list, bytes 4-7
the number of blocks, byte 8 the longest and byte 9 the shortest code length, then
one uint16 per code length (shortest first: the first symbol number of that
length), a uint16 symbol count, the 3-byte tree records, and a pad to even length.

*Captures and en passant.*  ``probe_wdl`` follows python-chess's ``probe_wdl``:
the value of a position is the best of its table value and of every capture
(resolved by a small alpha-beta over captures only); then legal en-passant
captures, which the tables know nothing about, are tried at the root.

Using it
========
Python side, once (e.g. when the SyzygyPath option changes)::

    tb, max_pieces, messages = load_tablebases("/tb/3-4-5:/tb/6")
    scratch = make_scratch()          # one per searching thread

Kernel side, ``tb`` and ``scratch`` travel as arguments (never as globals)::

    if popcount(occupied) <= max_pieces and pos.state[ST_CASTLING] == 0:
        wdl = probe_wdl(tb, pos, tab, scratch)    # makes/unmakes captures, restores pos
        if wdl != TB_FAIL:
            ...                                    # -2..2 for the side to move

``probe_wdl`` needs ``MAX_LEVELS`` free plies above ``pos.state[ST_PLY]`` in the
history stack (it answers TB_FAIL otherwise).  Mappings stay alive for the life of
the process (``_MAPPED``), so a ``SyzygyTables`` is never left pointing at freed
memory.

Memory and array layout
=======================
Every file is mapped with ``mmap`` and wrapped as a read-only numpy uint8 array
(kept alive in a module registry).  A namedtuple cannot hold a variable number of
arrays of different sizes in a numba-cacheable way, so the kernels receive each
file's *base address and length* and read its bytes through the ``peek_u8``
intrinsic (``engine.intrinsics``); every read is checked against the file length first.

``SyzygyTables`` fields (T tables, S = 8 * T sub-tables, s = 8 * t + 2 * file + side):

    meta         int64[4]      max pieces, hash bits, number of tables, unused
    hash_key     int64[H]      material key (-1 empty slot), open addressing
    hash_entry   int32[H]      4 * table + colour mode (SAME, FLIPPED, SYMMETRIC)
    file_addr    int64[T]      address of the mapped file
    file_size    int64[T]      its length in bytes
    table_info   int32[T, 6]   TI_* columns: pieces, encoding, leading pawns,
                               other pawns, leading piece code, files
    sub_pieces   int8[S, 8]    piece codes in index order (table colours)
    sub_norm     int8[S, 8]    group size starting at each slot (0 inside a group)
    sub_factor   int64[S, 8]   mixed-radix weight of the group starting at a slot
    sub_param    int64[S, 16]  SP_* columns: compression parameters and offsets
    symlen       int32[]       run length - 1 of every symbol, all sub-tables
    base         uint64[]      canonical-Huffman lower bound per code length
"""

from __future__ import annotations

import mmap
import os
import re
from collections import namedtuple
from math import comb
from pathlib import Path

import numpy as np

from engine.defs import GAME_STACK, KING, NO_SQUARE, PAWN, ST_CASTLING, ST_EP, ST_PLY, ST_SIDE, U64_ONE
from engine.intrinsics import lsb, peek_u8, popcount
from engine.jit import hot_njit
from engine.move import EN_PASSANT, move_kind, move_to
from engine.movegen import GEN_COUNT, GEN_NOISY, generate_moves
from engine.position import make_move, unmake_move

# ---------------------------------------------------------------------------
# Public constants
# ---------------------------------------------------------------------------

TB_FAIL = 99  # "no result": missing table, castling rights, corrupt data, too many pieces
WDL_MAGIC = bytes((0x71, 0xE8, 0x23, 0x5D))
MAX_TB_PIECES = 7  # the largest Syzygy tables that exist
MAX_SLOTS = 8  # per-sub-table row width (>= MAX_TB_PIECES)

SyzygyTables = namedtuple(
    "SyzygyTables",
    ["meta", "hash_key", "hash_entry", "file_addr", "file_size", "table_info",
     "sub_pieces", "sub_norm", "sub_factor", "sub_param", "symlen", "base"],
)

# meta columns
META_MAX_PIECES, META_HASH_BITS, META_TABLES = 0, 1, 2

# table_info columns
TI_PIECES, TI_ENCODING, TI_LEAD_PAWNS, TI_OTHER_PAWNS, TI_LEAD_PIECE, TI_FILES = 0, 1, 2, 3, 4, 5
TI_SIZE = 6

# Leading-group encodings
ENC_THREE_UNIQUE = 0  # three distinct unique pieces lead (31332 placements)
ENC_PAWNS = 1  # leading pawns pick one of four file tables
ENC_TWO_KINGS = 2  # only the kings are unique (462 king placements)

# Colour modes of a hash entry
MODE_SAME, MODE_FLIPPED, MODE_SYMMETRIC = 0, 1, 2

# sub_param columns
SP_KIND = 0  # SUB_MISSING / SUB_CONSTANT / SUB_COMPRESSED
SP_CONSTANT = 1  # stored value when SUB_CONSTANT
SP_BLOCK_BITS = 2  # log2 of the block size in bytes
SP_INDEX_BITS = 3  # log2 of the indices per block-index entry
SP_NUM_BLOCKS = 4  # entries in the block size list
SP_MIN_LEN = 5  # shortest Huffman code length
SP_MAX_LEN = 6  # longest Huffman code length
SP_INDEX_OFS = 7  # file offset of the block index (6 bytes per entry)
SP_SIZES_OFS = 8  # file offset of the block size list (uint16 each)
SP_DATA_OFS = 9  # file offset of the first compressed block
SP_FIRST_SYM_OFS = 10  # file offset of uint16[max-min+1]: first symbol of each length
SP_TREE_OFS = 11  # file offset of the 3-byte pair-tree records
SP_NUM_SYMS = 12  # number of symbols
SP_SYMLEN_START = 13  # start of this sub-table's symbols in ``symlen``
SP_BASE_START = 14  # start of this sub-table's bounds in ``base``
SP_INDEX_COUNT = 15  # number of positions indexed (table size)
SP_SIZE = 16

SUB_MISSING, SUB_CONSTANT, SUB_COMPRESSED = 0, 1, 2

# Scratch layout (int32): squares, capture-search frames, one move list per level.
MAX_LEVELS = 8  # capture-search depth limit (root + 7 captures)
MOVES_PER_LEVEL = 256
SCR_SQUARES = 0  # 8 squares of the position being indexed
SCR_FRAMES = 16  # 4 ints per level: alpha, beta, cursor, end
FRAME_SIZE = 4
SCR_MOVES = SCR_FRAMES + FRAME_SIZE * MAX_LEVELS
SCRATCH_SIZE = SCR_MOVES + MOVES_PER_LEVEL * MAX_LEVELS

_HASH_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MAX_DECODE_STEPS = 1 << 18  # more symbols than any block can hold
_MAX_RUN = 1 << 24  # longest sane run of values behind one symbol


def make_scratch() -> np.ndarray:
    """A scratch buffer for ``probe_wdl`` (one per searching thread)."""
    return np.zeros(SCRATCH_SIZE, dtype=np.int32)


# ---------------------------------------------------------------------------
# Index-scheme constants, derived from their definitions
# ---------------------------------------------------------------------------

def _fold_to_triangle(sq: int) -> int:
    """Image of ``sq`` in the a1-d1-d4 triangle under the eight board symmetries."""
    file, rank = sq & 7, sq >> 3
    if file > 3:
        file = 7 - file
    if rank > 3:
        rank = 7 - rank
    if rank > file:
        file, rank = rank, file
    return rank * 8 + file


# The ten triangle squares: the six strictly below the diagonal, then a1 b2 c3 d4.
_TRIANGLE_ORDER = [1, 2, 3, 10, 11, 19, 0, 9, 18, 27]


def _build_index_constants() -> dict[str, np.ndarray]:
    """Every small lookup table the index kernels use (a few kB)."""
    triangle = np.array([_TRIANGLE_ORDER.index(_fold_to_triangle(sq)) for sq in range(64)], dtype=np.int64)

    # Diagonal squares: a1..h8 numbered 0..7, h1..a8 numbered 8..15 (others 0).
    diag = np.zeros(64, dtype=np.int64)
    for k in range(8):
        diag[k * 9] = k
        diag[7 + k * 7] = 8 + k

    # Squares strictly below the a1-h8 diagonal numbered 0..27 in square order;
    # above-diagonal squares share their mirror's number; the diagonal is 28..35.
    lower = np.zeros(64, dtype=np.int64)
    count = 0
    for sq in range(64):
        if (sq & 7) > (sq >> 3):
            lower[sq] = count
            count += 1
    for sq in range(64):
        file, rank = sq & 7, sq >> 3
        if file < rank:
            lower[sq] = lower[file * 8 + rank]
        elif file == rank:
            lower[sq] = 28 + rank

    # Two-king placements: king 1 in the triangle, king 2 anywhere not touching it.
    # With king 1 on the diagonal, king 2 above the diagonal is excluded and king 2
    # on the diagonal is numbered after every other case (441..461).
    king_pair = np.full((10, 64), -1, dtype=np.int64)
    count = 0
    deferred = []
    for t, k1 in enumerate(_TRIANGLE_ORDER):
        on_diagonal = (k1 & 7) == (k1 >> 3)
        for k2 in range(64):
            if max(abs((k1 & 7) - (k2 & 7)), abs((k1 >> 3) - (k2 >> 3))) <= 1:
                continue
            offset = (k2 >> 3) - (k2 & 7)
            if on_diagonal and offset > 0:
                continue
            if on_diagonal and offset == 0:
                deferred.append((t, k2))
                continue
            king_pair[t, k2] = count
            count += 1
    for t, k2 in deferred:
        king_pair[t, k2] = count
        count += 1
    assert count == 462

    # Pawn squares of files a-d numbered file-major (a2..a7 = 0..5, b2..b7 = 6..11, ...);
    # files e-h share the mirrored file's numbers.
    pawn_flap = np.zeros(64, dtype=np.int64)
    for sq in range(8, 56):
        file, rank = sq & 7, sq >> 3
        pawn_flap[sq] = min(file, 7 - file) * 6 + rank - 1
    flap_square = [(j % 6 + 1) * 8 + j // 6 for j in range(24)]

    # Order of the non-first leading pawns: central files and advanced ranks first.
    pawn_twist = np.zeros(64, dtype=np.int64)
    for sq in range(8, 56):
        file, rank = sq & 7, sq >> 3
        pawn_twist[sq] = (3 - min(file, 7 - file)) * 12 + (6 - rank) * 2 + (1 if file < 4 else 0)

    # Leading-pawn group: for k pawns, the first (lowest-flap) pawn's square j starts
    # a block holding C(twist, k - 1) placements of the others; per file the blocks add up.
    pawn_start = np.zeros((MAX_TB_PIECES, 24), dtype=np.int64)
    pawn_span = np.zeros((MAX_TB_PIECES, 4), dtype=np.int64)
    for others in range(MAX_TB_PIECES - 1):
        for file in range(4):
            total = 0
            for j in range(file * 6, file * 6 + 6):
                pawn_start[others, j] = total
                total += comb(int(pawn_twist[flap_square[j]]), others)
            pawn_span[others, file] = total

    binomial = np.zeros((65, MAX_SLOTS + 1), dtype=np.int64)
    for n in range(65):
        for k in range(MAX_SLOTS + 1):
            binomial[n, k] = comb(n, k)

    return dict(triangle=triangle, diag=diag, lower=lower, king_pair=king_pair, pawn_flap=pawn_flap,
                pawn_twist=pawn_twist, pawn_start=pawn_start, pawn_span=pawn_span, binomial=binomial)


_C = _build_index_constants()
TRIANGLE = _C["triangle"]
DIAG_NUMBER = _C["diag"]
LOWER_NUMBER = _C["lower"]
KING_PAIR = _C["king_pair"]
PAWN_FLAP = _C["pawn_flap"]
PAWN_TWIST = _C["pawn_twist"]
PAWN_START = _C["pawn_start"]
PAWN_SPAN = _C["pawn_span"]
BINOMIAL = _C["binomial"]
THREE_UNIQUE_SPAN = 6 * 63 * 62 + 4 * 28 * 62 + 4 * 7 * 28 + 4 * 7 * 6  # 31332
TWO_KINGS_SPAN = 462
# Start of each case of the three-unique numbering (see _encode_pawnless).
_OFF_DIAG_2 = 6 * 63 * 62
_OFF_DIAG_3 = _OFF_DIAG_2 + 4 * 28 * 62
_ALL_DIAG = _OFF_DIAG_3 + 4 * 7 * 28


# ---------------------------------------------------------------------------
# Raw memory reads (``peek_u8``, in ``engine.intrinsics``)
# ---------------------------------------------------------------------------

@hot_njit(inline="always")
def _read_le(addr, size, offset, nbytes):
    """Little-endian unsigned field of ``nbytes`` at ``offset``, or -1 when out of the file."""
    if offset < 0 or offset + nbytes > size:
        return -1
    value = 0
    for k in range(nbytes - 1, -1, -1):
        value = (value << 8) | peek_u8(addr + offset + k)
    return value


@hot_njit(inline="always")
def _read_be32(addr, size, offset):
    """Big-endian uint32 at ``offset`` as uint64; bytes past the end of the file read as 0."""
    value = np.uint64(0)
    for k in range(4):
        byte = np.uint64(0)
        if 0 <= offset + k < size:
            byte = np.uint64(peek_u8(addr + offset + k))
        value = (value << np.uint64(8)) | byte
    return value


# ---------------------------------------------------------------------------
# Decompression: index -> stored value
# ---------------------------------------------------------------------------

@hot_njit
def _stored_value(tb, sub, index, addr, size):
    """Stored value (0..4) at ``index`` of sub-table ``sub``, or -1 on any inconsistency."""
    par = tb.sub_param[sub]
    kind = par[SP_KIND]
    if kind == SUB_CONSTANT:
        return par[SP_CONSTANT]
    if kind != SUB_COMPRESSED or index < 0 or index >= par[SP_INDEX_COUNT]:
        return -1
    index_bits = par[SP_INDEX_BITS]
    num_blocks = par[SP_NUM_BLOCKS]
    sizes_ofs = par[SP_SIZES_OFS]

    # 1. Block index entry for the span holding ``index``, then walk to the block.
    entry = par[SP_INDEX_OFS] + 6 * (index >> index_bits)
    block = _read_le(addr, size, entry, 4)
    middle = _read_le(addr, size, entry + 4, 2)
    if block < 0 or middle < 0:
        return -1
    pos_in_block = (index & ((1 << index_bits) - 1)) - (1 << (index_bits - 1)) + middle
    while pos_in_block < 0:
        block -= 1
        if block < 0:
            return -1
        pos_in_block += _read_le(addr, size, sizes_ofs + 2 * block, 2) + 1
    while True:
        if block >= num_blocks:
            return -1
        last = _read_le(addr, size, sizes_ofs + 2 * block, 2)
        if last < 0:
            return -1
        if pos_in_block <= last:
            break
        pos_in_block -= last + 1
        block += 1

    # 2. Huffman-decode symbols of the block until the one covering pos_in_block.
    cursor = par[SP_DATA_OFS] + (block << par[SP_BLOCK_BITS])
    if cursor < 0 or cursor + 8 > size:
        return -1
    bits = (_read_be32(addr, size, cursor) << np.uint64(32)) | _read_be32(addr, size, cursor + 4)
    cursor += 8
    spare = 0  # low bits of ``bits`` already shifted in as zeros
    min_len = par[SP_MIN_LEN]
    max_len = par[SP_MAX_LEN]
    first_sym_ofs = par[SP_FIRST_SYM_OFS]
    num_syms = par[SP_NUM_SYMS]
    lengths = tb.symlen[par[SP_SYMLEN_START]:par[SP_SYMLEN_START] + num_syms]
    bounds = tb.base[par[SP_BASE_START]:par[SP_BASE_START] + max_len - min_len + 1]
    symbol = -1
    found = False
    for _ in range(_MAX_DECODE_STEPS):
        length = min_len
        while bits < bounds[length - min_len]:
            length += 1
            if length > max_len:
                return -1
        first = _read_le(addr, size, first_sym_ofs + 2 * (length - min_len), 2)
        if first < 0:
            return -1
        symbol = first + np.int64((bits - bounds[length - min_len]) >> np.uint64(64 - length))
        if symbol < 0 or symbol >= num_syms:
            return -1
        run = lengths[symbol] + 1
        if pos_in_block < run:
            found = True
            break
        pos_in_block -= run
        bits <<= np.uint64(length)
        spare += length
        if spare >= 32:
            spare -= 32
            bits |= _read_be32(addr, size, cursor) << np.uint64(spare)
            cursor += 4
    if not found:
        return -1

    # 3. Descend the pair tree to the leaf holding the value.
    tree = par[SP_TREE_OFS]
    for _ in range(num_syms + 1):
        if lengths[symbol] == 0:
            return _read_le(addr, size, tree + 3 * symbol, 1)
        low = _read_le(addr, size, tree + 3 * symbol, 2)
        high = _read_le(addr, size, tree + 3 * symbol + 1, 2)
        if low < 0 or high < 0:
            return -1
        left = low & 0xFFF
        right = high >> 4
        if left >= num_syms or right >= num_syms:
            return -1
        if pos_in_block <= lengths[left]:
            symbol = left
        else:
            pos_in_block -= lengths[left] + 1
            symbol = right
    return -1


# ---------------------------------------------------------------------------
# Position -> index
# ---------------------------------------------------------------------------

@hot_njit(inline="always")
def _sort_ascending(sq, lo, hi):
    """Insertion sort of ``sq[lo:hi]``."""
    for a in range(lo + 1, hi):
        value = sq[a]
        b = a - 1
        while b >= lo and sq[b] > value:
            sq[b + 1] = sq[b]
            b -= 1
        sq[b + 1] = value


@hot_njit(inline="always")
def _encode_groups(sq, start, count, tb, sub, index):
    """Add the combination numbers of the piece groups from slot ``start`` on, or -1."""
    norm = tb.sub_norm[sub]
    factor = tb.sub_factor[sub]
    i = start
    while i < count:
        group = norm[i]
        if group <= 0 or i + group > count:
            return -1
        _sort_ascending(sq, i, i + group)
        rank_sum = 0
        for m in range(i, i + group):
            square = sq[m]
            taken_below = 0
            for earlier in range(i):
                if sq[earlier] < square:
                    taken_below += 1
            rank_sum += BINOMIAL[square - taken_below, m - i + 1]
        index += rank_sum * factor[i]
        i += group
    return index


@hot_njit
def _encode_pawnless(sq, count, encoding, tb, sub):
    """Index of a pawnless position whose squares (table order) are in ``sq[:count]``."""
    if sq[0] & 4:
        for i in range(count):
            sq[i] ^= 7
    if sq[0] & 32:
        for i in range(count):
            sq[i] ^= 56
    # Leading pieces on the diagonal leave one more mirror: use it so that the first
    # leading piece off the diagonal lies below it.
    leading = 3 if encoding == ENC_THREE_UNIQUE else 2
    for i in range(leading):
        above = (sq[i] >> 3) - (sq[i] & 7)
        if above != 0:
            if above > 0:
                for k in range(count):
                    sq[k] = ((sq[k] & 7) << 3) | (sq[k] >> 3)
            break

    a, b = sq[0], sq[1]
    if encoding == ENC_THREE_UNIQUE:
        c = sq[2]
        b_skip = 1 if b > a else 0
        c_skip = (1 if c > a else 0) + (1 if c > b else 0)
        if (a >> 3) != (a & 7):
            index = TRIANGLE[a] * 63 * 62 + (b - b_skip) * 62 + (c - c_skip)
        elif (b >> 3) != (b & 7):
            index = _OFF_DIAG_2 + DIAG_NUMBER[a] * 28 * 62 + LOWER_NUMBER[b] * 62 + (c - c_skip)
        elif (c >> 3) != (c & 7):
            index = _OFF_DIAG_3 + DIAG_NUMBER[a] * 7 * 28 + (DIAG_NUMBER[b] - b_skip) * 28 + LOWER_NUMBER[c]
        else:
            index = _ALL_DIAG + DIAG_NUMBER[a] * 7 * 6 + (DIAG_NUMBER[b] - b_skip) * 6 + (DIAG_NUMBER[c] - c_skip)
    else:
        index = KING_PAIR[TRIANGLE[a], b]
        if index < 0:
            return -1
    return _encode_groups(sq, leading, count, tb, sub, index * tb.sub_factor[sub, 0])


@hot_njit
def _encode_pawns(sq, count, lead, other, tb, sub):
    """Index of a position with pawns; ``sq[0]`` is the leading pawn of lowest flap number."""
    if sq[0] & 4:
        for i in range(count):
            sq[i] ^= 7
    # Remaining leading pawns by decreasing twist number (insertion sort).
    for a in range(2, lead):
        value = sq[a]
        b = a - 1
        while b >= 1 and PAWN_TWIST[sq[b]] < PAWN_TWIST[value]:
            sq[b + 1] = sq[b]
            b -= 1
        sq[b + 1] = value
    index = PAWN_START[lead - 1, PAWN_FLAP[sq[0]]]
    for i in range(1, lead):
        index += BINOMIAL[PAWN_TWIST[sq[i]], lead - i]
    index *= tb.sub_factor[sub, 0]

    # The other colour's pawns: a combination of the 48 pawn squares minus the leaders.
    i = lead
    if other > 0:
        _sort_ascending(sq, lead, lead + other)
        rank_sum = 0
        for m in range(lead, lead + other):
            square = sq[m]
            taken_below = 0
            for earlier in range(lead):
                if sq[earlier] < square:
                    taken_below += 1
            cell = square - taken_below - 8
            if cell < 0:
                return -1
            rank_sum += BINOMIAL[cell, m - lead + 1]
        index += rank_sum * tb.sub_factor[sub, lead]
        i = lead + other
    return _encode_groups(sq, i, count, tb, sub, index)


@hot_njit(inline="always")
def _gather(pos, sq, fill, code, flip, square_xor, limit):
    """Append the squares of table piece ``code`` (colours swapped when ``flip``) to ``sq``."""
    colour = ((code >> 3) & 1) ^ flip
    bb = pos.pieces[code & 7] & pos.colors[colour]
    while bb:
        if fill >= limit:
            return -1
        sq[fill] = lsb(bb) ^ square_xor
        fill += 1
        bb &= bb - U64_ONE
    return fill


@hot_njit(inline="always")
def material_key(pos):
    """30-bit material signature: 3 bits per (colour, piece type pawn..queen)."""
    key = 0
    for colour in range(2):
        for piece_type in range(1, 6):
            key |= popcount(pos.pieces[piece_type] & pos.colors[colour]) << (3 * (piece_type - 1) + 15 * colour)
    return key


@hot_njit(inline="always")
def _find_table(tb, key):
    """Hash entry (4 * table + mode) for a material key, or -1."""
    bits = tb.meta[META_HASH_BITS]
    mask = (1 << bits) - 1
    slot = np.int64((np.uint64(key) * _HASH_MULTIPLIER) >> np.uint64(64 - bits))
    for _ in range(mask + 1):
        stored = tb.hash_key[slot]
        if stored == key:
            return tb.hash_entry[slot]
        if stored < 0:
            return -1
        slot = (slot + 1) & mask
    return -1


@hot_njit
def probe_table(tb, pos, scratch):
    """Table WDL (-2..2) of the position ignoring captures and en passant, or TB_FAIL."""
    occupied = pos.colors[0] | pos.colors[1]
    count = popcount(occupied)
    kings = pos.pieces[KING]
    if popcount(kings & pos.colors[0]) != 1 or popcount(kings & pos.colors[1]) != 1:
        return TB_FAIL
    if count == 2:
        return 0
    if count > tb.meta[META_MAX_PIECES]:
        return TB_FAIL
    entry = _find_table(tb, material_key(pos))
    if entry < 0:
        return TB_FAIL
    table = entry >> 2
    mode = entry & 3
    info = tb.table_info[table]
    if info[TI_PIECES] != count:
        return TB_FAIL
    stm = pos.state[ST_SIDE]
    flip = stm if mode == MODE_SYMMETRIC else mode
    side = stm ^ flip
    encoding = info[TI_ENCODING]
    sq = scratch[SCR_SQUARES:SCR_SQUARES + MAX_SLOTS]

    if encoding == ENC_PAWNS:
        square_xor = 56 if flip else 0
        lead = info[TI_LEAD_PAWNS]
        fill = _gather(pos, sq, 0, info[TI_LEAD_PIECE], flip, square_xor, lead)
        if fill != lead:
            return TB_FAIL
        for i in range(1, lead):  # lowest flap number first (first found wins ties)
            if PAWN_FLAP[sq[0]] > PAWN_FLAP[sq[i]]:
                sq[0], sq[i] = sq[i], sq[0]
        file = sq[0] & 7
        if file > 3:
            file = 7 - file
        if file >= info[TI_FILES]:
            return TB_FAIL
        sub = 8 * table + 2 * file + side
        codes = tb.sub_pieces[sub]
        while fill < count:
            before = fill
            fill = _gather(pos, sq, fill, codes[fill], flip, square_xor, count)
            if fill <= before:
                return TB_FAIL
        index = _encode_pawns(sq, count, lead, info[TI_OTHER_PAWNS], tb, sub)
    else:
        sub = 8 * table + side
        codes = tb.sub_pieces[sub]
        fill = 0
        while fill < count:
            before = fill
            fill = _gather(pos, sq, fill, codes[fill], flip, 0, count)
            if fill <= before:
                return TB_FAIL
        index = _encode_pawnless(sq, count, encoding, tb, sub)
    if index < 0:
        return TB_FAIL
    value = _stored_value(tb, sub, index, tb.file_addr[table], tb.file_size[table])
    if value < 0 or value > 4:
        return TB_FAIL
    return value - 2


# ---------------------------------------------------------------------------
# Capture resolution and en passant (python-chess probe_wdl semantics)
# ---------------------------------------------------------------------------

@hot_njit(inline="always")
def _open_frame(pos, tab, scratch, level, alpha, beta):
    """Start a capture-search node at ``level``: window and move list."""
    frame = SCR_FRAMES + FRAME_SIZE * level
    start = SCR_MOVES + MOVES_PER_LEVEL * level
    scratch[frame] = alpha
    scratch[frame + 1] = beta
    scratch[frame + 2] = start
    scratch[frame + 3] = generate_moves(pos, tab, scratch, start, GEN_NOISY)


# The arguments of the two calls of ``_capture_search``: int64s, not literals, since numba
# compiles a callee once per distinct literal argument (these would make two copies).
CAPTURE_ROOT = np.int64(0)                          # the first scratch frame
WDL_FLOOR, WDL_CEILING = np.int64(-2), np.int64(2)  # the full window of WDL values


@hot_njit
def _capture_search(tb, pos, tab, scratch, level0, alpha, beta):
    """max(table value, best capture) by alpha-beta over non-ep captures; TB_FAIL if unknown.

    Iterative (numba's cache cannot hold recursive kernels): frame ``level`` of the
    scratch holds the node's window and move-list cursor.  Every move made is
    unmade before returning, also on failure.
    """
    level = level0
    _open_frame(pos, tab, scratch, level, alpha, beta)
    while True:
        frame = SCR_FRAMES + FRAME_SIZE * level
        cursor = scratch[frame + 2]
        if cursor < scratch[frame + 3]:
            move = scratch[cursor]
            scratch[frame + 2] = cursor + 1
            if move_kind(move) == EN_PASSANT or pos.board[move_to(move)] == 0:
                continue
            if level + 1 >= MAX_LEVELS:
                while level > level0:
                    unmake_move(pos, tab)
                    level -= 1
                return TB_FAIL
            make_move(pos, tab, move)
            level += 1
            _open_frame(pos, tab, scratch, level, -scratch[frame + 1], -scratch[frame])
            continue

        # Every capture tried without a cut-off: the table value competes with alpha.
        value = probe_table(tb, pos, scratch)
        if value == TB_FAIL:
            while level > level0:
                unmake_move(pos, tab)
                level -= 1
            return TB_FAIL
        result = scratch[frame] if scratch[frame] >= value else value
        # Hand the result to the parent; a cut-off there finishes the parent too.
        while True:
            if level == level0:
                return result
            unmake_move(pos, tab)
            level -= 1
            parent = SCR_FRAMES + FRAME_SIZE * level
            score = -result
            if score > scratch[parent]:
                if score >= scratch[parent + 1]:
                    result = score
                    continue
                scratch[parent] = score
            break


@hot_njit
def probe_wdl(tb, pos, tab, scratch):
    """WDL for the side to move (2 win, 1 cursed win, 0 draw, -1 blessed loss, -2 loss) or TB_FAIL.

    Same value as python-chess ``Tablebase.probe_wdl``: captures are resolved by a
    capture-only alpha-beta, legal en-passant captures are tried at the root.  The
    position is restored on return.  ``scratch`` comes from ``make_scratch()``.
    """
    st = pos.state
    if st[ST_CASTLING] != 0 or scratch.shape[0] < SCRATCH_SIZE:
        return TB_FAIL
    if st[ST_PLY] + MAX_LEVELS + 2 >= GAME_STACK:
        return TB_FAIL
    pieces = popcount(pos.colors[0] | pos.colors[1])
    if pieces > max(tb.meta[META_MAX_PIECES], 2) + 1:
        return TB_FAIL
    value = _capture_search(tb, pos, tab, scratch, CAPTURE_ROOT, WDL_FLOOR, WDL_CEILING)
    if value == TB_FAIL or st[ST_EP] == NO_SQUARE:
        return value

    # En passant: the tables assume it impossible, so try each legal one here.
    start = np.int64(SCR_MOVES)  # an int64 start, as everywhere (see movegen.LIST_START)
    end = generate_moves(pos, tab, scratch, start, GEN_NOISY)
    best_ep = -3
    ep_moves = 0
    for k in range(start, end):
        move = scratch[k]
        if move_kind(move) != EN_PASSANT:
            continue
        ep_moves += 1
        make_move(pos, tab, move)
        child = _capture_search(tb, pos, tab, scratch, CAPTURE_ROOT + 1, WDL_FLOOR, WDL_CEILING)
        unmake_move(pos, tab)
        if child == TB_FAIL:
            return TB_FAIL
        if -child > best_ep:
            best_ep = -child
    if best_ep > -3:
        if best_ep >= value:
            value = best_ep
        elif value == 0 and generate_moves(pos, tab, scratch, start, GEN_COUNT) - start == ep_moves:
            value = best_ep  # en passant is the only legal move: it must be played
    return value


# ---------------------------------------------------------------------------
# Loading (plain Python)
# ---------------------------------------------------------------------------

class TablebaseError(ValueError):
    """A tablebase file that cannot be used (the message says which and why)."""


_NAME = re.compile(r"^K([QRBNP]*)vK([QRBNP]*)$")
_TYPE_OF_LETTER = {"P": 1, "N": 2, "B": 3, "R": 4, "Q": 5, "K": 6}
_MAPPED: list[tuple[mmap.mmap, np.ndarray]] = []  # keeps every mapping alive for the kernels


def _counts(letters: str) -> tuple[int, ...]:
    """Piece counts indexed by type (0 unused, 1 pawn .. 6 king) of one side of a name."""
    counts = [0] * 7
    for ch in letters:
        counts[_TYPE_OF_LETTER[ch]] += 1
    return tuple(counts)


def _key_of(white: tuple[int, ...], black: tuple[int, ...]) -> int:
    """Python twin of the kernel's ``material_key``."""
    key = 0
    for piece_type in range(1, 6):
        key |= white[piece_type] << (3 * (piece_type - 1))
        key |= black[piece_type] << (3 * (piece_type - 1) + 15)
    return key


class _Reader:
    """Bounds-checked little-endian reads from a file's bytes, with a clear error."""

    def __init__(self, data: np.ndarray, name: str) -> None:
        self.data = data
        self.name = name

    def need(self, offset: int, length: int) -> None:
        """Raise unless ``offset .. offset+length`` lies in the file."""
        if offset < 0 or offset + length > self.data.size:
            raise TablebaseError(f"{self.name}: truncated or corrupt (needs byte {offset + length}, "
                                 f"file has {self.data.size})")

    def u8(self, offset: int) -> int:
        self.need(offset, 1)
        return int(self.data[offset])

    def u16(self, offset: int) -> int:
        self.need(offset, 2)
        return int(self.data[offset]) | int(self.data[offset + 1]) << 8

    def u32(self, offset: int) -> int:
        self.need(offset, 4)
        return self.u16(offset) | self.u16(offset + 2) << 16


def _groups(codes: list[int], first: int) -> list[tuple[int, int]]:
    """(start, size) of each run of identical piece codes from slot ``first`` on."""
    groups = []
    i = first
    while i < len(codes):
        j = i
        while j < len(codes) and codes[j] == codes[i]:
            j += 1
        groups.append((i, j - i))
        i = j
    return groups


def _layout(name: str, codes: list[int], lead_span: int, lead_size: int, order: int,
            other: tuple[int, int] | None, order2: int) -> tuple[list[int], list[int], int]:
    """Group sizes, mixed-radix factors and index count of one sub-table.

    The leading group (``lead_size`` pieces, ``lead_span`` placements) and, with pawns
    on both sides, the other pawns (``other`` = (size, placements)) take the places
    ``order`` / ``order2`` in the mixed-radix number; the remaining groups follow in
    slot order, each a combination of the squares still free.
    """
    norm = [0] * MAX_SLOTS
    factor = [0] * MAX_SLOTS
    norm[0] = lead_size
    first_free = lead_size
    named: dict[int, tuple[int, int]] = {order: (0, lead_span)}
    if other is not None:
        norm[lead_size] = other[0]
        named[order2] = (lead_size, other[1])
        first_free += other[0]
    plain = []
    free = 64 - first_free
    for start, size in _groups(codes, first_free):
        norm[start] = size
        plain.append((start, comb(free, size)))
        free -= size
    sequence = []
    plain_iter = iter(plain)
    total_groups = len(plain) + len(named)
    for place in range(total_groups):
        sequence.append(named[place] if place in named else next(plain_iter, None))
    expected_named = 2 if other is not None else 1
    if None in sequence or len(named) != expected_named or any(place >= total_groups for place in named):
        raise TablebaseError(f"{name}: corrupt piece-order field")
    weight = 1
    for start, span in sequence:
        factor[start] = weight
        weight *= span
    return norm, factor, weight


def _symbol_runs(reader: _Reader, tree_ofs: int, num_syms: int) -> np.ndarray:
    """Run length - 1 of every symbol of a pair tree (iterative, rejects cycles)."""
    reader.need(tree_ofs, 3 * num_syms)
    raw = reader.data[tree_ofs:tree_ofs + 3 * num_syms].astype(np.int64).reshape(num_syms, 3)
    left = raw[:, 0] | (raw[:, 1] & 0xF) << 8
    right = raw[:, 2] << 4 | raw[:, 1] >> 4
    runs = [-1] * num_syms
    state = [0] * num_syms  # 0 new, 1 on the stack, 2 done
    for root in range(num_syms):
        if state[root]:
            continue
        stack = [root]
        while stack:
            s = stack[-1]
            if right[s] == 0xFFF:
                runs[s] = 0
                state[s] = 2
                stack.pop()
                continue
            a, b = int(left[s]), int(right[s])
            if a >= num_syms or b >= num_syms:
                raise TablebaseError(f"{reader.name}: corrupt symbol tree")
            state[s] = 1
            pending = [c for c in (a, b) if state[c] != 2]
            if not pending:
                runs[s] = runs[a] + runs[b] + 1
                if runs[s] > _MAX_RUN:
                    raise TablebaseError(f"{reader.name}: corrupt symbol tree")
                state[s] = 2
                stack.pop()
                continue
            for c in pending:
                if state[c] == 1:
                    raise TablebaseError(f"{reader.name}: corrupt symbol tree (cycle)")
                stack.append(c)
    return np.array(runs, dtype=np.int32)


class _ParsedTable:
    """Everything load time learns about one file, before packing into arrays."""

    def __init__(self, path: Path, data: np.ndarray) -> None:
        self.path = path
        self.name = path.stem
        match = _NAME.match(self.name)
        if not match:
            raise TablebaseError(f"{path.name}: not a Syzygy table name")
        reader = _Reader(data, path.name)
        self.white = _counts("K" + match.group(1))
        self.black = _counts("K" + match.group(2))
        self.pieces = sum(self.white) + sum(self.black)
        if self.pieces > MAX_TB_PIECES:
            raise TablebaseError(f"{path.name}: more than {MAX_TB_PIECES} pieces")
        if data.size % 64 != 16:
            raise TablebaseError(f"{path.name}: invalid size {data.size} (truncated or not a Syzygy file)")
        if bytes(data[:4]) != WDL_MAGIC:
            raise TablebaseError(f"{path.name}: not a Syzygy WDL file (bad magic)")
        flags = reader.u8(4)
        sides = 2 if flags & 1 else 1
        pawn_counts = sorted(c for c in (self.white[PAWN], self.black[PAWN]) if c > 0)
        self.has_pawns = bool(pawn_counts)
        if self.has_pawns:
            self.encoding = ENC_PAWNS
            self.lead = pawn_counts[0]
            self.other = self.white[PAWN] + self.black[PAWN] - self.lead
            self.files = 4
            if not flags & 2:
                raise TablebaseError(f"{path.name}: pawn table without per-file tables")
        else:
            unique = sum(1 for side in (self.white, self.black) for t in range(1, 7) if side[t] == 1)
            self.encoding = ENC_THREE_UNIQUE if unique >= 3 else ENC_TWO_KINGS
            self.lead = 3 if unique >= 3 else 2
            self.other = 0
            self.files = 1

        # Piece-order records.
        self.sub_codes: dict[tuple[int, int], list[int]] = {}
        self.sub_norm: dict[tuple[int, int], list[int]] = {}
        self.sub_factor: dict[tuple[int, int], list[int]] = {}
        self.sub_count: dict[tuple[int, int], int] = {}
        cursor = 5
        order_bytes = 2 if self.other else 1
        for file in range(self.files):
            orders = [reader.u8(cursor + k) for k in range(order_bytes)]
            reader.need(cursor + order_bytes, self.pieces)
            raw = [int(x) for x in data[cursor + order_bytes:cursor + order_bytes + self.pieces]]
            for side in range(2):
                shift = 4 * side
                codes = [(b >> shift) & 0xF for b in raw]
                order = (orders[0] >> shift) & 0xF
                order2 = (orders[1] >> shift) & 0xF if self.other else 0xF
                self._check_material(codes)
                if self.has_pawns:
                    if codes[0] & 7 != PAWN or codes.count(codes[0]) != self.lead:
                        raise TablebaseError(f"{path.name}: corrupt leading-pawn field")
                    other = (self.other, comb(48 - self.lead, self.other)) if self.other else None
                    norm, factor, count = _layout(path.name, codes, int(PAWN_SPAN[self.lead - 1, file]),
                                                  self.lead, order, other, order2)
                else:
                    span = THREE_UNIQUE_SPAN if self.encoding == ENC_THREE_UNIQUE else TWO_KINGS_SPAN
                    norm, factor, count = _layout(path.name, codes, span, self.lead, order, None, 0xF)
                self.sub_codes[file, side] = codes + [0] * (MAX_SLOTS - len(codes))
                self.sub_norm[file, side] = norm
                self.sub_factor[file, side] = factor
                self.sub_count[file, side] = count
            cursor += order_bytes + self.pieces
        cursor += cursor & 1
        first = self.sub_codes[0, 0]
        self.table_white = tuple(sum(1 for c in first[:self.pieces] if c >> 3 == 0 and c & 7 == t) for t in range(7))
        self.table_black = tuple(sum(1 for c in first[:self.pieces] if c >> 3 == 1 and c & 7 == t) for t in range(7))
        self.lead_piece = first[0] if self.has_pawns else 0

        # Compression headers, then index tables, size lists and data blocks.
        self.params: dict[tuple[int, int], list[int]] = {}
        self.runs: dict[tuple[int, int], np.ndarray] = {}
        self.bounds: dict[tuple[int, int], np.ndarray] = {}
        order_of_subs = [(f, s) for f in range(self.files) for s in range(sides)]
        region_sizes = {}
        for sub in order_of_subs:
            cursor, region_sizes[sub] = self._compression_header(reader, sub, cursor)
        for region in range(3):  # 0 block index, 1 size list, 2 blocks
            for sub in order_of_subs:
                par = self.params[sub]
                if region == 2:
                    cursor = (cursor + 63) & ~63
                column = (SP_INDEX_OFS, SP_SIZES_OFS, SP_DATA_OFS)[region]
                par[column] = cursor
                cursor += region_sizes[sub][region]
                if par[SP_KIND] == SUB_COMPRESSED:
                    reader.need(par[column], region_sizes[sub][region])

    def _check_material(self, codes: list[int]) -> None:
        """Raise unless the piece list holds the file name's material (either colouring)."""
        for colour_of_white in (0, 1):
            ok = True
            for t in range(1, 7):
                w = sum(1 for c in codes if c & 7 == t and c >> 3 == colour_of_white)
                b = sum(1 for c in codes if c & 7 == t and c >> 3 == 1 - colour_of_white)
                if w != self.white[t] or b != self.black[t] or any(c & 7 == 0 for c in codes):
                    ok = False
            if ok:
                return
        raise TablebaseError(f"{self.path.name}: piece list does not match the file name (corrupt)")

    def _compression_header(self, reader: _Reader, sub: tuple[int, int], at: int) -> tuple[int, tuple[int, int, int]]:
        """Parse one compression header; returns the next offset and region sizes."""
        par = [0] * SP_SIZE
        self.params[sub] = par
        flags = reader.u8(at)
        if flags & 0x80:
            par[SP_KIND] = SUB_CONSTANT
            par[SP_CONSTANT] = reader.u8(at + 1)
            if par[SP_CONSTANT] > 4:
                raise TablebaseError(f"{reader.name}: corrupt constant value")
            self.runs[sub] = np.zeros(0, dtype=np.int32)
            self.bounds[sub] = np.zeros(0, dtype=np.uint64)
            return at + 2, (0, 0, 0)
        par[SP_KIND] = SUB_COMPRESSED
        block_bits = reader.u8(at + 1)
        index_bits = reader.u8(at + 2)
        real_blocks = reader.u32(at + 4)
        num_blocks = real_blocks + reader.u8(at + 3)
        max_len = reader.u8(at + 8)
        min_len = reader.u8(at + 9)
        lengths = max_len - min_len + 1
        if not (1 <= min_len <= max_len <= 32 and 1 <= index_bits <= 40 and block_bits <= 24):
            raise TablebaseError(f"{reader.name}: corrupt compression header")
        first_sym_ofs = at + 10
        num_syms = reader.u16(first_sym_ofs + 2 * lengths)
        tree_ofs = first_sym_ofs + 2 * lengths + 2
        nxt = tree_ofs + 3 * num_syms + (num_syms & 1)
        first_sym = [reader.u16(first_sym_ofs + 2 * i) for i in range(lengths)]
        # Canonical Huffman: the lowest code of each length, left-aligned in 64 bits.
        lowest = [0] * lengths
        for i in range(lengths - 2, -1, -1):
            lowest[i] = (lowest[i + 1] + first_sym[i] - first_sym[i + 1]) // 2
        mask = (1 << 64) - 1
        bounds = np.array([(lowest[i] << (64 - (min_len + i))) & mask for i in range(lengths)], dtype=np.uint64)
        self.runs[sub] = _symbol_runs(reader, tree_ofs, num_syms)
        self.bounds[sub] = bounds
        count = self.sub_count[sub]
        num_indices = (count + (1 << index_bits) - 1) >> index_bits
        par[SP_BLOCK_BITS] = block_bits
        par[SP_INDEX_BITS] = index_bits
        par[SP_NUM_BLOCKS] = num_blocks
        par[SP_MIN_LEN] = min_len
        par[SP_MAX_LEN] = max_len
        par[SP_FIRST_SYM_OFS] = first_sym_ofs
        par[SP_TREE_OFS] = tree_ofs
        par[SP_NUM_SYMS] = num_syms
        par[SP_INDEX_COUNT] = count
        return nxt, (6 * num_indices, 2 * num_blocks, real_blocks << block_bits)


def _map_file(path: Path) -> np.ndarray:
    """Read-only numpy view of a memory-mapped file (kept alive in ``_MAPPED``)."""
    with open(path, "rb") as handle:
        if os.fstat(handle.fileno()).st_size == 0:
            raise TablebaseError(f"{path.name}: empty file")
        mapping = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    if hasattr(mapping, "madvise") and hasattr(mmap, "MADV_RANDOM"):
        mapping.madvise(mmap.MADV_RANDOM)
    array = np.frombuffer(mapping, dtype=np.uint8)
    _MAPPED.append((mapping, array))
    return array


def _pack(tables: list[_ParsedTable], arrays: list[np.ndarray]) -> SyzygyTables:
    """Pack the parsed tables into the kernel namedtuple."""
    count = len(tables)
    subs = 8 * count
    table_info = np.zeros((count, TI_SIZE), dtype=np.int32)
    sub_pieces = np.zeros((subs, MAX_SLOTS), dtype=np.int8)
    sub_norm = np.zeros((subs, MAX_SLOTS), dtype=np.int8)
    sub_factor = np.zeros((subs, MAX_SLOTS), dtype=np.int64)
    sub_param = np.zeros((subs, SP_SIZE), dtype=np.int64)
    runs, bounds = [], []
    run_total = bound_total = 0
    entries: dict[int, int] = {}
    for t, parsed in enumerate(tables):
        table_info[t] = (parsed.pieces, parsed.encoding, parsed.lead, parsed.other, parsed.lead_piece, parsed.files)
        for (file, side), par in parsed.params.items():
            s = 8 * t + 2 * file + side
            sub_pieces[s] = parsed.sub_codes[file, side]
            sub_norm[s] = parsed.sub_norm[file, side]
            sub_factor[s] = parsed.sub_factor[file, side]
            par = list(par)
            par[SP_SYMLEN_START] = run_total
            par[SP_BASE_START] = bound_total
            sub_param[s] = par
            runs.append(parsed.runs[file, side])
            bounds.append(parsed.bounds[file, side])
            run_total += parsed.runs[file, side].size
            bound_total += parsed.bounds[file, side].size
        own = _key_of(parsed.table_white, parsed.table_black)
        mirrored = _key_of(parsed.table_black, parsed.table_white)
        if own == mirrored:
            entries[own] = 4 * t + MODE_SYMMETRIC
        else:
            entries[own] = 4 * t + MODE_SAME
            entries[mirrored] = 4 * t + MODE_FLIPPED
    bits = 4
    while (1 << bits) < 4 * max(1, len(entries)):
        bits += 1
    hash_key = np.full(1 << bits, -1, dtype=np.int64)
    hash_entry = np.zeros(1 << bits, dtype=np.int32)
    for key, entry in entries.items():
        slot = ((key * int(_HASH_MULTIPLIER)) & ((1 << 64) - 1)) >> (64 - bits)
        while hash_key[slot] >= 0:
            slot = (slot + 1) & ((1 << bits) - 1)
        hash_key[slot] = key
        hash_entry[slot] = entry
    max_pieces = max((p.pieces for p in tables), default=0)
    meta = np.array([max_pieces, bits, count, 0], dtype=np.int64)
    file_addr = np.array([a.ctypes.data for a in arrays], dtype=np.int64)
    file_size = np.array([a.size for a in arrays], dtype=np.int64)
    return SyzygyTables(
        meta, hash_key, hash_entry, file_addr, file_size, table_info, sub_pieces, sub_norm, sub_factor,
        sub_param, np.concatenate(runs) if runs else np.zeros(0, dtype=np.int32),
        np.concatenate(bounds) if bounds else np.zeros(0, dtype=np.uint64),
    )


# The search's form of the tables: one uint8 array.  A namedtuple argument costs the
# recursive search some hundred machine words at every node (see ``engine.jit.new_record``);
# the search needs the tables only when it probes, and then unpacks this array into
# views.  Layout: a header int64[N_TB_FIELDS, 2] of (byte offset, byte length) per
# field, then each field's bytes from an 8-byte boundary.
TB_FIELD_DTYPES = (np.int64, np.int64, np.int32, np.int64, np.int64, np.int32,
                   np.int8, np.int8, np.int64, np.int64, np.int32, np.uint64)
N_TB_FIELDS = len(TB_FIELD_DTYPES)
TB_HEADER_BYTES = N_TB_FIELDS * 2 * 8


def pack_tablebases(tb: SyzygyTables) -> np.ndarray:
    """The tables as one uint8 array for the search (``unpack_tablebases`` reads it)."""
    header = np.zeros((N_TB_FIELDS, 2), dtype=np.int64)
    chunks, offset = [], TB_HEADER_BYTES
    for field, (array, dtype) in enumerate(zip(tb, TB_FIELD_DTYPES, strict=True)):
        data = np.ascontiguousarray(array, dtype=dtype).view(np.uint8).ravel()
        header[field] = (offset, data.size)
        chunks.append(data)
        offset += -(-data.size // 8) * 8
    blob = np.zeros(offset, dtype=np.uint8)
    blob[:TB_HEADER_BYTES] = header.view(np.uint8).ravel()
    for field, data in enumerate(chunks):
        blob[header[field, 0]:header[field, 0] + data.size] = data
    return blob


@hot_njit(inline="always")
def _tb_field(blob, header, field):
    """The bytes of one field of a packed table set."""
    return blob[header[field, 0]:header[field, 0] + header[field, 1]]


@hot_njit(inline="always")
def unpack_tablebases(blob):
    """``SyzygyTables`` of views into an array from ``pack_tablebases`` (nothing is copied)."""
    header = blob[:TB_HEADER_BYTES].view(np.int64).reshape((N_TB_FIELDS, 2))
    table_info = _tb_field(blob, header, 5).view(np.int32)
    sub_pieces = _tb_field(blob, header, 6).view(np.int8)
    sub_norm = _tb_field(blob, header, 7).view(np.int8)
    sub_factor = _tb_field(blob, header, 8).view(np.int64)
    sub_param = _tb_field(blob, header, 9).view(np.int64)
    return SyzygyTables(
        _tb_field(blob, header, 0).view(np.int64),
        _tb_field(blob, header, 1).view(np.int64),
        _tb_field(blob, header, 2).view(np.int32),
        _tb_field(blob, header, 3).view(np.int64),
        _tb_field(blob, header, 4).view(np.int64),
        table_info.reshape((table_info.shape[0] // TI_SIZE, TI_SIZE)),
        sub_pieces.reshape((sub_pieces.shape[0] // MAX_SLOTS, MAX_SLOTS)),
        sub_norm.reshape((sub_norm.shape[0] // MAX_SLOTS, MAX_SLOTS)),
        sub_factor.reshape((sub_factor.shape[0] // MAX_SLOTS, MAX_SLOTS)),
        sub_param.reshape((sub_param.shape[0] // SP_SIZE, SP_SIZE)),
        _tb_field(blob, header, 10).view(np.int32),
        _tb_field(blob, header, 11).view(np.uint64),
    )


def load_tablebases(paths: str | os.PathLike | list) -> tuple[SyzygyTables, int, list[str]]:
    """Map every ``*.rtbw`` under the given directories (``:``/``;``-separated string or list).

    Returns ``(tables, max_pieces, messages)``: ``max_pieces`` is 0 when nothing was
    loaded; ``messages`` lists, one line each, every directory or file skipped and
    why.  The first file found for a material balance wins.
    """
    if isinstance(paths, (str, os.PathLike)):
        separators = r"[;]" if os.name == "nt" else r"[:;]"  # keep Windows drive letters whole
        parts = [p for p in re.split(separators, os.fspath(paths)) if p.strip()]
    else:
        parts = [os.fspath(p) for p in paths]
    messages: list[str] = []
    parsed: list[_ParsedTable] = []
    arrays: list[np.ndarray] = []
    seen: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
    for part in parts:
        directory = Path(part.strip())
        if not directory.is_dir():
            messages.append(f"syzygy: {directory} is not a directory")
            continue
        for path in sorted(directory.glob("*.rtbw")):
            try:
                data = _map_file(path)
                table = _ParsedTable(path, data)
            except (OSError, ValueError, IndexError, OverflowError) as error:  # TablebaseError is a ValueError
                messages.append(f"syzygy: skipped {path}: {error}")
                continue
            material = (table.white, table.black)
            if material in seen or (table.black, table.white) in seen:
                messages.append(f"syzygy: skipped {path}: duplicate of an earlier {table.name}")
                continue
            seen.add(material)
            parsed.append(table)
            arrays.append(data)
    tables = _pack(parsed, arrays)
    return tables, int(tables.meta[META_MAX_PIECES]), messages


def empty_tablebases() -> SyzygyTables:
    """Tables with nothing loaded (every probe answers TB_FAIL, or 0 for KvK)."""
    return _pack([], [])


def probe_wdl_board(tb: SyzygyTables, board, scratch: np.ndarray | None = None) -> int | None:
    """WDL of an ``engine.board.Board`` (python-chess ``probe_wdl`` semantics), None if unknown."""
    if scratch is None:
        scratch = make_scratch()
    value = int(probe_wdl(tb, board.pos, board.tab, scratch))
    return None if value == TB_FAIL else value
