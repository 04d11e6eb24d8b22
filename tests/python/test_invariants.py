"""Physical and algebraic invariants of the dynamics, through the Python API, on every shipped model.

No reference library is needed: M(q) is symmetric positive definite and equals the columns of
inverse dynamics, forward dynamics inverts inverse dynamics, the kinetic energy is 1/2 v^T M v,
and frame Jacobians are the derivatives of frame poses (checked by central differences on the
configuration manifold, in all three reference frames).
"""

import warnings
from pathlib import Path

import numpy as np
import pytest

import gradyn

MODELS = Path(__file__).resolve().parents[2] / "models"

CASES = [
    ("cartpole.urdf", False),
    ("grid/iiwa.urdf", False),
    ("grid/hyq.urdf", False),
    ("grid/hyq.urdf", True),
    ("simple_humanoid.urdf", False),
    ("simple_humanoid.urdf", True),
    ("laikago/laikago_toes_zup.urdf", True),
    ("pendulums/pendulum1.urdf", False),
    ("pendulums/pendulum4.urdf", False),
    ("pendulums/pendulum7.urdf", False),
    ("mujoco/ant.xml", False),
    ("mujoco/humanoid.xml", False),
    ("mujoco/swimmer.xml", False),
    ("swimmer05/model.xml", False),
]
N_STATES = 30


def case_id(case):
    path, floating = case
    return Path(path).parent.name + "-" + Path(path).stem + ("-floating" if floating else "")


@pytest.fixture(scope="module", params=CASES, ids=case_id)
def model(request):
    path, floating = request.param
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # missing visual meshes do not matter here
        return gradyn.load(MODELS / path, floating_base=floating)


def states(model, seed, count=N_STATES):
    """Random configurations on the manifold (angles in [-pi, pi], random rotations), v and a."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = gradyn.integrate(model, model.neutral(), rng.uniform(-np.pi, np.pi, model.nv))
        yield q, rng.normal(scale=2.0, size=model.nv), rng.normal(scale=5.0, size=model.nv)


def relative_error(actual, reference):
    return np.max(np.abs(np.asarray(actual) - reference)) / (1.0 + np.max(np.abs(reference)))


def test_mass_matrix_symmetric_positive_definite(model):
    for q, _, _ in states(model, seed=1):
        M = gradyn.crba(model, q)
        assert M.shape == (model.nv, model.nv)
        assert relative_error(M.T, M) <= 1e-14  # up to rounding in multi-DoF joint blocks
        eigenvalues = np.linalg.eigvalsh(M)
        assert eigenvalues[0] > 1e-12 * eigenvalues[-1], f"M not positive definite: eigenvalues {eigenvalues[:3]}"


def test_mass_matrix_is_inverse_dynamics_columns(model):
    """M e_i = rnea(q, 0, e_i) - rnea(q, 0, 0): CRBA and RNEA agree."""
    zero = np.zeros(model.nv)
    for q, _, _ in states(model, seed=2, count=5):
        M = gradyn.crba(model, q)
        g = gradyn.rnea(model, q, zero, zero)
        assert relative_error(g, gradyn.generalized_gravity(model, q)) < 1e-12
        columns = np.column_stack([gradyn.rnea(model, q, zero, e) - g for e in np.eye(model.nv)])
        assert relative_error(columns, M) < 1e-10


def test_aba_inverts_rnea(model):
    worst = 0.0
    for q, v, a in states(model, seed=3):
        tau = gradyn.rnea(model, q, v, a)
        worst = max(worst, relative_error(gradyn.aba(model, q, v, tau), a))
        # ... and the other way round, and the split tau = M a + nle.
        nle = gradyn.nonlinear_effects(model, q, v)
        assert relative_error(gradyn.crba(model, q) @ a + nle, tau) < 1e-10
        assert relative_error(gradyn.rnea(model, q, v, gradyn.aba(model, q, v, tau)), tau) < 1e-8
    print(f"aba(rnea(a)) vs a: worst relative error {worst:.3e}")
    assert worst < 1e-8


def test_kinetic_energy_is_quadratic_form(model):
    for q, v, _ in states(model, seed=4):
        expected = 0.5 * v @ gradyn.crba(model, q) @ v
        assert gradyn.kinetic_energy(model, q, v) == pytest.approx(expected, rel=1e-11, abs=1e-12)


def skew_vector(W):
    """The vector w of the skew part of W (W = [w]x for a skew-symmetric matrix)."""
    A = 0.5 * (W - W.T)
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


def test_frame_jacobian_matches_finite_differences(model):
    """Column i of J is d/dh of the frame pose at integrate(q, h e_i), in all three references."""
    h = 1e-6
    names = model.frame_names
    for q, _, _ in states(model, seed=5, count=3):
        base = gradyn.forward_kinematics(model, q)["frame_poses"]
        plus, minus = [], []
        for e in np.eye(model.nv):
            plus.append(gradyn.forward_kinematics(model, gradyn.integrate(model, q, h * e))["frame_poses"])
            minus.append(gradyn.forward_kinematics(model, gradyn.integrate(model, q, -h * e))["frame_poses"])
        for f, name in enumerate(names):
            if names.count(name) > 1:
                continue  # a frame name shared by a link and a joint; frame_pose finds only the first
            T = base[f]
            assert np.array_equal(gradyn.frame_pose(model, q, name), T)
            R, p = T[:3, :3], T[:3, 3]
            # Velocity of the frame origin and angular velocity, both in world axes, per unit v_i.
            expected = np.zeros((6, model.nv))
            for i in range(model.nv):
                dT = (plus[i][f] - minus[i][f]) / (2 * h)
                expected[:3, i] = skew_vector(dT[:3, :3] @ R.T)
                expected[3:, i] = dT[:3, 3]
            J = gradyn.frame_jacobian(model, q, name)
            assert relative_error(J, expected) < 1e-6, f"frame '{name}' (local_world_aligned)"
            local = np.vstack([R.T @ expected[:3], R.T @ expected[3:]])
            assert relative_error(gradyn.frame_jacobian(model, q, name, "local"), local) < 1e-6, f"'{name}' (local)"
            # World: the spatial velocity at the world origin, v_O = v_p + p x w.
            world = np.vstack([expected[:3], expected[3:] + np.cross(p, expected[:3], axis=0)])
            assert relative_error(gradyn.frame_jacobian(model, q, name, "world"), world) < 1e-6, f"'{name}' (world)"
