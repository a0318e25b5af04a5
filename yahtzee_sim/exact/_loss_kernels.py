"""Private: the compiled loop of the exact loss accounting (one turn of every state of a
chunk, :func:`yahtzee_sim.exact.losses.loss_accounting`).

The NumPy walk built (state, roll, box) arrays of a whole chunk (half a million rows
times 13 boxes, about 50 MB each) and passed over them a dozen times: memory traffic,
not arithmetic, was the time. This loop does a tile of states at a time, its few hundred
kilobytes staying in cache; the sums over the chunk stay in NumPy.

It walks the exact engine's one keep-lattice layout
(:func:`~yahtzee_sim.exact._solver_lattice.lattice`: keeps by size, the full rolls last)
with the operations of its other walks: a keep's value from its children as the solver's
:func:`~yahtzee_sim.exact._solver_lattice.expect` computes it, the best sub-keep along
:func:`~yahtzee_sim.exact._solver_lattice.sweep_pairs`, the masses pushed down the
lattice as :func:`~yahtzee_sim.exact._eval_kernels.push_up` pushes them (its loop
written out here: numba's cache would not see a change to a compiled function of
another file, and would keep calling the old one). Keep indices of the dice tables
appear only at the boundary (the strategy's keeps in, the keep values out).

numba compiles it once per machine (``cache=True``: later processes load the compiled
code); this module imports numba at its top, so :mod:`~yahtzee_sim.exact.losses`
imports it inside the function that uses it and ``import yahtzee_sim`` stays quick.
"""

from __future__ import annotations

import numpy as np
from numba import njit


TILE = 32
"""States walked together: the lattice's sums and pushes run over a tile of states at once
(a vectorized inner loop) while the tile's tables stay in cache. On a captured chunk of
greedy on yahtzee (2,080 states) 32 took 26.5 ms, 16 as long, 64 and 128 29-30 ms: the
loops that go roll by roll or keep by keep down a column touch fewer cache lines."""


