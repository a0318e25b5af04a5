"""Fault injection for reports: nothing a user owns is ever lost, nothing half-written is left.

Every way a name becomes a path, every kind of output folder already in the way,
SIGKILL at each step of a report write, a full disk (a monkeypatched write and,
where mounting is allowed, a tiny tmpfs) and tampered spec files. Each case must
end in one line on stderr with exit code 2, or in a complete report; never a
traceback, never a lost file, never a half folder.
"""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.report import Report, write_report
from yahtzee_sim.report import output
from yahtzee_sim.report.output import MARKER, OLD_PREFIX, TMP_PREFIX, clean_stale, write_folder

ROOT = Path(__file__).resolve().parents[1]
TINY_SPEC = 'kind = "strategies"\nstrategies = ["random"]\ngames = 32\nplots = []\n'


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder`` with its bytes (None for folders and links)."""
    out = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        out[rel] = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    return out


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith((TMP_PREFIX, OLD_PREFIX, ".yahtzee-sim-probe")))


def one_line_error(capsys, *needles: str) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle.lower() in err.lower(), err
    return err


@pytest.fixture
def world(tmp_path):
    """An output root with a report the project wrote and a user's folder beside it."""
    out = tmp_path / "reports"
    spec = tmp_path / "keep.toml"
    spec.write_text(TINY_SPEC)
    assert main(["run", str(spec), "--out", str(out)]) == 0
    user = tmp_path / "victim"
    user.mkdir()
    (user / "thesis.tex").write_text("\\chapter{Results} months of work\n")
    (user / "data.bin").write_bytes(bytes(range(256)))
    return tmp_path


# -- 1. path traversal: every place a name becomes a path ---------------------------

