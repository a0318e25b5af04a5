"""Where a strategy loses its points against optimal play: exact loss accounting.

Over 600 lines: the exact forward walk and its simulated cross-check (:func:`estimate_losses`,
which meters the same decisions in played games) share the position words, the
costliest-position list and the loss kinds; split apart, each would import the other's
private helpers.

Every decision of a turn (each keep while rolls are left, then the box) has a
*loss*: the optimal value of the best choice minus the optimal value of the choice
made, both followed by optimal play (the solver's float64 tables). Weighted by the
exact probability that the strategy reaches the decision, the losses add up to the
whole gap, optimal's expected score minus the strategy's (the performance-difference
identity: within a turn and from turn to turn the optimal values telescope).

The walk goes forwards, level by level of filled boxes from the empty card: the
probability of each turn-start state under the strategy, then within the turn the
probability of each roll with ``j`` rolls left (the first roll's chances pushed
through the strategy's keeps, as :mod:`yahtzee_sim.exact.policy` does backwards),
and the optimal value of every keep and every box of that state (one exact Bellman
step from the next states' values, in a compiled loop, :mod:`yahtzee_sim.exact._loss_kernels`:
one for a deterministic strategy, one for ``random``'s averages). Both walk
the exact engine's one keep-lattice layout (:class:`_Lattice`): a keep's value from its
children as the solver computes it, the masses pushed down the lattice as the policy
evaluation pushes them. The
strategy's decisions come from the same :class:`~yahtzee_sim.exact.policy._Decider`
as its exact value, so whatever
``policy_value`` evaluates (decisions that depend on the card and the dice alone, and
``random``, averaged exactly over its choices) is accounted here.

A turn's losses are also carried forwards to the roll that ends it, so the gap splits
by the box the strategy fills in that turn (the keeps that led there included), by
turn, and by decision kind, each part in points per game and adding up to the gap.

>>> acc = loss_accounting("yacht", "keep-largest", options=["fill-in-order"])
>>> bool(abs(sum(acc.by_kind.values()) - acc.gap) < 1e-9)
True
>>> bool(abs(acc.gap - (acc.optimal_score - acc.strategy_score)) < 1e-9)
True
"""

from __future__ import annotations

import contextlib
import heapq
import math
import time
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from ..forkpool import ForkPool, default_jobs, fork_workers, shared_array
from ..rules import RuleSet, get_rules
from ..strategy import Strategy, get_strategy
from .policy import move_steps
from ..validate import renamed_keywords, whole_number

__all__ = ["OPTIMAL_TOL", "TOP_POSITIONS", "LossAccounting", "compile_walk_beside", "estimate_losses", "kind_names",
           "loss_accounting"]

TOP_POSITIONS = 20
"""Costliest positions kept (reach probability times loss)."""

OPTIMAL_TOL = 1e-9
"""A decision whose loss is at most this (points) counts as optimal: float64 values of
exactly tied choices differ by rounding only (about 1e-13 here)."""

DEFAULT_CHUNK_ROWS = 1 << 19
"""(state, roll) rows worked at once (memory: about 0.5 kB per row)."""


def kind_names(n_rolls: int) -> list[str]:
    """Names of a turn's decision kinds, in the order they are made.

    >>> kind_names(3)
    ['first keep', 'second keep', 'box']
    >>> kind_names(4)
    ['keep with 3 rolls left', 'keep with 2 rolls left', 'keep with 1 roll left', 'box']
    """
    if n_rolls == 3:
        return ["first keep", "second keep", "box"]
    return [f"keep with {j} roll{'s' if j > 1 else ''} left" for j in range(n_rolls - 1, 0, -1)] + ["box"]


