"""The multiplayer simulator and the opponent-aware player."""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.exact.distribution import distribution
from yahtzee_sim.exact.winodds import win_odds
from yahtzee_sim.engine import SEED_BLOCK, block_tapes
from yahtzee_sim.multiplayer import PlayToWin, seat_entropy, simulate_table
from yahtzee_sim.rules import get_rules
from yahtzee_sim.state import GameState, TurnOptions
from yahtzee_sim.stats import proportion_ci
from yahtzee_sim.strategies.base import Strategy, best_legal

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
    with pytest.raises(ValueError, match="play-to-win"):
        simulate_table("generala", [PlayToWin(), "optimal"], 10)
    b = simulate("yacht", "optimal", 2048, options=OPTS, seed=3, keep_games=True)
    assert (a.games["total"] == b.games["total"]).all()


def test_play_to_win_at_a_table_is_paired_and_adapts():
    """Against optimal, the opponent's games are those of optimal against optimal (its own
    dice, and it does not look), and play-to-win plays other games than optimal would."""
    a = simulate_table("yacht", [PlayToWin(), "optimal"], 3000, seed=2)
    b = simulate_table("yacht", ["optimal", "optimal"], 3000, seed=2)
    assert (a.totals[:, 1] == b.totals[:, 1]).all()
    assert (a.totals[:, 0] != b.totals[:, 0]).mean() > 0.2


@pytest.mark.parametrize("options", [OPTS, []])
def test_play_to_win_with_nothing_at_stake_plays_optimal(options):
    """With a margin far wider than any score (noise 1e6), Phi is linear in the points:
    the P(win) widget must then make optimal's decisions (the same keep lattice, the
    same box values), game for game, on the same dice."""

    class Indifferent(PlayToWin):
        def see_table(self, states, seat, turn):
            n = len(states[seat].filled)
            self._target, self._plans = (np.zeros(n), np.full(n, 1e6)), None

    a = simulate_table("yacht", [Indifferent(), "optimal"], 2048, seed=1, options=options)
    b = simulate_table("yacht", ["optimal", "optimal"], 2048, seed=1, options=options)
    assert (a.totals[:, 0] != b.totals[:, 0]).mean() < 0.01


def test_play_to_win_takes_the_gamble_it_needs():
    """Yacht in order, last box (Yacht, 50 or 0) open: keeping a pair is the best chance
    of five of a kind; behind by 30 with the opponent done, P(win) is exactly that chance,
    and the decision of play-to-win is the same keep as optimal's (both maximize it)."""
    rules = get_rules("yacht", OPTS)
    p = PlayToWin().prepare(rules)
    me = GameState.new(rules, 1)
    me.filled[:, :-1] = True
    me.box_scores[0, 0] = 10
    me.turn = rules.n_boxes - 1
    opp = GameState.new(rules, 1)
    opp.filled[:] = True
    opp.box_scores[0, 0] = 40
    opp.turn = rules.n_boxes
    p.see_table([me, opp], 0, me.turn)
    roll = np.array([rules.dice.roll_index_of([2, 2, 3, 5, 6])])
    keep = p.keep(me, roll, 2, np.zeros(1))
    assert rules.dice.keep_counts[int(keep[0])].tolist() == [0, 2, 0, 0, 0, 0]
    box = p.box(me, roll, TurnOptions(~me.filled, np.zeros((1, rules.n_boxes), np.int16),
                                      np.zeros((1, rules.n_boxes), np.int16)), np.zeros(1))
    assert box.tolist() == [rules.n_boxes - 1]


def test_bad_input():
    with pytest.raises(ValueError, match="2 to 20 players"):
        simulate_table("yacht", ["greedy"], 10)
    with pytest.raises(ValueError, match="n_games"):
        simulate_table("yacht", ["greedy", "greedy"], 0)
    with pytest.raises(ValueError, match="unknown strategy"):
        simulate_table("yacht", ["greedy", "nope"], 10)
    with pytest.raises(ValueError, match="2 to 20 players"):
        simulate_table("yacht", ["greedy"] * 21, 10)


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
    import yahtzee_sim.multiplayer as mp

    rules = get_rules("generala", ["servida-wins"])
    plain = np.array([1, 2, 3, 4, 6], dtype=np.uint8)
    five = np.full(5, 6, dtype=np.uint8)
    calls = []

    def tapes(rules_, entropy, blocks, n_turns):
        seat = len(calls)
        calls.append(seat)
        tape = np.broadcast_to(plain, (len(blocks) * SEED_BLOCK, n_turns, rules_.n_rolls, 5)).copy()
        if seat == 0:
            tape[0, 2, 0] = five        # game 0, round 3
            tape[1, 2, 0] = five        # game 1, round 3
        else:
            tape[0, 2, 0] = five        # game 0, round 3: too late
            tape[1, 1, 0] = five        # game 1, round 2: first
        return tape, np.zeros(tape.shape[:3], dtype=np.float32)

    monkeypatch.setattr(mp, "block_tapes", tapes)
    res = mp.simulate_table(rules, [HoldFirstThrow(), HoldFirstThrow()], 3, seed=1)
    assert res.servida_winner.tolist() == [0, 1, -1]
    win, tie = res.outcomes()
    assert win.tolist() == [[True, False], [False, True], [False, False]] and tie[2].all()
    # scores when it ended, by hand (1-2-3-4-6 goes to Sixes 6, Fours 4, Threes 3, Twos 2,
    # Ones 1, then zeros; five sixes served to the Generala, 60): game 0 after seat 1's
    # third turn (6 + 4 + 60) and seat 2's second (6 + 4); game 1 after both seats' second
    # turns (6 + 4, and 6 + 60); game 2 played out: 16 each
    assert res.totals.tolist() == [[70, 10], [10, 66], [16, 16]]
