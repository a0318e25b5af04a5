"""Target play: the strategy that maximizes P(final score >= T), for every target at once.

Over 600 lines: the target tables' solve, cache and turn step are one algorithm over
the solver's layout.

The state of a target player is the solver's turn-start state ``s`` (filled boxes,
upper total up to the bonus threshold, the five-of-a-kind box's value) plus the
points still needed, ``r = T - points so far``. Let

    W(s, r) = max over strategies of P(the rest of the game scores >= r)

(``W = 1`` for ``r <= 0``: nothing more is needed). At the end of a turn the box
chosen adds its gain ``g`` (box points, upper bonus earned, five-of-a-kind bonus,
exactly the solver's gains) and moves to ``W(s', r - g)``; each keep maximizes the
same probability, separately for every ``r`` (the best keep for needing 30 more
points is not the best for needing 80). So one backward induction over the states,
with a vector over ``r = 0..R`` in place of the solver's scalar, solves every
target ``T <= R`` at once, and ``P(score >= T)`` under target-T play is
``W(start, T)``.

Each turn is the solver's keep-lattice sweep (:mod:`yahtzee_sim.exact._solver_lattice`)
over (state, r) columns, with the solver's state space and per-roll box tables
(:func:`~yahtzee_sim.exact.space.turn_model`); five-of-a-kind rolls go
through :meth:`RuleSet.turn_options` (jokers, bonuses) as everywhere else. Served
scores (Generala) are the solver's first-throw layer: the full keep of the turn's
first decision keeps the dice served, so the roll block there holds their served W. Upper
totals that the solver merges (no open box can tell them apart) have the same W,
since the rest of the game's points do not depend on which one it is, so the
table holds one row per solved state (plus one for the full card). The table is
cached on disk like the solver's (:mod:`yahtzee_sim.exact.cache`).

The solve runs that turn compiled, one state at a time (:mod:`._target_kernels`: the
same floats in the same order, so the same table bit for bit; :func:`target_turn` is
the NumPy form, which also serves the plans of play and Generala's served scores), and
skips the needs above a state's reachable points (its W is 0 there).

Cost: ``states x (R + 1)`` probabilities (float32 by default: every value within
about 1e-6 of the float64 table) and about ``R + 1`` times the work of the mean
solve: for ``yahtzee`` with ``R = 300``, 314,876 states, a 362 MiB table and file, about
50 CPU seconds (about 10 CPU-minutes through the NumPy turn; see ``benchmarks/RESULTS.md``).

>>> sol = target_solve("yacht", max_target=200, options=["fill-in-order"], cache=False)
>>> sol.p_reach(0), round(sol.p_reach(96), 4), sol.p_reach(400)
(1.0, 0.5371, 0.0)
>>> from yahtzee_sim.exact.distribution import distribution
>>> mean_play = distribution("yacht", "optimal", options=["fill-in-order"]).p_at_least(96)
>>> round(mean_play, 4)                          # the most points on average reaches 96 less often
0.5288
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from ..rules import RuleSet, get_rules
from . import cache as _cache
from ._solver_lattice import best_subkeep_mean, expect, first_roll_mean, sweep_keeps
from .space import StateSpace, TurnModel, state_space, turn_model
from ..validate import renamed_keywords, whole_number

__all__ = ["target_solve", "TargetSolution", "target_turn", "parse_target", "DEFAULT_MAX_TARGET",
           "MAX_TABLE_BYTES", "TARGET_VERSION"]

TARGET_VERSION = 1
"""Bump when the target tables' meaning or layout change (invalidates caches)."""

DEFAULT_MAX_TARGET = 300
"""Targets solved by default (0..300): every target a ``yahtzee`` player plausibly sets."""

MAX_TABLE_BYTES = 8 << 30
"""Largest target table taken on (8 GiB; the machine has 24 GiB and others work on it)."""

CHUNK_CELLS = 1 << 14
"""(state, r) columns of one turn evaluation (bounds memory: about 2 kB per column)."""

MIN_STATES_FOR_WORKERS = 2_000
"""Levels with fewer states are solved in one process."""

_DTYPES = {"float32": np.float32, "float64": np.float64}
_MEMO: dict = {}


def parse_target(target, what: str = "target") -> int:
    """A target score: an integer >= 0.

    >>> parse_target("250"), parse_target(0)
    (250, 0)
    >>> parse_target(-5)
    Traceback (most recent call last):
    ...
    ValueError: target must be an integer >= 0, got -5
    """
    try:
        t = float(target)
    except (TypeError, ValueError):
        t = math.nan
    if isinstance(target, bool) or not math.isfinite(t) or t != int(t) or t < 0:
        raise ValueError(f"{what} must be an integer >= 0, got {target!r}")
    return int(t)


