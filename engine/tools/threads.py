"""What more search threads buy: time to depth and speed on the bench positions.

    python -m engine.tools.threads [--depth 15] [--threads 1,2] [--hash 64]

For each thread count, every bench position is searched to ``--depth`` from an empty
table (``Threads`` as a GUI sets it: Lazy SMP, see ``engine.searcher``), and the tool
prints the wall-clock time to reach that depth on the main thread, the nodes of every
thread together, and their rate.  Lazy SMP threads mostly search the same tree, so the
time to depth falls much less than the node rate rises; what the extra nodes are worth
is measured by games (``engine.tools.match`` with ``option.Threads=2`` against
``option.Threads=1``).  The machine should be otherwise idle, with a core per thread.
"""

from __future__ import annotations

import argparse
import time

from tqdm import tqdm


def time_to_depth(threads: int, depth: int, hash_mb: int, progress: bool = True) -> tuple[float, int]:
    """(seconds, nodes) to search every bench position to ``depth`` with ``threads`` threads."""
    from engine.bench import BENCH_POSITIONS
    from engine.board import Board
    from engine.searcher import Searcher
    from engine.timeman import Limits

    seconds, nodes = 0.0, 0
    searcher = Searcher(hash_mb=hash_mb)
    searcher.set_threads(threads)
    for fen in tqdm(BENCH_POSITIONS, desc=f"{threads} thread(s)", unit="pos", disable=not progress, leave=False):
        searcher.new_game()
        start = time.perf_counter()
        searcher.think(Board(fen), Limits(depth=depth), None)
        seconds += time.perf_counter() - start
        nodes += searcher.nodes()
    return seconds, nodes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=15, help="search depth per position (default 15)")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--hash", type=int, default=64, help="hash table size in MB (default 64)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    counts = [int(text) for text in args.threads.split(",") if text]
    if not counts or min(counts) < 1:
        parser.error("--threads takes positive thread counts, e.g. 1,2")

    print(f"{'threads':>7} {'time to depth ' + str(args.depth):>17} {'speed-up':>8} {'nodes':>12} {'Mnps':>6}")
    base = None
    for threads in counts:
        seconds, nodes = time_to_depth(threads, args.depth, args.hash, progress=not args.no_progress)
        base = base or seconds
        print(f"{threads:7} {seconds:15.2f} s {base / seconds:7.2f}x {nodes:12} {nodes / seconds / 1e6:6.2f}",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
