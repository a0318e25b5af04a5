"""Rule sets as data: boxes with pure scoring functions plus a few switches.

Everything that depends on the score card rather than on the dice alone (upper
bonus, Yahtzee/Yacht bonus, joker placement and values, fill order) is handled
here, vectorized over a batch of games, so that the simulator, the strategies
and the exact solver all share one definition of the rules.

Generalizing to the games RULES.md lists for later: the number of dice and faces
is a field; a box used several times is several boxes with one scorer; an order
constraint is a :attr:`RuleSet.fill_order` policy (:meth:`RuleSet.legal_boxes`
is the one place that enforces it).

>>> from yahtzee_sim.rules import get_rules
>>> r = get_rules("yahtzee")
>>> r.box_names[:3], r.n_boxes
(('ones', 'twos', 'threes'), 13)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from ..dice import DiceTables, dice_tables
from .scoring import Scorer

JokerPolicy = Literal["none", "forced", "free", "original"]
FillOrder = Literal["any", "in-order"]


@dataclass(frozen=True)
class Box:
    """One box of the score card.

    ``score`` maps face counts ``(R, F)`` to points ``(R,)``. ``upper_face`` marks
    the upper section (1..F). ``joker_points`` is what the box pays when a five of
    a kind is used as a joker there (Full house 25, straights 30/40); ``None``
    means the normal score applies. ``by_throw``: ``score(counts, throws)`` also
    gets the number of throws (1..n_rolls) that made the final dice, for games
    that pay more for a combination "served" on the first throw (Generala).
    """

    name: str
    label: str
    score: Scorer = field(repr=False, compare=False)
    upper_face: int | None = None
    joker_points: int | None = None
    by_throw: bool = False


@dataclass(frozen=True, eq=False)
class RuleSet:
    """A complete rule set. Build one with :func:`yahtzee_sim.rules.get_rules`.

    Attributes
    ----------
    name, options : registry name and the options applied (sorted).
    boxes : the score card in card order.
    upper_bonus_threshold, upper_bonus : e.g. 63 and 35; ``upper_bonus=0`` disables it.
    five_box : name of the five-of-a-kind box (Yahtzee, Yacht, Yatzy).
    five_bonus : points for each further five of a kind while ``five_box`` holds its
        full value (Yahtzee bonus, 100); 0 for none.
    joker : how an extra five of a kind may be placed (see RULES.md).
    fill_order : ``"any"`` or ``"in-order"`` (boxes filled top to bottom).
    """

    name: str
    title: str
    boxes: tuple[Box, ...]
    description: str = ""
    options: tuple[str, ...] = ()
    n_dice: int = 5
    n_faces: int = 6
    n_rolls: int = 3
    upper_bonus_threshold: int = 63
    upper_bonus: int = 35
    five_box: str | None = None
    five_bonus: int = 0
    joker: JokerPolicy = "none"
    fill_order: FillOrder = "any"

    # -- identity ---------------------------------------------------------------
    @property
    def key(self) -> str:
        """Stable identifier of rules plus options, e.g. ``"yacht+no-bonus"``."""
        return "+".join((self.name,) + tuple(self.options))

    def __repr__(self) -> str:
        return f"RuleSet({self.key!r}, {self.n_boxes} boxes)"

    # -- static tables ----------------------------------------------------------
    @property
    def n_boxes(self) -> int:
        return len(self.boxes)

    @functools.cached_property
    def box_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.boxes)

    def box_index(self, name: str) -> int:
        """Position of a box by name; a clear error lists the valid names.

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("yahtzee").box_index("chance")
        12
        """
        key = name.strip().lower().replace("-", "_").replace(" ", "_")
        if key not in self.box_names:
            raise ValueError(
                f"unknown box {name!r} for {self.key}; valid boxes: {', '.join(self.box_names)}"
            )
        return self.box_names.index(key)

    @functools.cached_property
    def dice(self) -> DiceTables:
        return dice_tables(self.n_dice, self.n_faces)

    @functools.cached_property
    def upper_face(self) -> np.ndarray:
        """(B,) face of each upper box, 0 for lower boxes."""
        out = np.array([b.upper_face or 0 for b in self.boxes], dtype=np.int8)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def is_upper(self) -> np.ndarray:
        out = self.upper_face > 0
        out.setflags(write=False)
        return out

    @functools.cached_property
    def score_table(self) -> np.ndarray:
        """(R, B) int16: the points of every roll in every box on a plain card."""
        if self.roll_dependent:  # the points of dice made with every throw
            return self.score_tables[-1]
        counts = self.dice.roll_counts.astype(np.int64)
        table = np.stack([np.asarray(b.score(counts)) for b in self.boxes], axis=1)
        table = table.astype(np.int16)
        table.setflags(write=False)
        return table

    @property
    def roll_dependent(self) -> bool:
        """Does any box's score depend on how many throws made the dice?"""
        return any(b.by_throw for b in self.boxes)

    @functools.cached_property
    def score_tables(self) -> np.ndarray:
        """(n_rolls, R, B) int16: points of every roll in every box when made on throw t+1.

        Equal to ``score_table`` on every throw unless a box is ``by_throw``.
        """
        counts = self.dice.roll_counts.astype(np.int64)
        tables = [np.stack([np.asarray(b.score(counts, t) if b.by_throw else b.score(counts))
                            for b in self.boxes], axis=1) for t in range(1, self.n_rolls + 1)]
        out = np.stack(tables).astype(np.int16)
        out.setflags(write=False)
        return out

    def require_final_throw_scoring(self, what: str) -> None:
        """Refuse rule sets whose scores depend on the throw number (``what`` does not model it)."""
        if self.roll_dependent:
            raise ValueError(f"{what} does not handle {self.key}: a box's score depends on the throw number")

    @functools.cached_property
    def five_face(self) -> np.ndarray:
        """(R,) face of a five-of-a-kind roll, 0 for other rolls."""
        counts = self.dice.roll_counts
        is_five = counts.max(axis=1) == self.n_dice
        out = np.where(is_five, counts.argmax(axis=1) + 1, 0).astype(np.int8)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def five_box_index(self) -> int:
        return -1 if self.five_box is None else self.box_names.index(self.five_box)

    @functools.cached_property
    def five_box_points(self) -> int:
        """What the five-of-a-kind box pays (50)."""
        if self.five_box is None:
            return 0
        return int(self.score_table[:, self.five_box_index].max())

    @functools.cached_property
    def joker_points(self) -> np.ndarray:
        """(B,) joker value of each box, -1 where the normal score applies."""
        out = np.array([-1 if b.joker_points is None else b.joker_points for b in self.boxes],
                       dtype=np.int16)
        out.setflags(write=False)
        return out

    @property
    def max_upper_box(self) -> int:
        """Largest score any single upper box can take."""
        return int(self.upper_face.max()) * self.n_dice

    # -- state-dependent rules, vectorized over games ----------------------------
    def legal_boxes(self, filled: np.ndarray) -> np.ndarray:
        """(N, B) boxes a turn may end in, before joker restrictions.

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yacht", ["fill-in-order"])
        >>> filled = np.zeros((1, r.n_boxes), bool); filled[0, :2] = True
        >>> np.flatnonzero(r.legal_boxes(filled)[0]).tolist()
        [2]
        """
        filled = np.asarray(filled, dtype=bool)
        open_ = ~filled
        if self.fill_order == "in-order":
            first = np.argmax(open_, axis=-1)
            only = np.zeros_like(open_)
            np.put_along_axis(only, first[..., None], True, axis=-1)
            return only & open_
        return open_

    def turn_options(
        self, filled: np.ndarray, five_box_full: np.ndarray, rolls: np.ndarray, *, throws=None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where each game may put its final roll, what each box pays, and the bonus.

        Parameters
        ----------
        filled : (N, B) bool, boxes already used.
        five_box_full : (N,) bool, the five-of-a-kind box holds its full value (50).
        rolls : (N,) roll indices of the final dice.
        throws : (N,) throws (1..n_rolls) that made them; only used when a box is
            ``by_throw`` (default: every throw was made).

        Returns
        -------
        legal : (N, B) bool; scores : (N, B) int16 box points (jokers applied);
        five_bonus : (N,) int16, Yahtzee/Yacht bonus earned by this roll.

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yahtzee")
        >>> filled = np.zeros((1, 13), bool); filled[0, [4, 11]] = True   # Fives, Yahtzee
        >>> roll = [r.dice.roll_index_of([5] * 5)]
        >>> legal, scores, bonus = r.turn_options(filled, np.array([True]), roll)
        >>> [r.box_names[b] for b in np.flatnonzero(legal[0])][:3], int(scores[0, 8]), int(bonus[0])
        (['three_of_a_kind', 'four_of_a_kind', 'full_house'], 25, 100)
        """
        filled = np.asarray(filled, dtype=bool)
        rolls = np.asarray(rolls)
        five_box_full = np.asarray(five_box_full, dtype=bool)
        legal = self.legal_boxes(filled)
        if throws is not None and self.roll_dependent:
            scores = self.score_tables[np.asarray(throws, dtype=np.intp) - 1, rolls]
        else:
            scores = self.score_table[rolls].copy()
        five_bonus = np.zeros(len(rolls), dtype=np.int16)
        if self.five_box is None:
            return legal, scores, five_bonus

        face = self.five_face[rolls].astype(np.intp)
        is_five = face > 0
        if self.five_bonus:
            five_bonus = np.where(is_five & five_box_full, self.five_bonus, 0).astype(np.int16)
        if self.joker == "none" or not is_five.any():
            return legal, scores, five_bonus

        five_box_used = filled[:, self.five_box_index]
        joker = is_five & five_box_used
        rows = np.flatnonzero(joker)
        lower = ~self.is_upper
        open_ = legal[rows]
        f = face[rows]
        matching_upper = np.flatnonzero(self.is_upper)[np.argsort(self.upper_face[self.is_upper])]
        match_col = matching_upper[f - 1]
        match_open = open_[np.arange(len(rows)), match_col]
        joker_value = self.joker_points >= 0
        sub_scores = scores[rows]

        if self.joker == "forced":
            any_lower_open = (open_ & lower).any(axis=1)
            only_match = np.zeros_like(open_)
            only_match[np.arange(len(rows)), match_col] = True
            new_legal = np.where(
                match_open[:, None], only_match,
                np.where(any_lower_open[:, None], open_ & lower, open_ & self.is_upper),
            )
            apply = np.ones(len(rows), dtype=bool)
        elif self.joker == "original":
            any_lower_open = (open_ & lower).any(axis=1)
            new_legal = np.where(any_lower_open[:, None], open_ & lower, open_ & self.is_upper)
            apply = np.ones(len(rows), dtype=bool)
        elif self.joker == "free":
            new_legal = open_
            apply = ~match_open
        else:  # pragma: no cover - guarded by get_rules
            raise ValueError(f"unknown joker policy {self.joker!r}")

        use_joker = apply[:, None] & joker_value[None, :]
        sub_scores = np.where(use_joker, self.joker_points[None, :], sub_scores)
        legal[rows] = new_legal
        scores[rows] = sub_scores
        return legal, scores, five_bonus

    def upper_bonus_gain(self, upper_total: np.ndarray, scores: np.ndarray) -> np.ndarray:
        """(N, B) upper bonus earned by putting ``scores`` in each box now.

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yahtzee")
        >>> s = np.zeros((1, 13), np.int16); s[0, 5] = 18
        >>> int(r.upper_bonus_gain(np.array([50]), s)[0, 5])
        35
        """
        if not self.upper_bonus:
            return np.zeros(scores.shape, dtype=np.int16)
        upper_total = np.asarray(upper_total)[:, None]
        crosses = (
            self.is_upper[None, :]
            & (upper_total < self.upper_bonus_threshold)
            & (upper_total + scores >= self.upper_bonus_threshold)
        )
        return np.where(crosses, self.upper_bonus, 0).astype(np.int16)

    def final_bonus(self, upper_total: np.ndarray) -> np.ndarray:
        """Upper bonus of finished cards given their upper totals."""
        upper_total = np.asarray(upper_total)
        if not self.upper_bonus:
            return np.zeros(upper_total.shape, dtype=np.int16)
        return np.where(upper_total >= self.upper_bonus_threshold, self.upper_bonus, 0)

    # -- single-roll convenience ------------------------------------------------
    def score_dice(self, dice) -> dict[str, int]:
        """Points of one roll in each box on a fresh card.

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("yacht").score_dice([3, 3, 3, 5, 5])["full_house"]
        19
        """
        roll = self.dice.roll_index_of(dice)
        return {name: int(v) for name, v in zip(self.box_names, self.score_table[roll])}
