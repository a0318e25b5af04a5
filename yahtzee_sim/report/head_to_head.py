"""The ``head-to-head`` report: who beats whom, simulated and exact, and playing to win.

Two steps: :func:`head_to_head_numbers` plays the games, solves what the spec asks
for exactly and computes every number from the public results
(:class:`HeadToHeadNumbers`, no text); :func:`render_head_to_head` turns them into a
:class:`~yahtzee_sim.report.document.Report`.

>>> from yahtzee_sim.report.experiment import parse_spec
>>> spec = parse_spec({"kind": "head-to-head", "strategies": ["random", "keep-largest"],
...                    "games": 400, "tables": ["wins", "ranking"], "plots": []}, name="demo")
>>> nums = head_to_head_numbers(spec)
>>> row = nums.to_frame().set_index(["player", "opponent"]).loc[("keep-largest", "random")]
>>> bool(row["win_rate"] > 0.9), nums.exact is None
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import fmt
from ..api import simulate
from ..rules import RuleSet, get_rules
from ..stats import proportion_ci
from ..strategies import strategy_names
from .document import Report
from .experiment import ExperimentSpec
from .runners import _games_text, _percent_axis, _rules_text, _spawned_seeds, runner


@dataclass
class ExactWins:
    """The exact part of a head-to-head report (from the strategies' exact score distributions).

    ``frame``: one row per (player, opponent) with the exact P(win), P(draw), P(loss) and,
    where simulated, the simulated rate and its 95% Wilson interval; ``matrix`` and ``ties``:
    exact P(row beats column) and P(equal scores); ``means``: each strategy's exact mean;
    ``levels``: source 001's computer levels among the strategies (empty if none).
    """

    names: list
    frame: pd.DataFrame
    matrix: pd.DataFrame
    ties: pd.DataFrame
    means: pd.Series
    levels: pd.DataFrame


@dataclass
class HeadToHeadNumbers:
    """What a head-to-head report says, as numbers.

    ``wins``: one row per ordered pair (player, opponent) of simulated strategies, their
    win, draw and loss rates on independent dice and the win rate's 95% Wilson interval;
    ``matrix``: the simulated win rate of row against column; ``ranking``: mean score and
    average win rate against the field, each with its rank; ``exact``: the exact win odds
    (:class:`ExactWins`) when the spec asks for them; ``play_to_win``: the opponent-aware
    player against 1, 3, 9 ... optimal players when the spec asks for it.
    """

    rules: RuleSet
    games: int
    seed: int
    names: list
    wins: pd.DataFrame
    matrix: pd.DataFrame
    ranking: pd.DataFrame
    exact: ExactWins | None = None
    play_to_win: pd.DataFrame | None = None
    endgame: int = 0
    """The play-to-win player's turns played by the exact target tables."""

    def to_frame(self) -> pd.DataFrame:
        """The simulated win, draw and loss rates, one row per (player, opponent) (a copy).

        >>> from yahtzee_sim.report.experiment import parse_spec
        >>> spec = parse_spec({"kind": "head-to-head", "strategies": ["random", "greedy"], "games": 64,
        ...                    "tables": ["wins"], "plots": []}, name="d")
        >>> list(head_to_head_numbers(spec).to_frame()["opponent"])
        ['greedy', 'random']
        """
        return self.wins.copy()


def head_to_head_numbers(spec: ExperimentSpec, *, run_options: dict | None = None) -> HeadToHeadNumbers:
    """Two-player games: each player's dice are independent (different seed streams).

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "head-to-head", "strategies": ["random", "greedy"], "games": 64,
    ...                    "tables": ["wins", "ranking"], "plots": []}, name="d")
    >>> nums = head_to_head_numbers(spec)
    >>> int(nums.ranking.loc["greedy", "rank_by_mean"]), bool(nums.matrix.loc["greedy", "random"] > 0.9)
    (1, True)
    """
    rules = get_rules(spec.rules, spec.options)
    names = list(spec.strategies) or strategy_names()
    seeds = dict(zip(names, _spawned_seeds(spec.seed, len(names))))
    # the play-to-win tables' checkpoint folder is theirs: the solitaire games keep theirs in memory
    sim_options = {k: v for k, v in (run_options or {}).items() if k != "checkpoint_folder"}
    totals = {n: simulate(rules, n, spec.games, seed=seeds[n], keep_games=True, **sim_options).games["total"] for n in names}
    rows, win = [], pd.DataFrame(index=pd.Index(names, name="player"), columns=names, dtype=float)
    for a in names:
        for b in names:
            if a == b:
                continue
            # Player a's game i against player b's game i: independent dice.
            ta, tb = totals[a], totals[b]
            wins, draws = int((ta > tb).sum()), int((ta == tb).sum())
            ci = proportion_ci(wins, len(ta))
            rows.append({"player": a, "opponent": b, "win_rate": wins / len(ta), "win_ci95_low": float(ci.low),
                         "win_ci95_high": float(ci.high), "draw_rate": draws / len(ta),
                         "loss_rate": 1 - (wins + draws) / len(ta)})
            win.loc[a, b] = wins / len(ta)
    wins_frame = pd.DataFrame(rows)
    means = pd.Series({n: totals[n].mean() for n in names})
    field_rate = win.mean(axis=1)
    ranking = pd.DataFrame({"mean_score": means, "mean_win_rate_vs_field": field_rate,
                            "rank_by_mean": means.rank(ascending=False).astype(int),
                            "rank_by_wins": field_rate.rank(ascending=False).astype(int)})
    ranking.index.name = "strategy"
    nums = HeadToHeadNumbers(rules=rules, games=spec.games, seed=spec.seed, names=names, wins=wins_frame,
                             matrix=win, ranking=ranking)
    progress = (run_options or {}).get("progress")
    if "exact" in spec.tables:
        nums.exact = _exact_wins(spec, rules, names, nums, progress)
    if "play-to-win" in spec.tables or "play-to-win" in spec.plots:
        nums.play_to_win, nums.endgame = _play_to_win(spec, rules, progress, run_options or {})
    return nums


def _levels_of(names) -> dict:
    """Source 001's computer level each strategy stands for (``keep-largest`` -> ``cpu:weak`` ...)."""
    from ..strategies import get_strategy
    from ..strategies.levels import LEVELS

    plays_as = {type(get_strategy(level)).__mro__[1].name: level for level in LEVELS}
    return {n: plays_as[n] for n in names if n in plays_as}


def _exact_dists(rules, names, progress):
    from ..exact.distribution import distribution

    step = None if progress is None else (lambda n: lambda phase, done, total: progress(
        f"exact distribution of {n}: {phase}", done, total))
    return {n: distribution(rules, n, cache=True, progress=None if step is None else step(n)) for n in names}


def _exact_wins(spec, rules, names, nums: HeadToHeadNumbers, progress) -> ExactWins:
    """The exact two-player win matrix beside the simulated one, and the computer levels."""
    from ..exact.winodds import win_matrix
    from ..strategies.levels import LEVELS

    exact_names = list(spec.exact_strategies) or names
    dists = _exact_dists(rules, exact_names, progress)
    win, tie = win_matrix(list(dists.values()), names=exact_names)
    wins_frame = nums.wins
    sim = wins_frame.set_index(["player", "opponent"]) if len(wins_frame) else None
    rows = []
    for a in exact_names:
        for b in exact_names:
            row = {"player": a, "opponent": b, "exact_win": float(win.loc[a, b]), "exact_draw": float(tie.loc[a, b]),
                   "exact_loss": float(1 - win.loc[a, b] - tie.loc[a, b])}
            if sim is not None and (a, b) in sim.index:
                r = sim.loc[(a, b)]
                row.update(simulated_win=float(r["win_rate"]), simulated_ci95_low=float(r["win_ci95_low"]),
                           simulated_ci95_high=float(r["win_ci95_high"]),
                           exact_inside_ci=bool(r["win_ci95_low"] <= win.loc[a, b] <= r["win_ci95_high"]))
            rows.append(row)
    frame = pd.DataFrame(rows)
    levels = _levels_of(names)
    table = pd.DataFrame()
    if levels:
        lv = list(levels)
        sim_win, sim_mean = nums.matrix, nums.ranking["mean_score"]
        exact_of = lambda n: n in dists
        table = pd.DataFrame({"level": [levels[n] for n in lv], "source 001": [LEVELS[levels[n]] for n in lv],
                              "plays as": lv,
                              "exact mean": [dists[n].mean if exact_of(n) else np.nan for n in lv],
                              "simulated mean": [float(sim_mean[n]) for n in lv]},
                             index=pd.Index(lv, name="strategy"))
        for n in lv:
            table[f"P(win) against {levels[n]}"] = [
                float(win.loc[m, n]) if exact_of(m) and exact_of(n) else float(sim_win.loc[m, n]) for m in lv]
            table[f"P(win) against {levels[n]} is"] = [
                "exact" if exact_of(m) and exact_of(n) else "simulated" for m in lv]
    return ExactWins(names=exact_names, frame=frame, matrix=win, ties=tie,
                     means=pd.Series({n: d.mean for n, d in dists.items()}), levels=table)


def _play_to_win(spec, rules, progress, run_options: dict) -> tuple[pd.DataFrame, int]:
    """The opponent-aware player against the spec's numbers of optimal players, paired with
    optimal in its seat, the games split evenly over the seats, on the run's backend;
    ``run_options["checkpoint_folder"]``: a folder for one checkpoint per table
    (``SPEC-play-to-win-K.json``), so that the same run again resumes them."""
    from pathlib import Path

    from ..exact.winodds import win_odds
    from ..multiplayer import seat_gain
    from ..strategies.play_to_win import PlayToWin

    opt = _exact_dists(rules, ["optimal"], progress)["optimal"]
    player = PlayToWin()
    rows = []
    for k in spec.opponents:
        report = None if progress is None else (lambda k: lambda done, total: progress(
            f"play-to-win against {k} optimal", done, total))(k)
        folder = run_options.get("checkpoint_folder")
        g = seat_gain(rules, player, "optimal", k, spec.table_games, seed=spec.seed, progress=report,
                      backend=run_options.get("backend"), jobs=run_options.get("jobs"),
                      scheduler=run_options.get("scheduler"),
                      checkpoint=None if folder is None else Path(folder) / f"{spec.name}-play-to-win-{k}.json")
        exact = win_odds([opt] * (k + 1))
        g.pop("seconds")
        g.pop("by_seat")
        g.pop("seat")
        rows.append({**g, "exact_optimal_p_win": float(exact.p_win[0]),
                     "exact_optimal_win_share": float(exact.win_share[0])})
    return pd.DataFrame(rows).set_index("opponents"), player.endgame


# -- rendering -------------------------------------------------------------------------------

def render_head_to_head(nums: HeadToHeadNumbers, spec: ExperimentSpec) -> Report:
    """The report of ``nums``: its tables (those ``spec.tables`` names), figures and reading.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "head-to-head", "strategies": ["random", "greedy"], "games": 64,
    ...                    "tables": ["wins", "ranking"], "plots": []}, name="d")
    >>> render_head_to_head(head_to_head_numbers(spec), spec).reading.startswith("Ranking the strategies")
    True
    """
    rules, names, wins_frame, win, ranking = nums.rules, nums.names, nums.wins, nums.matrix, nums.ranking
    rep = Report(spec.name, spec.title or f"Head to head on {_rules_text(rules)}", question=spec.question)
    rep.add_text("Method", (
        f"Each strategy plays {spec.games:,} solitaire games of {_rules_text(rules)} (rule key `{rules.key}`) on "
        "its own "
        f"independent dice (seeds spawned from {spec.seed}); game i of one strategy is matched with game i of the "
        "other, which is exactly a two-player game since no built-in strategy looks at the opponent's card. "
        "A win is a strictly higher total; intervals are 95% Wilson intervals."))
    if "wins" in spec.tables:
        cells = [fmt.percent_ci(r.win_rate, r.win_ci95_low, r.win_ci95_high) for r in wins_frame.itertuples()]
        display = pd.DataFrame({
            "Player": wins_frame["player"], "Opponent": wins_frame["opponent"],
            "Player wins": [c[0] for c in cells], "95% CI": [c[1] for c in cells],
            "Draw": [fmt.percent(v) for v in wins_frame["draw_rate"]],
            "Player loses": [fmt.percent(v) for v in wins_frame["loss_rate"]],
        })
        rep.add_table("wins", wins_frame, display=display, index=False, heading="Win and draw rates",
                      caption=f"Share of the {spec.games:,} games the player wins, draws and loses against the "
                              "opponent.")
    means, field_rate = ranking["mean_score"], ranking["mean_win_rate_vs_field"]
    rep.data.update(wins=wins_frame, ranking=ranking, matrix=win, numbers=nums)
    if "ranking" in spec.tables:
        display = pd.DataFrame({
            "Strategy": ranking.index, "Mean score": [fmt.number(v, 1) for v in ranking["mean_score"]],
            "Average win rate against the others": [fmt.percent(v) for v in ranking["mean_win_rate_vs_field"]],
            "Rank by mean": ranking["rank_by_mean"].astype(str), "Rank by wins": ranking["rank_by_wins"].astype(str),
        })
        rep.add_table("ranking", ranking, display=display, heading="Expected score against chance to win")
    if "win-matrix" in spec.plots:
        def matrix(fig):
            from .style import text_color

            ax = fig.add_subplot()
            m = win.to_numpy(dtype=float)
            im = ax.imshow(m, vmin=0, vmax=1, cmap="RdBu_r")
            ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
            ax.set_yticks(range(len(names)), names)
            ax.grid(False)
            for i in range(len(names)):
                for j in range(len(names)):
                    if i != j:
                        text = fmt.percent(m[i, j])
                        ax.text(j, i, text, ha="center", va="center", fontsize=8 if len(text) < 7 else 6.5,
                                color=text_color(im.cmap(im.norm(m[i, j]))))
            ax.set(xlabel="opponent", ylabel="player",
                   title=f"Win rate of the row player\n{_rules_text(rules)}, {spec.games:,} games per pair")
            fig.colorbar(im, ax=ax, label="win rate", format=_percent_axis(0))
        rep.add_figure("win_matrix", matrix, heading="Figure", size=(6.4, 5.2), caption=(
            f"Share of games the row strategy wins against the column strategy; {_games_text(rules, spec.games)} "
            "per pair, independent dice."))
    same = bool((ranking["rank_by_mean"] == ranking["rank_by_wins"]).all())
    lines = [
        "Ranking the strategies by mean score and by average win rate against the others gives "
        + ("the same order" if same else "different orders")
        + f" here. Best by mean: `{means.idxmax()}`; best by wins: `{field_rate.idxmax()}`. "
        "Maximizing the expected score is not the same objective as maximizing the chance to beat one "
        "opponent, but with these strategies the two "
        + ("agree." if same else "disagree: see the table.")]
    if nums.exact is not None:
        lines += _render_exact(rep, spec, nums)
    if nums.play_to_win is not None:
        lines += _render_play_to_win(rep, spec, nums)
    rep.reading = "\n\n".join(lines)
    return rep


@runner("head-to-head")
def run_head_to_head(spec: ExperimentSpec, *, run_options: dict | None = None) -> Report:
    """The head-to-head report: :func:`head_to_head_numbers`, then :func:`render_head_to_head`.

    >>> from yahtzee_sim.report.experiment import parse_spec
    >>> spec = parse_spec({"kind": "head-to-head", "strategies": ["random", "greedy"], "games": 64,
    ...                    "tables": ["wins", "ranking"], "plots": []}, name="d")
    >>> sorted(run_head_to_head(spec).data["ranking"].index)
    ['greedy', 'random']
    """
    return render_head_to_head(head_to_head_numbers(spec, run_options=run_options), spec)


def _render_exact(rep, spec, nums: HeadToHeadNumbers) -> list[str]:
    """The exact two-player win matrix next to the simulated one, and the computer levels."""
    from ..strategies.levels import LEVELS

    rules, names, ex = nums.rules, nums.names, nums.exact
    exact_names, frame, win, tie = ex.names, ex.frame, ex.matrix, ex.ties
    rep.data.update(exact_wins=frame, exact_matrix=win, exact_ties=tie, exact_means=ex.means)
    paired = frame.dropna(subset=["simulated_win"]) if "simulated_win" in frame else frame.iloc[:0]
    paired = paired[paired["player"] != paired["opponent"]]
    cells = [fmt.percent_ci(r.simulated_win, r.simulated_ci95_low, r.simulated_ci95_high) for r in paired.itertuples()]
    display = pd.DataFrame({
        "Player": paired["player"], "Opponent": paired["opponent"],
        "Exact P(player wins)": [fmt.percent(v, 3) for v in paired["exact_win"]],
        "Simulated": [c[0] for c in cells], "95% CI": [c[1] for c in cells],
        "Exact inside the CI": ["yes" if v else "no" for v in paired["exact_inside_ci"]],
        "Exact P(draw)": [fmt.percent(v, 3) for v in paired["exact_draw"]],
    })
    rep.add_table("exact_wins", frame, display=display, index=False, heading="Exact win rates beside the simulated ones",
                  caption=f"Exact P(win) and P(draw) of the player from the two exact score distributions "
                          f"(`yahtzee_sim.exact.winodds`; independent games of {_rules_text(rules)}), beside the "
                          f"simulated rate of {spec.games:,} games and its 95% Wilson interval.")
    matrix = win.copy()
    matrix.index = [f"{n} ({lv})" if (lv := _levels_of([n]).get(n)) else n for n in matrix.index]
    rep.add_table("exact_matrix", win, display=matrix.map(lambda v: fmt.percent(v, 2)).reset_index().rename(
        columns={"index": "Player (row) against opponent (column)"}),
        caption="Exact P(row player scores strictly more than the column player); the diagonal is a strategy "
                "against itself (it loses as often as it wins; the rest is the draws).")
    levels = _levels_of(names)
    out = []
    if levels:
        lv = list(levels)
        table = ex.levels
        exact_of = lambda n: n in ex.means.index
        rep.data["levels"] = table
        shown = pd.DataFrame({"Level": [f"{levels[n]} {LEVELS[levels[n]]}" for n in lv], "Plays as": lv,
                              "Exact mean": ["" if np.isnan(v) else fmt.number(v, 2) for v in table["exact mean"]],
                              "Simulated mean": [fmt.number(v, 1) for v in table["simulated mean"]]})
        for n in lv:
            shown[f"P(win) against {levels[n]}"] = [
                "" if m == n and not exact_of(n) else
                fmt.percent(v, 2) + ("" if kind == "exact" else " (simulated)")
                for m, v, kind in zip(lv, table[f"P(win) against {levels[n]}"], table[f"P(win) against {levels[n]} is"])]
        missing = [n for n in lv if not exact_of(n)]
        rep.add_table("exact_levels", table, display=shown, heading="Source 001's computer opponents",
                      caption=f"よわい・ふつう・つよい as the strategies they play as (`yahtzee_sim.strategies.levels`), "
                              f"on {_rules_text(rules)}: means and P(row level beats column level), exact from the "
                              "score distributions where the spec computes them"
                              + (f" (not for {', '.join(f'`{n}`' for n in missing)}: simulated, {spec.games:,} games)"
                                 if missing else "")
                              + ". Source 001's own game, Yacht, is in the distributions report.")
        if len(lv) > 1:
            top, low = lv[-1], lv[0]
            how = "exactly" if exact_of(top) and exact_of(low) else "simulated"
            out.append(f"Source 001's strongest computer ({levels[top]}, `{top}`) beats its weakest "
                       f"({levels[low]}, `{low}`) in {fmt.percent(table.loc[top, f'P(win) against {levels[low]}'], 2)} "
                       f"of {rules.title} games ({how}).")
    if len(paired):
        inside = int(paired["exact_inside_ci"].sum())
        out.insert(0, f"The exact win rates check the simulation: {inside} of {len(paired)} exact values lie inside "
                      "the simulated 95% interval (about 95% are expected to).")
    if "win-matrix" in spec.plots:
        _exact_matrix_figure(rep, spec, rules, nums.matrix, exact_names, win)
    return out


def _exact_matrix_figure(rep, spec, rules, simulated, exact_names, exact):
    def draw(fig):
        from .style import text_color

        axes = fig.subplots(1, 2)
        sim = simulated.reindex(index=exact_names, columns=exact_names)
        for ax, m, title in ((axes[0], exact, "exact"), (axes[1], sim, f"simulated, {spec.games:,} games per pair")):
            vals = m.to_numpy(dtype=float)
            im = ax.imshow(vals, vmin=0, vmax=1, cmap="RdBu_r")
            ax.set_xticks(range(len(exact_names)), exact_names, rotation=30, ha="right", fontsize=8)
            ax.set_yticks(range(len(exact_names)), exact_names, fontsize=8)
            ax.grid(False)
            for i in range(len(exact_names)):
                for j in range(len(exact_names)):
                    if np.isfinite(vals[i, j]):
                        ax.text(j, i, fmt.percent(vals[i, j]), ha="center", va="center", fontsize=6.5,
                                color=text_color(im.cmap(im.norm(vals[i, j]))))
            ax.set(xlabel="opponent", ylabel="player", title=title)
        fig.suptitle(f"P(row player wins), {_rules_text(rules)}: exact against simulated")
        # every cell carries its number; red: the row player wins more often, blue: less
    rep.add_figure("exact_matrix", draw, size=(10.5, 4.8), caption=(
        f"Left: exact P(row strategy wins) from the exact score distributions (red above 50%, blue below); "
        f"right: the simulated share "
        f"({_games_text(rules, spec.games)} per pair, independent dice; blank on the diagonal). The "
        "diagonal of the exact panel is a strategy against itself."))


def _count_list(numbers) -> str:
    """``1, 3 and 9``."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _render_play_to_win(rep, spec, nums: HeadToHeadNumbers) -> list[str]:
    """The play-to-win table, figure and reading lines."""
    rules, frame = nums.rules, nums.play_to_win
    rep.data["play_to_win"] = frame
    if "play-to-win" in spec.tables:
        display = pd.DataFrame({
            "Optimal opponents": frame.index.astype(str),
            "Play-to-win P(win)": [fmt.percent_ci(r.p_win, r.p_win_low, r.p_win_high)[0] for r in frame.itertuples()],
            "95% CI": [fmt.percent_ci(r.p_win, r.p_win_low, r.p_win_high)[1] for r in frame.itertuples()],
            "Exact P(win) of optimal in its place": [fmt.percent(v, 2) for v in frame["exact_optimal_p_win"]],
            "Win share (ties split)": [fmt.percent(v, 2) for v in frame["win_share"]],
            "Exact win share of optimal": [fmt.percent(v, 2) for v in frame["exact_optimal_win_share"]],
            "Gain in win share over optimal, same dice": [f"{100 * v:+.2f} points" for v in frame["gain"]],
            "95% CI of the gain": [f"{100 * lo:+.2f} to {100 * hi:+.2f}" for lo, hi in
                                   zip(frame["gain_low"], frame["gain_high"])],
            "Mean score, play-to-win / optimal": [f"{a:.1f} / {b:.1f}" for a, b in
                                                  zip(frame["mean_score"], frame["baseline_mean_score"])],
        })
        rep.add_table("play_to_win", frame, display=display, heading="Playing to win: the opponent-aware player",
                      caption=f"`play-to-win` (`yahtzee_sim.strategies.play_to_win.PlayToWin`: before each of its turns it "
                              f"reads the table and plays the turn with the risk-sensitive optimal strategy "
                              f"`optimal:theta=θ` whose exact rest-of-game mean and variance give it the best normal "
                              f"chance to finish above the best opponent; its last {nums.endgame} turns it plays "
                              f"by the exact target tables for its chance of finishing above every opponent) "
                              f"against n `optimal` players, {spec.table_games:,} games of "
                              f"{_rules_text(rules)} per table (seed {spec.seed}), split evenly over its seats; the "
                              "same games with `optimal` in its seat give the paired gain (the opponents play the "
                              "same games in both). Win share counts a tie for first as a split win.")
    if "play-to-win" in spec.plots:
        def draw(fig):
            ax = fig.add_subplot()
            x = np.arange(len(frame))
            ax.errorbar(x, 100 * frame["gain"], yerr=[100 * (frame["gain"] - frame["gain_low"]),
                                                     100 * (frame["gain_high"] - frame["gain"])],
                        fmt="o", capsize=4, label="play-to-win minus optimal, 95% CI")
            ax.axhline(0, color="black", linewidth=0.8)
            ax.set_xticks(x, [f"{k} opponent{'s' if k > 1 else ''}\n(fair share {100 / (k + 1):.1f}%)"
                              for k in frame.index])
            ax.set(ylabel="gain in win share (percentage points)",
                   title=f"What watching the table gains against optimal players\n{_rules_text(rules)}, "
                         f"{spec.table_games:,} games per table, same dice")
            # below the figure's edge, clear of the points wherever the gains fall (the saved image grows)
            fig.legend(*ax.get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0),
                       fontsize=8)
        rep.add_figure("play_to_win", draw, size=(6.4, 4.2), caption=(
            f"Gain in win share of `play-to-win` over `optimal` in the same seat on the same dice (games split "
            f"evenly over the seats), against "
            f"{_count_list(spec.opponents)} optimal players; {_games_text(rules, spec.table_games)} per table; "
            "bars: 95% intervals."))
    out = []
    for k, r in frame.iterrows():
        shown = r["gain_low"] > 0 or r["gain_high"] < 0
        out.append(f"Against {k} optimal player{'s' if k > 1 else ''}, `play-to-win` wins "
                   f"{fmt.percent(r['p_win'], 2)} of the games (optimal in its place: exactly "
                   f"{fmt.percent(r['exact_optimal_p_win'], 2)}); on the same dice its win share changes by "
                   f"{100 * r['gain']:+.2f} points (95% CI {100 * r['gain_low']:+.2f} to {100 * r['gain_high']:+.2f}), "
                   + ("a gain the interval shows." if r["gain_low"] > 0 else
                      "a loss the interval shows." if shown else "which the interval cannot tell from zero.")
                   + f" It scores {r['mean_score']:.1f} points on average against optimal's {r['baseline_mean_score']:.1f}.")
    return out
