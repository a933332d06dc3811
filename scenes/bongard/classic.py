"""Classic-style Bongard concepts: black line drawings on white, one panel per call."""
from __future__ import annotations

import math

import numpy as np

from engine.placement import scatter
from engine.scene import Scene

from .concepts import concept

INK = (0, 0, 0)
PAPER = (255, 255, 255)
STROKE = 0.022
CLOSED = ("circle", "triangle", "square", "pentagon", "hexagon", "ellipse", "star", "cross")
CONVEX = {"circle", "triangle", "square", "pentagon", "hexagon", "ellipse"}


def figure(s: Scene, kind: str, c, r: float, rotation: float = 0.0, filled: bool = False) -> dict:
    """Draw one outline figure of radius ``r`` (``filled``: solid black); returns its facts."""
    style = dict(color=INK, fill=filled, stroke=STROKE, rotation=rotation)
    c = (float(c[0]), float(c[1]))
    if kind == "circle":
        s.circle(c, r, **style)
    elif kind == "ellipse":
        s.ellipse(c, (r, r * 0.5), **style)
    elif kind == "square":
        s.square(c, r * 1.41, **style)
    elif kind in ("triangle", "pentagon", "hexagon"):
        s.polygon(c, r, {"triangle": 3, "pentagon": 5, "hexagon": 6}[kind], **style)
    elif kind == "star":
        s.star(c, r, **style)
    elif kind == "cross":
        s.plus(c, r, **style)
    elif kind == "arc":
        a0 = math.radians(rotation)
        pts = [(c[0] + r * math.cos(a0 + t), c[1] - r * math.sin(a0 + t)) for t in np.linspace(0, 1.4 * math.pi, 24)]
        s.polyline(pts, width=STROKE, color=INK)
    elif kind == "zigzag":
        a = math.radians(rotation)
        u, v = np.array([math.cos(a), -math.sin(a)]), np.array([math.sin(a), math.cos(a)])
        pts = [tuple(np.array(c) + u * r * (t - 0.5) * 2 + v * r * 0.35 * (1 if k % 2 else -1))
               for k, t in enumerate(np.linspace(0, 1, 6))]
        s.polyline(pts, width=STROKE, color=INK)
    elif kind == "segment":
        a = math.radians(rotation)
        d = np.array([math.cos(a), -math.sin(a)]) * r
        s.line(tuple(np.array(c) - d), tuple(np.array(c) + d), width=STROKE * 1.4, color=INK)
    else:
        raise ValueError(f"unknown classic figure {kind!r}")
    return {"kind": kind, "center": [round(c[0], 4), round(c[1], 4)], "radius": round(float(r), 4),
            "rotation": round(float(rotation), 2), "filled": bool(filled), "closed": kind in CLOSED,
            "convex": kind in CONVEX}


def _pick(rng, values):
    values = list(values)
    return values[int(rng.integers(len(values)))]


def _panel() -> Scene:
    return Scene(background=PAPER)


def _spread(rng, radii, box=(0.04, 0.04, 0.96, 0.96), gap=0.04):
    return scatter(rng, np.asarray(radii, float), box, gap=gap)


# ---------------------------------------------------------------- size

@concept("classic", "size", "large_vs_small", "The figure is large.", "The figure is small.",
         {"property": "radius", "left": ">= 0.3", "right": "<= 0.13"},
         correct=(("Big figures.", "Small figures."), ("The shape fills most of the frame.", "The shape is tiny.")),
         incorrect=(("Triangles.", "Circles."), ("The figure is on the left.", "The figure is on the right.")),
         keywords=(("large", "big", "huge", "fills"), ("small", "tiny", "little")), ink_is_the_concept=True)
def large_vs_small(rng, side):
    s = _panel()
    r = rng.uniform(0.3, 0.4) if side == 0 else rng.uniform(0.07, 0.13)
    c = 0.5 + rng.uniform(-0.07, 0.07, 2)      # where a large figure fits, on either side: position must not tell
    return s, {"figures": [figure(s, _pick(rng, CLOSED), c, r, rng.uniform(0, 360))]}


# ---------------------------------------------------------------- number

