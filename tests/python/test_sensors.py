"""gradyn.sensors against MuJoCo's sensordata (the oracle), and sensors_vjp against finite differences.

Tolerances: the kinematic sensors (jointpos ... gyro) are the same closed forms evaluated in another
order, so they agree to rounding: 1e-12 on readings of order 1 (measured: a few 1e-15). The
accelerometer reads gradyn's step acceleration (v_next - v) / dt against MuJoCo's qacc: both solve
M a = f by different factorisations (ABA against MuJoCo's sparse LDL), and the division by dt = 1e-3
multiplies the rounding of v_next by 1e3; 1e-9 (relative to |g|) holds with margin (measured about
1e-12). framequat is compared up to sign (q and -q are the same rotation; MuJoCo does not fix it).
Touch: a box at rest on the floor; gradyn's PGS contact and MuJoCo's soft contact differ in how they
get there, but at rest both carry the weight: MuJoCo's reading equals m g to 1e-6 (measured 5e-10
relative after 2 s), gradyn's equals MuJoCo's to 1e-6 (measured 5e-10), and a zone away from the
contact reads 0 in both.
"""

from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest

import gradyn

mujoco = pytest.importorskip("mujoco")

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Every sensor type gradyn computes, on a chain (hinge, slide + hinge in one body, ball) and a free body,
# with site and xbody objects and references, a world site, and a cutoff. Nothing collides (MuJoCo's
# qacc is then the unconstrained acceleration that gradyn's step without contact model integrates).
ALL_NINE = """
<mujoco model="all_nine">
  <default><geom contype="0" conaffinity="0"/></default>
  <worldbody>
    <site name="origin" pos="0.1 -0.2 0.3" euler="10 20 30"/>
    <body name="upper" pos="0 0 1" euler="5 -10 15">
      <joint name="shoulder" type="hinge" axis="0.3 1 0.2" pos="0 0 0.1"/>
      <geom name="upper_geom" type="capsule" fromto="0 0.01 0 0.5 0.1 0.05" size="0.05"/>
      <site name="elbow_site" pos="0.5 0.02 0" quat="0.9 0.1 0.3 0.2"/>
      <site name="rod_site" type="capsule" fromto="0 0 0 0.1 0.2 0.3" size="0.01"/>
      <body name="lower" pos="0.5 0 0" euler="0 20 0">
        <joint name="slide" type="slide" axis="1 0 0.2"/>
        <joint name="elbow" type="hinge" axis="0 0 1" pos="0.05 0 0"/>
        <geom type="box" size="0.2 0.05 0.05" pos="0.2 0 0"/>
        <site name="hand" type="box" size="0.05 0.06 0.07" pos="0.4 0 0.03" euler="30 0 -20"/>
        <body name="wrist" pos="0.4 0 0">
          <joint name="wrist_ball" type="ball"/>
          <geom type="sphere" size="0.05" pos="0.1 0 0"/>
          <site name="tool" pos="0.1 0.05 0" euler="-40 10 70"/>
        </body>
      </body>
    </body>
    <body name="drone" pos="1 1 2">
      <freejoint name="fly"/>
      <geom type="box" size="0.2 0.1 0.05"/>
      <site name="imu" pos="0.05 0.02 -0.01" euler="0 15 45"/>
    </body>
  </worldbody>
  <sensor>
    <jointpos name="shoulder_q" joint="shoulder"/>
    <jointpos name="slide_q" joint="slide"/>
    <jointvel name="elbow_v" joint="elbow"/>
    <jointvel name="shoulder_v" joint="shoulder"/>
    <jointpos name="shoulder_clamped" joint="shoulder" cutoff="0.5"/>
    <framepos name="tool_pos" objtype="site" objname="tool"/>
    <framepos name="tool_from_origin" objtype="site" objname="tool" reftype="site" refname="origin"/>
    <framepos name="hand_in_upper" objtype="site" objname="hand" reftype="xbody" refname="upper"/>
    <framepos name="upper_geom_pos" objtype="geom" objname="upper_geom" reftype="site" refname="tool"/>
    <framequat name="upper_geom_quat" objtype="geom" objname="upper_geom"/>
    <framequat name="rod_site_quat" objtype="site" objname="rod_site" reftype="site" refname="origin"/>
    <framequat name="tool_quat" objtype="site" objname="tool"/>
    <framequat name="imu_in_hand" objtype="site" objname="imu" reftype="site" refname="hand"/>
    <framequat name="lower_in_drone" objtype="xbody" objname="lower" reftype="xbody" refname="drone"/>
    <framelinvel name="tool_vel" objtype="site" objname="tool"/>
    <framelinvel name="imu_vel_from_tool" objtype="site" objname="imu" reftype="site" refname="tool"/>
    <framelinvel name="wrist_vel_in_upper" objtype="xbody" objname="wrist" reftype="xbody" refname="upper"/>
    <frameangvel name="tool_omega" objtype="site" objname="tool"/>
    <frameangvel name="imu_omega_in_lower" objtype="site" objname="imu" reftype="xbody" refname="lower"/>
    <gyro name="imu_gyro" site="imu"/>
    <gyro name="tool_gyro" site="tool" cutoff="1.5"/>
    <accelerometer name="imu_acc" site="imu"/>
    <accelerometer name="tool_acc" site="tool"/>
    <accelerometer name="hand_acc" site="hand" noise="0.01"/>
    <touch name="hand_touch" site="hand"/>
  </sensor>
</mujoco>
"""

