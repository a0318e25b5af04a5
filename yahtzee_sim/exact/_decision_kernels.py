"""Private: the compiled inner loops of the decision-table build (:mod:`.decisions`).

Two loops make most of a ``yahtzee`` table's build: the keep sweep up the lattice (the
first maximum of each roll's sub-keeps, carrying the keep index) and each final roll's
first best box. The keep sweep only compares the floats the widget computed; the box loop
adds each (box, points) pair's integer gain to the float64 value of the state it leads to,
as NumPy does, and compares in NumPy's order with its tie rules, so the table is the same
byte for byte (tested against the NumPy paths they replace); NumPy built (U, R)
temporaries a dozen times per chunk, these run over a chunk's columns in cache.

numba compiles them once per machine (``cache=True``); :mod:`.decisions` imports this
module inside the build only, so ``import yahtzee_sim`` stays quick.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def keep_sweep(values, keep_at, child, parent, roll_pos, roll_sub_pos, out):
    """``out[u, r]`` (U, R) uint8: the position in roll r's sub-keep list of the largest
    (value, keep index) pair among its sub-keeps, ``values`` (K, U) the keep values in
    lattice order. The sweep carries, per lattice position, the best pair among itself
    and its ancestors: ``child``/``parent`` the lattice's (position, parent position)
    pairs, level by level upwards (a parent is final before its children read it);
    ``roll_pos`` (R,) each roll's position, ``roll_sub_pos`` (R, K) as in
    :func:`.decisions._roll_sub_pos`. Returns False (``out`` unset) if a value is NaN."""
    n_k, n_u = values.shape
    x = np.empty((n_k, n_u), dtype=values.dtype)
    best = np.empty((n_k, n_u), dtype=np.int32)
    for k in range(n_k):
        for u in range(n_u):
            v = values[k, u]
            if v != v:
                return False
            x[k, u] = v
            best[k, u] = keep_at[k]
    for p in range(child.shape[0]):
        xa, xc, ba, bc = x[parent[p]], x[child[p]], best[parent[p]], best[child[p]]
        for u in range(n_u):            # without branches: the compiler makes it vector code
            cand = xa[u]
            cur = xc[u]
            better = (cand > cur) | ((cand == cur) & (ba[u] > bc[u]))
            xc[u] = cand if better else cur
            bc[u] = ba[u] if better else bc[u]
    for r in range(roll_pos.shape[0]):
        b = best[roll_pos[r]]
        for u in range(n_u):
            out[u, r] = roll_sub_pos[r, b[u]]
    return True


@njit(cache=True, nogil=True)
def box_picks(m, u, f, case, values, stride, box_of, pair_bit, gain, low, legal, col, regular,
              specials, s_legal, s_pair, s_bonus, out):
    """``out[s, r]`` (U, R) uint8: the box of roll r's largest ``gain + values[next state]``
    for the states ``m``, ``u``, ``f`` (U,), first box on ties, as
    :func:`.decisions._box_picks_generic` (the strategies' ``box``) picks it.

    A (box, points) pair ``p`` gains ``gain[u, p]`` (points and the upper bonus crossed from
    total ``u``) and leads to ``(m | pair_bit[p]) * stride + (low[u, p] | f)`` (``low``: the
    next total and the five-of-a-kind flag it sets); ``legal[case[s], box]`` the boxes open
    to the state's case (its filled boxes and flag). The ``regular`` rolls pay their score
    table's points: roll r's box j is pair ``col[r, j]``, and each pair's worth is computed
    once per state. The ``specials`` (five of a kind: jokers, bonuses) take their options
    per case from ``turn_options``: ``s_legal``, ``s_pair`` (C, Q, B) and ``s_bonus``
    (C, Q). Every sum is an integer gain plus a float64 value, as NumPy adds them, and the
    comparisons are NumPy's: the same picks, byte for byte (tested against both NumPy paths).
    """
    n_u = m.shape[0]
    n_p = box_of.shape[0]
    n_b = col.shape[1]
    worth = np.empty((n_p, n_u), dtype=np.float64)
    for p in range(n_p):
        b, bit = box_of[p], pair_bit[p]
        for s in range(n_u):
            if legal[case[s], b]:
                worth[p, s] = np.float64(gain[u[s], p]) + values[(m[s] | bit) * stride + (low[u[s], p] | f[s])]
            else:
                worth[p, s] = -np.inf
    best = np.empty(n_u, dtype=np.float64)
    pk = np.empty(n_u, dtype=np.int64)
    for i in range(regular.shape[0]):       # the first strict maximum over the boxes in order
        r = regular[i]
        row = worth[col[r, 0]]
        for s in range(n_u):
            best[s] = row[s]
            pk[s] = 0
        for j in range(1, n_b):
            row = worth[col[r, j]]
            for s in range(n_u):        # without branches: the compiler makes it vector code
                v = row[s]
                better = v > best[s]
                best[s] = v if better else best[s]
                pk[s] = j if better else pk[s]
        for s in range(n_u):
            out[s, r] = pk[s]
    for s in range(n_u):
        c = case[s]
        for q in range(specials.shape[0]):
            # best_legal's rule: the first maximum of the legal worths (-inf elsewhere; box 0
            # if none is legal), or the first NaN if there is one (NumPy's argmax)
            top = -np.inf
            pick = 0
            nan = -1
            for j in range(n_b):
                v = -np.inf
                if s_legal[c, q, j]:
                    p = s_pair[c, q, j]
                    v = (np.float64(gain[u[s], p] + s_bonus[c, q])
                         + values[(m[s] | pair_bit[p]) * stride + (low[u[s], p] | f[s])])
                if v != v:
                    if nan < 0:
                        nan = j
                elif v > top:
                    top = v
                    pick = j
            out[s, specials[q]] = nan if nan >= 0 else pick
