"""The advisor: exact values against the solver and the optimal strategy, every bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from yahtzee_sim import GameState
from yahtzee_sim.cli import main
from yahtzee_sim.exact import cache as cache_mod
from yahtzee_sim.exact.advisor import EXPLANATION, Advice, advise, parse_filled
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.rules import Box, RuleSet, get_rules
from yahtzee_sim.rules import scoring as sc
from yahtzee_sim.strategies.optimal import OptimalStrategy



@pytest.fixture(scope="module")
def yahtzee_sol():
    return solve("yahtzee")


@pytest.fixture(scope="module")
def yacht_sol():
    return solve("yacht")


def _bits(rules, names):
    return parse_filled(rules, names)


# -- exact values ------------------------------------------------------------------------

def test_fresh_card_averages_to_the_solver_value(yacht_sol):
    """Averaged over the first roll, the best keep's value is the optimal expected score."""
    rules = yacht_sol.rules
    d = rules.dice
    best = np.array([advise(rules, d.roll_dice[r].tolist(), rolls_left=2, solution=yacht_sol)
                     .best["expected"] for r in range(d.n_rolls)])
    assert float(best @ d.first_roll_prob) == pytest.approx(yacht_sol.mean, rel=1e-6)


@pytest.mark.parametrize("dice", ["13356", "66662", "12345", "11111", "22456"])
def test_rolls_left_are_consistent(yahtzee_sol, dice):
    """Holding every die with j rolls left is worth the best choice with j - 1 left."""
    kw = dict(filled="ones,chance,full_house", upper=3, solution=yahtzee_sol)
    a2, a1, a0 = (advise("yahtzee", dice, rolls_left=j, **kw) for j in (2, 1, 0))
    for later, now in ((a1, a2), (a0, a1)):
        f = now.to_frame()
        hold_all = f.loc[f["held"] == 5, "expected"].item()
        assert hold_all == pytest.approx(later.best["expected"], rel=1e-12)


def test_box_values_are_points_plus_solver_value(yahtzee_sol):
    rules = yahtzee_sol.rules
    a = advise(rules, "33355", rolls_left=0, filled="threes,fives", upper=24, solution=yahtzee_sol)
    f = a.to_frame()
    assert a.kind == "box" and f.columns.tolist() == ["box", "label", "points", "bonus", "later",
                                                       "expected", "loss"]
    assert set(f["box"]) == set(rules.box_names) - {"threes", "fives"}
    for row in f.itertuples():
        filled = _bits(rules, ["threes", "fives", row.box])
        upper = 24 + (row.points if rules.is_upper[rules.box_index(row.box)] else 0)
        assert row.later == pytest.approx(yahtzee_sol.value(filled, [upper], [False])[0])
        assert row.expected == pytest.approx(row.points + row.bonus + row.later)
    assert f.loc[f["box"] == "full_house", "points"].item() == 25
    assert (np.diff(f["expected"]) <= 0).all() and f["loss"].iloc[0] == 0 and (f["loss"] >= 0).all()
    assert f["loss"].to_numpy() == pytest.approx(f["expected"].iloc[0] - f["expected"].to_numpy())


def test_upper_bonus_counted_when_it_is_reached(yahtzee_sol):
    a = advise("yahtzee", "66666", rolls_left=0, filled="ones,twos,threes,fours,fives",
               upper=33, solution=yahtzee_sol)
    f = a.to_frame().set_index("box")
    assert f.loc["sixes", "points"] == 30 and f.loc["sixes", "bonus"] == 35   # 33 + 30 >= 63
    assert f.loc["yahtzee", "bonus"] == 0


def test_forced_joker_and_yahtzee_bonus(yahtzee_sol):
    # Yahtzee box holds 50, Sixes filled: a sixth Yahtzee must go in a lower box as a
    # joker (Full house 25, straights 30/40) and earns the 100 bonus.
    a = advise("yahtzee", "66666", rolls_left=0, filled="sixes,yahtzee", upper=18,
               five_box_full=True, solution=yahtzee_sol)
    f = a.to_frame().set_index("box")
    assert set(f.index) == {"three_of_a_kind", "four_of_a_kind", "full_house", "small_straight",
                            "large_straight", "chance"}
    assert (f["bonus"] == 100).all()
    assert f.loc["large_straight", "points"] == 40 and f.loc["full_house", "points"] == 25
    # Sixes open: the joker must go there
    b = advise("yahtzee", "66666", rolls_left=0, filled="yahtzee", five_box_full=False,
               solution=yahtzee_sol).to_frame()
    assert b["box"].tolist() == ["sixes"] and b["bonus"].item() == 0


