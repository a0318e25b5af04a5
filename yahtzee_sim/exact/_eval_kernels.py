"""Compiled loops of the exact evaluations (policy values, score distributions).

Each kernel is a plain loop that numpy could only express with large temporary
index arrays (a gather or scatter per (state, roll) row or per stored
probability); numba compiles it once per machine (``cache=True``: later processes
load the compiled code). This module imports numba at its top, so the modules that
use it import it inside their functions only: ``import yahtzee_sim`` stays quick.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def scatter_moves(data, src_start, src_width, dst_start, p, out):
    """``out[dst_start[i] + k] += p[i] * data[src_start[i] + k]`` for k < src_width[i]:
    each move of a level adds its probability times the source row's stored
    distribution into the destination row (shifted by the move's points)."""
    for i in range(len(p)):
        w = src_width[i]
        src = data[src_start[i]:src_start[i] + w]     # views: the loop below vectorizes
        dst = out[dst_start[i]:dst_start[i] + w]
        q = p[i]
        for k in range(w):
            dst[k] += q * src[k]


@njit(cache=True)
def row_widths(dst_row, ends, need):
    """``need[dst_row[i]] = max(need[dst_row[i]], ends[i])``: each destination row's width."""
    for i in range(len(dst_row)):
        if ends[i] > need[dst_row[i]]:
            need[dst_row[i]] = ends[i]


@njit(cache=True)
def final_roll_masses(first, plans, lookup, growing, children, roll_keep, is_five, out, out_no5):
    """Probability of each final roll of a turn under each of P keep plans.

    ``first`` (R,) the first roll's distribution; ``plans`` (J, P, R) the keep of each
    roll, ``plans[0]`` with the most rerolls left, as a position in the roll's row of
    ``lookup`` (R, S) of keep indices; ``growing`` the keeps below a full
    roll, smallest first, and ``children`` (K, F) each keep with one more die of each
    face; ``roll_keep`` (R,) the keep holding a whole roll. Fills ``out`` (P, R) and,
    when ``out_no5`` has P rows, the part with no five of a kind (``is_five``) thrown
    at any throw of the turn.
    """
    n_keeps, n_faces = children.shape
    n_rolls = len(first)
    both = out_no5.shape[0] == out.shape[0]
    inv = 1.0 / n_faces
    x = np.empty(n_rolls)
    x5 = np.empty(n_rolls)
    y = np.empty(n_keeps)
    y5 = np.zeros(n_keeps)
    for p in range(out.shape[0]):
        for r in range(n_rolls):
            x[r] = first[r]
            x5[r] = 0.0 if is_five[r] else first[r]
        for j in range(plans.shape[0]):
            y[:] = 0.0
            for r in range(n_rolls):
                y[lookup[r, plans[j, p, r]]] += x[r]
            for i in range(len(growing)):
                k = growing[i]
                a = y[k] * inv
                if a != 0.0:
                    for f in range(n_faces):
                        y[children[k, f]] += a
            if both:                                  # the same pushes, no five thrown yet
                y5[:] = 0.0
                for r in range(n_rolls):
                    y5[lookup[r, plans[j, p, r]]] += x5[r]
                for i in range(len(growing)):
                    k = growing[i]
                    b = y5[k] * inv
                    if b != 0.0:
                        for f in range(n_faces):
                            y5[children[k, f]] += b
            for r in range(n_rolls):
                x[r] = y[roll_keep[r]]
                x5[r] = 0.0 if is_five[r] else y5[roll_keep[r]]
        for r in range(n_rolls):
            out[p, r] = x[r]
            if both:
                out_no5[p, r] = x5[r]


@njit(cache=True)
def aggregate_moves(boxes, g_inv, g_scores, g_legal, bin_of, n_pts, plan_of, p_all, p_no5,
                    five_bin, pb, qb):
    """Per state, the probability of each (box, points, bonus) bin the turn ends in.

    ``boxes`` (C, R) the box of each final roll, ``g_inv`` (C,) each state's row group
    in ``g_scores`` / ``g_legal`` (G * R, B), ``bin_of`` (B * n_pts,) the bin of each
    (box, points); ``five_bin`` (C, R) 1 where the roll earns a five-of-a-kind bonus
    (bins ``2 * bin + bonus``). Adds row ``plan_of[c]`` of ``p_all`` / ``p_no5`` (P, R)
    into ``pb`` / ``qb`` (C, 2 * bins). Returns False if a box is illegal.
    """
    n_states, n_rolls = boxes.shape
    for c in range(n_states):
        g = g_inv[c] * n_rolls
        p = plan_of[c]
        for r in range(n_rolls):
            b = boxes[c, r]
            if not g_legal[g + r, b]:
                return False
            k = 2 * bin_of[b * n_pts + g_scores[g + r, b]] + five_bin[c, r]
            pb[c, k] += p_all[p, r]
            qb[c, k] += p_no5[p, r]
    return True


@njit(cache=True)
def chunk_values(boxes, g_inv, g_gain, g_move, g_legal, a_tab, q_tab, plan_of, rho, v, v2):
    """Expected future score and its second moment of C states.

    Per state c and final roll r (probability ``rho[plan_of[c], r]``), the box
    ``boxes[c, r]`` gains ``s = g_gain[g, b]`` points and makes move ``m = g_move[g, b]``
    (row ``g = g_inv[c] * R + r``), worth ``A = a_tab[c, m]`` (upper bonus plus the next
    state's value) and ``Q = q_tab[c, m]`` (the matching second moment): ``v[c]`` is
    the sum of ``rho * (s + A)``, ``v2[c]`` of ``rho * (s * (s + 2 A) + Q)``. Returns
    False if a box is illegal.
    """
    n_states, n_rolls = boxes.shape
    for c in range(n_states):
        g = g_inv[c] * n_rolls
        p = plan_of[c]
        acc = 0.0
        acc2 = 0.0
        for r in range(n_rolls):
            b = boxes[c, r]
            if not g_legal[g + r, b]:
                return False
            s = g_gain[g + r, b]
            m = g_move[g + r, b]
            a = a_tab[c, m]
            w = rho[p, r]
            acc += w * (s + a)
            acc2 += w * (s * (s + 2.0 * a) + q_tab[c, m])
        v[c] = acc
        v2[c] = acc2
    return True


@njit(cache=True)
def lattice_expectations(out, sizes_desc, children, inv):
    """The widget's keep expectations in place: rows of ``out`` (K, U) for the keeps
    ``sizes_desc`` (largest keeps first, full rolls already filled) become the mean
    over the faces of their children's rows, summed face by face then times ``inv``
    (the numpy loop's order of operations, so the same floats)."""
    n_cols = out.shape[1]
    n_faces = children.shape[1]
    for i in range(len(sizes_desc)):
        k = sizes_desc[i]
        acc = out[k]
        first = out[children[k, 0]]
        for u in range(n_cols):
            acc[u] = first[u]
        for f in range(1, n_faces):
            row = out[children[k, f]]
            for u in range(n_cols):
                acc[u] += row[u]
        for u in range(n_cols):
            acc[u] *= inv


@njit(cache=True)
def lattice_best_subkeep(best, arg, sizes_asc, parents):
    """The widget's max over sub-keeps in place: for the keeps ``sizes_asc`` (smallest
    first, one die or more), face by face, a parent (one die of that face less) that is
    strictly better replaces the value and the arg (the numpy loop's tie rule)."""
    n_cols = best.shape[1]
    n_faces = parents.shape[1]
    for i in range(len(sizes_asc)):
        k = sizes_asc[i]
        bk = best[k]
        ak = arg[k]
        for f in range(n_faces):
            p = parents[k, f]
            if p < 0:
                continue
            bp = best[p]
            ap = arg[p]
            for u in range(n_cols):
                if bp[u] > bk[u]:
                    bk[u] = bp[u]
                    ak[u] = ap[u]


@njit(cache=True)
def best_gain_boxes(g_inv, u, g_scores, g_bonus, g_legal, up_gain, out):
    """``out[c, r]``: the legal box gaining most with final roll r in state c (points,
    upper bonus at the state's upper total ``u[c]`` from ``up_gain`` rows ``u * R + r``,
    five-of-a-kind bonus), the first box on ties: keep-largest's box."""
    n_states, n_rolls = out.shape
    n_boxes = g_scores.shape[1]
    for c in range(n_states):
        g = g_inv[c] * n_rolls
        ur = u[c] * n_rolls
        for r in range(n_rolls):
            best = -1 << 30
            arg = 0
            bonus = g_bonus[g + r]
            for b in range(n_boxes):
                if g_legal[g + r, b]:
                    v = g_scores[g + r, b] + up_gain[ur + r, b] + bonus
                    if v > best:
                        best = v
                        arg = b
            out[c, r] = arg


@njit(cache=True)
def lattice_best_keeps(final_values, roll_keep, down, children, up, parents, inv, values, keeps):
    """The widget's whole plan of U positions, tile by tile of positions (so the keep
    lattice of a tile stays in cache and nothing is transposed in memory): per rerolls
    left j, ``values[j - 1]`` (U, R) the value of holding each roll and ``keeps[j - 1]``
    (U, R) its best keep, from ``final_values`` (U, R). The same operations in the same
    order as :func:`lattice_expectations` then :func:`lattice_best_subkeep` on the
    transposed batch, so the same floats and ties."""
    n_pos, n_rolls = final_values.shape
    n_keeps, n_faces = children.shape
    tile = 128
    e = np.empty((n_keeps, tile), dtype=final_values.dtype)
    best = np.empty((n_keeps, tile), dtype=final_values.dtype)
    arg = np.empty((n_keeps, tile), dtype=np.int16)
    for lo in range(0, n_pos, tile):
        n = min(tile, n_pos - lo)
        if n < tile:                  # a last partial tile: padding columns hold zeros
            e[:] = 0
        for r in range(n_rolls):
            k = roll_keep[r]
            for t in range(n):
                e[k, t] = final_values[lo + t, r]
        for j in range(values.shape[0]):
            for i in range(len(down)):                       # expectations, largest keeps first
                k = down[i]
                acc = e[k]
                first = e[children[k, 0]]
                for t in range(tile):
                    acc[t] = first[t]
                for f in range(1, n_faces):
                    row = e[children[k, f]]
                    for t in range(tile):
                        acc[t] += row[t]
                for t in range(tile):
                    acc[t] *= inv
            for k in range(n_keeps):
                for t in range(tile):
                    best[k, t] = e[k, t]
                    arg[k, t] = k
            lattice_best_subkeep(best, arg, up, parents)      # max over sub-keeps, smallest first
            for t in range(n):
                for r in range(n_rolls):
                    k = roll_keep[r]
                    values[j, lo + t, r] = best[k, t]
                    keeps[j, lo + t, r] = arg[k, t]
            for r in range(n_rolls):                         # the next stage's final values
                k = roll_keep[r]
                for t in range(tile):
                    e[k, t] = best[k, t]


@njit(cache=True)
def served_final_roll_masses(first, plans, hold_after_first, growing, children, roll_keep,
                             is_five, out, out_s, out_no5):
    """The turn's final roll under each of P keep plans, split by whether the dice are
    still the first throw's (served scores; holding every die is not a throw).

    ``plans`` (J, P, R) the keep index of each roll, ``plans[0]`` with the most rerolls
    left; a served roll follows the same plan (a strategy's keep does not see whether
    the dice are served) unless ``hold_after_first``: then once its first keep held
    every die it holds them to the end (optimal play). Fills ``out`` (P, R) the
    probability of ending with each roll no longer served, ``out_s`` (P, R) still
    served, and ``out_no5`` (P, R) the part of ``out`` with no five of a kind
    (``is_five``) thrown at any throw of the turn (a served roll's is ``out_s`` where
    it is not five of a kind). The other arguments as :func:`final_roll_masses`.
    """
    n_keeps, n_faces = children.shape
    n_rolls = len(first)
    inv = 1.0 / n_faces
    x = np.empty(n_rolls)
    x5 = np.empty(n_rolls)
    xs = np.empty(n_rolls)
    y = np.empty(n_keeps)
    y5 = np.empty(n_keeps)
    for p in range(out.shape[0]):
        for r in range(n_rolls):
            x[r] = 0.0
            x5[r] = 0.0
            xs[r] = first[r]
        for j in range(plans.shape[0]):
            y[:] = 0.0
            y5[:] = 0.0
            for r in range(n_rolls):
                k = plans[j, p, r]
                y[k] += x[r]
                y5[k] += x5[r]
                if xs[r] != 0.0:
                    ks = roll_keep[r] if hold_after_first and j > 0 else k
                    if ks != roll_keep[r]:            # a throw: served no more
                        y[ks] += xs[r]
                        if not is_five[r]:
                            y5[ks] += xs[r]
                        xs[r] = 0.0
            for i in range(len(growing)):
                k = growing[i]
                a = y[k] * inv
                if a != 0.0:
                    for f in range(n_faces):
                        y[children[k, f]] += a
                b = y5[k] * inv
                if b != 0.0:
                    for f in range(n_faces):
                        y5[children[k, f]] += b
            for r in range(n_rolls):
                x[r] = y[roll_keep[r]]
                x5[r] = 0.0 if is_five[r] else y5[roll_keep[r]]
        for r in range(n_rolls):
            out[p, r] = x[r]
            out_s[p, r] = xs[r]
            out_no5[p, r] = x5[r]
