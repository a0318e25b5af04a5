"""Faults of issue 23, sections 3 to 5: nothing hung, nothing orphaned, nothing runaway.

Every case is a subprocess or a call bounded in time: a hang fails the test at its
timeout instead of holding the suite. Each refusal is checked for one line, exit
code 2 (on the command line) and no work started before it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def cli(*args, timeout=60, cwd=None, env=None, stdin=None):
    """Run the command line in a subprocess: (exit code, stdout, stderr)."""
    out = subprocess.run([sys.executable, "-m", "yahtzee_sim", *map(str, args)], capture_output=True, text=True,
                         timeout=timeout, cwd=cwd, env=env or ENV, stdin=stdin)
    return out.returncode, out.stdout, out.stderr


def refused(args, *words, timeout=60, cwd=None, env=None):
    """The command is refused: exit 2, nothing on stdout, one line on stderr holding ``words``."""
    code, out, err = cli(*args, timeout=timeout, cwd=cwd, env=env)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, (code, out[-500:], err[-2000:])
    assert out == "", out[-500:]
    assert len(lines) == 1, err[-2000:]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# -- §3: a pool whose worker was terminated mid-send leaves nothing waiting ------------------

HALF_SEND = textwrap.dedent('''
    import multiprocessing, os, pathlib, struct, sys, time
    from concurrent.futures import ProcessPoolExecutor


    def half_send(flag):
        # write the start of a result message into the pool's result pipe, then hang:
        # the parent's reader reads the header and waits for bytes that never come
        f = sys._getframe()
        while f.f_code.co_name != "_process_worker":
            f = f.f_back
        os.write(f.f_locals["result_queue"]._writer.fileno(), struct.pack("!i", 1000) + b"x" * 10)
        pathlib.Path(flag).touch()
        time.sleep(600)


    if __name__ == "__main__":
        mode, flag = sys.argv[1:]
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        pool.submit(half_send, flag)
        while not os.path.exists(flag):
            time.sleep(0.05)
        time.sleep(0.3)
        if mode == "project":
            from yahtzee_sim.runner.backends import close_pool
            close_pool(pool, finished=False)
        else:   # what the project did before: terminate the workers, no bounded reader
            procs = list(pool._processes.values())
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:
                p.terminate()
            for p in procs:
                p.join(10)
        print("closed", flush=True)
''')


@pytest.mark.parametrize("mode", ["plain", "project"])
def test_pool_terminated_mid_send_lets_the_interpreter_exit(tmp_path, mode):
    script = tmp_path / "half_send.py"
    script.write_text(HALF_SEND)
    args = [sys.executable, str(script), mode, str(tmp_path / "flag")]
    if mode == "plain":
        # the reproduction is real: the stdlib alone hangs at exit (so the other case can fail)
        with pytest.raises(subprocess.TimeoutExpired):
            subprocess.run(args, env=ENV, capture_output=True, timeout=12)
    else:
        t0 = time.monotonic()
        out = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "closed" in out.stdout, out.stderr[-2000:]
        assert time.monotonic() - t0 < 45


def _children(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc), zombies left out."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z":
                kids.setdefault(int(fields[1]), []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux) to find the workers")
@pytest.mark.parametrize("command, least", [
    (["-m", "yahtzee_sim", "simulate", "--strategy", "greedy", "--games", "2e7", "--seed", "1", "--backend",
      "processes", "--jobs", "2"], 3),                       # two spawned workers and the resource tracker
    (["-m", "yahtzee_sim", "turns", "--strategy", "greedy", "--turns", "1e9", "--seed", "1", "--backend",
      "processes", "--jobs", "2"], 3),
    (["-c", "from yahtzee_sim.multiplayer import seat_gain\nseat_gain('yacht', 'greedy', 'keep-largest', 1, "
      "10**7, seed=1, opponent='greedy', jobs=2, options=['fill-in-order'])"], 2),   # the forked pool of seat_gain
    (["-m", "yahtzee_sim", "simulate", "--strategy", "greedy", "--games", "2e7", "--seed", "1", "--backend",
      "dask", "--jobs", "2"], 3),                            # a LocalCluster's processes
], ids=["simulate", "turns", "seat_gain", "dask"])
def test_kill_9_of_the_parent_leaves_no_worker(command, least):
    if "dask" in command:
        pytest.importorskip("dask.distributed", reason="the dask backend needs dask.distributed")
    proc = subprocess.Popen([sys.executable, *command], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(workers) < least:
            time.sleep(0.5)
            workers |= _children(proc.pid)
            assert proc.poll() is None, "the run ended before it could be killed"
        assert len(workers) >= least, workers
        time.sleep(2)                       # let the workers get into their chunks
        workers |= _children(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(map(_alive, workers)):
            time.sleep(0.2)
        left = [w for w in workers if _alive(w)]
        assert not left, f"workers still running 20 s after the parent's kill -9: {left}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        for w in workers | _children(proc.pid):     # a failed case leaves no orphan behind either
            if _alive(w):
                os.kill(w, signal.SIGKILL)


def test_a_worker_dead_mid_send_ends_the_run_instead_of_hanging_it():
    """The in-run face of the same fault: the reader waits on a message a dead worker cut short."""
    script = textwrap.dedent('''
        import multiprocessing, os, struct, sys, time
        from concurrent.futures import ProcessPoolExecutor
        from yahtzee_sim.runner.backends import close_pool, ordered_results

        def die_mid_send():
            f = sys._getframe()
            while f.f_code.co_name != "_process_worker":
                f = f.f_back
            os.write(f.f_locals["result_queue"]._writer.fileno(), struct.pack("!i", 1000) + b"x")
            os._exit(1)

        if __name__ == "__main__":
            pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
            try:
                list(ordered_results(pool, [pool.submit(die_mid_send)]))
            except RuntimeError as exc:
                print("refused:", exc)
            finally:
                close_pool(pool, finished=False)
    ''')
    out = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True, timeout=90)
    assert out.returncode == 0 and "refused: a worker process died" in out.stdout, out.stderr[-2000:]


# -- §3: rule files: only regular files, of bounded size -----------------------------------

def _limited(args, timeout=30, memory=2 << 30, cwd=None):
    """A subprocess with a bounded address space (a runaway read fails instead of swapping)."""
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=timeout, preexec_fn=limit, cwd=cwd)


@pytest.fixture
def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "house.toml"
    os.mkfifo(path)
    return path


@pytest.fixture
def zero(tmp_path):
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    path = tmp_path / "zero.toml"
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_rules_file_that_is_not_a_regular_file_is_refused_at_once(request, tmp_path, kind):
    path = request.getfixturevalue(kind)
    # the command line, a spec's rules = and get_rules(): each a subprocess, so a blocked read fails the test
    out = _limited([sys.executable, "-m", "yahtzee_sim", "score", "--rules", str(path), "--all"])
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, out.stderr[-2000:]
    assert "not a regular file" in out.stderr
    spec = tmp_path / "spec.toml"
    spec.write_text(f'kind = "strategies"\nstrategies = ["random"]\ngames = 32\nrules = "{path}"\n')
    out = _limited([sys.executable, "-m", "yahtzee_sim", "run", str(spec), "--out", str(tmp_path / "out")])
    assert out.returncode == 2 and "not a regular file" in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not (tmp_path / "out").exists()
    out = _limited([sys.executable, "-c", f"from yahtzee_sim.rules import get_rules\ntry:\n get_rules({str(path)!r})\n"
                    "except ValueError as e:\n print('refused:', e)"])
    assert out.returncode == 0 and out.stdout.startswith("refused:") and "not a regular file" in out.stdout


def test_a_rules_file_over_the_size_bound_is_refused(tmp_path):
    from yahtzee_sim.rules import get_rules
    from yahtzee_sim.rules.house import MAX_HOUSE_BYTES

    path = tmp_path / "big.toml"
    path.write_text('name = "big"\n' + "# padding\n" * (MAX_HOUSE_BYTES // 10 + 1))
    assert path.stat().st_size > MAX_HOUSE_BYTES
    with pytest.raises(ValueError, match="too large for a rules file"):
        get_rules(path)
    path.write_text(path.read_text()[: MAX_HOUSE_BYTES - 100] + '\n[[box]]\nname = "c"\nscorer = "chance"\n')
    assert get_rules(path).n_boxes == 1               # just under the bound: read


def _house(tmp_path, name, text):
    path = tmp_path / f"{name}.toml"
    path.write_text(f'name = "{name}"\n' + text)
    return path


def _boxes(n, scorer="chance"):
    return "".join(f'[[box]]\nname = "b{i}"\nscorer = "{scorer}"\n' for i in range(n))


UPPER = "".join(f'[[box]]\nname = "u{f}"\nscorer = "upper"\nface = {f}\n' for f in range(1, 7))


@pytest.mark.parametrize("text, words", [
    ("x = " + "[" * 5000 + "]" * 5000 + "\n" + _boxes(1), ["nested too deeply"]),
    ("x = " + "{ a = " * 3000 + "1" + " }" * 3000 + "\n" + _boxes(1), ["nested too deeply"]),
    ('[[box]]\nname = "s"\nscorer = "straight"\nlength = 2\npoints = 5\nruns = [[true, 2]]\n', ["runs must be"]),
    (_boxes(1) + '[[column]]\nname = { x = 1 }\nboxes = ["b0"]\n', ["column 1", "name must be text"]),
    ("dice = 8\nfaces = 12\n" + _boxes(1), ["125,970 distinct keeps", "8 dice of 9 faces"]),
    (_boxes(2000), ["2,000 boxes", "at most 100"]),
])
def test_bad_house_files_are_one_line(tmp_path, text, words):
    path = _house(tmp_path, "bad", text)
    for command in (["score", "--all"], ["simulate", "--games", "10"], ["solve"], ["extremes"]):
        refused([command[0], "--rules", path, *command[1:]], *words)


def test_house_card_limits_hold_at_the_boundary(tmp_path):
    """100 boxes play; 101 are refused; 8 dice of 9 faces build their tables, 8 of 10 do not."""
    from yahtzee_sim.rules import get_rules

    assert get_rules(_house(tmp_path, "b100", _boxes(100))).n_boxes == 100
    with pytest.raises(ValueError, match="101 boxes"):
        get_rules(_house(tmp_path, "b101", _boxes(101)))
    import math

    from yahtzee_sim.dice import require_tables_fit

    require_tables_fit(8, 9)                                  # 24,310 keeps: fits 16 bits
    assert math.comb(8 + 9, 8) < 2**15 <= math.comb(8 + 10, 8)
    with pytest.raises(ValueError, match="43,758 distinct keeps"):
        require_tables_fit(8, 10)


def test_tables_that_do_not_fit_memory_are_refused_before_they_are_built(tmp_path, monkeypatch):
    from yahtzee_sim.exact.solver import solve
    from yahtzee_sim.exact.extremes import extreme_score
    from yahtzee_sim.rules import get_rules

    rules = get_rules(_house(tmp_path, "b27", _boxes(27)))
    for call in (lambda: solve(rules, cache=False), lambda: extreme_score(rules)):
        with pytest.raises(ValueError, match=r"2\*\*27 score cards \(134 million\) needs about"):
            call()
    # 24 boxes: 16.8 million states (about half a GB of tables), which the solver takes on;
    # not with a budget of 256 MiB
    monkeypatch.setenv("YAHTZEE_SIM_MEMORY", "256M")
    rules = get_rules(_house(tmp_path, "b24", _boxes(24)))
    t0 = time.perf_counter()
    for call in (lambda: solve(rules, cache=False), lambda: extreme_score(rules)):
        with pytest.raises(ValueError, match="of memory.*more than the 256.0 MiB allowed by YAHTZEE_SIM_MEMORY"):
            call()
    assert time.perf_counter() - t0 < 20
    refused(["solve", "--rules", _house(tmp_path, "b24b", _boxes(24))], "allowed by YAHTZEE_SIM_MEMORY",
            env={**ENV, "YAHTZEE_SIM_MEMORY": "256M"})


# -- §3: endless work refused ------------------------------------------------------------------

def test_games_with_underscores_in_an_exponent_are_refused():
    from yahtzee_sim.cli._common import positive_int

    assert positive_int("1_000_000") == 10**6 and positive_int("1e6") == 10**6
    refused(["simulate", "--games", "1e1_0"], "underscores may only group")
    refused(["head-to-head", "--players", "greedy", "greedy", "--games", "1_0e3"], "underscores may only group")


def test_head_to_head_beyond_what_can_finish_or_fit_is_refused(monkeypatch):
    refused(["head-to-head", "--players", "greedy", "greedy", "--games", "1e18"], "more than any run can finish")
    # the command keeps no games (its odds are the runner's tallies); kept, they must fit
    from yahtzee_sim.multiplayer import simulate_table

    t0 = time.monotonic()
    monkeypatch.setenv("YAHTZEE_SIM_MEMORY", "8G")
    with pytest.raises(ValueError, match="29.1 TiB of memory"):      # 10**12 games x 2 seats x 16 bytes
        simulate_table("yahtzee", ["greedy", "greedy"], 10**12, keep_games=True)
    assert time.monotonic() - t0 < 30


def test_an_odds_spec_with_endless_checkpoints_is_refused(tmp_path):
    spec = tmp_path / "odds.toml"
    spec.write_text('kind = "odds"\ncheckpoints = [1000, 1000000000000]\n')
    refused(["run", spec, "--out", tmp_path / "out"], "turns = 1,000,000,000,000 is too many")
    assert not (tmp_path / "out").exists()


def test_extremes_estimated_beyond_an_hour_are_refused_before_work():
    t0 = time.monotonic()
    line = refused(["extremes", "--faces", "12"], "timed on a pilot", "more than 1 hour", timeout=120)
    assert "524,288 score cards x 4,368 rolls" in line           # 2**19 cards; C(16, 5) rolls of 12 faces
    assert time.monotonic() - t0 < 60


# -- §4: one line instead of tracebacks ----------------------------------------------------------

def test_odds_per_turn_of_one_roll_and_one_die(tmp_path):
    refused(["odds", "--per-turn", "--rules", _house(tmp_path, "r1", "rolls = 1\n" + UPPER)],
            "at least 2 rolls a turn")
    code, out, err = cli("odds", "--per-turn", "--rules", _house(tmp_path, "d1", "dice = 1\n" + UPPER))
    assert code == 0 and "Traceback" not in err and "Expected rolls" in out, err[-2000:]


@pytest.mark.parametrize("rules", ["maxi-yatzy", "balut", "yamb"])
def test_odds_per_turn_optimal_refuses_before_any_output(rules):
    refused(["odds", "--per-turn", "--strategy", "optimal", "--rules", rules], "cannot solve")


def test_target_on_maxi_yatzy_refuses_before_work():
    t0 = time.monotonic()
    refused(["target", "--rules", "maxi-yatzy", "--target", "300"], "cannot solve maxi-yatzy")
    refused(["target", "--rules", "maxi-yatzy", "--option", "no-saved-throws", "--target", "300"],
            "29,360,129 states x 301 probabilities", "targets up to 72 fit")
    assert time.monotonic() - t0 < 30


def test_a_family_spec_of_optimal_on_an_unsolvable_game_writes_its_report(tmp_path):
    spec = tmp_path / "fam.toml"
    spec.write_text('kind = "family"\ngames = 50\nrule_sets = ["balut"]\nstrategies = ["optimal"]\ntables = ["means"]\n'
                    'plots = []\n')
    code, out, err = cli("run", spec, "--out", tmp_path / "out", timeout=120)
    assert code == 0 and "Traceback" not in err, err[-2000:]
    readme = (tmp_path / "out" / "fam" / "README.md").read_text()
    assert "| balut | not solvable exactly here |" in readme


USER_STRATEGY = '''
from yahtzee_sim.strategies.simple import KeepLargestStrategy


def helper(x):
    return 1 / x


class Bad(KeepLargestStrategy):
    name = "bad-one"

    def box(self, state, rolls, options, u):
        return helper(0)


class Good(KeepLargestStrategy):
    name = "good-one"


class WrongValue(KeepLargestStrategy):
    name = "wrong-value"

    def keep(self, state, rolls, rolls_left, u):
        raise ValueError("my own bad value")
'''


@pytest.fixture
def user_folder(tmp_path):
    """A user's folder with a strategy module, and a console script elsewhere (which, unlike
    ``python -m``, does not put the current folder on the path)."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "mystrat.py").write_text(USER_STRATEGY)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "ys.py"
    script.write_text("import sys\nfrom yahtzee_sim.cli import main\nif __name__ == '__main__':\n    sys.exit(main())\n")
    return folder, script


