"""ELVIS layouts drawn a batch at a time whose objects have a piece cut out: pac-men
(similarity's ``pacman``, groups by the direction they face; closure's illusory triangles
and squares, pac-men at a figure's corners with mouths facing its centre) and closure's
illusory circle (four shapes each cut by one disc of the background colour). Slots ``[B, 1,
K]``, the objects group by group; each pac-man's ``direction`` and ``mouth`` ride along as
extra fields (the batch draws a pac-man turned to its direction).
"""
from __future__ import annotations

import math

import numpy as np

from engine.batched import BatchRandom, in_box, place_once

from .batched import (CANDIDATES, Batch, _pick, attributes, figure_slots, grouped_slots, looked_up, outlines, radii_of,
                      redrawn)
from .layouts import BITE, CLOSURE_BASE, FIGURE_RADIUS, MIN_CUT, MISALIGN, NOTCH, REACH, SMALLEST_FIGURE

PACMAN_COUNTS = {"s": (2, 4), "m": (5, 7), "l": (8, 10)}
PACMAN_BASE = {"s": 0.045, "m": 0.038, "l": 0.032}
MOUTH = 70.0
PACMAN_GROUPS = 3
PER_PACMAN_GROUP = max(hi for _, hi in PACMAN_COUNTS.values()) + 1      # a broken count may add one
MIX_TRIES = 16               # direction sets a principle negative tries until one mixes its groups
KANIZSA_FIGURES = max(FIGURE_RADIUS)
CIRCLE_FIGURES = 4           # feature_circle's most figures


def pacman(rng: BatchRandom, batch: Batch) -> dict:
    """Pac-men in ``G`` groups, each group of one colour facing one of the 8 compass
    directions (different per group), scattered over the canvas; a principle negative turns
    each pac-man to a random direction, so that some group faces several ways and more
    directions show than there are groups."""
    out = redrawn(rng, batch, _pacman_once)
    dirs = out.pop("directions")

    def describe(b: int) -> dict:
        return {"directions": [float(d) for d in dirs[b, :int(batch.groups[b])]]}
    return {**out, "describe": describe}


def _pacman_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    """One draw of :func:`pacman`: slot arrays ``[B, 1, K]`` (extra ``direction`` and
    ``mouth``), ``directions [B, 3]`` per group, and ``ok [B]``."""
    B, G = len(batch), batch.groups
    K = PACMAN_GROUPS * PER_PACMAN_GROUP
    sizes, n, live, group = grouped_slots(rng, batch, PACMAN_COUNTS, PACMAN_GROUPS, K)
    a = attributes(rng, batch, np.where(live, group, 0), live, G, PACMAN_GROUPS, per_group=("color",))
    a["shape"] = np.full((B, K), "pacman", dtype=object)
    r = radii_of(a["size"], a["shape"], np.array([PACMAN_BASE[q] for q in batch.quantity]))
    dirs = 45.0 * np.argsort(rng.random(8), 1)[:, :PACMAN_GROUPS]          # distinct, one per group
    direction = np.take_along_axis(dirs, group, 1)
    tries = 45.0 * rng.integers(0, 8, MIX_TRIES, K)                           # [B,T,K]
    start = np.cumsum(sizes, 1) - sizes                                       # each group's first object
    first = np.take_along_axis(tries, np.minimum(start, K - 1)[:, None, :].repeat(MIX_TRIES, 1), 2)
    lead = np.take_along_axis(first, group[:, None, :].repeat(MIX_TRIES, 1), 2)
    mixed = ((tries != lead) & live[:, None]).any(2)
    shown = ((tries[..., None] == 45.0 * np.arange(8)) & live[:, None, :, None]).any(2).sum(2)
    good = mixed & (shown > G[:, None])
    pick = np.argmax(good, 1)
    ok = batch.principle | good.any(1)
    direction = np.where(batch.principle[:, None], direction, tries[np.arange(B), pick])
    centres, fits = place_once(rng, r, live, in_box((0.02, 0.02, 0.98, 0.98)), 0.025, CANDIDATES)
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": np.zeros((B, 1, K)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "group": group[:, None],
           "extra": {"direction": direction[:, None], "mouth": np.full((B, 1, K), MOUTH)}, "directions": dirs}
    return got, ok & fits


