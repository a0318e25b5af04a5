"""Decision tables: optimal play as a lookup, built once from the value tables.

For every reachable turn-start state (the solver's states: filled boxes, upper
total class, five-box flag) and every roll, the table holds

* ``keeps[j]`` (S, R) uint8: the keep with ``j`` rerolls left, as a position in
  :func:`sub_keep_order` (the roll's sub-keeps, largest first);
* ``boxes`` (S, R) uint8: the box for each final roll;
* ``served_boxes`` (S, R) uint8, only for rule sets with served combinations
  (Generala): the box when the final dice are still the first throw's.

The decisions are the ones the value-table strategies make one batch at a time
(:class:`~yahtzee_sim.strategies.optimal.OptimalStrategy`): the keep is the
argmax over the sub-keeps of the same one-turn widget
(:func:`~yahtzee_sim.exact.space.turn_values` with ``plan=True``, or
:func:`~yahtzee_sim.exact.risk.risk_turn`), ties to the larger keep; the box is
the legal box with the largest ``gain + value(next state)`` from
:meth:`RuleSet.turn_options` (first box on ties). Upper totals of one class share
a row (they are told apart by no decision): ``row_of`` maps every dense state to
its row, ``-1`` where no game can be.

Tables are cached on disk next to the solver's (:mod:`yahtzee_sim.exact.cache`),
keyed by the rule set and a SHA-256 of the value table they come from. The optimal
table is stored as it is, to be memory-mapped; a risk strategy's is stored
compressed (:data:`COMPRESSED_KINDS`: ``yahtzee``'s 238 MB take 7 to 12 MB, and it
needs no other file), expanded once into shared memory when read, where every
process of a run maps it (:func:`~yahtzee_sim.exact.cache.read`). A loaded
table must have the right shapes and valid entries, and a few random rows are
recomputed and compared (a damaged or forged file is rebuilt with a one-line note).

Over 600 lines: the build, its NumPy forms (the reference its compiled loops are
tested against) and the cache checks that recompute rows with them share one set of
private helpers; split, they would cross module lines in both directions.

>>> from yahtzee_sim.exact.solver import solve
>>> sol = solve("yacht-classic", cache=False)
>>> t = decision_table(sol, cache=False)
>>> t.n_states == sol.space.n_states, t.keeps[1].shape[1], t.keeps[2].dtype.name
(True, 252, 'uint8')
>>> row = int(t.row_of[sol.space.flat(0, 0, 0)])            # the fresh card
>>> yacht = sol.rules.dice.roll_index_of([6, 6, 6, 6, 6])
>>> int(t.keeps[2][row, yacht]), sol.rules.box_names[t.boxes[row, yacht]]   # hold all five
(0, 'yacht')
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from dataclasses import dataclass

import numpy as np

from ..rules import RuleSet
from ..tableplay import PlayTable
from . import cache as _cache
from .space import StateSpace, state_space, turn_model, turn_values
from ..validate import whole_number

__all__ = ["DecisionTable", "decision_table", "table_of_values", "sub_keep_order", "table_bytes", "precompile",
           "RowDecisions", "row_decisions", "MAX_TABLE_BYTES", "COMPRESSED_KINDS",
           "DECISIONS_VERSION", "decisions_cache_path"]

DECISIONS_VERSION = 1
"""Bump when the tables' meaning or layout change (invalidates caches)."""

CHUNK = 512
"""States decided at once (memory: about 70 kB per state)."""

PLAUSIBILITY_ROWS = 16
"""Random rows recomputed and compared when a cached table is loaded."""

COMPRESSED_KINDS = ("risk",)
"""Kinds of table stored deflated. On ``yahtzee`` (benchmarks/risk_tables.py) a risk table takes 10.1
MB of its 238 at theta 0.02 (0.6 CPU s to expand), less than its difference against the optimal table
(12% of the decisions differ: 59 MB, 13.6 deflated); the optimal table stays mapped from its file."""

MAX_TABLE_BYTES = 1 << 30
"""Largest decision table built (states x rolls x decisions bytes): yatzy's takes 635 MB;
Maxi Yatzy without saved throws would take about 40 GB, and its strategies decide
from the widget instead."""

_MEMO: dict = {}


def table_bytes(rules: RuleSet) -> int:
    """Bytes the decision table of ``rules`` would take (without the state -> row map).

    >>> from yahtzee_sim.rules import get_rules
    >>> table_bytes(get_rules("yahtzee")) == 314_876 * 252 * 3     # states x rolls x 3 decisions
    True
    """
    space = state_space(rules)
    per_roll = rules.n_rolls - 1 + 1 + (1 if rules.roll_dependent else 0)
    return space.n_states * rules.dice.n_rolls * per_roll


