"""Aerial-style Bongard concepts: synthetic top-down scenes drawn by the engine (terrain,
fields with crop rows, roads with traffic, roundabouts, buildings, vehicles, water, boats,
planes, trees, clouds)."""
from __future__ import annotations

import math

import numpy as np

from engine.placement import scatter
from engine.scene import Scene

from .concepts import concept

GRASS = (104, 138, 76)
WATER = (58, 110, 165)
ASPHALT = (92, 92, 96)
ROOFS = {"red": (170, 60, 50), "grey": (140, 140, 150), "brown": (120, 80, 50), "blue": (60, 90, 150),
         "white": (225, 225, 220), "slate": (70, 70, 80)}


def _pick(rng, values):
    values = list(values)
    return values[int(rng.integers(len(values)))]


def terrain(rng, base=GRASS) -> Scene:
    """Textured ground: a base colour under faint patches of other greens and browns."""
    s = Scene(background=base)
    for _ in range(10):
        radii = rng.uniform(0.08, 0.3, 2)
        c = tuple(rng.uniform(radii.max(), 1 - radii.max(), 2))        # patches stay inside the panel
        shade = tuple(int(v) for v in np.clip(np.array(base) + rng.integers(-25, 26, 3), 0, 255))
        s.ellipse(c, tuple(radii), rotation=rng.uniform(0, 180), color=shade, alpha=0.5)
    return s


def road(s: Scene, p0, p1, width=0.12, dashes=True) -> None:
    """A road from ``p0`` to ``p1`` (square ends: it may run to the panel's edge)."""
    p0, p1 = np.array(p0, float), np.array(p1, float)
    d = p1 - p0
    s.rectangle(tuple((p0 + p1) / 2), (float(np.hypot(*d)), width), rotation=math.degrees(math.atan2(-d[1], d[0])),
                color=ASPHALT)
    if dashes:
        for t in np.linspace(0.02, 0.98, 12)[::2]:
            a, b = p0 + (p1 - p0) * t, p0 + (p1 - p0) * (t + 0.04)
            s.line(tuple(a), tuple(b), width=0.008, color=(235, 235, 235))


def car(s: Scene, c, heading: float, colour) -> dict:
    """A car seen from above, pointing at ``heading`` degrees (0 = right, counter-clockwise)."""
    a = math.radians(heading)
    u = np.array([math.cos(a), -math.sin(a)])
    s.rectangle(tuple(c), (0.06, 0.032), rotation=heading, color=colour)
    s.rectangle(tuple(np.array(c) + u * 0.012), (0.014, 0.026), rotation=heading, color=(40, 50, 60))   # windscreen
    return {"kind": "car", "center": [round(float(c[0]), 4), round(float(c[1]), 4)], "heading": round(heading, 2)}


def building(s: Scene, c, size: float, roof: str, colour: str) -> dict:
    if roof == "square":
        s.square(tuple(c), size, color=ROOFS[colour])
        s.square(tuple(c), size, color=(60, 60, 60), fill=False, stroke=0.006)
    else:                                   # the same area as a square roof of this size
        r = size / math.sqrt(math.pi)
        s.circle(tuple(c), r, color=ROOFS[colour])
        s.circle(tuple(c), r, color=(60, 60, 60), fill=False, stroke=0.006)
    return {"kind": "building", "center": [round(float(c[0]), 4), round(float(c[1]), 4)], "size": round(size, 4),
            "roof": roof, "colour": colour}


def tree(s: Scene, c, r: float) -> dict:
    s.circle(tuple(c), r, color=(34, 80, 34))
    s.circle((c[0] - r * 0.25, c[1] - r * 0.25), r * 0.45, color=(60, 110, 50))
    return {"kind": "tree", "center": [round(float(c[0]), 4), round(float(c[1]), 4)], "radius": round(r, 4)}


def cloud(s: Scene, c, r: float, rng) -> dict:
    for _ in range(5):
        off = rng.uniform(-r, r, 2)
        s.ellipse((c[0] + off[0], c[1] + off[1] * 0.5), (r * rng.uniform(0.6, 1.0), r * rng.uniform(0.4, 0.6)),
                  color=(250, 250, 252), alpha=0.85)
    return {"kind": "cloud", "center": [round(float(c[0]), 4), round(float(c[1]), 4)], "radius": round(r, 4)}


def boat(s: Scene, c, heading: float) -> dict:
    s.polygon(tuple(c), 0.08, 3, rotation=heading - 90, color=(240, 240, 235), aspect=0.45)
    s.rectangle(tuple(c), (0.02, 0.012), rotation=heading, color=(120, 80, 50))
    return {"kind": "boat", "center": [round(float(c[0]), 4), round(float(c[1]), 4)], "heading": round(heading, 2)}


