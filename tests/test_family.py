"""The rest of the family (RULES.md "The rest of the family"): Kniffel, Generala, Kismet,
seven-sided (any-sided) dice, Balut, Maxi Yatzy, Yamb; keys that round-trip.

Over 600 lines: one plain-Python reference scorer per game sits beside its tests.

Every scorer is checked on every roll (or on hypothesis-drawn dice) against a
plain-Python reference written here from RULES.md's words, not from the package's
scoring code. Worked examples cite their source.
"""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import check_ruleset
from yahtzee_sim.dice import dice_tables
from yahtzee_sim.rules import get_rules, parse_key, rule_names, rule_numbers, rule_options

UPPER = ["ones", "twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines",
         "tens", "elevens", "twelves"]


# -- plain-Python helpers, from RULES.md's words --------------------------------------------

def kind(d, n):
    """At least n dice show the same face."""
    return max(Counter(d).values()) >= n


def strict_full_house(d):
    """Three of one face and two of another (five dice)."""
    return sorted(Counter(d).values()) == [2, 3]


def has_run(d, length, faces):
    """A run of ``length`` consecutive faces within 1..faces."""
    shown = set(d)
    return any(set(range(s, s + length)) <= shown for s in range(1, faces - length + 2))


def table_of(rules, reference, throw=None):
    """Compare every roll's scores in every box with ``reference(dice) -> dict``."""
    tables = rules.score_tables if throw is not None else None
    for i, dice in enumerate(rules.dice.roll_dice.tolist()):
        expected = reference(dice)
        assert list(expected) == list(rules.box_names)
        got = (tables[throw - 1, i] if throw is not None else rules.score_table[i]).tolist()
        assert got == list(expected.values()), (dice, rules.key)


def options_for(rules, dice, filled_boxes, five_full, throws=None):
    filled = np.zeros((1, rules.n_boxes), dtype=bool)
    for b in filled_boxes:
        filled[0, rules.box_index(b)] = True
    roll = np.array([rules.dice.roll_index_of(dice)])
    legal, scores, bonus = rules.turn_options(
        filled, np.array([five_full]), roll, throws=None if throws is None else np.array([throws]))
    return ({rules.box_names[b] for b in np.flatnonzero(legal[0])},
            dict(zip(rules.box_names, scores[0].tolist())), int(bonus[0]))


# -- Kniffel ---------------------------------------------------------------------------------

KNIFFEL_BOXES = ["einser", "zweier", "dreier", "vierer", "fuenfer", "sechser", "dreierpasch",
                 "viererpasch", "full_house", "kleine_strasse", "grosse_strasse", "kniffel", "chance"]


def kniffel_reference(d):
    out = {name: f * d.count(f) for f, name in enumerate(KNIFFEL_BOXES[:6], start=1)}
    out.update(
        dreierpasch=sum(d) if kind(d, 3) else 0,
        viererpasch=sum(d) if kind(d, 4) else 0,
        full_house=25 if strict_full_house(d) else 0,
        kleine_strasse=30 if has_run(d, 4, 6) else 0,
        grosse_strasse=40 if has_run(d, 5, 6) else 0,
        kniffel=50 if kind(d, 5) else 0,
        chance=sum(d),
    )
    return out


@pytest.mark.parametrize("options", [(), ("kniffel-bonus-100",), ("no-kniffel-bonus",), ("free-joker",),
                                     ("free-joker", "no-kniffel-bonus")])
def test_kniffel_card(options):
    r = get_rules("kniffel", options)
    table_of(r, kniffel_reference)
    # RULES.md: Yahtzee's upper bonus (35 at 63), forced joker, +50 per further Kniffel.
    assert r.upper_bonus_tiers == ((63, 35),)
    assert r.five_bonus == (100 if "kniffel-bonus-100" in options else 0 if "no-kniffel-bonus" in options
                            else 50)
    assert r.joker == ("free" if "free-joker" in options else "forced")
    check_ruleset(r)


def test_kniffel_labels_are_german_and_accepted_as_box_names():
    r = get_rules("kniffel")
    assert [b.label for b in r.boxes][6:12] == ["Dreierpasch", "Viererpasch", "Full House",
                                                 "Kleine Straße", "Große Straße", "Kniffel"]
    assert r.box_index("Große Straße") == r.box_index("grosse_strasse") == 10
    assert r.box_index("Fünfer") == 4


def test_kniffel_extra_kniffel_is_placed_by_the_forced_joker_and_earns_50():
    r = get_rules("kniffel")
    legal, scores, bonus = options_for(r, [4] * 5, ["kniffel"], True)
    assert legal == {"vierer"} and bonus == 50
    legal, scores, bonus = options_for(r, [4] * 5, ["kniffel", "vierer"], True)
    assert "chance" in legal and "einser" not in legal
    assert (scores["full_house"], scores["kleine_strasse"], scores["grosse_strasse"]) == (25, 30, 40)
    assert options_for(r, [4] * 5, ["kniffel"], False)[2] == 0          # a 0 in the Kniffel box
    assert options_for(get_rules("kniffel", ["kniffel-bonus-100"]), [4] * 5, ["kniffel"], True)[2] == 100
    # free-joker: any open box; joker values only when the matching upper box is filled.
    legal, scores, _ = options_for(get_rules("kniffel", ["free-joker"]), [4] * 5, ["kniffel"], True)
    assert "einser" in legal and scores["full_house"] == 0


def test_kniffel_bonus_100_is_yahtzee():
    # RULES.md: kniffel-bonus-100 is Yahtzee under German names.
    k, y = get_rules("kniffel", ["kniffel-bonus-100"]), get_rules("yahtzee")
    assert (k.score_table == y.score_table).all() and (k.joker_points == y.joker_points).all()
    for field in ("upper_bonus_tiers", "five_bonus", "joker", "fill_order", "n_dice", "n_faces", "n_rolls"):
        assert getattr(k, field) == getattr(y, field), field
    assert k.five_box_index == y.five_box_index


