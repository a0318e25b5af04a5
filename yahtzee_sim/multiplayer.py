"""Multiplayer games: seats take turns, and a strategy may look at every card.

:func:`simulate_table` plays N games of ``len(players)`` seats. Seat s plays
from its own dice tape (the engine's tape, from :func:`seat_entropy` of the run's
seed and s), so:

* the same seed gives the same games whatever the batch;
* common random numbers hold per seat: seat s sees the same dice whatever the
  strategies (what differs is only what the decisions make of them), so two
  line-ups run with one seed are paired comparisons;
* a strategy that defines ``see_table(states, seat, turn)`` is shown, before each
  of its turns, every seat's :class:`~yahtzee_sim.state.GameState` (its own is
  ``states[seat]``); any other strategy plays its solitaire game unchanged.

Seats play turn 1 in seat order, then turn 2, and so on; the highest total wins
(ties are reported as ties).

Generala's ``servida-wins`` option: a seat whose turn ends with five of a kind made
by the turn's first throw (a *Generala servida*; holding all five dice is not a
throw, whichever box the player writes it in) wins the game at once. The game ends
there: no later seat plays that round, so when two seats would serve one in the
same round the first in seat order wins; the scores reported for that game are the
cards as they stood at that moment (:attr:`TableResult.servida_winner` says which
games ended so).

:class:`PlayToWin` is an opponent-aware player: each turn it picks, per game, the
risk table (``optimal:theta=...``, :mod:`yahtzee_sim.exact.risk`) that suits its
projected deficit against the best opponent.

>>> res = simulate_table("yacht", ["greedy", "keep-largest"], 2048, seed=1, options=["fill-in-order"])
>>> bool(res.to_frame().loc["greedy", "p_win"] > 0.9)
True
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from .engine import SEED_BLOCK, MoveChecks, block_tapes, family_tapes, play_turn, seed_entropy
from .rules import RuleSet, get_rules
from .state import GameState
from .strategies import Strategy, get_strategy

__all__ = ["simulate_table", "TableResult", "PlayToWin", "seat_entropy", "MAX_SEATS"]

MAX_SEATS = 20
"""Largest table (seed 000 names a platform for up to 20 players)."""


@dataclass(frozen=True, eq=False)
class TableResult:
    """Games played at one table.

    totals : (N, seats) final scores (for a game a servida ended: the scores then).
    names : the seats' strategies.
    servida_winner : (N,) int8 under Generala's ``servida-wins``: the seat whose
        served Generala ended the game, -1 where none did; None without the option.
    seed, seconds : as :class:`~yahtzee_sim.results.SimulationResult`.
    """

    rules: RuleSet
    names: tuple
    totals: np.ndarray = field(repr=False)
    seed: int
    seconds: float
    servida_winner: np.ndarray | None = field(default=None, repr=False)

    @property
    def n_games(self) -> int:
        return len(self.totals)

    def outcomes(self):
        """(N, seats) bool arrays: sole winner, tied for first.

        A game won by a servida has that seat as its sole winner, whatever the scores.
        """
        top = self.totals.max(axis=1, keepdims=True)
        at_top = self.totals == top
        n_top = at_top.sum(axis=1, keepdims=True)
        win, tie = at_top & (n_top == 1), at_top & (n_top > 1)
        if self.servida_winner is not None:
            ended = self.servida_winner >= 0
            served = self.servida_winner[:, None] == np.arange(self.totals.shape[1])
            win = np.where(ended[:, None], served, win)
            tie = tie & ~ended[:, None]
        return win, tie

    def to_frame(self, level: float = 0.95):
        """Per seat: mean score, P(win) with its Wilson interval, P(tie for first), and
        under ``servida-wins`` the share of games it won by a servida (``p_servida_win``)."""
        import pandas as pd

        from .stats import proportion_ci

        win, tie = self.outcomes()
        rows = []
        for s, name in enumerate(self.names):
            w = int(win[:, s].sum())
            ci = proportion_ci(w, self.n_games, level=level)
            row = {"player": name if self.names.count(name) == 1 else f"{name} (seat {s + 1})",
                   "mean_score": float(self.totals[:, s].mean()), "p_win": w / self.n_games,
                   "p_win_low": ci.low, "p_win_high": ci.high,
                   "p_tie": float(tie[:, s].mean())}
            if self.servida_winner is not None:
                row["p_servida_win"] = float((self.servida_winner == s).mean())
            rows.append(row)
        return pd.DataFrame(rows).set_index("player")


def seat_entropy(entropy: int, seat: int) -> int:
    """The entropy of seat ``seat``'s dice tape in a run of seed ``entropy``.

    >>> seat_entropy(7, 0) != seat_entropy(7, 1)
    True
    """
    return int(np.random.SeedSequence(entropy, spawn_key=(1_000_000 + seat,)).generate_state(1)[0])


def _subset(state: GameState, idx) -> GameState:
    return GameState(state.filled[idx], state.box_scores[idx], state.upper_total[idx],
                     state.five_bonus_count[idx], state.five_count[idx], state.five_box_full[idx],
                     None if state.fill_turn is None else state.fill_turn[idx], state.turn)


def _play_blocks(rules, players, entropy, blocks, n_games):
    """Play seed ``blocks`` at one table: (n, seats) totals and the servida winners."""
    checks = MoveChecks.of(rules)
    n_turns = rules.n_boxes
    seats = len(players)
    tapes = []
    for s in range(seats):
        tape, unif = block_tapes(rules, seat_entropy(entropy, s), blocks, n_turns)
        stop = min(len(tape), n_games - blocks.start * SEED_BLOCK)
        extra = {k: v[:stop] for k, v in family_tapes(rules, seat_entropy(entropy, s), blocks, n_turns).items()}
        tapes.append((tape[:stop], unif[:stop], extra))
    n = len(tapes[0][0])
    states = [GameState.new(rules, n) for _ in range(seats)]
    servida = "servida-wins" in rules.options and states[0].served_five_count is not None
    winner = np.full(n, -1, dtype=np.int8) if servida else None
    frozen = np.zeros((n, seats), dtype=np.int32)     # the scores when a servida ended a game
    d = rules.dice
    for t in range(n_turns):
        for s, strategy in enumerate(players):
            if hasattr(strategy, "see_table"):
                strategy.see_table(states, s, t)
            tape, unif, extra = tapes[s]
            before = states[s].served_five_count.copy() if servida else None
            play_turn(rules, strategy, states[s], d.tape_prefix_keys(tape[:, t]), unif[:, t], checks, extra)
            if servida:
                # the game ends at once: a later seat's servida (even this round) comes too late
                ended = (states[s].served_five_count > before) & (winner < 0)
                if ended.any():
                    winner[ended] = s
                    frozen[ended] = np.stack([st.total(rules)[ended] for st in states], axis=1)
    totals = np.stack([st.total(rules) for st in states], axis=1).astype(np.int32)
    if servida:
        totals = np.where((winner >= 0)[:, None], frozen, totals)
    return totals, winner


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
    if not 2 <= len(players) <= MAX_SEATS:
        raise ValueError(f"a table seats 2 to {MAX_SEATS} players, got {len(players)}")
    # one instance per seat (strategies keep per-batch state): a repeated one is copied
    players = [copy.copy(p) if any(p is q for q in players[:i]) else p for i, p in enumerate(players)]
    for p in players:
        p.prepare(rules)
    entropy = seed_entropy(seed)
    t0 = time.perf_counter()
    per = max(1, int(batch) // SEED_BLOCK)
    n_blocks = -(-int(n_games) // SEED_BLOCK)
    parts = [_play_blocks(rules, players, entropy, range(b, min(b + per, n_blocks)), int(n_games))
             for b in range(0, n_blocks, per)]
    winner = None if parts[0][1] is None else np.concatenate([w for _, w in parts])
    return TableResult(rules, tuple(p.name for p in players), np.concatenate([t for t, _ in parts]), entropy,
                       time.perf_counter() - t0, winner)


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
