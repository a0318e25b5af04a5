"""Several strategies' exact distributions at once (:class:`DistributionsBeside`): the one
played by a decision table here, the others in a forked process into the disk cache;
whatever the order asked, or if the child dies, the same distributions as one by one."""

from __future__ import annotations

import os
import signal

import numpy as np
import pytest

from yahtzee_sim.exact.distribution import DistributionsBeside, distribution
from yahtzee_sim.forkpool import can_fork

RULES = "generala"          # named (its distributions go to the disk cache) and small
PLAYS = ["greedy", "optimal", "keep-largest"]

pytestmark = pytest.mark.skipif(not can_fork(), reason="no fork on this system: nothing runs beside")


@pytest.fixture(scope="module")
def one_by_one():
    return {p: distribution(RULES, p) for p in PLAYS}        # computed here, no cache


def _same(a, b) -> None:
    np.testing.assert_array_equal(a.pmf, b.pmf)
    np.testing.assert_array_equal(a.five_bonus_pmf, b.five_bonus_pmf)
    np.testing.assert_equal((a.mean, a.sd, a.p_upper_bonus, a.p_five_box_full, a.states),
                            (b.mean, b.sd, b.p_upper_bonus, b.p_five_box_full, b.states))


def test_the_table_player_here_the_others_beside_and_the_same_values(tmp_path, one_by_one):
    with DistributionsBeside(RULES, PLAYS, cache_dir=tmp_path) as computing:
        assert computing._here == "optimal" and computing._plays_beside == ("greedy", "keep-largest")
        got = {"optimal": computing.get("optimal")}
        assert computing._beside.result("greedy") is None         # done in the child, loaded here
        got.update({p: computing.get(p) for p in ("greedy", "keep-largest")})
    for p in PLAYS:
        _same(got[p], one_by_one[p])
    assert len(list(tmp_path.rglob("*distribution-*"))) == 3     # every one in the disk cache


def test_asked_before_the_one_computed_here_stops_the_child_and_computes_here(tmp_path, one_by_one):
    with DistributionsBeside(RULES, PLAYS, cache_dir=tmp_path) as computing:
        pid = computing._beside._child.pid
        _same(computing.get("greedy"), one_by_one["greedy"])
        assert computing._beside is None                          # stopped: nothing left running
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        for p in ("optimal", "keep-largest"):
            _same(computing.get(p), one_by_one[p])


def test_a_child_that_dies_leaves_the_work_here(tmp_path, one_by_one):
    with DistributionsBeside(RULES, PLAYS, cache_dir=tmp_path) as computing:
        os.kill(computing._beside._child.pid, signal.SIGKILL)
        for p in PLAYS:
            _same(computing.get(p), one_by_one[p])


def test_nothing_beside_when_there_is_nothing_to_overlap(tmp_path, one_by_one):
    import dataclasses

    from yahtzee_sim import get_rules

    assert DistributionsBeside(RULES, ["greedy"], cache_dir=tmp_path)._beside is None      # only one
    with DistributionsBeside(RULES, ["greedy", "optimal"], cache_dir=tmp_path) as computing:
        [computing.get(p) for p in ("optimal", "greedy")]
    # both on disk now: a second command loads them, nothing to compute
    assert DistributionsBeside(RULES, ["greedy", "optimal"], cache_dir=tmp_path)._beside is None
    # a rule set of one's own (not named: no disk cache) is computed here, as before
    own = dataclasses.replace(get_rules(RULES), name="my-generala")
    computing = DistributionsBeside(own, PLAYS, cache_dir=tmp_path)
    assert computing._beside is None
    _same(computing.get("greedy"), one_by_one["greedy"])
    # a name that is not a strategy is left to the usual path, which refuses it
    with pytest.raises(ValueError, match="unknown strategy"):
        DistributionsBeside(RULES, ["greedy", "no-such"], cache_dir=tmp_path).get("no-such")


def test_the_pass_compiler_is_shared_in_its_process_and_never_waited_for_in_a_fork(monkeypatch):
    """One compiler of the pass's loops per process; a forked child (which inherits the
    parent's record of it but not the thread that sees it end) neither waits for it nor
    takes it for its own."""
    import time

    from yahtzee_sim.exact import distribution as dist_mod
    from yahtzee_sim.forkpool import Beside, compile_beside
    from yahtzee_sim.strategy import get_strategy

    running = compile_beside(lambda: time.sleep(30))          # stands for a compilation under way
    try:
        monkeypatch.setattr(dist_mod, "_PASS_COMPILER", {os.getpid(): running})
        assert dist_mod.compile_pass_beside(get_strategy("greedy")) is running

        def in_child():
            t0 = time.monotonic()
            job = dist_mod.compile_pass_beside(get_strategy("greedy"))
            job.wait(60)
            return job.pid == running.pid, time.monotonic() - t0
        b = Beside([("child", in_child)], what="x")
        try:
            same, seconds = b.result("child")
        finally:
            b.stop()
        assert not same and seconds < 20
    finally:
        running.stop()
