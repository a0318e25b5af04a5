"""The vectorized simulator: N complete games (or single turns) at once.

Reproducibility contract (common random numbers)
-------------------------------------------------
Games are numbered 0..N-1 and grouped in seed blocks of :data:`SEED_BLOCK`
games; block b draws from the b-th child of the run's ``SeedSequence``. Each
game owns a *dice tape*: for every turn and every roll, ``n_dice`` fresh dice.
A roll that throws k dice uses the first k dice of its slot. Each game also owns
one uniform per decision (passed to the strategy as ``u``). Hence:

* the same seed gives the same games, whatever ``batch`` or worker layout;
* two strategies run with the same seed see the same first roll every turn and
  draw their rerolls from the same slots (paired comparisons have low variance);
  what differs is only what their own decisions make of those dice.

>>> res = simulate("yahtzee", "keep-largest", 2048, seed=42)
>>> res2 = simulate("yahtzee", "keep-largest", 2048, seed=42, batch=1024)
>>> bool((res.games["total"] == res2.games["total"]).all())
True
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Iterable

import numpy as np
import pandas as pd

from .results import SimulationResult
from .rules import RuleSet, get_rules
from .state import GameState, TurnOptions
from .strategies import Strategy, get_strategy

__all__ = ["simulate", "simulate_turns", "play_blocks", "SEED_BLOCK", "StrategyError", "TurnsResult"]

SEED_BLOCK = 1024
"""Games per seed block: part of the reproducibility contract, do not change."""


class StrategyError(ValueError):
    """A strategy returned an illegal keep or box."""


FRESH_SEED_BELOW = 10**9
"""A run without a seed draws one below this from the OS (``SeedSequence().entropy``
reduced): short enough to retype, and the printed seed is the one used."""


def _entropy(seed) -> int:
    """The seed a run uses: ``seed`` itself, or a fresh one (see :data:`FRESH_SEED_BELOW`).

    >>> _entropy(7), 0 <= _entropy(None) < FRESH_SEED_BELOW
    (7, True)
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy) % FRESH_SEED_BELOW
    if isinstance(seed, np.random.SeedSequence):
        return int(seed.entropy)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed must be a non-negative integer or None, got {seed!r}")


def _check_count(n, what: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError(f"{what} must be a positive integer, got {n!r}")
    return int(n)


def _block_tapes(rules: RuleSet, entropy: int, blocks: range, n_turns: int):
    """Dice tape (n, T, rolls, dice) uint8 and decision uniforms (n, T, rolls) float32."""
    dice, unif = [], []
    for b in blocks:
        gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(b,))))
        dice.append(gen.integers(1, rules.n_faces + 1,
                                 size=(SEED_BLOCK, n_turns, rules.n_rolls, rules.n_dice), dtype=np.uint8))
        unif.append(gen.random((SEED_BLOCK, n_turns, rules.n_rolls), dtype=np.float32))
    return np.concatenate(dice), np.concatenate(unif)


@dataclass(frozen=True)
class _Checks:
    is_subkeep: np.ndarray  # (R, K) bool

    @classmethod
    def of(cls, rules: RuleSet) -> "_Checks":
        d = rules.dice
        sub = np.zeros((d.n_rolls, d.n_keeps), dtype=bool)
        rows = np.repeat(np.arange(d.n_rolls), d.subkeeps.shape[1])
        cols = d.subkeeps.ravel()
        ok = cols >= 0
        sub[rows[ok], cols[ok]] = True
        return cls(sub)


