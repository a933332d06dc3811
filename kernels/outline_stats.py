"""Compiled exact pair statistics of small point sets (scene units) for ELVIS layouts.

Every distance is ``math.hypot(x_i - x_j, y_i - y_j)``, the value ``np.hypot`` gives for the
same differences; minima, counts and comparisons of those values are exact whatever the order.
Means repeat numpy's own float64 summation order (:func:`pairwise_sum` for a 1-D array, row
after row for a column sum), so that results match the numpy expressions they replace bit for
bit; ``tests/test_elvis_speed_reference.py`` checks both against numpy.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import exact

SURE = 1.0 + 1e-6             # a squared sum this far beyond a bound's square puts hypot beyond the bound


@exact
def beyond(dx: float, dy: float, bound: float) -> bool:
    """Whether ``math.hypot(dx, dy) >= bound`` is certain from ``dx * dx + dy * dy`` alone:
    a pair this far needs no ``hypot``, which costs ten times the squares. ``SURE`` allows a
    relative 1e-6, beyond the rounding of the squares and of ``hypot`` in float64 and in
    float32 (a kernel compiled for float32 points squares in float32). False when it cannot
    tell (near the bound; a bound that is infinite, NaN, or so small that its square loses
    precision), and the caller computes ``hypot``. Since the callers then decide with
    ``hypot`` exactly as before, their results do not change."""
    return bound > 1e-15 and dx * dx + dy * dy > bound * bound * SURE


@exact
def nearest_each(c: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with the distance from ``c[i]`` to its nearest other point of ``c``
    ``(n, 2)`` (``inf`` when it has none, NaN when a distance is NaN), as ``d.min(1)`` of the
    distance matrix with an infinite diagonal. Returns nothing."""
    n = c.shape[0]
    for i in range(n):
        out[i] = np.inf
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = c[i, 0] - c[j, 0], c[i, 1] - c[j, 1]
            if beyond(dx, dy, out[i] if out[i] > out[j] else out[j]):     # neither nearest changes
                continue
            d = math.hypot(dx, dy)
            if d < out[i] or d != d:
                if out[i] == out[i]:
                    out[i] = d
            if d < out[j] or d != d:
                if out[j] == out[j]:
                    out[j] = d


PW_BLOCK = 128                # numpy's pairwise-summation block (``PW_BLOCKSIZE``)


