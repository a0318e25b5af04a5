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
        a = src_start[i]
        b = dst_start[i]
        q = p[i]
        for k in range(src_width[i]):
            out[b + k] += q * data[a + k]
