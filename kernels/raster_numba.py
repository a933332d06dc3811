"""numba CPU rasterizer: each scene on its own thread, each primitive visiting only its
bounding box. Same distance formulas, sampling and compositing order as the torch path
(``raster_torch``), which the tests hold it to."""
from __future__ import annotations

import math
import os
import sys
import threading

import numba
import numpy as np

from .primitives import ELLIPSE, GLYPH, POLYGON, POLYLINE, Prepared, Primitives

# The work-queue layer survives fork() (DataLoader workers, process pools), unlike a GNU
# OpenMP one, but must not be entered from two threads at once: calls hold a lock.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"
_LOCK = threading.Lock()

# Strict IEEE arithmetic: no fused multiply-adds or reassociation, so the same scene gives
# the same bytes on every CPU (fast-math flags measured no faster here).
_JIT = dict(cache=True, nogil=True, fastmath=False)
BAND = 32   # canvas rows composited at a time
CHUNK = 2   # scenes a thread takes at a time


@numba.njit(inline="always", **_JIT)
def _bilinear(img, c, h, w, ix, iy, zero_outside):
    """Bilinear sample of channel ``c`` of ``img [C, >=h, >=w]`` (its top-left ``h x w`` part)
    at pixel coordinates ``(ix, iy)``; outside samples are 0 or clamped to the edge."""
    x0f = math.floor(ix)
    y0f = math.floor(iy)
    fx = ix - x0f
    fy = iy - y0f
    x0 = int(x0f)
    y0 = int(y0f)
    acc = np.float32(0.0)
    for oy in range(2):
        wy = fy if oy else 1.0 - fy
        yy = y0 + oy
        if zero_outside and (yy < 0 or yy >= h):
            continue
        yy = min(max(yy, 0), h - 1)
        for ox in range(2):
            wx = fx if ox else 1.0 - fx
            xx = x0 + ox
            if zero_outside and (xx < 0 or xx >= w):
                continue
            xx = min(max(xx, 0), w - 1)
            acc += img[c, yy, xx] * (wx * wy)
    return acc


@numba.njit(inline="always", **_JIT)
def _blend(buf, y, x0, x1, a, cr, cg, cb):
    for x in range(x0, x1):
        buf[0, y, x] = buf[0, y, x] * (1 - a) + cr * a
        buf[1, y, x] = buf[1, y, x] * (1 - a) + cg * a
        buf[2, y, x] = buf[2, y, x] * (1 - a) + cb * a


@numba.njit(inline="always", **_JIT)
def _row_spans(py, m, edges, e0, e1, closed, ax, ay, ex, ey, xc, lo, hi, x0, x1):
    """For the pixel row at ``py``, given its edges ``edges[e0:e1]`` (those reaching the strip
    ``|y - py| <= 1.5 m``): the sorted x of the outline's crossings (closed shapes) and the
    merged pixel ranges ``[lo, hi]`` lying within ``m`` of some edge. Pixels outside the
    ranges are at least ``m`` from the outline; a pixel inside one is within ``sqrt(2) m`` of
    an edge, so its nearest edge is among the row's edges. Returns (crossings, ranges)."""
    nc = 0
    ni = 0
    for q in range(e0, e1):
        j = edges[q]
        ya, yb = ay[j], ay[j] + ey[j]
        if closed and (ya > py) != (yb > py):
            v = ax[j] + (py - ya) * ex[j] / ey[j]
            k = nc
            while k > 0 and xc[k - 1] > v:
                xc[k] = xc[k - 1]
                k -= 1
            xc[k] = v
            nc += 1
        ymin, ymax = min(ya, yb), max(ya, yb)
        if ymax < py - m or ymin > py + m:
            continue
        xa, xb = ax[j], ax[j] + ex[j]
        if ey[j] != 0.0:
            # x where the edge enters and leaves the strip |y - py| <= m
            t0 = (py - m - ya) / ey[j]
            t1 = (py + m - ya) / ey[j]
            ta = min(max(min(t0, t1), 0.0), 1.0)
            tb = min(max(max(t0, t1), 0.0), 1.0)
            xa, xb = ax[j] + ex[j] * ta, ax[j] + ex[j] * tb
        s0 = math.ceil(min(xa, xb) - m - 0.5)
        s1 = math.floor(max(xa, xb) + m - 0.5)
        s0 = max(s0, x0)
        s1 = min(s1, x1 - 1)
        if s1 < s0:
            continue
        k = ni
        while k > 0 and lo[k - 1] > s0:
            lo[k] = lo[k - 1]
            hi[k] = hi[k - 1]
            k -= 1
        lo[k] = s0
        hi[k] = s1
        ni += 1
    # merge overlapping or touching ranges
    w = 0
    for k in range(ni):
        if w > 0 and lo[k] <= hi[w - 1] + 1:
            hi[w - 1] = max(hi[w - 1], hi[k])
        else:
            lo[w] = lo[k]
            hi[w] = hi[k]
            w += 1
    return nc, w


