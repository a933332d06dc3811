"""Aerial-style Bongard concepts: synthetic top-down scenes in an orthophoto look, drawn by
the engine (textured ground, fields with crop rows, roads with markings and traffic,
roundabouts, buildings with shaded roofs, vehicles, water with shores, boats, planes, tree
crowns, clouds), every object casting a shadow away from one sun at the upper left.

Ground scale: a panel is ``PANEL_M`` metres across; cars, lanes, trees and buildings keep
their sizes in metres. Textures come from :mod:`kernels.terrain`, seeded from the panel's
``rng``. Facts list every drawn object (``kind``, ``center``, ``size``, ``colour``) and the
panel's ``terrain``.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from engine.placement import scatter
from engine.scene import Scene
from kernels import terrain as tex
from .concepts import concept

PANEL_M = 50.0                           # metres across a panel
M = 1.0 / PANEL_M                        # one metre in panel units
SUN = 0.45                               # shadow length per unit of height, cast down-right
SHADOW = 0.42                            # shadow darkness (primitive alpha)
GROUND_KINDS = tuple(tex.GROUNDS)
VARIANTS = 6                             # shared texture variants per kind (crowns, roofs, clouds, fields)

WATER = (52, 86, 104)
SAND = (176, 164, 128)
SHORE = (134, 126, 100)                  # wet sand and shingle, darker than dry sand: a peninsula's
                                         # longer coast must not brighten the panel
ASPHALT = tex.ASPHALT
MARKING = (226, 226, 218)
ROOFS = {"red": (160, 72, 58), "grey": (138, 138, 142), "brown": (118, 84, 58), "blue": (70, 92, 130),
         "white": (222, 222, 216), "slate": (74, 78, 86)}
CARS = {"red": (170, 36, 36), "white": (226, 226, 226), "blue": (36, 58, 150), "black": (24, 24, 26),
        "silver": (162, 164, 170), "green": (40, 92, 58)}
GLASS_DARK, GLASS_LIGHT = (26, 32, 42), (176, 194, 208)
CAR_L, CAR_W = 4.6 * M, 1.9 * M
LANE = 3.5 * M
ROWS = 9                                 # crop rows across a field
FIELDS = {"wheat": (196, 174, 104), "green crop": (116, 146, 66), "ploughed": (146, 112, 80)}


def _pick(rng, values):
    values = list(values)
    return values[int(rng.integers(len(values)))]


def _xy(c) -> list[float]:
    return [round(float(c[0]), 4), round(float(c[1]), 4)]


def _merge(dst: Scene, src: Scene) -> None:
    """Append ``src``'s primitives and sprites to ``dst`` (same frame), in order."""
    offset = len(dst.sprites)
    dst.sprites.extend(src.sprites)
    dst.primitives.extend(p._replace(index=p.index + offset) if p.kind == "sprite" else p for p in src.primitives)


# shared texture banks: a panel's rng picks a variant (and a quarter turn); one image per
# variant keeps the sprites of a batch few (each distinct image costs a copy when a batch is
# collated). Land ground is drawn afresh for every panel: no two panels look alike.
@functools.lru_cache(maxsize=None)
def _water(v: int):
    return tex.water(11000 + 7 * v)


@functools.lru_cache(maxsize=None)
def _asphalt(v: int):
    return tex.asphalt(13000 + 7 * v)


@functools.lru_cache(maxsize=None)
def _crown(v: int):
    return tex.crowns(7000 + v, 1)[0]


@functools.lru_cache(maxsize=None)
def _roof(shape: str, finish: str, v: int):
    return tex.roof(8000 + 17 * v, shape, finish)


@functools.lru_cache(maxsize=None)
def _cloud(v: int):
    return tex.cloud(9000 + 31 * v)


@functools.lru_cache(maxsize=None)
def _field(colour: str, vertical: bool, v: int):
    return tex.crop_rows(10000 + 13 * v, FIELDS[colour], rows=ROWS, vertical=vertical)


def _shadow_ratio(height: float, footprint: float) -> float:
    return round(SUN * height / math.sqrt(2) / footprint / 0.05) * 0.05        # quantised: shared images


