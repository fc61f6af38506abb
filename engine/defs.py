"""The engine's vocabulary: colours, pieces, squares and array layouts.

Squares are numbered as in python-chess: a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ...,
h8 = 63, so ``rank = sq >> 3`` and ``file = sq & 7``.  A bitboard is a ``np.uint64``
whose bit ``sq`` is set when square ``sq`` belongs to the set.

A piece code is ``colour << 3 | piece_type`` with piece types 1..6 (pawn .. king),
so white pieces are 1..6, black pieces 9..14 and 0 is an empty square.

All constants are plain module globals: numba freezes them into the kernels.
"""

import numpy as np

WHITE, BLACK = 0, 1

PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = 1, 2, 3, 4, 5, 6  # 0: no piece (an empty square)
PIECE_SYMBOLS = ".PNBRQK..pnbrqk."  # indexed by piece code

NO_SQUARE = 64
MAX_PLY = 128  # deepest search path the stacks are sized for
MAX_MOVES = 256  # legal moves never exceed 218
GAME_STACK = 4096  # plies of game history plus search path kept in a Position

# Layout of Position.state (int32 array).
ST_SIDE = 0  # colour to move
ST_EP = 1  # en-passant square, or NO_SQUARE (stored only when a pawn can capture)
ST_CASTLING = 2  # castling rights, bit r for right r: 0 white h-side, 1 white a-side, 2 black h-side, 3 black
#                 a-side (the Polyglot key table's order; Position.castle_rook[r] holds its rook)
ST_HALFMOVE = 3  # plies since the last capture or pawn move
ST_FULLMOVE = 4  # FEN full-move number
ST_PLY = 5  # index of the current entry in the history stacks
ST_CHESS960 = 6  # 1 when castling moves are written king-takes-rook
ST_SIZE = 8

# Layout of one row of Position.history (int32 array, one row per ply made).
H_MOVE = 0  # the move that left this position
H_CAPTURED = 1  # piece code it captured (0 if none)
H_CASTLING = 2  # castling rights before it
H_EP = 3  # en-passant square before it
H_HALFMOVE = 4  # half-move clock before it
H_SIZE = 5

U64_ZERO = np.uint64(0)
U64_ONE = np.uint64(1)
U64_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
FILE_A = np.uint64(0x0101010101010101)
FILE_H = np.uint64(0x8080808080808080)
RANK_1 = np.uint64(0x00000000000000FF)
RANK_3 = np.uint64(0x0000000000FF0000)
RANK_6 = np.uint64(0x0000FF0000000000)
RANK_8 = np.uint64(0xFF00000000000000)
BACK_RANKS = RANK_1 | RANK_8
