"""Exact distribution of the final score of a state-based strategy.

Over 600 lines: the forward pass of score masses shares the evaluation's chunks
(:mod:`yahtzee_sim.exact.policy`), carries every game event beside the score, and is
the one pass :mod:`yahtzee_sim.exact.events` walks too (its level moves and move list
live here with it).

A strategy whose decisions depend only on the state (the filled boxes, the
upper total up to the bonus threshold, whether the five-of-a-kind box holds its
full value, the roll and the rolls left) turns the game into a Markov chain on
states whose rewards (the points of each turn) never feed back into the
decisions. So the joint distribution of (state, points so far) can be pushed
forward turn by turn, exactly:

* per state, the strategy gives its box for each final roll and its keep for
  each roll and rolls left through the same machinery as
  :func:`~yahtzee_sim.exact.policy.policy_value` (the built-in strategies' own
  tables, or one question per (state, roll) row; ``random`` averaged exactly,
  strategies that use their uniform ``u`` refused);
* the first-roll distribution is pushed through the keeps (mass on a keep
  spreads over one more die of each face, down the keep lattice) to the
  distribution of the turn's final roll, which gives, per state, a short list of
  (next state, points, probability) moves;
* the points so far of a state are stored relative to its (capped) upper total
  ``u``: an upper box that does not reach the threshold moves probability
  without shifting it, so a state's distribution spans only its lower-section
  points, the upper bonus, the upper points beyond the threshold and any
  five-of-a-kind bonuses. Each state's vector has its own width (ragged storage),
  and each move adds its probability times its source row into its destination
  row, shifted by its points (one compiled loop over the moves).

The same pass carries the probability of events users ask about: the upper
bonus, the full value (50) in the five-of-a-kind box, at least one five of a
kind thrown in the game (at any throw), the distribution of the number of
five-of-a-kind bonuses, and where served dice score more (Generala) at least one
five of a kind made by a turn's first throw (a Generala servida). There each turn
ends with dice thrown again or still served, each with the strategy's own box and
its own scores (see :mod:`yahtzee_sim.exact.policy`).

Every level goes through one forward pass (:func:`_forward`, shared with
:mod:`yahtzee_sim.exact.events`): the strategy's decisions for a chunk of states,
the final-roll masses of its keep plans (the keep lattice's one forward push,
:func:`~yahtzee_sim.exact._eval_kernels.push_up`, eight plans at a time), the
chunk's moves listed by one compiled loop, then each caller pushes what it carries.

Cost: memory is the (state, points) support of two consecutive levels plus the
moves of one level. Optimal ``yahtzee`` visits 284,271 states (of 536,448
reachable ones: the others have probability 0 under optimal play), with at most
15.2 million (state, points) cells in a level before rows were cut to their support
(a row stores its points from the least with positive probability: 1.1 billion
multiply-adds instead of 2.0). Its keeps and boxes are read from the optimal
strategy's decision table where one is built or cached; otherwise each chunk's rows are
decided as the table's build would decide them (the same bytes:
:class:`~yahtzee_sim.exact.decisions.RowDecisions`), which costs no more than reading
the table and spares its 238 MB of fresh memory and its file. The time goes to the
final-roll masses, the (state, points) propagation and the listing of each chunk's
moves, all compiled loops: about 2.2 core-seconds warm on a quiet machine; see
``benchmarks/RESULTS.md``. Where a first pass on a machine still compiles those loops
(the install compiles them ahead), it does so in a forked process while the strategy
is prepared (optimal: its solve), not after it.

>>> dist = distribution("yacht", "keep-largest", options=["fill-in-order"])
>>> from yahtzee_sim.exact.policy import policy_value
>>> pv = policy_value("yacht", "keep-largest", options=["fill-in-order"])
>>> bool(abs(dist.mean - pv.mean) < 1e-9), bool(abs(dist.sd - pv.sd) < 1e-9)
(True, True)
>>> bool(abs(dist.pmf.sum() - 1) < 1e-12)
True
"""

from __future__ import annotations

import functools
import math
import os
import time
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from ..rules import RuleSet, get_rules
from ..strategy import Strategy, get_strategy
from ..validate import whole_number
from . import cache as _cache
from .policy import (DEFAULT_CHUNK_ROWS, PROBE_STATES, _box_array, _Decider, _points_bound, _probe,
                     _throw, EvalChunk, _uniform_served_distribution, evaluation_setup, final_roll_masses,
                     served_final_roll_masses)
from .space import state_space

__all__ = ["distribution", "ScoreDistribution", "pmf_mean_sd"]

def pmf_mean_sd(pmf) -> tuple[float, float]:
    """Mean and sd of a PMF over 0, 1, 2, ...

    >>> pmf_mean_sd([0.5, 0.0, 0.5])
    (1.0, 1.0)
    """
    p = np.asarray(pmf, dtype=np.float64)
    x = np.arange(len(p), dtype=np.float64)
    m = float(p @ x)
    return m, math.sqrt(max(float(p @ (x * x)) - m * m, 0.0))


