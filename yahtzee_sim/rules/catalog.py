"""The rule sets of the project (docs/rules.md), each a builder that takes its options.

Each builder's docstring states what the tabletop sources disagree on and which
reading the rule set takes; where they are silent, the choice follows the
published solvers so exact results are comparable.

A *numbered option* such as ``faces-7`` is an option with a whole-number value
(see :class:`NumberOption`): the key ``yacht+faces-7`` reads back as the same rule
set, and the default value (``faces-6``) is the rule set without the option.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import scoring as s
from .base import Box, Column, RuleSet

UPPER_NAMES = ("ones", "twos", "threes", "fours", "fives", "sixes", "sevens", "eights",
               "nines", "tens", "elevens", "twelves")
UPPER_LABELS = tuple(n.capitalize() for n in UPPER_NAMES)
MIN_FACES, MAX_FACES = 2, 12


def _upper_boxes(n_faces: int = 6) -> list[Box]:
    return [Box(UPPER_NAMES[f - 1], UPPER_LABELS[f - 1], s.upper(f), upper_face=f)
            for f in range(1, n_faces + 1)]


def three_of_each(n_faces: int) -> int:
    """The upper-bonus threshold of ``n_faces`` faces: three of each face (63, 84 for 7)."""
    return 3 * n_faces * (n_faces + 1) // 2


@dataclass(frozen=True)
class NumberOption:
    """An option spelled ``{name}-{value}`` (e.g. ``faces-7``) with a default and a range."""

    name: str
    summary: str
    default: int
    low: int
    high: int

    def parse(self, option: str) -> int | None:
        """The value of ``option`` if it is this option (ValueError if out of range), else None."""
        prefix = self.name + "-"
        if not option.startswith(prefix):
            return None
        text = option[len(prefix):]
        if not text.isdigit():
            raise ValueError(f"{self.name} must be a whole number in {self.low}..{self.high}, got {option!r}")
        value = int(text)
        if not self.low <= value <= self.high:
            raise ValueError(f"{self.name} must be in {self.low}..{self.high}, got {value}")
        return value

    def spell(self, value: int) -> str | None:
        """The option string of ``value``; None for the default (the rule set without it)."""
        return None if value == self.default else f"{self.name}-{value}"


FACES = NumberOption("faces", "dice with N faces (N upper boxes, bonus at three of each, any run)",
                     default=6, low=MIN_FACES, high=MAX_FACES)


@dataclass(frozen=True)
class RuleSpec:
    """Registry entry: a builder plus the options it accepts.

    ``numbers`` are numbered options (``faces-7``); ``conflicts`` lists option pairs
    that cannot be combined. The builder gets the on/off options as a frozenset and
    the numbered ones as keywords (``faces=7``).
    """

    name: str
    summary: str
    options: dict[str, str]
    build: Callable[..., RuleSet]
    numbers: tuple[NumberOption, ...] = ()
    conflicts: tuple[tuple[str, str], ...] = ()


YAHTZEE_OPTIONS = {
    "no-yahtzee-bonus": "no +100 for further Yahtzees",
    "no-joker": "no joker: an extra Yahtzee is placed and scored like any roll",
}


def _yahtzee(name: str, joker: str, title: str, doc: str) -> Callable[..., RuleSet]:
    def build(options: frozenset[str], faces: int = 6) -> RuleSet:
        boxes = _upper_boxes(faces) + [
            Box("three_of_a_kind", "Three of a kind", s.of_a_kind(3)),
            Box("four_of_a_kind", "Four of a kind", s.of_a_kind(4)),
            Box("full_house", "Full house", s.full_house("25"), joker_points=25),
            Box("small_straight", "Small straight", s.straight(4, 30), joker_points=30),
            Box("large_straight", "Large straight", s.straight(5, 40), joker_points=40),
            Box("yahtzee", "Yahtzee", s.five_of_a_kind(50)),
            Box("chance", "Chance", s.chance),
        ]
        return RuleSet(
            name=name, title=title, description=doc, boxes=tuple(boxes), n_faces=faces,
            options=_option_key(options, faces), upper_bonus_threshold=three_of_each(faces), upper_bonus=35,
            five_box="yahtzee",
            five_bonus=0 if "no-yahtzee-bonus" in options else 100,
            joker="none" if "no-joker" in options else joker,
        )

    return build


YACHT_OPTIONS = {
    "full-house-25": "Full House scores 25 instead of the sum",
    "straights-30-40": "S.Straight 30, B.Straight 40 (instead of 15 and 30)",
    "three-dice": "adds a Three Dice box (sum, if 3 of a kind) after Choice: 13 boxes",
    "five-not-full-house": "five of a kind does not count as a Full House",
    "no-bonus": "no upper bonus",
    "yacht-bonus-100": "+100 for each further Yacht after a 50 in the Yacht box",
    "fill-in-order": "boxes must be filled top to bottom in card order",
    "four-dice-of-four": "Four Dice scores only the four matching dice",
}


def _yacht(options: frozenset[str], faces: int = 6) -> RuleSet:
    """Japanese Yacht (source 001): 12 boxes, upper bonus 35 at 63, no joker.

    Source 001 pins the card; its own note that some play Four Dice as the sum of the
    four matching dice is the ``four-dice-of-four`` option. With ``faces-N`` the card
    has N upper boxes, the bonus threshold is three of each face and a straight is
    any run of 4 (5) faces within 1..N (a reading of YachtC's "Lucky7", source 000).
    """
    small, big = (30, 40) if "straights-30-40" in options else (15, 30)
    boxes = _upper_boxes(faces) + [Box("choice", "Choice", s.chance)]
    if "three-dice" in options:
        boxes.append(Box("three_dice", "Three Dice", s.of_a_kind(3)))
    boxes += [
        Box("four_dice", "Four Dice",
            s.of_a_kind(4, value="matching" if "four-dice-of-four" in options else "sum")),
        Box("full_house", "Full House",
            s.full_house("25" if "full-house-25" in options else "sum",
                         five_counts="five-not-full-house" not in options)),
        Box("s_straight", "S.Straight", s.straight(4, small)),
        Box("b_straight", "B.Straight", s.straight(5, big)),
        Box("yacht", "Yacht", s.five_of_a_kind(50)),
    ]
    return RuleSet(
        name="yacht", title="Yacht (Japanese)", description=_yacht.__doc__ or "",
        boxes=tuple(boxes), options=_option_key(options, faces), n_faces=faces,
        upper_bonus_threshold=three_of_each(faces),
        upper_bonus=0 if "no-bonus" in options else 35, five_box="yacht",
        five_bonus=100 if "yacht-bonus-100" in options else 0, joker="none",
        fill_order="in-order" if "fill-in-order" in options else "any",
    )


def _yacht_classic(options: frozenset[str]) -> RuleSet:
    """The older Yacht (source 000): 12 boxes, no bonuses, no joker.

    Full House is strict (three of one face and two of another); Four of a kind
    scores the four matching dice; both straights are five in a row and pay 30.
    """
    boxes = _upper_boxes() + [
        Box("full_house", "Full House", s.full_house("sum")),
        Box("four_of_a_kind", "Four of a kind", s.of_a_kind(4, value="matching")),
        Box("little_straight", "Little Straight", s.straight(5, 30, runs=((1, 2, 3, 4, 5),))),
        Box("big_straight", "Big Straight", s.straight(5, 30, runs=((2, 3, 4, 5, 6),))),
        Box("choice", "Choice", s.chance),
        Box("yacht", "Yacht", s.five_of_a_kind(50)),
    ]
    return RuleSet(
        name="yacht-classic", title="Yacht (classic)", description=_yacht_classic.__doc__ or "",
        boxes=tuple(boxes), options=tuple(sorted(options)), upper_bonus=0,
        five_box="yacht", five_bonus=0, joker="none",
    )


def _yatzy(options: frozenset[str]) -> RuleSet:
    """Scandinavian Yatzy (source 000): 15 boxes, upper bonus 50 at 63, no Yatzy bonus, no joker.

    One pair is the highest pair; Two pairs needs two different faces; Three and
    Four of a kind score the matching dice; Full house is strict and scores the sum.
    """
    boxes = _upper_boxes() + [
        Box("one_pair", "One pair", s.highest_pair),
        Box("two_pairs", "Two pairs", s.two_pairs),
        Box("three_of_a_kind", "Three of a kind", s.of_a_kind(3, value="matching")),
        Box("four_of_a_kind", "Four of a kind", s.of_a_kind(4, value="matching")),
        Box("small_straight", "Small straight", s.straight(5, 15, runs=((1, 2, 3, 4, 5),))),
        Box("large_straight", "Large straight", s.straight(5, 20, runs=((2, 3, 4, 5, 6),))),
        Box("full_house", "Full house", s.full_house("sum")),
        Box("chance", "Chance", s.chance),
        Box("yatzy", "Yatzy", s.five_of_a_kind(50)),
    ]
    return RuleSet(
        name="yatzy", title="Yatzy (Scandinavian)", description=_yatzy.__doc__ or "",
        boxes=tuple(boxes), options=tuple(sorted(options)), upper_bonus=50,
        five_box="yatzy", five_bonus=0, joker="none",
    )


_FORCED_DOC = """Official Yahtzee (sources 000, 003): 13 boxes, upper bonus 35 at 63,
+100 per further Yahtzee while the Yahtzee box holds 50, forced joker placement:
the matching upper box if open, else any open lower box (Full house and the
straights then pay 25/30/40), else any open upper box for zero. The joker applies
whenever the Yahtzee box is filled (50 or 0), as in the official rules."""

_FREE_DOC = """Yahtzee with the free-choice joker (source 000): any open box may be used;
Full house and the straights pay 25/30/40 for a Yahtzee only when the Yahtzee box
is filled and the matching upper box is already filled (else the normal score, 0).
This is the rule of Verhoeff's and Glenn's published optimal solvers."""

_ORIGINAL_DOC = """Yahtzee with the 1956 booklet's joker (source 000): an extra Yahtzee must
go in an open lower box as a joker (25/30/40 in Full house and the straights); an
upper box may take it only when no lower box is open (normal upper score)."""

# -- the rest of the family ---------------------------------------------------------------

KNIFFEL_OPTIONS = {
    "kniffel-bonus-100": "+100 (not +50) for each further Kniffel while the Kniffel box holds 50",
    "no-kniffel-bonus": "no bonus for further Kniffels",
    "free-joker": "free-choice joker instead of the forced one (as yahtzee-free-joker)",
}


def _kniffel(options: frozenset[str]) -> RuleSet:
    """Kniffel (Schmidt Spiele, Germany; source 003): Yahtzee's card and upper bonus (35 at
    63) under its German names, forced joker, +50 per further Kniffel.

    German rule summaries agree on the card and the 35 at 63 but not on a further
    Kniffel: some give +100 as Yahtzee does (e.g. the Kölnische Rundschau's summary),
    others say nothing of a bonus or of where it goes. This rule set pins the project's
    reading: the extra Kniffel is placed by Yahtzee's forced joker and earns +50
    while the Kniffel box holds 50; ``kniffel-bonus-100``, ``no-kniffel-bonus`` and
    ``free-joker`` give the other readings (with ``kniffel-bonus-100`` the game is
    exactly ``yahtzee``).
    """
    boxes = [
        Box("einser", "Einser", s.upper(1), upper_face=1),
        Box("zweier", "Zweier", s.upper(2), upper_face=2),
        Box("dreier", "Dreier", s.upper(3), upper_face=3),
        Box("vierer", "Vierer", s.upper(4), upper_face=4),
        Box("fuenfer", "Fünfer", s.upper(5), upper_face=5),
        Box("sechser", "Sechser", s.upper(6), upper_face=6),
        Box("dreierpasch", "Dreierpasch", s.of_a_kind(3)),
        Box("viererpasch", "Viererpasch", s.of_a_kind(4)),
        Box("full_house", "Full House", s.full_house("25"), joker_points=25),
        Box("kleine_strasse", "Kleine Straße", s.straight(4, 30), joker_points=30),
        Box("grosse_strasse", "Große Straße", s.straight(5, 40), joker_points=40),
        Box("kniffel", "Kniffel", s.five_of_a_kind(50)),
        Box("chance", "Chance", s.chance),
    ]
    bonus = 0 if "no-kniffel-bonus" in options else 100 if "kniffel-bonus-100" in options else 50
    return RuleSet(
        name="kniffel", title="Kniffel", description=_kniffel.__doc__ or "", boxes=tuple(boxes),
        options=tuple(sorted(options)), upper_bonus_threshold=63, upper_bonus=35,
        five_box="kniffel", five_bonus=bonus, joker="free" if "free-joker" in options else "forced",
    )


GENERALA_OPTIONS = {
    "no-wrap-straight": "Escalera only 1-2-3-4-5 or 2-3-4-5-6 (not 3-4-5-6-1)",
    "no-doble": "no Generala doble box: 10 boxes",
    "servida-wins": "a served Generala wins a multiplayer game at once (solitaire: still 60, counted)",
}


def _generala(options: frozenset[str]) -> RuleSet:
    """Generala (Latin America; source 003's "bonus per le combinazioni servite"): 11 boxes,
    no upper bonus, no joker; Escalera 20, Full 30, Póker 40, Generala 50, each 5 more
    (Generala 10 more: 60) when *served*, i.e. made by the turn's first throw; Generala
    doble 100 for five of a kind while the Generala box holds a Generala, else 0.

    Sources disagree on much: whether the 1 may follow the 6 in an Escalera (taken:
    yes, 3-4-5-6-1 counts, as in a Generala app on Google Play; ``no-wrap-straight``
    refuses it), what a Generala is worth (50 here, 60 served; that app pays 60 and
    120, and many tables say a served Generala wins the game at once: the
    ``servida-wins`` option, which a solitaire score cannot express, so it still
    counts 60 and results count how often it happened), and whether the doble
    exists (Latin American summaries list 10 categories: ``no-doble``). "Served"
    means the final dice are the first throw's:
    holding all five dice after it is not a new throw. The doble follows docs/rules.md:
    any non-zero Generala box (50, or 60 served) enables it.
    """
    escalera_runs = ((1, 2, 3, 4, 5), (2, 3, 4, 5, 6))
    if "no-wrap-straight" not in options:
        escalera_runs += ((3, 4, 5, 6, 1),)
    boxes = _upper_boxes() + [
        Box("escalera", "Escalera", s.served(s.straight(5, 20, runs=escalera_runs), 5), by_throw=True),
        Box("full", "Full", s.served(s.full_house("30"), 5), by_throw=True),
        Box("poker", "Póker", s.served(s.of_a_kind(4, value="40"), 5), by_throw=True),
        Box("generala", "Generala", s.served(s.five_of_a_kind(50), 10), by_throw=True),
    ]
    if "no-doble" not in options:
        boxes.append(Box("generala_doble", "Generala doble", s.five_of_a_kind(100), needs_five_box=True))
    return RuleSet(
        name="generala", title="Generala", description=_generala.__doc__ or "", boxes=tuple(boxes),
        options=tuple(sorted(options)), upper_bonus=0, five_box="generala", five_bonus=0, joker="none",
    )


KISMET_COLOURS = (0, 1, 2, 2, 1, 0)
"""Colour of each face (1..6): 1 and 6 black (0), 2 and 5 red (1), 3 and 4 green (2)."""


def _kismet(options: frozenset[str]) -> RuleSet:
    """Kismet (Lakeside 1964, source 000; also YachtC's "TriColor"): dice coloured by face
    (1 and 6 black, 2 and 5 red, 3 and 4 green), 15 boxes, an upper bonus in three
    tiers (+35 at 63-70, +55 at 71-77, +75 at 78 or more), no joker.

    Sources disagree on whether a roll that fits nothing must go to Yarborough
    (some rule sheets) or may be scratched anywhere (others): taken, any open box,
    as in every other game here. Two pairs same colour counts four of a kind and a
    full house whose faces share a colour; Full house is strict (five of a kind is
    not one); a second Kismet has no special effect.
    """
    c = KISMET_COLOURS
    boxes = _upper_boxes() + [
        Box("two_pairs_same_colour", "Two pairs same colour", s.same_colour_two_pairs(c)),
        Box("three_of_a_kind", "Three of a kind", s.of_a_kind(3)),
        Box("straight", "Straight", s.straight(5, 30)),
        Box("flush", "Flush", s.flush(c, 35)),
        Box("full_house", "Full house", s.groups((3, 2), "sum", plus=15)),
        Box("full_house_same_colour", "Full house same colour", s.groups((3, 2), "sum", plus=20, colours=c)),
        Box("four_of_a_kind", "Four of a kind", s.kind_plus(4, "sum", plus=25)),
        Box("yarborough", "Yarborough", s.chance),
        Box("kismet", "Kismet", s.kind_plus(5, "sum", plus=50)),
    ]
    return RuleSet(
        name="kismet", title="Kismet", description=_kismet.__doc__ or "", boxes=tuple(boxes),
        options=tuple(sorted(options)), upper_bonus_tiers=((63, 35), (71, 55), (78, 75)),
        five_box=None, five_bonus=0, joker="none",
    )


BALUT_CATEGORIES = ("fours", "fives", "sixes", "straight", "full_house", "choice", "balut")
BALUT_ROUNDS = 4
# Balut's points as data (balut_points reads them; so does the heuristic, which aims at them):
BALUT_TOTAL_POINTS = (("fours", 52, 2), ("fives", 65, 2), ("sixes", 78, 2), ("choice", 100, 2))
"""(category, total it must reach over its four boxes, points)."""
BALUT_FULL_POINTS = (("straight", 4), ("full_house", 3))
"""(category, points when all four of its boxes are non-zero)."""
BALUT_EACH_POINTS = (("balut", 2),)
"""(category, points for each of its boxes that is non-zero)."""
BALUT_SCORE_BANDS = (350, 50, -2, 6)
"""(start, step, least, most): the total score adds ``clip((score - start) // step, least, most)``."""


def balut_points(box_scores: np.ndarray) -> np.ndarray:
    """Balut's points of finished cards ``(N, 28)`` (docs/rules.md): category totals, complete
    Straight and Full house columns, each Balut, and the total score in steps of 50.

    >>> card = np.zeros((1, 28), int)
    >>> card[0, 0:4] = 16; card[0, 4:8] = 20; card[0, 8:12] = 24      # 64, 80, 96: 2 + 2 + 2
    >>> card[0, 24:28] = 45                                            # four Baluts: 8; total 420: +1
    >>> int(balut_points(card)[0])
    15
    """
    cards = np.asarray(box_scores, dtype=np.int64).reshape(len(box_scores), len(BALUT_CATEGORIES), BALUT_ROUNDS)
    totals = cards.sum(axis=2)
    points = np.zeros(len(cards), dtype=np.int64)
    for c, threshold, worth in BALUT_TOTAL_POINTS:
        points += np.where(totals[:, BALUT_CATEGORIES.index(c)] >= threshold, worth, 0)
    for c, worth in BALUT_FULL_POINTS:
        points += np.where((cards[:, BALUT_CATEGORIES.index(c)] > 0).all(axis=1), worth, 0)
    for c, worth in BALUT_EACH_POINTS:
        points += worth * (cards[:, BALUT_CATEGORIES.index(c)] > 0).sum(axis=1)
    score = totals.sum(axis=1)
    start, step, least, most = BALUT_SCORE_BANDS
    points += np.clip(np.floor_divide(score - start, step), least, most)   # <300: -2 ... 650+: +6
    return points


def _balut(options: frozenset[str]) -> RuleSet:
    """Balut (Denmark; sources 000 and 003): five dice, three throws, seven categories each
    filled four times (28 turns) in any order; points at the end beside the score.

    The rule pages agree on the categories and the points table (playonlinedicegames.com,
    diceworldgame.com: 29 points at most) but not on the ends of the total-score
    bands (0-299 or 20-299; 650-699 or 650 and more) nor on whether the game is won
    on points or, "simplified", on the score. This rule set reads docs/rules.md: Fours
    >= 52, Fives >= 65, Sixes >= 78, Choice >= 100 two points each, all four
    Straights 4, all four Full houses 3, each Balut 2, and the total score from -2
    (under 300) to +6 (650 or more) in steps of 50; results report both. Full house
    is strict (five of a kind is not one). :meth:`RuleSet.points` gives the points.
    """
    scorers = {
        "fours": (s.upper(4), 4), "fives": (s.upper(5), 5), "sixes": (s.upper(6), 6),
        "straight": (s.runs({(1, 2, 3, 4, 5): 15, (2, 3, 4, 5, 6): 20}), None),
        "full_house": (s.groups((3, 2), "sum"), None), "choice": (s.chance, None),
        "balut": (s.kind_plus(5, "sum", plus=20), None),
    }
    boxes = [Box(f"{c}_{k}", f"{c.replace('_', ' ').capitalize()} {k}", scorer, upper_face=face)
             for c in BALUT_CATEGORIES for k in range(1, BALUT_ROUNDS + 1) for scorer, face in [scorers[c]]]
    return RuleSet(
        name="balut", title="Balut", description=_balut.__doc__ or "", boxes=tuple(boxes),
        options=tuple(sorted(options)), upper_bonus=0, five_box=None, joker="none", card_points=balut_points,
        card_points_range=(-2, 29),   # nothing scored (-2) to a perfect card (29)
    )


MAXI_OPTIONS = {"no-saved-throws": "throws a turn does not use are lost, not banked for later turns"}


def _maxi_yatzy(options: frozenset[str]) -> RuleSet:
    """Maxi Yatzy (Scandinavia): six dice, up to three throws a turn, 20 boxes, upper bonus
    at 84 (four of each face), Maxi Yatzy (six of a kind) 100; throws a turn does not
    use are banked for later turns.

    The published rule pages agree on the card and on +100 at 84 (maxiyahtzee.com,
    famholen.com) but not on saved throws: most bank the unused throws (and ask for
    at least one throw a turn), some describe three throws a turn and no more
    (``no-saved-throws``). Pairs, Two and Three pairs
    need different faces and score the dice that make them (the best such); Three,
    Four and Five of a kind score n times the face; Full house scores the best three
    and two of different faces; Villa (two triples) and Tower (four and two) the sum.
    """
    boxes = _upper_boxes() + [
        Box("one_pair", "One pair", s.n_pairs(1)),
        Box("two_pairs", "Two pairs", s.n_pairs(2)),
        Box("three_pairs", "Three pairs", s.n_pairs(3)),
        Box("three_of_a_kind", "Three of a kind", s.kind_plus(3, "matching")),
        Box("four_of_a_kind", "Four of a kind", s.kind_plus(4, "matching")),
        Box("five_of_a_kind", "Five of a kind", s.kind_plus(5, "matching")),
        Box("small_straight", "Small straight", s.runs({(1, 2, 3, 4, 5): 15})),
        Box("large_straight", "Large straight", s.runs({(2, 3, 4, 5, 6): 20})),
        Box("full_straight", "Full straight", s.runs({(1, 2, 3, 4, 5, 6): 21})),
        Box("full_house", "Full house", s.groups((3, 2), "dice")),
        Box("villa", "Villa", s.groups((3, 3), "sum")),
        Box("tower", "Tower", s.groups((4, 2), "sum")),
        Box("chance", "Chance", s.chance),
        Box("maxi_yatzy", "Maxi Yatzy", s.five_of_a_kind(100)),
    ]
    return RuleSet(
        name="maxi-yatzy", title="Maxi Yatzy", description=_maxi_yatzy.__doc__ or "", boxes=tuple(boxes),
        options=tuple(sorted(options)), n_dice=6, upper_bonus_threshold=84, upper_bonus=100,
        five_box="maxi_yatzy", five_bonus=0, joker="none", banked_throws="no-saved-throws" not in options,
    )


YAMB_ROWS = ("ones", "twos", "threes", "fours", "fives", "sixes", "max", "min", "kenta", "triling",
             "full", "poker", "yamb")
YAMB_COLUMNS = (("down", "down"), ("up", "up"), ("free", "any"), ("announce", "announce"))
YAMB_BONUS_AT, YAMB_BONUS = 60, 30


def yamb_score(box_scores: np.ndarray) -> np.ndarray:
    """Yamb's score of finished cards ``(N, 52)``: per column its six upper rows, +30 when
    they total 60 or more, (Max - Min) x Ones (may be negative), and its lower rows.

    >>> card = np.zeros((1, 52), int)
    >>> card[0, :13] = [3, 8, 12, 16, 10, 18, 28, 8, 66, 35, 47, 56, 75]   # the Down column
    >>> int(yamb_score(card)[0])        # 67 + 30 + (28 - 8) * 3 + 279
    436
    """
    return yamb_columns(box_scores)[0].sum(axis=1)


def yamb_columns(box_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's score ``(N, 4)`` of finished Yamb cards, and whether it earned its +30
    ``(N, 4)`` (Down, Up, Free, Announce): the summaries report both per column.

    >>> card = np.zeros((1, 52), int)
    >>> card[0, :13] = [3, 8, 12, 16, 10, 18, 28, 8, 66, 35, 47, 56, 75]
    >>> scores, bonus = yamb_columns(card)
    >>> scores[0].tolist(), bonus[0].tolist()
    ([436, 0, 0, 0], [True, False, False, False])
    """
    cards = np.asarray(box_scores, dtype=np.int64).reshape(len(box_scores), len(YAMB_COLUMNS), len(YAMB_ROWS))
    upper = cards[:, :, :6].sum(axis=2)
    earned = upper >= YAMB_BONUS_AT
    middle = (cards[:, :, 6] - cards[:, :, 7]) * cards[:, :, 0]
    lower = cards[:, :, 8:].sum(axis=2)
    return upper + np.where(earned, YAMB_BONUS, 0) + middle + lower, earned


def _yamb(options: frozenset[str]) -> RuleSet:
    """Yamb (former Yugoslavia; source 000): five dice, three throws, four columns of 13 rows
    (52 turns). Columns: Down (top to bottom, no skipping), Up (bottom to top), Free
    (any order) and Announce (the row is named after the first throw and the turn's
    dice go there). A column scores its upper rows, +30 at 60 or more, (Max - Min) x
    Ones, and its lower rows; Kenta pays 66, 56 or 46 by the throw that made it.

    Yamb is played in many local forms: five or six dice, 12 rows (no Triling) or
    more, six or eight columns ("from the middle", "late announce"), an upper bonus
    that grows by 10 for each further 10 points, a Straight worth 15/20 instead of
    66/56/46, Poker as the sum plus 40. This rule set takes docs/rules.md's four columns
    and values; Full is strict (three and two of different faces); Triling and Poker
    score the three (four) matching dice plus 20 (40), Yamb the sum plus 50. An
    announcement is made after the first throw (a strategy decision, see
    :meth:`Strategy.announce`) and the turn's dice then go into that box.
    """
    row_scorers = {
        **{UPPER_NAMES[f - 1]: (s.upper(f), f) for f in range(1, 7)},
        "max": (s.chance, None), "min": (s.chance, None),
        "kenta": (s.by_throw(s.straight(5, 1), (66, 56, 46)), None),
        "triling": (s.kind_plus(3, "matching", plus=20), None),
        "full": (s.groups((3, 2), "sum", plus=30), None),
        "poker": (s.kind_plus(4, "matching", plus=40), None),
        "yamb": (s.kind_plus(5, "sum", plus=50), None),
    }
    boxes, columns = [], []
    for col, order in YAMB_COLUMNS:
        names = []
        for row in YAMB_ROWS:
            scorer, face = row_scorers[row]
            label = row.capitalize() if row != "max" else "Max"
            boxes.append(Box(f"{col}_{row}", f"{col.capitalize()}: {label}", scorer, upper_face=face,
                             by_throw=row == "kenta"))
            names.append(f"{col}_{row}")
        columns.append(Column(col, tuple(names), order))
    rules = RuleSet(
        name="yamb", title="Yamb", description=_yamb.__doc__ or "", boxes=tuple(boxes),
        options=tuple(sorted(options)), upper_bonus=0, five_box=None, joker="none",
        columns=tuple(columns), card_score=yamb_score, card_score_range=(0, 0),
    )
    # Bounds of a column: its rows' extremes, the bonus, and (Max - Min) x Ones either way.
    top = rules.score_tables.max(axis=(0, 1))[:len(YAMB_ROWS)].astype(int)
    sums = rules.score_table[:, YAMB_ROWS.index("max")].astype(int)
    swing = (int(sums.max()) - int(sums.min())) * int(top[0])
    high = int(top[:6].sum()) + YAMB_BONUS + swing + int(top[8:].sum())
    return dataclasses.replace(rules, card_score_range=(-swing * len(YAMB_COLUMNS), high * len(YAMB_COLUMNS)))


def _option_key(options: frozenset[str], faces: int = 6) -> tuple[str, ...]:
    """The options of a rule set's key, sorted, with ``faces-N`` spelled only when not 6."""
    spelled = FACES.spell(faces)
    return tuple(sorted(set(options) | ({spelled} if spelled else set())))


_FACES_DOC = """

With ``faces-N`` (source 000's seven-sided "Lucky7" dice, any N in 2..12) the card has
N upper boxes, the upper bonus needs three of each face (84 for seven) and a straight
is any run of 4 (5) faces within 1..N; every other box keeps its rule."""
_FORCED_DOC += _FACES_DOC
_FREE_DOC += _FACES_DOC
_ORIGINAL_DOC += _FACES_DOC

REGISTRY: dict[str, RuleSpec] = {
    spec.name: spec
    for spec in [
        RuleSpec("yahtzee", "official Yahtzee, forced joker", YAHTZEE_OPTIONS,
                 _yahtzee("yahtzee", "forced", "Yahtzee (official, forced joker)", _FORCED_DOC),
                 numbers=(FACES,)),
        RuleSpec("yahtzee-free-joker", "Yahtzee with the free-choice joker", YAHTZEE_OPTIONS,
                 _yahtzee("yahtzee-free-joker", "free", "Yahtzee (free-choice joker)", _FREE_DOC),
                 numbers=(FACES,)),
        RuleSpec("yahtzee-original-joker", "Yahtzee with the 1956 joker rule", YAHTZEE_OPTIONS,
                 _yahtzee("yahtzee-original-joker", "original", "Yahtzee (1956 joker)", _ORIGINAL_DOC),
                 numbers=(FACES,)),
        RuleSpec("yacht", "Japanese Yacht (ヨット) with its local rules", YACHT_OPTIONS, _yacht,
                 numbers=(FACES,)),
        RuleSpec("yacht-classic", "the older Yacht source 000 compares with", {}, _yacht_classic),
        RuleSpec("yatzy", "Scandinavian Yatzy", {}, _yatzy),
        RuleSpec("kniffel", "Kniffel, the German Yahtzee (+50 per further Kniffel)", KNIFFEL_OPTIONS, _kniffel,
                 conflicts=(("kniffel-bonus-100", "no-kniffel-bonus"),)),
        RuleSpec("generala", "Generala, with served combinations and the doble", GENERALA_OPTIONS, _generala),
        RuleSpec("kismet", "Kismet: coloured dice and a three-tier upper bonus", {}, _kismet),
        RuleSpec("maxi-yatzy", "Maxi Yatzy: six dice, 20 boxes, saved throws", MAXI_OPTIONS, _maxi_yatzy),
        RuleSpec("balut", "Balut: seven categories four times each, points at the end", {}, _balut),
        RuleSpec("yamb", "Yamb: four columns (Down, Up, Free, Announce) of 13 rows", {}, _yamb),
    ]
}
