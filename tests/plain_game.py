"""One plain-Python enumeration of small dice games, shared by every exact test.

The exact modules (solver, policy values, distributions, risk, target play, Yamb's
Down column) are checked against this file, never against each other. It reads only
the rule set's plain data: its dice counts, its boxes' scores through
``RuleSet.turn_options`` (the rules as specified), which boxes are upper ones, the
five box and the upper-bonus tiers. Dice, keeps, chances, the throw count, upper
totals and bonuses are enumerated or computed here:

* dice are sorted tuples; every chance is counted from every ordered outcome;
* a state is (filled boxes, real upper total, five box holding a score);
* the dice carry the number of throws that made them, and holding every die is not a
  throw (the engine's rule; Generala's served scores and Yamb's Kenta depend on it).

Values are tuples of floats, so one recursion gives a mean (a 1-tuple), a
risk-sensitive value or the chances of reaching every target (a vector), each
maximised component by component.

* :class:`OptimalMean`, :func:`optimal_risk`, :func:`optimal_target` - the value of
  every state under optimal play (:meth:`Game.optimal` for any other payoff);
* :func:`best_turn` - one turn played optimally for any payoff of the final dice;
* :func:`strategy_outcomes` - the joint distribution of a fixed strategy's (or the
  uniform random player's) final score and events, by asking the strategy itself;
* :func:`mean_sd` - mean and sd of such a distribution.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter, defaultdict

import numpy as np  # only to ask the rule set its scores and a strategy its decisions

# -- dice -----------------------------------------------------------------------------

class Dice:
    """``n`` dice of ``f`` faces as sorted tuples."""

    def __init__(self, n_dice: int, n_faces: int):
        self.n, self.f = n_dice, n_faces
        self.roll_prob = self.throw(())
        self.rolls = sorted(self.roll_prob)
        self.keeps = {r: sorted({tuple(sorted(c)) for k in range(n_dice + 1)
                                 for c in itertools.combinations(r, k)}) for r in self.rolls}

    @functools.cache  # noqa: B019 (a few small Dice per test run, kept for it)
    def throw(self, kept: tuple) -> dict[tuple, float]:
        """{dice: chance} after holding ``kept`` and throwing the other dice."""
        m = self.n - len(kept)
        counts = Counter(tuple(sorted(kept + t)) for t in itertools.product(range(1, self.f + 1), repeat=m))
        return {r: c / self.f ** m for r, c in counts.items()}


def _avg(pairs) -> tuple:
    """The chance-weighted sum of (chance, value tuple) pairs."""
    it = iter(pairs)
    p, v = next(it)
    if len(v) == 1:                                     # a mean: the common case, kept fast
        s = p * v[0]
        for p, v in it:
            s += p * v[0]
        return (s,)
    out = [p * x for x in v]
    for p, v in it:
        out = [o + p * x for o, x in zip(out, v)]
    return tuple(out)


def _max(a: tuple, b: tuple) -> tuple:
    if len(a) == 1:
        return a if a[0] >= b[0] else b
    return tuple(max(x, y) for x, y in zip(a, b))


def best_turn(dice: Dice, n_rolls: int, final, *, count_throws: bool = True) -> tuple:
    """One turn played to maximise ``final(dice, throws)`` (a value tuple, component by
    component): every sub-multiset kept, holding every die a choice that makes no
    throw. ``throws`` counts the throws that made the final dice (None unless
    ``count_throws``)."""
    n = dice.n

    @functools.cache
    def thrown(k, t, left):                             # keep k, throw the other dice
        nt = t + 1 if count_throws else None
        return _avg([(p, hold(r2, nt, left - 1)) for r2, p in dice.throw(k).items()])

    @functools.cache
    def hold(r, t, left):
        if left == 0:
            return final(r, t)
        best = hold(r, t, left - 1)                     # hold every die: no throw
        for k in dice.keeps[r]:
            if len(k) < n:
                best = _max(best, thrown(k, t, left))
        return best

    return _avg((p, hold(r, 1 if count_throws else None, n_rolls - 1)) for r, p in dice.roll_prob.items())


# -- the game -------------------------------------------------------------------------

def upper_bonus(rules, upper: int) -> int:
    """The bonus of the highest tier an upper total reaches (RULES.md's tiers)."""
    return max([b for t, b in rules.upper_bonus_tiers if upper >= t], default=0)


class Game:
    """A rule set's moves, state by state: what each legal box pays and where it leads."""

    def __init__(self, rules):
        self.rules = rules
        self.dice = Dice(rules.n_dice, rules.n_faces)
        self.roll_index = {r: rules.dice.roll_index_of(list(r)) for r in self.dice.rolls}
        self.count_throws = bool(rules.roll_dependent)
        self.start = ((False,) * rules.n_boxes, 0, False)

    @functools.cache  # noqa: B019 (one Game per test)
    def moves(self, state: tuple, throws) -> dict[tuple, list[tuple[int, tuple]]]:
        """{dice: [(points gained, next state) per legal box]} for dice made by
        ``throws`` throws (None: the rule set does not care)."""
        rules = self.rules
        filled, upper, full = state
        rolls = self.dice.rolls
        m = len(rolls)
        kw = {} if throws is None else {"throws": np.full(m, throws)}
        legal, scores, bonus = rules.turn_options(np.array([filled] * m), np.full(m, full),
                                                  np.array([self.roll_index[r] for r in rolls]), **kw)
        after = [tuple(True if j == b else x for j, x in enumerate(filled)) for b in range(rules.n_boxes)]
        legal, scores, bonus = legal.tolist(), scores.tolist(), bonus.tolist()
        held = upper_bonus(rules, upper)
        out = {}
        for i, r in enumerate(rolls):
            moves = []
            for b in range(rules.n_boxes):
                if not legal[i][b]:
                    continue
                pts = int(scores[i][b])
                nu = upper + pts if rules.is_upper[b] else upper
                gain = pts + int(bonus[i]) + (upper_bonus(rules, nu) - held if nu != upper else 0)
                nf = after[b]
                nfull = full or (b == rules.five_box_index and pts > 0)   # any score: a served 60 too
                moves.append((gain, (nf, nu, nfull)))
            out[r] = moves
        return out

    def optimal(self, end: tuple = (0.0,), step=None) -> Optimal:
        """Optimal play of the game: ``end`` is the value of a full card, ``step(gain,
        value of the next state)`` a box's value (default: their sum, the mean)."""
        return Optimal(self, end, step or (lambda g, v: tuple(g + x for x in v)))


class Optimal:
    """The optimal value of every state reached, memoised in ``values``."""

    def __init__(self, game: Game, end: tuple, step):
        self.game, self.end, self.step = game, end, step
        self.values: dict[tuple, tuple] = {}

    def value(self, state: tuple | None = None) -> tuple:
        state = self.game.start if state is None else state
        if state in self.values:
            return self.values[state]
        if all(state[0]):
            return self.end
        g = self.game

        def final(r, t):
            best = None
            for gain, nxt in g.moves(state, t)[r]:
                v = self.step(gain, self.value(nxt))
                best = v if best is None else _max(best, v)
            return best

        out = best_turn(g.dice, g.rules.n_rolls, final, count_throws=g.count_throws)
        self.values[state] = out
        return out


class OptimalMean:
    """Every state's optimal expected score: ``value(filled, upper, full)`` and, for
    every state reached from there, ``memo`` {(filled, upper, full): value}."""

    def __init__(self, rules):
        self.optimal = Game(rules).optimal()
        self.roll_prob = self.optimal.game.dice.roll_prob

    def value(self, filled: tuple, upper: int, full: bool) -> float:
        return self.optimal.value((tuple(filled), upper, full))[0]

    @property
    def memo(self) -> dict[tuple, float]:
        return {k: v[0] for k, v in self.optimal.values.items()}


def optimal_risk(rules, theta: float) -> float:
    """The certainty equivalent log(max E[exp(theta S)]) / theta of risk-sensitive
    optimal play (theta < 0: maximise -E[exp(theta S)])."""
    sign = 1.0 if theta > 0 else -1.0
    opt = Game(rules).optimal(end=(sign,), step=lambda g, v: (math.exp(theta * g) * v[0],))
    return math.log(sign * opt.value()[0]) / theta


def optimal_target(rules, max_need: int) -> list[float]:
    """P(score >= r) for r = 0..max_need, each target played for separately."""
    def step(g, v):
        return tuple(1.0 if r - g <= 0 else v[r - g] for r in range(max_need + 1))

    opt = Game(rules).optimal(end=tuple(float(r <= 0) for r in range(max_need + 1)), step=step)
    return list(opt.value())


# -- a fixed strategy, asked state by state ------------------------------------------------

def strategy_outcomes(rules, strategy, *, ask=None, holds_served=False, uniform=False) -> dict:
    """Joint distribution {(final score, five of a kind thrown, five bonuses, five box
    full, upper bonus, served five of a kind): chance} of a strategy's game, by
    enumerating every ordered dice outcome of every throw.

    Independent of the exact evaluators: real upper totals, ordered outcomes instead
    of the keep lattice, one strategy question per state and roll (the strategy's own
    ``keep`` and ``box``). The turn is played as the engine plays it: it counts the
    throws that made the dice (holding every die is not a throw) and scores the final
    dice with that throw's table (``rules.turn_options(..., throws=...)``: Generala's
    served scores); the box is asked with the options of the dice as they came,
    served or not. ``ask(state, rolls, later_options, served_options)`` may replace
    the questions: it returns (boxes later, boxes served, {rolls left: keeps});
    ``holds_served``: dice still served after the first keep are held to the end of
    the turn (optimal play's rule); ``uniform``: every keep uniform over the roll's
    distinct keeps and every box uniform over the legal ones, averaged (the
    ``random`` strategy; ``strategy`` is then unused).
    """
    from yahtzee_sim import GameState
    from yahtzee_sim.state import TurnOptions

    if strategy is not None:
        strategy.prepare(rules)
    d = rules.dice
    n, f, b = rules.n_dice, rules.n_faces, rules.n_boxes
    outcomes = {k: [np.array(o) for o in itertools.product(range(1, f + 1), repeat=k)]
                for k in range(n + 1)}

    def roll_of(dice):
        return d.roll_index_of(sorted(int(x) for x in dice))

    def is_five(r):
        return int(d.roll_counts[r].max()) == n

    def ask_strategy(state, rolls, later, served):
        zeros = np.zeros(len(rolls), np.float32)
        return (strategy.box(state, rolls, later, zeros), strategy.box(state, rolls, served, zeros),
                {j: strategy.keep(state, rolls, j, zeros) for j in range(rules.n_rolls - 1, 0, -1)})

    ask = ask or ask_strategy

    @functools.cache
    def game(filled: tuple, upper: int, full: bool) -> dict:
        if all(filled):
            return {(0, False, 0, full, rules.upper_bonus > 0 and upper >= rules.upper_bonus_threshold,
                     False): 1.0}
        fl = np.array([filled] * d.n_rolls)
        state = GameState.from_arrays(rules, fl, [upper] * d.n_rolls, [full] * d.n_rolls)
        rolls = np.arange(d.n_rolls)
        options = {}
        for first in (False, True):
            throws = np.full(d.n_rolls, 1 if first else rules.n_rolls)
            legal, scores, bonus = rules.turn_options(fl, np.full(d.n_rolls, full), rolls, throws=throws)
            gain = np.zeros(scores.shape, np.int64)
            for bx in range(b):   # the upper bonus from its tiers, not the rule set's arithmetic
                for r in range(d.n_rolls):
                    after = upper + int(scores[r, bx]) if rules.is_upper[bx] else upper
                    gain[r, bx] = (int(scores[r, bx]) + upper_bonus(rules, after) - upper_bonus(rules, upper)
                                   + int(bonus[r]))
            options[first] = TurnOptions(legal, scores, gain), bonus
        later_boxes, served_boxes, keeps = (None, None, None) if uniform else \
            ask(state, rolls, options[False][0], options[True][0])
        boxes = {False: later_boxes, True: served_boxes}

        def final(r, seen, served):
            if uniform:
                out = defaultdict(float)
                legal = np.flatnonzero(options[served][0].legal[r])
                for bx in legal:
                    for key, p in final_in(r, seen, served, int(bx)).items():
                        out[key] += p / len(legal)
                return out
            return final_in(r, seen, served, int(boxes[served][r]))

        def final_in(r, seen, served, bx):
            opts, bonus = options[served]
            assert opts.legal[r, bx]
            pts = int(opts.scores[r, bx])
            nf = list(filled)
            nf[bx] = True
            rest = game(tuple(nf), upper + (pts if rules.is_upper[bx] else 0),
                        full or (bx == rules.five_box_index and pts > 0))
            g, nb = int(opts.gain[r, bx]), int(bonus[r] > 0)
            sv = served and is_five(r)
            out = defaultdict(float)
            for (s, s5, k, ff, ub, ss), p in rest.items():
                out[(s + g, s5 or seen, k + nb, ff, ub, ss or sv)] += p
            return out

        @functools.cache
        def value(r, j, seen, throws):
            seen = seen or is_five(r)
            if j == 0:
                return final(r, seen, throws == 1)
            if uniform:
                choices = [d.keep_counts[k] for k in d.subkeeps[r, :d.n_subkeeps[r]]]
            elif holds_served and throws == 1 and j < rules.n_rolls - 1:
                choices = [d.roll_counts[r]]
            else:
                choices = [d.keep_counts[keeps[j][r]]]
            out = defaultdict(float)
            for kept in choices:
                held = np.repeat(np.arange(1, f + 1), kept)
                outs = outcomes[n - len(held)]
                for o in outs:
                    nxt = roll_of(np.concatenate([held, o]))
                    for key, p in value(nxt, j - 1, seen, throws + (len(held) < n)).items():
                        out[key] += p / len(outs) / len(choices)
            return out

        out = defaultdict(float)
        for o in outcomes[n]:
            for key, p in value(roll_of(o), rules.n_rolls - 1, False, 1).items():
                out[key] += p / len(outcomes[n])
        return dict(out)

    return game(tuple([False] * b), 0, False)


def mean_sd(joint: dict) -> tuple[float, float]:
    """Mean and sd of the final score of :func:`strategy_outcomes`' distribution."""
    mean = math.fsum(k[0] * p for k, p in joint.items())
    m2 = math.fsum(k[0] * k[0] * p for k, p in joint.items())
    return mean, math.sqrt(max(m2 - mean * mean, 0.0))
