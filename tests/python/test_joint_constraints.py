"""Dry joint friction (frictionloss), joint couplings (MJCF <equality><joint>, URDF <mimic>), loops
closed by <equality><connect> and bodies held by <equality><weld>: read from files, enforced by pgs,
ipm and penalty contact (smoothed friction, stiff springs), compared with MuJoCo on the same files,
differentiated (gradcheck, their parameters included), and refused with a clear message where not
supported."""


import numpy as np
import pytest

import gradyn
from mjcf_files import assert_gradcheck, load_quietly, mujoco_rollout, write

mujoco = pytest.importorskip("mujoco")

# A rod on a hinge about y, horizontal gravity-free plane (gravity along the axis), frictionloss 2 N m.
# Its inertia about the hinge: 1 kg at 0.5 m plus iyy 1/12: 1/3 kg m^2.
FRICTION_HINGE = """
<mujoco model="friction_hinge">
  <option timestep="0.001" gravity="0 0 0" integrator="Euler"/>
  <worldbody>
    <body name="rod">
      <joint name="hinge" type="hinge" axis="0 1 0" frictionloss="2"/>
      <inertial pos="0.5 0 0" mass="1" diaginertia="0.001 0.0833333333333 0.0833333333333"/>
    </body>
  </worldbody>
  <actuator><motor name="m" joint="hinge"/></actuator>
</mujoco>
"""
INERTIA = 1.0 / 3.0

# Two fingers on slide joints; finger_b follows finger_a mirrored (polycoef 0 -1), as a gripper's.
# A free finger_c is coupled by a quadratic law to a hinge, so that the coupling Jacobian depends on q.
FINGERS = """
<mujoco model="fingers">
  <option timestep="0.001" gravity="0 0 -9.81" integrator="Euler"><flag eulerdamp="disable"/></option>
  <worldbody>
    <body name="palm">
      <body name="finger_a" pos="0.05 0 0">
        <joint name="slide_a" type="slide" axis="1 0 0" damping="0.5"/>
        <geom type="box" size="0.01 0.01 0.04" mass="0.1" contype="0" conaffinity="0"/>
      </body>
      <body name="finger_b" pos="-0.05 0 0">
        <joint name="slide_b" type="slide" axis="1 0 0" damping="0.2"/>
        <geom type="box" size="0.01 0.01 0.04" mass="0.3" contype="0" conaffinity="0"/>
      </body>
      <body name="arm" pos="0 0.2 0">
        <joint name="swing" type="hinge" axis="0 1 0" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
        <body name="slider" pos="0.2 0 0">
          <joint name="extend" type="slide" axis="1 0 0"/>
          <geom type="sphere" size="0.02" mass="0.2" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint name="mirror" joint1="slide_b" joint2="slide_a" polycoef="0 -1 0 0 0" solref="0.002 1"/>
    <joint name="cam" joint1="extend" joint2="swing" polycoef="0.01 0.05 0.2 0 0" solref="0.002 1"/>
  </equality>
  <actuator>
    <motor name="push" joint="slide_a"/>
    <motor name="turn" joint="swing"/>
  </actuator>
</mujoco>
"""






# ---- loading ------------------------------------------------------------------------------------


def test_mjcf_frictionloss_and_joint_equality_are_read(tmp_path):
    model, messages = load_quietly(write(tmp_path, "fingers.xml", FINGERS))
    assert not [m for m in messages if "not simulated" in m], messages
    # MuJoCo's softness is not read: gradyn's couplings are stiff, and the load says so
    assert any("equality solref" in m and "softness" in m for m in messages), messages
    couplings = model.joint_couplings
    assert [c["name"] for c in couplings] == ["mirror", "cam"]
    assert couplings[0]["joint1"] == "slide_b" and couplings[0]["joint2"] == "slide_a"
    assert couplings[0]["polycoef"] == (0.0, -1.0, 0.0, 0.0, 0.0)
    assert couplings[1]["polycoef"] == (0.01, 0.05, 0.2, 0.0, 0.0)
    hinge, messages = load_quietly(write(tmp_path, "hinge.xml", FRICTION_HINGE))
    assert not [m for m in messages if "frictionloss" in m], messages
    np.testing.assert_array_equal(hinge.frictionloss, [2.0])