@dataclass(frozen=True, eq=False)
class LossAccounting:
    """The gap between optimal play and a strategy, decision by decision.

    Attributes
    ----------
    rules : the rule set; strategy : the strategy's name.
    method : ``"exact"`` (every reachable decision weighted by its exact probability)
        or ``"exact, uniform average"`` (``random``: its losses averaged exactly over
        its uniform choices).
    optimal_score, strategy_score, gap : optimal's expected score, the strategy's
        (exact), and their difference.
    by_kind : points per game lost by each decision kind (first keep, second keep, box).
    by_box : points per game lost in the turns that filled each box (keeps included).
    by_turn : (n_boxes,) points per game lost in turn 1, 2, ...
    decisions : expected decisions of each kind per game (one per turn).
    optimal_share : per kind, the probability that a decision of that kind is optimal.
    top : the costliest positions, largest first: dicts with the card, the dice, the
        rolls left, the choice, the best choice, the loss and the reach probability.
    seconds : time taken.
    half_width : estimated from simulated games only (see :func:`estimate_losses`): the
        95% interval half-width of ``accounted``, ``strategy_score`` and each kind.
    """

    rules: RuleSet
    strategy: str
    method: str
    optimal_score: float
    strategy_score: float
    by_kind: dict
    by_box: dict
    by_turn: np.ndarray = field(repr=False)
    decisions: dict = field(repr=False)
    optimal_share: dict = field(repr=False)
    top: list = field(repr=False)
    seconds: float = 0.0
    half_width: dict = field(default_factory=dict, repr=False)

    @property
    def gap(self) -> float:
        """Optimal's expected score minus the strategy's (points per game)."""
        return self.optimal_score - self.strategy_score

    @property
    def accounted(self) -> float:
        """The losses summed (equals :attr:`gap` up to rounding: the identity's check)."""
        return float(sum(self.by_kind.values()))

    @property
    def mean_loss_per_decision(self) -> float:
        """Points lost per decision on average (Verhoeff's proficiency measure).

        >>> acc = loss_accounting("yacht", "greedy", options=["fill-in-order"])
        >>> bool(np.isclose(acc.mean_loss_per_decision * sum(acc.decisions.values()), acc.accounted))
        True
        """
        return self.accounted / sum(self.decisions.values())

    @property
    def share_optimal(self) -> float:
        """Share of all decisions that are optimal (each weighted by its probability).

        >>> 0 < loss_accounting("yacht", "greedy", options=["fill-in-order"]).share_optimal < 1
        True
        """
        n = sum(self.decisions.values())
        return sum(self.optimal_share[k] * self.decisions[k] for k in self.decisions) / n

    def summary(self) -> dict:
        """The headline numbers as a plain dict.

        >>> s = loss_accounting("yacht", "greedy", options=["fill-in-order"]).summary()
        >>> s["strategy"], s["method"]
        ('greedy', 'exact')
        """
        return {"rules": self.rules.key, "strategy": self.strategy, "method": self.method,
                "optimal_score": self.optimal_score, "strategy_score": self.strategy_score,
                "gap": self.gap, "accounted": self.accounted,
                "mean_loss_per_decision": self.mean_loss_per_decision,
                "share_optimal": self.share_optimal, "seconds": self.seconds}

    def to_frame(self) -> pd.DataFrame:
        """The parts of the gap, one row each: ``split`` (decision kind, box, turn), ``part``,
        ``points`` per game; each split's points add up to the gap.

        >>> f = loss_accounting("yacht", "greedy", options=["fill-in-order"]).to_frame()
        >>> sorted(set(f["split"]))
        ['box', 'decision kind', 'turn']
        """
        import pandas as pd

        rows = [("decision kind", k, v) for k, v in self.by_kind.items()]
        rows += [("box", k, v) for k, v in self.by_box.items()]
        rows += [("turn", str(t + 1), float(v)) for t, v in enumerate(self.by_turn)]
        return pd.DataFrame(rows, columns=["split", "part", "points"])

    def top_frame(self) -> pd.DataFrame:
        """The costliest positions as a table (see :attr:`top`).

        >>> f = loss_accounting("yacht", "greedy", options=["fill-in-order"]).top_frame()
        >>> list(f.columns)[:3]
        ['points_per_game', 'reach', 'loss']
        """
        import pandas as pd

        cols = ["points_per_game", "reach", "loss", "turn", "card", "upper", "dice", "rolls_left",
                "choice", "best"]
        return pd.DataFrame([{c: t[c] for c in cols} for t in self.top], columns=cols)

    def to_dict(self) -> dict:
        """Everything as plain numbers and strings (for ``--json``).

        >>> d = loss_accounting("yacht", "greedy", options=["fill-in-order"]).to_dict()
        >>> sorted(d)[:3]
        ['accounted', 'by_box', 'by_kind']
        """
        out = self.summary()
        out.update(half_width=dict(self.half_width), by_kind=dict(self.by_kind), by_box=dict(self.by_box),
                   by_turn=[float(x) for x in self.by_turn], decisions=dict(self.decisions),
                   optimal_share=dict(self.optimal_share), top=[dict(t) for t in self.top])
        return out


# -- words for positions ---------------------------------------------------------------

def _dice_text(dice_row) -> str:
    return " ".join(str(int(v)) for v in dice_row)


def _keep_words(dice, keep: int) -> str:
    counts = dice.keep_counts[keep]
    held = np.repeat(np.arange(1, len(counts) + 1), counts)
    if len(held) == 0:
        return "reroll all"
    if len(held) == dice.n_dice:
        return "hold all"
    return "hold " + _dice_text(held)


def _card_words(rules: RuleSet, mask: int) -> str:
    filled = [rules.box_names[b] for b in range(rules.n_boxes) if mask >> b & 1]
    return "empty card" if not filled else "filled: " + ", ".join(filled)


def _box_words(rules: RuleSet, box: int, points: int) -> str:
    return f"{points} in {rules.box_names[box]}"


# -- the walk ---------------------------------------------------------------------------

class _Top:
    """The costliest positions met so far (a min-heap of bounded size)."""

    def __init__(self, n: int):
        self.n, self.heap, self.count = n, [], 0

    def offer(self, weights: np.ndarray, make):
        """``weights`` (N,) of candidate positions; ``make(i)`` builds the record of one."""
        if len(weights) == 0:
            return
        k = min(self.n, len(weights))
        cand = np.argpartition(-weights, k - 1)[:k]
        for i in cand:
            w = float(weights[i])
            if w <= 0:
                continue
            if len(self.heap) < self.n or w > self.heap[0][0]:
                self.count += 1
                item = (w, self.count, make(int(i)))
                if len(self.heap) < self.n:
                    heapq.heappush(self.heap, item)
                else:
                    heapq.heapreplace(self.heap, item)

    def could_take(self, w_max: float) -> bool:
        """Would :meth:`offer` keep any position of weight at most ``w_max``? (A full heap
        takes only a weight above its smallest; no weight above 0 is none.)"""
        return w_max > 0 and (len(self.heap) < self.n or w_max > self.heap[0][0])

    def add(self, w: float, rec: dict) -> None:
        """Offer one position already built (from another process's part)."""
        self.count += 1
        if len(self.heap) < self.n:
            heapq.heappush(self.heap, (w, self.count, rec))
        elif self.n and w > self.heap[0][0]:
            heapq.heapreplace(self.heap, (w, self.count, rec))

    def items(self) -> list:
        return [(w, rec) for w, _, rec in self.heap]

    def records(self) -> list:
        return [rec for _, _, rec in sorted(self.heap, key=lambda x: (-x[0], x[1]))]


