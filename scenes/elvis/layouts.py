"""What the ELVIS layouts share (they are drawn a batch at a time: :mod:`.batched`,
:mod:`.continuity`, :mod:`.cutouts`): size limits, the closure figures' slots and cut
constants, and the near-miss search that moves a stretch of a broken outline.

A principle negative is a near miss: the positive's objects, count and spacing, with only
the relation broken (a kinked or misaligned curve, a displaced stretch of an outline, turned
inducers, notches instead of one circle's cut, one cluster or colour group more or fewer, a
bridged grid), so that statistics blind to the rule cannot tell the two apart (``procvis
audit`` measures it).
"""
from __future__ import annotations

import math

import numpy as np

from engine.placement import PlacementError
from kernels import outline_stats as ks

from .attributes import SIZES

CANONICAL_AXES = (0, 45, 90, 135)
MIN_DIAMETER = 4.5 / 224          # no object smaller than 4.5 px at 224 px


# the narrowest side of each shape's drawn box over all rotations, as a share of its bounding
# disc's diameter (measured from pixels at 224 px); the shape is drawn large enough that this
# side is at least ``MIN_NARROW``
NARROW = {"triangle": 0.75, "square": 0.71, "cross": 0.72, "plus": 0.72, "diamond": 0.61, "heart": 0.64,
          "spade": 0.6, "club": 0.61, "star": 0.7}     # a small star keeps only its core
MIN_NARROW = 5 / 224


class _Narrowest(dict):
    """Shape -> the least radius that lets its narrowest side reach :data:`MIN_NARROW`."""

    def __missing__(self, shape):
        self[shape] = value = MIN_NARROW / (2 * NARROW.get(shape, 1.0))
        return value


_NARROWEST = _Narrowest()


# ---------------------------------------------------------------- closure

FIGURE_RADIUS = {1: 0.3, 2: 0.16, 3: 0.14, 4: 0.115, 5: 0.1}
SMALLEST_FIGURE = 0.8       # a figure's radius varies from this share of its slot's to all of it
CLOSURE_BASE = 0.12 / (2 * SIZES["large"])   # largest base of the illusory figures: a large inducer is 12% wide,
                                             # the paper's largest closure object


SLOTS = {1: [(0.5, 0.5)], 2: [(0.26, 0.26), (0.74, 0.74)], 3: [(0.27, 0.28), (0.73, 0.28), (0.5, 0.73)],
         4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
         5: [(0.22, 0.22), (0.78, 0.22), (0.22, 0.78), (0.78, 0.78), (0.5, 0.5)]}


MISALIGN = (25.0, 40.0)       # degrees a broken figure's inducers turn away from its centre, either way
BITE = (0.4, 0.62)            # share of a shape's extent the illusory circle cuts away (depth of the cut), per shape
MIN_CUT = 4.5 / 224           # a cut at least this deep (4.5 px at 224 px), however small the shape
# how far each shape's drawing reaches from its centre, in its radius: halfway between the least and
# the mean over rotations (from pixels), so that a cut takes a visible part of the shape and never
# most of it, however it is turned
REACH = {"triangle": 0.66, "square": 0.8, "pentagon": 0.87, "hexagon": 0.9, "star": 0.87, "cross": 0.74,
         "plus": 0.72, "diamond": 0.68, "heart": 0.56, "spade": 0.58, "club": 0.64}
NOTCH = (0.35, 1.15)          # a broken figure's notch: its radius, in the figure's cut radius, and its depth, in
                              # the cut's (a smaller disc cuts deeper to take about as much ink)


# ---------------------------------------------------------------- near misses

CANDIDATES = 12              # near misses tried per broken outline or curve; the least conspicuous is kept
STRETCH = (0.25, 0.4)        # share of an outline's objects a broken outline moves
DISPLACE = (0.25, 0.4)       # how far they move, in figure radii, out of or into the figure
SCALES = (0.85, 1.15)        # sizes a broken figure may be redrawn at, in its radius


def _mean_nn(c: np.ndarray) -> float:
    """The mean nearest-neighbour distance of centres ``(n, 2)``."""
    return ks.mean_nearest(c)


def _spread(c: np.ndarray) -> float:
    """The RMS distance of centres ``(n, 2)`` from their mean."""
    if c.dtype == np.float64 and c.flags.c_contiguous:      # the kernel sums in this layout's order
        return ks.spread(c)
    return float(np.sqrt(((c - c.mean(0)) ** 2).sum(1).mean()))


def _displace_stretch(rng: np.random.Generator, c: np.ndarray, radius: np.ndarray, first: int, n: int,
                      centre: np.ndarray, R: float, sizes: tuple[float, float]) -> dict:
    """Move a contiguous stretch of the outline objects ``c[first:first + n]`` (in place)
    straight out of or into the figure (which of the two is drawn first, as often each), so
    that the outline has two open ends: the stretch keeps its spacing and the object count
    is unchanged. The broken figure may then be drawn at another size within ``sizes`` (the
    radii positives take). Of several candidates that keep objects apart and on the canvas,
    the one that changes the mean nearest-neighbour distance and the spread of all centres
    least (relative to each) is kept, so that the scene's statistics stay those of a
    positive. Returns what moved and the figure's new radius."""
    nn0, spread0 = _mean_nn(c), _spread(c)
    sign = 1 if rng.random() < 0.5 else -1
    lo, hi = max(SCALES[0], sizes[0] / R), min(SCALES[1], sizes[1] / R)
    # CANDIDATES draws on the chosen side; only when none fits, as many on the other side
    for _ in range(2):
        starts, lengths, ds = np.empty(CANDIDATES, np.int64), np.empty(CANDIDATES, np.int64), np.empty(CANDIDATES)
        for a in range(CANDIDATES):                    # in the order the draws were always made
            lengths[a] = max(2, int(round(n * rng.uniform(*STRETCH))))
            starts[a] = int(rng.integers(n))
            ds[a] = float(rng.uniform(*DISPLACE)) * R * sign
        # each stretch's direction from the centre: ``c[idx].mean(0) - centre`` (compiled, all at once) over
        # ``np.linalg.norm`` as numpy computes it: its BLAS dot fuses the multiply-add on some machines only
        u = ks.stretch_mids(c, first, n, starts, lengths, float(centre[0]), float(centre[1]))
        for mid in u:
            norm = max(math.sqrt(mid.dot(mid)), 1e-9)
            mid[0], mid[1] = float(mid[0] / norm), float(mid[1] / norm)
        # each candidate moves its stretch out of (or into) the figure, then tries the sizes that give
        # back the positive's nearest-neighbour distance or spread; the ratio of the two counts
        # double, since in positives they grow together with the figure (kernels.outline_stats.best_stretch)
        found, a, scale, cand = ks.best_stretch(c, first, n, starts, lengths, u, ds, np.asarray(centre, np.float64),
                                                nn0, spread0, lo, hi, radius, 0.004, 0.005, 0.995)
        if found:
            c[:] = cand
            start, k, d = int(starts[a]), int(lengths[a]), float(ds[a])
            return {"objects": [(start + j) % n for j in range(k)], "distance": round(d * scale, 4),
                    "radius": scale * R}
        sign = -sign                                   # no room on the drawn side: try the other
    raise PlacementError("no stretch can move off the outline")
