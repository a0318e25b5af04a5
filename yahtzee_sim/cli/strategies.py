"""``yahtzee-sim strategies``: every name ``--strategy`` takes, with what it does.

>>> from yahtzee_sim.cli import build_parser
>>> build_parser().parse_args(["strategies"]).json
False
"""

from __future__ import annotations

from ._common import add_command, add_json_arg, print_json, print_wrapped


def strategy_listing() -> dict[str, str]:
    """Every name ``--strategy`` takes, with what it does: the registry, each member of
    the parametrized families (``cpu:*``, ``optimal:theta=``, ``target:T=``) and the
    table-only ``play-to-win``; the descriptions are the classes' own.

    >>> names = list(strategy_listing())
    >>> "cpu:strong" in names and "optimal:theta=<x>" in names and "play-to-win" in names
    True
    """
    from ..strategies.play_to_win import PlayToWin
    from ..strategies import STRATEGIES
    from ..strategies.levels import LEVELS, LEVEL_CLASSES
    from ..strategies.risk import RiskStrategy
    from ..strategies.target import TargetStrategy

    out = {n: c.description for n, c in STRATEGIES.items()}
    out.update({name: LEVEL_CLASSES[name.partition(":")[2]].description for name in LEVELS})
    out["optimal:theta=<x>"] = (f"{RiskStrategy.description}; theta > 0 seeks risk, < 0 avoids it, "
                                "0 is optimal (e.g. optimal:theta=0.02)")
    out["target:T=<score>"] = f"{TargetStrategy.description} (e.g. target:T=250)"
    out["play-to-win"] = f"{PlayToWin.description} (head-to-head tables only: it watches the other players)"
    return out


def cmd_strategies(args) -> int:
    listing = strategy_listing()
    if args.json:
        print_json(listing)
        return 0
    for n, text in listing.items():
        print_wrapped(f"{n}: {text}")
    print_wrapped("Your own: --strategy module:Class (a Strategy subclass importable from the current folder "
                  "or the Python path; see the README), labelled by its name attribute, else by module:Class.")
    return 0


def add_commands(sub) -> None:
    """Register the ``strategies`` subcommand."""
    add_json_arg(add_command(sub, "strategies", "list strategies", cmd_strategies))
