"""Faults around the solver (issue 12 §3): killed solves, forged and malformed caches,
unwritable cache folders. Part of the fault-injection suite of issue 12 §5."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from yahtzee_sim.exact import cache as cache_mod
from yahtzee_sim.exact import solver as solver_mod
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.signing import signing_key

from forgery import forge_cache, solved_in

RULES, OPTS = "yacht", ["fill-in-order"]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh(tmp_path):
    """A solved table in a cache folder of its own, and the file's contents."""
    yield solved_in(tmp_path, RULES, OPTS)
    solver_mod._MEMO.clear()


def _rewrite(sol, path, arrays):
    """Write ``arrays`` under the right metadata with a recomputed checksum, signed with the
    user's key (a forgery only the checks of the values can catch)."""
    forge_cache(sol, path, arrays, key=signing_key(path.parent))


def test_forged_table_with_a_valid_checksum_is_recomputed(fresh, tmp_path):
    sol, path, stored = fresh
    forged = dict(stored, values=stored["values"] * 1.4)             # e.g. 354.59 instead of ~253
    _rewrite(sol, path, forged)
    again = solve(RULES, options=OPTS, cache_dir=tmp_path)
    assert again.cache == "damaged"
    assert again.mean == pytest.approx(sol.mean, abs=1e-9)
    assert "forged or stale" in again.cache_note and "\n" not in again.cache_note
    solver_mod._MEMO.clear()
    assert solve(RULES, options=OPTS, cache_dir=tmp_path).cache == "hit"   # replaced


def test_one_forged_state_deep_in_the_table_is_caught_or_harmless(fresh, tmp_path):
    """A changed start value alone is always caught (the start state is always checked)."""
    sol, path, stored = fresh
    values = stored["values"].copy()
    values[0, 0, 0] += 0.01
    _rewrite(sol, path, dict(stored, values=values))
    assert solve(RULES, options=OPTS, cache_dir=tmp_path).cache == "damaged"


@pytest.mark.parametrize("change", ["values_shape", "variances_shape", "values_dtype",
                                    "missing", "levels", "nan", "seconds"])
def test_malformed_arrays_give_one_line_and_a_recompute(fresh, tmp_path, change):
    sol, path, stored = fresh
    arrays = dict(stored)
    if change == "values_shape":
        arrays["values"] = stored["values"][:5]
    elif change == "variances_shape":
        arrays["variances"] = stored["variances"].reshape(-1)
    elif change == "values_dtype":
        arrays["values"] = stored["values"].astype(np.float32)
    elif change == "missing":
        del arrays["level_states"]
    elif change == "levels":
        arrays["level_masks"] = stored["level_masks"][:2]
    elif change == "nan":
        v = stored["values"].copy()
        v[0] = np.nan
        arrays["values"] = v
    elif change == "seconds":
        arrays["solve_seconds"] = np.arange(3.0)
    _rewrite(sol, path, arrays)
    again = solve(RULES, options=OPTS, cache_dir=tmp_path)
    assert again.cache == "damaged"
    assert again.mean == pytest.approx(sol.mean, abs=1e-9)
    assert again.cache_note.startswith("cache file") and "\n" not in again.cache_note


def test_unwritable_cache_says_the_table_was_not_stored(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    solver_mod._MEMO.clear()
    sol = solve(RULES, options=OPTS, cache_dir=blocker / "cache")
    assert sol.cache == "miss" and sol.mean > 0
    assert "could not be stored" in sol.cache_note and "\n" not in sol.cache_note
    solver_mod._MEMO.clear()


def test_full_disk_says_why(tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path))

    monkeypatch.setattr(cache_mod, "save", full)
    solver_mod._MEMO.clear()
    sol = solve(RULES, options=OPTS, cache_dir=tmp_path)
    assert "could not be stored" in sol.cache_note and "No space left" in sol.cache_note
    solver_mod._MEMO.clear()


def test_cli_solve_reports_an_unstored_table(tmp_path, monkeypatch, capsys):
    from yahtzee_sim.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(blocker / "cache"))
    solver_mod._MEMO.clear()
    assert main(["solve", "--rules", RULES, "--option", "fill-in-order"]) == 0
    out = capsys.readouterr().out
    assert "could not be stored" in out and "computed and stored" not in out
    solver_mod._MEMO.clear()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_kill_9_of_a_solve_does_not_orphan_its_worker(tmp_path):
    script = textwrap.dedent("""
        from yahtzee_sim.exact import solver
        solver.MIN_STATES_FOR_WORKERS = 0
        for _ in range(50):
            solver.solve("yatzy", cache=False, jobs=2)
    """)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    kids: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while not kids and time.monotonic() < deadline:
            time.sleep(0.2)
            kids = _children(proc.pid)
        assert kids, "the solve never started a worker"
        time.sleep(0.5)                                   # let it work
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while any(_alive(k) for k in kids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(k) for k in kids), "the worker outlived its killed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
        for k in kids:                                    # never leave one behind
            if _alive(k):
                os.kill(k, signal.SIGKILL)


def test_a_killed_cache_write_is_cleaned_up_by_the_next_one(tmp_path):
    # issue 12 §2: killed writes left hidden temporary files behind. A writer's
    # temporary file is named after its process, so the next save removes it once that
    # process is gone (here: a pid that cannot exist), and leaves live writers' files alone.
    import os

    from yahtzee_sim.exact import cache

    target = tmp_path / "table.npz"
    dead = tmp_path / f".{target.name}.yahtzee-sim-tmp-999999999-abcd1234.npz"
    dead.write_bytes(b"half a table")
    alive = tmp_path / f".{target.name}.yahtzee-sim-tmp-{os.getppid()}-abcd1234.npz"
    alive.write_bytes(b"being written")
    cache.save(target, {"k": 1}, {"x": np.arange(3)})
    assert not dead.exists() and alive.exists()
    assert cache.load(target, {"k": 1})["x"].tolist() == [0, 1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([target.name, alive.name, "signing-key"])
