"""heuristic with and without its end-of-game goals (items G and H of its docstring).

Balut is won on points, Yamb on the score: for each, the mean points (Balut) and mean
score of ``heuristic`` and of the same strategy with ``aim_card = False`` (the heuristic
as it was before the goals) over the same games (same seed: common random numbers),
the paired difference with its standard error and 95% interval, and the games per
second of each (wall and CPU) measured in the same run.

    .venv/bin/python benchmarks/heuristic_aims.py                    # 20,000 games each
    .venv/bin/python benchmarks/heuristic_aims.py --games 4000 --rules balut

Every other rule set has no goals and must play exactly as before. ``--save FILE`` writes
the per-game results of the goal-free heuristic on every rule set (run it with an older
checkout on ``PYTHONPATH``: there the class attribute is simply unused); ``--compare
FILE`` plays the same games here, with and without goals where there are none, and
checks that every game is the same.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from yahtzee_sim import get_rules, simulate
from yahtzee_sim.strategies.heuristic import HeuristicStrategy

GOAL_RULE_SETS = ["balut", "yamb"]
OTHER_RULE_SETS = ["yahtzee", "yahtzee-free-joker", "yahtzee-original-joker", "yacht", "yacht-classic", "yatzy",
                   "generala", "kniffel", "kismet", "yacht+faces-7", "maxi-yatzy", "maxi-yatzy+no-saved-throws"]
SIX_DICE = ("maxi-yatzy", "maxi-yatzy+no-saved-throws")   # slow to plan: fewer games
COLUMNS = ("total", "box_scores", "fill_turn")


class WithoutGoals(HeuristicStrategy):
    """``heuristic`` without the end-of-game goals: as it played before them."""

    name = "heuristic-without-goals"
    aim_card = False


class AnnouncesWhenItMust(HeuristicStrategy):
    """``heuristic`` with its goals, announcing in Yamb only when the turn must (faster)."""

    name = "heuristic-announces-when-it-must"
    announce_by_choice = False


def paired(new: np.ndarray, old: np.ndarray) -> tuple[float, float]:
    """Mean of ``new - old`` and its standard error.

    >>> paired(np.array([3, 5, 7]), np.array([1, 2, 3]))
    (3.0, 0.5773502691896258)
    """
    d = new.astype(np.float64) - old.astype(np.float64)
    return float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))


def _timed(rules: str, strategy, games: int, seed: int):
    simulate(rules, strategy, 256, seed=seed + 1)            # tables built once, not timed
    wall, cpu = time.perf_counter(), time.process_time()
    res = simulate(rules, strategy, games, seed=seed)
    return res, games / (time.perf_counter() - wall), games / (time.process_time() - cpu)


def goal_rates(rules: str, box_scores: np.ndarray) -> str:
    """How often each end-of-game goal was reached, and each Balut box's mean count.

    >>> goal_rates("yamb", np.zeros((2, 52), int))
    'column bonus 0.000 0.000 0.000 0.000'
    """
    from yahtzee_sim.strategies.aims import card_aims

    r = get_rules(rules)
    aims = card_aims(r)
    names = [r.box_names[g.boxes[0]].rsplit("_", 1)[0] for g in aims.totals]
    reached = [(box_scores[:, g.boxes].sum(axis=1) >= g.threshold).mean() for g in aims.totals]
    if rules == "yamb":
        return "column bonus " + " ".join(f"{x:.3f}" for x in reached)
    full = [(box_scores[:, g.boxes] > 0).all(axis=1).mean() for g in aims.full]
    full_names = [r.box_names[g.boxes[0]].rsplit("_", 1)[0] for g in aims.full]
    each = (box_scores[:, aims.each > 0] > 0).sum(axis=1).mean()
    return (" ".join(f"{n} {x:.3f}" for n, x in zip(names, reached)) + "; all four " +
            " ".join(f"{n} {x:.3f}" for n, x in zip(full_names, full)) + f"; Baluts a game {each:.3f}")


def compare_means(rules_list, games: int, seed: int) -> None:
    print(f"{games:,} games per rule set, seed {seed}, load average {os.getloadavg()[0]:.2f} at the start")
    for rules in rules_list:
        new, new_wall, new_cpu = _timed(rules, "heuristic", games, seed)
        old, old_wall, old_cpu = _timed(rules, WithoutGoals(), games, seed)
        for what in (["points"] if "points" in new.games else []) + ["total"]:
            a, b = new.games[what], old.games[what]
            m, se = paired(a, b)
            label = "mean points" if what == "points" else "mean score"
            print(f"{rules:<6} {label:<12} with goals {a.mean():8.3f}  without {b.mean():8.3f}  "
                  f"difference {m:+.3f} (s.e. {se:.3f}, 95% [{m - 1.96 * se:+.3f}, {m + 1.96 * se:+.3f}])")
        for label, res in (("with goals", new), ("without", old)):
            print(f"{rules:<6} goals reached {label:<11}{goal_rates(rules, res.games['box_scores'])}")
        print(f"{rules:<6} games/s      with goals {new_wall:8,.0f} wall {new_cpu:8,.0f} CPU; "
              f"without {old_wall:8,.0f} wall {old_cpu:8,.0f} CPU; load average {os.getloadavg()[0]:.2f}",
              flush=True)
        if get_rules(rules).announces:
            must, must_wall, must_cpu = _timed(rules, AnnouncesWhenItMust(), games, seed)
            a = must.games["total"]
            m, se = paired(a, old.games["total"])
            print(f"{rules:<6} announcing only when it must: mean score {a.mean():8.3f}, difference {m:+.3f} "
                  f"(s.e. {se:.3f}) over without goals; {goal_rates(rules, must.games['box_scores'])}; "
                  f"{must_wall:,.0f} games/s wall {must_cpu:,.0f} CPU", flush=True)


def _games(rules: str, strategy, games: int, seed: int) -> dict:
    n = min(games, 2000) if rules in SIX_DICE else games
    g = simulate(rules, strategy, n, seed=seed).games
    return {f"{rules}/{c}": np.asarray(g[c]) for c in COLUMNS}


def save(path: str, games: int, seed: int) -> None:
    out = {}
    for rules in OTHER_RULE_SETS + GOAL_RULE_SETS:
        out.update(_games(rules, WithoutGoals(), games, seed))
        print(f"{rules}: saved", file=sys.stderr, flush=True)
    np.savez_compressed(path, **out)


def compare(path: str, games: int, seed: int) -> int:
    saved = np.load(path)
    bad = 0
    for rules in OTHER_RULE_SETS + GOAL_RULE_SETS:
        players = [("heuristic-without-goals", WithoutGoals())]
        if rules not in GOAL_RULE_SETS:
            players.append(("heuristic", "heuristic"))
        for label, strategy in players:
            now = _games(rules, strategy, games, seed)
            same = all(np.array_equal(saved[k], v) for k, v in now.items())
            bad += not same
            print(f"{rules:<28}{label:<26}{len(now[f'{rules}/total']):>7,} games "
                  f"{'identical' if same else 'DIFFERENT'}", flush=True)
    return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--rules", action="append", choices=GOAL_RULE_SETS, help="default: balut and yamb")
    p.add_argument("--save", metavar="FILE", help="save the goal-free heuristic's games of every rule set")
    p.add_argument("--compare", metavar="FILE", help="check that the games saved with --save are played again")
    args = p.parse_args(argv)
    if args.save:
        save(args.save, args.games, args.seed)
        return 0
    if args.compare:
        return compare(args.compare, args.games, args.seed)
    compare_means(args.rules or GOAL_RULE_SETS, args.games, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
