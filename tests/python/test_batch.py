"""Many worlds at once (python/src/bind_batch.cpp, src/sim/batch.cpp): a leading batch dimension on
every per-world array, run on a pool of threads. Each world must come out bitwise as the same call
on that world alone, for every thread count; a world that diverges flags itself and nothing else."""

import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradyn

ROOT = Path(__file__).resolve().parents[2]
LAIKAGO = ROOT / "models" / "laikago" / "laikago_toes_zup.urdf"  # toe spheres (its meshes are not shipped)
ARM = ROOT / "tests" / "data" / "mjcf" / "actuated_arm.xml"


def laikago(contact):
    """The laikago on a ground plane, a motor on each of its 12 hinges (from the URDF's effort limits)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its meshes are not shipped
        model = gradyn.load(str(LAIKAGO), floating_base=True).with_ground_plane()
    settings = {"velocity_scale": 0.3} if contact == "penalty" else {}
    return model.with_contact(model=contact, **settings)


def arm_batch(B, T, seed=0):
    model = gradyn.load(str(ARM))
    rng = np.random.default_rng(seed)
    q0 = 0.3 * rng.normal(size=(B, model.nq))
    v0 = rng.normal(size=(B, model.nv))
    taus = 0.1 * rng.normal(size=(B, T, model.nv))
    ctrls = rng.normal(size=(B, T, model.nu))
    return model, q0, v0, taus, ctrls


def test_rollout_is_bitwise_the_same_for_every_thread_count_and_alone():
    B, T, dt = 64, 40, 0.002
    model, q0, v0, taus, ctrls = arm_batch(B, T)
    runs = {threads: gradyn.rollout(model, q0, v0, taus, dt, ctrls=ctrls, threads=threads, return_status=True)
            for threads in (1, 2, 3, None)}
    qs, vs, status = runs[1]
    assert qs.shape == (B, T + 1, model.nq) and vs.shape == (B, T + 1, model.nv) and status.shape == (B, T)
    for threads, (qs_t, vs_t, status_t) in runs.items():
        assert np.array_equal(qs_t, qs) and np.array_equal(vs_t, vs) and np.array_equal(status_t, status), threads
    for b in range(B):
        qs_b, vs_b = gradyn.rollout(model, q0[b], v0[b], taus[b], dt, ctrls=ctrls[b])
        assert np.array_equal(qs_b, qs[b]) and np.array_equal(vs_b, vs[b]), b


def test_rollout_vjp_is_bitwise_the_same_for_every_thread_count_and_alone():
    B, T, dt = 64, 20, 0.002
    model, q0, v0, taus, ctrls = arm_batch(B, T, seed=1)
    rng = np.random.default_rng(2)
    qs_bar, vs_bar = rng.normal(size=(B, T + 1, model.nq)), rng.normal(size=(B, T + 1, model.nv))
    runs = [gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, ctrls=ctrls, threads=threads)
            for threads in (1, 2, None)]
    assert [r.shape for r in runs[0]] == [(B, model.nq), (B, model.nv), (B, T, model.nv),
                                          (B, len(model.param_names)), (B, T, model.nu)]
    for r in runs[1:]:
        assert all(np.array_equal(a, b) for a, b in zip(r, runs[0]))
    for b in range(0, B, 7):
        alone = gradyn.rollout_vjp(model, q0[b], v0[b], taus[b], dt, qs_bar[b], vs_bar[b], ctrls=ctrls[b])
        assert all(np.array_equal(a, r[b]) for a, r in zip(alone, runs[0])), b
    # from the forward arrays: the same numbers again
    qs, vs = gradyn.rollout(model, q0, v0, taus, dt, ctrls=ctrls)
    again = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, ctrls=ctrls, qs=qs, vs=vs)
    assert all(np.array_equal(a, b) for a, b in zip(again, runs[0]))


@pytest.mark.parametrize("contact", ["pgs", "penalty"])
def test_contact_worlds_match_and_a_nan_world_flags_only_itself(contact):
    model = laikago(contact)
    B, T, dt = 64, 30, 1e-3
    rng = np.random.default_rng(3)
    assert model.nu == 12
    q = np.tile(model.neutral(), (B, 1))
    q[:, 2] = 0.515 + 0.01 * rng.random(B)  # toes a few millimetres from the ground, or touching
    v0 = 0.1 * rng.normal(size=(B, model.nv))
    ctrls = 2.0 * rng.normal(size=(B, T, model.nu))  # joint torques through the motors
    clean = gradyn.rollout(model, q, v0, None, dt, ctrls=ctrls, return_status=True, threads=2)
    assert np.isfinite(clean[0]).all()
    contacts = sum(len(gradyn.collide(model, clean[0][b, -1])) for b in range(B))
    assert contacts >= B, "the worlds should touch the ground (on average a toe each)"
    for b in (0, 17, 63):
        qs_b, vs_b, st_b = gradyn.rollout(model, q[b], v0[b], None, dt, ctrls=ctrls[b], return_status=True)
        assert np.array_equal(qs_b, clean[0][b]) and np.array_equal(vs_b, clean[1][b]) and np.array_equal(st_b, clean[2][b])
    poisoned = ctrls.copy()
    poisoned[3, 5, 4] = np.nan
    qs, vs, status = gradyn.rollout(model, q, v0, None, dt, ctrls=poisoned, return_status=True, threads=2)
    assert status[3].any() and (status[3] & int(gradyn.Status.NON_FINITE)).any()
    others = np.arange(B) != 3
    assert np.array_equal(qs[others], clean[0][others]) and np.array_equal(vs[others], clean[1][others])
    assert np.array_equal(status[others], clean[2][others])


def test_per_world_parameters_are_per_world_models():
    B, T, dt = 8, 15, 0.002
    model, q0, v0, taus, ctrls = arm_batch(B, T, seed=4)
    p = np.tile(model.params, (B, 1))
    kp = model.param_names.index("elbow_servo.kp")
    p[:, kp] *= np.linspace(0.5, 2.0, B)  # a population of servo gains
    qs, vs = gradyn.rollout(model, q0, v0, taus, dt, ctrls=ctrls, params=p)
    grads = gradyn.rollout_vjp(model, q0, v0, taus, dt, None, np.ones((B, T + 1, model.nv)), ctrls=ctrls, params=p)
    for b in range(B):
        world = model.with_params(p[b])
        qs_b, vs_b = gradyn.rollout(world, q0[b], v0[b], taus[b], dt, ctrls=ctrls[b])
        assert np.array_equal(qs_b, qs[b]) and np.array_equal(vs_b, vs[b])
        alone = gradyn.rollout_vjp(world, q0[b], v0[b], taus[b], dt, None, np.ones((T + 1, model.nv)), ctrls=ctrls[b])
        assert all(np.array_equal(a, g[b]) for a, g in zip(alone, grads))
    # a single world with params is the rollout of model.with_params
    one = gradyn.rollout(model, q0[2], v0[2], taus[2], dt, ctrls=ctrls[2], params=p[2])
    assert np.array_equal(one[0], qs[2])


def test_batched_step_matches_single_steps():
    B, dt = 16, 0.002
    model, q0, v0, taus, ctrls = arm_batch(B, 1, seed=5)
    qn, vn, status = gradyn.step(model, q0, v0, taus[:, 0], dt, ctrl=ctrls[:, 0], return_status=True, threads=2)
    assert qn.shape == (B, model.nq) and status.shape == (B,)
    for b in range(B):
        q1, v1 = gradyn.step(model, q0[b], v0[b], taus[b, 0], dt, ctrl=ctrls[b, 0])
        assert np.array_equal(q1, qn[b]) and np.array_equal(v1, vn[b])


def test_bad_batches_name_both_arrays_and_their_shapes():
    model, q0, v0, taus, ctrls = arm_batch(4, 5)
    with pytest.raises(ValueError, match=r"batch sizes disagree: q0 has shape \(4, 3\) \(4 worlds\) but taus has "
                                         r"shape \(3, 5, 3\) \(3 worlds\)"):
        gradyn.rollout(model, q0, v0, taus[:3], 0.01)
    with pytest.raises(ValueError, match=r"ctrls: expected shape \(\*, \*, 6\), got \(4, 5, 5\)"):
        gradyn.rollout(model, q0, v0, taus, 0.01, ctrls=ctrls[:, :, :5])
    with pytest.raises(ValueError, match="taus and ctrls disagree on the number of steps"):
        gradyn.rollout(model, q0, v0, taus, 0.01, ctrls=ctrls[:, :4])
    for threads in (0, -2):
        with pytest.raises(ValueError, match=rf"threads: expected a positive number of threads.*got {threads}"):
            gradyn.rollout(model, q0, v0, taus, 0.01, threads=threads)
    with pytest.raises(ValueError, match=r"params: expected shape \(\*, \d+\), got \(4, 2\)"):
        gradyn.rollout(model, q0, v0, taus, 0.01, params=np.zeros((4, 2)))
    bad = np.tile(model.params, (4, 1))
    bad[2, 0] = -1.0  # a negative mass in world 2
    with pytest.raises(ValueError, match=r"params\[2\]:.*mass"):
        gradyn.rollout(model, q0, v0, taus, 0.01, params=bad)


def test_batched_step_vjp_and_step_jacobian_match_single_calls():
    B, dt = 12, 0.002
    model, q0, v0, taus, ctrls = arm_batch(B, 1, seed=6)
    rng = np.random.default_rng(7)
    qn_bar, vn_bar = rng.normal(size=(B, model.nq)), rng.normal(size=(B, model.nv))
    vjp = gradyn.step_vjp(model, q0, v0, taus[:, 0], dt, qn_bar, vn_bar, ctrl=ctrls[:, 0], threads=2)
    A, Bm, B_ctrl = gradyn.step_jacobian(model, q0, v0, taus[:, 0], dt, ctrl=ctrls[:, 0], threads=2)
    assert A.shape == (B, 2 * model.nv, 2 * model.nv) and B_ctrl.shape == (B, 2 * model.nv, model.nu)
    for b in range(B):
        alone = gradyn.step_vjp(model, q0[b], v0[b], taus[b, 0], dt, qn_bar[b], vn_bar[b], ctrl=ctrls[b, 0])
        assert all(np.array_equal(a, r[b]) for a, r in zip(alone, vjp)), b
        A_b, B_b, C_b = gradyn.step_jacobian(model, q0[b], v0[b], taus[b, 0], dt, ctrl=ctrls[b, 0])
        assert np.array_equal(A_b, A[b]) and np.array_equal(B_b, Bm[b]) and np.array_equal(C_b, B_ctrl[b]), b


def test_single_world_params_keep_the_single_world_types():
    model, q0, v0, taus, ctrls = arm_batch(1, 1, seed=8)
    p = model.params
    q1, v1, status = gradyn.step(model, q0[0], v0[0], taus[0, 0], 0.002, ctrl=ctrls[0, 0], params=p, return_status=True)
    assert isinstance(status, gradyn.Status) and status == gradyn.Status.OK
    assert q1.shape == (model.nq,) and v1.shape == (model.nv,)
