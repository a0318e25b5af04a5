"""Exact win odds: brute-force enumeration on small PMFs, simulated games, the levels, the CLI."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.cli import main
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.winodds import MAX_PLAYERS, win_matrix, win_odds
from yahtzee_sim.stats import proportion_ci
from yahtzee_sim.strategies import get_strategy
from yahtzee_sim.strategies.levels import LEVELS


def brute_force(pmfs):
    """Every combination of scores: P(sole win), P(tie for first), win share, rank pmf.

    Not a game recursion (players' score PMFs combined), so not tests/plain_game.py's."""
    n = len(pmfs)
    win, tie, share = np.zeros(n), np.zeros(n), np.zeros(n)
    rank = np.zeros((n, n))
    supports = [np.flatnonzero(np.asarray(p) > 0) for p in pmfs]
    for combo in itertools.product(*supports):
        p = math.prod(pmfs[i][x] for i, x in enumerate(combo))
        top = max(combo)
        at_top = [i for i, x in enumerate(combo) if x == top]
        for i, x in enumerate(combo):
            rank[i, sum(y > x for y in combo)] += p
            if x == top:
                if len(at_top) == 1:
                    win[i] += p
                else:
                    tie[i] += p
                share[i] += p / len(at_top)
    return win, tie, share, rank


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_small_pmfs_match_brute_force(n):
    rng = np.random.default_rng(n)
    pmfs = []
    for i in range(n):
        p = rng.random(int(rng.integers(2, 7))) * (rng.random(1) > 0.2)
        p[rng.integers(len(p))] += 0.3           # some zeros, never all
        pmfs.append(p / p.sum())
    odds = win_odds(pmfs)
    win, tie, share, rank = brute_force(pmfs)
    np.testing.assert_allclose(odds.p_win, win, atol=1e-14)
    np.testing.assert_allclose(odds.p_tie, tie, atol=1e-14)
    np.testing.assert_allclose(odds.win_share, share, atol=1e-14)
    np.testing.assert_allclose(odds.rank_pmf, rank, atol=1e-14)
    assert odds.win_share.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(odds.rank_pmf.sum(axis=1), 1.0, atol=1e-12)


def test_twenty_equal_players_share_evenly():
    d = distribution("yacht", "greedy", options=["fill-in-order"])
    odds = win_odds([d] * MAX_PLAYERS)
    np.testing.assert_allclose(odds.win_share, 1 / MAX_PLAYERS, atol=1e-12)
    np.testing.assert_allclose(odds.expected_rank, odds.expected_rank[0], atol=1e-12)
    assert odds.p_win[0] + odds.p_tie[0] > 1 / MAX_PLAYERS
    with pytest.raises(ValueError, match="1 to 20 players"):
        win_odds([d] * (MAX_PLAYERS + 1))
    with pytest.raises(ValueError, match="sum to"):
        win_odds([[0.5, 0.2], [1.0]])
    with pytest.raises(ValueError, match="non-negative"):
        win_odds([[1.5, -0.5], [1.0]])


def test_exact_rates_match_simulated_games():
    """Greedy against keep-largest and greedy against itself on Yacht (fill in order):
    the exact rates lie in 99.9% intervals of 60 000 simulated pairs of games."""
    opts = ["fill-in-order"]
    dg = distribution("yacht", "greedy", options=opts)
    dk = distribution("yacht", "keep-largest", options=opts)
    root = np.random.SeedSequence(7).spawn(3)
    seeds = [int(s.generate_state(1)[0]) for s in root]
    n = 60_000
    g1 = simulate("yacht", "greedy", n, options=opts, seed=seeds[0], keep_games=True).games["total"]
    g2 = simulate("yacht", "greedy", n, options=opts, seed=seeds[1], keep_games=True).games["total"]
    k = simulate("yacht", "keep-largest", n, options=opts, seed=seeds[2], keep_games=True).games["total"]
    for a, b, da, db in ((g1, k, dg, dk), (g1, g2, dg, dg)):
        odds = win_odds([da, db])
        for count, exact in ((int((a > b).sum()), odds.p_win[0]), (int((a == b).sum()), odds.p_tie[0])):
            ci = proportion_ci(count, n, level=0.999)
            assert ci.low <= exact <= ci.high


def test_win_matrix_is_consistent():
    opts = ["fill-in-order"]
    ds = [distribution("yacht", s, options=opts) for s in ("greedy", "keep-largest")]
    win, tie = win_matrix(ds)
    assert win.loc["greedy", "keep-largest"] + win.loc["keep-largest", "greedy"] + \
        tie.loc["greedy", "keep-largest"] == pytest.approx(1.0, abs=1e-12)
    assert win.loc["greedy", "greedy"] == pytest.approx(win.loc["greedy", "greedy"])


def test_levels_are_the_strategies_they_stand_for():
    assert list(LEVELS) == ["cpu:weak", "cpu:normal", "cpu:strong"]
    opts = ["fill-in-order"]
    for level, plain in zip(LEVELS, ("keep-largest", "heuristic", "optimal")):
        assert get_strategy(level).name == level
        assert distribution("yacht", level, options=opts).mean == pytest.approx(
            distribution("yacht", plain, options=opts).mean, abs=1e-9)


def test_cli_head_to_head_exact(capsys):
    args = ["head-to-head", "--exact", "--rules", "yacht", "--option", "fill-in-order",
            "--players", "greedy", "keep-largest", "keep-largest", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["players"]
    assert [r["strategy"] for r in rows] == ["greedy", "keep-largest", "keep-largest"]
    assert sum(r["win_share"] for r in rows) == pytest.approx(1.0, abs=1e-12)
    assert rows[1]["p_win"] == pytest.approx(rows[2]["p_win"], abs=1e-15)
    assert main(["head-to-head", "--exact", "--players", "greedy"]) == 2
    assert main(["head-to-head", "--exact", "--games", "10", "--players", "greedy", "greedy"]) == 2
    assert "--games" in capsys.readouterr().err
    assert main(["head-to-head", "--exact", "--players", "play-to-win", "optimal"]) == 2
    assert "drop --exact" in capsys.readouterr().err


def test_cli_head_to_head_simulated(capsys):
    args = ["head-to-head", "--rules", "generala", "--option", "servida-wins", "--players", "greedy",
            "keep-largest", "--games", "3000", "--seed", "4", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "simulated" and out["games"] == 3000 and out["seed"] == 4
    rows = out["players"]
    assert [r["strategy"] for r in rows] == ["greedy", "keep-largest"]
    assert all(0 <= r["p_servida_win"] <= r["p_win"] for r in rows)
    from yahtzee_sim.multiplayer import simulate_table

    res = simulate_table("generala", ["greedy", "keep-largest"], 3000, seed=4, options=["servida-wins"])
    assert rows[0]["p_win"] == res.to_frame()["p_win"].iloc[0]
    # Yacht filled in order: play-to-win's first use solves, tables and evaluates a risk strategy
    # per theta (minutes on the full Yacht card, a second here)
    assert main(["head-to-head", "--rules", "yacht", "--option", "fill-in-order", "--players", "play-to-win",
                 "optimal", "--games", "1024", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert "1,024 simulated games (seed 1)" in text and "play-to-win" in text
    assert main(["head-to-head", "--players", "greedy", "greedy", "--games", "0"]) == 2


def test_cli_distribution(capsys, tmp_path):
    out_csv = tmp_path / "pmf.csv"
    args = ["distribution", "--rules", "yacht", "--option", "fill-in-order", "--strategy", "greedy",
            "--at-least", "150", "--json", "--out", str(out_csv)]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    d = distribution("yacht", "greedy", options=["fill-in-order"])
    assert out["mean"] == pytest.approx(d.mean) and out["p_at_least"]["150"] == pytest.approx(d.p_at_least(150))
    assert out["percentiles"]["50"] == d.percentile(50) and out["pmf"] is None
    assert out_csv.read_text().startswith("score,probability")
    assert main(["distribution", "--strategy", "nope"]) == 2
    assert "valid strategies" in capsys.readouterr().err
    assert main(["distribution", "--rules", "yacht", "--option", "fill-in-order", "--strategy", "greedy"]) == 0
    text = capsys.readouterr().out
    assert "expected score" in text and "P(upper bonus)" in text


def test_head_to_head_report_exact_beside_simulated_and_play_to_win(tmp_path):
    """The extended head-to-head report on Yacht filled in order (small): the exact win
    matrix equals win_odds of the exact distributions, the simulated rates sit around it,
    the levels are labelled, and the play-to-win rows are paired with optimal."""
    from yahtzee_sim.report import run_experiment, write_report
    from yahtzee_sim.report.experiment import parse_spec

    spec = parse_spec({"kind": "head-to-head", "rules": "yacht", "options": ["fill-in-order"],
                       "strategies": ["keep-largest", "greedy", "optimal"], "exact_strategies": ["keep-largest", "optimal"],
                       "games": 4096, "table_games": 1024, "opponents": [1, 2]}, name="h2h")
    rep = run_experiment(spec)
    exact = rep.data["exact_wins"].set_index(["player", "opponent"])
    dk = distribution("yacht", "keep-largest", options=["fill-in-order"])
    do = distribution("yacht", "optimal", options=["fill-in-order"])
    odds = win_odds([do, dk])
    assert exact.loc[("optimal", "keep-largest"), "exact_win"] == pytest.approx(odds.p_win[0], abs=1e-12)
    assert exact.loc[("optimal", "keep-largest"), "exact_draw"] == pytest.approx(odds.p_tie[0], abs=1e-12)
    assert exact["exact_inside_ci"].dropna().mean() >= 0.5
    levels = rep.data["levels"]
    assert list(levels["level"]) == ["cpu:weak", "cpu:strong"]
    assert levels.loc["keep-largest", "exact mean"] == pytest.approx(dk.mean)
    ptw = rep.data["play_to_win"]
    assert list(ptw.index) == [1, 2] and (ptw["games"] == 1024).all()
    assert ptw.loc[1, "exact_optimal_win_share"] == pytest.approx(0.5)
    assert ptw.loc[2, "exact_optimal_win_share"] == pytest.approx(1 / 3)
    assert (ptw["gain_low"] <= ptw["gain"]).all() and (ptw["gain"] <= ptw["gain_high"]).all()
    out = write_report(rep, tmp_path / "h2h")
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "よわい" in text and "play-to-win" in text and (out / "exact_matrix.png").is_file()
    assert (out / "play_to_win.svg").is_file()


@pytest.mark.parametrize("extra, message", [
    ({"opponents": [0]}, "opponents are numbers"),
    ({"opponents": []}, "must not be empty"),
    ({"exact_strategies": ["nope"]}, "unknown strategy"),
    ({"table_games": 0}, "table_games must be a positive integer"),
])
def test_head_to_head_spec_checks_its_keys(extra, message):
    from yahtzee_sim.report.experiment import parse_spec

    with pytest.raises(ValueError, match=message):
        parse_spec({"kind": "head-to-head", "strategies": ["greedy", "optimal"], **extra}, name="x")
