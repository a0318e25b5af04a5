"""The core subcommands: ``rules``, ``strategies``, ``score``, ``simulate``, ``turns``.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["simulate", "--games", "1e6"]).games
1000000
"""

from __future__ import annotations

from ._common import (UsageError, add_rules_args, add_run_args, check_out_path, parse_dice, positive_int,
                      print_json, rules_from, run_kwargs, seed_int, write_frame_atomically)


def cmd_rules(args) -> int:
    import pandas as pd

    from ..rules import REGISTRY, get_rules

    rows = []
    for name, spec in REGISTRY.items():
        r = get_rules(name)
        rows.append({"name": name, "boxes": r.n_boxes, "summary": spec.summary,
                     "options": ", ".join(spec.options) or "-"})
    if args.json:
        print_json({name: {"summary": spec.summary, "boxes": list(get_rules(name).box_names),
                           "options": spec.options} for name, spec in REGISTRY.items()})
        return 0
    print(pd.DataFrame(rows).to_string(index=False))
    print()
    for name, spec in REGISTRY.items():
        for opt, text in spec.options.items():
            print(f"  {name} --option {opt}: {text}")
    return 0


def cmd_strategies(args) -> int:
    import pandas as pd

    from ..strategies import STRATEGIES

    if args.json:
        print_json({n: c.description for n, c in STRATEGIES.items()})
        return 0
    print(pd.DataFrame([{"name": n, "description": c.description} for n, c in STRATEGIES.items()])
          .to_string(index=False))
    return 0


def cmd_score(args) -> int:
    import pandas as pd

    rules = rules_from(args)
    if args.all == (args.dice is not None):
        raise UsageError("give either --dice (e.g. --dice 33355) or --all")
    if args.all:
        d = rules.dice
        frame = pd.DataFrame(rules.score_table, columns=list(rules.box_names))
        frame.insert(0, "dice", ["".join(map(str, row)) for row in d.roll_dice])
        frame.insert(1, "probability", d.first_roll_prob)
        if args.json:
            print_json({"rules": rules.key, "rolls": frame.to_dict(orient="records")})
        else:
            print(frame.to_string(index=False))
        return 0
    dice = parse_dice(args.dice, rules.n_dice, rules.n_faces)
    scores = rules.score_dice(dice)
    if args.json:
        print_json({"rules": rules.key, "dice": dice, "scores": scores})
    else:
        labels = {b.name: b.label for b in rules.boxes}
        print(f"{rules.title} ({rules.key}), dice {' '.join(map(str, dice))}, fresh card")
        print(pd.DataFrame({"box": [labels[n] for n in scores], "name": list(scores),
                            "points": list(scores.values())}).to_string(index=False))
    return 0


def _summary_json(res, options) -> dict:
    s = res.summary()
    return {
        "rules": res.rules.name, "options": list(options), "strategy": res.strategy,
        "games": s["games"], "seed": s["seed"], "mean": s["mean"], "sd": s["sd"], "se": s["se"],
        "ci95": [s["ci95_low"], s["ci95_high"]], "min": s["min"], "max": s["max"],
        "percentiles": {f"p{p}": s[f"p{p}"] for p in (1, 5, 25, 50, 75, 95, 99)},
        "upper_bonus_rate": s["upper_bonus_rate"], "yahtzee_box_50_rate": s["five_box_50_rate"],
        "five_per_game": s["five_per_game"], "seconds": s["seconds"],
    }


def cmd_simulate(args) -> int:
    import pandas as pd

    from ..api import simulate

    rules = rules_from(args)
    from ..strategies import get_strategy

    strategy = get_strategy(args.strategy)
    out = check_out_path(args.out, (".csv", ".parquet")) if args.out else None

    res = simulate(rules, strategy, args.games, seed=args.seed, batch=args.batch,
                   keep_games=out is not None or None, progress=not args.json, **run_kwargs(args))
    if out is not None:
        write_frame_atomically(res.to_frame(), out)
    if args.json:
        print_json(_summary_json(res, rules.options))
        return 0
    s = res.summary()
    print(f"{rules.title} ({rules.key}) under {res.strategy}: {s['games']:,} games, seed {s['seed']}")
    rows = [
        ("mean", f"{s['mean']:.3f}"), ("sd", f"{s['sd']:.3f}"), ("standard error", f"{s['se']:.4f}"),
        ("95% CI of the mean", f"{s['ci95_low']:.3f} .. {s['ci95_high']:.3f}"),
        ("min", s["min"]), *[(f"p{p}", s[f"p{p}"]) for p in (1, 5, 25, 50, 75, 95, 99)], ("max", s["max"]),
        ("upper bonus rate", f"{s['upper_bonus_rate']:.4f}"),
        (f"games with 50 in {rules.five_box or 'five box'}", f"{s['five_box_50_rate']:.4f}"),
        ("five of a kind per game", f"{s['five_per_game']:.4f}"),
        ("seconds", f"{s['seconds']:.2f}"),
    ]
    print(pd.DataFrame(rows, columns=["statistic", "value"]).to_string(index=False))
    if out is not None:
        print(f"per-game table written to {out}")
    return 0


def cmd_turns(args) -> int:
    from ..api import simulate_turns

    rules = rules_from(args)
    from ..strategies import get_strategy

    res = simulate_turns(rules, get_strategy(args.strategy), args.turns, seed=args.seed,
                         progress=not args.json, target=args.target, **run_kwargs(args))
    frame = res.to_frame()
    if args.json:
        print_json({"rules": rules.name, "options": list(rules.options), "strategy": res.strategy,
                    "target": args.target, "turns": res.n_turns, "seed": res.seed, "seconds": res.seconds,
                    "patterns": frame.reset_index().to_dict(orient="records")})
        return 0
    print(f"{rules.title} ({rules.key}): {res.n_turns:,} single turns under {res.strategy}, seed {res.seed}")
    print(frame.to_string(float_format=lambda v: f"{v:.6f}"))
    return 0


def add_commands(sub) -> None:
    from ..strategies import strategy_names

    p = sub.add_parser("rules", help="list rule sets and their options")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser("strategies", help="list strategies")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("score", help="score one roll (or all rolls) on a fresh card")
    add_rules_args(p)
    p.add_argument("--dice", help="five dice, e.g. 33355")
    p.add_argument("--all", action="store_true", help="the table of every roll")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("simulate", help="simulate complete games")
    add_rules_args(p)
    p.add_argument("--strategy", default="keep-largest", help=f"one of: {', '.join(strategy_names())}")
    p.add_argument("--games", type=positive_int, default=100_000)
    p.add_argument("--seed", type=seed_int, default=None)
    p.add_argument("--batch", type=positive_int, default=65536, help="games played at once")
    p.add_argument("--out", help="per-game table to FILE.csv or FILE.parquet")
    p.add_argument("--json", action="store_true")
    add_run_args(p)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("turns", help="pattern frequencies of single turns")
    add_rules_args(p)
    p.add_argument("--strategy", default="keep-largest")
    p.add_argument("--turns", type=positive_int, default=1_000_000)
    p.add_argument("--seed", type=seed_int, default=None)
    p.add_argument("--target", metavar="PATTERN", default=None,
                   help="keep what maximizes the exact chance of PATTERN (overrides the strategy's keeps)")
    p.add_argument("--json", action="store_true")
    add_run_args(p)
    p.set_defaults(func=cmd_turns)