def sub_keep_order(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """``(sub_keep, sub_pos)`` (R, S): each roll's sub-keeps, largest keep first, as
    keep indices (-1 padding) and as widget positions (padding: ``n_keeps``, a column
    the callers fill with -inf). Position 0 is the whole roll held.

    The order is the tie rule: an argmax over it prefers the keep with more dice.

    >>> from yahtzee_sim.rules import get_rules
    >>> r = get_rules("yahtzee")
    >>> sub, pos = sub_keep_order(r)
    >>> bool((sub[:, 0] == r.dice.roll_keep_index).all()), sub.shape
    (True, (252, 32))
    """
    from ._solver_lattice import lattice

    d = rules.dice
    lat = lattice(d)
    sub = d.subkeeps[:, ::-1].astype(np.int64)
    order = np.argsort(sub < 0, axis=1, kind="stable")
    sub = np.take_along_axis(sub, order, axis=1)
    pos = np.where(sub >= 0, lat.pos_of_keep[np.maximum(sub, 0)], lat.n_keeps)
    return sub, pos


@dataclass(frozen=True, eq=False)
class DecisionTable(PlayTable):
    """Optimal decisions of every reachable state and roll (see the module docstring).

    One format with the engine's: a :class:`~yahtzee_sim.tableplay.PlayTable` (its
    ``row_of``, ``n_u``, ``n_flag``, ``keeps``, ``boxes``, ``served_boxes`` and
    ``sub_keep``, plain arrays: the simulator plays by this very object) with where it
    came from: ``kind`` is ``"mean"`` (the solver's optimum) or ``"risk"`` (``theta``
    set); ``seconds`` the build time (0 when loaded), ``cache`` as the solver's
    (``"off"``, ``"miss"``, ``"hit"``, ``"memory"``, ``"damaged"``), ``cache_note``
    one line on a refused file or a table that could not be stored.
    """

    rules: RuleSet
    kind: str
    theta: float
    seconds: float = 0.0
    cache: str = "off"
    cache_note: str = ""
    path: str | None = None
    file_id: tuple | None = None                 # the cache file's identity once verified

    def __repr__(self) -> str:        # not the arrays
        return (f"DecisionTable(rules={self.rules.key!r}, kind={self.kind!r}, theta={self.theta!r}, "
                f"seconds={self.seconds!r}, cache={self.cache!r})")

    @property
    def n_states(self) -> int:
        return len(self.boxes)

    @property
    def nbytes(self) -> int:
        """Bytes the table holds in memory (decisions and the state -> row map)."""
        parts = [a for a in self.keeps if a is not None] + [self.boxes, self.row_of]
        if self.served_boxes is not None:
            parts.append(self.served_boxes)
        return int(sum(a.nbytes for a in parts))


# -- building ---------------------------------------------------------------------------
def _states(space: StateSpace):
    """Every solved turn-start state (mask, u, flag), level by level, and the map
    from each dense state to its row."""
    row_of = np.full(space.size, -1, dtype=np.int32)
    dense = row_of.reshape(-1, space.n_u, space.n_flag)
    parts = []
    start = 0
    for level in range(space.n_boxes):
        (m, u, f), (g_start, g_mask, g_flag, g_sub) = space.level_states(space.level_masks[level])
        cls = space.cls_idx[g_sub]                              # (G, n_u)
        rows = np.where(cls >= 0, start + g_start[:, None] + np.maximum(cls, 0), -1)
        dense[g_mask[:, None], np.arange(space.n_u)[None, :], g_flag[:, None]] = rows
        parts.append((m, u, f))
        start += len(m)
    m, u, f = (np.concatenate([p[i] for p in parts]) for i in range(3))
    row_of.setflags(write=False)
    return (m, u, f), row_of


def _keep_picks(keep_values: np.ndarray, lat, roll_sub_pos: np.ndarray, compiled: bool = True) -> np.ndarray:
    """(U, R) uint8: per roll, the position in :func:`sub_keep_order` of the first
    maximum of (K, U) solver-order keep values over the roll's sub-keeps.

    The sub-keeps are listed by falling keep index, so the first maximum is the
    largest (value, keep index) pair; that maximum is taken up the keep lattice (the
    sweep of the widget's own ``best_subkeep_mean``, carrying the keep index), which
    gives the same pick as an argmax over each roll's list, in a third of the work.
    ``compiled=False``: in NumPy even where the loop is compiled (the same picks).
    """
    kx = _kernels() if compiled else None
    if kx is not None:
        from ._solver_lattice import sweep_pairs

        child, parent, roll_pos = sweep_pairs(lat)
        keep_at = lat.keep_at.astype(np.int64)
        out = np.empty((keep_values.shape[1], len(roll_pos)), dtype=np.uint8)
        if not kx.keep_sweep(np.ascontiguousarray(keep_values), keep_at, child, parent, roll_pos,
                             np.ascontiguousarray(roll_sub_pos, dtype=np.int16), out):
            raise RuntimeError("decisions: a keep value is NaN")     # pragma: no cover
        return out
    if np.isnan(keep_values).any():     # pragma: no cover - the widget evaluates every keep
        raise RuntimeError("decisions: a keep value is NaN")
    x = keep_values.copy()
    best = np.broadcast_to(lat.keep_at.astype(np.int16)[:, None], x.shape).copy()
    for s in range(1, lat.n_dice + 1):
        lo = lat.level_slices[s].start
        for n_j, par in lat.parent_slots[s]:
            cur, cur_k = x[lo:lo + n_j], best[lo:lo + n_j]
            cand, cand_k = x[par], best[par]
            better = (cand > cur) | ((cand == cur) & (cand_k > cur_k))
            np.copyto(cur, cand, where=better)
            np.copyto(cur_k, cand_k, where=better)
    rb = lat.level_slices[lat.n_dice]
    keep = best[rb.start + lat.pos_of_roll]                         # (R, U) keep index
    return roll_sub_pos[np.arange(len(keep))[:, None], keep].T.astype(np.uint8)


KERNELS = "numba"
"""``"numba"``: the build's two inner loops compiled (:mod:`._decision_kernels`, the same
table byte for byte); ``"numpy"``: in NumPy."""


def _kernels():
    """The compiled loops, or None (switched off, or numba missing)."""
    if KERNELS != "numba":
        return None
    try:
        from . import _decision_kernels
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    return _decision_kernels


def precompile() -> None:
    """Compile (or load from numba's cache) the build's loops: before its workers fork,
    or ahead of a build that comes later (a command doing other work meanwhile).

    >>> precompile()
    """
    kx = _kernels()
    if kx is not None:
        z = np.zeros(1, np.int64)
        kx.keep_sweep(np.zeros((2, 1), np.float32), np.zeros(2, np.int64), z, z, z,     # the mean widget's
                      np.zeros((1, 2), np.int16), np.zeros((1, 1), np.uint8))
        i1, i2 = np.zeros(1, np.int64), np.zeros((1, 1), np.int64)
        values = np.zeros(1)
        values.flags.writeable = False          # as _box_picks_compiled passes them
        kx.box_picks(i1, i1, i1, i1, values, 1, i1, i1, np.zeros((1, 1), np.int16), i2,
                     np.zeros((1, 1), np.bool_), i2, i1, i1, np.zeros((1, 1, 1), np.bool_),
                     np.zeros((1, 1, 1), np.int16), np.zeros((1, 1), np.int16), np.zeros((1, 1), np.uint8))


def _box_picks_generic(rules: RuleSet, space: StateSpace, values: np.ndarray, m, u, f, rolls,
                       throws=None):
    """(U, len(rolls)) uint8: the legal box with the largest ``gain + value(next)`` of each
    final roll (first box on ties), every option from :meth:`RuleSet.turn_options`: the
    arithmetic of the strategies' ``box``, on (U * rolls, B) arrays."""
    from ..strategy import best_legal

    n, r = len(m), len(rolls)
    bits = np.int64(1) << np.arange(space.n_boxes, dtype=np.int64)
    filled = np.repeat((m[:, None] & bits) != 0, r, axis=0)
    thr = None if throws is None else np.full(n * r, throws, dtype=np.int8)
    legal, sc, bonus = rules.turn_options(filled, np.repeat(f, r).astype(bool), np.tile(rolls, n),
                                          throws=thr)
    urep = np.repeat(u, r).astype(np.int16)
    gain = sc + rules.upper_bonus_gain(urep, sc) + bonus[:, None]
    nxt = space.next_flat(np.repeat(m, r), urep, np.repeat(f, r), sc)
    return best_legal(gain + values[nxt], legal).reshape(n, r).astype(np.uint8)


@dataclass(frozen=True, eq=False)
class _BoxContext:
    """What the compiled box picks of many chunks share (:func:`_box_context`): the (box,
    points) pairs, their gain and next-state part per upper total, each roll's pair per box,
    and per case (filled boxes and flag) of the states it was made for, the open boxes and
    the five-of-a-kind rolls' options from ``turn_options``."""

    keys: np.ndarray            # (C,) sorted mask * n_flag + flag of each case
    box_of: np.ndarray          # (P,) the pair's box
    pair_bit: np.ndarray        # (P,) its bit in the mask
    gain: np.ndarray            # (n_u, P) int16 points + upper bonus gained from each total
    low: np.ndarray             # (n_u, P) next total * n_flag + the flag the pair sets
    col: np.ndarray             # (R, B) each roll's pair per box (its score table's points)
    legal: np.ndarray           # (C, B) open boxes per case
    regular: np.ndarray         # rolls priced by the score table
    specials: np.ndarray        # (Q,) the five-of-a-kind rolls
    s_legal: np.ndarray         # (C, Q, B) their legal boxes,
    s_pair: np.ndarray          # (C, Q, B) pairs
    s_bonus: np.ndarray         # (C, Q) and five-of-a-kind bonus, per case


def _box_context(rules: RuleSet, space: StateSpace, m, f, throws=None) -> _BoxContext:
    """The :class:`_BoxContext` of the states with masks ``m`` and flags ``f`` (the build
    makes one for all its states before its workers fork; a chunk looks its cases up).

    The five-of-a-kind rolls' options come from :meth:`RuleSet.turn_options` itself, once
    per case rather than once per state (they depend on the filled boxes and the flag,
    not on the upper total), and their points join the pairs.

    >>> from yahtzee_sim.rules import get_rules
    >>> r = get_rules("yahtzee")
    >>> sp = state_space(r)
    >>> ctx = _box_context(r, sp, np.array([0, 0]), np.array([0, 1]))
    >>> len(ctx.keys), ctx.s_legal.shape, int(ctx.s_bonus[1, 0])    # a Yahtzee scored: +100
    (2, (2, 6, 13), 100)
    """
    nf, n_b, n_u = space.n_flag, space.n_boxes, space.n_u
    keys = np.unique(np.asarray(m, dtype=np.int64) * nf + np.asarray(f, dtype=np.int64))
    cm, cf = keys // nf, keys % nf
    bits = np.int64(1) << np.arange(n_b, dtype=np.int64)
    filled = (cm[:, None] & bits) != 0
    legal = rules.legal_boxes(filled)
    table = rules.score_tables[0 if throws == 1 else -1] if rules.roll_dependent else rules.score_table
    table = table.astype(np.int64)
    specials = _special_rolls(rules)
    n_c, n_q = len(keys), len(specials)
    if n_q:
        thr = None if throws is None else np.full(n_c * n_q, throws, dtype=np.int8)
        s_legal, s_sc, s_bonus = rules.turn_options(np.repeat(filled, n_q, axis=0),
                                                    np.repeat(cf, n_q).astype(bool),
                                                    np.tile(specials, n_c), throws=thr)
        s_sc = np.where(s_legal, s_sc, 0).astype(np.int64)
    else:
        s_legal = np.zeros((0, n_b), dtype=bool)
        s_sc = np.zeros((0, n_b), dtype=np.int64)
        s_bonus = np.zeros(0, dtype=np.int16)
    # the pairs: each box's own distinct points (Chance's 26 do not make Ones' 6 be
    # evaluated 26 times), with the points the five-of-a-kind options pay
    pts = [np.unique(np.concatenate([table[:, j], s_sc[s_legal[:, j], j]])) for j in range(n_b)]
    box_of = np.concatenate([np.full(len(p), j, dtype=np.int64) for j, p in enumerate(pts)])
    pts_of = np.concatenate(pts)
    first = np.cumsum([0] + [len(p) for p in pts[:-1]]).astype(np.int64)
    col = np.stack([first[j] + np.searchsorted(pts[j], table[:, j]) for j in range(n_b)], axis=1)
    n_p = len(box_of)
    if n_p >= np.iinfo(np.int16).max:     # pragma: no cover - a few hundred on every card
        raise ValueError(f"the decision table of {rules.key} has too many (box, points) pairs")
    s_pair = np.stack([first[j] + np.searchsorted(pts[j], s_sc[:, j]) for j in range(n_b)], axis=1)
    s_pair = np.where(s_legal, s_pair, 0)
    # per upper total: the pair's points plus the bonus it crosses, and the next total and flag
    totals = np.arange(n_u, dtype=np.int64)
    scores = np.zeros((n_u * n_p, n_b), dtype=np.int16)
    scores[np.arange(n_u * n_p), np.tile(box_of, n_u)] = np.tile(pts_of, n_u)
    ubg = rules.upper_bonus_gain(np.repeat(totals, n_p), scores)[np.arange(n_u * n_p), np.tile(box_of, n_u)]
    gain = (pts_of[None, :] + ubg.reshape(n_u, n_p)).astype(np.int16)
    up = rules.is_upper[box_of]
    low = np.minimum(totals[:, None] + np.where(up, pts_of, 0)[None, :], space.cap) * nf
    if nf == 2:
        low |= ((box_of == rules.five_box_index) & (pts_of > 0)).astype(np.int64)[None, :]
    regular = np.setdiff1d(np.arange(rules.dice.n_rolls), specials).astype(np.int64)
    return _BoxContext(keys=keys, box_of=box_of, pair_bit=bits[box_of], gain=gain, low=low.astype(np.int64),
                       col=col.astype(np.int64), legal=np.ascontiguousarray(legal), regular=regular,
                       specials=specials.astype(np.int64),
                       s_legal=np.ascontiguousarray(s_legal.reshape(n_c, n_q, n_b)),
                       s_pair=s_pair.reshape(n_c, n_q, n_b).astype(np.int16),
                       s_bonus=np.asarray(s_bonus, dtype=np.int16).reshape(n_c, n_q))


def _box_picks_compiled(kx, space: StateSpace, values: np.ndarray, m, u, f, ctx: _BoxContext) -> np.ndarray:
    """:func:`_box_picks` by the compiled loop (:func:`._decision_kernels.box_picks`)."""
    m, u, f = (np.ascontiguousarray(a, dtype=np.int64) for a in (m, u, f))
    key = m * space.n_flag + f
    case = np.searchsorted(ctx.keys, key)
    if (case >= len(ctx.keys)).any() or (ctx.keys[np.minimum(case, len(ctx.keys) - 1)] != key).any():
        raise RuntimeError("decisions: a state outside its box context")     # pragma: no cover
    out = np.empty((len(m), ctx.col.shape[0]), dtype=np.uint8)
    values = values.view()
    values.flags.writeable = False      # one compiled signature, whether the solve's table is mapped or not
    kx.box_picks(m, u, f, case.astype(np.int64), values, space.n_u * space.n_flag, ctx.box_of, ctx.pair_bit,
                 ctx.gain, ctx.low, ctx.legal, ctx.col, ctx.regular, ctx.specials, ctx.s_legal, ctx.s_pair,
                 ctx.s_bonus, out)
    return out


def _box_picks(rules: RuleSet, space: StateSpace, values: np.ndarray, m, u, f, throws=None, ctx=None,
               compiled: bool = True):
    """(U, R) uint8 as :func:`_box_picks_generic` for every roll, with the same numbers
    assembled per state: outside the rolls ``turn_options`` treats specially (five of a
    kind: jokers, bonuses, boxes paying after a Generala) a box's points are its score
    table's, so ``gain + value(next)`` depends on the state and the box's points only,
    and is computed once per distinct points of each box, then looked up per roll.

    Compiled (:data:`KERNELS`): one loop per chunk, the five-of-a-kind rolls' options
    taken per case from ``ctx`` (:func:`_box_context`; made here for these states if
    None). In NumPy (also with ``compiled=False``): per chunk, those rolls by
    :func:`_box_picks_generic`."""
    kx = _kernels() if compiled else None
    if kx is not None:
        if ctx is None:
            ctx = _box_context(rules, space, m, f, throws)
        return _box_picks_compiled(kx, space, np.ascontiguousarray(values, dtype=np.float64), m, u, f, ctx)
    table = rules.score_tables[0 if throws == 1 else -1] if rules.roll_dependent else rules.score_table
    table = table.astype(np.int64)
    n, r, b = len(m), rules.dice.n_rolls, space.n_boxes
    pts = [np.unique(table[:, j]) for j in range(b)]
    # one column per (box, distinct points) pair: each box's own points only (Chance's 26
    # do not make Ones' 6 be evaluated 26 times)
    box_of = np.concatenate([np.full(len(p), j, dtype=np.int64) for j, p in enumerate(pts)])
    pts_of = np.concatenate(pts).astype(np.int16)
    first = np.cumsum([0] + [len(p) for p in pts[:-1]])
    col = np.stack([first[j] + np.searchsorted(pts[j], table[:, j]) for j in range(b)], axis=1)  # (R, B)
    n_pairs = len(box_of)
    u16 = u.astype(np.int16)
    gain = np.broadcast_to(pts_of, (n, n_pairs)).astype(np.int16)
    if rules.upper_bonus:     # the upper bonus crossed: by the i-th distinct points of every box
        upper = np.flatnonzero(rules.is_upper[box_of])
        rank = np.arange(n_pairs) - first[box_of]       # the pair's place among its box's points
        for i in range(int(rank[upper].max()) + 1):
            sc = np.array([p[min(i, len(p) - 1)] for p in pts], dtype=np.int16)
            ubg = rules.upper_bonus_gain(u16, np.broadcast_to(sc, (n, b)))
            here = upper[rank[upper] == i]
            gain[:, here] += ubg[:, box_of[here]]
    nxt = space.next_flat(np.repeat(m, n_pairs), np.repeat(u16, n_pairs), np.repeat(f, n_pairs),
                          np.tile(pts_of, n), boxes=np.tile(box_of, n)).reshape(n, n_pairs)
    bits = np.int64(1) << np.arange(b, dtype=np.int64)
    legal = rules.legal_boxes((m[:, None] & bits) != 0)
    worth = np.where(legal[:, box_of], gain + values[nxt], -np.inf).T.copy()    # (pairs, U)
    pick = np.zeros((r, n), dtype=np.uint8)             # the first maximum, box by box
    best = worth[col[:, 0]]                             # (R, U) rows: roll by roll
    for j in range(1, b):
        cand = worth[col[:, j]]
        better = cand > best
        np.copyto(best, cand, where=better)
        np.copyto(pick, np.uint8(j), where=better)
    out = pick.T.copy()
    special = _special_rolls(rules)
    if len(special):
        out[:, special] = _box_picks_generic(rules, space, values, m, u, f, special, throws)
    return out


def _special_rolls(rules: RuleSet) -> np.ndarray:
    """Rolls whose options :meth:`RuleSet.turn_options` may change beyond the score table
    and the fill order: the five-of-a-kind rolls of a rule set with a five-of-a-kind box."""
    if rules.five_box is None:
        return np.zeros(0, dtype=np.intp)
    return np.flatnonzero(rules.five_face > 0)


_ROLL_SUB_POS: dict = {}


def _roll_sub_pos(rules: RuleSet) -> np.ndarray:
    """(R, K) position of each keep in each roll's :func:`sub_keep_order` (-1: not a sub-keep;
    shared: not to be written). It depends on the dice alone: made once per dice table, not
    once per chunk of a build (615 chunks of ``yahtzee``: 0.09 CPU s). Left writable: the
    keep sweep's one compiled signature takes a writable array."""
    out = _ROLL_SUB_POS.get(rules.dice)
    if out is None:
        sub, _ = sub_keep_order(rules)
        out = np.full((rules.dice.n_rolls, rules.dice.n_keeps), -1, dtype=np.int16)
        r, j = np.nonzero(sub >= 0)
        out[r, sub[r, j]] = j
        _ROLL_SUB_POS[rules.dice] = out
    return out


def _box_contexts(rules, space, m, f, served):
    """The :func:`_box_context` of the boxes and of the served boxes (None without the
    compiled loops, or without served combinations)."""
    if _kernels() is None:
        return None, None
    return (_box_context(rules, space, m, f, throws=2 if served else None),
            _box_context(rules, space, m, f, throws=1) if served else None)


def _decide(rules, space, values, plan_values, m, u, f, served, ctxs=(None, None), compiled: bool = True):
    """Decisions of one chunk of states: keeps per rerolls left, boxes, served boxes
    (``ctxs``: :func:`_box_contexts` of states these are among, or made here).
    ``compiled=False``: every step in NumPy (the same decisions; for a few states, no
    compiled loop to load: a cached table's check)."""
    from ._solver_lattice import lattice

    lat, roll_sub_pos = lattice(rules.dice), _roll_sub_pos(rules)
    kv = plan_values(m, u, f, compiled=False) if not compiled and _takes_compiled(plan_values) \
        else plan_values(m, u, f)
    keeps = [None] + [_keep_picks(kv[j], lat, roll_sub_pos, compiled) for j in range(1, rules.n_rolls)]
    boxes = _box_picks(rules, space, values, m, u, f, throws=2 if served else None, ctx=ctxs[0],
                       compiled=compiled)
    sboxes = _box_picks(rules, space, values, m, u, f, throws=1, ctx=ctxs[1], compiled=compiled) if served \
        else None
    return keeps, boxes, sboxes


def _takes_compiled(plan_values) -> bool:
    """Whether a planner takes ``compiled`` (the built-in ones do; a caller's own planner of
    three arguments, as :func:`table_of_values` took before, is asked as it was)."""
    import inspect

    try:
        return "compiled" in inspect.signature(plan_values).parameters
    except (TypeError, ValueError):     # pragma: no cover - a callable without a signature
        return False


def _build_part(rules, space, values, plan_values, served, chunk, states, out, ctxs, part, n_parts,
                on_chunk=None):
    """Decide chunks part, part + n_parts, ... of the states into ``out`` (keeps, boxes, sboxes)."""
    m, u, f = states
    keeps, boxes, sboxes = out
    n = len(m)
    for lo in range(part * chunk, n, n_parts * chunk):
        hi = min(lo + chunk, n)
        k, b, sb = _decide(rules, space, values, plan_values, m[lo:hi], u[lo:hi], f[lo:hi], served, ctxs)
        for j in range(1, rules.n_rolls):
            keeps[j][lo:hi] = k[j]
        boxes[lo:hi] = b
        if served:
            sboxes[lo:hi] = sb
        if on_chunk is not None:
            on_chunk(min(hi * n_parts, n))       # all parts go at one pace


MIN_STATES_FOR_WORKERS = 20_000
"""Smaller tables are built in one process (forking costs more than it saves)."""


def _build(rules: RuleSet, values: np.ndarray, plan_values, served: bool, chunk: int, progress,
           phase: str, jobs: int | None = None):
    """The table's arrays; with ``jobs`` > 1 (default: the solver's, at most 2 cores)
    forked processes decide stripes of the states into shared memory: each state's
    decisions are its own, so the table is the same whatever the split."""
    from ..forkpool import default_jobs, fork_workers, run_parts, shared_array
    from ..progress import as_progress

    report = as_progress(progress)
    # the states, their rows, the box contexts and the compiled loops, made once here: the
    # forked builders inherit them
    rows = RowDecisions(rules, values, plan_values, served)
    m, u, f = rows.m, rows.u, rows.f
    n = len(m)
    r = rules.dice.n_rolls
    workers = fork_workers(default_jobs() if jobs is None else jobs, n, MIN_STATES_FOR_WORKERS)
    make = (lambda shape: shared_array(shape, np.uint8)) if workers > 1 else (lambda shape: np.empty(shape, dtype=np.uint8))
    keeps = [None] + [make((n, r)) for _ in range(1, rules.n_rolls)]
    boxes = make((n, r))
    sboxes = make((n, r)) if served else None
    out = (keeps, boxes, sboxes)
    report(phase, 0, n)
    args = (rules, rows.space, rows.values, plan_values, served, chunk, (m, u, f), out, rows.ctxs)
    run_parts(lambda part: _build_part(*args, part, workers,
                                       on_chunk=(lambda k: report(phase, k, n)) if part == 0 else None),
              workers, what="decision table builder")
    report(phase, n, n)
    return rows.row_of, tuple(keeps), boxes, sboxes


def _mean_planner(rules: RuleSet, values: np.ndarray):
    model = turn_model(rules, np.float32)     # the strategy's widget: float32, as it plays

    def plan_values(m, u, f, compiled=True):
        # the same keep values (the widget's floats: compiled, the NumPy path's operations)
        _, (kv, _) = turn_values(model, values, None, m, u, f, plan="keeps", compiled=compiled)
        return kv
    return plan_values, model.served


# -- caching ----------------------------------------------------------------------------
def _values_digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values).tobytes()).hexdigest()[:32]


