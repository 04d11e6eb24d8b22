"""Policies inside the rollout (gradyn.Policy): the closed loop's adjoint against central differences
(weights, initial state, task, model parameters; with and without contact), gradient decay against a
reference written here from step_vjp, batches against single worlds, and bad input."""

import pathlib
import sys

import numpy as np
import pytest

import gradyn
from bridge_models import build_cart_pole

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cart_pole():
    return build_cart_pole()


def laikago_with_servos(contact="penalty"):
    sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
    import laikago_scene as scene

    xml = scene.mujoco_xml(timestep=1e-3, position_servos=(scene.KP, scene.KD))
    path = ROOT / "build" / "test_policy_laikago.xml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(xml)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gradyn.load(str(path)).with_contact(contact, **(scene.PENALTY_SETTINGS if contact == "penalty" else {}))
    return model, scene.stance(model, clearance=0.0)


def loss_adjoints(qs, vs, ctrls, rng_seed=0):
    """A fixed random linear loss of the whole trajectory: its value and adjoints."""
    rng = np.random.default_rng(rng_seed)
    a, b, c = rng.normal(size=qs.shape), rng.normal(size=vs.shape), rng.normal(size=ctrls.shape)
    return (lambda qs, vs, us: float(np.sum(a * qs) + np.sum(b * vs) + np.sum(c * us))), a, b, c


def central(f, x, direction, h):
    return (f(x + h * direction) - f(x - h * direction)) / (2 * h)


def check_gradients(model, policy, q0, v0, task, steps, dt, h=1e-6, rtol=1e-5, params_checked=("q0", "v0", "weights", "task")):
    w = policy.weights
    qs, vs, us, status = policy.rollout(q0, v0, steps, dt, task=task)
    assert not status.any()
    loss, a, b, c = loss_adjoints(qs, vs, us)
    grads = policy.rollout_vjp(qs, vs, a, b, dt, task=task, ctrls_bar=c)
    rng = np.random.default_rng(1)

    def value(q0=q0, v0=v0, weights=w, task=task, model_params=None):
        p = policy if model_params is None else gradyn.Policy(model.with_params(model_params), policy.observations,
                                                              policy.hidden, policy.activation, memory=policy.memory)
        out = p.rollout(q0, v0, steps, dt, weights=weights, task=task)
        return loss(*out[:3])

    inputs = {"q0": q0, "v0": v0, "weights": w, "task": task}
    for name in params_checked:
        x = np.asarray(inputs[name], dtype=float)
        d = rng.normal(size=x.shape)
        fd = central(lambda y: value(**{name: y}), x, d, h)
        analytic = float(grads[name] @ d)
        assert analytic == pytest.approx(fd, rel=rtol, abs=1e-8), name
    return grads, value


def test_closed_loop_gradients_match_central_differences_on_a_cart_pole():
    model = cart_pole()
    policy = gradyn.Policy(model, ["slider.q", "hinge.q", "slider.v", "hinge.v", "clock.sin(0.7)", "task[0]"],
                           hidden=[16, 16], seed=3, zero_last_layer=False)
    grads, value = check_gradients(model, policy, np.array([0.1, 0.2]), np.array([0.0, -0.3]), np.array([0.4]),
                                   steps=200, dt=0.01)
    # Model parameters too: the pole's mass and the slider's damping.
    p = model.params
    for name in ("pole.mass", "slider.damping", "slider.gear"):
        i = model.param_names.index(name)
        e = np.zeros_like(p)
        e[i] = 1.0
        fd = central(lambda x: value(model_params=x), p, e, 1e-6)
        assert grads["params"][i] == pytest.approx(fd, rel=1e-5), name