@exact(inline=True)
def _block_sum(a: np.ndarray, lo: int, n: int) -> float:
    """The sum of ``a[lo:lo + n]`` (``n <= PW_BLOCK``) as numpy's pairwise summation adds a
    block: one by one below 8 elements, else in 8 interleaved partial sums. Returns it."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        r0 += a[lo + i]
        r1 += a[lo + i + 1]
        r2 += a[lo + i + 2]
        r3 += a[lo + i + 3]
        r4 += a[lo + i + 4]
        r5 += a[lo + i + 5]
        r6 += a[lo + i + 6]
        r7 += a[lo + i + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@exact
def _half(n: int) -> int:
    """Where numpy's pairwise summation splits ``n > PW_BLOCK`` elements: at about half, a
    multiple of 8."""
    h = n // 2
    return h - h % 8


@exact
def pairwise_sum(a: np.ndarray, lo: int, n: int) -> float:
    """The sum of ``a[lo:lo + n]`` in the order ``np.add.reduce`` adds a contiguous float64
    array: a block up to :data:`PW_BLOCK` (:func:`_block_sum`), above it the sum of its two
    halves (:func:`_half`), each summed alike. Returns the sum."""
    if n <= PW_BLOCK:
        return _block_sum(a, lo, n)
    # numpy recurses; a cached numba function may not, so the same tree is walked with a stack
    # of frames: ``stage`` 0 = left half pending, 1 = right half pending (``left`` holds the first)
    f_lo, f_n = np.empty(64, np.int64), np.empty(64, np.int64)
    stage, left = np.zeros(64, np.int64), np.empty(64)
    top = 0
    f_lo[0], f_n[0] = lo, n
    while True:
        if f_n[top] > PW_BLOCK:                       # descend into the left half
            stage[top] = 0
            f_lo[top + 1], f_n[top + 1] = f_lo[top], _half(f_n[top])
            top += 1
            continue
        value = _block_sum(a, f_lo[top], f_n[top])
        top -= 1
        while top >= 0 and stage[top] == 1:           # both halves done: combine and go up
            value = left[top] + value
            top -= 1
        if top < 0:
            return value
        left[top], stage[top] = value, 1              # left half done: the right one next
        h = _half(f_n[top])
        f_lo[top + 1], f_n[top + 1] = f_lo[top] + h, f_n[top] - h
        top += 1


@exact
def mean_nearest(c: np.ndarray) -> float:
    """The mean nearest-neighbour distance of ``c`` ``(n, 2)``, as
    ``d.min(1).mean()`` of its distance matrix with an infinite diagonal."""
    nn = np.empty(c.shape[0])
    nearest_each(c, nn)
    return pairwise_sum(nn, 0, nn.shape[0]) / nn.shape[0]


@exact
def spread(c: np.ndarray) -> float:
    """The RMS distance of ``c`` ``(n, 2)`` from its mean, as
    ``np.sqrt(((c - c.mean(0)) ** 2).sum(1).mean())``."""
    n = c.shape[0]
    m0, m1 = 0.0, 0.0
    for i in range(n):
        m0 += c[i, 0]
        m1 += c[i, 1]
    m0 /= n
    m1 /= n
    sq = np.empty(n)
    for i in range(n):
        d0, d1 = c[i, 0] - m0, c[i, 1] - m1
        sq[i] = d0 * d0 + d1 * d1
    return math.sqrt(pairwise_sum(sq, 0, n) / n)


@exact(inline=True)
def apart(c: np.ndarray, r: np.ndarray, gap: float) -> bool:
    """Whether every two discs of centres ``c`` ``(n, 2)`` and radii ``r`` ``(n,)`` lie at
    least ``gap`` apart: ``d >= (r_i + r_j) + gap`` for every pair (False on NaN)."""
    n = c.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy, bound = c[i, 0] - c[j, 0], c[i, 1] - c[j, 1], (r[i] + r[j]) + gap
            if not beyond(dx, dy, bound) and not math.hypot(dx, dy) >= bound:
                return False
    return True


@exact
def apart_each(c: np.ndarray, r: np.ndarray, live: np.ndarray, gap: float) -> np.ndarray:
    """Per row of a batch (``c`` ``[B,K,2]``, ``r`` ``[B,K]``, ``live`` ``[B,K]``), whether
    every two live discs lie ``gap`` apart (:func:`apart`). Returns ``[B]`` bool."""
    out = np.empty(c.shape[0], np.bool_)
    for b in range(c.shape[0]):
        out[b] = apart(c[b][live[b]], r[b][live[b]], gap)
    return out


@exact
def inside(c: np.ndarray, r: np.ndarray, lo: float, hi: float) -> bool:
    """Whether every disc of centres ``c`` ``(n, 2)`` and radii ``r`` keeps ``c - r >= lo``
    and ``c + r <= hi`` on both axes (True on NaN, as the negated numpy tests are)."""
    for i in range(c.shape[0]):
        for k in range(2):
            if c[i, k] - r[i] < lo or c[i, k] + r[i] > hi:
                return False
    return True


@exact
def outline_candidate(c: np.ndarray, r: np.ndarray, gap: float, lo: float, hi: float) -> tuple:
    """:func:`apart` and :func:`inside` together, then the statistics a candidate is judged
    by. Returns ``(ok, mean_nearest(c), spread(c))``, the two zero when not ``ok``."""
    if not inside(c, r, lo, hi) or not apart(c, r, gap):
        return False, 0.0, 0.0
    return True, mean_nearest(c), spread(c)


@exact
def closest_pair(c: np.ndarray) -> float:
    """The smallest distance between two points of ``c`` ``(n, 2)`` (``inf`` when ``n < 2``;
    NaN when a distance is NaN)."""
    best = np.inf
    n = c.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = c[i, 0] - c[j, 0], c[i, 1] - c[j, 1]
            if beyond(dx, dy, best):
                continue
            d = math.hypot(dx, dy)
            if d != d:
                return d
            if d < best:
                best = d
    return best


@exact
def nearest_between(a: np.ndarray, b: np.ndarray) -> float:
    """The smallest distance from a point of ``a`` ``(n, 2)`` to one of ``b`` ``(m, 2)``
    (``inf`` when either is empty; NaN when a distance is NaN)."""
    best = np.inf
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            dx, dy = a[i, 0] - b[j, 0], a[i, 1] - b[j, 1]
            if beyond(dx, dy, best):
                continue
            d = math.hypot(dx, dy)
            if d != d:
                return d
            if d < best:
                best = d
    return best


@exact
def close_pairs(c: np.ndarray, limit: float) -> int:
    """How many pairs ``i < j`` of points of ``c`` ``(n, 2)`` lie closer than ``limit``."""
    count = 0
    n = c.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = c[i, 0] - c[j, 0], c[i, 1] - c[j, 1]
            if not beyond(dx, dy, limit) and math.hypot(dx, dy) < limit:
                count += 1
    return count


@exact
def curves_touch(c: np.ndarray, r: np.ndarray, curve_of: np.ndarray, paired: np.ndarray, share: float,
                 gap: float) -> bool:
    """Whether two discs of centres ``c`` ``(n, 2)`` and radii ``r`` touch: closer than
    ``share * (r_i + r_j)`` when their curves ``curve_of[i], curve_of[j]`` are ``paired``
    (``(k, k)`` booleans), else closer than ``(r_i + r_j) + gap``."""
    n = c.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = c[i, 0] - c[j, 0], c[i, 1] - c[j, 1]
            reach = r[i] + r[j]
            bound = share * reach if paired[curve_of[i], curve_of[j]] else reach + gap
            if not beyond(dx, dy, bound) and math.hypot(dx, dy) < bound:
                return True
    return False


@exact
def overlapping_each(c: np.ndarray, r: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out[i]`` with whether disc ``i`` (centres ``c`` ``(n, 2)``, radii ``r``) comes
    closer than ``r_i + r_j`` to another. Returns nothing."""
    n = c.shape[0]
    for i in range(n):
        out[i] = False
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = c[i, 0] - c[j, 0], c[i, 1] - c[j, 1]
            if not beyond(dx, dy, r[i] + r[j]) and math.hypot(dx, dy) < r[i] + r[j]:
                out[i] = True
                out[j] = True


