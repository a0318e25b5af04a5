"""Loss accounting (issue 19, section 2): each decision's loss against optimal play,
weighted by the chance the strategy reaches it, adds up to the whole gap.

Checked against a plain-Python brute force on small games (dice as sorted tuples,
keeps and chances enumerated by hand, the strategy asked state by state, optimal
values by their own recursion), and on ``yahtzee`` against the gap between the
solver's optimum and :func:`policy_value`, an independent backward evaluation.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections import Counter

import numpy as np
import pytest
from conftest import LowestBox, tiny_rules

from yahtzee_sim.exact.losses import estimate_losses, kind_names, loss_accounting
from yahtzee_sim.exact.policy import policy_value
from yahtzee_sim.rules import Box, RuleSet, get_rules
from yahtzee_sim.rules import scoring as sc
from yahtzee_sim.state import GameState, TurnOptions
from yahtzee_sim.strategies import get_strategy


def _small(n_dice=3, n_faces=4, n_rolls=3) -> RuleSet:
    boxes = [Box(f"u{f}", f"U{f}", sc.upper(f), upper_face=f) for f in range(1, n_faces + 1)]
    boxes += [Box("full_house", "Full house", sc.full_house("25"), joker_points=25),
              Box("yahtzee", "Yahtzee", sc.five_of_a_kind(50)), Box("chance", "Chance", sc.chance)]
    return RuleSet(name="small", title="small", boxes=tuple(boxes), n_dice=n_dice, n_faces=n_faces,
                   n_rolls=n_rolls, upper_bonus_threshold=2 * n_faces + 1, upper_bonus=20, five_box="yahtzee",
                   five_bonus=100, joker="forced")


class BruteForce:
    """Optimal values, the strategy's value and its expected loss per decision kind, by
    plain recursion over (filled tuple, exact upper total, five box full)."""

    def __init__(self, rules: RuleSet, strategy):
        self.rules, self.strategy = rules, strategy.prepare(rules)
        n, f = rules.n_dice, rules.n_faces
        self.rolls = sorted({tuple(sorted(t)) for t in itertools.product(range(1, f + 1), repeat=n)})
        self.ri = {r: rules.dice.roll_index_of(list(r)) for r in self.rolls}
        self.first = self._outcomes(n, ())
        self.keeps = {r: sorted({tuple(sorted(c)) for k in range(n + 1) for c in itertools.combinations(r, k)})
                      for r in self.rolls}
        self.after = {k: self._outcomes(n - len(k), k) for r in self.rolls for k in self.keeps[r]}
        self.opt: dict = {}
        self.pol: dict = {}

    def _outcomes(self, m, kept):
        f = self.rules.n_faces
        c = Counter(tuple(sorted(kept + t)) for t in itertools.product(range(1, f + 1), repeat=m))
        return {r: x / f ** m for r, x in c.items()}

    def _moves(self, filled, u, full, r):
        """Per legal box: (gain, next state)."""
        rules = self.rules
        legal, scores, bonus = rules.turn_options(np.array([filled]), np.array([full]), np.array([self.ri[r]]))
        gain = scores[0].astype(int) + rules.upper_bonus_gain(np.array([u]), scores)[0] + int(bonus[0])
        out = {}
        for b in np.flatnonzero(legal[0]):
            nf = tuple(True if i == b else x for i, x in enumerate(filled))
            nu = u + (int(scores[0, b]) if rules.is_upper[b] else 0)
            nfull = full or (b == rules.five_box_index and int(scores[0, b]) > 0)
            out[int(b)] = (int(gain[b]), (nf, nu, nfull))
        return out, (legal, scores, gain)

    def optimal(self, s) -> float:
        if s in self.opt:
            return self.opt[s]
        if all(s[0]):
            return 0.0
        x = {r: max(g + self.optimal(n) for g, n in self._moves(*s, r)[0].values()) for r in self.rolls}
        for _ in range(self.rules.n_rolls - 1):
            ev = {k: sum(p * x[r] for r, p in d.items()) for k, d in self.after.items()}
            x = {r: max(ev[k] for k in self.keeps[r]) for r in self.rolls}
        self.opt[s] = sum(p * x[r] for r, p in self.first.items())
        return self.opt[s]

    def _ask(self, s):
        """The strategy's keep of every roll per rolls left, and its box of every roll."""
        rules, st = self.rules, self.strategy
        filled, u, full = s
        n = len(self.rolls)
        rolls = np.array([self.ri[r] for r in self.rolls])
        state = GameState.from_arrays(rules, np.array([filled] * n), np.full(n, u), np.full(n, full))
        u0 = np.zeros(n, np.float32)
        legal, scores, bonus = rules.turn_options(np.array([filled] * n), np.full(n, full), rolls)
        gain = scores + rules.upper_bonus_gain(np.full(n, u), scores) + bonus[:, None]
        boxes = st.box(state, rolls, TurnOptions(legal, scores, gain), u0)
        keeps = {j: st.keep(state, rolls, j, u0) for j in range(1, rules.n_rolls)}
        counts = rules.dice.keep_counts
        held = {j: {r: tuple(np.repeat(np.arange(1, rules.n_faces + 1), counts[keeps[j][i]]))
                    for i, r in enumerate(self.rolls)} for j in keeps}
        return {r: int(boxes[i]) for i, r in enumerate(self.rolls)}, held

    def policy(self, s):
        """(value, {kind: expected loss}) of the rest of the game from state s."""
        if s in self.pol:
            return self.pol[s]
        kinds = kind_names(self.rules.n_rolls)
        if all(s[0]):
            return 0.0, dict.fromkeys(kinds, 0.0)
        box, held = self._ask(s)
        # final roll: optimal values, the strategy's value and losses
        z, val, loss = {}, {}, {}
        for r in self.rolls:
            moves = self._moves(*s, r)[0]
            q = {b: g + self.optimal(n) for b, (g, n) in moves.items()}
            z[r] = max(q.values())
            g, n = moves[box[r]]
            v_next, l_next = self.policy(n)
            val[r] = g + v_next
            loss[r] = dict(l_next)
            loss[r]["box"] += z[r] - q[box[r]]
        for j in range(1, self.rules.n_rolls):
            kind = kinds[self.rules.n_rolls - 1 - j]
            ev = {k: sum(p * z[r] for r, p in d.items()) for k, d in self.after.items()}
            z2, val2, loss2 = {}, {}, {}
            for r in self.rolls:
                z2[r] = max(ev[k] for k in self.keeps[r])
                d = self.after[held[j][r]]
                val2[r] = sum(p * val[x] for x, p in d.items())
                loss2[r] = {kd: sum(p * loss[x][kd] for x, p in d.items()) for kd in kinds}
                loss2[r][kind] += z2[r] - ev[held[j][r]]
            z, val, loss = z2, val2, loss2
        out = (sum(p * val[r] for r, p in self.first.items()),
               {kd: sum(p * loss[r][kd] for r, p in self.first.items()) for kd in kinds})
        self.pol[s] = out
        return out


