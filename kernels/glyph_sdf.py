"""The glyph atlas's distance transform, compiled with numba. Imported only when an atlas is
built (once per font); reading the cached atlas needs neither numba nor this module."""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def signed_distance(inside: np.ndarray, cell: int, ss: int, spread: float) -> np.ndarray:
    # Brute force over boundary pixels of the supersampled bitmap: for each atlas sample,
    # distance to the nearest pixel centre of the opposite state, minus half a pixel.
    n = inside.shape[0]
    by = np.empty(n * n, np.int64)
    bx = np.empty(n * n, np.int64)
    bi = np.empty(n * n, np.bool_)
    m = 0
    for y in range(n):
        for x in range(n):
            v = inside[y, x]
            edge = False
            if y > 0 and inside[y - 1, x] != v:
                edge = True
            elif y < n - 1 and inside[y + 1, x] != v:
                edge = True
            elif x > 0 and inside[y, x - 1] != v:
                edge = True
            elif x < n - 1 and inside[y, x + 1] != v:
                edge = True
            if edge:
                by[m] = y
                bx[m] = x
                bi[m] = v
                m += 1
    out = np.empty((cell, cell), np.float32)
    for i in range(cell):
        for j in range(cell):
            sy = (i + 0.5) * ss - 0.5
            sx = (j + 0.5) * ss - 0.5
            iy = min(max(int(round(sy)), 0), n - 1)
            ix = min(max(int(round(sx)), 0), n - 1)
            me = inside[iy, ix]
            best = 1e30
            for k in range(m):
                if bi[k] != me:
                    dy = by[k] - sy
                    dx = bx[k] - sx
                    d2 = dx * dx + dy * dy
                    if d2 < best:
                        best = d2
            d = (np.sqrt(best) - 0.5 * ss) / ss if best < 1e29 else spread
            d = min(max(d, 0.0), spread)
            out[i, j] = -d if me else d
    return out
