"""What a static evaluation costs, and what its cached parts save.

Times ``evaluate`` in a jitted loop (a call per position, as the search makes it) over positions from
random play-outs, three ways:

* ``evaluation``: the whole evaluation, pawn cache warm (the usual case in a search);
* ``evaluation, pawn cache cold``: the position's pawn-cache row spoiled before every
  call, so the difference is what caching the pawn structure saves;
* ``material + piece-square lookups``: only the per-piece lookups of
  ``Evaluator.piece_square`` for every piece but pawns, i.e. the most that keeping
  material and piece-square sums up to date in make/unmake could save per evaluation.

Usage::

    python -m engine.tools.eval_speed [--positions 40] [--calls 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from engine.tools.positions import random_playout_fens


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=40)
    parser.add_argument("--calls", type=int, default=20000, help="evaluations per position and timing")
    parser.add_argument("--repeat", type=int, default=5, help="timings per way; the fastest is reported")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args(argv)

    from engine.board import Board
    from engine.defs import PAWN
    from engine.evaluate import (
        PAWN_CACHE_SHIFT,
        PAWN_HASH_BLACK,
        PAWN_HASH_WHITE,
        evaluate,
        make_evaluator,
        piece_square_index,
    )
    from engine.intrinsics import lsb
    from engine.jit import hot_njit

    @hot_njit
    def warm_loop(pos, tab, ev, n):
        total = 0
        for _ in range(n):
            total += evaluate(pos, tab, ev)
        return total

    @hot_njit
    def cold_loop(pos, tab, ev, n):
        white = pos.pieces[PAWN] & pos.colors[0]
        black = pos.pieces[PAWN] & pos.colors[1]
        slot = ((white * PAWN_HASH_WHITE) ^ (black * PAWN_HASH_BLACK)) >> PAWN_CACHE_SHIFT
        total = 0
        for _ in range(n):
            ev.pawn_cache[slot, 0] = ~white   # spoil this position's row: a miss every time
            total += evaluate(pos, tab, ev)
        return total

    @hot_njit
    def lookup_loop(pos, tab, ev, n):
        mg = 0
        eg = 0
        for _ in range(n):
            for colour in range(2):
                bb = pos.colors[colour] & ~pos.pieces[PAWN]
                while bb:
                    sq = lsb(bb)
                    bb &= bb - np.uint64(1)
                    index = piece_square_index(colour, pos.board[sq] & 7, sq)
                    mg += ev.piece_square[index]
                    eg += ev.piece_square[index + 1]
        return mg + eg

    boards = [Board(fen) for fen in random_playout_fens(args.positions, args.seed, min_plies=10, max_plies=61)]
    ev = make_evaluator()
    timings: dict[str, float] = {}
    for name, loop in (("evaluation", warm_loop), ("cold", cold_loop), ("lookups", lookup_loop)):
        loop(boards[0].pos, boards[0].tab, ev, 10)   # compile (or load) first
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            for board in boards:
                loop(board.pos, board.tab, ev, args.calls)
            best = min(best, (time.perf_counter() - start) / (len(boards) * args.calls) * 1e9)
        timings[name] = best
    cold = timings["cold"]
    print(f"evaluation (pawn cache warm)       {timings['evaluation']:7.1f} ns")
    print(f"evaluation, pawn cache cold        {cold:7.1f} ns  (the cache saves {cold - timings['evaluation']:.1f} ns)")
    print(f"material + piece-square lookups    {timings['lookups']:7.1f} ns  "
          f"({timings['lookups'] / timings['evaluation']:.0%} of an evaluation)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
