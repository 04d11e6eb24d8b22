"""gradyn.viewer: offscreen images (render_rgb), self-contained recordings opened in headless
Chromium (record), and the live view's server (show)."""

import importlib.util
import io
import os
import shutil
import sys
import time
import urllib.request

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


# ---------------------------------------------------------------- the hull meshes the viewer draws


def _closed_outward_volume(v, tri):
    """The volume a triangle mesh encloses; asserts every face turns away from its centre."""
    a, b, c = v[tri[:, 0]], v[tri[:, 1]], v[tri[:, 2]]
    centre = v.mean(axis=0)
    # Counter-clockwise from outside: each face's normal points away from the (convex) mesh's centre.
    assert np.all(np.einsum("ij,ij->i", np.cross(b - a, c - a), (a + b + c) / 3 - centre) > 0)
    # Closed: each edge is walked once each way, by the two faces that meet there.
    edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    assert len({tuple(e) for e in edges}) == len(edges)
    assert {tuple(e) for e in edges} == {(j, i) for i, j in edges}
    return np.einsum("ij,ij->i", a - centre, np.cross(b - centre, c - centre)).sum() / 6


def test_hull_geoms_carry_closed_outward_meshes():
    model = gradyn.load(os.path.join(ROOT, "tests", "data", "mjcf", "hull_scene.xml"))
    geoms = {g["name"]: g for g in model.geoms}
    for name in ("brick_mesh", "pyramid_mesh"):
        v, tri = geoms[name]["vertices"], geoms[name]["triangles"]
        assert v.shape[1] == 3 and tri.shape[1] == 3 and tri.dtype == np.int32
    brick = geoms["brick_mesh"]["vertices"]
    assert _closed_outward_volume(brick, geoms["brick_mesh"]["triangles"]) == pytest.approx(
        np.prod(np.ptp(brick, axis=0)), rel=1e-9)  # a box
    # The inline tetrahedron: base an equilateral triangle of circumradius 0.2, height 0.3.
    assert _closed_outward_volume(geoms["pyramid_mesh"]["vertices"], geoms["pyramid_mesh"]["triangles"]) == \
        pytest.approx(np.sqrt(3) / 4 * 3 * 0.2**2 * 0.3 / 3, rel=1e-9)
    assert "vertices" not in geoms["floor"]


def test_every_geom_is_drawn_as_a_closed_outward_mesh(scene):
    from gradyn.viewer._scene import geom_mesh

    r, h = 0.1, 0.2
    exact = {"sphere": 4 / 3 * np.pi * r**3, "capsule": 4 / 3 * np.pi * r**3 + np.pi * r**2 * 2 * h,
             "cylinder": np.pi * r**2 * 2 * h, "box": 8 * r * h * 0.3}
    sizes = {"sphere": [r, 0, 0], "capsule": [r, h, 0], "cylinder": [r, h, 0], "box": [r, h, 0.3]}
    for kind, volume in exact.items():
        for detail in (4, 7, 16):
            v, tri = geom_mesh({"name": kind, "type": kind, "size": np.array(sizes[kind])}, detail)
            # Polygons inscribed in circles: below the exact volume, closer with more detail.
            rel = 0.4 if detail == 4 else 0.15 if detail == 7 else 0.03
            assert volume * (1 - rel) < _closed_outward_volume(v, tri) <= volume * (1 + 1e-12), (kind, detail)
    assert geom_mesh(next(g for g in scene.geoms if g["type"] == "plane")) is None


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


def _pendulum():
    b = gradyn.ModelBuilder()
    b.add_link("base")
    b.add_link("bob", mass=1.0, com=(0, 0, -1.0), inertia=(1e-4, 1e-4, 1e-4, 0, 0, 0))
    b.add_joint("hinge", "revolute", parent="base", child="bob", axis=(0, 1, 0))
    return b.build()


def test_render_rgb_of_a_model_without_geoms_is_the_background():
    img = viewer.render_rgb(_pendulum(), np.zeros(1), 64, 48)
    assert img.shape == (48, 64, 3) and np.all(img == img[0, 0])


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


