"""``heuristic``: the one-turn lookahead of ``greedy`` with a box value that follows
the source documents' advice and aims at each game's end-of-game goals (see
:class:`HeuristicStrategy`; the shared machinery is :mod:`yahtzee_sim.strategies.lookahead`).

Over 600 lines: one class whose parts (the box value, the reserve, the goal tables of
Balut and Yamb, the announcements) are tuned together; splitting it would scatter the
knobs the docstring explains.

>>> from yahtzee_sim import simulate
>>> h = simulate("yahtzee", "heuristic", 2048, seed=1).summary()["mean"]
>>> g = simulate("yahtzee", "greedy", 2048, seed=1).summary()["mean"]
>>> bool(h > g)
True
"""

from __future__ import annotations

import numpy as np

from ..exact.widget import best_keeps
from ..strategy import default_announcement, register
from .aims import card_aims
from .lookahead import LookaheadStrategy, _distinct_rows
from ..validate import whole_number

__all__ = ["HeuristicStrategy", "binomial_pmf", "binomial_sf"]


def binomial_pmf(n: int, p: float) -> np.ndarray:
    """``P(X = 0), ..., P(X = n)`` for X binomial(n, p), 0 < p < 1: the numbers of
    ``scipy.stats.binom.pmf(np.arange(n + 1), n, p)``, from the ufunc it calls, which
    lives in ``scipy.special`` (a fifth of a second to import; ``scipy.stats``, most of
    a second more, is not imported here: a heuristic's set-up need not pay it). Another
    scipy's layout: through ``scipy.stats``.

    >>> [round(float(x), 4) for x in binomial_pmf(2, 0.5)]
    [0.25, 0.5, 0.25]
    """
    try:
        from scipy.special._ufuncs import _binom_pmf
    except ImportError:                   # pragma: no cover - a scipy without it
        from scipy.stats import binom

        return binom.pmf(np.arange(n + 1), n, p)
    return _binom_pmf(np.arange(n + 1, dtype=np.float64), np.float64(n), np.float64(p))


def binomial_sf(k: np.ndarray, n: np.ndarray, p: float) -> np.ndarray:
    """``P(X > k)`` for X binomial(n, p), broadcast over whole ``k`` and ``n >= 0``, 0 <= p <= 1:
    the numbers of ``scipy.stats.binom.sf(k, n, p)`` (1 below the support, 0 from ``n`` on,
    the ufunc clipped to [0, 1] between) without importing ``scipy.stats``, as
    :func:`binomial_pmf`. Another scipy's layout: through ``scipy.stats``.

    >>> [round(float(x), 4) for x in binomial_sf(np.arange(-1, 3), 2, 0.5)]
    [1.0, 0.75, 0.25, 0.0]
    """
    try:
        from scipy.special._ufuncs import _binom_sf
    except ImportError:                   # pragma: no cover - a scipy without it
        from scipy.stats import binom

        return binom.sf(k, n, p)
    k, n = np.broadcast_arrays(np.asarray(k), np.asarray(n))
    inside = (k >= 0) & (k < n)
    out = np.where(k < 0, 1.0, 0.0)
    out[inside] = np.clip(_binom_sf(np.floor(k[inside]).astype(np.float64), n[inside].astype(np.float64),
                                    np.float64(p)), 0, 1)
    return out