@exact
def scaled_outline(c: np.ndarray, first: int, n: int, centre: np.ndarray, scale: float, r: np.ndarray,
                   gap: float, lo: float, hi: float) -> tuple:
    """A copy of ``c`` ``(m, 2)`` with rows ``first:first + n`` moved to ``centre + scale *
    (c - centre)`` (each coordinate as numpy computes that expression), judged by
    :func:`outline_candidate`. Returns ``(copy, ok, mean nearest distance, spread)``."""
    out = c.copy()
    for i in range(first, first + n):
        for k in range(2):
            out[i, k] = centre[k] + scale * (c[i, k] - centre[k])
    ok, nn, sp = outline_candidate(out, r, gap, lo, hi)
    return out, ok, nn, sp


@exact
def mst_edges(p: np.ndarray) -> np.ndarray:
    """The ``n - 1`` edge lengths of the minimum spanning tree of ``p`` ``(n, 2)``, in the
    order Prim's algorithm from point 0 adds them: each step takes the first of the nearest
    unreached points (``np.argmin`` over the reach so far, reached points at ``inf``; NaN
    first, as numpy). Returns them ``(n - 1,)``."""
    n = p.shape[0]
    seen = np.zeros(n, np.bool_)
    best = np.empty(n)
    for i in range(n):
        best[i] = math.hypot(p[0, 0] - p[i, 0], p[0, 1] - p[i, 1])
    seen[0] = True
    edges = np.empty(max(n - 1, 0))
    for e in range(n - 1):
        for i in range(n):
            if seen[i]:
                best[i] = np.inf
        j = 0
        for i in range(n):
            if best[i] != best[i]:
                j = i
                break
            if best[i] < best[j]:
                j = i
        edges[e] = best[j]
        seen[j] = True
        for i in range(n):
            dx, dy = p[j, 0] - p[i, 0], p[j, 1] - p[i, 1]
            if seen[i] or beyond(dx, dy, best[i]):      # a reached point's reach is reset before it is read
                continue
            d = math.hypot(dx, dy)
            if d < best[i] or d != d:
                if best[i] == best[i]:
                    best[i] = d
    return edges


# The samplers' arithmetic between numpy's transcendental functions (which stay in numpy, as
# its own implementations of them may differ from the C library's in the last bit).

