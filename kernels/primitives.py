"""The rasterizer's contract: padded primitive tensors in, pixel-space prepared tensors out.

This module imports no tensor library: a scene can be described (and a task listed)
without loading torch; the rasterizers (``raster``, ``raster_torch``, ``raster_numba``)
consume these structures.

Every primitive is reduced to one of five geometries, each with a signed distance ``d``
(pixels, negative inside) evaluated at pixel centres:

* ``ELLIPSE``  — centre, radii ``scale``, rotation;
* ``POLYGON``  — closed outline ``verts`` (local units, times ``scale``, rotated, moved);
* ``POLYLINE`` — open chain of ``verts``; ``d`` is the distance to the chain;
* ``GLYPH``    — a cell of the glyph atlas spanning ``centre +- scale``;
* ``SPRITE``   — an RGBA image spanning ``centre +- scale`` (colour varies per pixel).

Then ``shell > 0`` turns the shape into a band ``|d| - shell/2`` (rings), an outline turns
it into ``|d| - stroke/2`` (a polyline always uses ``d - stroke/2``), and coverage is
``clamp(0.5 - d, 0, 1)``: analytic anti-aliasing over one pixel. Primitives are composited
with the *over* operator in ascending ``order`` (ties keep insertion order).

Scene units: x and y are fractions of the canvas *width* (y grows downwards), so a scene
renders identically at any resolution; lengths (radii, strokes) use the same unit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import torch

ELLIPSE, POLYGON, POLYLINE, GLYPH, SPRITE = range(5)
GEOMETRIES = ("ellipse", "polygon", "polyline", "glyph", "sprite")


class Primitives(NamedTuple):
    """A padded batch of primitives (scene units). ``B`` scenes, ``N`` slots, ``V`` vertices;
    torch tensors, or numpy arrays for the numba path alone (``raster_numba.render_arrays``).

    valid ``[B,N]`` bool · geom ``[B,N]`` long · center ``[B,N,2]`` · scale ``[B,N,2]`` ·
    rotation ``[B,N]`` radians (world = center + R(rotation) @ (local * scale), y down) ·
    color ``[B,N,3]`` in [0,1] · alpha ``[B,N]`` · fill ``[B,N]`` bool · stroke ``[B,N]`` ·
    shell ``[B,N]`` · order ``[B,N]`` · verts ``[B,N,V,2]`` (padding repeats the last vertex) ·
    nverts ``[B,N]`` long · index ``[B,N]`` long (glyph cell or sprite id) ·
    bounds ``[B,N,4]`` local ``x0, y0, x1, y1`` of the shape before scaling (``-1, -1, 1, 1`` for
    ellipses, glyphs and sprites; the vertices' box for polygons and polylines).
    """

    valid: torch.Tensor
    geom: torch.Tensor
    center: torch.Tensor
    scale: torch.Tensor
    rotation: torch.Tensor
    color: torch.Tensor
    alpha: torch.Tensor
    fill: torch.Tensor
    stroke: torch.Tensor
    shell: torch.Tensor
    order: torch.Tensor
    verts: torch.Tensor
    nverts: torch.Tensor
    index: torch.Tensor
    bounds: torch.Tensor

    def rows(self, a: int, b: int) -> Primitives:
        """Scenes ``a..b-1`` (views of every column)."""
        return Primitives(*(t[a:b] for t in self))

    def to(self, device) -> Primitives:
        """The same primitives on ``device`` (to a GPU: packed, pinned, one copy per dtype);
        anything else ``Tensor.to`` takes (a dtype) applies to every column."""
        import torch

        from .transfer import to_device
        if isinstance(device, (str, torch.device)):
            return Primitives(*to_device(list(self), device))
        return Primitives(*(t.to(device) for t in self))


class Prepared(NamedTuple):
    """Primitives in pixel space, in their slots, plus the draw order (tensors, or numpy
    arrays from ``raster_numba.prepare_arrays``).

    count ``[B]`` (primitives per scene) · perm ``[B,N]`` (``perm[b, k]`` is the slot drawn
    ``k``-th; valid slots first) · geom ``[B,N]`` · center ``[B,N,2]`` px · half ``[B,N,2]`` px ·
    cs ``[B,N,2]`` (cos, sin of rotation) · color ``[B,N,3]`` · alpha ``[B,N]`` · fill ``[B,N]`` ·
    stroke ``[B,N]`` px · shell ``[B,N]`` px · verts ``[B,N,V,2]`` *local* units (a kernel maps
    them with ``center + R @ (verts * half)``) · nverts ``[B,N]`` · index ``[B,N]`` ·
    bbox ``[B,N,4]`` long ``x0, y0, x1, y1`` (half-open, clipped to the canvas; empty when invalid).
    """

    count: torch.Tensor
    perm: torch.Tensor
    geom: torch.Tensor
    center: torch.Tensor
    half: torch.Tensor
    cs: torch.Tensor
    color: torch.Tensor
    alpha: torch.Tensor
    fill: torch.Tensor
    stroke: torch.Tensor
    shell: torch.Tensor
    verts: torch.Tensor
    nverts: torch.Tensor
    index: torch.Tensor
    bbox: torch.Tensor