def test_loading_loops_without_a_contact_model_says_they_are_not_enforced(tmp_path):
    _, messages = load_quietly(write(tmp_path, "four_bar.xml", FOUR_BAR))
    assert any("1 body connection(s)" in m and "contact='pgs'" in m for m in messages), messages
    _, messages = load_quietly(write(tmp_path, "fingers.xml", FINGERS))
    assert any("2 joint coupling(s)" in m for m in messages), messages
    _, messages = load_quietly(write(tmp_path, "four_bar.xml", FOUR_BAR), contact="ipm")
    assert not any("enforced by the contact models" in m for m in messages), messages


def test_mjcf_tendon_equality_on_an_unknown_tendon_names_the_element(tmp_path):
    # tendon equalities are simulated (tests/python/test_tendons.py); one naming no fixed tendon is refused
    text = FINGERS.replace("</equality>", '<tendon name="knit" tendon1="t"/></equality>')
    with pytest.raises(gradyn.ModelError, match=r"tendon\.xml:\d+.*tendon coupling 'knit': unknown tendon1 't'"):
        gradyn.load(write(tmp_path, "tendon.xml", text))


def test_mjcf_inactive_equality_warns_and_is_skipped(tmp_path):
    text = FINGERS.replace('name="mirror"', 'name="mirror" active="false"')
    model, messages = load_quietly(write(tmp_path, "inactive.xml", text))
    assert [c["name"] for c in model.joint_couplings] == ["cam"]
    assert any('active="false"' in m for m in messages), messages


def test_mjcf_equality_on_unknown_or_ball_joint_names_the_element(tmp_path):
    text = FINGERS.replace('joint2="slide_a"', 'joint2="nope"')
    with pytest.raises(gradyn.ModelError, match=r"fingers\.xml:\d+.*unknown joint2 'nope'"):
        gradyn.load(write(tmp_path, "fingers.xml", text))


URDF_MIMIC = """
<robot name="gripper">
  <link name="base"/>
  <link name="left"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="left_joint" type="prismatic">
    <parent link="base"/><child link="left"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
    <dynamics damping="0.1" friction="0.5"/>
  </joint>
  <joint name="right_joint" type="prismatic">
    <parent link="base"/><child link="right"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
    <mimic joint="left_joint" multiplier="-1" offset="0.01"/>
  </joint>
</robot>
"""


def test_urdf_mimic_and_dynamics_friction_are_read(tmp_path):
    model, messages = load_quietly(write(tmp_path, "gripper.urdf", URDF_MIMIC), contact="pgs")
    assert not messages, messages
    np.testing.assert_array_equal(model.frictionloss, [0.5, 0.0])
    (c,) = model.joint_couplings
    assert (c["joint1"], c["joint2"], c["polycoef"][:2]) == ("right_joint", "left_joint", (0.01, -1.0))
    # pgs holds right = 0.01 - left while the left finger is pushed
    pgs = model.with_contact(model="pgs")
    qs, _ = gradyn.rollout(pgs, np.zeros(2), np.zeros(2), np.tile([2.0, 0.0], (300, 1)), 1e-3, "euler")
    assert qs[-1, 0] > 0.05
    assert abs(qs[-1, 1] - (0.01 - qs[-1, 0])) < 1e-6


def test_pickle_keeps_friction_and_couplings(tmp_path):
    import pickle

    model, _ = load_quietly(write(tmp_path, "fingers.xml", FINGERS))
    model = model.with_frictionloss(np.array([0.1, 0.2, 0.3, 0.4]))
    copy = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(copy.frictionloss, model.frictionloss)
    assert copy.joint_couplings == model.joint_couplings


