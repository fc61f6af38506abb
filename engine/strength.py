"""Playing strength below the full engine: ``UCI_LimitStrength``/``UCI_Elo`` and ``Skill Level``.

A weaker player differs from a strong one in two ways, and the weakening copies both:

1. **A shorter horizon.**  The search gets a node budget, from ``LEVEL_TABLE``: a few
   thousand nodes at the bottom of the range, a full-strength move's worth at the top.  A
   low level sees two or three moves ahead and misses what lies beyond, as a club player
   does; its mistakes are the short-horizon kind (a piece left hanging to a two-move
   tactic), not moves picked at random.
2. **Less exact judgement.**  The search runs with a few MultiPV lines (four at the bottom of
   the range, fewer at the top, where every extra line costs depth), and the
   move played is the line whose score plus Gaussian noise (sigma ``noise_cp``) is highest,
   among the lines within ``MAX_LOSS_SIGMAS`` sigmas of the best.  Noise on the *scores*
   means that a move much worse than the best is seldom chosen and a move nearly as
   good often is: most mistakes are small inaccuracies, large blunders are rare, and both
   grow smoothly as the level falls.  Sigma falls to zero at the top of the range.

Both are set per calibrated setting in ``LEVEL_TABLE`` and interpolated between them, so
a setting found off its label is corrected on its own row.

What the weakening never does:

* It never makes the engine think longer: the budget only adds a node limit to the
  ``go`` command's own limits, so the clock still stops a search, and a budget ends it
  sooner.
* It never reports anything false: the ``info`` lines are the real search's (its real
  depth, scores and nodes), and the move played is one of the lines shown.
* It never throws away a mate it has found, and against a bare king (KQK, KRK, ...) it
  plays its best move with at least ``BARE_KING_NODES`` nodes: every level mates with
  king and rook.

``Skill Level`` 0..20 is the same scale: level ``s`` below 20 plays as ``UCI_Elo``
``ELO_MIN + s x (ELO_MAX - ELO_MIN) / 20``; 20 is full strength.  With
``UCI_LimitStrength`` on, ``UCI_Elo`` decides (as in Stockfish).  The labels are
calibrated by games at 10+0.1 against Stockfish 15.1 set to the same ``UCI_Elo``
(``python -m engine.tools.calibrate``; the table is in the README).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Protocol

ELO_MIN = 1400            # the lowest UCI_Elo (and Skill Level 0)
ELO_MAX = 2400            # the highest UCI_Elo: the full engine (Skill Level 20 is full strength too)
SKILL_MAX = 20
# The calibration table: (UCI_Elo, node budget, noise sigma in centipawns, candidate lines)
# at each calibrated setting, fitted by games against Stockfish (``engine.tools.calibrate``).
# Between two rows the budget is interpolated geometrically, the noise linearly, and the
# candidates are the lower row's.  Every extra MultiPV line costs search effort, so the top
# rows choose among fewer lines: four lines at 200,000 nodes played like one line at 65,000.
LEVEL_TABLE = (
    (1400, 2_000, 100.0, 4),
    (1650, 10_000, 55.0, 4),
    (1900, 65_000, 22.0, 4),
    (2150, 220_000, 9.0, 2),
    (2400, 10_000_000, 0.0, 1),  # the full engine under the clock's limits
)
MAX_LOSS_SIGMAS = 3.0     # never choose a line more than this many sigmas below the best
# Node budget floor against a lone king (no noise there either): 20,000 ran into the
# fifty-move rule in some KRK games under the search tuned by SPSA (4477a8e, 2026-12-04).
BARE_KING_NODES = 100_000
MATE_THRESHOLD = 30_000   # scores from here up are mates found (engine.tt.MATE_IN_MAX_PLY)


class Line(Protocol):
    """A scored MultiPV line (``engine.searcher.PvLine``)."""

    score: int
    moves: list[int]


def skill_to_elo(skill: int) -> int:
    """The UCI_Elo that ``Skill Level`` ``skill`` (0..19) plays as."""
    skill = max(0, min(SKILL_MAX, skill))
    return ELO_MIN + round(skill * (ELO_MAX - ELO_MIN) / SKILL_MAX)


@dataclass(frozen=True)
class StrengthLevel:
    """One weakened level: its node budget and its score noise."""

    elo: int
    nodes: int
    noise_cp: float
    candidates: int

    @classmethod
    def at_elo(cls, elo: int) -> StrengthLevel:
        """The level labelled ``elo`` (clamped to the UCI_Elo range), from ``LEVEL_TABLE``."""
        elo = max(ELO_MIN, min(ELO_MAX, elo))
        for (low, low_nodes, low_noise, lines), (high, high_nodes, high_noise, high_lines) in pairwise(LEVEL_TABLE):
            if elo <= high:
                t = (elo - low) / (high - low)
                nodes = round(low_nodes * (high_nodes / low_nodes) ** t)
                return cls(elo, nodes, low_noise + t * (high_noise - low_noise), high_lines if t == 1 else lines)
        raise AssertionError("LEVEL_TABLE must span ELO_MIN..ELO_MAX")

    def node_budget(self, bare_king: bool) -> int:
        """Nodes this level may search; more against a lone king, which every level must mate."""
        return max(self.nodes, BARE_KING_NODES) if bare_king else self.nodes

    def choose(self, lines: Sequence[Line], rng: random.Random, bare_king: bool = False) -> int:
        """Index of the line to play: the best score after noise, among the lines close to the best."""
        if not lines:
            raise ValueError("no line to choose from")
        best = lines[0].score
        if len(lines) == 1 or self.noise_cp <= 0 or bare_king or abs(best) >= MATE_THRESHOLD:
            return 0
        floor = best - MAX_LOSS_SIGMAS * self.noise_cp
        noisy = [(line.score + rng.gauss(0.0, self.noise_cp), index)
                 for index, line in enumerate(lines) if line.score >= floor and line.moves]
        return max(noisy)[1] if noisy else 0


def level_from_options(limit_strength: bool, uci_elo: int, skill_level: int) -> StrengthLevel | None:
    """The level the options ask for, or None for full strength."""
    if limit_strength:
        return StrengthLevel.at_elo(uci_elo)
    if skill_level < SKILL_MAX:
        return StrengthLevel.at_elo(skill_to_elo(skill_level))
    return None