def test_best_keep_is_the_optimal_strategys_keep(yahtzee_sol):
    """Independent code paths: the solver's turn plan (OptimalStrategy) vs the advisor's
    widget over Solution.value. The strategy's keep is (one of) the advisor's best."""
    rules = yahtzee_sol.rules
    strat = OptimalStrategy(yahtzee_sol).prepare(rules)
    rng = np.random.default_rng(3)
    d = rules.dice
    for _ in range(12):
        filled = rng.random(rules.n_boxes) < 0.4
        filled[rules.box_index("chance")] = False
        names = [rules.box_names[b] for b in np.flatnonzero(filled)]
        counts = rng.integers(0, 6, rules.n_boxes)          # dice in each filled upper box
        upper = int((counts * rules.upper_face * (filled & rules.is_upper)).sum())
        full = bool(filled[rules.five_box_index] and rng.random() < 0.5)
        roll = int(rng.integers(0, d.n_rolls))
        state = GameState.from_arrays(rules, filled[None], [upper], [full])
        k2 = int(strat.keep(state, np.array([roll]), 2, np.zeros(1))[0])
        strat.keep(state, np.array([roll]), 1, np.zeros(1))            # end the turn's plan
        kw = dict(five_box_full=full if filled[rules.five_box_index] else None)
        f = advise(rules, d.roll_dice[roll].tolist(), rolls_left=2, filled=names, upper=upper,
                   solution=yahtzee_sol, **kw).to_frame()
        held = " ".join([str(v) for v in np.repeat(np.arange(1, 7), d.keep_counts[k2])]
                        + ["_"] * (5 - int(d.keep_size[k2])))
        assert f.loc[f["keep"] == held, "loss"].item() < 1e-3


def test_keep_table_lists_every_distinct_keep(yahtzee_sol):
    d = get_rules("yahtzee").dice
    a = advise("yahtzee", [6, 5, 3, 3, 1], rolls_left=1, solution=yahtzee_sol)
    f = a.to_frame()
    assert a.dice == (1, 3, 3, 5, 6) and a.kind == "keep"
    assert len(f) == d.n_subkeeps[d.roll_index_of([1, 3, 3, 5, 6])] == 24
    assert f["keep"].is_unique and (f["loss"] >= 0).all() and f["loss"].iloc[0] == 0
    assert set(f.loc[f["held"] == 0, "reroll"]) == {"1 3 3 5 6"}
    assert set(f.loc[f["held"] == 5, "reroll"]) == {"-"}
    assert f.loc[f["keep"] == "3 3 _ _ _", "reroll"].item() == "1 5 6"


def test_dice_and_filled_forms(yacht_sol):
    base = advise("yacht", [1, 3, 3, 5, 6], rolls_left=1, filled=["ones", "twos"], upper=3,
                  solution=yacht_sol).to_frame()
    for dice in ("13356", "1 3 3 5 6", "6,5,3,3,1", (6, 5, 3, 3, 1), np.array([1, 3, 3, 5, 6])):
        for filled in ("ones,twos", " Twos , ONES ", ["twos", "ones"]):
            f = advise("yacht", dice, rolls_left=1, filled=filled, upper=3, solution=yacht_sol).to_frame()
            assert f.equals(base)


def test_assumed_upper_total_and_notes(yacht_sol):
    a = advise("yacht", "13356", rolls_left=2, filled="twos,sixes", solution=yacht_sol)
    assert a.upper == 3 * (2 + 6) and not a.upper_given
    assert any("assumed 24" in n for n in a.notes)
    b = advise("yacht", "13356", rolls_left=2, filled="choice", solution=yacht_sol)
    assert b.upper == 0 and b.upper_given and b.notes == ()
    c = advise("yacht", "13356", rolls_left=2, filled="fours,fives,sixes", upper=75, solution=yacht_sol)
    assert any("already earned" in n for n in c.notes)
    nb = advise("yacht", "13356", rolls_left=2, filled="sixes", options=["no-bonus"])
    assert nb.notes == ()                      # no bonus: the total does not matter


def test_fill_in_order_offers_only_the_next_box():
    a = advise("yacht", "66666", rolls_left=0, filled="ones,twos", options=["fill-in-order"])
    assert a.to_frame()["box"].tolist() == ["threes"]


