"""The repository's own text files hold no merge-conflict markers (one was once committed
in a benchmark script, which then would not even parse)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER = re.compile(r"^(<{7}|>{7})( |$)", re.M)
SUFFIXES = {".py", ".md", ".toml", ".cfg", ".txt", ".ipynb", ".csv"}


def test_no_conflict_markers():
    bad = []
    for folder in ("yahtzee_sim", "tests", "benchmarks", "experiments", "docs", "reports"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in SUFFIXES and path.is_file() and MARKER.search(path.read_text(errors="replace")):
                bad.append(str(path.relative_to(ROOT)))
    for name in ("README.md", "CHANGELOG.md", "Makefile", "pyproject.toml"):
        path = ROOT / name
        if path.exists() and MARKER.search(path.read_text(errors="replace")):
            bad.append(name)
    assert not bad, f"merge-conflict markers in: {', '.join(bad)}"
