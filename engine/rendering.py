"""``render``: scenes to pixels, batched, on any torch device."""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np
import torch

from kernels import raster_numba, raster_torch
from kernels.glyphs import load_atlas
from kernels.raster import prepare

from .batch import SceneBatch, sprites_on
from .canvas import BUDGET_ENV, canvas_size, gib, image_bytes, memory_budget
from .errors import UserError
from .scene import Scene, parse_color

BACKENDS = ("auto", "torch", "numba")


@functools.lru_cache(maxsize=8)
def _atlas_on(device: str) -> torch.Tensor:
    return torch.from_numpy(load_atlas().sdf).to(device)


def _unit_range(t: torch.Tensor, what: str) -> torch.Tensor:
    """``t`` as float32 in [0, 1]: integer dtypes are read as 0..255, floating dtypes as 0..1
    (the dtype decides, never the values); anything outside its range is a ``ValueError``."""
    if t.dtype == torch.bool:
        raise ValueError(f"{what} has dtype torch.bool; allowed: an integer dtype (0..255) or a floating dtype (0..1)")
    if t.dtype == torch.uint8:                  # always in range: no pass over the pixels to check
        return t.float() / 255.0
    top = 1.0 if t.is_floating_point() else 255.0
    f = t.float()
    if f.numel() and not (bool(torch.isfinite(f).all()) and float(f.min()) >= 0 and float(f.max()) <= top):
        bad = f[~(torch.isfinite(f) & (f >= 0) & (f <= top))].flatten()[0].item()
        rule = "0..1 for a floating dtype" if top == 1.0 else "0..255 for an integer dtype"
        raise ValueError(f"{what} holds {bad!r} ({t.dtype}); allowed: {rule}")
    return f / top if top != 1.0 else f


