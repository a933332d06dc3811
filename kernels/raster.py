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
    nverts ``[B,N]`` long · index ``[B,N]`` long (glyph cell or sprite id).
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

    def to(self, device) -> "Primitives":
        return Primitives(*(t.to(device) for t in self))


class Prepared(NamedTuple):
    """Primitives in pixel space, sorted by draw order with the valid ones first.

    count ``[B]`` (primitives per scene; slots ``>= count`` are unused) · geom ``[B,N]`` ·
    center ``[B,N,2]`` px · half ``[B,N,2]`` px · cs ``[B,N,2]`` (cos, sin of rotation) ·
    color ``[B,N,3]`` · alpha ``[B,N]`` · fill ``[B,N]`` · stroke ``[B,N]`` px · shell ``[B,N]`` px ·
    verts ``[B,N,V,2]`` px in canvas coordinates · nverts ``[B,N]`` · index ``[B,N]`` ·
    bbox ``[B,N,4]`` long ``x0, y0, x1, y1`` (half-open, clipped to the canvas).
    """

    count: torch.Tensor
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


def prepare(p: Primitives, height: int, width: int) -> Prepared:
    """Sort ``p`` by draw order, convert it to pixels for a ``height x width`` canvas and
    compute each primitive's clipped bounding box. Runs on ``p``'s device."""
    B, N = p.valid.shape
    dev = p.center.device
    # Invalid slots sort last; a stable sort keeps insertion order among equal orders.
    order = torch.where(p.valid, p.order.double(), torch.tensor(float("inf"), dtype=torch.float64, device=dev))
    perm = torch.argsort(order, dim=1, stable=True)

    def g(t):
        idx = perm.view(B, N, *([1] * (t.dim() - 2))).expand(B, N, *t.shape[2:])
        return torch.gather(t, 1, idx)

    s = float(width)
    geom, fill, index, nverts = g(p.geom), g(p.fill), g(p.index), g(p.nverts)
    center = g(p.center).float() * s
    half = g(p.scale).float() * s
    rot = g(p.rotation).float()
    cs = torch.stack([torch.cos(rot), torch.sin(rot)], -1)
    stroke = g(p.stroke).float() * s
    shell = g(p.shell).float() * s
    local = g(p.verts).float() * half[:, :, None, :]
    c, sn = cs[..., 0:1], cs[..., 1:2]
    verts = torch.stack([c * local[..., 0] - sn * local[..., 1],
                         sn * local[..., 0] + c * local[..., 1]], -1) + center[:, :, None, :]

    is_poly = (geom == POLYGON) | (geom == POLYLINE)
    a, b = half[..., 0], half[..., 1]
    cc, ss = cs[..., 0].abs(), cs[..., 1].abs()
    ell = torch.stack([torch.sqrt((a * cc) ** 2 + (b * ss) ** 2), torch.sqrt((a * ss) ** 2 + (b * cc) ** 2)], -1)
    box = torch.stack([a * cc + b * ss, a * ss + b * cc], -1)
    ext = torch.where((geom == ELLIPSE)[..., None], ell, box)
    lo = torch.where(is_poly[..., None], verts.amin(2) if verts.shape[2] else center, center - ext)
    hi = torch.where(is_poly[..., None], verts.amax(2) if verts.shape[2] else center, center + ext)
    outline = (~fill) | (geom == POLYLINE)
    margin = 1.0 + shell / 2 + torch.where(outline, stroke / 2, torch.zeros_like(stroke))
    lo = lo - margin[..., None]
    hi = hi + margin[..., None]
    x0 = lo[..., 0].floor().clamp(0, width)
    y0 = lo[..., 1].floor().clamp(0, height)
    x1 = hi[..., 0].ceil().clamp(0, width)
    y1 = hi[..., 1].ceil().clamp(0, height)
    finite = torch.isfinite(lo).all(-1) & torch.isfinite(hi).all(-1)
    bbox = torch.stack([x0, y0, x1, y1], -1).nan_to_num(0.0).long()
    valid = g(p.valid) & finite
    bbox = torch.where(valid[..., None], bbox, torch.zeros_like(bbox))
    return Prepared(count=p.valid.sum(1), geom=geom, center=center, half=half, cs=cs,
                    color=g(p.color).float(), alpha=g(p.alpha).float(), fill=fill, stroke=stroke,
                    shell=shell, verts=verts, nverts=nverts, index=index, bbox=bbox)
