"""Time management: how long to think about one move.

Two limits come out of the clock: a *soft* limit, checked between iterations of
iterative deepening (do not start a new depth after it), and a *hard* limit, at
which a watchdog thread raises the kernel's stop flag mid-iteration.  Neither is
ever read inside the numba search.

    remaining   = our clock - Move Overhead (time lost between engine and GUI)
    moves left  = movestogo, or MOVES_HORIZON for sudden death / increment games
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

The increment counts net of the Move Overhead because every move loses that
overhead, not only the next one: with the whole increment counted, a long game at
5+0.05 spent about the increment per move once its clock was low, the clock drained
to under 0.1 s over 200 moves, and one delay on a loaded machine lost on time.  Net of
it, once the clock is below about 5.5 x (increment - Move Overhead), the soft limit and
the overhead together take less than the increment, and the clock grows back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MOVES_HORIZON = 22          # sudden death: plan as if this many moves remained
SOFT_INCREMENT_SHARE = 0.75
HARD_SOFT_RATIO = 4.0
HARD_CLOCK_SHARE = 0.35     # never spend more than this share of the clock on one move
MIN_RESERVE = 0.030         # seconds always left on the clock (Python wakes up slower than C)
MIN_THINK = 0.002           # seconds: even a nearly flagged move searches depth 1
MOVE_COST_FLOOR = 0.005     # seconds a move costs at the least (search, Python and the pipe), whatever the overhead
SUDDEN_DEATH_RESERVE_MOVES = 200   # without an increment to live on, keep back what this many moves cost ...
SUDDEN_DEATH_RESERVE_SHARE = 0.05  # ... but never more than this share of the game's starting clock


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

    def uses_clock(self) -> bool:
        """True when the search must stop by itself on time."""
        return self.movetime is not None or self.wtime is not None or self.btime is not None


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
    moves_left = max(1, min(limits.movestogo or MOVES_HORIZON, MOVES_HORIZON))
    # A repeating control refills the clock: only sudden death keeps a reserve.
    reserve = 0.0 if limits.movestogo else sudden_death_reserve(increment, overhead, max(starting_clock or 0.0, clock))
    soft = max(remaining - reserve, 0.0) / moves_left + SOFT_INCREMENT_SHARE * max(increment - overhead, 0.0)
    hard = min(HARD_SOFT_RATIO * soft, HARD_CLOCK_SHARE * remaining + increment * 0.5)
    if limits.movestogo == 1:
        hard = min(remaining * 0.8, remaining - MIN_RESERVE)
    ceiling = max(MIN_THINK, remaining - MIN_RESERVE)
    hard = max(MIN_THINK, min(hard, ceiling))
    soft = max(MIN_THINK, min(soft, hard))
    return soft, hard
