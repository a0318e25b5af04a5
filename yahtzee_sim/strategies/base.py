"""Deprecated home of the strategy interface: it is :mod:`yahtzee_sim.strategy` now.

Kept so that ``from yahtzee_sim.strategies.base import Strategy`` in a user's plug-in
still works; new code imports from :mod:`yahtzee_sim.strategy` (or ``yahtzee_sim``).

>>> from yahtzee_sim.strategies.base import Strategy as Old
>>> from yahtzee_sim.strategy import Strategy
>>> Old is Strategy
True
"""

from ..strategy import (STRATEGIES, Strategy, best_legal, code_fingerprint, default_announcement,  # noqa: F401
                        get_strategy, register, register_family, strategy_names, uniform_choice)
