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
    python -m engine.tools.profile --annotate perf.data --object search [--function engine.moveorder.score_moves]
        # hottest 256-byte windows of the function; search.annotated.txt has every instruction

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

    # isort: split
    from numba.core import codegen

    original = codegen.CPUCodeLibrary._set_compiled_object

    def keep(self, value):
        self.kept_object_code = bytes(value)
        original(self, value)

    codegen.CPUCodeLibrary._set_compiled_object = keep  # type: ignore[method-assign]


def record(depth: int, object_stem: str | None) -> None:
    """Search the bench positions twice (load, then measure); write the perf map in between."""
    _keep_object_code()
    from engine.bench import run_bench
    from engine.search import search

    run_bench(depth=1, out=lambda line: None)
    library = next(iter(search.overloads.values())).library
    object_code = getattr(library, "kept_object_code", None)
    if object_code is None:  # compiled in this process, not loaded: numba kept no object code
        raise SystemExit("the kernels were compiled, not loaded from the cache: run the command again")
    names = [function.name for function in library._shared_module.functions]
    starts = sorted((library.get_pointer_to_function(name), name) for name in names)
    starts = [(address, name) for address, name in starts if address]
    code_end = starts[0][0] + len(object_code)  # an upper bound for the last function's end
    with open(f"/tmp/perf-{os.getpid()}.map", "w") as out:
        for (address, name), (following, _) in zip(starts, starts[1:] + [(code_end, "")], strict=True):
            out.write(f"{address:x} {following - address:x} {_short_name(name)}\n")
    if object_stem:
        Path(f"{object_stem}.o").write_bytes(object_code)
        Path(f"{object_stem}.json").write_text(json.dumps(
            {"pid": os.getpid(), "addresses": {name: address for address, name in starts}}))
    run_bench(depth=depth, out=lambda line: None)


def _short_name(mangled: str) -> str:
    """``engine.search.search`` out of numba's mangled ``_ZN6engine6search6searchB4v413...``."""
    prefix, _, rest = mangled.partition("_ZN")
    words = []
    while (number := re.match(r"\d+", rest)) is not None:
        digits = number.group()
        length = int(digits)
        words.append(rest[len(digits): len(digits) + length])
        rest = rest[len(digits) + length:]
    return prefix + ".".join(words) if words else mangled[:60]


def _disassemble(object_file: str) -> dict[str, list[tuple[int, str]]]:
    """Instructions of every function in ``object_file``: symbol -> [(offset in function, text)]."""
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", object_file],
                             capture_output=True, text=True, check=True).stdout
    functions: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] = []
    entry = 0
    for line in listing.splitlines():
        header = re.match(r"([0-9a-f]+) <(.+)>:", line)
        if header:
            entry = int(header.group(1), 16)
            current = functions.setdefault(header.group(2), [])
            continue
        row = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if row:
            current.append((int(row.group(1), 16) - entry, re.sub(r"<[^>]*\+(0x[0-9a-f]+)>", r"<\1>", row.group(2))))
    return functions


def annotate(perf_data: str, object_stem: str, top: int, function: str) -> None:
    """Print the hottest windows of ``function`` and write every instruction with its sample count.

    Numba compiles a generic helper once per argument type, so a name may stand for
    several functions: the one with the most samples is shown.
    """
    info = json.loads(Path(f"{object_stem}.json").read_text())
    symbols = [name for name in info["addresses"] if _short_name(name) == function]
    if not symbols:
        known = sorted({_short_name(name) for name in info["addresses"]})
        raise SystemExit(f"no compiled function {function!r}; the map has: {', '.join(known)}")
    instructions = _disassemble(f"{object_stem}.o")
    script = subprocess.run(["perf", "script", "-i", perf_data, "-F", "pid,ip"],
                            capture_output=True, text=True, check=True).stdout
    ips = [int(fields[1], 16) for fields in (line.split() for line in script.split("\n"))
           if len(fields) == 2 and int(fields[0]) == info["pid"]]
    counted = []
    for symbol in symbols:
        start, code = info["addresses"][symbol], instructions[symbol]
        end = start + code[-1][0] + 16
        counted.append((collections.Counter(ip - start for ip in ips if start <= ip < end), symbol))
    counts, symbol = max(counted, key=lambda pair: sum(pair[0].values()))
    inside = sum(counts.values())
    print(f"{len(ips)} samples in the process, {inside} ({100 * inside / max(len(ips), 1):.1f}%) in {function}"
          + (f" (the hottest of {len(symbols)} compiled versions)" if len(symbols) > 1 else ""))
    windows: collections.Counter[int] = collections.Counter()
    for offset, count in counts.items():
        windows[offset // WINDOW] += count
    print(f"hottest {WINDOW}-byte windows of {function} (share of its samples):")
    for window, count in windows.most_common(top):
        print(f"  {window * WINDOW:#07x}  {100 * count / max(inside, 1):5.1f}%")
    with open(f"{object_stem}.annotated.txt", "w") as out:
        for offset, text in instructions[symbol]:
            out.write(f"{counts.get(offset, 0):6d} {offset:6x}  {text}\n")
    print(f"every instruction with its samples: {object_stem}.annotated.txt")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=13, help="bench depth of the profiled run")
    parser.add_argument("--object", metavar="STEM", help="save (or read) search's object code as STEM.o / STEM.json")
    parser.add_argument("--annotate", metavar="PERF_DATA", help="place the samples of PERF_DATA on instructions")
    parser.add_argument("--top", type=int, default=20, help="windows to list with --annotate")
    parser.add_argument("--function", default="engine.search.search",
                        help="compiled function to annotate (a name of the perf map; generic ones may repeat)")
    args = parser.parse_args(argv)
    if args.annotate:
        if not args.object:
            parser.error("--annotate needs --object STEM from the recorded run")
        annotate(args.annotate, args.object, args.top, args.function)
    else:
        record(args.depth, args.object)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
