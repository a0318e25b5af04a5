"""How much does playing to win gain? ``play-to-win`` against 1, 3 and 9 optimal players.

For each table size, plays ``--games`` games (seeded, in chunks of ``--chunk`` games
with seeds spawned from ``--seed``; :func:`yahtzee_sim.multiplayer.seat_gain`) of one
play-to-win player in seat 1 against n optimal players, and the same games with
``optimal`` in seat 1. Every seat has its
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
import sys


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
    from yahtzee_sim.multiplayer import PlayToWin, seat_gain

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
        def show(done, total, k=k):
            print(f"  {k} opponents: {done:,} of {total:,} games", file=sys.stderr, flush=True)

        g = seat_gain(args.rules, player, "optimal", k, n, seed=args.seed, chunk=args.chunk, progress=show)
        exact = win_odds([opt] * (k + 1))
        print(f"| {k} | {n:,} | {g['p_win']:.4f} ({g['p_win_low']:.4f} to {g['p_win_high']:.4f}) | "
              f"{g['win_share']:.4f} ({g['win_share_low']:.4f} to {g['win_share_high']:.4f}) | {g['gain']:+.4f} "
              f"({g['gain_low']:+.4f} to {g['gain_high']:+.4f}) | {exact.p_win[0]:.4f} | "
              f"{exact.win_share[0]:.4f} | {g['mean_score']:.2f} / {g['baseline_mean_score']:.2f} | "
              f"{n / g['seconds']:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
