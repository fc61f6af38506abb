"""Where a cold compile goes: seconds per warm-up step and per compiled kernel.

    python -m engine.tools.compile_times [--jobs 1] [--json FILE]

Runs ``numbat warmup``'s steps (``engine.warmup.WARM_UP_STEPS``) in a fresh process
whose numba cache is an empty temporary folder, so everything compiles.  Numba reports
each compile as a ``numba:compile`` event; a kernel compiled while another compiles (a
callee not inlined) is nested in it, so each kernel gets its *own* seconds (its
compile minus the compiles nested in it) beside the inclusive ones.  The first lines
are the wall time of each step and in all; with ``--jobs N`` the whole
``warm_up(jobs=N)`` is timed instead (the parallel warm-up).

The figures are for the machine as it is: run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from engine.tools.data import REPO_ROOT

# Runs in the child: the events need numba's own hooks, and the cache must start empty.
CHILD = r"""
import json, sys, time
from engine.jit import CACHE_DIR
from numba.core import event
from engine import warmup

jobs = int(sys.argv[1])
records = []   # (name, signature, inclusive s, own s)
stack = []     # [start, nested seconds] of each compile in progress


class Listener(event.Listener):
    def on_start(self, ev):
        stack.append([time.perf_counter(), 0.0])

    def on_end(self, ev):
        begun, nested = stack.pop()
        spent = time.perf_counter() - begun
        if stack:
            stack[-1][1] += spent
        dispatcher = ev.data["dispatcher"]
        args = tuple(ev.data["args"])
        name = f"{dispatcher.py_func.__module__.removeprefix('engine.')}.{dispatcher.py_func.__name__}"
        records.append((name, str(args), spent, spent - nested))


steps = {}
with event.install_listener("numba:compile", Listener()):
    if jobs > 1:
        steps[f"warm_up(jobs={jobs})"] = warmup.warm_up(jobs)
    else:
        for step_name, step in warmup.WARM_UP_STEPS.items():
            begun = time.perf_counter()
            step()
            steps[step_name] = time.perf_counter() - begun
print(json.dumps({"steps": steps, "kernels": records, "cache": str(CACHE_DIR)}))
"""


def measure(jobs: int) -> dict:
    """Run the child on an empty cache; return its report."""
    with tempfile.TemporaryDirectory(prefix="numbat-cold-") as cache:
        env = dict(os.environ, NUMBAT_CACHE_DIR=cache)
        out = subprocess.run([sys.executable, "-c", CHILD, str(jobs)], cwd=REPO_ROOT, env=env,
                             capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"the warm-up failed:\n{out.stderr[-4000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def report(result: dict, top: int) -> list[str]:
    """Lines: step wall times, then kernels by own seconds."""
    lines = ["| step | seconds |", "|---|---|"]
    lines += [f"| {name} | {seconds:.1f} |" for name, seconds in result["steps"].items()]
    lines.append(f"| all | {sum(result['steps'].values()):.1f} |")
    lines += ["", "| kernel | compiles | own s | inclusive s |", "|---|---|---|---|"]
    by_kernel: dict[str, list[float]] = {}
    for name, _signature, inclusive, own in result["kernels"]:
        row = by_kernel.setdefault(name, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += own
        row[2] += inclusive
    ranked = sorted(by_kernel.items(), key=lambda item: -item[1][1])
    for name, (count, own, inclusive) in ranked[:top]:
        lines.append(f"| {name} | {int(count)} | {own:.1f} | {inclusive:.1f} |")
    rest = ranked[top:]
    if rest:
        compiles = int(sum(row[0] for _, row in rest))
        lines.append(f"| ({len(rest)} more) | {compiles} | {sum(row[1] for _, row in rest):.1f} | |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Measure a cold compile and print the tables (and write them as JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m engine.tools.compile_times", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="processes for the warm-up (default 1: steps timed apart)")
    parser.add_argument("--top", type=int, default=15, help="kernels listed (default 15)")
    parser.add_argument("--json", type=Path, help="also write the raw report here")
    args = parser.parse_args(argv)
    result = measure(args.jobs)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    print("\n".join(report(result, args.top)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
