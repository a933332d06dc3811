"""The built-in photographs: eye-level pictures of places drawn by the engine.

A *place* fixes what a photographer standing there would frame the same way every time:
the kind of place (city street, village, park, lakeside), the horizon, the hills, the
buildings and their window grids, the road, the trees and the light. A *shot* of the place
fills in what changes between two exposures: clouds, surface textures, which windows are
lit, the cars and the people. Shots of one place sit next to each other in the built-in
set, as bursts do in a photo collection, so a hard missing-piece item can draw distractors
that fit the hole's surroundings as well as the true piece does, and differ from it only
in detail (see :mod:`.tasks`).

:func:`photo` returns one picture, ``[3, S, S]`` uint8; the textures are
:mod:`kernels.landscape` images, composited as one background and drawn with the scene's
primitives and sprites by the batched renderer.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from engine.rendering import render
from engine.rng import sample_rng
from engine.scene import Scene
from kernels import landscape as L

SHOTS = 5                      # pictures of each place in the built-in set
KINDS = ("city", "village", "park", "lake")
SKIES = (((92, 140, 204), (196, 216, 232)), ((120, 150, 190), (214, 214, 210)),
         ((70, 110, 180), (230, 196, 160)), ((150, 160, 172), (210, 212, 214)))
GRASS = ((62, 92, 40), (130, 150, 70))
PAVEMENT = ((112, 110, 106), (168, 164, 156))
WALLS = ((196, 170, 140), (150, 96, 76), (214, 208, 196), (120, 124, 132), (178, 150, 104), (92, 84, 80),
         (224, 196, 150), (160, 170, 168))
ROOFS = ((140, 60, 44), (70, 70, 78), (104, 80, 60), (60, 80, 90))
PAINTS = ((180, 30, 30), (30, 60, 150), (230, 230, 230), (30, 30, 34), (190, 190, 196), (200, 160, 30),
          (40, 110, 60))
CLOTHES = ((40, 50, 120), (160, 40, 40), (230, 220, 200), (30, 30, 30), (60, 120, 70), (200, 140, 40))
LEAVES = ((52, 96, 40), (70, 110, 44), (44, 80, 52), (96, 112, 46))


@dataclass
class Place:
    """What every shot of a place shares (fractions of the picture, y down)."""
    kind: str
    horizon: float
    light: int
    sky: tuple
    seed: int                                                    # the textures, clouds and hills that every shot shares
    hill_height: float
    ground: tuple
    shore: float = 0.0                                           # lake: where the water meets the grass
    road: tuple | None = None                                    # (x at the bottom, half width there)
    buildings: list = field(default_factory=list)                # (x, width, top, wall, floors, columns, roof)
    trees: list = field(default_factory=list)                    # (x, base, height, width, leaves)
    lamps: list = field(default_factory=list)                    # (depth 0..1 from the horizon, side of the road)


def _pick(rng, options):
    return options[int(rng.integers(len(options)))]


def place(p: int) -> Place:
    """The layout of place ``p`` (seeded by ``p`` alone)."""
    rng = sample_rng(0, "jigsaw/photo-place", p)
    kind = _pick(rng, KINDS)
    hz = float(rng.uniform(0.4, 0.56))
    out = Place(kind, hz, int(rng.choice([-1, 1])), _pick(rng, SKIES), int(rng.integers(2 ** 31)),
                float(rng.uniform(0.04, 0.16)), PAVEMENT if kind == "city" else GRASS)
    if kind in ("city", "village"):
        out.road = (float(rng.uniform(0.25, 0.75)), float(rng.uniform(0.22, 0.4)))
        out.lamps = [(float(rng.uniform(0.08, 0.7)), int(rng.choice([-1, 1]))) for _ in range(int(rng.integers(1, 4)))]
    if kind == "lake":
        out.shore = float(rng.uniform(hz + 0.12, 0.8))
    _buildings(rng, out)
    n_trees = {"city": (1, 4), "village": (3, 7), "park": (6, 12), "lake": (3, 8)}[kind]
    for _ in range(int(rng.integers(*n_trees))):
        base = float(rng.uniform(hz + 0.03, 1.0)) if kind != "lake" else float(rng.uniform(out.shore, 1.0))
        scale = 0.25 + 0.9 * (base - hz) / (1 - hz)                     # nearer trees look bigger
        out.trees.append((float(rng.uniform(0, 1)), base, scale * float(rng.uniform(0.28, 0.5)),
                          scale * float(rng.uniform(0.14, 0.26)), _pick(rng, LEAVES)))
    out.trees.sort(key=lambda t: t[1])
    return out


def _buildings(rng, out: Place) -> None:
    """Buildings along the horizon: a street front in a city, houses in a village, a few far
    off elsewhere."""
    count = {"city": (5, 9), "village": (3, 6), "park": (0, 3), "lake": (1, 4)}[out.kind]
    tall = {"city": (0.25, 0.5), "village": (0.1, 0.2), "park": (0.05, 0.14), "lake": (0.04, 0.1)}[out.kind]
    x = float(rng.uniform(-0.05, 0.1))
    for _ in range(int(rng.integers(*count))):
        w = float(rng.uniform(0.1, 0.22)) if out.kind in ("city", "village") else float(rng.uniform(0.05, 0.12))
        top = out.horizon + 0.02 - float(rng.uniform(*tall))
        floors = max(2, int((out.horizon - top) / 0.045))
        out.buildings.append((x + w / 2, w, top, _pick(rng, WALLS), floors, max(2, int(w / 0.04)),
                              _pick(rng, ROOFS) if out.kind != "city" or rng.random() < 0.3 else None))
        x += w + float(rng.uniform(0.0, 0.08) if out.kind == "city" else rng.uniform(0.05, 0.3))
        if x > 1.05:
            break


def _road_mask(pl: Place, size: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(inside, across)`` for the ground rows ``rows`` (pixel rows below the horizon): the
    road's pixels and their position across it (-1..1), in perspective."""
    cx, half = _road_at(pl, np.clip((rows + 0.5) / size - pl.horizon, 0, None) / (1 - pl.horizon))
    x = (np.arange(size, dtype=np.float32)[None, :] + 0.5) / size
    across = (x - cx[:, None]) / half[:, None]
    return np.abs(across) <= 1, across


