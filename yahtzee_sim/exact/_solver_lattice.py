"""Private: the keep lattice laid out for the solver's column-batched widget.

The solver works on C-contiguous arrays of shape ``(K, U)`` (one for the means,
one for the second moments), one column per game state and one row per keep, with the keeps in a solver-specific order:

* by size (0 dice first, the full rolls last), so every level is a contiguous
  block of rows and the rolls are the last block;
* inside a level, keeps with more distinct faces first, so the keeps that have a
  j-th "parent" (the keep one die smaller, without the j-th distinct face) form a
  prefix of the level.

With that order the two lattice sweeps of :mod:`yahtzee_sim.exact.widget` become
a few whole-block NumPy operations per level:

* expectation (downwards): ``X[k] = sum_f X[k + f] / F``, each keep from the
  keeps one die larger;
* best sub-keep (upwards): ``X[k] = max(X[k], X[k - f])`` over the faces present,
  choosing by the mean and carrying the second moment of the chosen keep.

The division by ``F`` is a correctly rounded division, not a multiplication by
a rounded ``1/F``, so float32 work has no systematic bias.

>>> from yahtzee_sim.dice import dice_tables
>>> lat = lattice(dice_tables())
>>> lat.n_keeps, lat.level_slices[5]
(462, slice(210, 462, None))
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..dice import DiceTables


@dataclass(frozen=True, eq=False)
class Lattice:
    """Keep lattice in solver order (see the module docstring).

    pos_of_keep : (K,) position of each keep (dice-table index) in solver order.
    keep_at : (K,) dice-table keep index at each position.
    roll_at : (R,) dice-table roll index of each position of the roll block.
    pos_of_roll : (R,) position (inside the roll block) of each roll.
    level_slices : row block of each keep size.
    children : per size < n_dice, (n_s, F) positions of the keep one die larger.
    parent_slots : per size >= 1, list of (n_j, positions) for the j-th parent.
    roll_mult : (R,) float64 number of ordered outcomes of each roll (solver order).
    """

    n_dice: int
    n_faces: int
    n_keeps: int
    pos_of_keep: np.ndarray
    keep_at: np.ndarray
    roll_at: np.ndarray
    pos_of_roll: np.ndarray
    level_slices: tuple
    children: tuple
    parent_slots: tuple
    roll_mult: np.ndarray
    n_outcomes: float


@functools.lru_cache(maxsize=None)
def lattice(dice: DiceTables) -> Lattice:
    """The solver-order keep lattice of ``dice`` (cached)."""
    n, f = dice.n_dice, dice.n_faces
    size = dice.keep_size.astype(np.int64)
    distinct = (dice.keep_counts > 0).sum(axis=1).astype(np.int64)
    keep_at = np.lexsort((np.arange(dice.n_keeps), -distinct, size))
    pos_of_keep = np.empty_like(keep_at)
    pos_of_keep[keep_at] = np.arange(dice.n_keeps)
    bounds = np.searchsorted(size[keep_at], np.arange(n + 2))
    level_slices = tuple(slice(int(bounds[s]), int(bounds[s + 1])) for s in range(n + 1))

    children = []
    for s in range(n):
        ks = keep_at[level_slices[s]]
        children.append(pos_of_keep[dice.keep_children[ks]].astype(np.intp))

    parent_slots = [[]]
    for s in range(1, n + 1):
        ks = keep_at[level_slices[s]]
        slots = []
        parents = dice.keep_parents[ks]  # (n_s, F), -1 where the face is absent
        # j-th present face of each keep
        order = np.argsort(parents < 0, axis=1, kind="stable")
        for j in range(min(s, f)):
            col = parents[np.arange(len(ks)), order[:, j]]
            n_j = int((col >= 0).sum())
            if n_j == 0:
                break
            assert (col[:n_j] >= 0).all() and (col[n_j:] < 0).all()
            slots.append((n_j, pos_of_keep[col[:n_j]].astype(np.intp)))
        parent_slots.append(slots)

    roll_block = level_slices[n]
    roll_at = dice.key_to_roll[dice.keep_key[keep_at[roll_block]]].astype(np.intp)
    pos_of_roll = np.empty_like(roll_at)
    pos_of_roll[roll_at] = np.arange(len(roll_at))
    n_outcomes = float(f) ** n
    roll_mult = np.rint(dice.first_roll_prob[roll_at] * n_outcomes)
    for a in (pos_of_keep, keep_at, roll_at, pos_of_roll, roll_mult):
        a.setflags(write=False)
    return Lattice(n, f, dice.n_keeps, pos_of_keep, keep_at, roll_at, pos_of_roll,
                   level_slices, tuple(children), tuple(tuple(s) for s in parent_slots),
                   roll_mult, n_outcomes)


@functools.lru_cache(maxsize=None)
def sweep_pairs(lat: Lattice) -> tuple:
    """The keep sweep's (position, parent position) pairs, level by level upwards, each
    position's slots in face order (the parent slots flattened), and each roll's
    position: three int64 arrays for the compiled loops that walk the lattice (the
    widget's and the decision build's). Shared by every caller: never write to them;
    they stay writable because the decision build's loop is compiled for writable
    arrays (a read-only one is another type to numba: another compilation).

    >>> from yahtzee_sim.dice import dice_tables
    >>> child, parent, roll_pos = sweep_pairs(lattice(dice_tables()))
    >>> bool((child > parent).all()), len(roll_pos)
    (True, 252)
    """
    child, parent = [], []
    for s in range(1, lat.n_dice + 1):
        lo = lat.level_slices[s].start
        for n_j, par in lat.parent_slots[s]:
            child.append(np.arange(lo, lo + n_j, dtype=np.int64))
            parent.append(np.asarray(par, dtype=np.int64))
    roll_pos = (lat.level_slices[lat.n_dice].start + np.asarray(lat.pos_of_roll)).astype(np.int64)
    return np.concatenate(child), np.concatenate(parent), roll_pos


@functools.lru_cache(maxsize=None)
def _child_sums(lat: Lattice, dtype) -> tuple:
    """Per keep size s < n_dice, a sparse (n_s, n_s+1) 0/1 matrix summing the children."""
    from scipy import sparse

    out = []
    for s in range(lat.n_dice):
        ch = lat.children[s]
        nxt = lat.level_slices[s + 1]
        rows = np.repeat(np.arange(len(ch)), ch.shape[1])
        m = sparse.csr_matrix((np.ones(ch.size, dtype=dtype), (rows, (ch - nxt.start).ravel())),
                              shape=(len(ch), nxt.stop - nxt.start))
        m.sum_duplicates()
        out.append(m)
    return tuple(out)


def expect(lat: Lattice, x: np.ndarray, *, stop: int = 0) -> None:
    """In place: rows of keeps of size ``< n_dice`` (down to ``stop``) become the
    expectation of the keep one die larger, i.e. of the rolls they lead to.

    ``x`` is ``(K, U)`` in solver order with the roll block filled. Each level is
    one sparse product (sum of the F children) and one correctly rounded division.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables(); lat = lattice(d)
    >>> x = np.zeros((d.n_keeps, 1)); x[lat.level_slices[5], 0] = d.roll_counts[lat.roll_at, 5] == 5
    >>> expect(lat, x)
    >>> round(float(x[0, 0] * 6**5), 12)       # empty keep: chance of five sixes in one throw
    1.0
    """
    f = lat.n_faces
    sums = _child_sums(lat, x.dtype.type)
    for s in range(lat.n_dice - 1, stop - 1, -1):
        out = x[lat.level_slices[s]]
        np.divide(sums[s] @ x[lat.level_slices[s + 1]], f, out=out)


def best_subkeep_mean(lat: Lattice, x: np.ndarray) -> None:
    """In place: every row becomes the max over the keep's sub-keeps (means only)."""
    for s in range(1, lat.n_dice + 1):
        lo = lat.level_slices[s].start
        for n_j, par in lat.parent_slots[s]:
            cur = x[lo:lo + n_j]
            np.maximum(cur, x[par], out=cur)


