"""Exact policy values (issue 3 section 4): expected score, sd and time per strategy.

Usage: .venv/bin/python benchmarks/bench_policy.py [--rules yahtzee] [--option O]
       [--strategy S ...]

Prints, per strategy, the exact expected final score and sd from
``policy_value`` with the seconds taken, wall clock and CPU time of this process
(on a shared machine the CPU time is the steadier figure; the optimal strategy's
solver tables come from the disk cache when present; the solve time is not included).
"""

from __future__ import annotations

import argparse
import resource
import time

from yahtzee_sim.exact.policy import policy_value
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.rules import get_rules


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="yahtzee")
    p.add_argument("--option", action="append", default=[])
    p.add_argument("--strategy", action="append", default=None)
    args = p.parse_args()
    rules = get_rules(args.rules, args.option)
    names = args.strategy or ["keep-largest", "greedy", "heuristic", "random", "optimal"]
    if "optimal" in names:
        t = time.perf_counter()
        sol = solve(rules)
        print(f"solver: {sol.expected_score:.4f} (sd {sol.sd:.4f}), {time.perf_counter() - t:.1f} s "
              f"(cache {sol.cache})")
    print(f"{rules.key}: exact policy values")
    print(f"{'strategy':<14}{'expected':>11}{'sd':>10}{'states':>10}{'seconds':>9}{'cpu s':>8}")
    from yahtzee_sim.progress import as_progress

    report = as_progress(True)  # a bar on a terminal's stderr only
    for i, name in enumerate(names):
        report(f"policy value of {name}", i, len(names))
        cpu = time.process_time()
        pv = policy_value(rules, name)
        cpu = time.process_time() - cpu
        print(f"{name:<14}{pv.expected_score:>11.4f}{pv.sd:>10.4f}{pv.states:>10,}{pv.seconds:>9.1f}"
              f"{cpu:>8.1f}", flush=True)
    report.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