RESTING_BOX = """
<mujoco model="resting_box">
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="box" pos="0 0 0.1">
      <freejoint/>
      <geom type="box" size="0.1 0.1 0.1" mass="2"/>
      <site name="sole" type="box" pos="0 0 -0.1" size="0.11 0.11 0.01"/>
      <site name="top" type="sphere" pos="0 0 0.1" size="0.05"/>
    </body>
  </worldbody>
  <sensor><touch name="sole" site="sole"/><touch name="top" site="top"/></sensor>
</mujoco>
"""


def load(tmp_path, xml, name):
    path = tmp_path / name
    path.write_text(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # these files are read without a warning
        return gradyn.load(str(path)), mujoco.MjModel.from_xml_path(str(path))


def quat_wxyz_to_matrix(q):
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.asarray(q, dtype=float))
    return R.reshape(3, 3)


def random_state(m, rng):
    qpos = np.zeros(m.nq)
    for j in range(m.njnt):
        a, t = m.jnt_qposadr[j], m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] = rng.normal(size=3)
            quat = rng.normal(size=4)
            qpos[a + 3:a + 7] = quat / np.linalg.norm(quat)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            quat = rng.normal(size=4)
            qpos[a:a + 4] = quat / np.linalg.norm(quat)
        else:
            qpos[a] = rng.uniform(-1.5, 1.5)
    return qpos, rng.normal(size=m.nv)


def to_gradyn(gm, m, qpos, qvel):
    """MuJoCo (qpos, qvel) -> gradyn (q, v), joint by joint (free: v_lin in the body frame, xyzw quaternions)."""
    q, v = np.zeros(gm.nq), np.zeros(gm.nv)
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        mq, mv = m.jnt_qposadr[j], m.jnt_dofadr[j]
        gq, gv = gm.joint_idx_q(name), gm.joint_idx_v(name)
        t = m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            R = quat_wxyz_to_matrix(qpos[mq + 3:mq + 7])
            q[gq:gq + 3], q[gq + 3:gq + 6], q[gq + 6] = qpos[mq:mq + 3], qpos[mq + 4:mq + 7], qpos[mq + 3]
            v[gv:gv + 3], v[gv + 3:gv + 6] = R.T @ qvel[mv:mv + 3], qvel[mv + 3:mv + 6]
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            q[gq:gq + 3], q[gq + 3] = qpos[mq + 1:mq + 4], qpos[mq]
            v[gv:gv + 3] = qvel[mv:mv + 3]
        else:
            q[gq], v[gv] = qpos[mq], qvel[mv]
    return q, v


def mujoco_readings(m, d):
    """{name: MuJoCo's reading}."""
    out = {}
    for i in range(m.nsensor):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SENSOR, i)
        out[name] = d.sensordata[m.sensor_adr[i]:m.sensor_adr[i] + m.sensor_dim[i]].copy()
    return out


