"""The exact engine on the rest of the family (issue 8 §1-2): served scores, bonus
tiers, the doble flag, other dice and faces; and clear refusals where the state
space is too large."""

from __future__ import annotations

import numpy as np
import pytest

from test_exact_values import _small_served

from yahtzee_sim import simulate
from yahtzee_sim.exact.advisor import advise
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.strategies.optimal import OptimalStrategy


def _ci_check(rules, sol, n, seed):
    res = simulate(rules, OptimalStrategy(sol), n, seed=seed)
    s = res.summary()
    half = 2.576 * sol.sd / np.sqrt(n)                            # 99% CI of the mean
    assert abs(s["mean"] - sol.expected_score) < half, (s["mean"], sol.expected_score, half)
    return s


def test_optimal_strategy_plays_a_served_game_at_its_exact_value():
    rules = _small_served(n_dice=3)
    sol = solve(rules, cache=False)
    _ci_check(rules, sol, 200_000, seed=3)


def test_advisor_on_a_served_game_averages_to_the_solver():
    """Fresh card: the mean over first rolls of the best keep's value is the game's value."""
    rules = _small_served(n_dice=3)
    sol = solve(rules, cache=False, dtype=np.float64)
    d = rules.dice
    best = [advise(rules, d.roll_dice[r].tolist(), rolls_left=rules.n_rolls - 1, solution=sol)
            .best["expected"] for r in range(d.n_rolls)]
    assert abs(float(np.dot(best, d.first_roll_prob)) - sol.expected_score) < 1e-9


def test_advisor_served_dice_are_worth_more():
    rules = _small_served(n_dice=3)
    sol = solve(rules, cache=False, dtype=np.float64)
    dice = [1, 2, 3]                                                  # a straight
    served = advise(rules, dice, rolls_left=0, served=True, solution=sol).to_frame()
    later = advise(rules, dice, rolls_left=0, solution=sol)
    assert later.notes and "not served" in later.notes[0]
    later = later.to_frame()
    s = served.set_index("box").loc["straight", "points"]
    t = later.set_index("box").loc["straight", "points"]
    assert (s, t) == (25, 20)
    with pytest.raises(ValueError, match="first throw"):
        advise(rules, dice, rolls_left=rules.n_rolls - 1, served=False, solution=sol)
    with pytest.raises(ValueError, match="same for served"):
        advise("yacht", [1, 2, 3, 4, 5], rolls_left=0, served=True)


def test_policy_value_refuses_served_games():
    from yahtzee_sim.exact.policy import policy_value

    with pytest.raises(ValueError, match="served"):
        policy_value(_small_served(n_dice=3), "greedy")
