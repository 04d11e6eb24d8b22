"""gradyn.jax: step and rollout as jax.custom_vjp functions over jax.pure_callback.

Forward values must equal gradyn.step/gradyn.rollout, gradients must equal gradyn.step_vjp and
gradyn.rollout_vjp, and jax.test_util.check_grads (reverse mode against central differences)
must pass on a pendulum, a floating-base model and through the flat parameter vector, also under
jit and vmap. The checks perturb single raw entries, quaternion components and joint-axis
parameters included (off the unit sphere), with no normalisation in between: the core reads
quaternions normalised and with_params normalises axes, so the adjoints are exact in every
direction. The module enables jax_enable_x64 (JAX is float32 otherwise). Skipped when jax is
not installed.
"""

import pathlib

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads  # noqa: E402

import gradyn  # noqa: E402
import gradyn.jax as gjax  # noqa: E402
from bridge_models import (DT, axis_starts, build_cart_pole, build_floating, build_pendulum,  # noqa: E402
                           perturbed_params, random_state)

ROOT = pathlib.Path(__file__).resolve().parents[2]


# Central-difference step of check_grads: its default (1e-4) leaves truncation errors above its
# 1e-5 tolerance on the floating-base rollout (85 parameters, stiff in the inertias).
EPS = 1e-6


@pytest.fixture(scope="module")
def pendulum():
    return build_pendulum()


@pytest.fixture(scope="module")
def floating():
    return build_floating()


def j64(x):
    return jnp.asarray(np.asarray(x), dtype=jnp.float64)


# --- forward values -------------------------------------------------------------------------


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_step_forward_matches_gradyn(pendulum, floating, integrator):
    rng = np.random.default_rng(0)
    for model in (pendulum, floating):
        q, v = random_state(model, rng)
        tau = rng.normal(size=model.nv)
        q_next, v_next = gjax.step(model, j64(q), j64(v), j64(tau), DT, integrator=integrator)
        q_ref, v_ref = gradyn.step(model, q, v, tau, DT, integrator)
        assert q_next.dtype == jnp.float64 and q_next.shape == (model.nq,)
        np.testing.assert_array_equal(np.asarray(q_next), q_ref)
        np.testing.assert_array_equal(np.asarray(v_next), v_ref)


def test_rollout_forward_batch_matches_gradyn(floating):
    rng = np.random.default_rng(1)
    batch, horizon = 3, 5
    q0, v0 = random_state(floating, rng, batch)
    taus = rng.normal(size=(batch, horizon, floating.nv))
    params = np.stack([perturbed_params(floating, rng) for _ in range(batch)])
    run = jax.jit(lambda q0, v0, taus, p: gjax.rollout(floating, q0, v0, taus, DT, params=p))
    qs, vs = run(j64(q0), j64(v0), j64(taus), j64(params))
    assert qs.shape == (batch, horizon + 1, floating.nq)
    assert vs.shape == (batch, horizon + 1, floating.nv)
    for b in range(batch):
        qs_ref, vs_ref = gradyn.rollout(floating.with_params(params[b]), q0[b], v0[b], taus[b], DT)
        np.testing.assert_array_equal(np.asarray(qs[b]), qs_ref)
        np.testing.assert_array_equal(np.asarray(vs[b]), vs_ref)


# --- gradients: check_grads -----------------------------------------------------------------


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_step_check_grads_pendulum_with_params(pendulum, integrator):
    rng = np.random.default_rng(2)
    q, v = random_state(pendulum, rng)
    args = (j64(q), j64(v), j64(rng.normal(size=pendulum.nv)), j64(perturbed_params(pendulum, rng)))

    def f(q, v, tau, p):
        return gjax.step(pendulum, q, v, tau, DT, params=p, integrator=integrator)

    check_grads(f, args, order=1, modes=["rev"], eps=EPS)


