"""Each game's summary lists the events that game has, each simulated number with its
95% interval; the counts are checked against the per-game table (an independent tally
of the finished cards) and the intervals against scipy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from yahtzee_sim import simulate
from yahtzee_sim.cli import main
from yahtzee_sim.rules import get_rules


def wilson(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(method="wilson")
    return ci.low, ci.high


def t_ci(values) -> tuple[float, float]:
    values = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / np.sqrt(len(values))
    return values.mean() - half, values.mean() + half


@pytest.fixture(scope="module")
def generala():
    return simulate("generala", "greedy", 3000, seed=5)


def test_every_rate_and_mean_count_carries_its_interval(generala):
    s = generala.summary()
    frame = generala.to_frame()
    rates = [k for k in s if k.endswith("_rate") and not k.endswith(("_low", "_high"))]
    assert rates, "no rates"
    for key in rates:
        k = generala.count(key[:-5])
        assert (s[f"{key}_ci95_low"], s[f"{key}_ci95_high"]) == pytest.approx(wilson(k, 3000)), key
    assert (s["five_count_mean_ci95_low"], s["five_count_mean_ci95_high"]) == pytest.approx(t_ci(frame["five_count"]))
    lo = generala.summary(level=0.9)
    assert "five_rolled_rate_ci_low" in lo and lo["five_rolled_rate_ci_low"] > s["five_rolled_rate_ci95_low"]
    assert s.to_frame().loc["five_rolled_rate_ci95_low", "kind"] == "rate interval"


def test_generala_lists_its_served_combinations_and_no_upper_bonus(generala, capsys):
    s, frame = generala.summary(), generala.to_frame()
    assert "upper_bonus_rate" not in s                          # Generala has no upper bonus
    # 50 in Generala counts the plain Generala only; a served one (60) is its own line
    assert s["five_box_full_rate"] == pytest.approx((frame["generala"] == 50).mean())
    assert s["served_generala_rate"] == pytest.approx((frame["generala"] == 60).mean())
    for box, served in (("escalera", 25), ("full", 35), ("poker", 45)):   # docs/rules.md: 5 more when served
        assert s[f"served_{box}_rate"] == pytest.approx((frame[box] == served).mean()), box
    assert s["generala_doble_rate"] == pytest.approx((frame["generala_doble"] == 100).mean())
    assert 0 < s["served_escalera_rate"] and "served_five_rate" in s
    assert main(["simulate", "--rules", "generala", "--strategy", "greedy", "--games", "3000", "--seed", "5"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "upper bonus" not in out
    assert f"50 in Generala {s['five_box_full_rate']:.4f}" in out
    assert f"Generala served at least once {s['served_five_rate']:.4f}" in out   # in the text, not only JSON
    assert f"Escalera served (25) {s['served_escalera_rate']:.4f}" in out


def test_balut_yamb_and_maxi_yatzy_report_their_own_events(capsys):
    balut = simulate("balut", "greedy", 600, seed=2)
    s, frame = balut.summary(), balut.to_frame()
    assert "upper_bonus_rate" not in s and "five_box_full_rate" not in s
    assert (s["points_mean_ci95_low"], s["points_mean_ci95_high"]) == pytest.approx(t_ci(frame["points"]))

    yamb = simulate("yamb", "greedy", 400, seed=2)
    s, frame = yamb.summary(), yamb.to_frame()
    assert "upper_bonus_rate" not in s and "five_box_full_rate" not in s
    rules = get_rules("yamb")
    total = np.zeros(len(frame))
    for col in rules.columns:        # docs/rules.md's column score, written out row by row
        c = {row.split("_", 1)[1]: frame[row].to_numpy() for row in col.boxes}
        upper = sum(c[r] for r in ("ones", "twos", "threes", "fours", "fives", "sixes"))
        score = (upper + np.where(upper >= 60, 30, 0) + (c["max"] - c["min"]) * c["ones"]
                 + sum(c[r] for r in ("kenta", "triling", "full", "poker", "yamb")))
        total += score
        assert s[f"{col.name}_column_mean"] == pytest.approx(score.mean()), col.name
        assert (s[f"{col.name}_column_mean_ci95_low"], s[f"{col.name}_column_mean_ci95_high"]) == pytest.approx(
            t_ci(score))
        assert s[f"{col.name}_column_bonus_rate"] == pytest.approx((upper >= 60).mean())
    assert total == pytest.approx(frame["total"].to_numpy())

    maxi = simulate("maxi-yatzy", "greedy", 600, seed=2)
    s = maxi.summary()
    assert s["five_box_full_rate"] == pytest.approx((maxi.to_frame()["maxi_yatzy"] == 100).mean())   # not 50
    used, left = maxi.games["bank_used"], maxi.games["bank_left"]
    assert s["saved_throws_used_mean"] == pytest.approx(used.mean())
    assert s["saved_throws_left_mean"] == pytest.approx(left.mean())
    assert ((used + left) <= 2 * 20).all() and s["saved_throws_used_mean"] > 0   # at most 2 saved a turn
    assert main(["simulate", "--rules", "maxi-yatzy", "--strategy", "greedy", "--games", "600", "--seed", "2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "100 in Maxi Yatzy" in out and "six of a kind rolled at least once" in out and "saved throws spent" in out


def test_kismet_reports_each_bonus_tier():
    res = simulate("kismet", "greedy", 800, seed=3)
    s, upper = res.summary(), res.to_frame()["upper_total"]
    for threshold, key in ((63, "upper_bonus_rate"), (71, "upper_bonus_55_rate"), (78, "upper_bonus_75_rate")):
        assert s[key] == pytest.approx((upper >= threshold).mean()), key


def test_score_on_a_fresh_generala_card_pays_no_doble(capsys):
    assert main(["score", "--rules", "generala", "--dice", "44444"]) == 0
    out = capsys.readouterr().out
    doble = next(line for line in out.splitlines() if line.strip().startswith("Generala doble"))
    assert doble.split()[-1] == "0"               # docs/rules.md: 0 until the Generala box holds one
    assert "pays 100 for these dice once the Generala box holds a score" in " ".join(out.split())
    assert "Póker 45, Generala 60" in out         # served: 5 more, Generala 60
    assert main(["score", "--rules", "generala", "--all", "--json"]) == 0
    import json

    rolls = json.loads(capsys.readouterr().out)["rolls"]
    assert max(r["generala_doble"] for r in rolls) == 0


def test_an_aggregate_with_events_merges_and_survives_a_checkpoint(tmp_path):
    a = simulate("yamb", "greedy", 300, seed=1, keep_games=False).aggregate
    b = simulate("yamb", "greedy", 300, seed=1, keep_games=False).aggregate
    both = a.merge(b)
    assert (both.column_hist == 2 * a.column_hist).all() and (both.column_bonus_games == 2 * a.column_bonus_games).all()
    both.check(get_rules("yamb"), 600)
    both.column_hist[0, 0] += 1
    with pytest.raises(ValueError, match="column_hist"):
        both.check(get_rules("yamb"), 600)
    path = tmp_path / "run.json"
    first = simulate("maxi-yatzy", "greedy", 4096, seed=3, checkpoint=path, keep_games=False)
    again = simulate("maxi-yatzy", "greedy", 4096, seed=3, checkpoint=path, keep_games=False)
    assert (first.aggregate.bank_used_hist == again.aggregate.bank_used_hist).all()
