"""Kernels compiled ahead (yahtzee_sim.exact.compile_ahead, setup.py, build_support/backend.py):
what the install compiles is what the commands then call, so a first run compiles nothing."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# The calls a first `check`, `benchmark`, `simulate` and `policy-value` make into the compiled
# loops (the solve of both dtypes, the decision table, optimal's score and card-event passes,
# greedy's and heuristic's keep lattices, the loss accounting, the table play, the evaluations
# of strategies without a table), each on `yahtzee` where a smaller game takes NumPy paths.
CALLS = """
import numpy as np
from yahtzee_sim import simulate
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.exact.decisions import decision_table
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.events import event_distribution
from yahtzee_sim.exact.losses import loss_accounting
from yahtzee_sim.exact.policy import policy_value

solution = solve("yahtzee", cache=False)
solve("yacht", dtype=np.float64, cache=False)
decision_table(solution)
distribution("yahtzee", "optimal")
event_distribution("yahtzee", "optimal")
distribution("yahtzee", "greedy")
loss_accounting("yacht", "greedy")
simulate("yahtzee", "heuristic", n_games=3000, seed=1)
simulate("yahtzee", "optimal", n_games=200_000, seed=1)
policy_value("yacht-classic", "keep-largest")
distribution("yacht-classic", "random")
"""

LISTENER = """
import sys
from numba.core import event

class Compiled(event.Listener):
    def on_start(self, e):
        pass

    def on_end(self, e):
        d = (e.data or {}).get("dispatcher")
        name = getattr(getattr(d, "py_func", None), "__module__", "")
        if name.startswith("yahtzee_sim"):
            print("COMPILED", name, d.py_func.__name__, flush=True)

event.register("numba:compile", Compiled())
"""


def _run(code: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=900, cwd=ROOT)


@pytest.mark.slow
def test_what_is_compiled_ahead_is_what_a_first_run_calls(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), YAHTZEE_SIM_CACHE=str(tmp_path / "tables"))
    ahead = _run("from yahtzee_sim.exact.compile_ahead import main; main()", env)
    assert ahead.returncode == 0, ahead.stderr
    assert "failed" not in ahead.stderr and "compiled ahead: done" in ahead.stderr
    first = _run(LISTENER + CALLS, env)
    assert first.returncode == 0, first.stderr[-2000:]
    assert [line for line in first.stdout.splitlines() if line.startswith("COMPILED")] == []


def test_a_failing_step_is_reported_and_the_others_run(monkeypatch):
    from yahtzee_sim.exact import compile_ahead

    ran = []
    monkeypatch.setattr(compile_ahead, "GROUPS", ((("breaks", lambda: int("x")), ("works", lambda: ran.append(1))),))
    lines: list = []
    done = compile_ahead.compile_steps(compile_ahead.GROUPS[0], report=lines.append)
    assert [(name, error is None) for name, _, error in done] == [("breaks", False), ("works", True)]
    assert ran == [1] and "failed: ValueError" in lines[0]
    assert compile_ahead.main() == 0            # never fails an install


def test_a_wheel_build_gets_numba_and_numpy_and_an_editable_install_does_not(monkeypatch):
    build_meta = pytest.importorskip("setuptools.build_meta")
    monkeypatch.syspath_prepend(str(ROOT / "build_support"))
    import backend
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = [d for d in deps if d.split(">")[0].split("=")[0].strip() in ("numba", "numpy")]
    assert len(wanted) == 2 and backend.COMPILE_REQUIRES == wanted
    # (setuptools' own hook reads pyproject.toml with the build's setuptools, not this one's)
    monkeypatch.setattr(build_meta, "get_requires_for_build_wheel", lambda config_settings=None: ["wheel-tool"])
    assert backend.get_requires_for_build_wheel() == ["wheel-tool", *wanted]
    assert backend.get_requires_for_build_editable is build_meta.get_requires_for_build_editable
    assert backend.build_wheel is build_meta.build_wheel
