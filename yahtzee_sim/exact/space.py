"""The exact engine's state space and its one-turn evaluation ("widget").

Over 600 lines: the state space, its reachable-state layout and the turn model the
solver, the evaluations, the advisor and the target tables all index by; splitting it
would spread one layout over several files.

A solitaire state is ``(mask, u, flag)``: the filled boxes as a bit mask, the
upper-section total capped at the bonus threshold, and, only for rule sets with
a five-of-a-kind bonus, whether the five-of-a-kind box holds its full value.
(The jokers depend only on whether that box is filled, which the mask says.)

The flag is kept when the rule set pays a five-of-a-kind bonus or has a box that
pays only while the five-of-a-kind box holds a score (Generala doble); a
five-of-a-kind box "holds a score" when it holds anything but 0.

Upper totals that no remaining upper box can tell apart share one value: with
the open upper faces able to add the amounts ``A``, totals ``u`` and ``u'`` are
equivalent when, for every threshold of the upper bonus (one, or several tiers
as in Kismet), the smallest ``a`` in ``A`` with ``u + a >= threshold`` is the
same for both. Only classes that contain a reachable total are solved; the
dense value tables are filled for every total of a solved class and are NaN
elsewhere (unreachable positions).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np

from ..rules import RuleSet
from ._solver_lattice import (TIE_TOL, Lattice, best_subkeep_mean, best_subkeep_pair, expect,
                              first_roll_mean, lattice, select_tied)


@dataclass(frozen=True, eq=False)
class StateSpace:
    """Masks by level, upper-total classes and the dense table layout of a rule set."""

    rules: RuleSet
    n_boxes: int
    cap: int            # upper totals are capped here (0: the total never matters)
    n_u: int            # cap + 1
    n_flag: int         # 2 when the five-of-a-kind box value matters, else 1 (flag: GameState.five_box_full)
    five_bit: int       # bit of the five-of-a-kind box (0 if none)
    upper_sub: np.ndarray   # (2**B,) index of the filled-upper-box subset of each mask
    cls_idx: np.ndarray     # (2**n_upper, n_u) class of each total, -1 if not solved
    rep_u: tuple            # per upper subset: representative total of each class
    level_masks: tuple      # reachable masks with 0..B boxes filled

    @property
    def size(self) -> int:
        """Length of a flat dense table."""
        return (1 << self.n_boxes) * self.n_u * self.n_flag

    @functools.cached_property
    def n_states(self) -> int:
        """Number of solved (reachable) turn-start states."""
        n_rep = np.array([len(r) for r in self.rep_u], dtype=np.int64)
        total = 0
        for masks in self.level_masks[:-1]:
            per = n_rep[self.upper_sub[masks]]
            if self.n_flag == 2:
                per = per * np.where((masks & self.five_bit) != 0, 2, 1)
            total += int(per.sum())
        return total

    def index(self, filled, upper_total, five_box_full):
        """(mask, capped upper total, flag) of N score cards, validated.

        ``filled`` (N, B) bool, ``upper_total`` (N,) upper points so far,
        ``five_box_full`` (N,) the five-of-a-kind box holds its full value.
        """
        filled = np.atleast_2d(np.asarray(filled, dtype=bool))
        if filled.shape[1] != self.n_boxes:
            raise ValueError(f"filled must have {self.n_boxes} columns (one per box of {self.rules.key})")
        n = len(filled)
        mask = filled.astype(np.int64) @ (np.int64(1) << np.arange(self.n_boxes, dtype=np.int64))
        u = np.broadcast_to(np.asarray(upper_total, dtype=np.int64), (n,))
        if (u < 0).any():
            raise ValueError("upper_total must be non-negative")
        full = np.broadcast_to(np.asarray(five_box_full, dtype=bool), (n,))
        flag = full.astype(np.int64) if self.n_flag == 2 else np.zeros(n, dtype=np.int64)
        return mask, np.minimum(u, self.cap), flag

    def flat(self, mask, u, flag):
        """Flat index of states in a dense table."""
        return (np.asarray(mask) * self.n_u + np.asarray(u)) * self.n_flag + np.asarray(flag)

    def next_flat(self, mask, u, flag, scores, boxes=None):
        """Flat index of the state after writing ``scores`` in a box, for N states.

        Without ``boxes``: ``scores`` (N, B) are each box's points and the result is
        (N, B) (every box). With ``boxes`` (N,): ``scores`` (N,) are the points of
        those boxes and the result is (N,). The box's bit is set, the upper total
        (``u`` capped) grows for upper boxes, the flag is set by a full
        five-of-a-kind box. Shared by the optimal strategy and the policy evaluator.

        >>> from yahtzee_sim.rules import get_rules
        >>> sp = state_space(get_rules("yahtzee"))
        >>> i = sp.next_flat([0], [0], [0], [15], boxes=[4])        # 15 in Fives
        >>> bool(i[0] == sp.flat(1 << 4, 15, 0))
        True
        """
        rules = self.rules
        mask, u, flag = (np.asarray(a, dtype=np.int64) for a in (mask, u, flag))
        if boxes is None:
            return self._next_flat_all(mask, u, flag, np.asarray(scores))
        scores = np.asarray(scores, dtype=np.int64)
        b = np.asarray(boxes, dtype=np.int64)
        nxt = mask | (np.int64(1) << b)
        u2 = np.minimum(u + np.where(rules.is_upper[b], scores, 0), self.cap)
        f2 = flag
        if self.n_flag == 2:
            f2 = flag | ((b == rules.five_box_index) & (scores > 0))
        return self.flat(nxt, u2, f2)

    def _next_flat_all(self, mask, u, flag, scores):
        """(N, B) :meth:`next_flat` of every box, in few passes over 4-byte integers."""
        rules = self.rules
        idt = np.int32 if self.size < 2**31 else np.int64
        bits = (np.int64(1) << np.arange(self.n_boxes, dtype=np.int64)).astype(idt)
        out = np.bitwise_or(mask.astype(idt)[:, None], bits)             # next mask
        out *= idt(self.n_u * self.n_flag)
        low = np.empty(out.shape, dtype=idt)                             # next (u, flag)
        np.multiply(scores, rules.is_upper, out=low, casting="unsafe")
        low += u.astype(idt)[:, None]
        np.minimum(low, idt(self.cap), out=low)
        if self.n_flag == 2:
            low *= idt(2)
            low += flag.astype(idt)[:, None]
            five = rules.five_box_index
            low[:, five] |= (scores[:, five] > 0).astype(idt)
        out += low
        return out

    def canonical_u(self, mask: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Representative total of each state's class (-1 if the class is not solved)."""
        sub = self.upper_sub[mask]
        cls = self.cls_idx[sub, u]
        reps = self._rep_table
        return np.where(cls >= 0, reps[sub, np.maximum(cls, 0)], -1)

    @functools.cached_property
    def _rep_table(self) -> np.ndarray:
        width = max(len(r) for r in self.rep_u)
        out = np.full((len(self.rep_u), width), -1, dtype=np.int64)
        for i, r in enumerate(self.rep_u):
            out[i, :len(r)] = r
        return out

    def level_states(self, masks: np.ndarray):
        """Every solved state of the given masks, by (upper boxes filled, mask, flag, class).

        Returns ``mask, u, flag`` (S,) int64 arrays and, per (mask, flag) group,
        its first state index, mask, flag and upper subset.
        """
        masks = np.asarray(masks, dtype=np.int64)
        # group masks by their filled upper boxes: a chunk of states then shares them,
        # and the turn evaluation skips the upper boxes no state of the chunk may use
        masks = masks[np.lexsort((masks, self.upper_sub[masks]))]
        if self.n_flag == 2:
            has = (masks & self.five_bit) != 0
            g_mask = np.repeat(masks, np.where(has, 2, 1))
            g_flag = np.zeros(len(g_mask), dtype=np.int64)
            second = np.cumsum(np.where(has, 2, 1)) - 1
            g_flag[second[has]] = 1
        else:
            g_mask, g_flag = masks, np.zeros(len(masks), dtype=np.int64)
        g_sub = self.upper_sub[g_mask]
        n_rep = np.array([len(r) for r in self.rep_u], dtype=np.int64)[g_sub]
        g_start = np.concatenate([[0], np.cumsum(n_rep)[:-1]]).astype(np.int64)
        total = int(n_rep.sum())
        group = np.repeat(np.arange(len(g_mask)), n_rep)
        within = np.arange(total) - g_start[group]
        u = self._rep_table[g_sub[group], within]
        return (g_mask[group], u, g_flag[group]), (g_start, g_mask, g_flag, g_sub)


