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


def test_numpy_walk_keep_means_and_best_subkeeps():
    # the simulated meter takes the lattice walk through NumPy
    d = dice_tables(3, 6)
    rng = np.random.default_rng(7)
    lat = _Lattice(d)
    z = rng.normal(size=(2, d.n_rolls))
    w = lat.keep_values(z)
    best = lat.best_subkeep(w)
    for c in range(2):
        np.testing.assert_allclose(w[c], _plain_keep_means(d, z[c]), rtol=0, atol=1e-12)
        np.testing.assert_allclose(best[c], _plain_best_subkeep(d, w[c]), rtol=0, atol=0)


def _plain_subkeeps(d, r) -> list[int]:
    """The keep indices of roll r's sub-multisets (its distinct keeps)."""
    keep_of = {tuple(_held(d, k)): k for k in range(d.n_keeps)}
    dice = sorted(int(x) for x in d.roll_dice[r])
    return sorted({keep_of[tuple(sorted(c))] for s in range(d.n_dice + 1) for c in itertools.combinations(dice, s)})


@pytest.mark.parametrize("n_faces", [4, 6])
def test_uniform_walk_averages_over_every_choice(n_faces):
    # random's compiled walk: each box and keep decision's loss is the best choice's value
    # minus the mean over every legal choice, its optimal share the share of choices as good
    from yahtzee_sim.exact._loss_kernels import uniform_turn_losses
    from yahtzee_sim.exact.policy import uniform_keep_average

    d = dice_tables(3, n_faces)
    rng = np.random.default_rng(21)
    n_c, n_r, n_k, n_rolls, n_b, tol = 3, d.n_rolls, d.n_keeps, 3, 4, 1e-9
    g_gain = np.round(rng.normal(10.0, 5.0, size=(n_c, n_r, n_b)))      # ties among the boxes too
    g_legal = rng.random((n_c, n_r, n_b)) < 0.6
    g_legal[:, :, 0] = True
    g_move = np.broadcast_to(np.arange(n_b), (n_c, n_r, n_b)).copy()    # each box its own next state
    a_m = np.zeros((n_c, n_b))                                           # worth nothing after it
    p_state = rng.random(n_c)
    p_first = np.array(d.first_roll_prob, dtype=np.float64)
    lat = _Lattice(d, uniform_keep_average(d))
    loss, mass, opt = (np.empty((n_rolls, n_c, n_r)) for _ in range(3))
    w_out, acc, into = np.empty((n_rolls - 1, n_c, n_k)), np.empty((n_c, n_r)), np.empty((n_c, n_b))
    flow, flow_pts, by_box, top = np.empty(n_c * n_r * n_b), np.empty(n_c * n_r * n_b), np.empty(n_b), np.empty(n_rolls)
    n_flow = uniform_turn_losses(np.arange(n_c, dtype=np.int64), g_gain, g_legal, g_move, a_m, p_state,
                                 *lat.kernel_args, *lat.uniform_args, p_first, tol, loss, mass, opt, w_out,
                                 acc, into, flow, flow_pts, by_box, top)
    assert n_flow == g_legal.sum()
    np.testing.assert_array_equal(flow_pts[:n_flow], g_gain[g_legal])
    subs = [_plain_subkeeps(d, r) for r in range(n_r)]
    # the chance of each roll with j rolls left: the first throw's, then each roll's
    # uniform keep pushed through the next throw
    after = {k: _outcomes(d, _held(d, k)) for k in range(n_k)}
    masses = {n_rolls - 1: p_first}
    for j in range(n_rolls - 1, 0, -1):
        m = np.zeros(n_r)
        for r in range(n_r):
            for k in subs[r]:
                for x in after[k]:
                    m[x] += masses[j][r] / len(subs[r]) / len(after[k])
        masses[j - 1] = m
    turn_loss = np.zeros(n_c)
    for c in range(n_c):
        q = np.where(g_legal[c], g_gain[c], -np.inf)
        z = q.max(axis=1)
        n_legal = g_legal[c].sum(axis=1)
        np.testing.assert_allclose(loss[0, c], z - np.where(g_legal[c], q, 0).sum(axis=1) / n_legal, atol=1e-12)
        np.testing.assert_allclose(opt[0, c], (z[:, None] - q <= tol).sum(axis=1) / n_legal, atol=1e-15)
        for j in range(1, n_rolls):
            w = _plain_keep_means(d, z)
            np.testing.assert_allclose(w_out[j - 1, c], w, atol=1e-12)
            best = _plain_best_subkeep(d, w)
            np.testing.assert_allclose(loss[j, c], [best[r] - w[subs[r]].mean() for r in range(n_r)], atol=1e-12)
            np.testing.assert_allclose(opt[j, c], [np.mean(best[r] - w[subs[r]] <= tol) for r in range(n_r)],
                                       atol=1e-15)
            z = best
        for j in range(n_rolls):
            np.testing.assert_allclose(mass[j, c], masses[j], atol=1e-15)
            turn_loss[c] += mass[j, c] @ loss[j, c]
        # the final rolls' chances spread evenly over the legal boxes, into each box's move
        np.testing.assert_allclose(into[c], p_state[c] * (masses[0] @ (g_legal[c] / n_legal[:, None])), atol=1e-15)
        np.testing.assert_allclose(acc[c].sum(), turn_loss[c], atol=1e-12)
    # every turn's losses land in the boxes its final rolls go to
    np.testing.assert_allclose(by_box.sum(), p_state @ turn_loss, atol=1e-12)
    assert abs(flow[:n_flow].sum() - p_state.sum()) < 1e-12


def test_box_means_sum_as_numpy_sums_a_row():
    # random's box means keep the floats of the NumPy walk they replaced: NumPy's row sum
    # (summed one by one instead, many of these rows would differ in their last bits)
    from yahtzee_sim.exact._loss_kernels import _pairwise_sum

    rng = np.random.default_rng(5)
    for n in list(range(1, 41)) + [64, 127, 128]:
        x = rng.standard_normal((200, n)) * 10.0 ** rng.integers(-6, 6, (200, n))
        want = x.sum(axis=1)
        assert all(_pairwise_sum(x[i], n) == want[i] for i in range(len(x))), n
