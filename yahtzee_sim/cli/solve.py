"""``yahtzee-sim solve``: the optimal expected score of a rule set, exactly.

>>> from yahtzee_sim.cli import build_parser
>>> args = build_parser().parse_args(["solve", "--rules", "yacht", "--option", "no-bonus", "--no-cache"])
>>> args.rules, args.option, args.no_cache
('yacht', ['no-bonus'], True)
"""

from __future__ import annotations

SOLVE_WIDTH = 17
"""Label column of ``solve``'s result lines (as wide as ``policy-value``'s)."""


def cmd_solve(args) -> int:
    """Solve (or load from the cache) and print expected score, sd and time."""
    from ._common import call_with_progress, print_fields, print_json, progress_for, rules_from, rules_heading
    from ..exact.solver import cache_path, solve

    rules = rules_from(args)
    if args.score_only:
        return _score_only(args, rules)
    if args.down_column:
        return _down_column(args, rules)
    dtype = "float64" if args.float64 else "float32"
    try:
        with progress_for(args) as progress:
            sol = call_with_progress(solve, progress, f"solving {rules.key}", rules, dtype=dtype,
                                     cache=not args.no_cache, jobs=args.jobs)
    except ValueError as exc:
        from ..rules import catalog

        if rules.card_score is catalog.yamb_score:
            raise ValueError(f"{exc}; or the exact optimum of its Down column played alone: "
                             f"yahtzee-sim solve --rules {rules.key} --down-column") from None
        if getattr(rules, "card_points", None) is None or not _groupable(rules):
            raise
        raise ValueError(f"{exc}; or the exact optimum of its score alone, points set aside: "
                         f"yahtzee-sim solve --rules {rules.key} --score-only") from None
    s = sol.summary()
    cache_text = {"off": "not used (--no-cache)", "miss": "computed and stored",
                  "hit": "loaded from the cache", "memory": "already solved in this process",
                  "damaged": "damaged file recomputed and replaced"}
    if args.json:
        out = dict(s, options=list(rules.options), rules=rules.key,
                   cache_file=None if args.no_cache else str(cache_path(rules, dtype)))
        print_json(out)
        return 0
    print(f"{rules_heading(rules)}: optimal solitaire play")
    seconds = (f"{sol.solve_seconds:.2f} (when computed; loaded now)" if sol.cache in ("hit", "memory")
               else f"{sol.seconds:.2f} ({dtype})")
    print_fields([("expected score", f"{sol.mean:.4f}"), ("standard dev.", f"{sol.sd:.4f}"),
                  ("states solved", f"{s['states']:,}"), ("solver seconds", seconds),
                  ("cache", sol.cache_note or cache_text[sol.cache])], SOLVE_WIDTH)
    return 0


def _groupable(rules) -> bool:
    from ..exact.grouped import require_grouped

    try:
        require_grouped(rules)
    except ValueError:
        return False
    return True


def _score_only(args, rules) -> int:
    """``--score-only``: the grouped-boxes solver (Balut's score, its points set aside)."""
    from ._common import print_fields, print_json, progress_for, rules_heading
    from ..exact.grouped import solve_grouped

    with progress_for(args) as progress:
        sol = solve_grouped(rules, progress=progress)
    if args.json:
        print_json(dict(sol.summary(), options=list(rules.options)))
        return 0
    print(f"{rules_heading(rules)}: optimal solitaire play for the score alone"
          + (" (points set aside)" if getattr(rules, "card_points", None) is not None else ""))
    print_fields([("expected score", f"{sol.mean:.4f}"),
                  ("states solved", f"{sol.n_states:,} (boxes filled per group of identical boxes: "
                                    f"{', '.join(map(str, sol.groups))})"),
                  ("solver seconds", f"{sol.seconds:.2f} (float64; not cached)")], SOLVE_WIDTH)
    return 0


def _down_column(args, rules) -> int:
    """``--down-column``: Yamb's Down column played alone, exactly."""
    from ._common import print_fields, print_json, rules_heading
    from ..exact.yamb_down import solve_yamb_down

    sol = solve_yamb_down(rules)
    if args.json:
        print_json(dict(sol.summary(), options=list(rules.options)))
        return 0
    print(f"{rules_heading(rules)}: optimal play of the Down column alone (top to bottom)")
    print_fields([("expected score", f"{sol.mean:.4f} (its rows, +30 at 60, (Max - Min) x Ones)"),
                  ("states solved", f"{sol.n_states:,}"),
                  ("solver seconds", f"{sol.seconds:.2f} (float64; not cached)")], SOLVE_WIDTH)
    return 0


def add_commands(sub) -> None:
    """Register the ``solve`` subcommand."""
    from ._common import add_command, add_json_arg, add_old_spelling, positive_int

    p = add_command(sub, "solve", "exact optimal expected score and sd of a rule set", cmd_solve, rules=True)
    add_json_arg(p)
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the disk cache")
    p.add_argument("--float64", action="store_true", help="work in float64 (default: float32, same 4 printed decimals)")
    p.add_argument("--jobs", type=positive_int, default=None, metavar="N",
                   help="processes (default: the CPUs available, at most 2)")
    add_old_spelling(p, "--workers", "--jobs", type=positive_int)
    p.add_argument("--score-only", action="store_true",
                   help="the optimum of the score alone, by counts of identical boxes (Balut, points set aside)")
    p.add_argument("--down-column", action="store_true",
                   help="Yamb: the optimum of its Down column played alone (a sub-game; the whole game is too large)")
