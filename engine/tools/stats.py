"""Match statistics: Elo, error bars, LOS, SPRT and rating fits, in plain Python.

This module owns the arithmetic that turns game results into numbers; it knows
nothing about engines or chess.  Every function is pure.

Elo model
---------
Everything here uses the **logistic** Elo model: a player ``D`` Elo stronger
than its opponent has the expected score ``E(D) = 1 / (1 + 10**(-D / 400))``,
and a score ``s`` in (0, 1) corresponds to ``D(s) = -400 * log10(1/s - 1)``.
(Fishtest's default "normalized Elo" is a different scale and is not used.)

Scores are always those of the *first* engine (the engine under test) and lie
in [0, 1]: a win is 1, a draw 0.5, a loss 0.

Distributions
-------------
* **Trinomial**: counts of single-game results ``[losses, draws, wins]``, i.e.
  game scores 0, 0.5, 1.
* **Pentanomial**: each opening is played twice with colours reversed, and the
  two games form a *pair*.  A pair scores 0, 0.5, 1, 1.5 or 2 points; the
  pentanomial counts are how many pairs fall into each of those five bins,
  lowest first.  Per game the pair's score is 0, 0.25, 0.5, 0.75 or 1.  Pairs
  remove most of the opening's bias from the variance, which is why fishtest
  and fastchess judge by them.

Error bars and LOS use the normal approximation of the sample mean: the mean
score ``mu`` has standard error ``sqrt(var / n)``, where ``var`` is the sample
variance of one observation (a game, or a pair) and ``n`` the number of
observations.  A 95% interval on the score is ``mu +- 1.959964 * se``, mapped to
Elo through ``D(s)``.

SPRT
----
The generalized SPRT (GSPRT) as fishtest computes it: the log-likelihood ratio
of "expected score is ``E(elo1)``" against "expected score is ``E(elo0)``",
where under each hypothesis the distribution of outcomes is the maximum-
likelihood one (over the observed categories) that has that expected score.
For multinomial data this constrained maximum has the closed form
``p_i = q_i / (1 + theta * (x_i - s))`` with ``q`` the empirical frequencies,
``x`` the category scores and ``theta`` the single root of
``sum q_i (x_i - s) / (1 + theta (x_i - s)) = 0`` (found here by bisection,
the function being monotonic in ``theta``).  The LLR is then
``n * sum q_i * log(p1_i / p0_i)``.  Like fishtest, empty categories receive a
small pseudo-count (``1e-3``) so that both hypotheses stay inside the support.
The test stops when the LLR leaves ``(ln(beta/(1-alpha)), ln((1-beta)/alpha))``:
below, H0 (``elo0``) is accepted; above, H1 (``elo1``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
"""Two-sided 95% quantile of the standard normal distribution."""

TRINOMIAL_SCORES: tuple[float, ...] = (0.0, 0.5, 1.0)
"""Per-game score of each trinomial bin: loss, draw, win."""

PENTANOMIAL_SCORES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)
"""Per-game score of each pentanomial bin: pair scores 0, 0.5, 1, 1.5, 2 divided by two."""

SPRT_PSEUDO_COUNT = 1e-3
"""Count given to empty bins before the GSPRT, as fishtest does, so no hypothesis falls outside the support."""


# ---------------------------------------------------------------------------
# The Elo model
# ---------------------------------------------------------------------------


def expected_score(elo_diff: float) -> float:
    """Expected score of a player ``elo_diff`` logistic Elo stronger than the opponent."""
    return 1.0 / (1.0 + math.pow(10.0, -elo_diff / 400.0))


def elo_from_score(score: float) -> float:
    """Logistic Elo difference for a score fraction in [0, 1]; +-inf at 1 and 0.

    >>> round(elo_from_score(0.75), 2)
    190.85
    """
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"score must lie in [0, 1], got {score}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def normal_cdf(x: float) -> float:
    """Cumulative distribution function of the standard normal distribution."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


# ---------------------------------------------------------------------------
# Counting results
# ---------------------------------------------------------------------------


def trinomial(game_scores: Iterable[float]) -> list[int]:
    """Counts ``[losses, draws, wins]`` from per-game scores 0, 0.5 or 1."""
    counts = [0, 0, 0]
    for s in game_scores:
        counts[_bin_index(s, 2)] += 1
    return counts


