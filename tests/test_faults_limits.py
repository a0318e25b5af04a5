"""Faults of issue 23, sections 3 to 5: nothing hung, nothing orphaned, nothing runaway.

Every case is a subprocess or a call bounded in time: a hang fails the test at its
timeout instead of holding the suite. Each refusal is checked for one line, exit
code 2 (on the command line) and no work started before it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*args, timeout=60, cwd=None, env=None, stdin=None):
    """Run the command line in a subprocess: (exit code, stdout, stderr)."""
    out = subprocess.run([sys.executable, "-m", "yahtzee_sim", *map(str, args)], capture_output=True, text=True,
                         timeout=timeout, cwd=cwd, env=env or ENV, stdin=stdin)
    return out.returncode, out.stdout, out.stderr


def refused(args, *words, timeout=60, cwd=None, env=None):
    """The command is refused: exit 2, nothing on stdout, one line on stderr holding ``words``."""
    code, out, err = cli(*args, timeout=timeout, cwd=cwd, env=env)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, (code, out[-500:], err[-2000:])
    assert out == "", out[-500:]
    assert len(lines) == 1, err[-2000:]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# -- §3: a pool whose worker was terminated mid-send leaves nothing waiting ------------------

HALF_SEND = textwrap.dedent('''
    import multiprocessing, os, pathlib, struct, sys, time
    from concurrent.futures import ProcessPoolExecutor


    def half_send(flag):
        # write the start of a result message into the pool's result pipe, then hang:
        # the parent's reader reads the header and waits for bytes that never come
        f = sys._getframe()
        while f.f_code.co_name != "_process_worker":
            f = f.f_back
        os.write(f.f_locals["result_queue"]._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
        pathlib.Path(flag).touch()
        time.sleep(600)


    if __name__ == "__main__":
        mode, flag = sys.argv[1:]
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        pool.submit(half_send, flag)
        while not os.path.exists(flag):
            time.sleep(0.05)
        time.sleep(0.3)
        if mode == "project":
            from yahtzee_sim.runner.backends import close_pool
            close_pool(pool, finished=False)
        else:   # what the project did before: terminate the workers, no bounded reader
            procs = list(pool._processes.values())
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                p.terminate()
            for p in procs:
                p.join(10)
        print("closed", flush=True)
''')


@pytest.mark.parametrize("mode", ["plain", "project"])
def test_pool_terminated_mid_send_lets_the_interpreter_exit(tmp_path, mode):
    script = tmp_path / "half_send.py"
    script.write_text(HALF_SEND)
    args = [sys.executable, str(script), mode, str(tmp_path / "flag")]
    if mode == "plain":
        # the reproduction is real: the stdlib alone hangs at exit (so the other case can fail)
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run(args, env=ENV, capture_output=True, timeout=12)
    else:
        t0 = time.monotonic()
        out = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "closed" in out.stdout, out.stderr[-2000:]
        assert time.monotonic() - t0 < 45


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc), zombies left out."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                kids.setdefault(int(fields[1]), []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux) to find the workers")
@pytest.mark.parametrize("command", [
    ["simulate", "--strategy", "greedy", "--games", "2e7", "--seed", "1", "--backend", "processes", "--jobs", "2"],
    ["turns", "--strategy", "greedy", "--turns", "1e9", "--seed", "1", "--backend", "processes", "--jobs", "2"],
])
def test_kill_9_of_the_parent_leaves_no_worker(command):
    proc = subprocess.Popen([sys.executable, "-m", "yahtzee_sim", *command], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 3:   # two workers and the resource tracker
            time.sleep(0.5)
            workers |= _children(proc.pid)
            assert proc.poll() is None, "the run ended before it could be killed"
        assert len(workers) >= 3, workers
        time.sleep(2)                       # let the workers get into their chunks
        workers |= _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(map(_alive, workers)):
            time.sleep(0.2)
        left = [w for w in workers if _alive(w)]
        assert not left, f"workers still running 20 s after the parent's kill -9: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for w in _children(proc.pid):
            os.kill(w, signal.SIGKILL)