MEMORY_SHARE = 0.5
"""Largest share of the machine's physical memory a solve may plan to use: the rest is
left to the system and to the other programs (the estimate is :func:`solve_bytes`)."""

BYTES_PER_DENSE = 16
"""Bytes a solve holds per entry of the dense tables (cards x upper totals x flags): the
float64 values and variances, shared with the workers and returned as they are (no
copy)."""

BYTES_PER_STATE = 56
"""Bytes a solve holds per reachable state at its peak: its (card, upper total, flag)
as int64 for every level at once (24), a level's solved values, the filling of the
dense tables. Measured (``benchmarks/bench_solver_memory.py``, PSS of the solving
process and its worker, less the memory before the solve): with :data:`BYTES_PER_DENSE`
and :data:`SOLVE_BASE_BYTES`, 46 bytes a state fit ``yatzy`` (113 MB) and Maxi Yatzy
without saved throws (2,823 MB) both; 56 leaves a margin of 10 bytes a state (11% on
Maxi Yatzy, whose estimate is 3.14 GB)."""

SOLVE_BASE_BYTES = 64 * 2**20
"""Bytes a solve holds whatever its size (measured about 41 MB: the turn model, the
chunks' work arrays in each process, the pages a forked worker copies)."""

BYTES_PER_CARD = 48
"""Bytes building the state space takes per score card (a few int64 arrays over every card)."""


def machine_memory() -> int | None:
    """Bytes of physical memory of this machine (None where the OS does not tell).

    >>> machine_memory() is None or machine_memory() > 0
    True
    """
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):  # pragma: no cover - not POSIX
        return None


def memory_limit() -> int | None:
    """Bytes a solve may plan to use here: :data:`MEMORY_SHARE` of :func:`machine_memory`,
    or the budget ``YAHTZEE_SIM_MEMORY`` sets (:mod:`yahtzee_sim.limits`)."""
    from ..limits import MEMORY_ENV, memory_budget

    if os.environ.get(MEMORY_ENV):
        return memory_budget()
    total = machine_memory()
    return None if total is None else int(total * MEMORY_SHARE)


def solve_bytes(dense: int, n_states: int = 0) -> int:
    """Estimated peak memory of a solve with ``dense`` table entries and ``n_states``
    reachable states, on the safe side (Maxi Yatzy without saved throws, 89 million
    entries and 29 million states: 2.82 GB measured, 3.14 GB estimated; see
    :data:`BYTES_PER_STATE`).

    >>> round(solve_bytes(89_128_960, 29_360_126) / 1e9, 2)
    3.14
    """
    return BYTES_PER_DENSE * int(dense) + BYTES_PER_STATE * int(n_states) + SOLVE_BASE_BYTES


def _memory_text(need: int, limit: int) -> str:
    from ..limits import MEMORY_ENV, size_text

    if os.environ.get(MEMORY_ENV):
        return f"about {size_text(need)} of memory to solve, more than the {size_text(limit)} allowed by {MEMORY_ENV}"
    total = machine_memory() or 0
    return (f"about {need / 1e9:,.1f} GB to solve, more than the {limit / 1e9:,.1f} GB allowed here "
            f"({MEMORY_SHARE:.0%} of this machine's {total / 1e9:,.1f} GB of memory)")


def bonus_tiers(rules: RuleSet) -> tuple:
    """``((threshold, bonus), ...)`` of the upper bonus, rising (``()`` for none)."""
    tiers = getattr(rules, "upper_bonus_tiers", None)
    if tiers is None:
        tiers = ((rules.upper_bonus_threshold, rules.upper_bonus),) if rules.upper_bonus else ()
    return tuple((int(t), int(b)) for t, b in tiers)


def needs_flag(rules: RuleSet) -> bool:
    """Does a state need the "five-of-a-kind box holds a score" flag?"""
    return rules.five_box is not None and (
        rules.five_bonus > 0 or any(getattr(b, "needs_five_box", False) for b in rules.boxes))


def served_only(rules: RuleSet) -> bool:
    """Do scores depend on the throw only as "first throw or later" (Generala)?

    Raises the exact engine's one-line refusal for other throw-dependent scoring.
    """
    if not rules.roll_dependent:
        return False
    t = rules.score_tables
    what = f"the exact engine does not handle {rules.key}"
    if any(not np.array_equal(t[i], t[-1]) for i in range(1, len(t))):
        raise ValueError(f"{what}: a box's score differs between the second and later throws "
                         "(only 'served on the first throw' is modelled); simulate it instead")
    if (t[0] < t[-1]).any():
        raise ValueError(f"{what}: a box pays less on the first throw than later; simulate it instead")
    if (t[0] != t[-1])[:, rules.is_upper].any():
        raise ValueError(f"{what}: an upper box's score depends on the throw; simulate it instead")
    return True


