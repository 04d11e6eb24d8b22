"""gradyn.torch: step and rollout as torch.autograd.Functions.

Forward values must equal gradyn.step/gradyn.rollout, gradients must equal gradyn.step_vjp and
gradyn.rollout_vjp, and torch.autograd.gradcheck (central differences in float64) must agree on
a pendulum, a floating-base model and through the flat parameter vector. The checks perturb
single raw entries, quaternion components and joint-axis parameters included (off the unit
sphere), with no normalisation in between: the core reads quaternions normalised and with_params
normalises axes, so the adjoints are exact in every direction. Skipped when torch is not installed.
"""

import pathlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradyn  # noqa: E402
import gradyn._bridge  # noqa: E402
import gradyn.torch as gtorch  # noqa: E402
from bridge_models import (DT, axis_starts, build_cart_pole, build_floating, build_pendulum,  # noqa: E402
                           perturbed_params, random_state)

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pendulum():
    return build_pendulum()


@pytest.fixture(scope="module")
def floating():
    return build_floating()


def t64(x, grad=False):
    return torch.tensor(np.asarray(x), dtype=torch.float64, requires_grad=grad)


# --- forward values -------------------------------------------------------------------------


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_step_forward_matches_gradyn(pendulum, floating, integrator):
    rng = np.random.default_rng(0)
    for model in (pendulum, floating):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv)
        q_next, v_next = gtorch.step(model, t64(q), t64(v), t64(tau), DT, integrator=integrator)
        q_ref, v_ref = gradyn.step(model, q, v, tau, DT, integrator)
        assert q_next.dtype == torch.float64 and q_next.shape == (model.nq,)
        np.testing.assert_array_equal(q_next.numpy(), q_ref)
        np.testing.assert_array_equal(v_next.numpy(), v_ref)


def test_rollout_forward_batch_matches_gradyn(floating):
    rng = np.random.default_rng(1)
    batch, horizon = 3, 5
    q0, v0 = random_state(floating, rng, batch)
    taus = rng.normal(size=(batch, horizon, floating.nv))
    qs, vs = gtorch.rollout(floating, t64(q0), t64(v0), t64(taus), DT)
    assert qs.shape == (batch, horizon + 1, floating.nq)
    assert vs.shape == (batch, horizon + 1, floating.nv)
    for b in range(batch):
        qs_ref, vs_ref = gradyn.rollout(floating, q0[b], v0[b], taus[b], DT)
        np.testing.assert_array_equal(qs[b].numpy(), qs_ref)
        np.testing.assert_array_equal(vs[b].numpy(), vs_ref)


def test_params_select_the_model(pendulum):
    rng = np.random.default_rng(2)
    q0, v0 = random_state(pendulum, rng)
    taus = rng.normal(size=(4, pendulum.nv))
    # the model's own parameters give the model's own trajectory
    qs, _ = gtorch.rollout(pendulum, t64(q0), t64(v0), t64(taus), DT, params=t64(pendulum.params))
    np.testing.assert_array_equal(qs.numpy(), gradyn.rollout(pendulum, q0, v0, taus, DT)[0])
    # other parameters give the trajectory of model.with_params(p)
    p = perturbed_params(pendulum, rng)
    qs, vs = gtorch.rollout(pendulum, t64(q0), t64(v0), t64(taus), DT, params=t64(p))
    qs_ref, vs_ref = gradyn.rollout(pendulum.with_params(p), q0, v0, taus, DT)
    np.testing.assert_array_equal(qs.numpy(), qs_ref)
    np.testing.assert_array_equal(vs.numpy(), vs_ref)
    assert not np.allclose(qs_ref, gradyn.rollout(pendulum, q0, v0, taus, DT)[0])
    # an unchanged vector is served from the cache, not rebuilt; the model's own is the model
    cache = gradyn._bridge.MODELS
    assert cache.model_for(pendulum, p.copy()) is cache.model_for(pendulum, p)
    assert cache.model_for(pendulum, np.array(pendulum.params)) is pendulum
    assert cache.model_for(pendulum, None) is pendulum


