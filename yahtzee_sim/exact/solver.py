"""Optimal solitaire play: backward induction over every reachable state.

Over 600 lines: the solve (its levels shared by forked processes), the
:class:`Solution` it returns and the checks a cached table must pass belong together:
a change to the tables' layout changes all three.

A state is (filled boxes, upper total capped at the bonus threshold, and, when
the rule set pays a five-of-a-kind bonus, whether that box holds its full
value). Levels of filled-box masks are solved from the full card backwards;
each level is one vectorized computation over all its states (columns), with
the per-turn keep/roll widget walking the keep lattice (see
:mod:`yahtzee_sim.exact._solver_lattice`). Box values on the final roll use
:meth:`RuleSet.turn_options` for five-of-a-kind rolls (jokers, bonuses) and the
plain score table otherwise, with :meth:`RuleSet.upper_bonus_gain` for the
upper bonus, exactly as the simulator does.

The second moment is carried next to the mean: each decision is made by the
mean and the second moment of the chosen action is propagated, so the standard
deviation of the optimal final score is exact. Within a turn both are taken
about a per-state offset (the value of the best zero-score box), which keeps
float32 work accurate; the dense tables are float64.

Precision: every mean is the exact maximum over the choices (no tolerance is
applied to it). With ``dtype=float64`` the tables equal an exact recomputation
to 1e-9 in every state (tests: a plain-Python DP on small games, and one exact
Bellman step on sampled mid-game states of ``yahtzee`` and ``yatzy``); with
``float32`` (the default) the per-turn work is in float32 about a per-state
offset and the tables stay within 1e-4 of float64 in every state (measured:
about 5e-6), so the printed four decimals are the same.

Ties: the second moment is that of a strategy that, among choices whose means
are within ``TIE_TOL`` (1e-4 points) of each other, follows the larger keep (or the
box met first). Exact ties carry rounding noise, and the standard deviation
depends on how ties are broken (by up to 1e-3 here); this rule makes float32 and
float64 agree on it. It picks which near-tied choice is followed, never the
value: the means are maxima.

>>> sol = solve("yacht", options=["fill-in-order"], cache=False)
>>> 100 < sol.mean < 200, sol.sd > 0
(True, True)
>>> import numpy as np
>>> filled = np.zeros((1, sol.rules.n_boxes), bool)
>>> bool(np.isclose(sol.value(filled, [0], [False])[0], sol.mean))
True
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import time
from dataclasses import dataclass, field
from typing import Iterable

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from ..rules import RuleSet, get_rules
from ..forkpool import ForkPool, default_jobs, default_workers, fork_workers, shared_array  # default_workers: importable here as before
from . import cache as _cache
from .space import StateSpace, state_space, turn_model, turn_values
from ..validate import renamed_attribute, renamed_keywords, whole_number

__all__ = ["solve", "Solution", "SOLVER_VERSION", "rules_fingerprint", "cache_path", "default_workers"]

SOLVER_VERSION = 3
"""Bump when the solver's results or file layout change (invalidates caches).