def require_solvable(rules: RuleSet, what: str = "the exact engine") -> None:
    """One-line ValueError for rule sets the exact engine cannot solve here (and why).

    >>> from yahtzee_sim.rules import get_rules
    >>> require_solvable(get_rules("yatzy"))
    """
    instead = f"simulate it instead (yahtzee-sim simulate --rules {rules.name})"
    head = f"{what} cannot solve {rules.key}"
    if getattr(rules, "columns", ()):
        raise ValueError(f"{head}: its {len(rules.columns)} columns of {rules.n_boxes} boxes with "
                         f"their own fill orders make 2**{rules.n_boxes} score cards, far more than "
                         f"this machine can hold; {instead}")
    if getattr(rules, "banked_throws", False):
        raise ValueError(f"{head}: banked throws add a throw count to each of its 2**{rules.n_boxes} "
                         f"score cards, far more states than this machine can hold; {instead}")
    served_only(rules)
    tiers = bonus_tiers(rules)
    factors = [f"2**{rules.n_boxes} score cards"]
    if tiers:
        factors.append(f"{tiers[-1][0] + 1} upper totals")
    if needs_flag(rules):
        factors.append(f"2 values of the {rules.five_box} box")
    n = (1 << rules.n_boxes) * (tiers[-1][0] + 1 if tiers else 1) * (2 if needs_flag(rules) else 1)
    limit = memory_limit()
    # before the reachable states are counted: the dense tables, the few int64 arrays over
    # every card that building the space takes and, where every entry is reachable (no upper
    # totals), the states themselves (with upper totals they are checked once counted)
    need = solve_bytes(n, 0 if tiers else n) + BYTES_PER_CARD * (1 << rules.n_boxes)
    space_text = f"its state space of {' times '.join(factors)} ({n / 1e6:,.0f} million)"
    if getattr(rules, "card_score", None) is not None or getattr(rules, "card_points", None) is not None:
        # first, and the same on every machine: no memory would let a state hold the card's points
        raise ValueError(f"{head}: its score or points depend on the whole finished card, so a "
                         f"state would have to hold every box's points; and {space_text} needs about "
                         f"{need / 1e9:,.1f} GB to solve; {instead}")
    if limit is not None and need > limit:
        raise ValueError(f"{head}: {space_text} needs {_memory_text(need, limit)}; {instead}")


def estimate_states(rules: RuleSet) -> int:
    """The number of solved states of ``rules``, counted without building the space
    (milliseconds, where :func:`state_space` takes minutes on the largest games): the
    classes of upper totals of each set of filled upper boxes, times the other boxes'
    cards, times the five-box flag where it is filled.

    >>> from yahtzee_sim.rules import get_rules
    >>> estimate_states(get_rules("yahtzee")), state_space(get_rules("yahtzee")).n_states   # a few unreachable
    (314880, 314876)
    """
    require_solvable(rules)
    tiers = bonus_tiers(rules)
    cap = tiers[-1][0] if tiers else 0
    n_u = cap + 1
    upper_boxes = np.flatnonzero(rules.is_upper)
    faces = [int(f) for f in rules.upper_face[upper_boxes]]
    n_up, n_low = len(upper_boxes), rules.n_boxes - len(upper_boxes)

    def sums(face_list):
        out = {0}
        for f in face_list:
            out = {a + c * f for a in out for c in range(rules.n_dice + 1)}
        return np.array(sorted(out), dtype=np.int64)

    classes = 0
    for sub in range(1 << n_up):
        reach = np.unique(np.minimum(sums([faces[j] for j in range(n_up) if sub >> j & 1]), cap))
        adds = sums([faces[j] for j in range(n_up) if not sub >> j & 1])
        keys = [np.zeros(n_u, dtype=np.int64)]
        for threshold, _ in tiers:
            pos = np.searchsorted(adds, np.maximum(threshold - np.arange(n_u), 0))
            keys.append(np.where(pos < len(adds), adds[np.minimum(pos, len(adds) - 1)], -1))
        classes += len({tuple(int(k[u]) for k in keys) for u in reach})
    cards = classes * (1 << n_low)
    if needs_flag(rules):   # the flag doubles the states of cards with the five box filled: half of them
        cards += cards // 2
    return int(cards)


@functools.lru_cache(maxsize=32)
def state_space(rules: RuleSet) -> StateSpace:
    """Build (once per rule set) the reachable state space."""
    require_solvable(rules)
    n_boxes = rules.n_boxes
    tiers = bonus_tiers(rules)
    cap = tiers[-1][0] if tiers else 0
    n_u = cap + 1
    n_flag = 2 if needs_flag(rules) else 1
    five_bit = (1 << rules.five_box_index) if rules.five_box is not None else 0
    upper_boxes = np.flatnonzero(rules.is_upper)
    faces = rules.upper_face[upper_boxes].astype(np.int64)
    n_up = len(upper_boxes)

    masks_all = np.arange(1 << n_boxes, dtype=np.int64)
    upper_sub = np.zeros(1 << n_boxes, dtype=np.int64)
    for j, b in enumerate(upper_boxes):
        upper_sub |= ((masks_all >> b) & 1) << j

    def sums(face_list):
        out = {0}
        for f in face_list:
            out = {a + c * f for a in out for c in range(rules.n_dice + 1)}
        return np.array(sorted(out), dtype=np.int64)

    cls_idx = np.full((1 << n_up, n_u), -1, dtype=np.int64)
    rep_u = []
    for sub in range(1 << n_up):
        filled_faces = [faces[j] for j in range(n_up) if sub >> j & 1]
        open_faces = [faces[j] for j in range(n_up) if not sub >> j & 1]
        reach = np.unique(np.minimum(sums(filled_faces), cap))
        adds = sums(open_faces)
        keys = [np.zeros(n_u, dtype=np.int64)]
        for threshold, _ in tiers:                      # per tier: smallest addition >= need
            need = np.maximum(threshold - np.arange(n_u), 0)
            pos = np.searchsorted(adds, need)
            keys.append(np.where(pos < len(adds), adds[np.minimum(pos, len(adds) - 1)], -1))
        key = [tuple(int(k[uu]) for k in keys) for uu in range(n_u)]
        classes = {}
        for uu in reach[::-1]:                          # representative: largest reachable
            classes.setdefault(key[uu], int(uu))
        reps = sorted(classes.values())
        rep_u.append(np.array(reps, dtype=np.int64))
        rep_key = {key[r]: i for i, r in enumerate(reps)}
        cls_idx[sub] = [rep_key.get(k, -1) for k in key]

    # reachable masks, level by level, through the legal boxes
    levels = [np.zeros(1, dtype=np.int64)]
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    for _ in range(n_boxes):
        m = levels[-1]
        filled = (m[:, None] & bits) != 0
        legal = rules.legal_boxes(filled)
        nxt = (m[:, None] | bits)[legal]
        levels.append(np.unique(nxt))
    space = StateSpace(rules, n_boxes, cap, n_u, n_flag, five_bit, upper_sub, cls_idx,
                       tuple(rep_u), tuple(levels))
    limit = memory_limit()
    need = solve_bytes(space.size, space.n_states)
    if limit is not None and need > limit:
        raise ValueError(f"the exact engine cannot solve {rules.key}: its {space.n_states:,} reachable "
                         f"states need {_memory_text(need, limit)}; simulate it instead "
                         f"(yahtzee-sim simulate --rules {rules.name})")
    return space


