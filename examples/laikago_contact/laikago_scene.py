"""The laikago-on-a-plane scene shared by examples/laikago_contact/laikago_contact.py and
bench/compare_mujoco_contact.py: the robot of Qiao et al. 2021's benchmark (laikago_toes_zup.urdf,
floating base, four toe spheres of radius 3 cm) on a ground plane, for gradyn and for MuJoCo.

gradyn loads the URDF itself. MuJoCo gets an MJCF generated here from the same URDF (mujoco_xml):
the same bodies, joint placements and axes, masses, centres of mass and inertias, the toe spheres
(the URDF's mesh collisions are not shipped, and gradyn skips them too), a plane, and one motor
per leg joint (gear 1, unlimited) so that MuJoCo's control is gradyn's joint torque.
check_free_dynamics() proves that the two describe the same robot before anything is compared.

State conventions (see tests/python/test_mujoco_oracle.py): quaternions are x, y, z, w in gradyn
and w, x, y, z in MuJoCo; the free joint's linear velocity is in the body frame in gradyn and in
the world frame in MuJoCo (angular velocity in the body frame in both).
"""

from __future__ import annotations

import pathlib
import warnings
import xml.etree.ElementTree as ET

import numpy as np

import gradyn

ROOT = pathlib.Path(__file__).resolve().parents[2]
URDF = ROOT / "models" / "laikago" / "laikago_toes_zup.urdf"
LEGS = ("FR", "FL", "RR", "RL")
TOE_RADIUS = 0.03
GROUND_FRICTION = 1.0  # Coulomb coefficient of the plane; the URDF's geoms have gradyn's default, 1

# The stance: hip abduction 0, thigh -0.1 rad, knee -0.45 rad on every leg. It puts the four toes
# in one plane 0.476 m below the base, and their centre (x = -0.028 m) under the centre of mass
# (x = -0.020 m), so the robot stands still under a joint PD controller.
THIGH, KNEE = -0.1, -0.45
# Joint PD gains of the standing controller: tau = KP (q_stance - q) - KD v on the 12 leg joints.
KP, KD = 150.0, 5.0
# Penalty contact settings for this robot (the rest are gradyn's defaults). The smoothed Coulomb
# friction mu f_n v_t / sqrt(|v_t|^2 + velocity_scale^2) acts like a viscous damper of coefficient
# mu f_n / velocity_scale at rest, applied explicitly: on a light foot (lower leg + toe, a few
# hundred grams at the contact) with f_n ~ 63 N per toe and dt = 1 ms, velocity_scale 0.01 (the
# default) or 0.1 m/s makes the feet chatter (joint speeds of 0.5-3 rad/s while "standing");
# 0.3 m/s is stable, at the price of a slow creep of the feet under the stance's tangential loads
# (a few mm per second, comparable to MuJoCo's soft contacts here).
PENALTY_SETTINGS = {"velocity_scale": 0.3}


def hip_joint(leg):
    return f"{leg}_hip_motor_2_chassis_joint"


def thigh_joint(leg):
    return f"{leg}_upper_leg_2_hip_motor_joint"


def knee_joint(leg):
    return f"{leg}_lower_leg_2_upper_leg_joint"


def contact_models_available():
    """The contact models this gradyn accepts, among 'penalty', 'pgs' and 'ipm', and why the others
    are missing (message of the ValueError that gradyn raised)."""
    base = load_gradyn()
    available, missing = [], {}
    for name in ("penalty", "pgs", "ipm"):
        try:
            base.with_contact(model=name)
            available.append(name)
        except ValueError as e:
            missing[name] = str(e)
    return available, missing


