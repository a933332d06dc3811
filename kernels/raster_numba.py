"""numba CPU rasterizer: each scene on its own thread, each primitive visiting only its
bounding box. Same distance formulas, sampling and compositing order as the torch path
(``raster_torch``), which the tests hold it to."""
from __future__ import annotations

import math
import os
import threading
import weakref
from typing import NamedTuple

import numba
import numpy as np

from .primitives import ELLIPSE, POLYGON, POLYLINE, SPRITE, Prepared, Primitives

# The work-queue layer survives fork() (DataLoader workers, process pools), unlike a GNU
# OpenMP one, but must not be entered from two threads at once: calls hold a lock.
if "NUMBA_THREADING_LAYER" not in os.environ:
    numba.config.THREADING_LAYER = "workqueue"
_LOCK = threading.Lock()
# A fork (a DataLoader starting its workers) waits for a render in flight on another thread
# (a stream renders ahead on a helper thread): a child must not inherit the lock held.
if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_LOCK.acquire, after_in_parent=_LOCK.release, after_in_child=_LOCK.release)

# Strict IEEE arithmetic: no fused multiply-adds or reassociation, so the same scene gives
# the same bytes on every CPU (fast-math flags measured no faster here). The per-primitive
# helpers below are inlined into the parallel kernel: a call that passes the padded arrays
# would count references on each of them, per primitive and band.
_JIT = dict(cache=True, nogil=True, fastmath=False)
BAND = 64   # canvas rows composited at a time (tuned with `procvis bench raster`)
CHUNK = 4   # scenes a thread takes at a time


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


class _Prims(NamedTuple):
    """The prepared primitives as numpy arrays (see :class:`kernels.primitives.Prepared`)."""

    count: np.ndarray
    perm: np.ndarray
    geom: np.ndarray
    center: np.ndarray
    half: np.ndarray
    cs: np.ndarray
    color: np.ndarray
    alpha: np.ndarray
    fill: np.ndarray
    stroke: np.ndarray
    shell: np.ndarray
    verts: np.ndarray
    nverts: np.ndarray
    index: np.ndarray
    bbox: np.ndarray


class _Images(NamedTuple):
    """What primitives sample or draw over: background colours ``[B,3]`` or images
    ``[B,3,H,W]`` (an empty first axis when unused), the glyph atlas and the sprites."""

    bg_color: np.ndarray
    bg_image: np.ndarray
    atlas: np.ndarray
    sprites: np.ndarray
    sprite_hw: np.ndarray


class _Scratch(NamedTuple):
    """One thread's work arrays: the band buffer ``[3, BAND, W]``, an outline's vertices
    and edges in pixels, a row's crossings and pixel ranges, edges bucketed by row, a
    sprite sample."""

    buf: np.ndarray
    ax: np.ndarray
    ay: np.ndarray
    ex: np.ndarray
    ey: np.ndarray
    inv: np.ndarray
    xc: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    row_start: np.ndarray
    row_edges: np.ndarray
    rgba: np.ndarray


@numba.njit(inline="always", **_JIT)
def _scratch(V, W):
    # Two allocations, cut into the work arrays. An edge reaches at most the BAND rows of a
    # band, so BAND slots per edge always suffice.
    f = np.empty(3 * BAND * W + 6 * (V + 1) + 4, np.float32)
    i = np.empty(2 * (V + 1) + BAND + 2 + (V + 1) * BAND, np.int64)
    v, n = V + 1, 3 * BAND * W
    return _Scratch(f[:n].reshape(3, BAND, W), f[n:n + v], f[n + v:n + 2 * v], f[n + 2 * v:n + 3 * v],
                    f[n + 3 * v:n + 4 * v], f[n + 4 * v:n + 5 * v], f[n + 5 * v:n + 6 * v], i[:v], i[v:2 * v],
                    i[2 * v:2 * v + BAND + 2], i[2 * v + BAND + 2:], f[n + 6 * v:])


