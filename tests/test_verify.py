"""The claims catalog, the verdict rules and every evaluator at a small size."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.verify import EVALUATORS, Context, load_claims, verify_claims
from yahtzee_sim.verify.verdict import VERDICTS, verdict_for_criterion, verdict_for_value


# -- the catalog -------------------------------------------------------------------------

def test_catalog_covers_what_the_issue_lists():
    ids = {c["id"] for c in load_claims()}
    for needed in ["s003-first-roll-yahtzee", "s003-first-roll-four-or-better", "s003-first-roll-full-house",
                   "s003-first-roll-large-straight", "s003-first-roll-small-or-better",
                   "s003-first-roll-three-or-better", "s003-turn-yahtzee-keep-largest", "s001-turn-yacht",
                   "s003-turns-per-yahtzee", "s003-yahtzee-in-a-game", "s003-optimal-mean", "s000-optimal-mean",
                   "s003-over-200", "s003-63-three-each", "s000-max", "s000-max-no-joker-points",
                   "s000-max-natural", "s000-max-no-bonus", "s000-max-no-five", "s000-min", "s000-min-no-five",
                   "s000-min-no-zero", "s003-tip-upper-bonus", "s003-tip-chance-late", "s003-tip-zeros",
                   "s003-tip-middle-numbers", "s003-tip-dont-chase", "s001-tip-three-each", "s001-tip-open-ended",
                   "s001-tip-zeros-and-choice", "s001-tip-choice-late"]:
        assert needed in ids, needed
    for c in load_claims():
        assert c["quote"].strip() and c["english"].strip()
        assert c["seed"][:3] in {"000", "001", "003"}


def test_quotes_are_verbatim_from_the_seeds():
    from pathlib import Path

    # shared/seeds beside the clone (or beside a folder of worktrees holding it)
    seeds = next((p / "shared" / "seeds" for p in Path(__file__).resolve().parents[1:4]
                  if (p / "shared" / "seeds").is_dir()), None)
    if seeds is None:
        pytest.skip("shared/seeds not beside the clone")
    for c in load_claims():
        text = (seeds / c["seed"]).read_text(encoding="utf-8")
        for part in c["quote"].split(" | "):
            assert part.replace("\u00a0", " ").strip() in text.replace("\u00a0", " "), c["id"]


@pytest.mark.parametrize("text, message", [
    ('[[claim]]\nid = "a"\n', "missing"),
    ('[[claim]]\nid="a"\nseed="003"\nquote="q"\nenglish="e"\nevaluator="nope"\nparams={}\nclaimed=1\n',
     "unknown evaluator 'nope'"),
    ('[[claim]]\nid="a"\nseed="003"\nquote="q"\nenglish="e"\nevaluator="par_surplus"\nparams={}\n',
     "exactly one of"),
])
def test_malformed_catalog_is_rejected(text, message):
    with pytest.raises(ValueError, match=message):
        load_claims(text)


# -- verdicts ---------------------------------------------------------------------------

@pytest.mark.parametrize("true, claimed, precision, expected", [
    (Fraction(6, 7776), Fraction(6, 7776), 0, "confirmed"),
    (Fraction(6, 7776), Fraction(7, 7776), 0, "wrong"),
    (0.0460, 0.046, 0.001, "confirmed"),
    (0.0466, 0.046, 0.001, "confirmed with rounding"),
    (0.0485, 0.046, 0.001, "imprecise"),
    (0.10, 0.046, 0.001, "wrong"),
    (254.5896, 255, 1, "confirmed"),
    (254.5896, 254, 1, "confirmed with rounding"),
])
def test_verdict_for_value(true, claimed, precision, expected):
    assert verdict_for_value(true, claimed, precision) == expected
    assert expected in VERDICTS


def test_verdict_uses_the_interval_for_simulated_values():
    assert verdict_for_value(0.0470, 0.046, 0.001, ci=(0.0455, 0.0485)) == "confirmed"
    assert verdict_for_criterion(0.5, {"op": "between", "low": 0.2, "high": 0.8}, ci=(0.45, 0.55)) == "confirmed"
    assert verdict_for_criterion(0.21, {"op": "at_least", "low": 0.2}, ci=(0.19, 0.23)) == "imprecise"
    assert verdict_for_criterion(0.1, {"op": "at_least", "low": 0.2}, ci=(0.09, 0.11)) == "wrong"
    with pytest.raises(ValueError, match="unknown criterion op"):
        verdict_for_criterion(1, {"op": "??"})


# -- evaluators ---------------------------------------------------------------------------

SMALL = Context(games=3000, turns=50_000, seed=11)


def test_dice_claims_exact_and_simulated_agree():
    frame = verify_claims(SMALL, only=["s003-first-roll", "s003-turn", "s003-turns-per", "s001-turn"])
    assert len(frame) == 10  # 7 first-roll rows, 2 per-turn chances, turns per Yahtzee
    # Seed 003's first-roll table and both per-turn claims hold (published: 6/7776 etc.).
    assert set(frame["verdict"]) <= {"confirmed", "confirmed with rounding"}
    m = EVALUATORS["turn_probability"]({"pattern": "five_of_a_kind", "policy": "keep-largest"}, SMALL)
    lo, hi = m.ci
    # The 50,000 simulated turns' 99.9% band easily contains the exact value when the CI is 95%:
    # allow a small widening so the test is not flaky at the 5% level.
    width = hi - lo
    assert lo - width <= float(m.exact) <= hi + width


def test_exact_arithmetic_claims():
    assert EVALUATORS["three_of_each_upper"]({"rules": "yacht"}, SMALL).exact == 63
    assert EVALUATORS["par_surplus"]({"face": 6, "count": 4}, SMALL).exact == 6
    assert EVALUATORS["faces_in_every_straight"]({"faces": [3, 4]}, SMALL).exact == 1
    assert EVALUATORS["faces_in_every_straight"]({"faces": [1]}, SMALL).exact == Fraction(2, 5)
    ratio = EVALUATORS["open_ended_straight"]({"rolls_left": 1}, SMALL).exact
    assert ratio == 2  # one die: 2 faces of 6 complete 2-3-4-5, 1 face completes 1-2-3-4
    assert EVALUATORS["five_box_margin"]({"rules": "yahtzee"}, SMALL).exact == 10


def test_extreme_claims_of_seed_000():
    frame = verify_claims(SMALL, only=["s000-max", "s000-min", "s003-max"])
    assert len(frame) == 11
    # Seed 000's "351 without any Yahtzee bonus" and "184 with no zero" do not hold as stated:
    # five of a kind may be scored elsewhere while the Yahtzee box is still open (no bonus is
    # paid then), giving 375 and 181. Under the seed's own recipe (the only five of a kind is
    # the one in the Yahtzee box) they hold exactly.
    wrong = {"s000-max-no-bonus": 375, "s000-min-no-zero": 181}
    for cid, found in wrong.items():
        assert frame.loc[cid, "verdict"] == "wrong" and frame.loc[cid, "exact"] == found
    rest = frame.drop(index=list(wrong))
    assert (rest["verdict"] == "confirmed").all(), rest[["exact", "verdict"]]


@pytest.mark.slow
def test_every_claim_evaluates_and_gets_a_verdict():
    frame = verify_claims(Context(games=2000, turns=20_000, seed=3))
    assert len(frame) == len(load_claims())
    assert frame["verdict"].isin(VERDICTS).all()
    optimal = frame.loc["s000-optimal-mean"]
    assert math.isclose(float(optimal["exact"]), 254.59, abs_tol=0.05) or float(optimal["exact"]) > 250


def test_verify_cli_json_and_bad_input(capsys):
    assert main(["verify", "--only", "s003-63", "--only", "s001-63", "--json", "--turns", "1000"]) == 0
    out = capsys.readouterr().out
    assert '"verdict": "confirmed"' in out
    assert main(["verify", "--games", "0"]) == 2
    assert "positive integer" in capsys.readouterr().err


def test_verify_gives_the_same_answers_on_every_backend(capsys):
    import json

    outputs = []
    for backend in (["--backend", "serial"], ["--backend", "processes", "--jobs", "2"]):
        assert main(["verify", "--only", "s003-turn", "--only", "s003-yahtzee-in", "--games", "2048",
                     "--turns", "4096", "--seed", "5", "--json", *backend]) == 0
        claims = json.loads(capsys.readouterr().out)["claims"]
        outputs.append([{k: v for k, v in c.items() if k != "seconds"} for c in claims])
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("only, message", [
    ("zzz", "no claim id starts with 'zzz'; the ids are: s003-first-roll-yahtzee-fraction"),
    ("", "must not be empty"),
])
def test_verify_only_names_the_ids_that_exist(capsys, only, message):
    assert main(["verify", "--only", only]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    with pytest.raises(ValueError, match="no claim id starts with"):
        verify_claims(SMALL, only=["zzz"])


def test_verify_out_with_only_writes_just_those_claims(tmp_path, capsys):
    out = tmp_path / "claims"
    assert main(["verify", "--only", "s003-63", "--turns", "1000", "--out", str(out)]) == 0
    assert "s003-63-three-each" in (out / "README.md").read_text(encoding="utf-8")
    assert "s000-max" not in (out / "README.md").read_text(encoding="utf-8")
    assert "--only s003-63" in (out / "README.md").read_text(encoding="utf-8")


def test_verify_json_gives_numbers_as_numbers(capsys):
    import json

    assert main(["verify", "--only", "s003-first-roll-yahtzee", "--turns", "2000", "--json"]) == 0
    claims = {c["id"]: c for c in json.loads(capsys.readouterr().out)["claims"]}
    exact = claims["s003-first-roll-yahtzee"]
    # 6 of the 6**5 ordered throws are five of a kind; the fraction carries its value as every exact one does
    assert exact["exact"] == pytest.approx(6 / 6**5) and exact["exact_fraction"] == {
        "numerator": 1, "denominator": 1296, "value": pytest.approx(6 / 6**5)}
    assert isinstance(exact["estimate"], float) and exact["ci95_low"] <= exact["estimate"] <= exact["ci95_high"]
    assert exact["claimed"] == pytest.approx(0.0008) and exact["unit"] == "share"


def test_verify_refuses_sizes_no_run_can_hold(capsys):
    assert main(["verify", "--games", "1e12"]) == 2
    assert "is too many" in capsys.readouterr().err
