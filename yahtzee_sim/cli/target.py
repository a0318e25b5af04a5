"""``yahtzee-sim target``: the exact chance of reaching a target score, played for.

For each ``--target T`` it prints P(final score >= T) under target play (the strategy
``target:T=<T>``, which maximizes exactly that chance) next to the same chance under
``optimal`` (which maximizes the expected score), both exact.

>>> from yahtzee_sim.cli import build_parser
>>> a = build_parser().parse_args(["target", "--rules", "yacht", "--target", "150", "--target", "200"])
>>> a.target, a.max_target
([150, 200], None)
"""

from __future__ import annotations


def cmd_target(args) -> int:
    """Solve (or load) the target table and print both strategies' exact chances."""
    from ._common import print_json, print_wrapped, progress_for, rules_from, rules_heading
    from ..exact.distribution import distribution
    from ..exact.target import (DEFAULT_MAX_TARGET, max_possible_score, parse_target, require_target_fits,
                                target_solve)
    from ..progress import heartbeat

    rules = rules_from(args)
    targets = [parse_target(t) for t in args.target]
    max_target = max(targets + [DEFAULT_MAX_TARGET]) if args.max_target is None else \
        parse_target(args.max_target, "--max-target")
    if max(targets) > max_target:
        raise ValueError(f"--max-target {max_target} is below the target {max(targets)}")
    dtype = "float64" if args.float64 else "float32"
    require_target_fits(rules, max_target, dtype)    # before any work: solvable, and the table fits
    # a heartbeat while the work cannot report (loading a cached table takes seconds)
    with progress_for(args) as progress, heartbeat(progress, f"target play on {rules.key}") as step:
        top = max_possible_score(rules)
        if max(targets) > top:
            raise ValueError(f"target {max(targets)} is above the highest score any game of "
                             f"{rules.key} can make ({top}); choose a target in 0..{top}")
        sol = target_solve(rules, max_target, dtype=dtype, cache=not args.no_cache,
                           jobs=args.jobs, progress=step)
        mean_play = distribution(rules, "optimal", cache=not args.no_cache, progress=step)
    rows = [{"target": t, "p_reach_target_play": sol.p_reach(t)} for t in targets]
    for r in rows:
        r["p_at_least_optimal"] = mean_play.p_at_least(r["target"])
        r["gain"] = r["p_reach_target_play"] - r["p_at_least_optimal"]
    s = sol.summary()
    if args.json:
        print_json(dict(rules=rules.key, options=list(rules.options), targets=rows,
                        optimal_expected_score=mean_play.mean,
                        max_target=sol.max_target,
                        states=s["states"], table_bytes=s["table_bytes"], dtype=sol.dtype,
                        solve_seconds=sol.solve_seconds, seconds=sol.seconds, cache=sol.cache,
                        cache_note=sol.cache_note, method="exact"))
        return 0
    print(f"{rules_heading(rules)}: exact P(final score >= T), T or better")
    print(f"  {'T':>5}  {'target play':>12}  {'optimal':>12}  {'gain':>10}")
    for r in rows:
        print(f"  {r['target']:>5}  {r['p_reach_target_play']:>12.6f}  {r['p_at_least_optimal']:>12.6f}"
              f"  {r['gain']:>+10.6f}")
    print_wrapped(f"target play: for each T, the strategy target:T=<T>, which maximizes P(score >= T); "
                  f"optimal: the strategy that maximizes the expected score ({mean_play.mean:.4f}); "
                  f"gain: target play minus optimal, in probability")
    how = {"hit": "loaded from the cache", "memory": "already solved in this process",
           "miss": "computed and stored", "off": "computed (--no-cache)",
           "damaged": "damaged cache file recomputed"}[sol.cache]
    print_wrapped(f"table: targets 0..{sol.max_target} for {s['states']:,} states, "
                  f"{s['table_bytes'] / 2**20:,.1f} MiB ({sol.dtype}), {how}; solved in "
                  f"{sol.solve_seconds:.1f} s" + (f"; {sol.cache_note}" if sol.cache_note else ""))
    return 0


def add_commands(sub) -> None:
    """Register the ``target`` subcommand."""
    from ._common import add_json_arg, add_old_spelling, add_rules_args, positive_int

    p = sub.add_parser("target", help="exact chance of reaching a target score under target play")
    add_rules_args(p)
    p.add_argument("--target", type=int, action="append", required=True, metavar="T",
                   help="the score to reach, T or more (repeatable)")
    p.add_argument("--max-target", type=int, default=None, metavar="R",
                   help="solve every target 0..R at once (default: the largest T, at least 300)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the disk cache")
    p.add_argument("--float64", action="store_true", help="work in float64 (default float32, within 1e-6)")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="processes (default: the CPUs available, at most 2)")
    add_old_spelling(p, "--workers", "--jobs", type=positive_int)
    add_json_arg(p)
    p.set_defaults(func=cmd_target)
