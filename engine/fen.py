"""FEN and X-FEN / Shredder-FEN: parsing into a Position and writing one back.

Castling fields accept ``KQkq`` (the outermost rook on that side of the king, as
X-FEN defines it), file letters ``A``-``H`` / ``a``-``h`` (Shredder-FEN, any rook), or
a mix.  Output uses X-FEN: ``K``/``Q`` for the outermost rook, a file letter
otherwise, which is standard FEN for every standard-chess position.

The en-passant field is written only when an en-passant capture is legal, as
python-chess and Stockfish do.

Invalid input raises ``FenError`` (a ``ValueError``) with a message saying what is
wrong; it never leaves a half-built position behind.
"""

from __future__ import annotations

from engine.bitboards import Tables
from engine.defs import (
    BLACK,
    KING,
    NO_SQUARE,
    PAWN,
    PIECE_SYMBOLS,
    ROOK,
    ST_CASTLING,
    ST_CHESS960,
    ST_EP,
    ST_FULLMOVE,
    ST_HALFMOVE,
    ST_PLY,
    ST_SIDE,
    WHITE,
)
from engine.move import EN_PASSANT
from engine.position import Position, compute_key, empty_position, in_check, pawn_can_take_ep, put_piece

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
# "Kiwipete" (Peter McKenzie): castling both ways, en passant, promotions and pins, the perft classic
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
FILE_NAMES = "abcdefgh"


class FenError(ValueError):
    """A FEN string that does not describe a valid position."""


def square_name(sq: int) -> str:
    """Algebraic name of a square index, e.g. 12 -> 'e2'."""
    return FILE_NAMES[sq & 7] + str((sq >> 3) + 1)


def parse_square(name: str) -> int:
    """Square index of an algebraic name; raises ValueError on anything else."""
    if len(name) != 2 or name[0] not in FILE_NAMES or name[1] not in "12345678":
        raise ValueError(f"not a square: {name!r}")
    return FILE_NAMES.index(name[0]) + 8 * (int(name[1]) - 1)


def _parse_placement(field: str) -> list[int]:
    """Mailbox (64 piece codes) from the piece-placement field."""
    ranks = field.split("/")
    if len(ranks) != 8:
        raise FenError(f"piece placement needs 8 ranks separated by '/', got {len(ranks)}")
    board = [0] * 64
    for row, text in enumerate(ranks):
        rank = 7 - row
        file = 0
        for ch in text:
            if ch in "12345678":
                file += int(ch)
            elif ch in "PNBRQKpnbrqk":
                if file > 7:
                    raise FenError(f"rank {rank + 1} ({text!r}) has more than 8 squares")
                board[rank * 8 + file] = PIECE_SYMBOLS.index(ch)
                file += 1
            else:
                raise FenError(f"invalid character {ch!r} in piece placement")
            if file > 8:
                raise FenError(f"rank {rank + 1} ({text!r}) has more than 8 squares")
        if file != 8:
            raise FenError(f"rank {rank + 1} ({text!r}) does not have exactly 8 squares")
    return board


def _castling_rook(board: list[int], colour: int, king_sq: int, ch: str) -> tuple[int, int]:
    """(right index 0..3, rook square) named by one castling character, or (-1, -1)."""
    rank = 0 if colour == WHITE else 7
    rook = (colour << 3) | ROOK
    rook_files = [f for f in range(8) if board[rank * 8 + f] == rook]
    king_file = king_sq & 7
    upper = ch.upper()
    if upper == "K":
        candidates = [f for f in rook_files if f > king_file]
        file = max(candidates) if candidates else -1
    elif upper == "Q":
        candidates = [f for f in rook_files if f < king_file]
        file = min(candidates) if candidates else -1
    else:
        file = FILE_NAMES.index(upper.lower())
        if file not in rook_files:
            file = -1
    if file < 0 or file == king_file:
        return -1, -1
    side = 0 if file > king_file else 1
    return 2 * colour + side, rank * 8 + file


