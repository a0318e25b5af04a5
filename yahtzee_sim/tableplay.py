"""The lean game loop of strategies that decide from a lookup table.

Over 600 lines: the NumPy loop and, beside it, the driver of its compiled twin (the
tables it reads, the raw-byte dice draw, the background compilation), kept together so
the two loops' inputs are read from one place.

A strategy whose every decision is a table lookup (the optimal strategies: see
:mod:`yahtzee_sim.exact.decisions`) exposes a :class:`PlayTable` as its
``play_table``; the engine's one game loop (:func:`yahtzee_sim.engine.play_seats`,
solitaire and tables) then plays its games here instead of asking ``keep``/``box`` and building every box's options each turn.
The games are the same, die for die: the same tapes, the same keeps and boxes the
strategy's own ``keep``/``box`` return (tested game by game), and the points,
bonuses and counters of :func:`yahtzee_sim.engine.play_turn`. A box's points come
from the score table, except on the rolls where :meth:`RuleSet.turn_options` may
change them (five of a kind: jokers, bonuses, boxes that pay after a Generala),
which go through ``turn_options`` itself.

The loop has a compiled twin (:mod:`yahtzee_sim.tableplay_kernels`, numba) that plays
the same games a game tile at a time; :func:`play_games` takes it for calls of
:data:`MIN_GAMES_FOR_KERNEL` games or more once its machine code is in numba's cache
(the first time on a machine it is compiled in a forked process while the games go on
here), and :func:`play_seed_blocks` plays whole games from each seed block's raw
generator bytes without a dice tape. Both twins are tested game by game against each
other (``tests/test_tableplay_kernels.py``).

>>> import numpy as np
>>> from yahtzee_sim import get_rules
>>> r = get_rules("yacht")
>>> n_u, n_flag = 1, 1
>>> # a toy table: hold everything, fill the first open box (state = filled mask)
>>> rows = np.arange(1 << r.n_boxes, dtype=np.int32)
>>> first_open = np.array([next((b for b in range(r.n_boxes) if not m >> b & 1), 0)
...                        for m in range(1 << r.n_boxes)], dtype=np.uint8)
>>> zeros = np.zeros((len(rows), r.dice.n_rolls), np.uint8)
>>> sub = r.dice.roll_keep_index[:, None].astype(np.int64)
>>> table = PlayTable(rows, n_u, n_flag, (None, zeros, zeros),
...                   np.repeat(first_open[:, None], r.dice.n_rolls, axis=1), None, sub)
>>> from yahtzee_sim.state import GameState
>>> state = GameState.new(r, 3)
>>> tape = np.full((3, r.n_boxes, r.n_rolls, r.n_dice), 6, dtype=np.uint8)
>>> play_games(r, table, state, tape)
>>> state.box_scores[0].tolist()               # five sixes every turn, boxes in order
[0, 0, 0, 0, 0, 30, 30, 30, 30, 0, 0, 50]
>>> state.fill_turn[0].tolist() == list(range(1, r.n_boxes + 1))
True
"""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass

import numpy as np

from .rules import RuleSet
from .state import GameState

__all__ = ["PlayTable", "play_games"]


@dataclass(frozen=True, eq=False)
class PlayTable:
    """The decisions of a table strategy, as plain arrays: the one decision-table format
    (the exact engine's :class:`~yahtzee_sim.exact.decisions.DecisionTable` is one, with
    where it came from).

    row_of : (2**B * n_u * n_flag,) int32, the table row of each state
        ``(mask * n_u + min(upper total, n_u - 1)) * n_flag + flag``; -1 where no
        game can be.
    keeps : ``keeps[j]`` (S, R) uint8 for ``j`` rerolls left (``keeps[0]`` None): the
        position of the keep in ``sub_keep[roll]``.
    boxes : (S, R) uint8, the box of each final roll.
    served_boxes : (S, R) uint8 or None: the box when the final dice are still the
        first throw's (rule sets with served combinations); a game that held all its
        first dice holds them to the end of the turn.
    sub_keep : (R, W) keep indices of each roll's keeps, position 0 the whole roll.
    """

    row_of: np.ndarray
    n_u: int
    n_flag: int
    keeps: tuple
    boxes: np.ndarray
    served_boxes: np.ndarray | None
    sub_keep: np.ndarray


MAX_CODE = 1 << 16
"""A throw's dice are read as one number, ``sum(die_i * (F + 1)**i)`` (order kept), and
the key of its first 0..n dice looked up by it, instead of a lookup and a running sum
per die (the loop's largest cost). Rule sets whose throws make larger numbers use the
dice tables' prefix keys."""


