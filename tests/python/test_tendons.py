"""Fixed tendons (MJCF <tendon><fixed>, ModelBuilder.add_tendon): read as MuJoCo compiles them, held
within their range by pgs, ipm and penalty, a spring-damper along them, trajectories against MuJoCo's
with its limit made stiff, gradients through them, and what is not simulated warns."""

import pathlib
import pickle

import numpy as np
import pytest

import gradyn
from mjcf_files import assert_gradcheck, load_quietly, mujoco_rollout, write

mujoco = pytest.importorskip("mujoco")

# A leg hanging from the world: hip and knee hinges about y, a hamstring over both (0.5 hip - 0.5 knee,
# limited to [-0.3, 0.2]) and a spring-damper tendon on the knee. MuJoCo's limit is made as stiff as
# it goes (solreflimit 2 ms); eulerdamp off, so that MuJoCo's Euler integrates damping explicitly.
LEG = """
<mujoco model="leg">
  <option timestep="0.001" gravity="0 0 -9.81"><flag eulerdamp="disable"/></option>
  <worldbody>
    <body name="thigh">
      <joint name="hip" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04" mass="2" contype="0" conaffinity="0"/>
      <body name="shin" pos="0 0 -0.4">
        <joint name="knee" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.03" mass="1" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="hamstring" limited="true" range="-0.3 0.2" solreflimit="0.002 1">
      <joint joint="hip" coef="0.5"/>
      <joint joint="knee" coef="-0.5"/>
    </fixed>
    <fixed name="knee_spring" stiffness="5" damping="0.3" springlength="0.1">
      <joint joint="knee" coef="1"/>
    </fixed>
  </tendon>
  <actuator>
    <motor name="hip" joint="hip"/>
    <motor name="knee" joint="knee"/>
  </actuator>
</mujoco>
"""






def hamstring(q):
    return 0.5 * q[..., 0] - 0.5 * q[..., 1]


def test_fixed_tendons_are_read(tmp_path):
    model, messages = load_quietly(write(tmp_path, "leg.xml", LEG))
    assert not [m for m in messages if "not simulated" in m], messages
    assert any("tendon solreflimit" in m and "softness" in m for m in messages), messages
    first, second = model.tendons
    assert first["name"] == "hamstring" and first["joints"] == ("hip", "knee")
    assert first["coefs"] == (0.5, -0.5) and first["range"] == (-0.3, 0.2)
    assert first["stiffness"] == 0 and first["damping"] == 0
    assert second["range"] == (-np.inf, np.inf)
    assert (second["stiffness"], second["damping"], second["spring_length"]) == (5.0, 0.3, 0.1)
    again = pickle.loads(pickle.dumps(model))
    assert again.tendons == model.tendons


def test_mujoco_humanoid_hamstrings_are_read(tmp_path):
    path = pathlib.Path(__file__).resolve().parents[2] / "models" / "mujoco" / "humanoid.xml"
    model, messages = load_quietly(path)
    assert not [m for m in messages if "tendon" in m], messages
    names = [t["name"] for t in model.tendons]
    assert names == ["hamstring_right", "hamstring_left"]
    assert model.tendons[0]["joints"] == ("hip_y_right", "knee_right")
    assert model.tendons[0]["coefs"] == (0.5, -0.5) and model.tendons[0]["range"] == (-0.3, 2.0)




def leg_controls(steps):
    t = np.arange(steps) * 1e-3
    # the hip swings forward and the knee back: the hamstring reaches its upper bound for a while
    return np.stack([6.0 * np.sin(4 * t), -3.0 * np.sin(4 * t)], axis=1)


