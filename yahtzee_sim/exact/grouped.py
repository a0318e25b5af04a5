"""The exact optimum of a game whose boxes come in groups of identical boxes: Balut's score.

Balut has 28 boxes, so the solver's state (which boxes are filled) has 2**28 score
cards and is refused. But its boxes are seven categories of four identical boxes
each, with no upper bonus and no joker: for the *score* (its points set aside) only
how many boxes of each category are filled matters, 5**7 = 78,125 states. This
module solves that game exactly by backward induction over those counts, each turn
the solver's keep-lattice sweep (:mod:`yahtzee_sim.exact._solver_lattice`) in
float64 on the rule set's own score table, and so gives the largest expected score
any Balut strategy can reach: an exact bound for the strategies that also aim at
points.

It applies to any rule set whose score is the sum of its boxes, with no upper
bonus, no five-of-a-kind bonus or joker, any fill order and scores that do not
depend on the throw (a game of distinct boxes is then a game of groups of one, and
equals :func:`~yahtzee_sim.exact.solver.solve`); others get a one-line refusal.

>>> sol = solve_grouped("balut")
>>> sol.groups, sol.n_states
((4, 4, 4, 4, 4, 4, 4), 78125)
>>> bool(300 < sol.mean < 500)
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..rules import RuleSet, get_rules
from ..validate import renamed_attribute
from ._solver_lattice import first_roll_mean, lattice, sweep_keeps
from .space import needs_flag

__all__ = ["solve_grouped", "GroupedSolution", "require_grouped"]

CHUNK = 2048
"""States evaluated at once (a (462, CHUNK) float64 block: 7.6 MB)."""


@dataclass(frozen=True, eq=False)
class GroupedSolution:
    """Optimal expected score of a game of grouped boxes.

    rules : the rule set; groups : boxes per group (in card order of first appearance);
    group_of_box : (B,) group of each box; values : (n_states,) expected future score
    of every count vector (mixed radix, the first group varies fastest); seconds.
    """

    rules: RuleSet
    groups: tuple
    group_of_box: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)
    seconds: float

    @property
    def n_states(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        """The optimal mean (expected) final score from an empty card."""
        return float(self.values[0])

    expected_score = renamed_attribute("expected_score", "mean")

    def value(self, filled) -> np.ndarray:
        """(N,) optimal expected future score of cards ``filled`` (N, B) bool.

        >>> sol = solve_grouped("balut")
        >>> full = np.ones((1, sol.rules.n_boxes), bool)
        >>> sol.value(full).tolist()
        [0.0]
        """
        filled = np.asarray(filled, dtype=bool).reshape(-1, self.rules.n_boxes)
        counts = np.zeros((len(filled), len(self.groups)), dtype=np.int64)
        np.add.at(counts, (slice(None), self.group_of_box), filled.astype(np.int64))
        return self.values[counts @ _strides(self.groups)]

    def summary(self) -> dict:
        """The headline numbers as a plain dict.

        >>> sorted(solve_grouped("balut").summary())
        ['expected_score', 'groups', 'mean', 'method', 'rules', 'seconds', 'states']
        """
        return {"rules": self.rules.key, "mean": self.mean, "expected_score": self.mean,
                "groups": list(self.groups), "states": self.n_states, "seconds": self.seconds,
                "method": "exact (score only: points set aside)"}


def _strides(groups) -> np.ndarray:
    return np.cumprod((1,) + tuple(g + 1 for g in groups[:-1])).astype(np.int64)


def require_grouped(rules: RuleSet) -> None:
    """The one-line reason the grouped-boxes solver refuses ``rules``, if any.

    >>> require_grouped(get_rules("balut"))
    """
    why = None
    if rules.upper_bonus:
        why = "an upper bonus makes the upper total part of the state"
    elif needs_flag(rules) or rules.joker != "none":
        why = "its bonuses, jokers or boxes depend on what the five-of-a-kind box holds"
    elif rules.fill_order != "any" or getattr(rules, "columns", ()):
        why = "its boxes must be filled in an order"
    elif rules.roll_dependent or rules.banked_throws or rules.announces:
        why = "its scores depend on the throws"
    elif getattr(rules, "card_score", None) is not None:
        why = "its score depends on the whole card"
    if why:
        raise ValueError(f"the grouped-boxes solver does not handle {rules.key}: {why}; "
                         f"use the solver (solve(), or yahtzee-sim solve without --score-only), or simulate")


def solve_grouped(rules: str | RuleSet, *, options=(), progress=None) -> GroupedSolution:
    """Solve a game of grouped identical boxes exactly (float64, mean only).

    Boxes with the same score for every roll form a group; a state is how many boxes
    of each group are filled.

    >>> solve_grouped("yahtzee")
    Traceback (most recent call last):
    ...
    ValueError: the grouped-boxes solver does not handle yahtzee: an upper bonus makes the upper total part of the state; use the solver (solve(), or yahtzee-sim solve without --score-only), or simulate
    """
    from ..progress import as_progress

    rules = get_rules(rules, options)
    require_grouped(rules)
    report = as_progress(progress)
    t0 = time.perf_counter()
    table = rules.score_table.astype(np.float64)                    # (R, B)
    _, first, group_of_box = np.unique(table.T, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)                                      # groups in card order
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    group_of_box = rank[group_of_box.ravel()]
    groups = tuple(int((group_of_box == g).sum()) for g in range(len(order)))
    scores = table[:, [int(np.flatnonzero(group_of_box == g)[0]) for g in range(len(groups))]]
    strides = _strides(groups)
    n_states = int(np.prod([g + 1 for g in groups]))
    counts = (np.arange(n_states)[:, None] // strides[None, :]) % (np.array(groups) + 1)
    level = counts.sum(axis=1)
    lat = lattice(rules.dice)
    rb = lat.level_slices[lat.n_dice]
    final = scores[lat.roll_at]                                     # (R, G) in solver order
    values = np.full(n_states, np.nan)
    values[level == rules.n_boxes] = 0.0
    done, total = 0, int((level < rules.n_boxes).sum())
    for lv in range(rules.n_boxes - 1, -1, -1):
        states = np.flatnonzero(level == lv)
        for a in range(0, len(states), CHUNK):
            s = states[a:a + CHUNK]
            open_ = counts[s] < np.array(groups)                        # (U, G)
            nxt = np.where(open_, values[np.where(open_, s[:, None] + strides, 0)], -np.inf)
            z = np.empty((lat.n_keeps, len(s)))
            z[rb] = (final[:, None, :] + nxt[None, :, :]).max(axis=2)    # best box of each roll
            sweep_keeps(lat, z, rules.n_rolls)
            values[s] = first_roll_mean(lat, z[rb])
            done += len(s)
            report(f"solving {rules.key} (grouped boxes)", done, total)
    values.setflags(write=False)
    return GroupedSolution(rules, groups, group_of_box, values, time.perf_counter() - t0)