# --- gradients: gradcheck -------------------------------------------------------------------


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_step_gradcheck_pendulum(pendulum, integrator):
    rng = np.random.default_rng(3)
    q, v = random_state(pendulum, rng)
    inputs = (t64(q, True), t64(v, True), t64(rng.normal(size=pendulum.nv), True))

    def f(q, v, tau):
        return gtorch.step(pendulum, q, v, tau, DT, integrator=integrator)

    assert torch.autograd.gradcheck(f, inputs)


@pytest.mark.parametrize("quaternion_scale", [1.0, 1.4])
def test_step_gradcheck_floating_base(floating, quaternion_scale):
    rng = np.random.default_rng(4)
    q, v = random_state(floating, rng, quaternion_scale=quaternion_scale)
    inputs = (t64(q, True), t64(v, True), t64(rng.normal(size=floating.nv), True))
    assert torch.autograd.gradcheck(lambda q, v, tau: gtorch.step(floating, q, v, tau, DT), inputs)


def test_step_gradcheck_params(pendulum):
    rng = np.random.default_rng(5)
    q, v = random_state(pendulum, rng)
    tau = t64(rng.normal(size=pendulum.nv))
    p = t64(perturbed_params(pendulum, rng), True)
    assert torch.autograd.gradcheck(
        lambda q, v, p: gtorch.step(pendulum, q, v, tau, DT, params=p),
        (t64(q, True), t64(v, True), p))


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_rollout_gradcheck_floating_base_with_params(floating, integrator):
    rng = np.random.default_rng(6)
    q0, v0 = random_state(floating, rng)
    inputs = (t64(q0, True), t64(v0, True), t64(rng.normal(size=(3, floating.nv)), True),
              t64(perturbed_params(floating, rng), True))

    def f(q0, v0, taus, p):
        return gtorch.rollout(floating, q0, v0, taus, DT, params=p, integrator=integrator)

    assert torch.autograd.gradcheck(f, inputs)


def test_rollout_gradcheck_batch_shared_inputs(pendulum):
    # a batch of 2 worlds: per-world q0 and taus, a shared v0 and a shared parameter vector
    rng = np.random.default_rng(7)
    q0, _ = random_state(pendulum, rng, 2)
    inputs = (t64(q0, True), t64(rng.normal(size=pendulum.nv), True),
              t64(rng.normal(size=(2, 4, pendulum.nv)), True), t64(perturbed_params(pendulum, rng), True))

    def f(q0, v0, taus, p):
        return gtorch.rollout(pendulum, q0, v0, taus, DT, params=p)

    assert torch.autograd.gradcheck(f, inputs)


# --- gradients: the same numbers as the NumPy VJPs ------------------------------------------


def test_rollout_gradients_equal_rollout_vjp(floating):
    rng = np.random.default_rng(8)
    batch, horizon = 3, 6
    q0, v0 = random_state(floating, rng, batch)
    taus = rng.normal(size=(batch, horizon, floating.nv))
    params = np.stack([perturbed_params(floating, rng) for _ in range(batch)])  # one per world
    qs_bar = rng.normal(size=(batch, horizon + 1, floating.nq))
    vs_bar = rng.normal(size=(batch, horizon + 1, floating.nv))

    inputs = [t64(x, True) for x in (q0, v0, taus, params)]
    qs, vs = gtorch.rollout(floating, *inputs[:3], DT, params=inputs[3])
    ((qs * t64(qs_bar)).sum() + (vs * t64(vs_bar)).sum()).backward()

    for b in range(batch):
        expected = gradyn.rollout_vjp(floating.with_params(params[b]), q0[b], v0[b], taus[b], DT,
                                      qs_bar[b], vs_bar[b])
        # with_params normalises the axis entries: their raw gradient is divided by the norm
        expected = list(expected)
        expected[3] = expected[3].copy()
        for k in axis_starts(floating):
            expected[3][k:k + 3] /= np.linalg.norm(params[b][k:k + 3])
        for tensor, reference in zip(inputs, expected):
            np.testing.assert_allclose(tensor.grad[b].numpy(), reference, rtol=1e-12, atol=1e-12)