def load_gradyn(contact=None, **contact_settings):
    """laikago with a free base on the plane z = 0, contact model `contact` (None: no contact forces;
    'penalty' with PENALTY_SETTINGS unless contact_settings say otherwise). The URDF's mesh files are not shipped: their 'mesh file not found' warnings are silenced."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*mesh file .* not found")
        model = gradyn.load(str(URDF), floating_base=True)
    model = model.with_ground_plane(friction=GROUND_FRICTION)
    if contact is not None:
        if contact == "penalty":
            contact_settings = {**PENALTY_SETTINGS, **contact_settings}
        model = model.with_contact(model=contact, **contact_settings)
    return model


def leg_dofs(model):
    """v indices of the 12 leg joints (everything but the free base)."""
    return np.array([model.joint_idx_v(n) for n in model.joint_names if n != "root"])


def stance(model, clearance=0.0):
    """The standing configuration with the toes `clearance` metres above the ground (0: touching)."""
    q = model.neutral()
    for leg in LEGS:
        q[model.joint_idx_q(thigh_joint(leg))] = THIGH
        q[model.joint_idx_q(knee_joint(leg))] = KNEE
    lowest = min(gradyn.frame_pose(model, q, f"toe{leg}")[2, 3] for leg in LEGS)
    q[2] = -lowest + TOE_RADIUS + clearance
    return q


def stance_angle(joint_name):
    """The stance's angle of a leg joint."""
    if joint_name.endswith("_upper_leg_2_hip_motor_joint"):
        return THIGH
    if joint_name.endswith("_lower_leg_2_upper_leg_joint"):
        return KNEE
    return 0.0


def with_stance_springs(model, kp=KP, kd=KD):
    """A copy whose leg joints carry the PD controller as passive springs and dampers:
    tau = -kp (q - q_stance) - kd v, the same law as pd_torques, but inside the step (so a rollout
    with zero torques stands; MuJoCo's counterpart: mujoco_xml(stance_springs=True))."""
    names = model.param_names
    p = model.params.copy()
    for joint in model.joint_names:
        if joint == "root":
            continue
        p[names.index(f"{joint}.stiffness")] = kp
        p[names.index(f"{joint}.damping")] = kd
        p[names.index(f"{joint}.rest")] = stance_angle(joint)
    return model.with_params(p)


def pd_torques(model, q, v, q_target, kp=KP, kd=KD):
    """Joint PD torques on the leg joints (none on the free base)."""
    tau = np.zeros(model.nv)
    for name in model.joint_names:
        if name == "root":
            continue
        iq, iv = model.joint_idx_q(name), model.joint_idx_v(name)
        tau[iv] = kp * (q_target[iq] - q[iq]) - kd * v[iv]
    return tau


def toe_depths(model, q):
    """Penetration depth [m] of each toe into the ground (negative: above it), in LEGS order."""
    depth = {}
    for leg in LEGS:
        pose = gradyn.frame_pose(model, q, f"toe{leg}")
        depth[leg] = TOE_RADIUS - pose[2, 3]
    return np.array([depth[leg] for leg in LEGS])


# --- the MuJoCo model ---------------------------------------------------------------------------


def _floats(text, n=3):
    values = [float(x) for x in (text or "").split()] if text else [0.0] * n
    if len(values) != n:
        raise ValueError(f"expected {n} numbers, got '{text}'")
    return np.array(values)


def rpy_to_quat_wxyz(rpy):
    """URDF roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)) as a MuJoCo quaternion (w, x, y, z)."""
    r, p, y = 0.5 * np.asarray(rpy, dtype=float)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([cr * cp * cy + sr * sp * sy,
                     sr * cp * cy - cr * sp * sy,
                     cr * sp * cy + sr * cp * sy,
                     cr * cp * sy - sr * sp * cy])


def _origin(element):
    origin = element.find("origin") if element is not None else None
    if origin is None:
        return np.zeros(3), np.zeros(3)
    return _floats(origin.get("xyz")), _floats(origin.get("rpy"))


def _fmt(x):
    return " ".join(f"{v:.17g}" for v in np.atleast_1d(x))


