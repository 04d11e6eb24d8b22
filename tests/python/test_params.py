"""The flat parameter vector: model.param_names, model.params, model.with_params, param_index."""

from pathlib import Path

import numpy as np
import pytest

import gradyn

MODELS = Path(__file__).resolve().parents[2] / "models"
SHIPPED = [
    MODELS / "pendulums" / "pendulum7.urdf",
    MODELS / "grid" / "iiwa.urdf",
    MODELS / "grid" / "hyq.urdf",
    MODELS / "mujoco" / "ant.xml",
    MODELS / "mujoco" / "humanoid.xml",
]

MASS, LENGTH, IYY, G = 2.0, 0.7, 0.03, 9.81


def build_pendulum():
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("bob", mass=MASS, com=(0, 0, -LENGTH), inertia=(0.01, IYY, 0.02, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="bob", xyz=(0, 0, 1.5), rpy=(0.1, 0.2, 0.3),
                axis=(0, 1, 0), damping=0.4, stiffness=1.5, rest=0.2)
    b.set_gravity((0, 0, -G))
    return b.build()


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_round_trip_and_names(path):
    model = gradyn.load(path)
    p = model.params
    names = model.param_names
    assert isinstance(names, list) and p.shape == (len(names),) and p.dtype == np.float64
    assert len(set(names)) == len(names)
    assert names[-3:] == ["gravity.x", "gravity.y", "gravity.z"]
    np.testing.assert_allclose(p[-3:], model.gravity)
    copy = model.with_params(p)
    assert isinstance(copy, gradyn.Model)
    np.testing.assert_allclose(copy.params, p, rtol=0, atol=1e-12)
    rng = np.random.default_rng(0)
    q = gradyn.integrate(model, model.neutral(), rng.normal(size=model.nv))
    v, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    np.testing.assert_allclose(gradyn.aba(copy, q, v, tau), gradyn.aba(model, q, v, tau), rtol=1e-10, atol=1e-10)


def test_params_is_a_copy():
    model = build_pendulum()
    p = model.params
    p[:] = 0.0
    assert model.params[gradyn.param_index(model, "bob.mass")] == MASS


def test_layout_of_a_pendulum():
    model = build_pendulum()
    assert model.param_names == [
        "bob.mass", "bob.com.x", "bob.com.y", "bob.com.z",
        "bob.inertia.ixx", "bob.inertia.iyy", "bob.inertia.izz",
        "bob.inertia.ixy", "bob.inertia.ixz", "bob.inertia.iyz",
        "hinge.origin.x", "hinge.origin.y", "hinge.origin.z",
        "hinge.origin.roll", "hinge.origin.pitch", "hinge.origin.yaw",
        "hinge.axis.x", "hinge.axis.y", "hinge.axis.z",
        "hinge.damping", "hinge.armature", "hinge.stiffness", "hinge.rest",
        "gravity.x", "gravity.y", "gravity.z",
    ]  # fmt: skip
    expected = [MASS, 0, 0, -LENGTH, 0.01, IYY, 0.02, 0, 0, 0, 0, 0, 1.5, 0.1, 0.2, 0.3, 0, 1, 0,
                0.4, 0.0, 1.5, 0.2, 0, 0, -G]  # fmt: skip
    np.testing.assert_allclose(model.params, expected, rtol=0, atol=1e-14)
    assert gradyn.param_index(model, "hinge.origin.pitch") == 14
    assert gradyn.param_index(model, "gravity.z") == len(expected) - 1


def test_with_params_changes_the_dynamics():
    """Doubling the bob's mass and its inertia halves the acceleration under a torque, without
    gravity; a heavier bob under gravity alone accelerates the same (an ideal pendulum)."""
    model = build_pendulum()
    p = model.params
    idx = {n: gradyn.param_index(model, n) for n in model.param_names}
    q, v, tau = np.array([0.3]), np.zeros(1), np.array([0.8])
    p_heavy = p.copy()
    p_heavy[idx["bob.mass"]] *= 2
    for c in ("ixx", "iyy", "izz"):
        p_heavy[idx[f"bob.inertia.{c}"]] *= 2
    heavy = model.with_params(p_heavy)
    assert heavy.params[idx["bob.mass"]] == 2 * MASS
    a = gradyn.aba(model, q, v, tau)
    a_heavy = gradyn.aba(heavy, q, v, tau)
    # Same gravity torque per unit mass, so compare the torque-only parts.
    zero = np.zeros(1)
    np.testing.assert_allclose(a_heavy - gradyn.aba(heavy, q, v, zero), (a - gradyn.aba(model, q, v, zero)) / 2,
                               rtol=1e-12)
    np.testing.assert_allclose(gradyn.aba(heavy, q, v, zero), gradyn.aba(model, q, v, zero), rtol=1e-12)

    # Gravity is a parameter too: with none, no torque means no acceleration.
    p_free = p.copy()
    p_free[idx["gravity.z"]] = 0.0
    np.testing.assert_allclose(gradyn.aba(model.with_params(p_free), q, v, zero), [0.0], atol=1e-15)

    # Stiffness and rest change the passive forces.
    p_spring = p.copy()
    p_spring[idx["hinge.stiffness"]] = 4.0
    p_spring[idx["hinge.rest"]] = -0.1
    sprung = model.with_params(p_spring)
    np.testing.assert_allclose(gradyn.passive_forces(sprung, q, v), [-4.0 * (0.3 + 0.1)], rtol=1e-12)
    # The original model is unchanged (models are immutable).
    np.testing.assert_allclose(gradyn.passive_forces(model, q, v), [-1.5 * (0.3 - 0.2)], rtol=1e-12)


def test_with_params_rebuilds_the_joint_origin_from_rpy():
    model = build_pendulum()
    p = model.params
    idx = gradyn.param_index(model, "hinge.origin.roll")
    p[idx : idx + 3] = (0.0, 0.0, 0.0)
    p[gradyn.param_index(model, "hinge.origin.z")] = 0.0
    level = model.with_params(p)
    # Joint frame now aligned with the world at the origin: the bob hangs straight below at q = 0.
    pose = gradyn.frame_pose(level, np.zeros(1), "bob")
    np.testing.assert_allclose(pose[:3, :3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(pose[:3, 3], [0, 0, 0], atol=1e-15)


def test_shape_and_value_errors():
    model = build_pendulum()
    n = len(model.param_names)
    with pytest.raises(ValueError, match=rf"p: expected shape \({n},\), got \({n - 1},\)"):
        model.with_params(np.zeros(n - 1))
    with pytest.raises(ValueError, match=rf"p: expected shape \({n},\), got \(1, {n}\)"):
        model.with_params(np.zeros((1, n)))
    p = model.params
    p[gradyn.param_index(model, "bob.mass")] = -1.0
    with pytest.raises(gradyn.ModelError, match="bob.mass"):
        model.with_params(p)
    with pytest.raises(KeyError, match="nope"):
        gradyn.param_index(model, "nope")
    # Lists are accepted like arrays.
    assert isinstance(model.with_params(list(model.params)), gradyn.Model)
