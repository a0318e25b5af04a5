"""Exact expected score of a strategy: policy evaluation by backward induction.

Over 600 lines: the evaluation loop, the chunk of states a strategy is shown, the keep
plans' forward pushes and the built-in strategies' fast paths share private arrays; the
fast paths are reached through each strategy's own ``chunk_decisions`` hook.

For a strategy whose decisions depend only on the state (the filled boxes, the
upper total up to the bonus threshold, whether the five-of-a-kind box holds its
full value, the roll and the rolls left), the expected final score is a finite
sum over the dice tables, computed here exactly instead of estimated by
simulation (OpenSpiel's "chance is a node whose outcomes you can ask for").

Every reachable state (filled boxes, upper total capped at the threshold, flag)
is evaluated level by level from the full card backwards. For a chunk of states
the strategy gives the box it fills with each final roll and the dice it keeps
with each roll and rolls left, as the simulator would ask it (same
:class:`~yahtzee_sim.state.TurnOptions`, jokers and bonuses from
:meth:`RuleSet.turn_options`): row by row in vectorized calls over every
(state, roll) row, or, for the built-in strategies whose decisions are table
look-ups, read from those tables per state: keep-largest's keep table and its box
rule, greedy's and heuristic's per-position plans, optimal play's decision table
(:mod:`yahtzee_sim.exact.decisions`, loaded from the disk cache or built and cached
once, as the simulator plays it). The same answers, checked on every level against
the row-by-row ones. Then::

    final(r) = gain(r, box) + V(next state)            (and its square's mean)
    rho(r)   = P(the turn ends with roll r | the keeps) (first roll pushed forwards)
    V(state) = sum_r rho(r) final(r)

The next state depends only on the *move* (the box, and for an upper box its
points), so ``V(next state)`` and the upper bonus are looked up in a few dozen
values per state. ``rho`` is computed once per distinct keep plan (once for all
states when the keeps do not depend on the state, as for keep-largest and random).
The loops over plans and (state, roll) rows are compiled
(:mod:`yahtzee_sim.exact._eval_kernels`); ``random`` needs none: per (filled
boxes, flag) group the weights of its moves are summed once.
The second moment of the score is carried the same way (the squares of the
points gained now combined with the next state's second moment), so the
standard deviation is exact too.

The ``random`` strategy is averaged exactly (uniform over the distinct keeps of
each roll, uniform over the legal boxes); any other strategy whose decisions
change with its uniform ``u`` is refused.

Where dice served on the first throw score more (Generala), a turn ends in one of
two ways: with dice thrown again, or with the first throw's dice still served
(holding every die is not a throw). A strategy's keep() sees the roll and the rolls
left, not whether the dice are served, so a served roll is kept as a thrown one: a
keep of every die leaves it served, any other keep throws. Its box() is asked twice,
with the ordinary and with the served scores, and each ending is weighted by its own
final-roll probability (:func:`served_final_roll_masses`). Optimal play is read from
its decision table with its served boxes, and holds served dice to the end of the
turn once it held them, as it plays (:class:`_Decider`).

>>> pv = policy_value("yacht", "keep-largest", options=["fill-in-order"])
>>> from yahtzee_sim import simulate
>>> res = simulate("yacht", "keep-largest", 20_000, options=["fill-in-order"], seed=5)
>>> s = res.summary()
>>> bool(abs(s["mean"] - pv.mean) < 4 * s["se"])
True
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from ..engine import MoveChecks, StrategyError, ask, read_only, state_view
from ..rules import RuleSet, get_rules
from ..state import GameState, TurnOptions
from ..strategy import Strategy, chunk_decisions_of, get_strategy
from .space import StateSpace, state_space
from ..validate import renamed_attribute, whole_number

__all__ = ["policy_value", "PolicyValue", "achievable_upper_totals", "reachable_states", "MAX_EVAL_STATES"]

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
    level = whole_number(level, "level", low=0, high=sp.n_boxes)
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
    mean, sd : of the final score from a fresh card (``expected_score``: the old name
        of ``mean``, deprecated).
    states : states evaluated; seconds : time taken.
    method : ``"deterministic"`` (the strategy's own decisions) or
        ``"uniform average"`` (``random``, averaged exactly over its choices).
    levels : per level (boxes filled): states, seconds, min and max value.
    values, second_moments : flat tables (``StateSpace`` layout) of the expected
        future score of every reachable state and of its square; NaN elsewhere.
    """

    rules: RuleSet
    strategy: str
    mean: float
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
        >>> bool(np.isclose(pv.value(fresh, [0], [False])[0], pv.mean))
        True
        """
        sp = state_space(self.rules)
        return self.values[sp.flat(*sp.index(filled, upper_total, five_box_full))]

    expected_score = renamed_attribute("expected_score", "mean")

    def summary(self) -> dict:
        """The headline numbers as a plain dict.

        >>> s = policy_value("yacht", "keep-largest", options=["fill-in-order"]).summary()
        >>> s["strategy"], s["rules"]
        ('keep-largest', 'yacht+fill-in-order')
        """
        return {"rules": self.rules.key, "strategy": self.strategy, "mean": self.mean,
                "expected_score": self.mean,     # the old name of "mean", kept for scripts
                "sd": self.sd, "states": self.states,
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


MAX_EVAL_STATES = 2_000_000
"""Most reachable states an exact evaluation of a fixed strategy (policy value, score
distribution) takes on: the largest games it handles in about a minute (``kismet``,
972,796 states; ``yahtzee+faces-7``) fit, Maxi Yatzy's 29 million do not."""


