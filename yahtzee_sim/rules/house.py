"""House rules from a TOML file: a rule set composed from the built-in scorers.

``get_rules("house.toml")`` (or ``get_rules(rules="house.toml")``, ``simulate("house.toml",
...)``, ``--rules house.toml`` on the command line) reads a file like this one, which
spells out Japanese Yacht (experiments/rules/yacht.toml has it whole)::

    name = "my-yacht"                 # the rule set's key; not a built-in name
    title = "Yacht, as we play it"
    dice = 5                          # 1..8 (default 5; 8 dice take up to 9 faces, 7 up to 11)
    faces = 6                         # 2..12 (default 6)
    rolls = 3                         # throws a turn, 1..5 (default 3)
    joker = "none"                    # none, forced, free, original
    fill_order = "any"                # any, in-order
    five_box = "yacht"                # the five-of-a-kind box (fixed points), for jokers and bonuses
    five_bonus = 0                    # per further five of a kind while five_box holds its points
    upper_bonus = { threshold = 63, bonus = 35 }   # or { tiers = [[63, 35], [71, 55]] }

    [[box]]
    name = "ones"
    scorer = "upper"
    face = 1
    # ... one [[box]] per box, in card order:
    [[box]]
    name = "full_house"
    scorer = "full_house"
    value = "sum"                     # sum, dice, or a number of points
    five_counts = true

Every key is checked before anything is built: a bad file gets one line naming the
bad key (or scorer, or value) and the valid ones, as a ``ValueError``.
:data:`SCORERS` lists the scorers and their keys; every box also takes ``label``,
``served`` (extra points when made by the turn's first throw, as in Generala) and
``joker_points`` (its value when a five of a kind is used as a joker).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "mini.toml"
>>> _ = path.write_text('name = "mini"\\n[[box]]\\nname = "sixes"\\nscorer = "upper"\\nface = 6\\n'
...                     '[[box]]\\nname = "chance"\\nscorer = "chance"\\n')
>>> r = load_house_rules(path)
>>> r.key, r.box_names, r.score_dice([6, 6, 1, 2, 3])
('mini', ('sixes', 'chance'), {'sixes': 12, 'chance': 18})
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from . import scoring as s
from .base import COLUMN_ORDERS, FILL_ORDERS, JOKER_POLICIES, Box, Column, RuleSet
from ..validate import whole_number

__all__ = ["load_house_rules", "house_rules_from_dict", "house_rules_from_text", "SCORERS"]

TOP_KEYS = ("name", "title", "description", "dice", "faces", "rolls", "joker", "fill_order", "five_box",
            "five_bonus", "upper_bonus", "box", "column")
BOX_KEYS = ("name", "label", "scorer", "served", "joker_points")
COLUMN_KEYS = ("name", "order", "boxes")
BONUS_KEYS = ("threshold", "bonus", "tiers")
MAX_BOXES = 100
"""The most boxes a house card may have."""


@dataclass(frozen=True)
class _Scorer:
    """A built-in scorer: its keys (with defaults; ``REQUIRED`` if none) and a factory."""

    summary: str
    keys: dict[str, Any]
    make: Callable[..., s.Scorer]


REQUIRED = object()


def _value_key(value):
    """'sum', 'dice'/'matching', or a whole number of points (as the scorers take it)."""
    return value if isinstance(value, str) else str(int(value))


SCORERS: dict[str, _Scorer] = {
    "upper": _Scorer("the dice showing `face`, summed (an upper box)", {"face": REQUIRED},
                     lambda face: s.upper(face)),
    "chance": _Scorer("the sum of the dice", {}, lambda: s.chance),
    "kind": _Scorer("at least `n` dice of one face: `value` (sum, matching: n x the face, or points) + `plus`",
                    {"n": REQUIRED, "value": "sum", "plus": 0},
                    lambda n, value, plus: s.kind_plus(n, _value_key(value), plus=plus)),
    "full_house": _Scorer("three of one face and two of another: `value` (sum, dice, or points) + `plus`; "
                          "`five_counts`: five of a kind counts too",
                          {"value": "sum", "five_counts": False, "plus": 0},
                          lambda value, five_counts, plus: _full_house(value, five_counts, plus)),
    "straight": _Scorer("a run of `length` faces (or one of `runs`): `points`",
                        {"length": REQUIRED, "points": REQUIRED, "runs": None},
                        lambda length, points, runs: s.straight(
                            length, points, runs=None if runs is None else tuple(tuple(r) for r in runs))),
    "pairs": _Scorer("`count` pairs of different faces: `value` (dice: those dice, sum, or points)",
                     {"count": REQUIRED, "value": "dice"},
                     lambda count, value: s.n_pairs(count, _value_key(value))),
    "groups": _Scorer("groups of at least `sizes` dice of different faces (e.g. [3, 3]): `value` + `plus`",
                      {"sizes": REQUIRED, "value": "sum", "plus": 0},
                      lambda sizes, value, plus: s.groups(tuple(sizes), _value_key(value), plus=plus)),
    "five_of_a_kind": _Scorer("all dice one face: `points`, or `value` = sum (+ `plus`)",
                              {"points": 50, "value": None, "plus": 0},
                              lambda points, value, plus: s.five_of_a_kind(points) if value is None and not plus
                              else _all_same(points if value is None else value, plus)),
}


def _full_house(value, five_counts: bool, plus: int) -> s.Scorer:
    if plus == 0 and value != "dice":   # the built-in scorer, so a spelled-out card is identical
        return s.full_house(_value_key(value), five_counts=five_counts)
    strict = s.groups((3, 2), _value_key(value), plus=plus)
    if not five_counts:
        return strict
    five = _all_same("sum" if value == "dice" else value, plus)   # all five dice make it

    def score(counts):
        return np.maximum(strict(counts), five(counts))

    return score


def _all_same(value, plus: int) -> s.Scorer:
    """All dice one face: the sum (``value="sum"``) or a number of points, plus ``plus``."""

    def score(counts):
        same = (counts == counts.sum(axis=-1, keepdims=True)).any(axis=-1)
        points = s.dice_sum(counts) if value == "sum" else int(value)
        return np.where(same, points + plus, 0)

    return score


class _Problems:
    """Collects where in the file we are, for one-line messages."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, message: str):
        raise ValueError(f"{self.source}: {where}{': ' if where else ''}{message}")


