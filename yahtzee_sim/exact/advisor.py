"""The advisor: every legal choice of a position with its exact expected score.

About 600 lines: most of it checks a position a user typed (dice, rolls left, card,
upper total, five-of-a-kind box) so that an impossible one is refused in one line.

This is the "hint" button of the source 001 app, made exact. A position is the
dice showing, the rolls left this turn and the score card (the filled boxes,
the upper-section total, the value in the five-of-a-kind box). While rolls are
left the choices are the distinct keeps of the dice; with no roll left they are
the legal boxes (joker and fill-order rules applied by
:meth:`RuleSet.turn_options`, exactly as in the simulator).

Each choice is valued by the **expected remaining score**: the points this turn
(bonuses included) plus the expected points of the later turns, when every
later decision is optimal. The points already on the card are not known to the
advisor and are not included; the upper total only decides the upper bonus.
The later turns are valued by the exact solver (:func:`~yahtzee_sim.exact.solver.solve`,
disk-cached), the rest of this turn by the keep lattice of
:mod:`yahtzee_sim.exact.widget`.

>>> a = advise("yahtzee", [6, 6, 6, 6, 2], rolls_left=2)
>>> a.to_frame().loc[0, "keep"]          # four sixes on a fresh card: go for the Yahtzee
'6 6 6 6 _'
>>> bool(a.to_frame()["loss"].min() == 0)
True
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

from ..rules import RuleSet, get_rules
from .policy import achievable_upper_totals
from .widget import best_subkeep, keep_expectations
from ..validate import whole_number

__all__ = ["advise", "Advice", "advise_batch", "BatchAdvice", "parse_filled"]

EXPLANATION = ("expected = expected remaining score: points from this decision on (this turn, "
               "bonuses included, plus later turns, all later decisions optimal); "
               "points already on the card are not included")


@dataclass(frozen=True, eq=False)
class Advice:
    """Every legal choice of one position, best first.

    Attributes
    ----------
    rules : the rule set; dice : the five dice (sorted); rolls_left : 0..n_rolls - 1.
    filled : names of the filled boxes, in card order.
    upper : upper-section total used for the bonus; upper_given : False when it
        was assumed (see ``notes``).
    five_box_full : the five-of-a-kind box holds points (True) or 0 (False); None if it
        is open or what it holds does not matter (the name of the game state's field; the
        old ``yahtzee_box``, its points, is still read, deprecated).
    kind : ``"keep"`` (rolls left) or ``"box"`` (final roll).
    notes : assumptions and remarks, one line each.
    """

    rules: RuleSet
    dice: tuple
    rolls_left: int
    filled: tuple
    upper: int
    upper_given: bool
    five_box_full: bool | None
    kind: str
    notes: tuple
    columns: dict = field(repr=False)   # column name -> values, best choice first

    @property
    def yahtzee_box(self) -> int | None:
        """The five-of-a-kind box's points (deprecated: :attr:`five_box_full` says it)."""
        warnings.warn("Advice.yahtzee_box is now Advice.five_box_full (True: the box holds points)",
                      DeprecationWarning, stacklevel=2)
        return self._five_points()

    def _five_points(self) -> int | None:
        return None if self.five_box_full is None else (self.rules.five_box_points if self.five_box_full else 0)

    @property
    def table(self) -> "pd.DataFrame":
        """The choices as a DataFrame, best first (see :meth:`to_frame`)."""
        import pandas as pd

        return pd.DataFrame({c: np.asarray(v) for c, v in self.columns.items()})

    def _rows(self) -> list[dict]:
        names = list(self.columns)
        return [dict(zip(names, (v.item() if hasattr(v, "item") else v for v in row)))
                for row in zip(*self.columns.values())]

    def to_frame(self) -> "pd.DataFrame":
        """The choices, best first (a copy).

        Keeps: ``keep`` (the dice held, ``_`` for each die rerolled), ``reroll``
        (the dice thrown again), ``held``, ``expected`` and ``loss`` (how much
        less than the best choice). Boxes: ``box``, ``label``, ``points``,
        ``bonus`` (upper bonus or Yahtzee bonus earned now), ``later`` (expected
        points of the later turns), ``expected`` = points + bonus + later, ``loss``.

        >>> f = advise("yacht", [1, 1, 1, 1, 1], rolls_left=0).to_frame()
        >>> f.loc[0, "box"], int(f.loc[0, "points"])
        ('yacht', 50)
        """
        return self.table

    @property
    def best(self) -> dict:
        """The best choice as a dict (the first row of :meth:`to_frame`).

        >>> advise("yacht", [2, 3, 4, 5, 6], rolls_left=0).best["box"]
        'b_straight'
        """
        return self._rows()[0]

    def to_dict(self) -> dict:
        """JSON-friendly description of the position and every choice.

        >>> sorted(advise("yacht", "12345", rolls_left=1).to_dict())[:4]
        ['choices', 'dice', 'explanation', 'filled']
        """
        return {"rules": self.rules.key, "options": list(self.rules.options),
                "dice": list(self.dice), "rolls_left": self.rolls_left,
                "filled": list(self.filled), "upper": self.upper, "upper_given": self.upper_given,
                "five_box_full": self.five_box_full,
                "yahtzee_box": self._five_points(),     # the old name, its points: kept for scripts
                "kind": self.kind, "notes": list(self.notes),
                "explanation": EXPLANATION,
                "choices": self._rows()}

    def to_text(self) -> str:
        """The table with a header saying what the numbers mean.

        >>> print(advise("yacht", "66666", rolls_left=0).to_text().splitlines()[0])
        Yacht (Japanese) (yacht): dice 6 6 6 6 6, no rolls left: choose a box
        """
        r = self.rules
        left = {0: "no rolls left: choose a box", 1: "1 roll left: choose the dice to keep"}
        head = [f"{r.title} ({r.key}): dice {' '.join(map(str, self.dice))}, "
                f"{left.get(self.rolls_left, f'{self.rolls_left} rolls left: choose the dice to keep')}",
                f"filled: {', '.join(self.filled) or 'none'}; upper total {self.upper}"
                + ("" if self.upper_given else " (assumed)")
                + ("" if self.five_box_full is None else f"; {r.five_box} box {self._five_points()}"),
                EXPLANATION]
        head += [f"note: {n}" for n in self.notes]
        cells = {c: [f"{x:.4f}" if c in ("expected", "loss", "later") else str(x) for x in v]
                 for c, v in self.columns.items()}
        text = ("keep", "reroll", "box", "label")                # left-aligned; numbers right
        width = {c: max([len(c)] + [len(x) for x in v]) for c, v in cells.items()}

        def line(values):
            return "  ".join(f"{x:<{width[c]}}" if c in text else f"{x:>{width[c]}}"
                             for c, x in zip(cells, values)).rstrip()

        body = [line(list(cells))] + [line(row) for row in zip(*cells.values())]
        return "\n".join(head + body)


