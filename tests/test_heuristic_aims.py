"""heuristic's end-of-game goals (docstring items G and H): Balut's points, Yamb's column
bonuses. The goals match what the rule sets pay; the plans agree with the box choice;
play with the goals beats play without them (paired, common random numbers) on what
each game is won on; every other rule set plays exactly as before."""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import get_rules, simulate
from yahtzee_sim.rules import catalog
from yahtzee_sim.state import GameState
from yahtzee_sim.strategies import best_legal, get_strategy
from yahtzee_sim.strategies.aims import card_aims
from yahtzee_sim.strategies.heuristic import HeuristicStrategy

# The rule sets without end-of-game goals (every registered one but Balut and Yamb,
# with the options that change the card or the bonuses).
OTHER_RULE_SETS = ["yahtzee", "yahtzee-free-joker", "yahtzee-original-joker", "yahtzee+no-joker", "yacht",
                   "yacht+fill-in-order+three-dice", "yacht-classic", "yatzy", "generala", "kniffel", "kismet",
                   "yacht+faces-7"]
SLOW_OTHER_RULE_SETS = ["maxi-yatzy", "maxi-yatzy+no-saved-throws"]


class WithoutGoals(HeuristicStrategy):
    """The heuristic as it played before the goals (``aim_card = False``)."""

    name = "heuristic-without-goals"
    aim_card = False


def _random_cards(rules, n, rng, filled=None):
    """Cards whose boxes hold what a random roll scores in them (many zeros), 0 where open."""
    rolls = rng.integers(0, rules.dice.n_rolls, size=(n, rules.n_boxes))
    cards = rules.score_table[rolls, np.arange(rules.n_boxes)[None, :]].astype(np.int64)
    # now and then a box's best score, so that goals are reached too
    best = rules.score_table.max(axis=0)[None, :]
    cards = np.where(rng.random(cards.shape) < 0.3, best, cards)
    return cards if filled is None else np.where(filled, cards, 0)


def test_balut_goals_and_bands_add_up_to_the_points():
    rules = get_rules("balut")
    aims = card_aims(rules)
    cards = _random_cards(rules, 5000, np.random.default_rng(1))
    paid = (aims.each[None, :] * (cards > 0)).sum(axis=1)
    for g in aims.totals:
        paid = paid + np.where(cards[:, g.boxes].sum(axis=1) >= g.threshold, g.worth, 0)
    for g in aims.full:
        paid = paid + np.where((cards[:, g.boxes] > 0).all(axis=1), g.worth, 0)
    start, step, least, most = catalog.BALUT_SCORE_BANDS
    bands = np.clip((cards.sum(axis=1) - start) // step, least, most)
    np.testing.assert_array_equal(paid / aims.unit + bands, rules.points(cards))
    assert aims.unit == step and len(np.unique(rules.points(cards))) > 10     # the cards reach many points


def test_yamb_column_bonuses_are_what_the_score_pays_beyond_the_rows():
    rules = get_rules("yamb")
    aims = card_aims(rules)
    cards = _random_cards(rules, 5000, np.random.default_rng(2))
    c = cards.reshape(len(cards), 4, 13)
    # per column (RULES.md): the upper rows, (Max - Min) x Ones and the lower rows, then the bonus
    rows = (c[:, :, :6].sum(axis=2) + (c[:, :, 6] - c[:, :, 7]) * c[:, :, 0] + c[:, :, 8:].sum(axis=2)).sum(axis=1)
    bonus = sum(np.where(cards[:, g.boxes].sum(axis=1) >= g.threshold, g.worth, 0) for g in aims.totals)
    np.testing.assert_array_equal(rows + bonus, rules.card_score(cards))
    assert 0 < (bonus > 0).mean() < 1 and aims.unit == 1 and not aims.full and not aims.each.any()


@pytest.mark.parametrize("name", OTHER_RULE_SETS + SLOW_OTHER_RULE_SETS)
def test_other_rule_sets_have_no_goals(name):
    rules = get_rules(name)
    assert card_aims(rules) is None
    assert not get_strategy("heuristic").prepare(rules)._progress


@pytest.mark.parametrize("name", OTHER_RULE_SETS)
def test_other_rule_sets_play_exactly_as_without_goals(name):
    a = simulate(name, "heuristic", 2000, seed=31).games
    b = simulate(name, WithoutGoals(), 2000, seed=31).games
    for col in ("total", "box_scores", "fill_turn"):
        np.testing.assert_array_equal(a[col], b[col])


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_OTHER_RULE_SETS)
def test_six_dice_play_exactly_as_without_goals(name):
    a = simulate(name, "heuristic", 400, seed=31).games
    b = simulate(name, WithoutGoals(), 400, seed=31).games
    for col in ("total", "box_scores", "fill_turn"):
        np.testing.assert_array_equal(a[col], b[col])