def plane(s: Scene, c, heading: float) -> dict:
    s.rectangle(tuple(c), (0.11, 0.018), rotation=heading, color=(215, 215, 220))          # fuselage
    a = math.radians(heading)
    u = np.array([math.cos(a), -math.sin(a)])
    s.rectangle(tuple(np.array(c) + u * 0.01), (0.022, 0.1), rotation=heading, color=(200, 200, 205))   # wings
    s.rectangle(tuple(np.array(c) - u * 0.045), (0.012, 0.04), rotation=heading, color=(200, 200, 205))  # tail
    return {"kind": "plane", "center": [round(float(c[0]), 4), round(float(c[1]), 4)], "heading": round(heading, 2)}


def _spots(rng, n, r, box=(0.05, 0.05, 0.95, 0.95), gap=0.03):
    return scatter(rng, np.full(n, r), box, gap=gap)


def _buildings(rng, n, roof_of, size_of, colour_of):
    s = terrain(rng)
    sizes = [size_of(k) for k in range(n)]
    facts = [building(s, c, sz, roof_of(k), colour_of(k))
             for k, (c, sz) in enumerate(zip(scatter(rng, np.array(sizes) * 0.75, (0.04, 0.04, 0.96, 0.96), gap=0.04),
                                              sizes))]
    return s, {"objects": facts}


# ---------------------------------------------------------------- shape

@concept("aerial", "shape", "square_vs_circular_roofs", "The buildings have square roofs.",
         "The buildings have circular roofs.", {"property": "roof shape", "left": "square", "right": "circular"},
         correct=(("Rectangular houses.", "Round buildings."), ("Square roofs.", "Circular roofs.")),
         incorrect=(("Red roofs.", "Grey roofs."), ("Few buildings.", "Many buildings.")),
         keywords=(("square", "rectangular", "box"), ("circular", "round", "cylindr")))
def square_vs_circular_roofs(rng, side):
    roof = "square" if side == 0 else "circle"
    return _buildings(rng, int(rng.integers(2, 5)), lambda k: roof, lambda k: rng.uniform(0.1, 0.18),
                      lambda k: _pick(rng, ROOFS))


@concept("aerial", "shape", "island_vs_peninsula", "The land is an island surrounded by water.",
         "The land is a peninsula joined to the shore.", {"property": "land touches the frame", "left": False,
                                                          "right": True},
         correct=(("The land mass is closed off by water on all sides.", "The land mass connects to the mainland."),
                  ("Islands.", "Peninsulas.")),
         incorrect=(("Green land.", "Blue water."), ("Big land.", "Small land.")),
         keywords=(("island", "surrounded", "all sides"), ("peninsula", "joined", "connects", "mainland", "attached")))
def island_vs_peninsula(rng, side):
    s = Scene(background=WATER)
    c = np.array([rng.uniform(0.35, 0.65), rng.uniform(0.35, 0.65)])
    r = rng.uniform(0.18, 0.26)
    s.ellipse(tuple(c), (r, r * rng.uniform(0.7, 1.0)), rotation=rng.uniform(0, 180), color=GRASS)
    touches = side == 1
    edge = None
    if touches:
        edge = _pick(rng, ("top", "bottom", "left", "right"))
        target = {"top": (c[0], 0.0), "bottom": (c[0], 1.0), "left": (0.0, c[1]), "right": (1.0, c[1])}[edge]
        d = np.array(target) - c
        s.rectangle(tuple(c + d / 2), (float(np.hypot(*d)), r * 0.9), rotation=math.degrees(math.atan2(-d[1], d[0])),
                    color=GRASS)
    for _ in range(int(rng.integers(1, 4))):
        a, d = rng.uniform(0, 2 * math.pi), rng.uniform(0, r * 0.5)
        tree(s, (c[0] + d * math.cos(a), c[1] - d * math.sin(a)), 0.03)
    return s, {"land": {"center": [round(float(c[0]), 4), round(float(c[1]), 4)], "radius": round(float(r), 4),
                        "neck_to": edge}}


# ---------------------------------------------------------------- spatial