def test_kniffel_conflicting_bonus_options():
    with pytest.raises(ValueError, match="kniffel-bonus-100 and no-kniffel-bonus"):
        get_rules("kniffel", ["kniffel-bonus-100", "no-kniffel-bonus"])


# -- Generala ---------------------------------------------------------------------------------

def generala_reference(d, served, wrap=True, doble=True, generala_held=False):
    """RULES.md generala: points of dice ``d``; ``served``: made by the first throw."""
    out = {name: f * d.count(f) for f, name in enumerate(UPPER[:6], start=1)}
    runs = [{1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}] + ([{3, 4, 5, 6, 1}] if wrap else [])
    extra = 5 if served else 0
    out["escalera"] = 20 + extra if set(d) in runs else 0
    out["full"] = 30 + extra if strict_full_house(d) else 0
    out["poker"] = 40 + extra if kind(d, 4) else 0
    out["generala"] = (60 if served else 50) if kind(d, 5) else 0
    if doble:
        out["generala_doble"] = 100 if kind(d, 5) and generala_held else 0
    return out


@pytest.mark.parametrize("options", [(), ("no-wrap-straight",), ("no-doble",), ("servida-wins",),
                                     ("no-doble", "no-wrap-straight", "servida-wins")])
def test_generala_card_on_every_throw(options):
    r = get_rules("generala", options)
    wrap, doble = "no-wrap-straight" not in options, "no-doble" not in options
    assert r.n_boxes == (11 if doble else 10) and r.upper_bonus == 0 and r.joker == "none"
    assert r.roll_dependent
    for throw in (1, 2, 3):
        # the static tables hold the doble's enabled value; turn_options gates it
        table_of(r, lambda d: generala_reference(d, throw == 1, wrap, doble, generala_held=True), throw)
    check_ruleset(r)


@settings(max_examples=200, deadline=None)
@given(dice=st.lists(st.integers(1, 6), min_size=5, max_size=5), throws=st.integers(1, 3),
       held=st.booleans(), generala_filled=st.booleans())
def test_generala_turn_options_serve_and_doble(dice, throws, held, generala_filled):
    r = get_rules("generala")
    held = held and generala_filled     # the box can hold a Generala only once filled
    filled = ["generala"] if generala_filled else []
    legal, scores, bonus = options_for(r, dice, filled, held, throws=throws)
    expected = generala_reference(dice, throws == 1, generala_held=held)
    assert scores == expected and bonus == 0
    assert legal == set(r.box_names) - set(filled)


def test_generala_examples():
    r = get_rules("generala")
    # source 003 / RULES.md: a served combination scores 5 more, a served Generala 60.
    first = dict(zip(r.box_names, r.score_tables[0, r.dice.roll_index_of([3, 4, 5, 6, 1])].tolist()))
    later = dict(zip(r.box_names, r.score_tables[2, r.dice.roll_index_of([3, 4, 5, 6, 1])].tolist()))
    assert (first["escalera"], later["escalera"]) == (25, 20)
    assert r.score_dice([6, 6, 6, 6, 6])["generala"] == 50   # the plain card: made on a later throw
    assert get_rules("generala", ["no-wrap-straight"]).score_dice([3, 4, 5, 6, 1])["escalera"] == 0
    # The doble pays 100 only while the Generala box holds a Generala (50 or a served 60).
    assert r.fills_five_box(np.array([r.five_box_index] * 3), np.array([50, 60, 0])).tolist() == [True, True, False]
    _, scores, _ = options_for(r, [2] * 5, ["generala"], True)
    assert scores["generala_doble"] == 100
    _, scores, _ = options_for(r, [2] * 5, ["generala"], False)
    assert scores["generala_doble"] == 0


# -- Kismet -----------------------------------------------------------------------------------

COLOUR = {1: "black", 6: "black", 2: "red", 5: "red", 3: "green", 4: "green"}   # RULES.md


def kismet_reference(d):
    c = Counter(d)
    out = {name: f * d.count(f) for f, name in enumerate(UPPER[:6], start=1)}
    pairs = [f for f, k in c.items() if k >= 2]
    same_colour_pairs = any(COLOUR[a] == COLOUR[b] for a, b in itertools.combinations(pairs, 2))
    fh = strict_full_house(d)
    out.update({
        "two_pairs_same_colour": sum(d) if same_colour_pairs or kind(d, 4) else 0,
        "three_of_a_kind": sum(d) if kind(d, 3) else 0,
        "straight": 30 if set(d) in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0,
        "flush": 35 if len({COLOUR[x] for x in d}) == 1 else 0,
        "full_house": sum(d) + 15 if fh else 0,
        "full_house_same_colour": sum(d) + 20 if fh and len({COLOUR[x] for x in d}) == 1 else 0,
        "four_of_a_kind": sum(d) + 25 if kind(d, 4) else 0,
        "yarborough": sum(d),
        "kismet": sum(d) + 50 if kind(d, 5) else 0,
    })
    return out


def test_kismet_card():
    r = get_rules("kismet")
    table_of(r, kismet_reference)
    assert r.n_boxes == 15 and r.joker == "none" and r.five_bonus == 0
    check_ruleset(r)


