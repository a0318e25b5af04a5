"""``chase:<pattern>``: keeps that maximize the exact chance of ending the turn in one
pattern (the turn simulator's ``target=``)."""

from __future__ import annotations

from ..exact.turns import pattern_keep_tables
from ..patterns import check_pattern
from ..rules import RuleSet
from ..strategy import Strategy, best_legal

__all__ = ["ChasePattern"]


class ChasePattern(Strategy):
    """Keeps that maximize the exact chance of ending the turn in ``pattern``; the box
    is the one that gains most now. Used by ``simulate_turns(..., target=...)``;
    also playable as a (weak) full-game strategy.

    >>> from yahtzee_sim import simulate_turns
    >>> res = simulate_turns("yahtzee", ChasePattern("large_straight"), 4096, seed=2)
    >>> bool(0.22 < res.to_frame().loc["large_straight", "frequency"] < 0.31)
    True
    """

    description = "keeps that maximize the chance of one pattern; box: most points now"

    def __init__(self, pattern: str = "five_of_a_kind"):
        self.pattern = check_pattern(pattern)
        self.name = f"chase:{self.pattern}"

    def prepare(self, rules: RuleSet) -> "ChasePattern":
        super().prepare(rules)
        self._keeps = pattern_keep_tables(rules.dice, check_pattern(self.pattern, rules.dice),
                                           rules.n_rolls - 1)
        return self

    def keep(self, state, rolls, rolls_left, u):
        return self._keeps[min(rolls_left, len(self._keeps) - 1)][rolls]

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)

    def __repr__(self) -> str:
        return f"ChasePattern({self.pattern!r})"
