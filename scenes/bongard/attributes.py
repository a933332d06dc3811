"""What a Bongard panel shows, as named numbers: the attributes the audit's nuisance probe
reads to find a second answer.

:func:`panel_attributes` flattens a panel's facts without knowing the concept: for all its
objects together (``all.``) and for every kind of object (``kind:building.``), their count,
mean size and size spread, mean position, the mean of every other number they carry and the
share of each value of every word or flag they carry (colour, roof, filled...); every other
fact of the panel (the road, the land, the terrain, a glyph) as numbers and one-hot words. :data:`STATES` names, per
concept, the attributes that state its rule (glob patterns); the probe leaves those out and
must then fail to tell the sides apart.
"""
from __future__ import annotations

import fnmatch
import math

from .family import FAMILY

# the concept's own attributes, by concept name: what the rule is, as the flattened facts say
# it (``all.``: every object of the panel; ``kind:<kind>.``: the objects of one kind)
STATES: dict[str, tuple[str, ...]] = {
    # classic
    "large_vs_small": ("*.size", "*.size_spread"),
    "three_vs_five": ("*.count",),
    "even_vs_odd": ("*.count",),
    "upper_vs_lower": ("*.y",),
    "left_vs_right_half": ("*.x",),
    "horizontal_vs_vertical": ("*.rotation",),
    "circle_above_vs_below_triangle": ("kind:*.y",),
    "dot_inside_vs_outside": ("dot.*",),
    "identical_vs_different": ("*.count", "all.kinds", "*.kind=*", "*.size_spread"),
    "same_size_vs_different_sizes": ("*.size_spread",),
    "triangles_vs_quadrilaterals": ("kind:*", "*.kind=*"),
    "convex_vs_concave": ("kind:*", "*.kind=*", "*.convex=*"),
    "closed_vs_open": ("kind:*", "*.kind=*", "*.closed=*", "*.convex=*"),
    "curved_vs_straight": ("kind:*", "*.kind=*"),
    "letters_vs_digits": ("glyph=*",),
    "vowels_vs_consonants": ("glyph=*",),
    # a circle fills one of the figures' places: the totals and the other kinds' counts follow from it
    "circle_vs_no_circle": ("kind:circle.*", "all.*", "kind:*.count"),
    "filled_vs_none": ("*.filled=*",),
    # aerial
    "square_vs_circular_roofs": ("*.roof=*",),
    "island_vs_peninsula": ("land.neck_to=*",),
    "left_vs_right_hand_traffic": (),          # the lane as seen from each car: no single attribute
    "field_rows_horizontal_vs_vertical": ("*.rows=*",),
    "house_above_vs_below_road": ("*.y",),
    "clouds_vs_clear": ("kind:cloud.*", "all.*"),
    "roundabout_vs_crossroads": ("junction.roundabout",),
    "cars_vs_empty_road": ("kind:car.*", "all.*"),
    "boats_vs_planes": ("kind:boat.*", "kind:plane.*", "all.*"),
    "trees_vs_houses": ("kind:tree.*", "kind:building.*", "all.*"),
    "two_vs_six_buildings": ("kind:building.count", "all.count", "all.kind=*"),
    "small_vs_large_buildings": ("kind:building.size*", "all.size*"),
    "same_vs_mixed_roof_colours": ("*.colour=*", "*.colours"),
}

_SKIP = {"center", "radius", "size"}


def _number(v) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(v):
        return float(v)
    return None


def _objects(kind: str, objs: list[dict], out: dict) -> None:
    """Attributes of the objects ``objs`` under the prefix ``kind``."""
    out[f"{kind}.count"] = float(len(objs))
    if not objs:
        return
    if kind == "all":
        out["all.kinds"] = float(len({o.get("kind") for o in objs}))
    sizes = [float(o.get("size", 2 * o.get("radius", 0.0))) for o in objs]
    out[f"{kind}.size"] = sum(sizes) / len(sizes)
    out[f"{kind}.size_spread"] = max(sizes) - min(sizes)
    centres = [o["center"] for o in objs if "center" in o]
    if centres:
        out[f"{kind}.x"] = sum(c[0] for c in centres) / len(centres)
        out[f"{kind}.y"] = sum(c[1] for c in centres) / len(centres)
    fields = sorted({k for o in objs for k in o} - _SKIP)
    for f in fields:
        values = [o.get(f) for o in objs]
        nums = [_number(v) for v in values]
        if all(n is not None for n in nums) and not all(isinstance(v, bool) for v in values):
            out[f"{kind}.{f}"] = sum(nums) / len(nums)
        else:                               # shares from whole counts: summed fractions would round by count
            for v in sorted({str(v) for v in values}):
                out[f"{kind}.{f}={v}"] = sum(str(w) == v for w in values) / len(objs)
        if f == "colour":
            out[f"{kind}.colours"] = float(len({str(v) for v in values}))


def _flat(prefix: str, value, out: dict) -> None:
    n = _number(value)
    if n is not None:
        out[prefix] = n
    elif isinstance(value, dict):
        for k, v in value.items():
            _flat(f"{prefix}.{k}", v, out)
    elif isinstance(value, (list, tuple)) and all(_number(v) is not None for v in value):
        for i, v in enumerate(value):
            out[f"{prefix}.{'xyz'[i] if i < 3 else i}"] = _number(v)
    elif isinstance(value, str) or value is None:
        out[f"{prefix}={value}"] = 1.0


def panel_attributes(facts: dict) -> dict[str, float]:
    """The panel's attributes ``{name: value}`` from its ``facts`` (see the module docstring).
    Objects are the lists of dicts under ``objects`` and ``figures``, grouped by ``kind``."""
    out: dict[str, float] = {}
    objs = [o for key in ("objects", "figures") for o in facts.get(key, []) if isinstance(o, dict)]
    _objects("all", objs, out)
    by: dict[str, list[dict]] = {}
    for o in objs:
        by.setdefault(str(o.get("kind", "object")), []).append(o)
    for kind, group in sorted(by.items()):
        _objects(f"kind:{kind}", [{k: v for k, v in o.items() if k != "kind"} for o in group], out)
    for key, value in facts.items():
        if key not in ("objects", "figures"):
            _flat(key, value, out)
    return out


def states(concept: str, attribute: str) -> bool:
    """Whether ``attribute`` states the rule of ``concept`` (by name)."""
    return any(fnmatch.fnmatchcase(attribute, p) for p in STATES[concept])


@FAMILY.attributes
def sides(sample):
    """The sample's 12 panels as ``(side, attributes)`` pairs (0 = left) and the test saying
    which attributes state the concept; None for a problem without facts (real images)."""
    panels = sample.meta.get("panels") or {}
    name = sample.meta.get("concept")
    if name not in STATES or not panels:
        return None
    rows = [(k, panel_attributes(f)) for k, side in enumerate(("left", "right")) for f in panels[side]]
    return rows, (lambda a: states(name, a))
