"""``play-to-win``: an opponent-aware player for tables of 2 to 20 seats.

Before each of its turns it picks, by its lead and what is left to play, the
risk-sensitive optimal strategy (``optimal:theta=...``) it plays that turn with; its
last two turns it plays by the target tables for its chance of finishing first
(:class:`~yahtzee_sim.strategies.target.PayoffPlay`). It reads the table through the
``see_table`` hook of :func:`yahtzee_sim.multiplayer.simulate_table`; alone it plays
``optimal``.
"""

from __future__ import annotations

import numpy as np

from ..rules import RuleSet, get_rules  # noqa: F401  (get_rules: the examples below)
from ..state import take_games
from ..strategy import Strategy
from ..validate import whole_number

__all__ = ["PlayToWin", "fold_max", "risk_moments", "THETAS", "ENDGAME_TURNS", "MOMENTS_VERSION"]


def fold_max(means, variances):
    """Normal approximation (Clark 1961) of the maximum of independent normal scores.

    ``means``, ``variances``: (players, N). Returns the (N,) mean and variance of a
    normal matched to the first two moments of the maximum, folding one player in
    at a time.

    >>> m, v = fold_max(np.array([[0.0], [0.0]]), np.array([[1.0], [1.0]]))
    >>> round(float(m[0]), 6), round(float(v[0]), 6)      # E max = 1/sqrt(pi), var = 1 - 1/pi
    (0.56419, 0.68169)
    """
    from scipy.special import ndtr

    m, v = np.asarray(means[0], np.float64), np.asarray(variances[0], np.float64)
    for m2, v2 in zip(means[1:], variances[1:]):
        a = np.sqrt(v + v2)
        safe = np.where(a > 0, a, 1.0)
        alpha = np.where(a > 0, (m - m2) / safe, np.where(m >= m2, np.inf, -np.inf))
        p, q = ndtr(alpha), ndtr(-alpha)
        dens = np.where(np.isfinite(alpha), np.exp(-0.5 * np.minimum(alpha * alpha, 1e4)) / np.sqrt(2 * np.pi), 0.0)
        first = m * p + m2 * q + a * dens
        second = (m * m + v) * p + (m2 * m2 + v2) * q + (m + m2) * a * dens
        m, v = first, np.maximum(second - first * first, 0.0)
    return m, v



ENDGAME_TURNS = 2
"""How many of its last turns :class:`PlayToWin` plays for its chance of finishing first
through the target tables (:class:`~yahtzee_sim.strategies.target.PayoffPlay`)."""

THETAS = (-0.02, -0.01, 0.0, 0.02, 0.04, 0.08)
"""The risk attitudes :class:`PlayToWin` chooses between (``optimal:theta=...``)."""

MOMENTS_VERSION = 1
"""Bump when the cached moment tables of the risk strategies change meaning or layout."""

_MOMENTS: dict = {}


def _moments_file(rules: RuleSet, theta: float):
    """Where :func:`risk_moments` caches the tables of (rules, theta), and their meta."""
    from ..exact import cache as _cache
    from ..exact.solver import rules_fingerprint

    fp = rules_fingerprint(rules)
    meta = {"rules": rules.key, "fingerprint": fp, "theta": theta, "moments_version": MOMENTS_VERSION}
    return _cache.table_path(rules.key, fp, f"risk-theta{theta!r}-moments", MOMENTS_VERSION), meta


