"""Actuators inside the step (src/dynamics/actuation.cpp): MuJoCo's trajectories, gradients, errors.

The trajectory tests run MuJoCo with every constraint and contact disabled, no fluid forces and
the explicit Euler step (eulerdamp off: MuJoCo's Euler otherwise treats joint damping implicitly),
which is gradyn's semi-implicit Euler step with contact model None. Free joints are welded in the
shipped models (ant, humanoid): MuJoCo integrates a free body's position and orientation apart,
gradyn on SE(3), so their free-flying trajectories differ by the integrator's truncation error,
not by the actuators'.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradyn

ROOT = Path(__file__).resolve().parents[2]
ARM = ROOT / "tests" / "data" / "mjcf" / "actuated_arm.xml"
SHARED = ROOT.parent / "shared" / "models" / "mujoco"


def shared_model(name):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    return path


def welded(path, tmp_path):
    """The MJCF file with its free joints removed (the root body welded to the world), and its
    keyframes (whose qpos had the free joint's entries)."""
    text = re.sub(r"<joint[^>]*type=\"free\"[^>]*/>|<freejoint[^>]*/>", "", Path(path).read_text())
    text = re.sub(r"<keyframe>.*?</keyframe>", "", text, flags=re.S)
    out = tmp_path / Path(path).name
    out.write_text(text)
    return out


def mujoco_model(mujoco, path):
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    m.opt.density = 0.0
    m.opt.viscosity = 0.0
    m.opt.wind[:] = 0.0
    return m


def random_controls(m, T, rng):
    """Controls that also leave their ctrlrange, so that the clamps are exercised."""
    ctrls = np.empty((T, m.nu))
    for k in range(m.nu):
        if m.actuator_ctrllimited[k]:
            lo, hi = m.actuator_ctrlrange[k]
            ctrls[:, k] = rng.uniform(lo - 0.5 * (hi - lo), hi + 0.5 * (hi - lo), size=T)
        else:
            ctrls[:, k] = 2.0 * rng.normal(size=T)
    return ctrls


def follow_mujoco(path, T=200, seed=0):
    """Largest relative deviation of gradyn's (q, v) from MuJoCo's over T steps under random controls."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco_model(mujoco, path)
    d = mujoco.MjData(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the humanoid's tendons, which none of this needs
        gm = gradyn.load(str(path))
    names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, k) for k in range(m.nu)]
    assert gm.nu == m.nu
    assert [n or gm.actuator_names[k] for k, n in enumerate(names)] == gm.actuator_names
    scalar = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
    assert all(int(m.jnt_type[j]) in scalar for j in range(m.njnt))
    rng = np.random.default_rng(seed)
    ctrls = random_controls(m, T, rng)
    d.qpos[:] = m.qpos0 + 0.3 * rng.normal(size=m.nq)
    d.qvel[:] = 0.5 * rng.normal(size=m.nv)
    # gradyn's q, v from MuJoCo's qpos, qvel, joint by joint (hinge and slide: one entry each)
    gq = np.array([gm.joint_idx_q(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)) for j in range(m.njnt)])
    q0, v0 = np.empty(gm.nq), np.empty(gm.nv)
    q0[gq], v0[gq] = d.qpos, d.qvel
    qs_mj, vs_mj = [d.qpos.copy()], [d.qvel.copy()]
    for t in range(T):
        d.ctrl[:] = ctrls[t]
        mujoco.mj_step(m, d)
        qs_mj.append(d.qpos.copy())
        vs_mj.append(d.qvel.copy())
    qs, vs = gradyn.rollout(gm, q0, v0, None, m.opt.timestep, ctrls=ctrls)
    qs_mj, vs_mj = np.array(qs_mj), np.array(vs_mj)
    worst = 0.0
    for t in range(T + 1):
        for a, b in ((qs[t, gq], qs_mj[t]), (vs[t, gq], vs_mj[t])):
            worst = max(worst, np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))))
    return worst


def test_arm_with_every_actuator_kind_follows_mujoco():
    worst = follow_mujoco(ARM, T=200, seed=1)
    print(f"actuated_arm: worst relative deviation {worst:.2e}")
    assert worst <= 1e-8


@pytest.mark.parametrize("name", ["swimmer.xml", "ant.xml", "humanoid.xml"])
def test_shipped_models_follow_mujoco(name, tmp_path):
    """Models nobody here wrote (../shared/models/mujoco), their motors on geared joints."""
    worst = follow_mujoco(welded(shared_model(name), tmp_path), T=200, seed=2)
    print(f"{name}: worst relative deviation {worst:.2e}")
    assert worst <= 1e-8


def test_forces_match_mujoco_actuator_force():
    """Each actuator's force after its clamps, at states and controls that hit every clamp."""
    mujoco = pytest.importorskip("mujoco")
    m = mujoco_model(mujoco, ARM)
    d = mujoco.MjData(m)
    gm = gradyn.load(str(ARM))
    rng = np.random.default_rng(3)
    dt = m.opt.timestep
    clamped = np.zeros(m.nu, dtype=bool)
    for _ in range(50):
        d.qpos[:] = rng.uniform(-1.5, 1.5, size=m.nq)
        d.qvel[:] = 2.0 * rng.normal(size=m.nv)
        d.ctrl[:] = random_controls(m, 1, rng)[0]
        mujoco.mj_forward(m, d)
        force = d.actuator_force.copy()
        lo, hi = m.actuator_forcerange.T
        clamped |= m.actuator_forcelimited.astype(bool) & ((force <= lo) | (force >= hi))
        # one step of gradyn vs MuJoCo's qacc: v_next = v + dt qacc
        _, v_next = gradyn.step(gm, d.qpos.copy(), d.qvel.copy(), None, dt, ctrl=d.ctrl.copy())
        np.testing.assert_allclose((v_next - d.qvel) / dt, d.qacc, rtol=1e-9, atol=1e-9)
    assert clamped.sum() >= 2, "the random states should drive some forces into their forcerange"


def test_gradcheck_controls_and_actuator_parameters():
    gm = gradyn.load(str(ARM))
    rng = np.random.default_rng(4)
    T = 6
    q0, v0 = 0.4 * rng.normal(size=gm.nq), rng.normal(size=gm.nv)
    ctrls = 0.3 * rng.normal(size=(T, gm.nu))  # inside the ranges: away from the clamps' kinks
    r = gradyn.gradcheck(gm, q0, v0, np.zeros((T, gm.nv)), 0.002, ctrls=ctrls, running_loss=True)
    assert set(r) == {"q0", "v0", "taus", "ctrls", "params"}
    for block, res in r.items():
        assert res["ad_error"] <= 1e-9, (block, res)
        assert res["fd_error"] <= 1e-6, (block, res)
    names = gm.param_names
    for expected in ["elbow_servo.kp", "elbow_servo.kv", "elbow_servo.gear", "shoulder_motor.forcerange.upper",
                     "slide_general.gain[1]", "slide_general.bias[2]", "elbow_damper.gain[2]",
                     "slide_velocity.kv", "shoulder_motor.ctrlrange.lower"]:
        assert expected in names


def test_clamped_control_gradient_goes_to_the_range():
    """Outside ctrlrange the control has no gradient and the range's bound has it."""
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1, 0, 0, 0))
    b.add_joint("hinge", "continuous", parent="base", child="arm", axis=(0, 0, 1))
    b.add_actuator("hinge", "motor", gear=2.0, ctrlrange=(-1.0, 1.0))
    gm = b.build()
    q, v = np.zeros(1), np.zeros(1)
    _, _, _, p_bar, ctrl_bar = gradyn.step_vjp(gm, q, v, None, 0.01, np.zeros(1), np.ones(1), ctrl=[3.0])
    assert ctrl_bar[0] == 0.0
    upper = gm.param_names.index("hinge.ctrlrange.upper")
    assert p_bar[upper] != 0.0
    _, _, _, _, ctrl_bar = gradyn.step_vjp(gm, q, v, None, 0.01, np.zeros(1), np.ones(1), ctrl=[0.5])
    assert ctrl_bar[0] != 0.0