@register
class HeuristicStrategy(LookaheadStrategy):
    """A sensible human player: the one-turn lookahead of ``greedy`` with a box
    value that follows the sources' advice (source 003's "Strategia semplice" and
    source 001's four "ヨットで勝つためのコツ"). Writing a roll in box b is worth::

        points now (Yahtzee bonus included, upper bonus excluded)
        + change of the upper-bonus outlook            (upper boxes)    tip A
        - reserve: what keeping the box open is worth  (every box)      tips B, C
        + future Yahtzee bonuses a 50 makes possible   (Yahtzee box)    tip D
        + change of the end-of-game goals' outlook     (Balut, Yamb)    G, H

    A. Source 003 "Punta al bonus da subito", source 001 "1〜6の目は各3つをめざす": the
       par of an upper box is three dice of its face (3 + 6 + ... + 18 = 63). The
       bonus outlook is ``bonus * P(final upper total >= 63)`` where each open
       upper box is modelled as a hunt for its face (binomial number of dice,
       ``upper_rolls`` rolls, about par on average). Four sixes (+6 over par)
       make up for two ones: the outlook moves with the surplus over par.
    B. Source 003 "Tieni la Libera per le emergenze", source 001 tip 4 "大きな目の
       チョイスはもったいない": each open box has a reserve proportional to what a
       whole turn aimed at it is worth (computed exactly from the dice tables);
       Chance's reserve is high, so it takes a roll only when the other boxes
       would lose more.
    C. Source 003 "Sappi dove mettere uno zero: gli Assi o lo Yahtzee a fine
       partita", source 001 tip 3 "捨てる欄を決めておく": a zero costs the box's
       reserve. Ones have the smallest upper reserve; the five-of-a-kind box's
       reserve is the chance of still rolling one in the turns left, so late in
       the game it is the cheapest zero.
    D. Source 003 "Non inseguire lo Yahtzee troppo a lungo": the lookahead weighs
       the exact chance of five of a kind this turn against the sure points of
       other boxes; the extra worth of a 50 (later +100 bonuses, when the rules
       have them) shrinks with the turns left.
    E. Source 003 "Cerca le scale con i numeri centrali", source 001 tip 2 "4つ続いたら
       両端を待つ": no rule needed, the exact keep expectation holds 3-4 and
       open-ended runs when a straight is worth chasing.

    The rest of the family, what it aims for in each:

    F. Kismet: the bonus outlook sums the three tiers (each step's bonus times the
       chance of reaching it).
    G. Yamb, won on the score: the score is (Max - Min) x Ones plus the rows, so a point
       is worth more in some boxes than others; each box is weighted by the change of
       the card score for one more point, around a card of aimed values (a point of
       Ones is worth 1 + the typical Max - Min, about 12; a point of Min costs the
       typical Ones, so it aims low there). Each column's upper bonus (+30 when its six
       upper rows reach 60) is a goal (below). After the first throw it announces the
       Announce box whose turn, aimed at it from those dice, is worth most (its points,
       reserve and goals: the exact expectation over the two rerolls) when that beats
       the turn's plan without an announcement, or when it must (only Announce boxes
       open; ``announce_by_choice = False``: only then); plans follow the announcement.
    H. Balut, won on points: it plays for points, counted at 50 score points each (the
       score adds one point per band of 50): a Balut box that is not zero is worth 2
       points more, and its reserve is what it may still bring: with k Balut boxes open
       and T turns left, its worth times P(at least k of the T turns make five of a
       kind), at ``each_rate`` times the chance of an aimed turn (tip C for four boxes).
       The category totals (Fours 52, Fives 65, Sixes 78, Choice 100: 2 points each)
       and the all-non-zero Straight (4) and Full house (3) columns are goals. It gives
       up score for points (benchmarks/RESULTS.md, "heuristic's goals").
    I. Maxi Yatzy: saved throws are spent only when they would be wasted (the default
       :meth:`Strategy.keep_banked`), so the plan of each turn is the three-throw one.
    J. Generala: plans use the points of the final throw; a served combination is a
       bonus it takes when the first throw already fits (holding then is the best keep).

    Goals (G, H; ``strategies/aims.py`` reads them from the rule set): like the upper
    bonus (tip A), each adds ``worth * P(reached)`` to the card, and writing a roll in
    one of its boxes is worth the change. A *total* goal's chance is that of the total
    so far plus its open boxes reaching the threshold, each open box ending like a turn
    of ``total_throws`` throws aimed at it (exact distributions from the dice tables). A
    *full* goal's chance, with k of its boxes open and T turns left, is P(at least k of
    the T turns make a non-zero for it) at ``full_rate`` times an aimed turn's chance; 0
    once one of its boxes is zero. The goals' progress (points so far, as far as a goal
    is still open) is part of each plan's position. ``aim_card = False`` turns the goals
    off: the heuristic as it was before them. The other rule sets have no goals; their
    plans are unchanged.

    The knobs below were tuned by simulation on ``yahtzee`` (common random
    numbers, see ``benchmarks/tune_heuristic.py``) and are multipliers of
    quantities computed from each rule set, so they carry over to the others;
    ``total_throws``, ``full_rate`` and ``each_rate`` on Balut's points and Yamb's score.

    >>> from yahtzee_sim import simulate
    >>> bool(simulate("yahtzee", "heuristic", 2048, seed=3).summary()["mean"] > 235)
    True
    """

    name = "heuristic"
    description = "one-turn lookahead with the sources' advice: upper bonus, reserves, where to zero"

    #: tuning knobs (found by simulation, see benchmarks/tune_heuristic.py)
    reserve_upper: float = 0.5625  # upper box reserve, times its one-turn aimed value
    reserve_lower: float = 1.25    # lower box reserve, times its one-turn aimed value
    reserve_chance: float = 0.875  # Chance's reserve, times its one-turn aimed value (tip B)
    five_rate: float = 2.125       # per-turn rate of five of a kind, times the aimed rate
    upper_rolls: float = 4.625     # bonus outlook: an open upper box ends like a hunt for its
                                   # face with this many rolls (5 rolls: 3 dice on average = par)
    #: aim at what the card pays at the end (Balut's points, Yamb's column bonuses: G, H);
    #: False plays as before these goals (the other rule sets have none: no change either way)
    aim_card: bool = True
    total_throws: int = 5          # a total goal's open box ends like a turn of this many throws aimed at it
    full_rate: float = 0.5         # per-turn rate of a non-zero in a full goal's box, times an aimed turn's
    each_rate: float = 1.25        # per-turn rate of filling a box paid when non-zero (each Balut),
                                   # times the chance of an aimed turn
    #: Yamb: announce whenever it beats the turn's plan (False: only when the turn must,
    #: about three times faster, and about 60 points a game lower)
    announce_by_choice: bool = True

    def prepare(self, rules):
        super().prepare(rules)
        d = self.dice
        # What one whole turn aimed at each box alone is worth: the exact
        # expectation over the dice tables (e.g. Chance ~23.3, Yahtzee ~2.3).
        plan = best_keeps(d, rules.score_table.T.astype(np.float64), rolls_left=rules.n_rolls - 1)
        self.aimed = plan.values[rules.n_rolls - 1] @ d.first_roll_prob
        self.card_weight = self._card_weights(rules)
        self.aims = card_aims(rules) if self.aim_card else None
        if self.aims is not None:
            whole_number(self.total_throws, f"{self.name}: total_throws")     # throws: a positive integer
        each = self.aims.each if self.aims is not None else np.zeros(rules.n_boxes)
        self._score_adjusted = bool((self.card_weight != 1).any() or each.any())
        if self._score_adjusted:   # a card scored as a whole (Yamb, Balut): box points by their worth
            worth = rules.score_table.T * self.card_weight[:, None]
            if each.any():         # a box that also pays when non-zero (each Balut)
                worth = worth + each[:, None] * (rules.score_table.T > 0)
            self._score_f = np.ascontiguousarray(worth, dtype=np.float32)
            plan = best_keeps(d, self._score_f.astype(np.float64), rolls_left=rules.n_rolls - 1)
            self.aimed = plan.values[rules.n_rolls - 1] @ d.first_roll_prob
        weight = np.where(rules.is_upper, self.reserve_upper, self.reserve_lower)
        # Chance / Choice: the box that takes the sum of any roll
        dice_sum = (d.roll_counts * np.arange(1, d.n_faces + 1)).sum(axis=1)
        weight[(rules.score_table == dice_sum[:, None]).all(axis=0)] = self.reserve_chance
        turns = np.arange(rules.n_boxes, dtype=np.float64)      # turns left after this one
        self._five_reserve = np.zeros(rules.n_boxes, np.float32)
        self._five_future = np.zeros(rules.n_boxes, np.float32)
        if rules.five_box is not None:
            # tip C: the five-of-a-kind box is worth keeping open only while there are
            # turns left to roll one: reserve = points * P(at least one in the turns left),
            # at a per-turn rate proportional to the exact chance when hunting it.
            five = (rules.five_face > 0).astype(np.float64)
            p = best_keeps(d, five[None, :], rolls_left=rules.n_rolls - 1).values[rules.n_rolls - 1]
            rate = min(1.0, float(p[0] @ d.first_roll_prob) * self.five_rate)
            weight[rules.five_box_index] = 0.0
            self._five_reserve[:] = rules.five_box_points * (1 - (1 - rate) ** turns)
            # tip D: a full five-of-a-kind box makes each later one worth the bonus
            self._five_future[:] = rules.five_bonus * rate * turns
        self.reserve = (weight * self.aimed).astype(np.float32)
        self._upper_cols = np.flatnonzero(rules.is_upper)
        self._upper_bits = (1 << np.arange(len(self._upper_cols))).astype(np.int64)
        self._upper_val = self._upper_tables()
        self._upper_tab = np.stack([self._upper_val[b] for b in self._upper_cols]) \
            if len(self._upper_cols) else None
        masks = self._upper_tab.shape[1] if self._upper_tab is not None else 1
        self._col_offset = np.arange(len(self._upper_cols))[None, :] * masks
        self._top_by_col = (rules.n_dice * rules.upper_face[self._upper_cols]).astype(np.int64)
        self._counts = {int(b): (rules.score_table[:, b] // rules.upper_face[b]).astype(np.intp)
                        for b in self._upper_cols}
        self._goal_tables(rules)
        self._twins = self.twin_boxes(rules)
        if self._with_values:
            # the turn values (1 kB a position) would more than double the store; Yamb's
            # positions rarely repeat, so a quarter of it costs little speed (20,000 games:
            # 19.4 CPU s instead of 18.6) and about 300 MB less
            self.cache_size = min(self.cache_size, type(self).cache_size // 4)
            if not self._plans_kept:
                self._reset_cache(rules.n_rolls - 1)
        return self

    def twin_boxes(self, rules):
        """With goals (Balut): the boxes of one category, which share their points, their
        reserve and a goal whose open boxes all end alike. Without goals: every box alone
        (the other rule sets' plans are computed exactly as before)."""
        if self.aims is None or rules.columns or rules.five_box is not None:
            return super().twin_boxes(rules)
        tables = rules.score_tables
        goals = {b: [g[:2] for g in self._goals_of_box.get(b, [])] for b in range(rules.n_boxes)}
        runs = [[0]]
        for b in range(1, rules.n_boxes):
            a = runs[-1][-1]
            alike = (np.array_equal(tables[..., a], tables[..., b]) and self.reserve[a] == self.reserve[b]
                     and self.card_weight[a] == self.card_weight[b] and self.aims.each[a] == self.aims.each[b]
                     and rules.is_upper[a] == rules.is_upper[b] and goals[a] == goals[b]
                     and all(self._symmetric[g] for g in goals[a]))
            if alike:
                runs[-1].append(b)
            else:
                runs.append([b])
        return runs

    def _final_roll_probs(self, values: np.ndarray, rolls_left: int) -> np.ndarray:
        """(B, R) chance of each final roll of a turn that aims at each row of ``values``
        (B, R) with ``rolls_left`` rerolls (the exact plan of :func:`best_keeps`)."""
        d = self.dice
        plan = best_keeps(d, values, rolls_left=rolls_left)
        reach = d.first_roll_prob[None, :].repeat(len(values), axis=0)
        for j in range(rolls_left, 0, -1):
            keeps = plan.keeps[j]                       # (B, R) keep of each roll
            nxt = np.zeros_like(reach)
            for b in range(len(values)):
                nxt[b] = reach[b] @ d.transition[keeps[b]]
            reach = nxt
        return reach

    def _goal_tables(self, rules) -> None:
        """Items G, H: the outlook of each goal of :attr:`aims` (worth times the chance of
        reaching it), by the goal's open boxes (a bit mask in goal order, or how many when
        they all end alike) and progress.

        Model: each open box of a total goal ends like a turn of ``total_throws`` throws
        aimed at its points alone (the exact distribution from the dice tables); the
        outlook is ``worth * P(total so far + sum of its open boxes >= threshold)``. A
        full goal's (while none of its boxes is zero), by turns left T and open boxes k:
        ``worth * P(Binomial(T, rate) >= k)``, ``rate`` = ``full_rate`` times the chance
        that a turn aimed at one of its boxes makes it non-zero. Balut boxes' reserves
        (each Balut) alike with ``each_rate``.
        """
        self._raw = rules.score_table.T.astype(np.int64)                      # (B, R) points
        self._goals_of_box = {}
        self._radices, self._total_tabs, self._full_tabs = [], [], []
        self._symmetric = {}                   # goal: do all its open boxes end alike?
        if self.aims is None:
            return
        raw = self._raw
        self._box_max = raw.max(axis=1)
        self._goal_points = {}                 # goal box: (distinct points, index of each roll's)
        self._goal_first = {}                  # goal box: a roll scoring each of those points
        goal_boxes = np.flatnonzero(self.aims.goal_boxes)
        reach = {}
        for throws in {self.total_throws, rules.n_rolls}:
            probs = self._final_roll_probs(raw[goal_boxes].astype(np.float64), throws - 1)
            reach[throws] = dict(zip(goal_boxes.tolist(), probs))
        for i, g in enumerate(self.aims.totals):
            size = int(self._box_max[g.boxes].sum()) + 1
            pmf = [np.bincount(raw[b], weights=reach[self.total_throws][int(b)], minlength=size) for b in g.boxes]
            dist = np.zeros((1 << len(g.boxes), size))
            dist[0, 0] = 1.0
            for m in range(1, len(dist)):
                low = (m & -m).bit_length() - 1           # one open box of the mask
                dist[m] = np.convolve(dist[m & (m - 1)], pmf[low])[:size]
            tail = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]                  # P(S >= s)
            need = g.threshold - np.arange(g.threshold + 1)                   # by total so far
            table = np.where(need[None, :] <= 0, 1.0, tail[:, np.clip(need, 0, size - 1)])
            table = np.where(need[None, :] >= size, 0.0, table)
            self._total_tabs.append((g.worth * table).astype(np.float32))
            self._symmetric[("total", i)] = all(np.array_equal(pmf[0], q) for q in pmf)
            self._radices.append(g.threshold + 1)
            for j, b in enumerate(g.boxes):
                self._goals_of_box.setdefault(int(b), []).append(("total", i, 1 << j))
        for i, g in enumerate(self.aims.full):
            q = np.mean([reach[rules.n_rolls][int(b)][raw[b] > 0].sum() for b in g.boxes])
            rate = min(1.0, float(q) * self.full_rate)
            turns = np.arange(rules.n_boxes)[:, None]
            k = np.arange(len(g.boxes) + 1)[None, :]
            self._full_tabs.append((g.worth * binomial_sf(k - 1, turns, rate)).astype(np.float32))   # (T, k)
            self._radices.append(2)
            self._symmetric[("full", i)] = True
            for j, b in enumerate(g.boxes):
                self._goals_of_box.setdefault(int(b), []).append(("full", i, 1 << j))
        self._each_tabs, self._each_boxes = [], self._each_groups(rules)
        for i, boxes in enumerate(self._each_boxes):
            # a box paid when non-zero (each Balut) is kept open while a later turn may
            # still fill it: with k such boxes open and T turns left after this one, the
            # k-th is worth its points times P(at least k of the T turns make one), at a
            # per-turn rate each_rate times the chance of an aimed turn (like tip C).
            b = boxes[0]
            p = self._final_roll_probs(raw[b][None, :].astype(np.float64), rules.n_rolls - 1)[0]
            hit = raw[b] > 0
            rate = min(1.0, float(p[hit].sum()) * self.each_rate)
            worth = float((p * self._score_f[b])[hit].sum() / p[hit].sum())
            turns = np.arange(rules.n_boxes)[:, None]
            k = np.arange(len(boxes) + 1)[None, :]
            self._each_tabs.append((worth * binomial_sf(k - 1, turns, rate)).astype(np.float32))   # (T, k)
            self._symmetric[("each", i)] = True
            for b in boxes:
                self._goals_of_box.setdefault(int(b), []).append(("each", i, boxes))
        for b in self._goals_of_box:
            points, first, which = np.unique(raw[b], return_index=True, return_inverse=True)
            self._goal_points[b], self._goal_first[b] = (points, which), first

    def _each_groups(self, rules) -> list:
        """Runs of consecutive boxes paid when non-zero, with the same points (Balut's four)."""
        groups = []
        for b in np.flatnonzero(self.aims.each > 0):
            if groups and groups[-1][-1] == b - 1 and self.aims.each[b] == self.aims.each[b - 1] \
                    and np.array_equal(rules.score_tables[..., b], rules.score_tables[..., b - 1]):
                groups[-1].append(int(b))
            else:
                groups.append([int(b)])
        return [np.array(g) for g in groups]

    def uses_progress(self, rules):
        return bool(self.aim_card and card_aims(rules) is not None)

    def keeps_turn_values(self, rules):
        # announce() compares the announcements with the plan's own worth
        return bool(rules.announces and self.announce_by_choice and self.uses_progress(rules))

    def announce(self, state, rolls, u):
        """Item G: the open announce box whose turn from these first dice is worth most
        (its box value, the exact expectation over the rerolls), when that beats the
        turn's plan without an announcement, or when the turn must announce; otherwise
        none. Without goals: the default (only when it must, the box the first dice
        score most in).

        >>> from yahtzee_sim.rules import get_rules
        >>> from yahtzee_sim.state import GameState
        >>> r = get_rules("yamb")
        >>> s = HeuristicStrategy().prepare(r)
        >>> state = GameState.from_arrays(r, ~r.is_announce[None, :], 0)    # only Announce open
        >>> roll = np.array([r.dice.roll_index_of([1, 1, 1, 5, 6])])
        >>> r.box_names[int(s.announce(state, roll, None)[0])]
        'announce_ones'
        >>> late = ~r.is_announce[None, :].copy()
        >>> late[0, r.box_index("free_ones")] = False        # Announce and one Free box open
        >>> state = GameState.from_arrays(r, late, 0)
        >>> r.box_names[int(s.announce(state, np.array([r.dice.roll_index_of([2, 3, 4, 5, 6])]), None)[0])]
        'announce_kenta'
        """
        rules = self.rules
        said = default_announcement(rules, state.filled, rolls)
        if self.aims is None:
            return said
        games = np.flatnonzero((~state.filled & rules.is_announce).any(axis=1))
        if not len(games):
            return said
        must = said[games] >= 0
        if not self.announce_by_choice:
            games, must = games[must], must[must]
            if not len(games):
                return said
        filled, rolls = state.filled[games], np.asarray(rolls)[games]
        upper, full = state.upper_total[games], state.five_box_full[games]
        progress = self.progress_key(filled, state.box_scores[games])
        last = rules.n_rolls - 1
        best = np.full(len(games), -np.inf)
        free = np.flatnonzero(~must)
        if len(free):   # what the turn is worth without an announcement: the plan's own worth
            plan_rows = self._plans(state, last)      # (the keeps of the games that do not announce)
            best[free] = self._values[plan_rows[games[free]], rolls[free]]
        # a box's value reads only its part of the context (its goals' progress): each
        # announce box's turn is planned once per distinct part (for the games where it
        # is open; the others never read it)
        ctx = self.context(filled, upper, full, progress)
        pick = np.full(len(games), -1, dtype=np.intp)
        for b in np.flatnonzero(rules.is_announce):
            rows = np.flatnonzero(~filled[:, b])
            if not len(rows):
                continue
            first, inv = _distinct_rows([ctx[k] for k in self._box_context(int(b), ctx)])
            value = self.plain_box_value(int(b), {k: a[first, None] for k, a in ctx.items()})
            value = np.ascontiguousarray(np.broadcast_to(value, (len(first), self.dice.n_rolls)), dtype=np.float32)
            turn = best_keeps(self.dice, value, rolls_left=last).values[last]
            worth = turn[inv[rows], rolls[rows]]
            better = worth > best[rows]                 # the first box in card order on ties
            best[rows[better]] = worth[better]
            pick[rows[better]] = b
        said[games] = pick
        return said

    def _box_context(self, box: int, ctx: dict) -> list:
        """The context entries :meth:`plain_box_value` of ``box`` reads: the shared ones and
        those of its goals."""
        own = []
        n_totals = len(self._total_tabs)
        for kind, i, _ in self._goals_of_box.get(box, ()):
            if kind == "each":
                own += ["turns_left", f"each_open{i}"]
            else:
                j = i if kind == "total" else n_totals + i
                own += [f"goal_mask{j}", f"goal{j}", f"goal_open{j}"] + (["turns_left"] if kind == "full" else [])
        return ["mask", "upper", "five_reserve", "five_future"] + own

    def progress_key(self, filled, box_scores):
        """Mixed-radix code of each goal's progress: a total goal's points so far (its
        threshold once reached or out of reach: nothing left to aim at), a full goal's
        "still possible" (no zero written and a box open)."""
        aims = self.aims
        code = np.zeros(len(filled), dtype=np.int64)
        for g in aims.totals:
            part = filled[:, g.boxes]
            total = box_scores[:, g.boxes].sum(axis=1, dtype=np.int64)       # open boxes hold 0
            reach = (~part).astype(np.int64) @ self._box_max[g.boxes]
            decided = (total >= g.threshold) | (total + reach < g.threshold)
            code = code * (g.threshold + 1) + np.where(decided, g.threshold, total)
        for g in aims.full:
            part = filled[:, g.boxes]
            alive = ~(part & (box_scores[:, g.boxes] == 0)).any(axis=1) & ~part.all(axis=1)
            code = code * 2 + alive
        return code

    def _goal_context(self, filled, progress) -> dict:
        parts, code = [], np.asarray(progress, dtype=np.int64)
        for radix in reversed(self._radices):
            parts.append(code % radix)
            code = code // radix
        parts.reverse()
        ctx = {}
        kinds = [("total", i) for i in range(len(self.aims.totals))] + [("full", i) for i in range(len(self.aims.full))]
        for i, (g, kind) in enumerate(zip(self.aims.totals + self.aims.full, kinds)):
            open_ = ~filled[:, g.boxes]
            if self._symmetric[kind]:   # only how many are open matters: the lowest bits stand for them
                ctx[f"goal_mask{i}"] = (np.int64(1) << open_.sum(axis=1, dtype=np.int64)) - 1
            else:
                ctx[f"goal_mask{i}"] = open_.astype(np.int64) @ (np.int64(1) << np.arange(len(g.boxes), dtype=np.int64))
            ctx[f"goal{i}"] = parts[i].astype(np.intp)
            ctx[f"goal_open{i}"] = open_.sum(axis=1).astype(np.intp)
        if self._each_tabs or self._full_tabs:
            ctx["turns_left"] = np.maximum(self.rules.n_boxes - 1 - filled.sum(axis=1), 0).astype(np.intp)
            for i, boxes in enumerate(self._each_boxes):
                ctx[f"each_open{i}"] = (~filled[:, boxes]).sum(axis=1).astype(np.intp)
        return ctx

    def _goal_change(self, box: int, ctx: dict, s: np.ndarray):
        """Change of the goals' outlook when ``box`` takes ``s`` points (broadcast with ctx)."""
        out = np.float32(0)
        n_totals = len(self._total_tabs)
        for kind, i, bit in self._goals_of_box.get(box, ()):
            if kind == "each":      # its reserve: the chance that a later turn still fills it
                out = out + (self.reserve[box] - self._each_tabs[i][ctx["turns_left"], ctx[f"each_open{i}"]])
                continue
            j = i if kind == "total" else n_totals + i
            m = ctx[f"goal_mask{j}"]
            rest = m >> 1 if self._symmetric[(kind, i)] else m & ~bit       # its open boxes after this one
            if kind == "total":
                tab = self._total_tabs[i]
                thr = tab.shape[1] - 1
                t = ctx[f"goal{j}"]
                after = tab.reshape(-1)[rest * (thr + 1) + np.minimum(t + s, thr)]
                out = out + (after - tab.reshape(-1)[m * (thr + 1) + t])
            else:
                tab, alive = self._full_tabs[i], ctx[f"goal{j}"]
                turns, k = ctx["turns_left"], ctx[f"goal_open{j}"]
                change = np.where(s > 0, tab[turns, np.maximum(k - 1, 0)], np.float32(0)) - tab[turns, k]
                out = out + np.where(alive == 1, change, np.float32(0))
        return out

    def _card_weights(self, rules) -> np.ndarray:
        """(B,) what a point in each box is worth to the final score: 1, except where the
        card is scored as a whole (Yamb's (Max - Min) x Ones): there the change of the
        card score for one more point in the box, around a card of one-turn aimed values
        (a point of Ones is worth 1 + the typical Max - Min; a point of Min costs the
        typical Ones)."""
        if rules.card_score is None:
            return np.ones(rules.n_boxes)
        raw = rules.score_table.T.astype(np.float64)
        weight = np.ones(rules.n_boxes)
        for _ in range(4):   # a box worth less with more points (Min) is aimed low: re-linearize
            # the raw points the aimed turn ends with: follow the plan's keeps exactly
            reach = self._final_roll_probs(raw * weight[:, None], rules.n_rolls - 1)
            typical = np.rint((reach * raw).sum(axis=1)).astype(np.int64)[None, :]
            base = int(rules.card_score(typical)[0])
            bumped = typical + np.eye(rules.n_boxes, dtype=np.int64)
            new = np.asarray(rules.card_score(bumped), dtype=np.float64) - base
            if np.array_equal(new, weight):
                break
            weight = new
        return weight

    def _outlook_table(self) -> np.ndarray:
        """Tip A: (M, thr + 1) bonus * P(final upper total >= thr) for each set of open
        upper boxes (bit mask over the upper boxes) and upper total so far (clipped);
        with several tiers (Kismet) the sum over tiers of each step's bonus times the
        chance of reaching its threshold.

        Model: each open upper box of face f ends with f * X points, X binomial
        (n_dice, 1 - (1 - 1/F)**upper_rolls): a hunt for that face with
        ``upper_rolls`` rolls. Five rolls give three dice on average, the par.
        """
        rules = self.rules
        thr = rules.upper_bonus_threshold
        faces = rules.upper_face[self._upper_cols].astype(np.int64)
        n = rules.n_dice
        pmf_x = binomial_pmf(n, 1 - (1 - 1 / rules.n_faces) ** self.upper_rolls)
        size = int(faces.sum()) * n + 1
        dist = np.zeros((1 << len(faces), size))
        dist[0, 0] = 1.0
        for m in range(1, 1 << len(faces)):
            low = (m & -m).bit_length() - 1           # one open box of the mask
            rest = dist[m & (m - 1)]
            for x, px in enumerate(pmf_x):
                dist[m, x * faces[low]:] += px * rest[: size - x * faces[low]]
        tail = np.cumsum(dist[:, ::-1], axis=1)[:, ::-1]   # P(S >= s)
        out = np.zeros((len(dist), thr + 1))
        held = 0
        for tier_threshold, tier_bonus in rules.upper_bonus_tiers:   # one tier in most games
            need = tier_threshold - np.arange(thr + 1)
            table = np.where(need[None, :] <= 0, 1.0, tail[:, np.clip(need, 0, size - 1)])
            table = np.where(need[None, :] >= size, 0.0, table)
            out += (tier_bonus - held) * table                     # each step's worth times its chance
            held = tier_bonus
        return out.astype(np.float32)

    def _upper_tables(self) -> list:
        """Per upper box: value (M, thr + 1, n_dice + 1) of writing c dice of its face,
        by open-upper mask and upper total: points - reserve + change of outlook."""
        rules = self.rules
        thr = rules.upper_bonus_threshold
        outlook = self._outlook_table() if rules.upper_bonus else None
        # without an upper bonus the open upper boxes and the upper total do not matter
        m = np.arange(1 << len(self._upper_cols)) if rules.upper_bonus else np.zeros(1, dtype=np.int64)
        u = np.arange(thr + 1) if rules.upper_bonus else np.zeros(1, dtype=np.int64)
        c = np.arange(rules.n_dice + 1)
        tables = {}
        for j, b in enumerate(self._upper_cols):
            f = int(rules.upper_face[b])
            pts = (c * f * self.card_weight[b]).astype(np.float32)
            val = np.broadcast_to(pts, (len(m), len(u), len(c))).copy()
            if outlook is not None:
                after = outlook[(m & ~(1 << j))[:, None, None], np.minimum(u[None, :, None] + pts.astype(int), thr)]
                val += after - outlook[m][:, :, None]
            tables[int(b)] = val.astype(np.float32)
        return tables

    def upper_key(self, upper_total, filled):
        rules = self.rules
        if not rules.upper_bonus:
            return np.zeros(len(upper_total), dtype=np.int64)
        # Positions whose upper total cannot matter share one key: bonus already out
        # of reach (or every upper box filled) -> thr + 1; bonus secured -> thr.
        thr = rules.upper_bonus_threshold
        upper = np.minimum(upper_total.astype(np.int64), thr)
        reach = (~filled[:, self._upper_cols]).astype(np.int64) @ self._top_by_col
        # the next tier not yet reached (the only one for the classic bonus)
        tiers = np.array([t for t, _ in rules.upper_bonus_tiers], dtype=np.int64)
        above = np.where(tiers[None, :] > upper[:, None], tiers[None, :], np.int64(thr + 1))
        next_tier = above.min(axis=1)
        return np.where((upper < thr) & (upper + reach < next_tier), thr + 1, upper)

    def upper_key_count(self):
        return self.rules.upper_bonus_threshold + 2 if self.rules.upper_bonus else 1

    def context(self, filled, upper_total, five_box_full, progress=None):
        rules = self.rules
        up = filled[:, self._upper_cols].astype(np.int64)
        turns_left = np.maximum(rules.n_boxes - 1 - filled.sum(axis=1), 0).astype(np.intp)
        tracked = bool(rules.upper_bonus)
        ctx = {
            "mask": ((1 - up) * self._upper_bits).sum(axis=1) * tracked,
            "upper": np.minimum(upper_total, rules.upper_bonus_threshold).astype(np.intp) * tracked,
            "five_reserve": self._five_reserve[turns_left],
            "five_future": self._five_future[turns_left],
        }
        if self.aims is not None:
            if progress is None:
                progress = self.progress_key(filled, np.zeros(filled.shape, dtype=np.int16))
            ctx.update(self._goal_context(filled, progress))
        return ctx

    def plain_box_value(self, box, ctx):
        rules = self.rules
        if box in self._goals_of_box:
            # items G, H: the card's end-of-game goals. A box's rolls score few distinct
            # points: worth and goal change by those points, then one lookup per roll.
            points, which = self._goal_points[box]
            if rules.is_upper[box]:
                rows = self._upper_val[box][ctx["mask"][:, 0], ctx["upper"][:, 0]]     # (U, n_dice + 1)
                worth = rows[:, points // rules.upper_face[box]]
            else:
                worth = self._score_f[box][self._goal_first[box]][None, :]
            worth = (worth - self.reserve[box]) + self._goal_change(box, ctx, points[None, :])
            return np.take(worth, which, axis=1)
        if rules.is_upper[box]:
            # tip A: points, reserve and bonus outlook, tabulated by (open upper boxes,
            # upper total, dice of the face); a plain roll has no other bonus
            rows = self._upper_val[box][ctx["mask"][:, 0], ctx["upper"][:, 0]]     # (U, n_dice + 1)
            return np.take(rows, self._counts[box], axis=1) - self.reserve[box]
        v = self._score_f[box][None, :] - self.reserve[box]
        if box == rules.five_box_index:
            v = v - ctx["five_reserve"] + np.where(self._score_f[box][None, :] >= rules.five_box_points,
                                                   ctx["five_future"], np.float32(0))
        return v

    def box_values(self, ctx, scores, gain):
        rules = self.rules
        if self._score_adjusted:   # no bonus in the gains of a card scored as a whole: points by their worth
            worth = scores * self.card_weight
            if self.aims is not None:
                worth = worth + self.aims.each * (scores > 0)
            v = worth.astype(np.float32) - self.reserve
        else:
            v = gain.astype(np.float32) - self.reserve
        if len(self._upper_cols):
            cols = self._upper_cols
            counts = scores[:, cols] // rules.upper_face[cols]
            tab = self._upper_tab                                    # (cols, masks, upper, count)
            flat = ((self._col_offset + ctx["mask"][:, None]) * tab.shape[2] + ctx["upper"][:, None]) \
                * tab.shape[3] + counts
            up = tab.reshape(-1)[flat]
            # the tables hold points plus the bonus outlook; keep any other bonus (Yahtzee +100)
            other = gain[:, cols] - scores[:, cols]
            if rules.upper_bonus:   # the upper total is clipped at the last tier: gains unchanged
                other = other - rules.upper_bonus_gain(ctx["upper"], scores)[:, cols]
            v[:, cols] = (up + other) - self.reserve[cols]
        if rules.five_box is not None:
            b = rules.five_box_index
            v[:, b] = v[:, b] - ctx["five_reserve"] + np.where(scores[:, b] >= rules.five_box_points,
                                                               ctx["five_future"], np.float32(0))
        for b in self._goals_of_box:             # items G, H: the card's end-of-game goals
            v[:, b] = v[:, b] + self._goal_change(b, ctx, scores[:, b].astype(np.int64))
        return v
