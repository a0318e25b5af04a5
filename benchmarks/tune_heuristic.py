"""Tune the knobs of the ``heuristic`` strategy by simulation (coordinate search).

Every candidate plays the same games (same seed: common random numbers), so
differences between candidates are paired and far less noisy than their means.

    .venv/bin/python benchmarks/tune_heuristic.py --games 20000 --rounds 3
    .venv/bin/python benchmarks/tune_heuristic.py --rules balut --objective points \
        --knob total_throws --knob full_rate --knob each_rate --games 4000 --rounds 1

``--objective points`` tunes for the mean points (Balut is won on points); whole-number
knobs (throws) move by whole steps.

Prints each improvement and the final knobs; copy them into
``yahtzee_sim/strategies/heuristic.py`` (``HeuristicStrategy``) by hand.
"""

from __future__ import annotations

import argparse
import sys

from yahtzee_sim import simulate
from yahtzee_sim.strategies.heuristic import HeuristicStrategy

KNOBS = {  # name: (initial step, lower bound, upper bound)
    "reserve_upper": (0.25, 0.0, 3.0),
    "reserve_lower": (0.25, 0.0, 3.0),
    "reserve_chance": (0.25, 0.0, 3.0),
    "five_rate": (0.25, 0.0, 3.0),
    "upper_rolls": (0.5, 2.0, 9.0),
    "total_throws": (1, 2, 9),      # whole numbers (Balut's and Yamb's goals only)
    "full_rate": (0.125, 0.0, 2.0),  # Balut only
    "each_rate": (0.25, 0.0, 4.0),  # Balut only
}
OBJECTIVES = {"mean": "mean", "points": "points_mean"}   # --objective: summary() field


def score(knobs: dict, rules: str, games: int, seed: int, objective: str = "mean") -> float:
    """Mean score (or mean points, ``objective="points"``) of the heuristic with ``knobs``
    over ``games`` games of ``rules``.

    >>> score({}, "yahtzee", 2048, 1) > 150
    True
    """
    strat = type("Tuned", (HeuristicStrategy,), dict(knobs))()
    return float(simulate(rules, strat, games, seed=seed).summary()[OBJECTIVES[objective]])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default="yahtzee")
    p.add_argument("--games", type=int, default=20000)
    p.add_argument("--seed", type=int, default=12345)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--knob", action="append", choices=list(KNOBS), help="tune only these knobs")
    p.add_argument("--objective", choices=list(OBJECTIVES), default="mean",
                   help="mean score, or mean points (Balut)")
    args = p.parse_args(argv)
    names = args.knob or list(KNOBS)
    knobs = {k: getattr(HeuristicStrategy, k) for k in KNOBS}
    steps = {k: KNOBS[k][0] for k in names}
    best = score(knobs, args.rules, args.games, args.seed, args.objective)
    print(f"start {best:.3f} {knobs}", flush=True)
    for rnd in range(args.rounds):
        for k in names:
            lo, hi = KNOBS[k][1:]
            improved = True
            while improved:
                improved = False
                for sign in (+1, -1):
                    trial = dict(knobs)
                    trial[k] = round(min(hi, max(lo, knobs[k] + sign * steps[k])), 4)
                    if trial[k] == knobs[k]:
                        continue
                    s = score(trial, args.rules, args.games, args.seed, args.objective)
                    if s > best:
                        best, knobs, improved = s, trial, True
                        print(f"  {best:.3f} {k}={trial[k]}", flush=True)
                        break
        for k in names:
            steps[k] = max(1, steps[k] // 2) if isinstance(KNOBS[k][0], int) else steps[k] / 2
        print(f"round {rnd + 1}: {best:.3f} {knobs}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