def require_target_solvable(rules: RuleSet) -> StateSpace:
    """The state space of ``rules``, or the one-line reason the target solver refuses it.

    >>> require_target_solvable(get_rules("maxi-yatzy"))
    Traceback (most recent call last):
    ...
    ValueError: the exact engine cannot solve maxi-yatzy: banked throws add a throw count to each of its 2**20 score cards, far more states than this machine can hold; simulate it instead (yahtzee-sim simulate --rules maxi-yatzy)
    """
    return state_space(rules)                         # refuses what the exact engine cannot do


def require_target_fits(rules: RuleSet, max_target: int, dtype: str = "float32") -> None:
    """One-line ``ValueError``, before any work, when the target table of ``rules`` for
    targets 0..max_target would not fit (in the solver's cap or this machine's memory).

    The states are counted, not built (building the space of the largest games takes
    minutes).

    >>> require_target_fits(get_rules("maxi-yatzy", ["no-saved-throws"]), 300)
    Traceback (most recent call last):
    ...
    ValueError: the target table of maxi-yatzy+no-saved-throws for targets up to 300 would take 32.9 GiB (about 29,360,129 states x 301 probabilities), more than the 8 GiB this solver takes on; targets up to 72 fit
    """
    from ..limits import require_memory
    from .space import estimate_states

    n_rows = estimate_states(rules) + 1                  # + the full card
    item = np.dtype(dtype).itemsize
    size = n_rows * (max_target + 1) * item
    if size > MAX_TABLE_BYTES:
        fits = MAX_TABLE_BYTES // (n_rows * item) - 1
        raise ValueError(f"the target table of {rules.key} for targets up to {max_target} would take "
                         f"{size / 2**30:,.1f} GiB (about {n_rows:,} states x {max_target + 1:,} probabilities), "
                         f"more than the {MAX_TABLE_BYTES / 2**30:g} GiB this solver takes on; "
                         f"targets up to {fits} fit")
    require_memory(size, f"the target table of {rules.key} for targets up to {max_target}")


@functools.lru_cache(maxsize=8)
def _layout(rules: RuleSet):
    """Row of every dense state (``-1``: not solved) and each level's states and first row.

    Row 0 is the full card (W = 1 for r = 0, else 0); then the levels from the
    fullest card back to the empty one, each in :meth:`StateSpace.level_states` order.
    All upper totals of one solved class share their representative's row.
    """
    sp = state_space(rules)
    row_of = np.full(sp.size, -1, dtype=np.int64)
    full = sp.level_masks[sp.n_boxes]
    per_mask = sp.n_u * sp.n_flag                    # a mask's states are contiguous
    row_of[(full[:, None] * per_mask + np.arange(per_mask)).ravel()] = 0
    levels = {}
    nxt = 1
    for level in range(sp.n_boxes - 1, -1, -1):
        states, (g_start, g_mask, g_flag, g_sub) = sp.level_states(sp.level_masks[level])
        n = len(states[0])
        cls = sp.cls_idx[g_sub]                                    # (G, n_u)
        ok = cls >= 0
        rows = nxt + g_start[:, None] + np.maximum(cls, 0)
        flat = sp.flat(g_mask[:, None], np.arange(sp.n_u)[None, :], g_flag[:, None])
        row_of[flat[ok]] = rows[ok]
        levels[level] = (states, nxt)
        nxt += n
    row_of.setflags(write=False)
    return row_of, levels, nxt


