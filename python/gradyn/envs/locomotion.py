"""Locomotion: gradyn/Swimmer-v0 (Gymnasium's Swimmer-v5 reward), gradyn/Ant-v0 (Ant-v5's) and
gradyn/Laikago-v0 (an Ant-like reward for a quadruped on position servos)."""

from __future__ import annotations

import warnings

import numpy as np

import gradyn

from .base import GradynEnv, asset, box


def _forward_velocity(q0, q1, dt):
    """x velocity of the base, (x after - x before) / dt, as Gymnasium's MuJoCo locomotion rewards."""
    return (q1[..., 0] - q0[..., 0]) / dt


def _all_finite(q, v, xp):
    return xp.isfinite(q).all(-1) & xp.isfinite(v).all(-1)


def _rft_drag(a: float, b: float, normal: float, tangent: float) -> np.ndarray:
    """Resistive-force-theory drag of a slender segment from s = a to s = b along its body's x axis:
    the linear map from the body origin's (vx, vy, wz) to the wrench (fx, fy, tz) at the origin,
    -integral over s of [tangent vx, normal (vy + wz s)] (and its moment), per metre coefficients in N s/m^2."""
    length, m1, m2 = b - a, (b * b - a * a) / 2, (b ** 3 - a ** 3) / 3
    return -np.array([[tangent * length, 0.0, 0.0],
                      [0.0, normal * length, normal * m1],
                      [0.0, normal * m1, normal * m2]])


