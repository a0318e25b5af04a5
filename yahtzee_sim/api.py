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

from .engine import SEED_BLOCK, seed_entropy
from .results import SimulationResult, TurnsResult
from .rules import RuleSet, get_rules
from .runner import check_backend, run_chunks
from .strategies import Strategy, get_strategy

__all__ = ["simulate", "simulate_turns", "check_count"]


def check_count(n, what: str) -> int:
    """A positive integer count, else a one-line ``ValueError`` naming ``what``.

    >>> check_count(10, "the number of games")
    10
    >>> check_count(0, "batch")
    Traceback (most recent call last):
    ...
    ValueError: batch must be a positive integer, got 0
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError(f"{what} must be a positive integer, got {n!r}")
    return int(n)


def simulate(
    rules: str | RuleSet,
    strategy: str | Strategy,
    n_games: int,
    *,
    options: Iterable[str] = (),
    seed: int | np.random.SeedSequence | None = None,
    batch: int = 65536,
    keep_games: bool | None = None,
    progress=False,
    backend: str = "serial",
    jobs: int | None = None,
    scheduler=None,
    checkpoint=None,
) -> SimulationResult:
    """Play ``n_games`` complete games of ``rules`` under ``strategy``.

    Parameters
    ----------
    rules, options : a rule-set name (see :func:`yahtzee_sim.rules.rule_names`) and its options.
    strategy : a strategy name or instance.
    seed : one seed in, reproducible results out (recorded in the result).
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

    >>> res = simulate("yatzy", "random", 1000, seed=5)
    >>> res.summary()["games"], res.seed
    (1000, 5)
    """
    check_backend(backend, jobs, scheduler)
    rules = get_rules(rules, options)
    strat = get_strategy(strategy).prepare(rules)
    n_games = check_count(n_games, "the number of games")
    batch = check_count(batch, "batch")
    entropy = None if seed is None else seed_entropy(seed)
    if keep_games is None:
        keep_games = n_games <= 1_000_000 and checkpoint is None
    out = run_chunks("games", rules, strat, n_games, entropy=entropy, chunk_blocks=max(1, batch // SEED_BLOCK),
                     keep_games=keep_games, backend=backend, jobs=jobs, scheduler=scheduler,
                     checkpoint=checkpoint, progress=progress)
    return SimulationResult(rules=rules, strategy=strat.name, n_games=n_games, seed=out.entropy,
                            aggregate=out.value, games=out.rows, seconds=out.seconds)


def simulate_turns(
    rules: str | RuleSet,
    strategy: str | Strategy,
    n_turns: int,
    *,
    options: Iterable[str] = (),
    seed: int | np.random.SeedSequence | None = None,
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
    (:class:`yahtzee_sim.exact.turns.ChasePattern`). ``backend``, ``jobs``,
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
    strat = get_strategy(strategy)
    if target is not None:
        from .exact.turns import ChasePattern

        strat = ChasePattern(target)
    strat = strat.prepare(rules)
    n_turns = check_count(n_turns, "the number of turns")
    entropy = None if seed is None else seed_entropy(seed)
    per_batch = max(1, check_count(batch, "batch") // SEED_BLOCK)
    out = run_chunks("turns", rules, strat, n_turns, entropy=entropy, chunk_blocks=per_batch,
                     backend=backend, jobs=jobs, scheduler=scheduler, checkpoint=checkpoint, progress=progress)
    return TurnsResult(rules=rules, strategy=strat.name, n_turns=n_turns, seed=out.entropy,
                       roll_counts=out.value, seconds=out.seconds)
