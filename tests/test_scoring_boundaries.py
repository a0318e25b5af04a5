"""Issue 23 §6: every card-level scoring constant of every game pinned at its boundary.

A planted change of Yamb's column-bonus threshold (60 to 61) passed the whole suite:
the box scores were checked roll by roll against reference scorers (tests/test_rules.py,
tests/test_family.py), the thresholds and bonuses of finished cards were not. Here each
constant is taken from RULES.md (typed once, below, with the line it comes from) and
checked just below, at and just above its boundary, against a scorer written here in
plain Python, through every path the project scores by: the final card
(:meth:`RuleSet.card_total`, :meth:`RuleSet.final_bonus`, :meth:`RuleSet.points`) and
the points a box gains when it is written (:meth:`RuleSet.turn_gain`, what the solver
and the strategies use).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from yahtzee_sim.rules import get_rules

# -- the constants, from RULES.md --------------------------------------------------------------

def three_of_each(faces: int) -> int:
    """RULES.md, seven-sided dice: "the upper-bonus threshold is three of each face"."""
    return 3 * faces * (faces + 1) // 2


UPPER_TIERS = {
    # (rule set, options): [(threshold, bonus held from it on)]
    ("yahtzee", ()): [(63, 35)],                       # "+35 when Ones…Sixes total 63 or more"
    ("yahtzee", ("no-joker",)): [(63, 35)],
    ("yahtzee-free-joker", ()): [(63, 35)],
    ("yahtzee-original-joker", ()): [(63, 35)],
    ("yacht", ()): [(63, 35)],                         # "Upper bonus +35 at 63"
    ("yacht", ("no-bonus",)): [],                      # "no upper bonus"
    ("yacht", ("fill-in-order", "three-dice")): [(63, 35)],
    ("yacht-classic", ()): [],                         # "No bonuses"
    ("yatzy", ()): [(63, 50)],                         # "Upper bonus +50 at 63"
    ("kniffel", ()): [(63, 35)],                       # "upper bonus (35 at 63)"
    ("generala", ()): [],                              # "No upper bonus"
    ("kismet", ()): [(63, 35), (71, 55), (78, 75)],    # "+35 at 63-70, +55 at 71-77, +75 at 78 or more"
    ("maxi-yatzy", ()): [(84, 100)],                   # "upper bonus +100 at 84 or more"
    ("maxi-yatzy", ("no-saved-throws",)): [(84, 100)],
    ("balut", ()): [],                                 # points instead (below)
    ("yacht", ("faces-7",)): [(three_of_each(7), 35)],  # "84 for seven"
    ("yahtzee", ("faces-7",)): [(three_of_each(7), 35)],
    ("yahtzee-free-joker", ("faces-5",)): [(three_of_each(5), 35)],
    ("yacht", ("faces-4",)): [(three_of_each(4), 35)],
}

FIVE_BONUS = {
    # (rule set, options): points for each further five of a kind
    ("yahtzee", ()): 100,                              # "+100 for every further Yahtzee"
    ("yahtzee", ("no-yahtzee-bonus",)): 0,
    ("yahtzee-free-joker", ()): 100,
    ("yahtzee-original-joker", ()): 100,
    ("yacht", ()): 0,                                  # "No Yacht bonus"
    ("yacht", ("yacht-bonus-100",)): 100,              # "+100 for each further Yacht"
    ("yacht-classic", ()): 0,
    ("yatzy", ()): 0,                                  # "No Yatzy bonus"
    ("kniffel", ()): 50,                               # "earns +50"
    ("kniffel", ("kniffel-bonus-100",)): 100,
    ("kniffel", ("no-kniffel-bonus",)): 0,
    ("generala", ()): 0,
    ("kismet", ()): 0,                                 # "A second Kismet has no special effect"
    ("maxi-yatzy", ()): 0,
}

YAMB_COLUMN_BONUS_AT, YAMB_COLUMN_BONUS = 60, 30      # "+30 when a column's six upper rows total 60 or more"
YAMB_KENTA = (66, 56, 46)                             # "66 on the first throw, 56 on the second, 46 on the third"

BALUT_TOTALS = {"fours": 52, "fives": 65, "sixes": 78, "choice": 100}   # ">= 52 ... Choice >= 100: 2 points each"
BALUT_TOTAL_WORTH = 2
BALUT_ALL_FOUR = {"straight": 4, "full_house": 3}     # "all four Straights non-zero: 4; all four Full houses: 3"
BALUT_EACH = 2                                        # "each Balut: 2"
BALUT_CATEGORIES = ("fours", "fives", "sixes", "straight", "full_house", "choice", "balut")


def balut_band(score: int) -> int:
    """RULES.md: "< 300: -2 points, 300-349: -1, 350-399: 0, then +1 for each further 50 up
    to +6 at 650 or more", written out band by band."""
    if score < 300:
        return -2
    if score < 350:
        return -1
    for k, low in enumerate(range(350, 650, 50)):
        if score < low + 50:
            return k
    return 6


