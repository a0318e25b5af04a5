"""Where chunks run: in this process, in local worker processes, or on a Dask cluster.

Each backend is a generator of ``(chunk id, summary)`` pairs in completion order,
taking chunk ids lazily from an iterator with at most a few chunks per worker in
flight, so memory does not grow with the number of chunks. Workers get the rules by
name and the prepared strategy pickled once (:class:`Job`).

>>> check_backend("processes", 2, None)
>>> list(serial_results(lambda i: i * i, iter(range(3))))
[(0, 0), (1, 1), (2, 4)]
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import signal
import threading
from dataclasses import dataclass
from itertools import islice
from typing import Any, Callable, Iterator


from ..engine import RunSeed
# watch_parent (a worker exits when the process that started it dies): the fork pool's, one
# copy for every pool of the project; still importable from here
from ..forkpool import PARENT_POLL_SECONDS, watch_parent  # noqa: F401
from ..rules import RuleSet, get_rules
from ..strategy import Strategy
from .plan import ChunkPlan, lineup_name, play_chunk, seats_of
from ..validate import whole_number

__all__ = ["BACKENDS", "DASK_MISSING", "IN_FLIGHT_PER_WORKER", "JobsWarning", "check_backend", "check_scheduler",
           "usable_cores", "worker_count", "Job", "make_job", "close_pool", "ordered_results", "watch_parent",
           "serial_results", "process_results", "dask_results"]

BACKENDS = ("serial", "processes", "dask")
"""Valid values of ``backend=``."""

DASK_MISSING = "the dask backend needs dask.distributed: pip install 'yahtzee-sim[dask]'"

IN_FLIGHT_PER_WORKER = 2
"""Chunks submitted ahead per worker: bounds memory whatever the number of chunks."""


def check_backend(backend: str, jobs: int | None, scheduler: Any) -> None:
    """Validate ``backend``, ``jobs`` and ``scheduler`` before any work.

    >>> check_backend("threads", None, None)
    Traceback (most recent call last):
    ...
    ValueError: unknown backend 'threads'; valid backends: serial, processes, dask
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; valid backends: {', '.join(BACKENDS)}")
    if jobs is not None:
        jobs = whole_number(jobs, "jobs")
        if backend == "serial":
            raise ValueError("jobs needs the processes or dask backend (the serial backend runs in this process)")
    if scheduler is not None and backend != "dask":
        raise ValueError(f"a scheduler needs the dask backend, not {backend}")
    check_scheduler(scheduler)


def check_scheduler(scheduler: Any) -> None:
    """``scheduler`` must be None, an address, a ``dask.distributed.Client`` or a cluster object.

    >>> check_scheduler(object())
    Traceback (most recent call last):
    ...
    ValueError: scheduler must be a Dask scheduler address (e.g. 'tcp://host:8786'), a dask.distributed.Client or a cluster, got object
    """
    if scheduler is None:
        return
    if isinstance(scheduler, str):
        if not scheduler.strip():
            raise ValueError("scheduler is empty: give an address such as tcp://host:8786, or none for a LocalCluster")
        return
    kind = type(scheduler)
    is_dask = kind.__module__.split(".")[0] in ("distributed", "dask", "dask_jobqueue", "dask_kubernetes")
    if is_dask or hasattr(scheduler, "scheduler_address"):
        return
    raise ValueError("scheduler must be a Dask scheduler address (e.g. 'tcp://host:8786'), a "
                     f"dask.distributed.Client or a cluster, got {kind.__name__}")


class JobsWarning(UserWarning):
    """More workers asked for than this machine has cores: they share the cores."""


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells, else the core count)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(jobs: int | None, chunks_left: int) -> int:
    """Local workers to start: ``jobs`` (default: every core), never more than the chunks left.

    Asking for more than the cores warns (:class:`JobsWarning`): extra workers only
    share the cores, each with its own memory.

    >>> worker_count(None, 1), worker_count(1, 5)
    (1, 1)
    """
    cores = usable_cores()
    if jobs is not None and jobs > cores:
        import warnings

        warnings.warn(JobsWarning(f"jobs={jobs} is more than the {cores} cores here: the workers share them "
                                  "(no faster, more memory)"), stacklevel=4)
    return max(1, min(jobs or cores, chunks_left))


# -- shipping the work to other processes -----------------------------------------------

