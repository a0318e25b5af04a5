"""The driver of a run: plan the chunks, play them on a backend, merge, checkpoint, report progress.

>>> from yahtzee_sim import get_rules, get_strategy
>>> r = get_rules("yahtzee")
>>> out = run_chunks("turns", r, get_strategy("random").prepare(r), 5000, entropy=3, chunk_blocks=2)
>>> int(out.value.sum()), out.entropy
(5000, 3)
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..engine import SEED_BLOCK, seed_entropy
from ..files import WriteError
from ..results import GameAggregate
from ..rules import RuleSet
from ..strategies.base import Strategy
from .backends import (DASK_MISSING, IN_FLIGHT_PER_WORKER, check_backend, dask_results, make_job,  # noqa: F401
                       process_results, serial_results)
from .checkpoint import Checkpoint
from .plan import KINDS, ChunkPlan, Done, merge_games, merge_turns, play_chunk
from .progress import progress_bar

__all__ = ["RunInterrupted", "RunOutcome", "run_chunks"]

# Test hook: called with the number of chunks merged so far by this run (e.g. to
# raise KeyboardInterrupt midway). None in normal use.
after_chunk: Callable[[int], None] | None = None


def _check_roll_counts(counts: np.ndarray, n_turns: int) -> None:
    """Raise ``ValueError`` unless ``counts`` (non-negative) count ``n_turns`` turns."""
    if int(counts.sum()) != n_turns:
        raise ValueError(f"the roll counts hold {int(counts.sum()):,} turns, not {n_turns:,}")


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
    progress=False,
) -> RunOutcome:
    """Play ``n`` games (``kind="games"``) or single turns (``"turns"``) chunk by chunk.

    ``strategy`` must be prepared for ``rules``; ``entropy`` None draws a fresh seed
    (or reuses the one stored in ``checkpoint``). This is what
    :func:`yahtzee_sim.simulate` and :func:`yahtzee_sim.simulate_turns` call.
    """
    check_backend(backend, jobs, scheduler)
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    plan = ChunkPlan(kind, int(n), int(chunk_blocks))
    if kind == "games":
        empty, merge = GameAggregate.empty(rules), merge_games
    else:
        empty, merge = np.zeros(rules.dice.n_rolls, dtype=np.int64), merge_turns
        keep_games = False

    ckpt = None
    done = Done(empty)
    if checkpoint is not None:
        if keep_games:
            raise ValueError("a checkpoint saves aggregates only: it cannot be combined with keep_games=True "
                             "(per-game rows, --out)")
        check = (lambda value, count: value.check(rules, count)) if kind == "games" else _check_roll_counts
        ckpt = Checkpoint(checkpoint, {"kind": kind, "rules": rules.key, "strategy": strategy.name,
                                       "n": plan.n, "chunk_games": plan.chunk_size, "seed_block": SEED_BLOCK},
                          plan, check)
        entropy, stored = ckpt.load(entropy, empty)
        if stored is not None:
            done = stored
    if entropy is None:
        entropy = seed_entropy(None)
    resumed = done.count

    if backend == "serial":
        results = serial_results(lambda i: play_chunk(plan, rules, strategy, entropy, keep_games, i),
                                 done.todo(plan.n_chunks))
    else:
        job = make_job(plan, rules, strategy, entropy, keep_games, backend)
        if backend == "processes":
            results = process_results(job, done.todo(plan.n_chunks), int(jobs or os.cpu_count() or 1))
        else:
            results = dask_results(job, done.todo(plan.n_chunks), jobs, scheduler)

    rows: dict[int, dict] = {}
    unit = "games" if kind == "games" else "turns"
    bar = progress_bar(plan.n, done.count, unit, progress)
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
                if after_chunk is not None:
                    after_chunk(merged)
    except KeyboardInterrupt:
        where = ""
        if ckpt is not None:
            ckpt.save(done, entropy)  # a WriteError here says what the file still holds
            where = f"; completed chunks saved to {str(ckpt.path)!r}: run again with the same arguments to resume"
        if bar is not None:
            bar.close()
            bar = None
        raise RunInterrupted(f"interrupted after {done.count:,} of {plan.n:,} {unit}{where}",
                             done.count, plan.n, None if ckpt is None else str(ckpt.path)) from None
    except WriteError:
        raise  # the checkpoint could not be written: saving again would fail the same way
    except BaseException:
        if ckpt is not None:
            with contextlib.suppress(WriteError):  # the error that stopped the run matters more
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
