"""Rule sets in a registry: list them, get one by name with options.

>>> from yahtzee_sim.rules import get_rules, rule_names
>>> rule_names()
['yahtzee', 'yahtzee-free-joker', 'yahtzee-original-joker', 'yacht', 'yacht-classic', 'yatzy']
>>> get_rules("yacht", ["three-dice", "no-bonus"]).n_boxes
13
"""

from __future__ import annotations

import functools
from typing import Iterable

from .base import Box, RuleSet
from .catalog import REGISTRY, RuleSpec

__all__ = ["Box", "RuleSet", "RuleSpec", "get_rules", "rule_names", "rule_options", "REGISTRY"]


def rule_names() -> list[str]:
    """Names of every registered rule set."""
    return list(REGISTRY)


def rule_options(name: str) -> dict[str, str]:
    """Options a rule set accepts, with a one-line description each."""
    return dict(_spec(name).options)


def _spec(name: str) -> RuleSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown rule set {name!r}; valid rule sets: {', '.join(REGISTRY)}") from None


def get_rules(name: str | RuleSet = "yahtzee", options: Iterable[str] = ()) -> RuleSet:
    """The rule set ``name`` with ``options`` applied (cached: same args, same object).

    >>> get_rules("yacht", ["no-such-option"])
    Traceback (most recent call last):
    ...
    ValueError: unknown option 'no-such-option' for yacht; valid options: full-house-25, straights-30-40, three-dice, five-not-full-house, no-bonus, yacht-bonus-100, fill-in-order, four-dice-of-four
    """
    if isinstance(options, str):
        raise ValueError(f"options must be a list of option names, e.g. [{options!r}], not a string")
    if isinstance(name, RuleSet):
        if tuple(options):
            raise ValueError("pass options by name together with the rule set name")
        return name
    return _build(name, frozenset(options))


@functools.lru_cache(maxsize=None)
def _build(name: str, options: frozenset[str]) -> RuleSet:
    spec = _spec(name)
    for option in sorted(options):
        if option not in spec.options:
            valid = ", ".join(spec.options) if spec.options else "(none)"
            raise ValueError(f"unknown option {option!r} for {name}; valid options: {valid}")
    return spec.build(options)