def evaluation_setup(rules: RuleSet, strat: Strategy, what: str):
    """What an exact evaluation of ``strat`` over the reachable states needs, shared by
    :func:`policy_value` and :func:`yahtzee_sim.exact.distribution.distribution`:
    the state space (refusing what cannot be solved here or is not state-based), whether
    the strategy is uniform random and its keep weights, the legal sub-keeps, and the
    reachable-state table with its counts. ``strat`` is prepared for ``rules``."""
    sp = state_space(rules)                          # refuses what cannot be solved here
    if sp.n_states > MAX_EVAL_STATES:                # before prepare: optimal would solve it first
        raise ValueError(f"{what} cannot evaluate a strategy on {rules.key} here: its "
                         f"{sp.n_states:,} reachable states are more than the {MAX_EVAL_STATES:,} an "
                         f"exact evaluation takes on (far too long and too large here); simulate the "
                         f"strategy instead (yahtzee-sim simulate --rules {rules.key})")
    if not getattr(strat, "state_based", True):      # e.g. target play: it looks at the points so far
        raise ValueError(f"{what} needs a strategy whose decisions depend on the score card's state "
                         f"alone; {strat.name} also looks at the points so far (its exact chance "
                         f"of its target: yahtzee_sim.exact.target.target_solve(...).p_reach); "
                         f"simulate it instead")
    strat.prepare(rules)
    declared = chunk_decisions_of(strat, rules)
    uniform = declared is not None and declared.uniform
    avg_keep = uniform_keep_average(rules.dice) if uniform else None
    is_subkeep = MoveChecks.of(rules).is_subkeep
    table, counts = _reach_table(rules, sp)
    return sp, uniform, avg_keep, is_subkeep, table, counts


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


def _bits_of(mask: np.ndarray, n_boxes: int) -> np.ndarray:
    return ((mask[:, None] >> np.arange(n_boxes, dtype=np.int64)) & 1).astype(bool)


@functools.lru_cache(maxsize=32)
def _upper_gain_table(rules: RuleSet) -> np.ndarray:
    """(n_u * R, B) int16 upper bonus earned by writing roll r in each box at capped
    upper total u (row ``u * R + r``): an upper box always scores its face count,
    so the bonus depends on the total and the roll only."""
    sp = state_space(rules)
    r = rules.dice.n_rolls
    plain = np.tile(rules.score_table, (sp.n_u, 1))
    out = rules.upper_bonus_gain(np.repeat(np.arange(sp.n_u), r), plain)
    out.setflags(write=False)
    return out


class EvalChunk:
    """One chunk of states of a level, every roll: the batch the strategy sees.

    The options are what :meth:`RuleSet.turn_options` and
    :meth:`RuleSet.upper_bonus_gain` give for each (state, roll) row, computed
    once per distinct (filled boxes, five-box flag) and once per upper total (an
    upper box always scores its face count, jokers never change it, so the upper
    bonus earned depends only on the total and the roll; checked). The (state,
    roll) rows themselves (``state``, ``rolls``, ``options``) are built only when
    a strategy has to be asked row by row.
    """

    def __init__(self, rules: RuleSet, sp: StateSpace, mask, u, flag):
        r = rules.dice.n_rolls
        self.rules, self.sp = rules, sp
        self.n, self.r = len(mask), r
        self.chunk = (mask, u, flag)
        self.filled = _bits_of(mask, sp.n_boxes)                     # (C, B)
        _, first, g_inv = np.unique(mask * 2 + flag, return_index=True, return_inverse=True)
        self.g_first, self.g_inv = first, g_inv.reshape(-1)
        roll = np.arange(r, dtype=np.intp)
        g_rolls = np.tile(roll, len(first))
        legal, scores, bonus = rules.turn_options(np.repeat(self.filled[first], r, axis=0),
                                                  np.repeat(flag[first].astype(bool), r), g_rolls)
        upper = rules.is_upper
        if not np.array_equal(scores[:, upper], rules.score_table[g_rolls][:, upper]):
            raise RuntimeError("policy_value: an upper box scored other than its face count")
        self.g_legal, self.g_scores, self.g_bonus = legal, scores, bonus   # rows g * R + roll
        self.up_gain = _upper_gain_table(rules)                           # rows u * R + roll
        self.g_flag = flag[first].astype(bool)

    @functools.cached_property
    def served(self) -> "EvalChunk":
        """The same chunk with the final dice still the first throw's (Generala's served
        scores, ``throws=1``): what a strategy's box() is shown then. Without served
        scores (see :func:`~yahtzee_sim.exact.space.served_only`) the scores of
        every later throw are the ``score_table``'s, those of :class:`EvalChunk` itself."""
        import copy

        rules, r = self.rules, self.r
        out = copy.copy(self)
        for name in ("options", "served"):           # computed from the scores: not shared
            out.__dict__.pop(name, None)
        n = len(self.g_first) * r
        legal, scores, bonus = rules.turn_options(
            np.repeat(self.filled[self.g_first], r, axis=0), np.repeat(self.g_flag, r),
            np.tile(np.arange(r, dtype=np.intp), len(self.g_first)), throws=np.ones(n, np.int64))
        if not np.array_equal(legal, self.g_legal) or not np.array_equal(bonus, self.g_bonus):
            raise RuntimeError("policy_value: served dice changed the legal boxes or a bonus")  # pragma: no cover
        out.g_scores = scores
        return out

    @functools.cached_property
    def rep(self):
        return np.repeat(np.arange(self.n), self.r)

    @functools.cached_property
    def rolls(self):
        return np.tile(np.arange(self.r, dtype=np.intp), self.n)

    @functools.cached_property
    def mask(self):
        return self.chunk[0][self.rep]

    @functools.cached_property
    def u(self):
        return self.chunk[1][self.rep]

    @functools.cached_property
    def flag(self):
        return self.chunk[2][self.rep]

    @functools.cached_property
    def state(self):
        return GameState.from_arrays(self.rules, np.repeat(self.filled, self.r, axis=0), self.u,
                                     self.flag.astype(bool))

    @functools.cached_property
    def options(self):
        roll = np.arange(self.r)
        row = (self.g_inv[:, None] * self.r + roll).ravel()
        scores = self.g_scores[row]
        gain = scores + self.up_gain[(self.chunk[1][:, None] * self.r + roll).ravel()] \
            + self.g_bonus[row][:, None]
        return TurnOptions(self.g_legal[row], scores, gain)


