"""Seeds (issue "one house", section 0): a spawned ``SeedSequence`` child gets its own
stream, the same child replays the same games, and an integer seed plays exactly the
games it played before the fix."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import yahtzee_sim as ys
from yahtzee_sim.engine import SpawnedSeed, block_tapes, seed_entropy
from yahtzee_sim.multiplayer import simulate_table
from yahtzee_sim.rules import get_rules


def fingerprint(a) -> str:
    return hashlib.sha256(np.asarray(a).astype("<i8").tobytes()).hexdigest()[:16]


def test_spawned_children_play_different_games_and_each_replays():
    a, b = np.random.SeedSequence(7).spawn(2)
    ra = ys.simulate("yahtzee", "keep-largest", 2048, seed=a)
    rb = ys.simulate("yahtzee", "keep-largest", 2048, seed=b)
    assert not np.array_equal(ra.games["total"], rb.games["total"])
    again = ys.simulate("yahtzee", "keep-largest", 2048, seed=np.random.SeedSequence(7).spawn(2)[0])
    assert np.array_equal(ra.games["total"], again.games["total"])
    # the result records enough to replay the run
    assert ra.seed == SpawnedSeed(7, (0,))
    replay = ys.simulate("yahtzee", "keep-largest", 2048, seed=ra.seed)
    assert np.array_equal(ra.games["total"], replay.games["total"])


def test_spawned_child_blocks_are_numpys_own_grandchildren():
    # block b of a run seeded by child c draws from c.spawn(...)[b]: numpy's spawn tree itself
    child = np.random.SeedSequence(11).spawn(3)[2]
    rules = get_rules("yahtzee")
    tape, _ = block_tapes(rules, seed_entropy(child), range(1, 2), 13, uniforms=False)
    grandchild = child.spawn(2)[1]
    expected = np.random.Generator(np.random.PCG64(grandchild)).integers(1, 7, size=(1024, 13, 3, 5), dtype=np.uint8)
    assert np.array_equal(tape, expected)


def test_integer_seeds_play_the_games_they_played_before():
    # Fingerprints recorded with the code before the spawn-key fix (commit 05e3811):
    # an integer seed, and a SeedSequence without a spawn key, keep their games.
    assert fingerprint(ys.simulate("yahtzee", "keep-largest", 2048, seed=7).games["total"]) == "dc023ad753f17298"
    same = ys.simulate("yahtzee", "keep-largest", 2048, seed=np.random.SeedSequence(7))
    assert fingerprint(same.games["total"]) == "dc023ad753f17298" and same.seed == 7
    assert fingerprint(ys.simulate("maxi-yatzy", "greedy", 1500, seed=11).games["total"]) == "0454711ec9a54c5a"
    table = simulate_table("yacht", ["greedy", "keep-largest"], 1500, seed=3)
    assert fingerprint(table.totals) == "6f6216324d622ed7"


def test_spawned_children_at_a_table_differ():
    a, b = np.random.SeedSequence(3).spawn(2)
    ta = simulate_table("yacht", ["greedy", "keep-largest"], 1024, seed=a)
    tb = simulate_table("yacht", ["greedy", "keep-largest"], 1024, seed=b)
    assert not np.array_equal(ta.totals, tb.totals)
    assert np.array_equal(ta.totals, simulate_table("yacht", ["greedy", "keep-largest"], 1024, seed=ta.seed).totals)


def test_turns_of_spawned_children_differ():
    a, b = np.random.SeedSequence(5).spawn(2)
    ra = ys.simulate_turns("yahtzee", "keep-largest", 4096, seed=a)
    rb = ys.simulate_turns("yahtzee", "keep-largest", 4096, seed=b)
    assert not ra.to_frame().equals(rb.to_frame())


def test_rng_argument():
    # SPEC 7: an int, a SeedSequence or a Generator
    by_int = ys.simulate("yatzy", "random", 1024, rng=4)
    assert np.array_equal(by_int.games["total"], ys.simulate("yatzy", "random", 1024, seed=4).games["total"])
    g1 = ys.simulate("yatzy", "random", 1024, rng=np.random.default_rng(9))
    g2 = ys.simulate("yatzy", "random", 1024, rng=np.random.default_rng(9))
    assert np.array_equal(g1.games["total"], g2.games["total"])
    assert np.array_equal(g1.games["total"], ys.simulate("yatzy", "random", 1024, seed=g1.seed).games["total"])
    with pytest.raises(ValueError, match="not both"):
        ys.simulate("yatzy", "random", 10, seed=1, rng=1)
    with pytest.raises(ValueError, match="rng must be"):
        ys.simulate("yatzy", "random", 10, rng="abc")


def test_spawned_seed_with_processes_and_checkpoint(tmp_path):
    child = np.random.SeedSequence(21).spawn(2)[1]
    serial = ys.simulate("yahtzee", "keep-largest", 3000, seed=child, batch=1024)
    ckpt = tmp_path / "run.ckpt"
    resumed = ys.simulate("yahtzee", "keep-largest", 3000, seed=child, batch=1024, checkpoint=ckpt)
    assert resumed.summary()["mean"] == serial.summary()["mean"] and resumed.seed == serial.seed
    # the checkpoint belongs to this child only: its sibling is another run
    with pytest.raises(ValueError, match="another run"):
        ys.simulate("yahtzee", "keep-largest", 3000, seed=np.random.SeedSequence(21).spawn(1)[0], batch=1024,
                    checkpoint=ckpt)
    procs = ys.simulate("yahtzee", "keep-largest", 3000, seed=child, batch=1024, backend="processes", jobs=2)
    assert np.array_equal(procs.games["total"], serial.games["total"])


# Fingerprints recorded on main before the game loops of solitaire, tables and
# seat_gain became one (commit 1bf7b01): tables of every kind of seat (a decision
# table, one that watches the table, uniforms, servida-wins, saved throws) and
# solitaire through the lean table loop keep their games.
TABLE_FINGERPRINTS = [
    ("yahtzee", ["optimal", "greedy", "random"], (), 2048, 5, {}, "abb00ec709620051"),
    ("maxi-yatzy", ["greedy", "random"], (), 1500, 11, {}, "c9fe6ea9dbcc798f"),
    ("yatzy", ["keep-largest", "optimal", "keep-largest"], (), 3000, 8, {"batch": 1024}, "0e8f5ab51a115919"),
]


@pytest.mark.parametrize("key, players, options, n, seed, kw, expected", TABLE_FINGERPRINTS,
                         ids=[c[0] for c in TABLE_FINGERPRINTS])
def test_tables_play_the_games_they_played_before(key, players, options, n, seed, kw, expected):
    assert fingerprint(simulate_table(key, players, n, seed=seed, options=options, **kw).totals) == expected


def test_watching_and_servida_tables_play_the_games_they_played_before():
    from yahtzee_sim.strategies.play_to_win import PlayToWin

    watched = simulate_table("yacht", [PlayToWin(progress=False), "optimal"], 2048, seed=1, options=["fill-in-order"])
    assert fingerprint(watched.totals) == "da3894e898be31e1"
    served = simulate_table("generala", ["greedy", "keep-largest"], 2048, seed=2, options=["servida-wins"])
    assert (fingerprint(served.totals), fingerprint(served.servida_winner)) == ("9447bb19d8d6b21c", "a89580340c271a08")


def test_seat_gain_gives_the_figures_it_gave_before():
    import json

    from yahtzee_sim.multiplayer import seat_gain

    g = seat_gain("yacht", "greedy", "keep-largest", 1, 2048, seed=1, options=["fill-in-order"])
    g.pop("seconds")
    assert hashlib.sha256(json.dumps(g, sort_keys=True).encode()).hexdigest()[:16] == "3a62dff31c719899"


@pytest.mark.parametrize("key, strategy, options, expected", [
    ("yahtzee", "optimal", (), "9e9a0b0a33163c6e"),       # the lean table loop
    ("generala", "greedy", (), "78dd04cdeb393199"),       # boxes that score by the throw
    ("yacht", "play-to-win", ("fill-in-order",), "708b48033f2d67f7"),   # alone: its tables per turn
])
def test_solitaire_plays_the_games_it_played_before(key, strategy, options, expected):
    if strategy == "play-to-win":
        from yahtzee_sim.strategies.play_to_win import PlayToWin

        strategy = PlayToWin(progress=False)
    assert fingerprint(ys.simulate(key, strategy, 2048, seed=7, options=options).games["total"]) == expected
