"""Exact per-turn probabilities: Markov chains over the rolls of the dice tables.

A *keep policy* says, for each roll and each number of rerolls left, which dice
to hold (possibly a mixture, for randomized strategies). Starting from the
first-roll distribution and pushing it through the exact keep -> roll
transitions gives the exact distribution of the roll a turn ends with, hence of
every pattern. All arithmetic is on integers: a throw of ``m`` dice is counted
out of ``n_faces ** n_dice`` (7776) equally likely ordered outcomes, so the
probabilities are exact :class:`fractions.Fraction` values.

Policies come from

* a strategy (any registered name or instance), asked for its keeps on a fresh
  card for every roll at every stage (:func:`strategy_policy`), or
* "the keeps that maximize the chance of ending in pattern X", from the keep
  lattice widget with an indicator final value (:func:`pattern_policy`).

With unlimited rolls, chasing a pattern is an absorbing chain;
:func:`expected_rolls` solves it exactly (keep-largest, any strategy, or the
policy that minimizes the expected number of rolls).

>>> odds = turn_odds("yahtzee", "keep-largest")
>>> round(odds.probability("five_of_a_kind"), 5), round(odds.turns_per("five_of_a_kind"), 2)
(0.04603, 21.73)
>>> round(expected_rolls("yahtzee", "keep-largest").expected, 4)
11.0902
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Iterable

import numpy as np
import pandas as pd

from ..dice import DiceTables
from ..patterns import HAND_CLASSES, check_pattern, hand_class, pattern_names, pattern_table
from ..rules import RuleSet, get_rules
from ..state import GameState
from ..strategy import Strategy, get_strategy
from .odds import one_in, roll_counts_exact
from .widget import best_keeps, best_subkeep, keep_expectations

__all__ = [
    "transition_counts", "KeepPolicy", "strategy_policy", "pattern_policy", "TurnOdds",
    "turn_odds", "best_turn_odds", "RollsToPattern", "expected_rolls", "PerTurnReport",
    "per_turn_report", "pattern_keep_tables", "U_POINTS",
]

U_POINTS = 1440
"""Uniforms at which a randomized strategy's keeps are averaged: the midpoints of
1440 equal cells. 1440 is a multiple of every possible number of distinct keeps of a
5-dice roll (6, 10, 12, 16, 18, 24, 32), so the ``random`` strategy is averaged
exactly; for other randomized strategies it is a midpoint-rule approximation."""


# -- exact integer transitions -----------------------------------------------------

@functools.lru_cache(maxsize=None)
def _transition_counts(dice: DiceTables) -> np.ndarray:
    n, f = dice.n_dice, dice.n_faces
    fact = np.array([math.factorial(k) for k in range(n + 1)], dtype=np.int64)
    added = dice.roll_counts[None, :, :].astype(np.int64) - dice.keep_counts[:, None, :]
    ok = (added >= 0).all(axis=2)
    added = np.where(ok[..., None], added, 0)
    m = added.sum(axis=2)
    ways = fact[m] // np.prod(fact[added], axis=2)
    scale = np.int64(f) ** dice.keep_size.astype(np.int64)  # out of f**m -> out of f**n
    out = np.where(ok, ways * scale[:, None], 0).astype(np.int64)
    out.setflags(write=False)
    return out


def transition_counts(dice: DiceTables) -> np.ndarray:
    """(K, R) int64: ``transition * n_faces ** n_dice``, computed exactly.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> t = transition_counts(d)
    >>> bool((t.sum(axis=1) == 7776).all()), bool(np.allclose(t / 7776, d.transition))
    (True, True)
    """
    return _transition_counts(dice)


def _rules(rules, options) -> RuleSet:
    return get_rules("yahtzee" if rules is None else rules, options)


# -- keep policies -----------------------------------------------------------------

@dataclass(frozen=True)
class KeepPolicy:
    """Which keep each roll gets with ``j`` rerolls left.

    keeps : tuple indexed by rolls left (entry 0 unused, None); entry ``j`` is an
        (R, M) array of keep indices: the decision is uniform over the M columns
        (M = 1 for a deterministic policy).
    """

    name: str
    keeps: tuple
    deterministic: bool = True

    @property
    def n_rerolls(self) -> int:
        return len(self.keeps) - 1

    def stage(self, rolls_left: int) -> np.ndarray:
        """(R, M) keep indices with ``rolls_left`` rerolls left (clipped to the last
        stage the policy defines, so any policy works with unlimited rolls)."""
        j = min(max(rolls_left, 1), self.n_rerolls)
        return self.keeps[j]


def _check_keeps(dice: DiceTables, rolls: np.ndarray, keeps: np.ndarray, who: str) -> None:
    bad = (keeps < 0) | (keeps >= dice.n_keeps)
    if not bad.any():
        bad = (dice.keep_counts[keeps] > dice.roll_counts[rolls]).any(axis=-1)
    if bad.any():
        i = int(np.flatnonzero(bad.ravel())[0])
        raise ValueError(f"strategy {who!r} kept dice it does not have "
                         f"(dice {dice.roll_dice[rolls.ravel()[i]].tolist()}, keep index {int(keeps.ravel()[i])})")


def _ask_keeps(rules: RuleSet, strat: Strategy, rolls_left: int, u: np.ndarray) -> np.ndarray:
    d = rules.dice
    m = len(u)
    rolls = np.repeat(np.arange(d.n_rolls), m)
    state = GameState.new(rules, len(rolls))
    keeps = np.asarray(strat.keep(state, rolls, rolls_left, np.tile(u.astype(np.float32), d.n_rolls)))
    if keeps.shape != rolls.shape or keeps.dtype.kind not in "iu":
        raise ValueError(f"strategy {strat.name!r}: keep() must return {rolls.shape} keep indices")
    keeps = keeps.astype(np.intp)
    _check_keeps(d, rolls, keeps, strat.name)
    return keeps.reshape(d.n_rolls, m)


def strategy_policy(rules: str | RuleSet | None, strategy: str | Strategy = "keep-largest", *,
                    options: Iterable[str] = (), u_points: int = U_POINTS) -> KeepPolicy:
    """The keeps a strategy makes on a fresh card, for every roll and stage.

    The strategy is asked once for all rolls per stage. If its keeps change with
    the decision uniform ``u``, they are averaged over :data:`U_POINTS` values.

    >>> pol = strategy_policy("yahtzee", "keep-largest")
    >>> pol.deterministic, pol.stage(2).shape
    (True, (252, 1))
    >>> strategy_policy("yahtzee", "random").stage(1).shape
    (252, 1440)
    """
    rules = _rules(rules, options)
    strat = get_strategy(strategy).prepare(rules)
    probe = np.array([0.5, 0.0, 0.999, 0.25, 0.75, 0.1, 0.9])
    grid = (np.arange(u_points) + 0.5) / u_points
    keeps: list = [None]
    deterministic = True
    for rolls_left in range(1, rules.n_rolls):
        k = _ask_keeps(rules, strat, rolls_left, probe)
        if (k == k[:, :1]).all():
            keeps.append(k[:, :1].copy())
        else:
            deterministic = False
            keeps.append(_ask_keeps(rules, strat, rolls_left, grid))
    for k in keeps[1:]:
        k.setflags(write=False)
    return KeepPolicy(name=strat.name, keeps=tuple(keeps), deterministic=deterministic)


@functools.lru_cache(maxsize=None)
def pattern_keep_tables(dice: DiceTables, pattern: str, n_rerolls: int) -> tuple:
    """The keeps (one table per rerolls left, indexed by roll) that maximize the exact
    chance of ending the turn in ``pattern``.

    >>> from yahtzee_sim.dice import dice_tables
    >>> tables = pattern_keep_tables(dice_tables(5, 6), "five_of_a_kind", 2)
    >>> len(tables), tables[1].shape
    (3, (252,))
    """
    final = pattern_table(dice)[pattern].to_numpy(np.float64)[None, :]
    plan = best_keeps(dice, final, rolls_left=n_rerolls)
    tables = [None] + [plan.keeps[j][0].astype(np.intp) for j in range(1, n_rerolls + 1)]
    for t in tables[1:]:
        t.setflags(write=False)
    return tuple(tables)


def pattern_policy(rules: str | RuleSet | None, pattern: str, *, options: Iterable[str] = ()) -> KeepPolicy:
    """The keeps that maximize the chance of ending the turn in ``pattern``
    (lattice widget with a 0/1 final value; ties go to the widget's first best keep).

    >>> pol = pattern_policy("yahtzee", "large_straight")
    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables()
    >>> d.keep_counts[pol.stage(2)[d.roll_index_of([1, 2, 3, 4, 4]), 0]].tolist()
    [1, 1, 1, 1, 0, 0]
    """
    rules = _rules(rules, options)
    pattern = check_pattern(pattern, rules.dice)
    tables = pattern_keep_tables(rules.dice, pattern, rules.n_rolls - 1)
    return KeepPolicy(name=f"chase:{pattern}", keeps=(None,) + tuple(t[:, None] for t in tables[1:]))


def _policy(rules: RuleSet, policy) -> KeepPolicy:
    if isinstance(policy, KeepPolicy):
        return policy
    return strategy_policy(rules, policy)


# -- per-turn chains -----------------------------------------------------------------

def _stage_matrix(dice: DiceTables, keeps: np.ndarray) -> np.ndarray:
    """(R, R) int64: sum over the M columns of the transition counts of each roll's keep."""
    t = transition_counts(dice)
    out = np.zeros((dice.n_rolls, dice.n_rolls), dtype=np.int64)
    if keeps.shape[1] == 1:
        return t[keeps[:, 0]].copy()
    # Count how often each roll chooses each keep, then one integer matmul.
    weights = np.zeros((dice.n_rolls, dice.n_keeps), dtype=np.int64)
    np.add.at(weights, (np.repeat(np.arange(dice.n_rolls), keeps.shape[1]), keeps.ravel()), 1)
    out += weights @ t
    return out


@dataclass(frozen=True)
class TurnOdds:
    """Exact distribution of the roll a turn ends with under a keep policy.

    roll_weights : (R,) Python ints; roll r has probability ``roll_weights[r] / denominator``.
    """

    rules: RuleSet
    policy: str
    roll_weights: np.ndarray = field(repr=False)
    denominator: int

    def roll_probabilities(self) -> np.ndarray:
        """(R,) float probabilities of the final roll."""
        return np.array([Fraction(int(w), self.denominator) for w in self.roll_weights], dtype=float)

    def _weight(self, mask: np.ndarray) -> int:
        return int(sum(int(w) for w in self.roll_weights[np.asarray(mask, bool)]))

    def fraction(self, pattern: str) -> Fraction:
        """Exact chance of ending the turn in ``pattern``.

        >>> turn_odds("yahtzee").fraction("five_of_a_kind").denominator
        7558272
        """
        pattern = check_pattern(pattern, self.rules.dice)
        return Fraction(self._weight(pattern_table(self.rules.dice)[pattern].to_numpy()), self.denominator)

    def probability(self, pattern: str) -> float:
        """The same as a float."""
        return float(self.fraction(pattern))

    def turns_per(self, pattern: str) -> float:
        """Expected turns per occurrence, ``1 / p`` (inf if impossible)."""
        f = self.fraction(pattern)
        return math.inf if f == 0 else float(1 / f)

    def hand_class_probabilities(self) -> pd.Series:
        """Probability of each class of :data:`yahtzee_sim.patterns.HAND_CLASSES`
        (a partition of the rolls; handy for chi-square checks)."""
        cls = hand_class(self.rules.dice)
        vals = [float(Fraction(self._weight(cls == i), self.denominator)) for i in range(len(HAND_CLASSES))]
        return pd.Series(vals, index=list(HAND_CLASSES), name="probability")

    def to_frame(self) -> pd.DataFrame:
        """One row per pattern: exact fraction, probability, turns per occurrence, "1 in N".

        >>> f = turn_odds("yahtzee").to_frame()
        >>> list(f.columns)
        ['fraction', 'probability', 'turns_per', 'one_in']
        """
        rows = []
        for name in pattern_names(self.rules.dice):
            frac = self.fraction(name)
            rows.append({"pattern": name, "fraction": frac, "probability": float(frac),
                         "turns_per": math.inf if frac == 0 else float(1 / frac), "one_in": one_in(frac)})
        return pd.DataFrame(rows).set_index("pattern")


def turn_odds(rules: str | RuleSet | None = None, policy: str | Strategy | KeepPolicy = "keep-largest",
              *, options: Iterable[str] = ()) -> TurnOdds:
    """Exact final-roll distribution of one turn (all ``rules.n_rolls`` rolls) under
    ``policy``: a strategy name or instance (its keeps on a fresh card) or a
    :class:`KeepPolicy` (e.g. from :func:`pattern_policy`).

    >>> odds = turn_odds("yahtzee", pattern_policy("yahtzee", "large_straight"))
    >>> round(odds.probability("large_straight"), 4)
    0.2611
    """
    rules = _rules(rules, options)
    pol = _policy(rules, policy)
    d = rules.dice
    total = d.n_faces ** d.n_dice
    weights = roll_counts_exact(d).astype(np.int64)
    denominator = total
    for rolls_left in range(rules.n_rolls - 1, 0, -1):
        stage = pol.stage(rolls_left)
        mat = _stage_matrix(d, stage)
        step = total * stage.shape[1]
        if denominator * step < 2**62:
            weights = weights.astype(np.int64) @ mat
        else:  # exact Python integers when int64 could overflow
            weights = weights.astype(object) @ mat.astype(object)
        denominator *= step
    return TurnOdds(rules=rules, policy=pol.name, roll_weights=np.asarray(weights, dtype=object),
                    denominator=denominator)


def best_turn_odds(rules: str | RuleSet | None = None, *, options: Iterable[str] = ()) -> pd.DataFrame:
    """Each pattern's exact chance per turn under the keeps that maximize that chance.

    >>> f = best_turn_odds("yahtzee")
    >>> round(float(f.loc["five_of_a_kind", "probability"]), 6)
    0.046029
    """
    rules = _rules(rules, options)
    rows = []
    for name in pattern_names(rules.dice):
        frac = turn_odds(rules, pattern_policy(rules, name)).fraction(name)
        rows.append({"pattern": name, "fraction": frac, "probability": float(frac),
                     "turns_per": math.inf if frac == 0 else float(1 / frac), "one_in": one_in(frac)})
    return pd.DataFrame(rows).set_index("pattern")


# -- unlimited rolls: absorbing chains ---------------------------------------------------

def _solve_fraction(a: list[list[int]], b: list[int]) -> list[Fraction]:
    """Exact solution of a small integer linear system (Gauss-Jordan on Fractions)."""
    n = len(b)
    m = [[Fraction(x) for x in row] + [Fraction(y)] for row, y in zip(a, b)]
    for col in range(n):
        piv = next(r for r in range(col, n) if m[r][col] != 0)
        m[col], m[piv] = m[piv], m[col]
        p = m[col][col]
        m[col] = [x / p for x in m[col]]
        for r in range(n):
            if r != col and m[r][col] != 0:
                factor = m[r][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[col])]
    return [m[r][n] for r in range(n)]