def _ask_box(strategy, turn, u: np.ndarray, rules: RuleSet) -> np.ndarray:
    opts = turn.options  # read-only views: the same rows are shown again for every roll left
    shown = TurnOptions(read_only(opts.legal), read_only(opts.scores), read_only(opts.gain))
    boxes = np.asarray(ask(strategy, "box", strategy.box, state_view(turn.state), read_only(turn.rolls), shown,
                           read_only(u)))
    if boxes.shape != turn.rolls.shape or boxes.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: box() must return {turn.rolls.shape} box indices")
    ok = (boxes >= 0) & (boxes < rules.n_boxes)
    ok[ok] = turn.options.legal[np.flatnonzero(ok), boxes[ok]]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        raise StrategyError(f"strategy {strategy.name!r} chose an illegal box (box index "
                            f"{int(boxes[g])}, dice {rules.dice.roll_dice[turn.rolls[g]].tolist()})")
    return boxes.astype(np.intp)


def _ask_keep(strategy, turn, rolls_left: int, u: np.ndarray, is_subkeep) -> np.ndarray:
    keeps = np.asarray(ask(strategy, "keep", strategy.keep, state_view(turn.state), read_only(turn.rolls),
                           rolls_left, read_only(u)))
    if keeps.shape != turn.rolls.shape or keeps.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: keep() must return {turn.rolls.shape} keep indices")
    ok = (keeps >= 0) & (keeps < is_subkeep.shape[1])
    ok[ok] = is_subkeep[turn.rolls[ok], keeps[ok]]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        raise StrategyError(f"strategy {strategy.name!r} kept dice it does not have (keep index "
                            f"{int(keeps[g])}, dice {strategy.dice.roll_dice[turn.rolls[g]].tolist()})")
    return keeps.astype(np.intp)


def _probe(strategy, rules, turn: EvalChunk, is_subkeep):
    """Refuse strategies whose decisions change with their uniform ``u``; returns the
    decisions at ``u = 0``: boxes (C, R), keeps ``{rolls left: (C, R)}`` and, where
    served dice score more, the boxes with served scores (C, R) (else None)."""
    n = len(turn.rolls)
    shape = (turn.n, turn.r)
    served = None
    if rules.roll_dependent:
        answers = [_ask_box(strategy, turn.served, np.full(n, x, np.float32), rules) for x in _U_PROBES]
        if not all(np.array_equal(answers[0], a) for a in answers[1:]):
            raise ValueError(f"strategy {strategy.name!r} is randomized (its box for served dice "
                             f"depends on its uniform u): policy_value needs decisions that depend "
                             f"on the state alone (random itself is averaged exactly)")
        served = answers[0].reshape(shape)
    answers = [_ask_box(strategy, turn, np.full(n, x, np.float32), rules) for x in _U_PROBES]
    what = "box"
    same = all(np.array_equal(answers[0], a) for a in answers[1:])
    boxes, keeps = answers[0].reshape(shape), {}
    for j in range(rules.n_rolls - 1, 0, -1):
        if not same:
            break
        answers = [_ask_keep(strategy, turn, j, np.full(n, x, np.float32), is_subkeep) for x in _U_PROBES]
        same = all(np.array_equal(answers[0], a) for a in answers[1:])
        keeps[j] = answers[0].reshape(shape)
        what = f"keep with {j} roll{'s' if j > 1 else ''} left"
    if not same:
        raise ValueError(f"strategy {strategy.name!r} is randomized (its {what} depends on its "
                         f"uniform u): policy_value needs decisions that depend on the state "
                         f"alone (random itself is averaged exactly)")
    return boxes, keeps, served


# -- the strategy's decisions for every (state, roll) of a chunk ----------------------
# A strategy is asked row by row (one (state, roll) row each, as the simulator asks
# it) unless its decisions are known to come from a table that can be read per state:
# then the table is read directly (the same answers, checked on the probe states of
# every level against the row-by-row answers).

class _Keeps:
    """Keeps of a chunk's states: ``plans[j]`` (P, R) keep of each roll with j rerolls
    left in P distinct plans, and ``rows`` (C,) the plan of each state (None: one plan
    per state). With ``lookup`` (R, S), a plan holds positions in each roll's row of it
    instead of keep indices. ``keeps[j]`` is the (C, R) table of keep indices."""

    def __init__(self, plans: dict, rows=None, lookup=None):
        self.plans, self.rows, self.lookup = plans, rows, lookup

    def __getitem__(self, j):
        p = self.plans[j]
        if self.lookup is not None:
            p = self.lookup[np.arange(p.shape[1])[None, :], p]
        return p if self.rows is None else p[self.rows]

    def __iter__(self):
        return iter(self.plans)


def keep_largest_keeps(strategy, turn):
    table = np.asarray(strategy._keep_table, dtype=np.intp)[None, :]    # the roll alone
    return _Keeps({j: table for j in range(1, turn.rules.n_rolls)}, np.zeros(turn.n, np.intp))


def best_gain_boxes_of(strategy, turn):
    """keep-largest's box for every (state, final roll) of a chunk: what its box() does
    (``best_legal(options.gain, options.legal)``: the legal box gaining most, bonuses
    included, the first on ties), in one compiled loop over the chunk's options."""
    from ._eval_kernels import best_gain_boxes

    out = np.empty((turn.n, turn.r), dtype=np.uint8)
    best_gain_boxes(turn.g_inv.astype(np.intp), np.asarray(turn.chunk[1], dtype=np.intp),
                    turn.g_scores, turn.g_bonus, turn.g_legal, turn.up_gain, out)
    return out


def lookahead_tables(strategy, turn):
    """Greedy and heuristic: each position's plan (its box for every final roll, its
    keep for every roll and rerolls left) is what keep() and box() look up."""
    rules = turn.rules
    mask, u, flag = turn.chunk
    state = GameState.from_arrays(rules, turn.filled, u, flag.astype(bool))
    rows = strategy._plans(state, rules.n_rolls - 1)
    store = strategy._store
    boxes = store[0][rows]
    plans, inv = np.unique(rows, return_inverse=True)     # states of one position share it
    keeps = {j: store[j][plans] for j in range(1, rules.n_rolls)}      # ranks among the sub-keeps
    return boxes, _Keeps(keeps, inv.reshape(-1), _subkeep_lookup(strategy.dice))