def _check_keys(p: _Problems, where: str, table: dict, valid) -> None:
    for key in table:
        if key not in valid:
            p.fail(where, f"unknown key {key!r}; valid keys: {', '.join(valid)}")


def _int(p: _Problems, where: str, key: str, value, low: int, high: int) -> int:
    try:
        return whole_number(value, key, low=low, high=high)    # the package's one check, told where
    except ValueError as exc:
        p.fail(where, str(exc))     # raises, naming the file and the table
        raise                       # pragma: no cover - not reached


def _value(p: _Problems, where: str, value, allowed: tuple[str, ...]):
    if isinstance(value, str) and value in allowed:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    p.fail(where, f"value must be {', '.join(allowed)} or a whole number of points, got {value!r}")


_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")


def _build_box(p: _Problems, i: int, table: dict, faces: int) -> Box:
    where = f"box {i + 1}"
    if not isinstance(table, dict):
        p.fail(where, "each [[box]] must be a table with name and scorer")
    name = table.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        p.fail(where, f"name must be lower-case letters, digits, '_' or '-', got {name!r}")
    where = f"box {i + 1} ({name})"
    scorer_name = table.get("scorer")
    if scorer_name not in SCORERS:
        p.fail(where, f"unknown scorer {scorer_name!r}; valid scorers: {', '.join(SCORERS)}")
    spec = SCORERS[scorer_name]
    _check_keys(p, where, table, BOX_KEYS + tuple(spec.keys))
    args = {}
    for key, default in spec.keys.items():
        if key not in table:
            if default is REQUIRED:
                p.fail(where, f"scorer {scorer_name} needs {key!r} ({spec.summary})")
            args[key] = default
            continue
        v = table[key]
        if key in ("face",):
            v = _int(p, where, key, v, 1, faces)
        elif key in ("n", "length", "count"):
            v = _int(p, where, key, v, 1, 12)
        elif key in ("points", "plus"):
            v = _int(p, where, key, v, 0, 10_000)
        elif key == "five_counts":
            if not isinstance(v, bool):
                p.fail(where, f"five_counts must be true or false, got {v!r}")
        elif key == "value":
            allowed = {"kind": ("sum", "matching"), "five_of_a_kind": ("sum",)}.get(scorer_name, ("sum", "dice"))
            v = _value(p, where, v, allowed)
        elif key == "sizes":
            if not (isinstance(v, list) and v and all(isinstance(k, int) and not isinstance(k, bool)
                                                       and 1 <= k <= 12 for k in v)):
                p.fail(where, f"sizes must be a list of group sizes such as [3, 2], got {v!r}")
        elif key == "runs":
            if not (isinstance(v, list) and v and all(
                    isinstance(r, list) and r and all(isinstance(f, int) and not isinstance(f, bool) and 1 <= f <= faces
                                                       for f in r) for r in v)):
                p.fail(where, f"runs must be a list of runs of faces in 1..{faces}, e.g. [[1, 2, 3, 4, 5]], got {v!r}")
        args[key] = v
    scorer = spec.make(**args)
    label = table.get("label", name.replace("_", " ").replace("-", " ").capitalize())
    if not isinstance(label, str):
        p.fail(where, f"label must be text, got {label!r}")
    joker_points = table.get("joker_points")
    if joker_points is not None:
        joker_points = _int(p, where, "joker_points", joker_points, 0, 10_000)
    served = table.get("served")
    if served is not None:
        served = _int(p, where, "served", served, 0, 10_000)
        scorer = s.served(scorer, served)
    return Box(name, label, scorer, upper_face=args["face"] if scorer_name == "upper" else None,
               joker_points=joker_points, by_throw=served is not None)


