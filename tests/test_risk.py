"""Risk-sensitive optimal play: brute force on a tiny game (tests/plain_game.py), agreement with the exact
distribution of its own decisions, theta -> 0, names, cache."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import tiny_rules
from plain_game import optimal_risk
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.risk import solve_risk
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.strategies import get_strategy


@pytest.mark.parametrize("theta", [0.3, 0.05, -0.05, -0.3])
@pytest.mark.parametrize("case", [dict(), dict(joker="free"), dict(fill_order="in-order")])
def test_tiny_game_matches_brute_force(theta, case):
    rules = tiny_rules(**case)
    sol = solve_risk(rules, theta, cache=False)
    assert sol.certainty_equivalent == pytest.approx(optimal_risk(rules, theta), abs=1e-9)


@pytest.mark.parametrize("theta", [0.02, -0.02])
def test_certainty_equivalent_equals_exact_distribution_of_its_play(theta):
    """The solver's value and the forward distribution of the strategy's own decisions
    (asked like any strategy) give the same log E[exp(theta S)] / theta."""
    opts = ["fill-in-order"]
    sol = solve_risk("yacht", theta, options=opts, cache=False)
    dist = distribution("yacht", f"optimal:theta={theta}", options=opts)
    x = np.arange(len(dist.pmf))
    ce = math.log(dist.pmf @ np.exp(theta * (x - dist.mean))) / theta + dist.mean
    assert sol.certainty_equivalent == pytest.approx(ce, abs=1e-9)
    mean = solve("yacht", options=opts, dtype="float64", cache=False).mean
    # a risk seeker gives up expected points; so does a risk avoider
    assert dist.mean <= mean + 1e-9
    assert (sol.certainty_equivalent > mean) == (theta > 0)


def test_theta_to_zero_is_the_mean_optimum():
    opts = ["fill-in-order"]
    mean = solve("yacht", options=opts, dtype="float64", cache=False).mean
    for theta in (1e-6, -1e-6):
        assert solve_risk("yacht", theta, options=opts, cache=False).certainty_equivalent == \
            pytest.approx(mean, abs=1e-2)


def test_names_and_bad_input():
    assert get_strategy("optimal:theta=0.02").theta == 0.02
    assert get_strategy("optimal:theta=0").name == "optimal:theta=0"
    for bad in ("optimal:theta=hot", "optimal:theta=2", "optimal:theta=nan", "optimal:gamma=1",
                "optimal:theta"):
        with pytest.raises(ValueError, match="theta"):
            get_strategy(bad)
    with pytest.raises(ValueError, match="optimal:theta=<x>"):
        get_strategy("no-such")
    with pytest.raises(ValueError, match="theta = 0"):
        solve_risk("yacht", 0.0)


def test_cache_round_trip(tmp_path):
    from yahtzee_sim.exact import risk

    risk._MEMO.clear()                  # the in-process memo is shared by every cache folder
    a = solve_risk("yacht", 0.01, options=["fill-in-order"], cache_dir=tmp_path)
    assert a.cache == "miss"
    risk._MEMO.clear()
    b = solve_risk("yacht", 0.01, options=["fill-in-order"], cache_dir=tmp_path)
    assert b.cache == "hit"
    np.testing.assert_array_equal(a.values, b.values)
    assert solve_risk("yacht", 0.01, options=["fill-in-order"], cache_dir=tmp_path).cache == "memory"


def test_served_rule_sets_are_refused_not_answered_wrongly():
    # The risk tables model no served scores: at theta near 0 Generala's certainty
    # equivalent came out 160.49 against the exact optimum 162.53. Refused in one line.
    from yahtzee_sim.exact.risk import solve_risk

    with pytest.raises(ValueError, match="risk-sensitive solver does not handle generala"):
        solve_risk("generala", 1e-6, cache=False)
