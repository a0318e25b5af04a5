"""``yahtzee-sim policy-value``: the exact expected score and sd of a strategy.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["policy-value", "--strategy", "greedy"]).strategy
'greedy'
"""

from __future__ import annotations


def cmd_policy_value(args) -> int:
    """Print the exact expected score and sd of a strategy."""
    from ._common import call_with_progress, print_fields, print_json, progress_for, rules_from, rules_heading
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
    print_fields([("expected score", f"{pv.mean:.4f}"), ("standard dev.", f"{pv.sd:.4f}"),
                  ("states", f"{pv.states:,}"), ("method", pv.method), ("seconds", f"{pv.seconds:.1f}")], 17)
    return 0


def add_commands(sub) -> None:
    """Register the ``policy-value`` subcommand."""
    from ._common import add_command, add_json_arg, add_strategy_arg

    p = add_command(sub, "policy-value", "exact expected score and sd of a strategy", cmd_policy_value, rules=True)
    add_strategy_arg(p, required=True)
    add_json_arg(p)
