"""Benchmark the exact solver and the optimal strategy (issue 3, section 7).

For each rule set: a cold solve (no cache) in a fresh process, best of
``--repeats``, with the peak resident memory of that process and of its worker.
Then the speed of optimal play once solved, and, only if the Rust package
``yatzy_solver`` is importable (``pip install -e .[bench]``; not needed otherwise),
its solve time and play speed on the same rules side by side, with the ratio.

    .venv/bin/python benchmarks/bench_solver.py                 # everything
    .venv/bin/python benchmarks/bench_solver.py --rules yahtzee --repeats 3
    .venv/bin/python benchmarks/bench_solver.py --json

Timings on a shared machine are noisy: run it when the machine is quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# rule sets of yatzy_solver that match ours exactly (same optimal value)
YATZY_SOLVER_SAME = {"yahtzee-free-joker": "american", "yatzy": "yatzy-scandinavian"}


def _child(name: str, options: list[str], repeats: int, workers: int | None) -> dict:
    """Run in a fresh process: cold solves, best time, peak memory."""
    import numpy as np

    from yahtzee_sim.exact.solver import solve

    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        sol = solve(name, options=options, cache=False, jobs=workers)
        wall = time.perf_counter() - t0
        if best is None or wall < best[0]:
            best = (wall, sol)
    wall, sol = best
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {"rules": sol.rules.key, "expected_score": round(sol.mean, 4),
            "sd": round(sol.sd, 4), "states": int(np.sum(sol.levels["states"])),
            "solve_seconds": round(sol.seconds, 3), "wall_seconds": round(wall, 3),
            "peak_rss_mb": round(own, 1), "worker_peak_rss_mb": round(kids, 1)}


def cold_solve(name: str, options: list[str], repeats: int, workers: int | None) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--repeats", str(repeats)]
    for o in options:
        cmd += ["--option", o]
    if workers:
        cmd += ["--workers", str(workers)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def optimal_play(name: str, n_games: int, batch: int) -> dict:
    """Games per second of the optimal strategy once the rule set is solved."""
    from yahtzee_sim import simulate
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.strategies.optimal import OptimalStrategy

    with tempfile.TemporaryDirectory() as tmp:
        sol = solve(name, cache_dir=tmp)
        strat = OptimalStrategy(sol)
        simulate(name, strat, 2048, seed=0)                     # warm up
        best = None
        for seed in (1, 2):
            t0 = time.perf_counter()
            res = simulate(name, strat, n_games, seed=seed, batch=batch)
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        s = res.summary()
    return {"rules": name, "games": n_games, "batch": batch, "seconds": round(best, 3),
            "games_per_second": round(n_games / best), "mean": round(s["mean"], 3),
            "exact": round(sol.mean, 4)}


def yatzy_solver_side_by_side(n_games: int) -> list[dict] | None:
    try:
        import yatzy_solver as ys
    except ImportError:
        return None
    rows = []
    for ours, theirs in YATZY_SOLVER_SAME.items():
        t0 = time.perf_counter()
        solver = ys.Solver.build(ys.Variant(theirs))
        build = time.perf_counter() - t0
        t0 = time.perf_counter()
        solver.simulate(n_games, seed=1)
        play = time.perf_counter() - t0
        rows.append({"rules": ours, "yatzy_solver_variant": theirs,
                     "yatzy_solver_value": round(solver.state_value("upper 0 | filled -"), 4),
                     "yatzy_solver_build_seconds": round(build, 3),
                     "yatzy_solver_games_per_second": round(n_games / play)})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", action="append", help="rule set (repeatable; default: all)")
    p.add_argument("--option", action="append", default=[])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--games", type=int, default=262144, help="games for the play-speed test")
    p.add_argument("--batch", type=int, default=262144)
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child, args.option, args.repeats, args.workers)))
        return 0

    from yahtzee_sim.exact.space import state_space
    from yahtzee_sim.rules import get_rules, rule_names

    from yahtzee_sim.progress import as_progress

    def solvable(name):
        try:
            state_space(get_rules(name, args.option))
        except ValueError as exc:          # too large here: says why (balut, yamb, maxi-yatzy)
            print(f"skipped {name}: {exc}", file=sys.stderr)
            return False
        return True

    names = args.rules or [n for n in rule_names() if solvable(n)]
    report = as_progress(not args.json)  # a bar on a terminal's stderr, never with --json
    solves = []
    for i, n in enumerate(names):
        report(f"cold solve of {n}", i, len(names) + 1)
        solves.append(cold_solve(n, args.option, args.repeats, args.workers))
    report("optimal play", len(names), len(names) + 1)
    play = optimal_play("yahtzee", args.games, args.batch)
    report("optimal play", len(names) + 1, len(names) + 1)
    report.close()
    other = yatzy_solver_side_by_side(20000)
    if other:
        by = {s["rules"]: s for s in solves}
        for row in other:
            if row["rules"] not in by:
                by[row["rules"]] = cold_solve(row["rules"], [], args.repeats, args.workers)
            row["our_solve_seconds"] = by[row["rules"]]["wall_seconds"]
            row["solve_speedup"] = round(row["yatzy_solver_build_seconds"] / row["our_solve_seconds"], 2)
            ours = play["games_per_second"] if row["rules"] == "yahtzee" else None
            if ours is None:
                ours = optimal_play(row["rules"], 65536, 65536)["games_per_second"]
            row["our_games_per_second"] = ours
            row["play_speedup"] = round(ours / row["yatzy_solver_games_per_second"], 1)
    if args.json:
        print(json.dumps({"solve": solves, "play": play, "yatzy_solver": other}, indent=2))
        return 0
    import pandas as pd

    print(f"cold solves (best of {args.repeats}; {os.cpu_count()} CPUs)")
    print(pd.DataFrame(solves).to_string(index=False))
    print()
    print(f"optimal play: {play['games_per_second']:,} games/s ({play['games']:,} games, "
          f"batch {play['batch']:,}; mean {play['mean']} vs exact {play['exact']})")
    print()
    if other is None:
        print("yatzy_solver not installed: no side-by-side comparison")
    else:
        print("side by side with yatzy_solver (same rules):")
        print(pd.DataFrame(other).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
