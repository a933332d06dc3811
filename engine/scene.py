"""Symbolic scenes: what a task samples, before any pixel exists.

A :class:`Scene` is a list of primitives built with one method per kind
(``scene.circle(...)``, ``scene.text(...)``, ...). Coordinates are in *scene units*: x and y
are fractions of the canvas width, y grows downwards, so ``(0.5, 0.5)`` is the centre of a
square canvas and a scene renders the same at any resolution. Angles are degrees,
counter-clockwise as seen on screen. Colours are ``"#rrggbb"``, RGB triples of integers 0..255, or RGB triples of floats
0..1 (see :func:`parse_color`: the type decides the range, never the values).

Every primitive takes ``color``, ``alpha`` (0..1), ``fill`` (False draws the outline),
``stroke`` (outline or line width, scene units), ``rotation`` and ``order`` (draw order;
ties keep insertion order).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Sequence

import numpy as np

from kernels import templates
from kernels.glyphs import load_atlas
from kernels.primitives import ELLIPSE, GLYPH, POLYGON, POLYLINE, SPRITE

# Every primitive kind a scene can hold; ``Scene.add(kind, ...)`` dispatches on these names.
KINDS = ("circle", "ellipse", "triangle", "rectangle", "square", "polygon", "star", "diamond",
         "cross", "plus", "heart", "spade", "club", "sector", "pacman", "ring", "line",
         "polyline", "spline", "arrow", "text", "sprite")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}

Color = "tuple[int, int, int] | str"


COLOR_RULE = ("'#rrggbb', or an (r, g, b) triple of integers 0..255 or of floats 0..1 (numpy and torch: "
              "integer dtypes 0..255, floating dtypes 0..1)")


def _component_kind(c) -> str:
    """``"int"`` for a Python/numpy/torch integer, ``"float"`` for a floating value, ``"?"`` otherwise."""
    if isinstance(c, bool):
        return "?"
    if isinstance(c, int):
        return "int"
    if isinstance(c, float):
        return "float"
    kind = getattr(getattr(c, "dtype", None), "kind", None)        # numpy scalars
    if kind in ("i", "u"):
        return "int"
    if kind == "f":
        return "float"
    dtype = getattr(c, "dtype", None)                              # torch scalars
    if dtype is not None and hasattr(dtype, "is_floating_point"):
        return "float" if dtype.is_floating_point else ("?" if str(dtype) == "torch.bool" else "int")
    return "?"


def parse_color(color: Any) -> tuple[float, float, float]:
    """A colour -> ``(r, g, b)`` floats in [0, 1].

    Accepted, one range per type and never guessed from the values: ``"#rrggbb"``; an
    ``(r, g, b)`` triple of integers 0..255 (Python ``int``, numpy or torch integer dtypes);
    an ``(r, g, b)`` triple of floats 0..1 (Python ``float``, numpy or torch floating dtypes).
    A triple with any float component is a float colour (``[1.0, 0, 0]`` in JSON is red);
    ``(1, 0, 0)`` is almost black. An out-of-range or non-finite component, or anything else,
    is a ``ValueError`` naming the value and the allowed ranges.
    """
    if type(color) is tuple and len(color) == 3:        # the common case, checked without the general path
        r, g, b = color
        if type(r) is int and type(g) is int and type(b) is int and 0 <= r <= 255 and 0 <= g <= 255 \
                and 0 <= b <= 255:
            return r / 255.0, g / 255.0, b / 255.0
    if isinstance(color, str):
        s = color.lstrip("#")
        if len(s) != 6 or any(ch not in "0123456789abcdefABCDEF" for ch in s):
            raise ValueError(f"colour {color!r} is not {COLOR_RULE}")
        return tuple(int(s[i:i + 2], 16) / 255.0 for i in (0, 2, 4))
    try:
        items = list(color)
    except TypeError:
        raise ValueError(f"colour {color!r} is not {COLOR_RULE}") from None
    kinds = {_component_kind(c) for c in items}
    if len(items) != 3 or "?" in kinds:
        raise ValueError(f"colour {color!r} is not {COLOR_RULE}")
    top = 255.0 if kinds == {"int"} else 1.0          # any float component: a float colour
    rgb = [float(c) for c in items]
    if not all(math.isfinite(c) and 0 <= c <= top for c in rgb):
        rule = "integers must lie in 0..255" if top == 255 else "floats must lie in 0..1 (integers mean 0..255)"
        raise ValueError(f"colour {color!r} is out of range: {rule}")
    return tuple(c / top for c in rgb)


SCENE_LIMIT = 1e6          # |coordinate|, size, width, angle and order bound (scene units or degrees)
MAX_POINTS = 10_000        # vertices of one polyline, spline (after sampling), polygon or star
MAX_TEXT = 10_000          # characters of one text primitive


_PLAIN_NUMBERS = (float, np.float64, int)      # types _finite checks without converting first


def _finite(name: str, value: float, low: float | None = None) -> float:
    """``value`` as a float, or a ``ValueError`` naming it unless it is finite, at least
    ``low`` (when given) and at most ``SCENE_LIMIT`` in magnitude (a radius of 1e19 would
    overflow the rasterizer's float32 coordinates and vanish)."""
    if type(value) in _PLAIN_NUMBERS and -SCENE_LIMIT <= value <= SCENE_LIMIT and (low is None or value >= low):
        return float(value)                             # (NaN fails the comparisons and takes the checks below)
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v) or (low is not None and v < low) or abs(v) > SCENE_LIMIT:
        bound = f"finite and within -{SCENE_LIMIT:g}..{SCENE_LIMIT:g}" if low is None else \
            f"finite and within {low:g}..{SCENE_LIMIT:g}"
        raise ValueError(f"{name}={value!r} must be {bound}")
    return v


