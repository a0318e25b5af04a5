"""Target play (maximize P(score >= T)): a plain brute force on tiny games, the
mean-optimal strategy's exact distribution as a lower bound, the strategy's simulated
hit rate, the CLI, the cache and the refusals."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from conftest import tiny_rules
from plain_game import optimal_target
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.target import max_possible_score, target_solve
from yahtzee_sim.rules import get_rules

YACHT = ("yacht", ["fill-in-order"])


def brute_force_target(rules, max_need: int) -> np.ndarray:
    """P(score >= r) for r = 0..max_need under play for each target, by the plain
    recursion of tests/plain_game.py (real upper totals, every sub-multiset kept, every
    outcome thrown, the dice carrying the throws that made them: served scores)."""
    return np.array(optimal_target(rules, max_need))


@pytest.mark.parametrize("case", [dict(), dict(joker="free"), dict(fill_order="in-order"),
                                  dict(upper_bonus=0, five_bonus=0)])
def test_tiny_game_matches_brute_force(case):
    rules = tiny_rules(**case)
    top = max_possible_score(rules) + 1               # every target up to one above the best score
    exact = brute_force_target(rules, top)
    # the comparison can fail: the chances are not all 0 or 1, and the best score is reachable
    assert exact[0] == 1.0 and exact[top] == 0.0 and exact[top - 1] > 0
    assert ((exact > 0.01) & (exact < 0.99)).sum() > top // 4
    sol = target_solve(rules, max_target=top, dtype=np.float64, cache=False)
    np.testing.assert_allclose(sol.to_frame()["p_reach"].to_numpy(), exact, atol=1e-12)
    f32 = target_solve(rules, max_target=top, cache=False)
    np.testing.assert_allclose(f32.to_frame()["p_reach"].to_numpy(), exact, atol=1e-6)


def _mean_play_p(dist, top):
    return np.array([dist.p_at_least(t) for t in range(top + 1)])


def test_target_play_beats_the_mean_optimum_at_every_target():
    name, opts = YACHT
    sol = target_solve(name, 330, options=opts, cache=False)     # 325 is the best possible
    p = sol.to_frame()["p_reach"].to_numpy()
    mean_play = _mean_play_p(distribution(name, "optimal", options=opts), 330)
    assert p[0] == 1.0 and (np.diff(p) <= 0).all()
    assert (p >= mean_play - 1e-6).all()
    assert (p - mean_play).max() > 0.005                         # and strictly better somewhere
    assert (p[326:] == 0).all() and p[325] > 0
    assert sol.p_reach(10_000) == 0.0 and sol.p_reach(-5) == 1.0
    # every state: W(s, 0) = 1, a probability, falling with the points needed
    t = sol.table
    assert (t[:, 0] == 1).all() and (t >= 0).all() and (t <= 1).all() and (np.diff(t, axis=1) <= 0).all()


def test_float32_within_1e_6_of_float64_and_workers_agree(monkeypatch):
    from yahtzee_sim.exact import target

    name, opts = YACHT
    f64 = target_solve(name, 300, options=opts, dtype=np.float64, cache=False)
    f32 = target_solve(name, 300, options=opts, cache=False, jobs=1)
    assert np.abs(f64.table - f32.table).max() < 1e-6
    monkeypatch.setattr(target, "MIN_STATES_FOR_WORKERS", 1)
    two = target_solve(name, 300, options=opts, cache=False, jobs=2)
    np.testing.assert_array_equal(two.table, f32.table)
    monkeypatch.setattr(target, "MIN_STATES_FOR_KERNELS", 0)     # the compiled turn, chunks taken as freed
    two = target_solve(name, 300, options=opts, cache=False, jobs=2)
    np.testing.assert_array_equal(two.table, f32.table)


@pytest.mark.parametrize("case,dtype", [("yacht", np.float32), ("yacht", np.float64), ("tiny", np.float64)])
def test_compiled_turn_gives_the_numpy_turns_table_bit_for_bit(monkeypatch, case, dtype):
    """The compiled turn (games of 1,000 states or more) and the NumPy turn (target_turn)
    are two implementations of one recursion: the same floats in the same order (six
    faces, and the tiny game's three: its keeps have three children, not six)."""
    from yahtzee_sim.exact import space, target

    rules = get_rules(*YACHT) if case == "yacht" else tiny_rules(joker="free")
    top = 300 if case == "yacht" else max_possible_score(rules) + 1
    monkeypatch.setattr(target, "MIN_STATES_FOR_KERNELS", 0)
    fast = target_solve(rules, top, dtype=dtype, cache=False, jobs=1)
    monkeypatch.setattr(space, "KERNELS", "numpy")
    assert target._kernels() is None
    slow = target_solve(rules, top, dtype=dtype, cache=False, jobs=1)
    assert ((slow.table > 0.01) & (slow.table < 0.99)).sum() > 50     # not a table of zeros and ones
    np.testing.assert_array_equal(fast.table, slow.table)


def test_compiled_turn_on_sampled_yahtzee_states_against_target_turn():
    """Sampled ``yahtzee`` states of every fullness (jokers, the Yahtzee bonus, the upper
    bonus) over a random table of next states, each row falling with the need and 0 above
    a random top, as the solved tables are: the compiled turn's rows (which skip the needs
    above the reachable tops) equal target_turn's over every need, and its tops are the
    last need above 0."""
    from yahtzee_sim.exact import target
    from yahtzee_sim.exact.space import turn_model
    from yahtzee_sim.rules import get_rules

    rules = get_rules("yahtzee")
    row_of, levels, n_rows = target._layout(rules)
    width = 121
    rng = np.random.default_rng(7)
    table = -np.sort(-rng.random((n_rows, width), dtype=np.float32), axis=1)
    table[:, 0] = 1
    tops = rng.integers(0, width, n_rows)
    table[np.arange(width)[None, :] > tops[:, None]] = 0
    table[0] = 0
    table[0, 0] = 1
    tops[0] = 0
    model = turn_model(rules, np.float32)
    head, tail = target._compiled_consts(model)
    kx = target._kernels()
    kx.precompile(np.float32)
    cut = 0
    for level in (12, 11, 9, 6, 2, 0):
        (m, u, fl), first = levels[level]
        pick = np.sort(rng.choice(len(m), min(6, len(m)), replace=False))
        want = target.target_turn(model, table, row_of, m[pick], u[pick], fl[pick],
                           np.broadcast_to(np.arange(width), (len(pick), width))).astype(np.float32)
        out = table.copy()
        out_tops = tops.copy()
        rows = first + pick
        trow, gain, r5, g5 = target._compiled_inputs(model, row_of, m[pick], u[pick], fl[pick])
        kx.target_states(out, out_tops, rows.astype(np.int64), trow, gain, *head, r5, g5, *tail)
        np.testing.assert_array_equal(out[rows], want)
        last = np.where(want > 0, np.arange(width), 0).max(axis=1)
        np.testing.assert_array_equal(out_tops[rows], last)
        cut += int((last < width - 1).sum())
    assert cut >= 3                                   # some rows end below the last need


def test_probability_of_mid_game_states():
    name, opts = YACHT
    sol = target_solve(name, 300, options=opts, cache=False)
    filled = np.zeros((3, sol.rules.n_boxes), bool)
    filled[:, :11] = True                                        # only the Yacht box left
    p = sol.probability(filled, [63, 10, 10], [False] * 3, [50, 51, 0])
    # five of a kind within three throws, the best chance: 0.0460286 (Verhoeff's Yahtzee
    # proficiency pages; also yahtzee_sim.exact.widget's doctest, 0.046029)
    np.testing.assert_allclose(p, [0.0460286, 0.0, 1.0], atol=1e-6)
    with pytest.raises(ValueError, match="state no game can reach"):
        sol.probability(np.eye(1, sol.rules.n_boxes, dtype=bool), [30], [False], [10])  # Ones holds 30


def test_cache_miss_hit_memory_larger_table_and_damage(tmp_path):
    from yahtzee_sim.exact import target
    from yahtzee_sim.exact import cache as _cache

    name, opts = YACHT
    target._MEMO.clear()
    a = target_solve(name, 200, options=opts, cache_dir=tmp_path)
    assert a.cache == "miss"
    target._MEMO.clear()
    b = target_solve(name, 150, options=opts, cache_dir=tmp_path)   # the 200 table serves 150
    assert b.cache == "hit" and b.max_target == 150
    np.testing.assert_array_equal(b.table, a.table[:, :151])
    assert target_solve(name, 100, options=opts, cache_dir=tmp_path).cache == "memory"
    # a damaged file is refused and recomputed
    path = target.target_cache_path(a.rules, 200, "float32", tmp_path)
    path.write_bytes(path.read_bytes()[:1000])
    target._MEMO.clear()
    c = target_solve(name, 200, options=opts, cache_dir=tmp_path)
    assert c.cache == "damaged" and "recomputed" in c.cache_note
    np.testing.assert_array_equal(c.table, a.table)
    # a forged table with a valid checksum fails the recomputation of its own turns
    forged = np.array(a.table)
    forged[a.start_row, 1:] *= 0.99
    meta = target._meta(a.rules, 200, "float32")
    stored = _cache.load(path, meta)
    _cache.save(path, meta, dict(stored, table=forged))
    target._MEMO.clear()
    d = target_solve(name, 200, options=opts, cache_dir=tmp_path)
    assert d.cache == "damaged" and "forged or stale" in d.cache_note
    np.testing.assert_array_equal(d.table, a.table)
    target._MEMO.clear()


def test_refusals():
    from yahtzee_sim.exact import target

    with pytest.raises(ValueError, match="cannot solve maxi-yatzy: banked throws"):
        target_solve("maxi-yatzy", 100, cache=False)
    with pytest.raises(ValueError, match="cannot solve balut"):
        target_solve("balut", 100, cache=False)
    for bad in (-1, 2.5, "many", True, float("nan")):
        with pytest.raises(ValueError, match="max_target must be an integer >= 0"):
            target_solve("yacht", bad, cache=False)
    with pytest.raises(ValueError, match=r"would take .* GiB .* targets up to \d+ fit"):
        target_solve("yatzy", 100_000, cache=False)
    with pytest.raises(ValueError, match="dtype"):
        target_solve("yacht", 10, dtype="float16", cache=False)
    sol = target_solve("yacht", 50, options=["fill-in-order"], cache=False)
    with pytest.raises(ValueError, match="above the solved targets"):
        sol.p_reach(60)
    assert target.parse_target("7") == 7


def test_strategy_names_and_exact_evaluators_refuse_it():
    from yahtzee_sim.exact.policy import policy_value
    from yahtzee_sim.strategies import get_strategy

    assert get_strategy("target:T=250").target == 250
    for bad in ("target:T=-1", "target:T=abc", "target:score=3", "target:T", "target:T=1.5"):
        with pytest.raises(ValueError, match="target"):
            get_strategy(bad)
    with pytest.raises(ValueError, match="target:T=<score>"):
        get_strategy("no-such")
    # its decisions depend on the points so far: an evaluation over states would be wrong
    for evaluate in (policy_value, distribution):
        with pytest.raises(ValueError, match="looks at the points so far"):
            evaluate("yacht", "target:T=100", options=["fill-in-order"])


def _hit_rate(target_score, games, seed):
    from yahtzee_sim import simulate

    name, opts = YACHT
    res = simulate(name, f"target:T={target_score}", games, options=opts, seed=seed)
    hist = res.aggregate.total_hist
    return hist[target_score:].sum() / hist.sum()


def _check_rate(target_score, games, seed, *, beats_mean_play):
    name, opts = YACHT
    exact = target_solve(name, 300, options=opts).p_reach(target_score)
    rate = _hit_rate(target_score, games, seed)
    se = np.sqrt(exact * (1 - exact) / games)
    assert abs(rate - exact) < 4 * se, (rate, exact, se)
    if beats_mean_play:        # and the simulated rate tells target play from the mean optimum
        mean_play = distribution(name, "optimal", options=opts).p_at_least(target_score)
        assert rate - mean_play > 4 * se, (rate, mean_play, se)


def test_simulated_target_play_hits_at_the_exact_rate():
    # 100,000 games: 4 se = 0.63 points of percentage at T = 96 (p = 0.537)
    _check_rate(96, 100_000, seed=2026, beats_mean_play=False)


def test_target_play_ignores_the_optimal_decision_table():
    """Target play derives from the optimal strategy; once the optimal decision table is
    on disk the engine plays table strategies in a lean loop, which must not replay
    optimal's keeps for target play (it did: the games changed once the table existed)."""
    from yahtzee_sim import simulate
    from yahtzee_sim.rules import get_rules
    from yahtzee_sim.strategies import get_strategy

    name, opts = YACHT
    before = simulate(name, "target:T=96", 4096, options=opts, seed=3).games["total"]
    optimal = get_strategy("optimal").prepare(get_rules(name, opts))
    optimal.decision_table()                       # built and cached
    assert optimal.play_table is not None
    strat = get_strategy("target:T=96").prepare(get_rules(name, opts))
    assert strat.play_table is None
    after = simulate(name, "target:T=96", 4096, options=opts, seed=3).games["total"]
    assert np.array_equal(before, after)


@pytest.mark.slow
@pytest.mark.parametrize("target_score", [96, 150])
def test_simulated_target_play_hits_at_the_exact_rate_big(target_score):
    # 1,000,000 games: 4 se = 0.20 points at T = 96, 0.09 at T = 150; at 96 target play's
    # gain over the mean optimum (0.83 points) is 16 se
    _check_rate(target_score, 1_000_000, seed=7, beats_mean_play=target_score == 96)


def test_cli_target(capsys):
    from yahtzee_sim.cli import main

    args = ["target", "--rules", "yacht", "--option", "fill-in-order", "--target", "96"]
    assert main(args) == 0
    out = capsys.readouterr().out
    exact = target_solve("yacht", 300, options=["fill-in-order"])
    assert f"{exact.p_reach(96):.6f}" in out and "target play" in out and "optimal" in out
    assert "or better" in out
    assert main(args + ["--target", "150", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [r["target"] for r in data["targets"]] == [96, 150]
    row = data["targets"][0]
    assert row["p_reach_target_play"] == pytest.approx(exact.p_reach(96))
    mean_play = distribution("yacht", "optimal", options=["fill-in-order"]).p_at_least(96)
    assert row["p_at_least_optimal"] == pytest.approx(mean_play)
    assert isinstance(data["states"], int) and data["method"] == "exact"
    for bad, msg in ((["--target", "-1"], "target must be an integer >= 0"),
                     (["--target", "400"], "above the highest score any game of yacht"),
                     (["--target", "100", "--max-target", "50"], "below the target"),
                     (["--rules", "no-such", "--target", "10"], "unknown rule set"),
                     (["--rules", "maxi-yatzy", "--target", "10"], "cannot solve maxi-yatzy: banked throws")):
        assert main(["target", "--rules", "yacht"] + bad) == 2
        err = capsys.readouterr().err.strip()
        assert msg in err and len(err.splitlines()) == 1


def test_distributions_report_target_section(tmp_path):
    from yahtzee_sim.report import parse_spec, run_experiment, write_report

    spec = parse_spec({"kind": "distributions", "rules": "yacht", "options": ["fill-in-order"],
                       "strategies": ["keep-largest", "optimal"], "games": 20_000,
                       "tables": ["summary", "target"], "plots": ["target"]}, name="target-small")
    rep = run_experiment(spec)
    out = write_report(rep, tmp_path / "target-small")
    assert (out / "target.csv").is_file() and (out / "target.png").is_file()
    frame = rep.data["target"]
    exact = target_solve("yacht", 300, options=["fill-in-order"])
    mean_play = distribution("yacht", "optimal", options=["fill-in-order"])
    for t, row in frame.iterrows():
        assert row["P(>=T), target play"] == pytest.approx(exact.p_reach(t))
        assert row["P(>=T), optimal"] == pytest.approx(mean_play.p_at_least(t))
        assert row["P(>=T), target play"] >= row["P(>=T), optimal"] - 1e-6
    sim = rep.data["target_simulated"].iloc[0]
    se = np.sqrt(sim["exact, target play"] * (1 - sim["exact, target play"]) / sim["games"])
    assert abs(sim["simulated hit rate"] - sim["exact, target play"]) < 4 * se
    assert "Playing for a target" in (out / "README.md").read_text(encoding="utf-8")


def test_cli_target_shows_progress_on_a_terminal_only(monkeypatch, capsys, tmp_path):
    import io
    import sys

    import yahtzee_sim.progress as progress
    from yahtzee_sim.cli import main
    from yahtzee_sim.exact import target

    class FakeTTY(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setenv("YAHTZEE_SIM_CACHE", str(tmp_path))        # a cold solve: something to show
    monkeypatch.setattr(target, "_MEMO", {})
    args = ["target", "--rules", "yacht", "--option", "fill-in-order", "--target", "96"]
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    assert main(args) == 0
    assert "target tables of yacht+fill-in-order" in fake.getvalue()
    capsys.readouterr()
    monkeypatch.setattr(target, "_MEMO", {})
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    assert main(args + ["--json"]) == 0
    assert fake.getvalue() == ""
    assert json.loads(capsys.readouterr().out)["cache"] == "hit"


@pytest.mark.slow
def test_yahtzee_target_play_when_the_users_cache_holds_its_table():
    """``yahtzee`` itself (a cold solve takes about 50 CPU seconds, too long for the suite):
    checked when the user's cache holds the table (`yahtzee-sim target --rules yahtzee
    --target 250` puts it there), skipped otherwise."""
    from conftest import USER_SOLVER_CACHE

    from yahtzee_sim import simulate
    from yahtzee_sim.exact import target
    from yahtzee_sim.rules import get_rules
    from yahtzee_sim.strategies.target import TargetStrategy

    rules = get_rules("yahtzee")
    if not target.target_cache_path(rules, 300, "float32", USER_SOLVER_CACHE).exists():
        pytest.skip(f"no cached target table for yahtzee in {USER_SOLVER_CACHE}")
    sol = target_solve(rules, 300, cache_dir=USER_SOLVER_CACHE)
    assert sol.cache in ("hit", "memory")
    p = sol.to_frame()["p_reach"].to_numpy()
    mean_play = _mean_play_p(distribution(rules, "optimal"), 300)
    assert p[0] == 1.0 and (np.diff(p) <= 0).all() and (p >= mean_play - 1e-6).all()
    games, t = 200_000, 250        # 4 se = 0.45 points; target play's gain here is 5.8 points
    res = simulate(rules, TargetStrategy(t, sol), games, seed=11)
    hist = res.aggregate.total_hist
    rate = hist[t:].sum() / games
    se = np.sqrt(p[t] * (1 - p[t]) / games)
    assert abs(rate - p[t]) < 4 * se and rate - mean_play[t] > 4 * se


def test_served_game_matches_brute_force():
    """Generala-like served scores (served straight, full and "generala" pay more):
    holding the first throw's dice keeps them served, in the brute force and the solver."""
    from test_solver_values import _small_served

    rules = _small_served(n_dice=2, n_faces=3)
    assert rules.roll_dependent
    top = max_possible_score(rules) + 1
    exact = brute_force_target(rules, top)
    assert exact[0] == 1.0 and exact[top] == 0.0 and ((exact > 0.01) & (exact < 0.99)).sum() >= 10
    sol = target_solve(rules, max_target=top, dtype=np.float64, cache=False)
    np.testing.assert_allclose(sol.to_frame()["p_reach"].to_numpy(), exact, atol=1e-12)
    # the served scores matter: the same game that never pays them differs (so the
    # comparison above can fail if the first-throw layer is missing)
    import dataclasses

    never = tuple(dataclasses.replace(b, by_throw=False, score=functools.partial(b.score, throws=2))
                  if b.by_throw else b for b in rules.boxes)
    flat = dataclasses.replace(rules, name="never-served", boxes=never)
    later = target_solve(flat, max_target=top, dtype=np.float64, cache=False)
    assert np.abs(later.to_frame()["p_reach"].to_numpy() - exact).max() > 0.01


def test_generala_target_play_hits_at_the_exact_rate():
    """A served game end to end: the exact chance of 150 or more under target play (with
    served scores, served dice held) against 100,000 simulated games, and against the
    mean-optimal player on the same dice. 4 se = 0.59 points of percentage; a player
    that rerolls its held served dice scores about 1 point lower."""
    from yahtzee_sim import simulate

    sol = target_solve("generala", 250)
    exact = sol.p_reach(150)
    games = 100_000
    se = np.sqrt(exact * (1 - exact) / games)

    def rate(strategy):
        hist = simulate("generala", strategy, games, seed=11).aggregate.total_hist
        return hist[150:].sum() / hist.sum()

    hit = rate("target:T=150")
    assert abs(hit - exact) < 4 * se, (hit, exact, se)
    assert hit - rate("optimal") > 20 * se


def test_cli_target_on_a_served_game_compares_with_optimal(capsys):
    """Generala's served scores: optimal's exact distribution (read from its decision
    table, served dice held) stands next to target play, as on every other game."""
    from yahtzee_sim.cli import main
    from yahtzee_sim.exact.solver import solve

    args = ["target", "--rules", "generala", "--target", "150", "--max-target", "250"]
    assert main(args) == 0
    out = capsys.readouterr().out
    reach = target_solve("generala", 250).p_reach(150)
    optimal = distribution("generala", "optimal").p_at_least(150)
    assert f"{reach:.6f}" in out and f"{optimal:.6f}" in out and "gain" in out
    assert main(args + ["--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    row = got["targets"][0]
    assert set(row) == {"target", "p_reach_target_play", "p_at_least_optimal", "gain"}
    assert row["gain"] == pytest.approx(reach - optimal) and row["gain"] > 0   # target play is best at it
    assert got["optimal_expected_score"] == pytest.approx(solve("generala").mean, abs=1e-4)
