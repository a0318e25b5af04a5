"""The ``yahtzee-sim odds`` subcommand: exact one-roll and per-turn odds.

>>> from yahtzee_sim.cli import main
>>> main(["odds", "--rules", "yahtzee"])  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
Yahtzee ...: exact odds of one roll of 5 dice (out of 6**5 = 7776)
...
five_of_a_kind 6/7776 1/1296 0.000772 1 in 1296
...
Counting other patterns too ("or better"): four_of_a_kind (also counts five_of_a_kind), ...
0
"""

from __future__ import annotations

import math

from ._common import print_table, print_wrapped, rules_heading


def _frac_text(f) -> str:
    return f"{f.numerator}/{f.denominator}"


def _includes(rules) -> dict:
    from ..patterns import pattern_includes_column

    return pattern_includes_column(rules.dice)


def _note(rules) -> None:
    from ..patterns import pattern_note

    print()
    print_wrapped(pattern_note(dice=rules.dice))


def _one_roll_section(rules, json_out: dict | None):
    import pandas as pd

    from ..exact.odds import one_roll_odds

    odds = one_roll_odds(rules)
    frame = odds.to_frame()
    includes = _includes(rules)
    if json_out is not None:
        json_out["one_roll"] = [
            {"pattern": name, "includes": [] if includes[name] == "-" else includes[name].split(", "),
             "count": int(row["count"]), "total": int(row["total"]),
             "fraction": row["fraction"], "probability": float(row["probability"]),
             "one_in": _one_in_number(row["probability"])}
            for name, row in frame.iterrows()
        ]
        return
    d = rules.dice
    print_wrapped(f"{rules_heading(rules)}: exact odds of one roll of {d.n_dice} dice "
                  f"(out of {d.n_faces}**{d.n_dice} = {odds.total})")
    table = pd.DataFrame({
        "count": [f"{int(c)}/{odds.total}" for c in frame["count"]],
        "fraction": [_frac_text(f) for f in frame["fraction"]],
        "probability": [f"{p:.6f}" for p in frame["probability"]],
        "1 in N": frame["one_in"],
    }, index=frame.index)
    print_table(table)


def _one_in_number(p):
    """1 / p as a number (None when the pattern is impossible)."""
    p = float(p)
    return None if p == 0 else 1 / p


def _per_turn_section(rules, strategy: str, json_out: dict | None, rep=None):
    import pandas as pd

    from ..exact.turns import per_turn_report

    rep = per_turn_report(rules, strategy) if rep is None else rep
    frame = rep.to_frame()
    rolls = rep.rolls_frame()
    goal = rep.rolls[0].pattern          # five of a kind; with fewer dice, all of them alike
    five = frame.loc[goal]
    goal_text = "five of a kind" if goal == "five_of_a_kind" else f"all {rules.n_dice} dice alike"
    if json_out is not None:
        json_out["per_turn"] = {
            "strategy": rep.strategy, "rolls_per_turn": rules.n_rolls,
            "patterns": [
                {"pattern": name,
                 "strategy_fraction": row["strategy_fraction"],
                 "strategy_probability": float(row["strategy_probability"]),
                 "strategy_turns_per": _finite(row["strategy_turns_per"]),
                 "best_fraction": row["best_fraction"],
                 "best_probability": float(row["best_probability"]),
                 "best_turns_per": _finite(row["best_turns_per"])}
                for name, row in frame.iterrows()
            ],
            "expected_rolls_pattern": goal,
            "expected_rolls_to_five_of_a_kind": [
                {"policy": pol, "expected_rolls": _finite(row["expected_rolls"]),
                 "fraction": row["fraction"]}
                for pol, row in rolls.iterrows()
            ],
            "turns_per_five_of_a_kind": {"strategy": _finite(five["strategy_turns_per"]),
                                         "best_keeps": _finite(five["best_turns_per"])},
        }
        return
    print()
    print_wrapped(f"Exact chance of ending a {rules.n_rolls}-roll turn in each pattern (fresh card): "
                  f"under {rep.strategy}'s keeps, and under the keeps that maximize that pattern's own chance "
                  "(turns per: the mean number of turns for one)")
    columns = pd.MultiIndex.from_product([[f"under {rep.strategy}", "best keeps"], ["chance", "turns per", "exact"]])
    table = pd.DataFrame(list(zip(
        [f"{p:.6f}" for p in frame["strategy_probability"]], [_fmt_turns(t) for t in frame["strategy_turns_per"]],
        [_frac_text(f) for f in frame["strategy_fraction"]],
        [f"{p:.6f}" for p in frame["best_probability"]], [_fmt_turns(t) for t in frame["best_turns_per"]],
        [_frac_text(f) for f in frame["best_fraction"]])), index=frame.index, columns=columns)
    print_table(table)
    print()
    print_wrapped(f"Expected rolls to {goal_text}, rolling without limit (the first throw counts):")
    print_table(pd.DataFrame({
        "expected rolls": [f"{v:.6f}" for v in rolls["expected_rolls"]],
        "exact": [_frac_text(f) if hasattr(f, "denominator") else "-" for f in rolls["fraction"]],   # None, NaN
    }, index=rolls.index))
    if not all(math.isfinite(v) for v in rolls["expected_rolls"]):
        print_wrapped(f"(inf: that policy can get stuck without ever rolling {goal_text}, "
                      "e.g. by holding all the dice)")
    print()
    print_wrapped(f"Turns per {goal_text}: {_fmt_turns(five['strategy_turns_per'])} under {rep.strategy}, "
                  f"{_fmt_turns(five['best_turns_per'])} chasing it with the best keeps")


