"""Multiplayer games: seats take turns, and a strategy may look at every card.

:func:`simulate_table` plays N games of ``len(players)`` seats. Seat s plays
from its own dice tape (the engine's tape, from the s-th child of the run's
``SeedSequence``), so:

* the same seed gives the same games whatever the batch;
* common random numbers hold per seat: seat s sees the same dice whatever the
  strategies (what differs is only what the decisions make of them), so two
  line-ups run with one seed are paired comparisons;
* a strategy that defines ``see_table(states, seat, turn)`` is shown, before each
  of its turns, every seat's :class:`~yahtzee_sim.state.GameState` (its own is
  ``states[seat]``); any other strategy plays its solitaire game unchanged.

Seats play turn 1 in seat order, then turn 2, and so on; the highest total wins
(ties are reported as ties).

:class:`PlayToWin` is an opponent-aware player: each turn it picks, per game, the
risk table (``optimal:theta=...``, :mod:`yahtzee_sim.exact.risk`) that suits its
projected deficit against the best opponent.

>>> res = simulate_table("yacht", ["greedy", "keep-largest"], 2048, seed=1, options=["fill-in-order"])
>>> bool(res.to_frame().loc["greedy", "p_win"] > 0.9)
True
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from .engine import SEED_BLOCK, MoveChecks, block_tapes, play_turn, seed_entropy
from .rules import RuleSet, get_rules
from .state import GameState
from .strategies import Strategy, get_strategy

__all__ = ["simulate_table", "TableResult", "PlayToWin"]


@dataclass(frozen=True, eq=False)
class TableResult:
    """Games played at one table.

    totals : (N, seats) final scores; names : the seats' strategies.
    seed, seconds : as :class:`~yahtzee_sim.results.SimulationResult`.
    """

    rules: RuleSet
    names: tuple
    totals: np.ndarray = field(repr=False)
    seed: int
    seconds: float

    @property
    def n_games(self) -> int:
        return len(self.totals)

    def outcomes(self):
        """(N, seats) bool arrays: sole winner, tied for first."""
        top = self.totals.max(axis=1, keepdims=True)
        at_top = self.totals == top
        n_top = at_top.sum(axis=1, keepdims=True)
        return at_top & (n_top == 1), at_top & (n_top > 1)

    def to_frame(self, level: float = 0.95):
        """Per seat: mean score, P(win) with its Wilson interval, P(tie for first)."""
        import pandas as pd

        from .stats import proportion_ci

        win, tie = self.outcomes()
        rows = []
        for s, name in enumerate(self.names):
            w = int(win[:, s].sum())
            ci = proportion_ci(w, self.n_games, level=level)
            rows.append({"player": name if self.names.count(name) == 1 else f"{name} (seat {s + 1})",
                         "mean_score": float(self.totals[:, s].mean()), "p_win": w / self.n_games,
                         "p_win_low": ci.low, "p_win_high": ci.high,
                         "p_tie": float(tie[:, s].mean())})
        return pd.DataFrame(rows).set_index("player")


def _subset(state: GameState, idx) -> GameState:
    return GameState(state.filled[idx], state.box_scores[idx], state.upper_total[idx],
                     state.five_bonus_count[idx], state.five_count[idx], state.five_box_full[idx],
                     None if state.fill_turn is None else state.fill_turn[idx], state.turn)


def _play_blocks(rules, players, entropy, blocks, n_games):
    checks = MoveChecks.of(rules)
    n_turns = rules.n_boxes
    seats = len(players)
    tapes = []
    for s in range(seats):
        seat_entropy = int(np.random.SeedSequence(entropy, spawn_key=(1_000_000 + s,)).generate_state(1)[0])
        tape, unif = block_tapes(rules, seat_entropy, blocks, n_turns)
        stop = min(len(tape), n_games - blocks.start * SEED_BLOCK)
        tapes.append((tape[:stop], unif[:stop]))
    n = len(tapes[0][0])
    states = [GameState.new(rules, n) for _ in range(seats)]
    d = rules.dice
    for t in range(n_turns):
        for s, strategy in enumerate(players):
            if hasattr(strategy, "see_table"):
                strategy.see_table(states, s, t)
            tape, unif = tapes[s]
            play_turn(rules, strategy, states[s], d.tape_prefix_keys(tape[:, t]), unif[:, t], checks)
    return np.stack([st.total(rules) for st in states], axis=1)


def simulate_table(rules: str | RuleSet, players, n_games: int, *, seed=None, options=(),
                   batch: int = 16 * SEED_BLOCK) -> TableResult:
    """Play ``n_games`` games with one seat per entry of ``players`` (names or instances).

    >>> a = simulate_table("yacht", ["greedy", "greedy"], 3000, seed=5, options=["fill-in-order"])
    >>> b = simulate_table("yacht", ["greedy", "greedy"], 3000, seed=5, options=["fill-in-order"], batch=1024)
    >>> bool((a.totals == b.totals).all())
    True
    """
    rules = get_rules(rules, options)
    if isinstance(n_games, bool) or not isinstance(n_games, (int, np.integer)) or n_games < 1:
        raise ValueError(f"n_games must be a positive integer, got {n_games!r}")
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    players = [get_strategy(p) for p in players]
    if len(players) < 2:
        raise ValueError(f"a table needs at least 2 players, got {len(players)}")
    if len({id(p) for p in players}) < len(players):
        players = [get_strategy(p.name) if i and any(p is q for q in players[:i]) else p
                   for i, p in enumerate(players)]
    for p in players:
        p.prepare(rules)
    entropy = seed_entropy(seed)
    t0 = time.perf_counter()
    per = max(1, int(batch) // SEED_BLOCK)
    n_blocks = -(-int(n_games) // SEED_BLOCK)
    totals = [_play_blocks(rules, players, entropy, range(b, min(b + per, n_blocks)), int(n_games))
              for b in range(0, n_blocks, per)]
    return TableResult(rules, tuple(p.name for p in players), np.concatenate(totals), entropy,
                       time.perf_counter() - t0)


class PlayToWin(Strategy):
    """Opponent-aware: each turn, per game, play the risk table whose theta matches the deficit.

    With its own projected final score ``a = points + E[rest]`` and the best
    opponent's ``b`` (expected-score tables of :func:`~yahtzee_sim.exact.solver.solve`),
    and the variances of both rests, the tilt that moves a normal approximation of
    the margin to zero is ``theta = (b - a) / (var_own + var_opp)``: behind, it plays
    for variance; ahead, against it. The theta used is the nearest of ``thetas``.
    Alone (no table seen) it plays ``optimal``.
    """

    name = "play-to-win"
    description = "opponent-aware: risk tables chosen by the projected deficit"

    def __init__(self, thetas=(-0.03, -0.01, 0.0, 0.01, 0.03), gain: float = 1.0):
        self.thetas = tuple(sorted(float(t) for t in thetas))
        self.gain = float(gain)
        self._choice = None

    def prepare(self, rules):
        from .exact.solver import solve

        super().prepare(rules)
        self.solution = solve(rules)
        self.players = [get_strategy(f"optimal:theta={t:g}").prepare(rules) for t in self.thetas]
        self._zero = self.thetas.index(0.0) if 0.0 in self.thetas else None
        self._choice = None
        return self

    def _projection(self, state):
        sol = self.solution
        v = sol.value(state.filled, state.upper_total, state.five_box_full)
        var = sol.variance(state.filled, state.upper_total, state.five_box_full)
        return state.total(self.rules) + v, var

    def see_table(self, states, seat, turn):
        own, var_own = self._projection(states[seat])
        opp = np.full(len(own), -np.inf)
        var_opp = np.zeros(len(own))
        for s, st in enumerate(states):
            if s != seat:
                p, var = self._projection(st)
                better = p > opp
                opp = np.where(better, p, opp)
                var_opp = np.where(better, var, var_opp)
        theta = self.gain * (opp - own) / np.maximum(var_own + var_opp, 1.0)
        grid = np.asarray(self.thetas)
        self._choice = np.abs(theta[:, None] - grid[None, :]).argmin(axis=1)
        self._groups = [np.flatnonzero(self._choice == i) for i in range(len(grid))]
        self._subsets = {}

    def _split(self, state, rolls, fn):
        if self._choice is None or len(self._choice) != len(rolls):
            return fn(self.players[self._zero if self._zero is not None else 0], state, rolls,
                      slice(None))
        out = np.empty(len(rolls), dtype=np.intp)
        for i, idx in enumerate(self._groups):
            if len(idx):
                sub = self._subsets.get(i)
                if sub is None:
                    sub = self._subsets[i] = _subset(state, idx)
                else:                                  # same games, state moved on within the turn
                    sub = self._subsets[i] = _subset(state, idx) if sub.turn != state.turn else sub
                out[idx] = fn(self.players[i], sub, rolls[idx], idx)
        return out

    def keep(self, state, rolls, rolls_left, u):
        return self._split(state, rolls, lambda p, st, r, idx: p.keep(st, r, rolls_left, u[idx]))

    def box(self, state, rolls, options, u):
        from .state import TurnOptions

        def one(p, st, r, idx):
            return p.box(st, r, TurnOptions(options.legal[idx], options.scores[idx], options.gain[idx]), u[idx])

        out = self._split(state, rolls, one)
        self._subsets = {}
        return out