@pytest.mark.parametrize("quaternion_scale", [1.0, 0.7])
def test_step_check_grads_floating_base(floating, quaternion_scale):
    rng = np.random.default_rng(3)
    q, v = random_state(floating, rng, quaternion_scale=quaternion_scale)
    args = (j64(q), j64(v), j64(rng.normal(size=floating.nv)))
    check_grads(lambda q, v, tau: gjax.step(floating, q, v, tau, DT), args, order=1, modes=["rev"], eps=EPS)


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_rollout_check_grads_floating_base_with_params(floating, integrator):
    rng = np.random.default_rng(4)
    q0, v0 = random_state(floating, rng)
    args = (j64(q0), j64(v0), j64(rng.normal(size=(3, floating.nv))), j64(perturbed_params(floating, rng)))

    def f(q0, v0, taus, p):
        return gjax.rollout(floating, q0, v0, taus, DT, params=p, integrator=integrator)

    check_grads(f, args, order=1, modes=["rev"], eps=EPS)


def test_rollout_check_grads_batched_under_jit(pendulum):
    # 2 worlds with their own q0 and taus; v0 and the parameters shared
    rng = np.random.default_rng(5)
    q0, _ = random_state(pendulum, rng, 2)
    args = (j64(q0), j64(rng.normal(size=pendulum.nv)), j64(rng.normal(size=(2, 4, pendulum.nv))),
            j64(perturbed_params(pendulum, rng)))
    f = jax.jit(lambda q0, v0, taus, p: gjax.rollout(pendulum, q0, v0, taus, DT, params=p))
    check_grads(f, args, order=1, modes=["rev"], eps=EPS)


# --- gradients: the same numbers as the NumPy VJPs ------------------------------------------


def test_rollout_gradients_equal_rollout_vjp(floating):
    rng = np.random.default_rng(6)
    batch, horizon = 3, 6
    q0, v0 = random_state(floating, rng, batch)
    taus = rng.normal(size=(batch, horizon, floating.nv))
    p = perturbed_params(floating, rng)  # shared by the worlds: its gradient is their sum
    qs_bar = rng.normal(size=(batch, horizon + 1, floating.nq))
    vs_bar = rng.normal(size=(batch, horizon + 1, floating.nv))

    def loss(q0, v0, taus, p):
        qs, vs = gjax.rollout(floating, q0, v0, taus, DT, params=p)
        return jnp.sum(qs * qs_bar) + jnp.sum(vs * vs_bar)

    grads = jax.grad(loss, argnums=(0, 1, 2, 3))(j64(q0), j64(v0), j64(taus), j64(p))

    world = floating.with_params(p)
    p_bar = np.zeros_like(p)
    for b in range(batch):
        expected = gradyn.rollout_vjp(world, q0[b], v0[b], taus[b], DT, qs_bar[b], vs_bar[b])
        for grad, reference in zip(grads[:3], expected[:3]):
            np.testing.assert_allclose(np.asarray(grad[b]), reference, rtol=1e-12, atol=1e-12)
        p_bar += expected[3]
    for k in axis_starts(floating):  # with_params normalises the axis entries
        p_bar[k:k + 3] /= np.linalg.norm(p[k:k + 3])
    np.testing.assert_allclose(np.asarray(grads[3]), p_bar, rtol=1e-12, atol=1e-12)


def test_step_gradients_equal_step_vjp_under_vmap(pendulum):
    # jax.vmap of the single-world function is the same as the batched call
    rng = np.random.default_rng(7)
    batch = 4
    q, v = random_state(pendulum, rng, batch)
    tau = rng.normal(size=(batch, pendulum.nv))
    params = np.stack([perturbed_params(pendulum, rng) for _ in range(batch)])
    q_bar, v_bar = rng.normal(size=q.shape), rng.normal(size=v.shape)

    def pullback(q, v, tau, p, qb, vb):
        _, vjp = jax.vjp(lambda *a: gjax.step(pendulum, a[0], a[1], a[2], DT, params=a[3], integrator="rk4"),
                         q, v, tau, p)
        return vjp((qb, vb))

    grads = jax.vmap(pullback)(*(j64(x) for x in (q, v, tau, params, q_bar, v_bar)))
    for b in range(batch):
        expected = gradyn.step_vjp(pendulum.with_params(params[b]), q[b], v[b], tau[b], DT, q_bar[b], v_bar[b],
                                   integrator="rk4")
        for grad, reference in zip(grads, expected):
            np.testing.assert_allclose(np.asarray(grad[b]), reference, rtol=1e-12, atol=1e-12)


