"""gradyn/Pendulum-v0 (Gymnasium's Pendulum-v1 swing-up) and gradyn/CartPole-v0 (Gymnasium's
InvertedPendulum-v5 rules on the classic cart-pole's masses)."""

from __future__ import annotations

import numpy as np

import gradyn

from .base import GradynEnv, asset, box


def _angle_from_top(q, xp):
    """The pendulum's angle from upright in [-pi, pi): pendulum1.urdf's bob lies along +y at q = 0 and
    its hinge turns about +x, so the bob is up at q = pi/2."""
    return (q[..., 0] - np.pi / 2 + np.pi) % (2 * np.pi) - np.pi


class PendulumEnv(GradynEnv):
    """Swing a torque-limited pendulum up and hold it (Gymnasium's Pendulum-v1 reward and spaces).

    * Model: ``pendulum1.urdf`` (a 1 kg bob 0.5 m from the hinge: 0.26 kg m^2 about it), gravity
      9.81; its joint damping (1 N m s/rad in the file) is replaced by ``damping`` (default 0, as in
      Pendulum-v1: to reach the top the bob needs 8.8 rad/s at the bottom, where the file's damping
      would resist with 8.8 N m, over four times the torque limit).
    * Time: gradyn steps of 0.01 s, frame_skip 5: 0.05 s per environment step (Pendulum-v1's dt).
    * Action: the hinge torque in N m, Box(-2, 2, (1,)) (Pendulum-v1's max_torque), applied as a
      generalised force (tau).
    * Observation: [cos(theta), sin(theta), theta_dot], theta the angle from upright; theta_dot is not
      clipped (Pendulum-v1 clips it at 8 rad/s; here it is the simulated rate).
    * Reward: -(theta^2 + 0.1 theta_dot^2 + 0.001 torque^2), theta in [-pi, pi); never terminates,
      truncated at 200 steps by the registration.
    * Start: theta ~ U(-pi, pi), theta_dot ~ U(-1, 1) rad/s.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    sim_dt = 0.01
    frame_skip = 5

    def __init__(self, damping: float = 0.0, **kwargs):
        self.damping = float(damping)
        super().__init__(**kwargs)
        self.action_space = box([-2.0], [2.0])
        self.observation_space = box([-1.0, -1.0, -np.inf], [1.0, 1.0, np.inf])

    def _make_model(self):
        model = gradyn.load(asset("pendulum1.urdf"))
        # Gym's pendulum has no dry friction: the file's is removed
        return model.with_damping([self.damping]).with_frictionloss([0.0])

    def _initial_state(self, rng):
        theta, theta_dot = rng.uniform(-np.pi, np.pi), rng.uniform(-1.0, 1.0)
        return np.array([theta + np.pi / 2]), np.array([theta_dot])

    def _controls(self, action, xp):
        return {"tau": action}

    def _observe(self, q, v, xp):
        theta = _angle_from_top(q, xp)
        return xp.stack([xp.cos(theta), xp.sin(theta), v[..., 0]], axis=-1)

    def _reward(self, q0, v0, q1, v1, action, xp):
        # Pendulum-v1 scores the state the action was applied in, and the action.
        theta = _angle_from_top(q0, xp)
        cost = theta ** 2 + 0.1 * v0[..., 0] ** 2 + 0.001 * action[..., 0] ** 2
        return -cost, xp.zeros_like(cost) != 0, {"reward_angle": -theta ** 2}


class CartPoleEnv(GradynEnv):
    """Balance a pole on a cart pushed by a bounded force (Gymnasium's InvertedPendulum-v5 rules).

    * Model: ``cartpole.urdf`` (the classic cart-pole's numbers: cart 1 kg on a slider, pole 0.1 kg, 1 m,
      hinged at the cart), its slider driven by the URDF's motor (gear 1, so ctrl is the force in N).
      No contact model (the file's slider limits of +-15 m are never reached: the episode ends at 2.4 m).
    * Time: gradyn steps of 0.01 s, frame_skip 2: 0.02 s per environment step (CartPole-v1's tau).
    * Action: in [-1, 1], the force on the cart in units of ``force_scale`` (10 N, CartPole-v1's force
      magnitude; continuous).
    * Observation: [x, theta, x_dot, theta_dot] (theta 0 upright), as InvertedPendulum-v5 (qpos, qvel).
    * Reward: 1 per step while the pole stands, 0 on the terminating step (InvertedPendulum-v5).
    * Terminates when ``|theta| > 0.2`` rad (InvertedPendulum-v5) or ``|x| > 2.4`` m (CartPole-v1's track), or
      the state is not finite; truncated at 1000 steps by the registration.
    * Start: q and v each ~ U(-0.01, 0.01) (InvertedPendulum-v5's reset noise).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}
    sim_dt = 0.01
    frame_skip = 2

    def __init__(self, force_scale: float = 10.0, **kwargs):
        self.force_scale = float(force_scale)
        super().__init__(**kwargs)
        self.action_space = box([-1.0], [1.0])
        self.observation_space = box([-np.inf] * 4, [np.inf] * 4)

    def _make_model(self):
        return gradyn.load(asset("cartpole.urdf"))

    def _initial_state(self, rng):
        return rng.uniform(-0.01, 0.01, size=2), rng.uniform(-0.01, 0.01, size=2)

    def _controls(self, action, xp):
        return {"ctrl": self.force_scale * action}

    def _observe(self, q, v, xp):
        return xp.concatenate([q, v], axis=-1)

    def _reward(self, q0, v0, q1, v1, action, xp):
        finite = xp.isfinite(q1).all(-1) & xp.isfinite(v1).all(-1)
        terminated = ~finite | (xp.abs(q1[..., 1]) > 0.2) | (xp.abs(q1[..., 0]) > 2.4)
        x = q1[..., 0]
        return xp.where(terminated, xp.zeros_like(x), xp.ones_like(x)), terminated, {}
