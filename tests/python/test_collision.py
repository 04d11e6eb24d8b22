"""gradyn.collide and Model.geoms: geometry read from MJCF agrees with MuJoCo's compiled model,
contacts on the shipped ant, and argument errors."""

import os

import numpy as np
import pytest

import gradyn

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ANT = os.path.join(ROOT, "models", "mujoco", "ant.xml")
HUMANOID = os.path.join(ROOT, "models", "mujoco", "humanoid.xml")


@pytest.mark.parametrize("path", [ANT, HUMANOID])
def test_geoms_match_mujoco(path):
    mujoco = pytest.importorskip("mujoco")
    mj = mujoco.MjModel.from_xml_path(path)
    model = gradyn.load(path)
    geoms = {g["name"]: g for g in model.geoms}
    assert len(geoms) == mj.ngeom
    types = {0: "plane", 2: "sphere", 3: "capsule", 5: "cylinder", 6: "box"}
    for i in range(mj.ngeom):
        name = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, i)
        g = geoms[name]
        assert g["type"] == types[int(mj.geom_type[i])]
        assert g["friction"] == pytest.approx(mj.geom_friction[i][0])
        assert g["contype"] == mj.geom_contype[i] and g["conaffinity"] == mj.geom_conaffinity[i]
        if g["type"] != "plane":
            n = {"sphere": 1, "capsule": 2, "cylinder": 2, "box": 3}[g["type"]]
            np.testing.assert_allclose(g["size"][:n], mj.geom_size[i][:n], rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_floor_contacts_match_mujoco(seed):
    """The humanoid pushed into the floor in a random posture: every contact MuJoCo finds with the
    plane (spheres and capsule ends) is found by gradyn with the same depth, point and normal."""
    mujoco = pytest.importorskip("mujoco")
    mj = mujoco.MjModel.from_xml_path(HUMANOID)
    data = mujoco.MjData(mj)
    rng = np.random.default_rng(seed)
    data.qpos[2] = 0.5
    data.qpos[3:7] = [np.cos(0.6), np.sin(0.6), 0, 0]  # leaning: limbs and trunk reach the floor
    data.qpos[7:] = rng.uniform(-0.6, 0.6, mj.nq - 7)
    mujoco.mj_forward(mj, data)
    model = gradyn.load(HUMANOID)
    q = np.array(data.qpos)
    q[3:7] = [q[4], q[5], q[6], q[3]]  # w, x, y, z -> x, y, z, w
    ours = [c for c in gradyn.collide(model, q) if c["geom_a"] == "floor"]
    name = lambda i: mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, i)
    theirs = [c for c in data.contact[: data.ncon] if name(c.geom1) == "floor" or name(c.geom2) == "floor"]
    assert len(theirs) > 0
    assert len(ours) == len(theirs)
    for c in theirs:
        other = name(c.geom2) if name(c.geom1) == "floor" else name(c.geom1)
        match = [o for o in ours if o["geom_b"] == other and np.linalg.norm(o["point"] - c.pos) < 1e-9]
        assert len(match) == 1, other
        assert match[0]["depth"] == pytest.approx(-c.dist, abs=1e-12)
        np.testing.assert_allclose(match[0]["normal"], c.frame[:3], atol=1e-12)


def test_ant_feet_on_the_floor():
    model = gradyn.load(ANT)
    q = model.neutral()
    q[:7] = [0, 0, 0.05, 0, 0, 0, 1]
    contacts = gradyn.collide(model, q)
    assert len(contacts) == 4
    for c in contacts:
        assert c["geom_a"] == "floor" and c["geom_b"].endswith("foot_geom")
        assert c["depth"] == pytest.approx(0.03)
        np.testing.assert_allclose(c["normal"], [0, 0, 1], atol=1e-15)
        np.testing.assert_allclose(c["frame"][:, 0], c["normal"])
    # Lifted above the floor: nothing, unless the margin reaches.
    q[2] = 0.1
    assert gradyn.collide(model, q) == []
    near = gradyn.collide(model, q, margin=0.05)
    assert len(near) == 4 and all(c["depth"] == pytest.approx(-0.02) for c in near)


def test_collide_arguments():
    model = gradyn.load(ANT)
    with pytest.raises(ValueError, match="q: expected shape"):
        gradyn.collide(model, np.zeros(3))
    with pytest.raises(ValueError, match="margin"):
        gradyn.collide(model, model.neutral(), margin=-1.0)
    assert "floor" in model.geom_names


def test_with_ground_plane_adds_a_world_floor(ball_path):
    """A URDF has no world geometry: Model.with_ground_plane adds a plane z = height to a copy."""
    model = gradyn.load(ball_path)
    raised = model.with_ground_plane(height=0.5, friction=0.7, restitution=0.3, name="deck")
    assert model.geom_names == ["floor", "ball"]  # the original is unchanged
    deck = raised.geoms[-1]
    assert deck["name"] == "deck" and deck["type"] == "plane" and deck["body"] == "world"
    assert deck["friction"] == 0.7 and deck["restitution"] == 0.3
    np.testing.assert_array_equal(deck["placement"][:3, 3], [0, 0, 0.5])
    q = model.neutral()
    q[2] = 0.55  # ball of radius 0.1 sinks 0.05 into the deck
    (hit,) = [c for c in gradyn.collide(raised, q) if "deck" in (c["geom_a"], c["geom_b"])]
    assert hit["depth"] == pytest.approx(0.05, abs=1e-12)
    with pytest.raises(ValueError, match="already has a geom named 'floor'"):
        model.with_ground_plane(name="floor")
    with pytest.raises(gradyn.ModelError, match="friction"):
        model.with_ground_plane(friction=-1.0)
    with pytest.raises(gradyn.ModelError, match="restitution"):
        model.with_ground_plane(restitution=1.5)
    with pytest.raises(ValueError, match="height"):
        model.with_ground_plane(height=float("inf"))
