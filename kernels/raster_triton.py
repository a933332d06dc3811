"""One fused pass per tile for the torch rasterizer on a GPU: a program per ``TILE x TILE``
tile walks the tile's (primitive) entries in draw order, evaluates each one's coverage for
the tile's pixels and composites it in registers, then writes the tile once.

The tiled torch path (:mod:`kernels.raster_torch`) bins entries the same way but evaluates
coverage one geometry at a time into ``[entries, pixels]`` temporaries and composites one
depth level at a time; this kernel keeps every intermediate in registers. It draws
ellipses, polygons and polylines with the same formulas; a batch holding glyphs or sprites
takes the tiled path. Needs Triton (shipped with CUDA builds of torch); with
``TRITON_INTERPRET=1`` it also runs on CPU tensors, which is how the CPU tests check it.
"""
from __future__ import annotations

import contextlib

import torch

try:
    import triton
    import triton.language as tl
except ImportError:                       # CPU builds of torch ship without Triton
    triton = None


if triton is not None:
    @triton.jit
    def _segments(px, py, cx, cy, hx, hy, c, s, vptr, nv, closed: tl.constexpr):
        """Squared distance from the pixels to the outline's segments, and (closed) the number
        of its edges a ray to the left of each pixel crosses."""
        d2 = px * 0.0 + 1e30
        cross = (px * 0.0).to(tl.int32)
        last = nv - 1
        if closed:
            last = nv
        for i in range(0, last):
            k = i + 1
            if closed:
                k = k % nv
            lx0, ly0 = tl.load(vptr + 2 * i) * hx, tl.load(vptr + 2 * i + 1) * hy
            lx1, ly1 = tl.load(vptr + 2 * k) * hx, tl.load(vptr + 2 * k + 1) * hy
            ax, ay = cx + (c * lx0 - s * ly0), cy + (s * lx0 + c * ly0)
            bx, by = cx + (c * lx1 - s * ly1), cy + (s * lx1 + c * ly1)
            ex, ey = bx - ax, by - ay
            inv = 1.0 / tl.maximum(ex * ex + ey * ey, 1e-12)
            wx, wy = px - ax, py - ay
            t = tl.minimum(tl.maximum((wx * ex + wy * ey) * inv, 0.0), 1.0)
            dx, dy = wx - ex * t, wy - ey * t
            d2 = tl.minimum(d2, dx * dx + dy * dy)
            if closed:
                straddle = (ay > py) != (by > py)
                xint = ax + (py - ay) * ex / tl.where(ey == 0.0, 1.0, ey)
                cross += (straddle & (px < xint)).to(tl.int32)
        return d2, cross

    @triton.jit
    def _ellipse(px, py, cx, cy, hx, hy, c, s):
        """Signed distance (approximate, exact on the outline) from the pixels to an ellipse."""
        dx, dy = px - cx, py - cy
        qx, qy = c * dx + s * dy, -s * dx + c * dy
        a, b = tl.maximum(hx, 1e-6), tl.maximum(hy, 1e-6)
        k0 = tl.sqrt((qx / a) * (qx / a) + (qy / b) * (qy / b))
        k1 = tl.sqrt((qx / (a * a)) * (qx / (a * a)) + (qy / (b * b)) * (qy / (b * b)))
        return tl.where(k1 > 0, k0 * (k0 - 1.0) / tl.maximum(k1, 1e-12), -tl.minimum(a, b))

    # the scene, tile and vertex counts vary from batch to batch: one compiled kernel for all
    @triton.jit(do_not_specialize=["tile0", "TX", "TY", "N", "V"])
    def _tiles_kernel(tiles, starts, eb, en, tile0, TX, TY, N, V, geom, center, half, cs, color, alpha, fill,
                      stroke, shell, verts, nverts, T: tl.constexpr):
        pid = tl.program_id(0)
        first = tl.load(starts + pid)
        stop = tl.load(starts + pid + 1)
        if stop > first:
            t = tile0 + pid
            tx, ty = t % TX, (t // TX) % TY
            p = tl.arange(0, T * T)
            px = (tx * T + p % T).to(tl.float32) + 0.5
            py = (ty * T + p // T).to(tl.float32) + 0.5
            out = tiles + t.to(tl.int64) * (T * T * 3) + p * 3
            r, g, b = tl.load(out), tl.load(out + 1), tl.load(out + 2)
            for k in range(first, stop):
                j = tl.load(eb + k) * N + tl.load(en + k)
                kind = tl.load(geom + j)
                cx, cy = tl.load(center + 2 * j), tl.load(center + 2 * j + 1)
                hx, hy = tl.load(half + 2 * j), tl.load(half + 2 * j + 1)
                c, s = tl.load(cs + 2 * j), tl.load(cs + 2 * j + 1)
                if kind == 0:
                    d = _ellipse(px, py, cx, cy, hx, hy, c, s)
                elif kind == 1:
                    d2, cross = _segments(px, py, cx, cy, hx, hy, c, s, verts + j * V * 2, tl.load(nverts + j), True)
                    d = tl.sqrt(d2)
                    d = tl.where((cross % 2) == 1, -d, d)
                else:
                    d2, cross = _segments(px, py, cx, cy, hx, hy, c, s, verts + j * V * 2, tl.load(nverts + j), False)
                    d = tl.sqrt(d2)
                sh = tl.load(shell + j)
                d = tl.where(sh > 0, tl.abs(d) - sh / 2, d)
                half_stroke = tl.load(stroke + j) / 2
                if kind == 2:
                    d = d - half_stroke
                else:
                    d = tl.where(tl.load(fill + j) != 0, d, tl.abs(d) - half_stroke)
                a = tl.minimum(tl.maximum(0.5 - d, 0.0), 1.0) * tl.load(alpha + j)
                r = r * (1.0 - a) + a * tl.load(color + 3 * j)
                g = g * (1.0 - a) + a * tl.load(color + 3 * j + 1)
                b = b * (1.0 - a) + a * tl.load(color + 3 * j + 2)
            tl.store(out, r)
            tl.store(out + 1, g)
            tl.store(out + 2, b)


def composite(prep, eb: torch.Tensor, ey: torch.Tensor, ex: torch.Tensor, en: torch.Tensor, TY: int, TX: int,
              tiles: torch.Tensor, first_scene: int, stop_scene: int, tile: int) -> None:
    """Composite the entries ``eb, ey, ex, en`` ``[E]`` (sorted by tile, then draw order; scene,
    tile row and column, slot) of scenes ``first_scene..stop_scene-1`` into ``tiles``
    ``[B*TY*TX, tile*tile, 3]`` (float, modified in place). Ellipses, polygons and polylines only."""
    dev = tiles.device
    t0, t1 = first_scene * TY * TX, stop_scene * TY * TX
    tile_id = (eb * TY + ey) * TX + ex
    starts = torch.searchsorted(tile_id, torch.arange(t0, t1 + 1, device=dev))
    B, N = prep.geom.shape
    V = prep.verts.shape[2]
    with torch.cuda.device(dev) if dev.type == "cuda" else contextlib.nullcontext():   # launch on the tensors' GPU
        _tiles_kernel[(t1 - t0,)](
            tiles, starts, eb.contiguous(), en.contiguous(), t0, TX, TY, N, V, prep.geom.contiguous(),
            prep.center.contiguous(), prep.half.contiguous(), prep.cs.contiguous(), prep.color.contiguous(),
            prep.alpha.contiguous(), prep.fill.to(torch.int32), prep.stroke.contiguous(), prep.shell.contiguous(),
            prep.verts.contiguous(), prep.nverts.contiguous(), T=tile)
