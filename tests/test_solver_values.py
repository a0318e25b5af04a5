"""The solver's value tables hold the exact maximum in every state (issue 10, finding 1).

Three independent checks, none of which uses the solver's own turn evaluation:

* small games: a plain-Python DP (dice as sorted tuples, keeps and reroll chances
  enumerated by hand, exact ``max``) gives every state's value; the solver's
  float64 table equals it to 1e-9 in every state;
* ``yahtzee`` and ``yatzy``: for a sample of mid-game states, the turn is
  recomputed in NumPy from the dense keep -> roll matrix with exact maxima, from
  the table's values of the next states (one Bellman step); equal to 1e-9;
* float32 tables within 1e-4 of float64 in every state.
"""

from __future__ import annotations


import numpy as np
import pytest

from plain_game import OptimalMean
from yahtzee_sim.exact.space import state_space
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.rules import Box, RuleSet
from yahtzee_sim.rules import scoring as sc


# -- a plain-Python DP on small games (tests/plain_game.py) ------------------------------

def _small(joker="forced", fill_order="any", five_bonus=100, n_dice=4, n_faces=4):
    boxes = [Box(f"u{f}", f"U{f}", sc.upper(f), upper_face=f) for f in range(1, n_faces + 1)]
    boxes += [
        Box("full_house", "Full house", sc.full_house("25"), joker_points=25),
        Box("yahtzee", "Yahtzee", sc.five_of_a_kind(50)),
        Box("chance", "Chance", sc.chance),
    ]
    return RuleSet(name="small", title="small", boxes=tuple(boxes), n_dice=n_dice,
                   n_faces=n_faces, upper_bonus_threshold=2 * n_faces + 1, upper_bonus=20,
                   five_box="yahtzee", five_bonus=five_bonus, joker=joker, fill_order=fill_order)


def _served(scorer, extra):
    """A box paying ``extra`` more when its dice are those of the first throw."""
    def score(counts, throws=None):
        base = np.asarray(scorer(counts))
        return np.where(base > 0, base + (extra if throws == 1 else 0), 0)
    return score


def _small_served(n_dice=4, n_faces=4, tiers=False):
    """Generala-like: served straight, full and n of a kind pay more; no upper bonus
    unless ``tiers`` (then a two-tier one, as in Kismet)."""
    boxes = [Box(f"u{f}", f"U{f}", sc.upper(f), upper_face=f) for f in range(1, n_faces + 1)]
    boxes += [
        Box("straight", "Straight", _served(sc.straight(n_dice, 20), 5), by_throw=True),
        Box("full", "Full", _served(sc.full_house("25"), 5), by_throw=True),
        Box("generala", "Generala", _served(sc.five_of_a_kind(50), 10), by_throw=True),
    ]
    extra = {}
    if tiers:
        extra = dict(upper_bonus_threshold=14, upper_bonus=30)
        if "upper_bonus_tiers" in RuleSet.__dataclass_fields__:
            extra["upper_bonus_tiers"] = ((10, 15), (14, 30))
    else:
        extra = dict(upper_bonus=0)
    return RuleSet(name="served", title="served", boxes=tuple(boxes), n_dice=n_dice,
                   n_faces=n_faces, five_box="generala", **extra)


@pytest.mark.parametrize("tiers", [False, True], ids=["no-bonus", "tiers"])
def test_served_game_every_state_equals_a_literal_dp(tiers):
    rules = _small_served(n_dice=3, tiers=tiers)
    dp = OptimalMean(rules)
    start = dp.value((False,) * rules.n_boxes, 0, False)
    sol = solve(rules, dtype=np.float64, cache=False)
    assert abs(sol.mean - start) < 1e-9
    keys = list(dp.memo)
    got = sol.value(np.array([k[0] for k in keys]), [k[1] for k in keys], [k[2] for k in keys])
    want = np.array([dp.memo[k] for k in keys])
    assert np.abs(got - want).max() < 1e-9
    # and the served scores matter: the same game scored as if never served is worse
    assert sol.mean > solve(_unserved(rules), dtype=np.float64, cache=False).mean + 0.5


def _unserved(rules):
    import dataclasses

    boxes = tuple(dataclasses.replace(b, score=(lambda f: lambda c: f(c, 3))(b.score), by_throw=False)
                  if b.by_throw else b for b in rules.boxes)
    return dataclasses.replace(rules, boxes=boxes, name="unserved")


@pytest.mark.parametrize("joker,fill,bonus", [("forced", "any", 100), ("free", "any", 100),
                                              ("original", "any", 0), ("none", "in-order", 100)])
def test_every_state_equals_a_plain_dp(joker, fill, bonus):
    rules = _small(joker, fill, bonus)
    dp = OptimalMean(rules)
    start = dp.value((False,) * rules.n_boxes, 0, False)
    sol = solve(rules, dtype=np.float64, cache=False)
    assert abs(sol.mean - start) < 1e-9
    keys = list(dp.memo)
    filled = np.array([k[0] for k in keys])
    got = sol.value(filled, [k[1] for k in keys], [k[2] for k in keys])
    want = np.array([dp.memo[k] for k in keys])
    assert len(keys) > 100
    assert np.abs(got - want).max() < 1e-9


