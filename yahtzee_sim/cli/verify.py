"""``yahtzee-sim verify``: every claim of the seeds, evaluated, with a verdict."""

from __future__ import annotations

import shlex


def cmd_verify(args) -> int:
    import pandas as pd

    from ..report.experiment import parse_spec
    from ..verify import Context, check_claim_ids, verify_claims
    from ._common import print_json, run_kwargs

    only = check_claim_ids(args.only) if args.only is not None else None
    # The checks of a claims spec (sizes, seed), before any work; the report is named claims.
    spec = parse_spec({"kind": "claims", "name": "claims", "games": args.games, "turns": args.turns,
                       "seed": args.seed}, name="verify")
    ctx = Context(games=args.games, turns=args.turns, seed=args.seed, run_options=run_kwargs(args))
    if args.out is not None:
        from ..report.document import write_report
        from ..report.output import check_output_root, check_replaceable
        from ..report.runners import run_experiment

        out_dir = check_output_root(args.out)  # before any work: a bad folder fails in a second, not in minutes
        check_replaceable(out_dir)
        command = (f"yahtzee-sim verify --games {args.games} --turns {args.turns} --seed {args.seed}"
                   + "".join(f" --only {shlex.quote(o)}" for o in only or ()) + f" --out {shlex.quote(args.out)}")
        report = run_experiment(spec, command=command, context=ctx, only=only)
        out = write_report(report, out_dir)
        frame = report.data["claims"]
    else:
        frame = verify_claims(ctx, only=only)
    if args.json:
        print_json({"games": args.games, "turns": args.turns, "seed": args.seed,
                    "claims": frame.reset_index().to_dict(orient="records")})
        return 0
    with pd.option_context("display.max_colwidth", 48, "display.width", 200):
        shown = frame[["seed", "claim", "exact_text", "simulated_text", "verdict"]]
        print(shown.rename(columns={"exact_text": "exact", "simulated_text": "simulated (95% CI)"}).to_string())
    print()
    print(frame["verdict"].value_counts().to_string())
    if args.out is not None:
        print(f"report written to {out / 'README.md'}")
    return 0


def add_commands(sub) -> None:
    from ._common import add_run_args, positive_int, seed_int

    p = sub.add_parser("verify", help="check every numeric claim of the seed documents")
    p.add_argument("--games", type=positive_int, default=100_000, help="games per simulated strategy")
    p.add_argument("--turns", type=positive_int, default=1_000_000, help="single turns per simulated turn claim")
    p.add_argument("--seed", type=seed_int, default=2026)
    p.add_argument("--only", action="append", default=None, metavar="ID", help="claim ids starting with ID")
    p.add_argument("--out", default=None,
                   help="also write the report to this folder (replaced only if missing, empty or written by "
                        "yahtzee-sim)")
    p.add_argument("--json", action="store_true")
    add_run_args(p, checkpoint=False)
    p.set_defaults(func=cmd_verify)
