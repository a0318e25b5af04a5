"""``yahtzee-sim distribution`` and ``yahtzee-sim head-to-head --exact``.

* ``distribution``: the exact distribution of a strategy's final score (mean, sd,
  percentiles, P(score >= x), the events users ask about), optionally every score's
  probability to a CSV file.
* ``head-to-head --exact``: 2 to 20 players at one table, each with its own
  strategy and its own dice (no strategy looks at another's card): exact P(win),
  P(tie for first), win share and rank distribution from their exact score
  distributions. Without ``--exact`` the table is simulated
  (:func:`~yahtzee_sim.multiplayer.simulate_table`: players take turns, ``play-to-win``
  watches the others, Generala's ``servida-wins`` applies).

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["distribution", "--strategy", "greedy", "--at-least", "250"])
>>> a.strategy, a.at_least
('greedy', [250])
>>> a = build_parser().parse_args(["head-to-head", "--exact", "--players", "optimal", "greedy"])
>>> a.players
['optimal', 'greedy']
"""

from __future__ import annotations

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def cmd_distribution(args) -> int:
    """Print the exact score distribution of one strategy."""
    from ._common import check_out_path, print_json, print_wrapped, progress_for, rules_from, rules_heading
    from ..exact.distribution import distribution
    from ..files import atomic_write

    rules = rules_from(args)
    out = check_out_path(args.out, (".csv",)) if args.out else None
    with progress_for(args) as progress:
        dist = distribution(rules, args.strategy, progress=progress)
    s = dist.summary()
    pct = {str(q): dist.percentile(q) for q in PERCENTILES}
    at_least = {str(x): dist.p_at_least(x) for x in args.at_least}
    if out is not None:
        with atomic_write(out, "w") as fh:
            dist.to_frame().to_csv(fh)
    if args.json:
        print_json(dict(s, rules=rules.key, options=list(rules.options), percentiles=pct,
                        p_at_least=at_least, pmf=dist.pmf.tolist() if args.pmf else None))
        return 0
    print(f"{rules_heading(rules)}: exact final-score distribution of {dist.strategy}")
    print(f"  expected score        {dist.mean:.4f}")
    print(f"  standard deviation    {dist.sd:.4f}")
    print(f"  lowest / highest      {dist.min_score} / {dist.max_score} (scores with positive probability)")
    print_wrapped("  percentiles           " + ", ".join(f"p{q} {v}" for q, v in pct.items()), hang=24)
    for x, p in at_least.items():
        print(f"  P(score >= {x})       {p:.6f}")
    # the events under simulate's names (yahtzee_sim.results: SimulationResult.events)
    from ..results import dice_word

    word = dice_word(rules.n_dice)
    if rules.upper_bonus:
        print(f"  P(upper bonus)        {dist.p_upper_bonus:.6f}")
    if rules.five_box is not None:
        label = next(b.label for b in rules.boxes if b.name == rules.five_box)
        served = int(rules.score_tables[0, :, rules.five_box_index].max())
        scored = f"{rules.five_box_points} in {label}" if served == rules.five_box_points else \
            f"{label} box scored: {rules.five_box_points}, or {served} served"
        print(f"  P({scored})  {dist.p_five_box_full:.6f}")
    print(f"  P({word} rolled at least once)  {dist.p_five_of_a_kind_rolled:.6f}")
    if rules.roll_dependent and rules.five_box is not None:
        print(f"  P({label} served at least once)  {dist.p_served_five:.6f} (made by a turn's first throw)")
    print(f"  turns ending in {word} (mean per game)  {dist.five_per_game:.6f}")
    if rules.five_bonus:
        pmf = dist.five_bonus_pmf
        print(f"  five-of-a-kind bonuses: mean {dist.expected_five_bonuses:.6f}; "
              + ", ".join(f"P({k}) {p:.3g}" for k, p in enumerate(pmf[:5])))
    print(f"  states visited        {dist.states:,}; {dist.seconds:.1f} s")
    if out is not None:
        print(f"  every score's probability written to {out}")
    return 0


def cmd_head_to_head(args) -> int:
    """Win odds of players at one table: exact (``--exact``) or simulated."""
    from ._common import print_json, print_table, print_wrapped, progress_for, rules_from, rules_heading
    from ..exact.winodds import MAX_PLAYERS

    players = list(args.players)
    if not 2 <= len(players) <= MAX_PLAYERS:
        raise ValueError(f"--players takes 2 to {MAX_PLAYERS} strategies, got {len(players)}")
    rules = rules_from(args)
    if args.exact:
        if args.games is not None:
            raise ValueError("--games is for simulated tables; --exact computes the odds exactly")
        return _exact_table(args, rules, players)
    from ..multiplayer import simulate_table
    from ..strategies.play_to_win import PlayToWin

    games = 10_000 if args.games is None else args.games
    seats = [PlayToWin(progress=not args.json) if p == "play-to-win" else p for p in players]
    with progress_for(args) as progress:
        res = simulate_table(rules, seats, games, seed=args.seed, progress=progress)
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
    from ..exact.distribution import distribution
    from ..exact.winodds import require_score_decides, win_odds

    require_score_decides(rules)
    if "play-to-win" in players:
        raise ValueError("play-to-win looks at the other players' cards, so its odds have no exact "
                         "form here; drop --exact to simulate the table")
    dists = {}
    with progress_for(args) as progress:
        for name in dict.fromkeys(players):          # each distinct strategy once
            dists[name] = distribution(rules, name, progress=progress)
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
    """Register the ``distribution`` and ``head-to-head`` subcommands."""
    from ._common import add_json_arg, add_rules_args, add_seed_arg, count_int

    p = sub.add_parser("distribution", help="exact distribution of a strategy's final score")
    add_rules_args(p)
    p.add_argument("--strategy", default="optimal",
                   help="a strategy whose decisions depend on the score card (default optimal)")
    p.add_argument("--at-least", type=int, action="append", default=[], metavar="X",
                   help="also print P(score >= X) (repeatable)")
    p.add_argument("--out", help="write every score's probability to this CSV file")
    p.add_argument("--pmf", action="store_true", help="with --json: include the whole PMF")
    add_json_arg(p)
    p.set_defaults(func=cmd_distribution)

    h = sub.add_parser("head-to-head", help="win odds of 2 to 20 players at one table, exact or simulated")
    add_rules_args(h)
    h.add_argument("--players", nargs="+", required=True, metavar="STRATEGY",
                   help="one strategy per seat (e.g. optimal greedy greedy; play-to-win watches the table)")
    h.add_argument("--exact", action="store_true", help="exact odds from the score distributions")
    h.add_argument("--games", type=count_int, help="simulated games (default 10000; not with --exact)")
    add_seed_arg(h)
    add_json_arg(h)
    h.set_defaults(func=cmd_head_to_head)
