"""Viewing gradyn models: offscreen images, live views and self-contained recordings.

* :func:`render_rgb` draws one configuration to an RGB array offscreen (matplotlib).
"""

from ._render import Camera, render_rgb

__all__ = ["Camera", "render_rgb"]
