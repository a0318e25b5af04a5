"""Strategies: small vectorized plug-ins behind one interface (see :class:`Strategy`)."""

from .base import (STRATEGIES, Strategy, best_legal, get_strategy, register,
                   strategy_names, uniform_choice)
from . import simple  # noqa: F401  (registers random and keep-largest)
from . import lookahead  # noqa: F401  (registers greedy and heuristic)
from . import optimal  # noqa: F401  (registers optimal)

__all__ = ["Strategy", "STRATEGIES", "register", "get_strategy", "strategy_names",
           "best_legal", "uniform_choice"]