@numba.njit(inline="always", **_JIT)
def _fill_background(buf, I, b, ys, ye):
    W = buf.shape[2]
    if I.bg_image.shape[0] > 0:
        for ch in range(3):
            for y in range(ye - ys):
                for x in range(W):
                    buf[ch, y, x] = I.bg_image[b, ch, ys + y, x]
    else:
        for ch in range(3):
            v = I.bg_color[b, ch]
            for y in range(ye - ys):
                for x in range(W):
                    buf[ch, y, x] = v


@numba.njit(inline="always", **_JIT)
def _outline_edges(S, P, b, n, closed):
    """The outline's vertices (local -> pixels: center + R @ (v * half)) and edges in ``S``;
    returns the number of edges."""
    nv = P.nverts[b, n]
    nseg = nv if closed else nv - 1
    cx, cy = P.center[b, n, 0], P.center[b, n, 1]
    c, s = P.cs[b, n, 0], P.cs[b, n, 1]
    for j in range(nv):
        lx = P.verts[b, n, j, 0] * P.half[b, n, 0]
        ly = P.verts[b, n, j, 1] * P.half[b, n, 1]
        S.ax[j] = cx + (c * lx - s * ly)
        S.ay[j] = cy + (s * lx + c * ly)
    for j in range(nseg):
        k = (j + 1) % nv
        S.ex[j] = S.ax[k] - S.ax[j]
        S.ey[j] = S.ay[k] - S.ay[j]
        S.inv[j] = 1.0 / max(S.ex[j] * S.ex[j] + S.ey[j] * S.ey[j], 1e-12)
    return nseg


@numba.njit(inline="always", **_JIT)
def _bucket_edges(S, nseg, m, y0, y1):
    """Bucket the edges by the rows ``y0..y1-1`` whose strip ``|y - py| <= 1.5 m`` they reach,
    so that each row looks only at its own edges: O(V + rows) per primitive, not O(V rows).
    Row ``r``'s edges are ``S.row_edges[S.row_start[r - 1] : S.row_start[r]]`` (from 0 for
    ``r = 0``)."""
    nrows = y1 - y0
    for r in range(nrows + 1):
        S.row_start[r] = 0
    for j in range(nseg):
        r0, r1 = _edge_rows(S.ay[j], S.ey[j], m, y0, y1)
        for r in range(r0, r1 + 1):
            S.row_start[r + 1] += 1
    for r in range(nrows):
        S.row_start[r + 1] += S.row_start[r]
    for j in range(nseg):
        r0, r1 = _edge_rows(S.ay[j], S.ey[j], m, y0, y1)
        for r in range(r0, r1 + 1):
            S.row_edges[S.row_start[r]] = j
            S.row_start[r] += 1


@numba.njit(inline="always", **_JIT)
def _draw_outline(S, P, b, n, x0, y0, x1, y1, ys):
    """A polygon (closed, filled or outlined) or a polyline, row by row: pixels farther than
    ``m`` from the outline have coverage exactly 0 or 1, so only the pixel ranges near an
    edge are evaluated and the inside runs between them are blended whole."""
    g = P.geom[b, n]
    closed = g == POLYGON
    sh, st, filled, al = P.shell[b, n], P.stroke[b, n], P.fill[b, n], P.alpha[b, n]
    cr, cg, cb = P.color[b, n, 0], P.color[b, n, 1], P.color[b, n, 2]
    nseg = _outline_edges(S, P, b, n, closed)
    m = 0.5 + sh / 2 + (st / 2 if (not filled or not closed) else 0.0) + 1e-3
    solid = closed and filled and sh <= 0
    _bucket_edges(S, nseg, m, y0, y1)
    buf, ax, ay, ex, ey, inv, xc, lo, hi, row_start, edges = S.buf, S.ax, S.ay, S.ex, S.ey, S.inv, S.xc, S.lo, S.hi, \
        S.row_start, S.row_edges
    for y in range(y0, y1):
        py = np.float32(y + 0.5)
        e0, e1 = (row_start[y - y0 - 1] if y > y0 else 0), row_start[y - y0]
        nc, ni = _row_spans(py, m, edges, e0, e1, closed, ax, ay, ex, ey, xc, lo, hi, x0, x1)
        x = x0
        k = 0
        while x < x1:
            if k < ni and x >= lo[k]:
                for xx in range(x, hi[k] + 1):
                    d = _segment_sdf(np.float32(xx + 0.5), py, edges, e0, e1, nc, xc, ax, ay, ex, ey, inv)
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


