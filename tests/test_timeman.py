"""Time management: how one ``go`` command's clock becomes soft and hard limits."""

from __future__ import annotations

import pytest

from engine.timeman import (
    HARD_CLOCK_SHARE,
    INCREMENT_HORIZON,
    INCREMENT_HORIZON_CLOCK,
    MIN_RESERVE,
    MIN_THINK,
    MOVES_HORIZON,
    NODE_SHARE_MIN_DEPTH,
    SOFT_INCREMENT_SHARE,
    SUDDEN_DEATH_RESERVE_SHARE,
    Limits,
    allocate,
    falling_eval_factor,
    node_share_factor,
    soft_limit_scale,
    sudden_death_reserve,
)

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


def _play_sudden_death(clock: float, overhead: float, latency: float, moves: int) -> list[float]:
    """The clock before each of ``moves`` moves of a game without increment in which every
    move takes its soft limit plus ``latency`` seconds (the pipe and Python)."""
    start = clock
    clocks = []
    for _ in range(moves):
        clocks.append(clock)
        soft, hard = allocate(Limits(wtime=clock, btime=clock), 0, overhead, start)
        assert soft is not None and hard is not None
        clock -= soft + latency
    return clocks


@pytest.mark.parametrize("clock, overhead, latency", [(10.0, 0.03, 0.004), (60.0, 0.03, 0.03), (180.0, 0.1, 0.1)])
def test_sudden_death_keeps_a_reserve_for_a_long_game(clock: float, overhead: float, latency: float) -> None:
    """Without increment a share of the clock per move shrinks it geometrically, yet no
    move costs less than its latency: a game far longer than usual must still not flag.
    The reserve takes no more than a twentieth of the starting clock from the plan."""
    clocks = _play_sudden_death(clock, overhead, latency, 175)
    assert min(clocks) > 0.0
    reserve = sudden_death_reserve(0.0, overhead, clock)
    assert 0.0 < reserve <= SUDDEN_DEATH_RESERVE_SHARE * clock
    soft_first, _ = allocate(Limits(wtime=clock, btime=clock), 0, overhead, clock)
    assert soft_first == pytest.approx((clock - overhead - reserve) / MOVES_HORIZON)


def test_without_the_reserve_the_same_game_would_flag() -> None:
    """The model above is not vacuous: the plan without a reserve (an increment that
    covers the overhead, then taken away again) runs a 10+0 clock out within 175 moves."""
    clock, overhead, latency = 10.0, 0.03, 0.004
    for _ in range(175):
        soft, _ = allocate(Limits(wtime=clock, btime=clock, winc=overhead, binc=overhead), 0, overhead, clock)
        assert soft is not None
        clock -= soft + latency
        if clock <= 0.0:
            break
    assert clock <= 0.0


def test_an_increment_that_pays_for_the_overhead_keeps_nothing_back() -> None:
    assert sudden_death_reserve(0.05, 0.03, 5.0) == 0.0
    soft, _ = allocate(Limits(wtime=5.0, btime=5.0, winc=0.05, binc=0.05), 0, 0.03, 5.0)
    assert soft == pytest.approx((5.0 - 0.03) / INCREMENT_HORIZON + SOFT_INCREMENT_SHARE * 0.02)
    # A repeating control refills the clock: no reserve either.
    soft, _ = allocate(Limits(wtime=5.0, movestogo=10), 0, 0.03, 5.0)
    assert soft == pytest.approx((5.0 - 0.03) / 10)


def test_an_increment_game_plans_over_fewer_moves_while_its_clock_holds_ten_increments() -> None:
    """The increment pays for the moves beyond a shorter horizon; on a low clock, in sudden
    death and under a repeating control the plan is the long horizon's (or movestogo's)."""
    def first_term(limits: Limits) -> float:
        soft, _ = allocate(limits, 0, 0.03, 10.0)
        assert soft is not None
        return soft - SOFT_INCREMENT_SHARE * max(limits.winc - 0.03, 0.0)

    assert INCREMENT_HORIZON < MOVES_HORIZON
    healthy = 10 * INCREMENT_HORIZON_CLOCK * 0.1   # 10 s at 10+0.1
    assert first_term(Limits(wtime=healthy, winc=0.1)) == pytest.approx((healthy - 0.03) / INCREMENT_HORIZON)
    low = INCREMENT_HORIZON_CLOCK * 0.1             # 1 s: just under ten increments after the overhead
    assert first_term(Limits(wtime=low, winc=0.1)) == pytest.approx((low - 0.03) / MOVES_HORIZON)
    sudden = allocate(Limits(wtime=healthy), 0, 0.03, healthy)[0]
    assert sudden == pytest.approx((healthy - 0.03 - sudden_death_reserve(0.0, 0.03, healthy)) / MOVES_HORIZON)
    assert first_term(Limits(wtime=healthy, winc=0.1, movestogo=40)) == pytest.approx((healthy - 0.03) / MOVES_HORIZON)
    assert first_term(Limits(wtime=healthy, winc=0.1, movestogo=5)) == pytest.approx((healthy - 0.03) / 5)