def house_rules_from_dict(data: dict, source: str = "house rules") -> RuleSet:
    """Build a rule set from the parsed contents of a house-rules file (see the module doc).

    >>> r = house_rules_from_dict({"name": "pairs", "box": [{"name": "pair", "scorer": "pairs", "count": 1}]})
    >>> r.score_dice([5, 5, 3, 3, 1])
    {'pair': 10}
    >>> house_rules_from_dict({"name": "x", "box": [{"name": "a", "scorer": "upper", "fase": 1}]})
    Traceback (most recent call last):
    ...
    ValueError: house rules: box 1 (a): unknown key 'fase'; valid keys: name, label, scorer, served, joker_points, face
    """
    from .catalog import REGISTRY

    p = _Problems(source)
    if not isinstance(data, dict):
        p.fail("", "the file must be a TOML table")
    _check_keys(p, "", data, TOP_KEYS)
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        p.fail("", f"name must be lower-case letters, digits, '_' or '-' (it is the rule set's key), got {name!r}")
    if name in REGISTRY:
        p.fail("", f"name {name!r} is a built-in rule set; pick another name for house rules")
    title = data.get("title", name)
    description = data.get("description", "")
    if not isinstance(title, str) or not isinstance(description, str):
        p.fail("", "title and description must be text")
    n_dice = _int(p, "", "dice", data.get("dice", 5), 1, 8)
    faces = _int(p, "", "faces", data.get("faces", 6), 2, 12)
    rolls = _int(p, "", "rolls", data.get("rolls", 3), 1, 5)
    joker = data.get("joker", "none")
    if joker not in JOKER_POLICIES:
        p.fail("", f"unknown joker {joker!r}; valid: {', '.join(JOKER_POLICIES)}")
    fill_order = data.get("fill_order", "any")
    if fill_order not in FILL_ORDERS:
        p.fail("", f"unknown fill_order {fill_order!r}; valid: {', '.join(FILL_ORDERS)}")
    five_bonus = _int(p, "", "five_bonus", data.get("five_bonus", 0), 0, 10_000)

    try:   # before any table is built: dice whose tables cannot fit are refused here
        from ..dice import require_tables_fit

        require_tables_fit(n_dice, faces)
    except ValueError as exc:
        p.fail("", str(exc))
    raw_boxes = data.get("box")
    if not isinstance(raw_boxes, list) or not raw_boxes:
        p.fail("", "no boxes: add one [[box]] table per box, each with a name and a scorer "
                   f"(valid scorers: {', '.join(SCORERS)})")
    if len(raw_boxes) > MAX_BOXES:
        p.fail("", f"{len(raw_boxes):,} boxes: a card has at most {MAX_BOXES} (the engine records the turn "
                   "of each box in 8 bits; the longest card of the family, Yamb, has 52)")
    boxes = [_build_box(p, i, b, faces) for i, b in enumerate(raw_boxes)]
    names = [b.name for b in boxes]
    for b in names:
        if names.count(b) > 1:
            p.fail("", f"box name {b!r} is used twice")

    tiers: tuple = ()
    bonus = data.get("upper_bonus")
    if bonus is not None:
        if not isinstance(bonus, dict):
            p.fail("upper_bonus", "must be a table: { threshold = 63, bonus = 35 } or { tiers = [[63, 35]] }")
        _check_keys(p, "upper_bonus", bonus, BONUS_KEYS)
        if "tiers" in bonus:
            if "threshold" in bonus or "bonus" in bonus:
                p.fail("upper_bonus", "give either tiers or threshold and bonus, not both")
            t = bonus["tiers"]
            if not (isinstance(t, list) and t and all(isinstance(x, list) and len(x) == 2 and all(
                    isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in x) for x in t)):
                p.fail("upper_bonus", f"tiers must be [[threshold, bonus], ...] of positive numbers, got {t!r}")
            tiers = tuple(tuple(x) for x in t)
        else:
            for k in ("threshold", "bonus"):
                if k not in bonus:
                    p.fail("upper_bonus", f"needs {k!r} (or tiers)")
            tiers = ((_int(p, "upper_bonus", "threshold", bonus["threshold"], 1, 10_000),
                      _int(p, "upper_bonus", "bonus", bonus["bonus"], 1, 10_000)),)
        if not any(b.upper_face for b in boxes):
            p.fail("upper_bonus", "an upper bonus needs upper boxes (scorer = \"upper\")")

    five_box = data.get("five_box")
    if five_box is not None and five_box not in names:
        p.fail("five_box", f"unknown box {five_box!r}; valid boxes: {', '.join(names)}")
    if (joker != "none" or five_bonus) and five_box is None:
        p.fail("", "a joker or a five_bonus needs five_box, the five-of-a-kind box")
    if joker != "none":
        upper_faces = sorted(b.upper_face for b in boxes if b.upper_face)
        if upper_faces != list(range(1, faces + 1)):
            p.fail("joker", f"a joker needs one upper box for each face 1..{faces}")

    columns = ()
    raw_columns = data.get("column")
    if raw_columns is not None:
        if fill_order != "any":
            p.fail("column", "columns order themselves; leave fill_order out")
        if not isinstance(raw_columns, list):
            p.fail("column", "use one [[column]] table per column")
        cols, seen = [], []
        for i, c in enumerate(raw_columns):
            where = f"column {i + 1}"
            if not isinstance(c, dict):
                p.fail(where, "must be a table with name, order and boxes")
            _check_keys(p, where, c, COLUMN_KEYS)
            if c.get("order", "any") not in COLUMN_ORDERS:
                p.fail(where, f"unknown order {c.get('order')!r}; valid: {', '.join(COLUMN_ORDERS)}")
            if not isinstance(c.get("name", ""), str):
                p.fail(where, f"name must be text, got {c.get('name')!r}")
            members = c.get("boxes")
            if not isinstance(members, list) or not members or any(m not in names for m in members):
                p.fail(where, f"boxes must list box names of this file ({', '.join(names)})")
            seen += members
            cols.append(Column(str(c.get("name", f"column-{i + 1}")), tuple(members), c.get("order", "any")))
        missing = [n for n in names if seen.count(n) != 1]
        if missing:
            p.fail("column", f"every box must be in exactly one column; not so for {', '.join(missing)}")
        columns = tuple(cols)

    try:
        rules = RuleSet(
            name=name, title=title, description=description or f"house rules from {source}",
            boxes=tuple(boxes), n_dice=n_dice, n_faces=faces, n_rolls=rolls, upper_bonus_tiers=tiers,
            five_box=five_box, five_bonus=five_bonus, joker=joker, fill_order=fill_order, columns=columns,
        )
    except ValueError as exc:
        p.fail("", str(exc))
    if five_box is not None:
        table = rules.score_tables[:, :, rules.five_box_index]
        is_five = rules.dice.roll_counts.max(axis=1) == n_dice
        top = int(table.max())
        if not (top > 0 and ((table > 0) == is_five).all() and (table[:, is_five] == top).all()):
            p.fail("five_box", f"{five_box!r} must pay one fixed score exactly for five of a kind "
                               "(scorer five_of_a_kind with points)")
    return rules


