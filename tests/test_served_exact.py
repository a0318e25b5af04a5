"""Exact policy values and score distributions where dice served on the first throw
score more (Generala): a brute force of a small served game that counts the throws as
the engine does, the solver, simulation, and the refusals that remain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.cli import main
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.policy import policy_value
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.rules import Box, RuleSet, get_rules
from yahtzee_sim.rules import scoring as sc
from yahtzee_sim.stats import chisquare_gof
from yahtzee_sim.strategies import Strategy, best_legal, get_strategy
from yahtzee_sim.strategies.optimal import OptimalStrategy

from conftest import LowestBox, row_by_row
from plain_game import mean_sd, strategy_outcomes
from test_distribution import _assert_matches_brute_force

GENERALA_OPTIONS = [(), ("no-doble",), ("no-wrap-straight",), ("servida-wins",),
                    ("no-doble", "no-wrap-straight", "servida-wins")]


def small_generala(*, doble=True, upper_bonus=0, few=False) -> RuleSet:
    """Generala on three dice of three faces: Ones to Threes, Escalera (1-2-3, 20; 25
    served), Póker (two of a kind, 40; 45 served), Generala (three alike, 50; 60 served)
    and Generala doble (100 once the Generala box holds a score), three throws;
    ``few``: without Threes and Póker (a game small enough to average ``random``'s
    every choice by brute force)."""
    boxes = [Box(f"u{f}", f"U{f}", sc.upper(f), upper_face=f) for f in ((1, 2) if few else (1, 2, 3))]
    boxes += [Box("escalera", "Escalera", sc.served(sc.straight(3, 20), 5), by_throw=True)]
    if not few:
        boxes += [Box("poker", "Póker", sc.served(sc.of_a_kind(2, value="40"), 5), by_throw=True)]
    boxes += [Box("generala", "Generala", sc.served(sc.five_of_a_kind(50), 10), by_throw=True)]
    if doble:
        boxes.append(Box("generala_doble", "Generala doble", sc.five_of_a_kind(100), needs_five_box=True))
    extra = dict(upper_bonus_threshold=10, upper_bonus=upper_bonus) if upper_bonus else dict(upper_bonus=0)
    return RuleSet(name="small-generala", title="small Generala", boxes=tuple(boxes), n_dice=3,
                   n_faces=3, five_box="generala", five_bonus=0, joker="none", **extra)


SMALL_CASES = {"doble": dict(), "no-doble": dict(doble=False), "upper-bonus": dict(upper_bonus=15)}


class HoldThenReroll(Strategy):
    """Holds every die at its first keep, then keeps the lowest face's dice; writes the
    roll where it gains most as offered (served scores included): a served roll held
    once and then thrown again."""

    name = "hold-then-reroll"

    def keep(self, state, rolls, rolls_left, u):
        if rolls_left == self.rules.n_rolls - 1:
            return self.dice.roll_keep_index[rolls]
        return LowestBox.keep(self, state, rolls, rolls_left, u)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def _strategy(name):
    return {"lowest-box": LowestBox, "hold-then-reroll": HoldThenReroll}.get(name, lambda: get_strategy(name))()


@pytest.mark.parametrize("case", list(SMALL_CASES))
@pytest.mark.parametrize("name", ["keep-largest", "greedy", "heuristic", "lowest-box", "hold-then-reroll"])
def test_small_served_game_matches_brute_force(case, name):
    _check_against_brute_force(small_generala(**SMALL_CASES[case]), name)


def test_small_served_game_random_matches_brute_force():
    """random averaged over its every keep (a full keep of the first throw's dice keeps
    them served) and every legal box."""
    _check_against_brute_force(small_generala(few=True), "random")


def _check_against_brute_force(rules, name):
    joint = strategy_outcomes(rules, _strategy(name), uniform=name == "random")
    dist = distribution(rules, _strategy(name))
    _assert_matches_brute_force(dist, joint, upper_bonus=bool(rules.upper_bonus))
    assert dist.p_served_five > 0
    mean, sd = mean_sd(joint)
    pv = policy_value(rules, _strategy(name))
    assert pv.mean == pytest.approx(mean, rel=1e-12, abs=1e-12)
    assert pv.sd == pytest.approx(sd, rel=1e-12, abs=1e-12)
    assert abs(dist.pmf.sum() - 1.0) < 1e-12
    assert dist.mean == pytest.approx(pv.mean, rel=1e-12)
    assert dist.sd == pytest.approx(pv.sd, rel=1e-12)


@pytest.mark.parametrize("name", ["keep-largest", "greedy", "heuristic"])
def test_small_served_game_tables_equal_asking_row_by_row(name):
    rules = small_generala()
    fast, slow = distribution(rules, name), distribution(rules, row_by_row(name))
    np.testing.assert_allclose(fast.pmf, slow.pmf, rtol=1e-12, atol=1e-15)
    assert fast.p_served_five == pytest.approx(slow.p_served_five, rel=1e-12)


def test_served_scores_matter_in_the_brute_force():
    """The test game is one where the served chain changes the answer: scored as if
    never served, the same strategy's distribution differs."""
    import dataclasses

    rules = small_generala()
    flat = dataclasses.replace(rules, name="never-served", boxes=tuple(
        dataclasses.replace(b, score=(lambda f: lambda c: f(c, 3))(b.score), by_throw=False)
        if b.by_throw else b for b in rules.boxes))
    assert policy_value(rules, "keep-largest").mean > \
        policy_value(flat, "keep-largest").mean + 0.5