@dataclass(frozen=True, eq=False)
class TurnModel:
    """Per rule set constants for evaluating one turn of many states at once."""

    rules: RuleSet
    space: StateSpace
    lat: Lattice
    dtype: np.dtype
    special_pos: np.ndarray     # roll-block positions of five-of-a-kind rolls
    special_rolls: np.ndarray   # their dice-table roll indices
    box_rows: tuple             # per box: absolute rows (non-special rolls) it can score on,
                                # or None for the whole roll block
    box_vals: tuple             # lower box: scores (dtype) on those rows; upper box: face counts
    upper_boxes: np.ndarray     # indices of the upper boxes
    upper_col: np.ndarray       # (B,) column of each upper box among them, -1 for lower boxes
    served: bool = False        # scores differ on the first throw (Generala's "served")
    served_boxes: tuple = ()    # per such lower box: (box, absolute rows, first-throw scores)

    @property
    def n_keeps(self) -> int:
        return self.lat.n_keeps


@functools.lru_cache(maxsize=32)
def turn_model(rules: RuleSet, dtype) -> TurnModel:
    """Constants of :func:`turn_values` for ``rules`` in ``dtype``."""
    dtype = np.dtype(dtype)
    space = state_space(rules)
    lat = lattice(rules.dice)
    rb = lat.level_slices[rules.n_dice]
    roll_at = lat.roll_at
    table = rules.score_table[roll_at].astype(np.int64)          # (R, B) in block order
    counts = rules.dice.roll_counts[roll_at].astype(np.int64)
    if rules.five_box is not None:
        special = rules.five_face[roll_at] > 0
    else:
        special = np.zeros(len(roll_at), dtype=bool)
    rows, vals = [], []
    dense_rows = DENSE_FRACTION * len(roll_at)
    for b in range(rules.n_boxes):
        f = int(rules.upper_face[b])
        if f:
            if not np.array_equal(table[:, b], counts[:, f - 1] * f):
                raise ValueError(f"upper box {rules.box_names[b]!r} must score the sum of its face")
            sel = (counts[:, f - 1] > 0) & ~special
            full = counts[:, f - 1]
        else:
            if (table[:, b] < 0).any():
                raise ValueError(f"box {rules.box_names[b]!r} scores below zero")
            sel = (table[:, b] > 0) & ~special
            full = table[:, b].astype(dtype)
        if sel.sum() > dense_rows:
            # the whole block: rows where the box scores nothing give its scratch value,
            # never better than the turn's best scratch; five-of-a-kind rows are redone later
            rows.append(None)
            vals.append(full)
        else:
            rows.append(np.flatnonzero(sel) + rb.start)
            vals.append(full[sel])
    for b, box in enumerate(rules.boxes):
        if getattr(box, "needs_five_box", False) and ((table[:, b] > 0) & ~special).any():
            raise ValueError(f"the exact engine needs box {box.name!r} (paying only while the "
                             f"{rules.five_box} box holds a score) to score only on {rules.n_dice} of a kind")
    served = served_only(rules)
    served_boxes = []
    if served:
        first = rules.score_tables[0][roll_at].astype(np.int64)
        for b in np.flatnonzero((first != table).any(axis=0)):
            sel = (first[:, b] > 0) & ~special
            if sel.any():
                served_boxes.append((int(b), np.flatnonzero(sel) + rb.start, first[sel, b].astype(dtype)))
    upper_boxes = np.flatnonzero(rules.is_upper)
    upper_col = np.full(rules.n_boxes, -1, dtype=np.int64)
    upper_col[upper_boxes] = np.arange(len(upper_boxes))
    special_pos = np.flatnonzero(special)
    return TurnModel(rules, space, lat, dtype, special_pos + rb.start, roll_at[special_pos],
                     tuple(rows), tuple(vals), upper_boxes, upper_col, served, tuple(served_boxes))


DENSE_FRACTION = 0.65
"""A box scoring on more than this fraction of the rolls is updated on the whole
roll block in place (no gather/scatter of rows)."""


def _gather(table: np.ndarray, idx: np.ndarray, ok: np.ndarray) -> np.ndarray:
    return np.where(ok, table[np.where(ok, idx, 0)], 0.0)


def _first_near_max(v: np.ndarray, vmax: np.ndarray) -> np.ndarray:
    """Index of the first entry of each row within TIE_TOL of the row's max."""
    return np.argmax(v >= (vmax - TIE_TOL)[:, None], axis=1)


FIVE_ROWS = "fast"
"""How five-of-a-kind rolls are valued: ``"fast"`` (per roll, from the turn's other
tables) or ``"generic"`` (every box through full index arithmetic); both use
:meth:`RuleSet.turn_options` for legality, joker scores and bonuses, and the tests
check that they agree."""