@njit(cache=True, nogil=True)
def turn_losses(g_inv, g_gain, g_legal, g_move, a_m, p_state, boxes, keeps, child_pos, pair_child,
                pair_parent, roll_pos, pos_of_keep, walk, children, p_first, tol,
                loss, mass, w_out, acc_out, pts_out, into, top_cost):
    """One turn of each of the C states of a chunk, following the strategy's decisions.

    Inputs: ``g_inv`` (C,) each state's row of the (filled boxes, flag) tables
    ``g_gain`` (points and bonus), ``g_legal``, ``g_move`` (G, R, B); ``a_m`` (C, M)
    upper bonus plus the optimal value after each move; ``p_state`` (C,) reach;
    the strategy's ``boxes`` (C, R) and ``keeps`` (J - 1, C, R) (row j - 1: j rolls
    left, keep indices of the dice tables); the keep lattice in the solver's layout
    (rows: :func:`~yahtzee_sim.exact._solver_lattice.lattice`'s positions, every keep
    below a full roll first, smaller keeps first): ``child_pos`` (K', F) each of the K'
    smaller keeps' children (one die more), ascending; ``pair_child``, ``pair_parent``
    the sub-keep sweep's pairs (:func:`~._solver_lattice.sweep_pairs`); ``roll_pos``
    (R,) each roll's row; ``pos_of_keep`` (K,) each keep index's row; ``walk`` and
    ``children`` (K, F) the forward push's order and children
    (:func:`~yahtzee_sim.exact.policy.forward_lattice`); ``p_first`` (R,) the first
    throw's chances; ``tol`` the loss of an optimal choice.

    Outputs (written): ``loss[j]`` (C, R) the loss of the decision with j rolls left
    (0: the box), ``mass[j]`` (C, R) the chance of each roll with j rolls left,
    ``w_out[j - 1]`` (C, K) optimal value of each keep with j rolls left (keep-index
    order), ``acc_out`` (C, R) the turn's losses met on the way to each final roll
    (times its chance), ``pts_out`` (C, R) the points of the box chosen, ``into`` (C, M)
    reach times chance flowing into each move, ``top_cost[j]`` the largest reach times
    chance times loss above ``tol`` (0 if none). Returns False if an optimal value of a
    legal choice is NaN.

    The floats of the lattice's other walks: a keep's value is its children's summed in
    ascending row, then one division by F (:func:`~._solver_lattice.expect`, the
    solver's); the best sub-keep an exact max; the masses go down the lattice keep by
    keep, each spreading its mass times a rounded 1/F over its children
    (:func:`~yahtzee_sim.exact._eval_kernels.push_up`; keeps no state of the tile holds
    add zeros only, so they are skipped)."""
    n_c = g_inv.shape[0]
    n_r = g_gain.shape[1]
    n_b = g_gain.shape[2]
    n_k = pos_of_keep.shape[0]
    n_j = loss.shape[0]
    n_below = child_pos.shape[0]
    n_f = child_pos.shape[1]
    faces = float(n_f)
    inv = 1.0 / n_f
    tile = TILE
    for j in range(n_j):
        top_cost[j] = 0.0
    w = np.empty((n_k, tile))
    m = np.empty((tile, n_r))              # state by state: the loops over the rolls read rows
    acc = np.empty((tile, n_r))
    hm = np.empty((n_k, tile))
    ha = np.empty((n_k, tile))
    ok = True
    used = np.zeros(n_k, dtype=np.bool_)
    for lo in range(0, n_c, tile):
        n = min(tile, n_c - lo)
        # the box: q = points + the move's value, illegal boxes -inf (the max never picks
        # them); the roll rows of w the value of each final roll
        for t in range(n):
            c = lo + t
            g = g_inv[c]
            am = a_m[c]
            for r in range(n_r):
                top = -np.inf
                for b in range(n_b):
                    if g_legal[g, r, b]:
                        v = g_gain[g, r, b] + am[g_move[g, r, b]]
                        if v != v:
                            ok = False
                        if v > top:
                            top = v
                w[roll_pos[r], t] = top
                b = boxes[c, r]
                qc = g_gain[g, r, b] + am[g_move[g, r, b]] if g_legal[g, r, b] else -np.inf
                loss[0, c, r] = top - qc
                pts_out[c, r] = g_gain[g, r, b]
        # each keep stage: every smaller keep's value from its children (the largest keeps
        # first), then each row's best sub-keep (parents one die fewer, final when met):
        # the roll rows then hold the rolls' values with j rolls left, the next stage's input
        for j in range(1, n_j):
            for k in range(n_below - 1, -1, -1):
                wk = w[k]
                first = w[child_pos[k, 0]]
                for t in range(n):
                    wk[t] = 0.0 + first[t]
                for f in range(1, n_f):
                    wc = w[child_pos[k, f]]
                    for t in range(n):
                        wk[t] += wc[t]
                for t in range(n):
                    wk[t] /= faces
            for t in range(n):
                for k in range(n_k):
                    w_out[j - 1, lo + t, k] = w[pos_of_keep[k], t]
            for i in range(pair_child.shape[0]):
                wk = w[pair_child[i]]
                wp = w[pair_parent[i]]
                for t in range(n):
                    if wp[t] > wk[t]:
                        wk[t] = wp[t]
            for t in range(n):
                c = lo + t
                for r in range(n_r):
                    loss[j, c, r] = w[roll_pos[r], t] - w_out[j - 1, c, keeps[j - 1, c, r]]
        # forwards: the chance of each roll with j rolls left and the losses met so far
        for t in range(n):
            for r in range(n_r):
                m[t, r] = p_first[r]
                acc[t, r] = 0.0
        for j in range(n_j - 1, -1, -1):
            for t in range(n):
                c = lo + t
                pc = p_state[c]
                for r in range(n_r):
                    mt = m[t, r]
                    lr = loss[j, c, r]
                    mass[j, c, r] = mt
                    acc[t, r] = acc[t, r] + mt * lr
                    if lr > tol and pc * mt * lr > top_cost[j]:    # the costliest position's weight
                        top_cost[j] = pc * mt * lr
            if j > 0:
                for k in range(n_k):
                    for t in range(n):
                        hm[k, t] = 0.0
                        ha[k, t] = 0.0
                for t in range(n):
                    c = lo + t
                    for r in range(n_r):
                        k = pos_of_keep[keeps[j - 1, c, r]]
                        used[k] = True
                        hm[k, t] += m[t, r]
                        ha[k, t] += acc[t, r]
                for i in range(walk.shape[0]):
                    k = walk[i]
                    if not used[k]:
                        continue
                    hk = hm[k]
                    hak = ha[k]
                    for f in range(n_f):
                        ch = children[k, f]
                        used[ch] = True
                        hc = hm[ch]
                        hac = ha[ch]
                        for t in range(n):
                            hc[t] += hk[t] * inv
                            hac[t] += hak[t] * inv
                for k in range(n_k):
                    used[k] = False
                for r in range(n_r):
                    p = roll_pos[r]
                    for t in range(n):
                        m[t, r] = hm[p, t]
                        acc[t, r] = ha[p, t]
        # the box each final roll ends in: the flow into its move
        for t in range(n):
            c = lo + t
            g = g_inv[c]
            pc = p_state[c]
            row = into[c]
            for i in range(row.shape[0]):
                row[i] = 0.0
            for r in range(n_r):
                acc_out[c, r] = acc[t, r]
                b = boxes[c, r]
                row[g_move[g, r, b]] += pc * m[t, r]
    return ok


def signature() -> tuple:
    """The one signature :func:`turn_losses` is called with (C-contiguous, writable
    arrays; ``tol`` a float), so a process can compile it before it has a chunk."""
    from numba import types

    i64, f64, b1 = types.int64, types.float64, types.boolean

    def a(ty, nd):
        return types.Array(ty, nd, "C")

    return (a(i64, 1), a(f64, 3), a(b1, 3), a(i64, 3), a(f64, 2), a(f64, 1), a(i64, 2), a(i64, 3),
            a(i64, 2), a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 2), a(f64, 1), f64,
            a(f64, 3), a(f64, 3), a(f64, 3), a(f64, 2), a(f64, 2), a(f64, 2), a(f64, 1))


def compile_beside():
    """The first time on a machine (numba's cache has no index for the walk), start a
    forked process compiling it (:func:`yahtzee_sim.forkpool.compile_beside`), so the
    caller's own setup runs meanwhile; returns what to call to wait for it (before the
    first chunk, which then loads the code from the cache). Otherwise nothing is started
    and the wait returns at once.

    >>> compile_beside()() in (True, False)     # cached already, or compiled beside and waited for
    True
    """
    from ..forkpool import compile_beside as beside

    return beside(lambda: turn_losses.compile(signature()), kernels=(turn_losses,))
