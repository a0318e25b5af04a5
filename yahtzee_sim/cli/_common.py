"""Shared pieces of the command line: argument types, rule-set arguments, JSON output,
tables that fit the terminal, progress on stderr, output-path checks and the
parallel-run arguments.

Only the command modules of this package import it; the library never does.

>>> positive_int("1e6")
1000000
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import textwrap
from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

PROG = "yahtzee-sim"


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


class HelpFormatter(argparse.HelpFormatter):
    """Shows ``(default: X)`` after every option's help, unless the help already
    speaks of its default or there is nothing to show (flags, no default)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("default" in text or not action.option_strings or default in (None, False, [], argparse.SUPPRESS)
                or isinstance(action, (argparse._HelpAction, argparse._VersionAction))):
            return text
        shown = ", ".join(map(str, default)) if isinstance(default, (list, tuple)) else default
        return f"{text} (default: {shown})"


class Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):  # one line, no usage dump
        where = self.prog.removeprefix(PROG).strip()
        raise UsageError(f"{where}: {message}" if where else message)


STRATEGY_HELP = "one of: {names}; or module:Class, your own Strategy subclass"
"""The help of a ``--strategy`` option (``names``: the registry's names)."""

# -- shared argument helpers ------------------------------------------------------

def positive_int(text: str) -> int:
    """argparse type: an integer > 0 (underscores and 1e6 notation allowed).

    A number in 1e6 or 2.5e3 notation must be one a float holds exactly (as it would
    be in a TOML spec or JSON): ``1e30`` is refused rather than read as
    1000000000000000019884624838656.

    >>> positive_int("2.5e3"), positive_int("1_000")
    (2500, 1000)
    """
    import re

    text = text.strip()
    # underscores only group the digits of a plain integer (1_000_000), as in Python: in
    # 1e1_0 they would make an exponent of 10 out of what reads as 1e1 and 0
    if "_" in text and not re.fullmatch(r"\d+(_\d+)*", text):
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}: underscores may only group "
                                         "the digits of a whole number (1_000_000)")
    clean = text.replace("_", "")
    try:
        if clean.isdigit():
            value = int(clean)
        else:
            number = float(clean)
            value = int(number) if math.isfinite(number) and number == int(number) else None
            if value is not None and value > 2**53 and not _reads_exactly(clean, value):
                raise argparse.ArgumentTypeError(
                    f"expected a positive integer, got {text!r}, which a float cannot hold exactly "
                    f"(it reads as {value}); write the number out in digits")
    except ValueError:
        value = None
    if value is None or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def count_int(text: str) -> int:
    """argparse type: a number of games or turns, as :func:`positive_int`, at most
    :data:`yahtzee_sim.limits.MAX_GAMES` (a run beyond it would not end).

    >>> count_int("1e6")
    1000000
    """
    from ..limits import MAX_GAMES

    value = positive_int(text)
    if value > MAX_GAMES:
        raise argparse.ArgumentTypeError(f"{value:,} is more than any run can finish (at most {MAX_GAMES:,})")
    return value


def _reads_exactly(text: str, value: int) -> bool:
    from decimal import Decimal, InvalidOperation

    try:
        return Decimal(text) == value
    except InvalidOperation:  # pragma: no cover - float() accepted it
        return False


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


def add_command(sub, name: str, help: str, func, *, rules: bool = False) -> argparse.ArgumentParser:
    """The parser of one subcommand: its name and one-line help, the rule-set arguments
    first when it reads a rule set (``rules``), and ``func`` to run; each command module's
    ``add_commands`` adds its own options after these, in the order ``--help`` shows.

    >>> sub = Parser(prog=PROG).add_subparsers()
    >>> p = add_command(sub, "demo", "a demo", print, rules=True)
    >>> p.parse_args(["--rules", "yacht"]).rules, p.get_default("func") is print
    ('yacht', True)
    """
    p = sub.add_parser(name, help=help)
    if rules:
        add_rules_args(p)
    p.set_defaults(func=func)
    return p


def add_strategy_arg(p: argparse.ArgumentParser, *, default: str | None = None, required: bool = False,
                     lead: str = "") -> None:
    """``--strategy``: one of the registry's names or ``module:Class``, its help led by
    ``lead`` (what the strategy is for in this command).

    >>> p = Parser(prog=PROG)
    >>> add_strategy_arg(p, default="greedy")
    >>> p.parse_args([]).strategy
    'greedy'
    """
    from ..strategies import strategy_names

    p.add_argument("--strategy", default=default, required=required,
                   help=lead + STRATEGY_HELP.format(names=", ".join(strategy_names())))


