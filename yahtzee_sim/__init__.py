"""yahtzee-sim: exact and simulated answers about Yahtzee-family dice games.

>>> import yahtzee_sim as ys
>>> res = ys.simulate("yahtzee", "keep-largest", 4096, seed=1)
>>> 100 < res.summary()["mean"] < 200
True
"""

from .api import simulate, simulate_turns
from .dice import DiceTables, dice_tables
from .engine import SEED_BLOCK, StrategyError
from .results import GameAggregate, SimulationResult, TurnsResult
from .rules import RuleSet, get_rules, rule_names, rule_options
from .state import GameState, TurnOptions
from .strategies import Strategy, get_strategy, register, strategy_names

__version__ = "0.1.0"

__all__ = [
    "DiceTables", "dice_tables", "simulate", "simulate_turns", "SEED_BLOCK", "StrategyError",
    "TurnsResult", "GameAggregate", "SimulationResult", "RuleSet", "get_rules", "rule_names",
    "rule_options", "GameState", "TurnOptions", "Strategy", "get_strategy", "register",
    "strategy_names", "__version__",
]
