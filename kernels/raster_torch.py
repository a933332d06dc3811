"""Tiled torch rasterizer: the same code on CPU and CUDA.

The canvas is cut into ``TILE x TILE`` tiles; each primitive is binned into the tiles its
bounding box touches, coverage is evaluated only for those (tile, primitive) entries, one
geometry at a time and in bounded chunks, and entries are composited per tile in draw
order, one depth level at a time across all tiles at once.
"""
from __future__ import annotations

import functools
import math
import os
import warnings

import torch
import torch.nn.functional as F

from .primitives import ELLIPSE, GLYPH, POLYGON, POLYLINE, SPRITE, Prepared
from .raster import world_vertices

TILE = 16
ENTRY_BUDGET = 1 << 14          # (tile, primitive) entries evaluated at once
ELEMENT_BUDGET = 1 << 24        # entries x pixels x vertices in one polygon evaluation
COMPILE_ENV = "PROCVIS_COMPILE"  # "1": coverage compiled into fused kernels on CUDA
FUSED_ENV = "PROCVIS_FUSED"      # "0": the tiled path on a GPU even where the fused pass could draw


def _local(dx, dy, cs):
    c, s = cs[:, 0:1], cs[:, 1:2]
    return c * dx + s * dy, -s * dx + c * dy


def _ellipse_distance(px, py, center, half, cs):
    qx, qy = _local(px - center[:, 0:1], py - center[:, 1:2], cs)
    a, b = half[:, 0:1].clamp_min(1e-6), half[:, 1:2].clamp_min(1e-6)
    k0 = torch.sqrt((qx / a) ** 2 + (qy / b) ** 2)
    k1 = torch.sqrt((qx / (a * a)) ** 2 + (qy / (b * b)) ** 2)
    return torch.where(k1 > 0, k0 * (k0 - 1.0) / k1.clamp_min(1e-12), -torch.minimum(a, b))


def _segments_distance(px, py, va, vb, closed):
    """Distance from pixels ``[E,P]`` to segments ``va -> vb`` ``[E,S,2]``; for a closed
    outline also the even-odd inside flag. Returns ``(d [E,P], inside [E,P] or None)``."""
    ax, ay = va[..., 0:1], va[..., 1:2]                       # [E,S,1]
    ex, ey = vb[..., 0:1] - ax, vb[..., 1:2] - ay
    inv = 1.0 / (ex * ex + ey * ey).clamp_min(1e-12)
    wx, wy = px[:, None, :] - ax, py[:, None, :] - ay         # [E,S,P]
    t = ((wx * ex + wy * ey) * inv).clamp(0.0, 1.0)
    dx, dy = wx - ex * t, wy - ey * t
    d = torch.sqrt((dx * dx + dy * dy).amin(1))
    if not closed:
        return d, None
    by = vb[..., 1:2]
    straddle = (ay > py[:, None, :]) != (by > py[:, None, :])
    xint = ax + (py[:, None, :] - ay) * ex / torch.where(ey == 0, torch.ones_like(ey), ey)
    crossings = (straddle & (px[:, None, :] < xint)).sum(1)
    return d, (crossings % 2) == 1


def sample_cells(images, u, v, own_hw=None, zero_outside=True):
    """Bilinear samples of ``images [E,C,h,w]`` (one image per entry) at ``u, v [E,P]``, which
    run from -1 to 1 across each image edge to edge (pixel centres at ``(2k+1)/n - 1``).
    ``own_hw [E,2]``: each image's own ``(h, w)`` when it is zero-padded to ``h x w``.
    Outside the image the samples are 0 (``zero_outside``) or the edge value. Returns
    ``[E,C,P]``."""
    if own_hw is not None:
        hw = own_hw.to(u.dtype)
        H, W = images.shape[-2:]
        u, v = (u + 1) * (hw[:, 1:2] / W) - 1, (v + 1) * (hw[:, 0:1] / H) - 1
    grid = torch.stack([u, v], -1)[:, None]                     # [E,1,P,2]
    return F.grid_sample(images, grid, mode="bilinear", padding_mode="zeros" if zero_outside else "border",
                         align_corners=False)[:, :, 0]


def _cell(px, py, q):
    """Pixels ``[E,P]`` in a glyph's or sprite's own frame, ``u, v`` in [-1, 1] across it, and
    its half sizes ``hx, hy`` ``[E,1]``."""
    qx, qy = _local(px - q["center"][:, 0:1], py - q["center"][:, 1:2], q["cs"])
    hx, hy = q["half"][:, 0:1].clamp_min(1e-6), q["half"][:, 1:2].clamp_min(1e-6)
    return qx / hx, qy / hy, hx, hy


