"""Velocity-level (PGS) contact from Python: gradyn.load(path, contact='pgs'), Model.with_contact(model='pgs'),
a ball resting on the floor without drift, RK4 and the gradients refusing it, bad settings."""

import numpy as np
import pytest

import gradyn

def test_load_with_pgs_and_ball_lands_and_rests(ball_path):
    model = gradyn.load(ball_path, contact="pgs")
    assert model.contact_model == "pgs"
    q = model.neutral()
    q[2] = 0.3
    steps = 3000
    qs, vs = gradyn.rollout(model, q, np.zeros(model.nv), np.zeros((steps, model.nv)), 1e-3, "euler")
    assert abs(qs[-1, 2] - 0.1) < 1e-3  # resting on the floor, not through it
    assert np.abs(vs[-1]).max() < 1e-6


def test_with_contact_pgs_settings(ball_path):
    model = gradyn.load(ball_path).with_contact(model="pgs", erp=0.5, cfm=1e-6, pgs_iterations=50)
    s = model.contact_settings
    assert s["model"] == "pgs" and s["erp"] == 0.5 and s["cfm"] == 1e-6 and s["pgs_iterations"] == 50
    with pytest.raises(gradyn.ModelError, match="erp"):
        model.with_contact(model="pgs", erp=2.0)


def test_rk4_refuses_pgs(ball_path):
    model = gradyn.load(ball_path, contact="pgs")
    q = model.neutral()
    with pytest.raises(ValueError, match="pgs"):
        gradyn.rollout(model, q, np.zeros(model.nv), np.zeros((2, model.nv)), 1e-3, "rk4")
    z = np.zeros(model.nv)
    with pytest.raises(ValueError, match="pgs"):
        gradyn.step_vjp(model, q, z, z, 1e-3, np.ones(model.nq), np.ones(model.nv), integrator="rk4")