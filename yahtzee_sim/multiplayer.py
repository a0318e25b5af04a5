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

:class:`PlayToWin` is an opponent-aware player: before each of its turns it picks,
by its lead and what is left to play, the risk-sensitive optimal strategy
(``optimal:theta=...``) it plays that turn with; its last two turns it plays by the
target tables for its chance of finishing first. Strategies that play from decision
tables (``optimal``, the risk strategies, ``play-to-win``) play each turn of a table
in the engine's lean table loop.

>>> res = simulate_table("yacht", ["greedy", "keep-largest"], 2048, seed=1, options=["fill-in-order"])
>>> bool(res.to_frame().loc["greedy", "p_win"] > 0.9)
True
"""

from __future__ import annotations

import copy
import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np

from .engine import SEED_BLOCK, MoveChecks, block_tapes, family_tapes, play_turn, seed_entropy
from .rules import RuleSet, get_rules
from .state import GameState
from .strategies import Strategy, get_strategy
from .strategies.base import best_legal

__all__ = ["simulate_table", "TableResult", "PlayToWin", "seat_gain", "win_share", "fold_max", "seat_entropy",
           "MAX_SEATS", "THETAS", "take_games", "put_games", "risk_moments"]

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


def _play_blocks(rules, players, entropy, blocks, n_games, lean=True):
    """Play seed ``blocks`` at one table: (n, seats) totals and the servida winners.

    A seat whose strategy plays from a decision table (``play_table``, or
    ``turn_tables`` for one that picks a table per game each turn) plays each turn in
    the engine's lean table loop, on the same dice and with the same decisions as
    through ``keep`` and ``box`` (``lean=False`` forces those, for the tests)."""
    from .tableplay import play_games

    checks = MoveChecks.of(rules)
    n_turns = rules.n_boxes
    seats = len(players)
    uniforms = any(getattr(p, "uses_uniforms", True) is not False for p in players)
    tapes = []
    for s in range(seats):
        tape, unif = block_tapes(rules, seat_entropy(entropy, s), blocks, n_turns, uniforms=uniforms)
        stop = min(len(tape), n_games - blocks.start * SEED_BLOCK)
        extra = {k: v[:stop] for k, v in family_tapes(rules, seat_entropy(entropy, s), blocks, n_turns).items()}
        tapes.append((tape[:stop], None if unif is None else unif[:stop], extra))
    n = len(tapes[0][0])
    states = [GameState.new(rules, n) for _ in range(seats)]
    servida = "servida-wins" in rules.options and states[0].served_five_count is not None
    winner = np.full(n, -1, dtype=np.int8) if servida else None
    frozen = np.zeros((n, seats), dtype=np.int32)     # the scores when a servida ended a game
    lean = lean and not servida and not tapes[0][2]
    by_turn = [lean and hasattr(p, "turn_tables") for p in players]
    tables = [getattr(p, "play_table", None) if lean and not by_turn[s] else None for s, p in enumerate(players)]
    for s in range(seats):
        if tables[s] is not None or by_turn[s]:
            states[s].filled = np.ascontiguousarray(states[s].filled)   # play_games writes through flat views
    d = rules.dice
    for t in range(n_turns):
        for s, strategy in enumerate(players):
            if hasattr(strategy, "see_table"):
                strategy.see_table(states, s, t)
            tape, unif, extra = tapes[s]
            groups = strategy.turn_tables(n) if by_turn[s] else None if tables[s] is None else [(None, tables[s])]
            if groups is not None:
                for idx, table in groups:
                    if idx is None:
                        play_games(rules, table, states[s], tape[:, t:t + 1])
                    else:
                        part = take_games(states[s], idx)
                        play_games(rules, table, part, tape[idx, t:t + 1])
                        put_games(states[s], idx, part)
                continue
            before = states[s].served_five_count.copy() if servida else None
            play_turn(rules, strategy, states[s], d.tape_prefix_keys(tape[:, t]),
                      None if unif is None else unif[:, t], checks, extra)
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
    from .limits import require_memory

    # every game's totals are kept (int64, and once more while the parts are joined)
    require_memory(16 * int(n_games) * len(players), f"a table of {int(n_games):,} games of {len(players)} players",
                   "pass fewer games")
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
        if b == 0 and n_blocks > per:    # timed on the first part: say how long the rest takes
            from .progress import announce, duration_text

            played = min(per * SEED_BLOCK, int(n_games))
            rest = (time.perf_counter() - t0) / played * (int(n_games) - played)
            if rest > 10:
                announce(report, f"{int(n_games):,} games of {len(players)} players: {duration_text(rest)} more "
                                 f"(timed on the first {played:,})")
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


_FORKED: tuple = ()
"""The line-up of the :func:`seat_gain` run whose forked workers play its chunks (inherited,
not pickled: a table player's tables are hundreds of MB)."""


def _forked_chunk(seat, m, part):
    return _gain_chunk(*_FORKED, seat, m, part)


def _gain_chunk(rules, player, baseline, opponent, opponents, seat, m, part):
    """One chunk of :func:`seat_gain`: seat ``seat``'s outcomes with ``player`` and with ``baseline``."""
    others = [opponent] * opponents
    t0 = time.perf_counter()
    res = simulate_table(rules, others[:seat] + [player] + others[seat:], m, seed=part)
    secs = time.perf_counter() - t0
    base = simulate_table(rules, others[:seat] + [baseline] + others[seat:], m, seed=part)
    rest = np.arange(opponents + 1) != seat
    if not (res.totals[:, rest] == base.totals[:, rest]).all():
        raise ValueError("seat_gain: the opponents' games differ between the two runs (an opponent "
                         "that looks at the table cannot be paired)")
    return (seat, int(res.outcomes()[0][:, seat].sum()), win_share(res.totals)[:, seat],
            win_share(base.totals)[:, seat], res.totals[:, seat], base.totals[:, seat], secs)


def _gain_summary(done, proportion_ci) -> dict:
    """P(win), win share and paired gain (95% intervals) and mean scores of chunk outcomes."""
    n = sum(len(o[2]) for o in done)
    wins = sum(o[1] for o in done)
    share = np.concatenate([o[2] for o in done])
    gain = share - np.concatenate([o[3] for o in done])
    own, base = np.concatenate([o[4] for o in done]), np.concatenate([o[5] for o in done])
    half = lambda x: float(1.96 * x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")
    ci = proportion_ci(wins, n)
    return {"games": n, "p_win": wins / n, "p_win_low": float(ci.low), "p_win_high": float(ci.high),
            "win_share": float(share.mean()), "win_share_low": float(share.mean()) - half(share),
            "win_share_high": float(share.mean()) + half(share), "gain": float(gain.mean()),
            "gain_low": float(gain.mean()) - half(gain), "gain_high": float(gain.mean()) + half(gain),
            "mean_score": float(own.mean()), "baseline_mean_score": float(base.mean())}


def seat_gain(rules, player, baseline, opponents: int, n_games: int, *, seed=None, options=(),
              opponent="optimal", seat: int | str = "every", chunk: int = 16 * SEED_BLOCK, jobs: int = 1,
              progress=None) -> dict:
    """``player`` against ``opponents`` ``opponent`` players, paired with ``baseline`` in
    the same seat on the same dice.

    ``seat``: the player's seat (0 plays first), or ``"every"`` (default): the games
    are split evenly over the seats, as a player who sits anywhere at the table,
    since a later seat sees more of the others' games before its own last turns.
    The opponents have their own dice tapes and, if they do not look at the table,
    play the same games in both runs (checked), so the difference of the player's win
    share is a paired comparison. Games run in chunks (seeds spawned from ``seed``,
    so the result does not depend on ``jobs``, the worker processes that play them);
    ``progress(done, total)`` is called after each. Returns the player's P(win) with its
    95% Wilson interval, its win share (ties split) and the paired gain in win share
    over ``baseline``, each with a 95% normal interval, the mean scores, the seconds
    the player's games took (summed over the workers), and ``by_seat``: the same
    figures for each seat played.

    >>> g = seat_gain("yacht", "greedy", "keep-largest", 1, 1024, seed=1, options=["fill-in-order"])
    >>> bool(g["gain"] > 0), g["games"], [s["games"] for s in g["by_seat"]]
    (True, 1024, [512, 512])
    """
    from .stats import proportion_ci

    rules = get_rules(rules, options)
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    if seat == "every":
        seats = list(range(opponents + 1))
    elif isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= opponents:
        raise ValueError(f"seat must be 'every' or 0 to {opponents} (the table's seats), got {seat!r}")
    else:
        seats = [int(seat)]
    if isinstance(n_games, bool) or not isinstance(n_games, (int, np.integer)) or n_games < len(seats):
        raise ValueError(f"n_games must be an integer >= {len(seats)} (a game per seat), got {n_games!r}")
    entropy = seed_entropy(seed)
    per_seat = [n_games // len(seats) + (i < n_games % len(seats)) for i in range(len(seats))]
    jobs_list = [(st, min(chunk, n - lo), int(np.random.SeedSequence(entropy, spawn_key=(opponents, st, i))
                                          .generate_state(1)[0]))
                 for st, n in zip(seats, per_seat) for i, lo in enumerate(range(0, n, chunk))]
    lineup = (rules, player, baseline, opponent, opponents)
    done = []

    def tell(out):
        done.append(out)
        if progress is not None:
            progress(sum(len(o[2]) for o in done), n_games)

    if jobs == 1 or len(jobs_list) == 1:
        for st, m, part in jobs_list:
            tell(_gain_chunk(*lineup, st, m, part))
    else:
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor

        from .runner.backends import close_pool, ordered_results, watch_parent

        global _FORKED
        _FORKED = lineup
        pool = ProcessPoolExecutor(max_workers=min(int(jobs), len(jobs_list)),
                                   mp_context=multiprocessing.get_context("fork"),
                                   initializer=watch_parent, initargs=(os.getpid(),))
        finished = False
        try:
            for out in ordered_results(pool, [pool.submit(_forked_chunk, *args) for args in jobs_list]):
                tell(out)
            finished = True
        finally:
            close_pool(pool, finished)   # bounded on every path (an error, Ctrl-C)
            _FORKED = ()
    out = {"opponents": opponents, "seat": seat if seat == "every" else int(seat),
           **_gain_summary(done, proportion_ci), "seconds": sum(o[6] for o in done)}
    out["by_seat"] = [{"seat": st, **_gain_summary([o for o in done if o[0] == st], proportion_ci)}
                      for st in seats]
    return out


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
    from .exact import cache as _cache
    from .exact.solver import rules_fingerprint

    fp = rules_fingerprint(rules)
    meta = {"rules": rules.key, "fingerprint": fp, "theta": theta, "moments_version": MOMENTS_VERSION}
    return _cache.cache_dir() / _cache.file_name(f"{rules.key}-{fp}-risk-theta{theta!r}-moments-"
                                                 f"v{MOMENTS_VERSION}"), meta


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
    from .exact import cache as _cache
    from .exact.solver import rules_fingerprint, solve

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
    path, meta = _moments_file(rules, float(theta))
    stored = _cache.load(path, meta) if cache else None
    if stored is not None:
        out = (stored["mean"], stored["variance"])
    else:
        from .exact.policy import policy_value
        from .strategies.risk import RiskStrategy

        pv = policy_value(rules, RiskStrategy(theta, progress=False), progress=progress)
        mean = pv.values
        out = (mean.astype(np.float32), np.maximum(pv.second_moments - mean * mean, 0.0).astype(np.float32))
        if cache:
            try:
                _cache.save(path, meta, {"mean": out[0], "variance": out[1]})
            except OSError:          # read-only or full disk: the tables are still right
                pass
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
    5 minutes on 2 cores and 380 MB). Rule sets the risk solver cannot handle
    (Generala's served throws, announced or saved throws) are refused.

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
        from .exact.risk import parse_theta

        if isinstance(endgame, bool) or not isinstance(endgame, (int, np.integer)) or endgame < 0:
            raise ValueError(f"play-to-win: endgame must be a whole number of turns >= 0, got {endgame!r}")
        self.endgame = int(endgame)

        grid = sorted({parse_theta(t) for t in thetas})
        if 0.0 not in grid:
            raise ValueError(f"play-to-win: thetas must include 0 (optimal play), got {list(thetas)!r}")
        self.thetas = np.array(grid)
        self.progress = progress
        self._zero = grid.index(0.0)
        self._pick = None

    def prepare(self, rules):
        from .strategies.risk import RiskStrategy

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
            from .strategies.target import PayoffPlay

            self._payoff = PayoffPlay(progress=self.progress).prepare(rules)   # the target table, disk-cached
        return self

    def _announce(self, rules) -> None:
        """Before the first use on ``rules``: say which tables will be built, and roughly how long."""
        from .exact.risk import parse_theta, risk_cache_path
        from .exact.solver import solve_estimate
        from .progress import announce, duration_text

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
            from .exact.decisions import MAX_TABLE_BYTES, table_bytes

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


def take_games(state: GameState, idx) -> GameState:
    """The cards of games ``idx`` of ``state`` (copies, C-ordered).

    >>> st = GameState.new(get_rules("yacht"), 4)
    >>> st.upper_total[:] = [1, 2, 3, 4]
    >>> take_games(st, np.array([3, 1])).upper_total.tolist()
    [4, 2]
    """
    parts = {f.name: np.ascontiguousarray(getattr(state, f.name)[idx]) for f in dataclasses.fields(state)
             if isinstance(getattr(state, f.name), np.ndarray)}
    return dataclasses.replace(state, **parts)


def put_games(state: GameState, idx, part: GameState) -> None:
    """Write the cards of ``part`` back as games ``idx`` of ``state`` (same turn after).

    >>> st = GameState.new(get_rules("yacht"), 4)
    >>> sub = take_games(st, np.array([0, 2]))
    >>> sub.upper_total += 7
    >>> put_games(st, np.array([0, 2]), sub)
    >>> st.upper_total.tolist()
    [7, 0, 7, 0]
    """
    for f in dataclasses.fields(state):
        a = getattr(state, f.name)
        if isinstance(a, np.ndarray):
            a[idx] = getattr(part, f.name)
    state.turn = part.turn
