"""The loss walk on the keep lattice (issue 20): its keep means, best sub-keeps and pushed
masses against plain-Python averages over the dice, on three dice.

Plain Python here: a keep is its held dice; its mean is the average of the roll values over
every ordered outcome of the dice thrown again, each outcome's roll looked up by its dice;
a roll's sub-keeps are the sub-multisets of its dice. Nothing from the lattice or the dice
tables' chance matrices.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from yahtzee_sim.dice import dice_tables
from yahtzee_sim.exact.losses import _Lattice


def _held(d, k) -> list[int]:
    return [face for face, c in enumerate(d.keep_counts[k], start=1) for _ in range(int(c))]


def _outcomes(d, held) -> list[int]:
    """The roll index of every ordered outcome of throwing the dice not held."""
    m = d.n_dice - len(held)
    return [d.roll_index_of(sorted(held + list(o))) for o in itertools.product(range(1, d.n_faces + 1), repeat=m)]


def _plain_keep_means(d, v) -> np.ndarray:
    """(K,) the mean of the roll values ``v`` (R,) after holding each keep."""
    return np.array([sum(v[r] for r in rs) / len(rs) for rs in (_outcomes(d, _held(d, k)) for k in range(d.n_keeps))])


def _plain_best_subkeep(d, w) -> np.ndarray:
    """(R,) the best value ``w`` (K,) of a keep held from each roll."""
    keep_of = {tuple(_held(d, k)): k for k in range(d.n_keeps)}
    out = np.empty(d.n_rolls)
    for r in range(d.n_rolls):
        dice = sorted(int(x) for x in d.roll_dice[r])
        subs = {tuple(sorted(c)) for s in range(d.n_dice + 1) for c in itertools.combinations(dice, s)}
        out[r] = max(w[keep_of[s]] for s in subs)
    return out


def _plain_push(d, plan, mass) -> np.ndarray:
    """(R,) the chance of each roll after the next throw, from ``mass`` (R,) on the rolls,
    each roll r holding keep ``plan[r]``."""
    out = np.zeros(d.n_rolls)
    for r in range(d.n_rolls):
        rs = _outcomes(d, _held(d, int(plan[r])))
        for x in rs:
            out[x] += mass[r] / len(rs)
    return out


def _random_plan(d, rng) -> np.ndarray:
    """(R,) a random keep of each roll among its sub-keeps."""
    subs = np.asarray(d.subkeeps)
    return np.array([rng.choice(s[s >= 0]) for s in subs], dtype=np.int64)


@pytest.mark.parametrize("n_faces", [4, 6])
def test_compiled_walk_keep_means_best_subkeeps_and_masses(n_faces):
    from yahtzee_sim.exact._loss_kernels import turn_losses
    from yahtzee_sim.exact._solver_lattice import expect

    d = dice_tables(3, n_faces)
    rng = np.random.default_rng(20)
    n_c, n_r, n_k, n_rolls = 3, d.n_rolls, d.n_keeps, 3
    v = rng.normal(10.0, 5.0, size=(n_c, n_r))        # each state's final-roll values
    # one box, legal on every roll, its points the value: the final rolls' values are v
    g_gain = v[:, :, None].copy()
    g_legal = np.ones((n_c, n_r, 1), dtype=bool)
    g_move = np.zeros((n_c, n_r, 1), dtype=np.int64)
    keeps = np.stack([np.stack([_random_plan(d, rng) for _ in range(n_c)]) for _ in range(n_rolls - 1)])
    p_first = np.array(d.first_roll_prob, dtype=np.float64)
    loss, mass = np.empty((n_rolls, n_c, n_r)), np.empty((n_rolls, n_c, n_r))
    w_out = np.empty((n_rolls - 1, n_c, n_k))
    acc, pts, into, top = np.empty((n_c, n_r)), np.empty((n_c, n_r)), np.empty((n_c, 1)), np.zeros(n_rolls)
    lat = _Lattice(d)
    assert turn_losses(np.arange(n_c, dtype=np.int64), g_gain, g_legal, g_move, np.zeros((n_c, 1)),
                       np.ones(n_c), np.zeros((n_c, n_r), dtype=np.int64), keeps, *lat.kernel_args,
                       p_first, 1e-9, loss, mass, w_out, acc, pts, into, top)
    for c in range(n_c):
        z = v[c]
        m = np.array(p_first)
        for j in range(1, n_rolls):               # j rolls left after the keep
            w = _plain_keep_means(d, z)
            np.testing.assert_allclose(w_out[j - 1, c], w, rtol=0, atol=1e-12)
            best = _plain_best_subkeep(d, w)
            plan = keeps[j - 1, c]
            np.testing.assert_allclose(loss[j, c], best - w[plan], rtol=0, atol=1e-12)
            z = best
        for j in range(n_rolls - 1, 0, -1):       # the masses, first throw first
            np.testing.assert_allclose(mass[j, c], m, rtol=0, atol=1e-15)
            m = _plain_push(d, keeps[j - 1, c], m)
        np.testing.assert_allclose(mass[0, c], m, rtol=0, atol=1e-15)
        assert abs(m.sum() - 1) < 1e-12
    # the same floats as the solver's keep means (children summed in ascending row, one division)
    x = np.empty((n_k, n_c))
    x[lat.roll_pos] = v.T
    expect(lat.lat, x)
    assert np.array_equal(w_out[0], x[lat.lat.pos_of_keep].T)


def test_numpy_walk_keep_means_best_subkeeps_and_masses():
    # random's averages and the simulated meter take the lattice walk through NumPy
    d = dice_tables(3, 6)
    rng = np.random.default_rng(7)
    lat = _Lattice(d)
    z = rng.normal(size=(2, d.n_rolls))
    w = lat.keep_values(z)
    best = lat.best_subkeep(w)
    for c in range(2):
        np.testing.assert_allclose(w[c], _plain_keep_means(d, z[c]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(best[c], _plain_best_subkeep(d, w[c]), rtol=0, atol=0)
    # mass on the keeps (C, K) -> on the rolls after the throw
    plan = _random_plan(d, rng)
    m = rng.random(d.n_rolls)
    held = np.zeros((1, d.n_keeps))
    np.add.at(held[0], plan, m)
    np.testing.assert_allclose(lat.roll_mass(held)[0], _plain_push(d, plan, m), rtol=0, atol=1e-15)
