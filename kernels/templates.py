"""Polygon outlines of the named shapes, in local unit coordinates.

Every template is an ``(V, 2)`` float64 array of vertices in order, in a frame where
``x`` points right and ``y`` points *down* (image convention), centred on the origin and
fitting the box ``[-1, 1]^2`` (so a primitive's ``scale`` is its half-extent).
Curved outlines (heart, spade, club, arcs) are sampled finely enough that the
polygon deviates from the true curve by well under 0.1 px at 224 px.
"""
from __future__ import annotations

import functools
import math

import numpy as np

ARC_SEGMENTS = 48  # segments on a full turn for sampled curves


def _frozen(fn):
    """Cache a template builder and hand out read-only arrays, so equal shapes share one
    array (collation fills each distinct array once per batch)."""
    @functools.lru_cache(maxsize=4096)
    def cached(*args):
        out = fn(*args)
        out.setflags(write=False)
        return out

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs:
            return fn(*args, **kwargs)
        return cached(*args)
    return wrapper


@_frozen
def regular_polygon(sides: int) -> np.ndarray:
    """Regular ``sides``-gon with a vertex pointing up, circumradius 1. Returns ``(sides, 2)``."""
    if sides < 3:
        raise ValueError(f"a regular polygon needs at least 3 sides, got {sides}")
    a = -np.pi / 2 + 2 * np.pi * np.arange(sides) / sides
    return np.stack([np.cos(a), np.sin(a)], 1)


@_frozen
def star(points: int = 5, inner: float = 0.45) -> np.ndarray:
    """Star with ``points`` tips (one up), tip radius 1 and valley radius ``inner``. Returns ``(2*points, 2)``."""
    if points < 3 or not (0.0 < inner < 1.0):
        raise ValueError(f"a star needs points >= 3 and 0 < inner < 1, got points={points}, inner={inner}")
    a = -np.pi / 2 + np.pi * np.arange(2 * points) / points
    r = np.where(np.arange(2 * points) % 2 == 0, 1.0, inner)
    return np.stack([r * np.cos(a), r * np.sin(a)], 1)


@_frozen
def plus(thickness: float = 0.38) -> np.ndarray:
    """Plus sign (+) with arm ``thickness`` as a fraction of the full width. Returns ``(12, 2)``."""
    t = thickness
    return np.array([[-t, -1], [t, -1], [t, -t], [1, -t], [1, t], [t, t], [t, 1], [-t, 1],
                     [-t, t], [-1, t], [-1, -t], [-t, -t]], dtype=np.float64)


@_frozen
def cross(thickness: float = 0.38) -> np.ndarray:
    """Cross (x): the plus sign turned by 45 degrees and rescaled to fill the unit box. Returns ``(12, 2)``."""
    p = plus(thickness)
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    q = p @ np.array([[c, s], [-s, c]])
    return q / np.abs(q).max()


@_frozen
def diamond(width: float = 0.7) -> np.ndarray:
    """Rhombus, taller than wide (``width`` is the half-width). Returns ``(4, 2)``."""
    return np.array([[0, -1], [width, 0], [0, 1], [-width, 0]], dtype=np.float64)


@_frozen
def rectangle() -> np.ndarray:
    """Axis-aligned unit box ``[-1, 1]^2``. Returns ``(4, 2)``."""
    return np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], dtype=np.float64)


def _normalise(v: np.ndarray) -> np.ndarray:
    lo, hi = v.min(0), v.max(0)
    centre = (lo + hi) / 2
    return (v - centre) / ((hi - lo).max() / 2)


def _heart_curve(n: int) -> np.ndarray:
    # The classic heart curve, point down in image coordinates (y down).
    t = np.linspace(0, 2 * np.pi, n, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    return np.stack([x, y], 1)


@functools.lru_cache(maxsize=None)
def heart() -> np.ndarray:
    """Heart, point down, lobes up. Returns ``(64, 2)``."""
    out = _normalise(_heart_curve(64))
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=None)
def spade() -> np.ndarray:
    """Spade: an inverted heart (point up) with a flared stem at the bottom. Returns ``(V, 2)``."""
    h = _heart_curve(96)
    h[:, 1] = -h[:, 1]  # point up; the cusp between the lobes (t=0) is now at the bottom
    cusp_y = h[0, 1]
    # Leave the curve where it is 1 unit from the cusp on either side and close it through
    # the stem's feet; the stem edges are steeper than the lobes' inner edges, so the
    # outline never crosses itself.
    right = int(np.argmax(h[:, 0] >= 1.0))
    left = len(h) - int(np.argmax(h[::-1, 0] <= -1.0)) - 1
    feet = np.array([[-3.5, cusp_y + 12.0], [3.5, cusp_y + 12.0]])
    out = _normalise(np.concatenate([h[right:left + 1], feet]))
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=None)
def club() -> np.ndarray:
    """Club: three overlapping discs and a flared stem, as one outline. Returns ``(V, 2)``."""
    # The union of the discs is star-shaped about the origin (inside all three discs), so
    # one far intersection per ray from the origin traces its outline.
    discs = np.array([[0.0, -0.42, 0.40], [-0.44, 0.14, 0.40], [0.44, 0.14, 0.40]])
    ang = np.linspace(0, 2 * np.pi, 96, endpoint=False)
    d = np.stack([np.cos(ang), np.sin(ang)], 1)
    rmax = np.zeros(len(ang))
    for cx, cy, r in discs:
        b = -(d * np.array([cx, cy])).sum(1)
        disc = b * b - (cx * cx + cy * cy - r * r)
        rmax = np.maximum(rmax, np.where(disc >= 0, -b + np.sqrt(np.maximum(disc, 0.0)), 0.0))
    pts = d * rmax[:, None]
    # Rays pointing down (y grows) between the two lower discs give way to the stem.
    idx = np.nonzero((ang > np.deg2rad(70)) & (ang < np.deg2rad(110)))[0]
    stem = np.array([[0.10, 0.30], [0.30, 0.95], [-0.30, 0.95], [-0.10, 0.30]])
    out = _normalise(np.concatenate([pts[: idx[0]], stem, pts[idx[-1] + 1:]]))
    out.setflags(write=False)
    return out


