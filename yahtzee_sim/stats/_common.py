"""Shared pieces of :mod:`yahtzee_sim.stats`: the result base class and input checks.

Every public function validates its input here, up front, so that bad input
fails with one clear line (a ``ValueError``) before any work is done.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import fields

import numpy as np
import pandas as pd

from ..intervals import check_level  # noqa: F401  (re-exported: every stats module checks levels)

__all__ = ["StatsResult", "Interval"]


class StatsResult:
    """Mixin for the frozen result dataclasses of :mod:`yahtzee_sim.stats`.

    A subclass lists its scalar columns in ``_columns`` and writes a one-line
    ``_describe()``; it gets ``to_dict()``, a one-row ``to_frame()`` and a
    readable ``repr`` for free.
    """

    _columns: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        """The result's scalar fields as a plain dict (ready for JSON or a table row)."""
        names = self._columns or tuple(f.name for f in fields(self))
        return {name: _plain(getattr(self, name)) for name in names}

    def to_frame(self) -> pd.DataFrame:
        """The result as a one-row :class:`pandas.DataFrame`."""
        return pd.DataFrame([self.to_dict()])

    def _describe(self) -> str:  # pragma: no cover - every subclass overrides it
        return ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._describe()})"

    __str__ = __repr__


class Interval(StatsResult):
    """A result with a confidence interval ``low``..``high`` (scalars or arrays)."""

    @property
    def half_width(self):
        """Half the interval's width (the "+/-" of a report)."""
        return (self.high - self.low) / 2

    def contains(self, value):
        """Whether ``value`` lies in the interval (bounds included)."""
        inside = (self.low <= value) & (value <= self.high)
        return bool(inside) if np.ndim(inside) == 0 else inside


def _plain(value):
    """numpy scalars -> Python scalars (so dicts print and serialize cleanly)."""
    if isinstance(value, np.generic):
        return value.item()
    return value


def fmt(x: float) -> str:
    """Compact number formatting for reprs (4 significant digits, ints as ints)."""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if not math.isfinite(x):
        return str(x)
    return f"{x:.4g}"


def pct(level: float) -> str:
    """0.95 -> '95%'."""
    return f"{100 * level:g}%"


# -- validation -----------------------------------------------------------------------

def check_choice(value, name: str, valid) -> str:
    """One of a fixed set of names (case-insensitive); the error lists the choices."""
    key = value.lower() if isinstance(value, str) else value
    if key not in valid:
        raise ValueError(f"unknown {name} {value!r}; valid: {', '.join(valid)}")
    return key


def check_positive(value, name: str) -> float:
    """A finite real number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
        math.isfinite(value) and value > 0
    ):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(value)


def check_int(value, name: str, minimum: int = 0) -> int:
    """An integer >= ``minimum`` (integral floats such as 10.0 are accepted): the
    package's one check of whole numbers, :func:`yahtzee_sim.validate.whole_number`."""
    from ..validate import whole_number

    return whole_number(value, name, low=minimum)


def check_counts(k, n) -> tuple[np.ndarray, np.ndarray]:
    """Successes ``k`` and trials ``n`` (broadcast arrays of int64) with 0 <= k <= n, n >= 1."""
    k_arr, n_arr = (_integral(v, name) for v, name in ((k, "k (successes)"), (n, "n (trials)")))
    try:
        k_arr, n_arr = np.broadcast_arrays(k_arr, n_arr)
    except ValueError:
        raise ValueError(f"k and n have incompatible shapes {k_arr.shape} and {n_arr.shape}") from None
    if k_arr.size == 0:
        raise ValueError("k and n are empty: give at least one count")
    if (k_arr < 0).any():
        raise ValueError(f"k (successes) must be >= 0, got {int(k_arr.min())}")
    if (n_arr < 1).any():
        raise ValueError(f"n (trials) must be >= 1, got {int(n_arr.min())}")
    bad = k_arr > n_arr
    if bad.any():
        i = np.flatnonzero(bad.ravel())[0]
        raise ValueError(f"k must not exceed n, got k={int(k_arr.ravel()[i])} > n={int(n_arr.ravel()[i])}")
    return k_arr.astype(np.int64), n_arr.astype(np.int64)


def _integral(values, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise ValueError(f"{name} must be integer counts, got {values!r}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.isfinite(arr).all() or (arr != np.round(arr)).any():
            raise ValueError(f"{name} must be whole numbers, got {values!r}")
    return arr.astype(np.int64)


def check_sample(x, name: str = "x", *, min_n: int = 1) -> np.ndarray:
    """A 1-D array of finite floats with at least ``min_n`` values."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D sequence of numbers, got {type(x).__name__}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got an array of shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: give at least {max(min_n, 1)} value(s)")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    if arr.size < min_n:
        raise ValueError(f"{name} needs at least {min_n} values, got {arr.size}")
    return arr


def check_seed(seed) -> tuple[np.random.Generator, int | None]:
    """A Generator from ``seed`` (int, SeedSequence, Generator or None) and the entropy to record.

    ``None`` draws fresh entropy and records it, so every result can be reproduced;
    a Generator passed in is used as is (recorded entropy: ``None``).
    """
    if isinstance(seed, np.random.Generator):
        return seed, None
    if seed is None:
        seed = np.random.SeedSequence()
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed), int(seed.entropy)
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return np.random.default_rng(int(seed)), int(seed)
    raise ValueError(f"seed must be a non-negative integer, SeedSequence, Generator or None, got {seed!r}")


# -- simulation results as input -------------------------------------------------------

GAME_COLUMNS = ("total", "upper_total", "upper_bonus", "five_bonus_count", "five_count")


def is_simulation_result(obj) -> bool:
    """Whether ``obj`` is a :class:`~yahtzee_sim.results.SimulationResult` (or quacks like one).

    Checked by its parts, an exact ``aggregate`` plus optional per-game ``games``, so that
    the statistics do not import the result objects (which use these statistics' intervals).
    """
    return hasattr(obj, "aggregate") and hasattr(obj, "games") and hasattr(obj.aggregate, "total_hist")


def result_values(res, column: str = "total", *, need_order: bool = False) -> np.ndarray:
    """Per-game values of ``column`` from a :class:`~yahtzee_sim.results.SimulationResult`.

    Without per-game data, totals are rebuilt from the exact histogram (same
    multiset of scores, game order lost): fine for one-sample statistics, refused
    when ``need_order`` (pairing needs game i of one run next to game i of the other).
    """
    check_choice(column, "column", GAME_COLUMNS)
    if res.games is not None:
        return np.asarray(res.games[column], dtype=np.float64)
    if need_order:
        raise ValueError(
            f"run {res.strategy!r} on {res.rules.key} kept only aggregates; rerun with keep_games=True"
        )
    if column != "total":
        raise ValueError(f"run kept only aggregates, which hold totals only; rerun with keep_games=True for {column!r}")
    agg = res.aggregate
    return np.repeat((np.arange(len(agg.total_hist)) - getattr(agg, "total_shift", 0)).astype(np.float64),
                     agg.total_hist)
