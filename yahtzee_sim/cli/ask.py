"""``yahtzee-sim ask``: one question, answered exactly and by simulation, optionally
with a verdict on a claimed value.

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["ask", "chance", "large_straight", "--keep", "2345", "--rolls-left", "2"])
>>> a.what, a.event, a.keep, a.rolls_left, a.scope
('chance', ['large_straight'], '2345', 2, None)
"""

from __future__ import annotations

ASKS = ("chance", "mean", "sd", "percentile", "expected-rolls", "expected-turns", "max", "min",
        "value")   # questions.spec.ASKS
SCOPES = ("roll", "position", "turn", "game", "table", "card")   # questions.spec.SCOPES


def _players(values):
    if values is None:
        return None
    if len(values) == 1 and values[0].isdigit():
        return int(values[0])
    return list(values)


def cmd_ask(args) -> int:
    from ..questions import answer, parse_question
    from ..questions.spec import parse_claimed, parse_precision
    from ._common import print_json, progress_for

    if args.play is not None and args.strategy is not None and args.play != args.strategy:
        raise ValueError("give --play or --strategy, not both")
    scope = args.scope or ("position" if (args.keep or args.dice) else "turn")
    spec = {"ask": args.what, "event": " ".join(args.event), "scope": scope, "rules": args.rules,
            "options": args.option}
    for key, value in (("play", args.play or args.strategy), ("keep", args.keep), ("dice", args.dice),
                       ("hold", args.hold), ("rolls_left", args.rolls_left), ("q", args.q),
                       ("players", _players(args.players)), ("filled", args.filled), ("upper", args.upper),
                       ("given", args.given), ("constraint", args.constraint)):
        if value is not None:
            spec[key] = value
    question = parse_question(spec)
    if args.precision is not None and args.claimed is None:
        raise ValueError("--precision goes with --claimed")
    claimed = None if args.claimed is None else parse_claimed(args.claimed)
    precision = parse_precision(args.precision if args.precision is not None else 0)
    with progress_for(args) as progress:
        out = answer(question, games=args.games, throws=args.throws, seed=args.seed, progress=progress)
    out.judge(claimed, precision)
    if args.json:
        print_json({**out.to_dict(), "seed": args.seed, "seconds": round(out.seconds, 3)})
        return 0
    print(out)
    return 0


def add_commands(sub) -> None:
    from ._common import add_json_arg, add_seed_arg, positive_int

    p = sub.add_parser("ask", help="answer one question about a roll, a position, a turn, a game or a table",
                       description="Answer one question exactly (fractions for a roll, a position or a turn; "
                                   "the exact score distribution for a game or a table) beside a simulation "
                                   "with its 95% interval. Example: yahtzee-sim ask chance large_straight "
                                   "--scope turn --play chase --claimed 26% --precision 1%. "
                                   "The vocabulary: docs/questions.md.")
    p.add_argument("what", metavar="ASK", help=f"what is asked: {', '.join(ASKS)}")
    p.add_argument("event", nargs="+", metavar="EVENT",
                   help="a pattern (large_straight), 'box NAME >= N', 'score >= N', 'score between A B', "
                        "upper_bonus, 'scored_five >= K', 'five_of_a_kind >= K', 'zeros >= K', "
                        "'served generala', win, tie, points_to_come, 'faces 34', best_box, 'A and B' "
                        "(docs/questions.md)")
    p.add_argument("--scope", default=None, choices=SCOPES,
                   help="roll, position, turn, game or table (default: position with --keep or --dice, else turn)")
    p.add_argument("--rules", default="yahtzee", help="rule set (default: %(default)s); list: yahtzee-sim rules")
    p.add_argument("--option", action="append", default=[], metavar="O", help="rule option, repeatable")
    p.add_argument("--play", default=None,
                   help="chase (the keeps maximizing this event's chance; default for roll, position, turn) "
                        "or a strategy name or module:Class (default for game and table: optimal)")
    p.add_argument("--strategy", default=None, help="the same as --play with a strategy")
    p.add_argument("--keep", default=None, help="a position: the held dice before a throw, e.g. 2345")
    p.add_argument("--dice", default=None, help="a position: the dice in front of you after a throw, e.g. 12345")
    p.add_argument("--hold", default=None, help="with --dice: the dice you mean to hold (answered beside the best hold)")
    p.add_argument("--rolls-left", type=int, default=None, help="a position: the throws still to come")
    p.add_argument("--filled", default=None,
                   help="a position or turn on a card: the boxes already used, e.g. ones,twos (docs/questions.md)")
    p.add_argument("--upper", default=None, help="with a card: the upper section's points so far, e.g. 12")
    p.add_argument("--given", default=None, help="a game question: only the games where this holds, e.g. "
                                                 "'box sixes >= 18' (simulated)")
    p.add_argument("--constraint", default=None,
                   help="with --play any (the best or worst card possible): e.g. no-five-of-a-kind")
    p.add_argument("--q", type=float, default=None, help="the percentile asked (0 < q <= 100)")
    p.add_argument("--players", nargs="+", default=None,
                   help="a table: a number of players all playing --play, or one strategy per seat (seat 1 is asked about)")
    p.add_argument("--claimed", default=None, help="a claimed value to judge: 0.26, 26%%, 5/9 or '1 in 10'")
    p.add_argument("--precision", default=None, help="the unit the claim was stated in: 0.01 or 1%% (default 0: exact)")
    p.add_argument("--games", type=positive_int, default=20_000,
                   help="simulated games or tables beside a game or table question (default: %(default)s)")
    p.add_argument("--throws", type=positive_int, default=100_000,
                   help="simulated throws, positions or turns beside a roll, position or turn question "
                        "(default: %(default)s)")
    add_seed_arg(p, default=2026)
    add_json_arg(p)
    p.set_defaults(func=cmd_ask)
