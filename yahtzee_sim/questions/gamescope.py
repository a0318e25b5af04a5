"""Game and table questions: the exact score distribution where it has the event, and
simulated games beside it (alone, and saying so, where no exact method exists).

Exact (through :func:`yahtzee_sim.exact.distribution.distribution`, floating point):
the final score (chance of a range, mean, sd, percentiles, extremes), the upper
bonus, the five-of-a-kind box at its full value, the number of five of a kinds that
score (the full box plus each bonus, which needs the full box), the mean number of
turns ending in five of a kind, a served Generala; through
:func:`yahtzee_sim.exact.events.event_distribution` (the same forward pass, carrying
the card's counts instead of the score) the number of turns ending in five of a kind,
the number of zeros and a box's points; at a table the chance to win or tie through
:func:`yahtzee_sim.exact.winodds.win_odds`. Simulated only: a strategy or rule set the
exact engine cannot follow.

>>> from yahtzee_sim.questions.spec import parse_question
>>> q = parse_question({"ask": "chance", "event": "score >= 150", "scope": "game", "play": "greedy",
...                     "rules": "yacht", "options": ["fill-in-order"]})
>>> a = answer_game(q, games=2000, seed=1)
>>> a.ci[0] <= a.exact <= a.ci[1]
True
"""

from __future__ import annotations

import math

import numpy as np

from .answer import Answer, sample_statistic


def pmf_statistic(ask: str, pmf, *, q=None, event=None):
    """The ``ask`` of a quantity with ``pmf`` over 0, 1, 2, ... (``chance``: of ``event``).

    >>> pmf_statistic("mean", [0.25, 0.5, 0.25]), pmf_statistic("percentile", [0.25, 0.5, 0.25], q=80)
    (1.0, 2)
    """
    p = np.asarray(pmf, dtype=np.float64)
    x = np.arange(len(p))
    if ask == "chance":
        return float(min(1.0, p[event.holds(x)].sum()))
    if ask == "mean":
        return float(p @ x)
    if ask == "sd":
        m = float(p @ x)
        return math.sqrt(max(float(p @ (x * x)) - m * m, 0.0))
    pos = np.flatnonzero(p > 0)
    if ask == "max":
        return int(pos[-1])
    if ask == "min":
        return int(pos[0])
    if ask == "percentile":
        if q == 100:
            return int(pos[-1])
        cdf = np.cumsum(p)
        return int(min(np.searchsorted(cdf, q / 100 * cdf[-1] - 1e-13), pos[-1]))
    raise ValueError(f"unknown ask {ask!r}")


def _distribution(rules, play, cache: dict, progress=None):
    from ..exact.distribution import distribution
    from ..rules import REGISTRY

    key = ("dist", rules.key, play)
    if key not in cache:   # the disk cache for the named rule sets only (not a test's own RuleSet)
        _events_beside(rules, play, cache)
        beside = cache.get(("beside", rules.key))
        if beside is not None:
            cache[key] = beside.get(play, progress)
        else:
            cache[key] = distribution(rules, play, cache=rules.name in REGISTRY, progress=progress)
    return cache[key]


def _events_beside(rules, play, cache: dict) -> None:
    """When questions want both the score distribution and the card events of ``play``
    (a strategy that plays by a decision table: optimal), neither on disk yet: its solve
    here (and its decision table, where its passes read one:
    :func:`~yahtzee_sim.exact.distribution.prepare_for_passes`), then the card events'
    pass in a forked process (sharing them, at a lower priority) beside the score's
    here. On a first run the card events' pass otherwise comes after the score's, one
    core idle. The same code on the same inputs: the same distributions."""
    from ..exact.distribution import (cached_distribution, plays_by_table, prepare_for_passes,
                                      wait_for_parent_pass_loops)
    from ..exact.events import cached_event_distribution, event_distribution
    from ..forkpool import Beside
    from ..strategy import get_strategy

    dists = cache.get(("beside", rules.key))
    if (dists is None or not dists.cached or play not in cache.get(("events wanted", rules.key), ())
            or ("events", rules.key, play) in cache or ("events beside", rules.key, play) in cache):
        return
    if not plays_by_table(get_strategy(play)) or cached_distribution(rules, play, dists.cache_dir) is not None \
            or cached_event_distribution(rules, play, dists.cache_dir) is not None:
        return
    prepare_for_passes(rules, play)

    def events() -> None:
        wait_for_parent_pass_loops()
        event_distribution(rules, play, cache=True, cache_dir=dists.cache_dir)
    cache[("events beside", rules.key, play)] = beside = Beside([("events", events)], what="card events",
                                                              nice=EVENTS_BESIDE_NICE, kernels=True)
    dists.adopt(beside)


