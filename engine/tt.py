"""The transposition table: one uint64 numpy array, shared by every search thread.

Layout: ``slots uint64[size, 2]``, ``size / BUCKET`` buckets of ``BUCKET`` slots; slot
``i`` is ``slots[i, 0]`` (the check word) and ``slots[i, 1]`` (the data).  The data
word packs one entry:

    bits  0-15  best move (0 = none)
    bits 16-31  score, stored as score + 32768 (mate scores relative to the node)
    bits 32-47  static evaluation + 32768 (0: none, ``EVAL_NONE``)
    bits 48-55  depth + 1 (0 marks an empty slot; quiescence stores depth 0)
    bits 56-57  bound: BOUND_UPPER, BOUND_LOWER or BOUND_EXACT
    bits 58-63  generation (search number modulo 64), for aging

The check word holds ``key ^ data`` ("lockless hashing"): a slot torn by two threads
writing at once fails the key check instead of returning a wrong move.

A bucket is four slots of 16 bytes: one 64-byte cache line, since the array starts on
a 64-byte boundary.  A probe therefore costs one memory access, and the search asks for
that line (``tt_prefetch``) as soon as it has made a move, so that the child's probe
finds it in cache instead of waiting on memory.

Replacement:  A store goes to the slot already holding the key, else to the slot of
least worth, where worth is depth minus 8 times the entry's age in searches: deep
entries survive, old ones go.  A bound more than ``SAME_KEY_DEPTH_MARGIN`` plies
shallower than the entry of this search it would replace is not stored at all.

Mate scores are stored relative to the node ("mate in 3 from here") and turned
back into distance from the root when probed, so they stay right wherever the
position recurs.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from engine.intrinsics import prefetch
from engine.jit import hot_njit, njit

BOUND_NONE, BOUND_UPPER, BOUND_LOWER, BOUND_EXACT = 0, 1, 2, 3
BUCKET = 4
ENTRY_BYTES = 16
AGE_WEIGHT = 8
SAME_KEY_DEPTH_MARGIN = 3  # a bound for a stored position replaces it only if at most this much shallower

MATE = 32000
MATE_IN_MAX_PLY = MATE - 256  # scores beyond this are mates (or tablebase wins)
TB_WIN = 20000  # a tablebase win, minus the ply it was found at: below every mate score
# "No static evaluation" (an entry from a tablebase result, or of a node in check): the
# prober evaluates the position itself.  It packs to 0, below every real evaluation.
EVAL_NONE = -32768

TransTable = namedtuple("TransTable", ["slots", "generation"])
CACHE_LINE = 64

_U16 = np.uint64(0xFFFF)
_U8 = np.uint64(0xFF)


def new_table(megabytes: int) -> TransTable:
    """A zeroed table of about ``megabytes`` MB (a power-of-two number of buckets)."""
    slots = max(BUCKET, megabytes * 1024 * 1024 // ENTRY_BYTES)
    buckets = 1 << (slots // BUCKET).bit_length() - 1
    size = buckets * BUCKET
    # numpy promises 16-byte alignment only: over-allocate and start the view on a line.
    words = CACHE_LINE // 8
    raw = np.zeros(size * 2 + words, dtype=np.uint64)
    skip = (-raw.ctypes.data % CACHE_LINE) // 8
    slots_view = raw[skip:skip + size * 2].reshape(size, 2)
    return TransTable(slots_view, np.zeros(1, dtype=np.int64))


def clear_table(tt: TransTable) -> None:
    """Empty every slot (``ucinewgame``, ``Clear Hash``)."""
    tt.slots.fill(0)
    tt.generation[0] = 0


@njit(inline="always")
def score_to_tt(score, ply):
    """Mate scores from root distance to node distance."""
    if score >= MATE_IN_MAX_PLY:
        return score + ply
    if score <= -MATE_IN_MAX_PLY:
        return score - ply
    return score


@njit(inline="always")
def score_from_tt(score, ply):
    """Mate scores from node distance back to root distance."""
    if score >= MATE_IN_MAX_PLY:
        return score - ply
    if score <= -MATE_IN_MAX_PLY:
        return score + ply
    return score


@njit(inline="always")
def bucket_start(tt, key):
    """Index of the first slot of ``key``'s bucket."""
    buckets = tt.slots.shape[0] // BUCKET
    return (np.int64(key >> np.uint64(1)) & (buckets - 1)) * BUCKET


