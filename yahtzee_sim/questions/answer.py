"""The answer to a question: the exact value, a simulated cross-check, how, and a verdict.

>>> from fractions import Fraction
>>> a = Answer(question=None, exact=Fraction(5, 9), estimate=0.556, ci=(0.553, 0.559), n=100000,
...            unit="share", method="exact: ...", simulated_method="100,000 positions")
>>> a.value, a.exact_text
(0.5555555555555556, '5/9 = 55.56%')
>>> sample_statistic("mean", [1, 2, 3, 4])[0]
2.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # the two-sided 95% normal quantile


@dataclass
class Answer:
    """What the project found for one question.

    exact : the exact value (a ``Fraction`` where rational, an ``int`` for extremes and
        percentiles, a ``float`` where the exact engine works in floating point, e.g.
        a game's score distribution), or None when only simulated.
    estimate, ci, n : the simulated estimate, its 95% interval and the sample size
        (None, None, 0 when nothing was simulated).
    unit : ``share`` (a probability), ``points``, ``rolls`` or ``number``.
    method, simulated_method : how each was computed, in words; note : a caveat
        (e.g. "no exact method for this event: simulated only").
    extra : further named values (e.g. a hold's cost beside the best hold).
    claimed, precision, criterion, verdict : filled by :meth:`judge`.
    """

    question: Any
    exact: Any = None
    estimate: float | None = None
    ci: tuple | None = None
    n: int = 0
    unit: str = "number"
    method: str = ""
    simulated_method: str = ""
    note: str = ""
    extra: dict = field(default_factory=dict)
    claimed: Any = None
    precision: float | None = None
    criterion: dict | None = None
    verdict: str | None = None
    seconds: float = 0.0

    @property
    def value(self) -> float:
        """The exact value as a float, else the simulated estimate."""
        return float(self.exact) if self.exact is not None else float(self.estimate)  # type: ignore[arg-type]

    @property
    def exact_fraction(self) -> Fraction | None:
        """The exact value as a Fraction when it is one (not an integer)."""
        if isinstance(self.exact, Fraction) and self.exact.denominator != 1:
            return self.exact
        return None

    def judge(self, claimed=None, precision=0, criterion=None) -> Answer:
        """Attach a verdict on a claimed value stated to ``precision`` (or on a criterion).

        The exact value decides when there is one; otherwise the simulated 95% interval
        (see :mod:`yahtzee_sim.questions.verdict`).
        """
        if claimed is None and criterion is None:
            return self
        from .verdict import verdict_for_criterion, verdict_for_value

        if claimed is not None:
            self.claimed, self.precision = claimed, precision
            if self.exact is not None:
                self.verdict = verdict_for_value(self.exact, claimed, precision)
            else:
                self.verdict = verdict_for_value(self.estimate, claimed, precision, ci=self.ci)
        elif criterion is not None:
            self.criterion = criterion
            self.verdict = verdict_for_criterion(self.value, criterion,
                                                 ci=None if self.exact is not None else self.ci)
        return self

    # -- words ------------------------------------------------------------------------
    def _fmt(self, x) -> str:
        if x is None:
            return ""
        if self.unit == "share":
            if isinstance(x, Fraction) and x.denominator != 1:
                return f"{x} = {float(x):.2%}"
            return f"{float(x):.2%}" if float(x) >= 0.0001 or float(x) == 0 else f"{float(x):.3g}"
        if isinstance(x, Fraction) and x.denominator != 1:
            return f"{float(x):.4f} ({x})" if x.denominator < 10**7 else f"{float(x):.4f}"
        if isinstance(x, (int, np.integer)) or (isinstance(x, Fraction) and x.denominator == 1):
            return f"{int(x):,}"
        return f"{float(x):.4f}" if abs(float(x)) < 1000 else f"{float(x):,.2f}"

    @property
    def exact_text(self) -> str:
        """The exact value in words (a share in percent, a fraction kept)."""
        return self._fmt(self.exact)

    @property
    def simulated_text(self) -> str:
        """The simulated estimate with its 95% interval."""
        if self.estimate is None:
            return ""
        if self.ci is None:
            return self._fmt(self.estimate)
        lo, hi = self.ci
        if self.unit == "share":
            return f"{self.estimate:.2%} (95% CI {lo:.2%} to {hi:.2%})"
        return f"{self.estimate:.3f} (95% CI {lo:.3f} to {hi:.3f})"

    @property
    def claimed_text(self) -> str:
        if self.criterion is not None:
            return self.criterion.get("reading", str(self.criterion))
        if self.claimed is None:
            return ""
        if isinstance(self.claimed, Fraction):
            if not self.precision:
                return f"{self.claimed} (exact)"
            step = f"{self.precision * 100:g} percentage point" if self.unit == "share" else f"{self.precision:g}"
            return f"{self.claimed} (to {step}{'s' if self.unit == 'share' and step[:2] != '1 ' else ''})"
        if self.unit == "share":
            text = f"{float(self.claimed) * 100:g}%"
            step = f"{self.precision * 100:g}" if self.precision else ""
            return text + (" (exact)" if not self.precision else
                           f" (to {step} percentage point{'' if step == '1' else 's'})")
        return f"{self.claimed:,g}" + (" (exact)" if not self.precision else f" (to {self.precision:,g})")

    def __str__(self) -> str:
        """Several lines: the question, the exact value, the simulation, the verdict, how."""
        lines = [self.question.text if self.question is not None else "question"]
        if self.exact is not None:
            lines.append(f"  exact:     {self.exact_text}")
        if self.estimate is not None:
            lines.append(f"  simulated: {self.simulated_text}")
        for key, value in self.extra.items():
            lines.append(f"  {key.replace('_', ' ')}: {self._fmt(value) if not isinstance(value, str) else value}")
        if self.verdict is not None:
            lines.append(f"  claimed:   {self.claimed_text} -> {self.verdict}")
        lines.append(f"  how:       {self.method}" + (f"; simulated: {self.simulated_method}"
                                                          if self.simulated_method else ""))
        if self.note:
            lines.append(f"  note:      {self.note}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Plain values (fractions kept as Fraction; the CLI writes them as numerator/denominator/value)."""
        q = self.question
        out = {"question": q.text if q is not None else "", "ask": getattr(q, "ask", None),
               "event": q.event.text if q is not None else None, "scope": getattr(q, "scope", None),
               "rules": q.rules.key if q is not None else None, "play": getattr(q, "play", None),
               "unit": self.unit,
               "exact": self.exact if isinstance(self.exact, Fraction) and self.exact.denominator != 1
               else (None if self.exact is None else (int(self.exact) if isinstance(self.exact, (int, np.integer))
                                                      or isinstance(self.exact, Fraction) else float(self.exact))),
               "estimate": None if self.estimate is None else float(self.estimate),
               "ci95_low": None if self.ci is None else float(self.ci[0]),
               "ci95_high": None if self.ci is None else float(self.ci[1]),
               "n_simulated": int(self.n), "method": self.method, "simulated_method": self.simulated_method,
               "note": self.note}
        for key, value in self.extra.items():
            out[key] = value
        if self.verdict is not None:
            out.update({"claimed": self.claimed, "precision": self.precision, "criterion": self.criterion,
                        "verdict": self.verdict})
        return out

    def to_frame(self):
        """One row (pandas): the question, exact, simulated with interval, method, verdict.

        >>> float(Answer(question=None, exact=Fraction(1, 4), unit="share").to_frame().loc[0, "exact"])
        0.25
        """
        import pandas as pd

        row = self.to_dict()
        exact = row.pop("exact")
        row["exact"] = None if exact is None else float(exact)
        row["exact_fraction"] = str(exact) if isinstance(exact, Fraction) else None
        if isinstance(row.get("claimed"), Fraction):
            row["claimed"] = float(row["claimed"])
        return pd.DataFrame([row])

    def __repr__(self) -> str:
        return f"Answer(exact={self.exact!r}, estimate={self.estimate!r}, ci={self.ci!r}, verdict={self.verdict!r})"


def combine(q, a: Answer, b: Answer) -> Answer:
    """``a`` minus ``b`` (``q.compare == "difference"``) or ``a`` over ``b`` (``"ratio"``).

    Exact when both are; the simulated estimates combined the same way, with a 95%
    interval that treats the two simulations as independent (Katz's log interval for a
    ratio of two chances, the delta method otherwise).

    >>> from fractions import Fraction
    >>> class Q: compare = "ratio"; versus = None
    >>> combine(Q(), Answer(None, exact=Fraction(5, 9), unit="share"), Answer(None, exact=Fraction(11, 36))).exact
    Fraction(20, 11)
    """
    ratio = q.compare == "ratio"

    def op(x, y):
        if ratio:
            if y == 0:
                return math.inf
            if isinstance(x, (int, np.integer, Fraction)) and isinstance(y, (int, np.integer, Fraction)):
                return Fraction(int(x) if not isinstance(x, Fraction) else x) / y
            return float(x) / float(y)
        if isinstance(x, float) or isinstance(y, float):
            return float(x) - float(y)
        return x - y

    exact = op(a.exact, b.exact) if a.exact is not None and b.exact is not None else None
    est = ci = None
    if a.estimate is not None and b.estimate is not None:
        est = op(a.estimate, b.estimate)
        if a.ci is not None and b.ci is not None and math.isfinite(est):
            if ratio and a.unit == "share" and b.unit == "share" and a.estimate > 0 and b.estimate > 0:
                k1, n1, k0, n0 = a.estimate * a.n, a.n, b.estimate * b.n, b.n
                se = math.sqrt(max(1 / k1 - 1 / n1 + 1 / k0 - 1 / n0, 0.0))   # Katz
                ci = (est * math.exp(-Z95 * se), est * math.exp(Z95 * se))
            else:
                se1, se2 = (a.ci[1] - a.ci[0]) / (2 * Z95), (b.ci[1] - b.ci[0]) / (2 * Z95)
                if ratio and a.estimate and b.estimate:
                    s = math.sqrt((se1 / a.estimate) ** 2 + (se2 / b.estimate) ** 2)
                    ci = (est * math.exp(-Z95 * s), est * math.exp(Z95 * s))
                elif not ratio:
                    s = math.hypot(se1, se2)
                    ci = (est - Z95 * s, est + Z95 * s)
    word = "divided by" if ratio else "minus"
    method = f"({a.method}) {word} ({b.method})"
    sim = f"({a.simulated_method}) {word} ({b.simulated_method})" if est is not None else ""
    extra = {"this": a.exact_text or a.simulated_text, "versus": b.exact_text or b.simulated_text}
    note = "; ".join(x for x in (a.note, b.note) if x)
    return Answer(question=q, exact=exact, estimate=est, ci=ci, n=min(a.n, b.n),
                  unit="ratio" if ratio else a.unit, method=method, simulated_method=sim, note=note, extra=extra)


# -- simulated statistics with a 95% interval ---------------------------------------------

def sample_statistic(ask: str, x, *, q: float | None = None) -> tuple[float, tuple | None]:
    """The simulated ``ask`` of the sample ``x`` (0/1 for ``chance``) and its 95% interval.

    chance: Wilson; mean: t (normal) interval; sd: delta method on the variance (uses the
    fourth moment); percentile: order statistics (binomial ranks); max, min: the sample's
    extreme (no interval: a simulation only bounds them from one side).

    >>> est, (lo, hi) = sample_statistic("chance", [1, 0, 0, 1])
    >>> est, round(lo, 3), round(hi, 3)
    (0.5, 0.15, 0.85)
    """
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n == 0:
        raise ValueError("no simulated outcomes")
    if ask == "chance":
        k = float(x.sum())
        p = k / n
        z2 = Z95 * Z95
        centre = (p + z2 / (2 * n)) / (1 + z2 / n)
        half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
        return p, (max(0.0, centre - half), min(1.0, centre + half))
    if ask in ("mean", "expected-rolls"):
        m = float(x.mean())
        se = float(x.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
        return m, (m - Z95 * se, m + Z95 * se)
    if ask == "sd":
        s = float(x.std(ddof=1)) if n > 1 else 0.0
        d = x - x.mean()
        m4 = float((d ** 4).mean())
        var_s2 = max(m4 - s ** 4, 0.0) / n
        half = Z95 * math.sqrt(var_s2) / (2 * s) if s > 0 else 0.0
        return s, (max(0.0, s - half), s + half)
    if ask == "percentile" and q is not None:
        xs = np.sort(x)
        p = q / 100
        k = max(int(math.ceil(p * n)) - 1, 0)   # the smallest x with at least q% at or below
        half = Z95 * math.sqrt(n * p * (1 - p))
        lo_i, hi_i = max(int(math.floor(p * n - half)) - 1, 0), min(int(math.ceil(p * n + half)), n - 1)
        return float(xs[k]), (float(xs[lo_i]), float(xs[hi_i]))
    if ask == "max":
        return float(x.max()), None
    if ask == "min":
        return float(x.min()), None
    raise ValueError(f"unknown ask {ask!r}")