EVENTS_BESIDE_NICE = 10
"""The priority of the process computing a strategy's card events beside its score
distribution (an ``os.nice`` increment)."""


def _needs_distribution(q) -> bool:
    """Does :func:`answer_game` read the score distribution for ``q`` (not the events')?"""
    kind = q.event.kind
    return (q.play != "any" and q.given is None and kind not in ("all", "not", "when", "upper")
            and kind not in _CARD_EVENTS)


def distributions_beside(questions, cache: dict) -> list:
    """Start computing, beside this process, the exact score distributions ``questions``
    (game and table ones) will read, per rule set (see
    :class:`~yahtzee_sim.exact.distribution.DistributionsBeside`: optimal's here, the
    others in a forked process); :func:`answer_game` and :func:`answer_table` given the
    same ``cache`` then take them from there. Returns what to stop once done.

    >>> from yahtzee_sim.questions.spec import parse_question
    >>> started = distributions_beside([parse_question({"ask": "chance", "event": "upper_bonus",
    ...                                                 "scope": "game", "strategy": "greedy"})], {})
    >>> [b.stop() for b in started]
    [None]
    """
    from ..exact.distribution import DistributionsBeside

    plays: dict = {}
    rules_of: dict = {}
    for q in questions:
        if q.scope == "game" and q.play != "any" and q.given is None and q.event.kind in _CARD_EVENTS \
                and isinstance(q.play, str):    # its card events too (see _events_beside)
            cache.setdefault(("events wanted", q.rules.key), set()).add(q.play)
        if q.scope == "game" and _needs_distribution(q):
            wanted = [q.play]
        elif q.scope == "table":
            wanted = ["optimal" if p == "play-to-win" else p for p in q.players]
        else:
            continue
        rules_of.setdefault(q.rules.key, q.rules)
        plays.setdefault(q.rules.key, []).extend(p for p in wanted if isinstance(p, str))
    started = []
    for key, wanted in plays.items():
        if ("beside", key) not in cache:
            cache[("beside", key)] = DistributionsBeside(rules_of[key], wanted)
            started.append(cache[("beside", key)])
    return started


def _events(rules, play, cache: dict, progress=None):
    from ..exact.events import event_distribution
    from ..rules import REGISTRY

    key = ("events", rules.key, play)
    if key not in cache:   # the disk cache for the named rule sets only, as the score distributions
        beside = cache.get(("events beside", rules.key, play))
        if beside is not None:          # computed beside into the disk cache: read from there
            from ..progress import as_progress, heartbeat

            with heartbeat(as_progress(progress), f"event distribution of {play} on {rules.key}"):
                try:
                    beside.result("events")
                except (ValueError, RuntimeError):    # failed or not done beside: here, as usual
                    pass
        cache[key] = event_distribution(rules, play, cache=rules.name in REGISTRY, progress=progress)
    return cache[key]


_CARD_EVENTS = {"box": "the points written in {name}", "zeros": "the number of boxes scored 0",
                "five_of_a_kind": "the number of turns ending with five of a kind on the dice"}


