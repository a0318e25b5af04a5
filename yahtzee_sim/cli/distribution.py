"""``yahtzee-sim distribution``: the exact distribution of a strategy's final score
(mean, sd, percentiles, P(score >= x), the events users ask about), optionally every
score's probability to a CSV file.

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["distribution", "--strategy", "greedy", "--at-least", "250"])
>>> a.strategy, a.at_least
('greedy', [250])
"""

from __future__ import annotations

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def cmd_distribution(args) -> int:
    """Print the exact score distribution of one strategy."""
    from ._common import check_out_path, print_json, print_wrapped, progress_for, rules_from, rules_heading
    from ..exact.distribution import distribution
    from ..files import atomic_write

    rules = rules_from(args)
    out = check_out_path(args.out, (".csv",)) if args.out else None
    with progress_for(args) as progress:
        dist = distribution(rules, args.strategy, progress=progress)
    s = dist.summary()
    pct = {str(q): dist.percentile(q) for q in PERCENTILES}
    at_least = {str(x): dist.p_at_least(x) for x in args.at_least}
    if out is not None:
        with atomic_write(out, "w") as fh:
            dist.to_frame().to_csv(fh)
    if args.json:
        print_json(dict(s, rules=rules.key, options=list(rules.options), percentiles=pct,
                        p_at_least=at_least, pmf=dist.pmf.tolist() if args.pmf else None))
        return 0
    print(f"{rules_heading(rules)}: exact final-score distribution of {dist.strategy}")
    print(f"  expected score        {dist.mean:.4f}")
    print(f"  standard deviation    {dist.sd:.4f}")
    print(f"  lowest / highest      {dist.min_score} / {dist.max_score} (scores with positive probability)")
    print_wrapped("  percentiles           " + ", ".join(f"p{q} {v}" for q, v in pct.items()), hang=24)
    for x, p in at_least.items():
        print(f"  P(score >= {x})       {p:.6f}")
    # the events under simulate's names (yahtzee_sim.results: SimulationResult.events)
    from ..results import dice_word

    word = dice_word(rules.n_dice)
    if rules.upper_bonus:
        print(f"  P(upper bonus)        {dist.p_upper_bonus:.6f}")
    if rules.five_box is not None:
        label = next(b.label for b in rules.boxes if b.name == rules.five_box)
        served = int(rules.score_tables[0, :, rules.five_box_index].max())
        scored = f"{rules.five_box_points} in {label}" if served == rules.five_box_points else \
            f"{label} box scored: {rules.five_box_points}, or {served} served"
        print(f"  P({scored})  {dist.p_five_box_full:.6f}")
    print(f"  P({word} rolled at least once)  {dist.p_five_of_a_kind_rolled:.6f}")
    if rules.roll_dependent and rules.five_box is not None:
        print(f"  P({label} served at least once)  {dist.p_served_five:.6f} (made by a turn's first throw)")
    print(f"  turns ending in {word} (mean per game)  {dist.five_per_game:.6f}")
    if rules.five_bonus:
        pmf = dist.five_bonus_pmf
        print(f"  five-of-a-kind bonuses: mean {dist.expected_five_bonuses:.6f}; "
              + ", ".join(f"P({k}) {p:.3g}" for k, p in enumerate(pmf[:5])))
    print(f"  states visited        {dist.states:,}; {dist.seconds:.1f} s")
    if out is not None:
        print(f"  every score's probability written to {out}")
    return 0


def add_commands(sub) -> None:
    """Register the ``distribution`` subcommand."""
    from ._common import add_command, add_json_arg

    p = add_command(sub, "distribution", "exact distribution of a strategy's final score", cmd_distribution,
                    rules=True)
    p.add_argument("--strategy", default="optimal",
                   help="a strategy whose decisions depend on the score card (default optimal)")
    p.add_argument("--at-least", type=int, action="append", default=[], metavar="X",
                   help="also print P(score >= X) (repeatable)")
    p.add_argument("--out", help="write every score's probability to this CSV file")
    p.add_argument("--pmf", action="store_true", help="with --json: include the whole PMF")
    add_json_arg(p)
