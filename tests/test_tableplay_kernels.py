"""The compiled table loop (tableplay_kernels.py) against the NumPy loop (tableplay.py).

The reference is the NumPy loop, itself tested game by game against the strategies'
own ``keep``/``box`` (test_decisions.py), and NumPy's own dice draw
(``Generator.integers``): every card, counter and bonus must be the same, bit for bit,
on several seeds and rule sets (a Yahtzee bonus with jokers, Yacht variants, Generala's
served combinations), from tapes and from the raw generator bytes.
"""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import get_rules, tableplay
from yahtzee_sim.engine import SEED_BLOCK, block_tapes, play_blocks, seed_sequence
from yahtzee_sim.exact.decisions import decision_table
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.state import GameState
from yahtzee_sim.strategies.optimal import OptimalStrategy

kx = pytest.importorskip("yahtzee_sim.tableplay_kernels")

FIELDS = ("filled", "box_scores", "fill_turn", "upper_total", "five_bonus_count", "five_count",
          "five_box_full", "served_five_count", "turn")

CASES = [
    pytest.param("yahtzee", (), id="yahtzee"),                      # Yahtzee bonus, forced jokers
    pytest.param("yahtzee-original-joker", (), id="original-joker"),
    pytest.param("yacht", (), id="yacht"),
    pytest.param("yacht", ("fill-in-order",), id="yacht+fill-in-order"),
    pytest.param("yacht", ("yacht-bonus-100",), id="yacht+bonus"),
    pytest.param("generala", (), id="generala"),                    # served combinations, doble
]


def _fresh(rules, n):
    st = GameState.new(rules, n)
    st.filled = np.ascontiguousarray(st.filled)
    return st


def _same(a: GameState, b: GameState, what: str) -> None:
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f"{what}: {f}")


@pytest.fixture(scope="module")
def tables():
    out = {}

    def get(name, options):
        key = (name, options)
        if key not in out:
            rules = get_rules(name, list(options))
            out[key] = rules, decision_table(solve(rules))
        return out[key]
    return get


@pytest.mark.parametrize("name,options", CASES)
def test_the_compiled_loop_plays_the_numpy_games(tables, name, options):
    rules, table = tables(name, options)
    n = 3 * SEED_BLOCK - 77                        # a cut last block
    for seed in (1, 2, 3):
        tape, _ = block_tapes(rules, seed, range(0, 3), rules.n_boxes, uniforms=False)
        tape = tape[:n]
        ref, comp, raw = _fresh(rules, n), _fresh(rules, n), _fresh(rules, n)
        tableplay._play_numpy(rules, table, ref, tape)
        tableplay._play_compiled(kx, rules, table, comp, tape)
        tableplay._play_raw(kx, rules, table, raw, [seed_sequence(seed, b) for b in range(3)], SEED_BLOCK)
        _same(ref, comp, f"{name} seed {seed}, from the tape")
        _same(ref, raw, f"{name} seed {seed}, from the raw bytes")
        assert ref.five_count.sum() > 0                       # the five-of-a-kind rolls were met
        if rules.five_bonus:
            assert ref.five_bonus_count.sum() > 0
        if ref.served_five_count is not None:
            assert ref.served_five_count.sum() > 0


def test_turn_by_turn_from_a_played_card(tables):
    """The compiled loop starts from any card (a table seat watched each turn)."""
    rules, table = tables("yahtzee", ())
    n = SEED_BLOCK
    tape, _ = block_tapes(rules, 5, range(0, 1), rules.n_boxes, uniforms=False)
    ref, comp = _fresh(rules, n), _fresh(rules, n)
    for t in range(rules.n_boxes):
        tableplay._play_numpy(rules, table, ref, tape[:, t:t + 1])
        tableplay._play_compiled(kx, rules, table, comp, tape[:, t:t + 1])
        _same(ref, comp, f"turn {t}")


