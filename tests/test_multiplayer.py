"""The multiplayer simulator and the opponent-aware player."""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.winodds import win_odds
from yahtzee_sim.engine import SEED_BLOCK, block_tapes
from yahtzee_sim.multiplayer import seat_entropy, seat_gain, simulate_table
from yahtzee_sim.strategies.play_to_win import PlayToWin
from yahtzee_sim.rules import get_rules
from yahtzee_sim.state import GameState
from yahtzee_sim.stats import proportion_ci
from yahtzee_sim.strategy import Strategy, best_legal

OPTS = ["fill-in-order"]


def test_common_random_numbers_per_seat_and_batches():
    a = simulate_table("yacht", ["greedy", "keep-largest"], 3000, seed=9, options=OPTS)
    b = simulate_table("yacht", ["greedy", "random"], 3000, seed=9, options=OPTS, batch=1024)
    assert (a.totals[:, 0] == b.totals[:, 0]).all()        # seat 1's dice and play unchanged
    assert not (a.totals[:, 1] == b.totals[:, 1]).all()
    c = simulate_table("yacht", ["greedy", "keep-largest"], 3000, seed=10, options=OPTS)
    assert not (a.totals == c.totals).all()


def test_simulated_rates_match_exact_odds():
    res = simulate_table("yacht", ["greedy", "keep-largest", "keep-largest"], 30_000, seed=4,
                         options=OPTS)
    odds = win_odds([distribution("yacht", s, options=OPTS) for s in ("greedy", "keep-largest",
                                                                         "keep-largest")])
    win, tie = res.outcomes()
    for s in range(3):
        ci = proportion_ci(int(win[:, s].sum()), res.n_games, level=0.999)
        assert ci.low <= odds.p_win[s] <= ci.high
        ci = proportion_ci(int(tie[:, s].sum()), res.n_games, level=0.999)
        assert ci.low <= odds.p_tie[s] <= ci.high
    frame = res.to_frame()
    assert list(frame.index) == ["greedy", "keep-largest (seat 2)", "keep-largest (seat 3)"]


def test_play_to_win_alone_is_optimal():
    """Without a table to look at it plays the expected-score optimum, game for game."""
    a = simulate("yacht", PlayToWin(), 2048, options=OPTS, seed=3, keep_games=True)
    b = simulate("yacht", "optimal", 2048, options=OPTS, seed=3, keep_games=True)
    assert (a.games["total"] == b.games["total"]).all()


@pytest.mark.parametrize("key", ["generala", "yamb", "maxi-yatzy"])
def test_play_to_win_refuses_what_the_risk_solver_cannot_model(key):
    with pytest.raises(ValueError, match="play-to-win"):
        simulate_table(key, [PlayToWin(), "optimal"], 10)


def test_play_to_win_bad_parameters():
    with pytest.raises(ValueError, match="must include 0"):
        PlayToWin([0.01, 0.02])
    with pytest.raises(ValueError, match="theta must be a number"):
        PlayToWin([0, 2.0])


def _slow_path(monkeypatch):
    """Play every seat through the engine's turn loop (keep and box, move checks)."""
    import yahtzee_sim.runner.plan as plan

    lean = plan.play_table_blocks
    monkeypatch.setattr(plan, "play_table_blocks", lambda *a, **k: lean(*a, **k, lean=False))


@pytest.mark.parametrize("key, options, seats", [
    ("yacht", OPTS, 2), pytest.param("yacht-classic", [], 3, marks=pytest.mark.slow)])
def test_play_to_win_plays_legal_games_by_its_tables(monkeypatch, key, options, seats):
    """The lean table loop (each theta's games by its decision table) plays the same games
    as the engine's turn loop, whose move checks refuse an illegal keep or box; the
    opponents play the games of optimal against optimal (their own dice, they do not look)."""
    players = [PlayToWin()] + ["optimal"] * (seats - 1)
    a = simulate_table(key, players, 3000, seed=2, options=options)
    b = simulate_table(key, ["optimal"] * seats, 3000, seed=2, options=options)
    assert (a.totals[:, 1:] == b.totals[:, 1:]).all()
    assert (a.totals[:, 0] != b.totals[:, 0]).mean() > 0.02        # it did switch tables
    _slow_path(monkeypatch)
    c = simulate_table(key, players, 3000, seed=2, options=options)
    assert (a.totals == c.totals).all()


