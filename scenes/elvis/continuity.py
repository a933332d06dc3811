"""Continuity layouts drawn a batch at a time: objects equally spaced along smooth curves
(centripetal Catmull-Rom splines through a few control points), in arrays over slots
``[B, CURVES, PER_CURVE]`` (curve, position along it); curve ``k`` is group ``k``.

Every sample draws the same number of values whatever its factors, so a sample is the same
in any batch. A principle negative breaks some curves at an interior object (a kink, or a
stretch moved sideways), chosen per negative among candidates that keep the scene's
statistics (:func:`break_curve`, from the sample's own generator): the one part drawn
sample by sample, on compiled kernels.
"""
from __future__ import annotations

import math

import numpy as np

from engine.batched import BatchRandom
from engine.placement import PlacementError
from kernels import outline_stats as ks
from kernels.splines import spline_samples

from .attributes import SIZES
from .batched import Batch, attributes, radii_of, redrawn
from .layouts import CANDIDATES, MIN_DIAMETER, _spread

CURVES = 5                   # one_split_n: a trunk and up to 4 branches
PER_CURVE = 14               # the most objects one curve holds (crossing curves, xl)
PER_SEGMENT = 16             # spline samples between two control points
LARGE = SIZES["large"]
TWIN_OVERLAP = 0.8           # a repeated curve's objects keep this share of the sum of radii from their original's
KINK = (50.0, 80.0)          # degrees the rest of a kinked curve turns at the break
SHIFT = (0.8, 1.6)           # object spacings a misaligned stretch moves sideways


# ---------------------------------------------------------------- curves in arrays

def splines(ctrl: np.ndarray, per: int = PER_SEGMENT) -> np.ndarray:
    """Centripetal Catmull-Rom splines through control points ``ctrl [..., P, 2]`` (``P >=
    3``), a mirrored point added at each end (:func:`kernels.templates.catmull_rom`, many
    curves at once, compiled: :func:`kernels.splines.spline_samples`). Returns ``[...,
    (P - 1) * per + 1, 2]`` samples through every control point."""
    p = np.asarray(ctrl, dtype=np.float64)
    if p.ndim < 2 or p.shape[-1] != 2 or p.shape[-2] < 3:
        raise ValueError(f"splines need control points [..., P >= 3, 2], got shape {p.shape}")
    flat = np.ascontiguousarray(p.reshape((-1,) + p.shape[-2:]))
    return spline_samples(flat, int(per)).reshape(p.shape[:-2] + ((p.shape[-2] - 1) * per + 1, 2))


def arcs(curves: np.ndarray) -> np.ndarray:
    """Arc length at each vertex of polylines ``curves [..., M, 2]``, from 0: ``[..., M]``."""
    d = np.diff(curves, axis=-2)
    seg = np.hypot(d[..., 0], d[..., 1])
    return np.concatenate([np.zeros(seg.shape[:-1] + (1,)), np.cumsum(seg, -1)], -1)


