"""Deterministic parallel runs: chunk scheduling, backends, streaming and checkpoints.

A run of N games (or single turns) is cut into *chunks* of whole seed blocks (see
:mod:`yahtzee_sim.engine`): with ``batch`` games per chunk, chunk i plays seed blocks
``[i*c, (i+1)*c)`` where ``c = max(1, batch // SEED_BLOCK)``, and block b draws from
the b-th child of the run's ``SeedSequence``. Each chunk returns a mergeable summary
(a :class:`~yahtzee_sim.results.GameAggregate` of exact integer histograms, or roll
counts for turns); merging is integer addition, so the result is bit-for-bit the same
for every backend, worker count and completion order. Per-game rows (small runs only)
are put back in chunk order.

Backends (``backend=`` in :func:`yahtzee_sim.simulate` and
:func:`yahtzee_sim.simulate_turns`, ``--backend`` on the command line):

``serial``
    in this process (the default).
``processes``
    ``jobs`` local worker processes (default: every core), started with ``spawn``.
``dask``
    a ``dask.distributed`` cluster: ``scheduler`` is its address
    (``"tcp://host:8786"``), a ``Client`` or a cluster object; without one a
    ``LocalCluster`` of ``jobs`` workers is started for the run. Needs the optional
    extra: ``pip install 'yahtzee-sim[dask]'``.

Chunks are submitted lazily, at most a few per worker in flight, and each returns
an aggregate, not rows: memory does not grow with N. ``checkpoint=FILE`` saves the
completed chunks and their merged aggregate (JSON, written atomically every few
seconds and when the run stops), so an interrupted run resumes where it stopped and
ends with the same result as an uninterrupted one. Ctrl-C raises
:class:`RunInterrupted` (a ``KeyboardInterrupt``) saying how much was done.

>>> from yahtzee_sim import simulate
>>> a = simulate("yahtzee", "keep-largest", 3000, seed=9)
>>> b = simulate("yahtzee", "keep-largest", 3000, seed=9, batch=1024, backend="processes", jobs=2)
>>> bool((a.aggregate.total_hist == b.aggregate.total_hist).all())
True
>>> bool((a.games["total"] == b.games["total"]).all())
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import logging
import math
import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from .engine import SEED_BLOCK, _block_tapes, _Checks, _entropy, _KeepOnly, _play_turn, play_blocks
from .results import GameAggregate
from .rules import RuleSet, get_rules
from .state import GameState
from .strategies import Strategy

__all__ = ["BACKENDS", "DASK_MISSING", "RunInterrupted", "RunOutcome", "check_backend", "run_chunks",
           "play_turn_blocks"]

BACKENDS = ("serial", "processes", "dask")
"""Valid values of ``backend=``."""

DASK_MISSING = "the dask backend needs dask.distributed: pip install 'yahtzee-sim[dask]'"

CHECKPOINT_EVERY = 2.0
"""Seconds between checkpoint writes (also written when a run stops or ends)."""

IN_FLIGHT_PER_WORKER = 2
"""Chunks submitted ahead per worker: bounds memory whatever the number of chunks."""

_CHECKPOINT_FORMAT = "yahtzee-sim checkpoint"
_CHECKPOINT_VERSION = 1

# Test hook: called with the number of chunks merged so far by this run (e.g. to
# raise KeyboardInterrupt midway). None in normal use.
_after_chunk: Callable[[int], None] | None = None


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run; ``str(exc)`` says how much was done and how to resume.

    ``done`` and ``total`` count games (or turns); ``checkpoint`` is the file holding
    the completed chunks, or None.
    """

    def __init__(self, message: str, done: int, total: int, checkpoint: str | None):
        super().__init__(message)
        self.done, self.total, self.checkpoint = done, total, checkpoint


