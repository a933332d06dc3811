"""Procedural textures for eye-level photographs of places: sky with clouds, distant hills,
ground, water, facades with windows and foliage.

Each function returns a numpy ``float32`` image in 0..255, ``[3, H, W]`` (opaque) or
``[4, H, W]`` (straight alpha 0..255), for a scene builder to composite or hand to
``Scene.sprite``. Noise comes from generators seeded by the ``seed`` arguments, so a seed
gives the same pixels on every machine. ``light`` is the side the sun shines from: ``-1``
(left) or ``+1`` (right).
"""
from __future__ import annotations

import numpy as np

from .terrain import _fbm


def _col(c) -> np.ndarray:
    return np.asarray(c, np.float32)[:, None, None]


def grain(seed: int, h: int, w: int, amount: float) -> np.ndarray:
    """Pixel noise ``[1, h, w]`` with standard deviation ``amount`` (sensor grain)."""
    return amount * np.random.default_rng(seed).standard_normal((1, h, w)).astype(np.float32)


def sky(seed: int, detail: int, top, bottom, size: tuple[int, int], cover: float, horizon: float = 1.0) -> np.ndarray:
    """A sky ``[3, H, W]``: a vertical gradient from ``top`` to ``bottom`` with cumulus clouds
    covering about ``cover`` (0..1) of the part above ``horizon`` (a fraction of the height),
    lit from above, darker underneath. ``seed`` shapes the clouds, ``detail`` their wisps and
    the grain."""
    h, w = size
    t = np.linspace(0, 1, h, dtype=np.float32)[None, :, None]
    img = _col(top) * (1 - t) + _col(bottom) * t + np.zeros((3, h, w), np.float32)
    dens = _fbm([seed], (h, w), cells=3, octaves=4, gain=0.6)[0]
    wisp = _fbm([detail + 1], (h, w), cells=24, octaves=2)[0]
    dens = dens * 0.8 + wisp * 0.25
    cut = np.quantile(dens[: max(1, int(h * horizon))], 1 - cover)
    a = np.clip((dens - cut) * 1.6, 0, 1)
    shade = np.clip(0.5 + 0.35 * np.roll(dens - dens.mean(), 3, axis=0) - 0.25 * np.roll(a, -4, axis=0), 0, 1)
    cloud = _col((250, 250, 252)) * (0.82 + 0.18 * shade) - _col((60, 55, 45)) * (1 - shade) * 0.6
    return img * (1 - a) + cloud * a + grain(detail + 2, h, w, 1.5)


def ridge(seed: int, width: int, base: float, height: float) -> np.ndarray:
    """A hill line: ``[width]`` heights (fractions of the picture, top down) around ``base``,
    rising at most ``height`` above it."""
    n = _fbm([seed], (2, width), cells=3, octaves=5, gain=0.5)[0, 0]
    n = (n - n.min()) / max(float(n.max() - n.min()), 1e-6)
    return (base - height * n).astype(np.float32)


def hills(seed: int, line: np.ndarray, colour, haze, size: tuple[int, int]) -> np.ndarray:
    """Distant hills ``[4, H, W]`` below ``line`` (``[W]`` fractions of the height): wooded
    mottling faded toward ``haze`` at the top, opaque below the line."""
    h, w = size
    y = (np.arange(h, dtype=np.float32)[:, None] + 0.5) / h
    a = np.clip((y - line[None, :]) * h, 0, 1)
    n = _fbm([seed + 5], (h, w), cells=6, octaves=4)[0]
    depth = np.clip((y - line[None, :]) * 6, 0, 1)
    rgb = _col(colour) * (0.9 + 0.12 * n)[None]
    rgb = rgb * (0.6 + 0.4 * depth)[None] + _col(haze) * (0.4 - 0.4 * depth)[None]
    return np.concatenate([rgb + grain(seed + 6, h, w, 2.0), 255 * a[None]])


