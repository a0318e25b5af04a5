"""Experiment runners: a spec in, a :class:`~yahtzee_sim.report.document.Report` out.

Each runner computes every number it prints (simulation or exact engine) and
writes a short plain-language reading derived from those numbers.

>>> from yahtzee_sim.report.experiment import parse_spec
>>> spec = parse_spec({"kind": "strategies", "strategies": ["random", "keep-largest"],
...                    "games": 2048, "plots": []}, name="demo")
>>> rep = run_experiment(spec)
>>> list(rep.data["summary"].index)
['random', 'keep-largest']
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from ..api import simulate
from ..rules import get_rules
from ..stats import compare_results, proportion_ci
from ..strategies import strategy_names
from .. import fmt
from .document import Report
from .experiment import ExperimentSpec

RUNNERS = {}


def runner(kind: str):
    def register(fn):
        RUNNERS[kind] = fn
        return fn

    return register


def run_experiment(spec: ExperimentSpec, *, command: str = "", **extra) -> Report:
    """Run ``spec`` and return its report (not yet written).

    ``extra`` keywords go to the runner: ``run_options`` (backend, jobs, scheduler for
    every simulation, see :mod:`yahtzee_sim.runner`) or a prepared ``context`` for claims.
    """
    try:
        fn = RUNNERS[spec.kind]
    except KeyError:
        raise ValueError(f"no runner for kind {spec.kind!r}; available: {', '.join(RUNNERS)}") from None
    report = fn(spec, **extra)
    report.command = command or f"yahtzee-sim run {spec.source or spec.name + '.toml'}"
    report.seed = spec.seed
    return report


def _spawned_seeds(seed: int, n: int) -> list[int]:
    """Independent streams: one int seed per run, spawned from the spec's seed.

    An integer per run (rather than the spawned children themselves, which the
    engine also takes) keeps the committed reports' games and lets the CSVs list a
    seed a reader can retype."""
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n)]


def _rules_text(rules) -> str:
    """``Yacht (Japanese) with no-bonus``: the title plus any options, as a reader names it."""
    return rules.title + (f" with {', '.join(rules.options)}" if rules.options else "")


def _games_text(rules, games: int, what: str = "games") -> str:
    return f"{_rules_text(rules)}, {games:,} {what}"


def _mean_cells(frame: pd.DataFrame, mean: str = "mean", low: str = "ci95_low", high: str = "ci95_high"):
    """Means and their intervals as text, with digits from the typical interval width."""
    d = fmt.decimals_for(float(np.median((frame[high] - frame[low]) / 2)))
    return ([fmt.number(v, d) for v in frame[mean]],
            [fmt.interval(lo, hi, d) for lo, hi in zip(frame[low], frame[high])], d)


def _five_box_label(rules) -> str:
    return next((b.label for b in rules.boxes if b.name == rules.five_box), "five of a kind box")


# -- strategies ----------------------------------------------------------------------

def _strategy_summary(results: dict) -> pd.DataFrame:
    rows = {}
    for name, res in results.items():
        s = res.summary()
        rows[name] = {
            "mean": s["mean"], "ci95_low": s["ci95_low"], "ci95_high": s["ci95_high"], "sd": s["sd"],
            "p5": s["p5"], "p25": s["p25"], "median": s["p50"], "p75": s["p75"], "p95": s["p95"],
            "max": s["max"],
        }
        for what in ("upper_bonus", "five_box_50", "five_rolled"):   # each rate with its 95% Wilson interval
            low, high = res.ci(what)
            rows[name].update({f"{what}_rate": res.rate(what), f"{what}_ci95_low": low, f"{what}_ci95_high": high})
    frame = pd.DataFrame(rows).T
    frame.index.name = "strategy"
    return frame


def _summary_display(summary: pd.DataFrame, rules) -> pd.DataFrame:
    means, cis, _ = _mean_cells(summary)
    return pd.DataFrame({
        "Strategy": summary.index, "Mean score": means, "95% CI of the mean": cis,
        "SD": [fmt.number(v, 1) for v in summary["sd"]],
        "5th pct": [fmt.number(v, 0) for v in summary["p5"]],
        "Median": [fmt.number(v, 0) for v in summary["median"]],
        "95th pct": [fmt.number(v, 0) for v in summary["p95"]],
        "Max": [fmt.number(v, 0) for v in summary["max"]],
        "Upper bonus reached (95% CI)": _rate_cells(summary, "upper_bonus"),
        f"{_five_box_label(rules)} scored {rules.five_box_points} (95% CI)": _rate_cells(summary, "five_box_50"),
        "At least one five of a kind rolled (95% CI)": _rate_cells(summary, "five_rolled"),
    })


def _rate_cells(frame: pd.DataFrame, what: str) -> list[str]:
    """``36.7% (36.4% to 37.0%)``: each simulated rate with its 95% interval, same digits."""
    return [" (".join(fmt.percent_ci(p, lo, hi)) + ")" for p, lo, hi in
            zip(frame[f"{what}_rate"], frame[f"{what}_ci95_low"], frame[f"{what}_ci95_high"])]


def _paired(results: dict, baseline: str) -> pd.DataFrame:
    """Each strategy minus the baseline on the same dice (paired t, common random numbers)."""
    rows = {}
    for name, res in results.items():
        if name == baseline:
            continue
        cmp = compare_results(res, results[baseline], paired=True)
        rows[name] = {
            "mean_difference": cmp.diff, "ci95_low": cmp.low, "ci95_high": cmp.high,
            "correlation": cmp.correlation, "variance_saved_factor": cmp.variance_ratio,
        }
    frame = pd.DataFrame(rows).T
    frame.index.name = f"strategy minus {baseline}"
    return frame


@runner("strategies")
def run_strategies(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    rules = get_rules(spec.rules, spec.options)
    names = list(spec.strategies) or strategy_names()
    baseline = spec.baseline or ("optimal" if "optimal" in names else names[-1])
    if baseline not in names:
        raise ValueError(f"{spec.name}: baseline {baseline!r} is not among the strategies {names}")
    results = {n: simulate(rules, n, spec.games, seed=spec.seed, keep_games=True, **(run_options or {})) for n in names}
    # each strategy by its own name (a module:Class strategy shows its name attribute) where they stay distinct
    label = {n: res.strategy for n, res in results.items()}
    if len(set(label.values())) == len(label):
        results = {label[n]: res for n, res in results.items()}
        baseline = label[baseline]
    rep = Report(spec.name, spec.title or f"Strategies compared on {_rules_text(rules)}", question=spec.question)
    rep.add_text("Method", (
        f"{spec.games:,} games of {_rules_text(rules)} (rule key `{rules.key}`) per strategy, all with seed {spec.seed}: every "
        "strategy sees the same dice tape (common random numbers), so differences between strategies come from "
        "their decisions, and paired differences have a small variance. Intervals are 95%: t intervals "
        "for means, paired t intervals for differences. Rates are shares of games: the upper bonus reached, "
        f"{rules.five_box_points} points scored in the {_five_box_label(rules)} box, and at least one turn ending in five of a kind "
        "(whether or not it was scored there)."))
    summary = _strategy_summary(results)
    rep.data["summary"] = summary
    if "summary" in spec.tables:
        rep.add_table("summary", summary, display=_summary_display(summary, rules), heading="Scores",
                      caption=f"Final score per strategy ({_games_text(rules, spec.games)} each).")
    labels = {b.name: b.label for b in rules.boxes}
    boxes = pd.DataFrame({n: r.box_frame()["mean"] for n, r in results.items()})
    boxes.index = pd.Index([labels.get(b, fmt.words(b)) for b in boxes.index], name="box")
    rep.data["boxes"] = boxes
    if "boxes" in spec.tables:
        display = boxes.map(lambda v: fmt.number(v, 2)).reset_index().rename(columns={"box": "Box"})
        rep.add_table("boxes", boxes, display=display, heading="Average points per box",
                      caption=f"Mean points in each box ({_games_text(rules, spec.games)} per strategy).")
    paired = _paired(results, baseline) if len(names) > 1 else pd.DataFrame()
    rep.data["paired"] = paired
    if "paired" in spec.tables and len(paired):
        diffs, cis, _ = _mean_cells(paired, "mean_difference")
        display = pd.DataFrame({
            "Strategy": paired.index, f"Points per game against {baseline}": diffs, "95% CI": cis,
            "Correlation of the scores": [fmt.number(v, 2) for v in paired["correlation"]],
            "Pairing worth (x as many unpaired games)": [fmt.number(v, 1) for v in paired["variance_saved_factor"]],
        })
        rep.add_table("paired", paired, display=display, heading=f"Paired differences against {baseline}",
                      caption="Per-game score difference on common dice.")
    _strategy_figures(rep, spec, rules, results, boxes, baseline)
    best = summary["mean"].idxmax()
    worst = summary["mean"].idxmin()
    means, cis, d = _mean_cells(summary)
    pos = {n: i for i, n in enumerate(summary.index)}
    lines = [f"`{best}` scores most on average ({means[pos[best]]} points, 95% CI {cis[pos[best]]}); "
             f"`{worst}` least ({means[pos[worst]]})."]
    if len(paired):
        diffs, dcis, _ = _mean_cells(paired, "mean_difference")
        for i, (name, row) in enumerate(paired.iterrows()):
            sign = "more" if row["mean_difference"] > 0 else "fewer"
            lines.append(f"`{name}` scores {diffs[i].lstrip('-')} points {sign} than `{baseline}` per game "
                         f"(95% CI {dcis[i]}); pairing on common dice made this comparison as precise as "
                         f"{row['variance_saved_factor']:.1f} times as many unpaired games.")
    rep.reading = "\n\n".join(lines)
    return rep


def _strategy_figures(rep, spec, rules, results, boxes, baseline):
    from .style import PALETTE, LINESTYLES, text_color

    totals = {n: r.games["total"] for n, r in results.items()}
    names = list(totals)
    games = _games_text(rules, spec.games, "games per strategy")
    hi = max(int(np.percentile(t, 99.5)) for t in totals.values())   # the axes stop here: a rare 700 squeezes
    if "histogram" in spec.plots:
        cut = {n: int((t > hi + 5).sum()) for n, t in totals.items()}
        beyond = sum(cut.values())

        def hist(fig):
            axes = np.atleast_1d(fig.subplots(len(names), 1, sharex=True, sharey=True))
            bins = np.arange(0, hi + 10, 5)
            for i, (ax, n) in enumerate(zip(axes, names)):
                # weights 1/n: each bar is the share of games in its 5-point bin, read off the y axis
                ax.hist(totals[n], bins=bins, weights=np.full(len(totals[n]), 1 / len(totals[n])),
                        color=PALETTE[i % len(PALETTE)], alpha=0.85, label=n)
                if n != baseline:
                    ax.hist(totals[baseline], bins=bins, weights=np.full(len(totals[baseline]),
                                                                          1 / len(totals[baseline])),
                            histtype="step", color="black", linewidth=0.9, label=f"{baseline} (outline)")
                ax.yaxis.set_major_formatter(_percent_axis(0))
                ax.yaxis.set_major_locator(_max_ticks(3))
                ax.legend(loc="upper right", fontsize=8)
            fig.supylabel("share of games in each 5-point bin", fontsize=9)
            axes[-1].set_xlabel(f"final score (points, 5-point bins; axis cut at {hi}, the 99.5th percentile)")
            axes[0].set_title(f"Score distribution per strategy\n{_rules_text(rules)}, {spec.games:,} games each")
        rep.add_figure("histogram", hist, heading="Figures", size=(7.5, 1.35 * len(names) + 1.2), caption=(
            f"Final-score histograms, one panel per strategy with `{baseline}` outlined for comparison; {games}. "
            f"The x-axis stops at {hi} points, the highest 99.5th percentile: {beyond:,} games above it are not "
            "drawn."))
    if "ecdf" in spec.plots:
        def ecdf(fig):
            ax = fig.add_subplot()
            for i, n in enumerate(names):
                x = np.sort(totals[n])
                ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=n,
                        linestyle=LINESTYLES[i % len(LINESTYLES)], linewidth=1.4)
            ax.yaxis.set_major_formatter(_percent_axis())
            ax.set_xlim(right=hi + 5)
            ax.set(xlabel=f"final score (points; axis cut at {hi}, the highest 99.5th percentile)",
                   ylabel="games scoring at most x",
                   title=f"Cumulative distribution of the final score\n{_rules_text(rules)}, "
                         f"{spec.games:,} games each")
            ax.legend(loc="lower right")     # a fixed place: "best" is slow on 100,000-step curves, and warns
        above = sum(int((t > hi).sum()) for t in totals.values())
        rep.add_figure("ecdf", ecdf, caption=(f"Empirical cumulative distribution of the final score; {games}. The "
                                              f"x-axis stops at {hi} points: the {above:,} games above it make the "
                                              "last half percent of their curves."))
    if "box-heatmap" in spec.plots:
        def heat(fig):
            ax = fig.add_subplot()
            values = boxes.to_numpy().T
            im = ax.imshow(values, aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(boxes.index)), boxes.index, rotation=45, ha="right")
            ax.set_yticks(range(len(boxes.columns)), boxes.columns)
            ax.grid(False)
            for j in range(values.shape[0]):
                for i in range(values.shape[1]):
                    ax.text(i, j, f"{values[j, i]:.1f}", ha="center", va="center", fontsize=7,
                            color=text_color(im.cmap(im.norm(values[j, i]))))
            fig.colorbar(im, ax=ax, label="mean points")
            ax.set_title(f"Average points per box and strategy: {_rules_text(rules)}, {spec.games:,} games each")
        rep.add_figure("box_heatmap", heat, size=(9.5, 4.2),
                       caption=f"Mean points per box (columns) and strategy (rows); {games}.")
    if "paired" in spec.plots and len(totals) > 1:
        base = totals[baseline].astype(np.int64)

        def paired(fig):
            ax = fig.add_subplot()
            for i, n in enumerate(names):
                if n == baseline:
                    continue
                d = totals[n].astype(np.int64) - base
                ax.hist(d, bins=np.arange(np.percentile(d, 0.5), np.percentile(d, 99.5) + 5, 5),
                        histtype="step", linewidth=1.5, density=True, label=f"{n} − {baseline}",
                        linestyle=LINESTYLES[i % len(LINESTYLES)])
            ax.axvline(0, color="black", linewidth=0.8)
            ax.set(xlabel=f"score difference against {baseline} on the same dice (points)",
                   ylabel="share of games per point",
                   title=f"Paired differences against {baseline}\n{_rules_text(rules)}, {spec.games:,} games")
            ax.legend(loc="upper left")
        rep.add_figure("paired", paired, caption=(
            f"Per-game difference against `{baseline}` on common dice; {games}; each curve drawn between its "
            "0.5th and 99.5th percentile."))


def _max_ticks(n: int):
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(n)


def _percent_axis(decimals: int | None = None):
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=decimals)


# -- head to head ----------------------------------------------------------------------

@runner("head-to-head")
def run_head_to_head(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """Two-player games: each player's dice are independent (different seed streams)."""
    rules = get_rules(spec.rules, spec.options)
    names = list(spec.strategies) or strategy_names()
    seeds = dict(zip(names, _spawned_seeds(spec.seed, len(names))))
    totals = {n: simulate(rules, n, spec.games, seed=seeds[n], keep_games=True, **(run_options or {})).games["total"] for n in names}
    rows, win = [], pd.DataFrame(index=pd.Index(names, name="player"), columns=names, dtype=float)
    for a in names:
        for b in names:
            if a == b:
                continue
            # Player a's game i against player b's game i: independent dice.
            ta, tb = totals[a], totals[b]
            wins, draws = int((ta > tb).sum()), int((ta == tb).sum())
            ci = proportion_ci(wins, len(ta))
            rows.append({"player": a, "opponent": b, "win_rate": wins / len(ta), "win_ci95_low": float(ci.low),
                         "win_ci95_high": float(ci.high), "draw_rate": draws / len(ta),
                         "loss_rate": 1 - (wins + draws) / len(ta)})
            win.loc[a, b] = wins / len(ta)
    wins_frame = pd.DataFrame(rows)
    rep = Report(spec.name, spec.title or f"Head to head on {_rules_text(rules)}", question=spec.question)
    rep.add_text("Method", (
        f"Each strategy plays {spec.games:,} solitaire games of {_rules_text(rules)} (rule key `{rules.key}`) on "
        "its own "
        f"independent dice (seeds spawned from {spec.seed}); game i of one strategy is matched with game i of the "
        "other, which is exactly a two-player game since no built-in strategy looks at the opponent's card. "
        "A win is a strictly higher total; intervals are 95% Wilson intervals."))
    if "wins" in spec.tables:
        cells = [fmt.percent_ci(r.win_rate, r.win_ci95_low, r.win_ci95_high) for r in wins_frame.itertuples()]
        display = pd.DataFrame({
            "Player": wins_frame["player"], "Opponent": wins_frame["opponent"],
            "Player wins": [c[0] for c in cells], "95% CI": [c[1] for c in cells],
            "Draw": [fmt.percent(v) for v in wins_frame["draw_rate"]],
            "Player loses": [fmt.percent(v) for v in wins_frame["loss_rate"]],
        })
        rep.add_table("wins", wins_frame, display=display, index=False, heading="Win and draw rates",
                      caption=f"Share of the {spec.games:,} games the player wins, draws and loses against the "
                              "opponent.")
    means = pd.Series({n: totals[n].mean() for n in names})
    field_rate = win.mean(axis=1)
    ranking = pd.DataFrame({"mean_score": means, "mean_win_rate_vs_field": field_rate,
                            "rank_by_mean": means.rank(ascending=False).astype(int),
                            "rank_by_wins": field_rate.rank(ascending=False).astype(int)})
    ranking.index.name = "strategy"
    rep.data.update(wins=wins_frame, ranking=ranking, matrix=win)
    if "ranking" in spec.tables:
        display = pd.DataFrame({
            "Strategy": ranking.index, "Mean score": [fmt.number(v, 1) for v in ranking["mean_score"]],
            "Average win rate against the others": [fmt.percent(v) for v in ranking["mean_win_rate_vs_field"]],
            "Rank by mean": ranking["rank_by_mean"].astype(str), "Rank by wins": ranking["rank_by_wins"].astype(str),
        })
        rep.add_table("ranking", ranking, display=display, heading="Expected score against chance to win")
    if "win-matrix" in spec.plots:
        def matrix(fig):
            from .style import text_color

            ax = fig.add_subplot()
            m = win.to_numpy(dtype=float)
            im = ax.imshow(m, vmin=0, vmax=1, cmap="RdBu_r")
            ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
            ax.set_yticks(range(len(names)), names)
            ax.grid(False)
            for i in range(len(names)):
                for j in range(len(names)):
                    if i != j:
                        text = fmt.percent(m[i, j])
                        ax.text(j, i, text, ha="center", va="center", fontsize=8 if len(text) < 7 else 6.5,
                                color=text_color(im.cmap(im.norm(m[i, j]))))
            ax.set(xlabel="opponent", ylabel="player",
                   title=f"Win rate of the row player\n{_rules_text(rules)}, {spec.games:,} games per pair")
            fig.colorbar(im, ax=ax, label="win rate", format=_percent_axis(0))
        rep.add_figure("win_matrix", matrix, heading="Figure", size=(6.4, 5.2), caption=(
            f"Share of games the row strategy wins against the column strategy; {_games_text(rules, spec.games)} "
            "per pair, independent dice."))
    same = bool((ranking["rank_by_mean"] == ranking["rank_by_wins"]).all())
    lines = [
        "Ranking the strategies by mean score and by average win rate against the others gives "
        + ("the same order" if same else "different orders")
        + f" here. Best by mean: `{means.idxmax()}`; best by wins: `{field_rate.idxmax()}`. "
        "Maximizing the expected score is not the same objective as maximizing the chance to beat one "
        "opponent, but with these strategies the two "
        + ("agree." if same else "disagree: see the table.")]
    progress = (run_options or {}).get("progress")
    if "exact" in spec.tables:
        lines += _head_to_head_exact(rep, spec, rules, names, wins_frame, progress)
    if "play-to-win" in spec.tables or "play-to-win" in spec.plots:
        lines += _head_to_head_play_to_win(rep, spec, rules, progress)
    rep.reading = "\n\n".join(lines)
    return rep


