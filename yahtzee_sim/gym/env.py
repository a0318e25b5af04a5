"""The environment, its registration, and the policy -> strategy wrapper (see the package)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ..rules import RuleSet, get_rules, rule_names
from ..strategies import Strategy
from ..validate import whole_number


def upper_cap(rules: RuleSet) -> int:
    """Upper totals are shown capped at the (highest) bonus threshold: beyond it nothing in
    the game depends on them, so a policy sees what the exact evaluation tells apart.

    >>> upper_cap(get_rules("yahtzee")), upper_cap(get_rules("yacht", ["no-bonus"]))
    (63, 0)
    """
    return int(rules.upper_bonus_threshold) if rules.upper_bonus_tiers else 0


def _plain(rules: RuleSet) -> str:
    """Why ``rules`` has no environment here ('' when it has one)."""
    if rules.columns or rules.announces:
        return "its columns and announcements"
    if rules.banked_throws:
        return "its saved throws"
    if rules.roll_dependent:
        return "its served dice (a turn's first throw scores more)"
    if rules.card_score is not None:
        return "its score of the whole card"
    return ""


def env_id(name: str) -> str:
    """The registered id of a rule set's environment.

    >>> env_id("yahtzee-free-joker")
    'yahtzee_sim/YahtzeeFreeJoker-v0'
    """
    return "yahtzee_sim/" + "".join(part.capitalize() for part in name.split("-")) + "-v0"


def register_envs() -> list[str]:
    """Register an environment per rule set it plays, and its vector environment
    (``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``);
    idempotent; returns the ids.

    >>> "yahtzee_sim/Yatzy-v0" in register_envs()
    True
    """
    ids = []
    for name in rule_names():
        if _plain(get_rules(name)):
            continue
        eid = env_id(name)
        if eid not in gym.registry:
            gym.register(id=eid, entry_point="yahtzee_sim.gym.env:YahtzeeEnv", kwargs={"rules": name},
                         vector_entry_point="yahtzee_sim.gym.env:YahtzeeVectorEnv")
        ids.append(eid)
    return ids


class YahtzeeEnv(gym.Env):
    """One solitaire game of a rule set, one decision per step (see :mod:`yahtzee_sim.gym`).

    >>> env = YahtzeeEnv("yacht")
    >>> obs, info = env.reset(seed=3)
    >>> total, done = 0, False
    >>> while not done:                       # the first legal action every time
    ...     a = int(np.flatnonzero(info["action_mask"])[0])
    ...     obs, r, done, _, info = env.step(a)
    ...     total += r
    >>> total == env.score
    True
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(self, rules: str | RuleSet = "yahtzee", options=(), render_mode: str | None = None,
                 illegal: str = "ignore"):
        self.rules = rules = get_rules(rules, options)
        if illegal not in ("ignore", "raise"):
            raise ValueError(f"illegal must be 'ignore' or 'raise', got {illegal!r}")
        self.illegal = illegal
        why = _plain(rules)
        if why:
            raise ValueError(f"no environment for {rules.key}: {why} are not modelled here; "
                             f"environments: {', '.join(n for n in rule_names() if not _plain(get_rules(n)))}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        d = rules.dice
        self.n_keeps, self.n_boxes = d.n_keeps, rules.n_boxes
        self.observation_space = spaces.Dict({
            "filled": spaces.MultiBinary(rules.n_boxes),
            "upper_total": spaces.Discrete(upper_cap(rules) + 1),
            "five_box_full": spaces.Discrete(2),
            "dice": spaces.Box(0, rules.n_dice, shape=(rules.n_faces,), dtype=np.int64),
            "rolls_left": spaces.Discrete(rules.n_rolls),
        })
        self.action_space = spaces.Discrete(d.n_keeps + rules.n_boxes)
        self._sub = np.zeros((d.n_rolls, d.n_keeps), dtype=bool)
        r_idx, s_idx = np.nonzero(d.subkeeps >= 0)
        self._sub[r_idx, d.subkeeps[r_idx, s_idx]] = True
        self._new_card()
        self._roll = 0
        self.run_seed, self.game_index = None, -1
        self._tapes = _Tapes(rules)

    def _new_card(self):
        self.filled = np.zeros(self.n_boxes, dtype=bool)
        self.upper_total = 0
        self.five_box_full = False
        self.score = 0
        self.rolls_left = self.rules.n_rolls - 1

    def _throw(self, keep: int) -> None:
        """Hold ``keep``, throw the rest: the first dice of this throw's slot of the game's
        tape (turn = boxes filled, slot = throws made before it this turn), as the
        simulator does (``rolls_left`` already counts this throw as made)."""
        d = self.rules.dice
        held = np.repeat(np.arange(1, d.n_faces + 1), d.keep_counts[keep])
        slot = self.rules.n_rolls - 1 - self.rolls_left
        fresh = self._tape[int(self.filled.sum()), slot, :d.n_dice - len(held)]
        self._roll = int(d.roll_index(np.concatenate([held, fresh])[None, :])[0])

    def _options(self):
        rules = self.rules
        legal, scores, bonus = rules.turn_options(self.filled[None, :], np.array([self.five_box_full]),
                                                  np.array([self._roll]))
        gain = scores + rules.upper_bonus_gain(np.array([self.upper_total]), scores) + bonus[:, None]
        return legal[0], scores[0], gain[0]

    def action_masks(self) -> np.ndarray:
        """(K + B,) int8: 1 for each legal action now."""
        mask = np.zeros(self.n_keeps + self.n_boxes, dtype=np.int8)
        if self.filled.all():
            return mask
        if self.rolls_left > 0:
            mask[:self.n_keeps] = self._sub[self._roll]
        else:
            mask[self.n_keeps:] = self._options()[0]
        return mask

    def _obs(self):
        return {"filled": self.filled.astype(np.int8), "upper_total": int(min(self.upper_total, upper_cap(self.rules))),
                "five_box_full": int(self.five_box_full),
                "dice": self.rules.dice.roll_counts[self._roll].astype(np.int64),
                "rolls_left": int(self.rolls_left)}

    def _info(self):
        return {"action_mask": self.action_masks(), "score": self.score}

    def reset(self, *, seed=None, options=None):
        """Start the next game: with ``seed=S`` game 0 of ``simulate(rules, strategy,
        games=N, seed=S)``, each later ``reset()`` the next game of that run (without any
        seed yet, a run seed drawn from ``self.np_random``; see :attr:`run_seed`,
        :attr:`game_index`).

        >>> env = YahtzeeEnv("yacht")
        >>> _ = env.reset(seed=4)
        >>> _ = env.reset()
        >>> env.run_seed, env.game_index
        (4, 1)
        """
        super().reset(seed=seed)
        if seed is not None or self.run_seed is None:
            self.run_seed = int(seed) if seed is not None else int(self.np_random.integers(2**63))
            self.game_index = -1
        self.game_index += 1
        self._tape = self._tapes.games(self.run_seed, np.array([self.game_index]))[0]
        self._new_card()
        self._throw(0)
        return self._obs(), self._info()

    def step(self, action):
        a = int(action)
        mask = self.action_masks()
        if not (0 <= a < len(mask) and mask[a] == 1):
            if self.illegal == "ignore":     # nothing happens; said in the info
                return self._obs(), 0, bool(self.filled.all()), False, dict(self._info(), illegal_action=True)
            what = "keep" if 0 <= a < self.n_keeps and self.rolls_left > 0 else "action"
            raise ValueError(f"illegal {what} {a} with {self.rolls_left} rolls left and dice "
                             f"{self.rules.dice.roll_dice[self._roll].tolist()}: see info['action_mask']")
        reward = 0
        if a < self.n_keeps:
            self.rolls_left -= 1
            self._throw(a)
        else:
            rules, b = self.rules, a - self.n_keeps
            _, scores, gain = self._options()
            reward = int(gain[b])
            self.filled[b] = True
            if rules.is_upper[b]:
                self.upper_total += int(scores[b])
            if b == rules.five_box_index and int(scores[b]) > 0:
                self.five_box_full = True
            self.score += reward
            self.rolls_left = rules.n_rolls - 1
            if not self.filled.all():
                self._throw(0)
        done = bool(self.filled.all())
        return self._obs(), reward, done, False, self._info()

    def render(self):
        if self.render_mode == "ansi":
            d = self.rules.dice
            boxes = ", ".join(n for n, f in zip(self.rules.box_names, self.filled) if f) or "none"
            return (f"score {self.score}; filled: {boxes}; dice {d.roll_dice[self._roll].tolist()}, "
                    f"{self.rolls_left} rolls left")
        return None


class _Tapes:
    """The simulator's dice tapes of a run (:func:`yahtzee_sim.engine.block_tapes`: game
    ``g`` is row ``g % SEED_BLOCK`` of seed block ``g // SEED_BLOCK``), the last block
    drawn kept for the games that follow."""

    def __init__(self, rules: RuleSet):
        self.rules, self.key, self.block = rules, None, None

    def games(self, run_seed: int, games: np.ndarray) -> np.ndarray:
        """(len(games), turns, rolls, dice) uint8: the dice tapes of those game numbers."""
        from ..engine import SEED_BLOCK, block_tapes

        out = np.empty((len(games), self.rules.n_boxes, self.rules.n_rolls, self.rules.n_dice), dtype=np.uint8)
        for b in np.unique(games // SEED_BLOCK):
            if self.key != (run_seed, int(b)):
                self.block = block_tapes(self.rules, run_seed, range(int(b), int(b) + 1), self.rules.n_boxes,
                                         uniforms=False)[0]
                self.key = (run_seed, int(b))
            here = games // SEED_BLOCK == b
            out[here] = self.block[games[here] % SEED_BLOCK]
        return out


class PolicyStrategy(Strategy):
    """A policy over this package's observations and masks, as a strategy of the engine.

    ``policy(obs, mask) -> action`` for one observation at a time, or with
    ``batched=True`` ``policy(obs, mask) -> actions`` where every entry of ``obs`` has a
    leading batch axis and ``mask`` is (N, K + B). The policy sees what the environment
    shows (the card and the dice), so its decisions depend on those alone and it is
    exactly evaluable (:func:`yahtzee_sim.exact.policy.policy_value`, ``benchmark``).
    An action of the wrong kind, shape or legality raises the engine's ``StrategyError``.

    >>> from yahtzee_sim import simulate
    >>> first = PolicyStrategy(lambda obs, mask: int(np.flatnonzero(mask)[0]), name="first-legal")
    >>> simulate("yacht", first, 1024, seed=1).n_games
    1024
    """

    def __init__(self, policy, *, batched: bool = False, name: str = "policy"):
        if not callable(policy):
            raise ValueError(f"policy must be a callable (obs, mask) -> action, got {type(policy).__name__}")
        self.policy, self.batched, self.name = policy, batched, name

    def prepare(self, rules):
        super().prepare(rules)
        d = rules.dice
        self._sub = np.zeros((d.n_rolls, d.n_keeps), dtype=bool)
        r_idx, s_idx = np.nonzero(d.subkeeps >= 0)
        self._sub[r_idx, d.subkeeps[r_idx, s_idx]] = True
        return self

    def _obs(self, state, rolls, rolls_left):
        return {"filled": state.filled.astype(np.int8),
                "upper_total": np.minimum(state.upper_total.astype(np.int64), upper_cap(self.rules)),
                "five_box_full": state.five_box_full.astype(np.int64),
                "dice": self.dice.roll_counts[rolls].astype(np.int64),
                "rolls_left": np.full(len(rolls), rolls_left, dtype=np.int64)}

    def _ask(self, obs, mask):
        from ..engine import StrategyError

        n = len(mask)
        if self.batched:
            out = np.asarray(self.policy(obs, mask))
        else:
            out = np.array([self.policy({k: v[i] for k, v in obs.items()}, mask[i]) for i in range(n)])
        if out.shape != (n,) or out.dtype.kind not in "iu":
            raise StrategyError(f"policy {self.name!r} must return {'(N,) integer actions' if self.batched else 'one integer action'}, "
                                f"got shape {out.shape} dtype {out.dtype}")
        ok = (out >= 0) & (out < mask.shape[1])
        ok[ok] = mask[np.flatnonzero(ok), out[ok]] == 1
        if not ok.all():
            g = int(np.flatnonzero(~ok)[0])
            raise StrategyError(f"policy {self.name!r} chose illegal action {int(out[g])} (see the action mask)")
        return out

    def keep(self, state, rolls, rolls_left, u):
        k = self.dice.n_keeps
        mask = np.zeros((len(rolls), k + self.rules.n_boxes), dtype=np.int8)
        mask[:, :k] = self._sub[rolls]
        return self._ask(self._obs(state, rolls, rolls_left), mask).astype(np.intp)

    def box(self, state, rolls, options, u):
        k = self.dice.n_keeps
        mask = np.zeros((len(rolls), k + self.rules.n_boxes), dtype=np.int8)
        mask[:, k:] = options.legal
        return (self._ask(self._obs(state, rolls, 0), mask) - k).astype(np.intp)


class YahtzeeVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games stepped together in NumPy (the vectorized engine's state as
    arrays, batch axis first): the same observations, actions, masks (``infos["action_mask"]``,
    (N, K + B)) and rewards as :class:`YahtzeeEnv`, one row per game. A finished game is
    reset on the next step (Gymnasium's next-step autoreset; that step's action is ignored).
    An illegal action changes nothing in its row (reward 0, ``infos["illegal_action"]``).

    >>> venv = YahtzeeVectorEnv("yacht", num_envs=4)
    >>> obs, infos = venv.reset(seed=2)
    >>> obs["dice"].shape, infos["action_mask"].shape          # 462 keeps + 12 boxes
    ((4, 6), (4, 474))
    """

    metadata = {"autoreset_mode": gym.vector.AutoresetMode.NEXT_STEP}

    def __init__(self, rules: str | RuleSet = "yahtzee", options=(), num_envs: int = 16):
        from gymnasium.vector.utils import batch_space

        single = YahtzeeEnv(rules, options)
        self.rules, self.num_envs = single.rules, whole_number(num_envs, "num_envs")
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = batch_space(single.observation_space, self.num_envs)
        self.action_space = batch_space(single.action_space, self.num_envs)
        self._sub, self.n_keeps, self.n_boxes = single._sub, single.n_keeps, single.n_boxes
        self._cap = upper_cap(self.rules)
        n, b = self.num_envs, self.n_boxes
        self.filled = np.zeros((n, b), dtype=bool)
        self.upper_total = np.zeros(n, dtype=np.int64)
        self.five_box_full = np.zeros(n, dtype=bool)
        self.score = np.zeros(n, dtype=np.int64)
        self.rolls_left = np.zeros(n, dtype=np.int64)
        self.roll = np.zeros(n, dtype=np.intp)
        self._done = np.zeros(n, dtype=bool)
        self.run_seed, self.next_game = None, 0
        self.game_index = np.zeros(n, dtype=np.int64)
        self._tapes = _Tapes(self.rules)
        self._tape = np.zeros((n, self.rules.n_boxes, self.rules.n_rolls, self.rules.n_dice), dtype=np.uint8)

    def _throw(self, rows, keeps):
        """Hold ``keeps``, throw the rest from each game's tape (see :meth:`YahtzeeEnv._throw`)."""
        d = self.rules.dice
        held = d.keep_counts[keeps].astype(np.int64)                    # (m, F)
        slot = self.rules.n_rolls - 1 - self.rolls_left[rows]
        fresh = self._tape[rows, self.filled[rows].sum(axis=1), slot].astype(np.int64) - 1
        use = np.arange(d.n_dice)[None, :] < (d.n_dice - held.sum(axis=1))[:, None]
        counts = held + np.stack([((fresh == f) & use).sum(axis=1) for f in range(d.n_faces)], axis=1)
        dice = np.repeat(np.tile(np.arange(1, d.n_faces + 1), (len(rows), 1)).ravel(), counts.ravel())
        self.roll[rows] = d.roll_index(dice.reshape(len(rows), d.n_dice))

    def _new(self, rows):
        self.filled[rows] = False
        self.upper_total[rows] = 0
        self.five_box_full[rows] = False
        self.score[rows] = 0
        self.rolls_left[rows] = self.rules.n_rolls - 1
        games = self.next_game + np.arange(len(rows))                 # the run's next games, row order
        self.next_game += len(rows)
        self.game_index[rows] = games
        self._tape[rows] = self._tapes.games(self.run_seed, games)
        self._throw(rows, np.zeros(len(rows), dtype=np.intp))

    def _options(self):
        rules = self.rules
        legal, scores, bonus = rules.turn_options(self.filled, self.five_box_full, self.roll)
        gain = scores + rules.upper_bonus_gain(self.upper_total, scores) + bonus[:, None]
        return legal, scores, gain

    def action_masks(self) -> np.ndarray:
        """(N, K + B) int8: the legal actions of each game now."""
        legal = self._options()[0]
        mask = np.zeros((self.num_envs, self.n_keeps + self.n_boxes), dtype=np.int8)
        keeping = self.rolls_left > 0
        mask[keeping, :self.n_keeps] = self._sub[self.roll[keeping]]
        mask[~keeping, self.n_keeps:] = legal[~keeping]
        return mask

    def _obs(self):
        return {"filled": self.filled.astype(np.int8), "upper_total": np.minimum(self.upper_total, self._cap),
                "five_box_full": self.five_box_full.astype(np.int64),
                "dice": self.rules.dice.roll_counts[self.roll].astype(np.int64),
                "rolls_left": self.rolls_left.copy()}

    def reset(self, *, seed=None, options=None):
        """With ``seed=S`` row i plays game i of ``simulate(rules, strategy, games=N, seed=S)``;
        later games (autoreset, ``reset()``) take the run's next game numbers in row order."""
        super().reset(seed=seed)
        if seed is not None or self.run_seed is None:
            self.run_seed = int(seed) if seed is not None else int(self.np_random.integers(2**63))
            self.next_game = 0
        self._new(np.arange(self.num_envs))
        self._done[:] = False
        return self._obs(), {"action_mask": self.action_masks(), "score": self.score.copy()}

    def step(self, actions):
        rules, n = self.rules, self.num_envs
        a = np.asarray(actions, dtype=np.int64).reshape(n)
        mask = self.action_masks()
        ok = (a >= 0) & (a < mask.shape[1])
        ok[ok] = mask[np.flatnonzero(ok), a[ok]] == 1
        reward = np.zeros(n, dtype=np.int64)
        restart = np.flatnonzero(self._done)
        ok[restart] = False
        legal, scores, gain = self._options()
        keep = ok & (a < self.n_keeps)
        rows = np.flatnonzero(keep)
        if len(rows):
            self.rolls_left[rows] -= 1
            self._throw(rows, a[rows].astype(np.intp))
        rows = np.flatnonzero(ok & ~keep)
        if len(rows):
            b = a[rows] - self.n_keeps
            reward[rows] = gain[rows, b]
            self.filled[rows, b] = True
            self.upper_total[rows] += np.where(rules.is_upper[b], scores[rows, b], 0)
            if rules.five_box is not None:
                self.five_box_full[rows] |= (b == rules.five_box_index) & (scores[rows, b] > 0)
            self.score[rows] += reward[rows]
            self.rolls_left[rows] = rules.n_rolls - 1
            going = rows[~self.filled[rows].all(axis=1)]
            if len(going):
                self._throw(going, np.zeros(len(going), dtype=np.intp))
        if len(restart):
            self._new(restart)
        terminated = self.filled.all(axis=1)
        self._done = terminated.copy()
        illegal = ~ok
        illegal[restart] = False
        infos = {"action_mask": self.action_masks(), "score": self.score.copy(), "illegal_action": illegal}
        return self._obs(), reward.astype(np.float64), terminated, np.zeros(n, dtype=bool), infos