def _n_figures(rng, n, kinds=CLOSED, most: int | None = None):
    """``n`` figures of one size, sized for ``most`` figures (the largest count the concept
    draws), of one or two kinds (each drawn at least once): neither their size, nor the spread
    of their sizes, nor how many kinds they show may tell one count from another."""
    s = _panel()
    r = min(0.45 / (most or n), 0.17) * rng.uniform(0.7, 1.3)
    radii = np.full(n, r)
    chosen = list(rng.permutation(list(kinds))[:int(rng.integers(1, 3))])
    drawn = chosen + [_pick(rng, chosen) for _ in range(n - len(chosen))]
    drawn = [drawn[i] for i in rng.permutation(n)]
    figs = [figure(s, k, c, r, rng.uniform(0, 360)) for k, c, r in zip(drawn, _spread(rng, radii), radii)]
    return s, {"figures": figs}


@concept("classic", "number", "three_vs_five", "There are three figures.", "There are five figures.",
         {"property": "count", "left": 3, "right": 5},
         correct=(("Three shapes in each image.", "Five shapes in each image."), ("3 objects.", "5 objects.")),
         incorrect=(("Few shapes.", "Many shapes."), ("Triangles.", "Pentagons.")),
         keywords=(("three", "3"), ("five", "5")), ink_is_the_concept=True)
def three_vs_five(rng, side):
    return _n_figures(rng, 3 if side == 0 else 5, most=5)      # five figures draw more ink: that is the count


@concept("classic", "number", "even_vs_odd", "The number of figures is even.", "The number of figures is odd.",
         {"property": "count parity", "left": "even", "right": "odd"},
         correct=(("An even count of shapes.", "An odd count of shapes."),
                  ("Shapes come in pairs.", "One shape is left without a pair.")),
         incorrect=(("Two shapes.", "Three shapes."), ("Many shapes.", "Few shapes.")),
         keywords=(("even", "pairs"), ("odd", "without a pair", "unpaired")))
def even_vs_odd(rng, side):
    return _n_figures(rng, int(_pick(rng, (2, 4, 6) if side == 0 else (3, 5, 7))), most=7)


# ---------------------------------------------------------------- spatial

def _one_somewhere(rng, box):
    s = _panel()
    r = rng.uniform(0.08, 0.14)
    c = (rng.uniform(box[0] + r, box[2] - r), rng.uniform(box[1] + r, box[3] - r))
    return s, {"figures": [figure(s, _pick(rng, CLOSED), c, r, rng.uniform(0, 360))]}


@concept("classic", "spatial", "upper_vs_lower", "The figure is in the upper half.", "The figure is in the lower half.",
         {"property": "center y", "left": "< 0.45", "right": "> 0.55"},
         correct=(("The shape is near the top.", "The shape is near the bottom."),
                  ("Object above the middle.", "Object below the middle.")),
         incorrect=(("The shape is large.", "The shape is small."), ("In different places.", "In different places.")),
         keywords=(("upper", "top", "above"), ("lower", "bottom", "below")))
def upper_vs_lower(rng, side):
    return _one_somewhere(rng, (0.04, 0.04, 0.96, 0.45) if side == 0 else (0.04, 0.55, 0.96, 0.96))


@concept("classic", "spatial", "left_vs_right_half", "The figure is in the left half.",
         "The figure is in the right half.", {"property": "center x", "left": "< 0.45", "right": "> 0.55"},
         correct=(("The shape sits on the left side.", "The shape sits on the right side."),
                  ("Object left of centre.", "Object right of centre.")),
         incorrect=(("The shape is near the top.", "The shape is near the bottom."), ("Circles.", "Squares.")),
         keywords=(("left",), ("right",)))
def left_vs_right_half(rng, side):
    return _one_somewhere(rng, (0.04, 0.04, 0.45, 0.96) if side == 0 else (0.55, 0.04, 0.96, 0.96))


@concept("classic", "spatial", "horizontal_vs_vertical", "The elongated figure lies horizontally.",
         "The elongated figure stands vertically.", {"property": "orientation", "left": "horizontal", "right": "vertical"},
         correct=(("Horizontal lines or ovals.", "Vertical lines or ovals."),
                  ("The long axis is level.", "The long axis is upright.")),
         incorrect=(("Oriented differently.", "Oriented differently."), ("Lines.", "Ellipses.")),
         keywords=(("horizontal", "level", "lying"), ("vertical", "upright", "standing")))
