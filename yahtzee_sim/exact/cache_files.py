"""What the solver cache holds, and removing what you name (``yahtzee-sim cache``).

Every table the exact engine caches is one ``.npz`` file in the cache directory
(:func:`yahtzee_sim.exact.cache.cache_dir`), named
``{rule set}-{fingerprint}-{what}-v{version}.npz`` by the module that writes it.
:func:`cache_entries` reads those names back into (rule set, kind, detail, size,
age) without opening the files; :func:`remove_entries` deletes the ones chosen by
:func:`select_entries`. Files of other names are listed as kind ``other`` and never
matched by a rule set or a kind (only ``everything`` removes them), so nothing is
removed that was not named.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "yahtzee-81be844051928ddf-float32-v3.npz").write_bytes(b"x" * 10)
>>> _ = (d / "yahtzee-81be844051928ddf-decisions-v1.npz").write_bytes(b"x" * 20)
>>> [(e.rules, e.kind, e.size) for e in cache_entries(d)]
[('yahtzee', 'decisions', 20), ('yahtzee', 'values', 10)]
>>> [e.kind for e in remove_entries(select_entries(cache_entries(d), rules=["yahtzee"], kinds=["decisions"]))]
['decisions']
>>> [e.kind for e in cache_entries(d)]
['values']
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from . import cache as _cache

__all__ = ["KINDS", "CacheEntry", "cache_entries", "select_entries", "remove_entries"]

KINDS = {
    "values": "optimal value tables (solve)",
    "decisions": "decision tables of optimal play (simulate --strategy optimal)",
    "target": "target tables (target, play-to-win)",
    "distribution": "exact score distributions (distribution)",
    "events": "exact distributions of card events: box points, zeros, five of a kind (ask, check)",
    "risk": "risk-sensitive tables (theta): values, moments, decisions (each stands alone)",
    "other": "files of no known name in the cache directory",
}
"""Kinds of cached file, and what makes them."""

_NAME = re.compile(r"^(?P<rules>.+?)-(?P<fp>[0-9a-f]{16})-(?P<what>.+)\.npz$")
_KIND_OF = [   # (pattern of the part after the fingerprint, kind, detail)
    (re.compile(r"^(?P<d>float32|float64)-v\d+$"), "values"),
    (re.compile(r"^decisions-v\d+$"), "decisions"),
    (re.compile(r"^target-(?P<d>float\d+)-v\d+-max(?P<max>\d+)$"), "target"),
    (re.compile(r"^distribution-(?P<d>.+)-v\d+$"), "distribution"),
    (re.compile(r"^events-(?P<d>.+)-v\d+$"), "events"),
    (re.compile(r"^risk-theta(?P<d>-?[0-9.]+(?:e[-+]?\d+)?|-?inf|nan)(?:-(?P<what>decisions|moments))?-v\d+$"),
     "risk"),
]


@dataclass(frozen=True)
class CacheEntry:
    """One cached file: its rule set (as named in the file: name and options), kind,
    a detail (float type, strategy, theta, largest target), size in bytes and age in seconds."""

    path: Path
    rules: str
    kind: str
    detail: str
    size: int
    age: float

    def summary(self) -> dict:
        """The entry as JSON-able numbers and strings.

        >>> e = CacheEntry(Path("/c/x.npz"), "yahtzee", "values", "float32", 5, 60.0)
        >>> e.summary()["size_bytes"], e.summary()["age_seconds"]
        (5, 60.0)
        """
        return {"rules": self.rules, "kind": self.kind, "detail": self.detail, "size_bytes": self.size,
                "age_seconds": self.age, "file": str(self.path)}


def _classify(name: str) -> tuple[str, str, str]:
    """(rules, kind, detail) of a cache file name.

    >>> _classify("yacht+fill-in-order-7dacbb01f9cd31cb-float32-v3.npz")
    ('yacht+fill-in-order', 'values', 'float32')
    >>> _classify("yahtzee-81be844051928ddf-target-float32-v2-max300.npz")
    ('yahtzee', 'target', 'targets 0..300, float32')
    >>> _classify("yahtzee-81be844051928ddf-risk-theta0.05-decisions-v1.npz")
    ('yahtzee', 'risk', 'decisions, theta 0.05')
    >>> _classify("yahtzee-81be844051928ddf-risk-theta-0.05-v2.npz")[2]
    'values, theta -0.05'
    >>> _classify("yahtzee-81be844051928ddf-events-optimal-v1.npz")
    ('yahtzee', 'events', 'optimal')
    >>> _classify("notes.npz")
    ('', 'other', '')
    """
    m = _NAME.match(name)
    if m is None:
        return "", "other", ""
    what = m["what"]
    for pattern, kind in _KIND_OF:
        k = pattern.match(what)
        if k is None:
            continue
        if kind == "target":
            detail = f"targets 0..{k['max']}, {k['d']}"
        elif kind == "risk":
            detail = f"{k['what'] or 'values'}, theta {k['d']}"
        else:
            detail = k.groupdict().get("d") or ""
        return m["rules"], kind, detail
    return m["rules"], "other", what


def cache_entries(cache_dir: str | os.PathLike | None = None) -> list[CacheEntry]:
    """The cached files (largest first), read from their names; none if the directory is missing.

    Hidden files (a writer's unfinished temporary file) are not listed.
    """
    folder = _cache.cache_dir(cache_dir)
    if not folder.is_dir():
        return []
    now = time.time()
    out = []
    for path in folder.iterdir():
        if path.name.startswith(".") or path.suffix != ".npz" or not path.is_file():
            continue
        try:
            st = path.stat()
        except OSError:      # removed meanwhile
            continue
        rules, kind, detail = _classify(path.name)
        out.append(CacheEntry(path, rules, kind, detail, int(st.st_size), max(0.0, now - st.st_mtime)))
    return sorted(out, key=lambda e: (-e.size, e.path.name))


def select_entries(entries: list[CacheEntry], *, rules=(), kinds=(), everything: bool = False) -> list[CacheEntry]:
    """The entries named: of any of ``rules`` (a rule set's name matches it with any options;
    a name with options, as listed, only those) and of any of ``kinds``; ``everything``: all.

    A name that matches no cached file, or a kind not in :data:`KINDS`, is a
    ``ValueError`` naming the valid choices; naming nothing is one too.

    >>> e = [CacheEntry(Path("a"), "yacht+fill-in-order", "values", "", 1, 0.0)]
    >>> len(select_entries(e, rules=["yacht"]))
    1
    >>> select_entries(e, rules=["yatzy"])
    Traceback (most recent call last):
    ...
    ValueError: nothing cached for rule set 'yatzy'; cached rule sets: yacht+fill-in-order
    """
    rules, kinds = list(rules), list(kinds)
    if everything:
        return list(entries)
    if not rules and not kinds:
        raise ValueError("name what to remove: --rules NAME, --kind KIND or --all")
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"unknown kind {k!r}; valid kinds: {', '.join(KINDS)}")
    cached = sorted({e.rules for e in entries if e.rules})
    for r in rules:
        if not any(_matches(e.rules, r) for e in entries):
            raise ValueError(f"nothing cached for rule set {r!r}; cached rule sets: "
                             f"{', '.join(cached) if cached else 'none (the cache is empty)'}")
    return [e for e in entries
            if (not rules or any(_matches(e.rules, r) for r in rules)) and (not kinds or e.kind in kinds)]


def _matches(key: str, name: str) -> bool:
    """A cached rule-set key is named by itself or by its rule set's name (options aside)."""
    return bool(key) and (key == name or key.split("+", 1)[0] == name)


def remove_entries(entries: list[CacheEntry]) -> list[CacheEntry]:
    """Delete the entries' files; returns those removed (one already gone is skipped)."""
    done = []
    for e in entries:
        try:
            e.path.unlink()
        except FileNotFoundError:
            continue
        done.append(e)
    return done