@_frozen
def sector(start_deg: float, end_deg: float) -> np.ndarray:
    """Disc sector (pac-man) of radius 1 from ``start_deg`` to ``end_deg``, counter-clockwise on
    screen, angle 0 pointing right. The centre is a vertex unless the sector is a full disc.
    Returns ``(V, 2)`` with the arc sampled at ``ARC_SEGMENTS`` per turn or finer."""
    span = (end_deg - start_deg) % 360.0
    if span == 0.0:
        span = 360.0
    n = max(2, int(np.ceil(ARC_SEGMENTS * span / 360.0)) + 1)
    a = np.deg2rad(start_deg + np.linspace(0.0, span, n))
    arc = np.stack([np.cos(a), -np.sin(a)], 1)  # y down: counter-clockwise on screen
    if span >= 360.0:
        return arc[:-1]
    return np.concatenate([[[0.0, 0.0]], arc])


@_frozen
def arrow(length: float, width: float, head_length: float, head_width: float) -> np.ndarray:
    """Arrow pointing along +x from ``(-length/2, 0)`` to ``(length/2, 0)`` in absolute units
    (not normalised). Returns ``(7, 2)``."""
    hl = min(head_length, length)
    x0, x1, xh = -length / 2, length / 2, length / 2 - hl
    w, hw = width / 2, head_width / 2
    return np.array([[x0, -w], [xh, -w], [xh, -hw], [x1, 0.0], [xh, hw], [xh, w], [x0, w]])


def catmull_rom(points: np.ndarray, samples_per_segment: int = 12) -> np.ndarray:
    """Centripetal Catmull-Rom spline through ``points`` ``(K, 2)``; returns ``(M, 2)`` samples
    that pass through every control point (``M = (K-1)*samples_per_segment + 1``)."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 2 or len(p) < 2:
        raise ValueError(f"a spline needs at least 2 control points of shape (K, 2), got shape {p.shape}")
    if len(p) == 2:
        t = np.linspace(0, 1, samples_per_segment + 1)[:, None]
        return p[0] * (1 - t) + p[1] * t
    ext = np.concatenate([2 * p[:1] - p[1:2], p, 2 * p[-1:] - p[-2:-1]])
    # ``np.linalg.norm(d)`` is ``sqrt(d.dot(d))`` (numpy's dot: its summation is its own);
    # ``** 0.5`` of a plain float is the C library's pow, as for numpy's scalar
    step = [max(math.sqrt(d.dot(d)), 1e-9) ** 0.5 for d in ext[1:] - ext[:-1]]
    return _compiled_spline()(ext, np.array(step), samples_per_segment)


@functools.lru_cache(maxsize=1)
def _compiled_spline():
    """:func:`_spline_samples` compiled, on first use (describing a scene needs no compiler):
    cached on disk where numba finds a writable cache, else compiled for this process only."""
    import numba

    options = dict(nogil=True, fastmath=False, error_model="numpy")   # IEEE division, as numpy's
    try:
        return numba.njit(cache=True, **options)(_spline_samples)
    except RuntimeError:                    # no writable cache location (a read-only install)
        return numba.njit(**options)(_spline_samples)


def _spline_samples(ext: np.ndarray, step: np.ndarray, n: int) -> np.ndarray:
    """The samples of :func:`catmull_rom` through ``ext[1:-1]`` (``ext``: the control points
    with one mirrored point added at each end; ``step[i]``: the parameter step from ``ext[i]``
    to ``ext[i + 1]``), each value by the same floating-point operations, in the same order,
    as the numpy expression over every segment at once. Returns ``((len(ext) - 3) * n + 1, 2)``."""
    segments = ext.shape[0] - 3
    out = np.empty((segments * n + 1, 2))
    for s in range(segments):
        t0 = 0.0
        t1 = t0 + step[s]
        t2 = t1 + step[s + 1]
        t3 = t2 + step[s + 2]
        delta = t2 - t1
        dt = delta / n
        for k in range(n + 1 if s == segments - 1 else n):     # a segment's end is the next one's start
            if k == n:
                t = t2
            elif dt == 0:                                       # ``np.linspace``'s zero-step path
                t = k / n * delta + t1
            else:
                t = k * dt + t1
            for d in range(2):
                p0, p1, p2, p3 = ext[s, d], ext[s + 1, d], ext[s + 2, d], ext[s + 3, d]
                a1 = (t1 - t) / (t1 - t0) * p0 + (t - t0) / (t1 - t0) * p1
                a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
                a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
                b1 = (t2 - t) / (t2 - t0) * a1 + (t - t0) / (t2 - t0) * a2
                b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
                out[s * n + k, d] = (t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2
    return out
