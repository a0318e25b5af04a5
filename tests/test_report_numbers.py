"""The reports' numbers objects, checked without any markdown (issue 20: reports that
compute, then render).

Each experiment kind computes its numbers into a plain data object
(``yahtzee_sim.report.<kind>``); these tests recompute them independently: sample
statistics by hand from the games a test replays through the public API, exact win
odds by a plain double loop over two exact distributions, the dice odds of one roll
by enumerating all 6**5 ordered throws. Small games (Yacht filled in order), a few
thousand games: seconds each.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats as sps

from yahtzee_sim import simulate
from yahtzee_sim.report.experiment import parse_spec

YACHT_IN_ORDER = {"rules": "yacht", "options": ["fill-in-order"]}


def t_bounds(x: np.ndarray) -> tuple[float, float]:
    """The 95% Student t interval of the mean of ``x``, from its definition."""
    n = len(x)
    half = sps.t.ppf(0.975, n - 1) * np.std(x, ddof=1) / math.sqrt(n)
    return float(np.mean(x) - half), float(np.mean(x) + half)


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95% Wilson score interval, from its formula."""
    z = sps.norm.ppf(0.975)
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


def beats(pa: np.ndarray, pb: np.ndarray) -> tuple[float, float]:
    """(P(A > B), P(A = B)) for independent scores with pmfs ``pa`` and ``pb``: a plain loop."""
    win = tie = 0.0
    below = 0.0                          # P(B < i), accumulated as i grows
    for i in range(len(pa)):
        b_i = pb[i] if i < len(pb) else 0.0
        win += pa[i] * below
        tie += pa[i] * b_i
        below += b_i
    return win, tie


# -- strategies ----------------------------------------------------------------------------

def test_strategies_numbers_are_the_games_own_statistics():
    from yahtzee_sim.report.strategies import StrategiesNumbers, strategies_numbers

    spec = parse_spec({"kind": "strategies", **YACHT_IN_ORDER, "strategies": ["keep-largest", "greedy"],
                       "games": 3000, "seed": 11}, name="t")
    nums = strategies_numbers(spec)
    assert isinstance(nums, StrategiesNumbers) and nums.baseline == "greedy"   # no optimal: the last one
    frame = nums.to_frame()
    for name in ("keep-largest", "greedy"):
        # the same games again, through the public API: the report's numbers are theirs
        res = simulate("yacht", name, 3000, seed=11, options=["fill-in-order"], keep_games=True)
        x = np.asarray(res.games["total"], dtype=float)
        assert np.array_equal(x, nums.totals[name])
        row = frame.loc[name]
        assert row["mean"] == pytest.approx(x.mean())
        assert row["sd"] == pytest.approx(np.std(x, ddof=1))
        assert (row["ci95_low"], row["ci95_high"]) == pytest.approx(t_bounds(x))
        assert row["max"] == x.max()
        k = int(np.asarray(res.games["upper_bonus"]).astype(bool).sum())
        assert row["upper_bonus_rate"] == pytest.approx(k / 3000)
        assert (row["upper_bonus_ci95_low"], row["upper_bonus_ci95_high"]) == pytest.approx(wilson(k, 3000))
    d = nums.totals["keep-largest"].astype(float) - nums.totals["greedy"].astype(float)
    paired = nums.paired.loc["keep-largest"]
    assert paired["mean_difference"] == pytest.approx(d.mean())
    assert (paired["ci95_low"], paired["ci95_high"]) == pytest.approx(t_bounds(d))
    assert paired["correlation"] == pytest.approx(np.corrcoef(nums.totals["keep-largest"],
                                                              nums.totals["greedy"])[0, 1])


# -- head to head ---------------------------------------------------------------------------

