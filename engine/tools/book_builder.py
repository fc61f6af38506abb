"""Build a Polyglot opening book from PGN games.

    python -m engine.tools.book_builder GAMES.pgn [...] -o books/numbat.bin \\
        [--max-ply 16] [--min-games 3] [--max-games N]

Every position reached in the first ``--max-ply`` plies of each game is counted with
the move played there.  A move's weight is ``2 * wins + draws`` for the side that
played it (so a move seen only in lost games gets weight 0 and is never chosen),
rescaled into Polyglot's 16-bit field; moves played in fewer than ``--min-games``
games are dropped.  Entries are written sorted by key, heaviest move first, as
Polyglot requires.  Games are read with python-chess; keys are
``chess.polyglot.zobrist_hash``, and castling is stored king-takes-rook (e1h1).
"""

from __future__ import annotations

import argparse
import struct
import sys
from collections import defaultdict
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
from tqdm import tqdm


def polyglot_move(board: chess.Board, move: chess.Move) -> int:
    """The 16-bit Polyglot encoding of ``move`` (castling as king takes rook)."""
    to_square = move.to_square
    if board.is_castling(move):
        rook_file = 7 if chess.square_file(move.to_square) > chess.square_file(move.from_square) else 0
        if board.chess960:
            to_square = move.to_square
        else:
            to_square = chess.square(rook_file, chess.square_rank(move.from_square))
    promotion = {None: 0, chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4}[move.promotion]
    return (chess.square_file(to_square) | chess.square_rank(to_square) << 3
            | chess.square_file(move.from_square) << 6 | chess.square_rank(move.from_square) << 9
            | promotion << 12)


def collect(paths: list[Path], max_ply: int, max_games: int | None) -> dict[tuple[int, int], list]:
    """(key, move) -> [games, score points*2, uci] over every game of every PGN file."""
    stats: dict[tuple[int, int], list] = defaultdict(lambda: [0, 0, ""])
    games = 0
    progress = tqdm(unit="game", desc="reading PGN")
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            while max_games is None or games < max_games:
                game = chess.pgn.read_game(handle)
                if game is None:
                    break
                games += 1
                progress.update()
                result = game.headers.get("Result", "*")
                white_points = {"1-0": 2, "0-1": 0, "1/2-1/2": 1}.get(result, 1)
                board = game.board()
                for ply, move in enumerate(game.mainline_moves()):
                    if ply >= max_ply:
                        break
                    entry = stats[(chess.polyglot.zobrist_hash(board), polyglot_move(board, move))]
                    entry[0] += 1
                    entry[1] += white_points if board.turn == chess.WHITE else 2 - white_points
                    entry[2] = move.uci()
                    board.push(move)
    progress.close()
    return stats


def reachable(stats: dict[tuple[int, int], list], min_games: int) -> list[tuple[int, int, int]]:
    """(key, move, points) of the kept moves in positions the start position reaches through kept moves.

    Filtering single moves can orphan a position (its only kept parent move was too
    rare); such entries could never be probed from a game, so they are dropped.
    """
    by_key: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for (key, move), (count, points, uci) in stats.items():
        if count >= min_games:
            by_key[key].append((move, points, uci))
    kept = []
    seen = set()
    frontier = [chess.Board()]
    while frontier:
        board = frontier.pop()
        key = chess.polyglot.zobrist_hash(board)
        if key in seen or key not in by_key:
            continue
        seen.add(key)
        for move, points, uci in by_key[key]:
            kept.append((key, move, points))
            child = board.copy(stack=False)
            child.push_uci(uci)
            frontier.append(child)
    return kept


def write_book(stats: dict[tuple[int, int], list], output: Path, min_games: int) -> int:
    """Write the filtered, weighted, sorted entries; returns how many were written."""
    kept = reachable(stats, min_games)
    top = max((points for _, _, points in kept), default=1) or 1
    scale = min(1.0, 65535 / top)
    entries = []
    for key, move, points in kept:
        weight = int(points * scale)
        if points > 0 and weight == 0:
            weight = 1
        entries.append((key, -weight, move))
    entries.sort()
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "wb") as handle:
        for key, negative_weight, move in entries:
            handle.write(struct.pack(">QHHI", key, move, -negative_weight, 0))
    return len(entries)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build a Polyglot book from PGN games.")
    parser.add_argument("pgn", nargs="+", type=Path)
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--max-ply", type=int, default=16, help="plies of each game to record (default 16)")
    parser.add_argument("--min-games", type=int, default=3, help="drop moves seen in fewer games (default 3)")
    parser.add_argument("--max-games", type=int, default=None)
    args = parser.parse_args(argv)
    stats = collect(args.pgn, args.max_ply, args.max_games)
    count = write_book(stats, args.output, args.min_games)
    print(f"{count} entries ({count * 16 / 1e6:.2f} MB) from {len(stats)} position-moves -> {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
