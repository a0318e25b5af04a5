"""A values-only solve (``solve(..., variance=False)``, issue 21: what the published
solvers compute): the full solve's values bit for bit, checked against the full solve
and against the plain-Python recursion every exact test shares (tests/plain_game.py);
no variances, and never written to the cache or served for a full solution."""

from __future__ import annotations

import numpy as np
import pytest

from plain_game import OptimalMean
from test_solver import _tiny

from yahtzee_sim.exact import solver as solver_mod
from yahtzee_sim.exact import space as space_mod
from yahtzee_sim.exact.solver import cache_path, solve
from yahtzee_sim.rules import get_rules


@pytest.mark.parametrize("kernels", ["numpy", "numba"])
@pytest.mark.parametrize("rules", [_tiny("forced"), _tiny("free"), _tiny("none", "in-order")],
                         ids=["forced", "free", "in-order"])
def test_values_only_equal_the_full_solve_and_a_plain_dp(rules, kernels, monkeypatch):
    """Every state, both dtypes, both paths (NumPy and the compiled kernels), one process
    and two (chunks of 7, so every level is shared): the full solve's values bit for
    bit; in float64 within 1e-9 of the plain recursion in every state it reaches."""
    if kernels == "numba":
        pytest.importorskip("numba")
    monkeypatch.setattr(solver_mod, "MIN_STATES_FOR_KERNELS", 0)     # small games too
    monkeypatch.setattr(solver_mod, "MIN_STATES_FOR_WORKERS", 0)
    monkeypatch.setattr(space_mod, "KERNELS", kernels)
    for dtype in ("float32", "float64"):
        full = solve(rules, cache=False, dtype=dtype, jobs=1)
        for jobs, chunk in ((1, solver_mod.CHUNK), (2, 7)):
            vo = solve(rules, cache=False, dtype=dtype, jobs=jobs, chunk=chunk, variance=False)
            assert vo.variances is None and not vo.has_variances
            assert np.array_equal(vo.values, full.values, equal_nan=True), (dtype, jobs)
    dp = OptimalMean(rules)
    assert abs(vo.mean - dp.value((False,) * rules.n_boxes, 0, False)) < 1e-9
    keys = list(dp.memo)                   # every state the start reaches
    assert len(keys) > 100
    got = vo.value(np.array([k[0] for k in keys]), [k[1] for k in keys], [k[2] for k in keys])
    assert np.abs(got - np.array([dp.memo[k] for k in keys])).max() < 1e-9


def test_values_only_yahtzee_equals_the_full_solve_in_every_state():
    """The compiled path on a real game (jokers, the five-box flag, both processes)."""
    full = solve("yahtzee")
    vo = solve("yahtzee", cache=False, variance=False)
    assert np.array_equal(vo.values, full.values, equal_nan=True)
    assert round(vo.mean, 4) == 254.5877     # published: Verhoeff's optimal solitaire Yahtzee


def test_a_values_only_solution_refuses_what_it_lacks():
    sol = solve(_tiny(), cache=False, variance=False)
    fresh = np.zeros((1, sol.rules.n_boxes), bool)
    for ask in (lambda: sol.sd, lambda: sol.variance(fresh, [0], [False]),
                lambda: sol.second_moment(fresh, [0], [False])):
        with pytest.raises(ValueError, match="holds the values only .*variance=True"):
            ask()
    s = sol.summary()
    assert s["sd"] is None and s["mean"] == sol.mean > 0
    with pytest.raises(ValueError, match="variance must be True or False"):
        solve(_tiny(), cache=False, variance="no")


def test_values_only_is_never_cached_nor_served_as_a_full_solution(tmp_path):
    opts = ["fill-in-order"]
    solver_mod._MEMO.clear()
    vo = solve("yacht", options=opts, cache_dir=tmp_path, variance=False)
    assert vo.cache == "miss" and vo.variances is None and "not written" in vo.cache_note
    assert list(tmp_path.iterdir()) == []                         # nothing on disk
    again = solve("yacht", options=opts, cache_dir=tmp_path, variance=False)
    assert again.cache == "memory" and again.variances is None    # its own key in this process
    full = solve("yacht", options=opts, cache_dir=tmp_path)
    assert full.cache == "miss" and full.has_variances            # computed: not the values-only one
    assert cache_path(full.rules, "float32", tmp_path).is_file()
    assert np.array_equal(full.values, vo.values, equal_nan=True)
    # a full solution in memory or on disk serves a values-only request, its variances dropped
    assert solve("yacht", options=opts, cache_dir=tmp_path, variance=False).variances is None
    solver_mod._MEMO.clear()
    served = solve("yacht", options=opts, cache_dir=tmp_path, variance=False)
    assert served.cache == "hit" and served.variances is None
    assert np.array_equal(served.values, full.values, equal_nan=True)
    assert solve(get_rules("yacht", opts), cache_dir=tmp_path).sd == full.sd     # the full one intact
