"""Conformance checks for plug-ins: run your strategy or house-rules file through the
same checks every built-in strategy and rule set passes in the test suite.

>>> from yahtzee_sim.checks import check_strategy, check_ruleset
>>> check_ruleset("yacht")
>>> check_strategy("yacht", "greedy", n=1100)

A failure raises :class:`CheckFailed` (an ``AssertionError``, so test runners report
it as a failed test) naming what went wrong; a strategy that makes an illegal decision
raises the engine's :class:`~yahtzee_sim.engine.StrategyError` naming it.
"""

from __future__ import annotations

import copy

import numpy as np

from .api import simulate
from .engine import MoveChecks, StrategyError
from .rules import RuleSet, get_rules
from .state import GameState, TurnOptions
from .strategies import Strategy, get_strategy

__all__ = ["CheckFailed", "Recorder", "check_decisions", "check_ruleset", "check_strategy"]


class CheckFailed(AssertionError):
    """A conformance check failed (the message says which)."""


def _require(ok, what: str) -> None:
    if not bool(ok):
        raise CheckFailed(f"check failed: {what}")


def _fresh_copies(strategy):
    """A function giving a fresh copy of the strategy for each run."""
    if isinstance(strategy, str):
        get_strategy(strategy)                      # refuse a bad name up front
        return lambda: get_strategy(strategy)
    if not isinstance(strategy, Strategy):
        raise ValueError(f"strategy must be a name or a Strategy instance, got {type(strategy).__name__}")
    return lambda: copy.deepcopy(strategy)


def check_decisions(rules: RuleSet | str, strategy: Strategy | str, n: int = 4096, seed: int = 7) -> None:
    """Ask ``strategy`` for its keep (every rolls left) and box in ``n`` random situations
    of ``rules``: random cards (one box at least open), upper totals, five-of-a-kind box
    values and rolls. Each answer must be an integer array of shape (n,): sub-keeps of
    the roll shown, boxes the rules allow; else :class:`~yahtzee_sim.engine.StrategyError`.
    Asked twice with the same uniforms, it must answer the same (reproducibility).

    >>> check_decisions("yahtzee", "keep-largest")
    """
    rules = get_rules(rules) if isinstance(rules, str) else rules
    strat = get_strategy(strategy) if isinstance(strategy, str) else strategy
    strat.prepare(rules)
    rng = np.random.default_rng(seed)
    b = rules.n_boxes
    filled = rng.random((n, b)) < rng.random((n, 1))
    filled[np.arange(n), rng.integers(0, b, n)] = False
    if rules.fill_order == "in-order":               # only prefixes of the card are reachable
        k = rng.integers(0, b, n)
        filled = np.arange(b)[None, :] < k[:, None]
    # an upper total the card's filled upper boxes can hold (a strategy may refuse a state
    # no game can reach, as optimal does)
    from .exact.policy import achievable_upper_totals

    upper = np.array([rng.choice(achievable_upper_totals(rules, row)) for row in filled], dtype=np.int64)
    full = rng.random(n) < 0.5
    if rules.five_box is not None:
        full &= filled[:, rules.five_box_index]
    rolls = rng.integers(0, rules.dice.n_rolls, n)
    state = GameState.from_arrays(rules, filled, upper, full)
    state.turn = int(filled.sum(axis=1).min())
    legal, scores, bonus = rules.turn_options(filled, full, rolls)
    has = legal.any(axis=1)                          # e.g. only announce boxes open: skip those rows
    gain = scores + rules.upper_bonus_gain(upper, scores) + bonus[:, None]
    u = rng.random(n).astype(np.float32)
    is_subkeep = MoveChecks.of(rules).is_subkeep
    name = getattr(strat, "name", type(strat).__name__)
    for j in range(rules.n_rolls - 1, 0, -1):
        keeps = np.asarray(strat.keep(state, rolls, j, u))
        if keeps.shape != (n,) or keeps.dtype.kind not in "iu":
            raise StrategyError(f"strategy {name!r}: keep() must return ({n},) integer keep indices, "
                                f"got shape {keeps.shape} dtype {keeps.dtype}")
        ok = (keeps >= 0) & (keeps < is_subkeep.shape[1])
        ok[ok] = is_subkeep[rolls[ok], keeps[ok]]
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
            raise StrategyError(f"strategy {name!r} kept dice it does not have (keep index {int(keeps[g])}, "
                                f"dice {rules.dice.roll_dice[rolls[g]].tolist()}, {j} rolls left)")
        again = np.asarray(strat.keep(state, rolls, j, u))
        _require(np.array_equal(keeps, again), f"keep() with {j} rolls left answers the same twice with the "
                                               "same uniforms")
    rows = np.flatnonzero(has)
    sub_state = GameState.from_arrays(rules, filled[rows], upper[rows], full[rows])
    sub_state.turn = state.turn
    opts = TurnOptions(legal[rows], scores[rows], gain[rows])
    boxes = np.asarray(strat.box(sub_state, rolls[rows], opts, u[rows]))
    if boxes.shape != rows.shape or boxes.dtype.kind not in "iu":
        raise StrategyError(f"strategy {name!r}: box() must return ({len(rows)},) integer box indices, "
                            f"got shape {boxes.shape} dtype {boxes.dtype}")
    ok = (boxes >= 0) & (boxes < b)
    ok[ok] = legal[rows[ok], boxes[ok]]
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        raise StrategyError(f"strategy {name!r} chose a box the rules forbid (box index {int(boxes[g])}, "
                            f"dice {rules.dice.roll_dice[rolls[rows[g]]].tolist()})")


