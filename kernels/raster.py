"""The rasterizer's contract: padded primitive tensors in, pixel-space prepared tensors out.

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

from typing import NamedTuple

import torch

ELLIPSE, POLYGON, POLYLINE, GLYPH, SPRITE = range(5)
GEOMETRIES = ("ellipse", "polygon", "polyline", "glyph", "sprite")


class Primitives(NamedTuple):
    """A padded batch of primitives (scene units). ``B`` scenes, ``N`` slots, ``V`` vertices.

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

    def to(self, device) -> "Primitives":
        return Primitives(*(t.to(device) for t in self))


class Prepared(NamedTuple):
    """Primitives in pixel space, in their slots, plus the draw order.

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


def world_vertices(verts: torch.Tensor, center: torch.Tensor, half: torch.Tensor, cs: torch.Tensor) -> torch.Tensor:
    """Local vertices ``[..., V, 2]`` to pixels: ``center + R(cs) @ (verts * half)``."""
    lx = verts[..., 0] * half[..., None, 0]
    ly = verts[..., 1] * half[..., None, 1]
    c, s = cs[..., None, 0], cs[..., None, 1]
    return torch.stack([center[..., None, 0] + (c * lx - s * ly), center[..., None, 1] + (s * lx + c * ly)], -1)


def prepare(p: Primitives, height: int, width: int) -> Prepared:
    """Draw order, pixel-space parameters and clipped bounding boxes of ``p`` for a
    ``height x width`` canvas. Runs on ``p``'s device; nothing proportional to the number of
    vertices is computed here."""
    dev = p.center.device
    # Invalid slots sort last; a stable sort keeps insertion order among equal orders.
    key = torch.where(p.valid, p.order.double(), torch.tensor(float("inf"), dtype=torch.float64, device=dev))
    perm = torch.argsort(key, dim=1, stable=True)
    s = float(width)
    center = p.center.float() * s
    half = p.scale.float() * s
    rot = p.rotation.float()
    cs = torch.stack([torch.cos(rot), torch.sin(rot)], -1)
    stroke = p.stroke.float() * s
    shell = p.shell.float() * s
    # The rotated local box bounds every geometry (exactly for ellipses).
    bx0, by0, bx1, by1 = (p.bounds[..., i].float() for i in range(4))
    lx = torch.stack([bx0, bx1, bx1, bx0], -1) * half[..., 0:1]
    ly = torch.stack([by0, by0, by1, by1], -1) * half[..., 1:2]
    c, sn = cs[..., 0:1], cs[..., 1:2]
    wx, wy = c * lx - sn * ly, sn * lx + c * ly
    a, b = half[..., 0], half[..., 1]
    cc, ss = cs[..., 0].abs(), cs[..., 1].abs()
    ell = torch.stack([torch.sqrt((a * cc) ** 2 + (b * ss) ** 2), torch.sqrt((a * ss) ** 2 + (b * cc) ** 2)], -1)
    is_ell = (p.geom == ELLIPSE)[..., None]
    lo = center + torch.where(is_ell, -ell, torch.stack([wx.amin(-1), wy.amin(-1)], -1))
    hi = center + torch.where(is_ell, ell, torch.stack([wx.amax(-1), wy.amax(-1)], -1))
    outline = (~p.fill) | (p.geom == POLYLINE)
    margin = 1.0 + shell / 2 + torch.where(outline, stroke / 2, torch.zeros_like(stroke))
    lo = lo - margin[..., None]
    hi = hi + margin[..., None]
    finite = torch.isfinite(lo).all(-1) & torch.isfinite(hi).all(-1)
    box = torch.stack([lo[..., 0].floor().clamp(0, width), lo[..., 1].floor().clamp(0, height),
                       hi[..., 0].ceil().clamp(0, width), hi[..., 1].ceil().clamp(0, height)], -1)
    valid = p.valid & finite
    bbox = torch.where(valid[..., None], box.nan_to_num(0.0), torch.zeros_like(box)).long()
    return Prepared(count=p.valid.sum(1), perm=perm, geom=p.geom, center=center, half=half, cs=cs,
                    color=p.color.float(), alpha=p.alpha.float(), fill=p.fill, stroke=stroke, shell=shell,
                    verts=p.verts.float(), nverts=p.nverts, index=p.index, bbox=bbox)
