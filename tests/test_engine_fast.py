"""The simulator's fast paths give the same games as the plain ones, bit for bit.

The engine plays from tape codes (one table lookup per reroll), skips the decision
uniforms of strategies that declare ``uses_uniforms = False``, keeps the score card's
``filled`` column-major and picks boxes with encoded maxima. Each test here plays or
computes the same thing a second, straightforward way (prefix keys, every uniform
drawn, a row-major card, the textbook masked argmax) and asks for identical results.
"""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import get_rules, get_strategy
from yahtzee_sim.engine import (SEED_BLOCK, MoveChecks, StrategyError, block_tapes, family_tapes, play_blocks,
                                play_turn, play_turn_blocks)
from yahtzee_sim.state import GameState
from yahtzee_sim.strategies import Strategy, best_legal, uniform_choice
from yahtzee_sim.strategies.simple import KeepLargestStrategy

GAME_FIELDS = ("total", "box_scores", "upper_total", "upper_bonus", "five_bonus_count", "five_count",
               "fill_turn", "five_box_full")


def reference_games(rules, strategy, entropy: int, n: int) -> GameState:
    """Play the first ``n`` games of seed block 0 the plain way: prefix keys, the uniforms
    drawn for every strategy, a row-major card."""
    tape, unif = block_tapes(rules, entropy, range(0, 1), rules.n_boxes)
    tape, unif = tape[:n], unif[:n]
    extra = {k: v[:n] for k, v in family_tapes(rules, entropy, range(0, 1), rules.n_boxes).items()}
    state = GameState.new(rules, n)
    state.filled = np.ascontiguousarray(state.filled)
    checks = MoveChecks.of(rules)
    for t in range(rules.n_boxes):
        play_turn(rules, strategy, state, rules.dice.tape_prefix_keys(tape[:, t]), unif[:, t], checks, extra)
    return state


CASES = [("yahtzee", ()), ("yahtzee", ("faces-7",)), ("yahtzee-free-joker", ()), ("yacht", ("fill-in-order",)),
         ("yacht", ("three-dice",)), ("yatzy", ()), ("kniffel", ()), ("generala", ()), ("kismet", ()),
         ("maxi-yatzy", ()), ("balut", ()), ("yamb", ())]


@pytest.mark.parametrize("name,options", CASES, ids=["+".join((n,) + o) for n, o in CASES])
@pytest.mark.parametrize("strategy", ["random", "keep-largest", "greedy", "heuristic"])
def test_fast_path_plays_the_reference_games(name, options, strategy):
    rules = get_rules(name, list(options))
    n = 300
    fast = play_blocks(rules, get_strategy(strategy).prepare(rules), 17, range(0, 1), n)
    ref = reference_games(rules, get_strategy(strategy).prepare(rules), 17, n)
    np.testing.assert_array_equal(fast["total"], ref.total(rules))
    for field in ("box_scores", "upper_total", "five_bonus_count", "five_count", "fill_turn", "five_box_full"):
        np.testing.assert_array_equal(fast[field], getattr(ref, field), err_msg=field)


def test_optimal_fast_path_plays_the_reference_games():
    rules = get_rules("yacht-classic")
    fast = play_blocks(rules, get_strategy("optimal").prepare(rules), 5, range(0, 1), 500)
    ref = reference_games(rules, get_strategy("optimal").prepare(rules), 5, 500)
    np.testing.assert_array_equal(fast["box_scores"], ref.box_scores)


class _Recorder(KeepLargestStrategy):
    """keep-largest that records the uniforms it is given."""

    name = "recorder"
    uses_uniforms = True

    def __init__(self):
        self.seen = []

    def keep(self, state, rolls, rolls_left, u):
        self.seen.append(u)
        return super().keep(state, rolls, rolls_left, u)


class _NoUniforms(_Recorder):
    uses_uniforms = False


def test_skipping_the_uniforms_leaves_the_games_unchanged():
    rules = get_rules("yahtzee")
    with_u, without_u = _Recorder().prepare(rules), _NoUniforms().prepare(rules)
    a = play_blocks(rules, with_u, 3, range(1, 3), 3 * SEED_BLOCK - 100)
    b = play_blocks(rules, without_u, 3, range(1, 3), 3 * SEED_BLOCK - 100)
    for field in GAME_FIELDS:
        np.testing.assert_array_equal(a[field], b[field], err_msg=field)
    assert all(u is not None and u.dtype == np.float32 for u in with_u.seen)
    assert all(u is None for u in without_u.seen)
    assert KeepLargestStrategy.uses_uniforms is False and Strategy.uses_uniforms is True
    turns_a = play_turn_blocks(rules, _Recorder().prepare(rules), 3, range(0, 2), 2000)
    turns_b = play_turn_blocks(rules, _NoUniforms().prepare(rules), 3, range(0, 2), 2000)
    np.testing.assert_array_equal(turns_a, turns_b)


@pytest.mark.parametrize("dice,faces", [(5, 6), (6, 6), (5, 7), (3, 6), (4, 4), (5, 8)])
def test_tape_codes_reroll_like_prefix_keys(dice, faces):
    from yahtzee_sim.dice import dice_tables

    t = dice_tables(dice, faces)
    rng = np.random.default_rng(dice * 100 + faces)
    tape = rng.integers(1, faces + 1, size=(5000, dice), dtype=np.uint8)
    keeps = rng.integers(0, t.n_keeps, size=5000)
    codes, prefix = t.tape_codes(tape), t.tape_prefix_keys(tape)
    np.testing.assert_array_equal(t.reroll_code(keeps, codes), t.reroll(keeps, prefix))
    np.testing.assert_array_equal(t.roll_of_code(codes), t.key_to_roll[prefix[:, dice]])