def horizontal_vs_vertical(rng, side):
    s = _panel()
    kind = _pick(rng, ("ellipse", "segment"))
    r = rng.uniform(0.2, 0.32)
    rot = (0.0 if side == 0 else 90.0) + rng.uniform(-12, 12)
    c = 0.5 + rng.uniform(-0.1, 0.1, 2)
    return s, {"figures": [figure(s, kind, c, r, rot)]}


@concept("classic", "spatial", "circle_above_vs_below_triangle", "The circle is above the triangle.",
         "The circle is below the triangle.", {"property": "relative position", "left": "circle above triangle",
                                                 "right": "circle below triangle"},
         correct=(("The round shape is on top of the triangle.", "The round shape is under the triangle."),
                  ("Triangle under the circle.", "Triangle over the circle.")),
         incorrect=(("A circle and a triangle.", "A triangle and a circle."),
                    ("The circle is on the left.", "The circle is on the right.")),
         keywords=(("above the triangle", "on top of the triangle", "over the triangle", "triangle below",
                    "triangle under", "triangle beneath"),
                   ("below the triangle", "under the triangle", "beneath the triangle", "triangle above",
                    "triangle over", "triangle on top")))
def circle_above_vs_below_triangle(rng, side):
    s = _panel()
    r1, r2 = rng.uniform(0.08, 0.13, 2)
    x1, x2 = rng.uniform(0.15, 0.85, 2)
    rc, rt = (r1, r2)
    yc = rng.uniform(rc + 0.03, 0.38) if side == 0 else rng.uniform(0.62, 0.97 - rc)
    yt = rng.uniform(0.62, 0.97 - rt) if side == 0 else rng.uniform(rt + 0.03, 0.38)
    figs = [figure(s, "circle", (x1, yc), r1), figure(s, "triangle", (x2, yt), r2)]
    return s, {"figures": figs}


@concept("classic", "spatial", "dot_inside_vs_outside", "The dot is inside the figure.",
         "The dot is outside the figure.", {"property": "containment", "left": "inside", "right": "outside"},
         correct=(("The small dot lies within the outline.", "The small dot lies outside the outline."),
                  ("Point enclosed by the shape.", "Point not enclosed by the shape.")),
         incorrect=(("A dot and a shape.", "A shape and a dot."), ("The dot is small.", "The dot is big.")),
         keywords=(("inside", "within", "enclosed", "in the"), ("outside", "not enclosed", "out of")))
def dot_inside_vs_outside(rng, side):
    s = _panel()
    kind = _pick(rng, ("circle", "square", "hexagon", "pentagon"))
    r = rng.uniform(0.22, 0.3)
    c = 0.5 + rng.uniform(-0.12, 0.12, 2)
    fig = figure(s, kind, c, r)
    inner = r * (0.5 if kind != "square" else 0.6) * 0.8
    for _ in range(100):
        a = rng.uniform(0, 2 * math.pi)
        d = rng.uniform(0, inner) if side == 0 else r + rng.uniform(0.07, 0.12)
        p = (c[0] + d * math.cos(a), c[1] - d * math.sin(a))
        if 0.05 <= p[0] <= 0.95 and 0.05 <= p[1] <= 0.95:
            break
    s.circle(p, 0.03, color=INK)
    return s, {"figures": [fig], "dot": [round(p[0], 4), round(p[1], 4)]}


# ---------------------------------------------------------------- same

@concept("classic", "same", "identical_vs_different", "All figures are identical.", "All figures are different.",
         {"property": "figure kinds", "left": "one kind, one size", "right": "all kinds differ"},
         correct=(("The shapes are copies of one shape.", "Every shape is a different kind."),
                  ("Same figure repeated.", "No two figures alike.")),
         incorrect=(("Three figures.", "Four figures."), ("Circles.", "Squares.")),
         keywords=(("identical", "same", "copies", "repeated", "alike"), ("different", "differ", "varied", "no two")))
def identical_vs_different(rng, side):
    s = _panel()
    n = int(rng.integers(3, 6))
    kinds = [_pick(rng, CLOSED)] * n if side == 0 else list(rng.permutation(CLOSED)[:n])
    r = rng.uniform(0.08, 0.12)
    radii = np.full(n, r) if side == 0 else r * rng.uniform(0.8, 1.2, n)
    rot = rng.uniform(0, 360)
    figs = [figure(s, k, c, rr, rot if side == 0 else rng.uniform(0, 360))
            for k, c, rr in zip(kinds, _spread(rng, radii), radii)]
    return s, {"figures": figs}


