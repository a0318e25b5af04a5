"""Benchmark the batch advisor (issue 10: at least 100,000 positions/s from Python).

Positions are drawn from every level's reachable states with random rolls and rolls
left; the table is solved (or loaded from the cache) before timing.

    .venv/bin/python benchmarks/bench_advise.py                    # yahtzee, 200,000 positions
    .venv/bin/python benchmarks/bench_advise.py --rules yatzy --positions 100000
"""

from __future__ import annotations

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main(argv=None) -> int:
    import numpy as np

    from yahtzee_sim.exact.advisor import advise, advise_batch
    from yahtzee_sim.exact.policy import reachable_states
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.rules import get_rules

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="yahtzee")
    p.add_argument("--positions", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=2)
    args = p.parse_args(argv)
    rules = get_rules(args.rules)
    sol = solve(rules)
    rng = np.random.default_rng(0)
    states = [reachable_states(rules, lv) for lv in range(rules.n_boxes)]
    level = rng.integers(0, rules.n_boxes, args.positions)
    pick = np.array([rng.integers(len(states[lv][0])) for lv in level])
    mask, u, flag = (np.array([states[lv][j][i] for lv, i in zip(level, pick)]) for j in range(3))
    filled = ((mask[:, None] >> np.arange(rules.n_boxes)) & 1).astype(bool)
    rolls = rng.integers(0, rules.dice.n_rolls, args.positions)
    left = rng.integers(0, rules.n_rolls, args.positions)
    best = None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        advise_batch(rules, rolls, rolls_left=left, filled=filled, upper=u, five_box_full=flag.astype(bool),
                     solution=sol)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    t0 = time.perf_counter()
    k = 200
    for i in range(k):
        advise(rules, rules.dice.roll_dice[rolls[i]].tolist(), rolls_left=int(left[i]), filled=[],
               solution=sol)
    one = (time.perf_counter() - t0) / k
    print(f"{rules.key}: advise_batch {args.positions:,} positions in {best:.2f} s = "
          f"{args.positions / best:,.0f} positions/s (best of {args.repeats}); "
          f"advise() one at a time {1 / one:,.0f} positions/s; ratio {one * args.positions / best:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
