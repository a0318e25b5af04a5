"""Exact distributions of a game's card events under a state-based strategy.

The same forward pass as :func:`~yahtzee_sim.exact.distribution.distribution` (its
``_forward``: the level moves, through the evaluation's chunks of
:mod:`yahtzee_sim.exact.policy`), but carrying, instead of the points so far, the few counts users ask about:

* the points written in each box: a box is filled by exactly one move of the game,
  so P(box b holds x) is the sum over levels of P(reach the state) times P(the turn
  writes x in b) -- only the states' probabilities are pushed forward;
* the number of boxes scored 0 and the number of turns whose final dice are five of a
  kind: counts of at most one per turn, carried as a (state, count) array of
  ``boxes + 1`` columns (each move adds 0 or 1), pushed by the compiled loop that
  pushes the score distribution's bonus counts.

The moves are keyed by the turn's box, its points and whether its final dice are five
of a kind, so one pass gives every event. Served scores (Generala) are covered: a turn
ends with dice thrown again or still served, each with the strategy's own box.

>>> ev = event_distribution("yacht", "keep-largest", options=["fill-in-order"])
>>> from yahtzee_sim.exact.distribution import distribution
>>> d = distribution("yacht", "keep-largest", options=["fill-in-order"])
>>> bool(abs(ev.mean("five_of_a_kind") - d.five_per_game) < 1e-12)
True
>>> bool(abs(ev.box_pmf["yacht"].sum() - 1) < 1e-12), bool(abs(ev.zeros_pmf.sum() - 1) < 1e-12)
(True, True)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..rules import RuleSet, get_rules
from ..strategy import Strategy, get_strategy
from ..validate import whole_number
from . import cache as _cache
from .distribution import _cache_key, _cache_meta, _forward, through_cache
from .policy import DEFAULT_CHUNK_ROWS, _points_bound

__all__ = ["EventDistribution", "event_distribution"]


@dataclass(frozen=True, eq=False)
class EventDistribution:
    """Exact distributions of card events of a strategy on a rule set.

    Attributes
    ----------
    rules : the rule set; strategy : the strategy's name.
    box_pmf : {box name: (max points + 1,) P(the points written in that box = x)}.
    zeros_pmf : (boxes + 1,) P(exactly k boxes are scored 0).
    five_pmf : (boxes + 1,) P(exactly k turns end with five of a kind on the dice).
    method : ``"deterministic"`` or ``"uniform average"`` (``random``); seconds : time.
    """

    rules: RuleSet
    strategy: str
    box_pmf: dict = field(repr=False)
    zeros_pmf: np.ndarray = field(repr=False)
    five_pmf: np.ndarray = field(repr=False)
    method: str
    seconds: float

    def pmf(self, kind: str, name: str | None = None) -> np.ndarray:
        """The pmf of ``kind``: ``"box"`` (with the box ``name``), ``"zeros"`` or
        ``"five_of_a_kind"``.

        >>> ev = event_distribution("yacht", "keep-largest", options=["fill-in-order"])
        >>> len(ev.pmf("zeros")) == ev.rules.n_boxes + 1
        True
        """
        if kind == "box":
            return self.box_pmf[self.rules.box_names[self.rules.box_index(str(name))]]
        if kind == "zeros":
            return self.zeros_pmf
        if kind == "five_of_a_kind":
            return self.five_pmf
        raise ValueError(f"unknown event {kind!r}; valid: box, zeros, five_of_a_kind")

    def mean(self, kind: str, name: str | None = None) -> float:
        """Exact mean of the event's count or points.

        >>> ev = event_distribution("yacht", "keep-largest", options=["fill-in-order"])
        >>> bool(0 <= ev.mean("zeros") <= ev.rules.n_boxes)
        True
        """
        p = self.pmf(kind, name)
        return float(np.arange(len(p)) @ p)


EVENTS_VERSION = 1
"""Version of the cached event distributions' layout and of the pass that fills them."""


def _cache_table(rules, name, code, cache_dir):
    from .solver import rules_fingerprint

    meta = dict(_cache_meta(rules, name, code), events_version=EVENTS_VERSION)
    path = _cache.table_path(rules.key, rules_fingerprint(rules), f"events-{name}", EVENTS_VERSION, cache_dir)
    return _cache.CachedTable(path, meta)


