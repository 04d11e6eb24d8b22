"""gradyn.viewer: offscreen images (render_rgb), self-contained recordings opened in headless
Chromium (record), and the live view's server (show)."""

import os

import numpy as np
import pytest

import gradyn
import gradyn.viewer as viewer

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
SCENE = os.path.join(ROOT, "tests", "data", "mjcf", "viewer_scene.xml")
ANT = os.path.join(ROOT, "models", "mujoco", "ant.xml")


@pytest.fixture(scope="module")
def scene():
    return gradyn.load(SCENE)


@pytest.fixture(scope="module")
def ant():
    return gradyn.load(ANT)


def swing(model, T=40):
    """A trajectory that moves every joint of the scene."""
    qs = np.zeros((T, model.nq))
    qs[:, 0] = np.linspace(0, 1.2, T)
    qs[:, 1] = np.linspace(0, 2.0, T)
    return qs


# ---------------------------------------------------------------- render_rgb


def test_render_rgb_draws_the_geoms(scene):
    img = viewer.render_rgb(scene, np.zeros(scene.nq))
    assert img.shape == (480, 480, 3) and img.dtype == np.uint8
    # Body colours are saturated; the floor, sky and world geoms are grey or pale.
    assert _coloured_pixels(img) > 2000
    assert img.reshape(-1, 3).std(axis=0).min() > 10


def _coloured_pixels(img):
    rgb = img.astype(int)
    return int(np.count_nonzero(rgb.max(axis=2) - rgb.min(axis=2) > 60))


def test_render_rgb_sizes_and_moves(scene):
    wide = viewer.render_rgb(scene, np.zeros(scene.nq), width=320, height=200)
    assert wide.shape == (200, 320, 3)
    cam = viewer.Camera(target=(0, 0, 0.6), distance=2.5)
    a = viewer.render_rgb(scene, np.zeros(scene.nq), camera=cam)
    b = viewer.render_rgb(scene, np.array([1.0, 0.5]), camera=cam)  # the arm swings down, the tip turns
    assert np.abs(a.astype(int) - b.astype(int)).max(axis=2).astype(bool).sum() > 1000
    # The same configuration gives the same image (the figure is reused between calls).
    np.testing.assert_array_equal(a, viewer.render_rgb(scene, np.zeros(scene.nq), camera=cam))


def test_render_rgb_camera_as_dict_and_tracking(ant):
    q = ant.q0.copy()
    moved = q.copy()
    moved[0] += 3.0  # the torso walks 3 m along x: a tracking camera keeps it centred
    a = viewer.render_rgb(ant, q, 160, 160, camera={"track": "torso", "distance": 3.0})
    b = viewer.render_rgb(ant, moved, 160, 160, camera={"track": "torso", "distance": 3.0})
    centre = (slice(60, 100), slice(60, 100))
    assert _coloured_pixels(a[centre]) > 200 and _coloured_pixels(b[centre]) > 200
    fixed = viewer.render_rgb(ant, moved, 160, 160, camera={"target": (0, 0, 0.75), "distance": 3.0})
    assert _coloured_pixels(fixed[centre]) < 20  # a fixed camera sees it walk out of the middle


def test_render_rgb_bad_input(scene):
    with pytest.raises(ValueError, match=r"q: expected shape \(2,\).*got \(3,\)"):
        viewer.render_rgb(scene, np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        viewer.render_rgb(scene, np.array([np.nan, 0.0]))
    with pytest.raises(ValueError, match="width, height"):
        viewer.render_rgb(scene, np.zeros(2), width=0)
    with pytest.raises(ValueError, match=r"unknown key\(s\) \['zoom'\]"):
        viewer.render_rgb(scene, np.zeros(2), camera={"zoom": 2})
    with pytest.raises(ValueError, match="has no body 'nope'.*'base', 'tip'"):
        viewer.render_rgb(scene, np.zeros(2), camera={"track": "nope"})
    with pytest.raises(TypeError, match="gradyn.Model"):
        viewer.render_rgb("ant.xml", np.zeros(2))
