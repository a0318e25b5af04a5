"""Best and worst possible score cards (source 000's extreme scores), computed exactly.

Over 600 lines: the backward induction, the reconstruction of the card that attains it
and the restrictions on moves share the same private move generator.

The player is assumed to choose the dice as well as the moves: every turn picks any
of the final rolls (252 for five dice) and a box that the rules allow for it. The
best (or worst) total is then a backward induction over score-card states in the
max (or min) semiring, the same state space as the optimal solver:

* ``filled``: the mask of filled boxes (solved level by level, all masks of a level
  at once, vectorized with NumPy);
* the upper total, capped at the bonus threshold (63), because nothing else about
  it matters;
* whether the five-of-a-kind box holds its full value (50), which decides the
  Yahtzee bonus (only for rule sets with such a bonus).

Placement, joker values and bonuses come from the rule engine itself
(:meth:`RuleSet.turn_options`, :attr:`RuleSet.score_table`,
:meth:`RuleSet.upper_bonus_gain`), so the extremes obey exactly the rules the
simulator plays. A restriction is a filter on the (roll, box) moves allowed in a
state (see :data:`CONSTRAINTS`); several can be combined. The one exception is
``no-joker-points``: it keeps every move but pays a joker in Full house or a
straight its natural points (0) instead of 25/30/40, which is how "without using
the joker there" still collects the Yahtzee bonus. The attained score card is then
rebuilt forward, turn by turn (ties go to the first box in card order, then the
first roll).

Constraints that concern a feature a rule set does not have (the joker in Yatzy,
the Yahtzee bonus in Yacht) leave the game unchanged; the result's ``notes`` say so.

>>> res = extreme_score("yacht-classic", kind="min")
>>> res.score, len(res.card)
(5, 12)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable, Sequence

import numpy as np

from ..progress import as_progress
from ..rules import RuleSet, get_rules
from .space import needs_flag

if TYPE_CHECKING:  # imported where a table is made: keeps the CLI's start-up fast
    import pandas as pd

__all__ = [
    "CONSTRAINTS", "KINDS", "SOURCE_CLAIMS", "SOURCE_READINGS", "SEED_CLAIMS", "SEED_READINGS", "ExtremeResult", "constraint_notes",
    "extreme_score", "extreme_values", "parse_constraints", "source_claims_table", "seed_claims_table",
]

KINDS = ("max", "min")

CONSTRAINTS: dict[str, str] = {
    "no-joker-points": "a five of a kind used as a joker in Full house or a straight scores "
                       "that box's natural points (0), not the joker's 25/30/40; placement "
                       "and the Yahtzee bonus are unchanged",
    "natural": "Full house and the straights (the boxes with joker values) never take a "
               "five of a kind: those combinations are made only with their own patterns",
    "no-five-bonus": "no five of a kind while the five-of-a-kind box holds its full value "
                     "(so no Yahtzee bonus is ever earned)",
    "no-five-of-a-kind": "no roll is ever a five of a kind",
    "no-zero": "every box scores more than zero",
    "five-only-in-five-box": "a five of a kind may only be scored in the five-of-a-kind box "
                             "(Yahtzee/Yacht/Yatzy), so at most one is ever rolled",
}
"""Restrictions on the (roll, box) moves, by name, with what each one forbids."""

SOURCE_CLAIMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("maximum", "max", ()),
    ("maximum without joker points in Full house and the straights", "max", ("no-joker-points",)),
    ("maximum with every combination made naturally", "max", ("natural",)),
    ("maximum without any Yahtzee bonus", "max", ("no-five-bonus",)),
    ("maximum without ever rolling five of a kind", "max", ("no-five-of-a-kind",)),
    ("minimum", "min", ()),
    ("minimum without five of a kind", "min", ("no-five-of-a-kind",)),
    ("minimum with no box at zero", "min", ("no-zero",)),
)
"""Source 000's eight extreme-score claims as (description, kind, constraints).

The claimed numbers are deliberately not here: the project computes them, and the
tests compare with the source."""

SOURCE_READINGS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("maximum without any Yahtzee bonus, if five of a kind may only go in the Yahtzee box",
     "max", ("five-only-in-five-box",)),
    ("minimum with no box at zero, if five of a kind may only go in the Yahtzee box",
     "min", ("no-zero", "five-only-in-five-box")),
)
"""The readings under which source 000's recipes for two claims are optimal.