def test_kismet_examples():
    s = get_rules("kismet").score_dice
    # Kismet rule sheets: four fives and a two are all red: a Flush, 35.
    assert s([5, 5, 5, 5, 2])["flush"] == 35
    assert s([5, 5, 5, 5, 2])["two_pairs_same_colour"] == 22     # four of a kind counts
    # a full house of 1s and 6s (both black): 15 + 20 in Full house same colour, 15 + 15 in Full house
    assert (s([1, 1, 1, 6, 6])["full_house_same_colour"], s([1, 1, 1, 6, 6])["full_house"]) == (35, 30)
    assert s([2, 2, 2, 6, 6])["full_house_same_colour"] == 0     # red and black
    assert s([3, 3, 4, 4, 6])["two_pairs_same_colour"] == 20     # green pairs
    assert s([3, 3, 5, 5, 6])["two_pairs_same_colour"] == 0
    assert s([6, 6, 6, 6, 6])["kismet"] == 80 and s([1] * 5)["full_house"] == 0


def test_kismet_bonus_tiers():
    # RULES.md: +35 at 63-70, +55 at 71-77, +75 at 78 or more.
    r = get_rules("kismet")
    u = np.arange(0, 106)
    expected = [0 if x < 63 else 35 if x <= 70 else 55 if x <= 77 else 75 for x in u]
    assert r.final_bonus(u).tolist() == expected
    scores = np.zeros((len(u), 15), dtype=np.int16)
    scores[:, 5] = 18
    gain = r.upper_bonus_gain(u, scores)[:, 5]
    assert gain.tolist() == [expected[min(x + 18, 105)] - expected[x] if x + 18 <= 105 else
                             75 - expected[x] for x in u]
    assert not r.upper_bonus_gain(u, scores)[:, 6:].any()


def test_single_tier_bonus_is_bit_identical():
    # The classic bonus is one tier: same values and dtypes as before the generalization.
    r = get_rules("yahtzee")
    u = np.arange(0, 120)
    s = np.random.default_rng(1).integers(0, 31, (120, 13)).astype(np.int16)
    gain = r.upper_bonus_gain(u, s)
    legacy = np.where(r.is_upper & (u[:, None] < 63) & (u[:, None] + s >= 63), 35, 0).astype(np.int16)
    assert gain.dtype == np.int16 and (gain == legacy).all()
    fb = r.final_bonus(u)
    assert (fb == np.where(u >= 63, 35, 0)).all() and fb.dtype == np.where(u >= 63, 35, 0).dtype


# -- dice with other numbers of faces ------------------------------------------------------------

def yacht_reference(d, f):
    out = {UPPER[k - 1]: k * d.count(k) for k in range(1, f + 1)}
    out.update(choice=sum(d), four_dice=sum(d) if kind(d, 4) else 0,
               full_house=sum(d) if strict_full_house(d) or kind(d, 5) else 0,
               s_straight=15 if has_run(d, 4, f) else 0, b_straight=30 if has_run(d, 5, f) else 0,
               yacht=50 if kind(d, 5) else 0)
    return out


def yahtzee_reference(d, f):
    out = {UPPER[k - 1]: k * d.count(k) for k in range(1, f + 1)}
    out.update(three_of_a_kind=sum(d) if kind(d, 3) else 0, four_of_a_kind=sum(d) if kind(d, 4) else 0,
               full_house=25 if strict_full_house(d) else 0, small_straight=30 if has_run(d, 4, f) else 0,
               large_straight=40 if has_run(d, 5, f) else 0, yahtzee=50 if kind(d, 5) else 0,
               chance=sum(d))
    return out


@pytest.mark.parametrize("faces", [2, 3, 5, 7, 8])
def test_faces_every_roll(faces):
    # RULES.md: f upper boxes, bonus at three of each face, any run within 1..f.
    for name, ref in (("yacht", yacht_reference), ("yahtzee", yahtzee_reference)):
        r = get_rules(name, faces=faces)
        assert r.n_faces == faces and r.n_boxes == faces + (6 if name == "yacht" else 7)
        assert r.upper_bonus_threshold == 3 * sum(range(1, faces + 1))
        table_of(r, lambda d: ref(d, faces))
        check_ruleset(r)


@settings(max_examples=100, deadline=None)
@given(data=st.data(), faces=st.integers(9, 12))
def test_many_faces_hypothesis(data, faces):
    dice = data.draw(st.lists(st.integers(1, faces), min_size=5, max_size=5))
    for name, ref in (("yacht", yacht_reference), ("yahtzee", yahtzee_reference)):
        assert get_rules(name, faces=faces).score_dice(dice) == ref(dice, faces)


def test_seven_faces_examples():
    # source 000 "Lucky7": seven-sided dice; RULES.md: threshold 84 = three of each face.
    r = get_rules("yacht", faces=7)
    assert r.upper_bonus_threshold == 84 and r.box_names[6] == "sevens"
    assert r.score_dice([3, 3, 3, 5, 5])["full_house"] == 19          # source 001's example still holds
    assert r.score_dice([3, 4, 5, 6, 7])["b_straight"] == 30          # a run that needs the 7
    assert r.score_dice([4, 5, 6, 7, 7])["s_straight"] == 15
    assert r.score_dice([7] * 5)["sevens"] == 35
    assert r.dice.n_rolls == 462     # issue 8: "seven faces: 462 rolls of five dice"
    y = get_rules("yahtzee", faces=7)
    legal, scores, bonus = options_for(y, [7] * 5, ["yahtzee"], True)
    assert legal == {"sevens"} and bonus == 100                       # the forced joker's upper box