def turns(rng: BatchRandom, batch: Batch, figures: int, per_figure: int) -> np.ndarray:
    """Degrees ``[B, figures, per_figure]`` each inducer turns away from facing its figure's
    centre: 0 in a positive; in a principle negative every inducer of a random non-empty set
    of the ``G`` figures turns by :data:`MISALIGN`, all of a figure's the same way (a
    pinwheel), so that edges no longer line up while each inducer still roughly faces the
    centre: its ink sits where a positive's does and neighbouring inks keep their spacing,
    so that statistics blind to the alignment cannot tell the two apart."""
    G = batch.groups
    u_hit, u_hit1 = rng.random(figures), rng.random()
    u_sign, u_turn = rng.random(figures), rng.random(figures, per_figure)
    hit = (u_hit < 0.5) & (np.arange(figures)[None, :] < G[:, None])
    none = ~hit.any(1)
    hit[none, _pick(u_hit1, G)[none]] = True
    hit &= ~batch.principle[:, None]
    sign = np.where(u_sign < 0.5, 1.0, -1.0)
    return np.where(hit[..., None], (MISALIGN[0] + u_turn * (MISALIGN[1] - MISALIGN[0])) * sign[..., None], 0.0)


def _figures_of(out: dict, batch: Batch, per_figure: int, keys=("center", "radius", "rotation")) -> list:
    """Per sample ``b``, its figures' descriptions (``fig_<key>`` arrays of ``out``, and
    each turned figure's ``turned`` degrees)."""
    def describe(b: int) -> list[dict]:
        figs = []
        for g in range(int(batch.groups[b])):
            fig = {k: (out["fig_" + k][b, g].tolist() if k == "center" else float(out["fig_" + k][b, g])) for k in keys}
            if out["turned"][b, g].any():
                fig["turned"] = [round(float(t), 2) for t in out["turned"][b, g, :per_figure]]
            figs.append(fig)
        return figs
    return describe


def feature_triangle(rng: BatchRandom, batch: Batch) -> dict:
    """Illusory triangles: three pac-men at each figure's corners (see :func:`_kanizsa_once`)."""
    return _kanizsa(rng, batch, 3)


def feature_square(rng: BatchRandom, batch: Batch) -> dict:
    """Illusory squares: four pac-men at each figure's corners (see :func:`_kanizsa_once`)."""
    return _kanizsa(rng, batch, 4)


def _kanizsa(rng: BatchRandom, batch: Batch, sides: int) -> dict:
    """The illusory polygons with ``sides`` corners (:func:`_kanizsa_once`, redrawn where a
    draw fails): the layout dict, its figures described per sample."""
    out = redrawn(rng, batch, lambda r, b: _kanizsa_once(r, b, sides))
    figures = _figures_of(out, batch, sides)
    return {**{k: v for k, v in out.items() if not k.startswith("fig_") and k != "turned"},
            "describe": lambda b: {"figures": figures(b), "sides": sides}}