@pytest.mark.parametrize("faces", [2, 3, 5, 6, 7, 8, 10, 12, 20])
def test_raw_bytes_give_numpys_dice(faces):
    """Lemire's rejection on the raw outputs' bytes is ``Generator.integers``' uint8 draw."""
    for key in range(4):
        ss = np.random.SeedSequence(99, spawn_key=(key,))
        want = np.random.Generator(np.random.PCG64(ss)).integers(1, faces + 1, size=(300, 37), dtype=np.uint8)
        raw = np.random.PCG64(ss).random_raw(2000).view(np.uint8)
        got = np.empty((300, 37), dtype=np.uint8)
        assert kx.decode_dice(raw, faces, tableplay._raw_threshold(faces), got) > 0
        np.testing.assert_array_equal(got, want)
        short = np.empty((300, 37), dtype=np.uint8)
        assert kx.decode_dice(raw[:100], faces, tableplay._raw_threshold(faces), short) == -1


@pytest.mark.parametrize("faces,n_dice", [(6, 5), (6, 6), (2, 5), (8, 5), (5, 4)])
def test_throw_codes_are_the_dice_one_by_one(faces, n_dice):
    """``decode_codes`` (five dice read a throw at a time, others byte by byte) is
    ``decode_dice``'s dice written as numbers, the same bytes used; a stream cut short
    anywhere gives -1."""
    threshold = tableplay._raw_threshold(faces)
    for key in range(3):
        raw = np.random.PCG64(np.random.SeedSequence(7, spawn_key=(key,))).random_raw(400).view(np.uint8)
        dice = np.empty((50, 6 * n_dice), dtype=np.uint8)
        used = kx.decode_dice(raw, faces, threshold, dice)
        want = ((dice.reshape(50, 6, n_dice).astype(np.int64) - 1) * faces ** np.arange(n_dice)).sum(axis=2)
        codes = np.empty((50, 6), dtype=np.uint16)
        assert kx.decode_codes(raw, faces, threshold, n_dice, codes) == used > 0
        np.testing.assert_array_equal(codes, want)
        for cut in (used - 1, used - 7, 3):
            assert kx.decode_codes(raw[:cut], faces, threshold, n_dice, codes) == -1
        assert kx.decode_codes(raw[:used], faces, threshold, n_dice, codes) == used


def test_the_compiled_generator_gives_numpys_raw_outputs():
    """The loop's own PCG64 (four interleaved streams) is ``PCG64.random_raw``, output for
    output, from each block's start, at lengths around its lanes."""
    for key in range(3):
        ss = np.random.SeedSequence(2026, spawn_key=(key,))
        [start] = tableplay._pcg64_starts([ss])
        for n in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1023, 25421):
            got = np.empty(n, dtype=np.uint64)
            kx.pcg64_fill(start, got)
            np.testing.assert_array_equal(got, np.random.PCG64(ss).random_raw(n), err_msg=f"key {key}, {n}")
    assert tableplay._generator_ok(kx, np.random.SeedSequence(5))


def test_a_block_short_of_bytes_is_drawn_again(tables, monkeypatch):
    rules, table = tables("yacht", ("yacht-bonus-100",))
    n = 3 * SEED_BLOCK
    seeds = [seed_sequence(4, b) for b in range(3)]
    ref = _fresh(rules, n)
    tableplay._play_raw(kx, rules, table, ref, seeds, SEED_BLOCK)
    need = tableplay._raw_draws(rules, SEED_BLOCK, 0.0)
    monkeypatch.setattr(tableplay, "_raw_draws", lambda *a: need - 60)     # every block runs out
    short = _fresh(rules, n)
    tableplay._play_raw(kx, rules, table, short, seeds, SEED_BLOCK)
    _same(ref, short, "drawn again")


