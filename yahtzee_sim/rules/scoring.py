"""Vectorized scoring functions: each maps face counts ``(R, F)`` to scores ``(R,)``.

A rule set's boxes are built from these small factories, so a new game is data
plus, at most, one more factory here.

>>> import numpy as np
>>> counts = np.array([[0, 0, 3, 0, 2, 0]])      # 3-3-3-5-5
>>> full_house("sum")(counts).tolist(), upper(3)(counts).tolist()
([19], [9])
"""

from __future__ import annotations

import itertools
from typing import Callable

import numpy as np

Scorer = Callable[[np.ndarray], np.ndarray]


def _faces(counts: np.ndarray) -> np.ndarray:
    return np.arange(1, counts.shape[-1] + 1)


def dice_sum(counts: np.ndarray) -> np.ndarray:
    """Sum of all dice.

    >>> dice_sum(np.array([[0, 0, 0, 1, 2, 2]])).tolist()   # 6-6-5-5-4
    [26]
    """
    return (counts * _faces(counts)).sum(axis=-1)


def upper(face: int) -> Scorer:
    """Sum of the dice showing ``face``.

    >>> upper(6)(np.array([[1, 1, 0, 0, 0, 3]])).tolist()   # 6-6-6-2-1
    [18]
    """

    def score(counts: np.ndarray) -> np.ndarray:
        return counts[..., face - 1] * face

    return score


def chance(counts: np.ndarray) -> np.ndarray:
    """Any dice: their sum."""
    return dice_sum(counts)


def of_a_kind(n: int, *, value: str = "sum") -> Scorer:
    """At least ``n`` dice of one face.

    ``value``: ``"sum"`` (all dice), ``"matching"`` (n times the face, the highest
    such face), or a fixed number as a string, e.g. ``"50"``.

    >>> c = np.array([[0, 0, 0, 0, 4, 1]])               # 5-5-5-5-6
    >>> of_a_kind(4)(c).tolist(), of_a_kind(4, value="matching")(c).tolist()
    ([26], [20])
    """

    def score(counts: np.ndarray) -> np.ndarray:
        has = counts >= n
        ok = has.any(axis=-1)
        if value == "sum":
            return np.where(ok, dice_sum(counts), 0)
        if value == "matching":
            top_face = np.where(has, _faces(counts), 0).max(axis=-1)
            return n * top_face
        return np.where(ok, int(value), 0)

    return score


def full_house(value: str = "sum", *, five_counts: bool = False) -> Scorer:
    """Three of one face and two of another; ``five_counts``: five of a kind counts too.

    ``value``: ``"sum"`` or a fixed number as a string (``"25"``).

    >>> c = np.array([[3, 2, 0, 0, 0, 0], [5, 0, 0, 0, 0, 0]])
    >>> full_house("sum")(c).tolist(), full_house("25", five_counts=True)(c).tolist()
    ([7, 0], [25, 25])
    """

    def score(counts: np.ndarray) -> np.ndarray:
        ok = (counts == 3).any(axis=-1) & (counts == 2).any(axis=-1)
        if five_counts:
            ok |= (counts == counts.sum(axis=-1, keepdims=True)).any(axis=-1)
        points = dice_sum(counts) if value == "sum" else int(value)
        return np.where(ok, points, 0)

    return score


def straight(length: int, points: int, *, runs: tuple[tuple[int, ...], ...] | None = None) -> Scorer:
    """``points`` if the dice contain a run of ``length`` faces (or one of ``runs``).

    >>> c = np.array([[1, 1, 1, 1, 0, 1]])                # 1-2-3-4-6
    >>> straight(4, 30)(c).tolist(), straight(5, 40)(c).tolist()
    ([30], [0])
    >>> straight(5, 15, runs=((1, 2, 3, 4, 5),))(np.array([[0, 1, 1, 1, 1, 1]])).tolist()
    [0]
    """

    def score(counts: np.ndarray) -> np.ndarray:
        n_faces = counts.shape[-1]
        wanted = runs or tuple(tuple(range(s, s + length)) for s in range(1, n_faces - length + 2))
        present = counts > 0
        ok = np.zeros(counts.shape[:-1], dtype=bool)
        for run in wanted:
            ok |= present[..., [f - 1 for f in run]].all(axis=-1)
        return np.where(ok, points, 0)

    return score


