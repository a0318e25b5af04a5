"""The ``yahtzee-sim`` command line: the core subcommands in-process (fast), a real
subprocess run or two, and every bad-input path of issue 2 section 7: exit code 2,
exactly one line on stderr naming the valid choices, no traceback, no output file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.cli import main
from yahtzee_sim.rules import get_rules, rule_names, rule_options
from yahtzee_sim.strategies import get_strategy, strategy_names

JSON_KEYS = {"rules", "options", "strategy", "games", "seed", "mean", "sd", "se", "ci95_low", "ci95_high",
             "min", "p1", "p5", "p25", "p50", "p75", "p95", "p99", "max", "upper_bonus_rate", "five_box_full_rate",
             "five_rolled_rate", "five_count_mean", "seconds"}
# each simulated rate and mean count with its 95% interval
JSON_KEYS |= {f"{k}_ci95_{end}" for k in ("upper_bonus_rate", "five_box_full_rate", "five_rolled_rate",
                                          "five_count_mean") for end in ("low", "high")}
# the earlier spelling of five_box_full, kept beside it in the JSON (deprecated, users' scripts read it)
OLD_JSON_KEYS = {"five_box_50_rate", "five_box_50_rate_ci95_low", "five_box_50_rate_ci95_high"}


def run(capsys, *argv):
    """(exit code, stdout, stderr) of ``yahtzee-sim argv`` run in-process."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv)
    assert code == 0 and err == "", err
    return json.loads(out)


# -- listings ---------------------------------------------------------------------------

def test_rules_lists_every_rule_set_and_option(capsys):
    code, out, err = run(capsys, "rules")
    assert code == 0 and err == ""
    for name in rule_names():
        assert name in out
        for option in rule_options(name):
            assert f"{name} --option {option}" in out
    data = run_json(capsys, "rules", "--json")
    assert list(data) == rule_names()
    for name, entry in data.items():
        assert entry["boxes"] == list(get_rules(name).box_names)
        assert list(entry["options"]) == list(rule_options(name))


def test_strategies_lists_every_strategy(capsys):
    code, out, err = run(capsys, "strategies")
    assert code == 0 and err == ""
    listed = list(run_json(capsys, "strategies", "--json"))
    # the registry, every computer level, both parametrized families and the table-only play-to-win
    from yahtzee_sim.strategies.levels import LEVELS

    wanted = [*strategy_names(), *LEVELS, "optimal:theta=<x>", "target:T=<score>", "play-to-win"]
    assert listed == wanted and all(f"{name}:" in out for name in wanted)
    for name in listed:     # each listed form is one get_strategy builds (play-to-win: at a table)
        if name != "play-to-win":
            example = name.replace("<x>", "0.02").replace("<score>", "250")
            assert get_strategy(example).name == example


# -- score ------------------------------------------------------------------------------

def test_score_dice_table_and_json(capsys):
    code, out, err = run(capsys, "score", "--rules", "yacht", "--dice", "33355")
    assert code == 0 and err == ""
    assert "Full House" in out and "19" in out
    data = run_json(capsys, "score", "--rules", "yacht", "--dice", "33355", "--json")
    # source 001: 3-3-3-5-5 is 19 in Full House, 9 in Threes.
    assert data["scores"]["full_house"] == 19 and data["scores"]["threes"] == 9
    assert data["dice"] == [3, 3, 3, 5, 5] and data["rules"] == "yacht"
    assert data["scores"] == get_rules("yacht").score_dice([3, 3, 3, 5, 5])


@pytest.mark.parametrize("dice", ["53353", "3,3,3,5,5", "3 3 3 5 5", "5, 3, 5, 3, 3"])
def test_score_accepts_common_dice_spellings(capsys, dice):
    data = run_json(capsys, "score", "--dice", dice, "--json")
    assert sorted(data["dice"]) == [3, 3, 3, 5, 5] and data["scores"]["full_house"] == 25


def test_score_with_options(capsys):
    data = run_json(capsys, "score", "--rules", "yacht", "--option", "full-house-25",
                    "--option", "four-dice-of-four", "--dice", "11122", "--json")
    # source 001: 1-1-1-2-2 is 25 with the full-house-25 rule.
    assert data["rules"] == "yacht+four-dice-of-four+full-house-25"
    assert data["scores"]["full_house"] == 25
    data = run_json(capsys, "score", "--rules", "yatzy", "--dice", "66666", "--json")
    # source 000: five sixes in Yatzy.
    s = data["scores"]
    assert (s["one_pair"], s["three_of_a_kind"], s["four_of_a_kind"], s["sixes"], s["chance"]) == (
        12, 18, 24, 30, 30)