@concept("classic", "same", "same_size_vs_different_sizes", "The figures all have the same size.",
         "The figures have different sizes.", {"property": "radius", "left": "equal", "right": "ratio >= 1.5"},
         correct=(("Equal-sized shapes.", "Shapes of varying size."), ("Uniform size.", "Mixed sizes.")),
         incorrect=(("Circles.", "Squares."), ("Small shapes.", "Big shapes.")),
         keywords=(("same size", "equal", "uniform"), ("different size", "varying", "mixed", "vary")))
def same_size_vs_different_sizes(rng, side):
    s = _panel()
    n = int(rng.integers(3, 5))
    mean = rng.uniform(0.08, 0.12)             # the same mean size on either side: only the spread differs
    if side == 0:
        radii = np.full(n, mean)
    else:
        radii = rng.permutation(np.linspace(1.0, 2.4, n) * rng.uniform(0.95, 1.05, n))
        radii = radii * mean / radii.mean()
    kind = _pick(rng, CLOSED)
    figs = [figure(s, kind, c, r, rng.uniform(0, 360)) for c, r in zip(_spread(rng, radii), radii)]
    return s, {"figures": figs}


# ---------------------------------------------------------------- shape

@concept("classic", "shape", "triangles_vs_quadrilaterals", "The figure is a triangle.", "The figure is a quadrilateral.",
         {"property": "corners", "left": 3, "right": 4},
         correct=(("Three-sided shapes.", "Four-sided shapes."), ("Triangles.", "Squares or rhombi.")),
         incorrect=(("Polygons.", "Polygons."), ("Big shapes.", "Small shapes.")),
         keywords=(("triangle", "three"), ("quadrilateral", "square", "four", "rhomb", "rectangle")))
def triangles_vs_quadrilaterals(rng, side):
    s = _panel()
    r = rng.uniform(0.15, 0.3)
    c = 0.5 + rng.uniform(-0.12, 0.12, 2)
    kind = "triangle" if side == 0 else "square"
    return s, {"figures": [figure(s, kind, c, r, rng.uniform(0, 360))]}


@concept("classic", "shape", "convex_vs_concave", "The figure is convex.", "The figure is concave.",
         {"property": "convexity", "left": "convex", "right": "concave"},
         correct=(("No dents in the outline.", "The outline has an inward notch."),
                  ("Convex shapes.", "Non-convex shapes.")),
         incorrect=(("Circles.", "Stars."), ("Smooth shapes.", "Big shapes.")),
         keywords=(("convex", "no dent", "bulging"), ("concave", "non-convex", "notch", "dent", "inward")))
def convex_vs_concave(rng, side):
    s = _panel()
    kind = _pick(rng, ("circle", "triangle", "square", "pentagon", "hexagon", "ellipse") if side == 0 else ("star", "cross"))
    r = rng.uniform(0.15, 0.3)
    c = 0.5 + rng.uniform(-0.12, 0.12, 2)
    return s, {"figures": [figure(s, kind, c, r, rng.uniform(0, 360))]}


@concept("classic", "shape", "closed_vs_open", "The line is closed.", "The line is open.",
         {"property": "closed outline", "left": True, "right": False},
         correct=(("The curve has no ends.", "The curve has two free ends."), ("Closed shapes.", "Open lines.")),
         incorrect=(("Round.", "Straight."), ("Large.", "Small.")),
         keywords=(("closed", "no ends", "loop"), ("open", "free ends", "ends")))
def closed_vs_open(rng, side):
    s = _panel()
    kind = _pick(rng, ("circle", "triangle", "square", "pentagon", "ellipse") if side == 0 else ("arc", "zigzag"))
    r = rng.uniform(0.18, 0.3)
    c = 0.5 + rng.uniform(-0.1, 0.1, 2)
    return s, {"figures": [figure(s, kind, c, r, rng.uniform(0, 360))]}


@concept("classic", "shape", "curved_vs_straight", "The figure is bounded by a curve.",
         "The figure is bounded by straight lines.", {"property": "edges", "left": "curved", "right": "straight"},
         correct=(("Round shapes.", "Angular shapes."), ("Circles and ovals.", "Polygons.")),
         incorrect=(("Big shapes.", "Small shapes."), ("Closed.", "Open.")),
         keywords=(("curve", "round", "circle", "oval", "ellipse"), ("straight", "angular", "polygon", "corners")))