def _count(name: str, value, low: int, high: int) -> int:
    """``value`` as an int, or a ``ValueError`` naming it unless it is a whole number in ``low..high``."""
    try:
        ok = int(value) == value and low <= int(value) <= high
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"{name}={value!r} must be an integer in {low}..{high}")
    return int(value)


def _point(name: str, p: Sequence[float]) -> tuple[float, float]:
    if len(p) != 2:
        raise ValueError(f"{name}={p!r} must be an (x, y) pair")
    return _finite(f"{name}.x", p[0]), _finite(f"{name}.y", p[1])


class Primitive(NamedTuple):
    """One primitive, ready for collation (see ``kernels.primitives.Primitives`` for fields).
    A tuple, so that a batch of them transposes into columns in one ``zip``."""

    kind: str
    geom: int
    center: tuple[float, float]
    scale: tuple[float, float]
    rotation: float                      # radians in the y-down frame
    color: tuple[float, float, float]
    alpha: float
    fill: bool
    stroke: float
    shell: float
    order: float
    verts: np.ndarray | None = None      # (V, 2) local units
    index: int = 0                       # glyph cell, or position in ``Scene.sprites``


@dataclass
class Scene:
    """A symbolic scene: primitives in draw order, a background colour and sprite images."""

    background: tuple[int, int, int] | str = (255, 255, 255)
    primitives: list[Primitive] = field(default_factory=list)
    sprites: list = field(default_factory=list)     # images ``[C,h,w]`` (torch or numpy)

    # ---------------------------------------------------------------- generic entry point
    def add(self, kind: str, **params) -> "Scene":
        """Add a primitive by kind name (the methods below, e.g. ``add("star", center=...)``)."""
        if kind not in KIND_CODE:
            raise ValueError(f"unknown primitive kind {kind!r}; allowed: {', '.join(KINDS)}")
        try:
            return getattr(self, kind)(**params)
        except TypeError as e:
            raise ValueError(f"bad parameters for primitive {kind!r}: {e}") from None

    def _push(self, kind, geom, center, scale, *, color=(0, 0, 0), alpha=1.0, fill=True, stroke=0.01,
              rotation=0.0, order=0.0, shell=0.0, verts=None, index=0):
        c = _point("center", center)
        sx, sy = _finite("size", scale[0], 0.0), _finite("size", scale[1], 0.0)
        a = _finite("alpha", alpha, 0.0)
        if a > 1.0:
            raise ValueError(f"alpha={alpha!r} must be within [0, 1]")
        self.primitives.append(Primitive(
            kind=kind, geom=geom, center=c, scale=(sx, sy),
            rotation=-math.radians(_finite("rotation", rotation)), color=parse_color(color), alpha=a,
            fill=bool(fill), stroke=_finite("stroke", stroke, 0.0), shell=_finite("shell", shell, 0.0),
            order=_finite("order", order), verts=verts, index=int(index)))
        return self

    def _template(self, kind, template, center, radius, aspect=1.0, **style):
        r = _finite("radius", radius, 0.0)
        return self._push(kind, POLYGON, center, (r * aspect, r), verts=template, **style)

    # ---------------------------------------------------------------- closed shapes
    def circle(self, center, radius, **style) -> "Scene":
        """Disc (or circle outline with ``fill=False``) of ``radius``."""
        r = _finite("radius", radius, 0.0)
        return self._push("circle", ELLIPSE, center, (r, r), **style)

    def ellipse(self, center, radii, **style) -> "Scene":
        """Ellipse with semi-axes ``radii = (rx, ry)`` before rotation."""
        return self._push("ellipse", ELLIPSE, center, tuple(radii), **style)

    def triangle(self, p0, p1, p2, **style) -> "Scene":
        """Triangle through three arbitrary points (``rotation`` turns it about its centroid)."""
        pts = np.array([_point("p0", p0), _point("p1", p1), _point("p2", p2)])
        c = pts.mean(0)
        return self._push("triangle", POLYGON, tuple(c), (1.0, 1.0), verts=pts - c, **style)

    def rectangle(self, center, size, **style) -> "Scene":
        """Rectangle of ``size = (width, height)``."""
        w, h = _finite("width", size[0], 0.0), _finite("height", size[1], 0.0)
        return self._push("rectangle", POLYGON, center, (w / 2, h / 2), verts=templates.rectangle(), **style)

    def square(self, center, side, **style) -> "Scene":
        """Square with edge length ``side``."""
        s = _finite("side", side, 0.0)
        return self._push("square", POLYGON, center, (s / 2, s / 2), verts=templates.rectangle(), **style)

    def polygon(self, center, radius, sides, **style) -> "Scene":
        """Regular polygon with ``sides`` (>= 3), circumradius ``radius``, a vertex pointing up."""
        n = _count("sides", sides, 3, MAX_POINTS)
        return self._template("polygon", templates.regular_polygon(n), center, radius, **style)

    def star(self, center, radius, points=5, inner=0.45, **style) -> "Scene":
        """Star with ``points`` tips, tip radius ``radius`` and valleys at ``inner * radius``."""
        n = _count("points", points, 2, MAX_POINTS // 2)
        return self._template("star", templates.star(n, _finite("inner", inner, 0.0)), center, radius, **style)

    def diamond(self, center, radius, **style) -> "Scene":
        """Rhombus ``2 * radius`` tall and ``1.4 * radius`` wide."""
        return self._template("diamond", templates.diamond(), center, radius, **style)

    def cross(self, center, radius, **style) -> "Scene":
        """Diagonal cross (x) fitting a box of half-side ``radius``."""
        return self._template("cross", templates.cross(), center, radius, **style)

    def plus(self, center, radius, **style) -> "Scene":
        """Plus sign (+) fitting a box of half-side ``radius``."""
        return self._template("plus", templates.plus(), center, radius, **style)

    def heart(self, center, radius, **style) -> "Scene":
        """Heart, point down, fitting a box of half-side ``radius``."""
        return self._template("heart", templates.heart(), center, radius, **style)

    def spade(self, center, radius, **style) -> "Scene":
        """Spade (inverted heart with a stem) fitting a box of half-side ``radius``."""
        return self._template("spade", templates.spade(), center, radius, **style)

    def club(self, center, radius, **style) -> "Scene":
        """Club (three lobes and a stem) fitting a box of half-side ``radius``."""
        return self._template("club", templates.club(), center, radius, **style)

    def sector(self, center, radius, start, end, **style) -> "Scene":
        """Disc sector from angle ``start`` to ``end`` (degrees, counter-clockwise, 0 = right)."""
        v = templates.sector(_finite("start", start), _finite("end", end))
        return self._template("sector", v, center, radius, **style)

    def pacman(self, center, radius, mouth=90.0, direction=0.0, **style) -> "Scene":
        """Pac-man: a disc with a ``mouth``-degree wedge removed, opening towards ``direction``."""
        m = _finite("mouth", mouth, 0.0)
        if m >= 360:
            raise ValueError(f"mouth={mouth!r} must be below 360 degrees")
        d = _finite("direction", direction)
        v = templates.sector(d + m / 2, d + 360 - m / 2)
        return self._template("pacman", v, center, radius, **style)

    def ring(self, center, outer, inner, **style) -> "Scene":
        """Annulus between radii ``inner`` and ``outer`` (``fill=False`` outlines both edges)."""
        ro, ri = _finite("outer", outer, 0.0), _finite("inner", inner, 0.0)
        if ri >= ro:
            raise ValueError(f"ring inner={inner!r} must be smaller than outer={outer!r}")
        r = (ro + ri) / 2
        return self._push("ring", ELLIPSE, center, (r, r), shell=ro - ri, **style)

    def arrow(self, start, end, width=0.01, head=None, **style) -> "Scene":
        """Solid arrow from ``start`` to ``end`` with shaft ``width``; ``head = (length, width)``
        defaults to ``(4 * width, 3.5 * width)``."""
        (x0, y0), (x1, y1) = _point("start", start), _point("end", end)
        w = _finite("width", width, 0.0)
        hl, hw = head if head is not None else (4 * w, 3.5 * w)
        length = math.hypot(x1 - x0, y1 - y0)
        v = templates.arrow(length, w, _finite("head length", hl, 0.0), _finite("head width", hw, 0.0))
        ang = math.degrees(math.atan2(-(y1 - y0), x1 - x0)) + style.pop("rotation", 0.0)
        return self._push("arrow", POLYGON, ((x0 + x1) / 2, (y0 + y1) / 2), (1.0, 1.0), verts=v,
                          rotation=ang, **style)

    # ---------------------------------------------------------------- strokes
    def line(self, start, end, width=0.01, **style) -> "Scene":
        """Straight segment with round caps, ``width`` thick."""
        return self.polyline([start, end], width=width, _kind="line", **style)

    def polyline(self, points, width=0.01, _kind="polyline", **style) -> "Scene":
        """Open chain through ``points`` (K >= 2), ``width`` thick, round joins and caps."""
        if hasattr(points, "__len__") and len(points) > MAX_POINTS:
            raise ValueError(f"a {_kind} has {len(points)} points; allowed: 2..{MAX_POINTS}")
        pts = np.array([_point(f"points[{i}]", p) for i, p in enumerate(points)], dtype=np.float64).reshape(-1, 2)
        if len(pts) < 2:
            raise ValueError(f"a {_kind} needs at least 2 points, got {len(pts)}")
        c = (pts.min(0) + pts.max(0)) / 2
        style.pop("fill", None)
        return self._push(_kind, POLYLINE, tuple(c), (1.0, 1.0), verts=pts - c,
                          stroke=_finite("width", width, 0.0), **style)

    def spline(self, points, width=0.01, samples_per_segment=12, **style) -> "Scene":
        """Smooth (centripetal Catmull-Rom) curve through the control ``points``."""
        per = _count("samples_per_segment", samples_per_segment, 1, 1000)
        points = list(points)
        if (len(points) - 1) * per + 1 > MAX_POINTS:
            raise ValueError(f"a spline of {len(points)} points at {per} samples per segment has more than "
                             f"{MAX_POINTS} vertices; use fewer points or samples_per_segment")
        pts = np.array([_point(f"points[{i}]", p) for i, p in enumerate(points)], dtype=np.float64).reshape(-1, 2)
        curve = templates.catmull_rom(pts, per)
        return self.polyline(curve, width=width, _kind="spline", **style)

    # ---------------------------------------------------------------- text and images
    def text(self, text: str, position, height=0.05, anchor="center", **style) -> "Scene":
        """One line of ``text`` whose line height is ``height``; ``anchor`` (``left``,
        ``center`` or ``right``) says which point of the line ``position`` is (vertically
        always the middle). ``rotation`` turns the whole line about ``position``."""
        if anchor not in ("left", "center", "right"):
            raise ValueError(f"anchor={anchor!r}; allowed: left, center, right")
        if len(str(text)) > MAX_TEXT:
            raise ValueError(f"text of {len(str(text))} characters; allowed: up to {MAX_TEXT}")
        atlas = load_atlas()
        cells = atlas.index(str(text))
        h = _finite("height", height, 0.0)
        x, y = _point("position", position)
        adv = [float(atlas.advance[i]) * h for i in cells]
        total = sum(adv)
        start = {"left": 0.0, "center": -total / 2, "right": -total}[anchor]
        rot = _finite("rotation", style.pop("rotation", 0.0))
        c, s = math.cos(math.radians(rot)), math.sin(math.radians(rot))
        style.setdefault("stroke", 0.0)
        cursor = start
        for cell, a in zip(cells, adv):
            off = cursor + a / 2
            cursor += a
            if atlas.charset[cell] == " ":
                continue
            gx, gy = x + c * off, y - s * off
            self._push("text", GLYPH, (gx, gy), (h / 2, h / 2), rotation=rot, index=cell, **style)
        return self

    def text_width(self, text: str, height=0.05) -> float:
        """Width in scene units of ``text`` drawn with line height ``height``."""
        atlas = load_atlas()
        return float(sum(atlas.advance[i] for i in atlas.index(str(text)))) * height

    def sprite(self, image, center, size, rotation=0.0, alpha=1.0, order=0.0) -> "Scene":
        """Place an RGBA (or RGB) image ``[C,h,w]`` (a torch tensor or numpy array; uint8, or
        float in [0,1]) centred at ``center`` spanning ``size = (width, height)``. The image is
        kept as given; collation converts it."""
        shape = tuple(getattr(image, "shape", ()))
        if len(shape) != 3 or shape[0] not in (3, 4) or shape[1] < 1 or shape[2] < 1:
            raise ValueError(f"sprite image must be [3 or 4, h, w], got shape {shape}")
        slot = next((i for i, s in enumerate(self.sprites) if s is image), None)
        if slot is None:
            self.sprites.append(image)
            slot = len(self.sprites) - 1
        w, h = _finite("width", size[0], 0.0), _finite("height", size[1], 0.0)
        return self._push("sprite", SPRITE, center, (w / 2, h / 2), rotation=rotation, alpha=alpha,
                          order=order, index=slot)

    def __len__(self) -> int:
        return len(self.primitives)

    def kinds(self) -> list[str]:
        """Kind name of every primitive, in insertion order."""
        return [p.kind for p in self.primitives]
