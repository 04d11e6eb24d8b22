"""Recordings and live views with MeshCat.

MeshCat's viewer is one JavaScript bundle (three.js inside) that ships in the ``meshcat`` wheel
and takes its scene as a stream of msgpack commands; meshcat-python inlines that bundle in its
own ``static_html()``, so a recording is a single HTML file that opens without a network or a
server; record() writes that page itself (without starting meshcat's server) and the live view
uses the server. Pinocchio's and Drake's viewers speak the same protocol. viser and Rerun, both
more actively developed, play recordings in a web client shipped as separate files (viser's
client build, Rerun's WebAssembly viewer), which one offline file would have to re-pack.

Scene layout (paths under ``/meshcat/gradyn``): one node per body, animated, holding one node
per geom at its placement; world geoms under ``world``; several trajectories put each copy's
bodies under ``trajectory<k>``. Each geom is one three.js Mesh.
"""

from __future__ import annotations

import base64
import html
import math
import os
import time
import warnings

import numpy as np

from . import _scene
from ._render import _camera


def _progress(frames, total: int):
    """A tqdm bar over frames when tqdm is installed (a convenience only: imported when needed)."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return frames
    return tqdm(frames, total=total, desc="gradyn.viewer: animation frames", unit="frame")


def _meshcat():
    try:
        with warnings.catch_warnings():
            # meshcat 0.3.2 imports pyzmq's deprecated zmq.eventloop.ioloop; harmless here.
            warnings.simplefilter("ignore", DeprecationWarning)
            import meshcat
            import meshcat.animation
            import meshcat.geometry
            import umsgpack
    except ImportError as e:
        raise ImportError("gradyn.viewer.record and gradyn.viewer.show draw with MeshCat, which is not "
                          f"installed ({e}): pip install meshcat") from e
    return meshcat, umsgpack


def _key(name: str) -> str:
    # MeshCat splits paths at '/', and default geom names look like '<link>/collision0'.
    return name.replace("/", "|")


def _colour(rgb) -> int:
    r, g, b = (int(round(255 * float(c))) for c in rgb)
    return (r << 16) | (g << 8) | b


_CYLINDER_TO_Z = np.array([[1.0, 0, 0, 0], [0, 0, -1, 0], [0, 1, 0, 0], [0, 0, 0, 1]])  # three.js cylinders run along y


def _geometry(mg, geom, floor_half: float):
    """(meshcat geometry, extra transform in the geom frame) for one geom."""
    kind, size = geom["type"], np.asarray(geom["size"], dtype=np.float64)
    if kind == "sphere":
        return mg.Sphere(float(size[0])), np.eye(4)
    if kind == "box":
        return mg.Box([float(2 * s) for s in size]), np.eye(4)
    if kind == "cylinder":
        return mg.Cylinder(float(2 * size[1]), float(size[0])), _CYLINDER_TO_Z
    if kind == "plane":
        # A checkered square patch of the infinite plane (1 m tiles in its own frame), coloured
        # per vertex: it replaces MeshCat's grid, which flickers against a floor at z = 0.
        tiles, dark = _scene.floor_tiles(np.eye(4), np.zeros(3), floor_half, step=1.0)
        v = tiles.reshape(-1, 3)
        first = 4 * np.arange(len(tiles))[:, None]
        triangles = np.vstack([first + [0, 1, 2], first + [0, 2, 3]])
        colours = np.repeat(np.where(dark[:, None], _scene.FLOOR_DARK, _scene.FLOOR), 4, axis=0)
        return mg.TriangularMeshGeometry(v, triangles, color=colours), np.eye(4)
    vertices, triangles = _scene.geom_mesh(geom, detail=16)  # capsule, convex_hull
    return mg.TriangularMeshGeometry(vertices, triangles), np.eye(4)


def _frames(count: int, dt, fps: float):
    """Rows (of count) to store and the time in seconds at which each is shown."""
    if not (isinstance(fps, (int, float)) and math.isfinite(fps) and fps > 0):
        raise ValueError(f"fps: expected a positive number of frames per second, got {fps!r}")
    if dt is None:
        rows = np.arange(count)
        return rows, rows / float(fps)
    if not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise ValueError(f"dt: expected the positive time in seconds between rows of qs, or None, got {dt!r}")
    # Real time: keep every stride-th row, so that at most about fps frames are stored per second.
    stride = max(1, int(round(1.0 / (dt * fps))))
    rows = np.arange(0, count, stride)
    if rows[-1] != count - 1:
        rows = np.append(rows, count - 1)  # the last configuration is always shown
    return rows, rows * float(dt)


def _build_scene(vis, model, trajectories, dt, fps, loop, progress, offsets=None, camera=None):
    """Send the model's geoms and the trajectories' animation to a MeshCat visualizer: one copy of
    the model's bodies per trajectory (a list of (T_k, nq) arrays), world geoms once."""
    meshcat, _ = _meshcat()
    mg = meshcat.geometry
    longest = max(len(qs) for qs in trajectories)
    rows, times = _frames(longest, dt, fps)
    if offsets is None:
        offsets = np.zeros((len(trajectories), 3))
    # Each copy's body poses at the stored rows; a shorter trajectory holds its last pose.
    poses = [_scene.body_poses(model, qs[np.minimum(rows, len(qs) - 1)]) for qs in trajectories]
    for pose, offset in zip(poses, offsets):
        pose[:, :, :3, 3] += offset
    geoms = model.geoms
    # The floor patch reaches 3 m past everything the trajectories visit.
    start = poses[0][0, 0, :3, 3]
    radius = max(0.5, _scene.model_radius(model, trajectories[0][0], start - offsets[0]))
    reach = max(np.abs(p[:, :, :2, 3]).max(initial=0.0) for p in poses) + radius
    floor_half = max(5.0, float(reach) + 3.0)

    root = vis["gradyn"]
    root.delete()
    body_keys = [_key(name) for name in model.body_names]
    # One trajectory's bodies hang under /gradyn itself, a batch's under /gradyn/trajectory<k>.
    copies = [root] if len(trajectories) == 1 else [root[f"trajectory{k}"] for k in range(len(trajectories))]
    for copy, pose in zip(copies, poses):
        for b, key in enumerate(body_keys):
            copy[key].set_transform(pose[0, b])
    used = set()
    for k, g in enumerate(geoms):
        key = _key(g["name"])
        if key in used:
            key = f"{key}#{k}"
        used.add(key)
        geometry, extra = _geometry(mg, g, floor_half)
        if g["type"] == "plane":
            material = mg.MeshLambertMaterial(color=0xFFFFFF, vertexColors=True)
            vis["/Grid"].set_property("visible", False)
        else:
            material = mg.MeshLambertMaterial(color=_colour(_scene.body_colour(model, g["body"])))
        if g["body"] == "world":
            parents = [root["world"]]
        else:
            parents = [copy[body_keys[model.body_names.index(g["body"])]] for copy in copies]
        for parent in parents:
            node = parent[key]
            node.set_object(geometry, material)
            node.set_transform(np.asarray(g["placement"]) @ extra)

    if camera is None:
        # The default camera looks at the first body's start from a distance that fits the model.
        eye, target = 2.5 * radius * np.array([1.0, 0.6, 0.5]), start
    else:
        # A fixed camera: the recording plays without a server, so nothing could move it.
        cam = _camera(camera)
        if cam.track is not None:
            raise ValueError("camera: a recording's camera is fixed (track is for render_rgb); give target instead")
        target = start if cam.target is None else _scene.point(cam.target, "camera.target")
        distance = 2.5 * radius * float(np.linalg.norm([1.0, 0.6, 0.5])) if cam.distance is None else cam.distance
        if not (math.isfinite(distance) and distance > 0):
            raise ValueError(f"camera.distance: expected a positive number of metres, got {cam.distance!r}")
        azimuth, elevation = math.radians(cam.azimuth), math.radians(cam.elevation)
        eye = distance * np.array([math.cos(elevation) * math.cos(azimuth),
                                   math.cos(elevation) * math.sin(azimuth), math.sin(elevation)])
        vis["/Cameras/default/rotated/<object>"].set_property("fov", float(cam.fov))
    # The viewer's orbit controls always look at its origin, so the scene moves instead: the
    # gradyn node is shifted by -target (poses read relative to it are unchanged) and MeshCat's
    # world axes, which would then mark the target rather than gradyn's origin, are hidden.
    root.set_transform(_translation(-np.asarray(target, dtype=np.float64)))
    vis["/Axes"].set_property("visible", False)
    # MeshCat's camera sits in a y-up frame ('rotated') under the z-up world.
    vis["/Cameras/default/rotated/<object>"].set_property("position", [eye[0], eye[2], -eye[1]])

    if len(rows) > 1:
        # Key times in seconds (a clip's frame rate of 1), exact also where rows were skipped.
        animation = meshcat.animation.Animation(default_framerate=1)
        frames = range(len(rows))
        if progress and len(rows) * len(body_keys) * len(copies) > 20000:  # about a second of work
            frames = _progress(frames, len(rows))
        for i in frames:
            for copy, pose in zip(copies, poses):
                with animation.at_frame(copy, float(times[i])) as frame:
                    for b, key in enumerate(body_keys):
                        frame[key].set_transform(pose[i, b])
        vis.set_animation(animation, play=True, repetitions=math.inf if loop else 1)


