"""Private: the compiled (numba) turn of the target tables, one state at a time.

Loaded only when :func:`yahtzee_sim.exact.target.target_solve` computes a table. Per
turn-start state, :func:`target_states` does the floating-point operations of
:func:`~yahtzee_sim.exact.target.target_turn` in the same order, so the tables are
bit-identical (``tests/test_target.py`` compares both paths):

* the final-roll block: per roll, the largest ``W(next, r - gain)`` over the boxes
  (maxima: their order does not change a bit);
* the rerolls: the solver's keep-lattice layout and index arrays
  (:func:`~.space.kernel_plan`), with the needs ``r`` as the columns; the values of
  :func:`~._solver_kernels._reroll_tile` (expectation, then best sub-keep) bit for bit, in
  fewer passes over the rows (:func:`_reroll`);
* the mean over the first roll, in float64, summed roll after roll as NumPy reduces
  a C-contiguous array over its first axis.

Two things make it fast besides the compiled loops: one state's lattice (keeps x
needs) stays in the core's cache from the first roll to the last, and the needs
above the state's largest reachable points are not computed. ``W(s, r) = 0`` for
every ``r`` above ``max over the turn's (roll, box) of gain + top(next)``, where
``top`` is the largest need a state's row holds above 0 (every look-up there reads
a stored 0, and sums and maxima of zeros are 0), so those columns are written as
the 0 the full computation gives.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._solver_kernels import _JIT

_U = np.uint64


@nb.njit(**_JIT)
def _shifted_max(xf, dst, tf, src, gain, width):
    """``xf[dst + t] = max(xf[dst + t], tf[src + max(t - gain, 0)])`` for t < width.

    Flat arrays and unsigned offsets, as in :mod:`._solver_kernels`: with signed
    indices numba tests every index for a negative value and LLVM does not vectorize.
    """
    lo = min(gain, width)
    d = _U(dst)
    s = _U(src)
    if lo > 0:
        v = tf[s]
        for t in range(lo):
            i = d + _U(t)
            a = xf[i]
            xf[i] = a if a >= v else v
    g = _U(gain)
    for t in range(lo, width):
        i = _U(t)
        v = tf[s + i - g]
        a = xf[d + i]
        xf[d + i] = a if a >= v else v


@nb.njit(**_JIT)
def _max_into(xf, d, p, width):
    """``xf[d + t] = max(xf[d + t], xf[p + t])`` for t < width."""
    for t in range(width):
        i = _U(t)
        a = xf[d + i]
        b = xf[p + i]
        xf[d + i] = a if a >= b else b


@nb.njit(**_JIT)
def _reroll(xf, width, level_start, child_ptr, child_pos, faces, par_ptr, par_pos):
    """In place on one state's lattice ``xf`` (K * width, solver order, roll block filled):
    one reroll, the values of :func:`~._solver_kernels._reroll_tile` (means only) bit for bit.

    The expectation sums a keep's children in the same order (ascending position,
    from 0: ``0 + a`` is ``a``) and divides once, in one pass instead of one per child;
    a best sub-keep takes its parents' maximum (exact: their order does not matter)
    two at a time.
    """
    n_keeps = level_start[len(level_start) - 1]
    w = _U(width)
    for k in range(level_start[len(level_start) - 2] - 1, -1, -1):
        c0 = child_ptr[k]
        nc = child_ptr[k + 1] - c0
        d = _U(k) * w
        if nc == 6:
            s0 = _U(child_pos[c0]) * w
            s1 = _U(child_pos[c0 + 1]) * w
            s2 = _U(child_pos[c0 + 2]) * w
            s3 = _U(child_pos[c0 + 3]) * w
            s4 = _U(child_pos[c0 + 4]) * w
            s5 = _U(child_pos[c0 + 5]) * w
            for t in range(width):
                i = _U(t)
                xf[d + i] = (((((xf[s0 + i] + xf[s1 + i]) + xf[s2 + i]) + xf[s3 + i]) + xf[s4 + i])
                             + xf[s5 + i]) / faces
        else:
            s0 = _U(child_pos[c0]) * w
            for t in range(width):
                i = _U(t)
                xf[d + i] = xf[s0 + i]
            for e in range(c0 + 1, c0 + nc):
                s1 = _U(child_pos[e]) * w
                for t in range(width):
                    i = _U(t)
                    xf[d + i] += xf[s1 + i]
            for t in range(width):
                i = _U(t)
                xf[d + i] /= faces
    for k in range(level_start[1], n_keeps):
        d = _U(k) * w
        e = par_ptr[k]
        stop = par_ptr[k + 1]
        while e + 1 < stop:
            p = _U(par_pos[e]) * w
            q = _U(par_pos[e + 1]) * w
            for t in range(width):
                i = _U(t)
                a = xf[d + i]
                b = xf[p + i]
                c = xf[q + i]
                b = b if b >= c else c
                xf[d + i] = a if a >= b else b
            e += 2
        if e < stop:
            _max_into(xf, d, _U(par_pos[e]) * w, width)


@nb.njit(**_JIT)
def target_states(table, tops, out_row, trow, tgain, scratch, row_ptr, ent_row, ent_gain, max_add,
                  special_rows, r5, g5, rb_start, n_rerolls, level_start, child_ptr, child_pos, faces,
                  par_ptr, par_pos, roll_mult, n_outcomes):
    """Solve the rows ``out_row`` (C,) of ``table`` (rows, R + 1), and their ``tops``.

    Candidate look-ups of state ``i``: ``trow[i, t]`` (next row, -1 where the box is
    not open) at gain ``tgain[i, t]`` (in the solver's candidate-table order of
    :class:`~.space.KernelPlan`: upper box ``j`` with ``k`` dice of its face at
    ``k * n_upper + j``, then the lower boxes); ``scratch`` the candidates of
    0 points (every open box); roll-block row ``r``'s boxes ``ent_row[row_ptr[r]:
    row_ptr[r + 1]]`` with the lower boxes' points ``ent_gain``; ``max_add[t]`` the
    most points any roll adds to candidate ``t``. Five-of-a-kind rows
    ``special_rows`` from ``r5``, ``g5`` (C, k5, B) (next row, gain; -1: not allowed).
    """
    n_states = len(out_row)
    n_keeps = level_start[len(level_start) - 1]
    n_rolls = n_keeps - rb_start
    n_cand = trow.shape[1]
    full = table.shape[1]
    top_need = full - 1
    tf = table.reshape(-1)
    for i in range(n_states):
        bound = 0
        for t in range(n_cand):
            row = trow[i, t]
            if row >= 0:
                bound = max(bound, tgain[i, t] + max_add[t] + tops[row])
        for s in range(r5.shape[1]):
            for b in range(r5.shape[2]):
                row = r5[i, s, b]
                if row >= 0:
                    bound = max(bound, g5[i, s, b] + tops[row])
        width = min(bound, top_need) + 1
        x = np.empty((1, n_keeps, width), dtype=table.dtype)
        xf = x.reshape(-1)
        base = (n_keeps - 1) * width                   # the last roll row: scratch first
        for t in range(width):
            xf[_U(base + t)] = -1.0
        for e in range(len(scratch)):
            row = trow[i, scratch[e]]
            if row >= 0:
                _shifted_max(xf, base, tf, row * full, 0, width)
        for r in range(n_rolls):
            dst = (rb_start + r) * width
            if dst != base:
                for t in range(width):
                    xf[_U(dst + t)] = xf[_U(base + t)]
        for r in range(n_rolls):
            dst = (rb_start + r) * width
            for e in range(row_ptr[r], row_ptr[r + 1]):
                t = ent_row[e]
                row = trow[i, t]
                if row >= 0:
                    _shifted_max(xf, dst, tf, row * full, tgain[i, t] + ent_gain[e], width)
        for s in range(len(special_rows)):
            dst = (rb_start + special_rows[s]) * width
            for t in range(width):
                xf[_U(dst + t)] = -1.0
            for b in range(r5.shape[2]):
                row = r5[i, s, b]
                if row >= 0:
                    _shifted_max(xf, dst, tf, row * full, g5[i, s, b], width)
        for _ in range(n_rerolls):
            _reroll(xf, width, level_start, child_ptr, child_pos, faces, par_ptr, par_pos)
        mean = np.zeros(width)
        for r in range(n_rolls):
            m = roll_mult[r]
            src = x[0, rb_start + r]
            for t in range(width):
                mean[t] += np.float64(src[t]) * m
        out = table[out_row[i]]
        top = 0
        for t in range(width):
            v = min(mean[t] / n_outcomes, 1.0)
            out[t] = v
            if out[t] > 0:
                top = t
        for t in range(width, full):
            out[t] = 0.0
        tops[out_row[i]] = top


def signature(dtype):
    """The argument types :func:`target_states` is compiled for (work in ``dtype``).

    >>> signature(np.float32)[0]
    Array(float32, 2, 'C', False, aligned=True)
    """
    t = nb.from_dtype(np.dtype(dtype))
    f64, i64 = nb.float64, nb.int64

    def a(ty, nd, readonly=False):
        return nb.types.Array(ty, nd, "C", readonly=readonly)

    return (a(t, 2), a(i64, 1), a(i64, 1), a(i64, 2), a(i64, 2), a(i64, 1), a(i64, 1), a(i64, 1),
            a(i64, 1), a(i64, 1), a(i64, 1), a(i64, 3), a(i64, 3), i64, i64, a(i64, 1), a(i64, 1),
            a(i64, 1), t, a(i64, 1), a(i64, 1), a(f64, 1, readonly=True), f64)


def precompile(dtype) -> None:
    """Compile (or load from numba's cache) :func:`target_states` for ``dtype``, before
    the first state (and before the solver's workers fork: they inherit the code).

    The first time on a machine this takes about 4 CPU seconds (``benchmarks/RESULTS.md``);
    then the machine code comes from numba's on-disk cache.
    """
    sig = signature(dtype)
    if sig not in target_states.overloads:
        target_states.compile(sig)
