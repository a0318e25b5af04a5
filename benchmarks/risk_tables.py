"""What a risk strategy's decision table shares with the optimal one, and what it costs
on disk and to load (issue 21, "Disk").

``overlap``: for every risk decision table in the cache (``optimal:theta=...``), the
share of its decisions equal to the optimal table's (each array, and the states whose
every decision is equal), the same between neighbouring thetas, and the bytes of the
ways to store it: whole, a bitmap of the entries that differ and their bytes (plain
and deflated), the XOR with the optimal table deflated, the table deflated alone.

``load``: each table in a fresh process (wall and CPU seconds, cache status): the
optimal table and the risk tables, read as a process starting a run reads them, and
by a child of that process as a worker of the run reads them (given the file's
identity its parent verified, while the parent holds the table).
``--tree`` chooses the source tree the processes import (another checkout: the
figures before a change).

    PYTHONPATH=$PWD .venv/bin/python benchmarks/risk_tables.py overlap
    PYTHONPATH=$PWD .venv/bin/python benchmarks/risk_tables.py load --theta 0.02 --theta -0.01
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _arrays(path) -> dict:
    with np.load(path, allow_pickle=False) as z:
        return {k[2:]: z[k] for k in z.files if k.startswith("a_")}


def _compare(a: dict, b: dict) -> dict:
    names = sorted(a)
    total = sum(a[k].size for k in names)
    same = {k: a[k] == b[k] for k in names}
    rows = np.logical_and.reduce([s.all(axis=1) for s in same.values()])
    differ = np.concatenate([~same[k].reshape(-1) for k in names])
    new = np.concatenate([b[k].reshape(-1) for k in names])
    xor = np.concatenate([(a[k] ^ b[k]).reshape(-1) for k in names])
    bitmap = np.packbits(differ).tobytes()
    changed = new[differ].tobytes()
    return {
        "equal": float(1 - differ.mean()),
        "equal_by_array": {k: round(float(s.mean()), 4) for k, s in same.items()},
        "states_all_equal": float(rows.mean()),
        "differing_entries": int(differ.sum()),
        "bytes_whole": int(total),
        "bytes_bitmap_and_changes": len(bitmap) + len(changed),
        "bytes_bitmap_and_changes_deflated": len(zlib.compress(bitmap, 6)) + len(zlib.compress(changed, 6)),
        "bytes_xor_deflated": len(zlib.compress(xor.tobytes(), 6)),
        "bytes_table_deflated": len(zlib.compress(new.tobytes(), 6)),
    }


def overlap(rules_key: str, folder: str) -> list[dict]:
    names = os.listdir(folder)
    pat = re.compile(re.escape(rules_key) + r"-[0-9a-f]{16}-(?:risk-theta(?P<t>-?[0-9.e-]+)-)?decisions-v\d+\.npz$")
    found = {}
    for n in names:
        m = pat.match(n)
        if m:
            found[0.0 if m["t"] is None else float(m["t"])] = os.path.join(folder, n)
    if 0.0 not in found:
        raise SystemExit(f"no optimal decision table of {rules_key} in {folder}")
    base = _arrays(found[0.0])
    out = []
    thetas = sorted(t for t in found if t != 0.0)
    for t in thetas:
        r = _compare(base, _arrays(found[t]))
        r.update(rules=rules_key, theta=t, against="optimal", file_bytes=os.path.getsize(found[t]))
        out.append(r)
        print(json.dumps(r), flush=True)
    ordered = sorted(found)                     # neighbours, the optimal (theta 0) among them
    for lo, hi in zip(ordered, ordered[1:]):
        r = _compare(_arrays(found[lo]), _arrays(found[hi]))
        r.update(rules=rules_key, theta=hi, against=f"theta {lo:g}")
        out.append(r)
        print(json.dumps(r), flush=True)
    return out


_LOAD = r"""
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0, c0 = time.perf_counter(), cpu()
from yahtzee_sim.rules import get_rules
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.exact.decisions import decision_table
rules = get_rules(sys.argv[1], [o for o in sys.argv[2].split(",") if o])
theta = float(sys.argv[3])
trusted = tuple(int(x) for x in sys.argv[4].split(",")) if sys.argv[4] else None
if theta == 0:
    sol = solve(rules)
else:
    from yahtzee_sim.exact.risk import solve_risk
    from yahtzee_sim.strategies.risk import risk_decision_table
    sol = solve_risk(rules, theta)
t1, c1 = time.perf_counter(), cpu()
t = decision_table(sol, progress=False, trusted=trusted) if theta == 0 else \
    risk_decision_table(sol, progress=False, trusted=trusted)
t2, c2 = time.perf_counter(), cpu()
base = getattr(t.boxes, "base", None)
worker = None
if trusted is None and t.file_id:       # a worker of this run, while this process holds the table
    import os, subprocess
    out = subprocess.run([sys.executable, "-c", sys.argv[5]] + sys.argv[1:4] + [",".join(map(str, t.file_id)), ""],
                         capture_output=True, text=True, env=os.environ)
    worker = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else out.stderr[-300:]
import os
from yahtzee_sim.exact import cache as C
ram = C.RAM_DIR if hasattr(C, "RAM_DIR") else None      # the expansions this process made (none before)
shared = sum(p.stat().st_size for p in ram.glob(f"*-{os.getpid()}-*")) if ram is not None else 0
print(json.dumps({"worker": worker, "expanded_bytes_in_shared_memory": shared, "cache": t.cache, "load_seconds": round(t2 - t1, 3), "load_cpu": round(c2 - c1, 3),
                  "values_seconds": round(t1 - t0, 3), "file": t.path, "file_id": list(t.file_id or ()),
                  "mapped_from": str(getattr(base, "filename", None)), "note": t.cache_note}))
"""


def _load_once(tree: str, rules: str, options: str, theta: float) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", _LOAD, rules, options, repr(theta), "", _LOAD], capture_output=True, text=True, env=env, cwd=tree)
    if out.returncode:
        raise SystemExit(f"the load of theta {theta} failed: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def load(tree: str, rules: str, options: str, thetas: list[float]) -> list[dict]:
    rows = []
    for theta in [0.0] + thetas:
        first = _load_once(tree, rules, options, theta)
        worker = first.pop("worker")
        size = os.path.getsize(first["file"]) if first["file"] else None
        for step, r in (("first process", first), ("worker (trusted)", worker)):
            r.update(rules=rules, theta=theta, step=step, file_bytes=size, tree=tree)
            rows.append(r)
            print(json.dumps(r), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("overlap", "load"))
    ap.add_argument("--rules", default="yahtzee")
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--theta", action="append", type=float, default=[])
    ap.add_argument("--cache", default=None, help="the cache folder (default: the user's)")
    ap.add_argument("--tree", default=ROOT, help="load: the source tree the processes import")
    args = ap.parse_args(argv)
    if args.cache:
        os.environ["YAHTZEE_SIM_CACHE"] = args.cache
    sys.path.insert(0, args.tree)
    from yahtzee_sim.exact.cache import cache_dir
    from yahtzee_sim.rules import get_rules

    key = get_rules(args.rules, args.option).key
    if args.what == "overlap":
        overlap(key, str(cache_dir()))
    else:
        load(args.tree, args.rules, ",".join(args.option), args.theta or [0.02])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