class Panel:
    """One aerial panel under construction, drawn in layers (ground, flat features, shadows,
    objects, sky) whatever the order of the calls; :meth:`done` returns the scene
    and facts."""

    def __init__(self, rng, ground: str | None = None):
        self.rng = rng
        self.seed = int(rng.integers(1, 2 ** 30))
        self.terrain = ground if ground is not None else _pick(rng, GROUND_KINDS)
        self.ground, self.flat, self.shadows, self.things, self.sky = (Scene() for _ in range(5))
        img = _water(int(rng.integers(VARIANTS))) if self.terrain == "water" else tex.ground(self.seed, self.terrain)
        self.ground.background = tuple(int(round(v)) for v in img.numpy().reshape(3, -1).mean(1))
        self.ground.sprite(img, (0.5, 0.5), (1.0, 1.0), rotation=90.0 * int(rng.integers(4)))
        self.objects: list[dict] = []

    def done(self, **facts) -> tuple[Scene, dict]:
        s = Scene(background=self.ground.background)
        _merge(s, self.ground)
        _merge(s, self.flat)
        for layer in (self.shadows, self.things, self.sky):
            _merge(s, layer)
        return s, {**facts, "objects": self.objects, "terrain": self.terrain}

    def _add(self, obj: dict) -> dict:
        self.objects.append(obj)
        return obj

    # ------------------------------------------------------------ flat features
    def road(self, p0, p1, width=2 * LANE + 1.0 * M, centre_line=True, clear=0.0, marks: Scene | None = None) -> None:
        """A road from ``p0`` to ``p1`` (square ends: it may run past the panel's edge), edge
        lines and a dashed centre line; markings start ``clear`` past ``p0`` (a junction) and
        go to ``marks`` (a layer drawn later) when given."""
        marks = self.flat if marks is None else marks
        p0, p1 = np.array(p0, float), np.array(p1, float)
        d = p1 - p0
        length = float(np.hypot(*d))
        u = d / length
        n = np.array([-u[1], u[0]])
        angle = math.degrees(math.atan2(-d[1], d[0]))
        self.flat.sprite(_asphalt(int(self.rng.integers(VARIANTS))), tuple((p0 + p1) / 2), (length, width),
                         rotation=angle)
        a, b = p0 + u * clear, p1
        for side in (-1, 1):                                     # solid edge lines
            off = n * side * (width / 2 - 0.4 * M)
            marks.line(tuple(a + off), tuple(b + off), width=0.25 * M, color=MARKING)
        if centre_line:                                          # 3 m dashes every 9 m
            for t in np.arange(clear + 1.0 * M, length - 3.0 * M, 9 * M):
                a, b = p0 + u * t, p0 + u * (t + 3 * M)
                if min(a.min(), b.min()) >= 0 and max(a.max(), b.max()) <= 1:      # no sliver at the frame
                    marks.line(tuple(a), tuple(b), width=0.3 * M, color=MARKING)

    # ------------------------------------------------------------ objects
    def _cast(self, shape: str, c, footprint: float, height: float) -> None:
        ratio = _shadow_ratio(height, footprint)
        off = footprint * ratio / 2
        self.shadows.sprite(tex.cast_shadow(shape, ratio), (c[0] + off, c[1] + off),
                            (footprint * (1 + ratio),) * 2, alpha=SHADOW)

    def building(self, c, size: float, roof: str, colour: str) -> dict:
        """A building whose roof is a square of side ``size``, or a circle of the same area."""
        height = float(self.rng.uniform(4, 8)) * M
        finish = _pick(self.rng, ("pitched", "flat"))
        shade = _roof(roof, finish, int(self.rng.integers(VARIANTS)))
        foot = size if roof == "square" else 2 * size / math.sqrt(math.pi)
        self._cast(roof, c, foot, height)
        if roof == "square":
            self.things.square(tuple(c), size, color=ROOFS[colour])
            self.things.sprite(shade, tuple(c), (size, size))
            self.things.square(tuple(c), size, color=(50, 50, 50), fill=False, stroke=0.004)
        else:
            self.things.circle(tuple(c), foot / 2, color=ROOFS[colour])
            self.things.sprite(shade, tuple(c), (foot, foot))
            self.things.circle(tuple(c), foot / 2, color=(50, 50, 50), fill=False, stroke=0.004)
        return self._add({"kind": "building", "center": _xy(c), "size": round(size, 4), "roof": roof,
                          "colour": colour, "finish": finish, "height": round(height / M, 2)})

    def tree(self, c, r: float) -> dict:
        """A tree crown of radius ``r`` (panel units) and its shadow."""
        height = float(self.rng.uniform(2.2, 3.2)) * r
        self._cast("circle", c, 2 * r, height)
        self.things.sprite(_crown(int(self.rng.integers(VARIANTS))), tuple(c), (2 * r, 2 * r),
                           rotation=float(self.rng.uniform(0, 360)))
        return self._add({"kind": "tree", "center": _xy(c), "size": round(2 * r, 4), "radius": round(r, 4),
                          "colour": "green"})

    def car(self, c, heading: float, colour: str) -> dict:
        """A car seen from above, ``heading`` degrees (0 = right, counter-clockwise): glass
        that contrasts with the body, a deep windscreen ahead of the roof and a shallow rear
        window behind it, and a tapered bonnet."""
        a = math.radians(heading)
        u = np.array([math.cos(a), -math.sin(a)])
        c = np.asarray(c, float)
        body = CARS[colour]
        glass = GLASS_DARK if 0.299 * body[0] + 0.587 * body[1] + 0.114 * body[2] > 100 else GLASS_LIGHT
        self.shadows.rectangle(tuple(c - u * 0.06 * CAR_L + 0.45 * M), (0.88 * CAR_L, CAR_W), rotation=heading,
                               color=(0, 0, 0), alpha=SHADOW)
        self.things.rectangle(tuple(c - u * 0.06 * CAR_L), (0.88 * CAR_L, CAR_W), rotation=heading, color=body)
        self.things.ellipse(tuple(c + u * 0.38 * CAR_L), (0.12 * CAR_L, 0.5 * CAR_W), rotation=heading,
                            color=body)                           # a rounded, tapering bonnet
        self.things.rectangle(tuple(c + u * 0.13 * CAR_L), (0.22 * CAR_L, 0.9 * CAR_W), rotation=heading,
                              color=glass)
        self.things.rectangle(tuple(c - u * 0.33 * CAR_L), (0.12 * CAR_L, 0.74 * CAR_W), rotation=heading,
                              color=glass)
        return self._add({"kind": "car", "center": _xy(c), "heading": round(heading, 2), "size": round(CAR_L, 4),
                          "colour": colour})

    def cloud(self, c, r: float) -> dict:
        white, dark = _cloud(int(self.rng.integers(VARIANTS)))
        rot = float(self.rng.uniform(0, 360))
        size = (2.4 * r, 1.8 * r)
        self.shadows.sprite(dark, (c[0] + 0.09, c[1] + 0.09), size, rotation=rot, alpha=0.6)
        self.sky.sprite(white, tuple(c), size, rotation=rot)
        return self._add({"kind": "cloud", "center": _xy(c), "size": round(2 * r, 4), "radius": round(r, 4),
                          "colour": "off-white"})

    def boat(self, c, heading: float) -> dict:
        c = np.asarray(c, float)
        self.shadows.polygon(tuple(c + 0.5 * M), 0.08, 3, rotation=heading - 90, color=(0, 0, 0), aspect=0.45,
                             alpha=SHADOW)
        self.things.polygon(tuple(c), 0.08, 3, rotation=heading - 90, color=(236, 236, 230), aspect=0.45)
        self.things.rectangle(tuple(c), (0.022, 0.014), rotation=heading, color=(120, 84, 56))
        return self._add({"kind": "boat", "center": _xy(c), "heading": round(heading, 2), "size": 0.12,
                          "colour": "white"})

    def plane(self, c, heading: float) -> dict:
        a = math.radians(heading)
        u = np.array([math.cos(a), -math.sin(a)])
        c = np.asarray(c, float)
        for layer, off, col, col2 in ((self.shadows, np.full(2, 0.8 * M), (0, 0, 0), (0, 0, 0)),
                                      (self.things, np.zeros(2), (218, 218, 222), (196, 198, 204))):
            style = {"alpha": SHADOW} if layer is self.shadows else {}
            layer.rectangle(tuple(c + off), (0.11, 0.018), rotation=heading, color=col, **style)          # fuselage
            layer.rectangle(tuple(c + off + u * 0.01), (0.022, 0.1), rotation=heading, color=col2, **style)  # wings
            if layer is self.things:             # the tail's shadow would show as a sliver
                layer.rectangle(tuple(c - u * 0.045), (0.012, 0.04), rotation=heading, color=col2)  # tail
        return self._add({"kind": "plane", "center": _xy(c), "heading": round(heading, 2), "size": 0.11,
                          "colour": "white"})

    def scatter_trees(self, want: int, r: float, keep_off) -> None:
        """Up to ``want`` trees of radius ``r`` where ``keep_off(c)`` is False and clear of
        the objects already drawn."""
        placed = 0
        for _ in range(200):
            if placed == want:
                break
            c = self.rng.uniform(r + 0.01, 1 - r - 0.01, 2)
            if keep_off(c) or any(math.dist(c, o["center"]) < r + o.get("size", 0.05) * 0.75 + 0.02
                                  for o in self.objects):
                continue
            self.tree(c, r)
            placed += 1


