"""Figures a writer can paste: axes that show the data (not one rare score), a y scale on
histograms, each strategy by its own name, legends at a fixed place (matplotlib's
loc="best" is slow on large curves and warns on stderr)."""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim.report.experiment import parse_spec
from yahtzee_sim.report.runners import run_experiment


def _figures(rep):
    from matplotlib.figure import Figure

    out = {}
    for sec in rep.sections:
        for f in sec.figures:
            fig = Figure(figsize=f.size)
            f.draw(fig)
            out[f.name] = fig
    return out


@pytest.fixture(scope="module")
def strategies_report():
    spec = parse_spec({"kind": "strategies", "strategies": ["keep-largest", "greedy"], "games": 3000}, name="s")
    return run_experiment(spec)


def test_ecdf_and_histogram_axes_show_the_bulk_of_the_scores(strategies_report):
    figs = _figures(strategies_report)
    totals = {n: strategies_report.data["summary"].loc[n] for n in ("keep-largest", "greedy")}
    ax = figs["ecdf"].axes[0]
    right = ax.get_xlim()[1]
    # the axis ends near the highest 99.5th percentile, not at the highest score of all
    assert right < max(t["max"] for t in totals.values())
    assert ax.get_legend()._loc != 0                            # 0 is "best"
    hist = figs["histogram"].axes
    labels = [t.get_text() for t in hist[0].get_yticklabels()]
    assert any(lab.endswith("%") for lab in labels), labels      # a y scale: share of games per bin
    for fig in figs.values():
        for a in fig.axes:
            if a.get_legend() is not None:
                assert a.get_legend()._loc != 0, fig


def test_histogram_bars_are_shares_of_games():
    spec = parse_spec({"kind": "strategies", "strategies": ["keep-largest"], "games": 2000,
                       "plots": ["histogram"]}, name="h")
    rep = run_experiment(spec)
    ax = _figures(rep)["histogram"].axes[0]
    total = sum(p.get_height() for p in ax.patches)
    # every game not beyond the cut falls in one bin: the bars add up to (almost) all games
    assert 0.99 <= total <= 1.0 + 1e-9


def test_a_custom_strategy_is_labelled_by_its_name(tmp_path, monkeypatch):
    (tmp_path / "mystrat.py").write_text(
        "from yahtzee_sim.strategies.simple import KeepLargestStrategy\n"
        "class Sixes(KeepLargestStrategy):\n    name = 'sixes-first'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = parse_spec({"kind": "strategies", "strategies": ["mystrat:Sixes", "greedy"], "games": 512,
                       "plots": ["ecdf"]}, name="c")
    rep = run_experiment(spec)
    assert list(rep.data["summary"].index) == ["sixes-first", "greedy"]
    legend = [t.get_text() for t in _figures(rep)["ecdf"].axes[0].get_legend().get_texts()]
    assert legend == ["sixes-first", "greedy"]


def test_variants_figure_draws_each_strategy_against_its_own_exact_mean():
    spec = parse_spec({"kind": "variants", "strategies": ["keep-largest", "optimal"], "rule_sets": ["yacht"],
                       "yacht_options": ["no-bonus"], "games": 400}, name="v")
    rep = run_experiment(spec)
    fig = _figures(rep)["variants"]
    frame = rep.data["variants"]
    panels = [a for a in fig.axes if a.get_title().startswith("under ")]
    assert [a.get_title() for a in panels] == ["under keep-largest", "under optimal"]
    for ax, strategy in zip(panels, ("keep-largest", "optimal")):
        dots = np.concatenate([c.get_offsets()[:, 0] for c in ax.collections])
        want = frame.xs(strategy, level="strategy")["exact_mean"].to_numpy()
        assert [float(x) for x in dots] == pytest.approx([float(x) for x in want])


def test_distributions_figures_name_each_curve_once_and_say_their_units():
    """The pmf figure draws the strategy ladder, each strategy once (it once listed optimal a
    second time as optimal:theta=0), with its legend at a fixed place; the theta figure names
    its rule set and gives each panel a unit."""
    from yahtzee_sim.report.distributions import distributions_numbers, render_distributions

    spec = parse_spec({"kind": "distributions", "rules": "yacht", "options": ["fill-in-order"],
                       "strategies": ["keep-largest", "optimal"], "games": 500,
                       "tables": ["summary"], "plots": ["pmf", "theta"]}, name="d")
    figs = _figures(render_distributions(distributions_numbers(spec), spec))
    ax = figs["pmf"].axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["keep-largest (exact)", "optimal (exact)", "optimal, simulated (500 games)"]
    assert ax.get_legend()._loc != 0                            # 0 is "best"
    theta = figs["theta"]
    assert "Yacht" in theta._suptitle.get_text() and "fill-in-order" in theta._suptitle.get_text()
    assert all(a.get_ylabel() in ("points", "share of games") for a in theta.axes)
