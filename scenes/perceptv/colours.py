"""Percept-V domains about colours, layers, figure-ground and reflections."""
from __future__ import annotations

import math

import numpy as np

from engine.lazy import lazy_module
from engine.placement import PlacementError
from engine.scene import Scene

from .common import BASIC, LEGEND_PANEL, NATIVE, PALETTE, WHITE, Form, domain, extent, legend, pick, place, shape

textures = lazy_module("kernels.textures")    # torch: loaded when a busy background is first drawn

BASIC4 = ("circle", "triangle", "square", "pentagon")
PALETTE_NAMES = tuple(PALETTE)
COLOUR_WORDS = PALETTE_NAMES
# labels a reply may put before a list of colours or shapes (the prompts of list_colours and
# list_shapes ask for a bare list; a labelled one is read too)
COLOUR_LABELS = ("colours", "colors", "colour", "color")
SHAPE_LABELS = ("shapes", "shape")


@domain("colours_present", "fixed", "M", 20,
        Form("fixed", ("ANSWER",), item="words", sep=", ", space=True, vocab=("yes", "no")))
def colours_present(rng, n, instance):
    """n shapes in n different palette colours, with the palette legend; yes/no per palette colour."""
    names = pick(rng, PALETTE_NAMES, n)
    s = Scene(background=WHITE)
    for name, p in zip(names, place(rng, np.full(n, 0.045), (0.03, 0.03, 0.97, 0.97), 0.02)):
        shape(s, pick(rng, BASIC4), tuple(p), 0.04, PALETTE[name], outline=(0, 0, 0), stroke=0.003)
    legend(s)
    return s, " ".join("yes" if c in names else "no" for c in PALETTE_NAMES), {"colours": names}, LEGEND_PANEL


@domain("layered_colours", "list", "SM,FG,C", 20,
        Form("list", ("COLOURS",), item="word", sep=" , ", space=True, vocab=COLOUR_WORDS, aliases=COLOUR_LABELS))
def layered_colours(rng, n, instance):
    """n concentric discs in n palette colours, with the legend; colours from inside out."""
    names = pick(rng, PALETTE_NAMES, n)
    s = Scene(background=WHITE)
    radii = np.linspace(0.9, 0.05, n) * 0.5 if n > 1 else np.array([0.45])    # the reference's on [-1, 1]
    for name, r in zip(names, radii):            # largest first
        s.circle((0.5, 0.5), float(r), color=PALETTE[name])
        s.circle((0.5, 0.5), float(r), color=(0, 0, 0), fill=False, stroke=0.002)
    legend(s)
    return s, list(reversed(names)), {"outside_in": names}, LEGEND_PANEL


LAYER_SIDES = {"diamond": 4, "hexagon": 6, "octagon": 8}
INNERMOST = 8          # px: the innermost layer's least width at the native size
MAX_SIDE = 8.0         # the largest panel, in native sides: 20 diamonds, the worst case, are 3.6 px wide there


@domain("layered_shapes", "list", "SM,FG,C", 20,
        Form("list", ("SHAPES",), item="word", sep=" , ", space=True, vocab=("circle", *LAYER_SIDES),
             aliases=SHAPE_LABELS))
def layered_shapes(rng, n, instance):
    """n nested polygons, each inscribed in the one around it; names from inside out."""
    kinds = [pick(rng, list(LAYER_SIDES)) for _ in range(n)]
    fills = []
    while len(fills) < n:
        c = tuple(int(v) for v in rng.integers(50, 206, 3))
        if all(sum((a - b) ** 2 for a, b in zip(c, f)) > 500 for f in fills):
            fills.append(c)
    s = Scene(background=WHITE)
    r = 0.445
    for k, col in zip(kinds, fills):
        sides = LAYER_SIDES[k]
        # first vertex pointing right (the 4-gon is a diamond); the engine's polygons point up
        s.polygon((0.5, 0.5), r, sides, rotation=-90.0, color=col)
        s.polygon((0.5, 0.5), r, sides, rotation=-90.0, color=(0, 0, 0), fill=False, stroke=0.002)
        r *= math.cos(math.pi / sides)
    # the panel grows until the innermost shape is INNERMOST px across at the native size
    # (the reference's 1,800 px leave it a few pixels wide at size 20)
    side = min(MAX_SIDE, max(1.0, INNERMOST / (2 * r * NATIVE)))        # 2 r: the innermost's least width
    return s, list(reversed(kinds)), {"outside_in": kinds}, extent(side, side)


def _busy(n, instance, radius, rng):
    s = Scene(background=WHITE)
    s.sprite(textures.busy(instance % 10), (0.5, 0.5), (1.0, 1.0))
    return s, place(rng, np.full(n, radius), (0.02, 0.02, 0.98, 0.98), 0.02)


@domain("list_colours", "set", "M,FG", 20,
        Form("set", item="word", sep=", ", vocab=COLOUR_WORDS, aliases=COLOUR_LABELS))
def list_colours(rng, n, instance):
    """n shapes in n palette colours on busy background ``instance % 10``, with the legend."""
    names = pick(rng, PALETTE_NAMES, n)
    s = Scene(background=WHITE)
    s.sprite(textures.busy(instance % 10), (0.5, 0.5), (1.0, 1.0))
    for name, p in zip(names, place(rng, np.full(n, 0.05), (0.02, 0.02, 0.98, 0.98), 0.02)):
        shape(s, pick(rng, BASIC4), tuple(p), 0.05, PALETTE[name])
    legend(s)
    return s, sorted(names), {"background": instance % 10}, LEGEND_PANEL


