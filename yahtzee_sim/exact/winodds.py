"""Exact multiplayer win odds of players whose scores are independent.

Players that do not look at each other's cards play independent solitaire games,
so the chance that a player wins, ties or finishes k-th follows exactly from the
players' score distributions (:func:`~yahtzee_sim.exact.distribution.distribution`).
For player i at score x, every other player j independently scores more than x
(``S_j(x)``), exactly x (``p_j(x)``) or less (``F_j(x - 1)``); the number of
players above and the number level with i are sums of independent Bernoulli
variables, whose laws are small polynomial products, evaluated for every x at once
(O(n^2 * scores) per player).

* ``p_win``: the sole highest score; ``p_tie``: level on the highest score with at
  least one other player; ``win_share``: the expected share of the win when a tie
  for first is split evenly (it sums to 1 over the players);
* ``rank_pmf[i, k]``: P(exactly k players score more than player i), i.e. player i
  finishes at rank k + 1 in the "1224" ranking (ties share the better rank).

Generala's ``servida-wins`` (a served Generala wins at once) is refused: there the
final scores alone do not decide the winner (:func:`require_score_decides`).

>>> import numpy as np
>>> coin = np.array([0.5, 0.5])                     # scores 0 or 1, fair
>>> odds = win_odds([coin, coin])
>>> odds.p_win.tolist(), odds.p_tie.tolist(), odds.win_share.tolist()
([0.25, 0.25], [0.5, 0.5], [0.5, 0.5])
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

__all__ = ["win_odds", "WinOdds", "win_matrix", "MAX_PLAYERS", "require_score_decides"]

MAX_PLAYERS = 20
"""Largest table handled (source 000 names a platform for up to 20 players)."""


def _as_pmf(p, i) -> np.ndarray:
    pmf = getattr(p, "pmf", p)
    pmf = np.asarray(pmf, dtype=np.float64)
    if pmf.ndim != 1 or pmf.size == 0:
        raise ValueError(f"player {i}: a PMF must be a non-empty 1-D array over scores 0, 1, ...")
    if not np.isfinite(pmf).all() or (pmf < 0).any():
        raise ValueError(f"player {i}: probabilities must be finite and non-negative")
    if abs(pmf.sum() - 1.0) > 1e-9:
        raise ValueError(f"player {i}: probabilities sum to {pmf.sum():.12g}, not 1")
    return pmf


@dataclass(frozen=True, eq=False)
class WinOdds:
    """Exact outcome of one table of independent players (see the module docstring).

    Attributes
    ----------
    names : the players (seat order).
    p_win, p_tie, win_share : (n,) per player.
    rank_pmf : (n, n) P(player i has exactly k players above it).
    means : (n,) expected scores; seconds : time taken.
    """

    names: tuple
    p_win: np.ndarray
    p_tie: np.ndarray
    win_share: np.ndarray
    rank_pmf: np.ndarray = field(repr=False)
    means: np.ndarray = field(repr=False)
    seconds: float = 0.0

    @property
    def p_lose(self) -> np.ndarray:
        """P(at least one player scores strictly more)."""
        return 1.0 - self.p_win - self.p_tie

    @property
    def expected_rank(self) -> np.ndarray:
        """Mean rank (1 = first; ties share the better rank)."""
        return self.rank_pmf @ np.arange(1, len(self.names) + 1)

    def to_frame(self):
        """One row per seat: mean score, P(win), P(tie for first), win share, P(lose),
        mean rank and P(rank = k) for every k.

        >>> win_odds([[0.5, 0.5], [1.0]], names=["coin", "zero"]).to_frame()["p_win"].tolist()
        [0.5, 0.0]
        """
        import pandas as pd

        frame = pd.DataFrame({"mean_score": self.means, "p_win": self.p_win, "p_tie": self.p_tie,
                              "win_share": self.win_share, "p_lose": self.p_lose,
                              "expected_rank": self.expected_rank},
                             index=pd.Index(list(self.names), name="player"))
        for k in range(len(self.names)):
            frame[f"p_rank_{k + 1}"] = self.rank_pmf[:, k]
        return frame

    def summary(self) -> dict:
        """Plain dict (JSON-able) of the per-player numbers."""
        return {"players": [
            {"player": n, "mean_score": float(m), "p_win": float(w), "p_tie": float(t),
             "win_share": float(s), "p_lose": float(lo), "rank_pmf": r.tolist()}
            for n, m, w, t, s, lo, r in zip(self.names, self.means, self.p_win, self.p_tie,
                                            self.win_share, self.p_lose, self.rank_pmf)]}


def require_score_decides(rules) -> None:
    """Refuse rule sets where the final scores do not decide the winner: under
    Generala's ``servida-wins`` a served Generala wins at once, so the odds depend on
    when each player makes one, which the score distributions do not hold.

    >>> from yahtzee_sim.rules import get_rules
    >>> require_score_decides(get_rules("generala"))
    >>> require_score_decides(get_rules("generala", ["servida-wins"]))
    Traceback (most recent call last):
    ...
    ValueError: exact win odds do not handle generala+servida-wins: a served Generala wins at once, so the winner is not decided by the final scores alone; simulate the table (yahtzee-sim head-to-head without --exact)
    """
    if rules is not None and "servida-wins" in getattr(rules, "options", ()):
        raise ValueError(f"exact win odds do not handle {rules.key}: a served Generala wins at once, "
                         f"so the winner is not decided by the final scores alone; simulate the "
                         f"table (yahtzee-sim head-to-head without --exact)")


def win_odds(pmfs, names=None) -> WinOdds:
    """Exact P(win), P(tie), win share and rank distribution of 2..20 independent players.

    ``pmfs``: per player a PMF over the scores 0, 1, 2, ... (an array or anything
    with a ``pmf`` attribute, e.g. a :class:`~yahtzee_sim.exact.distribution.ScoreDistribution`).

    >>> odds = win_odds([[0.0, 1.0], [0.5, 0.5], [1.0]], names=["one", "coin", "zero"])
    >>> odds.p_win.tolist(), odds.rank_pmf[2].tolist()
    ([0.5, 0.0, 0.0], [0.0, 0.5, 0.5])
    """
    t0 = time.perf_counter()
    pmfs = list(pmfs)
    n = len(pmfs)
    if not 1 <= n <= MAX_PLAYERS:
        raise ValueError(f"win_odds takes 1 to {MAX_PLAYERS} players, got {n}")
    if names is None:
        names = [getattr(p, "strategy", f"player {i + 1}") for i, p in enumerate(pmfs)]
        if len(set(names)) < n:
            names = [f"{nm} (seat {i + 1})" for i, nm in enumerate(names)]
    names = tuple(str(x) for x in names)
    if len(names) != n:
        raise ValueError(f"{len(names)} names for {n} players")
    for p in pmfs:
        require_score_decides(getattr(p, "rules", None))
    arrs = [_as_pmf(p, i) for i, p in enumerate(pmfs)]
    width = max(len(a) for a in arrs)
    P = np.zeros((n, width))
    for i, a in enumerate(arrs):
        P[i, :len(a)] = a
    below = np.cumsum(P, axis=1) - P              # P(X_j < x)
    above = np.clip(1.0 - below - P, 0.0, 1.0)    # P(X_j > x)
    below = np.clip(below, 0.0, 1.0)
    p_win, p_tie, share = np.zeros(n), np.zeros(n), np.zeros(n)
    rank = np.zeros((n, n))
    for i in range(n):
        # over the other players, for every score x of player i, as polynomials in z:
        # prod_j (F_j(x-1) + p_j(x) + S_j(x) z): z^a <-> exactly a players above;
        # prod_j (F_j(x-1) + p_j(x) z): z^t <-> nobody above and exactly t level
        n_above = np.zeros((n, width))
        n_above[0] = 1.0
        n_level = np.zeros((n, width))
        n_level[0] = 1.0
        for j in range(n):
            if j == i:
                continue
            not_above = below[j] + P[j]
            n_above[1:] = n_above[1:] * not_above + n_above[:-1] * above[j]
            n_above[0] *= not_above
            n_level[1:] = n_level[1:] * below[j] + n_level[:-1] * P[j]
            n_level[0] *= below[j]
        w = P[i]
        rank[i] = n_above @ w
        first = n_level * w                         # (t, x)
        p_win[i] = first[0].sum()
        p_tie[i] = first[1:].sum()
        share[i] = (first.sum(axis=1) / np.arange(1, n + 1)).sum()
    means = P @ np.arange(width)
    return WinOdds(names, p_win, p_tie, share, rank, means, time.perf_counter() - t0)


def win_matrix(pmfs, names=None):
    """Two-player exact table: row player's P(win), P(tie) against each column player.

    Returns ``(win, tie)`` pandas DataFrames (diagonal: a strategy against itself).

    >>> win, tie = win_matrix([[0.5, 0.5], [0.0, 1.0]], names=["coin", "one"])
    >>> float(win.loc["coin", "one"]), float(tie.loc["coin", "one"]), float(win.loc["one", "coin"])
    (0.0, 0.5, 0.5)
    """
    import pandas as pd

    pmfs = list(pmfs)
    if names is None:
        names = [getattr(p, "strategy", f"player {i + 1}") for i, p in enumerate(pmfs)]
    names = [str(x) for x in names]
    win = pd.DataFrame(index=pd.Index(names, name="player"), columns=names, dtype=float)
    tie = win.copy()
    for a, pa in zip(names, pmfs):
        for b, pb in zip(names, pmfs):
            odds = win_odds([pa, pb], names=["a", "b"])
            win.loc[a, b] = odds.p_win[0]
            tie.loc[a, b] = odds.p_tie[0]
    return win, tie
