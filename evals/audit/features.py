"""Nuisance statistics of a sample: numbers that describe how a picture looks without
encoding the rule it was drawn for (how much ink, how many blobs and colours, how spread
out they are). A task whose answer these numbers predict can be solved without its skill.

Every statistic is computed twice, from the rendered pixels and from the scene's
primitives, so that neither a rendering detail nor a layout detail can hide a shortcut.
Nothing here knows a family.
"""
from __future__ import annotations

import numba
import numpy as np

from engine.scene import parse_color

PIXEL_FEATURES = ("ink", "ink_r", "ink_g", "ink_b", "colours", "edges", "blobs", "blob_area", "blob_area_cv",
                  "blob_spread", "blob_nn")
SCENE_FEATURES = ("prims", "prim_size", "prim_size_cv", "prim_colours", "prim_kinds", "prim_spread", "prim_nn")
FEATURES = PIXEL_FEATURES + SCENE_FEATURES
# the statistics that state a property a rule may be about (dropped from the probe for such a rule)
CONCEPT_FEATURES = {
    "color": ("ink_r", "ink_g", "ink_b", "colours", "prim_colours"),
    # objects' sizes also set how closely they pack and how far a packed group spreads
    "size": ("ink", "edges", "blob_area", "blob_area_cv", "prim_size", "prim_size_cv", "blob_nn", "prim_nn",
             "blob_spread", "prim_spread"),
    "shape": ("ink", "edges", "blob_area", "blob_area_cv", "prim_size", "prim_size_cv", "prim_kinds"),
    "count": ("ink", "edges", "blobs", "prims", "blob_nn", "prim_nn"),
    # where objects overlap by design, their shapes and sizes decide which of them merge into
    # one blob: the blob statistics then state the shape or size
    "overlap": ("blobs", "blob_area", "blob_area_cv", "blob_spread", "blob_nn"),
    # where objects sit relative to one another (a dot inside a circle is near its centre)
    "position": ("blob_spread", "blob_nn", "prim_spread", "prim_nn"),
}
INK_THRESHOLD = 24          # a pixel is ink when a channel differs from the background by more


def background_of(image: np.ndarray) -> np.ndarray:
    """The most common colour of the border pixels of ``image`` ``[3,H,W]`` uint8 -> ``[3]``."""
    border = np.concatenate([image[:, 0, :], image[:, -1, :], image[:, :, 0], image[:, :, -1]], axis=1).T
    colours, counts = np.unique(border, axis=0, return_counts=True)
    return colours[int(counts.argmax())]


def ink_mask(image: np.ndarray, background: np.ndarray | None = None) -> np.ndarray:
    """``[H,W]`` bool: pixels that differ from the background colour by more than the threshold."""
    bg = background_of(image) if background is None else background
    return (np.abs(image.astype(np.int16) - bg.astype(np.int16)[:, None, None]).max(axis=0) > INK_THRESHOLD)


@numba.njit(cache=True)
def _find(parent, i):
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@numba.njit(cache=True)
def _label(mask):
    H, W = mask.shape
    parent = np.arange(H * W)
    for y in range(H):
        for x in range(W):
            if not mask[y, x]:
                continue
            i = y * W + x
            if x > 0 and mask[y, x - 1]:
                a, b = _find(parent, i), _find(parent, i - 1)
                parent[max(a, b)] = min(a, b)
            if y > 0 and mask[y - 1, x]:
                a, b = _find(parent, i), _find(parent, i - W)
                parent[max(a, b)] = min(a, b)
    out = np.zeros((H, W), np.int32)
    ids = np.zeros(H * W, np.int32)
    n = 0
    for y in range(H):
        for x in range(W):
            if mask[y, x]:
                r = _find(parent, y * W + x)
                if ids[r] == 0:
                    n += 1
                    ids[r] = n
                out[y, x] = ids[r]
    return out, n


def label(mask: np.ndarray) -> tuple[np.ndarray, int]:
    """4-connected components of ``mask`` ``[H,W]``: ``(labels [H,W] int32, count)``, 0 = none."""
    return _label(np.ascontiguousarray(mask, dtype=np.bool_))