@dataclass(frozen=True, eq=False)
class ScoreDistribution:
    """The exact distribution of the final score of a strategy on a rule set.

    Attributes
    ----------
    rules : the rule set; strategy : the strategy's name.
    pmf : (max score + 1,) float64, ``pmf[x]`` = P(final score = x) exactly.
    p_upper_bonus : P(the upper bonus is earned) (NaN if the rules have none).
    p_five_box_full : P(the five-of-a-kind box ends with its full value, e.g. 50, or
        Generala's served 60: a score) (NaN if the rules have no such box).
    p_five_of_a_kind_rolled : P(at least one throw of the game shows five of a kind).
    five_per_game : mean number of turns ending with five of a kind (the
        simulator's ``five_per_game``).
    five_bonus_pmf : P(exactly k five-of-a-kind bonuses), k = 0, 1, ... (just [1.0]
        if the rules have no such bonus).
    method : ``"deterministic"`` or ``"uniform average"`` (``random``).
    states : states with positive probability that were visited; seconds : time.
    levels : per level (boxes filled): states visited, (state, points) entries
        stored, moves, seconds.
    p_served_five : where dice served on the first throw score more (Generala),
        P(at least one turn of the game ends with five of a kind made by its first
        throw: a Generala servida, whatever box it is written in; the simulator's
        ``served_five_rate``); NaN for other rule sets.
    """

    rules: RuleSet
    strategy: str
    pmf: np.ndarray = field(repr=False)
    p_upper_bonus: float
    p_five_box_full: float
    p_five_of_a_kind_rolled: float
    five_per_game: float
    five_bonus_pmf: np.ndarray = field(repr=False)
    method: str
    states: int
    seconds: float
    levels: dict = field(repr=False)
    p_served_five: float = math.nan

    # -- moments and quantiles ---------------------------------------------------
    @property
    def mean(self) -> float:
        """Exact expected final score."""
        return pmf_mean_sd(self.pmf)[0]

    @property
    def sd(self) -> float:
        """Exact standard deviation of the final score."""
        return pmf_mean_sd(self.pmf)[1]

    @property
    def scores(self) -> np.ndarray:
        """The scores 0..max that ``pmf`` is indexed by."""
        return np.arange(len(self.pmf))

    @property
    def min_score(self) -> int:
        """Smallest score with positive probability."""
        return int(np.flatnonzero(self.pmf > 0)[0])

    @property
    def max_score(self) -> int:
        """Largest score with positive probability."""
        return int(np.flatnonzero(self.pmf > 0)[-1])

    def cdf(self) -> np.ndarray:
        """P(score <= x) for x = 0..max."""
        return np.cumsum(self.pmf)

    def p_at_least(self, x) -> float:
        """Exact P(final score >= x).

        >>> d = distribution("yacht", "keep-largest", options=["fill-in-order"])
        >>> d.p_at_least(0), d.p_at_least(10_000), round(d.p_at_least(d.min_score), 12)
        (1.0, 0.0, 1.0)
        """
        x = math.ceil(x)
        if x <= 0:
            return 1.0
        return float(min(1.0, self.pmf[x:].sum()))

    def p_below(self, x) -> float:
        """Exact P(final score < x)."""
        return 1.0 - self.p_at_least(x) if x > 0 else 0.0

    def percentile(self, q) -> int:
        """The q-th percentile (0 < q <= 100): the smallest score x with P(score <= x) >= q/100.

        >>> d = distribution("yacht", "keep-largest", options=["fill-in-order"])
        >>> d.percentile(50) == int(np.searchsorted(d.cdf(), 0.5 - 1e-12)), d.percentile(100) == d.max_score
        (True, True)
        """
        q = float(q)
        if not 0 < q <= 100:
            raise ValueError(f"percentile must be in (0, 100], got {q!r}")
        if q == 100:
            return self.max_score
        cdf = self.cdf()
        # against the computed total, and a hair below: float rounding must not move it
        return int(min(np.searchsorted(cdf, q / 100 * cdf[-1] - 1e-13), self.max_score))

    def percentiles(self, qs=range(1, 100)) -> "pd.DataFrame":
        """Table of percentiles (default 1..99): ``percentile`` and ``score``."""
        import pandas as pd

        qs = list(qs)
        return pd.DataFrame({"percentile": qs, "score": [self.percentile(q) for q in qs]}
                            ).set_index("percentile")

    @property
    def expected_five_bonuses(self) -> float:
        """Exact mean number of five-of-a-kind bonuses per game."""
        return float(np.arange(len(self.five_bonus_pmf)) @ self.five_bonus_pmf)

    def summary(self) -> dict:
        """The headline numbers as a plain dict (JSON-able).

        >>> s = distribution("yacht", "keep-largest", options=["fill-in-order"]).summary()
        >>> s["strategy"], s["rules"], round(s["five_box_full_rate"], 6)
        ('keep-largest', 'yacht+fill-in-order', 0.046029)
        """
        out = {"rules": self.rules.key, "strategy": self.strategy, "mean": self.mean,
               "sd": self.sd, "min_score": self.min_score, "max_score": self.max_score,
               "median": self.percentile(50),
               # the simulator's names for the same quantities (there: observed rates)
               "upper_bonus_rate": self.p_upper_bonus, "five_box_full_rate": self.p_five_box_full,
               "five_box_50_rate": self.p_five_box_full,   # the earlier name, deprecated (CHANGELOG)
               "five_per_game": self.five_per_game,
               "p_five_of_a_kind_rolled": self.p_five_of_a_kind_rolled,
               "expected_five_bonuses": self.expected_five_bonuses,
               "five_bonus_pmf": self.five_bonus_pmf.tolist(),
               **({"served_five_rate": self.p_served_five} if self.rules.roll_dependent else {}),
               "method": self.method, "states": self.states, "seconds": self.seconds}
        return out

    def to_frame(self) -> "pd.DataFrame":
        """One row per score with positive probability: ``probability`` (exactly that
        score), ``cdf`` (that score or less) and ``at_least`` (that score or more).

        >>> f = distribution("yacht", "keep-largest", options=["fill-in-order"]).to_frame()
        >>> f.index.name, list(f.columns)
        ('score', ['probability', 'cdf', 'at_least'])
        """
        import pandas as pd

        pos = np.flatnonzero(self.pmf > 0)
        cdf = self.cdf()
        at_least = np.concatenate([[1.0], 1.0 - cdf[:-1]])
        frame = pd.DataFrame({"score": pos, "probability": self.pmf[pos], "cdf": cdf[pos],
                              "at_least": np.clip(at_least[pos], 0.0, 1.0)})
        return frame.set_index("score")

    def plot(self, ax=None, *, simulated=None, games: int = 0, seed=0):
        """Plot the exact PMF, with a simulated histogram over it.

        ``simulated`` is an array of simulated final scores (or a result with a
        ``aggregate``, e.g. a :class:`~yahtzee_sim.results.SimulationResult`); with ``games > 0`` and no ``simulated``, that many
        games are simulated here (seeded). Returns the matplotlib axes.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(8, 4))
        x = np.arange(len(self.pmf))
        if simulated is not None:
            agg = getattr(simulated, "aggregate", None)
            counts = agg.total_hist if agg is not None else np.bincount(np.asarray(simulated))
            ax.bar(np.arange(len(counts)), counts / counts.sum(), width=1.0, color="0.8",
                   label=f"simulated ({int(counts.sum()):,} games)")
        ax.plot(x, self.pmf, color="C0", lw=1.2, label="exact")
        ax.set_xlim(self.min_score - 2, self.percentile(99.99) + 5)
        ax.set_xlabel("final score")
        ax.set_ylabel("probability of exactly that score")
        ax.set_title(f"{self.rules.key}: {self.strategy} (mean {self.mean:.2f}, sd {self.sd:.2f})")
        ax.legend()
        return ax


# -- one level's moves ------------------------------------------------------------
@dataclass
class _Moves:
    """Aggregated moves of one level: from level row ``src`` to flat state ``dst``,
    shifting the stored points by ``shift`` and adding ``nb`` five-of-a-kind bonuses,
    with probability ``p``; ``p_no5`` is the part with no five of a kind thrown."""

    src: np.ndarray
    dst: np.ndarray
    shift: np.ndarray
    nb: np.ndarray
    p: np.ndarray
    p_no5: np.ndarray
    five_full: np.ndarray     # (C,) per source row: P(this turn fills the five box with full value)
    five_final: np.ndarray    # (C,) per source row: P(this turn ends with five of a kind)
    p_no_served: np.ndarray | None = None   # served scores: the part with no served five of a kind
    box: np.ndarray | None = None           # (M,) the box each move writes, and its points
    pts: np.ndarray | None = None


def optimal_keeps(strategy, turn) -> dict:
    """The optimal strategy's keeps for every (state, roll) of a chunk, from the solver's
    keep values and one max-over-sub-keeps sweep of the lattice per rerolls left
    (instead of one question per row: same choices up to exact ties, which only arise
    between keeps of equal value)."""
    from .space import turn_values
    from .widget import best_subkeep_lattice

    sp, model = strategy._space, strategy._model
    mask, u, flag = turn.chunk
    theta = getattr(strategy, "theta", 0.0)
    if theta:                                    # the risk tables, on the chunk's own rows
        from .risk import risk_turn

        _, kv = risk_turn(strategy.rules, strategy._values, mask, u, flag, theta, plan=True,
                          turn=turn)
        return {j: best_subkeep_lattice(strategy.dice, kv[j])[1]
                .T.astype(np.intp) for j in range(1, strategy.rules.n_rolls)}
    canon = sp.canonical_u(mask, u)
    out = {}
    for lo in range(0, len(mask), strategy.chunk):
        hi = min(lo + strategy.chunk, len(mask))
        _, (kv, _) = turn_values(model, strategy._values, None, mask[lo:hi], canon[lo:hi],
                                 flag[lo:hi], plan=True)
        for j in range(1, strategy.rules.n_rolls):
            _, arg = best_subkeep_lattice(strategy.dice, kv[j])        # kv: the lattice's rows
            out.setdefault(j, []).append(arg.T.astype(np.intp))       # (C, R)
    return {j: np.concatenate(v) for j, v in out.items()}


def _uniform_final_roll_mass(d, avg_keep, is_five, n_rolls):
    """(1, R) P(final roll) and the same without any five-of-a-kind throw when every keep
    is uniform over the roll's distinct keeps (the same in every state)."""
    x = np.empty((d.n_rolls, 2))                 # rolls first; columns: all, no five yet
    x[:] = d.first_roll_prob[:, None]
    x[is_five, 1] = 0.0
    for _ in range(n_rolls - 1, 0, -1):
        x = _throw(d, avg_keep.T @ x)
        x[is_five, 1] = 0.0
    return x[:, :1].T, x[:, 1:].T