@exact
def ring_radii(u: np.ndarray, lo2: float, span: float, r: float) -> tuple:
    """Radii ``rho = np.sqrt(lo2 + u * span)`` of points in a ring, and the sine of the angle
    a disc of radius ``r`` there takes, ``np.clip(r / np.maximum(rho, 1e-9), 0, 1)`` (numpy's
    NaN and tie rules). Returns ``(rho, sine)``, both ``(n,)``."""
    n = u.shape[0]
    rho, sine = np.empty(n), np.empty(n)
    for i in range(n):
        p = math.sqrt(lo2 + u[i] * span)
        rho[i] = p
        x = r / (p if (p >= 1e-9 or p != p) else 1e-9)
        if x == x:
            x = x if x > 0.0 else 0.0
            x = x if x < 1.0 else 1.0
        sine[i] = x
    return rho, sine


@exact
def polar_points(cx: float, cy: float, rho: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Points ``(cx + rho * cos, cy - rho * sin)`` (y down). Returns them ``(n, 2)``."""
    n = rho.shape[0]
    out = np.empty((n, 2))
    for i in range(n):
        out[i, 0] = cx + rho[i] * cos[i]
        out[i, 1] = cy - rho[i] * sin[i]
    return out


@exact
def box_points(u: np.ndarray, x0: float, y0: float, w: float, h: float) -> np.ndarray:
    """Points ``(x0, y0) + u * (w, h)`` for ``u`` ``(n, 2)``. Returns them ``(n, 2)``."""
    n = u.shape[0]
    out = np.empty((n, 2))
    for i in range(n):
        out[i, 0] = x0 + u[i, 0] * w
        out[i, 1] = y0 + u[i, 1] * h
    return out


@exact
def rotated(p: np.ndarray, cx: float, cy: float, cos: float, sin: float) -> np.ndarray:
    """Points ``p`` ``(n, 2)`` turned about ``(cx, cy)``: with ``(x, y) = p - (cx, cy)``,
    ``(cx + (cos * x + sin * y), cy + (-sin * x + cos * y))``. Returns them ``(n, 2)``."""
    n = p.shape[0]
    out = np.empty((n, 2))
    for i in range(n):
        x, y = p[i, 0] - cx, p[i, 1] - cy
        out[i, 0] = cx + (cos * x + sin * y)
        out[i, 1] = cy + (-sin * x + cos * y)
    return out


@exact
def broken_curves(flat: np.ndarray, bounds: np.ndarray, at: int, kink: bool, cx: float, cy: float, cos: float,
                  sin: float, dx: float, dy: float, others: np.ndarray, lo: float, hi: float) -> tuple:
    """Curves ``flat[bounds[k]:bounds[k + 1]]`` (points ``(N, 2)``) each broken after its point
    ``at``: the rest turned about ``(cx, cy)`` as :func:`rotated` turns it (``kink``) or shifted
    by ``(dx, dy)``. Returns ``(points, off, near)``: the broken curves followed by ``others``
    ``(m, 2)`` in one ``(N + m, 2)`` array; whether a moved coordinate lies below ``lo`` or
    above ``hi``; the distance from the moved points to the nearest of ``others``
    (:func:`nearest_between`, ``inf`` when there are none)."""
    n_all, m = flat.shape[0], others.shape[0]
    out = np.empty((n_all + m, 2))
    moved = np.empty((n_all, 2))
    k, off = 0, False
    for c in range(bounds.shape[0] - 1):
        for i in range(bounds[c], bounds[c + 1]):
            x, y = flat[i, 0], flat[i, 1]
            if i - bounds[c] > at:
                if kink:
                    u, v = x - cx, y - cy
                    x, y = cx + (cos * u + sin * v), cy + (-sin * u + cos * v)
                else:
                    x, y = x + dx, y + dy
                moved[k, 0], moved[k, 1] = x, y
                k += 1
                if x < lo or y < lo or x > hi or y > hi:
                    off = True
            out[i, 0], out[i, 1] = x, y
    out[n_all:] = others
    return out, off, nearest_between(moved[:k], others)


@exact
def _tails(flat: np.ndarray, bounds: np.ndarray, at: int) -> np.ndarray:
    """The points after point ``at`` of each curve ``flat[bounds[k]:bounds[k + 1]]``, curve
    after curve: ``(m, 2)``."""
    m = 0
    for c in range(bounds.shape[0] - 1):
        m += max(0, bounds[c + 1] - bounds[c] - at - 1)
    out = np.empty((m, 2))
    k = 0
    for c in range(bounds.shape[0] - 1):
        for i in range(bounds[c] + at + 1, bounds[c + 1]):
            out[k, 0], out[k, 1] = flat[i, 0], flat[i, 1]
            k += 1
    return out


@exact
def best_break(flat: np.ndarray, bounds: np.ndarray, others: np.ndarray, at: np.ndarray, first: np.ndarray,
               kink: np.ndarray, size: np.ndarray, tangent: np.ndarray, own: float, spacing: float, close: int,
               target: float, least_turn: float, lo: float, hi: float) -> tuple:
    """The best of the candidate breaks of ``scenes.elvis.continuity.break_curve``, all
    tried in one call: candidate ``i`` breaks the curves ``flat[bounds[k]:bounds[k + 1]]``
    after point ``at[i]``, first to side ``first[i]`` (+-1) then to the other, by a kink of
    ``size[i]`` degrees (``kink[i]``) or a sideways shift of ``size[i] * own`` along the
    normal of the unit ``tangent[i]``; :func:`broken_curves` moves them, with ``others``
    ``(m, 2)``. A try counts when no moved point leaves ``[lo, hi]``, a kink turns the
    curve by at least ``least_turn`` degrees, and the moved points are no nearer
    ``others`` than ``min(0.9 * spacing, before)``; of those the one first with the least
    ``(|close_pairs - close|, |spread - target|)`` (pairs closer than ``0.6 * spacing``)
    wins. Returns ``(i, side, points)``: its broken curves followed by ``others``, as
    :func:`broken_curves` gives them; ``(-1, 0, flat)`` when none counts."""
    best_i, best_side, best_pairs, best_spread, best = -1, 0, 0, 0.0, flat
    limit = 0.6 * spacing
    for i in range(at.shape[0]):
        a = at[i]
        clear = -1.0                                     # how near the others the unbroken rest is, once needed
        for turn in range(2):
            side = first[i] if turn == 0 else -first[i]
            if kink[i]:
                rad = math.radians(size[i] * side)
                every, off, near = broken_curves(flat, bounds, a, True, flat[a, 0], flat[a, 1], math.cos(rad),
                                                 math.sin(rad), 0.0, 0.0, others, lo, hi)
                b0, b1 = flat[a, 0] - flat[a - 1, 0], flat[a, 1] - flat[a - 1, 1]
                a0, a1 = every[a + 1, 0] - every[a, 0], every[a + 1, 1] - every[a, 1]
                if math.degrees(abs(math.atan2(b0 * a1 - b1 * a0, b0 * a0 + b1 * a1))) < least_turn:
                    continue                             # the curve's own bend took back part of the kink
            else:
                shift = size[i] * own
                every, off, near = broken_curves(flat, bounds, a, False, 0.0, 0.0, 1.0, 0.0,
                                                 -tangent[i, 1] * side * shift, tangent[i, 0] * side * shift,
                                                 others, lo, hi)
            if off:
                continue
            if others.shape[0]:
                if clear < 0.0:
                    clear = nearest_between(_tails(flat, bounds, a), others)
                if near < min(0.9 * spacing, clear):
                    continue
            pairs, spr = abs(close_pairs(every, limit) - close), abs(spread(every) - target)
            if best_i < 0 or pairs < best_pairs or (pairs == best_pairs and spr < best_spread):
                best_i, best_side, best_pairs, best_spread, best = i, side, pairs, spr, every
    return best_i, best_side, best


@exact
def stretch_mid(c: np.ndarray, first: int, n: int, start: int, k: int, cx: float, cy: float) -> np.ndarray:
    """The mean of the ``k`` outline points ``c[first + (start + j) % n]`` less ``(cx, cy)``, as
    ``np.add.reduce(c[idx], 0) / k - centre`` (a column sum row after row, from 0.0: a
    column of ``-0.0`` sums to ``0.0``). Returns it ``(2,)``."""
    s0, s1 = 0.0, 0.0
    for j in range(k):
        i = first + (start + j) % n
        s0 += c[i, 0]
        s1 += c[i, 1]
    out = np.empty(2)
    out[0], out[1] = s0 / k - cx, s1 / k - cy
    return out


@exact
def stretch_mids(c: np.ndarray, first: int, n: int, starts: np.ndarray, ks: np.ndarray, cx: float,
                 cy: float) -> np.ndarray:
    """:func:`stretch_mid` of each candidate ``a``: the stretch of ``ks[a]`` points from
    ``starts[a]``. Returns them ``(k, 2)``."""
    out = np.empty((starts.shape[0], 2))
    for a in range(starts.shape[0]):
        out[a] = stretch_mid(c, first, n, starts[a], ks[a], cx, cy)
    return out


@exact
def stretched(c: np.ndarray, first: int, n: int, start: int, k: int, u0: float, u1: float, d: float) -> tuple:
    """A copy of ``c`` ``(N, 2)`` with the points of :func:`stretch_mid` moved by
    ``(u0 * d, u1 * d)``. Returns ``(moved, mean_nearest(moved), spread(moved))``."""
    moved = c.copy()
    for j in range(k):
        i = first + (start + j) % n
        moved[i, 0] = c[i, 0] + u0 * d
        moved[i, 1] = c[i, 1] + u1 * d
    return moved, mean_nearest(moved), spread(moved)


@exact
def _clipped(v: float, lo: float, hi: float) -> float:
    """``min(max(v, lo), hi)`` as Python gives it (NaN stays NaN)."""
    if v != v:
        return v
    v = lo if lo > v else v
    return hi if hi < v else v


@exact
def best_stretch(c: np.ndarray, first: int, n: int, starts: np.ndarray, ks: np.ndarray, u: np.ndarray,
                 ds: np.ndarray, centre: np.ndarray, nn0: float, spread0: float, lo: float, hi: float,
                 r: np.ndarray, gap: float, edge_lo: float, edge_hi: float) -> tuple:
    """The least conspicuous of the candidate breaks of an outline (``c[first:first + n]`` of
    ``c`` ``(m, 2)``): candidate ``a`` moves the stretch of ``ks[a]`` points from
    ``starts[a]`` by ``ds[a]`` along ``u[a]`` ``(2,)``, the unit direction from ``centre``
    to the stretch's mean (:func:`stretched`), then the figure is redrawn at each distinct
    scale among 1 and those giving back the mean nearest distance ``nn0``, the spread
    ``spread0`` or both (clipped to ``lo..hi``, ascending); a redrawn outline that passes
    :func:`outline_candidate` costs ``2 |a - b| + |a| + |b|`` with ``a``, ``b`` the logs of
    its statistics over ``nn0``, ``spread0``. The first of the least cost wins. Returns
    ``(found, candidate, scale, points (m, 2))``, the last three meaningless when not found."""
    best_cost, best_a, best_scale = 0.0, -1, 0.0
    best = c.copy()
    scales = np.empty(4)
    for a in range(starts.shape[0]):
        moved, nn1, spread1 = stretched(c, first, n, starts[a], ks[a], u[a, 0], u[a, 1], ds[a])
        scales[0] = _clipped(1.0, lo, hi)
        scales[1] = _clipped(nn0 / nn1, lo, hi)
        scales[2] = _clipped(spread0 / spread1, lo, hi)
        scales[3] = _clipped(math.sqrt(nn0 * spread0 / (nn1 * spread1)), lo, hi)
        scales.sort()
        for j in range(4):
            scale = scales[j]
            if j and scale == scales[j - 1]:
                continue
            cand, ok, nn_c, spread_c = scaled_outline(moved, first, n, centre, scale, r, gap, edge_lo, edge_hi)
            if not ok:
                continue
            nn2, spread2 = math.log(nn_c / nn0), math.log(spread_c / spread0)
            cost = 2.0 * abs(nn2 - spread2) + abs(nn2) + abs(spread2)
            if best_a < 0 or cost < best_cost:
                best_cost, best_a, best_scale = cost, a, scale
                best[:] = cand
    return best_a >= 0, best_a, best_scale, best


DEGREES = 180.0 / math.pi     # ``np.degrees``'s factor, and ``np.radians``'s below
RADIANS = math.pi / 180.0


@exact
def sector_radians(asin: np.ndarray, u: np.ndarray, a0: float, width: float) -> np.ndarray:
    """The angles ``np.radians(a0 + pad + u * np.maximum(width - 2 * pad, 0))`` of points in a
    sector ``width`` degrees wide, kept ``pad = np.degrees(asin)`` from its edges. Returns them ``(n,)``."""
    n = asin.shape[0]
    out = np.empty(n)
    for i in range(n):
        pad = asin[i] * DEGREES
        room = width - 2.0 * pad
        out[i] = ((a0 + pad) + u[i] * (room if (room >= 0.0 or room != room) else 0.0)) * RADIANS
    return out