def test_play_to_win_chooses_by_its_normal_chance_to_win():
    """Fresh cards, one opponent: the chance of theta = 0 is Phi(lead / sqrt(2 var + 1)) from
    the solver's own sd; 30 points behind it seeks risk, ahead it avoids it, level it
    plays optimal (every chance is 1/2: the largest mean wins the tie)."""
    from scipy.special import ndtr

    from yahtzee_sim.exact.solver import solve

    rules = get_rules("yacht", OPTS)
    sd = solve(rules).sd
    p = PlayToWin().prepare(rules)
    me, you = GameState.new(rules, 3), GameState.new(rules, 3)
    you.box_scores[:, 0] = [30, 0, 0]
    me.box_scores[:, 0] = [0, 30, 0]
    chance = p.win_chances([me, you], 0)
    zero = list(p.thetas).index(0.0)
    assert np.allclose(chance[:, zero], ndtr(np.array([-30, 30, 0]) / np.sqrt(2 * sd ** 2 + 1)), atol=1e-5)
    picked = p.thetas[p.pick([me, you], 0)]
    assert picked[0] > 0 and picked[1] < 0 and picked[2] == 0
    # the chosen theta's chance is the best one, and better than optimal's behind and ahead
    assert (chance[:2].max(axis=1) > chance[:2, zero]).all()


@pytest.mark.slow
def test_play_to_win_beats_optimal_paired():
    """Yacht (classic card, no bonus): paired on the same dice against one optimal player,
    play-to-win gains win share over optimal in the same seat (CI above 0), and scores
    fewer points doing it; two worker processes give the same numbers."""
    g = seat_gain("yacht-classic", PlayToWin(), "optimal", 1, 40_000, seed=5, chunk=10_000)
    assert g["gain_low"] > 0 and g["mean_score"] < g["baseline_mean_score"]
    h = seat_gain("yacht-classic", PlayToWin(), "optimal", 1, 40_000, seed=5, chunk=10_000, jobs=2)
    assert h == {**g, "seconds": h["seconds"]}


def test_bad_input():
    with pytest.raises(ValueError, match="2 to 20 players"):
        simulate_table("yacht", ["greedy"], 10)
    with pytest.raises(ValueError, match="n_games"):
        simulate_table("yacht", ["greedy", "greedy"], 0)
    with pytest.raises(ValueError, match="unknown strategy"):
        simulate_table("yacht", ["greedy", "nope"], 10)
    with pytest.raises(ValueError, match="2 to 20 players"):
        simulate_table("yacht", ["greedy"] * 21, 10)
    for seat in (2, -1, "first", True):
        with pytest.raises(ValueError, match=r"seat must be 'every' or 0 to 1"):
            seat_gain("yacht", "greedy", "keep-largest", 1, 10, seat=seat)
    with pytest.raises(ValueError, match=r"n_games must be an integer >= 4"):
        seat_gain("yacht", "greedy", "keep-largest", 3, 3)
    with pytest.raises(ValueError, match="endgame must be a non-negative integer"):
        PlayToWin(endgame=-1)


@pytest.mark.parametrize("key", ["yamb", "maxi-yatzy"])
def test_games_with_their_own_tapes_play_at_a_table(key):
    """Announcements and saved throws draw from each seat's own family tapes."""
    res = simulate_table(key, ["keep-largest", "keep-largest"], 300, seed=1)
    solo = simulate(key, "keep-largest", 300, seed=seat_entropy(1, 1), keep_games=True)
    assert (res.totals[:, 1] == solo.games["total"]).all()


# -- Generala's servida-wins ------------------------------------------------------------

