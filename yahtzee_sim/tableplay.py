"""The lean game loop of strategies that decide from a lookup table.

A strategy whose every decision is a table lookup (the optimal strategies: see
:mod:`yahtzee_sim.exact.decisions`) exposes a :class:`PlayTable` as its
``play_table``; :func:`yahtzee_sim.engine.play_blocks` then plays its games here
instead of asking ``keep``/``box`` and building every box's options each turn.
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
>>> state.box_scores[0].tolist()[:7]            # five sixes every turn, boxes in order
[0, 0, 0, 0, 0, 30, 0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .rules import RuleSet
from .state import GameState

__all__ = ["PlayTable", "play_games"]


@dataclass(frozen=True, eq=False)
class PlayTable:
    """The decisions of a table strategy, as plain arrays.

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


def play_games(rules: RuleSet, table: PlayTable, state: GameState, tape: np.ndarray) -> None:
    """Play the turns of ``tape`` (n, T, rolls, dice) from ``state`` (updated in place)."""
    d = rules.dice
    n, n_turns = tape.shape[:2]
    n_rolls, n_boxes = rules.n_rolls, rules.n_boxes
    served = table.served_boxes is not None
    if served and not rules.roll_dependent:
        raise ValueError("a table with served boxes needs a rule set whose boxes score by the throw")
    r_count = d.n_rolls
    width = table.sub_keep.shape[1]
    sub_keep = np.ascontiguousarray(table.sub_keep).reshape(-1)
    keeps = [None if k is None else k.reshape(-1) for k in table.keeps]
    boxes = table.boxes.reshape(-1)
    sboxes = table.served_boxes.reshape(-1) if served else None
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    mask = state.filled.astype(np.int64) @ bits
    cap = table.n_u - 1
    games = np.arange(n)
    key_to_roll = d.key_to_roll
    if rules.roll_dependent:
        first_table, later_table = rules.score_tables[0], rules.score_tables[-1]
    score_table = rules.score_table.reshape(-1)
    special = rules.five_box is not None        # five-of-a-kind rolls: through turn_options
    five_face = rules.five_face
    is_upper = rules.is_upper
    for t in range(n_turns):
        prefix = d.tape_prefix_keys(tape[:, t])
        flat = mask * table.n_u + np.minimum(state.upper_total, cap)
        if table.n_flag == 2:
            flat = flat * 2 + state.five_box_full
        row = table.row_of[flat]
        if row.size and row.min() < 0:
            g = int(np.flatnonzero(row < 0)[0])
            raise ValueError(f"table play: game {g} is in a state no game can reach "
                             f"(upper total {int(state.upper_total[g])})")
        base = row.astype(np.intp) * r_count
        roll = key_to_roll[prefix[:, 0, d.n_dice]].astype(np.intp)
        held = np.ones(n, dtype=bool) if served else None      # still the first throw's dice
        for j in range(n_rolls - 1, 0, -1):
            pos = keeps[j][base + roll]
            if served:
                if j < n_rolls - 1:
                    pos = np.where(held, 0, pos)
                held &= pos == 0
            keep = sub_keep[roll * width + pos]
            roll = d.reroll(keep, prefix[:, n_rolls - j]).astype(np.intp)
        at = base + roll
        box = boxes[at].astype(np.intp)
        if served:
            box = np.where(held, sboxes[at], box).astype(np.intp)
            points = np.where(held, first_table[roll, box], later_table[roll, box])
        else:
            points = score_table[roll * n_boxes + box]
        flat_box = games * n_boxes + box
        if state.filled.reshape(-1)[flat_box].any():       # pragma: no cover - a bad table
            g = int(np.flatnonzero(state.filled.reshape(-1)[flat_box])[0])
            raise RuntimeError(f"table play: game {g} chose the filled box {rules.box_names[box[g]]}")
        bonus = None
        five = five_face[roll] > 0
        if special:
            rows = np.flatnonzero(five)
            if len(rows):               # jokers, bonuses: exactly as the engine scores them
                throws = np.where(held[rows], 1, 2).astype(np.int8) if served else None
                legal, scores, extra = rules.turn_options(state.filled[rows], state.five_box_full[rows],
                                                          roll[rows], throws=throws)
                b = box[rows]
                k = np.arange(len(rows))
                if not legal[k, b].all():      # pragma: no cover - a bad table
                    raise RuntimeError("table play: an illegal box on a five-of-a-kind roll")
                points = points.copy()
                points[rows] = scores[k, b]
                bonus = np.zeros(n, dtype=np.int16)
                bonus[rows] = extra
        points = points.astype(np.int16, copy=False)
        state.filled.reshape(-1)[flat_box] = True
        state.box_scores.reshape(-1)[flat_box] = points
        state.fill_turn.reshape(-1)[flat_box] = state.turn + 1
        state.upper_total += points * is_upper[box]
        if bonus is not None:
            state.five_bonus_count += bonus > 0
        state.five_count += five
        if state.served_five_count is not None and served:
            state.served_five_count += five & held
        if special:
            state.five_box_full |= rules.fills_five_box(box, points)
        mask |= bits[box]
        state.turn += 1
