"""Benchmark the rest of the family (issue 8, section 7): play speed and cold solves.

For each new game (and ``yahtzee`` in the same run, so that ratios mean something on
a loaded machine): games per second of ``keep-largest`` and ``heuristic`` (best of
``--repeats``, one process), and, for each rule set the exact engine can solve, a cold
solve (``solve(rules, cache=False)``) in a fresh process with the peak resident memory
of that process and of its worker processes. A rule set the engine refuses is listed
with the engine's own one-line reason.

    .venv/bin/python benchmarks/bench_family.py                      # everything
    .venv/bin/python benchmarks/bench_family.py --rules kniffel --rules yahtzee
    .venv/bin/python benchmarks/bench_family.py --skip solve --json

Timings on a shared machine are noisy: compare each figure with yahtzee's in the same run.
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
sys.path.insert(0, ROOT)

# The games issue 8 adds, and the reference every ratio is taken against.
NEW_GAMES = ["kniffel", "generala", "kismet", "maxi-yatzy", "maxi-yatzy+no-saved-throws", "balut", "yamb",
             "yacht+faces-7", "yahtzee+faces-7"]
REFERENCE = "yahtzee"


def _child(key: str) -> dict:
    """In a fresh process: one cold solve, its time and the peak memory (or the refusal)."""
    from yahtzee_sim.exact.solver import solve

    t0 = time.perf_counter()
    try:
        sol = solve(key, cache=False)
    except ValueError as exc:
        return {"rules": key, "refused": str(exc), "seconds_to_refuse": round(time.perf_counter() - t0, 2)}
    wall = time.perf_counter() - t0
    return {"rules": key, "expected_score": round(sol.mean, 4), "sd": round(sol.sd, 4),
            "solve_seconds": round(wall, 2), "peak_rss_mb": round(_own_peak_mb()),
            "worker_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}


def _own_peak_mb() -> float:
    """This process's peak resident memory since it started (VmHWM: unlike ``ru_maxrss``, it does
    not carry over the peak of the parent that forked it)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cold_solve(key: str) -> dict:
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", key],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def play_speed(key: str, strategy: str, games: int, repeats: int) -> dict:
    """Best-of-``repeats`` games per second of one strategy (after a small warm-up run)."""
    from yahtzee_sim import simulate

    simulate(key, strategy, 512, seed=0)           # tables and lookups built once, not timed
    best, mean = None, None
    for seed in range(1, repeats + 1):
        t0 = time.perf_counter()
        res = simulate(key, strategy, games, seed=seed)
        dt = time.perf_counter() - t0
        if best is None or dt < best:
            best, mean = dt, res.summary()["mean"]
    return {"games_per_second": round(games / best), "mean": round(mean, 2)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", action="append", help=f"rule set key (repeatable; default: {REFERENCE} and the "
                                                    "new games)")
    p.add_argument("--keep-largest-games", type=int, default=200_000)
    p.add_argument("--heuristic-games", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=2, help="best of this many timed runs of play")
    p.add_argument("--skip", default="", help="comma-separated: play, solve")
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(_child(args.child)))
        return 0
    from yahtzee_sim.progress import as_progress
    from yahtzee_sim.rules import get_rules

    keys = args.rules or [REFERENCE] + NEW_GAMES
    for k in keys:
        get_rules(k)                                # a bad key fails before any timing
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    report = as_progress(not args.json)
    steps = len(keys) * (("play" not in skip) + ("solve" not in skip))
    done = 0
    rows = {k: {"rules": k} for k in keys}
    if "play" not in skip:
        for k in keys:
            report(f"play {k}", done, steps)
            kl = play_speed(k, "keep-largest", args.keep_largest_games, args.repeats)
            he = play_speed(k, "heuristic", args.heuristic_games, args.repeats)
            rows[k].update({"keep_largest_games_per_s": kl["games_per_second"], "keep_largest_mean": kl["mean"],
                            "heuristic_games_per_s": he["games_per_second"], "heuristic_mean": he["mean"]})
            done += 1
    if "solve" not in skip:
        for k in keys:
            report(f"cold solve {k}", done, steps)
            rows[k].update({n: v for n, v in cold_solve(k).items() if n != "rules"})
            done += 1
    report.close()
    ref = rows.get(REFERENCE, {})
    for row in rows.values():
        for col in ("keep_largest_games_per_s", "heuristic_games_per_s", "solve_seconds"):
            if col in row and col in ref:
                row[col.replace("games_per_s", "vs_yahtzee").replace("solve_seconds", "solve_vs_yahtzee")] = \
                    round(row[col] / ref[col], 3)
    result = {"cpus": os.cpu_count(), "load_average": [round(x, 1) for x in os.getloadavg()],
              "keep_largest_games": args.keep_largest_games, "heuristic_games": args.heuristic_games,
              "repeats": args.repeats, "rows": list(rows.values())}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    import pandas as pd

    parts = ([f"play best of {args.repeats} ({args.keep_largest_games:,} keep-largest, {args.heuristic_games:,} "
              "heuristic games)"] if "play" not in skip else []) \
        + (["cold solves in a fresh process"] if "solve" not in skip else [])
    print(f"{len(keys)} rule sets; {'; '.join(parts) or 'nothing run'}; {os.cpu_count()} CPUs, "
          f"load average {result['load_average']}")
    frame = pd.DataFrame(result["rows"]).drop(columns=["refused"], errors="ignore")
    print(frame.to_string(index=False))
    for row in result["rows"]:
        if "refused" in row:
            print(f"{row['rules']}: {row['refused']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
