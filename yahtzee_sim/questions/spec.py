"""A question as a validated object: what is asked, of which event, in which scope.

Over 600 lines: every kind of question is validated here, before any work, so that the
one-line errors and their lists of valid choices live in one place.

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

ASKS = ("chance", "mean", "sd", "percentile", "expected-rolls", "expected-turns", "max", "min", "value")
SCOPES = ("roll", "position", "turn", "game", "table", "card")
DICE_SCOPES = ("roll", "position", "turn")
OPS = (">=", "<=", "==", ">", "<", "between")
# Quantities a game can be asked about (each also takes a comparison: ``zeros >= 1``).
GAME_QUANTITIES = ("score", "box", "five_of_a_kind", "scored_five", "zeros", "when", "upper", "best_box",
                   "points_to_come")
COMPARES = ("difference", "ratio")
EVENT_WORDS = ("a pattern ({patterns})", "box NAME [op N]", "score [op N]", "upper_bonus",
               "five_of_a_kind >= K (game)", "scored_five >= K (game: five of a kinds scoring the full box or a bonus)",
               "zeros [NAME,NAME] [op K] (game)", "when NAME (game)", "upper [op N] (game, card)",
               "best_box [except NAME] (roll, position, turn)", "faces DICE (roll, position, turn)",
               "points_to_come (position, turn: optimal play with a card)", "served NAME (Generala)", "win",
               "tie (table)", "A and B", "not A")
KEYS = ("ask", "event", "scope", "rules", "options", "play", "strategy", "keep", "dice", "hold", "rolls_left",
        "q", "players", "filled", "upper", "given", "versus", "compare", "write", "constraint")
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
    parts: tuple = ()

    @property
    def text(self) -> str:
        """The event as it would be written in a claims file.

        >>> Event("box", "chance", ">=", 20).text
        'box chance >= 20'
        >>> parse_event("not (box fives >= 15 and box sixes >= 18)").text
        'not (box fives >= 15 and box sixes >= 18)'
        """
        if self.kind == "all":
            return " and ".join(p.text for p in self.parts)
        if self.kind == "not":
            inner = self.parts[0]
            return f"not ({inner.text})" if inner.kind == "all" else f"not {inner.text}"
        if self.kind == "best_box":
            head = "best_box" + (f" except {self.name}" if self.name else "")
        elif self.kind == "faces":
            head = f"faces {self.name}"
        else:
            head = self.kind if self.name is None else (self.name if self.kind == "pattern" else f"{self.kind} {self.name}")
        if self.op is None:
            return head
        if self.op == "between":
            return f"{head} between {_num(self.low)} {_num(self.high)}"
        return f"{head} {self.op} {_num(self.low)}"

    @property
    def is_condition(self) -> bool:
        """True or false for each outcome (something ``chance`` can be asked of)."""
        return self.op is not None or self.kind in ("pattern", "upper_bonus", "served", "win", "tie", "all", "not",
                                                    "faces")

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


_EVENT_RE = re.compile(r"^\s*(?P<head>[A-Za-z_][\w\-, ]*?)\s*(?:(?P<op>>=|<=|==|=|>|<)\s*(?P<value>[-+]?\d+(\.\d+)?)"
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

    if isinstance(text, (list, tuple)) and text and all(isinstance(t, str) for t in text):
        text = " and ".join(text)    # a list in a file: every one holds
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"the event must be a non-empty text, got {text!r}; valid events: {_event_words(rules)}")
    stripped = text.strip()
    if stripped.lower().startswith("not ") or stripped.lower().startswith("not("):
        # "not" negates everything after it: "not box fives >= 15 and box sixes >= 18"
        # is "not (box fives >= 15 and box sixes >= 18)"
        inner = parse_event(_unwrap(stripped[3:]), rules)
        if not inner.is_condition:
            raise ValueError(f"event {text!r}: 'not' needs a condition (true or false), got {inner.text!r}")
        return Event("not", parts=(inner,))
    pieces = re.split(r"\s+and\s+(?=[A-Za-z(])", _unwrap(stripped))   # "between 1 and 2" is not split
    if len(pieces) > 1:
        parts = tuple(parse_event(piece, rules) for piece in pieces)
        quantity = [p for p in parts if not p.is_condition]
        if quantity:
            raise ValueError(f"event {text!r}: 'and' joins conditions (true or false); {quantity[0].text!r} is a "
                             "quantity (add a comparison, e.g. '>= 1')")
        return Event("all", parts=parts)
    text = _unwrap(stripped)
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
    if head == "faces":
        if op is not None or not rest:
            raise ValueError(f"event {text!r}: 'faces' takes dice and no comparison, e.g. 'faces 34' (the dice "
                             "show at least these faces)")
        if rules is not None:
            dice = _dice_text(rest.replace(" ", ""), rules, "faces", allow_empty=False)
        else:
            dice = tuple(sorted(int(c) for c in rest if c.isdigit()))
        return Event("faces", "".join(map(str, dice)))
    if head == "best_box":
        name = None
        if rest:
            w = rest.split()
            if w[0].lower() != "except" or len(w) < 2:
                raise ValueError(f"event {text!r}: write 'best_box' or 'best_box except NAME'")
            name = rules.box_names[rules.box_index(" ".join(w[1:]))] if rules is not None else _norm(" ".join(w[1:]))
        return Event("best_box", name, op, low, high)
    if head == "zeros" and rest:     # zeros among the named boxes: "zeros ones,yahtzee"
        names = [n for n in re.split(r"[,\s]+", rest) if n]
        if rules is not None:
            names = [rules.box_names[rules.box_index(n)] for n in names]
        return Event("zeros", ",".join(names), op, low, high)
    if head == "when":
        if not rest or op is not None:
            raise ValueError(f"event {text!r}: write 'when NAME' (how far through the game box NAME is filled: "
                             "0 = first turn, 1 = last)")
        return Event("when", rules.box_names[rules.box_index(rest)] if rules is not None else _norm(rest))
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
    if head in ("score", "zeros", "scored_five", "upper"):
        return Event(head, None, op, low, high)
    if head == "points_to_come":
        if op is not None:
            raise ValueError(f"event {text!r}: points_to_come is a quantity; ask its mean")
        return Event(head)
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


def _unwrap(text: str) -> str:
    """``(A and B)`` -> ``A and B`` (one pair of outer parentheses)."""
    t = text.strip()
    while t.startswith("(") and t.endswith(")") and t.count("(") == 1:
        t = t[1:-1].strip()
    return t


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
    filled: tuple = ()
    upper: int | None = None
    given: Any = None
    versus: Any = None
    compare: str | None = None
    write: Any = None
    constraint: str | None = None

    @property
    def has_card(self) -> bool:
        """A position or turn on a card that is not fresh (``filled`` or ``upper`` given)."""
        return bool(self.filled) or self.upper is not None

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
        elif self.scope == "card":
            where = "card: " + ", ".join(f"{b} {d}" for b, d in self.write)
        if self.has_card:
            where += f", card with {', '.join(self.filled) or 'no box'} filled" + \
                (f" and {self.upper} in the upper section" if self.upper is not None else "")
        if self.given is not None:
            where += f", given {self.given.text}"
        if self.constraint:
            where += f", {self.constraint}"
        ask = self.ask if self.q is None else f"percentile {_num(self.q)}"
        if self.scope in ("roll", "card"):   # one throw of all the dice, or a written card: no decision
            text = f"{ask} of {self.event.text}, {where} ({self.rules.key})"
        else:
            text = f"{ask} of {self.event.text}, {where}, playing {self.play} ({self.rules.key})"
        if self.versus is not None:
            text += f"; {self.compare} to: {self.versus.text}"
        return text


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
    if spec.get("versus") is not None or spec.get("compare") is not None:
        return _parse_versus(spec, rules)
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
    if play == "any":
        if scope != "game" or ask not in ("max", "min") or event.kind != "score" or event.op is not None:
            raise ValueError("play 'any' (every decision and every die chosen: the best or worst card possible) "
                             "answers max or min of score in a game")
    elif play not in ("chase", "play-to-win") or (play == "play-to-win" and scope != "table"):
        get_strategy(play)  # an unknown name: one line listing the strategies
    elif play == "chase" and scope in ("game", "table"):
        raise ValueError(f"play 'chase' is for roll, position and turn questions; a {scope} question needs a "
                         "strategy (e.g. optimal)")
    constraint = spec.get("constraint")
    if constraint is not None:
        from ..exact.extremes import parse_constraints

        if play != "any":
            raise ValueError("constraint restricts the best or worst card possible: it goes with play = 'any'")
        constraint = "+".join(parse_constraints(constraint))
    # which events fit which scope
    kinds = _leaf_kinds(event)
    if scope in DICE_SCOPES:
        bad = sorted(kinds - {"pattern", "box", "faces", "best_box", "points_to_come"})
        if bad:
            raise ValueError(f"event {event.text!r} is not about one {scope}; a {scope} question asks about a "
                             "pattern, a box's points (box NAME [op N]), best_box, faces DICE or points_to_come")
    elif scope == "game":
        bad = sorted(kinds & {"pattern", "win", "tie", "faces", "best_box", "points_to_come"})
        if bad:
            raise ValueError(f"event {event.text!r} is not about a game; a game question asks about score, box "
                             "NAME, upper, upper_bonus, five_of_a_kind, scored_five, zeros, when NAME or served NAME")
    elif scope == "card":
        bad = sorted(kinds - {"box", "upper", "score", "upper_bonus"})
        if bad:
            raise ValueError(f"event {event.text!r} is not about a written card; a card question asks about box "
                             "NAME, upper, score or upper_bonus")
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
    if ask in ("mean", "sd", "percentile", "max", "min", "value") and not event.is_quantity:
        raise ValueError(f"{ask} needs a quantity (score, box NAME, five_of_a_kind, scored_five, zeros, upper, when "
                         f"NAME, best_box) without a comparison, got {event.text!r}")
    if ask in ("mean", "sd", "percentile", "max", "min") and scope in DICE_SCOPES \
            and event.kind not in ("box", "best_box", "points_to_come"):
        raise ValueError(f"the quantity of a {scope} question is a box's points (box NAME, best_box), got "
                         f"{event.text!r}")
    if event.kind == "points_to_come" and (ask != "mean" or play != "optimal" or scope not in ("position", "turn")):
        raise ValueError("points_to_come (what the rest of the game adds under optimal play) is asked as its mean "
                         "in a position or a turn, with play = 'optimal'")
    if (ask == "value" and scope != "card") or (scope == "card" and ask not in ("value", "chance")):
        raise ValueError("ask 'value' goes with scope 'card' (a written card: no chance involved); a card question "
                         "asks value or chance")
    if ask == "expected-rolls" and (event.kind != "pattern" or scope not in ("roll", "turn")):
        raise ValueError("expected-rolls asks how many throws a pattern takes: give a pattern event with scope "
                         "roll (all dice thrown each time) or turn (keeping, unlimited rolls)")
    if ask == "expected-turns" and (scope != "turn" or not event.is_condition):
        raise ValueError("expected-turns asks how many fresh turns an event takes (1 / its chance per turn): give "
                         "a condition with scope = 'turn'")
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
    filled, upper = _parse_card(spec, rules, scope, play, event)
    given = None
    if spec.get("given") is not None:
        if scope != "game":
            raise ValueError("given (a condition on the game) is for scope = 'game'")
        given = parse_event(spec["given"], rules)
        if not given.is_condition or _leaf_kinds(given) & {"pattern", "win", "tie", "faces", "best_box"}:
            raise ValueError(f"given {given.text!r}: a condition on the game's card, e.g. 'box sixes >= 18'")
    write = None
    if scope == "card":
        write = _parse_write(spec.get("write"), rules)
    elif spec.get("write") is not None:
        raise ValueError("write (dice written in boxes) is for scope = 'card'")
    return Question(ask=ask, event=event, scope=scope, rules=rules, play=play, keep=keep, dice=dice, hold=hold,
                    rolls_left=rolls_left, q=q, players=players, filled=filled, upper=upper, given=given,
                    write=write, constraint=constraint)


def _leaf_kinds(event: Event) -> set:
    if event.kind in ("all", "not"):
        return set().union(*(_leaf_kinds(p) for p in event.parts))
    return {event.kind}


def _parse_versus(spec: dict, rules) -> Question:
    """``versus`` (the keys that differ) and ``compare``: this question's value minus, or
    divided by, the other's."""
    import dataclasses

    versus = spec.get("versus")
    if not isinstance(versus, dict) or not versus:
        raise ValueError("versus must be a table of the keys that differ, e.g. versus = { keep = \"1234\" }")
    bad = sorted((set(versus) - set(KEYS)) | ({"versus", "compare"} & set(versus)))
    if bad:
        raise ValueError(f"versus: key {bad[0]!r} cannot differ; valid keys: "
                         f"{', '.join(k for k in KEYS if k not in ('versus', 'compare'))}")
    compare = spec.get("compare", "difference")
    if compare not in COMPARES:
        raise ValueError(f"unknown compare {compare!r}; valid: {', '.join(COMPARES)}")
    base = {k: v for k, v in spec.items() if k not in ("versus", "compare")}
    first = parse_question(base, rules=rules)
    other_spec = {**base, **versus}
    if "strategy" in versus:
        other_spec.pop("play", None)
    if "play" in versus:
        other_spec.pop("strategy", None)
    other = parse_question(other_spec, rules=rules)
    if (first.ask == "chance") != (other.ask == "chance") and compare == "difference":
        raise ValueError("versus: a difference needs two values of the same kind (two chances, or two quantities)")
    return dataclasses.replace(first, versus=other, compare=compare)


