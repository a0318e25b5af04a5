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

:class:`~yahtzee_sim.strategies.play_to_win.PlayToWin` is such a strategy (an
opponent-aware player). The games are played by the engine's one game loop
(:func:`~yahtzee_sim.engine.play_seats`: solitaire is one seat) and run through the
runner as solitaire games do (:mod:`yahtzee_sim.runner`: backends, checkpoints,
progress, an exact mergeable :class:`~yahtzee_sim.results.TableAggregate`), and so do
the paired tables of :func:`seat_gain`. Strategies that play from decision tables
(``optimal``, the risk strategies, ``play-to-win``) play in the engine's lean table loop.

>>> res = simulate_table("yacht", ["greedy", "keep-largest"], 2048, seed=1, options=["fill-in-order"])
>>> bool(res.to_frame().loc["greedy", "p_win"] > 0.9)
True
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np

from .engine import SEED_BLOCK, RunSeed, seat_entropy, seed_entropy, servida_ends_games, seed_from_rng
from .results import TableAggregate, table_outcomes, win_share  # noqa: F401 - win_share: its old address
from .rules import RuleSet, get_rules
from .strategy import get_strategy
from .validate import whole_number

__all__ = ["simulate_table", "TableResult", "seat_gain", "win_share", "seat_entropy", "MAX_SEATS"]

MAX_SEATS = 20
"""Largest table (source 000 names a platform for up to 20 players)."""


@dataclass(frozen=True, eq=False)
class TableResult:
    """Games played at one table.

    totals : (N, seats) final scores (for a game a servida ended: the scores then), or
        None when the games were not kept (``keep_games=False``, a checkpoint).
    names : the seats' strategies.
    servida_winner : (N,) int8 under Generala's ``servida-wins``: the seat whose
        served Generala ended the game, -1 where none did; None without the option (or
        when the games were not kept).
    seed, seconds : as :class:`~yahtzee_sim.results.SimulationResult`.
    aggregate : the exact :class:`~yahtzee_sim.results.TableAggregate` of every game
        (scores, wins, ties), from which :meth:`to_frame` computes.
    """

    rules: RuleSet
    names: tuple
    totals: np.ndarray | None = field(repr=False)
    seed: RunSeed
    seconds: float
    servida_winner: np.ndarray | None = field(default=None, repr=False)
    aggregate: TableAggregate | None = field(default=None, repr=False)

    @property
    def n_games(self) -> int:
        return len(self.totals) if self.totals is not None else self.aggregate.n_games

    def outcomes(self):
        """(N, seats) bool arrays: sole winner, tied for first.

        A game won by a servida has that seat as its sole winner, whatever the scores.
        """
        if self.totals is None:
            raise ValueError("the games of this table were not kept: run it with keep_games=True "
                             "(and no checkpoint) for each game's outcome")
        return table_outcomes(self.totals, self.servida_winner)

    def to_frame(self, level: float = 0.95):
        """Per seat: mean score, P(win) with its Wilson interval, P(tie for first), and
        under ``servida-wins`` the share of games it won by a servida (``p_servida_win``)."""
        import pandas as pd

        from .stats import proportion_ci

        agg = self.aggregate
        if agg is None:
            agg = TableAggregate.from_games(self.rules, {"totals": self.totals, "servida_winner": self.servida_winner})
        means = agg.mean_scores()
        servida = servida_ends_games(self.rules)
        rows = []
        for s, name in enumerate(self.names):
            w = int(agg.wins[s])
            ci = proportion_ci(w, self.n_games, level=level)
            row = {"player": name if self.names.count(name) == 1 else f"{name} (seat {s + 1})",
                   "mean_score": float(means[s]), "p_win": w / self.n_games,
                   "p_win_low": ci.low, "p_win_high": ci.high,
                   "p_tie": int(agg.ties[s]) / self.n_games}
            if servida:
                row["p_servida_win"] = int(agg.servida_wins[s]) / self.n_games
            rows.append(row)
        return pd.DataFrame(rows).set_index("player")


