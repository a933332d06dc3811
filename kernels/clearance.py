"""A compiled clearance test for rejection sampling of disc layouts (scene units), and the
counter-based uniform draws (:class:`engine.batched.BatchRandom`'s and the placement's, one
definition): value ``k`` of sample ``b`` is the 64-bit finaliser of ``keys[b] + k * golden``
(wrapping uint64 arithmetic), its top 53 bits scaled to [0, 1), bit for bit what the numpy
expression with :func:`engine.batched._mix` gives (``tests/test_batched.py`` compares them)."""
from __future__ import annotations

import math

import numpy as np

from .jit import exact


@exact(inline=True)
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


@exact
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


# The counter-based draws live in this file with the placement that calls them: numba's
# disk cache tells a kernel is stale from its own file only, so a draw defined elsewhere
# could change while a cached placement kept the old one.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
M1, M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


@exact
def uniform(key, ctr) -> float:
    """Value ``ctr`` (>= 1) of the counter-based stream of ``key`` (both uint64): the draw
    :class:`engine.batched.BatchRandom` gives at that counter, in [0, 1)."""
    z = np.uint64(key) + np.uint64(ctr) * GOLDEN    # uint64 throughout: mixed with int64, numba shifts signed
    z = (z ^ (z >> np.uint64(30))) * M1
    z = (z ^ (z >> np.uint64(27))) * M2
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * 2.0 ** -53


@exact
def uniforms(keys: np.ndarray, first: int, n: int) -> np.ndarray:
    """``[B, n]`` float64 in [0, 1): :func:`uniform` at counters ``first .. first + n - 1``
    (from 1) of each of the ``B`` keys (uint64)."""
    B = keys.shape[0]
    out = np.empty((B, n), np.float64)
    for b in range(B):
        for j in range(n):
            out[b, j] = uniform(keys[b], np.uint64(first + j))
    return out


BOX, SECTOR = 0, 1            # region kinds of :func:`place_regions`


@exact(inline=True)
def _candidate(kind: int, key, drawn, K: int, M: int, k: int, m: int, p: np.ndarray, r: float) -> tuple:
    """Candidate ``m`` of the disc placed ``k``-th (radius ``r``) in its region ``p``: a box
    ``(x0, y0, x1, y1)``, the disc kept inside, from draws ``((k * M + m) * 2 + c)`` (as
    ``BatchRandom.random(K, M, 2)``); or an annular sector ``(cx, cy, inner, outer, a0,
    width)`` (degrees, counter-clockwise on screen, y down), the radius drawn for an even
    spread over its area (draw ``k * M + m``) and the angle (draw ``K * M + k * M + m``),
    the disc kept inside it."""
    if kind == BOX:
        ux = uniform(key, drawn + np.uint64(1 + (k * M + m) * 2))
        uy = uniform(key, drawn + np.uint64(2 + (k * M + m) * 2))
        lx, ly = p[0] + r, p[1] + r
        return lx + ux * ((p[2] - r) - lx), ly + uy * ((p[3] - r) - ly)
    u1 = uniform(key, drawn + np.uint64(1 + k * M + m))
    u2 = uniform(key, drawn + np.uint64(1 + K * M + k * M + m))
    lo = p[2] + r
    hi = max(p[3] - r, lo)
    rho = math.sqrt(lo * lo + u1 * (hi * hi - lo * lo))
    pad = math.degrees(math.asin(min(max(r / max(rho, 1e-9), 0.0), 1.0)))
    ang = math.radians(p[4] + pad + u2 * max(p[5] - 2.0 * pad, 0.0))
    return p[0] + rho * math.cos(ang), p[1] - rho * math.sin(ang)


@exact
def place_regions(keys: np.ndarray, drawn, kind: int, M: int, regions: np.ndarray, radii: np.ndarray,
                  live: np.ndarray, gap: float, fixed: np.ndarray, out: np.ndarray, ok: np.ndarray) -> None:
    """For each of ``B`` samples (stream ``keys [B]`` uint64, ``drawn`` values already
    used), discs ``k = 0..K-1`` in turn (``radii [B,K]``, ``live [B,K]``) each take the first
    of ``M`` candidates in their region (``regions [B,K,P]``, see :func:`_candidate`), drawn
    only as far as needed, that keeps ``gap`` from the discs already there (``fixed
    [B,F,3]``: ``x, y, radius``, radius < 0 for none) and from the live discs placed before
    (``dx**2 + dy**2 >= (r + r' + gap)**2``); a live disc with no fit clears ``ok[b]``.
    Writes centres to ``out [B,K,2]`` (0 for discs not live; the first candidate where none
    fits)."""
    B, K, F = radii.shape[0], radii.shape[1], fixed.shape[1]
    for b in range(B):
        for k in range(K):
            out[b, k, 0] = 0.0
            out[b, k, 1] = 0.0
            if not live[b, k]:
                continue
            r = radii[b, k]
            pick = -1
            for m in range(M):
                cx, cy = _candidate(kind, keys[b], drawn, K, M, k, m, regions[b, k], r)
                fits = True
                for j in range(F):
                    if fixed[b, j, 2] < 0.0:
                        continue
                    dx = cx - fixed[b, j, 0]
                    dy = cy - fixed[b, j, 1]
                    need = r + fixed[b, j, 2] + gap
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
                    need = r + radii[b, j] + gap
                    if not dx * dx + dy * dy >= need * need:
                        fits = False
                if fits:
                    pick = m
                    out[b, k, 0] = cx
                    out[b, k, 1] = cy
                    break
            if pick < 0:
                ok[b] = False
                cx, cy = _candidate(kind, keys[b], drawn, K, M, k, 0, regions[b, k], r)
                out[b, k, 0] = cx
                out[b, k, 1] = cy
