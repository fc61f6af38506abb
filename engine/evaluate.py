"""Static evaluation: material plus piece-square tables, tapered by game phase.

The kernel reads one weight array, ``psqt int32[2, 16, 64]``: ``psqt[stage, piece, sq]``
is the value (middlegame stage 0, endgame stage 1) of ``piece`` (our piece code,
colour << 3 | type) standing on ``sq``, in centipawns from White's point of view;
black entries are the mirrored white ones with the sign flipped, so the kernel only
adds.  The two sums are blended by the game phase (24 with all minor and major
pieces on the board, 0 with none), and the result is returned for the side to move.

The numbers below are hand-set starting values (centralisation, pawn advance, king
shelter in the middlegame and king activity in the endgame); the evaluation issue
replaces them with a tuned weighted-feature evaluation.
"""

from __future__ import annotations

import numpy as np

from engine.defs import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, ST_SIDE, U64_ONE
from engine.jit import hot_njit, lsb

PHASE_WEIGHT = np.array([0, 0, 1, 1, 2, 4, 0, 0] * 2, dtype=np.int32)  # by piece code
MAX_PHASE = 24
TEMPO = 10

MATERIAL_MG = {PAWN: 82, KNIGHT: 337, BISHOP: 365, ROOK: 477, QUEEN: 1025, KING: 0}
MATERIAL_EG = {PAWN: 94, KNIGHT: 281, BISHOP: 297, ROOK: 512, QUEEN: 936, KING: 0}


def _centre_distance(sq: int) -> float:
    """Chebyshev-like distance from the centre: 0 on d4/e4/d5/e5, 3 in the corners."""
    f, r = sq & 7, sq >> 3
    return max(abs(f - 3.5), abs(r - 3.5)) - 0.5


def _white_square_bonus(piece_type: int, sq: int) -> tuple[int, int]:
    """(middlegame, endgame) positional bonus of a white piece on ``sq``."""
    f, r = sq & 7, sq >> 3
    centre = _centre_distance(sq)
    if piece_type == PAWN:
        central_file = 3.5 - abs(f - 3.5)  # 0.5 on a/h files .. 3.5 on d/e files
        mg = (r - 1) * 3 + (central_file * 4 if 2 <= r <= 4 else 0)
        eg = (r - 1) * 10
        return int(mg), int(eg)
    if piece_type == KNIGHT:
        return int(-12 * centre), int(-10 * centre)
    if piece_type == BISHOP:
        return int(-5 * centre), int(-6 * centre)
    if piece_type == ROOK:
        return int(10 if r == 6 else 0) + int(3 if f in (3, 4) else 0), 0
    if piece_type == QUEEN:
        return int(-3 * centre), int(-6 * centre)
    if piece_type == KING:
        shelter = {0: 20, 1: 30, 2: 10, 3: -10, 4: -10, 5: 10, 6: 30, 7: 20}[f] if r == 0 else -20 * r
        return int(shelter), int(-14 * centre)
    return 0, 0


def default_psqt() -> np.ndarray:
    """The ``psqt[2, 16, 64]`` weight array described in the module docstring."""
    psqt = np.zeros((2, 16, 64), dtype=np.int32)
    for piece_type in (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING):
        for sq in range(64):
            mg, eg = _white_square_bonus(piece_type, sq)
            psqt[0, piece_type, sq] = MATERIAL_MG[piece_type] + mg
            psqt[1, piece_type, sq] = MATERIAL_EG[piece_type] + eg
            mirrored = sq ^ 56
            psqt[0, 8 | piece_type, mirrored] = -psqt[0, piece_type, sq]
            psqt[1, 8 | piece_type, mirrored] = -psqt[1, piece_type, sq]
    return psqt


@hot_njit
def evaluate(pos, psqt):
    """Tapered material + piece-square score in centipawns for the side to move."""
    occupied = pos.colors[0] | pos.colors[1]
    mg = 0
    eg = 0
    phase = 0
    board = pos.board
    while occupied:
        sq = lsb(occupied)
        occupied &= occupied - U64_ONE
        piece = board[sq]
        mg += psqt[0, piece, sq]
        eg += psqt[1, piece, sq]
        phase += PHASE_WEIGHT[piece]
    if phase > MAX_PHASE:
        phase = MAX_PHASE
    score = (mg * phase + eg * (MAX_PHASE - phase)) // MAX_PHASE
    if pos.state[ST_SIDE] == 1:
        score = -score
    return score + TEMPO


def explain(board, psqt: np.ndarray) -> list[str]:
    """Lines for ``eval``: each side's material + piece-square sums, the phase blend, the total."""
    totals = {0: [0, 0], 1: [0, 0]}
    phase = 0
    for sq in range(64):
        piece = int(board.pos.board[sq])
        if piece:
            colour = piece >> 3
            totals[colour][0] += int(psqt[0, piece, sq])
            totals[colour][1] += int(psqt[1, piece, sq])
            phase += int(PHASE_WEIGHT[piece])
    phase = min(phase, MAX_PHASE)
    mg = totals[0][0] + totals[1][0]
    eg = totals[0][1] + totals[1][1]
    white = (mg * phase + eg * (MAX_PHASE - phase)) // MAX_PHASE
    lines = [
        "     Term    |    White    |    Black    |    Total",
        "             |   MG    EG  |   MG    EG  |   MG    EG",
        f" Material+PST| {totals[0][0]:5} {totals[0][1]:5} | {totals[1][0]:5} {totals[1][1]:5} | {mg:5} {eg:5}",
        f"Phase {phase}/{MAX_PHASE}: blended {white} cp for White, tempo {TEMPO} for the side to move",
        f"Final evaluation: {int(evaluate(board.pos, psqt))} cp (side to move)",
    ]
    return lines