def sweep_keeps(lat: Lattice, z: np.ndarray, n_rolls: int, *, plan: bool = False) -> list:
    """In place: final-roll values ``z`` (K, U), roll block filled, become each first
    roll's value under the best keeps of the ``n_rolls - 1`` rerolls (means only).

    Returns ``keep_values``: with ``plan``, ``keep_values[j]`` is the (K, U) expected
    value of each keep with ``j`` rerolls left after it (None otherwise).

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables(); lat = lattice(d)
    >>> z = np.zeros((d.n_keeps, 1)); z[lat.level_slices[5], 0] = d.roll_counts[lat.roll_at, 5] == 5
    >>> _ = sweep_keeps(lat, z, 3)
    >>> round(float(first_roll_mean(lat, z[lat.level_slices[5]])[0]), 6)   # five sixes in three throws
    0.013272
    """
    keep_values = [None] * n_rolls
    for j in range(1, n_rolls):
        expect(lat, z)
        if plan:
            keep_values[j] = z.copy()
        best_subkeep_mean(lat, z)
    return keep_values


def first_roll_mean(lat: Lattice, rolls: np.ndarray) -> np.ndarray:
    """Mean over the first roll of per-roll values ``(R, U)`` (solver order), in float64
    (no BLAS call: safe in forked workers)."""
    return np.add.reduce(rolls * lat.roll_mult[:, None], axis=0) / lat.n_outcomes


