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
                                                              policy.hidden, policy.activation)
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


def test_decay_matches_a_reference_written_from_step_vjp():
    model = cart_pole()
    policy = gradyn.Policy(model, ["slider.q", "hinge.q", "hinge.v", "task[0]"], hidden=[8], seed=2,
                           zero_last_layer=False)
    dt, steps, decay = 0.01, 60, 0.9
    q0, v0, task = np.array([0.0, 0.3]), np.array([0.1, 0.0]), np.array([0.5])
    qs, vs, us, _ = policy.rollout(q0, v0, steps, dt, task=task)
    _, a, b, _ = loss_adjoints(qs, vs, us)
    grads = policy.rollout_vjp(qs, vs, a, b, dt, task=task, decay=decay)

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
    np.testing.assert_allclose(grads["weights"], w_bar, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["task"], task_bar, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["q0"], lam_q, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grads["v0"], lam_v, rtol=1e-10, atol=1e-12)
    # decay < 1 is not the exact gradient
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