# -- validation: one clear line per problem --------------------------------------------

def parse_filled(rules: RuleSet, filled) -> np.ndarray:
    """(B,) bool of the filled boxes from names (a list, or one comma-separated string).

    >>> from yahtzee_sim.rules import get_rules
    >>> np.flatnonzero(parse_filled(get_rules("yahtzee"), "ones, twos")).tolist()
    [0, 1]
    >>> parse_filled(get_rules("yacht"), ["ones", "sixs"])
    Traceback (most recent call last):
    ...
    ValueError: unknown box 'sixs' for yacht; valid boxes: ones, twos, threes, fours, fives, sixes, choice, four_dice, full_house, s_straight, b_straight, yacht
    """
    if filled is None:
        filled = ()
    if isinstance(filled, str):
        filled = [p for p in filled.split(",") if p.strip()]
    names = list(filled)
    mask = np.zeros(rules.n_boxes, dtype=bool)
    for name in names:
        if not isinstance(name, str):
            raise ValueError(f"filled boxes are given by name, got {name!r}; "
                             f"valid boxes: {', '.join(rules.box_names)}")
        b = rules.box_index(name)
        if mask[b]:
            raise ValueError(f"box {rules.box_names[b]!r} is listed twice in filled")
        mask[b] = True
    return mask


