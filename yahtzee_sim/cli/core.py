"""The core subcommands: ``rules``, ``strategies``, ``score``, ``simulate``, ``turns``.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["simulate", "--games", "1e6"]).games
1000000
"""

from __future__ import annotations

from ._common import (UsageError, add_json_arg, add_rules_args, add_seed_arg, add_run_args, check_out_path, parse_dice,
                      positive_int, print_json, print_table, print_wrapped, rules_from, rules_heading, run_kwargs,
                      )


def cmd_rules(args) -> int:
    from ..rules import REGISTRY, get_rules, rule_numbers

    if args.json:
        print_json({name: {"summary": spec.summary, "boxes": list(get_rules(name).box_names),
                           "options": spec.options, "numbered_options": rule_numbers(name)}
                    for name, spec in REGISTRY.items()})
        return 0
    for name, spec in REGISTRY.items():
        rules = get_rules(name)
        print_wrapped(f"{name}: {spec.summary} ({rules.n_boxes} boxes)")
        for opt, text in [*spec.options.items(), *rule_numbers(name).items()]:
            print_wrapped(f"{name} --option {opt}: {text}", indent="  ")
    print()
    print_wrapped("Options combine (--option a --option b, or --option a+b); a printed key such as "
                  "yacht+no-bonus is accepted as --rules; --rules also takes a house-rules .toml file "
                  "(docs/rules.md).")
    return 0


def strategy_listing() -> dict[str, str]:
    """Every name ``--strategy`` takes, with what it does: the registry, each member of
    the parametrized families (``cpu:*``, ``optimal:theta=``, ``target:T=``) and the
    table-only ``play-to-win``; the descriptions are the classes' own.

    >>> names = list(strategy_listing())
    >>> "cpu:strong" in names and "optimal:theta=<x>" in names and "play-to-win" in names
    True
    """
    from ..strategies.play_to_win import PlayToWin
    from ..strategies import STRATEGIES
    from ..strategies.levels import LEVELS, LEVEL_CLASSES
    from ..strategies.risk import RiskStrategy
    from ..strategies.target import TargetStrategy

    out = {n: c.description for n, c in STRATEGIES.items()}
    out.update({name: LEVEL_CLASSES[name.partition(":")[2]].description for name in LEVELS})
    out["optimal:theta=<x>"] = (f"{RiskStrategy.description}; theta > 0 seeks risk, < 0 avoids it, "
                                "0 is optimal (e.g. optimal:theta=0.02)")
    out["target:T=<score>"] = f"{TargetStrategy.description} (e.g. target:T=250)"
    out["play-to-win"] = f"{PlayToWin.description} (head-to-head tables only: it watches the other players)"
    return out


def cmd_strategies(args) -> int:
    listing = strategy_listing()
    if args.json:
        print_json(listing)
        return 0
    for n, text in listing.items():
        print_wrapped(f"{n}: {text}")
    print_wrapped("Your own: --strategy module:Class (a Strategy subclass importable from the current folder "
                  "or the Python path; see the README), labelled by its name attribute, else by module:Class.")
    return 0


def cmd_score(args) -> int:
    import pandas as pd

    rules = rules_from(args)
    if args.all == (args.dice is not None):
        raise UsageError("give either --dice (e.g. --dice 33355) or --all")
    if args.all:
        d = rules.dice
        frame = pd.DataFrame(rules.fresh_card_table, columns=list(rules.box_names))
        frame.insert(0, "dice", ["".join(map(str, row)) for row in d.roll_dice])
        frame.insert(1, "probability", d.first_roll_prob)
        if args.json:
            print_json({"rules": rules.key, "rolls": frame.to_dict(orient="records")})
        else:
            print(frame.to_string(index=False))  # one line per roll (a data dump: pipe it, or use --json)
        return 0
    dice = parse_dice(args.dice, rules.n_dice, rules.n_faces)
    scores = rules.score_dice(dice)
    if args.json:
        print_json({"rules": rules.key, "dice": dice, "scores": scores})
    else:
        labels = {b.name: b.label for b in rules.boxes}
        print(f"{rules_heading(rules)}, dice {' '.join(map(str, dice))}, fresh card")
        print_table(pd.DataFrame({"box": [labels[n] for n in scores], "name": list(scores),
                                  "points": list(scores.values())}), index=False)
        _print_card_notes(rules, dice)
    return 0


def _print_card_notes(rules, dice) -> None:
    """What a fresh card's table leaves out: a box that pays only after a five of a kind
    (Generala doble) and what these dice pay when served, both read off the rule set."""
    roll = rules.dice.roll_index_of(dice)
    for b, box in enumerate(rules.boxes):
        later = int(rules.score_table[roll, b])
        if box.needs_five_box and later:
            five = next(x.label for x in rules.boxes if x.name == rules.five_box)
            print_wrapped(f"{box.label} pays {later} for these dice once the {five} box holds a score; "
                          "0 on a fresh card.")
    if rules.roll_dependent:
        first = rules.score_tables[0, roll]
        served = [f"{box.label} {int(first[b])}" for b, box in enumerate(rules.boxes)
                  if box.by_throw and int(first[b]) != int(rules.score_table[roll, b])]
        if served:
            print_wrapped("Made by the turn's first throw (served), these dice pay: " + ", ".join(served) + ".")


def _summary_json(res) -> dict:
    """The JSON of ``simulate``: :meth:`SimulationResult.summary` with the same names,
    plus the options applied."""
    s = res.summary()
    return {"rules": s["rules"], "options": list(res.rules.options), **s}


