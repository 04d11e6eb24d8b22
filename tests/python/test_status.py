"""gradyn.Status: step and rollout report numerical trouble (divergence, a contact solver that did
not converge, deep penetration) as flags instead of raising, per step."""

import pathlib

import numpy as np
import pytest

import gradyn

DT = 1e-3


def resting_ball(path, contact, depth=1e-4, **settings):
    model = gradyn.load(path, contact=contact)
    if settings:
        model = model.with_contact(**settings)
    q = model.neutral()
    q[2] = 0.1 - depth  # radius 0.1 m
    return model, q, np.zeros(model.nv), np.zeros(model.nv)


def test_status_is_an_int_flag():
    S = gradyn.Status
    assert S.OK == 0
    bits = [S.NON_FINITE, S.SINGULAR_INERTIA, S.CONTACT_OVERFLOW, S.BROADPHASE_OVERFLOW,
            S.SOLVER_NOT_CONVERGED, S.DEEP_PENETRATION]
    assert sorted(int(b) for b in bits) == [1, 2, 4, 8, 16, 32]
    both = S.NON_FINITE | S.DEEP_PENETRATION
    assert S.NON_FINITE in both and S.SOLVER_NOT_CONVERGED not in both


@pytest.mark.parametrize("contact", ["penalty", "pgs", "ipm"])
def test_a_good_step_reports_ok_and_the_default_return_is_unchanged(ball_path, contact):
    model, q, v, tau = resting_ball(ball_path, contact)
    plain = gradyn.step(model, q, v, tau, DT)
    assert len(plain) == 2
    q1, v1, status = gradyn.step(model, q, v, tau, DT, return_status=True)
    assert isinstance(status, gradyn.Status) and status == gradyn.Status.OK
    np.testing.assert_array_equal(q1, plain[0])
    np.testing.assert_array_equal(v1, plain[1])


@pytest.mark.parametrize("contact, settings", [("none", {}), ("penalty", {}), ("pgs", {}), ("ipm", {}),
                                               ("ipm", {"ipm_warm_start": True})])
def test_a_nan_torque_is_flagged_not_raised_and_does_not_stick(ball_path, contact, settings):
    # The solvers' warm starts (PGS's always, ipm's opt-in) must not carry the NaN into later steps.
    model, q, v, tau = resting_ball(ball_path, contact, **settings)
    bad = tau.copy()
    bad[0] = np.nan
    q1, v1, status = gradyn.step(model, q, v, bad, DT, return_status=True)
    assert gradyn.Status.NON_FINITE in status
    assert not np.all(np.isfinite(v1))
    # The next call reports its own step only.
    _, _, status = gradyn.step(model, q, v, tau, DT, return_status=True)
    assert status == gradyn.Status.OK


@pytest.mark.parametrize("contact, settings", [("pgs", {"pgs_iterations": 1}), ("ipm", {"ipm_iterations": 1})])
def test_a_solver_stopped_by_its_iteration_limit_is_flagged(ball_path, contact, settings):
    # Sliding along the floor: friction and the normal row both active.
    model, q, v, tau = resting_ball(ball_path, contact, **settings)
    v[0] = 1.0
    _, v1, status = gradyn.step(model, q, v, tau, DT, return_status=True)
    assert status == gradyn.Status.SOLVER_NOT_CONVERGED
    assert np.all(np.isfinite(v1))
    model_default, *_ = resting_ball(ball_path, contact)
    _, _, status = gradyn.step(model_default, q, v, tau, DT, return_status=True)
    assert status == gradyn.Status.OK


@pytest.mark.parametrize("contact", ["penalty", "pgs", "ipm"])
def test_deep_penetration_follows_max_penetration(ball_path, contact):
    model, q, v, tau = resting_ball(ball_path, contact, depth=0.06)
    _, _, status = gradyn.step(model, q, v, tau, DT, return_status=True)  # default bound 0.05 m
    assert gradyn.Status.DEEP_PENETRATION in status
    tolerant = model.with_contact(max_penetration=0.1)
    _, _, status = gradyn.step(tolerant, q, v, tau, DT, return_status=True)
    assert gradyn.Status.DEEP_PENETRATION not in status
    for bad in (-0.01, np.nan):
        with pytest.raises(gradyn.ModelError, match="max_penetration"):
            model.with_contact(max_penetration=bad)


