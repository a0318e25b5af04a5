"""``import yahtzee_sim`` keeps NumPy's large arrays in ordinary pages (``limits.small_pages``).

NumPy asks Linux for transparent huge pages for every array of 4 MB or more; each fresh
one costs the kernel a 2 MB zeroing (and a compaction where it must first assemble the
page), which an exact pass writing hundreds of MB once never wins back. The pages an
array got are read from ``/proc/self/smaps`` in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from yahtzee_sim.limits import HUGEPAGE_ENV

ROOT = Path(__file__).resolve().parents[1]
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")

# a 64 MB array written once, then the huge pages of this process (kB)
PROBE = """
{first}
import numpy as np
a = np.empty(8 * 2**20)
a[:] = 1.0
print(sum(int(line.split()[1]) for line in open("/proc/self/smaps") if line.startswith("AnonHugePages:")))
"""


def _huge_kb(first: str, env: dict) -> int:
    out = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], capture_output=True, text=True,
                         check=True, env={**env, "PYTHONPATH": str(ROOT)}, cwd=ROOT).stdout
    return int(out.split()[-1])


def _madvise_mode() -> bool:
    """Huge pages only where asked for (the mode in which NumPy's request decides)."""
    return THP.is_file() and "[madvise]" in THP.read_text()


@pytest.mark.skipif(not _madvise_mode(), reason="transparent huge pages not in madvise mode here")
def test_small_pages_keeps_numpys_arrays_out_of_huge_pages():
    env = {k: v for k, v in os.environ.items() if k != HUGEPAGE_ENV}
    before = _huge_kb("", env)                       # NumPy's default: huge pages asked for
    if before == 0:
        pytest.skip("the kernel gave no huge page even when asked (none free)")
    assert _huge_kb("import yahtzee_sim", env) == 0
    assert _huge_kb("from yahtzee_sim.limits import small_pages; small_pages()", env) == 0
    # switched off after NumPy was imported: the same
    assert _huge_kb("import numpy\nfrom yahtzee_sim.limits import small_pages; small_pages()", env) == 0
    # a user's own setting is kept
    assert _huge_kb("from yahtzee_sim.limits import small_pages; small_pages()",
                    {**env, HUGEPAGE_ENV: "1"}) > 0


def test_importing_the_package_turns_them_off_unless_the_user_chose():
    env = {k: v for k, v in os.environ.items() if k != HUGEPAGE_ENV}
    probe = "import os, yahtzee_sim; print(os.environ.get({!r}))".format(HUGEPAGE_ENV)
    for given, seen in ((None, "0"), ("1", "1")):
        run_env = {**env, "PYTHONPATH": str(ROOT), **({} if given is None else {HUGEPAGE_ENV: given})}
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                             env=run_env, cwd=ROOT).stdout
        assert out.split()[-1] == seen