def test_recurrent_policy_gradients_match_central_differences():
    """A policy with memory (paper 002, Eq. 3): two outputs fed back as inputs at the next step."""
    model = cart_pole()
    policy = gradyn.Policy(model, ["hinge.q", "hinge.v", "memory[0]", "memory[1]", "task[0]"], hidden=[12],
                           memory=2, seed=5, zero_last_layer=False)
    assert policy.widths == [5, 12, 3] and "2 memory" in repr(policy)
    check_gradients(model, policy, np.array([0.1, 0.2]), np.array([0.0, -0.3]), np.array([0.4]), steps=150, dt=0.01)
    # The memory matters: the same weights read as a feed-forward policy (memory pinned at 0) differ.
    qs = policy.rollout([0.1, 0.2], [0.0, -0.3], 150, 0.01, task=[0.4])[0]
    pinned = gradyn.Policy(model, ["hinge.q", "hinge.v", "task[0]", "task[1]", "task[2]"], hidden=[12], memory=2)
    assert pinned.param_count == policy.param_count
    qs_pinned = pinned.rollout([0.1, 0.2], [0.0, -0.3], 150, 0.01, weights=policy.weights, task=[0.0, 0.0, 0.4])[0]
    assert np.abs(qs - qs_pinned).max() > 1e-3


def test_closed_loop_gradients_through_penalty_contact_on_laikago():
    model, stance = laikago_with_servos("penalty")
    joints = [n for n in gradyn.policy_observations(model) if n.endswith(".q")]
    policy = gradyn.Policy(model, joints + ["clock.sin(2.0)", "clock.cos(2.0)"], hidden=[32], seed=1,
                           zero_last_layer=False)
    policy.weights = 0.05 * policy.weights  # controls near 0: servo targets of a few hundredths of a radian
    q0 = stance.copy()
    q0[2] += 0.002
    check_gradients(model, policy, q0, np.zeros(model.nv), None, steps=100, dt=1e-3, rtol=1e-4,
                    params_checked=("v0", "weights"))


def test_recurrent_policy_gradients_through_penalty_contact_on_laikago():
    """Memory and contact together: the memory's adjoint crosses steps whose feet touch the ground."""
    model, stance = laikago_with_servos("penalty")
    joints = [n for n in gradyn.policy_observations(model) if n.endswith(".q")]
    policy = gradyn.Policy(model, joints + ["clock.sin(2.0)", "task[0]", "memory[0]", "memory[1]"], hidden=[24],
                           memory=2, seed=4, zero_last_layer=False)
    policy.weights = 0.05 * policy.weights
    q0 = stance.copy()
    q0[2] += 0.002
    task = np.array([0.3])
    qs, _, _, status = policy.rollout(q0, np.zeros(model.nv), 100, 1e-3, task=task)
    assert not status.any()
    depths = np.array([scene_toe_depths(model, q) for q in qs])
    assert (depths > 0).any(), "the feet must touch the ground during the check"
    grads, value = check_gradients(model, policy, q0, np.zeros(model.nv), task, steps=100, dt=1e-3, rtol=1e-4,
                                   params_checked=("v0", "weights", "task"))
    # model parameters through the contact: a leg's mass, the contact stiffness and damping (not a toe's
    # friction: it ties with the ground's, and a pair takes the larger, a kink at the tie)
    p = model.params
    for name in ("FR_lower_leg.mass", "contact.stiffness", "contact.damping"):
        i = model.param_names.index(name)
        e = np.zeros_like(p)
        e[i] = max(1.0, abs(p[i])) * 1e-6
        fd = (value(model_params=p + e) - value(model_params=p - e)) / (2 * e[i])
        assert grads["params"][i] == pytest.approx(fd, rel=1e-4, abs=1e-8), name


def scene_toe_depths(model, q):
    sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
    import laikago_scene as scene

    return scene.toe_depths(model, q)


