"""Exact odds (one roll, per turn, rolls to five of a kind) against published values,
against independent computations, and against the simulators.

Published values live only here, each with its source next to it.
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from yahtzee_sim import simulate, simulate_turns
from yahtzee_sim.cli import main
from yahtzee_sim.dice import dice_tables
from yahtzee_sim.exact.odds import box_score_distribution, one_roll_odds, roll_counts_exact
from yahtzee_sim.strategies.chase import ChasePattern
from yahtzee_sim.exact.turns import (best_turn_odds, expected_rolls,
                                     pattern_policy, per_turn_report, strategy_policy,
                                     transition_counts, turn_odds)
from yahtzee_sim.exact.widget import best_keeps
from yahtzee_sim.patterns import HAND_CLASSES, check_pattern, hand_class, pattern_names, pattern_table
from yahtzee_sim.rules import get_rules, rule_names
from yahtzee_sim.strategies import Strategy, best_legal, strategy_names

D = dice_tables()


# -- one roll ---------------------------------------------------------------------------

# Counts out of 6**5 = 7776 ordered throws. Sources: standard combinatorics (derivation in
# each comment) and the first-roll table of source 003 ("6 su 7.776", "circa 2%", ...),
# which is also the table in DataGenetics, "Yahtzee probability" (2012).
PUBLISHED_ONE_ROLL = {
    "five_of_a_kind": 6,            # one per face; source 003: "6 su 7.776, circa 0,08%"
    "four_of_a_kind": 156,          # exactly four 6*5*C(5,4)=150, plus 6 five of a kind; source 003 "circa 2%"
    "four_of_a_kind_exactly": 150,
    "full_house": 300,              # 6*5 faces x C(5,3) places; source 003 "Full circa 3,9%"
    "large_straight": 240,          # 2 runs x 5! orders; source 003 "circa 3,1%"
    "small_straight": 1200,         # source 003 "Scala piccola o meglio circa 15,4%"
    "three_of_a_kind": 1656,        # 1500 exactly three (6*C(5,3)*5*5) + 150 + 6; source 003 "circa 21,3%"
    "three_of_a_kind_exactly": 1500,
    "largest_group_1": 720,         # 6*5*4*3*2 all different
    "largest_group_5": 6,
}

# Source 003's table, as printed (percent, decimals as printed).
SOURCE_003_PERCENT = {
    "five_of_a_kind": ("0.08", 2), "four_of_a_kind": ("2", 0), "full_house": ("3.9", 1),
    "large_straight": ("3.1", 1), "small_straight": ("15.4", 1), "three_of_a_kind": ("21.3", 1),
}


def test_one_roll_counts_match_published_values():
    odds = one_roll_odds("yahtzee")
    assert odds.total == 7776
    for name, count in PUBLISHED_ONE_ROLL.items():
        assert odds.count(name) == count, name
        assert odds.fraction(name) == Fraction(count, 7776)
        assert odds.probability(name) == pytest.approx(count / 7776, abs=1e-15)


def test_one_roll_matches_seed_003_table_as_printed():
    odds = one_roll_odds("yahtzee")
    for name, (text, decimals) in SOURCE_003_PERCENT.items():
        assert f"{100 * odds.probability(name):.{decimals}f}" == text, name


def test_one_roll_invariants():
    odds = one_roll_odds("yahtzee")
    groups = [odds.count(f"largest_group_{k}") for k in range(1, 6)]
    assert sum(groups) == 7776
    assert odds.count("small_straight") == odds.count("small_straight_exactly") + odds.count("large_straight")
    assert odds.count("full_house_or_five") == odds.count("full_house") + 6
    assert odds.count("one_pair") == 7776 - groups[0]
    # Exact integer counts agree with the float dice tables.
    assert np.allclose(roll_counts_exact(D) / 7776, D.first_roll_prob, rtol=0, atol=1e-15)
    frame = odds.to_frame()
    assert frame.loc["five_of_a_kind", "one_in"] == "1 in 1296"


@pytest.mark.parametrize("name", rule_names())
def test_box_score_distribution_every_rule_set(name):
    rules = get_rules(name)
    dist = box_score_distribution(rules)
    assert list(dist["box"].unique()) == list(rules.box_names)
    assert (dist.groupby("box")["count"].sum() == rules.n_faces ** rules.n_dice).all()
    means = dist.assign(m=dist["points"] * dist["probability"]).groupby("box", sort=False)["m"].sum()
    # a box enabled by the five box (Generala doble) pays nothing on a fresh card
    fresh = np.where([b.needs_five_box for b in rules.boxes], 0, rules.score_table)
    expected = rules.dice.first_roll_prob @ fresh
    assert np.allclose(means.to_numpy(), expected, atol=1e-12)


def test_box_score_distribution_known_boxes():
    dist = box_score_distribution("yahtzee").set_index(["box", "points"])["count"]
    assert dist[("yahtzee", 50)] == 6
    assert dist[("full_house", 25)] == 300
    assert dist[("large_straight", 40)] == 240
    assert dist[("small_straight", 30)] == 1200
    assert dist[("ones", 5)] == 1 and dist[("ones", 0)] == 5**5
    # Options change the distribution: Yacht with full-house-25 pays a flat 25.
    yacht = box_score_distribution("yacht", ["full-house-25"]).query("box == 'full_house'")
    assert set(yacht["points"]) == {0, 25}


# -- per turn ------------------------------------------------------------------------------

def test_five_of_a_kind_per_turn_under_keep_largest():
    odds = turn_odds("yahtzee", "keep-largest")
    p = odds.probability("five_of_a_kind")
    # Sources 001 ("約4.6%") and 003 ("circa il 4,6% dei turni, ... una volta ogni 22 turni").
    assert f"{100 * p:.1f}" == "4.6"
    assert round(odds.turns_per("five_of_a_kind")) == 22
    # DataGenetics, "Yahtzee probability" (2012): 4.6029% keeping the most common face.
    assert p == pytest.approx(0.046029, abs=5e-7)
    # Exact arithmetic: denominator divides 6**15.
    assert 6**15 % odds.fraction("five_of_a_kind").denominator == 0


def test_turn_distribution_sums_to_one_and_matches_float_chain():
    for policy in ["keep-largest", "random", pattern_policy("yahtzee", "full_house")]:
        odds = turn_odds("yahtzee", policy)
        assert sum(int(w) for w in odds.roll_weights) == odds.denominator
        assert odds.hand_class_probabilities().sum() == pytest.approx(1.0, abs=1e-12)


def test_random_policy_is_exact_average_over_distinct_keeps():
    # Independent float chain: `random` keeps each distinct sub-keep with equal chance.
    step = np.zeros((D.n_rolls, D.n_rolls))
    for r in range(D.n_rolls):
        subs = D.subkeeps[r, : D.n_subkeeps[r]]
        step[r] = D.transition[subs].mean(axis=0)
    dist = D.first_roll_prob @ step @ step
    assert np.allclose(turn_odds("yahtzee", "random").roll_probabilities(), dist, atol=1e-14)
    assert not strategy_policy("yahtzee", "random").deterministic


def test_best_keeps_chain_agrees_with_widget_values():
    table = pattern_table(D)
    finals = table.to_numpy(float).T
    plan = best_keeps(D, finals, rolls_left=2)
    widget = plan.values[2] @ D.first_roll_prob
    best = best_turn_odds("yahtzee")
    assert np.allclose(best["probability"].to_numpy(), widget, atol=1e-13)
    # Each pattern's own best keeps beat (or tie) keep-largest on that pattern.
    kl = turn_odds("yahtzee", "keep-largest").to_frame()
    assert (best["probability"] >= kl["probability"] - 1e-15).all()
    assert best.loc["five_of_a_kind", "fraction"] == kl.loc["five_of_a_kind", "fraction"]


def test_transition_counts_are_exact():
    t = transition_counts(D)
    assert (t.sum(axis=1) == 7776).all()
    assert np.allclose(t / 7776, D.transition, atol=1e-16)


# -- unlimited rolls ---------------------------------------------------------------------------

def test_expected_rolls_to_five_of_a_kind():
    kl = expected_rolls("yahtzee", "keep-largest")
    # DataGenetics, "Yahtzee probability" (2012): 11.09 rolls on average keeping the most
    # common face (also quoted by Woodward's Yahtzee analyses).
    assert kl.expected == pytest.approx(11.09, abs=0.005)
    assert kl.fraction is not None and float(kl.fraction) == kl.expected
    # Rolling without limit, the first three rolls are the turn of keep-largest.
    assert kl.within(3) == pytest.approx(turn_odds("yahtzee").probability("five_of_a_kind"), abs=1e-14)
    assert kl.within(1) == pytest.approx(6 / 7776, abs=1e-15)
    opt = expected_rolls("yahtzee", "optimal")
    assert opt.expected <= kl.expected + 1e-12


def test_optimal_expected_rolls_matches_value_iteration():
    hit = pattern_table(D)["five_of_a_kind"].to_numpy()
    v = np.zeros(D.n_rolls)
    sub = np.where(D.subkeeps >= 0, D.subkeeps, 0)
    for _ in range(3000):  # v(r) = min over sub-keeps of 1 + E[v(next roll)]
        cost = 1.0 + D.transition @ v
        c = np.where(D.subkeeps >= 0, cost[sub], np.inf).min(axis=1)
        v = np.where(hit, 0.0, c)
    brute = 1.0 + D.first_roll_prob @ v
    assert expected_rolls("yahtzee", "optimal").expected == pytest.approx(brute, abs=1e-9)


class _HoldAll(Strategy):
    """Keeps every die: the turn ends with its first roll."""

    name = "hold-all"

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls].astype(np.intp)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def test_stuck_policy_needs_infinitely_many_rolls():
    assert expected_rolls("yahtzee", _HoldAll()).expected == float("inf")
    odds = turn_odds("yahtzee", _HoldAll())  # final roll = first roll
    assert odds.fraction("full_house") == Fraction(300, 7776)


def test_expected_rolls_random_is_finite_but_long():
    r = expected_rolls("yahtzee", "random")
    assert 11.09 < r.expected < np.inf and r.fraction is None


def test_per_turn_report_frames():
    rep = per_turn_report("yahtzee", "keep-largest")
    frame = rep.to_frame()
    assert list(frame.index) == pattern_names()
    assert rep.rolls_frame().loc["optimal", "expected_rolls"] == pytest.approx(11.09, abs=0.005)


# -- Monte Carlo against exact ------------------------------------------------------------------

def _chi_square_p(result, exact_probs: np.ndarray) -> float:
    observed = np.bincount(hand_class(D), weights=result.roll_counts, minlength=len(HAND_CLASSES))
    expected = exact_probs * result.n_turns
    keep = expected > 0
    assert observed[~keep].sum() == 0, "simulation produced a class the exact chain calls impossible"
    return float(stats.chisquare(observed[keep], expected[keep]).pvalue)


def _check_wilson(result, odds, patterns):
    frame = result.to_frame(level=0.99)
    for name in patterns:
        p = odds.probability(name)
        assert frame.loc[name, "ci_low"] <= p <= frame.loc[name, "ci_high"], (result.strategy, name, p)


BASE_STRATEGIES = [s for s in ["keep-largest", "random", "greedy", "heuristic"] if s in strategy_names()]


@pytest.mark.parametrize("strategy", BASE_STRATEGIES)
def test_turn_simulator_agrees_with_exact_under_strategy(strategy):
    res = simulate_turns("yahtzee", strategy, 200_000, seed=11)
    odds = turn_odds("yahtzee", strategy)
    assert _chi_square_p(res, odds.hand_class_probabilities().to_numpy()) > 1e-3
    _check_wilson(res, odds, ["five_of_a_kind", "full_house", "large_straight", "small_straight",
                              "three_of_a_kind"])


@pytest.mark.parametrize("target", ["five_of_a_kind", "full_house", "large_straight", "small_straight_exactly"])
def test_turn_simulator_with_target_agrees_with_exact(target):
    res = simulate_turns("yahtzee", "random", 200_000, seed=12, target=target)
    assert res.strategy == f"chase:{target}"
    odds = turn_odds("yahtzee", pattern_policy("yahtzee", target))
    assert _chi_square_p(res, odds.hand_class_probabilities().to_numpy()) > 1e-3
    _check_wilson(res, odds, [target, "five_of_a_kind", "one_pair"])


def test_target_overrides_the_strategy_keeps():
    a = simulate_turns("yahtzee", "random", 5000, seed=3, target="large_straight")
    b = simulate_turns("yahtzee", "keep-largest", 5000, seed=3, target="Large-Straight")
    assert (a.roll_counts == b.roll_counts).all()


def test_first_roll_frequencies_agree_with_exact():
    res = simulate_turns("yahtzee", _HoldAll(), 300_000, seed=13)
    one = one_roll_odds("yahtzee")
    probs = np.bincount(hand_class(D), weights=roll_counts_exact(D), minlength=len(HAND_CLASSES)) / 7776
    assert _chi_square_p(res, probs) > 1e-3
    frame = res.to_frame(level=0.99)
    for name in pattern_names():
        assert frame.loc[name, "ci_low"] <= one.probability(name) <= frame.loc[name, "ci_high"], name


def test_chase_pattern_plays_full_games():
    res = simulate("yahtzee", ChasePattern("five_of_a_kind"), 2048, seed=4)
    assert res.summary()["games"] == 2048


# -- bad input -----------------------------------------------------------------------------------

def test_unknown_pattern_errors_list_valid_names():
    for call in [lambda: check_pattern("yahtzee"), lambda: ChasePattern("straight"),
                 lambda: pattern_policy("yahtzee", "nope"),
                 lambda: expected_rolls("yahtzee", pattern="nope"),
                 lambda: one_roll_odds().fraction("nope"),
                 lambda: simulate_turns("yahtzee", "keep-largest", 10, seed=1, target="nope")]:
        with pytest.raises(ValueError, match=r"unknown pattern .*valid patterns: five_of_a_kind, "):
            call()


def test_unknown_strategy_and_rules_errors():
    with pytest.raises(ValueError, match="unknown strategy 'nope'; valid strategies: "):
        turn_odds("yahtzee", "nope")
    with pytest.raises(ValueError, match="unknown strategy"):
        expected_rolls("yahtzee", "nope")
    with pytest.raises(ValueError, match="unknown rule set"):
        one_roll_odds("nope")


class _Cheater(Strategy):
    name = "cheater"

    def keep(self, state, rolls, rolls_left, u):
        return np.full(len(rolls), self.dice.roll_keep_index[0], dtype=np.intp)  # five ones


def test_illegal_keeps_are_reported():
    with pytest.raises(ValueError, match="strategy 'cheater' kept dice it does not have"):
        strategy_policy("yahtzee", _Cheater())


# -- command line ----------------------------------------------------------------------------------

def test_cli_odds_table_and_json(capsys):
    assert main(["odds", "--rules", "yacht"]) == 0
    out = capsys.readouterr().out
    assert "five_of_a_kind" in out and "6/7776" in out and "1 in 1296" in out
    assert main(["odds", "--json", "--per-turn", "--boxes"]) == 0
    data = json.loads(capsys.readouterr().out)
    five = next(r for r in data["per_turn"]["patterns"] if r["pattern"] == "five_of_a_kind")
    exact = Fraction(five["strategy_fraction"]["numerator"], five["strategy_fraction"]["denominator"])
    assert exact == turn_odds().fraction("five_of_a_kind")  # fractions as numbers, not text
    assert five["strategy_fraction"]["value"] == pytest.approx(float(exact))
    rolls = {r["policy"]: r for r in data["per_turn"]["expected_rolls_to_five_of_a_kind"]}
    assert rolls["keep-largest"]["expected_rolls"] == pytest.approx(11.09, abs=0.005)
    assert round(data["per_turn"]["turns_per_five_of_a_kind"]["strategy"]) == 22
    assert {"box", "points", "count", "fraction", "probability"} <= set(data["boxes"][0])


def test_cli_per_turn_text(capsys):
    assert main(["odds", "--per-turn", "--strategy", "random"]) == 0
    out = capsys.readouterr().out
    assert "Expected rolls to five of a kind" in out and "optimal" in out and "random" in out


@pytest.mark.parametrize("argv, message", [
    (["odds", "--per-turn", "--strategy", "nope"], "unknown strategy 'nope'"),
    (["odds", "--per-turn", "--strategy", ""], "unknown strategy ''"),  # empty is not "the default"
    (["odds", "--rules", "nope"], "unknown rule set 'nope'"),
    (["odds", "--strategy", "random"], "--strategy needs --per-turn"),
    (["turns", "--turns", "10", "--target", "yahtzee"], "unknown pattern 'yahtzee'; valid patterns: "),
])
def test_cli_bad_input(capsys, argv, message):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and captured.err.count("\n") == 1


def test_cli_turns_target(capsys):
    assert main(["turns", "--turns", "4096", "--seed", "1", "--target", "five_of_a_kind", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["strategy"] == "chase:five_of_a_kind" and data["target"] == "five_of_a_kind"
