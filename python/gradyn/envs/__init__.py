"""Gymnasium environments simulated by gradyn; importing this module registers them::

    import gymnasium, gradyn.envs
    env = gymnasium.make("gradyn/Ant-v0")                          # or "gradyn.envs:gradyn/Ant-v0" without the import
    envs = gymnasium.make_vec("gradyn/Ant-v0", num_envs=8, vectorization_mode="vector_entry_point")

==========================  ====  =====  ======  ==========  =======================================================
id                          obs   act    dt (s)  max steps   rules
==========================  ====  =====  ======  ==========  =======================================================
gradyn/Pendulum-v0          3     1      0.05    200         Pendulum-v1 swing-up (torque in [-2, 2] N m)
gradyn/CartPole-v0          4     1      0.02    1000        InvertedPendulum-v5 (force: 10 N x action in [-1, 1])
gradyn/Swimmer-v0           8     2      0.04    1000        Swimmer-v5 (resistive-force drag for the fluid)
gradyn/Ant-v0               27    8      0.05    1000        Ant-v5 without contact forces (obs) and contact cost; PGS
gradyn/Laikago-v0           35    12     0.02    1000        Ant-like on PD position servos; PGS
gradyn/Reaching-v0          3n+4  n      0.05    50          n-link pendulum reaching (paper 003 §6.2), links=n
==========================  ====  =====  ======  ==========  =======================================================

Each class's docstring (:class:`PendulumEnv`, :class:`CartPoleEnv`, :class:`SwimmerEnv`,
:class:`AntEnv`, :class:`LaikagoEnv`, :class:`ReachingEnv`) gives its model, time step and frame skip, spaces, reward,
termination and initial-state distribution. Common to all:

* **Stepping**: each environment step holds the action for ``frame_skip`` gradyn steps of ``sim_dt``
  (``env.unwrapped.dt`` = frame_skip x sim_dt), run as one ``gradyn.rollout`` call. Actions outside
  the action space are clipped to it; a wrong shape or a NaN raises ValueError naming both shapes.
* **Seeding**: ``reset(seed=s)`` reseeds the environment's generator (``env.np_random``), the only
  source of randomness: the same seed and actions give the same observations, to the bit.
* **Diverged worlds** never raise: a step whose gradyn.Status has NON_FINITE or SINGULAR_INERTIA
  returns ``truncated=True`` with ``info["diverged"]=True``, reward 0 and the last finite
  observation; the next step then needs ``reset()``. ``info["status"]`` holds every step's Status
  bits (OR over the frame skip), also the harmless ones (SOLVER_NOT_CONVERGED, DEEP_PENETRATION).
* **Vector environment**: :class:`GradynVectorEnv` steps all worlds in one batched gradyn call on all
  cores, with Gymnasium 1.x's next-step autoreset (``gymnasium.vector.AutoresetMode.NEXT_STEP``).
* **Differentiable step**: ``env.unwrapped.differentiable_step(q, v, action, params=None)`` returns
  ``(q_next, v_next, obs, reward, terminated)`` as torch tensors with gradients with respect to the
  state, the action and the model's parameters (gradyn.torch); ``env.unwrapped.state`` and
  ``set_state(q, v)`` read and set the state it starts from.
* **Rendering**: ``render_mode="rgb_array"`` draws frames with ``gradyn.viewer.render_rgb`` (``width``,
  ``height``, ``camera`` arguments of ``gymnasium.make``); there is no "human" mode (use
  ``gradyn.viewer.show``).
* **Models** ship in ``gradyn/envs/assets`` (see its README for their origins and licences).
"""

from __future__ import annotations

from functools import partial

import gymnasium as gym

from .base import DIVERGED, GradynEnv
from .classic import CartPoleEnv, PendulumEnv
from .locomotion import AntEnv, LaikagoEnv, SwimmerEnv
from .reaching import ReachingEnv
from .vector import GradynVectorEnv

__all__ = ["AntEnv", "CartPoleEnv", "DIVERGED", "ENV_IDS", "GradynEnv", "GradynVectorEnv", "LaikagoEnv",
           "PendulumEnv", "ReachingEnv", "SwimmerEnv", "register_envs"]

# id -> (class, max_episode_steps)
_ENVS = {
    "gradyn/Pendulum-v0": (PendulumEnv, 200),
    "gradyn/CartPole-v0": (CartPoleEnv, 1000),
    "gradyn/Swimmer-v0": (SwimmerEnv, 1000),
    "gradyn/Ant-v0": (AntEnv, 1000),
    "gradyn/Laikago-v0": (LaikagoEnv, 1000),
    "gradyn/Reaching-v0": (ReachingEnv, 50),
}
ENV_IDS = tuple(_ENVS)


def register_envs():
    """Register the environments with Gymnasium (done on import; a second call changes nothing)."""
    for env_id, (cls, steps) in _ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=f"{cls.__module__}:{cls.__name__}",
                         vector_entry_point=partial(GradynVectorEnv, cls), max_episode_steps=steps)


register_envs()