def _spots(rng, n, r, box=(0.05, 0.05, 0.95, 0.95), gap=0.03):
    return scatter(rng, np.full(n, r), box, gap=gap)


def _buildings(rng, n, roof_of, size_of, colour_of):
    p = Panel(rng)
    sizes = [size_of(k) for k in range(n)]
    for k, (c, sz) in enumerate(zip(scatter(rng, np.array(sizes) * 0.75, (0.04, 0.04, 0.96, 0.96), gap=0.05),
                                    sizes)):
        p.building(c, sz, roof_of(k), colour_of(k))
    return p


# ---------------------------------------------------------------- shape

@concept("aerial", "shape", "square_vs_circular_roofs", "The buildings have square roofs.",
         "The buildings have circular roofs.", {"property": "roof shape", "left": "square", "right": "circular"},
         correct=(("Rectangular houses.", "Round buildings."), ("Square roofs.", "Circular roofs.")),
         incorrect=(("Red roofs.", "Grey roofs."), ("Few buildings.", "Many buildings.")),
         keywords=(("square", "rectangular", "box"), ("circular", "round", "cylindr")))
def square_vs_circular_roofs(rng, side):
    roof = "square" if side == 0 else "circle"
    return _buildings(rng, int(rng.integers(2, 5)), lambda k: roof, lambda k: rng.uniform(0.1, 0.18),
                      lambda k: _pick(rng, ROOFS)).done()


