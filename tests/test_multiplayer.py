"""The multiplayer simulator and the opponent-aware player."""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.winodds import win_odds
from yahtzee_sim.multiplayer import PlayToWin, simulate_table
from yahtzee_sim.stats import proportion_ci

OPTS = ["fill-in-order"]


def test_common_random_numbers_per_seat_and_batches():
    a = simulate_table("yacht", ["greedy", "keep-largest"], 3000, seed=9, options=OPTS)
    b = simulate_table("yacht", ["greedy", "random"], 3000, seed=9, options=OPTS, batch=1024)
    assert (a.totals[:, 0] == b.totals[:, 0]).all()        # seat 1's dice and play unchanged
    assert not (a.totals[:, 1] == b.totals[:, 1]).all()
    c = simulate_table("yacht", ["greedy", "keep-largest"], 3000, seed=10, options=OPTS)
    assert not (a.totals == c.totals).all()


def test_simulated_rates_match_exact_odds():
    res = simulate_table("yacht", ["greedy", "keep-largest", "keep-largest"], 30_000, seed=4,
                         options=OPTS)
    odds = win_odds([distribution("yacht", s, options=OPTS) for s in ("greedy", "keep-largest",
                                                                         "keep-largest")])
    win, tie = res.outcomes()
    for s in range(3):
        ci = proportion_ci(int(win[:, s].sum()), res.n_games, level=0.999)
        assert ci.low <= odds.p_win[s] <= ci.high
        ci = proportion_ci(int(tie[:, s].sum()), res.n_games, level=0.999)
        assert ci.low <= odds.p_tie[s] <= ci.high
    frame = res.to_frame()
    assert list(frame.index) == ["greedy", "keep-largest (seat 2)", "keep-largest (seat 3)"]


def test_play_to_win_alone_is_optimal():
    """Without a table to look at it plays the expected-score optimum, game for game."""
    a = simulate("yacht", PlayToWin(), 2048, options=OPTS, seed=3, keep_games=True)
    b = simulate("yacht", "optimal", 2048, options=OPTS, seed=3, keep_games=True)
    assert (a.games["total"] == b.games["total"]).all()


def test_play_to_win_at_a_table_runs_and_adapts():
    p = PlayToWin(thetas=(-0.02, 0.0, 0.02))
    res = simulate_table("yacht", [p, "optimal"], 3000, seed=2, options=OPTS)
    assert res.totals.shape == (3000, 2)
    assert len(p._groups) == 3 and sum(len(g) for g in p._groups) == 3000
    assert sum(len(g) > 0 for g in p._groups) >= 2      # more than one table in use


def test_bad_input():
    with pytest.raises(ValueError, match="at least 2 players"):
        simulate_table("yacht", ["greedy"], 10)
    with pytest.raises(ValueError, match="n_games"):
        simulate_table("yacht", ["greedy", "greedy"], 0)
    with pytest.raises(ValueError, match="unknown strategy"):
        simulate_table("yacht", ["greedy", "nope"], 10)