@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_a_raising_user_strategy_is_one_line_and_the_users_frames(user_folder, backend):
    folder, script = user_folder
    args = [sys.executable, str(script), "simulate", "--strategy", "mystrat:Bad", "--games", "500", "--seed", "1",
            "--backend", backend]
    out = subprocess.run(args, env=ENV, cwd=folder, capture_output=True, text=True, timeout=120)
    lines = out.stderr.splitlines()
    assert out.returncode == 2 and out.stdout == "", out.stderr[-3000:]
    assert "'bad-one'" in lines[0] or "'mystrat:Bad'" in lines[0]
    assert "raised ZeroDivisionError: division by zero" in lines[0]
    files = [ln for ln in lines if ln.strip().startswith("File ")]
    assert files and all("mystrat.py" in ln for ln in files), out.stderr      # the user's frames only
    assert "yahtzee_sim" not in out.stderr and "Traceback" not in out.stderr
    for debug in (["--debug"], []):                   # the whole trace on request
        env = ENV if debug else {**ENV, "YAHTZEE_SIM_DEBUG": "1"}
        out = subprocess.run(args[:2] + debug + args[2:], env=env, cwd=folder, capture_output=True, text=True,
                             timeout=120)
        assert "Traceback" in out.stderr and "ZeroDivisionError" in out.stderr and out.returncode != 0


