"""The seeds' claims, checked: a catalog as data, evaluators, computed verdicts.

>>> claims = load_claims()
>>> len(claims) >= 30, claims[0]["seed"].startswith("003")
(True, True)
"""

from __future__ import annotations

import math
import time
import tomllib
from fractions import Fraction
from importlib import resources

import pandas as pd

from .evaluators import EVALUATORS, Context, Measurement
from .verdict import VERDICTS, verdict_for_criterion, verdict_for_value

__all__ = ["load_claims", "verify_claims", "check_claim_ids", "Context", "Measurement", "VERDICTS", "EVALUATORS"]

REQUIRED = ("id", "seed", "quote", "english", "evaluator", "params")


def load_claims(text: str | None = None) -> list[dict]:
    """The catalog (``claims.toml`` in this package), validated."""
    if text is None:
        text = resources.files(__package__).joinpath("claims.toml").read_text(encoding="utf-8")
    claims = tomllib.loads(text).get("claim", [])
    seen = set()
    for c in claims:
        missing = [k for k in REQUIRED if k not in c]
        if missing:
            raise ValueError(f"claim {c.get('id', '?')}: missing {', '.join(missing)}")
        if c["evaluator"] not in EVALUATORS:
            raise ValueError(f"claim {c['id']}: unknown evaluator {c['evaluator']!r}; "
                             f"valid: {', '.join(sorted(EVALUATORS))}")
        if ("claimed" in c) == ("criterion" in c):
            raise ValueError(f"claim {c['id']}: give exactly one of 'claimed' (with precision) or 'criterion'")
        if c["id"] in seen:
            raise ValueError(f"duplicate claim id {c['id']!r}")
        seen.add(c["id"])
    return claims


def _claimed_value(c):
    v = c["claimed"]
    return Fraction(v) if isinstance(v, str) else v


def _text(x, unit: str) -> str:
    """An exact or simulated value as a reader wants it: shares in percent, fractions kept."""
    from .. import fmt

    if x is None:
        return ""
    if unit == "share":
        if isinstance(x, Fraction) and x.denominator != 1:
            return f"{x} = {fmt.percent(float(x), 2)}"
        return fmt.percent(float(x), 2)
    if isinstance(x, Fraction):
        return f"{x.numerator:,}" if x.denominator == 1 else f"{fmt.number(float(x), 3)} ({x})"
    if isinstance(x, int):
        return f"{x:,}"
    return fmt.number(x, 2) + (" turns" if unit == "turns" else "")


def _simulated_text(m: Measurement) -> str:
    from .. import fmt

    if m.estimate is None:
        return ""
    if m.ci is None:
        return _text(m.estimate, m.unit)
    lo, hi = m.ci
    if m.unit == "share":
        value, ci = fmt.percent_ci(m.estimate, lo, hi)
    elif math.isfinite(hi):
        d = fmt.decimals_for((hi - lo) / 2)
        value, ci = fmt.number(m.estimate, d), fmt.interval(lo, hi, d)
    else:
        value, ci = fmt.number(m.estimate, 2), f"{fmt.number(lo, 2)} to ∞"
    return f"{value} (95% CI {ci})"


def _stated_text(c: dict, unit: str) -> str:
    from .. import fmt

    if "criterion" in c:
        return c["criterion"].get("reading", "")
    if isinstance(c["claimed"], str):
        return f"{c['claimed']} (exact)"
    precision = c.get("precision", 0)
    if not precision:
        return f"{_text(c['claimed'], unit)} (exact)"
    if unit == "share":
        d = max(0, -math.floor(math.log10(precision * 100) + 1e-9))
        step = fmt.number(precision * 100, d)
        return f"{c['claimed'] * 100:.{d}f}% (to {step} percentage point{'' if step == '1' else 's'})"
    d = max(0, -math.floor(math.log10(precision) + 1e-9))
    return f"{fmt.number(c['claimed'], d)} (to {fmt.number(precision, d)})"


def _number(x):
    if x is None:
        return None
    return float(x)


def check_claim_ids(only) -> list[str]:
    """Each entry of ``only`` must start at least one claim id; the error lists the ids.

    >>> check_claim_ids(["s003-63"])
    ['s003-63']
    >>> check_claim_ids(["zzz"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no claim id starts with 'zzz'; the ids are: s003-first-roll-yahtzee-fraction, ...
    """
    if isinstance(only, str) or not all(isinstance(o, str) for o in only):
        raise ValueError(f"only must be a list of claim id prefixes, got {only!r}")
    ids = [c["id"] for c in load_claims()]
    for prefix in only:
        if not prefix.strip():
            raise ValueError("a claim id prefix must not be empty (leave --only out to check every claim)")
        if not any(i.startswith(prefix) for i in ids):
            raise ValueError(f"no claim id starts with {prefix!r}; the ids are: {', '.join(ids)}")
    return list(only)


def verify_claims(ctx: Context | None = None, *, only: list[str] | None = None) -> pd.DataFrame:
    """Evaluate every claim (or those whose id starts with one of ``only``).

    One row per claim: the claim, what the project found (exact and/or simulated
    with a 95% interval) and the computed verdict.
    """
    ctx = ctx or Context()
    if only is not None:
        only = check_claim_ids(only)
    rows = []
    for c in load_claims():
        if only and not any(c["id"].startswith(o) for o in only):
            continue
        start = time.perf_counter()
        m = EVALUATORS[c["evaluator"]](c["params"], ctx)
        if "claimed" in c:
            claimed = _claimed_value(c)
            if m.exact is not None:
                verdict = verdict_for_value(m.exact, claimed, c.get("precision", 0))
            else:
                verdict = verdict_for_value(m.estimate, claimed, c.get("precision", 0), ci=m.ci)
        else:
            claimed = None
            ci = None if m.exact is not None else m.ci
            verdict = verdict_for_criterion(m.value, c["criterion"], ci=ci)
        exact_fraction = m.exact if isinstance(m.exact, Fraction) and m.exact.denominator != 1 else None
        rows.append({
            "id": c["id"], "seed": c["seed"][:3], "quote": c["quote"], "english": c["english"],
            "claim": _stated_text(c, m.unit), "unit": m.unit,
            "claimed": _number(claimed), "precision": c.get("precision") if claimed is not None else None,
            "exact": _number(m.exact),
            "exact_fraction": None if exact_fraction is None else
            {"numerator": exact_fraction.numerator, "denominator": exact_fraction.denominator,
             "value": float(exact_fraction)},   # the JSON form of every exact fraction (README)
            "estimate": _number(m.estimate),
            "ci95_low": None if m.ci is None else float(m.ci[0]),
            "ci95_high": None if m.ci is None else float(m.ci[1]),
            "exact_text": _text(m.exact, m.unit), "simulated_text": _simulated_text(m),
            "verdict": verdict, "method": m.method, "detail": m.detail,
            "seconds": round(time.perf_counter() - start, 2),
        })
    return pd.DataFrame(rows).set_index("id")
