"""Risk-sensitive optimal play: the strategy that maximizes E[exp(theta * score)].

For ``theta > 0`` a high score is worth more than its points (the player seeks
the big games); for ``theta < 0`` a low score hurts more (the player avoids the
bad ones); ``theta = 0`` is the expected-score optimum of
:func:`~yahtzee_sim.exact.solver.solve`. Points already written do not change
the best decisions (``exp(theta * (a + b)) = exp(theta * a) exp(theta * b)``), so
the state is the solver's and backward induction applies as for the mean:

    W(state) = E over the turn [ max over boxes  exp(theta * gain) W(next state) ]

with the keeps chosen to maximize the same expectation (to minimize it when
theta < 0). The tables hold the *certainty equivalent*
``CE(state) = log(W(state)) / theta``, the sure number of future points the
player values as much as the gamble; it is exact in every reachable state (each
turn is the same keep-lattice sweep as the solver's, in float64, every rule
through :meth:`RuleSet.turn_options`). Results are cached on disk like the
solver's tables (:mod:`yahtzee_sim.exact.cache`), compressed.

>>> sol = solve_risk("yacht", 0.05, options=["fill-in-order"], cache=False)
>>> from yahtzee_sim.exact.solver import solve
>>> mean = solve("yacht", options=["fill-in-order"], cache=False).mean
>>> bool(sol.certainty_equivalent > mean)        # a risk seeker values the gamble above its mean
True
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..rules import RuleSet, get_rules
from . import cache as _cache
from ._solver_lattice import first_roll_mean, lattice, sweep_keeps
from .space import state_space
from .policy import _level_states, _reach_table, EvalChunk
from .solver import rules_fingerprint

__all__ = ["solve_risk", "RiskSolution", "MAX_THETA", "RISK_VERSION", "parse_theta"]

RISK_VERSION = 1
"""Bump when the risk tables' meaning or layout change (invalidates caches)."""

MAX_THETA = 0.5
"""|theta| above this would put e^(theta * 1500) out of float64's range for some rules."""

_MEMO: dict = {}


def parse_theta(theta) -> float:
    """A finite theta in [-MAX_THETA, MAX_THETA].

    >>> parse_theta("0.02"), parse_theta(-0.1)
    (0.02, -0.1)
    >>> parse_theta("hot")
    Traceback (most recent call last):
    ...
    ValueError: theta must be a number in [-0.5, 0.5], got 'hot'
    """
    try:
        t = float(theta)
    except (TypeError, ValueError):
        t = math.nan
    if isinstance(theta, bool) or not math.isfinite(t) or abs(t) > MAX_THETA:
        raise ValueError(f"theta must be a number in [-{MAX_THETA}, {MAX_THETA}], got {theta!r}")
    return t


@dataclass(frozen=True, eq=False)
class RiskSolution:
    """Risk-sensitive optimal values of a rule set.

    Attributes
    ----------
    rules, theta : what was solved.
    values : flat table (solver layout, see :class:`~yahtzee_sim.exact.space.StateSpace`)
        of the certainty equivalent of every reachable state's future score; NaN elsewhere.
    seconds, solve_seconds, cache : as :class:`~yahtzee_sim.exact.solver.Solution`.
    """

    rules: RuleSet
    theta: float
    values: np.ndarray = field(repr=False)
    seconds: float
    solve_seconds: float
    cache: str

    @property
    def certainty_equivalent(self) -> float:
        """The sure score worth as much as the game's gamble: log(E[exp(theta S)]) / theta."""
        return float(self.values[state_space(self.rules).flat(0, 0, 0)])

    def summary(self) -> dict:
        return {"rules": self.rules.key, "theta": self.theta,
                "certainty_equivalent": self.certainty_equivalent, "seconds": self.seconds,
                "solve_seconds": self.solve_seconds, "cache": self.cache}