class UniformBruteForce(BruteForce):
    """``random``'s value, expected loss and expected number of optimal decisions per
    kind, each decision averaged over its choices (the legal boxes, the roll's distinct
    sub-keeps), by the same plain recursion."""

    def __init__(self, rules: RuleSet):
        super().__init__(rules, get_strategy("random"))

    def policy(self, s):
        if s in self.pol:
            return self.pol[s]
        kinds = kind_names(self.rules.n_rolls)
        if all(s[0]):
            return 0.0, dict.fromkeys(kinds, 0.0), dict.fromkeys(kinds, 0.0)

        def mean(xs):
            return sum(xs) / len(xs)

        z, val, loss, hits = {}, {}, {}, {}
        for r in self.rolls:
            moves = self._moves(*s, r)[0]
            q = {b: g + self.optimal(n) for b, (g, n) in moves.items()}
            z[r] = max(q.values())
            after = [(g, *self.policy(n)) for g, n in moves.values()]
            val[r] = mean([g + v for g, v, _, _ in after])
            loss[r] = {k: mean([lo[k] for _, _, lo, _ in after]) for k in kinds}
            loss[r]["box"] += z[r] - mean(list(q.values()))
            hits[r] = {k: mean([h[k] for _, _, _, h in after]) for k in kinds}
            hits[r]["box"] += mean([float(z[r] - x <= 1e-9) for x in q.values()])
        for j in range(1, self.rules.n_rolls):
            kind = kinds[self.rules.n_rolls - 1 - j]
            # each keep's expectations over the throw it leads to (optimal value, the
            # strategy's value, its losses and optimal decisions to come)
            ev, ev_val, ev_loss, ev_hits = {}, {}, {}, {}
            for k, d in self.after.items():
                ev[k] = sum(p * z[x] for x, p in d.items())
                ev_val[k] = sum(p * val[x] for x, p in d.items())
                ev_loss[k] = {kd: sum(p * loss[x][kd] for x, p in d.items()) for kd in kinds}
                ev_hits[k] = {kd: sum(p * hits[x][kd] for x, p in d.items()) for kd in kinds}
            z2, val2, loss2, hits2 = {}, {}, {}, {}
            for r in self.rolls:
                keeps = self.keeps[r]
                z2[r] = max(ev[k] for k in keeps)
                val2[r] = mean([ev_val[k] for k in keeps])
                loss2[r] = {kd: mean([ev_loss[k][kd] for k in keeps]) for kd in kinds}
                loss2[r][kind] += z2[r] - mean([ev[k] for k in keeps])
                hits2[r] = {kd: mean([ev_hits[k][kd] for k in keeps]) for kd in kinds}
                hits2[r][kind] += mean([float(z2[r] - ev[k] <= 1e-9) for k in keeps])
            z, val, loss, hits = z2, val2, loss2, hits2
        first = self.first.items()
        out = (sum(p * val[r] for r, p in first), {kd: sum(p * loss[r][kd] for r, p in first) for kd in kinds},
               {kd: sum(p * hits[r][kd] for r, p in first) for kd in kinds})
        self.pol[s] = out
        return out