class _Lattice:
    """The keep lattice of a dice table as the loss walk uses it: the exact engine's one
    layout (:func:`~yahtzee_sim.exact._solver_lattice.lattice`, keeps by size, the full
    rolls last) and its walks, the keep means up the lattice as the solver computes them
    (:func:`~yahtzee_sim.exact._solver_lattice.expect`), the best sub-keep along its
    parents, and the tables of the compiled walks (:mod:`._loss_kernels`), which also push
    the masses down it as every forward push of the evaluations does
    (:func:`~yahtzee_sim.exact.policy.forward_lattice`). Values go in and out in the
    dice tables' keep order: the strategies' keeps and the positions' words use it.

    >>> from yahtzee_sim.dice import dice_tables
    >>> d = dice_tables(2, 3); lat = _Lattice(d)
    >>> z = np.arange(d.n_rolls, dtype=float)[None, :]          # (1, R) values of the rolls
    >>> w = lat.keep_values(z)
    >>> bool(np.allclose(w, z @ np.asarray(d.transition).T))    # the keep -> roll chances' mean
    True
    """

    def __init__(self, dice, avg_keep=None):
        from ._solver_lattice import lattice, sweep_pairs
        from .policy import forward_lattice

        self.dice = dice
        lat = self.lat = lattice(dice)
        # each smaller keep's children in ascending row: the order the solver sums them
        child_pos = np.sort(np.concatenate(lat.children), axis=1)
        pair_child, pair_parent, roll_pos = sweep_pairs(lat)
        walk, children, _, pos = forward_lattice(dice)
        self.roll_pos = np.array(roll_pos, dtype=np.intp)
        # the compiled walk's tables (:mod:`._loss_kernels`): own writable int64 copies, one
        # compiled variant (a read-only array is another type to numba)
        self.kernel_args = tuple(np.array(a, dtype=np.int64, order="C") for a in
                                 (child_pos, pair_child, pair_parent, roll_pos, pos, walk, children))
        self.uniform_args = None                 # random's uniform keeps, for its compiled walk
        if avg_keep is not None:
            from scipy import sparse

            # each roll's sub-keeps and each keep's rolls, in the order of the sparse
            # products the NumPy walk took (the same sums)
            avg = sparse.csr_matrix(avg_keep)
            held = avg.T.tocsr()
            n_sub = np.asarray(dice.n_subkeeps, dtype=np.int64)
            if not np.array_equal(np.diff(avg.indptr), n_sub):     # pragma: no cover
                raise RuntimeError("loss accounting: a roll's sub-keeps are not distinct")
            self.uniform_args = tuple(np.array(a, dtype=t, order="C") for a, t in (
                (avg.indptr, np.int64), (avg.indices, np.int64), (avg.data, np.float64),
                (held.indptr, np.int64), (held.indices, np.int64), (held.data, np.float64),
                (n_sub, np.int64)))

    def keep_values(self, z: np.ndarray) -> np.ndarray:
        """(C, R) values of the rolls -> (C, K) expected value after holding each keep."""
        from ._solver_lattice import expect

        x = np.empty((self.lat.n_keeps, z.shape[0]))
        x[self.roll_pos] = z.T
        expect(self.lat, x)
        return x[self.lat.pos_of_keep].T

    def best_subkeep(self, w: np.ndarray) -> np.ndarray:
        """(C, K) keep values -> (C, R) the best sub-keep's value of each roll (the max over
        the keep of the whole roll and its sub-keeps, smallest keeps first)."""
        from ._solver_lattice import best_subkeep_mean

        x = np.ascontiguousarray(w.T[self.lat.keep_at])
        best_subkeep_mean(self.lat, x)
        return x[self.roll_pos].T


class _QRows:
    """A chunk's box values row by row, (state, roll) row -> (B,) points plus the optimal
    value after the box, -inf for an illegal box: the compiled walk keeps no (C * R, B)
    table, and the costliest positions need a few rows only (the same floats)."""

    def __init__(self, gi, g_gain, g_legal, g_move, a_m):
        self.gi, self.g_gain, self.g_legal, self.g_move, self.a_m = gi, g_gain, g_legal, g_move, a_m

    def __getitem__(self, row: int) -> np.ndarray:
        s, r = divmod(int(row), self.g_gain.shape[1])
        g = self.gi[s]
        q = self.g_gain[g, r] + self.a_m[s, self.g_move[g, r]]
        return np.where(self.g_legal[g, r], q, -np.inf)


