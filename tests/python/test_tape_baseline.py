"""The PyTorch tape baseline of the gradient benchmarks (bench/tape_baseline) computes what
gradyn computes: the same states, step by step, on laikago in free flight; and the read-only
Model properties it is built from (python/src/bind_model_data.cpp). Its batched hybrid model
(bench/tape_baseline/hybrid.py: actuators, joint_force and body_wrench networks), the tape of
bench/hybrid_gradient_cost.py, gives gradyn's states on the hybrid swimmer and, w.r.t. the
networks' weights, rollout_vjp's gradient."""

import os
import sys

import numpy as np
import pytest

import gradyn

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "tape_baseline"))
from scenario import DT, controls, initial_state, load_laikago  # noqa: E402
from torch_sim import TorchModel  # noqa: E402
from hybrid import TorchHybrid  # noqa: E402

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def laikago():
    return load_laikago()


def test_model_data_properties_describe_the_model(laikago):
    m = laikago
    nb = m.nbodies
    assert m.joint_types == ["free"] + ["continuous"] * 12
    assert np.asarray(m.joint_placements).shape == (nb, 4, 4)
    assert np.asarray(m.joint_axes).shape == (nb, 3)
    assert np.asarray(m.body_coms).shape == (nb, 3)
    assert np.asarray(m.body_inertias).shape == (nb, 3, 3)
    assert m.body_masses.sum() == pytest.approx(gradyn.total_mass(m), rel=1e-14)
    assert m.idx_q == [m.joint_idx_q(n) for n in m.joint_names]
    assert m.idx_v == [m.joint_idx_v(n) for n in m.joint_names]
    # Composing the placements and joint rotations gives gradyn's own body poses.
    q = m.neutral()
    q[7:] = np.linspace(-1.0, 1.0, 12)
    poses = gradyn.forward_kinematics(m, q)["body_poses"]
    T = np.asarray(m.joint_placements)
    world = []
    for i, parent in enumerate(m.parents):
        joint = np.eye(4)
        if m.joint_types[i] == "continuous":
            a, th = m.joint_axes[i], q[m.idx_q[i]]
            K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            joint[:3, :3] = np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K
        local = T[i] @ joint
        world.append(local if parent < 0 else world[parent] @ local)
    np.testing.assert_allclose(np.asarray(poses), np.asarray(world), atol=1e-14)


@pytest.mark.parametrize("steps", [1, 300])
def test_tape_rollout_reproduces_gradyn_states(laikago, steps):
    q0, v0 = initial_state(laikago)
    taus = controls(laikago, steps)
    qs, vs = gradyn.rollout(laikago, q0, v0, taus, DT)
    tm = TorchModel(laikago)
    with torch.no_grad():
        tq, tv = tm.rollout(torch.tensor(q0), torch.tensor(v0), torch.tensor(taus), DT)
    assert np.abs(torch.stack(tq).numpy() - qs).max() <= 1e-9
    assert np.abs(torch.stack(tv).numpy() - vs).max() <= 1e-9
    assert np.abs(vs[-1] - vs[0]).max() > 1e-3  # the robot really moves


def test_tape_matches_gradyn_with_springs_and_armature(laikago):
    """Stiffness, rest positions and armature enter the tape as in gradyn."""
    n_legs = laikago.nv - 6
    m = laikago.with_stiffness(np.r_[np.zeros(6), np.full(n_legs, 3.0)]).with_armature(
        np.r_[np.full(6, 0.01), np.full(n_legs, 0.02)])
    q0, v0 = initial_state(m)
    taus = controls(m, 100)
    qs, vs = gradyn.rollout(m, q0, v0, taus, DT)
    with torch.no_grad():
        tq, tv = TorchModel(m).rollout(torch.tensor(q0), torch.tensor(v0), torch.tensor(taus), DT)
    assert np.abs(torch.stack(tq).numpy() - qs).max() <= 1e-9
    assert np.abs(torch.stack(tv).numpy() - vs).max() <= 1e-9


def test_tape_gradient_matches_gradyn_adjoint(laikago):
    """The two sides of the gradient benchmark compute the same gradient."""
    if not hasattr(gradyn, "rollout_vjp"):
        pytest.fail("gradyn.rollout_vjp is not bound: the gradient benchmark cannot run")
    steps = 50
    q0, v0 = initial_state(laikago)
    taus = controls(laikago, steps)
    qs, vs = gradyn.rollout(laikago, q0, v0, taus, DT)
    qs_bar, vs_bar = 2 * qs, 2 * vs  # loss: sum of squares of every state
    qs_bar[0] = 0
    vs_bar[0] = 0
    q0_bar, v0_bar, taus_bar, _ = gradyn.rollout_vjp(laikago, q0, v0, taus, DT, qs_bar, vs_bar)

    tm = TorchModel(laikago)
    tq0, tv0, ttaus = (torch.tensor(x, requires_grad=True) for x in (q0, v0, taus))
    tq, tv = tm.rollout(tq0, tv0, ttaus, DT)
    loss = sum((q * q).sum() + (v * v).sum() for q, v in zip(tq[1:], tv[1:]))
    loss.backward()
    for ours, theirs in ((taus_bar, ttaus.grad), (q0_bar, tq0.grad), (v0_bar, tv0.grad)):
        theirs = theirs.numpy()
        assert np.abs(ours - theirs).max() <= 1e-8 * max(1.0, np.abs(theirs).max())