def highest_pair(counts: np.ndarray) -> np.ndarray:
    """Yatzy's One pair: twice the highest face shown at least twice.

    >>> highest_pair(np.array([[1, 0, 0, 2, 2, 0]])).tolist()   # 5-5-4-4-1
    [10]
    """
    return 2 * np.where(counts >= 2, _faces(counts), 0).max(axis=-1)


def two_pairs(counts: np.ndarray) -> np.ndarray:
    """Yatzy's Two pairs: two pairs of different faces, the sum of those four dice.

    >>> two_pairs(np.array([[1, 0, 0, 2, 2, 0], [0, 0, 0, 0, 0, 5]])).tolist()
    [18, 0]
    """
    pair_faces = np.where(counts >= 2, _faces(counts), 0)
    top2 = np.sort(pair_faces, axis=-1)[..., -2:]
    ok = (top2 > 0).all(axis=-1)
    return np.where(ok, 2 * top2.sum(axis=-1), 0)


def five_of_a_kind(points: int) -> Scorer:
    """``points`` if all dice show the same face."""

    def score(counts: np.ndarray) -> np.ndarray:
        return np.where((counts == counts.sum(axis=-1, keepdims=True)).any(axis=-1), points, 0)

    return score


# -- the rest of the family: generic combinations, colours, throws -----------------------

def _fixed_or(value, counts, dice_value):
    """Points of a combination that is present: ``"sum"`` of all dice, ``"dice"`` (the
    dice that make it, ``dice_value``) or a fixed number."""
    if value == "sum":
        return dice_sum(counts)
    if value in ("dice", "matching"):
        return dice_value
    return int(value)


def groups(sizes: tuple[int, ...], value="sum", *, plus: int = 0,
           colours: tuple[int, ...] | None = None) -> Scorer:
    """Groups of at least ``sizes[i]`` dice showing *different* faces.

    (3, 2) is a full house, (2, 2) two pairs, (3, 3) Maxi Yatzy's Villa, (4, 2) its
    Tower. ``value``: ``"sum"`` (all dice), ``"dice"`` (the dice of the groups, the best
    choice of faces) or a fixed number; ``plus`` is added when the groups are present.
    ``colours``: the colour of each face; all the groups' faces must share one (Kismet).

    >>> c = np.array([[0, 0, 3, 0, 2, 0], [0, 0, 0, 3, 0, 3], [0, 0, 0, 0, 0, 5]])  # 3-3-3-5-5, 4-4-4-6-6-6
    >>> groups((3, 2))(c).tolist(), groups((3, 2), "dice")(c).tolist(), groups((3, 3))(c).tolist()
    ([19, 30, 0], [19, 26, 0], [0, 30, 0])
    """
    sizes = tuple(int(k) for k in sizes)

    def score(counts: np.ndarray) -> np.ndarray:
        n_faces = counts.shape[-1]
        best = np.full(counts.shape[:-1], -1, dtype=np.int64)
        for faces in itertools.permutations(range(n_faces), len(sizes)):
            if colours is not None and len({colours[f] for f in faces}) != 1:
                continue
            ok = np.ones(counts.shape[:-1], dtype=bool)
            for f, k in zip(faces, sizes):
                ok &= counts[..., f] >= k
            dice_value = sum((f + 1) * k for f, k in zip(faces, sizes))
            best = np.where(ok, np.maximum(best, dice_value), best)
        present = best >= 0
        return np.where(present, _fixed_or(value, counts, np.maximum(best, 0)) + plus, 0)

    return score


def n_pairs(k: int, value="dice") -> Scorer:
    """``k`` pairs of different faces: the dice that make them (the best), or ``value``.

    >>> c = np.array([[1, 0, 0, 2, 2, 0], [0, 2, 0, 0, 2, 2]])   # 5-5-4-4-1, 2-2-5-5-6-6
    >>> n_pairs(1)(c).tolist(), n_pairs(2)(c).tolist(), n_pairs(3)(c).tolist()
    ([10, 12], [18, 22], [0, 26])
    """
    return groups((2,) * k, value)


def kind_plus(n: int, value="sum", *, plus: int = 0) -> Scorer:
    """At least ``n`` dice of one face: ``value`` (``"sum"``, ``"matching"``: n times the
    highest such face, or a number) plus ``plus``.

    >>> c = np.array([[0, 0, 3, 0, 1, 1], [0, 0, 0, 0, 0, 5]])   # 3-3-3-5-6, 6-6-6-6-6
    >>> kind_plus(3, "matching", plus=20)(c).tolist(), kind_plus(5, plus=50)(c).tolist()
    ([29, 38], [0, 80])
    """

    def score(counts: np.ndarray) -> np.ndarray:
        has = counts >= n
        top_face = np.where(has, _faces(counts), 0).max(axis=-1)
        return np.where(top_face > 0, _fixed_or(value, counts, n * top_face) + plus, 0)

    return score


