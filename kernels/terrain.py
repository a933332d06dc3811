"""Procedural textures for top-down scenes in an orthophoto look: ground, crop rows, water,
tree crowns, roof shading, clouds, road surface and cast shadows.

Every function returns uint8 torch tensors for ``Scene.sprite``: ``[3, H, W]`` (opaque) or
``[4, H, W]`` (RGBA, straight alpha). The work is numpy on the CPU (small images: no thread
pool to wake), noise drawn by a generator seeded with the ``seed`` argument, so a seed gives
the same pixels on every machine and whatever device renders them.
"""
from __future__ import annotations

import functools
import math
from typing import Sequence

import numpy as np



def _tensor(a: np.ndarray):
    """``a`` as a torch tensor (torch is imported here, when a panel is first drawn: the
    textures are numpy, and finding the families must not load torch)."""
    import torch

    return torch.from_numpy(a)

# ground kinds: (darker, lighter) orthophoto colours the noise mixes between
GROUNDS = {
    "grass": ((78, 104, 56), (118, 136, 78)),
    "dry grass": ((132, 128, 86), (168, 158, 112)),
    "soil": ((112, 94, 72), (150, 128, 100)),
    "meadow": ((92, 112, 62), (142, 140, 92)),
}
WATER = ((38, 70, 88), (66, 102, 118))
ASPHALT = (84, 86, 90)


def _upsample(low: np.ndarray, h: int, w: int) -> np.ndarray:
    """``[B, n, m]`` grid values -> ``[B, h, w]``, interpolated with smoothstep weights (the
    grid's corners on the image's corners)."""
    def axis(n, size):
        t = np.linspace(0, n - 1, size)
        i = np.minimum(t.astype(np.int64), n - 2)
        f = t - i
        return i, f * f * (3 - 2 * f)
    iy, fy = axis(low.shape[1], h)
    ix, fx = axis(low.shape[2], w)
    rows = low[:, iy] * (1 - fy)[None, :, None] + low[:, iy + 1] * fy[None, :, None]
    return rows[:, :, ix] * (1 - fx) + rows[:, :, ix + 1] * fx


def _fbm(seeds: Sequence[int], size, cells: int = 3, octaves: int = 4, gain: float = 0.55) -> np.ndarray:
    h, w = (size, size) if isinstance(size, int) else size
    gens = [np.random.default_rng(int(s)) for s in seeds]
    out = np.zeros((len(seeds), h, w))
    amp = 1.0
    for o in range(octaves):
        n = cells * 2 ** o
        out += amp * _upsample(np.stack([g.random((n + 1, n + 1)) for g in gens]), h, w)
        amp *= gain
    flat = out.reshape(len(seeds), -1)
    flat = (flat - flat.mean(1, keepdims=True)) / np.maximum(flat.std(1, keepdims=True), 1e-6)
    return flat.reshape(len(seeds), h, w).astype(np.float32)


def fbm(seeds: Sequence[int], size: int | tuple[int, int], cells: int = 3, octaves: int = 4,
        gain: float = 0.55) -> torch.Tensor:
    """Fractal value noise, one field per seed: ``[B, H, W]`` float32, each field
    standardised to mean 0 and standard deviation 1. ``cells`` is the coarsest grid."""
    return _tensor(_fbm(seeds, size, cells, octaves, gain))


def _mix(t: np.ndarray, dark, light) -> np.ndarray:
    """``t`` ``[H, W]`` in [0, 1] -> ``[3, H, W]`` float colours between ``dark`` and ``light``."""
    a, b = np.array(dark, np.float32), np.array(light, np.float32)
    return a[:, None, None] + (b - a)[:, None, None] * np.clip(t, 0, 1)[None]


def _u8(x: np.ndarray) -> torch.Tensor:
    return _tensor(np.clip(np.round(x), 0, 255).astype(np.uint8))


