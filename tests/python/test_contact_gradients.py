"""Gradients through contact from Python: rollout_vjp against central differences for a ball
sliding, bouncing and rolling on the floor (penalty and PGS contact), gradcheck through contact,
and the per-step adjoint norms and clipping; PGS's two adjoints where contacts are redundant."""

import pathlib
import sys

import numpy as np
import pytest

import gradyn

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _ball(ball_path, contact, **settings):
    model = gradyn.load(ball_path, contact=contact)
    if settings:
        model = model.with_contact(model=contact, **settings)
    return model


def _start(model, height, v):
    q = model.neutral()
    q[2] = height
    return q, np.asarray(v, dtype=float)


CASES = {
    # free joint velocity: body-frame linear, then angular
    "sliding": (0.0985, [0.6, -0.2, 0.0, 0.0, 0.0, 0.0]),
    # already touching: a contact appearing within the rollout is an event the gradient cannot see
    "bouncing": (0.0995, [0.1, 0.0, -1.5, 0.0, 0.0, 0.0]),
    "rolling": (0.0985, [0.5, 0.0, 0.0, 0.0, 5.0, 0.0]),
    "sticking": (0.0985, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
}


def _loss_and_grad(model, q0, v0, taus, dt, w_q, w_v):
    qs, vs = gradyn.rollout(model, q0, v0, taus, dt)
    qs_bar = np.zeros_like(qs)
    vs_bar = np.zeros_like(vs)
    qs_bar[-1] = w_q
    vs_bar[-1] = w_v
    grads = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, qs=qs, vs=vs)
    return qs[-1] @ w_q + vs[-1] @ w_v, grads


@pytest.mark.parametrize("contact", ["penalty", "pgs", "pgs-sweeps"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rollout_vjp_through_contact_matches_central_differences(ball_path, contact, case):
    if contact == "penalty":
        model = _ball(ball_path, "penalty", stiffness=1e4, damping=1.0, velocity_scale=0.05)
    else:
        mode = "sweeps" if contact == "pgs-sweeps" else "implicit"
        model = _ball(ball_path, "pgs", pgs_iterations=300, pgs_tolerance=1e-14, pgs_gradient=mode)
    q0, v0 = _start(model, *CASES[case])
    T, dt = 40, 1e-3
    rng = np.random.default_rng(3)
    taus = 0.1 * rng.standard_normal((T, model.nv))
    w_q, w_v = rng.standard_normal(model.nq), rng.standard_normal(model.nv)
    _, (q0_bar, v0_bar, taus_bar, p_bar) = _loss_and_grad(model, q0, v0, taus, dt, w_q, w_v)

    def loss(q, v, tau, m=model):
        qs, vs = gradyn.rollout(m, q, v, tau, dt)
        return qs[-1] @ w_q + vs[-1] @ w_v

    h = 1e-7
    fd_v = np.array([(loss(q0, v0 + h * e, taus) - loss(q0, v0 - h * e, taus)) / (2 * h) for e in np.eye(model.nv)])
    fd_q = np.array([(loss(q0 + h * e, v0, taus) - loss(q0 - h * e, v0, taus)) / (2 * h) for e in np.eye(model.nq)])
    scale = max(1.0, np.abs(fd_v).max(), np.abs(fd_q).max())
    np.testing.assert_allclose(v0_bar, fd_v, atol=1e-5 * scale)
    np.testing.assert_allclose(q0_bar, fd_q, atol=1e-5 * scale)
    # parameters: the ball's mass and radius, the floor's friction (geoms and bodies in the flat vector)
    names = model.param_names
    p0 = model.params
    for name in ("ball.mass", "ball.size[0]", "floor.friction"):
        if name not in names:
            pytest.fail(f"{name} missing from param_names")
        k = names.index(name)
        e = np.zeros_like(p0)
        e[k] = 1e-6
        fd = (loss(q0, v0, taus, model.with_params(p0 + e)) - loss(q0, v0, taus, model.with_params(p0 - e))) / 2e-6
        assert abs(p_bar[k] - fd) <= 1e-4 * max(1.0, abs(fd)), (name, p_bar[k], fd)


def test_gradcheck_through_penalty_contact(ball_path):
    model = _ball(ball_path, "penalty", stiffness=1e4, damping=1.0, velocity_scale=0.05)
    q0, v0 = _start(model, *CASES["sliding"])
    r = gradyn.gradcheck(model, q0, v0, np.zeros((30, model.nv)), 1e-3)
    assert set(r) == {"q0", "v0", "taus", "params"}
    for name, b in r.items():
        assert b["ad_error"] <= 1e-9, (name, b)
        assert b["fd_error"] <= 1e-5, (name, b)
        assert b["scale"] > 0


def test_adjoint_norms_and_clipping(ball_path):
    model = _ball(ball_path, "penalty", stiffness=1e4, damping=1.0, velocity_scale=0.05)
    q0, v0 = _start(model, *CASES["bouncing"])
    T, dt = 80, 1e-3
    taus = np.zeros((T, model.nv))
    qs_bar = np.zeros((T + 1, model.nq))
    qs_bar[-1, 2] = 1.0
    *_, norms = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, None, return_norms=True)
    assert norms.shape == (T + 1,)
    assert norms[-1] == pytest.approx(1.0)
    cap = 0.5 * norms.max()
    q0_bar, v0_bar, *_ = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, None, clip_norm=cap)
    assert np.sqrt(q0_bar @ q0_bar + v0_bar @ v0_bar) <= cap * (1 + 1e-12)
    with pytest.raises(ValueError, match="clip_norm"):
        gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, None, clip_norm=-1.0)




def _racecar_final_x_gradient(gradient):
    """d x_T / d (v0, params) of examples/control/racecar_friction.py's car (a rigid chassis on four
    sphere wheels, the front two on steering knuckles: its four normal contacts are redundant, three
    would hold it) at mu = 0.1, over its 1 s episode (1000 PGS steps): the wheels slide, then roll."""
    sys.path.insert(0, str(ROOT / "examples" / "control"))
    import racecar_friction as rf

    car = rf.Racecar()
    car.model = car.model.with_contact(pgs_gradient=gradient)
    qs, vs = car.rollout(0.1)
    qs_bar = np.zeros_like(qs)
    qs_bar[-1, 0] = 1.0
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the implicit adjoint's overflow warns)
        grads = gradyn.rollout_vjp(car.model, car.q0, car.v0, car.taus, rf.DT, qs_bar, None, params=car.params(0.1),
                                   qs=qs, vs=vs, threads=1)
    return np.concatenate([grads[1], grads[3]])


def test_redundant_contacts_sweeps_adjoint_stays_bounded():
    g = _racecar_final_x_gradient("sweeps")
    assert np.isfinite(g).all() and np.abs(g).max() < 1e3


@pytest.mark.xfail(strict=True, reason="known defect (README, 'Gradients through contact'): where contacts are "
                   "redundant (a car's four wheels on a rigid chassis) the implicit PGS adjoint grows by about 550 "
                   "per step while the car rolls and overflows")
def test_redundant_contacts_implicit_adjoint_stays_bounded():
    g = _racecar_final_x_gradient("implicit")
    assert np.isfinite(g).all() and np.abs(g).max() < 1e3
