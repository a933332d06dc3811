"""Per-sample randomness: identical samples whatever the order, batch, worker or process."""
import hashlib
import json
import math
import subprocess
import sys

import numpy as np
import pytest
import torch

from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.rng import sample_key, sample_rng


def test_keys_separate_seed_task_and_index():
    keys = {sample_key(s, t, i) for s in (0, 1) for t in ("a/b", "a/c") for i in (0, 1, 10)}
    assert len(keys) == 12
    a = sample_rng(3, "shapes/colours", 5).random(4)
    b = sample_rng(3, "shapes/colours", 5).random(4)
    assert np.array_equal(a, b)
    assert isinstance(sample_rng(0, "x", 0).bit_generator, np.random.Philox)


def _digest(task_ids, seed, indices, size=48) -> str:
    h = hashlib.sha256()
    for t in task_ids:
        samples = get_task(t).samples(seed, indices)
        h.update(json.dumps([s.record() for s in samples], sort_keys=True).encode())
        for imgs in render_samples(samples, size, batch_panels=5):
            for im in imgs:
                h.update(im.numpy().tobytes())
    return h.hexdigest()


def test_samples_are_identical_in_another_process():
    ids = list_tasks("shapes/*")
    here = _digest(ids, 9, list(range(4)))
    code = ("from tests.test_sampling import _digest; from engine.registry import list_tasks;"
            "print(_digest(list_tasks('shapes/*'), 9, list(range(4))))")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert here == there


def test_render_batch_size_does_not_change_pixels():
    samples = get_task("shapes/gallery").samples(2, range(5)) + get_task("shapes/same_shape").samples(2, range(5))
    one = render_samples(samples, 64, batch_panels=1)
    many = render_samples(samples, 64, batch_panels=64)
    assert all(torch.equal(a, b) for x, y in zip(one, many) for a, b in zip(x, y))


def _scatter_reference(rng, radii, bounds, gap, tries=2000):
    """Disc placement one candidate check per placed disc: what ``engine.placement.scatter`` computes."""
    r = np.asarray(radii, dtype=np.float64)
    x0, y0, x1, y1 = bounds
    out, placed = np.zeros((len(r), 2)), []
    for i in np.argsort(-r, kind="stable"):
        lo, hi = np.array([x0 + r[i], y0 + r[i]]), np.array([x1 - r[i], y1 - r[i]])
        cand = lo + rng.random((tries, 2)) * (hi - lo)
        ok = np.ones(tries, bool)
        for j in placed:
            ok &= np.hypot(*(cand - out[j]).T) >= r[i] + r[j] + gap
        if not ok.any():
            return None
        out[i] = cand[np.nonzero(ok)[0][0]]
        placed.append(i)
    return out


def test_scatter_equals_its_one_disc_at_a_time_reference():
    from engine.placement import PlacementError, scatter
    failed = 0
    for seed in range(300):
        g = np.random.default_rng(seed)
        radii, gap = g.uniform(0.01, 0.1, int(g.integers(1, 40))), float(g.uniform(0, 0.03))
        want = _scatter_reference(np.random.default_rng(seed + 1), radii, (0.0, 0.05, 1.0, 0.95), gap)
        try:
            got = scatter(np.random.default_rng(seed + 1), radii, (0.0, 0.05, 1.0, 0.95), gap)
        except PlacementError:
            got = None
        failed += want is None
        assert (got is None and want is None) or np.array_equal(got, want), seed
    assert 0 < failed < 300                              # both outcomes were compared


def _place_reference(rng, radii, sampler, gap, fixed=(), tries=400, small=32):
    """ELVIS placement one disc at a time in numpy: larger discs first, each taking the first
    candidate clear of every disc so far from a small draw (made for all discs of its radius
    when the first of them comes up), else from a large draw."""
    from engine.placement import PlacementError
    r = np.asarray(radii, dtype=np.float64)
    placed = [tuple(f) for f in fixed]
    out, first, taken = np.zeros((len(r), 2)), {}, {}
    for i in np.argsort(-r, kind="stable"):
        key = float(r[i])
        if key not in first:
            same = int((r == r[i]).sum())
            first[key], taken[key] = sampler(rng, small * same, r[i]).reshape(same, small, 2), 0
        for cand in (first[key][taken[key]], None):
            cand = sampler(rng, tries, r[i]) if cand is None else cand
            ok = [all((x - px) ** 2 + (y - py) ** 2 >= (r[i] + pr + gap) ** 2 for px, py, pr in placed)
                  for x, y in cand]
            if any(ok):
                break
        else:
            raise PlacementError("no room")
        taken[key] += 1
        out[i] = cand[ok.index(True)]
        placed.append((out[i, 0], out[i, 1], r[i]))
    return out


def test_elvis_placement_equals_its_one_disc_at_a_time_reference():
    from engine.placement import PlacementError
    from scenes.elvis import geometry as geo
    outcomes = set()
    for seed in range(200):
        g = np.random.default_rng(seed)
        n = int(g.integers(1, 30))
        radii = g.choice(g.uniform(0.01, 0.08, 3), n)                  # runs of equal radii, as layouts have
        fixed = [(*g.uniform(0.2, 0.8, 2), 0.1)] if seed % 3 == 0 else ()
        sampler = geo.in_box(0.02, 0.02, 0.98, 0.98) if seed % 2 else geo.in_disc(0.5, 0.5, 0.47, 0.1)
        gap = float(g.uniform(0.0, 0.05))
        results = []
        for place in (_place_reference, geo.place):
            try:
                results.append(place(np.random.default_rng(seed + 1), radii, sampler, gap, fixed))
            except PlacementError:
                results.append(None)
        want, got = results
        outcomes.add(want is None)
        assert (got is None and want is None) or np.array_equal(got, want), seed
    assert outcomes == {True, False}                     # placements and failures both compared


