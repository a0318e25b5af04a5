"""Named dice patterns, as boolean columns over the rolls of the dice tables.

"Or better" patterns are inclusive (four of a kind counts five of a kind); the
``*_exactly`` ones are not. Used by the turn simulator and the exact odds.

Every name means what it says for any number of dice and faces: ``five_of_a_kind``
is at least five dice alike (on Maxi Yatzy's six dice 186 of the 46,656 rolls, not
the 6 of six alike), ``full_house`` three of one face and two of another,
``large_straight`` five faces in a row. A pattern no roll of the dice can show (five
of a kind with four dice, a large straight with four faces) is not offered for those
dice: :func:`check_pattern` refuses it in one line.

>>> from yahtzee_sim.dice import dice_tables
>>> t = pattern_table(dice_tables())
>>> int((t["five_of_a_kind"] * 7776 * dice_tables().first_roll_prob).sum().round())
6
>>> six = dice_tables(6, 6)
>>> int((pattern_table(six)["five_of_a_kind"] * 46656 * six.first_roll_prob).sum().round())
186
>>> "five_of_a_kind" in pattern_names(dice_tables(4, 6))
False
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from .dice import DiceTables

if TYPE_CHECKING:
    import pandas as pd


def _has_run(counts: np.ndarray, length: int) -> np.ndarray:
    present = counts > 0
    n_faces = counts.shape[1]
    ok = np.zeros(len(counts), dtype=bool)
    for start in range(n_faces - length + 1):
        ok |= present[:, start:start + length].all(axis=1)
    return ok


@functools.lru_cache(maxsize=None)
def _all_patterns(dice: DiceTables) -> pd.DataFrame:
    """Every pattern's column for these dice, also those no roll can show (all False)."""
    import pandas as pd     # here, not at import: the names and the checks need no table

    return pd.DataFrame(_all_columns(dice))


