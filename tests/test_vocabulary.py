"""One word per idea, the same in Python, the command line and JSON (issue "one house"):
a rule set is named by its key (name and options) in every ``--json`` output, and the
mean score is ``mean`` everywhere (``expected_score`` kept for scripts)."""

from __future__ import annotations

import json

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
    assert sol.mean == sol.expected_score == sol.summary()["mean"]
    assert pv.mean == pv.expected_score == pv.summary()["mean"]
    assert abs(dist.mean - pv.mean) < 1e-9
