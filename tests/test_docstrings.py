"""Docstrings and docs name only things that exist (issue "one house": stale references
fixed): every dotted ``yahtzee_sim.…`` reference in the package's sources, the README and
``docs/`` resolves to a module or an attribute."""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import yahtzee_sim

ROOT = Path(yahtzee_sim.__file__).parent.parent
REFERENCE = re.compile(r"(yahtzee_sim(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def resolves(ref: str) -> bool:
    parts = ref.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def test_resolves_sees_a_stale_name():
    assert resolves("yahtzee_sim.exact.solver.solve")
    assert not resolves("yahtzee_sim.exact.solver.no_such_function")
    assert not resolves("yahtzee_sim.no_such_module.thing")


def test_every_dotted_reference_resolves():
    files = [*(ROOT / "yahtzee_sim").rglob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]
    refs: dict[str, set[str]] = {}
    for path in files:
        for ref in REFERENCE.findall(path.read_text(encoding="utf-8")):
            refs.setdefault(ref.rstrip("."), set()).add(str(path.relative_to(ROOT)))
    with warnings.catch_warnings():          # old addresses resolve with a deprecation warning
        warnings.simplefilter("ignore", DeprecationWarning)
        stale = {ref: sorted(where) for ref, where in refs.items() if not resolves(ref)}
    assert not stale, f"references to names that do not exist: {stale}"