@numba.njit(inline="always", **_JIT)
def _inside(px, nc, xc):
    # Even-odd: an odd number of the row's crossings to the right (the same predicate as
    # the torch path's per-pixel test).
    right = 0
    for q in range(nc):
        if px < xc[q]:
            right += 1
    return right % 2 == 1


@numba.njit(inline="always", **_JIT)
def _segment_sdf(px, py, edges, e0, e1, nc, xc, ax, ay, ex, ey, inv):
    # Distance to the row's edges, negative inside.
    best = np.float32(1e30)
    for q in range(e0, e1):
        j = edges[q]
        wx, wy = px - ax[j], py - ay[j]
        t = min(max((wx * ex[j] + wy * ey[j]) * inv[j], 0.0), 1.0)
        ddx, ddy = wx - ex[j] * t, wy - ey[j] * t
        d2 = ddx * ddx + ddy * ddy
        if d2 < best:
            best = d2
    d = math.sqrt(best)
    return -d if _inside(px, nc, xc) else d


@numba.njit(inline="always", **_JIT)
def _ellipse_sdf(px, py, cx, cy, c, s, hx, hy):
    # Approximate signed distance to an ellipse (exact for a circle), in its own frame.
    dx, dy = px - cx, py - cy
    qx, qy = c * dx + s * dy, -s * dx + c * dy
    k0 = math.sqrt((qx / hx) ** 2 + (qy / hy) ** 2)
    k1 = math.sqrt((qx / (hx * hx)) ** 2 + (qy / (hy * hy)) ** 2)
    return k0 * (k0 - 1.0) / max(k1, 1e-12) if k1 > 0 else -min(hx, hy)


@numba.njit(inline="always", **_JIT)
def _edge_rows(ya, ey, m, y0, y1):
    # Rows (relative to y0) whose pixel-centre strip |y - py| <= 1.5 m the edge reaches.
    r0 = max(int(math.ceil(min(ya, ya + ey) - 1.5 * m - 0.5)), y0) - y0
    r1 = min(int(math.floor(max(ya, ya + ey) + 1.5 * m - 0.5)), y1 - 1) - y0
    return r0, r1


@numba.njit(inline="always", **_JIT)
def _finish(d, g, sh, st, filled, al):
    if sh > 0:
        d = abs(d) - sh / 2
    if g == POLYLINE:
        d = d - st / 2
    elif not filled:
        d = abs(d) - st / 2
    return min(max(0.5 - d, 0.0), 1.0) * al


@numba.njit(**_JIT)
def _to_uint8(buf, rows, out, b, ys):
    # buf[:, :rows] -> out[b, :, ys:ys+rows]. Rounds half up (the torch path rounds half to
    # even: the two differ by at most one level on exact .5 values).
    W = buf.shape[2]
    for ch in range(3):
        for y in range(rows):
            for x in range(W):
                v = min(max(buf[ch, y, x], np.float32(0.0)), np.float32(1.0)) * np.float32(255.0) + np.float32(0.5)
                out[b, ch, ys + y, x] = np.uint8(np.int32(v))


