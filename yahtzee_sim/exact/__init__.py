"""The exact engine: true probabilities and optimal play, computed, not sampled.

What it offers (each also at the package's front door, ``import yahtzee_sim as ys``):

* :func:`~yahtzee_sim.exact.solver.solve`: the optimal strategy's value in every
  reachable state (expected score and sd), cached on disk;
* :func:`~yahtzee_sim.exact.policy.policy_value` and
  :func:`~yahtzee_sim.exact.distribution.distribution`: any strategy's exact mean, and
  its exact score distribution with the events of a game;
* :func:`~yahtzee_sim.exact.target.target_solve`: the chance of reaching each score
  with play that maximizes it; :func:`~yahtzee_sim.exact.risk.solve_risk`:
  risk-sensitive play;
* :func:`~yahtzee_sim.exact.advisor.advise`: the best keep or box in a position;
* :func:`~yahtzee_sim.exact.odds.one_roll_odds`, :mod:`~yahtzee_sim.exact.turns`:
  the odds of one roll and of a turn, as fractions;
* :func:`~yahtzee_sim.exact.winodds.win_odds`: exact win odds at a table;
* :func:`~yahtzee_sim.exact.extremes.extreme_score`: the best and worst possible cards.

Modules are imported on use: ``import yahtzee_sim.exact`` loads nothing heavy. (The
distribution function is ``ys.distribution``: here the name is its module's.)

>>> import yahtzee_sim.exact as exact
>>> exact.one_roll_odds("yacht").fraction("large_straight")
Fraction(5, 162)
"""

import importlib

_EXPORTS = {
    "solve": "solver", "Solution": "solver", "policy_value": "policy", "PolicyValue": "policy",
    "ScoreDistribution": "distribution", "target_solve": "target",
    "TargetSolution": "target", "solve_risk": "risk", "advise": "advisor", "advise_batch": "advisor",
    "Advice": "advisor", "one_roll_odds": "odds", "win_odds": "winodds", "extreme_score": "extremes",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))


__all__ = sorted(_EXPORTS)
