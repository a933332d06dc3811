"""``prepare``: padded primitives (scene units) to pixel-space parameters, draw order and
clipped bounding boxes, with torch on any device. The structures are in
:mod:`kernels.primitives`."""
from __future__ import annotations

import torch

from .primitives import ELLIPSE, POLYLINE, Prepared, Primitives


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
    key = p.order.double().masked_fill(~p.valid, float("inf"))      # no host-to-device copy
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