@pytest.mark.parametrize("faces", [9, 10, 11, 12])
def test_compact_dice_keys_keep_every_multiset_apart(faces):
    t = dice_tables(5, faces)
    assert len(np.unique(t.roll_key)) == t.n_rolls and len(np.unique(t.keep_key)) == t.n_keeps
    assert (t.key_to_roll[t.roll_key] == np.arange(t.n_rolls)).all()
    assert t.key_to_roll.size < 10**6          # not (n_dice + 1) ** faces
    # rerolling adds keys: any keep plus fresh dice lands on the roll of the union
    rng = np.random.default_rng(faces)
    tape = rng.integers(1, faces + 1, (500, 5))
    keeps = np.array([t.subkeeps[r, rng.integers(0, t.n_subkeeps[r])] for r in rng.integers(0, t.n_rolls, 500)])
    rolls = t.reroll(keeps, t.tape_prefix_keys(tape))
    missing = 5 - t.keep_size[keeps]
    for i in range(0, 500, 25):
        want = t.keep_counts[keeps[i]] + np.bincount(tape[i, :missing[i]], minlength=faces + 1)[1:]
        assert (t.roll_counts[rolls[i]] == want).all()
    assert abs(t.transition.sum(axis=1) - 1).max() < 1e-9


# -- keys that round-trip (issue 11 section 4) -----------------------------------------------

def test_every_printed_key_is_accepted_back():
    seen = 0
    for name in rule_names():
        opts = list(rule_options(name))
        combos = [()] + [(o,) for o in opts] + [tuple(opts[:2]), tuple(opts[1:3])]
        if rule_numbers(name):
            combos += [c + ("faces-7",) for c in combos[:3]]
        for combo in combos:
            try:
                r = get_rules(name, combo)
            except ValueError as exc:     # a declared conflict
                assert "cannot be combined" in str(exc)
                continue
            assert get_rules(r.key) is r
            assert get_rules(parse_key(r.key)[0], ["+".join(parse_key(r.key)[1])] if r.options else []) is r
            seen += 1
    assert seen > 40
    r = get_rules("yacht", ["full-house-25", "straights-30-40"])
    assert r.key == "yacht+full-house-25+straights-30-40"
    assert get_rules("yacht+full-house-25+straights-30-40") is r
    assert get_rules("yacht", ["straights-30-40+full-house-25"]) is r


def test_faces_spelling():
    assert get_rules("yacht", faces=7) is get_rules("yacht+faces-7") is get_rules("yacht", ["faces-7"])
    assert get_rules("yacht", faces=6) is get_rules("yacht") is get_rules("yacht+faces-6")
    r = get_rules("yahtzee", ["no-joker"], faces=7)
    assert r.key == "yahtzee+faces-7+no-joker" and get_rules(r.key) is r


# -- bad input --------------------------------------------------------------------------

def one_line(exc_info):
    msg = str(exc_info.value)
    assert msg and "\n" not in msg
    return msg


@pytest.mark.parametrize("faces", [0, 1, 13, 100, -3])
def test_faces_outside_2_to_12(faces):
    with pytest.raises(ValueError) as e:
        get_rules("yacht", faces=faces)
    assert "2..12" in one_line(e)
    with pytest.raises(ValueError) as e:
        get_rules(f"yahtzee+faces-{faces}" if faces >= 0 else "yahtzee+faces--3")
    assert "2..12" in one_line(e)


@pytest.mark.parametrize("bad", ["faces-x", "faces-", "faces-7.5"])
def test_malformed_faces_option(bad):
    with pytest.raises(ValueError) as e:
        get_rules("yacht", [bad])
    assert "2..12" in one_line(e)


def test_faces_is_refused_where_it_does_not_belong():
    for name in ("yatzy", "kniffel", "generala"):
        with pytest.raises(ValueError) as e:
            get_rules(name, faces=7)
        msg = one_line(e)
        assert "faces-7" in msg and name in msg and "valid options" in msg


@pytest.mark.parametrize("name,option", [("kniffel", "no-yahtzee-bonus"), ("generala", "no-bonus"),
                                         ("kismet", "three-dice"), ("generala", "free-joker")])
def test_options_of_another_game(name, option):
    with pytest.raises(ValueError) as e:
        get_rules(name, [option])
    msg = one_line(e)
    assert option in msg and all(o in msg for o in rule_options(name))


@pytest.mark.parametrize("key", ["yacht+", "+yacht", "yacht++no-bonus", "yacht+no-bonus+"])
def test_malformed_keys(key):
    with pytest.raises(ValueError) as e:
        get_rules(key)
    assert "yacht+no-bonus" in one_line(e) or "valid" in str(e.value)


def test_faces_given_twice_differently():
    with pytest.raises(ValueError, match="given twice"):
        get_rules("yacht+faces-7", faces=8)


@pytest.mark.parametrize("dice", [[1, 2, 3, 4, 5, 6], [1, 2, 3, 4]])
def test_six_dice_for_a_five_dice_game(dice):
    for name in ("generala", "kniffel", "kismet"):
        with pytest.raises(ValueError) as e:
            get_rules(name).score_dice(dice)
        assert "5 whole numbers in 1..6" in one_line(e)
    with pytest.raises(ValueError) as e:
        get_rules("yacht", faces=7).score_dice([8, 1, 2, 3, 4])
    assert "1..7" in one_line(e)


# -- Balut ------------------------------------------------------------------------------------

BALUT = ["fours", "fives", "sixes", "straight", "full_house", "choice", "balut"]


def balut_reference(d):
    one = {
        "fours": 4 * d.count(4), "fives": 5 * d.count(5), "sixes": 6 * d.count(6),
        "straight": 15 if sorted(d) == [1, 2, 3, 4, 5] else 20 if sorted(d) == [2, 3, 4, 5, 6] else 0,
        "full_house": sum(d) if strict_full_house(d) else 0,
        "choice": sum(d),
        "balut": 20 + sum(d) if kind(d, 5) else 0,
    }
    return {f"{c}_{k}": one[c] for c in BALUT for k in range(1, 5)}