def _land_distance(c, radii, angle: float, neck, size: int) -> np.ndarray:
    """``[size, size]``: roughly how far each pixel centre lies outside the land (panel
    units, negative inside): an ellipse (``radii`` turned by ``angle`` degrees), joined to
    an optional ``neck`` ``(p0, p1, width)``."""
    t = (np.arange(size) + 0.5) / size
    x, y = np.meshgrid(t, t)
    a = math.radians(angle)
    dx, dy = x - c[0], y - c[1]
    u, v = dx * math.cos(a) - dy * math.sin(a), dx * math.sin(a) + dy * math.cos(a)
    dist = (np.sqrt((u / radii[0]) ** 2 + (v / radii[1]) ** 2) - 1) * min(radii)     # ~ distance outside
    if neck is not None:
        p0, p1, w = np.array(neck[0]), np.array(neck[1]), neck[2]
        d = p1 - p0
        s = np.clip(((x - p0[0]) * d[0] + (y - p0[1]) * d[1]) / float(d @ d), 0, 1)
        dist = np.minimum(dist, np.hypot(x - p0[0] - s * d[0], y - p0[1] - s * d[1]) - w / 2)
    return dist


def _land(seed: int, kind: str, c, radii, angle: float, neck, size: int = 128):
    """Land on water: ``[4, size, size]`` uint8, ground texture inside the land of
    :func:`_land_distance`, a sand shore around it and a ragged coastline; clear (water)
    elsewhere."""
    ragged = tex.fbm([seed + 3], size, cells=5, octaves=3)[0].numpy()
    dist = _land_distance(c, radii, angle, neck, size) + 0.012 * ragged
    img = tex.ground(seed, kind, size).numpy().astype(np.float32)
    shore = dist > -0.018
    img[:, shore] = np.array(SHORE, np.float32)[:, None] + 0.35 * (img[:, shore] - img[:, shore].mean(1, keepdims=True))
    alpha = np.clip(0.5 - dist * size, 0, 1) * 255
    return np.concatenate([img, alpha[None]]).round().clip(0, 255).astype(np.uint8)


@concept("aerial", "shape", "island_vs_peninsula", "The land is an island surrounded by water.",
         "The land is a peninsula joined to the shore.", {"property": "land touches the frame", "left": False,
                                                          "right": True},
         correct=(("The land mass is closed off by water on all sides.", "The land mass connects to the mainland."),
                  ("Islands.", "Peninsulas.")),
         incorrect=(("Green land.", "Blue water."), ("Big land.", "Small land.")),
         keywords=(("island", "surrounded", "all sides"), ("peninsula", "joined", "connects", "mainland", "attached")))
