"""A solve's true memory peak and time against what the solver announces before it starts
(issue 21: ``solve_estimate``'s bytes and seconds).

Each rule set is solved (``cache=False``, compiled kernels loaded first) in a fresh
process. A thread samples, every 20 ms, the proportional set size (PSS: a page shared
by the solving process and its worker counts once in their sum) of that process and
its children, from ``/proc``; the peak of the sum is what the machine lent the solve,
the value and variance tables included. Printed next to it: the process's own peak
(``ru_maxrss``, shared pages included), the memory before the solve (Python, NumPy,
the compiled kernels), the estimate, the wall and CPU seconds and the announced time.

    .venv/bin/python benchmarks/bench_solver_memory.py                          # yatzy, kniffel
    .venv/bin/python benchmarks/bench_solver_memory.py --rules maxi-yatzy --option no-saved-throws
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _pss(pid: int) -> int:
    """Bytes of PSS of one process (0 if it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return out


def child(name: str, options: list[str]) -> dict:
    """In a fresh process: one solve, sampled; the peaks and the estimate."""
    import numpy as np

    from yahtzee_sim.exact import space as S
    from yahtzee_sim.exact.solver import solve, solve_estimate
    from yahtzee_sim.forkpool import default_jobs
    from yahtzee_sim.rules import get_rules

    rules = get_rules(name, options)
    kx = S._kernels()
    if kx is not None:
        for dtype in (np.float32, np.float64):
            kx.precompile(dtype, 1)            # the compiled code loaded: not the solve's memory
    me = os.getpid()
    before = _pss(me)
    peak = [before]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], _pss(me) + sum(_pss(c) for c in _children(me)))
            time.sleep(0.02)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    n, est_bytes, est_seconds = solve_estimate(rules, default_jobs())
    t0, c0 = time.perf_counter(), time.process_time()
    sol = solve(rules, cache=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    stop.set()
    thread.join()
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"rules": rules.key, "mean": round(sol.mean, 4), "states": int(np.sum(sol.levels["states"])),
            "estimated_states": n, "pss_before_mb": round(before / 1e6), "peak_pss_mb": round(peak[0] / 1e6),
            "solve_peak_mb": round((peak[0] - before) / 1e6),
            "rss_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "worker_rss_peak_mb": round(kids.ru_maxrss / 1024),
            "estimate_mb": round(est_bytes / 1e6), "wall_s": round(wall, 2),
            "cpu_s": round(cpu + kids.ru_utime + kids.ru_stime, 2), "announced_s": round(est_seconds, 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", action="append", default=None)
    p.add_argument("--option", action="append", default=[])
    p.add_argument("--json", action="store_true")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    names = args.rules or ["yatzy", "kniffel"]
    if args.child:
        print(json.dumps(child(names[0], args.option)))
        return 0
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    for name in names:
        cmd = [sys.executable, os.path.abspath(__file__), "--child", "--rules", name]
        for o in args.option:
            cmd += ["--option", o]
        load0 = os.getloadavg()[0]
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed: {done.stderr.strip().splitlines()[-1:]}")
        r = json.loads(done.stdout.strip().splitlines()[-1])
        r["load"] = f"{load0:.1f}-{os.getloadavg()[0]:.1f}"
        if args.json:
            print(json.dumps(r), flush=True)
            continue
        print(f"{r['rules']}: {r['states']:,} states, mean {r['mean']}; memory the solve added (PSS of the "
              f"process and its worker, peak - before): {r['solve_peak_mb']:,} MB (estimate {r['estimate_mb']:,} MB; "
              f"before {r['pss_before_mb']} MB; ru_maxrss {r['rss_peak_mb']:,} + worker {r['worker_rss_peak_mb']:,} MB); "
              f"{r['wall_s']} s wall, {r['cpu_s']} CPU s (announced {r['announced_s']} s); load {r['load']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
