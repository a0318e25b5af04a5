"""Risk decision tables stored compressed (exact/decisions.py, exact/cache.py).

A risk strategy's decision table is deflated on disk and expanded, when read, into
one file in shared memory that every process of a run maps. The reference for each
table is the one built in memory without any cache (``cache=False``); the games are
compared with those of the widget path (``table=False``), which never reads a table.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from yahtzee_sim import get_rules, simulate
from yahtzee_sim.engine import SEED_BLOCK
from yahtzee_sim.exact import cache as C
from yahtzee_sim.exact import decisions as D
from yahtzee_sim.exact.risk import solve_risk
from yahtzee_sim.strategies.risk import RiskStrategy, risk_decision_table

THETA = 0.05


def _arrays(t):
    return list(t.keeps[1:]) + [t.boxes]


def _same_table(a, b) -> None:
    for x, y in zip(_arrays(a), _arrays(b), strict=True):
        np.testing.assert_array_equal(x, y)


@pytest.fixture
def risk(tmp_path, monkeypatch):
    """yacht-classic at THETA, its table built without a cache, a private cache folder
    and shared-memory folder, and members of 1 kB and more expanded (the table's
    are 1 MB each, under the default threshold)."""
    ram = tmp_path / "ram"
    ram.mkdir()
    monkeypatch.setattr(C, "RAM_DIR", ram)
    monkeypatch.setattr(C, "MAP_AT_LEAST", 1000)
    D._MEMO.clear()
    sol = solve_risk("yacht-classic", THETA, cache=False)
    yield sol, risk_decision_table(sol, cache=False), tmp_path / "cache", ram
    D._MEMO.clear()


def _expansions(ram: Path) -> list[str]:
    return sorted(p.name for p in ram.iterdir())


def test_a_risk_table_is_stored_compressed_and_read_back_the_same(risk):
    sol, ref, where, ram = risk
    first = risk_decision_table(sol, cache_dir=where)
    assert first.cache == "miss" and C.is_compressed(first.path)
    assert os.path.getsize(first.path) < D.table_bytes(sol.rules) / 4
    _same_table(first, ref)
    # just built, it is played from the file's expansion, which a run's workers map
    names = _expansions(ram)
    assert len(names) == 3 and all(f"-{os.getpid()}-a_" in n for n in names)   # keep_1, keep_2, boxes
    assert Path(first.boxes.base.filename).name in names
    D._MEMO.clear()
    again = risk_decision_table(sol, cache_dir=where)
    assert again.cache == "hit" and again.cache_note == ""
    _same_table(again, ref)
    assert _expansions(ram) == names                            # the same expansion, mapped again


def test_the_optimal_table_stays_uncompressed_and_mapped(risk, tmp_path):
    from yahtzee_sim.exact.solver import solve

    sol = solve("yacht-classic", cache=False)
    t = D.decision_table(sol, cache_dir=tmp_path / "mean")
    assert not C.is_compressed(t.path)
    D._MEMO.clear()
    assert D.decision_table(sol, cache_dir=tmp_path / "mean").cache == "hit"
    assert _expansions(risk[3]) == []


def test_another_process_maps_the_expansion_instead_of_expanding(risk):
    """What a worker of a run does: given the file's identity as its parent verified it,
    it maps the parent's expansion (no second copy in memory, no second inflate)."""
    sol, ref, where, ram = risk
    risk_decision_table(sol, cache_dir=where)
    D._MEMO.clear()
    parent = risk_decision_table(sol, cache_dir=where)
    before = _expansions(ram)
    script = (
        "import sys, numpy as np\n"
        "from pathlib import Path\n"
        "from yahtzee_sim.exact import cache as C, decisions as D\n"
        "from yahtzee_sim.exact.risk import solve_risk\n"
        "from yahtzee_sim.strategies.risk import risk_decision_table\n"
        "C.RAM_DIR, C.MAP_AT_LEAST = Path(sys.argv[1]), 1000\n"
        f"sol = solve_risk('yacht-classic', {THETA!r}, cache=False)\n"
        "t = risk_decision_table(sol, cache_dir=sys.argv[2], trusted=tuple(int(x) for x in sys.argv[3:]))\n"
        "print(t.cache, t.boxes.base.filename if hasattr(t.boxes.base, 'filename') else None)\n"
        "print(sorted(p.name for p in Path(sys.argv[1]).iterdir()))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in [str(Path(__file__).parents[1]),
                                                                   os.environ.get("PYTHONPATH", "")] if p))
    out = subprocess.run([sys.executable, "-c", script, str(ram), str(where), *map(str, parent.file_id)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    status, mapped = out.stdout.splitlines()[0].split(" ", 1)
    assert status == "hit" and Path(mapped).parent == ram and Path(mapped).name in before
    assert out.stdout.splitlines()[1] == repr(before)          # nothing expanded there
    assert _expansions(ram) == before                           # nor left behind


def test_a_killed_process_expansion_is_removed_by_the_next(risk):
    sol, ref, where, ram = risk
    risk_decision_table(sol, cache_dir=where)
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(done.stdout)                                     # a pid that has exited
    left = ram / f"{C.EXPAND_PREFIX}{'0' * 20}-{dead}-a_boxes.npy"
    part = ram / f"{C.EXPAND_PREFIX}{'1' * 20}-{dead}-a_boxes.npy.part"
    mine = ram / "notes.npy"                                    # not named as ours: never touched
    for p in (left, part, mine):
        p.write_bytes(b"x")
    D._MEMO.clear()
    assert risk_decision_table(sol, cache_dir=where).cache == "hit"
    assert not left.exists() and not part.exists() and mine.exists()


def test_without_shared_memory_each_process_reads_its_own_copy(risk, monkeypatch):
    sol, ref, where, ram = risk
    monkeypatch.setattr(C, "RAM_DIR", None)
    risk_decision_table(sol, cache_dir=where)
    D._MEMO.clear()
    t = risk_decision_table(sol, cache_dir=where)
    assert t.cache == "hit" and _expansions(ram) == []
    _same_table(t, ref)


def test_a_damaged_compressed_file_is_rebuilt(risk):
    sol, ref, where, ram = risk
    path = risk_decision_table(sol, cache_dir=where).path
    data = bytearray(Path(path).read_bytes())
    mid = len(data) // 2
    data[mid:mid + 64] = bytes(64)                    # inside a deflated member: its CRC fails
    Path(path).write_bytes(bytes(data))
    D._MEMO.clear()
    t = risk_decision_table(sol, cache_dir=where)
    assert t.cache == "damaged" and "rebuilt and replaced" in t.cache_note
    _same_table(t, ref)
    assert not [n for n in _expansions(ram) if n.endswith(".part")]
    D._MEMO.clear()
    assert risk_decision_table(sol, cache_dir=where).cache == "hit"


def test_an_uncompressed_file_of_an_earlier_version_is_stored_again_compressed(risk):
    sol, ref, where, ram = risk
    path = D.decisions_cache_path(sol.rules, "risk", THETA, cache_dir=where)
    values = np.ascontiguousarray(sol.values, dtype=np.float64).reshape(-1)
    C.save(path, D._meta(sol.rules, "risk", THETA, values),
           {"keep_1": ref.keeps[1], "keep_2": ref.keeps[2], "boxes": ref.boxes})
    assert not C.is_compressed(path)
    t = risk_decision_table(sol, cache_dir=where)
    assert t.cache == "hit" and C.is_compressed(path) and t.file_id == C.file_identity(path)
    _same_table(t, ref)


# -- the same games ----------------------------------------------------------------------
def test_the_games_are_the_same_from_a_compressed_table_in_workers(tmp_path, monkeypatch):
    """Same seed, same risk strategy: the widget's games, the games of a table just built
    (and stored compressed), of it read back, and of two workers that reload it."""
    monkeypatch.setenv(C.CACHE_ENV, str(tmp_path))
    D._MEMO.clear()
    rules = get_rules("yacht-classic")
    n = 3 * SEED_BLOCK

    def totals(strategy, **kw):
        res = simulate(rules, strategy, n, seed=8, batch=SEED_BLOCK, **kw)
        return res.to_frame()["total"].to_numpy()

    widget = totals(RiskStrategy(THETA, table=False, progress=False))
    built = RiskStrategy(THETA, progress=False).prepare(rules)
    built.decision_table()
    assert built.decisions.cache == "miss" and C.is_compressed(built.decisions.path)
    np.testing.assert_array_equal(totals(built), widget)
    D._MEMO.clear()
    read = RiskStrategy(THETA, progress=False).prepare(rules)
    read.decision_table()
    assert read.decisions.cache == "hit"
    np.testing.assert_array_equal(totals(read), widget)
    np.testing.assert_array_equal(totals(read, backend="processes", jobs=2), widget)


def test_the_risk_values_are_stored_compressed_and_read_back_the_same(tmp_path):
    from yahtzee_sim.exact import risk as R

    R._MEMO.clear()
    ref = solve_risk("yacht-classic", -THETA, cache=False)
    a = solve_risk("yacht-classic", -THETA, cache_dir=tmp_path)
    assert a.cache == "miss" and C.is_compressed(R.risk_cache_path(a.rules, -THETA, tmp_path))
    R._MEMO.clear()
    b = solve_risk("yacht-classic", -THETA, cache_dir=tmp_path)
    assert b.cache == "hit"
    np.testing.assert_array_equal(b.values, ref.values)          # NaN where no game can be, in both
    R._MEMO.clear()


def test_a_full_shared_memory_falls_back_to_reading_here(risk, monkeypatch):
    # a full tmpfs must be refused before any page is written through the map (a write
    # into a full tmpfs kills the process with SIGBUS): the reservation's ENOSPC is the signal
    import errno

    sol, ref, where, ram = risk

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full, raising=False)
    risk_decision_table(sol, cache_dir=where)
    D._MEMO.clear()
    t = risk_decision_table(sol, cache_dir=where)
    assert t.cache == "hit" and _expansions(ram) == []        # no expansion, no partial file
    _same_table(t, ref)
