"""Baseline strategies: ``random`` and ``keep-largest``.

>>> from yahtzee_sim import simulate
>>> res = simulate("yacht", "keep-largest", 1000, seed=3)
>>> res.summary()["games"]
1000
"""

from __future__ import annotations

import numpy as np

from ..strategy import ChunkDecisions, Strategy, best_legal, register, uniform_choice


@register
class RandomStrategy(Strategy):
    """Uniform over the distinct legal keeps, then uniform over the legal boxes."""

    name = "random"
    description = "uniform over legal keeps and legal boxes"

    def prepare(self, rules):
        super().prepare(rules)
        d = self.dice
        # floor(min(u * n, n - 1)) + first entry of the roll's row, all exact in float64
        self._n_subkeeps = d.n_subkeeps.astype(np.float64)
        self._row_start = np.arange(d.n_rolls, dtype=np.float64) * d.subkeeps.shape[1]
        return self

    def keep(self, state, rolls, rolls_left, u):
        n = np.take(self._n_subkeeps, rolls)
        pick = np.multiply(u, n, out=n)        # exact in float64: u has 24 bits, n under 2**10
        if u.dtype != np.float32:              # u < 1 in float32 (the engine's) keeps pick < n
            np.minimum(pick, np.take(self._n_subkeeps, rolls) - 1, out=pick)
        pick += np.take(self._row_start, rolls)
        return np.take(self.dice.subkeeps.reshape(-1), pick.astype(np.intp))

    def box(self, state, rolls, options, u):
        return uniform_choice(options.legal, u)

    def chunk_decisions(self, rules):
        """Uniform over the legal choices: the exact evaluator averages over them."""
        return ChunkDecisions(uniform=True)


@register
class KeepLargestStrategy(Strategy):
    """The sources' rule: hold the largest group of equal dice (ties: the higher
    face) and reroll the rest; then fill the open box that gains most now
    (bonuses included; ties: the first box in card order)."""

    name = "keep-largest"
    description = "hold the largest group of equal dice, fill the box that scores most now"
    uses_uniforms = False

    def prepare(self, rules):
        super().prepare(rules)
        counts = self.dice.roll_counts.astype(np.int64)
        faces = np.arange(counts.shape[1])
        # Largest count wins; among equal counts the higher face (weight faces below 1).
        best_face = np.argmax(counts * counts.shape[1] + faces, axis=1)
        held = np.zeros_like(counts)
        held[np.arange(len(counts)), best_face] = counts[np.arange(len(counts)), best_face]
        self._keep_table = self.dice.keep_index_of_counts(held).astype(np.intp)
        return self

    def keep(self, state, rolls, rolls_left, u):
        return np.take(self._keep_table, rolls)

    def box(self, state, rolls, options, u):
        return best_legal(options.gain, options.legal)

    def chunk_decisions(self, rules):
        """The keep table (the roll alone decides) and the best-gain box, for a chunk."""
        from ..exact.policy import best_gain_boxes_of, keep_largest_keeps

        return ChunkDecisions(keeps=keep_largest_keeps, boxes=best_gain_boxes_of,
                              mirrors={"keeps": ("keep", "prepare"), "boxes": ("box",)})


class KeepAll(Strategy):
    """Holds every die: the turn simulator then reports first rolls (not registered: it
    never fills a box, so it plays turns, not games).

    >>> from yahtzee_sim import simulate_turns
    >>> res = simulate_turns("yahtzee", KeepAll(), 20000, seed=1)    # five of a kind: 6/7776 a throw
    >>> bool(res.to_frame().loc["five_of_a_kind", "frequency"] < 0.003)
    True
    """

    name = "keep-all"
    uses_uniforms = False

    def keep(self, state, rolls, rolls_left, u):
        return self.dice.roll_keep_index[rolls].astype(np.int64)
