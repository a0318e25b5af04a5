"""Result objects: mergeable aggregates plus, for modest runs, the per-game data.

Over 600 lines: the aggregates of solitaire games and of tables, the summaries and the
events read off them are one vocabulary (the names ``simulate``, the JSON and the reports
share); split, each part would import the others' names.

Aggregates are exact integer histograms, so means, standard deviations and
quantiles are exact for the games played however many there were, and merging
two runs is adding arrays (associative and order independent).

>>> from yahtzee_sim import simulate
>>> res = simulate("yahtzee", "keep-largest", 3000, seed=7)
>>> df = res.to_frame()
>>> int(df["total"].sum()) == int(res.aggregate.total_sum)
True
"""

from __future__ import annotations

import math
import dataclasses
from dataclasses import dataclass, field
from fractions import Fraction

from typing import TYPE_CHECKING

import numpy as np

from .intervals import binomial_interval, check_level, t_interval
from .rules import RuleSet

if TYPE_CHECKING:
    from .engine import SpawnedSeed
if TYPE_CHECKING:  # pandas is imported where a table is made: start-up stays fast
    import pandas as pd

__all__ = ["GameAggregate", "TableAggregate", "table_outcomes", "win_share", "SimulationResult", "Summary", "TurnsResult", "games_frame", "max_total", "min_total",
           "PERCENTILES", "RATES", "OLD_NAMES"]

PERCENTILES = (1, 5, 25, 50, 75, 95, 99)

RATES = {
    "upper_bonus": "share of games that earned the upper-section bonus",
    "five_box_full": "share of games with the five-of-a-kind box's full plain value in it ({five_box})",
    "five_rolled": "share of games with at least one turn ending in five of a kind "
                   "(the chance of rolling one in a game)",
}
"""The rates of :meth:`SimulationResult.rate`: ``summary()`` key ``NAME_rate`` each."""

OLD_NAMES = {"five_box_50": "five_box_full"}
"""Earlier names of events, still accepted by :meth:`SimulationResult.count` (and
``five_box_50_rate`` read from a :class:`Summary`): the box's full value is not always 50."""


def ci_of(key: str) -> str | None:
    """The number a ``NAME_ci95_low`` (``_ci95_high``, ``_ci_low``, ``_ci_high``) key bounds, else None."""
    for end in ("_ci95_low", "_ci95_high", "_ci_low", "_ci_high"):
        if key.endswith(end) and len(key) > len(end):
            return key[:-len(end)]
    return None


def _has_column_scores(rules: RuleSet) -> bool:
    """Is the card scored column by column as Yamb's is (summaries then report each column)?"""
    from .rules import catalog

    return rules.card_score is catalog.yamb_score


def _hist_mean_ci(hist: np.ndarray, values: np.ndarray, level: float) -> tuple[float, float, float, float]:
    """Mean, sd and the t interval of the mean of the values a histogram counts."""
    n = int(hist.sum())
    mean = float(np.dot(values, hist) / n)
    if n < 2:
        return mean, float("nan"), float("nan"), float("nan")
    sd = math.sqrt(float(np.dot((values - mean) ** 2, hist) / (n - 1)))
    return (mean, sd, *t_interval(mean, sd, n, level))


def dice_word(n_dice: int) -> str:
    """``five of a kind`` for five dice, ``six of a kind`` for six: what "all dice alike" is called."""
    return {4: "four", 5: "five", 6: "six", 7: "seven"}.get(n_dice, str(n_dice)) + " of a kind"