def _play_turn(rules, strategy, state, prefix_keys, unif, checks):
    """Roll, keep and reroll, then fill a box, for every game of ``state``."""
    d = rules.dice
    rolls = d.key_to_roll[prefix_keys[:, 0, d.n_dice]].astype(np.intp)
    # Throws made so far: holding every die is not a throw. Only rule sets with a box that
    # depends on the roll number (a combination "served" on the first roll) need it.
    throws = np.ones(len(rolls), dtype=np.int8) if rules.roll_dependent else None
    for r in range(1, rules.n_rolls):
        keeps = np.asarray(strategy.keep(state, rolls, rules.n_rolls - r, unif[:, r - 1]))
        if keeps.shape != rolls.shape or keeps.dtype.kind not in "iu":
            raise StrategyError(f"strategy {strategy.name!r}: keep() must return {rolls.shape} keep indices")
        if keeps.size and (keeps.min() < 0 or keeps.max() >= d.n_keeps):
            bad = (keeps < 0) | (keeps >= d.n_keeps)
        else:
            ok = checks.is_subkeep[rolls, keeps]
            bad = None if ok.all() else ~ok
        if bad is not None:
            g = int(np.flatnonzero(bad)[0])
            raise StrategyError(
                f"strategy {strategy.name!r} kept dice it does not have (game {g}, turn "
                f"{state.turn + 1}, roll {r}: dice {d.roll_dice[rolls[g]].tolist()}, keep index {int(keeps[g])})"
            )
        if throws is not None:
            throws = np.where(d.keep_size[keeps] < d.n_dice, r + 1, throws).astype(np.int8)
        rolls = d.reroll(keeps, prefix_keys[:, r]).astype(np.intp)
    legal, scores, bonus = rules.turn_options(state.filled, state.five_box_full, rolls, throws=throws)
    gain = scores + rules.upper_bonus_gain(state.upper_total, scores) + bonus[:, None]
    boxes = np.asarray(strategy.box(state, rolls, TurnOptions(legal, scores, gain), unif[:, -1]))
    if boxes.shape != rolls.shape or boxes.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: box() must return {rolls.shape} box indices")
    n = len(rolls)
    rows = np.arange(n)
    if boxes.size and (boxes.min() < 0 or boxes.max() >= rules.n_boxes):
        ok = (boxes >= 0) & (boxes < rules.n_boxes)
        ok[ok] = legal[np.flatnonzero(ok), boxes[ok]]
    else:
        ok = legal[rows, boxes]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        allowed = [rules.box_names[b] for b in np.flatnonzero(legal[g])]
        raise StrategyError(
            f"strategy {strategy.name!r} chose an illegal box (game {g}, turn {state.turn + 1}: "
            f"box index {int(boxes[g])}; legal: {', '.join(allowed)})"
        )
    flat = rows * rules.n_boxes + boxes          # one flat index for the (game, box) updates
    points = scores.reshape(-1)[flat] if scores.flags.c_contiguous else scores[rows, boxes]
    for arr, value in ((state.filled, True), (state.box_scores, points), (state.fill_turn, state.turn + 1)):
        if arr.flags.c_contiguous:
            arr.reshape(-1)[flat] = value
        else:
            arr[rows, boxes] = value
    state.upper_total += points * rules.is_upper[boxes]
    state.five_bonus_count += (bonus > 0)
    state.five_count += rules.five_face[rolls] > 0
    if rules.five_box is not None:
        state.five_box_full |= (boxes == rules.five_box_index) & (points == rules.five_box_points)
    state.turn += 1
    return rolls, boxes


def play_blocks(rules: RuleSet, strategy: Strategy, entropy: int, blocks: range, n_games: int) -> dict:
    """Play every game of seed ``blocks`` (the last one cut at game ``n_games``).

    Returns per-game arrays. This is the unit of work of every backend: the same
    blocks give the same games on any machine.
    """
    checks = _Checks.of(rules)
    n_turns = rules.n_boxes
    tape, unif = _block_tapes(rules, entropy, blocks, n_turns)
    stop = min(len(tape), n_games - blocks.start * SEED_BLOCK)
    tape, unif = tape[:stop], unif[:stop]
    state = GameState.new(rules, stop)
    d = rules.dice
    for t in range(n_turns):
        prefix = d.tape_prefix_keys(tape[:, t])
        _play_turn(rules, strategy, state, prefix, unif[:, t], checks)
    if not state.filled.all():  # pragma: no cover - guarded by legality checks
        raise RuntimeError("a game ended with an open box")
    upper_bonus = rules.final_bonus(state.upper_total).astype(np.int16)
    return {
        "total": state.total(rules),
        "box_scores": state.box_scores,
        "upper_total": state.upper_total,
        "upper_bonus": upper_bonus,
        "five_bonus_count": state.five_bonus_count,
        "five_count": state.five_count,
        "fill_turn": state.fill_turn,
        "five_box_full": state.five_box_full,
    }


def _progress(total: int, unit: str, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, unit=unit, unit_scale=True, delay=2.0, file=sys.stderr, leave=False)


