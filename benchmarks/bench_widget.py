"""CPU seconds of the keep/roll widget (``yahtzee_sim.exact.widget``) and of its users:
one plan of 8,192 positions (the compiled loops), of 200 and of one (numpy), greedy and
heuristic play (``yahtzee`` and Maxi Yatzy's six dice), and the turn chains of
``exact/turns.py`` (``best_turn_odds`` and the optimal ``expected_rolls``).

Every figure is the CPU time of this process and its children (wall time beside it),
after a warm-up that loads numba and builds the tables. With ``--against TREE`` each
round runs this script once on this tree and once on TREE (another checkout of the
project, put first on ``PYTHONPATH``), alternating, so the two are compared under the
same load; the best round of each is printed with their ratio.

    .venv/bin/python benchmarks/bench_widget.py --games 20000
    .venv/bin/python benchmarks/bench_widget.py --games 20000 --repeat 3 --against ../main-before
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def measure(games: int) -> dict:
    """{what: [CPU seconds, wall seconds]} in this process (the tree it imports)."""
    import warnings

    import numpy as np

    warnings.simplefilter("ignore", DeprecationWarning)
    from yahtzee_sim import simulate
    from yahtzee_sim.dice import dice_tables
    from yahtzee_sim.exact import turns, widget
    from yahtzee_sim.rules import get_rules

    out = {}

    def timed(what, work, reps=1):
        c0, w0 = _cpu(), time.perf_counter()
        for _ in range(reps):
            work()
        out[what] = [round(_cpu() - c0, 3), round(time.perf_counter() - w0, 3)]

    d = dice_tables()
    for strategy in ("greedy", "heuristic"):                  # warm: numba, tables
        simulate("yahtzee", strategy, 300, seed=0)
    widget.best_keeps(d, np.random.default_rng(0).random((512, d.n_rolls)), 2)
    finals = np.random.default_rng(1).random((8192, d.n_rolls))
    timed("best_keeps, 8,192 positions x 2 rerolls (compiled), 50 times",
          lambda: widget.best_keeps(d, finals, 2), 50)
    timed("best_keeps, 200 positions x 2 rerolls (numpy), 100 times",
          lambda: widget.best_keeps(d, finals[:200], 2), 100)
    timed("best_keeps, one position x 2 rerolls (numpy: the advisor's and the turn chains' size), 2,000 times",
          lambda: widget.best_keeps(d, finals[:1], 2), 2000)
    for rules, n in (("yahtzee", games), ("maxi-yatzy", games // 4)):
        for strategy in ("greedy", "heuristic"):
            timed(f"{strategy} {rules}, {n:,} games",
                  lambda rules=rules, strategy=strategy, n=n: simulate(rules, strategy, n, seed=1))

    def chains():
        for name, other in (("yahtzee", "large_straight"), ("maxi-yatzy", "full_house")):
            turns.pattern_keep_tables.cache_clear()
            r = get_rules(name)
            turns.best_turn_odds(r)
            for pattern in ("five_of_a_kind", other):
                turns.expected_rolls(r, "optimal", pattern=pattern)

    timed("turn chains (yahtzee, maxi-yatzy: best_turn_odds, optimal expected_rolls), 5 times", chains, 5)
    return out


def _child(tree: Path, games: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run([sys.executable, __file__, "--child", "--games", str(games)], env=env,
                          check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20000, help="yahtzee games per strategy (Maxi Yatzy: a quarter)")
    p.add_argument("--repeat", type=int, default=1, help="rounds (the best of each is printed)")
    p.add_argument("--against", type=Path, help="another checkout, measured alternately in the same rounds")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.games < 4 or args.repeat < 1:
        p.error("--games must be at least 4 and --repeat positive")
    if args.child:
        print(json.dumps(measure(args.games)))
        return 0
    trees = {"this tree": ROOT} | ({f"{args.against}": args.against.resolve()} if args.against else {})
    best: dict = {name: {} for name in trees}
    for _ in range(args.repeat):
        for name, tree in trees.items():
            for what, (cpu, wall) in _child(tree, args.games).items():
                old = best[name].get(what)
                best[name][what] = [cpu, wall] if old is None or cpu < old[0] else old
    load = os.getloadavg()[0]
    print(f"CPU seconds (wall), best of {args.repeat}; load average now {load:.1f}")
    for what in best["this tree"]:
        row = [f"{best[name][what][0]:.3f} ({best[name][what][1]:.2f})" for name in trees]
        ratio = ""
        if args.against:
            a, b = (best[name][what][0] for name in trees)
            ratio = f"  this / other: {a / b:.2f}" if b > 0 else ""
        print(f"{what}: " + " | ".join(row) + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
