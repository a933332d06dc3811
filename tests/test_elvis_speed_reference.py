"""The compiled ELVIS layout statistics (``kernels.outline_stats``) and the faster layout
helpers give bit for bit what the plain numpy expressions they replaced give, on random
inputs and on edge cases (discs touching exactly at the gap, two points, ties, duplicates)."""
import math

import numpy as np
import pytest

from kernels import outline_stats as ks
from scenes.elvis import geometry as geo
from scenes.elvis import layouts


def _dist(c, b=None):
    b = c if b is None else b
    return np.hypot(c[:, None, 0] - b[None, :, 0], c[:, None, 1] - b[None, :, 1])


def _ref_nearest(c):
    d = _dist(c)
    np.fill_diagonal(d, np.inf)
    return d.min(1)


def _ref_apart(c, r, gap):
    d = _dist(c)
    np.fill_diagonal(d, np.inf)
    return bool((d >= r[:, None] + r[None, :] + gap).all())


def _ref_inside(c, r, lo, hi):
    return not ((c - r[:, None] < lo).any() or (c + r[:, None] > hi).any())


def _ref_spread(c):
    return float(np.sqrt(((c - c.mean(0)) ** 2).sum(1).mean()))


def _ref_touch(c, r, curve_of, twins, share, gap):
    d = _dist(c)
    np.fill_diagonal(d, np.inf)
    reach = r[:, None] + r[None, :]
    paired = np.zeros_like(d, dtype=bool)
    for t, o in twins.items():
        paired |= np.isin(curve_of, [t, o])[:, None] & np.isin(curve_of, [t, o])[None, :] & \
            (curve_of[:, None] != curve_of[None, :])
    return bool(np.where(paired, d < share * reach, d < reach + gap).any()), (d < reach).any(1)


def _points(rng, n):
    """Random centres: spread, clustered, rounded (ties and duplicates) or far off the canvas."""
    kind = int(rng.integers(4))
    c = rng.random((n, 2)) * 10.0 ** rng.uniform(-2, 0)
    if kind == 1:
        c = np.round(c, 2)
    elif kind == 2:
        c = c[rng.integers(0, n, n)]
    elif kind == 3:
        c = c * 3 - 1
    return np.ascontiguousarray(c)


def _cases(seed, count=400, largest=70):
    rng = np.random.default_rng(seed)
    for k in range(count):
        n = 2 if k % 10 == 0 else int(rng.integers(1, largest))
        yield rng, _points(rng, n)


def _same(a, b) -> bool:
    """Whether ``a`` and ``b`` hold the same doubles bit for bit (signed zeros and NaNs included)."""
    bits = [np.ascontiguousarray(x, dtype=np.float64).view(np.int64) for x in (a, b)]
    return bits[0].shape == bits[1].shape and np.array_equal(*bits)


def test_nearest_mean_and_spread_match_numpy():
    for _, c in _cases(0):
        nn = np.empty(len(c))
        ks.nearest_each(c, nn)
        assert _same(nn, _ref_nearest(c))
        assert ks.mean_nearest(c) == float(_ref_nearest(c).mean())
        assert ks.spread(c) == _ref_spread(c)
        assert layouts._spread(c) == _ref_spread(c)


@pytest.mark.parametrize("n", [129, 300, 3000])
def test_nearest_mean_and_spread_match_numpy_for_many_points(n):
    c = np.random.default_rng(n).random((n, 2))
    assert ks.mean_nearest(c) == float(_ref_nearest(c).mean())
    assert ks.spread(c) == _ref_spread(c)


def test_spread_of_a_column_major_array_keeps_numpy_order():
    c = np.asfortranarray(np.random.default_rng(1).random((40, 2)))
    assert layouts._spread(c) == _ref_spread(c)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 130, 136, 255, 256, 257, 1000, 1031, 5000])