def _levels_of(names) -> dict:
    """Seed 001's computer level each strategy stands for (``keep-largest`` -> ``cpu:weak`` ...)."""
    from ..strategies import get_strategy
    from ..strategies.levels import LEVELS

    plays_as = {type(get_strategy(level)).__mro__[1].name: level for level in LEVELS}
    return {n: plays_as[n] for n in names if n in plays_as}


def _exact_dists(rules, names, progress):
    from ..exact.distribution import distribution

    step = None if progress is None else (lambda n: lambda phase, done, total: progress(
        f"exact distribution of {n}: {phase}", done, total))
    return {n: distribution(rules, n, cache=True, progress=None if step is None else step(n)) for n in names}


def _head_to_head_exact(rep, spec, rules, names, wins_frame, progress) -> list[str]:
    """The exact two-player win matrix next to the simulated one, and the computer levels."""
    from ..exact.winodds import win_matrix
    from ..strategies.levels import LEVELS

    exact_names = list(spec.exact_strategies) or names
    dists = _exact_dists(rules, exact_names, progress)
    win, tie = win_matrix(list(dists.values()), names=exact_names)
    sim = wins_frame.set_index(["player", "opponent"]) if len(wins_frame) else None
    rows = []
    for a in exact_names:
        for b in exact_names:
            row = {"player": a, "opponent": b, "exact_win": float(win.loc[a, b]), "exact_draw": float(tie.loc[a, b]),
                   "exact_loss": float(1 - win.loc[a, b] - tie.loc[a, b])}
            if sim is not None and (a, b) in sim.index:
                r = sim.loc[(a, b)]
                row.update(simulated_win=float(r["win_rate"]), simulated_ci95_low=float(r["win_ci95_low"]),
                           simulated_ci95_high=float(r["win_ci95_high"]),
                           exact_inside_ci=bool(r["win_ci95_low"] <= win.loc[a, b] <= r["win_ci95_high"]))
            rows.append(row)
    frame = pd.DataFrame(rows)
    rep.data.update(exact_wins=frame, exact_matrix=win, exact_ties=tie,
                    exact_means=pd.Series({n: d.mean for n, d in dists.items()}))
    paired = frame.dropna(subset=["simulated_win"]) if "simulated_win" in frame else frame.iloc[:0]
    paired = paired[paired["player"] != paired["opponent"]]
    cells = [fmt.percent_ci(r.simulated_win, r.simulated_ci95_low, r.simulated_ci95_high) for r in paired.itertuples()]
    display = pd.DataFrame({
        "Player": paired["player"], "Opponent": paired["opponent"],
        "Exact P(player wins)": [fmt.percent(v, 3) for v in paired["exact_win"]],
        "Simulated": [c[0] for c in cells], "95% CI": [c[1] for c in cells],
        "Exact inside the CI": ["yes" if v else "no" for v in paired["exact_inside_ci"]],
        "Exact P(draw)": [fmt.percent(v, 3) for v in paired["exact_draw"]],
    })
    rep.add_table("exact_wins", frame, display=display, index=False, heading="Exact win rates beside the simulated ones",
                  caption=f"Exact P(win) and P(draw) of the player from the two exact score distributions "
                          f"(`yahtzee_sim.exact.winodds`; independent games of {_rules_text(rules)}), beside the "
                          f"simulated rate of {spec.games:,} games and its 95% Wilson interval.")
    matrix = win.copy()
    matrix.index = [f"{n} ({lv})" if (lv := _levels_of([n]).get(n)) else n for n in matrix.index]
    rep.add_table("exact_matrix", win, display=matrix.map(lambda v: fmt.percent(v, 2)).reset_index().rename(
        columns={"index": "Player (row) against opponent (column)"}),
        caption="Exact P(row player scores strictly more than the column player); the diagonal is a strategy "
                "against itself (it loses as often as it wins; the rest is the draws).")
    levels = _levels_of(names)
    out = []
    if levels:
        lv = list(levels)
        sim_win, sim_mean = rep.data["matrix"], rep.data["ranking"]["mean_score"]
        exact_of = lambda n: n in dists
        table = pd.DataFrame({"level": [levels[n] for n in lv], "seed 001": [LEVELS[levels[n]] for n in lv],
                              "plays as": lv,
                              "exact mean": [dists[n].mean if exact_of(n) else np.nan for n in lv],
                              "simulated mean": [float(sim_mean[n]) for n in lv]},
                             index=pd.Index(lv, name="strategy"))
        for n in lv:
            table[f"P(win) against {levels[n]}"] = [
                float(win.loc[m, n]) if exact_of(m) and exact_of(n) else float(sim_win.loc[m, n]) for m in lv]
            table[f"P(win) against {levels[n]} is"] = [
                "exact" if exact_of(m) and exact_of(n) else "simulated" for m in lv]
        rep.data["levels"] = table
        shown = pd.DataFrame({"Level": [f"{levels[n]} {LEVELS[levels[n]]}" for n in lv], "Plays as": lv,
                              "Exact mean": ["" if np.isnan(v) else fmt.number(v, 2) for v in table["exact mean"]],
                              "Simulated mean": [fmt.number(v, 1) for v in table["simulated mean"]]})
        for n in lv:
            shown[f"P(win) against {levels[n]}"] = [
                "" if m == n and not exact_of(n) else
                fmt.percent(v, 2) + ("" if kind == "exact" else " (simulated)")
                for m, v, kind in zip(lv, table[f"P(win) against {levels[n]}"], table[f"P(win) against {levels[n]} is"])]
        missing = [n for n in lv if not exact_of(n)]
        rep.add_table("exact_levels", table, display=shown, heading="Seed 001's computer opponents",
                      caption=f"よわい・ふつう・つよい as the strategies they play as (`yahtzee_sim.strategies.levels`), "
                              f"on {_rules_text(rules)}: means and P(row level beats column level), exact from the "
                              "score distributions where the spec computes them"
                              + (f" (not for {', '.join(f'`{n}`' for n in missing)}: simulated, {spec.games:,} games)"
                                 if missing else "")
                              + ". Seed 001's own game, Yacht, is in the distributions report.")
        if len(lv) > 1:
            top, low = lv[-1], lv[0]
            how = "exactly" if exact_of(top) and exact_of(low) else "simulated"
            out.append(f"Seed 001's strongest computer ({levels[top]}, `{top}`) beats its weakest "
                       f"({levels[low]}, `{low}`) in {fmt.percent(table.loc[top, f'P(win) against {levels[low]}'], 2)} "
                       f"of {rules.title} games ({how}).")
    if len(paired):
        inside = int(paired["exact_inside_ci"].sum())
        out.insert(0, f"The exact win rates check the simulation: {inside} of {len(paired)} exact values lie inside "
                      "the simulated 95% interval (about 95% are expected to).")
    if "win-matrix" in spec.plots:
        _exact_matrix_figure(rep, spec, rules, names, exact_names, win)
    return out


