"""Start-up wall times of the command line (issue 10: --version and --help at most 0.3 s,
``advise`` with a warm cache at most 0.5 s), and of two short runs (``simulate`` of 2,000
games, ``turns``).

Each command runs ``--runs`` times as a fresh ``python -m yahtzee_sim`` process after one
warm-up run (which also fills the solver cache for ``advise`` and writes the bytecode
cache, as an installed package has); the best and the median wall time are printed,
next to the floor of the same run: Python alone and ``import numpy``.

    .venv/bin/python benchmarks/bench_startup.py            # 7 runs each
    .venv/bin/python benchmarks/bench_startup.py --runs 15 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "python (floor)": ["-c", "pass"],
    "import numpy (floor)": ["-c", "import numpy"],
    "--version": ["-m", "yahtzee_sim", "--version"],
    "--help": ["-m", "yahtzee_sim", "--help"],
    "simulate --help": ["-m", "yahtzee_sim", "simulate", "--help"],
    "advise (warm cache)": ["-m", "yahtzee_sim", "advise", "--rules", "yahtzee", "--dice", "13356",
                            "--rolls-left", "2"],
    # a short run, whose intervals once imported scipy.stats (about a second) for a t quantile
    "simulate 2,000 games": ["-m", "yahtzee_sim", "simulate", "--rules", "yahtzee", "--strategy", "greedy",
                             "--games", "2000", "--seed", "1"],
    "turns": ["-m", "yahtzee_sim", "turns", "--seed", "1"],
}


def wall_times(args: list[str], runs: int, env: dict) -> list[float]:
    cmd = [sys.executable, *args]
    subprocess.run(cmd, env=env, check=True, capture_output=True)  # warm-up: caches, bytecode
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    rows = {}
    for name, argv in COMMANDS.items():
        times = wall_times(argv, args.runs, env)
        rows[name] = {"best_s": min(times), "median_s": statistics.median(times), "runs": len(times)}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if args.json:
        print(json.dumps({"load_1min": load, "cpus": os.cpu_count(), "commands": rows}, indent=2))
        return
    print(f"start-up wall times, {args.runs} runs each after a warm-up (load {load:.1f} on {os.cpu_count()} cores)")
    print(f"{'command':24} {'best s':>8} {'median s':>9}")
    for name, row in rows.items():
        print(f"{name:24} {row['best_s']:8.3f} {row['median_s']:9.3f}")


if __name__ == "__main__":
    main()
