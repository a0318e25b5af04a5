"""A writer's claims file: each claim a question, a claimed value and its precision.

The format generalizes the source documents' catalog (``yahtzee_sim/questions/sources.toml``, which
``yahtzee-sim verify`` reads through this module)::

    title = "Claims in my article"          # optional
    rules = "yahtzee"                        # default rule set for the claims below

    [[claim]]
    id = "large-straight-turn"
    quote = "Going for a large straight, you make it about 26% of the time."
    ask = "chance"
    event = "large_straight"
    scope = "turn"
    play = "chase"
    claimed = 0.26          # or "5/9", or "26%"
    precision = 0.01        # the unit the claim was stated in; 0 = exact

A claim gives ``claimed`` (with ``precision``) or a ``criterion``
(``{ op = "at_least", low = 0.5, reading = "more often than not" }``) as the catalog
does. Every claim is checked before any is computed: a bad one is one line naming
the claim, the key and the valid choices.

>>> claims = load_claims_text('''
... [[claim]]
... id = "open-ended"
... ask = "chance"
... event = "large_straight"
... scope = "position"
... keep = "2345"
... rolls_left = 2
... claimed = "5/9"
... ''')
>>> result = check_claims(claims, throws=2000)
>>> result.frame().loc["open-ended", "verdict"]
'confirmed'
"""

from __future__ import annotations

import dataclasses
import functools
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from .spec import KEYS, parse_claimed, parse_precision, parse_question

CLAIM_KEYS = ("id", "quote", "english", "source", "note", "claimed", "precision", "criterion") + KEYS
TOP_KEYS = ("title", "rules", "options", "claim")


@dataclass
class Claim:
    """One claim of a file: its id, words, the parsed question and what is claimed."""

    id: str
    question: object
    quote: str = ""
    claimed: object = None
    precision: float = 0
    criterion: dict | None = None
    source: str = ""
    english: str = ""


@dataclass
class ClaimsFile:
    title: str
    claims: list
    source: str = ""


def _criterion(value, cid: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"claim {cid!r}: key 'criterion' must be a table such as "
                         "{ op = \"at_least\", low = 0.5 }")
    op = value.get("op")
    if op not in ("at_least", "at_most", "between"):
        raise ValueError(f"claim {cid!r}: key 'criterion': unknown op {op!r}; valid: at_least, at_most, between")
    for end in ("low", "high"):
        if end in value and (isinstance(value[end], bool) or not isinstance(value[end], (int, float))):
            raise ValueError(f"claim {cid!r}: key 'criterion': {end} must be a number")
    need = {"at_least": ("low",), "at_most": ("high",), "between": ("low", "high")}[op]
    missing = [k for k in need if k not in value]
    if missing:
        raise ValueError(f"claim {cid!r}: key 'criterion': op {op} needs {', '.join(need)}")
    return dict(value)


def load_claims_text(text: str, *, source: str = "") -> ClaimsFile:
    """Parse and validate a claims file's text (see the module's docstring)."""
    from ..rules import get_rules

    where = f"{source}: " if source else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{where}not a valid TOML file: {exc}") from None
    unknown = sorted(set(data) - set(TOP_KEYS))
    if unknown:
        raise ValueError(f"{where}unknown top-level key {unknown[0]!r}; valid keys: {', '.join(TOP_KEYS)} "
                         "(each claim goes in a [[claim]] table)")
    rows = data.get("claim", [])
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{where}no claims: write each one in a [[claim]] table")
    options = data.get("options", ())
    if isinstance(options, str):
        options = [options]
    try:
        default_rules = get_rules(data.get("rules", "yahtzee"), options)
    except ValueError as exc:
        raise ValueError(f"{where}key 'rules': {exc}") from None
    claims, seen = [], set()
    for i, row in enumerate(rows):
        cid = row.get("id")
        if not isinstance(cid, str) or not cid.strip():
            raise ValueError(f"{where}claim {i + 1}: key 'id' is missing (give every claim an id)")
        if cid in seen:
            raise ValueError(f"{where}duplicate claim id {cid!r}")
        seen.add(cid)
        bad = sorted(set(row) - set(CLAIM_KEYS))
        if bad:
            raise ValueError(f"{where}claim {cid!r}: unknown key {bad[0]!r}; valid keys: {', '.join(CLAIM_KEYS)}")
        spec = {k: row[k] for k in KEYS if k in row}
        try:
            question = parse_question(spec, rules=default_rules)
        except ValueError as exc:
            raise ValueError(f"{where}claim {cid!r}: {exc}") from None
        if ("claimed" in row) == ("criterion" in row):
            raise ValueError(f"{where}claim {cid!r}: give exactly one of 'claimed' (with precision) or 'criterion'")
        try:
            claimed = parse_claimed(row["claimed"]) if "claimed" in row else None
            precision = parse_precision(row.get("precision", 0))
        except ValueError as exc:
            key = "claimed" if "claimed" in str(exc) else "precision"
            raise ValueError(f"{where}claim {cid!r}: key {key!r}: {exc}") from None
        criterion = _criterion(row["criterion"], cid) if "criterion" in row else None
        claims.append(Claim(id=cid, question=question, quote=str(row.get("quote", "")), claimed=claimed,
                            precision=precision, criterion=criterion, source=str(row.get("source", "")),
                            english=str(row.get("english", ""))))
    title = data.get("title", "Claims")
    return ClaimsFile(title=str(title), claims=claims, source=source)