def background(pl: Place, shot_seed: int, size: int) -> np.ndarray:
    """Sky, hills, ground, water and road composited: ``[3, size, size]`` float."""
    top, bottom = pl.sky
    img = L.sky(pl.seed + 1, shot_seed, top, bottom, (size, size), cover=0.3 + 0.25 * ((pl.seed >> 3) % 7) / 7,
                 horizon=pl.horizon)
    line = L.ridge(pl.seed, size, pl.horizon + 0.01, pl.hill_height)
    h = L.hills(pl.seed + 10, line, (70, 92, 70), bottom, (size, size))
    img = img * (1 - h[3:] / 255) + h[:3] * (h[3:] / 255)
    y0 = int(round(pl.horizon * size))
    g = L.ground(pl.seed + 20, shot_seed + 20, *pl.ground, (size - y0, size), bottom)
    img[:, y0:] = g
    if pl.kind == "lake":
        s0 = int(round(pl.shore * size))
        img[:, y0:s0] = L.water(shot_seed + 30, (40, 70, 90), bottom, (s0 - y0, size))
    if pl.road is not None:
        rows = np.arange(y0, size, dtype=np.float32)
        inside, across = _road_mask(pl, size, rows)
        t = np.clip((rows + 0.5) / size - pl.horizon, 1e-3, None)[:, None]
        dash = (np.abs(across) < 0.03) & ((0.5 / t) % 1.0 < 0.5)
        edge = (np.abs(across) > 0.9) & (np.abs(across) <= 0.95)
        road = np.where(dash[None] | edge[None], 225.0, 82.0) + L.grain(shot_seed + 40, size - y0, size, 5.0)
        img[:, y0:] = np.where(inside[None], road, img[:, y0:])
    return img


def _building(s: Scene, pl: Place, b: tuple, seed: int, shot_seed: int) -> None:
    x, w, top, wall, floors, columns, roof = b
    h = pl.horizon + 0.02 - top
    face = L.facade(seed, shot_seed, wall, (max(8, int(h * 256)), max(8, int(w * 256))), floors, columns,
                    lit=0.25, light=pl.light)
    s.sprite(L.to_u8(face), (x, top + h / 2), (w, h))
    if roof is not None:
        peak = float(np.clip(0.04 + 0.3 * w, 0.03, 0.09))
        s.triangle((x - w / 2 - 0.01, top), (x + w / 2 + 0.01, top), (x, top - peak), color=roof)
        s.triangle((x, top - peak), (x + pl.light * (w / 2 + 0.01), top), (x, top), color=(0, 0, 0), alpha=0.18)
    else:
        s.rectangle((x, top + 0.006), (w + 0.008, 0.012), color=tuple(int(c * 0.7) for c in wall))
    s.rectangle((x - pl.light * w * 0.35, top + h / 2), (w * 0.3, h), color=(0, 0, 0), alpha=0.08)


def _tree(s: Scene, pl: Place, t: tuple, seed: int, shot_seed: int) -> None:
    x, base, height, width, leaves = t
    trunk = height * 0.35
    s.ellipse((x - pl.light * width * 0.6, base), (width * 0.7, width * 0.12), color=(0, 0, 0), alpha=0.3)
    s.rectangle((x, base - trunk / 2), (width * 0.12, trunk), color=(78, 58, 40))
    crown = L.foliage(seed, shot_seed, (64, 64), leaves, pl.light)
    s.sprite(L.to_u8(crown), (x, base - trunk - (height - trunk) / 2 + 0.02), (width, height - trunk + 0.04))