@dataclass(frozen=True, eq=False)
class TargetSolution:
    """The target-play table of a rule set: W(state, r) for r = 0..max_target.

    Attributes
    ----------
    rules, max_target, dtype : what was solved (``dtype`` of the table and its work).
    table : (rows, max_target + 1) ``W``: the largest probability that the rest of the
        game from a turn-start state scores at least ``r``; row 0 is the full card,
        :attr:`row_of` finds the row of a state.
    seconds, solve_seconds, cache, cache_note : as :class:`~yahtzee_sim.exact.solver.Solution`.
    levels : per level (boxes filled): states, seconds.
    """

    rules: RuleSet
    max_target: int
    dtype: str
    table: np.ndarray = field(repr=False)
    seconds: float
    solve_seconds: float
    cache: str
    levels: dict = field(repr=False)
    cache_note: str = ""

    @property
    def space(self) -> StateSpace:
        return state_space(self.rules)

    @property
    def row_of(self) -> np.ndarray:
        """(dense state index,) -> row of :attr:`table` (-1 for states never reached)."""
        return _layout(self.rules)[0]

    @property
    def start_row(self) -> int:
        return int(self.row_of[self.space.flat(0, 0, 0)])

    def p_reach(self, target) -> float:
        """P(final score >= target) under the play that maximizes it (target-``target`` play).

        >>> sol = target_solve("yacht", max_target=120, options=["fill-in-order"], cache=False)
        >>> sol.p_reach(-3), sol.p_reach(120) < sol.p_reach(100)
        (1.0, True)
        """
        t = math.ceil(target)
        if t <= 0:
            return 1.0
        if t > self.max_target:
            if t > max_possible_score(self.rules):
                return 0.0
            raise ValueError(f"target {t} is above the solved targets (0..{self.max_target}); "
                             f"solve with max_target >= {t}")
        return float(self.table[self.start_row, t])

    def probability(self, filled, upper_total, five_box_full, need) -> np.ndarray:
        """(N,) the largest chance that the rest of N games scores at least ``need`` (N,).

        >>> sol = target_solve("yacht", max_target=120, options=["fill-in-order"], cache=False)
        >>> fresh = np.zeros((1, sol.rules.n_boxes), bool)
        >>> bool(sol.probability(fresh, [0], [False], [100])[0] == sol.p_reach(100))
        True
        """
        sp = self.space
        mask, u, flag = sp.index(filled, upper_total, five_box_full)
        rows = self.row_of[sp.flat(mask, u, flag)]
        if (rows < 0).any():
            raise ValueError("a state no game can reach (its upper total cannot be made by its filled boxes)")
        need = np.broadcast_to(np.asarray(need, dtype=np.int64), rows.shape)
        if (need > self.max_target).any():
            raise ValueError(f"need above the solved targets (0..{self.max_target})")
        return self.table[rows, np.maximum(need, 0)].astype(np.float64)

    def to_frame(self) -> "pd.DataFrame":
        """One row per target T = 0..max_target: ``p_reach``, P(score >= T) under target-T play.

        >>> f = target_solve("yacht", max_target=120, options=["fill-in-order"], cache=False).to_frame()
        >>> f.index.name, list(f.columns), float(f.loc[0, "p_reach"])
        ('target', ['p_reach'], 1.0)
        """
        import pandas as pd

        t = np.arange(self.max_target + 1)
        return pd.DataFrame({"p_reach": self.table[self.start_row].astype(np.float64)},
                            index=pd.Index(t, name="target"))

    def summary(self) -> dict:
        """The headline facts as a plain dict (JSON-able).

        >>> s = target_solve("yacht", max_target=50, options=["fill-in-order"], cache=False).summary()
        >>> s["rules"], s["max_target"], s["states"]
        ('yacht+fill-in-order', 50, 104)
        """
        return {"rules": self.rules.key, "max_target": self.max_target, "dtype": self.dtype,
                "states": int(np.sum(self.levels["states"])), "table_bytes": int(self.table.nbytes),
                "seconds": self.seconds, "solve_seconds": self.solve_seconds, "cache": self.cache,
                "cache_note": self.cache_note}


@functools.lru_cache(maxsize=32)
def max_possible_score(rules: RuleSet) -> int:
    """The highest score any game of ``rules`` can make (dice chosen at will).

    >>> max_possible_score(get_rules("yacht", ["fill-in-order"]))
    325
    """
    from .extremes import extreme_score

    return int(extreme_score(rules, kind="max").score)


