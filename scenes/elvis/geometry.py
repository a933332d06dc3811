"""Placement geometry for ELVIS layouts (scene units, y down, angles counter-clockwise on screen)."""
from __future__ import annotations

import math

import numpy as np

from engine.placement import PlacementError
from kernels import outline_stats as ks
from kernels.clearance import place_run

TRIES = 400
SMALL = 32                 # candidates in a disc's first draw


def place(rng: np.random.Generator, radii, sampler, gap: float, fixed=(), tries: int = TRIES) -> np.ndarray:
    """Centres for discs of ``radii`` ``(K,)``; ``sampler(rng, n, r)`` proposes ``n``
    candidate centres ``(n, 2)`` for a disc of radius ``r``. Discs stay ``gap`` apart from each
    other and from the discs ``fixed`` ``[(x, y, r), ...]``. Larger discs go first; each disc
    takes the first valid candidate of a small draw (drawn for all discs of its radius at
    once), then of a large one. Raises ``PlacementError``."""
    r = np.asarray(radii, dtype=np.float64)
    rl = r.tolist()
    if not all(map(math.isfinite, rl)):
        raise ValueError(f"radii must be finite, got {rl}")
    placed = np.empty((len(fixed) + len(rl), 3))
    m = len(fixed)
    if m:
        placed[:m] = np.asarray(fixed, dtype=np.float64).reshape(m, 3)
    out = np.zeros((len(rl), 2))
    # ``np.argsort(-r, kind="stable")`` (a stable sort; radii are finite): one radius is a run of it
    ol = sorted(range(len(rl)), key=lambda i: -rl[i])
    order = np.array(ol, dtype=np.intp)
    start, g = 0, float(gap)
    while start < len(rl):
        rad, rad_np = rl[ol[start]], r[ol[start]]          # the sampler gets numpy's scalar, as before
        same = rl.count(rad)
        run = order[start:start + same]
        blocks = np.ascontiguousarray(sampler(rng, SMALL * same, rad_np).reshape(same, SMALL, 2))
        j = 0
        while True:
            done = place_run(blocks[j:], placed, m, rad, g, run[j:], out)
            j, m = j + done, m + done
            if j == same:
                break
            large = np.ascontiguousarray(sampler(rng, tries, rad_np).reshape(1, -1, 2))   # disc run[j]: a large draw
            if not place_run(large, placed, m, rad, g, run[j:j + 1], out):
                raise PlacementError(f"could not place {len(r)} discs with gap {gap}")
            j, m = j + 1, m + 1
        start += same
    return out


def in_box(x0, y0, x1, y1):
    """Sampler of centres keeping the whole disc inside the box."""
    def sample(rng, n, r):
        lx, ly, hx, hy = float(x0 + r), float(y0 + r), float(x1 - r), float(y1 - r)
        if hx < lx or hy < ly:
            raise PlacementError(f"radius {r:.3f} does not fit in ({x0}, {y0}, {x1}, {y1})")
        return ks.box_points(rng.random((n, 2)), lx, ly, hx - lx, hy - ly)    # ``lo + u * (hi - lo)``
    return sample


def in_disc(cx, cy, radius, inner: float = 0.0, a0: float = 0.0, a1: float = 360.0):
    """Sampler of centres keeping the disc inside the annular sector between radii ``inner``
    and ``radius`` and angles ``a0..a1`` (degrees) around ``(cx, cy)``."""
    def sample(rng, n, r):
        lo, hi = inner + r, radius - r
        if hi < lo:
            raise PlacementError(f"radius {r:.3f} does not fit in a ring {inner:.3f}..{radius:.3f}")
        # rho = sqrt(lo ** 2 + u * (hi ** 2 - lo ** 2)); the whole disc kept inside the angular
        # range: pad = degrees(arcsin(clip(r / max(rho, 1e-9), 0, 1))), angles a0 + pad + u' *
        # max(a1 - a0 - 2 * pad, 0); the trigonometry stays numpy's, whose last bits are its own
        rho, sine = ks.ring_radii(rng.random(n), lo ** 2, hi ** 2 - lo ** 2, r)
        ang = ks.sector_radians(np.arcsin(sine, out=sine), rng.random(n), a0, a1 - a0)   # degrees/radians inside
        return ks.polar_points(cx, cy, rho, np.cos(ang), np.sin(ang))
    return sample


def mst_margin(points: np.ndarray, k: int) -> float:
    """Single-linkage separability of ``points`` into ``k`` clusters: the shortest of the
    ``k - 1`` longest minimum-spanning-tree edges over the longest remaining edge
    (large when there are exactly ``k`` well separated clusters)."""
    return mst_margin_each(points, (k,))[0]


def mst_margin_each(points: np.ndarray, counts) -> list[float]:
    """:func:`mst_margin` of ``points`` for each ``k`` of ``counts``, the tree built once."""
    p = np.asarray(points, dtype=np.float64)
    n, e, out = len(p), None, []
    for k in counts:
        if k <= 1 or n <= k:
            out.append(0.0)
            continue
        if e is None:
            e = np.sort(ks.mst_edges(p))
        out.append(float(e[-(k - 1)] / max(e[-k], 1e-9)))
    return out


def resample(curve: np.ndarray, n: int, start: float = 0.0) -> np.ndarray:
    """``n`` points equally spaced by arc length along the polyline ``curve`` ``(M, 2)``,
    the first ``start`` (arc length) from its beginning, the last at its end. ``(n, 2)``."""
    length = arc_length(curve)
    return at_arc(curve, np.linspace(start, length, n) if n > 1 else np.array([length / 2]))


