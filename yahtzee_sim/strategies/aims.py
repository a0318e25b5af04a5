"""What a card scored as a whole pays at the end, as goals a strategy can aim at.

Balut's points (:attr:`RuleSet.card_points`) and Yamb's column bonuses (inside
:attr:`RuleSet.card_score`) are functions of the finished card. For the games whose
functions it knows, :func:`card_aims` describes them as goals on the boxes, in *score
units* (what a point of the game's own objective is worth in score points):

* a *total* goal pays ``worth`` when its boxes sum to ``threshold`` or more (Balut's
  Fours 52, Fives 65, Sixes 78, Choice 100; a Yamb column's six upper rows 60);
* a *full* goal pays ``worth`` when every one of its boxes is non-zero (Balut's four
  Straights, four Full houses);
* ``each`` is paid by a box whenever it is non-zero (each Balut).

Balut is won on points; its total score adds a point per score band of 50, so a
point is worth 50 score points (``unit``) and every goal's points are counted in
those units. Yamb is won on the score (``unit`` 1). ``tests/test_heuristic_aims.py``
checks that the goals and the score bands add up to ``RuleSet.points`` (Balut) and
the column bonuses to what ``RuleSet.card_score`` pays beyond the rows (Yamb).

>>> from yahtzee_sim.rules import get_rules
>>> a = card_aims(get_rules("balut"))
>>> a.unit, [(len(g.boxes), g.threshold, g.worth) for g in a.totals][0], [g.worth for g in a.full]
(50, (4, 52, 100), [200, 150])
>>> [(len(g.boxes), g.threshold, g.worth) for g in card_aims(get_rules("yamb")).totals]
[(6, 60, 30), (6, 60, 30), (6, 60, 30), (6, 60, 30)]
>>> card_aims(get_rules("yahtzee")) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..rules import catalog
from ..rules.base import RuleSet

__all__ = ["CardAims", "FullGoal", "TotalGoal", "card_aims"]


@dataclass(frozen=True)
class TotalGoal:
    """``worth`` (score units) when the boxes ``boxes`` (indices) sum to ``threshold`` or more."""

    boxes: np.ndarray
    threshold: int
    worth: float


@dataclass(frozen=True)
class FullGoal:
    """``worth`` (score units) when every box of ``boxes`` (indices) is non-zero."""

    boxes: np.ndarray
    worth: float


@dataclass(frozen=True)
class CardAims:
    """The end-of-game payoffs of a card beyond the sum of its boxes (see the module)."""

    unit: float                     # score points per point of what the game is won on
    totals: tuple[TotalGoal, ...]
    full: tuple[FullGoal, ...]
    each: np.ndarray                # (B,) score units a box adds when it is non-zero

    @property
    def goal_boxes(self) -> np.ndarray:
        """(B,) bool: boxes that belong to a total or full goal."""
        out = np.zeros(len(self.each), dtype=bool)
        for g in self.totals + self.full:
            out[g.boxes] = True
        return out


def card_aims(rules: RuleSet) -> CardAims | None:
    """The goals of ``rules``'s end-of-game payoffs, or None when the card pays only the
    sum of its boxes and bonuses (every rule set but Balut and Yamb)."""
    if rules.card_points is catalog.balut_points:
        return _balut_aims(rules)
    if rules.card_score is catalog.yamb_score:
        return _yamb_aims(rules)
    return None


def _category_boxes(rules: RuleSet, category: str) -> np.ndarray:
    return np.array([rules.box_index(f"{category}_{k}") for k in range(1, catalog.BALUT_ROUNDS + 1)])


def _balut_aims(rules: RuleSet) -> CardAims:
    unit = catalog.BALUT_SCORE_BANDS[1]           # one point per score band
    each = np.zeros(rules.n_boxes)
    for c, worth in catalog.BALUT_EACH_POINTS:
        each[_category_boxes(rules, c)] = worth * unit
    totals = tuple(TotalGoal(_category_boxes(rules, c), threshold, worth * unit)
                   for c, threshold, worth in catalog.BALUT_TOTAL_POINTS)
    full = tuple(FullGoal(_category_boxes(rules, c), worth * unit) for c, worth in catalog.BALUT_FULL_POINTS)
    return CardAims(unit=unit, totals=totals, full=full, each=each)


def _yamb_aims(rules: RuleSet) -> CardAims:
    upper_rows = catalog.YAMB_ROWS[:6]
    totals = tuple(TotalGoal(np.array([rules.box_index(f"{col}_{row}") for row in upper_rows]),
                             catalog.YAMB_BONUS_AT, catalog.YAMB_BONUS)
                   for col, _ in catalog.YAMB_COLUMNS)
    return CardAims(unit=1, totals=totals, full=(), each=np.zeros(rules.n_boxes))