def _road_at(pl: Place, t: float) -> tuple[float, float]:
    """``(centre x, half width)`` of the road at depth ``t`` (0 at the horizon, 1 at the bottom)."""
    vx = 0.5 + 0.3 * (pl.road[0] - 0.5)
    return vx + (pl.road[0] - vx) * t, pl.road[1] * t + 0.004


def _lamp(s: Scene, pl: Place, t: float, side: int) -> None:
    """A street lamp on the ``side`` (-1 left, +1 right) verge at depth ``t``, its arm over the road."""
    cx, half = _road_at(pl, t)
    x, y, h = cx + side * (half + 0.02 * t + 0.005), pl.horizon + t * (1 - pl.horizon), 0.5 * t + 0.03
    s.line((x, y), (x, y - h), width=0.004 + 0.006 * t, color=(40, 42, 44))
    s.line((x, y - h), (x - side * 0.08 * t, y - h), width=0.003 + 0.005 * t, color=(40, 42, 44))
    s.rectangle((x - side * 0.08 * t, y - h + 0.006 * t), (0.03 * t + 0.004, 0.01 * t + 0.002), color=(236, 226, 190))


def _car(s: Scene, pl: Place, rng) -> None:
    y = float(rng.uniform(pl.horizon + 0.06, 0.97))
    t = (y - pl.horizon) / (1 - pl.horizon)
    cx, half = _road_at(pl, t)
    cx += half * float(rng.choice([-0.5, 0.5]))
    w, h = 0.32 * t + 0.02, 0.12 * t + 0.008
    paint = _pick(rng, PAINTS)
    s.ellipse((cx, y), (w * 0.55, h * 0.12), color=(0, 0, 0), alpha=0.45)
    s.rectangle((cx, y - h * 0.35), (w, h * 0.5), color=paint)
    s.rectangle((cx, y - h * 0.75), (w * 0.6, h * 0.35), color=paint)
    s.rectangle((cx, y - h * 0.74), (w * 0.5, h * 0.27), color=(60, 76, 92))
    for side in (-1, 1):
        s.circle((cx + side * w * 0.3, y - h * 0.08), h * 0.16, color=(20, 20, 22))
        s.rectangle((cx + side * w * 0.4, y - h * 0.4), (w * 0.1, h * 0.1), color=(250, 236, 190))


def _person(s: Scene, pl: Place, rng) -> None:
    y = float(rng.uniform(pl.horizon + 0.04, 0.98))
    if pl.kind == "lake":
        y = max(y, pl.shore + 0.01)
    x = float(rng.uniform(0.03, 0.97))
    t = (y - pl.horizon) / (1 - pl.horizon)
    h = 0.22 * t + 0.015
    coat, legs = _pick(rng, CLOTHES), _pick(rng, CLOTHES)
    s.ellipse((x - pl.light * h * 0.2, y), (h * 0.22, h * 0.04), color=(0, 0, 0), alpha=0.35)
    s.line((x - h * 0.06, y), (x - h * 0.04, y - h * 0.45), width=h * 0.08, color=legs)
    s.line((x + h * 0.06, y), (x + h * 0.04, y - h * 0.45), width=h * 0.08, color=legs)
    s.rectangle((x, y - h * 0.62), (h * 0.24, h * 0.36), color=coat)
    s.circle((x, y - h * 0.88), h * 0.09, color=(214, 170, 140))


def photo(p: int, shot: int, size: int) -> "torch.Tensor":  # noqa: F821
    """Shot ``shot`` of place ``p`` at ``size`` pixels: ``[3, size, size]`` uint8."""
    pl = place(p)
    rng = sample_rng(0, "jigsaw/photo-shot", p * 64 + shot)
    seed = int(rng.integers(2 ** 30))
    s = Scene(background=(255, 255, 255))
    for k, b in enumerate(pl.buildings):
        _building(s, pl, b, pl.seed + 100 + k, seed + 100 + k)
    for t, side in pl.lamps:
        _lamp(s, pl, t, side)
    movers = ["car"] * (int(rng.integers(1, 5)) if pl.road is not None else 0) + ["person"] * int(rng.integers(2, 7))
    things = [(t[1], "tree", t) for t in pl.trees]
    for kind in movers:
        things.append((float(rng.uniform(pl.horizon, 1)), kind, int(rng.integers(2 ** 30))))
    for _, kind, arg in sorted(things, key=lambda t: t[0]):
        if kind == "tree":
            _tree(s, pl, arg, pl.seed + int(arg[0] * 1000), seed + int(arg[0] * 1000))
        elif kind == "car":
            _car(s, pl, np.random.default_rng(arg))
        else:
            _person(s, pl, np.random.default_rng(arg))
    return render([s], size, background=L.to_u8(background(pl, seed, size))[None])[0]