@njit(inline="always")
def tt_prefetch(tt, key):
    """Start loading ``key``'s bucket into the cache (called right after a move is made)."""
    prefetch(tt.slots, 2 * bucket_start(tt, key))


@njit(inline="always")
def tt_probe(tt, key):
    """Packed data of ``key``'s entry, or 0 when absent."""
    start = bucket_start(tt, key)
    for i in range(start, start + BUCKET):
        data = tt.slots[i, 1]
        if tt.slots[i, 0] ^ data == key and data != 0:
            return data
    return np.uint64(0)


@njit(inline="always")
def entry_move(data):
    """Best move of a packed entry."""
    return np.int64(data & _U16)


@njit(inline="always")
def entry_score(data):
    """Score of a packed entry (relative to the node)."""
    return np.int64((data >> np.uint64(16)) & _U16) - 32768


@njit(inline="always")
def entry_eval(data):
    """Static evaluation of a packed entry."""
    return np.int64((data >> np.uint64(32)) & _U16) - 32768


@njit(inline="always")
def entry_depth(data):
    """Search depth of a packed entry."""
    return np.int64((data >> np.uint64(48)) & _U8) - 1


@njit(inline="always")
def entry_bound(data):
    """Bound type of a packed entry."""
    return np.int64((data >> np.uint64(56)) & np.uint64(3))


@njit(inline="always")
def tt_store(tt, key, move, score, static_eval, depth, bound):
    """Write an entry for ``key`` under the replacement scheme of the module docstring."""
    start = bucket_start(tt, key)
    generation = tt.generation[0] & 63
    victim = start
    worst = 1 << 30
    for i in range(start, start + BUCKET):
        data = tt.slots[i, 1]
        if data == 0:
            victim = i
            break
        if tt.slots[i, 0] ^ data == key:
            # The same position: a shallow bound (a quiescence result, say) must not wipe out a
            # deep one of this search; an exact score, a depth nearly as deep, or an entry
            # left over from an earlier search is replaced.
            if (bound != BOUND_EXACT and depth < entry_depth(data) - SAME_KEY_DEPTH_MARGIN
                    and (data >> np.uint64(58)) == np.uint64(generation)):
                return
            victim = i
            if move == 0:
                move = entry_move(data)  # keep the old best move
            break
        age = (generation - np.int64(data >> np.uint64(58))) & 63
        worth = entry_depth(data) - AGE_WEIGHT * age
        if worth < worst:
            worst = worth
            victim = i
    if depth < -1:
        depth = -1
    data = (np.uint64(move & 0xFFFF)
            | (np.uint64((score + 32768) & 0xFFFF) << np.uint64(16))
            | (np.uint64((static_eval + 32768) & 0xFFFF) << np.uint64(32))
            | (np.uint64((depth + 1) & 0xFF) << np.uint64(48))
            | (np.uint64(bound) << np.uint64(56))
            | (np.uint64(generation) << np.uint64(58)))
    tt.slots[victim, 1] = data
    tt.slots[victim, 0] = key ^ data


@hot_njit
def hashfull(tt):
    """Per mille of the first 1000 slots used in the current generation."""
    generation = tt.generation[0] & 63
    used = 0
    n = min(1000, tt.slots.shape[0])
    for i in range(n):
        data = tt.slots[i, 1]
        if data != 0 and np.int64(data >> np.uint64(58)) == generation:
            used += 1
    return used * 1000 // n