@functools.lru_cache(maxsize=None)
def _subkeep_lookup(dice):
    return dice.subkeeps.astype(np.intp)


def optimal_boxes(strategy, turn):
    """The optimal strategy's box for every (state, final roll) of a chunk: what box()
    computes (the legal box of largest ``gain + value of the next state``, in float32,
    the first on ties), box by box over (C, R) arrays. A box's next state depends only
    on the move (see :func:`_move_table`); rolls whose options differ from the plain
    score table in some state of the chunk (jokers, bonuses) are done as box() does."""
    rules, sp = turn.rules, turn.sp
    mask, u, flag = turn.chunk
    n, r, n_boxes = turn.n, turn.r, rules.n_boxes
    move_of, m_box, m_pts = _move_table(rules)
    table = strategy._values
    upper = rules.is_upper[m_box]
    nxt = sp.next_flat(mask[:, None], u[:, None], flag[:, None], np.where(upper, m_pts, m_pts > 0),
                       boxes=m_box[None, :])
    filled = turn.filled
    nxt = np.where(filled[:, m_box], 0, nxt)
    v32 = table[nxt]                                                      # (C, M) float32
    scores1 = np.zeros((len(m_box), n_boxes), dtype=np.int16)
    scores1[np.arange(len(m_box)), m_box] = np.where(upper, m_pts, 0)
    u_vals, u_inv = np.unique(u, return_inverse=True)
    ug = rules.upper_bonus_gain(np.repeat(u_vals, len(m_box)), np.tile(scores1, (len(u_vals), 1)))
    ug = ug[np.arange(len(ug)), np.tile(m_box, len(u_vals))].reshape(len(u_vals), -1)
    ug = ug[u_inv.reshape(-1)]                                            # (C, M) int16
    st = rules.score_table
    m_of_roll = move_of[np.arange(n_boxes)[:, None], st.T]               # (B, R) plain moves
    # rolls that are plain (the score table, no bonus, the open boxes) in every state
    g_plain = (turn.g_scores == np.tile(st, (len(turn.g_first), 1))).all(axis=1) \
        & (turn.g_bonus == 0) & (turn.g_legal == np.repeat(
            rules.legal_boxes(filled[turn.g_first]), r, axis=0)).all(axis=1)
    plain = g_plain.reshape(-1, r).all(axis=0)
    special = np.flatnonzero(~plain)
    legal = rules.legal_boxes(filled)                                      # (C, B)
    best = np.full((n, r), -np.inf, dtype=np.float32)
    arg = np.zeros((n, r), dtype=np.int8)
    for b in range(n_boxes):
        if not legal[:, b].any():
            continue
        mcols = m_of_roll[b]
        if rules.is_upper[b]:
            moves = np.flatnonzero(m_box == b)
            w = (m_pts[moves][None, :] + ug[:, moves]).astype(np.float32) + v32[:, moves]
            worth = np.take(w, mcols - moves[0], axis=1)
        else:
            worth = st[:, b].astype(np.float32)[None, :] + np.take(v32, mcols, axis=1)
        worth[~legal[:, b]] = -np.inf
        better = worth > best
        np.copyto(best, worth, where=better)
        arg[better] = b
    if len(special):                                 # as box() does, on those rolls only
        roll = np.tile(special, n)
        row = (turn.g_inv[:, None] * r + special).reshape(-1)
        sc = turn.g_scores[row]
        gain = sc + turn.up_gain[(u[:, None] * r + special).reshape(-1)] + turn.g_bonus[row][:, None]
        rep = np.repeat(np.arange(n), len(special))
        idx = sp.next_flat(mask[rep], u[rep], flag[rep], sc)
        worth = gain + table[idx]
        from ..strategy import best_legal

        arg[:, special] = best_legal(worth, turn.g_legal[row]).reshape(n, len(special))
        del roll
    return arg


def _chunk_rows(row_of, turn):
    """The decision-table row of each state of a chunk, the distinct rows (its keep
    plans: upper totals no decision tells apart share a row) and each state's plan."""
    mask, u, flag = turn.chunk
    rows = row_of[turn.sp.flat(mask, u, flag)]
    if (rows < 0).any():                              # pragma: no cover - internal error
        raise RuntimeError("policy_value: a reachable state has no decision-table row")
    plans, inv = np.unique(rows, return_inverse=True)
    return rows, plans, inv.reshape(-1)


def table_decisions(strategy, turn):
    """Boxes and keeps of a chunk read from the strategy's decision table: one keep plan
    per table row. The table is built (or read from the disk cache) the first time."""
    table = strategy.decision_table()
    rows, plans, inv = _chunk_rows(table.row_of, turn)
    boxes = np.asarray(table.boxes)[rows]
    keeps = {j: np.asarray(table.keeps[j])[plans] for j in range(1, turn.rules.n_rolls)}
    return boxes, _Keeps(keeps, inv, np.asarray(strategy._sub_keep, dtype=np.intp))


def row_decided(strategy, turn):
    """As :func:`table_decisions`, each row of the chunk decided here by the table's build
    (:meth:`~yahtzee_sim.strategies.optimal.OptimalStrategy.row_decisions`): the same
    bytes, and no table built for a pass that reads each row once."""
    decide = strategy.row_decisions()
    _, plans, inv = _chunk_rows(decide.row_of, turn)
    keeps, boxes, _ = decide.decide(plans)
    return boxes[inv], _Keeps({j: keeps[j] for j in range(1, turn.rules.n_rolls)}, inv,
                              np.asarray(strategy._sub_keep, dtype=np.intp))


