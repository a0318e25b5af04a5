"""``yahtzee-sim cache`` (exact/cache_files.py, cli/cache.py): every writer's file name is
read back as its rule set and kind; remove deletes what is named and nothing else;
a bad name is one line with exit code 2 and removes nothing."""

from __future__ import annotations

import json

import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.exact import cache as _cache
from yahtzee_sim.exact import cache_files as CF
from yahtzee_sim.rules import get_rules


def _writers_names(tmp_path):
    """(file name, rules key, kind) as each module that writes the cache names its files."""
    from yahtzee_sim.exact.decisions import decisions_cache_path
    from yahtzee_sim.exact.distribution import _cache_path as distribution_path
    from yahtzee_sim.exact.events import _cache_table as events_table
    from yahtzee_sim.exact.risk import risk_cache_path
    from yahtzee_sim.exact.solver import cache_path
    from yahtzee_sim.exact.target import target_cache_path

    yacht = get_rules("yacht", ["fill-in-order", "no-bonus"])
    yahtzee = get_rules("yahtzee-free-joker")
    return [
        (cache_path(yacht, "float64", cache_dir=tmp_path).name, yacht.key, "values"),
        (cache_path(yahtzee, cache_dir=tmp_path).name, yahtzee.key, "values"),
        (decisions_cache_path(yahtzee, cache_dir=tmp_path).name, yahtzee.key, "decisions"),
        (decisions_cache_path(yahtzee, "risk", -0.05, cache_dir=tmp_path).name, yahtzee.key, "risk"),
        (risk_cache_path(yacht, 1e-05, cache_dir=tmp_path).name, yacht.key, "risk"),
        (target_cache_path(yahtzee, 300, cache_dir=tmp_path).name, yahtzee.key, "target"),
        (distribution_path(yacht, "keep-largest", cache_dir=tmp_path).name, yacht.key, "distribution"),
        (events_table(yahtzee, "optimal", "", tmp_path).path.name, yahtzee.key, "events"),
    ]


def test_every_writers_file_name_reads_back_as_its_rule_set_and_kind(tmp_path):
    for name, key, kind in _writers_names(tmp_path):
        assert CF._classify(name)[:2] == (key, kind), name
    assert CF._classify("notes.npz")[1] == "other"


def test_the_file_names_are_those_of_earlier_versions(tmp_path):
    """Every writer names its files through one helper (exact/cache.py ``table_path``):
    the names must stay those earlier versions wrote (spelled out here as they were),
    else every user's cached tables would be recomputed."""
    from yahtzee_sim.exact.decisions import DECISIONS_VERSION, decisions_cache_path
    from yahtzee_sim.exact.distribution import DIST_VERSION
    from yahtzee_sim.exact.distribution import _cache_path as distribution_path
    from yahtzee_sim.exact.risk import RISK_VERSION, risk_cache_path
    from yahtzee_sim.exact.solver import SOLVER_VERSION, cache_path, rules_fingerprint
    from yahtzee_sim.exact.target import TARGET_VERSION, target_cache_path
    from yahtzee_sim.strategies.play_to_win import MOMENTS_VERSION, _moments_file

    r = get_rules("yacht", ["fill-in-order", "no-bonus"])
    head = f"{r.key}-{rules_fingerprint(r)}"
    assert head.startswith("yacht+") and len(rules_fingerprint(r)) == 16
    pairs = [
        (cache_path(r, "float64", tmp_path), f"{head}-float64-v{SOLVER_VERSION}.npz"),
        (decisions_cache_path(r, cache_dir=tmp_path), f"{head}-decisions-v{DECISIONS_VERSION}.npz"),
        (decisions_cache_path(r, "risk", -0.05, tmp_path), f"{head}-risk-theta-0.05-decisions-v{DECISIONS_VERSION}.npz"),
        (risk_cache_path(r, 0.02, tmp_path), f"{head}-risk-theta0.02-v{RISK_VERSION}.npz"),
        (target_cache_path(r, 300, cache_dir=tmp_path), f"{head}-target-float32-v{TARGET_VERSION}-max300.npz"),
        (distribution_path(r, "keep-largest", tmp_path), f"{head}-distribution-keep-largest-v{DIST_VERSION}.npz"),
    ]
    for path, name in pairs:
        assert path.parent == tmp_path and path.name == name
    moments = _moments_file(r, 0.02)[0]
    assert moments.parent == _cache.cache_dir() and moments.name == f"{head}-risk-theta0.02-moments-v{MOMENTS_VERSION}.npz"


def test_the_command_line_names_the_librarys_kinds():
    from yahtzee_sim.cli import build_parser

    p = build_parser()
    sub = next(a for a in p._actions if getattr(a, "choices", None) and "cache" in a.choices).choices["cache"]
    kind_help = next(a.help for a in sub._actions if "--kind" in a.option_strings)
    assert kind_help.endswith(", ".join(CF.KINDS) + "; repeatable")


@pytest.fixture
def filled(tmp_path, monkeypatch):
    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    sizes = {}
    for i, (name, _, _) in enumerate(_writers_names(tmp_path)):
        (tmp_path / name).write_bytes(b"x" * (100 + i))
        sizes[name] = 100 + i
    (tmp_path / "notes.npz").write_bytes(b"y")
    (tmp_path / ".yahtzee-1234-tmp.npz").write_bytes(b"z")       # an unfinished write: not listed
    return tmp_path, sizes


def test_cache_lists_rule_set_kind_size_and_age(filled, capsys):
    _, sizes = filled
    assert main(["cache", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["total_bytes"] == sum(sizes.values()) + 1
    assert sorted(f["file"].rsplit("/", 1)[-1] for f in out["files"]) == sorted([*sizes, "notes.npz"])
    assert all(f["age_seconds"] >= 0 for f in out["files"])
    assert main(["cache"]) == 0
    text = capsys.readouterr().out
    assert "yacht+fill-in-order+no-bonus" in text and "decisions" in text
    assert f"{len(sizes) + 1} files" in text          # the writers' files and notes.npz, not the unfinished one


def test_remove_deletes_what_is_named_and_nothing_else(filled, capsys):
    folder, sizes = filled
    assert main(["cache", "remove", "--rules", "yahtzee-free-joker", "--kind", "decisions"]) == 0
    left = {p.name for p in folder.iterdir()}
    gone = {n for n in sizes if n not in left}
    assert [CF._classify(n)[1] for n in gone] == ["decisions"]
    assert "1 file removed" in capsys.readouterr().out
    assert main(["cache", "remove", "--rules", "yacht"]) == 0             # the name: every option set
    assert not any(CF._classify(p.name)[0].startswith("yacht") for p in folder.iterdir())
    assert main(["cache", "remove", "--all"]) == 0
    assert [p.name for p in folder.iterdir()] == [".yahtzee-1234-tmp.npz"]


@pytest.mark.parametrize("argv, says", [
    (["cache", "remove", "--rules", "yatzy"], "cached rule sets: yacht+fill-in-order+no-bonus, yahtzee-free-joker"),
    (["cache", "remove", "--kind", "tables"], "valid kinds: values, decisions, target, distribution, events, risk, other"),
    (["cache", "remove"], "--rules NAME, --kind KIND or --all"),
    (["cache", "--kind", "values"], "name what to remove"),
])
def test_bad_names_are_one_line_and_remove_nothing(filled, capsys, argv, says):
    folder, _ = filled
    before = sorted(p.name for p in folder.iterdir())
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err
    assert sorted(p.name for p in folder.iterdir()) == before
