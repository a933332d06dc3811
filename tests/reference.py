"""A slow, obviously correct rasterizer that the fast ones are tested against.

Float64 numpy, one full-canvas pass per primitive in draw order, no tiles, no bounding
boxes, no shared code with ``kernels`` beyond the definition of coverage: signed distance
at the pixel centre, ``coverage = clamp(0.5 - d, 0, 1)``, composited with *over*.
"""
from __future__ import annotations

import math

import numpy as np

from engine.scene import Scene, parse_color
from kernels.glyphs import load_atlas


def _segment_distance(px, py, a, b):
    ab = b - a
    L2 = float(ab @ ab)
    if L2 == 0.0:
        return np.hypot(px - a[0], py - a[1])
    t = np.clip(((px - a[0]) * ab[0] + (py - a[1]) * ab[1]) / L2, 0.0, 1.0)
    return np.hypot(px - (a[0] + t * ab[0]), py - (a[1] + t * ab[1]))


def _inside_polygon(px, py, v):
    # Even-odd rule by horizontal ray casting.
    inside = np.zeros(px.shape, bool)
    for i in range(len(v)):
        a, b = v[i], v[(i + 1) % len(v)]
        if a[1] == b[1]:
            continue
        straddle = (a[1] > py) != (b[1] > py)
        x_cross = a[0] + (py - a[1]) * (b[0] - a[0]) / (b[1] - a[1])
        inside ^= straddle & (px < x_cross)
    return inside