class Summary(dict):
    """The numbers of one run by name (a ``dict``: ``s["mean"]``), with what each is.

    :meth:`to_frame` gives value, kind (``rate``: a share of games in [0, 1];
    ``mean count``: an average number per game, may exceed 1; ...) and meaning.
    The JSON of ``yahtzee-sim simulate`` uses the same names.
    """

    # earlier names, still readable (users' scripts); the JSON of ``simulate`` keeps them beside
    ALIASES = {"five_per_game": "five_count_mean", "five_box_50_rate": "five_box_full_rate",
               "five_box_50_rate_ci95_low": "five_box_full_rate_ci95_low",
               "five_box_50_rate_ci95_high": "five_box_full_rate_ci95_high"}

    def __init__(self, values: dict, level: float = 0.95, five_box: str | None = None,
                 labels: dict[str, tuple[str, str]] | None = None):
        super().__init__(values)
        self.level = level
        self.five_box = five_box or "five-of-a-kind box"
        # key -> (short label of the terminal table, meaning): the game's own events
        self.labels = dict(labels or {})

    def __missing__(self, key):
        if key in self.ALIASES:
            return self[self.ALIASES[key]]
        raise KeyError(key)

    def kind(self, key: str) -> str:
        if ci_of(key):
            return f"{self.kind(ci_of(key))} interval"
        if key.endswith("_rate"):
            return "rate"
        if key == "five_count_mean" or key.startswith("saved_throws_"):
            return "mean count"
        if key.endswith("_column_mean"):
            return "score"
        if key in ("rules", "strategy", "seed"):
            return "setting"
        if key in ("games",):
            return "count"
        if key in ("points_mean", "points_sd"):
            return "points"
        if key == "seconds":
            return "time"
        return "score"

    def label(self, key: str) -> str:
        """The short label of ``key`` in ``yahtzee-sim simulate``'s table."""
        if key in self.labels:
            return self.labels[key][0]
        return {"upper_bonus_rate": "upper bonus", "five_rolled_rate": "five of a kind rolled at least once",
                "five_count_mean": "turns ending in five of a kind (a count, not a chance)",
                "points_mean": "Balut's points", "points_sd": "sd of the points"}.get(key, key)

    def meaning(self, key: str) -> str:
        pct = f"{self.level:.0%}"
        if ci_of(key):
            end = "low" if key.endswith("_low") else "high"
            return f"{pct} CI of {ci_of(key)}, {end} end"
        if key in self.labels:
            return self.labels[key][1]
        fixed = {
            "rules": "rule set key", "strategy": "strategy", "games": "games played",
            "seed": "seed of the run (pass it back to reproduce it)",
            "mean": "mean final score", "sd": "standard deviation of the final score",
            "se": "standard error of the mean", "ci95_low": "95% CI of the mean, low end",
            "ci95_high": "95% CI of the mean, high end", "ci_low": f"{pct} CI of the mean, low end",
            "ci_high": f"{pct} CI of the mean, high end", "min": "lowest final score",
            "max": "highest final score",
            "five_count_mean": "mean number of turns per game ending in five of a kind "
                               "(a mean count, not a chance)",
            "seconds": "wall-clock seconds of the run",
            "points_mean": "mean points of a game (Balut's points, beside its score)",
            "points_sd": "standard deviation of a game's points",
            "served_five_rate": "share of games with a five of a kind made by the first throw "
                                "(a Generala servida, which wins at once under servida-wins)",
        }
        if key in fixed:
            return fixed[key]
        if key.startswith("p") and key[1:].isdigit():
            n = int(key[1:])
            suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
            return f"{n}{suffix} percentile of the final score"
        if key.endswith("_rate") and key[:-5] in RATES:
            return RATES[key[:-5]].format(five_box=self.five_box)
        return key

    def to_frame(self) -> "pd.DataFrame":
        """One row per number: value, kind and meaning."""
        import pandas as pd

        return pd.DataFrame({"value": pd.Series(dict(self), dtype=object),
                             "kind": [self.kind(k) for k in self],
                             "meaning": [self.meaning(k) for k in self]}).rename_axis("name")

    def __repr__(self) -> str:
        return f"Summary({dict.__repr__(self)})"


def max_total(rules: RuleSet) -> int:
    """An upper bound on any final score of ``rules`` (sizes the histograms)."""
    if rules.card_score is not None:
        return int(rules.card_score_range[1])
    box_max = int(rules.score_tables.max(axis=(0, 1)).sum()) + int(np.clip(rules.joker_points, 0, None).sum())
    return box_max + rules.upper_bonus + rules.five_bonus * rules.n_boxes


def games_frame(rules: RuleSet, games: dict[str, np.ndarray], first_game: int = 0) -> "pd.DataFrame":
    """The per-game table of :meth:`SimulationResult.to_frame` for ``games`` numbered from ``first_game``.

    Streamed output (``simulate(..., out=FILE)``) writes these chunk by chunk.
    """
    import pandas as pd

    frame = pd.DataFrame(games["box_scores"], columns=list(rules.box_names))
    frame.insert(0, "total", games["total"])
    frame["upper_total"] = games["upper_total"]
    frame["upper_bonus"] = games["upper_bonus"]
    frame["five_bonus_count"] = games["five_bonus_count"]
    frame["five_count"] = games["five_count"]
    if "points" in games:  # Balut: the points beside the score
        frame["points"] = games["points"]
    if first_game:
        frame.index = pd.RangeIndex(first_game, first_game + len(frame))
    frame.index.name = "game"
    return frame


def min_total(rules: RuleSet) -> int:
    """A lower bound on any final score: 0, or less where a card's score may be negative (Yamb)."""
    return min(0, int(rules.card_score_range[0])) if rules.card_score is not None else 0


def _check_counts(agg, like) -> None:
    """Raise ``ValueError`` unless every array of the aggregate ``agg`` is a non-negative
    integer array of the shape ``like``'s has (``like``: the empty aggregate of the same
    rules) and every ``*_shift`` is ``like``'s: the check a loaded
    :class:`GameAggregate` and :class:`TableAggregate` share before their own identities.

    >>> from yahtzee_sim import get_rules
    >>> like = TableAggregate.empty(get_rules("yacht"), 2)
    >>> _check_counts(dataclasses.replace(like, total_shift=1), like)
    Traceback (most recent call last):
    ...
    ValueError: total_shift: the histogram is shifted differently from this rule set's
    """
    for f in dataclasses.fields(agg):
        value, ref = getattr(agg, f.name), getattr(like, f.name)
        if isinstance(ref, np.ndarray):
            if not isinstance(value, np.ndarray) or value.shape != ref.shape or value.dtype.kind not in "iu":
                raise ValueError(f"{f.name} must be an integer array of shape {ref.shape}")
            if (value < 0).any():
                raise ValueError(f"{f.name} has a negative count")
        elif f.name.endswith("_shift") and value != ref:
            raise ValueError(f"{f.name}: the histogram is shifted differently from this rule set's")