class _MoveList:
    """A level's moves as the chunks give them: (source row, bin, probability, no five of
    a kind thrown, no served five of a kind), written in place by the compiled loop,
    then each move's (next state, points shift, bonus, box, points). One list serves
    every level of a pass (:meth:`reset`): grown by doubling, never rebuilt per chunk
    or level (fresh pages cost as much as the work on them)."""

    def __init__(self, capacity: int = 1 << 16):
        self.m = 0
        self.arrays = self._alloc(max(int(capacity), 1))

    @staticmethod
    def _alloc(n):
        return [np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(n),
                np.empty(n), np.empty(n)] + [np.empty(n, dtype=np.int64) for _ in range(5)]

    def reset(self) -> "_MoveList":
        self.m = 0
        return self

    def room(self, extra: int) -> list:
        """The listed arrays, with room for ``extra`` more moves."""
        cap = len(self.arrays[0])
        if self.m + extra > cap:
            new = self._alloc(max(2 * cap, self.m + extra))
            for a, b in zip(new[:5], self.arrays[:5]):
                a[:self.m] = b[:self.m]
            self.arrays = new
        return self.arrays[:5]

    def view(self) -> list:
        """The listed moves, then the finished arrays to fill."""
        return [a[:self.m] for a in self.arrays]


@functools.lru_cache(maxsize=32)
def _upper_gain_of_points(rules: RuleSet):
    """(n_u, max points + 1) the upper bonus earned by writing p points in an upper box at
    capped upper total u (what :meth:`RuleSet.upper_bonus_gain` gives on a one-box row:
    it depends on the total and the points only)."""
    from .space import state_space

    n_u, n_pts = state_space(rules).n_u, _points_bound(rules)
    if not rules.upper_bonus:
        return np.zeros((n_u, n_pts), dtype=np.int64)
    col = int(np.flatnonzero(rules.is_upper)[0])
    one = np.zeros((n_u * n_pts, rules.n_boxes), dtype=np.int16)
    one[:, col] = np.tile(np.arange(n_pts), n_u)
    gain = rules.upper_bonus_gain(np.repeat(np.arange(n_u), n_pts), one)[:, col]
    return gain.reshape(n_u, n_pts).astype(np.int64)


