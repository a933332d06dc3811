"""Layout kernels: stitch panels into composites and tile images into sheets (tensor ops)."""
from __future__ import annotations

import math

import torch


def _check(images: torch.Tensor) -> None:
    if images.dim() != 4 or images.shape[1] != 3:
        raise ValueError(f"images must be [N,3,H,W], got shape {tuple(images.shape)}")


def grid(images: torch.Tensor, cols: int, gap: int = 0, fill: int | float = 255) -> torch.Tensor:
    """Tile ``images [N,3,H,W]`` row-major into ``cols`` columns separated by ``gap`` pixels of
    ``fill``. Returns ``[3, rows*H + (rows-1)*gap, cols*W + (cols-1)*gap]`` of the same dtype."""
    _check(images)
    N, C, H, W = images.shape
    rows = math.ceil(N / cols)
    out = torch.full((C, rows * H + (rows - 1) * gap, cols * W + (cols - 1) * gap), fill,
                     dtype=images.dtype, device=images.device)
    for k in range(N):
        r, c = divmod(k, cols)
        out[:, r * (H + gap): r * (H + gap) + H, c * (W + gap): c * (W + gap) + W] = images[k]
    return out


def stitch(images: torch.Tensor, gap: int = 8, fill: int | float = 255) -> torch.Tensor:
    """Panels ``[N,3,H,W]`` side by side in one row. Returns ``[3, H, N*W + (N-1)*gap]``."""
    return grid(images, cols=images.shape[0], gap=gap, fill=fill)