def _paired(a, b):
    d = a.astype(np.float64) - b.astype(np.float64)
    half = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    return d.mean(), d.mean() - half, d.mean() + half


def test_goals_raise_balut_points():
    # Balut is won on points: the goals raise them clearly (about +3.0 points a game
    # in benchmarks/heuristic_aims.py; the score may fall)
    new = simulate("balut", "heuristic", 1500, seed=41).games["points"]
    old = simulate("balut", WithoutGoals(), 1500, seed=41).games["points"]
    mean, low, high = _paired(new, old)
    assert low > 1.0, (mean, low, high)


def test_goals_raise_the_yamb_score():
    # Yamb is won on the score: the column bonuses and the announcements raise it (about +110 a game)
    new = simulate("yamb", "heuristic", 500, seed=43).games["total"]
    old = simulate("yamb", WithoutGoals(), 500, seed=43).games["total"]
    mean, low, high = _paired(new, old)
    assert low > 50, (mean, low, high)


def _positions_with_points(rules, n, rng):
    """Random mid-game positions whose filled boxes hold plausible points."""
    b = rules.n_boxes
    n_filled = rng.integers(0, b, size=n)
    order = np.argsort(rng.random((n, b)), axis=1)
    filled = np.zeros((n, b), dtype=bool)
    filled[np.repeat(np.arange(n), b), order.ravel()] = (np.arange(b)[None, :] < n_filled[:, None]).ravel()
    state = GameState.from_arrays(rules, filled, 0)
    state.box_scores = _random_cards(rules, n, rng, filled).astype(np.int16)
    return state


@pytest.mark.parametrize("name", ["balut", "yamb"])
def test_plan_values_with_goals_agree_with_the_box_choice(name):
    """As tests/test_strategies.py checks for the other games: the roll values of the
    plans (all rolls at once, with the goals' progress) equal the best legal box value
    computed roll by roll from the turn options, and the stored box is that box."""
    rules = get_rules(name)
    d = rules.dice
    strat = get_strategy("heuristic").prepare(rules)
    state = _positions_with_points(rules, 30, np.random.default_rng(5))
    progress = strat.progress_key(state.filled, state.box_scores)
    values, boxes = strat.final_values_and_boxes(state.filled, state.upper_total, state.five_box_full,
                                                 progress=progress)
    p, r = state.n_games, d.n_rolls
    rep = np.repeat(np.arange(p), r)
    rolls = np.tile(np.arange(r), p)
    legal, scores, bonus = rules.turn_options(state.filled[rep], state.five_box_full[rep], rolls)
    gain = scores + rules.upper_bonus_gain(state.upper_total[rep], scores) + bonus[:, None]
    ctx = strat.context(state.filled[rep], state.upper_total[rep], state.five_box_full[rep], progress[rep])
    worth = strat.box_values(ctx, scores, gain)
    np.testing.assert_allclose(values.ravel(), np.where(legal, worth, -np.inf).max(axis=1), rtol=1e-6, atol=1e-3)
    np.testing.assert_array_equal(boxes.ravel(), best_legal(worth, legal))


def _box_for(strat, rules, dice, written):
    """The box ``strat`` writes ``dice`` in, on a card holding ``written`` (box: points)."""
    from yahtzee_sim.state import TurnOptions

    filled = np.zeros((1, rules.n_boxes), bool)
    state = GameState.from_arrays(rules, filled, 0)
    for name, points in written.items():
        state.filled[0, rules.box_index(name)] = True
        state.box_scores[0, rules.box_index(name)] = points
    roll = np.array([rules.dice.roll_index_of(dice)])
    legal, scores, bonus = rules.turn_options(state.filled, state.five_box_full, roll)
    return rules.box_names[int(strat.box(state, roll, TurnOptions(legal, scores, scores), np.zeros(1))[0])]


