"""Exact policy values: brute force on tiny games, the solver, simulation, refusals, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from yahtzee_sim import StrategyError, simulate
from yahtzee_sim.cli import main
from yahtzee_sim.exact.space import state_space
from yahtzee_sim.exact.policy import (PolicyValue, achievable_upper_totals, policy_value,
                                      reachable_states)
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.rules import Box, RuleSet, get_rules
from yahtzee_sim.rules import scoring as sc
from yahtzee_sim.strategies import Strategy, best_legal, get_strategy
from yahtzee_sim.strategies.optimal import OptimalStrategy

from conftest import TINY_CASES, LowestBox, row_by_row, tiny_rules
from plain_game import mean_sd, strategy_outcomes



# -- tiny games, evaluated by brute force ------------------------------------------------

def two_box_rules() -> RuleSet:
    """A game to check by hand: one six-sided die, two rolls, two boxes (Sixes, Chance)."""
    boxes = (Box("sixes", "Sixes", sc.upper(6), upper_face=6), Box("chance", "Chance", sc.chance))
    return RuleSet(name="two-box", title="Two boxes", boxes=boxes, n_dice=1, n_faces=6,
                   n_rolls=2, upper_bonus=0)


def brute_force(rules: RuleSet, strategy: Strategy | None, *, uniform=False) -> tuple[float, float]:
    """Mean and sd of the final score by enumerating every ordered dice outcome
    (tests/plain_game.py: real upper totals, one strategy question per state and roll;
    ``uniform``: every keep and every legal box averaged, the ``random`` player)."""
    return mean_sd(strategy_outcomes(rules, strategy, uniform=uniform))


@pytest.mark.parametrize("case", list(TINY_CASES))
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "lowest-box"])
def test_tiny_games_match_brute_force(case, strategy):
    rules = tiny_rules(**TINY_CASES[case])
    make = (lambda: LowestBox()) if strategy == "lowest-box" else (lambda: get_strategy(strategy))
    mean, sd = brute_force(rules, make())
    pv = policy_value(rules, make())
    assert pv.mean == pytest.approx(mean, rel=1e-12, abs=1e-12)
    assert pv.sd == pytest.approx(sd, rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("case", list(TINY_CASES))
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "heuristic", "optimal"])
def test_decision_tables_equal_asking_row_by_row(case, strategy):
    """policy_value reads the built-in strategies' decisions from their tables; asked one
    (state, roll) row at a time instead (the straightforward way), every state's
    expected score and second moment come out the same."""
    rules = tiny_rules(**TINY_CASES[case])
    fast = policy_value(rules, strategy)
    slow = policy_value(rules, row_by_row(strategy))
    assert slow.strategy.endswith("(row by row)")
    seen = ~np.isnan(slow.values)
    assert np.array_equal(~np.isnan(fast.values), seen) and seen.sum() == slow.states
    np.testing.assert_allclose(fast.values[seen], slow.values[seen], rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(fast.second_moments[seen], slow.second_moments[seen], rtol=1e-12)


def test_two_box_game_by_hand():
    """keep-largest always holds its one die; it writes a 6 in Sixes (first on the tie
    with Chance) and anything else in Chance, then the other box takes the next die."""
    from fractions import Fraction as Fr

    die = [Fr(x) for x in range(1, 7)]
    p = Fr(1, 6)
    # first die 6: 6 in Sixes, then Chance takes a die y; else x in Chance, then Sixes
    # takes 6 * [y == 6]
    outcomes = [(6 + y, p * p) for y in die] + \
        [(x + (6 if y == 6 else 0), p * p) for x in die[:5] for y in die]
    mean = sum(v * q for v, q in outcomes)
    var = sum(v * v * q for v, q in outcomes) - mean * mean
    rules = two_box_rules()
    pv = policy_value(rules, "keep-largest")
    assert pv.mean == pytest.approx(float(mean), rel=1e-12)
    assert pv.sd == pytest.approx(math.sqrt(var), rel=1e-12)
    assert pv.states == 1 + 2 + 1
    for strategy in ("keep-largest", "greedy"):
        m, sd = brute_force(rules, get_strategy(strategy))
        pv = policy_value(rules, strategy)
        assert pv.mean == pytest.approx(m, rel=1e-12) and pv.sd == pytest.approx(sd, rel=1e-9)


def test_tiny_random_is_the_exact_average():
    """random by brute force: average over every keep and every legal box."""
    rules = tiny_rules()

    pv = policy_value(rules, "random")
    assert pv.method == "uniform average"
    # brute force with explicit averaging (independent of the evaluator)
    assert pv.mean == pytest.approx(brute_force(rules, None, uniform=True)[0], rel=1e-12)


def test_tiny_optimal_equals_solver():
    rules = tiny_rules()
    sol = solve(rules, dtype=np.float64, cache=False)
    pv = policy_value(rules, OptimalStrategy(sol))
    assert pv.mean == pytest.approx(sol.mean, rel=1e-9)
    assert pv.sd == pytest.approx(sol.sd, rel=1e-6)
    mean, _ = brute_force(rules, OptimalStrategy(sol))
    assert pv.mean == pytest.approx(mean, rel=1e-12)


# -- the optimal strategy equals the solver's value --------------------------------------

@pytest.mark.parametrize("name, options", [("yacht", ["fill-in-order"]), ("yacht-classic", []),
                                           ("yacht", ["fill-in-order", "yacht-bonus-100"])])
def test_optimal_policy_value_equals_solver(name, options):
    rules = get_rules(name, options)
    sol = solve(rules)
    pv = policy_value(rules, OptimalStrategy(sol))
    # float32 solver tables: the printed 4 decimals agree (issue 3)
    assert f"{pv.mean:.4f}" == f"{sol.mean:.4f}"
    assert abs(pv.mean - sol.mean) < 1e-6 * sol.mean
    assert pv.sd == pytest.approx(sol.sd, abs=1e-3)
    # every reachable state: the strategy's value is the solver's
    sp = state_space(rules)
    for level in range(rules.n_boxes):
        mask, u, flag = reachable_states(rules, level)
        filled = ((mask[:, None] >> np.arange(rules.n_boxes)) & 1).astype(bool)
        ours = pv.value(filled, u, flag.astype(bool))
        theirs = sol.value(filled, u, flag.astype(bool))
        assert np.allclose(ours, theirs, rtol=1e-6, atol=1e-4), level
    assert sp.n_boxes == rules.n_boxes


# -- simulation agrees inside its confidence interval ------------------------------------

SIM_CASES = [("yacht-classic", []), ("yacht", ["fill-in-order", "yacht-bonus-100"])]


@pytest.mark.parametrize("name, options", SIM_CASES)
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "heuristic", "random"])
def test_policy_value_inside_simulation_ci(name, options, strategy):
    rules = get_rules(name, options)
    pv = policy_value(rules, strategy)
    res = simulate(rules, strategy, 8192, seed=2024)
    s = res.summary()
    z = stats.norm.ppf(0.995)
    assert abs(s["mean"] - pv.mean) < z * s["se"], (s["mean"], pv.mean)
    # the sample sd of 8192 games is within ~5% of the exact sd
    assert s["sd"] == pytest.approx(pv.sd, rel=0.05)


@pytest.mark.slow
def test_policy_value_yacht_bonus_rules_against_simulation():
    rules = get_rules("yacht", ["fill-in-order", "yacht-bonus-100", "three-dice"])
    for strategy in ("keep-largest", "greedy"):
        pv = policy_value(rules, strategy)
        s = simulate(rules, strategy, 40_000, seed=7).summary()
        assert abs(s["mean"] - pv.mean) < stats.norm.ppf(0.995) * s["se"]


def test_strategy_ordering_on_yacht_classic():
    values = {s: policy_value("yacht-classic", s).mean
              for s in ("random", "keep-largest", "greedy", "heuristic", "optimal")}
    order = sorted(values, key=values.get)
    assert order[0] == "random" and order[-1] == "optimal"
    assert values["greedy"] > values["keep-largest"]


# -- invariants ----------------------------------------------------------------------------

def test_chunking_does_not_change_the_answer():
    rules = tiny_rules()
    a = policy_value(rules, "greedy")
    b = policy_value(rules, "greedy", chunk_rows=1)       # one state per chunk
    assert np.array_equal(np.isnan(a.values), np.isnan(b.values))
    assert np.allclose(a.values, b.values, equal_nan=True, rtol=0, atol=1e-12)
    assert np.allclose(a.second_moments, b.second_moments, equal_nan=True, rtol=1e-12)


def test_reachable_states_are_the_solvers():
    rules = get_rules("yahtzee")
    sp = state_space(rules)
    total = 0
    for level in (0, 1, 5, 12, 13):
        mask, u, flag = reachable_states(rules, level)
        assert len(np.unique(sp.flat(mask, u, flag))) == len(mask)
        assert (sp.canonical_u(mask, u) >= 0).all()        # every state in a solved class
        assert ((flag == 0) | ((mask & sp.five_bit) != 0)).all()
        assert (u <= sp.cap).all()
        total += len(mask)
    assert reachable_states(rules, 0)[0].tolist() == [0]
    with pytest.raises(ValueError, match="level must be an integer in 0..13"):
        reachable_states(rules, 14)


def test_achievable_upper_totals():
    rules = get_rules("yahtzee")
    filled = np.zeros(13, bool)
    filled[4] = True                                       # Fives only
    assert achievable_upper_totals(rules, filled).tolist() == [0, 5, 10, 15, 20, 25]
    filled[:6] = True
    totals = achievable_upper_totals(rules, filled)
    assert totals.max() == 105 and len(totals) == 106      # every total 0..105


def test_result_object():
    pv = policy_value("yacht", "keep-largest", options=["fill-in-order"])
    assert isinstance(pv, PolicyValue)
    f = pv.to_frame()
    assert list(f.index) == list(range(pv.rules.n_boxes + 1))
    assert f["states"].sum() == pv.states
    assert f.loc[pv.rules.n_boxes, "value_max"] == 0
    assert (f["value_min"] >= 0).all()
    s = pv.summary()
    assert s["expected_score"] == pv.mean and s["method"] == "deterministic"
    fresh = np.zeros((1, pv.rules.n_boxes), bool)
    assert pv.value(fresh, 0, False)[0] == pv.mean
    with pytest.raises(ValueError, match="columns"):
        pv.value(np.zeros((1, 3), bool), 0, False)
    with pytest.raises(ValueError, match="non-negative"):
        pv.value(fresh, -1, False)


# -- refusals --------------------------------------------------------------------------------

class CoinFlipBox(Strategy):
    """Randomized: the box depends on u."""

    name = "coin-box"

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls].astype(np.int64)

    def box(self, state, rolls, options, u):
        first = np.argmax(options.legal, axis=1)
        last = options.legal.shape[1] - 1 - np.argmax(options.legal[:, ::-1], axis=1)
        return np.where(u < 0.5, first, last)


class CoinFlipKeep(CoinFlipBox):
    """Randomized keeps only (reroll everything or nothing)."""

    name = "coin-keep"

    def keep(self, state, rolls, rolls_left, u):
        return np.where(u < 0.5, self.dice.roll_keep_index[rolls].astype(np.int64), 0)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def test_randomized_strategies_are_refused():
    rules = tiny_rules()
    with pytest.raises(ValueError, match="'coin-box' is randomized .*its box depends on its uniform u"):
        policy_value(rules, CoinFlipBox())
    with pytest.raises(ValueError, match="'coin-keep' is randomized .*its keep with 2 rolls left"):
        policy_value(rules, CoinFlipKeep())


class Cheat(Strategy):
    name = "cheat"

    def __init__(self, what):
        self.what = what

    def keep(self, state, rolls, rolls_left, u):
        if self.what == "keep":
            return np.full(len(rolls), self.dice.n_keeps - 1)       # dice it may not have
        if self.what == "keep-shape":
            return np.zeros(len(rolls) + 1, dtype=np.int64)
        return self.dice.roll_keep_index[rolls].astype(np.int64)

    def box(self, state, rolls, options, u):
        if self.what == "box":
            return np.argmax(~options.legal, axis=1)                 # a filled box
        if self.what == "box-dtype":
            return np.zeros(len(rolls))
        return best_legal(options.gain, options.legal)


@pytest.mark.parametrize("what, message", [("keep", "kept dice it does not have"),
                                           ("keep-shape", "keep\\(\\) must return"),
                                           ("box", "chose an illegal box"),
                                           ("box-dtype", "box\\(\\) must return")])
def test_illegal_decisions_raise(what, message):
    rules = tiny_rules()
    with pytest.raises(StrategyError, match=message):
        policy_value(rules, Cheat(what))


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown strategy 'nope'; valid strategies: random"):
        policy_value("yacht", "nope")
    with pytest.raises(ValueError, match="unknown rule set"):
        policy_value("nope", "greedy")
    with pytest.raises(ValueError, match="chunk_rows must be a positive integer"):
        policy_value("yacht", "greedy", chunk_rows=0)


# -- CLI -------------------------------------------------------------------------------------

def test_cli_policy_value(capsys):
    assert main(["policy-value", "--rules", "yacht", "--option", "fill-in-order",
                 "--strategy", "greedy"]) == 0
    out = capsys.readouterr().out
    pv = policy_value("yacht", "greedy", options=["fill-in-order"])
    assert f"{pv.mean:.4f}" in out and "standard dev." in out
    assert main(["policy-value", "--rules", "yacht", "--option", "fill-in-order",
                 "--strategy", "keep-largest", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["strategy"] == "keep-largest" and data["options"] == ["fill-in-order"]
    assert data["expected_score"] == pytest.approx(
        policy_value("yacht", "keep-largest", options=["fill-in-order"]).mean)


@pytest.mark.parametrize("argv, message", [
    (["policy-value", "--strategy", "nope"], "unknown strategy 'nope'"),
    (["policy-value", "--rules", "nope", "--strategy", "greedy"], "unknown rule set 'nope'"),
    (["policy-value", "--rules", "yacht", "--option", "bad", "--strategy", "greedy"], "unknown option 'bad'"),
    (["policy-value"], "required: --strategy"),
])
def test_cli_policy_value_errors(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("yahtzee-sim: error:") and message in err


# -- the fast paths: decision tables, compiled loops, random by move weights ------------

class TableOptimal(OptimalStrategy):
    """Optimal play with its decision table loaded when prepared: keep() and box() read
    the table (as the simulator plays it), so a brute force asking them sees its decisions."""

    def prepare(self, rules):
        super().prepare(rules)
        self.decision_table()
        return self


@pytest.mark.parametrize("case", list(TINY_CASES))
def test_optimal_read_from_its_decision_table_matches_brute_force(case):
    rules = tiny_rules(**TINY_CASES[case])
    sol = solve(rules, cache=False)
    mean, sd = brute_force(rules, TableOptimal(sol))
    pv = policy_value(rules, OptimalStrategy(sol))
    assert pv.mean == pytest.approx(mean, rel=1e-12)
    assert pv.sd == pytest.approx(sd, rel=1e-9)


@pytest.mark.parametrize("name, options", [("tiny", None), ("yacht-classic", []),
                                           ("yacht", ["fill-in-order", "yacht-bonus-100"])])
def test_decision_table_evaluation_equals_the_widget_one_state_for_state(name, options):
    """The optimal strategy read from its decision table and decided by the widget (its
    boxes box by box, its keeps asked row by row): every state's value the same."""
    rules = tiny_rules() if options is None else get_rules(name, options)
    sol = solve(rules)
    fast = policy_value(rules, OptimalStrategy(sol))
    widget = policy_value(rules, OptimalStrategy(sol, table=False))
    seen = ~np.isnan(widget.values)
    assert np.array_equal(~np.isnan(fast.values), seen)
    np.testing.assert_allclose(fast.values[seen], widget.values[seen], rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(fast.second_moments[seen], widget.second_moments[seen], rtol=1e-12)


def test_yahtzee_decision_table_reads_the_widget_decisions_on_its_first_levels():
    """On yahtzee's first levels (and a sample of two later ones) the boxes and keeps read
    from the decision table are the widget's, state by state and roll by roll."""
    from yahtzee_sim.exact.policy import _probe, table_decisions, EvalChunk
    from yahtzee_sim.engine import MoveChecks

    rules = get_rules("yahtzee")
    sol = solve(rules)
    sp = state_space(rules)
    table = OptimalStrategy(sol).prepare(rules)
    table.decision_table()
    widget = OptimalStrategy(sol, table=False).prepare(rules)
    is_subkeep = MoveChecks.of(rules).is_subkeep
    rng = np.random.default_rng(9)
    for level in (0, 1, 2, 7, 12):
        mask, u, flag = reachable_states(rules, level)
        if len(mask) > 64:
            pick = rng.choice(len(mask), 64, replace=False)
            mask, u, flag = mask[pick], u[pick], flag[pick]
        turn = EvalChunk(rules, sp, mask, u, flag)
        boxes, keeps = table_decisions(table, turn)
        w_boxes, w_keeps, _ = _probe(widget, rules, turn, is_subkeep)
        np.testing.assert_array_equal(boxes, w_boxes)
        for j in w_keeps:
            np.testing.assert_array_equal(keeps[j], w_keeps[j])


@pytest.mark.parametrize("n_dice, n_faces", [(5, 6), (2, 3), (6, 6), (5, 7)])
def test_widget_compiled_loops_equal_numpy(n_dice, n_faces, monkeypatch):
    """Large batches sweep the keep lattice in compiled loops: the same floats and the
    same arg keeps as the numpy loops, ties included (integer values: many ties)."""
    from yahtzee_sim.dice import dice_tables
    from yahtzee_sim.exact import widget

    d = dice_tables(n_dice, n_faces)
    rng = np.random.default_rng(n_dice * 10 + n_faces)
    for dtype in (np.float32, np.float64):
        v = rng.integers(0, 4, (d.n_rolls, 2 * widget.COMPILED_COLUMNS)).astype(dtype)
        final = np.ascontiguousarray(v[:, :widget.COMPILED_COLUMNS + 37].T)   # a partial last tile
        fast_e = widget.keep_expectations(d, v)
        fast_b, fast_a = widget.best_subkeep(d, fast_e)
        fast_plan = widget.best_keeps(d, final, rolls_left=3)
        monkeypatch.setattr(widget, "COMPILED_COLUMNS", 10**9)
        slow_e = widget.keep_expectations(d, v)
        slow_b, slow_a = widget.best_subkeep(d, slow_e)
        slow_plan = widget.best_keeps(d, final, rolls_left=3)
        monkeypatch.undo()
        assert fast_e.dtype == slow_e.dtype and fast_a.dtype == slow_a.dtype
        np.testing.assert_array_equal(fast_e, slow_e)
        np.testing.assert_array_equal(fast_b, slow_b)
        np.testing.assert_array_equal(fast_a, slow_a)
        for j in range(1, 4):
            assert fast_plan.values[j].dtype == slow_plan.values[j].dtype
            assert fast_plan.keeps[j].dtype == slow_plan.keeps[j].dtype
            np.testing.assert_array_equal(fast_plan.values[j], slow_plan.values[j])
            np.testing.assert_array_equal(fast_plan.keeps[j], slow_plan.keeps[j])


@pytest.mark.parametrize("case", list(TINY_CASES))
def test_random_by_move_weights_matches_brute_force(case):
    """random's value sums each (filled boxes, flag) group's move weights once; mean and
    sd equal the brute-force average over every keep and legal box, on every tiny case."""
    rules = tiny_rules(**TINY_CASES[case])
    mean, sd = brute_force(rules, None, uniform=True)
    pv = policy_value(rules, "random")
    assert pv.mean == pytest.approx(mean, rel=1e-12)
    assert pv.sd == pytest.approx(sd, rel=1e-9)


# -- the keep lattice's one forward push, against throwing the dice by enumeration ----
def _throw_by_hand(d, keep_mass):
    """(R, C) mass on the rolls after each keep's missing dice are thrown: every ordered
    outcome of the thrown dice, plain Python."""
    from itertools import product

    roll_of = {tuple(c): r for r, c in enumerate(d.roll_counts.tolist())}
    out = np.zeros((d.n_rolls, keep_mass.shape[1]))
    for k, counts in enumerate(d.keep_counts.tolist()):
        free = d.n_dice - sum(counts)
        for faces in product(range(d.n_faces), repeat=free):
            c = list(counts)
            for f in faces:
                c[f] += 1
            out[roll_of[tuple(c)]] += keep_mass[k] / d.n_faces ** free
    return out


def test_forward_push_throws_the_dice_a_keep_does_not_hold():
    from yahtzee_sim.dice import dice_tables
    from yahtzee_sim.exact.policy import _throw

    d = dice_tables(3, 4)
    mass = np.random.default_rng(3).random((d.n_keeps, 2))
    np.testing.assert_allclose(_throw(d, mass.copy()), _throw_by_hand(d, mass), rtol=1e-13, atol=0)


def test_final_roll_masses_of_many_plans_against_enumeration():
    """Eleven plans (one group of eight pushed together, then three) of random legal
    keeps: each plan's final-roll distribution, and its part with no five of a kind
    (here three alike) at any throw, as throwing by hand gives them."""
    from yahtzee_sim.dice import dice_tables
    from yahtzee_sim.exact.policy import _Keeps, final_roll_masses

    d = dice_tables(3, 4)
    rng = np.random.default_rng(11)
    n_plans, n_rolls = 11, 3
    pick = {}
    for j in range(1, n_rolls):
        legal = [np.flatnonzero(d.subkeeps[r] >= 0) for r in range(d.n_rolls)]
        pick[j] = np.array([[d.subkeeps[r, rng.choice(legal[r])] for r in range(d.n_rolls)]
                            for _ in range(n_plans)])
    is_five = d.roll_counts.max(axis=1) == d.n_dice
    got, got_no5 = final_roll_masses(d, _Keeps(pick), n_rolls, is_five)
    for p in range(n_plans):
        x = d.first_roll_prob.copy()
        x5 = np.where(is_five, 0.0, x)
        for j in range(n_rolls - 1, 0, -1):
            y = np.zeros((d.n_keeps, 2))
            np.add.at(y, pick[j][p], np.stack([x, x5], axis=1))
            thrown = _throw_by_hand(d, y)
            x, x5 = thrown[:, 0], np.where(is_five, 0.0, thrown[:, 1])
        np.testing.assert_allclose(got[p], x, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(got_no5[p], x5, rtol=1e-12, atol=1e-15)
    assert not np.allclose(got, got[0])            # the plans differ, and so do their masses
