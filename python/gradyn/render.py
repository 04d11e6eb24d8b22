"""The differentiable ray-cast camera (paper 002, section 3.4): ``gradyn.render`` and its adjoint.

::

    cam = gradyn.Camera.look_at(eye=(0, -3, 1.5), target=(0, 0, 0.5), width=64, height=64)
    look = gradyn.Appearance(colors={"ball": (0.9, 0.2, 0.1)}, textures={"floor": "checker.png"})
    image = gradyn.render(model, q, cam, look)            # (64, 64, 3) float64; q (B, nq) -> (B, 64, 64, 3)
    grads = gradyn.render_vjp(model, q, cam, image_bar, look)   # dict: q, params, geom_size, colors, ...

One ray per pixel centre from the camera through the image plane, intersected with every collision
geom (plane, sphere, capsule, box, cylinder, convex hull), seen from outside; the nearest hit is
shaded base * (ambient + diffuse * max(0, n . l)) (or base alone without lighting), base a solid
colour or a bilinearly sampled texture; the background colour where no geom is hit. Conventions
(camera frame, texture maps per primitive) are those of include/gradyn/render/camera.hpp.

Gradients hold fixed which geom each pixel sees (a discrete choice): silhouette edges give no
gradient; inside a geom the gradient comes from the texture's bilinear interpolation and the
shading (a solid, unlit geom's pixels are constant and give its pose no gradient).
"""

from __future__ import annotations

import os

import numpy as np

from . import _core

__all__ = ["Appearance", "Camera", "render", "render_vjp"]

# Default colours, one per geom in turn (the world's plane first, usually): distinguishable greys and hues.
_PALETTE = np.array([[0.6, 0.6, 0.6], [0.85, 0.3, 0.2], [0.2, 0.5, 0.85], [0.3, 0.75, 0.35], [0.9, 0.75, 0.2],
                     [0.6, 0.35, 0.75], [0.2, 0.75, 0.75], [0.9, 0.5, 0.7]])


def _vector(x, n: int, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=np.float64)
    if a.shape != (n,):
        raise ValueError(f"{name}: expected shape ({n},), got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected finite numbers, got {a.tolist()}")
    return a


class Camera:
    """A pinhole camera: ``width`` x ``height`` pixels, vertical field of view ``fovy`` degrees; its
    frame at ``pos`` with orientation ``quat`` (x, y, z, w) in the frame of ``body`` (a body name;
    None: fixed in the world). It looks along its -z axis, x to the right of the image, y up."""

    def __init__(self, width: int = 64, height: int = 64, fovy: float = 45.0, pos=(0.0, 0.0, 0.0),
                 quat=(0.0, 0.0, 0.0, 1.0), body: str | None = None):
        whole = lambda n: isinstance(n, (int, np.integer)) or (isinstance(n, (float, np.floating)) and float(n).is_integer())  # noqa: E731
        if not all(whole(n) and n > 0 for n in (width, height)):
            raise ValueError(f"Camera: width and height must be positive integers, got width={width!r}, height={height!r}")
        if not isinstance(fovy, (int, float, np.integer, np.floating)) or not 0 < float(fovy) < 180:
            raise ValueError(f"Camera: fovy must be a number in (0, 180) degrees, got {fovy!r}")
        self.width, self.height, self.fovy = int(width), int(height), float(fovy)
        self.pos = _vector(pos, 3, "Camera.pos")
        self.quat = _vector(quat, 4, "Camera.quat")
        if not np.any(self.quat):
            raise ValueError("Camera.quat: expected a non-zero quaternion (x, y, z, w), got (0, 0, 0, 0)")
        self.body = body

    @classmethod
    def look_at(cls, eye, target, up=(0.0, 0.0, 1.0), width: int = 64, height: int = 64, fovy: float = 45.0,
                body: str | None = None) -> "Camera":
        """A camera at ``eye`` looking at ``target`` with ``up`` as close to the image's up as it can
        be (all in the frame of ``body``, or the world)."""
        eye, target, up = _vector(eye, 3, "eye"), _vector(target, 3, "target"), _vector(up, 3, "up")
        f = target - eye
        if np.linalg.norm(f) == 0:
            raise ValueError("Camera.look_at: eye and target are the same point")
        f = f / np.linalg.norm(f)
        right = np.cross(f, up)
        if np.linalg.norm(right) < 1e-9:
            raise ValueError("Camera.look_at: up is parallel to the viewing direction; give another up")
        right /= np.linalg.norm(right)
        R = np.stack([right, np.cross(right, f), -f], axis=1)
        return cls(width, height, fovy, eye, _matrix_to_quat(R), body)

    @classmethod
    def named(cls, model, name: str, width: int = 64, height: int = 64) -> "Camera":
        """The camera ``name`` declared with the model (``model.cameras``: MJCF ``<camera>``), its
        pose and field of view as declared, at ``width`` x ``height`` pixels. Warns (UserWarning) when
        its declaration holds what the renderer does not reproduce (a tracking mode, focal, ...)."""
        cameras = {c["name"]: c for c in model.cameras}
        if name not in cameras:
            listed = ", ".join(repr(n) for n in cameras) or "none (declare one with <camera> in the MJCF file)"
            raise ValueError(f"camera: the model has no camera named {name!r}; its cameras: {listed}")
        c = cameras[name]
        if c["unsupported"]:
            import warnings

            where = c["where"] or f"camera {name!r}: "
            warnings.warn(f"{where}not reproduced by gradyn's renderer: {c['unsupported']}", UserWarning, stacklevel=2)
        return cls(width, height, c["fovy"], c["pos"], c["quat"], c["body"])

    @classmethod
    def of(cls, camera, model=None) -> "Camera":
        """A Camera from a Camera, a dict of its arguments, or the name of one of model's cameras
        (64 x 64 pixels; Camera.named gives another size)."""
        if isinstance(camera, Camera):
            return camera
        if isinstance(camera, dict):
            return cls(**camera)
        if isinstance(camera, str) and model is not None:
            return cls.named(model, camera)
        raise TypeError(f"camera: expected a gradyn.Camera, a dict of its arguments or the name of one of the "
                        f"model's cameras, got {type(camera).__name__}")

    def _plain(self, model) -> dict:
        _check_model(model)
        body = -1
        if self.body is not None:
            names = list(model.body_names)
            if self.body not in names:
                raise ValueError(f"Camera.body: the model has no body '{self.body}' (bodies: {', '.join(names)})")
            body = names.index(self.body)
        return {"width": self.width, "height": self.height, "fovy": self.fovy, "body": body, "pos": self.pos,
                "quat": self.quat}

    def __repr__(self):
        return (f"Camera(width={self.width}, height={self.height}, fovy={self.fovy}, pos={self.pos.tolist()}, "
                f"quat={self.quat.tolist()}, body={self.body!r})")


