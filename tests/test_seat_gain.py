"""``multiplayer.seat_gain`` through the runner: each chunk's exact tally
(``runner/gain.py``) against the games counted by hand and against numpy on the kept
games, a checkpointed run that resumes to the uninterrupted figures bit for bit (on
another backend too), and the refusals of bad checkpoints and of another run's."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from yahtzee_sim import get_rules, get_strategy
from yahtzee_sim.cli import main
from yahtzee_sim.multiplayer import seat_gain, simulate_table
from yahtzee_sim.runner import RunInterrupted, run_chunks
from yahtzee_sim.runner.gain import GainAggregate
from yahtzee_sim.runner.plan import part_seed

OPTS = ["fill-in-order"]
# 3 opponents: ties of 2, 3 and 4 seats happen, so shares of 1/2, 1/3 and 1/4 are tallied
ARGS = ("yacht", "greedy", "keep-largest", 3, 3000)
KW = dict(seed=6, options=OPTS, opponent="greedy", chunk=500)    # 750 games a seat: 2 parts each, 8 in all


def _figures(g: dict) -> dict:
    """What seat_gain returns, but the seconds (a timing, not a result)."""
    out = dict(g)
    out.pop("seconds")
    return out


def test_the_tally_counts_the_games_a_table_of_the_same_seeds_plays():
    """Each part replayed as two public tables (player, then baseline, in its seat) from the
    part's seed: sole wins, shares and scores counted game by game in plain Python give
    seat_gain's P(win), win share, gain and mean scores."""
    g = seat_gain("yacht", "greedy", "keep-largest", 2, 900, seed=3, options=OPTS, opponent="greedy", chunk=200)
    wins, share, gain, own, base = 0, Fraction(0), Fraction(0), 0, 0
    for seat in range(3):
        for stream, m in enumerate((200, 100)):
            seed = part_seed(3, 2, seat, stream)
            lineups = [["greedy"] * 3 for _ in range(2)]
            lineups[0][seat], lineups[1][seat] = "greedy", "keep-largest"
            t_own, t_base = (simulate_table("yacht", lu, m, seed=seed, options=OPTS).totals.tolist() for lu in lineups)
            for a, b in zip(t_own, t_base):
                top_a, top_b = max(a), max(b)
                wins += a[seat] == top_a and a.count(top_a) == 1
                s_a = Fraction(1, a.count(top_a)) if a[seat] == top_a else Fraction(0)
                s_b = Fraction(1, b.count(top_b)) if b[seat] == top_b else Fraction(0)
                share, gain, own, base = share + s_a, gain + s_a - s_b, own + a[seat], base + b[seat]
    assert g["games"] == 900 and g["p_win"] == wins / 900
    assert g["win_share"] == float(share / 900) and g["gain"] == float(gain / 900)
    assert g["mean_score"] == own / 900 and g["baseline_mean_score"] == base / 900


def test_the_merged_tally_gives_numpys_figures_on_the_kept_games():
    """The moments merged chunk by chunk equal numpy's two-pass mean and sd of the kept rows
    (to float rounding; the tally's are exact, then rounded once), the counts exactly."""
    from yahtzee_sim.stats import proportion_ci

    rules = get_rules("yacht", OPTS)
    lineup = tuple(get_strategy(n).prepare(rules) for n in ("greedy", "keep-largest", "greedy", "greedy", "greedy"))
    parts = tuple((seat, 500, i) for seat in range(4) for i in range(2))
    run = run_chunks("gain", rules, lineup, 4000, entropy=6, chunk_blocks=1, parts=parts, keep_games=True)
    rows, tally = run.rows, run.value
    assert isinstance(tally, GainAggregate) and tally.n_games == 4000 == len(rows["won"])
    assert {0.5, 1 / 3} <= set(rows["share"].tolist()) | set(rows["base_share"].tolist())   # 1/k shares occur
    for seat in (None, 0, 3):
        keep = np.ones(4000, bool) if seat is None else rows["seat"] == seat
        share, gain = rows["share"][keep], rows["share"][keep] - rows["base_share"][keep]
        got = tally.summary(seat)
        n = int(keep.sum())
        ci = proportion_ci(int(rows["won"][keep].sum()), n)
        assert (got["games"], got["p_win"], got["p_win_low"], got["p_win_high"]) == (
            n, rows["won"][keep].sum() / n, ci.low, ci.high)
        assert got["mean_score"] == rows["own"][keep].mean() and got["baseline_mean_score"] == rows["base"][keep].mean()
        for name, x in (("win_share", share), ("gain", gain)):
            half = 1.96 * x.std(ddof=1) / np.sqrt(n)
            for key, want in ((name, x.mean()), (f"{name}_low", x.mean() - half), (f"{name}_high", x.mean() + half)):
                assert got[key] == pytest.approx(want, rel=1e-14, abs=1e-16), (seat, key)


