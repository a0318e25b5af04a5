"""Rule sets in a registry: list them, get one by name (or by key, or from a file) with options.

A rule set's :attr:`~RuleSet.key` (``"yacht+full-house-25+straights-30-40"``) is
accepted back wherever a name is: ``get_rules(key)`` is the same object.

>>> from yahtzee_sim.rules import get_rules, rule_names
>>> rule_names()[:6]
['yahtzee', 'yahtzee-free-joker', 'yahtzee-original-joker', 'yacht', 'yacht-classic', 'yatzy']
>>> get_rules("yacht", ["three-dice", "no-bonus"]).n_boxes
13
>>> r = get_rules("yacht", faces=7)
>>> r.key, r.n_boxes, r.upper_bonus_threshold
('yacht+faces-7', 13, 84)
>>> get_rules("yacht+faces-7") is r
True
"""

from __future__ import annotations

import functools
import os
from typing import Iterable

from .base import Box, Column, RuleSet
from .catalog import MAX_FACES, MIN_FACES, REGISTRY, NumberOption, RuleSpec
from ..validate import whole_number

__all__ = ["Box", "Column", "RuleSet", "RuleSpec", "NumberOption", "get_rules", "rule_names",
           "rule_options", "rule_numbers", "parse_key", "REGISTRY"]


def rule_names() -> list[str]:
    """Names of every registered rule set."""
    return list(REGISTRY)


def rule_options(name: str) -> dict[str, str]:
    """On/off options a rule set accepts, with a one-line description each.

    Numbered options (``faces-7``) are listed by :func:`rule_numbers`.

    >>> list(rule_options("kniffel"))
    ['kniffel-bonus-100', 'no-kniffel-bonus', 'free-joker']
    """
    return dict(_spec(name).options)


def rule_numbers(name: str) -> dict[str, str]:
    """Numbered options of a rule set by pattern (``faces-N``), with a description each.

    >>> rule_numbers("yahtzee")
    {'faces-N': 'dice with N faces (N upper boxes, bonus at three of each, any run); N in 2..12, default 6'}
    >>> rule_numbers("yatzy")
    {}
    """
    return {f"{n.name}-N": f"{n.summary}; N in {n.low}..{n.high}, default {n.default}"
            for n in _spec(name).numbers}


def _spec(name: str) -> RuleSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown rule set {name!r}; valid rule sets: {', '.join(REGISTRY)}") from None


def parse_key(key: str) -> tuple[str, tuple[str, ...]]:
    """Split a key the tool prints into the rule-set name and its options.

    >>> parse_key("yacht+full-house-25+straights-30-40")
    ('yacht', ('full-house-25', 'straights-30-40'))
    """
    parts = [p.strip() for p in str(key).split("+")]
    if not all(parts):
        raise ValueError(f"malformed rule-set key {key!r}: expected name+option+option, e.g. yacht+no-bonus")
    return parts[0], tuple(parts[1:])


def _is_rules_file(name) -> bool:
    return isinstance(name, os.PathLike) or (isinstance(name, str) and name.lower().endswith(".toml"))


def get_rules(
    name: str | RuleSet | os.PathLike = "yahtzee",
    options: Iterable[str] = (),
    *,
    faces: int | None = None,
    rules: str | os.PathLike | None = None,
) -> RuleSet:
    """The rule set ``name`` with ``options`` applied (cached: same rules, same object).

    ``name`` may be a key the tool printed (``"yacht+no-bonus"``), and an option may
    join several with ``+`` (``"no-bonus+three-dice"``). ``faces=7`` is the option
    ``faces-7`` of the rule sets that take it. A path to a ``.toml`` file (as ``name``
    or ``rules=``) builds a house rule set (:mod:`yahtzee_sim.rules.house`).

    >>> get_rules("yacht", ["no-such-option"])
    Traceback (most recent call last):
    ...
    ValueError: unknown option 'no-such-option' for yacht; valid options: full-house-25, straights-30-40, three-dice, five-not-full-house, no-bonus, yacht-bonus-100, fill-in-order, four-dice-of-four, faces-N (N in 2..12)
    >>> get_rules("yacht", faces=13)
    Traceback (most recent call last):
    ...
    ValueError: faces must be an integer in 2..12, got 13
    """
    if isinstance(options, str):
        raise ValueError(f"options must be a list of option names, e.g. [{options!r}], not a string")
    if options is None:
        options = ()
    try:
        options = tuple(options)
    except TypeError:
        raise ValueError(f"options must be a list of option names, got {options!r}") from None
    for o in options:
        if not isinstance(o, str):
            raise ValueError(f"options must be option names (strings), got {o!r}")
    if rules is not None:
        if name != "yahtzee" and name is not None:
            raise ValueError("give either a rule-set name or rules=<file>, not both")
        name = rules
    if isinstance(name, RuleSet):
        if options or faces is not None:
            raise ValueError("pass options by name together with the rule set name")
        return name
    if _is_rules_file(name):
        if options or faces is not None:
            raise ValueError("a house rule file takes no options: write them into the file")
        from .house import load_house_rules

        return load_house_rules(name)
    if not isinstance(name, str):
        raise ValueError(f"a rule set is named by a string, got {name!r}; valid rule sets: {', '.join(REGISTRY)}")
    base, from_key = parse_key(name)
    flat = list(from_key)
    for o in options:
        flat.extend(parse_key("x+" + o)[1] if o else [o])
    if faces is not None:
        flat.append(f"faces-{whole_number(faces, 'faces', low=MIN_FACES, high=MAX_FACES)}")
    return _build(base, frozenset(flat))


@functools.lru_cache(maxsize=None)
def _build(name: str, options: frozenset[str]) -> RuleSet:
    spec = _spec(name)
    switches, numbers = set(), {}
    for option in sorted(options):
        if option in spec.options:
            switches.add(option)
            continue
        for num in spec.numbers:
            value = num.parse(option)
            if value is not None:
                if num.name in numbers and numbers[num.name] != value:
                    raise ValueError(f"{num.name} given twice ({num.name}-{numbers[num.name]}, {option})")
                numbers[num.name] = value
                break
        else:
            valid = list(spec.options) + [f"{n.name}-N (N in {n.low}..{n.high})" for n in spec.numbers]
            raise ValueError(f"unknown option {option!r} for {name}; valid options: {', '.join(valid) or '(none)'}")
    for a, b in spec.conflicts:
        if a in switches and b in switches:
            raise ValueError(f"options {a} and {b} of {name} cannot be combined")
    canonical = frozenset(switches) | {o for n in spec.numbers
                                      if (o := n.spell(numbers.get(n.name, n.default)))}
    if canonical != options:   # faces-6 is the rule set without it: one object per rule set
        return _build(name, canonical)
    return spec.build(frozenset(switches), **numbers)
