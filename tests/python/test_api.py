"""The Python API of gradyn: loading, shapes, argument errors, the builder, stepping.

The physics itself is checked against Pinocchio and MuJoCo elsewhere; here a one-link pendulum
built in Python is compared with its closed form, and every function with the shapes and error
messages it promises.
"""

import threading
from pathlib import Path

import numpy as np
import pytest

import gradyn

MODELS = Path(__file__).resolve().parents[2] / "models"
PENDULUM2 = MODELS / "pendulums" / "pendulum2.urdf"
ANT = MODELS / "mujoco" / "ant.xml"
ANT_HINGES = ["hip_1", "ankle_1", "hip_2", "ankle_2", "hip_3", "ankle_3", "hip_4", "ankle_4"]


@pytest.fixture(scope="module")
def ant():
    return gradyn.load(ANT)


def random_state(model, rng):
    """A random configuration on the manifold and a random velocity."""
    q = gradyn.integrate(model, model.neutral(), rng.normal(size=model.nv))
    return q, rng.normal(size=model.nv)


# --- loading ------------------------------------------------------------------------------


def test_load_urdf():
    model = gradyn.load(str(PENDULUM2))
    assert (model.nq, model.nv, model.nbodies) == (2, 2, 2)
    assert model.joint_names == ["joint0", "joint1"]
    assert [model.joint_type(n) for n in model.joint_names] == ["continuous", "continuous"]
    assert model.source == str(PENDULUM2)
    assert "nq=2" in repr(model)
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])


def test_load_urdf_floating_base():
    model = gradyn.load(PENDULUM2, floating_base=True)  # a pathlib.Path works too
    assert (model.nq, model.nv) == (9, 8)
    root = model.joint_names[0]
    assert model.joint_type(root) == "free"
    assert (model.joint_idx_q(root), model.joint_nq(root), model.joint_nv(root)) == (0, 7, 6)
    # identity quaternion, stored x, y, z, w
    np.testing.assert_array_equal(model.neutral()[:7], [0, 0, 0, 0, 0, 0, 1])


def test_load_mjcf(ant):
    assert (ant.nq, ant.nv) == (15, 14)
    assert ant.joint_names == ["root"] + ANT_HINGES
    assert ant.joint_type("root") == "free"
    for i, name in enumerate(ANT_HINGES):
        assert ant.joint_type(name) == "revolute"
        assert ant.joint_idx_q(name) == 7 + i
        assert ant.joint_idx_v(name) == 6 + i
    np.testing.assert_array_equal(ant.q0[3:7], [0, 0, 0, 1])
    # the <default> class gives every hinge armature 1 and damping 1; the free joint has none
    np.testing.assert_array_equal(ant.armature, [0] * 6 + [1] * 8)
    np.testing.assert_array_equal(ant.damping, [0] * 6 + [1] * 8)
    # range="-30 30" in degrees (the compiler's default angle unit)
    assert ant.lower_limit[ant.joint_idx_q("hip_1")] == pytest.approx(np.deg2rad(-30))
    assert ant.upper_limit[ant.joint_idx_q("hip_1")] == pytest.approx(np.deg2rad(30))
    assert np.all(np.isinf(ant.lower_limit[:7]))


def test_loader_warnings_become_python_warnings():
    # models/laikago ships without its meshes: the loader warns about each one.
    with pytest.warns(UserWarning, match="mesh"):
        model = gradyn.load(MODELS / "laikago" / "laikago_toes_zup.urdf")
    assert model.nv == 12


def test_bad_file_raises_model_error_naming_the_file(tmp_path):
    bad = tmp_path / "broken.urdf"
    bad.write_text('<robot name="r">\n  <link name="a"/>\n  <joint name="j" type="revolute">\n'
                   '    <parent link="a"/><child link="missing"/>\n  </joint>\n</robot>\n')
    with pytest.raises(gradyn.ModelError) as err:
        gradyn.load(bad)
    assert str(bad) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_missing_file_and_unknown_extension(tmp_path):
    with pytest.raises(gradyn.ModelError, match="nowhere.urdf"):
        gradyn.load(tmp_path / "nowhere.urdf")
    other = tmp_path / "robot.txt"
    other.write_text("<robot/>")
    with pytest.raises(gradyn.ModelError, match="robot.txt"):
        gradyn.load(other)


