"""Where optimal play's CPU goes, piece by piece (issue 21: at least 1,000,000 games per
CPU second): the compiled table loop's three stages run apart on the same seed blocks,
then the whole ``simulate`` call and its fixed cost.

* ``generator``: each block's PCG64 outputs (``tableplay_kernels.pcg64_fill``);
* ``decode``: those outputs read as throws (``decode_codes``);
* ``play``: the games played from the decoded throws (``play_games``: the decision
  table's lookups, the rolls kept, the boxes scored);
* ``simulate``: ``simulate("yahtzee", "optimal", games, backend="serial")``, the CPU inside
  its chunk loop (games played, cards summed into results) and outside it (rules,
  strategy, result object: the per-call cost).

Each stage is timed with ``time.process_time`` (this process's CPU), best of ``--repeat``;
the three stages add up to the compiled loop's calls (``bench_per_core.py --only play``
prints those). The decision table is read from the cache (a first run builds it).

    .venv/bin/python benchmarks/bench_tableplay.py --games 262144
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _best(fn, repeat: int) -> float:
    """The least CPU seconds of ``repeat`` calls of ``fn``.

    >>> _best(lambda: None, 2) >= 0
    True
    """
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


def measure(games: int, repeat: int) -> dict:
    """ns per game of each stage, and the simulate call's split (see the module docstring)."""
    import numpy as np

    from yahtzee_sim import get_rules, get_strategy, simulate, tableplay
    from yahtzee_sim import tableplay_kernels as kx
    from yahtzee_sim.engine import SEED_BLOCK, _tune_allocator, seed_sequence
    from yahtzee_sim.runner import driver
    from yahtzee_sim.state import GameState

    _tune_allocator()                   # as the engine runs it
    simulate("yahtzee", "optimal", 200_000, seed=1, backend="serial")     # table, compiled loop
    rules = get_rules("yahtzee")
    table = get_strategy("optimal").prepare(rules).play_table
    blocks = -(-games // SEED_BLOCK)
    n = blocks * SEED_BLOCK
    starts = tableplay._pcg64_starts([seed_sequence(2026, b) for b in range(blocks)])
    draws = tableplay._raw_draws(rules, SEED_BLOCK, 8.0)
    width = rules.n_boxes * rules.n_rolls
    raw = np.empty((blocks, draws), dtype=np.uint64)
    codes = np.empty((blocks, SEED_BLOCK, width), dtype=np.uint16)
    threshold = tableplay._raw_threshold(rules.n_faces)

    def generate():
        for b in range(blocks):
            kx.pcg64_fill(starts[b], raw[b])

    def decode():
        for b in range(blocks):
            if kx.decode_codes(raw[b].view(np.uint8), rules.n_faces, threshold, rules.n_dice, codes[b]) < 0:
                raise SystemExit("a block ran out of bytes: run another seed")

    targs = tableplay._table_args(rules, table)

    def play():
        state = GameState.new(rules, n)
        state.filled = np.ascontiguousarray(state.filled)
        arrays, count = tableplay._state_args(rules, table, state, n)
        if kx.play_games(codes.reshape(n, width), rules.n_rolls, 0, *targs, *arrays, count) >= 0:
            raise SystemExit("a game reached a state the table has no row for")

    out = {"games": n}
    for name, fn in (("generator", generate), ("decode", decode), ("play", play)):
        fn()                            # compiled and warm
        out[f"{name}_ns_per_game"] = round(_best(fn, repeat) / n * 1e9, 1)
    in_chunks = []
    real = driver.run_chunks

    def timed(*args, **kw):
        t = time.process_time()
        try:
            return real(*args, **kw)
        finally:
            in_chunks.append(time.process_time() - t)
    import yahtzee_sim.api as api
    api.run_chunks = timed
    try:
        best = None
        for i in range(repeat):
            in_chunks.clear()
            t = time.process_time()
            simulate("yahtzee", "optimal", n, seed=2026 + i, backend="serial")
            cpu = time.process_time() - t
            if best is None or cpu < best[0]:
                best = (cpu, sum(in_chunks))
    finally:
        api.run_chunks = real
    out.update(simulate_ns_per_game=round(best[0] / n * 1e9, 1), games_per_cpu_s=round(n / best[0]),
               outside_chunks_ms=round((best[0] - best[1]) * 1e3, 2))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=262_144, help="games (whole seed blocks of 1,024)")
    p.add_argument("--repeat", type=int, default=3, help="runs of each stage; the least CPU is reported")
    p.add_argument("--json", action="store_true", help="one JSON object")
    args = p.parse_args(argv)
    if args.games <= 0 or args.repeat <= 0:
        p.error("--games and --repeat must be positive")
    load0 = os.getloadavg()[0]
    r = measure(args.games, args.repeat)
    r["load"] = f"{load0:.1f}-{os.getloadavg()[0]:.1f}"
    if args.json:
        print(json.dumps(r))
        return 0
    stages = r["generator_ns_per_game"] + r["decode_ns_per_game"] + r["play_ns_per_game"]
    print(f"optimal yahtzee play, {r['games']:,} games, CPU ns per game (best of {args.repeat}; load {r['load']}):")
    for name in ("generator", "decode", "play"):
        v = r[f"{name}_ns_per_game"]
        print(f"  {name:10s} {v:7.1f}  ({v / stages:.0%} of the compiled loop's stages)")
    print(f"  simulate   {r['simulate_ns_per_game']:7.1f}  ({r['games_per_cpu_s']:,} games per CPU second; the "
          f"stages {stages / r['simulate_ns_per_game']:.0%} of it, the rest the cards and results; "
          f"{r['outside_chunks_ms']:.2f} ms a call outside the chunk loop: rules, strategy, result object)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