def test_unused_output_and_checkpointing(pendulum):
    rng = np.random.default_rng(8)
    q0, v0 = random_state(pendulum, rng)
    taus = rng.normal(size=(20, pendulum.nv))
    grads = [jax.grad(lambda t: jnp.sum(gjax.rollout(pendulum, j64(q0), j64(v0), t, DT,
                                                     max_snapshots=k)[0][-1] ** 2))(j64(taus))
             for k in (0, 3)]
    qs_bar = np.zeros((21, pendulum.nq))
    qs_bar[-1] = 2 * gradyn.rollout(pendulum, q0, v0, taus, DT)[0][-1]
    expected = gradyn.rollout_vjp(pendulum, q0, v0, taus, DT, qs_bar, np.zeros((21, pendulum.nv)))[2]
    np.testing.assert_allclose(np.asarray(grads[0]), expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(grads[1]), expected, rtol=1e-10, atol=1e-14)


# --- dtypes and shapes ----------------------------------------------------------------------


def test_float32_inputs(floating):
    rng = np.random.default_rng(9)
    q0, v0 = random_state(floating, rng, 2)
    taus = rng.normal(size=(2, 3, floating.nv))

    def loss(q0, v0, taus):
        qs, vs = gjax.rollout(floating, q0, v0, taus, DT)
        return jnp.sum(qs) + jnp.sum(vs**2), (qs, vs)

    results = {}
    for dtype in (jnp.float32, jnp.float64):
        args = [jnp.asarray(x, dtype=dtype) for x in (q0, v0, taus)]
        grads, (qs, vs) = jax.grad(loss, argnums=(0, 1, 2), has_aux=True)(*args)
        assert qs.dtype == vs.dtype == dtype
        assert all(g.dtype == dtype for g in grads)
        results[dtype] = (qs, vs, grads)
    (qs32, vs32, g32), (qs64, vs64, g64) = results[jnp.float32], results[jnp.float64]
    np.testing.assert_allclose(np.asarray(qs32), np.asarray(qs64), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(vs32), np.asarray(vs64), rtol=1e-5, atol=1e-5)
    for a, b in zip(g32, g64):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-3, atol=1e-4)


def test_batch_shapes_and_errors(pendulum):
    rng = np.random.default_rng(10)
    q, v = random_state(pendulum, rng, 5)
    q_next, v_next = gjax.step(pendulum, j64(q), j64(v[0]), jnp.zeros(pendulum.nv), DT)
    assert q_next.shape == (5, pendulum.nq) and v_next.shape == (5, pendulum.nv)
    np.testing.assert_array_equal(np.asarray(v_next[3]),
                                  gradyn.step(pendulum, q[3], v[0], np.zeros(pendulum.nv), DT)[1])
    q_next, _ = gjax.step(pendulum, [0, 0], [0, 0], [0, 0], DT)  # lists of ints are converted
    assert q_next.dtype == jnp.float64 and q_next.shape == (pendulum.nq,)
    with pytest.raises(ValueError, match="batch sizes differ"):
        gjax.step(pendulum, j64(q), j64(v[:3]), jnp.zeros(pendulum.nv), DT)
    with pytest.raises(ValueError, match="taus: expected 2 dimension"):
        gjax.rollout(pendulum, j64(q[0]), j64(v[0]), jnp.zeros(pendulum.nv), DT)
    with pytest.raises(ValueError, match=r"params: expected last dimension \d+ \(nparams\)"):
        gjax.step(pendulum, j64(q[0]), j64(v[0]), j64(v[0]), DT, params=jnp.zeros(len(pendulum.params) + 1))
    with pytest.raises(ValueError, match=r"q: expected last dimension 2 \(nq\), got shape \(3,\)"):
        gjax.step(pendulum, jnp.zeros(3), j64(v[0]), j64(v[0]), DT)


