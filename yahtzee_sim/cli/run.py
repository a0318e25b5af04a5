"""``yahtzee-sim run experiments/NAME.toml``: run an experiment, write its report."""

from __future__ import annotations

import shlex
import sys


def cmd_run(args) -> int:
    from ..report.document import write_report
    from ..report.experiment import load_spec
    from ..report.output import check_output_root, check_replaceable
    from ..report.runners import run_experiment
    from ..progress import heartbeat
    from ._common import print_json, progress_for, run_kwargs

    # Everything that can be refused is refused before the first game is played.
    specs = [load_spec(p).scaled(args.games) for p in args.spec]
    root = check_output_root(args.out)
    by_name: dict[str, str] = {}
    for spec in specs:
        if spec.name in by_name:
            raise ValueError(f"{by_name[spec.name]} and {spec.source} both write the report {spec.name!r}: "
                             "give one of them another name")
        by_name[spec.name] = spec.source
        check_replaceable(root / spec.name)
    written = []
    for i, spec in enumerate(specs):
        command = "yahtzee-sim run " + shlex.quote(spec.source) + (f" --games {args.games}" if args.games else "")
        # The spec's phase and time spent; each simulation inside it shows a bar with ETA.
        with progress_for(args) as progress, heartbeat(progress, f"{spec.name} ({i + 1}/{len(specs)})") as step:
            report = run_experiment(spec, command=command, run_options=dict(run_kwargs(args), progress=step))
        out = write_report(report, root / spec.name)
        written.append(str(out))
        if not args.json:
            print(f"{spec.name}: report written to {out / 'README.md'}", file=sys.stdout)
    if args.json:
        print_json({"reports": written})
    return 0


def add_commands(sub) -> None:
    from ._common import add_json_arg, add_run_args, positive_int

    p = sub.add_parser("run", help="run experiment spec files and write their reports")
    p.add_argument("spec", nargs="+", help="experiments/NAME.toml")
    p.add_argument("--games", type=positive_int, default=None, help="override the spec's number of games")
    p.add_argument("--out", default="reports",
                   help="folder for the reports, one subfolder per spec name (default: reports/); an existing "
                        "subfolder is replaced only if yahtzee-sim wrote it")
    add_json_arg(p)
    add_run_args(p, checkpoint=False)
    p.set_defaults(func=cmd_run)