def _level_moves(rules, sp, decide, mask, u, flag, uniform, avg_keep, per_chunk, shown,
                 five_ended=False, out=None, ready=None):
    """One level's moves. ``five_ended``: the moves' ``nb`` bit says the turn's final dice
    are five of a kind (in any state) instead of a five-of-a-kind bonus, for
    :mod:`yahtzee_sim.exact.events` (the points shifts are then not the score's).
    ``out``: a :class:`_MoveList` to reuse (the previous level's moves are then gone).
    ``ready``: called before the compiled loops' first use in each chunk (it waits for
    their compilation beside, if one runs: see :func:`_forward`)."""
    from ._eval_kernels import finish_moves, level_bins, uniform_bins

    d = rules.dice
    is_five = (rules.five_face > 0) if rules.five_box is not None else \
        (d.roll_counts.max(axis=1) == rules.n_dice)
    unit = rules.five_bonus
    n_pts = _points_bound(rules)
    served = rules.roll_dependent         # a turn ends with dice thrown again, or still served
    n_bins = 2 * rules.n_boxes * n_pts      # the most moves a state can have
    five_final = np.zeros(len(mask))
    out = _MoveList() if out is None else out.reset()
    for lo in range(0, len(mask), per_chunk):
        hi = min(lo + per_chunk, len(mask))
        turn = EvalChunk(rules, sp, mask[lo:hi], u[lo:hi], flag[lo:hi])
        shown[0], shown[1] = shown[1], turn
        n, r = turn.n, turn.r
        # per ending of the turn: its options, boxes, P(final roll), the part with no five
        # of a kind thrown, and the part that is not a served five of a kind
        five_bin = np.zeros((n, r), dtype=np.int8)
        if five_ended:
            five_bin[:] = is_five
        elif rules.five_bonus:
            five_bin[turn.chunk[2] == 1] = is_five
        if uniform:
            if ready is not None:
                ready()
            if served:
                p_u, p_s, p_u5 = _uniform_served_distribution(d, rules.n_rolls)
                p_s5 = np.where(is_five, 0.0, p_s)
                ends = [(turn, None, p_u[None, :], p_u5[None, :], p_u[None, :]),
                        (turn.served, None, p_s[None, :], p_s5[None, :], p_s5[None, :])]
            else:
                p_all, p_no5 = _uniform_final_roll_mass(d, avg_keep, is_five, rules.n_rolls)
                ends = [(turn, None, p_all, p_no5, p_all)]
            stack = (lambda i: np.concatenate([e[i] for e in ends]))
            g_scores = np.stack([e[0].g_scores for e in ends]) if served else turn.g_scores[None]
            arrays = out.room(n * min(r * len(ends) * rules.n_boxes, n_bins))
            m = uniform_bins(len(ends), turn.g_inv.astype(np.intp), g_scores, turn.g_legal,
                             stack(2), stack(3), stack(4), five_bin, n_pts, *arrays, out.m)
            arrays[0][out.m:m] += lo
            out.m = m
            for _, _, p_all, _, _ in ends:
                five_final[lo:hi] += p_all[0, is_five].sum()
            continue
        boxes, keeps = decide(turn)         # the first one may build a decision table
        if ready is not None:
            ready()
        if served:
            p_u, p_s, p_u5 = served_final_roll_masses(d, keeps, rules.n_rolls, is_five,
                                                      decide.hold_served)
            p_s5 = np.where(is_five, 0.0, p_s)
            ends = [(turn, boxes, p_u, p_u5, p_u),
                    (turn.served, decide.served(turn, boxes), p_s, p_s5, p_s5)]
        else:
            p_all, p_no5 = final_roll_masses(d, keeps, rules.n_rolls, is_five)      # (P, R)
            ends = [(turn, boxes, p_all, p_no5, p_all)]
        plan_of = np.arange(n, dtype=np.intp) if keeps.rows is None else \
            np.asarray(keeps.rows, dtype=np.intp)
        for _, _, p_all, _, _ in ends:
            five_final[lo:hi] += p_all[:, is_five].sum(axis=1)[plan_of]
        stack = (lambda i: np.stack([e[i] for e in ends])) if served else (lambda i: ends[0][i][None])
        all_boxes = np.stack([_box_array(e[1]) for e in ends]) if served else _box_array(boxes)[None]
        g_scores = np.stack([e[0].g_scores for e in ends]) if served else turn.g_scores[None]
        arrays = out.room(n * min(r * len(ends), n_bins))
        # no served scores: no third sum to keep (the moves' p_no_served is unused then)
        p_ns = stack(4) if served else np.empty((1, 0, r))
        m = level_bins(len(ends), all_boxes, turn.g_inv.astype(np.intp), g_scores, turn.g_legal,
                       plan_of, stack(2), stack(3), p_ns, five_bin, n_pts, *arrays, out.m)
        if m < 0:
            raise RuntimeError("distribution: a decision table chose an illegal box")  # pragma: no cover
        arrays[0][out.m:m] += lo
        out.m = m
    st, key, p, q, ns, dst, shift, nb, bx, pts = out.view()
    five_full = np.zeros(len(mask))
    finish_moves(st, key, p, mask, u, flag, n_pts, sp.n_u, sp.n_flag, sp.cap, rules.is_upper,
                 _upper_gain_of_points(rules), rules.five_box_index, unit, dst, shift, nb, bx, pts,
                 five_full)
    return _Moves(st, dst, shift, nb, p, q, five_full, five_final, ns if served else None, bx, pts)


# -- ragged storage of (state, points) ----------------------------------------------
@dataclass
class _Level:
    """The states of one level with positive probability and their point distributions.

    ``flat`` (S,) state indices; row i stores the probabilities of the points
    ``lo[i], lo[i] + 1, ..., lo[i] + width[i] - 1`` (points relative to the state's
    capped upper total) from offset ``start[i]`` of ``data``. A row holds its support
    only: the points below its least (a filled Chance, a scored straight) are never
    stored nor pushed (the exact zeros of a row starting at 0 were 44% of optimal
    ``yahtzee``'s multiply-adds).
    """

    flat: np.ndarray
    lo: np.ndarray
    width: np.ndarray
    start: np.ndarray
    data: np.ndarray

    @classmethod
    def empty(cls, flat, lo, width):
        width = np.asarray(width, dtype=np.int64)
        start = np.concatenate([[0], np.cumsum(width)[:-1]]).astype(np.int64)
        return cls(flat, np.asarray(lo, dtype=np.int64), width, start, np.zeros(int(width.sum())))

    def mass(self) -> np.ndarray:
        return np.add.reduceat(self.data, self.start) if len(self.data) else np.zeros(0)


