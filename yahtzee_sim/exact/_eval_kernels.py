"""Compiled loops of the exact evaluations (policy values, score distributions).

Over 600 lines: every compiled loop of the evaluations in one module, so one numba
cache and one list of the pass's signatures (:func:`pass_signatures`, compiled ahead by
:func:`compile_pass`) sit beside the loops they describe.

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
def propagate(data, lo, width, start, src, dst_row, shift, p, out_lo, out_width, out_start, out):
    """Push a level's (state, points) rows through its moves; returns ``(buffer,
    length)``: the next level's data is ``buffer[:length]``, written in ``out`` (the
    buffer of a level that is done with) if it is long enough, else in a new array.

    Row s of the level stores the points ``lo[s] .. lo[s] + width[s] - 1`` from
    ``data[start[s]]``. Move i adds ``p[i]`` times row ``src[i]``, shifted by
    ``shift[i]`` points, into next row ``dst_row[i]``: a next row spans from the least
    to the most points its moves bring (``out_lo``, ``out_width``, ``out_start`` are
    filled). The moves are summed in order (each entry's sum the same floats as
    adding the moves one by one)."""
    n_next = len(out_lo)
    hi = np.empty(n_next, dtype=np.int64)
    out_lo[:] = np.iinfo(np.int64).max
    hi[:] = np.iinfo(np.int64).min
    for i in range(len(p)):
        s = src[i]
        d = dst_row[i]
        f = lo[s] + shift[i]
        if f < out_lo[d]:
            out_lo[d] = f
        if f + width[s] > hi[d]:
            hi[d] = f + width[s]
    total = 0
    for d in range(n_next):
        out_width[d] = hi[d] - out_lo[d]
        out_start[d] = total
        total += out_width[d]
    if total > len(out):
        out = np.empty(total)
    out[:total] = 0.0
    for i in range(len(p)):
        s = src[i]
        d = dst_row[i]
        w = width[s]
        b = out_start[d] + lo[s] + shift[i] - out_lo[d]
        src_row = data[start[s]:start[s] + w]       # views: the loop below vectorizes
        dst_row_ = out[b:b + w]
        q = p[i]
        for k in range(w):
            dst_row_[k] += q * src_row[k]
    return out, total


@njit(cache=True)
def push_up(y, walk, children, inv):
    """The keep lattice's one forward push, in place on ``y`` (K, W): W masses on the
    keeps (rows: :func:`~yahtzee_sim.exact.policy.forward_lattice`'s positions) go to
    the full rolls they lead to, keep by keep along ``walk`` (smaller keeps first),
    each spreading its mass evenly over ``children`` (one more die of each face).
    Every forward push of the evaluations (final-roll masses, served or not, and the
    uniform keeps' throws) is this loop."""
    n_faces = children.shape[1]
    w = y.shape[1]
    for i in range(len(walk)):
        k = walk[i]
        yk = y[k]
        for f in range(n_faces):
            yc = y[children[k, f]]
            for t in range(w):
                yc[t] += yk[t] * inv


@njit(cache=True)
def throw_masses(y, walk, children, roll_pos, out):
    """``out`` (R, W): the masses ``y`` (K, W) on the keeps, pushed to the full rolls
    (``roll_pos`` each roll's row); ``y`` is used up."""
    push_up(y, walk, children, 1.0 / children.shape[1])
    for r in range(len(roll_pos)):
        for t in range(y.shape[1]):
            out[r, t] = y[roll_pos[r], t]


LANES = 8
"""Keep plans pushed together by :func:`final_roll_masses`: the lattice walk (which keep
spreads to which) is the same for every plan, so eight plans side by side turn each
spread into one vector operation (the per-plan work is unchanged, so the same floats)."""


@njit(cache=True)
def final_roll_masses(first, plans, lookup, growing, children, roll_keep, is_five, out, out_no5):
    """Probability of each final roll of a turn under each of P keep plans.

    ``first`` (R,) the first roll's distribution; ``plans`` (J, P, R) the keep of each
    roll, ``plans[0]`` with the most rerolls left, as a position in the roll's row of
    ``lookup`` (R, S) of keep rows; ``growing``, ``children`` the lattice walk of
    :func:`push_up`; ``roll_keep`` (R,) the row of the keep holding a whole roll. Fills ``out`` (P, R) and,
    when ``out_no5`` has P rows, the part with no five of a kind (``is_five``) thrown
    at any throw of the turn.

    The plans go :data:`LANES` at a time (lane l of ``y[k]`` is plan ``p0 + l``'s mass
    on keep k), the mass with no five of a kind in the lanes after them: one walk down
    the keep lattice pushes them all.
    """
    n_keeps, n_faces = children.shape
    n_rolls = len(first)
    n_plans = out.shape[0]
    both = out_no5.shape[0] == n_plans
    inv = 1.0 / n_faces
    w = 2 * LANES if both else LANES
    x = np.zeros((n_rolls, w))
    y = np.zeros((n_keeps, w))
    for p0 in range(0, n_plans, LANES):
        n = min(LANES, n_plans - p0)
        for r in range(n_rolls):
            for t in range(LANES):
                x[r, t] = first[r]
            if both:
                for t in range(LANES):
                    x[r, LANES + t] = 0.0 if is_five[r] else first[r]
        for j in range(plans.shape[0]):
            y[:] = 0.0
            for r in range(n_rolls):
                for t in range(n):
                    k = lookup[r, plans[j, p0 + t, r]]
                    y[k, t] += x[r, t]
                    if both:
                        y[k, LANES + t] += x[r, LANES + t]
            push_up(y, growing, children, inv)
            for r in range(n_rolls):
                yr = y[roll_keep[r]]
                for t in range(w):
                    x[r, t] = yr[t]
                if both and is_five[r]:
                    for t in range(LANES):
                        x[r, LANES + t] = 0.0
        for t in range(n):
            for r in range(n_rolls):
                out[p0 + t, r] = x[r, t]
                if both:
                    out_no5[p0 + t, r] = x[r, LANES + t]


@njit(cache=True)
def _same_turn(boxes, g_inv, five_bin, c, c0):
    """States c and c0 end their turns alike: the same row group, boxes and bonus rolls."""
    if g_inv[c] != g_inv[c0]:
        return False
    for r in range(boxes.shape[2]):
        if five_bin[c, r] != five_bin[c0, r]:
            return False
        for e in range(boxes.shape[0]):
            if boxes[e, c, r] != boxes[e, c0, r]:
                return False
    return True


@njit(cache=True)
def _copy_bins(c, c0, i, out_state, out_bin, out_p, out_q, out_ns, m):
    """List for state ``c`` the bins of state ``c0`` listed from ``i`` on (a state whose
    turn is the same as an earlier one's) from ``m`` on; returns the next free position."""
    while i < m and out_state[i] == c0:
        out_state[m] = c
        out_bin[m] = out_bin[i]
        out_p[m] = out_p[i]
        out_q[m] = out_q[i]
        out_ns[m] = out_ns[i]
        m += 1
        i += 1
    return m


def _bit_table():
    """De Bruijn lookup: the position of the one set bit of ``low`` (a power of two) is
    ``_BIT_OF[(low * _DE_BRUIJN) >> 58]`` (multiplication modulo 2**64)."""
    out = np.zeros(64, dtype=np.int64)
    for i in range(64):
        out[((int(_DE_BRUIJN) << i) & (2 ** 64 - 1)) >> 58] = i
    return out


_DE_BRUIJN = np.uint64(0x03F79D71B4CB0A89)
_BIT_OF = _bit_table()


@njit(cache=True)
def _flush_bins(c, bits, acc_p, acc_q, acc_s, out_state, out_bin, out_p, out_q, out_ns, m):
    """List state ``c``'s touched bins (set in ``bits``: bin k is bit k % 64 of word
    k // 64) in rising order from ``m`` on, those with mass only, and clear them for the
    next state; returns the next free position. Shared by :func:`level_bins` and
    :func:`uniform_bins`. A scan of the bitmap's words (a few dozen), not a sort of the
    touched bins (which cost as much as summing them)."""
    for wi in range(len(bits)):
        w = bits[wi]
        if w == 0:
            continue
        bits[wi] = 0
        while w != 0:
            low = w & (np.uint64(0) - w)               # the lowest set bit
            k = wi * 64 + _BIT_OF[(low * _DE_BRUIJN) >> np.uint64(58)]
            w ^= low
            if acc_p[k] > 0:
                out_state[m] = c
                out_bin[m] = k
                out_p[m] = acc_p[k]
                out_q[m] = acc_q[k]
                out_ns[m] = acc_s[k]
                m += 1
            acc_p[k] = 0.0
            acc_q[k] = 0.0
            acc_s[k] = 0.0
    return m


@njit(cache=True)
def level_bins(n_ends, boxes, g_inv, g_scores, g_legal, plan_of, p_all, p_no5, p_ns, five_bin,
               n_pts, out_state, out_bin, out_p, out_q, out_ns, at):
    """Per state, the probability of each (box, points, bonus) bin the turn ends in,
    written as a list of moves (states in order, bins in increasing order, bins of
    probability 0 left out).

    Per ending e < ``n_ends`` of the turn (thrown dice; served dice where they score
    more): ``boxes[e]`` (C, R) the box of each final roll, ``g_scores[e]`` (G * R, B)
    the points of its row group ``g_inv[c]``, ``p_all[e]``, ``p_no5[e]``, ``p_ns[e]``
    (P, R) the final roll's probability under plan ``plan_of[c]`` and its parts with
    no five of a kind thrown and with no served five of a kind (``p_ns`` of no plans,
    (E, 0, R), where no score is served: ``out_ns`` is then left as it is); ``five_bin`` (C, R)
    1 where the roll earns a five-of-a-kind bonus. Bin ``2 * (b * n_pts + points) +
    bonus``. A state with the plan, row group, boxes and bonus rolls of an earlier one
    (upper totals that one decision-table row serves) copies that state's list. Writes
    from ``at`` on; returns the end of the list, or -1 if a box is illegal. A bin's sums run over the endings, then the rolls, in order: the same
    floats as summing the (state, bin) table roll by roll.
    """
    n_states, n_rolls = boxes.shape[1], boxes.shape[2]
    n_bins = 2 * g_scores.shape[2] * n_pts
    acc_p = np.zeros(n_bins)
    acc_q = np.zeros(n_bins)
    acc_s = np.zeros(n_bins)
    bits = np.zeros((n_bins + 63) // 64, dtype=np.uint64)
    has_ns = p_ns.shape[1] > 0        # else no served scores: out_ns is not filled
    n_plans = 0
    for c in range(n_states):
        n_plans = max(n_plans, plan_of[c] + 1)
    listed = np.full(n_plans, -1, dtype=np.int64)     # where a plan's first state's bins went
    first_of = np.empty(n_plans, dtype=np.int64)
    m = at
    for c in range(n_states):
        g = g_inv[c] * n_rolls
        p = plan_of[c]
        if listed[p] >= 0 and _same_turn(boxes, g_inv, five_bin, c, first_of[p]):
            c0 = first_of[p]                          # a state of a listed plan: its bins again
            m = _copy_bins(c, c0, listed[p], out_state, out_bin, out_p, out_q, out_ns, m)
            continue
        listed[p] = m
        first_of[p] = c
        for e in range(n_ends):
            for r in range(n_rolls):
                b = boxes[e, c, r]
                if not g_legal[g + r, b]:
                    return -1
                k = 2 * (b * n_pts + g_scores[e, g + r, b]) + five_bin[c, r]
                bits[k >> 6] |= np.uint64(1) << np.uint64(k & 63)
                acc_p[k] += p_all[e, p, r]
                acc_q[k] += p_no5[e, p, r]
                if has_ns:
                    acc_s[k] += p_ns[e, p, r]
        m = _flush_bins(c, bits, acc_p, acc_q, acc_s, out_state, out_bin, out_p, out_q, out_ns, m)
    return m


@njit(cache=True)
def uniform_bins(n_ends, g_inv, g_scores, g_legal, p_all, p_no5, p_ns, five_bin, n_pts,
                 out_state, out_bin, out_p, out_q, out_ns, at):
    """:func:`level_bins` for ``random``: each final roll's probability (``p_all[e]`` (R,)
    the same in every state, and its parts) spread evenly over the roll's legal boxes.
    States of one row group with the same bonus rolls copy the first one's list."""
    n_states, n_rolls = five_bin.shape
    n_boxes = g_legal.shape[1]
    n_bins = 2 * n_boxes * n_pts
    acc_p = np.zeros(n_bins)
    acc_q = np.zeros(n_bins)
    acc_s = np.zeros(n_bins)
    bits = np.zeros((n_bins + 63) // 64, dtype=np.uint64)
    n_groups = 0
    for c in range(n_states):
        n_groups = max(n_groups, g_inv[c] + 1)
    listed = np.full(n_groups, -1, dtype=np.int64)
    first_of = np.empty(n_groups, dtype=np.int64)
    m = at
    for c in range(n_states):
        gi = g_inv[c]
        g = gi * n_rolls
        if listed[gi] >= 0:
            c0 = first_of[gi]
            same = True
            for r in range(n_rolls):
                if five_bin[c, r] != five_bin[c0, r]:
                    same = False
                    break
            if same:
                m = _copy_bins(c, c0, listed[gi], out_state, out_bin, out_p, out_q, out_ns, m)
                continue
        listed[gi] = m
        first_of[gi] = c
        for e in range(n_ends):
            for r in range(n_rolls):
                row = g + r
                n_legal = 0
                for b in range(n_boxes):
                    if g_legal[row, b]:
                        n_legal += 1
                w = 1.0 / n_legal
                a_p = p_all[e, r] * w
                a_q = p_no5[e, r] * w
                a_s = p_ns[e, r] * w
                for b in range(n_boxes):
                    if g_legal[row, b]:
                        k = 2 * (b * n_pts + g_scores[e, row, b]) + five_bin[c, r]
                        bits[k >> 6] |= np.uint64(1) << np.uint64(k & 63)
                        acc_p[k] += a_p
                        acc_q[k] += a_q
                        acc_s[k] += a_s
        m = _flush_bins(c, bits, acc_p, acc_q, acc_s, out_state, out_bin, out_p, out_q, out_ns, m)
    return m


@njit(cache=True)
def finish_moves(state, key, p, mask, u, flag, n_pts, n_u, n_flag, cap, is_upper, up_gain,
                 five_box, unit, dst, shift, nb, box, pts, five_full):
    """Each listed move's next state (flat index), points shift and parts.

    Move i leaves state ``state[i]`` (``mask``, capped upper total ``u``, ``flag``) by
    bin ``key[i]`` (``2 * (box * n_pts + points) + bonus``): the box's bit is set, an
    upper box's points raise the total (capped at ``cap``), scoring the five box
    ``five_box`` sets the flag (with ``n_flag == 2``); the stored points shift by
    ``points + upper bonus (up_gain[u, points]) + bonus * unit`` less the rise of
    the capped total. ``five_full`` (C,) gains ``p`` of each move scoring the five
    box, move by move (as :meth:`RuleSet.fills_five_box`)."""
    for i in range(len(key)):
        c = state[i]
        k = key[i]
        b5 = k & 1
        bp = k >> 1
        b = bp // n_pts
        pt = bp - b * n_pts
        u0 = u[c]
        u2 = u0
        gain = pt + b5 * unit
        if is_upper[b]:
            u2 = min(u0 + pt, cap)
            gain += up_gain[u0, pt]
        f2 = flag[c]
        if b == five_box and pt > 0:
            five_full[c] += p[i]
            if n_flag == 2:
                f2 = 1
        dst[i] = ((mask[c] | (np.int64(1) << b)) * n_u + u2) * n_flag + f2
        shift[i] = gain - (u2 - u0)
        nb[i] = b5
        box[i] = b
        pts[i] = pt


@njit(cache=True)
def next_rows(dst, row_of, seen):
    """The next level's states (increasing flat index) and each move's row among them:
    ``row_of`` (all states, -1 outside the level) is filled for them; ``seen`` scratch
    of all states, False on entry and on return."""
    n = 0
    for i in range(len(dst)):
        if not seen[dst[i]]:
            seen[dst[i]] = True
            n += 1
    flat = np.empty(n, dtype=np.int64)
    j = 0
    for f in range(len(seen)):
        if seen[f]:
            flat[j] = f
            row_of[f] = j
            seen[f] = False
            j += 1
    rows = np.empty(len(dst), dtype=np.int64)
    for i in range(len(dst)):
        rows[i] = row_of[dst[i]]
    return flat, rows


@njit(cache=True)
def push_counts(counts, drow, src, p, inc, n_next):
    """(n_next, K) P(state and count j so far) pushed through moves adding ``inc[i]`` to
    the count: per increment, ``out[drow[i], inc + j] += sum of p[i] * counts[src[i], j]``
    (each increment's sums first, as a sparse (next state, state) matrix product); an
    empty ``inc``: every move adds 0 (a probability pushed forwards, one column).

    Only over the counts reached so far (the columns of ``counts`` up to its last
    nonzero one): a product with the zeros past them adds nothing, so the sums are the
    same floats as over every column."""
    n_k = counts.shape[1]
    used = 0
    for s in range(counts.shape[0]):               # row by row: the array's order
        for j in range(n_k - 1, used - 1, -1):
            if counts[s, j] != 0.0:
                used = j + 1
                break
    out = np.zeros((n_next, n_k))
    tmp = np.zeros((n_next, used))
    top = 0
    for i in range(len(inc)):
        top = max(top, inc[i])
    for b in range(min(top, n_k - 1) + 1):
        n_j = min(used, n_k - b)
        tmp[:] = 0.0
        for i in range(len(p)):
            if len(inc) == 0 or inc[i] == b:
                d, s, q = drow[i], src[i], p[i]
                for j in range(n_j):
                    tmp[d, j] += q * counts[s, j]
        for d in range(n_next):
            for j in range(n_j):
                out[d, b + j] += tmp[d, j]
    return out


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
def lattice_expectations(out, children, inv):
    """The widget's keep expectations in place on ``out`` (K, U) in the keep lattice's
    layout (:func:`~yahtzee_sim.exact._solver_lattice.lattice`: sizes in rising order,
    full rolls last and already filled): row k < len(children) becomes the sum of its
    children's rows ``children[k]`` (one more die of each face), face by face, times
    ``inv``; the largest keeps first (the numpy loop's order of operations, so the
    same floats)."""
    n_cols = out.shape[1]
    n_faces = children.shape[1]
    for k in range(len(children) - 1, -1, -1):
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
def lattice_best_subkeep(best, arg, par_ptr, par_pos):
    """The widget's max over sub-keeps in place on ``best`` (K, U) in the lattice's
    layout, the smaller keeps first: row k's sub-keeps one die smaller are the rows
    ``par_pos[par_ptr[k]:par_ptr[k + 1]]`` (its faces in rising order); one that is
    strictly better replaces the value and the arg (the numpy loop's tie rule)."""
    n_cols = best.shape[1]
    for k in range(len(par_ptr) - 1):
        bk = best[k]
        ak = arg[k]
        for i in range(par_ptr[k], par_ptr[k + 1]):
            bp = best[par_pos[i]]
            ap = arg[par_pos[i]]
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
def lattice_best_keeps(final_values, roll_pos, children, par_ptr, par_pos, keep_at, inv, values, keeps):
    """The widget's whole plan of U positions, tile by tile of positions (so the keep
    lattice of a tile stays in cache and nothing is transposed in memory): per rerolls
    left j, ``values[j - 1]`` (U, R) the value of holding each roll and ``keeps[j - 1]``
    (U, R) its best keep (a keep index, ``keep_at`` of its position), from
    ``final_values`` (U, R); ``roll_pos`` each roll's position in the lattice. The same
    operations in the same order as :func:`lattice_expectations` then
    :func:`lattice_best_subkeep` on the transposed batch, so the same floats and ties."""
    n_pos, n_rolls = final_values.shape
    n_keeps = len(keep_at)
    tile = 128
    e = np.empty((n_keeps, tile), dtype=final_values.dtype)
    best = np.empty((n_keeps, tile), dtype=final_values.dtype)
    arg = np.empty((n_keeps, tile), dtype=np.int16)
    for lo in range(0, n_pos, tile):
        n = min(tile, n_pos - lo)
        if n < tile:                  # a last partial tile: padding columns hold zeros
            e[:] = 0
        for r in range(n_rolls):
            k = roll_pos[r]
            for t in range(n):
                e[k, t] = final_values[lo + t, r]
        for j in range(values.shape[0]):
            lattice_expectations(e, children, inv)           # expectations, largest keeps first
            for k in range(n_keeps):
                for t in range(tile):
                    best[k, t] = e[k, t]
                    arg[k, t] = keep_at[k]
            lattice_best_subkeep(best, arg, par_ptr, par_pos)   # max over sub-keeps, smallest first
            for t in range(n):
                for r in range(n_rolls):
                    k = roll_pos[r]
                    values[j, lo + t, r] = best[k, t]
                    keeps[j, lo + t, r] = arg[k, t]
            for k in range(len(children), n_keeps):          # the next stage's final values
                for t in range(tile):
                    e[k, t] = best[k, t]


@njit(cache=True)
def raise_final_values(values, boxes, worth, rows_open, row_box):
    """One box's turn in :meth:`~yahtzee_sim.strategies.lookahead.LookaheadStrategy.final_values_and_boxes`:
    in each row i that ``rows_open`` (U,) says may use the box, each roll r whose
    ``worth`` beats ``values[i, r]`` (U, R) takes it, and the box ``row_box[i]`` goes to
    ``boxes[i, r]``. Strictly greater, so on a tie the box met first keeps the roll.
    ``worth`` (1 or U, 1 or R) broadcasts as NumPy's would; float32 or float64, compared
    in the wider type and stored in ``values``'s float32: the same values and boxes as
    ``np.copyto(values, worth, where=(worth > values) & rows_open[:, None])``, in one pass
    over the rolls instead of four."""
    n_rolls = values.shape[1]
    by_row = worth.shape[0] > 1
    by_roll = worth.shape[1] > 1
    for i in range(values.shape[0]):
        if not rows_open[i]:
            continue
        w = i if by_row else 0
        b = row_box[i]
        for r in range(n_rolls):
            x = worth[w, r if by_roll else 0]
            if x > values[i, r]:
                values[i, r] = x
                boxes[i, r] = b


@njit(cache=True)
def keep_ranks(rank, keeps, out):
    """``out[i, r] = rank[r, keeps[i, r]]``: each roll's planned keep (a keep index,
    (U, R)) as its rank among the roll's sub-keeps (``rank`` (R, K)), the byte a
    lookahead strategy stores its plans in."""
    for i in range(keeps.shape[0]):
        for r in range(keeps.shape[1]):
            out[i, r] = rank[r, keeps[i, r]]


@njit(cache=True)
def served_final_roll_masses(first, plans, hold_after_first, growing, children, roll_keep,
                             is_five, out, out_s, out_no5):
    """The turn's final roll under each of P keep plans, split by whether the dice are
    still the first throw's (served scores; holding every die is not a throw).

    ``plans`` (J, P, R) the keep row of each roll, ``plans[0]`` with the most rerolls
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
    yy = np.empty((n_keeps, 2))                  # columns: all, no five of a kind thrown
    y = yy[:, 0]
    y5 = yy[:, 1]
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
            push_up(yy, growing, children, inv)
            for r in range(n_rolls):
                x[r] = y[roll_keep[r]]
                x5[r] = 0.0 if is_five[r] else y5[roll_keep[r]]
        for r in range(n_rolls):
            out[p, r] = x[r]
            out_s[p, r] = xs[r]
            out_no5[p, r] = x5[r]


PASS_KERNELS = ("final_roll_masses", "level_bins", "finish_moves", "next_rows", "propagate", "push_counts")
"""The loops of the score distribution's forward pass (and the events' one), in the order
a level calls them: what :func:`compile_pass` compiles ahead."""


def pass_signatures() -> dict:
    """The argument types (numba's) each of :data:`PASS_KERNELS` is called with in a pass
    that reads a decision table (optimal play: keep plans and boxes in bytes) on a rule
    set without served dice; other strategies' plans (indices) compile one more variant
    of ``final_roll_masses`` on first use. Read-only where the callers pass read-only
    arrays (the dice tables): a different flag is another compilation.

    >>> sorted(pass_signatures()) == sorted(PASS_KERNELS)
    True
    """
    import numba

    def ro(a):
        a.setflags(write=False)
        return a

    def i8(*shape):
        return np.zeros(shape, np.int64)

    def f8(*shape):
        return np.zeros(shape)

    def b1(*shape):
        return np.zeros(shape, np.bool_)

    n = 0                                          # a count or index: int64
    args = {
        "final_roll_masses": (ro(f8(1)), np.zeros((1, 1, 1), np.uint8), i8(1, 1), ro(i8(1)), ro(i8(1, 1)),
                              ro(i8(1)), b1(1), f8(1, 1), f8(1, 1)),
        "level_bins": (n, np.zeros((1, 1, 1), np.uint8), i8(1), np.zeros((1, 1, 1), np.int16), b1(1, 1), i8(1),
                       f8(1, 1, 1), f8(1, 1, 1), f8(1, 1, 1), np.zeros((1, 1), np.int8), n,
                       i8(1), i8(1), f8(1), f8(1), f8(1), n),
        "finish_moves": (i8(1), i8(1), f8(1), i8(1), i8(1), i8(1), n, n, n, n, ro(b1(1)), i8(1, 1), n, n,
                         i8(1), i8(1), i8(1), i8(1), i8(1), f8(1)),
        "next_rows": (i8(1), i8(1), b1(1)),
        "propagate": (f8(1), i8(1), i8(1), i8(1), i8(1), i8(1), i8(1), f8(1), i8(1), i8(1), i8(1), f8(1)),
        "push_counts": (f8(1, 1), i8(1), i8(1), f8(1), i8(1), n),
    }
    return {name: tuple(numba.typeof(a) for a in args[name]) for name in PASS_KERNELS}


def compile_pass() -> None:
    """Compile (or load from numba's cache) the loops of a score distribution's pass for
    the types of :func:`pass_signatures`: run in a forked process at the start of a
    first pass on a machine (:func:`yahtzee_sim.forkpool.compile_beside`), while the
    strategy is prepared (optimal: its solve and its decision table), so the pass only
    loads them.

    >>> compile_pass()
    """
    for name, sig in pass_signatures().items():
        globals()[name].compile(sig)