def _coverage(kind, px, py, q: dict, atlas, sprites, sprite_hw):
    """Alpha ``[E,P]`` and premultiplied colour ``[E,P,3]`` of one geometry's entries."""
    color = q["color"]
    if kind == ELLIPSE:
        d = _ellipse_distance(px, py, q["center"], q["half"], q["cs"])
    elif kind in (POLYGON, POLYLINE):
        v = q["verts"]
        if kind == POLYGON:
            d, inside = _segments_distance(px, py, v, torch.roll(v, -1, 1), True)
            d = torch.where(inside, -d, d)
        else:
            d, _ = _segments_distance(px, py, v[:, :-1], v[:, 1:], False)
    elif kind == GLYPH:
        u, v, hx, hy = _cell(px, py, q)
        A = atlas.shape[-1]
        sdf = sample_cells(atlas[q["index"]][:, None], u, v, None, zero_outside=False)[:, 0]
        px_per_cell = (2.0 / A) * torch.minimum(hx, hy)
        outside = (u.abs() > 1) | (v.abs() > 1)
        d = torch.where(outside, torch.full_like(sdf, 1e4), sdf * px_per_cell)
    else:  # SPRITE
        u, v, _, _ = _cell(px, py, q)
        idx = q["index"]
        rgba = sample_cells(sprites[idx], u, v, sprite_hw[idx], zero_outside=True)   # [E,4,P] premultiplied
        a = rgba[:, 3] * q["alpha"][:, None]
        return a, rgba[:, :3].permute(0, 2, 1) * q["alpha"][:, None, None]
    shell = q["shell"][:, None]
    d = torch.where(shell > 0, d.abs() - shell / 2, d)
    if kind == POLYLINE:
        d = d - q["stroke"][:, None] / 2
    else:
        d = torch.where(q["fill"][:, None], d, d.abs() - q["stroke"][:, None] / 2)
    a = (0.5 - d).clamp(0.0, 1.0) * q["alpha"][:, None]
    return a, a[..., None] * color[:, None, :]