3: means are exact maxima (version 2 let the tie rule lower them by up to 1.5e-5)."""

_DTYPES = {"float32": np.float32, "float64": np.float64}
MIN_STATES_FOR_WORKERS = 20_000
"""Smaller problems are solved in one process (forking costs more than it saves)."""
MIN_STATES_FOR_KERNELS = 20_000
"""Smaller problems are solved by the NumPy path: loading the compiled kernels
(:mod:`._solver_kernels`, the same tables bit for bit) costs about 0.3 s once per
process, more than they save there."""
_MEMO: dict = {}
CHUNK = 4352
"""States solved at once by default (34 tiles of 128): the turn's tiles keep their
lattice in the cache whatever the chunk, so a larger one spends less on the Python
around the kernels. The per-chunk candidate tables are written row by row
(:func:`._solver_kernels.turn_tables`), so their row length no longer matters (2,176,
an odd number of tiles, kept their rows apart in the first-level cache when they
were written a column at a time): at 4,352 ``yatzy`` takes 3-6% and ``yahtzee``
4-7% less CPU than at 2,176, Maxi Yatzy the same (level 10: 2.06-2.09 against
2.03-2.09 CPU us a state); the same tables (benchmarks/RESULTS.md)."""


def rules_fingerprint(rules: RuleSet) -> str:
    """Short hash of everything the solver reads from a rule set.

    Two rule sets with the same key but different scoring (e.g. a test-only
    variant) get different fingerprints, so they never share a cache file.

    >>> from yahtzee_sim.rules import get_rules
    >>> len(rules_fingerprint(get_rules("yatzy")))
    16
    """
    h = hashlib.sha256()
    params = dict(
        key=rules.key, boxes=list(rules.box_names), n_dice=rules.n_dice, n_faces=rules.n_faces,
        n_rolls=rules.n_rolls, threshold=rules.upper_bonus_threshold, bonus=rules.upper_bonus,
        five_box=rules.five_box, five_bonus=rules.five_bonus, joker=rules.joker,
        fill_order=rules.fill_order, upper=rules.upper_face.tolist(),
        joker_points=rules.joker_points.tolist(),
    )
    params.update(rules.fingerprint_extras())   # tiers, columns, ...: empty for the classic games
    h.update(json.dumps(params, sort_keys=True).encode())
    h.update(np.ascontiguousarray(rules.score_table).tobytes())
    return h.hexdigest()[:16]


def _dtype_name(dtype) -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError:
        name = str(dtype)
    if name not in _DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(_DTYPES)}, got {dtype!r}")
    return name


@dataclass(frozen=True, eq=False)
class Solution:
    """Optimal values of every reachable state of a rule set.

    Attributes
    ----------
    rules : the rule set solved.
    dtype : float type of the per-turn work (``"float32"`` or ``"float64"``).
    values, variances : (2**B, cap + 1, n_flag) float64: expected *future* score of
        each state (filled mask, capped upper total, five-box-full flag) under optimal
        play, and its variance; NaN for unreachable states. ``variances`` is None in a
        values-only solution (``solve(..., variance=False)``): :attr:`sd`,
        :meth:`variance` and :meth:`second_moment` then raise ValueError.
    seconds : solver time (0 when loaded from the cache; see ``solve_seconds``).
    solve_seconds : time the original computation took.
    cache : ``"off"``, ``"miss"`` (computed, not found in the cache), ``"hit"`` (loaded
        from disk), ``"memory"`` (already solved in this process) or ``"damaged"`` (a
        bad cache file was found and recomputed).
    levels : per level (boxes filled): masks, states solved, seconds.
    cache_note : one line on what the cache did when it matters: why a file was
        refused, or that the table could not be stored and why (``""`` otherwise).
    """

    rules: RuleSet
    dtype: str
    values: np.ndarray = field(repr=False)
    variances: np.ndarray | None = field(repr=False)
    seconds: float
    solve_seconds: float
    cache: str
    levels: dict = field(repr=False)
    cache_note: str = ""

    @property
    def space(self) -> StateSpace:
        return state_space(self.rules)

    @property
    def mean(self) -> float:
        """The mean (expected) final score of optimal play from a fresh card: the
        project's one word for this number."""
        return float(self.values[0, 0, 0])

    expected_score = renamed_attribute("expected_score", "mean")

    @property
    def has_variances(self) -> bool:
        """Does this solution hold every state's variance (False: solved with
        ``variance=False``, the values only)?

        >>> solve("yacht", options=["fill-in-order"], cache=False, variance=False).has_variances
        False
        """
        return self.variances is not None

    def _variances(self) -> np.ndarray:
        if self.variances is None:
            raise ValueError(f"this solution of {self.rules.key} holds the values only (solved with "
                             "variance=False): solve with variance=True for the sd and the variances")
        return self.variances

    @property
    def sd(self) -> float:
        """Standard deviation of the final score under optimal play (ValueError for a
        values-only solution).

        >>> solve("yacht", options=["fill-in-order"], cache=False, variance=False).sd
        Traceback (most recent call last):
        ...
        ValueError: this solution of yacht+fill-in-order holds the values only (solved with variance=False): solve with variance=True for the sd and the variances
        """
        return math.sqrt(float(self._variances()[0, 0, 0]))

    def _index(self, filled, upper_total, five_box_full):
        return self.space.index(filled, upper_total, five_box_full)

    def value(self, filled, upper_total, five_box_full) -> np.ndarray:
        """(N,) expected future score of N states under optimal play.

        ``filled`` (N, B) bool, ``upper_total`` (N,) upper-section points so far,
        ``five_box_full`` (N,) the five-of-a-kind box holds its full value. NaN for
        states no game can reach (e.g. an upper total the filled boxes cannot make).

        >>> sol = solve("yacht", options=["fill-in-order"], cache=False)
        >>> full = np.ones((1, sol.rules.n_boxes), bool)
        >>> sol.value(full, [70], [True]).tolist()
        [0.0]
        """
        mask, u, flag = self._index(filled, upper_total, five_box_full)
        return self.values[mask, u, flag]

    def variance(self, filled, upper_total, five_box_full) -> np.ndarray:
        """(N,) variance of the future score of N states (same arguments as :meth:`value`).

        >>> sol = solve("yacht", options=["fill-in-order"], cache=False)
        >>> fresh = np.zeros((1, sol.rules.n_boxes), bool)
        >>> bool(np.isclose(np.sqrt(sol.variance(fresh, [0], [False])[0]), sol.sd))
        True
        """
        variances = self._variances()
        mask, u, flag = self._index(filled, upper_total, five_box_full)
        return variances[mask, u, flag]

    def second_moment(self, filled, upper_total, five_box_full) -> np.ndarray:
        """(N,) E[future score squared] of N states (same arguments as :meth:`value`).

        >>> sol = solve("yacht", options=["fill-in-order"], cache=False)
        >>> fresh = np.zeros((1, sol.rules.n_boxes), bool)
        >>> m2 = sol.second_moment(fresh, [0], [False])[0]
        >>> bool(np.isclose(m2, sol.sd ** 2 + sol.mean ** 2))
        True
        """
        v = self.value(filled, upper_total, five_box_full)
        return self.variance(filled, upper_total, five_box_full) + v * v

    def summary(self) -> dict:
        """The headline numbers as a plain dict (``sd`` None for a values-only solution).

        >>> s = solve("yacht", options=["fill-in-order"], cache=False).summary()
        >>> sorted(s)[:4]
        ['cache', 'cache_note', 'dtype', 'expected_score']
        """
        return {"rules": self.rules.key, "mean": self.mean,
                "sd": self.sd if self.has_variances else None,
                "expected_score": self.mean,     # the old name of "mean", kept for scripts
                "seconds": self.seconds, "solve_seconds": self.solve_seconds,
                "cache": self.cache, "cache_note": self.cache_note, "dtype": self.dtype,
                "states": int(np.sum(self.levels["states"]))}

    def to_frame(self) -> "pd.DataFrame":
        """Per level (boxes filled): masks, states solved, seconds, and the mean and
        spread of the optimal future score over that level's solved states.

        >>> f = solve("yacht", options=["fill-in-order"], cache=False).to_frame()
        >>> f.index.name, int(f.loc[0, "masks"])
        ('filled', 1)
        """
        import pandas as pd

        lv = self.levels
        frame = pd.DataFrame({k: np.asarray(lv[k]) for k in
                              ("filled", "masks", "states", "seconds", "value_min", "value_max")})
        return frame.set_index("filled")


