"""The flat parameter vector: model.param_names, model.params, model.with_params, param_index; the
collision geoms' parameters and the contact settings at its end."""

import re
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
CONTACT_NAMES = [
    "contact.stiffness", "contact.exponent", "contact.damping", "contact.velocity_scale",
    "contact.static_friction_ratio", "contact.viscous_friction", "contact.erp", "contact.slop", "contact.cfm",
]  # fmt: skip
SIZE_COUNT = {"plane": 0, "sphere": 1, "capsule": 2, "cylinder": 2, "box": 3}


def build_pendulum():
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("bob", mass=MASS, com=(0, 0, -LENGTH), inertia=(0.01, IYY, 0.02, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="bob", xyz=(0, 0, 1.5), rpy=(0.1, 0.2, 0.3),
                axis=(0, 1, 0), damping=0.4, stiffness=1.5, rest=0.2)
    b.set_gravity((0, 0, -G))
    return b.build()


ACTUATOR_GAINS = {"motor": [], "position": ["kp", "kv"], "velocity": ["kv"],
                  "general": [f"{w}[{k}]" for w in ("gain", "bias") for k in range(3)],
                  "servo": ["kp", "kv", "velocity_limit"]}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_round_trip_and_names(path):
    model = gradyn.load(path)
    p = model.params
    names = model.param_names
    assert isinstance(names, list) and p.shape == (len(names),) and p.dtype == np.float64
    assert len(set(names)) == len(names)
    # ... the contact settings, then per actuator its kind's gains, its gear, its ranges when clamped
    actuator_names = []
    for a in model.actuators:
        n = a["name"]
        actuator_names += [f"{n}.{p}" for p in ACTUATOR_GAINS[a["kind"]]] + [f"{n}.gear"]
        actuator_names += [f"{n}.{r}.{b}" for r in ("ctrlrange", "forcerange") if a[r] is not None
                           for b in ("lower", "upper")]
    # ... then each coupling's, connection's and tendon's entries (MuJoCo's humanoid: 2 tendons)
    constraint_names = [f"{c['name']}.polycoef[{k}]" for c in model.joint_couplings for k in range(5)]
    for c in model.body_connections:
        constraint_names += [f"{c['name']}.anchor{i}.{x}" for i in (1, 2) for x in "xyz"]
        constraint_names += [f"{c['name']}.rotation.{a}" for a in ("roll", "pitch", "yaw")] if c["weld"] else []
    constraint_names += [f"{t['name']}.{x}" for t in model.tendons for x in ("stiffness", "damping", "spring_length")]
    assert names[len(names) - len(constraint_names):] == constraint_names
    contact_end = len(names) - len(constraint_names) - len(actuator_names)
    assert names[contact_end:len(names) - len(constraint_names)] == actuator_names
    assert names[contact_end - len(CONTACT_NAMES):contact_end] == CONTACT_NAMES
    g = names.index("gravity.x")
    assert names[g:g + 3] == ["gravity.x", "gravity.y", "gravity.z"]
    np.testing.assert_allclose(p[g:g + 3], model.gravity)
    # then per geom: friction, restitution, the used sizes, origin x/y/z/roll/pitch/yaw
    geom_names = []
    for geom in model.geoms:
        n = geom["name"]
        geom_names += [f"{n}.friction", f"{n}.restitution"]
        geom_names += [f"{n}.size[{k}]" for k in range(SIZE_COUNT[geom["type"]])]
        geom_names += [f"{n}.origin.{c}" for c in ("x", "y", "z", "roll", "pitch", "yaw")]
    assert names[g + 3:contact_end - len(CONTACT_NAMES)] == geom_names
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
    ] + CONTACT_NAMES  # fmt: skip
    settings = model.contact_settings
    expected = [MASS, 0, 0, -LENGTH, 0.01, IYY, 0.02, 0, 0, 0, 0, 0, 1.5, 0.1, 0.2, 0.3, 0, 1, 0,
                0.4, 0.0, 1.5, 0.2, 0, 0, -G] + [settings[n.split(".")[1]] for n in CONTACT_NAMES]  # fmt: skip
    np.testing.assert_allclose(model.params, expected, rtol=0, atol=1e-14)
    assert gradyn.param_index(model, "hinge.origin.pitch") == 14
    assert gradyn.param_index(model, "gravity.z") == 25


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


def test_geom_parameters_and_contact_settings():
    """The shipped ant: every geom's friction, size and origin, and the contact settings, are
    parameters; with_params sets them (round trip) and checks their ranges, naming the geom."""
    model = gradyn.load(MODELS / "mujoco" / "ant.xml", contact="penalty")
    names, p = model.param_names, model.params
    geoms = model.geoms
    assert len(geoms) > 0
    for geom in geoms:
        n = geom["name"]
        np.testing.assert_allclose(p[gradyn.param_index(model, f"{n}.friction")], geom["friction"])
        np.testing.assert_allclose(p[gradyn.param_index(model, f"{n}.restitution")], geom["restitution"])
        for k in range(SIZE_COUNT[geom["type"]]):
            np.testing.assert_allclose(p[gradyn.param_index(model, f"{n}.size[{k}]")], geom["size"][k])
    settings = model.contact_settings
    for n in CONTACT_NAMES:
        assert p[names.index(n)] == settings[n.split(".")[1]]

    torso = geoms[1]["name"] if geoms[0]["type"] == "plane" else geoms[0]["name"]
    changed = p.copy()
    changed[gradyn.param_index(model, f"{torso}.friction")] = 0.35
    changed[gradyn.param_index(model, f"{torso}.size[0]")] *= 1.5
    changed[gradyn.param_index(model, f"{torso}.origin.z")] += 0.01
    changed[names.index("contact.stiffness")] = 2.5e4
    other = model.with_params(changed)
    np.testing.assert_allclose(other.params, changed, rtol=0, atol=1e-12)
    geom = next(g for g in other.geoms if g["name"] == torso)
    assert geom["friction"] == 0.35
    assert other.contact_settings["stiffness"] == 2.5e4
    assert model.contact_settings["stiffness"] != 2.5e4  # the original is unchanged

    for field, value in (("friction", -0.1), ("restitution", 1.5), ("size[0]", 0.0), ("size[0]", -0.1)):
        bad = p.copy()
        bad[gradyn.param_index(model, f"{torso}.{field}")] = value
        with pytest.raises(gradyn.ModelError, match=rf"geom '{re.escape(torso)}'.*{re.escape(f'{torso}.{field}')}"):
            model.with_params(bad)
    below = p.copy()  # restitution below 0 is accepted: central differences around the default 0 step there
    below[gradyn.param_index(model, f"{torso}.restitution")] = -1e-6
    assert next(g for g in model.with_params(below).geoms if g["name"] == torso)["restitution"] == -1e-6
    bad = p.copy()
    bad[names.index("contact.exponent")] = 0.5  # contact is on: the settings are checked
    with pytest.raises(gradyn.ModelError, match="exponent"):
        model.with_params(bad)


def test_contact_settings_of_a_model_without_contact_are_not_checked():
    model = build_pendulum()
    assert model.contact_model is None
    p = model.params
    p[gradyn.param_index(model, "contact.cfm")] = -1e-6  # inert while contact is off
    assert model.with_params(p).params[gradyn.param_index(model, "contact.cfm")] == -1e-6