GENERALA_SERVED = {"escalera": (20, 25), "full": (30, 35), "poker": (40, 45), "generala": (50, 60)}
# "Escalera ... 20; Full ... 30; Póker ... 40; Generala ... 50 ... served ... 25, 35, 45 ... 60"


def case_id(case) -> str:
    name, options = case
    return "+".join((name, *options))


def around(threshold: int) -> list[int]:
    return [threshold - 1, threshold, threshold + 1]


def tier_bonus(tiers, total: int) -> int:
    held = 0
    for threshold, bonus in tiers:
        if total >= threshold:
            held = bonus
    return held


# -- the upper bonus: on the finished card and when a box is written ---------------------------------

@pytest.mark.parametrize("case", list(UPPER_TIERS), ids=case_id)
def test_upper_bonus_at_every_threshold(case):
    name, options = case
    rules = get_rules(name, options)
    tiers = UPPER_TIERS[case]
    assert sorted(t for t, _ in tiers) == [t for t, _ in tiers]
    totals = sorted({0, 1, *itertools.chain.from_iterable(around(t) for t, _ in tiers), 200})
    up = np.flatnonzero(rules.is_upper)
    for total in totals:
        expected = tier_bonus(tiers, total)
        assert int(rules.final_bonus(np.array([total]))[0]) == expected, (case, total)
        card = np.zeros((1, rules.n_boxes), dtype=np.int16)
        if rules.card_score is None and len(up):
            card[0, up[0]] = total
            got = int(rules.card_total(card, np.array([total], np.int16), np.zeros(1, np.int16))[0])
            assert got == total + expected, (case, total)


@pytest.mark.parametrize("case", [c for c, tiers in UPPER_TIERS.items() if tiers], ids=case_id)
def test_upper_bonus_gained_when_the_box_that_crosses_it_is_written(case):
    """What the solver and the strategies see: writing p points in an upper box at upper total u
    gains p plus the bonus held at u + p less the bonus held at u."""
    name, options = case
    rules = get_rules(name, options)
    tiers = UPPER_TIERS[case]
    up = np.flatnonzero(rules.is_upper)
    rows = []
    for threshold, _ in tiers:
        for after in around(threshold):
            for points in (1, 5, 12):
                if after - points >= 0:
                    rows.append((after - points, points))
    before = np.array([u for u, _ in rows], dtype=np.int16)
    scores = np.zeros((len(rows), rules.n_boxes), dtype=np.int16)
    scores[:, up[-1]] = [p for _, p in rows]
    gain = rules.turn_gain(before, scores, np.zeros(len(rows), np.int16))
    for k, (u, p) in enumerate(rows):
        assert int(gain[k, up[-1]]) == p + tier_bonus(tiers, u + p) - tier_bonus(tiers, u), (case, u, p)


# -- the five-of-a-kind bonus ------------------------------------------------------------------

@pytest.mark.parametrize("case", list(FIVE_BONUS), ids=case_id)
def test_five_of_a_kind_bonus_for_each_further_one(case):
    name, options = case
    rules = get_rules(name, options)
    worth = FIVE_BONUS[case]
    assert rules.five_bonus == worth
    card = np.zeros((3, rules.n_boxes), dtype=np.int16)
    counts = np.array([0, 1, 2], dtype=np.int16)
    got = rules.card_total(card, np.zeros(3, np.int16), counts)
    assert got.tolist() == [0, worth, 2 * worth]
    gain = rules.turn_gain(np.zeros(2, np.int16), np.zeros((2, rules.n_boxes), np.int16),
                           np.array([0, worth], np.int16))
    assert gain[:, 0].tolist() == [0, worth]


# -- Yamb: the column bonus, (Max - Min) x Ones, Kenta by the throw ----------------------------------