def _propagate(level: _Level, moves: _Moves, next_flat, drow, spare: np.ndarray) -> tuple:
    """Push (state, points) through one level's moves: each move adds its probability
    times the source row into the destination row ``drow`` (of the states
    ``next_flat``), shifted by the move's points (a compiled loop over the moves,
    :func:`~yahtzee_sim.exact._eval_kernels.propagate`); returns the next level and the
    buffer that holds its data. The next level's data is
    written in ``spare`` (a buffer no level uses any more) if it is long enough: fresh
    memory costs a page fault per 4 kB, as much as the work on it. (Not in NumPy's huge
    pages: a process's first ones cost more, 0.6 CPU s in a pass, than they save.)"""
    from ._eval_kernels import propagate

    lo, width, start = (np.empty(len(next_flat), dtype=np.int64) for _ in range(3))
    buf, total = propagate(level.data, level.lo, level.width, level.start, moves.src, drow, moves.shift,
                           moves.p, lo, width, start, spare)
    return _Level(next_flat, lo, width, start, buf[:total]), buf


def _push_no_five(no5, moves: _Moves, drow, n_next, p_no5=None):
    """P(reach each next state with no five of a kind thrown so far), or with ``p_no5``
    another event's moves (no served five of a kind); ``drow`` each move's next row.
    The count push's loop with every move adding 0: per next state the sum, move by
    move, of ``no5[src] * p`` (the floats of ``np.bincount`` over those products)."""
    from ._eval_kernels import push_counts

    p_no5 = moves.p_no5 if p_no5 is None else p_no5
    return push_counts(no5.reshape(-1, 1), drow, moves.src, p_no5, _NO_INC, n_next)[:, 0]


_NO_INC = np.zeros(0, dtype=np.int64)


def _push_bonus_counts(counts, moves: _Moves, drow, n_next):
    """(rows, k) P(state and exactly j bonuses so far), pushed forwards."""
    from ._eval_kernels import push_counts

    return push_counts(counts, drow, moves.src, moves.p, moves.nb, n_next)


DIST_VERSION = 2
"""Bump when the distribution's results or cache layout change (invalidates caches)."""

_FIELDS = ("p_upper_bonus", "p_five_box_full", "p_five_of_a_kind_rolled", "five_per_game",
           "states", "seconds", "p_served_five")
"""Stored as one array; a file from before ``p_served_five`` (served rule sets were
refused then) reads it as NaN, what every other rule set has."""


def _package_version() -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version("yahtzee-sim")
    except importlib.metadata.PackageNotFoundError:      # pragma: no cover - not installed
        return "unknown"


def _cache_meta(rules, name, code):
    """What a cached distribution must match: the rules, the strategy's name and the
    source of its code (``code``: :func:`~yahtzee_sim.strategies.code_fingerprint`, so a
    changed strategy under the same name is recomputed), and the versions."""
    from .risk import RISK_VERSION
    from .solver import SOLVER_VERSION, rules_fingerprint

    return {"rules": rules.key, "fingerprint": rules_fingerprint(rules), "strategy": name,
            "strategy_code": code, "distribution_version": DIST_VERSION,
            "solver_version": SOLVER_VERSION, "risk_version": RISK_VERSION,
            "package": _package_version()}


def _cache_path(rules, name, cache_dir=None):
    from .solver import rules_fingerprint

    return _cache.table_path(rules.key, rules_fingerprint(rules), f"distribution-{name}", DIST_VERSION, cache_dir)


def _load(rules, name, code, cache_dir):
    stored = _cache.CachedTable(_cache_path(rules, name, cache_dir), _cache_meta(rules, name, code)).load()
    if stored is None:
        return None
    scalars = dict(zip(_FIELDS, stored["scalars"].tolist()))
    scalars["states"] = int(scalars["states"])
    levels = {k[6:]: stored[k] for k in stored if k.startswith("level_")}
    return ScoreDistribution(rules, name, stored["pmf"], scalars["p_upper_bonus"],
                             scalars["p_five_box_full"], scalars["p_five_of_a_kind_rolled"],
                             scalars["five_per_game"], stored["five_bonus_pmf"], str(stored["method"]),
                             scalars["states"], scalars["seconds"], levels,
                             scalars.get("p_served_five", math.nan))


def _store(dist, code, cache_dir):
    arrays = {"pmf": dist.pmf, "five_bonus_pmf": dist.five_bonus_pmf, "method": np.array(dist.method),
              "scalars": np.array([float(getattr(dist, f)) for f in _FIELDS])}
    arrays.update({f"level_{k}": v for k, v in dist.levels.items()})
    # a folder it cannot write: the answer is still right (nothing to note it in)
    _cache.CachedTable(_cache_path(dist.rules, dist.strategy, cache_dir),
                       _cache_meta(dist.rules, dist.strategy, code)).store(arrays)


def distribution(rules: str | RuleSet, strategy: str | Strategy, *, options=(),
                 chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None,
                 cache: bool = False, cache_dir=None, player: Strategy | None = None) -> ScoreDistribution:
    """Exact distribution of the final score of ``strategy`` on ``rules``.

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    strategy : a strategy name or instance whose decisions depend on the state alone
        (see :func:`~yahtzee_sim.exact.policy.policy_value`); ``random`` is averaged
        exactly; a strategy whose decisions change with its uniform ``u`` is refused.
    chunk_rows : (state, roll) rows per strategy call (memory bound).
    progress : a :mod:`yahtzee_sim.progress` callback (or True for a bar on stderr),
        told each turn propagated.
    cache : for a strategy given by name, read and write the result in the disk cache
        (:mod:`yahtzee_sim.exact.cache`; keyed by the rules, the name, the source of the
        strategy's code, and the versions of the distribution, the solver, the risk
        tables and the package).
    player : the instance to compute with, for a strategy given by name: one that
        :func:`~yahtzee_sim.strategy.get_strategy` made of that name, unchanged since
        (what it learns on the way stays with it, e.g. a lookahead strategy's plans, for
        the caller's next evaluation of it); the disk cache keys it by the name.

    >>> d = distribution("yacht", "greedy", options=["fill-in-order"])
    >>> bool(abs(d.pmf.sum() - 1) < 1e-12), round(d.p_at_least(d.min_score), 12)
    (True, 1.0)
    >>> distribution("yacht", "greedy", player=get_strategy("heuristic"))
    Traceback (most recent call last):
    ...
    ValueError: player: a greedy strategy (as get_strategy('greedy') makes it), not heuristic
    """
    from ..progress import as_progress

    rules = get_rules(rules, options)
    strat = get_strategy(strategy)
    if player is not None:
        if not isinstance(strategy, str) or type(player) is not type(strat) or player.name != strat.name:
            raise ValueError(f"player: a {strat.name} strategy (as get_strategy({strategy!r}) makes it), "
                             f"not {getattr(player, 'name', type(player).__name__)}")
        strat = player
    chunk_rows = whole_number(chunk_rows, "chunk_rows")
    return through_cache(cache and isinstance(strategy, str), strat,
                         lambda code: _load(rules, strat.name, code, cache_dir),
                         lambda: _distribution(rules, strat, chunk_rows, as_progress(progress)),
                         lambda dist, code: _store(dist, code, cache_dir))


