"""Play-to-win at a table, end to end: the shell, a claims file and Python; simulated (it
watches the other players, so no exact form exists) beside the exact value of optimal in
its seat, both cross-checked."""

from __future__ import annotations

import json

import numpy as np
import pytest

import yahtzee_sim as ys
from yahtzee_sim.cli import main

GAMES = 600


def _iid_win(pmf) -> float:
    """P(seat 1 wins alone) between two players with the same score distribution: by symmetry
    half of everything but a tie, and a tie is the sum of the squared chances."""
    p = np.asarray(pmf, dtype=np.float64)
    return (1 - float(p @ p)) / 2


@pytest.mark.slow
def test_play_to_win_at_a_table_of_two(capsys, tmp_path):
    from yahtzee_sim.exact.distribution import distribution

    # Yacht filled in order: play-to-win's risk and target tables take seconds there (on
    # yahtzee, minutes each with an empty cache: too long for a test); the machinery is the same
    assert main(["ask", "chance", "win", "--scope", "table", "--players", "2", "--strategy", "play-to-win",
                 "--rules", "yacht", "--option", "fill-in-order", "--games", str(GAMES), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["exact"] is None and "simulated only" in out["note"] and "looks at the other players" in out["note"]
    # the exact stand-in: optimal in both seats, against the plain symmetric formula
    reference = _iid_win(distribution("yacht", "optimal", options=["fill-in-order"]).pmf)
    assert out["optimal_in_its_seat_exact"] == pytest.approx(reference, abs=1e-9)
    assert out["ci95_low"] <= out["estimate"] <= out["ci95_high"] and out["n_simulated"] == GAMES
    # two play-to-win players: seat 1 wins about as often as optimal would (within its interval
    # widened by 3 points: what playing to win changes against one player is about a point)
    half = (out["ci95_high"] - out["ci95_low"]) / 2
    assert abs(out["estimate"] - reference) < 2 * half + 0.03

    # the same question in a claims file
    f = tmp_path / "table.toml"
    f.write_text('[[claim]]\nid = "ptw"\nrules = "yacht"\noptions = ["fill-in-order"]\n'
                 'ask = "chance"\nevent = "win"\nscope = "table"\nplayers = 2\n'
                 'play = "play-to-win"\nclaimed = "48%"\nprecision = "1%"\n', encoding="utf-8")
    res = ys.check(f, games=GAMES)
    a = res.answers[0]
    assert a.exact is None and a.estimate == pytest.approx(out["estimate"]) and a.verdict is not None


@pytest.mark.slow
def test_the_table_simulation_sits_on_the_exact_value_where_one_exists():
    """The same simulated tables with optimal in seat 1 (the play-to-win question's machinery
    with a player the exact engine follows): inside the exact value's interval."""
    a = ys.ask("chance", "win", scope="table", players=["optimal", "optimal"], games=4000)
    from yahtzee_sim.exact.distribution import distribution

    exact = _iid_win(distribution("yahtzee", "optimal").pmf)
    assert a.exact == pytest.approx(exact, abs=1e-9)
    lo, hi = a.ci
    assert lo - (hi - lo) / 2 <= exact <= hi + (hi - lo) / 2


def test_play_to_win_question_parses_everywhere():
    from yahtzee_sim.questions import parse_question

    q = parse_question({"ask": "chance", "event": "win", "scope": "table", "players": 2, "play": "play-to-win"})
    assert q.players == ("play-to-win", "play-to-win")
    with pytest.raises(ValueError, match="needs a quantity"):
        parse_question({"ask": "mean", "event": "win", "scope": "table", "players": 2, "play": "play-to-win"})
