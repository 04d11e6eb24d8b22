"""Penalty contact from Python: gradyn.load(path, contact='penalty'), Model.with_contact, a sphere
settling at the Hunt-Crossley equilibrium depth, the gradients refusing contact, bad settings."""

import numpy as np
import pytest

import gradyn

def drop(model, z0=0.3, steps=3000, dt=1e-3, integrator="euler"):
    q = model.neutral()
    q[2] = z0
    taus = np.zeros((steps, model.nv))
    qs, vs = gradyn.rollout(model, q, np.zeros(model.nv), taus, dt, integrator)
    return qs, vs


def test_default_is_no_contact(ball_path):
    model = gradyn.load(ball_path)
    assert model.contact_model is None
    assert model.contact_settings["model"] is None
    qs, _ = drop(model, steps=500)
    assert qs[-1, 2] < 0.3 - 0.5 * 9.81 * 0.5**2 + 1e-3  # free fall through the floor


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_sphere_settles_at_equilibrium_depth(ball_path, integrator):
    model = gradyn.load(ball_path, contact="penalty")
    assert model.contact_model == "penalty"
    k, p = 1e4, 1.5
    model = model.with_contact(stiffness=k, exponent=p, damping=5.0)
    assert model.contact_settings["stiffness"] == k
    qs, vs = drop(model, integrator=integrator)
    depth = (1.0 * 9.81 / k) ** (1 / p)
    assert qs[-1, 2] == pytest.approx(0.1 - depth, abs=2e-5)
    assert np.abs(vs[-1]).max() < 1e-3
    # It bounced at most slightly (damped) and never went through the floor.
    assert qs[:, 2].min() > 0.1 - 3 * depth


def test_friction_models_and_defaults(ball_path):
    model = gradyn.load(ball_path, contact="penalty")
    s = model.contact_settings
    assert s == {"model": "penalty", "stiffness": 1e5, "exponent": 1.5, "damping": 1.0, "friction": "smooth_coulomb",
                 "velocity_scale": 1e-2, "static_friction_ratio": 1.2, "viscous_friction": 0.0, "margin": 0.0,
                 "pgs_iterations": 100, "pgs_tolerance": 1e-10, "erp": 0.2, "slop": 1e-4, "cfm": 0.0,
                 "restitution_threshold": 0.1, "max_correction_velocity": 0.5, "ipm_iterations": 50, "ipm_tolerance": 1e-11, "ipm_kappa": 0.0,
                 "ipm_friction_directions": 4, "ipm_warm_start": False, "pgs_gradient": "implicit",
                 "limit_stiffness": 1e4, "limit_damping": 20.0, "limit_margin": 1e-3}
    brown = model.with_contact(friction="brown", static_friction_ratio=1.5)
    assert brown.contact_settings["friction"] == "brown"
    assert brown.with_contact("none").contact_model is None
    # A ball thrown sideways onto the floor slows down under friction with both models.
    for m in (model, brown):
        q = m.neutral()
        q[2] = 0.1 - 1e-3
        v = np.zeros(m.nv)
        v[0] = 1.0
        for _ in range(200):
            q, v = gradyn.step(m, q, v, np.zeros(m.nv), 1e-3)
        assert 0 <= v[0] < 0.95


def test_tuning_a_setting_keeps_the_contact_model(ball_path):
    # with_contact without model= changes only what it is given; a model without contact gets 'penalty'
    for name in ("penalty", "pgs", "ipm"):
        tuned = gradyn.load(ball_path, contact=name).with_contact(cfm=1e-6)
        assert tuned.contact_model == name
        assert tuned.contact_settings["cfm"] == 1e-6
    assert gradyn.load(ball_path).with_contact(stiffness=2e5).contact_model == "penalty"
    assert gradyn.load(ball_path, contact="ipm").with_contact("none").contact_model is None


def test_bad_settings_raise(ball_path):
    model = gradyn.load(ball_path)
    with pytest.raises(ValueError, match="contact: expected None, 'penalty', 'pgs' or 'ipm'"):
        gradyn.load(ball_path, contact="spring")
    with pytest.raises(ValueError, match="model: expected None, 'penalty', 'pgs' or 'ipm', got 'lcp'"):
        model.with_contact(model="lcp")
    with pytest.raises(gradyn.ModelError, match="stiffness"):
        model.with_contact(stiffness=-1.0)
    with pytest.raises(gradyn.ModelError, match="exponent"):
        model.with_contact(exponent=0.5)
    with pytest.raises(gradyn.ModelError, match="velocity_scale"):
        model.with_contact(velocity_scale=0.0)
    with pytest.raises(gradyn.ModelError, match="damping"):
        model.with_contact(damping=float("nan"))
    with pytest.raises(ValueError, match="friction: expected"):
        model.with_contact(friction="viscous")