TIE_TOL = 1e-4
"""Choices whose means differ by at most this are near-ties: the second moment
propagated is that of the first one met (the keep with more dice, the box met
first) unless a later one beats the best so far by more than this, the same way in
float32 and float64 (exact ties carry rounding noise, and the second moment
depends on how ties are broken). The tie rule never touches the means: a mean is
always the exact maximum. (Each choice compared can leave the followed one at
most TIE_TOL further below the maximum, so it is within a few TIE_TOL of it.)"""


def select_tied(z: np.ndarray, q: np.ndarray, cz: np.ndarray, cq: np.ndarray) -> None:
    """In place: where ``cz > z + TIE_TOL``, ``q = cq``; then ``z = max(z, cz)``.

    ``z`` is the exact best mean so far and ``q`` the second moment of the choice
    followed; ``cz``, ``cq`` are a candidate's. ``cq`` is scratch (overwritten).

    Branch-free: the sign bit of ``z + tol - cz`` becomes an all-ones integer mask
    that selects the bits of the candidate (``a ^ ((a ^ b) & mask)``); NumPy's
    masked copies branch on every element and are several times slower.

    >>> z, q = np.array([1.0, 2.0], np.float32), np.array([10.0, 20.0], np.float32)
    >>> select_tied(z, q, np.array([3.0, 2.00001], np.float32), np.array([30.0, 40.0], np.float32))
    >>> [round(x, 5) for x in z.tolist()], q.tolist()
    ([3.0, 2.00001], [30.0, 20.0])
    """
    itype = np.int32 if z.dtype.itemsize == 4 else np.int64
    t = z + z.dtype.type(TIE_TOL)
    t -= cz
    mask = t.view(itype)
    mask >>= 8 * z.dtype.itemsize - 1              # -1 where the candidate is followed, else 0
    np.maximum(z, cz, out=z)
    bi = cq.view(itype)
    bi ^= q.view(itype)
    bi &= mask
    q.view(itype)[...] ^= bi


def best_subkeep_pair(lat: Lattice, z: np.ndarray, q: np.ndarray) -> None:
    """In place on two ``(K, U)`` arrays: every row's mean ``z`` becomes the exact
    max over the keep's sub-keeps, and ``q`` the second moment of the sub-keep
    followed (see :func:`select_tied`: a smaller keep is followed only if it is
    better than the best so far by more than :data:`TIE_TOL`)."""
    for lvl in range(1, lat.n_dice + 1):
        lo = lat.level_slices[lvl].start
        for n_j, par in lat.parent_slots[lvl]:
            rows = slice(lo, lo + n_j)
            select_tied(z[rows], q[rows], z[par], q[par])