# -- one turn, vectorized over (state, r) columns ----------------------------------------
def target_turn(model: TurnModel, table: np.ndarray, row_of: np.ndarray, mask, u, flag, need,
                *, plan: bool = False):
    """W of C turn-start states at the needs ``need`` (C, L), from the next states' rows.

    ``table`` rows must hold every state one box fuller (row 0: the full card).
    Returns (C, L) float64; with ``plan=True`` also, per rerolls left j, the (K, C*L)
    probability of each keep (solver order, column ``c * L + l``) with j rerolls
    left after it.

    >>> sol = target_solve("yacht", 60, options=["fill-in-order"], cache=False)
    >>> (mask, u, flag), first = _layout(sol.rules)[1][0]          # the fresh card
    >>> w = target_turn(turn_model(sol.rules, np.float32), sol.table, sol.row_of, mask, u, flag,
    ...                 np.arange(61)[None, :])
    >>> bool(np.array_equal(w[0].astype(np.float32), sol.table[first]))
    True
    """
    rules, sp, lat = model.rules, model.space, model.lat
    dt = table.dtype
    mask, u, flag = (np.asarray(a, dtype=np.int64) for a in (mask, u, flag))
    need = np.asarray(need, dtype=np.int64)
    n, width = need.shape
    n_u, nf, cap, n_boxes = sp.n_u, sp.n_flag, sp.cap, sp.n_boxes
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    filled = (mask[:, None] & bits) != 0
    legal = rules.legal_boxes(filled)
    nxt = mask[:, None] | bits

    def rows(flat, ok):
        r = row_of[np.where(ok, flat, 0)]
        if (ok & (r < 0)).any():                      # pragma: no cover - internal error
            raise RuntimeError("target: a next state was not solved")
        return np.where(ok, r, 0)

    def look(next_rows, gain, ok):
        """(M, C, L) W(next, need - gain) of M candidates per state; -1 where not allowed."""
        idx = np.maximum(need[:, None, :] - gain[:, :, None], 0)
        out = table[next_rows[:, :, None], idx]
        out[~ok] = -1
        return out.transpose(1, 0, 2)

    # scratch: every legal box with 0 points; the best one is open to every roll
    idx0 = (nxt * n_u + u[:, None]) * nf + flag[:, None]
    row0 = rows(idx0, legal)
    zero = np.zeros((n, n_boxes), dtype=np.int64)
    v0 = look(row0, zero, legal)                                        # (B, C, L)
    rb = lat.level_slices[lat.n_dice]
    z = np.empty((lat.n_keeps, n * width), dtype=dt)
    z[rb] = v0.max(axis=0).reshape(1, -1)

    ub = model.upper_boxes
    if len(ub):
        up_ok = legal[:, ub]
        faces = rules.upper_face[ub].astype(np.int64)
        wz = np.empty((rules.n_dice + 1, len(ub), n, width), dtype=dt)
        wz[0] = v0[ub]
        pts_all = np.zeros(n_boxes, dtype=np.int64)
        for k in range(1, rules.n_dice + 1):
            pts = k * faces
            pts_all[ub] = pts
            gain = pts + rules.upper_bonus_gain(u, np.broadcast_to(pts_all, (n, n_boxes)))[:, ub]
            idx = (nxt[:, ub] * n_u + np.minimum(u[:, None] + pts, cap)) * nf + flag[:, None]
            wz[k] = look(rows(idx, up_ok), gain.astype(np.int64), up_ok)

    for b, groups in enumerate(_box_groups(model)):
        ok = legal[:, b]
        if not groups or not ok.any():
            continue
        j = model.upper_col[b]
        if j < 0:                                  # one candidate per points value of the box
            pts = np.array([v for v, _ in groups], dtype=np.int64)
            m = len(pts)
            cand = look(np.repeat(row0[:, b:b + 1], m, axis=1), np.broadcast_to(pts, (n, m)),
                        np.repeat(ok[:, None], m, axis=1))
        for i, (v, at) in enumerate(groups):
            c = (wz[v, j] if j >= 0 else cand[i]).reshape(1, -1)
            if isinstance(at, slice):
                np.maximum(z[at], c, out=z[at])
            else:
                cur = z[at]
                np.maximum(cur, c, out=cur)
                z[at] = cur

    def five_rows(throws):
        """(k5, C*L) W of the five-of-a-kind rolls (jokers and bonuses), through
        turn_options; ``throws`` 1: served (first throw), None: a later throw."""
        k5 = len(model.special_rolls)
        rep = np.repeat(np.arange(n), k5)
        legal5, gain5, idx5 = _special_moves(model, filled, u, flag, nxt, throws)
        idx = np.maximum(need[rep][:, None, :] - gain5[:, :, None], 0)
        val = table[rows(idx5, legal5)[:, :, None], idx]
        val[~legal5] = -1
        best = val.max(axis=1).reshape(n, k5, width).transpose(1, 0, 2)
        return best.reshape(k5, -1)

    if len(model.special_rolls):
        z[model.special_pos] = five_rows(None)

    served = None
    if model.served:              # Generala: the first throw's dice pay their served scores
        served = z[rb].copy()
        for b, at, vals in model.served_boxes:
            ok = legal[:, b]
            if not ok.any():
                continue
            pts_of_row = np.rint(vals).astype(np.int64)
            pts = np.unique(pts_of_row)
            cand = look(np.repeat(row0[:, b:b + 1], len(pts), axis=1), np.broadcast_to(pts, (n, len(pts))),
                        np.repeat(ok[:, None], len(pts), axis=1))            # (P, C, L)
            r = at - rb.start
            cur = served[r]
            np.maximum(cur, cand[np.searchsorted(pts, pts_of_row)].reshape(len(r), -1), out=cur)
            served[r] = cur
        if len(model.special_rolls):
            served[model.special_pos - rb.start] = five_rows(1)

    if served is None:
        keep_values = sweep_keeps(lat, z, rules.n_rolls, plan=plan)
    else:
        # as the solver's turn: holding every die of the first throw is not a throw, so
        # the full keep of the first decision keeps the dice served (one throw: served)
        keep_values = [None] * rules.n_rolls
        if rules.n_rolls == 1:
            z[rb] = served
        for j in range(1, rules.n_rolls):
            expect(lat, z)
            if j == rules.n_rolls - 1:
                z[rb] = served
            if plan:
                keep_values[j] = z.copy()
            best_subkeep_mean(lat, z)
    w = first_roll_mean(lat, z[rb])
    w = np.minimum(w, 1.0).reshape(n, width)      # rounding must not leave [0, 1]
    return (w, keep_values) if plan else w


