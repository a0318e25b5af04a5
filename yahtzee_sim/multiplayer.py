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

:class:`PlayToWin` is an opponent-aware player: every keep and box maximizes a
normal approximation of its chance to finish above the best opponent.

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
from .strategies.base import best_legal

__all__ = ["simulate_table", "TableResult", "PlayToWin", "seat_gain", "win_share", "fold_max", "seat_entropy",
           "MAX_SEATS"]

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
                   batch: int = 16 * SEED_BLOCK, progress=None) -> TableResult:
    """Play ``n_games`` games with one seat per entry of ``players`` (names or instances).

    ``progress``: a :mod:`yahtzee_sim.progress` callback, told ``("games", done, total)``
    after each batch.

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
    from .progress import as_progress

    report = as_progress(progress)
    parts = []
    for b in range(0, n_blocks, per):
        report("games", min(b * SEED_BLOCK, int(n_games)), int(n_games))
        parts.append(_play_blocks(rules, players, entropy, range(b, min(b + per, n_blocks)), int(n_games)))
    report("games", int(n_games), int(n_games))
    winner = None if parts[0][1] is None else np.concatenate([w for _, w in parts])
    return TableResult(rules, tuple(p.name for p in players), np.concatenate([t for t, _ in parts]), entropy,
                       time.perf_counter() - t0, winner)


def win_share(totals: np.ndarray) -> np.ndarray:
    """(N, seats) each seat's share of each game's win (a tie for first split evenly).

    >>> win_share(np.array([[3, 3, 1], [1, 2, 0]])).tolist()
    [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]
    """
    top = totals == totals.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def seat_gain(rules, player, baseline, opponents: int, n_games: int, *, seed=None, options=(),
              opponent="optimal", chunk: int = 16 * SEED_BLOCK, progress=None) -> dict:
    """``player`` in seat 1 against ``opponents`` ``opponent`` players, paired with
    ``baseline`` in the same seat on the same dice.

    The opponents have their own dice tapes and, if they do not look at the table,
    play the same games in both runs (checked), so the difference of seat 1's win
    share is a paired comparison. Games run in chunks (seeds spawned from ``seed``);
    ``progress(done, total)`` is called after each. Returns seat 1's P(win) with its
    95% Wilson interval, its win share (ties split) and the paired gain in win share
    over ``baseline``, each with a 95% normal interval, the mean scores, and the
    seconds the player's games took.

    >>> g = seat_gain("yacht", "greedy", "keep-largest", 1, 1024, seed=1, options=["fill-in-order"])
    >>> bool(g["gain"] > 0), g["games"]
    (True, 1024)
    """
    from .stats import proportion_ci

    rules = get_rules(rules, options)
    entropy = seed_entropy(seed)
    wins, shares, gains, own, base_mean = 0, [], [], [], []
    secs = 0.0
    for i, lo in enumerate(range(0, n_games, chunk)):
        m = min(chunk, n_games - lo)
        part = int(np.random.SeedSequence(entropy, spawn_key=(opponents, i)).generate_state(1)[0])
        t0 = time.perf_counter()
        res = simulate_table(rules, [player] + [opponent] * opponents, m, seed=part)
        secs += time.perf_counter() - t0
        base = simulate_table(rules, [baseline] + [opponent] * opponents, m, seed=part)
        if not (res.totals[:, 1:] == base.totals[:, 1:]).all():
            raise ValueError("seat_gain: the opponents' games differ between the two runs (an opponent "
                             "that looks at the table cannot be paired)")
        wins += int(res.outcomes()[0][:, 0].sum())
        s, b = win_share(res.totals)[:, 0], win_share(base.totals)[:, 0]
        shares.append(s)
        gains.append(s - b)
        own.append(res.totals[:, 0])
        base_mean.append(base.totals[:, 0])
        if progress is not None:
            progress(lo + m, n_games)
    share, gain = np.concatenate(shares), np.concatenate(gains)
    half = lambda x: float(1.96 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")
    ci = proportion_ci(wins, n_games)
    return {"opponents": opponents, "games": n_games, "p_win": wins / n_games, "p_win_low": float(ci.low),
            "p_win_high": float(ci.high), "win_share": float(share.mean()),
            "win_share_low": float(share.mean()) - half(share), "win_share_high": float(share.mean()) + half(share),
            "gain": float(gain.mean()), "gain_low": float(gain.mean()) - half(gain),
            "gain_high": float(gain.mean()) + half(gain), "mean_score": float(np.concatenate(own).mean()),
            "baseline_mean_score": float(np.concatenate(base_mean).mean()), "seconds": secs}


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


class PlayToWin(Strategy):
    """Opponent-aware: every decision maximizes a normal approximation of P(win).

    Before each of its turns it reads the table: the best opponent's final score is
    approximated by a normal (each opponent's points so far plus the optimal
    expected rest of its game, with that rest's variance, from the solver's tables;
    several opponents folded by :func:`fold_max`). Every final roll of the turn is
    then worth, over the legal boxes,

        max  Phi((points + gain + E[rest after the box] - m_opp) / sqrt(Var[rest after the box] + v_opp + 1))

    (the rest as optimal play would score it; the 1 smooths a margin known to the
    point), and keeps maximize the expectation of that over the rerolls, exactly
    as the solver's one-turn widget does for points. Behind, it prefers the boxes
    and keeps that leave more variance; ahead, less. Alone (no table seen) it plays
    ``optimal``, decision for decision. Needs the exact solver's tables, so rule sets
    the solver cannot handle, and Generala's served throws, are refused.
    """

    name = "play-to-win"
    description = "opponent-aware: maximizes a normal approximation of P(win) against the table"
    chunk: int = 1024

    def __init__(self, solution=None):
        self._given = solution
        self._target = None

    def prepare(self, rules):
        from .exact._solver_lattice import lattice
        from .strategies.optimal import OptimalStrategy

        if rules.roll_dependent or rules.announces or rules.banked_throws:
            raise ValueError(f"play-to-win plays from the solver's one-turn widget, which does not model "
                             f"{rules.key}'s served, announced or saved throws; use optimal or heuristic")
        super().prepare(rules)
        self.optimal = OptimalStrategy(self._given).prepare(rules)
        sol = self.optimal.solution
        self._space = sol.space
        self._values = np.ascontiguousarray(sol.values, dtype=np.float64).reshape(-1)
        self._variances = np.ascontiguousarray(sol.variances, dtype=np.float64).reshape(-1)
        self._lat = lattice(rules.dice)
        d = rules.dice
        sub = d.subkeeps[:, ::-1].astype(np.int64)            # largest keep first, as optimal
        order = np.argsort(sub < 0, axis=1, kind="stable")
        sub = np.take_along_axis(sub, order, axis=1)
        self._sub_pos = np.where(sub >= 0, self._lat.pos_of_keep[np.maximum(sub, 0)], d.n_keeps)
        self._sub_keep = sub
        self._target = None
        self._plans = None
        return self

    # -- the table -----------------------------------------------------------------
    def _rest(self, state):
        """Points so far, optimal expected rest and its variance, per game."""
        sol = self.optimal.solution
        args = (state.filled, state.upper_total, state.five_box_full)
        return (state.total(self.rules).astype(np.float64), sol.value(*args).astype(np.float64),
                sol.variance(*args).astype(np.float64))

    def _keys(self, state):
        """(mask, capped upper total, flag) of each game's card."""
        return self._space.index(state.filled, state.upper_total, state.five_box_full)

    def see_table(self, states, seat, turn):
        others = [self._rest(st) for s, st in enumerate(states) if s != seat]
        m, v = fold_max(np.array([pts + rest for pts, rest, _ in others]), np.array([var for *_, var in others]))
        own = states[seat].total(self.rules).astype(np.float64)
        self._target = (own - m, v + 1.0)     # the margin to beat, and the variance beside our own
        self._plans = None

    def _worth(self, margin, noise, ahead, spread):
        """P(win) approximation of a box: ``ahead`` = points now + E[rest after it]
        (float32; ``spread`` the rest's variance), against the margin to beat."""
        from scipy.special import ndtr

        ahead = ahead + margin
        z = ahead / np.sqrt(spread + noise)
        return ndtr(z) + np.float32(1e-7) * ahead       # ties (a sure result) go to points

    def _plan(self, state):
        """Per game, the value of every keep for 1, 2, .. rerolls left (K, N) each."""
        from .exact._solver_lattice import best_subkeep_mean, expect

        rules, sp, lat = self.rules, self._space, self._lat
        d = rules.dice
        margin, noise = (a.astype(np.float32) for a in self._target)
        mask, u, flag = self._keys(state)
        n, r = len(mask), d.n_rolls
        plans = [None] + [np.empty((d.n_keeps + 1, n), dtype=np.float32) for _ in range(1, rules.n_rolls)]
        for p in plans[1:]:
            p[d.n_keeps] = -np.inf                       # the padding row of _sub_pos
        rolls = np.arange(r)
        rb = lat.level_slices[lat.n_dice]
        n_open = rules.n_boxes - int(state.filled[0].sum()) if n else 0
        for lo in range(0, n, self.chunk):
            hi = min(lo + self.chunk, n)
            key = sp.flat(mask[lo:hi], u[lo:hi], flag[lo:hi])
            _, first, inv = np.unique(key, return_index=True, return_inverse=True)
            g = lo + first
            k = len(g)
            open_ = np.argsort(state.filled[g], axis=1, kind="stable")[:, :n_open]      # (S, O)
            legal, scores, bonus = rules.turn_options(np.repeat(state.filled[g], r, axis=0),
                                                      np.repeat(state.five_box_full[g], r), np.tile(rolls, k))
            gain = scores + rules.upper_bonus_gain(np.repeat(state.upper_total[g], r), scores) + bonus[:, None]
            rows = np.arange(k * r)[:, None]
            cols = np.repeat(open_, r, axis=0)                                            # (S*R, O)
            scores, gain, legal = scores[rows, cols], gain[rows, cols], legal[rows, cols]
            rep = lambda a: np.broadcast_to(np.repeat(a, r)[:, None], cols.shape).ravel()
            nxt = sp.next_flat(rep(mask[g]), rep(u[g]), rep(flag[g]), scores.ravel(), boxes=cols.ravel())
            ok = legal.ravel()
            nxt = np.where(ok, nxt, 0)                   # an illegal box may lead nowhere (NaN)
            ahead = np.where(ok, gain.ravel() + self._values[nxt], -np.inf).astype(np.float32)
            spread = self._variances[nxt].astype(np.float32)
            shape = (k, r, n_open)
            worth = self._worth(margin[lo:hi, None, None], noise[lo:hi, None, None],
                                ahead.reshape(shape)[inv], spread.reshape(shape)[inv])
            best = worth.max(axis=2)                                                      # (games, rolls)
            x = np.empty((d.n_keeps, hi - lo), dtype=np.float32)
            x[rb] = best.T[lat.roll_at]
            for j in range(1, rules.n_rolls):
                expect(lat, x)
                plans[j][:d.n_keeps, lo:hi] = x
                best_subkeep_mean(lat, x)
        return plans

    # -- decisions -------------------------------------------------------------------
    def _at_table(self, rolls) -> bool:
        return self._target is not None and len(self._target[0]) == len(rolls)

    def keep(self, state, rolls, rolls_left, u):
        if not self._at_table(rolls):
            return self.optimal.keep(state, rolls, rolls_left, u)
        if self._plans is None:
            self._plans = self._plan(state)
        ev = self._plans[rolls_left][self._sub_pos[rolls], np.arange(len(rolls))[:, None]]   # (N, S)
        return self._sub_keep[rolls, np.argmax(ev, axis=1)]

    def box(self, state, rolls, options, u):
        if not self._at_table(rolls):
            return self.optimal.box(state, rolls, options, u)
        margin, noise = self._target
        mask, up, flag = self._keys(state)
        nxt = self._space.next_flat(mask, up, flag, options.scores)
        nxt = np.where(options.legal, nxt, 0)
        worth = self._worth(margin[:, None].astype(np.float32), noise[:, None].astype(np.float32),
                            (options.gain + self._values[nxt]).astype(np.float32),
                            self._variances[nxt].astype(np.float32))
        self._target = self._plans = None
        return best_legal(worth, options.legal)
