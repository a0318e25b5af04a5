"""Rule sets as data: boxes with pure scoring functions plus a few switches.

Over 600 lines: the one RuleSet dataclass, with the derived tables every layer reads
(score table, joker and bonus rules, columns); its parts are not used apart.

Everything that depends on the score card rather than on the dice alone (upper
bonus, Yahtzee/Yacht bonus, joker placement and values, fill order) is handled
here, vectorized over a batch of games, so that the simulator, the strategies
and the exact solver all share one definition of the rules.

The rest of the family is data too: the number of dice and faces are fields; an
upper bonus with several tiers is :attr:`RuleSet.upper_bonus_tiers` (the classic
single bonus is one tier); a category used several times (Balut) is several boxes
with one scorer; a box that pays only while the five-of-a-kind box holds a score
(Generala doble) is ``Box(needs_five_box=True)``; order constraints are
:attr:`RuleSet.fill_order` for the whole card or per-column :class:`Column` orders
(Yamb), and :meth:`RuleSet.legal_boxes` is the one place that enforces them;
a score computed from the finished card (Yamb's (Max - Min) x Ones) is
:attr:`RuleSet.card_score`, and Balut's points are :attr:`RuleSet.card_points`.

>>> from yahtzee_sim.rules import get_rules
>>> r = get_rules("yahtzee")
>>> r.box_names[:3], r.n_boxes
(('ones', 'twos', 'threes'), 13)
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np

from ..dice import DiceTables, dice_tables
from .scoring import Scorer

JokerPolicy = Literal["none", "forced", "free", "original"]
FillOrder = Literal["any", "in-order"]
ColumnOrder = Literal["down", "up", "any", "announce"]
CardFunction = Callable[[np.ndarray], np.ndarray]
JOKER_POLICIES = ("none", "forced", "free", "original")
FILL_ORDERS = ("any", "in-order")
COLUMN_ORDERS = ("down", "up", "any", "announce")


@dataclass(frozen=True)
class Box:
    """One box of the score card.

    ``score`` maps face counts ``(R, F)`` to points ``(R,)``. ``upper_face`` marks
    the upper section (1..F). ``joker_points`` is what the box pays when a five of
    a kind is used as a joker there (Full house 25, straights 30/40); ``None``
    means the normal score applies. ``by_throw``: ``score(counts, throws)`` also
    gets the number of throws (1..n_rolls) that made the final dice, for games
    that pay more for a combination "served" on the first throw (Generala).
    ``needs_five_box``: the box pays its score only while the rule set's
    five-of-a-kind box holds a score (Generala doble: 100 after a Generala, else 0).
    """

    name: str
    label: str
    score: Scorer = field(repr=False, compare=False)
    upper_face: int | None = None
    joker_points: int | None = None
    by_throw: bool = False
    needs_five_box: bool = False


@dataclass(frozen=True)
class Column:
    """A column of the card with its own fill order (Yamb).

    ``boxes`` are box names, top to bottom. ``order``: ``"down"`` (top to bottom, no
    skipping), ``"up"`` (bottom to top), ``"any"``, or ``"announce"`` (a box of the
    column may be filled only in a turn that announced it after the first throw).
    """

    name: str
    boxes: tuple[str, ...]
    order: ColumnOrder = "any"


@dataclass(frozen=True, eq=False)
class RuleSet:
    """A complete rule set. Build one with :func:`yahtzee_sim.rules.get_rules`.

    Attributes
    ----------
    name, options : registry name and the options applied (sorted).
    boxes : the score card in card order.
    upper_bonus_tiers : ``((threshold, bonus), ...)``, thresholds and bonuses rising: an
        upper total of at least ``threshold`` earns ``bonus`` in all (the highest tier
        reached counts). ``()`` for none. Default: one tier built from the two fields below.
    upper_bonus_threshold, upper_bonus : the last tier (e.g. 63 and 35): the upper total
        beyond which the bonus no longer changes, and the largest bonus; ``upper_bonus=0``
        disables it. Filled in from ``upper_bonus_tiers`` when that is given.
    five_box : name of the five-of-a-kind box (Yahtzee, Yacht, Yatzy) when it pays a
        fixed score; None when there is none (or it pays by the dice, as in Kismet).
    five_bonus : points for each further five of a kind while ``five_box`` holds its
        full value (Yahtzee bonus, 100); 0 for none.
    joker : how an extra five of a kind may be placed (see docs/rules.md).
    fill_order : ``"any"`` or ``"in-order"`` (boxes filled top to bottom).
    columns : per-column fill orders (Yamb); every box in exactly one column, and
        ``fill_order`` must then be ``"any"``. ``()``: the card is one free column.
    card_score : ``f(box_scores (N, B)) -> (N,)``, the score of finished cards when it is
        not the sum of boxes and bonuses (Yamb).
    card_points : ``f(box_scores (N, B)) -> (N,)``, points of finished cards reported
        beside the score (Balut).
    card_score_range, card_points_range : the least and greatest values those functions
        can give (they size the result histograms; required with the functions).
    banked_throws : throws a turn does not use are saved for later turns (Maxi Yatzy).
    house_toml : the text of the house-rules file the rule set was built from (so that
        worker processes can rebuild it), None for the registry's rule sets.
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
    upper_bonus_tiers: tuple[tuple[int, int], ...] | None = None
    columns: tuple[Column, ...] = ()
    card_score: CardFunction | None = field(default=None, repr=False)
    card_points: CardFunction | None = field(default=None, repr=False)
    card_score_range: tuple[int, int] | None = None
    card_points_range: tuple[int, int] | None = None
    banked_throws: bool = False
    house_toml: str | None = field(default=None, repr=False)

    def __post_init__(self):
        tiers = self.upper_bonus_tiers
        if tiers is None:
            tiers = ((self.upper_bonus_threshold, self.upper_bonus),) if self.upper_bonus else ()
        tiers = tuple((int(t), int(b)) for t, b in tiers)
        for (t0, b0), (t1, b1) in zip(tiers, tiers[1:]):
            if not (t1 > t0 and b1 > b0):
                raise ValueError(f"upper bonus tiers must rise in threshold and bonus, got {tiers}")
        if any(b <= 0 or t <= 0 for t, b in tiers):
            raise ValueError(f"upper bonus tiers need positive thresholds and bonuses, got {tiers}")
        object.__setattr__(self, "upper_bonus_tiers", tiers)
        if tiers:
            object.__setattr__(self, "upper_bonus_threshold", tiers[-1][0])
            object.__setattr__(self, "upper_bonus", tiers[-1][1])
        else:
            object.__setattr__(self, "upper_bonus", 0)
        for f, r in (("card_score", self.card_score_range), ("card_points", self.card_points_range)):
            if getattr(self, f) is not None and (r is None or len(r) != 2 or r[0] > r[1]):
                raise ValueError(f"{f} needs {f}_range = (least, greatest)")
        if self.joker not in JOKER_POLICIES:
            raise ValueError(f"unknown joker policy {self.joker!r}; valid: {', '.join(JOKER_POLICIES)}")
        if self.fill_order not in FILL_ORDERS:
            raise ValueError(f"unknown fill order {self.fill_order!r}; valid: {', '.join(FILL_ORDERS)}")
        if self.columns:
            if self.fill_order != "any":
                raise ValueError("a card with columns orders each column; fill_order must be 'any'")
            names = [n for c in self.columns for n in c.boxes]
            if sorted(names) != sorted(b.name for b in self.boxes):
                raise ValueError("every box must be in exactly one column")
            for c in self.columns:
                if c.order not in COLUMN_ORDERS:
                    raise ValueError(f"unknown column order {c.order!r}; valid: {', '.join(COLUMN_ORDERS)}")

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
        key = _box_key(name)
        if key in self.box_names:
            return self.box_names.index(key)
        labels = [_box_key(b.label) for b in self.boxes]
        if labels.count(key) == 1:   # a label as printed on the card ("Große Straße")
            return labels.index(key)
        raise ValueError(f"unknown box {name!r} for {self.key}; valid boxes: {', '.join(self.box_names)}")

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
        """(R, B) int16: the points of every roll in every box, as each box scores it.

        Card-dependent rules come on top in :meth:`turn_options`: joker values, and a
        box that needs the five box (Generala doble) paying 0 until that holds a score.
        """
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

    def fingerprint_extras(self) -> dict:
        """What a classic fingerprint (key, boxes, bonus, joker, score table) misses.

        Empty for rule sets without the family's extras, so existing cache
        fingerprints do not change; otherwise JSON-able data (the bonus tiers, the
        score tables of every throw, boxes enabled by the five box, column orders,
        the final-card functions and banked throws) for :func:`~yahtzee_sim.exact.solver.rules_fingerprint`.

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("yahtzee").fingerprint_extras()
        {}
        >>> get_rules("kismet").fingerprint_extras()
        {'tiers': [[63, 35], [71, 55], [78, 75]]}
        """
        import hashlib

        out: dict = {}
        if len(self.upper_bonus_tiers) > 1:
            out["tiers"] = [list(t) for t in self.upper_bonus_tiers]
        if self.roll_dependent:
            out["by_throw"] = hashlib.sha256(np.ascontiguousarray(self.score_tables).tobytes()).hexdigest()
        if self._needs_five_box.size:
            out["needs_five_box"] = self._needs_five_box.tolist()
        if self.columns:
            out["columns"] = [[c.order, list(c.boxes)] for c in self.columns]
        for name in ("card_score", "card_points"):
            f = getattr(self, name)
            if f is not None:
                out[name] = f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', repr(f))}"
        if self.banked_throws:
            out["banked_throws"] = True
        return out

    @functools.cached_property
    def five_face(self) -> np.ndarray:
        """(R,) face of a five-of-a-kind roll, 0 for other rolls."""
        counts = self.dice.roll_counts
        is_five = counts.max(axis=1) == self.n_dice
        out = np.where(is_five, counts.argmax(axis=1) + 1, 0).astype(np.int8)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def _needs_five_box(self) -> np.ndarray:
        return np.flatnonzero([b.needs_five_box for b in self.boxes])

    def fills_five_box(self, boxes: np.ndarray, points: np.ndarray) -> np.ndarray:
        """(N,) bool: does writing ``points`` in ``boxes`` fill the five box with a score?

        Any non-zero score counts (a served Generala's 60 as well as 50).

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("generala").fills_five_box(np.array([9, 9, 2]), np.array([60, 0, 60])).tolist()
        [True, False, False]
        """
        if self.five_box is None:
            return np.zeros(np.shape(boxes), dtype=bool)
        return (np.asarray(boxes) == self.five_box_index) & (np.asarray(points) > 0)

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
    def legal_boxes(self, filled: np.ndarray, announced: np.ndarray | None = None) -> np.ndarray:
        """(N, B) boxes a turn may end in, before joker restrictions.

        ``announced`` (N,) is the box each game announced this turn (-1 for none): an
        announce column's box is legal only when announced, and an announcement
        leaves no other choice.

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yacht", ["fill-in-order"])
        >>> filled = np.zeros((1, r.n_boxes), bool); filled[0, :2] = True
        >>> np.flatnonzero(r.legal_boxes(filled)[0]).tolist()
        [2]
        """
        filled = np.asarray(filled, dtype=bool)
        open_ = ~filled
        if self.fill_order == "in-order":
            return _first_open(open_)
        if not self.columns:
            return open_
        legal = np.zeros_like(open_)
        for cols, order in self._column_indices:
            sub = open_[..., cols]
            if order == "down":
                sub = _first_open(sub)
            elif order == "up":
                sub = _first_open(sub[..., ::-1])[..., ::-1]
            elif order == "announce":
                sub = np.zeros_like(sub)
            legal[..., cols] = sub
        if announced is not None:
            announced = np.asarray(announced, dtype=np.intp)
            made = announced >= 0
            if made.any():
                rows = np.flatnonzero(made)
                if not self.is_announce[announced[rows]].all() or filled[rows, announced[rows]].any():
                    raise ValueError("an announcement must name an open box of an announce column")
                legal[rows] = False
                legal[rows, announced[rows]] = True
        return legal

    @functools.cached_property
    def _column_indices(self) -> tuple[tuple[np.ndarray, str], ...]:
        return tuple((np.array([self.box_names.index(n) for n in c.boxes]), c.order) for c in self.columns)

    @functools.cached_property
    def is_announce(self) -> np.ndarray:
        """(B,) bool, boxes of an announce column (filled only when announced)."""
        out = np.zeros(self.n_boxes, dtype=bool)
        for cols, order in self._column_indices:
            out[cols] = order == "announce"
        out.setflags(write=False)
        return out

    @property
    def announces(self) -> bool:
        """Does the card have an announce column (a decision after the first throw)?"""
        return bool(self.is_announce.any())

    def turn_options(
        self, filled: np.ndarray, five_box_full: np.ndarray, rolls: np.ndarray, *, throws=None,
        announced=None, column_major: bool = False,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where each game may put its final roll, what each box pays, and the bonus.

        Parameters
        ----------
        filled : (N, B) bool, boxes already used.
        five_box_full : (N,) bool, the five-of-a-kind box holds its full value (50).
        rolls : (N,) roll indices of the final dice.
        throws : (N,) throws (1..n_rolls) that made them; only used when a box is
            ``by_throw`` (default: every throw was made).
        announced : (N,) box announced this turn, -1 for none (see :meth:`legal_boxes`).
        column_major : store ``scores`` box by box (a Fortran-ordered (N, B) array: each
            box's column contiguous, what the simulator's per-box work wants); the
            values are the same.

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
        rolls = np.asarray(rolls).astype(np.intp, copy=False)
        five_box_full = np.asarray(five_box_full, dtype=bool)
        legal = self.legal_boxes(filled, announced)
        if throws is not None and self.roll_dependent:
            rolls_made = (np.asarray(throws, dtype=np.intp) - 1) * self.dice.n_rolls + rolls
            if column_major:
                scores = np.take(self._score_tables_by_box, rolls_made, axis=1).T
            else:
                scores = np.take(self.score_tables.reshape(-1, self.n_boxes), rolls_made, axis=0)
        elif column_major:   # one gather per box, from the rows of the box-major table
            scores = np.take(self._score_table_by_box, rolls, axis=1).T
        else:
            scores = np.take(self.score_table, rolls, axis=0)
        if self._needs_five_box.size:   # Generala doble: pays only after a Generala
            cols = self._needs_five_box
            scores[:, cols] = np.where(five_box_full[:, None], scores[:, cols], 0)
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

        With several tiers, the gain is the bonus of the tier reached minus the one
        already held (Kismet: from 66, already worth 35, to 78 gains 75 - 35 = 40).

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yahtzee")
        >>> s = np.zeros((1, 13), np.int16); s[0, 5] = 18
        >>> int(r.upper_bonus_gain(np.array([50]), s)[0, 5])
        35
        >>> k = get_rules("kismet")
        >>> s = np.zeros((2, 15), np.int16); s[:, 5] = 12
        >>> k.upper_bonus_gain(np.array([60, 66]), s)[:, 5].tolist()   # to 72: 55; to 78: 75 - 35
        [55, 40]
        """
        scores = np.asarray(scores)
        out = np.zeros_like(scores, dtype=np.int16)
        if self.upper_bonus:
            up = self._upper_columns
            out[:, up] = self._upper_gain(np.asarray(upper_total), scores[:, up])
        return out

    def turn_gain(self, upper_total: np.ndarray, scores: np.ndarray, five_bonus: np.ndarray) -> np.ndarray:
        """(N, B) int16 points gained now in each box (``TurnOptions.gain``): ``scores`` plus
        :meth:`upper_bonus_gain` plus the five-of-a-kind bonus ``five_bonus`` (N,).

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yahtzee")
        >>> s = np.zeros((1, 13), np.int16); s[0, 5] = 18
        >>> r.turn_gain(np.array([50]), s, np.array([100], np.int16))[0, [0, 5]].tolist()
        [100, 153]
        """
        scores = np.asarray(scores)
        gain = scores.astype(np.int16, order="K", copy=True)
        if self.upper_bonus:
            up = self._upper_columns
            gain[:, up] += self._upper_gain(np.asarray(upper_total), scores[:, up])
        five_bonus = np.asarray(five_bonus)
        if five_bonus.any():
            gain += five_bonus.astype(np.int16)[:, None]
        return gain

    def _upper_gain(self, upper_total: np.ndarray, upper_scores: np.ndarray) -> np.ndarray:
        """(N, U) int16 bonus gained by writing ``upper_scores`` (the upper columns) now."""
        if len(self.upper_bonus_tiers) == 1:   # the classic bonus: crossing the threshold
            thr = self.upper_bonus_threshold
            need = np.where(upper_total < thr, thr - upper_total, np.iinfo(np.int16).max).astype(np.int16)
            return np.multiply(upper_scores >= need[:, None], np.int16(self.upper_bonus), dtype=np.int16)
        after = upper_total[:, None] + upper_scores
        return (self._tier_bonus(after) - self._tier_bonus(upper_total)[:, None]).astype(np.int16)

    @functools.cached_property
    def _upper_columns(self):
        """The upper boxes as a slice when they are adjacent on the card (a view, no copy)."""
        cols = np.flatnonzero(self.is_upper)
        if len(cols) and (np.diff(cols) == 1).all():
            return slice(int(cols[0]), int(cols[-1]) + 1)
        return cols

    @functools.cached_property
    def _score_table_by_box(self) -> np.ndarray:
        """(B, R) ``score_table`` box-major."""
        return np.ascontiguousarray(self.score_table.T)

    @functools.cached_property
    def _score_tables_by_box(self) -> np.ndarray:
        """(B, n_rolls * R) ``score_tables`` box-major, throw-major within each box."""
        return np.ascontiguousarray(self.score_tables.reshape(-1, self.n_boxes).T)

    def _tier_bonus(self, upper_total: np.ndarray) -> np.ndarray:
        """Bonus held at each upper total: the highest tier reached."""
        out = np.zeros(np.shape(upper_total), dtype=np.int16)
        for threshold, bonus in self.upper_bonus_tiers:
            out = np.where(upper_total >= threshold, np.int16(bonus), out)
        return out

    def final_bonus(self, upper_total: np.ndarray) -> np.ndarray:
        """Upper bonus of finished cards given their upper totals.

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("kismet").final_bonus(np.array([62, 63, 70, 71, 77, 78, 105])).tolist()
        [0, 35, 35, 55, 55, 75, 75]
        """
        upper_total = np.asarray(upper_total)
        if not self.upper_bonus:
            return np.zeros(upper_total.shape, dtype=np.int16)
        if len(self.upper_bonus_tiers) == 1:
            return np.where(upper_total >= self.upper_bonus_threshold, self.upper_bonus, 0)
        return self._tier_bonus(upper_total)

    # -- finished cards ---------------------------------------------------------
    def card_total(self, box_scores: np.ndarray, upper_total: np.ndarray,
                   five_bonus_count: np.ndarray) -> np.ndarray:
        """(N,) int32 final score of finished cards.

        The boxes, the upper bonus and the five-of-a-kind bonuses, unless the rule set
        scores the card as a whole (:attr:`card_score`, Yamb).

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("yahtzee")
        >>> int(r.card_total(np.full((1, 13), 5), np.array([30]), np.array([1]))[0])
        165
        """
        box_scores = np.asarray(box_scores)
        if self.card_score is not None:
            return np.asarray(self.card_score(box_scores), dtype=np.int32)
        return (
            box_scores.sum(axis=1, dtype=np.int32)
            + self.final_bonus(upper_total)
            + np.asarray(five_bonus_count).astype(np.int32) * self.five_bonus
        )

    @property
    def has_points(self) -> bool:
        """Does the rule set award points for the finished card (Balut)?"""
        return self.card_points is not None

    def points(self, box_scores: np.ndarray) -> np.ndarray:
        """(N,) int32 points of finished cards (Balut); ValueError for rule sets without points.

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("yahtzee").points(np.zeros((1, 13)))
        Traceback (most recent call last):
        ...
        ValueError: yahtzee has no points beside its score (only balut does)
        """
        if self.card_points is None:
            raise ValueError(f"{self.key} has no points beside its score (only balut does)")
        return np.asarray(self.card_points(np.asarray(box_scores)), dtype=np.int32)

    # -- single-roll convenience ------------------------------------------------
    def score_dice(self, dice) -> dict[str, int]:
        """Points of one roll in each box on a fresh card.

        >>> from yahtzee_sim.rules import get_rules
        >>> get_rules("yacht").score_dice([3, 3, 3, 5, 5])["full_house"]
        19
        >>> get_rules("generala").score_dice([4, 4, 4, 4, 4])["generala_doble"]   # no Generala yet
        0
        """
        roll = self.dice.roll_index_of(dice)
        return {name: int(v) for name, v in zip(self.box_names, self.fresh_card_table[roll])}

    @functools.cached_property
    def fresh_card_table(self) -> np.ndarray:
        """(R, B) ``score_table`` as the rules pay on a fresh card: a box that pays only while
        the five-of-a-kind box holds a score (Generala doble) pays 0 there.

        >>> from yahtzee_sim.rules import get_rules
        >>> r = get_rules("generala")
        >>> int(r.score_table[:, r.box_index("generala_doble")].max()), int(r.fresh_card_table.max(axis=0)[-1])
        (100, 0)
        """
        out = np.array(self.score_table)
        out[:, self._needs_five_box] = 0
        out.setflags(write=False)
        return out


def _first_open(open_: np.ndarray) -> np.ndarray:
    """Only the first open box of each row (none in a full row)."""
    first = np.argmax(open_, axis=-1)
    only = np.zeros_like(open_)
    np.put_along_axis(only, first[..., None], True, axis=-1)
    return only & open_


def _box_key(name: str) -> str:
    key = str(name).strip().lower()
    for a, b in (("ß", "ss"), ("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("á", "a"), ("ó", "o"), ("é", "e")):
        key = key.replace(a, b)
    return key.replace("-", "_").replace(" ", "_").replace(".", "_").replace("(", "").replace(")", "")
