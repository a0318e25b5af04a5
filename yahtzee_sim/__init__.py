"""yahtzee-sim: exact and simulated answers about Yahtzee-family dice games.

>>> import yahtzee_sim as ys
>>> res = ys.simulate("yahtzee", "keep-largest", 4096, seed=1)
>>> 100 < res.summary()["mean"] < 200
True
"""

import importlib

__version__ = "0.1.0"

# Public names and the module that defines each. They are imported on first use
# (PEP 562), so ``import yahtzee_sim`` and ``yahtzee-sim --version`` stay instant.
_EXPORTS = {
    "simulate": "api", "simulate_turns": "api",
    "DiceTables": "dice", "dice_tables": "dice",
    "SEED_BLOCK": "engine", "StrategyError": "engine",
    "GameAggregate": "results", "SimulationResult": "results", "TurnsResult": "results",
    "RuleSet": "rules", "get_rules": "rules", "rule_names": "rules", "rule_options": "rules",
    "GameState": "state", "TurnOptions": "state",
    "Strategy": "strategies", "get_strategy": "strategies", "register": "strategies",
    "strategy_names": "strategies",
    "benchmark": "benchmarking", "Benchmark": "benchmarking",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = [
    "DiceTables", "dice_tables", "simulate", "simulate_turns", "SEED_BLOCK", "StrategyError",
    "TurnsResult", "GameAggregate", "SimulationResult", "RuleSet", "get_rules", "rule_names",
    "rule_options", "GameState", "TurnOptions", "Strategy", "get_strategy", "register",
    "strategy_names", "benchmark", "Benchmark", "__version__",
]
