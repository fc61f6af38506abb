"""Elo, error bars, LOS, SPRT and rating-fit maths of engine.tools.stats against known values."""

from __future__ import annotations

import math

import pytest

from engine.tools import stats


def test_even_score_is_zero_elo() -> None:
    assert stats.elo_from_score(0.5) == 0.0


def test_three_quarters_is_190_85_elo() -> None:
    # 400 * log10(3) = 190.8485...
    assert stats.elo_from_score(0.75) == pytest.approx(190.85, abs=0.01)
    assert stats.elo_from_score(0.25) == pytest.approx(-190.85, abs=0.01)


def test_expected_score_inverts_elo() -> None:
    for score in (0.1, 0.3, 0.5, 0.64, 0.9):
        assert stats.expected_score(stats.elo_from_score(score)) == pytest.approx(score)


def test_extreme_scores_are_infinite() -> None:
    assert stats.elo_from_score(1.0) == math.inf
    assert stats.elo_from_score(0.0) == -math.inf
    with pytest.raises(ValueError):
        stats.elo_from_score(1.5)


def test_trinomial_counts() -> None:
    assert stats.trinomial([1, 0.5, 0.5, 0, 1, 1]) == [1, 2, 3]


def test_pentanomial_counts_from_known_pairs() -> None:
    pairs = [(1, 0), (0.5, 0.5), (1, 1), (0, 0.5), (1, 0.5), (0, 0)]
    # pair scores 1, 1, 2, 0.5, 1.5, 0 -> bins 0, 0.5, 1, 1.5, 2
    assert stats.pentanomial(pairs) == [1, 1, 2, 1, 1]
    with pytest.raises(ValueError):
        stats.pentanomial([(0.3, 0.5)])


def test_pentanomial_elo_of_known_distribution() -> None:
    # Mean per game (2*0.25 + 3*0.5 + 4*0.75 + 1*1) / 10 = 0.6.
    estimate = stats.elo_pentanomial([0, 2, 3, 4, 1])
    assert estimate.score == pytest.approx(0.6)
    assert estimate.elo == pytest.approx(stats.elo_from_score(0.6))
    assert estimate.lower < estimate.elo < estimate.upper
    assert estimate.n == 10


def test_symmetric_results_give_symmetric_interval() -> None:
    estimate = stats.elo_pentanomial([10, 20, 40, 20, 10])
    assert estimate.elo == pytest.approx(0.0, abs=1e-9)
    assert estimate.lower == pytest.approx(-estimate.upper)


def test_error_bars_shrink_with_more_games() -> None:
    small = stats.elo_pentanomial([2, 5, 10, 6, 2])
    large = stats.elo_pentanomial([8, 20, 40, 24, 8])
    assert large.elo == pytest.approx(small.elo)
    assert large.error < small.error
    assert large.error == pytest.approx(small.error / 2, rel=0.05)  # four times the pairs: half the width
    tri_small = stats.elo_trinomial([10, 10, 12])
    tri_large = stats.elo_trinomial([100, 100, 120])
    assert tri_large.error < tri_small.error


def test_los() -> None:
    assert stats.los(10, 10) == pytest.approx(0.5)
    assert stats.los(0, 0) == 0.5
    assert stats.los(30, 10) > 0.99
    assert stats.los(10, 30) < 0.01
    assert stats.los_pentanomial([10, 20, 40, 20, 10]) == pytest.approx(0.5)
    assert stats.los_pentanomial([2, 10, 40, 30, 10]) > 0.99


def test_sprt_bounds() -> None:
    lower, upper = stats.sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(math.log(0.05 / 0.95))
    assert upper == pytest.approx(math.log(0.95 / 0.05))
    assert upper == pytest.approx(2.944, abs=1e-3)


def test_sprt_accepts_h1_on_clearly_winning_sample() -> None:
    result = stats.sprt_pentanomial([50, 300, 1000, 400, 80], elo0=0, elo1=5)
    assert result.decision == "H1"
    assert result.llr > result.upper


def test_sprt_accepts_h0_on_clearly_losing_sample() -> None:
    result = stats.sprt_pentanomial([80, 400, 1000, 300, 50], elo0=0, elo1=5)
    assert result.decision == "H0"
    assert result.llr < result.lower


def test_sprt_continues_on_small_ambiguous_sample() -> None:
    assert stats.sprt_pentanomial([1, 2, 4, 2, 1], elo0=0, elo1=5).decision == "continue"
    assert stats.sprt_pentanomial([0, 0, 0, 0, 0], elo0=0, elo1=5).llr == 0.0


def test_sprt_exact_llr_matches_normal_approximation_near_the_bounds() -> None:
    counts = [50, 300, 1000, 400, 80]
    exact = stats.sprt_llr(counts, stats.PENTANOMIAL_SCORES, 0, 5)
    approx = stats.sprt_llr_approx(counts, stats.PENTANOMIAL_SCORES, 0, 5)
    assert exact == pytest.approx(approx, rel=0.02)


def test_sprt_trinomial() -> None:
    assert stats.sprt_trinomial([300, 400, 500], elo0=0, elo1=10).decision == "H1"
    assert stats.sprt_trinomial([500, 400, 300], elo0=0, elo1=10).decision == "H0"
    assert stats.sprt_trinomial([3, 4, 3], elo0=0, elo1=10).decision == "continue"


def test_performance_and_rating_fit() -> None:
    assert stats.performance_rating(2000, 0.5) == 2000
    assert stats.performance_rating(2000, 0.75) == pytest.approx(2190.85, abs=0.01)
    one = stats.fit_rating([(2000, 5, 10)])
    assert one.rating == pytest.approx(2000, abs=1e-6)
    # 75% against 2000 and 25% against 2200: the likelihood peaks half-way.
    two = stats.fit_rating([(2000, 7.5, 10), (2200, 2.5, 10)])
    assert two.rating == pytest.approx(2100, abs=1e-6)
    assert two.error < one.error
    assert stats.fit_rating([(2000, 10, 10)]).rating == math.inf
