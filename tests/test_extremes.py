"""Best and worst score cards (issue 3, section 5) against seed 000's claims.

Source of every claimed number below: seed 000 (shared/seeds/000_*.txt), the
paragraphs after the joker rules:

  「最高得点は 1,575 点で、13 回のヤッツィーを出し、それぞれ 100 点の 12 回のヤッツィー
  ボーナスを獲得し…1,575 点のスコアは、フル ハウス、スモール ストレート、ラージ
  ストレートのカテゴリで「ジョーカー」ルールを使用する必要があります。…「ジョーカー」
  ルールを使用せずに獲得できる最高得点は1,480点です。すべての適切な組み合わせを自然に
  揃えて獲得できる最高得点は1,275点で、これはヤッツィーを10回、フルハウスを1回、
  スモールストレートを1回、ラージストレートを1回出し、それぞれ100点のヤッツィー
  ボーナスを9回獲得した場合です。」
  「ヤッツィーボーナスなしで獲得できる最高得点は351点で、これはヤッツィーとしてファイブ
  オブアカインド（50点）、アッパーセクションで84点（各カテゴリーでフォーオブアカインド）、
  スリーオブアカインド、フォーオブアカインド、チャンスでそれぞれ29点…ファイブオブアカ
  インドなしで獲得できる最高得点は301点です。」
  「最低得点は5点で、これはチャンスで5つの1（5）を出し、他のすべてのカテゴリーで0点を
  獲得した場合に達成されます。5つ揃わない場合の最低得点は6点です。」
  「どのカテゴリーでも0点を取らずに達成できる最低スコアは184点で、これはフルハウス…
  ヤッツィー（50点）、アッパーセクションで21点（各カテゴリーで1つずつ）、スリーオブ
  アカード、フォーオブアカード、チャンスでそれぞれ6点…」

Two claims hold only under the seed's implicit assumption that a five of a kind is
scored nowhere but in the Yahtzee box (351 and 184); taken literally, a five of a
kind scored elsewhere while the Yahtzee box is still open earns no bonus and is not
a zero, and the project finds more (max) and less (min). Those tests check both.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.exact.extremes import (
    CONSTRAINTS, SOURCE_CLAIMS, extreme_score, parse_constraints, source_claims_table,
)
from yahtzee_sim.rules import get_rules
from yahtzee_sim.state import GameState

# seed 000's claims for official Yahtzee: (kind, constraint) -> claimed score
SEED_000 = {
    ("max", ()): 1575,
    ("max", ("no-joker-points",)): 1480,
    ("max", ("natural",)): 1275,
    ("max", ("no-five-bonus",)): 351,
    ("max", ("no-five-of-a-kind",)): 301,
    ("min", ()): 5,
    ("min", ("no-five-of-a-kind",)): 6,
    ("min", ("no-zero",)): 184,
}
# the two claims whose seed recipe assumes five of a kind only in the Yahtzee box
SEED_READING = {
    ("max", ("no-five-bonus",)): ("max", ("five-only-in-five-box",)),
    ("min", ("no-zero",)): ("min", ("five-only-in-five-box", "no-zero")),
}


def replay(rules, res):
    """Replay ``res.card`` through the rule engine; check legality, points, bonuses,
    the constraints on every move and the totals. Returns per-turn facts."""
    card = res.card
    assert len(card) == rules.n_boxes
    assert sorted(card["box"]) == sorted(rules.box_names)          # every box exactly once
    assert card["turn"].tolist() == list(range(1, rules.n_boxes + 1))
    state = GameState.new(rules, 1)
    running = 0
    facts = []
    for row in card.itertuples():
        roll = rules.dice.roll_index_of([int(c) for c in row.dice])
        box = rules.box_index(row.box)
        legal, scores, bonus = rules.turn_options(state.filled, state.five_box_full, np.array([roll]))
        assert legal[0, box], f"turn {row.turn}: {row.box} is not legal for {row.dice}"
        is_five = rules.five_face[roll] > 0
        expected = int(scores[0, box])
        joker_points = expected != int(rules.score_table[roll, box])
        if "no-joker-points" in res.constraints and is_five and rules.joker_points[box] >= 0:
            expected = int(rules.score_table[roll, box])           # natural points only
            joker_points = False
        assert row.points == expected
        assert row.five_bonus == int(bonus[0])
        s = np.zeros((1, rules.n_boxes), np.int16)
        s[0, box] = expected
        assert row.upper_bonus == int(rules.upper_bonus_gain(state.upper_total, s)[0, box])
        # the constraints, move by move
        if "no-five-of-a-kind" in res.constraints:
            assert not is_five
        if "no-five-bonus" in res.constraints:
            assert row.five_bonus == 0
        if "no-zero" in res.constraints:
            assert row.points > 0
        if "natural" in res.constraints:
            assert not (is_five and rules.joker_points[box] >= 0)
        if "five-only-in-five-box" in res.constraints:
            assert not is_five or box == rules.five_box_index
        running += row.points + row.upper_bonus + row.five_bonus
        assert row.total == running
        facts.append({"five": bool(is_five), "joker_points": joker_points, "box": row.box})
        # advance the card exactly as the engine does
        state.filled[0, box] = True
        state.box_scores[0, box] = expected
        if rules.is_upper[box]:
            state.upper_total += expected
        state.five_bonus_count += int(bonus[0] > 0)
        if box == rules.five_box_index and expected == rules.five_box_points:
            state.five_box_full[0] = True
    assert state.filled.all()
    assert int(state.total(rules)[0]) == running == res.score
    return facts


@pytest.mark.parametrize("kind,cons", [k for k in SEED_000 if k not in SEED_READING])
def test_source_000_claims_hold(kind, cons):
    rules = get_rules("yahtzee")
    res = extreme_score(rules, kind=kind, constraint=cons)
    assert res.score == SEED_000[(kind, cons)]
    replay(rules, res)


@pytest.mark.parametrize("claim", list(SEED_READING))
def test_source_000_claims_hold_under_the_sources_reading(claim):
    kind, cons = SEED_READING[claim]
    res = extreme_score("yahtzee", kind=kind, constraint=cons)
    assert res.score == SEED_000[claim]
    replay(get_rules("yahtzee"), res)


def test_no_yahtzee_bonus_literally_allows_more_than_claimed():
    # Every box at its own natural maximum at once, upper bonus included, no bonus:
    # fill the Yahtzee box last, so the five of a kinds before it earn nothing.
    rules = get_rules("yahtzee")
    res = extreme_score(rules, kind="max", constraint="no-five-bonus")
    independent = int(rules.score_table.max(axis=0).sum()) + rules.upper_bonus
    assert res.score == independent > SEED_000[("max", ("no-five-bonus",))]
    replay(rules, res)
    assert res.card["five_bonus"].sum() == 0


def test_no_zero_minimum_literally_below_claimed():
    # Each box at its smallest positive natural score (five 1s count in Three and
    # Four of a kind and Chance while the Yahtzee box is still open); upper total 21.
    rules = get_rules("yahtzee")
    res = extreme_score(rules, kind="min", constraint="no-zero")
    table = rules.score_table.astype(float)
    independent = int(np.where(table > 0, table, np.inf).min(axis=0).sum())
    assert res.score == independent < SEED_000[("min", ("no-zero",))]
    replay(rules, res)


def test_attaining_cards_match_the_sources_recipes():
    rules = get_rules("yahtzee")
    best = extreme_score(rules)
    facts = replay(rules, best)
    assert sum(f["five"] for f in facts) == 13 and best.card["five_bonus"].gt(0).sum() == 12
    assert {f["box"] for f in facts if f["joker_points"]} == {"full_house", "small_straight", "large_straight"}
    natural = extreme_score(rules, constraint="natural")
    facts = replay(rules, natural)
    assert sum(f["five"] for f in facts) == 10 and natural.card["five_bonus"].gt(0).sum() == 9
    low = extreme_score(rules, kind="min").card.set_index("box")
    assert low.loc["chance", "dice"] == "11111" and low["points"].sum() == low.loc["chance", "points"]


@pytest.mark.parametrize("name", ["yahtzee-free-joker", "yahtzee-original-joker"])
def test_every_joker_policy_reaches_the_same_maximum(name):
    rules = get_rules(name)
    res = extreme_score(rules)
    assert res.score == extreme_score("yahtzee").score
    replay(rules, res)


@pytest.mark.parametrize("name,options", [("yatzy", ()), ("yacht", ()), ("yacht-classic", ()),
                                          ("yacht", ("fill-in-order", "three-dice"))])
def test_without_five_bonus_the_maximum_is_every_box_at_its_maximum(name, options):
    rules = get_rules(name, options)
    res = extreme_score(rules)
    assert res.score == int(rules.score_table.max(axis=0).sum()) + rules.upper_bonus
    replay(rules, res)


@pytest.mark.parametrize("name,options", [("yacht", ()), ("yacht-classic", ()),
                                          ("yacht", ("fill-in-order", "three-dice"))])
def test_no_zero_minimum_is_every_box_at_its_smallest_positive_score(name, options):
    rules = get_rules(name, options)
    low = extreme_score(rules, kind="min", constraint="no-zero")
    table = rules.score_table.astype(float)
    assert low.score == int(np.where(table > 0, table, np.inf).min(axis=0).sum())
    replay(rules, low)


def test_fill_in_order_card_follows_the_card():
    rules = get_rules("yacht", ["fill-in-order"])
    res = extreme_score(rules, kind="min")
    assert res.card["box"].tolist() == list(rules.box_names)
    replay(rules, res)


def test_constraints_without_effect_are_noted_and_equivalent():
    plain = extreme_score("yacht-classic")
    for cons in ("no-joker-points", "natural", "no-five-bonus"):
        res = extreme_score("yacht-classic", constraint=cons)
        assert res.score == plain.score and len(res.notes) == 1 and cons in res.notes[0]
    assert extreme_score("yahtzee").notes == ()


def test_infeasible_constraints_give_no_card():
    res = extreme_score("yacht-classic", kind="min", constraint=["no-zero", "no-five-of-a-kind"])
    assert not res.feasible and res.score is None and res.card.empty
    assert int(res.to_frame()["points"].isna().sum()) == get_rules("yacht-classic").n_boxes + 1


def test_claims_table_lists_every_claim():
    t = source_claims_table("yacht-classic", readings=False)
    assert list(t["claim"]) == [c[0] for c in SOURCE_CLAIMS]
    assert (t["score"] == [extreme_score("yacht-classic", kind=k, constraint=c).score
                           for _, k, c in SOURCE_CLAIMS]).all()


@pytest.mark.parametrize("bad,match", [
    (dict(kind="best"), "valid kinds: max, min"),
    (dict(constraint="no-joker"), "valid constraints: " + ", ".join(CONSTRAINTS)),
    (dict(constraint=[3]), "valid constraints"),
])
def test_bad_input(bad, match):
    with pytest.raises(ValueError, match=match):
        extreme_score("yacht-classic", **bad)


def test_bad_rules_and_constraint_parsing():
    with pytest.raises(ValueError, match="valid rule sets"):
        extreme_score("no-such-game")
    assert parse_constraints(["no-zero+natural", "none"]) == ("natural", "no-zero")
    assert parse_constraints(None) == ()


def test_cli_single_json(capsys):
    assert main(["extremes", "--rules", "yacht-classic", "--kind", "min", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["score"] == extreme_score("yacht-classic", kind="min").score
    assert len(out["card"]) == 12


def test_cli_table_and_card_text(capsys):
    assert main(["extremes", "--rules", "yacht-classic"]) == 0
    text = capsys.readouterr().out
    assert all(c[0] in text for c in SOURCE_CLAIMS)
    assert main(["extremes", "--rules", "yacht-classic", "--constraint", "no-zero",
                 "--constraint", "no-five-of-a-kind", "--kind", "min"]) == 0
    assert "no score card satisfies" in capsys.readouterr().out
    assert main(["extremes", "--rules", "yacht-classic", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["claims"]) == 10


@pytest.mark.parametrize("argv,match", [
    (["extremes", "--kind", "worst"], "valid kinds"),
    (["extremes", "--constraint", "bogus"], "valid constraints"),
    (["extremes", "--rules", "nope"], "valid rule sets"),
])
def test_cli_bad_input_exit_2(argv, match, capsys):
    assert main(argv) == 2
    assert match in capsys.readouterr().err
