"""How much each cached exact table takes, on disk and in memory (issue 10, "Memory").

For each rule set, every kind of table the exact engine caches: the solver's values
and variances, the optimal decision table, the target table (targets 0..300), a
risk table (theta 0.02) and the exact score distribution of ``optimal``. A table
already in the cache is loaded and measured (the file's size, the loaded arrays'
bytes); one that is not is skipped, unless ``--build`` (then it is computed first,
which takes minutes for the target table).

    .venv/bin/python benchmarks/cache_sizes.py                      # yahtzee and yatzy
    .venv/bin/python benchmarks/cache_sizes.py --rules generala --build
    .venv/bin/python benchmarks/cache_sizes.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

THETA = 0.02
MAX_TARGET = 300


def _arrays_bytes(obj) -> int:
    """Bytes of the numpy arrays held by a result object (its fields, one level deep)."""
    import dataclasses

    total = 0
    for f in dataclasses.fields(obj):
        v = getattr(obj, f.name)
        if isinstance(v, np.ndarray):
            total += v.nbytes
    return total


def _row(rules, kind, path, memory, note=""):
    disk = path.stat().st_size if path is not None and path.is_file() else None
    return {"rules": rules.key, "table": kind, "disk_mb": None if disk is None else round(disk / 1e6, 2),
            "memory_mb": None if memory is None else round(memory / 1e6, 2), "note": note}


def measure(name: str, build: bool) -> list[dict]:
    from yahtzee_sim.exact.decisions import decision_table, decisions_cache_path, table_bytes
    from yahtzee_sim.exact.distribution import _cache_path as distribution_path
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.risk import risk_cache_path, solve_risk
    from yahtzee_sim.exact.solver import cache_path, solve
    from yahtzee_sim.exact.target import target_cache_path, target_solve
    from yahtzee_sim.rules import get_rules

    rules = get_rules(name)
    rows = []
    path = cache_path(rules)
    if build or path.is_file():
        sol = solve(rules)
        rows.append(_row(rules, "solver values + variances (float64)", path,
                         sol.values.nbytes + sol.variances.nbytes, f"{int(np.sum(sol.levels['states'])):,} states"))
    else:
        rows.append(_row(rules, "solver values + variances (float64)", None, None, "not cached"))
        return rows
    path = decisions_cache_path(rules)
    if build or path.is_file():
        rows.append(_row(rules, "optimal decision table", path, decision_table(sol).nbytes))
    else:
        rows.append(_row(rules, "optimal decision table", None, table_bytes(rules),
                         "not cached (memory: the size it would take)"))
    path = target_cache_path(rules, MAX_TARGET)
    if build or path.is_file():
        t = target_solve(rules, MAX_TARGET)
        rows.append(_row(rules, f"target table (0..{MAX_TARGET}, {t.dtype})", path, t.table.nbytes))
    else:
        rows.append(_row(rules, f"target table (0..{MAX_TARGET})", None, None, "not cached"))
    path = risk_cache_path(rules, THETA)
    if build or path.is_file():
        rows.append(_row(rules, f"risk table (theta {THETA})", path, _arrays_bytes(solve_risk(rules, THETA))))
    else:
        rows.append(_row(rules, f"risk table (theta {THETA})", None, None, "not cached"))
    path = distribution_path(rules, "optimal")
    if not rules.roll_dependent and (build or path.is_file()):
        d = distribution(rules, "optimal", cache=True)
        rows.append(_row(rules, "distribution of optimal", path, _arrays_bytes(d)))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", action="append", help="rule set (repeatable; default: yahtzee, yatzy)")
    p.add_argument("--build", action="store_true", help="compute the tables that are not cached")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = [r for name in (args.rules or ["yahtzee", "yatzy"]) for r in measure(name, args.build)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    import pandas as pd

    frame = pd.DataFrame(rows).astype(object).where(lambda f: f.notna(), "")
    print("cached exact tables: size on disk (the .npz file) and in memory (the loaded arrays), MB")
    print(frame.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
