"""Roll, position and turn questions: exact fractions, and a simulation of real dice.

The exact answer pushes the distribution of the dice through the keeps as integers
(a throw of ``m`` dice counted out of ``n_faces ** n_dice`` ordered outcomes, as in
:mod:`yahtzee_sim.exact.turns`), so every probability is a ``Fraction``. The keeps
are ``chase`` (the widget's best keeps for this event: its chance, or for a box's
points their mean) or a strategy's keeps on a fresh card. The simulation throws
dice with a NumPy Generator and applies the same keeps: it checks the chain, the
counting and the dice tables' bookkeeping, not the choice of keeps.

>>> from yahtzee_sim.questions.spec import parse_question
>>> q = parse_question({"ask": "chance", "event": "large_straight", "scope": "position", "keep": "2345",
...                     "rolls_left": 2})
>>> answer_dice(q, n=2000, seed=1).exact
Fraction(5, 9)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .answer import Answer, sample_statistic


def final_values(q) -> np.ndarray:
    """(R,) what each final roll is worth to the question: 0/1 for a condition, else points
    (floating point for ``points_to_come``: the solver's expected points)."""
    if q.event.kind == "points_to_come":
        return card_values(q)
    return _values(q, q.event)


def _values(q, ev) -> np.ndarray:
    from ..patterns import pattern_table

    rules = q.rules
    if ev.kind == "all":
        out = np.ones(rules.dice.n_rolls, dtype=np.int64)
        for part in ev.parts:
            out = out * _values(q, part)
        return out
    if ev.kind == "not":
        return 1 - _values(q, ev.parts[0])
    if ev.kind == "pattern":
        return pattern_table(rules.dice)[ev.name].to_numpy().astype(np.int64)
    if ev.kind == "faces":   # the dice show at least these faces
        need = _counts(rules.dice, [int(c) for c in ev.name])
        return (rules.dice.roll_counts >= need[None, :]).all(axis=1).astype(np.int64)
    tables = rules.score_tables
    # the points as the box scores them on a fresh card: dice of the first throw where
    # that matters (Generala's served dice), else of the last
    table = tables[0] if q.scope == "roll" else tables[-1]
    if ev.kind == "best_box":
        cols = [b for b in range(rules.n_boxes) if ev.name is None or rules.box_names[b] != ev.name]
        x = table[:, cols].max(axis=1).astype(np.int64)
    else:
        x = table[:, rules.box_index(ev.name)].astype(np.int64)
    return ev.holds(x).astype(np.int64) if ev.op is not None else x


def card_values(q) -> np.ndarray:
    """(R,) the expected points the rest of the game adds (this turn's box included) for
    each final roll of a turn on the question's card, under optimal play: the best box
    for the roll by the solver's value of the state it leads to.

    A filled five-of-a-kind box counts as scored 0 (no bonus to come).
    """
    from ..exact.solver import solve
    from ..rules import REGISTRY

    rules, d = q.rules, q.rules.dice
    sol = solve(rules, cache=rules.name in REGISTRY)
    n = d.n_rolls
    filled = np.zeros((1, rules.n_boxes), dtype=bool)
    for b in q.filled:
        filled[0, rules.box_index(b)] = True
    upper = int(q.upper or 0)
    rolls = np.arange(n)
    legal, scores, bonus = rules.turn_options(np.repeat(filled, n, 0), np.zeros(n, dtype=bool), rolls)
    scores = scores.astype(np.int64)
    gain = scores + rules.upper_bonus_gain(np.full(n, upper), scores) + bonus[:, None]
    five = rules.five_box_index if rules.five_box is not None else -1
    final = np.full(n, -np.inf)
    for b in np.flatnonzero(~filled[0]):
        after = filled.copy()
        after[0, b] = True
        up_after = np.full(n, upper) + (scores[:, b] if rules.is_upper[b] else 0)
        if rules.upper_bonus:
            up_after = np.minimum(up_after, rules.upper_bonus_threshold)
        full_after = (b == five) & (scores[:, b] == rules.five_box_points) if five >= 0 else np.zeros(n, bool)
        nxt = np.asarray(sol.value(np.repeat(after, n, 0), up_after, full_after), dtype=np.float64)
        final = np.where(legal[:, b], np.maximum(final, gain[:, b] + nxt), final)
    if not np.isfinite(final).all():
        raise ValueError("this card cannot occur in a game (the solver has no value for it): check filled and upper")
    return final


def _card_plan(q, x: np.ndarray, j_max: int) -> dict:
    """Optimal play's keeps on the question's card: those that maximize the expected
    points to come (the solver's decisions for this card)."""
    from ..exact.widget import best_keeps

    v = card_values(q) if q.event.kind != "points_to_come" else x
    plan = best_keeps(q.rules.dice, v.astype(np.float64)[None, :], rolls_left=j_max)
    return {j: plan.keeps[j][0].astype(np.intp)[:, None] for j in range(1, j_max + 1)}


def _rerolls(q) -> int:
    """Decisions still to make before the last throw lands."""
    if q.scope == "roll":
        return 0
    if q.scope == "turn":
        return q.rules.n_rolls - 1
    return q.rolls_left - 1 if q.keep is not None else q.rolls_left


def policy_tables(q, x: np.ndarray) -> dict:
    """Rerolls left j -> (R, M) keep indices (uniform over the M columns)."""
    from ..exact.turns import strategy_policy
    from ..exact.widget import best_keeps

    d, rules = q.rules.dice, q.rules
    j_max = _rerolls(q)
    if j_max == 0:
        return {}
    if q.play == "optimal" and (q.has_card or q.event.kind == "points_to_come"):
        return _card_plan(q, x, j_max)
    if q.play == "chase":
        plan = best_keeps(d, x.astype(np.float64)[None, :], rolls_left=j_max)
        return {j: plan.keeps[j][0].astype(np.intp)[:, None] for j in range(1, j_max + 1)}
    pol = strategy_policy(rules, q.play)
    return {j: pol.stage(j) for j in range(1, j_max + 1)}


def _start(q):
    """Exact start: (R,) integer weights over the rolls and their denominator, and the
    first stage of decisions (rerolls left)."""
    from ..exact.odds import roll_counts_exact
    from ..exact.turns import transition_counts

    d = q.rules.dice
    total = d.n_faces ** d.n_dice
    if q.scope in ("roll", "turn"):
        return np.array([int(c) for c in roll_counts_exact(d)], dtype=object), total
    if q.keep is not None:
        k = int(d.keep_index_of_counts(_counts(d, q.keep)))
        return np.array([int(c) for c in transition_counts(d)[k]], dtype=object), total
    w = np.zeros(d.n_rolls, dtype=object)
    w[:] = 0
    w[d.roll_index_of(list(q.dice))] = 1
    return w, 1


def _counts(d, dice) -> np.ndarray:
    c = np.zeros(d.n_faces, dtype=np.int64)
    for f in dice:
        c[f - 1] += 1
    return c


def exact_final(q, tables: dict, *, first_keep: int | None = None):
    """(R,) exact integer weights of the final roll and their denominator."""
    from ..exact.turns import transition_counts

    d = q.rules.dice
    t = transition_counts(d).astype(object)
    total = d.n_faces ** d.n_dice
    w, den = _start(q)
    for j in range(max(tables, default=0), 0, -1):
        keeps = tables[j]
        if first_keep is not None and j == max(tables):
            keeps = np.full((d.n_rolls, 1), first_keep, dtype=np.intp)
        m = keeps.shape[1]
        counts = np.zeros((d.n_rolls, d.n_keeps), dtype=object)
        counts[:] = 0
        for col in range(m):
            np.add.at(counts, (np.arange(d.n_rolls), keeps[:, col]), 1)
        nz = np.flatnonzero(w != 0)
        w = (w[nz] @ counts[nz]) @ t        # rolls -> keeps -> rolls, exactly
        den *= total * m
    return w, den


def exact_statistic(ask: str, w: np.ndarray, den: int, x: np.ndarray, q_pct=None):
    """The exact ``ask`` of the quantity ``x`` over rolls with weights ``w / den``.

    >>> w = np.array([1, 1, 2], dtype=object)
    >>> exact_statistic("mean", w, 4, np.array([0, 4, 8])), exact_statistic("percentile", w, 4, np.array([0, 4, 8]), 50)
    (Fraction(5, 1), 4)
    """
    if np.asarray(x).dtype.kind == "f":   # the solver's expected points: a float mean
        if ask != "mean":
            raise ValueError(f"{ask} of expected points is not defined; ask their mean")
        return math.fsum(float(Fraction(int(wi), den)) * float(v) for wi, v in zip(w, x) if wi)
    xs = [int(v) for v in x]
    if ask == "chance":
        return Fraction(sum(wi for wi, v in zip(w, xs) if v), den)
    if ask == "mean":
        return Fraction(sum(wi * v for wi, v in zip(w, xs)), den)
    if ask == "sd":
        m = Fraction(sum(wi * v for wi, v in zip(w, xs)), den)
        var = Fraction(sum(wi * v * v for wi, v in zip(w, xs)), den) - m * m
        return math.sqrt(var)
    support = sorted({v for wi, v in zip(w, xs) if wi})
    if ask == "max":
        return support[-1]
    if ask == "min":
        return support[0]
    if ask == "percentile":
        need = Fraction(q_pct).limit_denominator(10**9) / 100 * den
        acc = 0
        for v in support:
            acc += sum(wi for wi, xv in zip(w, xs) if xv == v)
            if acc >= need:
                return v
        return support[-1]
    raise ValueError(f"unknown ask {ask!r}")


# -- simulation ---------------------------------------------------------------------------

class _Thrower:
    """Throws real dice: held dice plus fresh faces from a Generator -> roll indices."""

    def __init__(self, d, rng):
        self.d, self.rng = d, rng
        self.powers = (d.n_dice + 1) ** np.arange(d.n_faces, dtype=np.int64)
        codes = d.roll_counts.astype(np.int64) @ self.powers
        self.order = np.argsort(codes)
        self.sorted_codes = codes[self.order]

    def throw(self, keeps: np.ndarray) -> np.ndarray:
        d = self.d
        n = len(keeps)
        counts = d.keep_counts[keeps].astype(np.int64)
        free = d.n_dice - d.keep_size[keeps].astype(np.int64)
        faces = self.rng.integers(0, d.n_faces, size=(n, d.n_dice))
        thrown = np.arange(d.n_dice)[None, :] < free[:, None]
        for f in range(d.n_faces):
            counts[:, f] += ((faces == f) & thrown).sum(axis=1)
        return self.order[np.searchsorted(self.sorted_codes, counts @ self.powers)]


def _decide(tables, j, rolls, rng):
    keeps = tables[j]
    if keeps.shape[1] == 1:
        return keeps[rolls, 0]
    return keeps[rolls, rng.integers(0, keeps.shape[1], size=len(rolls))]


def simulate_final(q, tables: dict, n: int, rng, *, first_keep: int | None = None) -> np.ndarray:
    """(n,) simulated final rolls of the question's position under ``tables``."""
    d = q.rules.dice
    thrower = _Thrower(d, rng)
    empty = int(d.keep_index_of_counts(np.zeros(d.n_faces, dtype=np.int64)))
    if q.scope in ("roll", "turn"):
        rolls = thrower.throw(np.full(n, empty, dtype=np.intp))
    elif q.keep is not None:
        rolls = thrower.throw(np.full(n, int(d.keep_index_of_counts(_counts(d, q.keep))), dtype=np.intp))
    else:
        rolls = np.full(n, d.roll_index_of(list(q.dice)), dtype=np.intp)
    top = max(tables, default=0)
    for j in range(top, 0, -1):
        keeps = np.full(n, first_keep, dtype=np.intp) if (first_keep is not None and j == top) \
            else _decide(tables, j, rolls, rng)
        rolls = thrower.throw(keeps)
    return rolls


def _simulate_rolls_until(q, hit: np.ndarray, keeps: np.ndarray | None, n: int, rng, cap: int = 100_000) -> np.ndarray:
    """(n,) throws until a roll shows the pattern (the first throw counted), keeping ``keeps``."""
    d = q.rules.dice
    thrower = _Thrower(d, rng)
    empty = int(d.keep_index_of_counts(np.zeros(d.n_faces, dtype=np.int64)))
    rolls = thrower.throw(np.full(n, empty, dtype=np.intp))
    count = np.ones(n, dtype=np.int64)
    live = np.flatnonzero(~hit[rolls])
    while len(live) and count[live[0]] < cap:
        if keeps is None:
            nxt = thrower.throw(np.full(len(live), empty, dtype=np.intp))
        else:
            nxt = thrower.throw(_decide({1: keeps}, 1, rolls[live], rng))
        rolls[live] = nxt
        count[live] += 1
        live = live[~hit[nxt]]
    return count


def dice_word(dice) -> str:
    return "".join(map(str, dice)) or "nothing"


def answer_dice(q, *, n: int = 100_000, seed=None) -> Answer:
    """Answer a roll, position or turn question exactly and by ``n`` simulated throws."""
    from ..exact.turns import expected_rolls

    rules, d = q.rules, q.rules.dice
    if q.ask == "expected-turns":
        return _expected_turns(q, n, seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    x = final_values(q)
    unit = "share" if q.ask == "chance" else ("rolls" if q.ask == "expected-rolls" else "points")
    what = q.event.text
    if q.ask == "expected-rolls":
        hit = x.astype(bool)
        if q.scope == "roll":
            p = exact_statistic("chance", _start(q)[0], _start(q)[1], x)
            exact = 1 / p if p else math.inf
            # sequences of about 2 million throws in all: the mean of a geometric count is
            # as sure from fewer, longer sequences
            n = max(1000, min(n, int(2e6 / float(exact)))) if math.isfinite(exact) else n
            sample = _simulate_rolls_until(q, hit, None, n, rng)
            how = f"exact: 1 / P({what} in one throw of all {d.n_dice} dice), a geometric number of throws"
            sim_how = f"{n:,} sequences of throws of all the dice, counted until {what}"
        else:
            pol = "optimal" if q.play == "chase" else q.play
            r = expected_rolls(rules, pol, pattern=q.event.name)
            exact = r.fraction if r.fraction is not None else r.expected
            sample = _simulate_rolls_until(q, hit, r.keeps, n, rng)
            words = "the keeps that minimize the expected number of rolls" if q.play == "chase" \
                else f"the {q.play} keeps"
            how = (f"exact absorbing Markov chain over the {d.n_rolls} rolls under {words}, rolling without "
                   "limit" + ("" if r.fraction is not None else " (solved in floating point: the system is large)"))
            sim_how = f"{n:,} sequences of throws under the same keeps, counted until {what}"
        est, ci = sample_statistic("mean", sample)
        return Answer(question=q, exact=exact, estimate=est, ci=ci, n=n, unit=unit, method=how,
                      simulated_method=sim_how)
    tables = policy_tables(q, x)
    w, den = exact_final(q, tables)
    exact = exact_statistic(q.ask, w, den, x, q.q)
    final = simulate_final(q, tables, n, rng)
    est, ci = sample_statistic(q.ask, x[final], q=q.q)
    goal = ("this event's chance" if q.ask == "chance" else f"the mean of {what}")
    keeps_words = (f"the keeps that maximize {goal}" if q.play == "chase"
                   else f"the {q.play} strategy's keeps on a fresh card")
    if q.scope == "roll":
        how = f"exact count of the {d.n_faces ** d.n_dice:,} ordered throws of {d.n_dice} dice"
        sim_how = f"{n:,} throws of {d.n_dice} dice"
    else:
        if q.scope == "turn":
            where = f"a turn of {rules.n_rolls} rolls"
        elif q.keep is not None:
            where = f"{dice_word(q.keep)} held and {q.rolls_left} throws to come"
        else:
            where = f"the dice {dice_word(q.dice)} with {q.rolls_left} rolls left"
        if q.play == "optimal" and (q.has_card or q.event.kind == "points_to_come"):
            keeps_words = ("optimal play's keeps for this card (those maximizing the expected points to come, "
                           "from the solver's values of the states each box leads to)")
        how = (f"exact Markov chain over the {d.n_rolls} rolls from {where}, under {keeps_words} "
               f"(integer counts out of {d.n_faces ** d.n_dice:,} per throw)")
        if x.dtype.kind == "f":
            how += "; the points to come are the solver's expected values (floating point)"
        sim_how = f"{n:,} simulated {'turns' if q.scope == 'turn' else 'plays of this position'} under the same keeps"
    if q.ask == "sd":
        how += "; the sd is the square root of the exact variance"
    extra = {}
    note = ""
    if rules.roll_dependent and q.event.kind == "box" and q.scope != "roll":
        note = ("the final dice are scored as made by a later throw, not served (served scores: a roll "
                "question)")
    if q.scope == "position" and q.dice is not None and q.hold is not None:
        held = int(d.keep_index_of_counts(_counts(d, q.hold)))
        w_h, den_h = exact_final(q, tables, first_keep=held)
        value_h = exact_statistic(q.ask, w_h, den_h, x, q.q)
        final_h = simulate_final(q, tables, n, np.random.default_rng(np.random.SeedSequence(seed)), first_keep=held)
        est_h, ci_h = sample_statistic(q.ask, x[final_h], q=q.q)
        best_keep = int(tables[max(tables)][d.roll_index_of(list(q.dice)), 0]) if q.play == "chase" else None
        extra = {"best": exact}
        if best_keep is not None:
            extra["best_hold"] = dice_word([f + 1 for f in range(d.n_faces)
                                             for _ in range(int(d.keep_counts[best_keep][f]))])
        extra["hold_costs"] = exact - value_h if not isinstance(exact, float) else float(exact) - float(value_h)
        note = "; ".join(filter(None, [note, f"the answer is for holding {dice_word(q.hold)}; 'best' is the "
                                              f"value with the best hold ({q.play} play afterwards)"]))
        exact, est, ci = value_h, est_h, ci_h
    return Answer(question=q, exact=exact, estimate=est, ci=ci, n=n, unit=unit, method=how,
                  simulated_method=sim_how, extra=extra, note=note)


def _expected_turns(q, n: int, seed) -> Answer:
    """Fresh turns until the event: 1 / its chance per turn (a geometric count)."""
    import dataclasses

    a = answer_dice(dataclasses.replace(q, ask="chance"), n=n, seed=seed)
    exact = None if a.exact is None else (1 / a.exact if a.exact else math.inf)
    est = 1 / a.estimate if a.estimate else math.inf
    lo, hi = a.ci if a.ci is not None else (0.0, 0.0)
    ci = (1 / hi if hi else math.inf, 1 / lo if lo else math.inf)
    return Answer(question=q, exact=exact, estimate=est, ci=ci, n=a.n, unit="turns",
                  method="1 / (the exact chance per turn): " + a.method,
                  simulated_method=f"1 / (the share of {a.n:,} simulated turns)", note=a.note)


def card_points(q) -> tuple[dict, int, int]:
    """({box: points}, upper total, upper bonus) of a written card (scope ``card``).

    A box holding all the dice scores by the rule engine's table; an upper box may hold
    fewer dice (face x their count).
    """
    rules, d = q.rules, q.rules.dice
    points = {}
    for box, dice in q.write:
        b = rules.box_index(box)
        faces = [int(c) for c in dice]
        if len(faces) == d.n_dice:
            points[box] = int(rules.score_table[d.roll_index_of(faces), b])
        else:
            face = int(rules.upper_face[b])
            points[box] = face * sum(1 for f in faces if f == face)
    upper = sum(p for box, p in points.items() if rules.is_upper[rules.box_index(box)])
    bonus = 0
    if rules.upper_bonus:
        first_upper = int(np.flatnonzero(rules.is_upper)[0])
        col = np.zeros((1, rules.n_boxes), dtype=np.int64)
        col[0, first_upper] = upper
        bonus = int(rules.upper_bonus_gain(np.zeros(1, dtype=np.int64), col)[0, first_upper])
    return points, upper, bonus


def _card_value(q, ev, points, upper, bonus):
    if ev.kind == "all":
        return int(all(_card_value(q, p, points, upper, bonus) for p in ev.parts))
    if ev.kind == "not":
        return 1 - _card_value(q, ev.parts[0], points, upper, bonus)
    if ev.kind == "box":
        if ev.name not in points:
            raise ValueError(f"box {ev.name} is not written on this card; written: {', '.join(points)}")
        x = points[ev.name]
    elif ev.kind == "upper":
        x = upper
    elif ev.kind == "upper_bonus":
        return int(bonus > 0)
    else:   # score
        x = sum(points.values()) + bonus
    return int(ev.holds(np.asarray(x))) if ev.op is not None else x


def answer_card(q) -> Answer:
    """A written card: the points of the dice in each box, the upper total and bonus (no chance)."""
    points, upper, bonus = card_points(q)
    x = _card_value(q, q.event, points, upper, bonus)
    exact = Fraction(x) if q.ask == "chance" else x
    label = {b.name: b.label for b in q.rules.boxes}
    written = "; ".join(f"{label.get(box, box)} {dice}: {points[box]}" for box, dice in q.write)
    return Answer(question=q, exact=exact, unit="share" if q.ask == "chance" else "points",
                  method="the rule engine's score table for the written dice (an upper box holding fewer dice: "
                         "face x their count)", note=f"written: {written}; upper total {upper}, bonus {bonus}")
