"""Centripetal Catmull-Rom splines of many curves at once, compiled.

:func:`spline_samples` gives, bit for bit, what the numpy expression over every curve and
segment at once gives (``tests/test_elvis_speed_reference.py`` holds it to that expression):
each value by the same IEEE operations in the same order, ``math.hypot`` for ``np.hypot``
and ``math.sqrt`` for numpy's ``** 0.5`` of an array; a division by zero (a step lost
to rounding beside a huge one) gives inf or NaN, as numpy's does.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import exact


@exact(ieee_division=True)
def spline_samples(p: np.ndarray, per: int) -> np.ndarray:
    """Samples of the splines through the control points ``p [C, P, 2]`` (float64, ``P >=
    3``), a mirrored point added at each end, ``per`` samples a segment, the last control
    point closing each curve. Returns ``[C, (P - 1) * per + 1, 2]`` float64."""
    C, P = p.shape[0], p.shape[1]
    S = P - 1
    out = np.empty((C, S * per + 1, 2))
    ext = np.empty((P + 2, 2))
    step = np.empty(P + 1)
    for c in range(C):
        for d in range(2):
            ext[0, d] = 2 * p[c, 0, d] - p[c, 1, d]
            for i in range(P):
                ext[i + 1, d] = p[c, i, d]
            ext[P + 1, d] = 2 * p[c, P - 1, d] - p[c, P - 2, d]
        for i in range(P + 1):
            h = math.hypot(ext[i + 1, 0] - ext[i, 0], ext[i + 1, 1] - ext[i, 1])
            step[i] = math.sqrt(h if (h >= 1e-9 or h != h) else 1e-9)     # np.maximum keeps a NaN
        for s in range(S):
            t1 = step[s]
            t2 = t1 + step[s + 1]
            t3 = t2 + step[s + 2]
            for k in range(per):
                t = t1 + (k / per) * (t2 - t1)
                for d in range(2):
                    p0, p1, p2, p3 = ext[s, d], ext[s + 1, d], ext[s + 2, d], ext[s + 3, d]
                    a1 = (t1 - t) / t1 * p0 + t / t1 * p1
                    a2 = (t2 - t) / (t2 - t1) * p1 + (t - t1) / (t2 - t1) * p2
                    a3 = (t3 - t) / (t3 - t2) * p2 + (t - t2) / (t3 - t2) * p3
                    b1 = (t2 - t) / t2 * a1 + t / t2 * a2
                    b2 = (t3 - t) / (t3 - t1) * a2 + (t - t1) / (t3 - t1) * a3
                    out[c, s * per + k, d] = (t2 - t) / (t2 - t1) * b1 + (t - t1) / (t2 - t1) * b2
        for d in range(2):
            out[c, S * per, d] = p[c, P - 1, d]
    return out