@dataclass(frozen=True)
class Job:
    """Everything a worker needs, picklable: rules by name, the prepared strategy as bytes."""

    plan: ChunkPlan
    rules_name: str
    options: tuple[str, ...]
    strategy_name: str
    strategy_blob: bytes
    entropy: RunSeed
    keep_games: bool
    token: str
    rules_toml: str | None = None   # a house rule set travels as its file's text
    module_roots: tuple[str, ...] = ()   # where the strategy's module was imported from


def _module_roots(strategy: Strategy) -> tuple[str, ...]:
    """The folder the strategy's class was imported from (``module:Class`` from the current
    folder: a console script's workers do not search it), for the workers' ``sys.path``."""
    import sys
    from pathlib import Path

    roots = []
    for seat in seats_of(strategy):     # a table: every seat's
        name = type(seat).__module__
        path = getattr(sys.modules.get(name), "__file__", None)
        if not path or name.startswith("yahtzee_sim."):
            continue
        root = Path(path).resolve().parent
        for _ in range(name.count(".")):        # a module in a package: the folder above the package
            root = root.parent
        roots.append(str(root))
    return tuple(dict.fromkeys(roots))


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


def make_job(plan: ChunkPlan, rules: RuleSet, strategy: Strategy, entropy: RunSeed, keep_games: bool,
             backend: str) -> Job:
    """Pack a run for workers; a clear ``ValueError`` if the rules or strategy cannot travel."""
    try:
        registered = _rebuild(rules.name, rules.options, rules.house_toml) is rules
    except ValueError:
        registered = False
    if not registered:
        raise ValueError(f"rule set {rules.key!r} is not in the registry: the {backend} backend rebuilds "
                         "rules by name in each worker (use backend='serial')")
    buf = io.BytesIO()
    try:
        _Pickler(buf, rules).dump(strategy)
    except Exception as exc:
        raise ValueError(f"strategy {lineup_name(strategy)!r} cannot be sent to {backend} workers: pickling failed "
                         f"({type(exc).__name__}: {exc}); define it at module level or use backend='serial'") from None
    import hashlib

    blob = buf.getvalue()
    token = hashlib.sha256(repr((rules.key, entropy, plan)).encode() + blob).hexdigest()[:16]
    return Job(plan, rules.name, tuple(rules.options), lineup_name(strategy), blob, entropy, keep_games, token,
               rules.house_toml, _module_roots(strategy))


def _rebuild(name: str, options: tuple[str, ...], house_toml: str | None) -> RuleSet:
    """The rule set a worker rebuilds: by name from the registry, or from a house file's text."""
    if house_toml is not None:
        from ..rules.house import house_rules_from_text

        return house_rules_from_text(house_toml, name)
    return get_rules(name, options)


_WORKER_CACHE: dict[str, tuple[RuleSet, Strategy]] = {}
_WORKER_LOCK = threading.Lock()
_WORKER_JOB: Job | None = None


def _load(job: Job) -> tuple[RuleSet, Strategy]:
    """The job's rules and prepared strategy, unpickled once per worker process."""
    with _WORKER_LOCK:
        hit = _WORKER_CACHE.get(job.token)
        if hit is None:
            rules = _rebuild(job.rules_name, job.options, job.rules_toml)
            import sys

            for root in job.module_roots:
                if root not in sys.path:
                    sys.path.append(root)     # after the worker's own path: nothing of it is shadowed
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


def run_job_chunk(job: Job, i: int):
    """Play chunk ``i`` of ``job`` in a worker: ``(i, summary)``."""
    rules, strategy = _load(job)
    return i, play_chunk(job.plan, rules, strategy, job.entropy, job.keep_games, i)


def _process_init(job: Job, parent_pid: int | None = None) -> None:
    global _WORKER_JOB
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    if parent_pid is not None:
        watch_parent(parent_pid)
    _WORKER_JOB = job


def _process_chunk(i: int):
    return run_job_chunk(_WORKER_JOB, i)


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

def serial_results(work: Callable[[int], Any], ids: Iterator[int]):
    """Play the chunks ``ids`` one after the other in this process."""
    for i in ids:
        yield i, work(i)


POOL_JOIN_SECONDS = 10.0
"""The longest a pool's shutdown waits for its workers and its result reader, each."""