def test_step_jacobian_control_columns_match_finite_differences():
    gm = gradyn.load(str(ARM))
    rng = np.random.default_rng(5)
    q, v = 0.4 * rng.normal(size=gm.nq), rng.normal(size=gm.nv)
    ctrl = 0.3 * rng.normal(size=gm.nu)
    dt = 0.002
    A, B, B_ctrl = gradyn.step_jacobian(gm, q, v, None, dt, ctrl=ctrl)
    assert B_ctrl.shape == (2 * gm.nv, gm.nu)
    h = 1e-6
    for k in range(gm.nu):
        e = np.zeros(gm.nu)
        e[k] = h
        qp, vp = gradyn.step(gm, q, v, None, dt, ctrl=ctrl + e)
        qm, vm = gradyn.step(gm, q, v, None, dt, ctrl=ctrl - e)
        fd = np.concatenate([qp - qm, vp - vm]) / (2 * h)  # all joints scalar: tangent = q
        np.testing.assert_allclose(B_ctrl[:, k], fd, rtol=1e-6, atol=1e-8)
    # and the actuators' dependence on the state is in A
    for j in range(gm.nv):
        e = np.zeros(gm.nv)
        e[j] = h
        qp, vp = gradyn.step(gm, q, v + e, None, dt, ctrl=ctrl)
        qm, vm = gradyn.step(gm, q, v - e, None, dt, ctrl=ctrl)
        np.testing.assert_allclose(A[:, gm.nv + j], np.concatenate([qp - qm, vp - vm]) / (2 * h), rtol=1e-6, atol=1e-8)