BAD_NAMES = ['"../victim"', '"{abs}"', '""', '"."', '".."', '"a/b"', '"../../etc"', '"victim/.."',
             '"' + "x" * 65 + '"', '" "', '"-rf"', '".hidden"', '"a\\u0000b"', '"a\\\\b"', '"rapport-é"',
             "5", "true", '["x"]', "{ a = 1 }"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_spec_name_never_leaves_the_output_root(world, capsys, name):
    name = name.replace("{abs}", str(world / "victim"))
    spec = world / "bad.toml"
    spec.write_text(TINY_SPEC + f"name = {name}\n")
    capsys.readouterr()
    before = snapshot(world)
    assert main(["run", str(spec), "--out", str(world / "reports")]) == 2
    one_line_error(capsys, "bad:")
    assert snapshot(world) == before


@pytest.mark.parametrize("stem", ["my report", ".", "-x", "a.b"])
def test_a_spec_file_name_that_is_not_a_slug_is_refused(tmp_path, capsys, stem):
    spec = tmp_path / f"{stem}.toml"
    spec.write_text(TINY_SPEC)
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    one_line_error(capsys, "name")
    assert not (tmp_path / "out").exists()


def test_verify_never_replaces_a_users_folder(world, capsys):
    before = snapshot(world)
    start = time.perf_counter()
    assert main(["verify", "--out", str(world / "victim")]) == 2  # default size: refused before the work
    assert time.perf_counter() - start < 20
    one_line_error(capsys, "refusing to replace folder", "victim", "not written by yahtzee-sim")
    assert snapshot(world) == before


def test_run_never_replaces_a_users_folder_of_the_same_name(world, capsys):
    spec = world / "victim.toml"
    spec.write_text(TINY_SPEC)
    before = snapshot(world)
    assert main(["run", str(spec), "--out", str(world)]) == 2
    one_line_error(capsys, "refusing to replace folder", "victim")
    assert snapshot(world) == before


def test_a_file_added_to_a_report_folder_keeps_it_from_being_replaced(world, capsys):
    notes = world / "reports" / "keep" / "my-notes.md"
    notes.write_text("my reading of the table\n")
    before = snapshot(world)
    assert main(["run", str(world / "keep.toml"), "--out", str(world / "reports")]) == 2
    one_line_error(capsys, "my-notes.md", "move them away")
    assert snapshot(world) == before
    notes.unlink()
    assert main(["run", str(world / "keep.toml"), "--out", str(world / "reports")]) == 0


@pytest.mark.parametrize("marker", ["not json", '{"made_by": "someone-else", "files": []}', '{"made_by": "yahtzee-sim"}',
                                    "[1, 2]", "[" * 100_000])
def test_a_damaged_or_foreign_marker_is_not_trusted(world, capsys, marker):
    (world / "victim" / MARKER).write_text(marker)
    spec = world / "victim.toml"
    spec.write_text(TINY_SPEC)
    before = snapshot(world)
    assert main(["run", str(spec), "--out", str(world)]) == 2
    one_line_error(capsys, "victim")
    assert snapshot(world) == before


def test_a_marker_that_is_a_symlink_is_not_trusted(world, capsys):
    os.symlink(world / "reports" / "keep" / MARKER, world / "victim" / MARKER)
    (world / "victim.toml").write_text(TINY_SPEC)
    before = snapshot(world)
    assert main(["run", str(world / "victim.toml"), "--out", str(world)]) == 2
    one_line_error(capsys, "victim")
    assert snapshot(world) == before


def test_a_symlink_where_the_report_goes_is_refused(world, capsys):
    os.symlink(world / "victim", world / "reports" / "link")
    (world / "link.toml").write_text(TINY_SPEC)
    before = snapshot(world)
    assert main(["run", str(world / "link.toml"), "--out", str(world / "reports")]) == 2
    one_line_error(capsys, "symbolic link")
    assert snapshot(world) == before


def test_a_file_where_a_folder_is_expected(world, capsys):
    (world / "reports" / "afile").write_text("a user's file")
    (world / "afile.toml").write_text(TINY_SPEC)
    before = snapshot(world)
    assert main(["run", str(world / "afile.toml"), "--out", str(world / "reports")]) == 2
    one_line_error(capsys, "is a file")
    assert main(["run", str(world / "keep.toml"), "--out", str(world / "reports" / "afile")]) == 2
    one_line_error(capsys, "is a file")
    assert main(["verify", "--out", str(world / "reports" / "afile")]) == 2
    one_line_error(capsys, "is a file")
    assert main(["run", str(world / "keep.toml"), "--out", str(world / "reports" / "afile" / "sub")]) == 2
    one_line_error(capsys, "is a file")
    assert snapshot(world) == before


@pytest.mark.parametrize("command", ["run", "verify"])
@pytest.mark.parametrize("out", ["", "/proc/nope", "/proc/nope/deeper"])
def test_an_unusable_out_is_refused_before_any_work(world, capsys, command, out):
    args = ["run", str(world / "keep.toml")] if command == "run" else ["verify"]
    start = time.perf_counter()
    assert main([*args, "--games", "100000", "--out", out]) == 2
    assert time.perf_counter() - start < 20  # 100,000 games would take far longer
    one_line_error(capsys, "output folder")


def test_an_empty_folder_may_be_used(tmp_path):
    (tmp_path / "empty").mkdir()
    assert main(["run", str(_tiny(tmp_path, "empty")), "--out", str(tmp_path)]) == 0
    assert (tmp_path / "empty" / MARKER).is_file()


def test_two_specs_writing_the_same_report_are_refused_before_work(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    (a / "same.toml").write_text(TINY_SPEC)
    (b / "same.toml").write_text(TINY_SPEC)
    assert main(["run", str(a / "same.toml"), str(b / "same.toml"), "--out", str(tmp_path / "out")]) == 2
    one_line_error(capsys, "same")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", ["../evil", "/tmp/evil", "", "..", "a/b"])
def test_table_and_figure_names_never_become_paths_outside(tmp_path, bad):
    for kind in ("table", "figure"):
        rep = Report("demo", "Demo")
        if kind == "table":
            rep.add_table(bad, pd.DataFrame({"x": [1]}))
        else:
            rep.add_figure(bad, lambda fig: None)
        with pytest.raises(ValueError, match=f"{kind} name"):
            write_report(rep, tmp_path / "demo")
        assert list(tmp_path.iterdir()) == []


def test_a_report_name_that_is_a_path_is_refused_by_the_library(tmp_path):
    with pytest.raises(ValueError, match="not a plain name"):
        write_report(Report("../evil", "Evil"), tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


def test_a_read_only_file_system_is_refused_before_work(tmp_path, capsys):
    mnt = _mount_tmpfs(tmp_path / "ro", "ro,size=64k")
    try:
        assert main(["run", str(_tiny(tmp_path, "x")), "--out", str(mnt / "reports")]) == 2
        one_line_error(capsys, "cannot write to output folder", "Read-only file system")
    finally:
        _umount(mnt)


# -- 2. file modes follow the umask --------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_report_folders_and_files_respect_the_umask(tmp_path, mask):
    old = os.umask(mask)
    try:
        assert main(["run", str(_tiny(tmp_path, "modes")), "--out", str(tmp_path / "out")]) == 0
    finally:
        os.umask(old)
    folder = tmp_path / "out" / "modes"
    assert folder.stat().st_mode & 0o777 == 0o777 & ~mask
    for f in folder.iterdir():
        assert f.stat().st_mode & 0o777 == 0o666 & ~mask, f.name


# -- 3. SIGKILL during a write -------------------------------------------------------

def _fill(version: str, delay: float = 0.0, kill_after: int | None = None):
    def fill(tmp: Path) -> None:
        for i, name in enumerate(["a.csv", "b.csv", "c.png", "README.md"]):
            if kill_after is not None and i == kill_after:
                os.kill(os.getpid(), signal.SIGKILL)
            (tmp / name).write_text(f"{version} {name}\n" * 2000)
            if delay:
                time.sleep(delay)
    return fill


def _assert_old_or_new(folder: Path) -> str:
    """The folder is a complete report of exactly one version: never a mix, never half."""
    marker = json.loads((folder / MARKER).read_text())
    names = sorted(p.name for p in folder.iterdir() if p.name != MARKER)
    assert names == marker["files"] == ["README.md", "a.csv", "b.csv", "c.png"]
    versions = {(folder / n).read_text().split(" ", 1)[0] for n in names}
    assert len(versions) == 1 and marker["version"] in versions
    return versions.pop()


def _kill_at(folder: Path, point: str) -> None:
    """In a forked child: write version 'new' and SIGKILL itself at ``point``."""
    def die(*a, **k):
        os.kill(os.getpid(), signal.SIGKILL)

    kill_after = None
    if point == "during-fill":
        kill_after = 2
    elif point == "before-swap":
        output._fsync_tree = die
    elif point == "after-exchange":
        output.shutil.rmtree = die
    elif point in ("between-renames", "after-renames"):
        output._exchange = lambda a, b: False
        if point == "between-renames":
            calls = []
            real = Path.rename

            def rename(self, target):
                calls.append(target)
                if len(calls) == 2:
                    die()
                return real(self, target)

            Path.rename = rename
        else:
            output.shutil.rmtree = die
    write_folder(folder, _fill("new", kill_after=kill_after), {"version": "new"})
    os._exit(0)  # not killed: the point was never reached


@pytest.mark.parametrize("point", ["during-fill", "before-swap", "after-exchange", "between-renames",
                                   "after-renames"])
def test_sigkill_at_every_step_of_a_write_leaves_old_or_new(tmp_path, point):
    folder = tmp_path / "rep"
    write_folder(folder, _fill("old"), {"version": "old"})
    child = multiprocessing.get_context("fork").Process(target=_kill_at, args=(folder, point))
    child.start()
    child.join(30)
    assert child.exitcode == -signal.SIGKILL
    # The next write (its first step) cleans up what the killed one left, and puts an old report
    # a killed swap had set aside back in place.
    clean_stale(tmp_path)
    assert leftovers(tmp_path) == []
    expected = "new" if point in ("after-exchange", "after-renames") else "old"
    assert _assert_old_or_new(folder) == expected
    write_folder(folder, _fill("third"), {"version": "third"})
    assert _assert_old_or_new(folder) == "third" and leftovers(tmp_path) == []


def _write_forever(folder: Path) -> None:
    i = 0
    while True:
        version = f"v{i}"
        write_folder(folder, _fill(version, delay=0.001), {"version": version})
        i += 1


def test_sigkill_at_random_moments_never_leaves_a_half_folder(tmp_path):
    import random

    rng = random.Random(12)
    folder = tmp_path / "rep"
    write_folder(folder, _fill("v-1"), {"version": "v-1"})
    ctx = multiprocessing.get_context("fork")
    for _ in range(12):
        child = ctx.Process(target=_write_forever, args=(folder,))
        child.start()
        time.sleep(rng.uniform(0.005, 0.12))
        os.kill(child.pid, signal.SIGKILL)
        child.join(10)
        assert folder.is_dir()  # with an atomic swap the report is never missing, not even for a moment
        _assert_old_or_new(folder)
    clean_stale(tmp_path)
    assert leftovers(tmp_path) == []


def test_sigkill_of_the_cli_while_it_writes_a_report(tmp_path):
    """End to end: kill ``yahtzee-sim run`` once its temporary folder appears."""
    spec = tmp_path / "kill.toml"
    spec.write_text('kind = "strategies"\nstrategies = ["random", "keep-largest"]\ngames = 64\n')
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "yahtzee_sim", "run", str(spec), "--out", str(out)]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120)
    before = snapshot(out / "kill")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(TMP_PREFIX) for p in out.iterdir()):
        assert proc.poll() is None, "the run ended before it started writing"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    assert snapshot(out / "kill") == before  # identical inputs: the old report, untouched
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120)
    assert leftovers(out) == []
    assert snapshot(out / "kill") == before  # and a rerun gives the same bytes