def simulate(
    rules: str | RuleSet,
    strategy: str | Strategy,
    n_games: int,
    *,
    options: Iterable[str] = (),
    seed: int | np.random.SeedSequence | None = None,
    batch: int = 65536,
    keep_games: bool | None = None,
    progress: bool = False,
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
    progress : show a progress bar on a terminal's stderr for long runs.
    backend, jobs, scheduler : where the chunks of ``batch`` games run: ``"serial"``,
        ``"processes"`` (``jobs`` local processes) or ``"dask"`` (the cluster at
        ``scheduler``, or a LocalCluster); see :mod:`yahtzee_sim.parallel`. Results
        do not depend on it.
    checkpoint : a file saving completed chunks; an interrupted run given the same
        file resumes (needs the same arguments; a run without a seed reuses the stored one).

    >>> res = simulate("yatzy", "random", 1000, seed=5)
    >>> res.summary()["games"], res.seed
    (1000, 5)
    """
    from .parallel import check_backend, run_chunks

    check_backend(backend, jobs, scheduler)
    rules = get_rules(rules, options)
    strat = get_strategy(strategy).prepare(rules)
    n_games = _check_count(n_games, "the number of games")
    batch = _check_count(batch, "batch")
    entropy = None if seed is None else _entropy(seed)
    if keep_games is None:
        keep_games = n_games <= 1_000_000 and checkpoint is None
    out = run_chunks("games", rules, strat, n_games, entropy=entropy, chunk_blocks=max(1, batch // SEED_BLOCK),
                     keep_games=keep_games, backend=backend, jobs=jobs, scheduler=scheduler,
                     checkpoint=checkpoint, progress=progress)
    return SimulationResult(rules=rules, strategy=strat.name, n_games=n_games, seed=out.entropy,
                            aggregate=out.value, games=out.rows, seconds=out.seconds)


# -- single turns -------------------------------------------------------------------

@dataclass
class TurnsResult:
    """Final patterns of N independent single turns played on a fresh card."""

    rules: RuleSet
    strategy: str
    n_turns: int
    seed: int
    roll_counts: np.ndarray  # (R,) how many turns ended in each roll
    seconds: float = float("nan")

    def __repr__(self) -> str:
        five = self.pattern_counts()["five_of_a_kind"] / self.n_turns
        return (f"TurnsResult({self.rules.key!r}, {self.strategy!r}, turns={self.n_turns:,}, "
                f"seed={self.seed}: five_of_a_kind {five:.4f})")

    def pattern_counts(self) -> pd.Series:
        """Turns ending in each pattern of :data:`yahtzee_sim.patterns.PATTERNS` ("or better" counts)."""
        from .patterns import pattern_table

        table = pattern_table(self.rules.dice)
        return pd.Series(table.T.astype(np.int64) @ self.roll_counts, index=table.columns, name="turns")

    def to_frame(self, level: float = 0.95) -> pd.DataFrame:
        """Frequency of each pattern with its Wilson confidence interval."""
        from scipy import stats

        counts = self.pattern_counts()
        rows = []
        for name, k in counts.items():
            ci = stats.binomtest(int(k), self.n_turns).proportion_ci(confidence_level=level, method="wilson")
            rows.append({"pattern": name, "turns": int(k), "frequency": k / self.n_turns,
                         "ci_low": ci.low, "ci_high": ci.high})
        return pd.DataFrame(rows).set_index("pattern")


def simulate_turns(
    rules: str | RuleSet,
    strategy: str | Strategy,
    n_turns: int,
    *,
    options: Iterable[str] = (),
    seed: int | np.random.SeedSequence | None = None,
    batch: int = 262144,
    progress: bool = False,
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
    turns, each played by :func:`yahtzee_sim.parallel.play_turn_blocks`).

    >>> res = simulate_turns("yahtzee", "keep-largest", 20000, seed=1)
    >>> bool(0.03 < res.to_frame().loc["five_of_a_kind", "frequency"] < 0.06)
    True

    >>> res = simulate_turns("yahtzee", "keep-largest", 4096, seed=1, target="large_straight")
    >>> res.strategy, bool(res.to_frame().loc["large_straight", "frequency"] > 0.2)
    ('chase:large_straight', True)
    """
    from .parallel import check_backend, run_chunks

    check_backend(backend, jobs, scheduler)
    rules = get_rules(rules, options)
    strat = get_strategy(strategy)
    if target is not None:
        from .exact.turns import ChasePattern

        strat = ChasePattern(target)
    strat = strat.prepare(rules)
    n_turns = _check_count(n_turns, "the number of turns")
    entropy = None if seed is None else _entropy(seed)
    per_batch = max(1, _check_count(batch, "batch") // SEED_BLOCK)
    out = run_chunks("turns", rules, strat, n_turns, entropy=entropy, chunk_blocks=per_batch,
                     backend=backend, jobs=jobs, scheduler=scheduler, checkpoint=checkpoint, progress=progress)
    return TurnsResult(rules=rules, strategy=strat.name, n_turns=n_turns, seed=out.entropy,
                       roll_counts=out.value, seconds=out.seconds)


class _KeepOnly(Strategy):
    """Wraps a strategy's keeps; always fills the first legal box (turn simulator)."""

    def __init__(self, inner: Strategy):
        self.inner = inner
        self.name = inner.name

    def keep(self, state, rolls, rolls_left, u):
        return self.inner.keep(state, rolls, rolls_left, u)

    def box(self, state, rolls, options, u):
        return np.argmax(options.legal, axis=1)
