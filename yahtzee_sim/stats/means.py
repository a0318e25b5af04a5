"""Confidence intervals for a mean (t interval) and for other statistics (bootstrap).

Both accept a 1-D sample or a :class:`~yahtzee_sim.results.SimulationResult`
(its final scores; the t interval then uses the run's exact aggregate, so it
works even for runs that kept no per-game data).
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..intervals import t_interval
from ._common import (Interval, check_choice, check_int, check_level, check_sample, check_seed, fmt,
                      is_simulation_result, pct, result_values)

__all__ = ["MeanCI", "BootstrapCI", "mean_ci", "bootstrap_ci", "BOOTSTRAP_METHODS"]

BOOTSTRAP_METHODS = ("auto", "BCa", "percentile", "basic")
_BCA_MAX_N = 10_000
"""Above this sample size "auto" uses the percentile method: scipy's BCa jackknife costs O(n^2)."""
_BATCH_ELEMENTS = 2_000_000
"""Resampled values held in memory at once (sets scipy's ``batch``)."""


@dataclass(frozen=True, repr=False)
class MeanCI(Interval):
    """A sample mean with its t confidence interval.

    Attributes
    ----------
    n : sample size.
    mean, sd, se : mean, standard deviation (ddof=1) and standard error ``sd / sqrt(n)``.
    low, high : the interval ``mean -/+ t_{level}(df) * se``.
    df : degrees of freedom, ``n - 1``.
    level : confidence level.
    """

    n: int
    mean: float
    sd: float
    se: float
    low: float
    high: float
    df: int
    level: float
    method: str = "t"

    _columns = ("n", "mean", "sd", "se", "low", "high", "half_width", "df", "level", "method")


    def _describe(self) -> str:
        return (f"t {pct(self.level)}: {fmt(self.mean)} [{fmt(self.low)}, {fmt(self.high)}]; "
                f"sd={fmt(self.sd)}, n={self.n}")


def mean_ci(x, *, level: float = 0.95) -> MeanCI:
    """t confidence interval for the mean of ``x`` (a sample or a SimulationResult).

    Student's sleep data (differences of the two drugs; R's ``t.test`` gives
    1.58, 95% CI 0.700 to 2.460):

    >>> ci = mean_ci([1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4])
    >>> round(ci.mean, 2), round(ci.low, 3), round(ci.high, 3)
    (1.58, 0.7, 2.46)

    >>> from yahtzee_sim import simulate
    >>> res = simulate("yahtzee", "keep-largest", 2000, seed=3)
    >>> ci = mean_ci(res)
    >>> bool(ci.low < res.summary()["mean"] < ci.high), ci.n
    (True, 2000)
    """
    level = check_level(level)
    if is_simulation_result(x):
        agg = x.aggregate
        n, mean = agg.n_games, agg.mean()
        if n < 2:
            raise ValueError(f"a t interval needs at least 2 games, the run has {n}")
        sd = math.sqrt(agg.var())
    else:
        arr = check_sample(x, min_n=2)
        n, mean, sd = arr.size, float(arr.mean()), float(arr.std(ddof=1))
    se = sd / math.sqrt(n)
    low, high = t_interval(mean, sd, n, level)
    return MeanCI(n=n, mean=mean, sd=sd, se=se, low=low, high=high, df=n - 1, level=level)


@dataclass(frozen=True, repr=False)
class BootstrapCI(Interval):
    """A statistic of a sample with its bootstrap confidence interval.

    Attributes
    ----------
    statistic : what was estimated (``"median"``, ``"p95"``, a function's name, ...).
    n : sample size.
    estimate : the statistic on the sample itself.
    low, high : the bootstrap interval.
    se : bootstrap standard error.
    level : confidence level.
    method : the method used (``"BCa"``, ``"percentile"`` or ``"basic"``).
    n_resamples : bootstrap resamples.
    seed : the entropy that reproduces the resamples (``None`` if a Generator was passed).
    note : why the method differs from the one asked for, if it does.
    """

    statistic: str
    n: int
    estimate: float
    low: float
    high: float
    se: float
    level: float
    method: str
    n_resamples: int
    seed: int | None
    note: str = ""


    def _describe(self) -> str:
        return (f"{self.statistic}, bootstrap {self.method} {pct(self.level)}: {fmt(self.estimate)} "
                f"[{fmt(self.low)}, {fmt(self.high)}]; n={self.n}, resamples={self.n_resamples}")


_PERCENTILE = re.compile(r"^p(\d+(?:\.\d+)?)$")


