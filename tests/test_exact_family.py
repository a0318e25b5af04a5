"""The exact engine on the rest of the family (issue 8 §1-2): served scores, bonus
tiers, the doble flag, other dice and faces; and clear refusals where the state
space is too large."""

from __future__ import annotations

import numpy as np
import pytest

from test_solver_values import _small_served

from yahtzee_sim import simulate
from yahtzee_sim.exact.advisor import advise
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.strategies.optimal import OptimalStrategy


def _ci_check(rules, sol, n, seed):
    res = simulate(rules, OptimalStrategy(sol), n, seed=seed)
    s = res.summary()
    half = 2.576 * sol.sd / np.sqrt(n)                            # 99% CI of the mean
    assert abs(s["mean"] - sol.mean) < half, (s["mean"], sol.mean, half)
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
    assert abs(float(np.dot(best, d.first_roll_prob)) - sol.mean) < 1e-9


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


def test_policy_value_of_optimal_on_a_served_game_equals_a_plain_dp():
    """Served games are evaluated exactly now (they were refused): optimal play's policy
    value is the plain DP's optimum of the turn played literally (throws counted)."""
    from yahtzee_sim.exact.policy import policy_value
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.strategies.optimal import OptimalStrategy

    rules = _small_served(n_dice=3)
    start = OptimalMean(rules).value((False,) * rules.n_boxes, 0, False)
    pv = policy_value(rules, OptimalStrategy(solve(rules, dtype=np.float64, cache=False)))
    assert abs(pv.mean - start) < 1e-9


# -- the new rule sets ------------------------------------------------------------------

from plain_game import OptimalMean  # noqa: E402
from test_solver_values import _check_sample, _sample_states  # noqa: E402

from yahtzee_sim.rules import get_rules  # noqa: E402


def _reduced(name, options=(), boxes=(), n_dice=None):
    """A rule set of the family cut down to a few boxes (and dice), for a plain DP."""
    import dataclasses

    rules = get_rules(name, options)
    keep = tuple(b for b in rules.boxes if b.name in boxes)
    changes = dict(boxes=keep, name=f"reduced-{name}")
    if n_dice:
        changes["n_dice"] = n_dice
    return dataclasses.replace(rules, **changes)


def _every_state_matches(rules, dp):
    start = dp.value((False,) * rules.n_boxes, 0, False)
    sol = solve(rules, dtype=np.float64, cache=False)
    assert abs(sol.mean - start) < 1e-9
    keys = list(dp.memo)
    got = sol.value(np.array([k[0] for k in keys]), [k[1] for k in keys], [k[2] for k in keys])
    assert np.abs(got - np.array([dp.memo[k] for k in keys])).max() < 1e-9
    return sol


@pytest.mark.slow
def test_reduced_generala_equals_a_literal_dp():
    """Generala's served Full, Póker and Generala and the doble (enabled by any Generala
    in its box, served 60 included), five dice: every state against a literal DP."""
    rules = _reduced("generala", boxes=("full", "poker", "generala", "generala_doble"))
    assert rules.roll_dependent and rules.five_box == "generala"
    _every_state_matches(rules, OptimalMean(rules))


def test_reduced_seven_faces_equals_a_plain_dp():
    rules = _reduced("yacht", ["faces-7"], boxes=("sixes", "sevens", "choice", "yacht"), n_dice=3)
    assert rules.n_faces == 7 and rules.dice.n_rolls == 84
    _every_state_matches(rules, OptimalMean(rules))


@pytest.mark.slow
def test_reduced_maxi_yatzy_six_dice_equals_a_plain_dp():
    """Six dice (462 rolls, 924 keeps) as in Maxi Yatzy without saved throws, whose
    full solve takes minutes: its own boxes cut down to four, every state against the
    plain DP."""
    rules = _reduced("maxi-yatzy", ["no-saved-throws"], boxes=("sixes", "three_pairs", "villa", "maxi_yatzy"))
    assert rules.n_dice == 6 and rules.dice.n_rolls == 462 and rules.dice.n_keeps == 924
    _every_state_matches(rules, OptimalMean(rules))


