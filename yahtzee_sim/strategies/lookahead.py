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
(open boxes, upper total, Yahtzee box state) than games, so the plan is computed
once per distinct position (``np.unique`` of an int64 key) and shared by the
turn's keep calls; a bounded cache keeps plans of positions seen in earlier
batches of the same run.

>>> from yahtzee_sim import simulate
>>> g = simulate("yahtzee", "greedy", 2048, seed=1).summary()["mean"]
>>> k = simulate("yahtzee", "keep-largest", 2048, seed=1).summary()["mean"]
>>> bool(g > k)
True
"""

from __future__ import annotations

import numpy as np

from ..exact.widget import best_keeps
from .base import Strategy, best_legal, register

__all__ = ["GreedyStrategy", "HeuristicStrategy", "LookaheadStrategy"]


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
    #: positions whose plans are kept between batches (0 disables the cache)
    cache_size: int = 200_000

    def prepare(self, rules):
        super().prepare(rules)
        b = rules.n_boxes
        if b > 40:
            raise ValueError(f"{self.name}: at most 40 boxes are supported, got {b}")
        self._bits = (np.int64(1) << np.arange(b, dtype=np.int64))
        self._score = rules.score_table                          # (R, B) int16
        self._five_rolls = np.flatnonzero(rules.five_face > 0)   # rolls that may trigger a joker/bonus
        self._special = rules.five_box is not None and (rules.joker != "none" or rules.five_bonus > 0)
        self._cache_keys = np.zeros(0, dtype=np.int64)
        self._cache_plans = [np.zeros((0, self.dice.n_rolls), np.int16) for _ in range(rules.n_rolls)]
        self._turn_cache = None
        return self

    # -- what a subclass decides ------------------------------------------------------
    def upper_key(self, upper_total: np.ndarray, filled: np.ndarray) -> np.ndarray:
        """Part of the position key that stands for the upper total (int64, < 2**9)."""
        return np.zeros(len(upper_total), dtype=np.int64)

    def context(self, filled: np.ndarray, upper_total: np.ndarray, five_box_full: np.ndarray) -> dict:
        """Per-position arrays (``(n,)`` or ``(n, B)``) that :meth:`box_value` reads."""
        return {"upper_total": upper_total.astype(np.int32)}

    def box_value(self, box: int, ctx: dict, scores: np.ndarray, gain: np.ndarray) -> np.ndarray:
        """Worth of writing ``scores`` (points ``gain`` with bonuses) in ``box``; float32."""
        raise NotImplementedError

    # -- position keys and plans -------------------------------------------------------
    def _keys(self, state) -> np.ndarray:
        b = self.rules.n_boxes
        key = state.filled.view(np.uint8) @ self._bits if state.filled.flags.c_contiguous \
            else state.filled.astype(np.int64) @ self._bits
        key = key.astype(np.int64, copy=False)
        key |= self.upper_key(state.upper_total, state.filled) << b
        key |= state.five_box_full.astype(np.int64) << (b + 9)
        return key

    def _decode(self, keys: np.ndarray, state, first: np.ndarray):
        """Representative arrays of each distinct position (taken from its first game)."""
        return state.filled[first], state.upper_total[first], state.five_box_full[first]

    def final_values(self, filled, upper_total, five_box_full) -> np.ndarray:
        """(U, R) float32: worth of ending the turn with each roll, for U positions.

        Equals ``max`` over the legal boxes of :meth:`box_value` applied to what
        ``rules.turn_options`` says for that roll; non-five-of-a-kind rolls are
        computed box by box for all rolls at once, the few five-of-a-kind rolls
        (jokers, bonuses) through ``turn_options`` itself.
        """
        rules = self.rules
        n = len(filled)
        ctx = self.context(filled, upper_total, five_box_full)
        col = {k: (v[:, None] if v.ndim == 1 else v) for k, v in ctx.items()}
        legal = rules.legal_boxes(filled)
        values = np.full((n, self.dice.n_rolls), -np.inf, dtype=np.float32)
        upper = upper_total.astype(np.int32)[:, None]
        thr, bonus = rules.upper_bonus_threshold, rules.upper_bonus
        for b in range(rules.n_boxes):
            if not legal[:, b].any():
                continue
            s = self._score[None, :, b]
            g = s.astype(np.int32)
            if bonus and rules.is_upper[b]:
                g = g + np.where((upper < thr) & (upper + s >= thr), bonus, 0)
            v = self.box_value(b, col, s, g)
            np.maximum(values, np.where(legal[:, b, None], v, np.float32(-np.inf)), out=values)
        if self._special and len(self._five_rolls):
            f = len(self._five_rolls)
            rolls = np.tile(self._five_rolls, n)
            rep = np.repeat(np.arange(n), f)
            lg, sc, bo = rules.turn_options(filled[rep], five_box_full[rep], rolls)
            gain = sc + rules.upper_bonus_gain(upper_total[rep], sc) + bo[:, None]
            lg, sc, gain = (a.reshape(n, f, -1) for a in (lg, sc, gain))
            v5 = np.full((n, f), -np.inf, dtype=np.float32)
            for b in range(rules.n_boxes):
                v = self.box_value(b, col, sc[:, :, b], gain[:, :, b].astype(np.int32))
                np.maximum(v5, np.where(lg[:, :, b], v, np.float32(-np.inf)), out=v5)
            values[:, self._five_rolls] = v5
        return values

    def _plans(self, state, levels: int):
        """Per game: the row of its position in ``keeps`` (U, R) for each level."""
        keys = self._keys(state)
        cached = self._turn_cache
        if cached is not None and cached[0] is state and cached[1] == state.turn \
                and len(cached[2]) == len(keys) and np.array_equal(cached[2], keys):
            return cached[3], cached[4]
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        # Positions already planned in an earlier batch.
        pos = np.searchsorted(self._cache_keys, uniq)
        pos_c = np.minimum(pos, max(len(self._cache_keys) - 1, 0))
        hit = (pos < len(self._cache_keys)) & (self._cache_keys[pos_c] == uniq) if len(self._cache_keys) \
            else np.zeros(len(uniq), bool)
        miss = np.flatnonzero(~hit)
        n_r = self.dice.n_rolls
        keeps = [np.empty((len(uniq), n_r), np.int16) for _ in range(levels + 1)]
        if len(miss):
            fl, up, full = self._decode(uniq[miss], state, first[miss])
            plan = best_keeps(self.dice, self.final_values(fl, up, full), rolls_left=levels)
            for j in range(1, levels + 1):
                keeps[j][miss] = plan.keeps[j]
        if hit.any():
            h = np.flatnonzero(hit)
            for j in range(1, levels + 1):
                keeps[j][h] = self._cache_plans[j][pos[h]]
        if self.cache_size and len(miss):
            self._remember(uniq[miss], [None] + [k[miss] for k in keeps[1:]], levels)
        self._turn_cache = (state, state.turn, keys, keeps, inv)
        return keeps, inv

    def _remember(self, new_keys, new_plans, levels):
        if len(self._cache_keys) + len(new_keys) > self.cache_size:
            self._cache_keys = np.zeros(0, dtype=np.int64)
            self._cache_plans = [np.zeros((0, self.dice.n_rolls), np.int16) for _ in range(levels + 1)]
        if len(self._cache_plans) < levels + 1 or (len(self._cache_keys) and self._cache_levels != levels):
            self._cache_keys = np.zeros(0, dtype=np.int64)
            self._cache_plans = [np.zeros((0, self.dice.n_rolls), np.int16) for _ in range(levels + 1)]
        self._cache_levels = levels
        keys = np.concatenate([self._cache_keys, new_keys])
        order = np.argsort(keys, kind="stable")
        self._cache_keys = keys[order]
        for j in range(1, levels + 1):
            self._cache_plans[j] = np.concatenate([self._cache_plans[j], new_plans[j]])[order]

    # -- the two decisions ---------------------------------------------------------------
    def keep(self, state, rolls, rolls_left, u):
        levels = self.rules.n_rolls - 1
        keeps, inv = self._plans(state, levels)
        return keeps[rolls_left][inv, rolls]

    def box(self, state, rolls, options, u):
        ctx = self.context(state.filled, state.upper_total, state.five_box_full)
        best = np.full(len(rolls), -np.inf, dtype=np.float32)
        arg = np.zeros(len(rolls), dtype=np.intp)
        for b in range(self.rules.n_boxes):
            v = self.box_value(b, ctx, options.scores[:, b], options.gain[:, b].astype(np.int32))
            better = options.legal[:, b] & (v > best)
            best = np.where(better, v, best)
            arg[better] = b
        return arg


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

    def box_value(self, box, ctx, scores, gain):
        return gain.astype(np.float32)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


@register
class HeuristicStrategy(LookaheadStrategy):
    """A sensible human player: the one-turn lookahead of ``greedy`` with a box
    value that follows the seeds' advice (seed 003's "Strategia semplice" and
    seed 001's four tips). Writing a roll in box b is worth::

        points now (Yahtzee bonus included, upper bonus excluded)
        + change of the upper-bonus outlook            (upper boxes)    tip A
        - reserve: what keeping the box open is worth  (every box)      tips B, C
        + future Yahtzee bonuses a 50 makes possible   (Yahtzee box)    tip D

    A. "Punta al bonus da subito" / "1〜6の目は各3つをめざす": the par of an upper
       box is three dice of its face (3 + 6 + ... + 18 = 63). The bonus outlook is
       ``bonus * P(final upper total >= 63)``, P from a normal approximation
       centred on "par for every open upper box". Four sixes (+6 over par) make
       up for two ones (-1): the outlook moves with the surplus, not the box.
    B. "Tieni la Libera per le emergenze" / "大きな目のチョイスはもったいない": each
       open box has a reserve proportional to what a whole turn aimed at it is
       worth (computed exactly from the dice tables); Chance's reserve is high,
       so it takes a roll only when the other boxes would lose more.
    C. "Sappi dove mettere uno zero: gli Assi o lo Yahtzee a fine partita" /
       "捨てる欄を決めておく": a zero costs the box's reserve. Ones have the smallest
       upper reserve; the five-of-a-kind box's reserve is the chance of still
       rolling one in the turns left, so it shrinks as the game goes on.
    D. "Non inseguire lo Yahtzee troppo a lungo": the lookahead compares the exact
       chance of five of a kind this turn with the sure points of other boxes;
       the 50's extra worth (later +100 bonuses) shrinks with the turns left.
    E. "Cerca le scale con i numeri centrali" / "4つ続いたら両端を待つ": no rule
       needed, the exact keep expectation holds 3-4 and open-ended runs.
    """

    name = "heuristic"
    description = "one-turn lookahead with the seeds' advice: upper bonus, reserves, where to zero"

    #: tuning knobs (found by simulation, see benchmarks/tune_heuristic.py)
    reserve_upper: float = 0.5    # upper box reserve, times its one-turn aimed value
    reserve_lower: float = 0.5    # lower box reserve, times its one-turn aimed value
    reserve_chance: float = 0.5   # Chance's reserve, times its one-turn aimed value (tip B)
    five_rate: float = 0.5        # per-turn rate of five of a kind, times the aimed rate
    upper_rolls: float = 5.0      # bonus outlook: an open upper box ends like a hunt for its
                                  # face with this many rolls (5 rolls: 3 dice on average = par)

    def prepare(self, rules):
        super().prepare(rules)
        d = self.dice
        # What one whole turn aimed at each box alone is worth: the exact
        # expectation over the dice tables (e.g. Chance ~23.3, Yahtzee ~2.3).
        plan = best_keeps(d, rules.score_table.T.astype(np.float64), rolls_left=rules.n_rolls - 1)
        self.aimed = plan.values[rules.n_rolls - 1] @ d.first_roll_prob
        weight = np.where(rules.is_upper, self.reserve_upper, self.reserve_lower)
        for i, name in enumerate(rules.box_names):
            if name in ("chance", "choice"):
                weight[i] = self.reserve_chance
        self.reserve = (weight * self.aimed).astype(np.float32)
        self._five_p = 0.0
        if rules.five_box is not None:
            five = (rules.five_face > 0).astype(np.float64)
            p = best_keeps(d, five[None, :], rolls_left=rules.n_rolls - 1).values[rules.n_rolls - 1]
            self._five_p = float(p[0] @ d.first_roll_prob) * self.five_rate
        self._upper_cols = np.flatnonzero(rules.is_upper)
        self._upper_bits = (1 << np.arange(len(self._upper_cols))).astype(np.int64)
        self._upper_val = self._upper_tables()
        return self

    def _outlook_table(self) -> np.ndarray:
        """Tip A: (M, thr + 1) bonus * P(final upper total >= thr) for each set of open
        upper boxes (bit mask over the upper boxes) and upper total so far (clipped).

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
        need = thr - np.arange(thr + 1)
        table = np.where(need[None, :] <= 0, 1.0, tail[:, np.clip(need, 0, size - 1)])
        table = np.where(need[None, :] >= size, 0.0, table)
        return (rules.upper_bonus * table).astype(np.float32)

    def _upper_tables(self) -> list:
        """Per upper box: value (M, thr + 1, n_dice + 1) of writing c dice of its face,
        by open-upper mask and upper total: points - reserve + change of outlook."""
        rules = self.rules
        thr = rules.upper_bonus_threshold
        outlook = self._outlook_table() if rules.upper_bonus else None
        m = np.arange(1 << len(self._upper_cols))
        u = np.arange(thr + 1)
        c = np.arange(rules.n_dice + 1)
        tables = {}
        for j, b in enumerate(self._upper_cols):
            f = int(rules.upper_face[b])
            pts = (c * f).astype(np.float32)
            val = np.broadcast_to(pts - self.reserve[b], (len(m), len(u), len(c))).copy()
            if outlook is not None:
                after = outlook[(m & ~(1 << j))[:, None, None], np.minimum(u[None, :, None] + pts.astype(int), thr)]
                val += after - outlook[m][:, :, None]
            tables[int(b)] = val.astype(np.float32)
        return tables

    def upper_key(self, upper_total, filled):
        rules = self.rules
        if not rules.upper_bonus:
            return np.zeros(len(upper_total), dtype=np.int64)
        return np.minimum(upper_total.astype(np.int64), rules.upper_bonus_threshold)

    def context(self, filled, upper_total, five_box_full):
        rules = self.rules
        up = filled[:, self._upper_cols].astype(np.int64)
        return {
            "mask": ((1 - up) * self._upper_bits).sum(axis=1),
            "upper": np.minimum(upper_total, rules.upper_bonus_threshold).astype(np.intp),
            "turns_left": (rules.n_boxes - 1 - filled.sum(axis=1)).astype(np.float32),
        }

    def box_value(self, box, ctx, scores, gain):
        rules = self.rules
        if rules.is_upper[box]:
            count = scores // rules.upper_face[box]
            table = self._upper_val[box]
            if count.ndim == 2 and count.shape[0] == 1:   # all rolls of U positions, no extra bonus
                return np.take(table[ctx["mask"][:, 0], ctx["upper"][:, 0]], count[0], axis=1)
            v = table[ctx["mask"], ctx["upper"], count]
            # the table has the upper bonus in its outlook; add any other bonus (Yahtzee +100)
            extra = gain - scores
            if rules.upper_bonus:
                upper = ctx["upper"]
                thr = rules.upper_bonus_threshold
                extra = extra - np.where((upper < thr) & (upper + scores >= thr), rules.upper_bonus, 0)
            return v + extra.astype(np.float32)
        v = gain.astype(np.float32) - self.reserve[box]
        if box == rules.five_box_index:
            turns = ctx["turns_left"]
            # tip C: the box's reserve is the chance to roll five of a kind later
            v = v + self.reserve[box] - np.float32(rules.five_box_points) * (
                1 - (1 - np.float32(self._five_p)) ** turns)
            if rules.five_bonus:
                # tip D: a 50 here makes later five of a kinds worth the bonus
                full = scores >= rules.five_box_points
                v = v + np.where(full, np.float32(rules.five_bonus * self._five_p) * turns, np.float32(0))
        return v
