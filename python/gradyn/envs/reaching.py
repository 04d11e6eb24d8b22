"""gradyn/Reaching-v0: an n-link pendulum reaches the highest point it can (paper 003, §6.2)."""

from __future__ import annotations

import os
import tempfile

import numpy as np

import gradyn

from .base import GradynEnv, box

#: The links of paper 003's pendulums (its ``pendulum{n}.urdf``, in ``models/pendulums``): each link
#: 0.5 m long with its mass at the far end, the first bob 1 kg, the others 2.16 kg.
LINK_LENGTH = 0.5
FIRST_MASS, OTHER_MASS = 1.0, 2.16
GRAVITY = 9.81


def _urdf(links: int, damping: float) -> str:
    """The n-link pendulum as a URDF: hinges about +x, the links along +y at q = 0 (horizontal),
    gravity along -z. Each link carries a thin cylinder and a sphere (the bob) as collision geoms, for
    rendering only (the model has no contact)."""
    L = LINK_LENGTH
    parts = ['<?xml version="1.0"?>', '<robot name="reaching">', '<link name="world"/>']
    for i in range(links):
        mass = FIRST_MASS if i == 0 else OTHER_MASS
        parts.append(
            f'<link name="link{i}">'
            f'<inertial><origin xyz="0 {L} 0"/><mass value="{mass}"/>'
            f'<inertia ixx="0.005" iyy="0.005" izz="0.003" ixy="0" ixz="0" iyz="0"/></inertial>'
            f'<collision><origin xyz="0 {L / 2} 0" rpy="1.5707963267948966 0 0"/>'
            f'<geometry><cylinder radius="0.02" length="{L}"/></geometry></collision>'
            f'<collision><origin xyz="0 {L} 0"/><geometry><sphere radius="0.05"/></geometry></collision>'
            f'</link>')
        parent = "world" if i == 0 else f"link{i - 1}"
        offset = 0.0 if i == 0 else L
        parts.append(f'<joint name="joint{i}" type="continuous"><parent link="{parent}"/><child link="link{i}"/>'
                     f'<origin xyz="0 {offset} 0"/><axis xyz="1 0 0"/><dynamics damping="{damping}"/></joint>')
    parts.append("</robot>")
    return "\n".join(parts)


def _cumsum(q, xp):
    return np.cumsum(q, axis=-1) if xp is np else xp.cumsum(q, dim=-1)