def test_builder_coupling_and_bad_input():
    b = gradyn.ModelBuilder()
    b.add_link("base").add_link("a", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_link("b", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_joint("ja", "revolute", "base", "a", axis=(0, 0, 1), frictionloss=0.3)
    b.add_joint("jb", "revolute", "base", "b", axis=(0, 0, 1))
    b.add_joint_coupling("jb", "ja", polycoef=(0.0, 2.0), name="gear")
    model = b.build()
    assert model.joint_couplings[0]["polycoef"] == (0.0, 2.0, 0.0, 0.0, 0.0)
    np.testing.assert_array_equal(model.frictionloss, [0.3, 0.0])
    with pytest.raises(ValueError, match=r"polycoef: expected 1 to 5 coefficients"):
        b.add_joint_coupling("jb", "ja", polycoef=np.zeros(6))
    with pytest.raises(ValueError, match="frictionloss: expected non-negative finite values"):
        model.with_frictionloss(np.array([-1.0, 0.0]))
    bad = gradyn.ModelBuilder()
    bad.add_link("base").add_link("a", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    bad.add_joint("ja", "revolute", "base", "a", axis=(0, 0, 1))
    bad.add_joint_coupling("ja", "ja")
    with pytest.raises(gradyn.ModelError, match="couples joint 'ja' to itself"):
        bad.build()


# ---- dry friction against MuJoCo ----------------------------------------------------------------


def mujoco_hinge(text, torque, seconds):
    m = mujoco.MjModel.from_xml_string(text)
    d = mujoco.MjData(m)
    d.ctrl[:] = torque
    for _ in range(int(round(seconds / m.opt.timestep))):
        mujoco.mj_step(m, d)
    return d.qpos[0], d.qvel[0]


@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_frictionloss_holds_below_and_slips_above_like_mujoco(tmp_path, contact):
    path = write(tmp_path, "hinge.xml", FRICTION_HINGE)
    model = gradyn.load(path, contact=contact)
    for torque in (1.5, 3.0):
        ctrl = np.full((1000, 1), torque)
        qs, vs = gradyn.rollout(model, np.zeros(1), np.zeros(1), np.zeros((1000, 1)), 1e-3, "euler", ctrls=ctrl)
        q_mj, v_mj = mujoco_hinge(FRICTION_HINGE, torque, 1.0)
        if torque < 2.0:
            # held: no motion at all (MuJoCo's soft friction creeps; it stays below 1 mrad/s here)
            assert abs(vs[-1, 0]) < 1e-9 and abs(qs[-1, 0]) < 1e-9
            assert abs(v_mj) < 1e-2
        else:
            # slips with the net torque 3 - 2 = 1 N m: v = t / I after t = 1 s
            assert vs[-1, 0] == pytest.approx(1.0 / INERTIA, rel=1e-6)
            assert vs[-1, 0] == pytest.approx(v_mj, rel=2e-2)
            assert qs[-1, 0] == pytest.approx(q_mj, rel=2e-2)


def test_penalty_frictionloss_is_smoothed(tmp_path):
    model = gradyn.load(write(tmp_path, "hinge.xml", FRICTION_HINGE), contact="penalty")
    ctrl = np.full((1000, 1), 3.0)
    _, vs = gradyn.rollout(model, np.zeros(1), np.zeros(1), np.zeros((1000, 1)), 1e-3, "euler", ctrls=ctrl)
    # the smoothed law gives less than the bound while |v| ~ velocity_scale: a little faster than 3 rad/s
    assert vs[-1, 0] == pytest.approx(1.0 / INERTIA, rel=1e-2)
    # below the bound the smoothed law creeps at velocity_scale r / sqrt(1 - r^2), r = torque / bound
    for torque in (1.0, 1.5):
        ctrl = np.full((1000, 1), torque)
        _, vs = gradyn.rollout(model, np.zeros(1), np.zeros(1), np.zeros((1000, 1)), 1e-3, "euler", ctrls=ctrl)
        r = torque / 2.0
        assert vs[-1, 0] == pytest.approx(1e-2 * r / np.sqrt(1 - r * r), rel=1e-3)


# ---- couplings against MuJoCo ---------------------------------------------------------------------


DIFF_MUJOCO = np.array([1e-5, 1e-5, 5e-4, 2e-4])  # slide_a, slide_b, swing, extend




@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_coupled_joints_follow_mujoco(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "fingers.xml", FINGERS), contact=contact)
    steps = 500
    t = np.arange(steps) * 1e-3
    ctrls = np.stack([0.5 * np.sin(6 * t), 0.2 * np.cos(4 * t)], axis=1)
    q0 = model.q0.copy()
    q0[3] = 0.01  # on both constraints (qpos0 violates "cam" by its c0)
    qs, _ = gradyn.rollout(model, q0, np.zeros(model.nv), np.zeros((steps, model.nv)), 1e-3, "euler", ctrls=ctrls)
    # the constraints hold: slide_b = -slide_a; extend = 0.01 + 0.05 swing + 0.2 swing^2
    a, b, swing, extend = qs[:, 0], qs[:, 1], qs[:, 2], qs[:, 3]
    assert np.abs(b + a).max() < 1e-6
    assert np.abs(extend - (0.01 + 0.05 * swing + 0.2 * swing**2)).max() < 1e-6
    q_mj = mujoco_rollout(FINGERS, q0, ctrls)
    # MuJoCo's constraint stays soft (solref 2 ms, its stiffest): measured differences over these
    # 0.5 s were 1.2e-6, 7e-7 m (fingers, 0.08 m travel), 1.8e-4 rad (swing, 2 rad), 4e-5 m (extend)
    assert np.all(np.abs(q_mj - qs[1:]).max(axis=0) < DIFF_MUJOCO)
    assert np.abs(a).max() > 0.02  # the fingers did move


def test_penalty_coupling_is_a_stiff_spring(tmp_path):
    model = gradyn.load(write(tmp_path, "fingers.xml", FINGERS), contact="penalty").with_contact(
        limit_stiffness=1e4, limit_damping=50.0
    )
    ctrls = np.tile([0.5, 0.0], (500, 1))
    qs, _ = gradyn.rollout(model, model.q0, np.zeros(model.nv), np.zeros((500, model.nv)), 1e-3, "euler", ctrls=ctrls)
    assert np.abs(qs[:, 1] + qs[:, 0]).max() < 1e-3
    assert qs[-1, 0] > 0.05


# ---- a four-bar linkage closed by <connect>, against MuJoCo ----------------------------------------

# Ground pivots at the origin and at (0.6, 0, 0); crank 0.2 (up the z axis at q = 0), coupler 0.6,
# rocker 0.5 (a Grashof crank-rocker); the coupler's end is connected to the rocker's.
FOUR_BAR = """
<mujoco model="four_bar">
  <option timestep="0.001" gravity="0 0 -9.81" integrator="Euler"><flag eulerdamp="disable"/></option>
  <worldbody>
    <body name="crank">
      <joint name="crank" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.01" mass="0.2" contype="0" conaffinity="0"/>
      <body name="coupler" pos="0 0 0.2">
        <joint name="coupler" type="hinge" axis="0 1 0" damping="0.05"/>
        <geom type="capsule" fromto="0 0 0 0.52301245 0 0.29403736" size="0.01" mass="0.5" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="rocker" pos="0.6 0 0">
      <joint name="rocker" type="hinge" axis="0 1 0" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 -0.07698755 0 0.49403736" size="0.01" mass="0.4" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality>
    <connect name="loop" body1="coupler" body2="rocker" anchor="0.52301245 0 0.29403736" solref="0.002 1"/>
  </equality>
  <actuator><motor name="drive" joint="crank"/></actuator>
</mujoco>
"""
FOUR_BAR_TIP = np.array([0.52301245, 0.0, 0.29403736])  # the coupler's end, in its frame


def loop_gap(model, q):
    """|coupler end - rocker end| in the world, for the connection's two anchors."""
    (c,) = model.body_connections
    p1 = gradyn.frame_pose(model, q, c["body1"]) @ np.r_[c["anchor1"], 1.0]
    p2 = gradyn.frame_pose(model, q, c["body2"]) @ np.r_[c["anchor2"], 1.0]
    return np.linalg.norm(p1[:3] - p2[:3])


def test_connect_is_read(tmp_path):
    model, messages = load_quietly(write(tmp_path, "four_bar.xml", FOUR_BAR))
    assert not [m for m in messages if "not simulated" in m], messages
    (c,) = model.body_connections
    assert (c["name"], c["body1"], c["body2"]) == ("loop", "coupler", "rocker")
    np.testing.assert_allclose(c["anchor1"], FOUR_BAR_TIP)
    # anchor2: where the coupler's end is at qpos0, in the rocker's frame (MuJoCo's rule)
    np.testing.assert_allclose(c["anchor2"], [-0.07698755, 0.0, 0.49403736], atol=1e-12)
    assert loop_gap(model, model.q0) < 1e-12


FOUR_BAR_CTRLS = np.full((1000, 1), 0.15)  # 1 s of a constant crank torque


def four_bar_run(model):
    """1 s of the four-bar under FOUR_BAR_CTRLS from q0 at rest, every step's status clear: the
    states and the loop's gap at each."""
    qs, _, status = gradyn.rollout(model, model.q0, np.zeros(3), None, 1e-3, "euler", ctrls=FOUR_BAR_CTRLS,
                                   return_status=True)
    assert not status.any()
    return qs, np.array([loop_gap(model, q) for q in qs])


@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_four_bar_follows_mujoco_and_stays_closed(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "four_bar.xml", FOUR_BAR), contact=contact)
    qs, gaps = four_bar_run(model)
    assert gaps.max() < 1e-6, gaps.max()
    assert abs(qs[-1, 0]) > 0.5  # the crank turned
    q_mj = mujoco_rollout(FOUR_BAR, model.q0, FOUR_BAR_CTRLS)
    # MuJoCo's connect stays soft (solref 2 ms, its stiffest): measured differences over 1 s were
    # 2.2e-5, 4.0e-5 and 2.9e-5 rad (crank, coupler, rocker; speeds up to 7 rad/s)
    assert np.abs(q_mj - qs[1:]).max() < 2e-4


def test_penalty_holds_the_loop_with_a_stiff_spring(tmp_path):
    model, _ = load_quietly(write(tmp_path, "four_bar.xml", FOUR_BAR), contact="penalty")
    qs, gaps = four_bar_run(model)
    # the gap under the loop's load F is F / limit_stiffness (1e4 N/m): measured 6.4e-4 m at most,
    # and 6.2e-5 m ten times stiffer
    assert gaps.max() < 1e-3, gaps.max()
    assert abs(qs[-1, 0]) > 0.5  # the crank turned
    _, stiffer_gaps = four_bar_run(model.with_contact(limit_stiffness=1e5, limit_damping=60.0))
    assert stiffer_gaps.max() < 0.2 * gaps.max()  # the gap scales with 1 / stiffness


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_gradcheck_through_a_closed_loop(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "four_bar.xml", FOUR_BAR), contact=contact)
    # a state on the loop, moving along it: one step from rest under a push
    qs, vs = gradyn.rollout(model, model.q0, np.zeros(3), np.tile([0.3, 0.0, 0.0], (50, 1)), 1e-3, "euler")
    r = gradyn.gradcheck(model, qs[-1], vs[-1], np.tile([0.2, 0.05, -0.05], (20, 1)), 1e-3)
    assert_gradcheck(r, 2e-4 if contact == "penalty" else 5e-5, contact)