def risk_turn(rules: RuleSet, values: np.ndarray, mask, u, flag, theta: float, *,
              plan: bool = False, turn=None):
    """Certainty equivalents (C,) of a chunk of states, from the next states' ``values``.

    With ``plan=True`` also returns, per rerolls left j, the (K, C) solver-order value
    of every keep (``sign(theta) * E[exp(theta * (rest - c))]``, larger is better).
    ``turn``: the chunk's rows as :func:`~yahtzee_sim.exact.policy.policy_value`
    builds them, if already at hand.
    """
    sp = state_space(rules)
    lat = lattice(rules.dice)
    if turn is None:
        turn = EvalChunk(rules, sp, np.asarray(mask, np.int64), np.asarray(u, np.int64),
                     np.asarray(flag, np.int64))
    opts = turn.options
    n, r = turn.n, turn.r
    nxt = sp.next_flat(turn.mask, turn.u, turn.flag, opts.scores)
    worth = np.where(opts.legal, opts.gain + values[nxt], -np.inf)          # (C*R, B)
    best = worth.max(axis=1).reshape(n, r)                                  # each final roll
    if np.isnan(best).any() or np.isinf(best).any():     # pragma: no cover - internal error
        raise RuntimeError("risk: a next state was not evaluated")
    sign = 1.0 if theta > 0 else -1.0
    # offset: every exponent is <= 0, so nothing overflows
    c = best.max(axis=1) if theta > 0 else best.min(axis=1)
    z = np.empty((lat.n_keeps, n))
    rb = lat.level_slices[lat.n_dice]
    z[rb] = (sign * np.exp(theta * (best - c[:, None]))).T[lat.roll_at]
    keep_values = sweep_keeps(lat, z, rules.n_rolls, plan=plan)
    w = sign * first_roll_mean(lat, z[rb])
    ce = c + np.log(w) / theta
    return (ce, keep_values) if plan else ce


def _compute(rules: RuleSet, theta: float, chunk_rows: int, progress):
    sp = state_space(rules)
    table, counts = _reach_table(rules, sp)
    values = np.full(sp.size, np.nan)
    per_chunk = max(1, chunk_rows // rules.dice.n_rolls)
    for level in range(sp.n_boxes, -1, -1):
        mask, u, flag = _level_states(sp, table, counts, level)
        idx = sp.flat(mask, u, flag)
        if level == sp.n_boxes:
            values[idx] = 0.0
            continue
        progress(f"risk tables of {rules.key}, theta {theta:g}", sp.n_boxes - 1 - level, sp.n_boxes)
        for lo in range(0, len(mask), per_chunk):
            hi = min(lo + per_chunk, len(mask))
            values[idx[lo:hi]] = risk_turn(rules, values, mask[lo:hi], u[lo:hi], flag[lo:hi], theta)
    return values


def risk_cache_path(rules: RuleSet, theta: float, cache_dir=None):
    """Where the risk table of (rules, theta) is cached."""
    return _cache.table_path(rules.key, rules_fingerprint(rules), f"risk-theta{theta!r}", RISK_VERSION, cache_dir)


def solve_risk(rules: str | RuleSet, theta, *, options=(), cache: bool = True, cache_dir=None,
               chunk_rows: int = 1 << 17, progress=None) -> RiskSolution:
    """Solve the risk-sensitive game exactly: maximize E[exp(theta * final score)].

    ``theta = 0`` is refused here (it is :func:`~yahtzee_sim.exact.solver.solve`);
    ``progress``: a :mod:`yahtzee_sim.progress` callback, told each level solved.

    >>> solve_risk("yacht", 0)
    Traceback (most recent call last):
    ...
    ValueError: theta = 0 is the expected-score optimum: use solve() (or the strategy 'optimal')
    """
    rules = get_rules(rules, options)
    # its turn tables have no "still the first throw" layer: served scores would be missed
    if rules.roll_dependent:
        raise ValueError(f"the risk-sensitive solver does not handle {rules.key}: a box's score depends on "
                         "the throw number (served scores); use solve() for its optimum, or simulate")
    theta = parse_theta(theta)
    if theta == 0:
        raise ValueError("theta = 0 is the expected-score optimum: use solve() (or the strategy 'optimal')")
    meta = {"rules": rules.key, "fingerprint": rules_fingerprint(rules), "theta": theta,
            "risk_version": RISK_VERSION}
    memo_key = (meta["fingerprint"], theta)
    status = "off"
    if cache:
        if memo_key in _MEMO:
            sol = _MEMO[memo_key]
            return RiskSolution(rules, theta, sol.values, 0.0, sol.solve_seconds, "memory")
        entry = _cache.CachedTable(risk_cache_path(rules, theta, cache_dir), meta)
        stored = entry.load()
        if stored is not None:
            sol = RiskSolution(rules, theta, stored["values"], 0.0, float(stored["solve_seconds"]), "hit")
            _MEMO[memo_key] = sol
            return sol
        status = entry.status
    t0 = time.perf_counter()
    from ..progress import as_progress

    values = _compute(rules, theta, int(chunk_rows), as_progress(progress))
    seconds = time.perf_counter() - t0
    values.setflags(write=False)
    sol = RiskSolution(rules, theta, values, seconds, seconds, status)
    if cache:
        # deflated: the unreachable states' NaNs and the rest take 2.4 of yahtzee's 8.4 MB
        # (0.03 s to expand), the same floats; unwritable: still right
        entry.store({"values": values, "solve_seconds": np.array(seconds)}, compress=True)
        _MEMO[memo_key] = sol
    return sol
