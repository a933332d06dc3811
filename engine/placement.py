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
        ok = np.ones(tries, bool)
        for j in placed:
            ok &= np.hypot(*(cand - out[j]).T) >= r[i] + r[j] + gap
        hits = np.nonzero(ok)[0]
        if len(hits) == 0:
            raise PlacementError(f"could not place {len(r)} discs with gap {gap} in {bounds}")
        out[i] = cand[hits[0]]
        placed.append(i)
    return out
