"""The public simulation API: :func:`simulate` and :func:`simulate_turns`.

It checks the arguments, resolves rule and strategy names, and hands the run to
:func:`yahtzee_sim.runner.run_chunks`, which plays seed blocks through the engine on
the chosen backend. Both are re-exported as ``yahtzee_sim.simulate`` and
``yahtzee_sim.simulate_turns``.

>>> res = simulate("yahtzee", "keep-largest", 2048, seed=42)
>>> res2 = simulate("yahtzee", "keep-largest", 2048, seed=42, batch=1024)
>>> bool((res.games["total"] == res2.games["total"]).all())
True
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

import time

from .engine import SEED_BLOCK, play_blocks, play_turn_blocks, seed_from_rng
from .results import SimulationResult, TurnsResult, max_total
from .rules import RuleSet, get_rules
from .runner import check_backend, run_chunks
from .runner.backends import usable_cores
from .runner.driver import check_checkpoint
from .runner.rows import check_out
from .strategy import Strategy, get_strategy
from .validate import whole_number

__all__ = ["simulate", "simulate_turns", "check_batch", "check_count", "check_countable", "check_finishes", "MAX_BATCH", "MAX_RUN_SECONDS"]

MAX_RUN_SECONDS = 365 * 24 * 3600
"""A run estimated to take longer than this (a year) is refused before it starts."""

PILOT_ABOVE = 10**8
"""Runs of more games than this are timed on a pilot seed block first (a few ms)."""

_INT64_MAX = 2**63 - 1


def _count_text(n: int) -> str:
    from decimal import Decimal

    return f"{n:,}" if n < 10**15 else f"{Decimal(n):.3g}"


def _duration_text(seconds: float) -> str:
    """3.2e7 -> 'about 1 year' (rounded to what matters for a refusal)."""
    for unit, size in (("year", 365 * 86400), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            amount = seconds / size
            text = f"{amount:,.0f}" if amount < 1e15 else f"{amount:.2g}"
            return f"about {text} {unit}{'' if text == '1' else 's'}"
    return f"about {seconds:.0f} seconds"


def check_countable(kind: str, rules: RuleSet, n: int) -> None:
    """Refuse counts the exact 64-bit histograms cannot hold (sums of scores included).

    >>> check_countable("games", get_rules("yahtzee"), 10**30)
    Traceback (most recent call last):
    ...
    ValueError: 1.00e+30 games cannot be counted exactly: the histograms hold 64-bit sums, at most 5.21e+15 games of yahtzee
    """
    limit = _INT64_MAX // max(1, max_total(rules)) if kind == "games" else _INT64_MAX
    if n > limit:
        raise ValueError(f"{_count_text(n)} {kind} cannot be counted exactly: the histograms hold 64-bit sums, "
                         f"at most {_count_text(limit)} {kind} of {rules.key}")


def check_finishes(kind: str, rules: RuleSet, strategy: Strategy, n: int, backend: str, jobs, scheduler) -> None:
    """Refuse a run that would take more than :data:`MAX_RUN_SECONDS`, timed on a pilot block.

    Only runs above :data:`PILOT_ABOVE` are timed. The workers are the run's (``jobs``,
    or every core); on a remote Dask cluster their number is unknown before the run,
    so no limit is applied there.
    """
    if n <= PILOT_ABOVE:
        return
    if backend == "serial":
        workers = 1
    elif backend == "processes" or scheduler is None:
        workers = jobs or usable_cores()
    elif jobs is not None:
        workers = jobs
    else:
        return
    play = play_blocks if kind == "games" else play_turn_blocks
    play(rules, strategy, 0, range(0, 1), SEED_BLOCK)  # warm-up (tables, caches)
    start = time.perf_counter()
    play(rules, strategy, 0, range(1, 3), 3 * SEED_BLOCK)
    rate = 2 * SEED_BLOCK / max(time.perf_counter() - start, 1e-9)
    seconds = n / (rate * workers)
    if seconds > MAX_RUN_SECONDS:
        most = int(rate * workers * MAX_RUN_SECONDS)
        raise ValueError(f"{_count_text(n)} {kind} would take {_duration_text(seconds)} at the "
                         f"{rate:,.0f} {kind}/s measured here on {workers} worker{'s' if workers > 1 else ''}: "
                         f"at most about {most:.3g} finish in a year; pass fewer {kind}")


def check_count(n, what: str) -> int:
    """A positive integer count (a whole float such as ``1e5`` too, as on the command
    line), else a one-line ``ValueError`` naming ``what``.

    >>> check_count(10, "the number of games"), check_count(1e5, "the number of games")
    (10, 100000)
    >>> check_count(0, "batch")
    Traceback (most recent call last):
    ...
    ValueError: batch must be a positive integer, got 0
    >>> check_count(1e5, "the number of games")      # an integral float, as --games 1e5 takes
    100000
    >>> check_count(2.5, "the number of games")
    Traceback (most recent call last):
    ...
    ValueError: the number of games must be a positive integer (a float such as 1e5 must be whole), got 2.5
    """
    # A float that is a whole number (1e5) is the count the command line's --games 1e5 means.
    return whole_number(n, what)


MAX_BATCH = 1 << 22
"""Most games (or turns) played at once: about 2 GB of game state and dice tapes at
~0.5 kB a game. Results do not depend on the batch, so a larger one buys nothing but
the risk of running out of memory."""


def check_batch(batch) -> int:
    """A batch size between 1 and :data:`MAX_BATCH`, else a one-line ``ValueError``.

    >>> check_batch(65536)
    65536
    >>> check_batch(10**9)
    Traceback (most recent call last):
    ...
    ValueError: batch must be at most 4,194,304 (about 2 GB of game state; results do not depend on it), got 1,000,000,000
    """
    batch = check_count(batch, "batch")
    if batch > MAX_BATCH:
        raise ValueError(f"batch must be at most {MAX_BATCH:,} (about 2 GB of game state; results do not "
                         f"depend on it), got {batch:,}")
    return batch


def _named_with_progress(strategy, progress) -> Strategy:
    """The strategy object; one made here from a name shows its own first solve or table
    build (minutes for a large game) as the run shows its progress: never with False."""
    strat = get_strategy(strategy)
    if isinstance(strategy, str) and hasattr(strat, "progress"):
        strat.progress = progress
    return strat


def simulate(
    rules: str | RuleSet,
    strategy: str | Strategy,
    n_games: int,
    *,
    options: Iterable[str] = (),
    seed: int | np.random.SeedSequence | None = None,
    rng: int | np.random.SeedSequence | np.random.Generator | None = None,
    batch: int = 65536,
    keep_games: bool | None = None,
    progress=False,
    backend: str = "serial",
    jobs: int | None = None,
    scheduler=None,
    checkpoint=None,
    out=None,
) -> SimulationResult:
    """Play ``n_games`` complete games of ``rules`` under ``strategy``.

    Parameters
    ----------
    rules, options : a rule-set name (see :func:`yahtzee_sim.rules.rule_names`) and its options.
    strategy : a strategy name or instance.
    seed : one seed in, reproducible results out (recorded in the result): an integer or
        a ``SeedSequence`` (spawned children play different games; the same child, the
        same games).
    rng : the same as ``seed`` under SPEC 7's name, also taking a ``Generator`` (a seed
        is drawn from it and recorded); give one of the two.
    batch : games played at once (memory ~ 0.5 kB per game); does not change results.
    keep_games : keep the per-game table (default: when ``n_games <= 1_000_000`` and
        no checkpoint); otherwise only exact aggregates are kept and memory stays bounded.
    progress : ``True`` for a bar with ETA on a terminal's stderr (none elsewhere), or a
        :mod:`yahtzee_sim.progress` callback ``progress(phase, done, total)``.
    backend, jobs, scheduler : where the chunks of ``batch`` games run: ``"serial"``,
        ``"processes"`` (``jobs`` local processes) or ``"dask"`` (the cluster at
        ``scheduler``, or a LocalCluster); see :mod:`yahtzee_sim.runner`. Results
        do not depend on it.
    checkpoint : a file saving completed chunks; an interrupted run given the same
        file resumes (needs the same arguments; a run without a seed reuses the stored one).
    out : a ``.csv`` or ``.parquet`` file receiving the per-game table, streamed chunk by
        chunk while the games are played (memory stays flat; works with ``checkpoint``
        for CSV); the table is the one :meth:`SimulationResult.to_frame` gives.

    A count too large to count exactly in the 64-bit histograms, or whose run would
    take more than a year at the rate measured on a pilot block, is refused before
    any work (``ValueError`` saying how long it would take).

    >>> res = simulate("yatzy", "random", 1000, seed=5)
    >>> res.summary()["games"], res.seed
    (1000, 5)
    """
    check_backend(backend, jobs, scheduler)
    rules = get_rules(rules, options)
    n_games = check_count(n_games, "the number of games")
    batch = check_batch(batch)
    entropy = seed_from_rng(seed, rng)
    if checkpoint is not None:
        checkpoint = check_checkpoint(checkpoint)
    if out is not None:
        out = check_out(out, resumable=checkpoint is not None)
    check_countable("games", rules, n_games)
    strat = _named_with_progress(strategy, progress).prepare(rules)
    if hasattr(strat, "expect_games"):
        strat.expect_games(n_games)   # before the pilot: it then plays as the run will
    check_finishes("games", rules, strat, n_games, backend, jobs, scheduler)
    if keep_games is None:
        keep_games = n_games <= 1_000_000 and checkpoint is None and out is None
    run = run_chunks("games", rules, strat, n_games, entropy=entropy, chunk_blocks=max(1, batch // SEED_BLOCK),
                     keep_games=keep_games, backend=backend, jobs=jobs, scheduler=scheduler,
                     checkpoint=checkpoint, progress=progress, out=out)
    return SimulationResult(rules=rules, strategy=strat.name, n_games=n_games, seed=run.entropy,
                            aggregate=run.value, games=run.rows, seconds=run.seconds)


def simulate_turns(
    rules: str | RuleSet,
    strategy: str | Strategy,
    n_turns: int,
    *,
    options: Iterable[str] = (),
    seed: int | np.random.SeedSequence | None = None,
    rng: int | np.random.SeedSequence | np.random.Generator | None = None,
    batch: int = 262144,
    progress=False,
    target: str | None = None,
    backend: str = "serial",
    jobs: int | None = None,
    scheduler=None,
    checkpoint=None,
) -> TurnsResult:
    """Play ``n_turns`` independent first turns (fresh card) and count the final rolls.

    The keeps come from ``strategy``; its box choice is not used. Turn i uses the
    dice tape of game i's first turn, so the same seed gives the same dice as
    :func:`simulate`. ``target`` (a pattern name, see
    :func:`yahtzee_sim.patterns.pattern_names`) overrides the strategy's keeps with
    the keeps that maximize the exact chance of ending in that pattern
    (:class:`yahtzee_sim.strategies.chase.ChasePattern`). ``backend``, ``jobs``,
    ``scheduler`` and ``checkpoint`` work as in :func:`simulate` (chunks of ``batch``
    turns, each played by :func:`yahtzee_sim.engine.play_turn_blocks`).

    >>> res = simulate_turns("yahtzee", "keep-largest", 20000, seed=1)
    >>> bool(0.03 < res.to_frame().loc["five_of_a_kind", "frequency"] < 0.06)
    True

    >>> res = simulate_turns("yahtzee", "keep-largest", 4096, seed=1, target="large_straight")
    >>> res.strategy, bool(res.to_frame().loc["large_straight", "frequency"] > 0.2)
    ('chase:large_straight', True)
    """
    check_backend(backend, jobs, scheduler)
    rules = get_rules(rules, options)
    n_turns = check_count(n_turns, "the number of turns")
    entropy = seed_from_rng(seed, rng)
    per_batch = max(1, check_batch(batch) // SEED_BLOCK)
    if checkpoint is not None:
        checkpoint = check_checkpoint(checkpoint)
    check_countable("turns", rules, n_turns)
    strat = _named_with_progress(strategy, progress)
    if target is not None:
        from .strategies.chase import ChasePattern

        strat = ChasePattern(target)
    strat = strat.prepare(rules)
    check_finishes("turns", rules, strat, n_turns, backend, jobs, scheduler)
    out = run_chunks("turns", rules, strat, n_turns, entropy=entropy, chunk_blocks=per_batch,
                     backend=backend, jobs=jobs, scheduler=scheduler, checkpoint=checkpoint, progress=progress)
    return TurnsResult(rules=rules, strategy=strat.name, n_turns=n_turns, seed=out.entropy,
                       roll_counts=out.value, seconds=out.seconds)
