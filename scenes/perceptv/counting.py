"""Percept-V domains that count or locate objects in scattered scenes (one or two panels).

Panels keep the reference's aspect: 3:2 for its 1500 x 1000 images and +-1500 x +-1000 axes,
5:3 for its 500 x 300 images, square for the graph (scene ``y`` runs to the height / width).
"""
from __future__ import annotations

import math

import numpy as np

from engine.placement import PlacementError
from engine.scene import Scene
from kernels import spring_layout

from .common import BASIC, WHITE, Form, domain, extent, pick, place, shape

COUNT = Form("single", ("COUNT",))
COUNT_SPACED = Form("single", ("COUNT",), space=True)
RGB3 = {"red": BASIC["red"], "blue": BASIC["blue"], "green": BASIC["green"]}
WIDE = 2 / 3                 # height / width of the 1500 x 1000 images and the +-1500 x +-1000 axes
LOW = 0.6                    # height / width of the 500 x 300 images
WIDE_PANEL, LOW_PANEL = extent(WIDE, 1.0), extent(LOW, 1.0)


def _inside(aspect: float, margin: float) -> tuple[float, float, float, float]:
    """Placement bounds ``margin`` inside a panel of ``aspect`` (height / width)."""
    return margin, margin, 1.0 - margin, aspect - margin


def _circles(rng, n, rmin, rmax, bounds, gap=0.008):
    radii = rng.uniform(rmin, rmax, n)
    return place(rng, radii, bounds, gap), radii


@domain("change_colour", "single", "D", 40, COUNT)
def change_colour(rng, n, instance):
    """Two images of 2n circles; n of them change colour (red -> blue -> green -> red)."""
    c, r = _circles(rng, 2 * n, 0.012, 0.035 if n <= 20 else 0.025, _inside(WIDE, 0.02))
    cols = [pick(rng, list(RGB3)) for _ in range(2 * n)]
    changed = sorted(rng.choice(2 * n, n, replace=False).tolist())
    after = list(cols)
    for i in changed:
        after[i] = {"red": "blue", "blue": "green", "green": "red"}[cols[i]]
    panels = []
    for cs in (cols, after):
        s = Scene(background=WHITE)
        for p, rad, col in zip(c, r, cs):
            s.circle(tuple(p), float(rad), color=RGB3[col])
        panels.append(s)
    return panels, str(n), {"changed": changed, "colours": [cols, after]}, WIDE_PANEL


@domain("circle_boxes", "single", "M", 60, COUNT)
def circle_boxes(rng, n, instance):
    """2n red circles split at random between the two sides of a blue partition."""
    left = int(rng.integers(0, 2 * n + 1))
    right = 2 * n - left
    r = 0.012                                 # the reference: 30 on a 3,000-wide axis
    s = Scene(background=WHITE)
    s.line((0.5, 0.0), (0.5, WIDE), width=0.004, color=(31, 119, 180))
    for k, (lo, hi) in ((left, (0.02, 0.48)), (right, (0.52, 0.98))):
        if k:
            for p in place(rng, np.full(k, r), (lo, 0.02, hi, WIDE - 0.02), 0.01):
                s.circle(tuple(p), r, color=(255, 0, 0))
    return s, str(max(left, right) - n), {"left": left, "right": right}, WIDE_PANEL


@domain("circle_location", "fixed", "SR", 40, Form("fixed", ("QUADRANT", "COUNT")))
def circle_location(rng, n, instance):
    """n black circles in four quadrants; the fullest quadrant (ties: lower number) and its count."""
    r = 0.025
    s = Scene(background=WHITE)
    mid = WIDE / 2
    s.line((0.5, 0.02), (0.5, WIDE - 0.02), width=0.002, color=(0, 0, 0))
    s.line((0.02, mid), (0.98, mid), width=0.002, color=(0, 0, 0))
    centres = []
    for _ in range(n):
        for _ in range(400):
            p = rng.uniform((0.03, 0.03), (0.97, WIDE - 0.03))
            if abs(p[0] - 0.5) > r + 0.004 and abs(p[1] - mid) > r + 0.004 and all(math.dist(p, q) > 2 * r + 0.006 for q in centres):
                centres.append(p)
                break
        else:
            raise PlacementError("no room for a circle")
    counts = [0, 0, 0, 0]
    for x, y in centres:
        q = (1 if y < mid else 4) if x > 0.5 else (2 if y < mid else 3)
        counts[q - 1] += 1
        s.circle((float(x), float(y)), r, color=(0, 0, 0))
    best = int(np.argmax(counts))
    return s, f"{best + 1} {counts[best]}", {"counts": counts}, WIDE_PANEL


