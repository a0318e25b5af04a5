"""``yahtzee-sim turns``: pattern frequencies of single turns on a fresh card.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["turns", "--turns", "1e4"]).turns
10000
"""

from __future__ import annotations

from ._common import add_command, add_json_arg, add_run_args, add_seed_arg, add_strategy_arg, positive_int, \
    print_json, print_table, print_wrapped, rules_from, rules_heading, run_kwargs


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


def add_commands(sub) -> None:
    """Register the ``turns`` subcommand."""
    p = add_command(sub, "turns", "pattern frequencies of single turns", cmd_turns, rules=True)
    add_strategy_arg(p, default="keep-largest", lead="whose keeps to follow: ")
    p.add_argument("--turns", type=positive_int, default=1_000_000, help="single turns to play on a fresh card")
    add_seed_arg(p)
    p.add_argument("--target", metavar="PATTERN", default=None,
                   help="keep what maximizes the exact chance of PATTERN (overrides the strategy's keeps)")
    add_json_arg(p)
    add_run_args(p)
