"""The ``distributions`` report: exact score distributions, risk and win odds.

* the exact PMF of each strategy of the ladder (with a simulated histogram over
  the strongest one), with percentiles and event probabilities;
* the theta curve: mean, sd, P(score >= 300), P(score < 200) of risk-sensitive
  optimal play against theta, exactly;
* the exact two-player win matrix of the ladder and the exact odds at tables of
  2 to 20 players;
* source 001's three computer levels on its Yacht: exact means and win rates;
* target play: P(score >= T) under the play that maximizes it, for each target T,
  against the same chance under the mean-optimal strategy (exact), with one target
  simulated.

Two steps: :func:`distributions_numbers` computes every number from the exact engine's
and the simulator's public results (:class:`DistributionsNumbers`, no text);
:func:`render_distributions` turns them into a
:class:`~yahtzee_sim.report.document.Report` (tables, figures, reading).

It registers its kind with the experiment specs and the runners when
:mod:`yahtzee_sim.report` is imported. Its exact work does not shrink with the
spec's number of games, so its spec lives in ``experiments/exact/`` (outside the
tiny-run check of every ``experiments/*.toml``); ``tests/test_distribution.py``
runs it on Yacht filled in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..api import simulate
from ..rules import RuleSet, get_rules
from . import experiment as _experiment
from .document import Report
from .runners import _percent_axis, _rules_text, runner

THETAS = (-0.03, -0.01, 0.0, 0.01, 0.03)
"""Risk parameters of the theta curve."""
TABLE_SIZES = (2, 3, 4, 6, 10, 20)
"""Players per table in the multiplayer table (all playing the same strategy but one)."""
HIGH, LOW = 300, 200
LEVEL_GAME = "yacht"
"""Source 001's game, on which its computer levels are compared (with the spec's
options when the spec is about that game too)."""
TARGET_SPAN, TARGET_STEP = 150, 10
"""Targets shown: from ``TARGET_SPAN`` below the highest one (the mean optimum's 90th
percentile rounded down to ``TARGET_STEP``, at most the target solver's default) up to it."""

_experiment.KIND_KEYS["distributions"] = {"rules", "options", "strategies"}
_experiment.KIND_TABLES["distributions"] = ["summary", "theta", "wins", "tables", "levels", "target"]
_experiment.KIND_PLOTS["distributions"] = ["pmf", "theta", "target"]


@dataclass
class TargetNumbers:
    """Target play against the mean optimum, as numbers.

    ``targets`` T = lo..hi with ``p_target`` (exact P(final score >= T) under target play
    for T) and ``p_mean`` (the same under the mean-optimal strategy); ``frame`` shows every
    ``TARGET_STEP``-th target; ``simulated``: one target (``mid``) played by
    ``target:T=<mid>``, its hit rate with a 95% Wilson interval beside both exact values;
    the solve's size (``states`` x ``max_target + 1`` targets, ``table_mib`` MiB of ``dtype``).
    """

    targets: np.ndarray
    p_target: np.ndarray
    p_mean: np.ndarray
    frame: pd.DataFrame
    simulated: pd.DataFrame
    mid: int
    hits: int
    games: int
    ci: tuple
    exact_mid: float
    states: int
    max_target: int
    table_mib: float
    dtype: str


@dataclass
class DistributionsNumbers:
    """What a distributions report says, as numbers.

    ``names``: the strategy ladder (``best`` has the highest exact mean, ``weakest`` is the
    first); ``dists``: the exact :class:`~yahtzee_sim.exact.distribution.ScoreDistribution`
    of each strategy of the ladder and of each ``optimal:theta=t`` of :data:`THETAS`;
    ``summary``: the ladder's exact mean, sd, percentiles, tails and event probabilities;
    ``simulated_hist``: the final scores of ``games`` simulated games of ``best`` (count per
    score); ``theta``: the theta curve; ``wins`` and ``ties``: the exact two-player matrices
    (the ladder and the two extreme thetas); ``tables``: one ``best`` player at tables of
    :data:`TABLE_SIZES` players; ``levels``, ``level_wins``, ``level_ties``: source 001's
    computer levels on its Yacht; ``target``: target play (:class:`TargetNumbers`) when the
    spec asks for it.
    """

    rules: RuleSet
    games: int
    seed: int
    names: list
    best: str
    weakest: str
    dists: dict
    summary: pd.DataFrame
    simulated_hist: np.ndarray
    theta: pd.DataFrame
    wins: pd.DataFrame
    ties: pd.DataFrame
    tables: pd.DataFrame
    levels: pd.DataFrame
    level_wins: pd.DataFrame
    level_ties: pd.DataFrame
    target: TargetNumbers | None = field(default=None)

    def to_frame(self) -> pd.DataFrame:
        """The strategy ladder's exact summary, one row per strategy (a copy).

        >>> from yahtzee_sim.report.experiment import parse_spec
        >>> spec = parse_spec({"kind": "distributions", "rules": "yacht", "options": ["fill-in-order"],
        ...                    "strategies": ["greedy", "optimal"], "games": 200,
        ...                    "tables": ["summary"], "plots": []}, name="d")
        >>> frame = distributions_numbers(spec).to_frame()
        >>> list(frame.index), bool(frame.loc["optimal", "mean"] > frame.loc["greedy", "mean"])
        (['greedy', 'optimal'], True)
        """
        return self.summary.copy()


def _row(d) -> dict:
    out = {"mean": d.mean, "sd": d.sd}
    for q in (1, 10, 25, 50, 75, 90, 99):
        out[f"p{q}"] = d.percentile(q)
    out[f"P(>={HIGH})"] = d.p_at_least(HIGH)
    out[f"P(<{LOW})"] = d.p_below(LOW)
    out["upper_bonus_rate"] = d.p_upper_bonus
    out["five_box_full_rate"] = d.p_five_box_full
    out["p_five_of_a_kind_rolled"] = d.p_five_of_a_kind_rolled
    out["expected_five_bonuses"] = d.expected_five_bonuses
    return out


def distributions_numbers(spec, *, run_options: dict | None = None) -> DistributionsNumbers:
    """Exact distributions of a strategy ladder, the theta curve, exact win odds, computer
    levels and (when the spec asks for it) target play.

    ``run_options`` go to every :func:`~yahtzee_sim.api.simulate`.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "distributions", "rules": "yacht", "options": ["fill-in-order"],
    ...                    "strategies": ["keep-largest", "optimal"], "games": 200,
    ...                    "tables": ["summary"], "plots": []}, name="d")
    >>> nums = distributions_numbers(spec)
    >>> nums.best, nums.target is None, sorted(nums.theta.index) == sorted(THETAS)
    ('optimal', True, True)
    """
    from ..exact.distribution import distribution
    from ..exact.winodds import win_matrix, win_odds
    from ..strategies.levels import LEVELS

    rules = get_rules(spec.rules, spec.options)
    names = list(spec.strategies) or ["keep-largest", "greedy", "optimal"]
    dists = {n: distribution(rules, n, cache=True) for n in names}
    summary = pd.DataFrame({n: _row(d) for n, d in dists.items()}).T
    summary.index.name = "strategy"
    best = max(names, key=lambda n: dists[n].mean)
    sim = simulate(rules, best, spec.games, seed=spec.seed, **(run_options or {}))

    # -- the theta curve -------------------------------------------------------
    curve = {}
    for theta in THETAS:
        d = dists["optimal"] if theta == 0 and "optimal" in dists else \
            distribution(rules, f"optimal:theta={theta:g}", cache=True)
        x = np.arange(len(d.pmf))
        ce = (np.log(d.pmf @ np.exp(theta * (x - d.mean))) / theta + d.mean) if theta else d.mean
        curve[theta] = {"mean": d.mean, "sd": d.sd, f"P(>={HIGH})": d.p_at_least(HIGH),
                        f"P(<{LOW})": d.p_below(LOW), "certainty_equivalent": ce,
                        "median": d.percentile(50)}
        dists.setdefault(f"optimal:theta={theta:g}", d)
    theta = pd.DataFrame(curve).T
    theta.index.name = "theta"

    # -- win odds ------------------------------------------------------------------
    ladder = {n: dists[n] for n in names}
    ladder[f"optimal:theta={max(THETAS):g}"] = dists[f"optimal:theta={max(THETAS):g}"]
    ladder[f"optimal:theta={min(THETAS):g}"] = dists[f"optimal:theta={min(THETAS):g}"]
    win, tie = win_matrix(list(ladder.values()), names=list(ladder))
    tables = []
    weakest = names[0]
    for n in TABLE_SIZES:
        field_ = [dists[best]] + [dists[best]] * (n - 1)
        odds_same = win_odds(field_, names=[f"s{i}" for i in range(n)])
        mixed = win_odds([dists[best]] + [dists[weakest]] * (n - 1), names=[f"s{i}" for i in range(n)])
        tables.append({"players": n, "win_share, all equal": odds_same.win_share[0],
                       "p_win, all equal": odds_same.p_win[0],
                       f"p_win against {weakest}": mixed.p_win[0],
                       f"expected_rank against {weakest}": mixed.expected_rank[0]})
    tables = pd.DataFrame(tables).set_index("players")

    # -- source 001's computer levels on its Yacht -------------------------------------
    yacht = rules if spec.rules == LEVEL_GAME else get_rules(LEVEL_GAME)
    lv = {n: distribution(yacht, n, cache=True) for n in LEVELS}
    lwin, ltie = win_matrix(list(lv.values()), names=[f"{n} {LEVELS[n]}" for n in lv])
    levels = pd.DataFrame({"level": [LEVELS[n] for n in lv], "plays as": ["keep-largest", "heuristic",
                           "optimal"], "mean": [d.mean for d in lv.values()],
                           "sd": [d.sd for d in lv.values()]}, index=pd.Index(list(lv), name="strategy"))
    nums = DistributionsNumbers(rules=rules, games=spec.games, seed=spec.seed, names=names, best=best,
                                weakest=weakest, dists=dists, summary=summary,
                                simulated_hist=sim.aggregate.total_hist, theta=theta, wins=win, ties=tie,
                                tables=tables, levels=levels, level_wins=lwin, level_ties=ltie)
    if "target" in spec.tables or "target" in spec.plots:
        nums.target = _target_numbers(spec, rules, dists["optimal"] if "optimal" in dists else
                                      distribution(rules, "optimal", cache=True), run_options)
    return nums


def _target_numbers(spec, rules, mean_play, run_options) -> TargetNumbers:
    """Target play against the mean optimum: P(score >= T) for a range of targets."""
    from ..exact.target import DEFAULT_MAX_TARGET, target_solve
    from ..intervals import binomial_interval

    hi = min(DEFAULT_MAX_TARGET, mean_play.percentile(90) // TARGET_STEP * TARGET_STEP)
    lo = max(0, hi - TARGET_SPAN)
    sol = target_solve(rules, DEFAULT_MAX_TARGET)
    every = np.arange(lo, hi + 1)
    p_target = sol.to_frame()["p_reach"].to_numpy()[every]
    p_mean = np.array([mean_play.p_at_least(t) for t in every])
    shown = every % TARGET_STEP == 0
    frame = pd.DataFrame({"P(>=T), optimal": p_mean[shown], "P(>=T), target play": p_target[shown],
                          "gain, percentage points": 100 * (p_target - p_mean)[shown]},
                         index=pd.Index(every[shown], name="T"))
    # one target simulated, near the mean optimum's median: target:T=<mid> plays, its hits counted
    mid = int(np.clip(round(mean_play.percentile(50) / TARGET_STEP) * TARGET_STEP, lo, hi))
    sim = simulate(rules, f"target:T={mid}", spec.games, seed=spec.seed, **(run_options or {}))
    hist = sim.aggregate.total_hist
    hits = int(hist[mid:].sum())
    ci = binomial_interval(hits, int(hist.sum()), 0.95)
    sim_row = {"T": mid, "simulated hit rate": hits / hist.sum(), "95% CI low": ci[0],
               "95% CI high": ci[1], "exact, target play": sol.p_reach(mid),
               "exact, optimal": mean_play.p_at_least(mid), "games": int(hist.sum())}
    return TargetNumbers(targets=every, p_target=p_target, p_mean=p_mean, frame=frame,
                         simulated=pd.DataFrame([sim_row]).set_index("T"), mid=mid, hits=hits,
                         games=int(hist.sum()), ci=ci, exact_mid=sol.p_reach(mid),
                         states=sol.summary()["states"], max_target=sol.max_target,
                         table_mib=sol.table.nbytes / 2**20, dtype=f"{sol.dtype}")


# -- rendering -------------------------------------------------------------------------------

def render_distributions(nums: DistributionsNumbers, spec) -> Report:
    """The report of ``nums``: its tables (those ``spec.tables`` names), figures and reading.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "distributions", "rules": "yacht", "options": ["fill-in-order"],
    ...                    "strategies": ["keep-largest", "optimal"], "games": 200,
    ...                    "tables": ["summary"], "plots": []}, name="d")
    >>> render_distributions(distributions_numbers(spec), spec).reading.startswith("`optimal` has the highest")
    True
    """
    rules, names, dists, best, weakest = nums.rules, nums.names, nums.dists, nums.best, nums.weakest
    summary, theta, win, tie, tables = nums.summary, nums.theta, nums.wins, nums.ties, nums.tables
    levels, lwin, ltie = nums.levels, nums.level_wins, nums.level_ties
    rep = Report(spec.name, spec.title or f"Exact score distributions on {rules.title}",
                 question=spec.question)
    rep.add_text("Method", (
        "Every number here is exact (no simulation) unless it says simulated: the score card's "
        "distribution is pushed forward turn by turn under each strategy's own decisions "
        "(`yahtzee_sim.exact.distribution`), which gives the probability of every final score. "
        f"Win odds of players who do not look at each other's cards follow from these "
        f"distributions (`yahtzee_sim.exact.winodds`). The simulated histogram uses {spec.games:,} "
        f"games (seed {spec.seed})."))
    if "summary" in spec.tables:
        rep.add_table("summary", summary, heading="The strategy ladder",
                      caption=f"Exact mean, sd, percentiles (pN: the smallest score x with "
                              f"P(score <= x) >= N%), P(score >= {HIGH}), P(score < {LOW}) and event "
                              "probabilities.")
    if "pmf" in spec.plots:
        hist = nums.simulated_hist

        def pmf(fig):
            ax = fig.add_subplot()
            ax.bar(np.arange(len(hist)), hist / hist.sum(), width=1.0, color="0.85",
                   label=f"{best}, simulated ({spec.games:,} games)")
            for n in names:          # the ladder only: risk-sensitive play has its own figure
                d = dists[n]
                ax.plot(np.arange(len(d.pmf)), d.pmf, lw=1.1, label=f"{n} (exact)")
            hi = max(dists[n].percentile(99.9) for n in names)
            ax.yaxis.set_major_formatter(_percent_axis(1))
            ax.set(xlim=(0, hi + 10), xlabel="final score (points)",
                   ylabel="chance of exactly that score",
                   title=f"{_rules_text(rules)}: exact score distributions")
            # top right: above the thin right tails, clear of the curves' peaks
            ax.legend(loc="upper right", fontsize=8)
        rep.add_figure("pmf", pmf, caption="Exact probability of each final score under each strategy of "
                       f"the ladder; the grey bars are a simulation of the strongest strategy (`{best}`). "
                       "The risk-sensitive strategies are in the theta figure below.")
    if "theta" in spec.tables:
        rep.add_table("theta", theta, heading="Risk: the theta curve",
                      caption="Play that maximizes E[exp(theta * score)], exactly: theta > 0 seeks "
                              "high scores, theta < 0 avoids low ones, theta = 0 is the expected-score "
                              "optimum. certainty_equivalent = log(E[exp(theta * score)]) / theta.")
    if "theta" in spec.plots:
        panels = [("mean", "Mean final score", "points"), ("sd", "Standard deviation", "points"),
                  (f"P(>={HIGH})", f"Chance of {HIGH} or more", "share of games"),
                  (f"P(<{LOW})", f"Chance of less than {LOW}", "share of games")]

        def theta_plot(fig):
            axes = fig.subplots(2, 2, sharex=True)
            for ax, (col, title, unit) in zip(axes.ravel(), panels):
                ax.plot(theta.index, theta[col], marker="o")
                ax.axvline(0, color="0.7", lw=0.8)
                ax.set(title=title, ylabel=unit)
                if unit == "share of games":
                    ax.yaxis.set_major_formatter(_percent_axis())   # digits as the range needs
                else:
                    ax.ticklabel_format(axis="y", useOffset=False)   # points as points, no "+1e2"
            for ax in axes[1]:
                ax.set_xlabel("theta (per point; 0: optimal)")
            fig.suptitle(f"{_rules_text(rules)}: risk-sensitive optimal play, exact\n"
                         "theta > 0 seeks high scores, theta < 0 avoids low ones", fontsize=11)
            fig.tight_layout()
        rep.add_figure("theta", theta_plot, caption=f"Exact mean, standard deviation and tail probabilities "
                       f"of risk-sensitive optimal play (`optimal:theta=<theta>`) on {_rules_text(rules)} "
                       "against theta; theta = 0 is the expected-score optimum.", size=(7.0, 6.0))
    if "wins" in spec.tables:
        rep.add_table("wins", win, heading="Two players, exact",
                      caption="Exact P(row player scores strictly more than the column player); "
                              "independent games.")
        rep.add_table("ties", tie, caption="Exact P(equal scores).")
    if "tables" in spec.tables:
        rep.add_table("tables", tables, heading="Tables of 2 to 20 players, exact",
                      caption=f"One `{best}` player at a table of n players: all equal (n `{best}` "
                              f"players), or against n - 1 `{weakest}` players. win_share: a tie for "
                              "first split evenly (1/n among equals); p_win: sole highest score; "
                              "expected_rank: 1 = first, ties share the better rank.")
    if "levels" in spec.tables:
        rep.add_table("levels", levels, heading="Source 001's computer opponents (Yacht)",
                      caption="よわい・ふつう・つよい as strategies (see yahtzee_sim.strategies.levels).")
        rep.add_table("level_wins", lwin, caption="Exact P(row level beats column level), Yacht.")
    rep.data.update(summary=summary, theta=theta, wins=win, ties=tie, tables=tables, levels=levels,
                    level_wins=lwin, level_ties=ltie, numbers=nums)
    hi_t, lo_t = theta[f"P(>={HIGH})"].idxmax(), theta[f"P(<{LOW})"].idxmin()
    rep.reading = (
        f"`{best}` has the highest expected score ({dists[best].mean:.2f}); its exact chance of "
        f"{HIGH} or more is {dists[best].p_at_least(HIGH):.2%} and of less than {LOW} "
        f"{dists[best].p_below(LOW):.2%}. Among the thetas tried, P(score >= {HIGH}) is largest at "
        f"theta = {hi_t:g} ({theta.loc[hi_t, f'P(>={HIGH})']:.2%}) and P(score < {LOW}) smallest at "
        f"theta = {lo_t:g} ({theta.loc[lo_t, f'P(<{LOW})']:.2%}), each bought with a lower mean. "
        f"Against itself a strategy wins less than half its games (ties: "
        f"{tie.loc[best, best]:.2%} for `{best}`).")
    if nums.target is not None:
        _render_target(rep, spec, rules, nums.target)
    return rep


@runner("distributions")
def run_distributions(spec, *, run_options: dict | None = None) -> Report:
    """Exact distributions of a strategy ladder, the theta curve, exact win odds:
    :func:`distributions_numbers`, then :func:`render_distributions`."""
    return render_distributions(distributions_numbers(spec, run_options=run_options), spec)


def _render_target(rep: Report, spec, rules, t: TargetNumbers) -> None:
    """Target play against the mean optimum: its table, figure and reading."""
    every, p_target, p_mean, frame, mid = t.targets, t.p_target, t.p_mean, t.frame, t.mid
    lo, hi = int(every[0]), int(every[-1])
    hits, games, ci = t.hits, t.games, t.ci
    cost = f"{t.states:,} states x {t.max_target + 1} targets, {t.table_mib:,.0f} MiB ({t.dtype})"
    if "target" in spec.tables:
        rep.add_table("target", frame, heading="Playing for a target",
                      caption=f"Exact P(final score >= T) ('T or better') under the mean-optimal "
                              f"strategy (`optimal`) and under target play (`target:T=<T>`, the "
                              f"strategy that maximizes exactly that chance, a different one for each "
                              f"T); gain = target play minus optimal. One backward solve gives every "
                              f"target at once: {cost}.")
    if "target" in spec.plots:
        def target_plot(fig):
            top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=(2, 1))
            top.plot(every, p_mean, label="optimal (most points on average)")
            top.plot(every, p_target, label="target play for T (a strategy per T)")
            top.errorbar([mid], [hits / games], yerr=[[hits / games - ci[0]], [ci[1] - hits / games]],
                         fmt="o", color="C3", ms=3, capsize=3,
                         label=f"target:T={mid}, simulated ({games:,} games, 95% CI)")
            top.set(ylabel="P(final score >= T)", title=f"{rules.title}: playing for a target")
            top.legend(loc="upper right", fontsize=8)   # the curves fall from the top left
            bottom.plot(every, 100 * (p_target - p_mean), color="C2")
            bottom.axhline(0, color="0.7", lw=0.8)
            bottom.set(xlabel="target T", ylabel="gain, percentage points")
            fig.tight_layout()
        rep.add_figure("target", target_plot, size=(7.0, 5.5),
                       caption=f"Exact P(final score >= T) for T = {lo}..{hi} on {rules.title}: the "
                               f"mean-optimal strategy against target play (for each T the strategy "
                               f"maximizing that chance), and the gain; the red point is a simulation "
                               f"of target:T={mid}.")
    rep.data.update(target=frame, target_simulated=t.simulated)
    best = frame["gain, percentage points"].idxmax()
    rep.reading = (rep.reading or "") + (
        f" Playing for a target pays: at T = {best} target play reaches it with probability "
        f"{frame.loc[best, 'P(>=T), target play']:.2%} against {frame.loc[best, 'P(>=T), optimal']:.2%} "
        f"for the mean-optimal strategy ({frame.loc[best, 'gain, percentage points']:+.2f} percentage points); simulated, "
        f"target:T={mid} scored {mid} or more in {hits / games:.2%} of {games:,} games "
        f"(95% CI {ci[0]:.2%} to {ci[1]:.2%}; exact {t.exact_mid:.2%}).")