@dataclass
class RunOutcome:
    """What :func:`run_chunks` returns: the merged summary, rows if kept, the entropy used."""

    value: Any  # GameAggregate (games) or (R,) int64 roll counts (turns)
    rows: dict[str, np.ndarray] | None
    entropy: int
    seconds: float
    resumed: int = 0  # games/turns taken from a checkpoint


# -- validation -------------------------------------------------------------------

def check_backend(backend: str, jobs: int | None, scheduler: Any) -> None:
    """Validate ``backend``, ``jobs`` and ``scheduler`` before any work.

    >>> check_backend("processes", 2, None)
    >>> check_backend("threads", None, None)
    Traceback (most recent call last):
    ...
    ValueError: unknown backend 'threads'; valid backends: serial, processes, dask
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs <= 0:
            raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
        if backend == "serial":
            raise ValueError("jobs needs the processes or dask backend (the serial backend runs in this process)")
    if scheduler is not None and backend != "dask":
        raise ValueError(f"a scheduler needs the dask backend, not {backend}")


# -- the unit of work -------------------------------------------------------------

def play_turn_blocks(rules: RuleSet, strategy: Strategy, entropy: int, blocks: range, n_turns: int) -> np.ndarray:
    """Roll counts (R,) of the single turns of seed ``blocks`` (the last cut at turn ``n_turns``).

    Turn i uses the dice tape of game i's first turn; only the strategy's keeps matter.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yahtzee")
    >>> counts = play_turn_blocks(r, get_strategy("keep-largest").prepare(r), 1, range(0, 2), 1500)
    >>> int(counts.sum()), counts.shape
    (1500, (252,))
    """
    d = rules.dice
    # Draw whole-game tapes so turn i sees game i's first-turn dice (the CRN contract).
    tape, unif = _block_tapes(rules, entropy, blocks, rules.n_boxes)
    stop = min(len(tape), n_turns - blocks.start * SEED_BLOCK)
    state = GameState.new(rules, stop)
    prefix = d.tape_prefix_keys(tape[:stop, 0])
    rolls, _ = _play_turn(rules, _KeepOnly(strategy), state, prefix, unif[:stop, 0], _Checks.of(rules))
    return np.bincount(rolls, minlength=d.n_rolls).astype(np.int64)


@dataclass(frozen=True)
class _Plan:
    """How a run of ``n`` games/turns is cut into chunks (pure arithmetic)."""

    kind: str  # "games" or "turns"
    n: int
    chunk_blocks: int

    @property
    def n_blocks(self) -> int:
        return -(-self.n // SEED_BLOCK)

    @property
    def n_chunks(self) -> int:
        return -(-self.n_blocks // self.chunk_blocks)

    def blocks(self, i: int) -> range:
        return range(i * self.chunk_blocks, min((i + 1) * self.chunk_blocks, self.n_blocks))

    def size(self, i: int) -> int:
        first = i * self.chunk_blocks * SEED_BLOCK
        return min(first + self.chunk_blocks * SEED_BLOCK, self.n) - first


def _play_chunk(plan: _Plan, rules: RuleSet, strategy: Strategy, entropy: int, keep_games: bool, i: int):
    """One chunk's summary: (GameAggregate, rows or None) for games, roll counts for turns."""
    if plan.kind == "turns":
        return play_turn_blocks(rules, strategy, entropy, plan.blocks(i), plan.n)
    games = play_blocks(rules, strategy, entropy, plan.blocks(i), plan.n)
    return GameAggregate.from_games(rules, games), (games if keep_games else None)


# -- shipping the work to other processes -----------------------------------------------

@dataclass(frozen=True)
class _Job:
    """Everything a worker needs, picklable: rules by name, the prepared strategy as bytes."""

    plan: _Plan
    rules_name: str
    options: tuple[str, ...]
    strategy_name: str
    strategy_blob: bytes
    entropy: int
    keep_games: bool
    token: str


