"""Cold and warm wall times of the commands a new user meets first, side by side (issue 21).

Cold is a fresh install with no table cached: the package is pip-installed into a new
virtual environment (``python -m venv``, then ``pip install`` of this tree, which
compiles the numba kernels ahead into the wheel: ``yahtzee_sim/exact/compile_ahead.py``; the
install's seconds are printed), and each command gets an empty solver cache folder and
the compiled kernels exactly as the install left them (numba's cache files are put back
to the installed set before each cold run). ``--nothing-compiled`` removes every
compiled kernel before each cold run instead: the first run of a machine where nothing
was compiled ahead (an editable install before ``make``, another CPU than the one that
built the wheel). ``--venv-per-command`` makes a new environment for each command.
Warm is the same command run again right after, with what the cold run left
(``--warm-runs N``: N runs, the last reported: the loop that plays optimal's games by
the table a first benchmark built is compiled at a low priority beside it and may
finish during the second run, so the third finds everything ready). The load average
(1 minute) is read before and after each run: a figure measured under load is not
comparable with one measured quiet.

    python benchmarks/bench_cold.py                       # the quick commands
    python benchmarks/bench_cold.py --long                # also target and Maxi Yatzy (minutes)
    python benchmarks/bench_cold.py --more                # also advise, extremes, policy-value, ...
    python benchmarks/bench_cold.py --every               # also every other command (odds, ask, check, run, ...)
    python benchmarks/bench_cold.py --nothing-compiled    # cold without the kernels compiled ahead
    python benchmarks/bench_cold.py --venv /tmp/v --keep  # reuse/keep an environment
    python benchmarks/bench_cold.py --markdown            # rows for benchmarks/RESULTS.md
    python benchmarks/bench_cold.py --every --save runs.json   # also keep the figures (JSON)
    python benchmarks/bench_cold.py --render runs.json --markdown   # a saved run as rows, nothing run
    python benchmarks/bench_cold.py --more --only benchmark --warm-runs 3   # cold, then the settled warm
    python benchmarks/bench_cold.py --source ../main --venv /tmp/v-main   # another tree (before/after)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

COMMANDS = {
    "solve yahtzee": ["solve", "--rules", "yahtzee"],
    "solve yatzy": ["solve", "--rules", "yatzy"],
    "simulate optimal 2M, 2 workers": ["simulate", "--rules", "yahtzee", "--strategy", "optimal", "--games",
                                       "2000000", "--backend", "processes", "--jobs", "2", "--seed", "1"],
    "distribution optimal": ["distribution", "--rules", "yahtzee", "--strategy", "optimal"],
}
LONG = {
    "target yahtzee": ["target", "--rules", "yahtzee", "--target", "250"],
    "solve maxi-yatzy no-saved-throws": ["solve", "--rules", "maxi-yatzy", "--option", "no-saved-throws"],
    "solve Finnish Maxi Yatzy (house file)": ["solve", "--rules",
                                              str(ROOT / "experiments" / "rules" / "maxi-yatzy-finnish.toml")],
}

MORE = {     # the other commands a new user meets first (`--more`)
    "advise yahtzee": ["advise", "--rules", "yahtzee", "--dice", "13356", "--rolls-left", "2"],
    "extremes yahtzee": ["extremes", "--rules", "yahtzee"],
    "policy-value keep-largest": ["policy-value", "--rules", "yahtzee", "--strategy", "keep-largest"],
    "simulate heuristic 100k": ["simulate", "--rules", "yahtzee", "--strategy", "heuristic", "--games", "100000",
                                "--seed", "1"],
    "benchmark greedy": ["benchmark", "greedy", "--rules", "yahtzee", "--seed", "1"],
    "benchmark random": ["benchmark", "random", "--rules", "yahtzee", "--seed", "1"],
    "benchmark heuristic": ["benchmark", "heuristic", "--rules", "yahtzee", "--seed", "1"],
}

EVERY = {    # every other command, with the arguments the README and docs/questions.md show (`--every`)
    "rules": ["rules"],
    "strategies": ["strategies"],
    "score": ["score", "--dice", "33355"],
    "odds": ["odds"],
    "odds per turn": ["odds", "--per-turn"],
    "odds per box": ["odds", "--boxes"],
    "turns keep-largest 1M": ["turns", "--seed", "1"],
    "head-to-head exact, optimal greedy greedy": ["head-to-head", "--players", "optimal", "greedy", "greedy",
                                                  "--exact"],
    "head-to-head simulated, optimal greedy": ["head-to-head", "--players", "optimal", "greedy", "--seed", "1"],
    "ask roll": ["ask", "chance", "five_of_a_kind", "--scope", "roll"],
    "ask position": ["ask", "chance", "large_straight", "--keep", "2345", "--rolls-left", "2"],
    "ask turn": ["ask", "chance", "five_of_a_kind", "--scope", "turn"],
    "ask game": ["ask", "chance", "upper_bonus", "--scope", "game", "--strategy", "optimal"],
    "ask table": ["ask", "chance", "win", "--scope", "table", "--players", "optimal", "greedy"],
    "check a claims file": ["check", str(ROOT / "experiments" / "claims" / "yahtzee.toml")],
    "verify": ["verify"],
    "cache": ["cache"],
    "run the demo (make demo)": ["run", str(ROOT / "experiments" / "claims.toml"),
                                 str(ROOT / "experiments" / "strategies.toml"), "--out", "{work}/demo"],
}


def load() -> float:
    return os.getloadavg()[0]


def make_venv(where: Path, source: Path = ROOT) -> Path:
    """A new environment with the tree ``source`` installed (not editable): its own ``__pycache__``."""
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True)
    py = where / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", str(source)], check=True)
    return py


def kernel_paths(py: Path) -> list:
    """numba's cache files of the installed package."""
    out = subprocess.run([str(py), "-c", "import yahtzee_sim, os; print(os.path.dirname(yahtzee_sim.__file__))"],
                         check=True, capture_output=True, text=True, cwd="/")
    return [p for p in Path(out.stdout.strip()).rglob("*") if p.suffix in (".nbi", ".nbc")]


