"""Comparing two strategies (or rule sets): paired on common random numbers, or not.

Two runs of :func:`yahtzee_sim.simulate` with the same seed play game i on the
same dice tape, so their scores are *paired*: game i of run A and game i of run B
share luck. The paired t interval on the per-game differences then removes the
shared part of the noise. :class:`PairedComparison` reports how much that saved:
``variance_ratio`` is the variance of the unpaired estimate of the difference over
that of the paired one, i.e. how many times more games per strategy an unpaired
comparison would need for the same precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._common import (Interval, GAME_COLUMNS, check_choice, check_level, check_sample, fmt,
                      is_simulation_result, pct, result_values)

__all__ = ["PairedComparison", "TwoSampleComparison", "paired_compare", "paired_t_interval",
           "two_sample_compare", "compare_results"]

# scipy.stats is imported where a test or a correlation is computed (it takes most of a
# second): the paired interval alone, all the benchmark prints, needs scipy.special only.


def _ratio(num: float, den: float) -> float:
    if den > 0:
        return num / den
    return math.inf if num > 0 else math.nan


def _labels(labels) -> tuple[str, str]:
    try:
        a, b = labels
    except (TypeError, ValueError):
        raise ValueError(f"labels must be a pair of names, got {labels!r}") from None
    return str(a), str(b)


@dataclass(frozen=True, repr=False)
class PairedComparison(Interval):
    """Mean difference ``a - b`` of paired observations, with what the pairing saved.

    Attributes
    ----------
    label_a, label_b : names of the two sides.
    n : number of pairs.
    mean_a, mean_b, sd_a, sd_b : each side's mean and sd (ddof=1).
    diff : mean of ``a - b``; ``sd_diff``, ``se_diff`` its sd and standard error.
    low, high, level, df : paired t interval for the mean difference (df = n - 1).
    statistic, pvalue : paired t test of "no difference" (:func:`scipy.stats.ttest_rel`).
    correlation, corr_low, corr_high : Pearson correlation of a and b with its CI.
    variance_ratio : ``(var_a + var_b) / var(a - b)``: the unpaired variance of the
        difference over the paired one. > 1 means pairing helped; it is the
        equivalent sample-size factor (an unpaired comparison needs that many
        times the games per side for the same interval width).
    unpaired_half_width : half-width of the Welch interval had the same data been unpaired.
    """

    label_a: str
    label_b: str
    n: int
    mean_a: float
    mean_b: float
    sd_a: float
    sd_b: float
    diff: float
    sd_diff: float
    se_diff: float
    low: float
    high: float
    level: float
    df: int
    statistic: float
    pvalue: float
    correlation: float
    corr_low: float
    corr_high: float
    variance_ratio: float
    unpaired_half_width: float

    _columns = ("label_a", "label_b", "n", "mean_a", "mean_b", "diff", "low", "high", "half_width", "level",
                "sd_diff", "se_diff", "df", "statistic", "pvalue", "sd_a", "sd_b", "correlation", "corr_low",
                "corr_high", "variance_ratio", "unpaired_half_width")


    def _describe(self) -> str:
        return (f"{self.label_a} - {self.label_b}: {fmt(self.diff)} [{fmt(self.low)}, {fmt(self.high)}] "
                f"paired t {pct(self.level)}, n={self.n}, r={fmt(self.correlation)}, "
                f"variance ratio={fmt(self.variance_ratio)}")


def paired_t_interval(a, b, *, level: float = 0.95) -> tuple[float, float, float]:
    """The mean of the differences ``a - b`` of paired samples and its paired t interval:
    ``(diff, low, high)``, the numbers of ``scipy.stats.ttest_rel(a, b).confidence_interval(level)``
    computed as scipy 1.17 computes them (its mean, its centred second moment times
    n / (n - 1), Student's quantile from ``scipy.special.stdtrit``), without importing
    scipy.stats. Differences all equal give the interval of that one value.

    Student's sleep data (R: ``t.test(extra ~ group, data = sleep, paired = TRUE)``:
    -1.58, 95% CI -2.460 to -0.700):

    >>> g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    >>> g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    >>> [round(v, 3) for v in paired_t_interval(g1, g2)]
    [-1.58, -2.46, -0.7]
    """
    from scipy import special

    level = check_level(level)
    x = check_sample(a, "a", min_n=2)
    y = check_sample(b, "b", min_n=2)
    if x.size != y.size:
        raise ValueError(f"paired samples must have the same length, got {x.size} and {y.size}")
    d = x - y
    n = d.size
    diff = d.mean()
    if not float(d.std(ddof=1)) > 0:    # every pair differs by the same amount
        return float(diff), float(diff), float(diff)
    var = np.mean((d - d.mean(keepdims=True)) ** 2) * (np.float64(n) / (np.float64(n) - 1))
    se = np.sqrt(var / n)
    tail = (1 - np.float64(level)) / 2
    q = special.stdtrit(np.int64(n - 1), np.stack((tail, 1 - tail)))
    return float(diff), float(q[0] * se + diff), float(q[1] * se + diff)


def paired_compare(a, b, *, level: float = 0.95, labels=("a", "b")) -> PairedComparison:
    """Paired comparison of two equally long samples (game i of ``a`` with game i of ``b``).

    Student's sleep data (R: ``t.test(extra ~ group, data = sleep, paired = TRUE)``
    gives a difference of -1.58, 95% CI -2.460 to -0.700, t = -4.0621, p = 0.002833):

    >>> g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    >>> g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    >>> r = paired_compare(g1, g2)
    >>> round(r.diff, 2), round(r.low, 3), round(r.high, 3), round(r.pvalue, 6)
    (-1.58, -2.46, -0.7, 0.002833)
    >>> bool(r.variance_ratio > 1)  # the two drugs' effects are correlated within patients
    True
    """
    level = check_level(level)
    label_a, label_b = _labels(labels)
    x = check_sample(a, "a", min_n=2)
    y = check_sample(b, "b", min_n=2)
    if x.size != y.size:
        raise ValueError(f"paired samples must have the same length, got {x.size} and {y.size}")
    n = x.size
    d = x - y
    diff, sd_diff = float(d.mean()), float(d.std(ddof=1))
    se_diff = sd_diff / math.sqrt(n)
    from scipy import stats

    if sd_diff > 0:
        res = stats.ttest_rel(x, y)
        _, low, high = paired_t_interval(x, y, level=level)        # its interval, as scipy gives it
        statistic, pvalue = float(res.statistic), float(res.pvalue)
    else:  # every pair differs by the same amount: the interval collapses to it
        low = high = diff
        statistic = math.copysign(math.inf, diff) if diff else math.nan
        pvalue = 0.0 if diff else 1.0
    sd_a, sd_b = float(x.std(ddof=1)), float(y.std(ddof=1))
    if sd_a > 0 and sd_b > 0:
        pr = stats.pearsonr(x, y)
        corr = float(pr.statistic)
        if n > 3 and abs(corr) < 1:
            cci = pr.confidence_interval(level)
            corr_low, corr_high = float(cci.low), float(cci.high)
        else:
            corr_low = corr_high = corr if abs(corr) == 1 else math.nan
    else:
        corr = corr_low = corr_high = math.nan
    var_unpaired = sd_a**2 + sd_b**2
    unpaired = _welch_from_stats(float(x.mean()), sd_a**2, n, float(y.mean()), sd_b**2, n, level)
    return PairedComparison(
        label_a=label_a, label_b=label_b, n=n, mean_a=float(x.mean()), mean_b=float(y.mean()), sd_a=sd_a,
        sd_b=sd_b, diff=diff, sd_diff=sd_diff, se_diff=se_diff, low=low, high=high, level=level, df=n - 1,
        statistic=statistic, pvalue=pvalue, correlation=corr, corr_low=corr_low, corr_high=corr_high,
        variance_ratio=_ratio(var_unpaired, sd_diff**2), unpaired_half_width=(unpaired["high"] - unpaired["low"]) / 2,
    )


@dataclass(frozen=True, repr=False)
class TwoSampleComparison(Interval):
    """Difference of means ``a - b`` of two independent samples (Welch), optionally Mann-Whitney.

    Attributes
    ----------
    label_a, label_b : names of the two sides.
    n_a, n_b, mean_a, mean_b, sd_a, sd_b : each sample's size, mean and sd (ddof=1).
    diff, se : difference of means and its standard error ``sqrt(var_a/n_a + var_b/n_b)``.
    low, high, level, df : Welch t interval (Welch-Satterthwaite df).
    statistic, pvalue : Welch t test of "equal means".
    mw_statistic, mw_pvalue : Mann-Whitney U of ``a`` and its two-sided p-value (NaN unless asked).
    prob_a_greater : ``U / (n_a n_b)`` = P(A > B) + P(A = B) / 2 for one game of each (NaN unless asked).
    """

    label_a: str
    label_b: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    sd_a: float
    sd_b: float
    diff: float
    se: float
    low: float
    high: float
    level: float
    df: float
    statistic: float
    pvalue: float
    mw_statistic: float = math.nan
    mw_pvalue: float = math.nan
    prob_a_greater: float = math.nan
    method: str = "welch"

    _columns = ("label_a", "label_b", "n_a", "n_b", "mean_a", "mean_b", "diff", "low", "high", "half_width",
                "level", "se", "df", "statistic", "pvalue", "sd_a", "sd_b", "mw_statistic", "mw_pvalue",
                "prob_a_greater", "method")


    def _describe(self) -> str:
        text = (f"{self.label_a} - {self.label_b}: {fmt(self.diff)} [{fmt(self.low)}, {fmt(self.high)}] "
                f"Welch {pct(self.level)}, n={self.n_a}+{self.n_b}")
        if not math.isnan(self.prob_a_greater):
            text += f", P(a>b)+P(a=b)/2={fmt(self.prob_a_greater)}"
        return text


def _welch_from_stats(mean_a, var_a, n_a, mean_b, var_b, n_b, level) -> dict:
    """Welch interval and test from summary numbers (scipy's ``ttest_ind_from_stats`` for t, p)."""
    diff = mean_a - mean_b
    va, vb = var_a / n_a, var_b / n_b
    se = math.sqrt(va + vb)
    if se == 0:
        return dict(diff=diff, se=0.0, df=math.nan, low=diff, high=diff,
                    statistic=math.copysign(math.inf, diff) if diff else math.nan, pvalue=0.0 if diff else 1.0)
    from scipy import stats

    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    half = float(stats.t.ppf(0.5 + level / 2, df)) * se
    res = stats.ttest_ind_from_stats(mean_a, math.sqrt(var_a), n_a, mean_b, math.sqrt(var_b), n_b, equal_var=False)
    return dict(diff=diff, se=se, df=df, low=diff - half, high=diff + half,
                statistic=float(res.statistic), pvalue=float(res.pvalue))


def _two_sample_from_stats(label_a, label_b, n_a, mean_a, var_a, n_b, mean_b, var_b, level, mw=None):
    w = _welch_from_stats(mean_a, var_a, n_a, mean_b, var_b, n_b, level)
    extra = {}
    if mw is not None:
        extra = dict(mw_statistic=float(mw.statistic), mw_pvalue=float(mw.pvalue),
                     prob_a_greater=float(mw.statistic) / (n_a * n_b))
    return TwoSampleComparison(label_a=label_a, label_b=label_b, n_a=n_a, n_b=n_b, mean_a=mean_a, mean_b=mean_b,
                               sd_a=math.sqrt(var_a), sd_b=math.sqrt(var_b), level=level, **w, **extra)


def two_sample_compare(a, b, *, level: float = 0.95, mann_whitney: bool = False,
                       labels=("a", "b")) -> TwoSampleComparison:
    """Welch comparison of two independent samples (any sizes), optionally with Mann-Whitney U.

    Student's sleep data treated as unpaired (R: ``t.test(extra ~ group, data = sleep)``
    gives 95% CI -3.3654832 to 0.2054832, df = 17.776):

    >>> g1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
    >>> g2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]
    >>> r = two_sample_compare(g1, g2, mann_whitney=True)
    >>> round(r.low, 4), round(r.high, 4), round(r.df, 3)
    (-3.3655, 0.2055, 17.776)
    >>> bool(r.prob_a_greater < 0.5)
    True
    """
    level = check_level(level)
    label_a, label_b = _labels(labels)
    x = check_sample(a, "a", min_n=2)
    y = check_sample(b, "b", min_n=2)
    from scipy import stats

    mw = stats.mannwhitneyu(x, y) if mann_whitney else None
    var_a, var_b = float(x.var(ddof=1)), float(y.var(ddof=1))
    if var_a > 0 or var_b > 0:  # scipy's Welch test with its own interval
        res = stats.ttest_ind(x, y, equal_var=False)
        ci = res.confidence_interval(level)
        extra = {}
        if mw is not None:
            extra = dict(mw_statistic=float(mw.statistic), mw_pvalue=float(mw.pvalue),
                         prob_a_greater=float(mw.statistic) / (x.size * y.size))
        return TwoSampleComparison(
            label_a=label_a, label_b=label_b, n_a=x.size, n_b=y.size, mean_a=float(x.mean()),
            mean_b=float(y.mean()), sd_a=math.sqrt(var_a), sd_b=math.sqrt(var_b),
            diff=float(x.mean() - y.mean()), se=math.sqrt(var_a / x.size + var_b / y.size), low=float(ci.low),
            high=float(ci.high), level=level, df=float(res.df), statistic=float(res.statistic),
            pvalue=float(res.pvalue), **extra)
    return _two_sample_from_stats(label_a, label_b, x.size, float(x.mean()), var_a, y.size, float(y.mean()),
                                  var_b, level, mw)


# -- SimulationResult objects ---------------------------------------------------------

TAPE_LAYOUT = ("n_boxes", "n_rolls", "n_dice", "n_faces")


def _result_labels(a, b) -> tuple[str, str]:
    if a.rules.key == b.rules.key:
        la, lb = a.strategy, b.strategy
    elif a.strategy == b.strategy:
        la, lb = a.rules.key, b.rules.key
    else:
        la, lb = f"{a.strategy} on {a.rules.key}", f"{b.strategy} on {b.rules.key}"
    return (la, lb) if la != lb else (f"{la} (a)", f"{lb} (b)")


def compare_results(a, b, *, paired: bool = True, column: str = "total", level: float = 0.95,
                    mann_whitney: bool = False):
    """Compare two :func:`~yahtzee_sim.simulate` runs: ``a - b`` on per-game ``column``.

    ``paired=True`` (the default) needs common random numbers: the same seed, the
    same number of games, per-game data kept, and rule sets with the same dice-tape
    layout (boxes, rolls, dice, faces); anything else is a ``ValueError`` saying
    what to rerun. It returns a :class:`PairedComparison`. ``paired=False`` returns
    a :class:`TwoSampleComparison` (Welch; for totals this uses the exact aggregates,
    so runs that kept no per-game data work too).

    ``column``: one of total, upper_total, upper_bonus, five_bonus_count, five_count.

    >>> from yahtzee_sim import simulate
    >>> a = simulate("yacht", "keep-largest", 2000, seed=11)
    >>> b = simulate("yacht", "keep-largest", 2000, seed=11, options=["no-bonus"])
    >>> r = compare_results(a, b)
    >>> r.label_a, r.label_b
    ('yacht', 'yacht+no-bonus')
    >>> bool(r.variance_ratio > 10), bool(r.half_width < r.unpaired_half_width)
    (True, True)
    """
    level = check_level(level)
    check_choice(column, "column", GAME_COLUMNS)
    for name, res in (("a", a), ("b", b)):
        if not is_simulation_result(res):
            raise ValueError(f"{name} must be a SimulationResult from yahtzee_sim.simulate, got {type(res).__name__}")
    labels = _result_labels(a, b)
    if not paired:
        if column == "total" and not mann_whitney:
            ga, gb = a.aggregate, b.aggregate
            if min(ga.n_games, gb.n_games) < 2:
                raise ValueError("each run needs at least 2 games for a Welch comparison")
            return _two_sample_from_stats(*labels, ga.n_games, ga.mean(), ga.var(), gb.n_games, gb.mean(),
                                          gb.var(), level)
        return two_sample_compare(result_values(a, column), result_values(b, column), level=level,
                                  mann_whitney=mann_whitney, labels=labels)
    if mann_whitney:
        raise ValueError("mann_whitney applies to unpaired comparisons; pass paired=False")
    if a.seed != b.seed:
        raise ValueError(f"paired comparison needs common random numbers, but the runs have seeds {a.seed} and "
                         f"{b.seed}; rerun both with the same seed, or pass paired=False")
    if a.n_games != b.n_games:
        raise ValueError(f"paired comparison needs the same number of games, got {a.n_games} and {b.n_games}")
    layout_a = tuple(getattr(a.rules, f) for f in TAPE_LAYOUT)
    layout_b = tuple(getattr(b.rules, f) for f in TAPE_LAYOUT)
    if layout_a != layout_b:
        raise ValueError(f"{a.rules.key} and {b.rules.key} draw differently shaped dice tapes "
                         f"({'/'.join(TAPE_LAYOUT)} {layout_a} vs {layout_b}), so games are not paired; "
                         "pass paired=False")
    xa = result_values(a, column, need_order=True)
    xb = result_values(b, column, need_order=True)
    return paired_compare(xa, xb, level=level, labels=labels)
