"""The continuity categories' curve helpers, drawn for many curves at once, against the plain
one-curve versions (the spline kernel, ``np.interp``, the scalar spacing formula); and a
broken curve is one the pixels show broken."""
import math

import numpy as np
import pytest

from engine.registry import resolve
from kernels.templates import catmull_rom
from scenes.elvis import continuity as cv
from scenes.elvis import geometry as geo


def _control(rng, shape, points):
    return rng.uniform(0.05, 0.95, shape + (points, 2))


@pytest.mark.parametrize("points", [3, 4, 5, 7])
def test_splines_match_the_one_curve_kernel(points):
    rng = np.random.default_rng(points)
    ctrl = _control(rng, (6, 3), points)
    ctrl[0, 0, 1] = ctrl[0, 0, 0]                      # a repeated control point (a zero step)
    got = cv.splines(ctrl)
    assert got.shape == (6, 3, (points - 1) * cv.PER_SEGMENT + 1, 2)
    for b in range(6):
        for c in range(3):
            want = catmull_rom(ctrl[b, c], cv.PER_SEGMENT)
            assert np.allclose(got[b, c], want, rtol=0, atol=1e-12), (b, c)


def test_splines_refuse_too_few_points():
    with pytest.raises(ValueError, match=r"P >= 3"):
        cv.splines(np.zeros((4, 2, 2)))


def test_arc_helpers_match_one_curve_at_a_time():
    rng = np.random.default_rng(5)
    curves = cv.splines(_control(rng, (5, 4), 5))
    s = cv.arcs(curves)
    n = rng.integers(2, 14, (5, 4))
    start = rng.uniform(0, 0.1, (5, 4))
    t = rng.uniform(-0.1, 1.1, (5, 4, 9)) * s[..., -1:]
    pts = cv.at_arc(curves, s, t)
    spaced = cv.resampled(curves, s, n, start, 14)
    centre = cv.nearest_arc(curves, s, (0.5, 0.5))
    inner = rng.uniform(0.01, 0.99, (5, 4, 9)) * s[..., -1:]
    normal = cv.normals(curves, s, inner)
    for b in range(5):
        for c in range(4):
            one = curves[b, c]
            assert np.isclose(s[b, c, -1], geo.arc_length(one), rtol=0, atol=1e-12)
            assert np.allclose(pts[b, c], geo.at_arc(one, t[b, c]), rtol=0, atol=1e-12)
            m = int(n[b, c])
            assert np.allclose(spaced[b, c, :m], geo.resample(one, m, start[b, c]), rtol=0, atol=1e-12)
            assert centre[b, c] == pytest.approx(geo.arc_of(one, (0.5, 0.5)), abs=1e-12)
            ahead = geo.at_arc(one, inner[b, c] + 1e-3) - geo.at_arc(one, inner[b, c] - 1e-3)
            ahead /= np.linalg.norm(ahead, axis=1, keepdims=True)
            assert np.allclose(normal[b, c], np.stack([-ahead[:, 1], ahead[:, 0]], 1), rtol=0, atol=1e-9)


def test_curves_through_the_centre_are_the_plain_control_points():
    rng = np.random.default_rng(29)
    angle = rng.uniform(-400, 400, (50, 3))
    half = rng.uniform(0.1, 0.5, (50, 3))
    bend = rng.uniform(-0.04, 0.04, (50, 3, 2))
    got = cv.through(angle, half, bend)
    centre = np.array([0.5, 0.5])
    for b in range(50):
        for c in range(3):
            rad = math.radians(angle[b, c])
            u, nrm = np.array([math.cos(rad), -math.sin(rad)]), np.array([math.sin(rad), math.cos(rad)])
            b1, b2 = bend[b, c]
            want = [centre - half[b, c] * u, centre - 0.2 * u + b1 * nrm, centre, centre + 0.2 * u + b2 * nrm,
                    centre + half[b, c] * u]
            assert np.allclose(got[b, c], want, rtol=0, atol=1e-15)


def test_points_around_a_crossing_follow_the_spacing_rule():
    rng = np.random.default_rng(24)
    length = rng.uniform(0.5, 1.0, 400)
    at = rng.uniform(0.3, 0.7, 400) * length
    hole = rng.uniform(0, 0.2, 400) * length
    reserve = rng.uniform(0, 0.05, 400)
    n = rng.integers(1, 15, 400)
    arcs, step = cv.around(length, n, at, hole, reserve, 14)
    for k in range(400):
        first, second = (n[k] + 1) // 2, n[k] // 2
        want_step = min((at[k] - hole[k] / 2 - reserve[k]) / max(first - 1, 1),
                        (length[k] - at[k] - hole[k] / 2 - reserve[k]) / max(second - 1, 1))
        assert step[k] == pytest.approx(want_step, abs=1e-15)
        if want_step <= 0:
            continue
        want = np.concatenate([at[k] - hole[k] / 2 - want_step * np.arange(first)[::-1],
                               at[k] + hole[k] / 2 + want_step * np.arange(second)])
        assert np.allclose(arcs[k, :n[k]], want, rtol=0, atol=1e-14)


def _turns_and_steps(p):
    v = np.diff(p, axis=0)
    steps = np.hypot(*v.T)
    turn = np.degrees(np.abs(np.arctan2(v[1:, 0] * v[:-1, 1] - v[1:, 1] * v[:-1, 0], (v[1:] * v[:-1]).sum(1))))
    return turn, steps


@pytest.mark.parametrize("category", ["one_split_n", "intersected_splines", "non_intersected_splines",
                                      "overlap_splines"])
def test_a_principle_negative_has_a_curve_broken_where_it_says(category):
    """Each break recorded in a principle negative is visible in the objects' centres: a
    turn of at least the kink's least angle, or a step off the curve's own spacing; every
    positive's curves turn gently and keep their spacing (away from the crossing)."""
    tasks = resolve(f"elvis/continuity/{category}*")
    seen = 0
    for task in tasks[:: max(1, len(tasks) // 6)]:
        for s in task.samples(4, range(12)):
            objs, breaks = s.meta["objects"], s.meta["structure"]["breaks"]
            if s.meta["label"] == 1 or s.meta["negative"] == "attribute":
                assert breaks == []
                continue
            assert breaks
            for br in breaks:
                p = np.array([o["center"] for o in objs if o["group"] == br["curve"]])
                turn, steps = _turns_and_steps(p)
                at = br["at"]
                if br["kind"] == "kink":
                    assert turn[at - 1] >= cv.KINK[0] - 1, (s.id, br, turn)
                else:
                    side = np.hypot(*(p[at + 1] - p[at]))
                    assert abs(side - np.median(steps)) > 0.3 * np.median(steps) or turn[at - 1] > 30, (s.id, br)
                seen += 1
    assert seen >= 6


def test_the_repeated_curve_lies_beside_its_original():
    """overlap_splines: the repeat (the last group) keeps the offset from its original's
    objects, half a step along, and its objects are marked where they overlap."""
    for s in resolve("elvis/continuity/overlap_splines*")[0].samples(2, range(0, 12, 2)):
        objs = s.meta["objects"]
        last = max(o["group"] for o in objs)
        twin = np.array([o["center"] for o in objs if o["group"] == last])
        first = np.array([o["center"] for o in objs if o["group"] == 0])
        d = np.hypot(*(twin[:, None] - first[None]).transpose(2, 0, 1)).min(1)
        step = np.median(np.hypot(*np.diff(first, axis=0).T))
        assert np.all(d < math.hypot(step / 2, cv.OFFSET) * 1.2), s.id
        assert np.all(d > cv.OFFSET * 0.5), s.id