# ---- welds (<equality><weld>), against MuJoCo ------------------------------------------------------

# A two-hinge arm (about y, then about x at 0.4 m) and a box on a free joint, tilted, welded to the
# arm's end where it starts (anchor and relative orientation from qpos0); and a cube on a free joint
# welded to the world by relpose (body1 = world): its anchor 5 cm above its centre held at (0, 1, 1.05)
# and its orientation at 11.5 degrees about x, which it starts away from.
WELD = """
<mujoco model="weld">
  <option timestep="0.001" gravity="0 0 -9.81" integrator="Euler"><flag eulerdamp="disable"/></option>
  <worldbody>
    <body name="link1">
      <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.02"/>
      <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
      <body name="link2" pos="0.4 0 0">
        <joint name="elbow" type="hinge" axis="1 0 0" damping="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.3" contype="0" conaffinity="0"/>
      </body>
    </body>
    <body name="box" pos="0.8 0 0" euler="17 -11 29">
      <freejoint name="float"/>
      <geom type="box" pos="0.03 0 0" size="0.05 0.04 0.03" mass="1" contype="0" conaffinity="0"/>
    </body>
    <body name="cube" pos="0 1 1">
      <freejoint name="cube"/>
      <geom type="box" size="0.1 0.1 0.1" mass="1" contype="0" conaffinity="0"/>
    </body>
  </worldbody>
  <equality>
    <weld name="hold" body1="box" body2="link2" solref="0.002 1"/>
    <weld name="pin" body1="world" body2="cube" relpose="0 1 1.05 0.99 0.1 0 0" anchor="0 0 0.05"/>
  </equality>
  <actuator><motor joint="shoulder"/><motor joint="elbow"/></actuator>
</mujoco>
"""


