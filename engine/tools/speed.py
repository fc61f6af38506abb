"""Speed benchmark: perft nodes per second against Debian's stockfish, and start-up times.

    python -m engine.tools.speed [--stockfish /usr/games/stockfish] [--repeat 3]

Prints, for start position perft 6 and Kiwipete perft 5, our in-process nps (after
compilation, best of ``--repeat``) beside stockfish's ``go perft`` nps measured in
the same run, and their ratio; then our ``bench`` (40 positions, fixed depth, one
thread) against ``stockfish bench`` (its default: 16 MB hash, one thread, depth 13),
each the ``Nodes/second`` of its own last line, best of ``--repeat``.  Then how much of
our ``bench`` time the Python driver spends outside the kernel (``bench`` run in this
process with every kernel call timed; the least and most over ``--repeat`` runs): the
host's speed wanders, and this split is the steadier figure for driver changes.  Then the
start-up figures: the seconds until a fresh process has imported the engine and
finished ``perft 1`` with a warm cache, and the ``uciok`` and ``readyok`` latencies of a
fresh ``run_engine.py``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from engine.fen import KIWIPETE
from engine.tools.data import REPO_ROOT
from engine.tools.engines import NUMBAT_COMMAND, STOCKFISH_PATH

CASES = [("startpos", None, 6, 119060324), ("kiwipete", KIWIPETE, 5, 193690690)]


def our_nps(fen: str | None, depth: int, expected: int, repeat: int) -> float:
    """Best nodes per second of our perft over ``repeat`` runs (the count is checked)."""
    from engine.board import Board
    from engine.perft import perft

    best = 0.0
    for _ in range(repeat):
        board = Board(fen) if fen else Board()
        start = time.perf_counter()
        nodes = perft(board, depth)
        elapsed = time.perf_counter() - start
        if nodes != expected:
            raise SystemExit(f"perft mismatch: {nodes} != {expected}")
        best = max(best, nodes / elapsed)
    return best


def stockfish_nps(binary: str, fen: str | None, depth: int, repeat: int) -> float:
    """Best nodes per second of stockfish's ``go perft`` (wall time of the command)."""
    best = 0.0
    position = f"position fen {fen}" if fen else "position startpos"
    for _ in range(repeat):
        proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert proc.stdin and proc.stdout
        proc.stdin.write("uci\nisready\n")
        proc.stdin.flush()
        while proc.stdout.readline().strip() != "readyok":
            pass
        proc.stdin.write(f"{position}\ngo perft {depth}\n")
        proc.stdin.flush()
        start = time.perf_counter()
        while not (line := proc.stdout.readline()).startswith("Nodes searched"):
            pass
        elapsed = time.perf_counter() - start
        proc.stdin.write("quit\n")
        proc.stdin.flush()
        proc.wait()
        best = max(best, int(line.split()[-1]) / elapsed)
    return best


def bench_nps(command: list[str], repeat: int) -> float:
    """Best nodes per second a ``bench`` command reports (Numbat: ``N nodes M nps``;
    stockfish: ``Nodes/second : M`` on stderr)."""
    best = 0.0
    for _ in range(repeat):
        proc = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, check=True)
        for line in (proc.stdout + proc.stderr).splitlines():
            words = line.split()
            if line.startswith("Nodes/second"):
                best = max(best, float(words[-1]))
            elif len(words) == 4 and words[1] == "nodes" and words[3] == "nps":
                best = max(best, float(words[2]))
    return best


def driver_time(repeat: int) -> tuple[float, float, float]:
    """(least, most) seconds of one in-process ``bench`` spent outside the search kernel
    over ``repeat`` runs, and the whole ``bench`` time of the run with the least."""
    import engine.searcher
    from engine.bench import run_bench

    kernel = engine.searcher.search
    inside = 0.0

    def timed(*args):
        nonlocal inside
        start = time.perf_counter()
        try:
            return kernel(*args)
        finally:
            inside += time.perf_counter() - start

    outside: list[tuple[float, float]] = []
    engine.searcher.search = timed
    try:
        for _ in range(repeat):
            inside = 0.0
            _, total = run_bench(out=lambda line: None)
            outside.append((total - inside, total))
    finally:
        engine.searcher.search = kernel
    least, most = min(outside), max(outside)
    return least[0], most[0], least[1]


def startup_times() -> dict[str, float]:
    """Warm-cache start-up: import + perft 1, and uciok / readyok latencies."""
    code = "from engine.board import Board; from engine.perft import perft; perft(Board(), 1)"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True)
    perft1 = time.perf_counter() - start
    start = time.perf_counter()
    proc = subprocess.Popen(list(NUMBAT_COMMAND), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdin and proc.stdout
    proc.stdin.write("uci\n")
    proc.stdin.flush()
    while proc.stdout.readline().strip() != "uciok":
        pass
    uciok = time.perf_counter() - start
    proc.stdin.write("isready\n")
    proc.stdin.flush()
    while proc.stdout.readline().strip() != "readyok":
        pass
    readyok = time.perf_counter() - start
    proc.stdin.write("quit\n")
    proc.stdin.flush()
    proc.wait()
    return {"process start to perft 1 done": perft1, "process start to uciok": uciok,
            "process start to readyok": readyok}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stockfish", default=shutil.which("stockfish") or STOCKFISH_PATH)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from engine.warmup import warm_up

    warm_up()
    have_sf = Path(args.stockfish).exists()
    print(f"{'position':10} {'depth':>5} {'numbat Mnps':>12} {'stockfish Mnps':>15} {'ratio':>6}")
    for name, fen, depth, expected in CASES:
        ours = our_nps(fen, depth, expected, args.repeat)
        theirs = stockfish_nps(args.stockfish, fen, depth, args.repeat) if have_sf else float("nan")
        print(f"{name:10} {depth:5} {ours / 1e6:12.1f} {theirs / 1e6:15.1f} {ours / theirs:6.2f}")
    ours = bench_nps([*NUMBAT_COMMAND, "bench"], args.repeat)
    theirs = bench_nps([args.stockfish, "bench"], args.repeat) if have_sf else float("nan")
    print(f"{'bench':10} {'':5} {ours / 1e6:12.2f} {theirs / 1e6:15.2f} {ours / theirs:6.2f}")
    least, most, total = driver_time(args.repeat)
    print(f"bench time outside the kernel: {1000 * least:.0f}-{1000 * most:.0f} ms "
          f"({100 * least / total:.1f}% of {total:.2f} s at the least)")
    for label, seconds in startup_times().items():
        print(f"{label}: {seconds:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