def _five_rows_generic(model, *, mask, filled, flag, u, nxt, c, values, variances, throws=None):
    """(k5, U) values relative to ``c`` (and second moments) of the five-of-a-kind rolls
    (made on throw ``throws``; default: a later throw than the first)."""
    rules, space = model.rules, model.space
    n_u, nf, cap, n_boxes = space.n_u, space.n_flag, space.cap, space.n_boxes
    n = len(u)
    k5 = len(model.special_rolls)
    rolls = np.tile(model.special_rolls, n)
    rep = np.repeat(np.arange(n), k5)
    thr = None if throws is None else np.full(len(rolls), throws)
    legal5, sc5, bonus5 = rules.turn_options(filled[rep], flag[rep].astype(bool), rolls, throws=thr)
    sc5 = sc5.astype(np.int64)
    gain5 = sc5 + rules.upper_bonus_gain(u[rep], sc5) + bonus5[:, None]
    u_next = np.minimum(u[rep, None] + np.where(rules.is_upper, sc5, 0), cap)
    f_next = flag[rep, None]
    if nf == 2:
        is_five_box = np.arange(n_boxes) == rules.five_box_index
        f_next = f_next | (is_five_box & (sc5 > 0))
    idx5 = (nxt[rep] * n_u + u_next) * nf + f_next
    val5 = np.where(legal5, gain5 + values[np.where(legal5, idx5, 0)] - c[rep, None], -np.inf)
    b5 = _first_near_max(val5, val5.max(axis=1))
    z5 = val5.max(axis=1)                               # the value: the exact max
    zf = val5[np.arange(len(rep)), b5]                  # the box followed (ties: the first)
    q5 = None
    if variances is not None:
        q5 = (zf * zf + variances[idx5[np.arange(len(rep)), b5]]).reshape(n, k5).T
    return z5.reshape(n, k5).T, q5