def test_step_gradients_equal_step_vjp_shared_params(pendulum):
    rng = np.random.default_rng(9)
    batch = 4
    q, v = random_state(pendulum, rng, batch)
    tau = rng.normal(size=(batch, pendulum.nv))
    p = perturbed_params(pendulum, rng)
    q_bar, v_bar = rng.normal(size=q.shape), rng.normal(size=v.shape)

    inputs = [t64(x, True) for x in (q, v, tau, p)]
    q_next, v_next = gtorch.step(pendulum, *inputs[:3], DT, params=inputs[3], integrator="rk4")
    ((q_next * t64(q_bar)).sum() + (v_next * t64(v_bar)).sum()).backward()

    world = pendulum.with_params(p)
    p_bar = np.zeros_like(p)
    for b in range(batch):
        expected = gradyn.step_vjp(world, q[b], v[b], tau[b], DT, q_bar[b], v_bar[b], integrator="rk4")
        for tensor, reference in zip(inputs[:3], expected[:3]):
            np.testing.assert_allclose(tensor.grad[b].numpy(), reference, rtol=1e-12, atol=1e-12)
        p_bar += expected[3]
    # a parameter vector shared by the worlds collects the sum of their gradients
    np.testing.assert_allclose(inputs[3].grad.numpy(), p_bar, rtol=1e-12, atol=1e-12)


def test_equal_per_world_rows_run_one_model_and_match_distinct_rows(pendulum):
    # rows that are all equal (a real (B, nparams) array, not a broadcast) run on one rebuilt model;
    # a batch with one row changed runs one model per world: the shared worlds come out the same
    rng = np.random.default_rng(12)
    batch = 3
    q, v = random_state(pendulum, rng, batch)
    tau = rng.normal(size=(batch, pendulum.nv))
    p = perturbed_params(pendulum, rng)
    same = np.tile(p, (batch, 1))
    mixed = same.copy()
    mixed[2] = perturbed_params(pendulum, rng)
    out = []
    for rows in (same, mixed):
        params = t64(rows, True)
        q_next, v_next = gtorch.step(pendulum, t64(q), t64(v), t64(tau), DT, params=params)
        (q_next.sum() + v_next.square().sum()).backward()
        out.append((q_next.detach().numpy(), v_next.detach().numpy(), params.grad.numpy()))
    for a, b in zip(out[0], out[1]):
        assert np.array_equal(a[:2], b[:2])
    world = pendulum.with_params(p)
    q1, v1 = gradyn.step(world, q[0], v[0], tau[0], DT)
    assert np.array_equal(q1, out[0][0][0]) and np.array_equal(v1, out[0][1][0])


def test_unused_output_and_checkpointing(pendulum):
    # a loss on the final configuration only (vs unused), with and without checkpointing
    rng = np.random.default_rng(10)
    q0, v0 = random_state(pendulum, rng)
    taus = rng.normal(size=(20, pendulum.nv))
    grads = []
    for max_snapshots in (0, 3):
        x = t64(taus, True)
        qs, _ = gtorch.rollout(pendulum, t64(q0), t64(v0), x, DT, max_snapshots=max_snapshots)
        qs[-1].square().sum().backward()
        grads.append(x.grad.numpy())
    qs_bar = np.zeros((21, pendulum.nq))
    qs_bar[-1] = 2 * gradyn.rollout(pendulum, q0, v0, taus, DT)[0][-1]
    expected = gradyn.rollout_vjp(pendulum, q0, v0, taus, DT, qs_bar, np.zeros((21, pendulum.nv)))[2]
    np.testing.assert_allclose(grads[0], expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grads[1], expected, rtol=1e-10, atol=1e-14)