def _noise(seed: int, size: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((size, size)).astype(np.float32)


def ground(seed: int, kind: str, size: int = 128) -> torch.Tensor:
    """Ground of ``kind`` (a key of ``GROUNDS``): broad patches, mottling and grain,
    ``[3, size, size]`` uint8."""
    if kind not in GROUNDS:
        raise ValueError(f"ground kind {kind!r}; allowed: {', '.join(GROUNDS)}")
    broad = _fbm([seed], size, cells=3, octaves=4)[0]
    fine = _fbm([seed + 1], size, cells=14, octaves=3)[0]
    return _u8(_mix(0.5 + 0.2 * broad + 0.13 * fine, *GROUNDS[kind]) + 5.0 * _noise(seed + 2, size)[None])


def crop_rows(seed: int, colour, rows: int, vertical: bool, size: int = 96) -> torch.Tensor:
    """A field of ``rows`` crop rows running horizontally (``vertical=False``) or top to
    bottom: ``[3, size, size]`` uint8, dark furrows between rows of ``colour`` with noise."""
    n, wobble = _fbm([seed, seed + 1], size, cells=2, octaves=4)
    y = np.broadcast_to(np.arange(size, dtype=np.float32)[:, None], (size, size))
    if vertical:
        y, wobble = y.T, wobble.T
    furrow = (0.5 + 0.5 * np.cos(2 * math.pi * (y + 0.6 * wobble) * rows / size)) ** 2   # 1 at a furrow
    base = np.array(colour, np.float32)[:, None, None] * (1 + 0.07 * n)[None]
    return _u8(base * (1 - 0.42 * furrow)[None])


def water(seed: int, size: int = 128, ripples: float = 18.0) -> torch.Tensor:
    """Open water: depth patches and wind ripples (elongated along x), ``[3, size, size]`` uint8."""
    depth, wave = _fbm([seed, seed + 1], size, cells=2, octaves=4)
    y = np.arange(size, dtype=np.float32)[:, None] / size
    rip = np.sin(2 * math.pi * ripples * (y + 0.015 * wave)) * (0.5 + 0.5 * np.tanh(wave))
    return _u8(_mix(0.5 + 0.2 * depth + 0.12 * rip, *WATER))


def _grid(size: int) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates in [-1, 1]: ``(x, y)``, each ``[size, size]``."""
    t = (np.arange(size, dtype=np.float32) + 0.5) / size * 2 - 1
    return np.meshgrid(t, t)


def crowns(seed: int, n: int, size: int = 48) -> torch.Tensor:
    """``n`` tree crowns seen from above, lit from the upper left: lumpy discs of foliage,
    ``[n, 4, size, size]`` uint8 (alpha 0 outside the crown)."""
    g = np.random.default_rng(seed)
    x, y = _grid(size)
    r, th = np.sqrt(x ** 2 + y ** 2), np.arctan2(y, x)
    lumps = _fbm([seed + 1 + k for k in range(n)], size, cells=4, octaves=3)
    out = []
    for k in range(n):
        edge = 0.86 + sum(0.05 * np.sin(m * th + 2 * math.pi * g.random()) for m in (3, 5, 7))
        alpha = np.clip((edge - r) * size * 0.6, 0, 1)
        light = np.clip(0.5 - 0.33 * (x + y) / 1.4 + 0.16 * lumps[k] - 0.3 * (r / edge) ** 4, 0, 1)
        out.append(np.concatenate([_mix(light, (22, 46, 24), (86, 124, 62)), 255 * alpha[None]]))
    return _u8(np.stack(out))


def roof(seed: int, shape: str, finish: str, size: int = 64) -> torch.Tensor:
    """Shading laid over a roof of ``shape`` ("square" or "circle") and ``finish``
    ("pitched": gable halves or a cone, lit from the upper left; "flat": a parapet and
    mottling), ``[4, size, size]`` uint8: white or black at partial alpha, clear outside."""
    x, y = _grid(size)
    n = _fbm([seed], size, cells=3, octaves=3)[0]
    inside = np.ones((size, size), np.float32)
    if shape == "circle":
        r = np.sqrt(x ** 2 + y ** 2)
        inside = (r <= 0.98).astype(np.float32)
        if finish == "pitched":                 # a cone: the slopes facing the sun light, the rest dark
            shade = -0.4 * (x + y) / (1.414 * np.maximum(r, 0.05)) - 0.5 * (r < 0.07)   # and an apex finial
        else:
            shade = -0.35 * ((r > 0.8) & (r <= 0.98)) + 0.06 * n
    elif finish == "pitched":                   # a gable, ridge along x: the upper slope faces the sun
        shade = np.where(y < 0, 0.22, -0.38) - 0.5 * (np.abs(y) < 0.04)
        shade = shade - 0.12 * (np.sin(math.pi * 14 * x) > 0.85)                        # tile courses
    else:
        shade = -0.3 * ((np.abs(x) > 0.86) | (np.abs(y) > 0.86)) + 0.03 * n            # parapet
    if finish == "pitched":
        shade = shade + 0.05 * n                # weathering
    a = np.clip(np.abs(shade) * inside, 0, 1)
    rgb = np.broadcast_to(np.where(shade > 0, 255.0, 0.0)[None], (3, size, size))
    return _u8(np.concatenate([rgb, 255 * a[None]]))


def cloud(seed: int, size: int = 96) -> tuple[torch.Tensor, torch.Tensor]:
    """A cumulus seen from above and its shadow on the ground: two ``[4, size, size]``
    uint8 images (white, then black), alpha from thresholded noise fading to the edge."""
    x, y = _grid(size)
    n = _fbm([seed], size, cells=3, octaves=5)[0]
    dens = np.clip((n * 0.35 + (1 - np.sqrt(x ** 2 + y ** 2)) * 1.6 - 0.35) * 2.2, 0, 1)
    white = np.concatenate([np.full((3, size, size), 248.0) - 18 * (1 - dens)[None], 235 * dens[None]])
    shadow = np.concatenate([np.zeros((3, size, size)), 120 * (dens > 0.3)[None]])
    return _u8(white), _u8(shadow)


@functools.lru_cache(maxsize=64)
def cast_shadow(shape: str, ratio: float, size: int = 64) -> torch.Tensor:
    """The shadow of an upright ``shape`` ("square" or "circle", footprint 1 wide) whose top
    is displaced ``ratio`` footprints down-right (the sun at the upper left): the footprint
    swept along the displacement, in a box ``1 + ratio`` wide, ``[4, size, size]`` uint8
    (black, alpha 255 inside; the caller's primitive alpha sets the darkness)."""
    t = (np.arange(size) + 0.5) / size * (1 + ratio) - 0.5
    x, y = np.meshgrid(t, t)
    m = np.zeros((size, size), bool)
    for k in np.linspace(0, ratio, 24):
        if shape == "circle":
            m |= (x - k) ** 2 + (y - k) ** 2 <= 0.25
        else:
            m |= (np.abs(x - k) <= 0.5) & (np.abs(y - k) <= 0.5)
    return _u8(np.concatenate([np.zeros((3, size, size)), 255 * m[None]]))


def asphalt(seed: int, size: tuple[int, int] = (16, 128)) -> torch.Tensor:
    """Road surface, ``size = (across, along)`` pixels: grey with fine speckle, patches and
    two darker wheel paths per lane, ``[3, across, along]`` uint8."""
    h, w = size
    n = _fbm([seed], (h, w), cells=4, octaves=3)[0]
    speck = np.random.default_rng(seed + 1).standard_normal((h, w)).astype(np.float32)
    y = (np.arange(h, dtype=np.float32)[:, None] + 0.5) / h
    tracks = sum(np.exp(-((y - c) / 0.05) ** 2) for c in (0.15, 0.35, 0.65, 0.85))
    grey = np.array(ASPHALT, np.float32)[:, None, None]
    return _u8(grey * (1 + 0.05 * n - 0.06 * tracks)[None] + 5.0 * speck[None])
