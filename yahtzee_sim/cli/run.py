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
    options = run_kwargs(args)
    folder = _checkpoint_folder(options.pop("checkpoint"), specs)
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
            run_options = dict(options, progress=step)
            if folder is not None and _plays_to_win(spec):
                run_options["checkpoint_folder"] = str(folder)
            report = run_experiment(spec, command=command, run_options=run_options)
        out = write_report(report, root / spec.name)
        written.append(str(out))
        if not args.json:
            print(f"{spec.name}: report written to {out / 'README.md'}", file=sys.stdout)
    if args.json:
        print_json({"reports": written})
    return 0


def _plays_to_win(spec) -> bool:
    """Whether ``spec`` plays the paired play-to-win tables (the runs a checkpoint folder holds)."""
    return spec.kind == "head-to-head" and ("play-to-win" in spec.tables or "play-to-win" in spec.plots)


def _checkpoint_folder(value, specs):
    """The ``--checkpoint`` folder of ``run``: an existing, writable folder, and only for specs
    that play the play-to-win tables (each table's completed chunks go in a file of their own).

    >>> _checkpoint_folder(None, []) is None
    True
    """
    import os
    from pathlib import Path

    if value is None:
        return None
    if not any(_plays_to_win(s) for s in specs):
        raise ValueError("--checkpoint saves the play-to-win tables of head-to-head specs, and none of these "
                         "specs plays them: drop --checkpoint")
    if not str(value).strip():
        raise ValueError("--checkpoint is empty: give a folder, e.g. checkpoints/")
    folder = Path(value)
    if not folder.is_dir():
        raise ValueError(f"--checkpoint {str(folder)!r} is not a folder: with run it names an existing folder, "
                         "which holds one checkpoint file per play-to-win table (create it first)")
    if not os.access(folder, os.W_OK):
        raise ValueError(f"cannot write checkpoints in {str(folder)!r}: permission denied")
    return folder


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
    p.add_argument("--checkpoint", metavar="FOLDER", default=None,
                   help="save the play-to-win tables' completed chunks in FOLDER (one file per table, "
                        "SPEC-play-to-win-K.json); rerun the same command to resume")
    p.set_defaults(func=cmd_run)
