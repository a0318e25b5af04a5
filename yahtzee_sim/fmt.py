"""Numbers a writer can paste: percentages, points and intervals as text.

No scientific notation, no ``nan``, no Python tuples; digits follow the
uncertainty (two significant figures of an interval's half-width), and a small
rate keeps two significant figures instead of collapsing to "0.0%".

>>> percent(0.4750), percent(0.00466), percent(2e-05), percent(0.99998), percent(0.0)
('47.5%', '0.47%', '0.0020%', '99.9980%', '0%')
>>> decimals_for(0.37), decimals_for(3.7), decimals_for(37.0)
(2, 1, 0)
>>> interval(46.54, 46.77, 2)
'46.54 to 46.77'
>>> cell(6e-05), cell(float("nan")), cell(254.5877), cell(12345.0), number(float("inf"))
('0.00006', '–', '254.6', '12,345', '∞')
"""

from __future__ import annotations

import math

MISSING = "–"  # an en dash: "not applicable", never "nan"

# Inclusive patterns ("or better"); see yahtzee_sim.patterns.
_OR_BETTER = {"four_of_a_kind", "three_of_a_kind", "small_straight", "two_pairs", "one_pair"}
_PATTERN_TEXT = {
    "full_house": "Full house (exactly three and two)",
    "full_house_or_five": "Full house or five of a kind",
    "small_straight": "Small straight (a run of four) or better",
    "large_straight": "Large straight (a run of five)",
}


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def percent(p, decimals: int = 1) -> str:
    """A share as a percentage with ``decimals`` decimals, more when needed so a
    small share (or a share close to 100%) keeps two significant figures."""
    if _missing(p):
        return MISSING
    p = float(p)
    if p in (0.0, 1.0):
        return f"{p * 100:.0f}%"
    small = min(p, 1 - p) * 100 if 0 < p < 1 else abs(p) * 100
    d = decimals
    while d < 8 and small < 10 ** (1 - d):  # fewer than two significant figures shown
        d += 1
    return f"{p * 100:,.{d}f}%"


def decimals_for(half_width: float, figures: int = 2) -> int:
    """Decimals that show ``figures`` significant figures of an interval's half-width."""
    if _missing(half_width) or half_width <= 0 or not math.isfinite(half_width):
        return 1
    return max(0, figures - 1 - math.floor(math.log10(half_width)))


def number(x, decimals: int = 1) -> str:
    """A fixed-point number with thousands separators (``1,575``, ``254.59``)."""
    if _missing(x):
        return MISSING
    if not math.isfinite(float(x)):
        return "∞" if float(x) > 0 else "-∞"  # e.g. "once every ∞ turns": a pattern that cannot happen
    return f"{float(x):,.{decimals}f}"


def interval(low, high, decimals: int = 1, *, as_percent: bool = False) -> str:
    """``low to high``, both with the same digits (percent: the digits of the narrower end)."""
    if _missing(low) or _missing(high):
        return MISSING
    if as_percent:
        d = max(_percent_decimals(low), _percent_decimals(high), decimals)
        return f"{low * 100:,.{d}f}% to {high * 100:,.{d}f}%"
    return f"{number(low, decimals)} to {number(high, decimals)}"


def _percent_decimals(p: float) -> int:
    text = percent(p)
    return len(text.rstrip("%").partition(".")[2])


def percent_ci(p, low, high, decimals: int = 1) -> tuple[str, str]:
    """A share and its 95% interval with the same digits: one significant figure of the
    half-width, and enough for each end to stay off 0% and 100% when it is not there.

    >>> percent_ci(0.36746, 0.364477, 0.370453)
    ('36.7%', '36.4% to 37.0%')
    >>> percent_ci(0.0005, 0.000088, 0.002827)
    ('0.050%', '0.009% to 0.283%')
    >>> percent_ci(0.0, 0.0, 0.0019)
    ('0%', '0% to 0.19%')
    """
    d = max(decimals_for((high - low) * 50, 1), decimals)  # half-width in percentage points
    for x in (p, low, high):
        while 0 < x < 1 and d < 8 and min(x, 1 - x) * 100 < 10 ** -d:
            d += 1

    def show(x):
        return f"{x * 100:.0f}%" if x in (0, 1) else f"{x * 100:,.{d}f}%"

    return show(p), f"{show(low)} to {show(high)}"


def cell(x) -> str:
    """Fallback for a table cell: four significant figures in fixed notation, never ``nan``."""
    if _missing(x):
        return MISSING
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int,)) or (hasattr(x, "dtype") and getattr(x.dtype, "kind", "") in "iu"):
        return f"{int(x):,}"
    if isinstance(x, float) or hasattr(x, "dtype"):
        x = float(x)
        if not math.isfinite(x):
            return "∞" if x > 0 else "-∞"
        if x.is_integer() and abs(x) >= 1:
            return f"{int(x):,}"
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        text = f"{x:.{max(0, 3 - math.floor(math.log10(abs(x)))) if x else 0}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    return str(x)


def words(name: str) -> str:
    """``three_of_a_kind`` -> ``Three of a kind`` (for names without a label).

    >>> words("five_box_full")
    'Five box full'
    """
    text = str(name).replace("_", " ").replace("-", " ").strip()
    return text[:1].upper() + text[1:]


def pattern_label(name: str) -> str:
    """What a dice pattern means, in words, with "or better" where it is inclusive.

    >>> pattern_label("four_of_a_kind"), pattern_label("four_of_a_kind_exactly"), pattern_label("largest_group_2")
    ('Four of a kind or better', 'Four of a kind, exactly', 'Largest group of exactly 2')
    """
    if name in _PATTERN_TEXT:
        return _PATTERN_TEXT[name]
    if name.endswith("_exactly"):
        return words(name.removesuffix("_exactly")) + ", exactly"
    if name.startswith("largest_group_"):
        return f"Largest group of exactly {name.rsplit('_', 1)[1]}"
    return words(name) + (" or better" if name in _OR_BETTER else "")
