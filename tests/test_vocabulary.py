"""One word per idea, the same in Python, the command line and JSON (issue "one house"):
a rule set is named by its key (name and options) in every ``--json`` output, and the
mean score is ``mean`` everywhere (``expected_score``, its old name, kept for scripts:
deprecated in Python, a duplicate key in JSON)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import yahtzee_sim as ys
from yahtzee_sim.cli import main

RULES = ["--rules", "yacht", "--option", "fill-in-order"]
KEY = "yacht+fill-in-order"

COMMANDS = {
    "score": ["score", *RULES, "--dice", "33355"],
    "simulate": ["simulate", *RULES, "--games", "2048", "--seed", "1"],
    "solve": ["solve", *RULES],
    "policy-value": ["policy-value", *RULES, "--strategy", "greedy"],
    "distribution": ["distribution", *RULES, "--strategy", "greedy"],
    "advise": ["advise", *RULES, "--dice", "12345", "--rolls-left", "1"],
}


@pytest.mark.parametrize("name", COMMANDS)
def test_json_names_the_rule_set_by_its_key(name, capsys):
    assert main([*COMMANDS[name], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rules"] == KEY


@pytest.mark.parametrize("name", ["simulate", "solve", "policy-value", "distribution"])
def test_the_mean_is_called_mean(name, capsys):
    assert main([*COMMANDS[name], "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data["mean"], float)
    if "expected_score" in data:                   # the old name, kept for scripts: the same number
        assert data["expected_score"] == data["mean"]


def test_python_says_mean_too():
    sol = ys.solve("yacht", options=["fill-in-order"])
    pv = ys.policy_value("yacht", "greedy", options=["fill-in-order"])
    dist = ys.distribution("yacht", "greedy", options=["fill-in-order"])
    assert sol.mean == sol.summary()["mean"] == sol.summary()["expected_score"]
    assert pv.mean == pv.summary()["mean"] == pv.summary()["expected_score"]
    assert abs(dist.mean - pv.mean) < 1e-9


def test_expected_score_is_the_deprecated_name_of_mean():
    """Every exact result that said ``expected_score`` says ``mean``; the old attribute
    still reads the same number, with a DeprecationWarning naming the new one."""
    from yahtzee_sim.exact.grouped import solve_grouped
    from yahtzee_sim.exact.yamb_down import solve_yamb_down

    results = [ys.solve("yacht", options=["fill-in-order"]),
               ys.policy_value("yacht", "greedy", options=["fill-in-order"]),
               solve_grouped("balut"), solve_yamb_down()]
    for res in results:
        name = type(res).__name__
        with pytest.warns(DeprecationWarning, match=rf"{name}\.expected_score is now {name}\.mean"):
            old = res.expected_score
        assert old == res.mean and isinstance(res.mean, float)


# -- jobs: the processes that share the work, one word for the runner, the solvers and the CLI --

def test_solve_says_jobs_and_still_takes_workers():
    """``workers=``, the old name, still reaches the same check (a DeprecationWarning first);
    both names together are refused before any work."""
    with pytest.raises(ValueError, match="jobs must be a positive integer, got 0"):
        ys.solve("yacht", options=["fill-in-order"], jobs=0)
    with pytest.warns(DeprecationWarning, match=r"solve\(workers=...\) is now solve\(jobs=...\)"):
        with pytest.raises(ValueError, match="jobs must be a positive integer, got 0"):
            ys.solve("yacht", options=["fill-in-order"], workers=0)
    new = ys.solve("yacht", options=["fill-in-order"], cache=False, jobs=1)
    with pytest.warns(DeprecationWarning):
        old = ys.solve("yacht", options=["fill-in-order"], cache=False, workers=1)
    assert old.mean == new.mean


@pytest.mark.parametrize("func", ["target_solve", "loss_accounting"])
def test_the_other_solvers_say_jobs_too(func):
    from yahtzee_sim.exact.losses import loss_accounting

    call = {"target_solve": lambda **kw: ys.target_solve("yacht", 10, **kw),
            "loss_accounting": lambda **kw: loss_accounting("yacht", "greedy", **kw)}[func]
    with pytest.raises(ValueError, match="give jobs \\(workers is its old name\\), not both"):
        call(jobs=1, workers=1)
    with pytest.warns(DeprecationWarning, match=f"{func}\\(workers=...\\) is now {func}\\(jobs=...\\)"):
        with pytest.raises(ValueError, match="jobs must be a positive integer, got 0"):
            call(workers=0)


@pytest.mark.parametrize("command", [["solve", *RULES], ["target", *RULES, "--target", "100"]])
def test_the_cli_says_jobs_and_still_takes_workers(command, capsys):
    assert main([*command, "--jobs", "1", "--json"]) == 0
    new = json.loads(capsys.readouterr().out)
    assert main([*command, "--workers", "1", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "yahtzee-sim: note: --workers is now --jobs; the old name will go\n"
    old = json.loads(captured.out)
    for key in ("seconds", "cache", "solve_seconds"):     # how long it took and where from: not the answer
        new.pop(key, None), old.pop(key, None)
    assert old == new
    assert main([*command, "--jobs", "0"]) == 2
    assert "--jobs: expected a positive integer, got '0'" in capsys.readouterr().err


# -- five_box_full: whether the five-of-a-kind box holds points, as the game state names it --

def test_advise_says_five_box_full_and_still_takes_yahtzee_box():
    """The advisor reads the box as the state does (holds points or not); ``yahtzee_box``,
    its points, still works, checked against what the box can hold."""
    new = ys.advise("yahtzee", "66666", rolls_left=0, filled="sixes,yahtzee", upper=18, five_box_full=True)
    with pytest.warns(DeprecationWarning, match=r"advise\(yahtzee_box=...\) is now advise\(five_box_full=...\)"):
        old = ys.advise("yahtzee", "66666", rolls_left=0, filled="sixes,yahtzee", upper=18, yahtzee_box=50)
    assert old.five_box_full is True and old.to_frame().equals(new.to_frame())
    assert (new.to_frame()["bonus"] == 100).all()      # a second Yahtzee with 50 in its box: the 100 bonus
    with pytest.warns(DeprecationWarning, match="Advice.yahtzee_box is now Advice.five_box_full"):
        assert new.yahtzee_box == 50
    data = new.to_dict()
    assert data["five_box_full"] is True and data["yahtzee_box"] == 50    # the old key kept for scripts
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="holds 50 or 0, got 25"):
        ys.advise("yahtzee", "13356", rolls_left=2, filled="yahtzee", yahtzee_box=25)
    with pytest.raises(ValueError, match="not both"):
        ys.advise("yahtzee", "13356", rolls_left=2, filled="yahtzee", yahtzee_box=0, five_box_full=False)


def test_the_cli_says_five_box_full_and_still_takes_yahtzee_box(capsys):
    position = ["advise", "--dice", "66666", "--rolls-left", "0", "--filled", "sixes,yahtzee", "--upper", "18"]
    note = "yahtzee-sim: note: --yahtzee-box is now --five-box-full (points) or --no-five-box-full (0); " \
           "the old name will go\n"
    for new, old in [("--five-box-full", "50"), ("--no-five-box-full", "0")]:
        assert main([*position, new, "--json"]) == 0
        want = json.loads(capsys.readouterr().out)
        assert main([*position, "--yahtzee-box", old, "--json"]) == 0
        captured = capsys.readouterr()
        assert captured.err == note and json.loads(captured.out) == want
        assert want["five_box_full"] is (new == "--five-box-full")
    assert main([*position, "--yahtzee-box", "25"]) == 2
    assert capsys.readouterr().err == note + "yahtzee-sim: error: the yahtzee box holds 50 or 0, got 25\n"


# -- one vocabulary in the committed reports (issue 20) -------------------------------------

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
# A source document named as a "seed": "seed 001", "Seed 000's", "seeds 000, 003", "the seed's
# recipe", "the seeds' advice". A random seed ("seed 2026", "--seed 1", a ``seed`` column) is
# still a seed and does not match: documents are numbered with three digits.
DOCUMENT_AS_SEED = re.compile(r"\bseeds? 0\d\d\b|seed_0\d\d\b|\bthe seed's\b|\bseeds'", re.IGNORECASE)


def _committed_report_texts():
    if not REPORTS.is_dir():
        pytest.skip("no committed reports in this checkout")
    files = sorted(p for p in REPORTS.rglob("*") if p.suffix in (".md", ".csv"))
    assert files, "the committed reports have no README or CSV"
    return [(p, p.read_text(encoding="utf-8")) for p in files]


def test_committed_reports_call_a_source_document_a_source():
    texts = _committed_report_texts()
    found = [f"{p.relative_to(ROOT)}: {m.group(0)!r}" for p, t in texts for m in DOCUMENT_AS_SEED.finditer(t)]
    assert not found, found
    assert not [p for p, _ in texts if "seed" in p.name], "a report file named after a seed document"

    # the README and docs name the documents the same way
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = [f"{p.name}: {m.group(0)!r}" for p in docs if p.is_file()
             for m in DOCUMENT_AS_SEED.finditer(p.read_text(encoding="utf-8"))]
    assert not found, found
    assert {p.name for p, _ in texts if p.parent.name == "claims"} >= {
        "claims_source_000.csv", "claims_source_001.csv", "claims_source_003.csv"}


def test_committed_report_columns_use_five_box_full():
    texts = [(p, t) for p, t in _committed_report_texts() if p.suffix == ".csv"]
    headers = {p.relative_to(ROOT): t.splitlines()[0].split(",") for p, t in texts if t}
    old = {str(p): [c for c in cols if "five_box_50" in c] for p, cols in headers.items()}
    assert not any(old.values()), old
    # the tables that carry the event at all carry it under its name
    for name in ("strategies/summary.csv", "variants/variants.csv", "distributions/summary.csv"):
        assert any(c.startswith("five_box_full") for c in headers[Path("reports") / name]), name


def test_the_pattern_tells_a_document_from_a_random_seed():
    # the check above must be able to fail: the old wording matches, a random seed does not
    for old in ("Seed 001's computer opponents", "claims_seed_000.csv", "the seeds' advice",
                "The seed's recipe for 351", "seeds 000, 003"):
        assert DOCUMENT_AS_SEED.search(old), old
    for fine in ("seed 2026", "--seed 1", "strategy,seed,dice_group", "(yahtzee-sim 0.1.0, seed 2026)"):
        assert not DOCUMENT_AS_SEED.search(fine), fine