WELD_BOX = """<body name="box" pos="0.8 0 0" euler="17 -11 29">
      <freejoint name="float"/>
      <geom type="box" pos="0.03 0 0" size="0.05 0.04 0.03" mass="1" contype="0" conaffinity="0"/>
    </body>"""
LINK2_GEOM = '<geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.3" contype="0" conaffinity="0"/>'
assert WELD_BOX in WELD and WELD.count(LINK2_GEOM) == 1


def quat_matrix(w, x, y, z):
    """Rotation matrix of a quaternion in MuJoCo's order."""
    q = np.array([w, x, y, z]) / np.linalg.norm([w, x, y, z])
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def assert_weld_anchors(c, anchor1, anchor2):
    """c holds the point anchor1 (body1's frame) on anchor2 (body2's): gradyn keeps an equivalent pair
    (where the weld holds, x in body1's frame meets rotation^T (x - c.anchor1) + c.anchor2)."""
    mate = c["rotation"].T @ (np.asarray(anchor1) - c["anchor1"]) + c["anchor2"]
    np.testing.assert_allclose(mate, anchor2, atol=1e-12)


def weld_errors(model, q, c):
    """(|gap|, |orientation error angle|) of weld c at q, from the bodies' world poses."""
    X1 = gradyn.frame_pose(model, q, c["body1"])
    X2 = gradyn.frame_pose(model, q, c["body2"]) if c["body2"] else np.eye(4)
    gap = (X1 @ np.r_[c["anchor1"], 1.0] - X2 @ np.r_[c["anchor2"], 1.0])[:3]
    T = X1[:3, :3] @ c["rotation"] @ X2[:3, :3].T  # identity where the weld holds
    return np.linalg.norm(gap), np.arccos(np.clip((np.trace(T) - 1) / 2, -1, 1))