def _exact_card_event(q, events):
    """(exact value, words) of a box's points, the zeros or the five of a kinds thrown."""
    ev = q.event
    name = q.rules.box_names[q.rules.box_index(ev.name)] if ev.kind == "box" else None
    pmf = events.pmf(ev.kind, name)
    what = _CARD_EVENTS[ev.kind].format(name=name)
    return pmf_statistic(q.ask, pmf, q=q.q, event=ev), f"the exact distribution of {what}"


def _games(rules, play, games, seed, cache: dict, progress=None, run_options=None):
    from ..api import simulate

    key = ("games", rules.key, play, games, seed)
    if key not in cache:
        cache[key] = simulate(rules, play, games, seed=seed, keep_games=True, progress=progress or False,
                              **(run_options or {}))
    return cache[key]


def _scored_five_pmf(dist) -> np.ndarray:
    """P(k five of a kinds score: the full box and each bonus); a bonus needs the full box."""
    bonus = np.asarray(dist.five_bonus_pmf, dtype=np.float64)
    full = float(dist.p_five_box_full)
    out = np.zeros(len(bonus) + 1)
    out[0] = 1.0 - full
    out[1] = full - (1.0 - bonus[0])
    out[2:] = bonus[1:]
    return out


def _exact_game(q, dist):
    """(exact value, words) from the distribution, or (None, why not)."""
    rules, ev, ask = q.rules, q.event, q.ask
    if ev.kind == "score":
        return pmf_statistic(ask, dist.pmf, q=q.q, event=ev), "the exact distribution of the final score"
    if ev.kind == "upper_bonus":
        return float(dist.p_upper_bonus), "the exact chance of the upper bonus"
    if ev.kind == "served":
        return float(dist.p_served_five), "the exact chance of at least one served Generala (first throw)"
    if ev.kind == "scored_five":
        return (pmf_statistic(ask, _scored_five_pmf(dist), q=q.q, event=ev),
                "the exact distribution of the five of a kinds that score (the full box, then each bonus, "
                "which needs the full box)")
    if ev.kind == "five_of_a_kind" and ask == "mean":
        return float(dist.five_per_game), "the exact mean number of turns ending in five of a kind"
    five = rules.five_box
    if ev.kind == "box" and five is not None and ev.name == rules.box_names[rules.box_index(five)] \
            and ask == "chance" and ev.low == rules.five_box_points \
            and (ev.op == ">=" or (ev.op == "==" and not rules.roll_dependent)):   # Generala: served pays more
        return float(dist.p_five_box_full), f"the exact chance that {ev.name} ends with its full value"
    return None, (f"the exact distribution does not carry {ev.text!r}" + (f" for {ask}" if ask != "chance" else ""))


def _simulated_game(q, res, ev=None):
    """(n,) the question's quantity or condition (or ``ev``'s) in each simulated game."""
    rules, ev = q.rules, (q.event if ev is None else ev)
    g = res.games
    if ev.kind == "all":
        out = np.ones(res.n_games, dtype=bool)
        for part in ev.parts:
            out &= np.asarray(_simulated_game(q, res, part), dtype=bool)
        return out
    if ev.kind == "not":
        return ~np.asarray(_simulated_game(q, res, ev.parts[0]), dtype=bool)
    if ev.kind == "when":   # 0 = filled in the first turn, 1 = in the last
        turn = np.asarray(g["fill_turn"][:, rules.box_index(ev.name)], dtype=np.float64)
        return (turn - 1) / (rules.n_boxes - 1)
    if ev.kind == "upper":
        x = np.asarray(g["box_scores"])[:, rules.is_upper].sum(axis=1)
    elif ev.kind == "zeros" and ev.name:
        cols = [rules.box_index(b) for b in ev.name.split(",")]
        x = (np.asarray(g["box_scores"])[:, cols] == 0).sum(axis=1)
    elif ev.kind == "score":
        x = np.asarray(g["total"])
    elif ev.kind == "upper_bonus":
        x = np.asarray(g["upper_bonus"]) > 0
    elif ev.kind == "box":
        x = np.asarray(g["box_scores"][:, rules.box_index(ev.name)])
    elif ev.kind == "five_of_a_kind":
        x = np.asarray(g["five_count"])
    elif ev.kind == "scored_five":
        full = np.asarray(g["box_scores"][:, rules.five_box_index]) >= rules.five_box_points
        x = full.astype(np.int64) + np.asarray(g["five_bonus_count"])
    elif ev.kind == "zeros":
        x = (np.asarray(g["box_scores"]) == 0).sum(axis=1)
    else:  # served: counted in the aggregate only
        k = res.count("served_five")
        x = np.zeros(res.n_games, dtype=bool)
        x[:k] = True
    if ev.op is not None:
        x = ev.holds(x)
    return x