@numba.njit(inline="always", **_JIT)
def _shape(P, b, n):
    """Primitive ``n`` of scene ``b`` as scalars: geometry, centre, half sizes (at least
    1e-6), rotation cosine and sine, shell, stroke, fill, alpha and colour."""
    return (P.geom[b, n], P.center[b, n, 0], P.center[b, n, 1], max(P.half[b, n, 0], 1e-6),
            max(P.half[b, n, 1], 1e-6), P.cs[b, n, 0], P.cs[b, n, 1], P.shell[b, n], P.stroke[b, n], P.fill[b, n],
            P.alpha[b, n], P.color[b, n, 0], P.color[b, n, 1], P.color[b, n, 2])


@numba.njit(inline="always", **_JIT)
def _draw_circle(buf, P, b, n, x0, y0, x1, y1, ys):
    """A circle's distance is exact: per row, pixels within ``r - m`` of the centre are fully
    covered, those beyond ``r + m`` untouched; only the annulus between is evaluated (with
    the same formula as the torch path)."""
    g, cx, cy, hx, hy, c, s, sh, st, filled, al, cr, cg, cb = _shape(P, b, n)
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
            a = _finish(_ellipse_sdf(np.float32(x + 0.5), py, cx, cy, c, s, hx, hy), g, sh, st, filled, al)
            if a > 0:
                _blend(buf, y - ys, x, x + 1, a, cr, cg, cb)
            x += 1


@numba.njit(inline="always", **_JIT)
def _sprite_pixel(S, P, I, b, n, y, x, ys, u, v):
    """Composite the sprite's premultiplied bilinear sample at local ``(u, v)`` over pixel
    ``(y, x)``."""
    idx = P.index[b, n]
    al = P.alpha[b, n]
    sh_, sw_ = I.sprite_hw[idx, 0], I.sprite_hw[idx, 1]
    for ch in range(4):
        S.rgba[ch] = _bilinear(I.sprites[idx], ch, sh_, sw_, (u + 1) * (sw_ / 2) - 0.5, (v + 1) * (sh_ / 2) - 0.5,
                               True)
    a = S.rgba[3] * al
    if a > 0:
        for ch in range(3):
            S.buf[ch, y - ys, x] = S.buf[ch, y - ys, x] * (1 - a) + S.rgba[ch] * al


@numba.njit(inline="always", **_JIT)
def _draw_pixels(S, P, I, b, n, x0, y0, x1, y1, ys):
    """An ellipse, a glyph or a sprite, evaluated at every pixel of its box."""
    g, cx, cy, hx, hy, c, s, sh, st, filled, al, cr, cg, cb = _shape(P, b, n)
    A = I.atlas.shape[1]
    for y in range(y0, y1):
        py = np.float32(y + 0.5)
        for x in range(x0, x1):
            px = np.float32(x + 0.5)
            if g == ELLIPSE:
                a = _finish(_ellipse_sdf(px, py, cx, cy, c, s, hx, hy), g, sh, st, filled, al)
                if a > 0:
                    _blend(S.buf, y - ys, x, x + 1, a, cr, cg, cb)
                continue
            dx, dy = px - cx, py - cy
            u, v = (c * dx + s * dy) / hx, (-s * dx + c * dy) / hy
            if g == SPRITE:
                _sprite_pixel(S, P, I, b, n, y, x, ys, u, v)
            elif abs(u) <= 1 and abs(v) <= 1:       # a glyph's cell ends at its box
                sdf = _bilinear(I.atlas, P.index[b, n], A, A, (u + 1) * (A / 2) - 0.5, (v + 1) * (A / 2) - 0.5, False)
                a = _finish(sdf * ((2.0 / A) * min(hx, hy)), g, sh, st, filled, al)
                if a > 0:
                    _blend(S.buf, y - ys, x, x + 1, a, cr, cg, cb)


