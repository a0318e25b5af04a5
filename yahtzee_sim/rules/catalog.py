"""The rule sets of ``shared/RULES.md``, each a builder that takes its options.

Each builder's docstring states the choices made where the source documents are
silent; they follow the published solvers so exact results are comparable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import scoring as s
from .base import Box, RuleSet

UPPER_NAMES = ("ones", "twos", "threes", "fours", "fives", "sixes")
UPPER_LABELS = ("Ones", "Twos", "Threes", "Fours", "Fives", "Sixes")


def _upper_boxes() -> list[Box]:
    return [Box(n, l, s.upper(f), upper_face=f) for f, n, l in zip(range(1, 7), UPPER_NAMES, UPPER_LABELS)]


@dataclass(frozen=True)
class RuleSpec:
    """Registry entry: a builder plus the options it accepts."""

    name: str
    summary: str
    options: dict[str, str]
    build: Callable[[frozenset[str]], RuleSet]


YAHTZEE_OPTIONS = {
    "no-yahtzee-bonus": "no +100 for further Yahtzees",
    "no-joker": "no joker: an extra Yahtzee is placed and scored like any roll",
}


def _yahtzee(name: str, joker: str, title: str, doc: str) -> Callable[[frozenset[str]], RuleSet]:
    def build(options: frozenset[str]) -> RuleSet:
        boxes = _upper_boxes() + [
            Box("three_of_a_kind", "Three of a kind", s.of_a_kind(3)),
            Box("four_of_a_kind", "Four of a kind", s.of_a_kind(4)),
            Box("full_house", "Full house", s.full_house("25"), joker_points=25),
            Box("small_straight", "Small straight", s.straight(4, 30), joker_points=30),
            Box("large_straight", "Large straight", s.straight(5, 40), joker_points=40),
            Box("yahtzee", "Yahtzee", s.five_of_a_kind(50)),
            Box("chance", "Chance", s.chance),
        ]
        return RuleSet(
            name=name, title=title, description=doc, boxes=tuple(boxes),
            options=tuple(sorted(options)), upper_bonus_threshold=63, upper_bonus=35,
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


def _yacht(options: frozenset[str]) -> RuleSet:
    """Japanese Yacht (seed 001): 12 boxes, upper bonus 35 at 63, no joker."""
    small, big = (30, 40) if "straights-30-40" in options else (15, 30)
    boxes = _upper_boxes() + [Box("choice", "Choice", s.chance)]
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
        boxes=tuple(boxes), options=tuple(sorted(options)),
        upper_bonus=0 if "no-bonus" in options else 35, five_box="yacht",
        five_bonus=100 if "yacht-bonus-100" in options else 0, joker="none",
        fill_order="in-order" if "fill-in-order" in options else "any",
    )


def _yacht_classic(options: frozenset[str]) -> RuleSet:
    """The older Yacht (seed 000): 12 boxes, no bonuses, no joker.

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
    """Scandinavian Yatzy (seed 000): 15 boxes, upper bonus 50 at 63, no Yatzy bonus, no joker.

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


_FORCED_DOC = """Official Yahtzee (seeds 000, 003): 13 boxes, upper bonus 35 at 63,
+100 per further Yahtzee while the Yahtzee box holds 50, forced joker placement:
the matching upper box if open, else any open lower box (Full house and the
straights then pay 25/30/40), else any open upper box for zero. The joker applies
whenever the Yahtzee box is filled (50 or 0), as in the official rules."""

_FREE_DOC = """Yahtzee with the free-choice joker (seed 000): any open box may be used;
Full house and the straights pay 25/30/40 for a Yahtzee only when the Yahtzee box
is filled and the matching upper box is already filled (else the normal score, 0).
This is the rule of Verhoeff's and Glenn's published optimal solvers."""

_ORIGINAL_DOC = """Yahtzee with the 1956 booklet's joker (seed 000): an extra Yahtzee must
go in an open lower box as a joker (25/30/40 in Full house and the straights); an
upper box may take it only when no lower box is open (normal upper score)."""

REGISTRY: dict[str, RuleSpec] = {
    spec.name: spec
    for spec in [
        RuleSpec("yahtzee", "official Yahtzee, forced joker", YAHTZEE_OPTIONS,
                 _yahtzee("yahtzee", "forced", "Yahtzee (official, forced joker)", _FORCED_DOC)),
        RuleSpec("yahtzee-free-joker", "Yahtzee with the free-choice joker", YAHTZEE_OPTIONS,
                 _yahtzee("yahtzee-free-joker", "free", "Yahtzee (free-choice joker)", _FREE_DOC)),
        RuleSpec("yahtzee-original-joker", "Yahtzee with the 1956 joker rule", YAHTZEE_OPTIONS,
                 _yahtzee("yahtzee-original-joker", "original", "Yahtzee (1956 joker)", _ORIGINAL_DOC)),
        RuleSpec("yacht", "Japanese Yacht (ヨット) with its local rules", YACHT_OPTIONS, _yacht),
        RuleSpec("yacht-classic", "the older Yacht seed 000 compares with", {}, _yacht_classic),
        RuleSpec("yatzy", "Scandinavian Yatzy", {}, _yatzy),
    ]
}