class _Decider:
    """Boxes (C, R) and keeps ``{rolls left: (C, R)}`` of a strategy for a chunk.

    ``fast_box`` / ``fast_keeps`` say which decisions come from a table read per
    state (see above); the others are asked row by row, box first, then the keeps
    from the most rerolls left down (the engine's order). ``exact_keeps`` is False
    when the table may break exact ties differently from keep() (optimal: the
    values are equal, so the expected score is the same). ``optimal_keeps``: a
    function ``(strategy, turn) -> {rolls left: (C, R)}`` giving the keeps of an
    optimal (or risk-sensitive optimal) strategy from its tables, if the caller has one;
    it serves only where the strategy cannot play by a decision table (too large, or
    ``table=False``): otherwise the table is loaded (or built and cached once) and
    read, the same decisions as the strategy's keep() and box() then make.

    Where dice served on the first throw score more (Generala), :meth:`served` gives
    the boxes chosen with served scores. A strategy's keep() does not see whether the
    dice are served, so a served roll is kept as a thrown one, except in optimal play,
    which holds its served dice to the end of the turn once its first keep held them
    (``hold_served``; its decisions are then read from its decision table, with the
    served boxes, not from its keep()'s memory of the turn).
    """

    def __init__(self, strategy, rules, is_subkeep, *, ties_ok=False):
        self.strategy, self.rules, self.is_subkeep = strategy, rules, is_subkeep
        self.tables = self.box_fn = self.keep_fn = None
        self.exact_keeps = True
        self.served_boxes_are_boxes = False
        fast = chunk_decisions_of(strategy, rules)   # the strategy's own fast path, if it declares one
        if fast is not None and fast.tables is not None:
            self.tables = fast.tables
            self.served_boxes_are_boxes = fast.served_boxes_are_boxes
        elif fast is not None:
            self.box_fn = fast.boxes
            if fast.keeps is not None:
                self.keep_fn = fast.keeps
            elif ties_ok and fast.keeps_up_to_ties is not None:
                self.keep_fn, self.exact_keeps = fast.keeps_up_to_ties, False
        self.hold_served = rules.roll_dependent and fast is not None and fast.hold_served

    @property
    def fast(self) -> bool:
        return self.tables is not None or self.box_fn is not None or self.keep_fn is not None

    @property
    def fast_box(self) -> bool:
        return self.tables is not None or self.box_fn is not None

    @property
    def fast_keeps(self) -> bool:
        return self.tables is not None or self.keep_fn is not None

    def __call__(self, turn: EvalChunk):
        strategy, rules = self.strategy, self.rules
        shape = (turn.n, turn.r)
        if self.tables is not None:
            boxes, keeps = self.tables(strategy, turn)
        else:
            u0 = np.zeros(turn.n * turn.r, dtype=np.float32)
            boxes = self.box_fn(strategy, turn) if self.box_fn is not None else \
                _ask_box(strategy, turn, u0, rules).reshape(shape)
            keeps = self.keep_fn(strategy, turn) if self.keep_fn is not None else \
                {j: _ask_keep(strategy, turn, j, u0, self.is_subkeep).reshape(shape)
                 for j in range(rules.n_rolls - 1, 0, -1)}
        if not isinstance(keeps, _Keeps):
            keeps = _Keeps(keeps)
        return boxes, keeps

    def served(self, turn: EvalChunk, boxes) -> np.ndarray:
        """Boxes (C, R) of the chunk's final rolls when they are still the first throw's
        (served scores), given the chunk's ordinary ``boxes``."""
        strategy = self.strategy
        if self.hold_served:
            table = strategy.decisions
            mask, u, flag = turn.chunk
            return np.asarray(table.served_boxes)[table.row_of[turn.sp.flat(mask, u, flag)]]
        if self.served_boxes_are_boxes:
            return boxes                  # its box() reads its plan, not the scores offered
        if self.box_fn is not None:
            return self.box_fn(strategy, turn.served)
        u0 = np.zeros(turn.n * turn.r, dtype=np.float32)
        return _ask_box(strategy, turn.served, u0, self.rules).reshape(turn.n, turn.r)

    def check(self, turn: EvalChunk, boxes, keeps, served=None) -> None:
        """The tables' decisions on the probe states equal the row-by-row ones (for
        optimal play on served rule sets its keep() and box() answers depend on the
        turn so far: its decision table is read, nothing to compare)."""
        if not self.fast or self.hold_served:
            return
        f_boxes, f_keeps = self(turn)
        bad = self.fast_box and not np.array_equal(f_boxes, boxes)
        bad |= self.fast_keeps and self.exact_keeps and any(
            not np.array_equal(f_keeps[j], keeps[j]) for j in keeps)
        if served is not None and self.fast_box:
            bad |= not np.array_equal(self.served(turn, f_boxes), served)
        if bad:                                    # pragma: no cover - internal error
            raise RuntimeError(f"policy_value: the decision tables of {self.strategy.name!r} "
                               "disagree with its keep()/box() answers")


# -- the keep lattice, pushed forwards ----------------------------------------------
@functools.lru_cache(maxsize=None)
def forward_lattice(dice):
    """The keep lattice as every forward push walks it
    (:func:`~yahtzee_sim.exact._eval_kernels.push_up`), in the solver's layout (one row per
    keep at :func:`~yahtzee_sim.exact._solver_lattice.lattice`'s position): ``walk`` the
    rows of the keeps below a full roll (smaller keeps first, by keep index within a
    size), ``children`` (K, F) each row's keeps with one more die of each face,
    ``roll_pos`` (R,) the row of each roll, ``pos`` (K,) the row of each keep index.

    >>> from yahtzee_sim.dice import dice_tables
    >>> walk, children, roll_pos, pos = forward_lattice(dice_tables(5, 6))
    >>> len(walk), len(roll_pos), bool(np.array_equal(np.sort(pos), np.arange(462)))
    (210, 252, True)
    """
    from ._solver_lattice import lattice

    pos = lattice(dice).pos_of_keep.astype(np.intp)
    order = np.argsort(dice.keep_size, kind="stable")
    below = order[dice.keep_size[order] < dice.n_dice]
    walk = pos[below]
    children = np.zeros((dice.n_keeps, dice.n_faces), dtype=np.intp)
    children[walk] = pos[dice.keep_children[below]]
    out = (walk, children, pos[dice.roll_keep_index].astype(np.intp), pos)
    for a in out:
        a.setflags(write=False)
    return out


