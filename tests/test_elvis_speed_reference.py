"""The compiled ELVIS layout statistics (``kernels.outline_stats``) and the faster layout
helpers give bit for bit what the plain numpy expressions they replaced give, on random
inputs and on edge cases (discs touching exactly at the gap, two points, ties, duplicates)."""
import math

import numpy as np
import pytest

from kernels import outline_stats as ks
from scenes.elvis import continuity
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


def _ref_splines(ctrl, per):
    """The numpy expression ``continuity.splines`` was: every curve and segment at once."""
    p = np.asarray(ctrl, dtype=np.float64)
    ext = np.concatenate([2 * p[..., :1, :] - p[..., 1:2, :], p, 2 * p[..., -1:, :] - p[..., -2:-1, :]], -2)
    d = np.diff(ext, axis=-2)
    step = np.maximum(np.hypot(d[..., 0], d[..., 1]), 1e-9) ** 0.5
    S = p.shape[-2] - 1
    t1 = step[..., :S, None, None]
    t2 = t1 + step[..., 1:S + 1, None, None]
    t3 = t2 + step[..., 2:S + 2, None, None]
    t = t1 + (np.arange(per) / per)[:, None] * (t2 - t1)
    p0, p1, p2, p3 = (ext[..., k:k + S, None, :] for k in range(4))
    a1 = (t1 - t) / t1 * p0 + t / t1 * p1
    a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
    a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
    b1 = (t2 - t) / t2 * a1 + t / t2 * a2
    b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
    out = ((t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2).reshape(p.shape[:-2] + (S * per, 2))
    return np.concatenate([out, p[..., -1:, :]], -2)


def test_compiled_splines_equal_the_numpy_expression_bit_for_bit():
    """Control points at every scale, repeated points (a zero step), rounded ones (ties), any
    number of points, samples and leading axes."""
    for seed in range(120):
        rng = np.random.default_rng(seed)
        lead = tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(1, 3))))
        p = rng.uniform(-0.5, 1.5, lead + (int(rng.integers(3, 8)), 2)) * 10.0 ** rng.uniform(-4, 1)
        if seed % 5 == 0:
            p[(0,) * len(lead) + (1,)] = p[(0,) * len(lead) + (0,)]
        if seed % 7 == 0:
            p = np.round(p, 2)
        per = int(rng.integers(1, 20))
        assert np.array_equal(continuity.splines(p, per), _ref_splines(p, per)), seed
    # a step lost to rounding beside a huge one divides by zero: inf and NaN where numpy gives them
    huge = np.array([[[0.0, 0.0], [1e23, 0.0], [1e23, 0.0], [2e23, 0.0]], [[0, 0], [np.inf, 1], [2, np.nan], [3, 3]]])
    with np.errstate(all="ignore"):
        want = _ref_splines(huge, 3)
    assert np.array_equal(continuity.splines(huge, 3), want, equal_nan=True)


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


def test_a_pair_is_skipped_only_when_hypot_is_surely_beyond_the_bound():
    # the pair kernels skip math.hypot when the squared sum says enough; bounds a few ulps
    # either side of the distance, tiny, huge (squares overflowing), infinite and NaN must
    # never be skipped wrongly, in float64 and for float32 points (squared in float32)
    rng = np.random.default_rng(3)
    skipped = 0
    for dtype, powers in ((np.float64, (-170, 170)), (np.float32, (-21, 20))):
        for dx, dy in rng.normal(0, 1, (3000, 2)) * 10.0 ** rng.integers(*powers, (3000, 1)):
            dx, dy = dtype(dx), dtype(dy)
            h = np.hypot(dx, dy)                         # what the kernel's hypot gives for this type
            near = [h * (1 + k * 3e-8) for k in range(-40, 41)] + [np.nextafter(h, 0), np.nextafter(h, np.inf)]
            for bound in near + [0.0, -h, 1e-110, 1e-160, 1e-20, 1e200, math.inf, math.nan, h * 0.5, h * 2]:
                with np.errstate(over="ignore"):             # 1e200 is inf in float32
                    bound = dtype(bound)
                if ks.beyond(dx, dy, bound):
                    skipped += 1
                    assert h >= bound, (dtype, dx, dy, bound)
    assert skipped > 3000                                # far pairs are skipped


