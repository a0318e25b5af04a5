"""``yahtzee-sim simulate``: complete games under one strategy, summarized with intervals.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["simulate", "--games", "1e6"]).games
1000000
"""

from __future__ import annotations

from ._common import add_command, add_json_arg, add_run_args, add_seed_arg, add_strategy_arg, check_out_path, \
    positive_int, print_json, print_table, rules_from, rules_heading, run_kwargs


def _summary_json(res) -> dict:
    """The JSON of ``simulate``: :meth:`SimulationResult.summary` with the same names,
    plus the options applied, and the earlier names of renamed numbers beside the new ones
    (``five_box_50_rate``: users' scripts read it; deprecated, see the changelog)."""
    s = res.summary()
    out = {"rules": s["rules"], "options": list(res.rules.options), **s}
    for old, new in s.ALIASES.items():
        if new in s and old.startswith("five_box_50"):
            out[old] = s[new]
    return out


def _summary_tables(s) -> list[tuple[str, list[tuple[str, str, str]]]]:
    """(heading, rows of label, value, 95% interval) of the ``simulate`` output: the final
    score, then the events this game has (:meth:`SimulationResult.events`) as shares of
    games, then the counts and scores per game; each simulated number with its interval."""
    from ..results import ci_of

    score = [("mean", f"{s['mean']:.3f}", f"{s['ci95_low']:.3f} .. {s['ci95_high']:.3f}"),
             ("sd", f"{s['sd']:.3f}", ""), ("standard error of the mean", f"{s['se']:.4f}", ""),
             ("min", str(s["min"]), ""), *[(f"p{p}", str(s[f"p{p}"]), "") for p in (1, 5, 25, 50, 75, 95, 99)],
             ("max", str(s["max"]), "")]
    rates, means = [], []
    for key, value in s.items():
        if ci_of(key) or not (key.endswith("_rate") or key.endswith("_mean") or key == "points_sd"):
            continue
        digits = 4 if s.kind(key) in ("rate", "mean count") else 3
        low, high = s.get(f"{key}_ci95_low"), s.get(f"{key}_ci95_high")
        ci = f"{low:.{digits}f} .. {high:.{digits}f}" if low is not None and high is not None else ""
        (rates if key.endswith("_rate") else means).append((s.label(key), f"{value:.{digits}f}", ci))
    return [("final score", score), ("share of games with", rates), ("mean per game", means)]


def cmd_simulate(args) -> int:
    import pandas as pd

    from ..api import simulate

    rules = rules_from(args)
    from ..strategies import get_strategy

    strategy = get_strategy(args.strategy)
    out = check_out_path(args.out, (".csv", ".parquet")) if args.out is not None else None

    # The per-game table is streamed to --out chunk by chunk while the games are played.
    res = simulate(rules, strategy, args.games, seed=args.seed, batch=args.batch, out=out,
                   progress=not args.json, **run_kwargs(args))
    if args.json:
        print_json(_summary_json(res))
        return 0
    s = res.summary()
    print(f"{rules_heading(rules)} under {res.strategy}: {s['games']:,} games, seed {s['seed']}")
    for i, (heading, rows) in enumerate(_summary_tables(s)):
        if rows:
            if i:
                print()
            print_table(pd.DataFrame(rows, columns=[heading, "value", "95% CI"]), index=False,
                        justify="left", formatters={heading: f"{{:<{max(len(r[0]) for r in rows)}}}".format})
    print(f"seconds: {s['seconds']:.2f}")
    if out is not None:
        print(f"per-game table written to {out}")
    return 0


def add_commands(sub) -> None:
    """Register the ``simulate`` subcommand."""
    p = add_command(sub, "simulate", "simulate complete games", cmd_simulate, rules=True)
    add_strategy_arg(p, default="keep-largest")
    p.add_argument("--games", type=positive_int, default=100_000, help="games to play (1e6 and 1_000_000 work)")
    add_seed_arg(p)
    p.add_argument("--batch", type=positive_int, default=65536,
                   help="games played at once (memory ~0.5 kB each; results do not depend on it)")
    p.add_argument("--out", help="per-game table to FILE.csv or FILE.parquet")
    add_json_arg(p)
    add_run_args(p)
