"""Batch game state: one struct of arrays with the game axis first.

>>> from yahtzee_sim.rules import get_rules
>>> s = GameState.new(get_rules("yahtzee"), 4)
>>> s.filled.shape, int(s.turn)
((4, 13), 0)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .rules import RuleSet, get_rules  # noqa: F401  (get_rules: the examples below)


@dataclass
class GameState:
    """Score cards of N games, all at the same turn.

    filled : (N, B) bool, boxes used (column-major in a fresh state: each box's column is
        contiguous, which the simulator's per-box work needs; any layout is accepted).
    box_scores : (N, B) int16, points written in each box (0 while open).
    upper_total : (N,) int16, sum of the upper boxes so far.
    five_bonus_count : (N,) int16, Yahtzee/Yacht bonuses earned.
    five_count : (N,) int16, turns that ended with five of a kind.
    fill_turn : (N, B) int8, the turn (1..B) in which each box was filled, 0 while open.
    five_box_full : (N,) bool, the five-of-a-kind box holds its full value (50).
    turn : number of turns played (0..B).
    announced : (N,) int16, the box announced this turn (-1 none); only for rule sets
        with an announce column (Yamb), else None.
    banked : (N,) int16, saved throws; only for rule sets with banked throws (Maxi
        Yatzy), else None.
    bank_used : (N,) int16, saved throws spent so far (they index the game's bank tape).
    served_five_count : (N,) int16, turns that ended with five of a kind made by the first
        throw (a Generala servida); only for rule sets whose boxes score by the throw.
    """

    filled: np.ndarray
    box_scores: np.ndarray
    upper_total: np.ndarray
    five_bonus_count: np.ndarray
    five_count: np.ndarray
    five_box_full: np.ndarray
    fill_turn: np.ndarray | None = None
    turn: int = 0
    announced: np.ndarray | None = None
    banked: np.ndarray | None = None
    bank_used: np.ndarray | None = None
    served_five_count: np.ndarray | None = None

    @classmethod
    def new(cls, rules: RuleSet, n: int) -> "GameState":
        """Fresh cards for ``n`` games."""
        b = rules.n_boxes
        return cls(
            filled=np.zeros((n, b), dtype=bool, order="F"),   # column-major: per-box work on columns
            box_scores=np.zeros((n, b), dtype=np.int16),
            upper_total=np.zeros(n, dtype=np.int16),
            five_bonus_count=np.zeros(n, dtype=np.int16),
            five_count=np.zeros(n, dtype=np.int16),
            five_box_full=np.zeros(n, dtype=bool),
            fill_turn=np.zeros((n, b), dtype=np.int8),
            announced=np.full(n, -1, dtype=np.int16) if rules.announces else None,
            banked=np.zeros(n, dtype=np.int16) if rules.banked_throws else None,
            bank_used=np.zeros(n, dtype=np.int16) if rules.banked_throws else None,
            served_five_count=np.zeros(n, dtype=np.int16) if rules.roll_dependent else None,
        )

    @classmethod
    def from_arrays(cls, rules: RuleSet, filled, upper_total, five_box_full=None) -> "GameState":
        """A state built from the parts decisions depend on (box scores set to 0).

        Used to ask a strategy what it would do in given positions.
        """
        filled = np.atleast_2d(np.asarray(filled, dtype=bool))
        n = len(filled)
        upper_total = np.broadcast_to(np.asarray(upper_total, dtype=np.int16), (n,)).copy()
        full = np.zeros(n, bool) if five_box_full is None else np.broadcast_to(
            np.asarray(five_box_full, dtype=bool), (n,)).copy()
        state = cls.new(rules, n)
        state.filled = filled.copy()
        state.upper_total = upper_total
        state.five_box_full = full
        state.turn = int(filled.sum(axis=1).max()) if n else 0
        return state

    @property
    def n_games(self) -> int:
        return len(self.filled)

    def total(self, rules: RuleSet) -> np.ndarray:
        """(N,) int32 score: boxes + upper bonus + five-of-a-kind bonuses, or the rule
        set's own score of the card (:meth:`RuleSet.card_total`)."""
        return rules.card_total(self.box_scores, self.upper_total, self.five_bonus_count)


class TurnOptions:
    """What a strategy sees when it chooses a box.

    legal : (N, B) bool, boxes it may fill (joker and fill order applied).
    scores : (N, B) int16, points each box would get.
    gain : (N, B) int16, points gained now: ``scores`` plus the upper bonus if the
        box completes it plus any Yahtzee bonus. Either the array, or (``make_gain``)
        a function that computes it when a strategy first reads it: the engine passes
        one, so a strategy that never looks at the gains (``random``) does not pay for them.

    >>> o = TurnOptions(np.ones((1, 2), bool), np.array([[3, 0]], np.int16),
    ...                 make_gain=lambda: np.array([[38, 0]], np.int16))
    >>> o.gain.tolist()
    [[38, 0]]
    """

    __slots__ = ("legal", "scores", "_gain", "_make_gain")

    def __init__(self, legal: np.ndarray, scores: np.ndarray, gain: np.ndarray | None = None, *,
                 make_gain=None):
        if (gain is None) == (make_gain is None):
            raise ValueError("TurnOptions needs the gains or a function that makes them (one of the two)")
        self.legal, self.scores, self._gain, self._make_gain = legal, scores, gain, make_gain

    @property
    def gain(self) -> np.ndarray:
        if self._gain is None:
            self._gain = self._make_gain()
            self._make_gain = None
        return self._gain

    def __repr__(self) -> str:
        return f"TurnOptions(games={len(self.legal)}, boxes={self.legal.shape[1]})"


def take_games(state: GameState, idx) -> GameState:
    """The cards of games ``idx`` of ``state`` (copies, C-ordered).

    >>> st = GameState.new(get_rules("yacht"), 4)
    >>> st.upper_total[:] = [1, 2, 3, 4]
    >>> take_games(st, np.array([3, 1])).upper_total.tolist()
    [4, 2]
    """
    parts = {f.name: np.ascontiguousarray(getattr(state, f.name)[idx]) for f in dataclasses.fields(state)
             if isinstance(getattr(state, f.name), np.ndarray)}
    return dataclasses.replace(state, **parts)


def put_games(state: GameState, idx, part: GameState) -> None:
    """Write the cards of ``part`` back as games ``idx`` of ``state`` (same turn after).

    >>> st = GameState.new(get_rules("yacht"), 4)
    >>> sub = take_games(st, np.array([0, 2]))
    >>> sub.upper_total += 7
    >>> put_games(st, np.array([0, 2]), sub)
    >>> st.upper_total.tolist()
    [7, 0, 7, 0]
    """
    for f in dataclasses.fields(state):
        a = getattr(state, f.name)
        if isinstance(a, np.ndarray):
            a[idx] = getattr(part, f.name)
    state.turn = part.turn
