"""Exact policy values (issues 3 and 10): expected score, sd and time per strategy.

Usage: .venv/bin/python benchmarks/bench_policy.py [--rules yahtzee] [--option O]
       [--strategy S ...] [--cold-table]

Prints, per strategy, the exact expected final score and sd from
``policy_value`` with the seconds taken, wall clock and CPU time of this process
(on a shared machine the CPU time is the steadier figure), and whether it meets
issue 10's target (at most 10 s wall on ``yahtzee``). The optimal strategy's solver
tables come from the disk cache when present (the solve time is not included); its
decision table (``yahtzee_sim.exact.decisions``) is read from the disk cache when
present and built (and cached) otherwise, inside the timed call: the line says which.
``--cold-table`` runs in a fresh temporary cache holding every cached file but the
decision tables, so the figure includes the decision table's build.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import tempfile
import time

TARGET_SECONDS = 10.0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="yahtzee")
    p.add_argument("--option", action="append", default=[])
    p.add_argument("--strategy", action="append", default=None)
    p.add_argument("--cold-table", action="store_true",
                   help="a fresh cache with only the solver's tables: optimal builds its decision table")
    args = p.parse_args()
    from yahtzee_sim.exact import cache as _cache
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.rules import get_rules

    rules = get_rules(args.rules, args.option)
    tmp = None
    names = args.strategy or ["keep-largest", "greedy", "heuristic", "random", "optimal"]
    if any(n.startswith("optimal") for n in names):
        t = time.perf_counter()
        sol = solve(rules)
        print(f"solver: {sol.mean:.4f} (sd {sol.sd:.4f}), {time.perf_counter() - t:.1f} s "
              f"(cache {sol.cache})")
        if args.cold_table:
            tmp = tempfile.mkdtemp(prefix="bench-policy-")
            for path in _cache.cache_dir().iterdir():      # every cached file but the decisions
                if path.is_file() and "-decisions-" not in path.name:
                    os.symlink(path, os.path.join(tmp, path.name))
            os.environ[_cache.CACHE_ENV] = tmp
            print(f"cold decision table: cache {tmp} holds every cached file but the decision tables")
    from yahtzee_sim.exact.policy import policy_value
    from yahtzee_sim.progress import as_progress
    from yahtzee_sim.strategies import get_strategy

    print(f"{rules.key}: exact policy values (target: at most {TARGET_SECONDS:g} s wall each)")
    print(f"{'strategy':<14}{'expected':>11}{'sd':>10}{'states':>10}{'seconds':>9}{'cpu s':>8}  met  note")
    report = as_progress(True)  # a bar on a terminal's stderr only
    for i, name in enumerate(names):
        report(f"policy value of {name}", i, len(names))
        strat = get_strategy(name)
        cpu = time.process_time()
        pv = policy_value(rules, strat)
        cpu = time.process_time() - cpu
        table = getattr(strat, "decisions", None)
        note = ""
        if table is not None:
            note = (f"decision table read from the disk cache ({table.cache})" if table.cache in ("hit", "memory")
                    else f"decision table built in {table.seconds:.1f} s ({table.cache}), included")
        met = "yes" if pv.seconds <= TARGET_SECONDS else "no"
        print(f"{name:<14}{pv.mean:>11.4f}{pv.sd:>10.4f}{pv.states:>10,}{pv.seconds:>9.1f}"
              f"{cpu:>8.1f}  {met:<4} {note}", flush=True)
    report.close()
    if tmp is not None:
        shutil.rmtree(tmp, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB; load average {os.getloadavg()[0]:.1f} (2 cores: above 2 the figures "
          f"are inflated)")


if __name__ == "__main__":
    main()