def island_vs_peninsula(rng, side):
    p = Panel(rng, ground="water")
    c = np.array([rng.uniform(0.35, 0.65), rng.uniform(0.35, 0.65)])
    r = rng.uniform(0.18, 0.26)
    radii, angle = (r, r * rng.uniform(0.7, 1.0)), rng.uniform(0, 180)
    kind = _pick(rng, GROUND_KINDS)
    # an arm of land towards one edge on either side alike (as much land, as long a coast):
    # a peninsula's arm reaches the frame, an island's stops 7-11% of the panel short of it
    arm = _pick(rng, ("top", "bottom", "left", "right"))
    width = 0.55 * r
    stop = -0.1 if side == 1 else rng.uniform(0.07, 0.11) + width / 2
    target = {"top": (c[0], stop), "bottom": (c[0], 1 - stop), "left": (stop, c[1]), "right": (1 - stop, c[1])}[arm]
    neck = (tuple(c), target, width)
    edge = arm if side == 1 else None
    p.flat.sprite(_land(p.seed + 11, kind, c, radii, angle, neck), (0.5, 0.5), (1.0, 1.0))
    tr = 0.032
    n = int(rng.integers(1, 4))
    for _ in range(100):                     # trees well inside the land, apart from each other
        if len(p.objects) == n:
            break
        a, d = rng.uniform(0, 2 * math.pi), rng.uniform(0, r * 0.5)
        q = (c[0] + d * math.cos(a), c[1] - d * math.sin(a))
        if all(math.dist(q, o["center"]) > 2 * tr + 0.02 for o in p.objects):
            p.tree(q, tr)
    s, f = p.done(land={"center": _xy(c), "radius": round(float(r), 4), "arm_to": arm, "neck_to": edge})
    f["terrain"] = kind
    return s, f


# ---------------------------------------------------------------- spatial

def _road_panel(rng, width=2 * LANE + 1.0 * M):
    """A panel crossed by one straight road, vertical or horizontal, somewhere in its middle
    third, with 0-3 roadside trees (both sides of every road concept alike)."""
    p = Panel(rng)
    vertical = bool(rng.integers(2))
    x = rng.uniform(0.33, 0.67)
    p0, p1 = ((x, -0.02), (x, 1.02)) if vertical else ((-0.02, x), (1.02, x))
    p.road(p0, p1, width=width)
    return p, vertical, x


def _roadside_trees(p, vertical, x, width):
    p.scatter_trees(int(p.rng.integers(0, 4)), float(p.rng.uniform(0.026, 0.04)),
                    lambda c: abs((c[0] if vertical else c[1]) - x) < width / 2 + 0.06)


def _traffic(rng, keep_left: bool):
    width = 2 * LANE + 1.0 * M
    p, vertical, x = _road_panel(rng, width)
    want = int(rng.integers(2, 5))
    cars = 0
    for _ in range(50):
        if cars == want:
            break
        heading = _pick(rng, (90.0, 270.0) if vertical else (0.0, 180.0))
        a = math.radians(heading)
        fwd = np.array([math.cos(a), -math.sin(a)])
        left_of = np.array([fwd[1], -fwd[0]])            # the driver's left, on screen (y down)
        along = rng.uniform(0.08, 0.92)
        c = (np.array([x, along]) if vertical else np.array([along, x])) + left_of * (LANE / 2 if keep_left
                                                                                       else -LANE / 2)
        if all(math.dist(c, q["center"]) >= CAR_L + 0.03 for q in p.objects):
            p.car(c, heading, _pick(rng, CARS))
            cars += 1
    return p, vertical, x, width


@concept("aerial", "spatial", "left_vs_right_hand_traffic", "Vehicles drive on the left side of the road.",
         "Vehicles drive on the right side of the road.", {"property": "lane side", "left": "left", "right": "right"},
         correct=(("Left-hand traffic.", "Right-hand traffic."),
                  ("Cars keep to the left lane.", "Cars keep to the right lane.")),
         incorrect=(("Few cars.", "Many cars."), ("Vertical roads.", "Horizontal roads.")),
         keywords=(("left hand", "left side", "left lane", "keep left", "on the left"),
                   ("right hand", "right side", "right lane", "keep right", "on the right")))
def left_vs_right_hand_traffic(rng, side):
    p, vertical, x, width = _traffic(rng, keep_left=side == 0)
    _roadside_trees(p, vertical, x, width)
    return p.done(road={"vertical": vertical, "position": round(float(x), 4)})