@numba.njit(inline="always", **_JIT)
def _is_circle(P, b, n):
    hx = max(P.half[b, n, 0], 1e-6)
    return P.geom[b, n] == ELLIPSE and abs(hx - max(P.half[b, n, 1], 1e-6)) <= 1e-6 * hx


@numba.njit(inline="always", **_JIT)
def _store(buf, rows, out_u8, out_f32, b, ys):
    if out_u8.shape[0] > 0:
        _to_uint8(buf, rows, out_u8, b, ys)
    else:
        out_f32[b, :, ys:ys + rows] = buf[:, :rows]


@numba.njit(**_JIT)
def _render_scene(P, I, b, out_u8, out_f32):
    """Scene ``b`` one band of BAND rows at a time, in a small float buffer that stays in
    cache (a whole 224 px canvas is 600 KB): fill, draw the primitives clipped to the band
    in draw order, convert, next band. The dispatch stays in this loop: inlined as a
    function it measured a fifth slower."""
    H = max(out_u8.shape[2], out_f32.shape[2])
    S = _scratch(P.verts.shape[2], max(out_u8.shape[3], out_f32.shape[3]))
    for ys in range(0, H, BAND):
        ye = min(H, ys + BAND)
        _fill_background(S.buf, I, b, ys, ye)
        for k in range(P.count[b]):
            n = P.perm[b, k]
            x0, y0, x1, y1 = P.bbox[b, n, 0], max(P.bbox[b, n, 1], ys), P.bbox[b, n, 2], min(P.bbox[b, n, 3], ye)
            if x1 <= x0 or y1 <= y0:
                continue
            if P.geom[b, n] == POLYGON or P.geom[b, n] == POLYLINE:
                _draw_outline(S, P, b, n, x0, y0, x1, y1, ys)
            elif _is_circle(P, b, n):
                _draw_circle(S.buf, P, b, n, x0, y0, x1, y1, ys)
            else:
                _draw_pixels(S, P, I, b, n, x0, y0, x1, y1, ys)
        _store(S.buf, ye - ys, out_u8, out_f32, b, ys)


@numba.njit(parallel=True, **_JIT)
def _render(P, I, out_u8, out_f32):
    """Every scene of the batch into ``out_u8`` (or ``out_f32`` when ``out_u8`` is empty), one
    scene per thread. Scenes are handed to threads in small dynamic chunks (see
    ``rasterize``), so a busy core does not hold up the batch. Nothing is inlined into this
    loop: numba would hoist the per-thread allocations out of it and share them."""
    for b in numba.prange(P.count.shape[0]):
        _render_scene(P, I, b, out_u8, out_f32)


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
        ordered = True
        for n in range(1, N):
            if not key[n - 1] <= key[n]:              # NaN too: sorted as before
                ordered = False
                break
        if ordered:                                   # the usual case (draw order as inserted): no sort
            for n in range(N):
                perm[b, n] = n
        else:
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


def prepare_arrays(p: Primitives, height: int, width: int) -> Prepared:
    """:func:`prepare` on numpy arrays (or CPU tensors) in, numpy arrays out: the pixel-space
    columns computed here, the others ``p``'s own (as given)."""
    drawing_starts()
    B, N = p.valid.shape
    a = {k: np.empty(shape, dt) for k, shape, dt in (
        ("count", (B,), np.int64), ("perm", (B, N), np.int64), ("center", (B, N, 2), np.float32),
        ("half", (B, N, 2), np.float32), ("cs", (B, N, 2), np.float32), ("stroke", (B, N), np.float32),
        ("shell", (B, N), np.float32), ("bbox", (B, N, 4), np.int64))}
    with _LOCK:
        _prepare(_bool(p.valid), _i64(p.geom), _f32(p.center), _f32(p.scale), _f32(p.rotation), _f32(p.order),
                 _bool(p.fill), _f32(p.stroke), _f32(p.shell), _f32(p.bounds), height, width, a["count"],
                 a["perm"], a["center"], a["half"], a["cs"], a["stroke"], a["shell"], a["bbox"])
    return Prepared(count=a["count"], perm=a["perm"], geom=p.geom, center=a["center"], half=a["half"], cs=a["cs"],
                    color=p.color, alpha=p.alpha, fill=p.fill, stroke=a["stroke"], shell=a["shell"], verts=p.verts,
                    nverts=p.nverts, index=p.index, bbox=a["bbox"])


