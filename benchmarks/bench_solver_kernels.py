"""Where a solve's time goes: CPU microseconds per state of each compiled solver kernel
and of the Python around them, on chunks of one level of a rule set (issue 21).

The states of ``--level`` (boxes filled) are solved chunk by chunk, ``--states`` of them,
as the solver does, against value tables of random numbers (the work per state does
not depend on the values); each kernel call is timed with the process's CPU clock, so
the split holds on a loaded machine (the total grows with the load: compare ratios).
Also printed: the CPU seconds of building the reachable state space and its states.

    .venv/bin/python benchmarks/bench_solver_kernels.py                          # maxi-yatzy, level 10
    .venv/bin/python benchmarks/bench_solver_kernels.py --rules yatzy --level 7 --chunk 250 --chunk 1000
    .venv/bin/python benchmarks/bench_solver_kernels.py --compile 3    # each kernel's first compilation
    .venv/bin/python benchmarks/bench_solver_kernels.py --rules yatzy --solve 3   # whole solves, CPU split

``--compile N`` prints instead the CPU seconds of each kernel's first compilation, in
N fresh processes with an empty numba cache (what a first solve after an install pays,
:func:`~yahtzee_sim.exact._solver_kernels.precompile` splitting it over two cores): a
change to a kernel is weighed against it. The first kernel compiled in a process also
pays numba's one-time set-up (about 0.5 CPU s).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.environ.get("BENCH_TREE", ROOT))     # BENCH_TREE=<checkout>: measure another tree


def measure(rules_name: str, options: list[str], level: int, n_states: int, chunks: list[int]) -> dict:
    """Per-state CPU microseconds of each kernel, per chunk width.

    >>> r = measure("yacht-classic", [], 3, 500, [100])      # doctest: +SKIP
    """
    import numpy as np

    from yahtzee_sim.exact import _solver_kernels as kernels
    from yahtzee_sim.exact import space as S
    from yahtzee_sim.rules import get_rules

    rules = get_rules(rules_name, options)
    t = time.process_time()
    sp = S.state_space(rules)
    (m, u, f), _ = sp.level_states(sp.level_masks[level])
    build = time.process_time() - t
    model = S.turn_model(rules, np.float32)
    rng = np.random.default_rng(0)
    values = rng.random(sp.size) * 100
    variances = rng.random(sp.size) * 100
    spent = collections.Counter()

    class Timed:                     # the kernels module, each call timed
        def __getattr__(self, name):
            fn = getattr(kernels, name)
            if not callable(fn):     # a constant (the tile width)
                return fn

            def call(*a, **k):
                t0 = time.process_time()
                out = fn(*a, **k)
                spent[name] += time.process_time() - t0
                return out
            return call

    real = S._kernels
    S._kernels = lambda: Timed()
    try:
        kernels.precompile(np.float32, 1)
        S.turn_values(model, values, variances, m[:2], u[:2], f[:2], compiled=True)    # loaded
        n = min(n_states, len(m))
        out = {"rules": rules.key, "level": level, "level_states": len(m), "states": n,
               "space_build_cpu_s": round(build, 2), "chunks": {}}
        for chunk in chunks:
            spent.clear()
            t0 = time.process_time()
            for a in range(0, n, chunk):
                S.turn_values(model, values, variances, m[a:a + chunk], u[a:a + chunk], f[a:a + chunk],
                              compiled=True)
            total = time.process_time() - t0
            per = {k: round(v / n * 1e6, 3) for k, v in spent.most_common()}
            per["python and numpy around them"] = round((total - sum(spent.values())) / n * 1e6, 3)
            out["chunks"][chunk] = {"us_per_state": round(total / n * 1e6, 3), "split": per}
    finally:
        S._kernels = real
    return out


COMPILE_PROBE = """
import json, sys, time
import numpy as np
from yahtzee_sim.exact import _solver_kernels as K
sigs = K.signatures(np.dtype(sys.argv[1]))
out = {}
for name in K.KERNEL_NAMES:
    t = time.process_time()
    getattr(K, name).compile(sigs[name])
    out[name] = round(time.process_time() - t, 3)
