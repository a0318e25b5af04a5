"""What reaches a person (issue 11): help for every flag, tables that fit 80 columns,
progress only on a terminal, seeds one can retype, short reprs, labelled numbers,
your own strategy as module:Class everywhere.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import textwrap

import pytest

from yahtzee_sim import simulate, simulate_turns
from yahtzee_sim.cli import build_parser, main
from yahtzee_sim.patterns import pattern_inclusions, pattern_table
from yahtzee_sim.dice import dice_tables


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


# -- help ------------------------------------------------------------------------------

def test_every_option_of_every_subcommand_has_help():
    missing = []
    for name, sub in _subparsers(build_parser()):
        assert sub.description or name, name
        for action in sub._actions:
            if action.option_strings and not (action.help or "").strip():
                missing.append(f"{name} {'/'.join(action.option_strings)}")
    assert not missing, f"options without help: {missing}"


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 100000)" in out and "(default: keep-largest)" in out and "default: yahtzee)" in out
    assert "module:Class" in out
    assert "(default: None)" not in out and "(default: False)" not in out


# -- width -----------------------------------------------------------------------------

WIDE_COMMANDS = [
    ["rules"], ["strategies"], ["score", "--dice", "33355"], ["odds"], ["odds", "--per-turn", "--boxes"],
    ["simulate", "--games", 300, "--seed", 1], ["turns", "--turns", 3000, "--seed", 1],
    ["extremes", "--rules", "yacht-classic"], ["extremes", "--rules", "yacht-classic", "--kind", "min"],
    ["solve", "--rules", "yacht-classic", "--no-cache"],
    ["policy-value", "--rules", "yacht-classic", "--strategy", "keep-largest"],
    ["verify", "--games", 2000, "--turns", 20000, "--only", "s001"],
    ["distribution", "--rules", "yacht-classic", "--strategy", "greedy"],
    ["head-to-head", "--rules", "yacht-classic", "--players", "greedy", "random", "--exact"],
]


@pytest.mark.parametrize("argv", WIDE_COMMANDS, ids=lambda a: " ".join(map(str, a)))
def test_tables_fit_80_columns(capsys, monkeypatch, argv):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    wide = [line for line in out.splitlines() if len(line) > 80]
    assert not wide, f"{len(wide)} lines wider than 80, e.g. {wide[0]!r}"


# -- what each number is ---------------------------------------------------------------

def test_simulate_labels_rates_and_mean_counts(capsys):
    code, out, _ = run(capsys, "simulate", "--games", 2000, "--seed", 4)
    res = simulate("yahtzee", "keep-largest", 2000, seed=4)
    s = res.summary()
    text = " ".join(out.split())
    assert "share of games with" in text and "mean per game" in text
    assert f"five of a kind rolled at least once {s['five_rolled_rate']:.4f}" in text
    assert f"turns ending in five of a kind {s['five_count_mean']:.4f}" in text
    # the chance is the documented rate, the mean count is the frame's average
    frame = res.to_frame()
    assert s["five_rolled_rate"] == pytest.approx((frame["five_count"] > 0).mean())
    assert s["five_count_mean"] == pytest.approx(frame["five_count"].mean())
    assert s["five_rolled_rate"] < s["five_count_mean"]
    meaning = s.to_frame()["meaning"]
    assert "not a chance" in meaning["five_count_mean"] and "at least one" in meaning["five_rolled_rate"]


def test_pattern_inclusions_follow_the_definitions():
    """'Or better' and 'exactly' come from the rolls, checked here against plain counting."""
    table = pattern_table(dice_tables())
    inc = pattern_inclusions()
    for name, inside in inc.items():
        for other in inside:
            assert (table[name] | ~table[other]).all(), (name, other)  # every `other` roll counts as `name`
    assert inc["four_of_a_kind"] == ["five_of_a_kind"] and inc["small_straight"] == ["large_straight"]
    assert inc["full_house"] == [] and not (table["full_house"] & table["five_of_a_kind"]).any()


def test_odds_and_turns_say_or_better_and_exactly(capsys):
    for argv in (["odds"], ["odds", "--per-turn"], ["turns", "--turns", 2000, "--seed", 1]):
        out = " ".join(run(capsys, *argv)[1].split())
        assert "four_of_a_kind (also counts five_of_a_kind)" in out
        assert "small_straight (also counts large_straight)" in out
        assert "Exactly: five_of_a_kind, full_house" in out
    out = run(capsys, "odds", "--per-turn")[1]
    assert "turns per exact best keeps" not in " ".join(out.split())
    assert "under keep-largest" in out and "best keeps" in out


def test_json_numbers_are_numbers(capsys):
    data = json.loads(run(capsys, "odds", "--per-turn", "--json")[1])
    row = data["one_roll"][0]
    assert row["fraction"] == {"numerator": 1, "denominator": 1296, "value": pytest.approx(1 / 1296)}
    assert isinstance(row["one_in"], float) and isinstance(row["count"], int)
    data = json.loads(run(capsys, "turns", "--turns", 1000, "--seed", 2, "--json")[1])
    assert all(isinstance(r["frequency"], float) for r in data["patterns"])


def test_headings_name_the_rule_set_once(capsys):
    out = run(capsys, "simulate", "--games", 100, "--seed", 1, "--option", "no-joker")[1]
    first = out.splitlines()[0]
    assert first.startswith("Yahtzee (official, forced joker) with no-joker [yahtzee+no-joker] under keep-largest")
    assert first.count("(") == 1


# -- seeds and reprs -------------------------------------------------------------------

def test_a_fresh_seed_is_short_and_reproduces_the_run(capsys):
    data = json.loads(run(capsys, "simulate", "--games", 500, "--json")[1])
    assert 0 <= data["seed"] < 10**9
    again = json.loads(run(capsys, "simulate", "--games", 500, "--seed", data["seed"], "--json")[1])
    assert again["mean"] == data["mean"]
    assert simulate_turns("yacht", "random", 100).seed < 10**9


def test_reprs_are_short():
    res = simulate("yahtzee", "keep-largest", 3000, seed=1)
    assert len(repr(res)) < 200 and "keep-largest" in repr(res) and "mean" in repr(res)
    assert len(repr(res.aggregate)) < 100
    assert len(repr(simulate_turns("yahtzee", "random", 3000, seed=1))) < 200
    assert len(repr(res.summary())) < 1500
    from yahtzee_sim.exact.odds import one_roll_odds
    from yahtzee_sim.exact.turns import per_turn_report

    assert len(repr(one_roll_odds("yahtzee"))) < 120 and len(repr(per_turn_report("yacht"))) < 150


# -- your own strategy -----------------------------------------------------------------

MY_STRATEGY = textwrap.dedent('''
    from yahtzee_sim.strategies import Strategy, best_legal

    class Sixes(Strategy):
        """Holds sixes, fills the box that scores most now."""
        def keep(self, state, rolls, rolls_left, u):
            counts = self.dice.roll_counts[rolls].copy()
            counts[:, :5] = 0
            return self.dice.keep_index_of_counts(counts)

        def box(self, state, rolls, options, u):
            return best_legal(options.gain, options.legal)
''')


def test_module_class_strategies_work_in_simulate_and_policy_value(capsys, tmp_path, monkeypatch):
    (tmp_path / "my_strats.py").write_text(MY_STRATEGY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    data = json.loads(run(capsys, "simulate", "--games", 200, "--seed", 1, "--strategy", "my_strats:Sixes",
                          "--json")[1])
    assert data["strategy"] == "my_strats:Sixes" and data["games"] == 200
    code, out, err = run(capsys, "policy-value", "--rules", "yacht-classic", "--strategy", "my_strats:Sixes",
                         "--json")
    assert code == 0, err
    assert json.loads(out)["expected_score"] > 0
    code, out, err = run(capsys, "simulate", "--games", 10, "--strategy", "my_strats:Nope")
    assert code == 2 and out == "" and err.count("\n") == 1 and "it has: Sixes" in err
    code, out, err = run(capsys, "simulate", "--games", 10, "--strategy", "no_such_module:X")
    assert code == 2 and err.count("\n") == 1 and "cannot import strategy module 'no_such_module'" in err


# -- progress --------------------------------------------------------------------------

class FakeTTY(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def tty_stderr(monkeypatch):
    import yahtzee_sim.progress as progress

    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    return fake


def test_terminal_progress_draws_a_bar_with_phase_and_eta():
    from yahtzee_sim.progress import TerminalProgress

    stream = FakeTTY()
    with TerminalProgress(stream=stream, delay=0, mininterval=0) as bar:
        for i in range(1, 11):
            bar("counting things", i, 10)
    text = stream.getvalue()
    assert "counting things" in text and "9/10" in text and "<00:00" in text  # elapsed<remaining (ETA)


def test_extremes_shows_progress_on_a_terminal(capsys, monkeypatch):
    from yahtzee_sim.exact import extremes

    monkeypatch.setattr(extremes, "_TABLES", {})  # recompute: something to show
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    import yahtzee_sim.progress as progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert main(["extremes", "--rules", "yacht-classic", "--kind", "min"]) == 0
    assert "extreme min of yacht-classic" in fake.getvalue()
    assert "it/s" in fake.getvalue() or "s/it" in fake.getvalue()


@pytest.mark.parametrize("argv", [
    ["extremes", "--rules", "yacht-classic", "--kind", "min", "--json"],
    ["solve", "--rules", "yacht-classic", "--no-cache", "--json"],
])
def test_no_progress_with_json(monkeypatch, capsys, argv):
    from yahtzee_sim.exact import extremes

    monkeypatch.setattr(extremes, "_TABLES", {})
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    import yahtzee_sim.progress as progress

    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert main(argv) == 0
    assert fake.getvalue() == ""
    json.loads(capsys.readouterr().out)


def test_no_progress_when_stderr_is_not_a_terminal(monkeypatch, capsys):
    from yahtzee_sim.exact import extremes
    import yahtzee_sim.progress as progress

    monkeypatch.setattr(extremes, "_TABLES", {})
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert main(["extremes", "--rules", "yacht-classic", "--kind", "min"]) == 0
    assert capsys.readouterr().err == ""


def test_solve_shows_a_heartbeat_until_the_solver_reports(monkeypatch, capsys):
    """A library call without progress= (here a wrapper hiding solve's) still shows its
    phase and the time spent: the CLI's heartbeat fallback."""
    import time

    import yahtzee_sim.exact.solver as solver
    import yahtzee_sim.progress as progress

    real = solver.solve

    def slow_solve(*args, **kwargs):
        time.sleep(0.3)
        return real(*args, **kwargs)

    monkeypatch.setattr(solver, "solve", slow_solve)
    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert main(["solve", "--rules", "yacht-classic", "--no-cache"]) == 0
    assert "solving yacht-classic" in fake.getvalue()


def test_verify_shows_its_phase_on_a_terminal(monkeypatch, capsys):
    """verify shows its phase and the time spent (and each simulation's bar, below)."""
    import yahtzee_sim.progress as progress

    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert main(["verify", "--games", "1000", "--turns", "5000", "--only", "s001-63"]) == 0
    assert "checking the sources' claims" in fake.getvalue() and "elapsed" in fake.getvalue()
    before = fake.getvalue()
    assert main(["verify", "--games", "1000", "--turns", "5000", "--only", "s001-63", "--json"]) == 0
    assert fake.getvalue() == before


def test_simulate_reports_to_a_progress_callback():
    seen = []
    simulate("yacht", "random", 5000, seed=1, batch=1024, progress=lambda *a: seen.append(a))
    assert seen[0] == ("playing games", 0, 5000) and seen[-1] == ("playing games", 5000, 5000)
    assert [done for _, done, _ in seen] == sorted(done for _, done, _ in seen)


def test_simulate_cli_bar_on_a_terminal_only(monkeypatch, capsys):
    import yahtzee_sim.progress as progress

    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    assert main(["simulate", "--games", "3000", "--batch", "1024", "--seed", "1"]) == 0
    assert "playing games" in fake.getvalue() and "games/s" in fake.getvalue()
    before = fake.getvalue()
    assert main(["simulate", "--games", "3000", "--batch", "1024", "--seed", "1", "--json"]) == 0
    assert fake.getvalue() == before


def test_run_shows_each_simulation_with_a_bar_and_eta(monkeypatch, capsys, tmp_path):
    # issue 11 §3: a report run names its spec and shows a bar with ETA per simulation.
    import yahtzee_sim.progress as progress

    fake = FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    spec = tmp_path / "head-to-head.toml"        # the shipped one adds exact work (experiments/exact/)
    spec.write_text('kind = "head-to-head"\nstrategies = ["random", "keep-largest", "greedy", "heuristic", "optimal"]\n'
                    'tables = ["wins", "ranking"]\nplots = ["win-matrix"]\n')
    assert main(["run", str(spec), "--games", "2048", "--out", str(tmp_path)]) == 0
    text = fake.getvalue()
    assert "head-to-head (1/1): playing games" in text and "2048/2048 [00:00<00:00" in text  # elapsed<ETA
    before = text
    assert main(["run", str(spec), "--games", "2048", "--out", str(tmp_path), "--json"]) == 0
    assert fake.getvalue() == before