def _exact_matrix_figure(rep, spec, rules, names, exact_names, exact):
    def draw(fig):
        from .style import text_color

        axes = fig.subplots(1, 2)
        sim = rep.data["matrix"].reindex(index=exact_names, columns=exact_names)
        for ax, m, title in ((axes[0], exact, "exact"), (axes[1], sim, f"simulated, {spec.games:,} games per pair")):
            vals = m.to_numpy(dtype=float)
            im = ax.imshow(vals, vmin=0, vmax=1, cmap="RdBu_r")
            ax.set_xticks(range(len(exact_names)), exact_names, rotation=30, ha="right", fontsize=8)
            ax.set_yticks(range(len(exact_names)), exact_names, fontsize=8)
            ax.grid(False)
            for i in range(len(exact_names)):
                for j in range(len(exact_names)):
                    if np.isfinite(vals[i, j]):
                        ax.text(j, i, fmt.percent(vals[i, j]), ha="center", va="center", fontsize=6.5,
                                color=text_color(im.cmap(im.norm(vals[i, j]))))
            ax.set(xlabel="opponent", ylabel="player", title=title)
        fig.suptitle(f"P(row player wins), {_rules_text(rules)}: exact against simulated")
        # every cell carries its number; red: the row player wins more often, blue: less
    rep.add_figure("exact_matrix", draw, size=(10.5, 4.8), caption=(
        f"Left: exact P(row strategy wins) from the exact score distributions (red above 50%, blue below); "
        f"right: the simulated share "
        f"({_games_text(rules, spec.games)} per pair, independent dice; blank on the diagonal). The "
        "diagonal of the exact panel is a strategy against itself."))


