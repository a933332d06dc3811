"""Compiled iterations of a small force-directed graph layout (repulsion between all nodes,
springs on edges), each step bit for bit the numpy step it replaces::

    d = p[:, None] - p[None]
    dist = np.hypot(d[..., 0], d[..., 1]) + np.eye(n) + 1e-6
    force = (d / dist[..., None] ** 3 * 0.002).sum(1)
    np.add.at(force, ends, np.stack([v, -v], 1).reshape(-1, 2))    # v = (p[j] - p[i]) * 0.5
    p = np.clip(p + force * (1 - t / steps) * 0.5, 0.0, 1.0)

Why the results match: every element is the same float64 operations in the same order.
``math.hypot`` is the libm ``hypot`` that ``np.hypot`` calls; the diagonal's ``+ 1.0`` and the
``+ 1e-6`` round separately, as numpy's two additions do; each term is ``(d / dist**3) *
0.002``; numpy reduces the middle axis of an ``(n, n, 2)`` array one term after the other from
``j = 0`` (no pairwise blocks: the reduced axis is not the inner loop), so the sum here runs
``j = 0 .. n-1`` from the ``j = 0`` term; the spring pulls are added after it, edge after
edge, ``+v`` on ``i`` then ``-v`` on ``j``; the clip keeps numpy's ``max`` then ``min``.

The cube ``dist**3`` is *not* computed here: numpy's ``power`` loop may be a SIMD routine
(AVX-512 builds) whose roundings differ from libm ``pow`` and from ``x*x*x``, so the caller
takes it with ``np.power(dist, 3, out=cube)`` between the steps, and whatever loop numpy picks
on the machine, the layout is the one numpy would give. ``tests/test_perceptv_spring.py``
checks the layout against the plain numpy one.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import exact


@exact
def distances(p: np.ndarray, dist: np.ndarray) -> None:
    """Fill ``dist`` ``(n, n)`` with ``hypot(p_i - p_j) + eye + 1e-6`` for the points ``p``
    ``(n, 2)`` (``1.0 + 1e-6`` on the diagonal). Returns nothing."""
    n = p.shape[0]
    for i in range(n):
        for j in range(n):
            h = math.hypot(p[i, 0] - p[j, 0], p[i, 1] - p[j, 1])
            dist[i, j] = (h + (1.0 if i == j else 0.0)) + 1e-6


@exact
def step(p: np.ndarray, dist: np.ndarray, cube: np.ndarray, ends: np.ndarray, t: int, steps: int,
         force: np.ndarray) -> None:
    """One layout step ``t`` of ``steps`` on the points ``p`` ``(n, 2)``, in place, given
    ``cube`` ``(n, n)`` = ``dist ** 3`` as numpy computes it: repulsion ``(p_i - p_j) / cube *
    0.002`` summed over ``j``, then for each edge of ``ends`` ``(2m,)`` (``i0, j0, i1, j1,
    ...``) half the pull ``p_j - p_i`` added to ``i`` and taken from ``j``, then ``p`` moved by
    ``force * (1 - t / steps) * 0.5`` and clipped to [0, 1]. ``force`` ``(n, 2)`` is scratch.
    Unless ``t`` is the last step, ``dist`` ``(n, n)`` is refilled for the new ``p``
    (:func:`distances`). Returns nothing."""
    n = p.shape[0]
    for i in range(n):
        for k in range(2):
            acc = (p[i, k] - p[0, k]) / cube[i, 0] * 0.002
            for j in range(1, n):
                acc += (p[i, k] - p[j, k]) / cube[i, j] * 0.002
            force[i, k] = acc
    for e in range(0, ends.shape[0], 2):
        a, b = ends[e], ends[e + 1]
        v0, v1 = (p[b, 0] - p[a, 0]) * 0.5, (p[b, 1] - p[a, 1]) * 0.5
        force[a, 0] += v0
        force[a, 1] += v1
        force[b, 0] += -v0
        force[b, 1] += -v1
    damp = 1 - t / steps
    for i in range(n):
        for k in range(2):
            x = p[i, k] + force[i, k] * damp * 0.5
            x = x if x > 0.0 else 0.0
            p[i, k] = x if x < 1.0 else 1.0
    if t + 1 < steps:
        distances(p, dist)
