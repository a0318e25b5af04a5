"""Parallel backends, streaming aggregates, interruption and resume (issue 5).

The claims: a run's aggregate and per-game rows are bit-for-bit identical whatever
the backend (serial, processes, Dask), the worker count, the chunk size and the
order chunks complete in; an interrupted run resumed from its checkpoint ends with
exactly the uninterrupted result; a checkpoint of another run is refused.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import yahtzee_sim
import yahtzee_sim.runner.driver as par
from yahtzee_sim import SEED_BLOCK, get_rules, simulate, simulate_turns
from yahtzee_sim.cli import main
from yahtzee_sim.strategies import Strategy, best_legal

N = 5000  # not a multiple of SEED_BLOCK: the last chunk is cut


def same_aggregate(a, b) -> bool:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not np.array_equal(x, y):
            return False
    return True


def same_games(a, b) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def reference():
    """The serial run everything is compared with (smallest chunks: 1 seed block)."""
    return simulate("yahtzee", "keep-largest", N, seed=11, batch=SEED_BLOCK)


@pytest.fixture(scope="module")
def dask_cluster():
    """One LocalCluster (2 worker processes) shared by the module: startup is slow."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        yield cluster


class GreedySixes(Strategy):
    """A custom (unregistered, picklable) strategy: hold sixes, best box now."""

    name = "greedy-sixes"

    def keep(self, state, rolls, rolls_left, u):
        counts = self.dice.roll_counts[rolls].copy()
        counts[:, :5] = 0
        return self.dice.keep_index_of_counts(counts)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


# -- determinism across backends, worker counts, chunk sizes, completion order -------------

class LazinessProbe:
    """Counts chunk ids the scheduler has taken ahead of the chunks merged (bounded in-flight)."""

    def __init__(self, monkeypatch):
        self.taken, self.ahead = 0, []
        todo = par.Done.todo

        def counting_todo(done, n_chunks):
            for i in todo(done, n_chunks):
                self.taken += 1
                yield i

        monkeypatch.setattr(par.Done, "todo", counting_todo)
        monkeypatch.setattr(par, "after_chunk", lambda merged: self.ahead.append(self.taken - merged))


