"""``bench``: a fixed search over fixed positions, the engine's signature.

Forty positions (opening middlegames from 8moves_v3.pgn, tactical positions from
the Bratko-Kopec and WAC suites, endgames) are searched to ``BENCH_DEPTH`` with a
fresh 16 MB table.  With one thread the node count is deterministic, so any change
that should not alter the search must keep it; the last line, ``N nodes M nps``,
is the format OpenBench reads.

``BENCH_SIGNATURE`` is that node count at ``BENCH_DEPTH``, pinned: a test asserts it,
and every commit that changes the search tree changes it and says ``Bench: N`` in its
message (the Stockfish and Ethereal convention).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.fen import KIWIPETE, STARTING_FEN

if TYPE_CHECKING:
    import numpy as np

BENCH_DEPTH = 11
BENCH_SIGNATURE = 1_287_772

BENCH_POSITIONS = [
    STARTING_FEN,
    KIWIPETE,
    "r1bqrbk1/ppp2ppp/2np1n2/1B2p1B1/4P3/3P1N2/PPPNQPPP/R4RK1 w - - 0 9",
    "rnbq1rk1/ppp3bp/3p2p1/4Pp2/1PP3n1/5NP1/PB1NPP1P/R2QKB1R w KQ - 1 9",
    "r1b2rk1/ppppnppp/1bn2q2/1B6/3NP3/2P1B3/PP3PPP/RN1Q1RK1 w - - 5 9",
    "r2qk2r/pp1bppbp/2np1np1/8/2P5/1NN3P1/PP2PPBP/R1BQK2R w KQkq - 3 9",
    "rn1qk1nr/pp2bpp1/4p1b1/2ppP1Bp/3P3P/6N1/PPP1BPP1/RN1QK2R w KQkq - 2 9",
    "r1bqk2r/1p2npbp/p1np2p1/2p1p3/2P5/2NP1NP1/PP2PPBP/1RBQ1RK1 w kq - 0 9",
    "r1b1k1nr/bppp1ppp/p1n2q2/P7/4P3/1N6/1PP1QPPP/RNB1KB1R w KQkq - 1 9",
    "r2qk2r/pp1nbppp/4pn2/2p5/3Pp1b1/5NP1/PPPN1PBP/R1BQR1K1 w kq - 0 9",
    "rn1q1rk1/ppp1bppp/4b3/3n4/3P4/2NB1N2/PP3PPP/R1BQK2R w KQ - 2 9",
    "r1bqk2r/p3npbp/1pn1p1p1/2pp4/4P3/2PPBNP1/PP3PBP/RN1Q1RK1 w kq - 0 9",
    "r1bq1rk1/pp1nppbp/5np1/3p4/Q7/2NP1NP1/PP2PPBP/R1B1K2R w KQ - 3 9",
    "r2qkbnr/1bp2ppp/p2p4/1p6/3pP3/1BP5/PP3PPP/RNBQK2R w KQkq - 1 9",
    "r2qk2r/pp2n1pp/2nbbp2/2ppp3/8/1P1PPN2/PBP1BPPP/RN1Q1RK1 w kq - 1 9",
    "rnb1k2r/1p2nppp/p2q4/2pp4/3P4/2N2N2/PPP2PPP/R2QKB1R w KQkq - 0 9",
    "rn1q1rk1/pp3ppp/2p1pn2/2bp4/4P3/P1NP1Q1P/1PP1BPP1/R1B1K2R w KQ - 3 9",
    "r1bqkb1r/3n1ppp/p3pn2/1pp5/8/5NP1/PPQPPPBP/RNB2RK1 w kq - 0 9",
    "r1b1kb1r/ppq2ppp/2n1pn2/3p4/8/2P2NP1/PP1NPPBP/R1BQ1RK1 w kq - 4 9",
    "4b3/p3kp2/6p1/3pP2p/2pP1P2/4K1P1/P3N2P/8 w - - 0 1",
    "2q1rr1k/3bbnnp/p2p1pp1/2pPp3/PpP1P1P1/1P2BNNP/2BQ1PRK/7R b - - 0 1",
    "r1bq1rk1/pp2ppbp/2np2p1/2n5/P3PP2/N1P2N2/1PB3PP/R1B1QRK1 b - - 0 1",
    "rnb2r1k/pp2p2p/2pp2p1/q2P1p2/8/1Pb2NP1/PB2PPBP/R2Q1RK1 w - - 0 1",
    "3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - 0 1",
    "3rr3/2pq2pk/p2p1pnp/8/2QBPP2/1P6/P5PP/4RRK1 b - - 0 1",
    "rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - 0 1",
    "r2qnrnk/p2b2b1/1p1p2pp/2pPpp2/1PP1P3/PRNBB3/3QNPPP/5RK1 w - - 0 1",
    "1n2rr2/1pk3pp/pNn2p2/2N1p3/8/6P1/PP2PPKP/2RR4 w - - 0 1",
    "6k1/p4p1p/1p3np1/2q5/4p3/4P1N1/PP3PPP/3Q2K1 w - - 0 1",
    "3r4/1p2k2p/p1b1p1p1/4Q1Pn/2B3KP/4pP2/PP2R1N1/6q1 b - - 0 1",
    "b2b1r1k/3R1ppp/4qP2/4p1PQ/4P3/5B2/4N1K1/8 w - - 0 1",
    "r1b1qrk1/1p3ppp/p1p5/3Nb3/5N2/P7/1P4PQ/K1R1R3 w - - 0 1",
    "3r2k1/1p1b1pp1/pq5p/8/3NR3/2PQ3P/PP3PP1/6K1 b - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/5pk1/6p1/3P4/1p3P2/1P4K1/8/8 w - - 0 1",
    "8/8/2k5/5p2/1P3K2/8/6P1/8 b - - 0 1",
    "6k1/5p2/6p1/8/7p/8/6PP/6K1 w - - 0 1",
    "8/6k1/4K3/6B1/8/8/5N2/8 w - - 0 1",
    "4Kn2/2R5/8/8/8/3k4/8/8 b - - 0 1",
    "5r1K/8/8/8/8/6n1/7k/8 w - - 0 1",
]


def run_bench(depth: int = BENCH_DEPTH, out: Callable[[str], None] = print,
              weights: np.ndarray | None = None) -> tuple[int, float]:
    """Search every bench position to ``depth``; print and return (nodes, seconds).

    ``weights`` (an ``EvalFile``'s table) replaces the shipped evaluation weights, so a
    candidate file gets its own signature and speed; the default gives ``BENCH_SIGNATURE``.
    """
    from engine.board import Board
    from engine.searcher import Searcher
    from engine.timeman import Limits
    from engine.warmup import load_kernels

    # Compile (cold) or load (warm) the kernels before the clock starts: a cold run's
    # nps would otherwise count a minute of numba's compiler as search time.
    load_kernels()
    searcher = Searcher(hash_mb=16)
    if weights is not None:
        searcher.set_weights(weights)
    total_nodes = 0
    total_time = 0.0
    for index, fen in enumerate(BENCH_POSITIONS, 1):
        searcher.new_game()
        board = Board(fen)
        start = time.perf_counter()
        searcher.think(board, Limits(depth=depth), None)
        total_time += time.perf_counter() - start
        nodes = int(searcher.sd.counters[0])
        total_nodes += nodes
        out(f"position {index:2}/{len(BENCH_POSITIONS)}: {nodes} nodes  {fen}")
    nps = int(total_nodes / max(total_time, 1e-9))
    out("")
    out("===========================")
    out(f"Total time (ms) : {int(total_time * 1000)}")
    out(f"Nodes searched  : {total_nodes}")
    out(f"Nodes/second    : {nps}")
    out(f"{total_nodes} nodes {nps} nps")
    return total_nodes, total_time