def test_render_rgb_without_matplotlib_says_what_to_install(scene, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg", "mpl_toolkits.mplot3d.art3d"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it now raises ImportError
    with pytest.raises(ImportError, match="pip install matplotlib"):
        viewer.render_rgb(scene, np.zeros(2))


# ---------------------------------------------------------------- record, opened in headless Chromium

def WebDriverWait(driver, timeout):
    from selenium.webdriver.support.ui import WebDriverWait as wait

    return wait(driver, timeout)


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")


def _skip_reason():
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "headless Chromium is not installed (Debian: apt-get install chromium chromium-driver)"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install selenium)"
    return None


needs_browser = pytest.mark.skipif(_skip_reason() is not None, reason=str(_skip_reason()))
needs_meshcat = pytest.mark.skipif(importlib.util.find_spec("meshcat") is None,
                                   reason="meshcat is not installed (pip install meshcat)")


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=800,600",
                # WebGL in software: CI machines have no GPU.
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                # Every network request fails: a recording must not need one.
                "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


# The viewer's scene graph, read in the page: every three.js Mesh under /meshcat/gradyn and the
# geom node that holds it.
COUNT_MESHES = """
let names = [];
viewer.scene_tree.find(["meshcat", "gradyn"]).object.traverse(o => { if (o.isMesh) names.push(o.parent.name); });
return names;
"""


def _open(browser, url):
    browser.get_log("browser")  # drop what an earlier page logged
    browser.get(url)
    WebDriverWait(browser, 20).until(
        lambda d: d.execute_script("return typeof viewer !== 'undefined' && "
                                   "Object.keys(viewer.scene_tree.find(['meshcat', 'gradyn']).children).length > 0"))


def _screenshot(browser):
    from PIL import Image

    browser.execute_script("viewer.set_dirty();")
    time.sleep(0.3)  # a few animation frames
    return np.asarray(Image.open(io.BytesIO(browser.get_screenshot_as_png())).convert("RGB")).astype(int)


def _check_page(browser, model, path):
    """Loads the recording; returns (mesh names, pixels the geoms cover)."""
    _open(browser, "file://" + os.path.abspath(path))
    severe = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe
    # Nothing but the page itself was loaded (no scripts, fonts or data from elsewhere).
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(r => r.name);")
    assert resources == [], resources
    names = browser.execute_script(COUNT_MESHES)
    # The geoms' pixels: the still scene with and without the gradyn node.
    browser.execute_script("viewer.animator.pause(); viewer.animator.seek(0);")
    shown = _screenshot(browser)
    browser.execute_script("viewer.scene_tree.find(['meshcat', 'gradyn']).object.visible = false;")
    hidden = _screenshot(browser)
    browser.execute_script("viewer.scene_tree.find(['meshcat', 'gradyn']).object.visible = true;")
    covered = int(np.count_nonzero(np.abs(shown - hidden).max(axis=2) > 30))
    assert shown.std(axis=(0, 1)).min() > 10  # not one flat colour
    return names, covered


@needs_meshcat
@needs_browser
def test_record_every_geom_kind_plays_in_chromium(scene, browser, tmp_path):
    qs = swing(scene)
    path = viewer.record(scene, qs, tmp_path / "scene.html", fps=20)
    names, covered = _check_page(browser, scene, path)
    assert sorted(names) == sorted(scene.geom_names)
    assert covered > 5000, covered
    # The clip lasts (T - 1) / fps and ends at the last configuration, as forward kinematics has it.
    duration = browser.execute_script("return viewer.animator.duration;")
    assert duration == pytest.approx((len(qs) - 1) / 20, rel=1e-6)
    browser.execute_script("viewer.animator.seek(arguments[0]);", duration)
    expected = gradyn.forward_kinematics(scene, qs[-1])["body_poses"][scene.body_names.index("tip")]
    np.testing.assert_allclose(_pose_in_page(browser, ["meshcat", "gradyn", "tip"]), expected, atol=1e-5)