def test_status_per_world_and_step(pendulum):
    """return_status: the gradyn.Status bits of each world's step (uint32), under vmap and jit;
    jax.grad through the other outputs is unaffected."""
    rng = np.random.default_rng(13)
    q, v = random_state(pendulum, rng, 3)
    tau = np.zeros((3, pendulum.nv))
    tau[1, 0] = np.nan
    _, _, status = gjax.step(pendulum, q, v, tau, DT, return_status=True)
    assert status.dtype == jnp.uint32 and status.shape == (3,)
    assert status.tolist() == [0, int(gradyn.Status.NON_FINITE), 0]
    taus = np.zeros((3, 4, pendulum.nv))
    taus[2, 1, 1] = np.nan
    rollout = jax.jit(lambda q0: gjax.rollout(pendulum, q0, v, taus, DT, return_status=True))
    _, _, status = rollout(q)
    assert status.shape == (3, 4)
    flagged = (np.asarray(status) & int(gradyn.Status.NON_FINITE)) != 0
    assert flagged.tolist() == [[False] * 4, [False] * 4, [False, True, True, True]]

    def loss(q0):
        qs, _, status = gjax.rollout(pendulum, q0, v[0], taus[0], DT, return_status=True)
        return jnp.sum(qs[-1] ** 2)

    grad = jax.grad(loss)(q[0])
    assert np.all(np.isfinite(np.asarray(grad)))


def test_controls_are_differentiable_inputs():
    """ctrl / ctrls (the model's actuators, inside the step) through jax.grad, jit and vmap,
    checked against finite differences (check_grads) and gradyn's own rollout."""
    from pathlib import Path

    model = gradyn.load(str(Path(__file__).resolve().parents[1] / "data" / "mjcf" / "actuated_arm.xml"))
    rng = np.random.default_rng(12)
    q0 = jnp.array(0.3 * rng.normal(size=model.nq))
    v0, taus = jnp.zeros(model.nv), jnp.zeros((8, model.nv))
    ctrls = jnp.array(0.3 * rng.normal(size=(8, model.nu)))
    check_grads(lambda c: gjax.rollout(model, q0, v0, taus, 0.002, ctrls=c)[0], (ctrls,), order=1, modes=("rev",),
                eps=1e-6, atol=1e-6, rtol=1e-6)
    check_grads(lambda c: gjax.step(model, q0, v0, taus[0], 0.002, ctrl=c)[1], (ctrls[0],), order=1, modes=("rev",),
                eps=1e-6, atol=1e-6, rtol=1e-6)
    loss = lambda c: jnp.sum(gjax.rollout(model, q0, v0, taus, 0.002, ctrls=c)[0][..., -1, :] ** 2)  # noqa: E731
    batched = jax.jit(jax.grad(loss))(jnp.stack([ctrls, 2 * ctrls]))
    np.testing.assert_allclose(batched[0], jax.grad(loss)(ctrls), rtol=1e-12, atol=1e-15)
    qs, _ = gjax.rollout(model, q0, v0, taus, 0.002, ctrls=ctrls)
    ref, _ = gradyn.rollout(model, np.asarray(q0), np.asarray(v0), np.asarray(taus), 0.002, ctrls=np.asarray(ctrls))
    np.testing.assert_array_equal(np.asarray(qs), ref)


