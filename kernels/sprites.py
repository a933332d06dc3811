"""Batched ops on RGBA sprites ``[B, 4, H, W]`` uint8, on any device: recolour (an exact
integer blend rule), scale and stretch, rotation, reflection, N copies on one canvas,
compositing, fitting an object to the canvas, and measures from pixels: how much two sprites
differ, their hue, their contrast against a background.

Geometry goes through kornia on premultiplied alpha (so edges never darken); quarter turns
and reflections stay exact pixel permutations.
"""
from __future__ import annotations

import math

import kornia.geometry.transform as KT
import torch
import torch.nn.functional as F


def _check(sprites: torch.Tensor) -> None:
    if sprites.dim() != 4 or sprites.shape[1] != 4 or sprites.dtype != torch.uint8:
        raise ValueError(f"sprites must be [B, 4, H, W] uint8, got {tuple(sprites.shape)} {sprites.dtype}")


def recolour(sprites: torch.Tensor, target) -> torch.Tensor:
    """Every visible pixel becomes ``floor((rgb + target) / 2)`` for an ``(r, g, b)`` target;
    ``target="grey"`` gives the pixel's luma instead. Alpha is kept. ``[B, 4, H, W]``."""
    _check(sprites)
    out = sprites.clone()
    rgb = sprites[:, :3].to(torch.int32)
    if target == "grey":
        w = torch.tensor([299, 587, 114], dtype=torch.int32, device=sprites.device).view(1, 3, 1, 1)
        new = ((rgb * w).sum(1, keepdim=True) // 1000).expand_as(rgb)
    else:
        t = torch.tensor(target, dtype=torch.int32, device=sprites.device).view(1, 3, 1, 1)
        new = (rgb + t) // 2
    visible = (sprites[:, 3:] > 0).expand_as(rgb)
    out[:, :3] = torch.where(visible, new, rgb).to(torch.uint8)
    return out


def premultiply(sprites: torch.Tensor) -> torch.Tensor:
    """``[B, 4, H, W]`` uint8 straight alpha -> float premultiplied RGBA in [0, 1] (what may be
    filtered: no dark fringes where colour meets transparency)."""
    x = sprites.float() / 255
    a = x[:, 3:]
    return torch.cat([x[:, :3] * a, a], 1)


def unpremultiply(pre: torch.Tensor) -> torch.Tensor:
    """Float premultiplied RGBA -> ``[B, 4, H, W]`` uint8 straight alpha (rounded). A pixel
    whose alpha rounds to 0 is transparent black: no hidden colour is left behind."""
    alpha = pre[:, 3:]
    a8 = (alpha.clamp(0, 1) * 255).round()
    rgb = torch.where(a8 > 0, pre[:, :3] / alpha.clamp_min(1e-6), torch.zeros_like(pre[:, :3]))
    return torch.cat([(rgb.clamp(0, 1) * 255).round(), a8], 1).to(torch.uint8)


def scale(sprites: torch.Tensor, fx: float, fy: float | None = None) -> torch.Tensor:
    """Scale about the centre by ``fx`` (and ``fy``, default ``fx``) on the same canvas
    (bilinear, premultiplied alpha)."""
    _check(sprites)
    fy = fx if fy is None else fy
    factor = torch.tensor([[float(fx), float(fy)]], device=sprites.device).expand(len(sprites), 2)
    return unpremultiply(KT.scale(premultiply(sprites), factor, align_corners=False))


def fit_for_rotation(sprites: torch.Tensor) -> torch.Tensor:
    """Shrink about the centre by 1/sqrt(2), so any rotation keeps the whole object."""
    return scale(sprites, 1 / math.sqrt(2))


def rotate(sprites: torch.Tensor, degrees: float) -> torch.Tensor:
    """Rotate clockwise by ``degrees``; multiples of 90 are exact pixel permutations. Apply
    :func:`fit_for_rotation` first (to every image of a trial) so nothing is cropped."""
    _check(sprites)
    d = float(degrees) % 360
    if d % 90 == 0:
        return torch.rot90(sprites, k=-int(d // 90), dims=(2, 3)).contiguous()
    angle = torch.full((len(sprites),), -d, device=sprites.device)       # kornia turns counter-clockwise
    return unpremultiply(KT.rotate(premultiply(sprites), angle, align_corners=False))


def reflect(sprites: torch.Tensor, axis: str) -> torch.Tensor:
    """Mirror about the X axis (upside down), the Y axis (sideways) or ``"both"``."""
    _check(sprites)
    if axis == "x":
        return KT.vflip(sprites)
    if axis == "y":
        return KT.hflip(sprites)
    if axis == "both":
        return KT.vflip(KT.hflip(sprites))
    raise ValueError(f"axis={axis!r}; allowed: x, y, both")


def fit(sprites: torch.Tensor, fill: float = 0.9) -> torch.Tensor:
    """Each sprite's visible object (alpha > 0) cropped to its bounding box and resized
    (area filter, premultiplied alpha) so that its longer side is ``fill`` of the canvas,
    centred on the same canvas: objects of any shape and framing start at one size.
    ``[B, 4, S, S]`` -> ``[B, 4, S, S]``; an empty sprite stays empty."""
    _check(sprites)
    S = sprites.shape[-1]
    out = torch.zeros_like(sprites)
    for b in range(len(sprites)):
        ys, xs = torch.nonzero(sprites[b, 3] > 0, as_tuple=True)
        if len(ys) == 0:
            continue
        crop = sprites[b:b + 1, :, int(ys.min()):int(ys.max()) + 1, int(xs.min()):int(xs.max()) + 1]
        h, w = crop.shape[-2:]
        k = fill * S / max(h, w)
        nh, nw = max(1, round(h * k)), max(1, round(w * k))
        small = unpremultiply(F.interpolate(premultiply(crop), size=(nh, nw), mode="bilinear", antialias=True,
                                            align_corners=False))
        y0, x0 = (S - nh) // 2, (S - nw) // 2
        out[b, :, y0:y0 + nh, x0:x0 + nw] = small[0]
    return out


def copies(sprite: torch.Tensor, n: int, size: int | None = None, grid: int = 3) -> torch.Tensor:
    """``n`` copies of one sprite ``[4, h, w]`` on one canvas ``[4, size, size]`` (default:
    the sprite's size), in rows of ``grid`` cells of side ``size // grid``, the rows and a
    short last row centred. Every copy has the same size whatever ``n`` (at most
    ``grid ** 2``): the sprite resized to a cell with an area (antialiased) filter on
    premultiplied alpha (kornia's antialiased resize blurs instead, so torch's is kept)."""
    if sprite.dim() != 3 or sprite.shape[0] != 4:
        raise ValueError(f"sprite must be [4, h, w], got {tuple(sprite.shape)}")
    if not 1 <= n <= grid * grid:
        raise ValueError(f"n={n!r} must be in 1..{grid * grid} (a {grid} x {grid} grid)")
    size = size or sprite.shape[-1]
    cols = min(n, grid)
    rows = math.ceil(n / cols)
    cell = size // grid
    small = unpremultiply(F.interpolate(premultiply(sprite[None]), size=(cell, cell), mode="bilinear", antialias=True,
                                        align_corners=False))[0]
    out = torch.zeros(4, size, size, dtype=torch.uint8, device=sprite.device)
    y0 = (size - rows * cell) // 2
    for k in range(n):
        r, c = divmod(k, cols)
        in_row = min(cols, n - r * cols)                  # centre a short last row
        x0 = (size - in_row * cell) // 2
        out[:, y0 + r * cell:y0 + (r + 1) * cell, x0 + c * cell:x0 + (c + 1) * cell] = small
    return out


def mean_hue(sprite: torch.Tensor) -> float | None:
    """The hue in degrees (0 red, 120 green, 240 blue) of the mean colour of a sprite's
    opaque pixels (alpha > 127) ``[4, H, W]``; None when it has none or that colour is grey."""
    vis = sprite[3] > 127
    if not vis.any():
        return None
    r, g, b = (sprite[c][vis].double().mean().item() / 255 for c in range(3))
    hi, lo = max(r, g, b), min(r, g, b)
    if hi - lo < 1e-3:
        return None
    if hi == r:
        h = ((g - b) / (hi - lo)) % 6
    elif hi == g:
        h = (b - r) / (hi - lo) + 2
    else:
        h = (r - g) / (hi - lo) + 4
    return 60.0 * h


def hue_distance(a: float, b: float) -> float:
    """Degrees between two hues on the colour circle (0..180)."""
    d = abs(a - b) % 360
    return min(d, 360 - d)


def contrast(sprite: torch.Tensor, background=(255, 255, 255), levels: int = 24) -> float:
    """Share of a sprite's opaque pixels (alpha > 127) ``[4, H, W]`` that differ from the
    ``background`` by more than ``levels`` in some channel once composited over it: how
    much of the object can be seen at all (a white object on white: almost none)."""
    vis = sprite[3] > 127
    if not vis.any():
        return 0.0
    shown = over(sprite[None], background)[0].to(torch.int16)
    bg = torch.tensor(background, dtype=torch.int16, device=sprite.device).view(3, 1, 1)
    return ((shown - bg).abs().amax(0) > levels)[vis].float().mean().item()


def over(sprites: torch.Tensor, background=(255, 255, 255)) -> torch.Tensor:
    """Composite RGBA sprites onto a flat background: ``[B, 3, H, W]`` uint8."""
    _check(sprites)
    a = sprites[:, 3:].float() / 255
    bg = torch.tensor(background, dtype=torch.float32, device=sprites.device).view(1, 3, 1, 1)
    return (sprites[:, :3].float() * a + bg * (1 - a)).round().to(torch.uint8)


def pixel_change(a: torch.Tensor, b: torch.Tensor, levels: int = 40) -> float:
    """Share of pixels where two RGBA images ``[4, H, W]`` differ by more than ``levels`` in
    some channel."""
    d = (a.to(torch.int16) - b.to(torch.int16)).abs().amax(0) > levels
    return d.float().mean().item()


def silhouette_change(a: torch.Tensor, b: torch.Tensor) -> float:
    """Share of the union of two silhouettes (alpha > 127) covered by only one of them."""
    ma, mb = a[3] > 127, b[3] > 127
    return (ma ^ mb).sum().item() / max(1, (ma | mb).sum().item())