def _translation(p):
    m = np.eye(4)
    m[:3, 3] = p
    return m


class _Recorder:
    """A MeshCat window that keeps the commands instead of sending them to a server."""

    def __init__(self, umsgpack):
        self._pack = umsgpack.packb
        self.commands = []

    def send(self, command):
        self.commands.append(self._pack(command.lower()))


def _viewer_bundle(meshcat) -> str:
    path = os.path.join(os.path.dirname(meshcat.__file__), "viewer", "dist", "main.min.js")
    with open(path, encoding="utf-8") as f:
        return f.read()


def record(model, qs, path, *, dt=None, fps: float = 30.0, loop: bool = True, offsets=None,
           camera=None, title: str | None = None, progress: bool = True) -> str:
    """Write a self-contained HTML file that plays the trajectory qs of model with every geom.

    The file inlines MeshCat's viewer (three.js) and the scene, so it opens offline in any
    browser (about 1 MB plus the trajectory); drag to orbit, scroll to zoom, and the panel's
    Animations folder plays, pauses and scrubs. qs: (T, nq) configurations (or one (nq,)); or
    several trajectories of the model, a (B, T, nq) array or a list of (T_k, nq) arrays, drawn
    as B copies of its bodies played together (a shorter one holds its last pose; world geoms
    are drawn once), each shifted by its row of offsets ((B, 3) metres; None: all in place).
    dt: seconds between rows of qs, to play in real time (rows are skipped so that at most fps
    frames per second are stored); None plays one row per frame at fps. loop: replay without
    end (else once). camera: where the view starts, a :class:`Camera` or dict (azimuth,
    elevation, distance, target, fov; fixed, so not track); None looks at the first body's start
    from a distance that fits the model. progress: a tqdm bar while a long animation is
    assembled. Returns the path.
    Needs the ``meshcat`` package (``pip install meshcat``) and numpy; nothing else.
    """
    trajectories, offsets = _scene.as_trajectories(model, qs, offsets)
    meshcat, umsgpack = _meshcat()
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"path: the folder {directory!r} of {path!r} does not exist")
    recorder = _Recorder(umsgpack)
    vis = meshcat.Visualizer(window=recorder)
    _build_scene(vis, model, trajectories, dt, fps, loop, progress, offsets, camera)
    commands = ",\n".join('"' + base64.b64encode(c).decode("ascii") + '"' for c in recorder.commands)
    bundle = _viewer_bundle(meshcat).replace("</script", "<\\/script")
    title = html.escape(title if title is not None else f"gradyn: {model.name}")
    page = f"""<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>body {{ margin: 0; }} #meshcat-pane {{ width: 100vw; height: 100vh; overflow: hidden; }}</style>
</head>
<body>
<div id="meshcat-pane"></div>
<script>{bundle}</script>
<script>
// Written by gradyn.viewer.record: MeshCat's commands, replayed in order.
var viewer = new MeshCat.Viewer(document.getElementById("meshcat-pane"));
[{commands}].forEach(function (c) {{
  viewer.handle_command_bytearray(Uint8Array.from(atob(c), function (ch) {{ return ch.charCodeAt(0); }}));
}});
</script>
</body>
</html>
"""
    with open(path, "w", encoding="utf-8") as f:
        f.write(page)
    return path


