"""Measures and preparation of photographs ``[3, H, W]`` uint8: decoding of any image mode
to 8-bit RGB, structure, centre-crop and resize, visible difference, and a compact colour +
layout feature for similarity search."""
from __future__ import annotations

import math
import warnings

import numpy as np
import torch

WIDE_GREY = ("I;16", "I;16L", "I;16B", "I;16N", "I")    # 16-bit grey (``I``: 32-bit ints read as 0..65535)
ALPHA_MODES = ("RGBA", "RGBa", "LA", "La", "PA")


class ImageTooLarge(ValueError):
    """An image file of more pixels than the decoder allows (``PIL.Image.MAX_IMAGE_PIXELS``)."""


def open_image(path):
    """The image file ``path`` opened (lazily, as ``PIL.Image.open`` does). Raises
    :class:`ImageTooLarge`, with a one-line message, when it holds more than
    ``PIL.Image.MAX_IMAGE_PIXELS`` pixels, whether or not the user's warning filters turn the
    decoder's warning into an error; other failures raise as ``PIL.Image.open`` raises them."""
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            return Image.open(path)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning):
            raise ImageTooLarge(f"too large: over {Image.MAX_IMAGE_PIXELS} pixels, the decoder's limit") from None


def _grey8(im) -> np.ndarray | None:
    """A one-channel image of 16-bit or float samples as ``[H, W]`` uint8, scaled (not
    clipped) to 0..255: 16-bit modes from 0..65535, ``F`` from 0..1 when every finite value
    lies there (else clipped to 0..255). ``None`` for any other mode."""
    if im.mode in WIDE_GREY:
        a = np.asarray(im).astype(np.float64)
        return np.round(np.clip(a, 0, 65535) / 257.0).astype(np.uint8)
    if im.mode == "F":
        a = np.nan_to_num(np.asarray(im).astype(np.float64), nan=0.0, posinf=255.0, neginf=0.0)
        if a.size and a.min() >= 0.0 and a.max() <= 1.0:
            a = a * 255.0
        return np.round(np.clip(a, 0, 255)).astype(np.uint8)
    return None


def has_alpha(im) -> bool:
    """Whether the decoded PIL image ``im`` has transparency: an alpha channel or a
    transparent palette entry or colour."""
    return im.mode in ALPHA_MODES or "transparency" in im.info


def rgba8(im) -> np.ndarray:
    """The decoded PIL image ``im`` as ``[H, W, 4]`` uint8 straight-alpha RGBA, whatever its
    mode: 16-bit and float grey scaled to 0..255 (PIL's own conversion clips them, so they turn
    white), palette, grey + alpha, CMYK and YCbCr converted; opaque where it has no alpha."""
    grey = _grey8(im)
    if grey is not None:
        return np.stack([grey, grey, grey, np.full_like(grey, 255)], -1)
    return np.asarray(im if im.mode == "RGBA" else im.convert("RGBA"))


def rgb8(im) -> np.ndarray:
    """The decoded PIL image ``im`` as ``[H, W, 3]`` uint8 RGB, whatever its mode (see
    :func:`rgba8`); a transparent image is composited on white, so what is transparent is
    drawn as a viewer shows it, not as the colour hidden under it."""
    grey = _grey8(im)
    if grey is not None:
        return np.stack([grey, grey, grey], -1)
    if not has_alpha(im):
        return np.asarray(im if im.mode == "RGB" else im.convert("RGB"))
    a = rgba8(im).astype(np.uint32)
    alpha = a[..., 3:]
    return ((a[..., :3] * alpha + 255 * (255 - alpha) + 127) // 255).astype(np.uint8)


def to_tensor(rgb: np.ndarray) -> torch.Tensor:
    """``[H, W, C]`` uint8 numpy as a contiguous ``[C, H, W]`` uint8 tensor (its own copy)."""
    return torch.from_numpy(rgb.transpose(2, 0, 1).copy())


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