def answer_game(q, *, games: int = 20_000, seed=None, cache: dict | None = None, progress=None,
                run_options=None) -> Answer:
    """Answer a game question: exact where the distribution has it, and ``games`` simulated games."""
    cache = {} if cache is None else cache
    if q.play == "any":
        return _answer_extreme(q, progress)
    unit = "share" if q.ask == "chance" else "points" if q.event.kind in ("score", "box", "upper") else "number"
    exact, words, note = None, "", ""
    try:
        if q.given is not None:
            exact, words = None, "the exact distributions carry no condition on the rest of the card"
        elif q.event.kind in ("all", "not", "when", "upper"):
            exact, words = None, f"the exact distributions do not carry {q.event.text!r}"
        elif q.event.kind == "zeros" and q.event.name:
            exact, words = _exact_named_zeros(q, _events(q.rules, q.play, cache, progress))
        elif q.event.kind in _CARD_EVENTS:    # the card's counts: their own pass, without the score's
            exact, words = _exact_card_event(q, _events(q.rules, q.play, cache, progress))
        else:
            exact, words = _exact_game(q, _distribution(q.rules, q.play, cache, progress))
    except ValueError as exc:   # a strategy or rule set the exact engine does not handle
        exact, words = None, str(exc)
    res = _games(q.rules, q.play, games, seed, cache, progress, run_options)
    x = _simulated_game(q, res)
    if q.given is not None:
        x = np.asarray(x)[np.asarray(_simulated_game(q, res, q.given), dtype=bool)]
        if len(x) < 2:
            raise ValueError(f"given {q.given.text!r}: only {len(x)} of {res.n_games:,} simulated games meet it; "
                             "simulate more games (--games)")
    est, ci = sample_statistic(q.ask, x, q=q.q)
    if q.ask in ("max", "min", "percentile") and exact is None:
        note = f"simulated only ({words}); the {q.ask} of {games:,} games bounds the true value"
    elif exact is None:
        note = f"simulated only: {words}"
    method = (f"{words}, pushed turn by turn through the {q.play} strategy's decisions (floating point)"
              if exact is not None else f"simulation of {games:,} games")
    sim_how = f"{res.n_games:,} games under {res.strategy} (seed {res.seed})"
    if q.given is not None:
        sim_how = f"the {len(x):,} of {res.n_games:,} games under {res.strategy} (seed {res.seed}) in which " \
                  f"{q.given.text}"
    if q.event.kind == "when":
        sim_how += (f"; {q.event.name} filled on average in turn {1 + float(np.mean(x)) * (q.rules.n_boxes - 1):.2f} "
                    f"of {q.rules.n_boxes}")
    return Answer(question=q, exact=exact, estimate=est, ci=ci, n=len(x), unit=unit, method=method,
                  simulated_method=sim_how, note=note)


def _exact_named_zeros(q, events):
    """The mean number of the named boxes scored 0: the sum of each one's P(points = 0)."""
    if q.ask != "mean":
        raise ValueError(f"the exact distributions carry each box alone, so only the mean of {q.event.text!r}")
    names = q.event.name.split(",")
    return (math.fsum(float(events.pmf("box", b)[0]) for b in names),
            f"the exact mean number of boxes among {', '.join(names)} scored 0 (the sum of each box's exact "
            "P(0 points))")