def test_score_all(capsys):
    code, out, err = run(capsys, "score", "--rules", "yatzy", "--all")
    assert code == 0 and err == ""
    assert len(out.strip().splitlines()) == 1 + 252
    data = run_json(capsys, "score", "--rules", "yatzy", "--all", "--json")
    rows = data["rolls"]
    assert len(rows) == 252 and data["rules"] == "yatzy"
    assert sum(r["probability"] for r in rows) == pytest.approx(1)
    r = get_rules("yatzy")
    for row in rows[::25]:
        assert {b: row[b] for b in r.box_names} == r.score_dice([int(c) for c in row["dice"]])


# -- simulate ---------------------------------------------------------------------------

def test_simulate_table(capsys):
    code, out, err = run(capsys, "simulate", "--rules", "yacht", "--strategy", "random",
                         "--games", 1500, "--seed", 3)
    assert code == 0 and err == ""
    for word in ["final score", "mean", "sd", "95% CI", "p1", "p50", "p99", "max", "share of games with",
                 "upper bonus", "five of a kind rolled at least once", "mean per game",
                 "turns ending in five of a kind", "seconds"]:
        assert word in out
    res = simulate("yacht", "random", 1500, seed=3)
    assert f"{res.summary()['mean']:.3f}" in out
    # every rate carries its Wilson interval, computed here by scipy from the per-game table
    from scipy import stats

    frame = res.to_frame()
    k = int((frame["upper_total"] >= 63).sum())
    ci = stats.binomtest(k, 1500).proportion_ci(method="wilson")
    assert f"upper bonus {k / 1500:.4f} {ci.low:.4f} .. {ci.high:.4f}" in " ".join(out.split())


def test_simulate_json_keys_values_and_reproducibility(capsys):
    argv = ["simulate", "--rules", "yacht", "--option", "three-dice", "--strategy", "keep-largest",
            "--games", 2500, "--seed", 12, "--json"]
    a = run_json(capsys, *argv)
    assert set(a) == JSON_KEYS | OLD_JSON_KEYS
    for old in OLD_JSON_KEYS:
        assert a[old] == a[old.replace("five_box_50", "five_box_full")]
    assert (a["rules"], a["options"], a["strategy"], a["games"], a["seed"]) == (
        "yacht+three-dice", ["three-dice"], "keep-largest", 2500, 12)
    s = simulate("yacht", "keep-largest", 2500, seed=12, options=["three-dice"]).summary()
    # One name per number: the JSON keys are the Python summary's keys, values equal.
    assert set(s) | {"options"} == JSON_KEYS
    for key in s:
        if key != "seconds":
            assert a[key] == pytest.approx(s[key]) if isinstance(s[key], float) else a[key] == s[key], key
    assert a["ci95_low"] < a["mean"] < a["ci95_high"]
    assert a["five_box_full_rate"] <= a["five_rolled_rate"] <= 1
    assert a["seconds"] >= 0
    b = run_json(capsys, *argv)
    a.pop("seconds"), b.pop("seconds")
    assert a == b
    c = run_json(capsys, *[x if x != 12 else 13 for x in argv])
    assert c["mean"] != a["mean"]


def test_simulate_one_game_json_has_nulls_not_an_error(capsys):
    # One game has no sd: JSON gets null (it used to fail on NaN with exit code 2).
    data = run_json(capsys, "simulate", "--games", 1, "--seed", 1, "--json")
    assert data["games"] == 1 and data["sd"] is None and data["ci95_low"] is None and data["ci95_high"] is None


def test_simulate_out_csv(capsys, tmp_path):
    out = tmp_path / "games.csv"
    code, stdout, err = run(capsys, "simulate", "--rules", "yatzy", "--strategy", "random",
                            "--games", 1100, "--seed", 4, "--out", out)
    assert code == 0 and err == "" and str(out) in stdout
    frame = pd.read_csv(out, index_col="game")
    res = simulate("yatzy", "random", 1100, seed=4)
    assert len(frame) == 1100
    assert (frame["total"].to_numpy() == res.games["total"]).all()
    assert list(frame.columns) == list(res.to_frame().columns)
    assert [p.name for p in tmp_path.iterdir()] == ["games.csv"]   # no temporary left
    # Overwriting an existing file works, with --json too.
    data = run_json(capsys, "simulate", "--rules", "yatzy", "--games", 50, "--seed", 4,
                    "--out", out, "--json")
    assert data["games"] == 50 and len(pd.read_csv(out)) == 50


