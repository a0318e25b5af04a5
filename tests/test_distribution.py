"""Exact score distributions: brute force on tiny games (tests/plain_game.py), policy_value and the solver,
chi-square against simulation, events, refusals."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.exact.distribution import ScoreDistribution, distribution, pmf_mean_sd
from yahtzee_sim.exact.policy import policy_value
from yahtzee_sim.stats import chisquare_gof
from yahtzee_sim.strategies import Strategy

from conftest import TINY_CASES, LowestBox, row_by_row, tiny_rules
from plain_game import strategy_outcomes


def _assert_matches_brute_force(dist, joint, *, upper_bonus):
    """The exact distribution against a brute force's joint (score, five rolled, bonuses,
    five box full, upper bonus, served five) probabilities: the PMF and the events, to 1e-14."""
    pmf = np.zeros(max(s for s, *_ in joint) + 1)
    for (s, *_), p in joint.items():
        pmf[s] += p
    assert len(dist.pmf) == len(pmf)
    np.testing.assert_allclose(dist.pmf, pmf, rtol=0, atol=1e-14)
    assert dist.p_five_of_a_kind_rolled == pytest.approx(sum(p for k, p in joint.items() if k[1]), abs=1e-14)
    assert dist.p_five_box_full == pytest.approx(sum(p for k, p in joint.items() if k[3]), abs=1e-14)
    if upper_bonus:
        assert dist.p_upper_bonus == pytest.approx(sum(p for k, p in joint.items() if k[4]), abs=1e-14)
    if dist.rules.roll_dependent:
        assert dist.p_served_five == pytest.approx(sum(p for k, p in joint.items() if k[5]), abs=1e-14)
    else:
        assert math.isnan(dist.p_served_five)


@pytest.mark.parametrize("case", list(TINY_CASES))
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "lowest-box"])
def test_tiny_games_match_brute_force(case, strategy):
    rules = tiny_rules(**TINY_CASES[case])
    strat = LowestBox() if strategy == "lowest-box" else strategy
    from yahtzee_sim.strategies import get_strategy

    joint = strategy_outcomes(rules, get_strategy(strat) if isinstance(strat, str) else LowestBox())
    dist = distribution(rules, strat)
    _assert_matches_brute_force(dist, joint, upper_bonus=bool(rules.upper_bonus))
    bonus = defaultdict(float)
    for k, p in joint.items():
        bonus[k[2]] += p
    want = np.array([bonus[i] for i in range(max(bonus) + 1)])
    np.testing.assert_allclose(dist.five_bonus_pmf, want, atol=1e-14)


@pytest.mark.parametrize("case", list(TINY_CASES))
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "heuristic", "optimal"])
def test_decision_tables_equal_asking_row_by_row(case, strategy):
    """The same distribution when the strategy is asked one (state, roll) row at a time
    instead of read from its tables (optimal: the same mean; its keep tables may break
    exact ties between keeps of equal value differently, which can move the sd)."""
    rules = tiny_rules(**TINY_CASES[case])
    fast = distribution(rules, strategy)
    slow = distribution(rules, row_by_row(strategy))
    if strategy == "optimal":
        assert fast.mean == pytest.approx(slow.mean, rel=1e-12)
        return
    assert len(fast.pmf) == len(slow.pmf)
    np.testing.assert_allclose(fast.pmf, slow.pmf, rtol=1e-12, atol=1e-15)
    for name in ("p_upper_bonus", "p_five_box_full", "p_five_of_a_kind_rolled", "five_per_game"):
        assert getattr(fast, name) == pytest.approx(getattr(slow, name), rel=1e-12, abs=1e-15)
    np.testing.assert_allclose(fast.five_bonus_pmf, slow.five_bonus_pmf, rtol=1e-12, atol=1e-15)


def test_tiny_random_is_averaged_exactly():
    """The uniform average of ``random`` equals the mean over every strategy outcome:
    checked against policy_value (exact too) and a simulation."""
    rules = tiny_rules()
    dist = distribution(rules, "random")
    pv = policy_value(rules, "random")
    assert dist.method == "uniform average"
    assert dist.mean == pytest.approx(pv.mean, abs=1e-10)
    assert dist.sd == pytest.approx(pv.sd, abs=1e-10)
    res = simulate(rules, "random", 40_000, seed=11)
    counts, pmf = _aligned(res, dist.pmf)
    assert chisquare_gof(counts, pmf).pvalue > 1e-4


def _aligned(res, pmf):
    """Simulated counts and the exact PMF over the same scores 0..max."""
    hist = res.aggregate.total_hist
    n = max(len(hist), len(pmf))
    return np.pad(hist, (0, n - len(hist))), np.pad(pmf, (0, n - len(pmf)))


@pytest.mark.parametrize("rules,options,strategy", [
    ("yacht", ["fill-in-order"], "keep-largest"),
    ("yacht", ["fill-in-order"], "random"),
    ("yacht", ["fill-in-order", "yacht-bonus-100", "three-dice"], "greedy"),
    ("yacht", ["fill-in-order"], "heuristic"),
])
def test_mean_and_sd_equal_policy_value(rules, options, strategy):
    dist = distribution(rules, strategy, options=options)
    pv = policy_value(rules, strategy, options=options)
    assert abs(dist.pmf.sum() - 1.0) < 1e-12
    assert dist.pmf.min() >= 0
    assert dist.mean == pytest.approx(pv.mean, abs=1e-9)
    assert dist.sd == pytest.approx(pv.sd, abs=1e-9)


def test_quantities_are_consistent():
    d = distribution("yacht", "keep-largest", options=["fill-in-order"])
    assert isinstance(d, ScoreDistribution)
    assert d.p_at_least(d.min_score) == pytest.approx(1.0, abs=1e-12)
    assert d.p_at_least(d.max_score + 1) == 0.0 and d.p_at_least(0) == 1.0
    x = int(round(d.mean))
    assert d.p_at_least(x) + d.p_below(x) == pytest.approx(1.0, abs=1e-15)
    assert d.p_at_least(x) == pytest.approx(d.pmf[x:].sum())
    q = d.percentile(25)
    assert d.cdf()[q] >= 0.25 > (d.cdf()[q - 1] if q else 0)
    assert d.percentile(100) == d.max_score
    frame = d.to_frame()
    assert frame["probability"].sum() == pytest.approx(1.0, abs=1e-12)
    assert (frame["at_least"].iloc[0]) == pytest.approx(1.0)
    assert list(d.percentiles([10, 50, 90])["score"]) == [d.percentile(10), d.percentile(50), d.percentile(90)]
    m, s = pmf_mean_sd(d.pmf)
    assert (m, s) == (d.mean, d.sd)
    with pytest.raises(ValueError, match="percentile"):
        d.percentile(0)
    assert math.isnan(distribution("yacht", "keep-largest", options=["fill-in-order", "no-bonus"]).p_upper_bonus)


class CoinFlip(Strategy):
    """Randomized: fills a random legal box (uses its uniform ``u``)."""

    name = "coin-flip"

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls]

    def box(self, state, rolls, options, u):
        from yahtzee_sim.strategies import uniform_choice

        return uniform_choice(options.legal, u)


def test_randomized_strategy_is_refused():
    with pytest.raises(ValueError, match="randomized"):
        distribution("yacht", CoinFlip())


def test_bad_input():
    with pytest.raises(ValueError, match="unknown strategy"):
        distribution("yacht", "no-such")
    with pytest.raises(ValueError, match="unknown rule"):
        distribution("no-such-rules", "greedy")
    with pytest.raises(ValueError, match="chunk_rows"):
        distribution("yacht", "greedy", chunk_rows=0)


def _chi_square(dist: ScoreDistribution, games: int, seed: int):
    res = simulate(dist.rules, dist.strategy, games, seed=seed)
    counts, pmf = _aligned(res, dist.pmf)
    return chisquare_gof(counts, pmf), res


def test_simulated_histogram_fits_exact_pmf_quick():
    """40 000 games of greedy yacht (fill in order): a chi-square over every score."""
    dist = distribution("yacht", "greedy", options=["fill-in-order"])
    gof, res = _chi_square(dist, 40_000, seed=3)
    assert gof.pvalue > 1e-4
    # a bug of a tenth of a point in the mean would show as 4 standard errors at 10^6 games;
    # here the sample mean sits within 4 se of the exact mean
    assert abs(res.aggregate.mean() - dist.mean) < 4 * dist.sd / math.sqrt(res.n_games)


def test_chi_square_catches_a_wrong_pmf():
    """The quick test has power: the same PMF one point higher (a bug of one point in
    the mean, 6.5 standard errors at this size) fails the test the right PMF passes."""
    dist = distribution("yacht", "greedy", options=["fill-in-order"])
    res = simulate(dist.rules, dist.strategy, 40_000, seed=3)
    counts, pmf = _aligned(res, dist.pmf)
    counts, pmf = np.pad(counts, (0, 1)), np.pad(pmf, (0, 1))
    wrong = np.concatenate([[0.0], pmf[:-1]])
    assert chisquare_gof(counts, pmf).pvalue > 1e-4
    assert chisquare_gof(counts, wrong).pvalue < 1e-4


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["optimal", "keep-largest"])
def test_yahtzee_million_games_fit_exact_pmf(strategy):
    """10^6 simulated games of yahtzee: chi-square against the exact PMF, and the
    exact mean and sd against the solver (optimal) and policy_value."""
    dist = distribution("yahtzee", strategy)
    assert abs(dist.pmf.sum() - 1.0) < 1e-12
    if strategy == "optimal":
        from yahtzee_sim.exact.solver import solve

        sol = solve("yahtzee")
        assert dist.mean == pytest.approx(sol.mean, abs=2e-3)    # float32 tables
        assert dist.sd == pytest.approx(sol.sd, abs=2e-3)
    gof, res = _chi_square(dist, 1_000_000, seed=2026)
    assert gof.pvalue > 1e-4
    assert abs(res.aggregate.mean() - dist.mean) < 4 * dist.sd / 1000
    s = res.summary()
    for key in ("upper_bonus_rate", "five_box_full_rate", "five_box_50_rate", "five_per_game"):
        assert abs(s[key] - dist.summary()[key]) < 4 * math.sqrt(0.25 / 1e6) * (3 if key == "five_per_game" else 1)


def test_distributions_report_runs_small(tmp_path):
    """The report's runner end to end on Yacht filled in order (seconds, not minutes)."""
    from yahtzee_sim.report import parse_spec, run_experiment, write_report

    spec = parse_spec({"kind": "distributions", "rules": "yacht", "options": ["fill-in-order"],
                       "strategies": ["keep-largest", "greedy", "optimal"], "games": 2048,
                       "tables": ["summary", "theta", "wins", "tables", "levels"],
                       "plots": ["pmf", "theta"]}, name="dist-small")
    rep = run_experiment(spec)
    out = write_report(rep, tmp_path / "dist-small")
    readme = (out / "README.md").read_text(encoding="utf-8")
    for name in ("summary.csv", "theta.csv", "wins.csv", "tables.csv", "levels.csv", "pmf.png", "theta.png"):
        assert (out / name).is_file(), name
    theta = rep.data["theta"]
    assert theta.loc[0.0, "mean"] == pytest.approx(rep.data["summary"].loc["optimal", "mean"])
    assert (theta["mean"] <= theta.loc[0.0, "mean"] + 1e-9).all()      # theta = 0 maximizes the mean
    assert rep.data["tables"]["win_share, all equal"].tolist() == pytest.approx(
        [1 / n for n in rep.data["tables"].index])
    assert "Reproduce:" in readme