def house_rules_from_text(text: str, source: str = "house rules") -> RuleSet:
    """The rule set a house-rules TOML text describes (cached by its contents: the same
    text gives the same object, as worker processes need).

    >>> r = house_rules_from_text('name = "c"\\n[[box]]\\nname = "chance"\\nscorer = "chance"\\n')
    >>> r is house_rules_from_text(r.house_toml), r.n_boxes
    (True, 1)
    """
    content = text.encode("utf-8")
    return _load(source, hashlib.sha256(content).hexdigest(), content)


MAX_HOUSE_BYTES = 1 << 20
"""The largest house-rules file read (the longest sensible card is a few kilobytes)."""


def read_rules_file(path: str | os.PathLike, limit: int = MAX_HOUSE_BYTES) -> bytes:
    """The bytes of a rules file: only a regular file, and at most ``limit`` bytes.

    A FIFO would block the read forever and ``/dev/zero`` would never end, so the
    file is opened without blocking and refused unless it is a regular file; never
    more than ``limit + 1`` bytes are read (a file that grows while read is caught).

    >>> read_rules_file("/dev/zero")
    Traceback (most recent call last):
    ...
    ValueError: house rules '/dev/zero' is not a regular file (a device, FIFO or folder cannot be a rules file)
    """
    import stat

    name = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ValueError(f"cannot read house rules {name!r}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"house rules {name!r} is not a regular file (a device, FIFO or folder cannot be a "
                             "rules file)")
        if info.st_size > limit:
            raise ValueError(f"house rules {name!r}: {info.st_size:,} bytes is too large for a rules file "
                             f"(at most {limit:,})")
        parts, size = [], 0
        while size <= limit:
            part = os.read(fd, limit + 1 - size)
            if not part:
                break
            parts.append(part)
            size += len(part)
        if size > limit:
            raise ValueError(f"house rules {name!r} is larger than a rules file may be (at most {limit:,} bytes)")
        return b"".join(parts)
    except OSError as exc:
        raise ValueError(f"cannot read house rules {name!r}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def load_house_rules(path: str | os.PathLike) -> RuleSet:
    """The rule set a house-rules TOML file describes (cached by the file's contents).

    A missing or unreadable file, one that is not a regular file or is larger than
    :data:`MAX_HOUSE_BYTES`, bad TOML or a bad key gets one-line ``ValueError``.
    """
    content = read_rules_file(path)
    return _load(str(Path(path)), hashlib.sha256(content).hexdigest(), content)


_LOADED: dict[str, RuleSet] = {}


def _load(source: str, digest: str, content: bytes) -> RuleSet:
    """The rule set of a file's contents, one object per contents (wherever they were read)."""
    hit = _LOADED.get(digest)
    if hit is None:
        if len(_LOADED) >= 64:
            _LOADED.clear()
        hit = _LOADED[digest] = _parse(source, content)
    return hit


def _parse(source: str, content: bytes) -> RuleSet:
    import tomllib

    try:
        data = tomllib.loads(content.decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"{source}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML ({exc})") from None
    except RecursionError:   # the parser recurses once per level of nested arrays or tables
        raise ValueError(f"{source}: not usable house rules (arrays or tables nested too deeply)") from None
    return dataclasses.replace(house_rules_from_dict(data, source), house_toml=content.decode("utf-8"))