@pytest.mark.parametrize("name", ["yahtzee", "generala"])
def test_the_engine_plays_the_same_games_either_way(tables, name, monkeypatch):
    """``play_blocks`` with the compiled loop (raw bytes) and with the NumPy loop."""
    rules, table = tables(name, ())
    strat = OptimalStrategy(solve(rules)).prepare(rules)
    strat._use(table)
    n = 2 * SEED_BLOCK + 300
    monkeypatch.setattr(tableplay, "MIN_GAMES_FOR_KERNEL", 0)
    tableplay.precompile(rules)
    calls = []
    real = tableplay._play_raw
    monkeypatch.setattr(tableplay, "_play_raw", lambda *a: calls.append(1) or real(*a))
    fast = play_blocks(rules, strat, 8, range(0, 3), n)
    assert calls == [1]                          # played compiled, from the raw bytes
    monkeypatch.setattr(tableplay, "KERNELS", "numpy")
    slow = play_blocks(rules, strat, 8, range(0, 3), n)
    assert fast.keys() == slow.keys()
    for k in fast:
        np.testing.assert_array_equal(fast[k], slow[k], err_msg=k)


def test_an_unreachable_card_is_refused_in_both_loops(tables):
    rules, table = tables("yahtzee", ())
    tape, _ = block_tapes(rules, 1, range(0, 1), 1, uniforms=False)
    for play in (tableplay._play_numpy, lambda *a: tableplay._play_compiled(kx, *a)):
        st = _fresh(rules, SEED_BLOCK)
        st.filled[:, 0] = True                      # Ones filled ...
        st.upper_total[5] = 10                      # ... with 10 points: no card reaches it
        with pytest.raises(ValueError, match="game 5 is in a state no game can reach"):
            play(rules, table, st, tape)


def test_free_jokers_with_a_fill_order_stay_in_numpy():
    """Where a free joker's points depend on which boxes are legal, not only filled."""
    import dataclasses

    plain = get_rules("yahtzee-free-joker")
    assert tableplay._eligible(plain)
    assert not tableplay._eligible(dataclasses.replace(plain, fill_order="in-order"))


def test_row_parts_rebuild_row_of(tables):
    rules, table = tables("yahtzee", ())
    base, pid, pat = tableplay._row_parts(table.row_of, table.n_u, table.n_flag)
    r = table.row_of.reshape(-1, table.n_u, table.n_flag)
    m, u, f = np.meshgrid(np.arange(r.shape[0]), np.arange(table.n_u), np.arange(table.n_flag), indexing="ij")
    k = m * table.n_flag + f
    off = pat[pid[k], u]
    np.testing.assert_array_equal(np.where(off < 0, -1, base[k] + off), r)


@pytest.mark.parametrize("name,options", [("yacht", ("fill-in-order",)), ("generala", ())])
def test_the_compiled_table_build_is_the_numpy_build(name, options, monkeypatch):
    """The decision table's build loops (exact/_decision_kernels.py): the same bytes."""
    from yahtzee_sim.exact import decisions as D

    rules = get_rules(name, list(options))
    sol = solve(rules)
    fast = D.decision_table(sol, cache=False)
    monkeypatch.setattr(D, "KERNELS", "numpy")
    slow = D.decision_table(sol, cache=False)
    for a, b in zip(fast.keeps[1:] + (fast.boxes, fast.served_boxes), slow.keeps[1:] + (slow.boxes, slow.served_boxes)):
        np.testing.assert_array_equal(a, b)


def test_a_loop_numba_cannot_compile_falls_back_to_numpy(tables, monkeypatch):
    from numba.core.errors import TypingError

    rules, table = tables("yacht", ())
    tableplay.precompile(rules)

    def broken(*args):
        raise TypingError("cannot compile here")
    monkeypatch.setattr(tableplay, "KERNELS", "numba")
    monkeypatch.setattr(tableplay, "MIN_GAMES_FOR_KERNEL", 0)
    monkeypatch.setattr(tableplay, "_play_compiled", broken)
    tape, _ = block_tapes(rules, 6, range(0, 1), rules.n_boxes, uniforms=False)
    got, ref = _fresh(rules, SEED_BLOCK), _fresh(rules, SEED_BLOCK)
    with pytest.warns(RuntimeWarning, match="playing in NumPy"):
        tableplay.play_games(rules, table, got, tape)
    assert tableplay.KERNELS == "numpy"
    tableplay._play_numpy(rules, table, ref, tape)
    _same(ref, got, "fallen back")


