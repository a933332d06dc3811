"""ELVIS layouts drawn one image at a time (feature_circle; the other categories are drawn
a batch at a time in :mod:`.batched`, :mod:`.continuity` and :mod:`.pacmen`), and the
helpers they share: where each object goes, its group, and what breaks the principle.

Every layout function takes a :class:`Context` and returns a :class:`Layout`. When
``ctx.principle`` is False the layout is drawn so that the Gestalt relation does not hold,
with the same attributes. It is a near miss: the positive's objects, count and spacing,
with only the relation broken (a kinked or misaligned curve, a displaced stretch of an
outline, turned inducers, notches instead of one circle's cut, one cluster or colour group
more or fewer, a bridged grid), so that statistics blind to the rule cannot tell the two
apart (``procvis audit`` measures it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from engine.placement import PlacementError
from kernels import outline_stats as ks

from . import geometry as geo
from .attributes import BACKGROUND, SIZES, assign
from .factors import CATEGORIES, Factors

CANONICAL_AXES = (0, 45, 90, 135)
MIN_DIAMETER = 4.5 / 224          # no object smaller than 4.5 px at 224 px


@dataclass
class Layout:
    """Objects (parallel lists) plus what is drawn behind and in front of them."""

    shape: list
    color: list
    size: list
    radius: np.ndarray
    centers: np.ndarray
    groups: list
    rotation: list = None
    extra: list = None                                     # per object: pac-man direction/mouth, overlaps
    behind: list = field(default_factory=list)             # [{"kind": "disc", "center", "radius", "rgb"}]
    front: list = field(default_factory=list)              # occluders, drawn after the objects
    info: dict = field(default_factory=dict)               # structure: axis, figures, curves, ...
    rgb: list = None                                       # per-object RGB when not the named colour's


@dataclass
class Context:
    """What a layout needs: the generator, the task's factors, and which constraints to break."""

    rng: np.random.Generator
    f: Factors
    principle: bool                       # keep the Gestalt relation
    broken: tuple = ()                    # relevant properties to violate (attribute negatives)

    @property
    def cat(self):
        return CATEGORIES[self.f.category]

    @property
    def allowed(self) -> dict:
        return self.cat.values

    def broken_groups(self, n: int) -> set:
        """A non-empty random subset of ``range(n)``."""
        hit = {g for g in range(n) if self.rng.random() < 0.5}
        return hit or {int(self.rng.integers(n))}

    def attributes(self, groups, rule=None, per_group=(), cue=None, behind=(BACKGROUND,)):
        rule = [True] * len(groups) if rule is None else rule
        ng = max(groups) + 1
        broken = {p: self.broken_groups(ng) for p in self.broken if p in ("shape", "color", "size")}
        return assign(self.rng, self.f, self.allowed, groups, rule, broken, behind, per_group, cue)


# the narrowest side of each shape's drawn box over all rotations, as a share of its bounding
# disc's diameter (measured from pixels at 224 px); the shape is drawn large enough that this
# side is at least ``MIN_NARROW``
NARROW = {"triangle": 0.75, "square": 0.71, "cross": 0.72, "plus": 0.72, "diamond": 0.61, "heart": 0.64,
          "spade": 0.6, "club": 0.61, "star": 0.7}     # a small star keeps only its core
MIN_NARROW = 5 / 224


def _radii(sizes, base: float, shapes=None) -> np.ndarray:
    """Bounding-disc radii of objects of the size classes ``sizes`` at ``base``; with
    ``shapes``, no narrower than lets each shape's narrowest side reach :data:`MIN_NARROW`."""
    if shapes is None:
        return np.array([base * SIZES[s] for s in sizes])
    # ``np.maximum`` of the two per object, in plain floats (radii are finite: no NaN rule)
    return np.array([max(base * SIZES[s], _NARROWEST[sh]) for s, sh in zip(sizes, shapes)], dtype=np.float64)


class _Narrowest(dict):
    """Shape -> the least radius that lets its narrowest side reach :data:`MIN_NARROW`."""

    def __missing__(self, shape):
        self[shape] = value = MIN_NARROW / (2 * NARROW.get(shape, 1.0))
        return value


_NARROWEST = _Narrowest()


def _objects(ctx: Context, groups, base: float, **kw) -> dict:
    a = ctx.attributes(groups, **kw)
    return dict(shape=a["shape"], color=a["color"], size=a["size"], radius=_radii(a["size"], base, a["shape"]))