@pytest.mark.parametrize("make_rules", [lambda: _small(), lambda: tiny_rules(),
                                        lambda: dataclasses.replace(tiny_rules(), n_rolls=4),
                                        lambda: tiny_rules(joker="free", fill_order="in-order")],
                         ids=["3d4", "tiny", "tiny-four-rolls", "tiny-free-joker-in-order"])
def test_random_averaged_as_the_brute_force_averages_it(make_rules):
    # random's compiled walk: each decision's loss and optimal share averaged over its choices
    rules = make_rules()
    bf = UniformBruteForce(rules)
    v_opt = bf.optimal(_fresh(rules))
    v_pol, kinds, hits = bf.policy(_fresh(rules))
    # chunks of four states (one tile of the compiled walk, two processes taking turns), and
    # of whole levels (many tiles)
    for jobs, rows in ((1, 4 * rules.dice.n_rolls), (2, 4 * rules.dice.n_rolls), (1, 1 << 19)):
        acc = loss_accounting(rules, "random", jobs=jobs, chunk_rows=rows)
        assert abs(acc.optimal_score - v_opt) < 1e-9
        assert abs(acc.strategy_score - v_pol) < 1e-9
        assert abs(acc.accounted - (v_opt - v_pol)) < 1e-9
        for k in kinds:
            assert abs(acc.by_kind[k] - kinds[k]) < 1e-9, k
            # each turn makes one decision of each kind: the optimal ones' share of them
            assert abs(acc.optimal_share[k] - hits[k] / rules.n_boxes) < 1e-9, k
            assert 0 < acc.optimal_share[k] < 1
        assert abs(sum(acc.by_box.values()) - (v_opt - v_pol)) < 1e-9
        assert abs(acc.by_turn.sum() - (v_opt - v_pol)) < 1e-9
        for t in acc.top:
            assert t["choice"] in ("a random box", "a random keep") and t["loss"] > 0


def _fresh(rules):
    return ((False,) * rules.n_boxes, 0, False)


