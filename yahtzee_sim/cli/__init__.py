"""The ``yahtzee-sim`` command line: the top layer, imported by nothing in the library.

Every subcommand lives in a module of this package with a function
``add_commands(subparsers)`` registering parsers whose ``func`` does the work; bad
input raises ``ValueError`` and becomes a one-line error with exit code 2 (no
traceback).

>>> build_parser().parse_args(["simulate", "--games", "1e6"]).games
1000000
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from .. import __version__
from ._common import PROG, Parser, UsageError

__all__ = ["main", "build_parser", "PROG", "UsageError"]

# Modules that add subcommands (each defines ``add_commands(subparsers)``).
COMMAND_MODULES = ["core", "run", "verify", "odds", "extremes", "solve", "advise", "distribution", "target", "benchmark"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Exact and simulated answers about Yahtzee-family dice games.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").add_commands(sub)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``yahtzee-sim`` console script; returns the exit code."""
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
        print(f"{PROG} {__version__}")  # answered before any command module is imported
        return 0
    try:
        with warnings.catch_warnings():  # the library's warnings (e.g. --jobs above the cores): one line
            warnings.showwarning = _one_line_warning
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