def pentanomial(pairs: Iterable[tuple[float, float]]) -> list[int]:
    """Pentanomial counts from game pairs, each given as the two games' scores for the first engine.

    The bins are the pair scores 0, 0.5, 1, 1.5 and 2, lowest first.  For
    example a win and a loss (``(1, 0)``) and two draws (``(0.5, 0.5)``) both
    land in the middle bin.
    """
    counts = [0, 0, 0, 0, 0]
    for first, second in pairs:
        counts[_bin_index(first + second, 2)] += 1
    return counts


def _bin_index(points: float, per_point: int) -> int:
    """Index of ``points`` on a grid of ``1 / per_point`` steps, checking that it is on the grid."""
    index = round(points * per_point)
    if abs(index - points * per_point) > 1e-9 or index < 0:
        raise ValueError(f"not a valid score: {points}")
    return index


# ---------------------------------------------------------------------------
# Mean, variance, Elo intervals, LOS
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EloEstimate:
    """An Elo difference with its 95% confidence interval (logistic Elo)."""

    elo: float
    """Point estimate, from the mean score."""
    lower: float
    """Lower end of the 95% interval."""
    upper: float
    """Upper end of the 95% interval."""
    score: float
    """Mean score per game in [0, 1]."""
    stderr: float
    """Standard error of the mean score."""
    n: int
    """Number of observations (games for trinomial, pairs for pentanomial)."""

    @property
    def error(self) -> float:
        """Half-width of the interval in Elo (the "+-" number); inf when a bound is infinite."""
        if not (math.isfinite(self.upper) and math.isfinite(self.lower)):
            return math.inf
        return (self.upper - self.lower) / 2.0

    def format(self) -> str:
        """Text such as ``+12.3 +- 20.1 [-7.8, +32.4]``."""
        interval = f"[{format_elo(self.lower)}, {format_elo(self.upper)}]"
        return f"{format_elo(self.elo)} +- {format_number(self.error)} {interval}"


def format_elo(x: float) -> str:
    """Signed Elo with one decimal; infinities as +inf/-inf."""
    if abs(x) < 0.05:
        x = 0.0  # no "-0.0"
    return f"{x:+.1f}" if math.isfinite(x) else ("+inf" if x > 0 else "-inf")


def format_number(x: float) -> str:
    """Unsigned number with one decimal, or ``inf``/``nan``."""
    return f"{x:.1f}" if math.isfinite(x) else str(x)


def mean_and_variance(counts: Sequence[float], scores: Sequence[float]) -> tuple[float, float, float]:
    """``(n, mean, variance)`` of the distribution that puts ``counts[i]`` observations on ``scores[i]``.

    The variance is the population variance of the sample (divisor ``n``), as in
    fishtest and fastchess.
    """
    if len(counts) != len(scores):
        raise ValueError("counts and scores differ in length")
    n = float(sum(counts))
    if n <= 0:
        return 0.0, 0.5, 0.0
    mean = sum(c * x for c, x in zip(counts, scores, strict=True)) / n
    variance = sum(c * (x - mean) ** 2 for c, x in zip(counts, scores, strict=True)) / n
    return n, mean, variance


def elo_interval(counts: Sequence[int], scores: Sequence[float]) -> EloEstimate:
    """Elo and its 95% interval from counts over per-observation scores (normal approximation)."""
    n, mean, variance = mean_and_variance(counts, scores)
    stderr = math.sqrt(variance / n) if n > 0 else math.inf
    if n <= 0:
        return EloEstimate(0.0, -math.inf, math.inf, 0.5, stderr, 0)
    low = min(max(mean - Z95 * stderr, 0.0), 1.0)
    high = min(max(mean + Z95 * stderr, 0.0), 1.0)
    return EloEstimate(elo_from_score(mean), elo_from_score(low), elo_from_score(high), mean, stderr, int(n))


def elo_trinomial(counts: Sequence[int]) -> EloEstimate:
    """Elo with a 95% interval from ``[losses, draws, wins]``, treating games as independent."""
    return elo_interval(counts, TRINOMIAL_SCORES)


