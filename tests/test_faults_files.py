"""Fault tests of issue 23 §1: a user's files and work are never lost.

* the clean-up of killed writers' temporary files removes only names proven ours;
* a report file the user edited is never replaced without a word;
* a run killed at any moment, also between renaming its per-game table into place and
  its last checkpoint save, resumes (or is complete), also from a moved folder.

Kills are done by a child process that ends itself with ``os._exit`` at a chosen
point (no timing races), each bounded by a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import yahtzee_sim
from yahtzee_sim import SEED_BLOCK, simulate
from yahtzee_sim.files import atomic_write, clean_stale_temps, temp_file

from forgery import dead_pid

ROOT = Path(yahtzee_sim.__file__).parents[1]
N = 5 * SEED_BLOCK
KILL_TIMEOUT = 120  # seconds: a child that hangs fails the test instead of hanging the suite


# -- temporary files: only ours are removed ------------------------------------------------

USER_NAMES = [".tmp-mynotes1", ".tmp-abcdefgh.csv", ".tmp-k2j4h5g6.json", ".games.csv.tmp-1-abcdefgh.csv",
              ".games.csv.yahtzee-sim-tmp-notapid-abcdefgh.csv", ".games.csv.yahtzee-sim-tmp-0-abcdefgh.csv",
              ".games.csv.yahtzee-sim-tmp-12-abc.csv", ".games.csv.yahtzee-sim-tmp-12-abcdefgh.txt",
              "games.csv.yahtzee-sim-tmp-12-abcdefgh.csv", ".games.csv.yahtzee-sim-tmp-12-abcdefgh.csv.bak",
              ".other.csv.yahtzee-sim-tmp-12-abcdefgh.csv", ".games.csv.yahtzee-sim-tmp-99999999999-abcdefgh.csv"]


@pytest.mark.parametrize("name", USER_NAMES)
def test_a_users_file_is_never_cleaned_up_however_old(tmp_path, name):
    """The reported case (``.tmp-mynotes1``, older than a day) and every near miss of our names."""
    path = tmp_path / name
    path.write_text("my notes")
    old = time.time() - 30 * 24 * 3600
    os.utime(path, (old, old))
    assert clean_stale_temps(tmp_path / "games.csv") == []
    simulate("yacht", "random", 100, seed=1, out=tmp_path / "games.csv")  # the reported command's path
    assert path.read_text() == "my notes"


def test_a_dead_writers_temporary_file_is_removed_and_a_live_ones_kept(tmp_path):
    target = tmp_path / "games.csv"
    dead = tmp_path / f".games.csv.yahtzee-sim-tmp-{dead_pid()}-abcd_123.csv"
    live = tmp_path / f".games.csv.yahtzee-sim-tmp-{os.getpid()}-abcd_123.csv"
    for p in (dead, live):
        p.write_text("half")
    assert clean_stale_temps(target) == [dead]
    assert live.exists()


def test_the_names_we_make_are_the_names_we_clean(tmp_path):
    """The clean-up's pattern is not typed twice: a real temporary name of a killed writer matches it."""
    for target in (tmp_path / "games.csv", tmp_path / "run.json", tmp_path / "noext"):
        code = "import os, sys; from yahtzee_sim.files import temp_file; temp_file(sys.argv[1]); os._exit(9)"
        subprocess.run([sys.executable, "-c", code, str(target)], env={**os.environ, "PYTHONPATH": str(ROOT)},
                       timeout=KILL_TIMEOUT)
        left = [p for p in tmp_path.iterdir() if p.name.startswith(f".{target.name}.")]
        assert len(left) == 1
        assert clean_stale_temps(target) == left and not left[0].exists()
    fd, mine = temp_file(tmp_path / "x.csv")  # this process's own: kept
    os.close(fd)
    assert clean_stale_temps(tmp_path / "x.csv") == [] and mine.exists()
    with atomic_write(tmp_path / "x.csv") as fh:
        fh.write("done")
    assert mine.exists()  # a live writer's file, even our own, is not removed by a neighbour


# -- kills at every moment of a run with a checkpoint and a per-game table --------------------

_KILLER = """
import os, sys
import yahtzee_sim.runner.driver as driver
import yahtzee_sim.runner.checkpoint as checkpoint
import yahtzee_sim.runner.rows as rows
from yahtzee_sim import simulate
checkpoint.CHECKPOINT_EVERY = 0  # saved after every chunk: the kill point decides what is saved
where, at = sys.argv[3], int(sys.argv[4])
if where == "chunk":
    driver.after_chunk = lambda merged: os._exit(9) if merged == at else None
elif where == "before-rename":
    rows.RowSink.finish = lambda self: os._exit(9)
simulate("yacht", "random", {n}, seed=5, batch={b}, checkpoint=sys.argv[1], out=sys.argv[2])
""".format(n=N, b=SEED_BLOCK)