# --- dtypes and shapes ----------------------------------------------------------------------


def test_float32_inputs(floating):
    rng = np.random.default_rng(11)
    q0, v0 = random_state(floating, rng, 2)
    taus = rng.normal(size=(2, 3, floating.nv))
    x32 = [torch.tensor(x, dtype=torch.float32, requires_grad=True) for x in (q0, v0, taus)]
    x64 = [t64(x, True) for x in (q0, v0, taus)]
    results = []
    for inputs in (x32, x64):
        qs, vs = gtorch.rollout(floating, *inputs, DT)
        (qs.sum() + vs.square().sum()).backward()
        results.append((qs, vs))
    (qs32, vs32), (qs64, vs64) = results
    assert qs32.dtype == vs32.dtype == torch.float32
    for x in x32:
        assert x.grad.dtype == torch.float32
    # float32 rounding of the inputs and outputs only: the core ran in float64
    np.testing.assert_allclose(qs32.detach().numpy(), qs64.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(vs32.detach().numpy(), vs64.detach().numpy(), rtol=1e-5, atol=1e-5)
    for a, b in zip(x32, x64):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-3, atol=1e-4)


def test_batch_shapes_and_errors(pendulum):
    rng = np.random.default_rng(12)
    q, v = random_state(pendulum, rng, 5)
    # a batched q with a shared v and tau
    q_next, v_next = gtorch.step(pendulum, t64(q), t64(v[0]), t64(np.zeros(pendulum.nv)), DT)
    assert q_next.shape == (5, pendulum.nq) and v_next.shape == (5, pendulum.nv)
    np.testing.assert_array_equal(v_next[3].numpy(),
                                  gradyn.step(pendulum, q[3], v[0], np.zeros(pendulum.nv), DT)[1])
    # lists and integer arrays are accepted (converted to the default float dtype)
    q_next, _ = gtorch.step(pendulum, [0, 0], [0, 0], [0, 0], DT)
    assert q_next.dtype == torch.get_default_dtype() and q_next.shape == (pendulum.nq,)
    with pytest.raises(ValueError, match="batch sizes differ"):
        gtorch.step(pendulum, t64(q), t64(v[:3]), t64(np.zeros(pendulum.nv)), DT)
    with pytest.raises(ValueError, match="taus: expected 2 dimension"):
        gtorch.rollout(pendulum, t64(q[0]), t64(v[0]), t64(np.zeros(pendulum.nv)), DT)
    with pytest.raises(ValueError, match=r"params: expected last dimension \d+ \(nparams\)"):
        gtorch.step(pendulum, t64(q[0]), t64(v[0]), t64(v[0]), DT, params=t64(np.zeros(len(pendulum.params) + 1)))
    with pytest.raises(ValueError, match=r"q: expected last dimension 2 \(nq\), got shape \(3,\)"):
        gtorch.step(pendulum, t64(np.zeros(3)), t64(v[0]), t64(v[0]), DT)


def test_status_per_world_and_step(pendulum):
    """return_status: the gradyn.Status bits of each world's step, a NaN torque flagged in its own
    world only; gradients still flow through the other outputs."""
    rng = np.random.default_rng(13)
    q, v = random_state(pendulum, rng, 3)
    tau = np.zeros((3, pendulum.nv))
    tau[1, 0] = np.nan
    q_next, v_next, status = gtorch.step(pendulum, t64(q), t64(v), t64(tau), DT, return_status=True)
    assert status.dtype == torch.int32 and status.shape == (3,) and not status.requires_grad
    assert status.tolist() == [0, int(gradyn.Status.NON_FINITE), 0]
    _, _, status = gtorch.step(pendulum, t64(q[0]), t64(v[0]), t64(tau[0]), DT, return_status=True)
    assert status.shape == () and int(status) == 0
    taus = np.zeros((3, 4, pendulum.nv))
    taus[2, 1, 1] = np.nan
    q0 = t64(q, grad=True)
    qs, vs, status = gtorch.rollout(pendulum, q0, t64(v), t64(taus), DT, return_status=True)
    assert status.shape == (3, 4)
    flagged = (status & int(gradyn.Status.NON_FINITE)) != 0
    assert flagged.tolist() == [[False] * 4, [False] * 4, [False, True, True, True]]
    qs[:2, -1].sum().backward()
    assert torch.all(torch.isfinite(q0.grad[:2]))