def prepare(p: Primitives, height: int, width: int) -> Prepared:
    """The numba twin of :func:`kernels.raster.prepare` (CPU tensors in, CPU tensors out)."""
    import torch      # only here: the kernels themselves run on numpy arrays, and tests import them without torch

    out = prepare_arrays(p, height, width)
    return out._replace(**{k: torch.from_numpy(getattr(out, k))
                           for k in ("count", "perm", "center", "half", "cs", "stroke", "shell", "bbox")})


def _f32(t) -> np.ndarray:
    """A numpy array or CPU tensor as a writable C-contiguous float32 array (no copy when it
    is one): the kernels are compiled for writable arrays, and a read-only one (a broadcast
    view) would type, and compile, another version of them."""
    return np.require(np.asarray(t), np.float32, ["C", "W"])


def _i64(t) -> np.ndarray:
    """As :func:`_f32`, int64."""
    return np.require(np.asarray(t), np.int64, ["C", "W"])


def _bool(t) -> np.ndarray:
    """As :func:`_f32`, bool."""
    return np.require(np.asarray(t), np.bool_, ["C", "W"])


class _Lease:
    """Exports a pooled buffer: an array made from it (and every slice of that array) keeps
    the lease alive, so the lease dies only when nothing can reach the buffer any more."""

    def __init__(self, buf: np.ndarray):
        self.buf = buf
        self.__array_interface__ = buf.__array_interface__


class _OutputPool:
    """Output arrays that are reused once nothing refers to them any more.

    A fresh multi-megabyte array costs a page fault per 4 KB on first touch, and faults taken
    by two rendering threads at once serialise (at 512 px, a third of a batch's time). Each
    array handed out is made over a lease on a pooled buffer; when the lease is garbage
    collected (the caller has dropped every array and tensor made from it),
    ``weakref.finalize`` returns the buffer to the free list. Keeps at most ``max_free``
    free buffers and ``max_bytes``.
    """

    def __init__(self, max_bytes: int = 256 << 20, max_free: int = 8):
        self.free: list[np.ndarray] = []
        self.max_bytes = max_bytes
        self.max_free = max_free
        self.lock = threading.RLock()            # a release may run from a collection inside get()

    def get(self, shape: tuple, dtype) -> np.ndarray:
        with self.lock:
            i = next((i for i, a in enumerate(self.free) if a.shape == shape and a.dtype == dtype), None)
            buf = self.free.pop(i) if i is not None else None
        if buf is None:
            buf = np.empty(shape, dtype)
            if buf.nbytes > self.max_bytes // 4:
                return buf                       # too large to keep
        lease = _Lease(buf)
        weakref.finalize(lease, self._release, buf)
        return np.asarray(lease)

    def _release(self, buf: np.ndarray) -> None:
        with self.lock:
            self.free.append(buf)
            while len(self.free) > self.max_free or sum(a.nbytes for a in self.free) > self.max_bytes:
                self.free.pop(0)


_POOL = _OutputPool()


def pooled_images(shape: tuple) -> np.ndarray:
    """An uninitialised uint8 array of ``shape`` from the pool that outputs come from (see
    :class:`_OutputPool`): for a caller that assembles a batch from several renders
    (``rasterize(..., out=rows of it)``)."""
    return _POOL.get(tuple(shape), np.uint8)