@dataclass(frozen=True)
class RollsToPattern:
    """Expected number of rolls (the first throw included) until ``pattern`` shows,
    with unlimited rerolls, under a stationary keep policy.

    keeps : (R, M) the policy's keeps (ignored on rolls that already show the pattern).
    fraction : the exact value, when the system was small enough to solve exactly.
    """

    rules: RuleSet
    pattern: str
    policy: str
    expected: float
    fraction: Fraction | None
    keeps: np.ndarray = field(repr=False)

    def within(self, n_rolls: int) -> float:
        """Chance that the pattern has shown within ``n_rolls`` rolls.

        >>> r = expected_rolls("yahtzee", "keep-largest")
        >>> round(r.within(3), 6)
        0.046029
        """
        d = self.rules.dice
        hit = pattern_table(d)[self.pattern].to_numpy()
        step = _stage_matrix(d, self.keeps) / (d.n_faces ** d.n_dice * self.keeps.shape[1])
        step[hit] = 0.0
        step[hit, hit] = 1.0
        dist = d.first_roll_prob.copy()
        for _ in range(n_rolls - 1):
            dist = dist @ step
        return float(dist[hit].sum())

    def to_frame(self) -> pd.DataFrame:
        """One row: pattern, policy, expected rolls, exact fraction (or None)."""
        return pd.DataFrame([{"pattern": self.pattern, "policy": self.policy,
                              "expected_rolls": self.expected, "fraction": self.fraction}])