def _special_moves(model: TurnModel, filled, u, flag, nxt, throws) -> tuple:
    """Where each five-of-a-kind roll (``model.special_rolls``: jokers, bonuses) can go from
    C states, through ``turn_options``: (C*k5, B) legal, gain (points, upper bonus and
    five-of-a-kind bonus) and the next state's flat index, rows state-major. ``throws`` 1:
    the roll was the turn's first throw (served), None: a later throw. The one step both
    target turns (NumPy and compiled) take for these rolls."""
    rules, sp = model.rules, model.space
    n, k5 = len(u), len(model.special_rolls)
    rep = np.repeat(np.arange(n), k5)
    thr = None if throws is None else np.full(n * k5, throws)
    legal5, sc5, bonus5 = rules.turn_options(filled[rep], flag[rep].astype(bool),
                                             np.tile(model.special_rolls, n), throws=thr)
    sc5 = sc5.astype(np.int64)
    gain5 = sc5 + rules.upper_bonus_gain(u[rep], sc5) + bonus5[:, None]
    u_next = np.minimum(u[rep, None] + np.where(rules.is_upper, sc5, 0), sp.cap)
    f_next = flag[rep, None]
    if sp.n_flag == 2:                             # any score in the box sets the flag
        f_next = f_next | ((np.arange(sp.n_boxes) == rules.five_box_index) & (sc5 > 0))
    return legal5, gain5, (nxt[rep] * sp.n_u + u_next) * sp.n_flag + f_next


@functools.lru_cache(maxsize=32)
def _box_groups(model: TurnModel) -> tuple:
    """Per box: ``(points, rows)`` of the final rolls where it pays those points (upper
    boxes: the count of their face), ``rows`` absolute in the solver's keep order (a
    slice when contiguous). Rolls where a box pays nothing are left to the best scratch;
    five-of-a-kind rolls are redone through ``turn_options`` later."""
    rb = model.lat.level_slices[model.lat.n_dice]
    out = []
    for b in range(model.rules.n_boxes):
        at = model.box_rows[b]
        vals = np.rint(np.asarray(model.box_vals[b], dtype=np.float64)).astype(np.int64)
        rows = np.arange(rb.start, rb.stop) if at is None else np.asarray(at, dtype=np.intp)
        groups = []
        for v in np.unique(vals[vals > 0]):
            r = rows[vals == v]
            if len(r) and np.array_equal(r, np.arange(r[0], r[0] + len(r))):
                r = slice(int(r[0]), int(r[0]) + len(r))
            groups.append((int(v), r))
        out.append(tuple(groups))
    return tuple(out)


# -- the backward induction ------------------------------------------------------------
def _kernels():
    """The compiled target turn (:mod:`._target_kernels`), or None where the NumPy
    turn must serve (kernels switched off or numba missing)."""
    from .space import _kernels as solver_kernels

    if solver_kernels() is None:
        return None
    from . import _target_kernels

    return _target_kernels


COMPILED_CHUNK = 64
"""States per call of the compiled turn (the per-call NumPy set-up is amortized)."""

MIN_STATES_FOR_KERNELS = 1_000
"""Smaller games are solved by the NumPy turn: under a second of work, less than the
compiled turn's first compilation (about 4 CPU seconds; the tables are the same)."""


def _compiled_inputs(model: TurnModel, row_of: np.ndarray, mask, u, flag) -> tuple:
    """Per state, the candidate look-ups of :func:`._target_kernels.target_states`:
    (C, n_cand) next rows (-1: box not open) and gains, and the five-of-a-kind rolls'
    (C, k5, B) next rows and gains (through ``turn_options``: jokers, bonuses)."""
    from .space import kernel_plan

    rules, sp = model.rules, model.space
    kp = kernel_plan(model)
    n_u, nf, cap, n_boxes = sp.n_u, sp.n_flag, sp.cap, sp.n_boxes
    n = len(mask)
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    filled = (mask[:, None] & bits) != 0
    legal = rules.legal_boxes(filled)
    nxt = mask[:, None] | bits
    ub, lb = model.upper_boxes, kp.lower_boxes
    n_up = len(ub)
    n_cnt = kp.upper_points.shape[0]
    n_cand = n_cnt * n_up + len(lb)
    idx = np.zeros((n, n_cand), dtype=np.int64)
    ok = np.zeros((n, n_cand), dtype=bool)
    gain = np.zeros((n, n_cand), dtype=np.int64)
    for k in range(n_cnt):
        cols = slice(k * n_up, (k + 1) * n_up)
        idx[:, cols] = (nxt[:, ub] * n_u + np.minimum(u[:, None] + kp.upper_points[k], cap)) * nf + flag[:, None]
        ok[:, cols] = legal[:, ub]
        gain[:, cols] = kp.upper_gain[k][u]
    cols = slice(n_cnt * n_up, n_cand)
    idx[:, cols] = (nxt[:, lb] * n_u + u[:, None]) * nf + flag[:, None]
    ok[:, cols] = legal[:, lb]
    trow = np.where(ok, row_of[np.where(ok, idx, 0)], -1)
    k5 = len(model.special_rolls)
    r5 = np.full((n, k5, n_boxes), -1, dtype=np.int64)
    g5 = np.zeros((n, k5, n_boxes), dtype=np.int64)
    if k5:
        legal5, g, idx5 = _special_moves(model, filled, u, flag, nxt, None)
        r5[:] = np.where(legal5, row_of[np.where(legal5, idx5, 0)], -1).reshape(n, k5, n_boxes)
        g5[:] = g.reshape(n, k5, n_boxes)
        if (legal5 & (r5.reshape(-1, n_boxes) < 0)).any():  # pragma: no cover - internal error
            raise RuntimeError("target: a next state was not solved")
    if (ok & (trow < 0)).any():                   # pragma: no cover - internal error
        raise RuntimeError("target: a next state was not solved")
    return trow, gain, r5, g5