# -- 4. a full disk ---------------------------------------------------------------------

def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


@pytest.mark.parametrize("where", ["csv", "figure", "readme", "marker"])
def test_a_full_disk_keeps_the_old_report(world, capsys, monkeypatch, where):
    (world / "keep.toml").write_text(TINY_SPEC.replace("plots = []", 'plots = ["histogram"]'))
    if where == "csv":
        monkeypatch.setattr(pd.DataFrame, "to_csv", _no_space)
    elif where == "figure":
        import matplotlib.figure

        monkeypatch.setattr(matplotlib.figure.Figure, "savefig", _no_space)
    else:
        real = Path.write_text
        target = "README.md" if where == "readme" else MARKER

        def write_text(self, *a, **k):
            if self.name == target:
                _no_space()
            return real(self, *a, **k)

        monkeypatch.setattr(Path, "write_text", write_text)
    before = snapshot(world)
    capsys.readouterr()
    assert main(["run", str(world / "keep.toml"), "--out", str(world / "reports")]) == 2
    one_line_error(capsys, "No space left on device", "unchanged")
    assert snapshot(world) == before
    assert leftovers(world / "reports") == []


def test_a_really_full_tmpfs_keeps_the_old_report(tmp_path, capsys):
    mnt = _mount_tmpfs(tmp_path / "small", "size=160k")
    try:
        spec = _tiny(tmp_path, "big")
        assert main(["run", str(spec), "--out", str(mnt)]) == 0
        before = snapshot(mnt)
        spec.write_text(TINY_SPEC.replace("plots = []\n", ""))
        assert main(["run", str(spec), "--out", str(mnt)]) == 2  # four figures do not fit in 160 kB
        one_line_error(capsys, "No space left on device")
        assert snapshot(mnt) == before and leftovers(mnt) == []
    finally:
        _umount(mnt)


