"""The three computer opponents of source 001's Yacht: よわい, ふつう, つよい.

Source 001 offers a computer opponent at three strengths ("コンピューターの強さ：
よわい・ふつう・つよい" = weak, normal, strong) without saying how they play. Here
each level is one of the project's strategies, chosen so that the three are
clearly ordered, each is a recognisable way of playing, and each plays the same
way on every rule set:

* ``cpu:weak`` (よわい) = ``keep-largest``: the beginner's rule the sources describe
  (hold the largest group of equal dice, write the roll where it scores most now);
  it never plans a straight or the upper bonus.
* ``cpu:normal`` (ふつう) = ``heuristic``: the best keeps for this turn plus source
  001's four tips (three of each face for the bonus, Choice kept as the escape,
  where to write a zero); a decent human player.
* ``cpu:strong`` (つよい) = ``optimal``: exact optimal play, the strongest a player
  maximizing the expected score can be.

All three decide from the score card alone, so their exact score distributions,
means and head-to-head win rates follow from :mod:`yahtzee_sim.exact.distribution`
and :mod:`yahtzee_sim.exact.winodds` (:func:`~yahtzee_sim.exact.winodds.win_matrix`; the
head-to-head report, ``experiments/exact/head-to-head.toml``, shows them on Yahtzee and
the distributions report on source 001's Yacht).

They are reached by name through :func:`~yahtzee_sim.strategies.get_strategy`
(``cpu:weak`` ...) but are not separate entries of the registry: they are the
same players as the strategies they stand for.

>>> from yahtzee_sim.strategies import get_strategy
>>> [get_strategy(n).name for n in LEVELS]
['cpu:weak', 'cpu:normal', 'cpu:strong']
>>> get_strategy("cpu:expert")
Traceback (most recent call last):
...
ValueError: unknown computer level 'expert'; valid levels: weak, normal, strong
"""

from __future__ import annotations

from ..strategy import register_family
from .heuristic import HeuristicStrategy
from .optimal import OptimalStrategy
from .simple import KeepLargestStrategy

__all__ = ["CpuWeak", "CpuNormal", "CpuStrong", "LEVELS"]

LEVELS = {"cpu:weak": "よわい (weak)", "cpu:normal": "ふつう (normal)", "cpu:strong": "つよい (strong)"}
"""The levels, weakest first, with source 001's names."""


class CpuWeak(KeepLargestStrategy):
    """よわい (weak): plays as ``keep-largest``."""

    name = "cpu:weak"
    description = "source 001's weak computer (よわい): keep-largest"


class CpuNormal(HeuristicStrategy):
    """ふつう (normal): plays as ``heuristic``."""

    name = "cpu:normal"
    description = "source 001's normal computer (ふつう): heuristic"


class CpuStrong(OptimalStrategy):
    """つよい (strong): plays as ``optimal``."""

    name = "cpu:strong"
    description = "source 001's strong computer (つよい): optimal"


LEVEL_CLASSES = {"weak": CpuWeak, "normal": CpuNormal, "strong": CpuStrong}


def _level(params: str):
    try:
        return LEVEL_CLASSES[params]()
    except KeyError:
        raise ValueError(f"unknown computer level {params!r}; valid levels: {', '.join(LEVEL_CLASSES)}") from None


register_family("cpu", _level, "cpu:weak|normal|strong")