def kernel_files(py: Path) -> dict:
    """numba's cache files of the installed package, with their bytes (an index file
    gains the signatures a run compiles: it is put back whole)."""
    return {p: p.read_bytes() for p in kernel_paths(py)}


def reset_kernels(py: Path, installed: dict) -> int:
    """Remove numba's cache files of the installed package but ``installed``, which are
    put back as they were; returns how many files were removed."""
    removed = 0
    for p in kernel_paths(py):
        if p not in installed:
            p.unlink()
            removed += 1
    for p, data in installed.items():
        p.write_bytes(data)
    return removed


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(py: Path, args: list[str], cache: Path) -> dict:
    """Wall seconds, CPU seconds (the command and every process it waited for: the figure
    load changes least) and the load average around one run."""
    env = dict(os.environ, YAHTZEE_SIM_CACHE=str(cache))
    env.pop("PYTHONPATH", None)          # the installed copy, not a source tree
    env.pop("NUMBA_CACHE_DIR", None)
    before = load()
    cpu = _children_cpu()
    start = time.perf_counter()
    res = subprocess.run([str(py), "-m", "yahtzee_sim", *args], env=env, capture_output=True, text=True, cwd="/")
    seconds = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if res.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({res.returncode}): {res.stderr.strip()[-500:]}")
    return {"seconds": seconds, "cpu_seconds": cpu, "load_before": before, "load_after": load()}


def shown(argv: list[str], work: Path) -> str:
    """The command as a reader would type it: this tree's files relative to it, the
    output folder as DIR."""
    out = []
    for a in argv:
        if a.startswith(str(work)):
            a = "DIR/" + a.split("/")[-1]
        elif a.startswith(str(ROOT) + "/"):
            a = a[len(str(ROOT)) + 1:]
        out.append(a)
    return " ".join(out)


