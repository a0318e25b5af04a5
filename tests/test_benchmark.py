"""``ys.benchmark`` and ``yahtzee-sim benchmark`` (issue 19, sections 1, 4 and 6).

The numbers are checked against independent computations: exact means against
:func:`policy_value` (a backward evaluation), the exact win rate against a
brute-force double sum over the two exact score distributions, the simulated mean
against the strategy's own games.
"""

from __future__ import annotations

import json
import os
import textwrap

import numpy as np
import pytest

from yahtzee_sim.benchmarking import benchmark
from yahtzee_sim.checks import CheckFailed, check_decisions, check_strategy
from yahtzee_sim.cli import main
from yahtzee_sim.engine import StrategyError
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.policy import policy_value

GAME = dict(rules="yacht", options=["fill-in-order"])
CLI_GAME = ["--rules", "yacht", "--option", "fill-in-order"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_exact_card_against_independent_values():
    b = benchmark("keep-largest", against=["greedy"], games=3000, seed=4, **GAME)
    pv = policy_value("yacht", "keep-largest", options=["fill-in-order"])
    pg = policy_value("yacht", "greedy", options=["fill-in-order"])
    assert b.method == "exact" and abs(b.mean - pv.mean) < 1e-9 and abs(b.sd - pv.sd) < 1e-6
    comp = b.comparisons[0]
    assert abs(comp["diff_exact"] - (pv.mean - pg.mean)) < 1e-9
    # the paired interval on common dice holds the exact difference (seeded: a fixed draw)
    assert comp["diff_low"] < comp["diff_exact"] < comp["diff_high"]
    # exact win rate: P(X > Y) by a double sum over the two PMFs
    x = distribution("yacht", "keep-largest", options=["fill-in-order"]).pmf
    y = distribution("yacht", "greedy", options=["fill-in-order"]).pmf
    p_win = sum(x[i] * y[:i].sum() for i in range(len(x)))
    assert abs(comp["p_win"] - p_win) < 1e-12 and comp["method"] == "exact"
    assert abs(b.losses.gap - (b.optimal_mean - b.mean)) < 1e-9
    assert list(b.to_frame().index) == ["greedy"]


def test_simulated_card_says_so_and_counts_the_games():
    b = benchmark("target:T=100", against=["greedy"], games=2000, seed=5, **GAME)
    assert b.method == "simulated" and b.losses.method == "simulated (2,000 games)"
    assert "estimated" in b.losses_note and "target" in b.losses_note
    totals = np.asarray(b.simulated.games["total"])
    assert abs(b.mean - totals.mean()) < 1e-12 and b.mean_low < b.mean < b.mean_high
    comp = b.comparisons[0]
    assert comp["method"] == "simulated" and np.isnan(comp["diff_exact"])
    assert comp["p_win_low"] <= comp["p_win"] <= comp["p_win_high"]


def test_the_paired_interval_is_the_statistics_packages_and_needs_no_scipy_stats():
    import subprocess
    import sys

    from yahtzee_sim.stats import compare_results

    b = benchmark("keep-largest", against=["greedy", "keep-largest"], games=3000, seed=4, **GAME)
    greedy, itself = b.comparisons
    # the interval compare_results gives the same two runs (played again: the same games)
    from yahtzee_sim import simulate
    again = compare_results(simulate("yacht", "keep-largest", 3000, seed=4, options=["fill-in-order"]),
                            simulate("yacht", "greedy", 3000, seed=4, options=["fill-in-order"]))
    assert (greedy["diff"], greedy["diff_low"], greedy["diff_high"]) == (again.diff, again.low, again.high)
    # against itself: the same games, no difference, and the exact odds of a tie
    assert itself["diff"] == itself["diff_low"] == itself["diff_high"] == 0.0
    pmf = distribution("yacht", "keep-largest", options=["fill-in-order"]).pmf
    assert abs(itself["p_tie"] - float(pmf @ pmf)) < 1e-12
    code = ("import sys; from yahtzee_sim.benchmarking import benchmark; "
            "benchmark('keep-largest', against=['greedy'], rules='yacht-classic', games=500, seed=1); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_cli_json_gives_numbers(capsys):
    code, out, err = run(capsys, "benchmark", "greedy", "--against", "keep-largest", *CLI_GAME,
                         "--games", "500", "--seed", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["method"] == "exact" and isinstance(data["mean"], float)
    assert isinstance(data["against"][0]["diff"], float)
    assert abs(sum(data["losses"]["by_kind"].values()) - data["losses"]["gap"]) < 1e-9


def test_cli_text_and_report_folder(capsys, tmp_path):
    out_dir = tmp_path / "card"
    code, out, err = run(capsys, "benchmark", "keep-largest", "--against", "greedy", *CLI_GAME,
                         "--games", "500", "--seed", "2", "--out", str(out_dir))
    assert code == 0
    assert "(exact)" in out and "where the points go" in out and "costliest positions" in out
    names = {p.name for p in out_dir.iterdir()}
    assert {"README.md", "card.csv", "against.csv", "loss_by_kind.csv", "loss_by_box.csv",
            "loss_by_turn.csv", "costliest.csv", "distribution.png"} <= names
    readme = (out_dir / "README.md").read_text()
    assert "Where the points go" in readme and "yahtzee-sim benchmark keep-largest" in readme


def _plugin(tmp_path, monkeypatch, text) -> str:
    """A plug-in module of its own name (imported modules stay cached in the process)."""
    name = "h19_" + tmp_path.name.replace("-", "_")
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:Agent"


@pytest.mark.parametrize("text,why", [
    ("raise RuntimeError('broken on purpose')\n", "cannot import strategy module"),
    ("class Agent:\n    pass\n", "has no Strategy subclass"),
])
def test_bad_plugins_one_line_exit_2_nothing_written(capsys, tmp_path, monkeypatch, text, why):
    spec = _plugin(tmp_path, monkeypatch, text)
    out_dir = tmp_path / "card"
    code, out, err = run(capsys, "benchmark", spec, *CLI_GAME, "--games", "100",
                         "--out", str(out_dir))
    assert code == 2 and why in err and err.count("\n") == 1 and not out_dir.exists()


ILLEGAL = """
import numpy as np
from yahtzee_sim import Strategy

class Agent(Strategy):
    name = "illegal-agent"
    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls]
    def box(self, state, rolls, options, u):
        return np.argmin(options.legal, axis=1) if {shape_ok} else np.zeros((len(rolls), 2), int)
"""


@pytest.mark.parametrize("shape_ok", [True, False], ids=["illegal-box", "wrong-shape"])
def test_illegal_agent_one_line_exit_2(capsys, tmp_path, monkeypatch, shape_ok):
    spec = _plugin(tmp_path, monkeypatch, ILLEGAL.format(shape_ok=shape_ok))
    code, out, err = run(capsys, "benchmark", spec, "--games", "100", "--against",
                         "keep-largest")
    assert code == 2 and "illegal-agent" in err and err.count("\n") == 1


def test_unsolvable_game_falls_back_and_says_so(capsys):
    code, out, err = run(capsys, "benchmark", "keep-largest", "--rules", "maxi-yatzy", "--games", "200",
                         "--seed", "1", "--against", "random", "optimal", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["method"] == "simulated" and data["losses"] is None
    assert "cannot" in data["losses_note"]
    by = {c["opponent"]: c for c in data["against"]}
    assert by["random"]["method"] == "simulated" and by["optimal"]["method"] == "not played"
    assert by["optimal"]["note"]


def test_bad_out_and_bad_names(capsys, tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("mine")
    code, _, err = run(capsys, "benchmark", "greedy", *CLI_GAME, "--out", str(f))
    assert code == 2 and "file" in err and f.read_text() == "mine"
    code, _, err = run(capsys, "benchmark", "no-such", *CLI_GAME)
    assert code == 2 and "valid strategies" in err and err.count("\n") == 1
    code, _, err = run(capsys, "benchmark", "greedy", "--against", "nope", *CLI_GAME)
    assert code == 2 and "valid strategies" in err


def test_checks_catch_a_bad_plugin():
    from conftest import LowestBox

    class Forbidden(LowestBox):
        name = "forbidden"

        def box(self, state, rolls, options, u):
            return np.argmin(options.legal, axis=1)      # a filled box whenever one is

    with pytest.raises(StrategyError, match="forbidden"):
        check_decisions("yahtzee", Forbidden())

    class Flaky(LowestBox):
        name = "flaky"

        def __init__(self):
            self.calls = 0

        def keep(self, state, rolls, rolls_left, u):
            self.calls += 1
            return np.where(self.calls % 2 == 0, self.dice.roll_keep_index[rolls], super().keep(
                state, rolls, rolls_left, u))

    with pytest.raises(CheckFailed, match="same twice"):
        check_strategy("yacht", Flaky(), n=1100)
    check_strategy("yacht", LowestBox(), n=1100)       # a conforming plug-in passes


@pytest.mark.parametrize("strategy", ["keep-largest", "target:T=100"], ids=["exact", "simulated"])
def test_output_fits_80_columns(capsys, monkeypatch, strategy):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "benchmark", strategy, "--against", "greedy", *CLI_GAME, "--games", "1100",
                         "--seed", "1")
    assert code == 0, err
    wide = [line for line in out.splitlines() if len(line) > 80]
    assert not wide, wide[0]


def test_library_entry_is_the_function_even_after_its_module_is_imported():
    import yahtzee_sim as ys
    import yahtzee_sim.benchmarking  # noqa: F401  (a submodule import must not shadow ys.benchmark)

    assert callable(ys.benchmark) and ys.benchmark is benchmark and ys.Benchmark.__name__ == "Benchmark"


def _card(b):
    """A benchmark's numbers, without its timings."""
    s = b.summary()
    s.pop("seconds")
    if s["losses"] is not None:
        s["losses"].pop("seconds")
    return s


def test_the_work_beside_gives_the_card_computed_here(monkeypatch, tmp_path):
    """Optimal play's solves and the loss accounting run in a forked process beside the
    distributions (issue 21, the benchmark's first run); the card is the one computed
    in one process, to the last bit, and so is it when that process dies mid-way."""
    from yahtzee_sim import forkpool
    from yahtzee_sim.exact import losses

    args = dict(against=["optimal", "keep-largest"], games=2000, seed=11, **GAME)
    parent = os.getpid()
    account = losses.loss_accounting
    where = tmp_path / "pids"

    def noted(*a, **k):                                     # says which process accounted
        with open(where, "a") as f:
            f.write(f"{os.getpid()}\n")
        return account(*a, **k)

    monkeypatch.setattr(losses, "loss_accounting", noted)
    beside = benchmark("greedy", **args)
    assert [int(p) for p in where.read_text().split()] != [parent]      # accounted in the child
    assert beside.losses is not None and beside.losses.rules is beside.rules
    with monkeypatch.context() as m:
        m.setattr(forkpool, "can_fork", lambda: False)      # nothing beside: all of it here
        here = benchmark("greedy", **args)
    assert _card(beside) == _card(here)

    def dies_beside(*a, **k):
        if os.getpid() != parent:
            os._exit(9)                                     # the child, at its last step
        return noted(*a, **k)

    where.unlink()
    monkeypatch.setattr(losses, "loss_accounting", dies_beside)
    assert _card(benchmark("greedy", **args)) == _card(here)
    assert [int(p) for p in where.read_text().split()] == [parent]      # then accounted here


def test_the_opponents_distributions_are_computed_beside(monkeypatch, tmp_path):
    """An opponent's exact distribution (one not played by a decision table) is computed in
    the forked process beside, into the disk cache, where this process loads it; the
    strategy's own and optimal play's are computed here (issue 21: a first benchmark's
    distributions on both cores); the card is the one computed in one process."""
    from yahtzee_sim import forkpool
    from yahtzee_sim.exact import cache as solver_cache
    from yahtzee_sim.exact import distribution as dist_module

    compute = dist_module._distribution
    where = tmp_path / "computed"

    def noted(rules, strat, *a, **k):                       # says which process computed what
        with open(where, "a") as f:
            f.write(f"{strat.name} {os.getpid()}\n")
        return compute(rules, strat, *a, **k)

    monkeypatch.setattr(dist_module, "_distribution", noted)
    monkeypatch.setenv(solver_cache.CACHE_ENV, str(tmp_path / "beside"))    # nothing cached yet
    args = dict(against=["keep-largest", "optimal"], games=2000, seed=5, **GAME)
    beside = benchmark("greedy", **args)
    pid = {name: int(p) for name, p in (line.split() for line in where.read_text().splitlines())}
    assert sorted(pid) == ["greedy", "keep-largest", "optimal"]
    assert pid["keep-largest"] != os.getpid() and pid["greedy"] == pid["optimal"] == os.getpid()

    monkeypatch.setenv(solver_cache.CACHE_ENV, str(tmp_path / "here"))
    with monkeypatch.context() as m:
        m.setattr(forkpool, "can_fork", lambda: False)      # nothing beside: all of it here
        here = benchmark("greedy", **args)
    assert _card(beside) == _card(here)


def test_a_planning_strategys_distribution_and_accounting_beside_share_its_plans(monkeypatch, tmp_path):
    """With no other distribution to compute beside, a strategy that plans each position
    (heuristic) has its own distribution and then its loss accounting computed in the
    process beside, the accounting reusing the positions the distribution planned (issue
    21: a first `benchmark heuristic` planned them twice); optimal play is solved here. The
    card is the one computed in one process, and the one of the next run (its distribution
    cached: the accounting plans them again)."""
    from yahtzee_sim import forkpool
    from yahtzee_sim.exact import cache as solver_cache
    from yahtzee_sim.exact import losses
    from yahtzee_sim.strategies.lookahead import LookaheadStrategy

    plan_rows, account = LookaheadStrategy._plan_rows, losses.loss_accounting
    where = tmp_path / "planned"

    def planned(self, state, levels, keys, first):          # positions planned, by process
        with open(where, "a") as f:
            f.write(f"{os.getpid()} {len(first)}\n")
        return plan_rows(self, state, levels, keys, first)

    def accounted(*a, **k):                                 # where the accounting starts
        with open(where, "a") as f:
            f.write(f"{os.getpid()} accounting\n")
        return account(*a, **k)

    monkeypatch.setattr(LookaheadStrategy, "_plan_rows", planned)
    monkeypatch.setattr(losses, "loss_accounting", accounted)
    monkeypatch.setenv(solver_cache.CACHE_ENV, str(tmp_path / "cache"))      # nothing cached yet
    args = dict(against=["heuristic", "optimal"], games=2000, seed=3, **GAME)
    first = benchmark("heuristic", **args)

    def counts():       # positions planned beside, before and after the accounting began there
        before = after = 0
        started = False
        for line in where.read_text().splitlines():
            pid, what = line.split()
            if int(pid) == os.getpid():
                assert what != "accounting"                 # this process plays its games only
                continue
            if what == "accounting":
                started = True
            elif started:
                after += int(what)
            else:
                before += int(what)
        where.unlink()
        return before, after

    before, after = counts()
    assert before > 100 and after < before / 20             # the accounting found them planned
    second = benchmark("heuristic", **args)                 # its distribution cached now
    again_before, again_after = counts()
    assert again_before == 0 and again_after >= before      # planned again, by the accounting
    with monkeypatch.context() as m:
        m.setattr(forkpool, "can_fork", lambda: False)      # nothing beside: all of it here
        m.setenv(solver_cache.CACHE_ENV, str(tmp_path / "here"))
        here = benchmark("heuristic", **args)
    assert _card(first) == _card(here) == _card(second)


def test_an_illegal_decision_in_the_distribution_beside_is_raised_here(monkeypatch, tmp_path):
    """The strategy's own distribution computed beside fails on an illegal decision: the
    benchmark raises the StrategyError (the command's one-line exit 2), as it does when
    the distribution is computed here, not a card that falls back to simulation."""
    from yahtzee_sim.exact import cache as solver_cache
    from yahtzee_sim.exact import distribution as dist_module

    compute = dist_module._distribution

    def illegal(rules, strat, *a, **k):
        if strat.name == "heuristic":
            raise StrategyError("heuristic: box 3 is filled already")
        return compute(rules, strat, *a, **k)

    monkeypatch.setattr(dist_module, "_distribution", illegal)
    monkeypatch.setenv(solver_cache.CACHE_ENV, str(tmp_path))              # nothing cached
    with pytest.raises(StrategyError, match="box 3 is filled already"):
        benchmark("heuristic", against=["optimal"], games=200, seed=1, **GAME)


def test_the_opponents_passes_beside_wait_only_while_this_process_may_compile(monkeypatch, tmp_path):
    """On a machine where the pass's loops are not compiled, the process beside waits for
    this one to compile them, but only until its own distribution is over: a strategy that
    has none (target play) compiles nothing here, and the wait stopped at the compilation
    lock's 300 s (2026-12-03: a benchmark of target:T=150 stood 5 minutes at "distribution of
    random")."""
    import time

    from yahtzee_sim import forkpool
    from yahtzee_sim.exact import _eval_kernels as kx
    from yahtzee_sim.exact import cache as solver_cache

    real = forkpool.kernels_cached
    pass_loops = {id(getattr(kx, name)) for name in kx.PASS_KERNELS}

    def pass_loops_missing(*kernels):                 # the pass's loops never in the cache
        return False if any(id(k) in pass_loops for k in kernels) else real(*kernels)

    monkeypatch.setattr(forkpool, "kernels_cached", pass_loops_missing)
    monkeypatch.setenv(solver_cache.CACHE_ENV, str(tmp_path))                # nothing cached
    t0 = time.monotonic()
    b = benchmark("target:T=100", against=["keep-largest"], games=500, seed=1, rules="yacht-classic")
    assert time.monotonic() - t0 < 100                 # not the 300 s wait
    # keep-largest's exact distribution, computed beside
    assert b.method == "simulated" and b.comparisons[0]["opponent_mean"] == \
        distribution("yacht-classic", "keep-largest").mean


def test_an_optimal_benchmark_waits_for_its_solve_beside():
    b = benchmark("optimal", against=["greedy"], games=1000, seed=2, **GAME)
    assert b.method == "exact" and abs(b.mean - b.optimal_mean) < 1e-9
    assert abs(b.losses.gap) < 1e-9 and b.losses.share_optimal == pytest.approx(1.0)
