"""Time management: how long to think about one move.

Two limits come out of the clock: a *soft* limit, checked between iterations of
iterative deepening (do not start a new depth after it), and a *hard* limit, at
which a watchdog thread raises the kernel's stop flag mid-iteration.  Neither is
ever read inside the numba search.

    remaining   = our clock - Move Overhead (time lost between engine and GUI)
    moves left  = movestogo; else INCREMENT_HORIZON in an increment game while the clock
                  holds INCREMENT_HORIZON_CLOCK increments; else MOVES_HORIZON
    soft        = remaining / moves left + SOFT_INCREMENT_SHARE * max(increment - Move Overhead, 0)
    hard        = min(HARD_SOFT_RATIO * soft, HARD_CLOCK_SHARE * remaining + increment / 2)

and both are capped so that at least ``MIN_RESERVE`` stays on the clock.

Sudden death (no increment, or one smaller than what a move costs, and no
movestogo) needs one more rule.  Spending a share of the clock on every move makes the
clock shrink geometrically, but no move costs less than the overhead: at 10+0 a
146-move game ended with 2 ms left.  So the plan keeps back a reserve, enough for
``SUDDEN_DEATH_RESERVE_MOVES`` moves that each cost their overhead net of the increment,
at most ``SUDDEN_DEATH_RESERVE_SHARE`` of the game's starting clock:

    cost      = max(Move Overhead, MOVE_COST_FLOOR) - increment   (when positive)
    reserve   = min(SUDDEN_DEATH_RESERVE_MOVES * cost, SUDDEN_DEATH_RESERVE_SHARE * starting clock)
    soft      = (remaining - reserve) / moves left + ...

The clock then falls towards the reserve instead of towards zero, and the reserve
pays for the moves after that, played at the shortest think.

An increment game (one whose increment pays for a move, so no reserve is kept) plans
over fewer moves than sudden death, ``INCREMENT_HORIZON``: the increment pays for the
moves beyond the horizon, and the longer horizon left a quarter of a 10+0.1 clock unused
(3.1 s of 10 at the end of the games of 2026-12-06, against 1.9 s for Ethereal 12).  Once
the clock holds fewer than ``INCREMENT_HORIZON_CLOCK`` increments the plan goes back to
``MOVES_HORIZON``, which keeps the soft limit and the overhead below the increment there
(the clock then grows back, as below); sudden death keeps ``MOVES_HORIZON`` throughout,
since its reserve is sized for that horizon's slow approach.

The increment counts net of the Move Overhead because every move loses that
overhead, not only the next one: with the whole increment counted, a long game at
5+0.05 spent about the increment per move once its clock was low, the clock drained
to under 0.1 s over 200 moves, and one delay on a loaded machine lost on time.  Net of
it, once the clock is below about 5.5 x (increment - Move Overhead), the soft limit and
the overhead together take less than the increment, and the clock grows back.

Between iterations the driver stops once ``SOFT_LIMIT_NEXT_DEPTH`` of the soft limit
has passed, the soft limit first scaled by ``soft_limit_scale``: from depth
``NODE_SHARE_MIN_DEPTH`` (one PV only) by the best root move's share of the last
iteration's nodes (``node_share_factor``: a settled move stops early, a contested one
earns more time) and by how the score moved (``falling_eval_factor``: a falling score
earns more time).  These are pure functions of what the driver measured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

MOVES_HORIZON = 22          # sudden death: plan as if this many moves remained
INCREMENT_HORIZON = 14      # an increment game: this many, while the clock holds ...
INCREMENT_HORIZON_CLOCK = 10  # ... at least this many increments (MOVES_HORIZON below that)
SOFT_INCREMENT_SHARE = 0.75
HARD_SOFT_RATIO = 4.0
HARD_CLOCK_SHARE = 0.35     # never spend more than this share of the clock on one move
MIN_RESERVE = 0.030         # seconds always left on the clock (Python wakes up slower than C)
MIN_THINK = 0.002           # seconds: even a nearly flagged move searches depth 1
MOVE_COST_FLOOR = 0.005     # seconds a move costs at the least (search, Python and the pipe), whatever the overhead
SUDDEN_DEATH_RESERVE_MOVES = 200   # without an increment to live on, keep back what this many moves cost ...
SUDDEN_DEATH_RESERVE_SHARE = 0.05  # ... but never more than this share of the game's starting clock
SOFT_LIMIT_NEXT_DEPTH = 0.6  # do not start a new depth after this share of the (scaled) soft limit
NODE_SHARE_MIN_DEPTH = 5     # from this depth the soft limit follows the best move's share of the nodes:
NODE_SHARE_BASE = 1.5        # soft x (base - share) x scale, so a best move that took nearly all the
NODE_SHARE_SCALE = 1.35      # effort (settled) stops early, and a contested one earns more time
FALLING_EVAL_PREVIOUS = 0.01  # the soft limit grows by this per centipawn the score fell since our last move ...
FALLING_EVAL_ITERATIONS = 0.005  # ... and by this per centipawn it fell over the last three iterations
FALLING_EVAL_MIN, FALLING_EVAL_MAX = 0.75, 1.5  # the falling-eval factor's range
FALLING_EVAL_LOOKBACK = 3    # iterations back for the second term


@dataclass
class Limits:
    """The limits of one ``go`` command (times in seconds, None when absent)."""

    wtime: float | None = None
    btime: float | None = None
    winc: float = 0.0
    binc: float = 0.0
    movestogo: int | None = None
    movetime: float | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: list[str] = field(default_factory=list)


def sudden_death_reserve(increment: float, overhead: float, starting_clock: float) -> float:
    """Seconds of the clock the plan keeps back when the increment does not pay for a move."""
    cost = max(overhead, MOVE_COST_FLOOR) - increment
    if cost <= 0.0:
        return 0.0
    return min(SUDDEN_DEATH_RESERVE_MOVES * cost, SUDDEN_DEATH_RESERVE_SHARE * starting_clock)


def allocate(limits: Limits, side: int, overhead: float,
             starting_clock: float | None = None) -> tuple[float | None, float | None]:
    """(soft, hard) seconds for the side to move (0 white, 1 black); None for no limit.

    ``starting_clock`` is the largest clock this side had in the game (its start), which
    bounds the sudden-death reserve; by default the clock now.
    """
    if limits.movetime is not None:
        # "Search exactly this long": no soft limit, so no early stop between depths.
        return None, max(MIN_THINK, limits.movetime - overhead)
    clock = limits.wtime if side == 0 else limits.btime
    if clock is None:
        return None, None
    increment = limits.winc if side == 0 else limits.binc
    remaining = max(0.0, clock - overhead)
    # A repeating control refills the clock: only sudden death keeps a reserve.
    reserve = 0.0 if limits.movestogo else sudden_death_reserve(increment, overhead, max(starting_clock or 0.0, clock))
    horizon = MOVES_HORIZON
    if not limits.movestogo and increment > 0.0 and reserve == 0.0 and remaining >= INCREMENT_HORIZON_CLOCK * increment:
        horizon = INCREMENT_HORIZON
    moves_left = max(1, min(limits.movestogo or horizon, horizon))
    soft = max(remaining - reserve, 0.0) / moves_left + SOFT_INCREMENT_SHARE * max(increment - overhead, 0.0)
    hard = min(HARD_SOFT_RATIO * soft, HARD_CLOCK_SHARE * remaining + increment * 0.5)
    if limits.movestogo == 1:
        hard = min(remaining * 0.8, remaining - MIN_RESERVE)
    ceiling = max(MIN_THINK, remaining - MIN_RESERVE)
    hard = max(MIN_THINK, min(hard, ceiling))
    soft = max(MIN_THINK, min(soft, hard))
    return soft, hard


def node_share_factor(best_nodes: int, total_nodes: int) -> float:
    """Factor on the soft limit from the best root move's share of the last iteration's nodes:
    the less of them it took, the more the other moves contested it, and the more time the
    next depth earns."""
    if total_nodes <= 0:
        return 1.0
    return (NODE_SHARE_BASE - best_nodes / total_nodes) * NODE_SHARE_SCALE


def falling_eval_factor(iteration_scores: Sequence[int], previous_score: int | None, mate_bound: int) -> float:
    """Factor on the soft limit from how the score moved.

    ``iteration_scores`` are the best scores of this search's finished iterations and
    ``previous_score`` the score of our last move (None in a new game).  A score that fell
    since our last move, or over the last ``FALLING_EVAL_LOOKBACK`` iterations, is trouble
    that earns more time; a rising one, less.  Scores at or beyond ``mate_bound`` are mates,
    which say nothing about how hard the position is: factor 1.
    """
    if not iteration_scores:
        return 1.0
    score = iteration_scores[-1]
    previous = score if previous_score is None else previous_score
    lookback = FALLING_EVAL_LOOKBACK
    earlier = iteration_scores[-1 - lookback] if len(iteration_scores) > lookback else score
    if max(abs(score), abs(previous), abs(earlier)) >= mate_bound:
        return 1.0
    factor = 1.0 + FALLING_EVAL_PREVIOUS * (previous - score) + FALLING_EVAL_ITERATIONS * (earlier - score)
    return min(max(factor, FALLING_EVAL_MIN), FALLING_EVAL_MAX)


def soft_limit_scale(depth: int, multipv: int, best_nodes: int, total_nodes: int, iteration_scores: Sequence[int],
                     previous_score: int | None, mate_bound: int) -> float:
    """The factor on the soft limit after ``depth``: node share times falling eval, from
    ``NODE_SHARE_MIN_DEPTH`` on and with one PV only (1 otherwise)."""
    if depth < NODE_SHARE_MIN_DEPTH or multipv != 1 or total_nodes <= 0:
        return 1.0
    return node_share_factor(best_nodes, total_nodes) * falling_eval_factor(iteration_scores, previous_score,
                                                                           mate_bound)