# pacman is drawn a batch at a time (:mod:`.pacmen`)


# ---------------------------------------------------------------- closure

FIGURE_RADIUS = {1: 0.3, 2: 0.16, 3: 0.14, 4: 0.115, 5: 0.1}
SMALLEST_FIGURE = 0.8       # a figure's radius varies from this share of its slot's to all of it
CLOSURE_BASE = 0.12 / (2 * SIZES["large"])   # largest base of the illusory figures: a large inducer is 12% wide,
                                             # the paper's largest closure object


SLOTS = {1: [(0.5, 0.5)], 2: [(0.26, 0.26), (0.74, 0.74)], 3: [(0.27, 0.28), (0.73, 0.28), (0.5, 0.73)],
         4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
         5: [(0.22, 0.22), (0.78, 0.22), (0.22, 0.78), (0.78, 0.78), (0.5, 0.5)]}


def _figures(ctx: Context, n: int, extent, gap: float = 0.01) -> np.ndarray:
    """Centres of ``n`` non-overlapping discs of radius ``extent`` (a number or one per disc)
    at least ``gap`` apart: fixed slots (turned by a random multiple of 90 degrees) with as
    much jitter as the room allows."""
    rng = ctx.rng
    ext = np.broadcast_to(np.asarray(extent, dtype=float), (n,))
    base = geo.rotate(np.array(SLOTS[n]), np.array([0.5, 0.5]), 90.0 * int(rng.integers(4)))
    for scale in (0.08, 0.04, 0.02, 0.0):
        c = base + rng.uniform(-scale, scale, base.shape)
        inside = ((c - ext[:, None] >= 0.005) & (c + ext[:, None] <= 0.995)).all()
        # every pair apart; a disc counts as 9 away from itself, so an extent over 4.5 never fits
        if inside and ks.apart(c, ext, gap) and (9.0 >= ext + ext + gap).all():
            return c
    raise PlacementError(f"{n} discs of extent up to {ext.max():.3f} do not fit")


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


def _turns(ctx: Context, n_figures: int, per_figure: int) -> list[list[float]]:
    """Degrees each inducer turns away from facing its figure's centre: 0 in a positive; in a
    principle negative every inducer of a non-empty random subset of figures turns by
    :data:`MISALIGN`, all of a figure's the same way (a pinwheel), so that edges no longer
    line up, while each inducer still roughly faces the centre: its ink sits where a
    positive's does and neighbouring inks keep their spacing (turned different ways they
    would move towards or away from each other), so that statistics blind to the alignment
    cannot tell the two apart."""
    out = [[0.0] * per_figure for _ in range(n_figures)]
    if not ctx.principle:
        for g in sorted(ctx.broken_groups(n_figures)):
            sign = 1 if ctx.rng.random() < 0.5 else -1
            out[g] = [float(ctx.rng.uniform(*MISALIGN)) * sign for _ in range(per_figure)]
    return out


# feature_triangle and feature_square are drawn a batch at a time (:mod:`.pacmen`)


