"""The verdict rules (kept here for scripts that import them from this path): they live
in :mod:`yahtzee_sim.questions.verdict`, beside the questions that give every verdict.

>>> verdict_for_value(0.046029, 0.046, 0.001)
'confirmed'
"""

from __future__ import annotations

from ..questions.verdict import VERDICTS, verdict_for_criterion, verdict_for_value

__all__ = ["VERDICTS", "verdict_for_criterion", "verdict_for_value"]