def verdict(name: str, cold: dict, warm: dict) -> str:
    """The issue's target for a first run: within 3x the warm run for the 2,000,000
    optimal games, else within twice the warm run or under 10 s."""
    ratio = cold["seconds"] / warm["seconds"]
    if name.startswith("simulate optimal 2M"):
        return f"within 3x: {'met' if ratio <= 3 else '**missed**'} ({ratio:.2f}x)"
    met = [why for why, ok in (("under 10 s", cold["seconds"] < 10), ("within 2x warm", ratio <= 2)) if ok]
    return f"met ({', '.join(met)})" if met else "**missed**"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", action="store_true", help="also target and the Maxi Yatzy solves (minutes each)")
    parser.add_argument("--more", action="store_true", help="also advise, extremes, policy-value, heuristic games, "
                                                            "benchmark")
    parser.add_argument("--every", action="store_true", help="also every other command: rules, strategies, score, "
                                                             "odds, turns, head-to-head, ask, check, verify, cache, "
                                                             "run (the demo)")
    parser.add_argument("--only", action="append", default=[], help="run only the commands whose name has this text")
    parser.add_argument("--venv", help="the environment to use (made if missing); default: a new temporary one")
    parser.add_argument("--venv-per-command", action="store_true", help="a new environment for every command")
    parser.add_argument("--source", default=str(ROOT),
                        help="the source tree to install (default: this one; another checkout for a before/after)")
    parser.add_argument("--keep", action="store_true", help="keep the environment and the cache folders")
    parser.add_argument("--nothing-compiled", action="store_true",
                        help="remove every compiled kernel before each cold run (not only those a run added)")
    parser.add_argument("--warm-runs", type=int, default=1,
                        help="warm runs after the cold one; the last is reported (default 1: the run right after; "
                             "more for a command whose second run may still be compiling, e.g. benchmark: the loop "
                             "that plays optimal's games by the table its first run built)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--save", metavar="FILE", help="also write the figures to FILE (JSON), whatever is printed")
    parser.add_argument("--render", metavar="FILE", help="print the figures a --save wrote (nothing is run)")
    args = parser.parse_args()
    if args.render:
        try:
            rows = json.loads(Path(args.render).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SystemExit(f"--render: cannot read {args.render}: {exc}") from None
        print_rows(rows, args)
        return

    commands = dict(COMMANDS, **(LONG if args.long else {}), **(MORE if args.more else {}),
                    **(EVERY if args.every else {}))
    if args.only:
        commands = {k: v for k, v in commands.items() if any(o in k for o in args.only)}
    work = Path(tempfile.mkdtemp(prefix="bench-cold-"))
    venv = Path(args.venv) if args.venv else work / "venv"
    py = venv / "bin" / "python"
    rows = []
    installed = None
    install_seconds = None
    try:
        for i, (name, cmd) in enumerate(commands.items()):
            if args.venv_per_command and i:
                shutil.rmtree(venv)
            if not py.exists():
                t = time.perf_counter()
                make_venv(venv, Path(args.source))
                install_seconds = time.perf_counter() - t
                print(f"# new environment {venv}: {install_seconds:.0f} s", file=sys.stderr)
                installed = None
            if installed is None:      # what the install compiled (a reused --venv: what it had)
                installed = {} if args.nothing_compiled else kernel_files(py)
            cleared = reset_kernels(py, installed)
            cache = work / f"cache-{i}"
            cmd = [a.replace("{work}", str(work / f"out-{i}")) for a in cmd]
            cold = timed(py, cmd, cache)
            warms = [timed(py, cmd, cache) for _ in range(max(1, args.warm_runs))]
            warm = warms[-1]
            rows.append({"command": name, "argv": cmd, "shown": shown(cmd, work), "cold": cold, "warm": warm,
                         "warm_runs": warms,
                         "kernel_files_cleared": cleared, "kernels_as_installed": len(installed),
                         "nothing_compiled": args.nothing_compiled, "install_seconds": install_seconds,
                         "cores": os.cpu_count()})
            runs = ", ".join(f"{w['seconds']:.1f}" for w in warms)
            print(f"# {name}: cold {cold['seconds']:.1f} s, {cold['cpu_seconds']:.1f} cpu s "
                  f"(load {cold['load_before']:.1f}-{cold['load_after']:.1f}), warm {warm['seconds']:.1f} s, "
                  f"{warm['cpu_seconds']:.1f} cpu s (load {warm['load_before']:.1f}-{warm['load_after']:.1f})"
                  + (f"; warm runs {runs} s" if len(warms) > 1 else ""),
                  file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.save:
        Path(args.save).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print_rows(rows, args)


def print_rows(rows: list[dict], args) -> None:
    """The figures as JSON (``--json``), Markdown rows (``--markdown``) or a plain table."""
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    install = next((r["install_seconds"] for r in rows if r.get("install_seconds")), None)
    if install is not None:
        ahead = "" if any(r.get("nothing_compiled") for r in rows) else ", the kernels compiled ahead"
        print(f"install (a new environment, then pip install of the tree{ahead}): {install:.0f} s\n")
    if args.markdown:
        nothing = any(r.get("nothing_compiled", True) for r in rows)   # saved before compile-ahead: nothing
        what = "nothing compiled" if nothing else "kernels as installed"
        print(f"| command | cold: wall / CPU s (fresh install, {what}, empty cache) | warm: wall / CPU s "
              "| cold / warm (wall; CPU) | load average (1 min) cold; warm | issue 21's target |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            c, w = r["cold"], r["warm"]
            # a file saved before "shown" was kept: its work folder was a bench-cold- one
            cmd = r.get("shown") or shown(r["argv"], Path(tempfile.gettempdir()) / "bench-cold-")
            print(f"| `yahtzee-sim {cmd}` | {c['seconds']:.1f} / {c['cpu_seconds']:.1f} | "
                  f"{w['seconds']:.1f} / {w['cpu_seconds']:.1f} | {c['seconds'] / w['seconds']:.1f}x; "
                  f"{c['cpu_seconds'] / w['cpu_seconds']:.1f}x | {c['load_before']:.1f}-{c['load_after']:.1f}; "
                  f"{w['load_before']:.1f}-{w['load_after']:.1f} | {verdict(r['command'], c, w)} |")
        return
    width = max(len(r["command"]) for r in rows) if rows else 10
    print(f"{'command':<{width}}  {'cold s':>8}  {'cold cpu':>8}  {'warm s':>8}  {'warm cpu':>8}  {'cold/warm':>9}  "
          "load cold; warm")
    for r in rows:
        c, w = r["cold"], r["warm"]
        print(f"{r['command']:<{width}}  {c['seconds']:>8.1f}  {c['cpu_seconds']:>8.1f}  {w['seconds']:>8.1f}  "
              f"{w['cpu_seconds']:>8.1f}  {c['seconds'] / w['seconds']:>9.1f}  "
              f"{c['load_before']:.1f}-{c['load_after']:.1f}; {w['load_before']:.1f}-{w['load_after']:.1f}")


if __name__ == "__main__":
    main()
