"""Benchmark the target-play solver (issue 9 §2 and §5): time, memory, cache size.

For each case, in fresh processes: a cold solve of the W table (targets 0..max) into
a cache folder, then loading it back from that folder. Reported: solve seconds, the
peak resident memory of the solving process (VmHWM) and of its worker (the shared
table counts in both), the cache file's size, the load time and the loading
process's peak memory, and P(score >= T) under target play for a few T.

    .venv/bin/python benchmarks/bench_target.py                               # yahtzee 300, yacht in order 300
    .venv/bin/python benchmarks/bench_target.py --rules yacht --option fill-in-order --max-target 300
    .venv/bin/python benchmarks/bench_target.py --cache-dir ~/.cache/yahtzee-sim   # keep the tables
    .venv/bin/python benchmarks/bench_target.py --rules yahtzee --cold-compile --compare-turns 40
        # numba's cache in an empty folder too (the compilation counted in the cold solve); then
        # 40 sampled states of each fullness: the NumPy turn against the compiled one (CPU, values)

Timings on a shared machine are noisy: the script prints the load average next to them,
and the CPU seconds of the solving process and its workers (comparable under load).
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

CASES = [("yahtzee", [], 300), ("yacht", ["fill-in-order"], 300)]


def _vm_hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")  # pragma: no cover - not Linux


def _child(name: str, options: list[str], max_target: int, cache_dir: str, workers) -> dict:
    from yahtzee_sim.exact.target import target_cache_path, target_solve

    t0 = time.perf_counter()
    c0 = time.process_time()
    sol = target_solve(name, max_target, options=options, cache_dir=cache_dir, jobs=workers)
    wall = time.perf_counter() - t0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0 + kids.ru_utime + kids.ru_stime
    path = target_cache_path(sol.rules, sol.max_target, sol.dtype, cache_dir)
    picks = [t for t in (100, 150, 200, 250, 300) if t <= max_target]
    return {"rules": sol.rules.key, "max_target": max_target, "cache": sol.cache,
            "states": sol.summary()["states"], "table_mb": round(sol.table.nbytes / 2**20, 1),
            "seconds": round(wall, 2), "solve_seconds": round(sol.solve_seconds, 2), "cpu_seconds": round(cpu, 2),
            "vm_hwm_mb": round(_vm_hwm_mb(), 1),
            "worker_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1),
            "cache_file_mb": round(path.stat().st_size / 2**20, 1) if path.exists() else None,
            "p_reach": {t: round(sol.p_reach(t), 6) for t in picks}}


def _run(name, options, max_target, cache_dir, workers, numba_cache=None) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", "--rules", name,
           "--max-target", str(max_target), "--cache-dir", cache_dir]
    for o in options:
        cmd += ["--option", o]
    if workers:
        cmd += ["--workers", str(workers)]
    env = dict(os.environ, NUMBA_CACHE_DIR=numba_cache) if numba_cache else None
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare_turns(name, options, max_target, per_level, cache_dir) -> dict:
    """``per_level`` sampled states of each fullness of the cached table: CPU seconds per
    state of the NumPy turn (``target_turn``, in chunks as it was solved before the
    compiled turn) and of the compiled turn, both from the table's next states, and how
    far their rows are from the table's."""
    import numpy as np

    from yahtzee_sim.exact import target as T
    from yahtzee_sim.exact.space import turn_model

    sol = T.target_solve(name, max_target, options=options, cache_dir=cache_dir)
    rules, table = sol.rules, np.array(sol.table)
    model = turn_model(rules, np.dtype(sol.dtype))
    row_of, levels, _ = T._layout(rules)
    width = table.shape[1]
    nz = table > 0
    tops = np.where(nz.any(1), width - 1 - np.argmax(nz[:, ::-1], axis=1), 0).astype(np.int64)
    kx = T._kernels()
    kx.precompile(model.dtype)
    head, tail = T._compiled_consts(model)
    chunk = max(1, T.CHUNK_CELLS // width)
    rng = np.random.default_rng(2026)
    out = table.copy()
    cpu_old = cpu_new = 0.0
    n = same = 0
    worst = 0.0
    for level, ((m, u, fl), first) in sorted(levels.items()):
        pick = np.sort(rng.choice(len(m), min(per_level, len(m)), replace=False))
        c0 = time.process_time()
        old = np.concatenate([
            T.target_turn(model, table, row_of, m[pick[a:a + chunk]], u[pick[a:a + chunk]], fl[pick[a:a + chunk]],
                          np.broadcast_to(np.arange(width), (len(pick[a:a + chunk]), width))).astype(table.dtype)
            for a in range(0, len(pick), chunk)])
        c1 = time.process_time()
        rows = (first + pick).astype(np.int64)
        out[rows] = np.nan
        for a in range(0, len(pick), T.COMPILED_CHUNK):
            sl = slice(a, a + T.COMPILED_CHUNK)
            trow, gain, r5, g5 = T._compiled_inputs(model, row_of, m[pick[sl]], u[pick[sl]], fl[pick[sl]])
            kx.target_states(out, tops.copy(), rows[sl], trow, gain, *head, r5, g5, *tail)
        c2 = time.process_time()
        cpu_old += c1 - c0
        cpu_new += c2 - c1
        n += len(pick)
        same += int((old == table[rows]).all(axis=1).sum() + (out[rows] == table[rows]).all(axis=1).sum())
        worst = max(worst, float(np.abs(old.astype(float) - table[rows]).max()),
                    float(np.abs(out[rows].astype(float) - table[rows]).max()))
    return {"rules": rules.key, "states": n, "numpy_ms_per_state": round(cpu_old / n * 1e3, 3),
            "compiled_ms_per_state": round(cpu_new / n * 1e3, 3), "ratio": round(cpu_old / cpu_new, 1),
            "rows_identical": f"{same} of {2 * n}", "max_abs_diff": worst,
            "load_average": round(os.getloadavg()[0], 1)}


def simulated_check(name, options, max_target, target, games, cache_dir) -> dict:
    """Simulate ``target:T=<target>`` and compare its hit rate with the exact W(start, T)."""
    import numpy as np

    from yahtzee_sim import simulate
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.target import target_solve
    from yahtzee_sim.intervals import binomial_interval
    from yahtzee_sim.strategies.target import TargetStrategy

    sol = target_solve(name, max_target, options=options, cache_dir=cache_dir)
    t0 = time.perf_counter()
    res = simulate(name, TargetStrategy(target, sol), games, options=options, seed=2026)
    seconds = time.perf_counter() - t0
    hist = res.aggregate.total_hist
    hits = int(hist[target:].sum())
    exact = sol.p_reach(target)
    low, high = binomial_interval(hits, games, 0.95)
    mean_play = distribution(name, "optimal", options=options, cache=True).p_at_least(target)
    return {"rules": sol.rules.key, "target": target, "games": games, "hit_rate": hits / games,
            "ci95": [low, high], "exact_target_play": exact,
            "z": (hits / games - exact) / float(np.sqrt(exact * (1 - exact) / games)),
            "exact_optimal": mean_play, "mean_score": res.summary()["mean"],
            "games_per_second": round(games / seconds, 1), "load_average": round(os.getloadavg()[0], 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", help="one rule set (default: yahtzee and yacht filled in order)")
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--max-target", type=int, default=300)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--cache-dir", help="cache folder (default: a fresh temporary one, so the solve is cold)")
    ap.add_argument("--simulate", type=int, default=0, metavar="GAMES",
                    help="also simulate target:T=<each --check-target> this many games (seed 2026)")
    ap.add_argument("--check-target", type=int, action="append", default=[], metavar="T")
    ap.add_argument("--cold-compile", action="store_true",
                    help="numba's cache in an empty folder for the cold solve (compilation counted)")
    ap.add_argument("--compare-turns", type=int, default=0, metavar="N",
                    help="then N sampled states of each fullness: NumPy turn against compiled (CPU, values)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_child(args.rules, args.option, args.max_target, args.cache_dir, args.workers)))
        return
    if args.simulate:
        for t in args.check_target or [250]:
            print(json.dumps(simulated_check(args.rules or "yahtzee", args.option, args.max_target, t,
                                             args.simulate, args.cache_dir)))
        return
    cases = [(args.rules, args.option, args.max_target)] if args.rules else CASES
    rows = []
    compared = []
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as numba_tmp:
        cache_dir = os.path.expanduser(args.cache_dir) if args.cache_dir else tmp
        for name, options, max_target in cases:
            load_before = os.getloadavg()[0]
            cold = _run(name, options, max_target, cache_dir, args.workers,
                        numba_tmp if args.cold_compile else None)
            hit = _run(name, options, max_target, cache_dir, args.workers)
            rows.append({"cold": cold, "load": hit, "load_average": [round(load_before, 1),
                                                                     round(os.getloadavg()[0], 1)]})
            if args.compare_turns:
                compared.append(compare_turns(name, options, max_target, args.compare_turns, cache_dir))
    if args.json:
        print(json.dumps({"rows": rows, "compared": compared} if compared else rows, indent=1))
        return
    print("| rules | targets | states | table MB | solve s | CPU s | VmHWM MB (main + worker) | cache file MB "
          "| load s | load VmHWM MB | P(>=200) | P(>=250) | P(>=300) | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c, h = r["cold"], r["load"]
        p = c["p_reach"]
        print(f"| {c['rules']} | 0..{c['max_target']} | {c['states']:,} | {c['table_mb']} | "
              f"{c['solve_seconds']} ({c['cache']}) | {c['cpu_seconds']} | {c['vm_hwm_mb']} + {c['worker_peak_rss_mb']} | "
              f"{c['cache_file_mb']} | {h['seconds']} ({h['cache']}) | {h['vm_hwm_mb']} | "
              f"{p.get('200', p.get(200))} | {p.get('250', p.get(250))} | {p.get('300', p.get(300))} | "
              f"{r['load_average'][0]} -> {r['load_average'][1]} |")
    for c in compared:
        print(json.dumps(c))


if __name__ == "__main__":
    main()
