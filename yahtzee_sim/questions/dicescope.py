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
    """(R,) what each final roll is worth to the question: 0/1 for a condition, else points."""
    from ..patterns import pattern_table

    rules, ev = q.rules, q.event
    if ev.kind == "pattern":
        return pattern_table(rules.dice)[ev.name].to_numpy().astype(np.int64)
    tables = rules.score_tables
    # the points as the box scores them on a fresh card: dice of the first throw where
    # that matters (Generala's served dice), else of the last
    table = tables[0] if q.scope == "roll" else tables[-1]
    x = table[:, rules.box_index(ev.name)].astype(np.int64)
    return ev.holds(x).astype(np.int64) if ev.op is not None else x


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
        how = (f"exact Markov chain over the {d.n_rolls} rolls from {where}, under {keeps_words} "
               f"(integer counts out of {d.n_faces ** d.n_dice:,} per throw)")
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