def test_kniffel_with_the_100_bonus_is_yahtzee():
    a = solve("kniffel", options=["kniffel-bonus-100"])
    b = solve("yahtzee")
    assert a.mean == b.mean and a.sd == b.sd
    assert np.array_equal(a.values, b.values, equal_nan=True)


@pytest.mark.parametrize("name,options", [("kniffel", ()), ("kismet", ()), ("yacht", ("faces-7",)),
                                          pytest.param("yahtzee", ("faces-7",), marks=pytest.mark.slow)])
def test_family_mid_game_states_are_exact_maxima(name, options):
    """One exact Bellman step (dense keep matrix, plain maxima) on sampled states;
    float32 tables, so within 2e-4."""
    sol = solve(name, options=options)
    assert _check_sample(sol, _sample_states(sol, 300, seed=4)) < 2e-4


def test_generala_options_order_as_they_should():
    plain = solve("generala").mean
    assert solve("generala", options=["no-doble"]).mean < plain
    assert solve("generala", options=["no-wrap-straight"]).mean < plain
    assert solve("generala", options=["servida-wins"]).mean == plain   # solitaire: still 60


@pytest.mark.slow
@pytest.mark.parametrize("name,options,n", [("generala", (), 400_000), ("generala", ("no-doble",), 100_000),
                                            ("kniffel", (), 40_000), ("kniffel", ("free-joker",), 40_000),
                                            ("kismet", (), 40_000), ("yacht", ("faces-7",), 40_000),
                                            ("yahtzee", ("faces-7",), 40_000)])
def test_optimal_strategy_mean_inside_the_ci_of_the_exact_value(name, options, n):
    rules = get_rules(name, options)
    _ci_check(rules, solve(rules), n, seed=17)


@pytest.mark.slow
def test_maxi_yatzy_without_saved_throws_plays_at_its_exact_value():
    """The one solvable game whose cold solve (about 50 s and 80 CPU s on a quiet machine, both cores; see
    benchmarks/RESULTS.md) is too long for the suite: checked when the user's cache holds its table (`yahtzee-sim solve --rules
    maxi-yatzy --option no-saved-throws` puts it there), skipped otherwise."""
    from conftest import USER_SOLVER_CACHE

    from yahtzee_sim.exact import cache as solver_cache
    from yahtzee_sim.exact.solver import _meta, cache_path

    rules = get_rules("maxi-yatzy", ["no-saved-throws"])
    path = cache_path(rules, cache_dir=USER_SOLVER_CACHE)
    arrays = solver_cache.load(path, _meta(rules, "float32")) if path.exists() else None
    if arrays is None:
        pytest.skip(f"no valid cached table for {rules.key} in {USER_SOLVER_CACHE} (a solve of about 80 CPU seconds: "
                    "yahtzee-sim solve --rules maxi-yatzy --option no-saved-throws)")
    sol = solve(rules, cache_dir=USER_SOLVER_CACHE)
    assert sol.cache == "hit"
    _ci_check(rules, sol, 40_000, seed=17)


@pytest.mark.parametrize("name,options,why", [
    # balut: its 2**28 cards pass the memory estimate on a machine of 17 GB or more, and
    # then its points refuse it
    ("balut", (), "million)|whole finished card"), ("yamb", (), "columns"), ("maxi-yatzy", (), "banked throws")])
