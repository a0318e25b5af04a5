"""OpenBLAS's threads sleep after each product once yahtzee_sim is imported first.

They spin for about a tenth of a second by default, and the exact engine's many long
vector sums (the loss accounting's, per chunk of states) kept them spinning: as much CPU
as the accounting's own work, taken from the core our second process computes on. The
threads' states are read from ``/proc`` right after a few products."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = [
    pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="no /proc: not Linux"),
    pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one CPU: OpenBLAS starts no threads"),
]

# Products long enough for OpenBLAS to share them between its threads, then a short
# pause (a thread spinning by default spins about 0.1 s; told to, it sleeps at once), then
# the state letter of every thread but this one (R: running or runnable, S: sleeping).
PROBE = """
import glob, threading, time
{first}
import numpy as np
a = np.ones(1_000_000)
for _ in range(3):
    float(a @ a)
time.sleep(0.03)
me = str(threading.get_native_id())
print(" ".join(open(t).read().rsplit(")", 1)[1].split()[0]
               for t in glob.glob("/proc/self/task/*/stat") if t.split("/")[4] != me))
"""


def _other_threads(first: str, env: dict) -> list[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], capture_output=True, text=True,
                         check=True, env=env).stdout
    return out.split()


def test_blas_threads_sleep_after_a_product_once_yahtzee_sim_is_imported():
    """By default a thread spins for 0.1 s, so 0.03 s after the products one is still
    running; here all sleep (three tries: a loaded machine may not have run a thread
    since its part of the product, which leaves it runnable for a moment)."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    for _ in range(3):
        states = _other_threads("import yahtzee_sim", env)
        if not states:
            pytest.skip("this NumPy's BLAS started no threads")
        if set(states) == {"S"}:
            return
    pytest.fail(f"threads still running after the products: {states}")


def test_the_probe_sees_spinning_threads_and_a_users_setting_is_kept():
    """The control: told to spin long (2**30 cycles, a user's own setting, which the
    package keeps), a BLAS thread is still running after the products."""
    env = dict(os.environ, OPENBLAS_THREAD_TIMEOUT="30")
    for _ in range(3):                  # a loaded machine may hold this process past the spin
        states = _other_threads("import yahtzee_sim", env)
        if not states:
            pytest.skip("this NumPy's BLAS started no threads")
        if "R" in states:
            return
    pytest.fail(f"no BLAS thread seen spinning: {states}")
