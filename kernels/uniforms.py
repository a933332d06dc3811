"""Compiled counter-based uniform draws: :class:`engine.batched.BatchRandom`'s and those of
the compiled placement (:mod:`kernels.clearance`), one definition for both.

Value ``k`` of sample ``b`` is the 64-bit finaliser of ``keys[b] + k * golden`` (wrapping
uint64 arithmetic), its top 53 bits scaled to [0, 1). Integer arithmetic wraps the same way
in numba as in numpy and the last step is exact, so :func:`uniforms` gives what the numpy
expression with :func:`engine.batched._mix` gives, bit for bit (``tests/test_batched.py``
compares the two); that expression makes nine temporary arrays a call, about ten times this
kernel's time on the small draws sampling makes (a few to a few hundred per sample).
"""
from __future__ import annotations

import numpy as np

from .jit import exact

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
M1, M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


@exact
def uniform(key, ctr) -> float:
    """Value ``ctr`` (>= 1) of the counter-based stream of ``key`` (both uint64): the draw
    :class:`engine.batched.BatchRandom` gives at that counter, in [0, 1)."""
    z = key + ctr * GOLDEN
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
