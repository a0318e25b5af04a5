"""How a run is cut into chunks of whole seed blocks, what one chunk plays, and what is done.

A run of ``n`` games (or single turns, or games at one table) with ``chunk_blocks`` seed
blocks per chunk:
chunk i plays seed blocks ``[i*c, (i+1)*c)``, and block b draws from the b-th child
of the run's ``SeedSequence`` (:mod:`yahtzee_sim.engine`). Each chunk returns a
mergeable summary (a :class:`~yahtzee_sim.results.GameAggregate` of exact integer
histograms, a :class:`~yahtzee_sim.results.TableAggregate` for a table, a
:class:`~yahtzee_sim.runner.gain.GainAggregate` for paired tables, or roll counts
for turns); merging is integer addition, so the result is
the same in any completion order.

>>> plan = ChunkPlan("games", 5000, 2)
>>> plan.n_blocks, plan.n_chunks, plan.blocks(2), plan.size(2)
(5, 3, range(4, 5), 904)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from ..engine import SEED_BLOCK, RunSeed, play_blocks, play_table_blocks, play_turn_blocks, seed_sequence
from ..results import GameAggregate, TableAggregate
from ..rules import RuleSet
from ..strategy import Strategy
from .gain import GainAggregate

__all__ = ["KINDS", "ChunkPlan", "PartsPlan", "play_chunk", "play_gain_part", "part_seed", "seats_of", "lineup_name", "Done", "merge_games", "merge_turns"]

KINDS = ("games", "turns", "table", "gain")
"""What a run plays: solitaire games, single turns, games at one table (a strategy per seat),
or paired tables (``gain``: a player and a baseline in one seat, :class:`PartsPlan`)."""


def seats_of(strategy) -> tuple:
    """The seats of a run: a table's strategies (a tuple or list), or one seat (solitaire).

    >>> seats_of("a"), seats_of(["a", "b"])
    (('a',), ('a', 'b'))
    """
    return tuple(strategy) if isinstance(strategy, (tuple, list)) else (strategy,)


def lineup_name(strategy) -> str:
    """The name a run's strategy goes by: one seat's name, or the seats' names joined by ``" | "``."""
    return " | ".join(s.name for s in seats_of(strategy))