def test_a_strategy_from_the_current_folder_plays_in_worker_processes(user_folder):
    folder, script = user_folder
    runs = [subprocess.run([sys.executable, str(script), "simulate", "--strategy", "mystrat:Good", "--games", "3000",
                            "--seed", "7", "--json", *extra], env=ENV, cwd=folder, capture_output=True, text=True,
                           timeout=120) for extra in ([], ["--backend", "processes", "--jobs", "2"])]
    for out in runs:
        assert out.returncode == 0, out.stderr[-2000:]
    import json

    serial, parallel = (json.loads(out.stdout) for out in runs)
    assert serial["mean"] == parallel["mean"] and serial["games"] == parallel["games"] == 3000


def test_advise_takes_the_served_flag_its_note_names():
    code, out, _ = cli("advise", "--rules", "generala", "--dice", "11111", "--rolls-left", "1")
    assert code == 0 and "--served" in out
    served = cli("advise", "--rules", "generala", "--dice", "11111", "--rolls-left", "1", "--served")
    later = cli("advise", "--rules", "generala", "--dice", "11111", "--rolls-left", "1", "--no-served")
    assert served[0] == later[0] == 0
    assert served[1] != later[1]                        # served dice are worth more (Generala's served bonus)
    assert "--served" not in later[1]