def _meta(rules: RuleSet, kind: str, theta: float, values: np.ndarray) -> dict:
    from .solver import SOLVER_VERSION, rules_fingerprint

    return {"rules": rules.key, "fingerprint": rules_fingerprint(rules), "kind": kind, "theta": theta,
            "values_sha256": _values_digest(values), "solver_version": SOLVER_VERSION,
            "decisions_version": DECISIONS_VERSION}


def decisions_cache_path(rules: RuleSet, kind: str = "mean", theta: float = 0.0, cache_dir=None):
    """Where the decision table of ``rules`` (``kind`` "mean", or "risk" at ``theta``) is cached.

    >>> from yahtzee_sim.rules import get_rules
    >>> decisions_cache_path(get_rules("yatzy"), cache_dir="/tmp/c").name.startswith("yatzy-")
    True
    """
    from .solver import rules_fingerprint

    what = "decisions" if kind == "mean" else f"risk-theta{theta!r}-decisions"
    return _cache.table_path(rules.key, rules_fingerprint(rules), what, DECISIONS_VERSION, cache_dir)


def _check(rules: RuleSet, stored: dict, values, plan_values, served: bool, quick: bool = False):
    """The table of a cache file's arrays, or None and why they are not plausible
    (``quick``: a file this process or its parent verified, only its layout is checked)."""
    space = state_space(rules)
    (m, u, f), row_of = _states(space)
    n, r = len(m), rules.dice.n_rolls
    names = [f"keep_{j}" for j in range(1, rules.n_rolls)] + ["boxes"] + (["served_boxes"] if served else [])
    missing = [k for k in names if k not in stored]
    if missing:
        return None, f"lacks the arrays {', '.join(missing)}"
    for k in names:
        a = stored[k]
        if a.shape != (n, r) or a.dtype != np.uint8:
            return None, f"holds {k} of shape {a.shape} {a.dtype}, not {(n, r)} uint8"
    keeps = tuple([None] + [stored[f"keep_{j}"] for j in range(1, rules.n_rolls)])
    if quick:
        return (row_of, keeps, stored["boxes"], stored["served_boxes"] if served else None), ""
    n_sub = rules.dice.n_subkeeps.astype(np.int64)
    for j in range(1, rules.n_rolls):       # each roll's largest entry: no (states, rolls) temporary
        if (stored[f"keep_{j}"].max(axis=0) >= n_sub).any():
            return None, f"holds keep_{j} positions past a roll's sub-keeps"
    for k in names[rules.n_rolls - 1:]:
        if stored[k].max() >= rules.n_boxes:
            return None, f"holds {k} past the last box"
    rng = np.random.default_rng(n)
    pick = np.unique(np.concatenate([[0], rng.integers(0, n, PLAUSIBILITY_ROWS)]))
    # in NumPy: for these few rows, loading the build's compiled loops (about 0.4 CPU s, the
    # solver's widget among them) would cost a process that only plays the table more than
    # it saves; the two paths give the same decisions (tests/test_decisions.py)
    k, b, sb = _decide(rules, space, values, plan_values, m[pick], u[pick], f[pick], served, compiled=False)
    same = all(np.array_equal(stored[f"keep_{j}"][pick], k[j]) for j in range(1, rules.n_rolls))
    same = same and np.array_equal(stored["boxes"][pick], b)
    if served:
        same = same and np.array_equal(stored["served_boxes"][pick], sb)
    if not same:
        return None, "holds decisions that its own value table does not give (forged or stale)"
    return (row_of, keeps, stored["boxes"], stored["served_boxes"] if served else None), ""


