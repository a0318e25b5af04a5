"""The source documents' claims, checked: one claims file, answered by the questions.

The claims of the source documents are a claims file in the format ``yahtzee-sim
check`` reads (``yahtzee_sim/questions/sources.toml``, package data): each claim is a
question (see docs/questions.md), and :func:`verify_claims` answers them through
:func:`yahtzee_sim.questions.check_claims`, the same code as a writer's own file. This
module only lays the answers out as the ``verify`` command and the claims report have
always shown them (one row per claim, the source's number in ``source_id``; ``seed``, its
earlier name, still reads and is deprecated: a seed is a random seed).

>>> claims = load_claims()
>>> len(claims) >= 30, claims[0]["source"].startswith("003"), claims[0]["source_id"]
(True, True, '003')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .verdict import VERDICTS, verdict_for_criterion, verdict_for_value

__all__ = ["load_claims", "load_sources", "verify_claims", "check_claim_ids", "Context", "VERDICTS",
           "verdict_for_criterion", "verdict_for_value"]


@dataclass
class Context:
    """Sizes and seed of the simulations beside the exact values.

    games : simulated games per strategy (game questions); turns : simulated throws,
    positions or turns (roll, position and turn questions); run_options : backend, jobs,
    scheduler and ``progress`` for the simulations (yahtzee_sim.runner).
    """

    games: int = 100_000
    turns: int = 1_000_000
    seed: int = 2026
    run_options: dict = field(default_factory=dict)


def load_sources(text: str | None = None):
    """The source documents' claims as a parsed claims file (``text``: another file's
    text in the same format, for tests).

    >>> load_sources().claims[0].question.scope
    'roll'
    """
    from ..questions.claims import load_claims_text, load_sources_file

    return load_sources_file() if text is None else load_claims_text(text)


def load_claims(text: str | None = None) -> list[dict]:
    """The claims as plain rows: id, source (and ``source_id``, its number; ``seed``, the
    same number under its deprecated name), quote, english,
    the question in words, and what is claimed (``claimed`` with ``precision``, or
    ``criterion``)."""
    rows = []
    for c in load_sources(text).claims:
        row = {"id": c.id, "source": c.source, "source_id": c.source[:3], "quote": c.quote,
               "english": c.english, "question": c.question.text,
               "seed": c.source[:3]}   # deprecated name of source_id (scripts may read it)
        if c.criterion is not None:
            row["criterion"] = c.criterion
        else:
            row["claimed"], row["precision"] = c.claimed, c.precision
        rows.append(row)
    return rows


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
    ids = [c.id for c in load_sources().claims]
    for prefix in only:
        if not prefix.strip():
            raise ValueError("a claim id prefix must not be empty (leave --only out to check every claim)")
        if not any(i.startswith(prefix) for i in ids):
            raise ValueError(f"no claim id starts with {prefix!r}; the ids are: {', '.join(ids)}")
    return list(only)


def _detail(a) -> str:
    """What stands beside the value: the two sides of a comparison, the written card, a
    constraint, a simulated count."""
    parts = [f"{k.replace('_', ' ')}: {v}" for k, v in a.extra.items()]
    if a.note:
        parts.append(a.note)
    return "; ".join(parts)


def verify_claims(ctx: Context | None = None, *, only: list[str] | None = None, text: str | None = None):
    """Evaluate every claim (or those whose id starts with one of ``only``).

    One row per claim (pandas, indexed by id): the claim, what the project found (exact
    and/or simulated with a 95% interval), the computed verdict and how it was computed.
    """
    import pandas as pd

    from ..questions.claims import ClaimsFile, check_claims

    ctx = ctx or Context()
    if only is not None:
        only = check_claim_ids(only)
    sources = load_sources(text)
    claims = [c for c in sources.claims if not only or any(c.id.startswith(o) for o in only)]
    run_options = dict(ctx.run_options)
    progress = run_options.pop("progress", None)
    result = check_claims(ClaimsFile(title=sources.title, claims=claims, source=sources.source),
                          games=ctx.games, throws=ctx.turns, seed=ctx.seed, progress=progress,
                          run_options=run_options)
    rows = []
    for c, a in zip(claims, result.answers):
        frac = a.exact_fraction
        claimed = a.claimed
        rows.append({
            "id": c.id, "source_id": c.source[:3], "source": c.source, "quote": c.quote, "english": c.english,
            "question": c.question.text, "claim": a.claimed_text, "unit": a.unit,
            "claimed": None if claimed is None else float(claimed),
            "precision": a.precision if claimed is not None else None,
            "exact": None if a.exact is None else float(a.exact),
            "exact_fraction": None if frac is None else
            {"numerator": frac.numerator, "denominator": frac.denominator, "value": float(frac)},
            "estimate": None if a.estimate is None else float(a.estimate),
            "ci95_low": None if a.ci is None else float(a.ci[0]),
            "ci95_high": None if a.ci is None else float(a.ci[1]),
            "value": a.value,   # what the verdict reads: the exact value, else the simulated estimate
            "exact_text": a.exact_text, "simulated_text": a.simulated_text, "verdict": a.verdict,
            "method": a.method + (f"; simulated: {a.simulated_method}" if a.simulated_method else ""),
            "detail": _detail(a), "seconds": round(a.seconds, 2),
            "seed": c.source[:3],   # deprecated name of source_id (scripts may read it): not a random seed
        })
    return pd.DataFrame(rows).set_index("id")