class SwimmerEnv(GradynEnv):
    """A three-link swimmer in a viscous fluid swims forward (Gymnasium's Swimmer-v5 reward and spaces).

    * Model: Brax's ``swimmer.xml`` (three 1 m capsules, hinges driven by motors of gear 150, limited to
      +-100 degrees by the penalty contact model's limit springs; nothing touches). gradyn
      does not simulate the file's fluid (MuJoCo's medium model), so each link carries resistive-force
      drag: per metre of capsule ``drag_normal`` N s/m^2 across it and ``drag_tangent`` along it
      (defaults 100 and 10: slender-body drag, anisotropic as a swimmer needs), integrated over the
      capsule and applied as a wrench on the link. It is a one-layer identity network at the link's
      body_wrench site (Model.with_network), so the drag coefficients are ordinary model parameters.
      Without any drag a swimmer cannot move its centre of mass.
    * Time: RK4 steps of 0.01 s, frame_skip 4: 0.04 s per environment step (Swimmer-v5's). RK4, because
      semi-implicit Euler at this step lets the swimmer's momentum drift (under the gait of the tests,
      without drag, its centre of mass wanders by metres where it must stay put) and that drift would
      pass for swimming.
    * Action: the two motors' controls in [-1, 1] (torque = 150 x control).
    * Observation (8): q[2:] (the angles rot, rot2, rot3) and v (5), as Swimmer-v5 (qpos[2:], qvel).
    * Reward: (x after - x before) / dt of the front link's origin (qpos[0], as Swimmer-v5) minus
      ``1e-4 |action|^2``. Never terminates; truncated at 1000 steps by the registration.
    * Start: q and v each + U(-0.1, 0.1) around rest (Swimmer-v5's reset noise).
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 25}
    sim_dt = 0.01
    frame_skip = 4
    integrator = "rk4"
    # The capsules of swimmer.xml, [start, end] along each link's own x axis.
    SEGMENTS = {"torso": (0.5, 1.5), "mid": (-1.0, 0.0), "back": (-1.0, 0.0)}

    def __init__(self, drag_normal: float = 100.0, drag_tangent: float = 10.0, forward_reward_weight: float = 1.0,
                 ctrl_cost_weight: float = 1e-4, reset_noise_scale: float = 0.1, **kwargs):
        self.drag_normal, self.drag_tangent = float(drag_normal), float(drag_tangent)
        self.forward_reward_weight, self.ctrl_cost_weight = forward_reward_weight, ctrl_cost_weight
        self.reset_noise_scale = reset_noise_scale
        super().__init__(**kwargs)
        self.action_space = box([-1.0] * 2, [1.0] * 2)
        self.observation_space = box([-np.inf] * 8, [np.inf] * 8)

    def _make_model(self):
        with warnings.catch_warnings():  # the file's fluid is what the drag networks below stand for
            warnings.filterwarnings("ignore", message=".*fluid forces.*")
            model = gradyn.load(asset("swimmer.xml"))
        inputs, outputs = ["vel.lin.x", "vel.lin.y", "vel.ang.z"], ["force.x", "force.y", "torque.z"]
        for body in self.SEGMENTS:
            model = model.with_network(f"drag_{body}", inputs=inputs, outputs=outputs, hidden=[],
                                       activation="identity", site="body_wrench", body=body)
        p = model.params
        for body, (a, b) in self.SEGMENTS.items():
            net = next(n for n in model.networks if n["name"] == f"drag_{body}")
            # One affine layer: the weights (row-major, output i, input j) then three zero biases.
            p[net["param_offset"]:net["param_offset"] + 9] = _rft_drag(a, b, self.drag_normal,
                                                                       self.drag_tangent).ravel()
        # Penalty contact, only for the joint limits of rot2 and rot3 (+-100 degrees, stiff springs): no geom
        # of the swimmer collides, and without a contact model gradyn does not enforce limits.
        return model.with_params(p).with_contact(model="penalty")

    def _initial_state(self, rng):
        s = self.reset_noise_scale
        return (self.model.neutral() + rng.uniform(-s, s, size=self.model.nq),
                rng.uniform(-s, s, size=self.model.nv))

    def _controls(self, action, xp):
        return {"ctrl": action}

    def _observe(self, q, v, xp):
        return xp.concatenate([q[..., 2:], v], axis=-1)

    def _reward(self, q0, v0, q1, v1, action, xp):
        forward = self.forward_reward_weight * _forward_velocity(q0, q1, self.dt)
        ctrl = self.ctrl_cost_weight * (action ** 2).sum(-1)
        never = xp.zeros_like(forward) > 0  # Swimmer-v5 never terminates
        return forward - ctrl, never, {"reward_forward": forward, "reward_ctrl": -ctrl, "x_position": q1[..., 0]}


class _Legged(GradynEnv):
    """Ant-v5's reward on a floating-base robot: healthy_reward while healthy, plus the base's x velocity
    (forward_reward_weight), minus ``ctrl_cost_weight |action|^2``; terminates when unhealthy."""

    healthy_z_range = (0.2, 1.0)

    def __init__(self, healthy_reward: float, forward_reward_weight: float, ctrl_cost_weight: float,
                 healthy_z_range, reset_noise_scale: float, **kwargs):
        self.healthy_reward, self.forward_reward_weight = healthy_reward, forward_reward_weight
        self.ctrl_cost_weight, self.healthy_z_range = ctrl_cost_weight, tuple(healthy_z_range)
        self.reset_noise_scale = reset_noise_scale
        super().__init__(**kwargs)
        # One unit action per actuator; observed: the base's pose without x and y, then all velocities.
        self.action_space = box([-1.0] * self.model.nu, [1.0] * self.model.nu)
        n = self.model.nq - 2 + self.model.nv
        self.observation_space = box([-np.inf] * n, [np.inf] * n)

    def _healthy(self, q, v, xp):
        z = q[..., 2]
        return _all_finite(q, v, xp) & (z >= self.healthy_z_range[0]) & (z <= self.healthy_z_range[1])

    def _observe(self, q, v, xp):
        return xp.concatenate([q[..., 2:], v], axis=-1)

    def _reward(self, q0, v0, q1, v1, action, xp):
        healthy = self._healthy(q1, v1, xp)
        x = q1[..., 0]
        healthy_reward = self.healthy_reward * xp.where(healthy, xp.ones_like(x), xp.zeros_like(x))
        velocity = _forward_velocity(q0, q1, self.dt)
        forward = self.forward_reward_weight * velocity
        ctrl = self.ctrl_cost_weight * (action ** 2).sum(-1)
        reward = healthy_reward + forward - ctrl
        terms = {"reward_survive": healthy_reward, "reward_forward": forward, "reward_ctrl": -ctrl,
                 "x_position": x, "y_position": q1[..., 1], "x_velocity": velocity}
        return reward, ~healthy, terms


class AntEnv(_Legged):
    """Brax's four-legged ant walks forward (Gymnasium's Ant-v5 reward, without its contact cost).

    * Model: Brax's ``ant.xml`` (torso sphere, four two-joint legs, 8 motors of gear 150, joint damping
      and armature 1), PGS contact (``contact="pgs"``; penalty contact diverges at this time step).
      As in Brax's file only the four foot spheres touch the floor.
    * Time: gradyn steps of 0.01 s (the file's), frame_skip 5: 0.05 s per environment step (Ant-v5's).
    * Action: the 8 motors' controls in [-1, 1] (torque = 150 x control), in the file's actuator order
      (``model.actuator_names``).
    * Observation (27): q[2:] (torso height, torso quaternion x, y, z, w, 8 joint angles) and v (14: the
      torso's linear then angular velocity, both in the torso's frame, then the joint rates), as Ant-v5
      with ``include_cfrc_ext_in_observation=False`` (the same 27 numbers, in gradyn's conventions).
    * Reward (Ant-v5): healthy_reward (1) while healthy + (x after - x before) / dt of the torso -
      ``0.5 |action|^2``. Ant-v5's contact cost (``5e-4 |clipped external contact forces|^2``) is left out:
      gradyn's step does not return contact forces.
    * Healthy: the state is finite and the torso height is in [0.2, 1.0] m (Ant-v5); an unhealthy
      state terminates; truncated at 1000 steps by the registration.
    * Start: the torso at 0.75 m (the file's and Ant-v5's) with the legs at Brax's init_qpos angles (the
      file's custom numeric: ankles at +-1 rad, inside their limits), moved by a tangent U(-0.1, 0.1) on
      every coordinate (gradyn.integrate), and v ~ 0.1 N(0, 1) (Ant-v5's reset noise); it drops about
      0.2 m onto its feet.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 20}
    sim_dt = 0.01
    frame_skip = 5

    def __init__(self, contact: str = "pgs", healthy_reward: float = 1.0, forward_reward_weight: float = 1.0,
                 ctrl_cost_weight: float = 0.5, healthy_z_range=(0.2, 1.0), reset_noise_scale: float = 0.1,
                 **kwargs):
        self.contact = contact
        super().__init__(healthy_reward, forward_reward_weight, ctrl_cost_weight, healthy_z_range, reset_noise_scale,
                         **kwargs)
        q = self.model.neutral()
        # The torso at the file's (and Ant-v5's) 0.75 m, the legs at Brax's init_qpos angles: the feet start
        # 0.19 m up, out of reach of the reset noise (from Brax's 0.55 m the noise would start them up to
        # 0.16 m inside the floor, and the contact would throw the ant up).
        q[2] = 0.75
        for joint, angle in zip(["hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4"],
                                [0.0, 1.0, 0.0, -1.0, 0.0, -1.0, 0.0, 1.0]):
            q[self.model.joint_idx_q(joint)] = angle
        self.init_q = q

    def _make_model(self):
        return gradyn.load(asset("ant.xml")).with_contact(model=self.contact)

    def _initial_state(self, rng):
        s = self.reset_noise_scale
        q = gradyn.integrate(self.model, self.init_q, rng.uniform(-s, s, size=self.model.nv))
        return q, s * rng.standard_normal(self.model.nv)

    def _controls(self, action, xp):
        return {"ctrl": action}


# The standing pose of examples/laikago_contact/laikago_scene.py: hips 0, thighs -0.1 rad, knees -0.45 rad
# put the four toes in one plane under the centre of mass.
_LAIKAGO_STANCE = {"hip_motor_2_chassis_joint": 0.0, "upper_leg_2_hip_motor_joint": -0.1,
                   "lower_leg_2_upper_leg_joint": -0.45}
_LAIKAGO_TOE_RADIUS = 0.03


class LaikagoEnv(_Legged):
    """The Laikago quadruped walks forward on PD position servos (an Ant-like reward).

    * Model: ``laikago_servos.xml``, PyBullet's Laikago (free base, 12 hinges, four 3 cm toe spheres)
      with a position servo on each hinge (kp 150 N m/rad, kv 5 N m s/rad, run inside gradyn's step),
      on a plane, PGS contact (``contact="pgs"``).
    * Time: gradyn steps of 2 ms, frame_skip 10: 0.02 s per environment step (5 ms steps diverge).
    * Action (12): joint targets around the standing pose, target = stance + ``action_scale`` x action,
      action in [-1, 1] (action_scale 0.4 rad), in ``model.actuator_names`` order (FR, FL, RR, RL legs:
      hip, thigh, knee). Action 0 stands.
    * Observation (35): q[2:] (base height, base quaternion x, y, z, w, 12 joint angles) and v (18: base
      linear then angular velocity in the base frame, then the joint rates).
    * Reward (Ant-v5's form): healthy_reward (1) while healthy + (x after - x before) / dt of the base -
      ``ctrl_cost_weight (0.05) |action|^2``; no contact cost.
    * Healthy: finite state, base height in [0.3, 0.8] m (it stands at 0.51 m) and the base upright
      within 60 degrees (its z axis's world z component >= 0.5); unhealthy terminates; truncated at
      1000 steps (20 s) by the registration.
    * Start: the stance 2 mm above the ground with U(-0.05, 0.05) rad on each joint and v ~ 0.05 N(0, 1)
      on every velocity.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 50}
    sim_dt = 0.002
    frame_skip = 10

    def __init__(self, contact: str = "pgs", action_scale: float = 0.4, healthy_reward: float = 1.0,
                 forward_reward_weight: float = 1.0, ctrl_cost_weight: float = 0.05, healthy_z_range=(0.3, 0.8),
                 reset_noise_scale: float = 0.05, **kwargs):
        self.contact, self.action_scale = contact, float(action_scale)
        super().__init__(healthy_reward, forward_reward_weight, ctrl_cost_weight, healthy_z_range, reset_noise_scale,
                         **kwargs)
        self.stance_ctrl = np.array([self._stance_angle(a["joint"]) for a in self.model.actuators])
        q = self.model.neutral()
        self._leg_q = np.array([self.model.joint_idx_q(n) for n in self.model.joint_names if n != "root"])
        for name in self.model.joint_names:
            if name != "root":
                q[self.model.joint_idx_q(name)] = self._stance_angle(name)
        toes = [f for f in self.model.frame_names if f.startswith("toe")]
        lowest = min(gradyn.frame_pose(self.model, q, f)[2, 3] for f in toes)
        q[2] += -lowest + _LAIKAGO_TOE_RADIUS + 0.002
        self.init_q = q

    @staticmethod
    def _stance_angle(joint):
        return next(angle for suffix, angle in _LAIKAGO_STANCE.items() if joint.endswith(suffix))

    def _make_model(self):
        return gradyn.load(asset("laikago_servos.xml")).with_contact(model=self.contact)

    def _healthy(self, q, v, xp):
        # q[3:7] is the base quaternion (x, y, z, w): its rotation's zz entry is 1 - 2 (x^2 + y^2).
        upright = 1 - 2 * (q[..., 3] ** 2 + q[..., 4] ** 2)
        return super()._healthy(q, v, xp) & (upright >= 0.5)

    def _initial_state(self, rng):
        s = self.reset_noise_scale
        q = self.init_q.copy()
        q[self._leg_q] += rng.uniform(-s, s, size=self._leg_q.size)
        return q, s * rng.standard_normal(self.model.nv)

    def _controls(self, action, xp):
        stance = self.stance_ctrl if xp is np else xp.as_tensor(self.stance_ctrl, dtype=action.dtype)
        return {"ctrl": stance + self.action_scale * action}