def table_of_values(rules: RuleSet, kind: str, theta: float, values: np.ndarray, plan_values, *,
                    served: bool = False, cache: bool = True, cache_dir=None, chunk: int = CHUNK,
                    progress=None, trusted: tuple | None = None) -> DecisionTable:
    """The decision table of any value table (disk-cached; see :func:`decision_table`).

    ``plan_values(mask, u, flag, compiled=True)`` gives, per rerolls left ``j``, the (K, U)
    solver-order value of every keep of U states (larger is better), as the widget's
    ``plan=True`` (``compiled=False``: the same floats without compiled loops, asked for
    the few rows a cached table's check recomputes, if the planner takes ``compiled``);
    the boxes maximize ``gain + values[next state]``. ``kind`` and ``theta`` name the
    table in the cache (the risk strategies' tables: ``"risk"`` and their theta).
    A cached table is memory-mapped (processes share its pages); ``trusted`` is the
    ``file_id`` of a table a parent process verified: if the file still has it, it is
    not checksummed and recomputed again (a worker starts at once).

    >>> from yahtzee_sim.exact.solver import solve
    >>> sol = solve("yacht-classic", cache=False)
    >>> values = sol.values.reshape(-1)
    >>> plan, served = _mean_planner(sol.rules, values)
    >>> t = table_of_values(sol.rules, "mean", 0.0, values, plan, cache=False)
    >>> bool((t.boxes == decision_table(sol, cache=False).boxes).all())
    True
    """
    chunk = whole_number(chunk, "chunk")
    if rules.n_boxes > 255 or rules.dice.subkeeps.shape[1] > 255:      # pragma: no cover
        raise ValueError(f"the decisions of {rules.key} do not fit one byte each")
    size = table_bytes(rules)
    if size > MAX_TABLE_BYTES:
        raise ValueError(f"the decision table of {rules.key} would take {size / 1e9:,.1f} GB (at most "
                         f"{MAX_TABLE_BYTES / 1e9:.1f} GB here); its strategies decide from the "
                         f"value tables per batch instead")
    values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    meta = _meta(rules, kind, theta, values)
    status, note, path, file_id = "off", "", None, None
    if cache:
        memo_key = (meta["fingerprint"], kind, theta, meta["values_sha256"])
        if memo_key in _MEMO:
            hit = _MEMO[memo_key]
            return dataclasses.replace(hit, cache="memory", seconds=0.0)
        entry = _cache.CachedTable(decisions_cache_path(rules, kind, theta, cache_dir), meta,
                                   what="decision table", redo="rebuilt")
        path = entry.path
        ident = entry.identity()
        quick = trusted is not None and tuple(trusted) == ident
        parts = entry.load(lambda stored: _check(rules, stored, values, plan_values, served, quick),
                           mapped=True, trusted=ident if quick else None)
        if parts is not None and kind in COMPRESSED_KINDS and not quick and not _cache.is_compressed(path):
            # written whole by an earlier version: stored again compressed, once
            if entry.store(_file_arrays(*parts[1:]), compress=True):
                parts = entry.load(lambda stored: _check(rules, stored, values, plan_values, served, True),
                                   mapped=True, trusted=entry.file_id)
        if parts is not None:
            table = _table(rules, kind, theta, parts, cache="hit", path=str(path), file_id=entry.file_id)
            _MEMO[memo_key] = table
            return table
        status, note = entry.status, entry.note
    what = f"decision table of {rules.key}" + (f", theta {theta:g}" if kind == "risk" else "")
    t0 = time.perf_counter()
    row_of, keeps, boxes, sboxes = _build(rules, values, plan_values, served, int(chunk), progress, what)
    seconds = time.perf_counter() - t0
    for a in keeps[1:] + (boxes,) + ((sboxes,) if sboxes is not None else ()):
        a.setflags(write=False)
    if cache:
        stored = entry.store(_file_arrays(keeps, boxes, sboxes), compress=kind in COMPRESSED_KINDS)  # refused: noted
        note, file_id = entry.note, entry.file_id
        if stored and kind in COMPRESSED_KINDS:
            # played from the file's expansion in shared memory, which the run's workers map,
            # not from this process's own arrays (each worker would expand its own copy)
            again = entry.load(lambda got: _check(rules, got, values, plan_values, served, True),
                               mapped=True, trusted=file_id)
            if again is not None:
                row_of, keeps, boxes, sboxes = again
    table = _table(rules, kind, theta, (row_of, keeps, boxes, sboxes), seconds=seconds, cache=status,
                   cache_note=note, path=str(path) if path is not None else None, file_id=file_id)
    if cache:
        _MEMO[memo_key] = table
    return table


