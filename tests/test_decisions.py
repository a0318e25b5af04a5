"""Decision tables (exact/decisions.py) and the lean table loop (tableplay.py).

The reference is the value-table strategies' widget path (``table=False``), which
evaluates the one-turn widget per batch and was the only path before the tables:
the tables must make the same decisions, and the lean loop must play the same
games as the generic engine, array for array.
"""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import get_rules, simulate
from yahtzee_sim.engine import SEED_BLOCK, play_blocks
from yahtzee_sim.exact import cache as _cache
from yahtzee_sim.exact import decisions as D
from yahtzee_sim.exact._solver_lattice import lattice
from yahtzee_sim.exact.solver import solve
from yahtzee_sim.strategies.optimal import OptimalStrategy


def _games(rules, strategy, n=2 * SEED_BLOCK, seed=11):
    return play_blocks(rules, strategy, seed, range(0, -(-n // SEED_BLOCK)), n)


def _same_games(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def _three_ways(rules, make):
    """Games of the lean loop, of the strategy's own table lookups, of the widget path."""
    lean = make(True).prepare(rules)
    assert lean.decisions is None
    lean.decision_table()
    assert lean.play_table is not None
    lookups = make(True).prepare(rules)
    lookups.decision_table()
    lookups.use_table = False                       # the engine asks keep() and box()
    assert lookups.play_table is None and lookups.decisions is not None
    widget = make(False).prepare(rules)
    assert widget.decisions is None and widget.play_table is None
    return _games(rules, lean), _games(rules, lookups), _games(rules, widget)


CASES = [
    pytest.param("yahtzee", (), id="yahtzee"),
    pytest.param("yacht", ("fill-in-order",), id="yacht+fill-in-order"),
    pytest.param("yacht", ("full-house-25", "straights-30-40", "yacht-bonus-100"), id="yacht+options"),
    pytest.param("yacht-classic", (), id="yacht-classic"),
    pytest.param("generala", (), id="generala"),         # served combinations
    pytest.param("generala", ("no-doble", "no-wrap-straight"), id="generala+options"),
    pytest.param("yahtzee-original-joker", (), id="yahtzee-original-joker", marks=pytest.mark.slow),
    pytest.param("kniffel", (), id="kniffel", marks=pytest.mark.slow),
    pytest.param("yatzy", (), id="yatzy", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("name,options", CASES)
def test_table_play_is_the_widget_play_game_by_game(name, options):
    rules = get_rules(name, options)
    sol = solve(rules)
    lean, lookups, widget = _three_ways(rules, lambda table: OptimalStrategy(sol, table=table))
    _same_games(lookups, widget)
    _same_games(lean, widget)


def test_risk_table_play_is_the_widget_play():
    from yahtzee_sim.exact.risk import solve_risk
    from yahtzee_sim.strategies.risk import RiskStrategy

    rules = get_rules("yacht", ["fill-in-order"])
    risk = solve_risk(rules, 0.05)
    for theta in (0.05, -0.05):
        sol = risk if theta > 0 else solve_risk(rules, theta)
        lean, lookups, widget = _three_ways(rules, lambda table: RiskStrategy(theta, sol, table=table))
        _same_games(lookups, widget)
        _same_games(lean, widget)


def test_the_loop_without_its_throw_numbers_plays_the_same(monkeypatch):
    """Rule sets whose throws are too many to number use the dice tables' prefix keys."""
    from yahtzee_sim import tableplay

    rules = get_rules("yacht", ["fill-in-order"])
    strat = OptimalStrategy().prepare(rules)
    strat.decision_table()
    numbered = _games(rules, strat)
    monkeypatch.setattr(tableplay, "MAX_CODE", 0)
    _same_games(_games(rules, strat), numbered)


@pytest.mark.parametrize("name", ["yahtzee", "generala", "kniffel"])
def test_the_table_builders_equal_their_plain_forms(name):
    """Keeps: the lattice sweep equals an argmax over each roll's sub-keep list. Boxes:
    the per-points assembly equals ``turn_options`` on every (state, roll)."""
    rules = get_rules(name)
    sol = solve(rules)
    sp = sol.space
    values = np.ascontiguousarray(sol.values).reshape(-1)
    (m, u, f), _ = D._states(sp)
    pick = np.random.default_rng(3).integers(0, len(m), 300)
    m, u, f = m[pick], u[pick], f[pick]
    plan, served = D._mean_planner(rules, values)
    kv = plan(m, u, f)
    _, sub_pos = D.sub_keep_order(rules)
    for j in range(1, rules.n_rolls):
        padded = np.vstack([kv[j], np.full((1, len(m)), -np.inf, dtype=kv[j].dtype)])
        plain = np.argmax(padded[sub_pos], axis=1).T
        np.testing.assert_array_equal(D._keep_picks(kv[j], lattice(rules.dice), D._roll_sub_pos(rules)),
                                      plain)
    for throws in ((2, 1) if served else (None,)):
        plain = D._box_picks_generic(rules, sp, values, m, u, f, np.arange(rules.dice.n_rolls), throws)
        np.testing.assert_array_equal(D._box_picks(rules, sp, values, m, u, f, throws), plain)


def test_ties_go_to_the_larger_keep():
    """Equal keep values: the pick is the keep with more dice (position 0 holds all)."""
    rules = get_rules("yacht-classic")
    lat = lattice(rules.dice)
    kv = np.zeros((rules.dice.n_keeps, 2), dtype=np.float32)
    picks = D._keep_picks(kv, lat, D._roll_sub_pos(rules))
    assert (picks == 0).all()


def test_a_table_covers_every_reachable_state():
    sol = solve("yacht", options=["fill-in-order"])
    t = D.decision_table(sol)
    sp = sol.space
    assert t.n_states == sp.n_states
    assert t.nbytes == sum(a.nbytes for a in (t.keeps[1], t.keeps[2], t.boxes, t.row_of))
    reachable = np.isfinite(sol.values.reshape(-1)) & (np.arange(sp.size) // (sp.n_u * sp.n_flag)
                                                       != (1 << sp.n_boxes) - 1)
    assert (t.row_of[reachable] >= 0).all() and (t.row_of[~reachable] < 0).all()
    assert sorted(np.unique(t.row_of[reachable])) == list(range(t.n_states))


def test_an_unreachable_position_is_refused():
    rules = get_rules("yacht", ["fill-in-order"])
    strat = OptimalStrategy().prepare(rules)
    from yahtzee_sim.state import GameState

    state = GameState.from_arrays(rules, np.zeros((1, rules.n_boxes), bool), [50])
    with pytest.raises(ValueError, match="no game can reach"):
        strat.keep(state, np.array([0]), 2, np.zeros(1))


# -- the cache ---------------------------------------------------------------------------
@pytest.fixture
def small(tmp_path):
    sol = solve("yacht-classic", cache=False)
    D._MEMO.clear()
    return sol, tmp_path


def test_a_cached_table_is_read_back(small):
    sol, where = small
    first = D.decision_table(sol, cache_dir=where)
    assert first.cache == "miss" and first.path and (where / first.path.split("/")[-1]).exists()
    D._MEMO.clear()
    again = D.decision_table(sol, cache_dir=where)
    assert again.cache == "hit" and again.cache_note == ""
    for a, b in zip(first.keeps[1:] + (first.boxes,), again.keeps[1:] + (again.boxes,)):
        np.testing.assert_array_equal(a, b)
    assert D.decision_table(sol, cache_dir=where).cache == "memory"


def test_the_table_is_the_play_table_the_engine_plays_by(small):
    """One format: a decision table is a PlayTable, its arrays plain (a cached file's
    memory maps viewed without the subclass), keyed by the state layout of the space."""
    from yahtzee_sim.tableplay import PlayTable

    sol, where = small
    D.decision_table(sol, cache_dir=where)
    D._MEMO.clear()
    t = D.decision_table(sol, cache_dir=where)
    assert t.cache == "hit" and isinstance(t, PlayTable)
    assert all(type(a) is np.ndarray for a in (t.keeps[1], t.keeps[2], t.boxes))
    assert (t.n_u, t.n_flag) == (sol.space.n_u, sol.space.n_flag)
    assert len(t.row_of) == (1 << sol.rules.n_boxes) * t.n_u * t.n_flag
    # position 0 of every roll's keeps is the whole roll held
    assert (t.sub_keep[:, 0] == sol.rules.dice.roll_keep_index).all()
    s = OptimalStrategy(sol).prepare(sol.rules)
    s._use(t)
    assert s.play_table is t


def test_a_damaged_file_is_rebuilt_with_a_note(small):
    sol, where = small
    path = D.decisions_cache_path(sol.rules, cache_dir=where)
    D.decision_table(sol, cache_dir=where)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    D._MEMO.clear()
    t = D.decision_table(sol, cache_dir=where)
    assert t.cache == "damaged" and "unreadable" in t.cache_note and "rebuilt and replaced" in t.cache_note
    D._MEMO.clear()
    assert D.decision_table(sol, cache_dir=where).cache == "hit"


def test_a_forged_file_is_refused(small):
    """A file with a valid checksum whose decisions are not its value table's."""
    sol, where = small
    t = D.decision_table(sol, cache_dir=where)
    path = D.decisions_cache_path(sol.rules, cache_dir=where)
    meta = D._meta(sol.rules, "mean", 0.0, np.ascontiguousarray(sol.values).reshape(-1))
    boxes = t.boxes.copy()
    boxes[:] = (boxes + 1) % sol.rules.n_boxes
    _cache.save(path, meta, {"keep_1": t.keeps[1], "keep_2": t.keeps[2], "boxes": boxes})
    D._MEMO.clear()
    again = D.decision_table(sol, cache_dir=where)
    assert again.cache == "damaged" and "forged or stale" in again.cache_note
    np.testing.assert_array_equal(again.boxes, t.boxes)
    _cache.save(path, meta, {"keep_1": t.keeps[1][:5], "keep_2": t.keeps[2], "boxes": t.boxes})
    D._MEMO.clear()
    assert "holds keep_1 of shape" in D.decision_table(sol, cache_dir=where).cache_note


@pytest.mark.parametrize("bad", ["keep", "box"])
def test_a_file_with_an_entry_out_of_range_is_refused(small, bad):
    """A checksummed file whose keep points past a roll's sub-keeps, or whose box is past
    the last box, is rebuilt (the range scans of the load's check)."""
    sol, where = small
    t = D.decision_table(sol, cache_dir=where)
    path = D.decisions_cache_path(sol.rules, cache_dir=where)
    meta = D._meta(sol.rules, "mean", 0.0, np.ascontiguousarray(sol.values).reshape(-1))
    keep_1, boxes = t.keeps[1].copy(), t.boxes.copy()
    if bad == "keep":       # the last roll of the last state: one past its sub-keeps
        keep_1[-1, -1] = sol.rules.dice.n_subkeeps[-1]
    else:
        boxes[-1, -1] = sol.rules.n_boxes
    _cache.save(path, meta, {"keep_1": keep_1, "keep_2": t.keeps[2], "boxes": boxes})
    D._MEMO.clear()
    again = D.decision_table(sol, cache_dir=where)
    why = "positions past a roll's sub-keeps" if bad == "keep" else "past the last box"
    assert again.cache == "damaged" and why in again.cache_note
    np.testing.assert_array_equal(again.boxes, t.boxes)


def test_a_cached_tables_check_loads_no_compiled_loop(small, monkeypatch):
    """Loading a cached table recomputes a few rows in NumPy: a process that only plays
    the table does not load the build's compiled loops (nor the solver's widget) for it."""
    from yahtzee_sim.exact import space

    sol, where = small
    D.decision_table(sol, cache_dir=where)
    D._MEMO.clear()

    def refuse():
        raise AssertionError("a compiled loop was asked for")
    monkeypatch.setattr(D, "_kernels", refuse)
    monkeypatch.setattr(space, "_kernels", refuse)
    assert D.decision_table(sol, cache_dir=where).cache == "hit"


@pytest.mark.parametrize("name,options", [("yacht-classic", ()), ("yahtzee", ("faces-3",)),
                                          ("yahtzee-original-joker", ("faces-3",)), ("generala", ()),
                                          ("yacht", ("fill-in-order",))])
def test_the_checks_numpy_decisions_are_the_built_tables(name, options):
    """The load's check decides its rows in NumPy; the table was built by the compiled
    loops: on every state of these games (jokers, served boxes) the two are the same."""
    rules = get_rules(name, options)
    sol = solve(rules)
    t = D.decision_table(sol, cache=False)
    values = np.ascontiguousarray(sol.values).reshape(-1)
    plan, served = D._mean_planner(rules, values)
    (m, u, f), _ = D._states(sol.space)
    keeps, boxes, sboxes = D._decide(rules, sol.space, values, plan, m, u, f, served, compiled=False)
    for j in range(1, rules.n_rolls):
        np.testing.assert_array_equal(keeps[j], t.keeps[j], err_msg=f"keep_{j}")
    np.testing.assert_array_equal(boxes, t.boxes)
    if served:
        np.testing.assert_array_equal(sboxes, t.served_boxes)


def test_a_table_of_other_values_is_not_used(small):
    """The file is keyed by a hash of the value table: other values, other file contents."""
    sol, where = small
    D.decision_table(sol, cache_dir=where)
    other = solve("yacht-classic", cache=False, dtype=np.float64)
    D._MEMO.clear()
    t = D.decision_table(other, cache_dir=where)
    assert t.cache == "damaged" and "other rules" in t.cache_note


def test_a_read_only_cache_still_gives_the_table(small, monkeypatch):
    sol, where = small

    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied", str(where))

    monkeypatch.setattr(_cache, "save", refuse)
    t = D.decision_table(sol, cache_dir=where)
    assert t.cache == "miss" and "could not be stored" in t.cache_note
    assert t.n_states == sol.space.n_states


def test_bad_chunk_is_refused():
    with pytest.raises(ValueError, match="chunk must be a positive integer"):
        D.decision_table(solve("yacht-classic"), chunk=0)


# -- travelling to workers ---------------------------------------------------------------
def test_a_pickled_strategy_reloads_its_table_from_the_cache():
    import io

    from yahtzee_sim.runner.backends import _Pickler, _Unpickler

    rules = get_rules("yacht", ["fill-in-order"])
    strat = OptimalStrategy().prepare(rules)
    strat.decision_table()
    buf = io.BytesIO()
    _Pickler(buf, rules).dump(strat)                # as the process backends send it
    assert strat.__getstate__()["decisions"] is None           # the table itself does not travel
    back = _Unpickler(io.BytesIO(buf.getvalue()), rules).load()
    assert back.decisions is not None and back.play_table is not None
    _same_games(_games(rules, back), _games(rules, strat))


def test_process_workers_play_the_same_games():
    serial = simulate("yacht-classic", "optimal", 3 * SEED_BLOCK, seed=4, batch=SEED_BLOCK)
    procs = simulate("yacht-classic", "optimal", 3 * SEED_BLOCK, seed=4, batch=SEED_BLOCK,
                     backend="processes", jobs=2)
    np.testing.assert_array_equal(serial.to_frame()["total"], procs.to_frame()["total"])


def test_a_table_too_large_is_refused_and_the_strategy_keeps_the_widget(monkeypatch):
    rules = get_rules("yacht-classic")
    sol = solve(rules)
    monkeypatch.setattr(D, "MAX_TABLE_BYTES", D.table_bytes(rules) - 1)
    with pytest.raises(ValueError, match="would take .* GB .* decide from the value tables"):
        D.decision_table(sol, cache=False)
    strat = OptimalStrategy(sol).prepare(rules)
    assert strat.play_table is None and strat.decisions is None
    _same_games(_games(rules, strat), _games(rules, OptimalStrategy(sol, table=False).prepare(rules)))


def test_a_table_is_built_once_a_run_is_long_enough(monkeypatch, tmp_path):
    """Not cached: the first games come from the widget, the table after enough of them;
    cached: at once. The games are the same either way."""
    from yahtzee_sim.strategies import optimal

    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(optimal, "GAMES_BEFORE_BUILD", 2 * SEED_BLOCK)
    rules = get_rules("yacht-classic")
    sol = solve(rules)
    D._MEMO.clear()
    strat = OptimalStrategy(sol).prepare(rules)
    assert strat.play_table is None
    first = _games(rules, strat, 2 * SEED_BLOCK)
    assert strat.decisions is None and strat.play_table is not None
    assert D.decisions_cache_path(rules).is_file()
    _same_games(_games(rules, strat, 2 * SEED_BLOCK), first)
    assert OptimalStrategy(sol).prepare(rules).play_table is not None      # now on disk


@pytest.mark.parametrize("backend", ["serial", "processes"])
def test_a_run_long_enough_builds_the_table_once_before_its_work_is_shipped(monkeypatch, tmp_path, backend):
    """The build is decided from the whole run's size, not from the games one process
    has played: a run of GAMES_BEFORE_BUILD games split between two workers (each
    below it) is played from the table, built once by the parent, in the same games
    as the widget plays them; a shorter run builds nothing."""
    from yahtzee_sim.strategies import optimal

    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(optimal, "GAMES_BEFORE_BUILD", 4 * SEED_BLOCK)
    rules = get_rules("yacht-classic")
    sol = solve(rules)
    D._MEMO.clear()
    jobs = {"jobs": 2} if backend == "processes" else {}
    short = OptimalStrategy(sol)
    simulate(rules, short, 3 * SEED_BLOCK, seed=3, batch=SEED_BLOCK, backend=backend, **jobs)
    assert short.decisions is None and not D.decisions_cache_path(rules).is_file()

    strat = OptimalStrategy(sol)
    res = simulate(rules, strat, 4 * SEED_BLOCK, seed=3, batch=2 * SEED_BLOCK, backend=backend, **jobs)
    assert strat.decisions is not None and D.decisions_cache_path(rules).is_file()
    widget = simulate(rules, OptimalStrategy(sol, table=False), 4 * SEED_BLOCK, seed=3, batch=SEED_BLOCK)
    np.testing.assert_array_equal(res.to_frame()["total"], widget.to_frame()["total"])


def test_a_planner_of_three_arguments_still_loads_its_cached_table(small):
    """``table_of_values`` is public: a caller's planner written before ``compiled`` existed
    (three arguments) builds its table and loads it back from the cache."""
    sol, where = small
    values = np.ascontiguousarray(sol.values).reshape(-1)
    builtin, served = D._mean_planner(sol.rules, values)

    def plan(m, u, f):
        return builtin(m, u, f)
    first = D.table_of_values(sol.rules, "mean", 0.0, values, plan, served=served, cache_dir=where)
    D._MEMO.clear()
    again = D.table_of_values(sol.rules, "mean", 0.0, values, plan, served=served, cache_dir=where)
    assert (first.cache, again.cache) == ("miss", "hit")


# -- a pass that decides its rows as it goes (no table built) ---------------------------

@pytest.mark.parametrize("name,options", [("yacht-classic", ()), ("yacht", ("fill-in-order",)),
                                          ("yahtzee", ("faces-3",)),
                                          pytest.param("yahtzee", (), marks=pytest.mark.slow)])
def test_rows_decided_as_asked_are_the_tables_bytes(name, options):
    """Every row of the table, decided on demand in shuffled chunks of another size than
    the build's: the same bytes (a state's decisions depend on it alone)."""
    rules = get_rules(name, options)
    sol = solve(rules)
    table = D.decision_table(sol, cache=False)
    rows = D.row_decisions(sol)
    np.testing.assert_array_equal(rows.row_of, table.row_of)
    order = np.random.default_rng(5).permutation(table.n_states)
    for lo in range(0, len(order), 700):
        pick = np.sort(order[lo:lo + 700])
        keeps, boxes, served = rows.decide(pick)
        np.testing.assert_array_equal(boxes, table.boxes[pick])
        for j in range(1, rules.n_rolls):
            np.testing.assert_array_equal(keeps[j], table.keeps[j][pick])
        assert served is None


@pytest.mark.parametrize("name,options", [("yacht", ()), ("yahtzee", ("faces-3",))])
def test_a_distribution_decides_its_rows_and_builds_no_table(name, options, monkeypatch, tmp_path):
    """With no table built or cached, the exact distribution and policy value of optimal
    play decide each row as the build would: no table in memory or on disk, and the
    same numbers bit for bit as the ones read from the table."""
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.policy import policy_value

    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    rules = get_rules(name, options)
    sol = solve(rules)
    D._MEMO.clear()
    decided = OptimalStrategy(sol)
    dist = distribution(rules, decided, cache=False)
    value = policy_value(rules, decided)
    assert decided.decisions is None and not D.decisions_cache_path(rules).is_file()
    read = OptimalStrategy(sol).prepare(rules)
    read.decision_table()
    np.testing.assert_array_equal(distribution(rules, read, cache=False).pmf, dist.pmf)
    again = policy_value(rules, read)
    np.testing.assert_array_equal(again.values, value.values)
    np.testing.assert_array_equal(again.second_moments, value.second_moments)


def test_a_score_and_card_events_side_by_side_build_no_table(monkeypatch, tmp_path):
    """``ask``/``check`` run optimal's score and card-events passes side by side: each
    decides its rows (no table file), the same answers as from the table."""
    from yahtzee_sim import questions
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.events import event_distribution
    from yahtzee_sim.questions.gamescope import distributions_beside
    from yahtzee_sim.questions.spec import parse_question

    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    D._MEMO.clear()
    asked = [parse_question({"ask": "mean", "event": "score", "scope": "game", "play": "optimal", "rules": "yacht"}),
             parse_question({"ask": "chance", "event": "zeros >= 1", "scope": "game", "play": "optimal",
                             "rules": "yacht"})]
    cache: dict = {}
    started = distributions_beside(asked, cache)
    try:
        answers = [questions.answer(q, games=2000, seed=1, cache=cache) for q in asked]
    finally:
        for b in started:
            b.stop()
    assert ("events beside", "yacht", "optimal") in cache          # the card events were computed beside
    rules = get_rules("yacht")
    assert not D.decisions_cache_path(rules).is_file()
    read = OptimalStrategy(solve(rules)).prepare(rules)
    read.decision_table()
    assert answers[0].exact == distribution(rules, read, cache=False).mean
    events = cache[("events", "yacht", "optimal")]
    np.testing.assert_array_equal(events.zeros_pmf, event_distribution(rules, read, cache=False).zeros_pmf)


def test_a_strategy_that_decided_rows_still_pickles_and_plays_the_same(monkeypatch, tmp_path):
    """After an exact pass decided its rows, the strategy still goes to worker processes
    (its row helper, whose planner is a closure, is left behind and made again if asked)."""
    import io

    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.runner.backends import _Pickler, _Unpickler

    monkeypatch.setenv(_cache.CACHE_ENV, str(tmp_path))
    rules = get_rules("yacht")
    strat = OptimalStrategy(solve(rules))
    first = distribution(rules, strat, cache=False)
    assert strat._row_decisions is not None
    buf = io.BytesIO()
    _Pickler(buf, rules).dump(strat)                # as the process backends send it
    again = _Unpickler(io.BytesIO(buf.getvalue()), rules).load()
    np.testing.assert_array_equal(distribution(rules, again, cache=False).pmf, first.pmf)
    _same_games(_games(rules, again), _games(rules, OptimalStrategy(solve(rules), table=False).prepare(rules)))