def feature_circle(ctx: Context) -> Layout:
    """Four shapes around each figure's centre. In a positive one disc of the background
    colour, centred on the figure, cuts :data:`BITE` of each shape's extent away: the cuts lie
    on one circle. In a principle negative each shape of a broken figure is notched instead by
    its own small disc (:data:`NOTCH`), facing the centre but turned by :data:`MISALIGN`: each
    shape loses as much ink as a positive's, on its inner side, but the arcs belong to no
    common circle."""
    f, rng = ctx.f, ctx.rng
    R0 = FIGURE_RADIUS[f.groups]          # larger than CLOSURE_BASE allows where few: so that the cut reads
    base = 0.3 * R0
    groups = [g for g in range(f.groups) for _ in range(4)]
    obj = _objects(ctx, groups, base)
    reach = R0 - (1 - BITE[1]) * base + (2 - BITE[0]) * obj["radius"].max()   # the farthest a shape's edge gets
    centres = _figures(ctx, f.groups, reach)
    turns = _turns(ctx, f.groups, 4)
    c, front, figs = [], [], []
    for g in range(f.groups):
        rot = float(rng.uniform(0, 90))
        cut = R0 * float(rng.uniform(SMALLEST_FIGURE, 1.0)) - (1 - BITE[1]) * base
        r = obj["radius"][g * 4:g * 4 + 4]
        edge = r * np.array([REACH.get(sh, 1.0) for sh in obj["shape"][g * 4:g * 4 + 4]])
        depth = np.clip(rng.uniform(*BITE, 4) * edge, MIN_CUT, 0.6 * edge)
        ang = np.radians(rot + 45.0 + 90.0 * np.arange(4))
        u = np.stack([np.cos(ang), -np.sin(ang)], 1)
        pts = centres[g] + u * (cut + edge - depth)[:, None]    # each shape reaches ``depth`` into the disc
        c.extend(pts)
        figs.append({"center": centres[g].tolist(), "radius": float(cut + (1 - BITE[1]) * base), "rotation": rot,
                     "cut": float(cut)})
        if not any(turns[g]):
            front.append({"kind": "disc", "center": centres[g].tolist(), "radius": float(cut),
                          "rgb": list(BACKGROUND)})
            continue
        figs[-1]["turned"] = [round(t, 2) for t in turns[g]]
        for k in range(4):
            towards = geo.rotate(-u[k][None], np.zeros(2), turns[g][k])[0]
            rho = NOTCH[0] * cut
            front.append({"kind": "disc", "center": (pts[k] + towards * (rho + edge[k] - NOTCH[1] * depth[k])).tolist(),
                          "radius": float(rho), "rgb": list(BACKGROUND), "notch": g * 4 + k})
    c = np.array(c)
    for o in front:                          # a notch bites its own shape only
        d = np.hypot(*(c - np.asarray(o["center"])).T) - obj["radius"] - o["radius"]
        if "notch" in o and (d < 0.004).sum() > 1:
            raise PlacementError("a notch reaches a neighbouring shape")
    rotation = [float(rng.uniform(0, 360)) for _ in groups]
    return Layout(**obj, centers=c, groups=groups, rotation=rotation, front=front, info={"figures": figs})


# objects per outline: a range per quantity, so that how closely the objects sit is not fixed by
# the figure's size (in a broken outline both change)
# the big outlines (big_triangle, big_square, big_circle) are drawn a batch at a time (:mod:`.batched`),
# whose near-miss search for their negatives is _displace_stretch below


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
    best = None
    for attempt in range(2 * CANDIDATES):
        if attempt == CANDIDATES:
            if best is not None:
                break
            sign = -sign                                 # no room on the drawn side: try the other
        k = max(2, int(round(n * rng.uniform(*STRETCH))))
        start = int(rng.integers(n))
        # the stretch ``c[first + (start + j) % n]``, j < k: ``mid`` its ``c[idx].mean(0)`` as numpy computes it
        mid = ks.stretch_mid(c, first, n, start, k, float(centre[0]), float(centre[1]))
        norm = max(math.sqrt(mid.dot(mid)), 1e-9)             # ``np.linalg.norm(mid)``, likewise
        d = float(rng.uniform(*DISPLACE)) * R * sign
        # ``moved[idx] += (mid / norm) * d`` on a copy of ``c``, with its statistics;
        # redrawn at scale s, a lone figure's distances all scale by s: the sizes that give back
        # the positive's nearest-neighbour distance or spread (and the drawn size) are the ones to try
        moved, nn1, spread1 = ks.stretched(c, first, n, start, k, float(mid[0] / norm), float(mid[1] / norm), d)
        for scale in sorted({_clip(v, lo, hi) for v in (1.0, nn0 / nn1, spread0 / spread1,
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
                best = (cost, cand, {"objects": [(start + j) % n for j in range(k)], "distance": round(d * scale, 4)},
                        scale * R)
    if best is None:
        raise PlacementError("no stretch can move off the outline")
    c[:] = best[1]
    return {**best[2], "radius": best[3]}


def _clip(v: float, lo: float, hi: float) -> float:
    """``v`` clipped to ``lo..hi`` as ``float(np.clip(v, lo, hi))`` gives it (NaN stays NaN)."""
    return v if v != v else min(max(v, lo), hi)


# ---------------------------------------------------------------- drawn a batch at a time

# proximity, fixed_number, palette, the big outlines and symmetry are drawn a batch at a time in
# :mod:`.batched`, continuity in :mod:`.continuity`
LAYOUTS = {name: globals()[name] for name in CATEGORIES if name in globals()}