def yamb_reference(card: list[list[int]]) -> int:
    """RULES.md: "A column scores its upper rows, its bonus, (Max - Min) x Ones (may be
    negative), and its lower rows"; ``card`` is four columns of 13 rows."""
    total = 0
    for col in card:
        upper = sum(col[:6])
        total += upper + (YAMB_COLUMN_BONUS if upper >= YAMB_COLUMN_BONUS_AT else 0)
        total += (col[6] - col[7]) * col[0] + sum(col[8:])
    return total


def _yamb_column(upper_total: int, ones: int = 2, max_: int = 25, min_: int = 9,
                 lower=(56, 32, 47, 56, 75)) -> list[int]:
    rest = upper_total - ones
    uppers = [ones]
    for face in (2, 3, 4, 5, 6):   # spread what is left over the other five rows
        take = min(rest, 5 * face)
        uppers.append(take)
        rest -= take
    assert rest == 0
    return uppers + [max_, min_, *lower]


@pytest.mark.parametrize("column", range(4))
@pytest.mark.parametrize("upper_total", [*around(YAMB_COLUMN_BONUS_AT), 2, 90])
def test_yamb_column_bonus_at_its_threshold(column, upper_total):
    rules = get_rules("yamb")
    card = [_yamb_column(40) for _ in range(4)]
    card[column] = _yamb_column(upper_total)
    flat = np.array([sum(card, [])], dtype=np.int16)
    got = int(rules.card_total(flat, np.zeros(1, np.int16), np.zeros(1, np.int16))[0])
    assert got == yamb_reference(card)


@pytest.mark.parametrize("spread", [(30, 5), (5, 30), (17, 17), (18, 17), (17, 18)])
@pytest.mark.parametrize("ones", [0, 1, 5])
def test_yamb_max_minus_min_times_ones(spread, ones):
    rules = get_rules("yamb")
    card = [_yamb_column(40) for _ in range(4)]
    card[2] = _yamb_column(40, ones=ones, max_=spread[0], min_=spread[1])
    flat = np.array([sum(card, [])], dtype=np.int16)
    assert int(rules.card_total(flat, np.zeros(1, np.int16), np.zeros(1, np.int16))[0]) == yamb_reference(card)


