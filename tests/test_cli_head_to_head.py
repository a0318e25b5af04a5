"""``yahtzee-sim head-to-head`` simulated through the runner: the odds it prints are those of
the games a seed gives (counted here by hand from the kept games), on every backend, and a
checkpointed run resumes to the same output."""

from __future__ import annotations

import json

import numpy as np
import pytest

from yahtzee_sim.cli import main
from yahtzee_sim.multiplayer import simulate_table

YACHT = ["--rules", "yacht", "--option", "fill-in-order"]

# The text `head-to-head` printed on main before it ran through the runner (commit c666609,
# the same command): a seed must still give these games and these odds.
BEFORE = f"""\
Yacht (Japanese) with fill-in-order [yacht+fill-in-order]: 3 players at one table, 3,000 simulated games (seed 4)
              mean_score  p_win  p_win_low  p_win_high  p_tie
player{" " * 55}
greedy          100.9870 0.9390     0.9299      0.9470 0.0047
keep-largest     48.2543 0.0497     0.0425      0.0580 0.0037
random           39.6393 0.0067     0.0043      0.0103 0.0010
"""


def _by_hand(totals: np.ndarray) -> list[tuple[float, int, int]]:
    """Per seat: mean score, sole wins and ties for first, counted game by game in plain Python."""
    out = []
    for s in range(totals.shape[1]):
        wins = ties = 0
        for row in totals.tolist():
            top = max(row)
            if row[s] == top:
                if row.count(top) == 1:
                    wins += 1
                else:
                    ties += 1
        out.append((sum(int(t) for t in totals[:, s]) / len(totals), wins, ties))
    return out


def _json(capsys, *args) -> dict:
    assert main(["head-to-head", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_printed_table_is_the_one_a_seed_gave_before(capsys):
    args = ["head-to-head", *YACHT, "--players", "greedy", "keep-largest", "random", "--games", "3000",
            "--seed", "4"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COLUMNS", "80")
        assert main(args) == 0
    assert capsys.readouterr().out.startswith(BEFORE)


@pytest.mark.parametrize("run", [[], ["--backend", "processes", "--jobs", "2", "--batch", "1024"]])
def test_the_odds_are_those_of_the_seeds_games(capsys, run):
    players = ["greedy", "keep-largest", "greedy"]
    out = _json(capsys, *YACHT, "--players", *players, "--games", "2500", "--seed", "7", *run)
    kept = simulate_table("yacht", players, 2500, seed=7, options=["fill-in-order"], keep_games=True)
    assert out["games"] == 2500 and out["seed"] == 7 and [r["strategy"] for r in out["players"]] == players
    for row, (mean, wins, ties) in zip(out["players"], _by_hand(kept.totals)):
        assert row["mean_score"] == pytest.approx(mean, abs=1e-12)
        assert row["p_win"] == wins / 2500 and row["p_tie"] == ties / 2500


def test_an_interrupted_head_to_head_resumes_from_its_checkpoint(capsys, tmp_path, monkeypatch):
    import yahtzee_sim.runner.driver as driver

    args = [*YACHT, "--players", "greedy", "keep-largest", "--games", "5000", "--seed", "3", "--batch", "1024"]
    whole = _json(capsys, *args)
    ckpt = tmp_path / "table.json"

    def stop(merged):
        if merged == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", stop)
    assert main(["head-to-head", *args, "--checkpoint", str(ckpt)]) == 130
    err = capsys.readouterr().err
    assert "interrupted after 2,048 of 5,000 games" in err and "to resume" in err
    monkeypatch.setattr(driver, "after_chunk", None)
    assert _json(capsys, *args, "--checkpoint", str(ckpt)) == whole
    # another seed is another run: refused in one line, the checkpoint left as it is
    saved = ckpt.read_bytes()
    assert main(["head-to-head", *args[:-4], "--seed", "4", "--batch", "1024", "--checkpoint", str(ckpt)]) == 2
    assert capsys.readouterr().err.count("\n") == 1 and ckpt.read_bytes() == saved


@pytest.mark.parametrize("extra, message", [
    (["--backend", "nope"], "invalid choice: 'nope' (choose from 'serial', 'processes', 'dask')"),
    (["--jobs", "0"], "expected a positive integer"),
    (["--batch", "-5"], "expected a positive integer"),
    (["--scheduler", "tcp://nowhere:1"], "scheduler needs the dask backend"),
    (["--checkpoint", " "], "checkpoint is empty"),
    (["--exact", "--jobs", "2"], "--jobs is for simulated tables"),
    (["--exact", "--backend", "processes", "--checkpoint", "x.json"], "--backend, --checkpoint are for simulated"),
])
def test_bad_run_flags_are_one_line(capsys, tmp_path, monkeypatch, extra, message):
    monkeypatch.chdir(tmp_path)
    assert main(["head-to-head", "--players", "greedy", "greedy", "--games", "100", *extra]
                if "--exact" not in extra else ["head-to-head", "--players", "greedy", "greedy", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert list(tmp_path.iterdir()) == []
