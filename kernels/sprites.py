"""Batched ops on RGBA sprites ``[B, 4, H, W]`` uint8, on any device: recolour (an exact
integer blend rule), scale and stretch, rotation, reflection, N copies on one canvas,
compositing, and measures of how much two sprites differ.

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


def copies(sprite: torch.Tensor, n: int, size: int | None = None) -> torch.Tensor:
    """``n`` copies of one sprite ``[4, h, w]`` laid out in a near-square grid on one canvas
    ``[4, size, size]`` (default: the sprite's size). Each copy is the sprite resized to its
    grid cell with an area (antialiased) filter on premultiplied alpha; kornia's antialiased
    resize blurs instead, so torch's filter is kept."""
    if sprite.dim() != 3 or sprite.shape[0] != 4:
        raise ValueError(f"sprite must be [4, h, w], got {tuple(sprite.shape)}")
    if n < 1:
        raise ValueError(f"n={n!r} must be >= 1")
    size = size or sprite.shape[-1]
    cols = math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    cell = size // max(cols, rows)
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