def _matrix_to_quat(R: np.ndarray) -> np.ndarray:
    """(x, y, z, w) of a rotation matrix (Shepperd's method)."""
    t = np.trace(R)
    if t > 0:
        s = 2.0 * np.sqrt(1.0 + t)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * np.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        q = [0.0, 0.0, 0.0, (R[k, j] - R[j, k]) / s]
        q[i] = 0.25 * s
        q[j] = (R[j, i] + R[i, j]) / s
        q[k] = (R[k, i] + R[i, k]) / s
    return np.asarray(q)


def read_texture(path) -> np.ndarray:
    """An image file as an (h, w, 3) float64 RGB array in [0, 1] (Pillow). Raises gradyn.ModelError
    naming the file when it cannot be read."""
    try:
        from PIL import Image
        with Image.open(os.fspath(path)) as im:
            rgb = np.asarray(im.convert("RGB"), dtype=np.float64) / 255.0
    except Exception as e:  # missing, unreadable, not an image: say which file and why
        raise _core.ModelError(f"texture file '{os.fspath(path)}' cannot be read: {e}") from e
    return rgb


class Appearance:
    """How the geoms look: per geom a solid colour or a texture, and the light.

    * ``colors``: None (a palette by geom index), an (ngeom, 3) array, or a dict geom name ->
      (r, g, b) (the others from the palette).
    * ``textures``: dict geom name -> an (h, w, 3) array (floats; uint8 images are divided by 255)
      or the path of an image file (read with Pillow). A textured geom ignores its colour.
    * ``tiles``: metres per texture repeat on planes: a number for all, or a dict geom name ->
      number (default 1).
    * ``background``: the colour where no geom is hit.
    * ``lighting``: Lambert shading with a directional light travelling along ``light_dir``,
      shade = ambient + diffuse * max(0, n . l); False: the base colours.

    Colours are not clamped to [0, 1].
    """

    def __init__(self, colors=None, textures=None, tiles=None, background=(0.0, 0.0, 0.0), lighting: bool = True,
                 light_dir=(0.0, 0.0, -1.0), ambient: float = 0.4, diffuse: float = 0.6):
        self.colors = colors
        self.textures = {} if textures is None else dict(textures)
        self.tiles = tiles
        self.background = _vector(background, 3, "Appearance.background")
        self.lighting = bool(lighting)
        self.light_dir = _vector(light_dir, 3, "Appearance.light_dir")
        if not np.any(self.light_dir):
            raise ValueError("Appearance.light_dir: expected a non-zero direction, got (0, 0, 0)")
        for name, value in (("ambient", ambient), ("diffuse", diffuse)):
            if not isinstance(value, (int, float, np.integer, np.floating)) or not np.isfinite(value):
                raise ValueError(f"Appearance.{name}: expected a finite number, got {value!r}")
        self.ambient, self.diffuse = float(ambient), float(diffuse)
        self._loaded: dict = {}

    @classmethod
    def of(cls, appearance) -> "Appearance":
        if appearance is None:
            return cls()
        if isinstance(appearance, Appearance):
            return appearance
        if isinstance(appearance, dict):
            return cls(**appearance)
        raise TypeError(f"appearance: expected a gradyn.Appearance, a dict of its arguments or None, "
                        f"got {type(appearance).__name__}")

    def _texture(self, name: str, value) -> np.ndarray:
        if isinstance(value, (str, os.PathLike)):
            key = os.fspath(value)
            if key not in self._loaded:
                self._loaded[key] = read_texture(key)
            return self._loaded[key]
        a = np.asarray(value)
        if a.dtype == np.uint8:
            a = a / 255.0
        a = np.ascontiguousarray(a, dtype=np.float64)
        if a.ndim != 3 or a.shape[2] != 3 or a.shape[0] == 0 or a.shape[1] == 0:
            raise ValueError(f"Appearance.textures['{name}']: expected shape (h, w, 3) with h, w > 0, got {a.shape}")
        return a

    def texture_geoms(self, model) -> list:
        """The names of the textured geoms, in model order (the order of render_vjp's textures)."""
        return [n for n in model.geom_names if n in self.textures]

    def _plain(self, model) -> dict:
        _check_model(model)
        names = list(model.geom_names)
        ng = len(names)
        for key, what in ((self.textures, "textures"),
                          (self.colors if isinstance(self.colors, dict) else {}, "colors"),
                          (self.tiles if isinstance(self.tiles, dict) else {}, "tiles")):
            unknown = [k for k in key if k not in names]
            if unknown:
                raise ValueError(f"Appearance.{what}: the model has no geom {unknown[0]!r} (geoms: {', '.join(names)})")
        colors = _PALETTE[np.arange(ng) % len(_PALETTE)].copy()
        if isinstance(self.colors, dict):
            for k, c in self.colors.items():
                colors[names.index(k)] = _vector(c, 3, f"Appearance.colors['{k}']")
        elif self.colors is not None:
            c = np.asarray(self.colors, dtype=np.float64)
            if c.shape != (ng, 3):
                raise ValueError(f"Appearance.colors: expected shape ({ng}, 3) (one colour per geom), got {c.shape}")
            colors = c
        tiles = np.ones(ng)
        if isinstance(self.tiles, dict):
            for k, t in self.tiles.items():
                tiles[names.index(k)] = float(t)
        elif self.tiles is not None:
            tiles[:] = float(self.tiles)
        texture_ids = -np.ones(ng)
        textures, texture_names = [], []
        for g, n in enumerate(names):
            if n in self.textures:
                texture_ids[g] = len(textures)
                textures.append(self._texture(n, self.textures[n]))
                texture_names.append(n)
        return {"colors": colors, "texture_ids": texture_ids, "tiles": tiles, "textures": textures,
                "texture_names": texture_names, "background": self.background, "lighting": self.lighting,
                "light_dir": self.light_dir, "ambient": self.ambient, "diffuse": self.diffuse}