@functools.lru_cache(maxsize=None)
def _all_columns(dice: DiceTables) -> dict[str, np.ndarray]:
    """:func:`_all_patterns`' columns by name, in its order (no pandas)."""
    c = dice.roll_counts.astype(np.int64)
    n = dice.n_dice
    top = c.max(axis=1)
    pairs = (c >= 2).sum(axis=1)
    # three of one face and two of another: the face holding three is one with the most dice,
    # and another face must hold two (a face with 3+ plus any other face with 2+)
    full_house = (top >= 3) & (((c >= 2).sum(axis=1) >= 2))
    cols = {
        "five_of_a_kind": top >= 5,
        "four_of_a_kind": top >= 4,
        "four_of_a_kind_exactly": top == 4,
        "full_house": full_house,
        "full_house_or_five": full_house | (top >= 5),
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
    return cols


@functools.lru_cache(maxsize=None)
def _pattern_table(dice: DiceTables) -> pd.DataFrame:
    table = _all_patterns(dice)
    return table.loc[:, table.any(axis=0).to_numpy()]  # a pattern no roll shows has no meaning here


def pattern_table(dice: DiceTables) -> pd.DataFrame:
    """(R, P) bool table: does each roll show each pattern (those some roll of ``dice`` can show)?

    >>> from yahtzee_sim.dice import dice_tables
    >>> list(pattern_table(dice_tables(3, 6)).columns)
    ['three_of_a_kind', 'three_of_a_kind_exactly', 'one_pair', 'largest_group_1', 'largest_group_2', 'largest_group_3']
    """
    return _pattern_table(dice)


def pattern_names(dice: DiceTables | None = None) -> list[str]:
    """The valid pattern names.

    >>> pattern_names()[:2]
    ['five_of_a_kind', 'four_of_a_kind']
    """
    from .dice import dice_tables

    return [name for name, col in _all_columns(dice or dice_tables()).items() if col.any()]


def check_pattern(name: str, dice: DiceTables | None = None) -> str:
    """The canonical pattern name for ``name`` (case, hyphens and spaces forgiven).

    Unknown names raise a one-line ``ValueError`` listing the valid names.

    >>> check_pattern("Five-of-a-kind")
    'five_of_a_kind'
    >>> check_pattern("yahtzee")
    Traceback (most recent call last):
    ...
    ValueError: unknown pattern 'yahtzee'; valid patterns: five_of_a_kind, four_of_a_kind, four_of_a_kind_exactly, full_house, full_house_or_five, large_straight, small_straight, small_straight_exactly, three_of_a_kind, three_of_a_kind_exactly, two_pairs, one_pair, largest_group_1, largest_group_2, largest_group_3, largest_group_4, largest_group_5
    """
    from .dice import dice_tables

    dice = dice or dice_tables()
    names = pattern_names(dice)
    key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    if key not in names:
        if key in _all_columns(dice) or (key.startswith("largest_group_") and key[14:].isdigit()):
            raise ValueError(f"pattern {name!r} cannot happen with {dice.n_dice} dice of {dice.n_faces} faces; "
                             f"valid patterns for these dice: {', '.join(names)}")
        raise ValueError(f"unknown pattern {name!r}; valid patterns: {', '.join(names)}")
    return key


def pattern_inclusions(dice: DiceTables | None = None) -> dict[str, list[str]]:
    """For each pattern, the other patterns it also counts: ``four_of_a_kind`` counts
    every ``five_of_a_kind`` roll ("or better"), ``full_house`` counts no other
    pattern (exactly). Derived from the rolls of :func:`pattern_table`, listing only
    the largest patterns strictly inside (so ``three_of_a_kind`` names four of a kind
    and the full house, not five of a kind too); exact and duplicate patterns
    (``*_exactly``, ``largest_group_*``) are not named.

    >>> inc = pattern_inclusions()
    >>> inc["four_of_a_kind"], inc["small_straight"], inc["full_house"]
    (['five_of_a_kind'], ['large_straight'], [])
    """
    from .dice import dice_tables

    table = pattern_table(dice or dice_tables())
    rolls = {name: frozenset(np.flatnonzero(table[name].to_numpy())) for name in table.columns}
    named = [n for n in table.columns if not n.endswith("_exactly") and not n.startswith("largest_group_")]
    out = {}
    for name, mine in rolls.items():
        inside = [q for q in named if q != name and rolls[q] and rolls[q] < mine]
        out[name] = [q for q in inside if not any(rolls[q] < rolls[r] for r in inside if r != q)]
    return out


def pattern_meanings(dice: DiceTables | None = None) -> dict[str, str]:
    """What each pattern counts, in words: ``"also counts ..."`` ("or better") or ``"exactly"``.

    >>> m = pattern_meanings()
    >>> m["four_of_a_kind"], m["full_house"]
    ('also counts five_of_a_kind', 'exactly')
    """
    return {name: f"also counts {', '.join(inc)}" if inc else "exactly"
            for name, inc in pattern_inclusions(dice).items()}


def pattern_note(names=None, dice: DiceTables | None = None) -> str:
    """The footnote under a table of patterns, computed from their definitions: which
    of ``names`` also count other patterns ("or better") and which are exact (default:
    every pattern, the ``*_exactly`` and ``largest_group_*`` ones named only when they
    count another pattern, as ``three_of_a_kind_exactly`` counts full houses).

    >>> pattern_note(["four_of_a_kind", "small_straight", "full_house"])
    'Counting other patterns too ("or better"): four_of_a_kind (also counts five_of_a_kind), small_straight (also counts large_straight). Exactly: full_house.'
    """
    inc = pattern_inclusions(dice)
    names = [n for n in inc if inc[n] or not (n.endswith("_exactly") or n.startswith("largest_group_"))] \
        if names is None else list(names)
    better = [f"{n} (also counts {', '.join(inc[n])})" for n in names if inc[n]]
    exact = [n for n in names if not inc[n]]
    parts = []
    if better:
        parts.append(f"Counting other patterns too (\"or better\"): {', '.join(better)}.")
    if exact:
        parts.append(f"Exactly: {', '.join(exact)}.")
    return " ".join(parts)


def pattern_includes_column(dice: DiceTables | None = None) -> dict[str, str]:
    """The ``includes`` column of the odds and turns tables (see :func:`pattern_inclusions`).

    >>> pattern_includes_column()["small_straight"], pattern_includes_column()["full_house"]
    ('large_straight', '-')
    """
    return {name: ", ".join(inc) or "-" for name, inc in pattern_inclusions(dice).items()}


HAND_CLASSES = ("five_of_a_kind", "four_of_a_kind", "full_house", "three_of_a_kind",
                "large_straight", "small_straight", "two_pairs", "one_pair", "nothing")
"""Mutually exclusive classes of a roll, best first (each roll is in exactly one)."""


@functools.lru_cache(maxsize=None)
def _hand_class(dice: DiceTables) -> np.ndarray:
    t = _all_columns(dice)  # every class, also those these dice cannot show (then empty)
    # Precedence order: a roll takes the first class it qualifies for.
    tests = [t["five_of_a_kind"], t["four_of_a_kind"], t["full_house"], t["three_of_a_kind"],
             t["large_straight"], t["small_straight"], t["two_pairs"], t["one_pair"]]
    out = np.full(dice.n_rolls, len(HAND_CLASSES) - 1, dtype=np.int8)
    for i, test in reversed(list(enumerate(tests))):
        out[test] = i
    out.setflags(write=False)
    return out


def hand_class(dice: DiceTables) -> np.ndarray:
    """(R,) index into :data:`HAND_CLASSES` of each roll: a partition of the rolls
    (five of a kind, then four, full house, three, large straight, small straight,
    two pairs, one pair, nothing), used for chi-square checks over whole turns.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> HAND_CLASSES[hand_class(d)[d.roll_index_of([1, 2, 3, 4, 4])]]
    'small_straight'
    """
    return _hand_class(dice)