def risk_moments(rules: RuleSet, theta: float, *, cache: bool = True, progress=None):
    """(mean, variance) flat float32 tables (solver layout) of the future score of
    ``optimal:theta=<theta>`` from every reachable state: its exact policy value
    (:func:`~yahtzee_sim.exact.policy.policy_value`), disk-cached next to the solver's
    tables. ``theta = 0`` is the solver's own mean and variance.

    >>> r = get_rules("yacht", ["fill-in-order"])
    >>> mean, var = risk_moments(r, 0.05, cache=False)
    >>> from yahtzee_sim.exact.distribution import distribution
    >>> d = distribution(r, "optimal:theta=0.05")
    >>> bool(abs(mean[0] - d.mean) < 1e-3), bool(abs(var[0] - d.sd ** 2) < 1e-2)
    (True, True)
    """
    from ..exact import cache as _cache
    from ..exact.solver import rules_fingerprint, solve

    fp = rules_fingerprint(rules)
    key = (fp, float(theta))
    if cache and key in _MOMENTS:
        return _MOMENTS[key]
    if theta == 0:
        sol = solve(rules, progress=progress)
        out = tuple(np.ascontiguousarray(a, dtype=np.float32).reshape(-1) for a in (sol.values, sol.variances))
        if cache:
            _MOMENTS[key] = out
        return out
    entry = _cache.CachedTable(*_moments_file(rules, float(theta)))
    stored = entry.load() if cache else None
    if stored is not None:
        out = (stored["mean"], stored["variance"])
    else:
        from ..exact.policy import policy_value
        from .risk import RiskStrategy

        pv = policy_value(rules, RiskStrategy(theta, progress=False), progress=progress)
        mean = pv.values
        out = (mean.astype(np.float32), np.maximum(pv.second_moments - mean * mean, 0.0).astype(np.float32))
        if cache:           # a folder it cannot write: the tables are still right
            entry.store({"mean": out[0], "variance": out[1]})
    if cache:
        _MOMENTS[key] = out
    return out