@concept("aerial", "spatial", "field_rows_horizontal_vs_vertical", "The crop rows run horizontally.",
         "The crop rows run vertically.", {"property": "row orientation", "left": "horizontal", "right": "vertical"},
         correct=(("Furrows go left to right.", "Furrows go top to bottom."),
                  ("Horizontal field lines.", "Vertical field lines.")),
         incorrect=(("Fields.", "Fields."), ("Brown fields.", "Green fields.")),
         keywords=(("horizontal", "left to right", "east west"), ("vertical", "top to bottom", "north south")))
def field_rows_horizontal_vs_vertical(rng, side):
    p = Panel(rng)
    vertical = side == 1
    for c in scatter(rng, np.full(int(rng.integers(1, 4)), 0.2), (0.02, 0.02, 0.98, 0.98), gap=0.04):
        w, h = rng.uniform(0.25, 0.34, 2)
        colour = _pick(rng, FIELDS)
        angle = rng.uniform(-8, 8)
        p.flat.rectangle(tuple(c), (w + 0.012, h + 0.012), rotation=angle, color=(70, 84, 52))   # hedge / margin
        p.flat.sprite(_field(colour, vertical, int(rng.integers(VARIANTS))), tuple(c), (w, h), rotation=angle)
        p._add({"kind": "field", "center": _xy(c), "rows": "vertical" if vertical else "horizontal",
                "tilt": round(float(angle), 2), "size": round(float(max(w, h)), 4), "width": round(float(w), 4),
                "height": round(float(h), 4), "row_count": ROWS, "colour": colour})
    return p.done()


@concept("aerial", "spatial", "house_above_vs_below_road", "The house is above the road.",
         "The house is below the road.", {"property": "relative position", "left": "house above road",
                                           "right": "house below road"},
         correct=(("The building lies north of the road.", "The building lies south of the road."),
                  ("Road under the house.", "Road over the house.")),
         incorrect=(("A house and a road.", "A road and a house."), ("Red roof.", "Grey roof.")),
         keywords=(("above the road", "north of the road", "road under", "road below", "over the road"),
                   ("below the road", "south of the road", "road over", "road above", "under the road")))
def house_above_vs_below_road(rng, side):
    p = Panel(rng)
    y = rng.uniform(0.4, 0.6)
    width = 2 * LANE + 0.6 * M
    p.road((-0.02, y), (1.02, y), width=width)
    size = rng.uniform(0.12, 0.18)
    hy = rng.uniform(0.05 + size / 2, y - 0.08 - size / 2) if side == 0 else rng.uniform(y + 0.08 + size / 2,
                                                                                           0.95 - size / 2)
    p.building((rng.uniform(0.15, 0.85), hy), size, _pick(rng, ("square", "circle")), _pick(rng, ROOFS))
    _roadside_trees(p, False, y, width)
    return p.done(road={"y": round(float(y), 4)})


# ---------------------------------------------------------------- presence

@concept("aerial", "presence", "clouds_vs_clear", "There are clouds.", "There are no clouds.",
         {"property": "clouds present", "left": True, "right": False},
         correct=(("Cloudy weather.", "Clear weather."), ("White clouds cover parts of the view.", "A clear sky.")),
         incorrect=(("Green land.", "Brown land."), ("Many houses.", "Few houses.")),
         keywords=(("cloud",), ("no cloud", "clear", "cloudless", "without cloud")), ink_is_the_concept=True)
def clouds_vs_clear(rng, side):
    p = Panel(rng)
    for c in _spots(rng, int(rng.integers(1, 4)), 0.07):
        p.building(c, 0.1, _pick(rng, ("square", "circle")), _pick(rng, ROOFS))
    # large white roofs on either side alike (0 to 2): white alone must not tell clouds, and
    # white roofs must not be a second answer
    for c in _spots(rng, int(rng.integers(0, 3)), 0.12):
        p.building(c, 0.17, "square", "white")
    if side == 0:
        for c in _spots(rng, int(rng.integers(1, 3)), 0.13, gap=0.0):
            p.cloud(c, 0.1)
    return p.done()


@concept("aerial", "presence", "roundabout_vs_crossroads", "The roads meet at a roundabout.",
         "The roads meet at a plain crossing.", {"property": "roundabout present", "left": True, "right": False},
         correct=(("A traffic circle.", "An intersection without a circle."),
                  ("Roundabout junction.", "Ordinary crossroads.")),
         incorrect=(("Two roads.", "Three roads."), ("Grey roads.", "Black roads.")),
         keywords=(("roundabout", "traffic circle", "circle"), ("plain", "without a circle", "ordinary",
                                                               "no roundabout", "crossroad")))