# --- model accessors ----------------------------------------------------------------------


def test_model_arrays_are_copies(ant):
    d = ant.damping
    d[:] = 42.0
    np.testing.assert_array_equal(ant.damping, [0] * 6 + [1] * 8)
    for name, size in [("damping", ant.nv), ("armature", ant.nv), ("stiffness", ant.nv),
                       ("effort_limit", ant.nv), ("velocity_limit", ant.nv), ("q0", ant.nq),
                       ("q_rest", ant.nq), ("lower_limit", ant.nq), ("upper_limit", ant.nq)]:
        value = getattr(ant, name)
        assert value.shape == (size,) and value.dtype == np.float64, name
    assert len(ant.body_names) == ant.nbodies
    assert "torso" in ant.frame_names


def test_unknown_names_raise_key_error(ant):
    with pytest.raises(KeyError, match="no_such_joint"):
        ant.joint_idx_q("no_such_joint")
    with pytest.raises(KeyError, match="no_such_frame"):
        gradyn.frame_pose(ant, ant.q0, "no_such_frame")


def test_with_gravity_returns_a_copy(ant):
    rng = np.random.default_rng(0)
    q, _ = random_state(ant, rng)
    flipped = ant.with_gravity([0, 0, 9.81])
    np.testing.assert_array_equal(ant.gravity, [0, 0, -9.81])
    np.testing.assert_array_equal(flipped.gravity, [0, 0, 9.81])
    np.testing.assert_allclose(gradyn.generalized_gravity(flipped, q), -gradyn.generalized_gravity(ant, q),
                               atol=1e-9)
    np.testing.assert_allclose(gradyn.generalized_gravity(ant.with_gravity([0, 0, 0]), q), 0, atol=1e-12)


def test_with_joint_parameters_returns_a_copy():
    model = build_pendulum()
    theta, theta_dot = 0.4, 1.5
    damped = model.with_damping([0.5])
    sprung = model.with_stiffness([3.0])
    heavy = model.with_armature([0.2])
    assert model.damping[0] == 0 and damped.damping[0] == 0.5
    assert gradyn.passive_forces(damped, [theta], [theta_dot])[0] == pytest.approx(-0.5 * theta_dot)
    assert gradyn.passive_forces(sprung, [theta], [theta_dot])[0] == pytest.approx(-3.0 * theta)
    assert gradyn.passive_forces(model, [theta], [theta_dot])[0] == 0
    inertia = MASS * LENGTH**2 + IYY
    assert gradyn.crba(heavy, [theta])[0, 0] == pytest.approx(inertia + 0.2)
    assert gradyn.crba(model, [theta])[0, 0] == pytest.approx(inertia)
    with pytest.raises(ValueError, match=r"damping: expected shape \(1,\), got \(2,\)"):
        model.with_damping([0.1, 0.2])
    with pytest.raises(ValueError, match="non-negative"):
        model.with_stiffness([-1.0])


# --- shapes ---------------------------------------------------------------------------------