# -- 5. tampered spec files ------------------------------------------------------------

TAMPERED = [
    (b"\x00\x01\x02garbage\xff", "not valid TOML"),
    ('kind = "strategies"\n'.encode("utf-16"), "not valid TOML"),
    (b'kind = "strat', "not valid TOML"),
    (b'kind = "strategies"\nx = ' + b"[" * 5000 + b"]" * 5000, "nested too deeply"),
    (b'kind = "strategies"\n# ' + b"x" * (1 << 21), "too large"),
    (b'kind = ["strategies"]\n', "'kind' must be one of"),
    (b'kind = "strategies"\ngames = "many"\n', "games must be a positive integer"),
    (b'kind = "strategies"\ngames = 1.5\n', "games must be a positive integer"),
    (b'kind = "strategies"\nseed = -1\n', "seed must be a non-negative integer"),
    (b'kind = "strategies"\nstrategies = "random"\n', "strategies must be a list"),
    (b'kind = "strategies"\nstrategies = []\n', "strategies must not be empty"),
    (b'kind = "strategies"\nstrategies = ["random", "random"]\n', "more than once"),
    (b'kind = "strategies"\nstrategies = [""]\n', "empty name"),
    (b'kind = "strategies"\nrules = ""\n', "rules must not be empty"),
    (b'kind = "strategies"\ntitle = ""\n', "title must not be empty"),
    (b'kind = "strategies"\nbaseline = ""\n', "baseline must not be empty"),
    (b'kind = "strategies"\nstrategies = ["random", "greedy"]\nbaseline = "optimal"\n', "not among the strategies"),
    (b'kind = "head-to-head"\nstrategies = ["random"]\n', "at least two strategies"),
    (b'kind = "variants"\nrule_sets = []\n', "rule_sets must not be empty"),
    (b'kind = "variants"\nyacht_options = ["nope"]\n', "unknown option 'nope'"),
    (b'kind = "odds"\ncheckpoints = [0]\n', "checkpoints must be positive"),
    (b'kind = "odds"\nstrategy = ""\n', "strategy must not be empty"),
    (b'kind = "strategies"\n[nested]\nkind = 1\n', "unknown key 'nested'"),
    (b'kind = "strategies"\ngames = 9000000000000000000\n', "is too many: at most"),
    (b'kind = "odds"\ngames = 9000000000000000000\n', "is too many: at most"),
    (b'kind = "claims"\nturns = 9000000000000000000\n', "is too many: at most"),
]


