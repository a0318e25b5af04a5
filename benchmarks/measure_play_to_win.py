"""How much does playing to win gain? ``play-to-win`` against 1, 3 and 9 optimal players.

For each table size, plays games (seeded, in chunks of ``--chunk`` games with seeds
spawned from ``--seed``; :func:`yahtzee_sim.multiplayer.seat_gain`, on ``--jobs``
worker processes) of one play-to-win player against n optimal players, split evenly
over its seats (``--seat`` plays one seat only), and the same games with ``optimal``
in its seat. Every seat has its own dice tape and the optimal opponents do not look
at the table, so both runs see the same dice and the opponents score exactly the
same: the difference in the player's win share (ties split) is a paired comparison,
with a much tighter interval than either rate alone.

Prints per table size and seat, and for all seats together: play-to-win's P(win)
with its 95% Wilson interval, its win share with a 95% interval, the paired gain in
win share over optimal in the same seat with its 95% interval, optimal's exact
P(win) and win share in its place (from the exact score distribution,
:mod:`yahtzee_sim.exact.winodds`), mean scores, and games per second: paired games
(both line-ups) per second of wall clock, and the play-to-win tables alone per second
of one worker. The issue's goal: a win share above 50.5% against one opponent, over
10^7 games.

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
    ap.add_argument("--chunk", type=int, default=1 << 15)
    ap.add_argument("--opponents", default="1,3,9")
    ap.add_argument("--seat", default="every", help="the player's seat (0 plays first), or 'every'")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--thetas", default=None, help="PlayToWin's thetas, comma-separated (default: its own)")
    ap.add_argument("--endgame", type=int, default=None, help="PlayToWin's target-table turns (default: its own)")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args(argv)
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.winodds import win_odds
    from yahtzee_sim.multiplayer import seat_gain
    from yahtzee_sim.strategies.play_to_win import THETAS, PlayToWin

    kwargs = {} if args.endgame is None else {"endgame": args.endgame}
    player = PlayToWin(THETAS if args.thetas is None else [float(t) for t in args.thetas.split(",")], **kwargs)
    seat = args.seat if args.seat == "every" else int(args.seat)
    opt = distribution(args.rules, "optimal", cache=True)
    print(f"{args.rules}: play-to-win (thetas {', '.join(f'{t:g}' for t in player.thetas)}; last "
          f"{player.endgame} turns by the target tables) against n optimal players (seed {args.seed}, chunks of "
          f"{args.chunk:,}, {args.jobs} worker(s), seats: {args.seat})")
    print("| opponents | seat (1 plays first) | games | P(win) play-to-win (95% CI) | win share play-to-win (95% CI) | "
          "gain in win share over optimal, paired (95% CI) | exact P(win), optimal in its place | "
          "exact win share | mean score play-to-win / optimal | paired games/s (wall) | "
          "play-to-win games/s (one worker) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for k in (int(x) for x in args.opponents.split(",")):
        n = int(args.games if k == 1 else args.games_many)

        def show(done, total, k=k):
            print(f"  {k} opponents: {done:,} of {total:,} games", file=sys.stderr, flush=True)

        t0 = time.perf_counter()
        g = seat_gain(args.rules, player, "optimal", k, n, seed=args.seed, chunk=args.chunk, jobs=args.jobs,
                      seat=seat, progress=show)
        wall = time.perf_counter() - t0
        exact = win_odds([opt] * (k + 1))
        rows = [(str(s["seat"] + 1), s) for s in g["by_seat"]] if len(g["by_seat"]) > 1 else []
        rows.append(("all" if seat == "every" else str(seat + 1), g))
        for label, r in rows:
            speed = (f"{n / wall:,.0f} | {n / g['seconds']:,.0f}" if r is g else " | ")
            print(f"| {k} | {label} | {r['games']:,} | {r['p_win']:.4f} ({r['p_win_low']:.4f} to "
                  f"{r['p_win_high']:.4f}) | {r['win_share']:.4f} ({r['win_share_low']:.4f} to "
                  f"{r['win_share_high']:.4f}) | {r['gain']:+.4f} ({r['gain_low']:+.4f} to {r['gain_high']:+.4f}) | "
                  f"{exact.p_win[0]:.4f} | {exact.win_share[0]:.4f} | {r['mean_score']:.2f} / "
                  f"{r['baseline_mean_score']:.2f} | {speed} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