# -- optimal play read from its decision table ------------------------------------------

@pytest.mark.parametrize("case", list(TINY_CASES))
def test_optimal_from_its_decision_table_matches_brute_force(case):
    """The distribution of optimal play as the simulator plays it (its decision table):
    the brute force asks a strategy whose table is loaded, so it sees the same decisions."""
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.strategies.optimal import OptimalStrategy

    class TableOptimal(OptimalStrategy):
        def prepare(self, rules):
            super().prepare(rules)
            self.decision_table()
            return self

    rules = tiny_rules(**TINY_CASES[case])
    sol = solve(rules, cache=False)
    joint = strategy_outcomes(rules, TableOptimal(sol))
    dist = distribution(rules, OptimalStrategy(sol))
    _assert_matches_brute_force(dist, joint, upper_bonus=True)


@pytest.mark.parametrize("rules,options", [("yacht-classic", []), ("yacht", ["fill-in-order"])])
def test_optimal_distribution_mean_and_sd_equal_its_policy_value(rules, options):
    dist = distribution(rules, "optimal", options=options)
    pv = policy_value(rules, "optimal", options=options)
    assert abs(dist.pmf.sum() - 1.0) < 1e-12
    assert dist.mean == pytest.approx(pv.mean, abs=1e-9)
    assert dist.sd == pytest.approx(pv.sd, abs=1e-9)


def test_cached_distribution_is_keyed_by_the_strategys_code(tmp_path, monkeypatch):
    """A cached distribution answers only for the same code: a strategy changed under
    the same name (here: its code fingerprint) is recomputed, not read from the old file."""
    from yahtzee_sim.exact import distribution as D
    from yahtzee_sim import strategy as strategies   # the registry module distribution reads it from

    args = dict(options=["fill-in-order"], cache=True, cache_dir=tmp_path)
    first = D.distribution("yacht", "keep-largest", **args)
    calls = []
    real = D._distribution
    monkeypatch.setattr(D, "_distribution", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = D.distribution("yacht", "keep-largest", **args)
    assert calls == [] and np.array_equal(again.pmf, first.pmf)          # a hit
    monkeypatch.setattr(strategies, "code_fingerprint", lambda s: "another-code")
    changed = D.distribution("yacht", "keep-largest", **args)
    assert calls == [1] and np.array_equal(changed.pmf, first.pmf)       # recomputed
