"""Confidence intervals for proportions: one at a time (scipy's ``binomtest``) or many at once.

Methods (the names scipy uses, plus the usual textbook alias):

* ``"wilson"``: the Wilson score interval (good coverage, never outside [0, 1]);
* ``"clopper-pearson"`` (alias ``"exact"``): inverts the binomial test; coverage is
  at least the nominal level for every p (conservative);
* ``"wilsoncc"``: Wilson with continuity correction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..intervals import binomial_interval
from ._common import Interval, check_choice, check_counts, check_level, fmt, pct

__all__ = ["ProportionCI", "ProportionCIs", "proportion_ci", "proportion_cis", "PROPORTION_METHODS"]

PROPORTION_METHODS = ("wilson", "clopper-pearson", "exact", "wilsoncc")
_SCIPY_NAME = {"wilson": "wilson", "clopper-pearson": "exact", "exact": "exact", "wilsoncc": "wilsoncc"}


def _canonical(method: str) -> str:
    key = check_choice(method, "method", PROPORTION_METHODS)
    return "clopper-pearson" if key == "exact" else key


@dataclass(frozen=True, repr=False)
class ProportionCI(Interval):
    """A proportion ``k / n`` with its confidence interval.

    Attributes
    ----------
    k, n : successes and trials.
    estimate : ``k / n``.
    low, high : the interval's bounds.
    level : confidence level, e.g. 0.95.
    method : ``"wilson"``, ``"clopper-pearson"`` or ``"wilsoncc"``.
    """

    k: int
    n: int
    estimate: float
    low: float
    high: float
    level: float
    method: str

    _columns = ("k", "n", "estimate", "low", "high", "half_width", "level", "method")


    def _describe(self) -> str:
        return (f"{self.method} {pct(self.level)}: {fmt(self.estimate)} "
                f"[{fmt(self.low)}, {fmt(self.high)}]; k={self.k}, n={self.n}")


def proportion_ci(k, n, *, level: float = 0.95, method: str = "wilson") -> ProportionCI:
    """Confidence interval for a proportion ``k / n``, by :func:`scipy.stats.binomtest`.

    >>> ci = proportion_ci(460, 10_000)
    >>> round(ci.low, 4), round(ci.high, 4)
    (0.0421, 0.0503)
    >>> proportion_ci(0, 20, method="clopper-pearson").low
    0.0
    >>> proportion_ci(460, 10_000, level=0.99).to_frame().columns.tolist()[:3]
    ['k', 'n', 'estimate']
    """
    level = check_level(level)
    method = _canonical(method)
    k_arr, n_arr = check_counts(k, n)
    if k_arr.ndim != 0:
        raise ValueError("proportion_ci takes one k and one n; use proportion_cis for arrays")
    k_i, n_i = int(k_arr), int(n_arr)
    low, high = binomial_interval(k_i, n_i, level, _SCIPY_NAME[method])
    return ProportionCI(k=k_i, n=n_i, estimate=k_i / n_i, low=low, high=high,
                        level=level, method=method)


@dataclass(frozen=True, repr=False, eq=False)
class ProportionCIs(Interval):
    """Many proportions ``k[i] / n[i]`` with their confidence intervals (1-D arrays).

    ``labels`` (optional) name the rows of :meth:`to_frame`; ``res[i]`` is the
    :class:`ProportionCI` of row i.
    """

    k: np.ndarray
    n: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: float
    method: str
    labels: tuple | None = None

    def __len__(self) -> int:
        return len(self.k)

    def __getitem__(self, i: int) -> ProportionCI:
        return ProportionCI(k=int(self.k[i]), n=int(self.n[i]), estimate=float(self.estimate[i]),
                            low=float(self.low[i]), high=float(self.high[i]),
                            level=self.level, method=self.method)

    def to_dict(self) -> dict:
        return {"level": self.level, "method": self.method, "rows": len(self)}

    def to_frame(self) -> pd.DataFrame:
        """One row per proportion: k, n, estimate, low, high, half_width."""
        frame = pd.DataFrame({"k": self.k, "n": self.n, "estimate": self.estimate,
                              "low": self.low, "high": self.high, "half_width": self.half_width})
        if self.labels is not None:
            frame.index = pd.Index(list(self.labels), name="label")
        frame.attrs.update(level=self.level, method=self.method)
        return frame

    def _describe(self) -> str:
        return f"{len(self)} proportions, {self.method} {pct(self.level)}"


def proportion_cis(k, n, *, level: float = 0.95, method: str = "wilson", labels=None) -> ProportionCIs:
    """Confidence intervals for many proportions at once (``k`` and ``n`` broadcast).

    Wilson and Clopper-Pearson are computed in closed form on whole arrays (the
    Wilson score formula; Clopper-Pearson from beta quantiles); they agree with
    :func:`proportion_ci` to rounding. ``"wilsoncc"`` calls scipy once per row.

    >>> res = proportion_cis([46, 460, 4600], [1000, 10_000, 100_000], labels=["1k", "10k", "100k"])
    >>> [round(float(w), 4) for w in res.half_width]
    [0.0131, 0.0041, 0.0013]
    >>> int(res.to_frame().loc["10k", "k"]), res[1].method
    (460, 'wilson')
    """
    level = check_level(level)
    method = _canonical(method)
    k_arr, n_arr = check_counts(k, n)
    k_arr, n_arr = np.atleast_1d(k_arr).ravel(), np.atleast_1d(n_arr).ravel()
    if labels is not None:
        labels = tuple(labels)
        if len(labels) != len(k_arr):
            raise ValueError(f"labels has {len(labels)} entries for {len(k_arr)} proportions")
    alpha = 1 - level
    kf, nf = k_arr.astype(np.float64), n_arr.astype(np.float64)
    # here, not at the top: proportion_ci (intervals.binomial_interval) needs neither
    from scipy import special, stats

    if method == "wilson":
        z = special.ndtri(1 - alpha / 2)
        centre = (kf + z * z / 2) / (nf + z * z)
        half = z / (nf + z * z) * np.sqrt(kf * (nf - kf) / nf + z * z / 4)
        low, high = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    elif method == "clopper-pearson":
        # low = Beta(k, n-k+1) quantile alpha/2 (0 when k=0); high = Beta(k+1, n-k) quantile 1-alpha/2 (1 when k=n)
        low = np.where(k_arr == 0, 0.0, stats.beta.ppf(alpha / 2, np.maximum(kf, 1), nf - kf + 1))
        high = np.where(k_arr == n_arr, 1.0, stats.beta.ppf(1 - alpha / 2, kf + 1, np.maximum(nf - kf, 1)))
    else:
        rows = [stats.binomtest(int(a), int(b)).proportion_ci(confidence_level=level, method="wilsoncc")
                for a, b in zip(k_arr, n_arr)]
        low = np.array([r.low for r in rows], dtype=np.float64)
        high = np.array([r.high for r in rows], dtype=np.float64)
    return ProportionCIs(k=k_arr, n=n_arr, estimate=kf / nf, low=np.asarray(low, dtype=np.float64),
                         high=np.asarray(high, dtype=np.float64), level=level, method=method, labels=labels)
