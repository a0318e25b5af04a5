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
against NumPy's own draw once per process before it trusts it.

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
    of it), into ``out`` (n, throws) uint16; returns the bytes used, or -1."""
    flat = out.reshape(-1)
    total = flat.shape[0]
    if total == 0:
        return 0
    scale = np.ones(n_dice, dtype=np.int64)
    for k in range(1, n_dice):
        scale[k] = scale[k - 1] * n_faces
    i = 0
    k = 0
    code = np.int64(0)
    for p in range(raw.shape[0]):       # byte by byte: a rejected byte (rare) is skipped
        m = np.int64(raw[p]) * n_faces
        if (m & 255) >= threshold:
            code += (m >> 8) * scale[k]
            k += 1
            if k == n_dice:
                flat[i] = code
                i += 1
                if i == total:
                    return p + 1
                k = 0
                code = 0
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
def play_raw_blocks(raw, block, n, n_faces, threshold, width, n_dice, n_rolls,
                    prefix, first_roll, key_to_roll, sub_key, sub_missing,
                    row_base, row_pid, row_pat, n_u, n_flag, keeps, boxes, served, sboxes,
                    first_table, later_table, is_upper, five_face,
                    special, five_box, match_col, sp_points, sp_bonus,
                    filled, box_scores, fill_turn, upper_total, five_bonus_count, five_count,
                    five_box_full, served_five_count, count_served, ok):
    """Games 0..n-1 of seed blocks of ``block`` games, block i's dice drawn from the raw
    bytes ``raw[i]`` (:func:`decode_codes`, ``width`` throws per game), played from fresh
    cards (:func:`play_games`) a tile of blocks at a time. ``ok[i]`` is set False for a
    block whose bytes ran out (its games are not played: the caller draws more).
    ``served_five_count`` has n entries even where it is not counted (``count_served``).
    Returns as :func:`play_games` (game numbers counted from 0)."""
    rows = max(block, (TILE // block) * block)
    buf = np.empty((rows, width), dtype=np.uint16)
    run_lo = 0
    run = 0                     # games decoded into buf, from game run_lo on
    n_blocks = raw.shape[0]
    for i in range(n_blocks + 1):
        lo = i * block
        m = min(block, n - lo) if i < n_blocks else 0
        if m > 0:
            if run == 0:
                run_lo = lo
            if decode_codes(raw[i], n_faces, threshold, n_dice, buf[run:run + m]) < 0:
                ok[i] = False
                m = 0
            else:
                ok[i] = True
                run += m
        if run > 0 and (m < block or run + block > rows):      # a short block, a gap, or buf full
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
        if m <= 0 and i < n_blocks and lo >= n:
            break
    return -1
