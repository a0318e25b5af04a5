"""The ``yahtzee-sim`` command line.

Every subcommand lives in a function ``add_<name>(subparsers)`` registering a
parser whose ``func`` does the work; bad input raises ``ValueError`` and becomes
a one-line error with exit code 2 (no traceback).

>>> build_parser().parse_args(["simulate", "--games", "1e6"]).games
1000000
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__

PROG = "yahtzee-sim"

# Modules that add subcommands (each defines ``add_commands(subparsers)``).
COMMAND_MODULES = ["yahtzee_sim.cli", "yahtzee_sim.report.cli_run", "yahtzee_sim.verify.cli_verify", "yahtzee_sim.exact.cli_odds", "yahtzee_sim.exact.cli_extremes", "yahtzee_sim.exact.cli_solve", "yahtzee_sim.exact.cli_advise"]


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, no usage dump
        where = self.prog.removeprefix(PROG).strip()
        raise UsageError(f"{where}: {message}" if where else message)


# -- shared argument helpers ------------------------------------------------------

def positive_int(text: str) -> int:
    """argparse type: an integer > 0 (underscores and 1e6 notation allowed)."""
    try:
        value = float(text.replace("_", "")) if "e" in text.lower() else int(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if not math.isfinite(value) or value != int(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(value)


def seed_int(text: str) -> int:
    """argparse type: a non-negative integer seed."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"seed must be a non-negative integer, got {text!r}")
    return value


def parse_dice(text: str, n_dice: int = 5, n_faces: int = 6) -> list[int]:
    """``"33355"`` or ``"3,3,3,5,5"`` -> ``[3, 3, 3, 5, 5]``; a clear error otherwise.

    >>> parse_dice("13356")
    [1, 3, 3, 5, 6]
    """
    parts = [p for p in text.replace(",", " ").split()] if ("," in text or " " in text) else list(text.strip())
    try:
        dice = [int(p) for p in parts]
    except ValueError:
        dice = []
    if len(dice) != n_dice or any(not 1 <= d <= n_faces for d in dice):
        raise UsageError(f"dice must be {n_dice} values in 1..{n_faces} (e.g. 33355), got {text!r}")
    return dice


def add_rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="yahtzee", help="rule set (see `yahtzee-sim rules`)")
    p.add_argument("--option", action="append", default=[], metavar="O",
                   help="rule option, repeatable (see `yahtzee-sim rules`)")


def rules_from(args):
    from .rules import get_rules

    return get_rules(args.rules, args.option)


def print_json(obj) -> None:
    print(json.dumps(_nan_to_none(obj), indent=2, default=_json_default, allow_nan=False))


def _nan_to_none(o):
    """JSON has no NaN: undefined numbers (e.g. the sd of one game) become null."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, dict):
        return {k: _nan_to_none(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_nan_to_none(v) for v in o]
    return o


def _json_default(o):
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (pd.Series, pd.DataFrame)):
        return json.loads(o.to_json())
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def check_out_path(path: str, suffixes: tuple[str, ...]) -> Path:
    """Validate an output path before any work: known suffix, writable folder."""
    out = Path(path)
    if out.suffix.lower() not in suffixes:
        raise UsageError(f"--out must end in one of {', '.join(suffixes)}, got {path!r}")
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"cannot write {path!r}: folder {str(folder)!r} does not exist")
    if out.is_dir():
        raise UsageError(f"cannot write {path!r}: it is a folder; give a file name ending in .csv or .parquet")
    if not os.access(folder, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise UsageError(f"cannot write {path!r}: permission denied")
    try:  # os.access says yes to root even on read-only or virtual file systems: try it
        fd, probe = tempfile.mkstemp(prefix=".tmp-", suffix=out.suffix, dir=folder)
    except OSError as exc:
        raise UsageError(f"cannot write {path!r}: {exc.strerror or exc}") from None
    os.close(fd)
    os.unlink(probe)
    if out.suffix.lower() == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError("parquet output needs pyarrow: pip install pyarrow (or use .csv)") from None
    return out


def write_frame_atomically(frame: pd.DataFrame, out: Path) -> None:
    """Write to a temporary file beside ``out`` and rename: never a partial file."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=out.suffix, dir=out.parent if str(out.parent) else ".")
    os.close(fd)
    try:
        if out.suffix.lower() == ".parquet":
            frame.to_parquet(tmp)
        else:
            frame.to_csv(tmp)
        os.replace(tmp, out)
    except OSError as exc:  # e.g. disk full: still one line, no partial file
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"cannot write {str(out)!r}: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# -- core subcommands -------------------------------------------------------------

