"""GradynVectorEnv: N worlds of one gradyn environment stepped by ONE batched gradyn.rollout call
(the worlds run on ``threads`` threads in C++), with Gymnasium 1.x's next-step autoreset.

    envs = gymnasium.make_vec("gradyn/Ant-v0", num_envs=8, vectorization_mode="vector_entry_point")

Each world has its own random generator: ``reset(seed=s)`` seeds world i with s + i (as
gymnasium.vector.SyncVectorEnv does), so world i follows the single environment reset with seed s + i
step for step, to the bit (gradyn's batched worlds equal the same call on one world).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from .base import GradynEnv


class GradynVectorEnv(VectorEnv):
    """``num_envs`` worlds of ``env_class`` (a :class:`gradyn.envs.base.GradynEnv` subclass).

    * step(actions (num_envs, action_dim)) runs every world whose episode goes on in one batched gradyn call.
    * Autoreset: ``AutoresetMode.NEXT_STEP`` (Gymnasium 1.x's default): a world whose episode ended
      (terminated, truncated by ``max_episode_steps`` or diverged) is reset by the *next* ``step``, which
      ignores that world's action and returns its first observation with reward 0, terminated and
      truncated False.
    * infos: ``status`` (gradyn.Status bits), ``diverged``, ``elapsed_steps`` and the reward's terms, each
      an array with its ``_name`` mask (False where the world was being reset).
    * ``threads``: threads of the batched call (None: all cores). Other keyword arguments go to env_class.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}

    def __init__(self, env_class: type[GradynEnv], num_envs: int, max_episode_steps: int | None = None,
                 threads: int | None = None, **env_kwargs):
        if not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs: expected a positive integer, got {num_envs!r}")
        if not (isinstance(env_class, type) and issubclass(env_class, GradynEnv)):
            raise TypeError(f"env_class: expected a gradyn.envs environment class (a GradynEnv subclass such as "
                            f"gradyn.envs.PendulumEnv), got {env_class!r}")
        # One environment holds the model, the spaces and the functions that every world shares.
        self.env = env_class(**env_kwargs)
        self.num_envs = int(num_envs)
        self.max_episode_steps = max_episode_steps
        self.threads = threads
        self.render_mode = self.env.render_mode
        self.metadata = {**self.env.metadata, "autoreset_mode": AutoresetMode.NEXT_STEP}
        self.single_observation_space = self.env.observation_space
        self.single_action_space = self.env.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        model = self.env.model
        self._q = np.zeros((self.num_envs, model.nq))
        self._v = np.zeros((self.num_envs, model.nv))
        self._rngs = [None] * self.num_envs
        self._elapsed = np.zeros(self.num_envs, dtype=np.int64)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._started = False

    @property
    def model(self):
        return self.env.model

    @property
    def dt(self):
        return self.env.dt

    def _reset_world(self, i: int):
        q, v = self.env._initial_state(self._rngs[i])
        self._q[i], self._v[i] = q, v
        self._elapsed[i] = 0

    def reset(self, *, seed: int | list | None = None, options: dict | None = None):
        """Reset every world (or those of ``options["reset_mask"]``); seed: None, an int (world i gets
        seed + i) or one seed (or None) per world. Returns (obs (num_envs, obs_dim), {})."""
        if seed is None or isinstance(seed, (int, np.integer)):
            seeds = [None if seed is None else int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"seed: expected None, an int or {self.num_envs} seeds (one per world), "
                                 f"got {len(seeds)}")
        mask = np.ones(self.num_envs, dtype=bool)
        if options and "reset_mask" in options:
            mask = np.asarray(options["reset_mask"], dtype=bool)
            if mask.shape != (self.num_envs,):
                raise ValueError(f"options['reset_mask']: expected shape ({self.num_envs},), got {mask.shape}")
        for i in np.flatnonzero(mask):
            if seeds[i] is not None or self._rngs[i] is None:
                self._rngs[i], _ = seeding.np_random(seeds[i])
            self._reset_world(i)
        self._autoreset[mask] = False
        self._started = True
        return self.env._observe(self._q, self._v, np), {}

    def step(self, actions):
        if not self._started:
            raise gym.error.ResetNeeded("call reset() before step()")
        actions = self.env._check_action(actions, batch=self.num_envs)
        obs = np.zeros((self.num_envs,) + self.single_observation_space.shape)
        reward = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, dtype=bool)
        truncated = np.zeros(self.num_envs, dtype=bool)
        status = np.zeros(self.num_envs, dtype=np.uint32)
        diverged = np.zeros(self.num_envs, dtype=bool)
        terms = {}
        resetting = self._autoreset.copy()
        for i in np.flatnonzero(resetting):
            self._reset_world(i)
        live = np.flatnonzero(~resetting)
        if live.size:
            q1, v1, o, r, term, div, st, tm = self.env._transition(self._q[live], self._v[live], actions[live],
                                                                   self.threads)
            self._q[live], self._v[live] = q1, v1
            obs[live], reward[live], terminated[live], diverged[live], status[live] = o, r, term, div, st
            for k, t in tm.items():
                terms[k] = np.zeros(self.num_envs)
                terms[k][live] = t
            self._elapsed[live] += 1
            truncated[live] = div
            if self.max_episode_steps is not None:
                truncated[live] |= self._elapsed[live] >= self.max_episode_steps
        if resetting.any():
            obs[resetting] = self.env._observe(self._q[resetting], self._v[resetting], np)
        self._autoreset = terminated | truncated
        stepped = ~resetting
        infos = {"status": status, "diverged": diverged, "elapsed_steps": self._elapsed.copy(), **terms}
        for k in list(infos):
            infos["_" + k] = stepped.copy()
        return obs, reward, terminated, truncated, infos

    def render(self):
        """A tuple of one (height, width, 3) uint8 frame per world (render_mode="rgb_array")."""
        if self.render_mode is None:
            gym.logger.warn("render() was called without a render_mode")
            return None
        from gradyn.viewer import render_rgb

        return tuple(render_rgb(self.model, q, width=self.env.width, height=self.env.height, camera=self.env.camera)
                     for q in self._q)

    def close_extras(self, **kwargs):
        self.env.close()
