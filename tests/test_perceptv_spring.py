"""graph_counting's compiled layout (``kernels.spring_layout``) gives bit for bit what the
plain numpy layout it replaced gives: one step at a time on random points (ties, coincident
points, points on the clip bounds, repeated edges) and whole layouts on random graphs drawn
as graph_counting draws them."""
import numpy as np
import pytest

from kernels import spring_layout
from scenes.perceptv.counting import _spring


def _numpy_step(p, ends, t, steps):
    """One step of the layout as numpy computes it (the reference)."""
    n = len(p)
    d = p[:, None] - p[None]
    dist = np.hypot(d[..., 0], d[..., 1]) + np.eye(n) + 1e-6
    force = (d / dist[..., None] ** 3 * 0.002).sum(1)
    if len(ends):
        e = ends.reshape(-1, 2)
        v = (p[e[:, 1]] - p[e[:, 0]]) * 0.5
        np.add.at(force, ends, np.stack([v, -v], 1).reshape(-1, 2))
    return np.clip(p + force * (1 - t / steps) * 0.5, 0.0, 1.0)


def _numpy_spring(rng, n, edges, steps=120):
    """The whole layout as numpy computes it (the reference for ``_spring``)."""
    p = rng.uniform(0.2, 0.8, (n, 2))
    ends = np.asarray(edges, dtype=np.int64).reshape(-1)
    for t in range(steps):
        p = _numpy_step(p, ends, t, steps)
    lo, hi = p.min(0), p.max(0)
    return 0.08 + (p - lo) / np.maximum(hi - lo, 1e-6) * 0.84


def _graph(r, n, repeat=False):
    """Random edges as graph_counting draws them (``repeat``: the first two once more)."""
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    m = 0 if n == 1 else int(r.integers(n - 1, min(len(pairs), n + 5) + 1))
    edges = [pairs[int(k)] for k in r.choice(len(pairs), m, replace=False)] if m else []
    return edges + (edges[:2] if repeat else [])


def _points(r, n):
    """Random points in [0, 1]^2, some on the bounds, some coincident, some sharing a coordinate."""
    p = r.uniform(0.0, 1.0, (n, 2)) * 10.0 ** r.integers(-3, 1, (n, 2))
    p[r.random((n, 2)) < 0.1] = 0.0
    p[r.random((n, 2)) < 0.1] = 1.0
    if n > 2 and r.random() < 0.3:
        p[1] = p[0]
    if n > 3 and r.random() < 0.3:
        p[3, 0] = p[2, 0]
    return p


def _one_step(p, ends, t, steps):
    n = len(p)
    dist, cube, force = np.empty((n, n)), np.empty((n, n)), np.empty((n, 2))
    spring_layout.distances(p, dist)
    np.power(dist, 3, out=cube)
    spring_layout.step(p, dist, cube, ends, t, steps, force)
    return dist


def test_one_step_matches_numpy():
    for seed in range(3000):
        r = np.random.default_rng(seed)
        n = int(r.integers(1, 26))
        p = _points(r, n)
        ends = np.asarray(_graph(r, n, repeat=seed % 4 == 0), dtype=np.int64).reshape(-1)
        steps = int(r.integers(1, 200))
        t = int(r.integers(0, steps))
        want = _numpy_step(p, ends, t, steps)
        got = p.copy()
        dist = _one_step(got, ends, t, steps)
        assert np.array_equal(got, want), (seed, n, t, steps)
        if t + 1 < steps:                                  # the distances of the new points, for the next step
            d = want[:, None] - want[None]
            assert np.array_equal(dist, np.hypot(d[..., 0], d[..., 1]) + np.eye(n) + 1e-6), seed


def _check_layouts(seeds, steps=120):
    for seed in seeds:
        r = np.random.default_rng(seed)
        n = 1 + seed % 25
        edges = _graph(r, n, repeat=seed % 7 == 0)
        want = _numpy_spring(np.random.default_rng(seed + 1), n, edges, steps)
        got = _spring(np.random.default_rng(seed + 1), n, edges, steps)
        assert np.array_equal(got, want), (seed, n, edges)


def test_layouts_match_numpy():
    _check_layouts(range(250))


@pytest.mark.slow
def test_layouts_match_numpy_sweep():
    _check_layouts(range(250, 5250))
