"""Exact odds of one roll of all the dice: patterns and every box's score.

Counts are exact integers out of ``n_faces ** n_dice`` (7776 for five six-sided
dice), computed from the multinomial coefficient of each of the 252 rolls of the
shared dice tables; fractions are :class:`fractions.Fraction` built from them.

>>> odds = one_roll_odds("yahtzee")
>>> odds.count("five_of_a_kind"), odds.total, odds.fraction("five_of_a_kind")
(6, 7776, Fraction(1, 1296))
>>> dist = box_score_distribution("yahtzee")
>>> dist.query("box == 'yahtzee' and points == 50")["count"].item()
6
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterable

import numpy as np
import pandas as pd

from ..dice import DiceTables
from ..patterns import check_pattern, pattern_table
from ..rules import RuleSet, get_rules

__all__ = ["roll_counts_exact", "one_roll_odds", "OneRollOdds", "box_score_distribution",
           "one_in"]


@functools.lru_cache(maxsize=None)
def _roll_counts_exact(dice: DiceTables) -> np.ndarray:
    fact = np.array([math.factorial(k) for k in range(dice.n_dice + 1)], dtype=np.int64)
    counts = fact[dice.n_dice] // np.prod(fact[dice.roll_counts.astype(np.intp)], axis=1)
    counts.setflags(write=False)
    return counts


def roll_counts_exact(dice: DiceTables) -> np.ndarray:
    """(R,) int64: the number of ordered throws giving each roll (multinomial
    coefficients); they sum to ``n_faces ** n_dice``.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> c = roll_counts_exact(d)
    >>> int(c.sum()), int(c[d.roll_index_of([3, 3, 3, 5, 5])])
    (7776, 10)
    """
    return _roll_counts_exact(dice)


def one_in(p) -> str:
    """``"1 in N"`` for a probability (``"never"`` for 0, ``"always"`` for 1).

    >>> one_in(Fraction(6, 7776)), one_in(0.5), one_in(0)
    ('1 in 1296', '1 in 2', 'never')
    """
    p = float(p)
    if p <= 0:
        return "never"
    if p >= 1:
        return "always"
    n = 1.0 / p
    return f"1 in {n:.0f}" if n >= 100 or abs(n - round(n)) < 5e-3 else f"1 in {n:.2f}"


@dataclass(frozen=True)
class OneRollOdds:
    """Exact pattern odds of one roll of all the dice.

    counts : pattern -> number of ordered throws (out of ``total``) showing it.
    total : ``n_faces ** n_dice``.
    """

    rules: RuleSet
    counts: pd.Series
    total: int

    def __repr__(self) -> str:
        return (f"OneRollOdds({self.rules.key!r}, {len(self.counts)} patterns out of {self.total} throws: "
                f"five_of_a_kind {self.fraction('five_of_a_kind')})")

    def count(self, pattern: str) -> int:
        """Throws (out of :attr:`total`) showing ``pattern``."""
        return int(self.counts[check_pattern(pattern, self.rules.dice)])

    def fraction(self, pattern: str) -> Fraction:
        """Exact probability of ``pattern`` on one roll.

        >>> one_roll_odds().fraction("large_straight")
        Fraction(5, 162)
        """
        return Fraction(self.count(pattern), self.total)

    def probability(self, pattern: str) -> float:
        """The same as a float.

        >>> round(one_roll_odds().probability("full_house"), 6)
        0.03858
        """
        return self.count(pattern) / self.total

    def to_frame(self) -> pd.DataFrame:
        """One row per pattern: count, total, fraction (reduced), probability, "1 in N".

        >>> int(one_roll_odds().to_frame().loc["small_straight", "count"])
        1200
        """
        frame = pd.DataFrame({"count": self.counts.astype(np.int64)})
        frame["total"] = self.total
        frame["fraction"] = [Fraction(int(c), self.total) for c in self.counts]
        frame["probability"] = self.counts.to_numpy() / self.total
        frame["one_in"] = [one_in(f) for f in frame["fraction"]]
        frame.index.name = "pattern"
        return frame


def _rules(rules, options) -> RuleSet:
    return get_rules("yahtzee" if rules is None else rules, options)


def one_roll_odds(rules: str | RuleSet | None = None, options: Iterable[str] = ()) -> OneRollOdds:
    """Exact odds of every pattern of :mod:`yahtzee_sim.patterns` on one roll.

    The patterns depend only on the dice of the rule set (five six-sided dice for
    every rule set of RULES.md).

    >>> odds = one_roll_odds("yatzy")
    >>> odds.count("three_of_a_kind"), odds.count("four_of_a_kind")
    (1656, 156)
    """
    rules = _rules(rules, options)
    d = rules.dice
    table = pattern_table(d)
    counts = table.T.astype(np.int64) @ roll_counts_exact(d)
    return OneRollOdds(rules=rules, counts=pd.Series(counts, index=table.columns, name="count"),
                       total=d.n_faces ** d.n_dice)


def box_score_distribution(rules: str | RuleSet = "yahtzee", options: Iterable[str] = ()) -> pd.DataFrame:
    """Exact distribution of each box's score on one roll on a fresh card.

    Tidy table, boxes in card order and points ascending: ``box``, ``points``,
    ``count`` (out of ``total``), ``total``, ``fraction``, ``probability``.

    >>> dist = box_score_distribution("yahtzee")
    >>> sorted(dist.query("box == 'full_house'")["count"].tolist())
    [300, 7476]
    >>> bool(dist.groupby("box", sort=False)["probability"].sum().round(12).eq(1).all())
    True
    """
    rules = _rules(rules, options)
    d = rules.dice
    n = d.n_rolls
    rolls = np.arange(n)
    _, scores, bonus = rules.turn_options(np.zeros((n, rules.n_boxes), bool), np.zeros(n, bool), rolls)
    weights = roll_counts_exact(d)
    total = d.n_faces ** d.n_dice
    frames = []
    for b, name in enumerate(rules.box_names):
        pts = scores[:, b].astype(np.int64)
        values, inverse = np.unique(pts, return_inverse=True)
        counts = np.bincount(inverse, weights=weights, minlength=len(values)).round().astype(np.int64)
        frames.append(pd.DataFrame({"box": name, "points": values, "count": counts}))
    frame = pd.concat(frames, ignore_index=True)
    frame["total"] = total
    frame["fraction"] = [Fraction(int(c), total) for c in frame["count"]]
    frame["probability"] = frame["count"].to_numpy() / total
    return frame