class PlayToWin(Strategy):
    """Opponent-aware: plays each turn with the risk attitude that gives it the best
    chance to win.

    Before each of its turns it reads the table. The best opponent's final score is
    taken as a normal: each opponent's points so far plus the optimal expected rest
    of its game, with that rest's variance (the solver's tables; several opponents
    folded into one maximum by :func:`fold_max`). For every risk-sensitive optimal
    strategy ``optimal:theta=t`` of ``thetas``
    (:class:`~yahtzee_sim.strategies.risk.RiskStrategy`; ``t = 0`` is ``optimal``) it
    knows the exact mean ``mu_t`` and variance ``var_t`` of the rest of its own game
    if that strategy played it out (:func:`risk_moments`), and it plays the turn with
    the one whose normal chance to finish above the opponent is largest:

        max over t of  Phi((points + mu_t - m_opp) / sqrt(var_t + v_opp + 1))

    (the 1 smooths a margin known to the point; ties go to the larger mean). Behind,
    a risk seeker's wider spread is worth its lower mean; ahead, a cautious one's
    narrower spread; and the choice is made again every turn. Alone (no table seen)
    it plays ``optimal``, decision for decision.

    Its last ``endgame`` turns (default :data:`ENDGAME_TURNS`) it plays move by move
    for f(final score) = the chance that score finishes above every opponent (a tie
    counted half), through the exact target tables
    (:class:`~yahtzee_sim.strategies.target.PayoffPlay`): an opponent whose game is
    over has a known score, one still playing a normal around its points plus optimal's
    expected rest (its variance from the solver). By then the opponents' scores are
    known or nearly so, where a normal approximation of its own score is at its worst.

    The risk strategies play from their decision tables, so at a table
    (:func:`simulate_table`) the games of each theta are played by the lean table
    loop, about as fast as ``optimal``. The first use for a rule set solves one risk
    table, builds one decision table and evaluates one policy per theta (all cached
    on disk; for ``yahtzee`` a few CPU minutes each), and the endgame solves the target
    table (:func:`~yahtzee_sim.exact.target.target_solve`, cached; for ``yahtzee`` about
    50 CPU seconds and 380 MB). Rule sets the risk solver cannot handle
    (Generala's served throws, announced or saved throws) are refused.

    >>> from yahtzee_sim.multiplayer import simulate_table
    >>> res = simulate_table("yacht", [PlayToWin(), "optimal"], 4096, seed=1, options=["fill-in-order"])
    >>> res.names
    ('play-to-win', 'optimal')
    >>> from yahtzee_sim.state import GameState
    >>> rules = get_rules("yacht", ["fill-in-order"])
    >>> p = PlayToWin().prepare(rules)
    >>> me, you = GameState.new(rules, 1), GameState.new(rules, 1)
    >>> you.box_scores[0, 0] = 30                    # 30 points behind at the start: seek risk
    >>> bool(p.thetas[p.pick([me, you], 0)[0]] > 0)
    True
    >>> you.box_scores[0, 0], me.box_scores[0, 0] = 0, 30       # ahead: caution
    >>> bool(p.thetas[p.pick([me, you], 0)[0]] < 0)
    True
    """

    name = "play-to-win"
    description = ("opponent-aware: plays each turn with the risk-sensitive optimal table most likely to win, "
                   "its last turns by the target tables")
    uses_uniforms = False

    def __init__(self, thetas=THETAS, *, endgame: int = ENDGAME_TURNS, progress=True):
        from ..exact.risk import parse_theta

        self.endgame = whole_number(endgame, "play-to-win: endgame", low=0)

        grid = sorted({parse_theta(t) for t in thetas})
        if 0.0 not in grid:
            raise ValueError(f"play-to-win: thetas must include 0 (optimal play), got {list(thetas)!r}")
        self.thetas = np.array(grid)
        self.progress = progress
        self._zero = grid.index(0.0)
        self._pick = None

    def prepare(self, rules):
        from .risk import RiskStrategy

        if rules.roll_dependent or rules.announces or rules.banked_throws:
            raise ValueError(f"play-to-win plays the risk-sensitive optimal strategies, whose solver does not "
                             f"model {rules.key}'s served, announced or saved throws; use optimal or heuristic")
        super().prepare(rules)
        self._announce(rules)
        self.players = [RiskStrategy(t, progress=self.progress).prepare(rules) for t in self.thetas]
        sol = self.players[self._zero].solution
        self._space = sol.space
        self._values = np.ascontiguousarray(sol.values, dtype=np.float64).reshape(-1)
        self._variances = np.ascontiguousarray(sol.variances, dtype=np.float64).reshape(-1)
        self._moments = [risk_moments(rules, float(t), progress=self.progress) for t in self.thetas]
        self._tables = None
        self._pick = None
        self._payoff = None
        self._in_endgame = False
        if self.endgame:
            from .target import PayoffPlay

            self._payoff = PayoffPlay(progress=self.progress).prepare(rules)   # the target table, disk-cached
        return self

    def _announce(self, rules) -> None:
        """Before the first use on ``rules``: say which tables will be built, and roughly how long."""
        from ..exact.risk import parse_theta, risk_cache_path
        from ..exact.solver import solve_estimate
        from ..progress import announce, duration_text

        missing = [t for t in self.thetas if float(t) != 0.0 and not risk_cache_path(rules, parse_theta(t)).exists()]
        if not missing:
            return
        _, _, seconds = solve_estimate(rules)
        # per theta: a risk table, a decision table and the policy's moments, each about a solve
        announce(self.progress, f"play-to-win on {rules.key}: building {len(missing)} risk-sensitive tables "
                                f"(theta {', '.join(f'{t:g}' for t in missing)}), their decision tables and "
                                f"moments, and the target table: {duration_text(max(3 * seconds, 30) * len(missing))} "
                                "or more the first time (cached on disk for later runs)")

    # -- the table -----------------------------------------------------------------
    def _flat(self, state):
        return self._space.flat(*self._space.index(state.filled, state.upper_total, state.five_box_full))

    def _outlook(self, state):
        """(N,) points so far + optimal expected rest, and the rest's variance."""
        flat = self._flat(state)
        return state.total(self.rules) + self._values[flat], self._variances[flat]

    def win_chances(self, states, seat) -> np.ndarray:
        """(N, len(thetas)) the normal approximation of P(win) of seat ``seat`` if it played
        the rest of its game with each theta."""
        from scipy.special import ndtr

        others = [self._outlook(st) for s, st in enumerate(states) if s != seat]
        best, best_var = fold_max(np.array([m for m, _ in others]), np.array([v for _, v in others]))
        own = states[seat]
        flat, points = self._flat(own), own.total(self.rules)
        out = np.empty((len(flat), len(self.thetas)))
        for k, (mean, var) in enumerate(self._moments):
            lead = points + mean[flat] - best
            out[:, k] = ndtr(lead / np.sqrt(var[flat] + best_var + 1.0))
        return out

    def pick(self, states, seat) -> np.ndarray:
        """(N,) index in ``thetas`` of the theta each game's next turn is played with."""
        chance = self.win_chances(states, seat)
        top = chance.max(axis=1, keepdims=True)
        # among the best chances (a sure win or loss makes them all equal), the largest mean
        means = np.stack([m[self._flat(states[seat])] for m, _ in self._moments], axis=1)
        return np.argmax(np.where(chance >= top - 1e-12, means, -np.inf), axis=1)

    def finish_above(self, states, seat):
        """f(x) for seat ``seat``: the chance that a final score x beats every other seat
        (a tie counted half per opponent), each opponent's final score either known (its
        game is over) or a normal around its points plus optimal's expected rest, with
        that rest's variance. A function of an array of x, shaped like its rows (N, L)."""
        from scipy.special import ndtr

        parts = []
        for s, st in enumerate(states):
            if s == seat:
                continue
            now = st.total(self.rules).astype(np.float64)
            if st.turn >= self.rules.n_boxes:
                parts.append((now, None))
            else:
                mean, var = self._outlook(st)
                parts.append((mean, np.sqrt(var)))

        def chance(x):
            out = np.ones(x.shape)
            for centre, sd in parts:
                if sd is None:
                    out *= (x > centre[:, None]) + 0.5 * (x == centre[:, None])
                else:
                    out *= ndtr((x - centre[:, None]) / np.maximum(sd[:, None], 1e-6))
            return out

        return chance

    def see_table(self, states, seat, turn):
        self._in_endgame = self._payoff is not None and self.rules.n_boxes - turn <= self.endgame
        if self._in_endgame:
            self._payoff.set_payoff(states[seat], self.finish_above(states, seat))
            self._pick = None
        else:
            self._pick = self.pick(states, seat)

    def _groups(self, n):
        """[(theta index, games or None for all)] of a batch of ``n`` games."""
        pick = self._pick
        if pick is None or len(pick) != n:
            return [(self._zero, None)]
        ks = np.unique(pick)
        if len(ks) == 1:
            return [(int(ks[0]), None)]
        return [(int(k), np.flatnonzero(pick == k)) for k in ks]

    @property
    def play_table(self):
        """Alone it plays ``optimal``: the engine may play its games by optimal's table."""
        return self.players[self._zero].play_table

    def turn_tables(self, n):
        """[(games or None for all, PlayTable)] for this turn's ``n`` games, by theta; None
        if a table is too large to build (the turn is then played by ``keep`` and ``box``)."""
        if self._in_endgame:
            return None                  # the last turns: target tables, through keep and box
        if self._tables is None:
            from ..exact.decisions import MAX_TABLE_BYTES, table_bytes

            if table_bytes(self.rules) > MAX_TABLE_BYTES:
                self._tables = False
            else:
                for p in self.players:
                    p.decision_table()           # built or read from the cache once, then kept
                self._tables = [p.play_table for p in self.players]
        if self._tables is False:
            return None
        return [(idx, self._tables[k]) for k, idx in self._groups(n)]

    # -- decisions (the engine's turn loop) ---------------------------------------------
    def keep(self, state, rolls, rolls_left, u):
        if self._in_endgame:
            return self._payoff.keep(state, rolls, rolls_left, u)
        groups = self._groups(len(rolls))
        if groups[0][1] is None:
            return self.players[groups[0][0]].keep(state, rolls, rolls_left, u)
        out = np.empty(len(rolls), dtype=np.int64)
        for k, idx in groups:
            out[idx] = self.players[k].keep(take_games(state, idx), rolls[idx], rolls_left,
                                            None if u is None else u[idx])
        return out

    def box(self, state, rolls, options, u):
        if self._in_endgame:
            self._in_endgame = False
            return self._payoff.box(state, rolls, options, u)
        groups = self._groups(len(rolls))
        if groups[0][1] is None:
            out = self.players[groups[0][0]].box(state, rolls, options, u)
        else:
            out = np.empty(len(rolls), dtype=np.intp)
            for k, idx in groups:
                sub = type(options)(options.legal[idx], options.scores[idx], options.gain[idx])
                out[idx] = self.players[k].box(take_games(state, idx), rolls[idx], sub,
                                               None if u is None else u[idx])
        self._pick = None                # the turn is over: the next one reads the table again
        return out