def test_output_forms(yacht_sol):
    a = advise("yacht", "13356", rolls_left=2, filled="ones", upper=2, solution=yacht_sol)
    assert isinstance(a, Advice)
    d = a.to_dict()
    json.dumps(d)
    assert d["dice"] == [1, 3, 3, 5, 6] and d["rolls_left"] == 2 and d["filled"] == ["ones"]
    assert len(d["choices"]) == len(a.to_frame()) and d["explanation"] == EXPLANATION
    text = a.to_text().splitlines()
    assert "2 rolls left" in text[0] and "upper total 2" in text[1] and text[2] == EXPLANATION
    assert text[3].split() == ["keep", "reroll", "held", "expected", "loss"]
    f = a.to_frame()
    f.loc[0, "expected"] = -1.0                                # a copy: the advice is unchanged
    assert a.best["expected"] > 0


# -- every bad input ---------------------------------------------------------------------

def no_five_rules() -> RuleSet:
    boxes = tuple(Box(f"n{f}", f"N{f}", sc.upper(f), upper_face=f) for f in range(1, 7)) + (
        Box("chance", "Chance", sc.chance),)
    return RuleSet(name="no-five", title="No five box", boxes=boxes)


BAD = [
    # (kwargs for advise, message fragment); rules default to yahtzee
    (dict(dice="1335"), "dice must be 5 values in 1..6"),
    (dict(dice="133567"), "dice must be 5 values in 1..6"),
    (dict(dice="13350"), "dice must be 5 values in 1..6"),
    (dict(dice="13357"), "dice must be 5 values in 1..6"),
    (dict(dice="1335x"), "dice must be 5 values in 1..6"),
    (dict(dice=[1, 3, 3, 5, True]), "dice must be 5 values in 1..6"),
    (dict(dice=[1, 3, 3, 5, 2.5]), "dice must be 5 values in 1..6"),
    (dict(dice=5), "dice must be 5 values in 1..6"),
    (dict(rolls_left=3), "rolls left must be 0, 1 or 2"),
    (dict(rolls_left=-1), "rolls left must be 0, 1 or 2"),
    (dict(rolls_left=True), "rolls left must be 0, 1 or 2"),
    (dict(rolls_left=1.0), "rolls left must be 0, 1 or 2"),
    (dict(filled="ones,sixs"), "unknown box 'sixs' for yahtzee; valid boxes: ones, twos"),
    (dict(filled="ones,ones"), "box 'ones' is listed twice"),
    (dict(filled=["ones", 3]), "filled boxes are given by name, got 3; valid boxes: ones"),
    (dict(filled=",".join(get_rules("yahtzee").box_names)), "every box is filled: the game is over"),
    (dict(filled="ones", upper=7), "upper total 7 is impossible: the filled upper boxes (ones) hold at most 5"),
    (dict(filled="chance", upper=3), "upper total 3 is impossible: no upper box is filled, so it is 0"),
    (dict(upper=1), "no upper box is filled"),
    (dict(filled="fives", upper=4), "upper total 4 is impossible: each filled upper box (fives) holds "
                                    "0..5 times its face; nearest possible totals 0 and 5"),
    (dict(filled="fives,sixes", upper=19), "nearest possible totals 18 and 20"),
    (dict(filled="ones", upper=-1), "upper total must be a non-negative integer, got -1"),
    (dict(filled="ones", upper=2.5), "upper total must be a non-negative integer"),
    (dict(filled="ones", upper=True), "upper total must be a non-negative integer"),
    (dict(five_box_full=True), "the yahtzee box is not filled"),
    (dict(filled="yahtzee"), "the yahtzee box is filled: say whether it holds points, 50 (five_box_full=True"),
    (dict(filled="yahtzee", five_box_full=50), "five_box_full must be True (the yahtzee box holds points, 50) "
                                              "or False (it holds 0), got 50"),
    (dict(filled="yahtzee", five_box_full="yes"), "five_box_full must be True"),
    (dict(rules="yacht", options=["fill-in-order"], filled="ones,threes"),
     "fills boxes top to bottom, so 2 filled boxes must be ones, twos; got ones, threes"),
    (dict(rules="yacht", options=["bogus"]), "unknown option 'bogus' for yacht"),
    (dict(rules="nope"), "unknown rule set 'nope'"),
    (dict(rules=no_five_rules(), five_box_full=False), "has no five-of-a-kind box"),
    (dict(rules="yacht", solution="yahtzee"), "the solution is for yahtzee, not for yacht"),
]