def cmd_rules(args) -> int:
    from .rules import REGISTRY, get_rules

    rows = []
    for name, spec in REGISTRY.items():
        r = get_rules(name)
        rows.append({"name": name, "boxes": r.n_boxes, "summary": spec.summary,
                     "options": ", ".join(spec.options) or "-"})
    if args.json:
        print_json({name: {"summary": spec.summary, "boxes": list(get_rules(name).box_names),
                           "options": spec.options} for name, spec in REGISTRY.items()})
        return 0
    print(pd.DataFrame(rows).to_string(index=False))
    print()
    for name, spec in REGISTRY.items():
        for opt, text in spec.options.items():
            print(f"  {name} --option {opt}: {text}")
    return 0


def cmd_strategies(args) -> int:
    from .strategies import STRATEGIES

    if args.json:
        print_json({n: c.description for n, c in STRATEGIES.items()})
        return 0
    print(pd.DataFrame([{"name": n, "description": c.description} for n, c in STRATEGIES.items()])
          .to_string(index=False))
    return 0


def cmd_score(args) -> int:
    rules = rules_from(args)
    if args.all == (args.dice is not None):
        raise UsageError("give either --dice (e.g. --dice 33355) or --all")
    if args.all:
        d = rules.dice
        frame = pd.DataFrame(rules.score_table, columns=list(rules.box_names))
        frame.insert(0, "dice", ["".join(map(str, row)) for row in d.roll_dice])
        frame.insert(1, "probability", d.first_roll_prob)
        if args.json:
            print_json({"rules": rules.key, "rolls": frame.to_dict(orient="records")})
        else:
            print(frame.to_string(index=False))
        return 0
    dice = parse_dice(args.dice, rules.n_dice, rules.n_faces)
    scores = rules.score_dice(dice)
    if args.json:
        print_json({"rules": rules.key, "dice": dice, "scores": scores})
    else:
        labels = {b.name: b.label for b in rules.boxes}
        print(f"{rules.title} ({rules.key}), dice {' '.join(map(str, dice))}, fresh card")
        print(pd.DataFrame({"box": [labels[n] for n in scores], "name": list(scores),
                            "points": list(scores.values())}).to_string(index=False))
    return 0


def _summary_json(res, options) -> dict:
    s = res.summary()
    return {
        "rules": res.rules.name, "options": list(options), "strategy": res.strategy,
        "games": s["games"], "seed": s["seed"], "mean": s["mean"], "sd": s["sd"], "se": s["se"],
        "ci95": [s["ci95_low"], s["ci95_high"]], "min": s["min"], "max": s["max"],
        "percentiles": {f"p{p}": s[f"p{p}"] for p in (1, 5, 25, 50, 75, 95, 99)},
        "upper_bonus_rate": s["upper_bonus_rate"], "yahtzee_box_50_rate": s["five_box_50_rate"],
        "five_per_game": s["five_per_game"], "seconds": s["seconds"],
    }