def close_pool(pool, finished: bool, timeout: float = POOL_JOIN_SECONDS) -> None:
    """Shut a ``ProcessPoolExecutor`` down with every wait bounded: nothing is left waiting.

    ``finished``: all its work is done, so the workers are asked to stop and given
    ``timeout`` seconds; otherwise (an error, Ctrl-C, a consumer that stopped
    early) the pending work is cancelled and the workers are terminated at once.

    A worker terminated while it was sending a result leaves the pool's reader
    thread blocked on a message that will never end (this process holds the
    pipe's write end too, so no end-of-file comes), and the interpreter then
    hangs at exit joining that thread. Once the workers are gone this closes the
    write end: the reader gets end-of-file, marks the pool broken and ends.

    >>> from concurrent.futures import ProcessPoolExecutor
    >>> close_pool(ProcessPoolExecutor(1), finished=True)   # never started: nothing to wait for
    """
    import time

    thread = getattr(pool, "_executor_manager_thread", None)
    results = getattr(pool, "_result_queue", None)
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=not finished)
    deadline = time.monotonic() + timeout
    if finished and thread is not None:
        thread.join(timeout)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():   # ignored SIGTERM: SIGKILL cannot be
            p.kill()
            p.join(timeout)
    if thread is not None and thread.is_alive():
        thread.join(min(1.0, timeout))
        if thread.is_alive() and results is not None:
            results._writer.close()     # every worker is dead: the reader gets end-of-file
            thread.join(timeout)
        if thread.is_alive():  # pragma: no cover - the reader still stuck: let the exit go on
            import concurrent.futures.process as cfp

            cfp._threads_wakeups.pop(thread, None)


def ordered_results(pool, futures: list):
    """The results of ``futures`` (submitted to ``pool``) in order, never waiting forever.

    A worker that dies while sending its result leaves the pool's reader blocked and
    the futures pending for good; this waits in bounded steps and raises
    ``RuntimeError`` when a worker has died.

    >>> from concurrent.futures import ProcessPoolExecutor
    >>> list(ordered_results(ProcessPoolExecutor(1), []))
    []
    """
    from concurrent.futures import wait
    from concurrent.futures.process import BrokenProcessPool

    for fut in futures:
        while not wait([fut], timeout=POOL_JOIN_SECONDS).done:
            if _dead_worker(pool):
                raise RuntimeError("a worker process died (the machine may be out of memory)")
        try:
            yield fut.result()
        except BrokenProcessPool:
            raise RuntimeError("a worker process died (the machine may be out of memory)") from None


def _dead_worker(pool) -> bool:
    """A worker of ``pool`` has died (the pool's reader may not have noticed)."""
    return any(p.exitcode is not None for p in list((getattr(pool, "_processes", None) or {}).values()))


def process_results(job: Job, ids: Iterator[int], jobs: int):
    """Play the chunks ``ids`` in ``jobs`` local worker processes (started with spawn)."""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    first = list(islice(ids, IN_FLIGHT_PER_WORKER * jobs))
    if not first:
        return
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(first)), mp_context=multiprocessing.get_context("spawn"),
                               initializer=_process_init, initargs=(job, os.getpid()))
    finished = False
    try:
        with _sigint_ignored():
            pending = {pool.submit(_process_chunk, i) for i in first}
        while pending:
            done, pending = wait(pending, timeout=POOL_JOIN_SECONDS, return_when=FIRST_COMPLETED)
            if not done and _dead_worker(pool):
                # a worker that died while sending its result leaves the pool's reader
                # blocked mid-message: it will never report the pool broken
                raise BrokenProcessPool("a worker died")
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
        close_pool(pool, finished)


def _import_distributed():
    try:
        import dask.distributed as distributed
    except ImportError:
        raise ValueError(DASK_MISSING) from None
    return distributed


def _dask_client(distributed, scheduler, jobs: int | None, stack: contextlib.ExitStack):
    import logging

    if isinstance(scheduler, distributed.Client):
        return scheduler
    if scheduler is None:
        with _sigint_ignored():
            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=jobs or usable_cores(), threads_per_worker=1, processes=True,
                dashboard_address=":0", silence_logs=logging.ERROR))
        return stack.enter_context(distributed.Client(cluster))
    try:
        client = distributed.Client(scheduler, timeout="20s")
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
    return stack.enter_context(client)


def dask_results(job: Job, ids: Iterator[int], jobs: int | None, scheduler):
    """Play the chunks ``ids`` on a Dask cluster (``scheduler``, or a LocalCluster of ``jobs`` workers)."""
    distributed = _import_distributed()
    with contextlib.ExitStack() as stack:
        client = _dask_client(distributed, scheduler, jobs, stack)
        limit = max(4, IN_FLIGHT_PER_WORKER * sum(client.nthreads().values()))
        [job_future] = client.scatter([job], broadcast=True, hash=False)
        pending: set = set()
        queue = distributed.as_completed()

        def submit(i):
            fut = client.submit(run_job_chunk, job_future, i, pure=False)
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
