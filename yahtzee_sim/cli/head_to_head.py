"""``yahtzee-sim head-to-head``: 2 to 20 players at one table.

With ``--exact``, each player has its own strategy and its own dice (no strategy looks
at another's card): exact P(win), P(tie for first), win share and rank distribution
from their exact score distributions. Without ``--exact`` the table is simulated
(:func:`~yahtzee_sim.multiplayer.simulate_table`: players take turns, ``play-to-win``
watches the others, Generala's ``servida-wins`` applies) through the runner, as
``simulate`` is: ``--backend``, ``--jobs``, ``--scheduler``, ``--checkpoint`` (rerun the
same command to resume), and memory that does not grow with ``--games`` (the odds come
from the exact per-chunk tallies, not from kept games).

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["head-to-head", "--exact", "--players", "optimal", "greedy"])
>>> a.players
['optimal', 'greedy']
"""

from __future__ import annotations


def cmd_head_to_head(args) -> int:
    """Win odds of players at one table: exact (``--exact``) or simulated."""
    from ._common import print_json, print_table, print_wrapped, progress_for, rules_from, rules_heading, run_kwargs
    from ..exact.winodds import MAX_PLAYERS

    players = list(args.players)
    if not 2 <= len(players) <= MAX_PLAYERS:
        raise ValueError(f"--players takes 2 to {MAX_PLAYERS} strategies, got {len(players)}")
    rules = rules_from(args)
    if args.exact:
        if args.games is not None:
            raise ValueError("--games is for simulated tables; --exact computes the odds exactly")
        given = [f"--{k}" for k, v in run_kwargs(args).items() if v != (None if k != "backend" else "serial")]
        if given:
            raise ValueError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for simulated tables; "
                             "--exact computes the odds exactly (drop --exact to simulate)")
        return _exact_table(args, rules, players)
    from ..multiplayer import simulate_table
    from ..strategies.play_to_win import PlayToWin

    games = 10_000 if args.games is None else args.games
    seats = [PlayToWin(progress=not args.json) if p == "play-to-win" else p for p in players]
    with progress_for(args) as progress:
        # keep_games=False: the printed odds come from the run's exact tallies, so memory
        # stays bounded however many games are asked for (and a checkpoint can hold them)
        res = simulate_table(rules, seats, games, seed=args.seed, progress=progress, keep_games=False,
                             batch=args.batch, **run_kwargs(args))
    frame = res.to_frame()
    frame.insert(0, "strategy", players)
    if args.json:
        rows = frame.reset_index().to_dict(orient="records")
        print_json({"rules": rules.key, "options": list(rules.options), "method": "simulated",
                    "games": games, "seed": res.seed, "players": rows})
        return 0
    print(f"{rules_heading(rules)}: {len(players)} players at one table, {games:,} simulated games "
          f"(seed {res.seed})")
    print_table(frame.drop(columns="strategy"), float_format=lambda v: f"{v:.4f}")
    print_wrapped("p_win: sole highest score (or a servida under servida-wins), with its 95% interval "
                  "(p_win_low to p_win_high); p_tie: level on the highest score with another player; "
                  "exact odds of players that do not look at each other: --exact")
    return 0


def _exact_table(args, rules, players) -> int:
    from ._common import print_json, print_table, print_wrapped, progress_for, rules_heading
    from ..exact.distribution import DistributionsBeside
    from ..exact.winodds import require_score_decides, win_odds

    require_score_decides(rules)
    if "play-to-win" in players:
        raise ValueError("play-to-win looks at the other players' cards, so its odds have no exact "
                         "form here; drop --exact to simulate the table")
    dists = {}
    # each distinct strategy once: optimal's here, the others beside it, in the disk cache
    with progress_for(args) as progress, DistributionsBeside(rules, players) as computing:
        for name in dict.fromkeys(players):
            dists[name] = computing.get(name, progress=progress)
    names = [f"{p} (seat {i + 1})" for i, p in enumerate(players)]
    odds = win_odds([dists[p] for p in players], names=names)
    if args.json:
        out = odds.summary()
        for row, p in zip(out["players"], players):
            row["strategy"] = p
        print_json(dict(out, rules=rules.key, options=list(rules.options), method="exact"))
        return 0
    print(f"{rules_heading(rules)}: {len(players)} players, independent games, exact")
    frame = odds.to_frame()[["mean_score", "p_win", "p_tie", "win_share", "expected_rank"]]
    print_table(frame, float_format=lambda v: f"{v:.6f}")
    print_wrapped("p_win: sole highest score; p_tie: level on the highest score with another player; "
                  "win_share: a tie for first split evenly; expected_rank: 1 = first (ties share the better rank)")
    return 0


def add_commands(sub) -> None:
    """Register the ``head-to-head`` subcommand."""
    from ._common import add_command, add_json_arg, add_run_args, add_seed_arg, count_int, positive_int
    from ..engine import SEED_BLOCK

    h = add_command(sub, "head-to-head", "win odds of 2 to 20 players at one table, exact or simulated",
                    cmd_head_to_head, rules=True)
    h.add_argument("--players", nargs="+", required=True, metavar="STRATEGY",
                   help="one strategy per seat (e.g. optimal greedy greedy; play-to-win watches the table)")
    h.add_argument("--exact", action="store_true", help="exact odds from the score distributions")
    h.add_argument("--games", type=count_int, help="simulated games (default 10000; not with --exact)")
    add_seed_arg(h)
    h.add_argument("--batch", type=positive_int, default=16 * SEED_BLOCK,
                   help="games played at once, a checkpoint's step (results do not depend on it)")
    add_json_arg(h)
    add_run_args(h)
