"""Private: the compiled inner loops of the decision-table build (:mod:`.decisions`).

Two loops made most of a ``yahtzee`` table's build: the keep sweep up the lattice (the
first maximum of each roll's sub-keeps, carrying the keep index) and each final roll's
first best box. Both only compare the floats NumPy computed, in the same order and with
the same tie rules, so the table is the same byte for byte (tested against the NumPy
loops they replace); NumPy built (U, R) temporaries a dozen times per chunk, these run
over a chunk's columns in cache.

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
def first_best_box(worth, col, pick):
    """``pick[u, r]``: the first j with the largest ``worth[col[r, j], u]`` (pairs, U)."""
    n_r, n_b = col.shape
    n_u = worth.shape[1]
    best = np.empty(n_u, dtype=worth.dtype)
    pk = np.empty(n_u, dtype=np.uint8)
    for r in range(n_r):
        row = worth[col[r, 0]]
        for u in range(n_u):
            best[u] = row[u]
            pk[u] = 0
        for j in range(1, n_b):
            row = worth[col[r, j]]
            for u in range(n_u):
                if row[u] > best[u]:
                    best[u] = row[u]
                    pk[u] = j
        for u in range(n_u):
            pick[u, r] = pk[u]
