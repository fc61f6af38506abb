"""The transposition table: packing, the key check, replacement, clearing, cache-line buckets."""

from __future__ import annotations

import numpy as np
import pytest

from engine.tt import (
    BOUND_EXACT,
    BOUND_LOWER,
    BOUND_UPPER,
    BUCKET,
    MATE,
    SAME_KEY_DEPTH_MARGIN,
    clear_table,
    entry_bound,
    entry_depth,
    entry_eval,
    entry_move,
    entry_score,
    hashfull,
    new_table,
    score_from_tt,
    score_to_tt,
    tt_probe,
    tt_store,
)


def same_bucket_keys(tt, bucket: int, n: int) -> list[np.uint64]:
    """``n`` different keys that all map to ``bucket`` (the index comes from key >> 1)."""
    return [np.uint64((bucket << 1) | ((j + 1) << 40)) for j in range(n)]


@pytest.mark.parametrize("megabytes", [1, 16, 64])
def test_a_bucket_is_one_cache_line(megabytes: int) -> None:
    tt = new_table(megabytes)
    size = tt.slots.shape[0]
    assert tt.slots.shape[1] == 2 and tt.slots.ctypes.data % 64 == 0
    assert size % BUCKET == 0 and (size // BUCKET) & (size // BUCKET - 1) == 0  # a power of two
    assert size * 16 <= megabytes * 1024 * 1024 < size * 16 * 2


def test_store_then_probe_returns_every_field() -> None:
    tt = new_table(1)
    key = np.uint64(0x123456789ABCDEF1)
    tt_store(tt, key, 0x1234, -517, 33, 9, BOUND_LOWER)
    data = tt_probe(tt, key)
    assert (entry_move(data), entry_score(data), entry_eval(data), entry_depth(data), entry_bound(data)) == (
        0x1234, -517, 33, 9, BOUND_LOWER)
    assert tt_probe(tt, key ^ np.uint64(1 << 50)) == 0  # another key in the same bucket: a miss


def test_a_torn_slot_fails_the_key_check() -> None:
    tt = new_table(1)
    key = np.uint64(0xDEADBEEF12345678)
    tt_store(tt, key, 77, 10, 0, 5, BOUND_EXACT)
    slot = int(np.nonzero(tt.slots[:, 1])[0][0])
    tt.slots[slot, 1] ^= np.uint64(1 << 20)  # half of a write by another thread
    assert tt_probe(tt, key) == 0


def test_mate_scores_are_stored_relative_to_the_node() -> None:
    mate_in_5_from_root = MATE - 5
    stored = score_to_tt(mate_in_5_from_root, 3)  # found 3 plies below the root: mate in 2 from there
    assert stored == MATE - 2
    assert score_from_tt(stored, 1) == MATE - 3  # the same node met 1 ply below the root
    assert score_from_tt(score_to_tt(-120, 7), 2) == -120


def test_replacement_keeps_deep_entries_and_drops_old_ones() -> None:
    tt = new_table(1)
    keys = same_bucket_keys(tt, 5, BUCKET + 1)
    for depth, key in zip((10, 2, 8, 6), keys[:4], strict=True):
        tt_store(tt, key, 1, 0, 0, depth, BOUND_EXACT)
    tt_store(tt, keys[4], 1, 0, 0, 1, BOUND_EXACT)  # the bucket is full: the shallowest goes
    assert tt_probe(tt, keys[1]) == 0
    assert all(tt_probe(tt, k) != 0 for k in (keys[0], keys[2], keys[3], keys[4]))
    tt.generation[0] += 3  # three searches later the depth-10 entry is worth 10 - 8 * 3 < 1
    fresh = same_bucket_keys(tt, 5, BUCKET + 2)[-1]
    tt_store(tt, keys[4], 1, 0, 0, 1, BOUND_EXACT)  # refresh one entry to this generation
    tt_store(tt, fresh, 1, 0, 0, 1, BOUND_UPPER)
    assert tt_probe(tt, fresh) != 0 and tt_probe(tt, keys[4]) != 0
    assert tt_probe(tt, keys[3]) == 0  # the least worth: shallowest of the old generation


def test_storing_again_keeps_the_old_move_when_none_is_given() -> None:
    tt = new_table(1)
    key = np.uint64(0x0F0F0F0F0F0F0F0F)
    tt_store(tt, key, 321, 5, 0, 4, BOUND_LOWER)
    tt_store(tt, key, 0, -5, 0, 6, BOUND_UPPER)
    data = tt_probe(tt, key)
    assert entry_move(data) == 321 and entry_depth(data) == 6 and entry_bound(data) == BOUND_UPPER


def test_a_shallow_bound_does_not_replace_a_deep_entry_of_this_search() -> None:
    tt = new_table(1)
    key = np.uint64(0x7777AAAA5555CCCC)
    deep = 10
    tt_store(tt, key, 55, 120, 0, deep, BOUND_LOWER)
    tt_store(tt, key, 0, -40, 0, deep - SAME_KEY_DEPTH_MARGIN - 1, BOUND_UPPER)  # a quiescence-like bound
    data = tt_probe(tt, key)
    assert (entry_depth(data), entry_score(data), entry_bound(data)) == (deep, 120, BOUND_LOWER)
    tt_store(tt, key, 0, -40, 0, deep - SAME_KEY_DEPTH_MARGIN, BOUND_UPPER)  # nearly as deep: replaces
    assert entry_depth(tt_probe(tt, key)) == deep - SAME_KEY_DEPTH_MARGIN
    tt_store(tt, key, 66, 15, 0, 0, BOUND_EXACT)  # an exact score always replaces
    assert (entry_depth(tt_probe(tt, key)), entry_move(tt_probe(tt, key))) == (0, 66)
    tt_store(tt, key, 66, 15, 0, deep, BOUND_LOWER)
    tt.generation[0] += 1  # the next search: the old entry no longer guards itself
    tt_store(tt, key, 0, -40, 0, 1, BOUND_UPPER)
    assert entry_depth(tt_probe(tt, key)) == 1


def test_clear_and_hashfull() -> None:
    tt = new_table(1)
    assert hashfull(tt) == 0
    for bucket in range(300):
        for key in same_bucket_keys(tt, bucket, BUCKET):
            tt_store(tt, key, 1, 0, 0, 3, BOUND_EXACT)
    assert hashfull(tt) == 1000  # the first 1000 slots are the first 250 buckets, all full
    clear_table(tt)
    assert hashfull(tt) == 0 and not tt.slots.any()