@functools.lru_cache(maxsize=8)
def _compiled_consts(model: TurnModel) -> tuple:
    """The per-model constants of :func:`._target_kernels.target_states`."""
    from .space import kernel_plan

    kp, lat = kernel_plan(model), model.lat
    n_up = len(model.upper_boxes)
    n_cnt = kp.upper_points.shape[0]
    n_cand = n_cnt * n_up + len(kp.lower_boxes)
    ent_gain = np.rint(kp.ent_add.astype(np.float64)).astype(np.int64)
    max_add = np.zeros(n_cand, dtype=np.int64)
    np.maximum.at(max_add, kp.ent_row, ent_gain)
    scratch = np.concatenate([np.arange(n_up), np.arange(n_cnt * n_up, n_cand)]).astype(np.int64)
    dt = model.dtype.type
    head = (scratch, kp.row_ptr, kp.ent_row, ent_gain, max_add, kp.special_rows)
    tail = (lat.level_slices[lat.n_dice].start, model.rules.n_rolls - 1, kp.level_start,
            kp.child_ptr, kp.child_pos, dt(lat.n_faces), kp.par_ptr, kp.par_pos,
            lat.roll_mult, float(lat.n_outcomes))
    return head, tail


def _chunk_starts(n: int, part: int, n_parts: int, per_chunk: int, counter=None):
    """First states of the chunks one process solves: every ``n_parts``-th chunk, or
    with a shared ``counter`` (a ``multiprocessing.Value``) the next chunk no process
    has taken (the states' costs differ, and so may the processes' shares of the CPUs).

    >>> list(_chunk_starts(10, 1, 2, 3))
    [3, 9]
    >>> import multiprocessing
    >>> list(_chunk_starts(10, 0, 2, 3, multiprocessing.Value("q", 0)))
    [0, 3, 6, 9]
    """
    if counter is None:
        yield from range(part * per_chunk, n, n_parts * per_chunk)
        return
    while True:
        with counter.get_lock():
            a = counter.value
            counter.value = a + per_chunk
        if a >= n:
            return
        yield a


def _solve_part(model, table, row_of, states, first_row, part, n_parts, per_chunk, report=None,
                tops=None, counter=None):
    m, u, fl = states
    width = table.shape[1]
    kx = _kernels() if tops is not None else None
    if kx is not None:
        head, tail = _compiled_consts(model)
        per_chunk = COMPILED_CHUNK
    else:
        counter = None
        need = np.broadcast_to(np.arange(width, dtype=np.int64), (per_chunk, width))
    done = 0
    for a in _chunk_starts(len(m), part, n_parts, per_chunk, counter):
        b = min(a + per_chunk, len(m))
        if kx is not None:
            trow, gain, r5, g5 = _compiled_inputs(model, row_of, m[a:b], u[a:b], fl[a:b])
            out_row = np.arange(first_row + a, first_row + b, dtype=np.int64)
            kx.target_states(table, tops, out_row, trow, gain, *head, r5, g5, *tail)
        else:
            table[first_row + a:first_row + b] = target_turn(model, table, row_of, m[a:b], u[a:b],
                                                             fl[a:b], need[:b - a])
        done += b - a
        if report is not None:
            report(done * n_parts if counter is None else b)


