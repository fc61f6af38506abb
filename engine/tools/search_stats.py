"""Search shape on the bench positions: effective branching factor and first-move cutoffs.

    python -m engine.tools.search_stats [--depth 14] [--from-depth 12] [--without STEP,...]

Each bench position is searched to ``--depth`` with a fresh table.  The effective
branching factor of an iteration is the nodes it took divided by the nodes of the
iteration before; the report gives, per depth from ``--from-depth`` on, the
geometric mean over the positions, and over all of those depths together.  The
first-move cutoff rate is the share of beta cutoffs made by the first move searched
(summed over every node of the main search, quiescence excluded): the measure of move
ordering quality.  A table then splits the cutoffs by the node's remaining depth and by
whether a TT move was tried first, showing where the cutoffs after the first move happen.

``--without`` switches search steps off (``reverse-futility``, ``null-move``, ``iir``,
``move-pruning``, ``reductions``, ``extensions``, ``singular``, ``countermove``,
``tt-cutoffs``) to show what each does to the tree.  The rate counts only nodes whose
moves were searched: a step that prunes a node before its move loop (reverse futility,
null move) removes the cutoff from the count, and those nodes are the easiest cut-nodes
of all, so pruning more lowers the measured rate even though the ordering is the same.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from tqdm import tqdm


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=14, help="search depth per position (default 14)")
    parser.add_argument("--from-depth", type=int, default=12, help="first depth whose EBF is reported")
    parser.add_argument("--without", default="", metavar="STEP,...",
                        help="comma-separated search steps to switch off (see the module docstring)")
    args = parser.parse_args()

    from engine.bench import BENCH_POSITIONS
    from engine.board import Board
    from engine.search import CUTOFF_DEPTHS, SEARCH_STEPS
    from engine.searcher import Searcher, SearchStats
    from engine.timeman import Limits

    switched_off = [name for name in args.without.split(",") if name]
    unknown = [name for name in switched_off if name not in SEARCH_STEPS]
    if unknown:
        parser.error(f"unknown search step(s) {', '.join(unknown)}; known: {', '.join(SEARCH_STEPS)}")

    searcher = Searcher(hash_mb=16)
    for name in switched_off:
        searcher.sd.config[SEARCH_STEPS[name]] = 0
    total_nodes = 0
    log_ratios: dict[int, list[float]] = {d: [] for d in range(args.from_depth, args.depth + 1)}
    cutoffs = np.zeros((CUTOFF_DEPTHS, 2, 2), dtype=np.int64)
    for fen in tqdm(BENCH_POSITIONS, desc="bench positions", unit="pos"):
        searcher.new_game()
        searcher.think(Board(fen), Limits(depth=args.depth), None)
        nodes = searcher.stats.iteration_nodes
        for depth in log_ratios:
            if depth <= len(nodes) and nodes[depth - 2] > 0 and nodes[depth - 1] > 0:
                log_ratios[depth].append(math.log(nodes[depth - 1] / nodes[depth - 2]))
        cutoffs += searcher.stats.cutoffs
        total_nodes += sum(nodes)

    print(f"{'depth':>5} {'positions':>9} {'EBF (geometric mean)':>21}")
    pooled: list[float] = []
    for depth, logs in log_ratios.items():
        pooled += logs
        ebf = math.exp(sum(logs) / len(logs)) if logs else float("nan")
        print(f"{depth:5} {len(logs):9} {ebf:21.2f}")
    overall = math.exp(sum(pooled) / len(pooled)) if pooled else float("nan")
    print(f"effective branching factor, depths {args.from_depth}-{args.depth}: {overall:.2f}")
    totals = SearchStats(cutoffs=cutoffs)
    fail_high, fail_high_first = totals.fail_high, totals.fail_high_first
    if switched_off:
        print(f"switched off: {', '.join(switched_off)}")
    print(f"nodes: {total_nodes} over {len(BENCH_POSITIONS)} positions to depth {args.depth}")
    print(f"first-move cutoffs: {100 * fail_high_first / max(fail_high, 1):.1f}% of {fail_high} beta cutoffs")
    print(cutoff_table(cutoffs))
    return 0


def cutoff_table(cutoffs: np.ndarray) -> str:
    """The cutoffs ``[depth, tt move, first]`` as a table: count, first-move share, share of the late ones."""
    late_total = max(int(cutoffs[:, :, 0].sum()), 1)
    rows = [f"{'depth':>5} {'TT move':>7} {'cutoffs':>9} {'first move':>10} {'share of later-move cutoffs':>27}"]
    for bucket in range(cutoffs.shape[0]):
        label = f"{bucket + 1}+" if bucket == cutoffs.shape[0] - 1 else str(bucket + 1)
        for had_tt in (1, 0):
            late, first = (int(n) for n in cutoffs[bucket, had_tt])
            total = late + first
            rate = f"{100 * first / total:.1f}%" if total else "n/a"
            tt_text = "yes" if had_tt else "no"
            rows.append(f"{label:>5} {tt_text:>7} {total:9} {rate:>10} {100 * late / late_total:26.1f}%")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.exit(main())
