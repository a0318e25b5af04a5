"""The compiled twin of the lean table loop (:mod:`yahtzee_sim.tableplay`).

The NumPy loop steps every game of a chunk through one turn at a time, a dozen passes
over (games,) arrays per turn; this loop plays one game at a time, its whole card in
registers, the decision table read once per decision. It makes the same decisions from
the same dice with the same integer arithmetic (tested game by game against the NumPy
loop), and writes the same card, counters and bonuses.

It also reads the dice straight from the block generator's raw 64-bit outputs
(:func:`decode_dice`): NumPy's ``Generator.integers(1, F + 1, dtype=uint8)`` takes the
bytes of the generator's 32-bit draws, low byte first (and a fresh PCG64 hands out the
low half of each 64-bit output before its high half), so its byte stream is the raw
outputs' little-endian bytes; each die is ``1 + (byte * F) >> 8``, a byte rejected
when ``(byte * F) & 255`` falls below ``(256 - F) % F`` (Lemire's method, as NumPy
does it). The same dice, a fifth of the time: :mod:`yahtzee_sim.tableplay` checks this
against NumPy's own draw once per process before it trusts it. The raw outputs
themselves come from PCG64 run here (:func:`pcg64_fill`, from each block's starting
state), a block at a time into a buffer that stays in cache, also checked once per
process against ``PCG64.random_raw``.

numba compiles it once per machine (``cache=True``: later processes load the machine
code); this module imports numba at its top, so :mod:`yahtzee_sim.tableplay` imports
it inside the functions that use it and ``import yahtzee_sim`` stays quick.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, i, j):
    """Ask the processor for the cache line of ``arr[i, j]`` (2-D) without waiting for it
    (LLVM's ``prefetch``): a loop of these over a tile, then a loop of the loads, keeps
    twice as many of the table's lines on their way as the loads alone."""
    sig = types.void(arr, i, j)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        idx = [context.cast(builder, args[1], signature.args[1], types.intp),
               context.cast(builder, args[2], signature.args[2], types.intp)]
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, idx, wraparound=False)
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [ptr.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        builder.call(fn, [ptr, i32(0), i32(1), i32(1)])       # read, low locality, data
        return context.get_dummy_value()
    return sig, codegen


PCG64_MULTIPLIER = 0x2360ED051FC65DA44385DF649FCCF645
"""The 128-bit multiplier of NumPy's ``PCG64`` (its ``PCG_DEFAULT_MULTIPLIER_128``)."""

_LANES = 4
"""Outputs made side by side by :func:`pcg64_fill`: a step waits for the one before
(a 128-bit multiply), so four interleaved streams, each ``_LANES`` steps at a time, keep
the multiplier busy."""

_M4 = PCG64_MULTIPLIER ** _LANES % (1 << 128)                     # ``_LANES`` steps at once:
_C4 = sum(PCG64_MULTIPLIER ** k for k in range(_LANES)) % (1 << 128)   # state * _M4 + inc * _C4
_MASK64 = (1 << 64) - 1
# the constants in 64-bit halves (numba's globals stop at 64 bits)
_M_LO, _M_HI = PCG64_MULTIPLIER & _MASK64, PCG64_MULTIPLIER >> 64
_M4_LO, _M4_HI = _M4 & _MASK64, _M4 >> 64
_C4_LO, _C4_HI = _C4 & _MASK64, _C4 >> 64


@intrinsic
def _lcg(typingctx, lo, hi, mul_lo, mul_hi, add_lo, add_hi):
    """``x * mul + add`` mod 2**128, each number in 64-bit halves (LLVM's i128: numba has
    no 128-bit integer); returns the (low, high) halves."""
    u64 = types.uint64
    sig = types.UniTuple(u64, 2)(u64, u64, u64, u64, u64, u64)

    def codegen(context, builder, signature, args):
        i128 = ir.IntType(128)
        sixty_four = ir.Constant(i128, 64)

        def join(low, high):
            return builder.or_(builder.shl(builder.zext(high, i128), sixty_four), builder.zext(low, i128))
        new = builder.add(builder.mul(join(args[0], args[1]), join(args[2], args[3])), join(args[4], args[5]))
        i64 = ir.IntType(64)
        halves = [builder.trunc(new, i64), builder.trunc(builder.lshr(new, sixty_four), i64)]
        return context.make_tuple(builder, signature.return_type, halves)
    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _xsl_rr(lo, hi):
    """PCG64's output of a state: its two halves xor-ed, rotated right by the top 6 bits."""
    x = hi ^ lo
    rot = hi >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@njit(cache=True, nogil=True)
def pcg64_fill(start, out):
    """Fill ``out`` (uint64) with the raw outputs of NumPy's ``PCG64`` from the state
    ``start`` = (state low, state high, increment low, increment high) in 64-bit halves,
    as ``PCG64.random_raw`` gives them (a step, then :func:`_xsl_rr`), four streams
    side by side (:data:`_LANES`); ``tableplay`` checks it against ``random_raw`` once
    per process."""
    lo, hi, inc_lo, inc_hi = start[0], start[1], start[2], start[3]
    m_lo, m_hi = np.uint64(_M_LO), np.uint64(_M_HI)
    zero = np.uint64(0)
    n = out.shape[0]
    head = min(n, _LANES)
    s0l, s0h = _lcg(lo, hi, m_lo, m_hi, inc_lo, inc_hi)        # the first four states
    s1l, s1h = _lcg(s0l, s0h, m_lo, m_hi, inc_lo, inc_hi)
    s2l, s2h = _lcg(s1l, s1h, m_lo, m_hi, inc_lo, inc_hi)
    s3l, s3h = _lcg(s2l, s2h, m_lo, m_hi, inc_lo, inc_hi)
    if head < _LANES:
        for q in range(head):
            lo, hi = _lcg(lo, hi, m_lo, m_hi, inc_lo, inc_hi)
            out[q] = _xsl_rr(lo, hi)
        return
    a_lo, a_hi = np.uint64(_M4_LO), np.uint64(_M4_HI)
    c_lo, c_hi = _lcg(inc_lo, inc_hi, np.uint64(_C4_LO), np.uint64(_C4_HI), zero, zero)
    q = 0
    while q + _LANES <= n:
        out[q] = _xsl_rr(s0l, s0h)
        out[q + 1] = _xsl_rr(s1l, s1h)
        out[q + 2] = _xsl_rr(s2l, s2h)
        out[q + 3] = _xsl_rr(s3l, s3h)
        s0l, s0h = _lcg(s0l, s0h, a_lo, a_hi, c_lo, c_hi)
        s1l, s1h = _lcg(s1l, s1h, a_lo, a_hi, c_lo, c_hi)
        s2l, s2h = _lcg(s2l, s2h, a_lo, a_hi, c_lo, c_hi)
        s3l, s3h = _lcg(s3l, s3h, a_lo, a_hi, c_lo, c_hi)
        q += _LANES
    if q < n:
        out[q] = _xsl_rr(s0l, s0h)
    if q + 1 < n:
        out[q + 1] = _xsl_rr(s1l, s1h)
    if q + 2 < n:
        out[q + 2] = _xsl_rr(s2l, s2h)


@njit(cache=True, nogil=True)
def decode_dice(raw, n_faces, threshold, out):
    """Fill ``out`` (n, m) uint8 with dice 1..F drawn from the byte stream ``raw`` (uint8)
    as ``Generator.integers`` draws them (the module docstring); returns the bytes used,
    or -1 if the stream ran out first (``out`` is then incomplete)."""
    flat = out.reshape(-1)
    p = 0
    n_bytes = raw.shape[0]
    for i in range(flat.shape[0]):
        while True:
            if p >= n_bytes:
                return -1
            m = np.int64(raw[p]) * n_faces
            p += 1
            if (m & 255) >= threshold:
                break
        flat[i] = 1 + (m >> 8)
    return p


@njit(cache=True, nogil=True)
def decode_codes(raw, n_faces, threshold, n_dice, out):
    """As :func:`decode_dice`, each throw's ``n_dice`` dice written as one number,
    ``sum((die_k - 1) * F**k)`` (order kept: :func:`play_games` reads any first k dice
    of it), into ``out`` (n, throws) uint16; returns the bytes used, or -1.

    Five dice (most games): a throw whose next five bytes are all accepted (most: a byte
    is rejected with probability ``threshold / 256``) is read in one go, without a loop;
    the others, and other numbers of dice, byte by byte."""
    flat = out.reshape(-1)
    total = flat.shape[0]
    if total == 0:
        return 0
    if n_dice != 5:
        return _decode_bytes(raw, 0, n_faces, threshold, n_dice, flat, 0)
    n_bytes = raw.shape[0]
    f = np.int64(n_faces)
    p = 0
    for s in range(total):
        if p + 5 > n_bytes:
            return _decode_bytes(raw, p, n_faces, threshold, n_dice, flat, s)
        m0 = np.int64(raw[p]) * f
        m1 = np.int64(raw[p + 1]) * f
        m2 = np.int64(raw[p + 2]) * f
        m3 = np.int64(raw[p + 3]) * f
        m4 = np.int64(raw[p + 4]) * f
        if min(min(m0 & 255, m1 & 255), min(min(m2 & 255, m3 & 255), m4 & 255)) >= threshold:
            flat[s] = ((((m4 >> 8) * f + (m3 >> 8)) * f + (m2 >> 8)) * f + (m1 >> 8)) * f + (m0 >> 8)
            p += 5
        else:                               # a rejected byte among them: this throw byte by byte
            p = _decode_bytes(raw, p, n_faces, threshold, n_dice, flat[s:s + 1], 0)
            if p < 0:
                return -1
    return p


@njit(cache=True, nogil=True)
def _decode_bytes(raw, p, n_faces, threshold, n_dice, flat, i):
    """:func:`decode_codes` byte by byte from byte ``p``, throws ``flat[i:]``: the bytes
    used in all, or -1."""
    total = flat.shape[0]
    k = 0
    code = np.int64(0)
    scale = np.int64(1)
    for q in range(p, raw.shape[0]):    # a rejected byte (rare) is skipped
        m = np.int64(raw[q]) * n_faces
        if (m & 255) >= threshold:
            code += (m >> 8) * scale
            scale *= n_faces
            k += 1
            if k == n_dice:
                flat[i] = code
                i += 1
                if i == total:
                    return q + 1
                k = 0
                code = 0
                scale = 1
    return -1


@njit(cache=True, nogil=True)
def encode_dice(dice, n_faces, n_dice, out):
    """The throws of ``dice`` (n, throws * n_dice) uint8 as :func:`decode_codes` writes them."""
    for g in range(dice.shape[0]):
        for s in range(out.shape[1]):
            code = np.int64(0)
            scale = np.int64(1)
            for k in range(n_dice):
                code += (np.int64(dice[g, s * n_dice + k]) - 1) * scale
                scale *= n_faces
            out[g, s] = code


TILE = 4096
"""Games stepped together, turn by turn: a game's lookups depend on each other (the row,
then each keep, then the box), and the table is far larger than the caches, so one game
at a time waits on memory at every step; the games of a tile are independent, and the
processor overlaps their lookups."""


@njit(cache=True, nogil=True)
def play_games(codes, n_rolls, start_turn,
               prefix, first_roll, key_to_roll, sub_key, sub_missing,
               row_base, row_pid, row_pat, n_u, n_flag, keeps, boxes, served, sboxes,
               first_table, later_table, is_upper, five_face,
               special, five_box, match_col, sp_points, sp_bonus,
               filled, box_scores, fill_turn, upper_total, five_bonus_count, five_count,
               five_box_full, served_five_count, count_served):
    """Play ``codes`` (n, T * n_rolls) (:func:`decode_codes`), every game's T turns, from its card.

    Dice: ``prefix`` (codes, n_dice + 1) the dice tables' key of the first k dice of a
    throw, ``first_roll`` (codes,) the roll of them all, ``key_to_roll``;
    ``sub_key``/``sub_missing`` (R, W) the key and missing dice of each roll's keep at
    each position; ``row_base``, ``row_pid``, ``row_pat`` (the table's ``row_of`` in parts:
    :func:`yahtzee_sim.tableplay._row_parts`), ``n_u``, ``n_flag``, ``keeps`` (one (S, R) table per
    rerolls left 1..n_rolls - 1), ``boxes``, ``served``/``sboxes``: the decision table;
    ``first_table``/``later_table`` (R, B) a box's points on the first throw's dice and
    on a later throw's (the same table where throws do not matter); ``is_upper`` (B,);
    ``five_face`` (R,); ``special``: five-of-a-kind rolls score by ``sp_points``
    (2, 2, 2, 2, F, B) and earn ``sp_bonus`` (2, 2, 2, 2, F) indexed by [later throw,
    five box full, five box filled, the face's upper box filled, face - 1]
    (:func:`yahtzee_sim.tableplay._special_tables`, from ``RuleSet.turn_options``);
    ``five_box`` its box, ``match_col`` (F,) the upper box of each face (-1: none).

    The card's arrays are updated in place. Returns -1, or the first game found in a
    state the table has no row for (the card is then partly played)."""
    n = codes.shape[0]
    n_turns = codes.shape[1] // n_rolls
    n_boxes = first_table.shape[1]
    cap = n_u - 1
    tile = TILE
    mask = np.empty(tile, dtype=np.int64)
    upper = np.empty(tile, dtype=np.int64)
    full = np.empty(tile, dtype=np.bool_)
    roll = np.empty(tile, dtype=np.int64)
    row = np.empty(tile, dtype=np.int64)
    held = np.empty(tile, dtype=np.bool_)
    got = np.empty(tile, dtype=np.uint8)
    for lo in range(0, n, tile):
        m = min(tile, n - lo)
        for i in range(m):
            g = lo + i
            mk = np.int64(0)
            for b in range(n_boxes):
                if filled[g, b]:
                    mk |= np.int64(1) << b
            mask[i] = mk
            upper[i] = upper_total[g]
            full[i] = five_box_full[g]
        for t in range(n_turns):
            off = t * n_rolls
            for i in range(m):          # the first throw, and the state's row
                roll[i] = first_roll[codes[lo + i, off]]
                k = mask[i] * n_flag + (1 if n_flag == 2 and full[i] else 0)
                o = row_pat[row_pid[k], min(upper[i], cap)]
                row[i] = -1 if o < 0 else row_base[k] + o
                held[i] = True
            first_table_ = keeps[n_rolls - 2] if n_rolls > 1 else boxes
            for i in range(m):          # the first decision's lines, on their way
                if row[i] >= 0:
                    prefetch(first_table_, row[i], roll[i])
            for i in range(m):
                if row[i] < 0:
                    for k in range(m):
                        upper_total[lo + k] = upper[k]
                    return lo + i
            for j in range(n_rolls - 1, 0, -1):
                table = keeps[j - 1]
                so = off + n_rolls - j
                for i in range(m):          # the table's lookups in loops of their own: nothing
                    got[i] = table[row[i], roll[i]]     # but loads, many in flight at once
                for i in range(m):
                    r = roll[i]
                    pos = np.int64(got[i])
                    if served:
                        if j < n_rolls - 1 and held[i]:
                            pos = 0
                        held[i] = held[i] and pos == 0
                    r = key_to_roll[sub_key[r, pos] + prefix[codes[lo + i, so], sub_missing[r, pos]]]
                    roll[i] = r
                if j > 1:                   # the next decision's lines, on their way
                    nxt = keeps[j - 2]
                    for i in range(m):
                        prefetch(nxt, row[i], roll[i])
                else:
                    for i in range(m):
                        if served and held[i]:
                            prefetch(sboxes, row[i], roll[i])
                        else:
                            prefetch(boxes, row[i], roll[i])
            for i in range(m):
                got[i] = sboxes[row[i], roll[i]] if served and held[i] else boxes[row[i], roll[i]]
            for i in range(m):          # the box
                g = lo + i
                r = roll[i]
                first = served and held[i]
                box = np.int64(got[i])
                points = np.int64(first_table[r, box] if first else later_table[r, box])
                face = np.int64(five_face[r])
                if face > 0:
                    five_count[g] += 1
                    if first and count_served:
                        served_five_count[g] += 1
                    if special:
                        later = 0 if first else 1
                        mc = match_col[face - 1]
                        mk = mask[i]
                        five_in = 1 if (mk >> five_box) & 1 else 0
                        match_in = 1 if mc >= 0 and (mk >> mc) & 1 else 0
                        fb = 1 if full[i] else 0
                        points = np.int64(sp_points[later, fb, five_in, match_in, face - 1, box])
                        if sp_bonus[later, fb, five_in, match_in, face - 1] > 0:
                            five_bonus_count[g] += 1
                # without branches: which box a game fills is the table's, unpredictable
                upper[i] += points * is_upper[box]
                full[i] |= special and box == five_box and points > 0
                mask[i] |= np.int64(1) << box
                filled[g, box] = True
                box_scores[g, box] = points
                fill_turn[g, box] = start_turn + t + 1
        for i in range(m):
            upper_total[lo + i] = upper[i]
            five_box_full[lo + i] = full[i]
    return -1


@njit(cache=True, nogil=True)
def play_raw_blocks(starts, draws, block, n, n_faces, threshold, width, n_dice, n_rolls,
                    prefix, first_roll, key_to_roll, sub_key, sub_missing,
                    row_base, row_pid, row_pat, n_u, n_flag, keeps, boxes, served, sboxes,
                    first_table, later_table, is_upper, five_face,
                    special, five_box, match_col, sp_points, sp_bonus,
                    filled, box_scores, fill_turn, upper_total, five_bonus_count, five_count,
                    five_box_full, served_five_count, count_served):
    """Games 0..n-1 of seed blocks of ``block`` games, block i's dice drawn from the raw
    outputs of its generator (``starts[i]``: :func:`pcg64_fill`), ``draws`` of them (a
    block whose bytes run out is drawn again from its start, twice as long) decoded
    (:func:`decode_codes`, ``width`` throws per game), played from fresh cards
    (:func:`play_games`) a tile of blocks at a time. ``served_five_count`` has n entries
    even where it is not counted (``count_served``). Returns as :func:`play_games` (game
    numbers counted from 0)."""
    rows = max(block, (TILE // block) * block)
    buf = np.empty((rows, width), dtype=np.uint16)
    raw = np.empty(draws, dtype=np.uint64)          # one block's outputs at a time (in cache)
    run_lo = 0
    run = 0                     # games decoded into buf, from game run_lo on
    n_blocks = min(starts.shape[0], (n + block - 1) // block)
    for i in range(n_blocks):
        lo = i * block
        m = min(block, n - lo)
        if run == 0:
            run_lo = lo
        k = draws
        while True:
            if raw.shape[0] < k:
                raw = np.empty(k, dtype=np.uint64)
            pcg64_fill(starts[i], raw[:k])
            if decode_codes(raw[:k].view(np.uint8), n_faces, threshold, n_dice, buf[run:run + m]) >= 0:
                break
            k *= 2
        run += m
        if m < block or run + block > rows or i == n_blocks - 1:      # the last block, or buf full
            hi = run_lo + run
            bad = play_games(buf[:run], n_rolls, 0, prefix, first_roll, key_to_roll, sub_key, sub_missing,
                             row_base, row_pid, row_pat, n_u, n_flag, keeps, boxes, served, sboxes,
                             first_table, later_table, is_upper, five_face,
                             special, five_box, match_col, sp_points, sp_bonus,
                             filled[run_lo:hi], box_scores[run_lo:hi], fill_turn[run_lo:hi],
                             upper_total[run_lo:hi], five_bonus_count[run_lo:hi], five_count[run_lo:hi],
                             five_box_full[run_lo:hi], served_five_count[run_lo:hi], count_served)
            if bad >= 0:
                return run_lo + bad
            run = 0
    return -1