@pytest.mark.parametrize("make_rules", [lambda: _small(), lambda: tiny_rules()], ids=["3d4", "tiny"])
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "lowest-box"])
def test_parts_add_up_to_the_brute_force_gap(make_rules, strategy):
    rules = make_rules()
    strat = LowestBox() if strategy == "lowest-box" else get_strategy(strategy)
    bf = BruteForce(rules, strat)
    v_opt = bf.optimal(_fresh(rules))
    v_pol, kinds = bf.policy(_fresh(rules))
    assert v_opt - v_pol > 0.5          # a real gap to account for
    acc = loss_accounting(rules, LowestBox() if strategy == "lowest-box" else strategy)
    assert abs(acc.optimal_score - v_opt) < 1e-9
    assert abs(acc.strategy_score - v_pol) < 1e-9
    assert abs(acc.accounted - (v_opt - v_pol)) < 1e-9
    for k, v in kinds.items():           # each kind equals the brute force's
        assert abs(acc.by_kind[k] - v) < 1e-9, k
    assert abs(sum(acc.by_box.values()) - (v_opt - v_pol)) < 1e-9
    assert abs(acc.by_turn.sum() - (v_opt - v_pol)) < 1e-9
    assert all(v > -1e-12 for v in acc.by_kind.values())


def test_optimal_loses_nothing_and_random_is_averaged_exactly():
    rules = tiny_rules()
    acc = loss_accounting(rules, "optimal")
    assert abs(acc.gap) < 1e-9 and acc.accounted < 1e-9 and acc.share_optimal > 1 - 1e-12
    assert acc.top == []
    rnd = loss_accounting(rules, "random")
    pv = policy_value(rules, "random")
    assert rnd.method == "exact, uniform average"
    assert abs(rnd.strategy_score - pv.mean) < 1e-9
    assert abs(rnd.accounted - rnd.gap) < 1e-9 and 0 < rnd.share_optimal < 1
    # the uniform average's parts add up in every split, as a deterministic strategy's do
    assert abs(sum(rnd.by_box.values()) - rnd.gap) < 1e-9 and abs(rnd.by_turn.sum() - rnd.gap) < 1e-9
    for split, part in rnd.to_frame().groupby("split"):
        assert abs(part["points"].sum() - rnd.gap) < 1e-9, split


def test_verhoeff_measure_and_decision_counts():
    rules = tiny_rules()
    acc = loss_accounting(rules, "keep-largest")
    # every game makes n_rolls decisions in each of its n_boxes turns
    assert all(abs(n - rules.n_boxes) < 1e-12 for n in acc.decisions.values())
    assert math.isclose(acc.mean_loss_per_decision, acc.gap / (rules.n_boxes * rules.n_rolls), rel_tol=1e-9)


def test_costliest_positions_in_words_and_order():
    acc = loss_accounting("yacht", "keep-largest", options=["fill-in-order"], top=5)
    assert len(acc.top) == 5
    costs = [t["points_per_game"] for t in acc.top]
    assert costs == sorted(costs, reverse=True)
    for t in acc.top:
        assert math.isclose(t["points_per_game"], t["reach"] * t["loss"], rel_tol=1e-12)
        assert t["choice"] != t["best"] and t["loss"] > 0
        assert len(t["dice"].split()) == 5
    # the best choice's words are those of a keep (rolls left) or a box
    assert any(t["rolls_left"] > 0 and t["best"].startswith(("hold", "reroll")) for t in acc.top)
    frame = acc.to_frame()
    for split, part in frame.groupby("split"):
        assert abs(part["points"].sum() - acc.gap) < 1e-9, split


@pytest.mark.parametrize("rules,why", [("generala", "served"), ("yamb", "cannot solve yamb")])
def test_refused_rule_sets_in_one_line(rules, why):
    with pytest.raises(ValueError, match=why) as e:
        loss_accounting(rules, "greedy")
    assert "\n" not in str(e.value)