def _check_dice(rules: RuleSet, dice) -> tuple:
    n, f = rules.n_dice, rules.n_faces
    problem = f"dice must be {n} values in 1..{f} (e.g. 13356), got {dice!r}"
    if isinstance(dice, str):
        text = dice.replace(",", " ").split()
        dice_list = text if len(text) > 1 else list(dice.strip())
        try:
            values = [int(x) for x in dice_list]
        except ValueError:
            raise ValueError(problem) from None
    else:
        try:
            values = list(dice)
        except TypeError:
            raise ValueError(problem) from None
    if len(values) != n or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                   and 1 <= v <= f for v in values):
        raise ValueError(problem)
    return tuple(sorted(int(v) for v in values))


def _check_rolls_left(rules: RuleSet, rolls_left) -> int:
    top = rules.n_rolls - 1
    if isinstance(rolls_left, bool) or not isinstance(rolls_left, (int, np.integer)) \
            or not 0 <= rolls_left <= top:
        choices = ", ".join(map(str, range(top))) + f" or {top}" if top else "0"
        raise ValueError(f"rolls left must be {choices} (rolls still to come this turn), got {rolls_left!r}")
    return int(rolls_left)


def _check_card(rules: RuleSet, mask: np.ndarray) -> None:
    from .space import state_space

    n = int(mask.sum())
    if n == rules.n_boxes:
        raise ValueError("every box is filled: the game is over, there is nothing to advise")
    bits = int(mask.astype(np.int64) @ (np.int64(1) << np.arange(rules.n_boxes, dtype=np.int64)))
    if bits in set(state_space(rules).level_masks[n].tolist()):
        return
    if rules.fill_order == "in-order":
        want = ", ".join(rules.box_names[:n])
        got = ", ".join(np.asarray(rules.box_names)[mask])
        raise ValueError(f"{rules.key} fills boxes top to bottom, so {n} filled boxes must be "
                         f"{want}; got {got}")
    raise ValueError(f"no game of {rules.key} can have exactly these boxes filled")  # pragma: no cover


def _upper_names(rules: RuleSet, mask: np.ndarray) -> str:
    return ", ".join(rules.box_names[b] for b in np.flatnonzero(mask & rules.is_upper))


def _check_upper(rules: RuleSet, mask: np.ndarray, upper) -> tuple[int, bool, list]:
    """The upper total to use, whether it was given, and notes."""
    totals = achievable_upper_totals(rules, mask)
    has_upper = bool((mask & rules.is_upper).any())
    notes = []
    if upper is None:
        if not has_upper:
            return 0, True, notes
        par = min(3, rules.n_dice)
        value = int(par * rules.upper_face[mask & rules.is_upper].astype(np.int64).sum())
        if rules.upper_bonus:
            notes.append(f"upper total not given: assumed {value} ({par} of each filled upper "
                         f"face); give it for the exact bonus chances")
        return value, False, notes
    upper = whole_number(upper, "upper total", low=0)
    upper = int(upper)
    if upper not in set(totals.tolist()):
        if not has_upper:
            raise ValueError(f"upper total {upper} is impossible: no upper box is filled, so it is 0")
        names = _upper_names(rules, mask)
        top = int(totals.max())
        if upper > top:
            raise ValueError(f"upper total {upper} is impossible: the filled upper boxes "
                             f"({names}) hold at most {top}")
        below = int(totals[totals < upper].max())
        above = int(totals[totals > upper].min())
        raise ValueError(f"upper total {upper} is impossible: each filled upper box ({names}) "
                         f"holds 0..{rules.n_dice} times its face; nearest possible totals "
                         f"{below} and {above}")
    if rules.upper_bonus and upper >= rules.upper_bonus_threshold:
        notes.append(f"upper bonus already earned ({rules.upper_bonus} points on the card, "
                     f"not counted here)")
    return upper, True, notes


