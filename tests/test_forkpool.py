"""The exact engine's forked helpers (yahtzee_sim.forkpool): results in order, errors
raised in the parent in one line, a dead child never a hang, every shutdown bounded."""

import os
import signal
import time

import pytest

from yahtzee_sim.forkpool import ForkPool, can_fork, fork_workers, run_parts

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork (a non-daemon process on POSIX)")


def test_parts_run_in_children_and_come_back_in_order():
    got = run_parts(lambda part: (part, os.getpid(), os.getppid()), 3, what="parts")
    assert [g[0] for g in got] == [0, 1, 2]
    assert got[0][1] == os.getpid()                                # part 0: this process
    assert {g[2] for g in got[1:]} == {os.getpid()}                # the others: its children
    assert len({g[1] for g in got}) == 3


def test_one_part_forks_nothing():
    assert run_parts(lambda part: os.getpid(), 1, what="one") == [os.getpid()]


def test_a_child_value_error_is_raised_as_itself():
    def work(part):
        if part == 1:
            raise ValueError("strategy 'x' is not deterministic")
        return part

    with pytest.raises(ValueError, match="^strategy 'x' is not deterministic$"):
        run_parts(work, 2, what="loss accounting")


def test_a_child_failure_names_the_work():
    with pytest.raises(RuntimeError, match=r"^target solver worker failed: KeyError: 7$"):
        run_parts(lambda part: {}[7] if part else 0, 2, what="target solver")


def test_a_dead_child_is_an_error_not_a_hang():
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"a worker process died \(exit code 3\)"):
        run_parts(lambda part: os._exit(3) if part else 0, 2, what="solver")
    assert time.monotonic() - t0 < 30


def test_a_pool_keeps_its_children_between_tasks_and_closes_them():
    with ForkPool(2, lambda task: (task * 2, os.getpid()), what="doubling") as pool:
        pool.submit(0, 1)
        pool.submit(1, 2)
        first = pool.gather()
        pool.submit(1, 5)
        second = pool.gather()
        kids = list(pool._kids)
    assert [r[0] for r in first] == [2, 4] and second[0][0] == 10
    assert second[0][1] == first[1][1]                             # the same child served both
    assert not any(p.is_alive() for p, _ in kids)