def test_bad_controls_name_expected_and_actual_shapes():
    gm = gradyn.load(str(ARM))
    q, v = np.zeros(gm.nq), np.zeros(gm.nv)
    with pytest.raises(ValueError, match=r"ctrl: expected shape \(6,\), got \(5,\)"):
        gradyn.step(gm, q, v, None, 0.01, ctrl=np.zeros(5))
    with pytest.raises(ValueError, match=r"ctrls: expected shape \(\*, 6\), got \(4, 5\)"):
        gradyn.rollout(gm, q, v, None, 0.01, ctrls=np.zeros((4, 5)))
    with pytest.raises(ValueError, match=r"taus and ctrls disagree.*\(3, 3\).*\(4, 6\)"):
        gradyn.rollout(gm, q, v, np.zeros((3, 3)), 0.01, ctrls=np.zeros((4, 6)))
    with pytest.raises(ValueError, match="taus and ctrls are both None"):
        gradyn.rollout(gm, q, v, None, 0.01)


def test_actuator_on_missing_joint_names_file_line_and_actuator(tmp_path):
    xml = ARM.read_text().replace('joint="elbow" gear="1.5"', 'joint="wrist" gear="1.5"')
    path = tmp_path / "bad_arm.xml"
    path.write_text(xml)
    line = next(i + 1 for i, l in enumerate(xml.splitlines()) if 'joint="wrist"' in l)
    with pytest.raises(gradyn.ModelError, match=rf"bad_arm.xml:{line}.*elbow_servo.*'wrist'"):
        gradyn.load(str(path))


def test_urdf_effort_limits_become_motors():
    path = ROOT.parent / "shared" / "models" / "laikago" / "laikago_toes_zup.urdf"
    if not path.exists():
        pytest.skip("laikago not found")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = gradyn.load(str(path), floating_base=True)
        bare = gradyn.load(str(path), floating_base=True, urdf_effort_motors=False)
    assert gm.nu == 12
    a = gm.actuators[0]
    assert a["kind"] == "motor" and a["gear"] == 1.0 and a["ctrlrange"] is None
    lo, hi = a["forcerange"]
    assert lo == -hi and hi > 0
    assert bare.nu == 0
    assert len(bare.param_names) == len(gm.param_names) - 3 * 12  # gear and forcerange per motor
