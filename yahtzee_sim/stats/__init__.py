"""Statistics for simulated games, on :mod:`scipy.stats` wherever it has the method.

=====================================  ==============================================
Question                               Function -> result object
=====================================  ==============================================
How sure is this rate?                 :func:`proportion_ci` -> :class:`ProportionCI`
... for many rates at once?            :func:`proportion_cis` -> :class:`ProportionCIs`
How sure is this mean?                 :func:`mean_ci` -> :class:`MeanCI` (t interval)
... this median / p95 / sd?            :func:`bootstrap_ci` -> :class:`BootstrapCI`
Is A better than B (same seeds)?       :func:`paired_compare`, :func:`compare_results`
                                       -> :class:`PairedComparison`
Is A better than B (independent)?      :func:`two_sample_compare`, ``compare_results(paired=False)``
                                       -> :class:`TwoSampleComparison`
Do simulated counts fit exact odds?    :func:`chisquare_gof` -> :class:`GoodnessOfFit`
How many games do I need?              :func:`plan_mean`, :func:`plan_proportion`
                                       -> :class:`SampleSizePlan`
=====================================  ==============================================

Every result is a frozen dataclass with ``to_dict()``, ``to_frame()`` (one row, or
one row per cell/proportion) and a one-line ``repr``. Options after the data are
keyword-only; ``level`` is the confidence level (default 0.95). Bad input raises
``ValueError`` with a one-line message before any work is done.

>>> from yahtzee_sim import simulate
>>> from yahtzee_sim.stats import compare_results, plan_mean
>>> a = simulate("yahtzee", "keep-largest", 2000, seed=5)
>>> b = simulate("yahtzee", "random", 2000, seed=5)
>>> r = compare_results(a, b)
>>> bool(r.low > 0), r.n
(True, 2000)
>>> plan_mean(r.half_width / 2, pilot=r).n > r.n
True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# each name from its module when first asked for: most of these modules import scipy.stats
# (most of a second), which the paired interval alone (the benchmark's) does not need
_HOME = {
    "ProportionCI": "proportions", "ProportionCIs": "proportions", "proportion_ci": "proportions",
    "proportion_cis": "proportions",
    "MeanCI": "means", "BootstrapCI": "means", "mean_ci": "means", "bootstrap_ci": "means",
    "PairedComparison": "compare", "TwoSampleComparison": "compare", "paired_compare": "compare",
    "paired_t_interval": "compare", "two_sample_compare": "compare", "compare_results": "compare",
    "GoodnessOfFit": "gof", "chisquare_gof": "gof",
    "SampleSizePlan": "planning", "plan_mean": "planning", "plan_proportion": "planning",
}

__all__ = [
    "ProportionCI", "ProportionCIs", "proportion_ci", "proportion_cis",
    "MeanCI", "BootstrapCI", "mean_ci", "bootstrap_ci",
    "PairedComparison", "TwoSampleComparison", "paired_compare", "paired_t_interval", "two_sample_compare",
    "compare_results",
    "GoodnessOfFit", "chisquare_gof",
    "SampleSizePlan", "plan_mean", "plan_proportion",
]

if TYPE_CHECKING:
    from .compare import (PairedComparison, TwoSampleComparison, compare_results, paired_compare,
                          paired_t_interval, two_sample_compare)
    from .gof import GoodnessOfFit, chisquare_gof
    from .means import BootstrapCI, MeanCI, bootstrap_ci, mean_ci
    from .planning import SampleSizePlan, plan_mean, plan_proportion
    from .proportions import ProportionCI, ProportionCIs, proportion_ci, proportion_cis


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