def _check_five(rules: RuleSet, mask: np.ndarray, five_box_full, flag_matters: bool, points=None):
    """Whether the five-of-a-kind box holds points: as given (None when it is open, or
    not given where it does not matter), and as the solver's state reads it. ``points``:
    the deprecated ``yahtzee_box``, the box's points, checked against what it can hold."""
    given = five_box_full is not None or points is not None
    if rules.five_box is None:
        if given:
            raise ValueError(f"{rules.key} has no five-of-a-kind box; leave five_box_full out")
        return None, False
    five = rules.five_box
    full = rules.five_box_points
    held = sorted({int(v) for v in np.unique(rules.score_tables[:, :, rules.five_box_index])} | {0})
    points_text = ", ".join(map(str, held[::-1][:-1]))     # what a box holding points holds
    held_text = points_text + " or 0"
    if rules.five_bonus:
        why = f"with {full} each further five of a kind earns {rules.five_bonus}"
    else:
        why = "what it holds decides what other boxes pay"
    if not mask[rules.five_box_index]:
        if given:
            raise ValueError(f"a value for the {five} box was given but the {five} box is not "
                             f"filled; add {five} to the filled boxes or leave five_box_full out")
        return None, False
    if points is not None:
        if isinstance(points, bool) or not isinstance(points, (int, np.integer)) or int(points) not in held:
            raise ValueError(f"the {five} box holds {held_text}, got {points!r}")
        five_box_full = int(points) > 0
    if five_box_full is None:
        if flag_matters:
            raise ValueError(f"the {five} box is filled: say whether it holds points, {points_text} "
                             f"(five_box_full=True, --five-box-full) or 0 (five_box_full=False, "
                             f"--no-five-box-full); {why}")
        return None, False
    if not isinstance(five_box_full, (bool, np.bool_)):
        raise ValueError(f"five_box_full must be True (the {five} box holds points, {points_text}) "
                         f"or False (it holds 0), got {five_box_full!r}")
    return bool(five_box_full), bool(five_box_full)


def _check_served(rules: RuleSet, rolls_left: int, served, notes: list) -> bool:
    """Are the dice showing the first throw's (only asked where served scores differ)?"""
    first = rolls_left == rules.n_rolls - 1
    if not rules.roll_dependent:
        if served:
            raise ValueError(f"{rules.key} pays the same for served dice; leave 'served' out")
        return False
    if served is None:
        if not first:
            notes.append("dice assumed made by a later throw than the first (not served); "
                         "say served (--served) if they are the first throw's, held since")
        return first
    if not isinstance(served, (bool, np.bool_)):
        raise ValueError(f"served must be True or False, got {served!r}")
    if first and not served:
        raise ValueError("with every roll still to come the dice are the first throw's: served")
    return bool(served)


# -- the advice ----------------------------------------------------------------------

def _keep_text(counts: np.ndarray, n_dice: int) -> str:
    held = np.repeat(np.arange(1, len(counts) + 1), counts).tolist()
    return " ".join([str(v) for v in held] + ["_"] * (n_dice - len(held)))


