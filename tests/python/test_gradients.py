"""Gradients from Python: step_vjp and rollout_vjp against central differences of gradyn.step /
gradyn.rollout, checkpointing, gradcheck, and argument errors."""

from pathlib import Path

import numpy as np
import pytest

import gradyn

MODELS = Path(__file__).resolve().parents[2] / "models"
PENDULUM2 = MODELS / "pendulums" / "pendulum2.urdf"
ANT = MODELS / "mujoco" / "ant.xml"
IIWA = MODELS / "grid" / "iiwa.urdf"


def quaternion_slices(model):
    """Slices of q holding quaternions (ant: the free joint's q[3:7])."""
    out = []
    for name in model.joint_names:
        nq, iq = model.joint_nq(name), model.joint_idx_q(name)
        if nq == 4:
            out.append(slice(iq, iq + 4))
        elif nq == 7:
            out.append(slice(iq + 3, iq + 7))
    return out


def random_state(model, rng):
    q = model.neutral() + 0.0
    q = gradyn.integrate(model, q, rng.uniform(-1, 1, model.nv))
    return q, rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)


# q is compared raw, entry by entry (quaternion components perturbed off the unit sphere, and on
# ant also a q whose quaternion is not unit): the dynamics read quaternions normalised, so the
# adjoint is exact in every direction. Joint-axis parameters likewise (with_params normalises).
@pytest.mark.parametrize("integrator", ["euler", "rk4"])
@pytest.mark.parametrize("path,quaternion_scale", [(PENDULUM2, 1.0), (ANT, 1.0), (ANT, 1.3), (IIWA, 1.0)])
def test_step_vjp_matches_central_differences(path, quaternion_scale, integrator):
    model = gradyn.load(str(path))
    rng = np.random.default_rng(0)
    q, v, tau = random_state(model, rng)
    for s in quaternion_slices(model):
        q[s] *= quaternion_scale
    dt = 0.005
    qn_bar, vn_bar = rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv)
    q_bar, v_bar, tau_bar, p_bar = gradyn.step_vjp(model, q, v, tau, dt, qn_bar, vn_bar, integrator=integrator)
    assert q_bar.shape == (model.nq,) and v_bar.shape == (model.nv,) and tau_bar.shape == (model.nv,)
    assert p_bar.shape == (len(model.param_names),)

    def loss(q_, v_, tau_, m=model):
        qn, vn = gradyn.step(m, q_, v_, tau_, dt, integrator=integrator)
        return qn @ qn_bar + vn @ vn_bar

    h = 1e-6

    def fd(f, x):
        g = np.zeros_like(x)
        for k in range(x.size):
            e = np.zeros_like(x)
            e[k] = h
            g[k] = (f(x + e) - f(x - e)) / (2 * h)
        return g

    scale = max(1.0, np.abs(np.concatenate([q_bar, v_bar, tau_bar])).max())
    g_q = fd(lambda x: loss(x, v, tau), q)  # ambient: single entries of q, quaternions included
    assert np.abs(q_bar - g_q).max() / scale < 1e-6
    assert np.abs(v_bar - fd(lambda x: loss(q, x, tau), v)).max() / scale < 1e-6
    assert np.abs(tau_bar - fd(lambda x: loss(q, v, x), tau)).max() / scale < 1e-6

    # parameters: a few entries, through model.with_params, every joint-axis entry of the first
    # axis included (raw: the perturbed axis is not unit, with_params normalises it)
    p0 = model.params
    names = ["gravity.z", model.param_names[0], model.param_names[len(p0) // 2]]
    axes = [n for n in model.param_names if ".axis." in n][:3]
    assert len(axes) == 3
    for name in names + axes:
        k = gradyn.param_index(model, name)
        e = np.zeros_like(p0)
        e[k] = h
        g = (loss(q, v, tau, model.with_params(p0 + e)) - loss(q, v, tau, model.with_params(p0 - e))) / (2 * h)
        assert abs(p_bar[k] - g) / max(1.0, np.abs(p_bar).max()) < 1e-6, name


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_rollout_vjp_matches_differences_and_checkpointing_is_exact(integrator):
    model = gradyn.load(str(ANT))
    rng = np.random.default_rng(1)
    q0, v0, _ = random_state(model, rng)
    T, dt = 25, 0.004
    taus = rng.uniform(-1, 1, (T, model.nv))
    qs_bar, vs_bar = rng.uniform(-1, 1, (T + 1, model.nq)), rng.uniform(-1, 1, (T + 1, model.nv))
    q0_bar, v0_bar, taus_bar, p_bar = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, integrator=integrator)
    assert taus_bar.shape == (T, model.nv)

    def loss(q_, v_, taus_):
        qs, vs = gradyn.rollout(model, q_, v_, taus_, dt, integrator=integrator)
        return np.sum(qs * qs_bar) + np.sum(vs * vs_bar)

    h = 1e-6
    scale = max(1.0, np.abs(taus_bar).max(), np.abs(v0_bar).max())
    for k in range(model.nv):
        e = np.zeros(model.nv)
        e[k] = h
        assert abs(v0_bar[k] - (loss(q0, v0 + e, taus) - loss(q0, v0 - e, taus)) / (2 * h)) / scale < 1e-6
    for t, k in [(0, 0), (T // 2, model.nv - 1), (T - 1, 3)]:
        e = np.zeros((T, model.nv))
        e[t, k] = h
        assert abs(taus_bar[t, k] - (loss(q0, v0, taus + e) - loss(q0, v0, taus - e)) / (2 * h)) / scale < 1e-6

    for k in [1, 2, 5, 100]:
        ck = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, integrator=integrator, max_snapshots=k)
        for a, b in zip(ck, (q0_bar, v0_bar, taus_bar, p_bar)):
            assert np.array_equal(a, b), k


def test_rollout_vjp_terminal_loss_with_none():
    model = gradyn.load(str(PENDULUM2))
    q0, v0 = np.array([0.3, -0.2]), np.zeros(2)
    taus = np.zeros((10, 2))
    vs_bar = np.zeros((11, 2))
    vs_bar[-1] = 1.0
    a = gradyn.rollout_vjp(model, q0, v0, taus, 0.01, None, vs_bar)
    b = gradyn.rollout_vjp(model, q0, v0, taus, 0.01, np.zeros((11, 2)), vs_bar)
    for x, y in zip(a, b):
        assert np.array_equal(x, y)
    assert np.abs(a[1]).max() > 0


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_gradcheck_reports_every_block(integrator):
    model = gradyn.load(str(ANT))
    rng = np.random.default_rng(2)
    q, v, tau = random_state(model, rng)
    r = gradyn.gradcheck(model, q, v, tau, 0.002, integrator=integrator)
    assert set(r) == {"q0", "v0", "taus", "params"}
    for name, b in r.items():
        assert b["ad_error"] <= 1e-9, (name, b)
        assert b["fd_error"] <= 1e-6, (name, b)
        assert b["scale"] > 0
    assert r["params"]["size"] == len(model.param_names)

    taus = rng.uniform(-1, 1, (30, model.nv))
    r = gradyn.gradcheck(model, q, v, taus, 0.002, integrator=integrator, running_loss=True, check_params=False,
                         ad_max_coords=8, fd_max_coords=4, max_snapshots=3)
    assert set(r) == {"q0", "v0", "taus"}
    assert r["taus"]["ad_coords"] == 8 and r["taus"]["fd_coords"] == 4
    assert all(b["ad_error"] <= 1e-9 and b["fd_error"] <= 1e-6 for b in r.values()), r


def test_gradcheck_can_fail():
    model = gradyn.load(str(PENDULUM2))
    r = gradyn.gradcheck(model, [0.5, -0.4], [1.0, 2.0], np.ones((20, 2)), 0.01, check_params=False, fd_step=0.3)
    assert max(b["fd_error"] for b in r.values()) > 1e-4
    assert np.isfinite(r["q0"]["ad_error"])


def test_shape_errors_name_expected_and_actual():
    model = gradyn.load(str(PENDULUM2))
    q, v = np.zeros(2), np.zeros(2)
    with pytest.raises(ValueError, match=r"q_next_bar: expected shape \(2,\), got \(3,\)"):
        gradyn.step_vjp(model, q, v, v, 0.01, np.zeros(3), v)
    with pytest.raises(ValueError, match=r"qs_bar: expected shape \(6, 2\), got \(5, 2\)"):
        gradyn.rollout_vjp(model, q, v, np.zeros((5, 2)), 0.01, np.zeros((5, 2)), None)
    with pytest.raises(ValueError, match=r"taus: expected shape \(\*, 2\)"):
        gradyn.rollout_vjp(model, q, v, np.zeros((5, 3)), 0.01, None, None)
    with pytest.raises(ValueError, match="max_snapshots"):
        gradyn.rollout_vjp(model, q, v, np.zeros((5, 2)), 0.01, None, None, max_snapshots=-2)
    with pytest.raises(ValueError, match="integrator"):
        gradyn.step_vjp(model, q, v, v, 0.01, q, v, integrator="rk5")


def test_rollout_vjp_from_the_forward_trajectory_equals_recomputing():
    model = gradyn.load(str(MODELS / "mujoco" / "ant.xml"))
    rng = np.random.default_rng(12)
    q0 = model.q0.copy()
    v0 = rng.normal(size=model.nv) * 0.3
    taus = rng.normal(size=(30, model.nv))
    qs, vs = gradyn.rollout(model, q0, v0, taus, 1e-3, integrator="rk4")
    qs_bar, vs_bar = rng.normal(size=qs.shape), rng.normal(size=vs.shape)
    recomputed = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, integrator="rk4")
    reused = gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, integrator="rk4", qs=qs, vs=vs)
    for a, b in zip(recomputed, reused):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="first rows must be q0 and v0"):
        gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, qs=qs + 1.0, vs=vs)
    with pytest.raises(ValueError, match="both forward arrays or neither"):
        gradyn.rollout_vjp(model, q0, v0, taus, 1e-3, qs_bar, vs_bar, qs=qs)
