"""Exact card events (a box's points, zeros, turns ending in five of a kind): a
plain-Python game recursion on tiny games, and simulation on yahtzee."""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict

import numpy as np
import pytest
from conftest import TINY_CASES, LowestBox, tiny_rules

from yahtzee_sim import GameState, simulate
from yahtzee_sim.exact.events import event_distribution
from yahtzee_sim.strategies import get_strategy


def brute_cards(rules, strategy, *, uniform=False) -> dict:
    """{(points written in each box, turns whose final dice are five of a kind): p} by
    enumerating every ordered outcome of every throw of every turn (real upper totals,
    one strategy question per state and roll; ``uniform``: every keep uniform over the
    roll's distinct keeps and every box over the legal ones, the ``random`` strategy)."""
    strategy.prepare(rules)
    d = rules.dice
    n, f, b = rules.n_dice, rules.n_faces, rules.n_boxes
    outcomes = {k: list(itertools.product(range(1, f + 1), repeat=k)) for k in range(n + 1)}

    def roll_of(dice):
        return d.roll_index_of(sorted(int(x) for x in dice))

    @functools.cache
    def game(filled: tuple, upper: int, full: bool) -> dict:
        """{(points of the boxes filled from here on, None elsewhere; five count): p}"""
        if all(filled):
            return {((None,) * b, 0): 1.0}
        fl = np.array([filled] * d.n_rolls)
        rolls = np.arange(d.n_rolls)
        state = GameState.from_arrays(rules, fl, [upper] * d.n_rolls, [full] * d.n_rolls)
        legal, scores, bonus = rules.turn_options(fl, np.full(d.n_rolls, full), rolls,
                                                  throws=np.full(d.n_rolls, rules.n_rolls))
        from yahtzee_sim.state import TurnOptions

        gain = scores + rules.upper_bonus_gain(np.full(d.n_rolls, upper), scores) + bonus[:, None]
        opts = TurnOptions(legal, scores, gain)
        zeros = np.zeros(d.n_rolls, np.float32)
        if not uniform:
            boxes = strategy.box(state, rolls, opts, zeros)
            keeps = {j: strategy.keep(state, rolls, j, zeros) for j in range(rules.n_rolls - 1, 0, -1)}

        def final(r):
            choices = np.flatnonzero(legal[r]) if uniform else [boxes[r]]
            out = defaultdict(float)
            five = int(int(d.roll_counts[r].max()) == n)
            for bx in choices:
                bx = int(bx)
                assert legal[r, bx]
                pts = int(scores[r, bx])
                nf = list(filled)
                nf[bx] = True
                rest = game(tuple(nf), upper + (pts if rules.is_upper[bx] else 0),
                            full or bool(rules.fills_five_box(np.array([bx]), np.array([pts]))[0]))
                for (card, k), p in rest.items():
                    card = list(card)
                    card[bx] = pts
                    out[(tuple(card), k + five)] += p / len(choices)
            return out

        @functools.cache
        def value(r, j):
            if j == 0:
                return final(r)
            if uniform:
                choices = [d.keep_counts[k] for k in d.subkeeps[r, :d.n_subkeeps[r]]]
            else:
                choices = [d.keep_counts[keeps[j][r]]]
            out = defaultdict(float)
            for kept in choices:
                held = list(np.repeat(np.arange(1, f + 1), kept))
                outs = outcomes[n - len(held)]
                for o in outs:
                    for key, p in value(roll_of(held + list(o)), j - 1).items():
                        out[key] += p / len(outs) / len(choices)
            return out

        out = defaultdict(float)
        for o in outcomes[n]:
            for key, p in value(roll_of(o), rules.n_rolls - 1).items():
                out[key] += p / len(outcomes[n])
        return dict(out)

    return game((False,) * b, 0, False)


def _pmf(joint, of) -> np.ndarray:
    acc = defaultdict(float)
    for key, p in joint.items():
        acc[of(*key)] += p
    out = np.zeros(max(acc) + 1)
    for x, p in acc.items():
        out[x] += p
    return out


