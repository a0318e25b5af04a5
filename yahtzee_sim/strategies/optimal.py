"""The ``optimal`` strategy: exact optimal play from the solver's value tables.

Every decision maximizes the expected final score:

* box: the legal box with the largest ``gain + value(next state)``, where the
  engine's :class:`~yahtzee_sim.state.TurnOptions` supply the legal boxes and the
  gains (jokers, bonuses and fill order exactly as played) and
  :meth:`~yahtzee_sim.exact.solver.Solution.value` the value of the next state;
* keeps: the sub-keep with the largest expected value of the rest of the turn,
  from the same one-turn widget the solver uses. Where served combinations pay
  more (Generala), holding every die of the first throw keeps them served (it is
  not a throw): the plan values that keep at the served scores, and a game that
  held its served dice holds them to the end of the turn (optimal, since served
  scores never pay less).

The decisions are looked up in a decision table built once from the value
tables and cached on disk (:mod:`yahtzee_sim.exact.decisions`), and the engine
plays the games in its lean table loop (:mod:`yahtzee_sim.tableplay`). With
``table=False`` the strategy evaluates the widget per batch instead: the distinct
states of the batch (``np.unique`` of a state key, with upper totals that no open
box can tell apart merged) once per turn, the keep values with one reroll left kept
from the first keep call to the second of the same turn. Both make the same
decisions (tested game by game).

>>> from yahtzee_sim import simulate
>>> from yahtzee_sim.exact.solver import solve
>>> sol = solve("yacht", options=["fill-in-order"], cache=False)
>>> res = simulate("yacht", OptimalStrategy(sol), 4096, options=["fill-in-order"], seed=1)
>>> s = res.summary()
>>> bool(abs(s["mean"] - sol.mean) < 4 * s["se"])
True
"""

from __future__ import annotations

import numpy as np

from ..exact.space import turn_model, turn_values
from ..strategy import ChunkDecisions, Strategy, best_legal, register

__all__ = ["OptimalStrategy", "GAMES_BEFORE_BUILD"]

GAMES_BEFORE_BUILD = 100_000
"""A decision table not yet on disk is built for a run of at least this many games
(:meth:`OptimalStrategy.expect_games`, told by the runner before any work is shipped,
so the parent builds it once and every worker maps the one file), or once the
strategy has played this many games from the widget in the process (a strategy used
outside a run). About two seconds of widget play; the build of ``yahtzee``'s takes
about ten: short runs never pay for it, long ones soon do."""