class Recorder(Strategy):
    """Wraps a strategy, forwarding every decision, and records what the engine
    showed it: the first roll of every turn, each final roll, the box chosen and
    the points the engine offered there. Batches are kept apart (a batch starts
    when the engine asks for turn 0 again)."""

    def __init__(self, inner: Strategy):
        self.inner = inner
        self.name = inner.name
        self.batches: list[dict[str, list]] = []

    def prepare(self, rules):
        super().prepare(rules)
        self.inner.prepare(rules)
        return self

    def keep(self, state, rolls, rolls_left, u):
        if rolls_left == self.rules.n_rolls - 1:
            if state.turn == 0:
                self.batches.append({"first": [], "final": [], "box": [], "points": []})
            self.batches[-1]["first"].append(np.array(rolls, copy=True))
        return self.inner.keep(state, rolls, rolls_left, u)

    def announce(self, state, rolls, u):
        return self.inner.announce(state, rolls, u)

    def box(self, state, rolls, options, u):
        boxes = self.inner.box(state, rolls, options, u)
        b = np.asarray(boxes)
        rec = self.batches[-1]
        rec["final"].append(np.array(rolls, copy=True))
        rec["box"].append(b.copy())
        rec["points"].append(np.asarray(options.scores)[np.arange(len(b)), b].copy()
                             if b.dtype.kind in "iu" and ((b >= 0) & (b < self.rules.n_boxes)).all()
                             else np.full(len(b), -1))
        return boxes

    def arrays(self) -> dict[str, np.ndarray]:
        """Per game (rows) and turn (columns): first roll, final roll, box, points."""
        out = {}
        for key in ("first", "final", "box", "points"):
            if all(rec[key] for rec in self.batches):   # the turn simulator asks for no box
                out[key] = np.concatenate([np.stack(rec[key], axis=1) for rec in self.batches])
        return out


