"""``target:T=<score>``: target play, the strategy that maximizes P(final score >= T).

Each decision looks up the points still needed, ``r = T - points so far``, in the
exact table of :func:`~yahtzee_sim.exact.target.target_solve` (disk-cached):

* keeps: the sub-keep with the largest chance of the rest of the game scoring at
  least ``r``, from the same one-turn sweep the table was built with;
* box: the legal box with the largest ``W(next state, r - gain)``; among boxes
  exactly tied on that chance, the one the mean-optimal strategy prefers.

Once the target is reached (``r <= 0``) or out of reach (the chance is exactly 0 at
the start of a turn) nothing can change the outcome, and it plays as ``optimal``
(the most points). Unlike the other exact strategies its decisions depend on the
points so far, not only on the score card's state, so its exact hit rate is
``target_solve(...).p_reach(T)`` rather than an exact distribution.

>>> from yahtzee_sim.strategies import get_strategy
>>> get_strategy("target:T=250").name
'target:T=250'
>>> get_strategy("target:score=250")
Traceback (most recent call last):
...
ValueError: target strategies take one parameter, T (e.g. target:T=250), got 'score=250'
"""

from __future__ import annotations

import numpy as np

from ..state import GameState
from ..strategy import best_legal
from .optimal import OptimalStrategy

__all__ = ["TargetStrategy", "PayoffPlay", "from_params"]


class TargetStrategy(OptimalStrategy):
    """Maximizes P(final score >= target) (exact tables, disk-cached).

    Pass a :class:`~yahtzee_sim.exact.target.TargetSolution` to reuse it; otherwise
    :meth:`prepare` solves targets up to ``max(target, DEFAULT_MAX_TARGET)``.
    """

    description = "target play: maximizes P(final score >= T) (exact tables)"
    state_based = False                 # decisions also depend on the points so far
    pair_chunk: int = 4096

    def __init__(self, target, solution=None):
        from ..exact.target import parse_target

        # no decision table: the optimal strategy's would replay optimal's keeps, not these
        super().__init__(None, table=False)
        self.target = parse_target(target)
        self.name = f"target:T={self.target}"
        self._target_given = solution

    def prepare(self, rules):
        from ..exact.solver import rules_fingerprint
        from ..exact.target import DEFAULT_MAX_TARGET, target_solve

        super().prepare(rules)          # the layout, the keep tables and the mean solve
        sol = self._target_given
        if sol is None or rules_fingerprint(sol.rules) != rules_fingerprint(rules) \
                or sol.max_target < self.target:
            # a cold table takes long (yahtzee: about 50 CPU seconds): show it
            sol = target_solve(rules, max(self.target, DEFAULT_MAX_TARGET), progress=self.progress)
        self.target_solution = sol
        self._table = sol.table
        self._row_of = sol.row_of
        self._tkept = None
        self._tkept_key = None
        return self

    def _needs(self, state, key):
        """Points still needed (N,), and which games play for points (target met or lost)."""
        need = self.target - state.total(self.rules).astype(np.int64)
        chance = self._table[self._row_of[key], np.clip(need, 0, self.target)]
        return need, (need <= 0) | (chance == 0)

    def _subset(self, state, sel):
        return GameState.from_arrays(self.rules, state.filled[sel], state.upper_total[sel],
                                     state.five_box_full[sel])

    def _target_plan(self, pair):
        """Keep chances (n_unique, K + 1) per rerolls left of distinct (state, need) pairs."""
        from ..exact.target import target_turn

        sp = self._space
        width = self.target + 1
        uniq, inv = np.unique(pair, return_inverse=True)
        key, need = uniq // width, uniq % width
        nf, nu = sp.n_flag, sp.n_u
        um, uu, uf = key // (nu * nf), (key // nf) % nu, key % nf
        k = self._model.n_keeps
        plans = [None] + [np.empty((len(uniq), k + 1), dtype=self._table.dtype)
                          for _ in range(1, self.rules.n_rolls)]
        for p in plans[1:]:
            p[:, k] = -np.inf                            # the padding column of _sub_pos
        for lo in range(0, len(uniq), self.pair_chunk):
            hi = min(lo + self.pair_chunk, len(uniq))
            _, kv = target_turn(self._model, self._table, self._row_of, um[lo:hi], uu[lo:hi],
                                uf[lo:hi], need[lo:hi, None], plan=True)
            for j in range(1, self.rules.n_rolls):
                plans[j][lo:hi, :k] = kv[j].T
        return plans, inv

    def _best_keeps(self, state, rolls, rolls_left):
        key = self._keys(state)
        need, for_points = self._needs(state, key)
        keeps = np.empty(len(rolls), dtype=np.int64)
        if for_points.any():
            sel = np.flatnonzero(for_points)
            keeps[sel] = super()._best_keeps(self._subset(state, sel), rolls[sel], rolls_left)
        sel = np.flatnonzero(~for_points)
        if len(sel):
            pair = key[sel] * (self.target + 1) + need[sel]
            # the plan of the turn's first keep call serves the next one (same pairs)
            if self._tkept is None or not np.array_equal(self._tkept_key, pair):
                self._tkept = self._target_plan(pair)
                self._tkept_key = pair
            plans, inv = self._tkept
            n_rolls = self.dice.n_rolls
            both, back = np.unique(inv * n_rolls + rolls[sel], return_inverse=True)
            p_pair, p_roll = both // n_rolls, both % n_rolls
            ev = plans[rolls_left][p_pair[:, None], self._sub_pos[p_roll]]
            keeps[sel] = self._sub_keep[p_roll, np.argmax(ev, axis=1)][back]
        if rolls_left == 1:
            self._tkept = None                              # the turn's plan is used up
        return keeps

    def box(self, state, rolls, options, u):
        mask, up, flag = self._state(state)
        key = self._keys(state)
        need, for_points = self._needs(state, key)
        nxt = self._space.next_flat(mask, up, flag, options.scores)
        mean_worth = options.gain + self._values[nxt]       # NaN only where illegal
        rows = self._row_of[np.where(options.legal, nxt, 0)]
        left = np.clip(need[:, None] - options.gain, 0, self.target)
        chance = np.where(options.legal, self._table[rows, left], -1.0)
        best = chance.max(axis=1, keepdims=True)
        tied = options.legal & ((chance == best) | for_points[:, None])
        self._kept = None
        self._tkept = None
        return best_legal(mean_worth, tied)