def _summary_tables(s) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(heading, rows of label, value, 95% interval) of the ``simulate`` output: the final
    score, then the events this game has (:meth:`SimulationResult.events`) as shares of
    games, then the counts and scores per game; each simulated number with its interval."""
    from ..results import ci_of

    score = [("mean", f"{s['mean']:.3f}", f"{s['ci95_low']:.3f} .. {s['ci95_high']:.3f}"),
             ("sd", f"{s['sd']:.3f}", ""), ("standard error of the mean", f"{s['se']:.4f}", ""),
             ("min", str(s["min"]), ""), *[(f"p{p}", str(s[f"p{p}"]), "") for p in (1, 5, 25, 50, 75, 95, 99)],
             ("max", str(s["max"]), "")]
    rates, means = [], []
    for key, value in s.items():
        if ci_of(key) or not (key.endswith("_rate") or key.endswith("_mean") or key == "points_sd"):
            continue
        digits = 4 if s.kind(key) in ("rate", "mean count") else 3
        low, high = s.get(f"{key}_ci95_low"), s.get(f"{key}_ci95_high")
        ci = f"{low:.{digits}f} .. {high:.{digits}f}" if low is not None and high is not None else ""
        (rates if key.endswith("_rate") else means).append((s.label(key), f"{value:.{digits}f}", ci))
    return [("final score", score), ("share of games with", rates), ("mean per game", means)]


def cmd_simulate(args) -> int:
    import pandas as pd

    from ..api import simulate

    rules = rules_from(args)
    from ..strategies import get_strategy

    strategy = get_strategy(args.strategy)
    out = check_out_path(args.out, (".csv", ".parquet")) if args.out is not None else None

    # The per-game table is streamed to --out chunk by chunk while the games are played.
    res = simulate(rules, strategy, args.games, seed=args.seed, batch=args.batch, out=out,
                   progress=not args.json, **run_kwargs(args))
    if args.json:
        print_json(_summary_json(res))
        return 0
    s = res.summary()
    print(f"{rules_heading(rules)} under {res.strategy}: {s['games']:,} games, seed {s['seed']}")
    for i, (heading, rows) in enumerate(_summary_tables(s)):
        if rows:
            if i:
                print()
            print_table(pd.DataFrame(rows, columns=[heading, "value", "95% CI"]), index=False,
                        justify="left", formatters={heading: f"{{:<{max(len(r[0]) for r in rows)}}}".format})
    print(f"seconds: {s['seconds']:.2f}")
    if out is not None:
        print(f"per-game table written to {out}")
    return 0


def cmd_turns(args) -> int:
    from ..api import simulate_turns

    rules = rules_from(args)
    from ..strategies import get_strategy

    res = simulate_turns(rules, get_strategy(args.strategy), args.turns, seed=args.seed,
                         progress=not args.json, target=args.target, **run_kwargs(args))
    from ..patterns import pattern_includes_column, pattern_note

    frame = res.to_frame()
    frame["includes"] = frame.index.map(pattern_includes_column(rules.dice))
    if args.json:
        print_json({"rules": rules.key, "options": list(rules.options), "strategy": res.strategy,
                    "target": args.target, "turns": res.n_turns, "seed": res.seed, "seconds": res.seconds,
                    "patterns": frame.reset_index().to_dict(orient="records")})
        return 0
    print(f"{rules_heading(rules)}: {res.n_turns:,} single turns under {res.strategy}, seed {res.seed}")
    print("frequency: share of turns ending in the pattern, with its 95% Wilson interval")
    print_table(frame.drop(columns="includes"), float_format=lambda v: f"{v:.6f}")
    print()
    print_wrapped(pattern_note(dice=rules.dice))
    return 0


STRATEGY_HELP = "one of: {names}; or module:Class, your own Strategy subclass"


def add_commands(sub) -> None:
    from ..strategies import strategy_names

    p = sub.add_parser("rules", help="list rule sets and their options")
    add_json_arg(p)
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser("strategies", help="list strategies")
    add_json_arg(p)
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("score", help="score one roll (or all rolls) on a fresh card")
    add_rules_args(p)
    p.add_argument("--dice", help="the dice, e.g. 33355 or 3,3,3,5,5")
    p.add_argument("--all", action="store_true", help="the table of every roll")
    add_json_arg(p)
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("simulate", help="simulate complete games")
    add_rules_args(p)
    p.add_argument("--strategy", default="keep-largest", help=STRATEGY_HELP.format(names=", ".join(strategy_names())))
    p.add_argument("--games", type=positive_int, default=100_000, help="games to play (1e6 and 1_000_000 work)")
    add_seed_arg(p)
    p.add_argument("--batch", type=positive_int, default=65536,
                   help="games played at once (memory ~0.5 kB each; results do not depend on it)")
    p.add_argument("--out", help="per-game table to FILE.csv or FILE.parquet")
    add_json_arg(p)
    add_run_args(p)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("turns", help="pattern frequencies of single turns")
    add_rules_args(p)
    p.add_argument("--strategy", default="keep-largest",
                   help="whose keeps to follow: " + STRATEGY_HELP.format(names=", ".join(strategy_names())))
    p.add_argument("--turns", type=positive_int, default=1_000_000, help="single turns to play on a fresh card")
    add_seed_arg(p)
    p.add_argument("--target", metavar="PATTERN", default=None,
                   help="keep what maximizes the exact chance of PATTERN (overrides the strategy's keeps)")
    add_json_arg(p)
    add_run_args(p)
    p.set_defaults(func=cmd_turns)
