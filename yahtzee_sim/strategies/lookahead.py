"""One-turn lookahead strategies: ``greedy`` and ``heuristic``.

Both choose their keeps by the *exact* expectation of the rest of the turn over
the dice tables: each final roll r is worth ``V(r) = max over the legal boxes b
of value(b, r)``, and the keep lattice of :mod:`yahtzee_sim.exact.widget` gives
the best keep with one or two rerolls left. They differ only in ``value``:

* ``greedy``: the points gained now, bonuses included (``TurnOptions.gain``);
* ``heuristic``: those points plus a few readable corrections taken from the
  seeds' advice (upper bonus, reserve for Chance and Yahtzee, where to put a
  zero), see :class:`HeuristicStrategy`.

Speed: a batch of games at the same turn has far fewer distinct *positions*
(open boxes, upper total as far as it matters, Yahtzee box state) than games,
so each position's plan (best keep of every roll with 1 and 2 rerolls left,
best box of every final roll) is computed once (found through a direct index of
every position on cards with at most :data:`DENSE_POSITIONS`, else through
``np.unique`` of an int64 key) and serves the turn's two keep calls and its box
call as table lookups. A
bounded store (:attr:`LookaheadStrategy.cache_size` positions, about 0.75 kB
each) keeps the plans of positions met in earlier batches of the same run:
a long run meets far fewer positions than games (many more under ``heuristic``,
whose key holds the exact upper total, than under ``greedy``). Plans depend only
on the position, so results do not depend on batching or on what the store holds.

>>> from yahtzee_sim import simulate
>>> g = simulate("yahtzee", "greedy", 2048, seed=1).summary()["mean"]
>>> k = simulate("yahtzee", "keep-largest", 2048, seed=1).summary()["mean"]
>>> bool(g > k)
True
"""

from __future__ import annotations

import numpy as np

from ..exact.widget import best_keeps
from .aims import card_aims
from .base import Strategy, default_announcement, register

__all__ = ["GreedyStrategy", "HeuristicStrategy", "LookaheadStrategy"]

DENSE_POSITIONS = 2**23
"""Largest number of positions (open boxes x upper-total key x five box) given a
direct index (4 bytes each) instead of a sorted one."""


def _unique(keys: np.ndarray):
    """``np.unique(keys, return_index=True, return_inverse=True)`` with a quicksort
    (any game of a position may represent it, so no stable sort is needed); keys of
    several int64 fields (:data:`PAIR_KEY`) are sorted field by field.

    >>> u, first, inv = _unique(np.array([7, 3, 7, 5]))
    >>> u.tolist(), bool((u[inv] == [7, 3, 7, 5]).all()), bool((u == np.array([7, 3, 7, 5])[first]).all())
    ([3, 5, 7], True, True)
    >>> _unique(_pair_keys(np.array([2, 1, 2]), np.array([0, 9, 0])))[0].tolist()
    [(1, 9), (2, 0)]
    """
    names = keys.dtype.names
    order = np.lexsort([keys[f] for f in reversed(names)]) if names else np.argsort(keys)
    sorted_keys = keys[order]
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    if names:
        new[1:] = sorted_keys[1:] != sorted_keys[:-1]
    else:
        np.not_equal(sorted_keys[1:], sorted_keys[:-1], out=new[1:])
    inv = np.empty(len(keys), dtype=np.intp)
    inv[order] = np.cumsum(new) - 1
    return sorted_keys[new], order[new], inv


def _distinct_rows(columns: list) -> tuple[np.ndarray, np.ndarray]:
    """A representative row of each distinct combination of the ``(n,)`` arrays
    ``columns``, and each row's combination (``first``, ``inverse`` of :func:`_unique`).

    >>> first, inv = _distinct_rows([np.array([1, 1, 2, 1]), np.array([0.5, 0.5, 0.5, 0.5])])
    >>> inv[first].tolist(), inv.tolist()
    ([0, 1], [0, 0, 1, 0])
    """
    n = len(columns[0])
    code, size = np.zeros(n, dtype=np.int64), 1          # codes 0 .. size - 1
    for col in columns:
        col = np.asarray(col)
        if n and (col != col[0]).any():               # a constant column changes nothing
            values, codes = np.unique(col, return_inverse=True)
            if size * len(values) >= 2**62:           # renumber what is there first
                _, _, code = _unique(code)
                size = int(code.max()) + 1
            code, size = code * len(values) + codes.reshape(-1), size * len(values)
    _, first, inv = _unique(code)
    return first, inv


PAIR_KEY = np.dtype([("key", "<i8"), ("progress", "<i8")])
"""Position keys of strategies whose values read more of the card than fits one int64
(:meth:`LookaheadStrategy.progress_key`): the usual key, then the progress code."""


def _pair_keys(keys: np.ndarray, progress: np.ndarray) -> np.ndarray:
    out = np.empty(len(keys), dtype=PAIR_KEY)
    out["key"], out["progress"] = keys, progress
    return out


