"""The compiled loops of the exact evaluations (yahtzee_sim.exact._eval_kernels): the
signatures compiled ahead for a first distribution are the ones its pass calls, and the
pass starts the compilation beside only where numba's cache lacks the loops."""

from __future__ import annotations

import numba
import pytest

from yahtzee_sim.exact import _eval_kernels as kx
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.forkpool import Compiling

from conftest import TINY_CASES, tiny_rules


def _spy_on_pass(monkeypatch) -> dict:
    """Record the numba types of every call of the pass's loops (the module attributes the
    pass imports at each call are replaced by recorders that call the real loop)."""
    seen: dict = {name: set() for name in kx.PASS_KERNELS}
    for name in kx.PASS_KERNELS:
        real = getattr(kx, name)

        def spy(*args, _real=real, _name=name):
            seen[_name].add(tuple(numba.typeof(a) for a in args))
            return _real(*args)

        monkeypatch.setattr(kx, name, spy)
    return seen


@pytest.mark.parametrize("case", list(TINY_CASES))
def test_the_signatures_compiled_ahead_are_the_ones_optimal_play_calls(case, monkeypatch):
    """A distribution of optimal play (its decision table) calls each loop of the pass
    with exactly the types compile_pass compiles: else the compilation beside would be
    wasted and the pass would compile again (the cold run's seconds)."""
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.strategies.optimal import OptimalStrategy

    rules = tiny_rules(**TINY_CASES[case])
    sol = solve(rules, cache=False)
    seen = _spy_on_pass(monkeypatch)
    monkeypatch.setattr("yahtzee_sim.forkpool.compile_beside", lambda *a, **k: Compiling())
    distribution(rules, OptimalStrategy(sol))
    ahead = kx.pass_signatures()
    for name in kx.PASS_KERNELS:
        assert seen[name], f"{name} was not called"             # the spy saw the pass
        assert seen[name] == {ahead[name]}, name


@pytest.mark.parametrize("strategy", ["keep-largest", "optimal"])
def test_a_first_pass_compiles_beside_and_waits_before_its_loops(strategy, monkeypatch):
    """Where numba's cache lacks the loops, the pass starts their compilation in a forked
    process before preparing the strategy (optimal: the decision table's build loops
    first, needed first), and waits for it before its first loop."""
    from yahtzee_sim.exact import decisions
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.strategies.optimal import OptimalStrategy

    events: list = []

    class Job(Compiling):
        def wait(self, timeout=None):
            events.append("wait")
            return False

    def beside(work, *, kernels=(), **kw):
        events.append(("start", work, len(kernels)))
        return Job()

    monkeypatch.setattr("yahtzee_sim.forkpool.compile_beside", beside)
    real_frm = kx.final_roll_masses

    def first_loop(*args):
        events.append("loop")
        return real_frm(*args)

    monkeypatch.setattr(kx, "final_roll_masses", first_loop)
    rules = tiny_rules()
    strat = OptimalStrategy(solve(rules, cache=False)) if strategy == "optimal" else strategy
    dist = distribution(rules, strat)
    assert abs(dist.pmf.sum() - 1) < 1e-12
    assert events[0][0] == "start" and events[0][2] == len(kx.PASS_KERNELS)
    assert events.index("wait") < events.index("loop")          # waited before the first loop
    # what the forked process would run, in order
    ran: list = []
    monkeypatch.setattr(kx, "pass_signatures", lambda: ran.append("pass") or {})
    monkeypatch.setattr(decisions, "_kernels", lambda: ran.append("table"))    # _precompile's first step
    events[0][1]()
    assert ran == (["table", "pass"] if strategy == "optimal" else ["pass"])


def test_a_refused_pass_leaves_no_compiler_running(monkeypatch):
    """A strategy refused once the pass started (here: one that looks at the points so far)
    stops the compilation started beside it, instead of leaving it to run on."""
    from yahtzee_sim.strategies import Strategy

    stopped: list = []

    class Job(Compiling):
        def stop(self):
            stopped.append(True)

    class LooksAtPoints(Strategy):
        name = "looks-at-points"
        state_based = False

    monkeypatch.setattr("yahtzee_sim.forkpool.compile_beside", lambda *a, **k: Job())
    with pytest.raises(ValueError, match="also looks at the points so far"):
        distribution("yacht", LooksAtPoints())
    assert stopped == [True]
