"""The ``family`` report: every rule set of the family under every built-in strategy.

Two steps: :func:`family_numbers` computes every number (:class:`FamilyNumbers`, no
text), :func:`render_family` writes the report from them. Each rule set gets its own
random stream (spawned from the spec's seed) and every strategy plays the same dice
within it (common random numbers). Where the exact engine can solve a rule set, its
optimal value and sd sit beside the simulated optimal mean; where it cannot, the table
says so with the engine's own reason.

>>> from yahtzee_sim.report.experiment import parse_spec
>>> spec = parse_spec({"kind": "family", "rule_sets": ["yacht-classic", "yamb"],
...                    "strategies": ["keep-largest", "optimal"], "games": 256, "plots": []}, name="demo")
>>> rep = run_family(spec)
>>> frame = rep.data["means"]
>>> bool(frame.loc[("yacht-classic", "optimal"), "exact_inside_ci"]), bool(frame.loc[("yamb", "optimal"), "solvable"])
(True, False)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..api import simulate
from ..intervals import t_interval
from ..results import max_total, min_total
from ..rules import get_rules, rule_names
from ..strategies import strategy_names
from .. import fmt
from .document import Report
from .experiment import ExperimentSpec
from .runners import _spawned_seeds, runner

NOT_SOLVABLE = "not solvable exactly here"


def describe(rules) -> str:
    """One line saying what a rule set is: its registry summary plus each option's description.

    >>> describe(get_rules("yacht+faces-7"))
    'Japanese Yacht (ヨット) with its local rules; dice with 7 faces (7 upper boxes, bonus at three of each, any run)'
    >>> describe(get_rules("maxi-yatzy+no-saved-throws"))
    'Maxi Yatzy: six dice, 20 boxes, saved throws; with no-saved-throws: throws a turn does not use are lost, not banked for later turns'
    """
    from ..rules import REGISTRY

    spec = REGISTRY.get(rules.name)
    if spec is None:            # a house rule set from a file: its title is all it says of itself
        return rules.title
    parts = [spec.summary]
    for option in rules.options:
        if option in spec.options:
            parts.append(f"with {option}: {spec.options[option]}")
            continue
        for num in spec.numbers:
            value = num.parse(option)
            if value is not None:
                parts.append(re.sub(r"\bN\b", str(value), num.summary))
    return "; ".join(parts)


def refusal_reason(message: str) -> str:
    """The "why" of the exact engine's one-line refusal, without its head and its advice.

    >>> refusal_reason("the exact engine cannot solve yamb: its 4 columns make 2**52 cards; simulate it instead (x)")
    'its 4 columns make 2**52 cards'
    """
    head, sep, why = message.partition(": ")
    why = why if sep else head
    return re.split(r";\s*simulate it instead", why)[0].strip()


WHOLE_CARD = ("its score or points depend on the whole finished card, so a state would have to hold "
              "every box's points")
"""Why the solver cannot hold a game whose score or points are a function of the finished
card (Balut's points): the solver's own words, which open its refusal on every machine."""


def why_not_exact(rules, message: str) -> str:
    """The reason a report gives for not solving ``rules`` exactly: the solver's own
    (:func:`refusal_reason` of its refusal ``message``), but the same on every machine. A
    refusal for memory keeps the memory the game needs and drops what this machine allows
    (a committed report must not change with the machine that regenerates it). A game whose
    score or points depend on the whole finished card is refused for that first, on every
    machine, with the memory its cards would need beside it.

    >>> from yahtzee_sim.rules import get_rules
    >>> msg = ("the exact engine cannot solve kismet: its state space of 2**13 score cards (0 million) needs "
    ...        "about 99.0 GB to solve, more than the 12.6 GB allowed here (50% of this machine's 25.3 GB of "
    ...        "memory); simulate it instead (yahtzee-sim simulate --rules kismet)")
    >>> print(why_not_exact(get_rules("kismet"), msg))
    its state space of 2**13 score cards (0 million) needs about 99.0 GB to solve
    """
    why = refusal_reason(message)
    memory = re.match(r"(.* needs about .+? to solve), more than .+ allowed .*$", why)
    return why if memory is None else memory.group(1)


def _exact(rules):
    """(solution, None) where the exact engine solves ``rules``, else (None, its refusal)."""
    from ..exact.solver import solve

    try:
        return solve(rules), None
    except ValueError as exc:
        return None, str(exc)


def _score_only_optimum(rules) -> float:
    """The exact optimum of the score alone (points set aside) where the grouped-boxes
    solver applies (Balut), else NaN."""
    from ..exact.grouped import require_grouped, solve_grouped

    try:
        require_grouped(rules)
    except ValueError:
        return np.nan
    return solve_grouped(rules).mean


def _ci_text(mean, low, high, d):
    return f"{fmt.number(mean, d)} ({fmt.interval(low, high, d)})"


@dataclass
class FamilyNumbers:
    """What a family report says, as numbers.

    ``means``: one row per (rule set, strategy): games, seed, the simulated mean with its
    95% t interval, sd, extremes, Balut's points with their interval, and for ``optimal``
    the exact mean beside it (``note``: why a cell was not played); ``games``: one row per
    rule set: what it is, its dice, boxes, score bounds, whether the solver solves it (its
    exact mean and sd, else its reason) and its seed; ``exact``: the exact optimum against
    simulated optimal play per rule set; ``points``: the rows of ``means`` with points.
    """

    names: list
    means: pd.DataFrame
    games: pd.DataFrame
    exact: pd.DataFrame
    points: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The mean score per (rule set, strategy) (a copy).

        >>> from yahtzee_sim.report.experiment import parse_spec
        >>> spec = parse_spec({"kind": "family", "rule_sets": ["yacht-classic"], "strategies": ["greedy"],
        ...                    "games": 64}, name="d")
        >>> list(family_numbers(spec).to_frame().index)
        [('yacht-classic', 'greedy')]
        """
        return self.means.copy()


def family_numbers(spec: ExperimentSpec, *, run_options: dict | None = None) -> FamilyNumbers:
    """Every rule set (``rule_sets``, default: every registered one) under every strategy:
    the numbers of the family report, computed from the simulator's and the solver's results.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "family", "rule_sets": ["yamb"], "strategies": ["greedy", "optimal"],
    ...                    "games": 64}, name="d")
    >>> nums = family_numbers(spec)
    >>> bool(nums.games.loc["yamb", "solvable"]), int(nums.means.loc[("yamb", "optimal"), "games"])
    (False, 0)
    """
    keys = list(spec.rule_sets) or rule_names()
    names = list(spec.strategies) or strategy_names()
    rule_sets = [get_rules(k) for k in keys]
    seeds = _spawned_seeds(spec.seed, len(rule_sets))
    rows, games_rows = [], []
    step = (run_options or {}).get("progress")
    for rules, seed in zip(rule_sets, seeds):
        if callable(step):      # the solve reports nothing itself: say which one runs (minutes for a large game)
            step(f"exact solve of {rules.key}", 0, None)
        sol, refusal = _exact(rules)
        bound = _score_only_optimum(rules) if sol is None and rules.has_points else np.nan
        games_rows.append({
            "rule_set": rules.key, "title": rules.title, "description": describe(rules), "dice": rules.n_dice,
            "faces": rules.n_faces, "boxes": rules.n_boxes, "rolls": rules.n_rolls,
            "min_total": min_total(rules), "max_total": max_total(rules), "solvable": sol is not None,
            "exact_mean": sol.mean if sol else np.nan, "exact_sd": sol.sd if sol else np.nan,
            "why_not_exact": "" if sol else why_not_exact(rules, refusal), "seed": seed,
            "score_only_optimum": bound})
        for name in names:
            # every column present even when no cell was simulated (optimal alone on unsolvable games)
            row = {"rule_set": rules.key, "strategy": name, "games": spec.games, "seed": seed,
                   "solvable": sol is not None, "min_total": min_total(rules), "max_total": max_total(rules),
                   "exact_mean": np.nan, "exact_sd": np.nan, "exact_inside_ci": np.nan,
                   "mean": np.nan, "ci95_low": np.nan, "ci95_high": np.nan, "sd": np.nan, "min": np.nan,
                   "max": np.nan}
            if name == "optimal" and sol is None:
                rows.append({**row, "games": 0, "note": NOT_SOLVABLE + ": " + why_not_exact(rules, refusal)})
                continue
            s = simulate(rules, name, spec.games, seed=seed, **(run_options or {})).summary()
            row.update({"mean": s["mean"], "ci95_low": s["ci95_low"], "ci95_high": s["ci95_high"], "sd": s["sd"],
                        "min": s["min"], "max": s["max"], "note": ""})
            if rules.has_points:
                lo, hi = t_interval(s["points_mean"], s["points_sd"], spec.games, 0.95)
                # Nearly every random game ends at the lowest points: a t interval would reach below them.
                lo, hi = max(lo, rules.card_points_range[0]), min(hi, rules.card_points_range[1])
                row.update({"points_mean": s["points_mean"], "points_ci95_low": lo, "points_ci95_high": hi,
                            "points_sd": s["points_sd"]})
            if name == "optimal":
                row.update({"exact_mean": sol.mean, "exact_sd": sol.sd,
                            "exact_inside_ci": bool(s["ci95_low"] <= sol.mean <= s["ci95_high"])})
            rows.append(row)
    means = pd.DataFrame(rows).set_index(["rule_set", "strategy"])
    games = pd.DataFrame(games_rows).set_index("rule_set")
    points = means[means["points_mean"].notna()] if "points_mean" in means else means.iloc[:0]
    return FamilyNumbers(names=names, means=means, games=games, exact=_exact_frame(means, games, names),
                         points=points)


def render_family(nums: FamilyNumbers, spec: ExperimentSpec) -> Report:
    """The report of ``nums``: its tables (those ``spec.tables`` names), figure and reading.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "family", "rule_sets": ["yacht-classic"], "strategies": ["greedy"],
    ...                    "games": 64, "plots": []}, name="d")
    >>> render_family(family_numbers(spec), spec).reading.startswith("In 1 of 1 rule sets")
    True
    """
    names, means, games = nums.names, nums.means, nums.games
    rule_sets = list(games.index)
    rep = Report(spec.name, spec.title or "Every game of the family under every strategy", question=spec.question)
    rep.data.update(means=means, games=games, numbers=nums)
    n_solvable = int(games["solvable"].sum())
    rep.add_text("Method", (
        f"{len(rule_sets)} rule sets, {len(names)} strategies ({', '.join(f'`{n}`' for n in names)}), "
        f"{spec.games:,} simulated games per rule set and strategy. Each rule set plays on its own random stream "
        f"(seeds spawned from {spec.seed}, listed in the CSVs) and, within a rule set, every strategy sees the same "
        "dice (common random numbers). Means come with 95% t intervals. The exact optimal expected score and its "
        "standard deviation come from the solver (backward induction over every score-card state) for the "
        f"{n_solvable} rule sets it can solve here; for the others the table gives the solver's own reason, and "
        "`optimal` is not played there (it needs the exact table). Balut also counts *points* for the finished "
        "card beside its score; they are shown in their own table."))
    if "games" in spec.tables:
        display = pd.DataFrame({
            "Rule set": games.index, "What it is": games["description"],
            "Dice": [f"{d} dice of {f} faces" for d, f in zip(games["dice"], games["faces"])],
            "Boxes": games["boxes"].astype(str),
            "Possible scores": [f"{fmt.number(lo, 0)} to {fmt.number(hi, 0)}"
                                for lo, hi in zip(games["min_total"], games["max_total"])]})
        rep.add_table("games", games, display=display, heading="The games", caption=(
            "Each rule set's own one-line summary (`yahtzee-sim rules`; docs/rules.md has the full rules). "
            "*Possible scores* are the bounds the engine sizes its tables by, not scores that are likely."))
    if "means" in spec.tables:
        rep.add_table("means", means, display=_means_display(means, names), heading="Mean score per strategy",
                      caption=(f"Mean final score and its 95% CI, {spec.games:,} games per cell; rows are rule "
                               "sets, columns strategies."))
    if "exact" in spec.tables:
        exact = nums.exact
        rep.data["exact"] = exact
        rep.add_table("exact", exact, display=_exact_display(exact), heading="Exact against simulated optimal play",
                      caption=(f"Exact optimal mean and SD from the solver; simulated mean of {spec.games:,} "
                               "optimal games and its 95% CI."))
    points = nums.points
    rep.data["points"] = points
    if "points" in spec.tables and len(points):
        bounds = games["score_only_optimum"].dropna()
        bound_text = "".join(
            f" The most any strategy can score on average at {games.loc[key, 'title']}, its points set aside, is "
            f"{fmt.number(v, 2)} (exact: `yahtzee-sim solve --rules {key} --score-only`, by counts of "
            "identical boxes)." for key, v in bounds.items())
        rep.add_table("points", points, display=_points_display(points), heading="Balut: points beside the score",
                      caption=(f"Mean score and mean points per game, each with its 95% CI; {spec.games:,} games "
                               "per strategy." + bound_text))
    if "means" in spec.plots:
        _means_figure(rep, spec, means, games, names)
    rep.reading = _reading(means, games, names)
    return rep


@runner("family")
def run_family(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """The family report: :func:`family_numbers`, then :func:`render_family` (see the module's example)."""
    return render_family(family_numbers(spec, run_options=run_options), spec)


def _row_decimals(frame: pd.DataFrame, low: str = "ci95_low", high: str = "ci95_high") -> int:
    half = (frame[high] - frame[low]).dropna() / 2
    return fmt.decimals_for(float(np.median(half))) if len(half) else 1


def _means_display(means: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    out = []
    for key, block in means.groupby(level="rule_set", sort=False):
        d = _row_decimals(block)
        row = {"Rule set": key}
        for name in names:
            r = block.loc[(key, name)]
            row[name] = NOT_SOLVABLE if r["note"] else _ci_text(r["mean"], r["ci95_low"], r["ci95_high"], d)
        out.append(row)
    return pd.DataFrame(out)


def _exact_frame(means: pd.DataFrame, games: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    frame = games[["solvable", "exact_mean", "exact_sd", "why_not_exact"]].copy()
    if "optimal" in names:
        opt = means.xs("optimal", level="strategy")
        for col in ("mean", "ci95_low", "ci95_high", "exact_inside_ci"):
            frame["simulated_" + col if col != "exact_inside_ci" else col] = opt[col] if col in opt else np.nan
    return frame


def _exact_display(exact: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for key, r in exact.iterrows():
        if not r["solvable"]:
            rows.append({"Rule set": key, "Exact optimal mean": NOT_SOLVABLE, "Exact SD": fmt.MISSING,
                         "Simulated optimal mean": fmt.MISSING, "95% CI": fmt.MISSING,
                         "Exact inside the CI": fmt.MISSING, "Why not exact": r["why_not_exact"]})
            continue
        played = "simulated_mean" in r and not pd.isna(r["simulated_mean"])
        d = fmt.decimals_for((r["simulated_ci95_high"] - r["simulated_ci95_low"]) / 2) if played else 2
        rows.append({
            "Rule set": key, "Exact optimal mean": fmt.number(r["exact_mean"], 2), "Exact SD": fmt.number(r["exact_sd"], 1),
            "Simulated optimal mean": fmt.number(r["simulated_mean"], d) if played else fmt.MISSING,
            "95% CI": fmt.interval(r["simulated_ci95_low"], r["simulated_ci95_high"], d) if played else fmt.MISSING,
            "Exact inside the CI": ("yes" if r["exact_inside_ci"] else "no") if played else fmt.MISSING,
            "Why not exact": ""})
    return pd.DataFrame(rows)


def _points_display(points: pd.DataFrame) -> pd.DataFrame:
    d, dp = _row_decimals(points), _row_decimals(points, "points_ci95_low", "points_ci95_high")
    return pd.DataFrame({
        "Rule set": points.index.get_level_values("rule_set"), "Strategy": points.index.get_level_values("strategy"),
        "Mean score": [fmt.number(v, d) for v in points["mean"]],
        "95% CI of the score": [fmt.interval(a, b, d) for a, b in zip(points["ci95_low"], points["ci95_high"])],
        "Mean points": [fmt.number(v, dp) for v in points["points_mean"]],
        "95% CI of the points": [fmt.interval(a, b, dp) for a, b in
                                 zip(points["points_ci95_low"], points["points_ci95_high"])]})


def _means_figure(rep: Report, spec: ExperimentSpec, means: pd.DataFrame, games: pd.DataFrame, names: list[str]):
    from .style import PALETTE

    keys = list(games.index)
    markers = ["o", "s", "^", "D", "v", "P", "X"]

    # A game whose scores run on another scale (Yamb's 1,000) gets its own panel and x axis, so
    # it does not squeeze the others: a rule set whose top mean is over twice the median top mean.
    top = means["mean"].groupby(level="rule_set").max().reindex(keys) if "mean" in means else pd.Series(
        np.nan, index=keys)
    large = [k for k in keys if top[k] > 2 * float(np.nanmedian(top))] if top.notna().any() else []
    panels = [p for p in ([k for k in keys if k not in large], large) if p]

    def draw(fig):
        axes = fig.subplots(len(panels), 1, squeeze=False,
                            gridspec_kw={"height_ratios": [len(p) for p in panels]})[:, 0]
        step = 0.7 / max(1, len(names))
        for ax, panel in zip(axes, panels):
            rows = np.array([keys.index(k) for k in panel])
            for i, name in enumerate(names):
                block = means.xs(name, level="strategy").reindex(panel)
                y = np.arange(len(panel)) + (i - (len(names) - 1) / 2) * step
                ok = block["mean"].notna() if "mean" in block else pd.Series(False, index=panel)
                ax.errorbar(block["mean"][ok], y[ok.to_numpy()],
                            xerr=[(block["mean"] - block["ci95_low"])[ok], (block["ci95_high"] - block["mean"])[ok]],
                            fmt=markers[i % len(markers)], color=PALETTE[i % len(PALETTE)], markersize=4.5,
                            capsize=2, linewidth=1, label=name)
            sub = games.iloc[rows]
            solved = sub["exact_mean"].notna().to_numpy()
            ax.scatter(sub["exact_mean"][solved], np.arange(len(panel))[solved], marker="|", s=180, color="black",
                       zorder=3, label="exact optimal mean")
            ax.set_yticks(range(len(panel)), panel)
            ax.set_ylim(len(panel) - 0.5, -0.5)        # card order from the top
            ax.set_xlim(left=0)
            ax.grid(axis="x", alpha=0.3)
        axes[-1].set_xlabel("mean final score (points)" + ("; the lower panel on its own scale" if len(panels) > 1
                                                          else ""))
        axes[0].set_title(f"Mean score per game and strategy\n{len(keys)} rule sets of the Yahtzee family, "
                          f"{spec.games:,} games per strategy and rule set (bars: 95% CI)")
        legend = {}                                    # one entry per label, whichever panel drew it
        for ax in axes:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                legend.setdefault(label, handle)
        # below the figure's edge: the saved image grows to hold it, clear of the x label
        fig.legend(list(legend.values()), list(legend), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=len(legend), fontsize=8)

    unsolved = [k for k in keys if not games.loc[k, "solvable"]]
    rep.add_figure("means", draw, heading="Figure", size=(9.5, 0.42 * len(keys) + 1.9 + 0.5 * (len(panels) - 1)),
                   caption=(
        f"Mean final score of each strategy in each of the {len(keys)} rule sets of the Yahtzee family, {spec.games:,} games per cell, "
        "with 95% CI bars (most are narrower than the markers); the black tick is the exact optimal mean where the "
        "solver can compute it"
        + (f"; {', '.join(large)} " + ("scores on a larger scale and has its own panel" if len(large) == 1 else
                                       "score on a larger scale and have their own panel") if large else "")
        + (f" ({', '.join(unsolved)}: {NOT_SOLVABLE}, so no `optimal` marker)." if unsolved else ".")))


def _reading(means: pd.DataFrame, games: pd.DataFrame, names: list[str]) -> str:
    lines = []
    played = means[means["mean"].notna()] if "mean" in means else means.iloc[:0]
    order = {key: tuple(block["mean"].droplevel("rule_set").sort_values(ascending=False).index)
             for key, block in played.groupby(level="rule_set", sort=False)}
    if order:
        longest = max(len(o) for o in order.values())
        full = [o for o in order.values() if len(o) == longest]
        common = max(set(full), key=full.count)
        agree = [k for k, o in order.items() if o == tuple(n for n in common if n in o)]
        lines.append(f"In {len(agree)} of {len(order)} rule sets the strategies rank "
                     f"{' > '.join(f'`{n}`' for n in common)} by mean score (where `optimal` can be played)"
                     + ("." if len(agree) == len(order) else "; the others: " + "; ".join(
                         f"{k}: {' > '.join(o)}" for k, o in order.items() if k not in agree) + "."))
        if "heuristic" in names:
            h = played.xs("heuristic", level="strategy")["mean"]
            lines.append(f"Under `heuristic`, {h.idxmax()} scores most ({fmt.number(h.max(), 0)} points a game) and "
                         f"{h.idxmin()} least ({fmt.number(h.min(), 0)}): the scales differ with the number of "
                         "boxes and what they pay, so compare strategies within a game, not games by their totals.")
    if "heuristic" in names and "optimal" in names:
        share = {}
        for key in games.index[games["solvable"]]:
            if (key, "heuristic") in played.index:
                share[key] = played.loc[(key, "heuristic"), "mean"] / games.loc[key, "exact_mean"]
        if share:
            lo, hi = min(share, key=share.get), max(share, key=share.get)
            lines.append(f"Where the optimum is known, `heuristic` reaches {fmt.percent(share[lo])} ({lo}) to "
                         f"{fmt.percent(share[hi])} ({hi}) of the exact optimal mean.")
    checked = games.index[games["solvable"]]
    inside = [k for k in checked if (k, "optimal") in played.index
              and played.loc[(k, "optimal"), "exact_inside_ci"] is True]
    if "optimal" in names and len(checked):
        lines.append(f"Simulator and solver agree: the exact optimal mean lies inside the simulated 95% CI in "
                     f"{len(inside)} of {len(checked)} solvable rule sets (each misses with chance 5% on its own).")
    unsolved = list(games.index[~games["solvable"]])
    if unsolved:
        lines.append(f"{', '.join(unsolved)}: {NOT_SOLVABLE} (the solver's reasons are in the table above), so "
                     "their best simulated strategy is only a lower bound on what perfect play would score.")
    if "points_mean" in played:
        pts = played[played["points_mean"].notna()]
        for key, block in pts.groupby(level="rule_set", sort=False):
            best = block["points_mean"].idxmax()[1]
            top = block["mean"].idxmax()[1]
            lines.append(f"In {key}, `{best}` earns the most points ({fmt.number(block['points_mean'].max(), 2)} "
                         "a game) and " + ("" if best == top else f"`{top}` ") + "the highest score "
                         f"({fmt.number(block['mean'].max(), 1)})"
                         + ("." if best == top else ": points and score reward different play."))
    return "\n\n".join(lines)