def mujoco_xml(urdf=URDF, timestep=1e-3, ground_friction=GROUND_FRICTION, stance_springs=False,
               position_servos=None):
    """MJCF text of the URDF robot (free base) on a plane, for MuJoCo.

    Supports what laikago_toes_zup.urdf uses: continuous/revolute joints (hinges; URDF limits of
    continuous joints do not apply), fixed joints (a body without a joint, which MuJoCo welds to
    its parent like gradyn merges it), <inertial> with an origin, and sphere/box/cylinder
    collisions (meshes are skipped, as gradyn skips them). Every geom's friction is ground_friction
    (MuJoCo, like gradyn, uses the larger of the pair's). MuJoCo's own settings stay at their
    defaults (soft contacts with solref 0.02 1, pyramidal cone, Newton solver) except the time step
    and integrator="Euler" (semi-implicit, as gradyn's 'euler') with eulerdamp disabled (MuJoCo would
    otherwise integrate joint damping implicitly; gradyn applies it as a force like any other).
    stance_springs: give the hinges the stance springs and dampers of with_stance_springs.
    position_servos: (kp, kv) to drive each hinge by a position servo (MJCF <position>, whose
    control is the joint's target angle) instead of a motor; gradyn loads this MJCF too, and runs
    the servos inside its step.
    """
    robot = ET.parse(urdf).getroot()
    links = {link.get("name"): link for link in robot.findall("link")}
    children = {}
    child_links = set()
    for joint in robot.findall("joint"):
        parent = joint.find("parent").get("link")
        children.setdefault(parent, []).append(joint)
        child_links.add(joint.find("child").get("link"))
    roots = [name for name in links if name not in child_links]
    if len(roots) != 1:
        raise ValueError(f"{urdf}: expected one root link, got {roots}")

    out = []
    hinge_names = []

    def emit_link(name, indent):
        link = links[name]
        pad = " " * indent
        inertial = link.find("inertial")
        if inertial is not None:
            xyz, rpy = _origin(inertial)
            mass = float(inertial.find("mass").get("value"))
            i = inertial.find("inertia")
            ixx, iyy, izz, ixy, ixz, iyz = (float(i.get(k, "0")) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
            R = quat_wxyz_to_matrix(rpy_to_quat_wxyz(rpy))
            I = R @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) @ R.T  # in the link frame
            full = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
            out.append(f'{pad}<inertial pos="{_fmt(xyz)}" mass="{mass:.17g}" fullinertia="{_fmt(full)}"/>')
        for k, collision in enumerate(link.findall("collision")):
            xyz, rpy = _origin(collision)
            shape = collision.find("geometry")[0]
            placement = f'pos="{_fmt(xyz)}" quat="{_fmt(rpy_to_quat_wxyz(rpy))}"'
            geom_name = f'{name}/collision{k}'
            if shape.tag == "sphere":
                size = _fmt(float(shape.get("radius")))
                kind = "sphere"
            elif shape.tag == "box":
                size, kind = _fmt(0.5 * _floats(shape.get("size"))), "box"
            elif shape.tag == "cylinder":
                size, kind = _fmt([float(shape.get("radius")), 0.5 * float(shape.get("length"))]), "cylinder"
            else:
                continue  # meshes: not collision geometry (gradyn skips them too)
            out.append(f'{pad}<geom name="{geom_name}" type="{kind}" size="{size}" {placement} '
                       f'friction="{ground_friction:.17g} 0.005 0.0001" rgba="0.9 0.3 0.2 1"/>')
        for joint in children.get(name, []):
            child = joint.find("child").get("link")
            xyz, rpy = _origin(joint)
            out.append(f'{pad}<body name="{child}" pos="{_fmt(xyz)}" quat="{_fmt(rpy_to_quat_wxyz(rpy))}">')
            kind = joint.get("type")
            if kind in ("continuous", "revolute"):
                axis = joint.find("axis")
                axis = _floats(axis.get("xyz")) if axis is not None else np.array([1.0, 0.0, 0.0])
                limited = ""
                limit = joint.find("limit")
                if kind == "revolute" and limit is not None and limit.get("lower") is not None:
                    limited = f' range="{limit.get("lower")} {limit.get("upper")}" limited="true"'
                spring = ""
                if stance_springs:
                    spring = (f' stiffness="{KP:.17g}" springref="{stance_angle(joint.get("name")):.17g}"'
                              f' damping="{KD:.17g}"')
                out.append(f'{pad}  <joint name="{joint.get("name")}" type="hinge" axis="{_fmt(axis)}"{limited}'
                           f'{spring}/>')
                hinge_names.append(joint.get("name"))
            elif kind != "fixed":
                raise ValueError(f"{urdf}: joint type '{kind}' is not supported by this converter")
            emit_link(child, indent + 2)
            out.append(f"{pad}</body>")

    root = roots[0]
    out.append(f'    <body name="{root}" pos="0 0 0.6">')
    out.append('      <freejoint name="root"/>')
    emit_link(root, 6)
    out.append("    </body>")
    if position_servos is None:
        motors = "\n".join(f'    <motor name="{n}" joint="{n}" gear="1"/>' for n in hinge_names)
    else:
        kp, kv = position_servos
        motors = "\n".join(f'    <position name="{n}" joint="{n}" kp="{kp:.17g}" kv="{kv:.17g}"/>' for n in hinge_names)
    return f"""<mujoco model="{robot.get('name')}_mujoco">
  <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>
  <option timestep="{timestep:.17g}" integrator="Euler">
    <flag eulerdamp="disable"/>
  </option>
  <worldbody>
    <geom name="ground" type="plane" size="0 0 1" friction="{ground_friction:.17g} 0.005 0.0001"/>
{chr(10).join(out)}
  </worldbody>
  <actuator>
{motors}
  </actuator>
</mujoco>
"""