@pytest.mark.parametrize("content, message", TAMPERED, ids=[m for _, m in TAMPERED])
def test_a_tampered_spec_gets_one_line_and_writes_nothing(tmp_path, capsys, content, message):
    spec = tmp_path / "spec.toml"
    spec.write_bytes(content)
    assert main(["run", str(spec), "--out", str(tmp_path / "out")]) == 2
    one_line_error(capsys, message)
    assert not (tmp_path / "out").exists()


def test_run_games_beyond_what_a_report_can_hold_is_refused_before_work(tmp_path, capsys):
    assert main(["run", str(_tiny(tmp_path, "big")), "--games", "1e12", "--out", str(tmp_path / "out")]) == 2
    one_line_error(capsys, "is too many: at most")
    assert not (tmp_path / "out").exists()


def test_a_folder_or_a_missing_file_as_spec(tmp_path, capsys):
    assert main(["run", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    one_line_error(capsys, "is not a file")
    assert main(["run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "out")]) == 2
    one_line_error(capsys, "not found")


# -- helpers -----------------------------------------------------------------------------

def _tiny(folder: Path, name: str) -> Path:
    spec = folder / f"{name}.toml"
    spec.write_text(TINY_SPEC)
    return spec


def _mount_tmpfs(where: Path, options: str) -> Path:
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    where.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True,
                         text=True)
    if res.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip() or res.returncode}")
    return where


def _umount(where: Path) -> None:
    subprocess.run(["umount", str(where)], check=False)


def test_cleanup_touches_only_dead_writers_temp_folders(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = tmp_path / f"{TMP_PREFIX}{os.getpid()}-rep.abcd1234"  # a concurrent write of this very process
    gone = tmp_path / f"{TMP_PREFIX}{dead.pid}-rep.abcd1234"
    mine = tmp_path / f"{TMP_PREFIX}notapid"  # named like ours, but not by us
    for folder in (live, gone, mine):
        folder.mkdir()
        (folder / "x.csv").write_text("x")
    assert clean_stale(tmp_path) == [gone]
    assert live.is_dir() and mine.is_dir() and not gone.exists()
