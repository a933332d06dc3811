"""ELVIS layouts of pac-men drawn a batch at a time: similarity's ``pacman`` (groups by the
direction they face) and closure's illusory triangles and squares (pac-men at a figure's
corners, mouths facing its centre). Slots ``[B, 1, K]``, the objects group by group; each
pac-man's ``direction`` and ``mouth`` ride along as extra fields (the batch draws a pac-man
turned to its direction).
"""
from __future__ import annotations

import math

import numpy as np

from engine.batched import BatchRandom, in_box, place_once

from .batched import CANDIDATES, Batch, _pick, attributes, figure_slots, grouped_slots, outlines, radii_of, redrawn
from .layouts import CLOSURE_BASE, FIGURE_RADIUS, MISALIGN, SMALLEST_FIGURE

PACMAN_COUNTS = {"s": (2, 4), "m": (5, 7), "l": (8, 10)}
PACMAN_BASE = {"s": 0.045, "m": 0.038, "l": 0.032}
MOUTH = 70.0
PACMAN_GROUPS = 3
PER_PACMAN_GROUP = max(hi for _, hi in PACMAN_COUNTS.values()) + 1      # a broken count may add one
MIX_TRIES = 16               # direction sets a principle negative tries until one mixes its groups
KANIZSA_FIGURES = max(FIGURE_RADIUS)


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


def feature_triangle(rng: BatchRandom, batch: Batch) -> dict:
    """Illusory triangles: three pac-men at each figure's corners (see :func:`_kanizsa_once`)."""
    return _kanizsa(rng, batch, 3)


def feature_square(rng: BatchRandom, batch: Batch) -> dict:
    """Illusory squares: four pac-men at each figure's corners (see :func:`_kanizsa_once`)."""
    return _kanizsa(rng, batch, 4)


def _kanizsa(rng: BatchRandom, batch: Batch, sides: int) -> dict:
    out = redrawn(rng, batch, lambda r, b: _kanizsa_once(r, b, sides))
    hidden = ("fig_center", "fig_radius", "fig_rotation", "turned")

    def describe(b: int) -> dict:
        figs = []
        for g in range(int(batch.groups[b])):
            fig = {"center": out["fig_center"][b, g].tolist(), "radius": float(out["fig_radius"][b, g]),
                   "rotation": float(out["fig_rotation"][b, g])}
            if out["turned"][b, g].any():
                fig["turned"] = [round(float(t), 2) for t in out["turned"][b, g, :sides]]
            figs.append(fig)
        return {"figures": figs, "sides": sides}
    return {**{k: v for k, v in out.items() if k not in hidden}, "describe": describe}


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
    u_hit, u_hit1, u_sign, u_turn = rng.random(F), rng.random(), rng.random(F), rng.random(F, sides)
    hit = (u_hit < 0.5) & (np.arange(F)[None, :] < G[:, None])
    none = ~hit.any(1)
    hit[none, _pick(u_hit1, G)[none]] = True
    hit &= ~batch.principle[:, None]
    sign = np.where(u_sign < 0.5, 1.0, -1.0)
    turned = np.where(hit[..., None], (MISALIGN[0] + u_turn * (MISALIGN[1] - MISALIGN[0])) * sign[..., None], 0.0)
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