@domain("list_shapes", "set", "M,FG", 40,
        Form("set", item="word", sep=", ", vocab=BASIC4, aliases=SHAPE_LABELS))
def list_shapes(rng, n, instance):
    """n red, green or blue shapes on busy background ``instance % 10``; the kinds present."""
    s, centres = _busy(n, instance, 0.045, rng)
    kinds = [pick(rng, BASIC4) for _ in range(n)]
    for k, p in zip(kinds, centres):
        shape(s, k, tuple(p), 0.045, BASIC[pick(rng, ["red", "green", "blue"])], outline=(0, 0, 0), stroke=0.002)
    return s, sorted(set(kinds)), {"shapes": kinds, "background": instance % 10}


OUTLINE = 0.01                # a dot this close to a circle's outline is neither clearly in nor out


@domain("inside_circles", "single", "SR", 40,
        Form("single", ("ANSWER",), item="word", case="title", space=True, vocab=("yes", "no")),
        fixes="labels are unbalanced; fixed: Yes on even instances, No on odd, with the dot placed as in the "
              "reference and the circles drawn around it (one of them holding it for Yes)")
def inside_circles(rng, n, instance, fixed=False):
    """n black outline circles and a red dot: is the dot's centre inside any circle?"""
    s = Scene(background=WHITE)
    to = lambda v: (v + 0.7) / 2.1  # noqa: E731  (the reference's axes span -0.7..1.4)
    if fixed:
        dot, circles = _circles_around(rng, n, instance % 2 == 0)
    else:
        circles = [(rng.uniform(0.1, 0.9, 2), rng.uniform(0.1, 0.5)) for _ in range(n)]
        dot = rng.uniform(0.1, 0.9, 2)
    for c, r in circles:
        s.circle((to(c[0]), to(1 - c[1])), r / 2.1, color=(0, 0, 0), fill=False, stroke=0.004)
    s.circle((to(dot[0]), to(1 - dot[1])), 0.05 / 2.1, color=(255, 0, 0))
    inside = any(math.dist(dot, c) < r for c, r in circles)
    if any(abs(math.dist(dot, c) - r) < OUTLINE for c, r in circles):
        raise PlacementError("the dot sits on a circle's outline")
    return s, "yes" if inside else "no", {}


def _circles_around(rng, n: int, inside: bool):
    """The fixed variant's dot and circles: the dot where the reference puts it, then each
    circle with a radius as the reference draws it (redrawn while no centre in range can
    leave the dot out, for every circle alike) and a centre that leaves the dot out, except
    one circle's (Yes) that holds it. Moving circles rather than the dot keeps the dot's
    position, and the circles' sizes, alike for both answers."""
    dot = rng.uniform(0.1, 0.9, 2)
    holder = int(rng.integers(n)) if inside else -1
    circles = []
    for i in range(n):
        for _ in range(200):
            r = rng.uniform(0.1, 0.5)
            away = next((c for c in rng.uniform(0.1, 0.9, (100, 2)) if math.dist(dot, c) > r + OUTLINE), None)
            if away is not None:
                break
        else:
            raise PlacementError("no circle size leaves the dot out")
        if i == holder:                       # a centre within reach of the dot, drawn as the others are
            near = [c for c in rng.uniform(0.1, 0.9, (400, 2)) if math.dist(dot, c) < r - OUTLINE]
            if not near:
                raise PlacementError("no circle position holds the dot")
            away = near[0]
        circles.append((away, r))
    return dot, circles


MIRROR_COLOURS = ("red", "green", "blue", "yellow", "orange", "black")


def _reflect(rng, n, vertical: bool):
    r = 0.018
    lo = (0.02, 0.02, 0.485, 0.98) if vertical else (0.02, 0.02, 0.98, 0.485)     # clear of the line
    centres = place(rng, np.full(2 * n, r), lo, 0.012)
    kinds = [pick(rng, BASIC4) for _ in range(2 * n)]
    cols = [pick(rng, MIRROR_COLOURS) for _ in range(2 * n)]
    moved = set(rng.choice(2 * n, n, replace=False).tolist())
    panels = []
    for k in range(2):
        s = Scene(background=WHITE)
        if vertical:
            s.line((0.5, 0.0), (0.5, 1.0), width=0.004, color=(31, 119, 180))
        else:
            s.line((0.0, 0.5), (1.0, 0.5), width=0.004, color=(31, 119, 180))
        for i, (p, kind, col) in enumerate(zip(centres, kinds, cols)):
            x, y = float(p[0]), float(p[1])
            if k == 1 and i in moved:
                x, y = (1 - x, y) if vertical else (x, 1 - y)
            shape(s, kind, (x, y), r, BASIC[col])
        panels.append(s)
    return panels, str(n), {"moved": sorted(moved)}


@domain("mirror_image", "single", "FC", 40, Form("single", ("COUNT",), space=True))
def mirror_image(rng, n, instance):
    """Two images; n of the 2n objects left of a vertical line move to their mirror position."""
    return _reflect(rng, n, True)


@domain("water_image", "single", "FC", 40, Form("single", ("COUNT",), space=True))
def water_image(rng, n, instance):
    """Two images; n of the 2n objects above a horizontal line move to their reflection below."""
    return _reflect(rng, n, False)
