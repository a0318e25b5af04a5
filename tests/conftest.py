"""Shared conformance suite (pgx's ``api_test`` spirit): every rule set passes
:func:`check_ruleset`, every rule set x strategy passes :func:`check_strategy`.

Other test files may import these helpers (``from conftest import ...``) to run a
new rule set or strategy through the same checks.
"""

from __future__ import annotations

import numpy as np
import pytest

from yahtzee_sim import simulate
from yahtzee_sim.exact import cache as _solver_cache
from yahtzee_sim.rules import RuleSet, get_rules
from yahtzee_sim.strategies import Strategy, get_strategy

# A mix of the yacht options that change card-level rules, named so other test files
# can use it by name.
YACHT_MIX = ("yacht", ("full-house-25", "straights-30-40", "three-dice", "five-not-full-house",
                       "no-bonus", "yacht-bonus-100", "fill-in-order", "four-dice-of-four"))

# Rule sets run through the simulator: every registered one plus the yacht options
# that change card-level rules (fill order, extra box, Yacht bonus) and some mixes,
# then the rest of the family the engine plays. Address a case by its value (or
# case_id), never by its position in this list.
ENGINE_RULE_CASES = [
    ("yahtzee", ()),
    ("yahtzee-free-joker", ()),
    ("yahtzee-original-joker", ()),
    ("yahtzee", ("no-joker",)),
    ("yacht", ()),
    ("yacht", ("fill-in-order",)),
    ("yacht", ("three-dice",)),
    ("yacht", ("yacht-bonus-100",)),
    ("kniffel", ()),
    ("kniffel", ("kniffel-bonus-100", "free-joker")),
    ("kniffel", ("no-kniffel-bonus",)),
    ("kismet", ()),
    ("yacht", ("faces-7",)),
    ("yahtzee", ("faces-7",)),
    ("yahtzee-free-joker", ("faces-5",)),
    ("balut", ()),
    ("maxi-yatzy", ("no-saved-throws",)),
    ("maxi-yatzy", ()),
    ("generala", ()),
    ("generala", ("no-doble", "no-wrap-straight")),
    ("yamb", ()),
    YACHT_MIX,
    ("yacht-classic", ()),
    ("yatzy", ()),
]

# Strategies that need an expensive per-rule-set solve run only on these rule sets.
HEAVY_STRATEGIES = {"optimal"}
HEAVY_RULE_CASES = {("yahtzee", ()), ("yacht", ())}


def case_id(case) -> str:
    name, options = case
    return "+".join((name,) + tuple(options))


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