def through_cache(cache: bool, strat: Strategy, load, compute, store):
    """``compute()``, or with ``cache`` first ``load(code)`` (None: not cached) and, on a
    miss, ``store(result, code)`` after computing: ``code`` is the strategy's
    :func:`~yahtzee_sim.strategy.code_fingerprint`, so a changed strategy under the same
    name is computed again. The disk cache of the exact evaluations by strategy name
    (score distributions, card events).

    >>> through_cache(False, get_strategy("greedy"), None, lambda: 42, None)
    42
    """
    if not cache:
        return compute()
    from ..strategy import code_fingerprint

    code = code_fingerprint(strat)
    hit = load(code)
    if hit is not None:
        return hit
    result = compute()
    store(result, code)
    return result


DISTRIBUTIONS_BESIDE_NICE = 10
"""The priority of :class:`DistributionsBeside`'s forked process (an ``os.nice`` increment)."""


class DistributionsBeside:
    """The exact distributions of several strategies on one rule set, for a command that
    needs them all (a table's players, a file of claims): the one played by a decision
    table (optimal: its solve and its table, the longest) is computed here, the others
    in one forked process beside it, at a lower priority, into the disk cache, where
    :meth:`get` then loads them. On a first run on a machine the child waits for the
    compiled loops of the pass this process compiles (rather than compile them a second
    time) and computes the others while this process's optimal pass leaves the second
    core idle. Only what the disk cache lacks is computed beside, and only for named rule
    sets and strategies named by a string (those the disk cache keeps); the values are
    the ones computed here (the same code on the same inputs).

    Ask for the distributions in any order: one asked for before the one computed here
    is done stops the child and is computed here (as are any whose step failed). Use it
    as a context manager (or call :meth:`stop`): nothing is left running behind.

    >>> with DistributionsBeside("yacht", ["greedy", "keep-largest"]) as dists:
    ...     round(dists.get("greedy").mean - distribution("yacht", "greedy").mean, 12)
    0.0
    """

    def __init__(self, rules: str | RuleSet, plays, *, cache_dir=None):
        from ..rules import REGISTRY

        self.rules = get_rules(rules)
        self.cache_dir = cache_dir
        self.cached = self.rules.name in REGISTRY     # a test's own RuleSet or a house file: no disk cache
        self._beside = None
        self._here: str | None = None
        self._plays_beside: tuple = ()
        self._hits: dict = {}                          # read from the disk cache while looking
        self._adopted: list = []
        missing = [p for p in dict.fromkeys(plays) if self.cached and self._missing(p)]
        if len(missing) < 2:
            return
        self._here = next((p for p in missing if plays_by_table(get_strategy(p))), missing[0])
        self._plays_beside = tuple(p for p in missing if p != self._here)
        self._beside = self._start()

    def _missing(self, play) -> bool:
        """A strategy name whose distribution the disk cache lacks (False for anything else;
        a cached one is kept for :meth:`get`)."""
        key = _cache_key(play)
        if key is None:                     # an unknown name is said when asked for, by the usual path
            return False
        hit = _load(self.rules, *key, self.cache_dir)
        if hit is not None:
            self._hits[play] = hit
        return hit is None

    def _start(self):
        from ..forkpool import Beside

        # this process compiles the pass's loops (beside its solve) for the first pass: the
        # child waits for them in numba's cache rather than compile them too
        rules, cache_dir = self.rules, self.cache_dir

        def step(play):
            def compute() -> None:
                wait_for_parent_pass_loops()     # the strategy's own setup meanwhile
                distribution(rules, play, cache=True, cache_dir=cache_dir)
            return compute
        return Beside([(p, step(p)) for p in self._plays_beside], what="distributions",
                      nice=DISTRIBUTIONS_BESIDE_NICE, kernels=True)

    def get(self, play, progress=None) -> ScoreDistribution:
        """The exact distribution of ``play`` (loaded from the disk cache once computed beside)."""
        if play in self._hits:
            return self._hits.pop(play)
        if self._beside is not None and play in self._plays_beside:
            if self._here is not None:      # asked before the one computed here: all of them here
                self.stop()
            else:
                from ..progress import as_progress, heartbeat

                with heartbeat(as_progress(progress), f"distribution of {play} on {self.rules.key}"):
                    try:
                        self._beside.result(play)
                    except (ValueError, RuntimeError):    # failed or not done beside: here, as usual
                        pass
        dist = distribution(self.rules, play, cache=self.cached and isinstance(play, str),
                            cache_dir=self.cache_dir, progress=progress)
        if play == self._here:
            self._here = None
        return dist

    def adopt(self, beside) -> None:
        """Stop ``beside`` too (another forked process of the same command) in :meth:`stop`."""
        self._adopted.append(beside)

    def stop(self) -> None:
        """End the forked processes (their distributions are no longer wanted)."""
        if self._beside is not None:
            self._beside.stop()
            self._beside = None
        for other in self._adopted:
            other.stop()
        self._adopted.clear()

    def __enter__(self) -> "DistributionsBeside":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def cached_distribution(rules: RuleSet, play: str, cache_dir=None) -> ScoreDistribution | None:
    """``play``'s score distribution on ``rules`` from the disk cache, or None.

    >>> cached_distribution(get_rules("yacht"), "no-such-strategy") is None
    True
    """
    key = _cache_key(play)
    return None if key is None else _load(rules, *key, cache_dir)


def _cache_key(play) -> tuple[str, str] | None:
    """What the disk cache keys a strategy's results by (its name and the fingerprint of
    its code), or None for a play that is not a strategy's name (an instance, an unknown name)."""
    from ..strategy import code_fingerprint

    if not isinstance(play, str):
        return None
    try:
        strat = get_strategy(play)
    except ValueError:
        return None
    return strat.name, code_fingerprint(strat)


