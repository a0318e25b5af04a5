"""A claims file's claims that share nothing with the others (on dice alone, the best or
worst card) are answered in a forked process beside the ones that wait for a solve or a
distribution (issue 21, the first run of `check` and `verify`): the same answers, in the
file's order, whichever process answers each, and a failure beside is handled here."""

from __future__ import annotations

import os
import time

import pytest

import yahtzee_sim.questions as questions
from yahtzee_sim.forkpool import can_fork
from yahtzee_sim.questions import claims as claims_mod
from yahtzee_sim.questions.claims import answered_alone, check_claims, load_claims_text
from yahtzee_sim.questions.spec import parse_question

pytestmark = pytest.mark.skipif(not can_fork(), reason="needs fork (a non-daemon process on POSIX)")

# dice claims, a best card and a game claim (a strategy's exact distribution and games)
# on a small game: both kinds of claims in one file
TEXT = """
title = "Mixed"
rules = "yacht"
options = ["fill-in-order"]

[[claim]]
id = "roll"
ask = "chance"
event = "five_of_a_kind"
scope = "roll"
claimed = "1 in 1296"

[[claim]]
id = "game"
ask = "mean"
event = "score"
scope = "game"
play = "greedy"
claimed = 100
precision = 1

[[claim]]
id = "turn"
ask = "chance"
event = "large_straight"
scope = "turn"
claimed = "26%"
precision = "1%"

[[claim]]
id = "best"
ask = "max"
event = "score"
scope = "game"
play = "any"
claimed = 297
precision = 0

[[claim]]
id = "position"
ask = "chance"
event = "large_straight"
scope = "position"
keep = "2345"
rolls_left = 2
claimed = "5/9"
"""

ALONE = ["roll", "turn", "best", "position"]
GAMES, THROWS = 2000, 4000


def _json(res) -> dict:
    out = res.to_json()
    for c in out["claims"]:
        c.pop("seconds", None)
    return out


