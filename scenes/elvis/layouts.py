"""Per-category ELVIS layouts: where each object goes, its group, and what breaks the principle.

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
from kernels.templates import catmull_rom

from . import geometry as geo
from .attributes import BACKGROUND, SIZES, assign, named_colours, pick
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

    def task_count(self, lo: int, hi: int) -> int:
        """The count a relevant ``count`` rule asks for: the middle of the quantity range."""
        return (lo + hi) // 2

    def group_sizes(self, n_groups: int, lo: int, hi: int) -> list[int]:
        """Objects per group within ``lo..hi``, following the ``count`` mode when the category
        has one (relevant: the task's count; irrelevant: one count per image; random: unequal)."""
        rng = self.rng
        if "count" not in self.cat.props:
            return [int(rng.integers(lo, hi + 1)) for _ in range(n_groups)]
        mode = self.f.mode("count")
        if mode == "relevant":
            n = self.task_count(lo, hi)
            sizes = [n] * n_groups
            if "count" in self.broken:
                others = [v for v in range(max(2, lo - 1), hi + 2) if v != n]
                hit = sorted(self.broken_groups(n_groups))
                for g in hit:
                    sizes[g] = pick(rng, others)
                if len(set(sizes)) == 1:          # every group changed alike: keep one at n
                    sizes[hit[0]] = n
            return sizes
        if mode == "irrelevant":
            return [int(rng.integers(lo, hi + 1))] * n_groups
        sizes = [int(rng.integers(lo, hi + 1)) for _ in range(n_groups)]
        if len(set(sizes)) == 1:
            sizes[0] = lo if sizes[0] != lo else hi
        return sizes

    def attributes(self, groups, rule=None, per_group=(), cue=None, behind=(BACKGROUND,)):
        rule = [True] * len(groups) if rule is None else rule
        ng = max(groups) + 1
        broken = {p: self.broken_groups(ng) for p in self.broken if p in ("shape", "color", "size")}
        return assign(self.rng, self.f, self.allowed, groups, rule, broken, behind, per_group, cue)

    def axis(self, allowed: float, alternative: float | None = None) -> float:
        """The symmetry axis (degrees) following the ``axis`` mode."""
        mode = self.f.mode("axis")
        if mode == "relevant":
            if "axis" in self.broken:
                return float(alternative if alternative is not None
                             else pick(self.rng, [a for a in CANONICAL_AXES if a != allowed]))
            return float(allowed)
        if mode == "irrelevant":
            return float(pick(self.rng, CANONICAL_AXES))
        return float(self.rng.uniform(0, 180))


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


def _flat(sizes) -> list[int]:
    return [g for g, n in enumerate(sizes) for _ in range(n)]


# ---------------------------------------------------------------- proximity

def _packed(radii, gap: float = 0.008) -> float:
    """The radius of the disc that ``radii`` (with ``gap`` around each) fill at a cluster's density."""
    # plain floats: ``**`` is the C library's pow for them as for numpy's scalars (not ``x * x``)
    return math.sqrt(sum((r + gap) ** 2 for r in _floats(radii)) / 0.42)


def _room(radii) -> float:
    """The smallest disc radius a placement in it can hold the largest of ``radii`` anywhere
    (:func:`geometry.in_disc` keeps centres a radius from the middle)."""
    return 2 * max(_floats(radii)) + 0.004


def _floats(values) -> list:
    """``values`` (an array or a sequence) as a list of plain floats."""
    return values.tolist() if isinstance(values, np.ndarray) else [float(v) for v in values]


def _clusters(ctx: Context, radii, groups, n_groups, gap_in=0.008, gap_out=0.1) -> np.ndarray:
    """Objects packed into ``n_groups`` compact, well separated clusters."""
    rng = ctx.rng
    ga = np.asarray(groups)
    idx = [np.nonzero(ga == g)[0] for g in range(n_groups)]
    cr = np.array([max(_packed(radii[ix], gap_in), _room(radii[ix])) for ix in idx])   # a cluster of one included
    # clusters anywhere (not at fixed slots), so that how far the objects spread does not
    # tell how many clusters there are
    centres = geo.place(rng, cr, geo.in_box(0.01, 0.01, 0.99, 0.99), gap_out)
    out = np.zeros((len(radii), 2))
    for g, ix in enumerate(idx):
        out[ix] = geo.place(rng, radii[ix], geo.in_disc(*centres[g], cr[g]), gap_in)
    return out


def _check_grouping(ctx: Context, centers, n_groups) -> None:
    m = geo.mst_margin(centers, n_groups)
    if ctx.principle and m < 1.8:
        raise PlacementError("clusters not separated enough")
    if not ctx.principle and m >= 1.5:
        raise PlacementError("spread objects still look grouped")


PLACE_TRIES = 6              # placements tried with the same objects before new ones are drawn


def _grouped(ctx: Context, radii, groups, n_groups) -> tuple[np.ndarray, int]:
    """Centres in ``n_groups`` separated clusters of the given ``groups`` when the principle
    holds; else the same objects regrouped into one cluster more or one fewer (a near miss:
    the clusters look like a positive's, but their number and membership break the rule).
    Placement is tried a few times with the same objects before giving up, so that which
    objects a scene holds does not depend on how easily they are placed. Returns the centres
    and the number of clusters drawn."""
    for _ in range(PLACE_TRIES - 1):
        try:
            return _grouped_once(ctx, radii, groups, n_groups)
        except PlacementError:
            pass
    return _grouped_once(ctx, radii, groups, n_groups)


def _grouped_once(ctx: Context, radii, groups, n_groups) -> tuple[np.ndarray, int]:
    if ctx.principle:
        c = _clusters(ctx, radii, groups, n_groups)
        _check_grouping(ctx, c, n_groups)
        return c, n_groups
    options = [k for k in (n_groups - 1, n_groups + 1) if 2 <= k <= min(5, len(radii))]
    k = pick(ctx.rng, options)
    member = np.zeros(len(radii), int)
    for j, ix in enumerate(np.array_split(ctx.rng.permutation(len(radii)), k)):
        member[ix] = j
    c = _clusters(ctx, radii, member.tolist(), k)
    if geo.mst_margin(c, k) < 1.8:
        raise PlacementError("clusters not separated enough")
    if geo.mst_margin(c, n_groups) >= 1.5:        # two clusters close enough to read as one: G clusters again
        raise PlacementError("the regrouped clusters still look like the rule's")
    return c, k


# red_triangle and fixed_props are drawn a batch at a time (:mod:`.batched`)


# grid and circle_features are drawn a batch at a time (:mod:`.batched`)


# ---------------------------------------------------------------- similarity

def _jitter(ctx: Context, colours) -> list:
    """Per-object shades of each group's colour (the similarity cue drawn per object)."""
    out, table = [], named_colours()
    for c in colours:
        # ``np.clip(rgb + u, 0, 255)`` in plain floats: the same sums, clipped alike
        out.append([int(min(max(v + d, 0.0), 255.0)) for v, d in zip(table[c], ctx.rng.uniform(-12, 12, 3).tolist())])
    return out


# fixed_number is drawn a batch at a time (:mod:`.batched`)


PACMAN_COUNTS = {"s": (2, 4), "m": (5, 7), "l": (8, 10)}
PACMAN_BASE = {"s": 0.045, "m": 0.038, "l": 0.032}
MOUTH = 70.0


def pacman(ctx: Context) -> Layout:
    f, rng = ctx.f, ctx.rng
    sizes = ctx.group_sizes(f.groups, *PACMAN_COUNTS[f.quantity])
    groups = _flat(sizes)
    obj = _objects(ctx, groups, PACMAN_BASE[f.quantity], per_group=("color",))
    obj["shape"] = ["pacman"] * len(groups)
    dirs = [45.0 * int(d) for d in rng.permutation(8)[:f.groups]]
    direction = [dirs[g] for g in groups]
    if not ctx.principle:
        for _ in range(100):
            direction = [45.0 * int(d) for d in rng.integers(0, 8, len(groups))]
            mixed = any(len({direction[i] for i in range(len(groups)) if groups[i] == g}) > 1 for g in range(f.groups))
            if mixed and len(set(direction)) > f.groups:
                break
        else:
            raise PlacementError("could not mix the directions")
    c = geo.place(rng, obj["radius"], geo.in_box(0.02, 0.02, 0.98, 0.98), 0.025)
    return Layout(**obj, centers=c, groups=groups, extra=[{"direction": d, "mouth": MOUTH} for d in direction],
                  info={"directions": dirs})


# palette is drawn a batch at a time (:mod:`.batched`)


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


def _kanizsa(ctx: Context, sides: int) -> Layout:
    f, rng = ctx.f, ctx.rng
    # inducers a fixed share of the side, the largest CLOSURE_LARGEST wide: a figure shrinks to keep the share
    R0 = min(FIGURE_RADIUS[f.groups], CLOSURE_BASE / (0.22 * 2 * math.sin(math.pi / sides)))
    side = 2 * R0 * math.sin(math.pi / sides)
    groups = [g for g in range(f.groups) for _ in range(sides)]
    obj = _objects(ctx, groups, 0.22 * side)
    obj["shape"] = ["pacman"] * len(groups)
    centres = _figures(ctx, f.groups, R0 + obj["radius"].max())
    mouth = 180.0 - 360.0 / sides          # the polygon's interior angle
    turns = _turns(ctx, f.groups, sides)
    c, extra, figs = [], [], []
    for g in range(f.groups):
        rot = float(rng.uniform(0, 360))
        R = R0 * float(rng.uniform(SMALLEST_FIGURE, 1.0))
        corners = geo.outline("triangle" if sides == 3 else "square", centres[g], R, rot, sides)
        figs.append({"center": centres[g].tolist(), "radius": R, "rotation": rot})
        if any(turns[g]):
            figs[-1]["turned"] = [round(t, 2) for t in turns[g]]
        for k, p in enumerate(corners):
            c.append(p)
            extra.append({"direction": (geo.heading(p, centres[g]) + turns[g][k]) % 360, "mouth": mouth})
    return Layout(**obj, centers=np.array(c), groups=groups, extra=extra, info={"figures": figs, "sides": sides})


def feature_triangle(ctx: Context) -> Layout:
    return _kanizsa(ctx, 3)


def feature_square(ctx: Context) -> Layout:
    return _kanizsa(ctx, 4)


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


# ---------------------------------------------------------------- continuity

TWIN_OVERLAP = 0.8           # a repeated curve's objects keep this share of the sum of radii from their original's


def _along(ctx: Context, curves, n_per, groups_of_curve, margins=None, base=None, twins=None,
           kinds=("kink", "misaligned"), keep=(), placed=None, crossing=None) -> Layout:
    """Objects equally spaced along each curve (``placed``: their points, already chosen);
    when the principle is broken, some curves break in one of ``kinds`` (:func:`_break_curve`).
    ``twins`` maps a curve to the one it repeats: the two break together, so that the repeat
    still lies on its original, and their objects may overlap a little (each keeps most of
    its area in view); no other objects touch. Curves in ``keep`` never break, nor does any
    curve on the free stretch nearest ``crossing`` (where curves cross, a point)."""
    rng = ctx.rng
    pts = placed or [geo.resample(cv, n, (margins or [0.0] * len(curves))[k])
                     for k, (cv, n) in enumerate(zip(curves, n_per))]
    spacing = min(geo.segment_lengths(p).min() for p in pts if len(p) > 1)
    base = min(0.3 * spacing, 0.03) if base is None else min(base, (spacing - 0.006) / (2 * SIZES["large"]))
    if 2 * base * SIZES["small"] < MIN_DIAMETER:
        raise PlacementError("curve objects would be too small")
    groups = [groups_of_curve[k] for k, p in enumerate(pts) for _ in p]
    obj = _objects(ctx, groups, base)
    breaks = []
    if not ctx.principle:
        twins = twins or {}
        alone = [k for k in range(len(pts)) if k not in twins and k not in keep]
        chosen = sorted(ctx.broken_groups(len(alone)))
        # a curve with no room to break hands its break to the next one that has
        for i in chosen + [i for i in range(len(alone)) if i not in chosen]:
            if len(breaks) == len(chosen):
                break
            k = alone[i]
            pair = [k] + [t for t, o in twins.items() if o == k]
            others = np.concatenate([p for j, p in enumerate(pts) if j not in pair] or [np.zeros((0, 2))])
            try:
                moved, how = _break_curve(rng, [pts[j] for j in pair], spacing, others, kinds, crossing)
            except PlacementError:
                continue
            for j, m in zip(pair, moved):
                pts[j] = m
            breaks.append({"curve": k, **how})
        if not breaks:
            raise PlacementError("no curve has room to break")
    c = np.concatenate(pts)
    curve_of = np.array([k for k, p in enumerate(pts) for _ in p], dtype=np.int64)
    paired = np.zeros((len(pts), len(pts)), dtype=bool)     # curves whose objects may overlap a little
    for t, o in (twins or {}).items():
        paired[np.ix_([t, o], [t, o])] = True
    np.fill_diagonal(paired, False)
    if ks.curves_touch(c, obj["radius"], curve_of, paired, TWIN_OVERLAP, 0.003):
        raise PlacementError("curve objects touch")
    if not ks.inside(c, obj["radius"], 0.0, 1.0):
        raise PlacementError("an object leaves the canvas")
    extra = None
    if twins:
        overlaps = np.empty(len(c), dtype=bool)
        ks.overlapping_each(c, obj["radius"], overlaps)
        extra = [{"overlaps": bool(t)} for t in overlaps]
    info = {"curves": [np.round(cv[:: max(1, len(cv) // 24)], 4).tolist() for cv in curves], "breaks": breaks}
    return Layout(**obj, centers=c, groups=groups, extra=extra, info=info)


KINK = (50.0, 80.0)          # degrees the rest of a kinked curve turns at the break
SHIFT = (0.8, 1.6)           # object spacings a misaligned stretch moves sideways


def _nearest(a: np.ndarray, b: np.ndarray) -> float:
    """The smallest distance between a point of ``a`` ``(n, 2)`` and one of ``b`` ``(m, 2)``."""
    if not len(a) or not len(b):
        raise ValueError("no points to measure between")
    return ks.nearest_between(a, b)


def _break_curve(rng: np.random.Generator, curves: list, spacing: float, others: np.ndarray,
                 kinds=("kink", "misaligned"), crossing=None) -> tuple[list, dict]:
    """``curves``: one curve's points ``(n, 2)``, equally spaced along it (and any repeats
    of it, broken alike), with the continuation broken at an interior object: either the
    rest turns by a sharp angle there (a kink) or it moves sideways off the curve (a
    misaligned stretch). Object count and spacing stay the same. Of several candidate
    breaks that keep the moved objects on the canvas and clear of ``others`` (the other
    curves' objects; no nearer than before where a curve starts close to another), the one
    that changes least the number of overlapping objects, then the spread of all centres,
    is kept, so that the scene's statistics stay those of a positive. Returns the broken
    curves and ``{"kind", "at", ...}``."""
    pts = curves[0]
    n = len(pts)
    if n < 4:
        raise PlacementError("a curve this short cannot be broken")

    def stats(c):     # (objects close enough to overlap, spread of centres)
        return ks.close_pairs(c, 0.6 * spacing), _spread(c)

    steps = geo.segment_lengths(pts)
    own = float(np.median(steps))                               # this curve's spacing (``spacing``: the smallest)
    gap = set(np.nonzero(steps > 1.3 * own)[0].tolist())        # the free stretch where curves cross: never broken
    if crossing is not None:                                    # (found by where it is, however short)
        gap.add(int(np.hypot(*((pts[:-1] + pts[1:]) / 2 - crossing).T).argmin()))
    close, target = stats(np.concatenate(list(curves) + [others]))
    flat = np.concatenate(curves)
    bounds = np.cumsum([0] + [len(c) for c in curves]).astype(np.int64)
    others = np.ascontiguousarray(others, dtype=np.float64)
    best = None
    for _ in range(CANDIDATES):
        at = int(rng.integers(n // 3, max(n // 3 + 1, n - n // 3)))
        if at in gap or at - 1 in gap:
            continue
        tangent = pts[min(at + 1, n - 1)] - pts[at - 1]
        tangent /= math.sqrt(tangent.dot(tangent))          # ``np.linalg.norm(tangent)``, as numpy computes it
        clear = None                                        # how near the others the unbroken rest is
        first = 1 if rng.random() < 0.5 else -1
        kind = kinds[int(rng.integers(len(kinds)))]
        size = float(rng.uniform(*(KINK if kind == "kink" else SHIFT)))
        for side in (first, -first):          # either way: one turns the rest in, the other out
            # the rest turned as ``geo.rotate`` turns it (about ``pts[at]``), or shifted by
            # ``np.array([-tangent[1], tangent[0]]) * side * shift``: the same operations
            if kind == "kink":
                angle = size * side
                rad = math.radians(angle)
                res = ks.broken_curves(flat, bounds, at, True, float(pts[at, 0]), float(pts[at, 1]), math.cos(rad),
                                       math.sin(rad), 0.0, 0.0, others, 0.04, 0.96)
                how = {"kind": "kink", "at": at, "angle": round(angle, 1)}
                before, after = pts[at] - pts[at - 1], res[0][at + 1] - res[0][at]
                turn = math.degrees(abs(math.atan2(before[0] * after[1] - before[1] * after[0], before @ after)))
                if turn < KINK[0]:          # the curve's own bend took back part of the kink
                    continue
            else:
                shift = size * own
                res = ks.broken_curves(flat, bounds, at, False, 0.0, 0.0, 1.0, 0.0, float(-tangent[1] * side * shift),
                                       float(tangent[0] * side * shift), others, 0.04, 0.96)
                how = {"kind": "misaligned", "at": at, "shift": round(shift, 4)}
            every, off, near = res
            if off:
                continue
            if len(others):
                if clear is None:
                    clear = _nearest(np.concatenate([c[at + 1:] for c in curves]), others)
                if near < min(0.9 * spacing, clear):     # no nearer the others than before
                    continue
            now = stats(every)
            cost = (abs(now[0] - close), abs(now[1] - target))
            if best is None or cost < best[0]:
                best = (cost, [every[a:b] for a, b in zip(bounds[:-1], bounds[1:])], how)
    if best is None:
        raise PlacementError("no break keeps clear of the other curves")
    return best[1], best[2]


def _curve(points) -> np.ndarray:
    return catmull_rom(np.asarray(points, dtype=np.float64), 16)


LINE_COUNTS = {"s": 4, "m": 6, "l": 7, "xl": 9}
FAN = (0.6, 0.88)            # the span of one_split_n's branch ends (height share)
ONE_SPLIT_BASE = {"s": 0.028, "m": 0.024, "l": 0.02, "xl": 0.017}


def one_split_n(ctx: Context) -> Layout:
    f, rng = ctx.f, ctx.rng
    n = LINE_COUNTS[f.quantity]
    start = np.array([0.07, rng.uniform(0.35, 0.65)])
    fork = np.array([rng.uniform(0.2, 0.26), rng.uniform(0.42, 0.58)])
    trunk = _curve([start, (start + fork) / 2 + [0, rng.uniform(-0.02, 0.02)], fork])
    # branches fan out over a varied span, so that how far the objects spread is not a template's
    # (and a branch may kink outwards as well as in)
    span = float(rng.uniform(min(FAN[0] + 0.08 * (f.groups - 2), FAN[1]), FAN[1]))   # more branches need more room
    mid = float(rng.uniform(0.5 - (FAN[1] - span) / 2, 0.5 + (FAN[1] - span) / 2))
    ends = np.linspace(mid - span / 2, mid + span / 2, f.groups) + rng.uniform(-0.02, 0.02, f.groups)
    tangent = (fork - trunk[-4]) / np.linalg.norm(fork - trunk[-4])
    curves, heads = [trunk], []
    for e in ends:
        end = np.array([rng.uniform(0.78, 0.93), e])    # branches of varied length
        toward = (end - fork) / np.linalg.norm(end - fork)
        mid = fork + (0.15 * tangent + 0.85 * toward) * 0.12
        curves.append(_curve([fork, mid, (mid + end) / 2 + [0.03, 0], end]))
        heads.append(math.atan2(*(mid - fork)[::-1]))
    base = ONE_SPLIT_BASE[f.quantity]
    # branches start where neighbours are far enough apart for two large objects
    gap = min(np.diff(sorted(heads))) if f.groups > 1 else math.pi
    clear = max((2 * SIZES["large"] * base + 0.012) / (2 * math.sin(gap / 2)), 3 * base)
    step = np.mean([geo.arc_length(cv) - clear for cv in curves[1:]]) / (n - 1)
    n_trunk = max(3, int(round(geo.arc_length(trunk) / step)) + 1)
    # the short trunk ends among the branches' starts and stays whole
    lay = _along(ctx, curves, [n_trunk] + [n] * f.groups, list(range(f.groups + 1)), [0.0] + [clear] * f.groups,
                 base=base, keep=(0,))
    lay.info["trunk_group"] = 0
    return lay


def _through(rng: np.random.Generator, centre: np.ndarray, angle: float, half: float) -> np.ndarray:
    """A gently bent curve through ``centre`` at ``angle`` degrees, ``half`` long each way."""
    a = math.radians(angle)
    u, nrm = (math.cos(a), -math.sin(a)), (math.sin(a), math.cos(a))
    b1, b2 = rng.uniform(-0.04, 0.04, 2).tolist()
    # ``centre - half * u``, ``centre - 0.2 * u + b1 * nrm``, ...: numpy's operations, per coordinate
    return _curve([[c - half * v for c, v in zip(centre.tolist(), u)],
                   [c - 0.2 * v + b1 * w for c, v, w in zip(centre.tolist(), u, nrm)],
                   centre,
                   [c + 0.2 * v + b2 * w for c, v, w in zip(centre.tolist(), u, nrm)],
                   [c + half * v for c, v in zip(centre.tolist(), u)]])


def _around(length: float, n: int, at: float, hole: float, reserve: float = 0.0) -> tuple[np.ndarray, float]:
    """Arc lengths of ``n`` points along a curve ``length`` long (keeping ``reserve`` from
    both ends) equally spaced on either side of the arc length ``at``, the nearest ``hole / 2``
    from it (one more on the first side when ``n`` is odd). Returns the arc lengths ``(n,)``,
    first side first, and their spacing."""
    first, second = (n + 1) // 2, n // 2
    step = min((at - hole / 2 - reserve) / max(first - 1, 1), (length - at - hole / 2 - reserve) / max(second - 1, 1))
    if step <= 0:
        raise PlacementError("no room for the objects around the crossing")
    lo, hi = at - hole / 2, at + hole / 2                # plain floats: the same operations as numpy's
    return np.array([lo - step * k for k in range(first - 1, -1, -1)] + [hi + step * k for k in range(second)],
                    dtype=np.float64), step


def _normal_at(curve: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Unit normals ``(n, 2)`` of ``curve`` at arc lengths ``t``."""
    tangent = geo.at_arc(curve, t + 1e-3) - geo.at_arc(curve, t - 1e-3)
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    return np.stack([-tangent[:, 1], tangent[:, 0]], 1)


CROSSING_HALF = (0.33, 0.44)  # how far each crossing curve reaches from the centre


def intersected_splines(ctx: Context) -> Layout:
    f, rng = ctx.f, ctx.rng
    n = {"m": 8, "l": 11, "xl": 14}[f.quantity]
    a0 = rng.uniform(0, 180)
    centre = np.array([0.5, 0.5])
    # curves of varied length, so that how far the objects spread is not a template's
    curves = [_through(rng, centre, a0 + 180.0 * k / f.groups, float(rng.uniform(*CROSSING_HALF)))
              for k in range(f.groups)]
    # the curves cross at the centre with no object on it: the objects nearest the crossing
    # sit far enough out that neighbouring curves' objects do not touch (nothing is hidden)
    step = 0.82 / (n - 1)
    where = [(geo.arc_length(cv), geo.arc_of(cv, centre)) for cv in curves]
    for _ in range(3):
        base = min(0.3 * step, 0.03)
        hole = (2 * SIZES["large"] * base + 0.012) / math.sin(math.pi / (2 * f.groups))
        placed = [_around(length, n, at, hole) for length, at in where]
        step = min(p[1] for p in placed)
    return _along(ctx, curves, [n] * f.groups, list(range(f.groups)), base=base,
                  placed=[geo.at_arc(cv, p[0]) for cv, p in zip(curves, placed)], crossing=centre)


def non_intersected_splines(ctx: Context) -> Layout:
    f, rng = ctx.f, ctx.rng
    n = {"s": 6, "m": 9, "l": 12}[f.quantity]
    h = 0.9 / f.groups
    curves = []
    for k in range(f.groups):
        y = 0.05 + h * (k + 0.5)
        amp = min(0.3 * h, 0.12)
        xs = np.linspace(0.06, 0.94, 5)
        ys = y + amp * np.sin(rng.uniform(0, 2 * math.pi) + np.linspace(0, rng.uniform(1.5, 3.5), 5))
        curves.append(_curve(np.stack([xs, ys], 1)))
    return _along(ctx, curves, [n] * f.groups, list(range(f.groups)))


OFFSET = 0.03                # how far sideways the repeated curve lies from its original


def overlap_splines(ctx: Context) -> Layout:
    f, rng = ctx.f, ctx.rng
    n = {"m": 8, "l": 11, "xl": 14}[f.quantity]
    a0 = rng.uniform(0, 180)
    centre = np.array([0.5, 0.5])
    angles = [a0 + 180.0 * k / f.groups + rng.uniform(-6, 6) for k in range(f.groups)]
    curves = [_through(rng, centre, a, 0.44) for a in angles]
    # the repeated curve: the first one a fraction of an object to the side, its objects half
    # a step along (away from the crossing), between its original's, so that neither covers
    # the other; all curves cross at the centre, where no object sits (nothing is hidden)
    cross = min(abs((x - y + 90) % 180 - 90) for i, x in enumerate(angles) for y in angles[:i]) if f.groups > 1 else 90
    cross = math.radians(max(cross, 20.0))
    step = 0.88 / (n - 1)
    where = [(geo.arc_length(cv), geo.arc_of(cv, centre)) for cv in curves]
    for _ in range(3):
        half = step / 2
        base = min(0.6 * half, 0.03, 0.85 * math.hypot(half, OFFSET) / (2 * SIZES["large"] * TWIN_OVERLAP))
        hole = (2 * SIZES["large"] * base + 0.008) / math.sin(cross / 2) + 2 * OFFSET / math.sin(cross)
        arcs = [_around(length, n, at, hole, reserve=half if k == 0 else 0.0)
                for k, (length, at) in enumerate(where)]
        step = min(p[1] for p in arcs)
    t = arcs[0][0]
    twin = t + np.where(np.arange(n) < (n + 1) // 2, -half, half)
    placed = [geo.at_arc(cv, a) for cv, (a, _) in zip(curves, arcs)]
    placed.append(geo.at_arc(curves[0], twin) + OFFSET * _normal_at(curves[0], twin))
    curves.append(curves[0] + OFFSET * _normal_at(curves[0], np.array([where[0][1]])))
    return _along(ctx, curves, [n] * (f.groups + 1), list(range(f.groups + 1)), base=base, twins={f.groups: 0},
                  placed=placed, crossing=centre)


# ---------------------------------------------------------------- symmetry

# the categories drawn a batch at a time (proximity, fixed_number, palette, big outlines, symmetry) are in
# :mod:`.batched`
LAYOUTS = {name: globals()[name] for name in CATEGORIES if name in globals()}
