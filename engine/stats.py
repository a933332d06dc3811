"""Chance accuracy and significance thresholds, computed from answer distributions.

``chance(p)`` is the accuracy of a guesser that follows the gold-answer distribution
``p`` (class -> probability): ``sum_c p_c^2``. For ``k`` equally likely options this is
``1/k``; for a task whose answer is "no change" half of the time and one of 8 (region,
type) classes otherwise it is ``1/4 + 8/256 = 9/32``.

``critical_accuracy(n, p0)`` is the exact one-sided binomial test threshold: the smallest
``k`` with ``P(X >= k) <= alpha`` for ``X ~ Bin(n, p0)``, as the accuracy ``k / n``.
"""
from __future__ import annotations

import functools
import math
from typing import Mapping


def chance(distribution: Mapping[str, float]) -> float:
    """Accuracy of a guess drawn from the gold-answer ``distribution`` itself."""
    total = sum(distribution.values())
    if not distribution or total <= 0 or any(v < 0 for v in distribution.values()):
        raise ValueError(f"not a distribution: {dict(distribution)!r}")
    return sum((v / total) ** 2 for v in distribution.values())


def _log_pmf(k: int, n: int, p: float) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * math.log(p) + (n - k) * math.log1p(-p)


def upper_tail(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Bin(n, p)``, summed in log space from ``k`` up. Past the mode
    the terms fall at least geometrically, so the sum stops once a term is below 1e-20 of the
    largest (exact in double precision): O(sqrt(n)) terms near the mean, not O(n)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    mode = min(n, int((n + 1) * p))
    m = _log_pmf(max(k, mode), n, p)               # the largest term of the tail
    total, i = 0.0, k
    while i <= n:
        t = math.exp(_log_pmf(i, n, p) - m)
        total += t
        if i > mode and t < 1e-20 * total:
            break
        i += 1
    return min(1.0, math.exp(m) * total)


@functools.lru_cache(maxsize=4096)
def critical_count(n: int, p0: float, alpha: float = 0.05) -> int:
    """Smallest ``k`` with ``P(X >= k | Bin(n, p0)) <= alpha``."""
    if int(n) != n or n <= 0:
        raise ValueError(f"n={n!r} must be a positive integer")
    if not (0.0 < p0 < 1.0) or not (0.0 < alpha < 1.0):
        raise ValueError(f"p0={p0!r} and alpha={alpha!r} must lie strictly between 0 and 1")
    lo, hi = int(n * p0), n + 1          # upper_tail is decreasing in k: bisect
    while upper_tail(lo, n, p0) <= alpha and lo > 0:
        lo = max(0, lo - max(1, lo // 2))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if upper_tail(mid, n, p0) <= alpha:
            hi = mid
        else:
            lo = mid
    return hi


def critical_accuracy(n: int, p0: float, alpha: float = 0.05) -> float:
    """The accuracy a model must reach to beat chance ``p0`` at level ``alpha`` over ``n``
    items; NaN when not even ``n`` of ``n`` does (a few items at a high chance)."""
    k = critical_count(n, p0, alpha)
    return k / n if k <= n else float("nan")


def percent(x: float, digits: int = 2) -> float:
    """``100 * x`` rounded half up to ``digits`` (how results tables print 28.125 as 28.13)."""
    from decimal import ROUND_HALF_UP, Decimal

    return float(Decimal(repr(100 * x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
