"""``yahtzee-sim run experiments/NAME.toml``: run an experiment, write its report."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def cmd_run(args) -> int:
    from ._common import print_json
    from ..report.document import write_report
    from ..report.experiment import load_spec
    from ._common import run_kwargs
    from ..report.runners import run_experiment

    specs = [load_spec(p).scaled(args.games) for p in args.spec]  # validate all before running any
    written = []
    for spec in specs:
        command = "yahtzee-sim run " + shlex.quote(spec.source) + (f" --games {args.games}" if args.games else "")
        report = run_experiment(spec, command=command, run_options=run_kwargs(args))
        out = write_report(report, Path(args.out) / spec.name)
        written.append(str(out))
        if not args.json:
            print(f"{spec.name}: report written to {out / 'README.md'}", file=sys.stdout)
    if args.json:
        print_json({"reports": written})
    return 0


def add_commands(sub) -> None:
    from ._common import positive_int
    from ._common import add_json_arg, add_run_args

    p = sub.add_parser("run", help="run experiment spec files and write their reports")
    p.add_argument("spec", nargs="+", help="experiments/NAME.toml")
    p.add_argument("--games", type=positive_int, default=None, help="override the spec's number of games")
    p.add_argument("--out", default="reports", help="folder for the reports")
    add_json_arg(p)
    add_run_args(p, checkpoint=False)
    p.set_defaults(func=cmd_run)