def _evaluate_rolls(dice: DiceTables, hit: np.ndarray, keeps: np.ndarray, exact: bool):
    """Expected rolls under a stationary policy: (expected, fraction, h (R,) floats)."""
    t = transition_counts(dice)
    total = dice.n_faces ** dice.n_dice
    m = keeps.shape[1]
    transient = np.flatnonzero(~hit)
    # Keeps the chain can be in: every transient roll has a positive first-roll chance.
    reach = np.zeros(dice.n_keeps, bool)
    frontier = np.zeros(dice.n_keeps, bool)
    frontier[keeps[transient].ravel()] = True  # every roll has positive first-roll chance
    while frontier.any():
        reach |= frontier
        nxt_rolls = (t[frontier][:, transient] > 0).any(axis=0)
        nxt = np.zeros(dice.n_keeps, bool)
        nxt[keeps[transient[nxt_rolls]].ravel()] = True
        frontier = nxt & ~reach
    used = np.flatnonzero(reach)
    # Can each reachable keep eventually reach the pattern?
    can = (t[used][:, hit] > 0).any(axis=1)
    index = np.full(dice.n_keeps, -1)
    index[used] = np.arange(len(used))
    while True:
        good_roll = np.zeros(dice.n_rolls, bool)
        good_roll[transient] = can[index[keeps[transient]]].any(axis=1)
        new = can | (t[used][:, good_roll] > 0).any(axis=1)
        if (new == can).all():
            break
        can = new
    if not can.all():
        return math.inf, None, np.full(dice.n_rolls, math.inf)
    # g(k) = 1 + sum_{r' transient} T[k, r'] / total * mean_m g(keep(r', m))
    w = np.zeros((dice.n_rolls, len(used)), dtype=np.int64)  # how often roll r' picks each keep
    np.add.at(w, (np.repeat(transient, m), index[keeps[transient]].ravel()), 1)
    a = total * m * np.eye(len(used), dtype=np.int64) - t[used] @ w
    b = np.full(len(used), total * m, dtype=np.int64)
    g = np.linalg.solve(a.astype(float), b.astype(float))
    h = np.zeros(dice.n_rolls)
    h[transient] = g[index[keeps[transient]]].mean(axis=1)
    counts = roll_counts_exact(dice)
    expected = 1.0 + float(counts @ h) / total
    frac = None
    if exact and len(used) <= 80:
        gf = _solve_fraction(a.tolist(), b.tolist())
        start = w.T @ counts  # weighted first-roll counts into each keep (out of total * m)
        frac = 1 + sum(Fraction(int(c)) * x for c, x in zip(start, gf)) / (total * m)
        expected = float(frac)
    return expected, frac, h