class ReachingEnv(GradynEnv):
    """An n-link pendulum under gravity, torque on every joint, reaches the highest point it can reach
    (paper 003 §6.2, Figure 4: its policy-enhancement experiment).

    * Model: ``links`` (n, 2..7 in the paper; any n >= 1 here) hinges about the world's x axis, the
      links 0.5 m long along +y at q = 0, the mass of each at its far end (1 kg for the first, 2.16 kg
      for the others, as paper 003's ``pendulum{n}.urdf``), joint damping ``damping`` (1 N m s/rad, the
      files'; their dry friction is not simulated), gravity 9.81 m/s^2 along -z. No contact.
    * Time: semi-implicit Euler steps of 0.0025 s, frame_skip 20: 0.05 s per environment step. (The
      light first link under the heavy chain makes the dynamics stiff: under random actions Euler at
      0.01 s diverged in most episodes of 6 and 7 links, at 0.005 s in some; at 0.0025 s in none of
      50 random-action episodes of 7 links, with joint rates up to about 250 rad/s. RK4 at 0.005 s is
      as stable and three times slower.)
    * Action: in [-1, 1]^n; joint i gets ``torque_limits[i]`` x action[i] N m (a generalised force),
      where torque_limits[i] is ``torque_factor`` (default 1.5) times the gravity torque joint i
      carries when the pendulum is horizontal: enough to lift the chain quasi-statically from any pose.
    * Observation (3n + 4): cos and sin of the joint angles, the joint rates, the end effector's
      (y, z) and its offset from the target (y, z).
    * Reward (paper 003 Eq. 15 read as progress): ``|x_{t-1} - x_g|^2 - |x_t - x_g|^2``, x the end
      effector (the tip of the last link), x_g = (0, 0.5 n) the highest reachable point. (Eq. 15 as
      printed has the opposite sign, which would reward moving away.) The return telescopes to
      ``|x_0 - x_g|^2 - |x_T - x_g|^2``, so its maximum is ``max_return = |x_0 - x_g|^2 = 0.5 n^2``
      m^2 and the *relative reward* return / max_return is 1 exactly when the episode ends at the
      target. Never terminates; truncated at ``max_episode_steps`` (registered: 50 steps, 2.5 s).
    * Start: horizontal and at rest (paper 003), plus U(-s, s) on every angle and rate with
      s = ``reset_noise_scale`` (default 0.01).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    sim_dt = 0.0025
    frame_skip = 20

    def __init__(self, links: int = 2, torque_factor: float = 1.5, damping: float = 1.0,
                 reset_noise_scale: float = 0.01, **kwargs):
        if isinstance(links, bool) or not isinstance(links, (int, np.integer)) or links < 1:
            raise ValueError(f"links: expected a whole number of links >= 1, got {links!r}")
        for name, value in (("torque_factor", torque_factor), ("damping", damping),
                            ("reset_noise_scale", reset_noise_scale)):
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
                    or not np.isfinite(value) or value < 0 or (name == "torque_factor" and value == 0):
                raise ValueError(f"{name}: expected a finite number >= 0{' (> 0)' if name == 'torque_factor' else ''}"
                                 f", got {value!r}")
        self.links = int(links)
        self.torque_factor, self.damping = float(torque_factor), float(damping)
        self.reset_noise_scale = float(reset_noise_scale)
        n = self.links
        masses = np.array([FIRST_MASS] + [OTHER_MASS] * (n - 1))
        # Gravity torque at joint i, chain horizontal: g sum_{j >= i} m_j (distance from joint i to bob j).
        lever = LINK_LENGTH * (np.arange(n)[None, :] - np.arange(n)[:, None] + 1)
        self.torque_limits = self.torque_factor * GRAVITY * np.where(lever > 0, lever, 0.0) @ masses
        self.target = np.array([0.0, LINK_LENGTH * n])
        x0 = np.array([LINK_LENGTH * n, 0.0])
        #: The largest return an episode can have (m^2): the squared distance from the start to the target.
        self.max_return = float(np.sum((x0 - self.target) ** 2))
        super().__init__(**kwargs)
        self.action_space = box([-1.0] * n, [1.0] * n)
        self.observation_space = box([-np.inf] * (3 * n + 4), [np.inf] * (3 * n + 4))

    def _make_model(self):
        fd, path = tempfile.mkstemp(suffix=".urdf", prefix="gradyn_reaching_")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(_urdf(self.links, self.damping))
            return gradyn.load(path)
        finally:
            os.unlink(path)

    def _initial_state(self, rng):
        s, n = self.reset_noise_scale, self.links
        return rng.uniform(-s, s, size=n), rng.uniform(-s, s, size=n)

    def _controls(self, action, xp):
        limits = self.torque_limits if xp is np else xp.as_tensor(self.torque_limits, dtype=action.dtype)
        return {"tau": action * limits}

    def end_effector(self, q, xp=np):
        """(y, z) of the tip of the last link, (..., 2), for joint angles q (..., n)."""
        phi = _cumsum(q, xp)
        return LINK_LENGTH * xp.stack([xp.cos(phi).sum(-1), xp.sin(phi).sum(-1)], axis=-1)

    def _target(self, like, xp):
        return self.target if xp is np else xp.as_tensor(self.target, dtype=like.dtype)

    def _observe(self, q, v, xp):
        tip = self.end_effector(q, xp)
        return xp.concatenate([xp.cos(q), xp.sin(q), v, tip, tip - self._target(tip, xp)], axis=-1)

    def _reward(self, q0, v0, q1, v1, action, xp):
        tip0, tip1 = self.end_effector(q0, xp), self.end_effector(q1, xp)
        goal = self._target(tip1, xp)
        d0 = ((tip0 - goal) ** 2).sum(-1)
        d1 = ((tip1 - goal) ** 2).sum(-1)
        return d0 - d1, xp.zeros_like(d1) > 0, {"distance": d1 ** 0.5}