def test_the_spring_damper_tendon_steps_as_mujoco_while_no_limit_is_reached(tmp_path):
    model, _ = load_quietly(write(tmp_path, "leg.xml", LEG))
    steps = 300
    ctrls = 0.3 * leg_controls(steps)
    q0 = np.array([0.05, -0.1])
    qs, _ = gradyn.rollout(model, q0, np.zeros(2), np.zeros((steps, 2)), 1e-3, "euler", ctrls=ctrls)
    assert hamstring(qs).max() < 0.19  # the limit plays no part
    q_mj = mujoco_rollout(LEG, q0, ctrls)
    assert np.abs(q_mj - qs[1:]).max() < 1e-10  # measured 2.8e-17


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_the_hamstring_holds_its_range_and_follows_mujoco(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "leg.xml", LEG), contact=contact)
    steps = 800
    ctrls = leg_controls(steps)
    q0 = np.array([0.05, -0.1])
    qs, _ = gradyn.rollout(model, q0, np.zeros(2), np.zeros((steps, 2)), 1e-3, "euler", ctrls=ctrls)
    length = hamstring(qs)
    free, _ = gradyn.rollout(model.with_contact(model="none"), q0, np.zeros(2), np.zeros((steps, 2)), 1e-3,
                             "euler", ctrls=ctrls)
    assert hamstring(free).max() > 0.5  # without a contact model nothing holds it
    # pgs and ipm: Baumgarte's slop; penalty: the tension over limit_stiffness
    assert length.max() < 0.2 + (3e-3 if contact == "penalty" else 2e-4), length.max()
    assert (length > 0.199).sum() > 100  # it rested on its bound for a while
    q_mj = mujoco_rollout(LEG, q0, ctrls)
    assert hamstring(q_mj).max() < 0.2 + 5e-3
    # MuJoCo's limit stays soft (solreflimit 2 ms, its stiffest: its hamstring reaches 0.20057);
    # measured largest joint differences over these 0.8 s, the joints travelling 0.48 and 0.38 rad:
    # pgs and ipm 2.7e-4 (hip), 8.7e-4 (knee); penalty 8.3e-4, 2.7e-3
    assert np.abs(q_mj - qs[1:]).max() < DIFF_MUJOCO[contact]


DIFF_MUJOCO = {"pgs": 2e-3, "ipm": 2e-3, "penalty": 5e-3}


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_gradcheck_through_tendon_limits_and_springs(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "leg.xml", LEG), contact=contact)
    q0 = np.array([0.402, 0.0])  # 1 mm past the hamstring's upper bound
    v0 = np.array([0.3, -0.2])
    taus = np.tile([1.5, -0.5], (20, 1))
    r = gradyn.gradcheck(model, q0, v0, taus, 1e-3)
    fd_tolerance = {"pgs": 1e-5, "ipm": 5e-5, "penalty": 2e-4}[contact]
    assert_gradcheck(r, fd_tolerance, contact)


