"""The lean game loop of strategies that decide from a lookup table.

A strategy whose every decision is a table lookup (the optimal strategies: see
:mod:`yahtzee_sim.exact.decisions`) exposes a :class:`PlayTable` as its
``play_table``; the engine's one game loop (:func:`yahtzee_sim.engine.play_seats`,
solitaire and tables) then plays its games here instead of asking ``keep``/``box`` and building every box's options each turn.
The games are the same, die for die: the same tapes, the same keeps and boxes the
strategy's own ``keep``/``box`` return (tested game by game), and the points,
bonuses and counters of :func:`yahtzee_sim.engine.play_turn`. A box's points come
from the score table, except on the rolls where :meth:`RuleSet.turn_options` may
change them (five of a kind: jokers, bonuses, boxes that pay after a Generala),
which go through ``turn_options`` itself.

>>> import numpy as np
>>> from yahtzee_sim import get_rules
>>> r = get_rules("yacht")
>>> n_u, n_flag = 1, 1
>>> # a toy table: hold everything, fill the first open box (state = filled mask)
>>> rows = np.arange(1 << r.n_boxes, dtype=np.int32)
>>> first_open = np.array([next((b for b in range(r.n_boxes) if not m >> b & 1), 0)
...                        for m in range(1 << r.n_boxes)], dtype=np.uint8)
>>> zeros = np.zeros((len(rows), r.dice.n_rolls), np.uint8)
>>> sub = r.dice.roll_keep_index[:, None].astype(np.int64)
>>> table = PlayTable(rows, n_u, n_flag, (None, zeros, zeros),
...                   np.repeat(first_open[:, None], r.dice.n_rolls, axis=1), None, sub)
>>> from yahtzee_sim.state import GameState
>>> state = GameState.new(r, 3)
>>> tape = np.full((3, r.n_boxes, r.n_rolls, r.n_dice), 6, dtype=np.uint8)
>>> play_games(r, table, state, tape)
>>> state.box_scores[0].tolist()               # five sixes every turn, boxes in order
[0, 0, 0, 0, 0, 30, 30, 30, 30, 0, 0, 50]
>>> state.fill_turn[0].tolist() == list(range(1, r.n_boxes + 1))
True
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .rules import RuleSet
from .state import GameState

__all__ = ["PlayTable", "play_games"]


@dataclass(frozen=True, eq=False)
class PlayTable:
    """The decisions of a table strategy, as plain arrays: the one decision-table format
    (the exact engine's :class:`~yahtzee_sim.exact.decisions.DecisionTable` is one, with
    where it came from).

    row_of : (2**B * n_u * n_flag,) int32, the table row of each state
        ``(mask * n_u + min(upper total, n_u - 1)) * n_flag + flag``; -1 where no
        game can be.
    keeps : ``keeps[j]`` (S, R) uint8 for ``j`` rerolls left (``keeps[0]`` None): the
        position of the keep in ``sub_keep[roll]``.
    boxes : (S, R) uint8, the box of each final roll.
    served_boxes : (S, R) uint8 or None: the box when the final dice are still the
        first throw's (rule sets with served combinations); a game that held all its
        first dice holds them to the end of the turn.
    sub_keep : (R, W) keep indices of each roll's keeps, position 0 the whole roll.
    """

    row_of: np.ndarray
    n_u: int
    n_flag: int
    keeps: tuple
    boxes: np.ndarray
    served_boxes: np.ndarray | None
    sub_keep: np.ndarray


MAX_CODE = 1 << 16
"""A throw's dice are read as one number, ``sum(die_i * (F + 1)**i)`` (order kept), and
the key of its first 0..n dice looked up by it, instead of a lookup and a running sum
per die (the loop's largest cost). Rule sets whose throws make larger numbers use the
dice tables' prefix keys."""


@dataclass(frozen=True, eq=False)
class _Keys:
    """``prefix[code * (n + 1) + m]``: the dice-table key of the first ``m`` dice of the
    throw read as ``code``; ``first_roll[code]`` the roll of all of them."""

    prefix: np.ndarray | None       # (codes * (n_dice + 1),) uint16 (int32 if keys need it)
    first_roll: np.ndarray | None   # (codes,) intp


@functools.lru_cache(maxsize=16)
def _keys(rules: RuleSet) -> _Keys:
    d = rules.dice
    n, f = d.n_dice, d.n_faces
    codes = (f + 1) ** n                     # faces are 1..F: the number is below (F + 1)**n
    if codes > MAX_CODE:
        return _Keys(None, None)
    code = np.arange(codes, dtype=np.int64)
    digits = (code[:, None] // (f + 1) ** np.arange(n)) % (f + 1)         # die i of each number
    face_key = d.face_key.astype(np.int64)
    die_key = np.where(digits > 0, face_key[np.maximum(digits - 1, 0)], 0)
    prefix = np.zeros((codes, n + 1), dtype=np.int64)
    prefix[:, 1:] = np.cumsum(die_key, axis=1)
    first = np.where((digits > 0).all(axis=1), d.key_to_roll[prefix[:, n]], -1).astype(np.intp)
    small = np.uint16 if prefix.max() < 1 << 16 else np.int32      # a table that stays in cache
    return _Keys(prefix.astype(small).reshape(-1), first)


@functools.lru_cache(maxsize=16)
def _score_tables(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """Flat (roll * B + box) points of each box, and the same for upper boxes only."""
    table = np.ascontiguousarray(rules.score_table)
    upper = np.where(rules.is_upper[None, :], table, 0).astype(np.int16)
    return table.reshape(-1), upper.reshape(-1)


def _codes(rules: RuleSet, tape: np.ndarray) -> np.ndarray:
    """(T, rolls, n) intp: ``(n_dice + 1) * sum(die_i * (F + 1)**i)`` of every throw."""
    base = np.uint16(rules.dice.n_faces + 1)
    code = tape[..., -1].astype(np.uint16)              # (n, T, rolls)
    for i in range(tape.shape[-1] - 2, -1, -1):
        code *= base
        code += tape[..., i]
    out = np.empty(code.shape[1:] + code.shape[:1], dtype=np.intp)
    out[...] = code.transpose(1, 2, 0)
    out *= rules.dice.n_dice + 1
    return out


def play_games(rules: RuleSet, table: PlayTable, state: GameState, tape: np.ndarray) -> None:
    """Play the turns of ``tape`` (n, T, rolls, dice) from ``state`` (updated in place)."""
    d = rules.dice
    n, n_turns = tape.shape[:2]
    n_rolls, n_boxes = rules.n_rolls, rules.n_boxes
    served = table.served_boxes is not None
    if served and not rules.roll_dependent:
        raise ValueError("a table with served boxes needs a rule set whose boxes score by the throw")
    keys = _keys(rules)
    by_code = keys.prefix is not None
    codes = _codes(rules, tape) if by_code else None
    r_count = d.n_rolls
    width = table.sub_keep.shape[1]
    sub = np.ascontiguousarray(table.sub_keep).reshape(-1)
    sub_ok = np.maximum(sub, 0)
    sub_key = np.where(sub >= 0, d.keep_key[sub_ok], 0).astype(np.int32)    # per (roll, position)
    sub_missing = np.where(sub >= 0, d.n_dice - d.keep_size[sub_ok], 0).astype(np.intp)
    keeps = [None if k is None else k.reshape(-1) for k in table.keeps]
    boxes = table.boxes.reshape(-1)
    sboxes = table.served_boxes.reshape(-1) if served else None
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    mask = state.filled.astype(np.int64) @ bits
    start_turn = state.turn
    cap = table.n_u - 1
    games = np.arange(n)
    key_to_roll = d.key_to_roll.astype(np.intp)
    if rules.roll_dependent:
        first_table, later_table = rules.score_tables[0], rules.score_tables[-1]
    score_table, upper_points = _score_tables(rules)
    special = rules.five_box is not None        # five-of-a-kind rolls: through turn_options
    five_face = rules.five_face
    five_box = rules.five_box_index
    chosen = np.empty((n_turns, n), dtype=np.intp)
    earned = np.empty((n_turns, n), dtype=np.int16)
    stride = d.n_dice + 1
    for t in range(n_turns):
        if by_code:
            code = codes[t]                                     # (rolls, n)
            prefix = keys.prefix
            roll = keys.first_roll[code[0] // stride]
        else:
            prefix = d.tape_prefix_keys(tape[:, t]).reshape(-1)
            code = (np.arange(n_rolls) * stride)[:, None] + (games * n_rolls * stride)[None, :]
            roll = key_to_roll[prefix[code[0] + d.n_dice]]
        flat = mask * table.n_u + np.minimum(state.upper_total, cap)
        if table.n_flag == 2:
            flat = flat * 2 + state.five_box_full
        row = table.row_of[flat]
        if row.size and row.min() < 0:
            g = int(np.flatnonzero(row < 0)[0])
            raise ValueError(f"table play: game {g} is in a state no game can reach "
                             f"(upper total {int(state.upper_total[g])})")
        base = row.astype(np.intp) * r_count
        held = np.ones(n, dtype=bool) if served else None      # still the first throw's dice
        for j in range(n_rolls - 1, 0, -1):
            pos = keeps[j][base + roll]
            if served:
                if j < n_rolls - 1:
                    pos = np.where(held, 0, pos)
                held &= pos == 0
            at = roll * width + pos
            fresh = prefix[code[n_rolls - j] + sub_missing[at]]
            roll = key_to_roll[sub_key[at] + fresh]
        at = base + roll
        box = boxes[at].astype(np.intp)
        if served:
            box = np.where(held, sboxes[at], box).astype(np.intp)
            points = np.where(held, first_table[roll, box], later_table[roll, box])
        else:
            points = score_table[roll * n_boxes + box]
        five = five_face[roll] > 0
        if special:
            rows = np.flatnonzero(five)
            if len(rows):               # jokers, bonuses: exactly as the engine scores them
                throws = np.where(held[rows], 1, 2).astype(np.int8) if served else None
                filled = (mask[rows, None] & bits) != 0
                legal, scores, extra = rules.turn_options(filled, state.five_box_full[rows],
                                                          roll[rows], throws=throws)
                b = box[rows]
                k = np.arange(len(rows))
                if not legal[k, b].all():      # pragma: no cover - a bad table
                    raise RuntimeError("table play: an illegal box on a five-of-a-kind roll")
                points = points.copy()
                points[rows] = scores[k, b]
                state.five_bonus_count[rows] += extra > 0
        points = points.astype(np.int16, copy=False)
        chosen[t] = box
        earned[t] = points
        if served:
            upper = np.where(rules.is_upper[box], points, 0).astype(np.int16)
        else:
            upper = upper_points[roll * n_boxes + box]
            if special and len(rows):               # points not from the score table
                upper[rows] = np.where(rules.is_upper[box[rows]], points[rows], 0)
        state.upper_total += upper
        state.five_count += five
        if state.served_five_count is not None and served:
            state.served_five_count += five & held
        if special:
            state.five_box_full |= (box == five_box) & (points > 0)
        mask |= bits[box]
    # the card: every turn's box and points written at once
    cells = (games[None, :] * n_boxes + chosen).reshape(-1)
    state.filled.reshape(-1)[cells] = True
    state.box_scores.reshape(-1)[cells] = earned.reshape(-1)
    state.fill_turn.reshape(-1)[cells] = np.repeat(np.arange(start_turn + 1, start_turn + n_turns + 1,
                                                             dtype=np.int8), n)
    state.turn += n_turns