def expected_rolls(rules: str | RuleSet | None = None,
                   policy: str | Strategy | KeepPolicy = "keep-largest", *,
                   pattern: str = "five_of_a_kind", options: Iterable[str] = (),
                   exact: bool = True) -> RollsToPattern:
    """Expected number of rolls until ``pattern`` shows, rolling without limit.

    ``policy`` is a strategy (its keeps with the most rerolls left, on a fresh card,
    used at every roll), a :class:`KeepPolicy`, or ``"optimal"``: the policy that
    minimizes the expected number of rolls (policy iteration from keep-largest).
    Returns ``inf`` if the policy can get stuck without ever showing the pattern.

    >>> r = expected_rolls("yahtzee", "optimal")
    >>> r.fraction is not None, round(r.expected, 4)
    (True, 11.0902)
    """
    rules = _rules(rules, options)
    pattern = check_pattern(pattern, rules.dice)
    d = rules.dice
    hit = pattern_table(d)[pattern].to_numpy()
    if isinstance(policy, str) and policy == "optimal":
        keeps, name = _optimal_rolls_policy(rules, pattern), "optimal"
    else:
        pol = _policy(rules, policy)
        keeps, name = pol.stage(pol.n_rerolls), pol.name
    expected, frac, _ = _evaluate_rolls(d, hit, keeps, exact)
    return RollsToPattern(rules=rules, pattern=pattern, policy=name, expected=expected,
                          fraction=frac, keeps=keeps)


