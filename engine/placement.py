"""Seeded placement helpers shared by the scene families."""
from __future__ import annotations

import numpy as np


class PlacementError(RuntimeError):
    """No layout satisfying the constraints was found within the allowed attempts."""


def scatter(rng: np.random.Generator, radii, bounds=(0.0, 0.0, 1.0, 1.0), gap: float = 0.02,
            tries: int = 2000) -> np.ndarray:
    """Centres for discs of ``radii`` ``(K,)`` inside ``bounds = (x0, y0, x1, y1)`` such that
    every disc lies inside the bounds and any two are at least ``gap`` apart.
    Larger discs are placed first. Returns ``(K, 2)``; raises :class:`PlacementError`."""
    r = np.asarray(radii, dtype=np.float64)
    x0, y0, x1, y1 = bounds
    out = np.zeros((len(r), 2))
    placed: list[int] = []
    for i in np.argsort(-r, kind="stable"):
        lo = np.array([x0 + r[i], y0 + r[i]])
        hi = np.array([x1 - r[i], y1 - r[i]])
        if np.any(hi < lo):
            raise PlacementError(f"radius {r[i]:.3f} does not fit in bounds {bounds}")
        cand = lo + rng.random((tries, 2)) * (hi - lo)
        hit = _first_clear(cand, out[placed], r[i] + r[placed] + gap)
        if hit < 0:
            raise PlacementError(f"could not place {len(r)} discs with gap {gap} in {bounds}")
        out[i] = cand[hit]
        placed.append(i)
    return out


def _first_clear(cand: np.ndarray, centres: np.ndarray, need: np.ndarray, head: int = 64) -> int:
    """The first row of ``cand [N,2]`` at least ``need [J]`` from every one of ``centres [J,2]``,
    or -1. The first ``head`` candidates are checked alone (one usually fits), then the rest."""
    for lo, hi in ((0, head), (head, len(cand))):
        part = cand[lo:hi]
        if not len(part):
            continue
        ok = (np.hypot(part[:, None, 0] - centres[None, :, 0], part[:, None, 1] - centres[None, :, 1])
              >= need[None, :]).all(1)
        if ok.any():
            return lo + int(ok.argmax())
    return -1