def load_mujoco(timestep=1e-3, stance_springs=False):
    import mujoco

    return mujoco.MjModel.from_xml_string(mujoco_xml(timestep=timestep, stance_springs=stance_springs))


def mujoco_toe_depths(m, d):
    """Penetration depth [m] of each toe into MuJoCo's ground (negative: above it), in LEGS order,
    from the toe bodies' positions (MuJoCo's contacts carry the same number, -dist, while touching)."""
    import mujoco

    return np.array([TOE_RADIUS - d.xpos[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"toe{leg}")][2]
                     for leg in LEGS])


def quat_wxyz_to_matrix(quat):
    w, x, y, z = np.asarray(quat, dtype=float) / np.linalg.norm(quat)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


class StateMap:
    """gradyn (q, v, tau) <-> MuJoCo (qpos, qvel, qfrc), joint by joint, matched by name."""

    def __init__(self, model, m):
        import mujoco

        self.model, self.m = model, m
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]
        if sorted(names) != sorted(model.joint_names):
            raise ValueError(f"joint names differ: gradyn {model.joint_names}, MuJoCo {names}")
        self.free = (model.joint_idx_q("root"), model.joint_idx_v("root"),
                     m.jnt_qposadr[names.index("root")], m.jnt_dofadr[names.index("root")])
        self.hinges = [(model.joint_idx_q(n), model.joint_idx_v(n), m.jnt_qposadr[j], m.jnt_dofadr[j])
                       for j, n in enumerate(names) if n != "root"]
        self.actuator_dofs = np.array([model.joint_idx_v(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT,
                                                                           m.actuator_trnid[a, 0]))
                                       for a in range(m.nu)])

    def to_mujoco(self, q, v):
        gq, gv, mq, mv = self.free
        qpos, qvel = np.zeros(self.m.nq), np.zeros(self.m.nv)
        qpos[mq:mq + 3] = q[gq:gq + 3]
        qpos[mq + 3], qpos[mq + 4:mq + 7] = q[gq + 6], q[gq + 3:gq + 6]
        R = quat_wxyz_to_matrix(qpos[mq + 3:mq + 7])
        qvel[mv:mv + 3] = R @ v[gv:gv + 3]
        qvel[mv + 3:mv + 6] = v[gv + 3:gv + 6]
        for gq, gv, mq, mv in self.hinges:
            qpos[mq], qvel[mv] = q[gq], v[gv]
        return qpos, qvel

    def to_gradyn(self, qpos, qvel):
        gq, gv, mq, mv = self.free
        q, v = np.zeros(self.model.nq), np.zeros(self.model.nv)
        q[gq:gq + 3] = qpos[mq:mq + 3]
        q[gq + 6], q[gq + 3:gq + 6] = qpos[mq + 3], qpos[mq + 4:mq + 7]
        R = quat_wxyz_to_matrix(qpos[mq + 3:mq + 7])
        v[gv:gv + 3] = R.T @ qvel[mv:mv + 3]
        v[gv + 3:gv + 6] = qvel[mv + 3:mv + 6]
        for gq, gv, mq, mv in self.hinges:
            q[gq], v[gv] = qpos[mq], qvel[mv]
        return q, v

    def acceleration_to_gradyn(self, qpos, qvel, qacc):
        """MuJoCo qacc -> gradyn a: the body-frame linear part is d/dt(R^T p_dot) = R^T p_ddot - w x v_lin."""
        _, gv, _, mv = self.free
        _, v = self.to_gradyn(qpos, qvel)
        a = np.zeros(self.model.nv)
        R = quat_wxyz_to_matrix(qpos[self.free[2] + 3:self.free[2] + 7])
        a[gv:gv + 3] = R.T @ qacc[mv:mv + 3] - np.cross(v[gv + 3:gv + 6], v[gv:gv + 3])
        a[gv + 3:gv + 6] = qacc[mv + 3:mv + 6]
        for _, gv_j, _, mv_j in self.hinges:
            a[gv_j] = qacc[mv_j]
        return a

    def controls(self, tau):
        """MuJoCo ctrl (one motor per leg joint, gear 1) for gradyn joint torques tau (base entries must be 0)."""
        return np.asarray(tau)[self.actuator_dofs]


