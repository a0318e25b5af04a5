"""Private: the compiled loops of the exact loss accounting (one turn of every state of a
chunk, :func:`yahtzee_sim.exact.losses.loss_accounting`): :func:`turn_losses` follows a
deterministic strategy's decisions, :func:`uniform_turn_losses` averages ``random``'s
over its uniform choices.

The NumPy walks built (state, roll, box) arrays of a whole chunk (half a million rows
times 13 boxes, about 50 MB each; random's also (state, roll, sub-keep) ones, 32 sub-keeps
a roll) and passed over them a dozen times: memory traffic, not arithmetic, was the time.
These loops do a tile of states at a time, its few hundred kilobytes staying in cache;
the sums over the chunk stay in NumPy.

It walks the exact engine's one keep-lattice layout
(:func:`~yahtzee_sim.exact._solver_lattice.lattice`: keeps by size, the full rolls last)
with the operations of its other walks: a keep's value from its children as the solver's
:func:`~yahtzee_sim.exact._solver_lattice.expect` computes it, the best sub-keep along
:func:`~yahtzee_sim.exact._solver_lattice.sweep_pairs`, the masses pushed down the
lattice as :func:`~yahtzee_sim.exact._eval_kernels.push_up` pushes them (its loop
written out here: numba's cache would not see a change to a compiled function of
another file, and would keep calling the old one). Keep indices of the dice tables
appear only at the boundary (the strategy's keeps in, the keep values out).

numba compiles them once per machine (``cache=True``: later processes load the compiled
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
def _keep_means(w, child_pos, n):
    """In place on the first ``n`` columns of ``w`` (K, tile), lattice rows: every keep
    below a full roll becomes the mean of its children (one die more), the largest keeps
    first, as the solver's :func:`~yahtzee_sim.exact._solver_lattice.expect` computes it
    (the children summed in ascending row from 0.0, one division by F)."""
    n_f = child_pos.shape[1]
    faces = float(n_f)
    for k in range(child_pos.shape[0] - 1, -1, -1):
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


@njit(cache=True, nogil=True)
def _best_subkeeps(w, pair_child, pair_parent, n):
    """In place: each row of ``w`` becomes the best of its sub-keeps along
    :func:`~yahtzee_sim.exact._solver_lattice.sweep_pairs`' pairs (an exact max)."""
    for i in range(pair_child.shape[0]):
        wk = w[pair_child[i]]
        wp = w[pair_parent[i]]
        for t in range(n):
            if wp[t] > wk[t]:
                wk[t] = wp[t]


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
    n_f = child_pos.shape[1]
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
            _keep_means(w, child_pos, n)
            for t in range(n):
                for k in range(n_k):
                    w_out[j - 1, lo + t, k] = w[pos_of_keep[k], t]
            _best_subkeeps(w, pair_child, pair_parent, n)
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