def _traffic(rng, keep_left: bool):
    s = terrain(rng)
    vertical = bool(rng.integers(2))
    x = rng.uniform(0.4, 0.6)
    p0, p1 = ((x, 0.0), (x, 1.0)) if vertical else ((0.0, x), (1.0, x))
    road(s, p0, p1, width=0.2)
    cars: list[dict] = []
    want = int(rng.integers(2, 5))
    for _ in range(50):
        if len(cars) == want:
            break
        heading = _pick(rng, (90.0, 270.0) if vertical else (0.0, 180.0))
        a = math.radians(heading)
        fwd = np.array([math.cos(a), -math.sin(a)])
        left_of = np.array([fwd[1], -fwd[0]])            # the driver's left, on screen (y down)
        along = rng.uniform(0.08, 0.92)
        c = (np.array([x, along]) if vertical else np.array([along, x])) + left_of * (0.05 if keep_left else -0.05)
        if all(math.dist(c, q["center"]) >= 0.08 for q in cars):
            cars.append(car(s, c, heading, _pick(rng, [(200, 40, 40), (230, 230, 230), (40, 60, 160), (30, 30, 30)])))
    return s, {"road": {"vertical": vertical, "position": round(float(x), 4)}, "objects": cars}


@concept("aerial", "spatial", "left_vs_right_hand_traffic", "Vehicles drive on the left side of the road.",
         "Vehicles drive on the right side of the road.", {"property": "lane side", "left": "left", "right": "right"},
         correct=(("Left-hand traffic.", "Right-hand traffic."),
                  ("Cars keep to the left lane.", "Cars keep to the right lane.")),
         incorrect=(("Few cars.", "Many cars."), ("Vertical roads.", "Horizontal roads.")),
         keywords=(("left hand", "left side", "left lane", "keep left", "on the left"),
                   ("right hand", "right side", "right lane", "keep right", "on the right")))
def left_vs_right_hand_traffic(rng, side):
    return _traffic(rng, keep_left=side == 0)


@concept("aerial", "spatial", "field_rows_horizontal_vs_vertical", "The crop rows run horizontally.",
         "The crop rows run vertically.", {"property": "row orientation", "left": "horizontal", "right": "vertical"},
         correct=(("Furrows go left to right.", "Furrows go top to bottom."),
                  ("Horizontal field lines.", "Vertical field lines.")),
         incorrect=(("Fields.", "Fields."), ("Brown fields.", "Green fields.")),
         keywords=(("horizontal", "left to right", "east west"), ("vertical", "top to bottom", "north south")))
def field_rows_horizontal_vs_vertical(rng, side):
    s = terrain(rng)
    fields = []
    for k, c in enumerate(scatter(rng, np.full(int(rng.integers(1, 4)), 0.2), (0.02, 0.02, 0.98, 0.98), gap=0.04)):
        w, h = rng.uniform(0.25, 0.34, 2)
        colour = _pick(rng, [(190, 170, 90), (150, 170, 70), (160, 120, 70)])
        s.rectangle(tuple(c), (w, h), color=colour)
        angle = rng.uniform(-8, 8)
        for t in np.linspace(-0.42, 0.42, 9):
            if side == 0:
                a, b = (c[0] - w / 2, c[1] + t * h), (c[0] + w / 2, c[1] + t * h)
            else:
                a, b = (c[0] + t * w, c[1] - h / 2), (c[0] + t * w, c[1] + h / 2)
            s.line(a, b, width=0.008, color=tuple(max(0, v - 45) for v in colour))
        fields.append({"kind": "field", "center": [round(float(c[0]), 4), round(float(c[1]), 4)],
                       "rows": "horizontal" if side == 0 else "vertical", "tilt": round(float(angle), 2)})
    return s, {"objects": fields}


@concept("aerial", "spatial", "house_above_vs_below_road", "The house is above the road.",
         "The house is below the road.", {"property": "relative position", "left": "house above road",
                                           "right": "house below road"},
         correct=(("The building lies north of the road.", "The building lies south of the road."),
                  ("Road under the house.", "Road over the house.")),
         incorrect=(("A house and a road.", "A road and a house."), ("Red roof.", "Grey roof.")),
         keywords=(("above the road", "north of the road", "road under", "road below", "over the road"),
                   ("below the road", "south of the road", "road over", "road above", "under the road")))
def house_above_vs_below_road(rng, side):
    s = terrain(rng)
    y = rng.uniform(0.4, 0.6)
    road(s, (0.0, y), (1.0, y), width=0.1)
    size = rng.uniform(0.12, 0.18)
    hy = rng.uniform(0.05 + size / 2, y - 0.08 - size / 2) if side == 0 else rng.uniform(y + 0.08 + size / 2,
                                                                                           0.95 - size / 2)
    b = building(s, (rng.uniform(0.15, 0.85), hy), size, _pick(rng, ("square", "circle")), _pick(rng, ROOFS))
    return s, {"road": {"y": round(float(y), 4)}, "objects": [b]}


# ---------------------------------------------------------------- presence

