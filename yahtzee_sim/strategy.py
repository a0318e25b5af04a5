"""The strategy plug-in interface and its registry (the plug-ins themselves are in
:mod:`yahtzee_sim.strategies`).

A strategy makes two vectorized decisions for a batch of games; the engine does
all bookkeeping and checks legality. Write your own by subclassing
:class:`Strategy` and overriding :meth:`Strategy.keep` and :meth:`Strategy.box`
(and, for the games that ask, :meth:`Strategy.announce` and
:meth:`Strategy.keep_banked`, whose defaults are sensible):

>>> import numpy as np
>>> from yahtzee_sim.strategy import Strategy
>>> class KeepSixes(Strategy):
...     name = "keep-sixes"
...     def keep(self, state, rolls, rolls_left, u):
...         counts = self.dice.roll_counts[rolls].copy()
...         counts[:, :5] = 0                       # hold the sixes only
...         return self.dice.keep_index_of_counts(counts)
...     def box(self, state, rolls, options, u):
...         return best_legal(options.gain, options.legal)
>>> from yahtzee_sim import simulate
>>> simulate("yahtzee", KeepSixes(), 2000, seed=1).summary()["games"]
2000
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from .rules import RuleSet
from .state import GameState, TurnOptions

__all__ = ["Strategy", "ChunkDecisions", "chunk_decisions_of", "register", "register_family", "get_strategy", "strategy_names", "STRATEGIES",
           "best_legal", "uniform_choice", "default_announcement", "code_fingerprint"]


class Strategy:
    """Base class: subclasses write only the decisions.

    ``keep`` gets the final-roll indices ``rolls`` (N,) and returns the keep index
    (N,) to hold (``self.dice.keep_counts`` describes keeps; holding every die ends
    the turn's rolling). ``box`` returns the box index (N,) to fill. ``u`` is an
    (N,) array of uniforms in [0, 1) private to this decision, drawn from each
    game's own random tape, so randomized strategies stay reproducible and do not
    depend on how games are batched; ``u`` is None for a strategy that declares
    ``uses_uniforms = False``.
    """

    name: str = "base"          # a class attribute; an instance may set its own (e.g. ``chase:<pattern>``)
    description: str = ""
    #: Does the strategy read the uniforms ``u``? A strategy that never does may say
    #: ``uses_uniforms = False``: the simulator then skips drawing them (faster) and
    #: passes ``u=None``; the dice, and so the games, are the same either way (each
    #: block's uniforms are drawn after its dice). The default, True, is always safe.
    uses_uniforms: bool = True

    def prepare(self, rules: RuleSet) -> "Strategy":
        """Bind to a rule set (called by the engine once per run); precompute here."""
        self.rules = rules
        self.dice = rules.dice
        return self

    def keep(self, state: GameState, rolls: np.ndarray, rolls_left: int, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"strategy {self.name!r} does not implement keep()")

    def box(self, state: GameState, rolls: np.ndarray, options: TurnOptions, u: np.ndarray) -> np.ndarray:
        raise NotImplementedError(f"strategy {self.name!r} does not implement box()")

    # -- decisions only some games ask for (defaults that every strategy inherits) ------
    def announce(self, state: GameState, rolls: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Yamb's announcement, after the turn's first throw: the box (N,) of an announce
        column the turn's dice will go to, or -1 for none.

        Called only for rule sets with an announce column (``rules.announces``). The
        default announces only when the turn must (no other open box), naming the open
        announce box these first dice score most in (a first throw that already fits a
        row is a sure score there). Override it to announce by choice.
        """
        return default_announcement(self.rules, state.filled, rolls)

    def keep_banked(self, state: GameState, rolls: np.ndarray, banked: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Maxi Yatzy's saved throws: after the turn's regular throws, the keep (N,) for
        one more throw paid from the bank; holding every die stops (the bank is kept).

        Called only for rule sets with ``banked_throws``, for games with ``banked > 0``
        throws saved. The default spends saved throws only when they would otherwise
        be wasted: on the last turn, or when more are saved than the remaining turns
        could use at one extra throw each; then it keeps as for a last throw
        (``keep(..., rolls_left=1)``).
        """
        turns_after = self.rules.n_boxes - 1 - int(state.turn)
        spend = (turns_after <= 0) | (np.asarray(banked) > turns_after)
        keeps = np.asarray(self.keep(state, rolls, 1, u))
        return np.where(spend, keeps, self.dice.roll_keep_index[rolls]).astype(keeps.dtype)

    # -- the exact evaluator's optional fast path -----------------------------------
    def chunk_decisions(self, rules: RuleSet) -> "ChunkDecisions | None":
        """Optional: how the exact evaluator (:mod:`yahtzee_sim.exact.policy`) can read this
        strategy's keeps and boxes for a whole chunk of states at once.

        The default, None, is always right: the evaluator then asks :meth:`keep` and
        :meth:`box` row by row (slower). A strategy that can answer faster, from a table
        or a closed form, returns a :class:`ChunkDecisions` naming the functions that
        do, next to the ``keep`` and ``box`` they reproduce. Called after :meth:`prepare`.

        >>> Strategy().chunk_decisions(None) is None
        True
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@dataclass(frozen=True)
class ChunkDecisions:
    """A strategy's decisions for a chunk of states, as the exact evaluator reads them
    (what :meth:`Strategy.chunk_decisions` returns; OpenSpiel asks any policy for its
    action probabilities in a state, this asks for a chunk of states at once).

    Each function part takes ``(strategy, chunk)``, where ``chunk`` is the evaluator's
    chunk of states with every roll (:class:`yahtzee_sim.exact.policy.EvalChunk`), and
    returns arrays shaped (states, rolls):

    * ``tables``: both decisions, ``(boxes, keeps)``;
    * ``boxes``: the boxes; ``keeps``: ``{rolls left: keep index}``;
    * ``keeps_up_to_ties``: keeps as good as :meth:`Strategy.keep`'s but perhaps another
      of equal value where values tie exactly (score distributions accept them, where
      the value is the same; a policy value asks ``keep()`` instead).

    Flags: ``uniform`` (keep and box choose uniformly among the legal choices: the
    evaluator averages exactly over them); ``hold_served`` (the tables hold dice
    served on the first throw to the end of the turn, Generala); ``served_boxes_are_boxes``
    (the box chosen does not depend on the scores offered, so a served roll goes where a
    thrown one does).

    ``mirrors`` names, for each part, the methods it reproduces (default ``keep`` and
    ``box``): a subclass that overrides one of them below the class declaring the hook
    has that part ignored (:func:`chunk_decisions_of`), so a fast path never answers for
    decisions it does not know.
    """

    tables: Callable[..., Any] | None = None
    boxes: Callable[..., Any] | None = None
    keeps: Callable[..., Any] | None = None
    keeps_up_to_ties: Callable[..., Any] | None = None
    uniform: bool = False
    hold_served: bool = False
    served_boxes_are_boxes: bool = False
    mirrors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)



def chunk_decisions_of(strategy: Strategy, rules: RuleSet) -> ChunkDecisions | None:
    """The strategy's :meth:`~Strategy.chunk_decisions`, less every part whose mirrored
    methods a subclass overrides below the class that declared the hook (None if no part
    is left).

    >>> class Uniform(Strategy):
    ...     def chunk_decisions(self, rules):
    ...         return ChunkDecisions(uniform=True)
    ...     def keep(self, state, rolls, rolls_left, u): ...
    ...     def box(self, state, rolls, options, u): ...
    >>> class Changed(Uniform):
    ...     def box(self, state, rolls, options, u): ...
    >>> chunk_decisions_of(Uniform(), None).uniform, chunk_decisions_of(Changed(), None)
    (True, None)
    """
    declared = strategy.chunk_decisions(rules)
    if declared is None:
        return None
    cls = type(strategy)
    home = next(c for c in cls.__mro__ if "chunk_decisions" in c.__dict__)

    def holds(part: str) -> bool:
        mirrored = declared.mirrors.get(part, ("keep", "box"))
        return all(getattr(cls, m, None) is getattr(home, m, None) for m in mirrored)

    tables = declared.tables if declared.tables is not None and holds("tables") else None
    boxes = declared.boxes if declared.boxes is not None and holds("boxes") else None
    keeps = declared.keeps if declared.keeps is not None and holds("keeps") else None
    ties = declared.keeps_up_to_ties if declared.keeps_up_to_ties is not None and holds("keeps_up_to_ties") else None
    uniform = declared.uniform and holds("uniform")
    if tables is None and boxes is None and keeps is None and ties is None and not uniform:
        return None
    return replace(declared, tables=tables, boxes=boxes, keeps=keeps, keeps_up_to_ties=ties, uniform=uniform,
                   hold_served=declared.hold_served and tables is not None)


STRATEGIES: dict[str, type[Strategy]] = {}
FAMILIES: dict[str, tuple] = {}
"""Parametrized strategies: ``prefix -> (factory, usage)``; ``optimal:theta=0.02`` is
``factory("theta=0.02")``. A factory given as ``"package.module:function"`` is imported
on first use (plug-ins built on the exact engine, which itself uses this registry)."""

BUILT_IN = "yahtzee_sim.strategies"
"""The package of the built-in plug-ins: imported (registering them) the first time the
registry is read, so this interface, the engine and the exact engine need none of them."""


def _registry() -> dict[str, type[Strategy]]:
    if BUILT_IN not in _loaded:
        import importlib

        _loaded.add(BUILT_IN)
        importlib.import_module(BUILT_IN)
    return STRATEGIES


_loaded: set[str] = set()


def register(cls: type[Strategy]) -> type[Strategy]:
    """Class decorator adding a strategy to the registry under ``cls.name``."""
    STRATEGIES[cls.name] = cls
    return cls


def register_family(prefix: str, factory, usage: str) -> None:
    """Accept names ``prefix:<parameters>`` in :func:`get_strategy` (``usage`` shows the form).

    ``factory`` is a callable of the parameter text, or its ``"module:function"`` path.
    """
    FAMILIES[prefix] = (factory, usage)


def _family_factory(prefix: str):
    factory, usage = FAMILIES[prefix]
    if isinstance(factory, str):
        import importlib

        module, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module), attr)
        FAMILIES[prefix] = (factory, usage)
    return factory


