"""The ``odds`` report: first-roll and per-turn pattern odds, exact against simulated.

Two steps: :func:`odds_numbers` counts the exact odds, simulates rolls and turns and
computes every number from the public results (:class:`OddsNumbers`, no text);
:func:`render_odds` turns them into a :class:`~yahtzee_sim.report.document.Report`.

>>> from yahtzee_sim.report.experiment import parse_spec
>>> spec = parse_spec({"kind": "odds", "games": 2000, "checkpoints": [500, 2000], "plots": []},
...                   name="demo")
>>> nums = odds_numbers(spec)
>>> nums.first_roll.loc["five_of_a_kind", "exact_fraction"], list(nums.convergence.index)
('1/1296', [500, 2000])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import fmt
from ..rules import RuleSet, get_rules
from .document import Report
from .experiment import ExperimentSpec
from .runners import _percent_axis, _rules_text, runner


@dataclass
class OddsNumbers:
    """What an odds report says, as numbers.

    ``first_roll``: per pattern, the exact chance on one roll (and as a fraction), the
    simulated share of ``games`` rolls, its 95% Wilson interval and whether the exact value
    lies inside; ``per_turn``: the same for a turn under ``policy``, with the exact chance
    under the keeps that maximize each pattern; ``convergence``: the simulated
    five-of-a-kind share of turns and its interval at each number of turns.
    """

    rules: RuleSet
    games: int
    seed: int
    policy: str
    first_roll: pd.DataFrame
    per_turn: pd.DataFrame
    convergence: pd.DataFrame

    @property
    def exact_five(self) -> float:
        """The exact chance that a turn under ``policy`` ends in five of a kind."""
        return float(self.per_turn.loc["five_of_a_kind", "exact"])

    def to_frame(self) -> pd.DataFrame:
        """One row per (where, pattern): where is ``one roll`` or ``one turn``.

        >>> from yahtzee_sim.report.experiment import parse_spec
        >>> spec = parse_spec({"kind": "odds", "games": 200, "checkpoints": [200]}, name="d")
        >>> frame = odds_numbers(spec).to_frame()
        >>> frame.index.names, bool((frame["exact"] > 0).all())
        (FrozenList(['where', 'pattern']), True)
        """
        cols = ["exact", "simulated", "ci95_low", "ci95_high", "inside_ci"]
        return pd.concat({"one roll": self.first_roll[cols], "one turn": self.per_turn[cols]},
                         names=["where", "pattern"])


def _share_cells(k: int, n: int, exact: float) -> dict:
    from ..stats import proportion_ci

    ci = proportion_ci(int(k), int(n))
    lo, hi = float(ci.low), float(ci.high)
    return {"simulated": k / n, "ci95_low": lo, "ci95_high": hi, "inside_ci": bool(lo <= exact <= hi)}


def odds_numbers(spec: ExperimentSpec, *, run_options: dict | None = None) -> OddsNumbers:
    """First-roll and per-turn pattern odds, exact against simulated, with convergence.

    ``run_options`` go to every :func:`~yahtzee_sim.api.simulate_turns`.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "odds", "games": 300, "checkpoints": [300]}, name="d")
    >>> odds_numbers(spec).per_turn.loc["five_of_a_kind", "exact"] > 0.04
    np.True_
    """
    from ..api import simulate_turns
    from ..exact.odds import one_roll_odds
    from ..exact.turns import pattern_policy, turn_odds
    from ..strategies.simple import KeepAll

    rules = get_rules(spec.rules, spec.options)
    policy = spec.strategy
    n = spec.games
    opts = run_options or {}
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
    checkpoints = list(spec.checkpoints) or sorted({int(x) for x in np.geomspace(100, n, 12)})
    exact_five = per_turn.probability("five_of_a_kind")
    conv = []
    for m in checkpoints:
        k = int(simulate_turns(rules, policy, m, seed=spec.seed, **opts).pattern_counts()["five_of_a_kind"])
        cells = _share_cells(k, m, exact_five)
        conv.append({"turns": m, "estimate": cells["simulated"], "ci95_low": cells["ci95_low"],
                     "ci95_high": cells["ci95_high"], "exact": exact_five})
    conv_frame = pd.DataFrame(conv).set_index("turns")
    return OddsNumbers(rules=rules, games=n, seed=spec.seed, policy=policy, first_roll=first_frame,
                       per_turn=turn_frame, convergence=conv_frame)


# -- rendering -------------------------------------------------------------------------------

def render_odds(nums: OddsNumbers, spec: ExperimentSpec) -> Report:
    """The report of ``nums``: its tables (those ``spec.tables`` names), figure and reading.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "odds", "games": 200, "checkpoints": [200], "plots": []}, name="d")
    >>> render_odds(odds_numbers(spec), spec).reading.startswith("Five of a kind on one roll has exact probability 1/1296")
    True
    """
    rules, policy, n = nums.rules, nums.policy, nums.games
    first_frame, turn_frame, conv_frame = nums.first_roll, nums.per_turn, nums.convergence
    exact_five = nums.exact_five
    checkpoints = list(conv_frame.index)
    rep = Report(spec.name, spec.title or f"Dice odds of {_rules_text(rules)}: exact and simulated", question=spec.question)
    rep.add_text("Method", (
        f"Rules: {_rules_text(rules)} (rule key `{rules.key}`), {rules.n_dice} dice, {rules.n_rolls} rolls per turn. Exact values "
        f"count the {rules.n_faces ** rules.n_dice:,} equally likely ordered throws and push them through the "
        "exact keep-to-roll transitions (a Markov chain over the distinct rolls). Simulated values come from the "
        f"project's turn simulator: {n:,} first rolls and {n:,} turns under `{policy}`, seed {spec.seed}, "
        "with 95% Wilson intervals. *Best keeps* are the keeps that maximize the chance of that very pattern. "
        "Patterns marked *or better* include the stronger ones (four of a kind counts five of a kind); the others "
        "are exactly that pattern."))
    rep.data.update({"first-roll": first_frame, "per-turn": turn_frame, "numbers": nums})

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
        f"Five of a kind on one roll has exact probability {first_frame.loc['five_of_a_kind', 'exact_fraction']} "
        f"({fmt.percent(first_frame.loc['five_of_a_kind', 'exact'], 2)}); within a {rules.n_rolls}-roll turn under "
        f"{policy} it is {fmt.percent(exact_five, 2)}, once every {1 / exact_five:.1f} turns. {inside} of {total} "
        "simulated frequencies fall inside their 95% interval around the exact value (about 95% are expected to; "
        "the patterns are counted on the same rolls, so their misses are not independent).")
    return rep


@runner("odds")
def run_odds(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """The odds report: :func:`odds_numbers`, then :func:`render_odds`.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "odds", "games": 200, "checkpoints": [200], "plots": []}, name="d")
    >>> list(run_odds(spec).data["convergence"].index)
    [200]
    """
    return render_odds(odds_numbers(spec, run_options=run_options), spec)
