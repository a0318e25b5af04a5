"""Experiment runners: a spec in, a :class:`~yahtzee_sim.report.document.Report` out.

The registry of runners (one per experiment kind), the text helpers they share and
the claims runner. Each other kind lives in its own module, in two steps: its
numbers computed from public results into a plain data object with ``.to_frame()``,
then rendered (markdown, CSV, figures) apart: :mod:`~yahtzee_sim.report.strategies`,
:mod:`~yahtzee_sim.report.head_to_head`, :mod:`~yahtzee_sim.report.odds`,
:mod:`~yahtzee_sim.report.variants`, :mod:`~yahtzee_sim.report.distributions` and
:mod:`~yahtzee_sim.report.family` (each registers its kind when
:mod:`yahtzee_sim.report` is imported).

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


def _max_ticks(n: int):
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(n)


def _percent_axis(decimals: int | None = None):
    from matplotlib.ticker import PercentFormatter

    return PercentFormatter(xmax=1.0, decimals=decimals)


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
    # "seed" is the deprecated copy of "source_id" (a document's number, not a random seed)
    data = frame.drop(columns=["quote", "seconds", "exact_text", "simulated_text", "value", "source", "seed"]).assign(
        exact_fraction=[f"{f['numerator']}/{f['denominator']}" if f else "" for f in frame["exact_fraction"]])
    for number in sorted(frame["source_id"].unique()):  # sources in order: 000, 001, 003
        group = frame[frame["source_id"] == number]
        display = pd.DataFrame({
            "Claim": group.index.map(lambda i: f"`{i}`"), "In English": group["english"], "Stated": group["claim"],
            "Exact value": group["exact_text"], "Simulated (95% CI)": group["simulated_text"],
            "Verdict": group["verdict"], "How it was computed": group["method"], "Detail": group["detail"],
        })
        rep.add_table(f"claims_source_{number}", data[data["source_id"] == number].drop(columns="source_id"),
                      display=display, heading=f"Source {number}")
    quotes = frame[["source_id", "quote"]].sort_values("source_id", kind="stable").rename(
        columns={"source_id": "source"})
    rep.add_table("quotes", quotes, heading="The claims in their original words",
                  display=pd.DataFrame({"Claim": quotes.index.map(lambda i: f"`{i}`"), "Source": quotes["source"],
                                        "Quote": quotes["quote"]}))
    not_ok = frame[~frame["verdict"].isin(["confirmed"])]
    lines = [f"{int((frame['verdict'] == 'confirmed').sum())} of {len(frame)} claims are confirmed as stated."]
    for cid, row in not_ok.sort_values("source_id", kind="stable").iterrows():
        if row["exact_text"]:  # an exact value carries no interval: the simulation is only a cross-check
            found = f"exactly {row['exact_text']}"
        else:
            found = f"an estimated {row['simulated_text']} ({row['method']})"
        lines.append(f"- `{cid}` ({row['verdict']}): \"{row['english']}\" Checked as: {row['claim']}. "
                     f"The project finds {found}" + (f"; {row['detail']}." if row["detail"] else "."))
    rep.reading = "\n".join(lines)
    return rep