def test_yamb_kenta_pays_by_the_throw():
    rules = get_rules("yamb")
    d = rules.dice
    for col in ("down", "up", "free", "announce"):
        box = rules.box_names.index(f"{col}_kenta")
        for dice in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6], [1, 2, 3, 4, 6]):
            roll = d.roll_index_of(dice)
            straight = sorted(dice) in ([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
            got = [int(rules.score_tables[t, roll, box]) for t in range(3)]
            assert got == (list(YAMB_KENTA) if straight else [0, 0, 0]), (col, dice)


# -- Balut's points -------------------------------------------------------------------------------

def balut_reference(card: dict[str, list[int]]) -> int:
    points = 0
    for category, least in BALUT_TOTALS.items():
        points += BALUT_TOTAL_WORTH if sum(card[category]) >= least else 0
    for category, worth in BALUT_ALL_FOUR.items():
        points += worth if all(v > 0 for v in card[category]) else 0
    points += BALUT_EACH * sum(1 for v in card["balut"] if v > 0)
    return points + balut_band(sum(sum(v) for v in card.values()))


def _balut_card(**totals) -> dict[str, list[int]]:
    """Four rounds a category; a category's total is spread as evenly as integers allow."""
    base = {"fours": 40, "fives": 50, "sixes": 60, "straight": 0, "full_house": 0, "choice": 80, "balut": 0}
    base.update(totals)
    return {c: [base[c] // 4 + (1 if k < base[c] % 4 else 0) for k in range(4)] for c in BALUT_CATEGORIES}


def _balut_points(card: dict[str, list[int]]) -> tuple[int, int]:
    rules = get_rules("balut")
    flat = np.array([[v for c in BALUT_CATEGORIES for v in card[c]]], dtype=np.int16)
    assert rules.box_names == tuple(f"{c}_{k}" for c in BALUT_CATEGORIES for k in range(1, 5))
    score = int(rules.card_total(flat, np.zeros(1, np.int16), np.zeros(1, np.int16))[0])
    return int(rules.points(flat)[0]), score


BALUT_CASES = (
    [dict(**{c: t}) for c, least in BALUT_TOTALS.items() for t in around(least)]
    + [dict(straight=s) for s in (60, 20)]        # 15 each: all four non-zero; 20: only one round
    + [dict(full_house=f) for f in (80, 12)]
    + [dict(balut=b) for b in (0, 45, 90, 135, 180)]
)


@pytest.mark.parametrize("totals", BALUT_CASES, ids=lambda t: ",".join(f"{k}={v}" for k, v in t.items()))
def test_balut_points_at_each_threshold(totals):
    card = _balut_card(**totals)
    points, score = _balut_points(card)
    assert score == sum(sum(v) for v in card.values())
    assert points == balut_reference(card)


@pytest.mark.parametrize("score", sorted({0, 1, 299, 300, 301, *itertools.chain.from_iterable(
    around(low) for low in range(350, 701, 50)), 900}))
def test_balut_points_at_each_score_band(score):
    """The total score moved across every band edge, the category points held still."""
    card = _balut_card(fours=0, fives=0, sixes=0, choice=0)
    card["straight"] = [score // 4 + (1 if k < score % 4 else 0) for k in range(4)]
    points, got_score = _balut_points(card)
    assert got_score == score and points == balut_reference(card)


def test_balut_score_bands_written_out():
    """The reference's bands themselves, against RULES.md's words at each edge."""
    assert [balut_band(s) for s in (299, 300, 349, 350, 399, 400, 449, 450, 599, 600, 649, 650, 5000)] == \
        [-2, -1, -1, 0, 0, 1, 1, 2, 4, 5, 5, 6, 6]


# -- Generala: served combinations and the doble ---------------------------------------------------

def test_generala_served_and_unserved_values():
    rules = get_rules("generala")
    d = rules.dice
    examples = {"escalera": [1, 2, 3, 4, 5], "full": [2, 2, 2, 5, 5], "poker": [3, 3, 3, 3, 6],
                "generala": [4, 4, 4, 4, 4]}
    for box, dice in examples.items():
        b = rules.box_names.index(box)
        roll = d.roll_index_of(dice)
        later, served = GENERALA_SERVED[box]
        # the throw that made the dice: the first throw pays the served value, later ones the plain
        assert int(rules.score_tables[0, roll, b]) == served, box
        assert int(rules.score_tables[1, roll, b]) == later and int(rules.score_tables[2, roll, b]) == later, box
    near = {"escalera": [1, 2, 3, 4, 4], "full": [2, 2, 2, 2, 5], "poker": [3, 3, 3, 6, 6], "generala": [4, 4, 4, 4, 5]}
    for box, dice in near.items():  # just short of the combination: nothing, served or not
        b = rules.box_names.index(box)
        roll = d.roll_index_of(dice)
        assert [int(rules.score_tables[t, roll, b]) for t in range(3)] == [0, 0, 0], (box, dice)


def test_generala_doble_is_100_only_with_a_generala_in_its_box():
    rules = get_rules("generala")
    doble = rules.box_names.index("generala_doble")
    generala = rules.box_names.index("generala")
    roll = np.array([rules.dice.roll_index_of([6, 6, 6, 6, 6])])
    filled = np.zeros((2, rules.n_boxes), dtype=bool)
    filled[:, generala] = True
    five_full = np.array([True, False])            # the Generala box holds a Generala, or holds 0
    legal, scores, _ = rules.turn_options(filled, five_full, np.repeat(roll, 2), throws=np.array([2, 2]))
    assert scores[:, doble].tolist() == [100, 0]


# -- the tests above can fail: planted changes (all of them: python tests/plant_scoring_changes.py .) --

@pytest.mark.parametrize("planted", [("YAMB_BONUS_AT", 61), ("YAMB_BONUS_AT", 59), ("YAMB_BONUS", 31)])
def test_the_reported_planted_yamb_change_is_caught(monkeypatch, planted):
    from yahtzee_sim.rules import catalog

    monkeypatch.setattr(catalog, *planted)
    with pytest.raises(AssertionError):
        for upper_total in around(YAMB_COLUMN_BONUS_AT):
            test_yamb_column_bonus_at_its_threshold(0, upper_total)


@pytest.mark.parametrize("planted", [
    ("BALUT_TOTAL_POINTS", (("fours", 53, 2), ("fives", 65, 2), ("sixes", 78, 2), ("choice", 100, 2))),
    ("BALUT_SCORE_BANDS", (350, 50, -2, 5)),
])
def test_a_planted_balut_change_is_caught(monkeypatch, planted):
    from yahtzee_sim.rules import catalog

    monkeypatch.setattr(catalog, *planted)
    with pytest.raises(AssertionError):
        for totals in BALUT_CASES:
            test_balut_points_at_each_threshold(totals)
        for score in (649, 650, 700):
            test_balut_points_at_each_score_band(score)
