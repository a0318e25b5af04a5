"""The ``benchmark`` report folder: a strategy's report card as README, CSV and figures.

Built from a :class:`~yahtzee_sim.benchmarking.Benchmark` (``yahtzee-sim benchmark
STRATEGY --out DIR`` writes it; ``reports/benchmark`` is heuristic against optimal):
the expected score (exact or simulated, said), the paired comparisons and win rates,
the score distribution beside optimal's, and where the points go (the loss accounting
split by decision kind, by box and by turn, and the costliest positions).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .document import Report

__all__ = ["benchmark_report"]


def _card_frame(b) -> pd.DataFrame:
    rows = [{"what": f"{b.strategy}: expected score ({b.method})", "value": b.mean},
            {"what": f"{b.strategy}: standard deviation ({b.method})", "value": b.sd}]
    if b.method != "exact":
        rows += [{"what": "expected score, 95% interval low", "value": b.mean_low},
                 {"what": "expected score, 95% interval high", "value": b.mean_high}]
    if not math.isnan(b.optimal_mean):
        rows.append({"what": "optimal play: expected score (exact)", "value": b.optimal_mean})
    return pd.DataFrame(rows)


def _draw_pmfs(b):
    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        shown = []
        if b.distribution is not None:
            shown.append((b.distribution.pmf, f"{b.strategy} (exact)", "C0"))
        else:
            hist = b.simulated.aggregate.total_hist
            shown.append((hist / hist.sum(), f"{b.strategy} (simulated, {b.games:,} games)", "C0"))
        if b.optimal_distribution is not None and b.strategy != "optimal":
            shown.append((b.optimal_distribution.pmf, "optimal (exact)", "C3"))
        hi = 0
        for pmf, label, color in shown:
            x = np.arange(len(pmf))
            ax.plot(x, pmf, color=color, lw=1.2, label=label)
            cdf = np.cumsum(pmf)
            hi = max(hi, int(np.searchsorted(cdf, 0.9999)) + 5)
        ax.set_xlim(0, hi)
        ax.set_xlabel("final score")
        ax.set_ylabel("probability of exactly that score")
        ax.set_title(f"{b.rules.key}: {b.strategy} beside optimal play")
        ax.legend()
    return draw


def _draw_losses(b):
    acc = b.losses

    def draw(fig):
        ax = fig.add_subplot(1, 1, 1)
        names = list(acc.by_box)
        ax.barh(names[::-1], [acc.by_box[n] for n in names][::-1], color="C0")
        ax.set_xlabel("points per game lost in the turns that filled the box (keeps included)")
        ax.set_title(f"{b.rules.key}: where {b.strategy} loses {acc.gap:.3f} points against optimal")
    return draw


def benchmark_report(b, *, command: str = "") -> Report:
    """The report of a benchmark (write it with :func:`yahtzee_sim.report.document.write_report`).

    >>> from yahtzee_sim.benchmarking import benchmark
    >>> b = benchmark("greedy", against=["keep-largest"], rules="yacht", options=["fill-in-order"],
    ...               games=500, seed=1)
    >>> r = benchmark_report(b)
    >>> [s.heading for s in r.sections][:2]
    ['Report card', 'Against other strategies (common dice)']
    """
    rep = Report(name="benchmark", title=f"Benchmark: {b.strategy} on {b.rules.key}",
                 question=f"How good is {b.strategy} on {b.rules.key}, against "
                          f"{', '.join(c['opponent'] for c in b.comparisons) or 'nothing else'}, "
                          f"and where does it lose its points against optimal play?",
                 command=command, seed=b.seed)
    how = ("exact: from its exact score distribution (its decisions depend only on the card and the dice)"
           if b.method == "exact" else
           f"simulated: {b.games:,} games, with a 95% t interval (its decisions are not a function of "
           f"the card and the dice alone, or the game is beyond the exact engine)")
    rep.add_text("Report card", f"Expected score and standard deviation, {how}.")
    rep.add_table("card", _card_frame(b), index=False, float_format="{:.4f}")
    if b.comparisons:
        rep.add_text("Against other strategies (common dice)",
                     f"`diff`: mean of ({b.strategy} - opponent) over {b.games:,} games played on the "
                     f"same dice (seed {b.seed}), with its 95% paired t interval (`diff_low` to "
                     f"`diff_high`); `diff_exact`: the difference of the exact means where both are exact. "
                     f"`p_win`: the chance that {b.strategy} scores strictly more than the opponent when "
                     f"each plays its own dice (`p_tie`: the same score); `method` says whether it is "
                     f"exact (from the two score distributions) or counted on the paired games, with a "
                     f"Wilson interval (`p_win_low` to `p_win_high`).")
        rep.add_table("against", b.to_frame(), float_format="{:.4f}")
    rep.add_figure("distribution", _draw_pmfs(b), heading="Score distribution",
                   caption=f"The probability of each final score under {b.strategy} and under optimal play.")
    acc = b.losses
    if acc is None:
        rep.add_text("Where the points go", f"Not computed: {b.losses_note}.")
        return rep
    rep.add_text("Where the points go",
                 f"Every decision's loss is the optimal value of the best choice minus the optimal "
                 f"value of the choice made (both followed by optimal play), weighted by the exact "
                 f"chance that {b.strategy} reaches it ({acc.method}). The parts add up to the gap: "
                 f"optimal {acc.optimal_score:.4f} - {b.strategy} {acc.strategy_score:.4f} = "
                 f"{acc.gap:.4f} points per game (losses summed: {acc.accounted:.4f}). "
                 f"Mean loss per decision (Verhoeff's proficiency measure): "
                 f"{acc.mean_loss_per_decision:.4f} points; decisions that are optimal: "
                 f"{acc.share_optimal:.2%}.")
    kinds = pd.DataFrame({"decision": list(acc.by_kind), "points_per_game": list(acc.by_kind.values()),
                          "share_optimal": [acc.optimal_share[k] for k in acc.by_kind],
                          "mean_loss_per_decision": [acc.by_kind[k] / acc.decisions[k] for k in acc.by_kind]})
    rep.add_table("loss_by_kind", kinds, index=False, float_format="{:.4f}",
                  caption="Points per game lost by each kind of decision.")
    boxes = pd.DataFrame({"box": list(acc.by_box), "points_per_game": list(acc.by_box.values())})
    rep.add_table("loss_by_box", boxes, index=False, float_format="{:.4f}",
                  caption="Points per game lost in the turns that filled each box (their keeps included).")
    rep.add_figure("loss_by_box", _draw_losses(b), caption="The same split as a figure.")
    turns = pd.DataFrame({"turn": np.arange(1, len(acc.by_turn) + 1), "points_per_game": acc.by_turn})
    rep.add_table("loss_by_turn", turns, index=False, float_format="{:.4f}",
                  caption="Points per game lost in each turn.")
    top = acc.top_frame()
    rep.add_text("Costliest positions",
                 f"The {len(top)} positions where {b.strategy} loses most per game (reach probability "
                 f"times loss): the card, the dice, the rolls left, its choice and the best one.")
    rep.add_table("costliest", top, index=False, float_format="{:.4g}")
    return rep