@domain("count_coloured_circles", "single", "M", 40, COUNT)
def count_coloured_circles(rng, n, instance):
    """2n circles, n of them red, the others blue, green or yellow."""
    c, r = _circles(rng, 2 * n, 0.012, 0.025, _inside(LOW, 0.02))
    red = set(rng.choice(2 * n, n, replace=False).tolist())
    s = Scene(background=WHITE)
    for i, (p, rad) in enumerate(zip(c, r)):
        s.circle(tuple(p), float(rad), color=BASIC["red"] if i in red else BASIC[pick(rng, ["blue", "green", "yellow"])])
    return s, str(n), {"red": sorted(red)}, LOW_PANEL


@domain("counting_circles", "single", "FC", 60, COUNT)
def counting_circles(rng, n, instance):
    """n black circles of random sizes."""
    c, r = _circles(rng, n, 0.012, 0.035, _inside(LOW, 0.02))
    s = Scene(background=WHITE)
    for p, rad in zip(c, r):
        s.circle(tuple(p), float(rad), color=(0, 0, 0))
    return s, str(n), {"centres": c.round(4).tolist(), "radii": r.round(4).tolist()}, LOW_PANEL


@domain("counting_locations", "fixed", "SR", 30, Form("fixed", ("ABOVE", "BELOW")),
        fixes="above and below always hold n circles each; fixed: the 2n circles split at random")
def counting_locations(rng, n, instance, fixed=False):
    """A brown bar with circles above and below it: n and n (fixed: a random split of 2n)."""
    r = 0.03 if n <= 10 else 0.02 if n <= 20 else 0.015     # the reference: 30 px across on 500 (size by n, not by side)
    above = int(rng.integers(0, 2 * n + 1)) if fixed else n
    below = 2 * n - above
    s = Scene(background=WHITE)
    mid = LOW / 2
    s.rectangle((0.5, mid), (0.96, 0.04), color=(165, 42, 42))
    up = place(rng, np.full(above, r), (0.02, 0.01, 0.98, mid - 0.03), 0.01) if above else np.zeros((0, 2))
    down = place(rng, np.full(below, r), (0.02, mid + 0.03, 0.98, LOW - 0.01), 0.01) if below else np.zeros((0, 2))
    for p in np.concatenate([up, down]):
        s.circle(tuple(p), r, color=BASIC[pick(rng, ["red", "blue", "green", "yellow"])])
    return s, f"{above} {below}", {"above": above, "below": below}, LOW_PANEL


SHAPES3 = ("circle", "triangle", "square")


@domain("counting_shapes", "fixed", "D,M,FC", 40, Form("fixed", ("CIRCLES", "TRIANGLES", "SQUARES")))
def counting_shapes(rng, n, instance):
    """n black circles, triangles and squares."""
    kinds = [pick(rng, SHAPES3) for _ in range(n)]
    r = rng.uniform(0.02, 0.04, n) * (1.0 if n <= 20 else 0.625)
    s = Scene(background=WHITE)
    for k, p, rad in zip(kinds, place(rng, r * 1.2, _inside(LOW, 0.04), 0.01), r):
        shape(s, k, tuple(p), float(rad), (0, 0, 0))
    counts = [kinds.count(k) for k in SHAPES3]
    return s, " ".join(map(str, counts)), {"shapes": kinds}, LOW_PANEL


@domain("vanishing_objects", "single", "D", 40, COUNT)
def vanishing_objects(rng, n, instance):
    """2n black shapes; the second image lacks n of them."""
    kinds = [pick(rng, SHAPES3) for _ in range(2 * n)]
    r = rng.uniform(0.015, 0.03, 2 * n) * (1.0 if n <= 20 else 0.55)
    c = place(rng, r * 1.3, _inside(WIDE, 0.03), 0.01)
    gone = set(rng.choice(2 * n, n, replace=False).tolist())
    panels = []
    for drop in (set(), gone):
        s = Scene(background=WHITE)
        for i, (k, p, rad) in enumerate(zip(kinds, c, r)):
            if i not in drop:
                shape(s, k, tuple(p), float(rad), (0, 0, 0))
        panels.append(s)
    return panels, str(n), {"removed": sorted(gone), "shapes": kinds}, WIDE_PANEL


NUMBERED = Form("set", ("CIRCLES",))