def _optimal_rolls_policy(rules: RuleSet, pattern: str) -> np.ndarray:
    """Policy iteration on expected rolls, starting from the keeps that maximize
    the chance of the pattern on the next roll (finite from every roll)."""
    d = rules.dice
    hit = pattern_table(d)[pattern].to_numpy()
    keeps = pattern_keep_tables(d, pattern, 1)[1][:, None].copy()
    for _ in range(100):
        _, _, h = _evaluate_rolls(d, hit, keeps, exact=False)
        if not np.isfinite(h).all():  # pragma: no cover - the start policy always absorbs
            raise RuntimeError("policy iteration started from a policy that never absorbs")
        cost = 1.0 + keep_expectations(d, h[:, None])  # (K, 1) expected further rolls
        best, arg = best_subkeep(d, -cost)
        current = cost[keeps[:, 0], 0]
        better = (-best[:, 0] < current - 1e-9) & ~hit
        if not better.any():
            return keeps
        keeps[better, 0] = arg[better, 0]
    raise RuntimeError("policy iteration did not converge")  # pragma: no cover


# -- the report behind `yahtzee-sim odds --per-turn` ----------------------------------

@dataclass(frozen=True)
class PerTurnReport:
    """Per-turn odds of every pattern under a strategy and under each pattern's own
    best keeps, plus the expected rolls to five of a kind with unlimited rolls."""

    rules: RuleSet
    strategy: str
    under_strategy: TurnOdds
    best: pd.DataFrame
    rolls: list

    def __repr__(self) -> str:
        return (f"PerTurnReport({self.rules.key!r}, {self.strategy!r}: {len(self.best)} patterns; "
                f"five_of_a_kind {self.under_strategy.fraction('five_of_a_kind')} per turn)")

    def to_frame(self) -> pd.DataFrame:
        """One row per pattern: probability and fraction under the strategy and under
        the best keeps, and turns per occurrence for both.

        >>> bool(per_turn_report("yahtzee").to_frame().loc["five_of_a_kind", "strategy_turns_per"] > 21)
        True
        """
        s = self.under_strategy.to_frame()
        return pd.DataFrame({
            "strategy_fraction": s["fraction"], "strategy_probability": s["probability"],
            "strategy_turns_per": s["turns_per"],
            "best_fraction": self.best["fraction"], "best_probability": self.best["probability"],
            "best_turns_per": self.best["turns_per"],
        })

    def rolls_frame(self) -> pd.DataFrame:
        """Expected rolls to five of a kind (unlimited rolls) under each policy."""
        return pd.concat([r.to_frame() for r in self.rolls], ignore_index=True).set_index("policy")