@numba.njit(parallel=True, **_JIT)
def _render(count, perm, geom, center, half, cs, color, alpha, fill, stroke, shell, verts, nverts, index,
            bbox, bg_color, bg_image, atlas, sprites, sprite_hw, out_u8, out_f32):
    B = count.shape[0]
    H = max(out_u8.shape[2], out_f32.shape[2])
    W = max(out_u8.shape[3], out_f32.shape[3])
    V = verts.shape[2]
    A = atlas.shape[1]
    # Each scene is composited one band of BAND rows at a time in a small float buffer that
    # stays in cache (a whole 224 px canvas is 600 KB): fill, draw the primitives clipped to
    # the band, convert, next band. Scenes are handed to threads in small dynamic chunks
    # (see ``rasterize``), so a busy core does not hold up the batch.
    nbands = (H + BAND - 1) // BAND
    for b in numba.prange(B):
        buf = np.empty((3, min(BAND, H), W), np.float32)
        ax = np.empty(V + 1, np.float32)
        ay = np.empty(V + 1, np.float32)
        ex = np.empty(V + 1, np.float32)
        ey = np.empty(V + 1, np.float32)
        inv = np.empty(V + 1, np.float32)
        xc = np.empty(V + 1, np.float32)
        lo = np.empty(V + 1, np.int64)
        hi = np.empty(V + 1, np.int64)
        row_start = np.empty(H + 2, np.int64)
        row_edges = np.empty((V + 1) * 8, np.int64)
        rgba = np.empty(4, np.float32)
        for band in range(nbands):
            ys = band * BAND
            ye = min(H, ys + BAND)
            if bg_image.shape[0] > 0:
                for ch in range(3):
                    for y in range(ye - ys):
                        for x in range(W):
                            buf[ch, y, x] = bg_image[b, ch, ys + y, x]
            else:
                for ch in range(3):
                    v = bg_color[b, ch]
                    for y in range(ye - ys):
                        for x in range(W):
                            buf[ch, y, x] = v
            for k_ in range(count[b]):
                n = perm[b, k_]
                x0, y0, x1, y1 = bbox[b, n, 0], max(bbox[b, n, 1], ys), bbox[b, n, 2], min(bbox[b, n, 3], ye)
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
                idx = index[b, n]
                if g == POLYGON or g == POLYLINE:
                    closed = g == POLYGON
                    nv = nverts[b, n]
                    nseg = nv if closed else nv - 1
                    for j in range(nv):   # local -> pixels: center + R @ (v * half)
                        lx = verts[b, n, j, 0] * half[b, n, 0]
                        ly = verts[b, n, j, 1] * half[b, n, 1]
                        ax[j] = cx + (c * lx - s * ly)
                        ay[j] = cy + (s * lx + c * ly)
                    for j in range(nseg):
                        k = (j + 1) % nv
                        ex[j] = ax[k] - ax[j]
                        ey[j] = ay[k] - ay[j]
                        inv[j] = 1.0 / max(ex[j] * ex[j] + ey[j] * ey[j], 1e-12)
                    # Pixels farther than m from the outline have coverage exactly 0 or 1.
                    m = 0.5 + sh / 2 + (st / 2 if (not filled or not closed) else 0.0) + 1e-3
                    solid = closed and filled and sh <= 0
                    # Bucket the edges by the rows whose strip |y - py| <= 1.5 m they reach, so each row
                    # looks only at its own edges: O(V + rows) per primitive instead of O(V * rows).
                    nrows = y1 - y0
                    for r in range(nrows + 1):
                        row_start[r] = 0
                    total = 0
                    for j in range(nseg):
                        r0, r1 = _edge_rows(ay[j], ey[j], m, y0, y1)
                        for r in range(r0, r1 + 1):
                            row_start[r + 1] += 1
                        total += max(r1 - r0 + 1, 0)
                    for r in range(nrows):
                        row_start[r + 1] += row_start[r]
                    if total > row_edges.shape[0]:
                        row_edges = np.empty(2 * total, np.int64)
                    for j in range(nseg):
                        r0, r1 = _edge_rows(ay[j], ey[j], m, y0, y1)
                        for r in range(r0, r1 + 1):
                            row_edges[row_start[r]] = j
                            row_start[r] += 1
                    # Now row_start[r] is where row r's edges end, and row r starts where row r-1 ended.
                    for y in range(y0, y1):
                        py = np.float32(y + 0.5)
                        e0, e1 = (row_start[y - y0 - 1] if y > y0 else 0), row_start[y - y0]
                        nc, ni = _row_spans(py, m, row_edges, e0, e1, closed, ax, ay, ex, ey, xc, lo, hi, x0, x1)
                        x = x0
                        k = 0
                        while x < x1:
                            if k < ni and x >= lo[k]:
                                for xx in range(x, hi[k] + 1):
                                    px = np.float32(xx + 0.5)
                                    d = _segment_sdf(px, py, row_edges, e0, e1, nc, xc, ax, ay, ex, ey, inv)
                                    a = _finish(d, g, sh, st, filled, al)
                                    if a > 0:
                                        _blend(buf, y - ys, xx, xx + 1, a, cr, cg, cb)
                                x = hi[k] + 1
                                k += 1
                                continue
                            stop = lo[k] if k < ni else x1
                            if solid and al > 0 and _inside(np.float32(x + 0.5), nc, xc):
                                _blend(buf, y - ys, x, stop, al, cr, cg, cb)
                            x = stop
                    continue
                if g == ELLIPSE and abs(hx - hy) <= 1e-6 * hx:
                    # A circle's distance is exact: per row, pixels within r - m of the centre are
                    # fully covered, those beyond r + m untouched; only the annulus between is
                    # evaluated (with the same formula as the torch path).
                    m = 0.5 + sh / 2 + (st / 2 if not filled else 0.0) + 1e-3
                    solid = filled and sh <= 0
                    ro2 = (hx + m) * (hx + m)
                    ri = hx - m
                    for y in range(y0, y1):
                        py = np.float32(y + 0.5)
                        dy = py - cy
                        if dy * dy >= ro2:
                            continue
                        wo = math.sqrt(ro2 - dy * dy)
                        xa = max(x0, int(math.ceil(cx - wo - 0.5)))
                        xb = min(x1 - 1, int(math.floor(cx + wo - 0.5)))
                        ca, cb_ = xb + 1, xb   # core range [ca, cb_] (empty unless set)
                        if ri > 0 and dy * dy < ri * ri:
                            wi = math.sqrt(ri * ri - dy * dy)
                            ca = max(xa, int(math.floor(cx - wi - 0.5)) + 1)
                            cb_ = min(xb, int(math.ceil(cx + wi - 0.5)) - 1)
                        x = xa
                        while x <= xb:
                            if x == ca and ca <= cb_:
                                if solid and al > 0:
                                    _blend(buf, y - ys, ca, cb_ + 1, al, cr, cg, cb)
                                x = cb_ + 1
                                continue
                            a = _finish(_ellipse_sdf(np.float32(x + 0.5), py, cx, cy, c, s, hx, hy), g, sh, st,
                                        filled, al)
                            if a > 0:
                                _blend(buf, y - ys, x, x + 1, a, cr, cg, cb)
                            x += 1
                    continue
                for y in range(y0, y1):
                    py = np.float32(y + 0.5)
                    for x in range(x0, x1):
                        px = np.float32(x + 0.5)
                        if g == ELLIPSE:
                            a = _finish(_ellipse_sdf(px, py, cx, cy, c, s, hx, hy), g, sh, st, filled, al)
                        elif g == GLYPH:
                            dx, dy = px - cx, py - cy
                            u, v = (c * dx + s * dy) / hx, (-s * dx + c * dy) / hy
                            if abs(u) > 1 or abs(v) > 1:
                                continue
                            sdf = _bilinear(atlas, idx, A, A, (u + 1) * (A / 2) - 0.5, (v + 1) * (A / 2) - 0.5, False)
                            a = _finish(sdf * ((2.0 / A) * min(hx, hy)), g, sh, st, filled, al)
                        else:  # SPRITE
                            dx, dy = px - cx, py - cy
                            u, v = (c * dx + s * dy) / hx, (-s * dx + c * dy) / hy
                            sh_, sw_ = sprite_hw[idx, 0], sprite_hw[idx, 1]
                            for ch in range(4):
                                rgba[ch] = _bilinear(sprites[idx], ch, sh_, sw_, (u + 1) * (sw_ / 2) - 0.5,
                                                     (v + 1) * (sh_ / 2) - 0.5, True)
                            a = rgba[3] * al
                            if a <= 0:
                                continue
                            for ch in range(3):
                                buf[ch, y - ys, x] = buf[ch, y - ys, x] * (1 - a) + rgba[ch] * al
                            continue
                        if a > 0:
                            _blend(buf, y - ys, x, x + 1, a, cr, cg, cb)
            if out_u8.shape[0] > 0:
                _to_uint8(buf, ye - ys, out_u8, b, ys)
            else:
                out_f32[b, :, ys:ye] = buf[:, : ye - ys]


