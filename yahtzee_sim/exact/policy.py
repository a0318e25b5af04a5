"""Exact expected score of a strategy: policy evaluation by backward induction.

For a strategy whose decisions depend only on the state (the filled boxes, the
upper total up to the bonus threshold, whether the five-of-a-kind box holds its
full value, the roll and the rolls left), the expected final score is a finite
sum over the dice tables, computed here exactly instead of estimated by
simulation (OpenSpiel's "chance is a node whose outcomes you can ask for").

Every reachable state (filled boxes, upper total capped at the threshold, flag)
is evaluated level by level from the full card backwards. For a chunk of states
the strategy is asked, in single vectorized calls over every (state, roll) row,
which box it fills with each of the 252 final rolls and which dice it keeps with
each roll and rolls left, exactly as the simulator asks it (same
:class:`~yahtzee_sim.state.TurnOptions`, jokers and bonuses from
:meth:`RuleSet.turn_options`). Then::

    final(r) = gain(r, box) + V(next state)            (and its square's mean)
    X_j(r)   = E[X_{j-1} | keep_j(r)]                  (keep lattice expectations)
    V(state) = sum_r P(first roll r) X_{n_rolls - 1}(r)

The second moment of the score is carried the same way (the squares of the
points gained now combined with the next state's second moment), so the
standard deviation is exact too.

The ``random`` strategy is averaged exactly (uniform over the distinct keeps of
each roll, uniform over the legal boxes); any other strategy whose decisions
change with its uniform ``u`` is refused.

>>> pv = policy_value("yacht", "keep-largest", options=["fill-in-order"])
>>> from yahtzee_sim import simulate
>>> res = simulate("yacht", "keep-largest", 20_000, options=["fill-in-order"], seed=5)
>>> s = res.summary()
>>> bool(abs(s["mean"] - pv.expected_score) < 4 * s["se"])
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..engine import MoveChecks, StrategyError
from ..rules import RuleSet, get_rules
from ..state import GameState, TurnOptions
from ..strategies import Strategy, get_strategy
from ..strategies.simple import RandomStrategy
from ._solver_space import StateSpace, state_space
from .widget import keep_expectations

__all__ = ["policy_value", "PolicyValue", "achievable_upper_totals", "reachable_states"]

DEFAULT_CHUNK_ROWS = 1 << 19
"""(state, roll) rows handed to the strategy at once (bounds memory: ~0.3 kB per row)."""

PROBE_STATES = 16
"""States per level on which every decision is asked again with other uniforms."""

_U_PROBES = (np.float32(0.0), np.float32(0.5), np.nextafter(np.float32(1), np.float32(0)))


def achievable_upper_totals(rules: RuleSet, filled) -> np.ndarray:
    """Every upper-section total that the filled upper boxes can hold (sorted, uncapped).

    A filled upper box of face f holds 0, f, ..., n_dice * f (jokers included:
    an upper box always scores its face times the dice showing it).

    >>> from yahtzee_sim.rules import get_rules
    >>> r = get_rules("yahtzee")
    >>> filled = np.zeros(13, bool); filled[[0, 1]] = True          # Ones, Twos
    >>> achievable_upper_totals(r, filled).tolist()[:8], int(achievable_upper_totals(r, filled).max())
    ([0, 1, 2, 3, 4, 5, 6, 7], 15)
    >>> achievable_upper_totals(r, np.zeros(13, bool)).tolist()
    [0]
    """
    filled = np.asarray(filled, dtype=bool).reshape(-1)
    faces = rules.upper_face[filled & rules.is_upper].astype(np.int64)
    totals = np.zeros(1, dtype=np.int64)
    for f in faces:                                  # loop over boxes
        totals = np.unique((totals[:, None] + f * np.arange(rules.n_dice + 1)).ravel())
    return totals


def _reach_table(rules: RuleSet, sp: StateSpace):
    """Per filled-upper subset: the reachable capped totals (padded table and counts)."""
    upper = np.flatnonzero(rules.is_upper)
    reach = []
    for sub in range(1 << len(upper)):               # loop over subsets of the upper boxes
        filled = np.zeros(rules.n_boxes, bool)
        filled[upper[[j for j in range(len(upper)) if sub >> j & 1]]] = True
        reach.append(np.unique(np.minimum(achievable_upper_totals(rules, filled), sp.cap)))
    counts = np.array([len(r) for r in reach], dtype=np.int64)
    table = np.zeros((len(reach), counts.max()), dtype=np.int64)
    for i, r in enumerate(reach):
        table[i, :len(r)] = r
    return table, counts


def reachable_states(rules: RuleSet | str, level: int, *, options=()) -> tuple:
    """``(mask, u, flag)`` int64 arrays of every reachable state with ``level`` boxes filled.

    ``mask`` is the filled boxes as bits (box b is bit b), ``u`` the upper total
    capped at the bonus threshold (0 when the rule set has no upper bonus),
    ``flag`` 1 when the five-of-a-kind box holds its full value (only for rule
    sets whose bonus depends on it). Every legal game can reach each of them.

    >>> mask, u, flag = reachable_states("yacht", 1, options=["fill-in-order"])
    >>> mask.tolist(), u.tolist()
    ([1, 1, 1, 1, 1, 1], [0, 1, 2, 3, 4, 5])
    """
    rules = get_rules(rules, options)
    sp = state_space(rules)
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)) or not 0 <= level <= sp.n_boxes:
        raise ValueError(f"level must be an integer in 0..{sp.n_boxes}, got {level!r}")
    table, counts = _reach_table(rules, sp)
    return _level_states(sp, table, counts, level)


def _level_states(sp: StateSpace, table, counts, level):
    masks = np.asarray(sp.level_masks[level], dtype=np.int64)
    sub = sp.upper_sub[masks]
    n_u = counts[sub]
    rep = np.repeat(np.arange(len(masks)), n_u)
    start = np.concatenate([[0], np.cumsum(n_u)[:-1]])
    within = np.arange(len(rep)) - start[rep]
    mask, u = masks[rep], table[sub[rep], within]
    flag = np.zeros(len(mask), dtype=np.int64)
    if sp.n_flag == 2:                               # the five box filled: 0 or full
        has = (mask & sp.five_bit) != 0
        mask = np.concatenate([mask, mask[has]])
        u = np.concatenate([u, u[has]])
        flag = np.concatenate([flag, np.ones(int(has.sum()), dtype=np.int64)])
    return mask, u, flag


@dataclass(frozen=True, eq=False)
class PolicyValue:
    """Exact value of a strategy on a rule set.

    Attributes
    ----------
    rules : the rule set; strategy : the strategy's name.
    expected_score, sd : of the final score from a fresh card.
    states : states evaluated; seconds : time taken.
    method : ``"deterministic"`` (the strategy's own decisions) or
        ``"uniform average"`` (``random``, averaged exactly over its choices).
    levels : per level (boxes filled): states, seconds, min and max value.
    values, second_moments : flat tables (``StateSpace`` layout) of the expected
        future score of every reachable state and of its square; NaN elsewhere.
    """

    rules: RuleSet
    strategy: str
    expected_score: float
    sd: float
    states: int
    seconds: float
    method: str
    levels: dict = field(repr=False)
    values: np.ndarray = field(repr=False)
    second_moments: np.ndarray = field(repr=False)

    def value(self, filled, upper_total, five_box_full) -> np.ndarray:
        """(N,) expected future score under this strategy of N states (NaN if unreachable).

        >>> pv = policy_value("yacht", "greedy", options=["fill-in-order"])
        >>> fresh = np.zeros((1, pv.rules.n_boxes), bool)
        >>> bool(np.isclose(pv.value(fresh, [0], [False])[0], pv.expected_score))
        True
        """
        sp = state_space(self.rules)
        return self.values[sp.flat(*sp.index(filled, upper_total, five_box_full))]

    def summary(self) -> dict:
        """The headline numbers as a plain dict.

        >>> s = policy_value("yacht", "keep-largest", options=["fill-in-order"]).summary()
        >>> s["strategy"], s["rules"]
        ('keep-largest', 'yacht+fill-in-order')
        """
        return {"rules": self.rules.key, "strategy": self.strategy,
                "expected_score": self.expected_score, "sd": self.sd, "states": self.states,
                "seconds": self.seconds, "method": self.method}

    def to_frame(self) -> "pd.DataFrame":
        """Per level (boxes filled): states evaluated, seconds, and the smallest and
        largest expected future score among them.

        >>> f = policy_value("yacht", "keep-largest", options=["fill-in-order"]).to_frame()
        >>> f.index.name, int(f.loc[0, "states"])
        ('filled', 1)
        """
        import pandas as pd

        lv = self.levels
        frame = pd.DataFrame({k: np.asarray(lv[k]) for k in
                              ("filled", "states", "seconds", "value_min", "value_max")})
        return frame.set_index("filled").sort_index()


def evaluation_setup(rules: RuleSet, strat: Strategy, what: str):
    """What an exact evaluation of ``strat`` over the reachable states needs, shared by
    :func:`policy_value` and :func:`yahtzee_sim.exact.distribution.distribution`:
    the state space (refusing what cannot be solved here or is not state-based), whether
    the strategy is uniform random and its keep weights, the legal sub-keeps, and the
    reachable-state table with its counts. ``strat`` is prepared for ``rules``."""
    sp = state_space(rules)                          # refuses what cannot be solved here
    require_state_based_scoring(rules, what)
    if not getattr(strat, "state_based", True):      # e.g. target play: it looks at the points so far
        raise ValueError(f"{what} needs a strategy whose decisions depend on the score card's state "
                         f"alone; {strat.name} also looks at the points so far (its exact chance "
                         f"of its target: yahtzee_sim.exact.target.target_solve(...).p_reach); "
                         f"simulate it instead")
    strat.prepare(rules)
    uniform = _is_uniform_random(strat)
    avg_keep = uniform_keep_average(rules.dice) if uniform else None
    is_subkeep = MoveChecks.of(rules).is_subkeep
    table, counts = _reach_table(rules, sp)
    return sp, uniform, avg_keep, is_subkeep, table, counts


def require_state_based_scoring(rules: RuleSet, what: str) -> None:
    """Refuse rule sets whose points depend on the turn so far (served scores): a held
    served roll and a thrown one look alike to a strategy, so its decisions are not a
    function of the state, and an exact evaluation over states would be silently wrong.

    >>> from yahtzee_sim.rules import get_rules
    >>> require_state_based_scoring(get_rules("yahtzee"), "policy_value")
    >>> require_state_based_scoring(get_rules("generala"), "policy_value")
    Traceback (most recent call last):
    ...
    ValueError: policy_value does not handle generala: served scores make a decision depend on the turn so far, not on the state alone; simulate the strategy instead (yahtzee-sim simulate)
    """
    if rules.roll_dependent:
        raise ValueError(f"{what} does not handle {rules.key}: served scores make a "
                         f"decision depend on the turn so far, not on the state alone; "
                         f"simulate the strategy instead (yahtzee-sim simulate)")


def uniform_keep_average(d) -> np.ndarray:
    """(R, K) weights of each roll's legal keeps for a uniformly random keep (each 1/n).

    >>> from yahtzee_sim.dice import dice_tables
    >>> w = uniform_keep_average(dice_tables(5, 6))
    >>> bool(np.allclose(w.sum(axis=1), 1.0))
    True
    """
    avg_keep = np.zeros((d.n_rolls, d.n_keeps))
    r_idx, s_idx = np.nonzero(d.subkeeps >= 0)
    avg_keep[r_idx, d.subkeeps[r_idx, s_idx]] = 1.0 / d.n_subkeeps[r_idx]
    return avg_keep


def _is_uniform_random(strategy: Strategy) -> bool:
    cls = type(strategy)
    return isinstance(strategy, RandomStrategy) and cls.keep is RandomStrategy.keep \
        and cls.box is RandomStrategy.box


def _bits_of(mask: np.ndarray, n_boxes: int) -> np.ndarray:
    return ((mask[:, None] >> np.arange(n_boxes, dtype=np.int64)) & 1).astype(bool)


class _Turn:
    """One chunk of states of a level, every roll: the batch the strategy sees.

    The options are what :meth:`RuleSet.turn_options` and
    :meth:`RuleSet.upper_bonus_gain` give for each (state, roll) row, computed
    once per distinct (filled boxes, five-box flag) and once per distinct upper
    total (an upper box always scores its face count, jokers never change it, so
    the upper bonus earned depends only on the total and the roll; checked).
    """

    def __init__(self, rules: RuleSet, sp: StateSpace, mask, u, flag):
        d = rules.dice
        r = d.n_rolls
        self.n, self.r = len(mask), r
        self.rep = np.repeat(np.arange(self.n), r)
        roll = np.arange(r, dtype=np.intp)
        self.rolls = np.tile(roll, self.n)
        self.chunk = (mask, u, flag)
        self.mask, self.u, self.flag = mask[self.rep], u[self.rep], flag[self.rep]
        filled = _bits_of(mask, sp.n_boxes)
        self.state = GameState.from_arrays(rules, np.repeat(filled, r, axis=0), self.u,
                                           self.flag.astype(bool))
        _, first, g_inv = np.unique(mask * 2 + flag, return_index=True, return_inverse=True)
        g_rolls = np.tile(roll, len(first))
        legal, scores, bonus = rules.turn_options(np.repeat(filled[first], r, axis=0),
                                                  np.repeat(flag[first].astype(bool), r), g_rolls)
        upper = rules.is_upper
        if not np.array_equal(scores[:, upper], rules.score_table[g_rolls][:, upper]):
            raise RuntimeError("policy_value: an upper box scored other than its face count")
        u_vals, u_inv = np.unique(u, return_inverse=True)
        plain = np.tile(rules.score_table, (len(u_vals), 1))
        up_gain = rules.upper_bonus_gain(np.repeat(u_vals, r), plain)           # (U*R, B)
        row = (g_inv[:, None] * r + roll).ravel()
        scores = scores[row]
        gain = scores + up_gain[(u_inv[:, None] * r + roll).ravel()] + bonus[row][:, None]
        self.options = TurnOptions(legal[row], scores, gain)


def _ask_box(strategy, turn: _Turn, u: np.ndarray, rules: RuleSet) -> np.ndarray:
    boxes = np.asarray(strategy.box(turn.state, turn.rolls, turn.options, u))
    if boxes.shape != turn.rolls.shape or boxes.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: box() must return {turn.rolls.shape} box indices")
    ok = (boxes >= 0) & (boxes < rules.n_boxes)
    ok[ok] = turn.options.legal[np.flatnonzero(ok), boxes[ok]]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        raise StrategyError(f"strategy {strategy.name!r} chose an illegal box (box index "
                            f"{int(boxes[g])}, dice {rules.dice.roll_dice[turn.rolls[g]].tolist()})")
    return boxes.astype(np.intp)


def _ask_keep(strategy, turn: _Turn, rolls_left: int, u: np.ndarray, is_subkeep) -> np.ndarray:
    keeps = np.asarray(strategy.keep(turn.state, turn.rolls, rolls_left, u))
    if keeps.shape != turn.rolls.shape or keeps.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: keep() must return {turn.rolls.shape} keep indices")
    ok = (keeps >= 0) & (keeps < is_subkeep.shape[1])
    ok[ok] = is_subkeep[turn.rolls[ok], keeps[ok]]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        raise StrategyError(f"strategy {strategy.name!r} kept dice it does not have (keep index "
                            f"{int(keeps[g])}, dice {strategy.dice.roll_dice[turn.rolls[g]].tolist()})")
    return keeps.astype(np.intp)


def _probe(strategy, rules, turn: _Turn, is_subkeep) -> None:
    """Refuse strategies whose decisions change with their uniform ``u``."""
    n = len(turn.rolls)
    answers = [_ask_box(strategy, turn, np.full(n, x, np.float32), rules) for x in _U_PROBES]
    what = "box"
    same = all(np.array_equal(answers[0], a) for a in answers[1:])
    for j in range(rules.n_rolls - 1, 0, -1):
        if not same:
            break
        answers = [_ask_keep(strategy, turn, j, np.full(n, x, np.float32), is_subkeep) for x in _U_PROBES]
        same = all(np.array_equal(answers[0], a) for a in answers[1:])
        what = f"keep with {j} roll{'s' if j > 1 else ''} left"
    if not same:
        raise ValueError(f"strategy {strategy.name!r} is randomized (its {what} depends on its "
                         f"uniform u): policy_value needs decisions that depend on the state "
                         f"alone (random itself is averaged exactly)")


def _chunk_values(strategy, rules, sp, turn: _Turn, values, second, is_subkeep, uniform,
                  avg_keep):
    """Expected future score and its second moment (C,) of a chunk of states."""
    d = rules.dice
    mask, u, flag = turn.chunk
    n_states, n_rolls = turn.n, turn.r
    opts = turn.options
    u0 = np.zeros(len(turn.rolls), dtype=np.float32)
    if uniform:                                      # the mean over every legal box
        at = np.flatnonzero(opts.legal)
        rows, boxes = np.divmod(at, rules.n_boxes)
        g = opts.gain.reshape(-1)[at].astype(np.float64)
        st = turn.rep[rows]                         # the chunk's state of each entry
        nxt = sp.next_flat(mask[st], u[st], flag[st], opts.scores.reshape(-1)[at], boxes=boxes)
        vn, mn = values[nxt], second[nxt]
        k = np.bincount(rows, minlength=len(turn.rolls))
        w = np.bincount(rows, weights=g + vn, minlength=len(k)) / k
        w2 = np.bincount(rows, weights=g * g + 2 * g * vn + mn, minlength=len(k)) / k
        keeps = None
    else:
        boxes = _ask_box(strategy, turn, u0, rules)
        rows = np.arange(len(boxes))
        pts = opts.scores[rows, boxes]
        g = opts.gain[rows, boxes].astype(np.float64)
        nxt = sp.next_flat(turn.mask, turn.u, turn.flag, pts, boxes=boxes)
        vn, mn = values[nxt], second[nxt]
        w = g + vn
        w2 = g * g + 2 * g * vn + mn
        keeps = {j: _ask_keep(strategy, turn, j, u0, is_subkeep).reshape(n_states, n_rolls)
                 for j in range(rules.n_rolls - 1, 0, -1)}     # asked in the engine's order
    if np.isnan(w).any() or np.isnan(w2).any():      # pragma: no cover - internal error
        raise RuntimeError("policy_value: a next state was not evaluated")
    x = np.stack([w.reshape(n_states, n_rolls), w2.reshape(n_states, n_rolls)], axis=2)
    cols = np.arange(2 * n_states).reshape(n_states, 2)
    for j in range(1, rules.n_rolls):
        # rolls first, one column per (state, moment): (K, 2C) expectations of every keep
        e = keep_expectations(d, np.ascontiguousarray(x.transpose(1, 0, 2)).reshape(n_rolls, -1))
        if uniform:
            x = (avg_keep @ e).reshape(n_rolls, n_states, 2).transpose(1, 0, 2)
        else:
            k = keeps[j]
            x = np.stack([e[k, cols[:, 0][:, None]], e[k, cols[:, 1][:, None]]], axis=2)
    p = d.first_roll_prob
    return np.einsum("crm,r->cm", x, p).T


def policy_value(rules: str | RuleSet, strategy: str | Strategy, *, options=(),
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None) -> PolicyValue:
    """Exact expected final score (and sd) of ``strategy`` on ``rules``.

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    strategy : a strategy name or instance. Its decisions must depend only on the
        state it is shown (filled boxes, upper total up to the bonus threshold, the
        five-of-a-kind box's value, the roll, the rolls left), not on its uniform
        ``u``; ``random`` is averaged exactly over its uniform choices.
    chunk_rows : (state, roll) rows per strategy call (memory bound).
    progress : a callback ``progress(phase, done, total)`` told after each level of filled
        boxes (see :mod:`yahtzee_sim.progress`); silent by default.

    >>> pv = policy_value("yacht", "greedy", options=["fill-in-order"])
    >>> 100 < pv.expected_score < 200 and pv.sd > 0
    True
    >>> policy_value("yacht", "no-such")
    Traceback (most recent call last):
    ...
    ValueError: unknown strategy 'no-such'; valid strategies: random, keep-largest, greedy, heuristic, optimal, cpu:weak|normal|strong, optimal:theta=<x>, target:T=<score>
    """
    rules = get_rules(rules, options)
    strat = get_strategy(strategy)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer, got {chunk_rows!r}")
    t0 = time.perf_counter()
    sp, uniform, avg_keep, is_subkeep, table, counts = evaluation_setup(rules, strat, "policy_value")
    d = rules.dice
    values = np.full(sp.size, np.nan)
    second = np.full(sp.size, np.nan)
    per_chunk = max(1, int(chunk_rows) // d.n_rolls)
    lv = {"filled": [], "states": [], "seconds": [], "value_min": [], "value_max": []}
    n_states = 0
    # the previous batch shown to the strategy stays alive, so a strategy that keeps
    # a per-turn cache keyed by id(state) never meets a recycled id
    shown = [None, None]
    from ..progress import as_progress

    report = as_progress(progress)
    for level in range(sp.n_boxes, -1, -1):           # loop over levels
        t_level = time.perf_counter()
        mask, u, flag = _level_states(sp, table, counts, level)
        idx = sp.flat(mask, u, flag)
        if level == sp.n_boxes:
            values[idx] = 0.0
            second[idx] = 0.0
        else:
            if not uniform:
                shown = [shown[1], _Turn(rules, sp, mask[:PROBE_STATES], u[:PROBE_STATES],
                                         flag[:PROBE_STATES])]
                _probe(strat, rules, shown[1], is_subkeep)
            for lo in range(0, len(mask), per_chunk):      # chunks of states
                hi = min(lo + per_chunk, len(mask))
                shown = [shown[1], _Turn(rules, sp, mask[lo:hi], u[lo:hi], flag[lo:hi])]
                v, m2 = _chunk_values(strat, rules, sp, shown[1], values, second, is_subkeep,
                                      uniform, avg_keep)
                values[idx[lo:hi]] = v
                second[idx[lo:hi]] = m2
        n_states += len(mask)
        lv["filled"].append(level)
        lv["states"].append(len(mask))
        lv["seconds"].append(time.perf_counter() - t_level)
        lv["value_min"].append(float(values[idx].min()))
        lv["value_max"].append(float(values[idx].max()))
        report(f"evaluating {strat.name} on {rules.key} (levels of filled boxes)", sp.n_boxes + 1 - level,
               sp.n_boxes + 1)
    seconds = time.perf_counter() - t0
    mean = float(values[sp.flat(0, 0, 0)])
    var = max(float(second[sp.flat(0, 0, 0)]) - mean * mean, 0.0)
    values.setflags(write=False)
    second.setflags(write=False)
    return PolicyValue(rules, strat.name, mean, math.sqrt(var), n_states, seconds,
                       "uniform average" if uniform else "deterministic",
                       {k: np.asarray(x) for k, x in lv.items()}, values, second)
