"""Syzygy tablebases at the root: which moves keep the best game-theoretic result.

When the root position has no more pieces than the largest table loaded (and no
castling rights, which Syzygy tables do not cover), every root move is probed with
python-chess's ``chess.syzygy`` reader and only the moves that keep the best result
are handed to the search:

* winning: the moves with the smallest distance to a zeroing move (DTZ-optimal), so
  every move makes progress and the win is converted before the 50-move rule can
  intervene (a zeroing move -- capture or pawn move -- or a mate counts as distance 0);
* drawing: every move that keeps the draw (the search picks among them);
* losing: the moves that resist longest (largest DTZ).

With ``Syzygy50MoveRule`` on (the default), a "cursed win" (a win only without the
50-move rule) counts as a draw and a "blessed loss" as a draw, as for Stockfish.
The search then reports the tablebase score (``TB_WIN_SCORE`` for a win) unless it
finds a mate of its own.

This is the root part only; the probes inside the search use our numba WDL prober.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.syzygy

from engine.tt import TB_WIN as TB_WIN_SCORE  # reported for a tablebase win (below every mate score)


@dataclass
class RootResult:
    """The outcome of ranking the root moves with the tables."""

    moves: list[str]   # UCI text of the moves the search may choose from
    wdl: int           # best result for the side to move: -1 loss, 0 draw, 1 win
    score: int         # the score to report: TB_WIN_SCORE, 0 or -TB_WIN_SCORE
    probes: int        # tablebase probes made (reported as tbhits)


def _piece_count_of_table(name: str) -> int:
    """Number of pieces of a table file name like ``KQvKR.rtbw`` (0 if not one)."""
    stem = Path(name).stem
    if "v" not in stem or not stem.replace("v", "").isalpha():
        return 0
    return len(stem) - 1


class RootTablebase:
    """Syzygy tables opened from ``SyzygyPath`` for root move ranking."""

    def __init__(self, path: str) -> None:
        """Open every folder of ``path`` (joined by ``:`` or ``;``); see ``messages`` for problems."""
        self.messages: list[str] = []
        self.max_pieces = 0
        self.table_count = 0
        self._tablebase = chess.syzygy.Tablebase()
        folders = [p for p in path.replace(";", os.pathsep).split(os.pathsep) if p.strip()]
        for folder in folders:
            if not os.path.isdir(folder):
                self.messages.append(f"SyzygyPath folder {folder!r} does not exist")
                continue
            files = [f for f in os.listdir(folder) if f.endswith(".rtbw")]
            if not files:
                self.messages.append(f"no Syzygy .rtbw files in {folder!r}")
                continue
            try:
                self._tablebase.add_directory(folder, load_wdl=True, load_dtz=True)
            except (OSError, ValueError) as exc:
                self.messages.append(f"cannot read Syzygy tables in {folder!r}: {exc}")
                continue
            self.table_count += len(files)
            self.max_pieces = max([self.max_pieces] + [_piece_count_of_table(f) for f in files])

    def close(self) -> None:
        """Release the open table files."""
        self._tablebase.close()

    def covers(self, board: chess.Board, probe_limit: int) -> bool:
        """Whether the root ``board`` can be ranked with the loaded tables."""
        pieces = chess.popcount(board.occupied)
        return pieces <= min(self.max_pieces, probe_limit) and not board.castling_rights

    def _dtz(self, board: chess.Board) -> int | None:
        """DTZ of ``board`` for its side to move, or None when a table is missing or broken."""
        try:
            return self._tablebase.probe_dtz(board)
        except Exception:  # a missing, truncated or corrupt table: no tablebase answer
            return None

    def rank_root(self, board: chess.Board, rule50: bool = True) -> RootResult | None:
        """The root moves that keep the best result, or None when any probe fails."""
        ranked: list[tuple[int, int, str]] = []  # (result for us, distance, move)
        probes = 0
        for move in board.legal_moves:
            zeroing = board.is_zeroing(move)
            board.push(move)
            try:
                if board.is_checkmate():
                    ranked.append((1, -1, move.uci()))
                    continue
                dtz = self._dtz(board)
                probes += 1
                if dtz is None:
                    return None
                result, distance = self._classify(-dtz, zeroing, board.halfmove_clock, rule50)
                ranked.append((result, distance, move.uci()))
            finally:
                board.pop()
        if not ranked:
            return None
        best = max(r for r, _, _ in ranked)
        candidates = [(d, m) for r, d, m in ranked if r == best]
        if best > 0:
            shortest = min(d for d, _ in candidates)
            moves = [m for d, m in candidates if d == shortest]
        elif best < 0:
            longest = max(d for d, _ in candidates)
            moves = [m for d, m in candidates if d == longest]
        else:
            moves = [m for _, m in candidates]
        return RootResult(moves, best, best * TB_WIN_SCORE, probes)

    @staticmethod
    def _classify(dtz_for_us: int, zeroing: bool, halfmove_clock: int, rule50: bool) -> tuple[int, int]:
        """(result -1/0/1 for the mover, distance to the next zeroing move) of one root move.

        ``dtz_for_us`` is the DTZ of the position after the move, negated to the mover's
        side: positive when the mover wins.  Syzygy DTZ counts plies to the next zeroing
        move; its absolute value exceeds 100 for cursed wins and blessed losses.
        """
        if dtz_for_us == 0:
            return 0, 0
        distance = 0 if zeroing else abs(dtz_for_us)
        if rule50 and abs(dtz_for_us) + (0 if zeroing else halfmove_clock) > 100:
            return 0, distance  # the 50-move rule turns this win or loss into a draw
        return (1 if dtz_for_us > 0 else -1), distance
