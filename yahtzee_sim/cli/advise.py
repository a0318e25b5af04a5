"""``yahtzee-sim advise``: every legal choice of a position (keeps while rolls are
left, boxes at the end) with its exact expected remaining score and its loss against
the best choice.

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["advise", "--dice", "13356", "--rolls-left", "2",
...                                "--filled", "ones,twos", "--upper", "5"])
>>> a.dice, a.rolls_left, a.filled, a.upper
('13356', 2, 'ones,twos', 5)
"""

from __future__ import annotations

import argparse


def cmd_advise(args) -> int:
    """Print (or emit as JSON) the advisor's table for one position."""
    import warnings

    from ._common import parse_dice, print_json, rules_from
    from ..exact.advisor import advise

    rules = rules_from(args)
    dice = parse_dice(args.dice, rules.n_dice, rules.n_faces)
    with warnings.catch_warnings():     # --yahtzee-box, the old name, had its note while parsed
        warnings.simplefilter("ignore", DeprecationWarning)
        advice = advise(rules, dice, rolls_left=args.rolls_left, filled=args.filled or (), upper=args.upper,
                        five_box_full=args.five_box_full, yahtzee_box=getattr(args, "yahtzee_box", None),
                        served=args.served)
    if args.json:
        print_json(advice.to_dict())
    else:
        print(advice.to_text())
    return 0


def _int_arg(what: str):
    import argparse

    def parse(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be an integer, got {text!r}") from None

    return parse


def add_commands(sub) -> None:
    """Register the ``advise`` subcommand."""
    from ._common import add_json_arg, add_old_spelling, add_rules_args

    p = sub.add_parser("advise", help="every legal choice of a position with its exact expected score")
    add_rules_args(p)
    p.add_argument("--dice", required=True, help="the dice showing, e.g. 13356")
    p.add_argument("--rolls-left", type=_int_arg("--rolls-left"), required=True,
                   help="rolls still to come this turn (0: choose a box)")
    p.add_argument("--filled", default="", help="filled boxes, comma-separated (e.g. ones,twos)")
    p.add_argument("--upper", type=_int_arg("--upper"), default=None,
                   help="upper-section total so far (default: 3 of each filled upper face)")
    p.add_argument("--five-box-full", action=argparse.BooleanOptionalAction, default=None,
                   help="the five-of-a-kind box, filled, holds points (--five-box-full, e.g. 50) "
                        "or 0 (--no-five-box-full); needed where it decides bonuses")
    add_old_spelling(p, "--yahtzee-box", "--five-box-full (points) or --no-five-box-full (0)", dest="yahtzee_box",
                     type=_int_arg("--yahtzee-box"))
    p.add_argument("--served", action=argparse.BooleanOptionalAction, default=None,
                   help="the dice are the turn's first throw, held since (Generala's served bonus; "
                        "default: not served once a throw has been made)")
    add_json_arg(p)
    p.set_defaults(func=cmd_advise)
