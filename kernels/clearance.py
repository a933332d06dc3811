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


@numba.njit(cache=True, nogil=True, fastmath=False)
def place_batch(cand: np.ndarray, radii: np.ndarray, live: np.ndarray, gap: float,
                out: np.ndarray, ok: np.ndarray, fixed: np.ndarray) -> None:
    """For each of ``B`` samples, discs ``k = 0..K-1`` in turn (``radii [B,K]``, ``live [B,K]``)
    each take the first of their candidates ``cand [B,K,M,2]`` that keeps ``gap`` from the
    discs already there (``fixed [B,F,3]``: ``x, y, radius``, radius < 0 for none) and from
    the live discs placed before (``dx**2 + dy**2 >= (r + r' + gap)**2``, numpy's operations
    in its order); a live disc with no fit clears ``ok[b]``. Writes centres to ``out [B,K,2]``
    (0 for discs not live; the first candidate where none fits)."""
    B, K, M, F = cand.shape[0], cand.shape[1], cand.shape[2], fixed.shape[1]
    for b in range(B):
        for k in range(K):
            if not live[b, k]:
                out[b, k, 0] = 0.0
                out[b, k, 1] = 0.0
                continue
            pick = -1
            for m in range(M):
                cx, cy = cand[b, k, m, 0], cand[b, k, m, 1]
                fits = True
                for j in range(F):
                    if fixed[b, j, 2] < 0.0:
                        continue
                    dx = cx - fixed[b, j, 0]
                    dy = cy - fixed[b, j, 1]
                    need = radii[b, k] + fixed[b, j, 2] + gap
                    if not dx * dx + dy * dy >= need * need:
                        fits = False
                        break
                for j in range(k):
                    if not fits:
                        break
                    if not live[b, j]:
                        continue
                    dx = cx - out[b, j, 0]
                    dy = cy - out[b, j, 1]
                    need = radii[b, k] + radii[b, j] + gap
                    if not dx * dx + dy * dy >= need * need:
                        fits = False
                if fits:
                    pick = m
                    break
            if pick < 0:
                ok[b] = False
                pick = 0
            out[b, k, 0] = cand[b, k, pick, 0]
            out[b, k, 1] = cand[b, k, pick, 1]