def check_free_dynamics(model, trials=20, seed=3, stance_springs=False):
    """gradyn.forward_dynamics of `model` against the qacc of MuJoCo (mujoco_xml) with every constraint and
    contact disabled, on random states and joint torques (through MuJoCo's motors). Returns the
    largest error relative to max(1, max|a|); both are exact up to round-off, so a modelling
    difference shows as 1e-3 or more. The model's contact settings do not matter (none apply);
    stance_springs: compare with MuJoCo's model with the stance springs (with_stance_springs for gradyn)."""
    import mujoco

    smooth = load_mujoco(stance_springs=stance_springs)  # a fresh copy whose flags we may change
    smooth.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT | mujoco.mjtDisableBit.mjDSBL_CONTACT
    if (smooth.nq, smooth.nv) != (model.nq, model.nv):
        raise ValueError(f"sizes differ: MuJoCo nq={smooth.nq} nv={smooth.nv}, gradyn nq={model.nq} nv={model.nv}")
    d = mujoco.MjData(smooth)
    maps = StateMap(model, smooth)
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(trials):
        q = model.neutral()
        q[:3] = rng.normal(size=3)
        quat = rng.normal(size=4)
        q[3:7] = quat / np.linalg.norm(quat)
        legs = leg_dofs(model)
        q[7:] = rng.uniform(-1.5, 1.5, size=model.nq - 7)
        v = rng.normal(size=model.nv)
        tau = np.zeros(model.nv)
        tau[legs] = 5.0 * rng.normal(size=legs.size)
        d.qpos[:], d.qvel[:] = maps.to_mujoco(q, v)
        d.ctrl[:] = maps.controls(tau)
        mujoco.mj_forward(smooth, d)
        a_mujoco = maps.acceleration_to_gradyn(d.qpos, d.qvel, d.qacc)
        a = gradyn.forward_dynamics(model, q, v, tau)
        worst = max(worst, np.max(np.abs(a - a_mujoco)) / max(1.0, np.max(np.abs(a_mujoco))))
    return worst