def _throw(dice, keep_mass: np.ndarray) -> np.ndarray:
    """(K, C) mass on the keeps (keep index order) -> (R, C) mass on the rolls after
    rerolling the rest."""
    from ._eval_kernels import throw_masses

    walk, children, roll_pos, pos = forward_lattice(dice)
    y = np.zeros((dice.n_keeps, keep_mass.shape[1]))
    y[pos] = keep_mass
    out = np.empty((dice.n_rolls, keep_mass.shape[1]))
    throw_masses(y, walk, children, roll_pos, out)
    return out


def _row_lookup(dice, lookup) -> np.ndarray:
    """(R, S) the lattice row of each plan entry: ``lookup`` (R, S) keep indices (-1
    padding), or None for plans that hold keep indices themselves."""
    pos = forward_lattice(dice)[3]
    if lookup is None:
        return _identity_rows(dice)
    lookup = np.asarray(lookup)
    return np.where(lookup >= 0, pos[np.maximum(lookup, 0)], -1).astype(np.intp)


@functools.lru_cache(maxsize=None)
def _identity_rows(dice) -> np.ndarray:
    """(R, K): keep k of every roll, as its lattice row (plans that hold keep indices).
    Writable like the other lookups: one compiled variant of the kernels."""
    return np.ascontiguousarray(np.broadcast_to(forward_lattice(dice)[3], (dice.n_rolls, dice.n_keeps)))


def final_roll_masses(dice, keeps: _Keeps, n_rolls: int, is_five=None):
    """(P, R) probability of each final roll of a turn under each of the P keep plans,
    and with ``is_five`` (R,) also the part with no five of a kind thrown (else None)."""
    from ._eval_kernels import final_roll_masses as kernel

    j_all = range(n_rolls - 1, 0, -1)
    if n_rolls > 1:
        plans = np.stack([keeps.plans[j] for j in j_all])
        if plans.dtype != np.uint8:
            plans = plans.astype(np.intp, copy=False)
    else:
        plans = np.zeros((0, 1, dice.n_rolls), dtype=np.intp)
    lookup = _row_lookup(dice, keeps.lookup)
    n_plans = plans.shape[1]
    out = np.empty((n_plans, dice.n_rolls))
    out_no5 = np.empty((n_plans if is_five is not None else 0, dice.n_rolls))
    five = np.zeros(dice.n_rolls, dtype=bool) if is_five is None else np.asarray(is_five, dtype=bool)
    kernel(dice.first_roll_prob, plans, lookup, *forward_lattice(dice)[:3], five, out, out_no5)
    return out, (out_no5 if is_five is not None else None)


def _points_bound(rules: RuleSet) -> int:
    """One more than the most points a box can pay (served scores and jokers included)."""
    top = rules.score_tables.max() if rules.roll_dependent else rules.score_table.max()
    return int(max(top, rules.joker_points.max())) + 1


def served_final_roll_masses(dice, keeps: _Keeps, n_rolls: int, is_five, hold_served: bool):
    """Where dice served on the first throw score more: (P, R) probability of each final
    roll made by a later throw, of it still the first throw's (served), and the part of
    the first with no five of a kind thrown in the turn (see
    :func:`~yahtzee_sim.exact._eval_kernels.served_final_roll_masses`; ``hold_served``:
    served dice held once are held to the end, as optimal play does). Without
    ``hold_served`` the two masses add up to :func:`final_roll_masses`'s (up to rounding)."""
    from ._eval_kernels import served_final_roll_masses as kernel

    lookup = _row_lookup(dice, keeps.lookup)
    roll = np.arange(dice.n_rolls)[None, :]
    j_all = range(n_rolls - 1, 0, -1)
    plans = np.stack([lookup[roll, keeps.plans[j]] for j in j_all]).astype(np.intp) if n_rolls > 1 \
        else np.zeros((0, 1, dice.n_rolls), dtype=np.intp)
    n_plans = plans.shape[1]
    out, out_s, out_no5 = (np.empty((n_plans, dice.n_rolls)) for _ in range(3))
    growing, children, roll_keep, _ = forward_lattice(dice)
    kernel(dice.first_roll_prob, plans, bool(hold_served), growing, children, roll_keep,
           np.asarray(is_five, dtype=bool), out, out_s, out_no5)
    return out, out_s, out_no5


@functools.lru_cache(maxsize=32)
def _move_table(rules: RuleSet):
    """Moves of a turn as far as the next state and the upper bonus can tell: an upper
    box with k dice of its face, the five-of-a-kind box with or without points, any
    other box. Returns ``move_of`` (B, max points + 1) move of each (box, points), and
    per move its box and points (upper boxes; 0 else, 1 for the five box's "points")."""
    n_pts = _points_bound(rules)
    move_of = np.full((rules.n_boxes, n_pts), -1, dtype=np.int64)
    m_box, m_pts = [], []
    for b in range(rules.n_boxes):
        if rules.is_upper[b]:
            face = int(rules.upper_face[b])
            for k in range(rules.n_dice + 1):
                if k * face < n_pts:
                    move_of[b, k * face] = len(m_box)
                    m_box.append(b)
                    m_pts.append(k * face)
        elif b == rules.five_box_index:
            move_of[b, 0] = len(m_box)
            move_of[b, 1:] = len(m_box) + 1
            m_box += [b, b]
            m_pts += [0, 1]
        else:
            move_of[b] = len(m_box)
            m_box.append(b)
            m_pts.append(0)
    out = (move_of, np.array(m_box, dtype=np.int64), np.array(m_pts, dtype=np.int64))
    for a in out:
        a.setflags(write=False)
    return out


