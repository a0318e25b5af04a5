"""The exact, mergeable tally of a paired gain run (:func:`yahtzee_sim.multiplayer.seat_gain`).

Each game of such a run gives, for the seat the player sat in: whether it won alone,
its win share and the baseline's win share on the same dice, and both scores. A tie
for first among k seats is a share of 1/k, so at a table of T seats a share is one of
0, 1, 1/2, ..., 1/T: the tally counts, per seat, the games of each pair (player's
share, baseline's share), the sole wins and the two score sums. Everything is an
integer, so

* merging chunks is addition, the same in any order (worker processes finish their
  chunks out of order; a running float mean and M2 merged by Chan's formula would
  round differently with each order, an integer tally does not);
* a checkpoint holds it exactly and checks it as it checks the other runs' tallies
  (integers, non-negative, adding up);
* memory does not grow with the number of games (a few kB per seat).

The means and sample variances of the win share and of the paired gain (the player's
share minus the baseline's) are computed from the counts in exact fractions and
rounded once, so they are at least as close to the truth as numpy's two-pass figures
over the kept games (which they equal to about 1e-15).

>>> import numpy as np
>>> from yahtzee_sim import get_rules
>>> rows = {"seat": np.array([0, 0, 1]), "won": np.array([True, False, False]),
...         "share": np.array([1.0, 0.5, 0.0]), "base_share": np.array([0.0, 0.5, 1.0]),
...         "own": np.array([30, 20, 10]), "base": np.array([20, 20, 30]), "seconds": np.array([0.25])}
>>> agg = GainAggregate.from_rows(get_rules("yacht"), 1, rows)
>>> agg.n_games, agg.wins.tolist(), agg.summary()["gain"], agg.summary(seat=0)["win_share"]
(3, [1, 0], 0.0, 0.75)
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..results import max_total, min_total
from ..rules import RuleSet

__all__ = ["GainAggregate"]


@dataclass
class GainAggregate:
    """Per seat s of a table of ``T`` seats (the player's seat in the game):

    pairs[s, a, b] : games whose player's share is code a and baseline's share code b
        (code 0: no share of the win; code k >= 1: a share of 1/k, a tie of k seats).
    wins[s] : games the player won alone (a servida win counts).
    own[s], base[s] : the sums of the player's and the baseline's scores, each score
        plus ``score_shift`` (so that no sum is negative where a card may score below 0).
    nanoseconds : the time the player's games took, summed over the chunks (not a result:
        it differs from run to run).
    """

    pairs: np.ndarray
    wins: np.ndarray
    own: np.ndarray
    base: np.ndarray
    score_shift: int = 0
    nanoseconds: int = 0

    @classmethod
    def empty(cls, rules: RuleSet, opponents: int) -> "GainAggregate":
        """No games, at a table of the player and ``opponents`` others."""
        seats = opponents + 1
        zeros = np.zeros(seats, dtype=np.int64)
        return cls(np.zeros((seats, seats + 1, seats + 1), dtype=np.int64), zeros, zeros.copy(), zeros.copy(),
                   -min_total(rules))

    @classmethod
    def from_rows(cls, rules: RuleSet, opponents: int, rows: dict[str, np.ndarray]) -> "GainAggregate":
        """The tally of the per-game ``rows`` of :func:`~yahtzee_sim.runner.plan.play_gain_part`."""
        agg = cls.empty(rules, opponents)
        k = agg.pairs.shape[1]
        seat = np.asarray(rows["seat"], dtype=np.int64)
        a, b = _share_code(rows["share"]), _share_code(rows["base_share"])
        agg.pairs += np.bincount((seat * k + a) * k + b, minlength=agg.pairs.size).reshape(agg.pairs.shape)
        agg.wins += np.bincount(seat[np.asarray(rows["won"], dtype=bool)], minlength=k - 1)
        for name in ("own", "base"):
            scores = np.asarray(rows[name], dtype=np.int64) + agg.score_shift
            getattr(agg, name)[:] = [int(scores[seat == s].sum()) for s in range(k - 1)]
        agg.nanoseconds = int(round(float(np.sum(rows.get("seconds", 0.0))) * 1e9))
        return agg

    @property
    def n_games(self) -> int:
        return int(self.pairs.sum())

    def merge(self, other: "GainAggregate") -> "GainAggregate":
        """A new tally of both runs' games."""
        return GainAggregate(self.pairs + other.pairs, self.wins + other.wins, self.own + other.own,
                             self.base + other.base, self.score_shift, self.nanoseconds + other.nanoseconds)

    def check(self, rules: RuleSet, n_games: int) -> None:
        """Raise ``ValueError`` unless this is a possible tally of ``n_games`` games of ``rules``
        (the pairs count every game once, no seat has more sole wins than games, and no
        score sum is beyond the scores a game can reach).

        >>> from yahtzee_sim import get_rules
        >>> GainAggregate.empty(get_rules("yacht"), 1).check(get_rules("yacht"), 3)
        Traceback (most recent call last):
        ...
        ValueError: the pairs of win shares count 0 games, not 3
        """
        like = GainAggregate.empty(rules, self.pairs.shape[0] - 1)
        for name in ("pairs", "wins", "own", "base"):
            arr, ref = getattr(self, name), getattr(like, name)
            if not isinstance(arr, np.ndarray) or arr.shape != ref.shape or arr.dtype.kind not in "iu" or (arr < 0).any():
                raise ValueError(f"{name} is not a non-negative integer array of shape {ref.shape}")
        if self.score_shift != like.score_shift or self.nanoseconds < 0:
            raise ValueError("the score shift or the time is not one of these rules' tallies")
        if self.n_games != int(n_games):
            raise ValueError(f"the pairs of win shares count {self.n_games} games, not {int(n_games)}")
        games = self.pairs.sum(axis=(1, 2))
        if (self.wins > games).any():
            raise ValueError("a seat has more sole wins than games")
        top = max_total(rules) + self.score_shift
        if any(int(s) > int(g) * top for sums in (self.own, self.base) for s, g in zip(sums, games)):
            raise ValueError("a score sum is larger than the games' highest scores allow")

    def summary(self, seat: int | None = None, level: float = 0.95) -> dict:
        """P(win) with its Wilson interval, win share and paired gain over the baseline with
        their normal intervals (mean +- 1.96 sd / sqrt(n)), and the mean scores, of the
        games played in ``seat`` (None: every seat).

        >>> from yahtzee_sim import get_rules
        >>> agg = GainAggregate.empty(get_rules("yacht"), 1)
        >>> agg.pairs[0, 1, 0], agg.pairs[0, 2, 2] = 3, 1      # 3 games won (baseline lost), 1 tie both times
        >>> agg.wins[0], agg.own[0], agg.base[0] = 3, 100, 80
        >>> s = agg.summary()
        >>> s["games"], s["win_share"], s["gain"], s["mean_score"], round(s["gain_high"] - s["gain"], 6)
        (4, 0.875, 0.75, 25.0, 0.49)
        """
        from ..stats import proportion_ci

        sel = slice(None) if seat is None else slice(seat, seat + 1)
        counts = self.pairs[sel].sum(axis=0)
        n = int(counts.sum())
        if n == 0:
            raise ValueError("no games were played in that seat")
        wins = int(self.wins[sel].sum())
        values = [Fraction(0)] + [Fraction(1, k) for k in range(1, counts.shape[0])]
        share: dict = {}
        gain: dict = {}
        for a, b in zip(*np.nonzero(counts)):
            c = int(counts[a, b])
            share[values[a]] = share.get(values[a], 0) + c
            gain[values[a] - values[b]] = gain.get(values[a] - values[b], 0) + c
        ci = proportion_ci(wins, n, level=level)
        out = {"games": n, "p_win": wins / n, "p_win_low": float(ci.low), "p_win_high": float(ci.high)}
        for name, tally in (("win_share", share), ("gain", gain)):
            mean, half = _mean_half(tally, n)
            out.update({name: mean, f"{name}_low": mean - half, f"{name}_high": mean + half})
        out["mean_score"] = (int(self.own[sel].sum()) - n * self.score_shift) / n
        out["baseline_mean_score"] = (int(self.base[sel].sum()) - n * self.score_shift) / n
        return out


