"""Time management: how one ``go`` command's clock becomes soft and hard limits."""

from __future__ import annotations

import pytest

from engine.timeman import HARD_CLOCK_SHARE, MIN_RESERVE, MIN_THINK, Limits, allocate

OVERHEAD = 0.01


@pytest.mark.parametrize("clock, increment", [(0.02, 0.0), (0.2, 0.0), (1.0, 0.01), (5.0, 0.05), (60.0, 0.0),
                                              (300.0, 3.0)])
def test_soft_within_hard_and_a_reserve_left_on_the_clock(clock: float, increment: float) -> None:
    soft, hard = allocate(Limits(wtime=clock, btime=clock, winc=increment, binc=increment), 0, OVERHEAD)
    assert soft is not None and hard is not None
    assert MIN_THINK <= soft <= hard
    assert hard <= max(clock - OVERHEAD - MIN_RESERVE, MIN_THINK)
    assert hard <= HARD_CLOCK_SHARE * (clock - OVERHEAD) + increment


def test_each_side_is_timed_on_its_own_clock() -> None:
    limits = Limits(wtime=60.0, btime=2.0)
    white_soft, _ = allocate(limits, 0, OVERHEAD)
    black_soft, _ = allocate(limits, 1, OVERHEAD)
    assert black_soft is not None and white_soft is not None and black_soft < white_soft


def test_movestogo_spreads_the_clock_over_the_moves_left() -> None:
    soft_many, _ = allocate(Limits(wtime=10.0, movestogo=20), 0, OVERHEAD)
    soft_few, _ = allocate(Limits(wtime=10.0, movestogo=2), 0, OVERHEAD)
    assert soft_many is not None and soft_few is not None and soft_many < soft_few
    # the last move before the time control may use most, never all, of the clock
    _, hard_last = allocate(Limits(wtime=1.0, movestogo=1), 0, OVERHEAD)
    assert hard_last is not None and 0.5 < hard_last <= 1.0 - OVERHEAD - MIN_RESERVE


def test_movetime_has_only_a_hard_limit_and_depth_none() -> None:
    assert allocate(Limits(movetime=1.0), 0, 0.05) == (None, pytest.approx(0.95))
    assert allocate(Limits(depth=5), 1, 0.05) == (None, None)
    assert allocate(Limits(infinite=True), 0, 0.05) == (None, None)


@pytest.mark.parametrize("clock, increment, overhead", [(0.1, 0.05, 0.03), (0.3, 0.1, 0.03), (1.0, 0.3, 0.05)])
def test_a_low_clock_with_increment_grows_back(clock: float, increment: float, overhead: float) -> None:
    """Every move loses the Move Overhead besides the search: near the end of a long
    increment game the soft limit plus that overhead stays below the increment, so the
    clock recovers instead of draining move by move."""
    soft, hard = allocate(Limits(wtime=clock, btime=clock, winc=increment, binc=increment), 0, overhead)
    assert soft is not None and hard is not None
    assert soft + overhead < increment
