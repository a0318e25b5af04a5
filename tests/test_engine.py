"""Simulator, dice tables and results: the conformance suite over every rule set x
strategy, reproducibility contracts, result consistency, strategy legality, and
Monte Carlo against the exact dice tables. Over 600 lines: the conformance suite is one
matrix of rule sets x strategies with its shared fixtures.

Statistical checks use fixed seeds and generous significance levels (they assert
with tolerances, never on the exact random stream).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from conftest import (ENGINE_RULE_CASES, HEAVY_RULE_CASES, HEAVY_STRATEGIES, YACHT_MIX, Recorder, case_id,
                      check_ruleset, check_strategy)
from yahtzee_sim import (SEED_BLOCK, GameAggregate, StrategyError, simulate, simulate_turns)
from yahtzee_sim.dice import dice_tables
from yahtzee_sim.patterns import pattern_table
from yahtzee_sim.results import PERCENTILES
from yahtzee_sim.rules import get_rules, rule_names, rule_options
from yahtzee_sim.state import GameState
from yahtzee_sim.strategies import Strategy, best_legal, get_strategy, strategy_names


# -- conformance suite -------------------------------------------------------------------

RULESET_CASES = [(n, ()) for n in rule_names()] + [
    ("yacht", (o,)) for o in rule_options("yacht")] + [
    ("yahtzee", (o,)) for o in rule_options("yahtzee")] + [
    ("yahtzee-free-joker", ("no-joker",)), ("yahtzee-original-joker", ("no-yahtzee-bonus",)),
    YACHT_MIX]


@pytest.mark.parametrize("case", RULESET_CASES, ids=case_id)
def test_check_ruleset(case):
    check_ruleset(get_rules(*case))


def _strategy_cases():
    out = []
    for strategy in strategy_names():
        for case in ENGINE_RULE_CASES:
            marks = []
            if strategy in HEAVY_STRATEGIES:
                if case not in HEAVY_RULE_CASES:
                    continue   # solving every variant is too slow for the test suite
                marks = [pytest.mark.slow]
            out.append(pytest.param(case, strategy, marks=marks, id=f"{case_id(case)}-{strategy}"))
    return out


@pytest.mark.parametrize("case,strategy", _strategy_cases())
def test_check_strategy(case, strategy):
    check_strategy(get_rules(*case), strategy)


def test_registered_strategies_include_the_baselines():
    assert {"random", "keep-largest"} <= set(strategy_names())
    for name in strategy_names():
        assert get_strategy(name).name == name


def test_keep_largest_keeps_the_largest_group_ties_to_the_higher_face():
    # Seeds 001/003: keep the largest group of equal dice, reroll the rest.
    rules = get_rules("yahtzee")
    t = rules.dice
    strat = get_strategy("keep-largest").prepare(rules)
    cases = {(1, 1, 2, 2, 3): [0, 2, 0, 0, 0, 0], (6, 5, 4, 3, 2): [0, 0, 0, 0, 0, 1],
             (3, 3, 3, 6, 6): [0, 0, 3, 0, 0, 0], (5, 5, 5, 5, 5): [0, 0, 0, 0, 5, 0]}
    rolls = np.array([t.roll_index_of(d) for d in cases])
    state = GameState.new(rules, len(rolls))
    for rolls_left in (2, 1):
        kept = t.keep_counts[np.asarray(strat.keep(state, rolls, rolls_left, np.zeros(len(rolls))))]
        assert kept.tolist() == list(cases.values())


def test_random_strategy_is_uniform_over_distinct_keeps_and_legal_boxes():
    rules = get_rules("yahtzee")
    t = rules.dice
    strat = get_strategy("random").prepare(rules)
    roll = t.roll_index_of([1, 1, 2, 2, 3])
    n = int(t.n_subkeeps[roll])
    assert n == 3 * 3 * 2
    u = (np.arange(n) + 0.5) / n   # one uniform in each of n equal slices
    state = GameState.new(rules, n)
    keeps = np.asarray(strat.keep(state, np.full(n, roll), 2, u))
    assert sorted(keeps.tolist()) == sorted(t.subkeeps[roll, :n].tolist())
    legal = np.zeros((5, rules.n_boxes), dtype=bool)
    legal[:, [1, 4, 7, 9, 12]] = True
    u = (np.arange(5) + 0.5) / 5
    from yahtzee_sim.state import TurnOptions
    opts = TurnOptions(legal, np.zeros(legal.shape, np.int16), np.zeros(legal.shape, np.int16))
    boxes = np.asarray(strat.box(GameState.new(rules, 5), np.zeros(5, np.intp), opts, u))
    assert boxes.tolist() == [1, 4, 7, 9, 12]


@pytest.mark.parametrize("strategy", [s for s in strategy_names() if s not in HEAVY_STRATEGIES])
def test_batch_size_does_not_change_the_games(strategy):
    n = 4500   # > 4096, not a multiple of the seed block
    runs = [simulate("yahtzee", strategy, n, seed=77, batch=b) for b in (1024, 4096, 65536)]
    for other in runs[1:]:
        for k in runs[0].games:
            assert np.array_equal(runs[0].games[k], other.games[k]), k
        assert np.array_equal(runs[0].aggregate.total_hist, other.aggregate.total_hist)


def test_n_not_a_multiple_of_the_seed_block():
    assert SEED_BLOCK == 1024
    big = simulate("yatzy", "random", 3 * SEED_BLOCK + 5, seed=3)
    for n in (1, 2, SEED_BLOCK - 1, SEED_BLOCK + 1, 2 * SEED_BLOCK + 700):
        small = simulate("yatzy", "random", n, seed=3)
        assert small.n_games == n == len(small.games["total"]) == small.aggregate.n_games
        for k in big.games:
            assert np.array_equal(big.games[k][:n], small.games[k]), (n, k)


def test_different_seeds_give_different_games():
    a = simulate("yahtzee", "random", 1024, seed=1).games["total"]
    b = simulate("yahtzee", "random", 1024, seed=2).games["total"]
    assert not np.array_equal(a, b)


def test_seed_none_is_recorded_and_reproducible():
    res = simulate("yacht", "keep-largest", 1500)
    again = simulate("yacht", "keep-largest", 1500, seed=res.seed)
    assert np.array_equal(res.games["total"], again.games["total"])


# -- common random numbers ----------------------------------------------------------------

class KeepAll(Strategy):
    """Stands on the first roll (holds every die); fills the best box now."""

    name = "keep-all"

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls]

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def test_two_strategies_see_the_same_first_roll_every_turn():
    # Engine contract: the first roll of every turn comes from the game's own tape
    # slot, whatever the decisions before it.
    recs = []
    for strategy in ["random", "keep-largest", KeepAll()]:
        rec = Recorder(get_strategy(strategy))
        simulate("yahtzee", rec, 2500, seed=11, batch=1024)
        recs.append(rec.arrays())
    for other in recs[1:]:
        assert np.array_equal(recs[0]["first"], other["first"])
    assert not np.array_equal(recs[0]["final"], recs[1]["final"])


def test_turn_simulator_uses_the_first_turn_of_each_game_tape():
    # simulate_turns' documented contract: turn i uses the dice of game i's first turn.
    games = Recorder(KeepAll())
    simulate("yacht", games, 3000, seed=5)
    turns = Recorder(KeepAll())
    simulate_turns("yacht", turns, 3000, seed=5)
    first_game = games.arrays()["first"][:, 0]
    first_turn = turns.arrays()["first"][:, 0]
    assert np.array_equal(first_game, first_turn)
    # keep-all ends each turn on its first roll: the histogram is of those rolls.
    res = simulate_turns("yacht", KeepAll(), 3000, seed=5)
    assert np.array_equal(res.roll_counts, np.bincount(first_game, minlength=252))


def test_rerolls_draw_from_the_same_tape_slots():
    # Strategies that hold the same dice at the same roll draw the same rerolls: the
    # roll-r reroll always comes from slot r of the game's tape.
    class Scripted(KeepAll):
        """Holds all dice (True) or none (False) at roll 1 and 2; records every roll."""

        def __init__(self, plan):
            self.plan, self.seen = plan, {2: [], 1: [], 0: []}
            self.name = f"scripted-{plan}"

        def keep(self, state, rolls, rolls_left, u):
            self.seen[rolls_left].append(rolls.copy())
            hold = self.plan[self.rules.n_rolls - 1 - rolls_left]
            return self.dice.roll_keep_index[rolls] if hold else np.zeros(len(rolls), np.int64)

        def box(self, state, rolls, options, u):
            self.seen[0].append(rolls.copy())
            return super().box(state, rolls, options, u)

    runs = {}
    for plan in [(False, False), (False, True), (True, False)]:
        s = Scripted(plan)
        simulate("yahtzee", s, 1500, seed=8, batch=1024)
        runs[plan] = {k: np.concatenate(v) for k, v in s.seen.items()}
    nn, ns, sn = runs[(False, False)], runs[(False, True)], runs[(True, False)]
    assert dice_tables().keep_size[0] == 0
    assert np.array_equal(nn[2], ns[2]) and np.array_equal(nn[2], sn[2])   # first rolls
    assert np.array_equal(nn[1], ns[1])          # both rerolled all five dice from slot 1
    assert np.array_equal(ns[0], ns[1])          # standing keeps the roll
    assert np.array_equal(nn[0], sn[0])          # both threw all five dice from slot 2
    assert not np.array_equal(nn[1], sn[1])


# -- results ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def result():
    return simulate("yahtzee", "random", 2048 + 300, seed=4242)


def test_summary_agrees_with_the_frame(result):
    frame = result.to_frame()
    s = result.summary()
    n = len(frame)
    assert s["games"] == n == result.n_games
    assert s["rules"] == "yahtzee" and s["strategy"] == "random" and s["seed"] == 4242
    assert s["mean"] == pytest.approx(frame["total"].mean(), rel=1e-12)
    assert s["sd"] == pytest.approx(frame["total"].std(ddof=1), rel=1e-10)
    assert s["se"] == pytest.approx(s["sd"] / math.sqrt(n), rel=1e-12)
    half = stats.t.ppf(0.975, n - 1) * s["se"]
    assert (s["ci95_low"], s["ci95_high"]) == pytest.approx((s["mean"] - half, s["mean"] + half))
    assert result.ci("mean") == pytest.approx((s["ci95_low"], s["ci95_high"]))
    assert s["min"] == frame["total"].min() and s["max"] == frame["total"].max()
    for p in PERCENTILES:
        assert s[f"p{p}"] == np.percentile(frame["total"], p, method="inverted_cdf"), p
    assert s["upper_bonus_rate"] == pytest.approx((frame["upper_bonus"] > 0).mean())
    assert s["upper_bonus_rate"] == pytest.approx((frame["upper_total"] >= 63).mean())
    assert s["five_box_full_rate"] == pytest.approx((frame["yahtzee"] == 50).mean())
    # the earlier name still reads, in the summary and in count/rate
    assert s["five_box_50_rate"] == s["five_box_full_rate"] and result.rate("five_box_50") == s["five_box_full_rate"]
    assert s["five_count_mean"] == pytest.approx(frame["five_count"].mean())
    assert s["five_per_game"] == s["five_count_mean"]  # the earlier name still reads
    assert s["five_rolled_rate"] == result.rate("five_rolled") == pytest.approx((frame["five_count"] > 0).mean())
    assert list(frame.columns[:1]) == ["total"]
    assert all(b in frame.columns for b in result.rules.box_names)
    assert (frame[list(result.rules.box_names)].sum(axis=1) + frame["upper_bonus"]
            + 100 * frame["five_bonus_count"] == frame["total"]).all()
    table = result.summary_frame()
    assert list(table.columns) == ["value", "kind", "meaning"] and list(table.index) == list(s)
    assert table.loc["five_rolled_rate", "kind"] == "rate" and table.loc["five_count_mean", "kind"] == "mean count"
    box = result.box_frame()
    assert box["mean"].to_numpy() == pytest.approx(frame[list(result.rules.box_names)].mean().to_numpy())


@pytest.mark.parametrize("n", [1, 2, 4, 1024, 2049])
def test_percentiles_are_inverted_cdf_for_any_n(n):
    res = simulate("yacht", "random", n, seed=n)
    totals = res.games["total"]
    s = res.summary()
    for p in PERCENTILES:
        assert s[f"p{p}"] == np.percentile(totals, p, method="inverted_cdf"), (n, p)
    if n == 1:
        assert math.isnan(s["sd"]) and s["min"] == s["max"] == s["p50"] == totals[0]


@pytest.mark.parametrize("n_low,n_high", [(100_000, 9_900_001), (1, 99), (2, 98), (250, 750), (3, 0)])
def test_percentiles_of_large_runs_are_exact(n_low, n_high):
    # Inverted CDF with integers: the smallest s with 100 * cdf(s) >= p * n. Large runs
    # (10,000,001 games here) used to come out one step low through a float tolerance.
    from yahtzee_sim.results import GameAggregate

    agg = GameAggregate.empty(get_rules("yahtzee"))
    agg.total_hist[100], agg.total_hist[200] = n_low, n_high
    n = n_low + n_high
    cdf = np.cumsum(agg.total_hist)
    for p in PERCENTILES + (0, 100):
        expected = int(np.flatnonzero(100 * cdf >= max(p * n, 1))[0])
        assert agg.quantile(p / 100) == expected, (p, n)


def test_rates_and_wilson_intervals(result):
    frame = result.to_frame()
    k = int((frame["upper_bonus"] > 0).sum())
    ci = stats.binomtest(k, len(frame)).proportion_ci(method="wilson")
    assert result.ci("upper_bonus") == pytest.approx((ci.low, ci.high))
    with pytest.raises(ValueError):
        result.rate("nope")
    no_bonus = simulate("yacht", "random", 1024, seed=1, options=["no-bonus"])
    # a rule set without an upper bonus has no such line (the count is still asked for by name)
    assert "upper_bonus_rate" not in no_bonus.summary() and no_bonus.rate("upper_bonus") == 0.0
    assert not no_bonus.games["upper_bonus"].any()


def test_aggregates_only_run_matches_and_merges():
    kept = simulate("yatzy", "keep-largest", 3000, seed=9, batch=1024)
    lean = simulate("yatzy", "keep-largest", 3000, seed=9, batch=1024, keep_games=False)
    with pytest.raises(ValueError):
        lean.to_frame()
    a, b = kept.summary(), lean.summary()
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    rules = kept.rules
    g = kept.games
    halves = [{k: v[:1000] for k, v in g.items()}, {k: v[1000:] for k, v in g.items()}]
    merged = GameAggregate.from_games(rules, halves[1]).merge(GameAggregate.from_games(rules, halves[0]))
    whole = GameAggregate.from_games(rules, g)
    for field in ("total_hist", "box_hist", "upper_hist", "five_bonus_hist", "five_count_hist"):
        assert np.array_equal(getattr(merged, field), getattr(whole, field)), field
        assert np.array_equal(getattr(whole, field), getattr(lean.aggregate, field)), field
    assert merged.five_box_full_games == whole.five_box_full_games == lean.aggregate.five_box_full_games


# -- legality: the engine names the strategy that cheats ------------------------------

class _Named(Strategy):
    name = "sneaky-player"

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls]

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def _keeper(fn):
    return type("Bad", (_Named,), {"keep": lambda self, state, rolls, rl, u: fn(self, rolls)})()


def _boxer(fn):
    return type("Bad", (_Named,), {"box": lambda self, state, rolls, options, u: fn(self, options)})()


FIVE_SIXES = dice_tables().roll_keep_index[dice_tables().roll_index_of([6] * 5)]

BAD_KEEPS = {
    "dice-it-does-not-have": lambda s, rolls: np.full(len(rolls), FIVE_SIXES, dtype=np.int64),
    "negative-index": lambda s, rolls: np.full(len(rolls), -1, dtype=np.int64),
    "index-past-the-end": lambda s, rolls: np.full(len(rolls), s.dice.n_keeps, dtype=np.int64),
    "wrong-shape": lambda s, rolls: s.dice.roll_keep_index[rolls][:-1],
    "floats": lambda s, rolls: s.dice.roll_keep_index[rolls].astype(float),
}


@pytest.mark.parametrize("how", list(BAD_KEEPS))
@pytest.mark.parametrize("runner", ["simulate", "simulate_turns"])
def test_bad_keeps_raise_strategy_error_naming_the_strategy(how, runner):
    run = simulate if runner == "simulate" else simulate_turns
    with pytest.raises(StrategyError, match="sneaky-player") as e:
        run("yahtzee", _keeper(BAD_KEEPS[how]), 1500, seed=1)
    assert "\n" not in str(e.value)
    assert isinstance(e.value, ValueError)   # so the CLI turns it into exit code 2


BAD_BOXES = {
    "always-the-first-box": lambda s, o: np.zeros(len(o.legal), dtype=np.int64),
    "negative": lambda s, o: np.full(len(o.legal), -1, dtype=np.int64),
    "past-the-end": lambda s, o: np.full(len(o.legal), s.rules.n_boxes, dtype=np.int64),
    "ignores-legality": lambda s, o: np.argmax(o.gain, axis=1),
    "wrong-shape": lambda s, o: np.zeros((len(o.legal), 1), dtype=np.int64),
    "floats": lambda s, o: np.zeros(len(o.legal)),
}


@pytest.mark.parametrize("how", list(BAD_BOXES))
@pytest.mark.parametrize("rules", ["yahtzee", "yacht+fill-in-order"])
def test_illegal_boxes_raise_strategy_error_naming_the_strategy(how, rules):
    name, *options = rules.split("+")
    with pytest.raises(StrategyError, match="sneaky-player") as e:
        simulate(name, _boxer(BAD_BOXES[how]), 1500, seed=2, options=options)
    assert "\n" not in str(e.value)


def test_forced_joker_violation_is_caught():
    # A player who puts an extra Yahtzee in an open box the forced joker forbids is
    # refused (keep-largest's keeps make extra Yahtzees common).
    class IgnoresJoker(_Named):
        def prepare(self, rules):
            super().prepare(rules)
            self.inner = get_strategy("keep-largest").prepare(rules)
            return self

        def keep(self, state, rolls, rolls_left, u):
            return self.inner.keep(state, rolls, rolls_left, u)

        def box(self, state, rolls, options, u):
            forbidden = ~state.filled & ~options.legal
            use = forbidden.any(axis=1)
            return np.where(use, np.argmax(forbidden, axis=1), best_legal(options.gain, options.legal))

    with pytest.raises(StrategyError, match="sneaky-player.*illegal box") as e:
        simulate("yahtzee", IgnoresJoker(), 4096, seed=3)
    assert "legal: " in str(e.value)


# -- bad input ----------------------------------------------------------------------------

@pytest.mark.parametrize("n", [0, -5, 1.5, True, "10", None])
def test_bad_game_counts(n):
    with pytest.raises(ValueError, match="positive integer"):
        simulate("yahtzee", "random", n, seed=1)
    with pytest.raises(ValueError, match="positive integer"):
        simulate_turns("yahtzee", "random", n, seed=1)


@pytest.mark.parametrize("seed", [-1, 1.5, "7", True])
def test_bad_seeds(seed):
    with pytest.raises(ValueError, match="seed"):
        simulate("yahtzee", "random", 10, seed=seed)


def test_bad_names_and_batch():
    with pytest.raises(ValueError, match="valid strategies: .*keep-largest"):
        simulate("yahtzee", "keep-largestt", 10)
    with pytest.raises(ValueError, match="valid rule sets"):
        simulate("yahzee", "random", 10)
    with pytest.raises(ValueError, match="valid options: no-yahtzee-bonus"):
        simulate("yahtzee", "random", 10, options=["three-dice"])
    with pytest.raises(ValueError, match="batch"):
        simulate("yahtzee", "random", 10, batch=0)
    with pytest.raises(ValueError, match="batch"):
        simulate_turns("yahtzee", "random", 10, batch=-1)


# -- dice tables --------------------------------------------------------------------------

@pytest.mark.parametrize("n_dice,n_rolls,n_keeps", [(5, 252, 462), (6, 462, 924), (3, 56, 84)])
def test_dice_table_invariants(n_dice, n_rolls, n_keeps):
    t = dice_tables(n_dice, 6)
    assert (t.n_rolls, t.n_keeps) == (n_rolls, n_keeps)
    assert (t.n_rolls, t.n_keeps) == (math.comb(n_dice + 5, 5), math.comb(n_dice + 6, 6))
    assert t.first_roll_prob.sum() == pytest.approx(1, abs=1e-12)
    assert np.allclose(t.transition.sum(axis=1), 1, atol=1e-12)
    assert (t.transition >= 0).all()
    empty = int(np.flatnonzero(t.keep_size == 0)[0])
    assert np.allclose(t.transition[empty], t.first_roll_prob)
    ways = t.first_roll_prob * 6 ** n_dice   # multinomial coefficients
    assert np.allclose(ways, np.round(ways)) and round(ways.sum()) == 6 ** n_dice
    assert (t.roll_counts.sum(axis=1) == n_dice).all()
    assert len({tuple(r) for r in t.roll_counts.tolist()}) == n_rolls
    assert (np.diff(t.roll_dice, axis=1) >= 0).all()
    assert (t.counts_of(t.roll_dice) == t.roll_counts).all()
    assert np.array_equal(t.roll_index(t.roll_dice), np.arange(n_rolls))
    for size in range(n_dice + 1):
        assert (t.keep_size == size).sum() == math.comb(size + 5, 5)
    # A keep can only lead to rolls that contain it; a full keep is a point mass.
    contains = (t.roll_counts[None, :, :] >= t.keep_counts[:, None, :]).all(axis=2)
    assert not (t.transition[~contains] > 0).any()
    full = t.roll_keep_index
    assert np.allclose(t.transition[full, np.arange(n_rolls)], 1)
    # Sub-keeps of each roll: all sub-multisets, prod(count + 1) of them.
    assert np.array_equal(t.n_subkeeps, np.prod(t.roll_counts.astype(np.int64) + 1, axis=1))
    for r in range(0, n_rolls, 7):
        subs = t.subkeeps[r, : t.n_subkeeps[r]]
        assert (t.keep_counts[subs] <= t.roll_counts[r]).all() and len(set(subs.tolist())) == len(subs)


def test_roll_index_any_order_and_bad_tables():
    t = dice_tables()
    rng = np.random.default_rng(0)
    dice = rng.integers(1, 7, (5000, 5))
    idx = t.roll_index(dice)
    assert (t.roll_counts[idx] == t.counts_of(dice)).all()
    assert np.array_equal(idx, t.roll_index(rng.permuted(dice, axis=1)))
    with pytest.raises(ValueError):
        dice_tables(0, 6)


def test_reroll_uses_the_first_dice_of_the_tape():
    t = dice_tables()
    tape = np.array([[1, 2, 3, 4, 5]])
    keep = t.keep_index_of_counts(np.array([[0, 0, 0, 0, 0, 3]]))
    assert t.roll_dice[t.reroll(keep, t.tape_prefix_keys(tape))].tolist() == [[1, 2, 6, 6, 6]]
    none = t.keep_index_of_counts(np.zeros((1, 6), dtype=np.int64))
    assert t.roll_dice[t.reroll(none, t.tape_prefix_keys(tape))].tolist() == [[1, 2, 3, 4, 5]]


@pytest.mark.parametrize("held", [[0, 0, 0, 0, 0, 2], [1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0]])
def test_reroll_via_the_tape_follows_the_transition_table(held):
    t = dice_tables()
    keep = int(t.keep_index_of_counts(np.array(held)))
    n = 40_000
    tape = np.random.default_rng(sum(held) + 17).integers(1, 7, (n, 5), dtype=np.uint8)
    rolls = t.reroll(np.full(n, keep), t.tape_prefix_keys(tape))
    observed = np.bincount(rolls, minlength=t.n_rolls)
    p = t.transition[keep]
    assert observed[p == 0].sum() == 0
    _chisquare_ok(observed, p)


def _chisquare_ok(observed, p, alpha=1e-3, min_expected=5.0):
    """Chi-square goodness of fit, pooling cells expected below ``min_expected``."""
    observed = np.asarray(observed, dtype=float)
    expected = p * observed.sum()
    small = expected < min_expected
    obs = np.append(observed[~small & (p > 0)], observed[small].sum())
    exp = np.append(expected[~small & (p > 0)], expected[small].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    res = stats.chisquare(obs, exp)
    assert res.pvalue > alpha, (res, len(obs))
    return res


# -- Monte Carlo vs exact ------------------------------------------------------------------

def test_published_first_roll_odds():
    # seed 003 ("Le probabilità", first roll of five dice): Yahtzee 6 in 7,776; four of a
    # kind or better about 2%; full house about 3.9%; large straight about 3.1%; small
    # straight or better about 15.4%; three of a kind or better about 21.3%.
    t = dice_tables()
    pt = pattern_table(t)
    prob = {c: float(t.first_roll_prob @ pt[c].to_numpy()) for c in pt.columns}
    assert round(prob["five_of_a_kind"] * 7776) == 6
    assert round(100 * prob["four_of_a_kind"]) == 2
    assert round(100 * prob["full_house"], 1) == 3.9
    assert round(100 * prob["large_straight"], 1) == 3.1
    assert round(100 * prob["small_straight"], 1) == 15.4
    assert round(100 * prob["three_of_a_kind"], 1) == 21.3


@pytest.mark.slow
def test_first_roll_frequencies_match_the_exact_tables():
    t = dice_tables()
    n = 150_000
    res = simulate_turns("yahtzee", KeepAll(), n, seed=2024)
    assert res.roll_counts.sum() == n
    _chisquare_ok(res.roll_counts, t.first_roll_prob)    # over the 252 rolls
    # A partition by pattern (largest group, straights, full house, two pairs).
    c = t.roll_counts
    top = c.max(axis=1)
    pairs = (c >= 2).sum(axis=1)
    pt = pattern_table(t)
    part = np.select(
        [top == 5, top == 4, pt["full_house"].to_numpy(), top == 3,
         pt["large_straight"].to_numpy(), pt["small_straight"].to_numpy(), pairs == 2, top == 2],
        [0, 1, 2, 3, 4, 5, 6, 7], 8)
    observed = np.bincount(part, weights=res.roll_counts, minlength=9)
    p = np.bincount(part, weights=t.first_roll_prob, minlength=9)
    _chisquare_ok(observed, p)
    # Each named pattern's Wilson interval (Bonferroni over the patterns) holds the exact value.
    frame = res.to_frame(level=1 - 0.01 / len(pt.columns))
    exact = t.first_roll_prob @ pt.to_numpy(dtype=float)
    assert ((frame["ci_low"].to_numpy() <= exact) & (exact <= frame["ci_high"].to_numpy())).all()


@pytest.mark.slow
def test_keep_largest_turn_matches_the_exact_turn_distribution():
    # The whole turn under keep-largest, exactly: P3 = (P1 @ T[k2]) @ T[k1].
    rules = get_rules("yahtzee")
    t = rules.dice
    strat = get_strategy("keep-largest").prepare(rules)
    state = GameState.new(rules, t.n_rolls)
    zeros = np.zeros(t.n_rolls)
    k2 = np.asarray(strat.keep(state, np.arange(t.n_rolls), 2, zeros))
    k1 = np.asarray(strat.keep(state, np.arange(t.n_rolls), 1, zeros))
    exact = (t.first_roll_prob @ t.transition[k2]) @ t.transition[k1]
    assert exact.sum() == pytest.approx(1)
    five = float(exact[rules.five_face > 0].sum())
    # seeds 001 and 003: keeping the largest group, a turn ends in five of a kind in
    # "about 4.6%" of turns.
    assert round(100 * five, 1) == 4.6
    n = 120_000
    res = simulate_turns(rules, "keep-largest", n, seed=99)
    _chisquare_ok(res.roll_counts, exact)
    lo, hi = stats.binomtest(int(res.roll_counts[rules.five_face > 0].sum()), n).proportion_ci(
        confidence_level=0.999, method="wilson")
    assert lo <= five <= hi


# -- boxes whose score depends on the throw number (Generala's "served" combinations) ----

def _served_rules():
    """Two two-sided dice, one box: a pair pays 10 if made on the first throw, else 5."""
    from yahtzee_sim.rules import Box, RuleSet

    def served_pair(counts, throws=None):
        pair = (counts == counts.sum(axis=-1, keepdims=True)).any(axis=-1)
        return np.where(pair, np.where(throws == 1, 10, 5), 0)

    return RuleSet(name="served-test", title="served pair", n_dice=2, n_faces=2, upper_bonus=0,
                   boxes=(Box("pair", "Pair", served_pair, by_throw=True),))


def test_served_combination_pays_by_throw_number():
    # keep-largest holds a first-throw pair (no further throw: served, 10) and otherwise
    # one die, rerolling the other: a pair on throw 2 or 3 pays 5. Exact odds:
    # P(10) = 1/2, P(5) = 1/2 * (1/2 + 1/4) = 3/8, P(0) = 1/8.
    from scipy import stats

    rules = _served_rules()
    assert rules.roll_dependent and rules.score_tables.shape == (3, 3, 1)
    n = 40_000
    totals = simulate(rules, "keep-largest", n, seed=8).games["total"]
    observed = [int((totals == v).sum()) for v in (10, 5, 0)]
    assert sum(observed) == n
    assert stats.chisquare(observed, [n / 2, 3 * n / 8, n / 8]).pvalue > 1e-4


def test_exact_engines_handle_throw_dependent_scoring():
    """The solver and the extremes engine model served scores.

    Optimal play here is keep-largest's (hold one die or the pair; rerolling one die or
    both makes a pair with chance 1/2 either way), so by hand: P(10) = 1/2, P(5) = 3/8,
    mean 55/8, E[X^2] = 475/8, variance 475/8 - (55/8)^2 = 775/64.
    """
    from yahtzee_sim.exact.extremes import extreme_score
    from yahtzee_sim.exact.solver import solve

    rules = _served_rules()
    sol = solve(rules, cache=False, dtype=np.float64)
    assert sol.mean == pytest.approx(55 / 8, abs=1e-12)
    assert sol.sd == pytest.approx((775 / 64) ** 0.5, abs=1e-9)
    assert extreme_score(rules).score == 10 and extreme_score(rules, kind="min").score == 0
