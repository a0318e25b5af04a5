"""Positions and turns on a card (``filled``, ``upper``): what each play means there, the
exact values against plain Python (tests/plain_game.py), bad cards refused in one line."""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest

import yahtzee_sim as ys
from yahtzee_sim.cli import main
from yahtzee_sim.questions import answer, parse_question
from yahtzee_sim.rules import get_rules

from plain_game import OptimalMean

N = 4000
UPPER = "ones,twos,threes,fours,fives,sixes"
LATE = UPPER + ",three_of_a_kind,four_of_a_kind,small_straight,large_straight,chance"   # full house, yahtzee open


@functools.cache
def _plain_value(open_boxes: tuple, upper: int) -> float:
    """Optimal play's expected points to come on a card with only ``open_boxes`` open,
    enumerated in plain Python (the five box, filled, holds 0)."""
    rules = get_rules("yahtzee")
    filled = tuple(name not in open_boxes for name in rules.box_names)
    return OptimalMean(rules).value(filled, upper, False)


def test_chase_on_a_card_is_the_dice_alone():
    """With chase the card limits nothing about the dice: the same fraction as on a fresh card."""
    fresh = ys.ask("chance", "large_straight", scope="turn", throws=N).exact
    card = ys.ask("chance", "large_straight", scope="turn", filled="ones,twos", upper=5, throws=N).exact
    assert card == fresh
    box = ys.ask("mean", "box chance", scope="position", keep="66", rolls_left=1, filled="yahtzee", throws=N)
    # two sixes held, three dice thrown once: 12 + 3 x 3.5
    assert box.exact == 12 + 3 * Fraction(7, 2)


@pytest.mark.slow
def test_optimal_points_to_come_on_a_late_card_against_plain_python():
    """Two boxes open (Chance and Yahtzee), the upper bonus made: the turn's exact mean
    under the solver's decisions for this card is plain Python's optimal value."""
    a = ys.ask("mean", "points_to_come", scope="turn", play="optimal", filled=UPPER + ",three_of_a_kind,"
               "four_of_a_kind,full_house,small_straight,large_straight", upper=63, throws=N)
    want = _plain_value(("chance", "yahtzee"), 63)
    assert a.exact == pytest.approx(want, abs=1e-4)          # the solver's float32 tables
    lo, hi = a.ci
    assert lo - (hi - lo) <= want <= hi + (hi - lo)


def test_scoring_a_full_house_now_is_worth_its_25_and_the_yahtzee_turn():
    """3-3-3-5-5 with Full house and Yahtzee open: holding every die and scoring it is worth
    25 plus the last turn's optimal value with Yahtzee alone open (plain Python)."""
    a = ys.ask("mean", "points_to_come", scope="position", dice="33355", rolls_left=2, hold="33355", filled=LATE,
               upper=63, play="optimal", throws=N)
    assert a.exact == pytest.approx(25 + _plain_value(("yahtzee",), 63), abs=1e-4)
    # optimal play's own hold here is every die: holding them costs nothing
    assert a.extra["hold_costs"] == pytest.approx(0, abs=1e-9)


def test_optimal_decisions_depend_on_the_card():
    """The same dice under optimal play: on this late card it scores the full house (no five
    of a kind can follow), while chase keeps three threes for it."""
    common = dict(scope="position", dice="33355", rolls_left=2, filled=LATE, upper=63, throws=N)
    optimal = ys.ask("chance", "five_of_a_kind", play="optimal", **common)
    chase = ys.ask("chance", "five_of_a_kind", play="chase", **common)
    assert optimal.exact == 0
    # keep 333 and throw two dice twice (both kept once they show a three): plain count
    one = Fraction(1, 36)                                        # both dice threes in one throw
    single = Fraction(10, 36)                                    # exactly one three
    two_rolls = one + single * Fraction(1, 6) + (1 - one - single) * one
    assert chase.exact == two_rolls


@pytest.mark.parametrize("spec, words", [
    ({"filled": "ones,sevens"}, "sevens"),
    ({"filled": "ones", "upper": 7}, "cannot add up to it"),
    ({"filled": "twos", "upper": 3}, "possible totals near it: 0, 2, 4"),
    ({"filled": ",".join(get_rules("yahtzee").box_names)}, "every box of yahtzee is used"),
    ({"filled": "chance", "event": "box chance >= 20"}, "box chance is already filled"),
    ({"filled": "ones", "play": "greedy"}, "a strategy's keeps are known exactly on a fresh card only"),
    ({"filled": "ones", "scope": "game", "play": "optimal", "event": "upper_bonus"}, "not of a game question"),
    ({"filled": "ones,ones"}, "twice"),
])
def test_bad_cards_are_one_line(spec, words):
    base = {"ask": "chance", "event": "large_straight", "scope": "turn"}
    with pytest.raises(ValueError, match=words):
        parse_question({**base, **spec})


def test_bad_card_from_the_shell_is_one_line_and_exit_2(capsys):
    assert main(["ask", "chance", "large_straight", "--filled", "ones,sevens"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sevens" in err and "Traceback" not in err
    assert main(["ask", "chance", "large_straight", "--filled", "ones", "--upper", "7"]) == 2
    assert "cannot add up" in capsys.readouterr().err


def test_card_in_a_claims_file(tmp_path):
    f = tmp_path / "card.toml"
    f.write_text('[[claim]]\nid = "late"\nask = "chance"\nevent = "five_of_a_kind"\nscope = "position"\n'
                 f'dice = "33355"\nrolls_left = 2\nfilled = "{LATE}"\nupper = 63\nplay = "optimal"\nclaimed = 0\n',
                 encoding="utf-8")
    res = ys.check(f, throws=N)
    assert res.frame().loc["late", "verdict"] == "confirmed"
    q = parse_question({"ask": "chance", "event": "large_straight", "scope": "turn", "filled": ["ones", "Twos"],
                        "upper": 5})
    assert q.filled == ("ones", "twos") and q.upper == 5 and "card with ones, twos filled" in q.text
    assert answer(q, throws=N).exact == ys.ask("chance", "large_straight", throws=N).exact