def _background(background, batch: SceneBatch, H: int, W: int, device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(colours [B,3], image [B,3,H,W] or None)``, floats in [0,1] on ``device``. Tensors of
    an integer dtype are 0..255, of a floating dtype 0..1 (see :func:`engine.scene.parse_color`)."""
    B = len(batch)
    if background is None:
        return batch.background.to(device), None
    if isinstance(background, torch.Tensor) and background.dim() == 4:
        if tuple(background.shape) != (B, 3, H, W):
            raise ValueError(f"background image must be [B,3,H,W] = {[B, 3, H, W]}, got {list(background.shape)}")
        return batch.background.to(device), _unit_range(background.to(device), "background image")
    if isinstance(background, torch.Tensor) and background.dim() == 2:
        if tuple(background.shape) != (B, 3):
            raise ValueError(f"per-scene background colours must be [B,3] = {[B, 3]}, got {list(background.shape)}")
        return _unit_range(background.to(device), "background colours"), None
    return torch.tensor(parse_color(background), device=device).expand(B, 3).contiguous(), None


def render(scenes: Sequence[Scene] | SceneBatch, size=224, device="cpu", background=None,
           backend: str = "auto", dtype: torch.dtype = torch.uint8, out: torch.Tensor | None = None) -> torch.Tensor:
    """Rasterize a batch of scenes.

    Args:
        scenes: a list of :class:`Scene` or an already collated :class:`SceneBatch`.
        size: canvas side in pixels, or ``(height, width)``; scene units scale with the width.
        device: torch device of the result (and of the work, for the torch backend).
        background: ``None`` (each scene's own colour), one colour (see
            :func:`engine.scene.parse_color`), ``[B,3]`` colours, or a ``[B,3,H,W]`` image to draw
            over; tensors of an integer dtype hold 0..255, of a floating dtype 0..1.
        backend: ``"numba"`` (CPU, visits bounding boxes), ``"torch"`` (tiled, any device) or
            ``"auto"`` (numba on CPU, torch elsewhere).
        dtype: ``torch.uint8`` (0..255, rounded) or a float dtype (values in [0,1]).
        out: a ``[B, 3, H, W]`` tensor of ``dtype`` on ``device`` to write the images into
            (rows of a larger batch, say), returned; the numba backend draws into it directly
            where it is contiguous, saving a copy.

    Memory is bounded by :func:`engine.canvas.memory_budget` (``$PROCVIS_MEMORY_BUDGET``): a
    batch whose work would exceed it is rendered in smaller batches into the result, and a
    result that alone exceeds it is refused (``UserError`` naming sizes and budget) before
    any pixel is drawn.

    Returns:
        ``[B, 3, H, W]`` tensor of ``dtype`` on ``device``.
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    if dtype != torch.uint8 and not dtype.is_floating_point:
        raise ValueError(f"dtype={dtype}; allowed: torch.uint8 or a floating dtype")
    H, W = canvas_size(size)
    batch = scenes if isinstance(scenes, SceneBatch) else SceneBatch.from_scenes(scenes)
    device = torch.device(device)
    if backend == "auto":
        backend = "numba" if device.type == "cpu" else "torch"
    if out is not None and not (isinstance(out, torch.Tensor) and tuple(out.shape) == (len(batch), 3, H, W)
                                and out.dtype == dtype and out.device == _resolved(device)):
        got = (f"{out.dtype} {list(out.shape)} on {out.device}" if isinstance(out, torch.Tensor)
               else f"a {type(out).__name__}")
        raise ValueError(f"out must be a {dtype} tensor of shape {[len(batch), 3, H, W]} on {device}; got {got}")
    step = _batch_step(len(batch), H, W, backend, dtype, background, device)
    if step >= len(batch):
        return _render_batch(batch, H, W, device, background, backend, dtype, out)
    out = torch.empty((len(batch), 3, H, W), dtype=dtype, device=device) if out is None else out
    for a in range(0, len(batch), step):
        b = min(len(batch), a + step)
        bg = background[a:b] if isinstance(background, torch.Tensor) and background.dim() in (2, 4) else background
        _render_batch(batch.slice(a, b), H, W, device, bg, backend, dtype, out[a:b])
    return out


def _resolved(device: torch.device) -> torch.device:
    """``device`` as a tensor made there reports it (``"cuda"`` -> ``cuda:0``, ``"cpu:0"`` ->
    ``cpu``): torch itself resolves a device named without its index."""
    return torch.empty(0, device=device).device


def _batch_step(B: int, H: int, W: int, backend: str, dtype: torch.dtype, background,
                device: torch.device) -> int:
    """How many of the ``B`` scenes to render at once so that the result plus the work fit the
    memory budget of ``device`` (``UserError`` when the result alone does not)."""
    budget = memory_budget(device if backend == "torch" else None)
    elem = 1 if dtype == torch.uint8 else torch.empty((), dtype=dtype).element_size()
    result = B * 3 * H * W * elem
    if result > budget:
        raise UserError(f"rendering {B} images of {H}x{W} px returns {gib(result)}, over the memory budget of "
                        f"{gib(budget)}; render fewer at a time, lower the size, or set {BUDGET_ENV} (e.g. 16G) "
                        "if the machine has the memory")
    extra = image_bytes((H, W), "torch") if backend == "torch" else 0
    if isinstance(background, torch.Tensor) and background.dim() == 4:
        extra += image_bytes((H, W), "numba-float")             # the float copy of the background image
    if extra == 0:
        return B
    room = budget - result
    if room < extra:
        raise UserError(f"rendering one {H}x{W} px image with the {backend} backend needs about {gib(extra)} more "
                        f"than its result, over the memory budget of {gib(budget)}; lower the size or set "
                        f"{BUDGET_ENV} if the machine has the memory")
    return max(1, room // extra)


def _render_batch(batch: SceneBatch, H: int, W: int, device: torch.device, background, backend: str,
                  dtype: torch.dtype, out: torch.Tensor | None = None) -> torch.Tensor:
    """One batch rendered at once; returns ``[B, 3, H, W]`` of ``dtype`` on ``device``
    (``out`` when given, written)."""
    work = torch.device("cpu") if backend == "numba" else device
    bg_color, bg_image = _background(background, batch, H, W, work)
    prims = batch.primitives.to(work)
    if backend == "numba":
        prep = raster_numba.prepare(prims, H, W)
        direct = out is not None and dtype == torch.uint8 and out.device.type == "cpu" and out.is_contiguous()
        images = torch.from_numpy(raster_numba.rasterize(
            prep, H, W, bg_color.numpy(), None if bg_image is None else bg_image.numpy(), load_atlas().sdf,
            batch.sprites.contiguous().numpy(), batch.sprite_hw.numpy().astype(np.int64), uint8=dtype == torch.uint8,
            out=out.numpy() if direct else None))
        if direct:
            return out
        images = images.to(device) if dtype == torch.uint8 else images.to(device=device, dtype=dtype)
        return images if out is None else out.copy_(images)
    prep = prepare(prims, H, W)
    if bg_image is None:
        bg_image = bg_color[:, :, None, None].expand(len(batch), 3, H, W)
    sprites, sprite_hw = sprites_on(batch, work)
    out_f = raster_torch.rasterize(prep, H, W, bg_image, _atlas_on(str(work)), sprites, sprite_hw)
    images = (out_f.clamp(0, 1) * 255.0).round_().to(torch.uint8) if dtype == torch.uint8 else out_f.clamp(0, 1).to(dtype)
    return images if out is None else out.copy_(images)