def test_weld_is_read_as_mujoco_compiles_it(tmp_path):
    model, messages = load_quietly(write(tmp_path, "weld.xml", WELD))
    assert not [m for m in messages if "weld" in m and "not simulated" in m], messages
    hold, pin = model.body_connections
    m = mujoco.MjModel.from_xml_string(WELD)
    data = m.eq_data
    # MuJoCo's eq_data: anchor (body2's frame), relpose pos (body1's), relpose quat (body2 in body1)
    assert (hold["name"], hold["body1"], hold["body2"], hold["weld"]) == ("hold", "box", "link2", True)
    np.testing.assert_allclose(hold["rotation"], quat_matrix(*data[0, 6:10]), atol=1e-12)
    assert_weld_anchors(hold, data[0, 3:6], data[0, 0:3])
    # its point rows at the centre of mass of the body that turns most easily (the box, not the rod)
    np.testing.assert_allclose(hold["anchor1"], [0.03, 0, 0], atol=1e-12)
    # body1 = world: the moving cube becomes body1, anchors and rotation swap roles
    assert (pin["name"], pin["body1"], pin["body2"], pin["weld"]) == ("pin", "cube", None, True)
    np.testing.assert_allclose(pin["rotation"], quat_matrix(*data[1, 6:10]).T, atol=1e-12)
    assert_weld_anchors(pin, data[1, 0:3], data[1, 3:6])
    np.testing.assert_allclose(pin["anchor1"], [0, 0, 0], atol=1e-12)  # the cube's centre
    gap, angle = weld_errors(model, model.q0, hold)
    assert gap < 1e-12 and angle < 1e-7
    _, angle = weld_errors(model, model.q0, pin)
    assert abs(angle - 2 * np.arctan2(0.1, 0.99)) < 1e-12


@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_weld_follows_mujoco_and_holds(tmp_path, contact):
    text = WELD.replace('<weld name="pin"', '<weld name="pin" active="false"')  # MuJoCo: only "hold"
    model, _ = load_quietly(write(tmp_path, "weld.xml", text), contact=contact)
    (hold,) = model.body_connections
    steps = 1000
    t = np.arange(steps) * 1e-3
    ctrls = np.stack([0.5 * np.sin(4 * t), 0.2 * np.cos(3 * t)], axis=1)
    qs, _, status = gradyn.rollout(model, model.q0, np.zeros(model.nv), None, 1e-3, "euler", ctrls=ctrls,
                                   return_status=True)
    assert not status.any()
    errors = np.array([weld_errors(model, q, hold) for q in qs])
    assert errors.max(axis=0)[0] < 1e-6 and errors.max(axis=0)[1] < 1e-6, errors.max(axis=0)
    assert np.abs(qs[-1, :2]).sum() > 0.5  # the arm swung
    # The oracle: the same machine with the box on the arm by a fixed joint, which gradyn and MuJoCo
    # step alike (to 2e-15 rad here). gradyn's stiff weld approaches it at first order in dt
    # (measured: 1.06e-2 rad at dt = 1 ms, 5.3e-3 at 0.5 ms); MuJoCo's weld stays soft (solref 2 ms,
    # its stiffest) and 2.66e-2 rad from it at either dt, 2.32e-2 from gradyn's.
    rigid = text.replace(WELD_BOX, "").replace(LINK2_GEOM, LINK2_GEOM + WELD_BOX.replace(
        'pos="0.8 0 0"', 'pos="0.4 0 0"').replace('<freejoint name="float"/>', ""))
    rigid = rigid.replace('<weld name="hold" body1="box" body2="link2" solref="0.002 1"/>', "")
    q_rigid = mujoco_rollout(rigid, mujoco.MjModel.from_xml_string(rigid).qpos0, ctrls)[:, :2]
    assert np.abs(q_rigid - qs[1:, :2]).max() < 1.5e-2
    q_mj = mujoco_rollout(text, mujoco.MjModel.from_xml_string(text).qpos0, ctrls)  # the same start
    assert np.abs(q_mj[:, :2] - qs[1:, :2]).max() < 3e-2


