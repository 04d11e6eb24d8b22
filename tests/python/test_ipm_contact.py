"""Interior-point contact (paper 000's mixed LCP) from Python: gradyn.load(path, contact='ipm'),
Model.with_contact(model='ipm', ...), a ball landing and resting, agreement with PGS on a ball thrown
along the floor, RK4 and the gradients refusing it, bad settings."""

import numpy as np
import pytest

import gradyn


def test_load_with_ipm_and_ball_lands_and_rests(ball_path):
    model = gradyn.load(ball_path, contact="ipm")
    assert model.contact_model == "ipm"
    s = model.contact_settings
    assert (s["ipm_iterations"], s["ipm_tolerance"], s["ipm_kappa"], s["ipm_friction_directions"]) == (50, 1e-10, 0.0, 4)
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


def test_rk4_and_gradients_refuse_ipm(ball_path):
    model = gradyn.load(ball_path, contact="ipm")
    q = model.neutral()
    with pytest.raises(ValueError, match="ipm"):
        gradyn.rollout(model, q, np.zeros(model.nv), np.zeros((2, model.nv)), 1e-3, "rk4")
    z = np.zeros(model.nv)
    with pytest.raises(ValueError, match="contact"):
        gradyn.step_vjp(model, q, z, z, 1e-3, np.ones(model.nq), np.ones(model.nv))
