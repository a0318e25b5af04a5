"""Vectorized scoring functions: each maps face counts ``(R, F)`` to scores ``(R,)``.

A rule set's boxes are built from these small factories, so a new game is data
plus, at most, one more factory here.

>>> import numpy as np
>>> counts = np.array([[0, 0, 3, 0, 2, 0]])      # 3-3-3-5-5
>>> full_house("sum")(counts).tolist(), upper(3)(counts).tolist()
([19], [9])
"""

from __future__ import annotations

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
