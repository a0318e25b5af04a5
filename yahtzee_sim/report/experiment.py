"""Declarative experiment specs (``experiments/*.toml``), validated up front.

A spec is a flat TOML table. ``kind`` picks the runner; every other key must be
one the runner knows, so a typo is an error that names the key, never a silently
ignored setting.

>>> spec = parse_spec({"kind": "strategies", "games": 100}, name="demo")
>>> spec.kind, spec.games, spec.rules
('strategies', 100, 'yahtzee')
>>> parse_spec({"kind": "strategies", "gmaes": 100}, name="demo")
Traceback (most recent call last):
...
ValueError: demo: unknown key 'gmaes'; valid keys for kind 'strategies': baseline, games, name, options, plots, question, rules, seed, strategies, tables, title
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields
from pathlib import Path

COMMON_KEYS = {"name", "title", "question", "kind", "seed", "games", "tables", "plots"}

KIND_KEYS: dict[str, set[str]] = {
    "strategies": {"rules", "options", "strategies", "baseline"},
    "head-to-head": {"rules", "options", "strategies"},
    "variants": {"strategy", "yacht_options", "rule_sets"},
    "odds": {"rules", "options", "strategy", "checkpoints"},
    "claims": {"turns"},
}

KIND_TABLES = {
    "strategies": ["summary", "boxes", "paired"],
    "head-to-head": ["wins", "ranking"],
    "variants": ["variants"],
    "odds": ["first-roll", "per-turn", "convergence"],
    "claims": ["claims"],
}
KIND_PLOTS = {
    "strategies": ["histogram", "ecdf", "box-heatmap", "paired"],
    "head-to-head": ["win-matrix"],
    "variants": ["variants"],
    "odds": ["convergence"],
    "claims": [],
}


@dataclass(frozen=True)
class ExperimentSpec:
    """A validated experiment (see ``experiments/`` for examples)."""

    name: str
    kind: str
    title: str = ""
    question: str = ""
    seed: int = 2026
    games: int = 100_000
    rules: str = "yahtzee"
    options: tuple[str, ...] = ()
    strategies: tuple[str, ...] = ()
    strategy: str = "optimal"
    baseline: str = ""
    rule_sets: tuple[str, ...] = ()
    yacht_options: tuple[str, ...] = ()
    checkpoints: tuple[int, ...] = ()
    turns: int = 1_000_000
    tables: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    source: str = ""

    def scaled(self, games: int | None) -> "ExperimentSpec":
        """The same spec with another number of games (e.g. a tiny CI run)."""
        if games is None:
            return self
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["games"] = games
        values["turns"] = min(self.turns, 10 * games)  # a tiny run stays tiny
        return ExperimentSpec(**values)


def _as_tuple(value, key: str, name: str, item_type=str) -> tuple:
    if isinstance(value, (list, tuple)) and all(isinstance(v, item_type) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise ValueError(f"{name}: {key} must be a list of {item_type.__name__}s, got {value!r}")


def parse_spec(data: dict, *, name: str, source: str = "") -> ExperimentSpec:
    """Validate a spec dictionary (as read from TOML)."""
    kind = data.get("kind")
    if kind not in KIND_KEYS:
        raise ValueError(f"{name}: 'kind' must be one of {', '.join(KIND_KEYS)}, got {kind!r}")
    valid = COMMON_KEYS | KIND_KEYS[kind]
    for key in data:
        if key not in valid:
            raise ValueError(f"{name}: unknown key {key!r}; valid keys for kind {kind!r}: "
                             f"{', '.join(sorted(valid - {'kind'}))}")
    values: dict = {"name": data.get("name", name), "kind": kind, "source": source}
    for key in ("title", "question", "rules", "strategy", "baseline"):
        if key in data:
            if not isinstance(data[key], str):
                raise ValueError(f"{name}: {key} must be a string, got {data[key]!r}")
            values[key] = data[key]
    for key in ("seed", "games", "turns"):
        if key in data:
            v = data[key]
            if isinstance(v, bool) or not isinstance(v, int) or v < (0 if key == "seed" else 1):
                what = "a non-negative integer" if key == "seed" else "a positive integer"
                raise ValueError(f"{name}: {key} must be {what}, got {v!r}")
            values[key] = v
    for key in ("options", "strategies", "rule_sets", "yacht_options", "tables", "plots"):
        if key in data:
            values[key] = _as_tuple(data[key], key, name)
    if "checkpoints" in data:
        values["checkpoints"] = _as_tuple(data["checkpoints"], "checkpoints", name, int)
    for key, allowed in (("tables", KIND_TABLES[kind]), ("plots", KIND_PLOTS[kind])):
        for item in values.get(key, ()):
            if item not in allowed:
                raise ValueError(f"{name}: unknown {key[:-1]} {item!r} for kind {kind!r}; "
                                 f"valid: {', '.join(allowed) or '(none)'}")
        values.setdefault(key, tuple(allowed))
    _check_names(values, name)
    return ExperimentSpec(**values)


def _check_names(values: dict, name: str) -> None:
    """Rule-set, option and strategy names are checked before any work starts."""
    from ..rules import get_rules
    from ..strategies import get_strategy

    try:
        if "rules" in values or values["kind"] in ("strategies", "head-to-head", "odds"):
            get_rules(values.get("rules", "yahtzee"), values.get("options", ()))
        for s in values.get("strategies", ()):
            get_strategy(s)
        if "strategy" in values:
            get_strategy(values["strategy"])
        for r in values.get("rule_sets", ()):
            get_rules(r)
        for o in values.get("yacht_options", ()):
            get_rules("yacht", [o])
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read and validate ``experiments/NAME.toml``.

    >>> load_spec("no/such/file.toml")
    Traceback (most recent call last):
    ...
    ValueError: experiment file 'no/such/file.toml' not found
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"experiment file {str(path)!r} not found")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from None
    return parse_spec(data, name=path.stem, source=str(path))