class _Pickler(pickle.Pickler):
    """Pickles a prepared strategy, replacing the rule set and dice tables by references."""

    def __init__(self, file, rules: RuleSet):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._refs = {id(rules): "rules", id(rules.dice): "dice"}

    def persistent_id(self, obj):
        return self._refs.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, rules: RuleSet):
        super().__init__(file)
        self._objs = {"rules": rules, "dice": rules.dice}

    def persistent_load(self, pid):
        return self._objs[pid]


def _make_job(plan: _Plan, rules: RuleSet, strategy: Strategy, entropy: int, keep_games: bool, backend: str) -> _Job:
    try:
        registered = get_rules(rules.name, rules.options) is rules
    except ValueError:
        registered = False
    if not registered:
        raise ValueError(f"rule set {rules.key!r} is not in the registry: the {backend} backend rebuilds "
                         "rules by name in each worker (use backend='serial')")
    buf = io.BytesIO()
    try:
        _Pickler(buf, rules).dump(strategy)
    except Exception as exc:
        raise ValueError(f"strategy {strategy.name!r} cannot be sent to {backend} workers: pickling failed "
                         f"({type(exc).__name__}: {exc}); define it at module level or use backend='serial'") from None
    blob = buf.getvalue()
    token = hashlib.sha256(repr((rules.key, entropy, plan)).encode() + blob).hexdigest()[:16]
    return _Job(plan, rules.name, tuple(rules.options), strategy.name, blob, entropy, keep_games, token)


_WORKER_CACHE: dict[str, tuple[RuleSet, Strategy]] = {}
_WORKER_LOCK = threading.Lock()
_WORKER_JOB: _Job | None = None


def _load(job: _Job) -> tuple[RuleSet, Strategy]:
    """The job's rules and prepared strategy, unpickled once per worker process."""
    with _WORKER_LOCK:
        hit = _WORKER_CACHE.get(job.token)
        if hit is None:
            rules = get_rules(job.rules_name, job.options)
            try:
                strategy = _Unpickler(io.BytesIO(job.strategy_blob), rules).load()
            except Exception as exc:
                raise ValueError(f"strategy {job.strategy_name!r} cannot be loaded in a worker process "
                                 f"({type(exc).__name__}: {exc}); define its class in an importable module "
                                 "or use backend='serial'") from None
            if len(_WORKER_CACHE) >= 4:
                _WORKER_CACHE.clear()
            hit = _WORKER_CACHE[job.token] = (rules, strategy)
    return hit


def _run_job_chunk(job: _Job, i: int):
    rules, strategy = _load(job)
    return i, _play_chunk(job.plan, rules, strategy, job.entropy, job.keep_games, i)


def _process_init(job: _Job) -> None:
    global _WORKER_JOB
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    _WORKER_JOB = job


def _process_chunk(i: int):
    return _run_job_chunk(_WORKER_JOB, i)