@needs_meshcat
@needs_browser
def test_record_ant_in_chromium(ant, browser, tmp_path):
    T = 300
    qs = np.tile(ant.q0, (T, 1))
    qs[:, 0] = np.linspace(0, 1, T)
    qs[:, 7:] = 0.4 * np.sin(np.linspace(0, 6, T))[:, None]
    path = viewer.record(ant, qs, tmp_path / "ant.html", dt=0.01)
    names, covered = _check_page(browser, ant, path)
    assert len(names) == len(ant.geoms) == 18 and sorted(names) == sorted(ant.geom_names)
    assert covered > 5000, covered
    # Real time: 300 rows 0.01 s apart last 2.99 s (every third row stored, and the last).
    assert browser.execute_script("return viewer.animator.duration;") == pytest.approx(2.99, rel=1e-6)
    assert len(browser.execute_script("return viewer.animator.actions[0].getClip().tracks[0].times;")) == 101
    browser.execute_script("viewer.animator.seek(1.5);")  # row 150, a stored one
    expected = gradyn.forward_kinematics(ant, qs[150])["body_poses"][ant.body_names.index("body7")]
    np.testing.assert_allclose(_pose_in_page(browser, ["meshcat", "gradyn", "body7"]), expected, atol=1e-5)


def _pose_in_page(browser, path):
    """A node's 4x4 pose in the gradyn node's frame (three.js turns the z-up world to y-up above it)."""
    elements = browser.execute_script("""
        const root = viewer.scene_tree.find(['meshcat', 'gradyn']).object;
        const node = viewer.scene_tree.find(arguments[0]).object;
        viewer.scene.updateMatrixWorld(true);
        const inverse = root.matrixWorld.clone();
        inverse.invert ? inverse.invert() : inverse.getInverse(root.matrixWorld);
        return inverse.multiply(node.matrixWorld).elements;""", path)
    return np.array(elements).reshape(4, 4).T


@needs_meshcat
@needs_browser
def test_record_several_trajectories_in_chromium(scene, browser, tmp_path):
    runs = [swing(scene, 40), swing(scene, 25)[::-1], 0.5 * swing(scene, 10)]
    offsets = [[0, 0, 0], [0, 1.5, 0], [0, -1.5, 0]]
    path = viewer.record(scene, runs, tmp_path / "batch.html", fps=20, offsets=offsets)
    names, covered = _check_page(browser, scene, path)
    world = [g["name"] for g in scene.geoms if g["body"] == "world"]
    moving = [g["name"] for g in scene.geoms if g["body"] != "world"]
    assert sorted(names) == sorted(world + 3 * moving)  # world geoms once, the bodies' per trajectory
    assert covered > 5000, covered
    duration = browser.execute_script("return viewer.animator.duration;")
    assert duration == pytest.approx(39 / 20, rel=1e-6)  # the longest
    browser.execute_script("viewer.animator.seek(arguments[0]);", duration)
    for k, qs in enumerate(runs):  # the shorter ones hold their last pose
        expected = gradyn.forward_kinematics(scene, qs[-1])["body_poses"][scene.body_names.index("tip")]
        expected[:3, 3] += offsets[k]
        np.testing.assert_allclose(_pose_in_page(browser, ["meshcat", "gradyn", f"trajectory{k}", "tip"]),
                                   expected, atol=1e-5)


@needs_meshcat
@needs_browser
def test_record_of_a_model_without_geoms_draws_nothing_of_its_own(browser, tmp_path):
    pendulum = _pendulum()
    path = viewer.record(pendulum, np.zeros((5, 1)), tmp_path / "empty.html")
    names, covered = _check_page(browser, pendulum, path)
    assert names == [] and covered == 0  # the pixel check sees geoms only where there are some


