"""Where a first ``distribution --strategy optimal`` goes, phase by phase (issue 21).

One process with nothing cached (an empty numba cache folder, ``NUMBA_CACHE_DIR``, and an
empty table cache, ``YAHTZEE_SIM_CACHE``): wall and CPU seconds of the solve, of the
decision table's build and of the pass, in that order. CPU counts this process and every
child it has reaped by then (the solver's and the build's workers, the pass's compiler
forked beside them: its CPU counts in the phase it ends in), so it is the figure load
changes least. ``--tree`` runs another
source tree (a before/after in the same minutes); ``--runs`` alternates them.

    python benchmarks/bench_cold_phases.py
    python benchmarks/bench_cold_phases.py --tree /path/to/main --tree . --runs 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _measure(rules: str) -> dict:
    """The phases of one cold distribution of optimal play, in this process."""
    import resource

    def cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    t0 = time.perf_counter()
    marks: list = []

    def mark(name: str) -> None:
        marks.append((name, time.perf_counter() - t0, cpu()))

    import yahtzee_sim.exact.decisions as decisions
    import yahtzee_sim.exact.distribution as dist
    import yahtzee_sim.exact.solver as solver

    mark("imports")
    solve, build = solver.solve, decisions.decision_table

    def timed(fn, phase):               # the strategy imports them at call time: patched here
        def run(*a, **k):
            out = fn(*a, **k)
            mark(phase)
            return out
        return run

    # each phase runs from the end of the one before (the imports, then the solve with the
    # set-up before it, the decision table's build, the pass with its first level's checks)
    solver.solve = timed(solve, "solve")
    decisions.decision_table = timed(build, "decision table")
    result = dist.distribution(rules, "optimal")
    mark("pass")
    phases, last_t, last_c = [], 0.0, 0.0
    for name, t, c in marks:
        phases.append({"phase": name, "wall": t - last_t, "cpu": c - last_c})
        last_t, last_c = t, c
    return {"phases": phases, "wall": marks[-1][1], "cpu": marks[-1][2], "mean": result.mean,
            "load": os.getloadavg()[0]}


def run_tree(tree: Path, rules: str) -> dict:
    """One cold run of ``tree``'s code in a fresh process with empty cache folders."""
    with tempfile.TemporaryDirectory(prefix="bench-phases-") as tmp:
        env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_CACHE_DIR=str(Path(tmp) / "numba"),
                   YAHTZEE_SIM_CACHE=str(Path(tmp) / "tables"))
        before = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--child", rules], env=env, cwd=str(tree),
                             capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        got.update(tree=str(tree), load_before=before)
        return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", action="append", default=[], help="source tree to run (default: this one)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each tree, alternated")
    parser.add_argument("--rules", default="yahtzee")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.child)))
        return
    trees = [Path(t).resolve() for t in args.tree] or [ROOT]
    rows = [run_tree(tree, args.rules) for _ in range(args.runs) for tree in trees]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        split = ", ".join(f"{p['phase']} {p['wall']:.1f} s wall / {p['cpu']:.1f} CPU s" for p in r["phases"])
        print(f"{r['tree']}: {r['wall']:.1f} s wall, {r['cpu']:.1f} CPU s (load {r['load_before']:.1f}-"
              f"{r['load']:.1f}): {split}")


if __name__ == "__main__":
    main()