def test_unsolvable_rule_sets_say_why_and_what_works_instead(name, options, why):
    from yahtzee_sim.exact.extremes import extreme_score
    from yahtzee_sim.exact.policy import policy_value

    rules = get_rules(name, options)
    calls = [lambda: solve(rules, cache=False), lambda: advise(rules, [1] * rules.n_dice, rolls_left=0),
             lambda: policy_value(rules, "greedy"), lambda: simulate(rules, "optimal", 10, seed=1)]
    if rules.n_boxes > 20:          # (maxi-yatzy's best and worst cards are within reach)
        calls.append(lambda: extreme_score(rules))
    for call in calls:
        with pytest.raises(ValueError) as err:
            call()
        msg = str(err.value)
        assert "\n" not in msg and "simulate" in msg and any(w in msg for w in why.split("|")), msg


def test_a_state_space_over_the_limit_is_refused_before_any_work(monkeypatch):
    """The limit is the machine's memory: on a machine of 6 GB (3 GB allowed) Maxi Yatzy
    without saved throws (29,360,126 states, 2**20 cards x 85 upper totals: 2.82 GB
    measured, 16 B per dense entry, 56 per state and 64 MiB estimated) gets the one-line
    refusal that says so, as soon as its states are counted; with 8 GB it passes that
    check (the solve itself is not run here)."""
    from yahtzee_sim.exact import space

    rules = get_rules("maxi-yatzy", ["no-saved-throws"])
    need = 16 * (1 << 20) * 85 + 56 * 29_360_126 + 64 * 2**20
    space.state_space.cache_clear()
    monkeypatch.setattr(space, "machine_memory", lambda: 6_000_000_000)
    try:
        with pytest.raises(ValueError) as err:
            solve(rules, cache=False)
        monkeypatch.setattr(space, "machine_memory", lambda: 8_000_000_000)
        assert space.state_space(rules).n_states == 29_360_126
    finally:
        space.state_space.cache_clear()
    msg = str(err.value)
    assert "\n" not in msg and "29,360,126 reachable states" in msg and "simulate" in msg, msg
    assert (f"about {need / 1e9:.1f} GB to solve, more than the 3.0 GB allowed here "
            "(50% of this machine's 6.0 GB of memory)") in msg, msg


def test_a_dense_table_beyond_the_memory_is_refused_before_its_states_are_counted(monkeypatch):
    from yahtzee_sim.exact import space

    rules = get_rules("maxi-yatzy", ["no-saved-throws"])
    # its two dense tables alone (1.43 GB) and the state space's arrays over every card
    # are more than the 1.0 GB a 2 GB machine allows
    monkeypatch.setattr(space, "machine_memory", lambda: 2_000_000_000)
    with pytest.raises(ValueError) as err:
        space.require_solvable(rules)
    msg = str(err.value)
    assert "2**20 score cards times 85 upper totals (89 million)" in msg and "1.0 GB allowed" in msg, msg


@pytest.mark.parametrize("evaluate", ["policy_value", "distribution"])
def test_maxi_yatzy_is_solvable_but_too_large_to_evaluate_a_strategy(evaluate):
    """Refused at once, before the strategy is prepared (optimal would first start the
    solve of about 80 CPU seconds)."""
    import time

    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.policy import policy_value

    call = {"policy_value": policy_value, "distribution": distribution}[evaluate]
    start = time.perf_counter()
    with pytest.raises(ValueError) as err:
        call("maxi-yatzy", "optimal", options=["no-saved-throws"])
    msg = str(err.value)
    assert "\n" not in msg and "29,360,126 reachable states" in msg
    assert "yahtzee-sim simulate --rules maxi-yatzy+no-saved-throws" in msg
    assert time.perf_counter() - start < 60


def test_generala_extremes_by_hand():
    """Best card: five of each face up top (105), then everything served: Escalera 25,
    Full 35, Póker 45, Generala 60, and the doble 100 (the Generala box holds 60)."""
    from yahtzee_sim.exact.extremes import extreme_score

    assert extreme_score("generala").score == 105 + 25 + 35 + 45 + 60 + 100
    assert extreme_score("generala", options=["no-doble"]).score == 105 + 25 + 35 + 45 + 60
    assert extreme_score("generala", kind="min").score == 0