def _kanizsa_once(rng: BatchRandom, batch: Batch, sides: int) -> tuple[dict, np.ndarray]:
    """One draw of the illusory polygons: ``G`` figures at the fixed slots, a pac-man at
    each corner whose mouth (the polygon's interior angle) faces the figure's centre; in a
    principle negative every inducer of a random non-empty set of figures turns away by
    :data:`MISALIGN`, all of a figure's the same way (a pinwheel), so that the edges no
    longer line up while each ink sits where a positive's does."""
    B, G = len(batch), batch.groups
    F, K = KANIZSA_FIGURES, KANIZSA_FIGURES * sides
    R0 = np.minimum(np.array([FIGURE_RADIUS[int(g)] for g in G]), CLOSURE_BASE / (0.22 * 2 * math.sin(math.pi / sides)))
    side = 2 * R0 * math.sin(math.pi / sides)
    live = np.arange(K)[None, :] < (G * sides)[:, None]
    group = np.where(live, np.arange(K)[None, :] // sides, 0)
    a = attributes(rng, batch, group, live, G, F)
    a["shape"] = np.full((B, K), "pacman", dtype=object)
    r = radii_of(a["size"], a["shape"], 0.22 * side)
    hubs, ok = figure_slots(rng, G, R0 + np.where(live, r, 0.0).max(1), width=F)
    turned = turns(rng, batch, F, sides)
    rot = rng.random(F) * 360
    R = R0[:, None] * (SMALLEST_FIGURE + rng.random(F) * (1 - SMALLEST_FIGURE))
    corners = outlines("triangle" if sides == 3 else "square", hubs, R, rot, np.full(B, sides), sides)   # [B,F,S,2]
    toward = hubs[:, :, None] - corners
    heading = np.degrees(np.arctan2(-toward[..., 1], toward[..., 0])) % 360.0
    direction = ((heading + turned) % 360).reshape(B, K)
    got = {"valid": live[:, None], "center": np.where(live[..., None], corners.reshape(B, K, 2), 0.0)[:, None],
           "rotation": np.zeros((B, 1, K)), "radius": r[:, None], **{p: v[:, None] for p, v in a.items()},
           "group": group[:, None],
           "extra": {"direction": direction[:, None], "mouth": np.full((B, 1, K), 180.0 - 360.0 / sides)},
           "fig_center": hubs, "fig_radius": R, "fig_rotation": rot, "turned": turned}
    return got, ok


def feature_circle(rng: BatchRandom, batch: Batch) -> dict:
    """Four shapes around each figure's centre (see :func:`_circle_once`)."""
    out = redrawn(rng, batch, _circle_once)
    figures = _figures_of(out, batch, 4, ("center", "radius", "rotation", "cut"))
    return {**{k: v for k, v in out.items() if not k.startswith("fig_") and k != "turned"},
            "describe": lambda b: {"figures": figures(b)}}


def _circle_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    """One draw of feature_circle: ``G`` figures at the fixed slots, four shapes around each
    centre. In a positive one disc of the background colour, centred on the figure, cuts
    :data:`BITE` of each shape's extent away: the cuts lie on one circle. In a principle
    negative each shape of a broken figure is notched instead by its own small disc
    (:data:`NOTCH`), facing the centre but turned by :data:`MISALIGN`: each shape loses as
    much ink as a positive's, on its inner side, but the arcs belong to no common circle.
    The discs are the layout's ``over`` slots ``[B, figures * 4]``, drawn after the objects."""
    B, G = len(batch), batch.groups
    F, K = CIRCLE_FIGURES, CIRCLE_FIGURES * 4
    R0 = np.array([FIGURE_RADIUS[int(g)] for g in G])     # larger than CLOSURE_BASE allows where few: the cut reads
    base = 0.3 * R0
    live = np.arange(K)[None, :] < (G * 4)[:, None]
    group = np.where(live, np.arange(K)[None, :] // 4, 0)
    a = attributes(rng, batch, group, live, G, F)
    r = radii_of(a["size"], a["shape"], base)
    reach = R0 - (1 - BITE[1]) * base + (2 - BITE[0]) * np.where(live, r, 0.0).max(1)   # the farthest an edge gets
    hubs, ok = figure_slots(rng, G, reach, width=F)
    turned = turns(rng, batch, F, 4)
    rot = rng.random(F) * 90
    cut = R0[:, None] * (SMALLEST_FIGURE + rng.random(F) * (1 - SMALLEST_FIGURE)) - (1 - BITE[1]) * base[:, None]
    edge = (r * looked_up(a["shape"], lambda sh: REACH.get(sh, 1.0), np.float64)).reshape(B, F, 4)
    depth = np.clip((BITE[0] + rng.random(F, 4) * (BITE[1] - BITE[0])) * edge, MIN_CUT, 0.6 * edge)
    ang = np.radians(rot[..., None] + 45.0 + 90.0 * np.arange(4))
    u = np.stack([np.cos(ang), -np.sin(ang)], -1)                                   # [B,F,4,2]
    pts = hubs[:, :, None] + u * (cut[..., None] + edge - depth)[..., None]     # each reaches ``depth`` into the disc
    # a notch faces the centre turned by the figure's pinwheel: ``-u`` turned counter-clockwise on screen
    t = np.radians(turned)
    towards = np.stack([-np.cos(t) * u[..., 0] - np.sin(t) * u[..., 1],
                        np.sin(t) * u[..., 0] - np.cos(t) * u[..., 1]], -1)
    rho = NOTCH[0] * cut
    notched = turned.any(2)                                                         # [B,F]
    used = np.arange(F)[None, :] < G[:, None]
    over_c = np.where(notched[..., None, None], pts + towards * (rho[..., None] + edge - NOTCH[1] * depth)[..., None],
                      hubs[:, :, None])
    over_r = np.broadcast_to(np.where(notched, rho, cut)[..., None], (B, F, 4))
    over_v = used[..., None] & (notched[..., None] | (np.arange(4) == 0))
    notch = np.where(notched[..., None] & over_v, np.arange(K).reshape(F, 4), -1)
    centres = np.where(live[..., None], pts.reshape(B, K, 2), 0.0)
    # a notch bites its own shape only
    d = np.hypot(*(centres[:, None] - over_c.reshape(B, K, 1, 2)).transpose(3, 0, 1, 2)) - r[:, None] \
        - over_r.reshape(B, K, 1)
    bites = ((d < 0.004) & live[:, None]).sum(2)
    ok &= ~((notch.reshape(B, K) >= 0) & (bites > 1)).any(1)
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": (rng.random(K) * 360)[:, None],
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "group": group[:, None],
           "over": {"center": over_c.reshape(B, K, 2), "radius": over_r.reshape(B, K), "valid": over_v.reshape(B, K),
                    "notch": notch.reshape(B, K)},
           "fig_center": hubs, "fig_radius": cut + (1 - BITE[1]) * base[:, None], "fig_rotation": rot, "fig_cut": cut,
           "turned": turned}
    return got, ok
