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
    monkeypatch.setattr(decisions, "_kernels", lambda: ran.append("table"))    # precompile's first step
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


def _random_level(rng, n_rows=6, n_next=4, n_moves=15):
    """A small ragged level and moves into ``n_next`` rows, every next row reached."""
    import numpy as np

    lo = rng.integers(0, 5, n_rows)
    width = rng.integers(1, 6, n_rows)
    start = np.concatenate([[0], np.cumsum(width)[:-1]])
    data = rng.random(int(width.sum()))
    src = np.sort(rng.integers(0, n_rows, n_moves))
    drow = np.concatenate([np.arange(n_next), rng.integers(0, n_next, n_moves - n_next)])
    shift = rng.integers(0, 7, n_moves)
    p = rng.random(n_moves)
    return data, lo, width, start, src, drow, shift, p


def test_propagate_writes_the_moves_sums_in_order_and_only_into_a_long_enough_buffer():
    """propagate against a plain-Python push of the moves one by one (the same products
    added in the same order: equal floats), given a buffer too short (left as it is: a new
    one is returned) then long enough (written in place, its tail untouched)."""
    import numpy as np

    rng = np.random.default_rng(21)
    data, lo, width, start, src, drow, shift, p = _random_level(rng)
    n_next = 4
    # the plain push: each next row as a dict of points -> probability, moves in order
    rows: list = [{} for _ in range(n_next)]
    for i in range(len(p)):
        s = src[i]
        for k in range(width[s]):
            pts = int(lo[s] + shift[i] + k)
            rows[drow[i]][pts] = rows[drow[i]].get(pts, 0.0) + p[i] * data[start[s] + k]
    want_lo = [min(r) for r in rows]
    want = [[r.get(x, 0.0) for x in range(min(r), max(r) + 1)] for r in rows]
    total = sum(len(w) for w in want)
    out_lo, out_width, out_start = (np.empty(n_next, dtype=np.int64) for _ in range(3))
    args = (data, lo, width, start, src, drow, shift, p, out_lo, out_width, out_start)
    short = np.full(total - 1, -1.0)
    new, n = kx.propagate(*args, short)
    assert n == total and len(new) == total and (short == -1.0).all()
    buf = np.full(total + 3, -1.0)
    same, n = kx.propagate(*args, buf)
    assert n == total and np.shares_memory(same, buf)
    assert list(out_lo) == want_lo and list(out_width) == [len(w) for w in want]
    for out in (new, buf):
        got = [list(out[out_start[d]:out_start[d] + out_width[d]]) for d in range(n_next)]
        assert got == want                                       # equal floats
    assert (buf[total:] == -1.0).all()


def test_push_counts_against_plain_sums():
    """push_counts against plain-Python sums: an empty ``inc`` is np.bincount of the
    products (equal floats), and counts past the last reached column stay 0."""
    import numpy as np

    rng = np.random.default_rng(5)
    n_rows, n_next, n_moves, n_k = 5, 3, 12, 6
    src = rng.integers(0, n_rows, n_moves)
    drow = np.concatenate([np.arange(n_next), rng.integers(0, n_next, n_moves - n_next)])
    p = rng.random(n_moves)
    one = rng.random(n_rows)
    got = kx.push_counts(one.reshape(-1, 1), drow, src, p, np.zeros(0, dtype=np.int64), n_next)[:, 0]
    assert list(got) == list(np.bincount(drow, weights=one[src] * p, minlength=n_next))
    counts = np.zeros((n_rows, n_k))
    counts[:, :2] = rng.random((n_rows, 2))                     # counts 0 and 1 reached so far
    inc = rng.integers(0, 2, n_moves)
    want = np.zeros((n_next, n_k))
    for b in (0, 1):                                            # per increment, its sums first
        part = np.zeros((n_next, n_k))
        for i in np.flatnonzero(inc == b):
            part[drow[i], :n_k - b] += p[i] * counts[src[i], :n_k - b]
        want[:, b:] += part[:, :n_k - b]
    got = kx.push_counts(counts, drow, src, p, inc, n_next)
    assert np.array_equal(got, want)
    assert (got[:, 3:] == 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("by_row, by_roll", [(False, False), (False, True), (True, False), (True, True)])
def test_raise_final_values_is_numpys_masked_copy(dtype, by_row, by_roll):
    """raise_final_values against the NumPy it replaces in the lookahead strategies
    (``np.copyto`` where ``worth > values`` in the open rows): the worth broadcast along
    each axis or not, ties (a few distinct values: the box met first keeps the roll), -inf,
    NaN, and float64 worth a hair above a float32 value (compared in float64, as NumPy does)."""
    import numpy as np

    rng = np.random.default_rng(5 + by_row + 2 * by_roll)
    n, r = 40, 30
    values = rng.choice(np.array([-np.inf, 0, 1, 2], np.float32), size=(n, r))
    boxes = rng.integers(0, 5, (n, r)).astype(np.uint8)
    worth = rng.choice(np.array([np.nan, 0, 1, 2, 3]), size=(n if by_row else 1, r if by_roll else 1))
    worth = worth.astype(dtype)
    if dtype == "float64":
        worth[rng.random(worth.shape) < 0.3] += 1e-9     # above in float64, equal once stored in float32
    rows_open = rng.random(n) < 0.7
    row_box = rng.integers(5, 9, n).astype(np.uint8)
    want_values, want_boxes = values.copy(), boxes.copy()
    better = (worth > want_values) & rows_open[:, None]
    np.copyto(want_values, worth, where=better)
    np.copyto(want_boxes, row_box[:, None], where=better)
    assert better.any() and not better.all()
    kx.raise_final_values(values, boxes, worth, rows_open, row_box)
    assert np.array_equal(values, want_values) and np.array_equal(boxes, want_boxes)


def test_keep_ranks_is_a_gather_of_each_rolls_rank():
    """keep_ranks against NumPy's gather of ``rank[r, keeps[i, r]]``, into a slice of a
    larger store (its other rows untouched)."""
    import numpy as np

    rng = np.random.default_rng(3)
    rank = rng.integers(0, 255, (7, 11)).astype(np.uint8)
    keeps = rng.integers(0, 11, (20, 7)).astype(np.int16)
    store = np.full((30, 7), 99, np.uint8)
    kx.keep_ranks(rank, keeps, store[4:24])
    assert np.array_equal(store[4:24], rank[np.arange(7)[None, :], keeps])
    assert (store[:4] == 99).all() and (store[24:] == 99).all()