def plays_by_table(strat) -> bool:
    """Does ``strat`` decide from a decision table it builds after its solve (optimal)?

    >>> plays_by_table(get_strategy("optimal")), plays_by_table(get_strategy("greedy"))
    (True, False)
    """
    return callable(getattr(strat, "decision_table", None))


@dataclass
class _Step:
    """One level of the forward pass: its states (``flat``), its moves, the next
    level's states (``next_flat``, increasing) and each move's row among them."""

    flat: np.ndarray
    moves: _Moves
    next_flat: np.ndarray
    drow: np.ndarray


def _forward(rules, strat, what, chunk_rows, progress, five_ended=False):
    """The one forward pass of the exact evaluations that carry probabilities turn by
    turn (this module's score distribution, :mod:`~yahtzee_sim.exact.events`'s card
    events): from the fresh card, per level of filled boxes, the states reached, the
    strategy's moves (checked against its keep() and box() on the probe states) and
    where they lead. Yields ``uniform`` first, then one :class:`_Step` per level;
    each caller pushes what it carries through the step's moves."""
    from ..forkpool import COMPILE_LOCK_SECONDS, Compiling, kernels_cached
    from . import _eval_kernels as kx

    # A first pass on a machine compiles its loops (seconds) in a forked process while
    # the strategy is prepared here (optimal: its solve, then its decision table's build,
    # which leave a core idle part of the time); the first chunk waits for it, then
    # loads them from numba's cache. A failed compilation compiles them here as before.
    kernels = [getattr(kx, name) for name in kx.PASS_KERNELS]
    if _PASS_COMPILED_BY_PARENT is not None and not kernels_cached(*kernels):
        # a forked process beside (DistributionsBeside's, the card events'): its parent's
        # compiler is at work on them; the strategy's setup and first decisions (its own
        # loops) go on meanwhile
        compiled = Compiling()
        ready = _wait_cached(kernels, _PASS_COMPILED_BY_PARENT, _PASS_PARENT_DONE)
    else:
        compiled = compile_pass_beside(strat)
        ready = functools.partial(compiled.wait, COMPILE_LOCK_SECONDS)
    try:
        yield from _levels(rules, strat, what, chunk_rows, progress, five_ended, ready)
    except BaseException:           # refused, failed or stopped: no compiler left running behind
        compiled.stop()
        raise


_PASS_COMPILER: dict = {}
"""The compiler of the pass's loops this process started (:func:`compile_pass_beside`), by
the id of the process that started it: a forked child inherits the parent's, whose
reaper thread it has not (to the child it would seem to run forever)."""


def compile_pass_beside(strat):
    """Start compiling the loops of the pass (and, for a strategy that plays by a decision
    table, its build's loops first) in a forked process, unless numba's cache has them or
    this process's compiler is still at work on them; returns it
    (:class:`~yahtzee_sim.forkpool.Compiling`: wait for it before their first use).

    >>> compile_pass_beside(get_strategy("greedy")).wait() in (True, False)
    True
    """
    from ..forkpool import compile_beside
    from . import _eval_kernels as kx

    mine = _PASS_COMPILER.get(os.getpid())
    if mine is not None and mine.running():
        return mine
    work = [kx.compile_pass]
    if plays_by_table(strat):
        from .decisions import precompile as table_loops

        # a strategy that plays by a decision table builds it after its solve: its build's
        # loops first, ready before the build starts (the build then loads them)
        work.insert(0, table_loops)
    compiled = compile_beside(lambda: [w() for w in work], kernels=[getattr(kx, name) for name in kx.PASS_KERNELS])
    _PASS_COMPILER.clear()
    _PASS_COMPILER[os.getpid()] = compiled
    return compiled


def prepare_for_passes(rules: RuleSet, play) -> Strategy:
    """``play`` prepared on ``rules`` (its solve) and, if it plays by a decision table it
    does not decide row by row in a pass (a cached one, a served rule set's, a risk
    strategy's), that table built (both kept in this process's memory, where its passes
    find them), the pass's loops compiling beside meanwhile on a first run: what a process
    does before it forks one pass beside another of the same strategy (the child shares
    the tables). Two passes of optimal play that decide their rows build no table: as
    quick on two cores as building it once for both, without its 238 MB file (``yahtzee``).

    >>> prepare_for_passes(get_rules("yacht"), "greedy").name
    'greedy'
    """
    strat = get_strategy(play)
    compile_pass_beside(strat)
    strat.prepare(rules)
    decides_rows = getattr(strat, "decides_rows", None)
    if plays_by_table(strat) and not (decides_rows is not None and decides_rows(rules)):
        strat.decision_table()
    return strat


def wait_for_parent_pass_loops(parent_done=None) -> None:
    """In a forked process whose parent compiles the pass's loops: its passes wait for
    them in numba's cache (just before their first use) rather than compile them again.
    ``parent_done``: a one-element array in shared memory
    (:func:`~yahtzee_sim.forkpool.shared_array`) the parent sets to nonzero once its own
    pass is over or was never run (its strategy not evaluable, or its distribution
    cached): the wait ends there, and this process compiles what is still missing."""
    global _PASS_COMPILED_BY_PARENT, _PASS_PARENT_DONE
    from ..forkpool import COMPILE_LOCK_SECONDS

    if not pass_compiled():
        _PASS_COMPILED_BY_PARENT = time.monotonic() + COMPILE_LOCK_SECONDS
        _PASS_PARENT_DONE = parent_done


def pass_compiled() -> bool:
    """Has numba's cache the pass's compiled loops for this machine (a first pass loads
    them rather than compile them)?

    >>> pass_compiled() in (True, False)
    True
    """
    from ..forkpool import kernels_cached
    from . import _eval_kernels as kx

    return kernels_cached(*[getattr(kx, name) for name in kx.PASS_KERNELS])


_PASS_COMPILED_BY_PARENT: float | None = None
"""Set (to a ``time.monotonic()`` deadline) in a forked process beside (:class:`DistributionsBeside`'s,
the card events' of :mod:`yahtzee_sim.questions.gamescope`) while its parent compiles the pass's
loops (:func:`wait_for_parent_pass_loops`): its passes wait for them in numba's cache, just
before their first use, rather than compile them a second time."""