@pytest.mark.parametrize("jobs, batch", [(1, SEED_BLOCK), (2, 2 * SEED_BLOCK)])
def test_processes_match_serial(reference, monkeypatch, jobs, batch):
    probe = LazinessProbe(monkeypatch)
    res = simulate("yahtzee", "keep-largest", N, seed=11, batch=batch, backend="processes", jobs=jobs)
    assert same_aggregate(res.aggregate, reference.aggregate)
    assert same_games(res.games, reference.games)
    assert res.seed == reference.seed == 11
    assert len(probe.ahead) == -(-N // batch)
    assert max(probe.ahead) <= par.IN_FLIGHT_PER_WORKER * jobs


def test_dask_matches_serial(reference, dask_cluster, monkeypatch):
    probe = LazinessProbe(monkeypatch)
    res = simulate("yahtzee", "keep-largest", N, seed=11, batch=SEED_BLOCK, backend="dask",
                   scheduler=dask_cluster.scheduler_address)
    assert same_aggregate(res.aggregate, reference.aggregate)
    assert same_games(res.games, reference.games)
    assert len(probe.ahead) == 5 and max(probe.ahead) <= max(4, par.IN_FLIGHT_PER_WORKER * 2)


def test_dask_accepts_a_client(reference, dask_cluster):
    from dask.distributed import Client

    with Client(dask_cluster) as client:
        res = simulate("yahtzee", "keep-largest", N, seed=11, batch=3 * SEED_BLOCK, backend="dask",
                       scheduler=client, keep_games=False)
        assert client.status == "running"  # a client passed in is left open
    assert res.games is None
    assert same_aggregate(res.aggregate, reference.aggregate)


@pytest.mark.parametrize("batch", [SEED_BLOCK, 2 * SEED_BLOCK, 65536])
def test_chunk_size_does_not_change_results(reference, batch):
    res = simulate("yahtzee", "keep-largest", N, seed=11, batch=batch)
    assert same_aggregate(res.aggregate, reference.aggregate)
    assert same_games(res.games, reference.games)


def test_shuffled_completion_order(reference, monkeypatch):
    """Chunks finishing in any order give the same aggregate and rows in game order."""
    serial = par.serial_results

    for trial in range(3):
        order_seen = []

        def shuffled(work, ids, trial=trial):
            done = list(serial(work, ids))
            random.Random(trial).shuffle(done)
            order_seen.append([i for i, _ in done])
            yield from done

        monkeypatch.setattr(par, "serial_results", shuffled)
        res = simulate("yahtzee", "keep-largest", N, seed=11, batch=SEED_BLOCK)
        assert order_seen[0] != sorted(order_seen[0])
        assert same_aggregate(res.aggregate, reference.aggregate)
        assert same_games(res.games, reference.games)


def test_aggregate_merge_is_order_independent():
    rules = get_rules("yacht")
    from yahtzee_sim.strategies import get_strategy

    strat = get_strategy("random").prepare(rules)
    plan = par.ChunkPlan("games", 4000, 1)
    parts = [par.play_chunk(plan, rules, strat, 5, False, i)[0] for i in range(plan.n_chunks)]
    from yahtzee_sim import GameAggregate

    merged = []
    for seed in range(3):
        order = list(range(len(parts)))
        random.Random(seed).shuffle(order)
        done = par.Done(GameAggregate.empty(rules))
        for i in order:
            done = done.add(i, parts[i], plan.size(i), par.merge_games)
        assert done.below == plan.n_chunks and not done.extra and done.count == 4000
        merged.append(done.value)
    assert all(same_aggregate(m, merged[0]) for m in merged)
    assert same_aggregate(merged[0], simulate("yacht", "random", 4000, seed=5).aggregate)


def test_turns_match_across_backends(dask_cluster):
    ref = simulate_turns("yahtzee", "keep-largest", 7000, seed=4, batch=SEED_BLOCK)
    procs = simulate_turns("yahtzee", "keep-largest", 7000, seed=4, batch=4096, backend="processes", jobs=2)
    dask = simulate_turns("yahtzee", "keep-largest", 7000, seed=4, batch=2048, backend="dask",
                          scheduler=dask_cluster.scheduler_address)
    assert int(ref.roll_counts.sum()) == 7000
    assert np.array_equal(ref.roll_counts, procs.roll_counts)
    assert np.array_equal(ref.roll_counts, dask.roll_counts)


def test_custom_strategy_is_pickled_to_workers():
    ref = simulate("yatzy", GreedySixes(), 3000, seed=8)
    res = simulate("yatzy", GreedySixes(), 3000, seed=8, batch=SEED_BLOCK, backend="processes", jobs=1)
    assert res.strategy == "greedy-sixes"
    assert same_aggregate(res.aggregate, ref.aggregate)


def test_unpicklable_strategy_gives_a_clear_error():
    class Local(GreedySixes):  # defined in a function: cannot be pickled
        name = "local"

    with pytest.raises(ValueError, match="strategy 'local' cannot be sent to processes workers"):
        simulate("yahtzee", Local(), 100, seed=1, backend="processes", jobs=1)


# -- bounded, lazy scheduling ------------------------------------------------------------

def test_todo_is_lazy_for_huge_runs():
    done = par.Done(None, below=5, extra=frozenset({7}))
    todo = done.todo(10**15)  # would not fit in memory as a list
    assert [next(todo) for _ in range(3)] == [5, 6, 8]


# -- interruption and resume ---------------------------------------------------------------

def _interrupt_after(monkeypatch, k):
    def hook(merged):
        if merged == k:
            raise KeyboardInterrupt

    monkeypatch.setattr(par, "after_chunk", hook)


@pytest.mark.parametrize("backend, jobs", [("serial", None), ("processes", 2)])
def test_interrupt_then_resume_equals_uninterrupted(tmp_path, monkeypatch, backend, jobs):
    n, batch = 9000, SEED_BLOCK  # 9 chunks
    full = simulate("yahtzee", "random", n, seed=21, batch=batch, keep_games=False)
    ckpt = tmp_path / "run.json"
    _interrupt_after(monkeypatch, 3)
    with pytest.raises(par.RunInterrupted) as info:
        simulate("yahtzee", "random", n, seed=21, batch=batch, backend=backend, jobs=jobs, checkpoint=ckpt)
    assert info.value.done == 3 * SEED_BLOCK and info.value.total == n
    assert "interrupted after 3,072 of 9,000 games" in str(info.value) and str(ckpt) in str(info.value)
    saved = json.loads(ckpt.read_text())
    assert saved["done"] == 3 * SEED_BLOCK
    monkeypatch.setattr(par, "after_chunk", None)
    res = simulate("yahtzee", "random", n, seed=21, batch=batch, checkpoint=ckpt)  # any backend resumes
    assert res.games is None  # checkpointed runs keep aggregates only
    assert same_aggregate(res.aggregate, full.aggregate)
    assert res.summary()["mean"] == full.summary()["mean"]
    # a finished checkpoint gives the result again without playing
    monkeypatch.setattr(par, "play_chunk", None)
    again = simulate("yahtzee", "random", n, seed=21, batch=batch, checkpoint=ckpt)
    assert same_aggregate(again.aggregate, full.aggregate)


def test_resume_without_seed_reuses_the_stored_entropy(tmp_path, monkeypatch):
    ckpt = tmp_path / "noseed.json"
    _interrupt_after(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        simulate_turns("yacht", "random", 6000, batch=SEED_BLOCK, checkpoint=ckpt)
    entropy = json.loads(ckpt.read_text())["seed"]
    monkeypatch.setattr(par, "after_chunk", None)
    res = simulate_turns("yacht", "random", 6000, batch=SEED_BLOCK, checkpoint=ckpt)
    assert res.seed == entropy
    full = simulate_turns("yacht", "random", 6000, seed=entropy)
    assert np.array_equal(res.roll_counts, full.roll_counts)


def test_mismatched_checkpoint_is_refused(tmp_path):
    ckpt = tmp_path / "a.json"
    simulate("yahtzee", "random", 2000, seed=3, checkpoint=ckpt)
    cases = [
        (dict(n_games=3000), "n 2000 there, 3000 here"),
        (dict(seed=4), "seed 3 there, 4 here"),
        (dict(strategy="keep-largest"), "strategy 'random' there, 'keep-largest' here"),
        (dict(rules="yatzy"), "rules 'yahtzee' there, 'yatzy' here"),
        (dict(options=["no-joker"]), "rules 'yahtzee' there, 'yahtzee+no-joker' here"),
        (dict(batch=2048), "chunk_games 65536 there, 2048 here"),
    ]
    base = dict(rules="yahtzee", strategy="random", n_games=2000, seed=3)
    for change, message in cases:
        with pytest.raises(ValueError, match="belongs to another run") as info:
            simulate(**{**base, **change}, checkpoint=ckpt)
        assert message in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match="kind 'games' there, 'turns' here"):
        simulate_turns("yahtzee", "random", 2000, seed=3, checkpoint=ckpt, batch=65536)


def test_bad_checkpoint_files(tmp_path):
    junk = tmp_path / "junk.json"
    junk.write_text("{not json")
    with pytest.raises(ValueError, match="is not a yahtzee-sim checkpoint"):
        simulate("yahtzee", "random", 100, seed=1, checkpoint=junk)
    with pytest.raises(ValueError, match="does not exist"):
        simulate("yahtzee", "random", 100, seed=1, checkpoint=tmp_path / "nope" / "c.json")
    with pytest.raises(ValueError, match="cannot be combined with keep_games=True"):
        simulate("yahtzee", "random", 100, seed=1, checkpoint=tmp_path / "c.json", keep_games=True)
    assert not (tmp_path / "c.json").exists()


# -- validation and the optional dask extra -------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    (dict(backend="threads"), "unknown backend 'threads'; valid backends: serial, processes, dask"),
    (dict(jobs=2), "jobs needs the processes or dask backend"),
    (dict(backend="processes", jobs=0), "jobs must be a positive integer"),
    (dict(backend="processes", scheduler="tcp://x:1"), "a scheduler needs the dask backend"),
])
def test_bad_backend_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate("yahtzee", "random", 100, seed=1, **kwargs)


