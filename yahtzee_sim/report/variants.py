"""The ``variants`` report: every rule set and Yacht local rule, under each strategy of the spec.

Two steps: :func:`variants_numbers` plays every variant under every strategy, evaluates
each strategy exactly where it can and computes every number from the public results
(:class:`VariantsNumbers`, no text); :func:`render_variants` turns them into a
:class:`~yahtzee_sim.report.document.Report`.

>>> from yahtzee_sim.report.experiment import parse_spec
>>> spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 500,
...                    "rule_sets": ["yacht"], "yacht_options": ["no-bonus"], "plots": []}, name="demo")
>>> nums = variants_numbers(spec)
>>> eff = nums.effects.loc[("yacht+no-bonus", "keep-largest")]
>>> bool(eff["common_dice"]), bool(eff["ci95_low"] <= eff["exact_change"] <= eff["ci95_high"])
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import fmt
from ..api import simulate
from ..rules import get_rules
from .document import Report
from .experiment import ExperimentSpec
from .runners import _mean_cells, _spawned_seeds, runner


@dataclass
class VariantsNumbers:
    """What a variants report says, as numbers.

    ``variants``: one row per (variant, strategy): the strategy's exact mean and sd where
    it can be evaluated exactly (and how), the simulated mean, its 95% t interval,
    percentiles and rates with their 95% Wilson intervals, the seed and dice group;
    ``effects``: one row per (variant, strategy) that has a reference rule set: the
    simulated change against the reference (paired on common dice, else Welch) with its
    95% interval, and the exact change where both sides are exactly evaluable.
    ``strategies`` are the spec's names, ``labels`` each one's own name; ``totals`` and
    ``exact`` hold each (variant key, spec strategy)'s final scores and exact mean (NaN:
    none); ``groups``: the variant keys of each dice-tape layout (one seed each).
    """

    games: int
    seed: int
    variants_list: list
    strategies: tuple
    labels: dict
    groups: dict
    variants: pd.DataFrame
    effects: pd.DataFrame
    totals: dict
    exact: dict

    @property
    def names(self) -> list:
        """Each strategy's own name, in the spec's order."""
        return [self.labels[s] for s in self.strategies]

    def to_frame(self) -> pd.DataFrame:
        """The per-variant, per-strategy table (a copy).

        >>> from yahtzee_sim.report.experiment import parse_spec
        >>> spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 64,
        ...                    "rule_sets": ["yacht"], "yacht_options": ["no-bonus"]}, name="d")
        >>> list(variants_numbers(spec).to_frame().index)
        [('yacht', 'keep-largest'), ('yacht+no-bonus', 'keep-largest')]
        """
        return self.variants.copy()


def variants_numbers(spec: ExperimentSpec, *, run_options: dict | None = None) -> VariantsNumbers:
    """Every rule set, and Yacht local rules (alone or combined) against plain Yacht, under each
    strategy of the spec: each strategy's simulated scores beside its own exact value, and each
    rule's effect per strategy, paired on common dice where the variants share them.

    ``run_options`` go to every :func:`~yahtzee_sim.api.simulate` (backend, jobs, progress).

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 64,
    ...                    "rule_sets": ["yacht"], "yacht_options": ["three-dice"]}, name="d")
    >>> nums = variants_numbers(spec)        # three dice: another dice tape, independent games
    >>> list(nums.groups.values()), bool(nums.effects["common_dice"].iloc[0])
    ([['yacht'], ['yacht+three-dice']], False)
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
            ub, fb = res.ci("upper_bonus"), res.ci("five_box_full")
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
                "five_box_full_rate": res.rate("five_box_full"), "five_box_full_ci95_low": fb[0],
                "five_box_full_ci95_high": fb[1],
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
    return VariantsNumbers(games=spec.games, seed=spec.seed, variants_list=variants, strategies=tuple(strategies),
                           labels=labels, groups=groups, variants=frame, effects=effects, totals=totals, exact=exact)


# -- rendering -------------------------------------------------------------------------------

def render_variants(nums: VariantsNumbers, spec: ExperimentSpec) -> Report:
    """The report of ``nums``: its tables (those ``spec.tables`` names), figures and reading.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 64,
    ...                    "rule_sets": ["yacht"], "yacht_options": ["no-bonus"], "plots": []}, name="d")
    >>> render_variants(variants_numbers(spec), spec).title
    'Rule variants under `keep-largest`'
    """
    variants, strategies, labels, groups = nums.variants_list, nums.strategies, nums.labels, nums.groups
    frame, effects, totals, exact = nums.variants, nums.effects, nums.totals, nums.exact
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
    rep.data["numbers"] = nums
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
                flat["five_box_full_rate"], flat["five_box_full_ci95_low"], flat["five_box_full_ci95_high"])],
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


@runner("variants")
def run_variants(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """The variants report: :func:`variants_numbers`, then :func:`render_variants`.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "variants", "strategies": ["keep-largest"], "games": 500,
    ...                    "rule_sets": ["yacht"], "yacht_options": ["no-bonus"], "plots": []}, name="demo")
    >>> rep = run_variants(spec)
    >>> eff = rep.data["effects"].loc[("yacht+no-bonus", "keep-largest")]
    >>> bool(eff["common_dice"]), bool(eff["ci95_low"] <= eff["exact_change"] <= eff["ci95_high"])
    (True, True)
    """
    return render_variants(variants_numbers(spec, run_options=run_options), spec)


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
        return sol.mean, sol.sd, "solver"
    try:
        pv = policy_value(rules, strategy)
    except ValueError:       # decisions that use the uniforms or more than the state: simulation only
        return None
    return pv.mean, pv.sd, "policy evaluation"


def _dice_groups(variants) -> dict:
    """Variants grouped by their dice-tape layout (boxes, rolls, dice, faces): one group plays
    the same dice, game for game, under one seed (common random numbers)."""
    from ..stats.compare import TAPE_LAYOUT

    groups: dict = {}
    for rules in variants:
        groups.setdefault(tuple(getattr(rules, f) for f in TAPE_LAYOUT), []).append(rules.key)
    return groups
