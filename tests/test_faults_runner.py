"""Fault injection on runs (issue 12 §2 and §4): tampered and damaged checkpoints, a full
disk, killed writers, and the bounds on workers and game counts.

The promise: a checkpoint that is not exactly what this run wrote is refused in one
line (exit 2) with the advice to delete it, and is left as it was; a full disk stops
the run in one line and keeps the earlier work; a killed writer's temporary files are
removed by the next run. (Report paths are tests/test_faults.py.) Over 600 lines: each
fault needs its own tampered file and its own check of what was left on disk.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import yahtzee_sim
import yahtzee_sim.runner.driver as driver
from yahtzee_sim import SEED_BLOCK, simulate, simulate_turns
from yahtzee_sim.cli import main
from yahtzee_sim.files import clean_stale_temps

from forgery import dead_pid, forge_checkpoint

ROOT = Path(yahtzee_sim.__file__).parents[1]
N = 6 * SEED_BLOCK  # six chunks of one seed block
ARGS = ["simulate", "--rules", "yacht", "--strategy", "random", "--games", str(N), "--seed", "17",
        "--batch", str(SEED_BLOCK), "--json"]


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yahtzee-sim: error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def json_result(capsys, *argv) -> dict:
    code, out, err = run_cli(capsys, *argv)
    assert code == 0, err
    data = json.loads(out)
    data.pop("seconds")
    return data


def interrupt_after(monkeypatch, k: int) -> None:
    def hook(merged):
        if merged == k:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", hook)


@pytest.fixture
def partial(tmp_path, monkeypatch, capsys):
    """A checkpoint of a run stopped after 2 of its 6 chunks, and the uninterrupted answer."""
    full = json_result(capsys, *ARGS)
    ckpt = tmp_path / "run.json"
    interrupt_after(monkeypatch, 2)
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt)
    assert code == 130 and "interrupted after 2,048 of 6,144 games" in err
    monkeypatch.setattr(driver, "after_chunk", None)
    return ckpt, full


def temp_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if "tmp-" in p.name)


# -- tampered and damaged checkpoints ------------------------------------------------------

def test_resume_after_interrupt_matches(partial, capsys):
    ckpt, full = partial
    assert json_result(capsys, *ARGS, "--checkpoint", ckpt) == full


def _shift_a_game(data):  # one game moved from its score to 30 points more: the mean changes
    hist = data["value"]["total_hist"]
    s = next(i for i, v in enumerate(hist) if v)
    hist[s] -= 1
    hist[s + 30] += 1


TAMPERING = {
    # plain edits (the checksum no longer matches)
    "more games": (False, lambda d: d.update(done=d["done"] + 1000), "checksum"),
    "edited histogram": (False, _shift_a_game, "checksum"),
    "chunk bookkeeping": (False, lambda d: d.update(chunks_below=5), "checksum"),
    # forged: the checksum recomputed, so the consistency checks must catch it
    "forged mean": (True, _shift_a_game, "the totals do not add up"),
    "forged negative count": (True, lambda d: d["value"]["five_count_hist"].__setitem__(0, -5),
                              "negative count"),
    "forged done": (True, lambda d: d.update(done=d["done"] + SEED_BLOCK),
                    "done is 3,072 but the completed chunks hold 2,048 games"),
    "forged chunks": (True, lambda d: d.update(chunks_below=4), "completed chunks hold 4,096 games"),
    "forged extra chunk": (True, lambda d: d.update(chunks_extra=[2]), "chunks_extra"),
    "forged chunk out of range": (True, lambda d: d.update(chunks_extra=[99]), "out of range"),
    "forged float count": (True, lambda d: d.update(done=2048.0), "done is not an integer"),
    "forged huge count": (True, lambda d: d["value"]["total_hist"].__setitem__(0, 10**30),
                          "too large"),
    "forged games param": (True, lambda d: d["params"].update(n=3_100_000),
                           "belongs to another run (n 3100000 there, 6144 here)"),
    "forged missing field": (True, lambda d: d["value"].pop("upper_hist"), "has no upper_hist"),
    "forged wrong shape": (True, lambda d: d["value"].update(upper_hist=[1, 2, 3]), "shape"),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_tampered_checkpoint_is_refused_and_kept(partial, capsys, case):
    ckpt, _ = partial
    forged, edit, needle = TAMPERING[case]
    if forged:
        forge_checkpoint(ckpt, edit)
    else:
        data = json.loads(ckpt.read_text())
        edit(data)
        ckpt.write_text(json.dumps(data))
    before = ckpt.read_bytes()
    code, out, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt)
    one_line_error(code, err, needle, str(ckpt))
    if "another run" not in needle:
        assert "delete it" in err
    assert out == ""
    assert ckpt.read_bytes() == before  # never overwritten by the refused run
    assert temp_files(ckpt.parent) == []


DAMAGE = {
    "empty": b"",
    "truncated": None,  # the first half of the real file
    "binary": bytes(range(256)),
    "not an object": b"[1, 2, 3]",
    "deep nesting": b"[" * 200_000 + b"]" * 200_000,
    "deep nesting in the value": None,
    "huge integer": b'{"format": "yahtzee-sim checkpoint", "version": 3, "done": 1' + b"0" * 5000 + b"}",
    "infinity": b'{"format": "yahtzee-sim checkpoint", "version": 3, "done": 1e999, "checksum": "x"}',
    "nan": b'{"format": "yahtzee-sim checkpoint", "version": 3, "done": NaN, "checksum": "x"}',
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_damaged_checkpoint_gives_one_line(partial, capsys, case):
    ckpt, _ = partial
    content = DAMAGE[case]
    if case == "truncated":
        content = ckpt.read_bytes()[: len(ckpt.read_bytes()) // 2]
    elif case == "deep nesting in the value":
        text = ckpt.read_text()
        data = json.loads(text)
        data["value"]["upper_hist"] = "@"
        content = json.dumps(data).replace('"@"', "[" * 100_000 + "]" * 100_000).encode()
    ckpt.write_bytes(content)
    code, out, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt)
    one_line_error(code, err, "is not a yahtzee-sim checkpoint or is damaged", "delete it")
    assert ckpt.read_bytes() == content


def test_checkpoint_of_an_older_format_is_refused(partial, capsys):
    ckpt, _ = partial
    forge_checkpoint(ckpt, lambda d: d.update(version=1))
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt)
    one_line_error(code, err, "format version 1", "delete it")


def test_checkpoint_that_is_a_folder(tmp_path, capsys):
    (tmp_path / "c.json").mkdir()
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", tmp_path / "c.json")
    one_line_error(code, err, "is a folder")


def test_forged_turns_checkpoint_is_refused(tmp_path, monkeypatch):
    ckpt = tmp_path / "turns.json"
    interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        simulate_turns("yacht", "random", 5000, seed=2, batch=SEED_BLOCK, checkpoint=ckpt)
    monkeypatch.setattr(driver, "after_chunk", None)
    forge_checkpoint(ckpt, lambda d: d["value"].__setitem__(0, d["value"][0] + 1))
    with pytest.raises(ValueError, match="the roll counts hold 2,049 turns, not 2,048"):
        simulate_turns("yacht", "random", 5000, seed=2, batch=SEED_BLOCK, checkpoint=ckpt)


@pytest.mark.parametrize("rules", yahtzee_sim.rule_names())
def test_real_aggregates_pass_the_consistency_checks(rules):
    """The checks are exact identities of the engine's bookkeeping: real runs always pass them."""
    r = yahtzee_sim.get_rules(rules)
    for strategy in ("random", "keep-largest"):
        simulate(r, strategy, 3000, seed=5).aggregate.check(r, 3000)