def test_missing_dask_gives_install_hint(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "dask.distributed", None)
    with pytest.raises(ValueError) as info:
        simulate("yahtzee", "random", 100, seed=1, backend="dask")
    assert str(info.value) == "the dask backend needs dask.distributed: pip install 'yahtzee-sim[dask]'"
    assert main(["turns", "--turns", "100", "--backend", "dask"]) == 2
    assert capsys.readouterr().err.strip() == f"yahtzee-sim: error: {par.DASK_MISSING}"


# -- command line -------------------------------------------------------------------------

def _json_of(argv, capsys) -> dict:
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    out.pop("seconds", None)
    return out


def test_cli_backends_agree(capsys, dask_cluster):
    args = ["simulate", "--games", "4000", "--seed", "6", "--batch", "1024", "--json"]
    serial = _json_of(args, capsys)
    procs = _json_of(args + ["--backend", "processes", "--jobs", "2"], capsys)
    dask = _json_of(args + ["--backend", "dask", "--scheduler", dask_cluster.scheduler_address], capsys)
    assert serial == procs == dask
    t_args = ["turns", "--turns", "3000", "--seed", "6", "--json"]
    assert _json_of(t_args, capsys) == _json_of(
        t_args + ["--backend", "dask", "--scheduler", dask_cluster.scheduler_address], capsys)