@concept("aerial", "presence", "clouds_vs_clear", "There are clouds.", "There are no clouds.",
         {"property": "clouds present", "left": True, "right": False},
         correct=(("Cloudy weather.", "Clear weather."), ("White clouds cover parts of the view.", "A clear sky.")),
         incorrect=(("Green land.", "Brown land."), ("Many houses.", "Few houses.")),
         keywords=(("cloud",), ("no cloud", "clear", "cloudless", "without cloud")), ink_is_the_concept=True)
def clouds_vs_clear(rng, side):
    s = terrain(rng)
    objs = [building(s, c, 0.1, _pick(rng, ("square", "circle")), _pick(rng, ROOFS))
            for c in _spots(rng, int(rng.integers(1, 4)), 0.07)]
    # large white roofs on either side alike (0 to 2): white alone must not tell clouds, and
    # white roofs must not be a second answer
    objs += [building(s, c, 0.17, "square", "white") for c in _spots(rng, int(rng.integers(0, 3)), 0.12)]
    if side == 0:
        objs += [cloud(s, c, 0.1, rng) for c in _spots(rng, int(rng.integers(1, 3)), 0.13, gap=0.0)]
    return s, {"objects": objs}


@concept("aerial", "presence", "roundabout_vs_crossroads", "The roads meet at a roundabout.",
         "The roads meet at a plain crossing.", {"property": "roundabout present", "left": True, "right": False},
         correct=(("A traffic circle.", "An intersection without a circle."),
                  ("Roundabout junction.", "Ordinary crossroads.")),
         incorrect=(("Two roads.", "Three roads."), ("Grey roads.", "Black roads.")),
         keywords=(("roundabout", "traffic circle", "circle"), ("plain", "without a circle", "ordinary",
                                                               "no roundabout", "crossroad")))
def roundabout_vs_crossroads(rng, side):
    s = terrain(rng)
    c = 0.5 + rng.uniform(-0.1, 0.1, 2)
    arms = int(rng.integers(3, 5))
    a0 = rng.uniform(0, 90)
    for k in range(arms):                  # each arm runs to the panel's edge
        a = math.radians(a0 + 360 * k / arms)
        u = np.array([math.cos(a), -math.sin(a)])
        t = min((1.0 - c[i]) / u[i] if u[i] > 1e-9 else (-c[i] / u[i] if u[i] < -1e-9 else 9.0) for i in (0, 1))
        road(s, tuple(c), tuple(c + u * t), width=0.09)
    if side == 0:
        s.ring(tuple(c), 0.16, 0.08, color=ASPHALT)
        s.circle(tuple(c), 0.08, color=(90, 150, 70))
    else:                                   # a paved square as large as the ring
        s.square(tuple(c), 0.245, color=ASPHALT, rotation=a0)
    return s, {"junction": {"center": [round(float(c[0]), 4), round(float(c[1]), 4)], "arms": arms,
                            "roundabout": side == 0}}


@concept("aerial", "presence", "cars_vs_empty_road", "There are cars on the road.", "The road is empty.",
         {"property": "cars present", "left": True, "right": False},
         correct=(("Vehicles on the street.", "No vehicles on the street."), ("Traffic.", "No traffic.")),
         incorrect=(("A straight road.", "A curved road."), ("Left-hand traffic.", "Right-hand traffic.")),
         keywords=(("car", "vehicle", "traffic"), ("empty", "no vehicle", "no car", "no traffic", "without")),
         ink_is_the_concept=True)
def cars_vs_empty_road(rng, side):
    s, f = _traffic(rng, keep_left=bool(rng.integers(2)))
    r = f["road"]
    x = r["position"]
    if side == 1:
        s = terrain(rng)
        road(s, (x, 0.0), (x, 1.0), width=0.2) if r["vertical"] else road(s, (0.0, x), (1.0, x), width=0.2)
        f = {"road": r, "objects": []}
    want = int(rng.integers(0, 4))           # bushes off the road on either side alike (0 to 3)
    for _ in range(100):
        if sum(o["kind"] == "tree" for o in f["objects"]) == want:
            break
        c = rng.uniform(0.05, 0.95, 2)
        if abs((c[0] if r["vertical"] else c[1]) - x) > 0.15:
            f["objects"].append(tree(s, c, 0.028))
    return s, f


# ---------------------------------------------------------------- semantic