def balut_points_reference(card):
    """RULES.md's points, from a card given as {category: [four scores]}."""
    pts = 0
    for c, threshold in (("fours", 52), ("fives", 65), ("sixes", 78), ("choice", 100)):
        pts += 2 if sum(card[c]) >= threshold else 0
    pts += 4 if all(card["straight"]) else 0
    pts += 3 if all(card["full_house"]) else 0
    pts += 2 * sum(1 for v in card["balut"] if v)
    total = sum(sum(v) for v in card.values())
    if total < 300:
        pts -= 2
    elif total < 350:
        pts -= 1
    else:
        pts += min((total - 350) // 50, 6)
    return pts


def test_balut_card():
    r = get_rules("balut")
    table_of(r, balut_reference)
    assert r.n_boxes == 28 and r.upper_bonus == 0 and r.joker == "none" and r.has_points
    check_ruleset(r)


def _balut_card(**cats):
    card = {c: [0, 0, 0, 0] for c in BALUT}
    card.update(cats)
    return card


def _points(card):
    flat = np.array([[v for c in BALUT for v in card[c]]])
    return int(get_rules("balut").points(flat)[0])


@pytest.mark.parametrize("card", [
    # RULES.md's thresholds, each on both sides
    _balut_card(fours=[16, 16, 12, 8]), _balut_card(fours=[16, 16, 12, 4]),            # 52 / 48
    _balut_card(fives=[20, 20, 15, 10]), _balut_card(fives=[20, 20, 15, 5]),           # 65 / 60
    _balut_card(sixes=[24, 24, 18, 12]), _balut_card(sixes=[24, 18, 18, 12]),          # 78 / 72
    _balut_card(choice=[25, 25, 25, 25]), _balut_card(choice=[25, 25, 25, 24]),        # 100 / 99
    _balut_card(straight=[15, 20, 15, 20]), _balut_card(straight=[15, 20, 15, 0]),
    _balut_card(full_house=[7, 28, 19, 8]), _balut_card(full_house=[7, 28, 19, 0]),
    _balut_card(balut=[45, 0, 25, 0]),
    # the total score: <300 -2, 300-349 -1, 350-399 0, +1 each further 50, +6 at 650 or more
    _balut_card(choice=[30, 30, 30, 30], balut=[50, 50, 0, 0], fours=[20, 20, 20, 19]),   # 299
    _balut_card(choice=[30, 30, 30, 30], balut=[50, 50, 0, 0], fours=[20, 20, 20, 20]),   # 300
    _balut_card(choice=[30, 30, 30, 30], balut=[50, 50, 50, 0], fours=[20, 20, 20, 19]),  # 349
    _balut_card(choice=[30, 30, 30, 30], balut=[50, 50, 50, 0], fours=[20, 20, 20, 20]),  # 350
    _balut_card(choice=[30] * 4, balut=[50] * 4, sixes=[30] * 4, fives=[25] * 4, fours=[20, 20, 19, 0]),  # 599
    _balut_card(choice=[30] * 4, balut=[50] * 4, sixes=[30] * 4, fives=[25] * 4, fours=[20] * 4,
                full_house=[28, 28, 28, 28], straight=[20] * 4),                                     # 812
])
def test_balut_points(card):
    assert _points(card) == balut_points_reference(card)


def test_balut_points_examples():
    # RULES.md: an empty card scores 0: -2 points; Fours 52 alone +2 (total 52: -2).
    assert _points(_balut_card()) == -2
    assert _points(_balut_card(fours=[16, 16, 12, 8])) == 0
    full = _balut_card(choice=[30] * 4, balut=[50] * 4, sixes=[30] * 4, fives=[25] * 4, fours=[20] * 4,
                       full_house=[28] * 4, straight=[20] * 4)
    # 2 + 2 + 2 + 2 (totals) + 4 + 3 + 4 Baluts x 2 + 6 (812 >= 650) = 29, the maximum
    # diceworldgame.com's Balut help names ("29 points is the maximum you can score")
    assert _points(full) == 29


@settings(max_examples=200, deadline=None)
@given(cards=st.lists(st.lists(st.integers(0, 50), min_size=28, max_size=28), min_size=1, max_size=8))
def test_balut_points_hypothesis(cards):
    got = get_rules("balut").points(np.array(cards))
    for row, p in zip(cards, got):
        card = {c: row[4 * i:4 * i + 4] for i, c in enumerate(BALUT)}
        assert p == balut_points_reference(card)


def test_points_refused_where_there_are_none():
    with pytest.raises(ValueError, match="no points"):
        get_rules("yahtzee").points(np.zeros((1, 13)))


# -- Maxi Yatzy -------------------------------------------------------------------------------

def maxi_reference(d):
    c = Counter(d)
    faces = sorted(c)

    def pairs(k):
        shown = sorted((f for f in faces if c[f] >= 2), reverse=True)
        return 2 * sum(shown[:k]) if len(shown) >= k else 0

    def n_kind(n):
        best = max((f for f in faces if c[f] >= n), default=0)
        return n * best

    def two_groups(a, b, value):
        best = [(a * x + b * y) for x in faces for y in faces if x != y and c[x] >= a and c[y] >= b]
        return 0 if not best else (max(best) if value == "dice" else sum(d))

    out = {name: f * d.count(f) for f, name in enumerate(UPPER[:6], start=1)}
    out.update(
        one_pair=pairs(1), two_pairs=pairs(2), three_pairs=pairs(3),
        three_of_a_kind=n_kind(3), four_of_a_kind=n_kind(4), five_of_a_kind=n_kind(5),
        small_straight=15 if {1, 2, 3, 4, 5} <= set(d) else 0,
        large_straight=20 if {2, 3, 4, 5, 6} <= set(d) else 0,
        full_straight=21 if set(d) == {1, 2, 3, 4, 5, 6} else 0,
        full_house=two_groups(3, 2, "dice"), villa=two_groups(3, 3, "sum"), tower=two_groups(4, 2, "sum"),
        chance=sum(d), maxi_yatzy=100 if kind(d, 6) else 0,
    )
    return out


@pytest.mark.parametrize("options", [(), ("no-saved-throws",)])
def test_maxi_yatzy_card(options):
    r = get_rules("maxi-yatzy", options)
    assert (r.n_dice, r.n_boxes, r.upper_bonus_tiers) == (6, 20, ((84, 100),))
    assert r.dice.n_rolls == 462 and r.dice.n_keeps == 924      # issue 8: six dice
    assert r.banked_throws == ("no-saved-throws" not in options)
    table_of(r, maxi_reference)
    check_ruleset(r)


def test_maxi_yatzy_examples():
    s = get_rules("maxi-yatzy").score_dice
    x = s([6, 6, 5, 5, 4, 4])
    assert (x["one_pair"], x["two_pairs"], x["three_pairs"], x["chance"]) == (12, 22, 30, 30)
    x = s([5, 5, 5, 5, 6, 6])
    assert (x["two_pairs"], x["tower"], x["full_house"], x["four_of_a_kind"]) == (22, 32, 27, 20)
    x = s([3, 3, 3, 2, 2, 2])
    assert (x["villa"], x["full_house"], x["three_of_a_kind"], x["three_pairs"]) == (15, 13, 9, 0)
    assert s([1, 2, 3, 4, 5, 6])["full_straight"] == 21 and s([1, 2, 3, 4, 5, 6])["small_straight"] == 15
    x = s([4] * 6)
    assert (x["maxi_yatzy"], x["five_of_a_kind"], x["two_pairs"], x["full_house"]) == (100, 20, 0, 0)


# -- Yamb --------------------------------------------------------------------------------------

ROWS = ["ones", "twos", "threes", "fours", "fives", "sixes", "max", "min", "kenta", "triling",
        "full", "poker", "yamb"]


def yamb_reference(d, throw):
    c = Counter(d)
    top = lambda n: max((f for f in c if c[f] >= n), default=0)  # noqa: E731
    one = {name: f * d.count(f) for f, name in enumerate(ROWS[:6], start=1)}
    one.update(max=sum(d), min=sum(d),
               kenta={1: 66, 2: 56, 3: 46}[throw] if set(d) in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}) else 0,
               triling=3 * top(3) + 20 if top(3) else 0,
               full=sum(d) + 30 if strict_full_house(d) else 0,
               poker=4 * top(4) + 40 if top(4) else 0,
               yamb=sum(d) + 50 if kind(d, 5) else 0)
    return {f"{col}_{row}": one[row] for col in ("down", "up", "free", "announce") for row in ROWS}


