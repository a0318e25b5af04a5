"""Chi-square goodness of fit of simulated counts against exact probabilities.

The categories must be exclusive and exhaustive (each simulated outcome counted
once; the probabilities sum to 1). Cells whose expected count is below
``min_expected`` (5 by default, the usual rule for the chi-square approximation)
are pooled before the test, either with their neighbours (``pool="adjacent"``,
for ordered categories such as scores) or all the small ones together
(``pool="smallest"``, for unordered categories such as patterns).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from ._common import StatsResult, check_choice, check_int, fmt

__all__ = ["GoodnessOfFit", "chisquare_gof", "POOL_METHODS"]

POOL_METHODS = ("adjacent", "smallest")
_SUM_TOLERANCE = 1e-6


@dataclass(frozen=True, repr=False, eq=False)
class GoodnessOfFit(StatsResult):
    """Result of :func:`chisquare_gof`.

    Attributes
    ----------
    statistic, dof, pvalue : Pearson's chi-square, its degrees of freedom
        (cells after pooling - 1 - ddof) and the p-value.
    n : total count.
    labels, observed, expected : the cells after pooling (expected = n * probability).
    n_cells : how many original cells each pooled cell holds.
    groups : for each original (kept) cell, the index of its pooled cell.
    cell_labels : the original cells' labels, in the order of ``groups``.
    min_expected, pool, ddof : the options used.
    """

    statistic: float
    dof: int
    pvalue: float
    n: int
    labels: tuple
    observed: np.ndarray
    expected: np.ndarray
    n_cells: np.ndarray
    groups: np.ndarray
    cell_labels: tuple
    min_expected: float
    pool: str
    ddof: int

    _columns = ("statistic", "dof", "pvalue", "n", "cells", "original_cells", "min_expected", "pool", "ddof")

    @property
    def cells(self) -> int:
        """Cells after pooling."""
        return len(self.labels)

    @property
    def original_cells(self) -> int:
        return len(self.groups)

    def to_frame(self) -> pd.DataFrame:
        """One row per pooled cell: observed, expected, probability, frequency, Pearson residual, contribution."""
        residual = (self.observed - self.expected) / np.sqrt(self.expected)
        frame = pd.DataFrame(
            {"n_cells": self.n_cells, "observed": self.observed, "expected": self.expected,
             "probability": self.expected / self.n, "frequency": self.observed / self.n,
             "residual": residual, "contribution": residual**2},
            index=pd.Index(list(self.labels), name="cell"),
        )
        frame.attrs.update(self.to_dict())
        return frame

    def summary_frame(self) -> pd.DataFrame:
        """The test itself as a one-row table (statistic, dof, p-value, ...)."""
        return pd.DataFrame([self.to_dict()])

    def _describe(self) -> str:
        return (f"chi2={fmt(self.statistic)}, dof={self.dof}, p={fmt(self.pvalue)}; n={self.n}, "
                f"{self.cells} cells (from {self.original_cells})")


def _align(observed, probabilities, labels):
    """Arrays of counts, probabilities and labels; pandas Series are aligned on their index."""
    if isinstance(observed, pd.Series) and isinstance(probabilities, pd.Series):
        if labels is not None:
            raise ValueError("labels come from the Series' index; do not pass labels= as well")
        index = probabilities.index.append(observed.index.difference(probabilities.index, sort=False))
        if not index.is_unique:
            raise ValueError("observed and probabilities must not repeat labels in their index")
        return (observed.reindex(index, fill_value=0).to_numpy(), probabilities.reindex(index, fill_value=0.0)
                .to_numpy(), tuple(index))
    if labels is None:
        labels = observed.index if isinstance(observed, pd.Series) else range(len(np.atleast_1d(observed)))
    return np.asarray(observed), np.asarray(probabilities), tuple(labels)


def _pool_adjacent(expected: np.ndarray, minimum: float) -> np.ndarray:
    """Group index per cell: runs of neighbours until each group expects >= minimum."""
    groups = np.empty(len(expected), dtype=np.int64)
    g, acc = 0, 0.0
    for i, e in enumerate(expected):  # loop over cells (not games): fine
        groups[i] = g
        acc += e
        if acc >= minimum:
            g, acc = g + 1, 0.0
    if groups[-1] == g and g > 0:  # an unfinished tail group (expects < minimum) joins the previous one
        groups[groups == g] = g - 1
    return groups


def _pool_smallest(expected: np.ndarray, minimum: float) -> np.ndarray:
    """Group index per cell: all small cells (and, if needed, the next smallest) in one group."""
    order = np.argsort(expected, kind="stable")
    m = int((expected < minimum).sum())
    if m:
        while m < len(expected) and expected[order[:m]].sum() < minimum:
            m += 1
    pooled = np.zeros(len(expected), dtype=bool)
    pooled[order[:m]] = True
    groups = np.empty(len(expected), dtype=np.int64)
    keep = np.flatnonzero(~pooled)
    groups[keep] = np.arange(len(keep))
    groups[pooled] = len(keep)  # the pooled group is the last cell
    if pooled.all():
        groups[:] = 0
    return groups


def _group_label(members: list, pool: str) -> object:
    if len(members) == 1:
        return members[0]
    if pool == "adjacent":
        return f"{members[0]}..{members[-1]}"
    if len(members) <= 3:
        return "+".join(str(m) for m in members)
    return f"other ({len(members)} cells)"


def chisquare_gof(observed, probabilities, *, labels=None, min_expected: float = 5.0,
                  pool: str = "adjacent", ddof: int = 0) -> GoodnessOfFit:
    """Chi-square goodness of fit (:func:`scipy.stats.chisquare`) after pooling small cells.

    Parameters
    ----------
    observed : counts per category (non-negative integers).
    probabilities : exact probability of each category (non-negative, summing to 1).
        If both are pandas Series they are aligned on their index (a missing count
        is 0, a missing probability is 0).
    labels : names of the categories (default: the Series index or 0..k-1).
    min_expected : pool until every cell expects at least this many (0 disables pooling).
    pool : ``"adjacent"`` (ordered categories) or ``"smallest"`` (unordered).
    ddof : parameters estimated from the data (reduces the degrees of freedom).

    Cells with probability 0 and count 0 are dropped. A count in a cell of
    probability 0 is pooled like any small cell; with pooling disabled it is an error.

    A fair die rolled 60 times (by hand: (4 + 4 + 1 + 1 + 9 + 9) / 10 = 2.8):

    >>> r = chisquare_gof([8, 12, 9, 11, 7, 13], [1 / 6] * 6, labels=range(1, 7))
    >>> round(r.statistic, 6), r.dof, bool(r.pvalue > 0.5)
    (2.8, 5, True)

    Small cells are pooled with their neighbours:

    >>> r = chisquare_gof([50, 30, 12, 5, 2, 1], [0.5, 0.3, 0.12, 0.05, 0.02, 0.01])
    >>> t = r.to_frame()
    >>> t.index.tolist(), t["n_cells"].tolist(), t["observed"].tolist(), t["expected"].round(9).tolist()
    ([0, 1, 2, '3..5'], [1, 1, 1, 3], [50.0, 30.0, 12.0, 8.0], [50.0, 30.0, 12.0, 8.0])
    """
    obs, prob, labels = _align(observed, probabilities, labels)
    if obs.ndim != 1 or obs.size == 0:
        raise ValueError(f"observed must be a non-empty 1-D sequence of counts, got shape {obs.shape}")
    if prob.shape != obs.shape:
        raise ValueError(f"observed has {obs.size} cells but probabilities has {prob.size}")
    if len(labels) != obs.size:
        raise ValueError(f"labels has {len(labels)} entries for {obs.size} cells")
    try:
        obs_f, prob = obs.astype(np.float64), prob.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("observed and probabilities must be numbers") from None
    if not np.isfinite(obs_f).all() or (obs_f != np.round(obs_f)).any() or obs.dtype == bool:
        raise ValueError("observed must hold whole-number counts")
    if (obs_f < 0).any():
        raise ValueError(f"observed counts must be >= 0, got {obs_f.min():g}")
    if not np.isfinite(prob).all() or (prob < 0).any():
        raise ValueError("probabilities must be finite and >= 0")
    if abs(prob.sum() - 1) > _SUM_TOLERANCE:
        raise ValueError(f"probabilities must sum to 1, got {prob.sum():.9g}")
    if isinstance(min_expected, bool) or not isinstance(min_expected, (int, float)) or not (
        math.isfinite(min_expected) and min_expected >= 0
    ):
        raise ValueError(f"min_expected must be a finite number >= 0, got {min_expected!r}")
    pool = check_choice(pool, "pool", POOL_METHODS)
    ddof = check_int(ddof, "ddof", minimum=0)
    n = int(obs_f.sum())
    if n == 0:
        raise ValueError("observed counts are all zero: nothing to test")

    keep = (prob > 0) | (obs_f > 0)
    obs_f, prob = obs_f[keep], prob[keep] / prob.sum()
    cell_labels = tuple(lab for lab, k in zip(labels, keep) if k)
    expected = n * prob
    if min_expected > 0:
        pooler = _pool_adjacent if pool == "adjacent" else _pool_smallest
        groups = pooler(expected, float(min_expected))
    else:
        groups = np.arange(len(expected))
    k = int(groups.max()) + 1
    obs_g = np.bincount(groups, weights=obs_f, minlength=k)
    exp_g = np.bincount(groups, weights=expected, minlength=k)
    n_cells = np.bincount(groups, minlength=k)
    bad = exp_g == 0
    if bad.any():
        where = [lab for lab, g in zip(cell_labels, groups) if bad[g]]
        raise ValueError(f"counts in cells of probability 0 ({', '.join(map(str, where[:5]))}): "
                         "the model rules them out; pool them (min_expected > 0) or fix the probabilities")
    dof = k - 1 - ddof
    if dof < 1:
        raise ValueError(f"only {k} cell(s) left after pooling to expected >= {min_expected:g} with ddof={ddof}: "
                         "no degrees of freedom; simulate more or lower min_expected")
    res = stats.chisquare(obs_g, exp_g, ddof=ddof)
    members: list[list] = [[] for _ in range(k)]
    for lab, g in zip(cell_labels, groups):  # loop over cells: fine
        members[g].append(lab)
    return GoodnessOfFit(
        statistic=float(res.statistic), dof=dof, pvalue=float(res.pvalue), n=n,
        labels=tuple(_group_label(m, pool) for m in members), observed=obs_g, expected=exp_g, n_cells=n_cells,
        groups=groups, cell_labels=cell_labels, min_expected=float(min_expected), pool=pool, ddof=ddof,
    )
