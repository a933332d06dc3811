"""``render``: scenes to pixels, batched, on any torch device."""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

from kernels import raster_numba, raster_torch
from kernels.glyphs import load_atlas
from kernels.raster import prepare

from .batch import SceneBatch
from .canvas import canvas_size
from .scene import Scene, parse_color

BACKENDS = ("auto", "torch", "numba")


@functools.lru_cache(maxsize=8)
def _atlas_on(device: str) -> torch.Tensor:
    return torch.from_numpy(load_atlas().sdf).to(device)


def _background(background, batch: SceneBatch, H: int, W: int, device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(colours [B,3], image [B,3,H,W] or None)``, floats in [0,1] on ``device``."""
    B = len(batch)
    if background is None:
        return batch.background.to(device), None
    if isinstance(background, torch.Tensor) and background.dim() == 4:
        if tuple(background.shape) != (B, 3, H, W):
            raise ValueError(f"background image must be [B,3,H,W] = {[B, 3, H, W]}, got {list(background.shape)}")
        t = background.to(device)
        img = (t.float() / 255.0 if not t.is_floating_point() else t.float()).clamp(0, 1)
        return batch.background.to(device), img
    if isinstance(background, torch.Tensor) and background.dim() == 2:
        if tuple(background.shape) != (B, 3):
            raise ValueError(f"per-scene background colours must be [B,3] = {[B, 3]}, got {list(background.shape)}")
        bg = background.to(device).float()
        return (bg / 255.0 if bg.max() > 1 else bg), None
    return torch.tensor(parse_color(background), device=device).expand(B, 3).contiguous(), None


def render(scenes: Sequence[Scene] | SceneBatch, size=224, device="cpu", background=None,
           backend: str = "auto", dtype: torch.dtype = torch.uint8) -> torch.Tensor:
    """Rasterize a batch of scenes.

    Args:
        scenes: a list of :class:`Scene` or an already collated :class:`SceneBatch`.
        size: canvas side in pixels, or ``(height, width)``; scene units scale with the width.
        device: torch device of the result (and of the work, for the torch backend).
        background: ``None`` (each scene's own colour), one colour, ``[B,3]`` colours, or a
            ``[B,3,H,W]`` image (uint8, or float in [0,1]) to draw over.
        backend: ``"numba"`` (CPU, visits bounding boxes), ``"torch"`` (tiled, any device) or
            ``"auto"`` (numba on CPU, torch elsewhere).
        dtype: ``torch.uint8`` (0..255, rounded) or a float dtype (values in [0,1]).

    Returns:
        ``[B, 3, H, W]`` tensor of ``dtype`` on ``device``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    H, W = canvas_size(size)
    batch = scenes if isinstance(scenes, SceneBatch) else SceneBatch.from_scenes(scenes)
    device = torch.device(device)
    if backend == "auto":
        backend = "numba" if device.type == "cpu" else "torch"
    work = torch.device("cpu") if backend == "numba" else device
    if dtype != torch.uint8 and not dtype.is_floating_point:
        raise ValueError(f"dtype={dtype}; allowed: torch.uint8 or a floating dtype")
    bg_color, bg_image = _background(background, batch, H, W, work)
    prims = batch.primitives.to(work)
    if backend == "numba":
        prep = raster_numba.prepare(prims, H, W)
        out = torch.from_numpy(raster_numba.rasterize(
            prep, H, W, bg_color.numpy(), None if bg_image is None else bg_image.numpy(), load_atlas().sdf,
            batch.sprites.contiguous().numpy(), batch.sprite_hw.numpy().astype(np.int64), uint8=dtype == torch.uint8))
        return out.to(device) if dtype == torch.uint8 else out.to(device=device, dtype=dtype)
    prep = prepare(prims, H, W)
    if bg_image is None:
        bg_image = bg_color[:, :, None, None].expand(len(batch), 3, H, W)
    out = raster_torch.rasterize(prep, H, W, bg_image, _atlas_on(str(work)), batch.sprites.to(work),
                                 batch.sprite_hw.to(work))
    if dtype == torch.uint8:
        return (out.clamp(0, 1) * 255.0).round_().to(torch.uint8)
    return out.clamp(0, 1).to(dtype)