def at_arc(curves: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Points ``[..., N, 2]`` of polylines ``curves [..., M, 2]`` (vertex arc lengths ``s
    [..., M]``) at arc lengths ``t [..., N]``, clamped to the ends (``np.interp`` per row)."""
    M = s.shape[-1]
    i = np.clip((s[..., None, :] <= t[..., :, None]).sum(-1) - 1, 0, M - 2)
    s0, s1 = np.take_along_axis(s, i, -1), np.take_along_axis(s, i + 1, -1)
    w = np.clip((t - s0) / np.maximum(s1 - s0, 1e-15), 0.0, 1.0)[..., None]
    idx = np.broadcast_to(i[..., None], i.shape + (2,))
    a, b = np.take_along_axis(curves, idx, -2), np.take_along_axis(curves, idx + 1, -2)
    return a + w * (b - a)


def resampled(curves: np.ndarray, s: np.ndarray, n: np.ndarray, start, slots: int) -> np.ndarray:
    """``n [...]`` points equally spaced by arc length along each curve, the first ``start``
    from its beginning, the last at its end: ``[..., slots, 2]`` (slots past ``n`` repeat the
    end)."""
    length = s[..., -1]
    j = np.arange(slots)
    share = np.minimum(j / np.maximum(np.asarray(n)[..., None] - 1, 1), 1.0)
    start = np.asarray(start, dtype=np.float64)
    t = start[..., None] + (length - start)[..., None] * share
    return at_arc(curves, s, t)


def nearest_arc(curves: np.ndarray, s: np.ndarray, point) -> np.ndarray:
    """The arc length ``[...]`` of each curve's vertex nearest ``point (2,)``."""
    d = np.hypot(curves[..., 0] - point[0], curves[..., 1] - point[1])
    return np.take_along_axis(s, d.argmin(-1)[..., None], -1)[..., 0]


def normals(curves: np.ndarray, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Unit normals ``[..., N, 2]`` of ``curves`` at arc lengths ``t [..., N]``."""
    tangent = at_arc(curves, s, t + 1e-3) - at_arc(curves, s, t - 1e-3)
    tangent /= np.maximum(np.linalg.norm(tangent, axis=-1, keepdims=True), 1e-15)   # zero past the ends
    return np.stack([-tangent[..., 1], tangent[..., 0]], -1)


def around(length: np.ndarray, n: np.ndarray, at: np.ndarray, hole: np.ndarray, reserve, slots: int) -> tuple:
    """Arc lengths ``[..., slots]`` of ``n`` points along curves ``length`` long (keeping
    ``reserve`` from both ends), equally spaced on either side of the arc length ``at``, the
    nearest ``hole / 2`` from it (one more on the first side when ``n`` is odd), first side
    first. Returns ``(arcs, step)``; a step ``<= 0`` means there is no room."""
    first, second = (n + 1) // 2, n // 2
    step = np.minimum((at - hole / 2 - reserve) / np.maximum(first - 1, 1),
                      (length - at - hole / 2 - reserve) / np.maximum(second - 1, 1))
    j = np.arange(slots)
    lo, hi = (at - hole / 2)[..., None], (at + hole / 2)[..., None]
    f = first[..., None]
    return np.where(j < f, lo - step[..., None] * (f - 1 - j), hi + step[..., None] * (j - f)), step


def through(angle: np.ndarray, half, bend: np.ndarray) -> np.ndarray:
    """Control points ``[..., 5, 2]`` of gently bent curves through the canvas centre at
    ``angle [...]`` degrees, reaching ``half`` each way, bent sideways by ``bend [..., 2]``
    at a fifth of the way out on either side."""
    a = np.radians(angle)
    u = np.stack([np.cos(a), -np.sin(a)], -1)
    nrm = np.stack([np.sin(a), np.cos(a)], -1)
    half = np.asarray(half, dtype=np.float64)[..., None]
    c = np.array([0.5, 0.5])
    b1, b2 = bend[..., 0:1], bend[..., 1:2]
    return np.stack([c - half * u, c - 0.2 * u + b1 * nrm, np.broadcast_to(c, u.shape),
                     c + 0.2 * u + b2 * nrm, c + half * u], -2)


def _pick_of(table: dict, keys: np.ndarray) -> np.ndarray:
    """``[B]``: ``table[key]`` for each of ``keys``."""
    return np.array([table[k] for k in keys])


# ---------------------------------------------------------------- the four categories

LINE_COUNTS = {"s": 4, "m": 6, "l": 7, "xl": 9}
FAN = (0.6, 0.88)            # the span of one_split_n's branch ends (height share)
ONE_SPLIT_BASE = {"s": 0.028, "m": 0.024, "l": 0.02, "xl": 0.017}
CROSSING_COUNTS = {"m": 8, "l": 11, "xl": 14}
CROSSING_HALF = (0.33, 0.44)  # how far each crossing curve reaches from the centre
WAVE_COUNTS = {"s": 6, "m": 9, "l": 12}
OFFSET = 0.03                # how far sideways the repeated curve lies from its original


def non_intersected_splines(rng: BatchRandom, batch: Batch) -> dict:
    """``G`` gentle waves across the canvas, one per horizontal band, ``n`` objects each."""
    return _continuity(rng, batch, _waves)


def intersected_splines(rng: BatchRandom, batch: Batch) -> dict:
    """``G`` curves of varied length crossing at the centre, where no object sits."""
    return _continuity(rng, batch, _crossing)


def overlap_splines(rng: BatchRandom, batch: Batch) -> dict:
    """``G`` curves crossing at the centre, the first repeated a fraction of an object to the
    side with its objects half a step along, between its original's."""
    return _continuity(rng, batch, _overlapping)


def one_split_n(rng: BatchRandom, batch: Batch) -> dict:
    """One line of objects (the trunk, curve 0) that forks into ``G`` branches."""
    return _continuity(rng, batch, _fork)


def _waves(rng: BatchRandom, batch: Batch) -> dict:
    """The curves and object places of non_intersected_splines: a plan for :func:`_objects_on`."""
    B, G = len(batch), batch.groups
    n = _pick_of(WAVE_COUNTS, batch.quantity)
    phase, freq = rng.random(CURVES) * 2 * math.pi, rng.uniform(1.5, 3.5, CURVES)
    k = np.arange(CURVES)
    h = 0.9 / G
    y = 0.05 + h[:, None] * (k + 0.5)
    amp = np.minimum(0.3 * h, 0.12)[:, None, None]
    xs = np.broadcast_to(np.linspace(0.06, 0.94, 5), (B, CURVES, 5))
    ys = y[..., None] + amp * np.sin(phase[..., None] + freq[..., None] * np.linspace(0, 1, 5))
    dense = splines(np.stack([xs, ys], -1))
    count = np.where(k < G[:, None], n[:, None], 0)
    pts = resampled(dense, arcs(dense), count, 0.0, PER_CURVE)
    return dict(dense=dense, pts=pts, count=count, base=None, ok=np.ones(B, bool))


def _crossing(rng: BatchRandom, batch: Batch) -> dict:
    """The curves and object places of intersected_splines: a plan for :func:`_objects_on`."""
    B, G = len(batch), batch.groups
    n = _pick_of(CROSSING_COUNTS, batch.quantity)
    a0, half, bend = rng.random() * 180, rng.uniform(*CROSSING_HALF, CURVES), rng.uniform(-0.04, 0.04, CURVES, 2)
    k = np.arange(CURVES)
    used = k < G[:, None]
    dense = splines(through(a0[:, None] + 180.0 * k / G[:, None], half, bend))
    s = arcs(dense)
    length, at = s[..., -1], nearest_arc(dense, s, (0.5, 0.5))
    # no object on the crossing: the nearest sit far enough out that neighbouring curves'
    # objects do not touch (nothing is hidden); spacing and size settle in a few rounds
    step, ok = 0.82 / (n - 1), np.ones(B, bool)
    for _ in range(3):
        base = np.minimum(0.3 * step, 0.03)
        hole = (2 * LARGE * base + 0.012) / np.sin(np.pi / (2 * G))
        t, steps = around(length, n[:, None], at, hole[:, None], 0.0, PER_CURVE)
        ok &= ((steps > 0) | ~used).all(1)
        step = np.where(used, steps, np.inf).min(1)
    count = np.where(used, n[:, None], 0)
    return dict(dense=dense, pts=at_arc(dense, s, t), count=count, base=base, ok=ok, crossing=True)


def _overlapping(rng: BatchRandom, batch: Batch) -> dict:
    """The curves and object places of overlap_splines: a plan for :func:`_objects_on`."""
    B, G = len(batch), batch.groups
    n = _pick_of(CROSSING_COUNTS, batch.quantity)
    a0, jitter, bend = rng.random() * 180, rng.uniform(-6, 6, CURVES), rng.uniform(-0.04, 0.04, CURVES, 2)
    k = np.arange(CURVES)
    used = k < G[:, None]
    angles = a0[:, None] + 180.0 * k / G[:, None] + jitter
    dense = splines(through(angles, 0.44, bend))
    s = arcs(dense)
    length, at = s[..., -1], nearest_arc(dense, s, (0.5, 0.5))
    diff = np.abs((angles[:, :, None] - angles[:, None, :] + 90) % 180 - 90)
    pair = used[:, :, None] & used[:, None, :] & (k[:, None] > k[None, :])
    cross = np.radians(np.maximum(np.where(pair, diff, np.inf).min((1, 2)), 20.0))
    step, ok = 0.88 / (n - 1), np.ones(B, bool)
    for _ in range(3):
        half = step / 2
        base = np.minimum(np.minimum(0.6 * half, 0.03), 0.85 * np.hypot(half, OFFSET) / (2 * LARGE * TWIN_OVERLAP))
        hole = (2 * LARGE * base + 0.008) / np.sin(cross / 2) + 2 * OFFSET / np.sin(cross)
        reserve = np.where(k == 0, half[:, None], 0.0)
        t, steps = around(length, n[:, None], at, hole[:, None], reserve, PER_CURVE)
        ok &= ((steps > 0) | ~used).all(1)
        step = np.where(used, steps, np.inf).min(1)
    pts = at_arc(dense, s, t)
    # the repeat (curve G): the first curve's objects half a step along, a little to the side
    rows = np.arange(B)
    twin_t = t[:, 0] + np.where(np.arange(PER_CURVE) < ((n + 1) // 2)[:, None], -half[:, None], half[:, None])
    pts[rows, G] = at_arc(dense[:, 0], s[:, 0], twin_t) + OFFSET * normals(dense[:, 0], s[:, 0], twin_t)
    dense[rows, G] = dense[:, 0] + OFFSET * normals(dense[:, 0], s[:, 0], at[:, :1])
    count = np.where(k <= G[:, None], n[:, None], 0)
    return dict(dense=dense, pts=pts, count=count, base=base, ok=ok, crossing=True, twin=G.copy())


def _fork(rng: BatchRandom, batch: Batch) -> dict:
    """The curves and object places of one_split_n: a plan for :func:`_objects_on`."""
    B, G = len(batch), batch.groups
    n = _pick_of(LINE_COUNTS, batch.quantity)
    u = rng.random(6)
    start = np.stack([np.full(B, 0.07), 0.35 + 0.3 * u[:, 0]], -1)
    fork = np.stack([0.2 + 0.06 * u[:, 1], 0.42 + 0.16 * u[:, 2]], -1)
    bow = (start + fork) / 2 + np.stack([np.zeros(B), -0.02 + 0.04 * u[:, 3]], -1)
    trunk = splines(np.stack([start, bow, fork], 1))                          # [B, 33, 2]
    # branches fan out over a varied span, so that how far the objects spread is not a
    # template's (more branches need more room); branch ends of varied length
    low = np.minimum(FAN[0] + 0.08 * (G - 2), FAN[1])
    span = low + (FAN[1] - low) * u[:, 4]
    mid = 0.5 - (FAN[1] - span) / 2 + (FAN[1] - span) * u[:, 5]
    j = np.arange(CURVES - 1)
    branch = j < G[:, None]
    ends_y = mid[:, None] - span[:, None] / 2 + span[:, None] * j / (G[:, None] - 1) + rng.uniform(-0.02, 0.02, 4)
    end = np.stack([rng.uniform(0.78, 0.93, 4), ends_y], -1)                # [B, 4, 2]
    tangent = fork - trunk[:, -4]
    tangent /= np.linalg.norm(tangent, axis=-1, keepdims=True)
    toward = end - fork[:, None]
    toward /= np.linalg.norm(toward, axis=-1, keepdims=True)
    bend = fork[:, None] + (0.15 * tangent[:, None] + 0.85 * toward) * 0.12
    forks = np.broadcast_to(fork[:, None], bend.shape)
    arms = splines(np.stack([forks, bend, (bend + end) / 2 + [0.03, 0.0], end], 2))    # [B, 4, 49, 2]
    heads = np.where(branch, np.arctan2(*(bend - fork[:, None]).transpose(2, 0, 1)[::-1]), 9.0)   # unused: last
    base = _pick_of(ONE_SPLIT_BASE, batch.quantity)
    # branches start where neighbours are far enough apart for two large objects
    gap = np.where(j[:-1] < G[:, None] - 1, np.diff(np.sort(heads, 1), axis=1), np.inf).min(1)
    clear = np.maximum((2 * LARGE * base + 0.012) / (2 * np.sin(gap / 2)), 3 * base)
    s_arms = arcs(arms)
    step = (np.where(branch, s_arms[..., -1] - clear[:, None], 0.0).sum(1) / G) / (n - 1)
    s_trunk = arcs(trunk)
    n_trunk = np.maximum(3, np.round(s_trunk[:, -1] / step).astype(np.int64) + 1)
    dense = np.concatenate([np.concatenate([trunk, np.repeat(trunk[:, -1:], arms.shape[2] - trunk.shape[1], 1)],
                                           1)[:, None], arms], 1)
    lengths = np.full((B, CURVES), arms.shape[2])
    lengths[:, 0] = trunk.shape[1]
    count = np.concatenate([np.minimum(n_trunk, PER_CURVE)[:, None], np.where(branch, n[:, None], 0)], 1)
    start_at = np.concatenate([np.zeros((B, 1)), np.broadcast_to(clear[:, None], (B, CURVES - 1))], 1)
    pts = resampled(dense, arcs(dense), count, start_at, PER_CURVE)
    return dict(dense=dense, pts=pts, count=count, base=base, ok=n_trunk <= PER_CURVE, keep=0, lengths=lengths)


# ---------------------------------------------------------------- objects, breaks, checks

def _continuity(rng: BatchRandom, batch: Batch, curves) -> dict:
    """The layout of a continuity category whose plan ``curves(rng, batch)`` gives (objects
    placed, broken and checked by :func:`_objects_on`, redrawn where a draw fails), with the
    curves and breaks described per sample."""
    out = redrawn(rng, batch, lambda r, b: _objects_on(r, b, curves(r, b)))
    trunk = batch.category == "one_split_n"

    def describe(b: int) -> dict:
        n_curves = int(out["curves"][b])
        info = {"curves": [np.round(cv[:int(m)][:: max(1, int(m) // 24)], 4).tolist()
                           for cv, m in zip(out["dense"][b, :n_curves], out["lengths"][b, :n_curves])],
                "breaks": list(out["breaks"][b] or [])}
        return {**info, "trunk_group": 0} if trunk else info
    hidden = ("dense", "lengths", "breaks", "curves")
    return {**{k: v for k, v in out.items() if k not in hidden}, "describe": describe}


def _objects_on(rng: BatchRandom, batch: Batch, plan: dict) -> tuple[dict, np.ndarray]:
    """Objects on the planned curves (``plan``: ``dense [B,C,M,2]`` curves, ``pts
    [B,C,N,2]`` and ``count [B,C]`` the objects' places, ``base`` their size or ``None`` for
    a third of the spacing, ``ok``; optional ``twin`` curve repeating curve 0, ``keep`` curve
    never broken, ``crossing`` at the centre). Draws attributes, breaks the curves of
    principle negatives and checks that no two objects touch and all stay inside. Returns
    ``(layout, ok [B])``: slot arrays ``[B,C,N]`` and what the description needs."""
    B, C, N = plan["pts"].shape[:3]
    count, ok = plan["count"], plan["ok"].copy()
    live = np.arange(N) < count[..., None]                                   # [B,C,N]
    pts = np.where(live[..., None], plan["pts"], 0.0)
    seg = np.hypot(*np.diff(pts, axis=2).transpose(3, 0, 1, 2))
    spacing = np.where(live[..., 1:], seg, np.inf).min((1, 2))
    base = plan["base"]
    base = np.minimum(0.3 * spacing, 0.03) if base is None else np.minimum(base, (spacing - 0.006) / (2 * LARGE))
    ok &= 2 * base * SIZES["small"] >= MIN_DIAMETER
    n_curves = (count > 0).sum(1)
    flat = live.reshape(B, -1)
    order = np.argsort(~flat, axis=1, kind="stable")                          # live objects first
    group = np.broadcast_to(np.arange(C)[:, None], (C, N)).reshape(-1)[order]
    a = attributes(rng, batch, group, np.take_along_axis(flat, order, 1), n_curves, CURVES)
    back = np.argsort(order, axis=1)
    a = {p: np.take_along_axis(v, back, 1).reshape(B, C, N) for p, v in a.items()}
    r = radii_of(a["size"].reshape(B, -1), a["shape"].reshape(B, -1), base).reshape(B, C, N)
    rng.drawn += 1
    twin = plan.get("twin")
    breaks = np.full(B, None, dtype=object)
    overlaps = np.zeros((B, C, N), bool)
    keys = rng.fork(0).keys
    for b in range(B):
        if not ok[b]:
            continue
        curves = [pts[b, c, :count[b, c]].copy() for c in range(int(n_curves[b]))]
        twins = {} if twin is None else {int(twin[b]): 0}
        if not batch.principle[b]:
            gen = np.random.Generator(np.random.Philox(key=int(keys[b])))
            try:
                breaks[b] = _break_some(gen, curves, float(spacing[b]), twins, plan.get("keep"),
                                        (0.5, 0.5) if plan.get("crossing") else None)
            except PlacementError:
                ok[b] = False
                continue
            for c, cv in enumerate(curves):
                pts[b, c, :len(cv)] = cv
        ok[b] &= _clear(curves, r[b], twins, overlaps[b] if twins else None)
    ok &= (((pts - r[..., None] >= 0.0) & (pts + r[..., None] <= 1.0)).all(-1) | ~live).all((1, 2))
    got = {"valid": live, "center": pts, "radius": r, "rotation": np.zeros((B, C, N)), **a,
           "dense": plan["dense"], "curves": n_curves, "breaks": breaks,
           "lengths": plan.get("lengths", np.full((B, C), plan["dense"].shape[2]))}
    if twin is not None:
        got["extra"] = {"overlaps": overlaps}
    return got, ok


def _clear(curves: list, r: np.ndarray, twins: dict, overlaps: np.ndarray | None) -> bool:
    """Whether no two objects of different curves touch (a repeated curve's objects may
    overlap their original's a little), filling ``overlaps [C,N]`` with which objects
    overlap another. ``r [C,N]``: the objects' radii."""
    c = np.concatenate(curves)
    rad = np.concatenate([r[k, :len(cv)] for k, cv in enumerate(curves)])
    curve_of = np.repeat(np.arange(len(curves)), [len(cv) for cv in curves])
    paired = np.zeros((len(curves), len(curves)), dtype=bool)
    for t, o in twins.items():
        paired[t, o] = paired[o, t] = True
    if ks.curves_touch(c, rad, curve_of, paired, TWIN_OVERLAP, 0.003):
        return False
    if overlaps is not None:
        each = np.empty(len(c), dtype=bool)
        ks.overlapping_each(c, rad, each)
        at = np.cumsum([0] + [len(cv) for cv in curves])
        for k in range(len(curves)):
            overlaps[k, :at[k + 1] - at[k]] = each[at[k]:at[k + 1]]
    return True


def _break_some(gen: np.random.Generator, pts: list, spacing: float, twins: dict, keep, crossing,
                kinds=("kink", "misaligned")) -> list[dict]:
    """Break a random non-empty set of the curves ``pts`` (each ``(n, 2)``, changed in place),
    never the ``keep`` curve nor one that repeats another (``twins``: repeat -> original,
    broken together with its original); a curve with no room to break hands its break to
    the next one that has. Returns each break's ``{"curve", "kind", "at", ...}``."""
    alone = [k for k in range(len(pts)) if k not in twins and k != keep]
    hit = {g for g in range(len(alone)) if gen.random() < 0.5} or {int(gen.integers(len(alone)))}
    chosen = sorted(hit)
    breaks = []
    for i in chosen + [i for i in range(len(alone)) if i not in chosen]:
        if len(breaks) == len(chosen):
            break
        k = alone[i]
        pair = [k] + [t for t, o in twins.items() if o == k]
        others = np.concatenate([p for j, p in enumerate(pts) if j not in pair] or [np.zeros((0, 2))])
        try:
            moved, how = break_curve(gen, [pts[j] for j in pair], spacing, others, kinds,
                                     None if crossing is None else np.asarray(crossing))
        except PlacementError:
            continue
        for j, m in zip(pair, moved):
            pts[j] = m
        breaks.append({"curve": k, **how})
    if not breaks:
        raise PlacementError("no curve has room to break")
    return breaks


def _median(v: np.ndarray) -> float:
    """``float(np.median(v))`` of a 1-D float array (numpy's costs about 60 us a call, more
    than all of a break's candidates): the middle of the sorted values, or the mean of the
    two middle ones as numpy takes it (their sum over 2). Where that could differ (no
    values, NaN, a zero in the middle, whose sign depends on the order) numpy decides."""
    s = np.sort(v)
    k = len(s) // 2
    if len(s) == 0 or np.isnan(s[-1]) or s[k] == 0 or s[k - 1] == 0:      # numpy sorts NaN last
        return float(np.median(v))
    return float(s[k]) if len(s) % 2 else float((s[k - 1] + s[k]) / 2)


def break_curve(rng: np.random.Generator, curves: list, spacing: float, others: np.ndarray,
                kinds=("kink", "misaligned"), crossing=None) -> tuple[list, dict]:
    """``curves``: one curve's points ``(n, 2)``, equally spaced along it (and any repeats
    of it, broken alike), with the continuation broken at an interior object: either the
    rest turns by a sharp angle there (a kink) or it moves sideways off the curve (a
    misaligned stretch). Object count and spacing stay the same. Of several candidate
    breaks that keep the moved objects on the canvas and clear of ``others`` (the other
    curves' objects; no nearer than before where a curve starts close to another), the one
    that changes least the number of overlapping objects, then the spread of all centres,
    is kept, so that the scene's statistics stay those of a positive. Returns the broken
    curves and ``{"kind", "at", ...}``."""
    pts = curves[0]
    n = len(pts)
    if n < 4:
        raise PlacementError("a curve this short cannot be broken")

    steps = np.hypot(*np.diff(pts, axis=0).T)
    own = _median(steps)                                        # this curve's spacing (``spacing``: the smallest)
    gap = set(np.nonzero(steps > 1.3 * own)[0].tolist())        # the free stretch where curves cross: never broken
    if crossing is not None:                                    # (found by where it is, however short)
        gap.add(int(np.hypot(*((pts[:-1] + pts[1:]) / 2 - crossing).T).argmin()))
    both = np.concatenate(list(curves) + [others])
    close, target = ks.close_pairs(both, 0.6 * spacing), _spread(both)
    flat = np.concatenate(curves)
    bounds = np.cumsum([0] + [len(c) for c in curves]).astype(np.int64)
    others = np.ascontiguousarray(others, dtype=np.float64)
    tries = []                                                  # (at, first side, kind, size, tangent) of each
    for _ in range(CANDIDATES):                                 # drawn first: the draws never depend on a result
        at = int(rng.integers(n // 3, max(n // 3 + 1, n - n // 3)))
        if at in gap or at - 1 in gap:
            continue
        tangent = pts[min(at + 1, n - 1)] - pts[at - 1]
        tangent /= math.sqrt(tangent.dot(tangent))
        first = 1 if rng.random() < 0.5 else -1
        kind = kinds[int(rng.integers(len(kinds)))]
        tries.append((at, first, kind, float(rng.uniform(*(KINK if kind == "kink" else SHIFT))), tangent))
    if not tries:
        raise PlacementError("no break keeps clear of the other curves")
    at, first, kind, size, tangent = zip(*tries)
    # each tried both ways (one turns the rest in, the other out), in one compiled call
    i, side, every = ks.best_break(flat, bounds, others, np.array(at, np.int64), np.array(first, np.int64),
                                   np.array([k == "kink" for k in kind]), np.array(size), np.array(tangent), own,
                                   spacing, close, target, KINK[0], 0.04, 0.96)
    if i < 0:
        raise PlacementError("no break keeps clear of the other curves")
    how = ({"kind": "kink", "at": at[i], "angle": round(size[i] * side, 1)} if kind[i] == "kink" else
           {"kind": "misaligned", "at": at[i], "shift": round(size[i] * own, 4)})
    return [every[a:b] for a, b in zip(bounds[:-1], bounds[1:])], how