def check_ruleset(rules: RuleSet) -> None:
    """Static invariants of a rule set and of its state-dependent rules."""
    d = rules.dice
    table = rules.score_table
    assert table.shape == (d.n_rolls, rules.n_boxes)
    assert table.dtype.kind in "iu" and (table >= 0).all()
    assert len(set(rules.box_names)) == rules.n_boxes
    faces = rules.upper_face[rules.is_upper]
    assert set(faces.tolist()) <= set(range(1, rules.n_faces + 1))
    if rules.joker != "none" or rules.upper_bonus:   # one upper box per face
        assert sorted(faces.tolist()) == list(range(1, rules.n_faces + 1))
    for b in np.flatnonzero(rules.is_upper):
        f = rules.upper_face[b]
        assert (table[:, b] == f * d.roll_counts[:, f - 1]).all()
    assert (rules.joker_points[rules.is_upper] == -1).all()
    if rules.five_box is not None:
        is_five = d.roll_counts.max(axis=1) == d.n_dice
        assert ((table[:, rules.five_box_index] == rules.five_box_points) == is_five).all()
        assert ((rules.five_face > 0) == is_five).all()
    assert rules.upper_bonus >= 0 and rules.five_bonus >= 0
    tiers = rules.upper_bonus_tiers
    assert [t for t, _ in tiers] == sorted({t for t, _ in tiers}) and [b for _, b in tiers] == sorted(
        {b for _, b in tiers})
    if tiers:
        assert tiers[-1] == (rules.upper_bonus_threshold, rules.upper_bonus)
    needs_five = np.array([b.needs_five_box for b in rules.boxes], dtype=bool)
    assert not needs_five.any() or rules.five_box is not None

    # Fresh card: every box legal (or the first one in order), plain scores, no bonus.
    n = d.n_rolls
    rolls = np.arange(n)
    fresh = np.zeros((n, rules.n_boxes), dtype=bool)
    legal, scores, bonus = rules.turn_options(fresh, np.zeros(n, bool), rolls)
    assert (scores[:, ~needs_five] == table[:, ~needs_five]).all() and not bonus.any()
    assert not scores[:, needs_five].any()   # a box enabled by the five box pays nothing yet
    if rules.fill_order == "in-order":
        assert (legal == (np.arange(rules.n_boxes) == 0)).all()
    elif rules.columns:   # per column: Down its first box, Up its last, Free all, Announce none
        expect = np.zeros(rules.n_boxes, dtype=bool)
        for col in rules.columns:
            idx = [rules.box_index(b) for b in col.boxes]
            pick = {"down": idx[:1], "up": idx[-1:], "any": idx, "announce": []}[col.order]
            expect[pick] = True
        assert (legal == expect).all()
    else:
        assert legal.all()

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
    assert legal[~only_announce].any(axis=1).all() and not (legal & filled).any()
    assert not legal[:, announce].any()
    if announce.any():   # an announcement leaves exactly that box
        pick = np.where(~filled & announce, rng.random((m, rules.n_boxes)), -1).argmax(axis=1)
        said = np.where((~filled & announce).any(axis=1), pick, -1)
        legal_a, _, _ = rules.turn_options(filled, full, rolls, announced=said)
        made = said >= 0
        assert (legal_a[made].sum(axis=1) == 1).all() and legal_a[made, said[made]].all()
        assert (legal_a[~made] == legal[~made]).all()
    assert (scores >= 0).all()
    if rules.fill_order == "in-order":
        assert (legal.sum(axis=1) == 1).all()
    expected_bonus = np.where((rules.five_face[rolls] > 0) & full, rules.five_bonus, 0)
    assert (bonus == expected_bonus).all()
    if needs_five.any():   # enabled exactly while the five box holds a score
        five_rows = full
        assert (scores[~five_rows][:, needs_five] == 0).all()
        assert (scores[five_rows][:, needs_five] == table[rolls[five_rows]][:, needs_five]).all()
    upper_total = rng.integers(0, 100, m)
    gain = rules.upper_bonus_gain(upper_total, scores)
    assert not gain[:, ~rules.is_upper].any()

    def held(u):   # the bonus of the highest tier reached, written from the tiers
        return np.array([max([b for t, b in tiers if x >= t], default=0) for x in u.ravel()]).reshape(u.shape)

    after = upper_total[:, None] + scores
    expected = np.where(rules.is_upper, held(after) - held(upper_total)[:, None], 0)
    assert (gain == expected).all()
    assert (rules.final_bonus(after) == held(after)).all()


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
    assert a.games.keys() == b.games.keys()
    for k in a.games:
        x, y = np.asarray(a.games[k]), np.asarray(b.games[k])
        if stop is not None:
            x = x[:stop]
        assert np.array_equal(x, y), k


def check_strategy(rules: RuleSet, strategy: str, n: int = 2048, seed: int = 20260) -> None:
    """One rule set x strategy: bookkeeping, totals, reproducibility, batching, prefix."""
    rec = Recorder(get_strategy(strategy))
    res = simulate(rules, rec, n, seed=seed)
    g = res.games
    assert res.n_games == n and res.strategy == get_strategy(strategy).name and res.seed == seed
    assert len(g["total"]) == n

    # Every box filled exactly once, with the points the engine offered.
    r = rec.arrays()
    assert r["box"].shape == (n, rules.n_boxes)
    assert (np.sort(r["box"], axis=1) == np.arange(rules.n_boxes)).all()
    if "fill_turn" in g:
        assert (np.sort(g["fill_turn"], axis=1) == np.arange(1, rules.n_boxes + 1)).all()
    replay = _replay(rules, r)
    assert (replay["box_scores"] == g["box_scores"]).all()
    assert (replay["five_count"] == g["five_count"]).all()
    assert (replay["five_bonus_count"] == g["five_bonus_count"]).all()
    assert (replay["five_box_full"] == g["five_box_full"]).all()

    # Totals: boxes + upper bonus + five bonuses; upper bonus from the upper total.
    upper = g["box_scores"][:, rules.is_upper].sum(axis=1)
    assert (g["upper_total"] == upper).all()
    # The bonus of the highest tier reached (one tier for the classic games).
    bonus = np.zeros(len(upper), dtype=np.int64)
    for threshold, tier_bonus in rules.upper_bonus_tiers:
        bonus[upper >= threshold] = tier_bonus
    assert (g["upper_bonus"] == bonus).all()
    total = g["box_scores"].sum(axis=1) + bonus + g["five_bonus_count"] * rules.five_bonus
    if rules.card_score is not None:   # the card scored as a whole (Yamb; its formula: test_family.py)
        total = rules.card_score(g["box_scores"])
    assert (g["total"] == total).all()
    if rules.has_points:   # Balut: points of the finished card
        assert (g["points"] == rules.points(g["box_scores"])).all()
        res.aggregate.check(rules, n)
        assert res.summary()["points_mean"] == pytest.approx(g["points"].mean())
    if not rules.five_bonus:
        assert not g["five_bonus_count"].any()
    assert (g["five_bonus_count"] <= np.maximum(g["five_count"] - 1, 0)).all()
    assert (g["five_bonus_count"][~g["five_box_full"]] == 0).all()
    assert ((g["box_scores"] >= 0) & (g["box_scores"] <= max(50, rules.score_tables.max()))).all()

    # Same seed, other batch size: identical games (so also same seed, same games).
    other = simulate(rules, strategy, n, seed=seed, batch=1024)
    _same_games(res, other)
    # n not a multiple of the 1024 seed block: a prefix of the longer run.
    short = simulate(rules, strategy, n - 548, seed=seed)
    _same_games(res, short, stop=n - 548)


