"""CPU and wall seconds of one exact loss accounting (issue 20: the loss walk on the one
keep-lattice layout), warm or cold.

Each run is a fresh process calling :func:`yahtzee_sim.exact.losses.loss_accounting`
(default: ``greedy`` on ``yahtzee``, one process, so the CPU seconds are the critical
path); the solver's float64 tables come from the table cache (filled by a first call if
they are missing, outside the timing). ``--cold`` gives every run an empty numba cache
folder (``NUMBA_CACHE_DIR``): the walk's compilation is counted, in the main process or in
the forked compiler beside it (CPU counts this process and the children it has reaped).
``--tree`` runs another source tree (a before/after in the same minutes); ``--runs``
alternates them, so A/B pairs share the load. ``--kernel`` times the compiled walk alone:
the accounting runs once, its first chunk of 1,500 states or more is kept, and the walk is
called on it again and again (CPU ms per call, the fastest and the median of 15).

    python benchmarks/bench_losses.py
    python benchmarks/bench_losses.py --tree /path/to/main --tree . --runs 3 --cold
    python benchmarks/bench_losses.py --tree /path/to/main --tree . --runs 2 --kernel
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


def _measure(rules: str, strategy: str, jobs: int) -> dict:
    """One loss accounting in this process: wall, CPU and system seconds, page faults, and
    its headline figures."""
    import resource

    import yahtzee_sim  # noqa: F401  (before NumPy: its BLAS threads told to sleep, as in the CLI)
    import numpy as np

    from yahtzee_sim.exact.solver import solve

    def cpu() -> np.ndarray:          # CPU s, system s, minor page faults: this process and its reaped children
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return np.array([own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
                         own.ru_stime + kids.ru_stime, own.ru_minflt + kids.ru_minflt])

    solve(rules, dtype=np.float64)           # the cached tables, loaded once: not the walk's time
    from yahtzee_sim.exact.losses import loss_accounting

    t0, c0 = time.perf_counter(), cpu()
    acc = loss_accounting(rules, strategy, jobs=jobs)
    wall, (cpu_s, sys_s, faults) = time.perf_counter() - t0, cpu() - c0
    return {"wall": wall, "cpu": cpu_s, "sys": sys_s, "faults": int(faults), "gap": acc.gap,
            "accounted": acc.accounted, "load": os.getloadavg()[0]}


def _measure_kernel(rules: str, strategy: str) -> dict:
    """The compiled walk alone on one captured chunk: CPU ms per call."""
    import numpy as np

    import yahtzee_sim.exact._loss_kernels as kernels
    from yahtzee_sim.exact.losses import loss_accounting

    kept: list = []

    def keeping(walk):                       # the accounting looks its walk up at call time
        def keep_first(*args):
            if not kept and len(args[0]) >= 1500:
                kept.append((walk, [np.array(a) if isinstance(a, np.ndarray) else a for a in args]))
            return walk(*args)
        return keep_first

    for name in ("turn_losses", "uniform_turn_losses"):      # random's walk, or the others'
        setattr(kernels, name, keeping(getattr(kernels, name)))
    acc = loss_accounting(rules, strategy, jobs=1)
    (walk, args), times = kept[0], []
    for _ in range(15):
        t0 = time.process_time()
        walk(*args)
        times.append(time.process_time() - t0)
    times.sort()
    return {"wall": 0.0, "cpu": 0.0, "ms_min": 1e3 * times[0], "ms_median": 1e3 * times[7],
            "states": len(args[0]), "gap": acc.gap, "load": os.getloadavg()[0]}


def run_tree(tree: Path, rules: str, strategy: str, jobs: int, cold: bool, kernel: bool = False) -> dict:
    """One run of ``tree``'s code in a fresh process (an empty numba cache if ``cold``)."""
    with tempfile.TemporaryDirectory(prefix="bench-losses-") as tmp:
        env = dict(os.environ, PYTHONPATH=str(tree))
        if cold:
            env["NUMBA_CACHE_DIR"] = str(Path(tmp) / "numba")
        before = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "--child", rules, strategy,
                              "kernel" if kernel else str(jobs)], env=env,
                             cwd=str(tree), capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        got.update(tree=str(tree), load_before=before)
        return got


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="yahtzee")
    p.add_argument("--strategy", default="greedy")
    p.add_argument("--jobs", type=int, default=1, help="processes of the accounting (default 1)")
    p.add_argument("--tree", action="append", type=Path, help="source tree(s) to run (default: this one)")
    p.add_argument("--runs", type=int, default=1, help="runs of each tree, alternated")
    p.add_argument("--cold", action="store_true", help="an empty numba cache for every run")
    p.add_argument("--kernel", action="store_true", help="time the compiled walk alone on one chunk")
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        rules, strategy, jobs = args.child
        print(json.dumps(_measure_kernel(rules, strategy) if jobs == "kernel" else
                         _measure(rules, strategy, int(jobs))))
        return
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    if args.kernel:
        print(f"the compiled loss walk alone, {args.strategy} on {args.rules}, one chunk")
        print("| tree | states | CPU ms per call: fastest | median | load before / after |")
    else:
        print(f"loss accounting of {args.strategy} on {args.rules}, {args.jobs} process(es), "
              f"{'cold (empty numba cache)' if args.cold else 'warm'}")
        print("| tree | CPU s | wall s | of which system s | page faults | gap | load before / after |")
    print("|---|---|---|---|---|---|---|" if not args.kernel else "|---|---|---|---|---|")
    for _ in range(args.runs):
        for tree in trees:
            r = run_tree(tree, args.rules, args.strategy, args.jobs, args.cold, args.kernel)
            load = f"{r['load_before']:.1f} / {r['load']:.1f}"
            if args.kernel:
                print(f"| {r['tree']} | {r['states']} | {r['ms_min']:.1f} | {r['ms_median']:.1f} | {load} |",
                      flush=True)
            else:
                print(f"| {r['tree']} | {r['cpu']:.2f} | {r['wall']:.2f} | {r['sys']:.2f} | {r['faults']:,} | "
                      f"{r['gap']:.6f} | {load} |", flush=True)


if __name__ == "__main__":
    main()