def _parse_card(spec: dict, rules, scope: str, play: str, event: Event) -> tuple:
    """``filled`` (boxes already used) and ``upper`` (the upper section's points so far)."""
    raw_filled, raw_upper = spec.get("filled"), spec.get("upper")
    if raw_filled is None and raw_upper is None:
        return (), None
    if scope not in ("position", "turn"):
        raise ValueError(f"filled and upper describe the card of a position or a turn, not of a {scope} question")
    if raw_filled is None:
        raw_filled = []
    if isinstance(raw_filled, str):
        raw_filled = [w for w in re.split(r"[,\s]+", raw_filled) if w]
    if not isinstance(raw_filled, (list, tuple)):
        raise ValueError(f"filled must be box names such as 'ones,twos', got {raw_filled!r}")
    filled = []
    for name in raw_filled:
        box = rules.box_names[rules.box_index(str(name))]    # an unknown box: one line listing them
        if box in filled:
            raise ValueError(f"filled names {box} twice")
        filled.append(box)
    if len(filled) == rules.n_boxes:
        raise ValueError(f"filled: every box of {rules.key} is used, so no turn is left to play")
    upper_boxes = [b for b, up in zip(rules.box_names, rules.is_upper) if up]
    upper = None
    if raw_upper is not None:
        if not rules.upper_bonus:
            raise ValueError(f"upper: {rules.key} has no upper bonus, so the upper total changes nothing")
        upper = _int(raw_upper, "upper")
        possible = {0}
        for b in filled:
            if b in upper_boxes:
                face = int(rules.upper_face[rules.box_index(b)])
                possible = {t + face * k for t in possible for k in range(rules.n_dice + 1)}
        if upper not in possible:
            near = sorted(possible, key=lambda t: (abs(t - upper), t))[:3]
            raise ValueError(f"upper {upper}: the filled upper boxes ({', '.join(b for b in filled if b in upper_boxes) or 'none'}) "
                             f"cannot add up to it; possible totals near it: {', '.join(map(str, sorted(near)))}")
    if play not in ("chase", "optimal"):
        raise ValueError(f"with a card (filled, upper) the play is chase (the dice alone) or optimal (its decisions "
                         f"for this card, from the solver's tables), not {play!r}: a strategy's keeps are known "
                         "exactly on a fresh card only")
    for leaf in _leaves(event):
        if leaf.kind == "box" and leaf.name in filled:
            raise ValueError(f"event {event.text!r}: box {leaf.name} is already filled on this card; open boxes: "
                             f"{', '.join(b for b in rules.box_names if b not in filled)}")
    return tuple(filled), upper


def _leaves(event: Event):
    if event.kind in ("all", "not"):
        for p in event.parts:
            yield from _leaves(p)
    else:
        yield event


def _parse_write(raw, rules) -> tuple:
    """``write = { ones = "111", ... }``: dice written in boxes -> ((box, dice), ...)."""
    if not isinstance(raw, dict) or not raw:
        raise ValueError("a card question needs write = { BOX = \"DICE\", ... } (the dice written in each box), e.g. "
                         "write = { sixes = \"6666\" }")
    out = []
    for name, value in raw.items():
        box = rules.box_names[rules.box_index(str(name))]
        dice = _dice_text(value, rules, f"write {box}", allow_empty=True)
        if len(dice) != rules.n_dice and not rules.is_upper[rules.box_index(box)]:
            raise ValueError(f"write {box}: a lower box scores all {rules.n_dice} dice, got {len(dice)}")
        out.append((box, "".join(map(str, dice))))
    return tuple(out)


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
