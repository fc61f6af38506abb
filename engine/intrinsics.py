"""LLVM-level helpers for the kernels: bit counts and scans, a prefetch, a raw byte read.

Each is a numba ``@intrinsic``: the kernel gets the one LLVM instruction (``ctpop``,
``cttz``, ``ctlz``, ``llvm.prefetch``, a load) where plain numba would loop or call.
"""

from __future__ import annotations

import engine.jit  # noqa: F401  (sets numba's cache directory before numba is imported)

# isort: split
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, bb):
    """Number of set bits of a uint64 (LLVM ctpop: one POPCNT instruction)."""
    if not isinstance(bb, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.int64(bb), codegen


@intrinsic
def lsb(typingctx, bb):
    """Index of the lowest set bit of a non-zero uint64 (LLVM cttz: one TZCNT)."""
    if not isinstance(bb, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.int64(bb), codegen


@intrinsic
def msb(typingctx, bb):
    """Index of the highest set bit of a non-zero uint64 (63 minus LLVM ctlz)."""
    if not isinstance(bb, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        zeros = builder.ctlz(args[0], ir.Constant(ir.IntType(1), 1))
        return builder.sub(ir.Constant(ir.IntType(64), 63), zeros)

    return types.int64(bb), codegen


@intrinsic
def prefetch(typingctx, arr, index):
    """Ask the CPU to load the cache line of ``arr.flat[index]`` now (LLVM prefetch, no effect
    on the program's results): a later read of it then need not wait for memory."""
    if not isinstance(arr, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, value=args[0])
        address = builder.bitcast(builder.gep(array.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        llvm_prefetch = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(llvm_prefetch, [address, i32(0), i32(3), i32(1)])  # read, keep in all levels, data
        return context.get_dummy_value()

    return types.void(arr, index), codegen


@intrinsic
def peek_u8(typingctx, address):
    """Byte at an absolute address, as int64 (the caller has bounds-checked it): how the
    Syzygy prober reads its memory-mapped files."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        pointer = builder.inttoptr(args[0], ir.IntType(8).as_pointer())
        return builder.zext(builder.load(pointer), ir.IntType(64))

    return types.int64(address), codegen
