"""The interval arithmetic shared by result objects and :mod:`yahtzee_sim.stats`.

A bottom-layer module: plain numbers in, bounds out, no result objects. It exists so
that :mod:`yahtzee_sim.results` and :mod:`yahtzee_sim.stats` need not import each
other; scipy is imported only when an interval is computed, and its light part
(``scipy.special``, 0.2 s) where that is enough rather than ``scipy.stats`` (1.2 s).

>>> low, high = t_interval(1.58, 1.23, 10, 0.95)
>>> round(low, 2), round(high, 2)
(0.7, 2.46)
"""

from __future__ import annotations

import math
import numbers

__all__ = ["check_level", "t_interval", "binomial_interval"]


def check_level(level, name: str = "level") -> float:
    """A confidence level strictly between 0 and 1, else a one-line ``ValueError``.

    >>> check_level(0.95)
    0.95
    >>> check_level(95)
    Traceback (most recent call last):
    ...
    ValueError: level must be a number strictly between 0 and 1 (e.g. 0.95), got 95
    """
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < float(level) < 1:
        raise ValueError(f"{name} must be a number strictly between 0 and 1 (e.g. 0.95), got {level!r}")
    return float(level)


def t_interval(mean: float, sd: float, n: int, level: float) -> tuple[float, float]:
    """Student t interval ``mean -/+ t_{level}(n - 1) * sd / sqrt(n)`` (``n >= 2``).

    A zero standard deviation gives the point ``(mean, mean)``.

    >>> t_interval(3.0, 0.0, 5, 0.95)
    (3.0, 3.0)
    """
    se = sd / math.sqrt(n)
    if se == 0:
        return mean, mean
    # scipy.stats.t.interval's own arithmetic (its t quantile is scipy.special.stdtrit, then
    # times the scale plus the location, in float64): the same bits without importing
    # scipy.stats, about a second of every command's start
    from scipy.special import stdtrit

    scale, loc = float(se), float(mean)
    low = float(stdtrit(n - 1, (1.0 - level) / 2)) * scale + loc
    high = float(stdtrit(n - 1, (1.0 + level) / 2)) * scale + loc
    return low, high


def binomial_interval(k: int, n: int, level: float, method: str = "wilson") -> tuple[float, float]:
    """Confidence interval of a proportion ``k / n`` by :func:`scipy.stats.binomtest`.

    ``method`` is scipy's name: ``"wilson"``, ``"exact"`` (Clopper-Pearson) or ``"wilsoncc"``.

    >>> low, high = binomial_interval(460, 10_000, 0.95)
    >>> round(low, 4), round(high, 4)
    (0.0421, 0.0503)
    """
    k, n = int(k), int(n)
    if method == "wilson" and 0 <= k <= n and n > 0 and 0 < level < 1:
        return _wilson(k, n, level)
    from scipy import stats

    ci = stats.binomtest(k, n).proportion_ci(confidence_level=level, method=method)
    return float(ci.low), float(ci.high)


def _wilson(k: int, n: int, level: float) -> tuple[float, float]:
    """The two-sided Wilson interval exactly as ``scipy.stats.binomtest(k, n).proportion_ci(level,
    method="wilson")`` computes it (Newcombe 1998, its formula and order of operations: the
    same bits), without importing scipy.stats.

    >>> _wilson(0, 10, 0.95)[0], round(_wilson(10, 10, 0.95)[0], 4)
    (0.0, 0.7225)
    """
    from scipy.special import ndtri

    p = k / n
    z = ndtri(0.5 + 0.5 * level)
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    q = 1 - p
    delta = z / denom * math.sqrt(4 * n * p * q + z**2)
    low = 0.0 if k == 0 else center - delta
    high = 1.0 if k == n else center + delta
    return float(low), float(high)