def _five_rows(model, *, mask, filled, flag, u, nxt, c, values, variances, v0, var0, w5, wv5,
               kernels=None, v0c=None):
    """As :func:`_five_rows_generic`, assembled from tables the turn already has.

    ``turn_options`` runs once per distinct (mask, flag) of the chunk (it does not
    depend on the upper total). A box's candidate is then: its scratch value when it
    scores 0; for the upper box of the rolled face, the count-5 value ``w5``; for a
    lower box, its (joker) score plus its scratch value; for the five-of-a-kind box
    scoring its full value, the next state with the flag set. With ``kernels`` (the
    module :mod:`._solver_kernels`), the loop over the rolls is compiled. ``v0c``, if
    given, is ``v0 - c[:, None]`` (the compiled tables make it; ``v0`` is then unused);
    ``nxt`` None: the next masks are made from ``mask``.
    """
    rules, space = model.rules, model.space
    n_u, nf, n_boxes = space.n_u, space.n_flag, space.n_boxes
    n = len(u)
    k5 = len(model.special_rolls)
    key = mask * nf + flag
    # one group per run of equal (mask, flag): a solver chunk is sorted by them, so a run
    # is a group (no sort needed); a key seen in two runs is merely evaluated twice
    starts = np.empty(n, dtype=bool)
    starts[:1] = True
    np.not_equal(key[1:], key[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    ginv = np.cumsum(starts) - 1
    g = len(first)
    rep = np.repeat(first, k5)
    legal5, sc5, bonus5 = rules.turn_options(filled[rep], flag[rep].astype(bool),
                                             np.tile(model.special_rolls, g))
    legal5 = legal5.reshape(g, k5, n_boxes)
    sc5 = sc5.reshape(g, k5, n_boxes)
    bonus5 = bonus5.reshape(g, k5).astype(np.float64)
    if v0c is None:
        v0c = v0 - c[:, None]
    five = rules.five_box_index
    lower = ~rules.is_upper
    if nf == 2:
        nxt_five = mask | (np.int64(1) << five) if nxt is None else nxt[:, five]
        idx1 = (nxt_five * n_u + u) * nf + 1
        full_open = ~filled[:, five]
        v1 = np.where(full_open, values[np.where(full_open, idx1, 0)], -np.inf) - c
        var1 = _gather(variances, idx1, full_open) if variances is not None else None
    if kernels is not None:
        second = variances is not None
        none = np.zeros((1, 1))
        return kernels.five_rows(legal5, sc5, bonus5, ginv, v0c, w5, wv5, var0 if second else none,
                                 v1 if nf == 2 else none[0], var1 if nf == 2 and second else none[0],
                                 lower, five if nf == 2 else -1, second, TIE_TOL)
    z5 = np.empty((k5, n))
    q5 = np.empty((k5, n)) if variances is not None else None
    ar = np.arange(n)
    for j in range(k5):
        leg = legal5[ginv, j]
        sc = sc5[ginv, j]
        cand = np.where(lower, v0c + sc, np.where(sc > 0, w5, v0c))
        if nf == 2:
            full = sc[:, five] > 0
            cand[:, five] = np.where(full, sc[:, five] + v1, cand[:, five])
        cand = np.where(leg, cand, -np.inf)
        best = cand.max(axis=1)
        z5[j] = best + bonus5[ginv, j]                  # the value: the exact max
        if q5 is not None:
            pick = _first_near_max(cand, best)          # the box followed (ties: the first)
            zf = cand[ar, pick] + bonus5[ginv, j]
            var = np.where(lower, var0, np.where(sc > 0, wv5, var0))
            if nf == 2:
                var[:, five] = np.where(full, var1, var[:, five])
            q5[j] = zf * zf + var[ar, pick]
    return z5, q5


KERNELS = "numba"
"""How :func:`turn_values` solves when asked for ``compiled`` work (the solver):
``"numba"`` (compiled kernels, :mod:`._solver_kernels`) or ``"numpy"``. Both do the
same floating-point operations in the same order (the tests check that the tables
are bit-identical); the NumPy path also serves ``plan=True`` and small calls."""


@dataclass(frozen=True, eq=False)
class KernelPlan:
    """Constant index arrays of the compiled kernels for one turn model.

    Lattice: ``level_start`` (n_dice + 2,) first row of each keep size; per keep, its
    children (one die more, ascending position: the order the sparse product sums
    them) ``child_pos[child_ptr[k]:child_ptr[k + 1]]`` and its parents in slot order
    ``par_pos[par_ptr[k]:par_ptr[k + 1]]``. Final roll: per roll-block row, the
    boxes it scores in (box order) as ``ent_row`` (row of the per-chunk candidate
    table: upper box ``j`` with ``k`` dice of its face is ``k * n_upper + j``, lower
    box ``i`` is ``(n_dice + 1) * n_upper + i``), ``ent_add`` (the lower box's
    score, 0 for upper boxes) and ``ent_box`` (the box). Upper boxes: ``upper_points``
    (n_dice + 1, n_upper) points of ``k`` dice of the face, ``upper_gain`` (n_dice + 1,
    n_u, n_upper) those points plus the upper bonus they earn from each capped upper total.
    """

    level_start: np.ndarray
    child_ptr: np.ndarray
    child_pos: np.ndarray
    par_ptr: np.ndarray
    par_pos: np.ndarray
    row_ptr: np.ndarray
    ent_row: np.ndarray
    ent_add: np.ndarray
    lower_boxes: np.ndarray
    special_rows: np.ndarray
    upper_points: np.ndarray
    upper_gain: np.ndarray
    ent_box: np.ndarray


@functools.lru_cache(maxsize=32)
def kernel_plan(model: TurnModel) -> KernelPlan:
    """The :class:`KernelPlan` of ``model`` (cached)."""
    lat, rules = model.lat, model.rules
    rb = lat.level_slices[lat.n_dice]
    level_start = np.array([sl.start for sl in lat.level_slices] + [lat.n_keeps], dtype=np.int64)
    child_lists = [[] for _ in range(lat.n_keeps)]
    for s in range(lat.n_dice):
        lo = lat.level_slices[s].start
        for i, row in enumerate(lat.children[s]):
            child_lists[lo + i] = sorted(int(c) for c in row)
            assert len(set(child_lists[lo + i])) == len(row)    # one child per face
    n_child = np.array([len(c) for c in child_lists], dtype=np.int64)
    child_ptr = np.concatenate([[0], np.cumsum(n_child)]).astype(np.int64)
    child_pos = np.array([c for cl in child_lists for c in cl], dtype=np.int64)
    par_lists = [[] for _ in range(lat.n_keeps)]
    for s in range(1, lat.n_dice + 1):
        lo = lat.level_slices[s].start
        for n_j, par in lat.parent_slots[s]:
            for i in range(n_j):
                par_lists[lo + i].append(int(par[i]))
    par_ptr = np.concatenate([[0], np.cumsum([len(p) for p in par_lists])]).astype(np.int64)
    par_pos = np.array([p for pl in par_lists for p in pl], dtype=np.int64)

    n_up = len(model.upper_boxes)
    lower_boxes = np.flatnonzero(model.upper_col < 0)
    lower_col = np.full(rules.n_boxes, -1, dtype=np.int64)
    lower_col[lower_boxes] = np.arange(len(lower_boxes))
    n_rows = rb.stop - rb.start
    entries = [[] for _ in range(n_rows)]           # per row: (table row, add), box order
    for b in range(rules.n_boxes):
        rows, vals = model.box_rows[b], np.asarray(model.box_vals[b])
        if len(vals) == 0:
            continue
        rel = np.arange(n_rows) if rows is None else rows - rb.start
        j = model.upper_col[b]
        for r, v in zip(rel.tolist(), vals.tolist()):
            if j >= 0:
                if v > 0:                           # count 0: the scratch value, never better
                    entries[r].append((int(v) * n_up + j, 0.0))
            elif v > 0:                             # scores 0: its scratch value, never better
                entries[r].append(((rules.n_dice + 1) * n_up + lower_col[b], v))
    special = model.special_pos - rb.start
    for r in special.tolist():
        entries[r] = []                             # five of a kind: set afterwards
    row_ptr = np.concatenate([[0], np.cumsum([len(e) for e in entries])]).astype(np.int64)
    ent_row = np.array([t for e in entries for t, _ in e], dtype=np.int64)
    ent_add = np.array([a for e in entries for _, a in e], dtype=model.dtype)
    row_box = np.concatenate([np.tile(model.upper_boxes, rules.n_dice + 1), lower_boxes]).astype(np.int64)
    ent_box = row_box[ent_row]                      # the box each entry scores in
    ub = model.upper_boxes
    n_u = model.space.n_u
    faces = rules.upper_face[ub].astype(np.int64)
    points = np.arange(rules.n_dice + 1, dtype=np.int64)[:, None] * faces[None, :]
    gain = np.zeros((rules.n_dice + 1, n_u, len(ub)), dtype=np.int64)
    pts_all = np.zeros((n_u, rules.n_boxes), dtype=np.int64)
    for k in range(1, rules.n_dice + 1):          # as turn_values: pts + upper_bonus_gain
        pts_all[:, ub] = points[k]
        gain[k] = points[k] + rules.upper_bonus_gain(np.arange(n_u, dtype=np.int64), pts_all)[:, ub]
    return KernelPlan(level_start, child_ptr, child_pos, par_ptr, par_pos, row_ptr, ent_row,
                      ent_add, lower_boxes, special.astype(np.int64), points, gain, ent_box)


def _kernels():
    """The module of compiled kernels, or None when :data:`KERNELS` is ``"numpy"`` or
    numba cannot be imported (the NumPy path gives the same tables, about 3x slower)."""
    global KERNELS
    if KERNELS != "numba":
        return None
    try:
        from . import _solver_kernels
    except ImportError:  # pragma: no cover - numba is a dependency
        KERNELS = "numpy"
        return None
    return _solver_kernels


def turn_values(model: TurnModel, values: np.ndarray, variances: np.ndarray | None,
                mask: np.ndarray, u: np.ndarray, flag: np.ndarray, *, plan: bool | str = False,
                compiled: bool = False):
    """Optimal value (and variance) of the rest of the game from U states.

    ``values``/``variances`` are the flat dense tables, filled for every state
    one box fuller than these. Returns ``(value, variance)`` (U,) float64; with
    ``plan=True`` (means only) returns ``(value, keep_values)`` where
    ``keep_values[j]`` is the (K, U) expected value of each keep (solver order)
    with ``j`` rerolls left after it, and ``keep_values`` also holds the scratch
    offset ``c`` that the values are relative to; ``plan="keeps"``: the keep values only
    (``value`` None: the last reroll's sweep and the first roll's mean are skipped, and
    the last ``keep_values`` is the scratch array itself). ``compiled`` (without ``plan``,
    or with ``plan="keeps"``: a decision table's build): use the compiled kernels (see :data:`KERNELS`; loading them the first time in a
    process takes about 0.3 s, so only the solver asks for them).
    """
    kx = _kernels() if compiled and (not plan or plan == "keeps") else None
    if kx is not None:
        if plan:
            return _turn_keep_values_compiled(kx, model, values, mask, u, flag)
        return _turn_values_compiled(kx, model, values, variances, mask, u, flag)
    rules, space, lat = model.rules, model.space, model.lat
    dt = model.dtype
    second = variances is not None and not plan
    n_boxes, n_u, nf, cap = space.n_boxes, space.n_u, space.n_flag, space.cap
    mask = np.asarray(mask, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    flag = np.asarray(flag, dtype=np.int64)
    n = len(mask)
    ar = np.arange(n)
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    filled = (mask[:, None] & bits) != 0
    legal = rules.legal_boxes(filled)
    nxt = mask[:, None] | bits                                   # (U, B)

    # Scratch (score 0) in every legal box; c = the best, all values relative to it.
    idx0 = (nxt * n_u + u[:, None]) * nf + flag[:, None]
    v0 = np.where(legal, values[np.where(legal, idx0, 0)], -np.inf)
    c = v0.max(axis=1)
    best0 = _first_near_max(v0, c)
    rb = lat.level_slices[lat.n_dice]
    z = np.empty((lat.n_keeps, n), dtype=dt)
    z[rb] = 0.0                                   # the best scratch, relative to itself
    if second:
        # q: second moment of the box followed (ties: the first met)
        var0 = _gather(variances, idx0, legal)
        q = np.empty((lat.n_keeps, n), dtype=dt)
        q[rb] = var0[ar, best0].astype(dt)[None, :]

    # Upper boxes: one value per count of the face (gain + next value), all boxes at once.
    # Upper boxes: one value per count of the face (gain + next value), all boxes at once;
    # count 0 is the box's scratch value.
    ub = model.upper_boxes
    up_ok = legal[:, ub]
    w5 = np.full((n, n_boxes), -np.inf)
    wv5 = np.zeros((n, n_boxes))
    if up_ok.any():
        faces = rules.upper_face[ub].astype(np.int64)
        wz = np.empty((rules.n_dice + 1, len(ub), n), dtype=dt)
        wv = np.empty((rules.n_dice + 1, len(ub), n), dtype=dt) if second else None
        wz[0] = np.where(up_ok, v0[:, ub] - c[:, None], -np.inf).T
        if second:
            wv[0] = var0[:, ub].T
        pts_all = np.zeros(n_boxes, dtype=np.int64)
        for k in range(1, rules.n_dice + 1):
            pts = k * faces
            pts_all[ub] = pts
            gain = pts + rules.upper_bonus_gain(u, np.broadcast_to(pts_all, (n, n_boxes)))[:, ub]
            idx = (nxt[:, ub] * n_u + np.minimum(u[:, None] + pts, cap)) * nf + flag[:, None]
            wk = np.where(up_ok, gain + values[np.where(up_ok, idx, 0)] - c[:, None], -np.inf)
            wz[k] = wk.T
            if second:
                vk = _gather(variances, idx, up_ok)
                wv[k] = vk.T
            if k == rules.n_dice:
                w5[:, ub] = wk
                if second:
                    wv5[:, ub] = vk

    if second and up_ok.any():
        wq = wz * wz                    # second moments of the upper boxes' count values
        wq += wv
    rb_view = slice(rb.start, rb.stop)
    for b in range(n_boxes):
        ok = legal[:, b]
        rows = model.box_rows[b]
        if len(model.box_vals[b]) == 0 or not ok.any():
            continue
        j = model.upper_col[b]
        if j >= 0:
            cnt = model.box_vals[b]
            zc = wz[cnt, j]
            if second:
                qc = wq[cnt, j]
        else:
            a = np.where(ok, v0[:, b] - c, -np.inf).astype(dt)
            zc = model.box_vals[b][:, None] + a[None, :]
            if second:
                qc = zc * zc
                qc += var0[:, b].astype(dt)[None, :]
        if rows is None:            # most rows: work on the whole roll block in place
            if second:
                select_tied(z[rb_view], q[rb_view], zc, qc)
            else:
                np.maximum(z[rb_view], zc, out=z[rb_view])
            continue
        cur = z[rows]
        if second:
            qcur = q[rows]
            select_tied(cur, qcur, zc, qc)
            q[rows] = qcur
        else:
            np.maximum(cur, zc, out=cur)
        z[rows] = cur

    # Five of a kind: jokers and bonuses, exactly through RuleSet.turn_options.
    if len(model.special_rolls):
        ctx = dict(mask=mask, filled=filled, flag=flag, u=u, nxt=nxt, c=c, values=values,
                   variances=variances if second else None)
        if FIVE_ROWS == "generic":
            z5, q5 = _five_rows_generic(model, **ctx)
        else:
            z5, q5 = _five_rows(model, v0=v0, var0=var0 if second else None,
                                w5=w5, wv5=wv5, **ctx)
        z[model.special_pos] = z5.astype(dt)
        if second:
            q[model.special_pos] = q5.astype(dt)

    served_rows = None
    if model.served:                # the dice of the first throw: served scores
        ctx = dict(mask=mask, filled=filled, flag=flag, u=u, nxt=nxt, c=c, values=values,
                   variances=variances if second else None)
        served_rows = _served_rows(model, z[rb], q[rb] if second else None,
                                   legal, v0, var0 if second else None, ctx)
        if rules.n_rolls == 1:
            z[rb], q_rb = served_rows[0], served_rows[1]
            if second:
                q[rb] = q_rb

    if plan:
        keep_values = [None] * rules.n_rolls
        for j in range(1, rules.n_rolls):
            expect(lat, z)
            if served_rows is not None and j == rules.n_rolls - 1:
                z[rb] = served_rows[0]      # holding all dice now keeps them served
            if plan == "keeps" and j == rules.n_rolls - 1:
                keep_values[j] = z          # nothing changes it any more (a decision table's build)
                return None, (keep_values, c)
            keep_values[j] = z.copy()
            best_subkeep_mean(lat, z)
        ez = first_roll_mean(lat, z[rb])
        return c + ez, (keep_values, c)

    for j in range(1, rules.n_rolls):
        expect(lat, z)
        if second:
            expect(lat, q)
        if served_rows is not None and j == rules.n_rolls - 1:
            z[rb] = served_rows[0]          # holding all dice now keeps them served
            if second:
                q[rb] = served_rows[1]
        if second:
            best_subkeep_pair(lat, z, q)
        else:
            best_subkeep_mean(lat, z)
    ez = first_roll_mean(lat, z[rb])
    if not second:
        return c + ez, None
    eq = first_roll_mean(lat, q[rb])
    return c + ez, np.maximum(eq - ez * ez, 0.0)


def _filled(mask: np.ndarray, n_boxes: int) -> np.ndarray:
    """(N, n_boxes) bool: the boxes each filled mask (int64, >= 0) holds, its bits unpacked
    (``(mask[:, None] & bits) != 0`` in half the CPU: a solver chunk's masks).

    >>> _filled(np.array([5, 0]), 3).tolist()
    [[True, False, True], [False, False, False]]
    """
    raw = np.ascontiguousarray(mask, dtype="<u8").view(np.uint8).reshape(-1, 8)[:, :(n_boxes + 7) // 8]
    return np.unpackbits(raw, axis=1, count=n_boxes, bitorder="little").view(bool)


def _turn_values_compiled(kx, model, values, variances, mask, u, flag):
    """:func:`turn_values` (no plan) through the compiled kernels ``kx``: the same
    floating-point operations in the same order as the NumPy path. Dice served on the
    first throw (Generala's few thousand states) and a single state (NumPy sums its
    first roll pairwise) take the NumPy path."""
    if model.served or len(mask) < 2:
        return turn_values(model, values, variances, mask, u, flag)
    rules, lat = model.rules, model.lat
    kp = kernel_plan(model)
    dt = model.dtype
    second = variances is not None
    mask = np.asarray(mask, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    flag = np.asarray(flag, dtype=np.int64)
    n = len(mask)
    tz, tv, q0p, c, legal, z5, q5, n_pad = _compiled_final_rows(kx, model, values, variances, mask, u, flag)
    ez = np.empty(n_pad)
    eq = np.empty(n_pad) if second else ez
    kx.turn_tiles(tz, tv, q0p, second, kp.row_ptr, kp.ent_row, kp.ent_add, kp.ent_box,
                  np.ascontiguousarray(legal), kp.special_rows, z5, q5, rules.n_rolls - 1, kp.level_start, kp.child_ptr, kp.child_pos, dt.type(lat.n_faces),
                  kp.par_ptr, kp.par_pos, dt.type(TIE_TOL), lat.roll_mult, lat.n_outcomes, ez, eq)
    ez = ez[:n]
    if not second:
        return c + ez, None
    eq = eq[:n]
    return c + ez, np.maximum(eq - ez * ez, 0.0)


def _compiled_final_rows(kx, model, values, variances, mask, u, flag):
    """The compiled kernels' final-roll tables of U states (int64 ``mask``, ``u``,
    ``flag``; ``variances`` None: means only), what their tile loops start from:
    ``(tz, tv, q0, c, legal, z5, q5, n_pad)``, padded to whole tiles (the padding
    columns 0, then ignored)."""
    rules, space = model.rules, model.space
    kp = kernel_plan(model)
    dt = model.dtype
    second = variances is not None
    n = len(mask)
    n_pad = -(-n // kx.TILE) * kx.TILE
    filled = _filled(mask, space.n_boxes)
    legal = rules.legal_boxes(filled)
    n_tab = (rules.n_dice + 1) * len(model.upper_boxes) + len(kp.lower_boxes)
    tz = np.empty((n_tab, n_pad), dtype=dt)
    tz[:, n:] = 0
    tv = tz
    if second:
        tv = np.empty((n_tab, n_pad), dtype=dt)
        tv[:, n:] = 0
    v0c, c, var0, w5, wv5, q0 = kx.turn_tables(
        values, variances if second else values, second, mask, u, flag, legal, space.n_u,
        space.n_flag, space.cap, model.upper_boxes, kp.upper_points, kp.upper_gain,
        kp.lower_boxes, tz, tv, TIE_TOL)
    empty = np.empty((0, n), dtype=dt)
    z5 = q5 = empty
    if len(model.special_rolls):
        ctx = dict(mask=mask, filled=filled, flag=flag, u=u, nxt=None, c=c, values=values,
                   variances=variances)
        if FIVE_ROWS == "generic":
            ctx["nxt"] = mask[:, None] | (np.int64(1) << np.arange(space.n_boxes, dtype=np.int64))
            z5, q5 = _five_rows_generic(model, **ctx)
        else:
            z5, q5 = _five_rows(model, v0=None, v0c=v0c, var0=var0 if second else None, w5=w5,
                                wv5=wv5, kernels=kx, **ctx)
        z5 = z5.astype(dt)
        q5 = q5.astype(dt) if second else empty
    q0p = np.zeros(n_pad, dtype=dt)
    q0p[:n] = q0
    return tz, tv, q0p, c, legal, z5, q5, n_pad


def _turn_keep_values_compiled(kx, model, values, mask, u, flag):
    """:func:`turn_values` with ``plan="keeps"`` through the compiled kernels
    (:func:`._solver_kernels.turn_keep_tiles`): the same keep values to the bit (the
    operations of the NumPy path in the same order), in about a quarter of the CPU.
    Dice served on the first throw and a single state take the NumPy path."""
    if model.served or len(mask) < 2 or model.rules.n_rolls < 2:
        return turn_values(model, values, None, mask, u, flag, plan="keeps")
    rules, lat = model.rules, model.lat
    kp = kernel_plan(model)
    dt = model.dtype
    mask = np.asarray(mask, dtype=np.int64)
    u = np.asarray(u, dtype=np.int64)
    flag = np.asarray(flag, dtype=np.int64)
    n = len(mask)
    tz, _, _, c, legal, z5, _, n_pad = _compiled_final_rows(kx, model, values, None, mask, u, flag)
    out = np.empty((rules.n_rolls - 1, lat.n_keeps, n_pad), dtype=dt)
    kx.turn_keep_tiles(tz, kp.row_ptr, kp.ent_row, kp.ent_add, kp.ent_box, np.ascontiguousarray(legal),
                       kp.special_rows, z5, rules.n_rolls - 1, kp.level_start, kp.child_ptr, kp.child_pos,
                       dt.type(lat.n_faces), kp.par_ptr, kp.par_pos, out)
    keep_values = [None] + [out[j, :, :n] for j in range(rules.n_rolls - 1)]
    return None, (keep_values, c)


def _served_rows(model, z_rb, q_rb, legal, v0, var0, ctx):
    """Final values (R, U) relative to ``c`` (and second moments) of dice served on
    the first throw, from the later-throw ones ``z_rb`` (``q_rb``; None for means
    only): the boxes that pay more when served are offered
    again at their served scores (a box never pays less served: :func:`served_only`).
    ``ctx`` holds the turn's arrays for :func:`_five_rows_generic`."""
    rb = model.lat.level_slices[model.lat.n_dice]
    second = q_rb is not None
    c, dt = ctx["c"], model.dtype
    zs = z_rb.copy()
    qs = q_rb.copy() if second else None
    for b, rows, vals in model.served_boxes:
        ok = legal[:, b]
        if not ok.any():
            continue
        a = np.where(ok, v0[:, b] - c, -np.inf).astype(dt)
        zc = vals[:, None] + a[None, :]
        r = rows - rb.start
        cur = zs[r]
        if second:
            qc = zc * zc
            qc += var0[:, b].astype(dt)[None, :]
            qcur = qs[r]
            select_tied(cur, qcur, zc, qc)
            qs[r] = qcur
        else:
            np.maximum(cur, zc, out=cur)
        zs[r] = cur
    if len(model.special_rolls):
        z5, q5 = _five_rows_generic(model, **ctx, throws=1)
        sp = model.special_pos - rb.start
        zs[sp] = z5.astype(dt)
        if second:
            qs[sp] = q5.astype(dt)
    return zs, qs