def test_the_figures_are_those_main_printed_before_the_tally():
    """seat_gain kept rows and summarized them with numpy before (commit 68c7027); the exact
    tally gives the same figures to the last bit or two (values recorded on that commit,
    the same call), and the same at every printed rounding."""
    before = {"games": 3000, "p_win": 0.5, "win_share": 0.5036666666666667, "win_share_high": 0.5214957000384816,
              "gain": 0.448, "gain_low": 0.43018979646117217, "mean_score": 101.08}
    g = seat_gain("yacht", "greedy", "keep-largest", 1, 3000, seed=4, options=OPTS, chunk=1024)
    seat_1 = {"win_share_low": 0.47913228190533, "win_share_high": 0.5295343847613365, "gain": 0.4563333333333333,
              "gain_high": 0.48147220741948665, "baseline_mean_score": 48.41866666666667}
    for got, want in ((g, before), (g["by_seat"][1], seat_1)):
        for key, value in want.items():
            assert got[key] == pytest.approx(value, rel=1e-15, abs=0) and f"{got[key]:.6f}" == f"{value:.6f}", key


def test_an_interrupted_run_resumes_bit_for_bit_on_any_backend(tmp_path, monkeypatch):
    import yahtzee_sim.runner.driver as driver

    full = _figures(seat_gain(*ARGS, **KW))
    ckpt = tmp_path / "gain.json"

    def stop(merged):
        if merged == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", stop)
    with pytest.raises(RunInterrupted) as info:
        seat_gain(*ARGS, **KW, checkpoint=ckpt)
    assert info.value.done == 500 + 250 + 500 and ckpt.exists()   # seat 0: 500 + 250, seat 1: 500
    monkeypatch.setattr(driver, "after_chunk", None)
    seen = []
    resumed = seat_gain(*ARGS, **KW, checkpoint=ckpt, backend="processes", jobs=2,
                        progress=lambda done, total: seen.append(done))
    assert _figures(resumed) == full
    assert seen[0] == 1250 and seen[-1] == 3000
    # the finished checkpoint holds the whole run: the same call again plays nothing, gives the same
    seen.clear()
    assert _figures(seat_gain(*ARGS, **KW, checkpoint=ckpt, progress=lambda done, total: seen.append(done))) == full
    assert seen == [3000]


def test_a_seed_none_run_resumes_with_the_checkpoints_seed(tmp_path, monkeypatch):
    import yahtzee_sim.runner.driver as driver

    ckpt = tmp_path / "gain.json"
    kw = dict(KW, seed=None)

    def stop(merged):
        if merged == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", stop)
    with pytest.raises(RunInterrupted):
        seat_gain(*ARGS, **kw, checkpoint=ckpt)
    monkeypatch.setattr(driver, "after_chunk", None)
    seed = json.loads(ckpt.read_text())["seed"]
    assert _figures(seat_gain(*ARGS, **kw, checkpoint=ckpt)) == _figures(seat_gain(*ARGS, **dict(KW, seed=seed)))


@pytest.mark.parametrize("change, message", [
    ({"seed": 7}, "seed 6 there, 7 here"),
    ({"n_games": 3001}, "n 3000 there, 3001 here"),
    ({"seat": 2}, r"seats \[0, 1, 2, 3\] there, \[2\] here"),
    ({"opponent": "keep-largest"}, "strategy 'greedy | keep-largest | greedy | greedy | greedy' there"),
    ({"opponents": 2, "n_games": 3000}, "another run"),
])
def test_another_runs_checkpoint_is_refused_and_kept(tmp_path, change, message):
    ckpt = tmp_path / "gain.json"
    seat_gain("yacht", "greedy", "keep-largest", 3, 3000, **dict(KW, chunk=1500), checkpoint=ckpt)
    before = ckpt.read_bytes()
    args = dict(dict(zip(("rules", "player", "baseline", "opponents", "n_games"), ARGS)), **dict(KW, chunk=1500))
    args.update(change)
    with pytest.raises(ValueError, match=message) as info:
        seat_gain(**args, checkpoint=ckpt)
    assert "\n" not in str(info.value) and "belongs to another run" in str(info.value)
    assert ckpt.read_bytes() == before


