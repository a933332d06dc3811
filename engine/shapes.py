"""Named shapes drawn to fit a disc: the vocabulary several families share (``circle``,
``triangle``, ``square``, ``pentagon``, ``hexagon``, ``star``, ``diamond``, ``cross``,
``plus``, ``heart``, ``spade``, ``club``)."""
from __future__ import annotations

from .scene import Scene

SHAPES = ("circle", "triangle", "square", "pentagon", "hexagon", "star", "diamond", "cross", "plus",
          "heart", "spade", "club")


def draw_shape(scene: Scene, shape: str, center, radius, color, **style) -> None:
    """Draw one of :data:`SHAPES` fitting a disc of ``radius`` at ``center`` into ``scene``."""
    if shape == "circle":
        scene.circle(center, radius, color=color, **style)
    elif shape == "triangle":
        scene.polygon(center, radius, 3, color=color, **style)
    elif shape == "square":
        scene.square(center, radius * 1.41, color=color, **style)
    elif shape == "pentagon":
        scene.polygon(center, radius, 5, color=color, **style)
    elif shape == "hexagon":
        scene.polygon(center, radius, 6, color=color, **style)
    elif shape in SHAPES:
        getattr(scene, shape)(center, radius * (0.72 if shape in ("heart", "spade", "club", "cross", "plus") else 1.0),
                              color=color, **style)
    else:
        raise ValueError(f"shape={shape!r}; allowed: {', '.join(SHAPES)}")