@dataclass(frozen=True, eq=False)
class _Keys:
    """``prefix[code * (n + 1) + m]``: the dice-table key of the first ``m`` dice of the
    throw read as ``code``; ``first_roll[code]`` the roll of all of them."""

    prefix: np.ndarray | None       # (codes * (n_dice + 1),) uint16 (int32 if keys need it)
    first_roll: np.ndarray | None   # (codes,) intp


@functools.lru_cache(maxsize=16)
def _keys(rules: RuleSet) -> _Keys:
    d = rules.dice
    n, f = d.n_dice, d.n_faces
    codes = (f + 1) ** n                     # faces are 1..F: the number is below (F + 1)**n
    if codes > MAX_CODE:
        return _Keys(None, None)
    code = np.arange(codes, dtype=np.int64)
    digits = (code[:, None] // (f + 1) ** np.arange(n)) % (f + 1)         # die i of each number
    face_key = d.face_key.astype(np.int64)
    die_key = np.where(digits > 0, face_key[np.maximum(digits - 1, 0)], 0)
    prefix = np.zeros((codes, n + 1), dtype=np.int64)
    prefix[:, 1:] = np.cumsum(die_key, axis=1)
    first = np.where((digits > 0).all(axis=1), d.key_to_roll[prefix[:, n]], -1).astype(np.intp)
    small = np.uint16 if prefix.max() < 1 << 16 else np.int32      # a table that stays in cache
    return _Keys(prefix.astype(small).reshape(-1), first)


@functools.lru_cache(maxsize=16)
def _score_tables(rules: RuleSet) -> tuple[np.ndarray, np.ndarray]:
    """Flat (roll * B + box) points of each box, and the same for upper boxes only."""
    table = np.ascontiguousarray(rules.score_table)
    upper = np.where(rules.is_upper[None, :], table, 0).astype(np.int16)
    return table.reshape(-1), upper.reshape(-1)


def _codes(rules: RuleSet, tape: np.ndarray) -> np.ndarray:
    """(T, rolls, n) intp: ``(n_dice + 1) * sum(die_i * (F + 1)**i)`` of every throw."""
    base = np.uint16(rules.dice.n_faces + 1)
    code = tape[..., -1].astype(np.uint16)              # (n, T, rolls)
    for i in range(tape.shape[-1] - 2, -1, -1):
        code *= base
        code += tape[..., i]
    out = np.empty(code.shape[1:] + code.shape[:1], dtype=np.intp)
    out[...] = code.transpose(1, 2, 0)
    out *= rules.dice.n_dice + 1
    return out


def play_games(rules: RuleSet, table: PlayTable, state: GameState, tape: np.ndarray) -> None:
    """Play the turns of ``tape`` (n, T, rolls, dice) from ``state`` (updated in place):
    compiled (:mod:`yahtzee_sim.tableplay_kernels`) for :data:`MIN_GAMES_FOR_KERNEL` games or
    more when the machine code is ready, else in NumPy; the same games either way."""
    served = table.served_boxes is not None
    if served and not rules.roll_dependent:
        raise ValueError("a table with served boxes needs a rule set whose boxes score by the throw")
    kx = _kernels(rules, len(tape))
    if kx is not None and rules.n_rolls in _COMPILING:
        from .forkpool import kernels_cached

        # This process compiled the whole-game loop in the background (a run's games go by
        # seed blocks once it is ready): tapes drawn while it compiled play in NumPy rather
        # than compile this turn-by-turn loop in place (1.3 CPU s, for one chunk) unless an
        # earlier run compiled it.
        if not kernels_cached(kx.play_games, kx.encode_dice):
            kx = None
    if kx is None or not _guarded(_play_compiled, kx, rules, table, state, tape):
        _play_numpy(rules, table, state, tape)


def _guarded(play, *args) -> bool:
    """Run a compiled play; False, with the compiled loop switched off for the process, if
    numba cannot compile it here (a compile error comes before any game is touched)."""
    global KERNELS
    from numba.core.errors import NumbaError

    try:
        play(*args)
    except NumbaError as err:  # pragma: no cover - numba compiles it on every supported platform
        import warnings

        KERNELS = "numpy"
        warnings.warn(f"the compiled table loop could not be compiled ({type(err).__name__}); "
                      f"playing in NumPy (the same games)", RuntimeWarning, stacklevel=3)
        return False
    return True


def _play_numpy(rules: RuleSet, table: PlayTable, state: GameState, tape: np.ndarray) -> None:
    """The NumPy loop: every game through one turn at a time (the compiled loop's twin)."""
    d = rules.dice
    n, n_turns = tape.shape[:2]
    n_rolls, n_boxes = rules.n_rolls, rules.n_boxes
    served = table.served_boxes is not None
    if served and not rules.roll_dependent:
        raise ValueError("a table with served boxes needs a rule set whose boxes score by the throw")
    keys = _keys(rules)
    by_code = keys.prefix is not None
    codes = _codes(rules, tape) if by_code else None
    r_count = d.n_rolls
    width = table.sub_keep.shape[1]
    sub = np.ascontiguousarray(table.sub_keep).reshape(-1)
    sub_ok = np.maximum(sub, 0)
    sub_key = np.where(sub >= 0, d.keep_key[sub_ok], 0).astype(np.int32)    # per (roll, position)
    sub_missing = np.where(sub >= 0, d.n_dice - d.keep_size[sub_ok], 0).astype(np.intp)
    keeps = [None if k is None else k.reshape(-1) for k in table.keeps]
    boxes = table.boxes.reshape(-1)
    sboxes = table.served_boxes.reshape(-1) if served else None
    bits = np.int64(1) << np.arange(n_boxes, dtype=np.int64)
    mask = state.filled.astype(np.int64) @ bits
    start_turn = state.turn
    cap = table.n_u - 1
    games = np.arange(n)
    key_to_roll = d.key_to_roll.astype(np.intp)
    if rules.roll_dependent:
        first_table, later_table = rules.score_tables[0], rules.score_tables[-1]
    score_table, upper_points = _score_tables(rules)
    special = rules.five_box is not None        # five-of-a-kind rolls: through turn_options
    five_face = rules.five_face
    five_box = rules.five_box_index
    chosen = np.empty((n_turns, n), dtype=np.intp)
    earned = np.empty((n_turns, n), dtype=np.int16)
    stride = d.n_dice + 1
    for t in range(n_turns):
        if by_code:
            code = codes[t]                                     # (rolls, n)
            prefix = keys.prefix
            roll = keys.first_roll[code[0] // stride]
        else:
            prefix = d.tape_prefix_keys(tape[:, t]).reshape(-1)
            code = (np.arange(n_rolls) * stride)[:, None] + (games * n_rolls * stride)[None, :]
            roll = key_to_roll[prefix[code[0] + d.n_dice]]
        flat = mask * table.n_u + np.minimum(state.upper_total, cap)
        if table.n_flag == 2:
            flat = flat * 2 + state.five_box_full
        row = table.row_of[flat]
        if row.size and row.min() < 0:
            g = int(np.flatnonzero(row < 0)[0])
            raise ValueError(f"table play: game {g} is in a state no game can reach "
                             f"(upper total {int(state.upper_total[g])})")
        base = row.astype(np.intp) * r_count
        held = np.ones(n, dtype=bool) if served else None      # still the first throw's dice
        for j in range(n_rolls - 1, 0, -1):
            pos = keeps[j][base + roll]
            if served:
                if j < n_rolls - 1:
                    pos = np.where(held, 0, pos)
                held &= pos == 0
            at = roll * width + pos
            fresh = prefix[code[n_rolls - j] + sub_missing[at]]
            roll = key_to_roll[sub_key[at] + fresh]
        at = base + roll
        box = boxes[at].astype(np.intp)
        if served:
            box = np.where(held, sboxes[at], box).astype(np.intp)
            points = np.where(held, first_table[roll, box], later_table[roll, box])
        else:
            points = score_table[roll * n_boxes + box]
        five = five_face[roll] > 0
        if special:
            rows = np.flatnonzero(five)
            if len(rows):               # jokers, bonuses: exactly as the engine scores them
                throws = np.where(held[rows], 1, 2).astype(np.int8) if served else None
                filled = (mask[rows, None] & bits) != 0
                legal, scores, extra = rules.turn_options(filled, state.five_box_full[rows],
                                                          roll[rows], throws=throws)
                b = box[rows]
                k = np.arange(len(rows))
                if not legal[k, b].all():      # pragma: no cover - a bad table
                    raise RuntimeError("table play: an illegal box on a five-of-a-kind roll")
                points = points.copy()
                points[rows] = scores[k, b]
                state.five_bonus_count[rows] += extra > 0
        points = points.astype(np.int16, copy=False)
        chosen[t] = box
        earned[t] = points
        if served:
            upper = np.where(rules.is_upper[box], points, 0).astype(np.int16)
        else:
            upper = upper_points[roll * n_boxes + box]
            if special and len(rows):               # points not from the score table
                upper[rows] = np.where(rules.is_upper[box[rows]], points[rows], 0)
        state.upper_total += upper
        state.five_count += five
        if state.served_five_count is not None and served:
            state.served_five_count += five & held
        if special:
            state.five_box_full |= (box == five_box) & (points > 0)
        mask |= bits[box]
    # the card: every turn's box and points written at once
    cells = (games[None, :] * n_boxes + chosen).reshape(-1)
    state.filled.reshape(-1)[cells] = True
    state.box_scores.reshape(-1)[cells] = earned.reshape(-1)
    state.fill_turn.reshape(-1)[cells] = np.repeat(np.arange(start_turn + 1, start_turn + n_turns + 1,
                                                             dtype=np.int8), n)
    state.turn += n_turns


# -- the compiled loop ------------------------------------------------------------------
KERNELS = "numba"
"""``"numba"``: large calls play in the compiled loop (:mod:`yahtzee_sim.tableplay_kernels`)
once its machine code is ready; ``"numpy"``: always the NumPy loop (the same games)."""

MIN_GAMES_FOR_KERNEL = 20_000
"""Smaller calls play in NumPy: loading numba (about 0.3 s once per process) costs more
than it saves on a few thousand games."""

MIN_GAMES_TO_COMPILE = 100_000
"""A call this large starts the compiled loop's first compilation on a machine (in the
background, for the games after it); a smaller one, if the loop is not compiled yet, just
plays in NumPy. The compilation costs about 4.4 CPU seconds, what NumPy takes to play
some 3,800,000 games (880,000 a second) and the compiled loop saves on about 9,000,000:
a run of a few ten thousand games (a claim's, a question's) never earns it back. (A run
of optimal play of at least ``GAMES_BEFORE_BUILD`` games starts it while its decision
table is built or loaded: :attr:`~yahtzee_sim.strategies.optimal.OptimalStrategy.play_table`.)"""

GAMES_TO_COMPILE_NOW = 10_000_000
"""A run of at least this many games compiles the loop at the usual priority: most of its
games are then played compiled, and the compilation pays for itself within the run. A
shorter one (2,000,000 games take about 1.5 s in NumPy on two cores) plays in NumPy, and
the compilation, for the runs after it, runs at :data:`COMPILE_NICE` and takes only the
CPU the run leaves (it may end after the run: a first 2,000,000-game run took 8.7 s this
way against 10.8 s with the compiler competing for the cores)."""

COMPILE_NICE = 10
"""The priority (an ``os.nice`` increment) of a background compilation for a shorter run."""

_READY: dict = {}          # n_rolls -> True once the compiled loop ran in this process
_COMPILING: dict = {}      # n_rolls -> its forkpool.Compiling (the background compilation)
_RAW_OK: dict = {}         # (faces, dice per game) -> the raw-byte draw equals NumPy's here


def _eligible(rules: RuleSet) -> bool:
    """Can the compiled loop play this rule set? A "free" joker's points depend on whether
    the face's upper box is *legal*, which fill orders and columns decide: those play in
    NumPy (the compiled loop reads only whether it is filled)."""
    if KERNELS != "numba" or rules.n_faces > 255 or rules.n_faces ** rules.n_dice > MAX_CODE:
        return False
    if rules.five_box is not None and rules.joker == "free" and (rules.fill_order == "in-order" or rules.columns):
        return False
    return _small_types_hold(rules)


@functools.lru_cache(maxsize=16)
def _small_types_hold(rules: RuleSet) -> bool:
    """Do the compiled loop's tables hold this rule set's values (rolls and points in
    int16: :func:`_rule_tables`)? Else it plays in NumPy."""
    points = max(int(np.abs(t).max()) for t in (rules.score_table, *rules.score_tables)) if rules.roll_dependent \
        else int(np.abs(rules.score_table).max())
    return rules.dice.n_rolls <= np.iinfo(np.int16).max and points <= np.iinfo(np.int16).max


def _kernels(rules: RuleSet, n: int):
    """The compiled loop's module, or None to play in NumPy: for fewer than
    :data:`MIN_GAMES_FOR_KERNEL` games, rule sets it does not play, no numba, and while
    its first compilation runs (started here for :data:`MIN_GAMES_TO_COMPILE` games or
    more, in a forked process, in the background: the games go on in NumPy meanwhile, and
    the machine code lands in numba's cache)."""
    if n < MIN_GAMES_FOR_KERNEL or not _eligible(rules):
        return None
    if _READY.get(rules.n_rolls):
        from . import tableplay_kernels

        return tableplay_kernels
    try:
        from . import tableplay_kernels as kx
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    from .forkpool import kernels_cached

    if kernels_cached(kx.play_raw_blocks) and not _compiling(rules.n_rolls):
        return kx
    if rules.n_rolls not in _COMPILING and n >= MIN_GAMES_TO_COMPILE:
        precompile(rules, background=True, games=n)
    return None


def _compiling(n_rolls: int) -> bool:
    """Is this process's background compilation of the loop still running? (Not when
    another process compiles it: the loop is then used once its cache file is there.)"""
    job = _COMPILING.get(n_rolls)
    return job is not None and job.running()


def precompile(rules: RuleSet, background: bool = False, games: float | None = None) -> None:
    """Compile (or load from numba's cache) the compiled loop for ``rules``' kind of game,
    on tiny inputs of the very types the real calls pass. ``background``: in a forked
    process (once per process and kind; the caller goes on), where the machine has no
    compiled copy yet: a table build or the first games in NumPy hide the compilation.
    ``games``: how many games the run that asks plays; fewer than
    :data:`GAMES_TO_COMPILE_NOW` (or unsaid) compile at the lower priority :data:`COMPILE_NICE`.

    >>> from yahtzee_sim import get_rules
    >>> precompile(get_rules("yacht"))
    """
    if not _eligible(rules):
        return
    from . import tableplay_kernels as kx

    if background:
        from .forkpool import compile_beside, kernels_cached

        if rules.n_rolls in _COMPILING or kernels_cached(kx.play_raw_blocks):
            return

        # one compiler per machine (a run's workers, and runs side by side, start together)
        urgent = games is not None and games >= GAMES_TO_COMPILE_NOW
        _COMPILING[rules.n_rolls] = compile_beside(functools.partial(precompile, rules),
                                                   kernels=(kx.play_raw_blocks,), lock=True,
                                                   nice=0 if urgent else COMPILE_NICE)
        return
    d = rules.dice
    r, w = d.n_rolls, 1
    keeps = (None,) + tuple(np.zeros((1, r), np.uint8) for _ in range(1, rules.n_rolls))
    dummy = PlayTable(np.zeros(1, np.int32), 1, 1, keeps, np.zeros((1, r), np.uint8),
                      np.zeros((1, r), np.uint8) if rules.roll_dependent else None,
                      np.zeros((r, w), np.int64))
    # the whole-game loop only (the turn-by-turn one compiles when first used)
    _play_raw(kx, rules, dummy, GameState.new(rules, 0), [], 1)


def _ro(a: np.ndarray, dtype=None) -> np.ndarray:
    """A C-contiguous read-only view (a copy only where the layout or type differ): the
    compiled loop sees one array type whatever the table came from (one compilation)."""
    v = np.ascontiguousarray(a, dtype=dtype).view()
    v.flags.writeable = False
    return v


@functools.lru_cache(maxsize=16)
def _rule_tables(rules: RuleSet, served: bool) -> tuple:
    """The compiled loop's rule-set tables (see :func:`yahtzee_sim.tableplay_kernels.play_games`)."""
    d = rules.dice
    if served:
        first, later = rules.score_tables[0], rules.score_tables[-1]
    else:
        first = later = rules.score_table
    is_upper = np.ascontiguousarray(rules.is_upper, dtype=np.bool_)
    five_face = np.ascontiguousarray(rules.five_face, dtype=np.int64)
    pts, bonus, match_col, five_box = _special_tables(rules, served)
    # a throw read as one number, sum((die_k - 1) * F**k): the dice-table key of its first k dice
    n, f = d.n_dice, d.n_faces
    code = np.arange(f ** n, dtype=np.int64)
    digits = (code[:, None] // f ** np.arange(n)) % f
    prefix = np.zeros((len(code), n + 1), dtype=np.int64)
    prefix[:, 1:] = np.cumsum(d.face_key.astype(np.int64)[digits], axis=1)
    first_roll = d.key_to_roll[prefix[:, n]]
    # the smallest types that hold every rule set's values (one compilation for all): the
    # tables read at random every turn take fewer cache lines (rolls signed: -1 stays -1)
    return (_ro(prefix, np.int32), _ro(first_roll, np.int16), _ro(d.key_to_roll, np.int16), _ro(first, np.int16),
            _ro(later, np.int16), _ro(is_upper), _ro(five_face, np.int8), rules.five_box is not None, five_box,
            _ro(match_col), _ro(pts), _ro(bonus))


def _special_tables(rules: RuleSet, served: bool):
    """Points (2, 2, 2, 2, F, B) and bonus (2, 2, 2, 2, F) of the five-of-a-kind rolls,
    indexed by [later throw, five box full, five box filled, the face's upper box filled,
    face - 1], each from :meth:`RuleSet.turn_options` itself (the NumPy loop's source):
    outside legality, which the table already decided, its points depend on nothing else.
    Also the upper box of each face (-1: none) and the five box (0 if none)."""
    f_n, b_n = rules.n_faces, rules.n_boxes
    pts = np.zeros((2, 2, 2, 2, f_n, b_n), dtype=np.int64)
    bonus = np.zeros((2, 2, 2, 2, f_n), dtype=np.int64)
    match_col = np.full(f_n, -1, dtype=np.int64)
    if rules.five_box is None:
        return pts, bonus, match_col, 0
    upper = np.flatnonzero(rules.is_upper)
    by_face = upper[np.argsort(rules.upper_face[upper], kind="stable")]     # turn_options' order
    match_col[:min(f_n, len(by_face))] = by_face[:f_n]
    five_box = rules.five_box_index
    rolls = np.array([int(np.flatnonzero(rules.five_face == f)[0]) for f in range(1, f_n + 1)])
    for later in (0, 1):
        throws = np.full(f_n, 1 + later, dtype=np.int8) if served else None
        for full in (0, 1):
            for five_in in (0, 1):
                for match_in in (0, 1):
                    filled = np.zeros((f_n, b_n), dtype=bool)
                    filled[:, five_box] = bool(five_in)
                    has = match_col >= 0
                    filled[np.flatnonzero(has), match_col[has]] |= bool(match_in)
                    _, scores, extra = rules.turn_options(filled, np.full(f_n, bool(full)), rolls, throws=throws)
                    pts[later, full, five_in, match_in] = scores
                    bonus[later, full, five_in, match_in] = extra
    return pts, bonus, match_col, int(five_box)


_TABLE_ARGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _row_parts(row_of: np.ndarray, n_u: int, n_flag: int) -> tuple:
    """``row_of`` split in three small tables: ``row_of[(mask * n_u + u) * n_flag + flag]`` is
    ``base[k] + pattern[pid[k], u]`` with ``k = mask * n_flag + flag`` (-1 where the pattern
    is -1). The upper totals of a card share their rows by a few patterns (which totals
    its open upper boxes tell apart), so the parts stay in the processor's caches where
    ``row_of`` (4 MB for ``yahtzee``) would not: one memory access a turn saved.

    >>> rows = np.array([5, -1, 6, -1, 7, 8, 7, 8], dtype=np.int32)   # 2 masks, n_u 2, n_flag 2
    >>> base, pid, pat = _row_parts(rows, 2, 2)
    >>> [int(base[k] + pat[pid[k], u]) if pat[pid[k], u] >= 0 else -1
    ...  for m in range(2) for u in range(2) for k in [2 * m, 2 * m + 1]] == rows.tolist()
    True
    """
    r = np.asarray(row_of, dtype=np.int64).reshape(-1, n_u, n_flag).transpose(0, 2, 1).reshape(-1, n_u)
    valid = r >= 0
    base = np.where(valid, r, np.iinfo(np.int64).max).min(axis=1)
    base = np.where(valid.any(axis=1), base, 0)
    off = np.ascontiguousarray(np.where(valid, r - base[:, None], -1), dtype=np.int32)
    # the distinct rows, each row's bytes one item (a sort of 2**B items, not of their numbers)
    _, first, pid = np.unique(off.view(np.dtype((np.void, 4 * n_u))).reshape(-1), return_index=True,
                              return_inverse=True)
    return (_ro(base, np.int32), _ro(pid.reshape(-1), np.int32), _ro(off[first]))


def _table_args(rules: RuleSet, table: PlayTable) -> tuple:
    """The decision table's arrays as the compiled loop reads them (read-only views;
    made once per table)."""
    got = _TABLE_ARGS.get(table)
    if got is None or got[0] is not rules:
        got = _TABLE_ARGS[table] = (rules, _make_table_args(rules, table))
    return got[1]


_ROW_PARTS: dict = {}       # id(row_of) -> (weak reference to it, its parts)


def _row_parts_of(row_of: np.ndarray, n_u: int, n_flag: int) -> tuple:
    """:func:`_row_parts`, once per ``row_of`` array in a process (a memoized table comes
    back as a new object around the same arrays); the entry goes with the array."""
    got = _ROW_PARTS.get(id(row_of))
    if got is None or got[0]() is not row_of:
        parts = _row_parts(row_of, n_u, n_flag)
        try:
            ref = weakref.ref(row_of)
        except TypeError:  # pragma: no cover - an array type without weak references
            return parts
        _ROW_PARTS[id(row_of)] = got = (ref, parts)
        weakref.finalize(row_of, _ROW_PARTS.pop, id(row_of), None)
    return got[1]


def _make_table_args(rules: RuleSet, table: PlayTable) -> tuple:
    d = rules.dice
    served = table.served_boxes is not None
    sub = np.asarray(table.sub_keep, dtype=np.int64)
    ok = np.maximum(sub, 0)
    sub_key = np.where(sub >= 0, d.keep_key[ok], 0).astype(np.int32)
    sub_missing = np.where(sub >= 0, d.n_dice - d.keep_size[ok], 0).astype(np.uint8)
    keeps = tuple(_ro(k, np.uint8) for k in table.keeps[1:])
    sboxes = _ro(table.served_boxes, np.uint8) if served else _ro(np.zeros((1, 1), np.uint8))
    prefix, first_roll, key_to_roll, first, later, is_upper, five_face, special, five_box, match_col, pts, bonus = \
        _rule_tables(rules, served)
    return (prefix, first_roll, key_to_roll, _ro(sub_key), _ro(sub_missing),
            *_row_parts_of(table.row_of, int(table.n_u), int(table.n_flag)), int(table.n_u), int(table.n_flag), keeps, _ro(table.boxes, np.uint8), served, sboxes, first, later, is_upper, five_face,
            special, five_box, match_col, pts, bonus)


_STATE_FIELDS = (("filled", np.bool_), ("box_scores", np.int16), ("fill_turn", np.int8), ("upper_total", np.int16),
                 ("five_bonus_count", np.int16), ("five_count", np.int16), ("five_box_full", np.bool_))


def _state_args(rules: RuleSet, table: PlayTable, state: GameState, n: int):
    """The card's arrays, C-contiguous and writable (copies where they are not, written
    back by :func:`_put_state`), and whether the served fives are counted."""
    arrays = [np.require(getattr(state, k), dtype=dt, requirements=["C", "W"]) for k, dt in _STATE_FIELDS]
    count = state.served_five_count is not None and table.served_boxes is not None
    served = (np.require(state.served_five_count, dtype=np.int16, requirements=["C", "W"]) if count
              else np.zeros(n, dtype=np.int16))
    return arrays + [served], count


def _put_state(state: GameState, arrays: list, count: bool) -> None:
    for (k, _), a in zip(_STATE_FIELDS, arrays):
        if getattr(state, k) is not a:
            getattr(state, k)[...] = a
    if count and state.served_five_count is not arrays[-1]:
        state.served_five_count[...] = arrays[-1]


def _unreachable(state: GameState, g: int):
    return ValueError(f"table play: game {g} is in a state no game can reach "
                      f"(upper total {int(state.upper_total[g])})")


def _play_compiled(kx, rules: RuleSet, table: PlayTable, state: GameState, tape: np.ndarray) -> None:
    """:func:`play_games` in the compiled loop (the same games as :func:`_play_numpy`)."""
    n, n_turns = tape.shape[:2]
    dice = np.require(tape.reshape(n, n_turns * rules.n_rolls * rules.n_dice), dtype=np.uint8,
                      requirements=["C", "W"])
    codes = np.empty((n, n_turns * rules.n_rolls), dtype=np.uint16)
    kx.encode_dice(dice, rules.n_faces, rules.n_dice, codes)
    arrays, count = _state_args(rules, table, state, n)
    bad = kx.play_games(codes, rules.n_rolls, state.turn, *_table_args(rules, table), *arrays, count)
    _put_state(state, arrays, count)
    _READY[rules.n_rolls] = True
    if bad >= 0:
        raise _unreachable(state, int(bad))
    state.turn += n_turns


def _raw_threshold(n_faces: int) -> int:
    return (256 - n_faces) % n_faces          # NumPy's Lemire rejection bound for a uint8 draw


def _raw_draws(rules: RuleSet, block: int, spare: float) -> int:
    """Raw 64-bit outputs to draw per block: the bytes its dice take on average plus
    ``spare`` standard deviations of the rejections (a block that runs short is drawn again)."""
    dice = block * rules.n_boxes * rules.n_rolls * rules.n_dice
    p = _raw_threshold(rules.n_faces) / 256
    mean = dice / (1 - p)
    sd = np.sqrt(dice * p) / (1 - p)
    return int(np.ceil((mean + spare * sd + 64) / 8))


def raw_dice_ok(rules: RuleSet, seed: np.random.SeedSequence, block: int) -> bool:
    """Does the raw-byte draw give NumPy's own dice here (checked once per process on one
    block: the compiled loop then trusts it)?

    >>> from yahtzee_sim import get_rules
    >>> raw_dice_ok(get_rules("yahtzee"), np.random.SeedSequence(3, spawn_key=(0,)), 64)
    True
    """
    import sys

    key = (rules.n_faces, rules.n_boxes * rules.n_rolls * rules.n_dice)
    if key not in _RAW_OK:
        shape = (block, rules.n_boxes, rules.n_rolls, rules.n_dice)
        want = np.random.Generator(np.random.PCG64(seed)).integers(1, rules.n_faces + 1, size=shape, dtype=np.uint8)
        raw = np.random.PCG64(seed).random_raw(_raw_draws(rules, block, 8.0)).view(np.uint8)
        m = raw.astype(np.int64) * rules.n_faces               # the rule of decode_dice, in NumPy
        dice = (1 + (m >> 8))[(m & 255) >= _raw_threshold(rules.n_faces)]
        _RAW_OK[key] = bool(sys.byteorder == "little" and dice.size >= want.size
                            and np.array_equal(dice[:want.size], want.reshape(-1)))
    return _RAW_OK[key]


def play_seed_blocks(rules: RuleSet, table: PlayTable, state: GameState, seeds: list, block: int) -> bool:
    """Play every game of ``state`` (fresh cards) from the dice of seed blocks ``seeds``
    (one ``SeedSequence`` per block of ``block`` games, as the engine draws them), in the
    compiled loop, the dice decoded from each block's raw generator output as they are
    played (no tape). Returns False, having played nothing, where the compiled loop is not
    ready (the caller draws the tapes and plays :func:`play_games`: the same games)."""
    n = len(state.upper_total)
    kx = _kernels(rules, n)
    if kx is None or not seeds or not raw_dice_ok(rules, seeds[0], block) or not _generator_ok(kx, seeds[0]):
        return False
    if table.served_boxes is not None and not rules.roll_dependent:
        raise ValueError("a table with served boxes needs a rule set whose boxes score by the throw")
    if state.turn != 0:
        raise ValueError("play_seed_blocks plays whole games from fresh cards")
    return _guarded(_play_raw, kx, rules, table, state, seeds, block)


def _pcg64_starts(seeds: list) -> np.ndarray:
    """(blocks, 4) uint64: each seed block's ``PCG64`` state and increment in 64-bit halves
    (low, high), where the compiled loop's generator (:func:`~yahtzee_sim.tableplay_kernels.pcg64_fill`)
    starts it."""
    out = np.empty((len(seeds), 4), dtype=np.uint64)
    low = (1 << 64) - 1
    for i, ss in enumerate(seeds):
        st = np.random.PCG64(ss).state["state"]
        out[i] = (st["state"] & low, st["state"] >> 64, st["inc"] & low, st["inc"] >> 64)
    return out


def _generator_ok(kx, seed: np.random.SeedSequence) -> bool:
    """Does the compiled loop's generator give ``PCG64.random_raw``'s outputs here (checked
    once per process: the loop then trusts it)?"""
    if "pcg64" not in _RAW_OK:
        want = np.random.PCG64(seed).random_raw(1027)       # not a whole number of its lanes
        got = np.empty(len(want), dtype=np.uint64)
        kx.pcg64_fill(_pcg64_starts([seed])[0], got)
        _RAW_OK["pcg64"] = bool(np.array_equal(got, want))
    return _RAW_OK["pcg64"]


def _play_raw(kx, rules: RuleSet, table: PlayTable, state: GameState, seeds: list, block: int) -> None:
    n = len(state.upper_total)
    width = rules.n_boxes * rules.n_rolls             # throws per game
    arrays, count = _state_args(rules, table, state, n)
    # each block's generator runs in the compiled loop, a block at a time (no raw array per
    # call, no NumPy call per block); a block short of bytes is drawn again there, longer
    bad = kx.play_raw_blocks(_pcg64_starts(seeds), _raw_draws(rules, block, 8.0), block, n,
                             rules.n_faces, _raw_threshold(rules.n_faces), width, rules.n_dice, rules.n_rolls,
                             *_table_args(rules, table), *arrays, count)
    _put_state(state, arrays, count)
    _READY[rules.n_rolls] = True
    if bad >= 0:
        raise _unreachable(state, int(bad))
    state.turn += rules.n_boxes
