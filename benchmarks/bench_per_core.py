"""CPU seconds per core of the three figures the peers publish (issue 21, "per core past
every peer"): a ``yatzy`` solve, optimal play from the decision table, and the exact
optimal score distribution of ``yahtzee``.

Each measurement runs in a fresh child process and reports its CPU seconds (this
process and, for the solve, its forked worker), next to the wall time and the load
average, so that a figure measured on a loaded machine still compares: CPU seconds are
what a core spends, whatever else runs.

* ``solve``: ``solve("yatzy", cache=False)`` after one warm-up solve in the same process
  (compiled kernels loaded; the state tables built), best of ``--repeat``: the CPU of
  the solving process plus its worker's (reaped when the solve ends). Two rows,
  alternating in the same process: the values and variances (what ``solve`` caches and
  the CLI prints: the sd) and the values only (``variance=False``: what the peers
  compute); the target's line says which met it;
* ``play``: ``simulate("yahtzee", "optimal", games)`` in one process (``serial``), after
  a warm-up run that loads the decision table (and the compiled table loop): games per
  CPU second, the CPU seconds inside the compiled loop's calls (dice generator, decode
  and play; the rest is the seeds, the cards' arrays and the results), and in the same
  run the same games through the NumPy table loop (``tableplay.KERNELS = "numpy"``: the
  loop before the compiled one);
* ``distribution``: ``distribution("yahtzee", "optimal")`` with the decision table on
  disk (its result cache off): the first call in the process (it loads the tables) and
  a second call; then, in the same process, with no decision table anywhere (the rows
  decided as the pass goes: what a fresh cache does, since a distribution builds no
  table), a first and a second call.

The decision table and the solver tables come from ``--cache-dir`` (default: the user's
cache, filled by a first run that is not measured).

    .venv/bin/python benchmarks/bench_per_core.py                  # all three
    .venv/bin/python benchmarks/bench_per_core.py --only solve --repeat 3 --json
    .venv/bin/python benchmarks/bench_per_core.py --only solve --against ../main --pairs 3   # before/after
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TREE_ENV = "BENCH_TREE"     # the checkout a child measures (``--against``); default this one
sys.path.insert(0, os.environ.get(TREE_ENV, ROOT))

# the peers' published figures, as the issue quotes them (issue 21)
PEERS = {
    "solve": "fastest published Yatzy solve: 113 ms on 18 threads, about 2.0 core-seconds",
    "play": "optimal play from a move table: about 670,000 games/s per core",
    "distribution": "exact optimal distribution: 3.0 s on 8 threads",
}
SOLVE_TARGET_CORE_S = 1.0     # issue 21's target for the yatzy solve
TARGETS = {"solve": f"at most {SOLVE_TARGET_CORE_S} core-second", "play": "at least 1,000,000 games/s per core",
           "distribution": "at most 3 core-seconds"}


def _cpu(who) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _clock():
    return time.perf_counter(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)


def _since(c0) -> dict:
    w, s, k = _clock()
    return {"wall_s": round(w - c0[0], 3), "cpu_s": round(s - c0[1], 3), "worker_cpu_s": round(k - c0[2], 3),
            "core_s": round(s - c0[1] + k - c0[2], 3)}


def child_solve(repeat: int) -> dict:
    """Best of ``repeat`` warm solves of ``yatzy`` (core-seconds: this process and its
    worker), with the variances (the top-level keys) and, alternating with them, the
    values only (under ``values_only``; its values checked equal to the full solve's).

    >>> child_solve(1)["core_s"] > 0      # doctest: +SKIP
    True
    """
    import numpy as np

    from yahtzee_sim.exact.solver import solve

    solve("yatzy", cache=False)                  # warm-up: kernels, state tables
    best: dict = {True: None, False: None}
    sols = {}
    for _ in range(repeat):
        for variance in (True, False):
            c0 = _clock()
            sols[variance] = solve("yatzy", cache=False, variance=variance)
            m = _since(c0)
            if best[variance] is None or m["core_s"] < best[variance]["core_s"]:
                best[variance] = m
    if not np.array_equal(sols[True].values, sols[False].values, equal_nan=True):
        raise SystemExit("the values-only solve gave other values than the full one")
    out = dict(best[True], mean=round(sols[True].mean, 4), sd=round(sols[True].sd, 4))
    out["values_only"] = dict(best[False], mean=round(sols[False].mean, 4))
    import yahtzee_sim

    out["package"] = os.path.dirname(os.path.dirname(os.path.abspath(yahtzee_sim.__file__)))   # the tree measured
    return out


def child_play(games: int, repeat: int) -> dict:
    """Games per CPU second of optimal ``yahtzee`` play in one process (best of ``repeat``),
    with the compiled table loop and, on the same seeds, with the NumPy one."""
    from yahtzee_sim import simulate, tableplay

    simulate("yahtzee", "optimal", 200_000, seed=1, backend="serial")   # warm-up: table, compiled loop
    if tableplay._compiling(get_rules_n_rolls()):
        raise SystemExit("the compiled table loop is still compiling: run again")
    out = {}
    in_loop = []            # CPU seconds inside the compiled loop's calls (the rest: dice seeds, results)
    real = tableplay._play_raw

    def timed(*args):
        t = time.process_time()
        try:
            return real(*args)
        finally:
            in_loop.append(time.process_time() - t)
    tableplay._play_raw = timed
    for loop in ("numba", "numpy"):
        tableplay.KERNELS = loop
        best = None
        for i in range(repeat):
            in_loop.clear()
            c0 = _clock()
            res = simulate("yahtzee", "optimal", games, seed=2026 + i, backend="serial")
            m = _since(c0)
            m["games_per_core_s"] = round(games / m["core_s"])
            m["games_per_s"] = round(games / m["wall_s"])
            m["loop_cpu_s"] = round(sum(in_loop), 3)
            if best is None or m["core_s"] < best["core_s"]:
                best = m
        best.update(games=games, mean=round(float(res.aggregate.mean()), 4))
        out[loop] = best
    tableplay.KERNELS = "numba"
    tableplay._play_raw = real
    if out["numba"]["mean"] != out["numpy"]["mean"]:
        raise SystemExit("the two table loops played different games")
    return dict(out["numba"], numpy_games_per_core_s=out["numpy"]["games_per_core_s"])


def get_rules_n_rolls() -> int:
    from yahtzee_sim import get_rules

    return get_rules("yahtzee").n_rolls


def child_distribution() -> dict:
    """The exact optimal distribution of ``yahtzee``, first and second call in a process
    with its decision table on disk, then first and second call with no table (another,
    empty cache folder for the table; the solve as loaded), the same pmf each time."""
    import tempfile

    import numpy as np

    from yahtzee_sim.exact.decisions import decisions_cache_path
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.strategies.optimal import OptimalStrategy

    sol = solve("yahtzee")
    if not decisions_cache_path(sol.rules).is_file():       # a run of games long enough builds it
        from yahtzee_sim import simulate

        simulate("yahtzee", "optimal", 200_000, seed=1, backend="serial")
    out = {}
    pmfs = []
    for call in ("first", "second"):
        c0 = _clock()
        d = distribution("yahtzee", "optimal")
        out[call] = _since(c0)
        pmfs.append(d.pmf)
    os.environ["YAHTZEE_SIM_CACHE"] = tempfile.mkdtemp()     # no table here: the rows decided
    for call in ("rows_first", "rows_second"):
        strategy = OptimalStrategy(sol)
        c0 = _clock()
        d = distribution("yahtzee", strategy)
        out[call] = _since(c0)
        if strategy.decisions is not None:
            raise SystemExit("the distribution built a decision table")
        pmfs.append(d.pmf)
    if not all(np.array_equal(p, pmfs[0]) for p in pmfs):
        raise SystemExit("the distributions differ")
    out.update(mean=round(d.mean, 4), sd=round(d.sd, 6))
    return out


def _run(args, what: str, tree: str = ROOT) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", what, "--repeat", str(args.repeat),
           "--games", str(args.games)]
    tree = os.path.abspath(tree)
    env = dict(os.environ, PYTHONPATH=tree + os.pathsep + os.environ.get("PYTHONPATH", ""), **{TREE_ENV: tree})
    if args.cache_dir:
        env["YAHTZEE_SIM_CACHE"] = args.cache_dir
    load0 = os.getloadavg()[0]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{what} failed: {done.stderr.strip().splitlines()[-1:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    out.update(what=what, load=f"{load0:.1f}-{os.getloadavg()[0]:.1f}", peer=PEERS[what], target=TARGETS[what])
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", choices=sorted(PEERS), action="append", help="measure only this (repeatable)")
    p.add_argument("--repeat", type=int, default=2, help="runs per measurement; the best is reported")
    p.add_argument("--games", type=int, default=2_000_000, help="games of the play measurement")
    p.add_argument("--cache-dir", default=None, help="solver and decision-table cache (default: the user's)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--against", metavar="CHECKOUT", default=None,
                   help="the solve only: also measure it in another checkout (e.g. main), alternating with "
                        "this one, --pairs times (before/after figures from the same minutes)")
    p.add_argument("--pairs", type=int, default=3, help="alternating runs of each tree with --against")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        res = {"solve": lambda: child_solve(args.repeat), "play": lambda: child_play(args.games, args.repeat),
               "distribution": child_distribution}[args.child]()
        print(json.dumps(res))
        return 0
    if args.against:
        if args.only and args.only != ["solve"]:
            raise SystemExit("--against measures the solve only: use it with --only solve")
        return _against(args)
    for what in args.only or ("solve", "play", "distribution"):
        r = _run(args, what)
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        if what == "solve":
            v = r["values_only"]
            rows = [("values and variances (what solve caches; the sd)", r),
                    ("values only (variance=False: what the peers compute)", v)]
            for label, x in rows:
                print(f"yatzy solve, warm, {label}: {x['core_s']:.2f} core-seconds ({x['cpu_s']:.2f} this "
                      f"process + {x['worker_cpu_s']:.2f} its worker), {x['wall_s']:.2f} s wall, "
                      f"mean {x['mean']}", flush=True)
            met = [label.split(" (")[0] for label, x in rows if x["core_s"] <= SOLVE_TARGET_CORE_S]
            head = ("yatzy solve: target met by " + " and ".join(met) if met else "yatzy solve: target not met")
        elif what == "play":
            head = (f"optimal yahtzee play, one process: {r['games_per_core_s']:,} games per CPU second "
                    f"({r['games_per_s']:,} games/s wall, {r['games']:,} games; {r['loop_cpu_s']:.2f} of its "
                    f"{r['cpu_s']:.2f} CPU s in the compiled loop, dice generator included, the rest the "
                    f"seeds, cards and results; the NumPy table loop {r['numpy_games_per_core_s']:,} in the same run)")
        else:
            head = (f"optimal yahtzee distribution, decision table cached: first call in a process "
                    f"{r['first']['core_s']:.2f} core-seconds ({r['first']['wall_s']:.2f} s wall), "
                    f"second call {r['second']['core_s']:.2f} core-seconds; no table (rows decided as "
                    f"the pass goes): first call {r['rows_first']['core_s']:.2f} core-seconds "
                    f"({r['rows_first']['wall_s']:.2f} s wall), second {r['rows_second']['core_s']:.2f}")
        print(f"{head}; load {r['load']}; target {r['target']}; peer: {r['peer']}", flush=True)
    return 0


def _against(args) -> int:
    """The solve in this checkout and in ``args.against``, alternating, ``args.pairs`` times."""
    trees = (("this tree", ROOT), ("against", args.against))
    for i in range(args.pairs):
        for label, tree in trees:
            r = _run(args, "solve", tree)
            r.update(pair=i + 1, tree=os.path.abspath(tree))
            if os.path.realpath(r["package"]) != os.path.realpath(tree):
                raise SystemExit(f"the child measured {r['package']}, not {tree}")
            if args.json:
                print(json.dumps(r), flush=True)
                continue
            v = r["values_only"]
            print(f"pair {i + 1}, {label} ({os.path.abspath(tree)}): yatzy solve, warm, values and variances "
                  f"{r['core_s']:.3f} core-seconds ({r['cpu_s']:.3f} + {r['worker_cpu_s']:.3f} its worker, "
                  f"{r['wall_s']:.2f} s wall); values only {v['core_s']:.3f}; mean {r['mean']}; load {r['load']}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
