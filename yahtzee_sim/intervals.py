"""The interval arithmetic shared by result objects and :mod:`yahtzee_sim.stats`.

A bottom-layer module: plain numbers in, bounds out, no result objects. It exists so
that :mod:`yahtzee_sim.results` and :mod:`yahtzee_sim.stats` need not import each
other; scipy is imported only when an interval is computed (start-up stays fast).

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
    from scipy import stats

    low, high = stats.t.interval(level, n - 1, loc=mean, scale=se)
    return float(low), float(high)


def binomial_interval(k: int, n: int, level: float, method: str = "wilson") -> tuple[float, float]:
    """Confidence interval of a proportion ``k / n`` by :func:`scipy.stats.binomtest`.

    ``method`` is scipy's name: ``"wilson"``, ``"exact"`` (Clopper-Pearson) or ``"wilsoncc"``.

    >>> low, high = binomial_interval(460, 10_000, 0.95)
    >>> round(low, 4), round(high, 4)
    (0.0421, 0.0503)
    """
    from scipy import stats

    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method=method)
    return float(ci.low), float(ci.high)
