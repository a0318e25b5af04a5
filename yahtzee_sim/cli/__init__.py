"""The ``yahtzee-sim`` command line: the top layer, imported by nothing in the library.

Every subcommand lives in a module of this package named after it (``head-to-head`` in
``head_to_head.py``) with a function ``add_commands(subparsers)`` registering its parser,
whose ``func`` does the work; bad input raises ``ValueError`` and becomes a one-line
error with exit code 2 (no traceback).

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

__all__ = ["main", "console", "build_parser", "PROG", "UsageError"]

# Modules that add subcommands (each defines ``add_commands(subparsers)``), one per
# command and named after it (``head-to-head`` in head_to_head.py), so the code of a
# command is found from its name; in the order ``--help`` lists the commands.
COMMAND_MODULES = ["rules", "strategies", "score", "simulate", "turns", "run", "verify", "odds", "extremes", "solve",
                   "advise", "policy_value", "distribution", "head_to_head", "target", "ask", "check", "cache",
                   "benchmark"]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description="Exact and simulated answers about Yahtzee-family dice games.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help=f"on an error in your own code (a strategy), the whole traceback (or {DEBUG_ENV}=1)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").add_commands(sub)
    return parser


def _one_line_warning(message, category, filename, lineno, file=None, line=None):
    print(f"{PROG}: warning: {message}", file=sys.stderr if file is None else file)


DEBUG_ENV = "YAHTZEE_SIM_DEBUG"
"""Set (to anything but 0) for the whole traceback of an error in the user's own code, as ``--debug``."""


def _is_users(filename: str) -> bool:
    """Is ``filename`` the user's own code (not this package, the standard library or an installed one)?"""
    import os
    import sysconfig

    if not filename or filename.startswith("<"):
        return False
    path = os.path.realpath(filename)
    ours = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))      # the yahtzee_sim package
    if path.startswith(ours + os.sep):
        return False
    libs = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return not any(path.startswith(os.path.realpath(lib) + os.sep) for lib in libs)


def _user_frames(exc: BaseException) -> tuple[list, str | None]:
    """The frames of ``exc``'s traceback in the user's code (a worker's remote trace included),
    and the name of the strategy whose method raised, if a frame tells."""
    import re
    import traceback

    frames, name = [], None
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if _is_users(code.co_filename):
            frames.extend(traceback.extract_tb(tb, limit=1))
            me = tb.tb_frame.f_locals.get("self")
            if name is None and isinstance(getattr(me, "name", None), str):
                name = me.name
        tb = tb.tb_next
    remote = getattr(exc.__cause__, "tb", None)        # a worker process's trace, as text
    if isinstance(remote, str):
        for m in re.finditer(r'File "([^"]+)", line (\d+), in (\S+)\n\s*(.*)', remote):
            if _is_users(m.group(1)):
                frames.append(traceback.FrameSummary(m.group(1), int(m.group(2)), m.group(3), line=m.group(4)))
    return frames, name


def _user_error(exc: BaseException, args) -> bool:
    """One line for an exception raised by the user's own code (a strategy), then only the
    user's frames; False when the error is not the user's (the whole trace is then due)."""
    import traceback

    frames, name = _user_frames(exc)
    if not frames:
        return False
    if name is None:
        named = getattr(args, "strategy", None) or getattr(args, "players", None)
        name = named if isinstance(named, str) else None
    who = f"strategy {name!r}" if name else "your code"
    print(f"{PROG}: error: {who} raised {type(exc).__name__}: {exc}", file=sys.stderr)
    print("".join(traceback.format_list(frames)).rstrip("\n"), file=sys.stderr)
    print(f"(your code's frames only; the whole trace: {PROG} --debug ..., or {DEBUG_ENV}=1)", file=sys.stderr)
    return True


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``yahtzee-sim`` console script; returns the exit code."""
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
        print(f"{PROG} {__version__}")  # answered before any command module is imported
        return 0
    args = None
    try:
        with warnings.catch_warnings():  # the library's warnings (e.g. --jobs above the cores): one line
            warnings.showwarning = _one_line_warning
            args = build_parser().parse_args(argv)
            return int(args.func(args) or 0)
    except (ValueError, argparse.ArgumentTypeError) as exc:  # bad input: one line, exit 2
        if _debug(args) and _user_frames(exc)[0]:
            raise
        if not _user_error(exc, args):     # (raised in the user's own code: said so, with its frames)
            print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # RunInterrupted says how much was done
        print(f"{PROG}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into head
        return 0
    except Exception as exc:   # raised in the user's strategy: their frames, not the project's
        if _debug(args) or not _user_error(exc, args):
            raise
        return 2


def console() -> None:
    """The ``yahtzee-sim`` console script (and ``python -m yahtzee_sim``): :func:`main`,
    then out at once. After a first exact command, Python's own teardown (freeing one by
    one the tables and arrays the command built, hundreds of MB) took 0.3 s longer than
    the exit itself; here the output is flushed and the exit handlers run (forked helpers
    stopped, pools and files closed) as at any exit, and what is skipped is only memory the
    system takes back anyway. Where a thread of someone's is still running, the usual
    exit waits for it.
    """
    import os
    import threading

    code = main()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    try:
        sys.stdout.flush()
    except BrokenPipeError:            # the reader went away (``| head``): nothing more to say
        pass
    sys.stderr.flush()
    import atexit

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):     # whatever the exit handlers printed
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):
            pass
    os._exit(code)


def _debug(args) -> bool:
    import os

    return bool(getattr(args, "debug", False)) or os.environ.get(DEBUG_ENV, "0") not in ("", "0")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
