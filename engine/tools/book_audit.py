"""Audit an opening book with a stronger engine: which book moves lose too much?

    python -m engine.tools.book_audit [books/numbat.bin] [--depth 18] [--threshold 50]
        [--sample N] [--seed 1] [--engine /usr/games/stockfish]

Walks the book tree from the start position (every position reached by book moves),
optionally samples ``N`` positions, and for each asks the engine for the best score
of the position and the score of every book move (``searchmoves``), both at
``--depth``.  A move "loses" its position's best score minus its own score, in
centipawns from the mover's side.  Prints the moves losing more than
``--threshold`` and a summary; exit code 1 if there are any.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import chess
import chess.engine
import chess.polyglot
from tqdm import tqdm

from engine.tools.data import REPO_ROOT
from engine.tools.engines import STOCKFISH_PATH


def book_positions(reader: chess.polyglot.MemoryMappedReader) -> list[chess.Board]:
    """Every position reachable from the start position through book moves."""
    seen = set()
    frontier = [chess.Board()]
    positions = []
    while frontier:
        board = frontier.pop()
        key = chess.polyglot.zobrist_hash(board)
        if key in seen:
            continue
        seen.add(key)
        entries = list(reader.find_all(board))
        if not entries:
            continue
        positions.append(board)
        for entry in entries:
            child = board.copy(stack=False)
            child.push(entry.move)
            frontier.append(child)
    return positions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("book", nargs="?", type=Path, default=REPO_ROOT / "books" / "numbat.bin")
    parser.add_argument("--depth", type=int, default=18)
    parser.add_argument("--threshold", type=int, default=50)
    parser.add_argument("--sample", type=int, default=None, help="audit N random positions of the book tree")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", default=STOCKFISH_PATH)
    args = parser.parse_args(argv)

    reader = chess.polyglot.open_reader(args.book)
    positions = book_positions(reader)
    total_positions = len(positions)
    if args.sample and args.sample < len(positions):
        positions = random.Random(args.seed).sample(positions, args.sample)
    engine = chess.engine.SimpleEngine.popen_uci(args.engine)
    limit = chess.engine.Limit(depth=args.depth)
    bad = []
    moves_checked = 0
    worst = 0
    iterator = tqdm(positions, desc="auditing", unit="pos")
    try:
        for board in iterator:
            best = engine.analyse(board, limit)["score"].relative.score(mate_score=100000)
            for entry in reader.find_all(board):
                score = engine.analyse(board, limit, root_moves=[entry.move])["score"].relative.score(
                    mate_score=100000)
                loss = max(0, best - score)
                moves_checked += 1
                worst = max(worst, loss)
                if loss > args.threshold:
                    bad.append((board.fen(), entry.move.uci(), entry.weight, loss))
    finally:
        engine.quit()
        reader.close()
    for fen, move, weight, loss in sorted(bad, key=lambda b: -b[3]):
        print(f"loses {loss:5} cp  {move:6} (weight {weight:5})  {fen}")
    print(f"book tree: {total_positions} positions; audited {len(positions)} positions, {moves_checked} moves at "
          f"depth {args.depth}; {len(bad)} moves lose more than {args.threshold} cp; worst loss {worst} cp")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