@pytest.mark.parametrize("decay, clip_norm", [(0.9, 0.0), (0.9, 2.5), (1.0, 2.5)])
def test_decay_and_clipping_match_a_reference_written_from_step_vjp(decay, clip_norm):
    model = cart_pole()
    policy = gradyn.Policy(model, ["slider.q", "hinge.q", "hinge.v", "task[0]"], hidden=[8], seed=2,
                           zero_last_layer=False)
    dt, steps = 0.01, 60
    q0, v0, task = np.array([0.0, 0.3]), np.array([0.1, 0.0]), np.array([0.5])
    qs, vs, us, _ = policy.rollout(q0, v0, steps, dt, task=task)
    _, a, b, _ = loss_adjoints(qs, vs, us)
    grads = policy.rollout_vjp(qs, vs, a, b, dt, task=task, decay=decay, clip_norm=clip_norm)
    clipped = 0

    # The reference: the tanh network by hand (gradyn's flat layout: W row-major, then b, per layer).
    W1 = policy.weights[:32].reshape(8, 4)
    b1 = policy.weights[32:40]
    W2 = policy.weights[40:48].reshape(1, 8)
    b2 = policy.weights[48:49]
    assert policy.param_count == 49
    w_bar = np.zeros(49)
    task_bar = np.zeros(1)
    lam_q, lam_v = a[steps].copy(), b[steps].copy()
    for t in range(steps - 1, -1, -1):
        obs = np.array([qs[t, 0], qs[t, 1], vs[t, 1], task[0]])
        hidden = np.tanh(W1 @ obs + b1)
        ctrl = W2 @ hidden + b2
        q_bar, v_bar, ctrl_bar = _step_vjp(model, qs[t], vs[t], ctrl, dt, lam_q, lam_v)
        w_bar[40:48] += ctrl_bar[0] * hidden
        w_bar[48] += ctrl_bar[0]
        z_bar = (W2.T @ ctrl_bar) * (1 - hidden**2)
        w_bar[:32] += np.outer(z_bar, obs).ravel()
        w_bar[32:40] += z_bar
        obs_bar = W1.T @ z_bar
        q_bar[0] += obs_bar[0]
        q_bar[1] += obs_bar[1]
        v_bar[1] += obs_bar[2]
        task_bar[0] += obs_bar[3]
        lam_q, lam_v = decay * q_bar + a[t], decay * v_bar + b[t]
        norm = np.sqrt(lam_q @ lam_q + lam_v @ lam_v)
        if clip_norm > 0 and norm > clip_norm:
            lam_q, lam_v = lam_q * clip_norm / norm, lam_v * clip_norm / norm
            clipped += 1
    assert clip_norm == 0 or 0 < clipped < steps, clipped  # the clip must act on some steps, not all
    np.testing.assert_allclose(grads["weights"], w_bar, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["task"], task_bar, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["q0"], lam_q, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["v0"], lam_v, rtol=1e-10, atol=1e-12)
    # decay < 1 or clipping is not the exact gradient
    exact = policy.rollout_vjp(qs, vs, a, b, dt, task=task)
    assert np.abs(exact["weights"] - grads["weights"]).max() > 1e-3


def _step_vjp(model, q, v, ctrl, dt, q_next_bar, v_next_bar):
    q_bar, v_bar, _, _, ctrl_bar = gradyn.step_vjp(model, q, v, None, dt, q_next_bar, v_next_bar, ctrl=ctrl)
    return q_bar, v_bar, ctrl_bar


def test_batches_equal_single_worlds_and_shared_adjoints_sum():
    model = cart_pole()
    policy = gradyn.Policy(model, ["slider.q", "hinge.q", "task[0]", "task[1]"], hidden=[8], seed=4,
                           zero_last_layer=False)
    rng = np.random.default_rng(0)
    B, steps, dt = 5, 40, 0.01
    q0, v0, task = rng.normal(size=(B, 2)) * 0.2, rng.normal(size=(B, 2)) * 0.2, rng.normal(size=(B, 2))
    weights = policy.weights + 0.01 * rng.normal(size=(B, policy.param_count))
    qs, vs, us, status = policy.rollout(q0, v0, steps, dt, weights=weights, task=task, threads=2)
    assert qs.shape == (B, steps + 1, 2) and us.shape == (B, steps, 1) and status.shape == (B, steps)
    qs_bar, vs_bar = rng.normal(size=qs.shape), rng.normal(size=vs.shape)
    grads = policy.rollout_vjp(qs, vs, qs_bar, vs_bar, dt, weights=weights, task=task, threads=2)
    for b in range(B):
        one = policy.rollout(q0[b], v0[b], steps, dt, weights=weights[b], task=task[b])
        assert np.array_equal(one[0], qs[b]) and np.array_equal(one[2], us[b])
        g = policy.rollout_vjp(one[0], one[1], qs_bar[b], vs_bar[b], dt, weights=weights[b], task=task[b])
        assert np.array_equal(g["weights"], grads["weights"][b]) and np.array_equal(g["task"], grads["task"][b])
    shared = policy.rollout_vjp(qs[:, :, :], vs, qs_bar, vs_bar, dt, weights=weights, task=task, reduce="none")
    np.testing.assert_allclose(shared["params"].sum(axis=0), grads["params"], rtol=1e-12)