def _compute(rules: RuleSet, max_target: int, dtype: str, workers: int, progress):
    from ..forkpool import fork_workers, run_parts, shared_array
    import multiprocessing
    from ..progress import as_progress

    report = as_progress(progress)
    model = turn_model(rules, _DTYPES[dtype])
    row_of, levels, n_rows = _layout(rules)
    width = max_target + 1
    workers = fork_workers(workers)
    table = shared_array((n_rows, width), dtype) if workers > 1 else np.empty((n_rows, width), dtype=dtype)
    table[0] = 0.0
    table[0, 0] = 1.0
    per_chunk = max(1, CHUNK_CELLS // width)
    total = sum(len(s[0]) for s, _ in levels.values())
    lv = {"filled": [rules.n_boxes], "states": [0], "seconds": [0.0]}
    solved = 0
    phase = f"target tables of {rules.key} (targets 0..{max_target})"
    tops = None
    kx = None
    if total >= MIN_STATES_FOR_KERNELS and not model.served:    # served scores (Generala): NumPy
        kx = _kernels()
    if kx is not None:
        from ..progress import heartbeat

        # each row's largest need above 0 (the compiled turn skips the needs above them)
        tops = shared_array((n_rows,), np.int64) if workers > 1 else np.zeros(n_rows, dtype=np.int64)
        tops[0] = 0
        with heartbeat(report, "preparing the compiled target solver"):
            kx.precompile(model.dtype)           # once, before the workers fork
    report(phase, 0, total)
    for level in range(rules.n_boxes - 1, -1, -1):
        t0 = time.perf_counter()
        states, first = levels[level]
        n = len(states[0])
        n_parts = workers if n >= MIN_STATES_FOR_WORKERS else 1
        # parts take chunks of states as they free up (states differ in cost, and so do the
        # processes' shares of the machine): a shared counter made before the children fork
        counter = (multiprocessing.get_context("fork").Value("q", 0)
                   if n_parts > 1 and tops is not None else None)
        # forked children take parts 1.. (this process part 0, and the progress): each
        # writes its rows into the shared table; a failure anywhere stops them all
        run_parts(lambda part: _solve_part(
            model, table, row_of, states, first, part, n_parts, per_chunk,
            (lambda done: report(phase, solved + min(done, n), total)) if part == 0 else None,
            tops, counter),
            n_parts, what="target solver")
        solved += n
        report(phase, solved, total)
        lv["filled"].append(level)
        lv["states"].append(n)
        lv["seconds"].append(time.perf_counter() - t0)
    out = np.array(table) if workers > 1 else table
    order = np.argsort(lv["filled"])
    return out, {k: np.asarray(x)[order] for k, x in lv.items()}


# -- cache --------------------------------------------------------------------------------
def _meta(rules: RuleSet, max_target: int, dtype: str) -> dict:
    from .solver import rules_fingerprint

    return {"rules": rules.key, "fingerprint": rules_fingerprint(rules), "max_target": max_target,
            "dtype": dtype, "target_version": TARGET_VERSION}


def _stem(rules: RuleSet, dtype: str, max_target: int | str = "") -> str:
    """The file name of the table for targets 0..max_target (without it: the names' common start)."""
    from .solver import rules_fingerprint

    return _cache.table_path(rules.key, rules_fingerprint(rules), f"target-{dtype}", TARGET_VERSION, "",
                             suffix=f"-max{max_target}").name


def target_cache_path(rules: RuleSet, max_target: int = DEFAULT_MAX_TARGET, dtype: str = "float32",
                      cache_dir=None):
    """Where the target table of ``rules`` for targets 0..max_target is cached.

    >>> target_cache_path(get_rules("yacht"), 300, cache_dir="/tmp/c").name.endswith("-max300.npz")
    True
    """
    return _cache.cache_dir(cache_dir) / _stem(rules, dtype, max_target)


def _cached_candidates(rules: RuleSet, max_target: int, dtype: str, cache_dir):
    """Cache files of ``rules`` solving at least targets 0..max_target, smallest first."""
    d = _cache.cache_dir(cache_dir)
    prefix = _stem(rules, dtype)[:-4]
    found = []
    if d.is_dir():
        for p in d.glob(prefix + "*.npz"):
            tail = p.name[len(prefix):-4]
            if tail.isdigit() and int(tail) >= max_target:
                found.append((int(tail), p))
    return sorted(found)


PLAUSIBILITY_STATES = 8
"""Random states whose turn is recomputed when a cached table is loaded."""


def _from_cache(rules: RuleSet, solved: int, dtype: str, stored: dict):
    """(table, levels, solve_seconds) from a cache file's arrays, or (None, why)."""
    sp = state_space(rules)
    row_of, levels, n_rows = _layout(rules)
    need = ["table", "solve_seconds", "level_filled", "level_states", "level_seconds"]
    missing = [k for k in need if k not in stored]
    if missing:
        return None, f"lacks the arrays {', '.join(missing)}"
    table = stored["table"]
    shape = (n_rows, solved + 1)
    if table.shape != shape or table.dtype != np.dtype(dtype):
        return None, f"holds a table of shape {table.shape} {table.dtype}, not {shape} {dtype}"
    if any(stored[k].shape != (sp.n_boxes + 1,) for k in need[2:]):
        return None, "holds per-level arrays of the wrong length"
    if not (np.isfinite(table).all() and (table >= 0).all() and (table <= 1).all()
            and (table[:, 0] == 1).all() and (np.diff(table, axis=1) <= 1e-6).all()):
        return None, "holds values that are not probabilities falling with the target"
    rng = np.random.default_rng(n_rows)
    model = turn_model(rules, _DTYPES[dtype])
    picks = [(0, 0)] + [(int(lv), int(rng.integers(len(levels[int(lv)][0][0]))))
                        for lv in rng.integers(0, sp.n_boxes, PLAUSIBILITY_STATES)]
    for lv, i in picks:
        (m, u, fl), first = levels[lv]
        w = target_turn(model, table, row_of, m[i:i + 1], u[i:i + 1], fl[i:i + 1],
                        np.arange(solved + 1)[None, :])
        if not np.allclose(w[0], table[first + i], atol=1e-6 if dtype == "float32" else 1e-12):
            return None, "holds values that its own next states do not give (forged or stale)"
    lv = {k: stored[f"level_{k}"] for k in ("filled", "states", "seconds")}
    return (table, lv, float(stored["solve_seconds"])), ""


@renamed_keywords(workers="jobs")   # jobs, as the runner's: one word for the processes
def target_solve(rules: str | RuleSet, max_target: int = DEFAULT_MAX_TARGET, *, options=(),
                 dtype=np.float32, cache: bool = True, cache_dir=None, jobs: int | None = None,
                 progress=None) -> TargetSolution:
    """Solve target play exactly for every target 0..max_target.

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    max_target : the largest target solved (the table has ``max_target + 1`` columns).
    dtype : ``np.float32`` (default; within about 1e-6 of float64) or ``np.float64``.
    cache : read and write the disk cache (:mod:`yahtzee_sim.exact.cache`); a cached
        table for a larger ``max_target`` serves a smaller one. Also reuses a table
        already solved in this process.
    jobs : processes sharing each level (default: the solver's, at most 2); ``workers=``,
        its old name, still works (deprecated).
    progress : a :mod:`yahtzee_sim.progress` callback told the states solved.

    >>> target_solve("yacht", max_target=-1)
    Traceback (most recent call last):
    ...
    ValueError: max_target must be an integer >= 0, got -1
    >>> target_solve("yahtzee", max_target=10**6)
    Traceback (most recent call last):
    ...
    ValueError: the target table of yahtzee for targets up to 1000000 would take 1,173.0 GiB (about 314,881 states x 1,000,001 probabilities), more than the 8 GiB this solver takes on; targets up to 6818 fit
    """
    from ..forkpool import default_jobs
    from .solver import _dtype_name

    rules = get_rules(rules, options)
    max_target = parse_target(max_target, "max_target")
    dtype = _dtype_name(dtype)
    workers = default_jobs() if jobs is None else whole_number(jobs, "jobs")
    require_target_fits(rules, max_target, dtype)
    from .solver import rules_fingerprint

    memo_key = (rules_fingerprint(rules), dtype)
    status, note = "off", ""
    if cache:
        got = _MEMO.get(memo_key)
        if got is not None and got.max_target >= max_target:
            return _narrow(dataclasses.replace(got, cache="memory", seconds=0.0), max_target)
        for solved, path in _cached_candidates(rules, max_target, dtype, cache_dir):
            found = _cache.CachedTable(path, _meta(rules, solved, dtype))
            got = found.load(lambda stored, solved=solved: _from_cache(rules, solved, dtype, stored))
            if got is not None:
                table, lv, solve_seconds = got
                table.setflags(write=False)
                sol = TargetSolution(rules, solved, dtype, table, 0.0, solve_seconds, "hit", lv)
                _MEMO[memo_key] = sol
                return _narrow(sol, max_target)
            note, status = found.note, "damaged"
        status = status if status == "damaged" else "miss"
    t0 = time.perf_counter()
    table, lv = _compute(rules, max_target, dtype, int(workers), progress)
    seconds = time.perf_counter() - t0
    table.setflags(write=False)
    if cache:
        entry = _cache.CachedTable(target_cache_path(rules, max_target, dtype, cache_dir),
                                   _meta(rules, max_target, dtype), note=note)
        arrays = {"table": table, "solve_seconds": np.array(seconds)}
        arrays.update({f"level_{k}": v for k, v in lv.items()})
        entry.store(arrays)         # a folder it cannot write: noted, the answer is still right
        note = entry.note
    sol = TargetSolution(rules, max_target, dtype, table, seconds, seconds, status, lv, note)
    if cache:
        _MEMO[memo_key] = sol
    return sol


def _narrow(sol: TargetSolution, max_target: int) -> TargetSolution:
    """The same solution with the columns of targets 0..max_target only (a view)."""
    if sol.max_target == max_target:
        return sol
    return dataclasses.replace(sol, max_target=max_target, table=sol.table[:, :max_target + 1])