def test_tau_and_taus_may_be_none_as_in_the_numpy_api():
    model = gradyn.load(str(ROOT / "tests" / "data" / "mjcf" / "actuated_arm.xml"))
    rng = np.random.default_rng(0)
    q, v, ctrl = rng.normal(size=model.nq), rng.normal(size=model.nv), rng.normal(size=model.nu)
    qn, vn = gjax.step(model, q, v, None, 1e-3, ctrl=ctrl)
    expected = gradyn.step(model, q, v, None, 1e-3, ctrl=ctrl)
    assert np.array_equal(np.asarray(vn), expected[1])
    grad = jax.grad(lambda c: gjax.step(model, q, v, None, 1e-3, ctrl=c)[1].sum())(jnp.asarray(ctrl))
    assert np.all(np.isfinite(np.asarray(grad)))
    qs, _ = gjax.rollout(model, q, v, None, 1e-3, ctrls=rng.normal(size=(7, model.nu)))
    assert qs.shape == (8, model.nq)
    with pytest.raises(ValueError, match="taus and ctrls are both None"):
        gjax.rollout(model, q, v, None, 1e-3)


def test_policy_rollout_under_grad_and_vmap():
    model = build_cart_pole()
    policy = gradyn.Policy(model, ["hinge.q", "hinge.v", "task[0]"], hidden=[6], seed=2, zero_last_layer=False)
    q0 = jnp.array([0.05, 0.1])
    v0 = jnp.zeros(2)
    task = jnp.array([0.3])

    def loss(w, q0, task):
        qs, vs, ctrls = gjax.policy_rollout(policy, q0, v0, 30, 0.01, weights=w, task=task)
        return jnp.sum(qs[-1] ** 2) + 0.1 * jnp.sum(ctrls**2)

    w = jnp.asarray(policy.weights)
    g_w, g_q0, g_task = jax.grad(loss, argnums=(0, 1, 2))(w, q0, task)
    qs, vs, ctrls, _ = policy.rollout(np.asarray(q0), np.asarray(v0), 30, 0.01, task=[0.3])
    a = np.zeros(qs.shape)
    a[-1] = 2 * qs[-1]
    ref = policy.rollout_vjp(qs, vs, a, np.zeros(vs.shape), 0.01, task=[0.3], ctrls_bar=0.2 * ctrls)
    np.testing.assert_allclose(np.asarray(g_w), ref["weights"], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g_q0), ref["q0"], rtol=1e-10)
    np.testing.assert_allclose(np.asarray(g_task), ref["task"], rtol=1e-10)
    # clip_norm reaches Policy.rollout_vjp
    clipped_loss = lambda w: jnp.sum(gjax.policy_rollout(policy, q0, v0, 30, 0.01, weights=w, task=task,  # noqa: E731
                                                         clip_norm=0.05)[0][-1] ** 2)
    a_only = policy.rollout_vjp(qs, vs, a, np.zeros(vs.shape), 0.01, task=[0.3], clip_norm=0.05)
    np.testing.assert_allclose(np.asarray(jax.grad(clipped_loss)(w)), a_only["weights"], rtol=1e-10)
    with pytest.raises(ValueError, match="clip_norm"):
        gjax.policy_rollout(policy, q0, v0, 5, 0.01, clip_norm=-1)
    # vmap over initial states: one batched call, each world's gradient its own.
    q0s = jnp.array([[0.05, 0.1], [0.0, -0.2], [0.1, 0.0]])
    batch = jax.vmap(jax.grad(loss, argnums=1), in_axes=(None, 0, None))(w, q0s, task)
    for b in range(3):
        one = jax.grad(loss, argnums=1)(w, q0s[b], task)
        np.testing.assert_allclose(np.asarray(batch[b]), np.asarray(one), rtol=1e-12)
    with pytest.raises(ValueError, match=r"q0: expected shape \(2,\)"):
        gjax.policy_rollout(policy, jnp.zeros(3), v0, 5, 0.01)