@pytest.mark.parametrize("kwargs, message", BAD, ids=[m[:40] for _, m in BAD])
def test_bad_positions(kwargs, message, yahtzee_sol):
    kw = dict(rules="yahtzee", dice="13356", rolls_left=2)
    kw.update(kwargs)
    if kw.get("solution") == "yahtzee":
        kw["solution"] = yahtzee_sol
    rules = kw.pop("rules")
    dice = kw.pop("dice")
    with pytest.raises(ValueError) as info:
        advise(rules, dice, **kw)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_yacht_five_box_value_is_optional(yacht_sol):
    # Yacht pays no bonus for further Yachts: the box's value does not matter
    a = advise("yacht", "13356", rolls_left=2, filled="yacht", solution=yacht_sol)
    assert a.five_box_full is None
    b = advise("yacht", "13356", rolls_left=2, filled="yacht", five_box_full=True, solution=yacht_sol)
    assert b.five_box_full is True and b.to_frame().equals(a.to_frame())


# -- CLI ---------------------------------------------------------------------------------

ADVISE = ["advise", "--dice", "13356", "--rolls-left", "2"]


def test_cli_table_and_json(capsys, yahtzee_sol):
    assert main(ADVISE + ["--filled", "ones,twos", "--upper", "5"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[2] == EXPLANATION and "3 3 _ _ _" in out
    assert main(ADVISE + ["--filled", "ones,twos", "--upper", "5", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    f = advise("yahtzee", "13356", rolls_left=2, filled="ones,twos", upper=5).to_frame()
    assert [c["keep"] for c in data["choices"]] == f["keep"].tolist()
    assert data["choices"][0]["expected"] == pytest.approx(f["expected"].iloc[0])
    assert main(["advise", "--dice", "66666", "--rolls-left", "0", "--filled", "sixes,yahtzee",
                 "--upper", "18", "--five-box-full", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "box" and data["five_box_full"] is True and data["yahtzee_box"] == 50
    assert all(c["bonus"] == 100 for c in data["choices"])
    assert main(["advise", "--rules", "yacht", "--option", "fill-in-order", "--dice", "11111",
                 "--rolls-left", "0"]) == 0
    assert "ones" in capsys.readouterr().out


CLI_BAD = [
    (["--dice", "1335", "--rolls-left", "2"], "dice must be 5 values in 1..6"),
    (["--dice", "13357", "--rolls-left", "2"], "dice must be 5 values in 1..6"),
    (["--dice", "13356", "--rolls-left", "3"], "rolls left must be 0, 1 or 2"),
    (["--dice", "13356", "--rolls-left", "x"], "--rolls-left must be an integer"),
    (["--dice", "13356"], "required: --rolls-left"),
    (["--rolls-left", "2"], "required: --dice"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "ones,sixs"], "unknown box 'sixs'"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "ones,ones"], "listed twice"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "ones", "--upper", "7"],
     "upper total 7 is impossible: the filled upper boxes (ones) hold at most 5"),
    (["--dice", "13356", "--rolls-left", "2", "--upper", "5"], "no upper box is filled"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "fives", "--upper", "4"],
     "nearest possible totals 0 and 5"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "ones", "--upper", "-2"],
     "upper total must be a non-negative integer"),
    (["--dice", "13356", "--rolls-left", "2", "--upper", "abc"], "--upper must be an integer"),
    (["--dice", "13356", "--rolls-left", "2", "--five-box-full"], "the yahtzee box is not filled"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "yahtzee"],
     "say whether it holds points, 50 (five_box_full=True, --five-box-full) or 0 (five_box_full=False, "
     "--no-five-box-full)"),
    (["--dice", "13356", "--rolls-left", "2", "--filled", "yahtzee", "--yahtzee-box", "x"],
     "--yahtzee-box must be an integer"),
    (["--dice", "13356", "--rolls-left", "0", "--filled", ",".join(get_rules("yahtzee").box_names)],
     "the game is over"),
    (["--rules", "yacht", "--option", "fill-in-order", "--dice", "13356", "--rolls-left", "0",
      "--filled", "twos"], "fills boxes top to bottom"),
    (["--rules", "nope", "--dice", "13356", "--rolls-left", "0"], "unknown rule set 'nope'"),
]