def _close(got, want):
    n = max(len(got), len(want))
    np.testing.assert_allclose(np.pad(got, (0, n - len(got))), np.pad(want, (0, n - len(want))),
                               rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", list(TINY_CASES))
@pytest.mark.parametrize("strategy", ["keep-largest", "greedy", "lowest-box", "random"])
def test_tiny_events_match_the_game_recursion(case, strategy):
    rules = tiny_rules(**TINY_CASES[case])
    strat = LowestBox() if strategy == "lowest-box" else get_strategy(strategy)
    joint = brute_cards(rules, strat, uniform=strategy == "random")
    ev = event_distribution(rules, LowestBox() if strategy == "lowest-box" else strategy)
    assert ev.method == ("uniform average" if strategy == "random" else "deterministic")
    for i, name in enumerate(rules.box_names):
        _close(ev.box_pmf[name], _pmf(joint, lambda card, k, i=i: card[i]))
        _close(ev.pmf("box", name), ev.box_pmf[name])
    _close(ev.zeros_pmf, _pmf(joint, lambda card, k: sum(x == 0 for x in card)))
    _close(ev.five_pmf, _pmf(joint, lambda card, k: k))
    assert len(ev.zeros_pmf) == len(ev.five_pmf) == rules.n_boxes + 1


def test_unknown_event_is_refused():
    ev = event_distribution(tiny_rules(), "greedy")
    with pytest.raises(ValueError, match="valid: box, zeros, five_of_a_kind"):
        ev.pmf("sixes")


def _within(exact, sample):
    """The exact mean inside four standard errors of the sample's (and the sample big
    enough that four se is under a tenth of a point or count)."""
    se = sample.std(ddof=1) / np.sqrt(len(sample))
    assert abs(sample.mean() - exact) <= 4 * se + 1e-12, (exact, sample.mean(), se)


@pytest.mark.slow
def test_yahtzee_events_against_simulation():
    """Optimal yahtzee: each event's exact mean and P(zeros >= 1), P(five of a kinds >= 2)
    inside 4 se of 50,000 simulated games (4 se: about 0.04 boxes or turns, 0.02 to 0.1
    points for most boxes, 0.4 for Yahtzee's 0-or-50); and the box means adding up, with
    the bonuses, to the exact score distribution's mean (a separate pass, to 1e-9)."""
    from yahtzee_sim.exact.distribution import distribution

    ev = event_distribution("yahtzee", "optimal")
    dist = distribution("yahtzee", "optimal")
    rules = ev.rules
    total = sum(ev.mean("box", b) for b in rules.box_names) + rules.upper_bonus * dist.p_upper_bonus \
        + rules.five_bonus * dist.expected_five_bonuses
    assert total == pytest.approx(dist.mean, abs=1e-9)
    assert ev.mean("five_of_a_kind") == pytest.approx(dist.five_per_game, abs=1e-12)
    res = simulate("yahtzee", "optimal", 50_000, seed=2026, keep_games=True)
    g = res.games
    scores = np.asarray(g["box_scores"])
    for i, name in enumerate(res.rules.box_names):
        _within(ev.mean("box", name), scores[:, i].astype(float))
    zeros = (scores == 0).sum(axis=1)
    five = np.asarray(g["five_count"])
    _within(ev.mean("zeros"), zeros.astype(float))
    _within(ev.mean("five_of_a_kind"), five.astype(float))
    _within(float(ev.zeros_pmf[1:].sum()), (zeros >= 1).astype(float))
    _within(float(ev.five_pmf[2:].sum()), (five >= 2).astype(float))


def test_cached_events_equal_computed_ones_and_are_keyed_by_the_strategys_code(tmp_path, monkeypatch):
    """The disk cache gives back every array as computed (box points, zeros, five of a
    kind) and answers only for the same code: a strategy changed under the same name is
    recomputed, not read from the old file."""
    from yahtzee_sim import strategy as strategies   # where events reads code_fingerprint from
    from yahtzee_sim.exact import cache_files
    from yahtzee_sim.exact import events as E

    args = dict(options=["fill-in-order"], cache=True, cache_dir=tmp_path)
    computed = E.event_distribution("yacht", "greedy", options=["fill-in-order"])
    first = E.event_distribution("yacht", "greedy", **args)
    calls = []
    real = E._event_distribution
    monkeypatch.setattr(E, "_event_distribution", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = E.event_distribution("yacht", "greedy", **args)
    assert calls == []                                                    # a hit
    for ev in (first, again):
        assert ev.rules.key == computed.rules.key and (ev.strategy, ev.method) == ("greedy", "deterministic")
        np.testing.assert_array_equal(ev.zeros_pmf, computed.zeros_pmf)
        np.testing.assert_array_equal(ev.five_pmf, computed.five_pmf)
        assert list(ev.box_pmf) == list(computed.box_pmf)
        for box, p in computed.box_pmf.items():
            np.testing.assert_array_equal(ev.box_pmf[box], p)
    (entry,) = cache_files.cache_entries(tmp_path)
    assert (entry.rules, entry.kind, entry.detail) == (computed.rules.key, "events", "greedy")
    monkeypatch.setattr(strategies, "code_fingerprint", lambda s: "another-code")
    changed = E.event_distribution("yacht", "greedy", **args)
    assert calls == [1]
    np.testing.assert_array_equal(changed.zeros_pmf, computed.zeros_pmf)
    # a strategy object (not a name) is never cached: its code is not pinned by a name
    E.event_distribution("yacht", get_strategy("greedy"), **args)
    assert calls == [1, 1]