@needs_meshcat
@needs_browser
def test_record_camera_looks_at_its_target(browser, tmp_path):
    """A box far from the origin: the camera aimed at it puts it in the middle of the picture,
    the default one (aimed at the start of the first body) too; aimed elsewhere, it is off centre."""
    box = gradyn.load(os.path.join(ROOT, "examples", "demo_shuffleboard.xml"))
    q = np.array([3.0, 0.8, 0.05, 0.0, 0.0, 0.0, 1.0])

    def box_at_centre(camera):
        path = viewer.record(box, q[None], tmp_path / "camera.html", camera=camera)
        _check_page(browser, box, path)
        image = _screenshot(browser)
        h, w, _ = image.shape
        centre = image[h // 2 - 5:h // 2 + 5, w // 2 - 5:w // 2 + 5].reshape(-1, 3).mean(axis=0)
        return centre[0] - centre[2] > 60  # the box's orange, not the grey floor

    assert box_at_centre(viewer.Camera(azimuth=-90, elevation=30, distance=2.0, target=(3.0, 0.8, 0.05)))
    assert box_at_centre({"distance": 2.0})
    assert not box_at_centre({"distance": 2.0, "target": (0.0, 0.0, 0.0)})
    with pytest.raises(ValueError, match="a recording's camera is fixed"):
        viewer.record(box, q[None], tmp_path / "x.html", camera={"track": "box"})
    with pytest.raises(ValueError, match=r"camera.target: expected a finite point"):
        viewer.record(box, q[None], tmp_path / "x.html", camera={"target": (0, 1)})
    with pytest.raises(ValueError, match="camera.distance: expected a positive"):
        viewer.record(box, q[None], tmp_path / "x.html", camera={"distance": -1.0})


# ---------------------------------------------------------------- record: arguments

@needs_meshcat
def test_record_arguments(scene, tmp_path):
    with pytest.raises(ValueError, match=r"qs: expected shape \(T, 2\).*got \(10, 3\)"):
        viewer.record(scene, np.zeros((10, 3)), tmp_path / "x.html")
    with pytest.raises(ValueError, match=r"qs: row 4 holds NaN"):
        qs = np.zeros((10, 2))
        qs[4, 1] = np.inf
        viewer.record(scene, qs, tmp_path / "x.html")
    with pytest.raises(ValueError, match="dt: expected the positive time"):
        viewer.record(scene, np.zeros((10, 2)), tmp_path / "x.html", dt=0)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        viewer.record(scene, np.zeros((10, 2)), tmp_path / "no" / "x.html")
    with pytest.raises(ValueError, match=r"qs\[1\]: expected shape \(T, 2\).*got \(5, 1\)"):
        viewer.record(scene, [np.zeros((5, 2)), np.zeros((5, 1))], tmp_path / "x.html")
    with pytest.raises(ValueError, match=r"offsets: expected finite \(2, 3\).*got shape \(3,\)"):
        viewer.record(scene, np.zeros((2, 5, 2)), tmp_path / "x.html", offsets=[0, 1, 0])
    # One configuration is a still scene.
    path = viewer.record(scene, np.zeros(2), tmp_path / "still.html")
    text = open(path, encoding="utf-8").read()
    assert text.startswith("<!DOCTYPE html>") and "<title>gradyn: viewer_scene</title>" in text


def test_record_without_meshcat_says_what_to_install(scene, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "meshcat", None)  # import meshcat now raises ImportError
    with pytest.raises(ImportError, match="pip install meshcat"):
        viewer.record(scene, np.zeros(2), tmp_path / "x.html")
    with pytest.raises(ImportError, match="pip install meshcat"):
        viewer.show(scene, open_browser=False)


@needs_meshcat
def test_record_needs_neither_matplotlib_nor_scipy(scene, tmp_path, monkeypatch):
    for name in ("matplotlib", "matplotlib.figure", "mpl_toolkits", "mpl_toolkits.mplot3d", "scipy", "scipy.spatial"):
        monkeypatch.setitem(sys.modules, name, None)
    assert os.path.getsize(viewer.record(scene, swing(scene), tmp_path / "x.html")) > 100_000


# ---------------------------------------------------------------- show: the live server

@needs_meshcat
def test_show_serves_the_viewer_and_closes(scene):
    with viewer.show(scene, swing(scene), open_browser=False) as view:
        assert view.running and view.url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(view.url, timeout=10) as page:
            assert page.status == 200 and b"main.min.js" in page.read()
        if _skip_reason() is None:
            _show_in_browser(view, scene)
        view.display(np.array([0.5, 0.5]))
    assert not view.running


def _show_in_browser(view, scene):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(view.url)
        # The live page gets the scene over its websocket.
        WebDriverWait(driver, 20).until(lambda d: len(d.execute_script(COUNT_MESHES)) == len(scene.geoms))
        assert sorted(driver.execute_script(COUNT_MESHES)) == sorted(scene.geom_names)
    finally:
        driver.quit()
