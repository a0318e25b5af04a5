"""Long work off a terminal (a file, a pipe, a notebook) reports its phases as plain
lines on stderr: no bars, nothing for quick work, the output itself unchanged."""

from __future__ import annotations

import io
import json

import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.progress import PhaseLines, off_terminal


@pytest.mark.parametrize("argv", [
    ["solve", "--rules", "yacht-classic", "--no-cache"],
    ["policy-value", "--rules", "yacht-classic", "--strategy", "keep-largest"],
    ["distribution", "--rules", "yacht-classic", "--strategy", "greedy"],
    ["target", "--rules", "yacht", "--option", "fill-in-order", "--target", "100"],
])
def test_exact_commands_print_phase_lines_off_a_terminal(argv, capsys, monkeypatch):
    monkeypatch.setenv("YAHTZEE_SIM_PHASE_LINES_AFTER", "0")     # as if the work had run ten seconds
    assert main(argv) == 0
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert lines and all(line.startswith("yahtzee-sim: ") for line in lines), err
    assert lines[-1].endswith(" done") and len(lines) >= 2
    assert "\r" not in err and "%|" not in err                      # plain lines, not a bar
    assert out.strip() and "yahtzee-sim:" not in out                 # stdout is the answer alone
    assert main([*argv, "--json"]) == 0                              # JSON on stdout, phases still on stderr
    out, err = capsys.readouterr()
    json.loads(out)
    assert err.splitlines()[-1].endswith(" done")


def test_quick_work_stays_quiet(capsys, monkeypatch):
    monkeypatch.setenv("YAHTZEE_SIM_PHASE_LINES_AFTER", "30")
    assert main(["solve", "--rules", "yacht-classic"]) == 0
    assert capsys.readouterr().err == ""


def test_phase_lines_repeat_for_a_long_phase_and_the_wait_is_configurable(monkeypatch):
    out = io.StringIO()
    lines = PhaseLines(out, after=0, every=0)
    for done in range(3):
        lines("evaluating", done, 3)
    assert out.getvalue().count("evaluating") == 3 and "(2 of 3)" in out.getvalue()
    monkeypatch.setenv("YAHTZEE_SIM_PHASE_LINES_AFTER", "inf")
    quiet = off_terminal()                    # no phase lines ever; announcements still said
    assert isinstance(quiet, PhaseLines) and quiet.after == float("inf")
    monkeypatch.setenv("YAHTZEE_SIM_PHASE_LINES_AFTER", "soon")
    with pytest.raises(ValueError, match="number of seconds"):
        off_terminal()