def simulate_table(rules: str | RuleSet, players, n_games: int, *, seed=None, rng=None, options=(),
                   batch: int = 16 * SEED_BLOCK, progress=None, keep_games: bool | None = None,
                   backend: str = "serial", jobs: int | None = None, scheduler=None, checkpoint=None) -> TableResult:
    """Play ``n_games`` games with one seat per entry of ``players`` (names or instances).

    The games run through the runner as solitaire games do (:mod:`yahtzee_sim.runner`):
    chunks of ``batch`` games on a ``backend`` (``serial``, ``processes`` with ``jobs``
    workers, ``dask`` with a ``scheduler``), ``checkpoint=FILE`` to resume an interrupted
    run, and memory that does not grow with ``n_games`` unless the games are kept
    (``keep_games``, default: kept without a checkpoint, as every game's outcome is
    needed by :meth:`TableResult.outcomes`; the scores, wins and ties of
    :meth:`TableResult.to_frame` come from the exact aggregate either way).
    ``progress``: True for a bar on a terminal, or a :mod:`yahtzee_sim.progress`
    callback, told ``("games", done, total)`` after each chunk, and how long the rest
    takes when the first chunk says it is more than ten seconds.

    >>> a = simulate_table("yacht", ["greedy", "greedy"], 3000, seed=5, options=["fill-in-order"])
    >>> b = simulate_table("yacht", ["greedy", "greedy"], 3000, seed=5, options=["fill-in-order"], batch=1024)
    >>> bool((a.totals == b.totals).all())
    True
    """
    from .runner import check_backend, run_chunks

    rules = get_rules(rules, options)
    n_games = whole_number(n_games, "n_games")
    batch = whole_number(batch, "batch")
    check_backend(backend, jobs, scheduler)
    players = [get_strategy(p) for p in players]
    if not 2 <= len(players) <= MAX_SEATS:
        raise ValueError(f"a table seats 2 to {MAX_SEATS} players, got {len(players)}")
    if keep_games is None:
        keep_games = checkpoint is None
    if keep_games:
        from .limits import require_memory

        # every game's totals are kept (int64 rows, and once more while the parts are joined)
        require_memory(16 * int(n_games) * len(players), f"a table of {int(n_games):,} games of {len(players)} "
                       "players", "pass fewer games")
    # one instance per seat (strategies keep per-batch state): a repeated one is copied
    players = [copy.copy(p) if any(p is q for q in players[:i]) else p for i, p in enumerate(players)]
    for p in players:
        p.prepare(rules)
    from .progress import as_progress, silent

    report = as_progress(progress)
    try:
        run = run_chunks("table", rules, tuple(players), int(n_games), entropy=seed_from_rng(seed, rng),
                         chunk_blocks=max(1, int(batch) // SEED_BLOCK), keep_games=keep_games, backend=backend,
                         jobs=jobs, scheduler=scheduler, checkpoint=checkpoint,
                         progress=None if report is silent else _timed(report, len(players)))
    finally:
        if progress is True:
            report.close()
    games = run.rows or {}
    return TableResult(rules, tuple(p.name for p in players), games.get("totals"), run.entropy, run.seconds,
                       games.get("servida_winner"), run.value)


def _timed(report, seats: int):
    """``report`` told the games played, and once, after the first chunk, how long the rest
    takes when that is more than ten seconds (a table's games take long: say so early)."""
    t0 = time.perf_counter()
    first: list = []

    def tell(phase, done, total):
        if not first:
            first.append(done)           # the games a checkpoint held, or 0
        elif len(first) == 1 and done > first[0]:
            first.append(done)
            rest = (time.perf_counter() - t0) / (done - first[0]) * (total - done)
            if rest > 10:
                from .progress import announce, duration_text

                announce(report, f"{total:,} games of {seats} players: {duration_text(rest)} more "
                                 f"(timed on the first {done - first[0]:,})")
        report("games", done, total)

    return tell


def seat_gain(rules, player, baseline, opponents: int, n_games: int, *, seed=None, options=(),
              opponent="optimal", seat: int | str = "every", chunk: int = 16 * SEED_BLOCK, jobs: int | None = None,
              progress=None, backend: str | None = None, scheduler=None, checkpoint=None) -> dict:
    """``player`` against ``opponents`` ``opponent`` players, paired with ``baseline`` in
    the same seat on the same dice.

    ``seat``: the player's seat (0 plays first), or ``"every"`` (default): the games
    are split evenly over the seats, as a player who sits anywhere at the table,
    since a later seat sees more of the others' games before its own last turns.
    The opponents have their own dice tapes and, if they do not look at the table,
    play the same games in both runs (checked), so the difference of the player's win
    share is a paired comparison. Games run in chunks (seeds spawned from ``seed``,
    so the result does not depend on where they run) through the runner
    (:mod:`yahtzee_sim.runner`): in this process, on ``jobs`` worker processes
    (``jobs`` > 1, or ``backend="processes"``), or on Dask (``backend="dask"``,
    ``scheduler``); ``progress(done, total)`` is called after each. Each chunk returns an
    exact integer tally (:class:`~yahtzee_sim.runner.gain.GainAggregate`), merged as it
    arrives, so memory does not grow with ``n_games``; ``checkpoint=FILE`` saves the
    completed chunks and their tally, and the same call again resumes the run (another
    seed, size, seat or line-up is refused).

    Returns the player's P(win) with its 95% Wilson interval, its win share (ties
    split) and the paired gain in win share over ``baseline``, each with a 95% normal
    interval (computed from the tally exactly, then rounded), the mean scores, the
    seconds the player's games took (summed over the workers), and ``by_seat``: the
    same figures for each seat played.

    >>> g = seat_gain("yacht", "greedy", "keep-largest", 1, 1024, seed=1, options=["fill-in-order"])
    >>> bool(g["gain"] > 0), g["games"], [s["games"] for s in g["by_seat"]]
    (True, 1024, [512, 512])
    """
    from .runner import check_backend, run_chunks

    rules = get_rules(rules, options)
    if jobs is not None:
        jobs = whole_number(jobs, "jobs")
    if backend is None:
        backend = "dask" if scheduler is not None else "serial" if jobs in (None, 1) else "processes"
    check_backend(backend, None if backend == "serial" else jobs, scheduler)
    chunk = whole_number(chunk, "chunk")
    if seat == "every":
        seats = list(range(opponents + 1))
    elif isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= opponents:
        raise ValueError(f"seat must be 'every' or 0 to {opponents} (the table's seats), got {seat!r}")
    else:
        seats = [int(seat)]
    if isinstance(n_games, bool) or not isinstance(n_games, (int, np.integer)) or n_games < len(seats):
        raise ValueError(f"n_games must be an integer >= {len(seats)} (a game per seat), got {n_games!r}")
    # None: a fresh seed, or the one a checkpoint holds (the parts' seeds follow from it)
    entropy = None if seed is None else seed_entropy(seed)
    per_seat = [n_games // len(seats) + (i < n_games % len(seats)) for i in range(len(seats))]
    parts = tuple((st, min(chunk, n - lo), i) for st, n in zip(seats, per_seat) for i, lo in enumerate(range(0, n, chunk)))
    # prepared once here (the workers get them pickled); one instance per opponent seat
    opp = get_strategy(opponent)
    lineup = [get_strategy(player), get_strategy(baseline)] + [copy.copy(opp) for _ in range(opponents)]
    lineup = [copy.copy(p) if any(p is q for q in lineup[:i]) else p for i, p in enumerate(lineup)]
    for p in lineup:
        p.prepare(rules)
    tell = None if progress is None else (lambda phase, done, total: progress(done, total) if done else None)
    run = run_chunks("gain", rules, tuple(lineup), int(n_games), entropy=entropy, chunk_blocks=1, parts=parts,
                     backend=backend, jobs=None if backend == "serial" else jobs, scheduler=scheduler,
                     checkpoint=checkpoint, progress=tell)
    tally = run.value
    out = {"opponents": opponents, "seat": seat if seat == "every" else int(seat),
           **tally.summary(), "seconds": tally.nanoseconds / 1e9}
    out["by_seat"] = [{"seat": st, **tally.summary(st)} for st in seats]
    return out


_MOVED = {"PlayToWin", "fold_max", "risk_moments", "THETAS", "ENDGAME_TURNS", "MOMENTS_VERSION"}


def __getattr__(name: str):
    """The opponent-aware player moved to :mod:`yahtzee_sim.strategies.play_to_win`
    (strategies live in ``strategies/``); its old address keeps working, with a warning."""
    if name in _MOVED:
        import importlib
        import warnings

        warnings.warn(f"yahtzee_sim.multiplayer.{name} moved to yahtzee_sim.strategies.play_to_win.{name}",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("yahtzee_sim.strategies.play_to_win"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
