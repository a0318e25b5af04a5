"""The grouped-boxes solver (Balut's score, points set aside): a plain DP over every
box on a reduced Balut, the main solver on a game of distinct boxes, and refusals."""

from __future__ import annotations

import numpy as np
import pytest

from test_exact_family import _reduced
from plain_game import OptimalMean

from yahtzee_sim import simulate
from yahtzee_sim.exact.grouped import solve_grouped
from yahtzee_sim.exact.solver import solve


def test_reduced_balut_equals_a_plain_dp_over_every_box():
    """Two Fours and two Choice boxes, five dice: the plain DP treats the four boxes as
    distinct (2**4 cards); the grouped solver as two groups of two (9 states)."""
    rules = _reduced("balut", boxes=("fours_1", "fours_2", "choice_1", "choice_2"))
    sol = solve_grouped(rules)
    assert sol.groups == (2, 2) and sol.n_states == 9
    dp = OptimalMean(rules)
    assert abs(sol.mean - dp.value((False,) * 4, 0, False)) < 1e-9
    keys = list(dp.memo)
    got = sol.value(np.array([k[0] for k in keys]))
    assert np.abs(got - np.array([dp.memo[k] for k in keys])).max() < 1e-9
    # the state is the counts: which Fours box is filled does not matter
    assert sol.value([[True, False, False, False]])[0] == sol.value([[False, True, False, False]])[0]


def test_a_game_of_distinct_boxes_equals_the_solver():
    """Yacht without its bonus: twelve groups of one, every state against solve()."""
    sol = solve_grouped("yacht", options=["no-bonus"])
    assert sol.groups == (1,) * 12
    exact = solve("yacht", options=["no-bonus"], dtype=np.float64, cache=False)
    assert abs(sol.mean - exact.mean) < 1e-9
    masks = np.arange(1 << 12)
    filled = (masks[:, None] >> np.arange(12)) & 1 == 1
    ours = sol.value(filled)
    theirs = exact.value(filled, np.zeros(len(masks), int), np.zeros(len(masks), bool))
    assert np.abs(ours - theirs).max() < 1e-9


@pytest.mark.slow
def test_balut_score_optimum_bounds_the_strategies():
    """No strategy's mean Balut score can exceed the exact optimum (20,000 games:
    the heuristic's CI is about +-0.7 points wide; it sits about 20 points below)."""
    bound = solve_grouped("balut").mean
    for name in ("greedy", "heuristic"):
        s = simulate("balut", name, 20_000, seed=9).summary()
        assert s["ci95_high"] < bound, (name, s["ci95_high"], bound)


@pytest.mark.parametrize("name,options,why", [
    ("yahtzee", (), "upper bonus"),
    ("generala", (), "five-of-a-kind box holds"),
    ("yacht", ("fill-in-order", "no-bonus"), "filled in an order"),
    ("yamb", (), "filled in an order"),
])
def test_refusals_name_the_reason(name, options, why):
    with pytest.raises(ValueError, match=f"grouped-boxes solver does not handle .*{why}"):
        solve_grouped(name, options=options)


def test_cli_score_only(capsys):
    import json

    from yahtzee_sim.cli import main

    assert main(["solve", "--rules", "balut", "--score-only", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["expected_score"] == pytest.approx(solve_grouped("balut").mean, abs=1e-12)
    assert data["states"] == 78_125 and "points set aside" in data["method"]
    assert main(["solve", "--rules", "balut", "--score-only"]) == 0
    assert "points set aside" in capsys.readouterr().out
    # the plain solve of Balut is refused and points at the score-only solve
    assert main(["solve", "--rules", "balut"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--score-only" in err and "2**28" in err
    assert main(["solve", "--rules", "yahtzee", "--score-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "upper bonus" in err