def compare(gm, readings, theirs, worst):
    """Records max |gradyn - MuJoCo| per sensor type in `worst`."""
    for name, kind in zip(gm.sensor_names, gm.sensor_types):
        ours = readings[gm.sensor_slices[name]]
        ref = theirs[name]
        if kind == "framequat":
            ref = ref if np.dot(ours, ref) >= 0 else -ref
        worst[kind] = max(worst.get(kind, 0.0), float(np.max(np.abs(ours - ref))))


TOLERANCE = {"jointpos": 1e-12, "jointvel": 1e-12, "framepos": 1e-12, "framequat": 1e-12, "framelinvel": 1e-12,
             "frameangvel": 1e-12, "gyro": 1e-12, "accelerometer": 1e-9 * 9.81, "touch": 0.0}


def test_all_nine_types_match_mujoco_at_random_states(tmp_path):
    gm, m = load(tmp_path, ALL_NINE, "all_nine.xml")
    assert gm.sensor_names == [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SENSOR, i) for i in range(m.nsensor)]
    assert gm.nsensordata == m.nsensordata
    assert sorted(set(gm.sensor_types)) == sorted(TOLERANCE)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(7)
    worst = {}
    for _ in range(20):
        qpos, qvel = random_state(m, rng)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        q, v = to_gradyn(gm, m, qpos, qvel)
        readings = gradyn.sensors(gm, q, v, dt=1e-3)
        compare(gm, readings, mujoco_readings(m, d), worst)
    print("max |gradyn - MuJoCo| per sensor type:", worst)
    for kind, err in worst.items():
        assert err <= TOLERANCE[kind], (kind, err)
    # the layout is MuJoCo's: the whole vector agrees, entry by entry, once quaternion signs are aligned
    assert readings.shape == (m.nsensordata,)


def test_touch_of_a_resting_box_matches_mujoco(tmp_path):
    gm, m = load(tmp_path, RESTING_BOX, "resting_box.xml")
    d = mujoco.MjData(m)
    for _ in range(2000):  # 2 s: the box settles
        mujoco.mj_step(m, d)
    mj = mujoco_readings(m, d)
    weight = 2 * 9.81
    assert mj["sole"][0] == pytest.approx(weight, rel=1e-6)
    assert mj["top"][0] == 0.0

    pgs = gm.with_contact("pgs")
    q, v = gm.neutral(), np.zeros(gm.nv)
    q[:3] = (0, 0, 0.1)
    for _ in range(500):
        q, v = gradyn.step(pgs, q, v, None, 1e-3)
    r = gradyn.sensors(pgs, q, v, dt=1e-3)
    assert r[pgs.sensor_slices["sole"]][0] == pytest.approx(mj["sole"][0], rel=1e-6)
    assert r[pgs.sensor_slices["top"]][0] == 0.0


def test_shipped_swimmer_sensors_match_mujoco():
    path = ROOT / "models" / "swimmer05" / "model.xml"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gm = gradyn.load(str(path))
    text = " ".join(str(w.message) for w in caught)
    # the sensors gradyn does not compute warn (grouped), naming the file and line
    assert "velocimeter" in text and "framexaxis" in text and "model.xml:" in text
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    assert sorted(set(gm.sensor_types)) == ["framepos", "gyro"]  # framepos of the nose and target geoms
    rng = np.random.default_rng(3)
    worst = {}
    for _ in range(10):
        qpos, qvel = random_state(m, rng)
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(m, d)
        q, v = to_gradyn(gm, m, qpos, qvel)
        compare(gm, gradyn.sensors(gm, q, v), mujoco_readings(m, d), worst)
    print("swimmer05: max |gradyn - MuJoCo| per sensor type:", worst)
    for kind, err in worst.items():
        assert err <= TOLERANCE[kind], (kind, err)


