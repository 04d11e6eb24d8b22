"""Offscreen images of one configuration with matplotlib's Agg backend (no display, no browser,
no OpenGL): every geom is drawn as flat-shaded triangles sorted back to front by matplotlib's
3-D axes, the floor first, behind everything."""

from __future__ import annotations

import dataclasses
import math
import threading

import numpy as np

from .. import _core
from . import _scene


@dataclasses.dataclass(frozen=True)
class Camera:
    """Where render_rgb looks from. A plain dict with the same keys works too.

    azimuth, elevation: degrees; the eye lies at azimuth about +z from +x, elevation above the
    horizontal plane through the target. distance: metres from the eye to the target; None picks
    2 times the radius of the model's geoms (at ``model.q0``), at least 1 m. target: a world
    point (x, y, z) to look at; None follows the body ``track``. track: a body name; None is the
    first body (``model.body_names[0]``, the floating base of a legged robot), so the camera
    moves with the robot. fov: vertical field of view in degrees.
    """

    azimuth: float = 45.0
    elevation: float = 25.0
    distance: float | None = None
    target: tuple | None = None
    track: str | None = None
    fov: float = 45.0


def _camera(camera) -> Camera:
    if camera is None:
        return Camera()
    if isinstance(camera, Camera):
        return camera
    if isinstance(camera, dict):
        keys = {f.name for f in dataclasses.fields(Camera)}
        unknown = sorted(set(camera) - keys)
        if unknown:
            raise ValueError(f"camera: unknown key(s) {unknown}; the keys are {sorted(keys)}")
        return Camera(**camera)
    raise TypeError(f"camera: expected None, a dict or a gradyn.viewer.Camera, got {type(camera).__name__}")


def _view(model, q, cam: Camera):
    """(target, distance) of the camera for configuration q."""
    if cam.target is not None:
        target = _scene.point(cam.target, "camera.target")
    else:
        body = cam.track if cam.track is not None else model.body_names[0]
        if body not in model.body_names:
            raise ValueError(f"camera.track: model '{model.name}' has no body '{body}'; its bodies are {model.body_names}")
        target = _core.forward_kinematics(model, q)["body_poses"][model.body_names.index(body)][:3, 3]
    distance = cam.distance
    if distance is None:
        q0 = model.q0
        root = _core.forward_kinematics(model, q0)["body_poses"][0][:3, 3]
        distance = max(1.0, 2.0 * _scene.model_radius(model, q0, root))
    if not (math.isfinite(distance) and distance > 0):
        raise ValueError(f"camera.distance: expected a positive number of metres, got {distance!r}")
    if not 0 < cam.fov < 180:
        raise ValueError(f"camera.fov: expected degrees in (0, 180), got {cam.fov!r}")
    return target, float(distance)


_lock = threading.Lock()
_figures: dict = {}  # (width, height) -> (figure, axes, canvas): a figure is costly to create


def _matplotlib():
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from mpl_toolkits.mplot3d.art3d import Poly3DCollection
    except ImportError as e:
        raise ImportError(f"gradyn.viewer.render_rgb draws with matplotlib, which is not installed ({e}): "
                          "pip install matplotlib") from e
    return Figure, FigureCanvasAgg, Poly3DCollection


def _figure(width: int, height: int):
    key = (width, height)
    if key not in _figures:
        Figure, FigureCanvasAgg, _ = _matplotlib()
        dpi = 100
        fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi, facecolor=(0.87, 0.91, 0.96))
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_axes((0, 0, 1, 1), projection="3d", facecolor=(0.87, 0.91, 0.96))
        ax.set_axis_off()
        ax.computed_zorder = False  # the floor (zorder 0) stays behind the geoms (zorder 1)
        _figures[key] = (fig, ax, canvas)
    return _figures[key]


