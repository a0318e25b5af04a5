"""Experiments as files, reports as output: every shipped spec runs at a tiny size."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.report import load_spec, parse_spec, run_experiment, write_report

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted((ROOT / "experiments").glob("*.toml"))


def test_every_experiment_of_the_issue_is_shipped():
    assert {p.stem for p in SPECS} >= {"claims", "strategies", "variants", "odds", "head-to-head"}


def _promised_files(report_dir: Path) -> set[str]:
    """Files the README links to: they must all exist."""
    text = (report_dir / "README.md").read_text(encoding="utf-8")
    return set(re.findall(r"\]\(([^)]+\.(?:csv|png|svg))\)", text))


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_spec_runs_tiny_and_writes_every_promised_file(path, tmp_path):
    spec = load_spec(path).scaled(512)
    report = run_experiment(spec)
    out = write_report(report, tmp_path / spec.name)
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# ")
    assert "Reproduce:" in readme and f"seed {spec.seed}" in readme
    promised = _promised_files(out)
    assert promised, "a report links its data"
    for name in promised:
        assert (out / name).is_file(), name
    for table in spec.tables:
        assert any(table.replace("-", "_") in p for p in promised), table
    for plot in spec.plots:
        stem = plot.replace("-", "_")
        assert (out / f"{stem}.png").is_file() and (out / f"{stem}.svg").is_file(), plot


def test_cli_run_writes_report_folder(tmp_path, capsys):
    spec = tmp_path / "mini.toml"
    spec.write_text('kind = "strategies"\nstrategies = ["random", "keep-largest"]\ngames = 256\nplots = []\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "reports")]) == 0
    assert (tmp_path / "reports" / "mini" / "README.md").is_file()
    assert "report written" in capsys.readouterr().out


@pytest.mark.parametrize("text, message", [
    ('kind = "strategies"\ngmaes = 3\n', "unknown key 'gmaes'"),
    ('kind = "nonsense"\n', "'kind' must be one of"),
    ('kind = "strategies"\nstrategies = ["nope"]\n', "unknown strategy 'nope'"),
    ('kind = "strategies"\nrules = "nope"\n', "unknown rule set 'nope'"),
    ('kind = "strategies"\ngames = -1\n', "games must be a positive integer"),
    ('kind = "strategies"\nplots = ["pie"]\n', "unknown plot 'pie'"),
    ('kind = "strategies"\ngames = \n', "not valid TOML"),
])
def test_malformed_spec_gets_one_line_error(tmp_path, capsys, text, message):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    assert main(["run", str(spec), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "bad").exists()


def test_parse_spec_defaults_and_scaling():
    spec = parse_spec({"kind": "head-to-head", "strategies": ["random", "keep-largest"]}, name="x")
    assert spec.tables and spec.plots and spec.scaled(10).games == 10 and spec.games != 10


def test_run_accepts_a_backend_and_gives_the_same_tables(tmp_path, capsys):
    spec = tmp_path / "mini.toml"
    spec.write_text('kind = "strategies"\nstrategies = ["random", "keep-largest"]\ngames = 2048\nplots = []\n')
    tables = []
    for i, backend in enumerate((["--backend", "serial"], ["--backend", "processes", "--jobs", "2"])):
        assert main(["run", str(spec), "--out", str(tmp_path / f"r{i}"), *backend]) == 0
        tables.append((tmp_path / f"r{i}" / "mini" / "summary.csv").read_text())
    assert tables[0] == tables[1]