def _actuated_arm():
    from pathlib import Path

    return gradyn.load(str(Path(__file__).resolve().parents[1] / "data" / "mjcf" / "actuated_arm.xml"))


def test_controls_are_differentiable_inputs():
    """ctrl / ctrls (the model's actuators, inside the step): torch's gradcheck against finite
    differences, batched and single, and the same numbers as gradyn's own rollout."""
    model = _actuated_arm()
    rng = np.random.default_rng(11)
    q0 = torch.tensor(0.3 * rng.normal(size=model.nq))
    v0 = torch.zeros(model.nv, dtype=torch.float64)
    taus = torch.zeros(8, model.nv, dtype=torch.float64)
    ctrls = torch.tensor(0.3 * rng.normal(size=(3, 8, model.nu)), requires_grad=True)
    assert torch.autograd.gradcheck(lambda c: gtorch.rollout(model, q0, v0, taus, 0.002, ctrls=c)[0], (ctrls,))
    assert torch.autograd.gradcheck(lambda c: gtorch.step(model, q0, v0, taus[0], 0.002, ctrl=c)[1], (ctrls[:, 0],))
    qs, _ = gtorch.rollout(model, q0, v0, taus, 0.002, ctrls=ctrls)
    ref, _ = gradyn.rollout(model, q0.numpy(), v0.numpy(), taus.numpy(), 0.002, ctrls=ctrls[1].detach().numpy())
    assert np.array_equal(qs[1].detach().numpy(), ref)
    with pytest.raises(ValueError, match=r"ctrls: expected last dimension 6 \(nu\)"):
        gtorch.rollout(model, q0, v0, taus, 0.002, ctrls=torch.zeros(8, 5, dtype=torch.float64))


def test_tau_and_taus_may_be_none_as_in_the_numpy_api():
    model = gradyn.load(str(ROOT / "tests" / "data" / "mjcf" / "actuated_arm.xml"))
    rng = np.random.default_rng(0)
    q, v = rng.normal(size=model.nq), rng.normal(size=model.nv)
    ctrl = torch.tensor(rng.normal(size=model.nu), requires_grad=True)
    qn, vn = gtorch.step(model, q, v, None, 1e-3, ctrl=ctrl)
    expected = gradyn.step(model, q, v, None, 1e-3, ctrl=ctrl.detach().numpy())
    assert np.array_equal(qn.detach().numpy(), expected[0]) and np.array_equal(vn.detach().numpy(), expected[1])
    vn.sum().backward()
    assert ctrl.grad is not None
    ctrls = torch.tensor(rng.normal(size=(2, 7, model.nu)))
    qs, vs = gtorch.rollout(model, np.tile(q, (2, 1)), np.tile(v, (2, 1)), None, 1e-3, ctrls=ctrls)
    assert qs.shape == (2, 8, model.nq)
    with pytest.raises(ValueError, match="taus and ctrls are both None"):
        gtorch.rollout(model, q, v, None, 1e-3)