def move_steps(rules, sp, mask, u, flag, m_box, m_pts):
    """Per state (C,) and move (M,): the next state's flat index (0 where the box is
    filled: never legal) and the upper bonus earned (as :meth:`RuleSet.upper_bonus_gain`
    gives it on one-box rows). Shared by the evaluations and the loss accounting."""
    upper = rules.is_upper[m_box]
    nxt = sp.next_flat(mask[:, None], u[:, None], flag[:, None], np.where(upper, m_pts, m_pts > 0),
                       boxes=m_box[None, :])
    open_ = (mask[:, None] >> m_box[None, :]) & 1 == 0
    nxt = np.where(open_, nxt, 0)
    scores = np.zeros((len(m_box), rules.n_boxes), dtype=np.int16)
    scores[np.arange(len(m_box)), m_box] = np.where(upper, m_pts, 0)
    # upper bonus of each (upper total, move): rules.upper_bonus_gain on one-box rows
    u_vals, u_inv = np.unique(u, return_inverse=True)
    ug = rules.upper_bonus_gain(np.repeat(u_vals, len(m_box)), np.tile(scores, (len(u_vals), 1)))
    ug = ug[np.arange(len(ug)), np.tile(m_box, len(u_vals))].reshape(len(u_vals), -1)
    return nxt, ug[u_inv.reshape(-1)].astype(np.float64)


def _move_values(rules, sp, turn: EvalChunk, values, second):
    """(C, M) per state and move: upper bonus earned plus the next state's value, and
    the matching part of the second moment (``(g + v)**2`` expanded: ``g*g + 2*g*v + m2``)."""
    mask, u, flag = turn.chunk
    move_of, m_box, m_pts = _move_table(rules)
    nxt, ug = move_steps(rules, sp, mask, u, flag, m_box, m_pts)
    v, m2 = values[nxt], second[nxt]
    return ug + v, ug * ug + 2 * ug * v + m2


def _box_array(boxes) -> np.ndarray:
    """(C, R) boxes as a contiguous uint8 or intp array for the compiled loops (a table's
    uint8 boxes are not widened: one compiled variant per dtype)."""
    boxes = np.asarray(boxes)
    if boxes.dtype not in (np.uint8, np.intp):
        boxes = boxes.astype(np.intp)
    return np.ascontiguousarray(boxes)


def _chunk_values(rules, sp, turn: EvalChunk, boxes, keeps, values, second, served=None):
    """Expected future score and its second moment (C,) of a chunk of states, for
    boxes (C, R) of every final roll and keeps (C, R) per rerolls left; ``served``:
    ``(boxes (C, R) with served scores, hold_served)`` where dice still the first
    throw's score more (the turn's two endings are summed, each with its own scores).

    A final roll written in box b gains ``s = points + five-of-a-kind bonus`` (from the
    (filled boxes, flag) group's options) and moves to a state fixed by the *move*
    (the box, and for an upper box its points): with ``A`` = upper bonus + the next
    state's value and ``Q`` = the matching second moment (per state and move, a few
    dozen), ``mean = s + A`` and ``second moment = s * (s + 2 A) + Q``, weighted by the
    final roll's probability under the keeps (pushed forwards from the first roll, once
    per distinct keep plan): one compiled loop over the (state, roll) rows
    (:func:`~yahtzee_sim.exact._eval_kernels.chunk_values`).
    """
    from ._eval_kernels import chunk_values

    n_boxes = rules.n_boxes
    a_tab, q_tab = _move_values(rules, sp, turn, values, second)
    move_of = _move_table(rules)[0]
    plan_of = np.arange(turn.n, dtype=np.intp) if keeps.rows is None else \
        np.asarray(keeps.rows, dtype=np.intp)                               # one plan per state
    if served is None:
        rho, _ = final_roll_masses(rules.dice, keeps, rules.n_rolls)          # (P, R)
        parts = [(turn, boxes, rho)]
    else:                       # the turn ends with dice thrown again, or still served
        sboxes, hold = served
        rho, rho_s, _ = served_final_roll_masses(rules.dice, keeps, rules.n_rolls,
                                                 rules.five_face > 0, hold)
        parts = [(turn, boxes, rho), (turn.served, sboxes, rho_s)]
    v, v2 = np.zeros(turn.n), np.zeros(turn.n)
    for part, part_boxes, part_rho in parts:
        g_gain = (part.g_scores + part.g_bonus[:, None]).astype(np.float64)   # (G * R, B)
        g_move = np.take(move_of, part.g_scores + (np.arange(n_boxes) * move_of.shape[1])[None, :])
        pv, pv2 = np.empty(turn.n), np.empty(turn.n)
        if not chunk_values(_box_array(part_boxes), turn.g_inv.astype(np.intp), g_gain, g_move,
                            turn.g_legal, a_tab, q_tab, plan_of, part_rho, pv, pv2):
            raise RuntimeError("policy_value: a decision table chose an illegal box")  # pragma: no cover
        if len(parts) == 1:
            v, v2 = pv, pv2
        else:
            v += pv
            v2 += pv2
    if np.isnan(v).any() or np.isnan(v2).any():      # pragma: no cover - internal error
        raise RuntimeError("policy_value: a next state was not evaluated")
    return v, v2


