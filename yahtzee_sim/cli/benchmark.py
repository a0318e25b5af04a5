"""``yahtzee-sim benchmark STRATEGY``: one strategy's report card.

The expected score and sd (exact or simulated, said), the paired difference on common
dice and the win rate against each ``--against`` strategy (default heuristic and
optimal), and where the points go against optimal play (exact loss accounting);
``--out DIR`` writes the report folder (README, CSV, figures), ``--json`` the numbers.

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["benchmark", "greedy", "--against", "random", "optimal"])
>>> a.strategy, a.against
('greedy', ['random', 'optimal'])
"""

from __future__ import annotations

DEFAULT_AGAINST = ["heuristic", "optimal"]


def cmd_benchmark(args) -> int:
    """Print (and with ``--out`` write) the report card of one strategy."""
    from ..benchmarking import benchmark
    from ._common import (
        print_json,
        print_table,
        print_wrapped,
        progress_for,
        rules_from,
        rules_heading,
    )

    rules = rules_from(args)
    if args.out:                                     # refused before any work, nothing written
        from pathlib import Path

        from ..report.output import check_output_root, check_replaceable

        check_output_root(Path(args.out).resolve().parent)
        check_replaceable(Path(args.out))
    against = DEFAULT_AGAINST if args.against is None else args.against
    with progress_for(args) as progress:
        b = benchmark(args.strategy, against=against, rules=rules, games=args.games, seed=args.seed,
                      losses=not args.no_losses, progress=progress)
    if args.out:
        from ..report.benchmark import benchmark_report
        from ..report.document import write_report

        parts = ["yahtzee-sim benchmark", args.strategy]
        if args.against is not None:
            parts += ["--against", *args.against]
        if rules.key != "yahtzee":
            parts += ["--rules", rules.key]
        parts += ["--games", str(b.games), "--seed", str(b.seed), "--out", args.out]
        write_report(benchmark_report(b, command=" ".join(parts)), args.out)
    if args.json:
        print_json(dict(b.summary(), options=list(rules.options)))
        return 0
    print_wrapped(f"{rules_heading(rules)}: benchmark of {b.strategy} (seed {b.seed})")
    if b.method == "exact":
        print(f"  expected score          {b.mean:.4f} (exact)")
        print(f"  standard deviation      {b.sd:.4f} (exact)")
    else:
        print_wrapped(f"  expected score          {b.mean:.4f} (simulated, {b.games:,} games; 95% interval "
                      f"{b.mean_low:.4f} to {b.mean_high:.4f})", hang=24)
        print(f"  standard deviation      {b.sd:.4f} (simulated)")
    if b.optimal_mean == b.optimal_mean:
        print(f"  optimal play            {b.optimal_mean:.4f} (exact)")
    if b.comparisons:
        print(f"  against each opponent, on the same dice ({b.games:,} games):")
        frame = b.to_frame()[["opponent_mean", "diff", "diff_low", "diff_high", "diff_exact", "p_win", "p_tie",
                              "method"]]
        print_table(frame, float_format=lambda v: f"{v:.4f}")
        print_wrapped(f"diff: mean of ({b.strategy} - opponent) per game on common dice, 95% paired interval "
                      f"diff_low to diff_high; diff_exact: of the exact means; p_win: {b.strategy} scores "
                      f"more than the opponent, each with its own dice (p_tie: the same score); method: "
                      f"exact from the two distributions, or counted on the paired games")
        for comp in b.comparisons:
            if comp["note"]:
                print_wrapped(f"  {comp['opponent']} not played: {comp['note']}", hang=4)
    acc = b.losses
    if acc is None:
        print_wrapped(f"  where the points go: not computed ({b.losses_note})")
    else:
        if acc.half_width:
            print_wrapped(f"  where the points go ({acc.method}, every decision met valued exactly): "
                          f"{acc.accounted:.4f} points per game lost (95% interval +/- "
                          f"{acc.half_width['accounted']:.4f})", hang=4)
        else:
            print_wrapped(f"  where the points go ({acc.method}): {acc.gap:.4f} points per game behind optimal "
                          f"(losses summed {acc.accounted:.4f})", hang=4)
        for k, v in acc.by_kind.items():
            print(f"    {k:<22}{v:9.4f} points per game; {acc.optimal_share[k]:.2%} of them optimal")
        print_wrapped(f"    mean loss per decision {acc.mean_loss_per_decision:.4f} points (Verhoeff's "
                      f"measure); {acc.share_optimal:.2%} of all decisions optimal", hang=4)
        worst = sorted(acc.by_box.items(), key=lambda kv: -kv[1])[:5]
        print_wrapped("    most lost in the turns filling: " + ", ".join(f"{k} {v:.3f}" for k, v in worst),
                      hang=6)
        print("    costliest positions (points per game = reach probability x loss):")
        for t in acc.top[:args.show]:
            upper = f", upper {t['upper']}" if t["upper"] is not None else ""
            print_wrapped(f"      {t['points_per_game']:.4f}: turn {t['turn']}, {t['card']}{upper}; dice "
                          f"{t['dice']}, {t['rolls_left']} rolls left: {t['choice']} instead of {t['best']} "
                          f"(loses {t['loss']:.3f}, reached with probability {t['reach']:.4f})", hang=8)
    if args.out:
        print(f"  report written to {args.out}")
    return 0


def add_commands(sub) -> None:
    """Register the ``benchmark`` subcommand."""
    from ._common import add_json_arg, add_rules_args, add_seed_arg, positive_int

    p = sub.add_parser("benchmark", help="a strategy's report card: exact or simulated score, paired "
                                         "comparisons, win rates, where it loses its points")
    p.add_argument("strategy", metavar="STRATEGY",
                   help="a strategy name (see `yahtzee-sim strategies`) or a plug-in module:Class")
    p.add_argument("--against", nargs="*", default=None, metavar="S",
                   help="strategies to compare with (default: heuristic optimal)")
    add_rules_args(p)
    p.add_argument("--games", type=positive_int, default=20_000,
                   help="simulated games per strategy for the paired comparisons (default %(default)s)")
    add_seed_arg(p)
    p.add_argument("--out", metavar="DIR", help="write the report folder (README, CSV, figures) here")
    p.add_argument("--no-losses", action="store_true", help="skip the loss accounting")
    p.add_argument("--show", type=positive_int, default=10, help="costliest positions printed (default %(default)s)")
    add_json_arg(p)
    p.set_defaults(func=cmd_benchmark)
