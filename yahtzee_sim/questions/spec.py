"""A question as a validated object: what is asked, of which event, in which scope.

Everything a writer can ask is checked here, before any work, so that bad input is
one line naming the valid choices (``ValueError``) and nothing is computed or
written.

>>> q = parse_question({"ask": "chance", "event": "large_straight", "scope": "turn"})
>>> q.ask, q.event.kind, q.event.name, q.play
('chance', 'pattern', 'large_straight', 'chase')
>>> parse_event("score >= 200").text
'score >= 200'
>>> parse_question({"ask": "chance", "event": "straight", "scope": "turn"})  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown event 'straight'; valid events: a pattern (five_of_a_kind, ...
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

ASKS = ("chance", "mean", "sd", "percentile", "expected-rolls", "max", "min")
SCOPES = ("roll", "position", "turn", "game", "table")
DICE_SCOPES = ("roll", "position", "turn")
OPS = (">=", "<=", "==", ">", "<", "between")
# Quantities a game can be asked about (each also takes a comparison: ``zeros >= 1``).
GAME_QUANTITIES = ("score", "box", "five_of_a_kind", "scored_five", "zeros")
EVENT_WORDS = ("a pattern ({patterns})", "box NAME [op N]", "score [op N]", "upper_bonus",
               "five_of_a_kind >= K (game)", "scored_five >= K (game: five of a kinds scoring the full box or a bonus)",
               "zeros [op K] (game)", "served NAME (Generala)", "win", "tie (table)")
KEYS = ("ask", "event", "scope", "rules", "options", "play", "strategy", "keep", "dice", "hold", "rolls_left",
        "q", "players")
MAX_PLAYERS = 20


@dataclass(frozen=True)
class Event:
    """What a question is about.

    kind : ``pattern``, ``box``, ``score``, ``upper_bonus``, ``five_of_a_kind``,
        ``scored_five``, ``zeros``, ``served``, ``win`` or ``tie``.
    name : the pattern or box name (canonical), when the kind has one.
    op, low, high : a comparison (``>= N`` is ``op=">=", low=N``; ``between A B`` has
        both ends, inclusive); ``op=None`` for a quantity (``box chance``, ``score``)
        or for events that are true or false by themselves (a pattern, ``upper_bonus``).
    """

    kind: str
    name: str | None = None
    op: str | None = None
    low: float | None = None
    high: float | None = None

    @property
    def text(self) -> str:
        """The event as it would be written in a claims file.

        >>> Event("box", "chance", ">=", 20).text
        'box chance >= 20'
        """
        head = self.kind if self.name is None else (self.name if self.kind == "pattern" else f"{self.kind} {self.name}")
        if self.op is None:
            return head
        if self.op == "between":
            return f"{head} between {_num(self.low)} {_num(self.high)}"
        return f"{head} {self.op} {_num(self.low)}"

    @property
    def is_condition(self) -> bool:
        """True or false for each outcome (something ``chance`` can be asked of)."""
        return self.op is not None or self.kind in ("pattern", "upper_bonus", "served", "win", "tie")

    @property
    def is_quantity(self) -> bool:
        """A number for each outcome (something ``mean``, ``sd``, ... can be asked of)."""
        return self.op is None and self.kind in GAME_QUANTITIES

    def holds(self, x):
        """Elementwise: does the quantity ``x`` satisfy the comparison?

        >>> import numpy as np
        >>> Event("score", op="between", low=2, high=3).holds(np.arange(5)).tolist()
        [False, False, True, True, False]
        """
        op, a, b = self.op, self.low, self.high
        if op == ">=":
            return x >= a
        if op == "<=":
            return x <= a
        if op == ">":
            return x > a
        if op == "<":
            return x < a
        if op == "==":
            return x == a
        return (x >= a) & (x <= b)


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _norm(word: str) -> str:
    return str(word).strip().lower().replace("-", "_").replace(" ", "_")


_EVENT_RE = re.compile(r"^\s*(?P<head>[A-Za-z_][\w\- ]*?)\s*(?:(?P<op>>=|<=|==|=|>|<)\s*(?P<value>[-+]?\d+(\.\d+)?)"
                       r"|\s+between\s+(?P<a>[-+]?\d+(\.\d+)?)\s*(?:and|\.\.|\s)\s*(?P<b>[-+]?\d+(\.\d+)?))?\s*$")


def parse_event(text: str, rules=None) -> Event:
    """Read an event: a pattern name, ``box NAME >= N``, ``score between A B``, ...

    With ``rules`` (a RuleSet) pattern and box names are checked and made canonical.

    >>> parse_event("box Yahtzee == 0").text
    'box yahtzee == 0'
    >>> parse_event("score between 200 250").high
    250.0
    >>> parse_event("zeros >= x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cannot read the event 'zeros >= x'; ...
    """
    from ..patterns import pattern_names

    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the event must be a non-empty text, got {text!r}; valid events: {_event_words(rules)}")
    m = _EVENT_RE.match(text)
    if m is None:
        raise ValueError(f"cannot read the event {text!r}; write a name and at most one comparison "
                         f"(>=, <=, ==, >, <, between A B), e.g. 'score >= 200'; valid events: {_event_words(rules)}")
    words = m.group("head").split()
    head = _norm(words[0])
    rest = " ".join(words[1:])
    op = m.group("op")
    if op == "=":
        op = "=="
    low = high = None
    if op is not None:
        low = float(m.group("value"))
    elif m.group("a") is not None:
        op, low, high = "between", float(m.group("a")), float(m.group("b"))
        if low > high:
            raise ValueError(f"event {text!r}: between A B needs A <= B")
    if head in ("box", "served"):
        if not rest:
            raise ValueError(f"event {text!r}: '{head}' needs a box name, e.g. '{head} chance'"
                             + (f"; valid boxes: {', '.join(rules.box_names)}" if rules is not None else ""))
        name = rules.box_names[rules.box_index(rest)] if rules is not None else _norm(rest)
        if head == "served" and op is not None:
            raise ValueError(f"event {text!r}: 'served NAME' is true or false; it takes no comparison")
        return Event(head, name, op, low, high)
    if rest:
        raise ValueError(f"unknown event {text!r}; valid events: {_event_words(rules)}")
    if head in ("score", "zeros", "scored_five"):
        return Event(head, None, op, low, high)
    if head == "five_of_a_kind" and op is not None:
        return Event("five_of_a_kind", None, op, low, high)
    if head in ("upper_bonus", "win", "tie"):
        if op is not None:
            raise ValueError(f"event {text!r}: {head} is true or false; it takes no comparison")
        return Event(head)
    names = pattern_names(rules.dice if rules is not None else None)
    if head in names:
        if op is not None:
            raise ValueError(f"event {text!r}: a pattern is true or false; it takes no comparison")
        return Event("pattern", head)
    raise ValueError(f"unknown event {text!r}; valid events: {_event_words(rules)}")


def _event_words(rules) -> str:
    from ..patterns import pattern_names

    names = pattern_names(rules.dice if rules is not None else None)
    return "; ".join(EVENT_WORDS).format(patterns=", ".join(names))


@dataclass(frozen=True)
class Question:
    """A validated question (build it with :func:`parse_question`).

    rules : the RuleSet. play : ``"chase"`` or a strategy name / ``module:Class``.
    keep : held dice (a position before a throw); dice : the dice in front of you
        (a position after a throw); hold : for ``dice`` positions, the dice you mean to
        hold (answered beside the best hold). rolls_left : throws still to come.
    q : the percentile asked (0 < q <= 100). players : the strategies at a table
        (seat 1 is the one asked about).
    """

    ask: str
    event: Event
    scope: str
    rules: Any = field(repr=False)
    play: str = "chase"
    keep: Any = None
    dice: Any = None
    hold: Any = None
    rolls_left: Any = None
    q: Any = None
    players: Any = None

    @property
    def text(self) -> str:
        """The question in one line, as the shell would ask it.

        >>> parse_question({"ask": "chance", "event": "large_straight", "scope": "position",
        ...                 "keep": "2345", "rolls_left": 2}).text
        'chance of large_straight, position: kept 2345 with 2 rolls left, playing chase (yahtzee)'
        """
        where = self.scope
        if self.scope == "position":
            d = "".join(map(str, self.keep if self.keep is not None else self.dice))
            where = (f"position: kept {d}" if self.keep is not None else f"position: dice {d}") + \
                f" with {self.rolls_left} roll{'s' if self.rolls_left != 1 else ''} left"
            if self.hold is not None:
                where += f", holding {''.join(map(str, self.hold)) or 'nothing'}"
        elif self.scope == "table":
            where = f"table of {len(self.players)} ({', '.join(self.players)})"
        ask = self.ask if self.q is None else f"percentile {_num(self.q)}"
        if self.scope == "roll":   # one throw of all the dice: no decision to play
            return f"{ask} of {self.event.text}, {where} ({self.rules.key})"
        return f"{ask} of {self.event.text}, {where}, playing {self.play} ({self.rules.key})"


def _dice_text(value, rules, key: str, *, allow_empty: bool) -> tuple:
    d = rules.dice
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if isinstance(value, (list, tuple)):
        parts = [str(v) for v in value]
    elif isinstance(value, str):
        text = value.strip()
        parts = text.replace(",", " ").split() if ("," in text or " " in text) else list(text)
        if text in ("", "-", "none", "nothing"):
            parts = []
    else:
        raise ValueError(f"{key} must be dice such as '2345', got {value!r}")
    try:
        dice = tuple(sorted(int(p) for p in parts))
    except ValueError:
        raise ValueError(f"{key} must be dice such as '2345' (faces 1..{d.n_faces}), got {value!r}") from None
    bad = [x for x in dice if not 1 <= x <= d.n_faces]
    if bad:
        raise ValueError(f"{key} {value!r}: face {bad[0]} does not exist; the dice of {rules.key} have faces "
                         f"1..{d.n_faces}")
    if len(dice) > d.n_dice or (key == "dice" and len(dice) != d.n_dice):
        raise ValueError(f"{key} {value!r}: {len(dice)} dice, but {rules.key} throws {d.n_dice}"
                         + (" (keep at most that many)" if key != "dice" else ""))
    if not dice and not allow_empty:
        raise ValueError(f"{key} must name at least one die")
    return dice


def _int(value, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().lstrip("+").isdigit():
        raise ValueError(f"{key} must be a whole number, got {value!r}")
    return int(value)


def parse_question(spec: dict, *, rules=None) -> Question:
    """A :class:`Question` from the keys of a claims file (or of :func:`ask`).

    Unknown keys, names and impossible positions raise a one-line ``ValueError``
    naming the valid choices.

    >>> parse_question({"ask": "chance", "event": "large_straight", "scope": "position",
    ...                 "keep": "23456", "rolls_left": 3})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: rolls_left 3: with kept dice 1 or 2 throws can be left in yahtzee (3 rolls a turn)...
    """
    from ..rules import get_rules
    from ..strategies import get_strategy

    unknown = sorted(set(spec) - set(KEYS))
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; valid keys: {', '.join(KEYS)}")
    ask = _norm(spec.get("ask", "chance")).replace("_", "-")
    if ask not in ASKS:
        raise ValueError(f"unknown ask {spec.get('ask')!r}; valid asks: {', '.join(ASKS)}")
    scope = _norm(spec.get("scope", "turn"))
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {spec.get('scope')!r}; valid scopes: {', '.join(SCOPES)}")
    if rules is None or "rules" in spec or "options" in spec:
        options = spec.get("options", ())
        if isinstance(options, str):
            options = [options]
        rules = get_rules(spec.get("rules", "yahtzee" if rules is None else rules), options)
    if scope == "game" and _norm(str(spec.get("event", ""))) == "five_of_a_kind":
        event = Event("five_of_a_kind")     # in a game: the number of turns ending so (a quantity)
    else:
        event = parse_event(spec.get("event", ""), rules)
    play = spec.get("play", spec.get("strategy"))
    if "play" in spec and "strategy" in spec and spec["play"] != spec["strategy"]:
        raise ValueError("give play or strategy, not both")
    if play is None:
        play = "chase" if scope in DICE_SCOPES else "optimal"
    if not isinstance(play, str):
        raise ValueError(f"play must be 'chase' or a strategy name, got {play!r}")
    if play not in ("chase", "play-to-win") or (play == "play-to-win" and scope != "table"):
        get_strategy(play)  # an unknown name: one line listing the strategies
    elif scope in ("game", "table"):
        raise ValueError(f"play 'chase' is for roll, position and turn questions; a {scope} question needs a "
                         "strategy (e.g. optimal)")
    # which events fit which scope
    if scope in DICE_SCOPES:
        if event.kind not in ("pattern", "box"):
            raise ValueError(f"event {event.text!r} is not about one {scope}; a {scope} question asks about a "
                             "pattern or a box's points (box NAME [op N])")
    elif scope == "game":
        if event.kind in ("pattern", "win", "tie"):
            raise ValueError(f"event {event.text!r} is not about a game; a game question asks about score, box "
                             "NAME, upper_bonus, five_of_a_kind, scored_five, zeros or served NAME")
    elif event.kind not in ("win", "tie"):
        raise ValueError(f"event {event.text!r} is not about a table; a table question asks about win or tie")
    if event.kind == "upper_bonus" and not rules.upper_bonus:
        raise ValueError(f"{rules.key} has no upper bonus")
    if event.kind in ("served", "scored_five") and rules.five_box is None:
        raise ValueError(f"{rules.key} has no five-of-a-kind box; {event.kind} needs one")
    if event.kind == "served":
        five = rules.box_names[rules.box_index(rules.five_box)]
        if event.name != five or not rules.roll_dependent:
            raise ValueError(f"served {event.name}: only a served {five} is counted, and only where served dice "
                             "score more (generala)")
    # which asks fit the event
    if ask == "chance" and not event.is_condition:
        raise ValueError(f"chance needs an event that is true or false, e.g. '{event.text} >= 1'; "
                         f"{event.text!r} is a quantity")
    if ask in ("mean", "sd", "percentile", "max", "min") and not event.is_quantity:
        raise ValueError(f"{ask} needs a quantity (score, box NAME, five_of_a_kind, scored_five, zeros) without a "
                         f"comparison, got {event.text!r}")
    if ask in ("mean", "sd", "percentile", "max", "min") and scope in DICE_SCOPES and event.kind != "box":
        raise ValueError(f"the quantity of a {scope} question is a box's points (box NAME), got {event.text!r}")
    if ask == "expected-rolls" and (event.kind != "pattern" or scope not in ("roll", "turn")):
        raise ValueError("expected-rolls asks how many throws a pattern takes: give a pattern event with scope "
                         "roll (all dice thrown each time) or turn (keeping, unlimited rolls)")
    q = spec.get("q")
    if ask == "percentile":
        try:
            q = float(q)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ValueError(f"percentile needs q in (0, 100], got {spec.get('q')!r}") from None
        if not 0 < q <= 100:
            raise ValueError(f"percentile needs q in (0, 100], got {spec.get('q')!r}")
    elif q is not None:
        raise ValueError("q is only for ask = 'percentile'")
    # a position
    keep = dice = hold = rolls_left = None
    pos_keys = [k for k in ("keep", "dice", "hold", "rolls_left") if spec.get(k) is not None]
    if scope != "position":
        if pos_keys:
            raise ValueError(f"{pos_keys[0]} describes a position; use scope = 'position'")
    else:
        if (spec.get("keep") is None) == (spec.get("dice") is None):
            raise ValueError("a position needs exactly one of keep (the held dice, before a throw) or dice "
                             "(the dice in front of you, after a throw)")
        if spec.get("rolls_left") is None:
            raise ValueError("a position needs rolls_left (the throws still to come)")
        rolls_left = _int(spec["rolls_left"], "rolls_left")
        if spec.get("keep") is not None:
            keep = _dice_text(spec["keep"], rules, "keep", allow_empty=True)
            if not 1 <= rolls_left <= rules.n_rolls - 1 + (not keep):
                raise ValueError(f"rolls_left {rolls_left}: with kept dice 1 or {rules.n_rolls - 1} throws can be "
                                 f"left in {rules.key} ({rules.n_rolls} rolls a turn)" if rules.n_rolls > 2 else
                                 f"rolls_left {rolls_left}: with kept dice 1 throw can be left in {rules.key}")
        else:
            dice = _dice_text(spec["dice"], rules, "dice", allow_empty=False)
            if not 0 <= rolls_left <= rules.n_rolls - 1:
                raise ValueError(f"rolls_left {rolls_left}: after a throw 0 to {rules.n_rolls - 1} throws can be "
                                 f"left in {rules.key} ({rules.n_rolls} rolls a turn)")
            if spec.get("hold") is not None:
                hold = _dice_text(spec["hold"], rules, "hold", allow_empty=True)
                if any(hold.count(f) > dice.count(f) for f in set(hold)):
                    raise ValueError(f"hold {spec['hold']!r} is not among the dice {''.join(map(str, dice))}")
                if rolls_left == 0:
                    raise ValueError("hold needs at least one roll left")
        if spec.get("hold") is not None and keep is not None:
            raise ValueError("hold goes with dice (the dice in front of you), not with keep")
    players = None
    if scope == "table":
        raw = spec.get("players", 2)
        if isinstance(raw, (list, tuple)):
            players = tuple(str(p) for p in raw)
        else:
            n = _int(raw, "players")
            players = (play,) * n
        for p in players:
            if p != "play-to-win":   # the table's own strategy: it watches the other players
                get_strategy(p)
        if not 2 <= len(players) <= MAX_PLAYERS:
            raise ValueError(f"a table seats 2 to {MAX_PLAYERS} players, got {len(players)}")
        if ask != "chance":
            raise ValueError(f"a table question asks the chance of win or tie, not {ask}")
    elif spec.get("players") is not None:
        raise ValueError("players is for scope = 'table'")
    return Question(ask=ask, event=event, scope=scope, rules=rules, play=play, keep=keep, dice=dice, hold=hold,
                    rolls_left=rolls_left, q=q, players=players)


def parse_claimed(value) -> Fraction | float:
    """A claimed value: a number, a fraction ``"5/9"``, a percentage ``"26%"``, ``"1 in 10"``.

    >>> parse_claimed("5/9"), parse_claimed("26%"), parse_claimed(0.26), parse_claimed("1 in 12")
    (Fraction(5, 9), 0.26, 0.26, Fraction(1, 12))
    """
    if isinstance(value, bool):
        raise ValueError(f"a claimed value must be a number, a fraction '5/9' or a percentage '26%', got {value!r}")
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise ValueError(f"a claimed value must be finite, got {value!r}")
        return value
    if isinstance(value, str):
        text = value.strip().replace(",", "")
        try:
            if text.endswith("%"):
                return float(text[:-1]) / 100
            m = re.fullmatch(r"1\s+in\s+(\d+(\.\d+)?)", text)
            if m:
                return 1 / Fraction(m.group(1))
            return Fraction(text) if "/" in text else float(text)
        except (ValueError, ZeroDivisionError):
            pass
    raise ValueError(f"a claimed value must be a number, a fraction '5/9', a percentage '26%' or '1 in N', "
                     f"got {value!r}")


def parse_precision(value) -> float:
    """The unit a claim was stated in: a number or a percentage (``"1%"`` is 0.01); 0 = exact.

    >>> parse_precision("1%"), parse_precision(0.001), parse_precision("0.5"), parse_precision(0)
    (0.01, 0.001, 0.5, 0)
    """
    if isinstance(value, str):   # from the shell or a file: "0.01", "1%"
        text = value.strip()
        try:
            value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"precision must be a number >= 0 or a percentage such as '1%' (0 = exact), got {value!r}")
    return value
