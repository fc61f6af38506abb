"""Command line: ``numbat`` (or ``python run_engine.py``) with no argument speaks UCI.

Sub-commands for testers, as Stockfish has them (and ``numbat --version``):

    numbat perft DEPTH [FEN]    divide and total, Stockfish's ``go perft`` format
    numbat warmup [--jobs N]    compile every kernel into the disk cache (in parallel when cold)
    numbat bench [DEPTH]        fixed search of 40 positions; last line "N nodes M nps"
    numbat eval [FEN]           the static evaluation, feature group by feature group
"""

from __future__ import annotations

import argparse
import os
import sys
import time

# numpy's BLAS (OpenBLAS, MKL) starts a pool of one thread per core when numpy is
# imported.  The engine never multiplies matrices: those threads would only take memory
# and, as they spin after start-up, CPU that a tester running many engines at once needs.
# The engine's own threads are the ``Threads`` option's.  A user's explicit setting wins.
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _perft(depth: int, fen: str | None) -> int:
    """Print a divide of ``fen`` (default: start position) and the node rate."""
    from engine.board import Board, FenError
    from engine.perft import divide

    try:
        board = Board(fen) if fen else Board()
    except FenError as exc:
        print(f"invalid FEN: {exc}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    total = 0
    for text, count in divide(board, depth):
        print(f"{text}: {count}")
        total += count
    elapsed = time.perf_counter() - start
    print()
    print(f"Nodes searched: {total}")
    print(f"Time: {elapsed:.3f} s ({total / max(elapsed, 1e-9) / 1e6:.1f} Mnps)", file=sys.stderr)
    return 0


def _eval(fen: str | None) -> int:
    """Print the evaluation breakdown of ``fen`` (default: start position)."""
    from engine.board import Board, FenError
    from engine.evaluate import explain, load_weights

    try:
        board = Board(fen) if fen else Board()
    except FenError as exc:
        print(f"invalid FEN: {exc}", file=sys.stderr)
        return 2
    for line in explain(board, load_weights()):
        print(line)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``numbat`` console script and of ``run_engine.py``."""
    argv = sys.argv[1:] if argv is None else argv
    for variable in BLAS_THREAD_VARIABLES:  # before anything imports numpy
        os.environ.setdefault(variable, "1")
    if not argv:
        from engine.uci import main as uci_main

        return uci_main()
    from engine import ENGINE_NAME, __version__

    parser = argparse.ArgumentParser(prog="numbat", description="Numbat chess engine (UCI when run without arguments)")
    parser.add_argument("--version", action="version", version=f"{ENGINE_NAME} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    perft = sub.add_parser("perft", help="count leaf nodes (divide) to DEPTH")
    perft.add_argument("depth", type=int)
    perft.add_argument("fen", nargs="*", help="FEN (default: start position)")
    warmup = sub.add_parser("warmup", help="compile every kernel into numba's disk cache")
    warmup.add_argument("--jobs", type=int, default=None,
                        help="processes compiling at once (default: one per core on an empty cache)")
    bench = sub.add_parser("bench", help="fixed-depth search of the bench positions; prints 'N nodes M nps'")
    bench.add_argument("depth", type=int, nargs="?", default=None)
    evaluation = sub.add_parser("eval", help="static evaluation term by term (default: start position)")
    evaluation.add_argument("fen", nargs="*", help="FEN (default: start position)")
    args = parser.parse_args(argv)
    if args.command == "warmup":
        from engine.jit import CACHE_DIR
        from engine.warmup import warm_up

        print(f"kernels ready in {warm_up(args.jobs):.1f} s (cache: {CACHE_DIR})")
        return 0
    if args.command == "bench":
        from engine.bench import BENCH_DEPTH, run_bench

        run_bench(args.depth or BENCH_DEPTH)
        return 0
    if args.command == "eval":
        return _eval(" ".join(args.fen) or None)
    if args.command == "perft":
        return _perft(args.depth, " ".join(args.fen) or None)
    return 2


if __name__ == "__main__":
    sys.exit(main())
