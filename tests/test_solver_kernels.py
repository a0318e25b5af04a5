"""The solver's compiled kernels (issue 10, cold solve speed) give the NumPy path's
tables bit for bit: same floating-point operations in the same order, so the cache,
the tie rule and every exactness test of the NumPy path carry over."""

from __future__ import annotations

import numpy as np
import pytest

from test_exact_family import _reduced
from test_solver_values import _small_served
from test_solver import _tiny

from yahtzee_sim.exact import space as space_mod
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.rules import get_rules

pytest.importorskip("numba")


def _both(rules, dtype, monkeypatch):
    from yahtzee_sim.exact import solver as solver_mod

    monkeypatch.setattr(solver_mod, "MIN_STATES_FOR_KERNELS", 0)     # small games too
    calls = []
    compiled = space_mod._turn_values_compiled
    monkeypatch.setattr(space_mod, "_turn_values_compiled", lambda *a: calls.append(1) or compiled(*a))
    out = []
    for kernels in ("numpy", "numba"):
        monkeypatch.setattr(space_mod, "KERNELS", kernels)
        before = len(calls)
        out.append(solve(rules, cache=False, dtype=dtype, jobs=1))
        assert (len(calls) > before) == (kernels == "numba")     # each path really ran
    return out


@pytest.mark.parametrize("rules", [
    _tiny("forced"), _tiny("free"), _tiny("original", five_bonus=0), _tiny("none", "in-order"),
    get_rules("yacht-classic"), get_rules("generala"),
    _reduced("yacht", ["faces-7"], boxes=("sixes", "sevens", "choice", "yacht"), n_dice=3),
    _reduced("maxi-yatzy", ["no-saved-throws"], boxes=("sixes", "three_pairs", "maxi_yatzy")),
    _small_served(n_dice=3),
], ids=["forced", "free", "original", "in-order", "yacht-classic", "generala", "seven-faces",
        "six-dice", "served"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernels_give_the_numpy_tables_bit_for_bit(rules, dtype, monkeypatch):
    a, b = _both(rules, dtype, monkeypatch)
    assert np.array_equal(a.values, b.values, equal_nan=True)
    assert np.array_equal(a.variances, b.variances, equal_nan=True)
    assert a.mean > 0


def test_kernels_on_yahtzee_states_means_only_and_with_moments(monkeypatch):
    """Chunks of every level of yahtzee (jokers, the five-of-a-kind flag), in both
    dtypes, with and without second moments, odd chunk widths (one column: NumPy
    sums the first roll pairwise there)."""
    assert space_mod._kernels() is not None          # the compiled path is there to compare
    rules = get_rules("yahtzee")
    sol = solve(rules)
    space = space_mod.state_space(rules)
    values, variances = sol.values.reshape(-1), sol.variances.reshape(-1)
    rng = np.random.default_rng(5)
    for dtype in (np.float32, np.float64):
        model = space_mod.turn_model(rules, dtype)
        for level in range(space.n_boxes):
            (m, u, f), _ = space.level_states(space.level_masks[level])
            pick = rng.choice(len(m), size=min(len(m), int(rng.choice([1, 7, 300]))), replace=False)
            for var in (variances, None):
                got = []
                for kernels in ("numpy", "numba"):
                    monkeypatch.setattr(space_mod, "KERNELS", kernels)
                    got.append(space_mod.turn_values(model, values, var, m[pick], u[pick], f[pick],
                                                      compiled=True))
                assert np.array_equal(got[0][0], got[1][0]), (dtype, level)
                if var is not None:
                    assert np.array_equal(got[0][1], got[1][1]), (dtype, level)


@pytest.mark.parametrize("rules", [
    get_rules("yahtzee"), get_rules("yatzy"), get_rules("kismet"), _tiny("forced"), _tiny("none", "in-order"),
    _reduced("yacht", ["faces-7"], boxes=("sixes", "sevens", "choice", "yacht"), n_dice=3),
    _reduced("maxi-yatzy", ["no-saved-throws"], boxes=("sixes", "three_pairs", "maxi_yatzy")),
    get_rules("generala"), _small_served(n_dice=3),
], ids=["yahtzee", "yatzy", "kismet", "forced", "in-order", "seven-faces", "six-dice", "generala", "served"])
def test_a_tables_keep_values_compiled_are_the_widgets_bit_for_bit(rules, monkeypatch):
    """A decision table's build asks for every keep's value (``plan="keeps"``, float32,
    the solve's values read-only); the compiled loop gives the NumPy widget's floats to
    the bit, at every reroll, on states of every level (jokers, five-of-a-kind flags,
    seven faces, six dice; served dice take the NumPy path), odd widths included."""
    sol = solve(rules, dtype=np.float32, cache=False)
    space = space_mod.state_space(rules)
    values = sol.values.reshape(-1)
    assert not values.flags.writeable                  # as the build passes them
    model = space_mod.turn_model(rules, np.float32)
    rng = np.random.default_rng(9)
    calls = []
    compiled = space_mod._turn_keep_values_compiled
    monkeypatch.setattr(space_mod, "_turn_keep_values_compiled", lambda *a: calls.append(1) or compiled(*a))
    for level in range(space.n_boxes):
        (m, u, f), _ = space.level_states(space.level_masks[level])
        pick = rng.choice(len(m), size=min(len(m), int(rng.choice([2, 7, 300]))), replace=False)
        got = [space_mod.turn_values(model, values, None, m[pick], u[pick], f[pick], plan="keeps",
                                     compiled=c)[1] for c in (False, True)]
        (kv_a, c_a), (kv_b, c_b) = got
        assert np.array_equal(c_a, c_b) and len(kv_a) == len(kv_b) == rules.n_rolls
        for j in range(1, rules.n_rolls):
            assert kv_a[j].dtype == kv_b[j].dtype and np.array_equal(kv_a[j], kv_b[j]), (level, j)
    assert calls                                       # the compiled path was asked for


def test_kernels_load_without_scipy_linalg_and_leave_it_importable():
    """Loading the kernels skips numba's scipy.linalg import (a third of their fixed
    cost) and leaves scipy.linalg importable as usual afterwards."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    import yahtzee_sim

    env = {**os.environ, "PYTHONPATH": str(Path(yahtzee_sim.__file__).parent.parent)}
    probe = ("import sys, numpy as np; from yahtzee_sim.exact import _solver_kernels; "
             "print('scipy.linalg' in sys.modules); import scipy.linalg.cython_blas; "
             "import scipy.linalg; print(scipy.linalg.norm(np.ones(4)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env=env, check=True).stdout.split()
    assert out == ["False", "2.0"]


def test_the_kernels_are_compiled_ahead_with_the_types_a_solve_calls_them_with(monkeypatch):
    """precompile() compiles each kernel for the argument types of signatures(dtype): every
    call a solve makes must have one of them (another type would be a second
    compilation, the precompiled one wasted)."""
    import types

    import numba

    from yahtzee_sim.exact import _solver_kernels as K

    seen = {name: set() for name in K.KERNEL_NAMES}

    def spy(name):
        kernel = getattr(K, name)

        def call(*args):
            seen[name].add(tuple(numba.typeof(a) for a in args))
            return kernel(*args)
        return call

    proxy = types.SimpleNamespace(**{n: spy(n) for n in K.KERNEL_NAMES}, precompile=K.precompile, TILE=K.TILE)
    monkeypatch.setattr(space_mod, "_kernels", lambda: proxy if space_mod.KERNELS == "numba" else None)
    for dtype in ("float32", "float64"):
        _both(get_rules("yacht-classic"), dtype, monkeypatch)
    for name in K.KERNEL_NAMES:
        ahead = {tuple(K.signatures(np.float32)[name]), tuple(K.signatures(np.float64)[name])}
        assert seen[name] and seen[name] <= ahead, name


@pytest.mark.slow
def test_a_first_solve_compiles_the_largest_kernel_in_a_forked_process(tmp_path):
    """With an empty numba cache the forked process compiles turn_tiles and this one loads
    it from the cache (a cache hit here, one compilation in all), and the table is the
    NumPy path's."""
    import json
    import os
    import subprocess
    import sys

    code = """
import json, numpy as np
from yahtzee_sim.exact import space as S, _solver_kernels as K, solver
solver.MIN_STATES_FOR_KERNELS = solver.MIN_STATES_FOR_WORKERS = 0
a = solver.solve("yacht-classic", cache=False, jobs=2)
S.KERNELS = "numpy"
b = solver.solve("yacht-classic", cache=False, jobs=1)
print(json.dumps({"hits": {n: sum(getattr(K, n).stats.cache_hits.values()) for n in K.KERNEL_NAMES},
                  "sigs": {n: len(getattr(K, n).signatures) for n in K.KERNEL_NAMES},
                  "same": bool(np.array_equal(a.values, b.values, equal_nan=True))}))
"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["same"]
    assert res["sigs"] == {n: 1 for n in res["sigs"]}
    assert res["hits"]["turn_tiles"] == 1 and sum(res["hits"].values()) == 1