def test_cli_usage_errors(tmp_path, capsys):
    assert main(["simulate", "--jobs", "2"]) == 2
    assert "jobs needs the processes or dask backend" in capsys.readouterr().err
    assert main(["simulate", "--backend", "gpu"]) == 2
    assert "invalid choice: 'gpu'" in capsys.readouterr().err
    # --out works with --checkpoint since issue 12 §4: the rows are streamed to the file, the run resumable
    assert main(["simulate", "--games", "100", "--checkpoint", str(tmp_path / "c.json"),
                 "--out", str(tmp_path / "g.csv")]) == 0
    assert (tmp_path / "g.csv").read_text().count("\n") == 101


def _signals_as_a_terminal_gives_them():
    """In the child before it runs: Ctrl-C handled by default and not blocked, whatever the
    test process (a pytest worker, after other tests) holds; a child inherits both."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])


def _signal_state(pid: int) -> str:
    """The process's ignored and blocked signal masks, for a failure's message."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return " ".join(line.split()[0] + line.split()[1] for line in f if line.startswith(("SigIgn", "SigBlk")))
    except (OSError, IndexError):
        return "(no /proc)"


def test_cli_ctrl_c_saves_and_resumes(tmp_path, capsys):
    """A real SIGINT to a running CLI: exit 130, one line on stderr, resume gives the same result."""
    ckpt = tmp_path / "cli.json"
    # long enough after its first checkpoint (the first chunk) for the signal to land mid-run
    # on a loaded machine: 600,000 games last about 3 s more
    args = ["simulate", "--rules", "yatzy", "--strategy", "keep-largest", "--games", "600000",
            "--seed", "13", "--batch", "1024", "--json", "--checkpoint", str(ckpt)]
    env = {**os.environ, "PYTHONPATH": str(Path(yahtzee_sim.__file__).parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "yahtzee_sim", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env,
                            preexec_fn=_signals_as_a_terminal_gives_them)
    deadline = time.monotonic() + 60
    while not ckpt.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    running, state = proc.poll() is None, _signal_state(proc.pid)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (f"running when signalled: {running}, its signals then: {state}, "
                                    f"ended {time.monotonic() - sent:.2f} s after; stderr: {err!r}; "
                                    f"stdout: {out[-300:]!r}")
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("yahtzee-sim: interrupted after ")
    assert "of 600,000 games; completed chunks saved to" in lines[0]
    saved = json.loads(ckpt.read_text())
    assert 0 < saved["done"] < 600_000
    resumed = _json_of(args, capsys)
    uninterrupted = _json_of(args[:-2], capsys)
    assert resumed == uninterrupted


@pytest.mark.slow
def test_dask_local_cluster_started_for_the_run():
    ref = simulate_turns("yacht", "keep-largest", 3000, seed=2)
    res = simulate_turns("yacht", "keep-largest", 3000, seed=2, backend="dask", jobs=1)
    assert np.array_equal(ref.roll_counts, res.roll_counts)
