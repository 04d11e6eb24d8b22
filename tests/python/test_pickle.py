"""Pickling gradyn.Model (issue 20: models go to other processes, e.g. Ray populations).

A model loaded from URDF (with collision meshes) or MJCF, built by ModelBuilder, or derived by
with_params / with_contact / with_network / with_gravity & co. comes back from pickle and
copy.deepcopy equal in every public property and in its serialized bytes, and its rollouts and
rollout gradients are bitwise those of the original under every contact model, also when the
copy runs in a spawned process. Damaged bytes raise gradyn.ModelError saying what is wrong.
"""

import copy
import multiprocessing
import os
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradyn
from bridge_models import MODELS, build_floating

ROOT = Path(__file__).resolve().parents[2]
TEST_DATA = ROOT / "tests" / "data"
LAIKAGO_MESHES = ROOT.parent / "shared" / "models" / "laikago" / "laikago_toes_zup.urdf"
CONTACT_MODELS = ["none", "penalty", "pgs", "ipm"]


def load_quietly(path, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the swimmer's fluid forces, missing meshes
        return gradyn.load(path, **kwargs)


def laikago(meshes=False):
    """The laikago on a ground plane. meshes: with its collision meshes (convex hulls; they touch
    each other at the hips, so not a scene to roll out in contact) where the shared models are
    present; otherwise the shipped copy, whose only collision geoms are the toe spheres."""
    shipped = MODELS / "laikago" / "laikago_toes_zup.urdf"
    path = LAIKAGO_MESHES if meshes and LAIKAGO_MESHES.exists() else shipped
    return load_quietly(path, floating_base=True).with_ground_plane(friction=0.9)


def laikago_standing(model):
    """A standing pose, the highest at which a toe touches the ground."""
    q = model.neutral()
    for leg in ("FR", "FL", "RR", "RL"):
        q[model.joint_idx_q(f"{leg}_upper_leg_2_hip_motor_joint")] = -0.1
        q[model.joint_idx_q(f"{leg}_lower_leg_2_upper_leg_joint")] = -0.45
    for z in np.arange(0.6, 0.0, -0.002):
        q[2] = z
        if any("ground" in (c["geom_a"], c["geom_b"]) for c in gradyn.collide(model, q)):
            return q
    raise AssertionError("the laikago never touches the ground")


def build_actuated():
    """A ModelBuilder model with every joint kind but planar, limits and every kind of actuator."""
    b = gradyn.ModelBuilder().set_name("actuated").set_gravity((0.1, 0.0, -9.7))
    b.add_link("torso", mass=3.0, com=(0.02, -0.01, 0.03), inertia=(0.1, 0.2, 0.3, 0.01, 0.0, 0.02))
    b.add_link("arm", mass=1.0, com=(0.0, 0.0, -0.3), inertia=(0.02, 0.03, 0.01, 0.0, 0.0, 0.0))
    b.add_link("forearm", mass=0.4, com=(0.1, 0.0, 0.0), inertia=(0.002, 0.003, 0.003, 0.0, 0.0, 0.0))
    b.add_link("head", mass=0.5, com=(0.05, 0.0, 0.1), inertia=(0.01, 0.012, 0.005, 0.0, 0.0, 0.0))
    b.add_joint("shoulder", "revolute", parent="torso", child="arm", xyz=(0.2, 0.0, 0.0), rpy=(0.1, 0.0, 0.2),
                axis=(0, 1, 0), damping=0.1, stiffness=0.3, rest=0.2, lower=-1.0, upper=1.2, effort=30.0, velocity=8.0)
    b.add_joint("slide", "prismatic", parent="arm", child="forearm", xyz=(0.0, 0.0, -0.4), axis=(1, 0, 0.2),
                lower=-0.1, upper=0.2, armature=0.01, reference=0.05)
    b.add_joint("neck", "spherical", parent="torso", child="head", xyz=(0.0, 0.0, 0.3), damping=0.05)
    b.add_actuator("shoulder", "motor", ctrlrange=(-1.0, 1.0))
    b.add_actuator("shoulder", "position", kp=5.0, kv=0.5, gear=1.5)
    b.add_actuator("slide", "velocity", kv=2.0, forcerange=(-3.0, 3.0))
    b.add_actuator("slide", "general", gain=(1.0, 0.1, 0.0), bias=(0.0, -1.0, -0.1))
    b.add_actuator("shoulder", "servo", kp=4.0, kv=1.0, velocity_limit=2.0, name="shoulder_servo")
    return b.build(floating_base=True)


def everything():
    """build_actuated() with every kind of derivation applied: networks at both sites, new input
    lists, gravity, damping, armature, stiffness, a ground plane, contact settings and new
    parameters."""
    m = build_actuated().with_ground_plane(friction=0.7, restitution=0.2)
    m = m.with_network("residual", inputs=["shoulder.q", "shoulder.v", "neck.v[1]", "shoulder_servo.ctrl"],
                       outputs=["shoulder", "slide"], hidden=[6], activation="elu", seed=3, zero_last_layer=False)
    m = m.with_network("drag", site="body_wrench", body="head", frame="world",
                       inputs=["rot[0,1]", "vel.lin.z", "pos.z"], hidden=[4], seed=5, zero_last_layer=False)
    m = m.with_network_inputs("residual", ["shoulder.v", "shoulder_servo.ctrl", "shoulder.q"])
    m = m.with_gravity([0.2, -0.1, -9.7]).with_damping(np.linspace(0.01, 0.1, m.nv))
    m = m.with_armature(np.full(m.nv, 0.002)).with_stiffness(np.linspace(0.0, 0.3, m.nv))
    m = m.with_contact("penalty", stiffness=3e4, friction="brown", margin=1e-3, pgs_iterations=150)
    p = m.params
    return m.with_params(p * (1.0 + 0.01 * np.sin(np.arange(p.size))))


def models():
    """(name, model) pairs covering every way a model is made."""
    out = [
        ("pendulum2.urdf", gradyn.load(MODELS / "pendulums" / "pendulum2.urdf")),
        ("laikago.urdf", laikago()),
        ("laikago.urdf with meshes", laikago(meshes=True)),
        ("hull_robot.urdf", load_quietly(TEST_DATA / "urdf" / "hull_robot.urdf")),
        ("hull_scene.xml", load_quietly(TEST_DATA / "mjcf" / "hull_scene.xml", contact="ipm")),
        ("actuated_arm.xml", load_quietly(TEST_DATA / "mjcf" / "actuated_arm.xml")),
        ("builder", build_floating()),
        ("builder with actuators", build_actuated()),
        ("everything", everything()),
    ]
    out += [(f"{name}.xml", load_quietly(MODELS / "mujoco" / f"{name}.xml")) for name in ("ant", "humanoid", "swimmer")]
    out += [(f"laikago {c}", laikago().with_contact(c)) for c in CONTACT_MODELS]
    return out


def public_view(model):
    """Every public property of the model (not the methods), by name."""
    view = {}
    for name in dir(model):
        if name.startswith("_"):
            continue
        value = getattr(model, name)
        if not callable(value):
            view[name] = value
    return view


def assert_same(a, b, where):
    """Equal, bit for bit for arrays and floats (NaN equals NaN, -0.0 differs from 0.0)."""
    assert type(a) is type(b), f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for k, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{k}]")
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert a.tobytes() == b.tobytes(), f"{where}: {a} vs {b}"
    elif isinstance(a, float):
        assert np.float64(a).tobytes() == np.float64(b).tobytes(), f"{where}: {a} vs {b}"
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