def _load(rules, name, code, cache_dir) -> EventDistribution | None:
    stored = _cache_table(rules, name, code, cache_dir).load()
    if stored is None:
        return None
    box_pmf = {b: stored[f"box_{i}"] for i, b in enumerate(rules.box_names)}
    return EventDistribution(rules, name, box_pmf, stored["zeros_pmf"], stored["five_pmf"],
                             str(stored["method"]), float(stored["seconds"]))


def _store(ev: EventDistribution, code, cache_dir) -> None:
    arrays = {f"box_{i}": ev.box_pmf[b] for i, b in enumerate(ev.rules.box_names)}
    arrays.update(zeros_pmf=ev.zeros_pmf, five_pmf=ev.five_pmf, method=np.array(ev.method),
                  seconds=np.array(ev.seconds))
    # a folder it cannot write: the answer is still right (nothing to note it in)
    _cache_table(ev.rules, ev.strategy, code, cache_dir).store(arrays)


def event_distribution(rules: str | RuleSet, strategy: str | Strategy, *, options=(),
                       chunk_rows: int = DEFAULT_CHUNK_ROWS, progress=None, cache: bool = False,
                       cache_dir=None) -> EventDistribution:
    """Exact distributions of every box's points, of the number of zeros on the card and
    of the number of turns ending with five of a kind, for ``strategy`` on ``rules``.

    The strategies of :func:`~yahtzee_sim.exact.distribution.distribution` (decisions
    that depend on the state alone; ``random`` averaged exactly). ``cache``: for a
    strategy given by name, read and write the result in the disk cache, keyed as the
    score distributions are (the rules, the name, the source of the strategy's code,
    the versions).

    >>> ev = event_distribution("yacht", "greedy", options=["fill-in-order"])
    >>> bool(abs(ev.five_pmf.sum() - 1) < 1e-12), ev.method
    (True, 'deterministic')
    """
    rules = get_rules(rules, options)
    strat = get_strategy(strategy)
    chunk_rows = whole_number(chunk_rows, "chunk_rows")
    return through_cache(cache and isinstance(strategy, str), strat,
                         lambda code: _load(rules, strat.name, code, cache_dir),
                         lambda: _event_distribution(rules, strat, chunk_rows, progress),
                         lambda ev, code: _store(ev, code, cache_dir))


def cached_event_distribution(rules: RuleSet, play: str, cache_dir=None) -> EventDistribution | None:
    """``play``'s card events on ``rules`` from the disk cache, or None.

    >>> cached_event_distribution(get_rules("yacht"), "no-such-strategy") is None
    True
    """
    key = _cache_key(play)
    return None if key is None else _load(rules, *key, cache_dir)


def _event_distribution(rules, strat, chunk_rows, progress) -> EventDistribution:
    from ..progress import as_progress
    from ._eval_kernels import push_counts

    t0 = time.perf_counter()
    passing = _forward(rules, strat, "event distribution", chunk_rows, as_progress(progress),
                       five_ended=True)
    uniform = next(passing)
    n_b = rules.n_boxes
    n_pts = _points_bound(rules)
    box_mass = np.zeros((n_b, n_pts))
    mass: np.ndarray = np.ones(1)
    zeros = np.zeros((1, n_b + 1))
    zeros[0, 0] = 1.0
    five = zeros.copy()
    for step in passing:
        mv, drow, n_next = step.moves, step.drow, len(step.next_flat)
        w = mass[mv.src] * mv.p                       # P(reach the state and make this move)
        box_mass += np.bincount(mv.box * n_pts + mv.pts, weights=w, minlength=n_b * n_pts).reshape(n_b, n_pts)
        zeros = push_counts(zeros, drow, mv.src, mv.p, (mv.pts == 0).astype(np.int64), n_next)
        five = push_counts(five, drow, mv.src, mv.p, mv.nb, n_next)
        mass = np.bincount(drow, weights=w, minlength=n_next)
    box_pmf = {}
    for b, name in enumerate(rules.box_names):
        p = box_mass[b]
        box_pmf[name] = np.trim_zeros(p, "b") if p.any() else p[:1]
    return EventDistribution(rules, strat.name, box_pmf, zeros.sum(axis=0), five.sum(axis=0),
                             "uniform average" if uniform else "deterministic", time.perf_counter() - t0)
