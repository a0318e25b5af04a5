"""``yahtzee-sim extremes``: best and worst possible score cards (source 000's claims).

With ``--kind`` and/or ``--constraint`` it prints one extreme score and a card that
attains it, turn by turn; without them, the table of all of source 000's claims for
the rule set.

>>> import argparse
>>> p = argparse.ArgumentParser(); sub = p.add_subparsers()
>>> add_commands(sub)
>>> p.parse_args(["extremes", "--kind", "min", "--constraint", "no-zero"]).constraint
['no-zero']
"""

from __future__ import annotations

from ._common import (add_json_arg, add_rules_args, print_json, print_table, print_wrapped, progress_for, rules_from,
                      rules_heading)
from ..exact.extremes import CONSTRAINTS, KINDS, extreme_score, parse_constraints, source_claims_table


def _describe(constraints) -> str:
    return " + ".join(constraints) if constraints else "none"


def cmd_extremes(args) -> int:
    """Print one extreme (with its card) or the table of source 000's claims."""
    rules = rules_from(args)
    if args.kind is None and not args.constraint:
        with progress_for(args) as progress:
            table = source_claims_table(rules, progress=progress)
        if args.json:
            records = table.astype(object).where(table.notna(), None).to_dict(orient="records")
            print_json({"rules": rules.key, "options": list(rules.options), "claims": records})
            return 0
        print_wrapped(f"{rules_heading(rules)}: source 000's extreme scores, computed "
                      "(the player chooses the dice as well as the moves)")
        print("score  claim (constraint; reading)")
        for row in table.itertuples():
            score = "none" if row.score is None or str(row.score) == "<NA>" else str(row.score)
            note = f" - {row.note}" if isinstance(row.note, str) and row.note else ""
            print_wrapped(f"{score:>5}  {row.claim} ({row.constraint}; {row.reading}){note}", hang=7)
        return 0

    kind = args.kind or "max"
    cons = parse_constraints(args.constraint)
    with progress_for(args) as progress:
        res = extreme_score(rules, kind=kind, constraint=cons, progress=progress)
    if args.json:
        print_json(res.summary())
        return 0
    word = "maximum" if kind == "max" else "minimum"
    if not res.feasible:
        print(f"{rules_heading(rules)}: no score card satisfies the constraints "
              f"({_describe(res.constraints)}), so there is no {word}")
    else:
        print(f"{rules_heading(rules)}: {word} {res.score} "
              f"(constraints: {_describe(res.constraints)})")
        card = res.card.drop(columns=["box"]).rename(columns={"label": "box"})
        print_table(card, index=False)
        print()
        frame = res.to_frame()
        print_table(frame.astype(object).where(frame.notna(), ""))
    for note in res.notes:
        print_wrapped(f"note: {note}")
    return 0


def add_commands(sub) -> None:
    """Register the ``extremes`` subcommand."""
    p = sub.add_parser("extremes", help="best and worst possible score cards (source 000's claims)")
    add_rules_args(p)
    p.add_argument("--kind", help=f"{' or '.join(KINDS)} (default: the table of all claims; max when a --constraint is given)")
    p.add_argument("--constraint", action="append", default=[], metavar="C",
                   help="repeatable (or joined with +); one of: " + ", ".join(CONSTRAINTS))
    add_json_arg(p)
    p.set_defaults(func=cmd_extremes)


__all__ = ["add_commands", "cmd_extremes"]