def budgets(device: torch.device) -> tuple[int, int]:
    """``(entries, elements)`` evaluated at once on ``device``: the module's fixed budgets on
    the CPU (sized for its caches), a share of the free memory on a GPU, whose throughput
    needs large launches. Each entry holds about ``4 * 24 * TILE * TILE`` bytes of colour,
    alpha and pixel coordinates; each element about 48 bytes of temporaries."""
    if device.type != "cuda":
        return ENTRY_BUDGET, ELEMENT_BUDGET
    free, _ = torch.cuda.mem_get_info(device)
    share = free // 4
    return max(ENTRY_BUDGET, share // (24 * TILE * TILE * 4)), max(ELEMENT_BUDGET, share // 48)


@functools.lru_cache(maxsize=1)
def _compiled_coverage():
    return torch.compile(_coverage, dynamic=True)


def _coverage_on(device: torch.device):
    """The coverage function for ``device``: compiled into fused kernels (one per geometry,
    any entry count) on CUDA when ``$PROCVIS_COMPILE`` is ``1``; eager otherwise. Eager
    evaluation of an outline materialises ``[entries, vertices, pixels]`` temporaries."""
    if device.type == "cuda" and os.environ.get(COMPILE_ENV, "0") == "1":
        return _compiled_coverage()
    return _coverage


_FUSED_STATE: dict = {}         # "failed": why the fused pass could not be built here (then never tried again)


def _fused(device: torch.device):
    """The module of the fused per-tile pass when it can draw on ``device`` (a GPU, or Triton
    interpreting on the CPU; Triton installed; ``$PROCVIS_FUSED`` not ``0``; not failed to
    build in this process), else ``None``. Triton is imported only then."""
    if os.environ.get(FUSED_ENV, "1") == "0" or (device.type != "cuda" and os.environ.get("TRITON_INTERPRET") != "1"):
        return None
    if "failed" in _FUSED_STATE:
        return None
    from . import raster_triton
    return raster_triton if raster_triton.triton is not None else None


def _composite_fused(fused, *args) -> bool:
    """Run the fused pass (``fused.composite(*args)``); False when its first use in this
    process fails to build (no C compiler for Triton's launcher, an unsupported GPU), after a
    one-time warning, so that the caller draws with the tiled path. Later failures raise."""
    try:
        fused.composite(*args)
    except Exception as e:                   # noqa: BLE001 (any build failure: fall back once, say why)
        if _FUSED_STATE.get("ok"):
            raise
        _FUSED_STATE["failed"] = f"{type(e).__name__}: {e}"
        warnings.warn(f"the fused render pass could not be built here ({_FUSED_STATE['failed'][:300]}); drawing "
                      f"with the tiled path (set {FUSED_ENV}=0 to skip the attempt)", RuntimeWarning, stacklevel=3)
        return False
    _FUSED_STATE["ok"] = True
    return True


def rasterize(prep: Prepared, height: int, width: int, background: torch.Tensor,
              atlas: torch.Tensor, sprites: torch.Tensor, sprite_hw: torch.Tensor) -> torch.Tensor:
    """Render prepared primitives over ``background [B,3,H,W]`` (float in [0,1]).

    The host reads the device once per batch (entries per scene, to cut the batch into
    chunks of bounded work) and, unless the fused pass of :mod:`kernels.raster_triton` draws
    the batch (a GPU with Triton, no glyphs or sprites), once per chunk (group sizes and depth
    counts); everything else is queued without waiting. Returns a float32 ``[B,3,H,W]``
    tensor in [0,1] on the primitives' device.
    """
    B, N = prep.geom.shape
    dev = prep.center.device
    T = TILE
    TY, TX = math.ceil(height / T), math.ceil(width / T)
    bg = torch.nn.functional.pad(background.float(), (0, TX * T - width, 0, TY * T - height))
    tiles = bg.reshape(B, 3, TY, T, TX, T).permute(0, 2, 4, 3, 5, 1).reshape(B * TY * TX, T * T, 3).contiguous()
    if N == 0:
        return background.float().clone()

    bbox = torch.gather(prep.bbox, 1, prep.perm[..., None].expand(B, N, 4))   # in draw order
    live = (bbox[..., 2] > bbox[..., 0]) & (bbox[..., 3] > bbox[..., 1])
    tx0, ty0 = bbox[..., 0] // T, bbox[..., 1] // T
    tx1, ty1 = (bbox[..., 2] - 1) // T, (bbox[..., 3] - 1) // T
    ar_y = torch.arange(TY, device=dev)[None, :, None, None]
    ar_x = torch.arange(TX, device=dev)[None, None, :, None]
    ly = torch.arange(T, device=dev).repeat_interleave(T).float() + 0.5
    lx = torch.arange(T, device=dev).repeat(T).float() + 0.5
    entry_budget, element_budget = budgets(dev)

    # Entries are counted per scene so that scenes can be taken in chunks of bounded work.
    spans = ((tx1 - tx0 + 1) * (ty1 - ty0 + 1)).clamp_min(0) * live
    textured = (prep.geom >= GLYPH).any().long().view(1)          # glyphs and sprites: not in the fused pass
    per_scene = torch.cat([spans.sum(1), textured]).tolist()
    fused = _fused(dev) if per_scene.pop() == 0 else None
    start = 0
    # the hit mask and its compaction hold about 40 bytes per (scene, tile, slot): bounded too
    most_scenes = max(1, element_budget // (TY * TX * N * 4))
    while start < B:
        stop, work = start, 0
        while stop < B and (stop == start or (work + per_scene[stop] <= entry_budget and stop - start < most_scenes)):
            work += per_scene[stop]
            stop += 1
        sl = slice(start, stop)
        hit = (live[sl, None, None, :] & (ar_y >= ty0[sl, None, None, :]) & (ar_y <= ty1[sl, None, None, :])
               & (ar_x >= tx0[sl, None, None, :]) & (ar_x <= tx1[sl, None, None, :]))
        if work:
            eb, ey, ex, ek = _compact(hit, work)      # sorted by tile, then draw order
            eb = eb + start
            en = prep.perm[eb, ek]                    # draw position -> slot
            if not (fused and _composite_fused(fused, prep, eb, ey, ex, en, TY, TX, tiles, start, stop, T)):
                fused = None
                _composite_entries(prep, eb, ey, ex, en, TY, TX, lx, ly, tiles, atlas, sprites, sprite_hw,
                                   element_budget)
        start = stop

    out = tiles.reshape(B, TY, TX, T, T, 3).permute(0, 5, 1, 3, 2, 4).reshape(B, 3, TY * T, TX * T)
    return out[:, :, :height, :width].contiguous()


def _compact(hit: torch.Tensor, count: int) -> tuple[torch.Tensor, ...]:
    """The indices of the ``count`` true elements of ``hit`` (row-major order, as
    ``nonzero`` gives them), one ``[count]`` tensor per dimension, found without asking the
    device how many there are: each true element is scattered to its rank, the rest to a
    spare slot."""
    flat = hit.reshape(-1)
    slot = torch.where(flat, torch.cumsum(flat, 0) - 1, count)
    where = torch.empty(count + 1, dtype=torch.long, device=hit.device)
    where.scatter_(0, slot, torch.arange(flat.numel(), device=hit.device))
    where = where[:count]
    out = []
    for n in reversed(hit.shape):
        out.append(where % n)
        where = where // n
    return tuple(reversed(out))


# Entries are evaluated in groups of one geometry; outlines also by vertex count, so that a
# triangle is not padded to a spline's length.
_VERTEX_BINS = (8, 16, 64)
_GROUPS = ([(ELLIPSE, 0)] + [(POLYGON, b) for b in range(4)] + [(POLYLINE, b) for b in range(4)]
           + [(GLYPH, 0), (SPRITE, 0)])


def _group_index(geom: torch.Tensor, nverts: torch.Tensor) -> torch.Tensor:
    """The index in ``_GROUPS`` of each entry ``[E]``."""
    b = sum((nverts > v).long() for v in _VERTEX_BINS)
    g = torch.full_like(geom, 9)
    g = torch.where(geom == ELLIPSE, 0, g)
    g = torch.where(geom == POLYGON, 1 + b, g)
    g = torch.where(geom == POLYLINE, 5 + b, g)
    return torch.where(geom == SPRITE, 10, g)


def _composite_entries(prep, eb, ey, ex, en, TY, TX, lx, ly, tiles, atlas, sprites, sprite_hw, element_budget):
    E = len(eb)
    P = lx.numel()
    N = prep.geom.shape[1]
    dev = lx.device
    px = (ex * TILE).float()[:, None] + lx[None, :]
    py = (ey * TILE).float()[:, None] + ly[None, :]
    alpha = torch.empty(E, P, device=dev)
    color = torch.empty(E, P, 3, device=dev)
    nverts = prep.nverts[eb, en]
    group = _group_index(prep.geom[eb, en], nverts)
    by_group = torch.argsort(group, stable=True)
    G = len(_GROUPS)
    sizes = torch.zeros(G, dtype=torch.long, device=dev).scatter_add_(0, group, torch.ones_like(group))
    vmax = torch.zeros(G, dtype=torch.long, device=dev).scatter_reduce(0, group, nverts.long(), "amax")

    # Depth: an entry's rank among the entries of its tile (a tile holds each primitive at
    # most once, so ranks are below N); entries of one rank touch distinct tiles.
    tile_id = (eb * TY + ey) * TX + ex
    first = torch.ones(E, dtype=torch.bool, device=dev)
    first[1:] = tile_id[1:] != tile_id[:-1]
    pos = torch.arange(E, device=dev)
    rank = pos - torch.cummax(torch.where(first, pos, 0), 0).values
    by_rank = torch.argsort(rank, stable=True)
    depth = torch.zeros(N, dtype=torch.long, device=dev).scatter_add_(0, rank, torch.ones_like(rank))

    counts = torch.cat([sizes, vmax, depth]).tolist()           # the chunk's one read of the device
    sizes, vmax, depth = counts[:G], counts[G:2 * G], counts[2 * G:]
    at = 0
    for (kind, _), n, v in zip(_GROUPS, sizes, vmax):
        if n:
            _fill(kind, by_group[at:at + n], v if kind in (POLYGON, POLYLINE) else 0, eb, en, px, py, prep,
                  alpha, color, atlas, sprites, sprite_hw, element_budget)
        at += n
    at = 0
    for n in depth:
        if n == 0:
            break
        sel = by_rank[at:at + n]
        t = tile_id[sel]
        a = alpha[sel][..., None]
        tiles[t] = tiles[t] * (1.0 - a) + color[sel]
        at += n


def _fill(kind, sel, vmax, eb, en, px, py, prep, alpha, color, atlas, sprites, sprite_hw, element_budget):
    P = px.shape[1]
    step = max(1, element_budget // (P * max(vmax, 1)))
    for i in range(0, len(sel), step):
        part = sel[i:i + step]
        b, n = eb[part], en[part]
        q = {"center": prep.center[b, n], "half": prep.half[b, n], "cs": prep.cs[b, n],
             "color": prep.color[b, n], "alpha": prep.alpha[b, n], "fill": prep.fill[b, n],
             "stroke": prep.stroke[b, n], "shell": prep.shell[b, n], "index": prep.index[b, n]}
        if vmax:
            q["verts"] = world_vertices(prep.verts[b, n, :vmax], q["center"], q["half"], q["cs"])
        a, c = _coverage_on(px.device)(kind, px[part], py[part], q, atlas, sprites, sprite_hw)
        alpha[part] = a
        color[part] = c
