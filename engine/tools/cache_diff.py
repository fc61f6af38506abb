"""Compare the machine code of two numba disk caches, kernel by kernel.

A change to how kernels are compiled (``engine.jit``, ``engine.numba_patches``) should
change how long the compile takes, not what it produces.  This tool checks that: it
takes the object code out of each cached kernel (``*.nbc``: a pickle holding an ELF
object), disassembles it with ``objdump`` and compares the instructions, with addresses
and immediate constants masked (they move when symbol names or layout change).  Kernels
are matched by file name, e.g. ``search.search-286.py311.1.nbc``, so both caches must
come from the same kernel sources, filled by the same command (numba numbers a kernel's
overloads in the order they were compiled).

    NUMBAT_CACHE_DIR=/tmp/before numbat warmup   # on the old code
    NUMBAT_CACHE_DIR=/tmp/after numbat warmup    # on the new code
    python -m engine.tools.cache_diff /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import pickle
import re
import subprocess
import tempfile
from pathlib import Path

_ADDRESS_LINE = re.compile(r"^\s+[0-9a-f]+:")
_SYMBOL = re.compile(r"<[^>]*>")
_HEX = re.compile(r"0x[0-9a-f]+")


def object_codes(value: object) -> list[bytes]:
    """Every ELF object inside an unpickled cache entry, in order."""
    if isinstance(value, (bytes, bytearray)):
        return [bytes(value)] if value[:4] == b"\x7fELF" else []
    if isinstance(value, (tuple, list)):
        return [code for item in value for code in object_codes(item)]
    if isinstance(value, dict):
        return [code for item in value.values() for code in object_codes(item)]
    return []


def instructions(elf: bytes) -> list[str]:
    """The object's instructions as ``objdump`` prints them, addresses and constants masked."""
    with tempfile.NamedTemporaryFile(suffix=".o") as handle:
        handle.write(elf)
        handle.flush()
        listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", handle.name],
                                 capture_output=True, text=True, check=True).stdout
    return [_HEX.sub("X", _SYMBOL.sub("", line.split(":", 1)[1])).strip()
            for line in listing.splitlines() if _ADDRESS_LINE.match(line)]


def kernel_code(path: Path) -> list[list[str]]:
    """The masked instructions of every object in one ``.nbc`` file."""
    import engine.jit  # noqa: F401  (numba must be importable to unpickle a cache entry)

    return [instructions(elf) for elf in object_codes(pickle.loads(path.read_bytes()))]


def main(argv: list[str] | None = None) -> int:
    """Print each kernel whose code differs; exit 1 if any does or a kernel is missing."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="one numba cache folder (searched recursively)")
    parser.add_argument("after", type=Path, help="the other")
    args = parser.parse_args(argv)
    before = {path.name: path for path in args.before.rglob("*.nbc")}
    after = {path.name: path for path in args.after.rglob("*.nbc")}
    missing = sorted(set(before) ^ set(after))
    for name in missing:
        print(f"only in one cache: {name}")
    differ = 0
    for name in sorted(set(before) & set(after)):
        old, new = kernel_code(before[name]), kernel_code(after[name])
        if old != new:
            differ += 1
            print(f"differs: {name} ({sum(map(len, old))} against {sum(map(len, new))} instructions)")
    print(f"{len(set(before) & set(after)) - differ} kernels identical, {differ} differ, {len(missing)} unmatched")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