# -- full disk ----------------------------------------------------------------------------

def _fail_writes_after(monkeypatch, k: int) -> list[int]:
    """Checkpoint writes after the first ``k`` raise ENOSPC, as on a full disk."""
    import yahtzee_sim.runner.checkpoint as checkpoint

    calls = [0]
    real_dump = json.dump

    class FullDiskJson:
        def __getattr__(self, name):
            return getattr(json, name)

        @staticmethod
        def dump(obj, fh, **kwargs):
            calls[0] += 1
            if calls[0] > k:
                fh.write("{\"partial")  # some bytes made it before the disk filled up
                raise OSError(errno.ENOSPC, "No space left on device")
            real_dump(obj, fh, **kwargs)

    monkeypatch.setattr(checkpoint, "json", FullDiskJson())
    return calls


def test_full_disk_during_checkpoint_keeps_earlier_work(partial, capsys, monkeypatch):
    ckpt, full = partial
    before = ckpt.read_bytes()
    _fail_writes_after(monkeypatch, 0)
    code, out, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt)
    one_line_error(code, err, "no space left on device", "keeps the 2,048 games saved before")
    assert ckpt.read_bytes() == before and temp_files(ckpt.parent) == []
    monkeypatch.undo()
    assert json_result(capsys, *ARGS, "--checkpoint", ckpt) == full


