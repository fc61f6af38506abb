"""Static evaluation: a tapered weighted sum of features, f = w1*f1 + ... + wn*fn.

Every weight lives in one table, ``weights int32[N_TERMS, 2]``: row ``t`` holds the
middlegame (column 0) and endgame (column 1) value of feature ``t`` in centipawns.
The rows are laid out in blocks (``MATERIAL``, ``PSQT``, ``MOBILITY_KNIGHT``, ...), each
a named start index below; ``TERM_NAMES[t]`` names every row (``psqt.knight.c3``).
The numbers themselves are data, read from ``engine/weights.txt`` (one ``name mg eg``
line per row), which ``python -m engine.tools.tune`` writes.

The kernel counts each feature for each colour (how many isolated pawns White has,
how many safe squares Black's knight on c6 reaches, ...), multiplies the counts by the
weights and takes White's sum minus Black's, separately for middlegame and endgame.
The endgame sum is scaled for drawish material (``scale``/64: opposite-coloured
bishops, no pawns and at most a minor piece ahead), the two are blended by the game
phase (24 with every minor and major piece on the board, 0 with none), fixed mop-up
terms drive a lone king to the edge (to the bishop's corner against bishop and
knight), and the result is returned for the side to move.

The kernels take an ``Evaluator``, a record (``EVALUATOR_DTYPE``) of seven arrays:

    weights         int32[N_TERMS, 2]        the weight table (read only)
    traced          int32[1]                 1 when the kernel records what it counts
    feature_counts  int32[2, TRACE_WIDTH]    feature counts per colour, when traced
    attacks         uint64[2, ATTACK_KINDS]  scratch: squares attacked by each colour, by kind
    pawn_cache      uint64[2**14, 5]         pawn structure by pawn placement (see ``_pawns``)
    piece_square    int32[2 * 8 * 64 * 2]    material + piece-square weight of (colour, piece
                                             type, square), mg and eg: ``piece_square_index``
    optional_on     int32[N_OPTIONAL]        1 for each optional term whose weights are not
                                             all zero (see ``OPTIONAL_ROWS``)

Some terms are optional (``OPTIONAL_ROWS``: king danger in attack units, a bishop
walled in its corner, knights and rooks by how closed the pawns are, space, pawn push
threats, complexity, which moves the endgame score towards or away from zero by how
convertible the advantage is, minor pieces behind a pawn, a bishop's rammed pawns and
the long diagonal, the king's defenders and its distance to the pawns, a passed pawn's
safe push, threats by the king and on weak pawns, and threats by attacker and
victim).  The search computes one only when the weight table gives it a nonzero
weight (``optional_on``, set by ``make_evaluator``); a traced evaluation computes them
all.  So a new term costs nothing until a fitted weight file switches it on, and an
``EvalFile`` is all a match needs to try it.

Each concept has one set of rows: isolated, backward and connected pawns, the king's
pawn shelter and the enemy's pawn storm are counted only in their detailed tables (by
file, rank or square).  The coarse twins they once had beside them were folded into
those tables on 2026-12-06 (``LEGACY_FOLDS``), which left every score unchanged.

When ``traced`` is set the kernel adds every feature count it uses to
``feature_counts[colour, term]`` and stores phase, scale and mop-up after the terms:
``eval`` prints each feature's contribution from it, and the tuner builds its feature
matrix from it.  The search's Evaluator is not traced; the check costs one predictable
branch.  ``attacks`` and ``pawn_cache`` are written, so each searching thread needs its
own Evaluator; changing the weights needs a new one (the cache and ``piece_square``
hold weighted sums).

What is kept rather than recomputed (the "incremental" part of the evaluation):
the pawn structure, with the pawns' material and piece-square terms, is cached by
pawn placement, and the material and piece-square weight of every other piece is
one lookup in ``piece_square``, folded in the piece loop that mobility needs anyway.
Measured in a jitted loop over 40 positions (``python -m engine.tools.eval_speed``),
that leaves nothing for updates in make/unmake to win; see the README.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.bitboards import bishop_attacks, king_attacks, knight_attacks, rook_attacks, square_bb
from engine.defs import (
    BISHOP,
    FILE_A,
    FILE_H,
    KING,
    KNIGHT,
    PAWN,
    QUEEN,
    RANK_3,
    RANK_6,
    ROOK,
    ST_SIDE,
    U64_ONE,
    U64_ZERO,
)
from engine.intrinsics import lsb, msb, popcount
from engine.jit import hot_njit, new_record, njit

# ---------------------------------------------------------------------------
# The term layout
# ---------------------------------------------------------------------------

PIECE_NAMES = ("pawn", "knight", "bishop", "rook", "queen", "king")
TERM_NAMES: list[str] = []


def _block(name: str, labels) -> int:
    """Append the rows ``name.label`` to the layout; return the index of the first."""
    start = len(TERM_NAMES)
    TERM_NAMES.extend(f"{name}.{label}" for label in labels)
    return start


def _board_labels() -> list[str]:
    """Square names a1, b1, ..., h8, seen from the side the row is counted for."""
    return [f"{'abcdefgh'[f]}{r + 1}" for r in range(8) for f in range(8)]


MAX_DANGER_UNITS = 24   # king danger: attack units beyond this share the last row
DANGER_POINTS_PER_ROW = 8   # king danger index: danger points per row of its table
DANGER_INDEX_ROWS = 32      # points beyond the last row's share it
MAX_DEFENDERS = 8       # king defenders: pawns and minor pieces of the king's own zone (at most 8)
MAX_CLOSEDNESS = 8      # closedness runs from 0 (open) to this
# Complexity: what makes an endgame advantage easy or hard to turn into a win, counted
# over both colours (``_complexity`` says how it is applied).
COMPLEXITY_LABELS = ("total_pawns", "passed_pawns", "pawn_flanks", "pawn_endgame", "adjustment")
C_TOTAL_PAWNS, C_PASSED_PAWNS, C_PAWN_FLANKS, C_PAWN_ENDGAME, C_ADJUSTMENT = range(len(COMPLEXITY_LABELS))

MATERIAL = _block("material", PIECE_NAMES[:5])                      # + piece type - 1
PSQT = _block("psqt", [f"{p}.{s}" for p in PIECE_NAMES for s in _board_labels()])
#   PSQT + (piece type - 1) * 64 + relative square (a1 = 0, rank flipped for Black)
MOBILITY_KNIGHT = _block("mobility.knight", range(9))               # + safe squares reached
MOBILITY_BISHOP = _block("mobility.bishop", range(14))
MOBILITY_ROOK = _block("mobility.rook", range(15))
MOBILITY_QUEEN = _block("mobility.queen", range(28))
PAWN_DOUBLED = _block("pawns", ["doubled"])
PASSED = _block("passed.rank", range(8))                            # + relative rank
PASSED_FREE = _block("passed.free_path", range(8))                  # + relative rank
CANDIDATE = _block("passed.candidate", range(8))                    # + relative rank
PASSED_OWN_KING = _block("passed.own_king_distance", range(8))      # x distance, + rank
PASSED_ENEMY_KING = _block("passed.enemy_king_distance", range(8))  # x distance, + rank
PASSED_SAFE_PUSH = _block("passed.safe_push", range(8))             # + relative rank (optional)
KING_ATTACKERS = _block("king_safety.attackers", range(8))          # + pieces hitting the zone
KING_ZONE_ATTACKS = _block("king_safety.zone_attacks", PIECE_NAMES[1:5])  # x squares
SAFE_CHECKS = _block("king_safety.safe_checks", PIECE_NAMES[1:5])   # x squares
KING_OPEN_FILE = _block("king_safety", ["open_file"])
KING_DANGER = _block("king_safety.danger", range(1, MAX_DANGER_UNITS + 1))  # + units - 1 (optional)
KING_DANGER_INDEX = _block("king_safety.danger_index",
                           [f"{row * DANGER_POINTS_PER_ROW}+" for row in range(DANGER_INDEX_ROWS)])
# ... + min(danger points // DANGER_POINTS_PER_ROW, DANGER_INDEX_ROWS - 1), for points > 0 (optional)
KING_DEFENDERS = _block("king_safety.defenders", range(MAX_DEFENDERS + 1))  # + defenders (optional)
KING_PAWN_FILE = _block("king.pawn_file_distance", range(8))        # + files to the nearest pawn (optional)
# The king's pawn shelter and the enemy's pawn storm file by file: for each of the three
# files around the king, how far ahead its nearest own pawn stands, and how far the
# nearest enemy pawn, rammed or not.  Files e-h read as their mirror a-d.
SHELTER_FILES = ("a", "b", "c", "d")
KING_SHELTER = _block("king_safety.shelter", [f"{kind}.{f}.{d}" for kind in ("side_file", "king_file")
                                              for f in SHELTER_FILES for d in range(8)])
# ... + 32 on the king's own file + 8 * mirrored file + rank distance (7: no pawn)
KING_STORM_FILE = _block("king_safety.storm_file", [f"{kind}.{f}.{d}" for kind in ("free", "blocked")
                                                    for f in SHELTER_FILES for d in range(8)])
# ... + 32 when our pawn stands just in front of it + 8 * mirrored file + rank distance (7: none)
# Pawn structure: connected pawns by square (files e-h read as their mirror a-d),
# isolated pawns by file, and isolated and backward pawns by whether an enemy pawn
# stands ahead on the file (on an open file a rook attacks them).
PAWN_CONNECTED_SQUARE = _block("pawns.connected_square", [f"{'abcd'[f]}{r + 1}" for r in range(8) for f in range(4)])
# ... + 4 * relative rank + mirrored file
PAWN_ISOLATED_FILE = _block("pawns.isolated_file", [f"{kind}.{f}" for kind in ("closed", "open")
                                                    for f in SHELTER_FILES])
# ... + 4 on an open file + mirrored file
PAWN_BACKWARD_RANK = _block("pawns.backward_rank", [f"{kind}.{r}" for kind in ("closed", "open") for r in range(8)])
# ... + 8 on an open file + relative rank
# Every threat on an enemy piece or pawn no enemy pawn guards (optional), by attacker
# (minor piece, rook, queen) and victim: the base threats above count only attacks by
# something cheaper.
THREAT_MINOR_ON = _block("threats.minor_on", PIECE_NAMES[:5])     # + victim type - 1
THREAT_ROOK_ON = _block("threats.rook_on", PIECE_NAMES[:5])
THREAT_QUEEN_ON = _block("threats.queen_on", PIECE_NAMES[:5])
BISHOP_PAIR = _block("pieces", ["bishop_pair"])
ROOK_OPEN_FILE = _block("pieces", ["rook_open_file"])
ROOK_HALF_OPEN_FILE = _block("pieces", ["rook_half_open_file"])
ROOK_ON_SEVENTH = _block("pieces", ["rook_on_seventh"])
OUTPOST = _block("pieces.outpost", ["knight", "bishop"])
CORNERED_BISHOP = _block("pieces", ["cornered_bishop"])             # (optional)
MINOR_BEHIND_PAWN = _block("pieces.minor_behind_pawn", ["knight", "bishop"])  # + piece type - 2 (optional)
BISHOP_RAMMED_PAWNS = _block("pieces", ["bishop_rammed_pawns"])     # x pawns, per bishop (optional)
BISHOP_LONG_DIAGONAL = _block("pieces", ["bishop_long_diagonal"])   # (optional, with the row above)
CLOSED_KNIGHT = _block("closedness.knight", range(MAX_CLOSEDNESS + 1))  # + closedness (optional)
CLOSED_ROOK = _block("closedness.rook", range(MAX_CLOSEDNESS + 1))      # + closedness (optional)
SPACE = _block("space", ["squares"])                                # x squares (optional)
THREAT_BY_PAWN = _block("threats.by_pawn", PIECE_NAMES[1:5])        # + victim type - 2
THREAT_BY_MINOR = _block("threats.by_minor", ["rook", "queen"])     # + victim type - 4
THREAT_BY_ROOK = _block("threats.by_rook", ["queen"])
HANGING = _block("threats", ["hanging"])
PAWN_PUSH_THREAT = _block("threats", ["pawn_push"])                 # x pieces (optional)
THREAT_BY_KING = _block("threats", ["by_king"])                     # x pieces (optional)
WEAK_PAWN = _block("threats", ["weak_pawn"])                        # x pawns (optional, with the row above)
COMPLEXITY = _block("complexity", COMPLEXITY_LABELS)                # x count, eg only (optional)
TEMPO = _block("tempo", ["side_to_move"])
N_TERMS = len(TERM_NAMES)

TRACE_PHASE, TRACE_SCALE, TRACE_MOPUP = N_TERMS, N_TERMS + 1, N_TERMS + 2

# Optional terms: the search computes one only when its weights are not all zero (a
# traced evaluation always does, so the tuner can fit it).  A weight table that leaves
# them at zero plays exactly as if they did not exist, at no cost in speed; that is how
# a new term is tried: fitted, handed to the engine in an EvalFile, judged by games.
(OPT_KING_DANGER, OPT_CORNERED_BISHOP, OPT_CLOSEDNESS, OPT_SPACE, OPT_PAWN_PUSH, OPT_COMPLEXITY,
 OPT_MINOR_BEHIND_PAWN, OPT_BISHOP_PAWNS, OPT_KING_DEFENDERS, OPT_KING_PAWN_FILE, OPT_PASSED_SAFE_PUSH,
 OPT_MORE_THREATS, OPT_THREAT_MATRIX, OPT_KING_DANGER_INDEX) = range(14)
OPTIONAL_ROWS = (   # (optional term, first row, rows)
    (OPT_KING_DANGER, KING_DANGER, MAX_DANGER_UNITS),
    (OPT_CORNERED_BISHOP, CORNERED_BISHOP, 1),
    (OPT_CLOSEDNESS, CLOSED_KNIGHT, 2 * (MAX_CLOSEDNESS + 1)),   # knight and rook rows
    (OPT_SPACE, SPACE, 1),
    (OPT_PAWN_PUSH, PAWN_PUSH_THREAT, 1),
    (OPT_COMPLEXITY, COMPLEXITY, len(COMPLEXITY_LABELS)),
    (OPT_MINOR_BEHIND_PAWN, MINOR_BEHIND_PAWN, 2),
    (OPT_BISHOP_PAWNS, BISHOP_RAMMED_PAWNS, 2),                  # rammed pawns and long diagonal
    (OPT_KING_DEFENDERS, KING_DEFENDERS, MAX_DEFENDERS + 1),
    (OPT_KING_PAWN_FILE, KING_PAWN_FILE, 8),
    (OPT_PASSED_SAFE_PUSH, PASSED_SAFE_PUSH, 8),
    (OPT_MORE_THREATS, THREAT_BY_KING, 2),                       # by the king, and weak pawns
    (OPT_THREAT_MATRIX, THREAT_MINOR_ON, 15),                    # by minor, rook, queen
    (OPT_KING_DANGER_INDEX, KING_DANGER_INDEX, DANGER_INDEX_ROWS),
)
N_OPTIONAL = len(OPTIONAL_ROWS)
OPTIONAL_TERM_NAMES = frozenset(TERM_NAMES[first + i] for _, first, rows in OPTIONAL_ROWS for i in range(rows))
# Rows a weights file may leave out: the optional terms (read as 0, switched off) and the
# piece-square squares of files e-h (read as their mirror image, as before ce28320, 2026-12-03).
MIRRORED_PSQT_NAMES = frozenset(TERM_NAMES[PSQT + piece * 64 + rel] for piece in range(len(PIECE_NAMES))
                                for rel in range(64) if rel & 7 >= 4)
TRACE_WIDTH = N_TERMS + 3


def _legacy_folds() -> dict[str, list[int]]:
    """Rows of weight files written before 2026-12-06 that the layout no longer has, each
    with the rows that now carry it.  Each such term was the coarse twin of a detailed one
    (isolated pawns beside isolated pawns by file, ...): every feature it counted is
    counted by exactly one row of its twin, so adding its weight to each of those rows
    scores every position as before."""
    folds = {"pawns.isolated": [PAWN_ISOLATED_FILE + i for i in range(8)],
             "pawns.backward": [PAWN_BACKWARD_RANK + i for i in range(16)]}
    for rank in range(8):
        folds[f"pawns.connected.{rank}"] = [PAWN_CONNECTED_SQUARE + 4 * rank + f for f in range(4)]
    shelter_rows = [(kind, f) for kind in (0, 32) for f in range(4)]
    for label, distances in (("near", (0, 1)), ("far", range(2, 7)), ("missing", (7,))):
        folds[f"king_safety.shield.{label}"] = [KING_SHELTER + kind + 8 * f + d for kind, f in shelter_rows
                                                for d in distances]
    for distance in range(1, 5):
        folds[f"king_safety.storm.{distance}"] = [KING_STORM_FILE + kind + 8 * f + distance
                                                  for kind, f in shelter_rows]
    return folds


LEGACY_FOLDS = _legacy_folds()
LEGACY_TERM_NAMES = frozenset(LEGACY_FOLDS)
# A file from before the fold may leave the detailed tables out: they read as 0, plus the
# coarse weight folded into them, as they scored then.
FOLDED_TERM_NAMES = frozenset(name for name in TERM_NAMES if name.startswith((
    "pawns.connected_square.", "pawns.isolated_file.", "pawns.backward_rank.", "king_safety.shelter.",
    "king_safety.storm_file.")))
OMITTABLE_TERM_NAMES = OPTIONAL_TERM_NAMES | MIRRORED_PSQT_NAMES | FOLDED_TERM_NAMES

A_PAWN, A_KNIGHT, A_BISHOP, A_ROOK, A_QUEEN, A_KING, A_ALL = 0, 1, 2, 3, 4, 5, 6
A_TWICE = 7   # squares attacked at least twice (filled only for the king danger index)
ATTACK_KINDS = 8

# ---------------------------------------------------------------------------
# Fixed (untuned) constants
# ---------------------------------------------------------------------------

MAX_PHASE = 24
PHASE_KNIGHT, PHASE_BISHOP, PHASE_ROOK, PHASE_QUEEN = 1, 1, 2, 4
SCALE_NORMAL = 64
SCALE_OPPOSITE_BISHOPS = 32       # bishops of opposite colours and pawns only
SCALE_MINOR_AHEAD = 16            # no pawns, at most a minor piece more (KRKB, KBNKB...)
SCALE_CANNOT_WIN = 0              # no pawns and at most a minor piece at all
MOPUP_EDGE = 30                   # per step of the lone king from the centre
MOPUP_CORNER = 40                 # per step closer to the bishop's corner (KBNK)
MOPUP_KINGS_CLOSE = 12            # per step closer of the attacking king
MOPUP_BONUS = 200                 # a won ending is worth more than its material says
# King danger in attack units: what a piece hitting the enemy king's zone adds (by
# piece type), and what each kind of safe check adds; fewer than two attackers
# without the queen make no attack.
ZONE_ATTACK_UNITS = np.array([0, 0, 2, 2, 3, 5, 0, 0], dtype=np.int64)   # by piece type
CHECK_UNITS_KNIGHT, CHECK_UNITS_BISHOP, CHECK_UNITS_ROOK, CHECK_UNITS_QUEEN = 3, 2, 4, 4
# The king danger index (optional): how exposed a king is, in danger points, one row of a
# fitted table per DANGER_POINTS_PER_ROW points, so that the fit gives the table its shape
# (a quadratic rise in the middlegame and a linear one in the endgame is what engines find).
# It counts only when the attacker has two pieces on the king's area, or one and a queen.
# The inputs and their relative sizes follow Ethereal 12's king safety (its KS* constants,
# here at a quarter of its scale); they are fixed, the table is fitted.
DANGER_ATTACKER_WEIGHT = np.array([0, 0, 4, 2, 3, 2, 0, 0], dtype=np.int64)  # by piece type, x attackers
DANGER_AREA_ATTACK = 11     # per attack on a square of the area, scaled to a nine-square area
DANGER_WEAK_SQUARE = 10     # per square of the area we attack that only the king or queen defends, once at most
DANGER_SHIELD_PAWN = -6     # per defending pawn in the area on a square that is not weak
DANGER_NO_QUEEN = -69       # the attacker has no queen
DANGER_SAFE_CHECK_KNIGHT, DANGER_SAFE_CHECK_BISHOP = 31, 13   # per square a safe check can be given from
DANGER_SAFE_CHECK_ROOK, DANGER_SAFE_CHECK_QUEEN = 24, 24
DANGER_ADJUSTMENT = -5
NO_KING_ATTACK = -(1 << 30)  # danger points of an attack that does not count
QUEEN_FLANK = np.uint64(0x0F0F0F0F0F0F0F0F)   # files a-d (complexity: pawns on both flanks)
KING_FLANK = np.uint64(0xF0F0F0F0F0F0F0F0)    # files e-h
# Space: the centre files c-f on a side's own ranks 2-4.
SPACE_AREA = np.array([0x3C3C3C00, 0x003C3C3C00000000], dtype=np.uint64)
# A bishop in its corner (a1/h1, or a8/h8 for Black) walled in by its own pawn (b2/g2,
# b7/g7): a Chess960 start can put it there.  CORNER_WALL[colour, corner] = (bishop, pawn).
CORNER_WALL = np.array([[[0, 9], [7, 14]], [[56, 49], [63, 54]]], dtype=np.int64)

DARK_SQUARES = np.uint64(0xAA55AA55AA55AA55)
CENTRE_SQUARES = np.uint64(0x0000001818000000)    # d4, e4, d5, e5
# The two long diagonals (a1-h8, h1-a8) outside the centre: a bishop there that sees
# two centre squares through everything but pawns holds the diagonal.
LONG_DIAGONALS = np.uint64((0x8040201008040201 | 0x0102040810204080) & ~0x0000001818000000)
U64_SEVEN, U64_EIGHT, U64_NINE = np.uint64(7), np.uint64(8), np.uint64(9)


def _masks() -> tuple[np.ndarray, ...]:
    """Pawn-structure masks: forward file, passed span, attack span, adjacent files, centre distance."""
    forward = np.zeros((2, 64), dtype=np.uint64)
    passed_span = np.zeros((2, 64), dtype=np.uint64)
    attack_span = np.zeros((2, 64), dtype=np.uint64)
    adjacent = np.zeros(8, dtype=np.uint64)
    centre = np.zeros(64, dtype=np.int64)
    for sq in range(64):
        f, r = sq & 7, sq >> 3
        centre[sq] = int(max(abs(f - 3.5), abs(r - 3.5)) - 0.5)
        for colour, ahead in ((0, range(r + 1, 8)), (1, range(r - 1, -1, -1))):
            for rr in ahead:
                for ff in (f - 1, f, f + 1):
                    if 0 <= ff < 8:
                        bit = np.uint64(1 << (rr * 8 + ff))
                        passed_span[colour, sq] |= bit
                        if ff == f:
                            forward[colour, sq] |= bit
                        else:
                            attack_span[colour, sq] |= bit
    for f in range(8):
        for ff in (f - 1, f + 1):
            if 0 <= ff < 8:
                adjacent[f] |= np.uint64(0x0101010101010101 << ff)
    return forward, passed_span, attack_span, adjacent, centre


FORWARD_FILE, PASSED_SPAN, ATTACK_SPAN, ADJACENT_FILES, CENTRE_DISTANCE = _masks()



@njit(inline="always")
def piece_square_index(colour, piece_type, sq):
    """Index of the (mg) weight of a piece in ``Evaluator.piece_square``; eg is the next one."""
    return ((colour * 8 + piece_type) * 64 + sq) * 2

PAWN_CACHE_BITS = 14                      # 16,384 rows of 5 uint64: 640 KB per Evaluator
PAWN_CACHE_SHIFT = np.uint64(64 - PAWN_CACHE_BITS)
PAWN_HASH_WHITE = np.uint64(0x9E3779B97F4A7C15)  # odd multipliers spread the bits upwards
PAWN_HASH_BLACK = np.uint64(0xC2B2AE3D27D4EB4F)
PAWN_SCORE_OFFSET = 1 << 30

EVALUATOR_DTYPE = np.dtype([
    ("weights", np.int32, (N_TERMS, 2)),
    ("traced", np.int32, (1,)),
    ("feature_counts", np.int32, (2, TRACE_WIDTH)),
    ("attacks", np.uint64, (2, ATTACK_KINDS)),
    ("pawn_cache", np.uint64, (1 << PAWN_CACHE_BITS, 5)),
    ("piece_square", np.int32, (2 * 8 * 64 * 2,)),
    ("optional_on", np.int32, (N_OPTIONAL,)),
], align=True)
Evaluator = np.record  # one record of EVALUATOR_DTYPE


# ---------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------

@njit(inline="always")
def _term(mg, eg, ev, colour, term, count):
    """Add ``count`` times weight ``term`` to (mg, eg), recording the count when tracing."""
    if ev.traced[0] != 0:
        ev.feature_counts[colour, term] += count
    return mg + count * ev.weights[term, 0], eg + count * ev.weights[term, 1]


@njit(inline="always")
def _computes(ev, optional_term):
    """Whether this evaluation computes an optional term: when tracing, or when it has weights."""
    return ev.traced[0] != 0 or ev.optional_on[optional_term] != 0


@njit(inline="always")
def _divide(a, b):
    """a / b rounded towards zero, so that a position and its mirror image score alike."""
    return a // b if a >= 0 else -((-a) // b)


@njit(inline="always")
def _distance(a, b):
    """King (Chebyshev) distance between two squares."""
    return max(abs((a & 7) - (b & 7)), abs((a >> 3) - (b >> 3)))


@njit(inline="always")
def _pawn_attack_span(pawns, colour):
    """Squares attacked by the pawns ``pawns`` of ``colour``."""
    if colour == 0:
        return ((pawns & ~FILE_A) << U64_SEVEN) | ((pawns & ~FILE_H) << U64_NINE)
    return ((pawns & ~FILE_A) >> U64_NINE) | ((pawns & ~FILE_H) >> U64_SEVEN)


@hot_njit(inline="always")
def _pieces(pos, tab, ev, colour):
    """Material, piece-square, mobility, piece and king-zone attack terms of one colour:
    (mg, eg, attack units on the enemy king for the optional king danger, else 0,
    the attackers' share of the optional danger index, else NO_KING_ATTACK).

    Fills ``ev.attacks[colour]``; needs ``ev.attacks[enemy, A_PAWN]`` already set.
    """
    mg = 0
    eg = 0
    enemy = 1 - colour
    attacks = ev.attacks
    us = pos.colors[colour]
    occupied = us | pos.colors[enemy]
    our_pawns = pos.pieces[PAWN] & us
    enemy_pawns = pos.pieces[PAWN] & pos.colors[enemy]
    mobility_area = ~(us & (pos.pieces[PAWN] | pos.pieces[KING])) & ~attacks[enemy, A_PAWN]
    enemy_king = lsb(pos.pieces[KING] & pos.colors[enemy])
    king_zone = king_attacks(tab, enemy_king) | square_bb(enemy_king)
    flip = 0 if colour == 0 else 56
    tracing = ev.traced[0] != 0
    cornered_on = _computes(ev, OPT_CORNERED_BISHOP)
    danger_on = _computes(ev, OPT_KING_DANGER)
    behind_on = _computes(ev, OPT_MINOR_BEHIND_PAWN)
    bishop_pawns_on = _computes(ev, OPT_BISHOP_PAWNS)
    index_on = _computes(ev, OPT_KING_DANGER_INDEX)
    # Squares right behind a pawn of either colour, seen from our side (minor behind pawn).
    # (Only worked out when their terms are computed: the search pays nothing for them otherwise.)
    pawns = pos.pieces[PAWN]
    behind_pawns = U64_ZERO
    if behind_on:
        behind_pawns = (pawns >> U64_EIGHT) if colour == 0 else (pawns << U64_EIGHT)
    # Our pawns blocked by an enemy pawn right in front of them (a bishop's rammed pawns).
    rammed = U64_ZERO
    if bishop_pawns_on:
        rammed = our_pawns & ((enemy_pawns >> U64_EIGHT) if colour == 0 else (enemy_pawns << U64_EIGHT))
    attackers = 0
    danger = 0
    queen_attacks = False
    attacker_weight = 0   # danger index: the zone attackers' weights and their attacks on it
    area_attacks = 0
    seen = attacks[colour, A_PAWN]   # danger index: squares attacked once so far, and twice
    twice = U64_ZERO
    if index_on:
        if colour == 0:   # squares two of our pawns attack
            twice = ((our_pawns & ~FILE_A) << U64_SEVEN) & ((our_pawns & ~FILE_H) << U64_NINE)
        else:
            twice = ((our_pawns & ~FILE_A) >> U64_NINE) & ((our_pawns & ~FILE_H) >> U64_SEVEN)
    for kind in range(A_KNIGHT, A_QUEEN + 1):
        attacks[colour, kind] = U64_ZERO
    bb = us & ~pos.pieces[PAWN]   # pawns are scored with the pawn structure (and cached)
    while bb:
        sq = lsb(bb)
        bb &= bb - U64_ONE
        piece_type = pos.board[sq] & 7
        rel = sq ^ flip
        rank = rel >> 3
        if tracing:
            mg, eg = _term(mg, eg, ev, colour, PSQT + (piece_type - 1) * 64 + rel, 1)
            if piece_type != KING:
                mg, eg = _term(mg, eg, ev, colour, MATERIAL + piece_type - 1, 1)
        else:  # the same two terms, summed in advance
            index = piece_square_index(colour, piece_type, sq)
            mg += ev.piece_square[index]
            eg += ev.piece_square[index + 1]
        if piece_type == KING:
            continue
        if piece_type == KNIGHT:
            reach = knight_attacks(tab, sq)
            mg, eg = _term(mg, eg, ev, colour, MOBILITY_KNIGHT + popcount(reach & mobility_area), 1)
            if behind_on and (behind_pawns & square_bb(sq)):
                mg, eg = _term(mg, eg, ev, colour, MINOR_BEHIND_PAWN, 1)
        elif piece_type == BISHOP:
            reach = bishop_attacks(tab, sq, occupied)
            mg, eg = _term(mg, eg, ev, colour, MOBILITY_BISHOP + popcount(reach & mobility_area), 1)
            if cornered_on:
                for corner in range(2):
                    if sq == CORNER_WALL[colour, corner, 0] and (our_pawns & square_bb(CORNER_WALL[colour, corner, 1])):
                        mg, eg = _term(mg, eg, ev, colour, CORNERED_BISHOP, 1)
            if behind_on and (behind_pawns & square_bb(sq)):
                mg, eg = _term(mg, eg, ev, colour, MINOR_BEHIND_PAWN + 1, 1)
            if bishop_pawns_on:
                # Our rammed pawns on the bishop's colour: they cannot move off it, and
                # the bishop stays bad for as long as they stand.
                same_colour = DARK_SQUARES if (square_bb(sq) & DARK_SQUARES) else ~DARK_SQUARES
                blocked = popcount(rammed & same_colour)
                if blocked:
                    mg, eg = _term(mg, eg, ev, colour, BISHOP_RAMMED_PAWNS, blocked)
                if (square_bb(sq) & LONG_DIAGONALS) and popcount(bishop_attacks(tab, sq, pawns) & CENTRE_SQUARES) >= 2:
                    mg, eg = _term(mg, eg, ev, colour, BISHOP_LONG_DIAGONAL, 1)
        elif piece_type == ROOK:
            reach = rook_attacks(tab, sq, occupied)
            mg, eg = _term(mg, eg, ev, colour, MOBILITY_ROOK + popcount(reach & mobility_area), 1)
            file_mask = FILE_A << np.uint64(sq & 7)
            if (file_mask & our_pawns) == U64_ZERO:
                if (file_mask & enemy_pawns) == U64_ZERO:
                    mg, eg = _term(mg, eg, ev, colour, ROOK_OPEN_FILE, 1)
                else:
                    mg, eg = _term(mg, eg, ev, colour, ROOK_HALF_OPEN_FILE, 1)
            if rank == 6:
                mg, eg = _term(mg, eg, ev, colour, ROOK_ON_SEVENTH, 1)
        else:
            reach = bishop_attacks(tab, sq, occupied) | rook_attacks(tab, sq, occupied)
            mg, eg = _term(mg, eg, ev, colour, MOBILITY_QUEEN + popcount(reach & mobility_area), 1)
        attacks[colour, piece_type - 1] |= reach   # A_KNIGHT .. A_QUEEN follow piece types
        if index_on:
            twice |= seen & reach
            seen |= reach
        # An outpost: a minor piece on the 4th-6th rank, guarded by a pawn, that no
        # enemy pawn can ever chase away.
        if (piece_type == KNIGHT or piece_type == BISHOP) and 3 <= rank <= 5:
            if (attacks[colour, A_PAWN] & square_bb(sq)) and (ATTACK_SPAN[colour, sq] & enemy_pawns) == U64_ZERO:
                mg, eg = _term(mg, eg, ev, colour, OUTPOST + piece_type - KNIGHT, 1)
        zone_hits = reach & king_zone
        if zone_hits:
            attackers += 1
            if danger_on:
                danger += ZONE_ATTACK_UNITS[piece_type]
                queen_attacks |= piece_type == QUEEN
            hits = popcount(zone_hits)
            if index_on:
                attacker_weight += DANGER_ATTACKER_WEIGHT[piece_type]
                area_attacks += hits
            mg, eg = _term(mg, eg, ev, colour, KING_ZONE_ATTACKS + piece_type - KNIGHT, hits)
    if attackers > 0:
        mg, eg = _term(mg, eg, ev, colour, KING_ATTACKERS + min(attackers, 7), 1)
    # One piece alone (but the queen) makes no attack; _king_safety adds the safe checks.
    if attackers < 2 and not queen_attacks:
        danger = 0
    if popcount(pos.pieces[BISHOP] & us) >= 2:
        mg, eg = _term(mg, eg, ev, colour, BISHOP_PAIR, 1)
    own_king = lsb(pos.pieces[KING] & us)
    attacks[colour, A_KING] = king_attacks(tab, own_king)
    every = attacks[colour, A_PAWN] | attacks[colour, A_KING]
    for kind in range(A_KNIGHT, A_QUEEN + 1):
        every |= attacks[colour, kind]
    attacks[colour, A_ALL] = every
    # The attackers' share of the king danger index (optional): their number times their
    # weights, and their attacks on the king's area as if it had nine squares.
    index_base = NO_KING_ATTACK
    if index_on:
        attacks[colour, A_TWICE] = twice | (seen & attacks[colour, A_KING])
        has_queen = (pos.pieces[QUEEN] & us) != U64_ZERO
        if attackers >= (1 if has_queen else 2):
            index_base = attackers * attacker_weight + DANGER_AREA_ATTACK * 9 * area_attacks // popcount(king_zone)
    return mg, eg, danger, index_base


@hot_njit(inline="always")
def _pawn_structure(pos, ev, colour):
    """Pawns of one colour: material, piece-square, doubled, isolated, backward, connected,
    passed and candidate passed pawns: (mg, eg, passers).

    Depends on the pawns alone, so the result can be cached by pawn placement.
    """
    mg = 0
    eg = 0
    enemy = 1 - colour
    our_pawns = pos.pieces[PAWN] & pos.colors[colour]
    enemy_pawns = pos.pieces[PAWN] & pos.colors[enemy]
    flip = 0 if colour == 0 else 56
    step = 8 if colour == 0 else -8
    passers = U64_ZERO
    bb = our_pawns
    while bb:
        sq = lsb(bb)
        bb &= bb - U64_ONE
        rel = sq ^ flip
        rank = rel >> 3
        mirrored = min(sq & 7, 7 - (sq & 7))   # the file read as a-d
        open_file = 0 if FORWARD_FILE[colour, sq] & enemy_pawns else 1
        mg, eg = _term(mg, eg, ev, colour, MATERIAL, 1)
        mg, eg = _term(mg, eg, ev, colour, PSQT + rel, 1)
        neighbours = ADJACENT_FILES[sq & 7] & our_pawns
        if FORWARD_FILE[colour, sq] & our_pawns:
            mg, eg = _term(mg, eg, ev, colour, PAWN_DOUBLED, 1)
        if neighbours == U64_ZERO:
            mg, eg = _term(mg, eg, ev, colour, PAWN_ISOLATED_FILE + 4 * open_file + mirrored, 1)
        else:
            phalanx = neighbours & (np.uint64(0xFF) << np.uint64(sq & 56))
            supported = ev.attacks[colour, A_PAWN] & square_bb(sq)
            if phalanx or supported:
                mg, eg = _term(mg, eg, ev, colour, PAWN_CONNECTED_SQUARE + 4 * rank + mirrored, 1)
            elif (neighbours & ~ATTACK_SPAN[colour, sq]) == U64_ZERO and (
                    ev.attacks[enemy, A_PAWN] & square_bb(sq + step)):
                # Backward: every neighbour has passed it, and an enemy pawn guards its stop square.
                mg, eg = _term(mg, eg, ev, colour, PAWN_BACKWARD_RANK + 8 * open_file + rank, 1)
        if (PASSED_SPAN[colour, sq] & enemy_pawns) == U64_ZERO and (FORWARD_FILE[colour, sq] & our_pawns) == U64_ZERO:
            mg, eg = _term(mg, eg, ev, colour, PASSED + rank, 1)
            passers |= square_bb(sq)
        elif (FORWARD_FILE[colour, sq] & (our_pawns | enemy_pawns)) == U64_ZERO:
            # Candidate passer: its file is open ahead, and the enemy pawns that guard its
            # path from the adjacent files (sentries) are no more than our pawns beside or
            # behind it (helpers), so pawn exchanges alone would set it free.
            sentries = popcount(ATTACK_SPAN[colour, sq] & enemy_pawns)
            helpers = popcount(ADJACENT_FILES[sq & 7] & our_pawns & ~ATTACK_SPAN[colour, sq])
            if helpers >= sentries:
                mg, eg = _term(mg, eg, ev, colour, CANDIDATE + rank, 1)
    return mg, eg, passers


@hot_njit(inline="always")
def _passed_pawn_race(pos, ev, colour, passers):
    """Terms of one colour's passed pawns that depend on the pieces: free path, king distances,
    and (optional) a safe push."""
    mg = 0
    eg = 0
    occupied = pos.colors[0] | pos.colors[1]
    safe_push_on = _computes(ev, OPT_PASSED_SAFE_PUSH)
    # Needs ``ev.attacks`` of both colours (set by _pieces).
    enemy_attacks = ev.attacks[1 - colour, A_ALL]
    own_king = lsb(pos.pieces[KING] & pos.colors[colour])
    enemy_king = lsb(pos.pieces[KING] & pos.colors[1 - colour])
    flip = 0 if colour == 0 else 56
    step = 8 if colour == 0 else -8
    bb = passers
    while bb:
        sq = lsb(bb)
        bb &= bb - U64_ONE
        rank = (sq ^ flip) >> 3
        stop = sq + step
        if (FORWARD_FILE[colour, sq] & occupied) == U64_ZERO:
            mg, eg = _term(mg, eg, ev, colour, PASSED_FREE + rank, 1)
        mg, eg = _term(mg, eg, ev, colour, PASSED_OWN_KING + rank, _distance(own_king, stop))
        mg, eg = _term(mg, eg, ev, colour, PASSED_ENEMY_KING + rank, _distance(enemy_king, stop))
        # Safe push (optional): the stop square is empty and no enemy piece or pawn hits it.
        if safe_push_on and ((occupied | enemy_attacks) & square_bb(stop)) == U64_ZERO:
            mg, eg = _term(mg, eg, ev, colour, PASSED_SAFE_PUSH + rank, 1)
    return mg, eg


@njit(inline="always")
def pawn_slot(pos):
    """Row of a 2**PAWN_CACHE_BITS table for the pawn placement (pawn cache, correction history)."""
    white = pos.pieces[PAWN] & pos.colors[0]
    black = pos.pieces[PAWN] & pos.colors[1]
    return ((white * PAWN_HASH_WHITE) ^ (black * PAWN_HASH_BLACK)) >> PAWN_CACHE_SHIFT


@hot_njit(inline="always")
def _pawns(pos, ev):
    """Pawn structure of both colours, White minus Black: (mg, eg, passers of each colour).

    Looked up in ``ev.pawn_cache`` by pawn placement (bypassed when tracing, which needs
    every count): a row holds White's and Black's pawns, mg and eg (offset to stay
    positive) and the passed pawns of both colours.
    """
    white = pos.pieces[PAWN] & pos.colors[0]
    black = pos.pieces[PAWN] & pos.colors[1]
    cache = ev.pawn_cache
    tracing = ev.traced[0] != 0
    slot = pawn_slot(pos)
    if not tracing and cache[slot, 0] == white and cache[slot, 1] == black:
        mg = np.int64(cache[slot, 2]) - PAWN_SCORE_OFFSET
        eg = np.int64(cache[slot, 3]) - PAWN_SCORE_OFFSET
        passers = cache[slot, 4]
        return mg, eg, passers & white, passers & black
    mg_w, eg_w, passers_w = _pawn_structure(pos, ev, 0)
    mg_b, eg_b, passers_b = _pawn_structure(pos, ev, 1)
    mg = mg_w - mg_b
    eg = eg_w - eg_b
    cache[slot, 0] = white
    cache[slot, 1] = black
    cache[slot, 2] = np.uint64(mg + PAWN_SCORE_OFFSET)
    cache[slot, 3] = np.uint64(eg + PAWN_SCORE_OFFSET)
    cache[slot, 4] = passers_w | passers_b
    return mg, eg, passers_w, passers_b


@hot_njit(inline="always")
def _king_safety(pos, tab, ev, colour, units, index_base):
    """Pawn shield, pawn storm and open files around one colour's king; its safe checks on
    the other, and (optional) the king danger of ``units`` plus those checks, the danger
    index of its attack from ``index_base`` on, the king's defenders and its distance to
    the nearest pawn file."""
    mg = 0
    eg = 0
    enemy = 1 - colour
    our_pawns = pos.pieces[PAWN] & pos.colors[colour]
    enemy_pawns = pos.pieces[PAWN] & pos.colors[enemy]
    king = lsb(pos.pieces[KING] & pos.colors[colour])
    king_file = min(max(king & 7, 1), 6)
    king_rank = king >> 3
    for file in range(king_file - 1, king_file + 2):
        ahead = FORWARD_FILE[colour, king_rank * 8 + file] | square_bb(king_rank * 8 + file)
        ours = ahead & our_pawns
        theirs = ahead & enemy_pawns
        our_distance = 7
        their_distance = 7
        if ours:
            nearest = lsb(ours) if colour == 0 else msb(ours)
            our_distance = abs((nearest >> 3) - king_rank)
        elif theirs == U64_ZERO:
            mg, eg = _term(mg, eg, ev, colour, KING_OPEN_FILE, 1)
        if theirs:
            nearest = lsb(theirs) if colour == 0 else msb(theirs)
            their_distance = abs((nearest >> 3) - king_rank)
        # Shelter and storm by file: a g-pawn missing in front of a king on g1 is worse
        # than an a-pawn missing beside a king on b1, and a storming pawn stopped by ours
        # (rammed) opens nothing.
        mirrored = min(file, 7 - file)
        on_king_file = 32 if file == (king & 7) else 0
        mg, eg = _term(mg, eg, ev, colour, KING_SHELTER + on_king_file + 8 * mirrored + our_distance, 1)
        blocked = 32 if our_distance != 7 and our_distance == their_distance - 1 else 0
        mg, eg = _term(mg, eg, ev, colour, KING_STORM_FILE + blocked + 8 * mirrored + their_distance, 1)
    # Safe checks this colour could give: squares that check the enemy king, reached
    # by one of our pieces, not occupied by us and not attacked by the enemy.
    attacks = ev.attacks
    occupied = pos.colors[0] | pos.colors[1]
    enemy_king = lsb(pos.pieces[KING] & pos.colors[enemy])
    safe = ~attacks[enemy, A_ALL] & ~pos.colors[colour]
    diagonal = bishop_attacks(tab, enemy_king, occupied) & safe
    straight = rook_attacks(tab, enemy_king, occupied) & safe
    knight_checks = popcount(knight_attacks(tab, enemy_king) & safe & attacks[colour, A_KNIGHT])
    if knight_checks:
        mg, eg = _term(mg, eg, ev, colour, SAFE_CHECKS, knight_checks)
    bishop_checks = popcount(diagonal & attacks[colour, A_BISHOP])
    if bishop_checks:
        mg, eg = _term(mg, eg, ev, colour, SAFE_CHECKS + 1, bishop_checks)
    rook_checks = popcount(straight & attacks[colour, A_ROOK])
    if rook_checks:
        mg, eg = _term(mg, eg, ev, colour, SAFE_CHECKS + 2, rook_checks)
    queen_checks = popcount((diagonal | straight) & attacks[colour, A_QUEEN])
    if queen_checks:
        mg, eg = _term(mg, eg, ev, colour, SAFE_CHECKS + 3, queen_checks)
    # King danger (optional): the attack units of the pieces hitting the zone plus each
    # kind of safe check, one row of the table per total, so the tuner gives the table
    # its shape (a king attack grows faster than the sum of its parts).
    if units > 0:   # 0 unless the term is computed
        if knight_checks:
            units += CHECK_UNITS_KNIGHT
        if bishop_checks:
            units += CHECK_UNITS_BISHOP
        if rook_checks:
            units += CHECK_UNITS_ROOK
        if queen_checks:
            units += CHECK_UNITS_QUEEN
        mg, eg = _term(mg, eg, ev, colour, KING_DANGER + min(units, MAX_DANGER_UNITS) - 1, 1)
    p = pos.pieces
    if index_base != NO_KING_ATTACK:   # the danger index of this colour's attack (optional)
        area = king_attacks(tab, enemy_king) | square_bb(enemy_king)
        weak = (attacks[colour, A_ALL] & ~attacks[enemy, A_TWICE]
                & (~attacks[enemy, A_ALL] | attacks[enemy, A_QUEEN] | attacks[enemy, A_KING]))
        points = (index_base
                  + DANGER_WEAK_SQUARE * popcount(weak & area)
                  + DANGER_SHIELD_PAWN * popcount(enemy_pawns & area & ~weak)
                  + DANGER_SAFE_CHECK_KNIGHT * knight_checks + DANGER_SAFE_CHECK_BISHOP * bishop_checks
                  + DANGER_SAFE_CHECK_ROOK * rook_checks + DANGER_SAFE_CHECK_QUEEN * queen_checks
                  + DANGER_ADJUSTMENT)
        if (p[QUEEN] & pos.colors[colour]) == U64_ZERO:
            points += DANGER_NO_QUEEN
        if points > 0:
            row = min(points // DANGER_POINTS_PER_ROW, DANGER_INDEX_ROWS - 1)
            mg, eg = _term(mg, eg, ev, colour, KING_DANGER_INDEX + row, 1)
    if _computes(ev, OPT_KING_DEFENDERS):
        # Defenders (optional): our pawns, knights and bishops next to our king.
        zone = king_attacks(tab, king)
        defenders = popcount(zone & pos.colors[colour] & (p[PAWN] | p[KNIGHT] | p[BISHOP]))
        mg, eg = _term(mg, eg, ev, colour, KING_DEFENDERS + min(defenders, MAX_DEFENDERS), 1)
    if _computes(ev, OPT_KING_PAWN_FILE) and p[PAWN] != U64_ZERO:
        # Files from the king to the nearest file with a pawn of either colour (optional):
        # in an ending the king must reach the pawns to matter.
        files = _pawn_files(p[PAWN])
        king_file_index = king & 7
        distance = 0
        while distance < 7:
            low = king_file_index - distance
            high = king_file_index + distance
            if low >= 0 and ((files >> np.uint64(low)) & U64_ONE) != U64_ZERO:
                break
            if high <= 7 and ((files >> np.uint64(high)) & U64_ONE) != U64_ZERO:
                break
            distance += 1
        mg, eg = _term(mg, eg, ev, colour, KING_PAWN_FILE + distance, 1)
    return mg, eg


@hot_njit(inline="always")
def _threats(pos, ev, colour):
    """Enemy pieces this colour attacks with something cheaper, and undefended ones it attacks
    (and, optional, pieces a pawn push would attack, pieces next to our king and weak pawns)."""
    mg = 0
    eg = 0
    enemy = 1 - colour
    attacks = ev.attacks
    them = pos.colors[enemy]
    by_pawn = attacks[colour, A_PAWN] & them
    if by_pawn:
        for victim in range(KNIGHT, KING):
            hits = popcount(by_pawn & pos.pieces[victim])
            if hits:
                mg, eg = _term(mg, eg, ev, colour, THREAT_BY_PAWN + victim - KNIGHT, hits)
    by_minor = (attacks[colour, A_KNIGHT] | attacks[colour, A_BISHOP]) & them
    for victim in range(ROOK, KING):
        hits = popcount(by_minor & pos.pieces[victim])
        if hits:
            mg, eg = _term(mg, eg, ev, colour, THREAT_BY_MINOR + victim - ROOK, hits)
    hits = popcount(attacks[colour, A_ROOK] & them & pos.pieces[QUEEN])
    if hits:
        mg, eg = _term(mg, eg, ev, colour, THREAT_BY_ROOK, hits)
    hanging = popcount(attacks[colour, A_ALL] & them & ~pos.pieces[KING] & ~attacks[enemy, A_ALL])
    if hanging:
        mg, eg = _term(mg, eg, ev, colour, HANGING, hanging)
    if _computes(ev, OPT_PAWN_PUSH):
        # Pawn push threats (optional): pieces a safe pawn push would attack that no
        # pawn attacks yet.  Safe: no enemy pawn guards the square, and we guard it or
        # the enemy does not.
        empty = ~(pos.colors[0] | pos.colors[1])
        our_pawns = pos.pieces[PAWN] & pos.colors[colour]
        if colour == 0:
            pushes = (our_pawns << U64_EIGHT) & empty
            pushes |= ((pushes & RANK_3) << U64_EIGHT) & empty
        else:
            pushes = (our_pawns >> U64_EIGHT) & empty
            pushes |= ((pushes & RANK_6) >> U64_EIGHT) & empty
        pushes &= ~attacks[enemy, A_PAWN] & (attacks[colour, A_ALL] | ~attacks[enemy, A_ALL])
        targets = them & ~pos.pieces[PAWN] & ~pos.pieces[KING] & ~attacks[colour, A_PAWN]
        hits = popcount(_pawn_attack_span(pushes, colour) & targets)
        if hits:
            mg, eg = _term(mg, eg, ev, colour, PAWN_PUSH_THREAT, hits)
    if _computes(ev, OPT_MORE_THREATS):
        # Minor pieces and rooks next to our king (optional), and weak pawns: enemy pawns
        # our pieces hit that no enemy pawn guards.
        p = pos.pieces
        hits = popcount(attacks[colour, A_KING] & them & (p[KNIGHT] | p[BISHOP] | p[ROOK]))
        if hits:
            mg, eg = _term(mg, eg, ev, colour, THREAT_BY_KING, hits)
        piece_attacks = (attacks[colour, A_KNIGHT] | attacks[colour, A_BISHOP] | attacks[colour, A_ROOK]
                         | attacks[colour, A_QUEEN] | attacks[colour, A_KING])
        hits = popcount(piece_attacks & them & p[PAWN] & ~attacks[enemy, A_PAWN])
        if hits:
            mg, eg = _term(mg, eg, ev, colour, WEAK_PAWN, hits)
    if _computes(ev, OPT_THREAT_MATRIX):
        # Threats by attacker and victim (optional), on what no enemy pawn guards.
        p = pos.pieces
        unguarded = them & ~attacks[enemy, A_PAWN]
        by_minor = (attacks[colour, A_KNIGHT] | attacks[colour, A_BISHOP]) & unguarded
        by_rook = attacks[colour, A_ROOK] & unguarded
        by_queen = attacks[colour, A_QUEEN] & unguarded
        for victim in range(PAWN, KING):
            hits = popcount(by_minor & p[victim])
            if hits:
                mg, eg = _term(mg, eg, ev, colour, THREAT_MINOR_ON + victim - PAWN, hits)
            hits = popcount(by_rook & p[victim])
            if hits:
                mg, eg = _term(mg, eg, ev, colour, THREAT_ROOK_ON + victim - PAWN, hits)
            hits = popcount(by_queen & p[victim])
            if hits:
                mg, eg = _term(mg, eg, ev, colour, THREAT_QUEEN_ON + victim - PAWN, hits)
    return mg, eg


@njit(inline="always")
def _pawn_files(pawns):
    """Bit f set for every file f that holds one of ``pawns``."""
    files = pawns | (pawns >> np.uint64(32))
    files |= files >> np.uint64(16)
    files |= files >> U64_EIGHT
    return files & np.uint64(0xFF)


@njit(inline="always")
def closedness(pos):
    """How closed the pawns are, 0 (open) to MAX_CLOSEDNESS: a quarter of the pawns,
    plus half the rammed pairs, less half the files without a pawn."""
    white = pos.pieces[PAWN] & pos.colors[0]
    black = pos.pieces[PAWN] & pos.colors[1]
    rammed = popcount((white << U64_EIGHT) & black)
    open_files = 8 - popcount(_pawn_files(white | black))
    value = (popcount(white | black) + 2 * rammed - 2 * open_files) // 4
    return min(max(value, 0), MAX_CLOSEDNESS)


@hot_njit(inline="always")
def _space_and_closedness(pos, ev, colour, closed):
    """Optional terms of one colour: space behind the pawns, knights and rooks by closedness."""
    mg = 0
    eg = 0
    us = pos.colors[colour]
    if _computes(ev, OPT_SPACE):
        # Space: safe centre squares on our side of the board, those behind our own
        # pawns (where pieces can manoeuvre unseen) counted twice.
        our_pawns = pos.pieces[PAWN] & us
        area = SPACE_AREA[colour] & ~our_pawns & ~ev.attacks[1 - colour, A_PAWN]
        if colour == 0:
            behind = (our_pawns >> U64_EIGHT) | (our_pawns >> np.uint64(16)) | (our_pawns >> np.uint64(24))
        else:
            behind = (our_pawns << U64_EIGHT) | (our_pawns << np.uint64(16)) | (our_pawns << np.uint64(24))
        squares = popcount(area) + popcount(area & behind)
        if squares:
            mg, eg = _term(mg, eg, ev, colour, SPACE, squares)
    if _computes(ev, OPT_CLOSEDNESS):
        knights = popcount(pos.pieces[KNIGHT] & us)
        if knights:
            mg, eg = _term(mg, eg, ev, colour, CLOSED_KNIGHT + closed, knights)
        rooks = popcount(pos.pieces[ROOK] & us)
        if rooks:
            mg, eg = _term(mg, eg, ev, colour, CLOSED_ROOK + closed, rooks)
    return mg, eg


@njit(inline="always")
def _minor_major_units(pos, colour):
    """Non-pawn material of one colour in pawn units (3, 3, 5, 9)."""
    us = pos.colors[colour]
    p = pos.pieces
    return (3 * popcount((p[KNIGHT] | p[BISHOP]) & us) + 5 * popcount(p[ROOK] & us)
            + 9 * popcount(p[QUEEN] & us))


@hot_njit(inline="always")
def _endgame_scale(pos, strong):
    """Endgame scale (of 64) for the side ``strong`` that the endgame score favours."""
    p = pos.pieces
    weak = 1 - strong
    strong_units = _minor_major_units(pos, strong)
    if (p[PAWN] & pos.colors[strong]) == U64_ZERO:
        if strong_units <= 3 or (strong_units == 6 and popcount(p[KNIGHT] & pos.colors[strong]) == 2):
            return SCALE_CANNOT_WIN   # a minor piece, or two knights
        if strong_units - _minor_major_units(pos, weak) <= 3:
            return SCALE_MINOR_AHEAD
    bishops = p[BISHOP]
    if (p[KNIGHT] | p[ROOK] | p[QUEEN]) == U64_ZERO and popcount(bishops & pos.colors[0]) == 1 \
            and popcount(bishops & pos.colors[1]) == 1:
        dark = popcount(bishops & DARK_SQUARES)
        if dark == 1:
            return SCALE_OPPOSITE_BISHOPS
    return SCALE_NORMAL


@hot_njit(inline="always")
def _mop_up(pos, strong):
    """Endgame bonus for ``strong`` against a bare king: drive it to the edge (KBNK: the right corner)."""
    weak = 1 - strong
    p = pos.pieces
    if (pos.colors[weak] & ~p[KING]) != U64_ZERO or (p[PAWN] & pos.colors[strong]) != U64_ZERO:
        return 0
    units = _minor_major_units(pos, strong)
    bishops = p[BISHOP] & pos.colors[strong]
    knights = p[KNIGHT] & pos.colors[strong]
    if units < 5 or (units == 6 and knights != U64_ZERO and popcount(knights) == 2):
        return 0   # a minor piece or two knights cannot force mate
    lone = lsb(p[KING] & pos.colors[weak])
    winner = lsb(p[KING] & pos.colors[strong])
    bonus = MOPUP_BONUS + MOPUP_KINGS_CLOSE * (7 - _distance(lone, winner))
    if units == 6 and popcount(bishops) == 1 and popcount(knights) == 1:
        if bishops & DARK_SQUARES:
            corner = min(_distance(lone, 0), _distance(lone, 63))
        else:
            corner = min(_distance(lone, 7), _distance(lone, 56))
        bonus += MOPUP_CORNER * (7 - corner)
    else:
        bonus += MOPUP_EDGE * CENTRE_DISTANCE[lone]
    return bonus


@hot_njit(inline="always")
def _complexity(pos, ev, eg, strong, passers):
    """The optional complexity term applied to the endgame score ``eg`` (White's), which favours
    ``strong``; returns the new one.

    Some endgame advantages convert and some do not: many pawns, passed pawns, pawns on
    both wings and a pure pawn ending make a win easier; few pawns on one wing make it
    harder.  The term is a weighted sum of those counts (both colours together, plus a
    constant) given to the side ``eg`` favours.  A negative sum can shrink that side's
    advantage to nothing but never turn it round, which is why the term is not simply
    one more feature: it scales what the other features found (Ethereal's "complexity").
    Only the endgame weights are used.  A traced evaluation records the counts under the
    favoured colour, so that White's counts minus Black's carry the sign of ``eg``.
    """
    p = pos.pieces
    pawns = p[PAWN]
    total_pawns = popcount(pawns)
    passed_pawns = popcount(passers)
    pawn_flanks = 1 if (pawns & QUEEN_FLANK) != U64_ZERO and (pawns & KING_FLANK) != U64_ZERO else 0
    pawn_endgame = 1 if (p[KNIGHT] | p[BISHOP] | p[ROOK] | p[QUEEN]) == U64_ZERO else 0
    if ev.traced[0] != 0:
        ev.feature_counts[strong, COMPLEXITY + C_TOTAL_PAWNS] += total_pawns
        ev.feature_counts[strong, COMPLEXITY + C_PASSED_PAWNS] += passed_pawns
        ev.feature_counts[strong, COMPLEXITY + C_PAWN_FLANKS] += pawn_flanks
        ev.feature_counts[strong, COMPLEXITY + C_PAWN_ENDGAME] += pawn_endgame
        ev.feature_counts[strong, COMPLEXITY + C_ADJUSTMENT] += 1
    # A level endgame score has no side to help or hinder.  (It is still traced, under
    # White, so that the tuner applies the term once its weights make the score uneven.)
    if eg == 0:
        return eg
    w = ev.weights
    complexity = (total_pawns * w[COMPLEXITY + C_TOTAL_PAWNS, 1] + passed_pawns * w[COMPLEXITY + C_PASSED_PAWNS, 1]
                  + pawn_flanks * w[COMPLEXITY + C_PAWN_FLANKS, 1] + pawn_endgame * w[COMPLEXITY + C_PAWN_ENDGAME, 1]
                  + w[COMPLEXITY + C_ADJUSTMENT, 1])
    bonus = max(complexity, -abs(eg))
    return eg + bonus if strong == 0 else eg - bonus


@hot_njit
def evaluate(pos, tab, ev):
    """Static score of the position in centipawns for the side to move.

    Its own kernel, called (not inlined) by the search: the position, tables and
    evaluator are records, one pointer each, so a call costs little (2% of
    ``bench`` speed at most), while inlining it made the search kernel's own compile 1.65
    times as long (numba's passes grow faster than the function they work on).
    """
    p = pos.pieces
    # Step 1. Pawn attacks first: mobility and outposts of both sides need them.
    ev.attacks[0, A_PAWN] = _pawn_attack_span(p[PAWN] & pos.colors[0], 0)
    ev.attacks[1, A_PAWN] = _pawn_attack_span(p[PAWN] & pos.colors[1], 1)
    # Step 2. Pieces but pawns: material, piece-square, mobility, rooks, outposts, king-zone attacks.
    mg_w, eg_w, danger_w, index_w = _pieces(pos, tab, ev, 0)
    mg_b, eg_b, danger_b, index_b = _pieces(pos, tab, ev, 1)
    # Step 3. Pawns: material, piece-square and structure (cached by pawn placement), then
    # what their passed pawns' race owes to the other pieces.
    pawn_mg, pawn_eg, passers_w, passers_b = _pawns(pos, ev)
    m, e = _passed_pawn_race(pos, ev, 0, passers_w)
    mg_w += m + pawn_mg
    eg_w += e + pawn_eg
    m, e = _passed_pawn_race(pos, ev, 1, passers_b)
    mg_b += m
    eg_b += e
    # Step 4. King safety (needs both sides' attack maps).
    m, e = _king_safety(pos, tab, ev, 0, danger_w, index_w)
    mg_w += m
    eg_w += e
    m, e = _king_safety(pos, tab, ev, 1, danger_b, index_b)
    mg_b += m
    eg_b += e
    # Step 5. Threats.
    m, e = _threats(pos, ev, 0)
    mg_w += m
    eg_w += e
    m, e = _threats(pos, ev, 1)
    mg_b += m
    eg_b += e
    # Step 5b. Space, and knights and rooks by how closed the pawns are (optional terms).
    if _computes(ev, OPT_SPACE) or _computes(ev, OPT_CLOSEDNESS):
        closed = closedness(pos)
        m, e = _space_and_closedness(pos, ev, 0, closed)
        mg_w += m
        eg_w += e
        m, e = _space_and_closedness(pos, ev, 1, closed)
        mg_b += m
        eg_b += e
    # Step 6. Tempo for the side to move.
    side = pos.state[ST_SIDE]
    if side == 0:
        mg_w, eg_w = _term(mg_w, eg_w, ev, 0, TEMPO, 1)
    else:
        mg_b, eg_b = _term(mg_b, eg_b, ev, 1, TEMPO, 1)
    mg = mg_w - mg_b
    eg = eg_w - eg_b
    # The side the endgame score favours, decided once: complexity may bring its
    # advantage to zero, and the scale and mop-up below must still be that side's.
    strong = 0 if eg >= 0 else 1
    # Step 7. Complexity (optional): how convertible the endgame advantage is.
    if _computes(ev, OPT_COMPLEXITY):
        eg = _complexity(pos, ev, eg, strong, passers_w | passers_b)
    # Step 8. Endgame knowledge: drawish material scales the endgame score down; a
    # bare king is driven to the edge.
    scale = _endgame_scale(pos, strong)
    mop_up = _mop_up(pos, strong)
    if strong == 1:
        mop_up = -mop_up
    # Step 9. Blend middlegame and endgame by the material left on the board.
    phase = (PHASE_KNIGHT * popcount(p[KNIGHT]) + PHASE_BISHOP * popcount(p[BISHOP])
             + PHASE_ROOK * popcount(p[ROOK]) + PHASE_QUEEN * popcount(p[QUEEN]))
    if phase > MAX_PHASE:
        phase = MAX_PHASE
    if ev.traced[0] != 0:
        ev.feature_counts[0, TRACE_PHASE] = phase
        ev.feature_counts[0, TRACE_SCALE] = scale
        ev.feature_counts[0, TRACE_MOPUP] = mop_up
    eg = _divide(eg * scale, SCALE_NORMAL) + mop_up
    score = _divide(mg * phase + eg * (MAX_PHASE - phase), MAX_PHASE)
    return score if side == 0 else -score


# ---------------------------------------------------------------------------
# Python side: weights file, evaluators, the ``eval`` breakdown
# ---------------------------------------------------------------------------

WEIGHTS_FILE = Path(__file__).resolve().parent / "weights.txt"


def load_weights(path: Path | str = WEIGHTS_FILE) -> np.ndarray:
    """The weight table from a ``name mg eg`` file; rows it does not name stay 0.

    A file written before the piece-square table covered the whole board names only the
    squares of files a-d; a square of files e-h that the file does not name takes the
    weight of its mirror image (e3 that of d3), so such a file scores as it always did.
    A row of ``LEGACY_FOLDS`` is added to the rows that now count its feature.
    """
    index = {name: i for i, name in enumerate(TERM_NAMES)}
    weights = np.zeros((N_TERMS, 2), dtype=np.int32)
    named = np.zeros(N_TERMS, dtype=np.bool_)
    legacy: dict[str, tuple[int, int]] = {}
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, mg, eg = line.split()
        if name in LEGACY_FOLDS:
            legacy[name] = (int(mg), int(eg))
            continue
        if name not in index:
            raise ValueError(f"{path}: unknown evaluation term {name!r}")
        weights[index[name]] = (int(mg), int(eg))
        named[index[name]] = True
    for name, value in legacy.items():
        for row in LEGACY_FOLDS[name]:
            weights[row] += value
    for piece in range(len(PIECE_NAMES)):
        for rel in range(64):
            row, file = PSQT + piece * 64 + rel, rel & 7
            if file >= 4 and not named[row]:
                weights[row] = weights[row - file + (7 - file)]
    return weights


def save_weights(weights: np.ndarray, path: Path | str = WEIGHTS_FILE, header: str = "") -> None:
    """Write the weight table as ``name mg eg`` lines (the format ``load_weights`` reads)."""
    lines = [f"# {line}" for line in header.splitlines()]
    width = max(len(name) for name in TERM_NAMES)
    lines += [f"{name:<{width}} {int(mg):6d} {int(eg):6d}" for name, (mg, eg) in zip(TERM_NAMES, weights, strict=True)]
    Path(path).write_text("\n".join(lines) + "\n")


def make_evaluator(weights: np.ndarray | None = None, traced: bool = False) -> Evaluator:
    """An Evaluator over ``weights`` (default: the committed table); ``traced`` records features."""
    if weights is None:
        weights = load_weights()
    ev = new_record(EVALUATOR_DTYPE)
    ev.weights[...] = weights
    ev.traced[0] = int(traced)
    ev.pawn_cache[:, 2:4] = PAWN_SCORE_OFFSET  # an empty row reads as the pawnless position: 0
    ev.piece_square[...] = piece_square_table(ev.weights)
    ev.optional_on[...] = optional_terms_on(ev.weights)
    return ev


def optional_terms_on(weights: np.ndarray) -> np.ndarray:
    """``Evaluator.optional_on`` for a weight table: 1 where an optional term has a nonzero weight."""
    on = np.zeros(N_OPTIONAL, dtype=np.int32)
    for term, first, rows in OPTIONAL_ROWS:
        on[term] = int(np.any(weights[first:first + rows] != 0))
    return on


def piece_square_table(weights: np.ndarray) -> np.ndarray:
    """``Evaluator.piece_square``: material plus piece-square weight of every piece on every square."""
    table = np.zeros(2 * 8 * 64 * 2, dtype=np.int32)
    for colour in (0, 1):
        for piece_type in range(1, 7):   # PAWN .. KING
            for sq in range(64):
                rel = sq ^ (0 if colour == 0 else 56)
                row = PSQT + (piece_type - 1) * 64 + rel
                index = ((colour * 8 + piece_type) * 64 + sq) * 2
                for phase in (0, 1):
                    value = int(weights[row, phase])
                    if piece_type != KING:
                        value += int(weights[MATERIAL + piece_type - 1, phase])
                    table[index + phase] = value
    return table


def trace_position(pos, tab, ev: Evaluator) -> int:
    """Evaluate with a traced Evaluator after clearing its feature counts; returns the score."""
    ev.feature_counts[:] = 0
    return int(evaluate(pos, tab, ev))


def explain(board, weights: np.ndarray) -> list[str]:
    """Lines for ``eval``: each feature group's contribution for White and Black, then the blend."""
    ev = make_evaluator(weights, traced=True)
    score = trace_position(board.pos, board.tab, ev)
    counts = ev.feature_counts[:, :N_TERMS].astype(np.int64)
    groups: dict[str, np.ndarray] = {}
    for term, name in enumerate(TERM_NAMES):
        group = name.split(".")[0].replace("passed", "passed pawns")
        rows = groups.setdefault(group, np.zeros((2, 2), dtype=np.int64))
        used = weights[term].astype(np.int64)
        if COMPLEXITY <= term < COMPLEXITY + len(COMPLEXITY_LABELS):
            used[0] = 0   # complexity reads only its endgame weights (its clamp is not shown)
        rows += counts[:, term:term + 1] * used
    phase = int(ev.feature_counts[0, TRACE_PHASE])
    scale = int(ev.feature_counts[0, TRACE_SCALE])
    mop_up = int(ev.feature_counts[0, TRACE_MOPUP])
    lines = [
        "      Term      |    White    |    Black    |    Total",
        "                |   MG    EG  |   MG    EG  |   MG    EG",
        "----------------+-------------+-------------+------------",
    ]
    total = np.zeros(2, dtype=np.int64)
    for group, rows in groups.items():
        diff = rows[0] - rows[1]
        total += diff
        lines.append(f"{group:>15} | {rows[0, 0]:5d} {rows[0, 1]:5d} | {rows[1, 0]:5d} {rows[1, 1]:5d} |"
                     f" {diff[0]:5d} {diff[1]:5d}")
    lines.append("----------------+-------------+-------------+------------")
    lines.append(f"{'Total':>15} |             |             | {total[0]:5d} {total[1]:5d}")
    white = score if board.pos.state[ST_SIDE] == 0 else -score
    lines.append(f"Phase {phase}/{MAX_PHASE}, endgame scale {scale}/{SCALE_NORMAL}, mop-up {mop_up}: "
                 f"{white} cp for White")
    lines.append(f"Final evaluation: {score} cp (side to move)")
    return lines