def test_a_failed_task_leaves_the_pool_usable():
    with ForkPool(1, lambda task: 10 // task, what="division") as pool:
        pool.submit(0, 0)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            pool.gather()
        pool.submit(0, 5)
        assert pool.gather() == [2]


def test_an_error_here_stops_the_children_at_once_even_if_they_ignore_sigterm(tmp_path):
    ready = tmp_path / "ignoring"

    def stubborn(task):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        ready.write_text("yes")
        time.sleep(600)

    pool = ForkPool(1, stubborn, what="sleeping")
    pool.submit(0, 1)
    p = pool._kids[0][0]
    deadline = time.monotonic() + 30
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists()
    t0 = time.monotonic()
    pool.close(finished=False, timeout=1.0)
    assert not p.is_alive() and p.exitcode == -signal.SIGKILL
    assert time.monotonic() - t0 < 10


def test_worker_count():
    assert fork_workers(2, items=10, min_items=100) == 1
    assert fork_workers(1, items=10**6, min_items=100) == 1
    assert fork_workers(2, items=10**6, min_items=100) == 2


# -- compile_beside: one helper for every compile-in-a-forked-process ---------------------
def _fake_kernel(index):
    """What compile_beside reads of a numba ``cache=True`` kernel: its cache index path."""
    import types

    return types.SimpleNamespace(_cache=types.SimpleNamespace(_cache_file=types.SimpleNamespace(
        _index_path=str(index))))


def _gone(pid):
    """The child is reaped (no zombie left): /proc has no entry for it, or the id is
    another process's now (not this one's child)."""
    if not os.path.exists("/proc/self/stat"):  # pragma: no cover - no /proc: waitpid says it
        try:
            os.waitpid(pid, os.WNOHANG)
            return False                        # still this process's child
        except ChildProcessError:
            return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state, ppid = fh.read().rsplit(") ", 1)[1].split()[:2]
    except FileNotFoundError:
        return True
    return int(ppid) != os.getpid()


def test_compile_beside_runs_the_work_in_a_child_and_reaps_it(tmp_path):
    from yahtzee_sim.forkpool import compile_beside

    out = tmp_path / "pid"
    job = compile_beside(lambda: out.write_text(str(os.getpid())), kernels=(_fake_kernel(tmp_path / "k.nbi"),))
    assert job.pid is not None and job.pid != os.getpid()
    assert job.wait(60) is True and not job.running()
    assert int(out.read_text()) == job.pid                      # the work ran in the child
    assert _gone(job.pid)


def test_a_child_nobody_waits_for_is_reaped_all_the_same(tmp_path):
    from yahtzee_sim.forkpool import compile_beside

    job = compile_beside(lambda: None)
    deadline = time.monotonic() + 60
    while job.running() and time.monotonic() < deadline:       # polled, never waited on
        time.sleep(0.01)
    assert not job.running() and job.exitcode == 0
    assert _gone(job.pid)


def test_a_compiler_that_outlives_its_command_does_not_hold_the_command_s_pipes(tmp_path):
    # `out=$(yahtzee-sim ...)`, `| head` and subprocess.run(capture_output=True) read the
    # command's pipes to their end: a compiler left running with them open (the table
    # loop's, started by a first optimal run) made them wait for it as well.
    import subprocess
    import sys

    code = ("import os, sys, time\n"
            "from yahtzee_sim.forkpool import compile_beside\n"
            "job = compile_beside(lambda: (print('from the compiler', flush=True),\n"
            "                              print('from the compiler', file=sys.stderr, flush=True),\n"
            "                              time.sleep(120)))\n"
            "print(job.pid, flush=True)\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    pid = int(res.stdout.split()[0])
    try:
        assert res.returncode == 0
        assert "from the compiler" not in res.stdout + res.stderr   # its output goes nowhere
        os.kill(pid, 0)                                 # still compiling, yet the pipes were closed
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_failed_compile_says_so_and_the_caller_goes_on(tmp_path):
    from yahtzee_sim.forkpool import compile_beside

    def broken():
        raise RuntimeError("numba cannot compile this here")

    job = compile_beside(broken, kernels=(_fake_kernel(tmp_path / "k.nbi"),), lock=True)
    assert job.wait(60) is False and job.exitcode == 1          # the first call compiles in place
    assert not (tmp_path / "k.nbi.compiling").exists()          # the lock is released all the same
    assert _gone(job.pid)


def test_cached_kernels_start_nothing(tmp_path):
    from yahtzee_sim.forkpool import compile_beside, kernels_cached

    (tmp_path / "k.nbi").write_text("")
    kernels = (_fake_kernel(tmp_path / "k.nbi"),)
    assert kernels_cached(*kernels) and not kernels_cached(_fake_kernel(tmp_path / "other.nbi"))
    job = compile_beside(lambda: os._exit(9), kernels=kernels)
    assert job.pid is None and not job.running() and job.wait() is False


def test_the_lock_makes_one_compiler_per_machine(tmp_path):
    from yahtzee_sim.forkpool import COMPILE_LOCK_SECONDS, compile_beside

    kernels = (_fake_kernel(tmp_path / "k.nbi"),)
    lock = tmp_path / "k.nbi.compiling"
    seen = tmp_path / "seen"
    first = compile_beside(lambda: (seen.write_text("1"), time.sleep(0.5)), kernels=kernels, lock=True)
    assert first.pid is not None and lock.exists()              # held while it compiles
    second = compile_beside(lambda: seen.write_text("2"), kernels=kernels, lock=True)
    assert second.pid is None                                   # another process compiles it
    assert first.wait(60) and not lock.exists() and seen.read_text() == "1"
    lock.write_text("")                                         # a killed compiler's lock, long ago
    old = time.time() - COMPILE_LOCK_SECONDS - 10
    os.utime(lock, (old, old))
    third = compile_beside(lambda: seen.write_text("3"), kernels=kernels, lock=True)
    assert third.pid is not None and third.wait(60) and seen.read_text() == "3" and not lock.exists()


def test_a_killed_compiler_leaves_no_lock(tmp_path):
    from yahtzee_sim.forkpool import compile_beside

    kernels = (_fake_kernel(tmp_path / "k.nbi"),)
    job = compile_beside(lambda: time.sleep(60), kernels=kernels, lock=True)
    os.kill(job.pid, signal.SIGKILL)
    assert job.wait(30) is False and job.exitcode == -signal.SIGKILL
    assert not (tmp_path / "k.nbi.compiling").exists() and _gone(job.pid)


def test_a_compiler_no_longer_needed_is_stopped_and_reaped(tmp_path):
    from yahtzee_sim.forkpool import compile_beside

    job = compile_beside(lambda: time.sleep(60), kernels=(_fake_kernel(tmp_path / "k.nbi"),), lock=True)
    t0 = time.monotonic()
    job.stop()
    assert not job.running() and job.exitcode == -signal.SIGKILL and time.monotonic() - t0 < 30
    assert not (tmp_path / "k.nbi.compiling").exists() and _gone(job.pid)


# -- steps beside (the benchmark's second core) ---------------------------------------
def test_steps_beside_run_in_one_child_in_order_and_come_back_by_name():
    from yahtzee_sim.forkpool import Beside

    seen = []
    b = Beside([("first", lambda: seen.append(1) or (os.getpid(), len(seen))),
                ("second", lambda: (os.getpid(), len(seen)))], what="a test")
    try:
        pid2, n2 = b.result("second")           # asked out of order: the first is kept for later
        pid1, n1 = b.result("first")
        assert pid1 == pid2 != os.getpid() and (n1, n2) == (1, 1)     # one child, steps in order
        assert seen == []                       # the steps ran there, not here
        assert b.result("first") == (pid1, n1)  # asked again: the same answer
    finally:
        b.stop()


def test_a_step_beside_that_fails_says_so_and_the_next_steps_still_run():
    from yahtzee_sim.forkpool import Beside

    b = Beside([("bad input", lambda: int("x")), ("bug", lambda: {}[7]),
                ("unpicklable", lambda: (lambda: 1)), ("fine", lambda: 5)], what="a benchmark")
    try:
        with pytest.raises(ValueError, match=r"^invalid literal for int\(\) with base 10: 'x'$"):
            b.result("bad input")
        with pytest.raises(RuntimeError, match=r"^a benchmark: bug failed beside: KeyError: 7$"):
            b.result("bug")
        with pytest.raises(RuntimeError, match="could not be sent back"):
            b.result("unpicklable")
        assert b.result("fine") == 5
        with pytest.raises(RuntimeError, match="not one of the steps beside"):
            b.result("never asked for")         # said at once: not waited for until the child ends
    finally:
        b.stop()


def test_a_child_beside_that_dies_is_an_error_for_the_steps_left_not_a_hang():
    from yahtzee_sim.forkpool import Beside

    t0 = time.monotonic()
    b = Beside([("one", lambda: 1), ("dies", lambda: os._exit(3)), ("after", lambda: 2)], what="x")
    assert b.result("one") == 1
    for name in ("dies", "after"):
        with pytest.raises(RuntimeError, match=f"x: {name} was not done beside"):
            b.result(name)
    assert time.monotonic() - t0 < 30
    b.stop()


def test_steps_no_longer_wanted_are_stopped_at_once_and_reaped():
    from yahtzee_sim.forkpool import Beside

    b = Beside([("long", lambda: time.sleep(60))], what="x")
    pid = b._child.pid
    t0 = time.monotonic()
    b.stop()
    assert time.monotonic() - t0 < 30 and not b._child.running() and _gone(pid)
    with pytest.raises(RuntimeError, match="not done beside"):
        b.result("long")


def test_without_fork_nothing_runs_beside_and_the_caller_does_it(monkeypatch):
    from yahtzee_sim import forkpool

    monkeypatch.setattr(forkpool, "can_fork", lambda: False)
    b = forkpool.Beside([("step", lambda: 1)], what="x")
    with pytest.raises(RuntimeError, match="not done beside"):
        b.result("step")
    b.stop()


def test_steps_beside_can_run_at_a_lower_priority():
    from yahtzee_sim.forkpool import Beside

    here = os.nice(0)
    b = Beside([("niceness", lambda: os.nice(0))], what="x", nice=5)
    try:
        assert b.result("niceness") == min(here + 5, 19)
    finally:
        b.stop()
    assert os.nice(0) == here                   # this process's own priority is untouched


def test_a_compiler_can_run_at_a_lower_priority(tmp_path):
    from yahtzee_sim.forkpool import compile_beside

    here = os.nice(0)
    out = tmp_path / "niceness"
    job = compile_beside(lambda: out.write_text(str(os.nice(0))), kernels=(_fake_kernel(tmp_path / "k.nbi"),),
                         nice=5)
    assert job.wait(60) is True
    assert int(out.read_text()) == min(here + 5, 19)
    assert os.nice(0) == here                   # this process's own priority is untouched


def test_items_taken_by_two_processes_go_to_one_each():
    """The child takes from the first, this process from the last; every item is done
    once, the child's a prefix and this process's the rest."""
    from yahtzee_sim.forkpool import Beside, Takes

    n = 200
    takes = Takes(n)
    b = Beside([("mine", lambda: [i for i in range(n) if takes.take(i)])], what="x")
    try:
        here = [i for i in reversed(range(n)) if takes.take(i)]
        there = b.result("mine")
    finally:
        b.stop()
    assert sorted(here + there) == list(range(n))
    assert there == list(range(len(there))) and not set(here) & set(there)


def test_without_fork_every_take_succeeds(monkeypatch):
    from yahtzee_sim import forkpool

    monkeypatch.setattr(forkpool, "can_fork", lambda: False)
    t = forkpool.Takes(2)
    assert (t.take(0), t.take(1), t.take(1)) == (True, True, False)


def _busy(seconds: float) -> int:
    """Use the CPU for ``seconds`` of wall time (a slow step, not a stuck one)."""
    end, n = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        n += 1
    return 7


def test_a_child_beside_that_is_stuck_is_stopped_and_the_caller_does_the_step(monkeypatch):
    from yahtzee_sim import forkpool

    monkeypatch.setattr(forkpool, "STUCK_SECONDS", 1.5)
    monkeypatch.setattr(forkpool, "STUCK_POLL_SECONDS", 0.1)
    b = forkpool.Beside([("waits", lambda: time.sleep(600))], what="x")     # a wait that uses no CPU
    pid = b._child.pid
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match=r"x: waits: the process beside was stuck \(no CPU used for 1.5 s\)"):
        b.result("waits")
    assert 1.5 <= time.monotonic() - t0 < 30
    assert not b._child.running() and _gone(pid)
    b.stop()


def test_a_slow_child_beside_that_works_is_waited_for(monkeypatch):
    from yahtzee_sim import forkpool

    monkeypatch.setattr(forkpool, "STUCK_SECONDS", 1.0)
    monkeypatch.setattr(forkpool, "STUCK_POLL_SECONDS", 0.1)
    b = forkpool.Beside([("slow", lambda: _busy(3.0))], what="x")
    assert b.result("slow") == 7
    b.stop()


def test_a_child_waiting_for_a_compilation_that_works_is_not_taken_for_stuck(monkeypatch, tmp_path):
    from yahtzee_sim import forkpool

    monkeypatch.setattr(forkpool, "STUCK_SECONDS", 1.0)
    monkeypatch.setattr(forkpool, "STUCK_POLL_SECONDS", 0.1)
    done = tmp_path / "compiled"

    def wait_for_it():
        while not done.exists():       # as a pass waits for its loops in numba's cache: no CPU here
            time.sleep(0.05)
        return 8

    compiling = forkpool.compile_beside(lambda: (_busy(3.0), done.write_text("")))
    b = forkpool.Beside([("waits", wait_for_it)], what="x")
    assert b.result("waits") == 8
    assert compiling.wait(60)
    b.stop()


def test_progress_is_never_stalled_where_proc_cannot_tell(monkeypatch):
    from yahtzee_sim import forkpool

    monkeypatch.setattr(forkpool, "STUCK_SECONDS", 0.0)
    monkeypatch.setattr(forkpool, "_descendants_cpu", lambda: None)
    assert forkpool._Progress().stalled() is False


def _kernel_with_index(path, keys):
    """A ``cache=True`` kernel as kernels_cached sees it: its index file (made) holding ``keys``."""
    import types

    path.write_bytes(b"")
    here = ("x86_64-unknown-linux-gnu", "this-cpu", "+avx2")
    return types.SimpleNamespace(
        _cache=types.SimpleNamespace(_cache_file=types.SimpleNamespace(
            _index_path=str(path), _load_index=lambda: {key: "k.1.nbc" for key in keys})),
        targetctx=types.SimpleNamespace(codegen=lambda: types.SimpleNamespace(magic_tuple=lambda: here))), here


def test_an_index_numba_would_not_use_here_is_not_cached(tmp_path):
    from yahtzee_sim.forkpool import kernels_cached

    other = ("x86_64-unknown-linux-gnu", "another-cpu", "+sse2")
    foreign, here = _kernel_with_index(tmp_path / "foreign.nbi", [("sig", other, ("h", "h"))])
    assert not kernels_cached(foreign)             # a wheel built on another CPU: compile here, beside
    stale, _ = _kernel_with_index(tmp_path / "stale.nbi", [])     # numba reads another version's index as {}
    assert not kernels_cached(stale)
    mine, _ = _kernel_with_index(tmp_path / "mine.nbi", [("sig", other, ("h", "h")), ("sig", here, ("h", "h"))])
    assert kernels_cached(mine)


def test_a_real_kernel_compiled_here_is_cached():
    import numpy as np

    from yahtzee_sim.exact import _eval_kernels as kx
    from yahtzee_sim.forkpool import kernels_cached

    kx.next_rows(np.zeros(1, np.int64), np.full(1, -1, np.int64), np.zeros(1, bool))   # compiled or loaded
    assert kernels_cached(kx.next_rows)


@pytest.mark.parametrize("kernels", [True, False])
def test_steps_that_run_kernels_find_numba_set_up_by_the_parent(kernels):
    """With ``kernels``, numba is imported and its NumPy support loaded once, before the
    fork (about 0.6 CPU s a process), without scipy.linalg: the child starts with it. In a
    fresh interpreter, where nothing else imported numba first."""
    import subprocess
    import sys

    code = ("import sys; from yahtzee_sim.forkpool import Beside; "
            "seen = lambda: ('numba' in sys.modules, 'scipy.linalg' in sys.modules); "
            f"b = Beside([('seen', seen)], what='x', kernels={kernels}); "
            "print(*b.result('seen')); b.stop()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(kernels), "False"]