@pytest.mark.parametrize("case", list(SMALL_CASES))
def test_small_served_optimal_equals_solver_and_brute_force(case):
    """Optimal play as the simulator plays it: its decision table's keeps, served boxes
    while the dice are the first throw's, served dice held once held."""
    rules = small_generala(**SMALL_CASES[case])
    sol = solve(rules, dtype=np.float64, cache=False)
    pv = policy_value(rules, OptimalStrategy(sol))
    assert pv.mean == pytest.approx(sol.mean, abs=1e-9)
    assert pv.sd == pytest.approx(sol.sd, rel=1e-6)
    strat = OptimalStrategy(sol).prepare(rules)
    table = strat.decision_table()
    sp = sol.space

    def ask(state, rolls, later, served):
        row = table.row_of[sp.flat(*sp.index(state.filled, state.upper_total, state.five_box_full))]
        keeps = {j: strat._sub_keep[rolls, np.asarray(table.keeps[j])[row, rolls]]
                 for j in range(1, rules.n_rolls)}
        return np.asarray(table.boxes)[row, rolls], np.asarray(table.served_boxes)[row, rolls], keeps

    joint = strategy_outcomes(rules, strat, ask=ask, holds_served=True)
    dist = distribution(rules, OptimalStrategy(sol))
    _assert_matches_brute_force(dist, joint, upper_bonus=bool(rules.upper_bonus))
    assert mean_sd(joint)[0] == pytest.approx(sol.mean, abs=1e-9)


@pytest.mark.parametrize("options", GENERALA_OPTIONS, ids=lambda o: "+".join(o) or "plain")
def test_generala_optimal_policy_value_equals_solver(options):
    rules = get_rules("generala", options)
    sol = solve(rules, dtype=np.float64, cache=False)
    pv = policy_value(rules, OptimalStrategy(sol))
    assert pv.mean == pytest.approx(sol.mean, abs=1e-9)
    # the sd as in test_policy's optimal tests: the strategy decides in float32, so
    # near-ties of equal mean may go the other way than the solver's variance took
    assert pv.sd == pytest.approx(sol.sd, abs=1e-3)


@pytest.mark.parametrize("options", GENERALA_OPTIONS, ids=lambda o: "+".join(o) or "plain")
@pytest.mark.parametrize("name", ["random", "keep-largest", "greedy", "heuristic"])
def test_generala_distribution_agrees_with_policy_value(options, name):
    dist = distribution("generala", name, options=options)
    pv = policy_value("generala", name, options=options)
    assert abs(dist.pmf.sum() - 1.0) < 1e-12
    assert dist.mean == pytest.approx(pv.mean, abs=1e-9)
    assert dist.sd == pytest.approx(pv.sd, abs=1e-9)
    assert 0 < dist.p_served_five < dist.p_five_of_a_kind_rolled
    assert "served_five_rate" in dist.summary()


def test_servida_wins_does_not_change_a_solitaire_score():
    base = distribution("generala", "greedy")
    wins = distribution("generala", "greedy", options=["servida-wins"])
    np.testing.assert_array_equal(base.pmf, wins.pmf)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["keep-largest", "heuristic"])
def test_generala_simulated_mean_is_inside_the_exact_ci(name):
    """Sized to catch a bias of a tenth of a point: 4 standard errors are at most 0.1
    (keep-largest's sd is 48.6: 3.8 million games, se 0.025; heuristic's 21.5: 750,000
    games; about 10 and 5 s)."""
    games = {"keep-largest": 3_800_000, "heuristic": 750_000}[name]
    pv = policy_value("generala", name)
    s = simulate("generala", name, games, seed=16).summary()
    assert 4 * pv.sd / math.sqrt(games) <= 0.1
    assert abs(s["mean"] - pv.mean) < 4 * pv.sd / math.sqrt(games)
    # the simulated servida rate against the exact one (a binomial count)
    p = distribution("generala", name).p_served_five
    assert abs(s["served_five_rate"] - p) < 4 * math.sqrt(p * (1 - p) / games)


def test_generala_simulated_histogram_fits_the_exact_pmf():
    dist = distribution("generala", "greedy")
    games = 40_000
    hist = simulate("generala", "greedy", games, seed=7).aggregate.total_hist
    hist = np.pad(hist, (0, max(0, len(dist.pmf) - len(hist))))
    assert hist[len(dist.pmf):].sum() == 0               # no score the exact PMF calls impossible
    assert chisquare_gof(hist[:len(dist.pmf)], dist.pmf).pvalue > 1e-4


# -- refusals ----------------------------------------------------------------------------

def test_exact_head_to_head_refuses_servida_wins(capsys):
    args = ["head-to-head", "--rules", "generala", "--option", "servida-wins", "--players",
            "greedy", "keep-largest", "--exact"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "servida-wins" in err and "without --exact" in err


def test_win_odds_refuses_servida_wins_distributions():
    from yahtzee_sim.exact.winodds import win_odds

    d = distribution("generala", "greedy", options=["servida-wins"])
    with pytest.raises(ValueError, match="servida-wins"):
        win_odds([d, d])


def test_exact_head_to_head_on_generala(capsys):
    import json

    args = ["head-to-head", "--rules", "generala", "--players", "optimal", "greedy", "--exact", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["players"]
    assert rows[0]["mean_score"] == pytest.approx(solve("generala").mean, abs=1e-4)
    assert sum(r["win_share"] for r in rows) == pytest.approx(1.0, abs=1e-12)
    assert rows[0]["p_win"] > rows[1]["p_win"]


def test_target_play_strategy_is_still_refused():
    with pytest.raises(ValueError, match="points so far"):
        policy_value("generala", "target:T=150")