def _check_model(model):
    if not isinstance(model, _core.Model):
        raise TypeError(f"model: expected a gradyn.Model, got {type(model).__name__}")


def render(model, q, camera, appearance=None, threads: int | None = None, return_ids: bool = False):
    """The camera's image of configuration q: (height, width, 3) float64, row 0 at the top; q of shape
    (B, nq) gives (B, height, width, 3), the worlds on ``threads`` threads (None: all cores).

    camera: a :class:`Camera`, a dict of its arguments, or the name of one of ``model.cameras`` (MJCF
    ``<camera>``: 64 x 64 pixels, :meth:`Camera.named` for another size); appearance: an :class:`Appearance`, a dict
    of its arguments, or None (palette colours, lit from above). return_ids: also return the index
    (model.geom_names) of the geom each pixel sees, -1 for the background, shape (height, width)."""
    camera, appearance = Camera.of(camera, model), Appearance.of(appearance)
    return _core._render(model, q, camera._plain(model), appearance._plain(model), threads, return_ids)


def render_vjp(model, q, camera, image_bar, appearance=None, threads: int | None = None) -> dict:
    """Adjoint of :func:`render` for the image adjoint image_bar (the image's shape). Returns a dict:

    * ``q``: (nq,) or (B, nq), ambient (quaternion entries as numbers);
    * ``params``: (len(model.param_names),), the flat parameters (geom sizes and origins, joint
      origins and axes), summed over the worlds;
    * ``geom_size``: (ngeom, 3), d/d(geom size entries) (also inside params);
    * ``colors``: (ngeom, 3), d/d(solid colours) (zero for textured geoms);
    * ``textures``: dict geom name -> (h, w, 3) array, d/d(texels);
    * ``background``: (3,);
    * ``camera_pos``, ``camera_quat``: (3,), (4,) (the quaternion is read normalised: no component
      along it).

    Everything but q is summed over the worlds of a batch. The geom each pixel sees is held fixed:
    silhouette edges give no gradient."""
    camera, appearance = Camera.of(camera, model), Appearance.of(appearance)
    look = appearance._plain(model)
    bar = np.asarray(image_bar)
    if bar.dtype.kind == "f" and not np.isfinite(bar).all():  # (other dtypes: the conversion's message)
        raise ValueError("image_bar: expected finite numbers, got NaN or inf (a NaN adjoint would make every "
                         "gradient NaN)")
    out = _core._render_vjp(model, q, image_bar, camera._plain(model), look, threads)
    out["textures"] = dict(zip(look["texture_names"], out["textures"]))
    return out