def test_output_shapes(ant):
    rng = np.random.default_rng(1)
    q, v = random_state(ant, rng)
    tau = rng.normal(size=ant.nv)
    nq, nv = ant.nq, ant.nv
    assert gradyn.aba(ant, q, v, tau).shape == (nv,)
    assert gradyn.rnea(ant, q, v, tau).shape == (nv,)
    assert gradyn.nonlinear_effects(ant, q, v).shape == (nv,)
    assert gradyn.generalized_gravity(ant, q).shape == (nv,)
    assert gradyn.passive_forces(ant, q, v).shape == (nv,)
    assert gradyn.forward_dynamics(ant, q, v, tau).shape == (nv,)
    M = gradyn.crba(ant, q)
    assert M.shape == (nv, nv)
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert gradyn.frame_pose(ant, q, "torso").shape == (4, 4)
    for reference in ("local_world_aligned", "local", "world"):
        assert gradyn.frame_jacobian(ant, q, "torso", reference=reference).shape == (6, nv)
    assert gradyn.center_of_mass(ant, q).shape == (3,)
    assert isinstance(gradyn.kinetic_energy(ant, q, v), float)
    assert isinstance(gradyn.potential_energy(ant, q), float)
    assert gradyn.total_mass(ant) > 0
    assert gradyn.integrate(ant, q, v).shape == (nq,)
    assert gradyn.difference(ant, q, q).shape == (nv,)
    q1, v1 = gradyn.step(ant, q, v, tau, 1e-3)
    assert (q1.shape, v1.shape) == ((nq,), (nv,))

    kin = gradyn.forward_kinematics(ant, q)
    assert kin["body_poses"].shape == (ant.nbodies, 4, 4)
    assert kin["frame_poses"].shape == (len(ant.frame_names), 4, 4)
    assert "body_velocities" not in kin
    kin = gradyn.forward_kinematics(ant, q, v)
    assert kin["body_velocities"].shape == (ant.nbodies, 6)
    np.testing.assert_allclose(kin["frame_poses"][ant.frame_names.index("torso")],
                               gradyn.frame_pose(ant, q, "torso"))


def test_aba_inverts_rnea_and_crba_matches(ant):
    rng = np.random.default_rng(2)
    q, v = random_state(ant, rng)
    tau = rng.normal(size=ant.nv)
    a = gradyn.aba(ant, q, v, tau)
    np.testing.assert_allclose(gradyn.rnea(ant, q, v, a), tau, atol=1e-9)
    M = gradyn.crba(ant, q)
    np.testing.assert_allclose(M @ a + gradyn.nonlinear_effects(ant, q, v), tau, atol=1e-9)
    assert gradyn.kinetic_energy(ant, q, v) == pytest.approx(0.5 * v @ M @ v, rel=1e-12)


def test_array_likes_are_converted(ant):
    q = ant.neutral()
    v = np.zeros(ant.nv)
    expected = gradyn.aba(ant, q, v, v)
    np.testing.assert_array_equal(gradyn.aba(ant, list(q), tuple(v), np.zeros(ant.nv, dtype=np.int64)), expected)
    np.testing.assert_array_equal(gradyn.aba(ant, q.astype(np.float32), v, v[::-1].copy()), expected)
    strided = np.zeros(2 * ant.nq)
    strided[::2] = q
    np.testing.assert_array_equal(gradyn.aba(ant, strided[::2], v, v), expected)


# --- argument errors --------------------------------------------------------------------------