@register
class OptimalStrategy(Strategy):
    """Exact optimal play (maximizes the expected final score).

    Pass a solved :class:`~yahtzee_sim.exact.solver.Solution` to reuse it; otherwise
    :meth:`prepare` calls :func:`~yahtzee_sim.exact.solver.solve` (disk-cached).
    ``table=False`` decides from the widget per batch instead of the decision table;
    ``progress`` is told how the table's first build goes (default: a bar on a
    terminal's stderr; see :mod:`yahtzee_sim.progress`).
    """

    name = "optimal"
    description = "exact optimal play: maximizes the expected final score (solver tables)"
    chunk: int = 2048
    uses_uniforms = False     # no random choices: the simulator skips drawing the uniforms

    def __init__(self, solution=None, *, table: bool = True, progress=True):
        self._given = solution
        self.rules = None
        self.use_table = bool(table)
        self.progress = progress

    def prepare(self, rules):
        from ..exact.solver import rules_fingerprint, solve

        super().prepare(rules)
        sol = self._given
        if sol is None:
            sol = solve(rules, progress=self.progress)     # a cold solve can take minutes
        elif sol.rules is not rules and rules_fingerprint(sol.rules) != rules_fingerprint(rules):
            raise ValueError(f"optimal: the solution is for {sol.rules.key}, not for {rules.key}")
        self.solution = sol
        self._space = sol.space
        self._model = turn_model(rules, np.float32)
        self._values = np.ascontiguousarray(sol.values).reshape(-1)
        from ..exact.decisions import sub_keep_order

        # sub-keeps of each roll, largest keep first (argmax then breaks ties towards
        # holding more dice, as the solver does); padding points at a -inf column
        self._sub_keep, self._sub_pos = sub_keep_order(rules)
        self._kept = None
        self._kept_key = None
        self._served = None                 # games whose dice are still the first throw's
        self.decisions = self._play_table = None      # built or loaded when first played
        self._row_decisions = None                    # a pass's rows, decided as it goes
        self._games_played = 0.0                      # by the widget, in this process
        self._run_end = 0.0                           # games played by the end of the run announced
        return self

    def expect_games(self, n: int) -> None:
        """Told by the runner before a run of ``n`` games starts (whatever processes play
        them): the table is built for the whole run's size, not per process.

        >>> from yahtzee_sim.exact.solver import solve
        >>> sol = solve("yacht-classic", cache=False)
        >>> s = OptimalStrategy(sol).prepare(sol.rules)
        >>> s.expect_games(10); s._run_end
        10.0
        """
        self._run_end = max(getattr(self, "_run_end", 0.0), self._games_played + int(n))

    def decision_table(self):
        """The strategy's :class:`~yahtzee_sim.exact.decisions.DecisionTable`, built (or read
        from the disk cache) on first use; from then on ``keep`` and ``box`` look it up."""
        if self.decisions is None:
            self._use(self._decision_table())
        return self.decisions

    def row_decisions(self):
        """The rows of its decision table decided when asked
        (:class:`~yahtzee_sim.exact.decisions.RowDecisions`: the table's bytes, no table):
        what an exact pass reads where no table is built or cached yet."""
        if self._row_decisions is None:
            from ..exact.decisions import row_decisions

            self._row_decisions = row_decisions(self.solution)
        return self._row_decisions

    def decides_rows(self, rules) -> bool:
        """Does an exact pass decide its rows as it goes rather than build the table? Where
        no table is built or on disk: a pass reads each row once, the build's work without
        the table's memory and file (a run of games then builds it if it is long enough).
        The risk strategies' and the served rule sets' tables are built as before.

        >>> from yahtzee_sim.exact.solver import solve
        >>> gen = solve("generala", cache=False)         # served scores: read from its table
        >>> OptimalStrategy(gen).prepare(gen.rules).decides_rows(gen.rules)
        False
        """
        return (self.decisions is None and not rules.roll_dependent and self._table_kind() == ("mean", 0.0)
                and not self._table_on_disk())

    @property
    def play_table(self):
        """The table the engine plays by (:mod:`yahtzee_sim.tableplay`), or None: with
        ``table=False``, for a table too large, and while a table that is not cached yet
        would cost more to build than the games played so far (:data:`GAMES_BEFORE_BUILD`).

        Only the simulator asks for it, so the exact evaluations that call ``keep`` on a
        few states never pay for a build.
        """
        if not self.use_table:
            return None
        if self._play_table is None:
            from ..exact.decisions import MAX_TABLE_BYTES, table_bytes

            if table_bytes(self.rules) > MAX_TABLE_BYTES:    # too large: decide per batch
                self.use_table = False
                return None
            planned = max(self._games_played, getattr(self, "_run_end", 0.0))     # the whole run
            if not self._table_on_disk() and planned < GAMES_BEFORE_BUILD:
                return None                  # a short run: the widget is quicker than a build
            if planned >= GAMES_BEFORE_BUILD:
                from ..tableplay import precompile

                # the compiled table loop, if the machine has none yet: compiled in a forked
                # process while the table is built or loaded (the games go on in NumPy until
                # then), at a low priority unless the run is long enough to need it
                precompile(self.rules, background=True, games=planned)
            self.decision_table()
        return self._play_table

    def _table_on_disk(self) -> bool:
        from ..exact.decisions import decisions_cache_path

        return decisions_cache_path(self.rules, *self._table_kind()).is_file()

    def _table_kind(self) -> tuple:
        return ("mean", 0.0)

    def _decision_table(self, trusted=None):
        from ..exact.decisions import decision_table

        return decision_table(self.solution, progress=self.progress, trusted=trusted)

    def _use(self, table) -> None:
        self.decisions = table
        self._play_table = table        # a DecisionTable is the PlayTable the engine plays by

    # -- travelling to worker processes: a cached table is reloaded there, not pickled ---
    def __getstate__(self):
        import os

        if self.use_table and getattr(self, "rules", None) is not None:
            self.play_table                  # noqa: B018 - built here once, not in every worker
        state = self.__dict__.copy()
        state["progress"] = False            # a worker reloads quietly
        state["_row_decisions"] = None       # a pass's helper (its planner does not pickle): made again if asked
        table = state.get("decisions")
        if table is not None and table.file_id is not None and os.path.exists(table.path):
            state["decisions"] = state["_play_table"] = None
            state["_reload_table"] = table.file_id      # verified here: mapped there, not rechecked
        return state

    def __setstate__(self, state):
        reload = state.pop("_reload_table", None)
        self.__dict__.update(state)
        if reload is not None:
            self._use(self._decision_table(reload))

    # -- state keys ------------------------------------------------------------------
    def _state(self, state):
        """(mask, capped upper total, flag) of each game's card."""
        return self._space.index(state.filled, state.upper_total, state.five_box_full)

    def _keys(self, state) -> np.ndarray:
        """(N,) state key of each game (upper totals no open box can tell apart merged)."""
        sp = self._space
        mask, u, flag = self._state(state)
        canon = sp.canonical_u(mask, u)
        if (canon < 0).any():
            g = int(np.flatnonzero(canon < 0)[0])
            raise ValueError(f"optimal: game {g} is in a state no game can reach "
                             f"(upper total {int(state.upper_total[g])})")
        return sp.flat(mask, canon, flag)

    def _plan(self, key):
        """Keep values (n_unique, K + 1) for 1, 2, .. rerolls left, and each game's row."""
        sp = self._space
        uniq, inv = np.unique(key, return_inverse=True)
        nf, nu = sp.n_flag, sp.n_u
        um, uu, uf = uniq // (nu * nf), (uniq // nf) % nu, uniq % nf
        k = self._model.n_keeps
        n_rolls = self.rules.n_rolls
        # (n_unique, K + 1): one row per state, so a game's sub-keeps are close in memory
        plans = [None] + [np.empty((len(uniq), k + 1), dtype=np.float32)
                          for _ in range(1, n_rolls)]
        for p in plans[1:]:
            p[:, k] = -np.inf                            # the padding column of _sub_pos
        for lo in range(0, len(uniq), self.chunk):
            hi = min(lo + self.chunk, len(uniq))
            _, (kv, _) = turn_values(self._model, self._values, None, um[lo:hi], uu[lo:hi],
                                     uf[lo:hi], plan=True)
            for j in range(1, n_rolls):
                plans[j][lo:hi, :k] = kv[j].T
        return plans, inv

    def _rows(self, state) -> np.ndarray:
        """(N,) decision-table row of each game."""
        mask, u, flag = self._state(state)
        row = self.decisions.row_of[self._space.flat(mask, u, flag)]
        if (row < 0).any():
            g = int(np.flatnonzero(row < 0)[0])
            raise ValueError(f"optimal: game {g} is in a state no game can reach "
                             f"(upper total {int(state.upper_total[g])})")
        return row

    def _served_keeps(self, keeps, rolls, rolls_left):
        """Served rule sets: a game that held its first throw's dice holds them again."""
        full = self.dice.roll_keep_index[rolls]
        first = rolls_left == self.rules.n_rolls - 1
        if first or self._served is None or len(self._served) != len(rolls):
            self._served = np.ones(len(rolls), dtype=bool)     # the first throw's dice
        elif self._served.any():
            keeps = np.where(self._served, full, keeps)        # held served dice: hold again
        self._served &= keeps == full
        return keeps

    def keep(self, state, rolls, rolls_left, u):
        keeps = self._best_keeps(state, rolls, rolls_left)
        return self._served_keeps(keeps, rolls, rolls_left) if self._model.served else keeps

    def _best_keeps(self, state, rolls, rolls_left):
        """The best keep of each game by the tables, before served dice are held."""
        if self.decisions is not None:
            pos = self.decisions.keeps[rolls_left][self._rows(state), rolls]
            return self._sub_keep[rolls, pos]
        # the plan of the turn's first keep call serves the next ones if the positions
        # are the same (checked on the keys, not on the object's identity)
        key = self._keys(state)
        if self._kept is None or not np.array_equal(self._kept_key, key):
            self._kept = self._plan(key)
            self._kept_key = key
        plans, inv = self._kept
        # one decision per distinct (state, roll) pair of the batch
        pair, back = np.unique(inv * self.dice.n_rolls + rolls, return_inverse=True)
        p_state, p_roll = pair // self.dice.n_rolls, pair % self.dice.n_rolls
        ev = plans[rolls_left][p_state[:, None], self._sub_pos[p_roll]]   # (P, S) keep values
        pick = np.argmax(ev, axis=1)
        if rolls_left == 1:
            self._kept = None                               # the turn's plan is used up
        return self._sub_keep[p_roll, pick][back]

    def box(self, state, rolls, options, u):
        if self.decisions is not None:
            row = self._rows(state)
            boxes = self.decisions.boxes[row, rolls]
            if self._model.served:
                served = self._served_now(len(rolls))
                boxes = np.where(served, self.decisions.served_boxes[row, rolls], boxes)
            return boxes.astype(np.intp)
        self._games_played += len(rolls) / self.rules.n_boxes
        mask, up, flag = self._state(state)
        nxt = self._space.next_flat(mask, up, flag, options.scores)
        worth = options.gain + self._values[nxt]   # NaN only where illegal
        self._kept = None
        return best_legal(worth, options.legal)

    def chunk_decisions(self, rules):
        """Where it plays by its decision table (always on served rule sets, whose keeps
        remember the turn), the table read per state; otherwise its boxes from the
        solver's values (``gain + value of the next state``) and its keeps up to exact
        ties (for score distributions)."""
        from ..exact.decisions import MAX_TABLE_BYTES, table_bytes
        from ..exact.distribution import optimal_keeps
        from ..exact.policy import optimal_boxes, row_decided, table_decisions

        if (self.use_table or rules.roll_dependent) and table_bytes(rules) <= MAX_TABLE_BYTES:
            return ChunkDecisions(tables=row_decided if self.decides_rows(rules) else table_decisions,
                                  hold_served=rules.roll_dependent, mirrors={
                "tables": ("keep", "_best_keeps", "box", "decision_table", "_use", "_rows", "_state",
                           "row_decisions", "decides_rows")})
        if rules.roll_dependent:
            raise ValueError(
                f"{self.name} on {rules.key} is evaluated exactly only from its own decision table "
                f"(its keeps remember which dice are still served), and that table "
                f"({table_bytes(rules):,} bytes, at most {MAX_TABLE_BYTES:,}) is not what it plays by "
                f"here; simulate it instead")
        return ChunkDecisions(boxes=optimal_boxes, keeps_up_to_ties=optimal_keeps, mirrors={
            "boxes": ("keep", "box", "_plan", "prepare", "_state"),
            "keeps_up_to_ties": ("keep", "box", "_plan", "prepare")})

    def _served_now(self, n: int) -> np.ndarray:
        """(N,) the final dice are still the first throw's (no keep asked: all are)."""
        if self.rules.n_rolls == 1 or self._served is None or len(self._served) != n:
            return np.ones(n, dtype=bool)
        return self._served
