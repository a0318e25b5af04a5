"""Sample-size planning: how many games for a confidence interval of a given half-width?

* :func:`plan_mean` -- "how many games for +/-0.1 points at 95%?" from a known sd
  or a pilot run. ``method="normal"`` is the textbook ``n = (z sd / h)^2``;
  ``method="t"`` (default) is the smallest n whose *t* interval is that narrow
  (slightly larger, since the t quantile exceeds z).
* :func:`plan_proportion` -- the same for a rate (e.g. the Yahtzee rate) given a
  guess of p: ``"normal"`` (Wald formula) or ``"wilson"`` (default: the smallest n
  whose Wilson interval at the guessed p is that narrow).

The half-width planned for is that of the interval *if the sd (or p) is as
assumed*; a pilot's sd is itself uncertain, and ``pilot_confidence`` plans on an
upper confidence bound of it instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import special, stats

from ._common import (StatsResult, check_choice, check_level, check_positive, check_sample, fmt,
                      is_simulation_result, pct)

__all__ = ["SampleSizePlan", "plan_mean", "plan_proportion"]


@dataclass(frozen=True, repr=False)
class SampleSizePlan(StatsResult):
    """A planned sample size.

    Attributes
    ----------
    quantity : ``"mean"`` or ``"proportion"``.
    n : the planned number of observations (games, turns, or pairs of games when
        the sd is that of paired differences).
    n_normal : what the plain normal formula gives (equals ``n`` for method "normal").
    half_width : the requested half-width.
    achieved_half_width : the half-width the chosen method gives at ``n`` (<= half_width).
    level : confidence level.
    method : ``"t"``, ``"normal"`` or ``"wilson"``.
    sd : the standard deviation planned with (NaN for a proportion).
    p : the proportion planned with (NaN for a mean).
    pilot_n : size of the pilot sample the sd came from (0 if the sd was given).
    pilot_sd : the pilot's own sd before any ``pilot_confidence`` inflation (NaN if none).
    """

    quantity: str
    n: int
    n_normal: int
    half_width: float
    achieved_half_width: float
    level: float
    method: str
    sd: float = math.nan
    p: float = math.nan
    pilot_n: int = 0
    pilot_sd: float = math.nan

    def _describe(self) -> str:
        about = f"sd={fmt(self.sd)}" if self.quantity == "mean" else f"p={fmt(self.p)}"
        if self.pilot_n:
            about += f" (pilot of {self.pilot_n})"
        return (f"n={self.n} for {self.quantity} +/-{fmt(self.half_width)} at {pct(self.level)} "
                f"({self.method}; normal formula {self.n_normal}), {about}")


def _smallest(ok, lo: int, hi: int) -> int:
    """Smallest n in (lo, hi] with ok(n), given ok is monotone and ok(hi) holds (bisection)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _ceil(x: float) -> int:
    """ceil that forgives floating-point fuzz just above an integer."""
    return math.ceil(x - 1e-9 * max(1.0, x))


def _pilot_sd(pilot) -> tuple[float, int]:
    from .compare import PairedComparison
    from .means import MeanCI

    if is_simulation_result(pilot):
        agg = pilot.aggregate
        if agg.n_games < 2:
            raise ValueError(f"the pilot run needs at least 2 games, it has {agg.n_games}")
        return math.sqrt(agg.var()), agg.n_games
    if isinstance(pilot, PairedComparison):
        return pilot.sd_diff, pilot.n
    if isinstance(pilot, MeanCI):
        return pilot.sd, pilot.n
    arr = check_sample(pilot, "pilot", min_n=2)
    return float(arr.std(ddof=1)), arr.size