def test_pair_kernels_on_a_lattice_of_equal_distances_match_numpy():
    g = np.stack(np.meshgrid(np.arange(6) * 0.1, np.arange(5) * 0.1), -1).reshape(-1, 2)   # many equal distances
    r = np.full(len(g), 0.03)
    nn = np.empty(len(g))
    ks.nearest_each(g, nn)
    assert np.array_equal(nn, _ref_nearest(g)) and _same(ks.mst_edges(g), _ref_mst_edges(g))
    pairs = _dist(g, g)[np.triu_indices(len(g), 1)]
    for bound in (0.1, float(pairs[1]), 0.2, np.nextafter(0.1, 1)):
        assert ks.close_pairs(g, bound) == int((pairs < bound).sum())
        assert ks.apart(g, r, bound - 0.06) == _ref_apart(g, r, bound - 0.06)
    assert ks.closest_pair(g) == pairs.min() and ks.nearest_between(g[:7], g[7:]) == float(_dist(g[:7], g[7:]).min())
    # float32 points: the squares round to 1e-7, far more than float64's
    pair = np.float32([[0, 0], [0.83523935, 0.351371]])
    assert ks.close_pairs(pair, 0.9061381816864014) == int(np.hypot(*pair[1]) < 0.9061381816864014) == 1


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
        touch, overlaps = _ref_touch(c, r, curve_of, twins, continuity.TWIN_OVERLAP, 0.003)
        assert ks.curves_touch(c, r, curve_of, paired, continuity.TWIN_OVERLAP, 0.003) == touch
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


def _ref_clip(v: float, lo: float, hi: float) -> float:
    """``v`` clipped to ``lo..hi`` as ``float(np.clip(v, lo, hi))`` gives it (NaN stays NaN)."""
    return v if v != v else min(max(v, lo), hi)


def test_clip_matches_numpy():
    rng = np.random.default_rng(6)
    for _ in range(500):
        v, lo, hi = rng.uniform(0, 2), float(rng.uniform(0.5, 1)), float(rng.uniform(1, 1.5))
        v = float(rng.choice([v, lo, hi, math.inf]))
        assert ks._clipped(v, lo, hi) == _ref_clip(v, lo, hi) == float(np.clip(v, lo, hi))
    assert math.isnan(ks._clipped(math.nan, 0.5, 1.5)) and math.isnan(_ref_clip(math.nan, 0.5, 1.5))


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


def test_margins_of_several_cluster_counts_are_each_ones_own():
    from scenes.elvis.batched import mst_margins

    rng = np.random.default_rng(3)
    points, live = rng.random((30, 12, 2)), rng.random((30, 12)) < 0.8
    k, g = rng.integers(0, 7, 30), rng.integers(0, 7, 30)
    margin, rule = mst_margins(points, live, k, g)
    for b in range(30):
        assert margin[b] == geo.mst_margin(points[b][live[b]], int(k[b]))
        assert rule[b] == geo.mst_margin(points[b][live[b]], int(g[b]))


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
    asin = np.array([0.0, 0.2, 1.5, np.nan, 0.1, math.pi / 2])
    for a0, width in ((0.0, 360.0), (30.0, 40.0), (-10.0, 0.0)):
        pad = np.degrees(asin)
        assert _same(ks.sector_radians(asin, u, a0, width), np.radians(a0 + pad + u * np.maximum(width - 2 * pad, 0)))


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
    limits = ((paired, continuity.TWIN_OVERLAP * (0.25 + 0.25)), (np.zeros_like(paired), (0.25 + 0.25) + 0.003))
    for pairs, limit in limits:
        for d in (limit, np.nextafter(limit, 0)):
            c = np.array([[0.0, 0.0], [d, 0.0]])
            twins = {1: 0} if pairs.any() else {}
            touch, overlaps = _ref_touch(c, r, curve_of, twins, continuity.TWIN_OVERLAP, 0.003)
            assert touch == (d < limit)
            assert ks.curves_touch(c, r, curve_of, pairs, continuity.TWIN_OVERLAP, 0.003) == touch
    c = np.array([[0.0, 0.0], [0.5, 0.0]])
    out = np.empty(2, dtype=bool)
    ks.overlapping_each(c, r, out)
    assert not out.any() and not _ref_touch(c, r, curve_of, {}, 1.0, 0.0)[1].any()


