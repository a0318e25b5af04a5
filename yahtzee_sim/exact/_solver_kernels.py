"""Private: compiled (numba) kernels of the solver's turn evaluation.

Loaded only when :func:`yahtzee_sim.exact.solver.solve` computes a table (never at
package import: numba and its NumPy support take about 0.3 s to load; the machine
code comes from numba's on-disk cache, compiled once per dtype on first use). Each
kernel does the floating-point operations of the NumPy path of
:func:`~yahtzee_sim.exact.space.turn_values`, in the same order, so the
tables are bit-identical (``tests/test_solver_kernels.py`` compares both paths):

* :func:`turn_tables`: per state, the scratch value of every box, the best of them
  (the offset ``c``) and the upper boxes' values by face count, from the dense tables;
* :func:`five_rows`: the five-of-a-kind rolls (jokers, bonuses) from ``turn_options``;
* :func:`turn_tiles`: the rest of the turn, :data:`TILE` states at a time: the
  final-roll block, box by box in box order, through the tie rule of
  :func:`~yahtzee_sim.exact._solver_lattice.select_tied`; the rerolls of the keep
  lattice, :func:`~._solver_lattice.expect` (children summed in ascending position,
  as the sparse product does, then one correctly rounded division) followed by
  :func:`~._solver_lattice.best_subkeep_pair`; and
  :func:`~._solver_lattice.first_roll_mean` (float64, summed roll after roll).

The lattice work goes row-wise along the states (columns), which LLVM vectorizes.
No threads (``parallel=False``): the solver forks its own workers. No ``fastmath``:
it would let LLVM reassociate sums and fuse multiply-adds, changing the last bits.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ..forkpool import ready_kernels

ready_kernels()         # numba's NumPy support loaded without scipy.linalg (see there)

_U = np.uint64

_JIT = dict(cache=True, nogil=True, error_model="numpy")


@nb.njit(**_JIT)
def turn_tables(values, variances, second, mask, u, flag, legal, n_u, n_flag, cap, upper_boxes,
                upper_points, upper_gain, lower_boxes, tz, tv, tol):
    """Per state (filled ``mask``), the values the final roll can lead to, from the dense tables.

    ``v0c`` (U, B) the scratch (0 points) value of each legal box (-inf otherwise) less
    ``c``, the best of them (``v0 - c[:, None]`` of the NumPy path: the same subtraction,
    made here where ``v0`` is at hand), ``var0`` their variances (0 when not legal), ``q0`` the
    variance of the first box within ``tol`` of ``c``; ``w5``, ``wv5`` (U, B) an upper
    box's value (relative to ``c``) and variance with five dice of its face (-inf and 0
    elsewhere). Fills the candidate tables ``tz``, ``tv`` of :func:`turn_tiles`
    (``tz``: relative to ``c``; cast to their dtype): upper box ``j`` with ``k`` dice
    of its face at row ``k * n_upper + j``, then each lower box's scratch value.

    The scratch values and their best come state by state; the candidate tables then
    row by row, each row's states in turn: a row of ``tz`` is written along its length,
    where a state's 45 rows written down a column touched 45 lines of each table at once
    (``yatzy``: 129 against 168 ns a state; the same operations on the same numbers); an
    upper box's counts 1..5 a state at a time (127 against 142 ns a state in chunks of
    4,352).
    """
    n, n_boxes = legal.shape
    n_up = len(upper_boxes)
    n_low = len(lower_boxes)
    n_cnt = upper_points.shape[0]
    v0 = np.empty((n, n_boxes))
    var0 = np.zeros((n, n_boxes))
    c = np.empty(n)
    q0 = np.zeros(n)
    w5 = np.full((n, n_boxes), -np.inf)
    wv5 = np.zeros((n, n_boxes))
    one = np.int64(1)
    for i in range(n):
        best = -np.inf
        for b in range(n_boxes):
            if legal[i, b]:
                idx = ((mask[i] | (one << b)) * n_u + u[i]) * n_flag + flag[i]
                v0[i, b] = values[idx]
                if second:
                    var0[i, b] = variances[idx]
            else:
                v0[i, b] = -np.inf
            best = max(best, v0[i, b])
        c[i] = best
        if second:
            for b in range(n_boxes):
                if v0[i, b] >= best - tol:
                    q0[i] = var0[i, b]
                    break
    # each box's scratch value: the upper boxes' rows 0..n_up-1 (no die of the face),
    # then the lower boxes' after the upper boxes' counts
    for r0 in range(n_up + n_low):
        if r0 < n_up:
            b = upper_boxes[r0]
            r = r0
        else:
            b = lower_boxes[r0 - n_up]
            r = n_cnt * n_up + r0 - n_up
        for i in range(n):
            tz[r, i] = v0[i, b] - c[i] if legal[i, b] else -np.inf
            if second:
                tv[r, i] = var0[i, b]
    for i in range(n):
        for b in range(n_boxes):
            v0[i, b] -= c[i]        # -inf stays -inf
    # each upper box with k = 1.. dice of its face: its points and bonus, and the next
    # state; a state's counts one after another (its next card's row of the dense table
    # read once), each count's row of tz along its length
    for j in range(n_up):
        b = upper_boxes[j]
        bit = one << b
        for i in range(n):
            if legal[i, b]:
                base = (mask[i] | bit) * n_u
                ui = u[i]
                ci = c[i]
                for k in range(1, n_cnt):
                    idx = (base + min(ui + upper_points[k, j], cap)) * n_flag + flag[i]
                    wk = (upper_gain[k, ui, j] + values[idx]) - ci
                    tz[k * n_up + j, i] = wk
                    if second:
                        tv[k * n_up + j, i] = variances[idx]
                w5[i, b] = wk                   # five dice of the face (w5, wv5: -inf, 0 elsewhere)
                if second:
                    wv5[i, b] = variances[idx]
            else:
                for k in range(1, n_cnt):
                    tz[k * n_up + j, i] = -np.inf
                    if second:
                        tv[k * n_up + j, i] = 0.0
    return v0, c, var0, w5, wv5, q0


@nb.njit(**_JIT)
def five_rows(legal5, sc5, bonus5, ginv, v0c, w5, wv5, var0, v1, var1, lower, five, second, tol):
    """(k5, U) values relative to the best scratch, and second moments, of the
    five-of-a-kind rolls: :func:`~.space._five_rows`'s loop, state by state.

    A box's candidate: a lower box its score plus its scratch value ``v0c``, an upper
    box its count-5 value ``w5`` if it scores, else its scratch value; the
    five-of-a-kind box scoring its full value (``five >= 0``: the flag matters) the
    next state with the flag set, ``v1``. The value is the exact max plus the bonus;
    the box followed is the first within ``tol`` of the max.

    The states of a group (``ginv``: one (card, flag)) share their legal boxes and
    scores, so each (group, roll) first lists its legal boxes in box order with how
    each candidate is made; a state then meets only those (about half the boxes in
    the middle of a game), without the tests of the illegal ones: 40% less CPU on
    ``yatzy`` than a loop over every box, the same floating-point operations in the
    same order (an illegal box's candidate, -inf, changed neither the max nor the
    first box within ``tol`` of it).
    """
    n, n_boxes = v0c.shape
    n_g, k5 = sc5.shape[0], sc5.shape[1]
    z5 = np.empty((k5, n))
    q5 = np.empty((k5, n))
    # per (group, roll): the legal boxes in box order, their scores and how the
    # candidate is made: 0 the five box full (v1), 1 a lower box (v0c + score),
    # 2 an upper box that scores (w5), 3 an upper box that does not (v0c)
    cnt = np.zeros((n_g, k5), dtype=np.int64)
    lbox = np.empty((n_g, k5, n_boxes), dtype=np.int64)
    lkind = np.empty((n_g, k5, n_boxes), dtype=np.int64)
    lsc = np.empty((n_g, k5, n_boxes))
    for g in range(n_g):
        for j in range(k5):
            m = 0
            for b in range(n_boxes):
                if legal5[g, j, b]:
                    sc = sc5[g, j, b]
                    lbox[g, j, m] = b
                    lsc[g, j, m] = sc
                    if b == five and sc > 0:
                        lkind[g, j, m] = 0
                    elif lower[b]:
                        lkind[g, j, m] = 1
                    elif sc > 0:
                        lkind[g, j, m] = 2
                    else:
                        lkind[g, j, m] = 3
                    m += 1
            cnt[g, j] = m
    cand = np.empty(n_boxes)
    for i in range(n):
        g = ginv[i]
        for j in range(k5):
            best = -np.inf
            c = cnt[g, j]
            for m in range(c):
                b = lbox[g, j, m]
                kind = lkind[g, j, m]
                if kind == 0:
                    v = lsc[g, j, m] + v1[i]
                elif kind == 1:
                    v = v0c[i, b] + lsc[g, j, m]
                elif kind == 2:
                    v = w5[i, b]
                else:
                    v = v0c[i, b]
                cand[m] = v
                best = max(best, v)
            z5[j, i] = best + bonus5[g, j]
            if second:
                if c == 0:          # no legal box (never in a solve): as the loop over every box
                    q5[j, i] = np.inf
                    continue
                pick = 0
                for m in range(c):
                    if cand[m] >= best - tol:
                        pick = m
                        break
                zf = cand[pick] + bonus5[g, j]
                b = lbox[g, j, pick]
                kind = lkind[g, j, pick]
                if kind == 0:
                    var = var1[i]
                elif kind == 2:
                    var = wv5[i, b]
                else:
                    var = var0[i, b]
                q5[j, i] = zf * zf + var
    return z5, q5


TILE = 128
"""Columns (states) :func:`turn_tiles` carries through a whole turn at once: the tile's
lattice (moments x keeps x columns: 0.47 MB for five dice in float32, 0.95 MB for six)
stays in a core's second-level cache (2 MB here) from the final roll to the first
roll's mean, where the chunk-wide lattice of separate kernels (3.7 MB for 1000
``yatzy`` states, written and read back by each kernel) went out to the third-level
cache and back. Measured on ``yatzy`` (benchmarks/RESULTS.md): 16 or 32 columns are
slower (LLVM does not vectorize rows that short: it cannot tell a keep's row from its
children's), 128 and 256 alike."""


@nb.njit(**_JIT)
def _reroll_tile(buf, second, level_start, child_ptr, child_pos, faces, par_ptr, par_pos, tol):
    """One reroll of one tile's lattice ``buf`` (moments, keeps, :data:`TILE`) in place:
    the expectation of every keep (downwards: from its children, one die more), then
    its best sub-keep (upwards: from its parents, one die fewer), element by element
    the operations of the row-wide NumPy passes (children summed in ascending
    position, then one division; the parents in slot order through the tie rule),
    each result kept in a register while its children or parents are read. Indices
    are unsigned: with signed ones numba adds a negative-index test to every access,
    and LLVM no longer vectorizes the loops."""
    _expect_tile(buf, second, level_start, child_ptr, child_pos, faces)
    _subkeep_tile(buf, second, level_start, par_ptr, par_pos, tol)


@nb.njit(**_JIT)
def _expect_tile(buf, second, level_start, child_ptr, child_pos, faces):
    """The first half of :func:`_reroll_tile`: every keep's expectation (moments)."""
    n_keeps = level_start[len(level_start) - 1]
    size = _U(n_keeps * TILE)
    zero = faces - faces                       # 0 in the work's dtype
    n_mom = 2 if second else 1
    for k in range(level_start[len(level_start) - 2] - 1, -1, -1):
        e0 = child_ptr[k]
        n_child = child_ptr[k + 1] - e0
        for m in range(n_mom):
            base = _U(m) * size
            dst = base + _U(k * TILE)
            if n_child == 6:
                s0 = base + _U(child_pos[e0] * TILE)
                s1 = base + _U(child_pos[e0 + 1] * TILE)
                s2 = base + _U(child_pos[e0 + 2] * TILE)
                s3 = base + _U(child_pos[e0 + 3] * TILE)
                s4 = base + _U(child_pos[e0 + 4] * TILE)
                s5 = base + _U(child_pos[e0 + 5] * TILE)
                for t in range(TILE):
                    i = _U(t)
                    acc = zero + buf[s0 + i]
                    acc += buf[s1 + i]
                    acc += buf[s2 + i]
                    acc += buf[s3 + i]
                    acc += buf[s4 + i]
                    acc += buf[s5 + i]
                    buf[dst + i] = acc / faces
            else:
                for t in range(TILE):
                    buf[dst + _U(t)] = zero
                for e in range(e0, e0 + n_child):
                    src = base + _U(child_pos[e] * TILE)
                    for t in range(TILE):
                        i = _U(t)
                        buf[dst + i] += buf[src + i]
                for t in range(TILE):
                    i = _U(t)
                    buf[dst + i] /= faces


@nb.njit(**_JIT)
def _subkeep_tile(buf, second, level_start, par_ptr, par_pos, tol):
    """The second half of :func:`_reroll_tile`: every keep's best sub-keep."""
    n_keeps = level_start[len(level_start) - 1]
    size = _U(n_keeps * TILE)
    for k in range(level_start[1], n_keeps):
        dst = _U(k * TILE)
        e = par_ptr[k]
        end = par_ptr[k + 1]
        while e < end:
            if second and e + 1 < end:     # two parents in one pass (select_tied twice)
                s0 = _U(par_pos[e] * TILE)
                s1 = _U(par_pos[e + 1] * TILE)
                for t in range(TILE):
                    i = _U(t)
                    zi = buf[dst + i]
                    a = buf[size + dst + i]
                    ci = buf[s0 + i]
                    b = buf[size + s0 + i]
                    a = b if zi + tol < ci else a
                    zi = zi if zi >= ci else ci
                    ci = buf[s1 + i]
                    b = buf[size + s1 + i]
                    a = b if zi + tol < ci else a
                    zi = zi if zi >= ci else ci
                    buf[size + dst + i] = a
                    buf[dst + i] = zi
                e += 2
            elif second:
                src = _U(par_pos[e] * TILE)
                for t in range(TILE):
                    i = _U(t)
                    zi = buf[dst + i]
                    ci = buf[src + i]
                    a = buf[size + dst + i]
                    b = buf[size + src + i]
                    buf[size + dst + i] = b if zi + tol < ci else a
                    buf[dst + i] = zi if zi >= ci else ci
                e += 1
            else:
                src = _U(par_pos[e] * TILE)
                for t in range(TILE):
                    i = _U(t)
                    zi = buf[dst + i]
                    ci = buf[src + i]
                    buf[dst + i] = zi if zi >= ci else ci
                e += 1


@nb.njit(**_JIT)
def _final_block_tile(buf, second, tzf, tvf, q0, legal, j0, w, use, row_ptr, ent_row, ent_add, ent_box,
                      special, z5, q5, rb0, n_rows, size, width, tol, zero):
    """One tile's final-roll block in ``buf`` (columns ``j0 .. j0 + w``), as :func:`turn_tiles`
    describes it: the boxes no state of the tile may use skipped, the five-of-a-kind rows
    ``special`` from ``z5`` (``q5``)."""
    col = _U(j0)
    n_boxes = legal.shape[1]
    for b in range(n_boxes):
        use[b] = False
    for t in range(w):
        for b in range(n_boxes):
            if legal[j0 + t, b]:
                use[b] = True
    for r in range(n_rows):
        row = _U((rb0 + r) * TILE)
        for t in range(TILE):
            buf[row + _U(t)] = zero
        if second:
            for t in range(TILE):
                buf[size + row + _U(t)] = q0[col + _U(t)]
        for e in range(row_ptr[r], row_ptr[r + 1]):
            if not use[ent_box[e]]:
                continue
            add = ent_add[e]
            src = _U(ent_row[e]) * width + col
            if second:
                for t in range(TILE):
                    i = _U(t)
                    cz = add + tzf[src + i]
                    cq = cz * cz + tvf[src + i]
                    zi = buf[row + i]
                    a = buf[size + row + i]
                    buf[size + row + i] = cq if zi + tol < cz else a
                    buf[row + i] = zi if zi >= cz else cz
            else:
                for t in range(TILE):
                    i = _U(t)
                    cz = add + tzf[src + i]
                    zi = buf[row + i]
                    buf[row + i] = zi if zi >= cz else cz
    for s in range(len(special)):
        row = _U((rb0 + special[s]) * TILE)
        for t in range(w):
            buf[row + _U(t)] = z5[s, j0 + t]
            if second:
                buf[size + row + _U(t)] = q5[s, j0 + t]


@nb.njit(**_JIT)
def turn_tiles(tz, tv, q0, second, row_ptr, ent_row, ent_add, ent_box, legal, special, z5, q5, n_rerolls,
               level_start, child_ptr, child_pos, faces, par_ptr, par_pos, tol, roll_mult,
               n_outcomes, ez, eq):
    """The rest of a turn of a chunk of n states, :data:`TILE` columns at a time, each
    tile's lattice carried from the final roll to the first roll's mean in the cache.

    Final roll, relative to the best scratch: every roll-block row starts at 0 with
    second moment ``q0``, then meets its boxes ``row_ptr[r]:row_ptr[r+1]`` in box
    order: candidate mean ``cz = ent_add[e] + tz[ent_row[e]]`` and second moment ``cz *
    cz + tv[ent_row[e]]``, followed only if better than the best so far by more than
    ``tol`` (:func:`~._solver_lattice.select_tied` tests the sign of ``(z + tol) -
    cz``; a rounded difference of finite floats is negative exactly when the first is
    the smaller, so ``z + tol < cz`` is the same test, and it vectorizes); the mean is
    the exact maximum. An entry's box (``ent_box``) that no state of the tile may use
    (``legal`` (n, B)) is skipped: its candidates are all -inf, which change neither
    the mean nor the box followed. Rows ``special`` (five of a kind) are ``z5``, ``q5``
    (k5, n).
    Then ``n_rerolls`` rerolls (:func:`_reroll_tile`) and the mean over the first roll
    in float64, roll after roll (as NumPy reduces a C-contiguous array over its first
    axis), into ``ez``, ``eq``.

    ``tz``, ``tv`` (rows, P), ``q0`` (P,), ``ez``, ``eq`` (P,) have P columns, a multiple
    of :data:`TILE`: the chunk's n and a padding (finite, computed, then ignored).
    """
    n_tab, n_pad = tz.shape
    n = z5.shape[1]
    n_keeps = level_start[len(level_start) - 1]
    rb0 = level_start[len(level_start) - 2]
    n_rows = n_keeps - rb0
    n_mom = 2 if second else 1
    buf = np.empty(n_mom * n_keeps * TILE, dtype=tz.dtype)
    size = _U(n_keeps * TILE)
    acc = np.empty(TILE)
    zero = faces - faces
    tzf = tz.reshape(-1)
    tvf = tv.reshape(-1)
    width = _U(n_pad)
    n_boxes = legal.shape[1]
    use = np.empty(n_boxes, dtype=np.bool_)
    for j0 in range(0, n_pad, TILE):
        col = _U(j0)
        w = min(TILE, n - j0)
        _final_block_tile(buf, second, tzf, tvf, q0, legal, j0, w, use, row_ptr, ent_row, ent_add, ent_box,
                          special, z5, q5, rb0, n_rows, size, width, tol, zero)
        for _ in range(n_rerolls):
            _reroll_tile(buf, second, level_start, child_ptr, child_pos, faces, par_ptr, par_pos, tol)
        for m in range(n_mom):
            base = _U(m) * size
            for t in range(TILE):
                acc[t] = 0.0
            for r in range(n_rows):
                mult = roll_mult[r]
                row = base + _U((rb0 + r) * TILE)
                for t in range(TILE):
                    acc[t] += np.float64(buf[row + _U(t)]) * mult
            out = ez if m == 0 else eq
            for t in range(TILE):
                out[col + _U(t)] = acc[t] / n_outcomes


@nb.njit(**_JIT)
def turn_keep_tiles(tz, row_ptr, ent_row, ent_add, ent_box, legal, special, z5, n_rerolls, level_start,
                    child_ptr, child_pos, faces, par_ptr, par_pos, keep_values):
    """The keep values of a decision table's build (:func:`~.space.turn_values` with
    ``plan="keeps"``, means only), :data:`TILE` states at a time: the final-roll block
    as :func:`turn_tiles` makes it, then per reroll ``j`` (``0 .. n_rerolls - 1``) the
    expectation of every keep, copied to ``keep_values[j]`` (K, P) before the best
    sub-keeps are taken (not after the last): the floats of the NumPy path's
    ``z`` snapshots, the operations of :func:`_reroll_tile` in the same order."""
    n = z5.shape[1]
    n_pad = tz.shape[1]
    n_keeps = level_start[len(level_start) - 1]
    rb0 = level_start[len(level_start) - 2]
    buf = np.empty(n_keeps * TILE, dtype=tz.dtype)
    tzf = tz.reshape(-1)
    use = np.empty(legal.shape[1], dtype=np.bool_)
    for j0 in range(0, n_pad, TILE):
        _final_block_tile(buf, False, tzf, tzf, tzf, legal, j0, min(TILE, n - j0), use, row_ptr, ent_row,
                          ent_add, ent_box, special, z5, z5, rb0, n_keeps - rb0, _U(n_keeps * TILE),
                          _U(n_pad), faces, faces - faces)    # means only: no moments, no tie rule (tol)
        for j in range(n_rerolls):
            _expect_tile(buf, False, level_start, child_ptr, child_pos, faces)
            for k in range(n_keeps):
                row = _U(k * TILE)
                for t in range(TILE):
                    keep_values[j, k, _U(j0) + _U(t)] = buf[row + _U(t)]
            if j < n_rerolls - 1:
                _subkeep_tile(buf, False, level_start, par_ptr, par_pos, faces)


# -- compiling ahead, on both cores --------------------------------------------------------
KERNEL_NAMES = ("turn_tables", "five_rows", "turn_tiles")
"""The kernels, in the order a turn calls them."""

LARGEST = "turn_tiles"
"""The kernel whose compilation takes longest (most of the CPU seconds of all three):
a forked process compiles it while this one compiles the others."""


def signatures(dtype) -> dict:
    """The argument types each kernel is called with for work in ``dtype`` (what
    :func:`~.space._turn_values_compiled` passes; ``tests/test_solver_kernels.py``
    checks that a solve compiles exactly these).

    >>> sorted(signatures(np.float32)) == sorted(KERNEL_NAMES)
    True
    """
    t = nb.from_dtype(np.dtype(dtype))
    f64, i64, b = nb.float64, nb.int64, nb.boolean

    def a(ty, nd, readonly=False):
        return nb.types.Array(ty, nd, "C", readonly=readonly)

    return {
        "turn_tables": (a(f64, 1), a(f64, 1), b, a(i64, 1), a(i64, 1), a(i64, 1), a(b, 2), i64, i64, i64,
                        a(i64, 1), a(i64, 2), a(i64, 3), a(i64, 1), a(t, 2), a(t, 2), f64),
        "five_rows": (a(b, 3), a(nb.int16, 3), a(f64, 2), a(i64, 1), a(f64, 2), a(f64, 2), a(f64, 2), a(f64, 2),
                      a(f64, 1), a(f64, 1), a(b, 1), i64, b, f64),
        "turn_tiles": (a(t, 2), a(t, 2), a(t, 1), b, a(i64, 1), a(i64, 1), a(t, 1), a(i64, 1), a(b, 2),
                       a(i64, 1), a(t, 2), a(t, 2), i64, a(i64, 1), a(i64, 1), a(i64, 1), t, a(i64, 1),
                       a(i64, 1), t, a(f64, 1, readonly=True), f64, a(f64, 1), a(f64, 1)),
    }


def _compile(name: str, sig) -> None:
    globals()[name].compile(sig)      # loads numba's cache file if it has it, else compiles and stores


def precompile(dtype, workers: int = 2) -> None:
    """Compile (or load from numba's cache) every kernel for work in ``dtype`` before the
    first turn. The first time on a machine, a forked process compiles the largest
    kernel while this one compiles the others, then this one loads it from numba's
    cache: the first solve after an install waits for the longest compilation, not
    for their sum. Only the machine code's creation is split; the code is the same.

    >>> precompile(np.float64, workers=1)
    >>> len(turn_tiles.signatures) >= 1
    True
    """
    from ..forkpool import compile_beside

    sigs = signatures(dtype)
    todo = [n for n in KERNEL_NAMES if tuple(sigs[n]) not in globals()[n].overloads]
    if not todo:
        return
    beside = None
    if workers > 1 and LARGEST in todo and len(todo) > 1:
        # started only when numba's cache lacks it (else loading it here is quicker)
        beside = compile_beside(lambda: _compile(LARGEST, sigs[LARGEST]), kernels=(globals()[LARGEST],))
    try:
        for name in todo:
            if name != LARGEST or beside is None or beside.pid is None:
                _compile(name, sigs[name])
    finally:
        if beside is not None:
            beside.wait()
    if beside is not None and beside.pid is not None:
        _compile(LARGEST, sigs[LARGEST])     # from the child's cache file (compiled here if it failed)