def ground(seed: int, detail: int, dark, light, size: tuple[int, int], haze, horizon_fade: float = 0.35) -> np.ndarray:
    """Ground seen at eye level, ``[3, H, W]`` (row 0 at the horizon): patches (``seed``) and
    tufts (``detail``) that grow coarser toward the viewer, hazier toward the horizon."""
    h, w = size
    broad = _fbm([seed], (h, w), cells=4, octaves=3)[0]
    fine = _fbm([detail + 1], (h, w), cells=48, octaves=2)[0]
    streak = _fbm([detail + 2], (-(-h // 4) + 1, w), cells=40, octaves=2)[0]
    streak = np.repeat(streak, 4, axis=0)[:h]       # tufts: stretched across, short up and down
    near = np.linspace(0, 1, h, dtype=np.float32)[:, None]
    t = 0.5 + 0.14 * broad + (0.12 + 0.1 * near) * fine + 0.1 * streak
    rgb = _col(dark) + (_col(light) - _col(dark)) * np.clip(t, 0, 1)[None]
    fade = np.clip(horizon_fade * (1 - near * 4), 0, 1)[None]
    return rgb * (1 - fade) + _col(haze) * fade + grain(detail + 3, h, w, 4.0)


def water(seed: int, deep, sky_colour, size: tuple[int, int]) -> np.ndarray:
    """Open water at eye level, ``[3, H, W]`` (row 0 at the far shore): sky reflected in
    wind ripples that widen toward the viewer."""
    h, w = size
    near = np.linspace(0, 1, h, dtype=np.float32)[:, None]
    wave = _fbm([seed], (h, w), cells=5, octaves=4)[0]
    phase = np.cumsum(1.0 / (1.5 + 9 * near[:, 0]))[:, None]          # ripples closer together far away
    rip = np.sin(2 * np.pi * (phase / 2.2 + 0.25 * wave))
    glint = np.clip(rip, 0, 1) ** 4
    mix = np.clip(0.35 + 0.25 * rip - 0.3 * near, 0, 1)[None]
    rgb = _col(deep) * (1 - mix) + _col(sky_colour) * mix + 40 * glint[None]
    return rgb + grain(seed + 1, h, w, 2.5)


def facade(seed: int, detail: int, wall, size: tuple[int, int], floors: int, columns: int, lit: float,
           light: int) -> np.ndarray:
    """The front of a building, ``[3, H, W]``: a textured wall of ``wall`` colour with a
    ``floors x columns`` grid of framed windows (glass reflecting the sky, a share ``lit``
    lit warm, some with blinds), shaded darker away from the ``light`` side. ``seed`` fixes
    the wall and the blinds, ``detail`` the lit windows and the grain."""
    h, w = size
    rng = np.random.default_rng(seed)
    n = _fbm([seed + 1], (h, w), cells=3, octaves=4)[0]
    fine = _fbm([detail + 2], (h, w), cells=32, octaves=2)[0]
    img = _col(wall) * (0.92 + 0.05 * n + 0.03 * fine)[None]
    y = (np.arange(h, dtype=np.float32)[:, None] + 0.5) / h * floors
    x = (np.arange(w, dtype=np.float32)[None, :] + 0.5) / w * columns
    fy, fx = y % 1.0, x % 1.0
    win = (fy > 0.28) & (fy < 0.82) & (fx > 0.2) & (fx < 0.8)
    frame = (fy > 0.24) & (fy < 0.86) & (fx > 0.16) & (fx < 0.84) & ~win
    blinds = rng.random((floors, columns))
    state = np.random.default_rng(detail).random((floors, columns))
    iy = np.minimum(y.astype(int), floors - 1)
    ix = np.minimum(x.astype(int), columns - 1)
    on = (state[iy, ix] < lit)
    glass = np.where(on[None], _col((236, 200, 120)), _col((70, 88, 104)) + 40 * (1 - fy)[None])
    glass = np.where((blinds[iy, ix] < 0.3)[None] & (fy > 0.28)[None] & (fy < 0.5)[None], _col((200, 196, 184)), glass)
    img = np.where(win[None], glass, img)
    img = np.where(frame[None], img * 0.62, img)
    img = np.where(((fy > 0.86) & (fy < 0.9))[None] & (fx > 0.12)[None] & (fx < 0.88)[None], img * 1.18, img)
    side = np.linspace(-1, 1, w, dtype=np.float32)[None, None, :] * light
    return img * (0.92 + 0.08 * side) + grain(detail + 3, h, w, 3.0)


def foliage(seed: int, detail: int, size: tuple[int, int], colour, light: int) -> np.ndarray:
    """A tree crown seen from the side, ``[4, H, W]``: a lumpy ellipse (``seed``) of leaves
    (``detail``: they move in the wind), lit on the ``light`` side, darker inside and below,
    alpha 0 outside."""
    h, w = size
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.linspace(-1, 1, h, dtype=np.float32), np.linspace(-1, 1, w, dtype=np.float32),
                         indexing="ij")
    r, th = np.sqrt(xx ** 2 + yy ** 2), np.arctan2(yy, xx)
    lumps = _fbm([seed + 1], (h, w), cells=5, octaves=3)[0]
    leaves = _fbm([detail + 2], (h, w), cells=16, octaves=2)[0]
    edge = 0.82 + sum(0.05 * np.sin(m * th + 2 * np.pi * rng.random()) for m in (3, 5, 8)) + 0.06 * lumps
    a = np.clip((edge - r) * min(h, w) * 0.4, 0, 1)
    shade = np.clip(0.5 + 0.3 * xx * light - 0.25 * yy + 0.2 * leaves + 0.12 * lumps, 0, 1)
    rgb = _col(colour) * (0.45 + 0.8 * shade)[None]
    return np.concatenate([rgb + grain(detail + 3, h, w, 5.0), 255 * a[None]])


def to_u8(img: np.ndarray):
    """``img`` (any float array) rounded and clipped to a uint8 torch tensor of the same shape."""
    import torch

    return torch.from_numpy(np.clip(np.round(img), 0, 255).astype(np.uint8))
