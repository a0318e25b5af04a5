"""Shared conformance suite (pgx's ``api_test`` spirit, in :mod:`yahtzee_sim.checks`): every rule set passes
:func:`check_ruleset`, every rule set x strategy passes :func:`check_strategy`.

Other test files may import these helpers (``from conftest import ...``) to run a
new rule set or strategy through the same checks.
"""

from __future__ import annotations

import numpy as np
import pytest

# the checks themselves ship in the library (users run them on their own plug-ins)
from yahtzee_sim.checks import Recorder, check_ruleset, check_strategy  # noqa: F401
from yahtzee_sim.exact import cache as _solver_cache
from yahtzee_sim.rules import RuleSet, get_rules
from yahtzee_sim.strategies import Strategy, get_strategy

# A mix of the yacht options that change card-level rules, named so other test files
# can use it by name.
YACHT_MIX = ("yacht", ("full-house-25", "straights-30-40", "three-dice", "five-not-full-house",
                       "no-bonus", "yacht-bonus-100", "fill-in-order", "four-dice-of-four"))

# Rule sets run through the simulator: every registered one plus the yacht options
# that change card-level rules (fill order, extra box, Yacht bonus) and some mixes,
# then the rest of the family the engine plays. Address a case by its value (or
# case_id), never by its position in this list.
ENGINE_RULE_CASES = [
    ("yahtzee", ()),
    ("yahtzee-free-joker", ()),
    ("yahtzee-original-joker", ()),
    ("yahtzee", ("no-joker",)),
    ("yacht", ()),
    ("yacht", ("fill-in-order",)),
    ("yacht", ("three-dice",)),
    ("yacht", ("yacht-bonus-100",)),
    ("kniffel", ()),
    ("kniffel", ("kniffel-bonus-100", "free-joker")),
    ("kniffel", ("no-kniffel-bonus",)),
    ("kismet", ()),
    ("yacht", ("faces-7",)),
    ("yahtzee", ("faces-7",)),
    ("yahtzee-free-joker", ("faces-5",)),
    ("balut", ()),
    ("maxi-yatzy", ("no-saved-throws",)),
    ("maxi-yatzy", ()),
    ("generala", ()),
    ("generala", ("no-doble", "no-wrap-straight")),
    ("yamb", ()),
    YACHT_MIX,
    ("yacht-classic", ()),
    ("yatzy", ()),
]

# Strategies that need an expensive per-rule-set solve run only on these rule sets.
HEAVY_STRATEGIES = {"optimal"}
HEAVY_RULE_CASES = {("yahtzee", ()), ("yacht", ())}


def case_id(case) -> str:
    name, options = case
    return "+".join((name,) + tuple(options))


@pytest.fixture(params=ENGINE_RULE_CASES, ids=case_id)
def engine_rules(request) -> RuleSet:
    name, options = request.param
    return get_rules(name, options)


USER_SOLVER_CACHE = _solver_cache.cache_dir()
"""The user's solver cache, as it was before the private one below replaced it: only
read (never written) by the test of a table too slow to compute in the suite."""


@pytest.fixture(autouse=True, scope="session")
def _private_solver_cache(tmp_path_factory):
    """Every solve of the test run goes to one temporary cache, never the user's; and a
    command slowed by a loaded machine prints no phase lines into a test's stderr (the
    tests of those lines set their own wait)."""
    mp = pytest.MonkeyPatch()
    mp.setenv(_solver_cache.CACHE_ENV, str(tmp_path_factory.mktemp("solver-cache")))
    mp.setenv("YAHTZEE_SIM_PHASE_LINES_AFTER", "inf")
    yield
    mp.undo()


# -- tiny games for the exact evaluations (tests/test_policy.py, tests/test_distribution.py)

def tiny_rules(*, joker="forced", five_bonus=20, upper_bonus=7, fill_order="any") -> RuleSet:
    """Two three-sided dice, three rolls, five boxes: Ones, Twos, Threes, Pair (both dice
    equal: the five-of-a-kind box), Chance. Small enough to enumerate every game."""
    from yahtzee_sim.rules import Box
    from yahtzee_sim.rules import scoring as sc

    boxes = (
        Box("ones", "Ones", sc.upper(1), upper_face=1),
        Box("twos", "Twos", sc.upper(2), upper_face=2),
        Box("threes", "Threes", sc.upper(3), upper_face=3),
        Box("pair", "Pair", sc.five_of_a_kind(10)),
        Box("chance", "Chance", sc.chance, joker_points=9),
    )
    return RuleSet(name="tiny", title="Tiny", boxes=boxes, n_dice=2, n_faces=3, n_rolls=3,
                   upper_bonus_threshold=6, upper_bonus=upper_bonus, five_box="pair",
                   five_bonus=five_bonus, joker=joker, fill_order=fill_order)


TINY_CASES = {
    "forced-joker": dict(),
    "free-joker": dict(joker="free"),
    "no-joker-no-bonus": dict(joker="none", five_bonus=0),
    "in-order": dict(fill_order="in-order"),
}


class LowestBox(Strategy):
    """Deterministic test strategy: keep the dice of the roll's lowest face, fill the
    first legal box (exercises states other strategies avoid)."""

    name = "lowest-box"

    def keep(self, state, rolls, rolls_left, u):
        counts = self.dice.roll_counts[rolls].copy()
        low = np.argmax(counts > 0, axis=1)
        held = np.zeros_like(counts)
        held[np.arange(len(rolls)), low] = counts[np.arange(len(rolls)), low]
        return self.dice.keep_index_of_counts(held)

    def box(self, state, rolls, options, u):
        return np.argmax(options.legal, axis=1)


def row_by_row(name: str) -> Strategy:
    """The built-in strategy ``name`` behind overridden keep() and box() that only call
    it: the exact evaluations then ask it one (state, roll) row at a time, the
    straightforward way, instead of reading its decision tables."""
    base = type(get_strategy(name))

    class RowByRow(base):
        def keep(self, state, rolls, rolls_left, u):
            return super().keep(state, rolls, rolls_left, u)

        def box(self, state, rolls, options, u):
            return super().box(state, rolls, options, u)

    strategy = RowByRow()
    strategy.name = f"{name} (row by row)"
    return strategy
