"""Canvas sizes: one checked reading of ``size`` arguments, shared by the renderer, the
outputs and the command line (no tensor library needed)."""
from __future__ import annotations

import math

from .errors import UserError

MAX_SIDE = 16384           # px: a panel with its own extent (a 20-circle strip at --size 1024 is 9,339 px wide)


def canvas_size(size) -> tuple[int, int]:
    """``size`` (an int, or ``(height, width)``) -> ``(H, W)``, with a clear error when it is
    not a positive whole number of pixels up to ``MAX_SIDE``."""
    pair = (size, size) if not isinstance(size, (tuple, list)) else tuple(size)
    if len(pair) != 2:
        raise UserError(f"size={size!r} must be an int or (height, width)")
    out = []
    for v in pair:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise UserError(f"size={size!r} must be a whole number of pixels in 1..{MAX_SIDE}") from None
        if not math.isfinite(f) or f != int(f) or not (1 <= f <= MAX_SIDE):
            raise UserError(f"size={size!r} must be a whole number of pixels in 1..{MAX_SIDE}")
        out.append(int(f))
    return out[0], out[1]


# ---------------------------------------------------------------- memory

BUDGET_ENV = "PROCVIS_MEMORY_BUDGET"
BUDGET_SHARE = 4           # default budget: a quarter of the machine's physical memory
# Bytes per pixel of one image in flight, measured (peak resident memory over a batch, 2048
# and 4096 px): the numba backend holds its uint8 output (3 B/px; 12 with float output) and a
# band of rows per thread; the tiled torch backend ~75-102 B/px of float work tensors.
BYTES_PER_PX = {"numba": 3, "numba-float": 12, "torch": 112}
WORKER_BASE_BYTES = 600 << 20      # a worker process with torch and numba loaded, before any image
ENCODE_BYTES_PER_PX = 24           # a dataset panel: rendering (3) plus PNG encoding (at most 21: the rows, two
#                                    byte-equality masks, the tokens, the stream; peaks measured at 2048 px)
# an image file written by render/preview, on top of the picture: Pillow's own copy (and
# WebP's work); a PNG is counted as streamed in bands (below engine.preview.PNG_STREAM_PX
# Pillow's copy of at most 192 MB is left to the budget's margin)
ENCODER_BYTES_PER_PX = {"PNG": 0, "JPEG": 4, "WEBP": 8}


def parse_bytes(text) -> int:
    """``"6G"``, ``"512M"``, ``"300k"`` or a number of bytes -> bytes (``UserError`` when it is
    not a positive size)."""
    units = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    s = str(text).strip().upper().removesuffix("B").removesuffix("I")
    unit = s[-1:] if s[-1:] in units and s[-1:] else ""
    try:
        v = float(s[:-1] if unit else s) * units[unit]
    except ValueError:
        v = math.nan
    if not math.isfinite(v) or v < 1 or v > 1 << 60:
        raise UserError(f"{BUDGET_ENV}={text!r} must be a size in bytes such as 6G, 512M or 1000000")
    return int(v)


def physical_memory() -> int:
    """The machine's physical memory in bytes (8 GiB when the system does not say)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def memory_budget(device=None) -> int:
    """Bytes one render may hold: ``$PROCVIS_MEMORY_BUDGET`` (e.g. ``6G``), else half the
    free memory of a CUDA ``device``, else a quarter of the physical memory."""
    import os

    given = os.environ.get(BUDGET_ENV)
    if given:
        return parse_bytes(given)
    if device is not None and getattr(device, "type", None) == "cuda":
        import torch

        return torch.cuda.mem_get_info(device)[0] // 2
    return physical_memory() // BUDGET_SHARE


def image_bytes(size, backend: str = "numba") -> int:
    """Estimated bytes one image of ``size`` (``N`` or ``(H, W)``) holds while ``backend``
    (a key of ``BYTES_PER_PX``) renders it."""
    H, W = canvas_size(size)
    return BYTES_PER_PX[backend] * H * W


def gib(n: int) -> str:
    """``n`` bytes as a short human-readable size, e.g. ``'1.6 GB'``."""
    return f"{n / 1e9:.1f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def images_per_batch(size, backend: str = "numba", budget: int | None = None) -> int:
    """How many images of ``size`` fit the memory budget at once (``UserError`` when not even
    one does: the error names the size, the estimate and the budget)."""
    budget = memory_budget() if budget is None else budget
    one = image_bytes(size, backend)
    if one > budget:
        H, W = canvas_size(size)
        raise UserError(f"one {H}x{W} image needs about {gib(one)} to render, over the memory budget of "
                        f"{gib(budget)}; lower the size, or set {BUDGET_ENV} (e.g. 16G) if the machine has it")
    return max(1, budget // one)