@dataclass
class GameAggregate:
    """Exact, mergeable summary of many finished games.

    total_hist[s] : games with final score s.
    box_hist[b, s] : games with s points in box b.
    upper_hist[u] : games with upper-section total u.
    five_bonus_hist[k] : games with k five-of-a-kind bonuses.
    five_count_hist[k] : games with k turns ending in five of a kind.
    five_box_full_games : games whose five-of-a-kind box holds its full value.
    fill_turn_hist[b, t] : games that filled box b in turn t (1..B).
    total_shift : total_hist[i] counts the score i - total_shift (0 unless scores can be
        negative, as in Yamb).
    points_hist[i], points_shift : games with i - points_shift points (Balut; empty for
        rule sets without points).
    served_five_games : games with a five of a kind made by the first throw (Generala's
        servida, which wins at once under ``servida-wins``).
    column_hist[c, i], column_shift : games whose column c scored i - column_shift (Yamb's
        four columns; empty for other rule sets).
    column_bonus_games[c] : games whose column c earned its upper bonus (Yamb).
    bank_used_hist[k], bank_left_hist[k] : games that spent k saved throws, and that ended
        with k saved throws never used (Maxi Yatzy; empty without saved throws).
    """

    total_hist: np.ndarray
    box_hist: np.ndarray
    upper_hist: np.ndarray
    five_bonus_hist: np.ndarray
    five_count_hist: np.ndarray
    fill_turn_hist: np.ndarray
    five_box_full_games: int = 0
    total_shift: int = 0
    points_hist: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    points_shift: int = 0
    served_five_games: int = 0
    column_hist: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    column_shift: int = 0
    column_bonus_games: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    bank_used_hist: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    bank_left_hist: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @classmethod
    def empty(cls, rules: RuleSet) -> "GameAggregate":
        box_max = int(max(rules.score_tables.max(), rules.joker_points.max()))
        upper_max = rules.max_upper_box * int(rules.is_upper.sum())
        low, high = rules.card_points_range if rules.has_points else (0, -1)
        n_cols = len(rules.columns) if _has_column_scores(rules) else 0
        col_low, col_high = (rules.card_score_range[0] // n_cols, rules.card_score_range[1] // n_cols) \
            if n_cols else (0, -1)
        # each turn saves at most the throws it does not make
        banks = (rules.n_rolls - 1) * rules.n_boxes + 1 if rules.banked_throws else 0
        return cls(
            column_hist=np.zeros((n_cols, col_high - col_low + 1), dtype=np.int64),
            column_shift=-col_low,
            column_bonus_games=np.zeros(n_cols, dtype=np.int64),
            bank_used_hist=np.zeros(banks, dtype=np.int64),
            bank_left_hist=np.zeros(banks, dtype=np.int64),
            total_hist=np.zeros(max_total(rules) - min_total(rules) + 1, dtype=np.int64),
            total_shift=-min_total(rules),
            points_hist=np.zeros(high - low + 1, dtype=np.int64),
            points_shift=-low if rules.has_points else 0,
            box_hist=np.zeros((rules.n_boxes, box_max + 1), dtype=np.int64),
            upper_hist=np.zeros(upper_max + 1, dtype=np.int64),
            five_bonus_hist=np.zeros(rules.n_boxes + 1, dtype=np.int64),
            five_count_hist=np.zeros(rules.n_boxes + 1, dtype=np.int64),
            fill_turn_hist=np.zeros((rules.n_boxes, rules.n_boxes + 1), dtype=np.int64),
        )

    @classmethod
    def from_games(cls, rules: RuleSet, games: dict[str, np.ndarray]) -> "GameAggregate":
        agg = cls.empty(rules)
        agg.total_hist += np.bincount(np.asarray(games["total"]) + agg.total_shift, minlength=len(agg.total_hist))
        if rules.has_points:
            agg.points_hist += np.bincount(np.asarray(games["points"]) + agg.points_shift,
                                           minlength=len(agg.points_hist))
        for b in range(rules.n_boxes):
            agg.box_hist[b] += np.bincount(games["box_scores"][:, b], minlength=agg.box_hist.shape[1])
        agg.upper_hist += np.bincount(games["upper_total"], minlength=len(agg.upper_hist))
        agg.five_bonus_hist += np.bincount(games["five_bonus_count"], minlength=len(agg.five_bonus_hist))
        agg.five_count_hist += np.bincount(games["five_count"], minlength=len(agg.five_count_hist))
        for b in range(rules.n_boxes):
            agg.fill_turn_hist[b] += np.bincount(games["fill_turn"][:, b], minlength=rules.n_boxes + 1)
        agg.five_box_full_games = int(games["five_box_full"].sum())
        if "served_five_count" in games:
            agg.served_five_games = int((np.asarray(games["served_five_count"]) > 0).sum())
        if len(agg.column_bonus_games):
            from .rules.catalog import yamb_columns

            scores, earned = yamb_columns(games["box_scores"])
            for c in range(scores.shape[1]):
                agg.column_hist[c] += np.bincount(scores[:, c] + agg.column_shift, minlength=agg.column_hist.shape[1])
            agg.column_bonus_games += earned.sum(axis=0)
        if len(agg.bank_used_hist):
            agg.bank_used_hist += np.bincount(games["bank_used"], minlength=len(agg.bank_used_hist))
            agg.bank_left_hist += np.bincount(games["bank_left"], minlength=len(agg.bank_left_hist))
        return agg

    def merge(self, other: "GameAggregate") -> "GameAggregate":
        """A new aggregate of both runs' games."""
        return GameAggregate(
            total_hist=self.total_hist + other.total_hist,
            box_hist=self.box_hist + other.box_hist,
            upper_hist=self.upper_hist + other.upper_hist,
            five_bonus_hist=self.five_bonus_hist + other.five_bonus_hist,
            five_count_hist=self.five_count_hist + other.five_count_hist,
            fill_turn_hist=self.fill_turn_hist + other.fill_turn_hist,
            five_box_full_games=self.five_box_full_games + other.five_box_full_games,
            total_shift=self.total_shift,
            points_hist=self.points_hist + other.points_hist,
            points_shift=self.points_shift,
            served_five_games=self.served_five_games + other.served_five_games,
            column_hist=self.column_hist + other.column_hist,
            column_shift=self.column_shift,
            column_bonus_games=self.column_bonus_games + other.column_bonus_games,
            bank_used_hist=self.bank_used_hist + other.bank_used_hist,
            bank_left_hist=self.bank_left_hist + other.bank_left_hist,
        )

    def check(self, rules: RuleSet, n_games: int) -> None:
        """Raise ``ValueError`` (naming the first problem) unless this is a possible summary
        of ``n_games`` finished games of ``rules``.

        Every histogram counts each game once, no count is negative, each turn fills one
        box, and the totals add up: the points of all games equal their box points plus
        upper bonuses plus five-of-a-kind bonuses, and the upper totals equal the upper
        boxes' points (exact integer identities of the engine's bookkeeping).

        >>> from yahtzee_sim import get_rules, simulate
        >>> r = get_rules("yacht")
        >>> agg = simulate(r, "random", 1000, seed=1).aggregate
        >>> agg.check(r, 1000)
        >>> agg.total_hist[50] += 1; agg.total_hist[40] -= 1   # one game moved from 40 to 50 points
        >>> agg.check(r, 1000)
        Traceback (most recent call last):
        ...
        ValueError: the totals do not add up: 10 points more than the boxes and bonuses
        """
        _check_counts(self, GameAggregate.empty(rules))
        n = int(n_games)
        if rules.has_points and int(self.points_hist.sum()) != n:
            raise ValueError(f"points_hist counts {int(self.points_hist.sum())} games, not {n}")
        if not 0 <= int(self.served_five_games) <= n:
            raise ValueError(f"served_five_games must be between 0 and {n}, got {self.served_five_games}")
        if not 0 <= int(self.five_box_full_games) <= n:
            raise ValueError(f"five_box_full_games must be between 0 and {n}, got {self.five_box_full_games}")
        if (self.column_bonus_games > n).any():
            raise ValueError(f"column_bonus_games counts more than the {n} games")
        for name in ("total_hist", "upper_hist", "five_bonus_hist", "five_count_hist", "bank_used_hist",
                     "bank_left_hist"):
            got = int(getattr(self, name).sum())
            if got != n and len(getattr(self, name)):
                raise ValueError(f"{name} counts {got} games, not {n}")
        if len(self.column_hist) and (self.column_hist.sum(axis=1) != n).any():
            raise ValueError(f"column_hist does not count each of the {n} games once per column")
        for name in ("box_hist", "fill_turn_hist"):
            per_box = getattr(self, name).sum(axis=1)
            if (per_box != n).any():
                raise ValueError(f"{name} counts {int(per_box[per_box != n][0])} games in a box, not {n}")
        per_turn = self.fill_turn_hist.sum(axis=0)
        if per_turn[0] != 0 or (per_turn[1:] != n).any():
            raise ValueError("fill_turn_hist does not fill exactly one box per turn")
        points = np.arange(self.box_hist.shape[1], dtype=np.int64)
        box_points = self.box_hist @ points
        upper = np.arange(len(self.upper_hist), dtype=np.int64)
        if int(upper @ self.upper_hist) != int(box_points[rules.is_upper].sum()):
            raise ValueError("the upper totals do not add up to the upper boxes' points")
        if rules.card_score is not None:   # a score of the whole card (Yamb): no sum to check
            return
        bonuses = np.asarray(rules.final_bonus(upper), dtype=np.int64) @ self.upper_hist
        fives = rules.five_bonus * int(np.arange(len(self.five_bonus_hist), dtype=np.int64) @ self.five_bonus_hist)
        excess = self.total_sum - (int(box_points.sum()) + int(bonuses) + fives)
        if excess:
            raise ValueError(f"the totals do not add up: {excess} points "
                             f"{'more' if excess > 0 else 'fewer'} than the boxes and bonuses")

    @property
    def n_games(self) -> int:
        return int(self.total_hist.sum())

    @property
    def scores(self) -> np.ndarray:
        """(S,) the score each entry of ``total_hist`` counts."""
        return np.arange(len(self.total_hist), dtype=np.int64) - self.total_shift

    @property
    def total_sum(self) -> int:
        return int(np.dot(self.scores, self.total_hist))

    def points_mean(self) -> float:
        """Mean points per game (Balut)."""
        pts = np.arange(len(self.points_hist), dtype=np.int64) - self.points_shift
        return float(np.dot(pts, self.points_hist) / self.n_games)

    def points_sd(self) -> float:
        """Sample sd (ddof=1) of the points per game (Balut)."""
        n = self.n_games
        if n < 2:
            return float("nan")
        pts = np.arange(len(self.points_hist), dtype=np.float64) - self.points_shift
        return math.sqrt(float(np.dot((pts - self.points_mean()) ** 2, self.points_hist) / (n - 1)))

    def mean(self) -> float:
        return self.total_sum / self.n_games

    def var(self) -> float:
        """Sample variance (ddof=1) of the final score."""
        n = self.n_games
        if n < 2:
            return float("nan")
        s = self.scores.astype(np.float64)
        m = self.mean()
        return float(np.dot((s - m) ** 2, self.total_hist) / (n - 1))

    def quantile(self, q: float) -> int:
        """Exact quantile of the games played (inverted CDF: smallest s with F(s) >= q)."""
        cdf = np.cumsum(self.total_hist)
        # Integer threshold ceil(q * n), with q read as the decimal it stands for (0.01 -> 1/100).
        k = math.ceil(Fraction(q).limit_denominator(10**9) * int(cdf[-1]))
        return int(np.searchsorted(cdf, max(k, 1))) - self.total_shift

    def mean_fill_turn(self) -> np.ndarray:
        """(B,) average turn (1..B) in which each box was filled."""
        turns = np.arange(self.fill_turn_hist.shape[1])
        return self.fill_turn_hist @ turns / self.n_games

    def __repr__(self) -> str:
        return f"GameAggregate(games={self.n_games:,}, mean={self.mean():.3f})" if self.n_games else \
            "GameAggregate(games=0)"

    def box_means(self) -> np.ndarray:
        pts = np.arange(self.box_hist.shape[1])
        return self.box_hist @ pts / self.n_games


@dataclass
class SimulationResult:
    """Games played by :func:`yahtzee_sim.simulate`.

    ``games`` holds the per-game arrays (total, box_scores, upper_total, upper_bonus,
    five_bonus_count, five_count, five_box_full) when the run kept them; the
    ``aggregate`` is always there. ``seed`` is the run's seed (an integer, or a
    :class:`~yahtzee_sim.engine.SpawnedSeed` for a run seeded by a spawned
    ``SeedSequence``): pass it back as ``seed=`` to reproduce the run exactly.
    """

    rules: RuleSet
    strategy: str
    n_games: int
    seed: int | SpawnedSeed
    aggregate: GameAggregate
    games: dict[str, np.ndarray] | None = field(default=None, repr=False)
    seconds: float = float("nan")

    # -- tables -------------------------------------------------------------------
    def to_frame(self) -> "pd.DataFrame":
        """One row per game: total, each box's points, upper total and bonuses."""
        if self.games is None:
            raise ValueError("this run kept only aggregates; rerun with keep_games=True for per-game rows")
        return games_frame(self.rules, self.games)

    def summary(self, level: float = 0.95) -> "Summary":
        """Mean, sd, standard error, CI of the mean, extremes, percentiles, rates and
        the mean count of five-of-a-kind turns, as a :class:`Summary` (a dict whose
        :meth:`Summary.to_frame` says what each number is).

        >>> from yahtzee_sim import simulate
        >>> s = simulate("yahtzee", "keep-largest", 2000, seed=3).summary()
        >>> s["five_rolled_rate"] <= s["five_count_mean"]  # a chance vs a mean count
        True
        >>> s.to_frame().loc["five_rolled_rate", "kind"]
        'rate'
        """
        agg = self.aggregate
        n = agg.n_games
        mean = agg.mean()
        level = check_level(level)
        if n > 1:
            sd = math.sqrt(agg.var())
            se = sd / math.sqrt(n)
            low, high = t_interval(mean, sd, n, level)
        else:
            sd = se = low = high = float("nan")
        nonzero = np.flatnonzero(agg.total_hist)
        out = {
            "rules": self.rules.key,
            "strategy": self.strategy,
            "games": n,
            "seed": self.seed,
            "mean": mean,
            "sd": sd,
            "se": se,
            "ci95_low" if level == 0.95 else "ci_low": low,
            "ci95_high" if level == 0.95 else "ci_high": high,
            "min": int(nonzero[0]) - agg.total_shift,
        }
        for p in PERCENTILES:
            out[f"p{p}"] = agg.quantile(p / 100)
        out["max"] = int(nonzero[-1]) - agg.total_shift
        ci = ("_ci95_low", "_ci95_high") if level == 0.95 else ("_ci_low", "_ci_high")
        labels = {}
        # Each rate the game has, with its Wilson interval: a game without an upper bonus
        # (Generala, Balut, Yamb) or without a fixed five-of-a-kind box has no line for it.
        for what, (label, meaning) in self.events().items():
            out[f"{what}_rate"] = self.rate(what)
            out[f"{what}_rate{ci[0]}"], out[f"{what}_rate{ci[1]}"] = self.ci(what, level)
            labels[f"{what}_rate"] = (label, meaning)
        means = {"five_count": (agg.five_count_hist, np.arange(len(agg.five_count_hist)))}
        word = dice_word(self.rules.n_dice)
        labels["five_count_mean"] = (f"turns ending in {word}", f"mean number of turns per game ending in {word} "
                                                                "(a mean count, not a chance)")
        if self.rules.has_points:   # Balut: the points beside the score
            means["points"] = (agg.points_hist, np.arange(len(agg.points_hist)) - agg.points_shift)
        for c, col in enumerate(self.rules.columns if len(agg.column_hist) else ()):   # Yamb's columns
            means[f"{col.name}_column"] = (agg.column_hist[c], np.arange(agg.column_hist.shape[1]) - agg.column_shift)
            labels[f"{col.name}_column_mean"] = (f"{col.name.capitalize()} column's score",
                                                 f"mean score of the {col.name} column (its rows, bonus and "
                                                 f"(Max - Min) x Ones)")
        if len(agg.bank_used_hist):   # Maxi Yatzy's saved throws
            k = np.arange(len(agg.bank_used_hist))
            means["saved_throws_used"] = (agg.bank_used_hist, k)
            means["saved_throws_left"] = (agg.bank_left_hist, k)
            labels["saved_throws_used_mean"] = ("saved throws spent",
                                                "mean number of saved throws a game spent")
            labels["saved_throws_left_mean"] = ("saved throws never used",
                                                "mean number of saved throws still unused when the game ended")
        for name, (hist, values) in means.items():
            mean, sd, low, high = _hist_mean_ci(hist, values.astype(np.float64), level)
            out[f"{name}_mean"] = mean
            out[f"{name}_mean{ci[0]}"], out[f"{name}_mean{ci[1]}"] = low, high
            if name == "points":
                out["points_sd"] = sd
        out["seconds"] = self.seconds
        return Summary(out, level=level, five_box=self.rules.five_box, labels=labels)

    def events(self) -> dict[str, tuple[str, str]]:
        """The events this game has, as ``name -> (label, meaning)``: each is a :meth:`count`
        and a ``NAME_rate`` of :meth:`summary`.

        Upper bonus (each tier of a tiered one, as Kismet's), the five-of-a-kind box scored
        (its plain value: Generala's served 60 is its own event), each combination served
        into its box and the doble paid (Generala), all dice alike at least once, a served
        five of a kind (Generala), each column's bonus (Yamb).

        >>> from yahtzee_sim import simulate
        >>> list(simulate("generala", "random", 200, seed=1).events())[:3]
        ['five_box_full', 'served_escalera', 'served_full']
        >>> "upper_bonus" in simulate("balut", "random", 20, seed=1).events()
        False
        """
        r = self.rules
        out = {}
        tiers = r.upper_bonus_tiers
        if tiers:
            out["upper_bonus"] = ("upper bonus", RATES["upper_bonus"])
        for threshold, bonus in tiers[1:]:
            out[f"upper_bonus_{bonus}"] = (f"upper bonus {bonus} (upper total {threshold} or more)",
                                           f"share of games whose upper total reached {threshold} (a bonus of {bonus})")
        boxes = {b.name: b for b in r.boxes}
        if r.five_box is not None:
            label = boxes[r.five_box].label
            out["five_box_full"] = (f"{r.five_box_points} in {label}",
                                    f"share of games with {r.five_box_points} in the {label} box"
                                    + (" (not served)" if self._served_points(r.five_box_index) else ""))
        for b, box in enumerate(r.boxes):
            served = self._served_points(b)
            if served:
                out[f"served_{box.name}"] = (f"{box.label} served ({served})",
                                             f"share of games whose {box.label} box holds a served {box.label} "
                                             f"(made by the first throw: {served})")
            if box.needs_five_box:
                paid = int(r.score_table[:, b].max())
                out[box.name] = (f"{box.label} paid ({paid})", f"share of games whose {box.label} box pays {paid}")
        word = dice_word(r.n_dice)
        out["five_rolled"] = (f"{word} rolled at least once",
                              RATES["five_rolled"].replace("five of a kind", word))
        if r.roll_dependent and r.five_box is not None:   # Generala's servida
            label = boxes[r.five_box].label
            out["served_five"] = (f"{label} served at least once",
                                  f"share of games with a {word} made by the first throw (a served {label}, "
                                  "which wins at once under servida-wins)")
        for c, col in enumerate(r.columns if _has_column_scores(r) else ()):
            out[f"{col.name}_column_bonus"] = (f"{col.name.capitalize()} column's bonus",
                                               f"share of games whose {col.name} column earned its upper bonus")
        return out

    def _served_points(self, b: int) -> int:
        """What box ``b`` pays for a served combination when that is more than otherwise, else 0."""
        r = self.rules
        if not r.roll_dependent or not r.boxes[b].by_throw:
            return 0
        first, last = int(r.score_tables[0, :, b].max()), int(r.score_tables[-1, :, b].max())
        return first if first > last else 0

    def summary_frame(self) -> "pd.DataFrame":
        """:meth:`summary` as a table: value, kind and meaning of each number."""
        return self.summary().to_frame()

    def __repr__(self) -> str:
        s = self.summary()
        return (f"SimulationResult({self.rules.key!r}, {self.strategy!r}, games={self.n_games:,}, "
                f"seed={self.seed}: mean {s['mean']:.3f}, 95% CI {s['ci95_low']:.3f}..{s['ci95_high']:.3f}, "
                f"five_rolled_rate {s['five_rolled_rate']:.4f})")

    def box_frame(self) -> "pd.DataFrame":
        """Average points and rate of zero per box."""
        import pandas as pd

        agg = self.aggregate
        return pd.DataFrame(
            {"mean": agg.box_means(), "zero_rate": agg.box_hist[:, 0] / agg.n_games,
             "mean_fill_turn": agg.mean_fill_turn()},
            index=pd.Index(self.rules.box_names, name="box"),
        )

    # -- derived numbers -------------------------------------------------------------
    def count(self, what: str) -> int:
        """Number of games with: ``upper_bonus``, ``five_box_full`` (the five-of-a-kind box's
        full plain value, 50 in the Yahtzee/Yacht box; ``five_box_50``, its earlier name, still
        works), ``five_rolled`` (at least one turn ended in five of a kind), see :data:`RATES`,
        ``served_five`` (a five of a kind made by the first throw: a Generala servida), or any
        other event of :meth:`events`.

        >>> from yahtzee_sim import simulate
        >>> res = simulate("yacht", "keep-largest", 500, seed=2)
        >>> res.count("five_rolled") >= res.count("five_box_full") == res.count("five_box_50")
        True
        """
        agg = self.aggregate
        r = self.rules
        what = OLD_NAMES.get(what, what)
        if what == "upper_bonus":
            if not r.upper_bonus_tiers:
                return 0
            return int(agg.upper_hist[r.upper_bonus_tiers[0][0]:].sum())
        tiers = {f"upper_bonus_{b}": t for t, b in r.upper_bonus_tiers}
        if what in tiers:
            return int(agg.upper_hist[tiers[what]:].sum())
        if what == "five_box_full":
            if r.five_box is None:
                return 0
            # the box's plain value, read off its histogram (Generala's served 60 is not a plain 50)
            return int(agg.box_hist[r.five_box_index, r.five_box_points])
        if what == "five_rolled":
            return int(agg.n_games - agg.five_count_hist[0])
        if what == "served_five":
            return int(agg.served_five_games)
        names = list(r.box_names)
        if what.startswith("served_") and what[7:] in names and self._served_points(names.index(what[7:])):
            b = names.index(what[7:])
            return int(agg.box_hist[b, self._served_points(b)])
        if what in names and r.boxes[names.index(what)].needs_five_box:
            return int(agg.box_hist[names.index(what), 1:].sum())
        if what.endswith("_column_bonus") and len(agg.column_bonus_games):
            cols = [c.name for c in r.columns]
            if what[:-13] in cols:
                return int(agg.column_bonus_games[cols.index(what[:-13])])
        valid = [*RATES, "served_five", *self.events()]
        raise ValueError(f"unknown rate {what!r}; valid: {', '.join(dict.fromkeys(valid))}")

    def rate(self, what: str) -> float:
        """Share of games counted by :meth:`count`."""
        return self.count(what) / self.aggregate.n_games

    def ci(self, what: str = "mean", level: float = 0.95) -> tuple[float, float]:
        """Confidence interval: t interval for ``mean``, Wilson for a :meth:`rate`.

        >>> from yahtzee_sim import simulate
        >>> lo, hi = simulate("yahtzee", "random", 500, seed=1).ci("upper_bonus")
        >>> bool(0 <= lo <= hi <= 1)
        True
        """
        level = check_level(level)
        agg = self.aggregate
        if what == "mean":
            if agg.n_games < 2:
                raise ValueError(f"a t interval needs at least 2 games, the run has {agg.n_games}")
            return t_interval(agg.mean(), math.sqrt(agg.var()), agg.n_games, level)
        return binomial_interval(self.count(what), agg.n_games, level)


@dataclass
class TurnsResult:
    """Final patterns of N independent single turns played on a fresh card.

    >>> from yahtzee_sim import simulate_turns
    >>> res = simulate_turns("yacht", "keep-largest", 3000, seed=2)
    >>> int(res.roll_counts.sum()), int(res.pattern_counts()["five_of_a_kind"]) <= 3000
    (3000, True)
    """

    rules: RuleSet
    strategy: str
    n_turns: int
    seed: int | SpawnedSeed
    roll_counts: np.ndarray  # (R,) how many turns ended in each roll
    seconds: float = float("nan")

    def __repr__(self) -> str:
        counts = self.pattern_counts()  # with fewer than five dice there is no five of a kind to show
        name = "five_of_a_kind" if "five_of_a_kind" in counts else counts.index[0]
        return (f"TurnsResult({self.rules.key!r}, {self.strategy!r}, turns={self.n_turns:,}, "
                f"seed={self.seed}: {name} {counts[name] / self.n_turns:.4f})")

    def pattern_counts(self) -> "pd.Series":
        """Turns ending in each pattern of :func:`yahtzee_sim.patterns.pattern_names` ("or better" counts)."""
        import pandas as pd

        from .patterns import pattern_table

        table = pattern_table(self.rules.dice)
        return pd.Series(table.T.astype(np.int64) @ self.roll_counts, index=table.columns, name="turns")

    def to_frame(self, level: float = 0.95) -> "pd.DataFrame":
        """Frequency of each pattern with its Wilson confidence interval."""
        import pandas as pd

        counts = self.pattern_counts()
        rows = []
        for name, k in counts.items():
            low, high = binomial_interval(int(k), self.n_turns, level, "wilson")
            rows.append({"pattern": name, "turns": int(k), "frequency": k / self.n_turns,
                         "ci_low": low, "ci_high": high})
        return pd.DataFrame(rows).set_index("pattern")


def table_outcomes(totals: np.ndarray, servida_winner: np.ndarray | None = None):
    """(N, seats) bool arrays of games at one table: sole winner, tied for first.

    A game a servida ended (``servida_winner`` >= 0) has that seat as its sole winner,
    whatever the scores.

    >>> win, tie = table_outcomes(np.array([[3, 3, 1], [1, 2, 0]]))
    >>> win.tolist(), tie.tolist()
    ([[False, False, False], [False, True, False]], [[True, True, False], [False, False, False]])
    """
    top = totals.max(axis=1, keepdims=True)
    at_top = totals == top
    n_top = at_top.sum(axis=1, keepdims=True)
    win, tie = at_top & (n_top == 1), at_top & (n_top > 1)
    if servida_winner is not None:
        ended = servida_winner >= 0
        served = servida_winner[:, None] == np.arange(totals.shape[1])
        win = np.where(ended[:, None], served, win)
        tie = tie & ~ended[:, None]
    return win, tie


def win_share(totals: np.ndarray) -> np.ndarray:
    """(N, seats) each seat's share of each game's win (a tie for first split evenly).

    >>> win_share(np.array([[3, 3, 1], [1, 2, 0]])).tolist()
    [[0.5, 0.5, 0.0], [0.0, 1.0, 0.0]]
    """
    top = totals == totals.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


@dataclass
class TableAggregate:
    """Exact, mergeable summary of games at one table (what a chunk of a table run returns).

    total_hist[s, i], total_shift : games in which seat s scored i - total_shift (for a
        game a servida ended: the score then).
    wins[s], ties[s] : games seat s won alone, and tied for first.
    servida_wins[s] : games seat s won by a servida (under ``servida-wins``).

    >>> from yahtzee_sim import get_rules
    >>> r = get_rules("yacht")
    >>> agg = TableAggregate.from_games(r, {"totals": np.array([[30, 20], [25, 25]])})
    >>> agg.n_games, agg.wins.tolist(), agg.ties.tolist(), agg.mean_scores().tolist()
    (2, [1, 0], [1, 1], [27.5, 22.5])
    """

    total_hist: np.ndarray
    wins: np.ndarray
    ties: np.ndarray
    servida_wins: np.ndarray
    total_shift: int = 0

    @classmethod
    def empty(cls, rules: RuleSet, seats: int) -> "TableAggregate":
        low, high = min_total(rules), max_total(rules)
        zeros = np.zeros(seats, dtype=np.int64)
        return cls(np.zeros((seats, high - low + 1), dtype=np.int64), zeros, zeros.copy(), zeros.copy(), -low)

    @classmethod
    def from_games(cls, rules: RuleSet, games: dict[str, np.ndarray]) -> "TableAggregate":
        """The summary of ``games`` (``totals`` (N, seats), ``servida_winner`` (N,) if any)."""
        totals = np.asarray(games["totals"])
        winner = games.get("servida_winner")
        agg = cls.empty(rules, totals.shape[1])
        for s in range(totals.shape[1]):
            agg.total_hist[s] = np.bincount(totals[:, s].astype(np.int64) + agg.total_shift,
                                            minlength=agg.total_hist.shape[1])
        win, tie = table_outcomes(totals, winner)
        agg.wins += win.sum(axis=0)
        agg.ties += tie.sum(axis=0)
        if winner is not None:
            agg.servida_wins += np.bincount(winner[winner >= 0].astype(np.int64), minlength=totals.shape[1])
        return agg

    @property
    def n_games(self) -> int:
        return int(self.total_hist[0].sum()) if len(self.total_hist) else 0

    def mean_scores(self) -> np.ndarray:
        """(seats,) each seat's mean score (exact sums, one division)."""
        scores = np.arange(self.total_hist.shape[1], dtype=np.int64) - self.total_shift
        return np.array([int(h @ scores) / self.n_games for h in self.total_hist])

    def merge(self, other: "TableAggregate") -> "TableAggregate":
        """A new aggregate of both runs' games."""
        return TableAggregate(self.total_hist + other.total_hist, self.wins + other.wins, self.ties + other.ties,
                              self.servida_wins + other.servida_wins, self.total_shift)

    def check(self, rules: RuleSet, n_games: int) -> None:
        """Raise ``ValueError`` unless this is a possible summary of ``n_games`` games of ``rules``
        (each seat's histogram counts every game once; at most one sole winner a game, a
        servida win is a win, a tie for first takes two seats or more).

        >>> from yahtzee_sim import get_rules
        >>> agg = TableAggregate.from_games(get_rules("yacht"), {"totals": np.array([[30, 20], [25, 25]])})
        >>> agg.check(get_rules("yacht"), 3)
        Traceback (most recent call last):
        ...
        ValueError: total_hist counts 2 games per seat, not 3
        """
        seats = len(self.wins)
        _check_counts(self, TableAggregate.empty(rules, seats))
        n = int(n_games)
        if (self.total_hist.sum(axis=1) != n).any():
            raise ValueError(f"total_hist counts {int(self.total_hist[0].sum())} games per seat, not {n}")
        if int(self.wins.sum()) > n or (self.servida_wins > self.wins).any():
            raise ValueError(f"more sole winners than the {n} games, or servida wins that are not wins")
        if int(self.ties.sum()) > seats * (n - int(self.wins.sum())):   # a tie is in a game nobody won alone
            raise ValueError("more seats tied for first than the games without a sole winner hold")
