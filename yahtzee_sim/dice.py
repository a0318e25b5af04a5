"""Exact dice tables: the one chance model shared by the simulator and the solver.

A *roll* is a multiset of ``n_dice`` faces (252 of them for five six-sided dice);
a *keep* is a multiset of 0..``n_dice`` faces (462). Both are stored as count
vectors ``(.., n_faces)`` and addressed by a dense index. Multisets are also
encoded as integer *keys*: ``key = sum(count[f] * face_key[f])``. The face keys
are the powers of ``base = n_dice + 1`` while the key range stays small (five dice
with up to eight faces, six six-sided dice), else the smallest additive weights
found greedily that keep every multiset of at most ``n_dice`` dice apart (five
twelve-sided dice: keys below 500,000 instead of 2 billion). Either way adding two
multisets whose sizes sum to at most ``n_dice`` is adding their keys, which is
what makes rerolling a table lookup.

Example
-------
>>> t = dice_tables()
>>> t.n_rolls, t.n_keeps
(252, 462)
>>> float(t.first_roll_prob[t.roll_index_of([6, 6, 6, 6, 6])] * 6**5)
1.0
"""

from __future__ import annotations

import functools
import itertools
import math
import sys
from dataclasses import dataclass, field

import numpy as np

from .validate import whole_number

__all__ = ["DiceTables", "dice_tables"]


def _multisets(n_dice: int, n_faces: int, size: int) -> np.ndarray:
    """All count vectors of ``size`` dice, in lexicographic order of sorted dice."""
    rows = []
    for combo in itertools.combinations_with_replacement(range(n_faces), size):
        counts = np.zeros(n_faces, dtype=np.int8)
        for face in combo:
            counts[face] += 1
        rows.append(counts)
    return np.array(rows, dtype=np.int8).reshape(-1, n_faces)