def test_full_disk_on_the_first_checkpoint(tmp_path, capsys, monkeypatch):
    _fail_writes_after(monkeypatch, 0)
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", tmp_path / "c.json")
    one_line_error(code, err, "no space left on device", "nothing was saved")
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MB tmpfs (needs root and permission to mount; skipped otherwise)."""
    where = tmp_path / "disk"
    where.mkdir()
    if sys.platform != "linux" or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path, leave: int) -> None:
    stat = os.statvfs(disk)
    free = stat.f_bavail * stat.f_frsize
    with open(disk / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, free - leave))


def test_real_full_disk_during_checkpoint(small_disk, capsys, monkeypatch):
    ckpt = small_disk / "run.json"
    interrupt_after(monkeypatch, 2)
    assert run_cli(capsys, *ARGS, "--checkpoint", ckpt)[0] == 130
    monkeypatch.setattr(driver, "after_chunk", None)
    before = ckpt.read_bytes()
    _fill(small_disk, leave=len(before) // 4)
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt)
    one_line_error(code, err, "no space left on device", "keeps the 2,048 games saved before")
    assert ckpt.read_bytes() == before and temp_files(small_disk) == []
    (small_disk / "filler").unlink()
    full = json_result(capsys, *ARGS)
    assert json_result(capsys, *ARGS, "--checkpoint", ckpt) == full


def test_real_full_disk_during_out(small_disk, capsys):
    out = small_disk / "games.csv"
    code, _, err = run_cli(capsys, *ARGS[:-1], "--games", "40000", "--out", out)
    one_line_error(code, err, "no space left on device", str(out))
    assert sorted(p.name for p in small_disk.iterdir()) == []


# -- killed writers ------------------------------------------------------------------------

def test_stale_temporary_files_are_removed(tmp_path):
    # issue 23 §1: only names proven ours (the project's prefix and a dead writer's pid)
    # are removed; the ".tmp-" + 8 characters of earlier versions is a pattern a user's
    # own file can match, and is left alone however old.
    target = tmp_path / "run.json"
    dead = tmp_path / f".run.json.yahtzee-sim-tmp-{dead_pid()}-abc12345.json"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        alive = tmp_path / f".run.json.yahtzee-sim-tmp-{sleeper.pid}-def45678.json"
        legacy_old = tmp_path / ".tmp-k2j4h5g6.json"
        legacy_new = tmp_path / ".tmp-a1b2c3d4.json"
        others = [tmp_path / ".tmp-notes.txt", tmp_path / ".other.json.yahtzee-sim-tmp-1-x.json",
                  tmp_path / "run.json.bak", tmp_path / f".run.json.tmp-{dead_pid()}-abc12345.json"]
        for p in (dead, alive, legacy_old, legacy_new, *others):
            p.write_text("x")
        day_ago = time.time() - 2 * 24 * 3600
        for p in (legacy_old, alive):
            os.utime(p, (day_ago, day_ago))
        removed = clean_stale_temps(target)
        assert sorted(p.name for p in removed) == [dead.name]
        assert all(p.exists() for p in (alive, legacy_old, legacy_new, *others))
    finally:
        sleeper.kill()
        sleeper.wait()


def test_killed_checkpoint_write_is_cleaned_by_the_next_run(tmp_path, capsys):
    """A writer killed between creating its temporary file and the rename leaves it behind."""
    ckpt = tmp_path / "run.json"
    code = ("import os, sys; from yahtzee_sim.files import temp_file; "
            "fd, tmp = temp_file(sys.argv[1]); os.write(fd, b'x' * 100000); os._exit(9)")
    subprocess.run([sys.executable, "-c", code, str(ckpt)], env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert len(temp_files(tmp_path)) == 1
    json_result(capsys, *ARGS, "--checkpoint", ckpt)
    assert temp_files(tmp_path) == [] and ckpt.exists()


def test_kill_9_then_resume(tmp_path, capsys):
    """SIGKILL at a random moment of a checkpointed CLI run: the file is whole, the resume exact."""
    ckpt = tmp_path / "run.json"
    args = ["simulate", "--rules", "yatzy", "--strategy", "keep-largest", "--games", "120000", "--seed", "3",
            "--batch", "1024", "--json", "--checkpoint", str(ckpt)]
    proc = subprocess.Popen([sys.executable, "-m", "yahtzee_sim", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 60
    while not ckpt.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    saved = json.loads(ckpt.read_text())  # whole: written atomically
    assert 0 < saved["done"] <= 120_000
    resumed = json_result(capsys, *args)
    assert resumed == json_result(capsys, *args[:-2])
    assert temp_files(tmp_path) == []


def test_failing_run_saves_only_a_consistent_checkpoint(tmp_path):
    """A strategy error midway: the saved chunks are the completed ones, and they load."""
    from yahtzee_sim.strategies import Strategy

    class BreaksLater(Strategy):
        name = "breaks-later"

        def keep(self, state, rolls, rolls_left, u):
            return self.dice.keep_index_of_counts(self.dice.roll_counts[rolls])

        def box(self, state, rolls, options, u):
            if not hasattr(self, "calls"):
                self.calls = 0
            self.calls += 1
            if self.calls > 3 * self.rules.n_boxes:  # the fourth chunk
                return np.full(len(rolls), -1)
            return np.argmax(options.legal, axis=1)

    ckpt = tmp_path / "c.json"
    with pytest.raises(ValueError, match="illegal box"):
        simulate("yacht", BreaksLater(), N, seed=1, batch=SEED_BLOCK, checkpoint=ckpt)
    saved = json.loads(ckpt.read_text())
    assert saved["done"] == 3 * SEED_BLOCK and saved["chunks_below"] == 3


# -- bounds: workers, counts that cannot finish ------------------------------------------------

def _spy_backend(monkeypatch, name: str) -> list:
    """Record the worker count the driver gives a backend; play the chunks serially instead."""
    from yahtzee_sim.runner import backends

    seen = []

    def spy(job, ids, workers, *rest):
        seen.append(workers)
        return ((i, backends.run_job_chunk(job, i)[1]) for i in ids)

    monkeypatch.setattr(driver, name, spy)
    return seen


@pytest.mark.parametrize("backend", ["processes", "dask"])
def test_workers_are_capped_at_the_chunks_and_warn_above_the_cores(monkeypatch, capsys, backend):
    from yahtzee_sim.runner.backends import usable_cores

    seen = _spy_backend(monkeypatch, "process_results" if backend == "processes" else "dask_results")
    code, out, err = run_cli(capsys, *ARGS, "--backend", backend, "--jobs", 1000)
    assert code == 0
    assert seen == [6]  # six chunks: six workers at most, not 1000
    assert err.strip() == (f"yahtzee-sim: warning: jobs=1000 is more than the {usable_cores()} cores here: "
                           "the workers share them (no faster, more memory)")
    assert json.loads(out)["games"] == N


def test_no_warning_within_the_cores(monkeypatch, recwarn):
    seen = _spy_backend(monkeypatch, "process_results")
    simulate("yacht", "random", N, seed=1, batch=SEED_BLOCK, backend="processes", jobs=1)
    assert seen == [1] and not [w for w in recwarn if "cores" in str(w.message)]


@pytest.mark.parametrize("games, needles", [
    ("1e30", ["'1e30'", "a float cannot hold exactly", "1000000000000000019884624838656"]),
    ("1e400", ["expected a positive integer, got '1e400'"]),
    ("100000000000000000000000000000", ["1.00e+29 games cannot be counted exactly", "at most"]),
    ("1e20", ["1.00e+20 games cannot be counted exactly"]),
    ("1e15", ["would take about", "years at the", "games/s measured here on 1 worker", "pass fewer games"]),
])
def test_counts_that_cannot_finish_are_refused(capsys, games, needles):
    start = time.perf_counter()
    code, out, err = run_cli(capsys, "simulate", "--rules", "yacht", "--games", games)
    one_line_error(code, err, *needles)
    assert time.perf_counter() - start < 30  # refused up front, after at most a pilot block


def test_a_batch_too_large_for_memory_is_refused(capsys):
    code, out, err = run_cli(capsys, "simulate", "--rules", "yacht", "--games", "10", "--batch", str(10**9))
    one_line_error(code, err, "batch must be at most 4,194,304", "results do not depend on it")
    for run in (simulate, simulate_turns):
        with pytest.raises(ValueError, match="batch must be at most"):
            run("yahtzee", "random", 10, batch=(1 << 22) + 1)


def test_count_limits_in_python():
    with pytest.raises(ValueError, match="cannot be counted exactly"):
        simulate("yahtzee", "random", 10**30)
    with pytest.raises(ValueError, match=r"would take about [\d,]+ years"):
        simulate_turns("yahtzee", "random", 10**18)
    # a whole float is the count the command line's --games 1e3 means; a fraction is refused, not rounded
    assert simulate("yahtzee", "random", 1e3, seed=4).aggregate.n_games == 1000
    with pytest.raises(ValueError, match=r"positive integer \(a float such as 1e5 must be whole\), got 1000.5"):
        simulate("yahtzee", "random", 1000.5)


# -- the Python API checks as the CLI does ------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(backend="dask", scheduler=object()), "scheduler must be a Dask scheduler address"),
    (dict(backend="dask", scheduler=""), "scheduler is empty"),
    (dict(checkpoint=123), "checkpoint must be a file path, got 123"),
    (dict(checkpoint=""), "checkpoint is empty"),
    (dict(out=123), "out must be a file path"),
    (dict(out=""), "out is empty"),
    (dict(out="games.txt"), "out must end in one of .csv, .parquet"),
])
def test_api_bad_run_arguments_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate("yahtzee", "random", 100, seed=1, **kwargs)


@pytest.mark.parametrize("argv, needle", [
    (["--out", ""], "--out is empty"),
    (["--checkpoint", ""], "checkpoint is empty"),
    (["--backend", "dask", "--scheduler", ""], "scheduler is empty"),
])
def test_cli_empty_values_are_refused(capsys, argv, needle):
    code, _, err = run_cli(capsys, *ARGS, *argv)
    one_line_error(code, err, needle)


# -- --out streams rows, also with --checkpoint --------------------------------------------------

def test_streamed_csv_equals_the_frame_in_any_completion_order(tmp_path, monkeypatch):
    """Chunks completing out of order are written in game order: the file is to_frame().to_csv()."""
    import random

    serial = driver.serial_results

    def shuffled(work, ids):
        done = list(serial(work, ids))
        random.Random(3).shuffle(done)
        yield from done

    reference = simulate("yahtzee", "keep-largest", N, seed=4, batch=SEED_BLOCK)
    monkeypatch.setattr(driver, "serial_results", shuffled)
    out = tmp_path / "g.csv"
    res = simulate("yahtzee", "keep-largest", N, seed=4, batch=SEED_BLOCK, out=out)
    assert res.games is None  # streamed to the file, not held
    assert out.read_text() == reference.to_frame().to_csv()
    assert np.array_equal(res.aggregate.total_hist, reference.aggregate.total_hist)


def test_streamed_parquet_equals_the_frame(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    out = tmp_path / "g.parquet"
    simulate("yatzy", "random", N, seed=2, batch=2 * SEED_BLOCK, out=out)
    reference = simulate("yatzy", "random", N, seed=2).to_frame()
    pd.testing.assert_frame_equal(pd.read_parquet(out), reference)


def test_out_with_checkpoint_resumes_to_the_same_file(tmp_path, monkeypatch, capsys):
    ckpt, out = tmp_path / "run.json", tmp_path / "g.csv"
    json_result(capsys, *ARGS, "--out", tmp_path / "ref.csv")
    interrupt_after(monkeypatch, 2)
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    assert code == 130
    assert not out.exists()  # no partial table under the final name
    partial = tmp_path / ".g.csv.partial"
    assert partial.exists()
    with open(partial, "ab") as fh:
        fh.write(b"2048,17,3,4")  # half a chunk written when the run was killed
    monkeypatch.setattr(driver, "after_chunk", None)
    json_result(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    assert out.read_bytes() == (tmp_path / "ref.csv").read_bytes()
    assert not partial.exists() and temp_files(tmp_path) == []
    # the finished checkpoint answers again without playing, and leaves the table alone
    json_result(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    assert out.read_bytes() == (tmp_path / "ref.csv").read_bytes()


def test_edited_partial_table_is_refused(tmp_path, monkeypatch, capsys):
    ckpt, out = tmp_path / "run.json", tmp_path / "g.csv"
    interrupt_after(monkeypatch, 2)
    assert run_cli(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)[0] == 130
    monkeypatch.setattr(driver, "after_chunk", None)
    partial = tmp_path / ".g.csv.partial"
    text = partial.read_text()
    partial.write_text(text.replace("\n1,", "\n1,9", 1))
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    one_line_error(code, err, "does not match its checkpoint", "delete both")
    partial.unlink()
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    one_line_error(code, err, "is gone", "delete the checkpoint")
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt, "--out", tmp_path / "other.csv")
    one_line_error(code, err, "belongs to another run", "out ")


def test_parquet_with_checkpoint_is_refused_before_work(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", tmp_path / "c.json", "--out", tmp_path / "g.parquet")
    one_line_error(code, err, "cannot be resumed from a checkpoint", ".csv")
    assert list(tmp_path.iterdir()) == []


def test_full_disk_during_out_with_checkpoint_keeps_both(tmp_path, monkeypatch, capsys):
    from yahtzee_sim.runner import rows

    ckpt, out = tmp_path / "run.json", tmp_path / "g.csv"
    calls = [0]

    class FillsUp:
        """The table's file handle: the fourth chunk's write finds the disk full halfway."""

        def __init__(self, fh):
            self.fh = fh

        def write(self, data):
            calls[0] += 1
            if calls[0] == 4:
                self.fh.write(data[: len(data) // 2])
                raise OSError(errno.ENOSPC, "No space left on device")
            return self.fh.write(data)

        def __getattr__(self, name):
            return getattr(self.fh, name)

    monkeypatch.setattr(rows, "open", lambda *a, **k: FillsUp(open(*a, **k)), raising=False)
    code, _, err = run_cli(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    one_line_error(code, err, "no space left on device", "keep the chunks written before")
    assert json.loads(ckpt.read_text())["done"] == 3 * SEED_BLOCK
    monkeypatch.undo()
    json_result(capsys, *ARGS, "--checkpoint", ckpt, "--out", out)
    json_result(capsys, *ARGS, "--out", tmp_path / "ref.csv")
    assert out.read_bytes() == (tmp_path / "ref.csv").read_bytes()


@pytest.mark.slow
def test_out_above_a_million_games_keeps_memory_flat(tmp_path):
    """Peak memory of a 1.2M-game --out run is that of a 0.2M one (rows held: ~110 MB per million)."""
    code = ("import resource, sys; from yahtzee_sim.cli import main; "
            "main(['simulate', '--rules', 'yacht', '--strategy', 'random', '--games', sys.argv[1], "
            "'--seed', '1', '--json', '--out', sys.argv[2]]); "
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    peaks = {}
    for games in (200_000, 1_200_000):
        out = tmp_path / f"g{games}.csv"
        proc = subprocess.run([sys.executable, "-c", code, str(games), str(out)], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=600, check=True)
        peaks[games] = int(proc.stdout.strip().splitlines()[-1]) / 1024  # MB
        with open(out) as fh:
            assert sum(1 for _ in fh) == games + 1
    assert peaks[1_200_000] - peaks[200_000] < 40, peaks


# -- files respect the umask --------------------------------------------------------------

@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_respect_the_umask(tmp_path, capsys, umask, mode):
    old = os.umask(umask)
    try:
        json_result(capsys, *ARGS, "--out", tmp_path / "g.csv", "--checkpoint", tmp_path / "c.json")
        json_result(capsys, *ARGS, "--out", tmp_path / "h.csv")
    finally:
        os.umask(old)
    for name in ("g.csv", "c.json", "h.csv"):
        assert (tmp_path / name).stat().st_mode & 0o777 == mode, name


def test_replacing_a_file_keeps_its_mode(tmp_path, capsys):
    out = tmp_path / "g.csv"
    out.write_text("old")
    out.chmod(0o640)
    json_result(capsys, *ARGS, "--out", out)
    assert out.stat().st_mode & 0o777 == 0o640 and out.read_text() != "old"