def test_plain_dp_chances_are_exact():
    """The DP's own enumeration: chances sum to one, and a known case (three dice of
    three faces: all equal with probability 3/27)."""
    dp = OptimalMean(_small(n_dice=3, n_faces=3))
    assert sum(dp.roll_prob.values()) == pytest.approx(1.0, abs=1e-15)
    assert sum(p for r, p in dp.roll_prob.items() if len(set(r)) == 1) == pytest.approx(3 / 27, abs=1e-15)


# -- one Bellman step with exact maxima on sampled mid-game states ------------------------

def bellman(sol, mask, u, flag) -> np.ndarray:
    """(S,) states' values from the table's next-state values, via the dense keep matrix."""
    rules = sol.rules
    sp = state_space(rules)
    d = rules.dice
    nr, nb = d.n_rolls, rules.n_boxes
    mask, u, flag = (np.asarray(a, dtype=np.int64) for a in (mask, u, flag))
    n = len(mask)
    rep = np.repeat(np.arange(n), nr)                    # (S * R,) rows: state x roll
    filled = ((mask[rep, None] >> np.arange(nb)) & 1).astype(bool)
    legal, scores, bonus = rules.turn_options(filled, flag[rep].astype(bool), np.tile(np.arange(nr), n))
    scores = scores.astype(np.int64)
    gain = scores + rules.upper_bonus_gain(u[rep], scores) + bonus[:, None]
    nxt_mask = mask[rep, None] | (1 << np.arange(nb))
    nu = np.minimum(u[rep, None] + np.where(rules.is_upper, scores, 0), sp.cap)
    nfl = np.broadcast_to(flag[rep, None], scores.shape)
    if sp.n_flag == 2:
        nfl = nfl | ((np.arange(nb) == rules.five_box_index) & (scores == rules.five_box_points))
    nxt = sol.values[nxt_mask, nu, nfl]
    x = np.where(legal, gain + np.where(legal, nxt, 0.0), -np.inf).max(axis=1).reshape(n, nr)
    sub = d.subkeeps
    for _ in range(rules.n_rolls - 1):
        ev = x @ d.transition.T                                                 # (S, K)
        x = np.where(sub >= 0, ev[:, np.maximum(sub, 0)], -np.inf).max(axis=2)  # (S, R)
    return x @ d.first_roll_prob


def _check_sample(sol, states, chunk=2000):
    m, u, fl = states
    got = sol.values[m, u, fl]
    want = np.concatenate([bellman(sol, m[i:i + chunk], u[i:i + chunk], fl[i:i + chunk])
                           for i in range(0, len(m), chunk)])
    return np.abs(got - want).max()


def _sample_states(sol, n: int, seed: int):
    """Up to ``n`` solved states of every level with at least one box filled."""
    sp = state_space(sol.rules)
    rng = np.random.default_rng(seed)
    out = []
    for level in range(1, sp.n_boxes):
        (m, u, fl), _ = sp.level_states(sp.level_masks[level])
        pick = rng.choice(len(m), size=min(n, len(m)), replace=False)
        out.append(np.stack([m[pick], u[pick], fl[pick]]))
    return tuple(np.concatenate(out, axis=1))


@pytest.fixture(scope="module")
def yahtzee64():
    return solve("yahtzee", dtype=np.float64)


def test_yahtzee_mid_game_states_are_exact_maxima(yahtzee64):
    assert _check_sample(yahtzee64, _sample_states(yahtzee64, 1500, seed=1)) < 1e-9
    assert abs(bellman(yahtzee64, [0], [0], [0])[0] - yahtzee64.mean) < 1e-9


def test_yahtzee_float32_within_1e4_of_float64_everywhere(yahtzee64):
    f32 = solve("yahtzee", dtype=np.float32)
    assert np.array_equal(np.isnan(f32.values), np.isnan(yahtzee64.values))
    assert np.nanmax(np.abs(f32.values - yahtzee64.values)) < 1e-4


@pytest.mark.slow
def test_yatzy_mid_game_states_are_exact_maxima():
    sol = solve("yatzy", dtype=np.float64)
    rules = sol.rules
    # issue 10: upper 62 with threes, fours, sixes, both straights, full house and
    # chance filled; an independent f64 solver gives 144.8995051 (the old tie rule
    # gave 144.8994901)
    filled = np.zeros((1, rules.n_boxes), bool)
    for name in ("threes", "fours", "sixes", "small_straight", "large_straight",
                 "full_house", "chance"):
        filled[0, rules.box_index(name)] = True
    v = sol.value(filled, [62], [False])[0]
    assert f"{v:.7f}" == "144.8995051"
    mask = int(filled[0].astype(np.int64) @ (1 << np.arange(rules.n_boxes)))
    assert abs(bellman(sol, [mask], [62], [0])[0] - v) < 1e-9
    assert _check_sample(sol, _sample_states(sol, 1000, seed=2)) < 1e-9
    f32 = solve("yatzy", dtype=np.float32)
    assert np.nanmax(np.abs(f32.values - sol.values)) < 1e-4