def test_pairwise_sum_matches_add_reduce(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = rng.random(n) * 10.0 ** rng.uniform(-4, 4, n) * rng.choice([-1.0, 1.0], n)
        assert ks.pairwise_sum(a, 0, n) == float(np.add.reduce(a))
    b = np.concatenate([rng.random(5), a])
    assert ks.pairwise_sum(b, 5, n) == float(np.add.reduce(b[5:]))


def test_apart_and_inside_match_numpy():
    for rng, c in _cases(2):
        r = rng.uniform(0, 0.05, len(c))
        gap = float(rng.choice([0.0, 0.004, 0.01]))
        assert ks.apart(c, r, gap) == _ref_apart(c, r, gap)
        assert ks.inside(c, r, 0.005, 0.995) == _ref_inside(c, r, 0.005, 0.995)
        ok, nn, sp = ks.outline_candidate(c, r, gap, 0.005, 0.995)
        assert ok == (_ref_apart(c, r, gap) and _ref_inside(c, r, 0.005, 0.995))
        if ok:
            assert (nn, sp) == (float(_ref_nearest(c).mean()), _ref_spread(c))


def test_discs_touching_exactly_at_the_gap_are_apart():
    c = np.array([[0.25, 0.5], [0.75, 0.5]])
    r = np.array([0.125, 0.125])
    assert ks.apart(c, r, 0.25) and _ref_apart(c, r, 0.25)          # distance 0.5 == 0.125 + 0.125 + 0.25
    closer = c.copy()
    closer[1, 0] = np.nextafter(0.75, 0)
    assert not ks.apart(closer, r, 0.25) and not _ref_apart(closer, r, 0.25)
    assert ks.inside(c, r, 0.125, 0.875) and _ref_inside(c, r, 0.125, 0.875)
    out = c.copy()
    out[0, 0] = np.nextafter(0.25, 0)
    assert not ks.inside(out, r, 0.125, 0.875) and not _ref_inside(out, r, 0.125, 0.875)
    assert ks.close_pairs(c, 0.5) == 0 and ks.close_pairs(closer, 0.5) == 1
    assert ks.closest_pair(c) == 0.5 and ks.nearest_between(c[:1], c[1:]) == 0.5


def test_closest_pairs_and_counts_match_numpy():
    for rng, c in _cases(3):
        d = _dist(c)
        pairs = d[np.triu_indices(len(c), 1)]
        assert ks.closest_pair(c) == (pairs.min() if len(pairs) else np.inf)
        limit = float(rng.uniform(0, 0.2))
        assert ks.close_pairs(c, limit) == int((pairs < limit).sum())
        b = _points(rng, int(rng.integers(1, 30)))
        assert ks.nearest_between(c, b) == float(_dist(c, b).min())


def test_curves_touch_and_overlaps_match_numpy():
    rng = np.random.default_rng(4)
    for k in range(300):
        curves = int(rng.integers(1, 5))
        per = int(rng.integers(2, 12))
        c = _points(rng, curves * per)
        r = rng.uniform(0, 0.03, len(c))
        curve_of = np.repeat(np.arange(curves), per).astype(np.int64)
        twins = {curves - 1: 0} if k % 2 else {}
        paired = np.zeros((curves, curves), dtype=bool)
        for t, o in twins.items():
            paired[np.ix_([t, o], [t, o])] = True
        np.fill_diagonal(paired, False)
        touch, overlaps = _ref_touch(c, r, curve_of, twins, layouts.TWIN_OVERLAP, 0.003)
        assert ks.curves_touch(c, r, curve_of, paired, layouts.TWIN_OVERLAP, 0.003) == touch
        out = np.empty(len(c), dtype=bool)
        ks.overlapping_each(c, r, out)
        assert np.array_equal(out, overlaps)


def _ref_outline(kind, center, radius, rotation, n):
    c = np.asarray(center, dtype=np.float64)
    if kind == "circle":
        return geo.outline(kind, center, radius, rotation, n)
    sides = {"triangle": 3, "square": 4}[kind]
    start = 90.0 if sides == 3 else 45.0
    ang = np.radians(rotation + start + 360.0 * np.arange(sides) / sides)
    corners = np.stack([c[0] + radius * np.cos(ang), c[1] - radius * np.sin(ang)], 1)
    extra = n - sides
    per = [extra // sides + (1 if i < extra % sides else 0) for i in range(sides)]
    pts = []
    for i in range(sides):
        a, b = corners[i], corners[(i + 1) % sides]
        pts.append(a)
        for j in range(per[i]):
            t = (j + 1) / (per[i] + 1)
            pts.append(a * (1 - t) + b * t)
    return np.array(pts)


def test_polygon_outline_matches_the_per_point_numpy_version():
    rng = np.random.default_rng(5)
    for k in range(600):
        kind = ("triangle", "square")[k % 2]
        n = int(rng.integers(3 + k % 2, 20))
        center = (0, 0) if k % 7 == 0 else rng.uniform(-1, 1, 2)
        rotation = float(rng.uniform(0, 360)) * (k % 3 > 0)
        args = (kind, center, float(rng.uniform(0.01, 0.5)), rotation, n)
        assert _same(geo.outline(*args), _ref_outline(*args))


def test_clip_matches_numpy():
    rng = np.random.default_rng(6)
    for _ in range(500):
        v, lo, hi = rng.uniform(0, 2), float(rng.uniform(0.5, 1)), float(rng.uniform(1, 1.5))
        v = float(rng.choice([v, lo, hi, math.inf]))
        assert layouts._clip(v, lo, hi) == float(np.clip(v, lo, hi))
    assert math.isnan(layouts._clip(math.nan, 0.5, 1.5))


def test_scaled_outline_matches_numpy():
    for rng, c in _cases(7):
        first = int(rng.integers(0, len(c)))
        n = int(rng.integers(0, len(c) - first + 1))
        centre = rng.uniform(0, 1, 2)
        scale = float(rng.uniform(0.8, 1.2))
        r = rng.uniform(0, 0.02, len(c))
        ref = c.copy()
        ref[first:first + n] = centre + scale * (c[first:first + n] - centre)
        out, ok, nn, sp = ks.scaled_outline(c, first, n, centre, scale, r, 0.004, 0.005, 0.995)
        assert _same(out, ref)
        assert (ok, nn, sp) == ks.outline_candidate(ref, r, 0.004, 0.005, 0.995)


def _ref_mst_edges(p):
    n = len(p)
    d = _dist(p)
    seen = np.zeros(n, bool)
    seen[0] = True
    best = d[0].copy()
    edges = []
    for _ in range(n - 1):
        best[seen] = np.inf
        j = int(np.argmin(best))
        edges.append(best[j])
        seen[j] = True
        best = np.minimum(best, d[j])
    return np.array(edges)


def test_mst_edges_match_numpy():
    for _, c in _cases(8, largest=40):
        assert _same(ks.mst_edges(c), _ref_mst_edges(c))
    for k in range(2, 6):
        rng = np.random.default_rng(k)
        c = rng.random((20, 2))
        e = np.sort(_ref_mst_edges(c))
        assert geo.mst_margin(c, k) == float(e[-(k - 1)] / max(e[-k], 1e-9))


def _ref_in_box(x0, y0, x1, y1):
    def sample(rng, n, r):
        lo, hi = np.array([x0 + r, y0 + r]), np.array([x1 - r, y1 - r])
        return lo + rng.random((n, 2)) * (hi - lo)
    return sample


def _ref_in_disc(cx, cy, radius, inner=0.0, a0=0.0, a1=360.0):
    def sample(rng, n, r):
        lo, hi = inner + r, radius - r
        rho = np.sqrt(lo ** 2 + rng.random(n) * (hi ** 2 - lo ** 2))
        pad = np.degrees(np.arcsin(np.clip(r / np.maximum(rho, 1e-9), 0, 1)))
        ang = np.radians(a0 + pad + rng.random(n) * np.maximum(a1 - a0 - 2 * pad, 0))
        return np.stack([cx + rho * np.cos(ang), cy - rho * np.sin(ang)], 1)
    return sample


def test_samplers_draw_what_the_numpy_versions_drew():
    rng = np.random.default_rng(9)
    for k in range(400):
        r = np.float64(rng.uniform(0, 0.1)) if k % 3 else float(rng.uniform(0, 0.1))
        n = int(rng.integers(1, 400))
        box = (0.01, 0.02, float(rng.uniform(0.3, 1)), 0.99)
        a0 = float(rng.uniform(0, 360))
        disc = (0.5, np.float64(0.4), float(rng.uniform(0.3, 0.5)), float(rng.uniform(0, 0.1)) * (k % 2), a0,
                a0 + float(rng.uniform(5, 360)))
        if k % 5 == 0:
            disc = (0.5, 0.5, 0.47)
        seed = int(rng.integers(1 << 30))
        for new, ref in ((geo.in_box(*box), _ref_in_box(*box)), (geo.in_disc(*disc), _ref_in_disc(*disc))):
            a, b = np.random.default_rng(seed), np.random.default_rng(seed)
            assert _same(new(a, n, r), ref(b, n, r))
            assert a.random() == b.random()                     # the same number of draws


def test_sampler_arithmetic_keeps_numpy_nan_and_edge_rules():
    u = np.array([0.0, 1e-30, 0.5, 1.0, np.nan, 0.25])
    for lo2, span, r in ((0.0, 0.04, 0.05), (0.0, 1e-20, 0.3), (0.01, -0.02, 0.1), (0.0, 0.04, 0.0)):
        rho, sine = ks.ring_radii(u, lo2, span, r)
        with np.errstate(invalid="ignore"):
            ref_rho = np.sqrt(lo2 + u * span)
        assert _same(rho, ref_rho)
        assert _same(sine, np.clip(r / np.maximum(ref_rho, 1e-9), 0, 1))
    pad = np.array([0.0, 10.0, 200.0, np.nan, 5.0, 180.0])
    for a0, width in ((0.0, 360.0), (30.0, 40.0), (-10.0, 0.0)):
        assert _same(ks.sector_angles(pad, u, a0, width), a0 + pad + u * np.maximum(width - 2 * pad, 0))


def _ref_rotate(points, center, angle_deg):
    p = np.asarray(points, dtype=np.float64) - center
    a = math.radians(angle_deg)
    c, s = math.cos(a), math.sin(a)
    return center + np.stack([c * p[:, 0] + s * p[:, 1], -s * p[:, 0] + c * p[:, 1]], 1)


def test_rotate_matches_numpy():
    rng = np.random.default_rng(10)
    for k, (_, c) in enumerate(_cases(11)):
        centre = (rng.uniform(-1, 1, 2), np.zeros(2), np.array([0.5, 0.5]), [0.25, 0.75], c[0])[k % 5]
        angle = float(rng.choice([0.0, 90.0, -180.0, 45.0, rng.uniform(-400, 400)]))
        assert _same(geo.rotate(c, centre, angle), _ref_rotate(c, centre, angle))
        assert _same(geo.rotate(c[::2], centre, angle), _ref_rotate(c[::2], centre, angle))
    assert _same(geo.rotate(np.zeros((0, 2)), np.zeros(2), 30.0), _ref_rotate(np.zeros((0, 2)), np.zeros(2), 30.0))


def test_curve_objects_exactly_at_their_limits_do_not_touch():
    r = np.array([0.25, 0.25])
    curve_of = np.array([0, 1], dtype=np.int64)
    paired = np.array([[False, True], [True, False]])
    limits = ((paired, layouts.TWIN_OVERLAP * (0.25 + 0.25)), (np.zeros_like(paired), (0.25 + 0.25) + 0.003))
    for pairs, limit in limits:
        for d in (limit, np.nextafter(limit, 0)):
            c = np.array([[0.0, 0.0], [d, 0.0]])
            twins = {1: 0} if pairs.any() else {}
            touch, overlaps = _ref_touch(c, r, curve_of, twins, layouts.TWIN_OVERLAP, 0.003)
            assert touch == (d < limit)
            assert ks.curves_touch(c, r, curve_of, pairs, layouts.TWIN_OVERLAP, 0.003) == touch
    c = np.array([[0.0, 0.0], [0.5, 0.0]])
    out = np.empty(2, dtype=bool)
    ks.overlapping_each(c, r, out)
    assert not out.any() and not _ref_touch(c, r, curve_of, {}, 1.0, 0.0)[1].any()
