"""Interior-point contact (paper 000's mixed LCP) from Python: gradyn.load(path, contact='ipm'),
Model.with_contact(model='ipm', ...), a ball landing and resting, agreement with PGS on a ball thrown
along the floor, kappa, the opt-in warm start, RK4 refusing it, bad settings, and gradients through it
(rollout_vjp against central differences, gradcheck)."""

import pathlib
import sys

import numpy as np
import pytest

import gradyn

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402


def test_load_with_ipm_and_ball_lands_and_rests(ball_path):
    model = gradyn.load(ball_path, contact="ipm")
    assert model.contact_model == "ipm"
    s = model.contact_settings
    assert (s["ipm_iterations"], s["ipm_tolerance"], s["ipm_kappa"], s["ipm_friction_directions"]) == (50, 1e-11, 0.0, 4)
    q = model.neutral()
    q[2] = 0.3
    steps = 3000
    qs, vs = gradyn.rollout(model, q, np.zeros(model.nv), np.zeros((steps, model.nv)), 1e-3, "euler")
    assert abs(qs[-1, 2] - 0.1) < 1e-3  # resting on the floor, not through it
    assert np.abs(vs[-1]).max() < 1e-6
    # No drift once at rest.
    assert np.abs(qs[-1, :3] - qs[-1000, :3]).max() < 1e-6


def test_ball_thrown_along_the_floor_matches_pgs(ball_path):
    """Sliding along x (a friction direction of both cones) then rolling: the same LCP for PGS and IPM."""
    ipm = gradyn.load(ball_path, contact="ipm")
    ipm = ipm.with_contact(model="ipm", ipm_tolerance=1e-13)
    pgs = ipm.with_contact(model="pgs", pgs_iterations=1000, pgs_tolerance=1e-14)
    q = ipm.neutral()
    q[2] = 0.1 - 5e-5  # in contact, within the slop
    v = np.zeros(ipm.nv)
    v[0] = 1.0
    taus = np.zeros((600, ipm.nv))
    qs_i, vs_i = gradyn.rollout(ipm, q, v, taus, 1e-3, "euler")
    qs_p, vs_p = gradyn.rollout(pgs, q, v, taus, 1e-3, "euler")
    np.testing.assert_allclose(vs_i, vs_p, atol=1e-7)
    np.testing.assert_allclose(qs_i, qs_p, atol=1e-8)
    # It slid, then rolled without slipping (speed = omega_y r; the free joint's v is body-frame, so compare
    # magnitudes): a solid sphere keeps 5/7 of its speed once the slip has stopped (after ~0.04 s).
    speed = np.linalg.norm(vs_i[100, :3])
    assert speed == pytest.approx(5 / 7, abs=2e-3)
    assert vs_i[100, 4] * 0.1 == pytest.approx(speed, rel=2e-3)


def test_with_contact_ipm_settings_and_kappa(ball_path):
    model = gradyn.load(ball_path).with_contact(model="ipm", ipm_kappa=1e-6, ipm_friction_directions=8,
                                                  ipm_iterations=80, ipm_tolerance=1e-9)
    s = model.contact_settings
    assert s["model"] == "ipm" and s["ipm_kappa"] == 1e-6 and s["ipm_friction_directions"] == 8
    assert s["ipm_iterations"] == 80 and s["ipm_tolerance"] == 1e-9
    # kappa > 0: the resting contact pushes back slightly harder than the weight (a soft barrier).
    q = model.neutral()
    q[2] = 0.1
    _, v = gradyn.step(model, q, np.zeros(model.nv), np.zeros(model.nv), 1e-3)
    assert 0 < v[2] < 1e-3
    for field, value in (("ipm_kappa", -1.0), ("ipm_friction_directions", 2), ("ipm_iterations", 0)):
        with pytest.raises(gradyn.ModelError, match=field):
            model.with_contact(model="ipm", **{field: value})