def test_wrong_shapes_name_expected_and_actual(ant):
    q, v = ant.neutral(), np.zeros(ant.nv)
    cases = [
        (lambda: gradyn.aba(ant, q[:-1], v, v), "q: expected shape (15,), got (14,)"),
        (lambda: gradyn.aba(ant, q, q, v), "v: expected shape (14,), got (15,)"),
        (lambda: gradyn.aba(ant, q, v, v[:3]), "tau: expected shape (14,), got (3,)"),
        (lambda: gradyn.rnea(ant, q, v, np.zeros((14, 1))), "a: expected shape (14,), got (14, 1)"),
        (lambda: gradyn.crba(ant, np.zeros((3, 5))), "q: expected shape (15,), got (3, 5)"),
        (lambda: gradyn.integrate(ant, q, q), "dv: expected shape (14,) or (B, 14) for B rows, got (15,)"),
        (lambda: gradyn.difference(ant, q, v), "q1: expected shape (15,) or (B, 15) for B rows, got (14,)"),
        (lambda: gradyn.step(ant, q, v, q, 0.01), "tau: expected shape (14,), got (15,)"),
        (lambda: gradyn.rollout(ant, q, v, np.zeros((5, 3)), 0.01), "taus: expected shape (*, 14), got (5, 3)"),
        (lambda: gradyn.rollout(ant, q, v, np.zeros(14), 0.01), "taus: expected shape (*, 14), got (14,)"),
        (lambda: gradyn.frame_jacobian(ant, 0.0, "torso"), "q: expected shape (15,), got ()"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError) as err:
            call()
        assert message in str(err.value)


def test_non_numeric_argument(ant):
    with pytest.raises((ValueError, TypeError), match="q"):
        gradyn.crba(ant, ["a"] * ant.nq)


def test_integrator_and_dt_validation(ant):
    q, v = ant.neutral(), np.zeros(ant.nv)
    with pytest.raises(ValueError, match="'euler' or 'rk4', got 'midpoint'"):
        gradyn.step(ant, q, v, v, 0.01, integrator="midpoint")
    with pytest.raises(ValueError, match="'euler' or 'rk4', got 'RK45'"):
        gradyn.rollout(ant, q, v, np.zeros((3, ant.nv)), 0.01, integrator="RK45")
    with pytest.raises(ValueError, match="dt"):
        gradyn.step(ant, q, v, v, -0.01)
    with pytest.raises(ValueError, match="reference"):
        gradyn.frame_jacobian(ant, q, "torso", reference="body")


def test_step_options_are_checked_alike_by_every_step_function(ant):
    """dt and the integrator are checked by one function for step, rollout, step_vjp, rollout_vjp,
    step_jacobian and gradcheck; the message names what was passed and what to pass."""
    q, v = ant.neutral(), np.zeros(ant.nv)
    taus = np.zeros((2, ant.nv))
    qs_bar, vs_bar = np.zeros((3, ant.nq)), np.zeros((3, ant.nv))
    calls = {
        "step": lambda m, dt, i: gradyn.step(m, q, v, v, dt, integrator=i),
        "rollout": lambda m, dt, i: gradyn.rollout(m, q, v, taus, dt, integrator=i),
        "step_vjp": lambda m, dt, i: gradyn.step_vjp(m, q, v, v, dt, q, v, integrator=i),
        "rollout_vjp": lambda m, dt, i: gradyn.rollout_vjp(m, q, v, taus, dt, qs_bar, vs_bar, integrator=i),
        "step_jacobian": lambda m, dt, i: gradyn.step_jacobian(m, q, v, v, dt, integrator=i),
        "gradcheck": lambda m, dt, i: gradyn.gradcheck(m, q, v, taus, dt, integrator=i),
    }
    pgs = ant.with_contact(model="pgs")
    for name, call in calls.items():
        for dt in (0.0, -0.01, float("nan"), float("inf")):
            with pytest.raises(ValueError, match="dt: expected a positive finite time step"):
                call(ant, dt, "euler")
        with pytest.raises(ValueError, match="integrator 'rk4' cannot step contact model 'pgs'.*use integrator 'euler'"):
            call(pgs, 0.01, "rk4")


# --- the builder: a one-link pendulum against its closed form -------------------------------

MASS, LENGTH, IYY, G = 2.0, 0.7, 0.03, 9.81


def build_pendulum(damping=0.0, stiffness=0.0, rest=0.0):
    b = gradyn.ModelBuilder()
    b.set_name("pendulum")
    b.add_link("base")
    b.add_link("bob", mass=MASS, com=(0, 0, -LENGTH), inertia=(0.01, IYY, 0.02, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="bob", xyz=(0, 0, 1.5), axis=(0, 1, 0),
                damping=damping, stiffness=stiffness, rest=rest)
    b.set_gravity((0, 0, -G))
    return b.build()


def test_builder_pendulum_matches_closed_form():
    model = build_pendulum()
    assert (model.nq, model.nv, model.name) == (1, 1, "pendulum")
    assert model.joint_names == ["hinge"]
    inertia = MASS * LENGTH**2 + IYY  # about the hinge axis
    rng = np.random.default_rng(3)
    for theta, theta_dot, tau in rng.normal(scale=2.0, size=(10, 3)):
        # (m l^2 + Iyy) theta'' = -m g l sin(theta) + tau, independent of theta'
        expected = (-MASS * G * LENGTH * np.sin(theta) + tau) / inertia
        a = gradyn.aba(model, [theta], [theta_dot], [tau])
        assert a[0] == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert gradyn.crba(model, [theta])[0, 0] == pytest.approx(inertia, rel=1e-12)
        assert gradyn.rnea(model, [theta], [theta_dot], a)[0] == pytest.approx(tau, rel=1e-10, abs=1e-10)
        # the bob's centre of mass swings on a circle of radius l around the hinge at z = 1.5
        com = gradyn.center_of_mass(model, [theta])
        np.testing.assert_allclose(com, [-LENGTH * np.sin(theta), 0, 1.5 - LENGTH * np.cos(theta)], atol=1e-12)
        assert gradyn.kinetic_energy(model, [theta], [theta_dot]) == pytest.approx(0.5 * inertia * theta_dot**2)


def test_builder_pendulum_passive_forces():
    damping, stiffness, rest = 0.3, 5.0, 0.2
    model = build_pendulum(damping, stiffness, rest)
    inertia = MASS * LENGTH**2 + IYY
    theta, theta_dot, tau = 0.9, -1.3, 0.4
    passive = -damping * theta_dot - stiffness * (theta - rest)
    assert gradyn.passive_forces(model, [theta], [theta_dot])[0] == pytest.approx(passive)
    # aba is the rigid-body part only; forward_dynamics adds springs and dampers
    assert gradyn.aba(model, [theta], [theta_dot], [tau])[0] == pytest.approx(
        (-MASS * G * LENGTH * np.sin(theta) + tau) / inertia)
    assert gradyn.forward_dynamics(model, [theta], [theta_dot], [tau])[0] == pytest.approx(
        (-MASS * G * LENGTH * np.sin(theta) + tau + passive) / inertia)


def test_builder_accepts_3x3_inertia_and_rejects_bad_input():
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("bob", mass=1.0, inertia=np.diag([1.0, 2.0, 3.0]))
    with pytest.raises(gradyn.ModelError, match="bob"):
        b.add_link("bob")  # duplicate name
    with pytest.raises(gradyn.ModelError, match="bad"):
        b.add_link("bad", mass=-1.0, inertia=np.eye(3))
    with pytest.raises(ValueError, match="inertia"):
        b.add_link("no_inertia", mass=1.0)
    with pytest.raises(ValueError, match=r"inertia: expected shape \(3, 3\) or \(6,\)"):
        b.add_link("wrong", mass=1.0, inertia=(1, 2, 3))
    with pytest.raises(ValueError, match="'hinged'"):
        b.add_joint("j", "hinged", parent="base", child="bob")
    b.add_joint("j", "spherical", parent="base", child="bob")
    model = b.build()
    assert (model.nq, model.nv) == (4, 3)
    np.testing.assert_array_equal(model.neutral(), [0, 0, 0, 1])
    with pytest.raises(gradyn.ModelError, match="missing"):
        b2 = gradyn.ModelBuilder()
        b2.add_link("a")
        b2.add_joint("j", "revolute", parent="a", child="missing")
        b2.build()


def test_builder_floating_base_and_chaining():
    model = (gradyn.ModelBuilder()
             .add_link("body", mass=3.0, inertia=(0.1, 0.2, 0.3, 0, 0, 0))
             .build(floating_base=True))
    assert (model.nq, model.nv) == (7, 6)
    q = model.neutral()
    # a free body falls with g, whatever its orientation
    a = gradyn.aba(model, q, np.zeros(6), np.zeros(6))
    np.testing.assert_allclose(a, [0, 0, -9.81, 0, 0, 0], atol=1e-12)


# --- stepping ---------------------------------------------------------------------------------


@pytest.mark.parametrize("integrator", ["euler", "rk4"])
def test_rollout_starts_with_the_initial_state_and_matches_step(ant, integrator):
    rng = np.random.default_rng(4)
    q0, v0 = random_state(ant, rng)
    taus = rng.normal(size=(6, ant.nv))
    dt = 1e-3
    qs, vs = gradyn.rollout(ant, q0, v0, taus, dt, integrator=integrator)
    assert qs.shape == (7, ant.nq) and vs.shape == (7, ant.nv)
    np.testing.assert_array_equal(qs[0], q0)
    np.testing.assert_array_equal(vs[0], v0)
    q, v = q0, v0
    for t in range(len(taus)):
        q, v = gradyn.step(ant, q, v, taus[t], dt, integrator=integrator)
        np.testing.assert_allclose(qs[t + 1], q, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(vs[t + 1], v, rtol=1e-12, atol=1e-12)
    assert not np.allclose(qs[-1], q0)


def test_step_euler_is_semi_implicit():
    model = build_pendulum()
    theta, theta_dot, dt = 0.5, 0.1, 0.01
    a = gradyn.forward_dynamics(model, [theta], [theta_dot], [0.0])[0]
    q1, v1 = gradyn.step(model, [theta], [theta_dot], [0.0], dt, integrator="euler")
    assert v1[0] == pytest.approx(theta_dot + dt * a)
    assert q1[0] == pytest.approx(theta + dt * v1[0])  # new velocity moves the position


def test_empty_rollout():
    model = build_pendulum()
    qs, vs = gradyn.rollout(model, [0.3], [0.0], np.zeros((0, 1)), 0.01)
    np.testing.assert_array_equal(qs, [[0.3]])
    np.testing.assert_array_equal(vs, [[0.0]])


def test_rollouts_in_threads_match_serial(ant):
    rng = np.random.default_rng(5)
    starts = [random_state(ant, rng) for _ in range(4)]
    taus = rng.normal(size=(200, ant.nv))
    serial = [gradyn.rollout(ant, q, v, taus, 1e-3) for q, v in starts]
    results = [None] * len(starts)

    def run(i):
        q, v = starts[i]
        results[i] = gradyn.rollout(ant, q, v, taus, 1e-3)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(starts))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for (qs, vs), (qs_ref, vs_ref) in zip(results, serial):
        np.testing.assert_array_equal(qs, qs_ref)
        np.testing.assert_array_equal(vs, vs_ref)


def test_integrate_difference_round_trip(ant):
    rng = np.random.default_rng(6)
    q0, _ = random_state(ant, rng)
    dv = rng.normal(size=ant.nv)
    q1 = gradyn.integrate(ant, q0, dv)
    np.testing.assert_allclose(gradyn.difference(ant, q0, q1), dv, atol=1e-9)
    assert np.linalg.norm(q1[3:7]) == pytest.approx(1.0)


def test_integrate_and_difference_take_batches_of_rows(ant):
    rng = np.random.default_rng(7)
    qs = np.stack([random_state(ant, rng)[0] for _ in range(4)])
    dvs = rng.normal(size=(4, ant.nv))
    moved = gradyn.integrate(ant, qs, dvs)
    assert moved.shape == (4, ant.nq)
    for i in range(4):  # each row as the one-state call gives it
        np.testing.assert_array_equal(moved[i], gradyn.integrate(ant, qs[i], dvs[i]))
        np.testing.assert_array_equal(gradyn.difference(ant, qs[i], moved[i]),
                                      gradyn.difference(ant, qs, moved)[i])
    # a 1-D argument is shared by every row
    shared = gradyn.difference(ant, qs[0], moved)
    assert shared.shape == (4, ant.nv)
    np.testing.assert_array_equal(shared[2], gradyn.difference(ant, qs[0], moved[2]))
    np.testing.assert_array_equal(gradyn.integrate(ant, qs[1], dvs)[3], gradyn.integrate(ant, qs[1], dvs[3]))
    assert gradyn.difference(ant, qs[:0], moved[:0]).shape == (0, ant.nv)


def test_batched_difference_names_the_bad_row_and_the_shapes(ant):
    rng = np.random.default_rng(8)
    qs = np.stack([random_state(ant, rng)[0] for _ in range(3)])
    with pytest.raises(ValueError, match=r"q0 and q1: expected the same number of rows .* got 3 and 2"):
        gradyn.difference(ant, qs, qs[:2])
    with pytest.raises(ValueError, match=rf"q1: expected shape \({ant.nq},\) or \(B, {ant.nq}\).*got \(3, {ant.nq + 1}\)"):
        gradyn.difference(ant, qs, np.ones((3, ant.nq + 1)))
    bad = qs.copy()
    bad[2, 5] = np.nan
    with pytest.raises(ValueError, match="q1: expected finite numbers, got nan at row 2, index 5"):
        gradyn.difference(ant, qs, bad)
    with pytest.raises(ValueError, match=r"dv: expected shape .* got \(3, 2, 1\)"):
        gradyn.integrate(ant, qs, np.ones((3, 2, 1)))