def strategy_names() -> list[str]:
    """Names of the built-in strategies.

    >>> "keep-largest" in strategy_names()
    True
    """
    return list(_registry())


def get_strategy(name: "str | Strategy | type[Strategy]") -> Strategy:
    """A new instance of a registered strategy (or ``name`` itself if it is one).

    ``"module:Class"`` imports ``module`` (from the Python path, else the current
    folder) and instantiates its :class:`Strategy` subclass ``Class``; a subclass
    itself is instantiated too. A name ``prefix:parameters`` whose prefix is a
    registered family (:func:`register_family`, e.g. ``optimal:theta=0.02``) is
    built by that family instead.

    >>> get_strategy("random").name
    'random'
    >>> get_strategy("yahtzee_sim.strategies.simple:KeepLargestStrategy").name
    'keep-largest'
    >>> get_strategy("yahtzee_sim.strategies.simple:NoSuch")
    Traceback (most recent call last):
    ...
    ValueError: module 'yahtzee_sim.strategies.simple' has no Strategy subclass 'NoSuch'; it has: KeepAll, KeepLargestStrategy, RandomStrategy
    """
    if isinstance(name, Strategy):
        return name
    if isinstance(name, type) and issubclass(name, Strategy):
        return name()
    if isinstance(name, str) and ":" in name:
        prefix, _, params = name.partition(":")
        _registry()
        if prefix in FAMILIES:                       # a built-in parametrized family
            return _family_factory(prefix)(params)
        return _load_strategy(name)
    try:
        return _registry()[name]()
    except (KeyError, TypeError):
        also = "".join(f", {usage}" for _, usage in FAMILIES.values())
        raise ValueError(
            f"unknown strategy {name!r}; valid strategies: {', '.join(STRATEGIES)}{also}"
        ) from None