def advise(rules: str | RuleSet, dice, *, rolls_left: int, filled=(), upper: int | None = None,
           five_box_full: bool | None = None, options=(), solution=None,
           served: bool | None = None, yahtzee_box: int | None = None) -> Advice:
    """Every legal choice of a position, valued exactly, best first.

    Parameters
    ----------
    rules, options : a rule-set name (or RuleSet) and its options.
    dice : the dice showing, e.g. ``[1, 3, 3, 5, 6]`` or ``"13356"``.
    rolls_left : rolls still to come this turn (0 .. n_rolls - 1); 0 = choose a box.
    filled : names of the filled boxes (list or comma-separated string).
    upper : the upper-section total so far; when omitted with upper boxes filled,
        three of each filled face is assumed (said in ``notes``).
    five_box_full : the five-of-a-kind box holds points (True) or 0 (False), as
        :class:`~yahtzee_sim.state.GameState` and :func:`advise_batch` name it; needed
        when that box is filled and the rule set pays bonuses for further ones.
    yahtzee_box : the old name (deprecated): the box's points, checked against what it
        can hold, then read as ``five_box_full = points > 0``.
    solution : a solved :class:`~yahtzee_sim.exact.solver.Solution` to reuse
        (default: :func:`~yahtzee_sim.exact.solver.solve`, disk-cached).
    served : only for rule sets that pay more for dice "served" on the first throw
        (Generala): the dice showing are the first throw's, held since. Default: so
        with every roll still to come, else not (said in ``notes``).

    >>> a = advise("yahtzee", "13356", rolls_left=2, filled="ones,twos", upper=5)
    >>> a.kind, a.to_frame().columns.tolist()
    ('keep', ['keep', 'reroll', 'held', 'expected', 'loss'])
    >>> advise("yahtzee", "13356", rolls_left=2, filled="ones", upper=7)
    Traceback (most recent call last):
    ...
    ValueError: upper total 7 is impossible: the filled upper boxes (ones) hold at most 5
    """
    from .solver import rules_fingerprint, solve
    from .space import state_space

    rules = get_rules(rules, options)
    dice = _check_dice(rules, dice)
    rolls_left = _check_rolls_left(rules, rolls_left)
    mask = parse_filled(rules, filled)
    _check_card(rules, mask)
    u, upper_given, notes = _check_upper(rules, mask, upper)
    sp = state_space(rules)
    if yahtzee_box is not None:     # the old name, the box's points: scripts keep working
        if five_box_full is not None:
            raise ValueError("give five_box_full (--five-box-full) or its old name yahtzee_box "
                             "(--yahtzee-box), not both")
        warnings.warn("advise(yahtzee_box=...) is now advise(five_box_full=...): True for a box holding "
                      "points, False for 0", DeprecationWarning, stacklevel=2)
    five_value, full = _check_five(rules, mask, five_box_full, sp.n_flag == 2, points=yahtzee_box)
    served = _check_served(rules, rolls_left, served, notes)
    if solution is None:
        solution = solve(rules)
    elif rules_fingerprint(solution.rules) != rules_fingerprint(rules):
        raise ValueError(f"the solution is for {solution.rules.key}, not for {rules.key}")
    values = np.ascontiguousarray(solution.values).reshape(-1)

    d = rules.dice
    roll = d.roll_index_of(list(dice))
    bits = int(mask.astype(np.int64) @ (np.int64(1) << np.arange(rules.n_boxes, dtype=np.int64)))
    flag = int(full) if sp.n_flag == 2 else 0
    u_cap = min(u, sp.cap)
    # every final roll (all of them while rolls are left, else just this one)
    rolls = np.arange(d.n_rolls) if rolls_left else np.array([roll])

    def final(rolls, throw):
        """Legal boxes, points, gains, later values and worth (n, B) of final rolls."""
        n = len(rolls)
        thr = None if throw is None else np.full(n, throw)
        legal, scores, bonus = rules.turn_options(np.broadcast_to(mask, (n, rules.n_boxes)),
                                                  np.full(n, full), rolls, throws=thr)
        gain = scores + rules.upper_bonus_gain(np.full(n, u), scores) + bonus[:, None]
        nxt = sp.next_flat(np.full(n, bits), np.full(n, u_cap), np.full(n, flag), scores)
        later = np.where(legal, values[np.where(legal, nxt, 0)], 0.0)
        return legal, scores, gain, later, np.where(legal, gain + later, -np.inf)

    # dice made by a later throw than the first (every throw when scores do not care)
    legal, scores, gain, later, worth = final(rolls, rules.n_rolls if rules.roll_dependent else None)
    if served and rolls_left == 0:
        legal, scores, gain, later, worth = final(rolls, 1)

    if rolls_left == 0:
        boxes = np.flatnonzero(legal[0])
        labels = {b.name: b.label for b in rules.boxes}
        cols = {
            "box": np.array([rules.box_names[b] for b in boxes], dtype=object),
            "label": np.array([labels[rules.box_names[b]] for b in boxes], dtype=object),
            "points": scores[0, boxes].astype(np.int64),
            "bonus": (gain[0, boxes] - scores[0, boxes]).astype(np.int64),
            "later": later[0, boxes].astype(np.float64),
            "expected": worth[0, boxes].astype(np.float64),
        }
        order = np.argsort(-cols["expected"], kind="stable")
        kind = "box"
    else:
        x = worth.max(axis=1)[:, None]                                 # (R, 1) final rolls
        for j in range(1, rolls_left + 1):
            e = keep_expectations(d, x)                                # (K, 1)
            if j < rolls_left:
                x, _ = best_subkeep(d, e)
        if served:          # holding every served die keeps them served to the end of the turn
            e[d.roll_keep_index[roll], 0] = final(np.array([roll]), 1)[4].max()
        keeps = d.subkeeps[roll, :d.n_subkeeps[roll]].astype(np.intp)
        counts = d.keep_counts[keeps]
        rolled = d.roll_counts[roll][None, :] - counts
        cols = {
            "keep": np.array([_keep_text(c, rules.n_dice) for c in counts], dtype=object),
            "reroll": np.array([" ".join(map(str, np.repeat(np.arange(1, d.n_faces + 1), r))) or "-"
                                for r in rolled], dtype=object),
            "held": d.keep_size[keeps].astype(np.int64),
            "expected": e[keeps, 0].astype(np.float64),
        }
        # ties: hold more dice first (then the order of the dice tables)
        order = np.lexsort((-cols["held"], -cols["expected"]))
        kind = "keep"
    cols = {c: v[order] for c, v in cols.items()}
    cols["loss"] = cols["expected"][0] - cols["expected"]
    for v in cols.values():
        v.setflags(write=False)                   # the advice's own copy: read-only
    return Advice(rules, dice, rolls_left, tuple(np.asarray(rules.box_names)[mask].tolist()),
                  u, upper_given, five_value, kind, tuple(notes), cols)