class _Scratch:
    """A process's working arrays, reused chunk after chunk and level after level: a
    fresh array's pages are zeroed by the system on first touch, which cost the walk
    about as much as its own work on them (each process keeps its own: shared pages
    would be copied on write).

    >>> s = _Scratch()
    >>> a = s.empty("x", (2, 3)); b = s.empty("x", (1, 3))
    >>> b.base is a.base, s.zeros("y", 4).tolist()
    (True, [0.0, 0.0, 0.0, 0.0])
    """

    def __init__(self):
        self._arrays: dict = {}

    def empty(self, name: str, shape, dtype=np.float64) -> np.ndarray:
        """A C-contiguous array of ``shape`` (contents left from its last use)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        n = math.prod(shape)
        flat = self._arrays.get(name)
        if flat is None or flat.size < n or flat.dtype != dtype:
            flat = self._arrays[name] = np.empty(max(n, 1), dtype=dtype)
        return flat[:n].reshape(shape)

    def zeros(self, name: str, shape, dtype=np.float64) -> np.ndarray:
        out = self.empty(name, shape, dtype)
        out.fill(0)
        return out

    def kept_zero(self, name: str, size: int) -> np.ndarray:
        """A float64 array of ``size`` zeros that its user leaves at zero after each use
        (zeroed when first made only)."""
        flat = self._arrays.get(name)
        if flat is None or flat.size != size:
            flat = self._arrays[name] = np.zeros(size)
        return flat


class _Acc:
    """One level's sums over its chunks (one per process): losses and optimal decisions by
    kind, by box and turn, the strategy's points, the next level's reach, the top positions."""

    def __init__(self, kinds, n_b, size, top, scratch: _Scratch):
        self.loss_kind = dict.fromkeys(kinds, 0.0)
        self.opt_mass = dict.fromkeys(kinds, 0.0)
        self.dec_mass = dict.fromkeys(kinds, 0.0)
        self.by_box, self.by_turn, self.score = np.zeros(n_b), np.zeros(n_b), 0.0
        self.reach_next = scratch.zeros("reach_next", size)
        self.best = _Top(top)
        self.shown = [None, None]

    def packed(self) -> dict:
        """What a child sends back (the reach as its nonzero entries)."""
        nz = np.flatnonzero(self.reach_next)
        return {"loss_kind": self.loss_kind, "opt_mass": self.opt_mass, "dec_mass": self.dec_mass,
                "by_box": self.by_box, "by_turn": self.by_turn, "score": self.score,
                "reach_idx": nz, "reach_val": self.reach_next[nz], "best": self.best.items()}

    def merge(self, part: dict) -> None:
        for k in self.loss_kind:
            self.loss_kind[k] += part["loss_kind"][k]
            self.opt_mass[k] += part["opt_mass"][k]
            self.dec_mass[k] += part["dec_mass"][k]
        self.by_box += part["by_box"]
        self.by_turn += part["by_turn"]
        self.score += part["score"]
        self.reach_next[part["reach_idx"]] += part["reach_val"]
        for w, rec in part["best"]:
            self.best.add(w, rec)


def compile_walk_beside():
    """Start compiling the accounting's walk in a forked process if numba's cache has no
    copy (a command that accounts losses later, after other work); returns what to call
    to wait for it (:class:`~yahtzee_sim.forkpool.Compiling`: at once when nothing was
    started). Call it and wait before :func:`loss_accounting`, which otherwise starts
    its own compilation while this one is still under way.

    >>> compile_walk_beside()() in (True, False)
    True
    """
    from ._loss_kernels import compile_beside

    return compile_beside()


@renamed_keywords(workers="jobs")   # jobs, as the runner's: one word for the processes
def loss_accounting(rules: str | RuleSet, strategy: str | Strategy, *, options=(), solution=None,
                    chunk_rows: int = DEFAULT_CHUNK_ROWS, top: int = TOP_POSITIONS,
                    jobs: int | None = None, progress=None) -> LossAccounting:
    """Exact loss of every decision of ``strategy`` against optimal play, summed by kind,
    box and turn (see the module docstring).

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    strategy : a strategy name or instance whose decisions depend on the card and the
        dice alone (as for :func:`~yahtzee_sim.exact.policy.policy_value`); ``random`` is
        averaged exactly over its uniform choices.
    solution : optimal values to account against (default: the float64 solve of
        ``rules``, from the solver's cache; with float32 tables the parts add up to the gap
        within about 1e-4 only).
    chunk_rows : (state, roll) rows worked at once (memory bound).
    top : how many of the costliest positions to keep.
    jobs : processes sharing each level's states (default :func:`~yahtzee_sim.forkpool.default_jobs`: 2
        where two CPUs are available); the sums are the same up to rounding. ``workers=``,
        its old name, still works (deprecated).
    progress : a callback ``progress(phase, done, total)`` told after each level.

    >>> acc = loss_accounting("yacht", "optimal", options=["fill-in-order"])
    >>> abs(acc.gap) < 1e-9, round(acc.share_optimal, 12)
    (True, 1.0)
    >>> loss_accounting("generala", "greedy")
    Traceback (most recent call last):
    ...
    ValueError: loss accounting does not cover generala: dice served on the first throw score more there, and a turn's decisions then depend on how its dice came; the benchmark gives the exact or simulated score without it
    """
    from ..progress import as_progress
    from .policy import (
        PROBE_STATES,
        _Decider,
        _level_states,
        _probe,
        EvalChunk,
        evaluation_setup,
    )
    from .solver import solve

    rules = get_rules(rules, options)
    strat = get_strategy(strategy)
    chunk_rows = whole_number(chunk_rows, "chunk_rows")
    top = whole_number(top, "top", low=0)
    workers = default_jobs() if jobs is None else whole_number(jobs, "jobs")
    workers = fork_workers(int(workers))          # one process where this one cannot fork
    from .space import require_solvable

    require_solvable(rules, "loss accounting (it needs optimal play's values)")
    if rules.roll_dependent:
        raise ValueError(f"loss accounting does not cover {rules.key}: dice served on the first "
                         f"throw score more there, and a turn's decisions then depend on how its "
                         f"dice came; the benchmark gives the exact or simulated score without it")
    if rules.announces:
        raise ValueError(f"loss accounting does not cover {rules.key}: its announced boxes make a "
                         f"turn's decisions depend on the announcement; the benchmark gives the "
                         f"exact or simulated score without it")
    t0 = time.perf_counter()
    from ._loss_kernels import compile_beside

    sp, uniform, avg_keep, is_subkeep, table, counts = evaluation_setup(rules, strat, "loss accounting")
    # a first run on a machine compiles the walk (random's or the others') in a forked
    # process during the solve below
    compiled = compile_beside(uniform)
    if solution is None:
        solution = solve(rules, dtype=np.float64)
    if solution.rules.key != rules.key or solution.values.size != sp.size:
        raise ValueError(f"solution is for {solution.rules.key}, not {rules.key}")
    values = solution.values.reshape(-1)
    decide = _Decider(strat, rules, is_subkeep)
    d = rules.dice
    n_r, n_k, n_b, n_rolls = d.n_rolls, d.n_keeps, rules.n_boxes, rules.n_rolls
    lat = _Lattice(d, avg_keep if uniform else None)
    sub = np.asarray(d.subkeeps, dtype=np.int64)                           # (R, S)
    sub_ok = sub >= 0
    sub_col = np.where(sub_ok, sub, n_k)                                   # padding -> a -inf column
    # the best keep on ties: the one with more dice (as the decision tables break them)
    sub_size = np.where(sub_ok, d.keep_size[np.maximum(sub, 0)], -1)
    tie_order = np.argsort(-sub_size, axis=1, kind="stable")
    p_first = np.array(d.first_roll_prob, dtype=np.float64)            # writable: one compiled variant
    kinds = kind_names(n_rolls)
    stage_kind = {j: kinds[n_rolls - 1 - j] for j in range(n_rolls)}    # rolls left -> kind
    loss_kind = dict.fromkeys(kinds, 0.0)
    opt_mass = dict.fromkeys(kinds, 0.0)
    dec_mass = dict.fromkeys(kinds, 0.0)
    by_box = np.zeros(n_b)
    by_turn = np.zeros(n_b)
    strategy_score = 0.0
    # the reach of each level's states: in shared memory, read by the worker that takes
    # every other chunk of each level (one process for the whole walk, not one per level:
    # a fork per level made every page either process wrote fault again)
    reach = shared_array(sp.size) if workers > 1 else np.zeros(sp.size)
    reach[sp.flat(0, 0, 0)] = 1.0
    best = _Top(int(top))
    per_chunk = max(1, int(chunk_rows) // n_r)
    from .policy import _move_table

    move_of, move_box, move_pts = _move_table(rules)
    shown = [None, None]
    report = as_progress(progress)
    scratch = _Scratch()
    compiled()

    def _chunk(lo, st, lv, scratch):       # one chunk of a level's states (``lv``) into st
        level, mask_l, u_l, flag_l, idx_l = lv
        hi = min(lo + per_chunk, len(mask_l))
        mask, u, flag, idx = mask_l[lo:hi], u_l[lo:hi], flag_l[lo:hi], idx_l[lo:hi]
        p_state = reach[idx]                                             # (C,)
        turn = EvalChunk(rules, sp, mask, u, flag)
        st.shown = [st.shown[1], turn]
        c = turn.n
        n_g = len(turn.g_first)                  # distinct (filled boxes, flag) of the chunk
        g_legal = turn.g_legal.reshape(n_g, n_r, n_b)
        g_gain = (turn.g_scores + turn.g_bonus[:, None]).astype(np.float64).reshape(n_g, n_r, n_b)
        g_move = np.take(move_of, turn.g_scores + (np.arange(n_b) * move_of.shape[1])[None, :]
                         ).reshape(n_g, n_r, n_b)
        # a box's next state and upper bonus depend on the *move* alone (the box, and
        # for an upper box its points): per state a few dozen moves, not R x B boxes
        nxt_m, ug_m = move_steps(rules, sp, mask, u, flag, move_box, move_pts)      # (C, M)
        a_m = ug_m + values[nxt_m]
        gi = turn.g_inv
        if uniform:
            # random: each decision's loss averaged over its uniform choices, in a compiled
            # loop (the same floats as the NumPy walk it replaced, in a fifth of its time)
            from ._loss_kernels import uniform_turn_losses

            take = scratch.empty
            loss_all, mass_all = take("loss_all", (n_rolls, c, n_r)), take("mass_all", (n_rolls, c, n_r))
            opt_all, acc = take("opt_all", (n_rolls, c, n_r)), take("acc", (c, n_r))
            w_all, into = take("w_all", (n_rolls - 1, c, n_k)), take("into", (c, a_m.shape[1]))
            flow, flow_pts = take("flow", c * n_r * n_b), take("flow_pts", c * n_r * n_b)
            by_box_chunk, top_cost = np.zeros(n_b), np.zeros(n_rolls)
            gi = np.ascontiguousarray(gi, dtype=np.int64)
            g_move = np.ascontiguousarray(g_move, dtype=np.int64)
            n_flow = uniform_turn_losses(gi, g_gain, g_legal, g_move, a_m, p_state, *lat.kernel_args,
                                         *lat.uniform_args, p_first, OPTIMAL_TOL, loss_all, mass_all,
                                         opt_all, w_all, acc, into, flow, flow_pts, by_box_chunk, top_cost)
            if n_flow < 0:
                raise RuntimeError("loss accounting: a next state has no optimal value")  # pragma: no cover
            losses = {j: (mass_all[j], loss_all[j]) for j in range(n_rolls - 1, -1, -1)}
            # each product summed over the rolls in the memory order the NumPy walk's had
            # (column by column where both factors came out of the lattice transposed)
            prod, is_opt = take("product", (c, n_r)), take("is_optimal", (c, n_r), np.bool_)
            prod_t = take("product_t", (n_r, c)).T
            for j, (mj, lj) in losses.items():
                kind = stage_kind[j]
                out = prod if j in (0, n_rolls - 1) else prod_t
                st.loss_kind[kind] += float(p_state @ np.multiply(mj, lj, out=out).sum(axis=1))
                st.opt_mass[kind] += float(p_state @ np.multiply(mj, opt_all[j], out=out).sum(axis=1))
                st.dec_mass[kind] += float(p_state.sum())
            st.by_turn[level] += float(p_state @ acc.sum(axis=1))
            st.by_box += by_box_chunk
            st.score += float(flow[:n_flow] @ flow_pts[:n_flow])
            into = into.ravel()
            q, w = _QRows(gi, g_gain, g_legal, g_move, a_m), {j: w_all[j - 1] for j in range(1, n_rolls)}
            boxes = keep_idx = None
        else:
            # a deterministic strategy: the compiled loop walks each state's turn (the
            # same floats as the NumPy walk random's averages take, in a fraction of the
            # memory traffic); the sums over the chunk stay in NumPy, as before
            from ._loss_kernels import turn_losses

            boxes, keeps = decide(turn)
            take = scratch.empty
            box_of = take("boxes", (c, n_r), np.intp)
            box_of[:] = np.asarray(boxes).reshape(c, n_r)
            boxes = box_of
            keep_all = take("keep_all", (n_rolls - 1, c, n_r), np.intp)
            for j in range(1, n_rolls):
                keep_all[j - 1] = np.asarray(keeps[j]).reshape(c, n_r)
            keep_idx = {j: keep_all[j - 1] for j in range(1, n_rolls)}
            loss_all, mass_all = take("loss_all", (n_rolls, c, n_r)), take("mass_all", (n_rolls, c, n_r))
            w_all, acc, pts_chosen = take("w_all", (n_rolls - 1, c, n_k)), take("acc", (c, n_r)), \
                take("pts_chosen", (c, n_r))
            into, top_cost = take("into", (c, a_m.shape[1])), np.zeros(n_rolls)
            gi = np.ascontiguousarray(gi, dtype=np.int64)
            g_move = np.ascontiguousarray(g_move, dtype=np.int64)
            if not turn_losses(gi, g_gain, g_legal, g_move, a_m, p_state, boxes, keep_all,
                               *lat.kernel_args, p_first, OPTIMAL_TOL,
                               loss_all, mass_all, w_all, acc, pts_chosen, into, top_cost):
                raise RuntimeError("loss accounting: a next state has no optimal value")  # pragma: no cover
            losses = {j: (mass_all[j], loss_all[j]) for j in range(n_rolls - 1, -1, -1)}
            # the products below are written into the same working array (the same floats)
            prod, is_opt = take("product", (c, n_r)), take("is_optimal", (c, n_r), np.bool_)
            for j, (mj, lj) in losses.items():
                kind = stage_kind[j]
                st.loss_kind[kind] += float(p_state @ np.multiply(mj, lj, out=prod).sum(axis=1))
                np.less_equal(lj, OPTIMAL_TOL, out=is_opt)
                st.opt_mass[kind] += float(p_state @ np.multiply(mj, is_opt, out=prod).sum(axis=1))
                st.dec_mass[kind] += float(p_state.sum())
            st.by_turn[level] += float(p_state @ acc.sum(axis=1))
            st.by_box += np.bincount(boxes.reshape(-1), weights=np.multiply(p_state[:, None], acc, out=prod).ravel(),
                                     minlength=n_b)
            st.score += float(np.multiply(p_state[:, None], mass_all[0], out=prod).ravel() @ pts_chosen.ravel())
            into = into.ravel()
            q, w = _QRows(gi, g_gain, g_legal, g_move, a_m), {j: w_all[j - 1] for j in keep_idx}
        st.score += float(into @ ug_m.ravel())                         # the upper bonus earned
        used = into > 0
        # the flow into each next state summed as np.bincount sums it (in order, from 0),
        # in a working array kept at zero between chunks
        nxt_used = nxt_m.ravel()[used]
        flow_in = scratch.kept_zero("flow_in", sp.size)
        np.add.at(flow_in, nxt_used, into[used])
        st.reach_next += flow_in
        flow_in[nxt_used] = 0.0
        # the costliest positions of this chunk
        if st.best.n:
            for j, (mj, lj) in losses.items():
                if not st.best.could_take(top_cost[j]):
                    continue                  # none of them would enter: the same positions kept
                # rounding-level losses of tied choices are not positions to show
                cost = np.multiply(np.multiply(p_state[:, None], mj, out=prod), lj, out=prod)
                np.copyto(cost, 0.0, where=np.logical_not(np.greater(lj, OPTIMAL_TOL, out=is_opt), out=is_opt))
                cost = cost.ravel()
                st.best.offer(cost, lambda i, j=j, mj=mj, lj=lj: _position(
                    rules, sp, turn, i, j, float(p_state[i // n_r] * mj.reshape(-1)[i]),
                    float(lj.reshape(-1)[i]), q, w, uniform, boxes if not uniform else None,
                    keep_idx if not uniform else None, sub, sub_col, tie_order, level))

    def level_live(level, probe=False):
        """The level's states the strategy reaches: (level, mask, u, flag, flat index)."""
        mask_all, u_all, flag_all = _level_states(sp, table, counts, level)
        idx_all = sp.flat(mask_all, u_all, flag_all)
        live = reach[idx_all] > 0
        if probe and not uniform:
            nonlocal shown
            shown = [shown[1], EvalChunk(rules, sp, mask_all[:PROBE_STATES], u_all[:PROBE_STATES],
                                     flag_all[:PROBE_STATES])]
            decide.check(shown[1], *_probe(strat, rules, shown[1], is_subkeep))
        return level, mask_all[live], u_all[live], flag_all[live], idx_all[live]

    worker_scratch = _Scratch()            # the worker's own (made empty here, filled there)

    def worker_half(level):                # the worker's chunks of a level: its sums travel back
        lv = level_live(level)
        st = _Acc(kinds, n_b, sp.size, int(top), worker_scratch)
        for lo in range(per_chunk, len(lv[1]), 2 * per_chunk):
            _chunk(lo, st, lv, worker_scratch)
        return st.packed()

    with contextlib.ExitStack() as stack:
        pool = None
        for level in range(sp.n_boxes):                                      # loop over levels
            lv = level_live(level, probe=True)
            st = _Acc(kinds, n_b, sp.size, int(top), scratch)
            split = workers > 1 and len(lv[1]) > per_chunk
            if split:                      # the worker takes every other chunk
                if pool is None:           # forked once, at the first level with chunks to share
                    pool = stack.enter_context(ForkPool(1, worker_half, what="loss accounting"))
                pool.submit(0, level)
            for lo in range(0, len(lv[1]), 2 * per_chunk if split else per_chunk):
                _chunk(lo, st, lv, scratch)
            if split:
                st.merge(pool.gather()[0])
            for k in kinds:
                loss_kind[k] += st.loss_kind[k]
                opt_mass[k] += st.opt_mass[k]
                dec_mass[k] += st.dec_mass[k]
            by_box += st.by_box
            by_turn += st.by_turn
            strategy_score += st.score
            reach += st.reach_next
            for w_, rec in st.best.items():
                best.add(w_, rec)
            shown = st.shown
            report(f"accounting the losses of {strat.name} on {rules.key} (levels of filled boxes)",
                   level + 1, sp.n_boxes)
    optimal_score = float(values[sp.flat(0, 0, 0)])
    method = "exact, uniform average" if uniform else "exact"
    share = {k: (opt_mass[k] / dec_mass[k] if dec_mass[k] > 0 else math.nan) for k in kinds}
    return LossAccounting(rules, strat.name, method, optimal_score, strategy_score,
                          {k: float(v) for k, v in loss_kind.items()},
                          {rules.box_names[b]: float(by_box[b]) for b in range(n_b)},
                          by_turn, {k: float(v) for k, v in dec_mass.items()}, share, best.records(),
                          time.perf_counter() - t0)