def _share_code(share) -> np.ndarray:
    """0 for no share of the win, k for a share of 1/k."""
    share = np.asarray(share, dtype=np.float64)
    code = np.zeros(share.shape, dtype=np.int64)
    some = share > 0
    code[some] = np.rint(1.0 / share[some]).astype(np.int64)
    if not np.allclose(share[some], 1.0 / code[some], rtol=1e-12, atol=0):
        raise ValueError("a win share is not 1/k of a win")
    return code


def _mean_half(tally: dict, n: int) -> tuple[float, float]:
    """The mean of the values counted in ``tally`` (value -> games) and the half-width
    1.96 sd / sqrt(n) of its 95% normal interval (sd with n - 1), both from exact sums.

    >>> _mean_half({Fraction(1): 1, Fraction(0): 1}, 2)[0], _mean_half({Fraction(1): 1}, 1)[1]
    (0.5, nan)
    """
    mean = sum((v * c for v, c in tally.items()), Fraction(0)) / n
    if n < 2:
        return float(mean), float("nan")
    var = sum((c * (v - mean) ** 2 for v, c in tally.items()), Fraction(0)) / (n - 1)
    # the same float steps as numpy's ``1.96 * x.std(ddof=1) / np.sqrt(len(x))`` on the games
    return float(mean), float(1.96 * np.sqrt(float(var)) / np.sqrt(n))