def test_twelve_faces_fall_back_to_prefix_keys():
    from yahtzee_sim.dice import dice_tables

    assert not dice_tables(5, 12).has_tape_codes
    rules = get_rules("yahtzee", ["faces-12"])
    fast = play_blocks(rules, get_strategy("keep-largest").prepare(rules), 2, range(0, 1), 200)
    ref = reference_games(rules, get_strategy("keep-largest").prepare(rules), 2, 200)
    np.testing.assert_array_equal(fast["box_scores"], ref.box_scores)


def _plain_best_legal(values, legal):
    masked = np.where(legal, values.astype(np.float64), -np.inf)
    return np.argmax(masked, axis=-1)


def _plain_uniform_choice(mask, u):
    count = mask.sum(axis=-1)
    pick = np.minimum((u * count).astype(np.int64), count - 1)
    rank = np.cumsum(mask, axis=-1) - 1
    return np.argmax(mask & (rank == pick[:, None]), axis=-1)


@pytest.mark.parametrize("order", ["C", "F"])
def test_best_legal_and_uniform_choice_match_the_plain_definitions(order):
    rng = np.random.default_rng(4)
    for trial in range(60):
        n, b = int(rng.integers(1, 300)), int(rng.integers(1, 60))
        legal = np.asarray(rng.random((n, b)) < rng.random(), order=order)
        u = rng.random(n, dtype=np.float32)
        np.testing.assert_array_equal(uniform_choice(legal, u), _plain_uniform_choice(legal, u))
        # the uniforms just below a boundary k / count (the engine's float32 uniforms are
        # m / 2**24): a product rounded in float32 would pick the next box
        count = np.maximum(legal.sum(axis=1), 1)
        k = rng.integers(1, count + 1)
        edge = ((-(-k * 2**24 // count) - 1) / 2**24).astype(np.float32)
        np.testing.assert_array_equal(uniform_choice(legal, edge), _plain_uniform_choice(legal, edge))
        for dtype in (np.int16, np.int32, np.int64, np.uint8, np.float32, np.float64):
            low, high = (0, 255) if dtype == np.uint8 else (-300, 300)
            values = rng.integers(low, high, size=(n, b))
            if trial % 3 == 0:
                values //= 60    # many ties: the first legal maximum wins
            values = np.asarray(values.astype(dtype), order=order)
            np.testing.assert_array_equal(best_legal(values, legal), _plain_best_legal(values, legal))


@pytest.mark.parametrize("name,options", [("yahtzee", ()), ("kismet", ()), ("yacht", ("no-bonus",)), ("yatzy", ())])
def test_bonus_gain_matches_the_plain_arithmetic(name, options):
    rules = get_rules(name, list(options))
    rng = np.random.default_rng(8)
    n = 2000
    upper = rng.integers(0, 110, size=n).astype(np.int16)
    scores = np.asfortranarray(rng.integers(0, 40, size=(n, rules.n_boxes)).astype(np.int16))
    bonus = np.where(rng.random(n) < 0.1, 100, 0).astype(np.int16)
    held = np.zeros(n, np.int64)
    after = np.zeros((n, rules.n_boxes), np.int64)
    total = upper[:, None].astype(np.int64) + np.where(rules.is_upper, scores, 0)
    for threshold, tier_bonus in rules.upper_bonus_tiers:   # the highest tier reached counts
        held = np.where(upper >= threshold, tier_bonus, held)
        after = np.where(total >= threshold, tier_bonus, after)
    expected = after - held[:, None]
    np.testing.assert_array_equal(rules.upper_bonus_gain(upper, scores), expected)
    np.testing.assert_array_equal(rules.turn_gain(upper, scores, bonus), scores + expected + bonus[:, None])


def test_user_strategy_illegal_keep_still_refused():
    rules = get_rules("yahtzee")

    class HoldsSixes(Strategy):
        name = "holds-sixes"
        uses_uniforms = False

        def keep(self, state, rolls, rolls_left, u):
            return np.full(len(rolls), self.dice.keep_index_of_counts(np.array([0, 0, 0, 0, 0, 5])))

        def box(self, state, rolls, options, u):
            return best_legal(options.gain, options.legal)

    with pytest.raises(StrategyError, match="kept dice it does not have"):
        play_blocks(rules, HoldsSixes().prepare(rules), 1, range(0, 1), 100)


def test_gains_are_made_only_when_read_and_from_the_turns_upper_total():
    """The engine hands strategies the gains on demand: random never reads them, and a
    strategy that reads them after the box is written still gets the turn's own."""
    from yahtzee_sim import get_rules, simulate
    from yahtzee_sim.state import TurnOptions

    kept = []

    class LateReader(Strategy):
        name = "late-reader"
        uses_uniforms = False

        def keep(self, state, rolls, rolls_left, u):
            return self.dice.roll_keep_index[rolls]

        def box(self, state, rolls, options, u):
            kept.append((options, state.upper_total.copy()))
            return best_legal(options.scores, options.legal)

    rules = get_rules("yahtzee")
    simulate(rules, LateReader(), 64, seed=1)
    for options, upper in kept:                       # read after the games moved on
        expected = rules.turn_gain(upper, options.scores, np.zeros(len(upper), np.int16))
        bonus = options.gain - expected
        assert (bonus == bonus[:, :1]).all()          # only the five-of-a-kind bonus may differ
    with pytest.raises(ValueError, match="one of the two"):
        TurnOptions(np.ones((1, 2), bool), np.zeros((1, 2), np.int16))