def render_rgb(model, q, width: int = 480, height: int = 480, camera=None) -> np.ndarray:
    """An image of the model at configuration q: an (height, width, 3) uint8 RGB array.

    Offscreen (matplotlib's Agg backend: no display, browser or GPU), for Gymnasium's
    ``render_mode="rgb_array"`` and figures. Every geom is drawn in its body's colour, a plane as
    a checkered floor; camera: None, a :class:`Camera` or a dict of its fields (by default it
    follows the first body from 45 degrees azimuth, 25 degrees up). A model without geoms gives
    an image of the background only. Flat shading and a back-to-front sort of the triangles
    (the painter's algorithm): geoms that cut through each other may be drawn in the wrong order
    where they meet. Tens of milliseconds a 480x480 frame (the ant: 25-55 ms on a busy 2-core
    machine); the figure is kept per image size and reused, under a lock.
    """
    q = _scene.as_configuration(model, q)
    if not (isinstance(width, (int, np.integer)) and isinstance(height, (int, np.integer)) and width >= 16 and height >= 16):
        raise ValueError(f"width, height: expected whole numbers of pixels >= 16, got {width!r}, {height!r}")
    width, height = int(width), int(height)
    cam = _camera(camera)
    target, distance = _view(model, q, cam)
    half_width = distance * math.tan(math.radians(cam.fov) / 2)

    az, el = math.radians(cam.azimuth), math.radians(cam.elevation)
    toward_eye = np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])
    eye = target + distance * toward_eye
    light = toward_eye + np.array([0.0, 0.0, 1.0])  # from behind the viewer and above
    light /= np.linalg.norm(light)

    geoms = model.geoms
    world = _scene.geom_world_poses(model, geoms, _core.forward_kinematics(model, q)["body_poses"])
    polys, colours, floor, floor_colours = [], [], [], []
    for g, pose in zip(geoms, world):
        if g["type"] == "plane":
            # Far enough to fill a wide image's sides (half_width * width / height) and most of
            # the ground behind the target; past it the sky shows, as past a horizon.
            extent = max(3.0 * distance, 2.5 * half_width * width / height)
            tiles, dark = _scene.floor_tiles(pose, target, extent)
            floor.append(tiles)
            floor_colours.append(np.where(dark[:, None], _scene.FLOOR_DARK, _scene.FLOOR))
            continue
        v, tri = _scene.geom_mesh(g, detail=8)
        t = (v @ pose[:3, :3].T + pose[:3, 3])[tri]  # (m, 3, 3) world triangles
        n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
        n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
        front = np.einsum("ij,ij->i", n, eye - t.mean(axis=1)) > 0  # back faces of a convex shape are hidden
        shade = 0.35 + 0.65 * np.clip(n[front] @ light, 0.0, 1.0)
        polys.append(t[front])
        colours.append(shade[:, None] * _scene.body_colour(model, g["body"]))

    _, _, Poly3DCollection = _matplotlib()
    with _lock:
        fig, ax, canvas = _figure(width, height)
        for collection in list(ax.collections):  # the last image's (ax.clear() would cost ~30 ms)
            collection.remove()
        ax.set_proj_type("persp", focal_length=1 / math.tan(math.radians(cam.fov) / 2))
        ax.view_init(elev=cam.elevation, azim=cam.azimuth, roll=0)
        for axis, c in zip("xyz", target):
            getattr(ax, f"set_{axis}lim")(c - half_width, c + half_width)
        ax.set_box_aspect((1, 1, 1), zoom=1.0)
        if floor and cam.elevation > 0:
            ax.add_collection3d(Poly3DCollection(np.concatenate(floor), facecolors=np.concatenate(floor_colours),
                                                 edgecolors="none", zorder=0))
        if polys:
            c = np.clip(np.concatenate(colours), 0, 1)
            # Edges in the face colour hide the antialiasing seams between triangles.
            ax.add_collection3d(Poly3DCollection(np.concatenate(polys), facecolors=c, edgecolors=c,
                                                 linewidths=0.3, zorder=1))
        canvas.draw()
        image = np.asarray(canvas.buffer_rgba())[..., :3].copy()
    if image.shape[:2] != (height, width):  # figure sizes round to whole pixels
        raise AssertionError(f"render_rgb: matplotlib drew {image.shape[:2]}, not {(height, width)}")
    return image