# -- many positions at once ------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class BatchAdvice:
    """Option values of N positions (see :func:`advise_batch`); arrays, batch axis first.

    choices : (N, C) int16, the options of each position: keep indices (dice tables) of
        the dice showing while rolls are left (largest keep first), else box indices
        (card order); -1 pads.
    values : (N, C) expected remaining score of each choice (points, bonuses and later
        turns, later decisions optimal); NaN for padding and illegal boxes.
    best : (N,) the best choice (a keep or box index); exact ties go to the larger keep
        or the box met first.
    expected : (N,) its expected remaining score.
    """

    rules: RuleSet
    choices: np.ndarray = field(repr=False)
    values: np.ndarray = field(repr=False)
    best: np.ndarray = field(repr=False)
    expected: np.ndarray = field(repr=False)

    def __len__(self) -> int:
        return len(self.best)


def advise_batch(rules: str | RuleSet, rolls, *, rolls_left, filled, upper=0, five_box_full=False,
                 served=None, options=(), solution=None, chunk: int = 2048) -> BatchAdvice:
    """Every option of N positions valued exactly, in one vectorized call.

    The same values as :func:`advise` without the tables and the notes: ``rolls``
    (N,) dice-table roll indices (or (N, n_dice) dice), ``rolls_left`` (N,) or one
    number, ``filled`` (N, B) bool, ``upper`` (N,) upper totals, ``five_box_full``
    (N,) the five-of-a-kind box holds a score (only read where that matters),
    ``served`` (N,) dice still the first throw's (served rule sets only; default:
    with every roll to come). Positions no game can reach are refused.

    >>> import numpy as np
    >>> from yahtzee_sim.rules import get_rules
    >>> r = get_rules("yahtzee"); d = r.dice
    >>> roll = d.roll_index_of([6, 6, 6, 6, 2])
    >>> b = advise_batch(r, [roll, roll], rolls_left=[2, 0], filled=np.zeros((2, 13), bool))
    >>> d.keep_counts[b.best[0]].tolist(), r.box_names[b.best[1]]
    ([0, 0, 0, 0, 0, 4], 'sixes')
    >>> one = advise(r, [6, 6, 6, 6, 2], rolls_left=2)
    >>> bool(abs(b.expected[0] - one.best["expected"]) < 1e-9)
    True
    """
    from .solver import rules_fingerprint, solve
    from .space import state_space, turn_model, turn_values

    rules = get_rules(rules, options)
    sp = state_space(rules)
    d = rules.dice
    rolls = np.asarray(rolls)
    if rolls.ndim == 2:
        if rolls.shape[1] != rules.n_dice:
            raise ValueError(f"dice must have {rules.n_dice} columns, got {rolls.shape[1]}")
        if rolls.size and (rolls.min() < 1 or rolls.max() > rules.n_faces):
            raise ValueError(f"dice show 1..{rules.n_faces}")
        rolls = d.roll_index(rolls)
    rolls = rolls.astype(np.int64).reshape(-1)
    n = len(rolls)
    if n and (rolls.min() < 0 or rolls.max() >= d.n_rolls):
        raise ValueError(f"roll indices must be in 0..{d.n_rolls - 1}")
    left = np.broadcast_to(np.asarray(rolls_left, dtype=np.int64), (n,))
    if n and (left.min() < 0 or left.max() > rules.n_rolls - 1):
        raise ValueError(f"rolls left must be in 0..{rules.n_rolls - 1}")
    filled = np.asarray(filled, dtype=bool)
    if filled.shape != (n, rules.n_boxes):
        raise ValueError(f"filled must be ({n}, {rules.n_boxes}) bool, got shape {filled.shape}")
    if filled.all(axis=1).any():
        raise ValueError("a position has every box filled: the game is over")
    mask, u, flag = sp.index(filled, upper, five_box_full)
    flag = np.where((mask & sp.five_bit) != 0, flag, 0)
    reachable = np.zeros(1 << sp.n_boxes, dtype=bool)
    for masks in sp.level_masks:
        reachable[masks] = True
    canon = sp.canonical_u(mask, u)
    bad = ~reachable[mask] | (canon < 0)
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        raise ValueError(f"position {g} is one no game of {rules.key} can reach "
                         f"(its filled boxes, or upper total {int(u[g])} with them)")
    if served is None:
        served = left == rules.n_rolls - 1
    served = np.broadcast_to(np.asarray(served, dtype=bool), (n,)) & rules.roll_dependent
    if solution is None:
        solution = solve(rules)
    elif rules_fingerprint(solution.rules) != rules_fingerprint(rules):
        raise ValueError(f"the solution is for {solution.rules.key}, not for {rules.key}")
    values = np.ascontiguousarray(solution.values).reshape(-1)

    # each roll's sub-keeps, largest keep first (so argmax breaks exact ties towards them)
    sub = d.subkeeps[:, ::-1].astype(np.int64)
    sub = np.take_along_axis(sub, np.argsort(sub < 0, axis=1, kind="stable"), axis=1)
    width = max(sub.shape[1], rules.n_boxes)
    choices = np.full((n, width), -1, dtype=np.int16)
    out = np.full((n, width), np.nan)

    boxes = np.flatnonzero(left == 0)
    if len(boxes):
        thr = np.where(served[boxes], 1, rules.n_rolls) if rules.roll_dependent else None
        legal, scores, bonus = rules.turn_options(filled[boxes], flag[boxes].astype(bool),
                                                  rolls[boxes], throws=thr)
        gain = scores + rules.upper_bonus_gain(u[boxes], scores) + bonus[:, None]
        nxt = sp.next_flat(mask[boxes], u[boxes], flag[boxes], scores)
        choices[boxes, :rules.n_boxes] = np.arange(rules.n_boxes)
        out[boxes, :rules.n_boxes] = np.where(legal, gain + values[np.where(legal, nxt, 0)], np.nan)

    keeps = np.flatnonzero(left > 0)
    if len(keeps):
        model = turn_model(rules, np.float64)
        key = sp.flat(mask[keeps], canon[keeps], flag[keeps])
        uniq, inv = np.unique(key, return_inverse=True)
        um, uu, uf = uniq // (sp.n_u * sp.n_flag), (uniq // sp.n_flag) % sp.n_u, uniq % sp.n_flag
        sub_pos = model.lat.pos_of_keep[np.maximum(sub, 0)]
        choices[keeps, :sub.shape[1]] = sub[rolls[keeps]]
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(0, len(uniq) + chunk, chunk))
        for i, lo in enumerate(range(0, len(uniq), chunk)):
            hi = min(lo + chunk, len(uniq))
            _, (kv, c) = turn_values(model, values, None, um[lo:hi], uu[lo:hi], uf[lo:hi], plan=True)
            rows = keeps[order[bounds[i]:bounds[i + 1]]]              # positions of these states
            col = inv[order[bounds[i]:bounds[i + 1]]] - lo
            for j in np.unique(left[rows]):
                sel = left[rows] == j
                r, cl = rows[sel], col[sel]
                out[r, :sub.shape[1]] = kv[j][sub_pos[rolls[r]], cl[:, None]] + c[cl, None]
        out[keeps, :sub.shape[1]] = np.where(sub[rolls[keeps]] >= 0, out[keeps, :sub.shape[1]], np.nan)

    pick = np.argmax(np.where(np.isnan(out), -np.inf, out), axis=1)
    best = choices[np.arange(n), pick].astype(np.int64)
    expected = out[np.arange(n), pick]
    for a in (choices, out, best, expected):
        a.setflags(write=False)
    return BatchAdvice(rules, choices, out, best, expected)