def test_head_to_head_numbers_count_wins_and_match_exact_odds():
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.report.head_to_head import head_to_head_numbers

    names = ["keep-largest", "greedy"]
    spec = parse_spec({"kind": "head-to-head", **YACHT_IN_ORDER, "strategies": names, "games": 2000,
                       "seed": 5, "tables": ["wins", "ranking", "exact"], "plots": []}, name="t")
    nums = head_to_head_numbers(spec)
    # each player on its own stream: one integer seed per strategy, spawned from the spec's seed
    seeds = [int(c.generate_state(1)[0]) for c in np.random.SeedSequence(5).spawn(2)]
    totals = {n: np.asarray(simulate("yacht", n, 2000, seed=s, options=["fill-in-order"], keep_games=True)
                            .games["total"]) for n, s in zip(names, seeds)}
    wins = nums.to_frame().set_index(["player", "opponent"])
    for a, b in itertools.permutations(names, 2):
        k = int((totals[a] > totals[b]).sum())
        row = wins.loc[(a, b)]
        assert row["win_rate"] == k / 2000
        assert row["draw_rate"] == (totals[a] == totals[b]).sum() / 2000
        assert (row["win_ci95_low"], row["win_ci95_high"]) == pytest.approx(wilson(k, 2000))
    assert nums.ranking.loc["greedy", "mean_score"] == pytest.approx(totals["greedy"].mean())
    # exact: a plain double loop over the two exact score distributions
    pmf = {n: distribution("yacht", n, options=["fill-in-order"]).pmf for n in names}
    ex = nums.exact.frame.set_index(["player", "opponent"])
    for a, b in itertools.product(names, repeat=2):
        win, tie = beats(pmf[a], pmf[b])
        assert nums.exact.matrix.loc[a, b] == pytest.approx(win, abs=1e-9)
        assert nums.exact.ties.loc[a, b] == pytest.approx(tie, abs=1e-9)
        assert ex.loc[(a, b), "exact_loss"] == pytest.approx(1 - win - tie, abs=1e-9)
        if a != b:
            r = wins.loc[(a, b)]
            assert bool(ex.loc[(a, b), "exact_inside_ci"]) == (r["win_ci95_low"] <= win <= r["win_ci95_high"])
    assert nums.exact.means["greedy"] == pytest.approx(float(np.arange(len(pmf["greedy"])) @ pmf["greedy"]))
    # keep-largest stands for source 001's weakest computer, greedy for none
    assert list(nums.exact.levels.index) == ["keep-largest"]


# -- odds ----------------------------------------------------------------------------------

def test_odds_numbers_count_every_throw():
    from yahtzee_sim.report.odds import odds_numbers

    spec = parse_spec({"kind": "odds", "games": 4000, "seed": 3, "checkpoints": [1000, 4000]}, name="t")
    nums = odds_numbers(spec)
    largest = Counter(max(Counter(t).values()) for t in itertools.product(range(1, 7), repeat=5))
    first = nums.first_roll
    for k in range(1, 6):
        exact = Fraction(largest[k], 6 ** 5)
        assert first.loc[f"largest_group_{k}", "exact_fraction"] == str(exact)
        assert first.loc[f"largest_group_{k}", "exact"] == pytest.approx(float(exact))
    throws = list(itertools.product(range(1, 7), repeat=5))
    full_house = sum(sorted(Counter(t).values()) == [2, 3] for t in throws)
    large_straight = sum(set(t) in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) for t in throws)
    assert first.loc["full_house", "exact"] == pytest.approx(full_house / 6 ** 5)
    assert first.loc["large_straight", "exact"] == pytest.approx(large_straight / 6 ** 5)
    for frame in (first, nums.per_turn):
        k = np.rint(frame["simulated"] * 4000).astype(int)
        assert np.allclose(k, frame["simulated"] * 4000)          # shares of 4,000 rolls or turns
        bounds = np.array([wilson(int(v), 4000) for v in k])
        assert np.allclose(frame[["ci95_low", "ci95_high"]].to_numpy(), bounds)
        inside = (bounds[:, 0] <= frame["exact"]) & (frame["exact"] <= bounds[:, 1])
        assert list(frame["inside_ci"]) == list(inside)
    # the last checkpoint replays the same 4,000 turns as the per-turn table
    assert nums.convergence.loc[4000, "estimate"] == nums.per_turn.loc["five_of_a_kind", "simulated"]
    assert (nums.convergence["exact"] == nums.exact_five).all()
    assert list(nums.to_frame().index.get_level_values("where").unique()) == ["one roll", "one turn"]


