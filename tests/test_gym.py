"""Gymnasium environments (issue 19, section 3): Gymnasium's own checker on every rule set
with an environment, masks against the rules, and policies as exactly evaluable strategies
(a policy written over observations that plays keep-largest's rule has keep-largest's
exact value, computed independently by the built-in strategy)."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="gymnasium is not installed (pip install 'yahtzee-sim[gym]')")

from gymnasium.utils.env_checker import check_env

import yahtzee_sim.gym as ysg
from yahtzee_sim import simulate
from yahtzee_sim.engine import StrategyError
from yahtzee_sim.exact.policy import policy_value
from yahtzee_sim.rules import get_rules, rule_names


@pytest.mark.parametrize("eid", ysg.register_envs())
def test_check_env_passes(eid):
    env = gym.make(eid)
    check_env(env.unwrapped, skip_render_check=True)


def test_every_rule_set_has_an_environment_or_a_reason():
    ids = set(ysg.register_envs())
    for name in rule_names():
        if ysg.env_id(name) not in ids:
            with pytest.raises(ValueError, match="no environment") as e:
                ysg.YahtzeeEnv(name)
            assert "\n" not in str(e.value)


def _masked_random_game(env, rng):
    obs, info = env.reset(seed=int(rng.integers(1 << 30)))
    total, done, steps = 0, False, 0
    while not done:
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, r, done, trunc, info = env.step(a)
        total += r
        steps += 1
    return total, steps, env.unwrapped


def test_masked_random_games_follow_the_rules():
    env = gym.make("yahtzee_sim/Yahtzee-v0")
    rng = np.random.default_rng(0)
    rules = get_rules("yahtzee")
    for _ in range(20):
        total, steps, raw = _masked_random_game(env, rng)
        assert steps == rules.n_boxes * rules.n_rolls and raw.filled.all() and total == raw.score


def test_seeding_is_reproducible_and_illegal_actions_change_nothing():
    env = ysg.YahtzeeEnv("yacht")
    a, _ = env.reset(seed=5)
    b, _ = ysg.YahtzeeEnv("yacht").reset(seed=5)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    mask = env.action_masks()
    bad = int(np.flatnonzero(mask == 0)[0])
    obs, r, done, _, info = env.step(bad)
    assert r == 0 and info["illegal_action"] and np.array_equal(obs["dice"], a["dice"])
    strict = ysg.YahtzeeEnv("yacht", illegal="raise")
    strict.reset(seed=5)
    with pytest.raises(ValueError, match="illegal"):
        strict.step(bad)


def _keep_largest_policy(rules):
    """keep-largest's rule written over observations: hold the largest group (the
    highest face on ties), then the legal box that adds most now (the first on ties)."""
    d = rules.dice

    def policy(obs, mask):
        k = d.n_keeps
        if obs["rolls_left"] > 0:
            counts = obs["dice"]
            face = len(counts) - 1 - int(np.argmax(counts[::-1]))
            held = np.zeros_like(counts)
            held[face] = counts[face]
            return int(d.keep_index_of_counts(held[None, :])[0])
        filled = obs["filled"].astype(bool)
        roll = int(d.roll_index(np.repeat(np.arange(1, len(obs["dice"]) + 1), obs["dice"])[None, :])[0])
        legal, scores, bonus = rules.turn_options(filled[None, :], np.array([bool(obs["five_box_full"])]),
                                                  np.array([roll]))
        gain = scores + rules.upper_bonus_gain(np.array([int(obs["upper_total"])]), scores) + bonus[:, None]
        gain = np.where(legal, gain, -1)[0]
        return k + int(np.argmax(gain))
    return policy


def test_a_policy_is_an_exactly_evaluable_strategy():
    rules = get_rules("yacht", ["fill-in-order"])
    strat = ysg.PolicyStrategy(_keep_largest_policy(rules), name="kl-policy")
    got = policy_value(rules, strat).mean
    want = policy_value(rules, "keep-largest").mean
    assert abs(got - want) < 1e-9


def test_a_bad_policy_is_refused_in_one_line():
    bad = ysg.PolicyStrategy(lambda obs, mask: int(np.argmin(mask)), name="bad")
    with pytest.raises(StrategyError, match="illegal action"):
        simulate("yacht", bad, 1024, seed=1)
    shape = ysg.PolicyStrategy(lambda obs, mask: np.zeros((len(mask), 2), int), batched=True, name="shape")
    with pytest.raises(StrategyError, match="integer actions"):
        simulate("yacht", shape, 1024, seed=1)


def test_docs_example_runs():
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "gym.md").read_text(encoding="utf-8")
    source = re.search(r"```python\n(.*?)```", text, re.DOTALL).group(1).replace("20_000", "1_100")
    namespace: dict = {"__name__": "__docs__"}
    exec(compile(source, "docs/gym.md", "exec"), namespace)
    card = namespace["card"]                       # the last agent: exact
    assert card.strategy == "one-step-greedy" and card.method == "exact" and card.losses is not None
    assert abs(card.losses.accounted - card.losses.gap) < 1e-9


def _masked_uniform(mask, rng):
    """A uniformly random legal action per row (vectorized: argmax of random keys)."""
    keys = np.where(mask == 1, rng.random(mask.shape), -1.0)
    return keys.argmax(axis=1)


def test_vector_env_random_agent_has_random_strategys_exact_mean():
    # uniform over the legal keeps (distinct sub-keeps) and boxes is the built-in random
    # strategy, whose exact mean policy_value computes independently of the environment
    rules = get_rules("yacht")
    n = 4096
    venv = gym.make_vec("yahtzee_sim/Yacht-v0", num_envs=n, vectorization_mode="vector_entry_point")
    obs, infos = venv.reset(seed=11)
    rng = np.random.default_rng(12)
    total = np.zeros(n)
    for step in range(rules.n_boxes * rules.n_rolls):
        obs, r, term, trunc, infos = venv.step(_masked_uniform(infos["action_mask"], rng))
        total += r
        assert not infos["illegal_action"].any()
    assert term.all() and np.array_equal(total, infos["score"])
    exact = policy_value(rules, "random")
    se = total.std(ddof=1) / np.sqrt(n)
    assert abs(total.mean() - exact.mean) < 4 * se
    # next-step autoreset: the finished games start again, reward 0
    obs, r, term, trunc, infos = venv.step(np.zeros(n, int))
    assert not r.any() and not term.any() and (obs["rolls_left"] == rules.n_rolls - 1).all()
    assert not obs["filled"].any()


def _strategy_actions(rules, strat, obs):
    """A built-in strategy's actions on a batch of observations (a leading axis): the
    state the observation shows (card, upper total, five box, dice) asked of the strategy
    as the simulator asks it; the upper total shown is capped, which changes no decision
    of these strategies (past the threshold no box adds a bonus)."""
    from yahtzee_sim.state import GameState, TurnOptions

    d = rules.dice
    filled = obs["filled"].astype(bool)
    n = len(filled)
    faces = np.tile(np.arange(1, rules.n_faces + 1), (n, 1)).ravel()
    rolls = d.roll_index(np.repeat(faces, obs["dice"].ravel()).reshape(n, rules.n_dice))
    state = GameState.from_arrays(rules, filled, obs["upper_total"], obs["five_box_full"] > 0)
    left = obs["rolls_left"]
    out = np.empty(n, dtype=np.int64)
    for j in np.unique(left):
        rows = np.flatnonzero(left == j)
        assert len(np.unique(filled[rows].sum(axis=1))) == 1       # one turn per call, as in a game
        part = GameState.from_arrays(rules, filled[rows], state.upper_total[rows], state.five_box_full[rows])
        if j > 0:
            out[rows] = strat.keep(part, rolls[rows], int(j), None)
        else:
            legal, scores, bonus = rules.turn_options(part.filled, part.five_box_full, rolls[rows])
            gain = rules.turn_gain(part.upper_total, scores, bonus)
            out[rows] = d.n_keeps + np.asarray(strat.box(part, rolls[rows], TurnOptions(legal, scores, gain), None))
    return out


@pytest.mark.parametrize("rules_name, strategy", [("yahtzee", "greedy"), ("yahtzee", "keep-largest"),
                                                  ("yacht", "optimal")])
def test_env_throws_the_dice_of_simulate_for_the_same_seed(rules_name, strategy):
    # driven by a strategy, the episodes after reset(seed=S) are games 0, 1, 2 of
    # simulate(rules, strategy, games=3, seed=S): the same final score each
    from yahtzee_sim import get_strategy

    rules = get_rules(rules_name)
    strat = get_strategy(strategy).prepare(rules)
    env = ysg.YahtzeeEnv(rules)
    for seed in (0, 7, 2026):
        want = simulate(rules, strategy, 3, seed=seed).games["total"].tolist()
        got = []
        for g in range(3):
            obs, info = env.reset(seed=seed) if g == 0 else env.reset()
            assert (env.run_seed, env.game_index) == (seed, g)
            done = False
            while not done:
                batch = {k: np.asarray(v)[None] for k, v in obs.items()}
                obs, r, done, _, info = env.step(int(_strategy_actions(rules, strat, batch)[0]))
                assert not info.get("illegal_action")
            got.append(env.score)
        assert got == want, (seed, got, want)


def test_vector_env_rows_are_simulates_games():
    # row i after reset(seed=S) plays game i of simulate(games=N, seed=S); the games that
    # follow (autoreset) are games N, N + 1, ... of the same run, in row order
    from yahtzee_sim import get_strategy

    rules, n = get_rules("yahtzee"), 6
    strat = get_strategy("greedy").prepare(rules)
    want = simulate(rules, "greedy", 2 * n, seed=5).games["total"]
    venv = ysg.YahtzeeVectorEnv(rules, num_envs=n)
    obs, infos = venv.reset(seed=5)
    totals = []
    for game in range(2):
        for _ in range(rules.n_boxes * rules.n_rolls):
            obs, r, term, trunc, infos = venv.step(_strategy_actions(rules, strat, obs))
            assert not infos["illegal_action"].any()
        assert term.all()
        totals.append(infos["score"].copy())
        if game == 0:
            obs, r, term, trunc, infos = venv.step(np.zeros(n, int))      # next-step autoreset
            assert (venv.game_index == np.arange(n, 2 * n)).all()
    assert np.array_equal(np.concatenate(totals), want)
