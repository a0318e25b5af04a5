"""The computations behind the claims catalog: each returns a :class:`Measurement`.

Exact where the exact engine can answer, and by simulation with a 95% interval
(where a simulation is meaningful) so the two can be compared.

>>> ctx = Context(games=2048, turns=20000, seed=1)
>>> m = EVALUATORS["first_roll_fraction"]({"pattern": "five_of_a_kind"}, ctx)
>>> m.exact
Fraction(1, 1296)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..api import simulate, simulate_turns
from ..rules import get_rules
from ..stats import mean_ci, proportion_ci
from ..strategies.simple import KeepAll


@dataclass
class Measurement:
    """What the project found for one claim.

    exact : the exact value (Fraction, int or float), or None when only simulated.
    estimate, ci : a simulated estimate and its 95% interval, or None.
    method : how it was computed, in words (for a simulation: the strategy, the sample
        and the definition of what is counted).
    unit : what the value is: "share" (a probability or proportion, shown in percent),
        "points", "turns", "ratio" or "number".
    """

    exact: object = None
    estimate: float | None = None
    ci: tuple[float, float] | None = None
    method: str = ""
    detail: str = ""
    unit: str = "number"

    @property
    def value(self) -> float:
        return float(self.exact) if self.exact is not None else float(self.estimate)


@dataclass
class Context:
    """Sizes and seed of the simulations; caches runs shared by several claims."""

    games: int = 100_000
    turns: int = 1_000_000
    seed: int = 2026
    run_options: dict = field(default_factory=dict)  # backend, jobs, scheduler (yahtzee_sim.runner)
    _runs: dict = field(default_factory=dict, repr=False)

    def run(self, rules: str, strategy: str):
        key = (rules, strategy)
        if key not in self._runs:
            self._runs[key] = simulate(rules, strategy, self.games, seed=self.seed, keep_games=True,
                                          **self.run_options)
        return self._runs[key]


def _wilson(k: int, n: int) -> tuple[float, float]:
    ci = proportion_ci(int(k), int(n))
    return float(ci.low), float(ci.high)


def _mean_ci(x: np.ndarray) -> tuple[float, tuple[float, float]]:
    ci = mean_ci(np.asarray(x, dtype=np.float64))
    return float(ci.mean), (float(ci.low), float(ci.high))


EVALUATORS: dict = {}


def evaluator(fn):
    EVALUATORS[fn.__name__] = fn
    return fn


# -- dice -------------------------------------------------------------------------------

@evaluator
def first_roll_fraction(params, ctx) -> Measurement:
    from ..exact.odds import one_roll_odds

    odds = one_roll_odds(params.get("rules", "yahtzee"))
    frac = odds.fraction(params["pattern"])
    return Measurement(exact=frac, method=f"exact count of the {odds.total:,} ordered throws", unit="share",
                       detail=f"{odds.count(params['pattern'])} of {odds.total} = {frac}")


@evaluator
def first_roll_probability(params, ctx) -> Measurement:
    exact = first_roll_fraction(params, ctx).exact
    res = simulate_turns(params.get("rules", "yahtzee"), KeepAll(), ctx.turns, seed=ctx.seed, **ctx.run_options)
    k = int(res.pattern_counts()[params["pattern"]])
    return Measurement(exact=exact, estimate=k / ctx.turns, ci=_wilson(k, ctx.turns), unit="share",
                       method=f"exact count; simulated: share of {ctx.turns:,} first rolls showing "
                              f"{_pattern_words(params['pattern'])}",
                       detail=f"exact {exact} = {float(exact):.4%}")


def _pattern_words(pattern: str) -> str:
    return pattern.replace("_", " ") + (" or better" if pattern in ("four_of_a_kind", "three_of_a_kind",
                                                                    "small_straight", "two_pairs", "one_pair") else "")


def _turn_policy(rules, params):
    from ..exact.turns import pattern_policy

    policy = params.get("policy", "keep-largest")
    return (pattern_policy(rules, params["pattern"]), "the keeps that maximize its chance") if policy == "best" \
        else (policy, f"the {policy} keeps")


@evaluator
def turn_probability(params, ctx) -> Measurement:
    from ..exact.turns import turn_odds

    rules = get_rules(params.get("rules", "yahtzee"))
    policy, words = _turn_policy(rules, params)
    frac = turn_odds(rules, policy).fraction(params["pattern"])
    if params.get("policy", "keep-largest") == "best":
        res = simulate_turns(rules, "keep-largest", ctx.turns, seed=ctx.seed, target=params["pattern"],
                             **ctx.run_options)
    else:
        res = simulate_turns(rules, params["policy"], ctx.turns, seed=ctx.seed, **ctx.run_options)
    k = int(res.pattern_counts()[params["pattern"]])
    return Measurement(exact=frac, estimate=k / ctx.turns, ci=_wilson(k, ctx.turns), unit="share",
                       method=f"exact Markov chain over the 252 rolls under {words}; simulated: share of "
                              f"{ctx.turns:,} three-roll turns ending in {_pattern_words(params['pattern'])}",
                       detail=f"exact {float(frac):.4%}")


@evaluator
def turns_per_pattern(params, ctx) -> Measurement:
    m = turn_probability(params, ctx)
    lo, hi = m.ci
    return Measurement(exact=1 / m.exact, estimate=1 / m.estimate, ci=(1 / hi, 1 / lo), unit="turns",
                       method="1 / (exact chance per turn); simulated: 1 / (share of the simulated turns)",
                       detail=f"exact {float(1 / m.exact):.3f} turns")


@evaluator
def faces_in_every_straight(params, ctx) -> Measurement:
    faces = set(params["faces"])
    n_faces = get_rules(params.get("rules", "yahtzee")).n_faces
    runs = [set(range(s, s + length)) for length in (4, 5) for s in range(1, n_faces - length + 2)]
    share = Fraction(sum(faces <= r for r in runs), len(runs))
    return Measurement(exact=share, method="enumeration of every run of 4 and 5 faces", unit="share",
                       detail=f"{sum(faces <= r for r in runs)} of {len(runs)} runs contain {sorted(faces)}")


@evaluator
def open_ended_straight(params, ctx) -> Measurement:
    """Chance of a five-dice straight within ``rolls_left`` rolls holding 2-3-4-5 vs 1-2-3-4."""
    d = get_rules("yahtzee").dice
    from ..patterns import pattern_table

    hit = pattern_table(d)["large_straight"].to_numpy()
    k = params.get("rolls_left", 2)

    def chance(held):
        counts = np.zeros(d.n_faces, dtype=np.int64)
        counts[np.array(held) - 1] = 1
        keep = d.keep_index_of_counts(counts)
        p_one = Fraction(int(round(d.transition[keep][hit].sum() * d.n_faces)), d.n_faces)
        return 1 - (1 - p_one) ** k

    open_, closed = chance([2, 3, 4, 5]), chance([1, 2, 3, 4])
    return Measurement(exact=open_ / closed, method="exact: one die rerolled per roll, straight kept once made",
                       unit="ratio",
                       detail=f"2-3-4-5: {float(open_):.4f} ({open_}); 1-2-3-4: {float(closed):.4f} ({closed}), "
                              f"with {k} rolls left")


# -- score card arithmetic ---------------------------------------------------------------

@evaluator
def three_of_each_upper(params, ctx) -> Measurement:
    rules = get_rules(params.get("rules", "yahtzee"))
    total = 3 * int(rules.upper_face[rules.is_upper].sum())
    return Measurement(exact=total, method="3 x (sum of the upper faces)", unit="points",
                       detail=f"bonus threshold of {rules.key}: {rules.upper_bonus_threshold}")


@evaluator
def par_surplus(params, ctx) -> Measurement:
    face, count = params["face"], params["count"]
    return Measurement(exact=(count - 3) * face, method="(count - 3) x face points above par", unit="points",
                       detail=f"{count} x {face} = {count * face} against par {3 * face}; par of Ones is 3")


@evaluator
def five_box_margin(params, ctx) -> Measurement:
    rules = get_rules(params.get("rules", "yahtzee"))
    table = rules.score_table
    others = np.delete(table, rules.five_box_index, axis=1).max()
    return Measurement(exact=rules.five_box_points - int(others), unit="points",
                       method="best score of every other box over all 252 rolls",
                       detail=f"{rules.boxes[rules.five_box_index].label} pays {rules.five_box_points}, the best "
                              f"other box {int(others)}")


@evaluator
def score_matches(params, ctx) -> Measurement:
    rules = get_rules(params["rules"])
    scores = rules.score_dice(params["dice"])
    expected = params["expected"]
    ok = [scores[k] == v for k, v in expected.items()]
    wrong = [f"{k}: {scores[k]} (claimed {v})" for k, v in expected.items() if scores[k] != v]
    return Measurement(exact=Fraction(sum(ok), len(ok)), method="the rule engine's score table", unit="share",
                       detail="all match" if not wrong else "mismatch: " + "; ".join(wrong))


@evaluator
def extreme(params, ctx) -> Measurement:
    from ..exact.extremes import extreme_score

    res = extreme_score(params.get("rules", "yahtzee"), kind=params["kind"], constraint=params.get("constraint"))
    return Measurement(exact=int(res.score), unit="points",
                       method=f"backward induction in the {params['kind']} semiring (dice chosen too)",
                       detail=params.get("constraint") or "no restriction")


# -- optimal play and strategies -----------------------------------------------------------

@evaluator
def optimal_mean(params, ctx) -> Measurement:
    from ..exact.solver import solve

    rules = params.get("rules", "yahtzee")
    sol = solve(rules)
    res = ctx.run(rules, "optimal")
    s = res.summary()
    return Measurement(exact=float(sol.expected_score), estimate=s["mean"], ci=(s["ci95_low"], s["ci95_high"]),
                       unit="points", method=f"exact optimal solver; simulated: mean final score of {ctx.games:,} "
                                             "games under optimal",
                       detail=f"exact {sol.expected_score:.4f} (sd {sol.sd:.2f})")


@evaluator
def game_rate(params, ctx) -> Measurement:
    res = ctx.run(params.get("rules", "yahtzee"), params.get("strategy", "optimal"))
    n = res.n_games
    k = round(res.rate(params["rate"]) * n)
    what = {"five_rolled": "at least one turn ends in five of a kind", "upper_bonus": "the upper bonus is reached",
            "five_box_50": "the five-of-a-kind box scores 50"}.get(params["rate"], params["rate"])
    return Measurement(estimate=k / n, ci=_wilson(k, n), unit="share",
                       method=f"share of {n:,} simulated games under {res.strategy} in which {what}",
                       detail=f"{k:,} of {n:,} games")


@evaluator
def score_above(params, ctx) -> Measurement:
    res = ctx.run(params.get("rules", "yahtzee"), params["strategy"])
    totals = res.games["total"]
    k = int((totals > params["threshold"]).sum())
    n = len(totals)
    return Measurement(estimate=k / n, ci=_wilson(k, n), unit="share",
                       method=f"share of {n:,} simulated games under {res.strategy} scoring more than "
                              f"{params['threshold']} points",
                       detail=f"mean {totals.mean():.1f}, median {np.median(totals):.0f}")


@evaluator
def upper_bonus_given_high_faces(params, ctx) -> Measurement:
    rules = get_rules(params.get("rules", "yahtzee"))
    res = ctx.run(rules.key, params.get("strategy", "optimal"))
    g = res.games
    fives, sixes = rules.box_index("fives"), rules.box_index("sixes")
    high = (g["box_scores"][:, fives] >= 15) & (g["box_scores"][:, sixes] >= 18)
    bonus = g["upper_bonus"] > 0
    k1, n1, k0, n0 = int(bonus[high].sum()), int(high.sum()), int(bonus[~high].sum()), int((~high).sum())
    p1, p0 = k1 / n1, k0 / n0
    ratio = p1 / p0 if p0 > 0 else math.inf
    # Katz log interval for a ratio of two proportions.
    se = math.sqrt(max(1 / k1 - 1 / n1 + 1 / k0 - 1 / n0, 0)) if k1 and k0 else math.inf
    ci = (ratio * math.exp(-1.96 * se), ratio * math.exp(1.96 * se)) if math.isfinite(se) else (0.0, math.inf)
    return Measurement(estimate=ratio, ci=ci, unit="ratio",
                       method=f"{res.n_games:,} simulated games under {res.strategy}: upper-bonus rate of the games "
                              "with at least 15 in Fives and 18 in Sixes, divided by the rate of the others "
                              "(Katz interval)",
                       detail=f"bonus in {p1:.1%} of games with >= 3 fives and >= 3 sixes ({n1:,} games), "
                              f"{p0:.1%} of the others")


@evaluator
def box_fill_turn(params, ctx) -> Measurement:
    rules = get_rules(params.get("rules", "yahtzee"))
    res = ctx.run(rules.key, params.get("strategy", "optimal"))
    b = rules.box_index(params["box"])
    turns = res.games["fill_turn"][:, b].astype(np.float64)
    mean, (lo, hi) = _mean_ci(turns)
    frac = lambda t: (t - 1) / (rules.n_boxes - 1)  # noqa: E731 - turn 1 -> 0, last turn -> 1
    scores = res.games["box_scores"][:, b]
    return Measurement(estimate=frac(mean), ci=(frac(lo), frac(hi)), unit="share",
                       method=f"{res.n_games:,} simulated games under {res.strategy}: mean turn in which "
                              f"{rules.boxes[b].label} is filled, as a share of the game (0% first turn, 100% "
                              "last)",
                       detail=f"filled on average in turn {mean:.2f} of {rules.n_boxes}; mean points there "
                              f"{scores.mean():.2f}")


@evaluator
def zero_share(params, ctx) -> Measurement:
    rules = get_rules(params.get("rules", "yahtzee"))
    res = ctx.run(rules.key, params.get("strategy", "optimal"))
    zeros = (res.games["box_scores"] == 0).sum(axis=0)
    cols = [rules.box_index(b) for b in params["boxes"]]
    k, n = int(zeros[cols].sum()), int(zeros.sum())
    top = np.argsort(zeros)[::-1][:4]
    where = ", ".join(f"{rules.boxes[i].label} {zeros[i] / max(n, 1):.0%}" for i in top)
    return Measurement(estimate=k / n if n else 0.0, ci=_wilson(k, n) if n else None, unit="share",
                       method=f"{res.n_games:,} simulated games under {res.strategy}: share of all boxes scored "
                              f"0 that are {' or '.join(rules.boxes[c].label for c in cols)}",
                       detail=f"{n / res.n_games:.2f} zeros per game; most often in {where}")


@evaluator
def late_full_house_vs_chase(params, ctx) -> Measurement:
    """Only Full house and the five-of-a-kind box open, 3-3-3-5-5 on the first roll."""
    from ..exact.solver import solve
    from ..exact.widget import best_keeps, keep_expectations
    from ..state import GameState

    rules = get_rules(params.get("rules", "yahtzee"))
    sol = solve(rules)
    d = rules.dice
    filled = np.ones((1, rules.n_boxes), bool)
    fh, five = rules.box_index("full_house"), rules.five_box_index
    filled[0, [fh, five]] = False
    state = GameState.from_arrays(rules, filled, upper_total=rules.upper_bonus_threshold)
    rolls = np.arange(d.n_rolls)
    legal, scores, bonus = rules.turn_options(np.repeat(filled, d.n_rolls, 0), np.zeros(d.n_rolls, bool), rolls)
    gain = scores + rules.upper_bonus_gain(np.full(d.n_rolls, state.upper_total[0]), scores) + bonus[:, None]
    final = np.full(d.n_rolls, -np.inf)
    for b in np.flatnonzero(~filled[0]):
        after = filled.copy()
        after[0, b] = True
        full_after = (b == five) & (scores[:, b] == rules.five_box_points)
        nxt = sol.value(np.repeat(after, d.n_rolls, 0), np.full(d.n_rolls, state.upper_total[0]), full_after)
        final = np.where(legal[:, b], np.maximum(final, gain[:, b] + nxt), final)
    plan = best_keeps(d, final[None, :].astype(np.float64), rolls_left=rules.n_rolls - 1)
    roll = d.roll_index_of([3, 3, 3, 5, 5])
    take_now = float(final[roll])
    expectations = keep_expectations(d, plan.values[rules.n_rolls - 2][0][:, None])[:, 0]
    triple = d.keep_index_of_counts(np.array([0, 0, 3, 0, 0, 0]))
    chase = float(expectations[triple])
    return Measurement(exact=take_now - chase, method="exact optimal values of this end-game position",
                       unit="points",
                       detail=f"score the full house now: {take_now:.3f} expected points; keep 3-3-3 and chase: "
                              f"{chase:.3f}")
