"""The PyTorch tape baseline of the gradient benchmarks (bench/tape_baseline) computes what
gradyn computes: the same states, step by step, on laikago in free flight; and the read-only
Model properties it is built from (python/src/bind_model_data.cpp)."""

import os
import sys

import numpy as np
import pytest

import gradyn

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench", "tape_baseline"))
from scenario import DT, controls, initial_state, load_laikago  # noqa: E402
from torch_sim import TorchModel  # noqa: E402

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
