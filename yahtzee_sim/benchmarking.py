"""Benchmark any strategy: one call, one report card.

:func:`benchmark` puts together what a benchmarker otherwise assembles by hand:

* the strategy's expected score and sd, **exact** when its decisions depend only on the
  card and the dice (its exact score distribution,
  :func:`yahtzee_sim.exact.distribution.distribution`), otherwise **simulated** with a
  95% interval, saying which;
* against each other strategy (default ``heuristic`` and ``optimal``): the paired
  difference of the final scores on common dice (the same seed: each game's dice tape
  is shared, :func:`yahtzee_sim.stats.compare.paired_t_interval`) with its interval, the
  exact difference of the means where both are exact, and the head-to-head win rate of
  two players with their own dice, exact from the two score distributions where both
  have one (:func:`yahtzee_sim.exact.winodds.win_odds`), else counted on the paired
  games with a Wilson interval;
* where the points go: the exact loss accounting
  (:func:`yahtzee_sim.exact.losses.loss_accounting`) when the strategy and the rule set
  allow it; for a strategy that is not exactly evaluable, the same accounting estimated
  from simulated games (:func:`~yahtzee_sim.exact.losses.estimate_losses`, with
  intervals); else the reason it is left out.

Where the system can fork, a second process beside computes what does not wait for
this one's results: optimal play's solves, the other strategies' exact distributions
(into the disk cache; optimal play's is computed here, from its decision table), and the
loss accounting; for a strategy that plans each position (greedy, heuristic) with no
other distribution to compute, its own distribution too, then its accounting in the
same process with the positions already planned, while this one takes optimal play.
The card is the same to the last bit either way (a first run's figures: ``python
benchmarks/bench_cold.py --more --only benchmark``).

>>> b = benchmark("keep-largest", against=["greedy"], rules="yacht", options=["fill-in-order"],
...               games=2000, seed=3)
>>> b.method, abs(b.losses.gap - (b.optimal_mean - b.mean)) < 1e-9
('exact', True)
>>> f = b.to_frame()
>>> f.loc["greedy", "method"], bool(f.loc["greedy", "diff_low"] < f.loc["greedy", "diff"] < f.loc["greedy", "diff_high"])
('exact', True)
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from .rules import RuleSet, get_rules
from .strategies import Strategy, get_strategy

__all__ = ["DEFAULT_AGAINST", "DEFAULT_GAMES", "Benchmark", "benchmark"]

DEFAULT_AGAINST = ("heuristic", "optimal")
DEFAULT_GAMES = 20_000
"""Games simulated for the paired comparisons (about 0.1 point of interval half-width
against optimal for heuristic; enough to tell strategies apart by a point)."""


@dataclass(frozen=True, eq=False)
class Benchmark:
    """A strategy's report card (see the module docstring).

    Attributes
    ----------
    rules : the rule set; strategy : the strategy's name; seed, games : of the simulations.
    method : ``"exact"`` (mean and sd from the exact score distribution) or ``"simulated"``.
    mean, sd : the strategy's expected score and sd (exact or simulated).
    mean_low, mean_high : 95% interval of the mean (equal to ``mean`` when exact).
    optimal_mean : optimal play's exact expected score (NaN if the game cannot be solved).
    comparisons : one dict per opponent: paired difference and its interval, win rate.
    losses : the :class:`~yahtzee_sim.exact.losses.LossAccounting`, or None.
    losses_note : why the loss accounting is missing (empty when it is there).
    distribution, optimal_distribution : the exact score distributions (or None).
    simulated : the strategy's :class:`~yahtzee_sim.results.SimulationResult`.
    seconds : time taken.
    """

    rules: RuleSet
    strategy: str
    seed: int
    games: int
    method: str
    mean: float
    sd: float
    mean_low: float
    mean_high: float
    optimal_mean: float
    comparisons: list
    losses: object = field(repr=False)
    losses_note: str
    distribution: object = field(repr=False)
    optimal_distribution: object = field(repr=False)
    simulated: object = field(repr=False)
    seconds: float = 0.0

    def to_frame(self) -> pd.DataFrame:
        """One row per opponent: the paired difference (this strategy minus it) with its 95%
        interval, the exact difference where both are exact, and the win rate.

        >>> b = benchmark("greedy", against=["keep-largest"], rules="yacht", options=["fill-in-order"],
        ...               games=1000, seed=1)
        >>> list(b.to_frame().columns)[:4]
        ['opponent_mean', 'diff', 'diff_low', 'diff_high']
        """
        import pandas as pd

        cols = list(_COMP_KEYS) + ["method", "games", "note"]
        frame = pd.DataFrame([{c: comp[c] for c in cols} for comp in self.comparisons], columns=cols,
                             index=pd.Index([comp["opponent"] for comp in self.comparisons], name="opponent"))
        return frame

    def summary(self) -> dict:
        """The headline numbers as a plain dict (JSON-able).

        >>> s = benchmark("greedy", against=[], rules="yacht", options=["fill-in-order"], games=500, seed=1).summary()
        >>> s["method"], s["against"]
        ('exact', [])
        """
        out = {"rules": self.rules.key, "strategy": self.strategy, "method": self.method,
               "mean": self.mean, "sd": self.sd, "mean_low": self.mean_low, "mean_high": self.mean_high,
               "optimal_mean": self.optimal_mean, "seed": self.seed, "games": self.games,
               "against": [dict(c) for c in self.comparisons], "seconds": self.seconds,
               "losses": self.losses.to_dict() if self.losses is not None else None,
               "losses_note": self.losses_note}
        return out


_COMP_KEYS = ("opponent_mean", "diff", "diff_low", "diff_high", "diff_exact", "p_win", "p_tie", "p_win_low",
              "p_win_high")


def _exact_distribution(rules, strat, progress):
    """The exact score distribution, or None and why not (a one-line reason)."""
    from .engine import StrategyError
    from .exact.distribution import distribution

    try:
        return distribution(rules, strat, progress=progress, cache=isinstance(strat, str)), ""
    except StrategyError:           # an illegal decision is the strategy's fault: said, not hidden
        raise
    except ValueError as exc:       # not evaluable exactly (or the game is too large): simulate
        return None, str(exc)


def _cached_distribution(rules, name):
    """``name``'s distribution on ``rules`` (a registered rule set) from the disk cache, or
    None (not cached, or not a strategy's name)."""
    from .exact.distribution import cached_distribution
    from .rules import REGISTRY

    return cached_distribution(rules, name) if rules.name in REGISTRY and isinstance(name, str) else None


def _distributions_beside(rules, names, strategy_name: str) -> tuple[list[str], dict]:
    """The opponents whose exact distributions are computed beside: named strategies that
    do not play by a decision table (optimal's is computed here, where its solve is
    loaded), on a registered rule set (whose distributions the disk cache keeps), that
    the disk cache lacks; and those it holds, by name (read once, here)."""
    from .exact.distribution import cached_distribution, plays_by_table
    from .rules import REGISTRY

    wanted: list[str] = []
    held: dict = {}
    if rules.name not in REGISTRY:
        return wanted, held
    for name in dict.fromkeys(n for n in names if isinstance(n, str)):
        strat = get_strategy(name)
        if strat.name == strategy_name or plays_by_table(strat):
            continue
        hit = cached_distribution(rules, name)
        if hit is None:
            wanted.append(name)
        else:
            held[name] = hit
    return wanted, held


def _work_beside(rules, strat_arg, strategies, losses: bool, top: int, distributions=(), parent_done=None,
                 own=None):
    """Start, in a forked process (:class:`~yahtzee_sim.forkpool.Beside`), the steps that
    wait for nothing this process computes first, in the order this one needs them:
    optimal play's float32 solve and its build loops (for its games and distribution),
    the exact distributions of the opponents named in ``distributions`` (into the disk
    cache), the float64 solve (optimal's mean, the values the losses are counted
    against), the loss accounting, and last the loop the next run will play optimal's
    games with. Meanwhile this process computes the strategy's own distribution and
    optimal play's. The solves and distributions land in the disk cache, where this
    process loads them; the losses come back pickled. Their results are the ones
    computed here (the same code on the same inputs).

    ``own``: the strategy (an instance of ``strat_arg``, a name) whose own distribution
    is computed beside too, first, and whose loss accounting then reuses the plans it
    made (a lookahead strategy: the same decisions, each position planned once); this
    process then solves optimal play itself, for its distribution and games.

    The child runs at a lower priority (nice 10): on a first run on a machine every step
    compiles, and this process's own compilations and distributions come first; the
    child takes the core this one leaves (while it waits for a compilation, the other
    core). With ``own`` its steps are the longer part: it runs at this one's priority."""
    from .forkpool import Beside

    held: dict = {}
    steps: list = []
    optimal_played = any(s.name == "optimal" for s in strategies)

    if losses:
        def walk() -> None:         # its compilation, the first time, beside the solves
            from .exact.losses import compile_walk_beside

            held["walk"] = compile_walk_beside()
        steps.append(("walk", walk))

    if own is not None:
        def own_distribution():
            from .exact.distribution import distribution

            with own.plans_kept():      # kept for its accounting below
                dist = distribution(rules, strat_arg, cache=True, player=own)
            return replace(dist, rules=None)        # a rule set does not pickle
        steps.append(("own distribution", own_distribution))

    if optimal_played and own is None:
        def optimal_play() -> None:
            from .exact.decisions import precompile

            optimal = get_strategy("optimal")
            optimal.progress = False
            optimal.prepare(rules)  # its solve, into the cache
            precompile()            # the loops of its decision table's build
        steps.append(("optimal play", optimal_play))

    for i, name in enumerate(distributions):
        def opponent(name=name, first=i == 0) -> None:
            from .exact.distribution import distribution, wait_for_parent_pass_loops

            if first:                   # this process compiles the pass's loops, if any are missing
                wait_for_parent_pass_loops(parent_done)
            distribution(rules, name, cache=True)
        steps.append((f"distribution {name}", opponent))

    def optimal_mean() -> float:
        from .exact.solver import solve

        return solve(rules, dtype=np.float64).mean
    steps.append(("optimal mean", optimal_mean))

    if losses:
        def account():
            from .exact.losses import loss_accounting

            if "walk" in held:
                held["walk"]()
            # a rule set does not pickle (its scoring functions): it travels back without it
            if own is not None:
                with own.plans_kept():
                    return replace(loss_accounting(rules, own, top=top), rules=None)
            return replace(loss_accounting(rules, strat_arg, top=top), rules=None)
        steps.append(("losses", account))

    if optimal_played:
        def table_loop() -> None:   # for the next run, which plays optimal's games by its table
            from .tableplay import precompile

            precompile(rules, background=True)      # a compiler that outlives this run, once a machine
        steps.append(("table loop", table_loop))
    return Beside(steps, what="benchmark", nice=0 if own is not None else BESIDE_NICE, kernels=True)


BESIDE_NICE = 10
"""The priority the benchmark's forked steps run at (``os.nice`` increment)."""


def _wait_beside(beside, step: str, report, phase: str) -> None:
    """Wait for ``step`` beside (its table then loads here); if it failed or was not run,
    this process does the work itself where it needs it."""
    from .progress import heartbeat

    with heartbeat(report, phase):
        try:
            beside.result(step)
        except (ValueError, RuntimeError):
            pass


def _own_distribution(beside, rules, strat, strat_arg, report):
    """The strategy's own distribution, from beside, or None and why not (as
    :func:`_exact_distribution`). Where the step failed (its error comes back a plain
    ``ValueError``) it is computed here: the same answer, an illegal decision raised as
    the ``StrategyError`` it is."""
    from .progress import heartbeat

    try:
        with heartbeat(report, f"distribution of {strat.name} on {rules.key}"):
            return replace(beside.result("own distribution"), rules=rules), ""
    except (ValueError, RuntimeError):
        return _exact_distribution(rules, strat_arg, report)


def _optimal_mean(beside, rules, report) -> float:
    """Optimal play's exact expected score (float64: the values the loss accounting uses,
    so the gap printed is the one accounted); NaN for a game the exact engine cannot solve."""
    from .exact.solver import solve
    from .progress import heartbeat

    try:
        with heartbeat(report, f"solving {rules.key}"):
            return float(beside.result("optimal mean"))
    except ValueError:
        return math.nan
    except RuntimeError:
        pass
    try:
        return solve(rules, dtype=np.float64, progress=report).mean
    except ValueError:
        return math.nan


def _losses(beside, rules, strat, strat_arg, top: int, report):
    """The exact loss accounting, from beside (computed here if that failed)."""
    from .progress import heartbeat

    try:
        with heartbeat(report, f"accounting the losses of {strat.name} on {rules.key}"):
            return replace(beside.result("losses"), rules=rules)
    except RuntimeError:
        from .exact.losses import loss_accounting

        return loss_accounting(rules, strat_arg, top=top, progress=report)


def benchmark(strategy: str | Strategy, *, against=DEFAULT_AGAINST, rules: str | RuleSet = "yahtzee",
              options=(), games: int = DEFAULT_GAMES, seed=None, losses: bool = True,
              top: int = 20, progress=None) -> Benchmark:
    """The report card of ``strategy`` on ``rules`` against each of ``against``.

    Parameters
    ----------
    strategy : a strategy name, a plug-in spec (``module:Class``) or an instance.
    against : strategies to compare with (default ``heuristic`` and ``optimal``).
    rules, options : a rule-set name (or RuleSet) and its options.
    games, seed : the simulated games of the paired comparisons (common dice: one seed
        for every strategy), and of the mean when it cannot be computed exactly.
    losses : account the loss of every decision against optimal play (exact).
    top : costliest positions kept by the loss accounting.
    progress : a :mod:`yahtzee_sim.progress` callback, told each phase.

    >>> benchmark("greedy", against=["no-such"], rules="yacht")
    Traceback (most recent call last):
    ...
    ValueError: unknown strategy 'no-such'; valid strategies: random, keep-largest, greedy, heuristic, optimal, cpu:weak|normal|strong, optimal:theta=<x>, target:T=<score>
    """
    from .api import check_count, simulate
    from .engine import StrategyError
    from .progress import as_progress

    t0 = time.perf_counter()
    rules = get_rules(rules, options)
    if isinstance(against, str):
        against = [against]
    against = list(against)
    strat = get_strategy(strategy)                    # refuses bad names and plug-ins up front
    opponents = [get_strategy(a) for a in against]
    n = check_count(games, "games")
    if n < 2:
        raise ValueError(f"games must be at least 2 for an interval, got {n}")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0] % 10**9)
    report = as_progress(progress)
    strat_arg = strategy if isinstance(strategy, str) else strat
    # what does not need this process's first results runs beside on the second core,
    # the other strategies' distributions too (optimal play's is computed here)
    dists_beside, odists = _distributions_beside(rules, against, strat.name)
    # A strategy that plans each position (greedy, heuristic), its distribution not cached,
    # and no other distribution beside: its distribution and its loss accounting both
    # beside, in one process, the accounting reusing the plans (a fifth of its work), and
    # this process takes optimal play (with another distribution beside, the two sides
    # are already about even). Only where the pass's loops are compiled: otherwise both
    # processes would compile them at once (this one waits for nothing beside)
    from .exact.distribution import pass_compiled

    own_cached = _cached_distribution(rules, strategy)        # read once: the card's if held
    own_beside = losses and isinstance(strategy, str) and hasattr(strat, "plans_kept") \
        and not dists_beside and own_cached is None and pass_compiled()
    # set once this process's own distribution is done: the opponents' passes beside wait
    # for the loops it compiles only until then (it compiles none if its strategy is not
    # evaluable or its distribution is cached)
    from .forkpool import shared_array

    own_pass_done = shared_array(1, "int8")
    beside = _work_beside(rules, strat_arg, [strat, *opponents], losses, top, dists_beside, own_pass_done,
                          own=strat if own_beside else None)
    # the paired interval without scipy.stats (most of a second to import); its one use
    # here, the simulated win odds' interval, imports it only when they are simulated
    from .stats.compare import paired_t_interval

    try:
        if strat.name == "optimal":
            _wait_beside(beside, "optimal play", report, f"solving optimal play on {rules.key}")
        if own_cached is not None:
            dist, why_not = own_cached, ""
        elif not own_beside:
            dist, why_not = _exact_distribution(rules, strat_arg, report)
        own_pass_done[0] = 1
        # the other exact distributions first (those cached are read already), but those computed beside
        for name, opp in zip(against, opponents):
            if name in odists or name in dists_beside or (own_beside and name == strategy):
                continue
            if opp.name == "optimal":
                _wait_beside(beside, "optimal play", report, f"solving optimal play on {rules.key}")
            odists[name] = _exact_distribution(rules, name, report)[0]
        report(f"simulating {strat.name} on {rules.key}", 0, 1 + len(against))
        sim = simulate(rules, get_strategy(strategy), n, seed=seed)
        if own_beside:
            dist, why_not = _own_distribution(beside, rules, strat, strat_arg, report)
            if strategy in against:     # against itself: the same distribution
                odists[strategy] = dist
        s = sim.summary()
        if dist is not None:
            method, mean, sd, low, high = "exact", dist.mean, dist.sd, dist.mean, dist.mean
        else:
            method, mean, sd = "simulated", float(s["mean"]), float(s["sd"])
            low, high = (float(x) for x in sim.ci("mean"))
        comps = []
        opt_dist = None
        for i, (name, opp) in enumerate(zip(against, opponents)):
            if opp.name == "optimal":
                _wait_beside(beside, "optimal play", report, f"solving optimal play on {rules.key}")
            report(f"simulating {opp.name} on {rules.key} (the same dice)", i + 1, 1 + len(against))
            try:
                # the strategy against itself plays the games it played already (one seed)
                other = sim if isinstance(strategy, str) and name == strategy else \
                    simulate(rules, get_strategy(name), n, seed=seed)
            except ValueError as exc:   # e.g. optimal play on a game the exact engine cannot solve
                if isinstance(exc, StrategyError):
                    raise
                comps.append(dict(dict.fromkeys(_COMP_KEYS, math.nan), opponent=opp.name, games=n,
                                  method="not played", note=str(exc)))
                continue
            # the same games on the same dice (one seed): game i of each side paired
            diff, diff_low, diff_high = paired_t_interval(sim.games["total"], other.games["total"])
            if name not in odists:
                if name in dists_beside:
                    _wait_beside(beside, f"distribution {name}", report, f"distribution of {opp.name} on {rules.key}")
                odists[name] = _exact_distribution(rules, name, report)[0]
            odist = odists[name]
            if opp.name == "optimal":
                opt_dist = odist
            comp = {"opponent": opp.name,
                    "opponent_mean": odist.mean if odist is not None else float(other.summary()["mean"]),
                    "diff": diff, "diff_low": diff_low, "diff_high": diff_high,
                    "diff_exact": (dist.mean - odist.mean) if dist is not None and odist is not None else math.nan,
                    "games": n, "note": ""}
            if dist is not None and odist is not None:
                from .exact.winodds import win_odds

                odds = win_odds([dist.pmf, odist.pmf], names=[strat.name, opp.name])
                comp.update(p_win=float(odds.p_win[0]), p_tie=float(odds.p_tie[0]),
                            p_win_low=float(odds.p_win[0]), p_win_high=float(odds.p_win[0]), method="exact")
            else:
                from .stats.proportions import proportion_ci

                a = np.asarray(sim.games["total"])
                b = np.asarray(other.games["total"])
                wins = int((a > b).sum())
                ci = proportion_ci(wins, n)
                comp.update(p_win=wins / n, p_tie=float((a == b).mean()), p_win_low=float(ci.low),
                            p_win_high=float(ci.high), method="simulated")
            comps.append(comp)
        optimal_mean = _optimal_mean(beside, rules, report)
        if opt_dist is None and not math.isnan(optimal_mean):
            opt_dist, _ = _exact_distribution(rules, "optimal", report)
        acc, note = None, ""
        if losses:
            if dist is None:            # estimated from simulated games, each decision's loss exact
                from .exact.losses import estimate_losses

                beside.stop()           # its exact accounting cannot be had: the core is this one's
                try:
                    acc = estimate_losses(rules, strat_arg, n, seed=seed, top=top)
                    note = f"estimated from {n:,} simulated games (no exact accounting: {why_not})"
                except ValueError as exc:
                    if isinstance(exc, StrategyError):
                        raise
                    note = f"no loss accounting: {exc}"
            else:
                try:
                    acc = _losses(beside, rules, strat, strat_arg, top, report)
                except ValueError as exc:
                    note = str(exc)
        else:
            note = "loss accounting not asked for"
    finally:
        beside.stop()               # done (or failed): nothing left running behind
    return Benchmark(rules, strat.name, int(seed), n, method, float(mean), float(sd), float(low), float(high),
                     float(optimal_mean), comps, acc, note, dist, opt_dist, sim, time.perf_counter() - t0)
