"""Strategies: small vectorized plug-ins behind one interface (see :class:`Strategy`)."""

from .base import (STRATEGIES, Strategy, best_legal, get_strategy, register,
                   register_family, strategy_names, uniform_choice)
from . import simple  # noqa: F401  (registers random and keep-largest)
from . import lookahead  # noqa: F401  (registers greedy and heuristic)
from . import optimal  # noqa: F401  (registers optimal)
from . import levels, risk  # noqa: F401  (cpu:weak|normal|strong, optimal:theta=<x>)

__all__ = ["Strategy", "STRATEGIES", "register", "register_family", "get_strategy", "strategy_names",
           "best_legal", "uniform_choice"]
