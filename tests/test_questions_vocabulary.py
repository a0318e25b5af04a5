"""The words the sources' claims added to the questions (when, named zeros, given, and/not,
versus), each against something computed another way."""

from __future__ import annotations

import pytest

import yahtzee_sim as ys
from yahtzee_sim.questions import answer, parse_event, parse_question

GAMES = 3000
FILL = dict(scope="game", rules="yacht", options=["fill-in-order"], play="keep-largest", games=GAMES)


def test_when_a_box_is_filled_in_order():
    """Filling the card in order, box k is written in turn k: Ones at 0, the last box at 1."""
    assert ys.ask("mean", "when ones", **FILL).estimate == 0
    assert ys.ask("mean", "when yacht", **FILL).estimate == 1


def test_named_zeros_mean_is_exact_and_inside_the_simulation():
    a = ys.ask("mean", "zeros ones,yacht", **FILL)
    ones = ys.ask("chance", "box ones == 0", **FILL).exact
    yacht = ys.ask("chance", "box yacht == 0", **FILL).exact
    assert a.exact == pytest.approx(ones + yacht, abs=1e-12)     # linearity of the mean
    lo, hi = a.ci
    assert lo - (hi - lo) / 2 <= a.exact <= hi + (hi - lo) / 2


def test_given_splits_the_games_as_the_law_of_total_probability_says():
    """P(A | B) P(B) + P(A | not B) P(not B) = P(A), on the same simulated games."""
    cond = "box sixes >= 18"
    cache: dict = {}    # one set of simulated games for every question

    def ask(event, **keys):
        spec = {"ask": "chance", "event": event, "scope": "game", "play": "keep-largest", "rules": "yacht",
                "options": ["fill-in-order"], **keys}
        return answer(parse_question(spec), games=GAMES, cache=cache)

    a, b = ask("upper >= 45"), ask(cond)
    given, other = ask("upper >= 45", given=cond), ask("upper >= 45", given=f"not ({cond})")
    assert given.n + other.n == GAMES and given.n == round(b.estimate * GAMES)
    assert given.estimate * b.estimate + other.estimate * (1 - b.estimate) == pytest.approx(a.estimate)
    ratio = ask("upper >= 45", given=cond, versus={"given": f"not {cond}"}, compare="ratio")
    assert ratio.estimate == pytest.approx(given.estimate / other.estimate)
    assert ratio.ci[0] < ratio.estimate < ratio.ci[1] and ratio.exact is None and ratio.unit == "ratio"


def test_and_not_on_dice_are_counts_of_throws():
    """P(large straight and a 6) + P(large straight and not a 6) = P(large straight): 240/7776."""
    both = ys.ask("chance", "large_straight and faces 6", scope="roll", throws=1000).exact
    rest = ys.ask("chance", "large_straight and not faces 6", scope="roll", throws=1000).exact
    assert both == rest == ys.ask("chance", "large_straight", scope="roll", throws=1000).exact / 2
    assert both + rest == pytest.approx(240 / 7776)


@pytest.mark.parametrize("spec, words", [
    ({"event": "score and upper_bonus", "scope": "game", "play": "optimal"}, "'and' joins conditions"),
    ({"event": "faces 7", "scope": "roll"}, "face 7 does not exist"),
    ({"event": "large_straight", "scope": "roll", "versus": {"bogus": 1}}, "cannot differ"),
    ({"event": "large_straight", "scope": "roll", "versus": {"keep": "1"}, "compare": "sum"}, "unknown compare"),
    ({"event": "upper_bonus", "scope": "game", "play": "optimal", "given": "large_straight"}, "condition on the game"),
    ({"event": "score", "ask": "max", "scope": "game", "play": "optimal", "constraint": "no-zero"}, "play = 'any'"),
    ({"event": "score", "ask": "max", "scope": "game", "play": "any", "constraint": "nope"}, "valid constraints"),
    ({"event": "upper", "ask": "value", "scope": "card", "write": {"full_house": "333"}}, "a lower box scores all 5"),
    ({"event": "box chance", "ask": "value", "scope": "roll"}, "goes with scope 'card'"),
])
def test_bad_new_words_are_one_line(spec, words):
    with pytest.raises(ValueError, match=words):
        parse_question({"ask": "chance", **spec})


def test_event_text_reads_back():
    for text in ("not (box fives >= 15 and box sixes >= 18)", "small_straight and faces 34", "zeros ones,yahtzee",
                 "best_box except yahtzee", "when chance", "upper >= 63"):
        assert parse_event(text).text == text