def _killed_run(ckpt: Path, out: Path, where: str, at: int = 0) -> int:
    """Run in a child killed at ``where``; returns the games its checkpoint holds."""
    proc = subprocess.run([sys.executable, "-c", _KILLER, str(ckpt), str(out), where, str(at)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=KILL_TIMEOUT,
                          capture_output=True, text=True)
    assert proc.returncode == 9, proc.stderr
    return json.loads(ckpt.read_text())["done"]


@pytest.fixture(scope="module")
def whole_table(tmp_path_factory) -> bytes:
    out = tmp_path_factory.mktemp("whole") / "games.csv"
    simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, out=out)
    return out.read_bytes()


@pytest.mark.parametrize("at", [1, 3, 5])
def test_a_kill_after_any_chunk_resumes_to_the_same_table(tmp_path, whole_table, at):
    ckpt, out = tmp_path / "run.json", tmp_path / "games.csv"
    assert _killed_run(ckpt, out, "chunk", at) == at * SEED_BLOCK
    simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, checkpoint=ckpt, out=out)
    assert out.read_bytes() == whole_table


def test_a_kill_between_the_last_save_and_the_rename_resumes(tmp_path, whole_table):
    """The reported window: the table's rename and the final checkpoint save."""
    ckpt, out = tmp_path / "run.json", tmp_path / "games.csv"
    assert _killed_run(ckpt, out, "before-rename") == N and not out.exists()
    simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, checkpoint=ckpt, out=out)
    assert out.read_bytes() == whole_table
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.csv", "run.json"]


def test_a_table_renamed_before_an_older_checkpoint_is_picked_up_again(tmp_path, whole_table):
    """An earlier version renamed the table first and saved after: a kill between the two
    left a checkpoint of fewer chunks than the table in place. That table's recorded bytes
    are ours (checked), so the run continues from them instead of giving up."""
    ckpt, out = tmp_path / "run.json", tmp_path / "games.csv"
    assert _killed_run(ckpt, out, "chunk", 2) == 2 * SEED_BLOCK
    partial = tmp_path / ".games.csv.partial"
    partial.rename(out)  # the layout that kill left behind
    simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, checkpoint=ckpt, out=out)
    assert out.read_bytes() == whole_table and not partial.exists()


def test_a_table_that_is_not_ours_is_not_taken_for_the_partial_one(tmp_path):
    ckpt, out = tmp_path / "run.json", tmp_path / "games.csv"
    assert _killed_run(ckpt, out, "chunk", 2) == 2 * SEED_BLOCK
    (tmp_path / ".games.csv.partial").unlink()
    out.write_text("a user's table\n")
    with pytest.raises(ValueError, match="does not match its checkpoint"):
        simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, checkpoint=ckpt, out=out)
    assert out.read_text() == "a user's table\n"


def test_a_moved_folder_resumes(tmp_path, whole_table):
    """The checkpoint stores the table's path relative to itself, not an absolute one."""
    first = tmp_path / "first"
    first.mkdir()
    assert _killed_run(first / "run.json", first / "games.csv", "chunk", 2) == 2 * SEED_BLOCK
    assert not os.path.isabs(json.loads((first / "run.json").read_text())["params"]["out"])
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(first), str(moved))
    simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, checkpoint=moved / "run.json",
             out=moved / "games.csv")
    assert (moved / "games.csv").read_bytes() == whole_table


def test_a_run_given_relative_paths_resumes_from_another_working_folder(tmp_path, monkeypatch, whole_table):
    work = tmp_path / "work"
    work.mkdir()
    assert _killed_run(work / "run.json", work / "games.csv", "chunk", 1) == SEED_BLOCK
    monkeypatch.chdir(tmp_path)
    simulate("yacht", "random", N, seed=5, batch=SEED_BLOCK, checkpoint="work/run.json", out="work/games.csv")
    assert (work / "games.csv").read_bytes() == whole_table


# -- report files the user edited are the user's ---------------------------------------------

def _report(folder: Path, version: str, extra: dict | None = None) -> None:
    from yahtzee_sim.report.output import write_folder

    def fill(tmp: Path) -> None:
        (tmp / "README.md").write_text(f"# report {version}\n")
        (tmp / "table.csv").write_text(f"x\n{version}\n")
        (tmp / "figure.png").write_bytes(b"\x89PNG" + version.encode())
    write_folder(folder, fill, {"version": version, **(extra or {})})


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