def cmd_simulate(args) -> int:
    from .engine import simulate

    rules = rules_from(args)
    from .strategies import get_strategy

    strategy = get_strategy(args.strategy)
    out = check_out_path(args.out, (".csv", ".parquet")) if args.out else None
    from .parallel import run_kwargs

    res = simulate(rules, strategy, args.games, seed=args.seed, batch=args.batch,
                   keep_games=out is not None or None, progress=not args.json, **run_kwargs(args))
    if out is not None:
        write_frame_atomically(res.to_frame(), out)
    if args.json:
        print_json(_summary_json(res, rules.options))
        return 0
    s = res.summary()
    print(f"{rules.title} ({rules.key}) under {res.strategy}: {s['games']:,} games, seed {s['seed']}")
    rows = [
        ("mean", f"{s['mean']:.3f}"), ("sd", f"{s['sd']:.3f}"), ("standard error", f"{s['se']:.4f}"),
        ("95% CI of the mean", f"{s['ci95_low']:.3f} .. {s['ci95_high']:.3f}"),
        ("min", s["min"]), *[(f"p{p}", s[f"p{p}"]) for p in (1, 5, 25, 50, 75, 95, 99)], ("max", s["max"]),
        ("upper bonus rate", f"{s['upper_bonus_rate']:.4f}"),
        (f"games with 50 in {rules.five_box or 'five box'}", f"{s['five_box_50_rate']:.4f}"),
        ("five of a kind per game", f"{s['five_per_game']:.4f}"),
        ("seconds", f"{s['seconds']:.2f}"),
    ]
    print(pd.DataFrame(rows, columns=["statistic", "value"]).to_string(index=False))
    if out is not None:
        print(f"per-game table written to {out}")
    return 0


def cmd_turns(args) -> int:
    from .engine import simulate_turns

    rules = rules_from(args)
    from .strategies import get_strategy

    from .parallel import run_kwargs

    res = simulate_turns(rules, get_strategy(args.strategy), args.turns, seed=args.seed,
                         progress=not args.json, target=args.target, **run_kwargs(args))
    frame = res.to_frame()
    if args.json:
        print_json({"rules": rules.name, "options": list(rules.options), "strategy": res.strategy,
                    "target": args.target, "turns": res.n_turns, "seed": res.seed, "seconds": res.seconds,
                    "patterns": frame.reset_index().to_dict(orient="records")})
        return 0
    print(f"{rules.title} ({rules.key}): {res.n_turns:,} single turns under {res.strategy}, seed {res.seed}")
    print(frame.to_string(float_format=lambda v: f"{v:.6f}"))
    return 0


def add_commands(sub) -> None:
    from .parallel import add_run_args
    from .strategies import strategy_names

    p = sub.add_parser("rules", help="list rule sets and their options")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser("strategies", help="list strategies")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("score", help="score one roll (or all rolls) on a fresh card")
    add_rules_args(p)
    p.add_argument("--dice", help="five dice, e.g. 33355")
    p.add_argument("--all", action="store_true", help="the table of every roll")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("simulate", help="simulate complete games")
    add_rules_args(p)
    p.add_argument("--strategy", default="keep-largest", help=f"one of: {', '.join(strategy_names())}")
    p.add_argument("--games", type=positive_int, default=100_000)
    p.add_argument("--seed", type=seed_int, default=None)
    p.add_argument("--batch", type=positive_int, default=65536, help="games played at once")
    p.add_argument("--out", help="per-game table to FILE.csv or FILE.parquet")
    p.add_argument("--json", action="store_true")
    add_run_args(p)
    p.set_defaults(func=cmd_simulate)

    p = sub.add_parser("turns", help="pattern frequencies of single turns")
    add_rules_args(p)
    p.add_argument("--strategy", default="keep-largest")
    p.add_argument("--turns", type=positive_int, default=1_000_000)
    p.add_argument("--seed", type=seed_int, default=None)
    p.add_argument("--target", metavar="PATTERN", default=None,
                   help="keep what maximizes the exact chance of PATTERN (overrides the strategy's keeps)")
    p.add_argument("--json", action="store_true")
    add_run_args(p)
    p.set_defaults(func=cmd_turns)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description="Exact and simulated answers about Yahtzee-family dice games.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_commands(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``yahtzee-sim`` console script; returns the exit code."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except (ValueError, argparse.ArgumentTypeError) as exc:  # bad input: one line, exit 2
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # RunInterrupted says how much was done
        print(f"{PROG}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