@numba.njit(parallel=True, **_JIT)
def _prepare(valid, geom, center, scale, rotation, order, fill, stroke, shell, bounds, H, W,
             count, perm, c_px, half, cs, stroke_px, shell_px, bbox):
    """``kernels.raster.prepare`` for the numba path, one scene per iteration (the torch
    version pays a fixed cost per tensor op that dominates on small CPU batches)."""
    B, N = valid.shape
    for b in numba.prange(B):
        key = np.empty(N, np.float64)
        k = 0
        for n in range(N):
            key[n] = order[b, n] if valid[b, n] else np.inf
            k += valid[b, n]
        count[b] = k
        perm[b] = np.argsort(key, kind="mergesort")   # stable: ties keep insertion order
        for n in range(N):
            cx, cy = center[b, n, 0] * W, center[b, n, 1] * W
            a, bb = scale[b, n, 0] * W, scale[b, n, 1] * W
            co, si = math.cos(rotation[b, n]), math.sin(rotation[b, n])
            c_px[b, n, 0], c_px[b, n, 1] = cx, cy
            half[b, n, 0], half[b, n, 1] = a, bb
            cs[b, n, 0], cs[b, n, 1] = co, si
            stroke_px[b, n] = stroke[b, n] * W
            shell_px[b, n] = shell[b, n] * W
            if geom[b, n] == ELLIPSE:
                ex = math.sqrt((a * co) ** 2 + (bb * si) ** 2)
                ey = math.sqrt((a * si) ** 2 + (bb * co) ** 2)
                lox, loy, hix, hiy = cx - ex, cy - ey, cx + ex, cy + ey
            else:   # the rotated local box
                lox, loy, hix, hiy = np.inf, np.inf, -np.inf, -np.inf
                for corner in range(4):
                    lx = (bounds[b, n, 2] if corner == 1 or corner == 2 else bounds[b, n, 0]) * a
                    ly = (bounds[b, n, 3] if corner >= 2 else bounds[b, n, 1]) * bb
                    wx, wy = cx + (co * lx - si * ly), cy + (si * lx + co * ly)
                    lox, hix = min(lox, wx), max(hix, wx)
                    loy, hiy = min(loy, wy), max(hiy, wy)
            outline = (not fill[b, n]) or geom[b, n] == POLYLINE
            m = 1.0 + shell_px[b, n] / 2 + (stroke_px[b, n] / 2 if outline else 0.0)
            if valid[b, n]:
                bbox[b, n, 0] = int(min(max(math.floor(lox - m), 0), W))
                bbox[b, n, 1] = int(min(max(math.floor(loy - m), 0), H))
                bbox[b, n, 2] = int(min(max(math.ceil(hix + m), 0), W))
                bbox[b, n, 3] = int(min(max(math.ceil(hiy + m), 0), H))
            else:
                bbox[b, n, 0] = bbox[b, n, 1] = bbox[b, n, 2] = bbox[b, n, 3] = 0


