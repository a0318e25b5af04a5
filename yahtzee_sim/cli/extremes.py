"""``yahtzee-sim extremes``: best and worst possible score cards (seed 000's claims).

With ``--kind`` and/or ``--constraint`` it prints one extreme score and a card that
attains it, turn by turn; without them, the table of all of seed 000's claims for
the rule set.

>>> import argparse
>>> p = argparse.ArgumentParser(); sub = p.add_subparsers()
>>> add_commands(sub)
>>> p.parse_args(["extremes", "--kind", "min", "--constraint", "no-zero"]).constraint
['no-zero']
"""

from __future__ import annotations

from ._common import add_rules_args, print_json, rules_from
from ..exact.extremes import CONSTRAINTS, KINDS, extreme_score, parse_constraints, seed_claims_table


def _describe(constraints) -> str:
    return " + ".join(constraints) if constraints else "none"


def cmd_extremes(args) -> int:
    """Print one extreme (with its card) or the table of seed 000's claims."""
    rules = rules_from(args)
    if args.kind is None and not args.constraint:
        table = seed_claims_table(rules)
        if args.json:
            records = table.astype(object).where(table.notna(), None).to_dict(orient="records")
            print_json({"rules": rules.name, "options": list(rules.options), "claims": records})
            return 0
        print(f"{rules.title} ({rules.key}): seed 000's extreme scores, computed "
              "(the player chooses the dice as well as the moves)")
        shown = table.drop(columns=["kind"]).fillna({"note": ""})
        print(shown.to_string(index=False))
        return 0

    kind = args.kind or "max"
    cons = parse_constraints(args.constraint)
    res = extreme_score(rules, kind=kind, constraint=cons)
    if args.json:
        print_json(res.summary())
        return 0
    word = "maximum" if kind == "max" else "minimum"
    if not res.feasible:
        print(f"{rules.title} ({rules.key}): no score card satisfies the constraints "
              f"({_describe(res.constraints)}), so there is no {word}")
    else:
        print(f"{rules.title} ({rules.key}): {word} {res.score} "
              f"(constraints: {_describe(res.constraints)})")
        card = res.card.drop(columns=["box"]).rename(columns={"label": "box"})
        print(card.to_string(index=False))
        print()
        frame = res.to_frame()
        print(frame.astype(object).where(frame.notna(), "").to_string())
    for note in res.notes:
        print(f"note: {note}")
    return 0


def add_commands(sub) -> None:
    """Register the ``extremes`` subcommand."""
    p = sub.add_parser("extremes", help="best and worst possible score cards (seed 000's claims)")
    add_rules_args(p)
    p.add_argument("--kind", help=f"one of: {', '.join(KINDS)} (default: the table of all claims)")
    p.add_argument("--constraint", action="append", default=[], metavar="C",
                   help="repeatable (or joined with +); one of: " + ", ".join(CONSTRAINTS))
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_extremes)


__all__ = ["add_commands", "cmd_extremes"]
