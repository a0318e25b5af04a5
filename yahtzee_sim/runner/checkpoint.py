"""Checkpoint files: the completed chunks of a run and their merged summary, as JSON.

Written atomically (a temporary file in the same folder, then a rename) every few
seconds and when a run stops, so an interrupted run resumes where it stopped and
ends with the same result as an uninterrupted one.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from .plan import Done

__all__ = ["CHECKPOINT_EVERY", "Checkpoint"]

CHECKPOINT_EVERY = 2.0
"""Seconds between checkpoint writes (also written when a run stops or ends)."""

_CHECKPOINT_FORMAT = "yahtzee-sim checkpoint"
_CHECKPOINT_VERSION = 1


def _value_to_json(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (int, np.integer)):
        return int(value)
    return {f.name: _value_to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _value_from_json(data, like):
    if isinstance(like, np.ndarray):
        arr = np.asarray(data, dtype=like.dtype)
        if arr.shape != like.shape:
            raise ValueError(f"expected shape {like.shape}, got {arr.shape}")
        return arr
    kwargs = {}
    for f in dataclasses.fields(like):
        ref = getattr(like, f.name)
        kwargs[f.name] = _value_from_json(data[f.name], ref) if isinstance(ref, np.ndarray) else type(ref)(data[f.name])
    return type(like)(**kwargs)


class Checkpoint:
    """A JSON file: run parameters, seed entropy, completed chunk ids, merged summary."""

    def __init__(self, path, params: dict):
        self.path = Path(os.fspath(path))
        folder = self.path.parent
        if not folder.is_dir():
            raise ValueError(f"cannot write checkpoint {str(self.path)!r}: folder {str(folder)!r} does not exist")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"cannot write checkpoint {str(self.path)!r}: permission denied")
        self.params = params
        self.saved_at = -math.inf  # the first completed chunk is saved at once

    def load(self, entropy: int | None, empty) -> tuple[int | None, Done | None]:
        """(entropy, completed chunks) stored in the file, or (entropy, None) if there is none."""
        if not self.path.exists():
            return entropy, None
        damaged = ValueError(f"{str(self.path)!r} is not a yahtzee-sim checkpoint or is damaged; "
                             "delete it or choose another checkpoint file")
        try:
            data = json.loads(self.path.read_text())
            fmt, version = data.get("format"), data.get("version")
        except (OSError, UnicodeDecodeError, ValueError, AttributeError):
            raise damaged from None
        if fmt != _CHECKPOINT_FORMAT:
            raise damaged
        if version != _CHECKPOINT_VERSION:
            raise ValueError(f"checkpoint {str(self.path)!r} has format version {version!r}; "
                             f"this yahtzee-sim reads version {_CHECKPOINT_VERSION}")
        try:
            stored = dict(data["params"], seed=int(data["seed"]))
        except (KeyError, TypeError, ValueError):
            raise damaged from None
        ours = dict(self.params, seed=stored["seed"] if entropy is None else entropy)
        diff = [f"{k} {stored.get(k)!r} there, {ours[k]!r} here" for k in ours if stored.get(k) != ours[k]]
        if diff:
            raise ValueError(f"checkpoint {str(self.path)!r} belongs to another run ({'; '.join(diff)}); "
                             "pass the same parameters or choose another checkpoint file")
        try:
            done = Done(_value_from_json(data["value"], empty), int(data["chunks_below"]),
                        frozenset(int(i) for i in data["chunks_extra"]), int(data["done"]))
        except (KeyError, TypeError, ValueError):
            raise damaged from None
        return stored["seed"], done

    def save(self, done: Done, entropy: int) -> None:
        """Write atomically (temporary file in the same folder, then rename)."""
        data = {"format": _CHECKPOINT_FORMAT, "version": _CHECKPOINT_VERSION, "params": self.params,
                "seed": entropy, "done": done.count, "chunks_below": done.below,
                "chunks_extra": sorted(done.extra), "value": _value_to_json(done.value)}
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(data, fh, separators=(",", ":"))
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.saved_at = time.monotonic()

    def due(self) -> bool:
        return time.monotonic() - self.saved_at >= CHECKPOINT_EVERY