def rasterize(prep: Prepared, height: int, width: int, bg_color: np.ndarray, bg_image: np.ndarray | None,
              atlas: np.ndarray, sprites: np.ndarray, sprite_hw: np.ndarray, uint8: bool = True,
              out: np.ndarray | None = None) -> np.ndarray:
    """Render prepared primitives (numpy arrays or CPU tensors) over ``bg_color [B,3]`` or
    ``bg_image [B,3,H,W]`` (float32 in [0,1]).

    Returns ``[B,3,H,W]`` numpy: uint8 (rounded) when ``uint8``, else float32 in [0,1];
    with ``uint8``, ``out`` (a C-contiguous writable uint8 array of that shape, e.g. rows of
    a larger batch) is written and returned instead of a new array.
    """
    drawing_starts()
    B = prep.geom.shape[0]
    shape, none = (B, 3, height, width), (0, 3, height, width)
    if out is not None and not (uint8 and out.shape == shape and out.dtype == np.uint8 and out.flags.c_contiguous
                                and out.flags.writeable):
        raise ValueError(f"out must be a C-contiguous writable uint8 array of shape {list(shape)} (uint8 output); "
                         f"got {out.dtype} {list(out.shape)}" + ("" if uint8 else " for a float output"))
    img = np.zeros((0, 3, 1, 1), np.float32) if bg_image is None else _f32(bg_image)
    with _LOCK, numba.parallel_chunksize(CHUNK):
        if uint8:
            out_u8 = _POOL.get(shape, np.uint8) if out is None else out
            out_f32 = np.empty(none, np.float32)
        else:
            out_u8, out_f32 = np.empty(none, np.uint8), np.empty(shape, np.float32)
        prims = _Prims(_i64(prep.count), _i64(prep.perm), _i64(prep.geom), _f32(prep.center), _f32(prep.half),
                       _f32(prep.cs), _f32(prep.color), _f32(prep.alpha), _bool(prep.fill),
                       _f32(prep.stroke), _f32(prep.shell), _f32(prep.verts), _i64(prep.nverts), _i64(prep.index),
                       _i64(prep.bbox))
        _render(prims, _Images(_f32(bg_color), img, _f32(atlas), _f32(sprites), _i64(sprite_hw)),
                out_u8, out_f32)
    return out_u8 if uint8 else out_f32


NO_SPRITES = (np.zeros((0, 4, 1, 1), np.float32), np.zeros((0, 2), np.int64))   # (sprites, sprite_hw) of none


def render_arrays(p: Primitives, height: int, width: int, bg_color: np.ndarray) -> np.ndarray:
    """Primitives without sprites (numpy arrays, :class:`kernels.primitives.Primitives`)
    rendered over ``bg_color [B,3]`` float32 in [0,1]: ``[B,3,H,W]`` uint8, the pixels
    ``engine.rendering.render`` gives for them on the CPU, without torch."""
    from .glyphs import load_atlas

    return rasterize(prepare_arrays(p, height, width), height, width, bg_color, None, load_atlas().sdf, *NO_SPRITES)


_NOTE = None      # what note_before_compiling set: called once, before the first drawing


def note_before_compiling(note) -> None:
    """Have ``note()`` called once in this process, when it starts drawing (:func:`drawing_starts`),
    if the renderer's kernel is not compiled on disk then; ``None`` takes it back. A program
    announces a long first compile this way only after it has checked its input, so a refused
    command still prints its one line of error alone."""
    global _NOTE
    _NOTE = note


def drawing_starts() -> None:
    """Say that drawing starts here (the first sample drawn, :func:`prepare`, :func:`rasterize`),
    or in workers this process is about to start: the note :func:`note_before_compiling` set
    is called, at most once, if the kernel must compile first."""
    global _NOTE
    note, _NOTE = _NOTE, None
    if note is not None and compiled_on_disk() is False:
        note()


def compiled_on_disk() -> bool | None:
    """Whether the renderer's compiled kernel is in numba's on-disk cache (a process then
    draws at once; otherwise its first image waits for compilation, about a minute on two
    cores); ``None`` when the cache cannot be inspected."""
    try:
        return bool(_render._cache._cache_file._load_index())
    except Exception:           # numba's cache layout is not public: unknown rather than wrong
        return None