@domain("numbered_shapes", "set", "M,FC", 30, NUMBERED)
def numbered_shapes(rng, n, instance):
    """2n numbered shapes, n of them circles; the numbers on the circles."""
    kinds = ["circle"] * n + [pick(rng, ["triangle", "square", "pentagon"]) for _ in range(n)]
    order = rng.permutation(2 * n)
    kinds = [kinds[i] for i in order]
    r = 0.04 if n <= 10 else 0.03                 # the reference: 75 on a 3,000-wide axis
    s = Scene(background=WHITE)
    for i, (k, p) in enumerate(zip(kinds, place(rng, np.full(2 * n, r), _inside(WIDE, 0.02), 0.008))):
        shape(s, k, tuple(p), r, BASIC[pick(rng, ["red", "green", "blue"])])
        s.text(str(i + 1), (float(p[0]), float(p[1]) + (0.008 if k == "triangle" else 0)), height=r * 1.1,
               color=(255, 255, 255))
    return s, sorted(str(i + 1) for i, k in enumerate(kinds) if k == "circle"), {"shapes": kinds}, WIDE_PANEL


@domain("graph_counting", "fixed", "M", 25, Form("fixed", ("NODES", "EDGES")))
def graph_counting(rng, n, instance):
    """A node-link drawing of a random graph with n nodes (possibly disconnected)."""
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    m = 0 if n == 1 else int(rng.integers(n - 1, min(len(pairs), n + 5) + 1))
    edges = [pairs[int(k)] for k in rng.choice(len(pairs), m, replace=False)] if m else []
    r = 0.05 if n <= 10 else 0.035
    # the same graph laid out again until no edge passes under a node it does not join (an edge
    # drawn under a node reads as two edges); only then is another graph drawn
    for _ in range(LAYOUTS):
        pos = _spring(rng, n, edges)
        pos = place(rng, np.full(n, r), (0.02, 0.02, 0.98, 0.98), 0.03) if _crowded(pos, r) else pos
        if not _passes_under(pos, edges, r + 0.008):
            break
    else:
        raise PlacementError("every layout runs an edge under a node")
    s = Scene(background=WHITE)
    for i, j in edges:
        s.line(tuple(pos[i]), tuple(pos[j]), width=0.004, color=(128, 128, 128))
    for p in pos:
        s.circle(tuple(p), r, color=(173, 216, 230))
    return s, f"{n} {m}", {"edges": [list(e) for e in edges], "positions": np.round(pos, 4).tolist()}


def _spring(rng, n, edges, steps=120) -> np.ndarray:
    """A force-directed layout in [0.08, 0.92]^2 (repulsion between all nodes, springs on edges)."""
    p = rng.uniform(0.2, 0.8, (n, 2))
    ends = np.asarray(edges, dtype=np.int64).reshape(-1)    # i0, j0, i1, j1, ...: each edge pulls i then pushes j
    dist, cube, force = np.empty((n, n)), np.empty((n, n)), np.empty((n, 2))
    spring_layout.distances(p, dist)
    for t in range(steps):
        np.power(dist, 3, out=cube)              # numpy's own power loop (see kernels.spring_layout)
        spring_layout.step(p, dist, cube, ends, t, steps, force)
    lo, hi = p.min(0), p.max(0)
    return 0.08 + (p - lo) / np.maximum(hi - lo, 1e-6) * 0.84


LAYOUTS = 30                 # layouts tried per graph


def _passes_under(pos: np.ndarray, edges, clear: float) -> bool:
    """Whether an edge (a segment between two of ``pos`` ``(n, 2)``) comes within ``clear`` of
    the centre of a node it does not join."""
    if not edges:
        return False
    e = np.asarray(edges)
    a, b = pos[e[:, 0]], pos[e[:, 1]]                            # (m, 2)
    ab = b - a
    t = np.clip(((pos[None] - a[:, None]) * ab[:, None]).sum(-1) / (ab * ab).sum(-1)[:, None], 0, 1)   # (m, n)
    d = np.hypot(*(pos[None] - (a[:, None] + t[..., None] * ab[:, None])).transpose(2, 0, 1))
    d[np.arange(len(e)), e[:, 0]] = np.inf
    d[np.arange(len(e)), e[:, 1]] = np.inf
    return bool((d < clear).any())


def _crowded(pos, r) -> bool:
    d = np.hypot(*(pos[:, None] - pos[None]).transpose(2, 0, 1)) + np.eye(len(pos)) * 9
    return bool((d < 2 * r + 0.02).any())
