"""How much does playing to win gain? ``play-to-win`` against 1, 3 and 9 optimal players.

For each table size, plays ``--games`` games (seeded, in chunks of ``--chunk`` games
with seeds spawned from ``--seed``) of one play-to-win player in seat 1 against n
optimal players, and the same games with ``optimal`` in seat 1. Every seat has its
own dice tape and the optimal opponents do not look at the table, so both runs see
the same dice and the opponents score exactly the same: the difference in seat 1's
win share (ties split) is a paired comparison, with a much tighter interval than
either rate alone.

Prints per table size: play-to-win's P(win) with its 95% Wilson interval, its win
share with a 95% interval, the paired gain in win share over optimal in the same
seat with its 95% interval, optimal's exact P(win) and win share in that seat (from
the exact score distribution, :mod:`yahtzee_sim.exact.winodds`), mean scores, and
games per second of the play-to-win table. The issue's goal: above 50.5% against
one opponent (10^7 games).

    .venv/bin/python benchmarks/measure_play_to_win.py --games 1e5 --opponents 1,3,9
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np


def win_share(totals: np.ndarray) -> np.ndarray:
    """Seat 1's share of each game's win (a tie for first split evenly)."""
    top = totals == totals.max(axis=1, keepdims=True)
    return top[:, 0] / top.sum(axis=1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="yahtzee")
    ap.add_argument("--games", type=float, default=1e5)
    ap.add_argument("--chunk", type=int, default=16384)
    ap.add_argument("--opponents", default="1,3,9")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.winodds import win_odds
    from yahtzee_sim.multiplayer import PlayToWin, simulate_table
    from yahtzee_sim.stats import proportion_ci

    n = int(args.games)
    player = PlayToWin()
    opt = distribution(args.rules, "optimal", cache=True)
    print(f"{args.rules}: play-to-win against n optimal players, {n:,} games each (seed {args.seed}, "
          f"chunks of {args.chunk:,})")
    print("| opponents | games | P(win) play-to-win (95% CI) | win share play-to-win (95% CI) | "
          "gain in win share over optimal, paired (95% CI) | exact P(win), optimal in that seat | "
          "exact win share | mean score play-to-win / optimal | games/s play-to-win |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.opponents.split(",")):
        wins, shares, diffs, means = 0, [], [], [[], []]
        secs = 0.0
        done = 0
        for i, lo in enumerate(range(0, n, args.chunk)):
            m = min(args.chunk, n - lo)
            seed = int(np.random.SeedSequence(args.seed, spawn_key=(k, i)).generate_state(1)[0])
            t0 = time.perf_counter()
            res = simulate_table(args.rules, [player] + ["optimal"] * k, m, seed=seed)
            secs += time.perf_counter() - t0
            base = simulate_table(args.rules, ["optimal"] * (k + 1), m, seed=seed)
            if not (res.totals[:, 1:] == base.totals[:, 1:]).all():
                raise RuntimeError("the opponents' games differ between the paired runs")
            wins += int(res.outcomes()[0][:, 0].sum())
            s, b = win_share(res.totals), win_share(base.totals)
            shares.append(s)
            diffs.append(s - b)
            means[0].append(res.totals[:, 0])
            means[1].append(base.totals[:, 0])
            done += m
            print(f"  {k} opponents: {done:,} of {n:,} games, gain so far {np.concatenate(diffs).mean():+.4f}",
                  file=sys.stderr, flush=True)
        share, diff = np.concatenate(shares), np.concatenate(diffs)
        ci = proportion_ci(wins, n)
        half = lambda x: 1.96 * x.std(ddof=1) / math.sqrt(len(x))
        exact = win_odds([opt] * (k + 1))
        print(f"| {k} | {n:,} | {wins / n:.4f} ({ci.low:.4f} to {ci.high:.4f}) | {share.mean():.4f} "
              f"({share.mean() - half(share):.4f} to {share.mean() + half(share):.4f}) | {diff.mean():+.4f} "
              f"({diff.mean() - half(diff):+.4f} to {diff.mean() + half(diff):+.4f}) | {exact.p_win[0]:.4f} | "
              f"{exact.win_share[0]:.4f} | {np.concatenate(means[0]).mean():.2f} / "
              f"{np.concatenate(means[1]).mean():.2f} | {n / secs:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
