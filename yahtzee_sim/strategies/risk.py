"""``optimal:theta=<x>``: risk-sensitive optimal play (maximizes E[exp(theta * score)]).

The optimal strategy's machinery (a decision table built once, or with
``table=False`` one plan per distinct position of a batch; boxes by
``gain + value(next state)``) with the values of
:func:`~yahtzee_sim.exact.risk.solve_risk`: the certainty equivalents, for which
``gain + value`` orders the boxes exactly as E[exp(theta * score)] does.
``optimal:theta=0`` is plain ``optimal``.

>>> from yahtzee_sim.strategies import get_strategy
>>> get_strategy("optimal:theta=0.02").name, get_strategy("optimal:theta=0").name
('optimal:theta=0.02', 'optimal:theta=0')
>>> get_strategy("optimal:beta=1")
Traceback (most recent call last):
...
ValueError: optimal strategies take one parameter, theta (e.g. optimal:theta=0.02), got 'beta=1'
"""

from __future__ import annotations

import numpy as np

from ..strategy import ChunkDecisions
from .optimal import OptimalStrategy

__all__ = ["RiskStrategy", "from_params", "risk_decision_table"]


class RiskStrategy(OptimalStrategy):
    """Maximizes E[exp(theta * final score)] (exact tables, disk-cached)."""

    description = "risk-sensitive optimal play: maximizes E[exp(theta * score)]"

    def __init__(self, theta: float, solution=None, *, table: bool = True, progress=True):
        from ..exact.risk import parse_theta

        super().__init__(None, table=table, progress=progress)
        self.theta = parse_theta(theta)
        self.name = f"optimal:theta={self.theta:g}"
        self._risk = solution

    def prepare(self, rules):
        from ..exact.risk import solve_risk
        from ..exact.solver import rules_fingerprint

        super().prepare(rules)               # the layout, the keep tables and the mean solve
        if self.theta != 0:
            sol = self._risk
            if sol is None or rules_fingerprint(sol.rules) != rules_fingerprint(rules):
                sol = solve_risk(rules, self.theta)
            self.risk_solution = sol
            self._values = np.ascontiguousarray(sol.values).reshape(-1)
        return self

    def chunk_decisions(self, rules):
        """As optimal's, but its boxes are never computed from the plain values: a
        chunk's keeps up to exact ties where it does not read its decision table."""
        declared = super().chunk_decisions(rules)
        if declared.tables is not None:
            return declared
        from ..exact.distribution import optimal_keeps

        return ChunkDecisions(keeps_up_to_ties=optimal_keeps,
                              mirrors={"keeps_up_to_ties": ("keep", "box", "_plan", "prepare")})

    def _table_kind(self) -> tuple:
        return ("mean", 0.0) if self.theta == 0 else ("risk", float(self.theta))

    def _decision_table(self, trusted=None):
        if self.theta == 0:
            return super()._decision_table(trusted)
        return risk_decision_table(self.risk_solution, progress=self.progress, trusted=trusted)

    def _plan(self, key):
        if self.theta == 0:
            return super()._plan(key)
        from ..exact.risk import risk_turn

        sp = self._space
        uniq, inv = np.unique(key, return_inverse=True)
        nf, nu = sp.n_flag, sp.n_u
        um, uu, uf = uniq // (nu * nf), (uniq // nf) % nu, uniq % nf
        k = self._model.n_keeps
        plans = [None] + [np.empty((len(uniq), k + 1)) for _ in range(1, self.rules.n_rolls)]
        for p in plans[1:]:
            p[:, k] = -np.inf                            # the padding column of _sub_pos
        for lo in range(0, len(uniq), self.chunk):
            hi = min(lo + self.chunk, len(uniq))
            _, kv = risk_turn(self.rules, self._values, um[lo:hi], uu[lo:hi], uf[lo:hi],
                              self.theta, plan=True)
            for j in range(1, self.rules.n_rolls):
                plans[j][lo:hi, :k] = kv[j].T
        return plans, inv


def risk_decision_table(risk_solution, *, cache: bool = True, cache_dir=None, progress=None,
                        trusted=None):
    """The :class:`~yahtzee_sim.exact.decisions.DecisionTable` of a
    :class:`~yahtzee_sim.exact.risk.RiskSolution` (keeps from
    :func:`~yahtzee_sim.exact.risk.risk_turn`), disk-cached like the mean's.

    >>> from yahtzee_sim.exact.risk import solve_risk
    >>> t = risk_decision_table(solve_risk("yacht-classic", 0.05, cache=False), cache=False)
    >>> t.kind, t.theta
    ('risk', 0.05)
    """
    from ..exact.decisions import table_of_values
    from ..exact.risk import risk_turn

    rules, theta = risk_solution.rules, float(risk_solution.theta)
    values = np.ascontiguousarray(risk_solution.values).reshape(-1)

    def plan_values(mask, u, flag):
        return risk_turn(rules, values, mask, u, flag, theta, plan=True)[1]

    return table_of_values(rules, "risk", theta, values, plan_values, cache=cache, cache_dir=cache_dir,
                           progress=progress, trusted=trusted)


def from_params(params: str) -> RiskStrategy:
    """The strategy of a name ``optimal:<params>`` (registered in the strategies package)."""
    name, sep, value = params.partition("=")
    if name != "theta" or not sep:
        raise ValueError(f"optimal strategies take one parameter, theta (e.g. optimal:theta=0.02), "
                         f"got {params!r}")
    return RiskStrategy(value)

