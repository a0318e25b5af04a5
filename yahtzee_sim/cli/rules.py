"""``yahtzee-sim rules``: every rule set with its options.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["rules", "--json"]).json
True
"""

from __future__ import annotations

from ._common import add_command, add_json_arg, print_json, print_wrapped


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


def add_commands(sub) -> None:
    """Register the ``rules`` subcommand."""
    add_json_arg(add_command(sub, "rules", "list rule sets and their options", cmd_rules))