def yamb_score_reference(card):
    total = 0
    for col in ("down", "up", "free", "announce"):
        v = {row: card[f"{col}_{row}"] for row in ROWS}
        upper = sum(v[r] for r in ROWS[:6])
        total += upper + (30 if upper >= 60 else 0) + (v["max"] - v["min"]) * v["ones"]
        total += sum(v[r] for r in ROWS[8:])
    return total


def test_yamb_card_on_every_throw():
    r = get_rules("yamb")
    assert r.n_boxes == 52 and r.roll_dependent and r.announces
    for throw in (1, 2, 3):
        table_of(r, lambda d: yamb_reference(d, throw), throw)
    check_ruleset(r)


@settings(max_examples=150, deadline=None)
@given(cards=st.lists(st.lists(st.integers(0, 80), min_size=52, max_size=52), min_size=1, max_size=6))
def test_yamb_score_hypothesis(cards):
    r = get_rules("yamb")
    got = r.card_total(np.array(cards), np.zeros(len(cards)), np.zeros(len(cards)))
    for row, total in zip(cards, got):
        assert total == yamb_score_reference(dict(zip(r.box_names, row)))


def test_yamb_max_min_may_be_negative():
    r = get_rules("yamb")
    card = np.zeros((1, 52), int)
    card[0, r.box_index("down_ones")] = 5
    card[0, r.box_index("down_max")] = 10
    card[0, r.box_index("down_min")] = 30
    assert int(r.card_total(card, [0], [0])[0]) == 5 + (10 - 30) * 5


def test_yamb_column_orders():
    r = get_rules("yamb")
    col = {c.name: [r.box_index(b) for b in c.boxes] for c in r.columns}
    filled = np.zeros((1, 52), bool)
    legal = r.legal_boxes(filled)[0]
    # Down: only its top row; Up: only its bottom row; Free: all; Announce: none unannounced.
    assert np.flatnonzero(legal[col["down"]]).tolist() == [0]
    assert np.flatnonzero(legal[col["up"]]).tolist() == [12]
    assert legal[col["free"]].all() and not legal[col["announce"]].any()
    filled[0, col["down"][:3]] = True
    filled[0, col["up"][-5:]] = True
    legal = r.legal_boxes(filled)[0]
    assert np.flatnonzero(legal[col["down"]]).tolist() == [3]
    assert np.flatnonzero(legal[col["up"]]).tolist() == [7]
    # an announcement leaves only the announced box
    said = col["announce"][9]
    legal = r.legal_boxes(filled, np.array([said]))[0]
    assert np.flatnonzero(legal).tolist() == [said]
    with pytest.raises(ValueError, match="announce"):
        r.legal_boxes(filled, np.array([col["free"][0]]))


def test_yamb_kenta_by_throw():
    r = get_rules("yamb")
    roll = r.dice.roll_index_of([2, 3, 4, 5, 6])
    k = r.box_index("free_kenta")
    assert r.score_tables[:, roll, k].tolist() == [66, 56, 46]   # RULES.md