class LiveView:
    """A running MeshCat server showing a model: returned by :func:`show`.

    url: the page to open. visualizer: the ``meshcat.Visualizer``, to add your own objects.
    display(q) shows one configuration, play(qs, dt=None, fps=30) replaces the animation,
    close() stops the server (also at interpreter exit, and on leaving a ``with`` block).
    """

    def __init__(self, model, visualizer):
        self.model = model
        self.visualizer = visualizer
        self.url = visualizer.url()

    def play(self, qs, *, dt=None, fps: float = 30.0, loop: bool = True, offsets=None):
        trajectories, offsets = _scene.as_trajectories(self.model, qs, offsets)
        _build_scene(self.visualizer, self.model, trajectories, dt, fps, loop, True, offsets)

    def display(self, q):
        self.play(_scene.as_configuration(self.model, q)[None, :])

    @property
    def running(self) -> bool:
        proc = self.visualizer.window.server_proc
        return proc is not None and proc.poll() is None

    def close(self):
        window = self.visualizer.window
        if window.server_proc is not None and window.server_proc.poll() is None:
            window.server_proc.kill()
            window.server_proc.wait()
        window.zmq_socket.close(linger=0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        state = "running" if self.running else "closed"
        return f"gradyn.viewer.LiveView(model='{self.model.name}', url='{self.url}', {state})"


def show(model, qs=None, *, dt=None, fps: float = 30.0, loop: bool = True, offsets=None,
         open_browser: bool = True, block: bool = False) -> LiveView:
    """Show model (and the trajectory qs, if given) live in the browser with MeshCat's server.

    Starts a MeshCat server (a child process on localhost, ports from 7000 for the page and
    6000 for its commands) and returns a :class:`LiveView` at once: its url is the page,
    opened in the default browser when open_browser. qs, dt, fps, loop, offsets: as in :func:`record`;
    None shows ``model.q0``. block: wait until Ctrl-C, then stop the server. Needs
    ``pip install meshcat``.
    """
    _scene.as_trajectories(model, model.q0 if qs is None else qs, offsets)  # bad arguments fail before the server starts
    meshcat, _ = _meshcat()
    view = LiveView(model, meshcat.Visualizer())
    try:
        view.play(model.q0 if qs is None else qs, dt=dt, fps=fps, loop=loop, offsets=offsets)
        if open_browser:
            view.visualizer.open()
    except BaseException:
        view.close()
        raise
    if block:
        print(f"gradyn.viewer.show: {view.url} (Ctrl-C stops the server)")
        try:
            while view.running:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            view.close()
    return view