SOURCES_FILE = "sources.toml"
"""The source documents' claims, shipped with the package (``yahtzee-sim verify``)."""


def load_sources_file() -> ClaimsFile:
    """The source documents' own claims (package data), as a parsed claims file.

    >>> f = load_sources_file()
    >>> len(f.claims) >= 30, f.claims[0].source.startswith("003")
    (True, True)
    """
    from importlib import resources

    text = resources.files(__package__).joinpath(SOURCES_FILE).read_text(encoding="utf-8")
    return load_claims_text(text, source=f"yahtzee_sim/questions/{SOURCES_FILE}")


def load_claims_file(path) -> ClaimsFile:
    """Read and validate a claims file (a clear one-line error if missing or malformed)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"claims file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise ValueError(f"claims file {str(path)!r} is a folder, not a file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read claims file {str(path)!r}: {exc}") from None
    return load_claims_text(text, source=str(path))


@dataclass
class ClaimsResult:
    """The answers to a claims file, in its order."""

    file: ClaimsFile
    answers: list
    games: int
    throws: int
    seed: int
    seconds: float = 0.0
    _cache: dict = field(default_factory=dict, repr=False)

    def frame(self):
        """One row per claim: quote, question, claim, exact, simulated, verdict, method (pandas).

        Numbers as numbers (``exact``, ``estimate``, ``ci95_low``, ``ci95_high``,
        ``claimed``), the fraction as text in ``exact_fraction``, and the same in words
        (``exact_text``, ``simulated_text``).
        """
        import pandas as pd

        rows = []
        for c, a in zip(self.file.claims, self.answers):
            frac = a.exact_fraction
            rows.append({
                "id": c.id, "quote": c.quote, "question": c.question.text, "claim": a.claimed_text,
                "unit": a.unit, "claimed": None if a.claimed is None else float(a.claimed),
                "precision": a.precision if a.claimed is not None else None,
                "exact": None if a.exact is None else float(a.exact),
                "exact_fraction": None if frac is None else str(frac),
                "estimate": a.estimate, "ci95_low": None if a.ci is None else a.ci[0],
                "ci95_high": None if a.ci is None else a.ci[1], "n_simulated": a.n,
                "exact_text": a.exact_text, "simulated_text": a.simulated_text, "verdict": a.verdict,
                "method": a.method + (f"; simulated: {a.simulated_method}" if a.simulated_method else ""),
                "note": a.note})   # no timings: the same inputs give the same report, byte for byte
        return pd.DataFrame(rows).set_index("id")

    def to_json(self) -> dict:
        """Numbers as numbers and fractions as Fraction (the CLI prints them as
        numerator/denominator/value)."""
        out = []
        for c, a in zip(self.file.claims, self.answers):
            d = a.to_dict()
            out.append({"id": c.id, "quote": c.quote, **d})
        return {"title": self.file.title, "file": self.file.source, "games": self.games, "throws": self.throws,
                "seed": self.seed, "claims": out}


def check_claims(claims: ClaimsFile, *, games: int = 20_000, throws: int = 100_000, seed: int = 2026,
                 progress=None, run_options=None) -> ClaimsResult:
    """Answer every claim of a parsed file (questions on the same rules and strategy
    share their exact distribution and their simulated games).

    The claims that share nothing with the others (:func:`answered_alone`: on dice
    alone, the best or worst card) are answered in a forked process beside this one
    (:class:`~yahtzee_sim.forkpool.Beside`, at a lower priority), while this one starts
    at once on the claims that wait for a solve, a distribution or a strategy's games (on
    a first run, compilations); the same answers, in the file's order.
    """
    from ..forkpool import Beside, Takes
    from ..progress import as_progress
    from . import answer
    from .gamescope import distributions_beside

    report = as_progress(progress)
    start = time.perf_counter()
    cache: dict = {}
    n = len(claims.claims)
    answers: list = [None] * n
    alone = [i for i, c in enumerate(claims.claims) if answered_alone(c.question)]
    here = [i for i in range(n) if i not in alone]

    def ask(i: int, progress=progress):
        c = claims.claims[i]
        a = answer(c.question, games=games, throws=throws, seed=seed, cache=cache, progress=progress,
                   run_options=run_options)
        return a.judge(c.claimed, c.precision, c.criterion)

    def ask_beside(i: int):
        if not takes.take(i):       # this process took it (its own claims done first)
            return None
        # a rule set does not pickle (its scoring functions): the answer travels back
        # without its question, which this process has
        return dataclasses.replace(ask(i, progress=None), question=None)   # quiet: this process reports

    # beside only when both kinds are there: a file of one kind is answered here, in
    # order (nothing to gain from a second process)
    beside = None
    if alone and here:
        takes = Takes(n)            # made before the fork: both processes see each take
        beside = Beside([(str(i), functools.partial(ask_beside, i)) for i in alone], what="claims",
                        nice=CLAIMS_BESIDE_NICE)
    # the exact distributions the claims read, optimal's here and the others beside it
    started = distributions_beside([c.question for c in claims.claims], cache)
    try:
        for k, i in enumerate(here if beside is not None else range(n)):
            report("claims", k, n)
            answers[i] = ask(i)
        if beside is not None:
            # its own claims done, this process takes the others from the last while the
            # forked one goes on from the first, until they meet
            for i in reversed(alone):
                if not takes.take(i):
                    break
                report("claims", n - sum(a is None for a in answers), n)
                answers[i] = ask(i)
            for i in alone:
                if answers[i] is None:
                    report("claims", n - sum(a is None for a in answers), n)
                    try:
                        got = beside.result(str(i))
                    except RuntimeError:    # it failed or ended: answered here as usual
                        got = None
                    answers[i] = (ask(i) if got is None else
                                  dataclasses.replace(got, question=claims.claims[i].question))
    finally:
        if beside is not None:
            beside.stop()
        for b in started:
            b.stop()
    report("claims", n, n)
    return ClaimsResult(file=claims, answers=answers, games=games, throws=throws, seed=seed,
                        seconds=time.perf_counter() - start)


CLAIMS_BESIDE_NICE = 10
"""The priority of the process answering the claims that share nothing (an ``os.nice``
increment): it takes the CPU the solves and the compilations leave."""


def answered_alone(question) -> bool:
    """Is ``question`` answered without a solve, a strategy's distribution or its games
    (what the claims of a file share): from the dice alone (a roll, a position or a turn
    chased or played by a plain strategy, :data:`PLAIN_PLAYS`; a card), or the best or
    worst card possible (``play = "any"``)?

    >>> from yahtzee_sim.questions.spec import parse_question
    >>> answered_alone(parse_question({"ask": "chance", "event": "large_straight", "scope": "turn"}))
    True
    >>> answered_alone(parse_question({"ask": "max", "event": "score", "scope": "game", "play": "any"}))
    True
    >>> answered_alone(parse_question({"ask": "chance", "event": "upper_bonus", "scope": "game"}))
    False
    """
    if question.versus is not None and not answered_alone(question.versus):
        return False
    if question.scope == "card" or (question.scope == "game" and question.play == "any"):
        return True
    return (question.scope in ("roll", "position", "turn") and question.play in PLAIN_PLAYS
            and question.event.kind != "points_to_come")


PLAIN_PLAYS = ("chase", "random", "keep-largest")
"""The plays of a roll, position or turn question whose keeps need no solve, table or
compiled loop (another strategy's, e.g. optimal's, is shared with the file's other claims)."""
