"""MuJoCo as an oracle for the MJCF loader and the smooth dynamics.

For each model, on random states, gradyn.forward_dynamics (ABA plus joint springs and dampers)
must give MuJoCo's qacc. MuJoCo runs with every constraint (contacts, joint limits, equality,
friction loss) disabled, actuation disabled and no fluid forces, so that its qacc is the smooth
M(q)^-1 (qfrc_applied + qfrc_passive - qfrc_bias) that gradyn computes.

State mapping (see the top of src/io/mjcf.cpp). Joints are matched by name. Scalar joints agree
entry by entry. Quaternions are (w, x, y, z) in MuJoCo and (x, y, z, w) in gradyn. A free joint's
MuJoCo qvel is (world-frame linear velocity of the body origin, body-frame angular velocity);
gradyn's v has both parts in the body frame. With R the body's rotation and w its angular
velocity:
    v_lin   = R^T qvel_lin          tau_lin = R^T qfrc_lin
    a_lin   = R^T qacc_lin - w x v_lin     (d/dt of R^T p_dot)
and the angular parts are equal.

Tolerance: |a_gradyn - a_mujoco| <= 1e-8 * max(1, max|a_mujoco|) per entry: both are exact
up to round-off, which the mass matrix's conditioning amplifies in proportion to the largest
acceleration; 1e-8 leaves room for that and still catches any modelling difference (those are
of order 1e-3 or more).
"""

from pathlib import Path

import numpy as np
import pytest

mujoco = pytest.importorskip("mujoco")
import gradyn  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def model_path(name):
    """A MuJoCo model from the project's models/ folder, else from ../shared/models."""
    for base in (ROOT / "models", ROOT.parent / "shared" / "models"):
        if (base / name).exists():
            return base / name
    pytest.skip(f"model {name} not found")


MODELS = {
    "humanoid": lambda: model_path("mujoco/humanoid.xml"),
    "ant": lambda: model_path("mujoco/ant.xml"),
    "swimmer": lambda: model_path("mujoco/swimmer.xml"),
    # ball joint with a spring, several joints in one body with anchors and ref, slide joint,
    # default classes, explicit inertials (see the file's comments)
    "features": lambda: ROOT / "tests" / "data" / "mjcf" / "features.xml",
}


def mujoco_smooth_model(path):
    m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_ACTUATION
    m.opt.density = 0.0
    m.opt.viscosity = 0.0
    m.opt.wind[:] = 0.0
    return m


def joint_name(m, j):
    return mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"


def quat_wxyz_to_matrix(q):
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(q, dtype=float))
    return R.reshape(3, 3)


def random_state(m, rng):
    qpos = np.zeros(m.nq)
    for j in range(m.njnt):
        a = m.jnt_qposadr[j]
        t = m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] = rng.normal(size=3)
            quat = rng.normal(size=4)
            qpos[a + 3:a + 7] = quat / np.linalg.norm(quat)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            quat = rng.normal(size=4)
            qpos[a:a + 4] = quat / np.linalg.norm(quat)
        else:
            qpos[a] = rng.uniform(-1.5, 1.5)
    return qpos, rng.normal(size=m.nv), 5.0 * rng.normal(size=m.nv)


def to_gradyn(gm, m, qpos, qvel, qfrc, qacc):
    """MuJoCo (qpos, qvel, qfrc_applied, qacc) -> gradyn (q, v, tau, a), joint by joint."""
    q, v, tau, a = np.zeros(gm.nq), np.zeros(gm.nv), np.zeros(gm.nv), np.zeros(gm.nv)
    seen = set()
    for j in range(m.njnt):
        name = joint_name(m, j)
        seen.add(name)
        mq, mv = m.jnt_qposadr[j], m.jnt_dofadr[j]
        gq, gv = gm.joint_idx_q(name), gm.joint_idx_v(name)
        t = m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            R = quat_wxyz_to_matrix(qpos[mq + 3:mq + 7])
            w = qvel[mv + 3:mv + 6]
            v_lin = R.T @ qvel[mv:mv + 3]
            q[gq:gq + 3] = qpos[mq:mq + 3]
            q[gq + 3:gq + 6], q[gq + 6] = qpos[mq + 4:mq + 7], qpos[mq + 3]
            v[gv:gv + 6] = np.concatenate([v_lin, w])
            tau[gv:gv + 6] = np.concatenate([R.T @ qfrc[mv:mv + 3], qfrc[mv + 3:mv + 6]])
            a[gv:gv + 6] = np.concatenate([R.T @ qacc[mv:mv + 3] - np.cross(w, v_lin), qacc[mv + 3:mv + 6]])
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            q[gq:gq + 3], q[gq + 3] = qpos[mq + 1:mq + 4], qpos[mq]
            v[gv:gv + 3], tau[gv:gv + 3], a[gv:gv + 3] = qvel[mv:mv + 3], qfrc[mv:mv + 3], qacc[mv:mv + 3]
        else:
            q[gq], v[gv], tau[gv], a[gv] = qpos[mq], qvel[mv], qfrc[mv], qacc[mv]
    assert seen == set(gm.joint_names)
    return q, v, tau, a


@pytest.mark.parametrize("name", sorted(MODELS))
def test_sizes_and_reference_configuration(name):
    path = MODELS[name]()
    m = mujoco_smooth_model(path)
    gm = gradyn.load(str(path))
    assert (gm.nq, gm.nv) == (m.nq, m.nv)
    zeros = np.zeros(m.nv)
    q0, _, _, _ = to_gradyn(gm, m, m.qpos0, zeros, zeros, zeros)
    np.testing.assert_allclose(gm.q0, q0, rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_forward_dynamics_matches_mujoco_qacc(name):
    path = MODELS[name]()
    m = mujoco_smooth_model(path)
    d = mujoco.MjData(m)
    gm = gradyn.load(str(path))
    np.testing.assert_allclose(gm.gravity, m.opt.gravity, rtol=0, atol=0)
    rng = np.random.default_rng(20240611)
    worst = 0.0
    for trial in range(25):
        qpos, qvel, qfrc = random_state(m, rng)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
        d.xfrc_applied[:] = 0.0
        mujoco.mj_forward(m, d)
        q, v, tau, a_mujoco = to_gradyn(gm, m, qpos, qvel, qfrc, d.qacc)
        a = gradyn.forward_dynamics(gm, q, v, tau)
        scale = max(1.0, np.max(np.abs(a_mujoco)))
        err = np.max(np.abs(a - a_mujoco))
        worst = max(worst, err / scale)
        assert err <= 1e-8 * scale, f"trial {trial}: max |a - qacc| = {err:.3e} (scale {scale:.3e})"
    print(f"{name}: worst relative error {worst:.2e}")


def test_passive_forces_match_mujoco():
    """Springs (hinge, slide and ball, with springref) and dampers, on their own."""
    path = MODELS["features"]()
    m = mujoco_smooth_model(path)
    d = mujoco.MjData(m)
    gm = gradyn.load(str(path))
    rng = np.random.default_rng(7)
    for _ in range(5):
        qpos, qvel, _ = random_state(m, rng)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        q, v, passive, _ = to_gradyn(gm, m, qpos, qvel, d.qfrc_passive, np.zeros(m.nv))
        np.testing.assert_allclose(gradyn.passive_forces(gm, q, v), passive, rtol=0, atol=1e-12)
