"""``yahtzee-sim policy-value``: the exact expected score and sd of a strategy.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["policy-value", "--strategy", "greedy"]).strategy
'greedy'
"""

from __future__ import annotations


def cmd_policy_value(args) -> int:
    """Print the exact expected score and sd of a strategy."""
    from ._common import call_with_progress, print_json, progress_for, rules_from, rules_heading
    from ..exact.policy import policy_value
    from ..strategies import get_strategy

    rules = rules_from(args)
    strategy = get_strategy(args.strategy)  # module:Class too; bad names fail before any work
    with progress_for(args) as progress:
        pv = call_with_progress(policy_value, progress, f"policy value of {strategy.name} on {rules.key}",
                                rules, strategy)
    if args.json:
        print_json(dict(pv.summary(), rules=rules.key, options=list(rules.options)))
        return 0
    print(f"{rules_heading(rules)} under {pv.strategy}: exact policy value")
    print(f"  expected score   {pv.expected_score:.4f}")
    print(f"  standard dev.    {pv.sd:.4f}")
    print(f"  states           {pv.states:,}")
    print(f"  method           {pv.method}")
    print(f"  seconds          {pv.seconds:.1f}")
    return 0


def add_commands(sub) -> None:
    """Register the ``policy-value`` subcommand."""
    from ._common import add_json_arg, add_rules_args
    from ..strategies import strategy_names

    p = sub.add_parser("policy-value", help="exact expected score and sd of a strategy")
    add_rules_args(p)
    p.add_argument("--strategy", required=True,
                   help=f"one of: {', '.join(strategy_names())}; or module:Class, your own Strategy subclass")
    add_json_arg(p)
    p.set_defaults(func=cmd_policy_value)