def runs(points_by_run: dict[tuple[int, ...], int]) -> Scorer:
    """The points of the best run present among the given ones (Balut: 1-5 15, 2-6 20).

    >>> s = runs({(1, 2, 3, 4, 5): 15, (2, 3, 4, 5, 6): 20})
    >>> s(np.array([[1, 1, 1, 1, 1, 0], [0, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 1]])).tolist()
    [15, 20, 0]
    """
    items = tuple(points_by_run.items())

    def score(counts: np.ndarray) -> np.ndarray:
        present = counts > 0
        out = np.zeros(counts.shape[:-1], dtype=np.int64)
        for run, points in items:
            ok = present[..., [f - 1 for f in run]].all(axis=-1)
            out = np.where(ok, np.maximum(out, points), out)
        return out

    return score


def flush(colours: tuple[int, ...], points: int) -> Scorer:
    """``points`` if every die shows a face of one colour (Kismet's Flush).

    >>> kismet_colours = (0, 1, 2, 2, 1, 0)          # 1,6 black; 2,5 red; 3,4 green
    >>> flush(kismet_colours, 35)(np.array([[2, 0, 0, 0, 0, 3], [2, 0, 0, 0, 1, 2]])).tolist()
    [35, 0]
    """
    colours = np.asarray(colours)

    def score(counts: np.ndarray) -> np.ndarray:
        shown = counts > 0
        ok = np.zeros(counts.shape[:-1], dtype=bool)
        for c in np.unique(colours):
            ok |= ~(shown & (colours != c)).any(axis=-1)
        return np.where(ok, points, 0)

    return score


def same_colour_two_pairs(colours: tuple[int, ...]) -> Scorer:
    """Kismet's Two pairs same colour: two pairs whose four dice share one colour (two
    faces of that colour, or four of a kind): the sum of all dice.

    >>> kc = (0, 1, 2, 2, 1, 0)
    >>> c = np.array([[2, 0, 0, 0, 1, 2], [0, 0, 0, 0, 1, 4], [0, 2, 2, 0, 1, 0], [0, 0, 2, 3, 0, 0]])
    >>> same_colour_two_pairs(kc)(c).tolist()                 # 1-1-6-6-5, 6-6-6-6-5, 2-2-3-3-5, 3-3-4-4-4
    [19, 29, 0, 18]
    """
    pairs = groups((2, 2), "sum", colours=colours)
    four = of_a_kind(4)

    def score(counts: np.ndarray) -> np.ndarray:
        return np.maximum(pairs(counts), four(counts))

    return score


def served(scorer: Scorer, extra: int) -> Scorer:
    """``scorer`` plus ``extra`` when it scores and the dice are the turn's first throw.

    A ``Box(by_throw=True)`` scorer: called as ``score(counts, throws)``.

    >>> s = served(full_house("30"), 5)
    >>> c = np.array([[3, 2, 0, 0, 0, 0]] * 2 + [[1, 1, 1, 1, 1, 0]])
    >>> s(c, np.array([1, 2, 1])).tolist()
    [35, 30, 0]
    """

    def score(counts: np.ndarray, throws=None) -> np.ndarray:
        base = scorer(counts)
        first = np.asarray(throws if throws is not None else 0) == 1
        return np.where((base > 0) & first, base + extra, base)

    return score


def by_throw(scorer: Scorer, points: tuple[int, ...]) -> Scorer:
    """``points[t - 1]`` when ``scorer`` scores on throw t (Yamb's Kenta: 66, 56, 46).

    A ``Box(by_throw=True)`` scorer: called as ``score(counts, throws)``.

    >>> s = by_throw(straight(5, 1), (66, 56, 46))
    >>> s(np.array([[1, 1, 1, 1, 1, 0]] * 3), np.array([1, 2, 3])).tolist()
    [66, 56, 46]
    """
    table = np.asarray(points, dtype=np.int64)

    def score(counts: np.ndarray, throws=None) -> np.ndarray:
        t = np.asarray(throws if throws is not None else len(table), dtype=np.intp)
        return np.where(scorer(counts) > 0, table[np.clip(t, 1, len(table)) - 1], 0)

    return score