def print_fields(rows, width: int) -> None:
    """Print ``(label, text)`` rows as the exact commands show their results: indented
    two spaces, each label padded to ``width`` columns so the values line up.

    >>> print_fields([("expected score", "254.5896"), ("states", "1,234")], 17)
      expected score   254.5896
      states           1,234
    """
    for label, text in rows:
        print(f"  {label:<{width}}{text}")


def add_json_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true",
                   help="print the result as JSON (numbers as numbers) on stdout; no progress bar")


def add_seed_arg(p: argparse.ArgumentParser, default: int | None = None) -> None:
    fresh = "" if default is not None else " (default: a fresh seed below 10**9, printed with the result)"
    p.add_argument("--seed", type=seed_int, default=default,
                   help="seed of the random numbers: the same seed gives the same results" + fresh)


def add_rules_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rules", default="yahtzee",
                   help="rule set: a name, a key the tool printed (yacht+no-bonus) or a house-rules "
                        ".toml file; list: `yahtzee-sim rules` (default: %(default)s)")
    p.add_argument("--option", action="append", default=[], metavar="O",
                   help="rule option, repeatable, or several joined with + (see `yahtzee-sim rules`)")
    p.add_argument("--faces", type=int, default=None, metavar="N",
                   help="faces per die, 2..12, for rule sets that take faces-N (default: 6)")


def rules_from(args):
    from ..rules import get_rules

    return get_rules(args.rules, args.option, faces=getattr(args, "faces", None))


def rules_heading(rules) -> str:
    """The rule set as the first line of a command's output names it: its title, then
    the options applied and, in brackets, the key that ``--rules`` accepts back.

    >>> from yahtzee_sim.rules import get_rules
    >>> rules_heading(get_rules("yahtzee", ["no-joker"]))
    'Yahtzee (official, forced joker) with no-joker [yahtzee+no-joker]'
    >>> rules_heading(get_rules("yacht"))
    'Yacht (Japanese)'
    """
    from ..rules import REGISTRY

    if rules.options:
        return f"{rules.title} with {', '.join(rules.options)} [{rules.key}]"
    return rules.title if rules.name in REGISTRY else f"{rules.title} [{rules.key}]"  # e.g. a house-rules file


# -- terminal output ----------------------------------------------------------------

def terminal_width() -> int:
    """Columns of the terminal (``$COLUMNS`` first; 80 when stdout is not a terminal)."""
    return max(40, shutil.get_terminal_size((80, 24)).columns)


def print_table(frame, **to_string) -> None:
    """Print a DataFrame whose columns wrap onto further blocks to fit the terminal.

    >>> import pandas as pd
    >>> print_table(pd.DataFrame({"a": [1], "b": [2]}), index=False)
     a  b
     1  2
    """
    print(frame.to_string(line_width=terminal_width(), **to_string))


def print_wrapped(text: str, indent: str = "", hang: int = 2) -> None:
    """Print a paragraph wrapped to the terminal width, continuation lines indented
    ``hang`` more than the first.

    >>> print_wrapped("a " * 50)  # doctest: +NORMALIZE_WHITESPACE
    a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a a
      a a a a a a a a a a a
    """
    print(textwrap.fill(text, width=terminal_width(), initial_indent=indent,
                        subsequent_indent=indent + " " * hang, break_on_hyphens=False))


def progress_for(args):
    """The progress display of a command: a bar on stderr when it is a terminal and
    the output is not ``--json``; off a terminal (a file, a pipe, a notebook), plain
    phase lines on stderr once the work has run ten seconds; silent on a terminal with
    ``--json`` (see :mod:`yahtzee_sim.progress`)."""
    from ..progress import TerminalProgress, off_terminal, silent

    if not sys.stderr.isatty():
        return off_terminal()
    if getattr(args, "json", False):
        return silent
    return TerminalProgress()


def call_with_progress(func, progress, phase: str, *args, **kwargs):
    """``func(*args, progress=progress, **kwargs)`` if ``func`` takes ``progress=``;
    otherwise ``func(*args, **kwargs)`` with a :func:`yahtzee_sim.progress.heartbeat`
    showing ``phase`` and the time spent."""
    import inspect

    from ..progress import heartbeat

    if "progress" in inspect.signature(func).parameters:
        return func(*args, progress=progress, **kwargs)
    with heartbeat(progress, phase):
        return func(*args, **kwargs)


# -- JSON ---------------------------------------------------------------------------

def json_fraction(f: Fraction) -> dict:
    """An exact fraction as JSON: numerator, denominator and its float value.

    >>> json_fraction(Fraction(1, 1296))
    {'numerator': 1, 'denominator': 1296, 'value': 0.0007716049382716049}
    """
    f = Fraction(f)
    return {"numerator": f.numerator, "denominator": f.denominator, "value": float(f)}


