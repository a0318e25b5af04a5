"""Rule sets: every box of every rule set, the sources' worked examples, jokers, bonuses,
fill order, order-independence and bounds, and bad input. Over 600 lines: the reference
scorer written from RULES.md sits beside the cases it checks.

Where a number comes from a source document or RULES.md, the comment says which.
Expected values are hand-written or come from a plain-Python reference scorer
written here from the RULES.md tables (not from the package's scoring code).
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yahtzee_sim.dice import dice_tables
from yahtzee_sim.rules import get_rules, rule_names, rule_options

YACHT_OPTIONS = [
    "full-house-25", "straights-30-40", "three-dice", "five-not-full-house",
    "no-bonus", "yacht-bonus-100", "fill-in-order", "four-dice-of-four",
]
# Options that change what a roll scores in some box (the rest change card-level rules).
YACHT_SCORING_OPTIONS = ["full-house-25", "straights-30-40", "three-dice",
                         "five-not-full-house", "four-dice-of-four"]
UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes"]


def score(rules_name, dice, options=()):
    """Points of ``dice`` in every box on a fresh card."""
    return get_rules(rules_name, options).score_dice(dice)


# -- a plain-Python reference scorer, written from the RULES.md tables -------------------

def _runs(dice, length):
    faces = set(dice)
    return any(set(range(s, s + length)) <= faces for s in range(1, 8 - length))


def _n_kind(dice, n):
    return max(Counter(dice).values()) >= n


def _top_face_with(dice, n):
    """Highest face shown at least n times (0 if none)."""
    return max([f for f, c in Counter(dice).items() if c >= n], default=0)


def _strict_full_house(dice):
    return sorted(Counter(dice).values()) == [2, 3]


def reference_card(name, options=()):
    """[(box name, scorer(dice) -> int)] in card order, straight from RULES.md."""
    opts = set(options)
    upper = [(n, (lambda f: lambda d: f * d.count(f))(f)) for f, n in enumerate(UPPER, start=1)]
    five = lambda d: 50 if _n_kind(d, 5) else 0  # noqa: E731
    if name.startswith("yahtzee"):
        return upper + [
            ("three_of_a_kind", lambda d: sum(d) if _n_kind(d, 3) else 0),
            ("four_of_a_kind", lambda d: sum(d) if _n_kind(d, 4) else 0),
            # RULES.md: five of a kind is a Full house only as a joker.
            ("full_house", lambda d: 25 if _strict_full_house(d) else 0),
            ("small_straight", lambda d: 30 if _runs(d, 4) else 0),
            ("large_straight", lambda d: 40 if _runs(d, 5) else 0),
            ("yahtzee", five),
            ("chance", sum),
        ]
    if name == "yacht":
        small, big = (30, 40) if "straights-30-40" in opts else (15, 30)

        def full_house(d):
            ok = _strict_full_house(d) or (_n_kind(d, 5) and "five-not-full-house" not in opts)
            return (25 if "full-house-25" in opts else sum(d)) if ok else 0

        def four_dice(d):
            if not _n_kind(d, 4):
                return 0
            return 4 * _top_face_with(d, 4) if "four-dice-of-four" in opts else sum(d)

        card = upper + [("choice", sum)]
        if "three-dice" in opts:
            card.append(("three_dice", lambda d: sum(d) if _n_kind(d, 3) else 0))
        return card + [
            ("four_dice", four_dice),
            ("full_house", full_house),
            ("s_straight", lambda d: small if _runs(d, 4) else 0),
            ("b_straight", lambda d: big if _runs(d, 5) else 0),
            ("yacht", five),
        ]
    if name == "yacht-classic":
        return upper + [
            ("full_house", lambda d: sum(d) if _strict_full_house(d) else 0),
            ("four_of_a_kind", lambda d: 4 * _top_face_with(d, 4)),
            ("little_straight", lambda d: 30 if sorted(d) == [1, 2, 3, 4, 5] else 0),
            ("big_straight", lambda d: 30 if sorted(d) == [2, 3, 4, 5, 6] else 0),
            ("choice", sum),
            ("yacht", five),
        ]
    if name == "yatzy":
        def two_pairs(d):
            pairs = sorted(f for f, c in Counter(d).items() if c >= 2)
            return 2 * (pairs[-1] + pairs[-2]) if len(pairs) >= 2 else 0

        return upper + [
            ("one_pair", lambda d: 2 * _top_face_with(d, 2)),
            ("two_pairs", two_pairs),
            ("three_of_a_kind", lambda d: 3 * _top_face_with(d, 3)),
            ("four_of_a_kind", lambda d: 4 * _top_face_with(d, 4)),
            ("small_straight", lambda d: 15 if sorted(d) == [1, 2, 3, 4, 5] else 0),
            ("large_straight", lambda d: 20 if sorted(d) == [2, 3, 4, 5, 6] else 0),
            ("full_house", lambda d: sum(d) if _strict_full_house(d) else 0),
            ("chance", sum),
            ("yatzy", five),
        ]
    raise AssertionError(f"no reference for {name}")


def _all_option_subsets(options):
    return [c for k in range(len(options) + 1) for c in itertools.combinations(options, k)]


# The core rule sets (RULES.md's first sections); the rest of the family is tested in
# tests/test_family.py against its own reference scorers.
CORE_RULES = ["yahtzee", "yahtzee-free-joker", "yahtzee-original-joker", "yacht", "yacht-classic", "yatzy"]

RULE_CASES = [(n, ()) for n in CORE_RULES] + [
    ("yacht", combo) for combo in _all_option_subsets(YACHT_SCORING_OPTIONS) if combo
] + [("yacht", (o,)) for o in YACHT_OPTIONS if o not in YACHT_SCORING_OPTIONS] + [
    ("yacht", tuple(YACHT_OPTIONS)),
    ("yahtzee", ("no-joker",)), ("yahtzee", ("no-yahtzee-bonus",)),
    ("yahtzee-free-joker", ("no-joker", "no-yahtzee-bonus")),
]


def test_registry_lists_the_rules_md_rule_sets():
    # RULES.md names these six rule sets first (the rest of the family: test_family.py).
    assert rule_names()[:6] == CORE_RULES
    assert list(rule_options("yacht")) == YACHT_OPTIONS
    assert rule_options("yacht-classic") == {} and rule_options("yatzy") == {}


@pytest.mark.parametrize("name,options", RULE_CASES, ids=lambda x: "+".join(x) if isinstance(x, tuple) else x)
def test_every_box_of_every_roll_matches_the_reference(name, options):
    rules = get_rules(name, options)
    card = reference_card(name, options)
    assert rules.box_names == tuple(n for n, _ in card)
    assert rules.score_table.shape == (252, len(card))
    for i, dice in enumerate(rules.dice.roll_dice.tolist()):
        expected = [f(dice) for _, f in card]
        assert rules.score_table[i].tolist() == expected, (dice, rules.box_names)


def test_card_sizes_and_card_level_rules():
    # RULES.md: 13 / 12 / 12 (13 with three-dice) / 15 boxes; bonuses and jokers.
    expect = {
        "yahtzee": (13, 35, 100, "forced"), "yahtzee-free-joker": (13, 35, 100, "free"),
        "yahtzee-original-joker": (13, 35, 100, "original"), "yacht": (12, 35, 0, "none"),
        "yacht-classic": (12, 0, 0, "none"), "yatzy": (15, 50, 0, "none"),
    }
    for name, (boxes, upper_bonus, five_bonus, joker) in expect.items():
        r = get_rules(name)
        assert (r.n_boxes, r.upper_bonus, r.five_bonus, r.joker, r.fill_order) == (
            boxes, upper_bonus, five_bonus, joker, "any"), name
        assert r.upper_bonus_threshold == 63 or r.upper_bonus == 0
    assert get_rules("yacht", ["three-dice"]).n_boxes == 13
    assert get_rules("yacht", ["no-bonus"]).upper_bonus == 0
    assert get_rules("yacht", ["yacht-bonus-100"]).five_bonus == 100
    assert get_rules("yacht", ["yacht-bonus-100"]).joker == "none"
    assert get_rules("yacht", ["fill-in-order"]).fill_order == "in-order"
    assert get_rules("yahtzee", ["no-joker"]).joker == "none"
    assert get_rules("yahtzee", ["no-yahtzee-bonus"]).five_bonus == 0


def test_options_are_order_independent_and_cached():
    a = get_rules("yacht", ["no-bonus", "three-dice"])
    b = get_rules("yacht", ["three-dice", "no-bonus"])
    assert a is b and a.key == "yacht+no-bonus+three-dice"


# -- the worked examples of the sources ------------------------------------------------

def test_source_001_yacht_examples():
    # source 001: 3-3-3-5-5 is a Full House for 19 points, or 9 in the threes box.
    s = score("yacht", [3, 3, 3, 5, 5])
    assert s["full_house"] == 19 and s["threes"] == 9
    # source 001: 6-6-6-2-1 in the sixes box: 18.
    assert score("yacht", [6, 6, 6, 2, 1])["sixes"] == 18
    # source 001: 6-6-5-5-4 in Choice: 26.
    assert score("yacht", [6, 6, 5, 5, 4])["choice"] == 26
    # source 001: 5-5-5-5-3 in Four Dice: 23 ("4つの目だけを足すルール" gives 20).
    assert score("yacht", [5, 5, 5, 5, 3])["four_dice"] == 23
    assert score("yacht", [5, 5, 5, 5, 3], ["four-dice-of-four"])["four_dice"] == 20
    # source 001: 1-1-1-2-2 is 7 in Full House, 25 with the full-house-25 rule.
    assert score("yacht", [1, 1, 1, 2, 2])["full_house"] == 7
    assert score("yacht", [1, 1, 1, 2, 2], ["full-house-25"])["full_house"] == 25
    # source 001: five of a kind may go in Full House (sum), not with five-not-full-house.
    assert score("yacht", [4, 4, 4, 4, 4])["full_house"] == 20
    assert score("yacht", [4, 4, 4, 4, 4], ["full-house-25"])["full_house"] == 25
    assert score("yacht", [4, 4, 4, 4, 4], ["five-not-full-house"])["full_house"] == 0
    # source 001: S.Straight 15 for 4 in a row, B.Straight 30 for 5 (30/40 as an option).
    assert score("yacht", [2, 3, 4, 5, 5])["s_straight"] == 15
    assert score("yacht", [1, 2, 3, 4, 5])["b_straight"] == 30
    assert score("yacht", [1, 2, 3, 4, 5])["s_straight"] == 15  # B contains S
    assert score("yacht", [2, 3, 4, 5, 6], ["straights-30-40"])["b_straight"] == 40
    assert score("yacht", [3, 4, 5, 6, 6], ["straights-30-40"])["s_straight"] == 30
    # source 001: Three Dice: the sum when 3 of a kind.
    s3 = score("yacht", [2, 2, 2, 6, 5], ["three-dice"])
    assert s3["three_dice"] == 17 and s3["four_dice"] == 0
    assert score("yacht", [1, 2, 2, 6, 5], ["three-dice"])["three_dice"] == 0
    # source 001: Yacht 50 whatever the face.
    assert score("yacht", [1, 1, 1, 1, 1])["yacht"] == 50
    assert score("yacht", [1, 1, 1, 1, 2])["yacht"] == 0


def test_source_000_yatzy_examples():
    # source 000: a Yatzy of sixes scores 12 One pair, 18 Three, 24 Four, 30 Sixes and
    # Chance, 0 in Two pairs, Full house and the straights.
    s = score("yatzy", [6, 6, 6, 6, 6])
    assert (s["one_pair"], s["three_of_a_kind"], s["four_of_a_kind"]) == (12, 18, 24)
    assert (s["sixes"], s["chance"], s["yatzy"]) == (30, 30, 50)
    assert (s["two_pairs"], s["full_house"], s["small_straight"], s["large_straight"]) == (0, 0, 0, 0)
    assert all(s[b] == 0 for b in UPPER[:5])
    # source 000: 5-5-4-4-1 is 10 in One pair, 18 in Two pairs.
    s = score("yatzy", [5, 5, 4, 4, 1])
    assert (s["one_pair"], s["two_pairs"]) == (10, 18)
    # source 000: 5-5-5-5-6 is 20 in Four of a kind, 15 in Three of a kind.
    s = score("yatzy", [5, 5, 5, 5, 6])
    assert (s["four_of_a_kind"], s["three_of_a_kind"]) == (20, 15)
    assert s["two_pairs"] == 0  # two pairs must be of different faces
    # source 000: Small straight 1-2-3-4-5 = 15, Large 2-3-4-5-6 = 20; Full house = sum.
    assert score("yatzy", [1, 2, 3, 4, 5])["small_straight"] == 15
    assert score("yatzy", [1, 2, 3, 4, 5])["large_straight"] == 0
    assert score("yatzy", [2, 3, 4, 5, 6])["large_straight"] == 20
    assert score("yatzy", [1, 2, 3, 4, 6])["small_straight"] == 0
    assert score("yatzy", [2, 2, 6, 6, 6])["full_house"] == 22
    assert score("yatzy", [6, 6, 5, 5, 5])["two_pairs"] == 22   # the 3 fives hold a pair


def test_yacht_classic_examples():
    # RULES.md / source 000: Yacht's straights are five in a row, 1-5 and 2-6 only, 30 each.
    assert score("yacht-classic", [1, 2, 3, 4, 5])["little_straight"] == 30
    assert score("yacht-classic", [1, 2, 3, 4, 5])["big_straight"] == 0
    assert score("yacht-classic", [2, 3, 4, 5, 6])["big_straight"] == 30
    assert score("yacht-classic", [2, 3, 4, 5, 6])["little_straight"] == 0
    assert score("yacht-classic", [1, 2, 3, 4, 6])["little_straight"] == 0
    assert score("yacht-classic", [3, 3, 3, 5, 5])["full_house"] == 19
    assert score("yacht-classic", [3, 3, 3, 3, 3])["full_house"] == 0    # strict
    assert score("yacht-classic", [5, 5, 5, 5, 3])["four_of_a_kind"] == 20  # the four matching dice
    assert score("yacht-classic", [5, 5, 5, 5, 5])["four_of_a_kind"] == 20
    assert score("yacht-classic", [2, 2, 2, 2, 2])["yacht"] == 50


def test_yahtzee_examples():
    # RULES.md `yahtzee` table.
    s = score("yahtzee", [1, 2, 3, 4, 6])
    assert (s["small_straight"], s["large_straight"]) == (30, 0)
    assert score("yahtzee", [3, 4, 5, 6, 1])["large_straight"] == 0
    assert score("yahtzee", [3, 4, 5, 6, 1])["small_straight"] == 30
    assert score("yahtzee", [2, 3, 4, 5, 6])["large_straight"] == 40
    assert score("yahtzee", [1, 3, 4, 5, 6])["small_straight"] == 30
    assert score("yahtzee", [1, 2, 3, 5, 6])["small_straight"] == 0
    s = score("yahtzee", [3, 3, 3, 5, 5])
    assert (s["full_house"], s["three_of_a_kind"], s["four_of_a_kind"], s["chance"]) == (25, 19, 0, 19)
    s = score("yahtzee", [5, 5, 5, 5, 5])
    assert (s["yahtzee"], s["full_house"], s["four_of_a_kind"], s["fives"]) == (50, 0, 25, 25)
    # source 003: "tre dadi 4 nella casella Quattro valgono 12".
    assert score("yahtzee", [4, 4, 4, 1, 2])["fours"] == 12


# -- jokers, bonuses, fill order: RuleSet.turn_options -----------------------------------

def options_for(rules, dice, filled_boxes, five_full):
    """(legal box names, scores by box, five bonus) of one game."""
    filled = np.zeros((1, rules.n_boxes), dtype=bool)
    for b in filled_boxes:
        filled[0, rules.box_index(b)] = True
    roll = np.array([rules.dice.roll_index_of(dice)])
    legal, scores, bonus = rules.turn_options(filled, np.array([five_full]), roll)
    assert legal.shape == scores.shape == (1, rules.n_boxes) and bonus.shape == (1,)
    names = {rules.box_names[b] for b in np.flatnonzero(legal[0])}
    return names, dict(zip(rules.box_names, scores[0].tolist())), int(bonus[0])


def open_boxes(rules, filled_boxes):
    return set(rules.box_names) - set(filled_boxes)


LOWER_YAHTZEE = ["three_of_a_kind", "four_of_a_kind", "full_house", "small_straight",
                 "large_straight", "chance"]
FIVE_FIVES = [5, 5, 5, 5, 5]


@pytest.mark.parametrize("five_full,bonus", [(True, 100), (False, 0)])
def test_forced_joker_matching_upper_box_open(five_full, bonus):
    # RULES.md forced joker: the matching upper box must be used if open; the Yahtzee
    # bonus needs 50 in the Yahtzee box (none if it holds 0), the joker applies either way.
    r = get_rules("yahtzee")
    legal, scores, got = options_for(r, FIVE_FIVES, ["yahtzee"], five_full)
    assert legal == {"fives"} and scores["fives"] == 25 and got == bonus


@pytest.mark.parametrize("five_full,bonus", [(True, 100), (False, 0)])
def test_forced_joker_lower_boxes_with_joker_values(five_full, bonus):
    r = get_rules("yahtzee")
    filled = ["yahtzee", "fives", "ones", "chance"]
    legal, scores, got = options_for(r, FIVE_FIVES, filled, five_full)
    assert legal == set(LOWER_YAHTZEE) - {"chance"}
    assert (scores["full_house"], scores["small_straight"], scores["large_straight"]) == (25, 30, 40)
    assert (scores["three_of_a_kind"], scores["four_of_a_kind"]) == (25, 25)
    assert got == bonus
    # Only some lower boxes open: exactly those.
    filled = ["yahtzee", "fives", "three_of_a_kind", "four_of_a_kind", "large_straight", "chance"]
    legal, scores, _ = options_for(r, FIVE_FIVES, filled, five_full)
    assert legal == {"full_house", "small_straight"}
    assert (scores["full_house"], scores["small_straight"]) == (25, 30)


@pytest.mark.parametrize("five_full,bonus", [(True, 100), (False, 0)])
def test_forced_joker_no_lower_open_takes_a_zero_in_upper(five_full, bonus):
    r = get_rules("yahtzee")
    filled = ["yahtzee", "fives", "twos"] + LOWER_YAHTZEE
    legal, scores, got = options_for(r, FIVE_FIVES, filled, five_full)
    assert legal == {"ones", "threes", "fours", "sixes"}
    assert all(scores[b] == 0 for b in legal)
    assert got == bonus


def test_forced_joker_needs_the_yahtzee_box_filled():
    r = get_rules("yahtzee")
    # Yahtzee box open: a five of a kind is an ordinary roll (Full house only as a joker).
    legal, scores, bonus = options_for(r, FIVE_FIVES, ["fives"], False)
    assert legal == open_boxes(r, ["fives"])
    assert (scores["yahtzee"], scores["full_house"], scores["small_straight"]) == (50, 0, 0)
    assert bonus == 0
    # A roll that is not five of a kind is never restricted, whatever the card.
    legal, scores, bonus = options_for(r, [5, 5, 5, 5, 6], ["yahtzee"], True)
    assert legal == open_boxes(r, ["yahtzee"]) and scores["full_house"] == 0 and bonus == 0


@pytest.mark.parametrize("five_full,bonus", [(True, 100), (False, 0)])
def test_free_joker(five_full, bonus):
    # RULES.md yahtzee-free-joker: any open box; 25/30/40 only when the matching upper
    # box is already filled, else a Yahtzee scores 0 in Full house and the straights.
    r = get_rules("yahtzee-free-joker")
    legal, scores, got = options_for(r, FIVE_FIVES, ["yahtzee"], five_full)
    assert legal == open_boxes(r, ["yahtzee"])
    assert (scores["full_house"], scores["small_straight"], scores["large_straight"]) == (0, 0, 0)
    assert (scores["fives"], scores["ones"], scores["chance"]) == (25, 0, 25)
    assert got == bonus
    legal, scores, got = options_for(r, FIVE_FIVES, ["yahtzee", "fives"], five_full)
    assert legal == open_boxes(r, ["yahtzee", "fives"])
    assert (scores["full_house"], scores["small_straight"], scores["large_straight"]) == (25, 30, 40)
    assert (scores["ones"], scores["sixes"], scores["three_of_a_kind"]) == (0, 0, 25)
    assert got == bonus


@pytest.mark.parametrize("five_full,bonus", [(True, 100), (False, 0)])
def test_original_joker(five_full, bonus):
    # RULES.md yahtzee-original-joker: lower boxes first (as a joker), even with the
    # matching upper box open; upper boxes only when no lower box is open.
    r = get_rules("yahtzee-original-joker")
    legal, scores, got = options_for(r, FIVE_FIVES, ["yahtzee"], five_full)
    assert legal == set(LOWER_YAHTZEE)
    assert (scores["full_house"], scores["small_straight"], scores["large_straight"]) == (25, 30, 40)
    assert got == bonus
    legal, scores, got = options_for(r, FIVE_FIVES, ["yahtzee", "ones"] + LOWER_YAHTZEE, five_full)
    assert legal == {"twos", "threes", "fours", "fives", "sixes"}
    assert scores["fives"] == 25 and scores["twos"] == 0   # the normal upper rule
    assert got == bonus


def test_yahtzee_options_no_joker_and_no_bonus():
    r = get_rules("yahtzee", ["no-joker"])
    legal, scores, bonus = options_for(r, FIVE_FIVES, ["yahtzee", "fives"], True)
    assert legal == open_boxes(r, ["yahtzee", "fives"])
    assert scores["full_house"] == 0 and bonus == 100
    r = get_rules("yahtzee", ["no-yahtzee-bonus"])
    legal, scores, bonus = options_for(r, FIVE_FIVES, ["yahtzee"], True)
    assert legal == {"fives"} and bonus == 0


def test_yacht_has_no_joker_and_no_bonus_by_default():
    # RULES.md yacht: no Yacht bonus, no joker.
    for name in ["yacht", "yacht-classic", "yatzy"]:
        r = get_rules(name)
        five = r.five_box
        legal, scores, bonus = options_for(r, FIVE_FIVES, [five, "fives"], True)
        assert legal == open_boxes(r, [five, "fives"]) and bonus == 0
        assert scores == get_rules(name).score_dice(FIVE_FIVES)


def test_yacht_bonus_100_only_after_a_50():
    # source 001 "2回目からのヨットに100点": +100 per further Yacht after a 50 in the
    # Yacht box; the roll is placed normally (no joker).
    r = get_rules("yacht", ["yacht-bonus-100"])
    legal, scores, bonus = options_for(r, FIVE_FIVES, ["yacht"], True)
    assert bonus == 100 and legal == open_boxes(r, ["yacht"])
    assert scores == get_rules("yacht").score_dice(FIVE_FIVES)
    assert scores["s_straight"] == 0 and scores["full_house"] == 25
    assert options_for(r, FIVE_FIVES, ["yacht"], False)[2] == 0      # a 0 in the box
    assert options_for(r, FIVE_FIVES, [], False)[2] == 0              # first Yacht
    assert options_for(r, [5, 5, 5, 5, 6], ["yacht"], True)[2] == 0   # not a Yacht


@pytest.mark.parametrize("options", [("fill-in-order",), ("fill-in-order", "three-dice"),
                                     ("fill-in-order", "yacht-bonus-100")])
def test_fill_in_order_allows_only_the_next_box(options):
    # source 001 "上から順に書く": boxes filled top to bottom in card order.
    r = get_rules("yacht", options)
    names = list(r.box_names)
    for k in range(r.n_boxes):
        for dice in ([1, 2, 3, 4, 5], FIVE_FIVES):
            legal, _, bonus = options_for(r, dice, names[:k], k > names.index("yacht"))
            assert legal == {names[k]}
            if dice == FIVE_FIVES and "yacht-bonus-100" in options and k > names.index("yacht"):
                assert bonus == 100


def test_legal_boxes_fill_order_is_the_first_open_box_even_with_gaps():
    r = get_rules("yacht", ["fill-in-order"])
    filled = np.zeros((2, r.n_boxes), dtype=bool)
    filled[0, [0, 1, 3]] = True     # a gap cannot arise in play, but the rule is well defined
    filled[1, :] = True
    legal = r.legal_boxes(filled)
    assert np.flatnonzero(legal[0]).tolist() == [2]
    assert not legal[1].any()       # a finished card has no legal box


def test_turn_options_vectorized_matches_row_by_row():
    rng = np.random.default_rng(3)
    for name, options in [("yahtzee", ()), ("yahtzee-free-joker", ()), ("yahtzee-original-joker", ()),
                          ("yacht", ("yacht-bonus-100", "fill-in-order"))]:
        r = get_rules(name, options)
        n = 400
        filled = rng.random((n, r.n_boxes)) < 0.5
        filled[np.arange(n), rng.integers(0, r.n_boxes, n)] = False   # at least one open
        full = rng.random(n) < 0.5
        five_rolls = np.flatnonzero(r.five_face > 0)
        rolls = np.where(rng.random(n) < 0.6, rng.choice(five_rolls, n), rng.integers(0, 252, n))
        legal, scores, bonus = r.turn_options(filled, full, rolls)
        assert legal.any(axis=1).all(), "every unfinished card has a legal box"
        assert not (legal & filled).any(), "a filled box is never legal"
        for g in range(0, n, 37):
            lg, sg, bg = r.turn_options(filled[g:g + 1], full[g:g + 1], rolls[g:g + 1])
            assert (lg[0] == legal[g]).all() and (sg[0] == scores[g]).all() and bg[0] == bonus[g]


def test_upper_bonus_gain():
    # RULES.md: +35 when Ones..Sixes total 63 or more (Yatzy +50); none in yacht-classic.
    r = get_rules("yahtzee")
    scores = np.zeros((4, r.n_boxes), dtype=np.int16)
    scores[:, r.box_index("sixes")] = 18
    scores[:, r.box_index("chance")] = 30
    upper_total = np.array([44, 45, 50, 63])
    gain = r.upper_bonus_gain(upper_total, scores)
    assert gain[:, r.box_index("sixes")].tolist() == [0, 35, 35, 0]   # 62, 63, 68, already had it
    assert gain[:, r.box_index("chance")].tolist() == [0, 0, 0, 0]     # lower boxes never
    assert get_rules("yatzy").upper_bonus_gain(np.array([45]), np.full((1, 15), 18))[0, 5] == 50
    assert get_rules("yatzy").upper_bonus_gain(np.array([45]), np.full((1, 15), 18))[0, 6] == 0
    for name, options in [("yacht", ("no-bonus",)), ("yacht-classic", ())]:
        rr = get_rules(name, options)
        assert not rr.upper_bonus_gain(np.array([60]), np.full((1, rr.n_boxes), 30)).any()
    assert r.final_bonus(np.array([62, 63, 105])).tolist() == [0, 35, 35]
    assert get_rules("yatzy").final_bonus(np.array([63])).tolist() == [50]
    assert get_rules("yacht", ["no-bonus"]).final_bonus(np.array([100])).tolist() == [0]


# -- properties (hypothesis) -------------------------------------------------------------

dice_lists = st.lists(st.integers(1, 6), min_size=5, max_size=5)
ALL_RULES = [get_rules(n, o) for n, o in RULE_CASES]

# Boxes that pay a fixed value or nothing, per RULES.md.
FIXED = {
    "yahtzee": {"full_house": 25, "small_straight": 30, "large_straight": 40, "yahtzee": 50},
    "yacht": {"s_straight": 15, "b_straight": 30, "yacht": 50},
    "yacht-classic": {"little_straight": 30, "big_straight": 30, "yacht": 50},
    "yatzy": {"small_straight": 15, "large_straight": 20, "yatzy": 50},
}


def fixed_boxes(r):
    out = dict(FIXED["yahtzee" if r.name.startswith("yahtzee") else r.name])
    if r.name == "yacht" and "straights-30-40" in r.options:
        out.update(s_straight=30, b_straight=40)
    if r.name == "yacht" and "full-house-25" in r.options:
        out["full_house"] = 25
    return out


@settings(max_examples=150, deadline=None)
@given(dice=dice_lists, perm_seed=st.integers(0, 2**32 - 1))
def test_scores_do_not_depend_on_dice_order(dice, perm_seed):
    t = dice_tables()
    perm = np.random.default_rng(perm_seed).permutation(dice).tolist()
    assert t.roll_index_of(dice) == t.roll_index_of(perm) == t.roll_index_of(sorted(dice))
    batch = np.array([dice, perm, sorted(dice, reverse=True)])
    assert len(set(t.roll_index(batch).tolist())) == 1
    counts = np.bincount(dice, minlength=7)[1:][None, :]
    for r in ALL_RULES:
        s = r.score_dice(dice)
        assert s == r.score_dice(perm)
        # The same multiset scored straight from its face counts.
        assert [int(b.score(counts)[0]) for b in r.boxes] == list(s.values())


@settings(max_examples=150, deadline=None)
@given(dice=dice_lists)
def test_per_box_bounds(dice):
    total = sum(dice)
    five = len(set(dice)) == 1
    for r in ALL_RULES:
        s = r.score_dice(dice)
        fixed = fixed_boxes(r)
        for b in r.boxes:
            v = s[b.name]
            if b.name in fixed:
                assert v in (0, fixed[b.name]), (r.key, b.name, v)
                continue
            assert 0 <= v <= min(total, 30), (r.key, b.name, v)   # some of the dice
            if b.upper_face:
                assert v % b.upper_face == 0 and v == b.upper_face * dice.count(b.upper_face)
                assert v <= 5 * b.upper_face
        chance = "chance" if "chance" in s else "choice"
        assert s[chance] == total
        assert (s[r.five_box] == 50) == five and s[r.five_box] in (0, 50)


def test_upper_boxes_are_the_six_faces_in_order():
    for r in ALL_RULES:
        assert r.upper_face[:6].tolist() == [1, 2, 3, 4, 5, 6]
        assert not r.is_upper[6:].any()
        assert (r.joker_points[:6] == -1).all()


# -- bad input --------------------------------------------------------------------------

def _one_line(exc_info):
    msg = str(exc_info.value)
    assert "\n" not in msg and msg
    return msg


def test_unknown_rule_set_names_the_valid_ones():
    with pytest.raises(ValueError) as e:
        get_rules("yahtzeee")
    msg = _one_line(e)
    assert "yahtzeee" in msg and all(n in msg for n in rule_names())
    with pytest.raises(ValueError):
        rule_options("nope")


def test_unknown_option_names_the_valid_ones():
    with pytest.raises(ValueError) as e:
        get_rules("yacht", ["three-dices"])
    msg = _one_line(e)
    assert "three-dices" in msg and all(o in msg for o in YACHT_OPTIONS)


@pytest.mark.parametrize("name,option", [("yahtzee", "three-dice"), ("yatzy", "no-bonus"),
                                         ("yacht", "no-joker"), ("yacht-classic", "full-house-25")])
def test_option_of_another_rule_set(name, option):
    with pytest.raises(ValueError) as e:
        get_rules(name, [option])
    msg = _one_line(e)
    assert option in msg and name in msg
    for valid in rule_options(name):
        assert valid in msg
    if not rule_options(name):
        assert "(none)" in msg


def test_options_with_a_rule_set_object_are_refused():
    with pytest.raises(ValueError):
        get_rules(get_rules("yacht"), ["no-bonus"])
    assert get_rules(get_rules("yacht")) is get_rules("yacht")


@pytest.mark.parametrize("dice", [[1, 2, 3, 4], [1, 2, 3, 4, 5, 6], [], [0, 1, 2, 3, 4],
                                  [1, 2, 3, 4, 7], [-1, 2, 3, 4, 5], [[1, 2, 3, 4, 5]], "abcde",
                                  "1234"])
def test_bad_dice(dice):
    t = dice_tables()
    with pytest.raises(ValueError):
        t.roll_index_of(dice)
    with pytest.raises(ValueError):
        get_rules("yahtzee").score_dice(dice)


def test_bad_dice_messages_name_the_valid_range():
    with pytest.raises(ValueError) as e:
        get_rules("yatzy").score_dice([1, 2, 3, 4, 7])
    assert "1..6" in _one_line(e) and "5" in str(e.value)


@pytest.mark.parametrize("dice", [[1.5, 2, 3, 4, 5], ["a", 2, 3, 4, 5], 12345, [True, 2, 3, 4, 5]])
def test_non_integer_dice_are_refused(dice):
    with pytest.raises(ValueError, match="whole numbers in 1..6"):
        dice_tables().roll_index_of(dice)


def test_options_given_as_a_string_are_refused():
    with pytest.raises(ValueError, match="list of option names"):
        get_rules("yacht", "no-bonus")


def test_negative_or_oversized_keeps_are_refused():
    t = dice_tables()
    with pytest.raises(ValueError):
        t.keep_index_of_counts(np.array([-1, 0, 0, 0, 0, 0]))
    with pytest.raises(ValueError):
        t.keep_index_of_counts(np.array([3, 3, 0, 0, 0, 0]))
    with pytest.raises(ValueError):
        t.keep_index_of_counts(np.array([[0, 0, 0, 0, 0, 1], [0, -2, 0, 0, 0, 0]]))


def test_unknown_box_names_the_valid_ones():
    r = get_rules("yatzy")
    with pytest.raises(ValueError) as e:
        r.box_index("yahtzee")
    msg = _one_line(e)
    assert all(b in msg for b in r.box_names)
    assert r.box_index("Two pairs") == r.box_index("two-pairs") == 7


def test_options_of_the_wrong_type_are_a_value_error():
    # issue 12 §4: get_rules(..., None) raised TypeError; None now means "no options",
    # and anything that is not a list of names is the same ValueError as the CLI's.
    assert get_rules("yahtzee", None) is get_rules("yahtzee")
    for bad in (5, 3.5, object()):
        with pytest.raises(ValueError, match="options must be a list of option names"):
            get_rules("yahtzee", bad)