# -- variants ------------------------------------------------------------------------------

def test_variants_numbers_pair_each_rule_with_its_reference():
    from yahtzee_sim.report.variants import variants_numbers

    spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 2000, "seed": 9,
                       "rule_sets": ["yacht"], "yacht_options": ["no-bonus", "fill-in-order"]}, name="t")
    nums = variants_numbers(spec)
    assert len(nums.groups) == 1                       # same boxes, dice and rolls: one dice tape
    frame, eff = nums.to_frame(), nums.effects
    for key in ("yacht+no-bonus", "yacht+fill-in-order"):
        a = nums.totals[key, "keep-largest"].astype(float)
        b = nums.totals["yacht", "keep-largest"].astype(float)
        row = eff.loc[(key, "keep-largest")]
        assert row["reference"] == "yacht" and bool(row["common_dice"])
        assert row["change"] == pytest.approx((a - b).mean())
        assert (row["ci95_low"], row["ci95_high"]) == pytest.approx(t_bounds(a - b))
        exact = frame.loc[(key, "keep-largest"), "exact_mean"] - frame.loc[("yacht", "keep-largest"), "exact_mean"]
        assert row["exact_change"] == pytest.approx(exact)
        assert frame.loc[(key, "keep-largest"), "simulated_mean"] == pytest.approx(a.mean())
    checked = frame["inside_ci"].dropna()
    assert len(checked) == 3 and all(
        bool(r["inside_ci"]) == (r["ci95_low"] <= r["exact_mean"] <= r["ci95_high"]) for _, r in frame.iterrows())


# -- distributions --------------------------------------------------------------------------

def test_distributions_numbers_follow_from_the_exact_pmfs():
    from yahtzee_sim.report.distributions import TABLE_SIZES, distributions_numbers

    spec = parse_spec({"kind": "distributions", **YACHT_IN_ORDER, "strategies": ["keep-largest", "optimal"],
                       "games": 500, "tables": ["summary", "theta", "wins", "tables"], "plots": []}, name="t")
    nums = distributions_numbers(spec)
    assert nums.best == "optimal" and nums.weakest == "keep-largest" and nums.target is None
    assert int(nums.simulated_hist.sum()) == 500
    summary = nums.to_frame()
    for name in ("keep-largest", "optimal"):
        p = nums.dists[name].pmf
        x = np.arange(len(p))
        mean = float(x @ p)
        assert summary.loc[name, "mean"] == pytest.approx(mean, abs=1e-6)
        assert summary.loc[name, "sd"] == pytest.approx(math.sqrt(float((x - mean) ** 2 @ p)), abs=1e-6)
        assert summary.loc[name, "P(>=300)"] == pytest.approx(p[300:].sum(), abs=1e-9)
        assert summary.loc[name, "p50"] == int(np.argmax(np.cumsum(p) >= 0.5 - 1e-12))
    for theta, row in nums.theta.iterrows():
        p = nums.dists[f"optimal:theta={theta:g}"].pmf
        x = np.arange(len(p))
        if theta:
            assert row["certainty_equivalent"] == pytest.approx(math.log(float(p @ np.exp(theta * x))) / theta)
        else:
            assert row["mean"] == summary.loc["optimal", "mean"]
    pk, po = nums.dists["keep-largest"].pmf, nums.dists["optimal"].pmf
    win, tie = beats(po, pk)
    assert nums.wins.loc["optimal", "keep-largest"] == pytest.approx(win, abs=1e-9)
    assert nums.ties.loc["optimal", "keep-largest"] == pytest.approx(tie, abs=1e-9)
    # all equal at a table of n: by symmetry each player's share of wins is 1/n
    assert list(nums.tables.index) == list(TABLE_SIZES)
    assert nums.tables["win_share, all equal"].tolist() == pytest.approx([1 / n for n in TABLE_SIZES])
    assert nums.tables.loc[2, "p_win against keep-largest"] == pytest.approx(win, abs=1e-9)