@dataclass(frozen=True, eq=False)
class DiceTables:
    """Multisets of dice, their probabilities and the keep -> roll transitions.

    Build with :func:`dice_tables` (cached); every array is read-only.

    Attributes
    ----------
    roll_counts : (R, F) int8, count of each face in each roll.
    roll_dice : (R, D) int8, the sorted faces (1-based) of each roll.
    first_roll_prob : (R,) float64, probability of each roll when all dice are thrown.
    keep_counts : (K, F) int8, count of each face in each keep (0..D dice).
    keep_size : (K,) int8, number of dice in each keep.
    transition : (K, R) float64, P(roll | keep, reroll the other dice).
    subkeeps : (R, S) int16, the distinct keeps of each roll, padded with -1.
    n_subkeeps : (R,) int16, how many distinct keeps each roll has.
    keep_parents : (K, F) int16, keep with one die of face f removed (-1 if none).
    keep_children : (K, F) int16, keep with one die of face f added (-1 if too many).
    """

    n_dice: int
    n_faces: int
    roll_counts: np.ndarray = field(repr=False)
    roll_dice: np.ndarray = field(repr=False)
    first_roll_prob: np.ndarray = field(repr=False)
    keep_counts: np.ndarray = field(repr=False)
    keep_size: np.ndarray = field(repr=False)
    transition: np.ndarray = field(repr=False)
    subkeeps: np.ndarray = field(repr=False)
    n_subkeeps: np.ndarray = field(repr=False)
    keep_parents: np.ndarray = field(repr=False)
    keep_children: np.ndarray = field(repr=False)
    roll_keep_index: np.ndarray = field(repr=False)
    key_to_roll: np.ndarray = field(repr=False)
    key_to_keep: np.ndarray = field(repr=False)
    roll_key: np.ndarray = field(repr=False)
    keep_key: np.ndarray = field(repr=False)
    face_key: np.ndarray = field(repr=False)

    @property
    def n_rolls(self) -> int:
        """Number of distinct rolls of all dice (252 for 5d6)."""
        return len(self.roll_counts)

    @property
    def n_keeps(self) -> int:
        """Number of distinct keeps of 0..n_dice dice (462 for 5d6)."""
        return len(self.keep_counts)

    @property
    def base(self) -> int:
        return self.n_dice + 1

    # -- encoding -------------------------------------------------------------
    def counts_of(self, dice: np.ndarray) -> np.ndarray:
        """Face counts ``(..., F)`` of a dice array ``(..., n)`` with faces 1..F.

        >>> dice_tables().counts_of(np.array([[3, 3, 3, 5, 5]])).tolist()
        [[0, 0, 3, 0, 2, 0]]
        """
        dice = np.asarray(dice)
        faces = np.arange(1, self.n_faces + 1, dtype=dice.dtype)
        return (dice[..., None] == faces).sum(axis=-2, dtype=np.int8)

    def roll_index(self, dice: np.ndarray) -> np.ndarray:
        """Roll indices ``(N,)`` of an ``(N, n_dice)`` array of faces 1..F (any order).

        >>> t = dice_tables()
        >>> int(t.roll_index(np.array([[5, 3, 3, 5, 3]]))[0]) == t.roll_index_of([3, 3, 3, 5, 5])
        True
        """
        dice = np.asarray(dice)
        keys = self.face_key[dice.astype(np.intp) - 1].sum(axis=-1)
        return self.key_to_roll[keys]

    def roll_index_of(self, dice) -> int:
        """Index of one roll given as a sequence of faces, e.g. ``[3, 3, 3, 5, 5]``.

        >>> dice_tables().roll_index_of([1, 1, 1, 1, 1])
        0
        """
        problem = f"dice must be {self.n_dice} whole numbers in 1..{self.n_faces}, got {dice!r}"
        try:
            values = list(dice)
        except TypeError:
            raise ValueError(problem) from None
        if len(values) != self.n_dice or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) and 1 <= v <= self.n_faces
            for v in values
        ):
            raise ValueError(problem)
        return int(self.roll_index(np.asarray(values, dtype=np.int64)[None, :])[0])

    def keep_index_of_counts(self, counts: np.ndarray) -> np.ndarray:
        """Keep indices of count vectors ``(..., F)``; -1 where more than n_dice dice.

        >>> t = dice_tables()
        >>> int(t.keep_size[t.keep_index_of_counts(np.array([0, 0, 3, 0, 0, 0]))])
        3
        """
        counts = np.asarray(counts, dtype=np.int64)
        if (counts < 0).any() or (counts.sum(axis=-1) > self.n_dice).any():
            raise ValueError(f"a keep holds 0..{self.n_dice} dice with non-negative counts")
        return self.key_to_keep[(counts * self.face_key).sum(axis=-1)]

    def reroll(self, keeps: np.ndarray, prefix_keys: np.ndarray) -> np.ndarray:
        """Roll indices after adding freshly thrown dice to ``keeps``.

        ``prefix_keys`` is ``(N, n_dice + 1)``: column j is the key of the first j
        dice of each game's tape for this roll (see :meth:`tape_prefix_keys`).

        >>> t = dice_tables()
        >>> tape = np.array([[6, 6, 1, 2, 3]])
        >>> keep = t.keep_index_of_counts(np.array([[0, 0, 0, 0, 0, 3]]))
        >>> t.roll_dice[t.reroll(keep, t.tape_prefix_keys(tape))].tolist()
        [[6, 6, 6, 6, 6]]
        """
        keeps = np.asarray(keeps)
        missing, keep_key = self._reroll_tables
        added = prefix_keys[np.arange(len(keeps)), missing[keeps]]
        return self.key_to_roll[keep_key[keeps] + added]

    @functools.cached_property
    def _reroll_tables(self):
        """Hot-path tables: dice missing from each keep (intp) and keep keys (int32)."""
        return (self.n_dice - self.keep_size).astype(np.intp), self.keep_key.astype(np.int32)

    @functools.cached_property
    def _face_key_lut(self) -> np.ndarray:
        """Key of one die by face value (index 0 unused), in the smallest dtype holding a roll's key."""
        dtype = np.uint16 if self.n_dice * int(self.face_key[-1]) < 2**16 else np.int64
        lut = np.zeros(self.n_faces + 1, dtype=dtype)
        lut[1:] = self.face_key
        return lut

    def tape_prefix_keys(self, tape: np.ndarray) -> np.ndarray:
        """Keys of the first 0..n_dice dice of each tape row ``(..., n_dice)``.

        Unsigned 16-bit when every key fits (5 six-sided dice), else int64.

        >>> t = dice_tables()
        >>> t.tape_prefix_keys(np.array([[1, 2, 1, 6, 6]])).tolist()
        [[0, 1, 7, 8, 7784, 15560]]
        """
        tape = np.asarray(tape)
        lut = self._face_key_lut
        die = lut[tape]
        keys = np.empty(tape.shape[:-1] + (self.n_dice + 1,), dtype=lut.dtype)
        keys[..., 0] = 0
        keys[..., 1] = die[..., 0]
        for j in range(1, self.n_dice):   # loop over dice, not games
            np.add(keys[..., j], die[..., j], out=keys[..., j + 1])
        return keys

    # -- tape codes: the fast path of the simulator ------------------------------------
    @functools.cached_property
    def _code_tables(self):
        """Tables of :meth:`tape_codes`, or None when they would be too large.

        A *tape code* packs one roll slot of a game's dice tape into an integer, die j
        (face 1..F) in bits ``[j * w, (j + 1) * w)`` with ``w = F.bit_length()``. The
        first m dice of the slot are then ``code & (2**(m * w) - 1)``, and
        ``table[offset[k] + (code & mask[k])]`` is the roll made by keep k plus the
        first ``n_dice - size(k)`` dice of the slot: one lookup per reroll instead of
        the prefix keys. Returns ``(bits, dtype, offset (K,), mask (K,), table)``.
        """
        bits = int(self.n_faces).bit_length()
        missing = (self.n_dice - self.keep_size).astype(np.int64)
        sizes = np.int64(1) << (bits * missing)
        if int(sizes.sum()) > CODE_TABLE_LIMIT:
            return None
        dtype = np.uint16 if bits * self.n_dice <= 16 else np.uint32
        offset = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        table = np.full(int(sizes.sum()), -1, dtype=self.key_to_roll.dtype)
        for m in range(self.n_dice + 1):
            keeps = np.flatnonzero(missing == m)
            codes = np.arange(1 << (bits * m), dtype=np.int64)
            faces = (codes[:, None] >> (bits * np.arange(m))) & ((1 << bits) - 1)   # (codes, m)
            valid = ((faces >= 1) & (faces <= self.n_faces)).all(axis=1)
            added = self.face_key[np.clip(faces, 1, self.n_faces) - 1].sum(axis=1)
            rolls = self.key_to_roll[self.keep_key[keeps][:, None] + added[None, :]]
            where = offset[keeps][:, None] + codes[None, :]
            table[where[:, valid]] = rolls[:, valid]
        mask = ((np.int64(1) << (bits * missing)) - 1).astype(dtype)
        for a in (offset, mask, table):
            a.setflags(write=False)
        return bits, dtype, offset.astype(np.intp), mask, table

    @property
    def has_tape_codes(self) -> bool:
        """Can this set of dice use :meth:`tape_codes` (tables of at most
        :data:`CODE_TABLE_LIMIT` entries; not for five twelve-sided dice)?"""
        return self._code_tables is not None

    def tape_codes(self, tape: np.ndarray) -> np.ndarray:
        """Tape codes ``(...)`` of tape rows ``(..., n_dice)``: one integer per roll slot
        (see :meth:`reroll_code`); needs :attr:`has_tape_codes`.

        >>> t = dice_tables()
        >>> int(t.tape_codes(np.array([1, 2, 1, 6, 6], dtype=np.uint8)))   # 1 + 2*8 + 1*64 + 6*512 + 6*4096
        27729
        """
        bits, dtype = self._code_tables[:2]
        tape = np.asarray(tape)
        n = self.n_dice
        if bits == 3 and n >= 4 and tape.dtype == np.uint8 and tape.flags.c_contiguous and tape.size \
                and sys.byteorder == "little":
            # The first four dice of a slot read as one little-endian uint32 (faces < 8 in
            # bytes 0..3) fold into 12 bits with two shifts: a third fewer passes.
            flat = tape.reshape(-1)
            fold = np.ndarray((flat.size // n,), dtype=np.uint32, buffer=flat, strides=(n,)).copy()
            fold |= fold >> 5                        # d0 | d1 << 3 in bits 0..5, d2 | d3 << 3 in 16..21
            low = fold & 0x3F
            fold >>= 10
            fold &= 0xFC0
            fold |= low
            code = fold.astype(dtype)
            for j in range(4, n):
                code |= flat[j::n].astype(dtype) << (3 * j)
            return code.reshape(tape.shape[:-1])
        code = tape[..., -1].astype(dtype)
        for j in range(self.n_dice - 2, -1, -1):   # loop over dice, not games
            code <<= bits
            code |= tape[..., j]
        return code

    def roll_of_code(self, codes: np.ndarray) -> np.ndarray:
        """Roll indices (intp) of all dice thrown from tape codes: the first roll of a turn.

        >>> t = dice_tables()
        >>> t.roll_dice[t.roll_of_code(t.tape_codes(np.array([[6, 1, 6, 2, 6]], dtype=np.uint8)))].tolist()
        [[1, 2, 6, 6, 6]]
        """
        return np.take(self._code_tables[4], codes).astype(np.intp)

    def reroll_code(self, keeps: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Roll indices (intp) after adding the first dice of each tape slot to ``keeps``:
        the same rolls as :meth:`reroll` on the slot's prefix keys.

        >>> t = dice_tables()
        >>> keep = t.keep_index_of_counts(np.array([[0, 0, 0, 0, 0, 3]]))
        >>> t.roll_dice[t.reroll_code(keep, t.tape_codes(np.array([[6, 6, 1, 2, 3]], dtype=np.uint8)))].tolist()
        [[6, 6, 6, 6, 6]]
        """
        _, _, offset, mask, table = self._code_tables
        keeps = np.asarray(keeps)
        idx = np.take(offset, keeps)
        idx += np.take(mask, keeps) & codes
        return np.take(table, idx).astype(np.intp)

    def roll_prob_after_keep(self, keep: int) -> np.ndarray:
        """Distribution ``(R,)`` of the next roll when ``keep`` is held.

        >>> t = dice_tables()
        >>> float(t.roll_prob_after_keep(0).sum())
        1.0
        """
        return self.transition[keep]


CODE_TABLE_LIMIT = 2**21
"""Most entries of the tape-code reroll table (:meth:`DiceTables.tape_codes`); beyond it
(five twelve-sided dice) the simulator adds prefix keys instead."""

DENSE_KEY_LIMIT = 2**21
"""Largest key range encoded with powers of ``n_dice + 1``; above it, compact weights."""


def face_keys(n_dice: int, n_faces: int) -> np.ndarray:
    """(F,) int64 additive face keys: distinct sums for all multisets of <= n_dice dice.

    >>> face_keys(5, 6).tolist()
    [1, 6, 36, 216, 1296, 7776]
    >>> face_keys(5, 12).tolist()[-3:]
    [27316, 44676, 94545]
    """
    base = n_dice + 1
    if base**n_faces <= DENSE_KEY_LIMIT:
        return base ** np.arange(n_faces, dtype=np.int64)
    return np.array(_compact_keys(n_dice, n_faces), dtype=np.int64)


@functools.lru_cache(maxsize=None)
def _compact_keys(n_dice: int, n_faces: int) -> tuple[int, ...]:
    """Greedy B_h weights (with an "empty" weight 0): each new face takes the smallest key
    c such that j copies of c plus any (n - j) earlier dice never equal j' copies plus
    (n - j') earlier dice, i.e. (j - j') * c is no difference of two earlier sums."""
    weights = [0]
    for _ in range(n_faces):
        # sums[m]: every sum of m dice from the earlier weights (0 = an empty slot).
        sums = [np.array([0], dtype=np.int64)]
        for _m in range(n_dice):
            sums.append(np.unique((sums[-1][:, None] + np.array(weights)[None, :]).ravel()))
        forbidden = set()
        for j1 in range(n_dice + 1):
            for j2 in range(j1 + 1, n_dice + 1):
                diff = (sums[n_dice - j1][:, None] - sums[n_dice - j2][None, :]).ravel()
                step = j2 - j1
                diff = diff[(diff > 0) & (diff % step == 0)] // step
                forbidden.update(diff.tolist())
        c = weights[-1] + 1
        while c in forbidden:
            c += 1
        weights.append(c)
    return tuple(weights[1:])


def tables_bytes(n_dice: int, n_faces: int) -> int:
    """Peak bytes :func:`dice_tables` takes: the keep-to-roll table (float64) and, while
    it is filled, the index arrays of one size of reroll.

    >>> tables_bytes(5, 6) >= 462 * 252 * 8    # official Yahtzee: 462 keeps x 252 rolls, float64
    True
    """
    def multisets(k: int) -> int:   # multisets of k dice of n_faces faces
        return math.comb(k + n_faces - 1, k)

    keeps, rolls = math.comb(n_dice + n_faces, n_dice), multisets(n_dice)
    filling = max(multisets(n_dice - s) * multisets(s) for s in range(n_dice + 1))
    return 8 * keeps * rolls + 32 * filling


def require_tables_fit(n_dice: int, n_faces: int) -> None:
    """One-line ``ValueError``, before anything is built, for dice whose tables do not fit.

    The tables index keeps with 16 bits (at most 32,767 keeps) and must fit in memory
    (:func:`yahtzee_sim.limits.require_memory`).

    >>> require_tables_fit(8, 12)
    Traceback (most recent call last):
    ...
    ValueError: 8 dice of 12 faces have 125,970 distinct keeps, more than the dice tables can index (32,767: at most 8 dice of 9 faces, 7 of 11, 6 of 12); their keep-to-roll table alone would take 70.9 GiB
    """
    from .limits import require_memory, size_text

    keeps = math.comb(n_dice + n_faces, n_dice)
    need = tables_bytes(n_dice, n_faces)
    if keeps >= 2**15:
        raise ValueError(f"{n_dice} dice of {n_faces} faces have {keeps:,} distinct keeps, more than the dice "
                         "tables can index (32,767: at most 8 dice of 9 faces, 7 of 11, 6 of 12); their keep-to-roll "
                         f"table alone would take {size_text(8 * keeps * math.comb(n_dice + n_faces - 1, n_dice))}")
    require_memory(need, f"the dice tables of {n_dice} dice of {n_faces} faces")


@functools.lru_cache(maxsize=None)
def dice_tables(n_dice: int = 5, n_faces: int = 6) -> DiceTables:
    """Build (once) the exact dice tables for ``n_dice`` dice with ``n_faces`` faces.

    >>> t = dice_tables(6, 6)   # Maxi Yatzy's six dice
    >>> t.n_rolls
    462
    """
    n_dice, n_faces = whole_number(n_dice, "n_dice"), whole_number(n_faces, "n_faces", low=2)
    require_tables_fit(n_dice, n_faces)
    powers = face_keys(n_dice, n_faces)
    n_keys = int(n_dice * powers[-1]) + 1

    keep_counts = np.concatenate([_multisets(n_dice, n_faces, s) for s in range(n_dice + 1)])
    keep_size = keep_counts.sum(axis=1).astype(np.int8)
    keep_key = keep_counts.astype(np.int64) @ powers
    key_to_keep = np.full(n_keys, -1, dtype=np.int16 if len(keep_counts) < 2**15 else np.int32)
    key_to_keep[keep_key] = np.arange(len(keep_counts))

    roll_counts = _multisets(n_dice, n_faces, n_dice)
    roll_key = roll_counts.astype(np.int64) @ powers
    key_to_roll = np.full(n_keys, -1, dtype=np.int16 if len(roll_counts) < 2**15 else np.int32)
    key_to_roll[roll_key] = np.arange(len(roll_counts))
    roll_dice = np.array(
        [np.repeat(np.arange(1, n_faces + 1), c) for c in roll_counts], dtype=np.int8
    ).reshape(-1, n_dice)
    roll_keep_index = key_to_keep[roll_key].astype(np.int16)

    # Multinomial probability of each multiset of m dice: m! / prod(c!) / F**m.
    def multiset_prob(counts: np.ndarray) -> np.ndarray:
        m = counts.sum(axis=1)
        fact = np.array([math.factorial(k) for k in range(n_dice + 1)], dtype=np.float64)
        return fact[m] / np.prod(fact[counts], axis=1) / float(n_faces) ** m

    first_roll_prob = multiset_prob(roll_counts)

    # keep -> roll: add every multiset of the missing dice.
    transition = np.zeros((len(keep_counts), len(roll_counts)))
    by_size = {s: _multisets(n_dice, n_faces, s) for s in range(n_dice + 1)}
    for s, outcomes in by_size.items():
        probs = multiset_prob(outcomes)
        outcome_keys = outcomes.astype(np.int64) @ powers
        keeps_missing_s = np.flatnonzero(keep_size == n_dice - s)
        rolls = key_to_roll[keep_key[keeps_missing_s][:, None] + outcome_keys[None, :]]
        np.add.at(transition, (np.repeat(keeps_missing_s, len(outcomes)), rolls.ravel()),
                  np.tile(probs, len(keeps_missing_s)))

    # Distinct keeps of each roll (all sub-multisets).
    sub_lists = []
    for counts in roll_counts:
        ranges = [range(c + 1) for c in counts]
        subs = [key_to_keep[np.dot(c, powers)] for c in itertools.product(*ranges)]
        sub_lists.append(sorted(subs))
    width = max(len(s) for s in sub_lists)
    subkeeps = np.full((len(roll_counts), width), -1, dtype=np.int16)
    for i, subs in enumerate(sub_lists):
        subkeeps[i, : len(subs)] = subs
    n_subkeeps = np.array([len(s) for s in sub_lists], dtype=np.int16)

    keep_parents = np.full((len(keep_counts), n_faces), -1, dtype=np.int16)
    keep_children = np.full((len(keep_counts), n_faces), -1, dtype=np.int16)
    for f in range(n_faces):
        has = keep_counts[:, f] > 0
        keep_parents[has, f] = key_to_keep[keep_key[has] - powers[f]]
        room = keep_size < n_dice
        keep_children[room, f] = key_to_keep[keep_key[room] + powers[f]]

    arrays = dict(
        roll_counts=roll_counts, roll_dice=roll_dice, first_roll_prob=first_roll_prob,
        keep_counts=keep_counts, keep_size=keep_size, transition=transition,
        subkeeps=subkeeps, n_subkeeps=n_subkeeps, keep_parents=keep_parents,
        keep_children=keep_children, roll_keep_index=roll_keep_index,
        key_to_roll=key_to_roll, key_to_keep=key_to_keep, roll_key=roll_key,
        keep_key=keep_key, face_key=powers,
    )
    for a in arrays.values():
        a.setflags(write=False)
    return DiceTables(n_dice=n_dice, n_faces=n_faces, **arrays)