def _chunk_values_uniform(rules, sp, turn: EvalChunk, avg_keep, values, second):
    """Expected future score and its second moment (C,) of a chunk of states under
    ``random``: the mean over every legal box of each final roll, weighted by the
    final roll's probability under uniform keeps (the same in every state).

    The points ``s`` of a (roll, box) and which boxes are legal depend on the (filled
    boxes, flag) group alone, the worth of the move made (``A``: upper bonus plus the
    next state's value, ``Q`` its second moment) on the state, so per group the
    weights of the moves are summed once over its rolls and boxes (``W``, and ``SW``
    weighted by ``s``): ``mean = S1 + W . A`` and ``second moment = S2 + 2 SW . A + W . Q``
    per state, with ``S1``, ``S2`` the group's weighted sums of ``s`` and ``s**2``.
    """
    n_boxes, r = rules.n_boxes, turn.r
    a_tab, q_tab = _move_values(rules, sp, turn, values, second)              # (C, M)
    move_of = _move_table(rules)[0]
    n_moves = a_tab.shape[1]
    n_groups = len(turn.g_first)
    legal = turn.g_legal                                                      # (G * R, B)
    if rules.roll_dependent:    # the turn ends with dice thrown again, or still served
        rho, rho_s, _ = _uniform_served_distribution(rules.dice, rules.n_rolls)
        parts = [(turn, rho), (turn.served, rho_s)]
    else:
        parts = [(turn, _uniform_final_roll_distribution(rules.dice, rules.n_rolls))]
    group = np.repeat(np.arange(n_groups), r)[:, None]
    keys, w_ats, ws_ats, s1w, s2w = [], [], [], 0.0, 0.0
    for part, rho in parts:
        weight = np.tile(rho, n_groups)[:, None] / legal.sum(axis=1, keepdims=True) * legal
        s = (part.g_scores + part.g_bonus[:, None]).astype(np.float64)
        move = np.take(move_of, part.g_scores + (np.arange(n_boxes) * move_of.shape[1])[None, :])
        keys.append((group * n_moves + move)[legal])
        w_ats.append(weight[legal])
        ws_ats.append((weight * s)[legal])
        s1w = s1w + (weight * s).sum(axis=1)
        s2w = s2w + (weight * s * s).sum(axis=1)
    key, w_at, ws_at = (np.concatenate(a) for a in (keys, w_ats, ws_ats))
    w_move = np.bincount(key, weights=w_at, minlength=n_groups * n_moves).reshape(n_groups, n_moves)
    ws_move = np.bincount(key, weights=ws_at, minlength=n_groups * n_moves).reshape(n_groups, n_moves)
    s1 = np.bincount(group[:, 0], weights=s1w, minlength=n_groups)
    s2 = np.bincount(group[:, 0], weights=s2w, minlength=n_groups)
    g = turn.g_inv
    wc, wsc = w_move[g], ws_move[g]                                            # (C, M)
    used = wc > 0
    if np.isnan(a_tab[used]).any() or np.isnan(q_tab[used]).any():  # pragma: no cover
        raise RuntimeError("policy_value: a next state was not evaluated")
    a_tab, q_tab = np.where(used, a_tab, 0.0), np.where(used, q_tab, 0.0)
    mean = s1[g] + np.einsum("cm,cm->c", wc, a_tab)
    m2 = s2[g] + 2 * np.einsum("cm,cm->c", wsc, a_tab) + np.einsum("cm,cm->c", wc, q_tab)
    return mean, m2


@functools.lru_cache(maxsize=None)
def _uniform_final_roll_distribution(dice, n_rolls):
    """(R,) probability of each final roll when every keep is uniform over the roll's
    distinct keeps."""
    avg_keep = uniform_keep_average(dice)
    x = dice.first_roll_prob[:, None].copy()
    for _ in range(1, n_rolls):
        x = _throw(dice, avg_keep.T @ x)
    return x[:, 0]


@functools.lru_cache(maxsize=None)
def _uniform_served_distribution(dice, n_rolls):
    """(R,) each under uniform keeps (as :func:`_uniform_final_roll_distribution`): the
    probability of each final roll made by a later throw, of each final roll still the
    first throw's (every keep held all dice: holding them is not a throw), and the
    part of the first with no five of a kind (all dice alike) thrown in the turn."""
    avg_keep = uniform_keep_average(dice)
    is_five = dice.roll_counts.max(axis=1) == dice.n_dice
    full = dice.roll_keep_index
    rolls = np.arange(dice.n_rolls)
    thrown = avg_keep.copy()                     # the keeps that throw some dice again
    thrown[rolls, full] = 0.0
    served = dice.first_roll_prob.copy()
    later = np.zeros((dice.n_rolls, 2))          # columns: all, no five of a kind yet
    for _ in range(1, n_rolls):
        y = avg_keep.T @ later + thrown.T @ np.stack([served, np.where(is_five, 0.0, served)], axis=1)
        served = served * avg_keep[rolls, full]
        later = _throw(dice, y)
        later[is_five, 1] = 0.0
    return later[:, 0], served, later[:, 1]


def policy_value(rules: str | RuleSet, strategy: str | Strategy, *, options=(),
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None) -> PolicyValue:
    """Exact expected final score (and sd) of ``strategy`` on ``rules``.

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    strategy : a strategy name or instance. Its decisions must depend only on the
        state it is shown (filled boxes, upper total up to the bonus threshold, the
        five-of-a-kind box's value, the roll, the rolls left), not on its uniform
        ``u``; ``random`` is averaged exactly over its uniform choices. Where dice
        served on the first throw score more (Generala), its box() is asked with the
        served scores while the dice are still the first throw's; its keep() is not told
        (the engine does not tell it either).
    chunk_rows : (state, roll) rows per strategy call (memory bound).
    progress : a callback ``progress(phase, done, total)`` told after each level of filled
        boxes (see :mod:`yahtzee_sim.progress`); silent by default.

    >>> pv = policy_value("yacht", "greedy", options=["fill-in-order"])
    >>> 100 < pv.mean < 200 and pv.sd > 0
    True
    >>> policy_value("yacht", "no-such")
    Traceback (most recent call last):
    ...
    ValueError: unknown strategy 'no-such'; valid strategies: random, keep-largest, greedy, heuristic, optimal, cpu:weak|normal|strong, optimal:theta=<x>, target:T=<score>
    """
    rules = get_rules(rules, options)
    strat = get_strategy(strategy)
    chunk_rows = whole_number(chunk_rows, "chunk_rows")
    t0 = time.perf_counter()
    sp, uniform, avg_keep, is_subkeep, table, counts = evaluation_setup(rules, strat, "policy_value")
    decide = _Decider(strat, rules, is_subkeep)
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
                shown = [shown[1], EvalChunk(rules, sp, mask[:PROBE_STATES], u[:PROBE_STATES],
                                         flag[:PROBE_STATES])]
                decide.check(shown[1], *_probe(strat, rules, shown[1], is_subkeep))
            for lo in range(0, len(mask), per_chunk):      # chunks of states
                hi = min(lo + per_chunk, len(mask))
                shown = [shown[1], EvalChunk(rules, sp, mask[lo:hi], u[lo:hi], flag[lo:hi])]
                if uniform:
                    v, m2 = _chunk_values_uniform(rules, sp, shown[1], avg_keep, values, second)
                else:
                    boxes, keeps = decide(shown[1])
                    served = (decide.served(shown[1], boxes), decide.hold_served) \
                        if rules.roll_dependent else None
                    v, m2 = _chunk_values(rules, sp, shown[1], boxes, keeps, values, second, served)
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