def _position(rules, sp, turn, i, j, reach, loss, q, w, uniform, boxes, keep_idx, sub, sub_col,
              tie_order, level) -> dict:
    """The record of one position: (state, roll) row ``i`` of a chunk with ``j`` rolls left."""
    d = rules.dice
    n_r = d.n_rolls
    s, r = divmod(i, n_r)
    mask, u, flag = (int(a[s]) for a in turn.chunk)
    dice = d.roll_dice[r]
    row = s * n_r + r
    if j == 0:
        scores = turn.g_scores[turn.g_inv[s] * n_r + r]
        b_best = int(np.argmax(q[row]))
        best = _box_words(rules, b_best, int(scores[b_best]))
        choice = "a random box" if uniform else _box_words(rules, int(boxes[s, r]), int(scores[boxes[s, r]]))
    else:
        wp = np.concatenate([w[j][s], [-np.inf]])[sub_col[r]]
        order = tie_order[r]
        k_best = int(sub[r, order[int(np.argmax(wp[order]))]])
        best = _keep_words(d, k_best)
        choice = "a random keep" if uniform else _keep_words(d, int(keep_idx[j][s, r]))
    return {"points_per_game": reach * loss, "reach": reach, "loss": loss, "turn": level + 1,
            "card": _card_words(rules, mask), "upper": u if sp.cap else None,
            "five_box_full": bool(flag) if sp.n_flag == 2 else None,
            "dice": _dice_text(dice), "rolls_left": j, "choice": choice, "best": best}