def parse_fen(fen: str, tab: Tables, chess960: bool = False) -> Position:
    """Position described by ``fen`` (4 to 6 fields); raises FenError when invalid."""
    fields = fen.split()
    if not 4 <= len(fields) <= 6:
        raise FenError(f"a FEN has 6 fields (4 are accepted), got {len(fields)}")
    placement, side, castling, ep = fields[:4]
    board = _parse_placement(placement)
    if side not in ("w", "b"):
        raise FenError(f"side to move must be 'w' or 'b', got {side!r}")
    us = WHITE if side == "w" else BLACK
    try:
        halfmove = int(fields[4]) if len(fields) > 4 else 0
        fullmove = int(fields[5]) if len(fields) > 5 else 1
    except ValueError:
        raise FenError("move counters must be integers") from None
    if not 0 <= halfmove <= 10000 or not 0 <= fullmove <= 100000:
        raise FenError("move counters out of range")

    for colour, name in ((WHITE, "white"), (BLACK, "black")):
        kings = board.count((colour << 3) | KING)
        if kings != 1:
            raise FenError(f"{name} must have exactly one king, found {kings}")
    for sq in list(range(8)) + list(range(56, 64)):
        if board[sq] & 7 == PAWN:
            raise FenError(f"pawn on the back rank ({square_name(sq)})")

    pos = empty_position()
    for sq, piece in enumerate(board):
        if piece:
            put_piece(pos, tab, piece, sq)

    rights = 0
    if castling != "-":
        seen = set()
        for ch in castling:
            if ch not in "KQkqABCDEFGHabcdefgh" or ch in seen:
                raise FenError(f"invalid castling field {castling!r}")
            seen.add(ch)
            colour = WHITE if ch.isupper() else BLACK
            king_sq = board.index((colour << 3) | KING)
            if king_sq >> 3 != (0 if colour == WHITE else 7):
                continue  # no right without a king on its back rank, as python-chess cleans it
            right, rook_sq = _castling_rook(board, colour, king_sq, ch)
            if right < 0 or rights >> right & 1:
                continue
            if not chess960 and (king_sq & 7 != 4 or rook_sq & 7 not in (0, 7)):
                continue  # standard chess: king on e1/e8 and rook in its corner, as python-chess
            rights |= 1 << right
            pos.castle_rook[right] = rook_sq
            pos.castle_mask[rook_sq] |= 1 << right
            pos.castle_mask[king_sq] |= 1 << right

    ep_square = NO_SQUARE
    if ep != "-":
        try:
            ep_square = parse_square(ep)
        except ValueError:
            raise FenError(f"invalid en-passant square {ep!r}") from None
        if ep_square >> 3 != (5 if us == WHITE else 2):
            raise FenError(f"en-passant square {ep} is on the wrong rank")
        pawn_sq = ep_square ^ 8
        origin = ep_square + (8 if us == WHITE else -8)
        if board[pawn_sq] != (((us ^ 1) << 3) | PAWN) or board[ep_square] or board[origin]:
            raise FenError(f"en-passant square {ep} does not follow a double pawn push")
        if not pawn_can_take_ep(pos, tab, ep_square, us):
            ep_square = NO_SQUARE  # kept only when a capture is possible (Polyglot rule)

    st = pos.state
    st[ST_SIDE] = us
    st[ST_EP] = ep_square
    st[ST_CASTLING] = rights
    st[ST_HALFMOVE] = halfmove
    st[ST_FULLMOVE] = max(fullmove, 1)
    st[ST_PLY] = 0
    st[ST_CHESS960] = int(chess960)
    # The side that just moved may not be in check.
    st[ST_SIDE] = us ^ 1
    if in_check(pos, tab):
        raise FenError("the side not to move is in check")
    st[ST_SIDE] = us
    pos.keys[0] = compute_key(pos, tab)
    return pos


def _castling_field(pos: Position) -> str:
    """X-FEN castling field of a position."""
    rights = int(pos.state[ST_CASTLING])
    text = ""
    for right in range(4):
        if not rights >> right & 1:
            continue
        colour, side = right >> 1, right & 1
        rook_sq = int(pos.castle_rook[right])
        rank = rook_sq >> 3
        rook = (colour << 3) | ROOK
        rook_files = [f for f in range(8) if pos.board[rank * 8 + f] == rook]
        outermost = max(rook_files) if side == 0 else min(rook_files)
        ch = ("K" if side == 0 else "Q") if rook_sq & 7 == outermost else FILE_NAMES[rook_sq & 7].upper()
        text += ch if colour == WHITE else ch.lower()
    return text or "-"


def format_fen(pos: Position, legal_moves: list[int] | None = None) -> str:
    """FEN of a position; ``legal_moves`` (if given) decides whether ep is written."""
    rows = []
    for rank in range(7, -1, -1):
        row, empty = "", 0
        for file in range(8):
            piece = int(pos.board[rank * 8 + file])
            if piece == 0:
                empty += 1
                continue
            if empty:
                row += str(empty)
                empty = 0
            row += PIECE_SYMBOLS[piece]
        rows.append(row + (str(empty) if empty else ""))
    st = pos.state
    ep = int(st[ST_EP])
    ep_text = "-"
    if ep != NO_SQUARE and legal_moves is not None:
        if any(m >> 14 == EN_PASSANT for m in legal_moves):
            ep_text = square_name(ep)
    side = "w" if st[ST_SIDE] == WHITE else "b"
    return f"{'/'.join(rows)} {side} {_castling_field(pos)} {ep_text} {st[ST_HALFMOVE]} {st[ST_FULLMOVE]}"