def _boxes_section(rules, json_out: dict | None):
    from ..exact.odds import box_score_distribution

    dist = box_score_distribution(rules)
    if json_out is not None:
        json_out["boxes"] = [
            {"box": r.box, "points": int(r.points), "count": int(r.count), "total": int(r.total),
             "fraction": r.fraction, "probability": float(r.probability)}
            for r in dist.itertuples()
        ]
        return
    print()
    print(f"Score of each box on one roll, fresh card (count out of {int(dist['total'].iloc[0])}):")
    labels = {b.name: b.label for b in rules.boxes}
    for box, part in dist.groupby("box", sort=False):
        mean = float((part["points"] * part["probability"]).sum())
        cells = ", ".join(f"{int(p)}: {int(c)}" for p, c in zip(part["points"], part["count"]))
        print_wrapped(f"{labels.get(box, box)} (mean {mean:.4f}) -> {cells}", indent="  ")


def _finite(x):
    x = float(x)
    return None if math.isinf(x) or math.isnan(x) else x


def _fmt_turns(t) -> str:
    t = float(t)
    return "never" if math.isinf(t) else f"{t:.2f}"


def cmd_odds(args) -> int:
    from ._common import print_json, rules_from
    from ..strategies import get_strategy

    rules = rules_from(args)
    if args.strategy is not None and not args.per_turn:
        raise ValueError("--strategy needs --per-turn")
    strategy = "keep-largest" if args.strategy is None else args.strategy  # "" is refused by get_strategy
    get_strategy(strategy)  # unknown names fail before any work
    out = {"rules": rules.key, "options": list(rules.options)} if args.json else None
    rep = None
    if args.per_turn:   # the part that can refuse (a game the exact engine cannot solve): before any output
        from ..exact.turns import per_turn_report

        rep = per_turn_report(rules, strategy)
    _one_roll_section(rules, out)
    if args.per_turn:
        _per_turn_section(rules, strategy, out, rep)
    if out is None:
        _note(rules)
    if args.boxes:
        _boxes_section(rules, out)
    if out is not None:
        print_json(out)
    return 0


def add_commands(sub) -> None:
    """Add the ``odds`` subcommand to the ``yahtzee-sim`` parser."""
    from ._common import add_command, add_json_arg
    from ..strategies import strategy_names

    p = add_command(sub, "odds", "exact odds: one roll, per turn (--per-turn), per box (--boxes)", cmd_odds,
                    rules=True)
    p.add_argument("--per-turn", action="store_true",
                   help="exact per-turn pattern odds, expected rolls to five of a kind")
    p.add_argument("--strategy", default=None,
                   help=f"keep policy for --per-turn (default: keep-largest); one of: {', '.join(strategy_names())}; "
                        "or module:Class")
    p.add_argument("--boxes", action="store_true", help="distribution of every box's score on one roll")
    add_json_arg(p)
