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


@njit(cache=True, nogil=True)
def turn_losses(g_inv, g_gain, g_legal, g_move, a_m, p_state, boxes, keeps, t_ptr, t_idx, t_dat,
                tt_ptr, tt_idx, tt_dat, up_order, parents, roll_keep, p_first,
                loss, mass, w_out, acc_out, pts_out, into):
    """One turn of each of the C states of a chunk, following the strategy's decisions.

    Inputs: ``g_inv`` (C,) each state's row of the (filled boxes, flag) tables
    ``g_gain`` (points and bonus), ``g_legal``, ``g_move`` (G, R, B); ``a_m`` (C, M)
    upper bonus plus the optimal value after each move; ``p_state`` (C,) reach;
    the strategy's ``boxes`` (C, R) and ``keeps`` (J - 1, C, R) (row j - 1: j rolls
    left); the keep -> roll chances as CSR (``t_*``, K x R) and transposed (``tt_*``);
    the keep lattice: ``up_order`` (keeps of one die or more, smallest first) and
    ``parents`` (K, faces, -1 for none); ``roll_keep`` (R,) the keep holding a whole
    roll; ``p_first`` (R,) the first throw's chances.

    Outputs (written): ``loss[j]`` (C, R) the loss of the decision with j rolls left
    (0: the box), ``mass[j]`` (C, R) the chance of each roll with j rolls left,
    ``w_out[j - 1]`` (C, K) optimal value of each keep with j rolls left, ``acc_out``
    (C, R) the turn's losses met on the way to each final roll (times its chance),
    ``pts_out`` (C, R) the points of the box chosen, ``into`` (C, M) (zeroed here)
    reach times chance flowing into each move. Returns False if an optimal value of a
    legal choice is NaN (a next state without a value)."""
    n_c = g_inv.shape[0]
    n_r = g_gain.shape[1]
    n_b = g_gain.shape[2]
    n_k = t_ptr.shape[0] - 1
    n_j = loss.shape[0]
    n_f = parents.shape[1]
    z = np.empty(n_r)
    best = np.empty(n_k)
    held_m = np.empty(n_k)
    held_a = np.empty(n_k)
    m = np.empty(n_r)
    acc = np.empty(n_r)
    ok = True
    for c in range(n_c):
        g = g_inv[c]
        am = a_m[c]
        # the box: q = points + the move's value, illegal boxes -inf (the max never picks them)
        for r in range(n_r):
            top = -np.inf
            for b in range(n_b):
                if g_legal[g, r, b]:
                    v = g_gain[g, r, b] + am[g_move[g, r, b]]
                    if v != v:
                        ok = False
                    if v > top:
                        top = v
            z[r] = top
            b = boxes[c, r]
            qc = g_gain[g, r, b] + am[g_move[g, r, b]] if g_legal[g, r, b] else -np.inf
            loss[0, c, r] = top - qc
            pts_out[c, r] = g_gain[g, r, b]
        # each keep stage: w = T z (stored entries in order), z = best sub-keep's w
        for j in range(1, n_j):
            for k in range(n_k):
                s = 0.0
                for p in range(t_ptr[k], t_ptr[k + 1]):
                    s += t_dat[p] * z[t_idx[p]]
                w_out[j - 1, c, k] = s
                best[k] = s
            for i in range(up_order.shape[0]):         # parents (one die fewer) are final
                k = up_order[i]
                for f in range(n_f):
                    pa = parents[k, f]
                    if pa >= 0 and best[pa] > best[k]:
                        best[k] = best[pa]
            for r in range(n_r):
                z[r] = best[roll_keep[r]]
                loss[j, c, r] = z[r] - w_out[j - 1, c, keeps[j - 1, c, r]]
        # forwards: the chance of each roll with j rolls left and the losses met so far
        for r in range(n_r):
            m[r] = p_first[r]
            acc[r] = 0.0
        for j in range(n_j - 1, -1, -1):
            for r in range(n_r):
                mass[j, c, r] = m[r]
                acc[r] = acc[r] + m[r] * loss[j, c, r]
            if j > 0:
                for k in range(n_k):
                    held_m[k] = 0.0
                    held_a[k] = 0.0
                for r in range(n_r):
                    k = keeps[j - 1, c, r]
                    held_m[k] += m[r]
                    held_a[k] += acc[r]
                for r in range(n_r):
                    sm = 0.0
                    sa = 0.0
                    for p in range(tt_ptr[r], tt_ptr[r + 1]):
                        k = tt_idx[p]
                        sm += tt_dat[p] * held_m[k]
                        sa += tt_dat[p] * held_a[k]
                    m[r] = sm
                    acc[r] = sa
        # the box each final roll ends in: the flow into its move
        pc = p_state[c]
        row = into[c]
        for i in range(row.shape[0]):
            row[i] = 0.0
        for r in range(n_r):
            acc_out[c, r] = acc[r]
            b = boxes[c, r]
            row[g_move[g, r, b]] += pc * m[r]
    return ok