def curved_vs_straight(rng, side):
    s = _panel()
    kind = _pick(rng, ("circle", "ellipse") if side == 0 else ("triangle", "square", "pentagon", "hexagon"))
    r = rng.uniform(0.15, 0.3)
    c = 0.5 + rng.uniform(-0.12, 0.12, 2)
    return s, {"figures": [figure(s, kind, c, r, rng.uniform(0, 360))]}


# ---------------------------------------------------------------- semantic

def _glyph(rng, chars):
    s = _panel()
    ch = _pick(rng, chars)
    h = rng.uniform(0.35, 0.55)
    c = 0.5 + rng.uniform(-0.12, 0.12, 2)
    s.text(ch, (float(c[0]), float(c[1])), height=h, color=INK, rotation=rng.uniform(-15, 15))
    return s, {"glyph": ch, "center": [round(float(c[0]), 4), round(float(c[1]), 4)]}


@concept("classic", "semantic", "letters_vs_digits", "The sign is a letter.", "The sign is a digit.",
         {"property": "character class", "left": "letter", "right": "digit"},
         correct=(("Alphabet characters.", "Numerals."), ("Letters.", "Numbers.")),
         incorrect=(("Curvy signs.", "Straight signs."), ("Large characters.", "Small characters.")),
         keywords=(("letter", "alphabet"), ("digit", "number", "numeral")))
def letters_vs_digits(rng, side):
    return _glyph(rng, "ABCDEFGHKLMNPRSTUVWXYZ" if side == 0 else "0123456789")


@concept("classic", "semantic", "vowels_vs_consonants", "The letter is a vowel.", "The letter is a consonant.",
         {"property": "letter class", "left": "vowel", "right": "consonant"},
         correct=(("A, E, I, O or U.", "Any other letter."), ("Vowels.", "Consonants.")),
         incorrect=(("Letters.", "Letters."), ("Round letters.", "Angular letters.")),
         keywords=(("vowel", "a e i o"), ("consonant", "other letter")))
def vowels_vs_consonants(rng, side):
    return _glyph(rng, "AEIOU" if side == 0 else "BCDFGHKLMNPRSTVWXZ")


# ---------------------------------------------------------------- presence

@concept("classic", "presence", "circle_vs_no_circle", "There is a circle.", "There is no circle.",
         {"property": "circle present", "left": True, "right": False},
         correct=(("A circle appears.", "No circle appears."), ("Contains a circle.", "Without circles.")),
         incorrect=(("Three shapes.", "Four shapes."), ("Curved shapes.", "Polygons only, and large.")),
         keywords=(("circle", "round"), ("no circle", "no round", "without circle", "without round")))
def circle_vs_no_circle(rng, side):
    s = _panel()
    n = int(rng.integers(2, 5))
    others = ("triangle", "square", "pentagon", "hexagon", "star", "cross", "ellipse")
    kinds = [_pick(rng, others) for _ in range(n)]
    if side == 0:                       # ellipses on either side: "round" alone does not tell a circle
        kinds[int(rng.integers(n))] = "circle"
    radii = rng.uniform(0.07, 0.12, n)
    return s, {"figures": [figure(s, k, c, r, rng.uniform(0, 360)) for k, c, r in zip(kinds, _spread(rng, radii), radii)]}


@concept("classic", "presence", "filled_vs_none", "One figure is filled black.", "No figure is filled.",
         {"property": "filled figure present", "left": True, "right": False},
         correct=(("There is a solid black shape.", "All shapes are outlines."), ("A filled shape.", "Only outlines.")),
         incorrect=(("Big shapes.", "Small shapes."), ("Three shapes.", "Two shapes.")),
         keywords=(("filled", "solid", "black"), ("no figure is filled", "outline", "empty", "hollow", "no filled")),
         ink_is_the_concept=True)
def filled_vs_none(rng, side):
    s = _panel()
    n = int(rng.integers(2, 5))
    radii = rng.uniform(0.07, 0.12, n)
    fill_one = int(rng.integers(n)) if side == 0 else -1
    figs = [figure(s, _pick(rng, CLOSED), c, r, rng.uniform(0, 360), filled=(i == fill_one))
            for i, (c, r) in enumerate(zip(_spread(rng, radii), radii))]
    return s, {"figures": figs}