def test_the_reserve_is_set_by_the_starting_clock() -> None:
    """Late in a game the reserve stays what the starting clock allowed, so a clock below
    it plays the shortest think instead of spending the reserve."""
    soft, hard = allocate(Limits(wtime=0.5, btime=0.5), 0, 0.03, 10.0)
    assert soft == MIN_THINK
    assert hard is not None and hard < 0.5


def test_the_searcher_keeps_each_sides_starting_clock_until_a_new_game() -> None:
    from engine.searcher import Searcher

    searcher = Searcher(hash_mb=1)
    searcher.move_overhead = 0.03
    searcher.new_game()
    searcher._allocate(Limits(wtime=10.0, btime=8.0), 0)
    late_soft, _ = searcher._allocate(Limits(wtime=0.5, btime=8.0), 0)
    assert late_soft == MIN_THINK  # below the reserve that a 10 s start allows
    black_soft, _ = searcher._allocate(Limits(wtime=0.5, btime=8.0), 1)
    assert black_soft == pytest.approx((8.0 - 0.03 - sudden_death_reserve(0.0, 0.03, 8.0)) / MOVES_HORIZON)
    searcher.new_game()
    fresh_soft, _ = searcher._allocate(Limits(wtime=0.5, btime=0.5), 0)
    assert fresh_soft is not None and fresh_soft > MIN_THINK  # a game that starts at 0.5 s reserves 0.025 s


# ---------------------------------------------------------------------------
# How the soft limit stretches: pure functions of what the driver measured
# ---------------------------------------------------------------------------

MATE_BOUND = 31_744  # engine.tt.MATE_IN_MAX_PLY


def test_node_share_settled_moves_stop_early_and_contested_ones_earn_time() -> None:
    assert node_share_factor(95, 100) == pytest.approx((1.5 - 0.95) * 1.35)  # settled: under 0.75
    assert node_share_factor(20, 100) == pytest.approx((1.5 - 0.2) * 1.35)   # contested: over 1.75
    assert node_share_factor(0, 0) == 1.0


def test_falling_eval_earns_time_and_rising_or_mate_scores_do_not() -> None:
    steady = [30, 30, 30, 30, 30, 30]
    assert falling_eval_factor(steady, 30, MATE_BOUND) == 1.0
    fell = [30, 30, 30, 30, 30, 0]  # 30 below our last move's score and below three iterations back
    assert falling_eval_factor(fell, 30, MATE_BOUND) == pytest.approx(1.0 + 0.3 + 0.15)
    assert falling_eval_factor([30, 30, 30, 30, 30, -200], 30, MATE_BOUND) == 1.5   # clamped
    assert falling_eval_factor([30, 30, 30, 30, 30, 200], 30, MATE_BOUND) == 0.75   # clamped
    assert falling_eval_factor([30, 30, 30, 30, 30, 32_000 - 5], 30, MATE_BOUND) == 1.0
    assert falling_eval_factor(fell, None, MATE_BOUND) == pytest.approx(1.15)  # new game: the iterations' term alone
    assert falling_eval_factor([], None, MATE_BOUND) == 1.0


def test_soft_limit_scale_applies_from_its_depth_with_one_pv() -> None:
    scores = [30, 30, 30, 30, 30, 0]
    both = node_share_factor(40, 100) * falling_eval_factor(scores, 30, MATE_BOUND)
    assert soft_limit_scale(NODE_SHARE_MIN_DEPTH, 1, 40, 100, scores, 30, MATE_BOUND) == pytest.approx(both)
    assert soft_limit_scale(NODE_SHARE_MIN_DEPTH - 1, 1, 40, 100, scores, 30, MATE_BOUND) == 1.0  # too shallow
    assert soft_limit_scale(10, 3, 40, 100, scores, 30, MATE_BOUND) == 1.0  # MultiPV: the lines need every move
    assert soft_limit_scale(10, 1, 0, 0, scores, 30, MATE_BOUND) == 1.0


def test_the_mate_bound_is_the_tables() -> None:
    from engine import uci
    from engine.tt import MATE, MATE_IN_MAX_PLY

    assert MATE_BOUND == MATE_IN_MAX_PLY and (uci.MATE, uci.MATE_IN_MAX_PLY) == (MATE, MATE_IN_MAX_PLY)