def print_json(obj) -> None:
    """Print ``obj`` as JSON: NumPy numbers as numbers, NaN/inf as null, every
    :class:`fractions.Fraction` as :func:`json_fraction`, tables as records.

    >>> print_json({"p": Fraction(1, 4), "n": float("nan")})
    {
      "p": {
        "numerator": 1,
        "denominator": 4,
        "value": 0.25
      },
      "n": null
    }
    """
    print(json.dumps(_nan_to_none(obj), indent=2, default=_json_default, allow_nan=False))


def _nan_to_none(o):
    """JSON has no NaN: undefined numbers (e.g. the sd of one game) become null."""
    if isinstance(o, float) and not math.isfinite(o):
        return None
    if isinstance(o, Fraction):
        return json_fraction(o)
    if isinstance(o, dict):
        return {k: _nan_to_none(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_nan_to_none(v) for v in o]
    return o


def _json_default(o):
    import numpy as np
    import pandas as pd

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return None if math.isnan(o) else float(o)
    if isinstance(o, np.ndarray):
        return _nan_to_none(o.tolist())
    if isinstance(o, pd.DataFrame):
        return _nan_to_none(o.reset_index().to_dict(orient="records")
                            if o.index.name or o.index.names[0] else o.to_dict(orient="records"))
    if isinstance(o, pd.Series):
        return _nan_to_none(o.to_dict())
    if isinstance(o, Mapping):
        return _nan_to_none(dict(o))
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def check_out_path(path: str, suffixes: tuple[str, ...]) -> Path:
    """Validate an ``--out`` path before any work (the library's check, in the flag's words)."""
    from ..runner.rows import check_out

    try:
        return check_out(path, suffixes=suffixes)
    except ValueError as exc:
        text = str(exc)
        raise UsageError("--" + text if text.startswith("out ") else text) from None


class _OldSpelling(argparse.Action):
    """An option's old name: it sets the new one's value and says, on one line of stderr,
    that the name changed (users' scripts keep working)."""

    def __init__(self, option_strings, dest, new: str = "", **kwargs):
        self.new = new
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{PROG}: note: {option_string} is now {self.new}; the old name will go", file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_old_spelling(p: argparse.ArgumentParser, old: str, new: str, dest: str | None = None, **kwargs) -> None:
    """Accept ``old`` as a hidden alias of the option ``new`` (already added), with a
    one-line deprecation note on stderr; ``kwargs`` (e.g. ``type``) as for ``new``.
    ``dest``: where the value goes when it must be translated first (default: ``new``'s);
    ``new`` is then the note's text.

    >>> p = argparse.ArgumentParser(); _ = p.add_argument("--jobs", type=int)
    >>> add_old_spelling(p, "--workers", "--jobs", type=int)
    >>> import contextlib, io
    >>> with contextlib.redirect_stderr(io.StringIO()) as err:
    ...     p.parse_args(["--workers", "2"]).jobs
    2
    >>> print(err.getvalue(), end="")
    yahtzee-sim: note: --workers is now --jobs; the old name will go
    """
    dest = dest or new.removeprefix("--").replace("-", "_")
    p.add_argument(old, dest=dest, action=_OldSpelling, new=new, help=argparse.SUPPRESS, default=argparse.SUPPRESS,
                   **kwargs)


# -- parallel and long runs -----------------------------------------------------

def add_run_args(p, *, checkpoint: bool = True) -> None:
    """Add ``--backend``, ``--jobs``, ``--scheduler`` (and ``--checkpoint``) to an argparse parser.

    >>> p = argparse.ArgumentParser(); add_run_args(p)
    >>> run_kwargs(p.parse_args(["--backend", "processes", "--jobs", "2"]))
    {'backend': 'processes', 'jobs': 2, 'scheduler': None, 'checkpoint': None}
    """
    from ..runner.backends import BACKENDS

    g = p.add_argument_group("parallel and long runs")
    g.add_argument("--backend", choices=BACKENDS, default="serial",
                   help="where chunks run: serial (this process), processes (local cores) or dask (a cluster)")
    g.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="worker processes (processes backend, default: all cores) or LocalCluster workers (dask)")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="Dask scheduler, e.g. tcp://host:8786 (default: a LocalCluster for the run)")
    if checkpoint:
        g.add_argument("--checkpoint", metavar="FILE", default=None,
                       help="save completed chunks to FILE (JSON); rerun the same command to resume")


def run_kwargs(args) -> dict:
    """The keyword arguments of :func:`yahtzee_sim.simulate` set by :func:`add_run_args`."""
    out = {"backend": args.backend, "jobs": args.jobs, "scheduler": args.scheduler}
    if hasattr(args, "checkpoint"):
        out["checkpoint"] = args.checkpoint
    return out