def check_ruleset(rules: RuleSet | str) -> None:
    """Static invariants of a rule set (a house-rules file's too) and of its
    state-dependent rules; raise :class:`CheckFailed` naming the first that fails.

    The score table's shape and values, upper boxes scoring their face count, the
    five-of-a-kind box, bonus tiers, a fresh card's legal boxes, and on 4,096 random
    cards: an open legal box, announcements, jokers and bonuses as declared.

    >>> check_ruleset("yatzy")
    """
    rules = get_rules(rules) if isinstance(rules, str) else rules
    d = rules.dice
    table = rules.score_table
    _require(table.shape == (d.n_rolls, rules.n_boxes), 'table.shape == (d.n_rolls, rules.n_boxes)')
    _require(table.dtype.kind in "iu" and (table >= 0).all(), 'table.dtype.kind in "iu" and (table >= 0).all()')
    _require(len(set(rules.box_names)) == rules.n_boxes, 'len(set(rules.box_names)) == rules.n_boxes')
    faces = rules.upper_face[rules.is_upper]
    _require(set(faces.tolist()) <= set(range(1, rules.n_faces + 1)), 'set(faces.tolist()) <= set(range(1, rules.n_faces + 1))')
    if rules.joker != "none" or rules.upper_bonus:   # one upper box per face
        _require(sorted(faces.tolist()) == list(range(1, rules.n_faces + 1)), 'sorted(faces.tolist()) == list(range(1, rules.n_faces + 1))')
    for b in np.flatnonzero(rules.is_upper):
        f = rules.upper_face[b]
        _require((table[:, b] == f * d.roll_counts[:, f - 1]).all(), '(table[:, b] == f * d.roll_counts[:, f - 1]).all()')
    _require((rules.joker_points[rules.is_upper] == -1).all(), '(rules.joker_points[rules.is_upper] == -1).all()')
    if rules.five_box is not None:
        is_five = d.roll_counts.max(axis=1) == d.n_dice
        _require(((table[:, rules.five_box_index] == rules.five_box_points) == is_five).all(), '((table[:, rules.five_box_index] == rules.five_box_points) == is_five).all()')
        _require(((rules.five_face > 0) == is_five).all(), '((rules.five_face > 0) == is_five).all()')
    _require(rules.upper_bonus >= 0 and rules.five_bonus >= 0, 'rules.upper_bonus >= 0 and rules.five_bonus >= 0')
    tiers = rules.upper_bonus_tiers
    _require([t for t, _ in tiers] == sorted({t for t, _ in tiers}) and [b for _, b in tiers] == sorted(
        {b for _, b in tiers}), '[t for t, _ in tiers] == sorted({t for t, _ in tiers}) and [b for _, b in tiers] == sorted( {b for _, b in tiers})')
    if tiers:
        _require(tiers[-1] == (rules.upper_bonus_threshold, rules.upper_bonus), 'tiers[-1] == (rules.upper_bonus_threshold, rules.upper_bonus)')
    needs_five = np.array([b.needs_five_box for b in rules.boxes], dtype=bool)
    _require(not needs_five.any() or rules.five_box is not None, 'not needs_five.any() or rules.five_box is not None')

    # Fresh card: every box legal (or the first one in order), plain scores, no bonus.
    n = d.n_rolls
    rolls = np.arange(n)
    fresh = np.zeros((n, rules.n_boxes), dtype=bool)
    legal, scores, bonus = rules.turn_options(fresh, np.zeros(n, bool), rolls)
    _require((scores[:, ~needs_five] == table[:, ~needs_five]).all() and not bonus.any(), '(scores[:, ~needs_five] == table[:, ~needs_five]).all() and not bonus.any()')
    # a box enabled by the five box pays nothing yet
    _require(not scores[:, needs_five].any(), 'a box enabled by the five-of-a-kind box pays nothing on a fresh card')
    if rules.fill_order == "in-order":
        _require((legal == (np.arange(rules.n_boxes) == 0)).all(), '(legal == (np.arange(rules.n_boxes) == 0)).all()')
    elif rules.columns:   # per column: Down its first box, Up its last, Free all, Announce none
        expect = np.zeros(rules.n_boxes, dtype=bool)
        for col in rules.columns:
            idx = [rules.box_index(b) for b in col.boxes]
            pick = {"down": idx[:1], "up": idx[-1:], "any": idx, "announce": []}[col.order]
            expect[pick] = True
        _require((legal == expect).all(), '(legal == expect).all()')
    else:
        _require(legal.all(), 'legal.all()')

    # Random cards: legal boxes are open, there is always one, bonuses as declared.
    rng = np.random.default_rng(0)
    m = 4096
    filled = rng.random((m, rules.n_boxes)) < rng.random((m, 1))
    filled[np.arange(m), rng.integers(0, rules.n_boxes, m)] = False
    full = rng.random(m) < 0.5
    if rules.five_box is not None:
        full &= filled[:, rules.five_box_index]
        five_rolls = np.flatnonzero(rules.five_face > 0)
        rolls = np.where(rng.random(m) < 0.5, rng.choice(five_rolls, m), rng.integers(0, n, m))
    else:
        rolls = rng.integers(0, n, m)
    legal, scores, bonus = rules.turn_options(filled, full, rolls)
    announce = rules.is_announce if rules.columns else np.zeros(rules.n_boxes, bool)
    only_announce = ~(~filled & ~announce).any(axis=1)   # just announce boxes open: must announce
    _require(legal[~only_announce].any(axis=1).all() and not (legal & filled).any(), 'legal[~only_announce].any(axis=1).all() and not (legal & filled).any()')
    _require(not legal[:, announce].any(), 'not legal[:, announce].any()')
    if announce.any():   # an announcement leaves exactly that box
        pick = np.where(~filled & announce, rng.random((m, rules.n_boxes)), -1).argmax(axis=1)
        said = np.where((~filled & announce).any(axis=1), pick, -1)
        legal_a, _, _ = rules.turn_options(filled, full, rolls, announced=said)
        made = said >= 0
        _require((legal_a[made].sum(axis=1) == 1).all() and legal_a[made, said[made]].all(), '(legal_a[made].sum(axis=1) == 1).all() and legal_a[made, said[made]].all()')
        _require((legal_a[~made] == legal[~made]).all(), '(legal_a[~made] == legal[~made]).all()')
    _require((scores >= 0).all(), '(scores >= 0).all()')
    if rules.fill_order == "in-order":
        _require((legal.sum(axis=1) == 1).all(), '(legal.sum(axis=1) == 1).all()')
    expected_bonus = np.where((rules.five_face[rolls] > 0) & full, rules.five_bonus, 0)
    _require((bonus == expected_bonus).all(), '(bonus == expected_bonus).all()')
    if needs_five.any():   # enabled exactly while the five box holds a score
        five_rows = full
        _require((scores[~five_rows][:, needs_five] == 0).all(), '(scores[~five_rows][:, needs_five] == 0).all()')
        _require((scores[five_rows][:, needs_five] == table[rolls[five_rows]][:, needs_five]).all(), '(scores[five_rows][:, needs_five] == table[rolls[five_rows]][:, needs_five]).all()')
    upper_total = rng.integers(0, 100, m)
    gain = rules.upper_bonus_gain(upper_total, scores)
    _require(not gain[:, ~rules.is_upper].any(), 'not gain[:, ~rules.is_upper].any()')

    def held(u):   # the bonus of the highest tier reached, written from the tiers
        return np.array([max([b for t, b in tiers if x >= t], default=0) for x in u.ravel()]).reshape(u.shape)

    after = upper_total[:, None] + scores
    expected = np.where(rules.is_upper, held(after) - held(upper_total)[:, None], 0)
    _require((gain == expected).all(), '(gain == expected).all()')
    _require((rules.final_bonus(after) == held(after)).all(), '(rules.final_bonus(after) == held(after)).all()')