def roundabout_vs_crossroads(rng, side):
    p = Panel(rng)
    c = 0.5 + rng.uniform(-0.1, 0.1, 2)
    arms = int(rng.integers(3, 5))
    a0 = rng.uniform(0, 90)
    dirs = []
    for k in range(arms):                  # each arm runs past the panel's edge
        a = math.radians(a0 + 360 * k / arms)
        u = np.array([math.cos(a), -math.sin(a)])
        t = min((1.02 - c[i]) / u[i] if u[i] > 1e-9 else (-0.02 - c[i]) / u[i] if u[i] < -1e-9 else 9.0
                for i in (0, 1))
        dirs.append((u, t))
    width = 2 * LANE
    marks = Scene()                        # markings go on top of the junction
    for u, t in dirs:
        p.road(tuple(c), tuple(c + u * t), width=width, clear=0.19, marks=marks)
    if side == 0:
        p.flat.ring(tuple(c), 0.16, 0.08, color=ASPHALT)
        p.flat.circle(tuple(c), 0.08, color=(96, 140, 72))
        p.flat.ring(tuple(c), 0.08, 0.072, color=(180, 180, 170))          # kerb of the central island
    else:                                   # a paved square as large as the ring
        p.flat.square(tuple(c), 0.245, color=ASPHALT, rotation=a0)
    _merge(p.flat, marks)

    def on_road(q):
        d = np.asarray(q) - c
        return np.hypot(*d) < 0.26 or any(abs(d[0] * u[1] - d[1] * u[0]) < width / 2 + 0.06 and d @ u > 0
                                          for u, _ in dirs)
    p.scatter_trees(int(rng.integers(0, 4)), float(rng.uniform(0.026, 0.04)), on_road)
    return p.done(junction={"center": _xy(c), "arms": arms, "roundabout": side == 0})


@concept("aerial", "presence", "cars_vs_empty_road", "There are cars on the road.", "The road is empty.",
         {"property": "cars present", "left": True, "right": False},
         correct=(("Vehicles on the street.", "No vehicles on the street."), ("Traffic.", "No traffic.")),
         incorrect=(("A straight road.", "A curved road."), ("Left-hand traffic.", "Right-hand traffic.")),
         keywords=(("car", "vehicle", "traffic"), ("empty", "no vehicle", "no car", "no traffic", "without")),
         ink_is_the_concept=True)
def cars_vs_empty_road(rng, side):
    keep_left = bool(rng.integers(2))
    if side == 0:
        p, vertical, x, width = _traffic(rng, keep_left)
    else:
        width = 2 * LANE + 1.0 * M
        p, vertical, x = _road_panel(rng, width)
    _roadside_trees(p, vertical, x, width)   # bushes off the road on either side alike (0 to 3)
    return p.done(road={"vertical": vertical, "position": round(float(x), 4)})


# ---------------------------------------------------------------- semantic

@concept("aerial", "semantic", "boats_vs_planes", "The vehicles are boats.", "The vehicles are planes.",
         {"property": "vehicle type", "left": "watercraft", "right": "aircraft"},
         correct=(("Watercraft.", "Aircraft."), ("Ships.", "Airplanes.")),
         incorrect=(("Vehicles on the water.", "Vehicles that are grey and white."),
                    ("Natural scenes.", "Man-made scenes.")),
         keywords=(("boat", "ship", "watercraft", "vessel"), ("plane", "aircraft", "airplane", "jet")))
def boats_vs_planes(rng, side):
    p = Panel(rng)
    y = rng.uniform(0.4, 0.6)
    tilt = rng.uniform(-4, 4)
    p.flat.rectangle((0.5, y), (1.3, 0.43), color=SAND, rotation=tilt)                 # shore
    p.flat.sprite(_water(int(rng.integers(VARIANTS))), (0.5, y), (1.3, 0.4), rotation=tilt)       # a river
    n = int(rng.integers(1, 4))
    # on the water or on the shore on either side alike (boats drawn up on land, planes
    # floating as seaplanes): where they are must not be a second answer
    on_water = bool(rng.integers(2))
    land = (0.05, 0.02, 0.95, y - 0.22) if rng.integers(2) else (0.05, y + 0.22, 0.95, 0.98)
    box = (0.05, y - 0.15, 0.95, y + 0.15) if on_water else land
    draw = p.boat if side == 0 else p.plane
    for c in _spots(rng, n, 0.06, box, 0.02):
        draw(c, rng.uniform(0, 360))["on"] = "water" if on_water else "land"
    return p.done(river_y=round(float(y), 4))


