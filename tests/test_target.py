"""Target play (maximize P(score >= T)): a plain brute force on tiny games, the
mean-optimal strategy's exact distribution as a lower bound, the strategy's simulated
hit rate, the CLI, the cache and the refusals."""

from __future__ import annotations

import functools
import itertools
import json

import numpy as np
import pytest

from test_distribution import tiny_rules
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.target import target_solve

YACHT = ("yacht", ["fill-in-order"])


def brute_force_target(rules, max_need: int) -> np.ndarray:
    """W(start, r) for r = 0..max_need by plain recursion: real upper totals, every
    sub-multiset kept, every ordered outcome of the dice thrown, the rule set's own
    turn_options for what each box pays (none of the solver's tables or lattice)."""
    n, f = rules.n_dice, rules.n_faces
    d = rules.dice
    needs = np.arange(max_need + 1)
    outs = {k: list(itertools.product(range(1, f + 1), repeat=k)) for k in range(n + 1)}

    @functools.lru_cache(maxsize=None)
    def w(filled, upper, full):
        """P(rest of the game >= r) for every r (a tuple over r = 0..max_need)."""
        if all(filled):
            return tuple(float(r <= 0) for r in needs)
        fl = np.array([filled])

        @functools.lru_cache(maxsize=None)
        def best(dice, j):
            if j == 0:
                r = d.roll_index_of(list(dice))
                legal, scores, bonus = rules.turn_options(fl, np.array([full]), [r])
                gain = scores + rules.upper_bonus_gain(np.array([upper]), scores) + bonus[:, None]
                out = np.zeros(len(needs))
                for b in np.flatnonzero(legal[0]):
                    pts = int(scores[0, b])
                    nf = list(filled)
                    nf[b] = True
                    nxt = np.array(w(tuple(nf), upper + (pts if rules.is_upper[b] else 0),
                                     full or (b == rules.five_box_index and pts == rules.five_box_points)))
                    g = int(gain[0, b])
                    shifted = np.where(needs - g <= 0, 1.0, nxt[np.clip(needs - g, 0, max_need)])
                    out = np.maximum(out, shifted)
                return tuple(out)
            best_keep = np.zeros(len(needs))
            for keep in set(itertools.chain.from_iterable(
                    itertools.combinations(dice, k) for k in range(n + 1))):
                o = outs[n - len(keep)]
                ev = sum(np.array(best(tuple(sorted(keep + x)), j - 1)) for x in o) / len(o)
                best_keep = np.maximum(best_keep, ev)
            return tuple(best_keep)

        o = outs[n]
        return tuple(sum(np.array(best(tuple(sorted(x)), rules.n_rolls - 1)) for x in o) / len(o))

    return np.array(w(tuple([False] * rules.n_boxes), 0, False))


@pytest.mark.parametrize("case", [dict(), dict(joker="free"), dict(fill_order="in-order"),
                                  dict(upper_bonus=0, five_bonus=0)])
def test_tiny_game_matches_brute_force(case):
    rules = tiny_rules(**case)
    top = 70                                          # above the tiny game's best score
    exact = brute_force_target(rules, top)
    sol = target_solve(rules, max_target=top, dtype=np.float64, cache=False)
    np.testing.assert_allclose(sol.to_frame()["p_reach"].to_numpy(), exact, atol=1e-12)
    f32 = target_solve(rules, max_target=top, cache=False)
    np.testing.assert_allclose(f32.to_frame()["p_reach"].to_numpy(), exact, atol=1e-6)
