"""The seeds' claims, checked: a catalog as data, evaluators, computed verdicts.

>>> claims = load_claims()
>>> len(claims) >= 30, claims[0]["seed"].startswith("003")
(True, True)
"""

from __future__ import annotations

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


def _fmt(x) -> str:
    if x is None:
        return ""
    if isinstance(x, Fraction):
        return f"{x} = {float(x):.6g}" if x.denominator != 1 else str(x.numerator)
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


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
            shown = c["claimed"] if isinstance(c["claimed"], str) else _fmt(claimed)
            claim_text = shown + (f" (to {c['precision']:g})" if c.get("precision") else " (exact)")
        else:
            crit = c["criterion"]
            ci = None if m.exact is not None else m.ci
            verdict = verdict_for_criterion(m.value, crit, ci=ci)
            claim_text = crit.get("reading", "")
        rows.append({
            "id": c["id"], "seed": c["seed"][:3], "quote": c["quote"], "english": c["english"],
            "claim": claim_text, "exact": _fmt(m.exact), "simulated": _fmt(m.estimate),
            "ci95": "" if m.ci is None else f"{m.ci[0]:.6g} .. {m.ci[1]:.6g}",
            "verdict": verdict, "method": m.method, "detail": m.detail,
            "seconds": round(time.perf_counter() - start, 2),
        })
    return pd.DataFrame(rows).set_index("id")