def test_builder_tendon_and_bad_input():
    b = gradyn.ModelBuilder()
    b.add_link("base").add_link("a", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_link("c", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    b.add_joint("j1", "revolute", "base", "a", axis=(0, 0, 1))
    b.add_joint("j2", "prismatic", "a", "c", axis=(1, 0, 0))
    b.add_tendon(["j1", "j2"], [1.0, -2.0], name="t", range=(-np.inf, 0.5), stiffness=2.0, damping=0.1)
    model = b.build()
    (t,) = model.tendons
    assert t["joints"] == ("j1", "j2") and t["coefs"] == (1.0, -2.0) and t["range"] == (-np.inf, 0.5)
    assert t["spring_length"] == 0.0  # the length at the joints' spring rest
    with pytest.raises(ValueError, match=r"coefs: expected one coefficient per joint, shape \(2,\), got shape \(3,\)"):
        gradyn.ModelBuilder().add_tendon(["j1", "j2"], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"range: expected \(lower, upper\)"):
        gradyn.ModelBuilder().add_tendon(["j1"], [1.0], range=(0.0,))
    bad = gradyn.ModelBuilder()
    bad.add_link("base").add_link("a", mass=1.0, inertia=(0.01, 0.01, 0.01, 0, 0, 0))
    bad.add_joint("j1", "revolute", "base", "a", axis=(0, 0, 1))
    bad.add_tendon(["j1", "nope"], [1.0, 1.0], name="t")
    with pytest.raises(gradyn.ModelError, match="tendon 't': unknown joint 'nope'"):
        bad.build()


def test_spatial_tendons_and_tendon_actuators_warn(tmp_path):
    text = LEG.replace("</tendon>", '<spatial name="cable"><site site="s1"/></spatial></tendon>').replace(
        "</actuator>", '<motor name="pull" tendon="hamstring"/></actuator>')
    model, messages = load_quietly(write(tmp_path, "leg.xml", text))
    assert any("<tendon><spatial name='cable'>" in m and "spatial tendons" in m for m in messages), messages
    assert any("acts through its tendon" in m for m in messages), messages
    assert [t["name"] for t in model.tendons] == ["hamstring", "knee_spring"]
    assert model.nu == 2


def test_a_fixed_tendon_needs_joints_with_coefficients(tmp_path):
    text = LEG.replace('<joint joint="knee" coef="1"/>', '<joint joint="knee"/>')
    with pytest.raises(gradyn.ModelError, match=r"leg.xml:\d+.*needs 'coef'"):
        gradyn.load(write(tmp_path, "leg.xml", text))
    text = LEG.replace('<joint joint="knee" coef="1"/>', "")
    with pytest.raises(gradyn.ModelError, match="lists no <joint>"):
        gradyn.load(write(tmp_path, "leg.xml", text))


# The leg's hamstring coupled to its thigh's angle by <equality><tendon>: hamstring - h0 = 0.3 (thigh -
# t0) + 0.2 (thigh - t0)^2, the references the lengths at qpos0 (MuJoCo's rule). Made stiff in MuJoCo
# (solref 2 ms).
COUPLED = LEG.replace("""    <fixed name="knee_spring" stiffness="5" damping="0.3" springlength="0.1">
      <joint joint="knee" coef="1"/>
    </fixed>""", """    <fixed name="thigh">
      <joint joint="hip" coef="1"/>
    </fixed>""").replace(' limited="true" range="-0.3 0.2" solreflimit="0.002 1"', "").replace(
    "<actuator>", """<equality>
    <tendon name="knit" tendon1="hamstring" tendon2="thigh" polycoef="0 0.3 0.2" solref="0.002 1"/>
  </equality>
  <actuator>""")


def knit_error(q):
    """The coupling's error: its references are the lengths at qpos0 = (0, 0), both 0."""
    thigh = q[..., 0]
    return hamstring(q) - (0.3 * thigh + 0.2 * thigh**2)


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_tendon_equality_couples_the_lengths_as_mujoco(tmp_path, contact):
    model, messages = load_quietly(write(tmp_path, "coupled.xml", COUPLED), contact=contact)
    assert not [m for m in messages if "not simulated" in m], messages
    (knit,) = model.joint_couplings
    assert knit["tendons"] and (knit["joint1"], knit["joint2"]) == ("hamstring", "thigh")
    steps = 600
    ctrls = 0.5 * leg_controls(steps)
    q0 = np.array([0.05, -0.1])  # off the coupling by knit_error(q0): both simulators pull it on
    qs, _ = gradyn.rollout(model, q0, np.zeros(2), np.zeros((steps, 2)), 1e-3, "euler", ctrls=ctrls)
    assert abs(knit_error(q0)) > 0.05
    assert np.abs(knit_error(qs[100:])).max() < (2e-3 if contact == "penalty" else 1e-6)
    assert np.ptp(qs[:, 0]) > 0.1  # it moved
    q_mj = mujoco_rollout(COUPLED, q0, ctrls)
    assert np.abs(knit_error(q_mj[100:])).max() < 1e-3  # MuJoCo's soft row: measured 5.4e-5
    # measured after the first 0.1 s (the pull onto the coupling), the hip travelling 0.27 rad: pgs and
    # ipm 6.3e-4 rad (hip), 1.0e-4 (knee), coupling error 3.2e-9; penalty 2.6e-3, 1.9e-4, error 4.3e-4
    assert np.abs(q_mj[100:] - qs[101:]).max() < TENDON_EQUALITY_DIFF[contact]


TENDON_EQUALITY_DIFF = {"pgs": 2e-3, "ipm": 2e-3, "penalty": 5e-3}


@pytest.mark.parametrize("contact", ["pgs", "ipm", "penalty"])
def test_gradcheck_through_a_tendon_equality(tmp_path, contact):
    model, _ = load_quietly(write(tmp_path, "coupled.xml", COUPLED), contact=contact)
    qs, vs = gradyn.rollout(model, np.array([0.05, -0.1]), np.zeros(2), np.tile([1.0, -0.5], (150, 1)), 1e-3)
    r = gradyn.gradcheck(model, qs[-1], vs[-1], np.tile([0.5, 0.2], (20, 1)), 1e-3)  # the polycoef included
    assert "knit.polycoef[1]" in model.param_names
    assert_gradcheck(r, 2e-4 if contact == "penalty" else 5e-5, contact)
