"""Viewing gradyn models: offscreen images, live views and self-contained recordings.

* :func:`render_rgb` draws one configuration to an (H, W, 3) uint8 array offscreen with
  matplotlib (Gymnasium's ``render_mode="rgb_array"``, figures); no display, browser or GPU.
* :func:`record` writes a trajectory to one HTML file that plays it in any browser, offline.
* :func:`show` serves a live view (MeshCat's server) and returns its URL in a :class:`LiveView`.

record and show need ``pip install meshcat`` (and numpy); render_rgb needs matplotlib. Every geom
kind is drawn: plane (a finite patch), sphere, capsule, box, cylinder and convex_hull (meshes).
"""

from ._meshcat import LiveView, record, show
from ._render import Camera, render_rgb

__all__ = ["Camera", "LiveView", "record", "render_rgb", "show"]