def _file_arrays(keeps, boxes, sboxes) -> dict:
    """The arrays of a table's cache file, by name."""
    arrays = {f"keep_{j}": keeps[j] for j in range(1, len(keeps))}
    return {**arrays, "boxes": boxes, **({} if sboxes is None else {"served_boxes": sboxes})}


def _table(rules: RuleSet, kind: str, theta: float, parts, **provenance) -> DecisionTable:
    """The table of ``parts`` (row_of, keeps, boxes, served_boxes) as the engine plays it:
    plain arrays (a cached file's memory maps viewed without their subclass, which
    costs on every lookup), the state layout and the rolls' keep order."""
    row_of, keeps, boxes, sboxes = parts
    space = state_space(rules)
    plain = tuple(None if a is None else np.asarray(a) for a in keeps)
    return DecisionTable(row_of=row_of, n_u=space.n_u, n_flag=space.n_flag, keeps=plain,
                         boxes=np.asarray(boxes), served_boxes=None if sboxes is None else np.asarray(sboxes),
                         sub_keep=sub_keep_order(rules)[0], rules=rules, kind=kind, theta=theta, **provenance)


class RowDecisions:
    """Rows of a decision table decided when asked, by the build's own function on the
    build's own inputs (:func:`_decide` on a row's state): the bytes the table holds,
    without building, storing or mapping the table. A pass over every state that reads
    each row once (a score distribution) decides them as it goes: it costs the build's
    work and saves the table's hundreds of MB of fresh memory and its file.

    >>> from yahtzee_sim.exact.solver import solve
    >>> sol = solve("yacht-classic", cache=False)
    >>> rows = row_decisions(sol)
    >>> keeps, boxes, _ = rows.decide(np.arange(10))
    >>> t = decision_table(sol, cache=False)
    >>> bool((boxes == t.boxes[:10]).all() and (keeps[2] == t.keeps[2][:10]).all())
    True
    """

    def __init__(self, rules: RuleSet, values: np.ndarray, plan_values, served: bool = False):
        self.rules = rules
        self.space = state_space(rules)
        (self.m, self.u, self.f), self.row_of = _states(self.space)
        # as table_of_values: the boxes from float64 values, the keeps from the planner's
        self.values = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
        self.plan_values, self.served = plan_values, served
        precompile()
        self.ctxs = _box_contexts(rules, self.space, self.m, self.f, served)

    def decide(self, rows) -> tuple:
        """(keeps ``[None, (P, R), ...]``, boxes (P, R), served boxes or None) of table
        ``rows``, :data:`CHUNK` states at a time (the build's memory bound)."""
        rows = np.asarray(rows, dtype=np.intp)
        parts = [_decide(self.rules, self.space, self.values, self.plan_values, self.m[rows[lo:lo + CHUNK]],
                         self.u[rows[lo:lo + CHUNK]], self.f[rows[lo:lo + CHUNK]], self.served, self.ctxs)
                 for lo in range(0, len(rows), CHUNK)]
        if len(parts) == 1:
            return parts[0]
        keeps = [None] + [np.concatenate([p[0][j] for p in parts]) for j in range(1, self.rules.n_rolls)]
        boxes = np.concatenate([p[1] for p in parts])
        return keeps, boxes, np.concatenate([p[2] for p in parts]) if self.served else None


