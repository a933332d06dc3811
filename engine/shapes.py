"""Named shapes drawn to fit a disc: the vocabulary several families share (``circle``,
``triangle``, ``square``, ``pentagon``, ``hexagon``, ``star``, ``diamond``, ``cross``,
``plus``, ``heart``, ``spade``, ``club``)."""
from __future__ import annotations

import functools
import math

import numpy as np

from .scene import SCENE_LIMIT, Primitive, Scene, parse_color

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


@functools.lru_cache(maxsize=1)
def _shape_table() -> dict:
    """Per shape of :data:`SHAPES`: ``(kind, geom, scale, verts)``: the primitive
    :func:`draw_shape` pushes at radius 1 (its scale then grows with the radius) and its
    cached vertex template."""
    table = {}
    for name in SHAPES:
        s = Scene()
        draw_shape(s, name, (0.0, 0.0), 1.0, (0, 0, 0))
        p = s.primitives[0]
        table[name] = (p.kind, p.geom, p.scale[0], p.verts)
    return table


def draw_shapes(scene: Scene, shapes, centers, radii, colors, rotations=None) -> None:
    """Draw ``len(shapes)`` named shapes at once, in order: the same primitives as calling
    :func:`draw_shape` for each (``centers [n,2]``, ``radii [n]``, ``colors``: ``(r, g, b)``
    int triples, ``rotations [n]`` degrees or ``None``), checked in one pass. A bad value
    gets :func:`draw_shape`'s own error."""
    table = _shape_table()
    n = len(shapes)
    c = np.asarray(centers, dtype=np.float64).reshape(n, 2)
    r = np.asarray(radii, dtype=np.float64).reshape(n)
    rot = np.zeros(n) if rotations is None else np.asarray(rotations, dtype=np.float64).reshape(n)
    rows = [table.get(s) for s in shapes]
    if None in rows or not (np.isfinite(c).all() and np.isfinite(rot).all() and np.isfinite(r).all()) \
            or (np.abs(c) > SCENE_LIMIT).any() or (np.abs(rot) > SCENE_LIMIT).any() or (r < 0).any() \
            or (r * 1.41 > SCENE_LIMIT).any():
        for i in range(n):                 # the one-at-a-time path names the bad value
            draw_shape(scene, shapes[i], c[i], r[i], colors[i], rotation=rot[i])
        return
    colour: dict = {}                       # parsed once per colour given as an int triple (1 and 1.0 differ)
    parsed = []
    for col in colors:
        if type(col) is tuple and len(col) == 3 and all(type(v) is int for v in col):
            if col not in colour:
                colour[col] = parse_color(col)
            parsed.append(colour[col])
        else:
            parsed.append(parse_color(col))
    push = scene.primitives.append
    for (kind, geom, unit, verts), (x, y), ri, ti, rgb in zip(rows, c.tolist(), r.tolist(), rot.tolist(), parsed):
        s = ri * unit                   # = draw_shape's (radius * 1.41) / 2 etc.: halving is exact
        push(Primitive(kind, geom, (x, y), (s, s), -math.radians(ti), rgb, 1.0, True, 0.01, 0.0, 0.0, verts, 0))
