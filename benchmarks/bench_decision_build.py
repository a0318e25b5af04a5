"""Where a warm decision-table build goes (issue 21): the CPU seconds of its three parts over
every chunk in one process (the widget's keep values, the keep picks, the box picks), then
the whole build in one process and with 2 forked builders (CPU of this process and the
builders it reaped). The solve is read from the cache (solved first if missing) and the
compiled loops are loaded before timing: warm figures. Another tree: ``PYTHONPATH=<tree>``.

    python benchmarks/bench_decision_build.py
    PYTHONPATH=/path/to/main python benchmarks/bench_decision_build.py --rules yatzy
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np


def cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="yahtzee")
    args = parser.parse_args()

    import yahtzee_sim.exact.decisions as D
    from yahtzee_sim.exact._solver_lattice import lattice
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.exact.space import state_space

    sol = solve(args.rules)
    rules = sol.rules
    values = np.ascontiguousarray(sol.values).reshape(-1)
    space = state_space(rules)
    plan, served = D._mean_planner(rules, values)
    (m, u, f), _ = D._states(space)
    (D.precompile if hasattr(D, "precompile") else D._precompile)()    # older trees: the private name
    lat, sub_pos = lattice(rules.dice), D._roll_sub_pos(rules)
    ctx = D._box_context(rules, space, m, f, None) if hasattr(D, "_box_context") and D._kernels() else None
    parts = {"plan": 0.0, "keeps": 0.0, "boxes": 0.0}
    throws = 2 if served else None
    for lo in range(0, len(m), D.CHUNK):
        sl = slice(lo, lo + D.CHUNK)
        t0 = time.process_time()
        kv = plan(m[sl], u[sl], f[sl])
        t1 = time.process_time()
        for j in range(1, rules.n_rolls):
            D._keep_picks(kv[j], lat, sub_pos)
        t2 = time.process_time()
        extra = {"ctx": ctx} if ctx is not None else {}
        D._box_picks(rules, space, values, m[sl], u[sl], f[sl], throws, **extra)
        parts["plan"] += t1 - t0
        parts["keeps"] += t2 - t1
        parts["boxes"] += time.process_time() - t2
    print(f"{rules.key}, {len(m):,} states, load {os.getloadavg()[0]:.1f}: per chunk, CPU s: "
          + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()))
    for jobs in (1, 2):
        c, w = cpu(), time.perf_counter()
        D._build(rules, values, plan, served, D.CHUNK, None, "build", jobs=jobs)
        print(f"build, {jobs} process{'es' if jobs > 1 else ''}: {time.perf_counter() - w:.2f} s wall, "
              f"{cpu() - c:.2f} CPU s")


if __name__ == "__main__":
    main()
