"""Strategies: small vectorized plug-ins behind one interface (:mod:`yahtzee_sim.strategy`).

Importing this package registers the built-in ones; the registry imports it the first
time a strategy is asked for by name.
"""

from ..strategy import (STRATEGIES, Strategy, best_legal, code_fingerprint, get_strategy, register,
                        register_family, strategy_names, uniform_choice)
from . import simple  # noqa: F401  (registers random and keep-largest)
from . import lookahead  # noqa: F401  (registers greedy)
from . import heuristic  # noqa: F401  (registers heuristic)
from . import optimal  # noqa: F401  (registers optimal)
from . import levels  # noqa: F401  (registers cpu:weak|normal|strong)

# optimal:theta=<x> is built on the exact engine's risk tables, which use this registry:
# its module is imported when such a strategy is first asked for
register_family("optimal", "yahtzee_sim.strategies.risk:from_params", "optimal:theta=<x>")
# target:T=<score> (maximize P(score >= T)) is built on the exact engine's target tables
register_family("target", "yahtzee_sim.strategies.target:from_params", "target:T=<score>")

__all__ = ["Strategy", "STRATEGIES", "register", "register_family", "get_strategy", "strategy_names",
           "best_legal", "uniform_choice", "code_fingerprint"]
