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

from ..validate import whole_number

COMMON_KEYS = {"name", "title", "question", "kind", "seed", "games", "tables", "plots"}

KIND_KEYS: dict[str, set[str]] = {
    "strategies": {"rules", "options", "strategies", "baseline"},
    "head-to-head": {"rules", "options", "strategies", "exact_strategies", "opponents", "table_games"},
    "variants": {"strategy", "strategies", "yacht_options", "rule_sets"},
    "odds": {"rules", "options", "strategy", "checkpoints"},
    "claims": {"turns"},
    "family": {"rule_sets", "strategies"},
}

KIND_TABLES = {
    "strategies": ["summary", "boxes", "paired"],
    "head-to-head": ["wins", "ranking", "exact", "play-to-win"],
    "variants": ["variants", "effects"],
    "odds": ["first-roll", "per-turn", "convergence"],
    "claims": ["claims"],
    "family": ["games", "means", "exact", "points"],
}
KIND_PLOTS = {
    "strategies": ["histogram", "ecdf", "box-heatmap", "paired"],
    "head-to-head": ["win-matrix", "play-to-win"],
    "variants": ["variants", "effects"],
    "odds": ["convergence"],
    "claims": [],
    "family": ["means"],
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
    strategy: str = ""  # per kind: KIND_DEFAULTS
    baseline: str = ""
    rule_sets: tuple[str, ...] = ()
    yacht_options: tuple[str, ...] = ()
    checkpoints: tuple[int, ...] = ()
    exact_strategies: tuple[str, ...] = ()   # head-to-head: the exact win matrix's players
    opponents: tuple[int, ...] = (1, 3, 9)   # head-to-head: play-to-win against 1, 3, 9 optimal players
    table_games: int = 20_000                # head-to-head: games per play-to-win table
    turns: int = 1_000_000
    tables: tuple[str, ...] = ()
    plots: tuple[str, ...] = ()
    source: str = ""

    def scaled(self, games: int | None) -> "ExperimentSpec":
        """The same spec with another number of games (e.g. a tiny CI run)."""
        if games is None:
            return self
        _check_size(self.kind, "games", games, self.name)
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["games"] = games
        values["turns"] = min(self.turns, 10 * games)  # a tiny run stays tiny
        values["table_games"] = min(self.table_games, games)
        return ExperimentSpec(**values)


# The variants default to the rule sets of RULES.md whose exact solve takes minutes, not hours.
CLASSIC_RULE_SETS = ("yahtzee", "yahtzee-free-joker", "yahtzee-original-joker", "yacht", "yacht-classic", "yatzy")
KIND_DEFAULTS = {"odds": {"strategy": "keep-largest"},
                 "variants": {"strategy": "optimal", "rule_sets": CLASSIC_RULE_SETS}}
# Lists where an empty value would silently mean "all of them": refused.
NON_EMPTY_LISTS = {"strategies", "rule_sets", "yacht_options", "checkpoints", "exact_strategies", "opponents"}
MAX_SPEC_BYTES = 1 << 20
# Reports keep every game's scores in memory (about 56 bytes a game per strategy or variant) and the
# optimal strategy plays a few thousand games a second: beyond these a run cannot finish usefully.
MAX_GAMES = 10_000_000
MAX_TURNS = 1_000_000_000


def _as_tuple(value, key: str, name: str, item_type=str) -> tuple:
    if isinstance(value, (list, tuple)) and all(isinstance(v, item_type) and not isinstance(v, bool) for v in value):
        if key in NON_EMPTY_LISTS and not value:
            raise ValueError(f"{name}: {key} must not be empty (leave the key out to use the default)")
        if item_type is str and any(not v.strip() for v in value):
            raise ValueError(f"{name}: {key} holds an empty name: {list(value)!r}")
        twice = sorted({v for v in value if list(value).count(v) > 1})
        if twice:
            raise ValueError(f"{name}: {key} lists {', '.join(map(str, twice))} more than once")
        return tuple(value)
    raise ValueError(f"{name}: {key} must be a list of {item_type.__name__}s, got {value!r}")


def parse_spec(data: dict, *, name: str, source: str = "") -> ExperimentSpec:
    """Validate a spec dictionary (as read from TOML); every check runs before any work.

    >>> parse_spec({"kind": "strategies", "name": "../victim"}, name="x")
    Traceback (most recent call last):
    ...
    ValueError: x: report name '../victim' is not a plain name: use letters, digits, '-' and '_' only (e.g. 'my-report')
    """
    from .output import check_report_name

    if not isinstance(data, dict):
        raise ValueError(f"{name}: a spec is a table of keys, got {type(data).__name__}")
    kind = data.get("kind")
    if not isinstance(kind, str) or kind not in KIND_KEYS:
        raise ValueError(f"{name}: 'kind' must be one of {', '.join(KIND_KEYS)}, got {kind!r}")
    valid = COMMON_KEYS | KIND_KEYS[kind]
    for key in data:
        if key not in valid:
            raise ValueError(f"{name}: unknown key {key!r}; valid keys for kind {kind!r}: "
                             f"{', '.join(sorted(valid - {'kind'}))}")
    if "name" in data:
        report_name = data["name"]
        try:
            check_report_name(report_name)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    else:
        report_name = name
        try:
            check_report_name(report_name)
        except ValueError:
            raise ValueError(f"{name}: the file name {name!r} is not a plain report name (letters, digits, '-', "
                             "'_'): rename the file or set name = \"my-report\" in it") from None
    values: dict = {"name": report_name, "kind": kind, "source": source, **KIND_DEFAULTS.get(kind, {})}
    for key in ("title", "question", "rules", "strategy", "baseline"):
        if key in data:
            if not isinstance(data[key], str):
                raise ValueError(f"{name}: {key} must be a string, got {data[key]!r}")
            if not data[key].strip():
                raise ValueError(f"{name}: {key} must not be empty (leave the key out to use the default)")
            values[key] = data[key]
    for key in ("seed", "games", "turns", "table_games"):
        if key in data:
            v = whole_number(data[key], f"{name}: {key}", low=0 if key == "seed" else 1)
            if key != "seed":
                _check_size(kind, key, v, name)
            values[key] = v
    for key in ("options", "strategies", "rule_sets", "yacht_options", "exact_strategies", "tables", "plots"):
        if key in data:
            values[key] = _as_tuple(data[key], key, name)
    if "opponents" in data:
        values["opponents"] = _as_tuple(data["opponents"], "opponents", name, int)
        if not all(1 <= k < 20 for k in values["opponents"]):
            raise ValueError(f"{name}: opponents are numbers of opponents from 1 to 19, got {data['opponents']!r}")
    if "checkpoints" in data:
        values["checkpoints"] = _as_tuple(data["checkpoints"], "checkpoints", name, int)
        if min(values["checkpoints"]) < 1:
            raise ValueError(f"{name}: checkpoints must be positive numbers of turns, got {data['checkpoints']!r}")
        _check_size("odds", "turns", max(values["checkpoints"]), name)   # each is a simulation of that many turns
    for key, allowed in (("tables", KIND_TABLES[kind]), ("plots", KIND_PLOTS[kind])):
        for item in values.get(key, ()):
            if item not in allowed:
                raise ValueError(f"{name}: unknown {key[:-1]} {item!r} for kind {kind!r}; "
                                 f"valid: {', '.join(allowed) or '(none)'}")
        values.setdefault(key, tuple(allowed))
    if kind == "variants" and "strategy" in data and "strategies" in data:
        raise ValueError(f"{name}: give either strategy (one) or strategies (a list), not both")
    _check_strategy_counts(values, name)
    _check_names(values, name)
    return ExperimentSpec(**values)


def _check_size(kind: str, key: str, value: int, name: str) -> None:
    limit = MAX_TURNS if key == "turns" or (key == "games" and kind == "odds") else MAX_GAMES
    if value > limit:
        unit = "turns" if limit == MAX_TURNS else "games (every game is kept in memory for the figures)"
        raise ValueError(f"{name}: {key} = {value:,} is too many: at most {limit:,} {unit}; "
                         "`simulate --games` runs longer jobs")


def _check_strategy_counts(values: dict, name: str) -> None:
    strategies = values.get("strategies", ())
    if values["kind"] == "head-to-head" and len(strategies) == 1:
        raise ValueError(f"{name}: head-to-head needs at least two strategies, got only {strategies[0]!r}")
    if values.get("baseline") and strategies and values["baseline"] not in strategies:
        raise ValueError(f"{name}: baseline {values['baseline']!r} is not among the strategies "
                         f"({', '.join(strategies)})")


def _check_names(values: dict, name: str) -> None:
    """Rule-set, option and strategy names are checked before any work starts."""
    from ..rules import get_rules
    from ..strategies import get_strategy, strategy_names

    try:
        if "rules" in values or values["kind"] in ("strategies", "head-to-head", "odds"):
            get_rules(values.get("rules", "yahtzee"), values.get("options", ()))
        for s in values.get("strategies", ()) + values.get("exact_strategies", ()):
            get_strategy(s)
        if "strategy" in values:
            get_strategy(values["strategy"])
        if values.get("baseline") and not values.get("strategies"):
            get_strategy(values["baseline"])
            if values["baseline"] not in strategy_names():
                raise ValueError(f"baseline {values['baseline']!r} is not a built-in strategy")
        for r in values.get("rule_sets", ()):
            get_rules(r)
        for o in values.get("yacht_options", ()):
            get_rules("yacht+" + o.removeprefix("yacht+"))
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
    if not path.exists():
        raise ValueError(f"experiment file {str(path)!r} not found")
    if not path.is_file():
        raise ValueError(f"experiment file {str(path)!r} is not a file")
    try:
        if path.stat().st_size > MAX_SPEC_BYTES:
            raise ValueError(f"{path}: {path.stat().st_size:,} bytes is too large for an experiment spec "
                             f"(at most {MAX_SPEC_BYTES:,})")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read experiment file {str(path)!r}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:
        raise ValueError(f"{path}: not a usable spec (values nested too deeply)") from None
    return parse_spec(data, name=path.stem, source=str(path))
