"""Benchmark questions (issue 18 §3): a roll, position or turn question from a cold
process, a game question on a rule set whose tables are cached, and a file of 20
claims at the default simulation size.

Every timing is the wall time of a fresh ``python -m yahtzee_sim`` process (import,
parse, exact answer, simulation, printing), the best of ``--repeats``. The game
questions need the optimal strategy's tables and score distribution in the cache: a
first untimed run fills it.

    .venv/bin/python benchmarks/bench_questions.py               # 3 repeats
    .venv/bin/python benchmarks/bench_questions.py --repeats 1
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    ("roll", ["ask", "chance", "five_of_a_kind", "--scope", "roll"]),
    ("position", ["ask", "chance", "large_straight", "--keep", "2345", "--rolls-left", "2"]),
    ("position with a hold", ["ask", "chance", "large_straight", "--dice", "22345", "--hold", "22",
                              "--rolls-left", "2"]),
    ("turn", ["ask", "chance", "large_straight", "--scope", "turn"]),
    ("turn, mean of a box", ["ask", "mean", "box", "chance", "--scope", "turn"]),
    ("game (yahtzee, optimal)", ["ask", "chance", "upper_bonus", "--scope", "game"]),
    ("game, simulated only (zeros)", ["ask", "chance", "zeros", ">=", "1", "--scope", "game"]),
    ("table (optimal vs greedy)", ["ask", "chance", "win", "--scope", "table", "--players", "optimal", "greedy"]),
]


def _toml_value(v) -> str:
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return "{ " + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + " }"


def twenty_claims() -> str:
    """The example files' claims, each with its own rule set, the first 20."""
    claims = []
    for name in ("yahtzee", "yacht", "generala"):
        data = tomllib.loads((ROOT / "experiments" / "claims" / f"{name}.toml").read_text(encoding="utf-8"))
        for c in data["claim"]:
            claims.append({**c, "id": f"{name}-{c['id']}", "rules": data.get("rules", "yahtzee")})
    lines = ['title = "Twenty claims (benchmark)"']
    for c in claims[:20]:
        lines.append("\n[[claim]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in c.items()]
    return "\n".join(lines) + "\n"


def timed(argv: list[str], repeats: int) -> tuple[float, float]:
    """(wall, CPU) seconds of the fastest of ``repeats`` fresh processes. On a shared
    machine the CPU time (user + system of the child) is what the process itself costs."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    best = None
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "yahtzee_sim", *argv], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        dt = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        best = (dt, cpu) if best is None or dt < best[0] else best
    return best


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, load average "
          f"{os.getloadavg()[0]:.1f}, python {sys.version.split()[0]}, {os.cpu_count()} cores")
    print(f"# command: {sys.executable} benchmarks/bench_questions.py --repeats {args.repeats}")
    for _, argv_ in QUESTIONS[5:]:   # fill the caches (untimed)
        timed(argv_, 1)
    wall, cpu = timed(["--version"], args.repeats)
    print(f"# start-up alone (yahtzee-sim --version): {wall:.2f} s wall, {cpu:.2f} s CPU")
    print("| question | wall s, cold process (best of %d) | CPU s of that process |" % args.repeats)
    print("|---|---|---|")
    for label, argv_ in QUESTIONS:
        wall, cpu = timed(argv_, args.repeats)
        print(f"| {label}: `yahtzee-sim {' '.join(argv_)}` | {wall:.2f} | {cpu:.2f} |", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "twenty.toml"
        f.write_text(twenty_claims(), encoding="utf-8")
        timed(["check", str(f)], 1)   # fill the caches of yacht and generala too
        wall, cpu = timed(["check", str(f)], 1)
        print(f"| a file of 20 claims (the example files' first 20), default sizes: `yahtzee-sim check FILE` "
              f"| {wall:.2f} | {cpu:.2f} |")
    print(f"# load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
