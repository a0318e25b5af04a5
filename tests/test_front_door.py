"""The package's front door (issue "one house"): ``import yahtzee_sim as ys`` offers the
whole job, every advertised name resolves, and the exact engine's package says what
it offers."""

import inspect

import yahtzee_sim as ys
import yahtzee_sim.exact as exact


def test_every_public_name_resolves():
    for name in ys.__all__:
        assert getattr(ys, name) is not None, name
    for name in exact.__all__:
        assert getattr(exact, name) is getattr(ys, name, getattr(exact, name)), name


def test_the_job_is_at_the_front_door():
    for name in ("simulate", "simulate_turns", "simulate_table", "solve", "policy_value", "distribution",
                 "target", "advise", "get_rules", "get_strategy"):
        assert callable(getattr(ys, name)), name
        assert inspect.getdoc(getattr(ys, name)), name
    assert ys.target is ys.target_solve


def test_rng_and_seed_are_spelled_alike_everywhere():
    for fn in (ys.simulate, ys.simulate_turns, ys.simulate_table):
        params = inspect.signature(fn).parameters
        assert "seed" in params and "rng" in params, fn.__name__