def from_params(params: str) -> TargetStrategy:
    """The strategy of a name ``target:<params>`` (registered in the strategies package)."""
    name, sep, value = params.partition("=")
    if name != "T" or not sep:
        raise ValueError(f"target strategies take one parameter, T (e.g. target:T=250), got {params!r}")
    return TargetStrategy(value)


class PayoffPlay(TargetStrategy):
    """Plays each game for a payoff of its final score: maximizes E[f(final score)]
    for a non-decreasing ``f`` of its own per game, set by :meth:`set_payoff`.

    ``E[f(X)] = f(p) + sum_l (f(p + l) - f(p + l - 1)) P(rest of game >= l)`` for a game
    with ``p`` points so far, so each decision takes the move with the largest
    ``sum_l w_l W(after the move, l)``: ``W`` the target table (the best chance of
    scoring ``l`` more), ``w_l`` the payoff's steps. That is exact target play when
    ``f`` is one step, and the rule of "beat the opponent" solvers otherwise (each
    ``W(., l)`` assumes play for that ``l`` from then on). A game whose payoff can no
    longer change (all steps 0) plays as ``optimal``. Needs beyond the table's
    ``max_target`` count as out of reach.

    :class:`~yahtzee_sim.strategies.play_to_win.PlayToWin` sets ``f`` before each of its last
    turns to its chance of finishing above the other players.

    >>> from yahtzee_sim import get_rules
    >>> from yahtzee_sim.state import GameState
    >>> rules = get_rules("yacht", ["fill-in-order"])
    >>> p = PayoffPlay().prepare(rules)
    >>> st = GameState.new(rules, 2)
    >>> p.set_payoff(st, lambda x: (x >= 100).astype(float))    # one step: target play for 100
    >>> rolls = rules.dice.roll_index(np.array([[6, 6, 6, 1, 2], [1, 2, 3, 4, 5]]))
    >>> t = TargetStrategy(100).prepare(rules)
    >>> bool((p.keep(st, rolls, 2, None) == t.keep(st, rolls, 2, None)).all())
    True
    """

    name = "payoff"
    description = "plays for a payoff of its final score (target tables)"
    #: (state, need) cells per target_turn call
    cells: int = 1 << 15
    #: payoff steps at most this large are left out of keep decisions
    tiny: float = 1e-7

    def __init__(self, solution=None, *, progress=True):
        from ..exact.target import DEFAULT_MAX_TARGET

        super().__init__(DEFAULT_MAX_TARGET if solution is None else solution.max_target, solution)
        self.progress = progress
        self.name = "payoff"
        self._weights = None
        self._pplan = None

    def prepare(self, rules):
        super().prepare(rules)
        self._weights = None
        self._pplan = None
        return self

    def reach(self, state) -> np.ndarray:
        """(N,) the most points each game can still add (within the table's targets)."""
        rows = self._row_of[self._keys(state)]
        positive = self._table[rows] > 0
        return positive.shape[1] - 1 - np.argmax(positive[:, ::-1], axis=1)

    def set_payoff(self, state, payoff) -> None:
        """Play the games of ``state`` for ``payoff``: a function of an (N, L + 1) array of
        final scores (each row the game's points so far, + 0, 1, .., L) returning f there,
        non-decreasing along each row. Holds until the next call. Steps of at most
        :attr:`tiny` are dropped (they move a chance by at most that much)."""
        points = state.total(self.rules).astype(np.int64)
        width = max(1, int(self.reach(state).max()))
        x = points[:, None] + np.arange(width + 1)
        f = np.asarray(payoff(x), dtype=np.float64)
        steps = np.diff(f, axis=1)                                  # (N, L): steps at l = 1..L
        self._weights = np.where(steps > self.tiny, steps, 0.0)
        self._pplan = None

    def _payoff_plan(self, state):
        """Per rerolls left j: (N, K + 1) payoff value of every keep of each game.

        Only the needs where some game of a state has a step above :attr:`tiny` are
        solved (a step of 1e-7 moves a chance by at most that much), states of similar
        spans together."""
        from scipy.sparse import csr_matrix

        from ..exact.target import target_turn

        key = self._keys(state)
        uniq, inv = np.unique(key, return_inverse=True)
        sp = self._space
        nf, nu = sp.n_flag, sp.n_u
        w = self._weights.astype(np.float32)
        k = self._model.n_keeps
        n_rolls = self.rules.n_rolls
        plans = [None] + [np.full((len(key), k + 1), -np.inf, dtype=np.float32) for _ in range(1, n_rolls)]
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        # each state's span of needs: from the first to the last step of any of its games
        some = w > 0
        first = np.where(some.any(axis=1), np.argmax(some, axis=1), w.shape[1])
        last = np.where(some.any(axis=1), w.shape[1] - 1 - np.argmax(some[:, ::-1], axis=1), -1)
        lo = np.minimum.reduceat(first[order], bounds[:-1])
        hi = np.maximum.reduceat(last[order], bounds[:-1])
        span = np.maximum(hi - lo + 1, 1)
        lo = np.minimum(lo, w.shape[1] - 1)
        w = np.pad(w, ((0, 0), (0, int(span.max()))))
        by_span = np.argsort(span, kind="stable")
        sorted_span = span[by_span]
        at = 0
        while at < len(by_span):
            # as many states as fit in self.cells cells at the widest span among them
            fits = np.arange(1, len(by_span) - at + 1) * sorted_span[at:] <= self.cells
            part = by_span[at:at + max(1, int(fits.sum()))]
            at += len(part)
            width = int(span[part].max())
            u = uniq[part]
            # past the last step the weights are the padding's zeros: any solved need does
            needs = np.minimum(lo[part, None] + 1 + np.arange(width), self.target)
            _, kv = target_turn(self._model, self._table, self._row_of, u // (nu * nf), (u // nf) % nu, u % nf,
                                needs, plan=True)
            # the games of these states, each with its weights over its state's needs, as
            # one sparse (games, states x needs) matrix: the keep values are one product
            games = np.concatenate([order[bounds[c]:bounds[c + 1]] for c in part])
            of = np.repeat(np.arange(len(part)), bounds[part + 1] - bounds[part])
            cols = of[:, None] * width + np.arange(width)
            steps = w[games[:, None], lo[part][of][:, None] + np.arange(width)]
            mix = csr_matrix((steps.ravel(), cols.ravel(), np.arange(0, steps.size + 1, width)),
                             shape=(len(games), len(part) * width))
            for j in range(1, n_rolls):
                plans[j][games, :k] = mix @ np.ascontiguousarray(kv[j].T)
        return plans

    def keep(self, state, rolls, rolls_left, u):
        if self._weights is None or len(self._weights) != len(rolls):
            raise RuntimeError("payoff: set_payoff(state, payoff) before the turn")
        keeps = OptimalStrategy._best_keeps(self, state, rolls, rolls_left)   # the most points
        live = np.flatnonzero(self._weights.any(axis=1))
        if len(live):
            if self._pplan is None:
                self._pplan = self._payoff_plan(state)
            plan = self._pplan[rolls_left]
            ev = plan[live[:, None], self._sub_pos[rolls[live]]]
            best = np.argmax(ev, axis=1)
            # among keeps as good for the payoff, the one for the most points
            tied = plan[live, self._keep_pos(rolls[live], keeps[live])] >= ev[np.arange(len(live)), best] - 1e-7
            keeps[live] = np.where(tied, keeps[live], self._sub_keep[rolls[live], best])
        return keeps

    def _keep_pos(self, rolls, keeps):
        """(N,) the column of each keep among its roll's sub-keeps in the plans."""
        subs = self._sub_keep[rolls]
        return self._sub_pos[rolls, np.argmax(subs == keeps[:, None], axis=1)]

    def box(self, state, rolls, options, u):
        mask, up, flag = self._state(state)
        nxt = self._space.next_flat(mask, up, flag, options.scores)
        mean_worth = options.gain + self._values[nxt]       # NaN only where illegal
        rows = self._row_of[np.where(options.legal, nxt, 0)]
        w = self._weights
        needs = np.arange(1, w.shape[1] + 1)
        value = np.full(options.legal.shape, -np.inf)
        for b in range(options.legal.shape[1]):
            sel = np.flatnonzero(options.legal[:, b])
            if len(sel):
                left = np.clip(needs[None, :] - options.gain[sel, b, None], 0, self.target)
                chance = np.where(needs[None, :] - options.gain[sel, b, None] > self.target, 0.0,
                                  self._table[rows[sel, b, None], left])
                value[sel, b] = np.einsum("gl,gl->g", w[sel], chance)
        best = value.max(axis=1, keepdims=True)
        tied = options.legal & (value >= best - 1e-9)
        self._kept = None
        self._pplan = None
        return best_legal(mean_worth, tied)
