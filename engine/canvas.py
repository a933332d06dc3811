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