def elo_pentanomial(counts: Sequence[int]) -> EloEstimate:
    """Elo with a 95% interval from pentanomial pair counts (pair scores 0, 0.5, 1, 1.5, 2)."""
    return elo_interval(counts, PENTANOMIAL_SCORES)


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority from wins and losses (draws carry no information), in [0, 1].

    ``LOS = Phi((W - L) / sqrt(W + L))``; 0.5 when there are no decisive games.
    """
    if wins + losses == 0:
        return 0.5
    return normal_cdf((wins - losses) / math.sqrt(wins + losses))


def los_pentanomial(counts: Sequence[int]) -> float:
    """Likelihood of superiority from pentanomial counts: ``Phi((mean - 0.5) / stderr)``."""
    n, mean, variance = mean_and_variance(counts, PENTANOMIAL_SCORES)
    if n <= 0:
        return 0.5
    if variance == 0.0:
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return normal_cdf((mean - 0.5) / math.sqrt(variance / n))


# ---------------------------------------------------------------------------
# SPRT
# ---------------------------------------------------------------------------


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """``(lower, upper)`` LLR bounds: ``ln(beta / (1 - alpha))`` and ``ln((1 - beta) / alpha)``."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError("alpha and beta must lie in (0, 1)")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _mle_with_mean(freqs: Sequence[float], scores: Sequence[float], target: float) -> list[float]:
    """The distribution closest in likelihood to ``freqs`` among those with mean ``target``.

    ``p_i = q_i / (1 + theta (x_i - target))``; ``theta`` solves
    ``g(theta) = sum q_i (x_i - target) / (1 + theta (x_i - target)) = 0``.
    ``g`` decreases strictly on the interval where every denominator is positive,
    so bisection finds the root.  ``target`` must lie strictly between the
    smallest and largest score carrying weight.
    """
    support = [x for q, x in zip(freqs, scores, strict=True) if q > 0]
    dev_max = max(support) - target
    dev_min = min(support) - target
    if not (dev_min < 0.0 < dev_max):
        raise ValueError("target mean outside the support of the distribution")
    # Bracket: 1 + theta * dev > 0 for every dev, i.e. -1/dev_max < theta < -1/dev_min.
    lo, hi = -1.0 / dev_max, -1.0 / dev_min
    shrink = 1e-12 * (hi - lo)
    lo, hi = lo + shrink, hi - shrink

    def g(theta: float) -> float:
        return sum(q * (x - target) / (1.0 + theta * (x - target)) for q, x in zip(freqs, scores, strict=True) if q > 0)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if g(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    theta = 0.5 * (lo + hi)
    return [q / (1.0 + theta * (x - target)) for q, x in zip(freqs, scores, strict=True)]


def sprt_llr(counts: Sequence[float], scores: Sequence[float], elo0: float, elo1: float) -> float:
    """GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``), logistic Elo.

    ``counts[i]`` observations scored ``scores[i]`` (per game, in [0, 1]).  Returns
    0 when there is no data.  See the module docstring for the method.
    """
    if sum(counts) <= 0:
        return 0.0
    regular = [c if c > 0 else SPRT_PSEUDO_COUNT for c in counts]
    n = sum(regular)
    freqs = [c / n for c in regular]
    s0, s1 = expected_score(elo0), expected_score(elo1)
    p0 = _mle_with_mean(freqs, scores, s0)
    p1 = _mle_with_mean(freqs, scores, s1)
    return n * sum(q * math.log(a / b) for q, a, b in zip(freqs, p1, p0, strict=True) if q > 0)


def sprt_llr_approx(counts: Sequence[float], scores: Sequence[float], elo0: float, elo1: float) -> float:
    """Normal approximation of the GSPRT LLR: ``n (s1 - s0)(2 mean - s0 - s1) / (2 var)``.

    Close to :func:`sprt_llr` for small Elo bounds; kept as a cross-check.
    """
    regular = [c if c > 0 else SPRT_PSEUDO_COUNT for c in counts]
    n, mean, variance = mean_and_variance(regular, scores)
    if n <= 0 or variance <= 0.0:
        return 0.0
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2.0 * mean - s0 - s1) / (2.0 * variance)