def test_sensors_vjp_matches_finite_differences(tmp_path):
    gm, _ = load(tmp_path, ALL_NINE, "all_nine.xml")
    rng = np.random.default_rng(11)
    q = gm.neutral() + 0.2 * rng.normal(size=gm.nq)
    v, tau = rng.normal(size=gm.nv), rng.normal(size=gm.nv)
    r_bar = rng.normal(size=gm.nsensordata)
    r_bar[gm.sensor_slices["hand_touch"]] = 0.0  # touch is not differentiated
    dt = 1e-3
    q_bar, v_bar, tau_bar = gradyn.sensors_vjp(gm, q, v, r_bar, tau=tau, dt=dt)
    f = lambda q_, v_, tau_: r_bar @ gradyn.sensors(gm, q_, v_, tau=tau_, dt=dt)
    h = 1e-6
    for x, x_bar, wrap in ((q, q_bar, lambda x_: f(x_, v, tau)), (v, v_bar, lambda x_: f(q, x_, tau)),
                           (tau, tau_bar, lambda x_: f(q, v, x_))):
        fd = np.array([(wrap(x + h * e) - wrap(x - h * e)) / (2 * h) for e in np.eye(len(x))])
        np.testing.assert_allclose(x_bar, fd, rtol=1e-5, atol=1e-5)
    # a touch adjoint is refused, naming the sensor
    with pytest.raises(ValueError, match="touch sensor 'hand_touch'"):
        gradyn.sensors_vjp(gm, q, v, np.ones(gm.nsensordata), dt=dt)


def test_batched_sensors_are_the_single_calls(tmp_path):
    gm, _ = load(tmp_path, ALL_NINE, "all_nine.xml")
    rng = np.random.default_rng(5)
    qs = gm.neutral() + 0.3 * rng.normal(size=(4, gm.nq))
    vs, taus = rng.normal(size=(4, gm.nv)), rng.normal(size=(4, gm.nv))
    batch = gradyn.sensors(gm, qs, vs, tau=taus, dt=1e-3)
    assert batch.shape == (4, gm.nsensordata)
    for b in range(4):
        np.testing.assert_array_equal(batch[b], gradyn.sensors(gm, qs[b], vs[b], tau=taus[b], dt=1e-3))
    r_bar = rng.normal(size=(4, gm.nsensordata))
    r_bar[:, gm.sensor_slices["hand_touch"]] = 0
    bars = gradyn.sensors_vjp(gm, qs, vs, r_bar, tau=taus, dt=1e-3)
    for b in range(4):
        for got, want in zip(bars, gradyn.sensors_vjp(gm, qs[b], vs[b], r_bar[b], tau=taus[b], dt=1e-3)):
            np.testing.assert_array_equal(got[b], want)


def test_step_sensors_need_dt_and_sensors_survive_copies(tmp_path):
    gm, _ = load(tmp_path, ALL_NINE, "all_nine.xml")
    with pytest.raises(ValueError, match="dt: sensor 'imu_acc' \\(accelerometer\\) reads a step"):
        gradyn.sensors(gm, gm.neutral(), np.zeros(gm.nv))
    import pickle
    for copy in (pickle.loads(pickle.dumps(gm)), gm.with_contact("penalty"), gm.with_gravity((0, 0, -1.0))):
        assert copy.sensor_names == gm.sensor_names


def test_torch_bridge_gradients_are_sensors_vjp(tmp_path):
    torch = pytest.importorskip("torch")
    import gradyn.torch as gt
    gm, _ = load(tmp_path, ALL_NINE, "all_nine.xml")
    rng = np.random.default_rng(2)
    q = torch.tensor(gm.neutral() + 0.2 * rng.normal(size=gm.nq), requires_grad=True)
    v = torch.tensor(rng.normal(size=gm.nv), requires_grad=True)
    tau = torch.tensor(rng.normal(size=gm.nv), requires_grad=True)
    w = rng.normal(size=gm.nsensordata)
    w[gm.sensor_slices["hand_touch"]] = 0
    r = gt.sensors(gm, q, v, tau=tau, dt=1e-3)
    np.testing.assert_array_equal(r.detach().numpy(), gradyn.sensors(gm, q.detach().numpy(), v.detach().numpy(),
                                                                      tau=tau.detach().numpy(), dt=1e-3))
    (r @ torch.tensor(w)).backward()
    want = gradyn.sensors_vjp(gm, q.detach().numpy(), v.detach().numpy(), w, tau=tau.detach().numpy(), dt=1e-3)
    for t, x in zip((q, v, tau), want):
        np.testing.assert_allclose(t.grad.numpy(), x, rtol=1e-12, atol=1e-12)
    # a batch of two worlds sharing tau
    rb = gt.sensors(gm, torch.stack([q.detach(), q.detach()]), torch.stack([v.detach(), v.detach()]), tau=tau, dt=1e-3)
    assert rb.shape == (2, gm.nsensordata)
