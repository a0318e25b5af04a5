"""``yahtzee-sim cache``: what the solver cache holds (rule set, kind, size, age), and removing it.

``yahtzee-sim cache`` lists the cached tables, largest first, with the directory and
the total; ``yahtzee-sim cache remove --rules yatzy --kind decisions`` removes what
it names (``--all`` everything) and says how much was freed.

>>> from yahtzee_sim.cli import build_parser
>>> args = build_parser().parse_args(["cache", "remove", "--rules", "yatzy", "--kind", "decisions"])
>>> args.action, args.rules, args.kind
('remove', ['yatzy'], ['decisions'])
"""

from __future__ import annotations


def _size(n: int) -> str:
    """Bytes as the unit a reader expects.

    >>> _size(512), _size(16_781_378), _size(1_400_000_000)
    ('512 B', '16.8 MB', '1.40 GB')
    """
    if n < 1000:
        return f"{n} B"
    if n < 1_000_000:
        return f"{n / 1e3:.1f} kB"
    if n < 1_000_000_000:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e9:.2f} GB"


def _age(seconds: float) -> str:
    """Seconds as the largest whole unit.

    >>> _age(30), _age(7200), _age(3 * 86400)
    ('30 s', '2 h', '3 days')
    """
    for unit, s in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= s:
            return f"{int(seconds // s)} {unit}"
    return f"{int(seconds)} s"


def cmd_cache(args) -> int:
    """List the cache, or remove the entries named."""
    from ._common import print_json
    from ..exact.cache import cache_dir
    from ..exact.cache_files import cache_entries, remove_entries, select_entries

    folder = cache_dir()
    entries = cache_entries(folder)
    if args.action == "remove":
        chosen = select_entries(entries, rules=args.rules, kinds=args.kind, everything=args.all)
        gone = remove_entries(chosen)
        freed = sum(e.size for e in gone)
        if args.json:
            print_json({"directory": str(folder), "removed": [e.summary() for e in gone], "freed_bytes": freed})
            return 0
        for e in gone:
            print(f"removed {e.path.name} ({e.rules or '?'}, {e.kind}, {_size(e.size)})")
        print(f"{len(gone)} file{'s' if len(gone) != 1 else ''} removed, {_size(freed)} freed from {folder}")
        return 0
    if args.rules or args.kind or args.all:
        raise ValueError("--rules, --kind and --all name what to remove: yahtzee-sim cache remove ...")
    total = sum(e.size for e in entries)
    if args.json:
        print_json({"directory": str(folder), "total_bytes": total, "files": [e.summary() for e in entries]})
        return 0
    if not entries:
        print(f"the cache is empty ({folder})")
        return 0
    rows = [("rule set", "kind", "detail", "size", "age (since written)")]
    rows += [(e.rules or "?", e.kind, e.detail, _size(e.size), _age(e.age)) for e in entries]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.rjust(w) if i == 3 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip())
    print(f"{len(entries)} file{'s' if len(entries) != 1 else ''}, {_size(total)} in {folder} "
          "(remove with: yahtzee-sim cache remove --rules NAME --kind KIND, or --all)")
    return 0


def add_commands(sub) -> None:
    """Register the ``cache`` subcommand."""
    from ._common import add_json_arg

    kinds = ("values", "decisions", "target", "distribution", "events", "risk", "other")   # exact.cache_files.KINDS
    p = sub.add_parser("cache", help="list the cached tables (rule set, kind, size, age) or remove some")
    p.add_argument("action", nargs="?", choices=("list", "remove"), default="list",
                   help="list (the default) or remove the files named by --rules/--kind/--all")
    p.add_argument("--rules", action="append", default=[], metavar="NAME",
                   help="remove: the tables of this rule set, any options (or a key as listed, e.g. "
                        "yacht+fill-in-order, for those options only); repeatable")
    p.add_argument("--kind", action="append", default=[], metavar="KIND",
                   help=f"remove: the tables of this kind, one of {', '.join(kinds)}; repeatable")
    p.add_argument("--all", action="store_true", help="remove: every file of the cache")
    add_json_arg(p)
    p.set_defaults(func=cmd_cache)


__all__ = ["add_commands", "cmd_cache"]