def test_bad_checkpoints_are_one_line_and_write_nothing(tmp_path):
    small = ("yacht", "greedy", "keep-largest", 1, 200)
    kw = dict(seed=1, options=OPTS)
    for bad, message in [(123, "checkpoint must be a file path"), (" ", "checkpoint is empty"),
                         (tmp_path / "no" / "c.json", "does not exist"), (tmp_path, "it is a folder")]:
        with pytest.raises(ValueError, match=message) as info:
            seat_gain(*small, **kw, checkpoint=bad)
        assert "\n" not in str(info.value)
    garbage = tmp_path / "garbage.json"
    garbage.write_text("{not json")
    with pytest.raises(ValueError, match="is not a yahtzee-sim checkpoint or is damaged"):
        seat_gain(*small, **kw, checkpoint=garbage)
    assert garbage.read_text() == "{not json" and sorted(p.name for p in tmp_path.iterdir()) == ["garbage.json"]


def test_a_forged_tally_is_refused(tmp_path):
    """A tally that cannot be a run's (more wins than games) is refused by the check a
    checkpoint's content goes through, whatever its signature."""
    rules = get_rules("yacht", OPTS)
    agg = GainAggregate.empty(rules, 1)
    agg.pairs[0, 1, 0] = 5
    agg.check(rules, 5)
    agg.wins[0] = 6
    with pytest.raises(ValueError, match="more sole wins than games"):
        agg.check(rules, 5)
    agg.wins[0], agg.own[0] = 5, 5 * 10_000
    with pytest.raises(ValueError, match="score sum is larger"):
        agg.check(rules, 5)


@pytest.mark.parametrize("extra, message", [
    (["--checkpoint", "MISSING"], "is not a folder"),
    (["--checkpoint", " "], "--checkpoint is empty"),
])
def test_run_checkpoint_folder_refusals(capsys, tmp_path, extra, message):
    spec = tmp_path / "h.toml"
    spec.write_text('kind = "head-to-head"\nrules = "yacht"\nstrategies = ["random", "greedy"]\n'
                    'tables = ["wins", "play-to-win"]\nplots = []\ngames = 100\ntable_games = 100\nseed = 1\n')
    extra = [str(tmp_path / e) if e == "MISSING" else e for e in extra]
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and not (tmp_path / "out").exists()


def test_run_checkpoint_needs_a_play_to_win_table(capsys, tmp_path):
    spec = tmp_path / "h.toml"
    spec.write_text('kind = "head-to-head"\nrules = "yacht"\nstrategies = ["random", "greedy"]\n'
                    'tables = ["wins"]\nplots = []\ngames = 100\nseed = 1\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "out"), "--checkpoint", str(tmp_path)]) == 2
    assert "none of these specs plays them" in capsys.readouterr().err


@pytest.mark.slow
def test_run_resumes_the_play_to_win_tables_to_the_same_report(capsys, tmp_path, monkeypatch):
    """``run --checkpoint FOLDER`` interrupted in a play-to-win table, then run again, writes
    the report an uninterrupted run writes (byte for byte)."""
    import yahtzee_sim.runner.driver as driver

    spec = tmp_path / "h.toml"
    # yacht-classic (4,095 states): play-to-win's risk and target tables take seconds, not minutes
    spec.write_text('kind = "head-to-head"\nrules = "yacht-classic"\nstrategies = ["random", "greedy"]\n'
                    'tables = ["wins", "play-to-win"]\nplots = []\nopponents = [1, 2]\ngames = 200\n'
                    'table_games = 400\nseed = 3\n')
    assert main(["run", str(spec), "--out", str(tmp_path / "whole")]) == 0
    folder = tmp_path / "ck"
    folder.mkdir()
    calls = []

    def stop(merged):     # the solitaire runs merge chunks too: stop in the table (its 2nd part)
        calls.append(merged)
        if (folder / "h-play-to-win-1.json").exists():
            raise KeyboardInterrupt

    monkeypatch.setattr(driver, "after_chunk", stop)
    assert main(["run", str(spec), "--out", str(tmp_path / "cut"), "--checkpoint", str(folder)]) == 130
    monkeypatch.setattr(driver, "after_chunk", None)
    assert main(["run", str(spec), "--out", str(tmp_path / "cut"), "--checkpoint", str(folder)]) == 0
    capsys.readouterr()
    for name in ("play_to_win.csv", "README.md"):
        assert (tmp_path / "cut" / "h" / name).read_bytes() == (tmp_path / "whole" / "h" / name).read_bytes()
    # fewer games is another run: refused in one line, the checkpoints kept as they are
    kept = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert main(["run", str(spec), "--games", "150", "--out", str(tmp_path / "other"), "--checkpoint", str(folder)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "belongs to another run" in err[-1] and "n 400 there, 150 here" in err[-1]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == kept and sorted(kept) == [
        "h-play-to-win-1.json", "h-play-to-win-2.json"]
