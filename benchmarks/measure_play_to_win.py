"""How much does playing to win gain? ``play-to-win`` against 1, 3 and 9 optimal players.

For each table size, plays games (seeded, in chunks of ``--chunk`` games with seeds
spawned from ``--seed``; :func:`yahtzee_sim.multiplayer.seat_gain`, on ``--jobs``
worker processes) of one play-to-win player in seat 1 against n optimal players, and
the same games with ``optimal`` in seat 1. Every seat has its own dice tape and the
optimal opponents do not look at the table, so both runs see the same dice and the
opponents score exactly the same: the difference in seat 1's win share (ties split)
is a paired comparison, with a much tighter interval than either rate alone.

Prints per table size: play-to-win's P(win) with its 95% Wilson interval, its win
share with a 95% interval, the paired gain in win share over optimal in the same
seat with its 95% interval, optimal's exact P(win) and win share in that seat (from
the exact score distribution, :mod:`yahtzee_sim.exact.winodds`), mean scores, and
games per second: paired games (both line-ups) per second of wall clock, and the
play-to-win tables alone per second of one worker. The issue's goal: a win share
above 50.5% against one opponent, over 10^7 games.

    .venv/bin/python benchmarks/measure_play_to_win.py --games 1e7 --games-many 1e6 --jobs 2
"""

from __future__ import annotations

import argparse
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rules", default="yahtzee")
    ap.add_argument("--games", type=float, default=1e7, help="games against one opponent")
    ap.add_argument("--games-many", type=float, default=1e6, help="games against more than one")
    ap.add_argument("--chunk", type=int, default=1 << 17)
    ap.add_argument("--opponents", default="1,3,9")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--thetas", default=None, help="PlayToWin's thetas, comma-separated (default: its own)")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.winodds import win_odds
    from yahtzee_sim.multiplayer import PlayToWin, seat_gain

    player = PlayToWin() if args.thetas is None else PlayToWin([float(t) for t in args.thetas.split(",")])
    opt = distribution(args.rules, "optimal", cache=True)
    print(f"{args.rules}: play-to-win (thetas {', '.join(f'{t:g}' for t in player.thetas)}) against n optimal players (seed {args.seed}, chunks of {args.chunk:,}, "
          f"{args.jobs} worker(s))")
    print("| opponents | games | P(win) play-to-win (95% CI) | win share play-to-win (95% CI) | "
          "gain in win share over optimal, paired (95% CI) | exact P(win), optimal in that seat | "
          "exact win share | mean score play-to-win / optimal | paired games/s (wall) | "
          "play-to-win games/s (one worker) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.opponents.split(",")):
        n = int(args.games if k == 1 else args.games_many)

        def show(done, total, k=k):
            print(f"  {k} opponents: {done:,} of {total:,} games", file=sys.stderr, flush=True)

        t0 = time.perf_counter()
        g = seat_gain(args.rules, player, "optimal", k, n, seed=args.seed, chunk=args.chunk, jobs=args.jobs,
                      progress=show)
        wall = time.perf_counter() - t0
        exact = win_odds([opt] * (k + 1))
        print(f"| {k} | {n:,} | {g['p_win']:.4f} ({g['p_win_low']:.4f} to {g['p_win_high']:.4f}) | "
              f"{g['win_share']:.4f} ({g['win_share_low']:.4f} to {g['win_share_high']:.4f}) | {g['gain']:+.4f} "
              f"({g['gain_low']:+.4f} to {g['gain_high']:+.4f}) | {exact.p_win[0]:.4f} | "
              f"{exact.win_share[0]:.4f} | {g['mean_score']:.2f} / {g['baseline_mean_score']:.2f} | "
              f"{n / wall:,.0f} | {n / g['seconds']:,.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
