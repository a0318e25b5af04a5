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
from .base import best_legal
from .optimal import OptimalStrategy

__all__ = ["TargetStrategy", "from_params"]


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
            sol = target_solve(rules, max(self.target, DEFAULT_MAX_TARGET))
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