def default_announcement(rules: RuleSet, filled: np.ndarray, rolls: np.ndarray) -> np.ndarray:
    """Box each game announces when it must (only announce boxes open), else -1.

    It names the open announce box where the first throw's dice score most (the
    first such box on ties).

    >>> from yahtzee_sim.rules import get_rules
    >>> r = get_rules("yamb")
    >>> filled = ~r.is_announce[None, :].copy()             # only the Announce column open
    >>> roll = np.array([r.dice.roll_index_of([6, 6, 6, 6, 2])])
    >>> r.box_names[int(default_announcement(r, filled, roll)[0])]
    'announce_poker'
    >>> int(default_announcement(r, np.zeros((1, 52), bool), roll)[0])
    -1
    """
    filled = np.asarray(filled, dtype=bool)
    open_announce = ~filled & rules.is_announce
    must = ~(~filled & ~rules.is_announce).any(axis=1) & open_announce.any(axis=1)
    points = np.where(open_announce, rules.score_table[rolls].astype(np.int32), -1)
    return np.where(must, points.argmax(axis=1), -1).astype(np.intp)


def _load_strategy(spec: str) -> Strategy:
    """Instantiate ``module:Class`` (see :func:`get_strategy`)."""
    import importlib
    import os
    import sys

    module_name, _, class_name = spec.partition(":")
    if not module_name or not class_name:
        raise ValueError(f"a strategy given as module:Class needs both parts, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name.split(".")[0] or os.getcwd() in sys.path:
            raise ValueError(f"cannot import strategy module {module_name!r}: {exc}") from None
        sys.path.insert(0, os.getcwd())  # a console script does not search the current folder
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc2:
            raise ValueError(f"cannot import strategy module {module_name!r}: {exc2}") from None
        finally:
            sys.path.remove(os.getcwd())
    except ImportError as exc:
        raise ValueError(f"cannot import strategy module {module_name!r}: {exc}") from None
    except Exception as exc:  # the module itself is broken (a syntax error, an exception at import)
        raise ValueError(f"cannot import strategy module {module_name!r}: it raised "
                         f"{type(exc).__name__}: {exc}".replace("\n", " ")) from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Strategy)):
        found = sorted(k for k, v in vars(module).items()
                       if isinstance(v, type) and issubclass(v, Strategy) and v is not Strategy
                       and v.__module__ == module.__name__)
        raise ValueError(f"module {module_name!r} has no Strategy subclass {class_name!r}; "
                         f"it has: {', '.join(found) or '(none)'}")
    strategy = cls()
    if strategy.name == Strategy.name:  # no name of its own: the spec names it
        strategy.name = spec
    return strategy