def _replay(rules: RuleSet, rec: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-game bookkeeping recomputed from the recorded turns (loop over turns only)."""
    n, turns = rec["box"].shape
    box_scores = np.zeros((n, rules.n_boxes), dtype=np.int64)
    five_full = np.zeros(n, bool)
    bonus_count = np.zeros(n, np.int64)
    five_count = np.zeros(n, np.int64)
    rows = np.arange(n)
    for t in range(turns):
        is_five = rules.five_face[rec["final"][:, t]] > 0
        if rules.five_bonus:
            bonus_count += is_five & five_full   # the box must hold 50 *before* this turn
        five_count += is_five
        b, pts = rec["box"][:, t], rec["points"][:, t]
        box_scores[rows, b] = pts
        if rules.five_box is not None:   # any score in the five box (a served Generala's 60 too)
            five_full |= (b == rules.five_box_index) & (pts > 0)
    return {"box_scores": box_scores, "five_bonus_count": bonus_count,
            "five_count": five_count, "five_box_full": five_full}


def _same_games(a, b, stop=None) -> None:
    _require(a.games.keys() == b.games.keys(), 'a.games.keys() == b.games.keys()')
    for k in a.games:
        x, y = np.asarray(a.games[k]), np.asarray(b.games[k])
        if stop is not None:
            x = x[:stop]
        _require(np.array_equal(x, y), 'np.array_equal(x, y)' + f" ({k})")


def check_strategy(rules: RuleSet | str, strategy: str | Strategy, n: int = 2048, seed: int = 20260) -> None:
    """Run a strategy through the conformance checks on a rule set; raise
    :class:`CheckFailed` (an ``AssertionError``) naming the first check that fails.

    * legal decisions of the right shape in situations of every kind the rule set can
      produce (random cards, upper totals, five-of-a-kind box values and rolls, every
      rolls left; :func:`check_decisions`; for games of columns with their own fill orders,
      such as Yamb, only the next), then in ``n`` whole games (the engine checks
      every keep and box);
    * bookkeeping: every box filled once, with the points offered; totals, upper bonus
      and five-of-a-kind bonuses as the rules say;
    * reproducibility: the same seed gives the same games, whatever the batch size, and
      fewer games are a prefix of more.

    ``strategy`` is a name, a plug-in spec (``module:Class``) or an instance (copied for
    each run, so a strategy that keeps state between calls is checked as it would run).

    >>> check_strategy("yacht", "keep-largest", n=1100)
    """
    rules = get_rules(rules) if isinstance(rules, str) else rules
    fresh = _fresh_copies(strategy)
    if not rules.columns:      # column games' cards are not random subsets: whole games only
        check_decisions(rules, fresh())
    rec = Recorder(fresh())
    res = simulate(rules, rec, n, seed=seed)
    g = res.games
    name = rec.name
    _require(res.n_games == n and res.strategy == name and res.seed == seed, 'the result records the games, the strategy and the seed')
    _require(len(g["total"]) == n, 'len(g["total"]) == n')

    # Every box filled exactly once, with the points the engine offered.
    r = rec.arrays()
    _require(r["box"].shape == (n, rules.n_boxes), 'r["box"].shape == (n, rules.n_boxes)')
    _require((np.sort(r["box"], axis=1) == np.arange(rules.n_boxes)).all(), '(np.sort(r["box"], axis=1) == np.arange(rules.n_boxes)).all()')
    if "fill_turn" in g:
        _require((np.sort(g["fill_turn"], axis=1) == np.arange(1, rules.n_boxes + 1)).all(), '(np.sort(g["fill_turn"], axis=1) == np.arange(1, rules.n_boxes + 1)).all()')
    replay = _replay(rules, r)
    _require((replay["box_scores"] == g["box_scores"]).all(), '(replay["box_scores"] == g["box_scores"]).all()')
    _require((replay["five_count"] == g["five_count"]).all(), '(replay["five_count"] == g["five_count"]).all()')
    _require((replay["five_bonus_count"] == g["five_bonus_count"]).all(), '(replay["five_bonus_count"] == g["five_bonus_count"]).all()')
    _require((replay["five_box_full"] == g["five_box_full"]).all(), '(replay["five_box_full"] == g["five_box_full"]).all()')

    # Totals: boxes + upper bonus + five bonuses; upper bonus from the upper total.
    upper = g["box_scores"][:, rules.is_upper].sum(axis=1)
    _require((g["upper_total"] == upper).all(), '(g["upper_total"] == upper).all()')
    # The bonus of the highest tier reached (one tier for the classic games).
    bonus = np.zeros(len(upper), dtype=np.int64)
    for threshold, tier_bonus in rules.upper_bonus_tiers:
        bonus[upper >= threshold] = tier_bonus
    _require((g["upper_bonus"] == bonus).all(), '(g["upper_bonus"] == bonus).all()')
    total = g["box_scores"].sum(axis=1) + bonus + g["five_bonus_count"] * rules.five_bonus
    if rules.card_score is not None:   # the card scored as a whole (Yamb; its formula: test_family.py)
        total = rules.card_score(g["box_scores"])
    _require((g["total"] == total).all(), '(g["total"] == total).all()')
    if rules.has_points:   # Balut: points of the finished card
        _require((g["points"] == rules.points(g["box_scores"])).all(), '(g["points"] == rules.points(g["box_scores"])).all()')
        res.aggregate.check(rules, n)
        _require(res.summary()["points_mean"] == g["points"].mean() or abs(res.summary()["points_mean"] - g["points"].mean()) < 1e-9 * max(1.0, abs(g["points"].mean())), 'the summary\'s points_mean is the mean of the games\' points')
    if not rules.five_bonus:
        _require(not g["five_bonus_count"].any(), 'not g["five_bonus_count"].any()')
    _require((g["five_bonus_count"] <= np.maximum(g["five_count"] - 1, 0)).all(), '(g["five_bonus_count"] <= np.maximum(g["five_count"] - 1, 0)).all()')
    _require((g["five_bonus_count"][~g["five_box_full"]] == 0).all(), '(g["five_bonus_count"][~g["five_box_full"]] == 0).all()')
    _require(((g["box_scores"] >= 0) & (g["box_scores"] <= max(50, rules.score_tables.max()))).all(), '((g["box_scores"] >= 0) & (g["box_scores"] <= max(50, rules.score_tables.max()))).all()')

    # Same seed, other batch size: identical games (so also same seed, same games).
    other = simulate(rules, fresh(), n, seed=seed, batch=1024)
    _same_games(res, other)
    # n not a multiple of the 1024 seed block: a prefix of the longer run.
    short = simulate(rules, fresh(), n - 548, seed=seed)
    _same_games(res, short, stop=n - 548)