def test_a_diverging_world_is_flagged_and_leaves_the_others_alone():
    model = cart_pole()
    policy = gradyn.Policy(model, ["slider.v"], hidden=[4], seed=0, zero_last_layer=False)
    weights = np.tile(policy.weights, (3, 1))
    weights[1] *= 1e200  # this world's controls overflow
    q0, v0 = np.zeros((3, 2)), np.array([[0.1, 0.0], [0.1, 0.0], [0.2, 0.0]])
    qs, vs, us, status = policy.rollout(q0, v0, 20, 0.01, weights=weights)
    assert (status[1] & gradyn.Status.NON_FINITE).any() and not status[[0, 2]].any()
    grads = policy.rollout_vjp(qs, vs, np.ones_like(qs), np.ones_like(vs), 0.01, weights=weights)
    assert list(grads["diverged"]) == [False, True, False]
    assert np.all(grads["weights"][1] == 0) and np.all(grads["q0"][1] == 0)
    assert np.all(np.isfinite(grads["weights"])) and np.all(np.isfinite(grads["params"]))
    alone = policy.rollout_vjp(qs[[0, 2]], vs[[0, 2]], np.ones_like(qs[[0, 2]]), np.ones_like(vs[[0, 2]]), 0.01,
                               weights=weights[[0, 2]])
    np.testing.assert_allclose(grads["params"], alone["params"], rtol=1e-12)