def test_balut_goals_steer_the_box_choice():
    """Late in the game, with one Straight left to make all four: a roll that fits
    nothing is not zeroed there while the four are possible, and is once one is zero."""
    rules = get_rules("balut")
    strat = get_strategy("heuristic").prepare(rules)
    late = {f"{c}_{k}": 0 for c in ("fours", "fives", "sixes", "balut") for k in range(1, 5)}
    late.update({"straight_1": 20, "straight_2": 15, "straight_3": 20, "full_house_1": 20,
                 "choice_1": 22})
    alive = _box_for(strat, rules, [1, 1, 3, 3, 6], late)
    assert not alive.startswith("straight"), alive
    assert _box_for(strat, rules, [1, 1, 3, 3, 6], {**late, "straight_1": 0}).startswith("straight")


@pytest.mark.parametrize("name", ["balut", "yamb"])
def test_same_games_whatever_batch_or_cache_with_goals(name):
    a = simulate(name, "heuristic", 1100, seed=99)
    warm = get_strategy("heuristic")
    simulate(name, warm, 300, seed=1)                          # fills the position cache
    b = simulate(name, warm, 1100, seed=99, batch=1024)
    np.testing.assert_array_equal(a.games["box_scores"], b.games["box_scores"])


def test_goals_survive_the_process_backend():
    a = simulate("balut", "heuristic", 1100, seed=4, batch=1024)
    b = simulate("balut", "heuristic", 1100, seed=4, batch=1024, backend="processes", jobs=2)
    np.testing.assert_array_equal(a.games["points"], b.games["points"])


def test_goal_knobs_must_be_whole_throws():
    bad = type("Bad", (HeuristicStrategy,), {"total_throws": 2.5})()
    with pytest.raises(ValueError, match="total_throws must be a positive integer"):
        bad.prepare(get_rules("balut"))
    bad.prepare(get_rules("yahtzee"))          # no goals there: the knob is not read


def test_yamb_announces_the_box_whose_turn_is_worth_most():
    """Only Announce boxes open: three ones on the first throw go to Ones (worth about
    12 a point there) rather than to Min or Max, which the first dice score most in."""
    from yahtzee_sim.strategy import default_announcement

    rules = get_rules("yamb")
    state = GameState.from_arrays(rules, ~rules.is_announce[None, :], 0)
    roll = np.array([rules.dice.roll_index_of([1, 1, 1, 5, 6])])
    assert rules.box_names[int(get_strategy("heuristic").prepare(rules).announce(state, roll, None)[0])] \
        == "announce_ones"
    assert rules.box_names[int(default_announcement(rules, state.filled, roll)[0])] != "announce_ones"
    assert int(WithoutGoals().prepare(rules).announce(state, roll, None)[0]) \
        == int(default_announcement(rules, state.filled, roll)[0])
    free = GameState.from_arrays(rules, np.zeros((1, rules.n_boxes), bool), 0)
    assert int(get_strategy("heuristic").prepare(rules).announce(free, roll, None)[0]) == -1


def test_yamb_announces_by_choice_when_it_beats_the_plan():
    """A Kenta on the first throw with only a Free box and the Announce column open:
    announcing Kenta (66) beats the plan without it; ``announce_by_choice = False``
    announces only when the turn must."""
    rules = get_rules("yamb")
    late = ~rules.is_announce[None, :].copy()
    late[0, rules.box_index("free_ones")] = False
    state = GameState.from_arrays(rules, late, 0)
    kenta = np.array([rules.dice.roll_index_of([2, 3, 4, 5, 6])])
    said = get_strategy("heuristic").prepare(rules).announce(state, kenta, None)
    assert rules.box_names[int(said[0])] == "announce_kenta"
    forced = type("Forced", (HeuristicStrategy,), {"announce_by_choice": False})().prepare(rules)
    assert int(forced.announce(state, kenta, None)[0]) == -1