print(json.dumps(out))
"""


def compile_seconds(runs: int, dtype: str = "float32") -> list[dict]:
    """CPU seconds of each kernel's first compilation (in :data:`KERNEL_NAMES` order), one
    dict per fresh process, each with an empty numba cache.

    >>> compile_seconds(1)       # doctest: +SKIP
    [{'turn_tables': 1.0, 'five_rows': 0.34, 'turn_tiles': 1.8}]
    """
    import subprocess
    import tempfile

    res = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=ROOT)
            # run in ROOT: "python -c" puts the current folder first on the path, which
            # would measure whatever tree the caller stands in
            out = subprocess.run([sys.executable, "-c", COMPILE_PROBE, dtype], env=env, check=True,
                                 capture_output=True, text=True, cwd=ROOT).stdout
            res.append(json.loads(out))
    return res


def solve_split(rules_name: str, options: list[str], repeat: int) -> dict:
    """CPU seconds of whole warm solves in one process (``jobs=1``, best of ``repeat``),
    split between the compiled kernels, the Python and NumPy around them (five of a
    kind's groups and ``turn_options``, the rest of a turn) and the levels' fill.

    >>> solve_split("yatzy", [], 1)["total"] > 0      # doctest: +SKIP
    True
    """
    from yahtzee_sim.exact import _solver_kernels as kernels
    from yahtzee_sim.exact import solver as S
    from yahtzee_sim.exact import space as SP

    S.solve(rules_name, options=options, cache=False, jobs=1)      # warm: kernels, state space
    spent: collections.Counter = collections.Counter()

    def timed(module, name, key):
        fn = getattr(module, name)

        def call(*a, **k):
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.process_time() - t0
        call.overloads = getattr(fn, "overloads", None)   # precompile() looks at them
        return fn, call

    patches = [(kernels, n, n) for n in kernels.KERNEL_NAMES] + [
        (SP, "_five_rows", "five of a kind with its Python"), (SP, "_turn_values_compiled", "turns"),
        (S, "_fill_level", "fill")]
    saved = []
    for module, name, key in patches:
        fn, call = timed(module, name, key)
        saved.append((module, name, fn))
        setattr(module, name, call)
    best: dict = {}
    try:
        for _ in range(repeat):
            spent.clear()
            t0 = time.process_time()
            S.solve(rules_name, options=options, cache=False, jobs=1)
            total = time.process_time() - t0
            if not best or total < best["total"]:
                best = dict(spent, total=total)
    finally:
        for module, name, fn in saved:
            setattr(module, name, fn)
    kern = sum(best[n] for n in kernels.KERNEL_NAMES)
    out = {k: round(float(best[k]), 3) for k in (*kernels.KERNEL_NAMES, "fill", "total")}
    out["five of a kind's Python"] = round(best["five of a kind with its Python"] - best["five_rows"], 3)
    out["rest of the turns' Python"] = round(best["turns"] - kern - out["five of a kind's Python"], 3)
    out["outside the turns and fill"] = round(best["total"] - best["turns"] - best["fill"], 3)
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="maxi-yatzy")
    p.add_argument("--option", action="append", default=None)
    p.add_argument("--level", type=int, default=10, help="boxes filled in the states solved")
    p.add_argument("--states", type=int, default=40_000)
    p.add_argument("--chunk", type=int, action="append", default=None,
                   help="states a call (repeatable; default: the solver's CHUNK)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--compile", type=int, default=0, metavar="N",
                   help="instead: each kernel's first compilation, CPU s, in N fresh processes")
    p.add_argument("--solve", type=int, default=0, metavar="N",
                   help="instead: whole warm solves of --rules in one process (best of N), CPU s split "
                        "between the kernels, the Python around them and the fill")
    args = p.parse_args(argv)
    if args.solve:
        options = args.option or []
        load0 = round(os.getloadavg()[0], 1)
        split = solve_split(args.rules, options, args.solve)
        split["load"] = f"{load0}-{round(os.getloadavg()[0], 1)}"
        print(json.dumps(split) if args.json else
              f"{args.rules} solve, one process, best of {args.solve}: " + ", ".join(f"{k} {v}" for k, v in split.items()))
        return 0
    if args.compile:
        load0 = round(os.getloadavg()[0], 1)
        runs = compile_seconds(args.compile)
        load = f"{load0}-{round(os.getloadavg()[0], 1)}"
        if args.json:
            print(json.dumps({"compile_cpu_s": runs, "load": load}))
        else:
            for r in runs:
                print("first compilation, CPU s: " + ", ".join(f"{k} {v}" for k, v in r.items())
                      + f"; sum {round(sum(r.values()), 2)}; load {load}")
        return 0
    options = args.option if args.option is not None else (["no-saved-throws"] if args.rules == "maxi-yatzy" else [])
    from yahtzee_sim.exact.solver import CHUNK

    res = measure(args.rules, options, args.level, args.states, args.chunk or [CHUNK])
    res["load"] = round(os.getloadavg()[0], 1)
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"{res['rules']}: level {res['level']} ({res['level_states']:,} states), {res['states']:,} solved; "
          f"state space and states built in {res['space_build_cpu_s']} CPU s; load {res['load']}")
    for chunk, r in res["chunks"].items():
        split = ", ".join(f"{k} {v}" for k, v in r["split"].items())
        print(f"  chunks of {chunk}: {r['us_per_state']} CPU us a state ({split})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
