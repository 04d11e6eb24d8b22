"""gradyn.step_jacobian: the analytical step Jacobian in tangent coordinates, against central
differences of gradyn.step (q moved by gradyn.integrate, compared by gradyn.difference) and against
step_vjp, on the shipped quadruped without contact and standing on its toes under each contact model."""

import pathlib
import sys

import numpy as np
import pytest

import gradyn

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples" / "laikago_contact"))
import laikago_scene as scene  # noqa: E402

DT = 1e-3


def _standing(contact):
    model = scene.with_stance_springs(scene.load_gradyn(contact=contact))
    qs, vs = gradyn.rollout(model, scene.stance(model), np.zeros(model.nv), np.zeros((300, model.nv)), DT)
    return model, qs[-1], vs[-1] + 0.05  # moving a little, so that friction and damping act


def _central_differences(model, q, v, tau, h=1e-6):
    nv = model.nv
    q_ref, _ = gradyn.step(model, q, v, tau, DT)
    J = np.zeros((2 * nv, 3 * nv))
    for c in range(3 * nv):
        def state(sign):
            dx = np.zeros(3 * nv)
            dx[c] = sign * h
            qn, vn = gradyn.step(model, gradyn.integrate(model, q, dx[:nv]), v + dx[nv:2 * nv], tau + dx[2 * nv:], DT)
            return np.concatenate([gradyn.difference(model, q_ref, qn), vn])
        J[:, c] = (state(1.0) - state(-1.0)) / (2 * h)
    return J


# Central differences of a step whose impulses are solved to a tolerance: PGS is run to 1e-14 here
# (its default 1e-10 would leave ~1e-4 of noise in differences of 1e-6); the ipm's 1e-10 leaves less.
TOLERANCE = {None: 1e-6, "penalty": 1e-6, "pgs": 1e-5, "ipm": 1e-5}


def _model_for(contact):
    model, q, v = _standing(contact)
    if contact == "pgs":
        model = model.with_contact(model="pgs", pgs_tolerance=1e-14, pgs_iterations=5000)
    return model, q, v


@pytest.mark.parametrize("contact", [None, "penalty", "pgs", "ipm"])
def test_step_jacobian_matches_central_differences(contact):
    model, q, v = _model_for(contact)
    if contact is not None:
        assert len(gradyn.collide(model, q)) == 4
    tau = np.linspace(-1.0, 1.0, model.nv)
    A, B = gradyn.step_jacobian(model, q, v, tau, DT)
    assert A.shape == (2 * model.nv, 2 * model.nv) and B.shape == (2 * model.nv, model.nv)
    J = np.hstack([A, B])
    fd = _central_differences(model, q, v, tau)
    assert np.max(np.abs(J - fd)) / np.max(np.abs(fd)) < TOLERANCE[contact]


# step_vjp re-solves the step's LCP; the ipm (tolerance 1e-10, warm-started from the last solution)
# lands on a point a little different each time, and its linearisation there, through D = s / z of
# nearly inactive rows, moves by ~1e-8 relative (a 1e-15 change of v moves it by 1e-8 too).
ROWS_TOLERANCE = {"penalty": 1e-9, "pgs": 1e-9, "ipm": 1e-7}


@pytest.mark.parametrize("contact", ["penalty", "pgs", "ipm"])
def test_step_jacobian_velocity_rows_match_step_vjp(contact):
    # v_next does not depend on how q is parametrised: its rows are step_vjp's v and tau adjoints
    # (for PGS, step_vjp's default implicit gradient: the same active-set derivative).
    model, q, v = _model_for(contact)
    tau = np.zeros(model.nv)
    A, B = gradyn.step_jacobian(model, q, v, tau, DT)
    for r in (0, 5, 9, 17):
        seed = np.zeros(model.nv)
        seed[r] = 1.0
        _, v_bar, tau_bar, _ = gradyn.step_vjp(model, q, v, tau, DT, np.zeros(model.nq), seed)
        np.testing.assert_allclose(A[model.nv + r, model.nv:], v_bar, rtol=0, atol=ROWS_TOLERANCE[contact] * max(1.0, np.abs(v_bar).max()))
        np.testing.assert_allclose(B[model.nv + r], tau_bar, rtol=0, atol=ROWS_TOLERANCE[contact] * max(1.0, np.abs(tau_bar).max()))


def test_step_jacobian_refuses_what_it_does_not_cover():
    model, q, v = _standing(None)
    tau = np.zeros(model.nv)
    with pytest.raises(ValueError, match="SemiImplicitEuler"):
        gradyn.step_jacobian(model, q, v, tau, DT, integrator="rk4")
    with pytest.raises(ValueError, match="tau"):
        gradyn.step_jacobian(model, q, v, np.zeros(model.nv + 1), DT)
