"""The opening book: Polyglot ``.bin`` probing for ``OwnBook`` / ``BookFile``.

A Polyglot book is a sorted array of 16-byte big-endian entries
``(key u64, move u16, weight u16, learn u32)``; the key is the Polyglot Zobrist key,
which is exactly our ``Board.key()``, so no second hash is needed.  Reading goes
through python-chess's memory-mapped reader (this is not on any per-node path).
Moves are stored king-takes-rook for castling (``e1h1``), which ``Board.parse_uci``
accepts in both castling modes; entries that are not legal here are ignored.

A file that is missing, empty, truncated, not a whole number of entries or not
sorted is rejected with a message, and the engine plays on without a book.
"""

from __future__ import annotations

import itertools
import random
import site
import sys
from pathlib import Path

import chess.polyglot

from engine.board import Board, IllegalMoveError

ENTRY_SIZE = 16
BOOK_NAME = "numbat.bin"


def default_book_path() -> Path | None:
    """The shipped book: ``books/`` beside the package (source or editable install), else
    ``<prefix>/share/numbat/books`` (where a wheel install puts it: the environment's
    prefix, or the user's base for ``pip install --user``)."""
    candidates = [
        Path(__file__).resolve().parent.parent / "books" / BOOK_NAME,
        Path(sys.prefix) / "share" / "numbat" / "books" / BOOK_NAME,
        Path(site.getuserbase()) / "share" / "numbat" / "books" / BOOK_NAME,
    ]
    for path in candidates:
        if path.is_file():
            return path
    return None


class BookError(ValueError):
    """A book file that cannot be used."""


class OpeningBook:
    """An open Polyglot book."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise BookError(f"book file {str(self.path)!r} not found")
        size = self.path.stat().st_size
        if size == 0 or size % ENTRY_SIZE:
            raise BookError(f"book file {str(self.path)!r} has {size} bytes, not a whole number of "
                            f"{ENTRY_SIZE}-byte Polyglot entries")
        try:
            self._reader = chess.polyglot.open_reader(self.path)
        except (OSError, ValueError) as exc:
            raise BookError(f"cannot read book file {str(self.path)!r}: {exc}") from None
        step = max(1, len(self._reader) // 4096)
        keys = [self._reader[i].key for i in range(0, len(self._reader), step)]
        if any(a > b for a, b in itertools.pairwise(keys)):
            self._reader.close()
            raise BookError(f"book file {str(self.path)!r} is not sorted by key: not a Polyglot book")

    def __len__(self) -> int:
        return len(self._reader)

    def close(self) -> None:
        """Release the memory map."""
        self._reader.close()

    def moves(self, board: Board) -> list[tuple[int, int]]:
        """(move, weight) of every legal book move with a positive weight here."""
        found = []
        for entry in self._reader.find_all(board.key()):
            try:
                move = board.parse_uci(entry.move.uci())
            except IllegalMoveError:
                continue
            found.append((move, entry.weight))
        return found

    def choose(self, board: Board, rng: random.Random, best_only: bool = False) -> int:
        """A book move, at random in proportion to the weights (or the heaviest); 0 if none."""
        entries = self.moves(board)
        if not entries:
            return 0
        if best_only:
            return max(entries, key=lambda e: e[1])[0]
        total = sum(weight for _, weight in entries)
        pick = rng.uniform(0, total)
        for move, weight in entries:
            pick -= weight
            if pick <= 0:
                return move
        return entries[-1][0]
