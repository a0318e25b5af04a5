"""Gymnasium environments of the Yahtzee family (``pip install 'yahtzee-sim[gym]'``).

Importing this package registers one environment per rule set (``yahtzee_sim/Yahtzee-v0``,
``yahtzee_sim/Yacht-v0``, ``yahtzee_sim/Yatzy-v0``, ...; ``gymnasium.make(id, options=[...])``
for rule options, ``rules="house.toml"`` for a house-rules file) and its vector
environment, N games stepped together in NumPy (:class:`YahtzeeVectorEnv`;
``gymnasium.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``). Nothing else in the
package imports it, and gymnasium is imported only here.

One episode is one solitaire game; one step is one decision:

* **observation** (a ``Dict``): ``filled`` (B,) 0/1 boxes used; ``upper_total`` the
  upper-section points so far, capped at the bonus threshold (beyond it nothing in the
  game depends on them; 0 without an upper bonus); ``five_box_full`` 1 when the
  five-of-a-kind box holds its full value; ``dice`` (F,) how many dice show each face;
  ``rolls_left`` rolls still to come this turn (0: choose a box);
* **action** (``Discrete(K + B)``): ``a < K`` holds keep ``a`` of the dice tables
  (``rules.dice.keep_counts[a]`` counts the faces held) and rerolls the rest, legal while
  rolls are left and the dice show it; ``a = K + b`` writes the dice in box ``b``, legal
  when no roll is left and the rules allow ``b``;
* ``info["action_mask"]`` (K + B,) int8: the legal actions (also from :meth:`action_masks`);
* **reward**: the points the box adds (its score, an upper bonus reached, a
  five-of-a-kind bonus); 0 for a keep. The episode terminates with the card full; the
  return is the final score.

Seeding follows Gymnasium (``reset(seed=...)`` seeds ``self.np_random``) and throws the
simulator's dice: after ``reset(seed=S)`` the episodes are games 0, 1, 2, ... of
``simulate(rules, strategy, games=N, seed=S)`` (each game's dice tape, the same dice for
the same keeps), so an agent that decides as a strategy does scores what ``simulate``
gives it game by game (``docs/gym.md`` says where that stops). An illegal action changes nothing and gives
reward 0 with ``info["illegal_action"]`` (so unmasked agents and Gymnasium's checker can
step); ``illegal="raise"`` makes it a ``ValueError`` naming it.

:class:`PolicyStrategy` turns a policy (a callable from observation and mask to action)
into a :class:`~yahtzee_sim.strategies.Strategy`, so ``benchmark`` and ``policy_value``
evaluate a trained agent like any plug-in, exactly: its decisions depend only on what
the observation shows, the card and the dice.

>>> import gymnasium, yahtzee_sim.gym
>>> env = gymnasium.make("yahtzee_sim/Yacht-v0")
>>> obs, info = env.reset(seed=1)
>>> int(obs["rolls_left"]), int(info["action_mask"].sum()) > 1
(2, True)
"""

from __future__ import annotations


from .env import PolicyStrategy, YahtzeeEnv, YahtzeeVectorEnv, env_id, register_envs

__all__ = ["PolicyStrategy", "YahtzeeEnv", "YahtzeeVectorEnv", "env_id", "register_envs"]

register_envs()