def _answer_extreme(q, progress=None) -> Answer:
    """The best or worst total a card can reach (every decision and every die chosen)."""
    from ..exact.extremes import extreme_score

    res = extreme_score(q.rules, kind=q.ask, constraint=q.constraint, progress=progress)
    if res.score is None:
        raise ValueError(f"no card of {q.rules.key} meets the constraint {q.constraint}")
    return Answer(question=q, exact=int(res.score), unit="points",
                  method=f"backward induction in the {q.ask} semiring (dice chosen too)",
                  note=q.constraint or "no restriction")


def answer_table(q, *, games: int = 20_000, seed=None, cache: dict | None = None, progress=None) -> Answer:
    """Answer a table question (win or tie of seat 1): exact when every player's decisions
    depend on their own card alone, and ``games`` simulated tables."""
    cache = {} if cache is None else cache
    started = distributions_beside([q], cache)       # the players' distributions side by side
    try:
        return _answer_table(q, games, seed, cache, progress)
    finally:
        for beside in started:
            beside.stop()
            del cache[("beside", beside.rules.key)]


def _answer_table(q, games, seed, cache, progress) -> Answer:
    from ..exact.winodds import win_odds
    from ..multiplayer import simulate_table

    exact, note = None, ""
    names = q.players
    try:
        if "play-to-win" in names:
            raise ValueError("play-to-win looks at the other players' cards, so its odds have no exact form")
        pmfs = [_distribution(q.rules, p, cache, progress) for p in dict.fromkeys(names)]
        by = dict(zip(dict.fromkeys(names), pmfs))
        odds = win_odds([by[p] for p in names], names=[f"{p} (seat {i + 1})" for i, p in enumerate(names)])
        exact = float(odds.p_win[0] if q.event.kind == "win" else odds.p_tie[0])
        method = (f"exact: the {len(names)} players' exact score distributions (independent: no player looks at "
                  "another's card) combined into P(seat 1 " + ("wins alone)" if q.event.kind == "win"
                                                               else "ties for first)"))
    except ValueError as exc:
        method = f"simulation of {games:,} tables"
        note = f"simulated only: {exc}"
    extra = {}
    if "play-to-win" in names:
        # the exact value that stands in for it: optimal in each play-to-win seat (no exact
        # form exists for a player who watches the others; this is what it is measured against)
        try:
            ref = tuple("optimal" if p == "play-to-win" else p for p in names)
            dists = {p: _distribution(q.rules, p, cache, progress) for p in dict.fromkeys(ref)}
            odds = win_odds([dists[p] for p in ref], names=[f"{p} (seat {i + 1})" for i, p in enumerate(ref)])
            extra["optimal_in_its_seat_exact"] = float(odds.p_win[0] if q.event.kind == "win" else odds.p_tie[0])
            note += ("; 'optimal in its seat exact' is the exact chance with optimal in each play-to-win seat "
                     "(the other players' exact distributions combined)")
        except ValueError:
            pass
    key = ("table", q.rules.key, names, games, seed)
    if key not in cache:
        from ..strategies.play_to_win import PlayToWin

        seats = [PlayToWin(progress=progress if progress is not None else False) if p == "play-to-win" else p
                 for p in names]
        cache[key] = simulate_table(q.rules, seats, games, seed=seed, progress=progress)
    res = cache[key]
    win, tie = res.outcomes()
    x = (win if q.event.kind == "win" else tie)[:, 0]
    est, ci = sample_statistic("chance", x)
    return Answer(question=q, exact=exact, estimate=est, ci=ci, n=res.n_games, unit="share", method=method,
                  simulated_method=f"{res.n_games:,} simulated tables, players taking turns (seed {res.seed})",
                  note=note, extra=extra)