def test_warm_start_is_opt_in_and_gives_the_cold_rollout():
    """with_contact(ipm_warm_start=True) on the quadruped standing on its four toes (slightly pushed):
    each solve starts from the previous step's solution, and the rollout is the cold one to the solver's
    tolerance (seen: 2e-8 m/s in v, 3e-10 in q over 500 steps), though not bit for bit (the stopping point
    now depends on the previous step)."""
    cold = scene.with_stance_springs(scene.load_gradyn(contact="ipm"))
    warm = scene.with_stance_springs(scene.load_gradyn(contact="ipm", ipm_warm_start=True))
    assert cold.contact_settings["ipm_warm_start"] is False  # the default
    assert warm.contact_settings["ipm_warm_start"] is True
    assert warm.with_contact(model="ipm").contact_settings["ipm_warm_start"] is True  # kept unless given
    assert warm.with_contact(model="ipm", ipm_warm_start=False).contact_settings["ipm_warm_start"] is False
    q0 = scene.stance(cold)
    v0 = np.zeros(cold.nv)
    v0[0] = 0.05
    taus = np.zeros((500, cold.nv))
    qs_c, vs_c = gradyn.rollout(cold, q0, v0, taus, 1e-3)
    qs_w, vs_w = gradyn.rollout(warm, q0, v0, taus, 1e-3)
    assert all(sum(c["depth"] >= 0 for c in gradyn.collide(cold, q)) == 4 for q in qs_c[::50])
    np.testing.assert_allclose(vs_w, vs_c, rtol=0, atol=1e-7)
    np.testing.assert_allclose(qs_w, qs_c, rtol=0, atol=1e-9)
    assert not np.array_equal(vs_w, vs_c), "the setting did not reach the solver"
    for bad in ("yes", 1, 1.0):
        with pytest.raises(TypeError):
            cold.with_contact(model="ipm", ipm_warm_start=bad)


def test_rk4_refuses_ipm(ball_path):
    model = gradyn.load(ball_path, contact="ipm")
    q = model.neutral()
    with pytest.raises(ValueError, match="ipm"):
        gradyn.rollout(model, q, np.zeros(model.nv), np.zeros((2, model.nv)), 1e-3, "rk4")
    z = np.zeros(model.nv)
    with pytest.raises(ValueError, match="ipm"):
        gradyn.step_vjp(model, q, z, z, 1e-3, np.ones(model.nq), np.ones(model.nv), "rk4")


# (height, free-joint velocity: body-frame linear then angular, kappa); the ball starts in contact.
# Sliding and bouncing are strictly complementary at kappa = 0; a rolling or resting ball sticks, where
# the polyhedral cone's unloaded directions are degenerate: kappa > 0 makes the step smooth there.
GRADIENT_CASES = {
    "sliding": (0.0985, [0.6, -0.2, 0.0, 0.0, 0.0, 0.0], 0.0),
    "bouncing": (0.0995, [0.1, 0.0, -1.5, 0.0, 0.0, 0.0], 0.0),
    "rolling (kappa)": (0.0985, [0.5, 0.0, 0.0, 0.0, 5.0, 0.0], 1e-7),
    "resting (kappa)": (0.0985, [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], 1e-7),
}


