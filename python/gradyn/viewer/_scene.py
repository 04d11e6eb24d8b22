"""What the viewer draws, shared by the recordings (MeshCat) and the offscreen images
(matplotlib): argument checks, body poses along a trajectory, each geom as a triangle mesh in its
own frame, and the colours."""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _core

# One colour per body (cycled), the floor grey: bodies stay apart in a crowded robot.
PALETTE = np.array([
    [0.90, 0.55, 0.20], [0.25, 0.55, 0.85], [0.35, 0.70, 0.35], [0.80, 0.30, 0.35],
    [0.60, 0.45, 0.80], [0.85, 0.75, 0.25], [0.30, 0.70, 0.75], [0.75, 0.45, 0.60],
])
FLOOR = np.array([0.78, 0.78, 0.76])
FLOOR_DARK = np.array([0.62, 0.62, 0.60])
WORLD = np.array([0.55, 0.55, 0.58])  # world geoms other than planes


def check_model(model) -> None:
    if not isinstance(model, _core.Model):
        raise TypeError(f"model: expected a gradyn.Model (gradyn.load or ModelBuilder.build), got {type(model).__name__}")


def as_trajectory(model, qs, name: str = "qs") -> np.ndarray:
    """qs as a (T, nq) float64 array; a single configuration (nq,) becomes (1, nq)."""
    check_model(model)
    try:
        arr = np.asarray(qs, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise ValueError(f"{name}: expected an array of configurations of shape (T, {model.nq}) or ({model.nq},), "
                         f"got {type(qs).__name__} that is not numeric ({e})") from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != model.nq or arr.shape[0] == 0:
        raise ValueError(f"{name}: expected shape (T, {model.nq}) with T >= 1, or ({model.nq},) for one configuration "
                         f"(nq = {model.nq} for model '{model.name}'), got {np.shape(qs)}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.argwhere(~np.isfinite(arr))[0][0])
        raise ValueError(f"{name}: row {bad} holds NaN or inf; the viewer draws finite configurations only "
                         f"(a diverged rollout's status says where it went wrong)")
    return arr


def as_trajectories(model, qs, offsets=None, name: str = "qs"):
    """One or several trajectories as a list of (T_k, nq) arrays, and their (B, 3) offsets.

    qs: (nq,) or (T, nq) is one trajectory; (B, T, nq), or a list whose items are (T_k, nq)
    arrays of different lengths, is B of them."""
    check_model(model)
    if isinstance(qs, (list, tuple)) and qs and all(np.ndim(x) == 2 for x in qs):
        trajectories = [as_trajectory(model, x, f"{name}[{k}]") for k, x in enumerate(qs)]
    elif np.ndim(qs) == 3:
        arr = np.asarray(qs, dtype=np.float64)
        trajectories = [as_trajectory(model, x, f"{name}[{k}]") for k, x in enumerate(arr)]
        if not trajectories:
            raise ValueError(f"{name}: a batch of trajectories needs at least one, got shape {arr.shape}")
    else:
        trajectories = [as_trajectory(model, qs, name)]
    B = len(trajectories)
    if offsets is None:
        return trajectories, np.zeros((B, 3))
    off = np.asarray(offsets, dtype=np.float64)
    if off.shape != (B, 3) or not np.all(np.isfinite(off)):
        raise ValueError(f"offsets: expected finite ({B}, 3) shifts in metres, one row per trajectory, got shape {off.shape}")
    return trajectories, off


def point(value, name: str) -> np.ndarray:
    """A finite world point (x, y, z) as a float array, or a ValueError naming the argument."""
    p = np.asarray(value, dtype=np.float64)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise ValueError(f"{name}: expected a finite point (x, y, z), got {value!r}")
    return p


def as_configuration(model, q, name: str = "q") -> np.ndarray:
    """q as an (nq,) float64 array."""
    check_model(model)
    arr = np.asarray(q, dtype=np.float64)
    if arr.shape != (model.nq,):
        raise ValueError(f"{name}: expected shape ({model.nq},) (nq of model '{model.name}'), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: holds NaN or inf; the viewer draws finite configurations only")
    return arr


def body_poses(model, qs: np.ndarray) -> np.ndarray:
    """(T, nbodies, 4, 4) world poses of the bodies along a (T, nq) trajectory."""
    out = np.empty((qs.shape[0], len(model.body_names), 4, 4))
    for t, q in enumerate(qs):
        out[t] = _core.forward_kinematics(model, q)["body_poses"]
    return out


def body_colour(model, body: str) -> np.ndarray:
    if body == "world":
        return WORLD
    return PALETTE[model.body_names.index(body) % len(PALETTE)]


def _lathe(profile: np.ndarray, segments: int):
    """A closed surface of revolution about z: profile (k, 2) of (radius, z) from the bottom pole
    (radius 0) to the top pole (radius 0). Triangles counter-clockwise seen from outside."""
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    rings = profile[1:-1]
    ring_points = np.stack([rings[:, :1] * np.cos(phi), rings[:, :1] * np.sin(phi),
                            np.broadcast_to(rings[:, 1:], (len(rings), segments))], axis=2)
    vertices = np.vstack([[0.0, 0.0, profile[0, 1]], ring_points.reshape(-1, 3), [0.0, 0.0, profile[-1, 1]]])
    top = len(vertices) - 1
    j = np.arange(segments)
    k = (j + 1) % segments
    triangles = [np.stack([np.zeros_like(j), 1 + k, 1 + j], axis=1)]  # the bottom fan
    for r in range(len(rings) - 1):
        a, b = 1 + r * segments, 1 + (r + 1) * segments  # a ring and the one above it
        triangles += [np.stack([a + j, a + k, b + k], axis=1), np.stack([a + j, b + k, b + j], axis=1)]
    last = 1 + (len(rings) - 1) * segments
    triangles.append(np.stack([np.full_like(j, top), last + j, last + k], axis=1))  # the top fan
    return vertices, np.vstack(triangles)


_BOX_TRIANGLES = np.array([  # corners x + 2y + 4z of (+-1, +-1, +-1), bit set = +
    [0, 2, 3], [0, 3, 1], [4, 5, 7], [4, 7, 6], [0, 1, 5], [0, 5, 4],
    [2, 6, 7], [2, 7, 3], [0, 4, 6], [0, 6, 2], [1, 3, 7], [1, 7, 5]])


@functools.lru_cache(maxsize=512)
def _primitive_mesh(kind: str, size: tuple, detail: int):
    r, h = size[0], size[1]
    if kind == "box":
        corners = np.array([[x, y, z] for z in (-1, 1) for y in (-1, 1) for x in (-1, 1)], dtype=np.float64)
        return corners * np.array(size), _BOX_TRIANGLES
    if kind == "cylinder":
        profile = np.array([[0, -h], [r, -h], [r, h], [0, h]])
    else:  # sphere (h = 0) and capsule: latitude rings, the hemispheres 2 h apart
        lat = np.linspace(-np.pi / 2, np.pi / 2, detail + 1)
        half = detail // 2
        lower = np.stack([r * np.cos(lat[:half + 1]), r * np.sin(lat[:half + 1]) - h], axis=1)
        upper = np.stack([r * np.cos(lat[half:]), r * np.sin(lat[half:]) + h], axis=1)
        profile = np.vstack([lower, upper]) if kind == "capsule" else np.vstack([lower[:-1], upper])
        profile[0, 0] = profile[-1, 0] = 0.0  # exact poles
    vertices, triangles = _lathe(profile, 2 * detail)
    vertices.setflags(write=False)
    triangles.setflags(write=False)
    return vertices, triangles


def geom_mesh(geom: dict, detail: int = 12):
    """(vertices (n, 3), triangles (m, 3)) of a geom in its own frame, triangles counter-clockwise seen
    from outside; None for a plane (infinite: each renderer draws its own patch of it). detail:
    segments per half turn of round shapes."""
    kind = geom["type"]
    size = np.array(geom["size"], dtype=np.float64)  # a copy: the sphere's is edited below
    if kind == "plane":
        return None
    if kind == "convex_hull":
        # The engine's own hull (qhull at model build), scaled by the geom's size.
        return np.asarray(geom["vertices"]) * size, np.asarray(geom["triangles"])
    if kind == "sphere":
        size[1] = 0.0
    if kind in ("sphere", "capsule", "cylinder", "box"):
        # An even detail puts a latitude ring on the equator, where a capsule's cylinder starts.
        return _primitive_mesh(kind, tuple(float(s) for s in size), detail + detail % 2)
    raise ValueError(f"geom '{geom['name']}': the viewer cannot draw geoms of type '{kind}' "
                     f"(it draws plane, sphere, capsule, box, cylinder and convex_hull)")


def geom_world_poses(model, geoms: list, poses: np.ndarray) -> np.ndarray:
    """(ngeoms, 4, 4) world poses of the geoms given the bodies' (nbodies, 4, 4) world poses."""
    index = {name: k for k, name in enumerate(model.body_names)}
    out = np.empty((len(geoms), 4, 4))
    for k, g in enumerate(geoms):
        placement = np.asarray(g["placement"])
        out[k] = placement if g["body"] == "world" else poses[index[g["body"]]] @ placement
    return out


def floor_tiles(pose: np.ndarray, centre: np.ndarray, half_extent: float, step: float | None = None):
    """Checker tiles of the plane z = 0 of pose (4x4) around the foot of centre on it, reaching
    half_extent: (tiles (n, 4, 3) world corners, counter-clockwise from +z; dark (n,) bools).
    Tiles keep to the plane's own grid (step: a 1-2-5 number near half_extent / 4 unless given),
    so that a moving camera sees the floor stand still."""
    R, p = pose[:3, :3], pose[:3, 3]
    local = R.T @ (np.asarray(centre, dtype=np.float64) - p)
    if step is None:
        step = 10.0 ** math.floor(math.log10(half_extent / 4))
        step *= 5 if half_extent / step > 20 else 2 if half_extent / step > 8 else 1
    n = int(math.ceil(half_extent / step))
    i0, j0 = math.floor(local[0] / step) - n, math.floor(local[1] / step) - n
    ii, jj = np.meshgrid(np.arange(i0, i0 + 2 * n + 1), np.arange(j0, j0 + 2 * n + 1), indexing="ij")
    ii, jj = ii.ravel(), jj.ravel()
    corners = np.array([[0, 0], [1, 0], [1, 1], [0, 1]])
    xy = (np.stack([ii, jj], axis=1)[:, None, :] + corners[None]) * step
    tiles = np.concatenate([xy, np.zeros(xy.shape[:2] + (1,))], axis=2) @ R.T + p
    return tiles, (ii + jj) % 2 == 0


def model_radius(model, q: np.ndarray, centre: np.ndarray) -> float:
    """Radius about centre of a ball holding every bounded geom at q (planes left out): the default
    camera's distance scales with it."""
    geoms = [g for g in model.geoms if g["type"] != "plane"]
    if not geoms:
        poses = _core.forward_kinematics(model, q)["body_poses"]
        return float(np.max(np.linalg.norm(poses[:, :3, 3] - centre, axis=1), initial=0.0)) + 0.5
    world = geom_world_poses(model, geoms, _core.forward_kinematics(model, q)["body_poses"])
    radius = 0.0
    for g, pose in zip(geoms, world):
        v, _ = geom_mesh(g, detail=4)
        radius = max(radius, float(np.max(np.linalg.norm(v @ pose[:3, :3].T + pose[:3, 3] - centre, axis=1))))
    return radius