@pytest.mark.parametrize("contact", ["pgs", "ipm"])
def test_weld_to_the_world_turns_the_cube_to_its_held_orientation(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "weld.xml", WELD), contact=contact)
    pin = model.body_connections[1]
    qs, vs, status = gradyn.rollout(model, model.q0, np.zeros(model.nv), None, 1e-3, "euler",
                                    ctrls=np.zeros((1500, 2)), return_status=True)
    assert not status.any()
    gap, angle = weld_errors(model, qs[-1], pin)
    assert gap < 1e-6 and angle < 1e-6, (gap, angle)
    assert np.abs(vs[-1, 9:]).max() < 1e-5  # at rest there


def test_weld_site_form_torquescale_and_penalty(tmp_path):
    text = WELD.replace('<weld name="pin" body1="world" body2="cube" relpose="0 1 1.05 0.99 0.1 0 0" anchor="0 0 0.05"/>',
                        '<weld name="loose" body1="cube" torquescale="0"/>'
                        '<weld name="soft" body1="cube" body2="box" torquescale="0.5"/>')
    model, messages = load_quietly(write(tmp_path, "weld.xml", text))
    by_name = {c["name"]: c for c in model.body_connections}
    assert by_name["loose"]["weld"] is False and by_name["loose"]["rotation"] is None  # holds no orientation
    assert by_name["soft"]["weld"] is True
    assert any("torquescale" in m and "stiff" in m for m in messages), messages
    site = WELD.replace('<geom type="box" size="0.1 0.1 0.1"', '<site name="s2" pos="0 0 0.1" euler="0 0 30"/>'
                        '<geom type="box" size="0.1 0.1 0.1"').replace(
        '<geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.3"',
        '<site name="s1" pos="0.4 0 0"/><geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.02" mass="0.3"').replace(
        '<weld name="pin" body1="world" body2="cube" relpose="0 1 1.05 0.99 0.1 0 0" anchor="0 0 0.05"/>',
        '<weld name="sites" site1="s2" site2="s1"/>')
    model, _ = load_quietly(write(tmp_path, "sites.xml", site))
    sites = model.body_connections[1]
    assert (sites["body1"], sites["body2"]) == ("cube", "link2")
    c30, s30 = np.cos(np.pi / 6), np.sin(np.pi / 6)
    # link2's orientation in the cube's frame: the sites' frames coincide, s2 turned 30 degrees on the cube
    np.testing.assert_allclose(sites["rotation"], [[c30, -s30, 0], [s30, c30, 0], [0, 0, 1]], atol=1e-12)
    assert_weld_anchors(sites, [0, 0, 0.1], [0.4, 0, 0])  # the sites' origins
    # penalty holds welds as stiff springs. They are explicit: stable while dt < 2 I / limit_damping
    # and dt < 2 sqrt(I / limit_stiffness) for the smallest moment I they turn, here link2's about
    # its own axis (6e-5 kg m^2): the defaults diverge at dt = 1 ms (status NON_FINITE); at 0.1 ms
    # with limit_damping 0.5 the welds hold, the cube swinging about its held pose (measured after
    # 0.5 s: gaps 3.6 and 8.7 mm, the spring's sag m g / limit_stiffness being 1 mm)
    model, _ = load_quietly(write(tmp_path, "weld.xml", WELD), contact="penalty")
    _, _, status = gradyn.rollout(model, model.q0, np.zeros(model.nv), None, 1e-3, "euler",
                                  ctrls=np.tile([1.0, -0.5], (50, 1)), return_status=True)
    assert status[-1] & int(gradyn.Status.NON_FINITE)
    model = model.with_contact(limit_damping=0.5)
    qs, _, status = gradyn.rollout(model, model.q0, np.zeros(model.nv), None, 1e-4, "euler",
                                   ctrls=np.tile([1.0, -0.5], (5000, 1)), return_status=True)
    assert not status.any()
    for c in model.body_connections:
        gap, angle = weld_errors(model, qs[-1], c)
        assert gap < 1.5e-2 and angle < 2e-2, (c["name"], gap, angle)


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_gradcheck_through_welds(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "weld.xml", WELD), contact=contact)
    if contact == "pgs":
        # forward-mode AD's tangents of the PGS sweeps converge more slowly than the impulses; at the
        # default tolerance they stop 1.6e-7 (relative) from the implicit gradient, which central
        # differences agree with as well: solved tightly, the two agree to 2e-12
        model = model.with_contact(pgs_iterations=1000, pgs_tolerance=1e-15)
    dt = 1e-3
    if contact == "penalty":  # explicit springs on light links: a step they are stable at (above)
        model, dt = model.with_contact(limit_damping=0.5), 1e-4
    # moving, both welds holding (the cube's one a little open still)
    qs, vs = gradyn.rollout(model, model.q0, np.zeros(model.nv), None, dt, "euler",
                            ctrls=np.tile([1.0, -0.5], (int(0.08 / dt), 1)))
    taus = np.zeros((20, model.nv))
    taus[:, :2] = [0.5, 0.2]
    r = gradyn.gradcheck(model, qs[-1], vs[-1], taus, dt)
    if contact == "penalty":
        # link2's inertia about its own axis is 6e-5 kg m^2: the default step of 1e-6 changes it by
        # 1.7 % in these stiff springs (central differences then stray 0.2 from the adjoint, which
        # AD matches to 3e-10); a step of 1e-8 agrees to 2e-5
        r["params"] = gradyn.gradcheck(model, qs[-1], vs[-1], taus, dt, fd_step=1e-8)["params"]
    assert_gradcheck(r, 1e-4 if contact == "penalty" else 5e-5, contact)


