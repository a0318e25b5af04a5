"""Deterministic runs on any backend: chunk planning, backends, checkpoints and progress.

A run of N games (or single turns) is cut into *chunks* of whole seed blocks (see
:mod:`yahtzee_sim.engine`): with ``batch`` games per chunk, chunk i plays seed blocks
``[i*c, (i+1)*c)`` where ``c = max(1, batch // SEED_BLOCK)``, and block b draws from
the b-th child of the run's ``SeedSequence``. Each chunk returns a mergeable summary
(a :class:`~yahtzee_sim.results.GameAggregate` of exact integer histograms, or roll
counts for turns); merging is integer addition, so the result is bit-for-bit the same
for every backend, worker count and completion order. Per-game rows (small runs only)
are put back in chunk order.

Modules: :mod:`~yahtzee_sim.runner.plan` (chunk arithmetic and bookkeeping),
:mod:`~yahtzee_sim.runner.backends` (serial, processes, Dask),
:mod:`~yahtzee_sim.runner.checkpoint` (resumable runs),
:mod:`~yahtzee_sim.runner.progress` (the progress bar) and
:mod:`~yahtzee_sim.runner.driver` (:func:`run_chunks`, which ties them together).
The runner calls only the engine's public functions (:func:`~yahtzee_sim.engine.play_blocks`,
:func:`~yahtzee_sim.engine.play_table_blocks`, :func:`~yahtzee_sim.engine.play_turn_blocks`):
solitaire games, tables of players (:func:`yahtzee_sim.multiplayer.simulate_table`, a
:class:`~yahtzee_sim.results.TableAggregate` per chunk) and the paired tables of
:func:`yahtzee_sim.multiplayer.seat_gain` all run here.

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

from .backends import BACKENDS, DASK_MISSING, check_backend
from .driver import RunInterrupted, RunOutcome, run_chunks

__all__ = ["BACKENDS", "DASK_MISSING", "RunInterrupted", "RunOutcome", "check_backend", "run_chunks"]