class LookaheadStrategy(Strategy):
    """Base of the one-turn lookahead strategies.

    A subclass defines :meth:`box_value` (the worth of writing a roll in a box)
    and, if that worth depends on more of the state than the open boxes, the
    upper total's part of the position key (:meth:`upper_key`). Everything else
    (the exact keep choice, caching, jokers and fill order through
    ``rules.turn_options``) is shared.

    >>> from yahtzee_sim.rules import get_rules
    >>> from yahtzee_sim.state import GameState
    >>> s = GreedyStrategy().prepare(get_rules("yahtzee"))
    >>> state = GameState.new(get_rules("yahtzee"), 1)
    >>> d = s.dice
    >>> roll = np.array([d.roll_index_of([6, 6, 6, 6, 2])])
    >>> d.keep_counts[s.keep(state, roll, 2, np.zeros(1))].tolist()   # go for the Yahtzee
    [[0, 0, 0, 0, 0, 4]]
    """

    name = "lookahead"
    uses_uniforms = False
    #: positions whose plans are kept between batches (0 disables the cache)
    cache_size: int = 250_000     # about 0.75 kB each
    #: positions planned at once (bounds the temporary arrays)
    plan_chunk: int = 8192

    def prepare(self, rules):
        super().prepare(rules)
        b = rules.n_boxes
        self._bits = (np.int64(1) << np.arange(b, dtype=np.int64))
        self._key_layout(rules)
        self._upper_count = int(self.upper_key_count())
        self._progress = bool(self.uses_progress(rules))
        size = (1 << self._width) * self._upper_count * 2
        self._dense_size = size if (self._columns is None and not rules.announces and not self._progress
                                    and size <= DENSE_POSITIONS) else 0
        self._score_f = np.ascontiguousarray(rules.score_table.T, dtype=np.float32)   # (B, R)
        self._five_rolls = np.flatnonzero(rules.five_face > 0)   # rolls that may trigger a joker/bonus
        self._special = rules.five_box is not None and (rules.joker != "none" or rules.five_bonus > 0)
        d = self.dice
        if d.subkeeps.shape[1] > 255:
            raise ValueError(f"{self.name}: at most 255 distinct keeps per roll are supported")
        # rank of keep k among the sub-keeps of roll r (plans are stored as uint8 ranks)
        self._rank = np.full((d.n_rolls, d.n_keeps), 255, dtype=np.uint8)
        r_idx, s_idx = np.nonzero(d.subkeeps >= 0)
        self._rank[r_idx, d.subkeeps[r_idx, s_idx]] = s_idx
        self._twins = LookaheadStrategy.twin_boxes(self, rules)   # a subclass may set its own
        self._with_values = bool(self.keeps_turn_values(rules))
        self._reset_cache(rules.n_rolls - 1)
        return self

    # -- what a subclass decides ------------------------------------------------------
    def upper_key(self, upper_total: np.ndarray, filled: np.ndarray) -> np.ndarray:
        """Part of the position key that stands for the upper total (int64, < 2**9)."""
        return np.zeros(len(upper_total), dtype=np.int64)

    def upper_key_count(self) -> int:
        """How many values :meth:`upper_key` can take (0 .. count - 1); it sizes the
        direct position index (:meth:`_plans`)."""
        return 1

    def twin_boxes(self, rules) -> list:
        """Runs of consecutive boxes (lists of indices, in card order, covering the card)
        that the values treat alike: any open box of a run is worth what its first box
        would be worth (:meth:`plain_box_value` of the run's first box stands for the
        open ones, and the first open one takes the roll). Default: every box alone."""
        return [[b] for b in range(rules.n_boxes)]

    def keeps_turn_values(self, rules) -> bool:
        """Does the plan store keep, beside the keeps, each position's expected worth of
        the turn from every first roll (:attr:`_values`, 1 kB a position)? For a
        subclass that compares the plan with other choices (Yamb's announcements)."""
        return False

    def uses_progress(self, rules) -> bool:
        """Do the values read the card's progress (:meth:`progress_key`) besides the open boxes?"""
        return False

    def progress_key(self, filled: np.ndarray, box_scores: np.ndarray) -> np.ndarray:
        """(N,) int64: the part of the card the values read beyond the usual key (the
        points written so far, as far as they matter), a second field of the position
        key when :meth:`uses_progress`; :meth:`context` receives it as ``progress``."""
        raise NotImplementedError

    def context(self, filled: np.ndarray, upper_total: np.ndarray, five_box_full: np.ndarray,
                progress: np.ndarray | None = None) -> dict:
        """Per-position ``(n,)`` arrays that the value functions read."""
        return {"upper": np.minimum(upper_total, self.rules.upper_bonus_threshold).astype(np.int32)}

    def box_values(self, ctx: dict, scores: np.ndarray, gain: np.ndarray) -> np.ndarray:
        """(n, B) float32 worth of writing the final roll in each box.

        ``scores`` and ``gain`` are ``TurnOptions.scores`` / ``.gain`` of n positions
        (``ctx`` arrays are ``(n,)``). Legality is applied by the caller.
        """
        raise NotImplementedError

    def plain_box_value(self, box: int, ctx: dict) -> np.ndarray:
        """Worth ``(U, R)`` (or broadcastable to it) of every roll in ``box`` for U positions,
        for rolls that are not five of a kind (no joker, no Yahtzee bonus: ``gain`` is
        the plain score plus the upper bonus if it completes it). ``ctx`` arrays are
        ``(U, 1)``. Must agree with :meth:`box_values` on those rolls (tested)."""
        raise NotImplementedError

    def _plain_gain(self, box: int, ctx: dict) -> np.ndarray:
        """``TurnOptions.gain`` of every roll in ``box`` when no joker or Yahtzee bonus applies."""
        rules = self.rules
        s = self._score_f[box][None, :]
        if rules.upper_bonus and rules.is_upper[box]:
            upper, thr = ctx["upper"], rules.upper_bonus_threshold
            return s + np.where((upper < thr) & (upper + s >= thr), np.float32(rules.upper_bonus), np.float32(0))
        return s

    # -- position keys and plans -------------------------------------------------------
    def _key_layout(self, rules) -> None:
        """Bits of the int64 position key: the open boxes (one bit each, or for a Down/Up
        column of Yamb just how many are filled, since they fill in order), the upper
        total's part (9 bits), the five box (1) and the announced box (Yamb)."""
        self._columns = None
        width = rules.n_boxes
        if rules.columns:
            self._columns, width = [], 0
            for cols, order in rules._column_indices:
                size = len(cols)
                bits = int(size + 1).bit_length() if order in ("down", "up") else size
                self._columns.append((cols, order in ("down", "up"), width,
                                      np.int64(1) << np.arange(size, dtype=np.int64)))
                width += bits
        self._width = width
        self._announce_rank = np.full(rules.n_boxes, -1, dtype=np.int64)
        announce_bits = 0
        if rules.announces:
            ann = np.flatnonzero(rules.is_announce)
            self._announce_rank[ann] = np.arange(len(ann))
            announce_bits = int(len(ann) + 1).bit_length()
        if width + 10 + announce_bits > 63:
            raise ValueError(f"{self.name}: the position of {rules.key} does not fit a 63-bit key "
                             f"({rules.n_boxes} boxes)")

    def _keys(self, state) -> np.ndarray:
        w = self._width
        if self._columns is None:
            filled = state.filled
            if filled.flags.f_contiguous:   # one contiguous column per box
                key = np.zeros(len(filled), dtype=np.int64)
                for b in range(filled.shape[1]):
                    key |= filled[:, b].astype(np.int64) << b
            else:
                key = filled.view(np.uint8) @ self._bits if filled.flags.c_contiguous \
                    else filled.astype(np.int64) @ self._bits
                key = key.astype(np.int64, copy=False)
        else:
            key = np.zeros(len(state.filled), dtype=np.int64)
            for cols, counted, shift, bits in self._columns:
                part = state.filled[:, cols]
                code = part.sum(axis=1, dtype=np.int64) if counted else part.astype(np.int64) @ bits
                key |= code << shift
        key |= self.upper_key(state.upper_total, state.filled) << w
        key |= state.five_box_full.astype(np.int64) << (w + 9)
        if state.announced is not None:
            said = state.announced >= 0
            key |= np.where(said, self._announce_rank[np.maximum(state.announced, 0)] + 1, 0) << (w + 10)
        return key

    def _decode(self, keys: np.ndarray, state, first: np.ndarray):
        """Representative arrays of each distinct position (taken from its first game)."""
        announced = None if state.announced is None else state.announced[first]
        return state.filled[first], state.upper_total[first], state.five_box_full[first], announced

    def final_values(self, filled, upper_total, five_box_full) -> np.ndarray:
        """(U, R) float32: worth of ending the turn with each roll, for U positions.

        See :meth:`final_values_and_boxes`.

        >>> from yahtzee_sim.rules import get_rules
        >>> s = GreedyStrategy().prepare(get_rules("yahtzee"))
        >>> v = s.final_values(np.zeros((1, 13), bool), np.zeros(1, np.int16), np.zeros(1, bool))
        >>> float(v[0, s.dice.roll_index_of([6, 6, 6, 6, 6])]), float(v[0, s.dice.roll_index_of([1, 1, 2, 3, 5])])
        (50.0, 12.0)
        """
        return self.final_values_and_boxes(filled, upper_total, five_box_full)[0]

    def final_values_and_boxes(self, filled, upper_total, five_box_full, announced=None, progress=None):
        """(U, R) float32 worth of ending the turn with each roll, and (U, R) uint8 the box
        that attains it (the first in card order on ties), for U positions.

        ``progress``: the positions' :meth:`progress_key` when the strategy uses one
        (None: that of cards whose filled boxes scored 0, as :meth:`GameState.from_arrays`).

        The ``max`` over the legal boxes of the box values of what
        ``rules.turn_options`` says for that roll. Rolls that are not five of a
        kind are computed box by box for all rolls at once (:meth:`plain_box_value`);
        the few five-of-a-kind rolls (jokers, bonuses) through ``turn_options``
        itself and :meth:`box_values`.

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yahtzee")
        >>> s = GreedyStrategy().prepare(r)
        >>> v, b = s.final_values_and_boxes(np.zeros((1, 13), bool), np.zeros(1, np.int16), np.zeros(1, bool))
        >>> r.box_names[b[0, s.dice.roll_index_of([2, 3, 4, 5, 5])]]
        'small_straight'
        """
        rules = self.rules
        n = len(filled)
        if self._progress and progress is None:
            progress = self.progress_key(filled, np.zeros(filled.shape, dtype=np.int16))
        ctx = self.context(filled, upper_total, five_box_full, progress)
        col = {k: v[:, None] for k, v in ctx.items()}
        legal = np.ascontiguousarray(rules.legal_boxes(filled, announced))
        values = np.full((n, self.dice.n_rolls), -np.inf, dtype=np.float32)
        boxes = np.zeros((n, self.dice.n_rolls), dtype=np.uint8)
        for twins in self._twins:
            b = twins[0]
            if len(twins) == 1:
                if legal[:, b].any():
                    v = self.plain_box_value(b, col)
                    better = v > values
                    better &= legal[:, b, None]          # an illegal box never improves
                    np.copyto(values, v, where=better)
                    np.copyto(boxes, np.uint8(b), where=better)
                continue
            # boxes worth the same in every position where they are open: valued once, and
            # the first open one (card order) takes the roll
            open_twins = legal[:, twins]
            some = open_twins.any(axis=1)
            if some.any():
                v = self.plain_box_value(b, col)
                better = v > values
                better &= some[:, None]
                np.copyto(values, v, where=better)
                np.copyto(boxes, (b + open_twins.argmax(axis=1)).astype(np.uint8)[:, None], where=better)
        if self._special and len(self._five_rolls):
            f = len(self._five_rolls)
            rep = np.repeat(np.arange(n), f)
            lg, sc, bo = rules.turn_options(filled[rep], five_box_full[rep], np.tile(self._five_rolls, n),
                                            announced=None if announced is None else announced[rep])
            gain = sc + rules.upper_bonus_gain(upper_total[rep], sc) + bo[:, None]
            v = self.box_values({k: a[rep] for k, a in ctx.items()}, sc, gain)
            v = np.where(lg, v, np.float32(-np.inf))
            b5 = v.argmax(axis=1)
            values[:, self._five_rolls] = v[np.arange(len(v)), b5].reshape(n, f)
            boxes[:, self._five_rolls] = b5.reshape(n, f)
        return values, boxes

    def _plans(self, state, levels: int) -> np.ndarray:
        """Per game: the row of its position's plan in ``self._store[j]`` (j rerolls left).

        Plans are computed once per distinct position: for the positions of the
        batch not met before (``np.unique`` of the keys, then a sorted-key lookup
        in the index of the positions at this turn) and kept in a bounded store.
        """
        cached = self._turn_cache
        if cached is not None and cached[0] is state and cached[1] == state.turn \
                and np.array_equal(cached[2], state.filled) and np.array_equal(cached[3], state.upper_total) \
                and np.array_equal(cached[4], state.five_box_full) \
                and (state.announced is None or np.array_equal(cached[6], state.announced)) \
                and (not self._progress or np.array_equal(cached[7], state.box_scores)):
            return cached[5]                    # same position arrays as the turn's first call
        keys = self._keys(state)
        if self._progress:
            keys = _pair_keys(keys, self.progress_key(state.filled, state.box_scores))
        if self._dense_size:
            game_rows = self._dense_rows(state, levels, keys)
        else:
            game_rows = self._sorted_rows(state, levels, keys)
        self._turn_cache = (state, state.turn, state.filled.copy(order="K"), state.upper_total.copy(),
                            state.five_box_full.copy(), game_rows,
                            None if state.announced is None else state.announced.copy(),
                            state.box_scores.copy() if self._progress else None)
        return game_rows

    def _dense_rows(self, state, levels: int, keys: np.ndarray) -> np.ndarray:
        """:meth:`_plans` through a direct index of every position (small cards): one
        lookup per game, and a sort only of the games whose position is new."""
        w = self._width
        index = (keys & ((1 << w) - 1)) + ((((keys >> w) & 511) + self._upper_count * ((keys >> (w + 9)) & 1)) << w)
        if self._levels != levels:
            self._reset_cache(levels)
        rows = np.take(self._dense, index)
        new = np.flatnonzero(rows < 0)
        if len(new):
            uniq, first = np.unique(index[new], return_index=True)
            first = new[first]
            if self._used + len(uniq) > max(self.cache_size, 1):
                self._reset_cache(levels)
                uniq, first = np.unique(index, return_index=True)
            self._dense[uniq] = self._plan_rows(state, levels, keys[first], first)
            rows = np.take(self._dense, index)
        return rows.astype(np.intp)

    def _plan_rows(self, state, levels: int, keys: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Plan the positions of games ``first`` (keys ``keys``); their rows in the store."""
        new_rows = []
        for lo in range(0, len(first), self.plan_chunk):     # bounded temporaries
            part = slice(lo, lo + self.plan_chunk)
            fl, up, full, ann = self._decode(keys[part], state, first[part])
            progress = keys[part]["progress"] if self._progress else None
            values, boxes = self.final_values_and_boxes(fl, up, full, ann, progress)
            plan = best_keeps(self.dice, values, rolls_left=levels)
            new_rows.append(self._append(plan.keeps, boxes, plan.values[levels] if self._with_values else None))
        return np.concatenate(new_rows)

    def _sorted_rows(self, state, levels: int, keys: np.ndarray) -> np.ndarray:
        """:meth:`_plans` through the sorted keys of each turn's positions (any card)."""
        uniq, first, inv = _unique(keys)
        if self._used + len(uniq) > max(self.cache_size, 1) or self._levels != levels:
            self._reset_cache(levels)
        rows = np.full(len(uniq), -1, dtype=np.intp)
        seg = self._index.get(state.turn)
        if seg is not None:
            seg_keys, seg_rows = seg
            pos = np.minimum(np.searchsorted(seg_keys, uniq), len(seg_keys) - 1)
            hit = seg_keys[pos] == uniq
            rows[hit] = seg_rows[pos[hit]]
        miss = np.flatnonzero(rows < 0)
        if len(miss):
            new_rows = self._plan_rows(state, levels, uniq[miss], first[miss])
            rows[miss] = new_rows
            all_keys = uniq[miss] if seg is None else np.concatenate([seg[0], uniq[miss]])
            all_rows = new_rows if seg is None else np.concatenate([seg[1], new_rows])
            order = np.argsort(all_keys)
            self._index[state.turn] = (all_keys[order], all_rows[order])
        return rows[inv]

    def _reset_cache(self, levels: int = 0):
        self._levels = levels
        # _store[0]: best box of each final roll; _store[j]: keep with j rerolls left
        self._store = [np.empty((0, self.dice.n_rolls), np.uint8) for _ in range(levels + 1)]
        self._used = 0
        # with keeps_turn_values: the worth of the turn from each first roll, by store row
        self._values = np.empty((0, self.dice.n_rolls), np.float32) if self._with_values else None
        self._index = {}
        self._turn_cache = None
        # Cards with few positions: a direct index position -> store row (-1 = not planned).
        self._dense = np.full(self._dense_size, -1, dtype=np.int32) if self._dense_size else None

    def _append(self, keeps: list, boxes: np.ndarray, values: np.ndarray | None = None) -> np.ndarray:
        m = len(boxes)
        cap = len(self._store[0])
        if self._used + m > cap:
            # np.empty does not touch memory: a large store costs only what is filled
            new_cap = max(self._used + m, self.cache_size)
            for j in range(len(self._store)):
                grown = np.empty((new_cap, self.dice.n_rolls), np.uint8)
                grown[:self._used] = self._store[j][:self._used]
                self._store[j] = grown
            if self._values is not None:
                grown = np.empty((new_cap, self.dice.n_rolls), np.float32)
                grown[:self._used] = self._values[:self._used]
                self._values = grown
        if self._values is not None:
            self._values[self._used:self._used + m] = values
        self._store[0][self._used:self._used + m] = boxes
        roll = np.arange(self.dice.n_rolls)[None, :] * self.dice.n_keeps
        rank = self._rank.reshape(-1)
        for j in range(1, len(self._store)):   # stored as the rank among the roll's sub-keeps
            self._store[j][self._used:self._used + m] = np.take(rank, roll + keeps[j])
        rows = np.arange(self._used, self._used + m)
        self._used += m
        return rows

    def __getstate__(self):
        """Pickle without the plan cache (workers rebuild their own)."""
        state = self.__dict__.copy()
        for k in ("_store", "_index", "_turn_cache", "_used", "_dense", "_values"):
            state.pop(k, None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "rules" in state:
            self._reset_cache(self.rules.n_rolls - 1)

    # -- the two decisions ---------------------------------------------------------------
    def keep(self, state, rolls, rolls_left, u):
        rows = self._plans(state, self.rules.n_rolls - 1)
        rolls = np.asarray(rolls, dtype=np.intp)
        rank = np.take(self._store[rolls_left].reshape(-1), rows * self.dice.n_rolls + rolls)
        subkeeps = self.dice.subkeeps
        return np.take(subkeeps.reshape(-1), rolls * subkeeps.shape[1] + rank)

    def box(self, state, rolls, options, u):
        # The best box of each (position, final roll) was found with the plan; same
        # values as :meth:`box_values` on ``options`` (tested), first box on ties.
        rows = self._plans(state, self.rules.n_rolls - 1)
        rolls = np.asarray(rolls, dtype=np.intp)
        return np.take(self._store[0].reshape(-1), rows * self.dice.n_rolls + rolls).astype(np.intp)


@register
class GreedyStrategy(LookaheadStrategy):
    """Maximize this turn's expected points: exact one-turn expectation for the
    keeps, the box that gains most now (bonuses included) at the end.

    The position key needs only the open boxes, the Yahtzee box state and how
    far the upper total is from the bonus when one box could reach it.
    """

    name = "greedy"
    description = "exact one-turn expectation of the points gained this turn"

    def upper_key(self, upper_total, filled):
        rules = self.rules
        if not rules.upper_bonus:
            return np.zeros(len(upper_total), dtype=np.int64)
        need = rules.upper_bonus_threshold - upper_total.astype(np.int64)
        return np.where((need >= 1) & (need <= rules.max_upper_box), need, 0)

    def upper_key_count(self):
        return self.rules.max_upper_box + 1 if self.rules.upper_bonus else 1

    def box_values(self, ctx, scores, gain):
        return gain.astype(np.float32)

    def plain_box_value(self, box, ctx):
        return self._plain_gain(box, ctx)


@register
class HeuristicStrategy(LookaheadStrategy):
    """A sensible human player: the one-turn lookahead of ``greedy`` with a box
    value that follows the seeds' advice (seed 003's "Strategia semplice" and
    seed 001's four "ヨットで勝つためのコツ"). Writing a roll in box b is worth::

        points now (Yahtzee bonus included, upper bonus excluded)
        + change of the upper-bonus outlook            (upper boxes)    tip A
        - reserve: what keeping the box open is worth  (every box)      tips B, C
        + future Yahtzee bonuses a 50 makes possible   (Yahtzee box)    tip D
        + change of the end-of-game goals' outlook     (Balut, Yamb)    G, H

    A. Seed 003 "Punta al bonus da subito", seed 001 "1〜6の目は各3つをめざす": the
       par of an upper box is three dice of its face (3 + 6 + ... + 18 = 63). The
       bonus outlook is ``bonus * P(final upper total >= 63)`` where each open
       upper box is modelled as a hunt for its face (binomial number of dice,
       ``upper_rolls`` rolls, about par on average). Four sixes (+6 over par)
       make up for two ones: the outlook moves with the surplus over par.
    B. Seed 003 "Tieni la Libera per le emergenze", seed 001 tip 4 "大きな目の
       チョイスはもったいない": each open box has a reserve proportional to what a
       whole turn aimed at it is worth (computed exactly from the dice tables);
       Chance's reserve is high, so it takes a roll only when the other boxes
       would lose more.
    C. Seed 003 "Sappi dove mettere uno zero: gli Assi o lo Yahtzee a fine
       partita", seed 001 tip 3 "捨てる欄を決めておく": a zero costs the box's
       reserve. Ones have the smallest upper reserve; the five-of-a-kind box's
       reserve is the chance of still rolling one in the turns left, so late in
       the game it is the cheapest zero.
    D. Seed 003 "Non inseguire lo Yahtzee troppo a lungo": the lookahead weighs
       the exact chance of five of a kind this turn against the sure points of
       other boxes; the extra worth of a 50 (later +100 bonuses, when the rules
       have them) shrinks with the turns left.
    E. Seed 003 "Cerca le scale con i numeri centrali", seed 001 tip 2 "4つ続いたら
       両端を待つ": no rule needed, the exact keep expectation holds 3-4 and
       open-ended runs when a straight is worth chasing.

    The rest of the family, what it aims for in each:

    F. Kismet: the bonus outlook sums the three tiers (each step's bonus times the
       chance of reaching it).
    G. Yamb, won on the score: the score is (Max - Min) x Ones plus the rows, so a point
       is worth more in some boxes than others; each box is weighted by the change of
       the card score for one more point, around a card of aimed values (a point of
       Ones is worth 1 + the typical Max - Min, about 12; a point of Min costs the
       typical Ones, so it aims low there). Each column's upper bonus (+30 when its six
       upper rows reach 60) is a goal (below). After the first throw it announces the
       Announce box whose turn, aimed at it from those dice, is worth most (its points,
       reserve and goals: the exact expectation over the two rerolls) when that beats
       the turn's plan without an announcement, or when it must (only Announce boxes
       open; ``announce_by_choice = False``: only then); plans follow the announcement.
    H. Balut, won on points: it plays for points, counted at 50 score points each (the
       score adds one point per band of 50): a Balut box that is not zero is worth 2
       points more, and its reserve is what it may still bring: with k Balut boxes open
       and T turns left, its worth times P(at least k of the T turns make five of a
       kind), at ``each_rate`` times the chance of an aimed turn (tip C for four boxes).
       The category totals (Fours 52, Fives 65, Sixes 78, Choice 100: 2 points each)
       and the all-non-zero Straight (4) and Full house (3) columns are goals. It gives
       up score for points (benchmarks/RESULTS.md, "heuristic's goals").
    I. Maxi Yatzy: saved throws are spent only when they would be wasted (the default
       :meth:`Strategy.keep_banked`), so the plan of each turn is the three-throw one.
    J. Generala: plans use the points of the final throw; a served combination is a
       bonus it takes when the first throw already fits (holding then is the best keep).

    Goals (G, H; ``strategies/aims.py`` reads them from the rule set): like the upper
    bonus (tip A), each adds ``worth * P(reached)`` to the card, and writing a roll in
    one of its boxes is worth the change. A *total* goal's chance is that of the total
    so far plus its open boxes reaching the threshold, each open box ending like a turn
    of ``total_throws`` throws aimed at it (exact distributions from the dice tables). A
    *full* goal's chance, with k of its boxes open and T turns left, is P(at least k of
    the T turns make a non-zero for it) at ``full_rate`` times an aimed turn's chance; 0
    once one of its boxes is zero. The goals' progress (points so far, as far as a goal
    is still open) is part of each plan's position. ``aim_card = False`` turns the goals
    off: the heuristic as it was before them. The other rule sets have no goals; their
    plans are unchanged.

    The knobs below were tuned by simulation on ``yahtzee`` (common random
    numbers, see ``benchmarks/tune_heuristic.py``) and are multipliers of
    quantities computed from each rule set, so they carry over to the others;
    ``total_throws``, ``full_rate`` and ``each_rate`` on Balut's points and Yamb's score.

    >>> from yahtzee_sim import simulate
    >>> bool(simulate("yahtzee", "heuristic", 2048, seed=3).summary()["mean"] > 235)
    True
    """

    name = "heuristic"
    description = "one-turn lookahead with the seeds' advice: upper bonus, reserves, where to zero"

    #: tuning knobs (found by simulation, see benchmarks/tune_heuristic.py)
    reserve_upper: float = 0.5625  # upper box reserve, times its one-turn aimed value
    reserve_lower: float = 1.25    # lower box reserve, times its one-turn aimed value
    reserve_chance: float = 0.875  # Chance's reserve, times its one-turn aimed value (tip B)
    five_rate: float = 2.125       # per-turn rate of five of a kind, times the aimed rate
    upper_rolls: float = 4.625     # bonus outlook: an open upper box ends like a hunt for its
                                   # face with this many rolls (5 rolls: 3 dice on average = par)
    #: aim at what the card pays at the end (Balut's points, Yamb's column bonuses: G, H);
    #: False plays as before these goals (the other rule sets have none: no change either way)
    aim_card: bool = True
    total_throws: int = 5          # a total goal's open box ends like a turn of this many throws aimed at it
    full_rate: float = 0.5         # per-turn rate of a non-zero in a full goal's box, times an aimed turn's
    each_rate: float = 1.25        # per-turn rate of filling a box paid when non-zero (each Balut),
                                   # times the chance of an aimed turn
    #: Yamb: announce whenever it beats the turn's plan (False: only when the turn must,
    #: about three times faster, and about 60 points a game lower)
    announce_by_choice: bool = True

    def prepare(self, rules):
        super().prepare(rules)
        d = self.dice
        # What one whole turn aimed at each box alone is worth: the exact
        # expectation over the dice tables (e.g. Chance ~23.3, Yahtzee ~2.3).
        plan = best_keeps(d, rules.score_table.T.astype(np.float64), rolls_left=rules.n_rolls - 1)
        self.aimed = plan.values[rules.n_rolls - 1] @ d.first_roll_prob
        self.card_weight = self._card_weights(rules)
        self.aims = card_aims(rules) if self.aim_card else None
        if self.aims is not None and (int(self.total_throws) != self.total_throws or self.total_throws < 1):
            raise ValueError(f"{self.name}: total_throws must be a whole number of throws, 1 or more "
                             f"(got {self.total_throws})")
        each = self.aims.each if self.aims is not None else np.zeros(rules.n_boxes)
        self._score_adjusted = bool((self.card_weight != 1).any() or each.any())
        if self._score_adjusted:   # a card scored as a whole (Yamb, Balut): box points by their worth
            worth = rules.score_table.T * self.card_weight[:, None]
            if each.any():         # a box that also pays when non-zero (each Balut)
                worth = worth + each[:, None] * (rules.score_table.T > 0)
            self._score_f = np.ascontiguousarray(worth, dtype=np.float32)
            plan = best_keeps(d, self._score_f.astype(np.float64), rolls_left=rules.n_rolls - 1)
            self.aimed = plan.values[rules.n_rolls - 1] @ d.first_roll_prob
        weight = np.where(rules.is_upper, self.reserve_upper, self.reserve_lower)
        # Chance / Choice: the box that takes the sum of any roll
        dice_sum = (d.roll_counts * np.arange(1, d.n_faces + 1)).sum(axis=1)
        weight[(rules.score_table == dice_sum[:, None]).all(axis=0)] = self.reserve_chance
        turns = np.arange(rules.n_boxes, dtype=np.float64)      # turns left after this one
        self._five_reserve = np.zeros(rules.n_boxes, np.float32)
        self._five_future = np.zeros(rules.n_boxes, np.float32)
        if rules.five_box is not None:
            # tip C: the five-of-a-kind box is worth keeping open only while there are
            # turns left to roll one: reserve = points * P(at least one in the turns left),
            # at a per-turn rate proportional to the exact chance when hunting it.
            five = (rules.five_face > 0).astype(np.float64)
            p = best_keeps(d, five[None, :], rolls_left=rules.n_rolls - 1).values[rules.n_rolls - 1]
            rate = min(1.0, float(p[0] @ d.first_roll_prob) * self.five_rate)
            weight[rules.five_box_index] = 0.0
            self._five_reserve[:] = rules.five_box_points * (1 - (1 - rate) ** turns)
            # tip D: a full five-of-a-kind box makes each later one worth the bonus
            self._five_future[:] = rules.five_bonus * rate * turns
        self.reserve = (weight * self.aimed).astype(np.float32)
        self._upper_cols = np.flatnonzero(rules.is_upper)
        self._upper_bits = (1 << np.arange(len(self._upper_cols))).astype(np.int64)
        self._upper_val = self._upper_tables()
        self._upper_tab = np.stack([self._upper_val[b] for b in self._upper_cols]) \
            if len(self._upper_cols) else None
        masks = self._upper_tab.shape[1] if self._upper_tab is not None else 1
        self._col_offset = np.arange(len(self._upper_cols))[None, :] * masks
        self._top_by_col = (rules.n_dice * rules.upper_face[self._upper_cols]).astype(np.int64)
        self._counts = {int(b): (rules.score_table[:, b] // rules.upper_face[b]).astype(np.intp)
                        for b in self._upper_cols}
        self._goal_tables(rules)
        self._twins = self.twin_boxes(rules)
        if self._with_values:
            # the turn values (1 kB a position) would more than double the store; Yamb's
            # positions rarely repeat, so a quarter of it costs little speed (20,000 games:
            # 19.4 CPU s instead of 18.6) and about 300 MB less
            self.cache_size = min(self.cache_size, type(self).cache_size // 4)
            self._reset_cache(rules.n_rolls - 1)
        return self

    def twin_boxes(self, rules):
        """With goals (Balut): the boxes of one category, which share their points, their
        reserve and a goal whose open boxes all end alike. Without goals: every box alone
        (the other rule sets' plans are computed exactly as before)."""
        if self.aims is None or rules.columns or rules.five_box is not None:
            return super().twin_boxes(rules)
        tables = rules.score_tables
        goals = {b: [g[:2] for g in self._goals_of_box.get(b, [])] for b in range(rules.n_boxes)}
        runs = [[0]]
        for b in range(1, rules.n_boxes):
            a = runs[-1][-1]
            alike = (np.array_equal(tables[..., a], tables[..., b]) and self.reserve[a] == self.reserve[b]
                     and self.card_weight[a] == self.card_weight[b] and self.aims.each[a] == self.aims.each[b]
                     and rules.is_upper[a] == rules.is_upper[b] and goals[a] == goals[b]
                     and all(self._symmetric[g] for g in goals[a]))
            if alike:
                runs[-1].append(b)
            else:
                runs.append([b])
        return runs

    def _final_roll_probs(self, values: np.ndarray, rolls_left: int) -> np.ndarray:
        """(B, R) chance of each final roll of a turn that aims at each row of ``values``
        (B, R) with ``rolls_left`` rerolls (the exact plan of :func:`best_keeps`)."""
        d = self.dice
        plan = best_keeps(d, values, rolls_left=rolls_left)
        reach = d.first_roll_prob[None, :].repeat(len(values), axis=0)
        for j in range(rolls_left, 0, -1):
            keeps = plan.keeps[j]                       # (B, R) keep of each roll
            nxt = np.zeros_like(reach)
            for b in range(len(values)):
                nxt[b] = reach[b] @ d.transition[keeps[b]]
            reach = nxt
        return reach

    def _goal_tables(self, rules) -> None:
        """Items G, H: the outlook of each goal of :attr:`aims` (worth times the chance of
        reaching it), by the goal's open boxes (a bit mask in goal order, or how many when
        they all end alike) and progress.

        Model: each open box of a total goal ends like a turn of ``total_throws`` throws
        aimed at its points alone (the exact distribution from the dice tables); the
        outlook is ``worth * P(total so far + sum of its open boxes >= threshold)``. A
        full goal's (while none of its boxes is zero), by turns left T and open boxes k:
        ``worth * P(Binomial(T, rate) >= k)``, ``rate`` = ``full_rate`` times the chance
        that a turn aimed at one of its boxes makes it non-zero. Balut boxes' reserves
        (each Balut) alike with ``each_rate``.
        """
        self._raw = rules.score_table.T.astype(np.int64)                      # (B, R) points
        self._goals_of_box = {}
        self._radices, self._total_tabs, self._full_tabs = [], [], []
        self._symmetric = {}                   # goal: do all its open boxes end alike?
        if self.aims is None:
            return
        from scipy.stats import binom

        raw = self._raw
        self._box_max = raw.max(axis=1)
        self._goal_points = {}                 # goal box: (distinct points, index of each roll's)
        self._goal_first = {}                  # goal box: a roll scoring each of those points
        goal_boxes = np.flatnonzero(self.aims.goal_boxes)
        reach = {}
        for throws in {self.total_throws, rules.n_rolls}:
            probs = self._final_roll_probs(raw[goal_boxes].astype(np.float64), throws - 1)
            reach[throws] = dict(zip(goal_boxes.tolist(), probs))
        for i, g in enumerate(self.aims.totals):
            size = int(self._box_max[g.boxes].sum()) + 1
            pmf = [np.bincount(raw[b], weights=reach[self.total_throws][int(b)], minlength=size) for b in g.boxes]
            dist = np.zeros((1 << len(g.boxes), size))
            dist[0, 0] = 1.0
            for m in range(1, len(dist)):
                low = (m & -m).bit_length() - 1           # one open box of the mask
                dist[m] = np.convolve(dist[m & (m - 1)], pmf[low])[:size]
            tail = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]                  # P(S >= s)
            need = g.threshold - np.arange(g.threshold + 1)                   # by total so far
            table = np.where(need[None, :] <= 0, 1.0, tail[:, np.clip(need, 0, size - 1)])
            table = np.where(need[None, :] >= size, 0.0, table)
            self._total_tabs.append((g.worth * table).astype(np.float32))
            self._symmetric[("total", i)] = all(np.array_equal(pmf[0], q) for q in pmf)
            self._radices.append(g.threshold + 1)
            for j, b in enumerate(g.boxes):
                self._goals_of_box.setdefault(int(b), []).append(("total", i, 1 << j))
        for i, g in enumerate(self.aims.full):
            q = np.mean([reach[rules.n_rolls][int(b)][raw[b] > 0].sum() for b in g.boxes])
            rate = min(1.0, float(q) * self.full_rate)
            turns = np.arange(rules.n_boxes)[:, None]
            k = np.arange(len(g.boxes) + 1)[None, :]
            self._full_tabs.append((g.worth * binom.sf(k - 1, turns, rate)).astype(np.float32))   # (T, k)
            self._radices.append(2)
            self._symmetric[("full", i)] = True
            for j, b in enumerate(g.boxes):
                self._goals_of_box.setdefault(int(b), []).append(("full", i, 1 << j))
        self._each_tabs, self._each_boxes = [], self._each_groups(rules)
        for i, boxes in enumerate(self._each_boxes):
            # a box paid when non-zero (each Balut) is kept open while a later turn may
            # still fill it: with k such boxes open and T turns left after this one, the
            # k-th is worth its points times P(at least k of the T turns make one), at a
            # per-turn rate each_rate times the chance of an aimed turn (like tip C).
            b = boxes[0]
            p = self._final_roll_probs(raw[b][None, :].astype(np.float64), rules.n_rolls - 1)[0]
            hit = raw[b] > 0
            rate = min(1.0, float(p[hit].sum()) * self.each_rate)
            worth = float((p * self._score_f[b])[hit].sum() / p[hit].sum())
            turns = np.arange(rules.n_boxes)[:, None]
            k = np.arange(len(boxes) + 1)[None, :]
            self._each_tabs.append((worth * binom.sf(k - 1, turns, rate)).astype(np.float32))   # (T, k)
            self._symmetric[("each", i)] = True
            for b in boxes:
                self._goals_of_box.setdefault(int(b), []).append(("each", i, boxes))
        for b in self._goals_of_box:
            points, first, which = np.unique(raw[b], return_index=True, return_inverse=True)
            self._goal_points[b], self._goal_first[b] = (points, which), first

    def _each_groups(self, rules) -> list:
        """Runs of consecutive boxes paid when non-zero, with the same points (Balut's four)."""
        groups = []
        for b in np.flatnonzero(self.aims.each > 0):
            if groups and groups[-1][-1] == b - 1 and self.aims.each[b] == self.aims.each[b - 1] \
                    and np.array_equal(rules.score_tables[..., b], rules.score_tables[..., b - 1]):
                groups[-1].append(int(b))
            else:
                groups.append([int(b)])
        return [np.array(g) for g in groups]

    def uses_progress(self, rules):
        return bool(self.aim_card and card_aims(rules) is not None)

    def keeps_turn_values(self, rules):
        # announce() compares the announcements with the plan's own worth
        return bool(rules.announces and self.announce_by_choice and self.uses_progress(rules))

    def announce(self, state, rolls, u):
        """Item G: the open announce box whose turn from these first dice is worth most
        (its box value, the exact expectation over the rerolls), when that beats the
        turn's plan without an announcement, or when the turn must announce; otherwise
        none. Without goals: the default (only when it must, the box the first dice
        score most in).

        >>> from yahtzee_sim.rules import get_rules
        >>> from yahtzee_sim.state import GameState
        >>> r = get_rules("yamb")
        >>> s = HeuristicStrategy().prepare(r)
        >>> state = GameState.from_arrays(r, ~r.is_announce[None, :], 0)    # only Announce open
        >>> roll = np.array([r.dice.roll_index_of([1, 1, 1, 5, 6])])
        >>> r.box_names[int(s.announce(state, roll, None)[0])]
        'announce_ones'
        >>> late = ~r.is_announce[None, :].copy()
        >>> late[0, r.box_index("free_ones")] = False        # Announce and one Free box open
        >>> state = GameState.from_arrays(r, late, 0)
        >>> r.box_names[int(s.announce(state, np.array([r.dice.roll_index_of([2, 3, 4, 5, 6])]), None)[0])]
        'announce_kenta'
        """
        rules = self.rules
        said = default_announcement(rules, state.filled, rolls)
        if self.aims is None:
            return said
        games = np.flatnonzero((~state.filled & rules.is_announce).any(axis=1))
        if not len(games):
            return said
        must = said[games] >= 0
        if not self.announce_by_choice:
            games, must = games[must], must[must]
            if not len(games):
                return said
        filled, rolls = state.filled[games], np.asarray(rolls)[games]
        upper, full = state.upper_total[games], state.five_box_full[games]
        progress = self.progress_key(filled, state.box_scores[games])
        last = rules.n_rolls - 1
        best = np.full(len(games), -np.inf)
        free = np.flatnonzero(~must)
        if len(free):   # what the turn is worth without an announcement: the plan's own worth
            plan_rows = self._plans(state, last)      # (the keeps of the games that do not announce)
            best[free] = self._values[plan_rows[games[free]], rolls[free]]
        # a box's value reads only its part of the context (its goals' progress): each
        # announce box's turn is planned once per distinct part (for the games where it
        # is open; the others never read it)
        ctx = self.context(filled, upper, full, progress)
        pick = np.full(len(games), -1, dtype=np.intp)
        for b in np.flatnonzero(rules.is_announce):
            rows = np.flatnonzero(~filled[:, b])
            if not len(rows):
                continue
            first, inv = _distinct_rows([ctx[k] for k in self._box_context(int(b), ctx)])
            value = self.plain_box_value(int(b), {k: a[first, None] for k, a in ctx.items()})
            value = np.ascontiguousarray(np.broadcast_to(value, (len(first), self.dice.n_rolls)), dtype=np.float32)
            turn = best_keeps(self.dice, value, rolls_left=last).values[last]
            worth = turn[inv[rows], rolls[rows]]
            better = worth > best[rows]                 # the first box in card order on ties
            best[rows[better]] = worth[better]
            pick[rows[better]] = b
        said[games] = pick
        return said

    def _box_context(self, box: int, ctx: dict) -> list:
        """The context entries :meth:`plain_box_value` of ``box`` reads: the shared ones and
        those of its goals."""
        own = []
        n_totals = len(self._total_tabs)
        for kind, i, _ in self._goals_of_box.get(box, ()):
            if kind == "each":
                own += ["turns_left", f"each_open{i}"]
            else:
                j = i if kind == "total" else n_totals + i
                own += [f"goal_mask{j}", f"goal{j}", f"goal_open{j}"] + (["turns_left"] if kind == "full" else [])
        return ["mask", "upper", "five_reserve", "five_future"] + own

    def progress_key(self, filled, box_scores):
        """Mixed-radix code of each goal's progress: a total goal's points so far (its
        threshold once reached or out of reach: nothing left to aim at), a full goal's
        "still possible" (no zero written and a box open)."""
        aims = self.aims
        code = np.zeros(len(filled), dtype=np.int64)
        for g in aims.totals:
            part = filled[:, g.boxes]
            total = box_scores[:, g.boxes].sum(axis=1, dtype=np.int64)       # open boxes hold 0
            reach = (~part).astype(np.int64) @ self._box_max[g.boxes]
            decided = (total >= g.threshold) | (total + reach < g.threshold)
            code = code * (g.threshold + 1) + np.where(decided, g.threshold, total)
        for g in aims.full:
            part = filled[:, g.boxes]
            alive = ~(part & (box_scores[:, g.boxes] == 0)).any(axis=1) & ~part.all(axis=1)
            code = code * 2 + alive
        return code

    def _goal_context(self, filled, progress) -> dict:
        parts, code = [], np.asarray(progress, dtype=np.int64)
        for radix in reversed(self._radices):
            parts.append(code % radix)
            code = code // radix
        parts.reverse()
        ctx = {}
        kinds = [("total", i) for i in range(len(self.aims.totals))] + [("full", i) for i in range(len(self.aims.full))]
        for i, (g, kind) in enumerate(zip(self.aims.totals + self.aims.full, kinds)):
            open_ = ~filled[:, g.boxes]
            if self._symmetric[kind]:   # only how many are open matters: the lowest bits stand for them
                ctx[f"goal_mask{i}"] = (np.int64(1) << open_.sum(axis=1, dtype=np.int64)) - 1
            else:
                ctx[f"goal_mask{i}"] = open_.astype(np.int64) @ (np.int64(1) << np.arange(len(g.boxes), dtype=np.int64))
            ctx[f"goal{i}"] = parts[i].astype(np.intp)
            ctx[f"goal_open{i}"] = open_.sum(axis=1).astype(np.intp)
        if self._each_tabs or self._full_tabs:
            ctx["turns_left"] = np.maximum(self.rules.n_boxes - 1 - filled.sum(axis=1), 0).astype(np.intp)
            for i, boxes in enumerate(self._each_boxes):
                ctx[f"each_open{i}"] = (~filled[:, boxes]).sum(axis=1).astype(np.intp)
        return ctx

    def _goal_change(self, box: int, ctx: dict, s: np.ndarray):
        """Change of the goals' outlook when ``box`` takes ``s`` points (broadcast with ctx)."""
        out = np.float32(0)
        n_totals = len(self._total_tabs)
        for kind, i, bit in self._goals_of_box.get(box, ()):
            if kind == "each":      # its reserve: the chance that a later turn still fills it
                out = out + (self.reserve[box] - self._each_tabs[i][ctx["turns_left"], ctx[f"each_open{i}"]])
                continue
            j = i if kind == "total" else n_totals + i
            m = ctx[f"goal_mask{j}"]
            rest = m >> 1 if self._symmetric[(kind, i)] else m & ~bit       # its open boxes after this one
            if kind == "total":
                tab = self._total_tabs[i]
                thr = tab.shape[1] - 1
                t = ctx[f"goal{j}"]
                after = tab.reshape(-1)[rest * (thr + 1) + np.minimum(t + s, thr)]
                out = out + (after - tab.reshape(-1)[m * (thr + 1) + t])
            else:
                tab, alive = self._full_tabs[i], ctx[f"goal{j}"]
                turns, k = ctx["turns_left"], ctx[f"goal_open{j}"]
                change = np.where(s > 0, tab[turns, np.maximum(k - 1, 0)], np.float32(0)) - tab[turns, k]
                out = out + np.where(alive == 1, change, np.float32(0))
        return out

    def _card_weights(self, rules) -> np.ndarray:
        """(B,) what a point in each box is worth to the final score: 1, except where the
        card is scored as a whole (Yamb's (Max - Min) x Ones): there the change of the
        card score for one more point in the box, around a card of one-turn aimed values
        (a point of Ones is worth 1 + the typical Max - Min; a point of Min costs the
        typical Ones)."""
        if rules.card_score is None:
            return np.ones(rules.n_boxes)
        d = self.dice
        raw = rules.score_table.T.astype(np.float64)
        weight = np.ones(rules.n_boxes)
        for _ in range(4):   # a box worth less with more points (Min) is aimed low: re-linearize
            # the raw points the aimed turn ends with: follow the plan's keeps exactly
            reach = self._final_roll_probs(raw * weight[:, None], rules.n_rolls - 1)
            typical = np.rint((reach * raw).sum(axis=1)).astype(np.int64)[None, :]
            base = int(rules.card_score(typical)[0])
            bumped = typical + np.eye(rules.n_boxes, dtype=np.int64)
            new = np.asarray(rules.card_score(bumped), dtype=np.float64) - base
            if np.array_equal(new, weight):
                break
            weight = new
        return weight

    def _outlook_table(self) -> np.ndarray:
        """Tip A: (M, thr + 1) bonus * P(final upper total >= thr) for each set of open
        upper boxes (bit mask over the upper boxes) and upper total so far (clipped);
        with several tiers (Kismet) the sum over tiers of each step's bonus times the
        chance of reaching its threshold.

        Model: each open upper box of face f ends with f * X points, X binomial
        (n_dice, 1 - (1 - 1/F)**upper_rolls): a hunt for that face with
        ``upper_rolls`` rolls. Five rolls give three dice on average, the par.
        """
        rules = self.rules
        thr = rules.upper_bonus_threshold
        faces = rules.upper_face[self._upper_cols].astype(np.int64)
        n = rules.n_dice
        from scipy.stats import binom

        pmf_x = binom.pmf(np.arange(n + 1), n, 1 - (1 - 1 / rules.n_faces) ** self.upper_rolls)
        size = int(faces.sum()) * n + 1
        dist = np.zeros((1 << len(faces), size))
        dist[0, 0] = 1.0
        for m in range(1, 1 << len(faces)):
            low = (m & -m).bit_length() - 1           # one open box of the mask
            rest = dist[m & (m - 1)]
            for x, px in enumerate(pmf_x):
                dist[m, x * faces[low]:] += px * rest[: size - x * faces[low]]
        tail = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]   # P(S >= s)
        out = np.zeros((len(dist), thr + 1))
        held = 0
        for tier_threshold, tier_bonus in rules.upper_bonus_tiers:   # one tier in most games
            need = tier_threshold - np.arange(thr + 1)
            table = np.where(need[None, :] <= 0, 1.0, tail[:, np.clip(need, 0, size - 1)])
            table = np.where(need[None, :] >= size, 0.0, table)
            out += (tier_bonus - held) * table                     # each step's worth times its chance
            held = tier_bonus
        return out.astype(np.float32)

    def _upper_tables(self) -> list:
        """Per upper box: value (M, thr + 1, n_dice + 1) of writing c dice of its face,
        by open-upper mask and upper total: points - reserve + change of outlook."""
        rules = self.rules
        thr = rules.upper_bonus_threshold
        outlook = self._outlook_table() if rules.upper_bonus else None
        # without an upper bonus the open upper boxes and the upper total do not matter
        m = np.arange(1 << len(self._upper_cols)) if rules.upper_bonus else np.zeros(1, dtype=np.int64)
        u = np.arange(thr + 1) if rules.upper_bonus else np.zeros(1, dtype=np.int64)
        c = np.arange(rules.n_dice + 1)
        tables = {}
        for j, b in enumerate(self._upper_cols):
            f = int(rules.upper_face[b])
            pts = (c * f * self.card_weight[b]).astype(np.float32)
            val = np.broadcast_to(pts, (len(m), len(u), len(c))).copy()
            if outlook is not None:
                after = outlook[(m & ~(1 << j))[:, None, None], np.minimum(u[None, :, None] + pts.astype(int), thr)]
                val += after - outlook[m][:, :, None]
            tables[int(b)] = val.astype(np.float32)
        return tables

    def upper_key(self, upper_total, filled):
        rules = self.rules
        if not rules.upper_bonus:
            return np.zeros(len(upper_total), dtype=np.int64)
        # Positions whose upper total cannot matter share one key: bonus already out
        # of reach (or every upper box filled) -> thr + 1; bonus secured -> thr.
        thr = rules.upper_bonus_threshold
        upper = np.minimum(upper_total.astype(np.int64), thr)
        reach = (~filled[:, self._upper_cols]).astype(np.int64) @ self._top_by_col
        # the next tier not yet reached (the only one for the classic bonus)
        tiers = np.array([t for t, _ in rules.upper_bonus_tiers], dtype=np.int64)
        above = np.where(tiers[None, :] > upper[:, None], tiers[None, :], np.int64(thr + 1))
        next_tier = above.min(axis=1)
        return np.where((upper < thr) & (upper + reach < next_tier), thr + 1, upper)

    def upper_key_count(self):
        return self.rules.upper_bonus_threshold + 2 if self.rules.upper_bonus else 1

    def context(self, filled, upper_total, five_box_full, progress=None):
        rules = self.rules
        up = filled[:, self._upper_cols].astype(np.int64)
        turns_left = np.maximum(rules.n_boxes - 1 - filled.sum(axis=1), 0).astype(np.intp)
        tracked = bool(rules.upper_bonus)
        ctx = {
            "mask": ((1 - up) * self._upper_bits).sum(axis=1) * tracked,
            "upper": np.minimum(upper_total, rules.upper_bonus_threshold).astype(np.intp) * tracked,
            "five_reserve": self._five_reserve[turns_left],
            "five_future": self._five_future[turns_left],
        }
        if self.aims is not None:
            if progress is None:
                progress = self.progress_key(filled, np.zeros(filled.shape, dtype=np.int16))
            ctx.update(self._goal_context(filled, progress))
        return ctx

    def plain_box_value(self, box, ctx):
        rules = self.rules
        if box in self._goals_of_box:
            # items G, H: the card's end-of-game goals. A box's rolls score few distinct
            # points: worth and goal change by those points, then one lookup per roll.
            points, which = self._goal_points[box]
            if rules.is_upper[box]:
                rows = self._upper_val[box][ctx["mask"][:, 0], ctx["upper"][:, 0]]     # (U, n_dice + 1)
                worth = rows[:, points // rules.upper_face[box]]
            else:
                worth = self._score_f[box][self._goal_first[box]][None, :]
            worth = (worth - self.reserve[box]) + self._goal_change(box, ctx, points[None, :])
            return np.take(worth, which, axis=1)
        if rules.is_upper[box]:
            # tip A: points, reserve and bonus outlook, tabulated by (open upper boxes,
            # upper total, dice of the face); a plain roll has no other bonus
            rows = self._upper_val[box][ctx["mask"][:, 0], ctx["upper"][:, 0]]     # (U, n_dice + 1)
            return np.take(rows, self._counts[box], axis=1) - self.reserve[box]
        v = self._score_f[box][None, :] - self.reserve[box]
        if box == rules.five_box_index:
            v = v - ctx["five_reserve"] + np.where(self._score_f[box][None, :] >= rules.five_box_points,
                                                   ctx["five_future"], np.float32(0))
        return v

    def box_values(self, ctx, scores, gain):
        rules = self.rules
        if self._score_adjusted:   # no bonus in the gains of a card scored as a whole: points by their worth
            worth = scores * self.card_weight
            if self.aims is not None:
                worth = worth + self.aims.each * (scores > 0)
            v = worth.astype(np.float32) - self.reserve
        else:
            v = gain.astype(np.float32) - self.reserve
        if len(self._upper_cols):
            cols = self._upper_cols
            counts = scores[:, cols] // rules.upper_face[cols]
            tab = self._upper_tab                                    # (cols, masks, upper, count)
            flat = ((self._col_offset + ctx["mask"][:, None]) * tab.shape[2] + ctx["upper"][:, None]) \
                * tab.shape[3] + counts
            up = tab.reshape(-1)[flat]
            # the tables hold points plus the bonus outlook; keep any other bonus (Yahtzee +100)
            other = gain[:, cols] - scores[:, cols]
            if rules.upper_bonus:   # the upper total is clipped at the last tier: gains unchanged
                other = other - rules.upper_bonus_gain(ctx["upper"], scores)[:, cols]
            v[:, cols] = (up + other) - self.reserve[cols]
        if rules.five_box is not None:
            b = rules.five_box_index
            v[:, b] = v[:, b] - ctx["five_reserve"] + np.where(scores[:, b] >= rules.five_box_points,
                                                               ctx["five_future"], np.float32(0))
        for b in self._goals_of_box:             # items G, H: the card's end-of-game goals
            v[:, b] = v[:, b] + self._goal_change(b, ctx, scores[:, b].astype(np.int64))
        return v
