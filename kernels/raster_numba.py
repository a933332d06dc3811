"""numba CPU rasterizer: each scene on its own thread, each primitive visiting only its
bounding box. Same distance formulas, sampling and compositing order as the torch path
(``raster_torch``), which the tests hold it to."""
from __future__ import annotations

import math

import numba
import numpy as np

from .raster import ELLIPSE, GLYPH, POLYGON, POLYLINE, SPRITE, Prepared

_JIT = dict(cache=True, nogil=True, fastmath=False)


@numba.njit(inline="always", **_JIT)
def _sample_clamped(img, ix, iy):
    h, w = img.shape
    x0 = math.floor(ix)
    y0 = math.floor(iy)
    fx = ix - x0
    fy = iy - y0
    x0 = int(x0)
    y0 = int(y0)
    xa = min(max(x0, 0), w - 1)
    xb = min(max(x0 + 1, 0), w - 1)
    ya = min(max(y0, 0), h - 1)
    yb = min(max(y0 + 1, 0), h - 1)
    return ((img[ya, xa] * (1 - fx) + img[ya, xb] * fx) * (1 - fy)
            + (img[yb, xa] * (1 - fx) + img[yb, xb] * fx) * fy)


@numba.njit(**_JIT)
def _sample_rgba(spr, h, w, ix, iy, out):
    x0f = math.floor(ix)
    y0f = math.floor(iy)
    fx = ix - x0f
    fy = iy - y0f
    x0 = int(x0f)
    y0 = int(y0f)
    for c in range(4):
        out[c] = 0.0
    for oy in range(2):
        wy = fy if oy else 1.0 - fy
        yy = y0 + oy
        if yy < 0 or yy >= h:
            continue
        for ox in range(2):
            wx = fx if ox else 1.0 - fx
            xx = x0 + ox
            if xx < 0 or xx >= w:
                continue
            for c in range(4):
                out[c] += spr[c, yy, xx] * (wx * wy)


