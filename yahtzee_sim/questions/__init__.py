"""Questions a writer asks, answered exactly where the exact engine can, cross-checked
by simulation: the same questions from a claims file, the shell and Python.

A question is an *ask* (``chance``, ``mean``, ``sd``, ``percentile``,
``expected-rolls``, ``max``, ``min``) of an *event* (a pattern, ``box NAME >= N``,
``score >= N``, ``upper_bonus``, ``scored_five >= K``, ``win``, ...) in a *scope*
(``roll``, ``position``, ``turn``, ``game``, ``table``) under a *play* (``chase``: the
keeps that maximize this event's own chance, or a strategy). See docs/questions.md.

>>> a = ask("chance", "large_straight", scope="position", keep="2345", rolls_left=2, throws=2000, seed=1)
>>> a.exact, a.to_frame().loc[0, "exact_fraction"]
(Fraction(5, 9), '5/9')
>>> ask("chance", "large_straight", scope="turn", claimed="26%", precision="1%", throws=2000).verdict
'confirmed'
"""

from __future__ import annotations

import time

from .answer import Answer
from .claims import check_claims, load_claims_file
from .spec import (
    ASKS,
    SCOPES,
    Event,
    Question,
    parse_claimed,
    parse_event,
    parse_precision,
    parse_question,
)

__all__ = [
    "ASKS",
    "DEFAULT_GAMES",
    "DEFAULT_SEED",
    "DEFAULT_THROWS",
    "SCOPES",
    "Answer",
    "Event",
    "Question",
    "answer",
    "ask",
    "check_claims",
    "load_claims_file",
    "parse_event",
    "parse_question",
]

DEFAULT_GAMES = 20_000
"""Simulated games (or tables) beside a game or table question: a 95% interval of
about +-0.7 percentage point on a chance near one half, +-0.8 point on optimal
Yahtzee's mean score."""
DEFAULT_THROWS = 100_000
"""Simulated throws, positions or turns beside a roll, position or turn question."""
DEFAULT_SEED = 2026


def answer(question: Question, *, games: int = DEFAULT_GAMES, throws: int = DEFAULT_THROWS, seed=DEFAULT_SEED,
           cache: dict | None = None, progress=None, run_options=None) -> Answer:
    """Answer a parsed :class:`Question` (exact and simulated).

    ``cache`` (a dict) shares exact distributions and simulated games between
    questions on the same rules and strategy.
    """
    from .dicescope import answer_dice
    from .gamescope import answer_game, answer_table

    for name, value in (("games", games), ("throws", throws)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 2:
            raise ValueError(f"{name} must be a whole number of at least 2, got {value!r}")
    start = time.perf_counter()
    if question.versus is not None:
        import dataclasses

        from .answer import combine

        first = answer(dataclasses.replace(question, versus=None, compare=None), games=games, throws=throws,
                       seed=seed, cache=cache, progress=progress, run_options=run_options)
        other = answer(question.versus, games=games, throws=throws, seed=seed, cache=cache, progress=progress,
                       run_options=run_options)
        out = combine(question, first, other)
        out.seconds = time.perf_counter() - start
        return out
    if question.scope == "card":
        from .dicescope import answer_card

        out = answer_card(question)
    elif question.scope in ("roll", "position", "turn"):
        out = answer_dice(question, n=throws, seed=seed)
    elif question.scope == "game":
        out = answer_game(question, games=games, seed=seed, cache=cache, progress=progress, run_options=run_options)
    elif question.scope == "table":
        out = answer_table(question, games=games, seed=seed, cache=cache, progress=progress)
    out.seconds = time.perf_counter() - start
    return out


def ask(what: str = "chance", event: str = "", *, scope: str = "turn", rules="yahtzee", options=(),
        play: str | None = None, keep=None, dice=None, hold=None, rolls_left=None, q=None, players=None,
        filled=None, upper=None, given=None, versus=None, compare=None, write=None, constraint=None,
        claimed=None, precision=0, criterion=None, games: int = DEFAULT_GAMES, throws: int = DEFAULT_THROWS,
        seed=DEFAULT_SEED, progress=None) -> Answer:
    """Ask one question; with ``claimed`` (and its ``precision``) get a verdict too.

    ``what`` is the ask (chance, mean, sd, percentile with ``q``, expected-rolls, max,
    min); ``event``, ``scope`` and the rest are the keys of a claims file (see
    :func:`parse_question`). Returns an :class:`Answer`: ``.exact`` (a ``Fraction``
    where rational), ``.estimate`` and ``.ci`` (simulated, 95%), ``.method`` in words,
    ``.verdict``, ``.to_frame()``.

    >>> ask("mean", "box chance", scope="turn", throws=2000).exact
    Fraction(70, 3)

    A card (``filled``, ``upper``): under ``chase`` it only checks that the box is open.

    >>> ask("chance", "box chance >= 20", scope="turn", filled="ones,twos", upper=5, throws=2000).exact
    Fraction(879977609, 967458816)
    """
    spec = {"ask": what, "event": event, "scope": scope, "rules": rules, "options": list(options)}
    for key, value in (("play", play), ("keep", keep), ("dice", dice), ("hold", hold), ("rolls_left", rolls_left),
                       ("q", q), ("players", players), ("filled", filled), ("upper", upper), ("given", given),
                       ("versus", versus), ("compare", compare), ("write", write), ("constraint", constraint)):
        if value is not None:
            spec[key] = value
    question = parse_question(spec)
    if claimed is not None and criterion is not None:
        raise ValueError("give claimed (with precision) or criterion, not both")
    claimed = None if claimed is None else parse_claimed(claimed)
    precision = parse_precision(precision)
    out = answer(question, games=games, throws=throws, seed=seed, progress=progress)
    return out.judge(claimed, precision, criterion)
