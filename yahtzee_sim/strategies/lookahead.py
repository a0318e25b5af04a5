"""One-turn lookahead strategies: ``greedy`` here, ``heuristic`` in
:mod:`yahtzee_sim.strategies.heuristic`, and the position store they share.

Both choose their keeps by the *exact* expectation of the rest of the turn over
the dice tables: each final roll r is worth ``V(r) = max over the legal boxes b
of value(b, r)``, and the keep lattice of :mod:`yahtzee_sim.exact.widget` gives
the best keep with one or two rerolls left. They differ only in ``value``:

* ``greedy``: the points gained now, bonuses included (``TurnOptions.gain``);
* ``heuristic``: those points plus a few readable corrections taken from the
  sources' advice (upper bonus, reserve for Chance and Yahtzee, where to put a
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

import contextlib

import numpy as np

from ..exact.widget import best_keeps, keep_ranks, raise_final_values
from ..strategy import ChunkDecisions, Strategy, register

__all__ = ["GreedyStrategy", "LookaheadStrategy"]

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
        # within plans_kept(), preparing again for the very same rule set keeps the plans
        keep = getattr(self, "_hold_plans", False) and getattr(self, "rules", None) is rules \
            and getattr(self, "_store", None) is not None
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
        self._plans_kept = keep
        if not keep:
            self._reset_cache(rules.n_rolls - 1)
        return self

    @contextlib.contextmanager
    def plans_kept(self):
        """Within it, preparing this strategy again for the same rule set (the very
        object it was prepared for) keeps the positions it planned: for a caller that
        evaluates one instance several times in a row (its score distribution, then its
        loss accounting) and leaves its parameters alone meanwhile. The plans depend only
        on the position (the same decisions whatever the store holds): only the time changes.

        >>> from yahtzee_sim.rules import get_rules
        >>> from yahtzee_sim.state import GameState
        >>> r = get_rules("yahtzee")
        >>> s = GreedyStrategy().prepare(r)
        >>> _ = s.keep(GameState.new(r, 1), np.array([0]), 2, np.zeros(1))
        >>> with s.plans_kept():
        ...     s.prepare(r)._used, s.prepare(get_rules("yacht"))._used
        (1, 0)
        >>> s.prepare(r)._used
        0
        """
        self._hold_plans = True
        try:
            yield self
        finally:
            self._hold_plans = False

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
                if legal[:, b].any():                    # an illegal box never improves
                    raise_final_values(values, boxes, self.plain_box_value(b, col), legal[:, b], b)
                continue
            # boxes worth the same in every position where they are open: valued once, and
            # the first open one (card order) takes the roll
            open_twins = legal[:, twins]
            some = open_twins.any(axis=1)
            if some.any():
                raise_final_values(values, boxes, self.plain_box_value(b, col), some,
                                   (b + open_twins.argmax(axis=1)).astype(np.uint8))
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
        for j in range(1, len(self._store)):   # stored as the rank among the roll's sub-keeps
            keep_ranks(self._rank, keeps[j], self._store[j][self._used:self._used + m])
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

    def chunk_decisions(self, rules):
        """Each position's plan (its box for every final roll, its keep for every roll and
        rerolls left), read for a chunk of states; not in games that announce."""
        if rules.announces:
            return None
        from ..exact.policy import lookahead_tables

        return ChunkDecisions(tables=lookahead_tables, served_boxes_are_boxes=True,
                              mirrors={"tables": ("keep", "box", "_plans")})


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
