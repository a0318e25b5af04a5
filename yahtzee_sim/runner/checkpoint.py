"""Checkpoint files: the completed chunks of a run and their merged summary, as JSON.

Written atomically (:func:`yahtzee_sim.files.atomic_write`) every few seconds and when
a run stops, so an interrupted run resumes where it stopped and ends with the same
result as an uninterrupted one.

Nothing in a checkpoint is trusted: a SHA-256 checksum covers the whole content
(accidents), an HMAC signature made with the user's key (:mod:`yahtzee_sim.signing`,
kept in the cache folder) covers it too (edits: a checksum anyone can recompute, a
signature only this user's yahtzee-sim can make), and on load the parameters must be
the run's, the chunk bookkeeping must add up to the games done, and the summary must
be a possible summary of that many games (no negative count, every histogram counting
each game once, the totals adding up). A file failing any check is refused in one
line, with the advice to delete it, and is never overwritten by the refused run.

>>> import tempfile, pathlib
>>> from yahtzee_sim import get_rules, get_strategy
>>> from yahtzee_sim.runner.plan import ChunkPlan, merge_turns, play_chunk
>>> rules = get_rules("yacht")
>>> plan = ChunkPlan("turns", 3000, 1)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "run.json"
>>> ckpt = Checkpoint(path, {"kind": "turns", "n": 3000}, plan, lambda value, n: None)
>>> part = play_chunk(plan, rules, get_strategy("random").prepare(rules), 4, False, 0)
>>> ckpt.save(Done(0 * part).add(0, part, plan.size(0), merge_turns), 4)
>>> path.write_text(path.read_text().replace('"n":3000', '"n":3001'))  and None
>>> Checkpoint(path, {"kind": "turns", "n": 3000}, plan, lambda value, n: None).load(None, 0 * part)
Traceback (most recent call last):
...
ValueError: '...run.json' is not a yahtzee-sim checkpoint or is damaged (its checksum does not match its content); delete it to start afresh, or choose another checkpoint file
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..files import WriteError, atomic_write
from .plan import ChunkPlan, Done, PartsPlan

__all__ = ["CHECKPOINT_EVERY", "MAX_CHECKPOINT_BYTES", "Checkpoint"]

CHECKPOINT_EVERY = 2.0
"""Seconds between checkpoint writes (also written when a run stops or ends)."""

MAX_CHECKPOINT_BYTES = 64 << 20
"""A checkpoint holds histograms, a few kB: a bigger file is not one of ours."""

_CHECKPOINT_FORMAT = "yahtzee-sim checkpoint"
_CHECKPOINT_VERSION = 3  # 2: with a checksum; 3: and signed


class _Damaged(ValueError):
    """Why a checkpoint cannot be trusted (the reason goes in the one-line message)."""


def _canonical(body: dict) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False).encode("ascii")


def _checksum(body: dict) -> str:
    import hashlib

    return hashlib.sha256(_canonical(body)).hexdigest()


def key_folder() -> Path:
    """Where the key that signs checkpoints lives: the user's cache folder (``$YAHTZEE_SIM_CACHE``, ...).

    >>> from yahtzee_sim.exact.cache import cache_dir
    >>> key_folder() == cache_dir()       # the same folder as the solver's tables
    True
    """
    from ..files import cache_dir

    return cache_dir()


def _key(create: bool) -> bytes | None:
    from ..signing import signing_key

    return signing_key(key_folder(), create=create)


def _value_to_json(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (int, np.integer)):
        return int(value)
    return {f.name: _value_to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}


def _count(data, name: str, low: int = 0, high: int | None = None) -> int:
    """A JSON integer in [low, high] (no bool, no float, no string)."""
    if isinstance(data, bool) or not isinstance(data, int):
        raise _Damaged(f"{name} is not an integer")
    if data < low or (high is not None and data > high):
        raise _Damaged(f"{name} {data} is out of range")
    return data


def _array_from_json(data, like: np.ndarray, name: str) -> np.ndarray:
    try:
        arr = np.array(data, dtype=object)
    except (ValueError, TypeError, RecursionError):
        raise _Damaged(f"{name} is not an array of counts") from None
    if arr.size == 0 and like.size == 0:    # an empty (0, k) table reads back as [] of shape (0,)
        return np.zeros_like(like)
    if arr.shape != like.shape:
        raise _Damaged(f"{name} has shape {arr.shape}, expected {like.shape}")
    flat = arr.ravel()
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in flat):
        raise _Damaged(f"{name} holds something other than integers")
    if any(v < 0 for v in flat):
        raise _Damaged(f"{name} has a negative count")
    if any(v > np.iinfo(like.dtype).max for v in flat):
        raise _Damaged(f"{name} has a count too large to be real")
    return arr.astype(like.dtype)


def _value_from_json(data, like, name: str = "value"):
    if isinstance(like, np.ndarray):
        return _array_from_json(data, like, name)
    if not isinstance(data, dict):
        raise _Damaged(f"{name} is not an object")
    kwargs = {}
    for f in dataclasses.fields(like):
        ref = getattr(like, f.name)
        if f.name not in data and isinstance(ref, np.ndarray) and ref.size == 0:
            kwargs[f.name] = ref.copy()     # a table this game does not keep, absent from older files
            continue
        if f.name not in data:
            raise _Damaged(f"{name} has no {f.name}")
        kwargs[f.name] = (_array_from_json(data[f.name], ref, f.name) if isinstance(ref, np.ndarray)
                          else _count(data[f.name], f.name))
    return type(like)(**kwargs)


class Checkpoint:
    """A JSON file: run parameters, seed entropy, completed chunk ids, merged summary, checksum.

    ``check_value(value, count)`` raises ``ValueError`` unless ``value`` is a possible
    summary of ``count`` games (or turns), e.g. :meth:`GameAggregate.check`.
    """

    def __init__(self, path, params: dict, plan: ChunkPlan | PartsPlan, check_value: Callable[[Any, int], None]):
        self.path = Path(os.fspath(path))
        folder = self.path.parent
        if not folder.is_dir():
            raise ValueError(f"cannot write checkpoint {str(self.path)!r}: folder {str(folder)!r} does not exist")
        if self.path.is_dir():
            raise ValueError(f"cannot write checkpoint {str(self.path)!r}: it is a folder; give a file name")
        if not os.access(folder, os.W_OK):
            raise ValueError(f"cannot write checkpoint {str(self.path)!r}: permission denied")
        try:  # before any work: a run that could not save its checkpoint must not start
            self.key = _key(create=True)
        except OSError as exc:
            raise ValueError(f"cannot make the key that signs checkpoints in {str(key_folder())!r}: "
                             f"{exc.strerror or exc}; set YAHTZEE_SIM_CACHE to a writable folder") from None
        self.params = params
        self.plan = plan
        self.check_value = check_value
        self.saved_at = -math.inf  # the first completed chunk is saved at once
        self.saved_count: int | None = None  # games/turns in the file as this run last wrote or read it
        self.rows_state: dict | None = None  # what the file says of a streamed per-game table

    def damaged(self, reason: str) -> ValueError:
        """The one-line refusal of this checkpoint file, giving ``reason``."""
        return ValueError(f"{str(self.path)!r} is not a yahtzee-sim checkpoint or is damaged ({reason}); "
                          "delete it to start afresh, or choose another checkpoint file")

    def load(self, entropy: int | None, empty) -> tuple[int | None, Done | None]:
        """(entropy, completed chunks) stored in the file, or (entropy, None) if there is none."""
        if not self.path.exists():
            return entropy, None
        try:
            with open(self.path, "rb") as fh:
                raw = fh.read(MAX_CHECKPOINT_BYTES + 1)
        except OSError as exc:
            raise ValueError(f"cannot read checkpoint {str(self.path)!r}: {exc.strerror or exc}") from None
        try:
            if len(raw) > MAX_CHECKPOINT_BYTES:
                raise _Damaged(f"larger than {MAX_CHECKPOINT_BYTES >> 20} MB")
            try:
                data = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError, RecursionError):
                raise _Damaged("not valid JSON") from None
            if not isinstance(data, dict) or data.get("format") != _CHECKPOINT_FORMAT:
                raise _Damaged("no checkpoint header")
            version = data.get("version")
            if version != _CHECKPOINT_VERSION:
                raise ValueError(f"checkpoint {str(self.path)!r} has format version {version!r}; this "
                                 f"yahtzee-sim reads version {_CHECKPOINT_VERSION}: delete it to start afresh")
            stored_sum = data.pop("checksum", None)
            signature = data.pop("signature", None)
            try:
                ok = isinstance(stored_sum, str) and stored_sum == _checksum(data)
            except (ValueError, TypeError, RecursionError):  # NaN or other things JSON should not hold
                ok = False
            if not ok:
                raise _Damaged("its checksum does not match its content")
            from ..signing import verify

            if not verify(self.key, _canonical(data), signature):
                raise _Damaged("its signature does not match: it was changed after yahtzee-sim wrote it, or "
                               f"written under another user's key than {str(key_folder() / 'signing-key')!r}")
            return self._read(data, entropy, empty)
        except _Damaged as exc:
            raise self.damaged(str(exc)) from None
        except (RecursionError, OverflowError, MemoryError):
            raise self.damaged("values out of range") from None

    def _read(self, data: dict, entropy: int | None, empty) -> tuple[int, Done]:
        params = data.get("params")
        if not isinstance(params, dict):
            raise _Damaged("no run parameters")
        seed = _count(data.get("seed"), "seed")
        ours = dict(self.params, seed=seed if entropy is None else entropy)
        stored = dict(params, seed=seed)
        diff = [f"{k} {stored.get(k)!r} there, {ours[k]!r} here" for k in ours if stored.get(k) != ours[k]]
        extra_keys = sorted(set(stored) - set(ours))
        if diff or extra_keys:
            diff += [f"{k} {stored[k]!r} there, not here" for k in extra_keys]
            raise ValueError(f"checkpoint {str(self.path)!r} belongs to another run ({'; '.join(diff)}); "
                             "pass the same parameters or choose another checkpoint file")
        plan = self.plan
        below = _count(data.get("chunks_below"), "chunks_below", 0, plan.n_chunks)
        extra = data.get("chunks_extra")
        if not isinstance(extra, list) or len(extra) > plan.n_chunks:
            raise _Damaged("chunks_extra is not a list of chunk ids")
        ids = [_count(i, "a chunk id in chunks_extra", below + 1, plan.n_chunks - 1) for i in extra]
        if len(set(ids)) != len(ids):
            raise _Damaged("chunks_extra repeats a chunk")
        count = _count(data.get("done"), "done", 0, plan.n)
        expected = plan.size_below(below) + sum(plan.size(i) for i in ids)
        if count != expected:
            raise _Damaged(f"done is {count:,} but the completed chunks hold {expected:,} {plan.kind}")
        value = _value_from_json(data.get("value"), empty)
        try:
            self.check_value(value, count)
        except ValueError as exc:
            raise _Damaged(str(exc)) from None
        rows = data.get("rows")
        if rows is not None and not isinstance(rows, dict):
            raise _Damaged("rows is not an object")
        self.rows_state = rows
        self.saved_count = count
        return seed, Done(value, below, frozenset(ids), count)

    def save(self, done: Done, entropy: int, rows: dict | None = None) -> None:
        """Write atomically; a failure (e.g. a full disk) leaves the previous file and says so.

        ``rows`` describes the streamed per-game table (:meth:`RowSink.state`), if any.
        """
        body = {"format": _CHECKPOINT_FORMAT, "version": _CHECKPOINT_VERSION, "params": self.params,
                "seed": int(entropy), "done": done.count, "chunks_below": done.below,
                "chunks_extra": sorted(done.extra), "value": _value_to_json(done.value)}
        if rows is not None:
            body["rows"] = rows
        from ..signing import sign

        signature = sign(self.key, _canonical(body))
        body["checksum"] = _checksum(body)
        body["signature"] = signature
        try:
            with atomic_write(self.path, "w", clean=math.isinf(self.saved_at)) as fh:
                json.dump(body, fh, separators=(",", ":"))
        except WriteError as exc:
            if self.saved_count:
                kept = (f"{str(self.path)!r} keeps the {self.saved_count:,} {self.plan.kind} saved before: "
                        "run the same command again to resume once there is room")
            else:
                kept = "nothing was saved"
            raise WriteError(f"cannot write checkpoint {str(self.path)!r}: {exc.reason}; {kept}",
                             exc.errno, exc.reason) from None
        self.saved_at = time.monotonic()
        self.saved_count = done.count

    def due(self) -> bool:
        return time.monotonic() - self.saved_at >= CHECKPOINT_EVERY