def test_policy_rollout_is_a_differentiable_torch_operation():
    model = build_cart_pole()
    policy = gradyn.Policy(model, ["hinge.q", "hinge.v", "task[0]"], hidden=[6], seed=2, zero_last_layer=False)
    rng = np.random.default_rng(0)
    weights = torch.tensor(policy.weights, requires_grad=True)
    q0 = torch.tensor(rng.normal(size=(3, 2)) * 0.1, requires_grad=True)
    v0 = torch.zeros(3, 2, dtype=torch.float64, requires_grad=True)
    task = torch.tensor([0.3], dtype=torch.float64, requires_grad=True)
    qs, vs, ctrls = gtorch.policy_rollout(policy, q0, v0, 30, 0.01, weights=weights, task=task)
    assert qs.shape == (3, 31, 2) and ctrls.shape == (3, 30, 1)
    loss = qs[:, -1].square().sum() + 0.1 * ctrls.square().sum()
    loss.backward()
    # The same numbers from Policy.rollout_vjp directly (weights and task shared: summed over worlds).
    a, c = np.zeros(qs.shape), 0.2 * ctrls.detach().numpy()
    a[:, -1] = 2 * qs.detach().numpy()[:, -1]
    g = policy.rollout_vjp(qs.detach().numpy(), vs.detach().numpy(), a, np.zeros(vs.shape), 0.01,
                           weights=policy.weights, task=[0.3], ctrls_bar=c)
    np.testing.assert_allclose(weights.grad.numpy(), g["weights"], rtol=1e-12)
    np.testing.assert_allclose(task.grad.numpy(), g["task"], rtol=1e-12)
    np.testing.assert_allclose(q0.grad.numpy(), g["q0"], rtol=1e-12)
    # clip_norm reaches Policy.rollout_vjp
    weights.grad = None
    qs, vs, ctrls = gtorch.policy_rollout(policy, q0, v0, 30, 0.01, weights=weights, task=task, clip_norm=0.05)
    (qs[:, -1].square().sum() + 0.1 * ctrls.square().sum()).backward()
    clipped = policy.rollout_vjp(qs.detach().numpy(), vs.detach().numpy(), a, np.zeros(vs.shape), 0.01,
                                 weights=policy.weights, task=[0.3], ctrls_bar=c, clip_norm=0.05)
    np.testing.assert_allclose(weights.grad.numpy(), clipped["weights"], rtol=1e-12)
    assert np.abs(clipped["weights"] - g["weights"]).max() > 1e-6
    # torch's own finite-difference check.
    small = lambda w, t: gtorch.policy_rollout(policy, q0.detach()[0], v0.detach()[0], 20, 0.01, weights=w,  # noqa: E731
                                               task=t)[0][-1]
    assert torch.autograd.gradcheck(small, (weights.detach().clone().requires_grad_(), task.detach().clone().requires_grad_()),
                                    eps=1e-6, atol=1e-7, rtol=1e-5)


LEAK_SCRIPT = """
import torch, gradyn, gradyn.torch
b = gradyn.ModelBuilder()
b.add_link("base")
b.add_link("pole", mass=1.0, com=(0, 0, -0.5), inertia=(1e-2, 1e-2, 1e-2, 0, 0, 0))
b.add_joint("hinge", "revolute", parent="base", child="pole", axis=(0, 1, 0))
b.add_actuator("hinge", ctrlrange=(-3.0, 3.0))
model = b.build()
policy = gradyn.Policy(model, ["hinge.q", "hinge.v"], hidden=[4])
w = torch.tensor(policy.weights, requires_grad=True)
qs, vs, c = gradyn.torch.policy_rollout(policy, torch.zeros(1), torch.zeros(1), 5, 0.01, weights=w)
t = torch.zeros(5, 1, requires_grad=True)
qs2, vs2 = gradyn.torch.rollout(model, torch.zeros(1), torch.zeros(1), t, 0.01)
print("graphs alive at exit")
"""


def test_graphs_alive_at_exit_leak_no_model():
    """Autograd graphs still alive when the interpreter exits hold their models through handles that
    are released at exit, so nanobind reports no leaked gradyn.Model (it did for policy_rollout)."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", LEAK_SCRIPT], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "graphs alive at exit" in result.stdout
    assert "leaked" not in result.stderr, result.stderr