# -- the command line: keys, faces and bad input (issue 8 section 6, issue 11 section 4) -----

def cli(capsys, *argv):
    from yahtzee_sim.cli import main

    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_accepts_printed_keys_and_joined_options(capsys):
    import json

    code, out, err = cli(capsys, "simulate", "--rules", "yacht+full-house-25+straights-30-40", "--games", 500,
                         "--seed", 3, "--json")
    assert code == 0, err
    a = json.loads(out)
    code, out, err = cli(capsys, "simulate", "--rules", "yacht", "--option", "straights-30-40+full-house-25",
                         "--games", 500, "--seed", 3, "--json")
    assert code == 0, err
    b = json.loads(out)
    assert a["mean"] == b["mean"] and a["rules"] == b["rules"]
    code, out, err = cli(capsys, "score", "--rules", "yacht", "--faces", 7, "--dice", "3,4,5,6,7")
    assert code == 0 and "yacht+faces-7" in out


def test_cli_rules_lists_the_family_and_faces(capsys):
    code, out, err = cli(capsys, "rules")
    assert code == 0
    for name in ("kniffel", "generala", "kismet", "balut", "maxi-yatzy", "yamb"):
        assert name in out
    assert "yacht --option faces-N" in out and "2..12" in out
    assert max(len(line) for line in out.splitlines()[:14]) <= 120


@pytest.mark.parametrize("argv,words", [
    (["simulate", "--rules", "generala", "--option", "no-bonus"], ["no-bonus", "no-wrap-straight", "no-doble"]),
    (["simulate", "--rules", "kniffel", "--faces", "7"], ["faces-7", "kniffel-bonus-100"]),
    (["simulate", "--rules", "yacht", "--faces", "13"], ["2..12"]),
    (["simulate", "--rules", "yahtzee", "--faces", "1"], ["2..12"]),
    (["simulate", "--rules", "yacht+faces-99"], ["2..12"]),
    (["simulate", "--rules", "kniffel", "--option", "kniffel-bonus-100+no-kniffel-bonus"], ["cannot be combined"]),
    (["score", "--rules", "generala", "--dice", "123456"], ["5 values in 1..6"]),
    (["score", "--rules", "maxi-yatzy", "--dice", "12345"], ["6 values in 1..6"]),
    (["score", "--rules", "yacht", "--faces", "7", "--dice", "12348"], ["1..7"]),
])
def test_cli_bad_input_exits_2_with_one_line(capsys, tmp_path, argv, words):
    out_file = tmp_path / "out.csv"
    extra = ["--games", "100", "--out", str(out_file)] if argv[0] == "simulate" else []
    code, out, err = cli(capsys, *argv, *extra)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert not out_file.exists()


# -- the engine plays the family (served throws, saved throws, announcements, points) ------

from yahtzee_sim import simulate                      # noqa: E402
from yahtzee_sim.engine import StrategyError          # noqa: E402
from yahtzee_sim.results import GameAggregate         # noqa: E402
from yahtzee_sim.strategies import Strategy, best_legal   # noqa: E402


class HoldFirstThrow(Strategy):
    """Holds the first throw's dice (so everything it scores is served) and takes the
    box that gains most; records the banked throws it sees at each turn's start."""

    name = "hold-first"

    def __init__(self, spend_last_turn=False):
        self.spend_last_turn = spend_last_turn
        self.banked_seen = []
        self.banked_calls = 0
        self.first, self.final = {}, {}

    def keep(self, state, rolls, rolls_left, u):
        if rolls_left == self.rules.n_rolls - 1:
            self.first[state.turn] = np.array(rolls, copy=True)
            if state.banked is not None:
                self.banked_seen.append(state.banked.copy())
        return self.dice.roll_keep_index[rolls].astype(np.intp)

    def keep_banked(self, state, rolls, banked, u):
        self.banked_calls += 1
        if self.spend_last_turn and state.turn == self.rules.n_boxes - 1:
            return np.zeros(len(rolls), dtype=np.intp)       # throw all dice again
        return self.dice.roll_keep_index[rolls].astype(np.intp)

    def box(self, state, rolls, options, u):
        self.final[state.turn] = np.array(rolls, copy=True)
        return best_legal(options.gain, options.legal)


def test_generala_served_through_the_engine():
    # Every final roll is the first throw: served values only (RULES.md: 25, 35, 45, 60).
    res = simulate("generala", HoldFirstThrow(), 3000, seed=4)
    r, s = res.rules, res.games["box_scores"]
    for box, served in (("escalera", 25), ("full", 35), ("poker", 45), ("generala", 60)):
        assert set(np.unique(s[:, r.box_index(box)]).tolist()) <= {0, served}, box
    # a served Generala (60) enables the doble: every non-zero doble follows one
    doble, gen = s[:, r.box_index("generala_doble")], s[:, r.box_index("generala")]
    assert (gen[doble > 0] == 60).all()
    assert set(np.unique(doble).tolist()) <= {0, 100}
    turn = res.games["fill_turn"]
    late = (doble == 100)
    assert (turn[late, r.box_index("generala")] < turn[late, r.box_index("generala_doble")]).all()


def test_maxi_yatzy_banks_the_throws_a_turn_does_not_make():
    # Holding the first throw every turn saves 2 throws a turn (RULES.md: banked for later).
    strat = HoldFirstThrow()
    simulate("maxi-yatzy", strat, 1024, seed=5)
    seen = np.stack(strat.banked_seen, axis=1)          # (games, turns) at each turn's start
    assert (seen == 2 * np.arange(20)[None, :]).all()
    # with no-saved-throws nothing is banked and keep_banked is never asked
    quiet = HoldFirstThrow()
    simulate("maxi-yatzy", quiet, 1024, options=["no-saved-throws"], seed=5)
    assert quiet.banked_calls == 0 and quiet.banked_seen == []