def blobs(mask: np.ndarray, min_area: int = 4) -> list[tuple[float, float, int, tuple[int, int, int, int]]]:
    """Connected ink regions of at least ``min_area`` pixels: ``(cy, cx, area, (y0, x0, y1, x1))``."""
    lab, n = label(mask)
    if n == 0:
        return []
    ys, xs = np.nonzero(lab)
    ids = lab[ys, xs]
    area = np.bincount(ids, minlength=n + 1)
    cy = np.bincount(ids, ys, minlength=n + 1)
    cx = np.bincount(ids, xs, minlength=n + 1)
    y0 = np.full(n + 1, 1 << 30)
    x0 = np.full(n + 1, 1 << 30)
    y1 = np.full(n + 1, -1)
    x1 = np.full(n + 1, -1)
    np.minimum.at(y0, ids, ys)
    np.minimum.at(x0, ids, xs)
    np.maximum.at(y1, ids, ys)
    np.maximum.at(x1, ids, xs)
    return [(cy[k] / area[k], cx[k] / area[k], int(area[k]), (int(y0[k]), int(x0[k]), int(y1[k]) + 1, int(x1[k]) + 1))
            for k in range(1, n + 1) if area[k] >= min_area]


def regions(image: np.ndarray, background: np.ndarray, min_area: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """The ink regions of ``image`` ``[3,H,W]`` uint8 measured by coverage: every pixel of a
    region (its ink pixels and the fainter edge pixels around them) counts by how much of it
    is covered, its difference from the background over the largest difference around it
    (3x3), so that areas and centres do not depend on an object's contrast, nor on the colour
    of objects drawn on a backdrop that joins them into one region. Returns
    ``(areas [N] in pixels, centres [N,2] (y, x))`` of the regions of at least ``min_area`` ink pixels."""
    diff = np.abs(image.astype(np.int16) - background.astype(np.int16)[:, None, None]).max(axis=0).astype(np.float64)
    lab, n = label(diff > INK_THRESHOLD)
    if n == 0:
        return np.zeros(0), np.zeros((0, 2))
    grown = lab.copy()                         # the faint edge ring joins the region beside it
    for axis in (0, 1):
        for shift in (-1, 1):
            nb = np.roll(lab, shift, axis=axis)
            take = (grown == 0) & (nb > 0) & (diff > 0)
            grown[take] = nb[take]
    pixels = np.bincount(lab.ravel(), minlength=n + 1)
    peak = diff.copy()                         # the largest difference in each pixel's 3x3 neighbourhood
    for axis in (0, 1):
        peak = np.maximum(peak, np.maximum(np.roll(peak, 1, axis=axis), np.roll(peak, -1, axis=axis)))
    ys, xs = np.nonzero(grown)
    ids = grown[ys, xs]
    w = np.minimum(diff[ys, xs] / np.maximum(peak[ys, xs], 1.0), 1.0)
    area = np.bincount(ids, w, minlength=n + 1)
    cy = np.bincount(ids, ys * w, minlength=n + 1)
    cx = np.bincount(ids, xs * w, minlength=n + 1)
    keep = np.nonzero((pixels >= min_area) & (area > 0))[0]
    keep = keep[keep > 0]
    return area[keep], np.stack([cy[keep] / area[keep], cx[keep] / area[keep]], 1)


def _spread_and_nn(points: np.ndarray) -> tuple[float, float]:
    """RMS distance of ``points`` ``[N,2]`` from their mean, and mean nearest-neighbour distance."""
    if len(points) < 2:
        return 0.0, 0.0
    spread = float(np.sqrt(((points - points.mean(0)) ** 2).sum(1).mean()))
    d = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    return spread, float(d.min(1).mean())


def pixel_features(image) -> np.ndarray:
    """:data:`PIXEL_FEATURES` of one rendered panel ``[3,H,W]`` uint8 (tensor or array);
    lengths are in units of the panel width."""
    im = np.asarray(image)
    W = im.shape[-1]
    bg = background_of(im)
    mask = ink_mask(im, bg)
    areas, centres = regions(im, bg)
    ink = float(areas.sum() / mask.size)
    flat = np.ones_like(mask)                    # inside a region of one colour: not an anti-aliased edge
    for axis in (1, 2):
        for shift in (-1, 1):
            flat &= (np.roll(im, shift, axis=axis) == im).all(0)
    # colours from the flat insides only, so that small objects (more edge than inside) do
    # not shift them; a colour counts from a few pixels on, however large the rest
    inside = mask & flat if (mask & flat).any() else mask
    px = im[:, inside].astype(np.float64)
    q = (im[:, inside] // 64).astype(np.int32)
    codes = q[0] * 16 + q[1] * 4 + q[2]
    counts = np.bincount(codes, minlength=64)
    present = counts >= 3                      # a colour counts from 3 flat pixels, however large the rest
    colours = int(present.sum())
    # the mean of the colours present, each counted once: how much of each there is (a
    # backdrop against small objects) is an amount, not a colour
    sums = np.stack([np.bincount(codes, px[c], minlength=64) for c in range(3)], 1)
    mean = (sums[present] / counts[present, None]).mean(0) / 255 if present.any() else np.zeros(3)
    # outline length from the ink mask, not from grey gradients: a colour as light as the
    # background must not count as less outline
    edges = float(((mask[1:, :-1] != mask[:-1, :-1]) | (mask[:-1, 1:] != mask[:-1, :-1])).mean())
    areas, centres = areas / W ** 2, centres / W
    spread, nn = _spread_and_nn(centres)
    area_mean = float(areas.mean()) if len(areas) else 0.0
    cv = float(areas.std() / area_mean) if len(areas) and area_mean > 0 else 0.0
    return np.array([ink, *mean, colours, edges, len(areas), area_mean, cv, spread, nn], float)


def scene_features(scene) -> np.ndarray:
    """:data:`SCENE_FEATURES` of one scene: primitive count, mean size and its spread, distinct
    colours and kinds, spread of centres and mean nearest-neighbour distance (scene units).
    Primitives painted in the background colour are cut-outs, not things drawn: they add no
    ink, and what they take away the pixel statistics see, so they are left out here."""
    hole = parse_color(scene.background)
    prims = [p for p in scene.primitives if not (p.fill and p.alpha >= 1.0 and p.color == hole)]
    if not prims:
        return np.zeros(len(SCENE_FEATURES))
    size = np.array([(p.scale[0] + p.scale[1]) / 2 for p in prims], float)
    centres = np.array([p.center for p in prims], float)
    spread, nn = _spread_and_nn(centres)
    colours = len({tuple(round(c, 2) for c in p.color) for p in prims})
    kinds = len({p.kind for p in prims})
    mean = float(size.mean())
    return np.array([len(prims), mean, float(size.std() / mean) if mean > 0 else 0.0, colours, kinds, spread, nn],
                    float)


def concept_columns(properties, panels: int) -> np.ndarray:
    """``[panels * len(FEATURES)]`` bool: the columns of :func:`sample_features` that state one
    of ``properties`` (keys of :data:`CONCEPT_FEATURES`)."""
    unknown = set(properties) - set(CONCEPT_FEATURES)
    if unknown:
        raise ValueError(f"unknown rule properties {sorted(unknown)}; allowed: {', '.join(CONCEPT_FEATURES)}")
    names = {n for p in properties for n in CONCEPT_FEATURES[p]}
    return np.tile(np.array([n in names for n in FEATURES]), panels)


def sample_features(sample, images) -> np.ndarray:
    """The nuisance statistics of the panels a sample's prompt shows, concatenated in panel
    order (pixel statistics from ``images``, the rendered panels, then scene statistics)."""
    parts = []
    for k in sample.shown:
        parts.append(pixel_features(images[k]))
        parts.append(scene_features(sample.panels[k]))
    return np.concatenate(parts)
