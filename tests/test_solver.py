"""Optimal solver: published values, a brute-force cross-check, caching, CLI, strategy."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from yahtzee_sim.exact import cache as cache_mod
from yahtzee_sim.exact._solver_lattice import TIE_TOL
from yahtzee_sim.exact.solver import SOLVER_VERSION, Solution, cache_path, solve
from yahtzee_sim.rules import Box, RuleSet, get_rules, rule_names, rule_options
from yahtzee_sim.rules import scoring as sc


@pytest.fixture(autouse=True, scope="module")
def _private_cache(tmp_path_factory):
    """Keep the user's cache untouched: every solve in this module uses a temp dir."""
    old = os.environ.get(cache_mod.CACHE_ENV)
    os.environ[cache_mod.CACHE_ENV] = str(tmp_path_factory.mktemp("solver-cache"))
    yield
    if old is None:
        os.environ.pop(cache_mod.CACHE_ENV, None)
    else:
        os.environ[cache_mod.CACHE_ENV] = old


# -- published optimal expected scores ---------------------------------------------

def test_yahtzee_free_joker_published():
    # Verhoeff (1999), "Optimal solitaire Yahtzee advisor"; Glenn (2006), "An optimal
    # strategy for Yahtzee", Connecticut College CS TR: 254.5896 (free-choice joker).
    sol = solve("yahtzee-free-joker")
    assert round(sol.expected_score, 4) == 254.5896
    assert round(sol.sd, 2) == 59.61   # Glenn (2006) reports a standard deviation of 59.61


def test_yahtzee_no_bonus_no_joker_published():
    # Glenn (2006): 245.8708 with neither the Yahtzee bonus nor the joker rule.
    sol = solve("yahtzee", options=["no-yahtzee-bonus", "no-joker"])
    assert round(sol.expected_score, 4) == 245.8708


def test_yatzy_published():
    # Scandinavian Yatzy optimal expected score 248.4400 (Larsson & Sjoberg (2012),
    # "Optimal strategy for Yatzy", corrected value; yatzy-solver / Swedish literature).
    sol = solve("yatzy")
    assert round(sol.expected_score, 4) == 248.4400


def test_float32_matches_float64_to_4_decimals():
    for name, opts in [("yahtzee", ["no-yahtzee-bonus", "no-joker"]), ("yacht-classic", [])]:
        a = solve(name, options=opts, dtype=np.float32, cache=False)
        b = solve(name, options=opts, dtype=np.float64, cache=False)
        assert abs(a.expected_score - b.expected_score) < 5e-6
        assert f"{a.expected_score:.4f}" == f"{b.expected_score:.4f}"
        assert abs(a.sd - b.sd) < 1e-4


# -- brute force on small test-only rule sets ----------------------------------------

def _tiny(joker="forced", fill_order="any", five_bonus=100):
    """Four three-sided dice, six boxes: small enough for a plain recursion."""
    boxes = (
        Box("ones", "Ones", sc.upper(1), upper_face=1),
        Box("twos", "Twos", sc.upper(2), upper_face=2),
        Box("threes", "Threes", sc.upper(3), upper_face=3),
        Box("full_house", "Full house", sc.full_house("25"), joker_points=25),
        Box("yahtzee", "Yahtzee", sc.five_of_a_kind(50)),
        Box("chance", "Chance", sc.chance),
    )
    return RuleSet(name="tiny", title="tiny", boxes=boxes, n_dice=4, n_faces=3,
                   upper_bonus_threshold=13, upper_bonus=20, five_box="yahtzee",
                   five_bonus=five_bonus, joker=joker, fill_order=fill_order)


def _brute(rules):
    """Plain recursion over (filled, exact upper total, five box full) with dense matrices."""
    d = rules.dice
    nr = d.n_rolls
    trans = d.transition
    subsets = [d.subkeeps[r, : d.n_subkeeps[r]] for r in range(nr)]
    memo = {}

    def value(filled, u, full):
        key = (filled, u, full)
        if key in memo:
            return memo[key]
        f = np.array(filled)
        if f.all():
            return 0.0, 0.0
        rolls = np.arange(nr)
        legal, scores, bonus = rules.turn_options(np.repeat(f[None], nr, 0), np.full(nr, full), rolls)
        gain = scores.astype(float) + rules.upper_bonus_gain(np.full(nr, u), scores) + bonus[:, None]
        m3 = np.full(nr, -np.inf)
        s3 = np.zeros(nr)
        for b in range(rules.n_boxes):
            for r in range(nr):
                if not legal[r, b]:
                    continue
                nf = list(filled)
                nf[b] = True
                nu = u + (int(scores[r, b]) if rules.is_upper[b] else 0)
                nfull = full or (b == rules.five_box_index and scores[r, b] == rules.five_box_points)
                m, s = value(tuple(nf), nu, nfull)
                g = gain[r, b]
                if g + m > m3[r] + TIE_TOL:   # ties: the first box in card order
                    m3[r], s3[r] = g + m, g * g + 2 * g * m + s
        mv, sv = m3, s3
        for _ in range(rules.n_rolls - 1):
            em, es = trans @ mv, trans @ sv
            # ties (within the solver's tolerance): the keep with the most dice
            pick = [k[np.flatnonzero(em[k] >= em[k].max() - TIE_TOL)[-1]] for k in subsets]
            mv = np.array([em[k].max() for k in subsets])
            sv = es[pick]
        out = float(d.first_roll_prob @ mv), float(d.first_roll_prob @ sv)
        memo[key] = out
        return out

    m, s = value((False,) * rules.n_boxes, 0, False)
    return m, np.sqrt(s - m * m)


@pytest.mark.parametrize("joker,fill,bonus", [("forced", "any", 100), ("free", "any", 100),
                                              ("original", "any", 0), ("none", "in-order", 100)])
def test_solver_matches_brute_force(joker, fill, bonus):
    rules = _tiny(joker, fill, bonus)
    m, sd = _brute(rules)
    sol = solve(rules, dtype=np.float64, cache=False)
    assert abs(sol.expected_score - m) < 1e-9
    assert abs(sol.sd - sd) < 1e-6


# -- value() --------------------------------------------------------------------------

def test_value_api():
    sol = solve("yacht", options=["fill-in-order"])
    b = sol.rules.n_boxes
    assert sol.value(np.zeros((1, b), bool), [0], [False])[0] == pytest.approx(sol.expected_score)
    assert sol.value(np.ones((2, b), bool), [0, 80], [False, True]).tolist() == [0.0, 0.0]
    # a card with only Ones filled cannot have an upper total of 7
    filled = np.zeros((1, b), bool)
    filled[0, 0] = True
    assert np.isnan(sol.value(filled, [7], [False])[0])
    with pytest.raises(ValueError, match="columns"):
        sol.value(np.zeros((1, 3), bool), [0], [False])
