"""The exact optimum of one Yamb column played alone: the Down column (top to bottom).

Yamb's four columns share every turn, so the whole game is far beyond the solver
(2**52 score cards). Its Down column alone is small: its rows are filled in their
order, so a turn's only choice is the keeps, and what the rest of the column pays
depends on few numbers: before and during the six upper rows the upper total (up to
the bonus threshold) and the Ones (for the (Max - Min) x Ones term), before Min the
Ones and Max, after it nothing. This module solves that 13-turn game exactly by
backward induction, each turn the solver's keep-lattice sweep
(:mod:`yahtzee_sim.exact._solver_lattice`) in float64 on the rule set's own score
tables, Kenta's points by the throw that made it (holding every die is not a throw).

It is a sub-game, not a bound on the whole game: there each turn's dice may go to any
of four columns. It tells what perfect play of one ordered column is worth: the
Down column's share of a game played by the heuristic can be set against it.

>>> sol = solve_yamb_down()
>>> sol.n_states, bool(100 < sol.mean < 200)
(1998, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..rules import RuleSet, get_rules
from ..rules import catalog
from ..validate import renamed_attribute
from ._solver_lattice import best_subkeep_mean, expect, first_roll_mean, lattice

__all__ = ["solve_yamb_down", "DownSolution", "turn_value"]


@dataclass(frozen=True, eq=False)
class DownSolution:
    """Optimal expected score of Yamb's Down column played alone (float64, mean only).

    rules : the rule set; rows : the column's rows in order; values : per row, the
    (states,) expected score of the rest of the column before that row is filled,
    its states: one after Min, (Ones, Max) at Min, Ones at Max, (Ones, upper
    total capped at the bonus threshold) in the upper rows; seconds.
    """

    rules: RuleSet
    rows: tuple
    values: tuple
    seconds: float

    @property
    def mean(self) -> float:
        """The optimal mean (expected) score of the column from its first row."""
        return float(self.values[0][0])

    expected_score = renamed_attribute("expected_score", "mean")

    @property
    def n_states(self) -> int:
        return int(sum(len(v) for v in self.values))

    def summary(self) -> dict:
        """The headline numbers as a plain dict.

        >>> sorted(solve_yamb_down().summary())
        ['column', 'expected_score', 'mean', 'method', 'rules', 'seconds', 'states']
        """
        return {"rules": self.rules.key, "column": "down", "mean": self.mean,
                "expected_score": self.mean,
                "states": self.n_states, "seconds": self.seconds,
                "method": "exact (the Down column alone, float64)"}


def turn_value(lat, payoff: np.ndarray) -> np.ndarray:
    """(U,) value of a turn under the best keeps, for payoffs ``payoff`` (n_rolls, R, U):
    the worth of each final roll (solver order) when the dice were made by throw 1, 2,
    ... (holding every die is not a throw, so stopping keeps the throw count).

    With the same payoff at every throw it is the solver's sweep.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables(); lat = lattice(d)
    >>> five = (d.roll_counts[lat.roll_at].max(axis=1) == 5).astype(float)[:, None]
    >>> round(float(turn_value(lat, np.stack([five] * 3))[0]), 6)     # five of a kind in three throws
    0.046029
    """
    n_rolls, r, u = payoff.shape
    rb = lat.level_slices[lat.n_dice]
    z = np.empty((lat.n_keeps, u))
    z[rb] = payoff[-1]
    for j in range(1, n_rolls):
        expect(lat, z)
        z[rb] = payoff[n_rolls - 1 - j]          # hold every die: the dice of that throw
        best_subkeep_mean(lat, z)
    return first_roll_mean(lat, z[rb])


def solve_yamb_down(rules: str | RuleSet = "yamb", *, options=(), bonus_at: int = catalog.YAMB_BONUS_AT,
                    bonus: int = catalog.YAMB_BONUS) -> DownSolution:
    """Solve Yamb's Down column played alone, exactly; ``bonus`` is paid when the six
    upper rows reach ``bonus_at`` (Yamb's +30 at 60).

    >>> solve_yamb_down("yahtzee")
    Traceback (most recent call last):
    ...
    ValueError: the Down-column solver is for yamb, not yahtzee
    """
    rules = get_rules(rules, options)
    if rules.card_score is not catalog.yamb_score:
        raise ValueError(f"the Down-column solver is for yamb, not {rules.key}")
    t0 = time.perf_counter()
    lat = lattice(rules.dice)
    rows = catalog.YAMB_ROWS
    down = [rules.box_index(f"down_{row}") for row in rows]
    pts = rules.score_tables[:, lat.roll_at][:, :, down].astype(np.float64)   # (throws, R, 13)
    n_throws = pts.shape[0]
    top = int(rules.score_table[:, down[0]].max())                 # the most Ones can score
    sums = rules.score_table[lat.roll_at, down[rows.index("max")]].astype(np.int64)   # (R,)
    lo_sum, hi_sum = int(sums.min()), int(sums.max())
    cap = int(bonus_at)

    # after Min nothing is carried: the lower rows, last first
    values = [None] * len(rows)
    after = 0.0
    for i in range(len(rows) - 1, rows.index("min"), -1):
        after = float(turn_value(lat, pts[:, :, i, None])[0]) + after
        values[i] = np.array([after])
    # Min: states (Ones, Max); it pays (Max - Min) x Ones
    ones = np.arange(top + 1)
    maxes = np.arange(lo_sum, hi_sum + 1)
    o, m = np.repeat(ones, len(maxes)), np.tile(maxes, len(ones))
    gain = (m[None, :] - sums[:, None]) * o[None, :]               # (R, U)
    values[rows.index("min")] = turn_value(lat, np.broadcast_to(gain + after, (n_throws,) + gain.shape))
    v_min = values[rows.index("min")].reshape(len(ones), len(maxes))
    # Max: states Ones; it writes the sum of the dice and pays nothing yet
    nxt = v_min[:, sums - lo_sum].T                                 # (R, Ones)
    values[rows.index("max")] = turn_value(lat, np.broadcast_to(nxt, (n_throws,) + nxt.shape))
    v_max = values[rows.index("max")]
    # the upper rows, Sixes up to Twos: states (Ones, upper total capped at the threshold)
    totals = np.arange(cap + 1)
    following = np.broadcast_to(v_max[:, None], (len(ones), cap + 1))  # after Sixes: bonus paid
    for i in range(5, 0, -1):
        score = pts[:, :, i].astype(np.int64)                       # (throws, R)
        u_next = np.minimum(totals[None, None, :] + score[:, :, None], cap)        # (throws, R, T)
        paid = bonus * ((u_next >= cap) & (totals[None, None, :] < cap))  # the row that reaches 60
        payoff = np.stack([score[t][:, None, None] + paid[t][:, None, :]
                           + following[:, u_next[t]].transpose(1, 0, 2) for t in range(n_throws)])
        values[i] = turn_value(lat, payoff.reshape(n_throws, len(sums), -1)).reshape(len(ones), cap + 1)
        following = values[i]
    # Ones: from the empty column; the Ones score is also the upper total so far
    score = pts[:, :, 0].astype(np.int64)                           # (throws, R)
    payoff = np.stack([score[t] + following[score[t], np.minimum(score[t], cap)] for t in range(n_throws)])
    values[0] = turn_value(lat, payoff[:, :, None])
    flat = tuple(np.ascontiguousarray(v, dtype=np.float64).reshape(-1) for v in values)
    return DownSolution(rules, rows, flat, time.perf_counter() - t0)
