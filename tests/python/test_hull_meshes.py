"""Mesh geoms as convex hulls from Python: an MJCF scene whose bodies carry an STL mesh and an
inline mesh (tests/data/mjcf/hull_scene.xml) is loaded, dropped on the floor under PGS and comes to
rest; the URDF mesh collisions load too."""

import os

import numpy as np
import pytest

import gradyn

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
SCENE = os.path.join(DATA, "mjcf", "hull_scene.xml")


def test_mesh_geoms_are_convex_hulls():
    model = gradyn.load(SCENE)
    geoms = {g["name"]: g for g in model.geoms}
    assert geoms["brick_mesh"]["type"] == "convex_hull"
    assert geoms["pyramid_mesh"]["type"] == "convex_hull"
    np.testing.assert_array_equal(geoms["brick_mesh"]["size"], [1, 1, 1])  # the hull's scale
    urdf = gradyn.load(os.path.join(DATA, "urdf", "hull_robot.urdf"))
    assert [g["type"] for g in urdf.geoms] == ["convex_hull", "convex_hull"]


def test_mesh_bodies_fall_and_rest_on_the_floor():
    model = gradyn.load(SCENE, contact="pgs")
    q0, v0 = np.array(model.q0), np.zeros(model.nv)  # the bodies' poses in the file, apart and above the floor
    steps, dt = 3000, 1e-3
    qs, vs = gradyn.rollout(model, q0, v0, np.zeros((steps, model.nv)), dt, "euler")
    assert np.all(np.isfinite(qs))
    q = qs[-1]
    # The brick (a 0.2 x 0.2 x 0.1 box mesh, level) lands flat: its centre rests at its half-height.
    brick = 0  # the first free joint: x, y, z, then the quaternion x, y, z, w
    assert q[brick + 2] == pytest.approx(0.05, abs=2e-3)
    assert abs(q[brick + 6]) == pytest.approx(1.0, abs=1e-6)  # not tipped (the mesh's 0.3 rad turn is the geom's)
    # Both bodies are at rest, touching the floor and not through it.
    assert np.abs(vs[-1]).max() < 1e-2
    contacts = gradyn.collide(model, q)
    touching = {c["geom_b"] for c in contacts if c["geom_a"] == "floor"}
    assert touching == {"brick_mesh", "pyramid_mesh"}
    assert max(c["depth"] for c in contacts) < 5e-3