@pytest.mark.parametrize("case", sorted(GRADIENT_CASES))
def test_rollout_vjp_through_ipm_matches_central_differences(ball_path, case):
    height, v, kappa = GRADIENT_CASES[case]
    model = gradyn.load(ball_path).with_contact(model="ipm", ipm_tolerance=1e-13, ipm_iterations=100,
                                                ipm_kappa=kappa)
    q0 = model.neutral()
    q0[2] = height
    v0 = np.asarray(v, dtype=float)
    T, dt = 40, 1e-3
    rng = np.random.default_rng(5)
    taus = 0.1 * rng.standard_normal((T, model.nv))
    w_q, w_v = rng.standard_normal(model.nq), rng.standard_normal(model.nv)
    qs, vs = gradyn.rollout(model, q0, v0, taus, dt)
    qs_bar, vs_bar = np.zeros_like(qs), np.zeros_like(vs)
    qs_bar[-1], vs_bar[-1] = w_q, w_v
    q0_bar, v0_bar, taus_bar, p_bar = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, qs=qs, vs=vs)

    def loss(q, v, tau, m=model):
        qs, vs = gradyn.rollout(m, q, v, tau, dt)
        return qs[-1] @ w_q + vs[-1] @ w_v

    h = 1e-6
    fd_v = np.array([(loss(q0, v0 + h * e, taus) - loss(q0, v0 - h * e, taus)) / (2 * h) for e in np.eye(model.nv)])
    fd_q = np.array([(loss(q0 + h * e, v0, taus) - loss(q0 - h * e, v0, taus)) / (2 * h) for e in np.eye(model.nq)])
    scale = max(1.0, np.abs(fd_v).max(), np.abs(fd_q).max())
    np.testing.assert_allclose(v0_bar, fd_v, atol=1e-5 * scale)
    np.testing.assert_allclose(q0_bar, fd_q, atol=1e-5 * scale)
    fd_tau = (loss(q0, v0, taus + h * np.eye(1, taus.size, 7).reshape(taus.shape))
              - loss(q0, v0, taus - h * np.eye(1, taus.size, 7).reshape(taus.shape))) / (2 * h)
    assert taus_bar.flat[7] == pytest.approx(fd_tau, abs=1e-5 * max(1.0, abs(fd_tau)))
    names, p0 = model.param_names, model.params
    for name in ("ball.mass", "ball.size[0]", "floor.friction"):
        k = names.index(name)
        e = np.zeros_like(p0)
        e[k] = 1e-6
        fd = (loss(q0, v0, taus, model.with_params(p0 + e)) - loss(q0, v0, taus, model.with_params(p0 - e))) / 2e-6
        assert abs(p_bar[k] - fd) <= 1e-4 * max(1.0, abs(fd)), (name, p_bar[k], fd)


def test_step_jacobian_of_a_landing_ball_matches_central_differences(ball_path):
    """A ball that lands and sticks: its four friction directions all active, their split not unique.
    The implicit system at such a solution is singular up to the solver's last D = s / z (which an
    iteration converging far past its tolerance makes ~1e-17); the floor on D keeps the step Jacobian
    equal to central differences (it was up to 58 off without it)."""
    model = gradyn.load(ball_path).with_contact(model="ipm", ipm_tolerance=1e-13, ipm_iterations=100)
    q0 = model.neutral()
    q0[2] = 0.0995
    v0 = np.array([0.1, 0.0, -1.5, 0.0, 0.0, 0.0])
    T, dt, h = 40, 1e-3, 1e-6
    taus = 0.1 * np.random.default_rng(5).standard_normal((T, model.nv))
    qs, vs = gradyn.rollout(model, q0, v0, taus, dt)
    for t in range(T):
        A = gradyn.step_jacobian(model, qs[t], vs[t], taus[t], dt)[0]
        fd = np.array([(gradyn.step(model, qs[t], vs[t] + h * e, taus[t], dt)[1]
                        - gradyn.step(model, qs[t], vs[t] - h * e, taus[t], dt)[1]) / (2 * h) for e in np.eye(6)]).T
        np.testing.assert_allclose(A[6:, 6:], fd, atol=1e-6, err_msg=f"step {t}")


def test_gradcheck_through_ipm_contact(ball_path):
    """The hand-written adjoint against forward mode (implicit derivatives of each LCP) and FD. The
    ball sticks within the first step (Baumgarte's push gives a large normal impulse). At kappa = 0 the
    N friction-direction impulses of a sticking contact are not unique, and the cfm derivative at
    cfm = 0 then depends on which decomposition the solver returned (one-sided FD converges to 0.69,
    the adjoint gives 0.55 on that entry); kappa > 0 makes the impulses unique and every entry exact."""
    model = gradyn.load(ball_path).with_contact(model="ipm", ipm_tolerance=1e-13, ipm_iterations=100,
                                                ipm_kappa=1e-7)
    q0 = model.neutral()
    q0[2] = 0.0985
    v0 = np.array([0.6, -0.2, 0.0, 0.0, 0.0, 0.0])
    r = gradyn.gradcheck(model, q0, v0, np.zeros((30, model.nv)), 1e-3)
    for name, b in r.items():
        assert b["ad_error"] <= 1e-8, (name, b)
        assert b["fd_error"] <= 2e-5, (name, b)  # seen: 6e-6 (params), below 1e-7 elsewhere
