"""Private: the compiled loop of the exact loss accounting (one turn of every state of a
chunk, :func:`yahtzee_sim.exact.losses.loss_accounting`).

The NumPy walk built (state, roll, box) arrays of a whole chunk (half a million rows
times 13 boxes, about 50 MB each) and passed over them a dozen times: memory traffic,
not arithmetic, was the time. This loop does one state at a time, its few kilobytes
staying in cache, with the same operations in the same order as the NumPy code it
replaces (the sparse keep/roll products summed over their stored entries in order,
the masses scattered to the keeps roll by roll, as ``np.bincount`` does), so every
value it writes is the same float as before; the sums over the chunk stay in NumPy.

numba compiles it once per machine (``cache=True``: later processes load the compiled
code); this module imports numba at its top, so :mod:`~yahtzee_sim.exact.losses`
imports it inside the function that uses it and ``import yahtzee_sim`` stays quick.
"""

from __future__ import annotations

import numpy as np
from numba import njit


TILE = 64
"""States walked together: the keep and roll products run over a tile of states at once
(a vectorized inner loop) while the tile's tables stay in cache."""


@njit(cache=True, nogil=True)
def turn_losses(g_inv, g_gain, g_legal, g_move, a_m, p_state, boxes, keeps, t_ptr, t_idx, t_dat,
                up_order, parents, roll_keep, p_first, tol,
                loss, mass, w_out, acc_out, pts_out, into, top_cost):
    """One turn of each of the C states of a chunk, following the strategy's decisions.

    Inputs: ``g_inv`` (C,) each state's row of the (filled boxes, flag) tables
    ``g_gain`` (points and bonus), ``g_legal``, ``g_move`` (G, R, B); ``a_m`` (C, M)
    upper bonus plus the optimal value after each move; ``p_state`` (C,) reach;
    the strategy's ``boxes`` (C, R) and ``keeps`` (J - 1, C, R) (row j - 1: j rolls
    left); the keep -> roll chances as CSR (``t_*``, K x R, sorted columns); the keep
    lattice: ``up_order`` (keeps of one die or more, smallest first) and ``parents``
    (K, faces, -1 for none); ``roll_keep`` (R,) the keep holding a whole roll;
    ``p_first`` (R,) the first throw's chances; ``tol`` the loss of an optimal choice.

    Outputs (written): ``loss[j]`` (C, R) the loss of the decision with j rolls left
    (0: the box), ``mass[j]`` (C, R) the chance of each roll with j rolls left,
    ``w_out[j - 1]`` (C, K) optimal value of each keep with j rolls left, ``acc_out``
    (C, R) the turn's losses met on the way to each final roll (times its chance),
    ``pts_out`` (C, R) the points of the box chosen, ``into`` (C, M) reach times chance
    flowing into each move, ``top_cost[j]`` the largest reach times chance times loss
    above ``tol`` (0 if none). Returns False if an optimal value of a legal choice is NaN.

    The same floats as the NumPy walk: each keep's value sums its roll chances in the
    CSR's order; the masses reach the keeps roll by roll (``np.bincount``'s order) and
    the rolls keep by keep (the transposed CSR's order, rows sorted: keeps no state of
    the tile holds add zeros only, so they are skipped)."""
    n_c = g_inv.shape[0]
    n_r = g_gain.shape[1]
    n_b = g_gain.shape[2]
    n_k = t_ptr.shape[0] - 1
    n_j = loss.shape[0]
    n_f = parents.shape[1]
    tile = TILE
    for j in range(n_j):
        top_cost[j] = 0.0
    z = np.empty((n_r, tile))
    w = np.empty((n_k, tile))
    m = np.empty((n_r, tile))
    acc = np.empty((n_r, tile))
    hm = np.empty((n_k, tile))
    ha = np.empty((n_k, tile))
    ok = True
    used = np.zeros(n_k, dtype=np.bool_)
    for lo in range(0, n_c, tile):
        n = min(tile, n_c - lo)
        # the box: q = points + the move's value, illegal boxes -inf (the max never picks
        # them); z (R, tile) the value of each final roll
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
                z[r, t] = top
                b = boxes[c, r]
                qc = g_gain[g, r, b] + am[g_move[g, r, b]] if g_legal[g, r, b] else -np.inf
                loss[0, c, r] = top - qc
                pts_out[c, r] = g_gain[g, r, b]
        # each keep stage: w = T z, then z = the best sub-keep's w (parents hold one die
        # fewer and are final when their children are met)
        for j in range(1, n_j):
            for k in range(n_k):
                wk = w[k]
                for t in range(n):
                    wk[t] = 0.0
                for p in range(t_ptr[k], t_ptr[k + 1]):
                    a = t_dat[p]
                    zr = z[t_idx[p]]
                    for t in range(n):
                        wk[t] += a * zr[t]
            for t in range(n):
                for k in range(n_k):
                    w_out[j - 1, lo + t, k] = w[k, t]
            for i in range(up_order.shape[0]):
                k = up_order[i]
                wk = w[k]
                for f in range(n_f):
                    pa = parents[k, f]
                    if pa >= 0:
                        wp = w[pa]
                        for t in range(n):
                            if wp[t] > wk[t]:
                                wk[t] = wp[t]
            for r in range(n_r):
                zr = z[r]
                wk = w[roll_keep[r]]
                for t in range(n):
                    zr[t] = wk[t]
            for t in range(n):
                c = lo + t
                for r in range(n_r):
                    loss[j, c, r] = z[r, t] - w_out[j - 1, c, keeps[j - 1, c, r]]
        # forwards: the chance of each roll with j rolls left and the losses met so far
        for r in range(n_r):
            for t in range(n):
                m[r, t] = p_first[r]
                acc[r, t] = 0.0
        for j in range(n_j - 1, -1, -1):
            for t in range(n):
                c = lo + t
                pc = p_state[c]
                for r in range(n_r):
                    mt = m[r, t]
                    lr = loss[j, c, r]
                    mass[j, c, r] = mt
                    acc[r, t] = acc[r, t] + mt * lr
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
                        k = keeps[j - 1, c, r]
                        used[k] = True
                        hm[k, t] += m[r, t]
                        ha[k, t] += acc[r, t]
                for r in range(n_r):
                    for t in range(n):
                        m[r, t] = 0.0
                        acc[r, t] = 0.0
                for k in range(n_k):
                    if not used[k]:
                        continue
                    used[k] = False
                    hk = hm[k]
                    hak = ha[k]
                    for p in range(t_ptr[k], t_ptr[k + 1]):
                        a = t_dat[p]
                        mr = m[t_idx[p]]
                        ar = acc[t_idx[p]]
                        for t in range(n):
                            mr[t] += a * hk[t]
                            ar[t] += a * hak[t]
        # the box each final roll ends in: the flow into its move
        for t in range(n):
            c = lo + t
            g = g_inv[c]
            pc = p_state[c]
            row = into[c]
            for i in range(row.shape[0]):
                row[i] = 0.0
            for r in range(n_r):
                acc_out[c, r] = acc[r, t]
                b = boxes[c, r]
                row[g_move[g, r, b]] += pc * m[r, t]
    return ok


def signature() -> tuple:
    """The one signature :func:`turn_losses` is called with (C-contiguous, writable
    arrays; ``tol`` a float), so a process can compile it before it has a chunk."""
    from numba import types

    i64, f64, b1 = types.int64, types.float64, types.boolean

    def a(ty, nd):
        return types.Array(ty, nd, "C")

    return (a(i64, 1), a(f64, 3), a(b1, 3), a(i64, 3), a(f64, 2), a(f64, 1), a(i64, 2), a(i64, 3),
            a(i64, 1), a(i64, 1), a(f64, 1), a(i64, 1), a(i64, 2), a(i64, 1), a(f64, 1), f64,
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
