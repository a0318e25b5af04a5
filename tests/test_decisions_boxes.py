"""The decision build's compiled box picks (exact/_decision_kernels.py ``box_picks``).

The reference is :func:`~yahtzee_sim.exact.decisions._box_picks_generic`: every (state,
roll) priced from :meth:`RuleSet.turn_options` and picked by ``best_legal``, the
strategies' own ``box`` arithmetic, which shares nothing with the compiled loop's
(box, points) pairs, gain tables and per-case five-of-a-kind options. The NumPy path
(``KERNELS = "numpy"``) is compared too: the fallback must stay the same table.
"""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import get_rules
from yahtzee_sim.exact import decisions as D
from yahtzee_sim.exact.solver import solve


def _picks(rules, states, values, throws, kernels, monkeypatch):
    monkeypatch.setattr(D, "KERNELS", kernels)
    m, u, f = states
    return D._box_picks(rules, state_space_of(rules), values, m, u, f, throws)


def state_space_of(rules):
    from yahtzee_sim.exact.space import state_space

    return state_space(rules)


def _check(rules, states, values, monkeypatch):
    """Compiled picks == NumPy picks == turn_options picks, for every roll of ``states``."""
    sp = state_space_of(rules)
    m, u, f = states
    all_rolls = np.arange(rules.dice.n_rolls)
    for throws in ((2, 1) if rules.roll_dependent else (None,)):
        plain = D._box_picks_generic(rules, sp, values, m, u, f, all_rolls, throws)
        compiled = _picks(rules, states, values, throws, "numba", monkeypatch)
        np.testing.assert_array_equal(compiled, plain, err_msg=f"compiled, throws {throws}")
        numpy = _picks(rules, states, values, throws, "numpy", monkeypatch)
        np.testing.assert_array_equal(numpy, plain, err_msg=f"numpy, throws {throws}")


SMALL = [
    pytest.param("yahtzee", ("faces-3",), id="yahtzee+faces-3"),                    # forced joker
    pytest.param("yahtzee-free-joker", ("faces-3",), id="free-joker+faces-3"),
    pytest.param("yahtzee-original-joker", ("faces-3",), id="original-joker+faces-3"),
    pytest.param("yacht", ("fill-in-order",), id="yacht+fill-in-order"),
    pytest.param("generala", (), id="generala"),                                     # served boxes, doble
]


@pytest.mark.parametrize("name,options", SMALL)
def test_compiled_box_picks_equal_turn_options_on_every_state(name, options, monkeypatch):
    rules = get_rules(name, options)
    sol = solve(rules)
    states, _ = D._states(sol.space)
    assert rules.five_box is None or len(D._special_rolls(rules))      # the joker rolls are in play
    _check(rules, states, np.ascontiguousarray(sol.values).reshape(-1), monkeypatch)


@pytest.mark.parametrize("name", ["yahtzee", "kniffel", "kismet"])
def test_compiled_box_picks_equal_turn_options_on_a_slice(name, monkeypatch):
    """A random slice of a full game (kismet: the tiered upper bonus)."""
    rules = get_rules(name)
    sol = solve(rules)
    (m, u, f), _ = D._states(sol.space)
    # the first levels (the fresh card on) and a random spread of the rest
    pick = np.unique(np.concatenate([np.arange(300), np.random.default_rng(21).choice(len(m), 1500)]))
    if rules.five_box is not None:                  # jokers and five-of-a-kind bonuses in play
        assert ((m[pick] >> rules.five_box_index) & 1).any() and (f[pick] == 1).any()
    _check(rules, (m[pick], u[pick], f[pick]), np.ascontiguousarray(sol.values).reshape(-1), monkeypatch)


def test_a_nan_value_is_picked_as_numpy_picks_it(monkeypatch):
    """A NaN next value (never in a solved table): the regular rolls' loop never takes it,
    the five-of-a-kind rolls take the first NaN (best_legal), in both paths alike."""
    rules = get_rules("yahtzee", ["faces-3"])
    sol = solve(rules)
    sp = sol.space
    (m, u, f), _ = D._states(sp)
    values = np.ascontiguousarray(sol.values).reshape(-1).copy()
    values[np.random.default_rng(5).choice(len(values), len(values) // 7, replace=False)] = np.nan
    monkeypatch.setattr(D, "KERNELS", "numpy")
    numpy = D._box_picks(rules, sp, values, m, u, f)
    monkeypatch.setattr(D, "KERNELS", "numba")
    compiled = D._box_picks(rules, sp, values, m, u, f)
    np.testing.assert_array_equal(compiled, numpy)
    special = D._special_rolls(rules)
    assert (compiled[:, special] != D._box_picks_generic(rules, sp, sol.values.reshape(-1), m, u, f,
                                                         special)).any()   # the NaNs changed picks


def test_a_context_made_for_other_states_is_refused():
    rules = get_rules("yacht-classic")
    sp = state_space_of(rules)
    ctx = D._box_context(rules, sp, np.array([0]), np.array([0]))
    values = np.zeros(sp.size)
    with pytest.raises(RuntimeError, match="outside its box context"):
        D._box_picks_compiled(D._kernels(), sp, values, np.array([1]), np.array([0]), np.array([0]), ctx)


def test_one_compiled_signature_whatever_the_values_flags():
    """A solve read from the cache is a read-only map, a fresh one is writable: the loop
    compiled ahead (precompile, beside the solve) must be the one both calls use, or a
    cold build compiles it again."""
    from yahtzee_sim.exact import _decision_kernels as kx

    rules = get_rules("yacht-classic")
    sol = solve(rules)
    (m, u, f), _ = D._states(sol.space)
    D.precompile()
    writable = np.array(sol.values, dtype=np.float64).reshape(-1)
    frozen = writable.copy()
    frozen.flags.writeable = False
    a = D._box_picks(rules, sol.space, writable, m[:50], u[:50], f[:50])
    b = D._box_picks(rules, sol.space, frozen, m[:50], u[:50], f[:50])
    np.testing.assert_array_equal(a, b)
    assert len(kx.box_picks.signatures) == 1


@pytest.mark.parametrize("name", ["yacht-classic", "generala"])
def test_the_builds_keeps_only_plan_is_the_widgets_plan(name):
    """``plan="keeps"`` (the build's planner) skips the value after the last reroll: the
    keep values must be the full plan's, bit for bit (generala: served dice on the last)."""
    from yahtzee_sim.exact.space import turn_model, turn_values

    rules = get_rules(name)
    sol = solve(rules)
    (m, u, f), _ = D._states(sol.space)
    values = np.ascontiguousarray(sol.values).reshape(-1)
    model = turn_model(rules, np.float32)
    value, (full, _) = turn_values(model, values, None, m, u, f, plan=True)
    none, (keeps, _) = turn_values(model, values, None, m, u, f, plan="keeps")
    assert none is None and value.shape == (len(m),)
    for j in range(1, rules.n_rolls):
        assert keeps[j].tobytes() == full[j].tobytes()