_PASS_PARENT_DONE = None
"""The parent's "my pass is over" flag (:func:`wait_for_parent_pass_loops`), or None."""


def _wait_cached(kernels, deadline: float, parent_done=None):
    """What to call before the first use of ``kernels``: it waits until numba's cache has
    them (or ``deadline`` passes, or ``parent_done[0]`` is set: the first call then
    compiles them in place), once."""
    from ..forkpool import kernels_cached

    waited: list = []

    def ready() -> None:
        while (not waited and not kernels_cached(*kernels) and time.monotonic() < deadline
               and not (parent_done is not None and parent_done[0])):
            time.sleep(0.05)
        waited.append(True)
    return ready


def _levels(rules, strat, what, chunk_rows, progress, five_ended, ready):
    """:func:`_forward`'s steps, ``ready`` called before the compiled loops' first use."""
    from ._eval_kernels import next_rows

    sp, uniform, avg_keep, is_subkeep, _, _ = evaluation_setup(rules, strat, what)
    yield uniform
    decide = _Decider(strat, rules, is_subkeep, ties_ok=True)
    per_chunk = max(1, int(chunk_rows) // rules.dice.n_rolls)
    row_of = np.full(sp.size, -1, dtype=np.int64)
    seen = np.zeros(sp.size, dtype=bool)
    shown: list = [None, None]
    move_list = _MoveList()
    fl = np.array([sp.flat(0, 0, 0)], dtype=np.int64)
    label = f"{what} of {strat.name} on {rules.key}"
    for k in range(sp.n_boxes):
        progress(label, k, sp.n_boxes)
        flag = fl % sp.n_flag
        u = (fl // sp.n_flag) % sp.n_u
        mask = fl // (sp.n_flag * sp.n_u)
        if not uniform:
            probe = EvalChunk(rules, sp, mask[:PROBE_STATES], u[:PROBE_STATES], flag[:PROBE_STATES])
            shown[0], shown[1] = shown[1], probe
            decide.check(probe, *_probe(strat, rules, probe, is_subkeep))
        moves = _level_moves(rules, sp, decide, mask, u, flag, uniform, avg_keep, per_chunk, shown,
                             five_ended=five_ended, out=move_list, ready=ready)
        nxt, drow = next_rows(moves.dst, row_of, seen)
        yield _Step(fl, moves, nxt, drow)
        row_of[nxt] = -1
        fl = nxt
    progress(label, sp.n_boxes, sp.n_boxes)


def _distribution(rules, strat, chunk_rows, progress) -> ScoreDistribution:
    t0 = time.perf_counter()
    sp = state_space(rules)
    passing = _forward(rules, strat, "distribution", chunk_rows, progress)
    uniform = next(passing)
    level = _Level.empty(np.array([sp.flat(0, 0, 0)], dtype=np.int64), np.zeros(1), np.array([1]))
    level.data[0] = 1.0
    spare = np.empty(0)
    buf = level.data
    no5 = np.ones(1)
    no_served = np.ones(1)          # P(state and no served five of a kind so far)
    max_bonus = sp.n_boxes if rules.five_bonus else 0
    bonus_count = np.zeros((1, max_bonus + 1))
    bonus_count[0, 0] = 1.0
    p_five_full = 0.0
    five_per_game = 0.0
    dots: list = []                 # per level: P(each state), P(it fills the five box), P(it ends with five)
    lv: dict = {"filled": [], "states": [], "entries": [], "moves": [], "seconds": []}
    n_states = 0
    t_level = time.perf_counter()
    for k, step in enumerate(passing):
        moves, drow, n_next = step.moves, step.drow, len(step.next_flat)
        mass = level.mass()
        dots.append((mass, moves.five_full, moves.five_final))
        # the level before this one is done with: its buffer takes the next level
        nxt, nxt_buf = _propagate(level, moves, step.next_flat, drow, spare)
        spare, buf = buf, nxt_buf
        if moves.p_no_served is not None:
            no_served = _push_no_five(no_served, moves, drow, n_next, moves.p_no_served)
        no5 = _push_no_five(no5, moves, drow, n_next)
        bonus_count = _push_bonus_counts(bonus_count, moves, drow, n_next)
        n_states += len(step.flat)
        lv["filled"].append(k)
        lv["states"].append(len(step.flat))
        lv["entries"].append(len(level.data))
        lv["moves"].append(len(moves.p))
        lv["seconds"].append(time.perf_counter() - t_level)
        t_level = time.perf_counter()
        level = nxt
    # The two sums over the levels after the pass, back to back: NumPy's matrix product
    # wakes its BLAS library's threads, which then spin for a while on the other core; once
    # per level that spinning was a quarter of the pass's CPU time. (The same products in
    # the same order: the same floats.)
    for mass, five_full, five_final in dots:
        p_five_full += float(mass @ five_full)
        five_per_game += float(mass @ five_final)
    # the full cards: final score = stored points + capped upper total
    fl = level.flat
    u = (fl // sp.n_flag) % sp.n_u
    row = np.repeat(np.arange(len(fl)), level.width)
    offset = np.arange(len(row)) - np.repeat(level.start - level.lo, level.width)
    score = u[row] + offset
    pmf = np.bincount(score, weights=level.data)
    pmf = np.trim_zeros(pmf, "b") if pmf.any() else pmf
    mass = level.mass()
    p_bonus = float(mass[rules.final_bonus(u) > 0].sum()) if rules.upper_bonus else math.nan
    lv["filled"].append(sp.n_boxes)
    lv["states"].append(len(fl))
    lv["entries"].append(len(level.data))
    lv["moves"].append(0)
    lv["seconds"].append(0.0)
    bonus_pmf = bonus_count.sum(axis=0)
    bonus_pmf = np.trim_zeros(bonus_pmf, "b") if rules.five_bonus else np.ones(1)
    return ScoreDistribution(
        rules, strat.name, pmf, p_bonus,
        p_five_full if rules.five_box is not None else math.nan,
        float(1.0 - no5.sum()), five_per_game, bonus_pmf, "uniform average" if uniform else "deterministic",
        n_states + len(fl), time.perf_counter() - t0,
        {key: np.asarray(x) for key, x in lv.items()},
        float(1.0 - no_served.sum()) if rules.roll_dependent else math.nan)