def _bilinear(img, x, y, zero_outside):
    h, w = img.shape[-2:]
    x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
    fx, fy = x - x0, y - y0
    out = 0.0
    for dy, wy in ((0, 1 - fy), (1, fy)):
        for dx, wx in ((0, 1 - fx), (1, fx)):
            xx, yy = x0 + dx, y0 + dy
            ok = (xx >= 0) & (xx < w) & (yy >= 0) & (yy < h)
            v = img[..., np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
            if zero_outside:
                v = v * ok
            out = out + v * (wx * wy)
    return out


def signed_distance(p, px, py, W, atlas):
    """Signed distance in pixels (negative inside) of primitive ``p`` at pixel centres."""
    c = np.array(p.center) * W
    s = np.array(p.scale) * W
    cos, sin = math.cos(p.rotation), math.sin(p.rotation)
    dx, dy = px - c[0], py - c[1]
    qx, qy = cos * dx + sin * dy, -sin * dx + cos * dy            # into the primitive's frame
    if p.geom == 0:                                               # ellipse
        a, b = max(s[0], 1e-6), max(s[1], 1e-6)
        k0 = np.sqrt((qx / a) ** 2 + (qy / b) ** 2)
        k1 = np.sqrt((qx / a ** 2) ** 2 + (qy / b ** 2) ** 2)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(k1 > 0, k0 * (k0 - 1) / k1, -min(a, b))
    if p.geom in (1, 2):                                          # polygon / polyline
        local = np.asarray(p.verts) * s
        v = np.stack([cos * local[:, 0] - sin * local[:, 1], sin * local[:, 0] + cos * local[:, 1]], 1) + c
        closed = p.geom == 1
        pairs = [(v[i], v[(i + 1) % len(v)]) for i in range(len(v) if closed else len(v) - 1)]
        d = np.min([_segment_distance(px, py, a, b) for a, b in pairs], axis=0)
        return np.where(_inside_polygon(px, py, v), -d, d) if closed else d
    if p.geom == 3:                                               # glyph
        hx, hy = max(s[0], 1e-6), max(s[1], 1e-6)
        u, v = qx / hx, qy / hy
        A = atlas.shape[-1]
        sdf = _bilinear(atlas[p.index].astype(np.float64), (u + 1) * A / 2 - 0.5, (v + 1) * A / 2 - 0.5, False)
        return np.where((np.abs(u) > 1) | (np.abs(v) > 1), 1e4, sdf * (2.0 / A) * min(hx, hy))
    raise ValueError(p.geom)


def render_reference(scene: Scene, H: int, W: int) -> np.ndarray:
    """``[3,H,W]`` float64 image in [0,1]."""
    atlas = load_atlas().sdf
    py, px = np.mgrid[0:H, 0:W].astype(np.float64) + 0.5
    img = np.empty((3, H, W))
    img[:] = np.array(parse_color(scene.background))[:, None, None]
    order = sorted(range(len(scene.primitives)), key=lambda i: (scene.primitives[i].order, i))
    for i in order:
        p = scene.primitives[i]
        if p.geom == 4:                                           # sprite: premultiplied RGBA
            t = scene.sprites[p.index].double()
            t = (t / 255.0 if not scene.sprites[p.index].is_floating_point() else t).numpy()
            if t.shape[0] == 3:
                t = np.concatenate([t, np.ones_like(t[:1])])
            t = np.concatenate([t[:3] * t[3:], t[3:]])
            c = np.array(p.center) * W
            s = np.maximum(np.array(p.scale) * W, 1e-6)
            cos, sin = math.cos(p.rotation), math.sin(p.rotation)
            qx = cos * (px - c[0]) + sin * (py - c[1])
            qy = -sin * (px - c[0]) + cos * (py - c[1])
            h, w = t.shape[1:]
            rgba = _bilinear(t, (qx / s[0] + 1) * w / 2 - 0.5, (qy / s[1] + 1) * h / 2 - 0.5, True)
            a = rgba[3] * p.alpha
            img = img * (1 - a) + rgba[:3] * p.alpha
            continue
        d = signed_distance(p, px, py, W, atlas)
        shell = p.shell * W
        if shell > 0:
            d = np.abs(d) - shell / 2
        if p.geom == 2:
            d = d - p.stroke * W / 2
        elif not p.fill:
            d = np.abs(d) - p.stroke * W / 2
        a = np.clip(0.5 - d, 0, 1) * p.alpha
        img = img * (1 - a) + a * np.array(p.color)[:, None, None]
    return img


def inside_fraction(scene: Scene, prim: int, H: int, W: int, ss: int = 8) -> np.ndarray:
    """Fraction of ``ss x ss`` sub-samples of each pixel inside filled primitive ``prim``
    (point-in-shape tests only, no distances): an independent check of coverage."""
    p = scene.primitives[prim]
    atlas = load_atlas().sdf
    off = (np.arange(ss) + 0.5) / ss
    acc = np.zeros((H, W))
    for oy in off:
        for ox in off:
            py, px = np.mgrid[0:H, 0:W].astype(np.float64)
            acc += signed_distance(p, px + ox, py + oy, W, atlas) < 0
    return acc / ss / ss


def gather_cells(images, u, v, own_hw=None, zero_outside=True):
    """The hand-written bilinear gather the torch rasterizer used before ``grid_sample``: the
    reference for :func:`kernels.raster_torch.sample_cells` (same arguments, same result)."""
    import torch

    E, C, h, w = images.shape
    sh, sw = (own_hw[:, 0:1].to(u.dtype), own_hw[:, 1:2].to(u.dtype)) if own_hw is not None else (h, w)
    ix, iy = (u + 1) * (sw / 2) - 0.5, (v + 1) * (sh / 2) - 0.5
    x0f, y0f = torch.floor(ix), torch.floor(iy)
    fx, fy = ix - x0f, iy - y0f
    x0, y0 = x0f.long(), y0f.long()
    flat = images.reshape(E, C, h * w)
    out = 0.0
    for oy, wy in ((0, 1.0 - fy), (1, fy)):
        for ox, wx in ((0, 1.0 - fx), (1, fx)):
            xx, yy = x0 + ox, y0 + oy
            inside = (xx >= 0) & (xx < w) & (yy >= 0) & (yy < h)
            lin = (yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1))[:, None, :].expand(E, C, -1)
            value = torch.gather(flat, 2, lin)
            if zero_outside:
                value = value * inside[:, None, :]
            out = out + value * (wx * wy)[:, None, :]
    return out


def warp_reference(sprites, theta):
    """Resample RGBA sprites ``[B,4,H,W]`` uint8 by the affine ``theta [B,2,3]`` (output ->
    input, normalised coordinates) with premultiplied alpha: the warp the sprite kernels used
    before kornia, the reference they are held to."""
    import torch
    import torch.nn.functional as F

    x = sprites.float() / 255
    a = x[:, 3:]
    pre = torch.cat([x[:, :3] * a, a], 1)
    grid = F.affine_grid(theta.to(x.dtype), list(x.shape), align_corners=False)
    y = F.grid_sample(pre, grid, mode="bilinear", padding_mode="zeros", align_corners=False)
    alpha = y[:, 3:]
    rgb = torch.where(alpha > 1e-6, y[:, :3] / alpha.clamp_min(1e-6), torch.zeros_like(y[:, :3]))
    return (torch.cat([rgb, alpha], 1).clamp(0, 1) * 255).round().to(torch.uint8)
