"""Shared pieces of the command line: argument types, rule-set arguments, JSON output,
output-path checks and the parallel-run arguments.

Only the command modules of this package import it; the library never does.

>>> positive_int("1e6")
1000000
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

PROG = "yahtzee-sim"


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


class Parser(argparse.ArgumentParser):
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
    from ..rules import get_rules

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
    import numpy as np
    import pandas as pd

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


def write_frame_atomically(frame, out: Path) -> None:
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
                   help="where chunks run: serial (default), processes (local cores) or dask (a cluster)")
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