def test_only_a_large_call_starts_the_first_compilation(monkeypatch):
    """A call of a few ten thousand games plays in NumPy without starting the loop's
    compilation (about 4 CPU s, which such a call never earns back); a large one starts it
    in the background and plays in NumPy meanwhile."""
    import yahtzee_sim.forkpool as forkpool

    rules = get_rules("yahtzee")
    started = []
    monkeypatch.setattr(forkpool, "kernels_cached", lambda *k: False)      # a machine with nothing compiled
    monkeypatch.setattr(tableplay, "_COMPILING", {})
    monkeypatch.setattr(tableplay, "_READY", {})
    monkeypatch.setattr(tableplay, "precompile", lambda r, background=False, games=None: started.append((r.name, background)))
    assert tableplay._kernels(rules, tableplay.MIN_GAMES_FOR_KERNEL) is None
    assert tableplay._kernels(rules, tableplay.MIN_GAMES_TO_COMPILE - 1) is None
    assert started == []
    assert tableplay._kernels(rules, tableplay.MIN_GAMES_TO_COMPILE) is None
    assert started == [("yahtzee", True)]


def test_tapes_drawn_while_the_whole_game_loop_compiled_play_in_numpy(tables, monkeypatch):
    """A run's chunk whose seed blocks found the whole-game loop still compiling in the
    background draws tapes; by the time it plays them the compilation may have ended: it
    plays them in NumPy, not compile the turn-by-turn loop in place for them (a process
    that compiled nothing in the background still compiles that loop on first use)."""
    import yahtzee_sim.forkpool as forkpool

    rules, table = tables("yahtzee", ())
    monkeypatch.setattr(tableplay, "MIN_GAMES_FOR_KERNEL", 0)
    monkeypatch.setattr(tableplay, "_READY", {})
    monkeypatch.setattr(tableplay, "_COMPILING", {rules.n_rolls: forkpool.Compiling()})   # started, now done
    monkeypatch.setattr(forkpool, "kernels_cached", lambda *k: kx.play_games not in k)    # that loop only
    compiled = []
    monkeypatch.setattr(tableplay, "_play_compiled", lambda *a: compiled.append(1))
    tape, _ = block_tapes(rules, 6, range(0, 1), rules.n_boxes, uniforms=False)
    got, ref = _fresh(rules, SEED_BLOCK), _fresh(rules, SEED_BLOCK)
    tableplay.play_games(rules, table, got, tape)
    assert compiled == []
    tableplay._play_numpy(rules, table, ref, tape)
    _same(ref, got, "played in NumPy")
    monkeypatch.setattr(tableplay, "_COMPILING", {})
    tableplay.play_games(rules, table, _fresh(rules, SEED_BLOCK), tape)
    assert compiled == [1]


def test_a_short_run_compiles_the_loop_at_a_low_priority(monkeypatch):
    """The loop's first compilation is for the runs after a short run (which plays its
    games in NumPy meanwhile): it takes only the CPU the run leaves; a run long enough to
    play most of its games compiled has it at the usual priority."""
    import yahtzee_sim.forkpool as forkpool

    rules = get_rules("yahtzee")
    asked = []
    monkeypatch.setattr(forkpool, "kernels_cached", lambda *k: False)
    monkeypatch.setattr(forkpool, "compile_beside", lambda work, **kw: asked.append(kw["nice"]) or forkpool.Compiling())
    for games in (None, 2_000_000, tableplay.GAMES_TO_COMPILE_NOW - 1, tableplay.GAMES_TO_COMPILE_NOW):
        monkeypatch.setattr(tableplay, "_COMPILING", {})
        tableplay.precompile(rules, background=True, games=games)
    assert asked == [tableplay.COMPILE_NICE] * 3 + [0]
