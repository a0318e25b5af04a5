"""The ``strategies`` report: strategies compared on one rule set, on common dice.

Two steps: :func:`strategies_numbers` plays the games and computes every number
from the public results (:class:`StrategiesNumbers`, no text); :func:`render_strategies`
turns them into a :class:`~yahtzee_sim.report.document.Report` (markdown tables, CSVs
and figures). The numbers can be reused without a report:

>>> from yahtzee_sim.report.experiment import parse_spec
>>> spec = parse_spec({"kind": "strategies", "strategies": ["random", "keep-largest"],
...                    "games": 512, "plots": []}, name="demo")
>>> nums = strategies_numbers(spec)
>>> nums.baseline, list(nums.to_frame().index)
('keep-largest', ['random', 'keep-largest'])
>>> bool(nums.paired.loc["random", "mean_difference"] < 0)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import fmt
from ..api import simulate
from ..rules import RuleSet, get_rules
from ..stats import compare_results
from ..strategies import strategy_names
from .document import Report
from .experiment import ExperimentSpec
from .runners import _five_box_label, _games_text, _max_ticks, _mean_cells, _percent_axis, _rules_text, runner


@dataclass
class StrategiesNumbers:
    """What a strategies report says, as numbers.

    ``summary``: one row per strategy (mean and its 95% t interval, sd, percentiles,
    max, and the upper-bonus, full five-box and five-rolled rates with their 95%
    Wilson intervals); ``boxes``: mean points per box (rows) and strategy (columns);
    ``paired``: each strategy minus ``baseline`` on the same dice (paired t interval,
    correlation, variance saved); ``totals``: each strategy's final score per game.
    """

    rules: RuleSet
    games: int
    seed: int
    baseline: str
    summary: pd.DataFrame
    boxes: pd.DataFrame
    paired: pd.DataFrame
    totals: dict

    def to_frame(self) -> pd.DataFrame:
        """The summary table, one row per strategy (a copy).

        >>> from yahtzee_sim.report.experiment import parse_spec
        >>> spec = parse_spec({"kind": "strategies", "strategies": ["keep-largest"], "games": 64}, name="d")
        >>> strategies_numbers(spec).to_frame().index.name
        'strategy'
        """
        return self.summary.copy()


def _strategy_summary(results: dict) -> pd.DataFrame:
    rows = {}
    for name, res in results.items():
        s = res.summary()
        rows[name] = {
            "mean": s["mean"], "ci95_low": s["ci95_low"], "ci95_high": s["ci95_high"], "sd": s["sd"],
            "p5": s["p5"], "p25": s["p25"], "median": s["p50"], "p75": s["p75"], "p95": s["p95"],
            "max": s["max"],
        }
        for what in ("upper_bonus", "five_box_full", "five_rolled"):   # each rate with its 95% Wilson interval
            low, high = res.ci(what)
            rows[name].update({f"{what}_rate": res.rate(what), f"{what}_ci95_low": low, f"{what}_ci95_high": high})
    frame = pd.DataFrame(rows).T
    frame.index.name = "strategy"
    return frame


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


def strategies_numbers(spec: ExperimentSpec, *, run_options: dict | None = None) -> StrategiesNumbers:
    """Play every strategy of ``spec`` on the same dice and compute the report's numbers.

    ``run_options`` go to every :func:`~yahtzee_sim.api.simulate` (backend, jobs, progress).

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "strategies", "strategies": ["greedy", "random"], "games": 128}, name="d")
    >>> nums = strategies_numbers(spec)      # no optimal among them: the last one is the baseline
    >>> nums.baseline, list(nums.paired.index)
    ('random', ['greedy'])
    """
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
    labels = {b.name: b.label for b in rules.boxes}
    boxes = pd.DataFrame({n: r.box_frame()["mean"] for n, r in results.items()})
    boxes.index = pd.Index([labels.get(b, fmt.words(b)) for b in boxes.index], name="box")
    paired = _paired(results, baseline) if len(names) > 1 else pd.DataFrame()
    return StrategiesNumbers(rules=rules, games=spec.games, seed=spec.seed, baseline=baseline,
                             summary=_strategy_summary(results), boxes=boxes, paired=paired,
                             totals={n: r.games["total"] for n, r in results.items()})


# -- rendering -----------------------------------------------------------------------------

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
        f"{_five_box_label(rules)} scored {rules.five_box_points} (95% CI)": _rate_cells(summary, "five_box_full"),
        "At least one five of a kind rolled (95% CI)": _rate_cells(summary, "five_rolled"),
    })


def _rate_cells(frame: pd.DataFrame, what: str) -> list[str]:
    """``36.7% (36.4% to 37.0%)``: each simulated rate with its 95% interval, same digits."""
    return [" (".join(fmt.percent_ci(p, lo, hi)) + ")" for p, lo, hi in
            zip(frame[f"{what}_rate"], frame[f"{what}_ci95_low"], frame[f"{what}_ci95_high"])]


def render_strategies(nums: StrategiesNumbers, spec: ExperimentSpec) -> Report:
    """The report of ``nums``: its tables (those ``spec.tables`` names), figures and reading.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "strategies", "strategies": ["random", "greedy"], "games": 256,
    ...                    "plots": []}, name="demo")
    >>> rep = render_strategies(strategies_numbers(spec), spec)
    >>> rep.reading.splitlines()[0].startswith("`greedy` scores most on average")
    True
    """
    rules, summary, boxes, paired, baseline = nums.rules, nums.summary, nums.boxes, nums.paired, nums.baseline
    rep = Report(spec.name, spec.title or f"Strategies compared on {_rules_text(rules)}", question=spec.question)
    rep.add_text("Method", (
        f"{spec.games:,} games of {_rules_text(rules)} (rule key `{rules.key}`) per strategy, all with seed {spec.seed}: every "
        "strategy sees the same dice tape (common random numbers), so differences between strategies come from "
        "their decisions, and paired differences have a small variance. Intervals are 95%: t intervals "
        "for means, paired t intervals for differences. Rates are shares of games: the upper bonus reached, "
        f"{rules.five_box_points} points scored in the {_five_box_label(rules)} box, and at least one turn ending in five of a kind "
        "(whether or not it was scored there)."))
    rep.data["summary"] = summary
    if "summary" in spec.tables:
        rep.add_table("summary", summary, display=_summary_display(summary, rules), heading="Scores",
                      caption=f"Final score per strategy ({_games_text(rules, spec.games)} each).")
    rep.data["boxes"] = boxes
    if "boxes" in spec.tables:
        display = boxes.map(lambda v: fmt.number(v, 2)).reset_index().rename(columns={"box": "Box"})
        rep.add_table("boxes", boxes, display=display, heading="Average points per box",
                      caption=f"Mean points in each box ({_games_text(rules, spec.games)} per strategy).")
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
    _strategy_figures(rep, spec, rules, nums.totals, boxes, baseline)
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


@runner("strategies")
def run_strategies(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """The strategies report: :func:`strategies_numbers`, then :func:`render_strategies`.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "strategies", "strategies": ["keep-largest"], "games": 64,
    ...                    "plots": []}, name="demo")
    >>> list(run_strategies(spec).data["summary"].index)
    ['keep-largest']
    """
    return render_strategies(strategies_numbers(spec, run_options=run_options), spec)


def _strategy_figures(rep, spec, rules, totals, boxes, baseline):
    from .style import PALETTE, LINESTYLES, text_color

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