EDITS = {
    "readme-appended": ("README.md", lambda b: b + b"my note\n"),
    "readme-one-byte": ("README.md", lambda b: b[:-2] + b"X\n"),
    "readme-emptied": ("README.md", lambda b: b""),
    "csv-edited": ("table.csv", lambda b: b.replace(b"x", b"y")),
    "figure-replaced": ("figure.png", lambda b: b"\x89PNG my own figure"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_report_file_is_never_replaced(tmp_path, edit):
    from yahtzee_sim.report.output import check_replaceable

    folder = tmp_path / "rep"
    _report(folder, "one")
    name, change = EDITS[edit]
    (folder / name).write_bytes(change((folder / name).read_bytes()))
    before = _snapshot(folder)
    with pytest.raises(ValueError, match=f"refusing to replace report folder .*{name} changed since yahtzee-sim"):
        check_replaceable(folder)
    with pytest.raises(ValueError, match="an edit would be lost"):
        _report(folder, "two")
    assert _snapshot(folder) == before
    # the way out the message gives: move the changed file away, and the report is written again
    (folder / name).rename(tmp_path / name)
    _report(folder, "two")
    assert (folder / "README.md").read_text() == "# report two\n"
    assert (tmp_path / name).read_bytes() == before[name]


def test_an_edit_undone_byte_for_byte_lets_the_report_be_replaced(tmp_path):
    folder = tmp_path / "rep"
    _report(folder, "one")
    original = (folder / "README.md").read_bytes()
    (folder / "README.md").write_bytes(original + b"note")
    (folder / "README.md").write_bytes(original)
    _report(folder, "two")
    assert (folder / "README.md").read_text() == "# report two\n"


def test_a_marker_of_an_earlier_version_protects_files_touched_after_it(tmp_path):
    """A marker without checksums (earlier versions): a file modified after the marker is an edit."""
    from yahtzee_sim.report.output import MARKER, check_replaceable

    folder = tmp_path / "rep"
    _report(folder, "one")
    marker = json.loads((folder / MARKER).read_text())
    del marker["sha256"]
    (folder / MARKER).write_text(json.dumps(marker))
    past = time.time() - 3600
    os.utime(folder / MARKER, (past, past))
    for p in folder.iterdir():
        if p.name != MARKER:
            os.utime(p, (past - 10, past - 10))
    check_replaceable(folder)  # untouched since: replaceable
    (folder / "README.md").write_text("# my edit\n")
    with pytest.raises(ValueError, match="README.md changed since"):
        check_replaceable(folder)


def test_run_refuses_before_any_work_when_the_user_edited_the_readme(tmp_path, capsys):
    from yahtzee_sim.cli import main

    spec = tmp_path / "mine.toml"
    spec.write_text('kind = "strategies"\nstrategies = ["random"]\ngames = 32\nplots = []\n')
    out = tmp_path / "reports"
    assert main(["run", str(spec), "--out", str(out)]) == 0
    readme = out / "mine" / "README.md"
    readme.write_text(readme.read_text() + "\nMy conclusions.\n")
    before = _snapshot(out / "mine")
    capsys.readouterr()
    assert main(["run", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "README.md changed since" in err, err
    assert _snapshot(out / "mine") == before


def test_the_committed_reports_record_their_files_as_written():
    """Every committed report folder can be regenerated in place (nothing in it counts as edited)."""
    from yahtzee_sim.report.output import MARKER, check_replaceable

    folders = sorted(p.parent for p in (ROOT / "reports").glob(f"*/{MARKER}"))
    if not folders:
        pytest.skip("no committed reports in this checkout")
    for folder in folders:
        check_replaceable(folder)


# -- report folders: only our own abandoned temporary folders are removed -----------------------

def test_report_clean_up_touches_only_abandoned_folders_named_as_ours(tmp_path):
    from yahtzee_sim.report.output import OLD_PREFIX, TMP_PREFIX, clean_stale

    dead = dead_pid()
    ours = [tmp_path / f"{TMP_PREFIX}{dead}-claims.ab12cd34", tmp_path / f"{OLD_PREFIX}{dead}-strategies.x"]
    users = [tmp_path / f"{TMP_PREFIX}notes", tmp_path / f"{TMP_PREFIX}{dead}-claims",          # no random part
             tmp_path / f"{TMP_PREFIX}{os.getpid()}-claims.ab12cd34",                            # a live writer's
             tmp_path / f"{TMP_PREFIX}0-claims.ab12cd34", tmp_path / f"x{TMP_PREFIX}{dead}-a.ab12cd34",
             tmp_path / f"{OLD_PREFIX}{dead}-strategies.y"]
    old = time.time() - 30 * 24 * 3600
    for folder in ours + users:
        folder.mkdir()
        (folder / "thesis.tex").write_text("mine")
        os.utime(folder, (old, old))
    removed = clean_stale(tmp_path)
    assert sorted(removed) == sorted(ours)
    assert all((f / "thesis.tex").read_text() == "mine" for f in users)
