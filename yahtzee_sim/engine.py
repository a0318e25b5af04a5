"""The vectorized simulator: plays seed blocks of complete games (or single turns).

Over 600 lines: the seed tapes, the move checks, the one-turn step and the one game
loop (:func:`play_seats`: solitaire is one seat, a table several) that the simulator,
the turn simulator and tables of players share.

This is the pure engine: it knows rules, strategies and the random tapes, nothing of
backends, checkpoints or progress bars (those are :mod:`yahtzee_sim.runner`, and
:func:`yahtzee_sim.simulate` is the public API on top).

Reproducibility contract (common random numbers)
-------------------------------------------------
Games are numbered 0..N-1 and grouped in seed blocks of :data:`SEED_BLOCK`
games; block b draws from the b-th child of the run's ``SeedSequence``. Each
game owns a *dice tape*: for every turn and every roll, ``n_dice`` fresh dice.
A roll that throws k dice uses the first k dice of its slot. Each game also owns
one uniform per decision (passed to the strategy as ``u``). Hence:

* the same seed gives the same games, whatever ``batch`` or worker layout;
* two strategies run with the same seed see the same first roll every turn and
  draw their rerolls from the same slots (paired comparisons have low variance);
  what differs is only what their own decisions make of those dice.

>>> from yahtzee_sim import get_rules, get_strategy
>>> rules = get_rules("yahtzee")
>>> strategy = get_strategy("keep-largest").prepare(rules)
>>> whole = play_blocks(rules, strategy, 42, range(0, 2), 2048)
>>> halves = [play_blocks(rules, strategy, 42, range(b, b + 1), 2048)["total"] for b in (0, 1)]
>>> bool((whole["total"] == np.concatenate(halves)).all())
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .rules import RuleSet
from .state import GameState, TurnOptions
from .strategy import Strategy

__all__ = ["SEED_BLOCK", "StrategyError", "read_only", "state_view", "ask", "MoveChecks", "SpawnedSeed", "RunSeed",
           "seed_entropy", "seed_sequence", "seed_from_rng", "seat_entropy", "servida_ends_games", "block_tapes",
           "family_tapes", "play_turn", "play_seats", "play_blocks", "play_table_blocks", "play_turn_blocks"]

SEED_BLOCK = 1024
"""Games per seed block: part of the reproducibility contract, do not change."""


class StrategyError(ValueError):
    """A strategy returned an illegal keep or box, or wrote into the arrays it was given."""


def read_only(a):
    """A view of array ``a`` that cannot be written (anything else is returned as it is).

    Strategies see the game through such views: a strategy that writes into the card,
    the dice or the options it is shown would change the games silently.

    >>> v = read_only(np.zeros(3))
    >>> v[0] = 1
    Traceback (most recent call last):
    ...
    ValueError: assignment destination is read-only
    """
    if not isinstance(a, np.ndarray):
        return a
    view = a.view()
    view.flags.writeable = False
    return view


def state_view(state: GameState) -> GameState:
    """``state`` with every array a read-only view (what a strategy is handed).

    >>> from yahtzee_sim import get_rules
    >>> st = GameState.new(get_rules("yacht"), 2)
    >>> state_view(st).box_scores.flags.writeable, st.box_scores.flags.writeable
    (False, True)
    """
    parts = {f.name: read_only(getattr(state, f.name)) for f in dataclasses.fields(state)
             if isinstance(getattr(state, f.name), np.ndarray)}
    return dataclasses.replace(state, **parts)


def ask(strategy: Strategy, what: str, method, *args):
    """Call a strategy's ``method`` (named ``what``); a write into the read-only arrays it
    was given becomes a :class:`StrategyError` naming the strategy.

    >>> class Scribbler(Strategy):
    ...     name = "scribbler"
    ...     def keep(self, state, rolls, rolls_left, u):
    ...         state.box_scores[:] = 0
    >>> from yahtzee_sim import get_rules
    >>> s = Scribbler()
    >>> ask(s, "keep", s.keep, state_view(GameState.new(get_rules("yacht"), 2)), None, 2, None)
    Traceback (most recent call last):
    ...
    yahtzee_sim.engine.StrategyError: strategy 'scribbler' wrote into an array it was given in keep() (assignment destination is read-only): the card, dice, options and uniforms a strategy sees are read-only; copy them to change them
    """
    try:
        return method(*args)
    except ValueError as exc:
        if isinstance(exc, StrategyError) or "read-only" not in str(exc):
            raise
        raise StrategyError(f"strategy {getattr(strategy, 'name', type(strategy).__name__)!r} wrote into an array "
                            f"it was given in {what}() ({exc}): the card, dice, options and uniforms a strategy "
                            "sees are read-only; copy them to change them") from exc


FRESH_SEED_BELOW = 10**9
"""A run without a seed draws one below this from the OS (``SeedSequence().entropy``
reduced): short enough to retype, and the printed seed is the one used."""


@dataclass(frozen=True)
class SpawnedSeed:
    """The seed of a run started from a spawned ``SeedSequence`` (one with a spawn key).

    Block ``b`` of the run draws from ``SeedSequence(entropy, spawn_key=spawn_key + (b,))``,
    which is exactly the ``b``-th child numpy's ``spawn`` gives that sequence: children
    of one parent play different games, and the same child always the same ones.
    Pass it back as ``seed=`` to replay the run.

    >>> SpawnedSeed(7, (0,)).seed_sequence(3).spawn_key
    (0, 3)
    """

    entropy: int | tuple[int, ...]
    spawn_key: tuple[int, ...]

    def seed_sequence(self, *key: int) -> np.random.SeedSequence:
        """The ``SeedSequence`` of the stream ``key`` below this seed."""
        return np.random.SeedSequence(self.entropy, spawn_key=self.spawn_key + tuple(key))

    def to_json(self) -> dict:
        """A JSON-ready description (numbers as numbers)."""
        return {"entropy": self.entropy if isinstance(self.entropy, int) else list(self.entropy),
                "spawn_key": list(self.spawn_key)}

    def __str__(self) -> str:
        return f"SeedSequence(entropy={self.entropy}, spawn_key={self.spawn_key})"


RunSeed = int | SpawnedSeed
"""What a run records as its seed: an integer (a plain seed) or a :class:`SpawnedSeed`."""


def seed_entropy(seed) -> RunSeed:
    """The seed a run records: ``seed`` itself, for None a fresh seed below
    :data:`FRESH_SEED_BELOW`, and for a ``SeedSequence`` its entropy, with its spawn key
    when it has one (a :class:`SpawnedSeed`), so that spawned children differ.

    >>> seed_entropy(7), seed_entropy(np.random.SeedSequence(7)), 0 <= seed_entropy(None) < FRESH_SEED_BELOW
    (7, 7, True)
    >>> a, b = np.random.SeedSequence(7).spawn(2)
    >>> seed_entropy(a), seed_entropy(b)
    (SpawnedSeed(entropy=7, spawn_key=(0,)), SpawnedSeed(entropy=7, spawn_key=(1,)))
    >>> seed_entropy(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed must be a non-negative integer, a numpy SeedSequence or None, got -1
    """
    if seed is None:
        return int(np.random.SeedSequence().entropy) % FRESH_SEED_BELOW
    if isinstance(seed, SpawnedSeed):
        return seed
    if isinstance(seed, np.random.SeedSequence):
        entropy = seed.entropy
        entropy = int(entropy) if isinstance(entropy, (int, np.integer)) else tuple(int(e) for e in entropy)
        if seed.spawn_key or not isinstance(entropy, int):
            return SpawnedSeed(entropy, tuple(int(k) for k in seed.spawn_key))
        return entropy
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0:
        return int(seed)
    raise ValueError(f"seed must be a non-negative integer, a numpy SeedSequence or None, got {seed!r}")


def seed_sequence(seed: RunSeed, *key: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of stream ``key`` of a run seeded ``seed``.

    >>> seed_sequence(7, 2).spawn_key, seed_sequence(SpawnedSeed(7, (1,)), 2).spawn_key
    ((2,), (1, 2))
    """
    if isinstance(seed, SpawnedSeed):
        return seed.seed_sequence(*key)
    return np.random.SeedSequence(seed, spawn_key=tuple(key))


def seed_from_rng(seed, rng) -> RunSeed | None:
    """The one seed of a call that accepts ``seed=`` and ``rng=`` (SPEC 7: an int, a
    ``SeedSequence`` or a ``Generator``). A ``Generator`` gives a fresh 63-bit seed
    drawn from it (recorded, so the run replays with ``seed=``); both at once is refused.

    >>> seed_from_rng(None, 5), seed_from_rng(5, None), seed_from_rng(None, None)
    (5, 5, None)
    >>> seed_from_rng(None, np.random.default_rng(1)) == seed_from_rng(None, np.random.default_rng(1))
    True
    """
    if rng is None:
        return None if seed is None else seed_entropy(seed)
    if seed is not None:
        raise ValueError("give seed= or rng=, not both (they would be two seeds for one run)")
    if isinstance(rng, np.random.Generator):
        return int(rng.integers(2**63))
    if isinstance(rng, (int, np.integer, np.random.SeedSequence)) and not isinstance(rng, bool):
        return seed_entropy(rng)
    raise ValueError(f"rng must be an integer, a numpy SeedSequence or a numpy Generator, got {rng!r}")


def block_tapes(rules: RuleSet, entropy: RunSeed, blocks: range, n_turns: int, uniforms: bool = True):
    """Dice tape (n, T, rolls, dice) uint8 and decision uniforms (n, T, rolls) float32.

    ``uniforms=False`` gives None instead of the uniforms and leaves every die as it
    is: in each block's generator the uniforms are drawn after the dice.

    >>> from yahtzee_sim import get_rules
    >>> tape, unif = block_tapes(get_rules("yahtzee"), 1, range(3, 4), 13)
    >>> tape.shape, unif.shape
    ((1024, 13, 3, 5), (1024, 13, 3))
    >>> bool((block_tapes(get_rules("yahtzee"), 1, range(3, 4), 13, uniforms=False)[0] == tape).all())
    True
    """
    dice, unif = [], []
    for gen in _block_generators(entropy, blocks):
        dice.append(gen.integers(1, rules.n_faces + 1,
                                 size=(SEED_BLOCK, n_turns, rules.n_rolls, rules.n_dice), dtype=np.uint8))
        if uniforms:
            unif.append(gen.random((SEED_BLOCK, n_turns, rules.n_rolls), dtype=np.float32))
    return np.concatenate(dice), (np.concatenate(unif) if uniforms else None)


def _block_generators(entropy: RunSeed, blocks: range):
    for b in blocks:
        yield np.random.Generator(np.random.PCG64(seed_sequence(entropy, b)))


def _block_turn_tapes(rules: RuleSet, entropy: RunSeed, blocks: range, n_turns: int, stop: int, uniforms: bool):
    """The first ``stop`` games of :func:`block_tapes`, the dice as tape codes (n, T, rolls)
    when the dice tables have them (:meth:`DiceTables.tape_codes`, computed block by block
    while the dice are in cache), else as the dice themselves; uniforms or None."""
    d = rules.dice
    shape = (SEED_BLOCK, n_turns, rules.n_rolls, rules.n_dice)
    codes = d.has_tape_codes
    tape = None
    unif = np.empty((stop, n_turns, rules.n_rolls), dtype=np.float32) if uniforms else None
    for i, gen in enumerate(_block_generators(entropy, blocks)):
        lo, hi = i * SEED_BLOCK, min((i + 1) * SEED_BLOCK, stop)
        if lo >= hi:
            break
        dice = gen.integers(1, rules.n_faces + 1, size=shape, dtype=np.uint8)[: hi - lo]
        part = d.tape_codes(dice) if codes else dice
        if tape is None:
            tape = np.empty((stop,) + part.shape[1:], dtype=part.dtype)
        tape[lo:hi] = part
        if uniforms:
            unif[lo:hi] = gen.random((SEED_BLOCK, n_turns, rules.n_rolls), dtype=np.float32)[: hi - lo]
    return tape, unif


def family_tapes(rules: RuleSet, entropy: RunSeed, blocks: range, n_turns: int) -> dict:
    """Extra random tapes of the games that need them, from each block's own second
    stream (spawn key ``(b, 1)``), so the dice of every other game are untouched.

    ``bank_dice`` (n, S, dice) uint8 and ``bank_u`` (n, S): the dice and decision
    uniform of each game's k-th saved throw spent (Maxi Yatzy; S = all the throws a
    game could save); ``announce_u`` (n, T): the uniform of each turn's announcement.
    Empty for the classic games.

    >>> from yahtzee_sim import get_rules
    >>> t = family_tapes(get_rules("maxi-yatzy"), 1, range(0, 1), 20)
    >>> t["bank_dice"].shape, family_tapes(get_rules("yahtzee"), 1, range(0, 1), 13)
    ((1024, 40, 6), {})
    """
    if not (rules.banked_throws or rules.announces):
        return {}
    slots = max(1, (rules.n_rolls - 1) * n_turns)
    parts: dict[str, list] = {"bank_dice": [], "bank_u": [], "announce_u": []}
    for b in blocks:
        gen = np.random.Generator(np.random.PCG64(seed_sequence(entropy, b, 1)))
        parts["bank_dice"].append(gen.integers(1, rules.n_faces + 1, size=(SEED_BLOCK, slots, rules.n_dice),
                                               dtype=np.uint8))
        parts["bank_u"].append(gen.random((SEED_BLOCK, slots), dtype=np.float32))
        parts["announce_u"].append(gen.random((SEED_BLOCK, n_turns), dtype=np.float32))
    return {k: np.concatenate(v) for k, v in parts.items()}


@dataclass(frozen=True)
class MoveChecks:
    """Tables the legality checks use: ``is_subkeep[r, k]``, keep k holds dice of roll r.

    >>> from yahtzee_sim import get_rules
    >>> MoveChecks.of(get_rules("yahtzee")).is_subkeep.shape
    (252, 462)
    """

    is_subkeep: np.ndarray  # (R, K) bool

    @property
    def is_subkeep_flat(self) -> np.ndarray:
        """``is_subkeep`` as one row: entry ``r * K + k`` (one gather per check)."""
        return self.is_subkeep.reshape(-1)

    @classmethod
    def of(cls, rules: RuleSet) -> "MoveChecks":
        d = rules.dice
        sub = np.zeros((d.n_rolls, d.n_keeps), dtype=bool)
        rows = np.repeat(np.arange(d.n_rolls), d.subkeeps.shape[1])
        cols = d.subkeeps.ravel()
        ok = cols >= 0
        sub[rows[ok], cols[ok]] = True
        return cls(sub)


def play_turn(rules: RuleSet, strategy: Strategy, state: GameState, tape: np.ndarray,
              unif: np.ndarray | None, checks: MoveChecks, extra: dict | None = None):
    """Roll, keep and reroll, then fill a box, for every game of ``state`` (updated in place).

    ``tape`` is the turn's dice tape, either as prefix keys (N, rolls, dice + 1) from
    :meth:`DiceTables.tape_prefix_keys` or as tape codes (N, rolls) from
    :meth:`DiceTables.tape_codes` (the same games, faster); ``unif`` its decision
    uniforms (N, rolls), or None for a strategy that does not use them
    (``strategy.uses_uniforms`` False). Returns the final rolls and the boxes filled.
    Raises :class:`StrategyError` on an illegal keep, box or announcement.

    ``extra`` holds the game-long tapes of :func:`family_tapes` (``announce_u`` of this
    turn): an announcing rule set asks :meth:`Strategy.announce` after the first throw,
    and a rule set with saved throws asks :meth:`Strategy.keep_banked` after the
    regular ones, then banks the regular throws the turn did not make.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> rules = get_rules("yacht")
    >>> tape, unif = block_tapes(rules, 3, range(0, 1), rules.n_boxes)
    >>> state = GameState.new(rules, len(tape))
    >>> rolls, boxes = play_turn(rules, get_strategy("random").prepare(rules), state,
    ...                          rules.dice.tape_prefix_keys(tape[:, 0]), unif[:, 0], MoveChecks.of(rules))
    >>> state.turn, int(state.filled.sum()) == len(tape)
    (1, True)
    """
    d = rules.dice
    tape = np.asarray(tape)
    coded = tape.ndim == 2
    if coded:
        rolls = d.roll_of_code(tape[:, 0])
    else:
        rolls = d.key_to_roll[tape[:, 0, d.n_dice]].astype(np.intp)
    # Throws made so far: holding every die is not a throw. Only rule sets with a box that
    # depends on the roll number (a combination "served" on the first roll) need it.
    banks = rules.banked_throws
    throws = np.ones(len(rolls), dtype=np.int8) if (rules.roll_dependent or banks) else None
    seen = state_view(state)  # what the strategy sees cannot be written (ask() names a scribbler)
    if rules.announces:
        _announce(rules, strategy, state, rolls, extra["announce_u"][:, state.turn], seen)
    for r in range(1, rules.n_rolls):
        keeps = _checked_keeps(ask(strategy, "keep", strategy.keep, seen, read_only(rolls), rules.n_rolls - r,
                                   None if unif is None else read_only(unif[:, r - 1])),
                               rules, strategy, state, rolls, checks, f"roll {r}")
        if throws is not None:
            throws = np.where(d.keep_size[keeps] < d.n_dice, throws + 1, throws).astype(np.int8)
        rolls = d.reroll_code(keeps, tape[:, r]) if coded else d.reroll(keeps, tape[:, r]).astype(np.intp)
    if banks:
        rolls, throws = _spend_banked(rules, strategy, state, rolls, throws, checks, extra, seen)
    announced = state.announced if rules.announces else None
    legal, scores, bonus = rules.turn_options(state.filled, state.five_box_full, rolls, throws=throws,
                                              announced=announced, column_major=True)
    # the gains on demand (random never reads them), from this turn's upper total: a copy,
    # since the state moves on after the box is chosen
    upper_now = state.upper_total.copy()
    options = TurnOptions(read_only(legal), read_only(scores),
                          make_gain=lambda: read_only(rules.turn_gain(upper_now, scores, bonus)))
    boxes = np.asarray(ask(strategy, "box", strategy.box, seen, read_only(rolls), options,
                           None if unif is None else read_only(unif[:, -1])))
    if boxes.shape != rolls.shape or boxes.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: box() must return {rolls.shape} box indices")
    n = len(rolls)
    rows = np.arange(n)
    if boxes.size and (boxes.min() < 0 or boxes.max() >= rules.n_boxes):
        ok = (boxes >= 0) & (boxes < rules.n_boxes)
        ok[ok] = legal[np.flatnonzero(ok), boxes[ok]]
    else:
        boxes = boxes.astype(np.intp, copy=False)
        ok = _pick(legal, rows, boxes)
    if not ok.all():
        g = int(np.flatnonzero(~ok)[0])
        allowed = [rules.box_names[b] for b in np.flatnonzero(legal[g])]
        raise StrategyError(
            f"strategy {strategy.name!r} chose an illegal box (game {g}, turn {state.turn + 1}: "
            f"box index {int(boxes[g])}; legal: {', '.join(allowed)})"
        )
    points = _pick(scores, rows, boxes)
    for arr, value in ((state.filled, True), (state.box_scores, points), (state.fill_turn, state.turn + 1)):
        _put(arr, rows, boxes, value)
    state.upper_total += points * rules.is_upper[boxes]
    if rules.five_bonus:
        state.five_bonus_count += (bonus > 0)
    five = rules.five_face[rolls] > 0
    state.five_count += five
    if state.served_five_count is not None and throws is not None:   # a Generala servida
        state.served_five_count += five & (throws == 1)
    if rules.five_box is not None:   # any score in the five box: 50, or a served Generala's 60
        state.five_box_full |= rules.fills_five_box(boxes, points)
    if rules.announces:
        state.announced[:] = -1
    state.turn += 1
    return rolls, boxes


def _pick(arr: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``arr[rows, cols]`` through one flat index (a C- or Fortran-ordered (N, B) array)."""
    if arr.flags.c_contiguous:
        return np.take(arr.reshape(-1), rows * arr.shape[1] + cols)
    if arr.flags.f_contiguous:
        return np.take(arr.T.reshape(-1), cols * arr.shape[0] + rows)
    return arr[rows, cols]


def _put(arr: np.ndarray, rows: np.ndarray, cols: np.ndarray, value) -> None:
    """``arr[rows, cols] = value`` through one flat index where the layout allows."""
    if arr.flags.c_contiguous:
        arr.reshape(-1)[rows * arr.shape[1] + cols] = value
    elif arr.flags.f_contiguous:
        arr.T.reshape(-1)[cols * arr.shape[0] + rows] = value
    else:
        arr[rows, cols] = value


def _checked_keeps(keeps, rules: RuleSet, strategy: Strategy, state: GameState, rolls, checks: MoveChecks,
                   when: str) -> np.ndarray:
    """The strategy's keeps as an array, or StrategyError for a keep of dice it does not hold."""
    d = rules.dice
    keeps = np.asarray(keeps)
    if keeps.shape != rolls.shape or keeps.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: keep() must return {rolls.shape} keep indices")
    if keeps.size and (keeps.min() < 0 or keeps.max() >= d.n_keeps):
        bad = (keeps < 0) | (keeps >= d.n_keeps)
    else:
        keeps = keeps.astype(np.intp, copy=False)
        ok = np.take(checks.is_subkeep_flat, rolls * d.n_keeps + keeps)
        bad = None if ok.all() else ~ok
    if bad is not None:
        g = int(np.flatnonzero(bad)[0])
        raise StrategyError(
            f"strategy {strategy.name!r} kept dice it does not have (game {g}, turn "
            f"{state.turn + 1}, {when}: dice {d.roll_dice[rolls[g]].tolist()}, keep index {int(keeps[g])})"
        )
    return keeps


def _announce(rules: RuleSet, strategy: Strategy, state: GameState, rolls, u, seen: GameState) -> None:
    """Ask for this turn's announcements and check them (an open announce box or -1;
    a game whose only open boxes are announce boxes must announce)."""
    said = np.asarray(ask(strategy, "announce", strategy.announce, seen, read_only(rolls), read_only(u)))
    if said.shape != rolls.shape or said.dtype.kind not in "iu":
        raise StrategyError(f"strategy {strategy.name!r}: announce() must return {rolls.shape} box indices or -1")
    open_ = ~state.filled
    made = said >= 0
    valid = ~made | ((said < rules.n_boxes) & rules.is_announce[np.clip(said, 0, rules.n_boxes - 1)]
                     & open_[np.arange(len(said)), np.clip(said, 0, rules.n_boxes - 1)])
    must = ~(open_ & ~rules.is_announce).any(axis=1)
    bad = ~valid | (must & ~made)
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        allowed = [rules.box_names[b] for b in np.flatnonzero(open_[g] & rules.is_announce)]
        need = " (only announce boxes are open: it must announce)" if must[g] and not made[g] else ""
        raise StrategyError(f"strategy {strategy.name!r} made an illegal announcement (game {g}, turn "
                            f"{state.turn + 1}: {int(said[g])}{need}; open announce boxes: {', '.join(allowed)})")
    state.announced[:] = said


def _spend_banked(rules: RuleSet, strategy: Strategy, state: GameState, rolls, throws, checks: MoveChecks,
                  extra: dict, seen: GameState):
    """Maxi Yatzy: throws paid from the bank, then the regular throws not made are saved."""
    d = rules.dice
    regular = throws.copy()                      # throws made with the turn's own throws
    rows = np.arange(len(rolls))
    active = state.banked > 0
    step = 0
    while active.any():
        slot = np.minimum(state.bank_used, extra["bank_dice"].shape[1] - 1).astype(np.intp)
        keeps = _checked_keeps(ask(strategy, "keep_banked", strategy.keep_banked, seen, read_only(rolls),
                                   read_only(state.banked.copy()), read_only(extra["bank_u"][rows, slot])),
                               rules, strategy, state, rolls, checks, f"saved throw {step + 1}")
        active &= d.keep_size[keeps] < d.n_dice
        if not active.any():
            break
        g = np.flatnonzero(active)
        tape = extra["bank_dice"][g, slot[g]]
        rolls = rolls.copy()
        rolls[g] = d.reroll(keeps[g], d.tape_prefix_keys(tape)).astype(np.intp)
        throws = np.where(active, throws + 1, throws).astype(np.int8)
        state.banked[g] -= 1
        state.bank_used[g] += 1
        active &= state.banked > 0
        step += 1
    state.banked += (rules.n_rolls - regular).astype(np.int16)   # the turn's throws it did not make
    return rolls, np.minimum(throws, rules.n_rolls).astype(np.int8)


_ALLOCATOR_TUNED = False


def _tune_allocator() -> None:
    """Keep freed memory in this process's heap (glibc only; once per process).

    A turn of a chunk allocates and frees tens of megabytes of temporaries. With glibc's
    defaults every array above 128 kB is its own mapping and the top of the heap is
    handed back to the OS as soon as it is free, so each turn pays page faults for fresh
    pages: up to 40% of the CPU time of a fast strategy. Arrays up to 32 MB then come
    from the heap and up to 256 MB of free heap is kept for the next turn (peak memory
    is unchanged: the same arrays are reused). Elsewhere, nothing changes.
    """
    global _ALLOCATOR_TUNED
    if _ALLOCATOR_TUNED:
        return
    _ALLOCATOR_TUNED = True
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version"):   # glibc's mallopt parameters only
            return
        m_trim_threshold, m_mmap_threshold = -1, -3
        libc.mallopt(m_mmap_threshold, 32 * 2**20)
        libc.mallopt(m_trim_threshold, 256 * 2**20)
    except (OSError, AttributeError):   # pragma: no cover - no usable C library
        return


def seat_entropy(entropy: RunSeed, seat: int) -> int:
    """The entropy of seat ``seat``'s dice tape at a table seeded ``entropy``.

    >>> seat_entropy(7, 0) != seat_entropy(7, 1)
    True
    """
    return int(seed_sequence(entropy, 1_000_000 + seat).generate_state(1)[0])


def servida_ends_games(rules: RuleSet) -> bool:
    """Whether a served Generala ends a game at a table of ``rules`` (Generala's ``servida-wins``).

    >>> from yahtzee_sim import get_rules
    >>> servida_ends_games(get_rules("generala", ["servida-wins"])), servida_ends_games(get_rules("generala"))
    (True, False)
    """
    return "servida-wins" in rules.options and GameState.new(rules, 0).served_five_count is not None


_PLAYED = object()
"""A seat's ``table`` once the compiled loop played its whole games (no tape drawn)."""


@dataclass
class _Seat:
    """One seat of :func:`play_seats`: its strategy, tapes and how it plays (see there)."""

    strategy: Strategy
    state: GameState
    tape: np.ndarray            # raw dice (n, T, rolls, dice) for table play, else tape codes or dice
    unif: np.ndarray | None
    extra: dict
    coded: bool                 # ``tape`` holds the dice tables' tape codes
    table: object = None        # a PlayTable: every turn by lookup
    by_turn: bool = False       # a table per game each turn (``turn_tables``)
    before: np.ndarray | None = None   # its servida count before the turn being played


def play_seats(rules: RuleSet, players, entropies, blocks: range, n_games: int, *, lean: bool = True):
    """Play every game of seed ``blocks`` (the last one cut at game ``n_games``) with one
    seat per entry of ``players`` (prepared strategies), seat s from the tapes of
    ``entropies[s]``: the one game loop of solitaire (one seat) and of tables.

    Seats play turn 1 in seat order, then turn 2, and so on. At a table (two seats or
    more) a strategy with ``see_table(states, seat, turn)`` is shown every seat's card
    before each of its turns, and Generala's ``servida-wins`` ends a game at the first
    Generala served. Where nothing at the table depends on another seat, each seat plays
    its whole game in one go (the same games: its tapes and decisions are its own).

    A seat whose strategy decides from a table (``play_table``, or at a table
    ``turn_tables`` for one that picks a table per game each turn) plays in the lean
    loop of :mod:`yahtzee_sim.tableplay`, on the same dice and with the same decisions
    as through ``keep`` and ``box`` (``lean=False`` forces those, for the tests), except
    for games with their own family tapes or ended by a servida.

    Returns ``(states, servida_winner, frozen)``: each seat's final
    :class:`~yahtzee_sim.state.GameState`; under ``servida-wins`` at a table the (n,)
    seat whose servida ended each game (-1: none) and the (n, seats) totals at that
    moment, else None and None.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yacht")
    >>> p = get_strategy("greedy").prepare(r)
    >>> states, winner, _ = play_seats(r, [p, p], [seat_entropy(1, 0), seat_entropy(1, 1)], range(0, 1), 100)
    >>> len(states), states[1].turn, winner
    (2, 12, None)
    """
    _tune_allocator()
    checks = MoveChecks.of(rules)
    n_turns = rules.n_boxes
    d = rules.dice
    stop = min(len(blocks) * SEED_BLOCK, n_games - blocks.start * SEED_BLOCK)
    at_table = len(players) > 1
    seats = []
    for strategy, entropy in zip(players, entropies):
        extra = {k: v[:stop] for k, v in family_tapes(rules, entropy, blocks, n_turns).items()}
        state = GameState.new(rules, stop)
        seats.append(_Seat(strategy, state, None, None, extra, False))
    servida = at_table and servida_ends_games(rules)
    watched = at_table and any(hasattr(s.strategy, "see_table") for s in seats)
    whole = not (watched or servida)    # no seat's game depends on another's: a table seat in one go
    for seat, entropy in zip(seats, entropies):
        strategy = seat.strategy
        uniforms = _uses_uniforms(strategy)
        if lean and not seat.extra and not servida:   # decisions by lookup: the lean loop, same games
            seat.by_turn = at_table and hasattr(strategy, "turn_tables")
            seat.table = None if seat.by_turn else getattr(strategy, "play_table", None)
        if whole and seat.table is not None:
            from .tableplay import play_seed_blocks

            # the compiled loop draws each block's dice as it plays them (the same dice)
            seat.state.filled = np.ascontiguousarray(seat.state.filled)  # written row by row
            if play_seed_blocks(rules, seat.table, seat.state, [seed_sequence(entropy, b) for b in blocks],
                                SEED_BLOCK):
                seat.table = _PLAYED
                continue
        if seat.table is not None or seat.by_turn:
            tape, unif = block_tapes(rules, entropy, blocks, n_turns, uniforms=uniforms and seat.by_turn)
            seat.tape, seat.unif = tape[:stop], None if unif is None else unif[:stop]
            seat.state.filled = np.ascontiguousarray(seat.state.filled)  # play_games writes through flat views
        else:
            seat.tape, seat.unif = _block_turn_tapes(rules, entropy, blocks, n_turns, stop, uniforms)
            seat.coded = d.has_tape_codes
    if whole:
        for seat in seats:
            if seat.table is not None and seat.table is not _PLAYED:
                from .tableplay import play_games

                play_games(rules, seat.table, seat.state, seat.tape)
    winner = np.full(stop, -1, dtype=np.int8) if servida else None
    frozen = np.zeros((stop, len(seats)), dtype=np.int32) if servida else None
    states = [seat.state for seat in seats]
    for t in range(n_turns):
        for s, seat in enumerate(seats):
            if whole and seat.table is not None:     # played in one go
                continue
            _play_seat_turn(rules, seat, states, s, t, checks, watched)
            if servida and seat.before is not None:
                # the game ends at once: a later seat's servida (even this round) comes too late
                ended = (seat.state.served_five_count > seat.before) & (winner < 0)
                if ended.any():
                    winner[ended] = s
                    frozen[ended] = np.stack([st.total(rules)[ended] for st in states], axis=1)
    for state in states:
        if not state.filled.all():  # pragma: no cover - guarded by legality checks
            raise RuntimeError("a game ended with an open box")
    return states, winner, frozen


def _play_seat_turn(rules: RuleSet, seat: _Seat, states, s: int, t: int, checks: MoveChecks, watched: bool) -> None:
    """Turn ``t`` of seat ``s`` (``seat.before``: its servida count before, for the caller)."""
    strategy, state = seat.strategy, seat.state
    seat.before = None
    if watched and hasattr(strategy, "see_table"):   # every card at the table, read-only (ask)
        ask(strategy, "see_table", strategy.see_table, [state_view(st) for st in states], s, t)
    groups = None
    if seat.by_turn:
        groups = strategy.turn_tables(len(seat.tape))
    elif seat.table is not None:
        groups = [(None, seat.table)]
    if groups is not None:
        from .state import put_games, take_games
        from .tableplay import play_games

        for idx, table in groups:
            if idx is None:
                play_games(rules, table, state, seat.tape[:, t:t + 1])
            else:
                state.turn = t          # each group's cards are filled in this turn
                part = take_games(state, idx)
                play_games(rules, table, part, seat.tape[idx, t:t + 1])
                put_games(state, idx, part)
        state.turn = t + 1
        return
    d = rules.dice
    seat.before = None if state.served_five_count is None else state.served_five_count.copy()
    turn = seat.tape[:, t] if seat.coded else d.tape_prefix_keys(seat.tape[:, t])
    play_turn(rules, strategy, state, turn, None if seat.unif is None else seat.unif[:, t], checks, seat.extra)


def play_blocks(rules: RuleSet, strategy: Strategy, entropy: RunSeed, blocks: range, n_games: int) -> dict:
    """Play every game of seed ``blocks`` (the last one cut at game ``n_games``): solitaire,
    :func:`play_seats` with one seat.

    Returns per-game arrays. This is the unit of work of every runner backend: the
    same blocks give the same games on any machine.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yahtzee")
    >>> games = play_blocks(r, get_strategy("random").prepare(r), 1, range(0, 2), 1500)
    >>> games["total"].shape, games["box_scores"].shape
    ((1500,), (1500, 13))
    """
    [state], _, _ = play_seats(rules, [strategy], [entropy], blocks, n_games)
    upper_bonus = rules.final_bonus(state.upper_total).astype(np.int16)
    out = {
        "total": state.total(rules),
        "box_scores": state.box_scores,
        "upper_total": state.upper_total,
        "upper_bonus": upper_bonus,
        "five_bonus_count": state.five_bonus_count,
        "five_count": state.five_count,
        "fill_turn": state.fill_turn,
        "five_box_full": state.five_box_full,
    }
    if rules.has_points:   # Balut: the points of the finished card, beside its score
        out["points"] = rules.points(state.box_scores)
    if state.served_five_count is not None:
        out["served_five_count"] = state.served_five_count
    if state.banked is not None:   # Maxi Yatzy: saved throws spent, and those never used
        out["bank_used"] = state.bank_used
        out["bank_left"] = state.banked
    return out


def play_table_blocks(rules: RuleSet, players, entropy: RunSeed, blocks: range, n_games: int,
                      lean: bool = True) -> dict:
    """Play seed ``blocks`` at one table, seat s from the tapes of ``seat_entropy(entropy, s)``:
    ``totals`` (n, seats) int32 final scores (for a game a servida ended: the scores then)
    and, under Generala's ``servida-wins``, ``servida_winner`` (n,) int8 (-1: none).

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yacht")
    >>> p = get_strategy("greedy").prepare(r)
    >>> play_table_blocks(r, [p, p, p], 1, range(0, 1), 100)["totals"].shape
    (100, 3)
    """
    entropies = [seat_entropy(entropy, s) for s in range(len(players))]
    states, winner, frozen = play_seats(rules, players, entropies, blocks, n_games, lean=lean)
    totals = np.stack([st.total(rules) for st in states], axis=1).astype(np.int32)
    if winner is None:
        return {"totals": totals}
    return {"totals": np.where((winner >= 0)[:, None], frozen, totals), "servida_winner": winner}


def play_turn_blocks(rules: RuleSet, strategy: Strategy, entropy: RunSeed, blocks: range, n_turns: int) -> np.ndarray:
    """Roll counts (R,) of the single turns of seed ``blocks`` (the last cut at turn ``n_turns``).

    Turn i uses the dice tape of game i's first turn; only the strategy's keeps matter.

    >>> from yahtzee_sim import get_rules, get_strategy
    >>> r = get_rules("yahtzee")
    >>> counts = play_turn_blocks(r, get_strategy("keep-largest").prepare(r), 1, range(0, 2), 1500)
    >>> int(counts.sum()), counts.shape
    (1500, (252,))
    """
    _tune_allocator()
    d = rules.dice
    # Draw whole-game tapes so turn i sees game i's first-turn dice (the CRN contract).
    stop = min(len(blocks) * SEED_BLOCK, n_turns - blocks.start * SEED_BLOCK)
    tape, unif = _block_turn_tapes(rules, entropy, blocks, rules.n_boxes, stop, _uses_uniforms(strategy))
    state = GameState.new(rules, stop)
    first = tape[:, 0] if d.has_tape_codes else d.tape_prefix_keys(tape[:, 0])
    extra = {k: v[:stop] for k, v in family_tapes(rules, entropy, blocks, rules.n_boxes).items()}
    rolls, _ = play_turn(rules, _KeepOnly(strategy), state, first, None if unif is None else unif[:, 0],
                         MoveChecks.of(rules), extra)
    return np.bincount(rolls, minlength=d.n_rolls).astype(np.int64)


def _uses_uniforms(strategy: Strategy) -> bool:
    """Draw the decision uniforms unless the strategy says it never reads them."""
    return getattr(strategy, "uses_uniforms", True) is not False


class _KeepOnly(Strategy):
    """Wraps a strategy's keeps; always fills the first legal box (turn simulator)."""

    def __init__(self, inner: Strategy):
        self.inner = inner
        self.name = inner.name
        self.uses_uniforms = getattr(inner, "uses_uniforms", True)

    def keep(self, state, rolls, rolls_left, u):
        return self.inner.keep(state, rolls, rolls_left, u)

    def announce(self, state, rolls, u):
        return self.inner.announce(state, rolls, u)

    def keep_banked(self, state, rolls, banked, u):
        return self.inner.keep_banked(state, rolls, banked, u)

    def box(self, state, rolls, options, u):
        return np.argmax(options.legal, axis=1)