def test_maxi_yatzy_spends_saved_throws():
    # All 38 saved throws spent on the last turn: the strategy is asked 38 + 1 times
    # there (the last answer may hold), and the games stay reproducible.
    strat = HoldFirstThrow(spend_last_turn=True)
    a = simulate("maxi-yatzy", strat, 1024, seed=6)
    assert strat.banked_calls >= 38
    b = simulate("maxi-yatzy", HoldFirstThrow(spend_last_turn=True), 1024, seed=6, batch=512)
    assert (a.games["total"] == b.games["total"]).all()
    # before the last turn every final roll is the first throw; on it, 38 fresh throws later
    # the dice are another roll in all but a few games (P(same six dice) is small)
    for t in range(19):
        assert (strat.final[t] == strat.first[t]).all()
    assert (strat.final[19] != strat.first[19]).mean() > 0.9


class AnnounceFirst(Strategy):
    """Announces the first open Announce box every turn it can, holds the first throw."""

    name = "announce-first"

    def __init__(self, bad=None):
        self.bad = bad
        self.said = []

    def announce(self, state, rolls, u):
        open_ann = ~state.filled & self.rules.is_announce
        said = np.where(open_ann.any(axis=1), open_ann.argmax(axis=1), -1)
        if self.bad == "free-box":
            said = np.full(len(rolls), self.rules.box_index("free_ones"))
        if self.bad == "never":
            said = np.full(len(rolls), -1)
        self.said.append(said.copy())
        return said

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls].astype(np.intp)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)


def test_yamb_announcements_bind_the_turn():
    strat = AnnounceFirst()
    res = simulate("yamb", strat, 1024, seed=7)
    r = res.rules
    said = np.stack(strat.said, axis=1)                   # (games, turns)
    fill_turn = res.games["fill_turn"]
    # each announce box was filled in the turn that announced it, the first 13 turns
    for b in np.flatnonzero(r.is_announce):
        t = fill_turn[:, b] - 1
        assert (said[np.arange(1024), t] == b).all()
    assert (np.sort(fill_turn[:, r.is_announce], axis=1) == np.arange(1, 14)).all()


@pytest.mark.parametrize("bad,words", [("free-box", "illegal announcement"), ("never", "must announce")])
def test_yamb_bad_announcements(bad, words):
    with pytest.raises(StrategyError, match=words):
        simulate("yamb", AnnounceFirst(bad=bad), 64, seed=1)


def test_every_builtin_strategy_plays_yamb_by_default():
    # the default announcement (only when the turn must) keeps every strategy legal
    for name in ("random", "keep-largest", "greedy", "heuristic"):
        res = simulate("yamb", name, 1024, seed=3)
        assert res.games["box_scores"].shape == (1024, 52)


def test_scores_below_zero_are_counted():
    r = get_rules("yamb")
    games = {"total": np.array([-120, 0, 35, 2000]), "box_scores": np.zeros((4, 52), np.int16),
             "upper_total": np.zeros(4, np.int64), "five_bonus_count": np.zeros(4, np.int64),
             "five_count": np.zeros(4, np.int64), "fill_turn": np.tile(np.arange(1, 53), (4, 1)),
             "five_box_full": np.zeros(4, bool)}
    agg = GameAggregate.from_games(r, games)
    assert agg.total_sum == 1915 and agg.mean() == 1915 / 4
    assert agg.quantile(0.25) == -120 and agg.quantile(1.0) == 2000
    assert agg.merge(agg).total_sum == 2 * 1915


def test_balut_points_in_results():
    res = simulate("balut", "heuristic", 2048, seed=8)
    s = res.summary()
    pts = get_rules("balut").points(res.games["box_scores"])
    assert (res.games["points"] == pts).all() and s["points_mean"] == pytest.approx(pts.mean())
    assert "points" in res.to_frame().columns
    assert -2 <= pts.min() and pts.max() <= 29


def test_exact_engines_refuse_the_games_they_cannot_model():
    from yahtzee_sim.exact.extremes import extreme_score
    from yahtzee_sim.exact.solver import solve

    for key, words in (("balut", "2\\*\\*28"), ("yamb", "columns"), ("maxi-yatzy", "banked")):
        with pytest.raises(ValueError, match=words) as e:
            solve(key, cache=False)
        assert "simulate" in str(e.value) and "\n" not in str(e.value)
        with pytest.raises(ValueError, match=words):
            extreme_score(key)


def test_servida_is_counted():
    # Holding the first throw, a game has a servida exactly when one of its 11 first
    # throws is five of a kind: count those straight from the dice tapes.
    from yahtzee_sim.engine import block_tapes

    n = 4096
    res = simulate("generala", HoldFirstThrow(), n, options=["servida-wins"], seed=9)
    tape, _ = block_tapes(res.rules, 9, range(0, 4), 11)
    first = tape[:n, :, 0, :]                                    # (games, turns, dice)
    five_first = (first == first[..., :1]).all(axis=2)
    assert res.aggregate.served_five_games == int(five_first.any(axis=1).sum())
    assert (res.games["served_five_count"] == five_first.sum(axis=1)).all()
    s = res.summary()
    assert s["served_five_rate"] == res.aggregate.served_five_games / n
    # exact chance per game 1 - (1 - 6/6**5)**11; the observed count sits in its 99.9% range
    from scipy import stats

    p = 1 - (1 - 6 / 6**5) ** 11
    lo, hi = stats.binom.interval(0.999, n, p)
    assert lo <= res.aggregate.served_five_games <= hi