def per_turn_report(rules: str | RuleSet | None = None, strategy: str | Strategy = "keep-largest",
                    *, options: Iterable[str] = ()) -> PerTurnReport:
    """Everything ``yahtzee-sim odds --per-turn`` prints.

    >>> rep = per_turn_report("yahtzee", "keep-largest")
    >>> rep.rolls_frame().index.tolist()
    ['keep-largest', 'optimal']
    """
    rules = _rules(rules, options)
    if rules.n_rolls < 2:   # no keep is ever chosen: nothing per turn beyond the one roll's odds
        raise ValueError(f"per-turn odds need at least 2 rolls a turn; {rules.key} has {rules.n_rolls}, so a "
                         "turn is one roll: its odds are the one-roll odds (odds without --per-turn)")
    strat = get_strategy(strategy)
    pol = strategy_policy(rules, strat)
    under = turn_odds(rules, pol)
    best = best_turn_odds(rules)
    # rolls until five of a kind; with fewer than five dice, until all the dice are alike
    goal = "five_of_a_kind" if rules.n_dice >= 5 else f"largest_group_{rules.n_dice}"
    rolls = [expected_rolls(rules, pol, pattern=goal)]
    if pol.name != "keep-largest":
        rolls.append(expected_rolls(rules, "keep-largest", pattern=goal))
    rolls.append(expected_rolls(rules, "optimal", pattern=goal))
    return PerTurnReport(rules=rules, strategy=pol.name, under_strategy=under, best=best, rolls=rolls)
