"""The per-turn keep/roll "widget", vectorized over many positions at once.

Given, for U positions, the value of ending the turn with each roll (``(U, R)``),
compute the value of each roll with 1, 2, ... rerolls left and the keep that
attains it. Both steps walk the keep lattice instead of the dense keep -> roll
matrix:

* expected value of a keep = mean over the face of one more die of the keep one
  die larger (a keep of n dice is a roll), so every keep costs F additions;
* best keep of a roll = max over its sub-keeps, computed as
  ``M[k] = max(E[k], max_f M[k minus one f])``.

Strategies (greedy, heuristic, optimal) call :func:`best_keeps` once per batch of
distinct positions; the exact solver uses the same lattice.

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
def _levels(dice: DiceTables):
    sizes = dice.keep_size
    by_size = [np.flatnonzero(sizes == s) for s in range(dice.n_dice + 1)]
    return by_size


@functools.lru_cache(maxsize=None)
def _sweeps(dice: DiceTables):
    """Keeps below a full roll, largest first, and keeps of one die or more, smallest
    first; the children and parents tables as intp."""
    by_size = _levels(dice)
    down = np.concatenate(by_size[:dice.n_dice][::-1]).astype(np.intp)
    up = np.concatenate(by_size[1:]).astype(np.intp)
    return down, up, dice.keep_children.astype(np.intp), dice.keep_parents.astype(np.intp)


def keep_expectations(dice: DiceTables, roll_values_t: np.ndarray) -> np.ndarray:
    """(K, U) expected value of each keep, given roll values ``(R, U)`` (rolls first).

    >>> import numpy as np
    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> v = np.random.default_rng(0).random((d.n_rolls, 3))
    >>> np.allclose(keep_expectations(d, v), d.transition @ v)
    True
    """
    levels = _levels(dice)
    n = dice.n_dice
    out = np.empty((dice.n_keeps,) + roll_values_t.shape[1:], dtype=roll_values_t.dtype)
    out[dice.roll_keep_index] = roll_values_t
    inv = roll_values_t.dtype.type(1.0 / dice.n_faces)
    if out.ndim == 2 and out.shape[1] >= COMPILED_COLUMNS:
        from ._eval_kernels import lattice_expectations

        down, _, children, _ = _sweeps(dice)
        lattice_expectations(out, down, children, inv)
        return out
    for size in range(n - 1, -1, -1):
        ks = levels[size]
        children = dice.keep_children[ks]  # (k, F), all valid below n dice
        acc = out[children[:, 0]].copy()
        for f in range(1, dice.n_faces):
            acc += out[children[:, f]]
        out[ks] = acc * inv
    return out


def best_subkeep(dice: DiceTables, keep_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Max over the sub-keeps of each roll: values (R, U) and the arg keep (R, U)."""
    levels = _levels(dice)
    best = keep_values.copy()
    arg = np.broadcast_to(np.arange(dice.n_keeps, dtype=np.int16)[:, None], best.shape).copy()
    if best.ndim == 2 and best.shape[1] >= COMPILED_COLUMNS:
        from ._eval_kernels import lattice_best_subkeep

        _, up, _, parents = _sweeps(dice)
        lattice_best_subkeep(best, arg, up, parents)
        rk = dice.roll_keep_index
        return best[rk], arg[rk]
    for size in range(1, dice.n_dice + 1):
        ks = levels[size]
        parents = dice.keep_parents[ks]  # (k, F), -1 where the face is absent
        for f in range(dice.n_faces):
            has = parents[:, f] >= 0
            k_has, p = ks[has], parents[has, f]
            better = best[p] > best[k_has]
            best[k_has] = np.where(better, best[p], best[k_has])
            arg[k_has] = np.where(better, arg[p], arg[k_has])
    rk = dice.roll_keep_index
    return best[rk], arg[rk]


def best_keeps(dice: DiceTables, final_values: np.ndarray, rolls_left: int = 2,
               chunk: int = 16384) -> KeepPlan:
    """Optimal keeps for U positions given the value of each final roll ``(U, R)``.

    Works in chunks of ``chunk`` positions to bound memory.
    """
    final_values = np.asarray(final_values)
    u = len(final_values)
    if final_values.ndim == 2 and u >= COMPILED_COLUMNS and rolls_left > 0 \
            and final_values.dtype in (np.float32, np.float64):
        from ._eval_kernels import lattice_best_keeps

        down, up, children, parents = _sweeps(dice)
        vals = np.empty((rolls_left,) + final_values.shape, dtype=final_values.dtype)
        kps = np.empty((rolls_left,) + final_values.shape, dtype=np.int16)
        lattice_best_keeps(np.ascontiguousarray(final_values), dice.roll_keep_index.astype(np.intp),
                           down, children, up, parents, final_values.dtype.type(1.0 / dice.n_faces),
                           vals, kps)
        return KeepPlan(values=[final_values] + list(vals), keeps=[None] + list(kps))
    values = [final_values] + [np.empty_like(final_values) for _ in range(rolls_left)]
    keeps = [None] + [np.empty(final_values.shape, dtype=np.int16) for _ in range(rolls_left)]
    for lo in range(0, u, chunk):
        hi = min(lo + chunk, u)
        v = np.ascontiguousarray(final_values[lo:hi].T)
        for j in range(1, rolls_left + 1):
            v, arg = best_subkeep(dice, keep_expectations(dice, v))
            values[j][lo:hi] = v.T
            keeps[j][lo:hi] = arg.T
    return KeepPlan(values=values, keeps=keeps)
