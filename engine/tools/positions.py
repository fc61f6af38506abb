"""Varied test positions for tools and tests: seeded random play-outs of the start position."""

from __future__ import annotations

import random

import chess


def random_playout_fens(count: int, seed: int, min_plies: int = 4, max_plies: int = 120) -> list[str]:
    """FENs of unfinished positions after ``min_plies`` to ``max_plies - 1`` random moves (seeded)."""
    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < count:
        board = chess.Board()
        for _ in range(rng.randrange(min_plies, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over():
            fens.append(board.fen())
    return fens