def _all_here(monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(claims_mod, "answered_alone", lambda q: False)
        return _json(check_claims(load_claims_text(TEXT), games=GAMES, throws=THROWS))


def _answering_pids(monkeypatch, here_sleep=0.0, beside_sleep=0.0):
    """Wrap the answers to say which process answered each claim (in its note); this
    process's answers take ``here_sleep`` seconds longer, the other's ``beside_sleep``."""
    real = questions.answer
    parent = os.getpid()

    def answer(q, **kw):
        time.sleep(here_sleep if os.getpid() == parent else beside_sleep)
        a = real(q, **kw)
        a.note = f"pid {os.getpid()}"
        return a
    monkeypatch.setattr(questions, "answer", answer)


def test_which_claims_share_nothing():
    q = parse_question
    assert answered_alone(q({"ask": "chance", "event": "large_straight", "scope": "turn"}))
    assert answered_alone(q({"ask": "max", "event": "score", "scope": "game", "play": "any"}))
    assert answered_alone(q({"ask": "chance", "event": "large_straight", "scope": "position", "keep": "2345",
                             "rolls_left": 2}))
    assert answered_alone(q({"ask": "chance", "event": "five_of_a_kind", "scope": "turn", "play": "keep-largest"}))
    # a strategy's distribution or games, optimal's values, a table: shared, answered here
    assert not answered_alone(q({"ask": "chance", "event": "upper_bonus", "scope": "game"}))
    assert not answered_alone(q({"ask": "chance", "event": "large_straight", "scope": "turn", "play": "greedy"}))
    assert not answered_alone(q({"ask": "mean", "event": "points_to_come", "scope": "position", "dice": "33355",
                                 "rolls_left": 2, "play": "optimal"}))
    assert not answered_alone(q({"ask": "chance", "event": "win", "scope": "table", "players": 2}))


def test_answers_are_the_same_and_in_the_file_s_order(monkeypatch):
    expected = _all_here(monkeypatch)
    got = _json(check_claims(load_claims_text(TEXT), games=GAMES, throws=THROWS))
    assert [c["id"] for c in got["claims"]] == ["roll", "game", "turn", "best", "position"]
    assert got == expected


def test_while_this_process_waits_the_others_are_answered_beside(monkeypatch):
    _answering_pids(monkeypatch, here_sleep=4.0)
    res = check_claims(load_claims_text(TEXT), games=GAMES, throws=THROWS)
    pid = {c.id: a.note for c, a in zip(res.file.claims, res.answers)}
    assert pid["game"] == f"pid {os.getpid()}"
    assert {pid[i] for i in ALONE} == {pid["roll"]} != {pid["game"]}   # one other process, all of them


def test_once_its_own_are_done_this_process_takes_the_others_from_the_last(monkeypatch):
    _answering_pids(monkeypatch, beside_sleep=2.0)
    res = check_claims(load_claims_text(TEXT), games=GAMES, throws=THROWS)
    here = f"pid {os.getpid()}"
    mine = [a.note == here for c, a in zip(res.file.claims, res.answers) if c.id in ALONE]
    assert mine[-1] and not mine[0]                  # each end taken by one process
    assert mine == sorted(mine)                      # the child's a prefix, this process's the rest


def test_a_claim_beside_that_fails_on_bad_input_is_raised_as_itself(monkeypatch):
    real = questions.answer

    def answer(q, **kw):
        if q.scope == "turn":
            raise ValueError("no such turn")
        return real(q, **kw)
    monkeypatch.setattr(questions, "answer", answer)
    with pytest.raises(ValueError, match="^no such turn$"):
        check_claims(load_claims_text(TEXT), games=GAMES, throws=THROWS)


def test_a_process_beside_that_dies_leaves_its_claims_to_this_one(monkeypatch):
    expected = _all_here(monkeypatch)
    parent = os.getpid()
    real = questions.answer

    def answer(q, **kw):
        if os.getpid() != parent:
            os._exit(3)
        return real(q, **kw)
    monkeypatch.setattr(questions, "answer", answer)
    assert _json(check_claims(load_claims_text(TEXT), games=GAMES, throws=THROWS)) == expected


# -- a strategy's card events beside its score distribution ------------------------------------

def _optimal_questions():
    return [parse_question({"ask": "mean", "event": "score", "scope": "game", "play": "optimal", "rules": "generala"}),
            parse_question({"ask": "chance", "event": "zeros >= 1", "scope": "game", "play": "optimal",
                            "rules": "generala"})]


def _answered(cache_dir, monkeypatch):
    """Both questions answered as a claims file does: (answers, the cache they shared)."""
    from yahtzee_sim.questions.gamescope import distributions_beside

    monkeypatch.setenv("YAHTZEE_SIM_CACHE", str(cache_dir))
    questions_ = _optimal_questions()
    cache: dict = {}
    started = distributions_beside(questions_, cache)
    try:
        return [questions.answer(q, games=GAMES, seed=1, cache=cache) for q in questions_], cache
    finally:
        for b in started:
            b.stop()


def _same_events(a, b) -> None:
    import numpy as np

    np.testing.assert_array_equal(a.zeros_pmf, b.zeros_pmf)
    np.testing.assert_array_equal(a.five_pmf, b.five_pmf)
    for name in a.box_pmf:
        np.testing.assert_array_equal(a.box_pmf[name], b.box_pmf[name])


def test_card_events_are_computed_beside_the_score_pass_and_are_the_same(tmp_path, monkeypatch):
    from yahtzee_sim.exact.distribution import distribution
    from yahtzee_sim.exact.events import event_distribution

    answers, cache = _answered(tmp_path, monkeypatch)
    beside = cache[("events beside", "generala", "optimal")]
    assert beside._child.pid not in (None, os.getpid())            # a forked process computed them
    _same_events(cache[("events", "generala", "optimal")], event_distribution("generala", "optimal"))
    assert answers[0].exact == distribution("generala", "optimal").mean
    assert len(list(tmp_path.rglob("*events-optimal*"))) == 1        # into the disk cache, read here
    # the second time both are on disk: nothing to compute, nothing forked
    _, again = _answered(tmp_path, monkeypatch)
    assert ("events beside", "generala", "optimal") not in again


def test_card_events_beside_that_die_are_computed_here(tmp_path, monkeypatch):
    from yahtzee_sim.exact import events as events_mod

    parent = os.getpid()
    real = events_mod.event_distribution

    def event_distribution(*a, **kw):
        if os.getpid() != parent:
            os._exit(3)
        return real(*a, **kw)
    monkeypatch.setattr(events_mod, "event_distribution", event_distribution)
    answers, cache = _answered(tmp_path, monkeypatch)
    assert ("events beside", "generala", "optimal") in cache
    _same_events(cache[("events", "generala", "optimal")], real("generala", "optimal"))