@concept("aerial", "semantic", "boats_vs_planes", "The vehicles are boats.", "The vehicles are planes.",
         {"property": "vehicle type", "left": "watercraft", "right": "aircraft"},
         correct=(("Watercraft.", "Aircraft."), ("Ships.", "Airplanes.")),
         incorrect=(("Vehicles on the water.", "Vehicles that are grey and white."),
                    ("Natural scenes.", "Man-made scenes.")),
         keywords=(("boat", "ship", "watercraft", "vessel"), ("plane", "aircraft", "airplane", "jet")))
def boats_vs_planes(rng, side):
    s = terrain(rng)
    y = rng.uniform(0.4, 0.6)
    s.rectangle((0.5, y), (1.0, 0.4), color=WATER, rotation=rng.uniform(-4, 4))      # a river
    n = int(rng.integers(1, 4))
    # on the water or on the shore on either side alike (boats drawn up on land, planes
    # floating as seaplanes): where they are must not be a second answer
    on_water = bool(rng.integers(2))
    land = (0.05, 0.02, 0.95, y - 0.22) if rng.integers(2) else (0.05, y + 0.22, 0.95, 0.98)
    box = (0.05, y - 0.15, 0.95, y + 0.15) if on_water else land
    draw = boat if side == 0 else plane
    objs = [dict(draw(s, c, rng.uniform(0, 360)), on="water" if on_water else "land")
            for c in _spots(rng, n, 0.06, box, 0.02)]
    return s, {"river_y": round(float(y), 4), "objects": objs}


@concept("aerial", "semantic", "trees_vs_houses", "The objects are trees.", "The objects are houses.",
         {"property": "object type", "left": "trees", "right": "houses"},
         correct=(("Woodland.", "Buildings."), ("Groups of trees.", "Groups of houses.")),
         incorrect=(("Green objects.", "Red objects."), ("Round objects.", "Square objects.")),
         keywords=(("tree", "wood", "forest"), ("house", "building", "home")))
def trees_vs_houses(rng, side):
    s = terrain(rng, base=(150, 150, 110))
    n = int(rng.integers(3, 7))
    if side == 0:
        objs = [tree(s, c, 0.055) for c in _spots(rng, n, 0.06)]
    else:
        objs = [building(s, c, 0.1, _pick(rng, ("square", "circle")), _pick(rng, ("slate", "brown")))
                for c in _spots(rng, n, 0.075)]
    return s, {"objects": objs}


# ---------------------------------------------------------------- number, size, same

@concept("aerial", "number", "two_vs_six_buildings", "There are two buildings.", "There are six buildings.",
         {"property": "building count", "left": 2, "right": 6},
         correct=(("Each image shows 2 houses.", "Each image shows 6 houses."), ("A pair of buildings.", "Six buildings.")),
         incorrect=(("Few buildings.", "Several buildings of different colours."), ("Square roofs.", "Round roofs.")),
         keywords=(("two", "2", "pair"), ("six", "6")), ink_is_the_concept=True)
def two_vs_six_buildings(rng, side):
    n = 2 if side == 0 else 6
    base = rng.uniform(0.08, 0.11)           # one size range and one tree count on either side:
    s, f = _buildings(rng, n, lambda k: _pick(rng, ("square", "circle")), lambda k: base * rng.uniform(0.9, 1.1),
                      lambda k: _pick(rng, ROOFS))
    taken = [(o["center"], o["size"] * 0.75) for o in f["objects"]]
    want = n + int(rng.integers(0, 4))       # neither size nor trees may be a second answer
    for _ in range(200):
        if len(f["objects"]) >= want:
            break
        c = rng.uniform(0.06, 0.94, 2)
        if all(math.dist(c, q) > r + 0.06 for q, r in taken):
            f["objects"].append(tree(s, c, 0.035))
            taken.append((c, 0.035))
    return s, f


@concept("aerial", "size", "small_vs_large_buildings", "The buildings are small.", "The buildings are large.",
         {"property": "building size", "left": "<= 0.09", "right": ">= 0.2"},
         correct=(("Small houses.", "Big warehouses."), ("Tiny buildings.", "Huge buildings.")),
         incorrect=(("Square roofs.", "Round roofs."), ("Few buildings.", "Many buildings.")),
         keywords=(("small", "tiny", "little"), ("large", "big", "huge", "warehouse")), ink_is_the_concept=True)
def small_vs_large_buildings(rng, side):
    n = int(rng.integers(1, 4))
    lo, hi = (0.06, 0.09) if side == 0 else (0.2, 0.26)
    return _buildings(rng, n, lambda k: _pick(rng, ("square", "circle")), lambda k: rng.uniform(lo, hi),
                      lambda k: _pick(rng, ROOFS))


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
    return _buildings(rng, n, lambda k: roof, lambda k: rng.uniform(0.1, 0.15), lambda k: colours[k])