@pytest.mark.parametrize("name,model", models(), ids=lambda x: x if isinstance(x, str) else "")
def test_pickle_and_deepcopy_keep_every_property(name, model):
    view = public_view(model)
    assert {"params", "param_names", "geoms", "source", "name", "networks", "contact_settings"} <= view.keys()
    pickled = [pickle.loads(pickle.dumps(model, protocol=p)) for p in range(2, pickle.HIGHEST_PROTOCOL + 1)]
    for copied in pickled + [copy.deepcopy(model), copy.copy(model)]:
        assert type(copied) is gradyn.Model and copied is not model
        assert_same(view, public_view(copied), name)
        assert_same(model.neutral(), copied.neutral(), f"{name}.neutral()")
        assert copied.__getstate__() == model.__getstate__()
        assert repr(copied) == repr(model)


def test_the_models_cover_meshes_networks_and_every_contact_model():
    made = dict(models())
    hulls = sum(g["type"] == "convex_hull" for m in made.values() for g in m.geoms)
    assert hulls >= 3
    assert len(made["everything"].networks) == 2 and made["everything"].nu == 5
    assert {m.contact_model or "none" for m in made.values()} == set(CONTACT_MODELS)  # None: no contact
    if LAIKAGO_MESHES.exists():
        assert sum(g["type"] == "convex_hull" for g in made["laikago.urdf with meshes"].geoms) > 10


def trajectory_inputs(model, T, seed=0):
    rng = np.random.default_rng(seed)
    v0 = 0.1 * rng.standard_normal(model.nv)
    taus = 2.0 * np.sin(0.05 * np.arange(T)[:, None] + 0.7 * np.arange(model.nv)[None, :])
    ctrls = 0.5 * np.cos(0.03 * np.arange(T)[:, None] + np.arange(model.nu)[None, :]) if model.nu else None
    qs_bar = np.cos(0.1 * np.arange((T + 1) * model.nq)).reshape(T + 1, model.nq)
    vs_bar = 0.01 * np.sin(0.2 * np.arange((T + 1) * model.nv)).reshape(T + 1, model.nv)
    return v0, taus, ctrls, qs_bar, vs_bar


