"""Mean score of each strategy on each rule set, with 95% confidence intervals.

    .venv/bin/python benchmarks/strategy_means.py                    # 200,000 games each
    .venv/bin/python benchmarks/strategy_means.py --games 20000 --rules yahtzee --rules yatzy

All strategies of a rule set play with the same seed (common random numbers), so
the paired differences printed last are much sharper than the separate intervals.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy import stats

from yahtzee_sim import rule_names, simulate, strategy_names


def paired_ci(a: np.ndarray, b: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a - b`` and its t confidence interval.

    >>> m, lo, hi = paired_ci(np.array([3, 4, 5]), np.array([1, 2, 3]))
    >>> m, lo, hi
    (2.0, 2.0, 2.0)
    """
    d = a.astype(np.float64) - b.astype(np.float64)
    half = stats.t.ppf(0.5 + level / 2, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean()), float(d.mean() - half), float(d.mean() + half)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=200_000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--rules", action="append", help="rule sets (default: all)")
    p.add_argument("--option", action="append", default=[], help="options for every rule set")
    p.add_argument("--strategy", action="append", help="strategies (default: all but 'optimal')")
    args = p.parse_args(argv)
    names = args.strategy or [s for s in strategy_names() if s != "optimal"]
    print(f"{args.games:,} games per cell, seed {args.seed}")
    print(f"{'rules':<24}{'strategy':<14}{'mean':>9}{'95% CI':>20}{'bonus%':>8}{'50 in 5-box%':>14}{'s':>7}")
    for rules in args.rules or rule_names():
        totals = {}
        for name in names:
            start = time.perf_counter()
            res = simulate(rules, name, args.games, seed=args.seed, options=args.option, progress=True)
            s = res.summary()
            totals[name] = res.games["total"]
            ci = f"[{s['ci95_low']:.2f}, {s['ci95_high']:.2f}]"
            print(f"{rules:<24}{name:<14}{s['mean']:>9.2f}{ci:>20}{100 * res.rate('upper_bonus'):>8.1f}"
                  f"{100 * res.rate('five_box_full'):>14.1f}{time.perf_counter() - start:>7.1f}", flush=True)
        for better, worse in zip(names[1:], names[:-1]):
            m, lo, hi = paired_ci(totals[better], totals[worse])
            print(f"{'':<24}{better} - {worse}: {m:.2f} [{lo:.2f}, {hi:.2f}] (paired)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
