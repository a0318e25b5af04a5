"""The family report (issue 8 §3): every rule set under every strategy, exact where solvable."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from yahtzee_sim.exact.solver import solve
from yahtzee_sim.report import family, load_spec, parse_spec, run_experiment, write_report
from yahtzee_sim.results import max_total, min_total
from yahtzee_sim.rules import get_rules, rule_names
from yahtzee_sim.strategies import strategy_names

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "experiments" / "family.toml"
# Solvable in well under a second (yacht-classic, generala) and refused for three different
# reasons (balut: state count; yamb: columns; maxi-yatzy: banked throws): both sides of every cell.
SMALL = ["yacht-classic", "generala", "balut", "yamb", "maxi-yatzy"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    spec = parse_spec({"kind": "family", "rule_sets": SMALL, "games": 300, "seed": 5}, name="family")
    report = run_experiment(spec)
    out = write_report(report, tmp_path_factory.mktemp("reports") / "family")
    return spec, report, out


def _solver_says(key: str):
    """The solver's own answer, asked directly: (value, None) or (None, refusal)."""
    try:
        return solve(key).mean, None
    except ValueError as exc:
        return None, str(exc)


def test_every_promised_file_is_written(tiny):
    spec, _, out = tiny
    readme = (out / "README.md").read_text(encoding="utf-8")
    promised = set(re.findall(r"\]\(([^)]+\.(?:csv|png|svg))\)", readme))
    assert promised == {f"{t}.csv" for t in spec.tables} | {"means.png", "means.svg"}
    for name in promised:
        assert (out / name).is_file() and (out / name).stat().st_size > 0, name


def test_every_cell_is_a_consistent_number(tiny):
    _, report, _ = tiny
    means = report.data["means"]
    assert list(means.index.get_level_values("rule_set").unique()) == SMALL
    assert list(means.index.get_level_values("strategy").unique()) == strategy_names()
    played = means[means["mean"].notna()]
    for (key, strategy), r in played.iterrows():
        rules = get_rules(key)
        assert min_total(rules) <= r["min"] <= r["mean"] <= r["max"] <= max_total(rules), (key, strategy)
        assert r["ci95_low"] < r["mean"] < r["ci95_high"], (key, strategy)
        assert r["games"] == 300
    # every strategy of a rule set plays the same dice: one seed per rule set, a different one per rule set
    seeds = means.groupby(level="rule_set")["seed"].nunique()
    assert (seeds == 1).all() and means["seed"].nunique() == len(SMALL)


def test_exact_values_are_present_exactly_where_the_solver_solves(tiny):
    _, report, out = tiny
    means, games = report.data["means"], report.data["games"]
    readme = (out / "README.md").read_text(encoding="utf-8")
    for key in SMALL:
        value, refusal = _solver_says(key)
        opt = means.loc[(key, "optimal")]
        if value is None:
            assert not games.loc[key, "solvable"] and np.isnan(games.loc[key, "exact_mean"])
            assert np.isnan(opt["mean"]) and opt["note"].startswith(family.NOT_SOLVABLE)
            why = family.why_not_exact(get_rules(key), refusal)
            assert why and why in readme                     # the engine's own reason, shown
            for part in why.split("; and "):                 # in its words, less what this machine allows
                assert part in refusal or part == family.WHOLE_CARD, (key, part)
            assert "allowed" not in why and "this machine's" not in why, why
            if key == "balut":                               # more memory would not solve its points
                assert why.startswith(family.WHOLE_CARD), why
        else:
            assert games.loc[key, "solvable"] and games.loc[key, "exact_mean"] == pytest.approx(value)
            assert opt["exact_mean"] == pytest.approx(value) and opt["exact_sd"] > 0
            assert bool(opt["exact_inside_ci"]) == bool(opt["ci95_low"] <= value <= opt["ci95_high"])
            # the other strategies cannot beat optimal play by more than chance allows
            best_other = means.loc[key].drop("optimal")["ci95_low"].max()
            assert best_other < value
    assert readme.count(f"| {family.NOT_SOLVABLE} |") >= 2 * 3    # the optimal cell and the exact row


def test_points_only_for_balut_and_within_the_cards_range(tiny):
    _, report, _ = tiny
    points = report.data["points"]
    assert set(points.index.get_level_values("rule_set")) == {"balut"}
    low, high = get_rules("balut").card_points_range
    for _, r in points.iterrows():
        assert low <= r["points_ci95_low"] <= r["points_mean"] <= r["points_ci95_high"] <= high
    assert report.data["means"].drop(index="balut", level="rule_set")["points_mean"].isna().all()


def test_balut_score_bound_beside_its_points(tiny):
    """Balut's exact score optimum (points set aside) is in the points table's caption,
    and every strategy's simulated mean score is below it."""
    from yahtzee_sim.exact.grouped import solve_grouped

    _, report, out = tiny
    bound = solve_grouped("balut").mean
    assert report.data["games"].loc["balut", "score_only_optimum"] == bound
    assert report.data["games"]["score_only_optimum"].drop(index="balut").isna().all()
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert f"points set aside, is {bound:.2f}" in readme and "--score-only" in readme
    assert (report.data["points"]["ci95_high"] < bound).all()


def test_the_readme_reads_like_prose_not_like_python(tiny):
    _, _, out = tiny
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"\bnan\b|\bNaN\b|\(np\.|\('|', '|e[+-]\d\d\b", readme)
    for key in SMALL:   # each game is introduced by its own summary line
        assert family.describe(get_rules(key)) in readme
    assert "300 games per strategy and rule set" in readme or "300 games per cell" in readme


def test_without_rule_sets_the_report_covers_the_registry(monkeypatch):
    monkeypatch.setattr(family, "_exact", lambda rules: (None, f"the exact engine cannot solve {rules.key}: test"))
    spec = parse_spec({"kind": "family", "strategies": ["keep-largest"], "games": 16, "plots": []}, name="x")
    assert list(run_experiment(spec).data["games"].index) == rule_names()


def test_the_shipped_spec_names_every_rule_set_and_the_issues_variants():
    spec = load_spec(SPEC)
    assert spec.kind == "family" and spec.games >= 10_000
    assert set(spec.rule_sets) >= set(rule_names()) | {"maxi-yatzy+no-saved-throws", "yacht+faces-7",
                                                        "yahtzee+faces-7"}
    assert set(spec.strategies) == set(strategy_names())


def test_the_committed_report_is_the_specs_default_run():
    readme = ROOT / "reports" / "family" / "README.md"
    if not readme.exists():
        pytest.skip("reports/family not generated yet")
    text = readme.read_text(encoding="utf-8")
    spec = load_spec(SPEC)
    assert "`yahtzee-sim run experiments/family.toml` (" in text and f"seed {spec.seed}" in text
    assert f"{spec.games:,} games per cell" in text
    for key in spec.rule_sets:
        assert f"| {key} |" in text


@pytest.mark.parametrize("data,message", [
    ({"rule_sets": ["yahtzee", "no-such-game"]}, "unknown rule set 'no-such-game'; valid rule sets: yahtzee"),
    ({"strategies": ["keep-largest", "genius"]}, "genius"),
    ({"tables": ["means", "boxes"]}, "unknown table 'boxes' for kind 'family'; valid: games, means, exact, points"),
    ({"rule_sets": []}, "rule_sets must not be empty"),
    ({"rules": "yacht"}, "unknown key 'rules'"),
])
def test_bad_specs_are_refused_before_any_work(data, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_spec({"kind": "family", **data}, name="family")
