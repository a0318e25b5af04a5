"""Named dice patterns, as boolean columns over the rolls of the dice tables.

"Or better" patterns are inclusive (four of a kind counts five of a kind); the
``*_exactly`` ones are not. Used by the turn simulator and the exact odds.

>>> from yahtzee_sim.dice import dice_tables
>>> t = pattern_table(dice_tables())
>>> int((t["five_of_a_kind"] * 7776 * dice_tables().first_roll_prob).sum().round())
6
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from .dice import DiceTables


def _has_run(counts: np.ndarray, length: int) -> np.ndarray:
    present = counts > 0
    n_faces = counts.shape[1]
    ok = np.zeros(len(counts), dtype=bool)
    for start in range(n_faces - length + 1):
        ok |= present[:, start:start + length].all(axis=1)
    return ok


@functools.lru_cache(maxsize=None)
def _pattern_table(dice: DiceTables) -> pd.DataFrame:
    c = dice.roll_counts.astype(np.int64)
    n = dice.n_dice
    top = c.max(axis=1)
    pairs = (c >= 2).sum(axis=1)
    strict_fh = (c == 3).any(axis=1) & (c == 2).any(axis=1)
    cols = {
        "five_of_a_kind": top == n,
        "four_of_a_kind": top >= 4,
        "four_of_a_kind_exactly": top == 4,
        "full_house": strict_fh,
        "full_house_or_five": strict_fh | (top == n),
        "large_straight": _has_run(c, 5),
        "small_straight": _has_run(c, 4),
        "small_straight_exactly": _has_run(c, 4) & ~_has_run(c, 5),
        "three_of_a_kind": top >= 3,
        "three_of_a_kind_exactly": top == 3,
        "two_pairs": (pairs >= 2) | (top >= 4),
        "one_pair": top >= 2,
    }
    for k in range(1, n + 1):
        cols[f"largest_group_{k}"] = top == k
    return pd.DataFrame(cols)


def pattern_table(dice: DiceTables) -> pd.DataFrame:
    """(R, P) bool table: does each roll show each pattern?"""
    return _pattern_table(dice)


def pattern_names(dice: DiceTables | None = None) -> list[str]:
    """The valid pattern names.

    >>> pattern_names()[:2]
    ['five_of_a_kind', 'four_of_a_kind']
    """
    from .dice import dice_tables

    return list(pattern_table(dice or dice_tables()).columns)