@njit(cache=True, nogil=True)
def _pairwise_sum(x, n):
    """The sum of ``x[:n]`` in NumPy's order for a row of a reduction (``a.sum(axis=-1)``
    of a C-contiguous array, n <= 128): eight partial sums of a block of eight, combined
    as a tree, then the rest one by one, added to the reduction's initial 0.0."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += x[i]
        return 0.0 + res
    r0, r1, r2, r3, r4, r5, r6, r7 = x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]
    i = 8
    while i < n - (n % 8):
        r0 += x[i]
        r1 += x[i + 1]
        r2 += x[i + 2]
        r3 += x[i + 3]
        r4 += x[i + 4]
        r5 += x[i + 5]
        r6 += x[i + 6]
        r7 += x[i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += x[i]
        i += 1
    return 0.0 + res


@njit(cache=True, nogil=True)
def uniform_turn_losses(g_inv, g_gain, g_legal, g_move, a_m, p_state, child_pos, pair_child,
                        pair_parent, roll_pos, pos_of_keep, walk, children, avg_ptr, avg_keep,
                        avg_weight, held_ptr, held_roll, held_weight, n_sub, p_first, tol,
                        loss, mass, opt, w_out, acc_out, into, flow, flow_pts, by_box, top_cost):
    """One turn of each of the C states of a chunk under uniformly random choices
    (``random``): each decision's loss averaged over its choices, as
    :func:`turn_losses` walks a deterministic strategy's.

    Inputs as :func:`turn_losses`'s, with the uniform choices instead of the strategy's
    decisions: ``avg_ptr``, ``avg_keep``, ``avg_weight`` each roll's sub-keeps and
    their weights 1/n (a CSR matrix (R, K), keep indices ascending), ``held_ptr``,
    ``held_roll``, ``held_weight`` the same transposed (each keep's rolls, ascending),
    ``n_sub`` (R,) each roll's number of sub-keeps.

    Outputs (written): ``loss[j]``, ``mass[j]`` (C, R) as :func:`turn_losses`'s (the
    mean loss of the uniform choice), ``opt[j]`` (C, R) the share of the choices that
    are optimal (within ``tol``), ``w_out``, ``acc_out``, ``into``, ``top_cost`` as
    there; the legal (state, roll, box) endings in order, each's chance times reach in
    ``flow`` and its points in ``flow_pts`` (their count returned); ``by_box`` (B,) the
    turn's losses times reach summed by the box chosen. Returns -1 if an optimal value
    of a legal choice is NaN.

    The same floats as the NumPy walk this replaced (its per-roll arrays, the sums over
    the chunk left to NumPy): a box's mean is NumPy's pairwise row sum
    (:func:`_pairwise_sum`), a keep's mean the sparse product's sum in index order from
    0.0, the masses and losses pushed through the sparse average and down the lattice
    as :func:`turn_losses` pushes them, ``by_box`` summed state by state and roll by
    roll as ``np.einsum`` sums it."""
    n_c = g_inv.shape[0]
    n_r = g_gain.shape[1]
    n_b = g_gain.shape[2]
    n_k = pos_of_keep.shape[0]
    n_j = loss.shape[0]
    n_f = child_pos.shape[1]
    inv = 1.0 / n_f
    tile = TILE
    for j in range(n_j):
        top_cost[j] = 0.0
    for b in range(n_b):
        by_box[b] = 0.0
    # the chance of each roll with j rolls left: the same in every state (the same
    # operations as each state's own push gave it)
    m_all = np.empty((n_j, n_r))
    y1 = np.empty((n_k, 1))
    for r in range(n_r):
        m_all[n_j - 1, r] = p_first[r]
    for j in range(n_j - 1, 0, -1):
        for k in range(n_k):
            s = 0.0
            for i in range(held_ptr[k], held_ptr[k + 1]):
                s += held_weight[i] * m_all[j, held_roll[i]]
            y1[pos_of_keep[k], 0] = s
        for i in range(walk.shape[0]):
            k = walk[i]
            for f in range(n_f):
                y1[children[k, f], 0] += y1[k, 0] * inv
        for r in range(n_r):
            m_all[j - 1, r] = y1[roll_pos[r], 0]
    w = np.empty((n_k, tile))
    w_keep = np.empty((n_k, tile))            # keep values before the best sub-keep sweep
    acc = np.empty((n_r, tile))
    ha = np.empty((n_k, tile))
    mean = np.empty(tile)
    count = np.empty(tile)
    terms = np.empty(n_b)
    values = np.empty(n_b)
    hits = np.empty(n_b)
    wb = np.empty((tile, n_r))                # each legal box's weight 1/n
    n_flow = 0
    for lo in range(0, n_c, tile):
        n = min(tile, n_c - lo)
        # the box: its optimal value, the mean over the legal boxes, the optimal ones'
        # share; and the chance of each legal ending times reach, into its move (the
        # chance of each final roll is the same in every state: known already)
        for t in range(n):
            c = lo + t
            g = g_inv[c]
            am = a_m[c]
            pc = p_state[c]
            row = into[c]
            for i in range(row.shape[0]):
                row[i] = 0.0
            for r in range(n_r):
                top = -np.inf
                n_legal = 0
                for b in range(n_b):
                    if g_legal[g, r, b]:
                        n_legal += 1
                        v = g_gain[g, r, b] + am[g_move[g, r, b]]
                        if v != v:
                            return -1
                        if v > top:
                            top = v
                        values[b] = v
                share = 1.0 / n_legal
                wb[t, r] = share
                reach = pc * m_all[0, r]
                f = reach * share
                for b in range(n_b):
                    if g_legal[g, r, b]:
                        v = values[b]
                        terms[b] = share * v
                        hits[b] = share * (1.0 if top - v <= tol else 0.0)
                        row[g_move[g, r, b]] += f
                        flow[n_flow] = f
                        flow_pts[n_flow] = g_gain[g, r, b]
                        n_flow += 1
                    else:
                        terms[b] = 0.0
                        hits[b] = 0.0
                w[roll_pos[r], t] = top
                loss[0, c, r] = top - _pairwise_sum(terms, n_b)
                opt[0, c, r] = _pairwise_sum(hits, n_b)
        # each keep stage: the keeps' values (as turn_losses), the best sub-keep, and the
        # mean and optimal share over each roll's sub-keeps
        for j in range(1, n_j):
            _keep_means(w, child_pos, n)
            for k in range(n_k):
                src = w[pos_of_keep[k]]
                dst = w_keep[k]
                for t in range(n):
                    dst[t] = src[t]
                    w_out[j - 1, lo + t, k] = src[t]
            _best_subkeeps(w, pair_child, pair_parent, n)
            for r in range(n_r):
                z = w[roll_pos[r]]
                for t in range(n):
                    mean[t] = 0.0
                    count[t] = 0.0
                for i in range(avg_ptr[r], avg_ptr[r + 1]):
                    a = avg_weight[i]
                    wk = w_keep[avg_keep[i]]
                    for t in range(n):
                        mean[t] += a * wk[t]
                        if z[t] - wk[t] <= tol:
                            count[t] += 1.0
                subs = float(n_sub[r])
                for t in range(n):
                    loss[j, lo + t, r] = z[t] - mean[t]
                    opt[j, lo + t, r] = count[t] / subs
        # forwards: the losses met so far on the way to each roll, pushed as the masses
        for r in range(n_r):
            for t in range(n):
                acc[r, t] = 0.0
        for j in range(n_j - 1, -1, -1):
            for t in range(n):
                c = lo + t
                pc = p_state[c]
                for r in range(n_r):
                    mt = m_all[j, r]
                    lr = loss[j, c, r]
                    mass[j, c, r] = mt
                    acc[r, t] = acc[r, t] + mt * lr
                    if lr > tol and pc * mt * lr > top_cost[j]:
                        top_cost[j] = pc * mt * lr
            if j > 0:
                for k in range(n_k):
                    hk = ha[pos_of_keep[k]]
                    for t in range(n):
                        hk[t] = 0.0
                    for i in range(held_ptr[k], held_ptr[k + 1]):
                        a = held_weight[i]
                        ar = acc[held_roll[i]]
                        for t in range(n):
                            hk[t] += a * ar[t]
                for i in range(walk.shape[0]):
                    k = walk[i]
                    hk = ha[k]
                    for f in range(n_f):
                        hc = ha[children[k, f]]
                        for t in range(n):
                            hc[t] += hk[t] * inv
                for r in range(n_r):
                    p = roll_pos[r]
                    for t in range(n):
                        acc[r, t] = ha[p, t]
        # the turn's losses by the box it ends in
        for t in range(n):
            c = lo + t
            g = g_inv[c]
            pc = p_state[c]
            for r in range(n_r):
                acc_out[c, r] = acc[r, t]
                lost = pc * acc[r, t]
                share = wb[t, r]
                for b in range(n_b):
                    if g_legal[g, r, b]:
                        by_box[b] += lost * share
    return n_flow


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


def uniform_signature() -> tuple:
    """The one signature :func:`uniform_turn_losses` is called with (as :func:`signature`)."""
    from numba import types

    i64, f64, b1 = types.int64, types.float64, types.boolean

    def a(ty, nd):
        return types.Array(ty, nd, "C")

    return (a(i64, 1), a(f64, 3), a(b1, 3), a(i64, 3), a(f64, 2), a(f64, 1),
            a(i64, 2), a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 2),
            a(i64, 1), a(i64, 1), a(f64, 1), a(i64, 1), a(i64, 1), a(f64, 1), a(i64, 1), a(f64, 1), f64,
            a(f64, 3), a(f64, 3), a(f64, 3), a(f64, 3), a(f64, 2), a(f64, 2), a(f64, 1), a(f64, 1),
            a(f64, 1), a(f64, 1))


def compile_beside(uniform: bool = False):
    """The first time on a machine (numba's cache has no index for the walk: random's
    uniform walk if ``uniform``), start a forked process compiling it
    (:func:`yahtzee_sim.forkpool.compile_beside`), so the caller's own setup runs
    meanwhile; returns what to call to wait for it (before the first chunk, which then
    loads the code from the cache). Otherwise nothing is started and the wait returns at
    once.

    >>> compile_beside()() in (True, False)     # cached already, or compiled beside and waited for
    True
    """
    from ..forkpool import compile_beside as beside

    if uniform:
        return beside(lambda: uniform_turn_losses.compile(uniform_signature()), kernels=(uniform_turn_losses,))
    return beside(lambda: turn_losses.compile(signature()), kernels=(turn_losses,))