@concept("aerial", "semantic", "trees_vs_houses", "The objects are trees.", "The objects are houses.",
         {"property": "object type", "left": "trees", "right": "houses"},
         correct=(("Woodland.", "Buildings."), ("Groups of trees.", "Groups of houses.")),
         incorrect=(("Green objects.", "Red objects."), ("Round objects.", "Square objects.")),
         keywords=(("tree", "wood", "forest"), ("house", "building", "home")))
def trees_vs_houses(rng, side):
    p = Panel(rng)
    n = int(rng.integers(3, 7))
    if side == 0:
        for c in _spots(rng, n, 0.06):
            p.tree(c, 0.055)
    else:
        for c in _spots(rng, n, 0.075):
            p.building(c, 0.1, _pick(rng, ("square", "circle")), _pick(rng, ("slate", "brown")))
    return p.done()


# ---------------------------------------------------------------- number, size, same

@concept("aerial", "number", "two_vs_six_buildings", "There are two buildings.", "There are six buildings.",
         {"property": "building count", "left": 2, "right": 6},
         correct=(("Each image shows 2 houses.", "Each image shows 6 houses."), ("A pair of buildings.", "Six buildings.")),
         incorrect=(("Few buildings.", "Several buildings of different colours."), ("Square roofs.", "Round roofs.")),
         keywords=(("two", "2", "pair"), ("six", "6")), ink_is_the_concept=True)
def two_vs_six_buildings(rng, side):
    n = 2 if side == 0 else 6
    base = rng.uniform(0.08, 0.11)           # one size on either side, and no trees (as many trees would
                                             # be a smaller share of six buildings' panels: a second answer)
    # one or two roof colours on either side, every one of them used: how many colours
    # follows from neither the count nor chance
    palette = list(rng.permutation(list(ROOFS))[:int(rng.integers(1, 3))])
    colours = palette + [_pick(rng, palette) for _ in range(n - len(palette))]
    p = _buildings(rng, n, lambda k: _pick(rng, ("square", "circle")), lambda k: base, lambda k: colours[k])
    return p.done()


@concept("aerial", "size", "small_vs_large_buildings", "The buildings are small.", "The buildings are large.",
         {"property": "building size", "left": "<= 0.09", "right": ">= 0.2"},
         correct=(("Small houses.", "Big warehouses."), ("Tiny buildings.", "Huge buildings.")),
         incorrect=(("Square roofs.", "Round roofs."), ("Few buildings.", "Many buildings.")),
         keywords=(("small", "tiny", "little"), ("large", "big", "huge", "warehouse")), ink_is_the_concept=True)
def small_vs_large_buildings(rng, side):
    n = int(rng.integers(1, 4))
    lo, hi = (0.06, 0.09) if side == 0 else (0.2, 0.26)
    return _buildings(rng, n, lambda k: _pick(rng, ("square", "circle")), lambda k: rng.uniform(lo, hi),
                      lambda k: _pick(rng, ROOFS)).done()


@concept("aerial", "same", "same_vs_mixed_roof_colours", "All roofs have the same colour.",
         "The roofs have different colours.", {"property": "roof colours", "left": "one", "right": "all different"},
         correct=(("Uniform roof colour.", "Varied roof colours."), ("Matching roofs.", "Mismatched roofs.")),
         incorrect=(("Red roofs.", "Blue roofs."), ("Square roofs.", "Round roofs.")),
         keywords=(("same colour", "same color", "uniform", "matching", "one colour"),
                   ("different colour", "different color", "varied", "mismatched", "mixed")))
def same_vs_mixed_roof_colours(rng, side):
    n = int(rng.integers(3, 5))
    palette = ("red", "blue", "brown", "slate")          # similar brightness: the mix must not change the mean
    one = _pick(rng, palette)
    colours = [one] * n if side == 0 else list(rng.permutation(list(palette))[:n])
    roof = _pick(rng, ("square", "circle"))
    return _buildings(rng, n, lambda k: roof, lambda k: rng.uniform(0.1, 0.15), lambda k: colours[k]).done()