def prepare(p: Primitives, height: int, width: int) -> Prepared:
    """The numba twin of :func:`kernels.raster.prepare` (CPU tensors in, CPU tensors out)."""
    import torch

    B, N = p.valid.shape
    a = {k: np.empty(shape, dt) for k, shape, dt in (
        ("count", (B,), np.int64), ("perm", (B, N), np.int64), ("center", (B, N, 2), np.float32),
        ("half", (B, N, 2), np.float32), ("cs", (B, N, 2), np.float32), ("stroke", (B, N), np.float32),
        ("shell", (B, N), np.float32), ("bbox", (B, N, 4), np.int64))}
    f32 = lambda t: np.ascontiguousarray(t.numpy(), dtype=np.float32)  # noqa: E731
    with _LOCK:
        _prepare(p.valid.numpy(), np.ascontiguousarray(p.geom.numpy(), np.int64), f32(p.center), f32(p.scale),
                 f32(p.rotation), f32(p.order), p.fill.numpy(), f32(p.stroke), f32(p.shell), f32(p.bounds),
                 height, width, a["count"], a["perm"], a["center"], a["half"], a["cs"], a["stroke"], a["shell"],
                 a["bbox"])
    t = {k: torch.from_numpy(v) for k, v in a.items()}
    return Prepared(count=t["count"], perm=t["perm"], geom=p.geom, center=t["center"], half=t["half"], cs=t["cs"],
                    color=p.color, alpha=p.alpha, fill=p.fill, stroke=t["stroke"], shell=t["shell"], verts=p.verts,
                    nverts=p.nverts, index=p.index, bbox=t["bbox"])