# --- the hybrid swimmer (bench/hybrid_gradient_cost.py's PyTorch tape) ---------------------------

SWIMMER = os.path.join(os.path.dirname(__file__), "..", "..", "models", "mujoco", "swimmer.xml")
LINKS = ("torso", "mid", "back")


def hybrid_swimmer():
    """The swimmer's motors plus networks reading every kind of input the tape supports, with random
    weights and biases: a drag network per link as in examples/hybrid/swimmer.py (two hidden layers),
    one wrench in the world's axes, one with other activations, and a joint_force network."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its fluid, which gradyn does not simulate
        m = gradyn.load(SWIMMER)
    for k, link in enumerate(LINKS):
        m = m.with_network(f"drag_{link}", site="body_wrench", body=link, hidden=[6, 5], seed=k,
                           inputs=["vel.ang.z", "vel.lin.x", "vel.lin.y"],
                           outputs=["torque.z", "force.x", "force.y"], zero_last_layer=False)
    m = m.with_network("pose_mid", site="body_wrench", body="mid", frame="world", hidden=[4], seed=7,
                       inputs=["pos.x", "pos.y", "rot[0,0]", "rot[0,1]", "vel.ang.z", "rot2.q", "rot3.ctrl"],
                       outputs=["torque.z", "force.x", "force.y", "torque.x"], activation="softplus",
                       output_activation="tanh", zero_last_layer=False)
    m = m.with_network("residual", site="joint_force", hidden=[3], seed=8, activation="elu",
                       inputs=["rot.q", "rot2.v", "rot2.ctrl"], outputs=["rot2", "slider1"], zero_last_layer=False)
    first = m.networks[0]["param_offset"]
    p = m.params.copy()
    p[first:] += 0.3 * np.random.default_rng(1).normal(size=len(p) - first)  # biases too
    return m.with_params(p), first


@pytest.fixture(scope="module")
def swimmer():
    m, first = hybrid_swimmer()
    th = TorchHybrid(m)
    rng = np.random.default_rng(2)
    B, T = 3, 50
    q0 = 0.3 * rng.normal(size=(B, m.nq))
    v0 = 0.5 * rng.normal(size=(B, m.nv))
    ctrls = rng.uniform(-1.3, 1.3, size=(B, T, m.nu))  # beyond the ctrlrange too: the clamp
    return m, first, th, q0, v0, ctrls


def test_torch_hybrid_swimmer_reproduces_gradyn_states(swimmer):
    m, first, th, q0, v0, ctrls = swimmer
    qs, vs = gradyn.rollout(m, q0, v0, None, 0.01, ctrls=ctrls)
    with torch.no_grad():
        tq, tv = th.rollout(torch.tensor(q0), torch.tensor(v0), torch.tensor(ctrls), 0.01, torch.tensor(m.params))
    assert tq.shape == qs.shape and tv.shape == vs.shape
    assert np.abs(tq.numpy() - qs).max() <= 1e-10
    assert np.abs(tv.numpy() - vs).max() <= 1e-10
    # The networks and the motors matter: without them the swimmer moves otherwise.
    with pytest.warns(UserWarning):
        bare = gradyn.load(SWIMMER)
    bare_vs = gradyn.rollout(bare, q0, v0, None, 0.01, ctrls=np.zeros_like(ctrls))[1]
    assert np.abs(bare_vs - vs).max() > 0.1
    p = m.params.copy()
    p[first:] = 0
    net_free_vs = gradyn.rollout(m.with_params(p), q0, v0, None, 0.01, ctrls=ctrls)[1]
    assert np.abs(net_free_vs - vs).max() > 0.1


def test_torch_hybrid_tape_gradient_matches_rollout_vjp(swimmer):
    """The tape's gradient w.r.t. the networks' weights is gradyn's adjoint's (params_bar)."""
    m, first, th, q0, v0, ctrls = swimmer
    qs, vs = gradyn.rollout(m, q0, v0, None, 0.01, ctrls=ctrls)
    target_q, target_v = qs[:, ::-1] + 0.1, vs[:, ::-1] - 0.1
    params_bar = gradyn.rollout_vjp(m, q0, v0, None, 0.01, 2 * (qs - target_q), 2 * (vs - target_v),
                                    ctrls=ctrls)[3].sum(axis=0)
    p = torch.tensor(m.params, requires_grad=True)
    tq, tv = th.rollout(torch.tensor(q0), torch.tensor(v0), torch.tensor(ctrls), 0.01, p)
    loss = ((tq - torch.tensor(target_q)) ** 2).sum() + ((tv - torch.tensor(target_v)) ** 2).sum()
    loss.backward()
    ours, theirs = params_bar[first:], p.grad.numpy()[first:]
    assert np.abs(theirs).max() > 1.0
    assert np.abs(ours - theirs).max() <= 1e-8 * np.abs(ours).max()
    assert not p.grad.numpy()[:first].any()  # the rest of the model is constant on the tape