# ---------------------------------------------------------------- splines, placement, small helpers


def _ref_spaced(start: np.ndarray, stop: np.ndarray, n: int) -> np.ndarray:
    """``[S, n+1]``: row ``s`` is ``np.linspace(start[s], stop[s], n + 1)`` to the last bit
    (with array bounds, ``np.linspace`` takes its zero-step path for every row as soon as
    one row's step is zero, which changes the others' last bits)."""
    k = np.arange(n + 1, dtype=np.float64)[None, :]
    delta = (stop - start)[:, None]
    step = delta / n
    y = np.where(step == 0, k / n * delta, k * step) + start[:, None]
    y[:, -1] = stop
    return y



def _ref_catmull_rom(points: np.ndarray, samples_per_segment: int = 12) -> np.ndarray:
    """:func:`templates.catmull_rom` (3 or more control points) in numpy, every segment at
    once, as it was before its compiled kernel."""
    p = np.asarray(points, dtype=np.float64)
    ext = np.concatenate([2 * p[:1] - p[1:2], p, 2 * p[-1:] - p[-2:-1]])
    # every segment at once, each value computed by the same operations as segment by segment
    step = np.array([max(np.linalg.norm(ext[i + 1] - ext[i]), 1e-9) ** 0.5 for i in range(len(ext) - 1)])
    t0 = np.zeros(len(p) - 1)
    t1 = t0 + step[:-2]
    t2 = t1 + step[1:-1]
    t3 = t2 + step[2:]
    p0, p1, p2, p3 = (ext[k:k + len(p) - 1, None, :] for k in range(4))          # [S,1,2]
    t = _ref_spaced(t1, t2, samples_per_segment)[..., None]                         # [S,n+1,1]
    t0, t1, t2, t3 = (v[:, None, None] for v in (t0, t1, t2, t3))
    a1 = (t1 - t) / (t1 - t0) * p0 + (t - t0) / (t1 - t0) * p1
    a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
    a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
    b1 = (t2 - t) / (t2 - t0) * a1 + (t - t0) / (t2 - t0) * a2
    b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
    out = (t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2                   # [S,n+1,2]
    # each segment ends where the next begins: its last sample only for the final segment
    return np.concatenate([out[:-1, :-1].reshape(-1, 2), out[-1]])


def _ref_nearest_between(a: np.ndarray, b: np.ndarray) -> float:
    """The smallest distance between a point of ``a`` ``(n, 2)`` and one of ``b`` ``(m, 2)``."""
    d = a[:, None, :] - b[None, :, :]
    return float(np.hypot(d[..., 0], d[..., 1]).min())


def _ref_break_curve(rng: np.random.Generator, curves: list, spacing: float, others: np.ndarray,
                 kinds=("kink", "misaligned"), crossing=None) -> tuple[list, dict]:
    """:func:`continuity.break_curve` before its candidates were checked compiled (each
    move, check and statistic in numpy, one candidate and side at a time)."""
    pts = curves[0]
    n = len(pts)
    if n < 4:
        raise layouts.PlacementError("a curve this short cannot be broken")

    def stats(c):     # (objects close enough to overlap, spread of centres)
        return ks.close_pairs(c, 0.6 * spacing), layouts._spread(c)

    steps = np.hypot(*np.diff(pts, axis=0).T)
    own = float(np.median(steps))                               # this curve's spacing (``spacing``: the smallest)
    gap = set(np.nonzero(steps > 1.3 * own)[0].tolist())        # the free stretch where curves cross: never broken
    if crossing is not None:                                    # (found by where it is, however short)
        gap.add(int(np.hypot(*((pts[:-1] + pts[1:]) / 2 - crossing).T).argmin()))
    close, target = stats(np.concatenate(list(curves) + [others]))
    best = None
    for _ in range(layouts.CANDIDATES):
        at = int(rng.integers(n // 3, max(n // 3 + 1, n - n // 3)))
        if at in gap or at - 1 in gap:
            continue
        tangent = pts[min(at + 1, n - 1)] - pts[at - 1]
        tangent /= math.sqrt(tangent.dot(tangent))          # ``np.linalg.norm(tangent)``, as numpy computes it
        clear = None                                        # how near the others the unbroken rest is
        first = 1 if rng.random() < 0.5 else -1
        kind = kinds[int(rng.integers(len(kinds)))]
        size = float(rng.uniform(*(continuity.KINK if kind == "kink" else continuity.SHIFT)))
        for side in (first, -first):          # either way: one turns the rest in, the other out
            outs = [c.copy() for c in curves]
            if kind == "kink":
                angle = size * side
                for o, c in zip(outs, curves):
                    o[at + 1:] = geo.rotate(c[at + 1:], pts[at], angle)
                how = {"kind": "kink", "at": at, "angle": round(angle, 1)}
                before, after = pts[at] - pts[at - 1], outs[0][at + 1] - outs[0][at]
                turn = math.degrees(abs(math.atan2(before[0] * after[1] - before[1] * after[0], before @ after)))
                if turn < continuity.KINK[0]:          # the curve's own bend took back part of the kink
                    continue
            else:
                shift = size * own
                for o, c in zip(outs, curves):
                    o[at + 1:] = c[at + 1:] + np.array([-tangent[1], tangent[0]]) * side * shift
                how = {"kind": "misaligned", "at": at, "shift": round(shift, 4)}
            moved = np.concatenate([o[at + 1:] for o in outs])
            if (moved < 0.04).any() or (moved > 0.96).any():
                continue
            if len(others):
                if clear is None:
                    clear = _ref_nearest_between(np.concatenate([c[at + 1:] for c in curves]), others)
                if _ref_nearest_between(moved, others) < min(0.9 * spacing, clear):     # no nearer the others than before
                    continue
            now = stats(np.concatenate(outs + [others]))
            cost = (abs(now[0] - close), abs(now[1] - target))
            if best is None or cost < best[0]:
                best = (cost, outs, how)
    if best is None:
        raise layouts.PlacementError("no break keeps clear of the other curves")
    return best[1], best[2]


def _ref_place(rng: np.random.Generator, radii, sampler, gap: float, fixed=(), tries: int = geo.TRIES) -> np.ndarray:
    """:func:`geo.place` before its discs were sorted in plain floats."""
    r = np.asarray(radii, dtype=np.float64)
    if not np.isfinite(r).all():
        raise ValueError(f"radii must be finite, got {r.tolist()}")
    placed = np.empty((len(fixed) + len(r), 3))
    m = len(fixed)
    if m:
        placed[:m] = np.asarray(fixed, dtype=np.float64).reshape(m, 3)
    out = np.zeros((len(r), 2))
    order = np.argsort(-r, kind="stable")            # discs of one radius are a run of it
    start = 0
    while start < len(order):
        rad = r[order[start]]
        same = int((r == rad).sum())
        run = order[start:start + same]
        blocks = np.ascontiguousarray(sampler(rng, geo.SMALL * same, rad).reshape(same, geo.SMALL, 2))
        j = 0
        while True:
            done = geo.place_run(blocks[j:], placed, m, float(rad), float(gap), run[j:], out)
            j, m = j + done, m + done
            if j == same:
                break
            large = np.ascontiguousarray(sampler(rng, tries, rad).reshape(1, -1, 2))   # disc run[j]: a large draw
            if not geo.place_run(large, placed, m, float(rad), float(gap), run[j:j + 1], out):
                raise geo.PlacementError(f"could not place {len(r)} discs with gap {gap}")
            j, m = j + 1, m + 1
        start += same
    return out


def _ref_displace_stretch(rng: np.random.Generator, c: np.ndarray, radius: np.ndarray, first: int, n: int,
                      centre: np.ndarray, R: float, sizes: tuple[float, float]) -> dict:
    """:func:`layouts._displace_stretch` before its stretch and then its candidates were moved compiled."""
    nn0, spread0 = layouts._mean_nn(c), layouts._spread(c)
    sign = 1 if rng.random() < 0.5 else -1
    lo, hi = max(layouts.SCALES[0], sizes[0] / R), min(layouts.SCALES[1], sizes[1] / R)
    best = None
    for attempt in range(2 * layouts.CANDIDATES):
        if attempt == layouts.CANDIDATES:
            if best is not None:
                break
            sign = -sign                                 # no room on the drawn side: try the other
        k = max(2, int(round(n * rng.uniform(*layouts.STRETCH))))
        start = int(rng.integers(n))
        idx = [first + (start + j) % n for j in range(k)]
        mid = np.add.reduce(c[idx], 0) / k - centre          # ``c[idx].mean(0)``, as numpy computes it
        u = mid / max(math.sqrt(mid.dot(mid)), 1e-9)          # ``np.linalg.norm(mid)``, likewise
        d = float(rng.uniform(*layouts.DISPLACE)) * R * sign
        moved = c.copy()
        moved[idx] += u * d
        # redrawn at scale s, a lone figure's distances all scale by s: the sizes that give back
        # the positive's nearest-neighbour distance or spread (and the drawn size) are the ones to try
        nn1, spread1 = layouts._mean_nn(moved), layouts._spread(moved)
        for scale in sorted({_ref_clip(v, lo, hi) for v in (1.0, nn0 / nn1, spread0 / spread1,
                                                        math.sqrt(nn0 * spread0 / (nn1 * spread1)))}):
            # ``cand[own] = centre + scale * (moved[own] - centre)`` on a copy, then its statistics
            cand, ok, nn_c, spread_c = ks.scaled_outline(moved, first, n, centre, scale, radius,
                                                         0.004, 0.005, 0.995)
            if not ok:
                continue
            # their ratio first: in positives nearest-neighbour distance and spread grow together
            # with the figure, so a changed ratio would tell a broken one whatever its size
            nn2, spread2 = math.log(nn_c / nn0), math.log(spread_c / spread0)
            cost = 2 * abs(nn2 - spread2) + abs(nn2) + abs(spread2)
            if best is None or cost < best[0]:
                best = (cost, cand, {"objects": [i - first for i in idx], "distance": round(d * scale, 4)}, scale * R)
    if best is None:
        raise layouts.PlacementError("no stretch can move off the outline")
    c[:] = best[1]
    return {**best[2], "radius": best[3]}


def _control_points(rng, k):
    """Control points: spread, with a repeated point, on a line, or tiny steps beside huge ones."""
    p = rng.random((k, 2)) * rng.choice([1e-3, 1.0, 10.0])
    kind = int(rng.integers(4))
    if kind == 1:
        p[int(rng.integers(1, k))] = p[0]
    elif kind == 2:
        p[:, 1] = p[0, 1]
    elif kind == 3:
        p[-1] = p[-2] + 1e20
    return p


def test_catmull_rom_kernel_matches_numpy():
    from kernels.templates import catmull_rom
    rng = np.random.default_rng(20)
    with np.errstate(all="ignore"):
        for _ in range(600):
            p = _control_points(rng, int(rng.integers(3, 12)))
            n = int(rng.integers(1, 20))
            assert catmull_rom(p, n).tobytes() == _ref_catmull_rom(p, n).tobytes()
        p = np.array([[0, 0], [1, .3], [2, -.5], [3, 1], [4, 0], [1e24, 0], [1e24, 0], [1e24, 1]], dtype=float)
        for bad in (None, np.nan, np.inf):
            if bad is not None:
                p[2, 1] = bad
            for n in (1, 7, 16):
                assert catmull_rom(p, n).tobytes() == _ref_catmull_rom(p, n).tobytes()


def _polyline(rng, n, start, angle, step):
    """``n`` points from ``start``, ``step`` apart, heading ``angle`` (radians) with a gentle bend."""
    bend = rng.uniform(-0.3, 0.3) * np.linspace(0, 1, n) ** 2
    t = np.arange(n) * step
    return np.ascontiguousarray(np.stack([start[0] + t * np.cos(angle + bend), start[1] + t * np.sin(angle + bend)], 1))


def _break_inputs(rng):
    n = int(rng.integers(3, 16))
    step = float(rng.uniform(0.02, 0.08))
    pts = _polyline(rng, n, rng.uniform(0.05, 0.4, 2), float(rng.uniform(0, 2 * math.pi)), step)
    if rng.random() < 0.3:                                 # a wider step where curves cross
        pts[n // 2:] += (pts[n // 2] - pts[n // 2 - 1]) * 0.6
    curves = [pts]
    if rng.random() < 0.3:                                 # a repeat of it, a little to the side
        curves.append(pts + rng.uniform(-0.03, 0.03, 2))
    others = [np.zeros((0, 2)), rng.random((int(rng.integers(1, 40)), 2)),
              _polyline(rng, n, rng.uniform(0.1, 0.9, 2), float(rng.uniform(0, 6.3)), step)][int(rng.integers(3))]
    kinds = [("kink", "misaligned"), ("kink",), ("misaligned",)][int(rng.integers(3))]
    crossing = None if rng.random() < 0.5 else pts[n // 2] + 0.01
    return curves, step * float(rng.uniform(0.8, 1.0)), others, kinds, crossing


def test_break_curve_matches_the_numpy_version():
    rng = np.random.default_rng(21)
    outcomes = set()
    for _ in range(500):
        curves, spacing, others, kinds, crossing = _break_inputs(rng)
        seed = int(rng.integers(1 << 30))
        got, want = [], []
        for fn, out in ((continuity.break_curve, got), (_ref_break_curve, want)):
            g = np.random.default_rng(seed)
            try:
                out.append(fn(g, [c.copy() for c in curves], spacing, others.copy(), kinds, crossing))
            except layouts.PlacementError as e:
                out.append(str(e))
            out.append(g.random())                         # the same draws
        outcomes.add(type(want[0]).__name__ if isinstance(want[0], str) else want[0][1]["kind"])
        assert got[1] == want[1]
        if isinstance(want[0], str):
            assert got[0] == want[0]
            continue
        assert got[0][1] == want[0][1]
        assert len(got[0][0]) == len(want[0][0])
        assert all(_same(a, b) for a, b in zip(got[0][0], want[0][0]))
    assert outcomes == {"str", "kink", "misaligned"}


def test_broken_curves_flags_limits_exactly():
    flat = np.array([[0.5, 0.5], [0.5, 0.6], [0.5, 0.96], [0.04, 0.5], [0.96, 0.04]])
    bounds = np.array([0, 5], dtype=np.int64)
    none = np.zeros((0, 2))
    for at, off in ((0, False), (1, False)):
        assert ks.broken_curves(flat, bounds, at, False, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, none, 0.04, 0.96)[1] == off
    for dx, dy, off in ((0.0, 2e-16, True), (-1e-17, 0.0, True), (0.0, -0.5, True), (0.0, 0.0, False)):
        assert ks.broken_curves(flat, bounds, 1, False, 0.0, 0.0, 1.0, 0.0, dx, dy, none, 0.04, 0.96)[1] == off
    near = ks.broken_curves(flat, bounds, 2, False, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, flat[:1], 0.04, 0.96)[2]
    assert near == math.hypot(0.04 - 0.5, 0.0) and math.isinf(
        ks.broken_curves(flat, bounds, 2, False, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, none, 0.04, 0.96)[2])


def test_place_matches_the_numpy_version():
    rng = np.random.default_rng(22)
    outcomes = set()
    for k in range(500):
        n = int(rng.integers(0, 14))
        radii = rng.choice([0.01, 0.02, 0.035, float(rng.uniform(0.005, 0.08))], n) * (1 if k % 3 else 1.45)
        sampler = (geo.in_box(0.0, 0.0, 1.0, float(rng.uniform(0.3, 1))),
                   geo.in_disc(0.5, 0.5, float(rng.uniform(0.2, 0.47)), float(rng.uniform(0, 0.1)),
                               float(rng.uniform(0, 90)), float(rng.uniform(100, 360))))[k % 2]
        gap = float(rng.uniform(0.001, 0.05))
        m = int(rng.integers(0, 3))
        fixed = list(zip(rng.random(m).tolist(), rng.random(m).tolist(), rng.uniform(0.01, 0.05, m).tolist()))
        seed = int(rng.integers(1 << 30))
        res = []
        for fn in (geo.place, _ref_place):
            g = np.random.default_rng(seed)
            try:
                res.append((fn(g, radii if k % 4 else radii.tolist(), sampler, gap, fixed=fixed, tries=60), g.random()))
            except geo.PlacementError as e:
                res.append((str(e), g.random()))
        outcomes.add(isinstance(res[1][0], str))
        assert res[0][1] == res[1][1]
        assert (res[0][0] == res[1][0]) if isinstance(res[1][0], str) else _same(res[0][0], res[1][0])
    assert outcomes == {True, False}


def test_radii_follow_size_class_and_narrowest_side():
    from scenes.elvis.attributes import SIZES
    from scenes.elvis.batched import radii_of
    rng = np.random.default_rng(23)
    sizes = np.array(list(SIZES), dtype=object)[rng.integers(0, 3, (20, 30))]
    shapes = np.array(["triangle", "star", "circle", "heart", "pacman"], dtype=object)[rng.integers(0, 5, (20, 30))]
    base = rng.uniform(0.001, 0.05, 20)
    want = np.array([[max(base[b] * SIZES[s], layouts.MIN_NARROW / (2 * layouts.NARROW.get(sh, 1.0)))
                      for s, sh in zip(sizes[b], shapes[b])] for b in range(20)])
    assert _same(radii_of(sizes, shapes, base), want)
    assert (radii_of(sizes, shapes, base) > base[:, None] * 0.69).all()


def test_arc_helpers_match_their_numpy_versions():
    rng = np.random.default_rng(24)
    for k, (_, c) in enumerate(_cases(25)):
        if len(c) < 2:
            continue
        steps = np.hypot(*np.diff(c, axis=0).T)
        s = np.concatenate([[0.0], np.cumsum(steps)])
        t = rng.uniform(-0.1, 1.1, int(rng.integers(1, 20))) * s[-1]
        assert _same(geo.segment_lengths(c), steps)
        assert geo.arc_length(c) == float(steps.sum())
        assert _same(geo.at_arc(c, t), np.stack([np.interp(t, s, c[:, 0]), np.interp(t, s, c[:, 1])], 1))
        assert geo.arc_of(c, c[k % len(c)] + 0.01) == float(s[int(np.hypot(*(c - (c[k % len(c)] + 0.01)).T).argmin())])


def test_displace_stretch_matches_the_numpy_version():
    rng = np.random.default_rng(26)
    outcomes = set()
    for k in range(300):
        kind = ("triangle", "square", "circle")[k % 3]
        n = int(rng.integers(5, 16))
        groups = int(rng.integers(1, 4))
        R = float(rng.uniform(0.1, 0.3))
        centres = [rng.uniform(0.2, 0.8, 2) for _ in range(groups)]
        c = np.concatenate([geo.outline(kind, ce, R, float(rng.uniform(0, 360)), n) for ce in centres])
        if k % 7 == 0:
            c = np.round(c, 2)                                  # ties
        radius = np.full(len(c), float(rng.uniform(0.005, 0.03)))
        g = int(rng.integers(groups))
        seed = int(rng.integers(1 << 30))
        res = []
        for fn in (layouts._displace_stretch, _ref_displace_stretch):
            a, gen = c.copy(), np.random.default_rng(seed)
            try:
                how = fn(gen, a, radius, g * n, n, centres[g], R, (0.8 * R, R))
            except layouts.PlacementError as e:
                how = str(e)
            res.append((a, how, gen.random()))
        outcomes.add(isinstance(res[1][1], str))
        assert _same(res[0][0], res[1][0]) and res[0][1] == res[1][1] and res[0][2] == res[1][2]
    assert outcomes == {True, False}


def test_stretch_kernels_match_numpy():
    rng = np.random.default_rng(27)
    for _, c in _cases(28):
        n = len(c)
        if n < 2:
            continue
        first = int(rng.integers(0, n // 2 + 1))
        m = n - first
        k, start = int(rng.integers(1, m + 1)), int(rng.integers(m))
        centre = rng.uniform(-1, 1, 2) if k % 3 else np.zeros(2)
        idx = [first + (start + j) % m for j in range(k)]
        want = np.add.reduce(c[idx], 0) / k - centre
        assert _same(ks.stretch_mid(c, first, m, start, k, float(centre[0]), float(centre[1])), want)
        u = want / max(math.sqrt(want.dot(want)), 1e-9)
        assert _same(ks.stretch_mids(c, first, m, np.array([0, start]), np.array([1, k]), float(centre[0]),
                                     float(centre[1]))[1], want)
        d = float(rng.uniform(-0.1, 0.1))
        moved = c.copy()
        moved[idx] += u * d
        got = ks.stretched(c, first, m, start, k, float(u[0]), float(u[1]), d)
        assert _same(got[0], moved)
        assert _same(got[1], _ref_nearest(moved).mean()) and _same(got[2], _ref_spread(moved))
    zeros = np.array([[-0.0, -0.0], [-0.0, -0.0], [1.0, 2.0]])
    assert _same(ks.stretch_mid(zeros, 0, 3, 0, 2, 0.0, 0.0), np.add.reduce(zeros[[0, 1]], 0) / 2 - np.zeros(2))


def test_sector_radians_matches_numpy():
    rng = np.random.default_rng(30)
    asin = np.concatenate([rng.uniform(0, math.pi / 2, 2000), [0.0, math.pi / 2, np.nan, 1e-300, 1.0]])
    u = np.concatenate([rng.random(2000), [0.0, 1.0, 0.5, np.nan, 0.999]])
    for a0, width in ((0.0, 360.0), (30.0, 40.0), (-10.0, 0.0), (float(rng.uniform(0, 360)), float(rng.uniform(0, 360)))):
        want = np.radians(a0 + np.degrees(asin) + u * np.maximum(width - 2 * np.degrees(asin), 0))
        assert _same(ks.sector_radians(asin, u, a0, width), want)
        assert _same(ks.sector_radians(asin[7:900], u[7:900], a0, width), want[7:900])


def test_apart_each_matches_numpy():
    """The batched compiled check against the broadcast numpy expression it replaces."""
    rng = np.random.default_rng(61)
    for k in range(200):
        B, K = int(rng.integers(1, 6)), int(rng.integers(1, 30))
        c = rng.uniform(0, 1, (B, K, 2))
        if k % 5 == 0:
            c = np.round(c, 1)                                   # coincident discs and exact ties
        r = rng.uniform(0, 0.05, (B, K))
        live = rng.random((B, K)) < 0.8
        gap = float(rng.choice([0.0, 0.004, 0.02]))
        d = np.hypot(*(c[:, :, None] - c[:, None]).transpose(3, 0, 1, 2))
        pair = live[:, :, None] & live[:, None, :] & ~np.eye(K, dtype=bool)[None]
        want = ((d >= r[:, :, None] + r[:, None, :] + gap) | ~pair).all((1, 2))
        assert np.array_equal(ks.apart_each(c, r, live, gap), want)


def test_the_median_of_a_curves_steps_is_numpys():
    rng = np.random.default_rng(5)
    for n in list(range(1, 40)) * 20:
        v = rng.random(n) * 10.0 ** rng.integers(-4, 3)
        if n > 3 and rng.random() < 0.3:
            v[rng.integers(n, size=2)] = v[0]                      # ties
        assert _same(continuity._median(v), float(np.median(v)))
    nan = np.array([0.3, np.nan, 0.1])
    assert np.isnan(continuity._median(nan))
    for zeros in ([0.0, -0.0, 1.0], [1.0, 0.0, -0.0], [-0.0, 0.0], [0.0, -0.0, 2.0, 3.0]):     # signed zeros
        assert _same(continuity._median(np.array(zeros)), float(np.median(np.array(zeros))))