def _solve_part(model, values, variances, states, part, n_parts, out_v, out_var, chunk, compiled,
                on_chunk=None, tickets=None):
    """Solve chunks part, part + n_parts, ... of one level's states (balanced work).

    ``on_chunk(states)``, if given, is told after each chunk how many of the level's
    states all parts have solved by then (an estimate: the parts run at one pace).
    With ``tickets`` (a :class:`_Tickets` the solving processes share) the chunks are
    taken in turn instead, each by the first process free: the processes finish a
    level together however their pace differs (another job on a core, the filling of
    the tables); each chunk is computed the same way whoever takes it. ``variances``
    and ``out_var`` None: the values only."""
    m, u, fl = states
    starts = range(part * chunk, len(m), n_parts * chunk) if tickets is None else tickets.starts(chunk, len(m))
    for a in starts:
        b = min(a + chunk, len(m))
        v, var = turn_values(model, values, variances, m[a:b], u[a:b], fl[a:b], compiled=compiled)
        out_v[a:b] = v
        if out_var is not None:
            out_var[a:b] = var
        if on_chunk is not None:
            on_chunk(b if tickets is not None else min((a // (n_parts * chunk) + 1) * n_parts * chunk, len(m)))


TICKET_WAIT_SECONDS = 120.0
"""Longest wait for the chunk counter's lock before the solve gives up (never forever)."""


class _Tickets:
    """The next chunk of a level to take, shared by forked processes (a counter in
    shared memory under a lock)."""

    def __init__(self, ctx):
        self._next = shared_array(1, np.int64)
        self._lock = ctx.Lock()

    def reset(self) -> None:
        """A new level: called while no process is taking chunks."""
        self._next[0] = 0

    def starts(self, chunk: int, n: int):
        """The first state of each chunk this process takes, until none is left."""
        while True:
            # held for microseconds: a wait this long means its holder was killed in it
            if not self._lock.acquire(timeout=TICKET_WAIT_SECONDS):
                raise RuntimeError("a solver process died while taking a chunk")
            try:
                a = int(self._next[0])
                self._next[0] = a + chunk
            finally:
                self._lock.release()
            if a >= n:
                return
            yield a


def _fill_level(space, values, variances, out_v, out_var, groups, part, n_parts):
    """Write a level's solved states (``out_v``, ``out_var``, each with a NaN last) into the
    flat dense tables: every total of each solved class, NaN elsewhere, for groups ``part`` of ``n_parts``
    contiguous shares of the level's (card, flag) groups. The groups own disjoint
    entries, so the solving processes fill a level at once (on Maxi Yatzy a big level
    takes a CPU second to fill, while the other process would wait). ``variances`` None:
    the values only."""
    g_start, g_mask, g_flag, g_sub = groups
    n_groups = len(g_mask)
    sl = slice(part * n_groups // n_parts, (part + 1) * n_groups // n_parts)
    cls = space.cls_idx[g_sub[sl]]                       # (G, n_u)
    # a total no card of the group reaches reads the NaN after the level's states
    # (``out_v[-1]``, ``out_var[-1]``): one gather, no masked write after it
    src = np.where(cls < 0, len(out_v) - 1, g_start[sl, None] + cls)
    # a group is one row of n_u entries (a stride of n_flag): rows written whole, half
    # the CPU of one index per entry (yatzy: 0.03 s a solve less), the same values
    where = (g_mask[sl],) if space.n_flag == 1 else (g_mask[sl], slice(None), g_flag[sl])
    for table, out in ((values, out_v), (variances, out_var)):
        if table is None:
            continue
        rows = out.take(src)
        table.reshape((-1, space.n_u) if space.n_flag == 1 else (-1, space.n_u, space.n_flag))[where] = rows


MIN_GROUPS_TO_SHARE_FILL = 4096
"""A level of fewer (card, flag) groups is filled by the solving process alone (a
message to the workers costs more than the share it would take)."""


def _compute(rules: RuleSet, dtype: str, chunk: int, workers: int, progress=None, second: bool = True):
    """The dense tables (values, variances, or None without ``second``) and the levels."""
    from ..progress import as_progress

    report = as_progress(progress)
    space = state_space(rules)
    model = turn_model(rules, _DTYPES[dtype])
    all_states = [space.level_states(space.level_masks[lv]) for lv in range(space.n_boxes)]
    n_states = [len(st[0][0]) for st in all_states]
    workers = fork_workers(workers, sum(n_states), MIN_STATES_FOR_WORKERS)
    values = shared_array(space.size) if workers > 1 else np.empty(space.size)
    values[:] = np.nan
    out_v = shared_array(max(n_states) + 1) if workers > 1 else np.empty(max(n_states) + 1)
    out_v[-1] = np.nan            # what _fill_level writes for the totals no card reaches
    dense = values.reshape(-1, space.n_u, space.n_flag)
    b = space.n_boxes
    last = space.level_masks[b]
    dense[last] = 0.0
    # the values only: no second table, and the turns skip the second moments (the
    # kernels' means do not read them: the same values bit for bit)
    variances = out_var = dvar = None
    if second:
        variances = shared_array(space.size) if workers > 1 else np.empty(space.size)
        variances[:] = np.nan
        out_var = shared_array(max(n_states) + 1) if workers > 1 else np.empty(max(n_states) + 1)
        out_var[-1] = np.nan
        dvar = variances.reshape(-1, space.n_u, space.n_flag)
        dvar[last] = 0.0
    lv = {"filled": [b], "masks": [len(last)], "states": [0], "seconds": [0.0],
          "value_min": [0.0], "value_max": [0.0]}
    pool = None
    finished = False
    tickets = None
    compiled = sum(n_states) >= MIN_STATES_FOR_KERNELS
    try:
        if compiled:
            # one turn of two states first: the compiled kernels are loaded (numba imported,
            # the machine code read from its cache, or compiled on first use) once, here,
            # and the workers inherit them
            from ..progress import heartbeat

            m, u, fl = all_states[b - 1][0]
            with heartbeat(report, "preparing the compiled solver"):
                from .space import _kernels

                if _kernels() is not None:     # the first time: compiled on both cores
                    _kernels().precompile(model.dtype, workers)
                turn_values(model, values, variances, m[:2], u[:2], fl[:2], compiled=True)
        if workers > 1:     # each child does the part of a level it is sent: (kind, level, part, parts)
            import multiprocessing

            tickets = _Tickets(multiprocessing.get_context("fork"))   # made before the fork

            def serve(task):
                kind, level, part, n_parts = task
                if kind == "fill":
                    _fill_level(space, values, variances, out_v, out_var, all_states[level][1], part, n_parts)
                else:
                    _solve_part(model, values, variances, all_states[level][0], part, n_parts, out_v, out_var,
                                chunk, compiled, tickets=tickets)

            pool = ForkPool(workers - 1, serve, what="solver")
        for level in range(b - 1, -1, -1):
            t0 = time.perf_counter()
            masks = space.level_masks[level]
            states, (g_start, g_mask, g_flag, g_sub) = all_states[level]
            n = len(states[0])
            n_parts = min((len(pool) if pool is not None else 0) + 1, -(-n // chunk))
            if tickets is not None:
                tickets.reset()
            # this process takes the last part (never more chunks than a worker's; with
            # the tickets, whatever chunks are left when it is free)
            for i in range(n_parts - 1):
                pool.submit(i, ("solve", level, i, n_parts))
            # within a level, progress as this process's part goes (a big level of Maxi
            # Yatzy takes minutes); the exact count follows when the level is done
            done_before = sum(n_states[level + 1:])
            _solve_part(model, values, variances, states, n_parts - 1, n_parts, out_v, out_var, chunk,
                        compiled, on_chunk=lambda k: report(f"solving {rules.key}", done_before + k, sum(n_states)),
                        tickets=tickets if n_parts > 1 else None)
            if pool is not None:
                pool.gather()       # a child's failure is raised here
            # then every process fills its share of the level's groups into the tables
            groups = all_states[level][1]
            n_fill = (len(pool) if pool is not None else 0) + 1 if len(g_mask) >= MIN_GROUPS_TO_SHARE_FILL else 1
            for i in range(n_fill - 1):
                pool.submit(i, ("fill", level, i, n_fill))
            _fill_level(space, values, variances, out_v, out_var, groups, n_fill - 1, n_fill)
            if pool is not None:
                pool.gather()
            v = out_v[:n]
            lv["filled"].append(level)
            lv["masks"].append(len(masks))
            lv["states"].append(n)
            lv["seconds"].append(time.perf_counter() - t0)
            lv["value_min"].append(float(v.min()))
            lv["value_max"].append(float(v.max()))
            report(f"solving {rules.key}", sum(n_states[level:]), sum(n_states))  # states solved so far
        finished = True
    finally:
        if pool is not None:    # every wait bounded; at once on an error or Ctrl-C
            pool.close(finished)
    order = np.argsort(lv["filled"])
    levels = {k: np.asarray(x)[order] for k, x in lv.items()}
    # the tables themselves, not copies: the workers are gone, and a copy of Maxi Yatzy's
    # two tables is 1.4 GB more at the peak and seconds of one core at the end
    return dense, dvar, levels


SOLVE_STATES_PER_SECOND = 500_000
"""Solved states a second on two workers for five dice of six faces (more dice or faces
cost in proportion to their rolls), on the slow side of benchmarks/RESULTS.md: yatzy
(2.45 CPU s) and Maxi Yatzy (147 CPU s) both solve about 700,000 a second on two quiet
cores; the rest is left to the load, a first compilation and building the states."""


@renamed_keywords(workers="jobs")   # jobs, as solve's: one word for the processes
def solve_estimate(rules: RuleSet, jobs: int = 2) -> tuple[int, int, float]:
    """(states, bytes, seconds) a cold solve of ``rules`` takes here, estimated before any
    table is built: the states counted, the peak memory (:func:`~.space.solve_bytes`),
    the time from :data:`SOLVE_STATES_PER_SECOND`.

    >>> n, size, secs = solve_estimate(get_rules("maxi-yatzy", ["no-saved-throws"]))
    >>> n, round(size / 1e9, 2), 60 < secs < 180     # the 29-million-state solve: GBs and minutes
    (29360128, 3.14, True)
    """
    from .space import bonus_tiers, needs_flag, solve_bytes

    n = _estimated_states(rules)
    tiers = bonus_tiers(rules)
    dense = (1 << rules.n_boxes) * (tiers[-1][0] + 1 if tiers else 1) * (2 if needs_flag(rules) else 1)
    size = solve_bytes(dense, n)
    per_state = rules.dice.n_rolls / 252   # the work of a state grows with the rolls of its dice
    return n, size, n * per_state / (SOLVE_STATES_PER_SECOND * max(1, min(jobs, 2)) / 2)


@functools.lru_cache(maxsize=32)
def _estimated_states(rules: RuleSet) -> int:
    """:func:`~.space.estimate_states`, counted once per rule set in a process: its Python
    loops over the upper boxes' subsets take 0.03 CPU s on ``yatzy``, 3% of each warm solve
    (every solve announces itself through :func:`solve_estimate`)."""
    from .space import estimate_states

    return estimate_states(rules)


def _announce_solve(rules: RuleSet, workers: int, progress) -> None:
    """Refuse a solve that cannot fit in memory; say what a long one builds, and how long, first."""
    from ..limits import require_memory, size_text
    from ..progress import announce, duration_text

    n, size, seconds = solve_estimate(rules, workers)
    require_memory(size, f"solving {rules.key} ({n:,} states)", "simulate another strategy instead")
    if seconds > 10:
        announce(progress, f"solving {rules.key} exactly: {n:,} states, about {size_text(size)} of memory, "
                           f"{duration_text(seconds)} (once: the table is cached)")


def _meta(rules: RuleSet, dtype: str) -> dict:
    return {"rules": rules.key, "fingerprint": rules_fingerprint(rules), "dtype": dtype,
            "solver_version": SOLVER_VERSION}


def cache_path(rules: RuleSet, dtype: str = "float32", cache_dir=None):
    """Where the solution of ``rules`` is cached.

    >>> from yahtzee_sim.rules import get_rules
    >>> cache_path(get_rules("yatzy"), cache_dir="/tmp/c").name.startswith("yatzy-")
    True
    """
    dtype = _dtype_name(dtype)
    return _cache.table_path(rules.key, rules_fingerprint(rules), dtype, SOLVER_VERSION, cache_dir)


@renamed_keywords(workers="jobs")   # jobs, as the runner's: one word for the processes
def solve(rules: str | RuleSet, *, options: Iterable[str] = (), dtype=np.float32,
          cache: bool = True, cache_dir: str | os.PathLike | None = None,
          chunk: int = CHUNK, jobs: int | None = None, progress=None, variance: bool = True) -> Solution:
    """Solve a rule set exactly: optimal expected score, its sd, every state's value.

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    dtype : ``np.float32`` (default; every state within 1e-4 of float64, so the printed
        4 decimals are unchanged) or ``np.float64`` (exact to 1e-9 in every state).
    cache : read and write the on-disk cache (see :mod:`yahtzee_sim.exact.cache`);
        also reuse a solution already computed in this process.
    cache_dir : cache folder (default: ``$YAHTZEE_SIM_CACHE`` or the user cache dir).
    chunk : states evaluated at once (memory is about 1 kB per state; default :data:`CHUNK`).
    jobs : processes sharing the work of each level (default :func:`~yahtzee_sim.forkpool.default_jobs`:
        NumPy's elementwise work is single-threaded, so two cores need two processes);
        ``workers=``, its old name, still works (deprecated).
    progress : a callback ``progress(phase, done, total)`` told the states solved after
        each level (see :mod:`yahtzee_sim.progress`); silent by default.
    variance : also carry every state's second moment (the default: the sd, the
        variances). ``False``: the values only, what the published solvers compute, in
        about 45% less CPU: the same values bit for bit (a mean never reads a second
        moment), ``variances`` None (:attr:`Solution.sd` then raises ValueError). A
        values-only solution is never written to the cache file (that holds full
        solutions only) and never served for a full one; with ``cache`` it is served
        from a full solution already in memory or on disk (its variances dropped), and
        kept in this process under its own key.

    >>> round(solve("yacht-classic", cache=False, dtype=np.float64).mean, 4) > 0
    True
    >>> solve("yacht-classic", cache=False, variance=False).summary()["sd"] is None
    True
    >>> solve("yacht", dtype="float16")
    Traceback (most recent call last):
    ...
    ValueError: dtype must be one of float32, float64, got 'float16'
    """
    rules = get_rules(rules, options)
    dtype = _dtype_name(dtype)
    chunk = whole_number(chunk, "chunk")
    workers = default_jobs() if jobs is None else whole_number(jobs, "jobs")
    if not isinstance(variance, (bool, np.bool_)):
        raise ValueError(f"variance must be True or False, got {variance!r}")
    second = bool(variance)
    meta = _meta(rules, dtype)
    memo_key = (meta["fingerprint"], dtype)
    values_key = (*memo_key, "values only")     # its own key: never served for a full solution
    status = "off"
    note = ""
    if cache:
        if memo_key in _MEMO:
            return _values_only(dataclasses.replace(_MEMO[memo_key], cache="memory", seconds=0.0), second)
        if not second and values_key in _MEMO:
            return dataclasses.replace(_MEMO[values_key], cache="memory", seconds=0.0)
        entry = _cache.CachedTable(cache_path(rules, dtype, cache_dir), meta)
        sol = entry.load(lambda stored: _from_cache(rules, dtype, stored))
        if sol is not None:
            _MEMO[memo_key] = sol
            return _values_only(sol, second)
        status, note = entry.status, entry.note
    _announce_solve(rules, int(workers), progress)
    t0 = time.perf_counter()
    values, variances, levels = _compute(rules, dtype, int(chunk), int(workers), progress, second)
    seconds = time.perf_counter() - t0
    values.setflags(write=False)
    if variances is not None:
        variances.setflags(write=False)
    if cache and second:
        arrays = {"values": values, "variances": variances, "solve_seconds": np.array(seconds)}
        arrays.update({f"level_{k}": v for k, v in levels.items()})
        entry.store(arrays)         # a folder it cannot write: noted, the answer is still right
        note = entry.note
    elif cache:
        note = "values only: kept in this process, not written to the cache (it holds full solutions)"
    sol = Solution(rules, dtype, values, variances, seconds, seconds, status, levels, note)
    if cache:
        _MEMO[memo_key if second else values_key] = sol
    return sol


def _values_only(sol: Solution, second: bool) -> Solution:
    """``sol`` as asked: as it is, or without its variances for a values-only request (the
    same values: a full solve's means are those of a values-only one, bit for bit)."""
    return sol if second else dataclasses.replace(sol, variances=None)


PLAUSIBILITY_STATES = 24
"""Random states whose turn is recomputed when a cached table is loaded."""

_LEVEL_KEYS = ("filled", "masks", "states", "seconds", "value_min", "value_max")


def _from_cache(rules: RuleSet, dtype: str, stored: dict) -> tuple[Solution | None, str]:
    """A Solution from a cache file's arrays, or None and why they are not plausible.

    Checksums catch accidents, not a forged or stale file: here the arrays must have
    the layout of this rule set's tables, be finite in every solved state, and the
    start state, one state of every level and a few random states must equal their turn
    recomputed from the stored values of the next states (one exact Bellman step, a few
    milliseconds), and every finished card must be worth 0 more.
    """
    space = state_space(rules)
    shape = (1 << space.n_boxes, space.n_u, space.n_flag)
    need = ["values", "variances", "solve_seconds"] + [f"level_{k}" for k in _LEVEL_KEYS]
    missing = [k for k in need if k not in stored]
    if missing:
        return None, f"lacks the arrays {', '.join(missing)}"
    values, variances = stored["values"], stored["variances"]
    for name, a in (("values", values), ("variances", variances)):
        if a.shape != shape or a.dtype != np.float64:
            return None, f"holds {name} of shape {a.shape} {a.dtype}, not {shape} float64"
    levels = {k: stored[f"level_{k}"] for k in _LEVEL_KEYS}
    if any(a.shape != (space.n_boxes + 1,) for a in levels.values()):
        return None, "holds per-level arrays of the wrong length"
    if stored["solve_seconds"].shape != () or not np.isfinite(stored["solve_seconds"]):
        return None, "holds a bad solve time"
    # A finished card scores nothing more (its bonuses came with the boxes): value and
    # variance 0, known without the table. Without this check a table with every value
    # raised by the same amount passes every Bellman step below.
    last = space.level_masks[space.n_boxes]
    if not ((values.reshape(-1, space.n_u, space.n_flag)[last] == 0).all()
            and (variances.reshape(-1, space.n_u, space.n_flag)[last] == 0).all()):
        return None, "holds a value other than 0 for a finished card (forged or stale)"
    states = [space.level_states(space.level_masks[lv])[0] for lv in range(space.n_boxes)]
    flat_v, flat_var = values.reshape(-1), variances.reshape(-1)
    for m, u, fl in states:
        i = space.flat(m, u, fl)
        if not (np.isfinite(flat_v[i]).all() and (flat_var[i] >= 0).all()):
            return None, "holds missing or negative values in solved states"
    rng = np.random.default_rng(len(flat_v))
    level = rng.integers(0, space.n_boxes, PLAUSIBILITY_STATES)
    # the start state, one state of every level (a level shifted against the next is caught
    # for sure: the finished cards are pinned above), then random ones
    pick = [(0, 0)] + [(int(lv), int(rng.integers(len(states[lv][0]))))
                       for lv in (*range(space.n_boxes), *level)]
    m, u, fl = (np.array([states[lv][j][i] for lv, i in pick]) for j in range(3))
    model = turn_model(rules, _DTYPES[dtype])
    v, var = turn_values(model, flat_v, flat_var, m, u, fl)
    i = space.flat(m, u, fl)
    if not (np.allclose(v, flat_v[i], rtol=1e-7, atol=1e-6)
            and np.allclose(var, flat_var[i], rtol=1e-6, atol=1e-4)):
        return None, "holds values that its own next states do not give (forged or stale)"
    values.setflags(write=False)
    variances.setflags(write=False)
    return Solution(rules, dtype, values, variances, 0.0, float(stored["solve_seconds"]), "hit",
                    levels), ""
