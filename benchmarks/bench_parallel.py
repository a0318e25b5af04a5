"""Parallel runs: games/s serial vs processes, Dask per-chunk overhead, streaming memory.

Prints three tables:

1. games/s per strategy, serial vs ``--backend processes --jobs J`` (target on 2
   cores: at least 1.7x for 10M games of keep-largest);
2. Dask LocalCluster: startup time and overhead per chunk (many small chunks);
3. peak resident memory of streaming runs (10M and 100M games by default): it must
   not grow with the number of games.

Each timed run is checked to give the same aggregate as the serial one.

    .venv/bin/python benchmarks/bench_parallel.py                 # full (long: ~15 min on 2 cores)
    .venv/bin/python benchmarks/bench_parallel.py --games 1e6 --memory-games 1e6,1e7   # quick look
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import subprocess
import sys
import time

import numpy as np

from yahtzee_sim import simulate
from yahtzee_sim.cli._common import positive_int

MEMORY_CHILD = r"""
import json, resource, sys, time
from yahtzee_sim import simulate
n, backend, jobs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
if __name__ == "__main__":
    t = time.perf_counter()
    kw = {} if backend == "serial" else {"backend": backend, "jobs": jobs}
    res = simulate("yahtzee", "keep-largest", n, seed=1, keep_games=False, **kw)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(json.dumps({"games": res.aggregate.n_games, "seconds": time.perf_counter() - t,
                      "peak_rss_mb": own / 1024, "worker_peak_rss_mb": workers / 1024}))
"""


def count(text: str) -> int:
    return positive_int(text)


def timed(**kwargs):
    t = time.perf_counter()
    res = simulate(**kwargs)
    return res, time.perf_counter() - t


def cpu_seconds() -> float:
    """CPU time of this process plus its finished children (the pool's workers)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def bench_speed(strategies, games, jobs, batch):
    print(f"\n## games/s, serial vs processes (jobs={jobs}, {games:,} games, batch {batch:,})")
    print("CPU s/M = CPU seconds per million games (main + workers); efficiency = serial CPU / processes CPU.")
    print("On a shared machine the wall-clock speedup is noisy; jobs x efficiency is what free cores would give.")
    print(f"{'strategy':<14}{'serial g/s':>12}{'procs g/s':>12}{'speedup':>9}"
          f"{'serial CPU s/M':>16}{'procs CPU s/M':>15}{'efficiency':>12}")
    for name in strategies:
        base = dict(rules="yahtzee", strategy=name, n_games=games, seed=2026, batch=batch, keep_games=False)
        c = cpu_seconds()
        serial, t_serial = timed(**base)
        c_serial, c = cpu_seconds() - c, cpu_seconds()
        procs, t_procs = timed(**base, backend="processes", jobs=jobs)
        c_procs = cpu_seconds() - c
        assert np.array_equal(serial.aggregate.total_hist, procs.aggregate.total_hist)
        m = games / 1e6
        print(f"{name:<14}{games / t_serial:>12,.0f}{games / t_procs:>12,.0f}{t_serial / t_procs:>8.2f}x"
              f"{c_serial / m:>16.2f}{c_procs / m:>15.2f}{c_serial / c_procs:>12.2f}", flush=True)


def bench_dask(chunks, jobs):
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        print("\n## Dask: skipped (pip install 'yahtzee-sim[dask]')")
        return
    print(f"\n## Dask LocalCluster ({jobs} worker processes), {chunks} chunks of 1,024 games (keep-largest)")
    n = chunks * 1024
    base = dict(rules="yahtzee", strategy="keep-largest", n_games=n, seed=7, batch=1024, keep_games=False)
    serial, t_serial = timed(**base)
    t = time.perf_counter()
    with LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        t_start = time.perf_counter() - t
        _, t_first = timed(**base, backend="dask", scheduler=client)  # workers import and warm up
        res, t_dask = timed(**base, backend="dask", scheduler=client)
    assert np.array_equal(serial.aggregate.total_hist, res.aggregate.total_hist)
    overhead = (t_dask * jobs - t_serial) / chunks
    print(f"cluster startup            {t_start:8.2f} s")
    print(f"first run (worker warm-up) {t_first:8.2f} s")
    print(f"serial, same chunks        {t_serial:8.2f} s  ({t_serial / chunks * 1e3:.1f} ms of work per chunk)")
    print(f"dask, warm cluster         {t_dask:8.2f} s")
    print(f"overhead per chunk         {overhead * 1e3:8.1f} ms of worker time "
          f"((dask wall x {jobs} workers - serial) / chunks)")


def bench_memory(sizes, backend, jobs):
    print(f"\n## peak memory of streaming runs (keep-largest, backend {backend}"
          + (f", jobs {jobs})" if backend != "serial" else ")"))
    print(f"{'games':>15}{'seconds':>10}{'main peak RSS':>16}{'worker peak RSS':>18}")
    for n in sizes:
        out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(n), backend, str(jobs)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        assert r["games"] == n
        workers = f"{r['worker_peak_rss_mb']:.0f} MB" if backend != "serial" else "-"
        print(f"{n:>15,}{r['seconds']:>10.1f}{r['peak_rss_mb']:>13.0f} MB{workers:>18}", flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=count, default=10_000_000, help="games per speed run (default 10M)")
    p.add_argument("--strategies", default="keep-largest,random", help="comma-separated strategy names")
    p.add_argument("--jobs", type=count, default=2)
    p.add_argument("--batch", type=count, default=65536)
    p.add_argument("--dask-chunks", type=count, default=200)
    p.add_argument("--memory-games", default="1e7,1e8", help="comma-separated run sizes (default 10M,100M)")
    p.add_argument("--memory-backend", default="processes", choices=["serial", "processes"])
    p.add_argument("--skip", default="", help="comma-separated parts to skip: speed, dask, memory")
    args = p.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    print(f"cores: {os.cpu_count()}, load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if "speed" not in skip:
        bench_speed(args.strategies.split(","), args.games, args.jobs, args.batch)
    if "dask" not in skip:
        bench_dask(args.dask_chunks, args.jobs)
    if "memory" not in skip:
        bench_memory([count(s) for s in args.memory_games.split(",")], args.memory_backend, args.jobs)
    print(f"\nload average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