@pytest.mark.parametrize("args, message", CLI_BAD, ids=[m[:40] for _, m in CLI_BAD])
def test_cli_bad_positions(capsys, args, message):
    assert main(["advise"] + args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.count("\n") == 1 and err.startswith("yahtzee-sim: error: ") and message in err


def test_cli_as_a_real_process(tmp_path):
    env = dict(os.environ, **{cache_mod.CACHE_ENV: str(tmp_path)})
    bad = subprocess.run([sys.executable, "-m", "yahtzee_sim", "advise", "--dice", "13356",
                          "--rolls-left", "2", "--filled", "ones", "--upper", "7"],
                         capture_output=True, text=True, env=env)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.strip().splitlines() == [
        "yahtzee-sim: error: upper total 7 is impossible: the filled upper boxes (ones) hold at most 5"]
    ok = subprocess.run([sys.executable, "-m", "yahtzee_sim", "advise", "--rules", "yacht",
                         "--option", "fill-in-order", "--dice", "13356", "--rolls-left", "1",
                         "--json"], capture_output=True, text=True, env=env)
    assert ok.returncode == 0 and json.loads(ok.stdout)["kind"] == "keep"


# -- advise_batch -----------------------------------------------------------------------

def _random_positions(rules, n, seed):
    from yahtzee_sim.exact.policy import achievable_upper_totals
    from yahtzee_sim.exact.policy import reachable_states

    rng = np.random.default_rng(seed)
    rows = []
    for level in range(rules.n_boxes):
        mask, u, flag = reachable_states(rules, level)
        pick = rng.integers(0, len(mask), max(1, n // rules.n_boxes))
        rows += [(int(mask[i]), int(u[i]), int(flag[i])) for i in pick]
    mask, u, flag = (np.array(x) for x in zip(*rows))
    filled = ((mask[:, None] >> np.arange(rules.n_boxes)) & 1).astype(bool)
    cap = rules.upper_bonus_threshold if rules.upper_bonus else 0
    for i in np.flatnonzero(u == cap):               # a capped total: an actual one behind it
        totals = achievable_upper_totals(rules, filled[i])
        u[i] = totals[np.minimum(totals, cap) == cap][0] if cap else 0
    rolls = rng.integers(0, rules.dice.n_rolls, len(mask))
    left = rng.integers(0, rules.n_rolls, len(mask))
    return filled, u, flag.astype(bool), rolls, left


@pytest.mark.parametrize("name", ["yahtzee", "yacht"])
def test_advise_batch_equals_advise(name):
    from yahtzee_sim.exact.advisor import advise_batch

    rules = get_rules(name)
    filled, u, full, rolls, left = _random_positions(rules, 120, seed=3)
    b = advise_batch(rules, rolls, rolls_left=left, filled=filled, upper=u, five_box_full=full)
    d = rules.dice
    for i in range(len(rolls)):
        names = [rules.box_names[k] for k in np.flatnonzero(filled[i])]
        five = bool(full[i]) if filled[i, rules.five_box_index] else None
        one = advise(rules, d.roll_dice[rolls[i]].tolist(), rolls_left=int(left[i]), filled=names,
                     upper=int(u[i]), five_box_full=five)
        frame = one.to_frame()
        assert b.expected[i] == pytest.approx(one.best["expected"], abs=1e-9)
        ok = b.choices[i] >= 0
        if left[i] == 0:
            legal = np.isfinite(b.values[i])
            got = b.values[i][[rules.box_index(x) for x in frame["box"]]]
            assert np.allclose(got, frame["expected"], atol=1e-9) and legal.sum() == len(frame)
            assert b.choices[i, :rules.n_boxes].tolist() == list(range(rules.n_boxes))
        else:
            want = dict(zip(frame["keep"], frame["expected"]))
            got = {" ".join([str(v) for v in np.repeat(np.arange(1, 7), d.keep_counts[k])]
                            + ["_"] * (5 - d.keep_size[k])): v
                   for k, v in zip(b.choices[i][ok], b.values[i][ok])}
            assert got.keys() == want.keys()
            assert np.allclose([got[k] for k in want], list(want.values()), atol=1e-9)
            assert d.keep_size[b.best[i]] == frame["held"].iloc[0] or frame["loss"].iloc[1] < 1e-9


def test_advise_batch_refuses_bad_positions():
    from yahtzee_sim.exact.advisor import advise_batch

    rules = get_rules("yahtzee")
    f = np.zeros((1, 13), bool)
    with pytest.raises(ValueError, match="roll indices"):
        advise_batch(rules, [252], rolls_left=0, filled=f)
    with pytest.raises(ValueError, match="rolls left"):
        advise_batch(rules, [0], rolls_left=3, filled=f)
    with pytest.raises(ValueError, match="filled must be"):
        advise_batch(rules, [0], rolls_left=0, filled=np.zeros((1, 12), bool))
    with pytest.raises(ValueError, match="can reach"):
        g = f.copy()
        g[0, 0] = True
        advise_batch(rules, [0], rolls_left=0, filled=g, upper=[7])          # ones hold 0..5
    with pytest.raises(ValueError, match="game is over"):
        advise_batch(rules, [0], rolls_left=0, filled=np.ones((1, 13), bool))
    dice = advise_batch(rules, [[6, 6, 6, 6, 2]], rolls_left=2, filled=f)
    assert rules.dice.keep_counts[dice.best[0]].tolist() == [0, 0, 0, 0, 0, 4]