@contextlib.contextmanager
def _sigint_ignored():
    """Ignore Ctrl-C while starting worker processes, which then inherit the setting."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


# -- backends: each yields (chunk id, summary) as chunks complete ---------------------------

def _serial_results(work: Callable[[int], Any], ids: Iterator[int]):
    for i in ids:
        yield i, work(i)


def _terminate(pool: ProcessPoolExecutor) -> None:
    stop = getattr(pool, "terminate_workers", None)  # Python >= 3.14
    if stop is not None:
        stop()
        return
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        p.terminate()
    for p in procs:
        p.join(timeout=10)


def _process_results(job: _Job, ids: Iterator[int], jobs: int):
    first = list(islice(ids, IN_FLIGHT_PER_WORKER * jobs))
    if not first:
        return
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(first)), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_process_init, initargs=(job,))
    finished = False
    try:
        with _sigint_ignored():
            pending = {pool.submit(_process_chunk, i) for i in first}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                nxt = next(ids, None)
                if nxt is not None:
                    pending.add(pool.submit(_process_chunk, nxt))
                yield fut.result()
        finished = True
    except BrokenProcessPool:
        raise RuntimeError("a worker process died: from a script, call simulate under "
                           "`if __name__ == '__main__':` (workers start with spawn); "
                           "otherwise the machine may be out of memory") from None
    finally:
        if finished:
            pool.shutdown(wait=True)
        else:
            _terminate(pool)


def _import_distributed():
    try:
        import dask.distributed as distributed
    except ImportError:
        raise ValueError(DASK_MISSING) from None
    return distributed


def _dask_client(distributed, scheduler, jobs: int | None, stack: contextlib.ExitStack):
    if isinstance(scheduler, distributed.Client):
        return scheduler
    if scheduler is None:
        with _sigint_ignored():
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=jobs or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=logging.ERROR))
        return stack.enter_context(distributed.Client(cluster))
    try:
        client = distributed.Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
    return stack.enter_context(client)


def _dask_results(job: _Job, ids: Iterator[int], jobs: int | None, scheduler):
    distributed = _import_distributed()
    with contextlib.ExitStack() as stack:
        client = _dask_client(distributed, scheduler, jobs, stack)
        limit = max(4, IN_FLIGHT_PER_WORKER * sum(client.nthreads().values()))
        [job_future] = client.scatter([job], broadcast=True, hash=False)
        pending: set = set()
        queue = distributed.as_completed()

        def submit(i):
            fut = client.submit(_run_job_chunk, job_future, i, pure=False)
            pending.add(fut)
            queue.add(fut)

        for i in islice(ids, limit):
            submit(i)
        try:
            for fut in queue:
                pending.discard(fut)
                result = fut.result()
                fut.release()
                nxt = next(ids, None)
                if nxt is not None:
                    submit(nxt)
                yield result
        finally:
            if pending:
                client.cancel(list(pending))
            job_future.release()


# -- bookkeeping: merged summary and the set of completed chunks -----------------------------

@dataclass(frozen=True)
class _Done:
    """Completed chunks (all ids < ``below`` plus ``extra``), their merged summary and size."""

    value: Any
    below: int = 0
    extra: frozenset = frozenset()
    count: int = 0

    def add(self, i: int, part, size: int, merge) -> "_Done":
        extra = set(self.extra)
        extra.add(i)
        below = self.below
        while below in extra:
            extra.remove(below)
            below += 1
        return _Done(merge(self.value, part), below, frozenset(extra), self.count + size)

    def todo(self, n_chunks: int) -> Iterator[int]:
        """Chunk ids still to play, generated lazily in order."""
        return (i for i in range(self.below, n_chunks) if i not in self.extra)


def _merge_turns(a, b):
    return a + b


def _merge_games(a, b):
    return a.merge(b)


# -- checkpoints ----------------------------------------------------------------------

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


class _Checkpoint:
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

    def load(self, entropy: int | None, empty) -> tuple[int | None, _Done | None]:
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
            done = _Done(_value_from_json(data["value"], empty), int(data["chunks_below"]),
                         frozenset(int(i) for i in data["chunks_extra"]), int(data["done"]))
        except (KeyError, TypeError, ValueError):
            raise damaged from None
        return stored["seed"], done

    def save(self, done: _Done, entropy: int) -> None:
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


def _progress_bar(total: int, initial: int, unit: str, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, initial=initial, unit=unit, unit_scale=True, delay=2.0, file=sys.stderr,
                leave=False, smoothing=0.1)


# -- the driver ---------------------------------------------------------------------

def run_chunks(
    kind: str,
    rules: RuleSet,
    strategy: Strategy,
    n: int,
    *,
    entropy: int | None,
    chunk_blocks: int,
    keep_games: bool = False,
    backend: str = "serial",
    jobs: int | None = None,
    scheduler: Any = None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool = False,
) -> RunOutcome:
    """Play ``n`` games (``kind="games"``) or single turns (``"turns"``) chunk by chunk.

    ``strategy`` must be prepared for ``rules``; ``entropy`` None draws a fresh seed
    (or reuses the one stored in ``checkpoint``). This is what
    :func:`yahtzee_sim.simulate` and :func:`yahtzee_sim.simulate_turns` call.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yahtzee")
    >>> out = run_chunks("turns", r, get_strategy("random").prepare(r), 5000, entropy=3, chunk_blocks=2)
    >>> int(out.value.sum()), out.entropy
    (5000, 3)
    """
    check_backend(backend, jobs, scheduler)
    if kind not in ("games", "turns"):
        raise ValueError(f"unknown kind {kind!r}; valid kinds: games, turns")
    plan = _Plan(kind, int(n), int(chunk_blocks))
    if kind == "games":
        empty, merge = GameAggregate.empty(rules), _merge_games
    else:
        empty, merge = np.zeros(rules.dice.n_rolls, dtype=np.int64), _merge_turns
        keep_games = False

    ckpt = None
    done = _Done(empty)
    if checkpoint is not None:
        if keep_games:
            raise ValueError("a checkpoint saves aggregates only: it cannot be combined with keep_games=True "
                             "(per-game rows, --out)")
        ckpt = _Checkpoint(checkpoint, {"kind": kind, "rules": rules.key, "strategy": strategy.name,
                                        "n": plan.n, "chunk_games": plan.chunk_blocks * SEED_BLOCK,
                                        "seed_block": SEED_BLOCK})
        entropy, stored = ckpt.load(entropy, empty)
        if stored is not None:
            done = stored
    if entropy is None:
        entropy = _entropy(None)
    resumed = done.count

    if backend == "serial":
        results = _serial_results(lambda i: _play_chunk(plan, rules, strategy, entropy, keep_games, i),
                                  done.todo(plan.n_chunks))
    else:
        job = _make_job(plan, rules, strategy, entropy, keep_games, backend)
        if backend == "processes":
            results = _process_results(job, done.todo(plan.n_chunks), int(jobs or os.cpu_count() or 1))
        else:
            results = _dask_results(job, done.todo(plan.n_chunks), jobs, scheduler)

    rows: dict[int, dict] = {}
    unit = "games" if kind == "games" else "turns"
    bar = _progress_bar(plan.n, done.count, unit, progress)
    start = time.perf_counter()
    merged = 0
    try:
        with contextlib.closing(results):
            for i, part in results:
                if kind == "games":
                    part, games = part
                    if games is not None:
                        rows[i] = games
                done = done.add(i, part, plan.size(i), merge)
                merged += 1
                if bar is not None:
                    bar.update(plan.size(i))
                if ckpt is not None and ckpt.due():
                    ckpt.save(done, entropy)
                if _after_chunk is not None:
                    _after_chunk(merged)
    except KeyboardInterrupt:
        where = ""
        if ckpt is not None:
            ckpt.save(done, entropy)
            where = f"; completed chunks saved to {str(ckpt.path)!r}: run again with the same arguments to resume"
        if bar is not None:
            bar.close()
            bar = None
        raise RunInterrupted(f"interrupted after {done.count:,} of {plan.n:,} {unit}{where}",
                             done.count, plan.n, None if ckpt is None else str(ckpt.path)) from None
    except BaseException:
        if ckpt is not None:
            ckpt.save(done, entropy)
        raise
    finally:
        if bar is not None:
            bar.close()
    if ckpt is not None:
        ckpt.save(done, entropy)
    if done.count != plan.n:  # pragma: no cover - guarded by the chunk arithmetic
        raise RuntimeError(f"played {done.count} {unit} instead of {plan.n}")
    table = None
    if keep_games:
        order = sorted(rows)
        table = {k: np.concatenate([rows[i][k] for i in order]) for k in rows[order[0]]}
    return RunOutcome(done.value, table, entropy, time.perf_counter() - start, resumed)