# -- estimated from simulated games -----------------------------------------------------

class _LossMeter(Strategy):
    """Wraps a strategy, forwarding every decision, and measures each decision's exact
    loss against optimal play (one Bellman step from the optimal values of the state's
    next states, as in :func:`loss_accounting`). Per game: the losses of each kind, of the
    turns that filled each box, and of each turn; a batch starts at turn 0's first keep."""

    def __init__(self, inner: Strategy, values: np.ndarray, top: int):
        self.inner, self.values, self.name = inner, values, inner.name
        self.state_based = getattr(inner, "state_based", True)
        self.batches: list[dict] = []
        self.top = _Top(top)
        self.n_top = top

    def prepare(self, rules):
        from .space import state_space
        from .policy import _move_table

        super().prepare(rules)
        self.inner.prepare(rules)
        self.sp = state_space(rules)
        self.lattice = _Lattice(rules.dice)
        self.moves = _move_table(rules)
        self.kinds = kind_names(rules.n_rolls)
        return self

    def _tables(self, state, rolls):
        """Optimal values of this turn for the batch's distinct states: (rows' state index,
        z {rolls left: (S, R)}, w {rolls left: (S, K)}, q (S, R, B))."""
        key = (id(state), state.turn)
        if getattr(self, "_key", None) == key:
            return self._cache
        mask, u, flag = self.sp.index(state.filled, state.upper_total, state.five_box_full)
        self._key, self._cache = key, self._compute(mask, u, flag)
        self._hold = state                     # the id stays this state's while cached
        return self._cache

    def _compute(self, mask, u, flag):
        from .policy import EvalChunk

        rules, sp = self.rules, self.sp
        flat = sp.flat(mask, u, flag)
        uniq, first, inv = np.unique(flat, return_index=True, return_inverse=True)
        m, uu, f = mask[first], u[first], flag[first]
        turn = EvalChunk(rules, sp, m, uu, f)
        move_of, m_box, m_pts = self.moves
        nxt_m, ug_m = move_steps(rules, sp, m, uu, f, m_box, m_pts)
        a_m = ug_m + self.values[nxt_m]
        n_r, n_b, c = rules.dice.n_rolls, rules.n_boxes, len(m)
        n_g = len(turn.g_first)
        g_legal = turn.g_legal.reshape(n_g, n_r, n_b)[turn.g_inv]
        pts = (turn.g_scores + turn.g_bonus[:, None]).astype(np.float64).reshape(n_g, n_r, n_b)[turn.g_inv]
        mv = np.take(move_of, turn.g_scores + (np.arange(n_b) * move_of.shape[1])[None, :]
                     ).reshape(n_g, n_r, n_b)[turn.g_inv].reshape(c, -1)
        q = pts + np.take_along_axis(a_m, mv, axis=1).reshape(c, n_r, n_b)
        q[~g_legal] = -np.inf
        z = {0: q.max(axis=2)}
        w = {}
        for j in range(1, rules.n_rolls):
            w[j] = self.lattice.keep_values(z[j - 1])
            z[j] = self.lattice.best_subkeep(w[j])
        return inv.reshape(-1), z, w, q, uniq

    def _record(self, state, rolls, j, loss, choice):
        rec = self.batches[-1]
        kind = self.kinds[self.rules.n_rolls - 1 - j]
        rec["kind"][kind] += loss
        rec["turn_loss"] += loss
        rec["optimal"][kind] += loss <= OPTIMAL_TOL
        if self.n_top:
            inv, z, w, q, uniq = self._cache
            rec["positions"].append((uniq[inv], np.asarray(rolls), np.full(len(rolls), j),
                                     np.asarray(choice), loss, np.full(len(rolls), state.turn)))

    def keep(self, state, rolls, rolls_left, u):
        keeps = self.inner.keep(state, rolls, rolls_left, u)
        if rolls_left == self.rules.n_rolls - 1 and state.turn == 0:
            n, n_b = len(rolls), self.rules.n_boxes
            self.batches.append({"kind": {k: np.zeros(n) for k in self.kinds},
                                 "optimal": {k: np.zeros(n) for k in self.kinds},
                                 "box": np.zeros((n, n_b)), "turn": np.zeros((n, n_b)),
                                 "turn_loss": np.zeros(n), "positions": []})
        k = np.asarray(keeps)
        if k.shape == np.shape(rolls) and k.dtype.kind in "iu":   # else the engine refuses it
            inv, z, w, q, _ = self._tables(state, rolls)
            kk = np.clip(k, 0, self.rules.dice.n_keeps - 1).astype(np.intp)
            loss = z[rolls_left][inv, rolls] - w[rolls_left][inv, kk]
            self._record(state, rolls, rolls_left, loss, kk)
        return keeps

    def announce(self, state, rolls, u):  # pragma: no cover - announcing games are refused
        return self.inner.announce(state, rolls, u)

    def box(self, state, rolls, options, u):
        boxes = self.inner.box(state, rolls, options, u)
        b = np.asarray(boxes)
        if b.shape == np.shape(rolls) and b.dtype.kind in "iu" and ((b >= 0) & (b < self.rules.n_boxes)).all():
            inv, z, w, q, _ = self._tables(state, rolls)
            loss = z[0][inv, rolls] - q[inv, rolls, b]
            loss = np.where(np.isfinite(loss), loss, 0.0)       # an illegal box: the engine refuses it
            self._record(state, rolls, 0, loss, b)
            rec = self.batches[-1]
            rows = np.arange(len(b))
            rec["box"][rows, b] += rec["turn_loss"]
            rec["turn"][:, state.turn] += rec["turn_loss"]
            rec["turn_loss"] = np.zeros(len(b))
        return boxes