@numba.njit(parallel=True, **_JIT)
def _render(count, geom, center, half, cs, color, alpha, fill, stroke, shell, verts, nverts, index,
            bbox, bg, atlas, sprites, sprite_hw, out):
    B, _, H, W = out.shape
    V = verts.shape[2]
    A = atlas.shape[1]
    for b in numba.prange(B):
        buf = bg[b].copy()
        ax = np.empty(V + 1, np.float32)
        ay = np.empty(V + 1, np.float32)
        ex = np.empty(V + 1, np.float32)
        ey = np.empty(V + 1, np.float32)
        inv = np.empty(V + 1, np.float32)
        rgba = np.empty(4, np.float32)
        for n in range(count[b]):
            x0, y0, x1, y1 = bbox[b, n, 0], bbox[b, n, 1], bbox[b, n, 2], bbox[b, n, 3]
            if x1 <= x0 or y1 <= y0:
                continue
            g = geom[b, n]
            cx, cy = center[b, n, 0], center[b, n, 1]
            hx, hy = max(half[b, n, 0], 1e-6), max(half[b, n, 1], 1e-6)
            c, s = cs[b, n, 0], cs[b, n, 1]
            al = alpha[b, n]
            cr, cg, cb = color[b, n, 0], color[b, n, 1], color[b, n, 2]
            sh = shell[b, n]
            st = stroke[b, n]
            filled = fill[b, n]
            nseg = 0
            if g == POLYGON or g == POLYLINE:
                nv = nverts[b, n]
                nseg = nv if g == POLYGON else nv - 1
                for j in range(nseg):
                    k = (j + 1) % nv
                    ax[j] = verts[b, n, j, 0]
                    ay[j] = verts[b, n, j, 1]
                    ex[j] = verts[b, n, k, 0] - ax[j]
                    ey[j] = verts[b, n, k, 1] - ay[j]
                    inv[j] = 1.0 / max(ex[j] * ex[j] + ey[j] * ey[j], 1e-12)
            idx = index[b, n]
            for y in range(y0, y1):
                py = np.float32(y + 0.5)
                for x in range(x0, x1):
                    px = np.float32(x + 0.5)
                    d = np.float32(0.0)
                    if g == ELLIPSE:
                        dx, dy = px - cx, py - cy
                        qx, qy = c * dx + s * dy, -s * dx + c * dy
                        k0 = math.sqrt((qx / hx) ** 2 + (qy / hy) ** 2)
                        k1 = math.sqrt((qx / (hx * hx)) ** 2 + (qy / (hy * hy)) ** 2)
                        d = k0 * (k0 - 1.0) / max(k1, 1e-12) if k1 > 0 else -min(hx, hy)
                    elif g == POLYGON or g == POLYLINE:
                        best = np.float32(1e30)
                        crossings = 0
                        for j in range(nseg):
                            wx, wy = px - ax[j], py - ay[j]
                            t = min(max((wx * ex[j] + wy * ey[j]) * inv[j], 0.0), 1.0)
                            ddx, ddy = wx - ex[j] * t, wy - ey[j] * t
                            d2 = ddx * ddx + ddy * ddy
                            if d2 < best:
                                best = d2
                            if g == POLYGON:
                                by = ay[j] + ey[j]
                                if (ay[j] > py) != (by > py):
                                    if px < ax[j] + (py - ay[j]) * ex[j] / ey[j]:
                                        crossings += 1
                        d = math.sqrt(best)
                        if crossings % 2 == 1:
                            d = -d
                    elif g == GLYPH:
                        dx, dy = px - cx, py - cy
                        u, v = (c * dx + s * dy) / hx, (-s * dx + c * dy) / hy
                        if abs(u) > 1 or abs(v) > 1:
                            continue
                        sdf = _sample_clamped(atlas[idx], (u + 1) * (A / 2) - 0.5, (v + 1) * (A / 2) - 0.5)
                        d = sdf * ((2.0 / A) * min(hx, hy))
                    else:  # SPRITE
                        dx, dy = px - cx, py - cy
                        u, v = (c * dx + s * dy) / hx, (-s * dx + c * dy) / hy
                        sh_, sw_ = sprite_hw[idx, 0], sprite_hw[idx, 1]
                        _sample_rgba(sprites[idx], sh_, sw_, (u + 1) * (sw_ / 2) - 0.5, (v + 1) * (sh_ / 2) - 0.5, rgba)
                        a = rgba[3] * al
                        if a <= 0:
                            continue
                        for ch in range(3):
                            buf[ch, y, x] = buf[ch, y, x] * (1 - a) + rgba[ch] * al
                        continue
                    if sh > 0:
                        d = abs(d) - sh / 2
                    if g == POLYLINE:
                        d = d - st / 2
                    elif not filled:
                        d = abs(d) - st / 2
                    a = min(max(0.5 - d, 0.0), 1.0) * al
                    if a <= 0:
                        continue
                    buf[0, y, x] = buf[0, y, x] * (1 - a) + cr * a
                    buf[1, y, x] = buf[1, y, x] * (1 - a) + cg * a
                    buf[2, y, x] = buf[2, y, x] * (1 - a) + cb * a
        out[b] = buf


def rasterize(prep: Prepared, height: int, width: int, background: np.ndarray,
              atlas: np.ndarray, sprites: np.ndarray, sprite_hw: np.ndarray) -> np.ndarray:
    """Render prepared primitives (CPU tensors) over ``background [B,3,H,W]`` float32.

    Returns a float32 ``[B,3,H,W]`` numpy array in [0,1].
    """
    f32 = lambda t: np.ascontiguousarray(t.numpy(), dtype=np.float32)  # noqa: E731
    i64 = lambda t: np.ascontiguousarray(t.numpy(), dtype=np.int64)  # noqa: E731
    B = prep.geom.shape[0]
    out = np.empty((B, 3, height, width), np.float32)
    _render(i64(prep.count), i64(prep.geom), f32(prep.center), f32(prep.half), f32(prep.cs), f32(prep.color),
            f32(prep.alpha), np.ascontiguousarray(prep.fill.numpy()), f32(prep.stroke), f32(prep.shell),
            f32(prep.verts), i64(prep.nverts), i64(prep.index), i64(prep.bbox),
            np.ascontiguousarray(background, dtype=np.float32), atlas, sprites, sprite_hw, out)
    return out
