"""yahtzee-sim: exact and simulated answers about Yahtzee-family dice games.

The front door: ``import yahtzee_sim as ys`` offers the whole job.

* rules and strategies: :func:`get_rules`, :func:`rule_names`, :func:`get_strategy`,
  :func:`strategy_names`, :class:`Strategy` (write your own), :func:`register`;
* simulation: :func:`simulate` (games), :func:`simulate_turns` (first turns),
  :func:`simulate_table` (2 to 20 players at one table);
* the exact engine: :func:`solve` (optimal play), :func:`policy_value` (any
  strategy's exact mean), :func:`distribution` (its exact score distribution),
  :func:`target` (the chance of reaching each score), :func:`advise` (the best move
  in a position), :func:`one_roll_odds`, :func:`win_odds`, :func:`extreme_score`.

>>> import yahtzee_sim as ys
>>> res = ys.simulate("yahtzee", "keep-largest", 4096, seed=1)
>>> 100 < res.summary()["mean"] < 200
True
>>> ys.one_roll_odds("yahtzee").fraction("five_of_a_kind")
Fraction(1, 1296)
"""

import importlib
import os

__version__ = "0.1.0"

# OpenBLAS's threads (NumPy's and SciPy's) spin for about a tenth of a second after each
# product before they sleep: the exact engine's sums of long vectors wake them again and
# again, and their spinning took as much CPU as the loss accounting's own work, from the
# core a second process of ours computes on. Put to sleep at once instead (the same
# threads share each product as before: the same floats). Read when OpenBLAS loads, so
# set before NumPy is imported; a value the user set is kept.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# NumPy asks Linux for transparent huge pages for each array of 4 MB or more; a fresh one
# costs a 2 MB zeroing, often a compaction first, and the exact passes write hundreds of MB
# once each: ordinary pages instead (NUMPY_MADVISE_HUGEPAGE=0; a value the user set is kept).
from .limits import small_pages as _small_pages  # noqa: E402 - after the BLAS setting, before NumPy

_small_pages()

# Public names and the module that defines each. They are imported on first use
# (PEP 562), so ``import yahtzee_sim`` and ``yahtzee-sim --version`` stay instant.
_EXPORTS = {
    "simulate": "api", "simulate_turns": "api", "simulate_table": "multiplayer",
    "solve": "exact.solver", "policy_value": "exact.policy", "distribution": "exact.distribution",
    "target": ("exact.target", "target_solve"), "target_solve": "exact.target",
    "advise": "exact.advisor", "advise_batch": "exact.advisor", "one_roll_odds": "exact.odds",
    "win_odds": "exact.winodds", "extreme_score": "exact.extremes", "solve_risk": "exact.risk",
    "DiceTables": "dice", "dice_tables": "dice",
    "SEED_BLOCK": "engine", "StrategyError": "engine",
    "GameAggregate": "results", "SimulationResult": "results", "TurnsResult": "results",
    "RuleSet": "rules", "get_rules": "rules", "rule_names": "rules", "rule_options": "rules",
    "GameState": "state", "TurnOptions": "state",
    "Strategy": "strategy", "get_strategy": "strategy", "register": "strategy",
    "strategy_names": "strategy", "best_legal": "strategy", "ChunkDecisions": "strategy",
    "compare_results": "stats",
    "ask": "questions", "check": ("report.claims", "check"),   # a claims file, checked and reported
    "benchmark": "benchmarking", "Benchmark": "benchmarking",
    "check_strategy": "checks", "check_ruleset": "checks",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name] if isinstance(_EXPORTS[name], tuple) else (_EXPORTS[name], name)
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "DiceTables", "dice_tables", "simulate", "simulate_turns", "simulate_table", "solve", "policy_value",
    "distribution", "target", "target_solve", "advise", "advise_batch", "one_roll_odds", "win_odds",
    "extreme_score", "solve_risk", "best_legal", "ChunkDecisions", "compare_results", "SEED_BLOCK", "StrategyError",
    "TurnsResult", "GameAggregate", "SimulationResult", "RuleSet", "get_rules", "rule_names",
    "rule_options", "GameState", "TurnOptions", "Strategy", "get_strategy", "register",
    "strategy_names", "ask", "check", "benchmark", "Benchmark", "check_strategy", "check_ruleset", "__version__",
]