def test_rollout_reports_each_step(ball_path):
    model, q, v, tau = resting_ball(ball_path, "ipm")
    taus = np.zeros((6, model.nv))
    taus[3, 2] = np.nan  # step 3 diverges, and every step after it starts from NaN
    plain = gradyn.rollout(model, q, v, taus, DT)
    assert len(plain) == 2
    qs, vs, status = gradyn.rollout(model, q, v, taus, DT, return_status=True)
    assert status.dtype == np.uint32 and status.shape == (6,)
    np.testing.assert_array_equal(status[:3], 0)
    assert np.all(status[3:] & gradyn.Status.NON_FINITE)
    np.testing.assert_array_equal(qs[:4], plain[0][:4])
    # Deep at the start only: the first step is flagged, the ones after the ball was pushed out not.
    model, q, v, tau = resting_ball(ball_path, "pgs", depth=0.06)
    _, _, status = gradyn.rollout(model, q, v, np.zeros((400, model.nv)), DT, return_status=True)
    assert status[0] == gradyn.Status.DEEP_PENETRATION
    assert status[-1] == gradyn.Status.OK
    _, _, status = gradyn.rollout(model, q, v, np.zeros((0, model.nv)), DT, return_status=True)
    assert status.shape == (0,)


@pytest.mark.parametrize("contact", ["penalty", "pgs", "ipm"])
def test_the_gradient_of_a_diverged_rollout_says_where_it_diverged(contact):
    import sys
    import warnings

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples" / "laikago_contact"))
    import laikago_scene as scene

    model = scene.load_gradyn(contact)
    q = scene.stance(model, clearance=0.01)
    rng = np.random.default_rng(0)
    T = 60
    wild = 3000 * rng.normal(size=(T, model.nv))  # torques no robot survives: NaN within tens of steps
    calm = 0.1 * rng.normal(size=(T, model.nv))
    _, _, status = gradyn.rollout(model, q, np.zeros(model.nv), wild, 1e-3, return_status=True)
    first = int(np.argmax((status & int(gradyn.Status.NON_FINITE)) != 0))
    assert first > 0
    vs_bar = np.zeros((T + 1, model.nv))
    vs_bar[-1] = 1.0
    with pytest.warns(RuntimeWarning, match=f"diverged .*: at step {first}; the gradient of a diverged trajectory"):
        out = gradyn.rollout_vjp(model, q, np.zeros(model.nv), wild, 1e-3, None, vs_bar)
    assert not np.isfinite(out[0]).all()
    # in a batch, the diverged world is named and the other worlds' gradients are exact
    q0 = np.stack([q, q])
    taus = np.stack([calm, wild])
    with pytest.warns(RuntimeWarning, match=f"world 1 at step {first};"):
        batch = gradyn.rollout_vjp(model, q0, np.zeros((2, model.nv)), taus, 1e-3, None, np.stack([vs_bar, vs_bar]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finite gradient warns of nothing
        alone = gradyn.rollout_vjp(model, q, np.zeros(model.nv), calm, 1e-3, None, vs_bar)
    np.testing.assert_array_equal(batch[0][0], alone[0])


def test_a_nan_seed_is_named_as_the_cause(ball_path):
    model = gradyn.load(ball_path, contact="penalty")
    q, v = model.neutral(), np.zeros(model.nv)
    q[2] = 0.5
    taus = np.zeros((20, model.nv))
    vs_bar = np.zeros((21, model.nv))
    vs_bar[-1, 2] = np.nan
    with pytest.warns(RuntimeWarning, match="qs_bar or vs_bar holds NaN or inf, and so does the gradient"):
        gradyn.rollout_vjp(model, q, v, taus, DT, None, vs_bar)