@dataclass(frozen=True)
class SprtResult:
    """State of an SPRT after some observations."""

    llr: float
    """Log-likelihood ratio of H1 against H0."""
    lower: float
    """Lower bound: at or below it H0 is accepted."""
    upper: float
    """Upper bound: at or above it H1 is accepted."""
    elo0: float
    """Elo of the null hypothesis H0 (logistic)."""
    elo1: float
    """Elo of the alternative hypothesis H1 (logistic)."""

    @property
    def decision(self) -> str:
        """``"H1"`` (accepted: the change gains), ``"H0"`` (rejected) or ``"continue"``."""
        if self.llr >= self.upper:
            return "H1"
        if self.llr <= self.lower:
            return "H0"
        return "continue"

    def format(self) -> str:
        """Text such as ``LLR 1.23 (-2.94, 2.94) [0.0, 5.0] continue``."""
        return (f"LLR {self.llr:.2f} ({self.lower:.2f}, {self.upper:.2f}) "
                f"[{self.elo0:g}, {self.elo1:g}] {self.decision}")


def sprt_pentanomial(counts: Sequence[int], elo0: float, elo1: float, alpha: float = 0.05,
                     beta: float = 0.05) -> SprtResult:
    """SPRT on pentanomial pair counts (as fishtest does for paired openings)."""
    lower, upper = sprt_bounds(alpha, beta)
    return SprtResult(sprt_llr(counts, PENTANOMIAL_SCORES, elo0, elo1), lower, upper, elo0, elo1)


def sprt_trinomial(counts: Sequence[int], elo0: float, elo1: float, alpha: float = 0.05,
                   beta: float = 0.05) -> SprtResult:
    """SPRT on ``[losses, draws, wins]`` game counts, treating games as independent."""
    lower, upper = sprt_bounds(alpha, beta)
    return SprtResult(sprt_llr(counts, TRINOMIAL_SCORES, elo0, elo1), lower, upper, elo0, elo1)


# ---------------------------------------------------------------------------
# Rating fit against anchored opponents
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RatingFit:
    """Maximum-likelihood rating of one player from results against rated opponents."""

    rating: float
    """Best-fitting rating (+-inf when every game was won or every game lost)."""
    error: float
    """95% half-width from the Fisher information (inf when undefined)."""
    games: float
    """Number of games used."""


def performance_rating(opponent_rating: float, score: float) -> float:
    """Rating that makes ``score`` (fraction in [0, 1]) the expected score against ``opponent_rating``."""
    return opponent_rating + elo_from_score(score)


def fit_rating(results: Sequence[tuple[float, float, float]]) -> RatingFit:
    """Maximum-likelihood rating from ``(opponent_rating, points, games)`` triples, logistic Elo.

    Draws count as half points, so the likelihood is
    ``prod E_j**P_j * (1 - E_j)**(n_j - P_j)`` with ``E_j = expected_score(R - R_j)``.
    Its derivative in ``R`` is proportional to ``sum (P_j - n_j E_j)``, which
    decreases strictly in ``R``; the root is found by bisection.  The error bar
    is ``1.96 / sqrt(I)`` with the Fisher information
    ``I = (ln 10 / 400)**2 * sum n_j E_j (1 - E_j)``.
    """
    used = [(r, p, n) for r, p, n in results if n > 0]
    games = sum(n for _, _, n in used)
    if not used:
        return RatingFit(math.nan, math.inf, 0.0)
    points = sum(p for _, p, _ in used)
    if points <= 0.0:
        return RatingFit(-math.inf, math.inf, games)
    if points >= games:
        return RatingFit(math.inf, math.inf, games)

    def surplus(rating: float) -> float:
        return sum(p - n * expected_score(rating - r) for r, p, n in used)

    lo = min(r for r, _, _ in used) - 4000.0
    hi = max(r for r, _, _ in used) + 4000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if surplus(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-9:
            break
    rating = 0.5 * (lo + hi)
    scale = math.log(10.0) / 400.0
    info = scale * scale * sum(n * expected_score(rating - r) * (1.0 - expected_score(rating - r))
                               for r, _, n in used)
    error = Z95 / math.sqrt(info) if info > 0 else math.inf
    return RatingFit(rating, error, games)
