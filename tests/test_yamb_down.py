"""Yamb's Down column played alone, solved exactly (:mod:`yahtzee_sim.exact.yamb_down`):
against a plain recursion over the dice on a reduced Yamb (three dice of three faces,
Kenta a three-dice straight paid by its throw, a bonus the upper rows can reach), and
its last four rows against the main solver on the same boxes filled in order."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

from plain_game import Dice, best_turn
from yahtzee_sim import get_rules
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.exact.yamb_down import solve_yamb_down
from yahtzee_sim.rules import catalog, scoring
from yahtzee_sim.rules.base import RuleSet


def brute_force_down(rules, bonus_at: int, bonus: int) -> float:
    """The column's optimal mean by plain recursion: the real upper total, Ones and Max
    carried, every sub-multiset kept, every outcome thrown, holding every die a
    decision that makes no throw (the engine's rule), the rule set's score tables.

    The turn is tests/plain_game.py's; the card is this column's own (rows filled in
    order, Min paid as (Max - Min) x Ones), which the shared game recursion over
    (filled boxes, upper total, five box) does not model."""
    rows = catalog.YAMB_ROWS
    down = [rules.box_index(f"down_{r}") for r in rows]
    d = rules.dice
    dice = Dice(rules.n_dice, rules.n_faces)

    @functools.lru_cache(maxsize=None)
    def rest(i, upper, ones, top):
        """Expected score of rows i.. given the upper total, Ones and Max so far."""
        if i == len(rows):
            return 0.0

        def pay(dice, throw):
            s = int(rules.score_tables[throw - 1, d.roll_index_of(list(dice)), down[i]])
            if i < 6:
                reached = bonus if upper < bonus_at <= upper + s else 0
                return (s + reached + rest(i + 1, upper + s, s if i == 0 else ones, top),)
            if rows[i] == "max":
                return (rest(i + 1, upper, ones, s),)
            if rows[i] == "min":
                return ((top - s) * ones + rest(i + 1, upper, ones, top),)
            return (s + rest(i + 1, upper, ones, top),)

        return best_turn(dice, rules.n_rolls, pay)[0]

    return rest(0, 0, 0, 0)


def _reduced_yamb():
    """Yamb with three dice of three faces: Fours to Sixes count the faces 1 to 3 again,
    and Kenta is a straight of the three (1-2-3) paid 66 / 56 / 46 by the throw that
    made it, so the throw rule is exercised."""
    yamb = get_rules("yamb")
    kenta = scoring.by_throw(scoring.straight(3, 1), (66, 56, 46))

    def reduced(b):
        if b.name.endswith("_kenta"):
            return dataclasses.replace(b, score=kenta)
        if b.upper_face is not None and b.upper_face > 3:
            return dataclasses.replace(b, score=scoring.upper(b.upper_face - 3))
        return b

    return dataclasses.replace(yamb, boxes=tuple(reduced(b) for b in yamb.boxes), n_dice=3, n_faces=3)


@pytest.mark.parametrize("bonus_at", [20, 60])
def test_reduced_column_matches_brute_force(bonus_at):
    rules = _reduced_yamb()
    exact = brute_force_down(rules, bonus_at, 30)
    sol = solve_yamb_down(rules, bonus_at=bonus_at)
    assert abs(sol.mean - exact) < 1e-9, (sol.mean, exact)
    # the comparison can fail: Kenta is paid by its throw, and the bonus moves the value
    assert len(set(rules.score_tables[:, :, rules.box_index("down_kenta")].max(axis=1).tolist())) == 3
    if bonus_at == 20:
        assert sol.mean > solve_yamb_down(rules, bonus_at=60).mean + 1


def test_last_rows_equal_the_solver_on_the_same_boxes_in_order():
    yamb = get_rules("yamb")
    last = ("triling", "full", "poker", "yamb")
    boxes = tuple(b for b in yamb.boxes if b.name in {f"down_{r}" for r in last})
    rules = RuleSet(name="yamb-down-last", title="Yamb's last four Down rows", boxes=boxes, upper_bonus=0,
                    five_box=None, joker="none", fill_order="in-order")
    sol = solve_yamb_down()
    assert abs(sol.values[catalog.YAMB_ROWS.index("triling")][0] - solve(rules, dtype=np.float64, cache=False)
               .mean) < 1e-9


def test_cli_down_column(capsys):
    import json

    from yahtzee_sim.cli import main

    assert main(["solve", "--rules", "yamb", "--down-column", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["column"] == "down" and out["expected_score"] == pytest.approx(solve_yamb_down().mean)
    assert main(["solve", "--rules", "yacht", "--down-column"]) == 2
    assert "the Down-column solver is for yamb" in capsys.readouterr().err
    assert main(["solve", "--rules", "yamb"]) == 2          # the whole game: refused, pointing here
    assert "yahtzee-sim solve --rules yamb --down-column" in capsys.readouterr().err
