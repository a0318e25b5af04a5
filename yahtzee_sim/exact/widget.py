"""The per-turn keep/roll "widget", vectorized over many positions at once.

Given, for U positions, the value of ending the turn with each roll (``(U, R)``),
compute the value of each roll with 1, 2, ... rerolls left and the keep that
attains it. Both steps walk the keep lattice instead of the dense keep -> roll
matrix:

* expected value of a keep = mean over the face of one more die of the keep one
  die larger (a keep of n dice is a roll), so every keep costs F additions;
* best keep of a roll = max over its sub-keeps, computed as
  ``M[k] = max(E[k], max_f M[k minus one f])``.

The rows are the keeps in the solver's layout (:func:`~._solver_lattice.lattice`:
by size, each size a block of rows, the full rolls last), the one keep-lattice
layout of the exact engine. Two things stay the widget's own, so that the
strategies keep their floats and their keeps: a keep's mean is its children's sum
(face by face) times a rounded ``1/F`` (the solver divides by ``F``), and every
choice carries its keep's index in the dice tables (``dice.keep_counts[k]``), the
first best sub-keep met (faces in rising order, a strictly better smaller keep
replaces the larger one). Positions translate to keep indices only here, at the
boundary: :func:`keep_expectations` and :func:`best_subkeep` take and give rows in
the dice tables' keep order, :func:`best_subkeep_lattice` in the layout's own.

Strategies (greedy, heuristic, optimal) call :func:`best_keeps` once per batch of
distinct positions.

>>> import numpy as np
>>> from yahtzee_sim.dice import dice_tables
>>> from yahtzee_sim.patterns import pattern_table
>>> d = dice_tables()
>>> five = pattern_table(d)["five_of_a_kind"].to_numpy(float)[None, :]
>>> plan = best_keeps(d, five, rolls_left=2)
>>> round(float(plan.values[2][0] @ d.first_roll_prob), 6)   # best chance of five of a kind
0.046029
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..dice import DiceTables
from ._solver_lattice import Lattice, lattice, sweep_pairs


@dataclass(frozen=True)
class KeepPlan:
    """``values[j]`` (U, R): value of holding roll r with j rerolls left (j = 0 is
    the final value); ``keeps[j]`` (U, R): the best keep index with j rerolls left
    (``keeps[0]`` is unused and None)."""

    values: list
    keeps: list


COMPILED_COLUMNS = 256
"""Batches of at least this many positions go through the compiled loops of
:mod:`yahtzee_sim.exact._eval_kernels` (the same operations in the same order, so
the same floats and the same ties; twice as fast for greedy's and heuristic's plans);
smaller ones through numpy, without importing numba (about 0.25 s to load once per
process: a run of a few hundred games does not pay it)."""


@functools.lru_cache(maxsize=None)
def _walk(lat: Lattice) -> tuple:
    """The lattice as the compiled loops walk it: ``children`` (K', F) the positions
    one die larger of the positions ``0 .. K' - 1`` (every keep below a full roll);
    ``par_pos[par_ptr[k]:par_ptr[k + 1]]`` the positions one die smaller of position
    k, its faces in rising order (the solver's parent slots, keep by keep);
    ``roll_pos`` (R,) each roll's position; ``keep_at`` (K,) each position's keep
    index (int16, the arg's start)."""
    children = np.ascontiguousarray(np.concatenate(lat.children), dtype=np.intp)
    child_at, parent_at, roll_pos = (np.array(a, dtype=np.intp) for a in sweep_pairs(lat))   # own copies: made read-only below
    order = np.argsort(child_at, kind="stable")      # keep by keep, each one's slots in order
    par_ptr = np.zeros(lat.n_keeps + 1, dtype=np.intp)
    par_ptr[1:] = np.cumsum(np.bincount(child_at, minlength=lat.n_keeps))
    out = (children, par_ptr, parent_at[order], roll_pos, np.asarray(lat.keep_at).astype(np.int16))
    for a in out:
        a.setflags(write=False)
    return out


def _expect(lat: Lattice, x: np.ndarray, inv) -> None:
    """In place on ``x`` (K, U) in lattice order, roll rows filled: every smaller keep's
    row becomes the sum of its children's rows, face by face, times ``inv``."""
    if x.ndim == 2 and x.shape[1] >= COMPILED_COLUMNS:
        from ._eval_kernels import lattice_expectations

        lattice_expectations(x, _walk(lat)[0], inv)
        return
    for s in range(lat.n_dice - 1, -1, -1):
        ch = lat.children[s]                     # (n_s, F), faces in rising order
        acc = x[ch[:, 0]]                        # a copy (fancy indexing)
        for f in range(1, lat.n_faces):
            acc += x[ch[:, f]]
        np.multiply(acc, inv, out=x[lat.level_slices[s]])


def _subkeep(lat: Lattice, best: np.ndarray, arg: np.ndarray) -> None:
    """In place on ``best`` (K, U) in lattice order and ``arg`` (the keep index of each
    row's choice): upwards, a strictly better sub-keep replaces the value and the arg,
    a keep's faces in rising order."""
    if best.ndim == 2 and best.shape[1] >= COMPILED_COLUMNS:
        from ._eval_kernels import lattice_best_subkeep

        _, par_ptr, par_pos, _, _ = _walk(lat)
        lattice_best_subkeep(best, arg, par_ptr, par_pos)
        return
    for s in range(1, lat.n_dice + 1):
        lo = lat.level_slices[s].start
        for n_j, par in lat.parent_slots[s]:     # the j-th face present, for a prefix of the level
            cur, cur_arg = best[lo:lo + n_j], arg[lo:lo + n_j]
            cand = best[par]
            better = cand > cur
            np.copyto(cur, cand, where=better)
            np.copyto(cur_arg, arg[par], where=better)


def best_subkeep_lattice(dice: DiceTables, keep_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max over the sub-keeps of each roll, from keep values (K, U) in the lattice's
    order (:func:`~._solver_lattice.lattice`, as the solver's ``plan=True``): values
    (R, U) and the arg keep (R, U) as a keep index of the dice tables.

    >>> import numpy as np
    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables(); lat = lattice(d)
    >>> v = np.random.default_rng(0).random((d.n_keeps, 2))
    >>> b, a = best_subkeep_lattice(d, v[lat.keep_at])     # row i: the keep at position i
    >>> b2, a2 = best_subkeep(d, v)
    >>> bool((b == b2).all() and (a == a2).all())
    True
    """
    lat = lattice(dice)
    best = np.array(keep_values, order="C")             # a copy: the sweep works in place
    arg = np.broadcast_to(_walk(lat)[4][:, None], best.shape).copy()
    _subkeep(lat, best, arg)
    rows = _walk(lat)[3]
    return best[rows], arg[rows]


def keep_expectations(dice: DiceTables, roll_values_t: np.ndarray) -> np.ndarray:
    """(K, U) expected value of each keep, given roll values ``(R, U)`` (rolls first).

    >>> import numpy as np
    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> v = np.random.default_rng(0).random((d.n_rolls, 3))
    >>> np.allclose(keep_expectations(d, v), d.transition @ v)
    True
    """
    lat = lattice(dice)
    x = np.empty((dice.n_keeps,) + roll_values_t.shape[1:], dtype=roll_values_t.dtype)
    x[_walk(lat)[3]] = roll_values_t
    _expect(lat, x, roll_values_t.dtype.type(1.0 / dice.n_faces))
    return x[lat.pos_of_keep]                    # the dice tables' keep order


def best_subkeep(dice: DiceTables, keep_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max over the sub-keeps of each roll: values (R, U) and the arg keep (R, U), from
    keep values (K, U) in the dice tables' keep order.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> e = keep_expectations(d, (d.roll_counts[:, 5] >= 4).astype(float)[:, None])
    >>> b, a = best_subkeep(d, e)        # four sixes or more: hold the sixes
    >>> r = d.roll_index_of([6, 6, 2, 3, 4])
    >>> d.keep_counts[a[r, 0]].tolist(), round(float(b[r, 0]), 4)
    ([0, 0, 0, 0, 0, 2], 0.0741)
    """
    return best_subkeep_lattice(dice, np.asarray(keep_values)[lattice(dice).keep_at])


def best_keeps(dice: DiceTables, final_values: np.ndarray, rolls_left: int = 2,
               chunk: int = 16384) -> KeepPlan:
    """Optimal keeps for U positions given the value of each final roll ``(U, R)``.

    Works in chunks of ``chunk`` positions to bound memory.
    """
    final_values = np.asarray(final_values)
    u = len(final_values)
    lat = lattice(dice)
    children, par_ptr, par_pos, roll_pos, keep_at = _walk(lat)
    if final_values.ndim == 2 and u >= COMPILED_COLUMNS and rolls_left > 0 \
            and final_values.dtype in (np.float32, np.float64):
        from ._eval_kernels import lattice_best_keeps

        vals = np.empty((rolls_left,) + final_values.shape, dtype=final_values.dtype)
        kps = np.empty((rolls_left,) + final_values.shape, dtype=np.int16)
        lattice_best_keeps(np.ascontiguousarray(final_values), roll_pos, children, par_ptr, par_pos,
                           keep_at, final_values.dtype.type(1.0 / dice.n_faces), vals, kps)
        return KeepPlan(values=[final_values] + list(vals), keeps=[None] + list(kps))
    values = [final_values] + [np.empty_like(final_values) for _ in range(rolls_left)]
    keeps = [None] + [np.empty(final_values.shape, dtype=np.int16) for _ in range(rolls_left)]
    inv = final_values.dtype.type(1.0 / dice.n_faces)
    for lo in range(0, u, chunk):
        hi = min(lo + chunk, u)
        x = np.empty((dice.n_keeps, hi - lo), dtype=final_values.dtype)
        x[roll_pos] = final_values[lo:hi].T
        for j in range(1, rolls_left + 1):
            _expect(lat, x, inv)
            arg = np.broadcast_to(keep_at[:, None], x.shape).copy()
            _subkeep(lat, x, arg)                # x's roll rows: the next stage's final values
            values[j][lo:hi] = x[roll_pos].T
            keeps[j][lo:hi] = arg[roll_pos].T
    return KeepPlan(values=values, keeps=keeps)


def raise_final_values(values: np.ndarray, boxes: np.ndarray, worth, rows_open: np.ndarray,
                       box) -> None:
    """One box's turn in a lookahead strategy's best box of each final roll, in place:
    in the rows ``rows_open`` (U,) says may use the box, each roll whose ``worth``
    (broadcast to ``values``'s (U, R)) is strictly above ``values`` takes that worth, and
    ``boxes`` gets ``box`` (a box, or (U,) one per row). Strictly: on a tie the box met
    first keeps the roll. From :data:`COMPILED_COLUMNS` rows on in one compiled pass,
    below in NumPy: the same values and boxes.

    >>> values, boxes = np.full((2, 3), -np.inf, np.float32), np.zeros((2, 3), np.uint8)
    >>> raise_final_values(values, boxes, np.array([[1, 2, 3]]), np.array([True, False]), 4)
    >>> raise_final_values(values, boxes, np.array([[2, 2, 2]]), np.array([True, True]), 5)
    >>> values.tolist(), boxes.tolist()
    ([[2.0, 2.0, 3.0], [2.0, 2.0, 2.0]], [[5, 4, 4], [5, 5, 5]])
    """
    if len(values) >= COMPILED_COLUMNS:
        from ._eval_kernels import raise_final_values as compiled

        worth = np.asarray(worth)
        worth = worth.reshape((1,) * (2 - worth.ndim) + worth.shape)
        # float32 as computed, anything else in float64: the comparison NumPy makes with a
        # float32 value (exact for integer points)
        worth = np.require(worth, np.float32 if worth.dtype == np.float32 else np.float64, ["C", "W"])
        row_box = np.broadcast_to(np.asarray(box, dtype=np.uint8), (len(values),))
        compiled(values, boxes, worth, np.require(rows_open, np.bool_, ["C", "W"]),
                 np.require(row_box, np.uint8, ["C", "W"]))
        return
    better = worth > values
    better &= rows_open[:, None]
    np.copyto(values, worth, where=better)
    np.copyto(boxes, np.asarray(box, dtype=np.uint8).reshape(-1, 1), where=better)


def keep_ranks(rank: np.ndarray, keeps: np.ndarray, out: np.ndarray) -> None:
    """``out[i, r] = rank[r, keeps[i, r]]``: a plan's keep of each roll (a keep index,
    (U, R)) as its rank among the roll's sub-keeps (``rank`` (R, K)), the byte a lookahead
    strategy stores. From :data:`COMPILED_COLUMNS` rows of :func:`best_keeps`'s int16
    keeps on compiled, else in NumPy.

    >>> out = np.zeros((1, 2), np.uint8)
    >>> keep_ranks(np.array([[7, 8], [9, 10]], np.uint8), np.array([[1, 0]], np.int16), out)
    >>> out.tolist()
    [[8, 9]]
    """
    if len(keeps) >= COMPILED_COLUMNS and keeps.dtype == np.int16:
        from ._eval_kernels import keep_ranks as compiled

        compiled(np.require(rank, np.uint8, ["C", "W"]), np.require(keeps, np.int16, ["C", "W"]), out)
        return
    roll = np.arange(rank.shape[0])[None, :] * rank.shape[1]
    out[...] = np.take(rank.reshape(-1), roll + keeps)