def _count_list(numbers) -> str:
    """``1, 3 and 9``."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _head_to_head_play_to_win(rep, spec, rules, progress) -> list[str]:
    """The opponent-aware player against the spec's numbers of optimal players, paired with
    optimal in its seat, the games split evenly over the seats."""
    from ..exact.winodds import win_odds
    from ..multiplayer import seat_gain
    from ..strategies.play_to_win import PlayToWin

    opt = _exact_dists(rules, ["optimal"], progress)["optimal"]
    player = PlayToWin()
    rows = []
    for k in spec.opponents:
        report = None if progress is None else (lambda k: lambda done, total: progress(
            f"play-to-win against {k} optimal", done, total))(k)
        g = seat_gain(rules, player, "optimal", k, spec.table_games, seed=spec.seed, progress=report)
        exact = win_odds([opt] * (k + 1))
        g.pop("seconds")
        g.pop("by_seat")
        g.pop("seat")
        rows.append({**g, "exact_optimal_p_win": float(exact.p_win[0]),
                     "exact_optimal_win_share": float(exact.win_share[0])})
    frame = pd.DataFrame(rows).set_index("opponents")
    rep.data["play_to_win"] = frame
    if "play-to-win" in spec.tables:
        display = pd.DataFrame({
            "Optimal opponents": frame.index.astype(str),
            "Play-to-win P(win)": [fmt.percent_ci(r.p_win, r.p_win_low, r.p_win_high)[0] for r in frame.itertuples()],
            "95% CI": [fmt.percent_ci(r.p_win, r.p_win_low, r.p_win_high)[1] for r in frame.itertuples()],
            "Exact P(win) of optimal in its place": [fmt.percent(v, 2) for v in frame["exact_optimal_p_win"]],
            "Win share (ties split)": [fmt.percent(v, 2) for v in frame["win_share"]],
            "Exact win share of optimal": [fmt.percent(v, 2) for v in frame["exact_optimal_win_share"]],
            "Gain in win share over optimal, same dice": [f"{100 * v:+.2f} points" for v in frame["gain"]],
            "95% CI of the gain": [f"{100 * lo:+.2f} to {100 * hi:+.2f}" for lo, hi in
                                   zip(frame["gain_low"], frame["gain_high"])],
            "Mean score, play-to-win / optimal": [f"{a:.1f} / {b:.1f}" for a, b in
                                                  zip(frame["mean_score"], frame["baseline_mean_score"])],
        })
        rep.add_table("play_to_win", frame, display=display, heading="Playing to win: the opponent-aware player",
                      caption=f"`play-to-win` (`yahtzee_sim.strategies.play_to_win.PlayToWin`: before each of its turns it "
                              f"reads the table and plays the turn with the risk-sensitive optimal strategy "
                              f"`optimal:theta=θ` whose exact rest-of-game mean and variance give it the best normal "
                              f"chance to finish above the best opponent; its last {player.endgame} turns it plays "
                              f"by the exact target tables for its chance of finishing above every opponent) "
                              f"against n `optimal` players, {spec.table_games:,} games of "
                              f"{_rules_text(rules)} per table (seed {spec.seed}), split evenly over its seats; the "
                              "same games with `optimal` in its seat give the paired gain (the opponents play the "
                              "same games in both). Win share counts a tie for first as a split win.")
    if "play-to-win" in spec.plots:
        def draw(fig):
            ax = fig.add_subplot()
            x = np.arange(len(frame))
            ax.errorbar(x, 100 * frame["gain"], yerr=[100 * (frame["gain"] - frame["gain_low"]),
                                                     100 * (frame["gain_high"] - frame["gain"])],
                        fmt="o", capsize=4, label="play-to-win minus optimal, 95% CI")
            ax.axhline(0, color="black", linewidth=0.8)
            ax.set_xticks(x, [f"{k} opponent{'s' if k > 1 else ''}\n(fair share {100 / (k + 1):.1f}%)"
                              for k in frame.index])
            ax.set(ylabel="gain in win share (percentage points)",
                   title=f"What watching the table gains against optimal players\n{_rules_text(rules)}, "
                         f"{spec.table_games:,} games per table, same dice")
            ax.legend()
        rep.add_figure("play_to_win", draw, size=(6.4, 4.2), caption=(
            f"Gain in win share of `play-to-win` over `optimal` in the same seat on the same dice (games split "
            f"evenly over the seats), against "
            f"{_count_list(spec.opponents)} optimal players; {_games_text(rules, spec.table_games)} per table; "
            "bars: 95% intervals."))
    out = []
    for k, r in frame.iterrows():
        shown = r["gain_low"] > 0 or r["gain_high"] < 0
        out.append(f"Against {k} optimal player{'s' if k > 1 else ''}, `play-to-win` wins "
                   f"{fmt.percent(r['p_win'], 2)} of the games (optimal in its place: exactly "
                   f"{fmt.percent(r['exact_optimal_p_win'], 2)}); on the same dice its win share changes by "
                   f"{100 * r['gain']:+.2f} points (95% CI {100 * r['gain_low']:+.2f} to {100 * r['gain_high']:+.2f}), "
                   + ("a gain the interval shows." if r["gain_low"] > 0 else
                      "a loss the interval shows." if shown else "which the interval cannot tell from zero.")
                   + f" It scores {r['mean_score']:.1f} points on average against optimal's {r['baseline_mean_score']:.1f}.")
    return out


# -- claims --------------------------------------------------------------------------------

@runner("claims")
def run_claims(spec: ExperimentSpec, context=None, *, run_options: dict | None = None,
               only: list[str] | None = None) -> Report:
    """Every claim of the source documents (or those whose id starts with one of ``only``)
    with the project's value and a computed verdict, answered by the questions' code."""
    from ..verify import VERDICTS, Context, verify_claims

    ctx = context or Context(games=spec.games, turns=spec.turns, seed=spec.seed, run_options=run_options or {})
    frame = verify_claims(ctx, only=only)
    rep = Report(spec.name, spec.title or "The sources' claims, checked", question=spec.question or (
        "Which numbers and tips in the three source documents hold, computed exactly where possible "
        "and by simulation otherwise?"))
    rep.data["claims"] = frame
    rep.add_text("Method", (
        "Each claim of the source documents is a claim of `yahtzee_sim/questions/sources.toml`, a claims file in "
        "the format `yahtzee-sim check` reads (docs/questions.md): the quote, an English paraphrase, the "
        "question it asks, the value and the precision it was stated with (or, for tips, the measurable "
        "question it becomes). The same code as `yahtzee-sim check` computes the value exactly where the exact "
        "engine can (dice tables, Markov chains, the optimal solver, exact score and card-event "
        "distributions, max/min backward induction) and by simulation with a 95% interval "
        f"({ctx.games:,} games per strategy, {ctx.turns:,} throws, positions or turns, seed {ctx.seed}). "
        "Verdicts are "
        "computed: *confirmed* if the true value rounds to the claim at its stated precision, *confirmed with "
        "rounding* if it is off by at most one unit of that precision, *imprecise* if in the right ballpark "
        "(3 units or 10%), *wrong* otherwise; tips are confirmed when the measurement satisfies the stated "
        "reading (imprecise when its interval straddles the boundary). Where an exact value exists the verdict "
        "uses it, and the simulation beside it only cross-checks the simulator: its interval belongs to the "
        "simulated value. *How it was computed* names, for every simulated value, the strategy played, the "
        "sample and what exactly is counted."))
    counts = frame["verdict"].value_counts().reindex(VERDICTS).dropna().astype(int).rename("claims").to_frame()
    counts.index.name = "verdict"
    rep.add_table("verdicts", counts, heading="Verdicts")
    data = frame.drop(columns=["quote", "seconds", "exact_text", "simulated_text", "value", "source"]).assign(
        exact_fraction=[f"{f['numerator']}/{f['denominator']}" if f else "" for f in frame["exact_fraction"]])
    for seed in sorted(frame["seed"].unique()):  # sources in order: 000, 001, 003
        group = frame[frame["seed"] == seed]
        display = pd.DataFrame({
            "Claim": group.index.map(lambda i: f"`{i}`"), "In English": group["english"], "Stated": group["claim"],
            "Exact value": group["exact_text"], "Simulated (95% CI)": group["simulated_text"],
            "Verdict": group["verdict"], "How it was computed": group["method"], "Detail": group["detail"],
        })
        rep.add_table(f"claims_seed_{seed}", data[data["seed"] == seed].drop(columns="seed"), display=display,
                      heading=f"Source {seed}")
    quotes = frame[["seed", "quote"]].sort_values("seed", kind="stable")
    rep.add_table("quotes", quotes, heading="The claims in their original words",
                  display=pd.DataFrame({"Claim": quotes.index.map(lambda i: f"`{i}`"), "Source": quotes["seed"],
                                        "Quote": quotes["quote"]}))
    not_ok = frame[~frame["verdict"].isin(["confirmed"])]
    lines = [f"{int((frame['verdict'] == 'confirmed').sum())} of {len(frame)} claims are confirmed as stated."]
    for cid, row in not_ok.sort_values("seed", kind="stable").iterrows():
        if row["exact_text"]:  # an exact value carries no interval: the simulation is only a cross-check
            found = f"exactly {row['exact_text']}"
        else:
            found = f"an estimated {row['simulated_text']} ({row['method']})"
        lines.append(f"- `{cid}` ({row['verdict']}): \"{row['english']}\" Checked as: {row['claim']}. "
                     f"The project finds {found}" + (f"; {row['detail']}." if row["detail"] else "."))
    rep.reading = "\n".join(lines)
    return rep


# -- odds ----------------------------------------------------------------------------------

def _share_cells(k: int, n: int, exact: float) -> dict:
    from ..stats import proportion_ci

    ci = proportion_ci(int(k), int(n))
    lo, hi = float(ci.low), float(ci.high)
    return {"simulated": k / n, "ci95_low": lo, "ci95_high": hi, "inside_ci": bool(lo <= exact <= hi)}


@runner("odds")
def run_odds(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """First-roll and per-turn pattern odds, exact against simulated, with convergence."""
    from ..api import simulate_turns
    from ..exact.odds import one_roll_odds
    from ..exact.turns import pattern_policy, turn_odds
    from ..strategies.simple import KeepAll

    rules = get_rules(spec.rules, spec.options)
    policy = spec.strategy
    n = spec.games
    opts = run_options or {}
    rep = Report(spec.name, spec.title or f"Dice odds of {_rules_text(rules)}: exact and simulated", question=spec.question)
    rep.add_text("Method", (
        f"Rules: {_rules_text(rules)} (rule key `{rules.key}`), {rules.n_dice} dice, {rules.n_rolls} rolls per turn. Exact values "
        f"count the {rules.n_faces ** rules.n_dice:,} equally likely ordered throws and push them through the "
        "exact keep-to-roll transitions (a Markov chain over the distinct rolls). Simulated values come from the "
        f"project's turn simulator: {n:,} first rolls and {n:,} turns under `{policy}`, seed {spec.seed}, "
        "with 95% Wilson intervals. *Best keeps* are the keeps that maximize the chance of that very pattern. "
        "Patterns marked *or better* include the stronger ones (four of a kind counts five of a kind); the others "
        "are exactly that pattern."))
    first = one_roll_odds(rules)
    sim_first = simulate_turns(rules, KeepAll(), n, seed=spec.seed, **opts).pattern_counts()
    per_turn = turn_odds(rules, policy)
    sim_turn = simulate_turns(rules, policy, n, seed=spec.seed, **opts).pattern_counts()
    rows_first, rows_turn = [], []
    for pattern in first.counts.index:
        p = first.probability(pattern)
        rows_first.append({"pattern": pattern, "exact_fraction": str(first.fraction(pattern)), "exact": p,
                           **_share_cells(int(sim_first[pattern]), n, p)})
        best = turn_odds(rules, pattern_policy(rules, pattern)).probability(pattern)
        p = per_turn.probability(pattern)
        rows_turn.append({"pattern": pattern, "exact": p, **_share_cells(int(sim_turn[pattern]), n, p),
                          "turns_per": 1 / p if p else float("inf"), "exact_best_keeps": best,
                          "turns_per_best": 1 / best if best else float("inf")})
    first_frame = pd.DataFrame(rows_first).set_index("pattern")
    turn_frame = pd.DataFrame(rows_turn).set_index("pattern")
    rep.data.update({"first-roll": first_frame, "per-turn": turn_frame})

    def shares(frame, exact_header):
        cells = [fmt.percent_ci(r.simulated, r.ci95_low, r.ci95_high) for r in frame.itertuples()]
        return {"Pattern": [fmt.pattern_label(p) for p in frame.index],
                exact_header: [fmt.percent(v, 2) for v in frame["exact"]],
                "Simulated": [c[0] for c in cells], "95% CI": [c[1] for c in cells],
                "Exact inside the CI": ["yes" if v else "no" for v in frame["inside_ci"]]}

    if "first-roll" in spec.tables:
        display = pd.DataFrame({**shares(first_frame, "Exact"), "Exact fraction": list(first_frame["exact_fraction"])})
        rep.add_table("first_roll", first_frame, display=display, heading=f"One roll of {rules.n_dice} dice",
                      caption=f"Chance of each pattern on one roll; {n:,} simulated rolls.")
    if "per-turn" in spec.tables:
        display = pd.DataFrame({
            **shares(turn_frame, f"Exact under {policy}"),
            "Once every (turns)": [fmt.number(v, 1) for v in turn_frame["turns_per"]],
            "Exact with best keeps": [fmt.percent(v, 2) for v in turn_frame["exact_best_keeps"]],
            "Once every, best keeps (turns)": [fmt.number(v, 1) for v in turn_frame["turns_per_best"]],
        })
        rep.add_table("per_turn", turn_frame, display=display,
                      heading=f"One turn of {rules.n_rolls} rolls (keeps: {policy}, and best keeps)",
                      caption=f"Chance that a turn ends in each pattern; {n:,} simulated turns under `{policy}`.")
    checkpoints = list(spec.checkpoints) or sorted({int(x) for x in np.geomspace(100, n, 12)})
    exact_five = per_turn.probability("five_of_a_kind")
    conv = []
    for m in checkpoints:
        k = int(simulate_turns(rules, policy, m, seed=spec.seed, **opts).pattern_counts()["five_of_a_kind"])
        cells = _share_cells(k, m, exact_five)
        conv.append({"turns": m, "estimate": cells["simulated"], "ci95_low": cells["ci95_low"],
                     "ci95_high": cells["ci95_high"], "exact": exact_five})
    conv_frame = pd.DataFrame(conv).set_index("turns")
    rep.data["convergence"] = conv_frame
    if "convergence" in spec.tables:
        cells = [fmt.percent_ci(r.estimate, r.ci95_low, r.ci95_high) for r in conv_frame.itertuples()]
        display = pd.DataFrame({"Simulated turns": [f"{m:,}" for m in conv_frame.index],
                                "Five of a kind": [c[0] for c in cells], "95% CI": [c[1] for c in cells],
                                "Exact": [fmt.percent(v, 2) for v in conv_frame["exact"]]})
        rep.add_table("convergence", conv_frame, display=display,
                      heading="Convergence of the simulated five-of-a-kind rate",
                      caption=f"Share of turns under `{policy}` ending in five of a kind, by number of simulated "
                              "turns.")
    if "convergence" in spec.plots:
        def draw(fig):
            ax = fig.add_subplot()
            ax.fill_between(conv_frame.index, conv_frame["ci95_low"], conv_frame["ci95_high"], alpha=0.3,
                            label="95% Wilson interval")
            ax.plot(conv_frame.index, conv_frame["estimate"], marker="o", label="simulated estimate")
            ax.axhline(exact_five, color="black", linestyle="--", label=f"exact {fmt.percent(exact_five, 2)}")
            ax.set_xscale("log")
            ax.yaxis.set_major_formatter(_percent_axis())
            ax.set(xlabel="simulated turns (log scale)", ylabel="turns ending in five of a kind",
                   title=f"Five of a kind per turn under {policy}\n{_rules_text(rules)}, up to "
                         f"{max(checkpoints):,} turns")
            ax.legend()
        rep.add_figure("convergence", draw, heading="Figure", caption=(
            f"Simulated share of turns ending in five of a kind and its 95% interval against the number of turns "
            f"({_rules_text(rules)}, `{policy}` keeps, seed {spec.seed}); dashed: the exact value."))
    inside = int(first_frame["inside_ci"].sum() + turn_frame["inside_ci"].sum())
    total = len(first_frame) + len(turn_frame)
    rep.reading = (
        f"Five of a kind on one roll has exact probability {first.fraction('five_of_a_kind')} "
        f"({fmt.percent(first.probability('five_of_a_kind'), 2)}); within a {rules.n_rolls}-roll turn under "
        f"{policy} it is {fmt.percent(exact_five, 2)}, once every {1 / exact_five:.1f} turns. {inside} of {total} "
        "simulated frequencies fall inside their 95% interval around the exact value (about 95% are expected to; "
        "the patterns are counted on the same rolls, so their misses are not independent).")
    return rep


# -- variants --------------------------------------------------------------------------------

def _variant_list(spec: ExperimentSpec):
    from ..rules import rule_options

    keys = list(spec.rule_sets)
    keys += ["yacht+" + o.removeprefix("yacht+") for o in (spec.yacht_options or rule_options("yacht"))]
    return [get_rules(k) for k in keys]


# A variant's reference: the rule set it changes one rule of (Yacht's local rules against plain Yacht,
# the other Yahtzee jokers against the official forced joker).
VARIANT_REFERENCES = {"yahtzee-free-joker": "yahtzee", "yahtzee-original-joker": "yahtzee"}


def _variant_reference(rules) -> str | None:
    if rules.options:
        return rules.name
    return VARIANT_REFERENCES.get(rules.key)


def _exact_value(rules, strategy: str):
    """(mean, sd, how) of ``strategy`` on ``rules`` computed exactly, or None where no exact
    evaluation exists: optimal play from the solver, any other strategy whose decisions
    depend only on the state by policy evaluation (:func:`~yahtzee_sim.exact.policy.policy_value`)."""
    from ..exact.policy import policy_value
    from ..exact.solver import solve

    if strategy in ("optimal", "cpu:strong"):
        sol = solve(rules)
        return sol.expected_score, sol.sd, "solver"
    try:
        pv = policy_value(rules, strategy)
    except ValueError:       # decisions that use the uniforms or more than the state: simulation only
        return None
    return pv.expected_score, pv.sd, "policy evaluation"


def _dice_groups(variants) -> dict:
    """Variants grouped by their dice-tape layout (boxes, rolls, dice, faces): one group plays
    the same dice, game for game, under one seed (common random numbers)."""
    from ..stats.compare import TAPE_LAYOUT

    groups: dict = {}
    for rules in variants:
        groups.setdefault(tuple(getattr(rules, f) for f in TAPE_LAYOUT), []).append(rules.key)
    return groups


@runner("variants")
def run_variants(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """Every rule set, and Yacht local rules (alone or combined) against plain Yacht, under each
    strategy of the spec: each strategy's simulated scores beside its own exact value, and each
    rule's effect per strategy, paired on common dice where the variants share them.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 500,
    ...                    "rule_sets": ["yacht"], "yacht_options": ["no-bonus"], "plots": []}, name="demo")
    >>> rep = run_variants(spec)
    >>> eff = rep.data["effects"].loc[("yacht+no-bonus", "keep-largest")]
    >>> bool(eff["common_dice"]), bool(eff["ci95_low"] <= eff["exact_change"] <= eff["ci95_high"])
    (True, True)
    """
    from ..stats import paired_compare
    from ..stats.compare import two_sample_compare

    variants = _variant_list(spec)
    strategies = spec.strategies or (spec.strategy,)
    groups = _dice_groups(variants)
    group_of = {key: g for g, keys in enumerate(groups.values()) for key in keys}
    # one seed per dice group: the variants of a group play the same dice, game for game
    seeds = _spawned_seeds(spec.seed, len(groups))
    rows, totals, labels, exact = [], {}, {}, {}
    for strategy in strategies:
        for rules in variants:
            seed = seeds[group_of[rules.key]]
            res = simulate(rules, strategy, spec.games, seed=seed, keep_games=True, **(run_options or {}))
            labels[strategy] = res.strategy       # a strategy's own name (module:Class shows its name)
            s = res.summary()
            totals[rules.key, strategy] = res.games["total"]
            if callable((run_options or {}).get("progress")):   # a solve or policy evaluation says nothing itself
                run_options["progress"](f"exact value of {res.strategy} on {rules.key}", 0, None)
            ex = _exact_value(rules, strategy)
            exact[rules.key, strategy] = ex[0] if ex else np.nan
            ub, fb = res.ci("upper_bonus"), res.ci("five_box_50")
            rows.append({
                "variant": rules.key, "strategy": res.strategy, "boxes": rules.n_boxes,
                "exact_mean": ex[0] if ex else np.nan, "exact_sd": ex[1] if ex else np.nan,
                "exact_method": ex[2] if ex else "none (simulation only)",
                "simulated_mean": s["mean"], "ci95_low": s["ci95_low"], "ci95_high": s["ci95_high"],
                "inside_ci": bool(s["ci95_low"] <= ex[0] <= s["ci95_high"]) if ex else None,
                "seed": seed, "dice_group": group_of[rules.key] + 1,
                "p5": s["p5"], "median": s["p50"], "p95": s["p95"],
                "upper_bonus_rate": res.rate("upper_bonus"), "upper_bonus_ci95_low": ub[0],
                "upper_bonus_ci95_high": ub[1],
                "five_box_50_rate": res.rate("five_box_50"), "five_box_50_ci95_low": fb[0],
                "five_box_50_ci95_high": fb[1],
            })
    frame = pd.DataFrame(rows).set_index(["variant", "strategy"])
    effects = []
    for strategy in strategies:
        for rules in variants:
            ref = _variant_reference(rules)
            if ref is None or ref not in {v.key for v in variants}:
                continue
            a, b = totals[rules.key, strategy], totals[ref, strategy]
            common = group_of[rules.key] == group_of[ref]
            cmp = paired_compare(a, b) if common else two_sample_compare(a, b)
            change = exact[rules.key, strategy] - exact[ref, strategy]
            effects.append({"variant": rules.key, "strategy": labels[strategy], "reference": ref,
                            "common_dice": common, "change": cmp.diff, "ci95_low": cmp.low, "ci95_high": cmp.high,
                            "exact_change": change,
                            "exact_inside_ci": bool(cmp.low <= change <= cmp.high) if np.isfinite(change) else None})
    effects = pd.DataFrame(effects)
    if len(effects):
        effects = effects.set_index(["variant", "strategy"])
    names = [labels[s] for s in strategies]
    who = ", ".join(f"`{n}`" for n in names)
    rep = Report(spec.name, spec.title or f"Rule variants under {who}", question=spec.question)
    split = [keys for keys in groups.values() if len(keys) > 1 or len(groups) > 1]
    rep.add_text("Method", (
        f"Every variant is played {spec.games:,} times under each strategy ({who}). Beside each strategy's "
        "simulated mean stands that same strategy's exact expected score where one can be computed: the solver's "
        "for `optimal`, policy evaluation (backward induction over every score-card state under the strategy's own "
        "decisions) for the others; a strategy whose decisions cannot be evaluated exactly has none. "
        "Variants with the same dice-tape layout (boxes, rolls, dice, faces) share one seed, so they play the same "
        "dice game for game (common random numbers): " + "; ".join(
            ", ".join(f"`{k}`" for k in keys) for keys in split) + " (seeds spawned from "
        f"{spec.seed}, listed in the CSV). A rule's *effect* is the variant's score minus its reference's "
        "(Yacht's local rules against plain Yacht, the other Yahtzee jokers against the official one) under the "
        "same strategy: a paired interval on common dice where the two share them, a Welch interval on "
        "independent games where they cannot (a rule that adds a box adds a turn, so the dice differ); the "
        "exact change is the difference of the two exact values."))
    rep.data["variants"] = frame
    rep.data["effects"] = effects
    if "variants" in spec.tables:
        flat = frame.reset_index()
        means, cis, _ = _mean_cells(flat, "simulated_mean")
        display = pd.DataFrame({
            "Variant": flat["variant"], "Strategy": flat["strategy"], "Boxes": flat["boxes"].astype(str),
            "Exact mean (same strategy)": [fmt.number(v, 2) for v in flat["exact_mean"]],
            "Exact SD": [fmt.number(v, 1) for v in flat["exact_sd"]],
            "Simulated mean": means, "95% CI": cis,
            "Exact inside the CI": ["" if v is None else "yes" if v else "no" for v in flat["inside_ci"]],
            "5th pct": [fmt.number(v, 0) for v in flat["p5"]], "Median": [fmt.number(v, 0) for v in flat["median"]],
            "95th pct": [fmt.number(v, 0) for v in flat["p95"]],
            "Upper bonus reached (95% CI)": [" (".join(fmt.percent_ci(*r)) + ")" for r in zip(
                flat["upper_bonus_rate"], flat["upper_bonus_ci95_low"], flat["upper_bonus_ci95_high"])],
            "Five-of-a-kind box scored in full (95% CI)": [" (".join(fmt.percent_ci(*r)) + ")" for r in zip(
                flat["five_box_50_rate"], flat["five_box_50_ci95_low"], flat["five_box_50_ci95_high"])],
        })
        rep.add_table("variants", frame, display=display, heading="Expected score per variant and strategy",
                      caption=f"{spec.games:,} simulated games per variant and strategy; the exact mean in each row is "
                              "the row's own strategy's.")
    if "effects" in spec.tables and len(effects):
        grid = {"Variant": [], "Against": [], "Dice": []}
        for key in dict.fromkeys(effects.index.get_level_values(0)):
            grid["Variant"].append(key)
            grid["Against"].append(effects.loc[key]["reference"].iloc[0])
            grid["Dice"].append("common" if effects.loc[key]["common_dice"].iloc[0] else "independent")
            for n in names:
                e = effects.loc[(key, n)]
                grid.setdefault(f"{n}: change (95% CI)", []).append(
                    f"{e['change']:+.2f} ({e['ci95_low']:+.2f} to {e['ci95_high']:+.2f})")
                grid.setdefault(f"{n}: exact change", []).append(
                    "" if not np.isfinite(e["exact_change"]) else f"{e['exact_change']:+.2f}")
        rep.add_table("effects", effects, display=pd.DataFrame(grid), heading="What each rule changes, per strategy",
                      caption="Simulated change in mean score against the reference rule set, under each strategy, "
                              "with its 95% interval (paired on common dice, else Welch); the exact change where both "
                              "sides are exactly evaluable.")
    if "variants" in spec.plots:
        keys = [r.key for r in variants]

        def draw(fig):
            from matplotlib.lines import Line2D

            axes = fig.subplots(1, len(names), sharey=True, squeeze=False)[0]
            for ax, strategy, name in zip(axes, strategies, names):
                ax.boxplot([totals[k, strategy] for k in keys], orientation="horizontal", showfliers=False,
                           whis=(5, 95), medianprops={"color": "#e07b39", "linewidth": 1.6})
                ex = [exact[k, strategy] for k in keys]
                ax.scatter(ex, range(1, len(keys) + 1), color="black", zorder=3, s=18)
                ax.set(xlabel="final score (points)", title=f"under {name}")
                ax.grid(axis="x", alpha=0.3)
            axes[0].set_yticks(range(1, len(keys) + 1), keys)
            axes[0].invert_yaxis()  # card order from the top
            fig.suptitle(f"Score distribution per rule variant, {spec.games:,} games each")
            handles = [Line2D([], [], color="#e07b39", linewidth=1.6, label="simulated median"),
                       Line2D([], [], color="black", marker="o", linestyle="", markersize=4,
                              label="exact mean of the same strategy"),
                       Line2D([], [], color="black", linewidth=6, alpha=0.25,
                              label="box: quartiles; whiskers: 5th to 95th percentile")]
            # below the figure's edge: the saved image grows to hold it, clear of the x labels
            fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3, fontsize=8)
        rep.add_figure("variants", draw, heading="Figure", size=(4.5 + 3.2 * len(names), 0.38 * len(variants) + 1.8),
                       caption=(f"Simulated final scores per variant, one panel per strategy ({spec.games:,} games "
                                "each): boxes span the quartiles, whiskers the 5th to 95th percentile, the orange line "
                                "is the median and the dot that panel's strategy's exact mean."))
    if "effects" in spec.plots and len(effects):
        def draw_effects(fig):
            ax = fig.add_subplot()
            keys = list(dict.fromkeys(effects.index.get_level_values(0)))
            colors = ["#1f77b4", "#e07b39", "#2ca02c", "#9467bd", "#8c564b"]
            step = 0.8 / max(len(names), 1)
            for j, n in enumerate(names):
                y = np.arange(len(keys)) + (j - (len(names) - 1) / 2) * step
                e = effects.xs(n, level="strategy").reindex(keys)
                ax.errorbar(e["change"], y, xerr=[e["change"] - e["ci95_low"], e["ci95_high"] - e["change"]],
                            fmt="o", color=colors[j % len(colors)], markersize=5, capsize=3,
                            label=f"{n}: simulated change, 95% CI")
                # the exact change as a tall tick, so the simulated dot stays visible beside it
                ax.scatter(e["exact_change"], y, marker="|", color="black", zorder=3, s=90, linewidths=1.2,
                           label="exact change" if j == 0 else None)
            ax.axvline(0, color="grey", linewidth=0.8)
            ax.set_yticks(range(len(keys)), [f"{k} vs {effects.loc[k]['reference'].iloc[0]}" for k in keys])
            ax.invert_yaxis()
            ax.set(xlabel="change in mean final score against the reference (points)",
                   title=f"What each rule changes, per strategy ({spec.games:,} games each)")
            ax.grid(axis="x", alpha=0.3)
            fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                       ncol=len(names) + 1, fontsize=8)   # below the figure's edge, clear of the axis
        rep.add_figure("effects", draw_effects,
                       size=(9.5, 0.45 * len(set(effects.index.get_level_values(0))) * max(1, len(names) / 2) + 1.6),
                       caption=(f"Each rule variant's change in mean score against its reference under each strategy "
                                f"({spec.games:,} games each; dots with 95% intervals, paired on common dice where the "
                                "two share them) and the exact change (crosses)."))
    lines = []
    for strategy, name in zip(strategies, names):
        if not len(effects):
            break
        e = effects.xs(name, level="strategy")
        yacht = e[[k.startswith("yacht+") and k.count("+") == 1 for k in e.index]]
        if len(yacht):
            col = "exact_change" if yacht["exact_change"].notna().all() else "change"
            what = "exactly" if col == "exact_change" else "in simulation"
            up, down = yacht[col].idxmax(), yacht[col].idxmin()
            lines.append(f"Under `{name}`, of Yacht's local rules alone the one that adds most is `{up}` "
                         f"({yacht.loc[up, col]:+.2f} {what}) and the one that takes most is `{down}` "
                         f"({yacht.loc[down, col]:+.2f}).")
    if len(names) > 1 and len(effects):
        wide = effects["change"].unstack("strategy")[names]
        spread = (wide.max(axis=1) - wide.min(axis=1)).sort_values(ascending=False)
        key = spread.index[0]
        lines.append(f"The rule whose effect depends most on who plays is `{key}`: "
                     + ", ".join(f"{wide.loc[key, n]:+.2f} under `{n}`" for n in names) + " (simulated).")
    if len(effects):
        checked = effects[effects["exact_inside_ci"].notna()]
        if len(checked):
            lines.append(f"{int(checked['exact_inside_ci'].sum())} of {len(checked)} exact changes sit inside their "
                         "simulated 95% interval.")
    checked = frame[frame["inside_ci"].notna()]
    if len(checked):
        lines.append(f"As a check of simulator and exact evaluation against each other, {int(checked['inside_ci'].sum())} "
                     f"of {len(checked)} exact means sit inside their own strategy's simulated 95% interval (about 95% "
                     "should; variants sharing dice miss together, so the misses are not independent).")
    rep.reading = " ".join(lines)
    return rep