def estimate_losses(rules: str | RuleSet, strategy: str | Strategy, games: int = 10_000, *, options=(),
                    seed=None, solution=None, top: int = TOP_POSITIONS, progress=None) -> LossAccounting:
    """The loss accounting of a strategy that is not exactly evaluable (it looks at more
    than the card and the dice, or is randomized), estimated from simulated games: every
    decision met in ``games`` games gets its exact loss against optimal play, and the
    per-game sums are averaged, with 95% t intervals in ``half_width``.

    ``method`` is ``"simulated (N games)"``; ``strategy_score`` is the mean of the games
    played (``half_width["strategy_score"]``), ``accounted`` the mean loss per game
    (``half_width["accounted"]``), an estimate of the gap with much less noise than
    optimal's value minus the simulated mean. Costliest positions: the positions met,
    weighted by how often they were met per game.

    >>> est = estimate_losses("yacht", "target:T=100", 2000, options=["fill-in-order"], seed=1)
    >>> est.method, bool(est.half_width["accounted"] < 1)
    ('simulated (2,000 games)', True)
    """
    from ..engine import SEED_BLOCK, seed_entropy
    from ..runner import run_chunks
    from .space import require_solvable
    from .solver import solve

    rules = get_rules(rules, options)
    n = whole_number(games, "games", low=2)     # 2 at least: an interval needs them
    require_solvable(rules, "loss accounting (it needs optimal play's values)")
    if rules.roll_dependent or rules.announces or rules.banked_throws:
        raise ValueError(f"loss accounting does not cover {rules.key}: its turns have more to them than "
                         f"the card, the dice and the rolls left (served dice, announcements or saved "
                         f"throws)")
    t0 = time.perf_counter()
    if solution is None:
        solution = solve(rules, dtype=np.float64, progress=progress)
    strat = get_strategy(strategy)
    meter = _LossMeter(strat, solution.values.reshape(-1), int(top))
    # the simulator's own chunked run (what simulate() does), the meter as the strategy
    run = run_chunks("games", rules, meter.prepare(rules), n,
                     entropy=None if seed is None else seed_entropy(seed), chunk_blocks=max(1, 65536 // SEED_BLOCK),
                     keep_games=True, progress=progress if progress is not None else False)
    kinds = kind_names(rules.n_rolls)
    per_kind = {k: np.concatenate([b["kind"][k] for b in meter.batches]) for k in kinds}
    opt = {k: np.concatenate([b["optimal"][k] for b in meter.batches]) for k in kinds}
    by_box = np.concatenate([b["box"] for b in meter.batches])
    by_turn = np.concatenate([b["turn"] for b in meter.batches])
    total = sum(per_kind.values())
    scores = np.asarray(run.rows["total"], dtype=np.float64)

    def hw(x):
        from scipy import stats

        return float(stats.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / math.sqrt(len(x)))

    half = {"accounted": hw(total), "strategy_score": hw(scores)}
    half.update({k: hw(v) for k, v in per_kind.items()})
    positions = _top_met(rules, meter, n, int(top))
    return LossAccounting(rules, strat.name, f"simulated ({n:,} games)", float(solution.mean),
                          float(scores.mean()), {k: float(v.mean()) for k, v in per_kind.items()},
                          {rules.box_names[b]: float(by_box[:, b].mean()) for b in range(rules.n_boxes)},
                          by_turn.mean(axis=0), {k: float(rules.n_boxes) for k in kinds},
                          {k: float(v.mean() / rules.n_boxes) for k, v in opt.items()}, positions,
                          time.perf_counter() - t0, half)


def _top_met(rules, meter, n, top) -> list:
    """The costliest positions met: each distinct (state, roll, rolls left, choice) once,
    weighted by how often it was met per game."""
    if not top:
        return []
    parts = [p for b in meter.batches for p in b["positions"]]
    if not parts:
        return []
    flat, roll, j, choice, loss, turn = (np.concatenate([p[i] for p in parts]) for i in range(6))
    bad = loss > OPTIMAL_TOL
    if not bad.any():
        return []
    flat, roll, j, choice, loss, turn = (a[bad] for a in (flat, roll, j, choice, loss, turn))
    key = np.stack([flat, roll, j, choice], axis=1)
    uniq, first, count = np.unique(key, axis=0, return_index=True, return_counts=True)
    cost = count / n * loss[first]
    order = np.argsort(-cost, kind="stable")[:top]
    sp, d = meter.sp, rules.dice
    out = []
    for i in order:
        f = int(uniq[i, 0])
        rest, flag = divmod(f, sp.n_flag)
        mask, u = divmod(rest, sp.n_u)
        r, jj, ch = int(uniq[i, 1]), int(uniq[i, 2]), int(uniq[i, 3])
        filled = _bits(mask, rules.n_boxes)
        inv, z, w, q, _ = meter._compute(np.array([mask]), np.array([u]), np.array([flag]))
        if jj == 0:
            sc = q[0, r]
            b_best = int(np.argmax(sc))
            pts = rules.turn_options(filled[None, :], np.array([bool(flag)]), np.array([r]))[1][0]
            choice, best = _box_words(rules, ch, int(pts[ch])), _box_words(rules, b_best, int(pts[b_best]))
        else:
            subs = d.subkeeps[r][d.subkeeps[r] >= 0]
            subs = subs[np.argsort(-d.keep_size[subs], kind="stable")]
            k_best = int(subs[int(np.argmax(w[jj][0, subs]))])
            choice, best = _keep_words(d, ch), _keep_words(d, k_best)
        reach = float(count[i] / n)
        out.append({"points_per_game": float(cost[i]), "reach": reach, "loss": float(loss[first[i]]),
                    "turn": int(turn[first[i]]) + 1, "card": _card_words(rules, mask),
                    "upper": u if sp.cap else None, "five_box_full": bool(flag) if sp.n_flag == 2 else None,
                    "dice": _dice_text(d.roll_dice[r]), "rolls_left": jj, "choice": choice, "best": best})
    return out


def _bits(mask: int, n: int) -> np.ndarray:
    return np.array([(mask >> b) & 1 for b in range(n)], dtype=bool)
