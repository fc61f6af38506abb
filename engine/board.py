"""Board: the Python-side handle on a Position, for the UCI layer, tools and tests.

It owns a Position, the shared Tables and a move buffer, and converts between
move integers and UCI strings.  Nothing here runs per search node; kernels take
``board.pos`` and ``board.tab`` directly.
"""

from __future__ import annotations

import numpy as np

from engine.bitboards import tables
from engine.defs import GAME_STACK, MAX_MOVES, MAX_PLY, PIECE_SYMBOLS, ST_CHESS960, ST_PLY, ST_SIDE
from engine.fen import STARTING_FEN, FenError, format_fen, parse_fen, parse_square, square_name
from engine.move import CASTLING, PROMOTION, move_fields
from engine.movegen import GEN_ALL, GEN_NOISY, GEN_QUIET, generate_moves, legal_prefix_length
from engine.position import (
    Position,
    castling_squares,
    copy_position,
    in_check,
    make_move,
    make_null_move,
    unmake_move,
    unmake_null_move,
)

PROMOTION_LETTERS = {2: "n", 3: "b", 4: "r", 5: "q"}


class IllegalMoveError(ValueError):
    """A UCI move string that is malformed or not legal in the position."""


class Board:
    """A chess position with move history, backed by numba kernels."""

    def __init__(self, fen: str = STARTING_FEN, chess960: bool = False) -> None:
        self.tab = tables()
        self.pos: Position = parse_fen(fen, self.tab, chess960)
        self._buffer = np.zeros(MAX_MOVES, dtype=np.int32)

    @property
    def chess960(self) -> bool:
        """Whether castling moves are written king-takes-rook (UCI_Chess960)."""
        return bool(self.pos.state[ST_CHESS960])

    @chess960.setter
    def chess960(self, value: bool) -> None:
        self.pos.state[ST_CHESS960] = int(value)

    @property
    def turn(self) -> int:
        """Colour to move (0 white, 1 black)."""
        return int(self.pos.state[ST_SIDE])

    @property
    def ply(self) -> int:
        """Number of moves made since the position was set up."""
        return int(self.pos.state[ST_PLY])

    def copy(self) -> Board:
        """An independent copy sharing only the read-only tables."""
        other = object.__new__(Board)
        other.tab = self.tab
        other.pos = copy_position(self.pos)
        other._buffer = np.zeros(MAX_MOVES, dtype=np.int32)
        return other

    def key(self) -> int:
        """Polyglot Zobrist key of the current position."""
        return int(self.pos.keys[self.pos.state[ST_PLY]])

    def legal_moves(self) -> list[int]:
        """Every legal move, as move integers."""
        end = generate_moves(self.pos, self.tab, self._buffer, 0, GEN_ALL)
        return [int(m) for m in self._buffer[:end]]

    def noisy_moves(self) -> list[int]:
        """Legal captures and promotions (every evasion when in check)."""
        end = generate_moves(self.pos, self.tab, self._buffer, 0, GEN_NOISY)
        return [int(m) for m in self._buffer[:end]]

    def quiet_moves(self) -> list[int]:
        """Legal moves that neither capture nor promote (none when in check): with
        ``noisy_moves``, every legal move once, as the search generates them in stages."""
        end = generate_moves(self.pos, self.tab, self._buffer, 0, GEN_QUIET)
        return [int(m) for m in self._buffer[:end]]

    def is_check(self) -> bool:
        """True when the side to move is in check."""
        return bool(in_check(self.pos, self.tab))

    def fen(self) -> str:
        """FEN (X-FEN castling; en passant only when legal)."""
        return format_fen(self.pos, self.legal_moves())

    def ascii(self) -> str:
        """The board as eight lines of piece letters, rank 8 first ('.' for empty)."""
        symbols = PIECE_SYMBOLS
        rows = []
        for rank in range(7, -1, -1):
            row = " ".join(symbols[int(self.pos.board[rank * 8 + file])] for file in range(8))
            rows.append(f"{rank + 1}  {row}")
        rows.append("   a b c d e f g h")
        return "\n".join(rows)

    def push(self, move: int) -> None:
        """Play a move integer, which must be legal."""
        if self.ply >= GAME_STACK - MAX_PLY - 2:  # room for the search path above the game
            raise IllegalMoveError("game too long for the history stack")
        make_move(self.pos, self.tab, move)

    def pop(self) -> None:
        """Take back the last move (or null move)."""
        if self.pos.history[self.ply - 1][0] == 0:
            unmake_null_move(self.pos, self.tab)
        else:
            unmake_move(self.pos, self.tab)

    def push_null(self) -> None:
        """Pass the turn."""
        make_null_move(self.pos, self.tab)

    def legal_prefix(self, moves: list[int]) -> int:
        """How many of ``moves``, played in turn from here, are legal (the board is unchanged)."""
        line = np.asarray(moves, dtype=np.int32)
        return int(legal_prefix_length(self.pos, self.tab, line, len(line)))

    def line_to_uci(self, moves: list[int]) -> list[str]:
        """UCI text of each move of a line (the notation read once for all of them)."""
        chess960 = self.chess960
        return [self.move_to_uci(move, chess960) for move in moves]

    def move_to_uci(self, move: int, chess960: bool | None = None) -> str:
        """UCI text of a move: e1g1 castling in standard chess, e1h1 in Chess960
        (``chess960`` says which when the caller knows; by default the board's mode)."""
        frm, to, kind, promo = move_fields(move)
        if chess960 is None:
            chess960 = self.chess960
        if kind == CASTLING and not chess960:
            to, _ = castling_squares(0 if frm < 8 else 1, frm, to)
        text = square_name(frm) + square_name(to)
        if kind == PROMOTION:
            text += PROMOTION_LETTERS[promo]
        return text

    def parse_uci(self, text: str) -> int:
        """Legal move integer for a UCI string; raises IllegalMoveError otherwise.

        Castling is accepted both as the king's two-square move (e1g1) and as
        king-takes-rook (e1h1), whichever mode is on.
        """
        if not 4 <= len(text) <= 5:
            raise IllegalMoveError(f"not a UCI move: {text!r}")
        try:
            frm, to = parse_square(text[:2]), parse_square(text[2:4])
        except ValueError:
            raise IllegalMoveError(f"not a UCI move: {text!r}") from None
        promo = text[4:]
        if promo and promo not in "nbrq":
            raise IllegalMoveError(f"not a UCI move: {text!r}")
        castles = []
        for move in self.legal_moves():
            m_from, m_to, kind, m_promo = move_fields(move)
            if m_from != frm:
                continue
            if kind == PROMOTION:
                if m_to == to and PROMOTION_LETTERS[m_promo] == promo:
                    return move
            elif not promo and m_to == to:
                return move  # ordinary moves, and castling written king-takes-rook
            elif kind == CASTLING:
                castles.append(move)
        # Castling written as the king's own move (e1g1); never a "move" that leaves the king in place.
        for move in castles if not promo else []:
            m_from, m_to, _, _ = move_fields(move)
            king_to, _ = castling_squares(self.turn, m_from, m_to)
            if king_to == to and king_to != frm:
                return move
        raise IllegalMoveError(f"illegal move {text} in {self.fen()}")

    def push_uci(self, text: str) -> int:
        """Parse and play a UCI move; returns the move integer."""
        move = self.parse_uci(text)
        self.push(move)
        return move


__all__ = ["Board", "FenError", "IllegalMoveError", "STARTING_FEN"]