class HoldFirstThrow(Strategy):
    """Holds every first throw and writes it where it gains most now."""

    name = "hold-first-throw"

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls].astype(np.int64)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def _first_servida(entropy, seats, n, n_turns=11):
    """Independently of the simulator: for players that hold every first throw, the
    seat whose first throw is five of a kind first, in play order (round, then seat)."""
    rules = get_rules("generala", ["servida-wins"])
    five = []
    for s in range(seats):
        tape, _ = block_tapes(rules, seat_entropy(entropy, s), range(0, -(-n // 1024)), n_turns)
        first = tape[:n, :, 0, :]
        five.append((first == first[..., :1]).all(axis=2))        # (games, turns)
    order = np.stack(five, axis=2).reshape(n, n_turns * seats)    # round-major, then seat
    hit = order.any(axis=1)
    return np.where(hit, order.argmax(axis=1) % seats, -1)


def test_servida_wins_from_the_dice_tapes():
    n, seats = 20_000, 3
    res = simulate_table("generala", [HoldFirstThrow()] * seats, n, seed=11, options=["servida-wins"])
    expected = _first_servida(11, seats, n)
    assert (res.servida_winner == expected).all()
    win, tie = res.outcomes()
    ended = expected >= 0
    assert (win[ended] == (expected[ended, None] == np.arange(seats))).all()
    assert not tie[ended].any()
    # without the option the same dice give the plain outcome, and no servida column
    plain = simulate_table("generala", [HoldFirstThrow()] * seats, n, seed=11)
    assert plain.servida_winner is None and "p_servida_win" not in plain.to_frame()
    # a finished game's scores are the same as without the option; a game a servida
    # ended has fewer points (its cards stopped)
    assert (res.totals[~ended] == plain.totals[~ended]).all()
    assert (res.totals[ended] <= plain.totals[ended]).all()


def test_servida_win_rates_match_the_exact_chance():
    """Holding every first throw, each turn serves a Generala with chance q = 6/6**5;
    seat s (of k) wins by servida with chance sum_t (1-q)**(k(t-1) + s) q."""
    n, seats, turns = 60_000, 2, 11
    q = 6 / 6**5
    res = simulate_table("generala", [HoldFirstThrow()] * seats, n, seed=3, options=["servida-wins"])
    frame = res.to_frame()
    for s in range(seats):
        exact = sum((1 - q) ** (seats * t + s) * q for t in range(turns))
        ci = proportion_ci(int((res.servida_winner == s).sum()), n, level=0.999)
        assert ci.low <= exact <= ci.high
        assert frame["p_servida_win"].iloc[s] == (res.servida_winner == s).mean()


def test_servida_same_round_goes_to_the_first_seat(monkeypatch):
    """Hand-made tapes: game 0, both seats serve in round 3: seat 1 wins and seat 2's
    round 3 is not played; game 1, seat 2 serves in round 2, seat 1 in round 3: seat 2;
    game 2: nobody serves (dice 1-2-3-4-6 every throw)."""
    import yahtzee_sim.engine as engine
    import yahtzee_sim.multiplayer as mp

    rules = get_rules("generala", ["servida-wins"])
    plain = np.array([1, 2, 3, 4, 6], dtype=np.uint8)
    five = np.full(5, 6, dtype=np.uint8)
    calls = []

    def tapes(rules_, entropy, blocks, n_turns, stop, uniforms=True):
        # the engine's tapes of the turn loop: the dice as tape codes where the dice tables have them
        seat = len(calls)
        calls.append(seat)
        tape = np.broadcast_to(plain, (len(blocks) * SEED_BLOCK, n_turns, rules_.n_rolls, 5)).copy()
        if seat == 0:
            tape[0, 2, 0] = five        # game 0, round 3
            tape[1, 2, 0] = five        # game 1, round 3
        else:
            tape[0, 2, 0] = five        # game 0, round 3: too late
            tape[1, 1, 0] = five        # game 1, round 2: first
        tape = tape[:stop]
        coded = rules_.dice.tape_codes(tape) if rules_.dice.has_tape_codes else tape
        return coded, np.zeros(tape.shape[:3], dtype=np.float32)

    monkeypatch.setattr(engine, "_block_turn_tapes", tapes)
    res = mp.simulate_table(rules, [HoldFirstThrow(), HoldFirstThrow()], 3, seed=1)
    assert res.servida_winner.tolist() == [0, 1, -1]
    win, tie = res.outcomes()
    assert win.tolist() == [[True, False], [False, True], [False, False]] and tie[2].all()
    # scores when it ended, by hand (1-2-3-4-6 goes to Sixes 6, Fours 4, Threes 3, Twos 2,
    # Ones 1, then zeros; five sixes served to the Generala, 60): game 0 after seat 1's
    # third turn (6 + 4 + 60) and seat 2's second (6 + 4); game 1 after both seats' second
    # turns (6 + 4, and 6 + 60); game 2 played out: 16 each
    assert res.totals.tolist() == [[70, 10], [10, 66], [16, 16]]


# -- tables through the runner: backends, checkpoints, aggregates ------------------------------

def _by_hand(totals, winner=None):
    """Per seat, straight from the games: mean score, sole wins, ties for first, servida wins."""
    rows = []
    for s in range(totals.shape[1]):
        others = np.delete(totals, s, axis=1).max(axis=1)
        sole = totals[:, s] > others
        level = totals[:, s] == others
        if winner is not None:
            sole = np.where(winner >= 0, winner == s, sole)
            level = level & (winner < 0)
        rows.append((float(np.mean(totals[:, s].astype(np.float64))), int(sole.sum()), int(level.sum()),
                     0 if winner is None else int((winner == s).sum())))
    return rows


@pytest.mark.parametrize("key, options", [("yacht", OPTS), ("generala", ["servida-wins"])])
def test_table_summary_is_the_games_summary(key, options):
    """to_frame (computed from the exact aggregate) against the kept games counted by hand."""
    res = simulate_table(key, ["greedy", "keep-largest", "greedy"], 5000, seed=6, options=options, batch=2048)
    frame = res.to_frame()
    for s, (mean, wins, ties, served) in enumerate(_by_hand(res.totals, res.servida_winner)):
        row = frame.iloc[s]
        assert row["mean_score"] == mean and row["p_win"] == wins / 5000 and row["p_tie"] == ties / 5000
        if res.servida_winner is not None:
            assert row["p_servida_win"] == served / 5000
    assert (res.servida_winner is not None) == ("servida-wins" in options)
    lean = simulate_table(key, ["greedy", "keep-largest", "greedy"], 5000, seed=6, options=options, keep_games=False)
    assert lean.totals is None and lean.to_frame().equals(frame)
    with pytest.raises(ValueError, match="keep_games=True"):
        lean.outcomes()


def test_table_on_worker_processes_plays_the_serial_games():
    serial = simulate_table("yacht", ["greedy", "random"], 3000, seed=12, options=OPTS)
    procs = simulate_table("yacht", ["greedy", "random"], 3000, seed=12, options=OPTS, batch=1024,
                           backend="processes", jobs=2)
    assert np.array_equal(procs.totals, serial.totals)


@pytest.mark.slow
def test_table_on_dask_plays_the_serial_games():
    distributed = pytest.importorskip("dask.distributed")
    import logging

    serial = simulate_table("yacht", ["greedy", "random"], 3000, seed=12, options=OPTS)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster:
        res = simulate_table("yacht", ["greedy", "random"], 3000, seed=12, options=OPTS, batch=1024,
                             backend="dask", scheduler=cluster.scheduler_address)
    assert np.array_equal(res.totals, serial.totals)


def test_table_checkpoint_resumes_to_the_same_result(tmp_path, monkeypatch):
    import yahtzee_sim.runner.driver as driver

    players = ["greedy", "keep-largest"]
    full = simulate_table("yacht", players, 5000, seed=8, options=OPTS, batch=1024)
    ckpt = tmp_path / "table.json"

    def stop(merged):
        if merged == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", stop)
    with pytest.raises(driver.RunInterrupted) as info:
        simulate_table("yacht", players, 5000, seed=8, options=OPTS, batch=1024, checkpoint=ckpt)
    assert info.value.done == 2 * SEED_BLOCK
    monkeypatch.setattr(driver, "after_chunk", None)
    seen = []
    res = simulate_table("yacht", players, 5000, seed=8, options=OPTS, batch=1024, checkpoint=ckpt,
                         progress=lambda *a: seen.append(a))
    assert res.totals is None and res.seed == 8
    frame = res.to_frame()
    for s, (mean, wins, ties, _) in enumerate(_by_hand(full.totals)):
        assert frame.iloc[s]["mean_score"] == mean and frame.iloc[s]["p_win"] == wins / 5000
        assert frame.iloc[s]["p_tie"] == ties / 5000
    assert seen[0] == ("games", 2 * SEED_BLOCK, 5000) and seen[-1] == ("games", 5000, 5000)
    # another line-up is another run
    with pytest.raises(ValueError, match="another run"):
        simulate_table("yacht", ["greedy", "random"], 5000, seed=8, options=OPTS, batch=1024, checkpoint=ckpt)


def test_seat_gain_on_worker_processes_gives_the_serial_figures():
    """The paired parts run in the runner's pool: the figures do not depend on where."""
    args = ("yacht", "greedy", "keep-largest", 1, 3000)
    serial = seat_gain(*args, seed=4, options=OPTS, chunk=1024)
    procs = seat_gain(*args, seed=4, options=OPTS, chunk=1024, jobs=2)
    serial.pop("seconds"), procs.pop("seconds")
    assert procs == serial and serial["games"] == 3000
