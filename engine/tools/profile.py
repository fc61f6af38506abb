"""Where the search spends its time: make numba's machine code visible to ``perf``.

``perf`` sees the kernels numba loads from its cache as anonymous memory, so its report
names none of them.  Run under ``perf record``, this tool searches the ``bench``
positions in-process and writes ``/tmp/perf-<pid>.map``, the start, size and name of
every function compiled into ``search``, which ``perf report`` reads.  Nearly all of a
search is one function (the helpers are inlined), so ``--object`` also saves the object
code numba loaded and where it was loaded; ``--annotate`` then places the samples on
single instructions of ``objdump``'s disassembly.

Usage::

    perf record -F 4999 -o perf.data python -m engine.tools.profile --depth 13 --object search
    perf report -i perf.data --sort sym --stdio      # share of each function
    python -m engine.tools.profile --annotate perf.data --object search
        # hottest 256-byte windows of ``search``; search.annotated.txt has every instruction

Needs ``perf`` and ``objdump`` (binutils).  It reads numba internals
(``CPUCodeLibrary._set_compiled_object``), so a numba upgrade may break it; the engine
does not depend on it.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
from pathlib import Path

WINDOW = 256


def _keep_object_code() -> None:
    """Keep a copy of the object code of every library numba loads (it drops its own)."""
    import engine.jit  # noqa: F401  (sets numba's cache directory before numba loads code)
    from numba.core import codegen

    original = codegen.CPUCodeLibrary._set_compiled_object

    def keep(self, value):
        self.kept_object_code = bytes(value)
        original(self, value)

    codegen.CPUCodeLibrary._set_compiled_object = keep


def record(depth: int, object_stem: str | None) -> None:
    """Search the bench positions twice (load, then measure); write the perf map in between."""
    _keep_object_code()
    from engine.bench import run_bench
    from engine.search import search

    run_bench(depth=1, out=lambda line: None)
    library = next(iter(search.overloads.values())).library
    names = [function.name for function in library._shared_module.functions]
    starts = sorted((library.get_pointer_to_function(name), name) for name in names)
    starts = [(address, name) for address, name in starts if address]
    code_end = starts[0][0] + len(library.kept_object_code)
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for (address, name), (following, _) in zip(starts, starts[1:] + [(code_end, "")]):
            out.write(f"{address:x} {following - address:x} {_short_name(name)}\n")
    if object_stem:
        entry = next(iter(search.overloads.values())).fndesc.llvm_func_name
        Path(f"{object_stem}.o").write_bytes(library.kept_object_code)
        Path(f"{object_stem}.json").write_text(json.dumps(
            {"pid": os.getpid(), "symbol": entry, "address": library.get_pointer_to_function(entry)}))
    run_bench(depth=depth, out=lambda line: None)


def _short_name(mangled: str) -> str:
    """``engine.search.search`` out of numba's mangled ``_ZN6engine6search6searchB4v413...``."""
    prefix, _, rest = mangled.partition("_ZN")
    words = []
    while rest[:1].isdigit():
        digits = re.match(r"\d+", rest).group()
        length = int(digits)
        words.append(rest[len(digits): len(digits) + length])
        rest = rest[len(digits) + length:]
    return prefix + ".".join(words) if words else mangled[:60]


def annotate(perf_data: str, object_stem: str, top: int) -> None:
    """Print the hottest windows of ``search`` and write every instruction with its sample count."""
    info = json.loads(Path(f"{object_stem}.json").read_text())
    disassembly = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"{object_stem}.o"],
                                 capture_output=True, text=True, check=True).stdout
    instructions: list[tuple[int, str]] = []
    inside = False
    for line in disassembly.splitlines():
        header = re.match(r"([0-9a-f]+) <(.+)>:", line)
        if header:
            inside = header.group(2) == info["symbol"]
            if inside:
                entry_offset = int(header.group(1), 16)
            continue
        row = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if inside and row:
            text = re.sub(r"<[^>]*\+(0x[0-9a-f]+)>", r"<\1>", row.group(2))
            instructions.append((int(row.group(1), 16) - entry_offset, text))
    size = instructions[-1][0] + 16
    script = subprocess.run(["perf", "script", "-i", perf_data, "-F", "pid,ip"],
                            capture_output=True, text=True, check=True).stdout
    counts: collections.Counter[int] = collections.Counter()
    total = 0
    for line in script.split("\n"):
        fields = line.split()
        if len(fields) != 2 or int(fields[0]) != info["pid"]:
            continue
        total += 1
        offset = int(fields[1], 16) - info["address"]
        if 0 <= offset < size:
            counts[offset] += 1
    in_search = sum(counts.values())
    print(f"{total} samples in the process, {in_search} ({100 * in_search / max(total, 1):.1f}%) in search")
    windows: collections.Counter[int] = collections.Counter()
    for offset, count in counts.items():
        windows[offset // WINDOW] += count
    print(f"hottest {WINDOW}-byte windows of search (share of its samples):")
    for window, count in windows.most_common(top):
        print(f"  {window * WINDOW:#07x}  {100 * count / max(in_search, 1):5.1f}%")
    with open(f"{object_stem}.annotated.txt", "w") as out:
        for offset, text in instructions:
            out.write(f"{counts.get(offset, 0):6d} {offset:6x}  {text}\n")
    print(f"every instruction with its samples: {object_stem}.annotated.txt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=13, help="bench depth of the profiled run")
    parser.add_argument("--object", metavar="STEM", help="save (or read) search's object code as STEM.o / STEM.json")
    parser.add_argument("--annotate", metavar="PERF_DATA", help="place the samples of PERF_DATA on instructions")
    parser.add_argument("--top", type=int, default=20, help="windows to list with --annotate")
    args = parser.parse_args(argv)
    if args.annotate:
        if not args.object:
            parser.error("--annotate needs --object STEM from the recorded run")
        annotate(args.annotate, args.object, args.top)
    else:
        record(args.depth, args.object)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
