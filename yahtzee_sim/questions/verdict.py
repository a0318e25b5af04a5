"""Verdicts on claims, computed from the true value and the claim's stated precision.

A claim "about 4.6%" is stated to 0.1 percentage point (precision 0.001):

* **confirmed** — the true value rounds to the claim at that precision
  (|true - claimed| <= precision / 2), or equals it for exact claims;
* **confirmed with rounding** — off by at most one unit of the stated precision
  (truncated instead of rounded, or rounded twice);
* **imprecise** — the right ballpark (within 3 units of the precision or within 10%
  of the true value) but not the stated digits;
* **wrong** — anything else.

For a simulated value the distance is measured from the claim to the nearest end
of the 95% interval (0 if the interval contains the claim). Tips and qualitative
claims carry a criterion instead: the measurement satisfies it (confirmed), its
interval straddles the boundary (imprecise), or it does not (wrong).

>>> verdict_for_value(0.046029, 0.046, 0.001)
'confirmed'
>>> verdict_for_value(254.5896, 254, 1)
'confirmed with rounding'
>>> verdict_for_value(0.02006, 0.03, 0.001)
'wrong'
"""

from __future__ import annotations

from fractions import Fraction

VERDICTS = ("confirmed", "confirmed with rounding", "imprecise", "wrong")


def _distance(true, claimed, ci) -> float:
    if ci is not None:
        lo, hi = ci
        if lo <= claimed <= hi:
            return 0.0
        return float(min(abs(claimed - lo), abs(claimed - hi)))
    return float(abs(Fraction(true) - Fraction(claimed))) if isinstance(true, Fraction) else abs(true - claimed)


def verdict_for_value(true, claimed, precision: float, *, ci: tuple[float, float] | None = None) -> str:
    """Verdict on a numeric claim stated to ``precision`` (0 for an exact claim)."""
    eps = 1e-12
    if precision == 0:
        if ci is None:
            return "confirmed" if Fraction(true) == Fraction(claimed) else "wrong"
        return "confirmed" if ci[0] <= claimed <= ci[1] else "wrong"
    d = _distance(true, claimed, ci)
    if d <= precision / 2 + eps:
        return "confirmed"
    if d <= precision + eps:
        return "confirmed with rounding"
    if d <= 3 * precision + eps or d <= 0.1 * abs(float(true)):
        return "imprecise"
    return "wrong"


def verdict_for_criterion(value: float, criterion: dict, *, ci: tuple[float, float] | None = None) -> str:
    """Verdict on a tip or qualitative claim read through ``criterion``.

    >>> verdict_for_criterion(0.34, {"op": "between", "low": 0.2, "high": 0.8})
    'confirmed'
    >>> verdict_for_criterion(0.5, {"op": "at_least", "low": 0.6}, ci=(0.55, 0.65))
    'imprecise'
    """
    op = criterion.get("op")
    low = criterion.get("low", float("-inf"))
    high = criterion.get("high", float("inf"))
    if op == "at_least":
        high = float("inf")
    elif op == "at_most":
        low = float("-inf")
    elif op != "between":
        raise ValueError(f"unknown criterion op {op!r}; valid: at_least, at_most, between")

    def holds(x):
        return low <= x <= high

    if ci is None:
        return "confirmed" if holds(value) else "wrong"
    lo, hi = ci
    if holds(lo) and holds(hi):
        return "confirmed"
    if not holds(value) and not (lo <= low <= hi or lo <= high <= hi):
        return "wrong"
    return "imprecise"