def test_randomized_strategy_refused():
    class Coin(LowestBox):
        name = "coin"

        def box(self, state, rolls, options, u):
            legal = options.legal
            last = legal.shape[1] - 1 - np.argmax(legal[:, ::-1], axis=1)
            return np.where(u < 0.5, np.argmax(legal, axis=1), last)

    with pytest.raises(ValueError, match="randomized"):
        loss_accounting(tiny_rules(), Coin())


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["random", "keep-largest", "greedy", "heuristic", "optimal"])
def test_yahtzee_parts_add_up_to_the_gap(strategy):
    from yahtzee_sim.exact.solver import solve

    rules = get_rules("yahtzee")
    acc = loss_accounting(rules, strategy)
    opt = solve(rules, dtype=np.float64).mean
    pv = policy_value(rules, strategy).mean
    assert abs(acc.accounted - (opt - pv)) < 1e-6
    for split, part in acc.to_frame().groupby("split"):
        assert abs(part["points"].sum() - (opt - pv)) < 1e-6, split


def test_estimate_from_simulated_games_holds_the_exact_accounting():
    # keep-largest is exactly evaluable, so the estimate can be checked against the exact parts
    game = dict(options=["fill-in-order"])
    exact = loss_accounting("yacht", "keep-largest", **game)
    est = estimate_losses("yacht", "keep-largest", 4000, seed=11, **game)
    assert est.method == "simulated (4,000 games)" and est.half_width["accounted"] < 0.5
    assert abs(est.accounted - exact.accounted) < 3 * est.half_width["accounted"]
    for k in exact.by_kind:
        assert abs(est.by_kind[k] - exact.by_kind[k]) <= 3 * est.half_width[k] + 1e-12, k
    assert abs(sum(est.by_box.values()) - est.accounted) < 1e-9
    assert abs(est.by_turn.sum() - est.accounted) < 1e-9
    # optimal play loses nothing in any decision met
    opt = estimate_losses("yacht", "optimal", 1100, seed=1, **game)
    assert abs(opt.accounted) < 1e-9 and opt.top == []


def test_estimate_for_a_strategy_that_is_not_exactly_evaluable():
    with pytest.raises(ValueError, match="points so far"):
        loss_accounting("yacht", "target:T=100", options=["fill-in-order"])
    est = estimate_losses("yacht", "target:T=100", 2000, options=["fill-in-order"], seed=3)
    assert est.accounted > 0 and all(t["loss"] > 0 for t in est.top)
    assert abs(sum(est.by_kind.values()) - est.accounted) < 1e-9


def test_two_processes_give_the_same_sums():
    # small chunks, so each level is split between this process and a forked one
    one = loss_accounting("yacht", "keep-largest", jobs=1, chunk_rows=252 * 4000)
    two = loss_accounting("yacht", "keep-largest", jobs=2, chunk_rows=252 * 4000)
    assert abs(one.accounted - two.accounted) < 1e-9 and abs(one.strategy_score - two.strategy_score) < 1e-9
    assert all(abs(one.by_box[k] - two.by_box[k]) < 1e-9 for k in one.by_box)
    assert np.abs(one.by_turn - two.by_turn).max() < 1e-9
    assert [t["dice"] for t in one.top] == [t["dice"] for t in two.top]
    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        loss_accounting("yacht", "keep-largest", jobs=0)


def test_one_worker_takes_its_chunks_of_every_level(monkeypatch):
    # one process forked for the whole walk, not one per level (each fork made every page
    # either process had written fault again); the reach it reads lives in shared memory
    import os

    from yahtzee_sim.exact.losses import compile_walk_beside
    from yahtzee_sim.exact.solver import solve

    compile_walk_beside()()                       # a compilation beside would fork too
    values = solve("yacht", dtype=np.float64)     # and so would the solve
    forks, fork = [], os.fork

    def counted():
        pid = fork()
        if pid:
            forks.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", counted)
    levels = []
    two = loss_accounting("yacht", "keep-largest", jobs=2, chunk_rows=252 * 300, solution=values,
                          progress=lambda phase, done, total: levels.append(done))
    monkeypatch.setattr(os, "fork", fork)
    one = loss_accounting("yacht", "keep-largest", jobs=1, chunk_rows=252 * 300, solution=values)
    assert len(levels) == get_rules("yacht").n_boxes and len(forks) == 1
    assert abs(one.accounted - two.accounted) < 1e-9 and np.abs(one.by_turn - two.by_turn).max() < 1e-9
    assert [t["dice"] for t in one.top] == [t["dice"] for t in two.top]