def test_bad_input_names_what_was_expected():
    model = cart_pole()
    with pytest.raises(ValueError, match=r"unknown observation 'hinge\.angle'; valid: 'slider\.q', 'hinge\.q'"):
        gradyn.Policy(model, ["hinge.angle"])
    with pytest.raises(ValueError, match=r"unknown observation 'clock\.sin\(fast\)'"):
        gradyn.Policy(model, ["clock.sin(fast)"])
    policy = gradyn.Policy(model, ["hinge.q", "task[2]"], hidden=[4])
    with pytest.raises(ValueError, match=r"weights: expected shape \(17,\), got \(5,\)"):
        policy.rollout([0, 0], [0, 0], 10, 0.01, weights=np.zeros(5), task=np.zeros(3))
    with pytest.raises(ValueError, match=r"task: the policy reads task\[2\], so it needs at least 3 entries"):
        policy.rollout([0, 0], [0, 0], 10, 0.01, task=np.zeros(2))
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("arm", mass=1.0, com=(0, 0, -0.5), inertia=(1e-3, 1e-3, 1e-3, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="arm", axis=(0, 1, 0))
    with pytest.raises(ValueError, match=r"'memory\[2\]' reads past the policy's memory of 2 entries"):
        gradyn.Policy(model, ["memory[2]"], memory=2)
    with pytest.raises(ValueError, match="this model has none"):
        gradyn.Policy(b.build(), ["hinge.q"])
    with pytest.raises(ValueError, match=r"decay: expected a number in \[0, 1\]"):
        qs, vs, _, _ = policy.rollout([0, 0], [0, 0], 5, 0.01, task=np.zeros(3))
        policy.rollout_vjp(qs, vs, np.zeros_like(qs), np.zeros_like(vs), 0.01, task=np.zeros(3), decay=1.5)


SENSOR_ARM_XML = """
<mujoco>
  <option timestep="0.01"/>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05" mass="2"/>
      <site name="imu" pos="0.05 0 0.02"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" mass="0.5"/>
        <body name="fore" pos="0.3 0 0">
          <joint name="elbow" type="hinge" axis="0 0 1"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.02" mass="0.3"/>
          <site name="tip" pos="0.25 0 0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder"/>
    <motor joint="elbow"/>
  </actuator>
  <sensor>
    <framepos name="tip_pos" objtype="site" objname="tip"/>
    <framequat name="torso_quat" objtype="xbody" objname="torso"/>
    <framelinvel name="tip_vel" objtype="site" objname="tip" reftype="xbody" refname="torso"/>
    <frameangvel name="fore_w" objtype="xbody" objname="fore"/>
    <gyro name="gyro" site="imu"/>
    <jointpos name="elbow_q" joint="elbow"/>
    <accelerometer name="acc" site="imu"/>
  </sensor>
</mujoco>
"""

SENSOR_OBSERVATIONS = ["sensor.tip_pos[0]", "sensor.tip_pos[2]", "sensor.torso_quat[1]", "sensor.tip_vel[1]",
                       "sensor.fore_w[2]", "sensor.gyro[0]", "sensor.elbow_q", "clock.sin(1)"]


def sensor_arm(tmp_path):
    path = tmp_path / "sensor_arm.xml"
    path.write_text(SENSOR_ARM_XML)
    model = gradyn.load(str(path))
    q0 = np.concatenate([[0.0, 0.0, 1.0], [np.cos(0.2), 0.0, np.sin(0.2), 0.0], [0.3, -0.4]])
    v0 = np.array([0.1, -0.2, 0.3, 0.4, 0.1, -0.3, 0.5, -0.6])
    return model, q0, v0


def test_sensor_observations_are_the_sensors_readings(tmp_path):
    """A linear policy's controls are its weights times gradyn.sensors' readings at every step."""
    model, q0, v0 = sensor_arm(tmp_path)
    policy = gradyn.Policy(model, SENSOR_OBSERVATIONS, hidden=[5], activation="identity", seed=2,
                           zero_last_layer=False)
    qs, vs, ctrls, status = policy.rollout(q0, v0, 30, 0.01)
    assert not status.any()
    n = len(SENSOR_OBSERVATIONS)
    w = policy.weights
    W1, b1 = w[:5 * n].reshape(5, n), w[5 * n:5 * n + 5]
    W2, b2 = w[5 * n + 5:5 * n + 5 + 10].reshape(2, 5), w[-2:]
    entry = {}
    for name, s in model.sensor_slices.items():
        for k in range(s.stop - s.start):
            entry[f"sensor.{name}[{k}]"] = s.start + k
        entry[f"sensor.{name}"] = s.start
    for t in (0, 7, 29):
        readings = gradyn.sensors(model, qs[t], vs[t], np.zeros(model.nv), 0.01)
        obs = np.array([readings[entry[o]] for o in SENSOR_OBSERVATIONS[:-1]] + [np.sin(2 * np.pi * t * 0.01)])
        np.testing.assert_allclose(ctrls[t], W2 @ (W1 @ obs + b1) + b2, rtol=1e-10, atol=1e-12)


def test_sensor_observation_gradients_match_central_differences(tmp_path):
    model, q0, v0 = sensor_arm(tmp_path)
    policy = gradyn.Policy(model, SENSOR_OBSERVATIONS, hidden=[8], seed=1, zero_last_layer=False)
    check_gradients(model, policy, q0, v0, None, steps=40, dt=0.01, params_checked=("v0", "weights"))
    # q0 along the position and joint entries (the quaternion's ambient directions leave the sphere)
    qs, vs, us, _ = policy.rollout(q0, v0, 40, 0.01)
    loss, a, b, c = loss_adjoints(qs, vs, us)
    grads = policy.rollout_vjp(qs, vs, a, b, 0.01, ctrls_bar=c)
    d = np.zeros(model.nq)
    d[[0, 1, 2, 7, 8]] = np.random.default_rng(4).normal(size=5)
    fd = central(lambda y: loss(*policy.rollout(y, v0, 40, 0.01)[:3]), q0, d, 1e-6)
    assert float(grads["q0"] @ d) == pytest.approx(fd, rel=1e-5)


def test_sensor_observation_names_and_errors(tmp_path):
    model, _, _ = sensor_arm(tmp_path)
    names = gradyn.policy_observations(model)
    assert {"sensor.tip_pos[0]", "sensor.torso_quat[3]", "sensor.gyro[2]", "sensor.elbow_q"} <= set(names)
    assert {"sensor.acc[0]", "sensor.acc[2]"} <= set(names)
    with pytest.raises(ValueError, match=r"clip_norm: expected a finite number >= 0"):
        model_q = gradyn.Policy(model, ["sensor.gyro[0]"])
        qs, vs, _, _ = model_q.rollout(np.r_[0, 0, 1, 1, 0, 0, 0, 0, 0], np.zeros(model.nv), 3, 0.01)
        model_q.rollout_vjp(qs, vs, np.zeros_like(qs), np.zeros_like(vs), 0.01, clip_norm=-1.0)
    with pytest.raises(ValueError, match="has 3 entries; name one"):
        gradyn.Policy(model, ["sensor.tip_pos"])
    with pytest.raises(ValueError, match=r"has 4 entries \(0 to 3\)"):
        gradyn.Policy(model, ["sensor.torso_quat[4]"])
    with pytest.raises(ValueError, match="unknown observation 'sensor.nope'.*sensor.gyro"):
        gradyn.Policy(model, ["sensor.nope"])


def test_accelerometer_observations_read_the_last_step(tmp_path):
    """An IMU's acceleration is the last step's reading (zero at t = 0), as gradyn.sensors gives it
    for that step; a linear policy's controls are its weights times it."""
    model, q0, v0 = sensor_arm(tmp_path)
    observations = ["sensor.acc[0]", "sensor.acc[1]", "sensor.acc[2]", "sensor.gyro[1]"]
    policy = gradyn.Policy(model, observations, hidden=[3], activation="identity", seed=6, zero_last_layer=False)
    policy.weights = 0.1 * policy.weights
    qs, vs, ctrls, status = policy.rollout(q0, v0, 25, 0.01)
    assert not status.any()
    w = policy.weights
    W1, b1 = w[:12].reshape(3, 4), w[12:15]
    W2, b2 = w[15:21].reshape(2, 3), w[21:]
    acc, gyro = model.sensor_slices["acc"], model.sensor_slices["gyro"]
    for t in (0, 1, 12, 24):
        previous = (np.zeros(model.nsensordata) if t == 0 else
                    gradyn.sensors(model, qs[t - 1], vs[t - 1], np.zeros(model.nv), 0.01, ctrl=ctrls[t - 1]))
        now = gradyn.sensors(model, qs[t], vs[t], np.zeros(model.nv), 0.01, ctrl=ctrls[t])
        obs = np.concatenate([previous[acc], now[gyro][1:2]])
        np.testing.assert_allclose(ctrls[t], W2 @ (W1 @ obs + b1) + b2, rtol=1e-9, atol=1e-12)
    assert np.abs(gradyn.sensors(model, qs[5], vs[5], np.zeros(model.nv), 0.01, ctrl=ctrls[5])[acc]).max() > 1e-3  # (free fall: the
    # proper acceleration is what the arm's swinging makes)


def test_accelerometer_observation_gradients_match_central_differences(tmp_path):
    model, q0, v0 = sensor_arm(tmp_path)
    policy = gradyn.Policy(model, ["sensor.acc[0]", "sensor.acc[2]", "sensor.gyro[2]", "elbow.q", "clock.cos(1)"],
                           hidden=[8], seed=2, zero_last_layer=False)
    policy.weights = 0.3 * policy.weights
    check_gradients(model, policy, q0, v0, None, steps=40, dt=0.01, params_checked=("v0", "weights"))
    for decay in (1.0, 0.5):  # decay < 1 still runs (the readings' adjoint decays with the state's)
        qs, vs, us, _ = policy.rollout(q0, v0, 40, 0.01)
        grads = policy.rollout_vjp(qs, vs, np.ones_like(qs), np.ones_like(vs), 0.01, decay=decay)
        assert np.isfinite(grads["weights"]).all()


TOUCH_XML = """
<mujoco>
  <worldbody>
    <geom type="plane" size="5 5 0.1"/>
    <body name="leg" pos="0 0 0.3">
      <joint name="slide" type="slide" axis="0 0 1"/>
      <geom type="sphere" size="0.05" mass="1"/>
      <site name="foot" pos="0 0 -0.05" size="0.03"/>
    </body>
  </worldbody>
  <actuator><motor joint="slide"/></actuator>
  <sensor><touch name="contact" site="foot"/></sensor>
</mujoco>
"""


@pytest.mark.parametrize("contact", ["penalty", "pgs"])
def test_touch_observation_is_the_last_steps_contact_force(tmp_path, contact):
    path = tmp_path / "touch.xml"
    path.write_text(TOUCH_XML)
    model = gradyn.load(str(path)).with_contact(model=contact)
    policy = gradyn.Policy(model, ["sensor.contact", "slide.v"], hidden=[2], activation="identity", seed=1,
                           zero_last_layer=False)
    policy.weights = 0.01 * policy.weights
    dt = 0.002
    qs, vs, ctrls, _ = policy.rollout(np.array([0.0]), np.array([0.0]), 300, dt)
    w = policy.weights
    W1, b1, W2, b2 = w[:4].reshape(2, 2), w[4:6], w[6:8].reshape(1, 2), w[8:]
    touched = 0
    for t in range(1, 300):
        reading = gradyn.sensors(model, qs[t - 1], vs[t - 1], np.zeros(1), dt, ctrl=ctrls[t - 1])[0]
        touched += reading > 0
        obs = np.array([reading, vs[t, 0]])
        np.testing.assert_allclose(ctrls[t], W2 @ (W1 @ obs + b1) + b2, rtol=1e-6, atol=1e-9)
    assert touched > 50, "the sphere must land and rest on the plane"
    # the touch reading carries no gradient; the velocity's still does
    grads = policy.rollout_vjp(qs, vs, np.ones_like(qs), np.zeros_like(vs), dt)
    assert np.isfinite(grads["weights"]).all() and np.abs(grads["weights"]).max() > 0


@pytest.mark.parametrize("decay, clip_norm", [(1.0, 0.0), (0.9, 0.5)])
def test_open_loop_policy_runs_its_network_once_with_the_same_gradients(decay, clip_norm):
    """A policy reading task entries alone (open loop) evaluates its network once per rollout and once
    in the adjoint; the same network with a dead extra input (clock.sin(0) reads 0 at every step) runs
    it at every step. Same controls, same trajectory, same gradients."""
    model = cart_pole()
    open_loop = gradyn.Policy(model, ["task[0]", "task[1]"], hidden=[7], seed=4, zero_last_layer=False)
    per_step = gradyn.Policy(model, ["task[0]", "task[1]", "clock.sin(0)"], hidden=[7], seed=4,
                             zero_last_layer=False)
    w = open_loop.weights
    W1, rest = w[:14].reshape(7, 2), w[14:]
    w_step = np.concatenate([np.hstack([W1, np.zeros((7, 1))]).ravel(), rest])
    task = np.array([[0.3, -0.2], [0.1, 0.4]])
    q0, v0 = np.array([[0.0, 0.2], [0.1, -0.1]]), np.zeros((2, 2))
    a = open_loop.rollout(q0, v0, 80, 0.01, task=task)
    b = per_step.rollout(q0, v0, 80, 0.01, weights=w_step, task=task)
    for x, y in zip(a[:3], b[:3]):
        np.testing.assert_array_equal(x, y)
    loss, qs_bar, vs_bar, ctrls_bar = loss_adjoints(*a[:3])
    ga = open_loop.rollout_vjp(a[0], a[1], qs_bar, vs_bar, 0.01, task=task, ctrls_bar=ctrls_bar, decay=decay,
                               clip_norm=clip_norm)
    gb = per_step.rollout_vjp(b[0], b[1], qs_bar, vs_bar, 0.01, weights=w_step, task=task, ctrls_bar=ctrls_bar,
                              decay=decay, clip_norm=clip_norm)
    gb_w = np.concatenate([gb["weights"][:21].reshape(7, 3)[:, :2].ravel(), gb["weights"][21:]])
    np.testing.assert_allclose(ga["weights"], gb_w, rtol=1e-10, atol=1e-13)
    for key in ("task", "q0", "v0", "params"):
        np.testing.assert_allclose(ga[key], gb[key], rtol=1e-10, atol=1e-13)