def rollout_and_gradient(model, q0, T, dt, integrator="euler"):
    """The rollout (qs, vs, status) and every output of its rollout_vjp."""
    v0, taus, ctrls, qs_bar, vs_bar = trajectory_inputs(model, T)
    qs, vs, status = gradyn.rollout(model, q0, v0, taus, dt, integrator=integrator, return_status=True, ctrls=ctrls)
    grads = gradyn.rollout_vjp(model, q0, v0, taus, dt, qs_bar, vs_bar, integrator=integrator, ctrls=ctrls)
    return (qs, vs, status) + tuple(grads)


def assert_bitwise(a, b, what):
    assert len(a) == len(b)
    for k, (x, y) in enumerate(zip(a, b)):
        assert x.shape == y.shape and x.tobytes() == y.tobytes(), f"{what}: output {k} differs"


@pytest.mark.parametrize("contact", CONTACT_MODELS)
def test_rollouts_and_gradients_are_bitwise_after_pickling(contact):
    robot = laikago().with_contact(contact)
    q0 = laikago_standing(robot)
    runs = [(robot, q0, 60, 1e-3, "euler")]
    if contact in ("none", "penalty"):
        runs.append((robot, q0, 30, 1e-3, "rk4"))
    arm = everything().with_contact(contact)
    runs.append((arm, arm.neutral(), 60, 2e-3, "euler"))
    hulls = load_quietly(TEST_DATA / "mjcf" / "hull_scene.xml", contact=contact)
    q_hulls = hulls.q0.copy()
    q_hulls[[2, 9]] = 0.1, 0.02  # the brick and the pyramid touching the floor
    runs.append((hulls, q_hulls, 60, 2e-3, "euler"))
    for model, q, T, dt, integrator in runs:
        original = rollout_and_gradient(model, q, T, dt, integrator)
        assert all(np.isfinite(x).all() for x in original), model.name
        for copied in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
            assert_bitwise(original, rollout_and_gradient(copied, q, T, dt, integrator), f"{model.name} {integrator}")
    # The laikago stands on the ground and the hulls lie on the floor: contacts are there to compare.
    assert gradyn.collide(robot, q0) and gradyn.collide(hulls, q_hulls)


def _rollout_in_child(model, q0, T, dt):
    """Runs in a spawned process: the model arrived pickled."""
    return os.getpid(), model.__getstate__(), rollout_and_gradient(model, q0, T, dt)


def test_a_model_sent_to_a_spawned_process_rolls_out_bitwise():
    robot = laikago().with_contact("pgs")
    q0 = laikago_standing(robot)
    arm = everything()
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        for model, q, T, dt in ((robot, q0, 40, 1e-3), (arm, arm.neutral(), 40, 2e-3)):
            pid, state, result = pool.apply(_rollout_in_child, (model, q, T, dt))
            assert pid != os.getpid() and state == model.__getstate__()
            assert_bitwise(rollout_and_gradient(model, q, T, dt), result, f"{model.name} in a child process")


def unpickle_state(state):
    model = gradyn.Model.__new__(gradyn.Model)
    model.__setstate__(state)
    return model


def test_damaged_bytes_raise_model_error_saying_what_is_wrong():
    model = everything()
    state = model.__getstate__()
    assert isinstance(state, bytes) and state.startswith(b"GRADYN-MODEL")
    with pytest.raises(gradyn.ModelError, match="not a gradyn model pickle"):
        pickle.loads(pickle.dumps(model).replace(b"GRADYN-MODEL", b"SOMETHING-EL"))
    other_version = state[:12] + (99).to_bytes(4, "little") + state[16:]
    with pytest.raises(gradyn.ModelError, match=r"made by format version 99, this gradyn reads format version \d+: unpickle it with the gradyn"):
        pickle.loads(pickle.dumps(model).replace(state, other_version))
    for cut in (20, len(state) // 2, len(state) - 1):
        with pytest.raises(gradyn.ModelError, match="truncated"):
            unpickle_state(state[:cut])  # what pickle.loads does with the state it read
    changed = bytearray(state)
    changed[len(state) // 2] ^= 0x04
    with pytest.raises(gradyn.ModelError, match="corrupted: the checksum"):
        pickle.loads(pickle.dumps(model).replace(state, bytes(changed)))
    # A ModelError is a ValueError, so `except ValueError` catches it too.
    with pytest.raises(ValueError, match="serialized model: not a gradyn model pickle"):
        pickle.loads(pickle.dumps(model).replace(state, b"\x00" * len(state)))


def test_setstate_refuses_what_is_not_model_bytes():
    model = everything()
    blank = gradyn.Model.__new__(gradyn.Model)
    with pytest.raises(ValueError, match="expected the bytes of Model.__getstate__"):
        blank.__setstate__("GRADYN-MODEL")
    blank.__setstate__(model.__getstate__())  # the failed call left it unconstructed, ready for this one
    assert blank.__getstate__() == model.__getstate__()