@dataclass(frozen=True)
class ChunkPlan:
    """How a run of ``n`` games/turns is cut into chunks (pure arithmetic)."""

    kind: str  # "games" or "turns"
    n: int
    chunk_blocks: int

    @property
    def n_blocks(self) -> int:
        return -(-self.n // SEED_BLOCK)

    @property
    def n_chunks(self) -> int:
        return -(-self.n_blocks // self.chunk_blocks)

    @property
    def chunk_size(self) -> int:
        """Games (or turns) in a full chunk."""
        return self.chunk_blocks * SEED_BLOCK

    def blocks(self, i: int) -> range:
        return range(i * self.chunk_blocks, min((i + 1) * self.chunk_blocks, self.n_blocks))

    def size(self, i: int) -> int:
        first = i * self.chunk_size
        return min(first + self.chunk_size, self.n) - first

    def size_below(self, below: int) -> int:
        """Games (or turns) in chunks ``0 .. below - 1``."""
        return min(below * self.chunk_size, self.n)


@dataclass(frozen=True)
class PartsPlan:
    """A run of independent parts, part i ``games`` games at one table with the player in
    ``seat``, from the seed of its ``stream`` (:func:`part_seed` of the run's seed: the
    paired tables of :func:`yahtzee_sim.multiplayer.seat_gain`, whose parts' seeds fix
    its games; the seeds come from the run's seed where the part is played, so a run
    resumed from a checkpoint takes the seed the checkpoint holds).

    >>> plan = PartsPlan("gain", ((0, 1500, 0), (1, 1500, 0)))
    >>> plan.n, plan.n_chunks, plan.blocks(1), plan.size(1)
    (3000, 2, range(0, 2), 1500)
    """

    kind: str
    parts: tuple   # ((seat, games, stream), ...)

    @property
    def n(self) -> int:
        return sum(m for _, m, _ in self.parts)

    @property
    def n_chunks(self) -> int:
        return len(self.parts)

    @property
    def chunk_size(self) -> int:
        return max((m for _, m, _ in self.parts), default=0)

    def blocks(self, i: int) -> range:
        return range(0, -(-self.parts[i][1] // SEED_BLOCK))

    def size(self, i: int) -> int:
        return self.parts[i][1]

    def size_below(self, below: int) -> int:
        """Games in parts ``0 .. below - 1`` (the parts of a seat's last stream are smaller)."""
        return sum(m for _, m, _ in self.parts[:below])


def part_seed(entropy: RunSeed, opponents: int, seat: int, stream: int) -> int:
    """The seed of a paired gain run's part: stream ``stream`` of the player's ``seat``
    at a table of ``opponents`` others, below the run's seed ``entropy``.

    >>> part_seed(5, 1, 0, 0) == part_seed(5, 1, 0, 0) != part_seed(5, 1, 1, 0)
    True
    """
    return int(seed_sequence(entropy, opponents, seat, stream).generate_state(1)[0])


def play_gain_part(rules: RuleSet, lineup: tuple, seat: int, m: int, seed: int) -> dict:
    """Part of a paired gain run: ``m`` games from ``seed`` with ``lineup = (player, baseline,
    *opponents)`` (prepared; one instance per opponent seat) and the player, then the
    baseline, in ``seat``. Per game: the player's sole win, both runs' win shares (a tie
    for first split evenly) and scores; ``seconds``: the player's run.

    Raises ``ValueError`` when the opponents' games differ between the two runs (an
    opponent that looks at the table cannot be paired).
    """
    import time

    from ..results import table_outcomes, win_share

    player, baseline, *others = lineup
    blocks = range(0, -(-m // SEED_BLOCK))
    t0 = time.perf_counter()
    res = play_table_blocks(rules, others[:seat] + [player] + others[seat:], seed, blocks, m)
    secs = time.perf_counter() - t0
    base = play_table_blocks(rules, others[:seat] + [baseline] + others[seat:], seed, blocks, m)
    rest = np.arange(len(others) + 1) != seat
    if not (res["totals"][:, rest] == base["totals"][:, rest]).all():
        raise ValueError("seat_gain: the opponents' games differ between the two runs (an opponent "
                         "that looks at the table cannot be paired)")

    def share(totals):
        return win_share(totals)[:, seat]

    won = table_outcomes(res["totals"], res.get("servida_winner"))[0][:, seat]
    return {"seat": np.full(m, seat, dtype=np.int16), "won": won,
            "share": share(res["totals"]), "base_share": share(base["totals"]), "own": res["totals"][:, seat],
            "base": base["totals"][:, seat], "seconds": np.array([secs])}


def play_chunk(plan: ChunkPlan, rules: RuleSet, strategy: Strategy, entropy: RunSeed, keep_games: bool, i: int):
    """One chunk's summary: (GameAggregate, rows or None) for games, (TableAggregate, rows or
    None) for a table (``strategy`` a tuple of prepared strategies, one per seat),
    (GainAggregate, rows or None) for a paired gain part, roll counts for turns.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yacht")
    >>> agg, rows = play_chunk(ChunkPlan("games", 3000, 1), r, get_strategy("random").prepare(r), 5, False, 2)
    >>> agg.n_games, rows
    (952, None)
    """
    if plan.kind == "turns":
        return play_turn_blocks(rules, strategy, entropy, plan.blocks(i), plan.n)
    if plan.kind == "gain":
        seat, m, stream = plan.parts[i]
        lineup = seats_of(strategy)
        rows = play_gain_part(rules, lineup, seat, m, part_seed(entropy, len(lineup) - 2, seat, stream))
        return GainAggregate.from_rows(rules, len(lineup) - 2, rows), (rows if keep_games else None)
    if plan.kind == "table":
        games = play_table_blocks(rules, seats_of(strategy), entropy, plan.blocks(i), plan.n)
        return TableAggregate.from_games(rules, games), (games if keep_games else None)
    games = play_blocks(rules, strategy, entropy, plan.blocks(i), plan.n)
    return GameAggregate.from_games(rules, games), (games if keep_games else None)


@dataclass(frozen=True)
class Done:
    """Completed chunks (all ids < ``below`` plus ``extra``), their merged summary and size.

    >>> done = Done(0).add(1, 5, 10, merge_turns).add(0, 2, 10, merge_turns)
    >>> done.value, done.below, sorted(done.extra), done.count, list(done.todo(4))
    (7, 2, [], 20, [2, 3])
    """

    value: Any
    below: int = 0
    extra: frozenset = frozenset()
    count: int = 0

    def add(self, i: int, part, size: int, merge) -> "Done":
        extra = set(self.extra)
        extra.add(i)
        below = self.below
        while below in extra:
            extra.remove(below)
            below += 1
        return Done(merge(self.value, part), below, frozenset(extra), self.count + size)

    def todo(self, n_chunks: int) -> Iterator[int]:
        """Chunk ids still to play, generated lazily in order."""
        return (i for i in range(self.below, n_chunks) if i not in self.extra)


def merge_turns(a, b):
    return a + b


def merge_games(a, b):
    return a.merge(b)