class _OutputPool:
    """Recycles output arrays once nothing outside the pool refers to them.

    A fresh multi-megabyte array costs a page fault per 4 KB on first touch, and faults taken
    by two rendering threads at once serialise: on a 2-core machine that was half the time
    of a 20-shape batch. A returned tensor (``torch.from_numpy``) keeps its array referenced
    for as long as it or any view of it lives, so an array is only handed out again after
    the caller has let go of every tensor made from it. Holds at most ``max_bytes``.
    """

    FREE = 3  # references to an unused array: the pool's list, the loop variable, getrefcount

    def __init__(self, max_bytes: int = 256 << 20, max_arrays: int = 8):
        self.arrays: list[np.ndarray] = []
        self.max_bytes = max_bytes
        self.max_arrays = max_arrays

    def get(self, shape: tuple, dtype) -> np.ndarray:
        for a in self.arrays:
            if a.shape == shape and a.dtype == dtype and sys.getrefcount(a) <= self.FREE:
                return a
        out = np.empty(shape, dtype)
        if out.nbytes <= self.max_bytes // 4:
            self.arrays.append(out)
            while len(self.arrays) > self.max_arrays or sum(a.nbytes for a in self.arrays) > self.max_bytes:
                self.arrays.pop(0)   # oldest first; a caller still holding it keeps it alive
        return out


_POOL = _OutputPool()


def rasterize(prep: Prepared, height: int, width: int, bg_color: np.ndarray, bg_image: np.ndarray | None,
              atlas: np.ndarray, sprites: np.ndarray, sprite_hw: np.ndarray, uint8: bool = True) -> np.ndarray:
    """Render prepared primitives (CPU tensors) over ``bg_color [B,3]`` or ``bg_image [B,3,H,W]``
    (float32 in [0,1]).

    Returns ``[B,3,H,W]`` numpy: uint8 (rounded) when ``uint8``, else float32 in [0,1].
    """
    f32 = lambda t: np.ascontiguousarray(t.numpy(), dtype=np.float32)  # noqa: E731
    i64 = lambda t: np.ascontiguousarray(t.numpy(), dtype=np.int64)  # noqa: E731
    B = prep.geom.shape[0]
    img = np.zeros((0, 3, 1, 1), np.float32) if bg_image is None else np.ascontiguousarray(bg_image, dtype=np.float32)
    with _LOCK, numba.parallel_chunksize(CHUNK):
        shape, none = (B, 3, height, width), (0, 3, height, width)
        if uint8:
            out_u8, out_f32 = _POOL.get(shape, np.uint8), np.empty(none, np.float32)
        else:
            out_u8, out_f32 = np.empty(none, np.uint8), np.empty(shape, np.float32)
        _render(i64(prep.count), i64(prep.perm), i64(prep.geom), f32(prep.center), f32(prep.half), f32(prep.cs), f32(prep.color),
                f32(prep.alpha), np.ascontiguousarray(prep.fill.numpy()), f32(prep.stroke), f32(prep.shell),
                f32(prep.verts), i64(prep.nverts), i64(prep.index), i64(prep.bbox),
                np.ascontiguousarray(bg_color, dtype=np.float32), img, atlas,
                sprites, sprite_hw, out_u8, out_f32)
    return out_u8 if uint8 else out_f32