# -- §5: expensive work says what it builds, and how long, before it starts ------------------------

def test_solve_estimates_match_the_spaces_they_count():
    from yahtzee_sim.exact.space import estimate_states, state_space
    from yahtzee_sim.rules import get_rules

    for name in ("yahtzee", "yatzy", "yacht", "generala", "kismet"):
        rules = get_rules(name)
        n = state_space(rules).n_states
        assert n <= estimate_states(rules) <= n + 8, name   # the few unreachable states counted


def test_a_big_solve_is_announced_before_it_starts():
    from yahtzee_sim.exact.solver import _announce_solve
    from yahtzee_sim.rules import get_rules

    seen = []
    _announce_solve(get_rules("maxi-yatzy", ["no-saved-throws"]), 2, lambda *a: seen.append(a))
    assert len(seen) == 1 and seen[0][1:] == (0, None)
    text = seen[0][0]
    assert "29,360,128 states" in text and "GiB of memory" in text and "minutes" in text
    seen.clear()
    _announce_solve(get_rules("yacht"), 2, lambda *a: seen.append(a))   # about a second: nothing said
    assert seen == []


def test_simulate_optimal_on_maxi_yatzy_says_so_before_solving(tmp_path):
    env = {**ENV, "YAHTZEE_SIM_CACHE": str(tmp_path / "cache")}     # an empty cache: a cold solve
    proc = subprocess.Popen([sys.executable, "-m", "yahtzee_sim", "simulate", "--strategy", "optimal", "--rules",
                             "maxi-yatzy", "--option", "no-saved-throws", "--games", "100", "--seed", "1"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()          # the first words, before any table is built
    finally:
        proc.kill()
        proc.wait(30)
    assert line.startswith("solving maxi-yatzy+no-saved-throws exactly: 29,360,128 states"), line
    assert "minutes" in line and "cached" in line


def test_play_to_win_names_the_tables_it_will_build(tmp_path, monkeypatch):
    from yahtzee_sim.strategies.play_to_win import PlayToWin
    from yahtzee_sim.rules import get_rules

    monkeypatch.setenv("YAHTZEE_SIM_CACHE", str(tmp_path))          # nothing cached
    seen = []
    PlayToWin(progress=lambda *a: seen.append(a))._announce(get_rules("yacht"))
    assert len(seen) == 1 and "building 5 risk-sensitive tables" in seen[0][0]
    assert "-0.02, -0.01, 0.02, 0.04, 0.08" in seen[0][0]


def test_phase_lines_announce_long_work_at_once():
    import io

    from yahtzee_sim.progress import PhaseLines, announce

    out = io.StringIO()
    p = PhaseLines(out, after=60, every=60)
    p("quick", 1, 2)                               # under the wait: nothing
    assert out.getvalue() == ""
    announce(p, "solving: about 5 minutes")         # an announcement: at once
    assert out.getvalue().splitlines()[0].endswith("solving: about 5 minutes")


def test_long_extremes_are_announced_with_their_estimate():
    from yahtzee_sim.exact.extremes import check_extremes_work
    from yahtzee_sim.rules import get_rules

    seen = []
    check_extremes_work(get_rules("yahtzee", faces=8), 10, lambda *a: seen.append(a))
    assert len(seen) == 1 and "10 value tables of 32,768 score cards x 792 rolls" in seen[0][0]
    assert "timed on a pilot" in seen[0][0]


def test_a_long_head_to_head_says_how_long_it_takes():
    proc = subprocess.Popen([sys.executable, "-m", "yahtzee_sim", "head-to-head", "--players", "greedy", "greedy",
                             "greedy", "--games", "3e7", "--seed", "1"], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
    finally:
        proc.kill()
        proc.wait(30)
    assert line.startswith("30,000,000 games of 3 players: about ") and "(timed on the first 16,384)" in line, line


def test_a_value_error_of_the_users_code_is_theirs_not_bad_input(user_folder):
    folder, script = user_folder
    args = [sys.executable, str(script), "simulate", "--strategy", "mystrat:WrongValue", "--games", "100"]
    out = subprocess.run(args, env=ENV, cwd=folder, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.startswith(
        "yahtzee-sim: error: strategy 'wrong-value' raised ValueError: my own bad value\n"), out.stderr
    assert 'mystrat.py", line' in out.stderr and "yahtzee_sim" not in out.stderr
    out = subprocess.run(args[:2] + ["--debug"] + args[2:], env=ENV, cwd=folder, capture_output=True, text=True,
                         timeout=60)
    assert "Traceback" in out.stderr and "yahtzee_sim" in out.stderr
    code, out, err = cli("simulate", "--games", "0")             # the project's own refusal stays one line
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