def test_simulate_out_relative_path_and_parquet(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(capsys, "simulate", "--games", 30, "--seed", 1, "--out", "g.csv")[0] == 0
    assert len(pd.read_csv(tmp_path / "g.csv")) == 30
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        code, out, err = run(capsys, "simulate", "--games", 30, "--out", "g.parquet")
        assert code == 2 and out == "" and len(err.splitlines()) == 1 and "pyarrow" in err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv"]
    else:
        assert run(capsys, "simulate", "--games", 30, "--seed", 1, "--out", "g.parquet")[0] == 0
        assert len(pd.read_parquet(tmp_path / "g.parquet")) == 30


def test_turns(capsys):
    code, out, err = run(capsys, "turns", "--turns", 3000, "--seed", 2)
    assert code == 0 and err == "" and "five_of_a_kind" in out
    data = run_json(capsys, "turns", "--rules", "yacht", "--turns", 3000, "--seed", 2, "--json")
    assert (data["rules"], data["turns"], data["seed"], data["strategy"]) == ("yacht", 3000, 2, "keep-largest")
    rows = {r["pattern"]: r for r in data["patterns"]}
    five = rows["five_of_a_kind"]
    assert five["ci_low"] <= five["frequency"] <= five["ci_high"]
    assert five["turns"] == round(five["frequency"] * 3000)
    again = run_json(capsys, "turns", "--rules", "yacht", "--turns", 3000, "--seed", 2, "--json")
    assert again["patterns"] == data["patterns"]


# -- bad input: exit 2, one line naming the valid choices, no traceback, no file -------------

STRATS = strategy_names()
BAD_INPUT = {
    "unknown-rule-set": (["simulate", "--rules", "yahtzy", "--games", 10], ["yahtzy", *rule_names()]),
    "unknown-rule-set-score": (["score", "--rules", "nope", "--dice", "12345"], rule_names()),
    "unknown-option": (["simulate", "--rules", "yacht", "--option", "three-dices", "--games", 10],
                       ["three-dices", *rule_options("yacht")]),
    "option-of-another-rule-set": (["simulate", "--rules", "yahtzee", "--option", "three-dice"],
                                   ["three-dice", *rule_options("yahtzee")]),
    "option-of-a-rule-set-without-options": (["score", "--rules", "yatzy", "--option", "no-bonus",
                                              "--dice", "12345"], ["no-bonus", "(none)"]),
    "unknown-strategy": (["simulate", "--strategy", "smart", "--games", 10], ["smart", *STRATS]),
    "unknown-strategy-turns": (["turns", "--strategy", "smart", "--turns", 10], STRATS),
    "dice-too-few": (["score", "--dice", "1234"], ["1..6", "5"]),
    "dice-too-many": (["score", "--dice", "123456"], ["1..6"]),
    "dice-zero": (["score", "--dice", "01234"], ["1..6"]),
    "dice-seven": (["score", "--dice", "12347"], ["1..6"]),
    "dice-letters": (["score", "--dice", "abcde"], ["1..6"]),
    "dice-empty": (["score", "--dice", ""], ["1..6"]),
    "dice-negative": (["score", "--dice=-1,2,3,4,5"], ["1..6"]),
    "dice-and-all": (["score", "--dice", "12345", "--all"], ["--dice", "--all"]),
    "no-dice": (["score"], ["--dice", "--all"]),
    "games-0": (["simulate", "--games", "0"], ["positive integer"]),
    "games-negative": (["simulate", "--games", "-5"], ["positive integer"]),
    "games-fraction": (["simulate", "--games", "1.5"], ["positive integer"]),
    "games-letters": (["simulate", "--games", "abc"], ["positive integer"]),
    "games-overflow": (["simulate", "--games", "1e400"], ["positive integer"]),
    "turns-0": (["turns", "--turns", "0"], ["positive integer"]),
    "batch-0": (["simulate", "--batch", "0", "--games", 10], ["positive integer"]),
    "seed-negative": (["simulate", "--seed", "-1", "--games", 10], ["non-negative integer"]),
    "seed-letters": (["turns", "--seed", "x", "--turns", 10], ["non-negative integer"]),
    "unknown-command": (["simulat"], ["simulate", "score", "rules"]),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input(capsys, tmp_path, monkeypatch, case):
    monkeypatch.chdir(tmp_path)
    argv, must_name = BAD_INPUT[case]
    code, out, err = run(capsys, *argv)
    assert code == 2, (code, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("yahtzee-sim: error: "), err
    assert "Traceback" not in err
    for word in must_name:
        assert word in err, (word, err)
    assert list(tmp_path.iterdir()) == []


OUT_CASES = {
    "missing-folder": (lambda tmp: tmp / "no" / "such" / "games.csv", ["does not exist"]),
    "folder-is-a-file": (lambda tmp: tmp / "afile.txt" / "games.csv", ["does not exist"]),
    "bad-suffix": (lambda tmp: tmp / "games.txt", [".csv", ".parquet"]),
    "no-suffix": (lambda tmp: tmp / "games", [".csv", ".parquet"]),
    "existing-folder": (lambda tmp: tmp / "games.csv", ["folder", ".csv"]),
}


@pytest.fixture
def no_simulation(monkeypatch):
    """Fail the test if the CLI starts simulating (bad paths must be caught first)."""
    import yahtzee_sim.api as engine

    def refuse(*args, **kwargs):
        raise AssertionError("simulate() ran before the --out path was checked")

    monkeypatch.setattr(engine, "simulate", refuse)


@pytest.mark.parametrize("case", list(OUT_CASES))
def test_bad_out_paths_fail_before_simulating(capsys, tmp_path, case, no_simulation):
    make, must_name = OUT_CASES[case]
    (tmp_path / "afile.txt").write_text("keep me")
    if case == "existing-folder":
        (tmp_path / "games.csv").mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    out = make(tmp_path)
    code, stdout, err = run(capsys, "simulate", "--games", "10_000_000", "--out", out, "--seed", 1)
    assert code == 2 and stdout == ""
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert all(w in err for w in must_name), err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert (tmp_path / "afile.txt").read_text() == "keep me"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may write into read-only folders, so no permission error to test")
def test_read_only_folder(capsys, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        code, _, err = run(capsys, "simulate", "--games", 100, "--out", folder / "g.csv")
        assert code == 2 and len(err.splitlines()) == 1 and "permission denied" in err
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)


def test_folder_that_refuses_files_even_for_root(capsys, tmp_path, no_simulation):
    # /proc accepts no new files whoever asks, and os.access may still say "writable".
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux /proc")
    code, out, err = run(capsys, "simulate", "--games", "10_000_000", "--out", "/proc/games.csv")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "cannot write" in err


def test_permission_denied_path_as_seen_by_the_cli(capsys, tmp_path, monkeypatch, no_simulation):
    # What a non-root user sees for a read-only folder, simulated so it also runs as root.
    import yahtzee_sim.runner.rows as cli  # where the --out check lives

    monkeypatch.setattr(cli.os, "access", lambda path, mode: False)
    code, out, err = run(capsys, "simulate", "--games", 100, "--out", tmp_path / "g.csv")
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and "permission denied" in err
    assert list(tmp_path.iterdir()) == []


def test_strategy_error_is_a_usage_error(capsys, monkeypatch):
    # A registered strategy that cheats is reported in one line naming it, exit 2.
    from yahtzee_sim.strategies import STRATEGIES, Strategy

    class Cheat(Strategy):
        name = "cheat"

        def keep(self, state, rolls, rolls_left, u):
            return np.full(len(rolls), self.dice.n_keeps - 1)

        def box(self, state, rolls, options, u):
            return np.zeros(len(rolls), dtype=np.int64)

    monkeypatch.setitem(STRATEGIES, "cheat", Cheat)
    code, out, err = run(capsys, "simulate", "--strategy", "cheat", "--games", 100, "--seed", 1)
    assert code == 2 and out == "" and len(err.splitlines()) == 1
    assert "'cheat'" in err and "Traceback" not in err


# -- real processes -----------------------------------------------------------------------

def _console_script() -> Path:
    return Path(sys.executable).parent / "yahtzee-sim"


@pytest.mark.skipif(not _console_script().exists(), reason="console script not installed")
def test_console_script_simulate_json():
    proc = subprocess.run([str(_console_script()), "simulate", "--games", "2048", "--seed", "5",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stderr == ""
    data = json.loads(proc.stdout)
    assert JSON_KEYS <= set(data)
    assert data["mean"] == pytest.approx(simulate("yahtzee", "keep-largest", 2048, seed=5).summary()["mean"])


def test_python_m_bad_input(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "yahtzee_sim", "score", "--dice", "99999"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "1..6" in proc.stderr
    assert "Traceback" not in proc.stderr


def _console(tmp_path, *argv, prelude=""):
    """The console script's own way out (``cli.console``), with ``prelude`` run first."""
    code = (f"import atexit, sys, threading, time\n{prelude}\nfrom yahtzee_sim.cli import console\n"
            "sys.argv = ['yahtzee-sim'] + sys.argv[1:]\nconsole()\n")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)


def test_the_console_script_leaves_at_once_with_its_output_its_exit_handlers_and_its_code(tmp_path):
    """Out without Python's teardown (0.3 s after a first exact command), but nothing lost:
    the whole output, what exit handlers print after it, and the exit code."""
    proc = _console(tmp_path, "odds", "--json", prelude="atexit.register(lambda: print('handler ran'))")
    assert proc.returncode == 0, proc.stderr
    body, _, tail = proc.stdout.rpartition("handler ran")
    assert json.loads(body) and tail == "\n"
    bad = _console(tmp_path, "score", "--dice", "99999")
    assert bad.returncode == 2 and bad.stdout == "" and len(bad.stderr.splitlines()) == 1


def test_the_console_script_waits_for_a_thread_still_running(tmp_path):
    """Someone's thread (a strategy's, a notebook helper's) still at work: the usual exit, which waits for it."""
    done = tmp_path / "done"
    prelude = (f"threading.Thread(target=lambda: (time.sleep(1.0), open({str(done)!r}, 'w').close())).start()")
    proc = _console(tmp_path, "rules", prelude=prelude)
    assert proc.returncode == 0 and "yahtzee" in proc.stdout
    assert done.exists()


# -- the shared command pieces (cli/_common.py) keep each command's options and layout ---------

# Each command's options in the order its --help lists them, written out by hand from the
# commands as they stood before the shared add_command / add_strategy_arg helpers.
RULES_ARGS = ["--rules", "--option", "--faces"]
COMMAND_OPTIONS = {
    "rules": ["--json"],
    "strategies": ["--json"],
    "policy-value": [*RULES_ARGS, "--strategy", "--json"],
    "distribution": [*RULES_ARGS, "--strategy", "--at-least", "--out", "--pmf", "--json"],
    "solve": [*RULES_ARGS, "--json", "--no-cache", "--float64", "--jobs", "--workers", "--score-only",
              "--down-column"],
}


@pytest.mark.parametrize("command", sorted(COMMAND_OPTIONS))
def test_shared_command_helpers_keep_the_options_and_their_order(command):
    from yahtzee_sim.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices[command]
    shown = [a.option_strings[0] for a in sub._actions if a.option_strings and a.dest != "help"]
    assert shown == COMMAND_OPTIONS[command]
    assert callable(sub.get_default("func")) and sub.get_default("func").__name__.startswith("cmd_")


def test_print_fields_lines_up_as_the_exact_commands_printed(capsys):
    from yahtzee_sim.cli._common import print_fields

    print_fields([("expected score", "1.5000"), ("standard dev.", "2"), ("cache", "off")], 17)
    # the literal lines policy-value and solve printed before the helper
    assert capsys.readouterr().out.splitlines() == ["  expected score   1.5000", "  standard dev.    2",
                                                     "  cache            off"]


def test_strategy_option_help_names_every_strategy():
    from yahtzee_sim.cli import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for command, lead in (("simulate", ""), ("turns", "whose keeps to follow: "), ("policy-value", "")):
        opt = next(a for a in subs[command]._actions if "--strategy" in a.option_strings)
        assert opt.help.startswith(lead + "one of: ") and all(n in opt.help for n in strategy_names())
        assert opt.help.endswith("; or module:Class, your own Strategy subclass")
    assert next(a for a in subs["policy-value"]._actions if "--strategy" in a.option_strings).required


def test_no_help_text_shows_an_escaped_percent_sign():
    """argparse %-formats an option's help but prints a description as it is: a ``%%``
    written in a description reached the user as "95%% interval"."""
    from yahtzee_sim.cli import build_parser

    parser = build_parser()
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    shown = {"yahtzee-sim": parser.format_help(), **{name: sub.format_help() for name, sub in subs.items()}}
    assert not [name for name, text in shown.items() if "%%" in text]
    assert "95% interval" in shown["ask"] and "--claimed 26% --precision 1%" in shown["ask"]
    assert "26%, 5/9" in shown["ask"]           # an option's help: "%%" there is one "%"
