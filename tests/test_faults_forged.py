"""Fault tests of issue 23 §2: no silent wrong answers from forged files or scribbling strategies.

* checkpoints and solver caches are signed with the user's key: an edit with its
  checksum recomputed (what anyone can do) is refused (checkpoints) or recomputed
  (caches); a cache forged by one holding the key is still caught by the cheap
  certain checks (finished cards score 0 more, the start state's Bellman step);
* strategies are handed read-only views: a write raises a StrategyError naming them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import yahtzee_sim.runner.driver as driver
from yahtzee_sim import SEED_BLOCK, StrategyError, simulate
from yahtzee_sim.exact import cache as cache_mod
from yahtzee_sim.exact import solver as solver_mod
from yahtzee_sim.exact.solver import cache_path, solve
from yahtzee_sim.signing import KEY_NAME, signing_key
from yahtzee_sim.strategies import Strategy, get_strategy

from forgery import forge_cache, forge_checkpoint, solved_in

RULES, OPTS = "yacht", ["fill-in-order"]
N = 4 * SEED_BLOCK


# -- solver caches ----------------------------------------------------------------------------

@pytest.fixture
def solved(tmp_path):
    """A solved table in a cache folder of its own: (solution, file, stored arrays)."""
    out = solved_in(tmp_path, RULES, OPTS)
    assert (tmp_path / KEY_NAME).is_file()
    yield out
    solver_mod._MEMO.clear()


def _raised(arrays: dict, by: float, finished_too: bool = True) -> dict:
    """Every value raised by ``by`` (the reported forgery), optionally sparing the finished cards."""
    values = arrays["values"].copy()
    shape = values.shape
    if finished_too:
        values = values + by
    else:
        flat = values.reshape(shape[0], -1)
        flat[:-1] += by  # mask 2^B - 1, the finished card, is the last row
        values = flat.reshape(shape)
    return dict(arrays, values=values)


CACHE_FORGERIES = {
    "every value +1, old signature kept": dict(by=1.0, key=False, keep_tag=True),
    "every value +1, signature left out": dict(by=1.0, key=False, keep_tag=False),
    "every value +0.001, old signature kept": dict(by=0.001, key=False, keep_tag=True),
    "every value +1, signed with another key": dict(by=1.0, key="other", keep_tag=True),
    "every value +1, signed with the user's key": dict(by=1.0, key="user", keep_tag=True),
    "+1 but finished cards, signed with the user's key": dict(by=1.0, key="user", keep_tag=True, spare=True),
    "unchanged values, signed with another key": dict(by=0.0, key="other", keep_tag=True),
}


@pytest.mark.parametrize("case", list(CACHE_FORGERIES))
def test_a_forged_cache_is_recomputed_never_trusted(solved, tmp_path, case):
    sol, path, stored = solved
    spec = CACHE_FORGERIES[case]
    key = {False: None, "other": os.urandom(32), "user": signing_key(tmp_path)}[spec["key"]]
    forge_cache(sol, path, _raised(stored, spec["by"], not spec.get("spare")), key=key, keep_tag=spec["keep_tag"])
    again = solve(RULES, options=OPTS, cache_dir=tmp_path)
    assert again.cache == "damaged", case
    assert again.mean == pytest.approx(sol.mean, abs=1e-9)
    assert "\n" not in again.cache_note and "recomputed" in again.cache_note
    if spec["key"] in (False, "other"):
        assert "not signed with this user's key" in again.cache_note
    solver_mod._MEMO.clear()
    assert solve(RULES, options=OPTS, cache_dir=tmp_path).cache == "hit"  # replaced by a signed one


def test_the_signature_alone_catches_the_reported_forgery(solved, tmp_path):
    """Without the signature check, is the +1 forgery with a recomputed checksum caught by the
    value checks too? With the finished cards checked, yes: two independent lines."""
    sol, path, stored = solved
    arrays, why = cache_mod.read(path, solver_mod._meta(sol.rules, "float32"))
    assert why == ""
    forged, why = solver_mod._from_cache(sol.rules, "float32", _raised(stored, 1.0))
    assert forged is None and "finished card" in why


def test_a_cache_made_under_another_key_is_recomputed(solved, tmp_path):
    sol, path, _ = solved
    (tmp_path / KEY_NAME).unlink()  # the user's key is gone: nothing signed before can be trusted
    solver_mod._MEMO.clear()
    again = solve(RULES, options=OPTS, cache_dir=tmp_path)
    assert again.cache == "damaged" and "not signed" in again.cache_note
    assert (tmp_path / KEY_NAME).is_file()


def test_cli_solve_and_advise_do_not_trust_a_forged_cache(tmp_path, monkeypatch, capsys):
    """The reported commands: solve and advise with every cached value raised by 1."""
    from yahtzee_sim.cli import main

    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path))
    solver_mod._MEMO.clear()
    assert main(["solve", "--rules", RULES, "--option", "fill-in-order", "--json"]) == 0
    honest = json.loads(capsys.readouterr().out)
    advise = ["advise", "--rules", RULES, "--option", "fill-in-order", "--dice", "33355", "--rolls-left", "2", "--json"]
    assert main(advise) == 0
    honest_advice = json.loads(capsys.readouterr().out)
    sol = solve(RULES, options=OPTS)
    path = cache_path(sol.rules, "float32", tmp_path)
    stored = {k: np.array(v) for k, v in cache_mod.load(path, solver_mod._meta(sol.rules, "float32")).items()}
    forge_cache(sol, path, _raised(stored, 1.0))
    assert main(["solve", "--rules", RULES, "--option", "fill-in-order", "--json"]) == 0
    forged = json.loads(capsys.readouterr().out)
    assert forged["expected_score"] == honest["expected_score"] and forged["cache"] == "damaged"
    forge_cache(sol, path, _raised(stored, 1.0))
    assert main(advise) == 0
    assert json.loads(capsys.readouterr().out) == honest_advice
    solver_mod._MEMO.clear()


# -- checkpoints --------------------------------------------------------------------------------

def _interrupt(ckpt: Path, seed: int, monkeypatch) -> Path:
    def stop(merged):
        if merged == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", stop)
    with pytest.raises(KeyboardInterrupt):
        simulate("yacht", "random", N, seed=seed, batch=SEED_BLOCK, checkpoint=ckpt)
    monkeypatch.setattr(driver, "after_chunk", None)
    return ckpt


@pytest.fixture
def interrupted(tmp_path, monkeypatch):
    """A checkpoint of 2 of 4 chunks of a yacht run with seed 1."""
    return _interrupt(tmp_path / "run.json", 1, monkeypatch)


@pytest.fixture
def other_run(tmp_path, monkeypatch):
    """The same checkpoint of the run with seed 2 (consistent histograms of other games)."""
    return json.loads(_interrupt(tmp_path / "other.json", 2, monkeypatch).read_text())


CHECKPOINT_FORGERIES = {
    "relabelled from another seed": ("seed", "keep"),
    "relabelled, signature dropped": ("seed", "none"),
    "relabelled, signed with another key": ("seed", "other key"),
    "relabelled, a SHA-256 as signature": ("seed", "sha256"),
    "another run's consistent histograms": ("value", "keep"),
    "another run's histograms, signature dropped": ("value", "none"),
    "nothing changed, signed with another key": ("nothing", "other key"),
}


@pytest.mark.parametrize("case", list(CHECKPOINT_FORGERIES))
def test_a_forged_checkpoint_is_refused_and_kept(interrupted, other_run, case):
    what, signature = CHECKPOINT_FORGERIES[case]
    edit = {"seed": lambda d: d.update(seed=2), "value": lambda d: d.update(value=other_run["value"]),
            "nothing": lambda d: None}[what]
    forge_checkpoint(interrupted, edit, signature=signature)
    before = interrupted.read_bytes()
    seed = json.loads(before)["seed"]
    with pytest.raises(ValueError, match="its signature does not match") as info:
        simulate("yacht", "random", N, seed=seed, batch=SEED_BLOCK, checkpoint=interrupted)
    assert "\n" not in str(info.value) and "delete it" in str(info.value)
    assert interrupted.read_bytes() == before


def test_a_checkpoint_from_another_users_key_is_refused(interrupted, tmp_path, monkeypatch):
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(tmp_path / "another-user"))
    with pytest.raises(ValueError, match="another user's key"):
        simulate("yacht", "random", N, seed=1, batch=SEED_BLOCK, checkpoint=interrupted)


def test_an_honest_checkpoint_resumes_to_the_same_answer(interrupted):
    resumed = simulate("yacht", "random", N, seed=1, batch=SEED_BLOCK, checkpoint=interrupted)
    whole = simulate("yacht", "random", N, seed=1, batch=SEED_BLOCK)
    for name in ("total_hist", "box_hist", "upper_hist", "fill_turn_hist"):
        assert np.array_equal(getattr(resumed.aggregate, name), getattr(whole.aggregate, name))


def test_a_checkpoint_of_the_unsigned_format_is_refused(interrupted):
    forge_checkpoint(interrupted, lambda d: d.update(version=2), signature="none")
    with pytest.raises(ValueError, match="format version 2"):
        simulate("yacht", "random", N, seed=1, batch=SEED_BLOCK, checkpoint=interrupted)


def test_no_writable_cache_folder_refuses_a_checkpointed_run_before_work(tmp_path, monkeypatch, capsys):
    from yahtzee_sim.cli import main

    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(cache_mod.CACHE_ENV, str(blocker / "cache"))
    code = main(["simulate", "--rules", "yacht", "--games", "100", "--seed", "1", "--checkpoint",
                 str(tmp_path / "run.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "signs checkpoints" in err, err
    assert not (tmp_path / "run.json").exists()


# -- strategies see read-only views ---------------------------------------------------------------

class Scribbler(Strategy):
    """Plays keep-largest, but first writes into what it is shown (``where``)."""

    def __init__(self, where: str):
        self.name = f"scribbler-{where}"
        self.where = where
        self.inner = get_strategy("keep-largest")

    def prepare(self, rules):
        self.inner = self.inner.prepare(rules)
        return super().prepare(rules)

    def _scribble(self, state, rolls, options=None, u=None):
        w = self.where
        if w == "box_scores":
            state.box_scores[:] = 0
        elif w == "filled":
            state.filled[:, 0] = False
        elif w == "upper_total":
            state.upper_total += 35
        elif w == "dice":
            rolls[:] = 0
        elif w == "legal" and options is not None:
            options.legal[:] = True
        elif w == "scores" and options is not None:
            options.scores[:] = 50
        elif w == "gain" and options is not None:
            options.gain[:] = 0
        elif w == "uniforms" and u is not None:
            u[:] = 0.5
        elif w == "out=":
            np.add(state.five_count, 1, out=state.five_count)
        elif w == "fill_turn":
            state.fill_turn.fill(0)

    def keep(self, state, rolls, rolls_left, u):
        if self.where in ("box_scores", "filled", "upper_total", "dice", "uniforms", "out="):
            self._scribble(state, rolls, None, u)
        return self.inner.keep(state, rolls, rolls_left, u)

    def box(self, state, rolls, options, u):
        self._scribble(state, rolls, options, u)
        return self.inner.box(state, rolls, options, u)


SCRIBBLES = ["box_scores", "filled", "upper_total", "dice", "legal", "scores", "gain", "uniforms", "out=",
             "fill_turn"]


@pytest.mark.parametrize("where", SCRIBBLES)
@pytest.mark.parametrize("rules", ["yacht", "yamb", "maxi-yatzy"])
def test_a_strategy_that_writes_what_it_is_shown_is_named(where, rules):
    with pytest.raises(StrategyError, match=f"strategy 'scribbler-{where}' wrote into an array") as info:
        simulate(rules, Scribbler(where), 50, seed=1)
    assert "\n" not in str(info.value)


def test_the_reported_scribbler_no_longer_scores_a_mean_of_0_1():
    with pytest.raises(StrategyError):
        simulate("yahtzee", Scribbler("box_scores"), 200, seed=3)
    # its reads are untouched: the same strategy without the write plays keep-largest's games
    calm = simulate("yahtzee", Scribbler("nothing"), 200, seed=3)
    plain = simulate("yahtzee", "keep-largest", 200, seed=3)
    assert np.array_equal(calm.aggregate.total_hist, plain.aggregate.total_hist)


def test_a_scribbler_is_named_in_turns_policy_value_and_at_a_table():
    from yahtzee_sim import simulate_turns
    from yahtzee_sim.exact.policy import policy_value
    from yahtzee_sim.multiplayer import simulate_table

    with pytest.raises(StrategyError, match="scribbler-dice"):
        simulate_turns("yacht", Scribbler("dice"), 100, seed=1)
    with pytest.raises(StrategyError, match="scribbler-legal"):
        policy_value("yacht", Scribbler("legal"), options=["fill-in-order"])
    with pytest.raises(StrategyError, match="scribbler-box_scores"):
        simulate_table("yacht", [Scribbler("box_scores"), "greedy"], 50, seed=1)


def test_the_cli_gives_one_line_for_a_scribbler(tmp_path, capsys, monkeypatch):
    from yahtzee_sim.cli import main

    (tmp_path / "scribbling.py").write_text(
        "from yahtzee_sim.strategies import get_strategy, Strategy\n"
        "class Scribbling(Strategy):\n"
        "    name = 'scribbling'\n"
        "    def prepare(self, rules):\n"
        "        self.inner = get_strategy('keep-largest').prepare(rules)\n"
        "        return self\n"
        "    def keep(self, state, rolls, rolls_left, u):\n"
        "        state.box_scores[:] = 0\n"
        "        return self.inner.keep(state, rolls, rolls_left, u)\n"
        "    def box(self, state, rolls, options, u):\n"
        "        return self.inner.box(state, rolls, options, u)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code = main(["simulate", "--rules", "yahtzee", "--strategy", "scribbling:Scribbling", "--games", "100",
                 "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "'scribbling' wrote into an array" in err, err