def _catmull_rom_reference(p, n):
    """The centripetal Catmull-Rom spline segment by segment (samples ``n`` per segment)."""
    if len(p) == 2:
        t = np.linspace(0, 1, n + 1)[:, None]
        return p[0] * (1 - t) + p[1] * t
    ext = np.concatenate([2 * p[:1] - p[1:2], p, 2 * p[-1:] - p[-2:-1]])
    out = []
    for i in range(len(p) - 1):
        p0, p1, p2, p3 = ext[i:i + 4]
        t0 = 0.0
        t1 = t0 + max(np.linalg.norm(p1 - p0), 1e-9) ** 0.5
        t2 = t1 + max(np.linalg.norm(p2 - p1), 1e-9) ** 0.5
        t3 = t2 + max(np.linalg.norm(p3 - p2), 1e-9) ** 0.5
        t = np.linspace(t1, t2, n + 1)[:, None][: None if i == len(p) - 2 else -1]
        a1 = (t1 - t) / (t1 - t0) * p0 + (t - t0) / (t1 - t0) * p1
        a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
        a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
        b1 = (t2 - t) / (t2 - t0) * a1 + (t - t0) / (t2 - t0) * a2
        b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
        out.append((t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2)
    return np.concatenate(out)


def test_splines_equal_their_segment_by_segment_reference():
    from kernels.templates import catmull_rom
    for seed in range(500):
        g = np.random.default_rng(seed)
        p = g.random((int(g.integers(2, 12)), 2)) * g.choice([1e-3, 1.0, 10.0])
        if seed % 10 == 0:
            p[1] = p[0]                                   # a repeated point: the 1e-9 floor
        n = int(g.integers(1, 20))
        assert np.array_equal(catmull_rom(p, n), _catmull_rom_reference(p, n)), seed
    # a segment whose parameter interval vanishes beside a huge jump (its own samples are not
    # numbers) leaves the other segments' samples as they were
    p = np.array([[0, 0], [1, .3], [2, -.5], [3, 1], [4, 0], [1e24, 0], [1e24, 0], [1e24, 1]])
    with np.errstate(all="ignore"):
        for n in (7, 12):
            assert catmull_rom(p, n).tobytes() == _catmull_rom_reference(p, n).tobytes()


def test_elvis_placement_refuses_radii_that_are_not_finite():
    from scenes.elvis import geometry as geo
    with pytest.raises(ValueError, match="radii must be finite"):
        geo.place(np.random.default_rng(0), [0.05, float("nan")], geo.in_box(0, 0, 1, 1), 0.01)


def test_draw_shapes_pushes_the_primitives_draw_shape_would():
    """The many-at-once path equals one draw_shape call per shape, field by field (signed
    zero rotations included), and a bad value gets the one-at-a-time error."""
    from engine.scene import Scene
    from engine.shapes import SHAPES, draw_shape, draw_shapes

    rng = np.random.default_rng(4)
    n = 300
    names = [SHAPES[i] for i in rng.integers(len(SHAPES), size=n)]
    centers = rng.uniform(-0.2, 1.2, (n, 2))
    radii = rng.uniform(0, 0.3, n)
    radii[:3] = 0.0
    rots = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(-400, 400, n))
    colours = [tuple(int(v) for v in rng.integers(0, 256, 3)) for _ in range(n)]
    colours[5] = [10, 20, 30]                                      # a list is a colour too
    colours[6:9] = [(1, 1, 1), (1.0, 1.0, 1.0), [1.0, 0, 0]]       # ints 0..255 and floats 0..1 differ
    fast, slow = Scene(), Scene()
    draw_shapes(fast, names, centers, radii, colours, rots)
    for i in range(n):
        draw_shape(slow, names[i], (float(centers[i, 0]), float(centers[i, 1])), float(radii[i]), colours[i],
                   rotation=float(rots[i]))
    assert len(fast.primitives) == n
    for a, b in zip(fast.primitives, slow.primitives):
        assert repr(tuple(a)[:-2]) == repr(tuple(b)[:-2]) and a.index == b.index
        assert a.verts is b.verts or np.array_equal(a.verts, b.verts)
        assert math.copysign(1.0, a.rotation) == math.copysign(1.0, b.rotation)
    two = {"shapes": ["circle"] * 2, "centers": [[0.5, 0.5]] * 2, "radii": [0.1] * 2, "rotations": [0.0] * 2}
    for bad, match in (({**two, "colors": [(2, 0, 0), (2.0, 0.0, 0.0)]}, "colour"), ({"radii": [-1.0]}, "radius"),
                       ({"centers": [[np.nan, 0.5]]}, "center"), ({"shapes": ["blob"]}, "blob"),
                       ({"rotations": [np.inf]}, "rotation")):
        args = {"shapes": ["circle"], "centers": [[0.5, 0.5]], "radii": [0.1], "colors": [(1, 2, 3)],
                "rotations": [0.0], **bad}
        with pytest.raises(ValueError, match=match):
            draw_shapes(Scene(), args["shapes"], args["centers"], args["radii"], args["colors"], args["rotations"])
