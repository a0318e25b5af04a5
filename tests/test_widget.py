"""The keep/roll widget (yahtzee_sim.exact.widget) against plain-Python turns.

Two references, neither of which uses the widget's lattice or its arrays:

* tests/plain_game.py's ``best_turn`` (every sub-multiset kept, chances counted from
  every ordered outcome): the value of a turn, to rounding;
* a recursion on sorted dice tuples written here with the widget's own arithmetic
  (a keep's mean is its children's sum, faces in rising order, times ``1 / F``; a
  roll's best keep is the roll held unless a sub-keep one die smaller, faces in
  rising order, is strictly better): the same floats and the same keep on every
  tie, bit for bit. Integer final values make ties common.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from plain_game import Dice, best_turn

from yahtzee_sim.dice import dice_tables
from yahtzee_sim.exact import widget


def _plain_plan(n_dice: int, n_faces: int, final: dict, rolls_left: int) -> list:
    """Per rerolls left j = 1..rolls_left, {roll: (value, best keep)} for one position
    whose final roll r is worth ``final[r]`` (sorted tuples, faces 1..F)."""
    inv = 1.0 / n_faces
    out, worth = [], dict(final)
    for _ in range(rolls_left):
        @functools.cache
        def mean(keep, worth=worth):               # a keep's value: one more die of each face
            if len(keep) == n_dice:
                return worth[keep]
            acc = None
            for f in range(1, n_faces + 1):
                v = mean(tuple(sorted(keep + (f,))))
                acc = v if acc is None else acc + v
            return acc * inv

        @functools.cache
        def best(keep):                          # (value, keep) of the best sub-keep
            choice = (mean(keep), keep)
            for f in sorted(set(keep)):          # faces present, rising: one die of f less
                smaller = list(keep)
                smaller.remove(f)
                cand = best(tuple(smaller))
                if cand[0] > choice[0]:
                    choice = cand
            return choice

        stage = {r: best(r) for r in worth}
        out.append(stage)
        worth = {r: v for r, (v, _) in stage.items()}
    return out


def _tuple_of(counts) -> tuple:
    return tuple(int(f) + 1 for f, c in enumerate(counts) for _ in range(int(c)))


@pytest.mark.parametrize("n_dice, n_faces, n_pos", [(2, 3, 5), (3, 4, widget.COMPILED_COLUMNS + 3), (5, 6, 3)])
def test_best_keeps_are_the_plain_recursion_bit_for_bit(n_dice, n_faces, n_pos):
    """Values and keeps of every roll and rerolls left equal the recursion's exactly
    (ties included), on the numpy path and (256 positions or more) the compiled one."""
    d = dice_tables(n_dice, n_faces)
    rng = np.random.default_rng(n_dice * 10 + n_faces)
    finals = rng.integers(0, 3, (n_pos, d.n_rolls)).astype(np.float64)
    plan = widget.best_keeps(d, finals, rolls_left=2)
    rolls = [_tuple_of(c) for c in d.roll_counts]
    keeps = [_tuple_of(c) for c in d.keep_counts]
    for p in sorted({0, 1, n_pos - 1}):
        ref = _plain_plan(n_dice, n_faces, dict(zip(rolls, finals[p].tolist())), 2)
        for j in (1, 2):
            got_v = plan.values[j][p].tolist()
            got_k = [keeps[k] for k in plan.keeps[j][p]]
            assert got_v == [ref[j - 1][r][0] for r in rolls]
            assert got_k == [ref[j - 1][r][1] for r in rolls]


@pytest.mark.parametrize("n_dice, n_faces", [(2, 3), (3, 4), (5, 6)])
def test_best_keeps_value_is_the_plain_game_turn(n_dice, n_faces):
    """The turn's value from the widget's plan is plain_game's best turn (to rounding)."""
    d = dice_tables(n_dice, n_faces)
    rng = np.random.default_rng(7)
    worth = rng.random(d.n_rolls)
    rolls = [_tuple_of(c) for c in d.roll_counts]
    by_roll = dict(zip(rolls, worth.tolist()))
    plan = widget.best_keeps(d, worth[None, :], rolls_left=2)
    ref = best_turn(Dice(n_dice, n_faces), 3, lambda r, t: (by_roll[r],), count_throws=False)[0]
    assert float(plan.values[2][0] @ d.first_roll_prob) == pytest.approx(ref, rel=1e-13)


def test_keep_rows_come_in_the_dice_tables_order_and_the_lattice_order():
    """keep_expectations and best_subkeep speak the dice tables' keep indices;
    best_subkeep_lattice takes the solver lattice's rows and gives the same choices."""
    from yahtzee_sim.exact._solver_lattice import lattice

    d = dice_tables(3, 4)
    lat = lattice(d)
    rng = np.random.default_rng(3)
    v = rng.integers(0, 3, (d.n_rolls, 4)).astype(np.float64)
    e = widget.keep_expectations(d, v)
    keeps = [_tuple_of(c) for c in d.keep_counts]
    rolls = [_tuple_of(c) for c in d.roll_counts]
    ref = _plain_plan(3, 4, dict(zip(rolls, v[:, 1].tolist())), 1)[0]
    empty = keeps.index(())
    assert e[empty, 1] == pytest.approx(v[:, 1] @ d.first_roll_prob, rel=1e-14)
    b, a = widget.best_subkeep(d, e)
    assert [keeps[k] for k in a[:, 1]] == [ref[r][1] for r in rolls]
    b2, a2 = widget.best_subkeep_lattice(d, e[lat.keep_at])
    assert np.array_equal(b, b2) and np.array_equal(a, a2)
