"""Measures and preparation of photographs ``[3, H, W]`` uint8: structure, centre-crop and
resize, visible difference, and a compact colour + layout feature for similarity search."""
from __future__ import annotations

import math

import torch


def structure(img: torch.Tensor) -> float:
    """Mean absolute gradient of the grey image (0..255 scale): near 0 for flat images."""
    g = img.float().mean(0)
    return float(((g[1:, :] - g[:-1, :]).abs().mean() + (g[:, 1:] - g[:, :-1]).abs().mean()) / 2)


def square(img: torch.Tensor, size: int) -> torch.Tensor:
    """Centre-crop ``[3,H,W]`` uint8 to a square and resize it (antialiased) to ``size``."""
    H, W = img.shape[-2:]
    s = min(H, W)
    y0, x0 = (H - s) // 2, (W - s) // 2
    crop = img[:, y0:y0 + s, x0:x0 + s].float()[None]
    out = torch.nn.functional.interpolate(crop, size=(size, size), mode="bilinear", antialias=True, align_corners=False)
    return out[0].round().clamp(0, 255).to(torch.uint8)


def mean_difference(a: torch.Tensor, b: torch.Tensor) -> float:
    """Mean absolute difference (0..255) of two images of one shape."""
    return float((a.float() - b.float()).abs().mean())


def _dct_matrix(n: int) -> torch.Tensor:
    k = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(n, dtype=torch.float64)[None, :]
    m = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2.0 / n)
    m[0] /= math.sqrt(2.0)
    return m.float()


_DCT32 = _dct_matrix(32)


def colour_dct(images: torch.Tensor) -> torch.Tensor:
    """Features of ``images [N,3,H,W]`` uint8: ``[N, 128]`` float32, unit length. A colour
    histogram (4 bins per channel) joined with the low-frequency 8x8 DCT coefficients of the
    grey image at 32x32, so cosine similarity compares both palette and coarse layout."""
    x = images.float() / 255.0
    N = x.shape[0]
    bins = (x * 3.999).long().clamp(0, 3)
    code = bins[:, 0] * 16 + bins[:, 1] * 4 + bins[:, 2]
    hist = torch.zeros(N, 64).scatter_add_(1, code.reshape(N, -1), torch.ones(N, code[0].numel()))
    hist = hist / hist.sum(1, keepdim=True)
    grey = torch.nn.functional.interpolate(x.mean(1, keepdim=True), size=(32, 32), mode="area")[:, 0]
    coef = (_DCT32 @ grey @ _DCT32.T)[:, :8, :8].reshape(N, 64)
    feats = torch.cat([hist.sqrt(), coef / 8.0], 1)
    return feats / feats.norm(dim=1, keepdim=True).clamp_min(1e-12)
