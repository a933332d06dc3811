"""Image features for choosing hard distractors: similar-looking patches.

The offline default is a colour histogram (4 bins per channel) joined with the
low-frequency 8x8 DCT coefficients of the grey image at 32x32, L2-normalised, so cosine
similarity compares both palette and coarse layout.
"""
from __future__ import annotations

import math

import torch


def _dct_matrix(n: int) -> torch.Tensor:
    k = torch.arange(n, dtype=torch.float64)[:, None]
    i = torch.arange(n, dtype=torch.float64)[None, :]
    m = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2.0 / n)
    m[0] /= math.sqrt(2.0)
    return m.float()


_DCT32 = _dct_matrix(32)


def colour_dct(images: torch.Tensor) -> torch.Tensor:
    """Features of ``images [N,3,H,W]`` uint8: ``[N, 128]`` float32, unit length."""
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