def _statistic(statistic):
    """(name, vectorized function f(x, axis), smooth?) for a statistic spec."""
    if callable(statistic):
        return getattr(statistic, "__name__", "statistic"), statistic, True
    valid = "mean, median, sd, iqr, pNN (a percentile such as p5 or p99.5) or a callable f(x, axis)"
    if not isinstance(statistic, str):
        raise ValueError(f"unknown statistic {statistic!r}; valid: {valid}")
    name = statistic.lower()
    if name == "mean":
        return name, np.mean, True
    if name == "sd":
        return name, lambda x, axis: np.std(x, axis=axis, ddof=1), True
    if name == "median":
        return name, lambda x, axis: np.quantile(x, 0.5, axis=axis, method="inverted_cdf"), False
    if name == "iqr":
        return name, lambda x, axis: np.subtract(*np.quantile(x, [0.75, 0.25], axis=axis, method="inverted_cdf")), False
    m = _PERCENTILE.match(name)
    if m and 0 <= float(m.group(1)) <= 100:
        q = float(m.group(1)) / 100
        return name, lambda x, axis: np.quantile(x, q, axis=axis, method="inverted_cdf"), False
    raise ValueError(f"unknown statistic {statistic!r}; valid: {valid}")


def bootstrap_ci(x, statistic="median", *, level: float = 0.95, n_resamples: int = 9999,
                 method: str = "auto", seed=None) -> BootstrapCI:
    """Bootstrap confidence interval (:func:`scipy.stats.bootstrap`) for a statistic of ``x``.

    Parameters
    ----------
    x : a 1-D sample or a SimulationResult (its final scores).
    statistic : ``"mean"``, ``"median"``, ``"sd"``, ``"iqr"``, ``"pNN"`` (a percentile,
        e.g. ``"p95"``; quantiles are inverted-CDF, as in ``SimulationResult.summary``)
        or a vectorized callable ``f(sample, axis)``.
    method : ``"BCa"``, ``"percentile"``, ``"basic"`` or ``"auto"``: BCa for smooth
        statistics on up to 10,000 values, percentile otherwise (quantiles of integer
        scores are step functions, where BCa breaks down, and BCa's jackknife costs
        O(n^2)). If BCa meets a degenerate bootstrap distribution the percentile
        interval of the same resamples is returned and ``note`` says so.
    seed : int, SeedSequence, Generator or None (fresh entropy, recorded in the result).

    Cost: ``n_resamples * n`` values are resampled (in batches of ~2 million).

    >>> from yahtzee_sim import simulate
    >>> res = simulate("yahtzee", "keep-largest", 2000, seed=3)
    >>> ci = bootstrap_ci(res, "p95", n_resamples=999, seed=1)
    >>> ci.estimate == res.summary()["p95"], bool(ci.low <= ci.estimate <= ci.high), ci.method
    (True, True, 'percentile')
    """
    level = check_level(level)
    n_resamples = check_int(n_resamples, "n_resamples", minimum=1)
    canonical = {m.lower(): m for m in BOOTSTRAP_METHODS}
    method = canonical[check_choice(method, "method", tuple(canonical))]
    name, func, smooth = _statistic(statistic)
    arr = result_values(x) if is_simulation_result(x) else check_sample(x, min_n=2)
    rng, entropy = check_seed(seed)
    if method == "auto":
        method = "BCa" if smooth and arr.size <= _BCA_MAX_N else "percentile"
    estimate = float(func(arr, axis=-1))
    batch = max(1, min(n_resamples, _BATCH_ELEMENTS // arr.size))
    common = dict(n_resamples=n_resamples, confidence_level=level, vectorized=True, batch=batch)
    note = ""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = stats.bootstrap((arr,), func, method=method, rng=rng, **common)
    degenerate = not (np.isfinite(res.confidence_interval.low) and np.isfinite(res.confidence_interval.high))
    if method == "BCa" and (degenerate or any(issubclass(w.category, RuntimeWarning) for w in caught)):
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            res = stats.bootstrap((arr,), func, method="percentile", bootstrap_result=res,
                                  **{**common, "n_resamples": 0})
        method, note = "percentile", "BCa was degenerate (ties); percentile interval of the same resamples"
    low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (np.isfinite(low) and np.isfinite(high)):
        # every resample gave the same value: the interval is that single value
        low = high = float(np.min(res.bootstrap_distribution))
        note = note or "all resamples gave the same value"
    return BootstrapCI(statistic=name, n=int(arr.size), estimate=estimate, low=low, high=high,
                       se=float(res.standard_error), level=level, method=method, n_resamples=n_resamples,
                       seed=entropy, note=note)