def row_decisions(solution) -> RowDecisions:
    """The :class:`RowDecisions` of :func:`decision_table` (the same rows, the same bytes).

    >>> from yahtzee_sim.exact.solver import solve
    >>> row_decisions(solve("yacht-classic", cache=False)).row_of.dtype.name
    'int32'
    """
    return RowDecisions(*_mean_inputs(solution))


def _mean_inputs(solution) -> tuple:
    """(rules, values, planner, served) of a solution's optimal decisions: what its table's
    build and its :class:`RowDecisions` decide from."""
    values = np.ascontiguousarray(solution.values).reshape(-1)
    plan_values, served = _mean_planner(solution.rules, values)
    return solution.rules, values, plan_values, served


def decision_table(solution, *, cache: bool = True, cache_dir: str | os.PathLike | None = None,
                   chunk: int = CHUNK, progress=None, trusted: tuple | None = None) -> DecisionTable:
    """The optimal decisions of a :class:`~yahtzee_sim.exact.solver.Solution` (disk-cached).

    ``progress``: a :mod:`yahtzee_sim.progress` callback told the states decided so far;
    ``trusted``: see :func:`table_of_values`.

    >>> from yahtzee_sim.exact.solver import solve
    >>> seen = []
    >>> t = decision_table(solve("yacht-classic", cache=False), cache=False,
    ...                    progress=lambda *a: seen.append(a))
    >>> seen[-1][1] == seen[-1][2] == t.n_states
    True
    """
    rules, values, plan_values, served = _mean_inputs(solution)
    return table_of_values(rules, "mean", 0.0, values, plan_values, served=served, cache=cache,
                           cache_dir=cache_dir, chunk=chunk, progress=progress, trusted=trusted)