def plan_mean(half_width: float, *, sd: float | None = None, pilot=None, level: float = 0.95,
              method: str = "t", pilot_confidence: float | None = None) -> SampleSizePlan:
    """Games needed for a confidence interval of the mean score of +/- ``half_width``.

    Give the spread either as ``sd`` or as a ``pilot``: a sample, a SimulationResult,
    a :class:`~yahtzee_sim.stats.MeanCI`, or a :class:`~yahtzee_sim.stats.PairedComparison`
    (then n counts pairs of games, planned on the sd of the paired differences).
    ``pilot_confidence`` (e.g. 0.8) plans on the one-sided upper confidence bound of
    the pilot's sd, ``sd * sqrt((m - 1) / chi2_{1 - c}(m - 1))``, so the interval
    will be narrow enough with probability about ``pilot_confidence``.

    Known sd 40, +/-1 point at 95%: (1.959964 * 40 / 1)^2 = 6146.3 -> 6147 games
    by the normal formula; the t interval needs a couple more:

    >>> p = plan_mean(1.0, sd=40)
    >>> p.n_normal, p.n, bool(p.achieved_half_width <= 1.0)
    (6147, 6149, True)
    >>> from yahtzee_sim import simulate
    >>> plan_mean(1.0, pilot=simulate("yahtzee", "keep-largest", 1000, seed=2)).pilot_n
    1000
    """
    half_width = check_positive(half_width, "half_width")
    level = check_level(level)
    method = check_choice(method, "method", ("t", "normal"))
    if (sd is None) == (pilot is None):
        raise ValueError("give exactly one of sd= (a known standard deviation) or pilot= (a pilot sample)")
    pilot_n, pilot_sd = 0, math.nan
    if pilot is not None:
        pilot_sd, pilot_n = _pilot_sd(pilot)
        if not pilot_sd > 0:
            raise ValueError("the pilot has zero spread (all values equal): it cannot size a plan; give sd=")
        sd = pilot_sd
        if pilot_confidence is not None:
            pilot_confidence = check_level(pilot_confidence, "pilot_confidence")
            sd *= math.sqrt((pilot_n - 1) / stats.chi2.ppf(1 - pilot_confidence, pilot_n - 1))
    else:
        sd = check_positive(sd, "sd")
        if pilot_confidence is not None:
            raise ValueError("pilot_confidence needs pilot=; with a known sd there is nothing to bound")
    q = 0.5 + level / 2
    z = float(special.ndtri(q))
    n_normal = max(1, _ceil((z * sd / half_width) ** 2))
    if method == "normal":
        n, achieved = n_normal, z * sd / math.sqrt(n_normal)
    else:
        def hw(m: int) -> float:
            return float(stats.t.ppf(q, m - 1)) * sd / math.sqrt(m)

        start = max(2, n_normal)  # the t interval is wider than the normal one: never fewer games
        if hw(start) <= half_width:
            n = start
        else:  # one t-corrected step lands on a sufficient n (t shrinks as n grows), then bisect down
            hi = max(start + 1, _ceil((float(stats.t.ppf(q, start - 1)) * sd / half_width) ** 2))
            n = _smallest(lambda m: hw(m) <= half_width, start, hi)
        achieved = hw(n)
    return SampleSizePlan(quantity="mean", n=n, n_normal=n_normal, half_width=half_width,
                          achieved_half_width=achieved, level=level, method=method, sd=sd,
                          pilot_n=pilot_n, pilot_sd=pilot_sd)


def _wilson_half_width(p: float, n: int, z: float) -> float:
    """Half-width of the Wilson interval when the observed share is exactly ``p``."""
    return z / (n + z * z) * math.sqrt(n * p * (1 - p) + z * z / 4)


def plan_proportion(p: float, half_width: float, *, level: float = 0.95, method: str = "wilson") -> SampleSizePlan:
    """Observations needed to estimate a proportion near ``p`` to +/- ``half_width``.

    ``p`` is a guess (0.5 is the worst case for the normal formula). With
    ``"wilson"``, ``half_width`` is half the Wilson interval's width (the interval
    is not symmetric about p).

    The Yahtzee rate of about 4.6% per turn to +/-0.1 percentage point at 95%:
    1.959964^2 * 0.046 * 0.954 / 0.001^2 = 168578.6 -> 168579 turns (Wald).

    >>> plan_proportion(0.046, 0.001, method="normal").n
    168579
    >>> p = plan_proportion(0.046, 0.001)
    >>> bool(abs(p.n - p.n_normal) < 100), bool(p.achieved_half_width <= 0.001)
    (True, True)
    """
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
        raise ValueError(f"p must be a proportion strictly between 0 and 1, got {p!r}")
    half_width = check_positive(half_width, "half_width")
    if half_width >= 1:
        raise ValueError(f"half_width of a proportion must be below 1, got {half_width!r}")
    level = check_level(level)
    method = check_choice(method, "method", ("wilson", "normal"))
    z = float(special.ndtri(0.5 + level / 2))
    n_normal = max(1, _ceil(z * z * p * (1 - p) / half_width**2))
    if method == "normal":
        n, achieved = n_normal, z * math.sqrt(p * (1 - p) / n_normal)
    else:  # the Wilson half-width falls as n grows: double until enough, then bisect
        def ok(m: int) -> bool:
            return _wilson_half_width(p, m, z) <= half_width

        hi = max(1, n_normal)
        while not ok(hi):
            hi *= 2
        n = hi if hi == 1 else _smallest(ok, 0, hi)
        achieved = _wilson_half_width(p, n, z)
    return SampleSizePlan(quantity="proportion", n=n, n_normal=n_normal, half_width=half_width,
                          achieved_half_width=achieved, level=level, method=method, p=float(p))
