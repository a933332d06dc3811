"""Deterministic procedural textures (busy backgrounds for figure-ground tasks)."""
from __future__ import annotations

import functools

import torch


@functools.lru_cache(maxsize=10)
def busy(k: int, size: int = 512) -> torch.Tensor:
    """Busy texture ``k`` (any integer; five kinds cycle: smooth colour noise, interference
    stripes, checkered tiles, overlapping blobs, grain on a gradient), deterministic, ``[3, size, size]`` uint8."""
    g = torch.Generator().manual_seed(1000 + k)
    y, x = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    kind = k % 5
    base = torch.rand(3, generator=g) * 0.6 + 0.2
    if kind == 0:                                      # smooth colour noise
        low = torch.rand(3, 1, 12, 12, generator=g)
        img = torch.nn.functional.interpolate(low, size=(size, size), mode="bicubic", align_corners=False)[:, 0]
    elif kind == 1:                                    # interference stripes
        f = torch.rand(3, 2, generator=g) * 40 + 10
        img = torch.stack([0.5 + 0.5 * torch.sin(f[i, 0] * x + f[i, 1] * y * (1 + i)) for i in range(3)])
    elif kind == 2:                                    # checkered tiles of random colours
        n = 8 + k
        tiles = torch.rand(3, n, n, generator=g)
        img = tiles[:, (y * n).long().clamp(max=n - 1), (x * n).long().clamp(max=n - 1)]
    elif kind == 3:                                    # overlapping blobs
        img = base[:, None, None].expand(3, size, size).clone()
        for _ in range(40):
            cx, cy, r = torch.rand(3, generator=g)
            col = torch.rand(3, generator=g)
            m = ((x - cx) ** 2 + (y - cy) ** 2) < (0.03 + 0.12 * r) ** 2
            img[:, m] = col[:, None]
    else:                                              # fine grain on a gradient
        img = torch.stack([base[i] * (0.6 + 0.4 * x) for i in range(3)]) + torch.rand(3, size, size, generator=g) * 0.35
    return (img.clamp(0, 1) * 255).round().to(torch.uint8)
