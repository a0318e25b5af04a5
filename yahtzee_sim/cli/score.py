"""``yahtzee-sim score``: what one roll (or every roll) scores on a fresh card.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["score", "--dice", "33355"]).dice
'33355'
"""

from __future__ import annotations

from ._common import UsageError, add_json_arg, add_rules_args, parse_dice, print_json, print_table, print_wrapped, \
    rules_from, rules_heading


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


def add_commands(sub) -> None:
    """Register the ``score`` subcommand."""
    p = sub.add_parser("score", help="score one roll (or all rolls) on a fresh card")
    add_rules_args(p)
    p.add_argument("--dice", help="the dice, e.g. 33355 or 3,3,3,5,5")
    p.add_argument("--all", action="store_true", help="the table of every roll")
    add_json_arg(p)
    p.set_defaults(func=cmd_score)
