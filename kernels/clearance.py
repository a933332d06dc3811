"""A compiled clearance test for rejection sampling of disc layouts (scene units)."""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, fastmath=False)
def first_clear(cand: np.ndarray, placed: np.ndarray, m: int, r: float, gap: float) -> int:
    """The first row ``k`` of ``cand [N,2]`` whose disc of radius ``r`` keeps ``gap`` from
    each of the first ``m`` discs of ``placed [M,3]`` (``x, y, radius``): ``dx**2 + dy**2 >=
    (r + radius + gap)**2``, the same floating-point operations in the same order as the
    numpy expression over all candidates, so the choice is bit-identical; it stops at the
    first fit. Returns ``k``, or -1 when none fits."""
    for k in range(cand.shape[0]):
        cx, cy = cand[k, 0], cand[k, 1]
        ok = True
        for j in range(m):
            dx = cx - placed[j, 0]
            dy = cy - placed[j, 1]
            need = r + placed[j, 2] + gap
            if not dx * dx + dy * dy >= need * need:
                ok = False
                break
        if ok:
            return k
    return -1


@numba.njit(cache=True, nogil=True, fastmath=False)
def place_run(blocks: np.ndarray, placed: np.ndarray, m: int, r: float, gap: float, discs: np.ndarray,
              out: np.ndarray) -> int:
    """Place discs ``discs[j]`` (all of radius ``r``) one after another, disc ``j`` at the first
    fitting candidate of ``blocks[j] [N,2]`` (:func:`first_clear` against the ``m + j`` discs
    placed so far): its centre goes to ``out[discs[j]]`` and its disc to ``placed[m + j]``.
    Stops at the first disc none of whose candidates fits. Returns how many were placed."""
    for j in range(discs.shape[0]):
        hit = first_clear(blocks[j], placed, m + j, r, gap)
        if hit < 0:
            return j
        out[discs[j], 0] = blocks[j, hit, 0]
        out[discs[j], 1] = blocks[j, hit, 1]
        placed[m + j, 0] = blocks[j, hit, 0]
        placed[m + j, 1] = blocks[j, hit, 1]
        placed[m + j, 2] = r
    return discs.shape[0]
