"""yahtzee_sim.stats: against scipy and published values, coverage by simulation,
common random numbers on real simulations, and every bad-input path."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from yahtzee_sim import simulate
from yahtzee_sim.stats import (BootstrapCI, GoodnessOfFit, MeanCI, PairedComparison, ProportionCI, ProportionCIs,
                               SampleSizePlan, TwoSampleComparison, bootstrap_ci, chisquare_gof, compare_results,
                               mean_ci, paired_compare, plan_mean, plan_proportion, proportion_ci, proportion_cis,
                               two_sample_compare)
from yahtzee_sim.stats.compare import _welch_from_stats
from yahtzee_sim.stats.planning import _wilson_half_width

# Student's sleep data (Cushny & Peebles 1905, as in R's `datasets::sleep`).
SLEEP_1 = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0]
SLEEP_2 = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4]


def binomial_tolerance(p: float, reps: int, sigmas: float = 4.0) -> float:
    return sigmas * math.sqrt(p * (1 - p) / reps)


# -- proportions --------------------------------------------------------------------------

def test_wilson_by_hand_for_yahtzee_rate():
    # Wilson score interval, written out: (k + z^2/2)/(n + z^2) -/+ z/(n + z^2) sqrt(k(n-k)/n + z^2/4)
    k, n = 460, 10_000
    z = stats.norm.ppf(0.975)
    centre = (k + z**2 / 2) / (n + z**2)
    half = z / (n + z**2) * math.sqrt(k * (n - k) / n + z**2 / 4)
    ci = proportion_ci(k, n)
    assert ci.low == pytest.approx(centre - half, rel=1e-12)
    assert ci.high == pytest.approx(centre + half, rel=1e-12)
    assert ci.estimate == 0.046 and ci.method == "wilson" and ci.level == 0.95
    assert ci.half_width == pytest.approx(half, rel=1e-12)


@pytest.mark.parametrize("k, n, wilson, wilsoncc, exact", [
    # Newcombe (1998), "Two-sided confidence intervals for the single proportion: comparison
    # of seven methods", Stat. Med. 17:857-872, Table II (methods 3, 4 and 5).
    (81, 263, (0.2553, 0.3662), (0.2535, 0.3682), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0598, 0.1644), (0.0578, 0.1617)),
    (0, 20, (0.0, 0.1611), (0.0, 0.2005), (0.0, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0018, 0.1963), (0.0009, 0.1776)),
])
def test_proportion_cis_match_newcombe(k, n, wilson, wilsoncc, exact):
    for method, ref in (("wilson", wilson), ("wilsoncc", wilsoncc), ("clopper-pearson", exact)):
        ci = proportion_ci(k, n, method=method)
        assert (round(ci.low, 4), round(ci.high, 4)) == ref, method
        vec = proportion_cis([k], [n], method=method)
        assert (round(float(vec.low[0]), 4), round(float(vec.high[0]), 4)) == ref, method


def test_clopper_pearson_is_beta_quantiles():
    k, n, level = 37, 400, 0.9
    ci = proportion_ci(k, n, level=level, method="exact")
    assert ci.method == "clopper-pearson"
    assert ci.low == pytest.approx(stats.beta.ppf(0.05, k, n - k + 1), rel=1e-9)
    assert ci.high == pytest.approx(stats.beta.ppf(0.95, k + 1, n - k), rel=1e-9)
    assert proportion_ci(n, n, method="clopper-pearson").high == 1.0


@pytest.mark.parametrize("method", ["wilson", "clopper-pearson", "wilsoncc"])
def test_vectorized_matches_scalar(method):
    n = np.array([1, 5, 20, 100, 1000, 10_000, 3, 3])
    k = np.array([0, 5, 7, 50, 46, 460, 0, 3])
    vec = proportion_cis(k, n, level=0.9, method=method, labels=[f"r{i}" for i in range(len(k))])
    assert len(vec) == len(k)
    for i in range(len(k)):
        one = proportion_ci(int(k[i]), int(n[i]), level=0.9, method=method)
        assert vec.low[i] == pytest.approx(one.low, abs=1e-10)
        assert vec.high[i] == pytest.approx(one.high, abs=1e-10)
        assert (vec[i].k, vec[i].n, vec[i].method) == (one.k, one.n, one.method)
    frame = vec.to_frame()
    assert list(frame.index) == [f"r{i}" for i in range(len(k))]
    assert (frame["low"] <= frame["estimate"]).all() and (frame["estimate"] <= frame["high"]).all()
    assert frame.attrs["method"] == method


def test_proportion_cis_broadcasts_a_common_n():
    res = proportion_cis([1, 2, 3], 10)
    assert res.n.tolist() == [10, 10, 10] and isinstance(res, ProportionCIs)
    assert res.contains(0.2).tolist() == [True, True, True]


def _exact_coverage(method: str, n: int, p: float, level: float = 0.95) -> float:
    k = np.arange(n + 1)
    ci = proportion_cis(k, np.full(n + 1, n), level=level, method=method)
    return float(stats.binom.pmf(k, n, p)[ci.contains(p)].sum())


@pytest.mark.parametrize("method, n, p", [("wilson", 200, 0.3), ("wilson", 500, 0.046),
                                          ("clopper-pearson", 200, 0.3)])
def test_coverage_by_simulation(method, n, p):
    """2000 seeded replications: the share of intervals covering p agrees with the exact
    coverage (binomial sum), which is close to 95% (Wilson) or at least 95% (Clopper-Pearson)."""
    reps = 2000
    k = np.random.default_rng(2024).binomial(n, p, size=reps)
    covered = proportion_cis(k, n, method=method).contains(p).mean()
    exact = _exact_coverage(method, n, p)
    assert abs(covered - exact) < binomial_tolerance(exact, reps)
    assert abs(covered - 0.95) < 0.02 + binomial_tolerance(0.95, reps)
    if method == "wilson":
        assert abs(exact - 0.95) < 0.02
    else:
        assert exact >= 0.95


def test_proportion_result_objects():
    ci = proportion_ci(460, 10_000)
    assert isinstance(ci, ProportionCI)
    assert "wilson 95%" in repr(ci) and "n=10000" in repr(ci)
    frame = ci.to_frame()
    assert frame.shape[0] == 1 and frame.loc[0, "k"] == 460
    assert ci.contains(0.046) and not ci.contains(0.06)
    with pytest.raises(AttributeError):
        ci.k = 3  # frozen
    assert proportion_cis([1], [2])[0] == proportion_ci(1, 2)


# -- means ----------------------------------------------------------------------------------

def test_t_interval_textbook_sleep_differences():
    # R: t.test(sleep$extra[11:20] - sleep$extra[1:10]) -> mean 1.58, 95% CI 0.7001142 2.4598858
    d = np.subtract(SLEEP_2, SLEEP_1)
    ci = mean_ci(d)
    assert ci.mean == pytest.approx(1.58)
    assert (ci.low, ci.high) == pytest.approx((0.7001142, 2.4598858), abs=1e-7)
    assert ci.df == 9 and ci.n == 10 and ci.se == pytest.approx(ci.sd / math.sqrt(10))
    lo, hi = stats.t.interval(0.99, 9, loc=d.mean(), scale=stats.sem(d))
    assert (mean_ci(d, level=0.99).low, mean_ci(d, level=0.99).high) == pytest.approx((lo, hi))


def test_mean_ci_of_a_simulation_uses_its_aggregate():
    res = simulate("yahtzee", "keep-largest", 3000, seed=8)
    from_result = mean_ci(res)
    from_games = mean_ci(res.games["total"])
    assert from_result.mean == pytest.approx(from_games.mean) and from_result.sd == pytest.approx(from_games.sd)
    assert (from_result.low, from_result.high) == pytest.approx(res.ci("mean"))
    lean = simulate("yahtzee", "keep-largest", 3000, seed=8, keep_games=False)
    assert mean_ci(lean).high == pytest.approx(from_result.high)
    assert isinstance(from_result, MeanCI) and "t 95%" in repr(from_result)


def test_t_interval_coverage_by_simulation():
    rng = np.random.default_rng(77)
    reps, mu = 2000, 3.0
    samples = rng.normal(mu, 2.0, size=(reps, 8))
    covered = np.mean([mean_ci(row).contains(mu) for row in samples])
    assert abs(covered - 0.95) < binomial_tolerance(0.95, reps)


def test_mean_ci_of_constant_data_is_a_point():
    ci = mean_ci([4, 4, 4])
    assert ci.low == ci.high == 4.0 and ci.sd == 0.0


def test_bootstrap_percentile_matches_summary_and_is_reproducible():
    res = simulate("yahtzee", "keep-largest", 2000, seed=9)
    ci = bootstrap_ci(res, "p95", n_resamples=499, seed=3)
    again = bootstrap_ci(res.games["total"], "p95", n_resamples=499, seed=3)
    assert ci.estimate == res.summary()["p95"] and ci.low <= ci.estimate <= ci.high
    assert (ci.low, ci.high, ci.se) == (again.low, again.high, again.se)  # same seed, same resamples
    assert ci.method == "percentile" and ci.seed == 3 and isinstance(ci, BootstrapCI)
    lean = simulate("yahtzee", "keep-largest", 2000, seed=9, keep_games=False)
    assert bootstrap_ci(lean, "p95", n_resamples=499, seed=3).high == ci.high  # histogram rebuilds the sample
    fresh = bootstrap_ci(res, "median", n_resamples=99)
    assert isinstance(fresh.seed, int)  # fresh entropy is recorded
    assert bootstrap_ci(res, "median", n_resamples=99, seed=fresh.seed).low == fresh.low


def test_bootstrap_mean_agrees_with_t_interval():
    x = np.random.default_rng(5).gamma(2.0, 10.0, size=400)
    boot = bootstrap_ci(x, "mean", n_resamples=1999, seed=np.random.default_rng(1))
    t = mean_ci(x)
    assert boot.method == "BCa" and boot.seed is None
    assert boot.low == pytest.approx(t.low, abs=0.3 * t.half_width)
    assert boot.high == pytest.approx(t.high, abs=0.3 * t.half_width)
    assert boot.se == pytest.approx(t.se, rel=0.15)


def test_bootstrap_statistics_and_fallbacks():
    x = np.r_[np.zeros(90), np.full(10, 5.0)]
    forced = bootstrap_ci(x, "median", method="BCa", n_resamples=199, seed=1)
    assert forced.method == "percentile" and "BCa" in forced.note
    assert forced.low == forced.high == 0.0
    point = bootstrap_ci([3.0] * 20, "sd", n_resamples=99, seed=1)
    assert point.low == point.high == 0.0
    iqr = bootstrap_ci(np.arange(100.0), "iqr", n_resamples=199, seed=2)
    assert iqr.estimate == pytest.approx(50.0, abs=1) and iqr.low < iqr.estimate < iqr.high

    def trimmed(a, axis):
        return stats.trim_mean(a, 0.1, axis=axis)

    custom = bootstrap_ci(np.arange(50.0), trimmed, method="percentile", n_resamples=199, seed=2)
    assert custom.statistic == "trimmed" and custom.low < 24.5 < custom.high
    assert "bootstrap percentile 95%" in repr(custom)
    assert bootstrap_ci(np.arange(50.0), "p99.5", method="basic", n_resamples=99, seed=2).statistic == "p99.5"


# -- comparisons ----------------------------------------------------------------------------

def test_paired_sleep_matches_r():
    # R: t.test(extra ~ group, data = sleep, paired = TRUE)
    # t = -4.0621, df = 9, p-value = 0.002833; 95% CI -2.4598858 -0.7001142; mean difference -1.58
    r = paired_compare(SLEEP_1, SLEEP_2, labels=("drug 1", "drug 2"))
    assert r.diff == pytest.approx(-1.58)
    assert (r.low, r.high) == pytest.approx((-2.4598858, -0.7001142), abs=1e-7)
    assert r.statistic == pytest.approx(-4.0621, abs=1e-4) and r.pvalue == pytest.approx(0.002833, abs=1e-6)
    assert r.df == 9 and isinstance(r, PairedComparison)
    x, y = np.array(SLEEP_1), np.array(SLEEP_2)
    assert r.correlation == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert r.variance_ratio == pytest.approx((x.var(ddof=1) + y.var(ddof=1)) / (x - y).var(ddof=1))
    assert r.unpaired_half_width == pytest.approx(two_sample_compare(x, y).half_width)
    assert "drug 1 - drug 2" in repr(r) and r.to_frame().loc[0, "label_a"] == "drug 1"


def test_paired_interval_is_scipys_to_the_bit():
    # the benchmark's paired interval without scipy.stats: scipy's ttest_rel interval exactly
    from yahtzee_sim.stats import paired_t_interval

    rng = np.random.default_rng(12)
    for n, level in [(2, 0.95), (3, 0.9), (10, 0.99), (1000, 0.95), (20000, 0.95), (20000, 0.5)]:
        for games in (False, True):
            if games:       # game totals: whole points, correlated by common dice
                x = rng.integers(50, 350, n).astype(float)
                y = x + rng.integers(-40, 20, n)
            else:
                x, y = rng.normal(250, 60, n), rng.normal(240, 60, n)
            ci = stats.ttest_rel(x, y).confidence_interval(level)
            assert paired_t_interval(x, y, level=level) == ((x - y).mean(), ci.low, ci.high), (n, level)
    assert paired_t_interval([1, 2, 3], [0, 1, 2]) == (1.0, 1.0, 1.0)       # every pair 1 apart
    for a, b, why in [([1, 2], [1, 2, 3], "same length"), ([1], [2], "at least 2"),
                      ([1, np.nan], [1, 2], "NaN")]:
        with pytest.raises(ValueError, match=why):
            paired_t_interval(a, b)
    with pytest.raises(ValueError, match="level"):
        paired_t_interval([1, 2], [2, 4], level=1.5)


def test_statistics_import_scipy_stats_only_where_used():
    # the package's names resolve on first use; the paired interval needs scipy.special only,
    # one proportion's interval not even that (the benchmark's and head-to-head's)
    import subprocess
    import sys

    code = ("import sys; import yahtzee_sim.stats as s; assert 'scipy.stats' not in sys.modules; "
            "assert sorted(s.__all__) == sorted(s._HOME); "
            "s.paired_t_interval([1, 2, 4], [0, 2, 3]); s.proportion_ci(3, 10); "
            "assert 'scipy.stats' not in sys.modules; "
            "s.mean_ci([1.0, 2.0]); assert 'scipy.stats' in sys.modules; "
            "assert 'compare_results' in dir(s); "
            "from yahtzee_sim.stats import *; assert callable(plan_mean) and callable(chisquare_gof)\n"
            "try:\n    s.no_such_name\nexcept AttributeError as e:\n    print(e)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "module 'yahtzee_sim.stats' has no attribute 'no_such_name'"


def test_welch_sleep_matches_r():
    # R: t.test(extra ~ group, data = sleep)  (Welch)
    # t = -1.8608, df = 17.776, p-value = 0.07939; 95% CI -3.3654832 0.2054832
    r = two_sample_compare(SLEEP_1, SLEEP_2)
    assert (r.low, r.high) == pytest.approx((-3.3654832, 0.2054832), abs=1e-7)
    assert r.df == pytest.approx(17.776, abs=1e-3) and r.statistic == pytest.approx(-1.8608, abs=1e-4)
    assert r.pvalue == pytest.approx(0.07939, abs=1e-5) and isinstance(r, TwoSampleComparison)
    assert math.isnan(r.prob_a_greater)


def test_welch_from_summary_numbers_matches_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.normal(0, 1, 30), rng.normal(0.5, 3, 45)
    w = _welch_from_stats(x.mean(), x.var(ddof=1), 30, y.mean(), y.var(ddof=1), 45, 0.9)
    res = stats.ttest_ind(x, y, equal_var=False)
    ci = res.confidence_interval(0.9)
    assert (w["low"], w["high"], w["df"]) == pytest.approx((ci.low, ci.high, res.df))
    assert (w["statistic"], w["pvalue"]) == pytest.approx((res.statistic, res.pvalue))


def test_mann_whitney_probability_is_pairwise_share():
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 10, 40), rng.integers(2, 12, 55)
    r = two_sample_compare(x, y, mann_whitney=True)
    brute = (x[:, None] > y[None, :]).mean() + 0.5 * (x[:, None] == y[None, :]).mean()
    assert r.prob_a_greater == pytest.approx(brute)
    assert r.mw_pvalue == pytest.approx(stats.mannwhitneyu(x, y).pvalue)
    assert "P(a>b)" in repr(r)


def test_degenerate_pairs():
    r = paired_compare([1, 2, 3], [0, 1, 2])  # every pair differs by exactly 1
    assert r.low == r.high == 1.0 and r.pvalue == 0.0 and r.variance_ratio == math.inf
    r = paired_compare([1, 1, 1, 1], [2, 3, 4, 5])  # a constant side: no correlation
    assert math.isnan(r.correlation) and r.diff == -2.5
    r = two_sample_compare([1, 1], [1, 1])
    assert r.low == r.high == 0.0 and r.pvalue == 1.0


def test_common_random_numbers_pair_real_games():
    """Same seed: random vs keep-largest see the same dice; their scores are positively
    correlated, so pairing saves variance. With different seeds there is nothing to pair."""
    n = 20_000
    a = simulate("yahtzee", "keep-largest", n, seed=31)
    b = simulate("yahtzee", "random", n, seed=31)
    r = compare_results(a, b)
    assert (r.label_a, r.label_b, r.n) == ("keep-largest", "random", n)
    assert r.corr_low > 0 and r.variance_ratio > 1
    assert r.half_width < r.unpaired_half_width
    unpaired = compare_results(a, b, paired=False)
    assert unpaired.half_width == pytest.approx(r.unpaired_half_width, rel=1e-3)
    assert unpaired.diff == pytest.approx(r.diff)
    other = compare_results(a, simulate("yahtzee", "random", n, seed=32), paired=False)
    assert abs(other.diff - r.diff) < 4 * other.se  # same question, independent games
    # The same strategy on two variants of a rule set shares most of its luck.
    y1 = simulate("yacht", "keep-largest", 2000, seed=5)
    y2 = simulate("yacht", "keep-largest", 2000, seed=5, options=["full-house-25"])
    strong = compare_results(y1, y2)
    assert strong.correlation > 0.8 and strong.variance_ratio > 5
    assert strong.label_a == "yacht" and strong.label_b != "yacht"


def test_compare_results_unpaired_from_aggregates_matches_arrays():
    a = simulate("yahtzee", "keep-largest", 1500, seed=1)
    b = simulate("yahtzee", "random", 2500, seed=2, keep_games=False)
    agg = compare_results(a, b, paired=False)
    arrays = two_sample_compare(a.games["total"], np.repeat(np.arange(len(b.aggregate.total_hist)),
                                                            b.aggregate.total_hist))
    assert (agg.low, agg.high, agg.df, agg.pvalue) == pytest.approx((arrays.low, arrays.high, arrays.df,
                                                                      arrays.pvalue))
    mw = compare_results(a, b, paired=False, mann_whitney=True)
    assert mw.prob_a_greater > 0.9
    col = compare_results(a, simulate("yahtzee", "random", 1500, seed=1), column="upper_total")
    assert col.n == 1500 and col.diff > 0


# -- chi-square goodness of fit ---------------------------------------------------------------

def test_chisquare_matches_scipy_on_small_table():
    obs = np.array([43, 52, 54, 40, 61, 50])
    r = chisquare_gof(obs, np.full(6, 1 / 6))
    ref = stats.chisquare(obs)
    assert (r.statistic, r.pvalue) == pytest.approx((ref.statistic, ref.pvalue))
    assert r.dof == 5 and r.n == 300 and r.cells == 6 and isinstance(r, GoodnessOfFit)
    # statistic by hand: sum (o - e)^2 / e with e = 50
    assert r.statistic == pytest.approx(((obs - 50.0) ** 2 / 50).sum())
    table = r.to_frame()
    assert table["contribution"].sum() == pytest.approx(r.statistic)
    assert r.summary_frame().loc[0, "dof"] == 5 and "chi2=" in repr(r)
    probs = np.array([0.1, 0.2, 0.3, 0.4])
    r = chisquare_gof([12, 18, 35, 35], probs, ddof=1)
    ref = stats.chisquare([12, 18, 35, 35], 100 * probs, ddof=1)
    assert (r.statistic, r.pvalue, r.dof) == pytest.approx((ref.statistic, ref.pvalue, 2))


def test_pooling_adjacent_and_smallest():
    probs = np.array([0.01, 0.02, 0.3, 0.3, 0.3, 0.04, 0.02, 0.01])
    obs = np.array([2, 1, 31, 28, 30, 5, 2, 1])
    adj = chisquare_gof(obs, probs, labels=list("abcdefgh"))
    assert adj.labels == ("a..c", "d", "e", "f..h") and adj.n_cells.tolist() == [3, 1, 1, 3]
    assert (adj.expected >= 5).all() and adj.expected.sum() == pytest.approx(100)
    ref = stats.chisquare([34, 28, 30, 8], [33, 30, 30, 7])
    assert (adj.statistic, adj.pvalue, adj.dof) == pytest.approx((ref.statistic, ref.pvalue, 3))
    small = chisquare_gof(obs, probs, labels=list("abcdefgh"), pool="smallest")
    assert small.labels == ("c", "d", "e", "other (5 cells)")
    assert small.expected.tolist() == pytest.approx([30, 30, 30, 10])
    assert small.groups.tolist() == [3, 3, 0, 1, 2, 3, 3, 3]
    none = chisquare_gof(obs, probs, min_expected=0)
    assert none.cells == 8 and none.dof == 7


def test_series_are_aligned_and_impossible_cells_dropped():
    probs = pd.Series({1: 0.5, 2: 0.5, 3: 0.0})
    counts = pd.Series({2: 52, 1: 48})
    r = chisquare_gof(counts, probs, min_expected=0)
    assert r.labels == (1, 2) and r.observed.tolist() == [48, 52]
    assert r.statistic == pytest.approx(stats.chisquare([48, 52]).statistic)
    # a count in a cell the model rules out gets pooled with its neighbour
    pooled = chisquare_gof(pd.Series({1: 40, 2: 50, 3: 10}), pd.Series({1: 0.5, 2: 0.5}))
    assert pooled.labels == (1, "2..3") and pooled.observed.tolist() == [40, 60]


def test_chisquare_on_dice_sums_accepts_truth_and_rejects_a_wrong_model():
    faces = np.full(6, 1 / 6)
    pmf = np.array([1.0])
    for _ in range(5):  # exact distribution of the sum of five dice (loop over dice)
        pmf = np.convolve(pmf, faces)
    support = np.arange(5, 31)
    rolls = np.random.default_rng(12).integers(1, 7, size=(20_000, 5)).sum(axis=1)
    counts = np.bincount(rolls, minlength=31)[5:]
    good = chisquare_gof(counts, pmf, labels=support)
    assert good.pvalue > 1e-3 and good.cells < len(support)  # tails pooled
    wrong = np.roll(pmf, 1)  # every sum shifted by one
    assert chisquare_gof(counts, wrong, labels=support).pvalue < 1e-9


def test_chisquare_pvalues_are_calibrated():
    p = np.array([0.5, 0.25, 0.15, 0.07, 0.03])
    rng = np.random.default_rng(99)
    tables = rng.multinomial(200, p, size=1000)
    pvalues = np.array([chisquare_gof(t, p).pvalue for t in tables])
    assert abs((pvalues < 0.05).mean() - 0.05) < binomial_tolerance(0.05, 1000) + 0.01


# -- sample-size planning --------------------------------------------------------------------

@pytest.mark.parametrize("sd, h, level", [(72.0, 1.0, 0.95), (40.0, 0.1, 0.95), (1.0, 2.0, 0.95),
                                          (10.0, 3.0, 0.99), (5.0, 0.5, 0.8)])
def test_plan_mean_is_the_smallest_n(sd, h, level):
    z = stats.norm.ppf(0.5 + level / 2)
    normal = plan_mean(h, sd=sd, level=level, method="normal")
    assert normal.n == max(1, math.ceil((z * sd / h) ** 2))
    assert normal.achieved_half_width <= h
    plan = plan_mean(h, sd=sd, level=level)
    assert plan.n >= max(2, normal.n) and plan.n_normal == normal.n

    def t_half(m):
        return stats.t.ppf(0.5 + level / 2, m - 1) * sd / math.sqrt(m)

    assert t_half(plan.n) <= h and plan.achieved_half_width == pytest.approx(t_half(plan.n))
    if plan.n > 2:
        assert t_half(plan.n - 1) > h


def test_plan_mean_inverse_check_with_a_sample_of_exact_sd():
    """A sample of the planned size whose sd is exactly the planned sd has a t interval of
    the requested half-width (and one game fewer does not)."""
    sd, h = 30.0, 2.5
    plan = plan_mean(h, sd=sd)
    rng = np.random.default_rng(0)

    def sample(m):
        x = rng.normal(size=m)
        return 100 + sd * (x - x.mean()) / x.std(ddof=1)

    assert mean_ci(sample(plan.n)).half_width <= h < mean_ci(sample(plan.n - 1)).half_width


def test_plan_mean_from_a_pilot_simulation_delivers_the_half_width():
    pilot = simulate("yahtzee", "keep-largest", 1000, seed=100)
    plan = plan_mean(3.0, pilot=pilot)
    assert plan.pilot_n == 1000 and plan.sd == pytest.approx(math.sqrt(pilot.aggregate.var()))
    real = mean_ci(simulate("yahtzee", "keep-largest", plan.n, seed=101))
    assert 0.9 * 3.0 < real.half_width < 1.1 * 3.0
    cautious = plan_mean(3.0, pilot=pilot, pilot_confidence=0.9)
    assert cautious.n > plan.n and cautious.pilot_sd == plan.sd and cautious.sd > plan.sd
    from_sample = plan_mean(3.0, pilot=pilot.games["total"])
    assert from_sample.n == plan.n
    assert plan_mean(3.0, pilot=mean_ci(pilot)).n == plan.n
    assert "pilot of 1000" in repr(plan) and plan.to_frame().loc[0, "n"] == plan.n


def test_plan_mean_for_paired_differences():
    a = simulate("yacht", "keep-largest", 1000, seed=5)
    b = simulate("yacht", "keep-largest", 1000, seed=5, options=["no-bonus"])
    paired = compare_results(a, b)
    plan = plan_mean(0.1, pilot=paired, method="normal")
    assert plan.sd == pytest.approx(paired.sd_diff) and plan.pilot_n == 1000
    # games per strategy for the same interval unpaired: variance_ratio times as many
    unpaired = plan_mean(0.1, sd=math.sqrt(paired.sd_a**2 + paired.sd_b**2), method="normal")
    assert unpaired.n / plan.n == pytest.approx(paired.variance_ratio, rel=0.001)


def test_plan_proportion():
    z = stats.norm.ppf(0.975)
    normal = plan_proportion(0.046, 0.002, method="normal")
    assert normal.n == math.ceil(z**2 * 0.046 * 0.954 / 0.002**2) and normal.quantity == "proportion"
    plan = plan_proportion(0.046, 0.002)
    assert _wilson_half_width(0.046, plan.n, z) <= 0.002 < _wilson_half_width(0.046, plan.n - 1, z)
    # the half-width formula is scipy's Wilson interval whenever k = p n is whole
    assert _wilson_half_width(0.05, 2000, z) == pytest.approx(proportion_ci(100, 2000).half_width, rel=1e-12)
    # inverse check with scipy at the planned n
    real = proportion_ci(round(0.046 * plan.n), plan.n)
    assert real.half_width == pytest.approx(0.002, rel=0.01)
    assert plan_proportion(0.5, 0.6).n == 1
    assert isinstance(plan, SampleSizePlan) and "p=0.046" in repr(plan)


# -- bad input ------------------------------------------------------------------------------------

def _sim(**kw):
    return simulate("yahtzee", kw.pop("strategy", "random"), kw.pop("n", 64), seed=kw.pop("seed", 1), **kw)


BAD_INPUT = [
    # proportions
    (lambda: proportion_ci(-1, 10), r"k \(successes\) must be >= 0"),
    (lambda: proportion_ci(11, 10), r"k must not exceed n, got k=11 > n=10"),
    (lambda: proportion_ci(0, 0), r"n \(trials\) must be >= 1"),
    (lambda: proportion_ci(2.5, 10), r"whole numbers"),
    (lambda: proportion_ci(True, 10), r"integer counts"),
    (lambda: proportion_ci("3", 10), r"integer counts"),
    (lambda: proportion_ci(3, 10, level=95), r"level must be a number strictly between 0 and 1"),
    (lambda: proportion_ci(3, 10, level=1.0), r"strictly between 0 and 1"),
    (lambda: proportion_ci(3, 10, level=0), r"strictly between 0 and 1"),
    (lambda: proportion_ci(3, 10, method="wald"), r"unknown method 'wald'; valid: wilson, clopper-pearson"),
    (lambda: proportion_ci([1, 2], [5, 5]), r"use proportion_cis"),
    (lambda: proportion_cis([], []), r"empty"),
    (lambda: proportion_cis([1, 2, 3], [4, 5]), r"incompatible shapes"),
    (lambda: proportion_cis([1, 7], [4, 5]), r"k=7 > n=5"),
    (lambda: proportion_cis([1, 2], [4, 5], labels=["x"]), r"labels has 1 entries for 2"),
    # means and bootstrap
    (lambda: mean_ci([]), r"x is empty"),
    (lambda: mean_ci([1.0]), r"at least 2 values"),
    (lambda: mean_ci([1.0, float("nan")]), r"NaN or infinite"),
    (lambda: mean_ci([[1.0, 2.0]]), r"must be 1-D"),
    (lambda: mean_ci(["a", "b"]), r"sequence of numbers"),
    (lambda: mean_ci([1, 2, 3], level=-0.5), r"strictly between 0 and 1"),
    (lambda: bootstrap_ci([1, 2, 3], "mode"), r"unknown statistic 'mode'; valid: mean, median"),
    (lambda: bootstrap_ci([1, 2, 3], "p101"), r"unknown statistic 'p101'"),
    (lambda: bootstrap_ci([1, 2, 3], 3), r"unknown statistic 3"),
    (lambda: bootstrap_ci([1, 2, 3], method="studentized"), r"unknown method 'studentized'; valid: auto, bca"),
    (lambda: bootstrap_ci([1, 2, 3], n_resamples=0), r"n_resamples must be a positive integer"),
    (lambda: bootstrap_ci([1, 2, 3], seed=-1), r"seed must be a non-negative integer"),
    (lambda: bootstrap_ci([], "mean"), r"empty"),
    (lambda: compare_results(_sim(keep_games=False), _sim(keep_games=False), paired=False, column="upper_total"),
     r"aggregates, which hold totals only"),
    # comparisons
    (lambda: paired_compare([1, 2, 3], [1, 2]), r"same length, got 3 and 2"),
    (lambda: paired_compare([1], [1]), r"a needs at least 2 values"),
    (lambda: paired_compare([1, 2], [1, 2], labels="ab c"), r"labels must be a pair"),
    (lambda: two_sample_compare([1, 2], [], level=0.9), r"b is empty"),
    (lambda: two_sample_compare([1, 2], [3, 4], level=2), r"strictly between 0 and 1"),
    (lambda: compare_results([1, 2], _sim()), r"a must be a SimulationResult"),
    (lambda: compare_results(_sim(), _sim(seed=2)), r"seeds 1 and 2; rerun both with the same seed"),
    (lambda: compare_results(_sim(), _sim(n=65)), r"same number of games, got 64 and 65"),
    (lambda: compare_results(_sim(), _sim(keep_games=False)), r"kept only aggregates; rerun with keep_games=True"),
    (lambda: compare_results(_sim(), simulate("yacht", "random", 64, seed=1)), r"differently shaped dice tapes"),
    (lambda: compare_results(_sim(), _sim(), column="bonus"), r"unknown column 'bonus'; valid: total"),
    (lambda: compare_results(_sim(), _sim(), mann_whitney=True), r"pass paired=False"),
    (lambda: compare_results(_sim(n=1), _sim(n=1), paired=False), r"at least 2 games"),
    # goodness of fit
    (lambda: chisquare_gof([5, -1], [0.5, 0.5]), r"counts must be >= 0"),
    (lambda: chisquare_gof([5, 1.5], [0.5, 0.5]), r"whole-number counts"),
    (lambda: chisquare_gof([5, 5], [0.5, 0.4]), r"must sum to 1, got 0.9"),
    (lambda: chisquare_gof([5, 5], [1.5, -0.5]), r"finite and >= 0"),
    (lambda: chisquare_gof([5, 5, 5], [0.5, 0.5]), r"observed has 3 cells but probabilities has 2"),
    (lambda: chisquare_gof([], []), r"non-empty 1-D"),
    (lambda: chisquare_gof([0, 0], [0.5, 0.5]), r"all zero"),
    (lambda: chisquare_gof([3, 4], [0.5, 0.5]), r"only 1 cell\(s\) left after pooling"),
    (lambda: chisquare_gof([30, 40], [0.5, 0.5], ddof=1), r"no degrees of freedom"),
    (lambda: chisquare_gof([30, 40, 5], [0.5, 0.5, 0.0], min_expected=0), r"cells of probability 0 \(2\)"),
    (lambda: chisquare_gof([30, 40], [0.5, 0.5], pool="random"), r"unknown pool 'random'; valid: adjacent"),
    (lambda: chisquare_gof([30, 40], [0.5, 0.5], min_expected=-1), r"min_expected must be"),
    (lambda: chisquare_gof([30, 40], [0.5, 0.5], ddof=-1), r"ddof must be a non-negative integer"),
    (lambda: chisquare_gof([30, 40], [0.5, 0.5], labels=["x"]), r"labels has 1 entries for 2 cells"),
    (lambda: chisquare_gof(pd.Series([1, 2]), pd.Series([0.5, 0.5]), labels=["a", "b"]), r"come from the Series"),
    # planning
    (lambda: plan_mean(1.0), r"exactly one of sd= .* or pilot="),
    (lambda: plan_mean(1.0, sd=2, pilot=[1, 2, 3]), r"exactly one of sd="),
    (lambda: plan_mean(0, sd=2), r"half_width must be a finite number > 0"),
    (lambda: plan_mean(1.0, sd=-2), r"sd must be a finite number > 0"),
    (lambda: plan_mean(1.0, sd=2, method="z"), r"unknown method 'z'; valid: t, normal"),
    (lambda: plan_mean(1.0, sd=2, level=1.5), r"strictly between 0 and 1"),
    (lambda: plan_mean(1.0, sd=2, pilot_confidence=0.9), r"pilot_confidence needs pilot="),
    (lambda: plan_mean(1.0, pilot=[1, 2], pilot_confidence=1), r"pilot_confidence must be a number strictly"),
    (lambda: plan_mean(1.0, pilot=[2, 2, 2]), r"zero spread"),
    (lambda: plan_mean(1.0, pilot=[2]), r"pilot needs at least 2 values"),
    (lambda: plan_proportion(0, 0.01), r"p must be a proportion strictly between 0 and 1"),
    (lambda: plan_proportion(1.2, 0.01), r"strictly between 0 and 1"),
    (lambda: plan_proportion(0.5, 1.0), r"below 1"),
    (lambda: plan_proportion(0.5, -0.1), r"half_width must be a finite number > 0"),
    (lambda: plan_proportion(0.5, 0.1, method="exact"), r"unknown method 'exact'; valid: wilson, normal"),
]


@pytest.mark.parametrize("call, message", BAD_INPUT, ids=[f"bad{i}-{m[:30]}" for i, (_, m) in enumerate(BAD_INPUT)])
def test_bad_input_raises_one_line_value_error(call, message):
    with pytest.raises(ValueError, match=message) as info:
        call()
    assert "\n" not in str(info.value)
