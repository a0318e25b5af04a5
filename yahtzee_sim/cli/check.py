"""``yahtzee-sim check FILE.toml``: the claims of a writer's file, each with its exact
value, a simulated cross-check and a verdict (format: docs/questions.md).

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["check", "mine.toml", "--games", "5000"])
>>> a.file, a.games, a.out
('mine.toml', 5000, None)
"""

from __future__ import annotations

import shlex


def cmd_check(args) -> int:
    from ..questions.claims import check_claims, load_claims_file
    from ._common import print_json, print_wrapped, progress_for

    claims = load_claims_file(args.file)          # a malformed file: one line, before any work
    out_dir = None
    if args.out is not None:
        from ..report.output import check_output_root, check_replaceable

        out_dir = check_output_root(args.out)
        check_replaceable(out_dir)
    with progress_for(args) as progress:
        result = check_claims(claims, games=args.games, throws=args.throws, seed=args.seed, progress=progress)
    if out_dir is not None:
        from ..report.document import write_report

        command = (f"yahtzee-sim check {shlex.quote(args.file)} --games {args.games} --throws {args.throws} "
                   f"--seed {args.seed} --out {shlex.quote(args.out)}")
        from ..report.claims import claims_report

        write_report(claims_report(result, command), out_dir)
    if args.json:
        print_json(result.to_json())
        return 0
    print(f"{claims.title} ({len(claims.claims)} claims; simulations: {args.games:,} games, {args.throws:,} "
          f"throws, seed {args.seed})")
    for c, a in zip(claims.claims, result.answers):
        print_wrapped(f"{c.id}: {a.verdict}", hang=4)
        if c.quote:
            print_wrapped(f"“{c.quote}”", indent="    ", hang=2)
        found = [f"claim {a.claimed_text}"]
        if a.exact is not None:
            found.append(f"exact {a.exact_text}")
        if a.estimate is not None:
            found.append(f"simulated {a.simulated_text}")
        print_wrapped("; ".join(found), indent="    ", hang=2)
        print_wrapped(f"how: {a.method}" + (f" (note: {a.note})" if a.note else ""), indent="    ", hang=2)
    counts: dict[str, int] = {}
    for a in result.answers:
        counts[a.verdict] = counts.get(a.verdict, 0) + 1
    print()
    print("verdicts: " + ", ".join(f"{v} {n}" for v, n in counts.items()))
    if out_dir is not None:
        print(f"report written to {out_dir / 'README.md'}")
    return 0


def add_commands(sub) -> None:
    from ._common import add_json_arg, add_seed_arg, positive_int

    p = sub.add_parser("check", help="check the claims of your own TOML file (exact, simulated, verdict)",
                       description="Evaluate every claim of FILE.toml: the exact value, a simulated cross-check "
                                   "with its 95% interval, a verdict and how it was computed. The format and the "
                                   "vocabulary: docs/questions.md; examples: experiments/claims/.")
    p.add_argument("file", metavar="FILE.toml", help="the claims file")
    p.add_argument("--out", default=None,
                   help="also write a report folder (README.md with the verdict table and how each number was "
                        "computed, claims.csv); replaced only if missing, empty or written by yahtzee-sim")
    p.add_argument("--games", type=positive_int, default=20_000,
                   help="simulated games or tables per game or table claim (default: %(default)s)")
    p.add_argument("--throws", type=positive_int, default=100_000,
                   help="simulated throws, positions or turns per roll, position or turn claim (default: %(default)s)")
    add_seed_arg(p, default=2026)
    add_json_arg(p)
    p.set_defaults(func=cmd_check)
