"""``yahtzee-sim verify``: every claim of the source documents, evaluated, with a verdict.

The claims are a claims file shipped with the package, answered by the same code as
``yahtzee-sim check`` (yahtzee_sim.verify, yahtzee_sim.questions)."""

from __future__ import annotations

import shlex


def cmd_verify(args) -> int:
    from ..report.experiment import parse_spec
    from ..verify import Context, check_claim_ids, verify_claims
    from ..progress import heartbeat
    from ._common import print_json, progress_for, run_kwargs

    only = check_claim_ids(args.only) if args.only is not None else None
    # The checks of a claims spec (sizes, seed), before any work; the report is named claims.
    spec = parse_spec({"kind": "claims", "name": "claims", "games": args.games, "turns": args.turns,
                       "seed": args.seed}, name="verify")
    run_options = run_kwargs(args)  # each simulation's bar comes in below, through run_options
    ctx = Context(games=args.games, turns=args.turns, seed=args.seed, run_options=run_options)
    if args.out is not None:
        from ..report.document import write_report
        from ..report.output import check_output_root, check_replaceable
        from ..report.runners import run_experiment

        out_dir = check_output_root(args.out)  # before any work: a bad folder fails in a second, not in minutes
        check_replaceable(out_dir)
        command = (f"yahtzee-sim verify --games {args.games} --turns {args.turns} --seed {args.seed}"
                   + "".join(f" --only {shlex.quote(o)}" for o in only or ()) + f" --out {shlex.quote(args.out)}")
        with progress_for(args) as progress, heartbeat(progress, "checking the sources' claims") as step:
            run_options["progress"] = step
            report = run_experiment(spec, command=command, context=ctx, only=only)
        out = write_report(report, out_dir)
        frame = report.data["claims"]
    else:
        with progress_for(args) as progress, heartbeat(progress, "checking the sources' claims") as step:
            run_options["progress"] = step
            frame = verify_claims(ctx, only=only)
    if args.json:
        print_json({"games": args.games, "turns": args.turns, "seed": args.seed,
                    "claims": frame.reset_index().to_dict(orient="records")})
        return 0
    _print_claims(frame)
    print()
    print(frame["verdict"].value_counts().to_string())
    if args.out is not None:
        print(f"report written to {out / 'README.md'}")
    return 0


def _print_claims(frame) -> None:
    """One block per claim, wrapped to the terminal: id, source and verdict, then the
    claim and what was found (exact, simulated with its 95% interval), as
    ``verify_claims`` words them."""
    from ._common import print_wrapped

    def given(value) -> bool:
        return value is not None and str(value).strip() not in ("", "nan", "None", "<NA>")

    for claim_id, row in frame.iterrows():
        print_wrapped(f"{claim_id} (source {row['source_id']}): {row['verdict']}", hang=4)
        found = [f"claim {row['claim']}"]
        if given(row.get("exact_text")):
            found.append(f"exact {row['exact_text']}")
        if given(row.get("simulated_text")):
            found.append(f"simulated {row['simulated_text']}")
        print_wrapped("; ".join(found), indent="    ", hang=2)


def add_commands(sub) -> None:
    from ._common import add_json_arg, add_run_args, add_seed_arg, positive_int

    p = sub.add_parser("verify", help="check every numeric claim of the source documents")
    p.add_argument("--games", type=positive_int, default=100_000, help="games per simulated strategy")
    p.add_argument("--turns", "--throws", dest="turns", type=positive_int, default=1_000_000,
                   help="simulated throws, positions or turns per roll, position or turn claim (--throws as in "
                        "yahtzee-sim check)")
    add_seed_arg(p, default=2026)
    p.add_argument("--only", action="append", default=None, metavar="ID", help="claim ids starting with ID")
    p.add_argument("--out", default=None,
                   help="also write the report to this folder (replaced only if missing, empty or written by "
                        "yahtzee-sim)")
    add_json_arg(p)
    add_run_args(p, checkpoint=False)
    p.set_defaults(func=cmd_verify)