def test_builder_weld():
    b = gradyn.ModelBuilder()
    b.add_link("world").add_link("a", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0)).add_joint(
        "float", "free", "world", "a", xyz=(0, 0, 1))
    b.add_connection("a", anchor1=(0.1, 0, 0), weld=True, rpy=(0.0, 0.0, 0.2), name="w")
    model = b.build()
    (w,) = model.body_connections
    assert w["weld"] and w["body2"] is None
    c, s = np.cos(0.2), np.sin(0.2)
    np.testing.assert_allclose(w["rotation"], [[c, -s, 0], [s, c, 0], [0, 0, 1]], atol=1e-15)
    assert_weld_anchors(w, [0.1, 0, 0], [0.1, 0, 1])  # anchor2: where anchor1 is at q0
    with pytest.raises(ValueError, match="rpy.*weld=True"):
        gradyn.ModelBuilder().add_connection("a", rpy=(0, 0, 0.1))


# ---- gradients ----------------------------------------------------------------------------------


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_gradcheck_through_friction_and_couplings(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "fingers.xml", FINGERS), contact=contact)
    # friction on every DoF, small enough that the joints slide under the pushes below
    model = model.with_frictionloss(np.array([0.05, 0.02, 0.01, 0.0]))
    q0 = model.q0.copy()
    q0[2] = 0.3
    q0[3] = 0.01 + 0.05 * 0.3 + 0.2 * 0.09
    q0[1] = -q0[0]
    v0 = np.array([0.1, -0.1, 0.5, 0.05 * 0.5 + 0.4 * 0.3 * 0.5])
    taus = np.tile([0.4, 0.0, 0.1, 0.0], (20, 1))
    r = gradyn.gradcheck(model, q0, v0, taus, 1e-3)
    # central differences carry the solvers' tolerance (ipm) and the stiff coupling spring (penalty)
    fd_tolerance = {"pgs": 1e-5, "ipm": 5e-5, "penalty": 2e-4}[contact]
    assert_gradcheck(r, fd_tolerance, contact)


# ---- what is not supported says so ---------------------------------------------------------------


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_step_jacobian_through_constraint_rows_matches_central_differences(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "fingers.xml", FINGERS), contact=contact)
    model = model.with_frictionloss(np.array([0.05, 0.0, 0.01, 0.0]))
    q = model.q0.copy()
    q[2], q[3] = 0.3, 0.01 + 0.05 * 0.3 + 0.2 * 0.09
    v, tau = np.array([0.1, -0.1, 0.5, 0.1]), np.array([0.3, 0.0, 0.1, 0.0])
    A, B = gradyn.step_jacobian(model, q, v, tau, 1e-3)[:2]
    h = 1e-6
    x0 = np.concatenate([q, v, tau])
    fd = np.zeros((8, 12))
    for k in range(12):
        out = []
        for s in (h, -h):
            x = x0.copy()
            x[k] += s
            out.append(np.concatenate(gradyn.step(model, x[:4], x[4:8], x[8:], 1e-3)))
        fd[:, k] = (out[0] - out[1]) / (2 * h)
    J = np.hstack([A, B])
    assert np.abs(J - fd).max() <= 1e-5 * max(1.0, np.abs(fd).max()), np.abs(J - fd).max()