def at_arc(curve: np.ndarray, t) -> np.ndarray:
    """The points of the polyline ``curve`` ``(M, 2)`` at arc lengths ``t`` ``(n,)``. ``(n, 2)``."""
    s = _arcs(curve)
    t = np.asarray(t, dtype=np.float64)
    return np.stack([np.interp(t, s, curve[:, 0]), np.interp(t, s, curve[:, 1])], 1)


def arc_of(curve: np.ndarray, point) -> float:
    """The arc length along ``curve`` ``(M, 2)`` of its vertex nearest ``point``."""
    s = _arcs(curve)
    return float(s[int(np.hypot(*(curve - np.asarray(point)).T).argmin())])


def arc_length(curve: np.ndarray) -> float:
    """The length of the polyline ``curve`` ``(M, 2)``."""
    return float(segment_lengths(curve).sum())


def segment_lengths(curve: np.ndarray) -> np.ndarray:
    """The lengths of the segments of ``curve`` ``(M, 2)`` (``np.diff``'s differences). ``(M - 1,)``."""
    c = np.asarray(curve)
    d = c[1:] - c[:-1]
    return np.hypot(d[:, 0], d[:, 1])


def _arcs(curve: np.ndarray) -> np.ndarray:
    """The arc length at each vertex of ``curve`` ``(M, 2)``, from 0. ``(M,)``."""
    steps = segment_lengths(curve)
    s = np.empty(len(steps) + 1)
    s[0] = 0.0
    np.cumsum(steps, out=s[1:])
    return s


def reflect(points, center, angle_deg: float) -> np.ndarray:
    """Mirror ``points`` ``(K, 2)`` across the line through ``center`` at ``angle_deg``."""
    p = np.asarray(points, dtype=np.float64) - center
    a = math.radians(angle_deg)
    u = np.array([math.cos(a), -math.sin(a)])            # direction on screen (y down)
    along = p @ u
    return center + 2 * along[:, None] * u[None, :] - p


def rotate(points, center, angle_deg: float) -> np.ndarray:
    """Rotate ``points`` ``(K, 2)`` counter-clockwise on screen by ``angle_deg`` about ``center``."""
    p = np.asarray(points, dtype=np.float64)
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    mid = np.asarray(center, dtype=np.float64)
    if p.ndim == 2 and p.shape[1] == 2 and mid.shape == (2,):
        return ks.rotated(p, mid[0], mid[1], c, s)
    p = p - center
    return center + np.stack([c * p[:, 0] + s * p[:, 1], -s * p[:, 0] + c * p[:, 1]], 1)


def heading(src, dst) -> float:
    """Screen angle (degrees, counter-clockwise, 0 = right) from ``src`` towards ``dst``."""
    return math.degrees(math.atan2(-(dst[1] - src[1]), dst[0] - src[0])) % 360.0


def outline(kind: str, center, radius: float, rotation: float, n: int) -> np.ndarray:
    """``n`` points on the outline of a ``kind`` (``triangle``, ``square`` or ``circle``) of
    circumradius ``radius``: every corner, the rest spread along the sides as evenly as
    possible (the circle: equal spacing). ``(n, 2)``."""
    c = np.asarray(center, dtype=np.float64)
    if kind == "circle":
        ang = np.radians(rotation + 360.0 * np.arange(n) / n)
        return np.stack([c[0] + radius * np.cos(ang), c[1] - radius * np.sin(ang)], 1)
    sides = {"triangle": 3, "square": 4}[kind]
    start = 90.0 if sides == 3 else 45.0
    ang = np.radians(rotation + start + 360.0 * np.arange(sides) / sides)
    corners = np.stack([c[0] + radius * np.cos(ang), c[1] - radius * np.sin(ang)], 1)
    extra = n - sides
    per = [extra // sides + (1 if i < extra % sides else 0) for i in range(sides)]
    xy = corners.tolist()              # plain floats: the same double operations, less overhead
    pts = []
    for i in range(sides):
        (ax, ay), (bx, by) = xy[i], xy[(i + 1) % sides]
        pts.append((ax, ay))
        for j in range(per[i]):
            t = (j + 1) / (per[i] + 1)
            pts.append((ax * (1 - t) + bx * t, ay * (1 - t) + by * t))
    return np.array(pts)


def outline_distance(kind: str, center, radius: float, rotation: float, points) -> np.ndarray:
    """Distance of each of ``points`` to the ``kind`` outline (as in :func:`outline`)."""
    p = np.asarray(points, dtype=np.float64)
    c = np.asarray(center, dtype=np.float64)
    if kind == "circle":
        return np.abs(np.hypot(*(p - c).T) - radius)
    sides = {"triangle": 3, "square": 4}[kind]
    start = 90.0 if sides == 3 else 45.0
    ang = np.radians(rotation + start + 360.0 * np.arange(sides) / sides)
    corners = np.stack([c[0] + radius * np.cos(ang), c[1] - radius * np.sin(ang)], 1)
    best = np.full(len(p), np.inf)
    for i in range(sides):
        a, b = corners[i], corners[(i + 1) % sides]
        ab = b - a
        t = np.clip(((p - a) @ ab) / (ab @ ab), 0, 1)
        best = np.minimum(best, np.hypot(*(p - (a + t[:, None] * ab)).T))
    return best
