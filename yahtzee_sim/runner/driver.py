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
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..engine import SEED_BLOCK, RunSeed, SpawnedSeed, seed_entropy
from ..files import WriteError
from ..results import GameAggregate, TableAggregate
from ..rules import RuleSet
from ..strategy import Strategy
from .backends import (DASK_MISSING, IN_FLIGHT_PER_WORKER, check_backend, dask_results, make_job,  # noqa: F401
                       process_results, serial_results, worker_count)
from .checkpoint import Checkpoint
from .gain import GainAggregate
from .plan import KINDS, ChunkPlan, Done, PartsPlan, lineup_name, merge_games, merge_turns, play_chunk, seats_of
from .progress import progress_bar
from .rows import RowSink, check_out

__all__ = ["RunInterrupted", "RunOutcome", "run_chunks", "check_checkpoint"]

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

    value: Any  # GameAggregate (games), TableAggregate (table), GainAggregate (gain) or (R,) int64 roll counts (turns)
    rows: dict[str, np.ndarray] | None
    entropy: RunSeed
    seconds: float
    resumed: int = 0  # games/turns taken from a checkpoint


def run_chunks(
    kind: str,
    rules: RuleSet,
    strategy: Strategy,
    n: int,
    *,
    entropy: RunSeed | None,
    chunk_blocks: int,
    keep_games: bool = False,
    backend: str = "serial",
    jobs: int | None = None,
    scheduler: Any = None,
    checkpoint: str | os.PathLike | None = None,
    progress=False,
    out: str | os.PathLike | None = None,
    parts: tuple | None = None,
) -> RunOutcome:
    """Play ``n`` games (``kind="games"``), single turns (``"turns"``) or games at one table
    (``"table"``: ``strategy`` a tuple of strategies, one per seat) chunk by chunk.

    ``strategy`` must be prepared for ``rules``; ``entropy`` None draws a fresh seed
    (or reuses the one stored in ``checkpoint``). ``out`` streams the per-game rows to
    a CSV or Parquet file as chunks complete (:mod:`yahtzee_sim.runner.rows`), also with
    a checkpoint. This is what :func:`yahtzee_sim.simulate`,
    :func:`yahtzee_sim.simulate_turns` and :func:`yahtzee_sim.multiplayer.simulate_table`
    call; ``kind="gain"`` plays the paired tables ``parts`` of
    :func:`yahtzee_sim.multiplayer.seat_gain` (:class:`~yahtzee_sim.runner.plan.PartsPlan`,
    ``strategy`` the tuple (player, baseline, opponents...); a
    :class:`~yahtzee_sim.runner.gain.GainAggregate`, rows only with ``keep_games``).
    """
    check_backend(backend, jobs, scheduler)
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    plan = PartsPlan(kind, tuple(parts)) if kind == "gain" else ChunkPlan(kind, int(n), int(chunk_blocks))
    if kind == "gain":
        empty, merge = GainAggregate.empty(rules, len(seats_of(strategy)) - 2), merge_games
        if out is not None:
            raise ValueError("out writes solitaire games' rows: a paired gain run's games have other columns")
    elif kind == "games":
        empty, merge = GameAggregate.empty(rules), merge_games
    elif kind == "table":
        empty, merge = TableAggregate.empty(rules, len(seats_of(strategy))), merge_games
        if out is not None:
            raise ValueError("out writes solitaire games' rows: a table's games have other columns")
    else:
        empty, merge = np.zeros(rules.dice.n_rolls, dtype=np.int64), merge_turns
        keep_games = False
        if out is not None:
            raise ValueError("out writes per-game rows: single turns have none")
    if checkpoint is not None:
        checkpoint = check_checkpoint(checkpoint)
        if keep_games:
            raise ValueError("a checkpoint saves aggregates only: it cannot be combined with keep_games=True "
                             "(per-game rows in memory); stream the rows to a file with out=FILE instead")
    out_path = None if out is None else check_out(out, resumable=checkpoint is not None)

    ckpt = None
    done = Done(empty)
    rows_state = None
    if checkpoint is not None:
        check = (lambda value, count: value.check(rules, count)) if kind != "turns" else _check_roll_counts
        params = {"kind": kind, "rules": rules.key, "strategy": lineup_name(strategy), "n": plan.n,
                  "chunk_games": plan.chunk_size, "seed_block": SEED_BLOCK}
        if kind == "gain":  # which seats the player sits in (the parts' seeds follow from the seed)
            params["seats"] = sorted({seat for seat, _, _ in plan.parts})
        if out_path is not None:  # relative to the checkpoint: a folder moved with both still resumes
            params["out"] = os.path.relpath(out_path.resolve(), Path(checkpoint).resolve().parent)
        if isinstance(entropy, SpawnedSeed):  # a spawned child: its key is part of the run (plain seeds have none)
            params["spawn_key"] = list(entropy.spawn_key)
            if not isinstance(entropy.entropy, int):
                raise ValueError("a checkpoint records an integer seed: seed this run with an integer or a "
                                 "SeedSequence of one integer")
        ckpt = Checkpoint(checkpoint, params, plan, check)
        key = entropy.spawn_key if isinstance(entropy, SpawnedSeed) else None
        stored_entropy, stored = ckpt.load(entropy.entropy if key is not None else entropy, empty)
        entropy = stored_entropy if key is None or stored_entropy is None else SpawnedSeed(stored_entropy, key)
        if stored is not None:
            done = stored
            rows_state = ckpt.rows_state
            if out_path is not None and (rows_state is None or done.extra or rows_state.get("chunks") != done.below):
                raise ckpt.damaged("its record of the per-game table does not match the completed chunks")
    if entropy is None:
        entropy = seed_entropy(None)
    resumed = done.count

    sink = None
    if out_path is not None:
        sink = RowSink(out_path, rules, resumable=ckpt is not None)
        if rows_state is not None:
            sink.resume(rows_state, plan.n_chunks)
    want_rows = keep_games or sink is not None
    todo = done.todo(plan.n_chunks)
    for seat in seats_of(strategy) if kind in ("games", "table") else ():
        expect = getattr(seat, "expect_games", None)
        if expect is not None:   # a table is built from the whole run's size, once, before work is shipped
            expect(plan.n - done.count)
    if backend == "serial":
        results = serial_results(lambda i: play_chunk(plan, rules, strategy, entropy, want_rows, i), todo)
    else:
        job = make_job(plan, rules, strategy, entropy, want_rows, backend)
        workers = worker_count(jobs, plan.n_chunks - done.below - len(done.extra))
        if backend == "processes":
            results = process_results(job, todo, workers)
        else:
            results = dask_results(job, todo, workers if scheduler is None else jobs, scheduler)

    rows: dict[int, dict] = {}
    waiting: dict[int, tuple] = {}  # with a sink: chunks done out of order, merged once their turn comes
    unit = "turns" if kind == "turns" else "games"
    bar = progress_bar(plan.n, done.count, unit, progress)
    start = time.perf_counter()
    merged = 0

    def save():
        if sink is not None:
            sink.sync()
        ckpt.save(done, entropy.entropy if isinstance(entropy, SpawnedSeed) else entropy,
                  rows=None if sink is None else sink.state())

    try:
        with contextlib.closing(results):
            for i, part in results:
                if kind != "turns":
                    part, games = part
                    if sink is not None:
                        waiting[i] = (part, games)
                        ready = []
                        while done.below + len(ready) in waiting:
                            ready.append(done.below + len(ready))
                    else:
                        ready = [i]
                        waiting[i] = (part, games)
                else:
                    ready, waiting[i] = [i], (part, None)
                for j in ready:
                    part, games = waiting.pop(j)
                    if sink is not None:
                        sink.write(games)
                    if keep_games:
                        rows[j] = games
                    done = done.add(j, part, plan.size(j), merge)
                    merged += 1
                    if bar is not None:
                        bar.update(plan.size(j))
                    if ckpt is not None and ckpt.due():
                        save()
                    if after_chunk is not None:
                        after_chunk(merged)
    except KeyboardInterrupt:
        where = ""
        if ckpt is not None:
            save()  # a WriteError here says what the file still holds
            where = f"; completed chunks saved to {str(ckpt.path)!r}: run again with the same arguments to resume"
        if sink is not None:
            sink.abort()
        if bar is not None:
            bar.close()
            bar = None
        raise RunInterrupted(f"interrupted after {done.count:,} of {plan.n:,} {unit}{where}",
                             done.count, plan.n, None if ckpt is None else str(ckpt.path)) from None
    except BaseException:  # incl. a WriteError of the table or the checkpoint (a full disk)
        if ckpt is not None:
            with contextlib.suppress(WriteError):  # the error that stopped the run matters more
                save()
        if sink is not None:
            sink.abort()
        raise
    finally:
        if bar is not None:
            bar.close()
    if done.count != plan.n:  # pragma: no cover - guarded by the chunk arithmetic
        raise RuntimeError(f"played {done.count} {unit} instead of {plan.n}")
    if ckpt is not None:
        # The final checkpoint first, then the table into place: a kill between the two
        # leaves a checkpoint of the whole run and either the partial table or the
        # finished one, and the next run completes from either (RowSink.resume).
        save()
    if sink is not None:
        sink.finish()
    table = None
    if keep_games:
        order = sorted(rows)
        table = {k: np.concatenate([rows[i][k] for i in order]) for k in rows[order[0]]}
    return RunOutcome(done.value, table, entropy, time.perf_counter() - start, resumed)


def check_checkpoint(checkpoint) -> Path:
    """A checkpoint argument must be a non-empty file path (str or os.PathLike).

    >>> check_checkpoint(123)
    Traceback (most recent call last):
    ...
    ValueError: checkpoint must be a file path, got 123
    """
    if isinstance(checkpoint, bool) or not isinstance(checkpoint, (str, os.PathLike)):
        raise ValueError(f"checkpoint must be a file path, got {checkpoint!r}")
    text = os.fspath(checkpoint)
    if not isinstance(text, str) or not text.strip():
        raise ValueError("checkpoint is empty: give a file name, e.g. run.json")
    return Path(text)