@pytest.fixture(params=ENGINE_RULE_CASES, ids=case_id)
def engine_rules(request) -> RuleSet:
    name, options = request.param
    return get_rules(name, options)


USER_SOLVER_CACHE = _solver_cache.cache_dir()
"""The user's solver cache, as it was before the private one below replaced it: only
read (never written) by the test of a table too slow to compute in the suite."""


@pytest.fixture(autouse=True, scope="session")
def _private_solver_cache(tmp_path_factory):
    """Every solve of the test run goes to one temporary cache, never the user's; and a
    command slowed by a loaded machine prints no phase lines into a test's stderr (the
    tests of those lines set their own wait)."""
    mp = pytest.MonkeyPatch()
    mp.setenv(_solver_cache.CACHE_ENV, str(tmp_path_factory.mktemp("solver-cache")))
    mp.setenv("YAHTZEE_SIM_PHASE_LINES_AFTER", "inf")
    yield
    mp.undo()


# -- tiny games for the exact evaluations (tests/test_policy.py, tests/test_distribution.py)

def tiny_rules(*, joker="forced", five_bonus=20, upper_bonus=7, fill_order="any") -> RuleSet:
    """Two three-sided dice, three rolls, five boxes: Ones, Twos, Threes, Pair (both dice
    equal: the five-of-a-kind box), Chance. Small enough to enumerate every game."""
    from yahtzee_sim.rules import Box
    from yahtzee_sim.rules import scoring as sc

    boxes = (
        Box("ones", "Ones", sc.upper(1), upper_face=1),
        Box("twos", "Twos", sc.upper(2), upper_face=2),
        Box("threes", "Threes", sc.upper(3), upper_face=3),
        Box("pair", "Pair", sc.five_of_a_kind(10)),
        Box("chance", "Chance", sc.chance, joker_points=9),
    )
    return RuleSet(name="tiny", title="Tiny", boxes=boxes, n_dice=2, n_faces=3, n_rolls=3,
                   upper_bonus_threshold=6, upper_bonus=upper_bonus, five_box="pair",
                   five_bonus=five_bonus, joker=joker, fill_order=fill_order)


TINY_CASES = {
    "forced-joker": dict(),
    "free-joker": dict(joker="free"),
    "no-joker-no-bonus": dict(joker="none", five_bonus=0),
    "in-order": dict(fill_order="in-order"),
}


class LowestBox(Strategy):
    """Deterministic test strategy: keep the dice of the roll's lowest face, fill the
    first legal box (exercises states other strategies avoid)."""

    name = "lowest-box"

    def keep(self, state, rolls, rolls_left, u):
        counts = self.dice.roll_counts[rolls].copy()
        low = np.argmax(counts > 0, axis=1)
        held = np.zeros_like(counts)
        held[np.arange(len(rolls)), low] = counts[np.arange(len(rolls)), low]
        return self.dice.keep_index_of_counts(held)

    def box(self, state, rolls, options, u):
        return np.argmax(options.legal, axis=1)


def row_by_row(name: str) -> Strategy:
    """The built-in strategy ``name`` behind overridden keep() and box() that only call
    it: the exact evaluations then ask it one (state, roll) row at a time, the
    straightforward way, instead of reading its decision tables."""
    base = type(get_strategy(name))

    class RowByRow(base):
        def keep(self, state, rolls, rolls_left, u):
            return super().keep(state, rolls, rolls_left, u)

        def box(self, state, rolls, options, u):
            return super().box(state, rolls, options, u)

    strategy = RowByRow()
    strategy.name = f"{name} (row by row)"
    return strategy