Its "without any Yahtzee bonus" and "no box at zero" recipes never roll a five of a
kind except for the Yahtzee box; taken literally the two restrictions allow more
(a five of a kind scored elsewhere before the Yahtzee box is filled earns no
bonus), which is why these readings are reported beside the literal ones."""


def parse_constraints(constraint: str | Iterable[str] | None) -> tuple[str, ...]:
    """Normalize ``None``, a name, ``"a+b"`` or a list of names to a sorted tuple.

    >>> parse_constraints("no-zero+five-only-in-five-box")
    ('five-only-in-five-box', 'no-zero')
    >>> parse_constraints("no-such")
    Traceback (most recent call last):
    ...
    ValueError: unknown constraint 'no-such'; valid constraints: no-joker-points, natural, no-five-bonus, no-five-of-a-kind, no-zero, five-only-in-five-box
    """
    if constraint is None:
        return ()
    items = [constraint] if isinstance(constraint, str) else list(constraint)
    if not all(isinstance(item, str) for item in items):
        raise ValueError(f"constraint names must be strings; valid constraints: {', '.join(CONSTRAINTS)}")
    names = []
    for item in (part for text in items for part in text.split("+")):
        name = item.strip().lower()
        if name in ("", "none"):
            continue
        if name not in CONSTRAINTS:
            raise ValueError(f"unknown constraint {item!r}; valid constraints: {', '.join(CONSTRAINTS)}")
        names.append(name)
    return tuple(sorted(set(names)))


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    return kind


def _has_joker_boxes(rules: RuleSet) -> bool:
    return bool((rules.joker_points >= 0).any()) and rules.five_box is not None


def constraint_notes(rules: RuleSet, constraints: Sequence[str]) -> tuple[str, ...]:
    """Why some constraints change nothing for ``rules`` (empty when all apply).

    >>> constraint_notes(get_rules("yatzy"), ("no-joker-points", "no-zero"))
    ('no-joker-points: yatzy has no joker, so this changes nothing',)
    """
    notes = []
    for c in constraints:
        if c == "no-joker-points" and (rules.joker == "none" or not _has_joker_boxes(rules)):
            notes.append(f"{c}: {rules.key} has no joker, so this changes nothing")
        elif c == "natural" and not _has_joker_boxes(rules):
            notes.append(f"{c}: {rules.key} has no boxes with joker values, so this changes nothing")
        elif c == "no-five-bonus" and not rules.five_bonus:
            notes.append(f"{c}: {rules.key} has no five-of-a-kind bonus, so this changes nothing")
    return tuple(notes)


# -- moves ---------------------------------------------------------------------------

def _moves(rules: RuleSet, filled: np.ndarray, full: np.ndarray, constraints: tuple[str, ...],
           kind: str = "max"):
    """Every (roll, box) move of N states: allowed (N, R, B), points (N, R, B), bonus (N, R).

    ``points`` are the box points after the constraints (``no-joker-points`` may
    lower them); ``bonus`` is the five-of-a-kind bonus the roll earns. Where a box
    pays by the throw (Generala's served dice), the player who chooses the dice
    also chooses the throw: the best (``kind="max"``) or worst points of any throw.
    """
    n, b = filled.shape
    r = rules.dice.n_rolls
    rolls = np.tile(np.arange(r), n)
    legal, scores, bonus = rules.turn_options(np.repeat(filled, r, axis=0), np.repeat(full, r), rolls)
    if rules.roll_dependent:
        served = rules.turn_options(np.repeat(filled, r, axis=0), np.repeat(full, r), rolls,
                                    throws=np.ones(len(rolls), dtype=np.int64))[1]
        scores = (np.maximum if kind == "max" else np.minimum)(scores, served)
    legal = legal.reshape(n, r, b)
    scores = scores.reshape(n, r, b)
    bonus = bonus.reshape(n, r)
    natural = rules.score_table[None, :, :]
    is_five = (rules.five_face > 0)[None, :, None]
    joker_box = (rules.joker_points >= 0)[None, None, :]
    if "no-joker-points" in constraints:
        scores = np.where(is_five & joker_box, natural, scores)
    if "natural" in constraints and rules.five_box is not None:
        legal &= ~(is_five & joker_box)
    if "no-five-bonus" in constraints:
        legal &= (bonus == 0)[:, :, None]
    if "no-five-of-a-kind" in constraints:
        legal &= ~is_five
    if "no-zero" in constraints:
        legal &= scores > 0
    if "five-only-in-five-box" in constraints:
        in_five_box = (np.arange(b) == rules.five_box_index)[None, None, :]
        legal &= ~is_five | in_five_box
    return legal, scores, bonus


def _dims(rules: RuleSet) -> tuple[int, int]:
    """(threshold T, number of five-box flags F): upper totals run 0..T."""
    threshold = rules.upper_bonus_threshold if rules.upper_bonus else 0
    flags = 2 if needs_flag(rules) else 1
    return threshold, flags


def _upper_gain(rules: RuleSet, upper: np.ndarray, box: int, points: int) -> np.ndarray:
    """Upper bonus earned from each upper total in ``upper`` by ``points`` in ``box``."""
    scores = np.zeros((len(upper), rules.n_boxes), dtype=np.int16)
    scores[:, box] = points
    return rules.upper_bonus_gain(upper, scores)[:, box].astype(np.float32)


def _mask_bits(masks: np.ndarray, n_boxes: int) -> np.ndarray:
    return ((masks[:, None] >> np.arange(n_boxes)) & 1).astype(bool)


_ROWS_PER_CHUNK = 1 << 18


_TABLES: dict = {}  # (rules, kind, constraints) -> value table, the 16 most recent
_TABLES_KEPT = 16


def _solve(rules: RuleSet, kind: str, constraints: tuple[str, ...], progress=None) -> np.ndarray:
    """The cached :func:`_solve_table` (``progress`` sees the work only when it is done)."""
    key = (rules, kind, constraints)
    if key in _TABLES:
        _TABLES[key] = _TABLES.pop(key)  # most recent last
        return _TABLES[key]
    table = _solve_table(rules, kind, constraints, as_progress(progress))
    _TABLES[key] = table
    while len(_TABLES) > _TABLES_KEPT:
        del _TABLES[next(iter(_TABLES))]
    return table


MAX_EXTREMES_SECONDS = 3600.0
"""Extremes estimated to take longer than this (an hour) are refused before any table is built."""

SAY_ABOVE_SECONDS = 10.0
"""Extremes estimated to take longer than this are announced (with the estimate) first."""


def table_seconds(rules: RuleSet, n_masks: int = 8) -> float:
    """Seconds one value table of ``rules`` takes here, timed on a pilot of ``n_masks``
    score cards of the middle level (the costliest) and scaled to every card.

    >>> 0 < table_seconds(get_rules("yacht-classic"), 2) < 60
    True
    """
    from .space import require_solvable

    require_solvable(rules, "the extremes engine")
    n_boxes = rules.n_boxes
    threshold, n_flags = _dims(rules)
    upper = np.arange(threshold + 1)
    worst = np.float32(-np.inf)
    mid = np.arange(1 << n_boxes)
    mid = mid[np.array([bin(int(m)).count("1") for m in mid]) == n_boxes // 2]
    mid = mid[np.unique(np.linspace(0, len(mid) - 1, n_masks + 1).astype(int))]   # spread over the level
    values = np.zeros((1 << n_boxes, threshold + 1, n_flags), dtype=np.float32)
    groups = {box: [(int(p), np.flatnonzero(rules.score_table[:, box] == p))
                    for p in np.unique(rules.score_table[:, box])] for box in np.flatnonzero(rules.is_upper)}
    flags = np.arange(n_flags, dtype=bool)
    args = (values, None, flags, upper, threshold, {}, groups, worst, np.maximum, np.max)
    _level_chunk(rules, (), *((args[0], mid[:1]) + args[2:]))          # warm-up: the tables it reads
    start = time.perf_counter()
    _level_chunk(rules, (), *((args[0], mid[1:]) + args[2:]))
    return (time.perf_counter() - start) / max(1, len(mid) - 1) * (1 << n_boxes)


def check_extremes_work(rules: RuleSet, n_tables: int, report=None) -> None:
    """Refuse (one line) extremes estimated above :data:`MAX_EXTREMES_SECONDS`; announce,
    through ``report``, work estimated above :data:`SAY_ABOVE_SECONDS`.

    >>> check_extremes_work(get_rules("yacht-classic"), 1)
    """
    from ..progress import duration_text as _duration

    seconds = table_seconds(rules) * n_tables
    what = f"the extremes of {rules.key} ({n_tables} value table{'s' if n_tables > 1 else ''} of " \
           f"{1 << rules.n_boxes:,} score cards x {len(rules.dice.roll_counts):,} rolls)"
    if seconds > MAX_EXTREMES_SECONDS:
        raise ValueError(f"{what} would take {_duration(seconds)} here (timed on a pilot), more than "
                         f"{MAX_EXTREMES_SECONDS / 3600:.0f} hour; ask for fewer faces or dice, or one --kind "
                         "and --constraint")
    if seconds > SAY_ABOVE_SECONDS and report is not None:
        from ..progress import announce

        announce(report, f"{what}: {_duration(seconds)} here (timed on a pilot)")


def _solve_table(rules: RuleSet, kind: str, constraints: tuple[str, ...], report) -> np.ndarray:
    """Value table V[mask, upper, flag]: the best (max) or worst (min) points still to
    come from each state; -inf (max) / +inf (min) where no card completes.

    float32 is exact here: every value is an integer far below 2**24. The flag
    (five-of-a-kind box holds its full value) can only be set once that box is
    filled, so masks with it open are solved for flag 0 alone (flag 1 stays at the
    "impossible" value and is never read)."""
    from .space import require_solvable

    require_solvable(rules, "the extremes engine")        # one line: why, and what works instead
    from ..limits import require_memory

    n_boxes = rules.n_boxes
    # the value table (float32) and the (cards, boxes) bit table and its int64 temporary
    require_memory((1 << n_boxes) * (4 * (_dims(rules)[0] + 1) * _dims(rules)[1] + 9 * n_boxes + 16),
                   f"the extremes of {rules.key} ({n_boxes} boxes)", "simulate it instead")
    n_rolls = rules.dice.n_rolls
    threshold, n_flags = _dims(rules)
    upper = np.arange(threshold + 1)
    worst = np.float32(-np.inf if kind == "max" else np.inf)
    better = np.maximum if kind == "max" else np.minimum
    pick = np.max if kind == "max" else np.min

    values = np.full((1 << n_boxes, threshold + 1, n_flags), worst, dtype=np.float32)
    values[(1 << n_boxes) - 1] = 0.0
    all_masks = np.arange(1 << n_boxes)
    bits = _mask_bits(all_masks, n_boxes)
    popcount = bits.sum(axis=1)
    five_open = ~bits[:, rules.five_box_index] if n_flags == 2 else np.zeros(len(all_masks), bool)
    gains = {}  # (box, points) -> (T+1,) upper bonus gained
    upper_groups = {
        box: [(int(p), np.flatnonzero(rules.score_table[:, box] == p))
              for p in np.unique(rules.score_table[:, box])]
        for box in np.flatnonzero(rules.is_upper)
    }

    phase = f"extreme {kind} of {rules.key}" + (f" ({'+'.join(constraints)})" if constraints else "")
    done, total = 1, len(all_masks)  # masks solved (the full card is known)
    report(phase, done, total)
    for level in range(n_boxes - 1, -1, -1):
        at_level = popcount == level
        for group_masks, nf in ((all_masks[at_level & five_open], 1),
                                (all_masks[at_level & ~five_open], n_flags)):
            chunk = max(1, _ROWS_PER_CHUNK // (n_rolls * nf))
            flags = np.arange(nf, dtype=bool)
            for lo in range(0, len(group_masks), chunk):
                masks = group_masks[lo:lo + chunk]
                values[masks, :, :nf] = _level_chunk(
                    rules, constraints, values, masks, flags, upper, threshold, gains,
                    upper_groups, worst, better, pick)
                done += len(masks)
                report(phase, done, total)
    values.setflags(write=False)
    return values


def _level_chunk(rules, constraints, values, masks, flags, upper, threshold, gains,
                 upper_groups, worst, better, pick):
    """Values (m, T+1, nf) of a chunk of masks of one level, from the next level."""
    n_boxes = rules.n_boxes
    n_rolls = rules.dice.n_rolls
    m, nf = len(masks), len(flags)
    filled = np.repeat(_mask_bits(masks, n_boxes), nf, axis=0)
    legal, scores, bonus = _moves(rules, filled, np.tile(flags, m), constraints,
                                  "max" if better is np.maximum else "min")
    shape = (m, nf, n_rolls, n_boxes)
    legal, scores = legal.reshape(shape), scores.reshape(shape)
    gain = (scores + bonus.reshape(m, nf, n_rolls, 1)).astype(np.float32)
    out = np.full((m, len(upper), nf), worst, dtype=np.float32)
    cand = np.empty_like(out)
    for box in range(n_boxes):
        ok = legal[..., box]
        if not ok.any():
            continue
        pts = scores[..., box]
        g = np.where(ok, gain[..., box], worst)  # (m, nf, R)
        nxt = values[masks | (1 << box)]  # (m, T+1, F)
        if rules.is_upper[box]:
            # an upper box scores its face count whatever the joker does, so the
            # rolls fall into fixed groups by points (checked, not assumed)
            if (ok & (pts != rules.score_table[:, box])).any():  # pragma: no cover
                raise RuntimeError(f"upper box {rules.box_names[box]} scored off its table")
            for p, group in upper_groups[box]:
                imm = pick(g[..., group], axis=-1)  # (m, nf)
                if (box, p) not in gains:
                    gains[(box, p)] = _upper_gain(rules, upper, box, p)
                up = np.minimum(upper + p, threshold)
                np.add(nxt[:, up, :nf], gains[(box, p)][None, :, None], out=cand)
                cand += imm[:, None, :]
                better(out, cand, out=out)
        elif box == rules.five_box_index and values.shape[2] == 2:
            fills = pts > 0                          # the box holds a score
            imm = pick(np.where(fills, worst, g), axis=-1)
            better(out, imm[:, None, :] + nxt[:, :, :nf], out=out)
            imm = pick(np.where(fills, g, worst), axis=-1)
            better(out, imm[:, None, :] + nxt[:, :, 1:2], out=out)
        else:
            imm = pick(g, axis=-1)
            np.add(nxt[:, :, :nf], imm[:, None, :], out=cand)
            better(out, cand, out=out)
    return out


def extreme_values(rules: str | RuleSet, *, kind: str = "max", constraint=None,
                   options: Iterable[str] = ()) -> np.ndarray:
    """The whole value table ``V[mask, upper, flag]`` (read-only; cached).

    ``V[0, 0, 0]`` is the extreme score of a fresh card; ``-inf`` (max) or ``+inf``
    (min) marks states from which no card satisfies the constraints.

    >>> v = extreme_values("yacht-classic", kind="max")
    >>> v.shape, int(v[0, 0, 0]) == extreme_score("yacht-classic").score
    ((4096, 1, 1), True)
    """
    rules = get_rules(rules, options)
    return _solve(rules, _check_kind(kind), parse_constraints(constraint))


# -- result ------------------------------------------------------------------------

@dataclass(frozen=True)
class ExtremeResult:
    """The best or worst total of a rule set under some constraints, and a card attaining it.

    Attributes
    ----------
    rules : the rule set.
    kind : ``"max"`` or ``"min"``.
    constraints : the constraint names applied (sorted).
    score : the extreme total, or ``None`` when no card satisfies the constraints.
    card : one attaining game, turn by turn: dice, box, points, the upper bonus and
        five-of-a-kind bonus earned that turn, whether the roll was a joker, and the
        running total (empty when infeasible).
    notes : constraints that change nothing for this rule set, and why.
    seconds : time of the call (the value tables are cached per rule set, kind and
        constraints, so repeated calls only rebuild the card).
    """

    rules: RuleSet
    kind: str
    constraints: tuple[str, ...]
    score: int | None
    card: pd.DataFrame = field(repr=False)
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    @property
    def feasible(self) -> bool:
        """Whether any complete card satisfies the constraints."""
        return self.score is not None

    def to_frame(self) -> pd.DataFrame:
        """The finished score card in card order: each box's points, dice and turn,
        then the bonus rows and the total.

        >>> f = extreme_score("yahtzee", kind="min").to_frame()
        >>> int(f.loc["Total", "points"]), int(f.loc["Chance", "points"])
        (5, 5)
        """
        rows = []
        card = self.card.set_index("box") if len(self.card) else None
        for b in self.rules.boxes:
            if card is not None and b.name in card.index:
                row = card.loc[b.name]
                rows.append((b.label, int(row["points"]), row["dice"], int(row["turn"])))
            else:
                rows.append((b.label, None, None, None))
        if self.rules.upper_bonus:
            ub = int(self.card["upper_bonus"].sum()) if card is not None else None
            rows.append(("Upper bonus", ub, None, None))
        if self.rules.five_bonus:
            fb = int(self.card["five_bonus"].sum()) if card is not None else None
            rows.append((f"{self.rules.box_names[self.rules.five_box_index].capitalize()} bonus", fb, None, None))
        rows.append(("Total", self.score, None, None))
        import pandas as pd

        frame = pd.DataFrame(rows, columns=["box", "points", "dice", "turn"]).set_index("box")
        frame["points"] = frame["points"].astype("Int64")
        frame["turn"] = frame["turn"].astype("Int64")
        return frame

    def summary(self) -> dict:
        """Plain-data summary (for JSON).

        >>> s = extreme_score("yacht-classic", kind="min").summary()
        >>> s["score"], len(s["card"][0]["dice"]), all(isinstance(d, int) for d in s["card"][0]["dice"])
        (5, 5, True)
        """
        card = self.card.to_dict(orient="records")
        for row in card:  # dice as numbers, as in `score --json`
            row["dice"] = [int(d) for d in str(row["dice"])] if self.rules.n_faces < 10 else row["dice"]
        return {
            "rules": self.rules.key, "options": list(self.rules.options), "kind": self.kind,
            "constraints": list(self.constraints), "score": self.score, "feasible": self.feasible,
            "notes": list(self.notes),
            "card": card,
        }


def _reconstruct(rules: RuleSet, values: np.ndarray, kind: str, constraints: tuple[str, ...]) -> pd.DataFrame:
    """Replay one attaining game forward from the empty card (a loop over the turns)."""
    threshold, n_flags = _dims(rules)
    worst = -np.inf if kind == "max" else np.inf
    n_boxes = rules.n_boxes
    dice = rules.dice
    mask, upper, flag = 0, 0, 0
    total = 0
    rows = []
    for turn in range(1, n_boxes + 1):
        filled = _mask_bits(np.array([mask]), n_boxes)
        legal, scores, bonus = _moves(rules, filled, np.array([bool(flag)]), constraints, kind)
        legal, scores, bonus = legal[0], scores[0], bonus[0]  # (R, B), (R, B), (R,)
        gains = rules.upper_bonus_gain(np.full(dice.n_rolls, upper), scores).astype(np.int64)
        cand = np.full(legal.shape, worst)
        for box in range(n_boxes):
            ok = legal[:, box]
            if not ok.any():
                continue
            pts = scores[:, box].astype(np.int64)
            gain = gains[:, box]
            up = np.minimum(upper + pts, threshold) if rules.is_upper[box] else np.full(len(pts), upper)
            nflag = np.full(len(pts), flag)
            if box == rules.five_box_index and n_flags == 2:
                nflag = np.where(pts > 0, 1, flag)
            nxt = values[mask | (1 << box), up, nflag]
            cand[:, box] = np.where(ok, pts + bonus + gain + nxt, worst)
        # tie-break: the first box in card order, then the first roll
        flat = cand.T.ravel()
        target = flat.max() if kind == "max" else flat.min()
        box, roll = divmod(int(np.flatnonzero(flat == target)[0]), dice.n_rolls)
        pts = int(scores[roll, box])
        ub = int(gains[roll, box])
        fb = int(bonus[roll])
        is_five = rules.five_face[roll] > 0
        five_box_used = rules.five_box is not None and bool(filled[0, rules.five_box_index])
        total += pts + ub + fb
        rows.append({
            "turn": turn, "dice": "".join(map(str, dice.roll_dice[roll])), "box": rules.box_names[box],
            "label": rules.boxes[box].label, "points": pts, "upper_bonus": ub, "five_bonus": fb,
            "joker": bool(is_five and five_box_used and rules.joker != "none"
                          and box != rules.five_box_index),
            "total": total,
        })
        if rules.is_upper[box]:
            upper = min(upper + pts, threshold)
        if box == rules.five_box_index and n_flags == 2 and pts > 0:
            flag = 1
        mask |= 1 << box
    import pandas as pd

    return pd.DataFrame(rows)


def extreme_score(rules: str | RuleSet = "yahtzee", *, kind: str = "max", constraint=None,
                  options: Iterable[str] = (), progress=None) -> ExtremeResult:
    """The best (``kind="max"``) or worst (``"min"``) total a card can reach, and that card.

    Parameters
    ----------
    rules, options : a rule-set name (or :class:`RuleSet`) and its options.
    kind : ``"max"`` or ``"min"``.
    constraint : ``None``, one name of :data:`CONSTRAINTS`, several joined by ``+``,
        or a list of names.
    progress : a :mod:`yahtzee_sim.progress` callback (score-card states solved); silent by default.

    >>> res = extreme_score("yahtzee", kind="min", constraint="no-five-of-a-kind")
    >>> res.score, res.card.set_index("box").loc["chance", "dice"]
    (6, '11112')
    >>> extreme_score("yahtzee", kind="best")
    Traceback (most recent call last):
    ...
    ValueError: unknown kind 'best'; valid kinds: max, min
    """
    _check_kind(kind)
    cons = parse_constraints(constraint)
    rules = get_rules(rules, options)
    start = time.perf_counter()
    if (rules, kind, cons) not in _TABLES:
        check_extremes_work(rules, 1, as_progress(progress))
    values = _solve(rules, kind, cons, progress)
    best = values[0, 0, 0]
    if np.isinf(best):
        import pandas as pd

        card = pd.DataFrame(columns=["turn", "dice", "box", "label", "points", "upper_bonus",
                                     "five_bonus", "joker", "total"])
        score = None
    else:
        card = _reconstruct(rules, values, kind, cons)
        score = int(best)
        if int(card["total"].iloc[-1]) != score:  # pragma: no cover - self-check
            raise RuntimeError(f"reconstructed card totals {int(card['total'].iloc[-1])}, expected {score}")
    return ExtremeResult(rules=rules, kind=kind, constraints=cons, score=score, card=card,
                         notes=constraint_notes(rules, cons), seconds=time.perf_counter() - start)


def source_claims_table(rules: str | RuleSet = "yahtzee", *, options: Iterable[str] = (),
                      readings: bool = True, progress=None) -> pd.DataFrame:
    """All of source 000's extreme-score claims computed for one rule set.

    One row per claim (:data:`SOURCE_CLAIMS`), plus, with ``readings=True``, the
    alternative readings of :data:`SOURCE_READINGS`. Columns: claim, kind,
    constraint, score (``<NA>`` when infeasible), note. ``progress`` (a
    :mod:`yahtzee_sim.progress` callback) sees one step per claim.

    >>> t = source_claims_table("yacht-classic", readings=False)
    >>> len(t), int(t.loc[t["claim"] == "minimum", "score"].iloc[0])
    (8, 5)
    """
    rules = get_rules(rules, options)
    rows = []
    entries = list(SOURCE_CLAIMS) + (list(SOURCE_READINGS) if readings else [])
    report = as_progress(progress)
    todo = {(kind, parse_constraints(cons)) for _, kind, cons in entries} - {k[1:] for k in _TABLES if k[0] is rules}
    if todo:
        check_extremes_work(rules, len(todo), report)
    for i, (claim, kind, cons) in enumerate(entries):
        report(f"source 000's claims for {rules.key}", i, len(entries))
        res = extreme_score(rules, kind=kind, constraint=cons)
        rows.append({
            "claim": claim, "kind": kind, "constraint": "+".join(cons) or "-",
            "score": res.score, "reading": "literal" if i < len(SOURCE_CLAIMS) else "the source's recipe",
            "note": "; ".join(res.notes) if res.feasible else "no card satisfies this; " + "; ".join(res.notes),
        })
    report(f"source 000's claims for {rules.key}", len(entries), len(entries))
    import pandas as pd

    frame = pd.DataFrame(rows)
    frame["score"] = frame["score"].astype("Int64")
    return frame


# the earlier names (a "seed" was a source document then), kept for users' scripts
SEED_CLAIMS, SEED_READINGS, seed_claims_table = SOURCE_CLAIMS, SOURCE_READINGS, source_claims_table