def code_fingerprint(strategy: Strategy) -> str:
    """Short hash of the source files that define ``strategy``'s class and its bases.

    A cached result of a strategy's play (an exact distribution) is keyed by it, so
    a change of the strategy's code, even under the same name, is never answered from
    an old file.

    >>> len(code_fingerprint(get_strategy("heuristic")))
    16
    >>> code_fingerprint(get_strategy("greedy")) == code_fingerprint(get_strategy("heuristic"))
    False
    """
    import hashlib
    import inspect

    h = hashlib.sha256()
    files = []
    for cls in type(strategy).__mro__:
        try:
            path = inspect.getsourcefile(cls)
        except TypeError:                       # builtins (object)
            continue
        if path and path not in files:
            files.append(path)
    for path in files:
        with open(path, "rb") as fh:
            h.update(fh.read())
    h.update(type(strategy).__qualname__.encode())
    return h.hexdigest()[:16]


def best_legal(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Index of the largest value among legal entries of each row (first on ties; 0 for
    a row with no legal entry).

    >>> best_legal(np.array([[5, 9, 7]]), np.array([[True, False, True]])).tolist()
    [2]
    """
    values = np.asarray(values)
    legal = np.asarray(legal, dtype=bool)
    if values.ndim != 2 or values.size == 0 or values.shape != legal.shape:
        return _best_legal_plain(values, legal)
    n_cols = values.shape[1]
    if values.dtype.kind in "iub":
        # One integer per entry, value first and then the earlier column: the row's
        # maximum names the first best column; illegal entries are 0 (column 0 if none).
        low, high = int(values.min()), int(values.max())
        span = (high - low + 1) * n_cols + 1
        if span < 2**31:
            kind = np.int16 if span < 2**15 else np.int32
            key = np.subtract(values, low, dtype=kind)
            key *= kind(n_cols)
            key += np.arange(n_cols, 0, -1, dtype=kind)
            key *= legal
            best = key.max(axis=1).astype(np.intp)
            best -= 1
            return n_cols - 1 - np.remainder(best, n_cols)
        return _best_legal_plain(values, legal)
    masked = np.where(legal, values, -np.inf)
    best = masked.max(axis=1)
    if np.isnan(best).any():
        return _best_legal_plain(values, legal)
    out = np.zeros(len(values), dtype=np.intp)
    for col in range(n_cols - 1, -1, -1):   # the first column holding the maximum
        out[masked[:, col] == best] = col
    return out


def _best_legal_plain(values: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """:func:`best_legal` as the plain masked argmax (any shape, any dtype)."""
    if values.dtype.kind in "iu":
        wide = values.astype(np.int64)
        masked = np.where(legal, wide, np.int64(np.iinfo(np.int64).min))
    else:
        masked = np.where(legal, values, -np.inf)
    return np.argmax(masked, axis=-1)


def uniform_choice(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Uniformly chosen True position of each row of ``mask``, driven by uniforms ``u``
    (0 for a row with none).

    >>> uniform_choice(np.array([[False, True, True]]), np.array([0.9])).tolist()
    [2]
    """
    mask = np.asarray(mask, dtype=bool)
    if mask.ndim != 2 or mask.shape[1] >= 127:
        count = mask.sum(axis=-1)
        pick = np.minimum((u * count).astype(np.int64), count - 1)
        rank = np.cumsum(mask, axis=-1) - 1
        return np.argmax(mask & (rank == pick[..., None]), axis=-1)
    # The chosen column is the number of columns before the last whose running count
    # of True entries is at most ``pick`` (a row with none has pick -1 and gets 0).
    # Column by column in int8 (contiguous in the engine's column-major masks); the
    # product u * count in float64, as exact as before, so the same games.
    cols = np.asfortranarray(mask)
    count = np.add.reduce(cols, axis=1, dtype=np.int8)
    pick = np.multiply(u, count, dtype=np.float64).astype(np.int8)
    np.minimum(pick, count - 1, out=pick)
    chosen = np.zeros(len(pick), dtype=np.int8)
    running = np.zeros(len(pick), dtype=np.int8)
    for col in range(cols.shape[1] - 1):
        running += cols[:, col]
        chosen += running <= pick
    return chosen.astype(np.intp)
