"""ELVIS layouts drawn a whole batch at once: every sample's draws come from its own key
(:class:`engine.batched.BatchRandom`), in arrays over the batch, with no per-object Python.

Samples of different tasks of one category share a call: each task's factors arrive as
arrays (:class:`Batch`). A function draws the same number of values for every sample
whatever its factors (the largest count the category allows), so a sample is the same in
any batch. A sample whose layout fails (a disc finds no room, a negative still looks like
a positive) is redrawn from its own forked stream.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from engine.batched import BatchRandom, Region, in_box, in_sector, place_once
from engine.placement import PlacementError

from . import geometry as geo
from .attributes import BACKGROUND, NEAR, SIZES, SHAPES, colour_pool, far_from, named_colours
from .factors import CATEGORIES
from .layouts import CANONICAL_AXES, _NARROWEST

ATTEMPTS = 80            # redraws of a failing sample, as the one-at-a-time layouts allow
CANDIDATES = 400         # proposals per disc in one placement attempt (drawn only as far as the first fit)
CENTRE = 0.5


@dataclass
class Batch:
    """The factors of ``B`` samples of one category: ``mode[prop]`` ``[B]`` strings
    (``relevant``/``irrelevant``/``random``), ``groups`` and ``quantity`` ``[B]``,
    ``principle`` ``[B]`` bool (the Gestalt relation kept) and ``broken[prop]`` ``[B]`` bool
    (an attribute negative breaks that relevant property)."""

    category: str
    mode: dict
    groups: np.ndarray
    quantity: np.ndarray
    principle: np.ndarray
    broken: dict
    qualifier: np.ndarray

    def __len__(self) -> int:
        return len(self.groups)

    def take(self, rows: np.ndarray) -> "Batch":
        """The samples ``rows`` only."""
        return Batch(self.category, {p: m[rows] for p, m in self.mode.items()}, self.groups[rows],
                     self.quantity[rows], self.principle[rows], {p: b[rows] for p, b in self.broken.items()},
                     self.qualifier[rows])


def broken_props(rng: BatchRandom, category: str, rel: list, attribute: np.ndarray) -> dict:
    """Per relevant property of ``category``, whether each sample breaks it: attribute
    negatives (``attribute [B]``) break each relevant property with probability 1/2, and one
    of them when the coins spare all.
    ``rel``: each sample's relevant properties. Returns ``{prop: [B] bool}``."""
    props = CATEGORIES[category].props
    coins, fallback = rng.random(len(props)), rng.random()
    out = {p: np.zeros(len(rel), bool) for p in props}
    for b, (r, neg) in enumerate(zip(rel, attribute)):
        if not neg:
            continue
        chosen = [p for k, p in enumerate(props) if p in r and coins[b, k] < 0.5]
        for p in chosen or [r[int(fallback[b] * len(r))]]:
            out[p][b] = True
    return out


# ---------------------------------------------------------------- attributes

@functools.lru_cache(maxsize=None)
def _values(prop: str, allowed: tuple, behind: tuple) -> tuple[tuple, tuple, tuple]:
    """``(pool, ok, bad)`` of ``prop`` over the colours ``behind``: every value (colours
    that stay visible on each), the allowed ones (those in the pool, else as given) and those
    clearly not allowed."""
    pool = {"shape": SHAPES, "size": tuple(SIZES), "color": colour_pool(behind)}[prop]
    ok = tuple(v for v in allowed if v in pool) or tuple(allowed)
    return tuple(pool), ok, tuple(far_from(pool, ok, prop) if ok else pool)


def _pick(u: np.ndarray, n) -> np.ndarray:
    """Indices ``floor(u * n)`` (``n`` a count or an array broadcasting with ``u``)."""
    return np.minimum((u * n).astype(np.int64), np.asarray(n) - 1)


def unit_attributes(rng: BatchRandom, batch: Batch, n: np.ndarray, slots: int, behind=(BACKGROUND,)) -> dict:
    """:func:`attributes` of up to ``slots`` objects per sample, ``n [B]`` of them in use,
    each its own group taking its own values (the symmetry categories' units: an arm
    position, a mirror pair)."""
    live = np.arange(slots)[None, :] < n[:, None]
    units = np.broadcast_to(np.arange(slots)[None, :], live.shape)
    return attributes(rng, batch, units, live, n, slots, per_group=("shape", "color", "size"), behind=behind)


def attributes(rng: BatchRandom, batch: Batch, group: np.ndarray, live: np.ndarray, ng: np.ndarray, width: int,
               per_group=(), cue: str | None = None, behind=(BACKGROUND,), rule=None) -> dict:
    """Shape, colour and size of objects ``[B,K]`` (``live`` ones first, object ``k`` in
    group ``group[b,k] < ng[b] <= width``; ``width`` is the category's most groups, so that
    every sample draws alike), by these rules: a relevant property takes the allowed values
    (cycling by group where it is set per group, drawn among them per object otherwise) and,
    where broken, gives a random non-empty set of groups values clearly not allowed; an
    irrelevant one takes one value per image; any other is drawn per group (``per_group``)
    or per object, with at least two different values. The ``cue`` property takes clearly
    different values per group (the allowed ones when relevant). Colours stay visible on
    every colour ``behind``. ``rule [B,K]`` (default: all): the objects the rule speaks of;
    the others take any value of a relevant property. Returns ``{prop: [B,K]}`` names (object arrays)."""
    B, K = live.shape
    G = width
    n = live.sum(1)
    allowed = CATEGORIES[batch.category].values
    out = {}
    for prop in ("shape", "color", "size"):
        pool, ok, bad = _values(prop, tuple(allowed.get(prop) or ()), tuple(behind))
        mode = batch.mode.get(prop, np.full(B, "fixed"))
        grouped = prop == cue or prop in per_group
        units, count = (G, ng) if grouped else (K, n)
        at = group if grouped else np.broadcast_to(np.arange(K)[None, :], (B, K))
        u_unit, u_img, u_fix = rng.random(units), rng.random(), rng.random(2)
        u_hit, u_hit1, u_bad = rng.random(G), rng.random(), rng.random(units)
        vals = _varied(_pick(u_unit, len(pool)), count, u_fix, len(pool))            # random
        vals[mode == "irrelevant"] = _pick(u_img, len(pool))[mode == "irrelevant", None]
        relevant = mode == "relevant"
        if ok:
            cycle = np.arange(units) % len(ok) if grouped else _pick(u_unit, len(ok))
            vals[relevant] = np.broadcast_to(_index(pool, ok)[cycle], vals.shape)[relevant]
        vals[mode == "fixed"] = pool.index(ok[0]) if ok else 0
        if rule is not None:                              # objects the rule does not speak of: any value
            free = _pick(rng.random(K), len(pool))
            vals = np.where(relevant[:, None] & ~rule, free, vals) if not grouped else vals
        hit = (u_hit < 0.5) & (np.arange(G)[None, :] < ng[:, None])              # the broken groups
        none = ~hit.any(1)
        hit[none, _pick(u_hit1, ng)[none]] = True
        hit &= (relevant & batch.broken.get(prop, np.zeros(B, bool)))[:, None]
        if prop == cue:
            cued = ~relevant & (mode != "fixed")
            vals[cued] = _distinct(rng.random(len(pool)), _far(prop, pool), ng, G)[cued]
            keep = np.where(~hit, vals, -1)
            new = _distinct(rng.random(len(pool)), _far(prop, pool), hit.sum(1), G, avoid=keep,
                            allowed=np.isin(np.arange(len(pool)), _index(pool, bad)))
            slot = np.cumsum(hit, 1) - 1                                          # the k-th hit group takes new[k]
            vals = np.where(hit, np.take_along_axis(new, np.maximum(slot, 0), 1), vals)
        else:
            where = hit if grouped else np.take_along_axis(hit, group, 1) & (True if rule is None else rule)
            vals = np.where(where, _index(pool, bad)[_pick(u_bad, len(bad))] if bad else vals, vals)
        out[prop] = np.asarray(pool, dtype=object)[np.take_along_axis(vals, at, 1) if grouped else vals]
    return out


def _index(pool: tuple, values) -> np.ndarray:
    """Positions of ``values`` in ``pool``."""
    return np.array([pool.index(v) for v in values], dtype=np.int64)


def _varied(vals: np.ndarray, count: np.ndarray, u: np.ndarray, size: int) -> np.ndarray:
    """``vals [B,U]`` (indices into a pool of ``size``) with at least two different values
    among the first ``count[b]`` where ``count >= 2``: when all agree, one of them (``u[:,0]``)
    takes another value (``u[:,1]``)."""
    U = vals.shape[1]
    used = np.arange(U)[None, :] < count[:, None]
    same = ((vals == vals[:, :1]) | ~used).all(1) & (count >= 2)
    rows = np.nonzero(same)[0]
    other = _pick(u[rows, 1], size - 1)
    vals[rows, _pick(u[rows, 0], count[rows])] = other + (other >= vals[rows, 0])   # the pool without that value
    return vals


@functools.lru_cache(maxsize=None)
def _far(prop: str, pool: tuple) -> np.ndarray:
    """``[P,P]`` bool: which values of ``pool`` clearly differ (colours: by RGB distance)."""
    if prop != "color":
        return ~np.eye(len(pool), dtype=bool)
    rgb = np.array([named_colours()[c] for c in pool], dtype=np.float64)
    return np.linalg.norm(rgb[:, None] - rgb[None], axis=-1) >= NEAR


def _distinct(u: np.ndarray, far: np.ndarray, k: np.ndarray, width: int, avoid=None, allowed=None) -> np.ndarray:
    """``k[b]`` pairwise clearly different values per sample (indices into a pool with
    clear-difference matrix ``far [P,P]``), taken greedily in the random order of ``u [B,P]``,
    clearly different from ``avoid [B,*]`` (``-1``: nothing) and among ``allowed [P]``:
    ``[B, width]``, ``-1`` past ``k``. Raises ``ValueError`` when the pool holds too few."""
    B, P = u.shape
    order = np.argsort(u, axis=1, kind="stable")
    blocked = np.zeros((B, P), bool) if allowed is None else np.broadcast_to(~allowed, (B, P)).copy()
    if avoid is not None:
        for j in range(avoid.shape[1]):
            a = avoid[:, j]
            blocked[a >= 0] |= ~far[a[a >= 0]]
    out = np.full((B, width), -1)
    got = np.zeros(B, np.int64)
    rows = np.arange(B)
    for step in range(P):
        if (got >= k).all():                                 # every sample has its values: the rest would take none
            break
        c = order[:, step]
        take = (got < k) & ~blocked[rows, c]
        out[rows[take], got[take]] = c[take]
        got += take
        blocked[take] |= ~far[c[take]]
    if (got < k).any():
        raise ValueError(f"fewer than {int(k.max())} clearly different values")
    return out


def group_sizes(rng: BatchRandom, batch: Batch, lo: np.ndarray, hi: np.ndarray, width: int) -> np.ndarray:
    """Objects per group ``[B, width]`` (0 past each sample's group count), within
    ``lo..hi [B]``, following the ``count`` mode: relevant,
    the middle of the range in every group, and where broken some groups another count
    (``max(2, lo - 1) .. hi + 1``) with at least one group kept; irrelevant, one count per
    image; random, one per group, not all equal; a category without a count property draws
    one per group freely."""
    B = len(batch)
    G = batch.groups
    used = np.arange(width)[None, :] < G[:, None]
    per_group = rng.integers(lo, hi + 1, width)
    one = rng.integers(lo, hi + 1)
    u_hit, u_hit1, u_other = rng.random(width), rng.random(), rng.random(width)
    mode = batch.mode.get("count", np.full(B, "free"))
    sizes = per_group.copy()
    same = ((sizes == sizes[:, :1]) | ~used).all(1) & (mode == "random")
    sizes[same, 0] = np.where(sizes[same, 0] != lo[same], lo[same], hi[same])
    sizes[mode == "irrelevant"] = one[mode == "irrelevant", None]
    rel = mode == "relevant"
    middle = (lo + hi) // 2
    sizes[rel] = middle[rel, None]
    hit = (u_hit < 0.5) & used
    none = ~hit.any(1)
    hit[none, _pick(u_hit1, G)[none]] = True
    hit &= (rel & batch.broken.get("count", np.zeros(B, bool)))[:, None]
    low = np.maximum(2, lo - 1)
    other = low[:, None] + _pick(u_other, (hi + 2 - low - 1)[:, None])           # low .. hi+1 without the middle
    other = other + (other >= middle[:, None])
    sizes = np.where(hit, other, sizes)
    kept = hit.any(1) & ((sizes == sizes[:, :1]) | ~used).all(1)                   # every hit group moved alike
    first_hit = np.argmax(hit, 1)
    sizes[kept, first_hit[kept]] = middle[kept]
    return np.where(used, sizes, 0)


def grouped_slots(rng: BatchRandom, batch: Batch, counts: dict, groups: int, slots: int) -> tuple:
    """Objects of ``groups`` groups sized by :func:`group_sizes` within ``counts[quantity]``,
    laid out in ``slots`` slots group by group: ``(sizes [B,groups], n [B], live [B,slots],
    group [B,slots])`` (dead slots in the last group)."""
    lo = np.array([counts[q][0] for q in batch.quantity])
    hi = np.array([counts[q][1] for q in batch.quantity])
    sizes = group_sizes(rng, batch, lo, hi, groups)
    n = sizes.sum(1)
    live = np.arange(slots)[None, :] < n[:, None]
    group = np.minimum((np.arange(slots)[None, :, None] >= np.cumsum(sizes, 1)[:, None, :]).sum(2), groups - 1)
    return sizes, n, live, group


def radii_of(sizes: np.ndarray, shapes: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Bounding-disc radii ``[B,N]`` of objects of size classes and shapes ``[B,N]`` at
    ``base [B]``: ``max(base * SIZES[size], the least radius the shape's narrowest side allows)``."""
    scale = looked_up(sizes, SIZES.__getitem__, np.float64)
    least = looked_up(shapes, _NARROWEST.__getitem__, np.float64)
    return np.maximum(base[:, None] * scale, least)


# ---------------------------------------------------------------- geometry

def in_wedge(a0, width, inner: float, outer: float) -> Region:
    """Centres inside the annular sector ``inner .. outer`` around the canvas centre between
    angles ``a0`` and ``a0 + width`` (degrees; numbers, ``[B]`` or ``[B,K]``)."""
    return in_sector(CENTRE, CENTRE, inner, outer, a0, width)


def turned(points: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    """``points [B,N,2]`` turned counter-clockwise on screen by ``degrees [B]`` about the
    canvas centre."""
    a = np.radians(degrees)[:, None]
    c, s = np.cos(a), np.sin(a)
    x, y = points[..., 0] - CENTRE, points[..., 1] - CENTRE
    return np.stack([CENTRE + c * x + s * y, CENTRE - s * x + c * y], -1)


def axis_angle(rng: BatchRandom, batch: Batch, allowed: float, alternative: np.ndarray) -> np.ndarray:
    """The axis (degrees) ``[B]`` following the ``axis`` mode: the allowed one when relevant
    (``alternative`` where broken), one of the canonical axes when irrelevant, any angle in
    ``[0, 180)`` otherwise."""
    u = rng.random()
    mode = batch.mode["axis"]
    out = u * 180.0
    out = np.where(mode == "irrelevant", np.asarray(CANONICAL_AXES, np.float64)[_pick(u, len(CANONICAL_AXES))], out)
    return np.where(mode == "relevant", np.where(batch.broken["axis"], alternative, float(allowed)), out)


# ---------------------------------------------------------------- radial symmetry

ARM_COUNTS = {"s": (2, 4), "m": (5, 8)}      # objects per arm by quantity class
ARM_BASE = {"s": 0.034, "m": 0.025}
ARMS = max(CATEGORIES["radial_symmetry"].groups)
PER_ARM = max(hi for _, hi in ARM_COUNTS.values())


def radial_symmetry(rng: BatchRandom, batch: Batch) -> dict:
    """Radial symmetry: ``G`` identical arms at equal angles around the centre; a principle
    negative keeps the first arm and puts the same objects anywhere else in each other
    arm's wedge. Returns arrays over ``[B, ARMS, PER_ARM]`` slots (arm, position in arm):
    ``shape``, ``color``, ``size`` (names), ``radius``, ``center [...,2]``, ``rotation``
    (degrees), ``valid``, ``extra`` (``arm_index``), and per sample ``axis``, ``arms``,
    ``per_arm``."""
    return redrawn(rng, batch, _radial_once)


def redrawn(rng: BatchRandom, batch: Batch, once) -> dict:
    """``once(rng, batch) -> (layout, ok [B])`` for every sample, each failing sample drawn
    again from its own fork (up to :data:`ATTEMPTS` times): the layout (a dict of ``[B,
    ...]`` arrays, ``extra`` a dict of them, ``under`` an optional backdrop disc)."""
    B = len(batch)
    out: dict = {}
    todo = np.arange(B)
    rng.drawn += 1

    def put(into: dict, got: dict, ok: np.ndarray) -> None:
        for key, value in got.items():
            if isinstance(value, dict):
                put(into.setdefault(key, {}), value, ok)
                continue
            if key not in into:
                into[key] = np.zeros((B,) + value.shape[1:], value.dtype)
            into[key][todo[ok]] = value[ok]
    for attempt in range(ATTEMPTS):
        got, ok = once(rng.take(todo).fork(attempt), batch.take(todo))
        put(out, got, ok)
        todo = todo[~ok]
        if len(todo) == 0:
            return out
    raise PlacementError(f"{batch.category}: no valid layout in {ATTEMPTS} attempts for {len(todo)} samples")


def _radial_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    B, G = len(batch), batch.groups
    lo = np.array([ARM_COUNTS[q][0] for q in batch.quantity])
    hi = np.array([ARM_COUNTS[q][1] for q in batch.quantity])
    n = rng.integers(lo, hi + 1)
    step = 360.0 / G
    allowed = CATEGORIES["radial_symmetry"].values["axis"][0]
    phi = axis_angle(rng, batch, allowed, allowed + step / 2)
    a = unit_attributes(rng, batch, n, PER_ARM)
    r = radii_of(a["size"], a["shape"], np.array([ARM_BASE[q] for q in batch.quantity]))
    live = np.arange(PER_ARM)[None, :] < n[:, None]
    arm0, ok = place_once(rng, r, live, in_wedge(phi - step / 2, step, 0.04, 0.47), 0.012, CANDIDATES)
    rot0 = rng.random(PER_ARM) * 360.0
    centres = np.zeros((B, ARMS, PER_ARM, 2))
    rng.drawn += 1                                           # the negatives' arms draw from forks of their own
    for k in range(ARMS):
        centres[:, k] = turned(arm0, step * k)
        moved = np.nonzero(~batch.principle & (G > k) & (k > 0))[0]
        if len(moved):                                       # a principle negative's other arms: placed anew
            sub, s = rng.take(moved).fork(k), step[moved]
            again, fits = place_once(sub, r[moved], live[moved], in_wedge(phi[moved] + s * k - s / 2, s, 0.04, 0.47),
                                     0.012, CANDIDATES)
            centres[moved, k] = again
            ok[moved] &= fits
    back = turned(centres[:, 1], -step)
    far = np.where(live, np.hypot(*(back - arm0).transpose(2, 0, 1)), 0.0).max(1)
    ok &= batch.principle | (far >= 2 * np.where(live, r, 0.0).max(1))      # a negative's arms must differ
    arm = np.arange(ARMS)[None, :, None]
    valid = (arm < G[:, None, None]) & live[:, None, :]
    rotation = (rot0[:, None, :] + step[:, None, None] * arm) % 360
    got = {"valid": valid, "center": centres, "rotation": rotation,
           "radius": np.broadcast_to(r[:, None, :], valid.shape).copy(),
           **{p: np.broadcast_to(v[:, None, :], valid.shape).copy() for p, v in a.items()},
           "extra": {"arm_index": np.broadcast_to(np.arange(PER_ARM)[None, None, :], valid.shape).copy()},
           "axis": phi % 360, "arms": G.copy(), "per_arm": n}
    return got, ok


# ---------------------------------------------------------------- axis symmetry

AXIS_DISC = (112, 128, 144)   # the central disc of axis_symmetry_with_bkg
PAIR_COUNTS = {"s": (1, 3), "m": (3, 4), "l": (5, 6), "xl": (6, 7)}
PAIR_BASE = {"s": 0.085, "m": 0.06, "l": 0.048, "xl": 0.04}
MAX_PAIRS = 7                 # the paper's symmetry scenes hold 2-7 groups (a mirror pair, or an object on the axis)


def axis_symmetry(rng: BatchRandom, batch: Batch) -> dict:
    """Mirror pairs across an axis through the centre (see :func:`mirrored`)."""
    return redrawn(rng, batch, functools.partial(_mirrored_once, with_disc=False))


def axis_symmetry_with_bkg(rng: BatchRandom, batch: Batch) -> dict:
    """Mirror pairs across an axis through a central backdrop disc (see :func:`mirrored`)."""
    return redrawn(rng, batch, functools.partial(_mirrored_once, with_disc=True))


def mirrored(points: np.ndarray, degrees: np.ndarray) -> np.ndarray:
    """``points [B,N,2]`` mirrored across the line through the canvas centre at ``degrees [B]``
    (counter-clockwise on screen)."""
    a = np.radians(degrees)
    u = np.stack([np.cos(a), -np.sin(a)], -1)[:, None, :]             # the axis's direction (y down)
    p = points - CENTRE
    return CENTRE + 2 * (p * u).sum(-1, keepdims=True) * u - p


def _mirrored_once(rng: BatchRandom, batch: Batch, with_disc: bool) -> tuple[dict, np.ndarray]:
    """One draw of :func:`axis_symmetry`: 1-7 pairs (by quantity class), an object on the axis
    with some of them, the left partners placed on one side of the axis and mirrored; a
    principle negative places the right partners anywhere on the other side, at least half
    of them clearly away from the mirror image. Slots ``[B, 3, MAX_PAIRS]``: left partners,
    right partners, the object on the axis (first slot)."""
    B, P = len(batch), MAX_PAIRS
    lo = np.array([PAIR_COUNTS[q][0] for q in batch.quantity])
    hi = np.array([PAIR_COUNTS[q][1] for q in batch.quantity])
    pairs = rng.integers(lo, hi + 1)
    on_axis = np.where(pairs == 1, 1, np.where(pairs == P, 0, (rng.random() < 0.5).astype(np.int64)))
    allowed = float(CATEGORIES[batch.category].values["axis"][0])
    others = np.array([a for a in CANONICAL_AXES if a != allowed], np.float64)
    theta = axis_angle(rng, batch, allowed, others[_pick(rng.random(), len(others))])
    disc_radius = 0.2 + rng.random() * 0.08
    behind = (BACKGROUND, AXIS_DISC) if with_disc else (BACKGROUND,)
    a = unit_attributes(rng, batch, pairs + on_axis, P + 1, behind)
    r = radii_of(a["size"], a["shape"], np.array([PAIR_BASE[q] for q in batch.quantity]))
    rows = np.arange(B)
    a_axis = {p: v[rows, pairs] for p, v in a.items()}                    # unit ``pairs``: the object on the axis
    r_axis = r[rows, pairs]
    u = np.stack([np.cos(np.radians(theta)), -np.sin(np.radians(theta))], -1)
    on = CENTRE + (-0.25 + rng.random() * 0.5)[:, None] * u                # along the axis
    fixed = np.concatenate([on, np.where(on_axis == 1, r_axis, -1.0)[:, None]], -1)[:, None, :]
    live = np.arange(P)[None, :] < pairs[:, None]
    left, ok = place_once(rng, r[:, :P], live, in_wedge(theta, np.full(B, 180.0), 0.0, 0.47), 0.02, CANDIDATES,
                          fixed)
    right = mirrored(left, theta)
    rot_left = rng.random(P) * 360.0
    rot_right = (2 * theta[:, None] + 180 - rot_left) % 360
    rng.drawn += 1                                     # a principle negative's right side: a fork of its own
    neg = np.nonzero(~batch.principle)[0]
    if len(neg):
        sub = rng.take(neg).fork(0)
        both = np.concatenate([fixed[neg], np.concatenate([left[neg], np.where(live[neg], r[neg, :P], -1.0)[..., None]],
                                                         -1)], 1)
        moved, fits = place_once(sub, r[neg, :P], live[neg], in_wedge(theta[neg] + 180, np.full(len(neg), 180.0),
                                                                     0.0, 0.47), 0.02, CANDIDATES, both)
        off = np.hypot(*(moved - right[neg]).transpose(2, 0, 1))
        away = ((off > 2 * r[neg, :P]) & live[neg]).sum(1) >= np.maximum(1, pairs[neg] // 2)
        ok[neg] &= fits & away
        right[neg] = moved
        rot_right[neg] = sub.random(P) * 360.0
    first = np.arange(P)[None, :] == 0
    valid = np.stack([live, live, first & (on_axis == 1)[:, None]], 1)
    centre = np.stack([left, right, np.broadcast_to(on[:, None, :], left.shape)], 1)
    rotation = np.stack([rot_left, rot_right, np.broadcast_to(((theta - 90) % 360)[:, None], rot_left.shape)], 1)

    def per_slot(v, at_axis):
        return np.stack([v[:, :P], v[:, :P], np.broadcast_to(at_axis[:, None], (B, P))], 1)
    pair = np.empty((B, 3, P), dtype=object)
    pair[:, :2] = np.arange(P)
    got = {"valid": valid, "center": centre, "rotation": rotation, "radius": per_slot(r, r_axis),
           **{p: per_slot(v, a_axis[p]) for p, v in a.items()}, "extra": {"pair": pair},
           "axis": theta, "pairs": pairs, "on_axis": on_axis}
    if with_disc:
        got["under"] = {"center": np.full((B, 2), CENTRE), "radius": disc_radius,
                        "rgb": np.broadcast_to(np.array(AXIS_DISC), (B, 3)).copy()}
    return got, ok


# ---------------------------------------------------------------- similarity: palette

PALETTE_COUNTS = {"s": (4, 8), "m": (9, 15), "l": (16, 24), "xl": (25, 36)}
PALETTE_BASE = {"s": 0.034, "m": 0.028, "l": 0.023, "xl": 0.0195}
RING = (0.5, 0.5, 0.2, 0.47)
RING_COVER = 0.15            # the share of the ring's area (about) that objects' footprints may take
PALETTE_SMALLEST = 0.0145    # base at least: a small object stays 4.5 px wide at 224 px
SECTORS = max(CATEGORIES["palette"].groups)
PER_SECTOR = max(hi for _, hi in PALETTE_COUNTS.values()) + 1      # a broken count may add one


def palette(rng: BatchRandom, batch: Batch) -> dict:
    """Angular sectors of a ring, one colour per sector (see :func:`_palette_once`)."""
    return {**redrawn(rng, batch, _palette_once), "constants": {"ring": list(RING)}}


def _palette_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    """One draw of :func:`palette`: ``G`` groups (their sizes by the ``count`` mode), one
    shape per group, the colour cue per group (shaded per object when colour is drawn at
    random); a positive puts each group in its own sector of the ring (4 degrees from its
    edges), a principle negative scatters the same objects over the whole ring so that some
    sector holds two colours. Slots ``[B, 1, K]``: the objects in group order."""
    B, K = len(batch), SECTORS * PER_SECTOR
    _, n, live, group = grouped_slots(rng, batch, PALETTE_COUNTS, SECTORS, K)
    _, _, inner, outer = RING
    room = np.sqrt(RING_COVER * math.pi * (outer ** 2 - inner ** 2) / (n * math.pi)) - 0.003
    base = np.maximum(PALETTE_SMALLEST, np.minimum([PALETTE_BASE[q] for q in batch.quantity], room / 1.05))
    a = attributes(rng, batch, group, live, batch.groups, SECTORS, per_group=("shape",), cue="color")
    r = radii_of(a["size"], a["shape"], base)
    shade = rng.random(K, 3) * 24 - 12
    rgb = named_rgb(a["color"])
    rgb = np.where((batch.mode["color"] == "random")[:, None, None], np.clip(rgb + shade, 0, 255).astype(np.int64), rgb)
    a0 = rng.random() * 360
    width = 360.0 / batch.groups
    start = a0[:, None] + group * width[:, None] + 4
    # every sample's objects must fit the sectors, a negative's too: the object sets of
    # positives and negatives then come from one population
    centres, ok = place_once(rng, r, live, in_wedge(start, np.broadcast_to((width - 8)[:, None], (B, K)), inner, outer),
                             0.006, CANDIDATES)
    rng.drawn += 1
    neg = np.nonzero(~batch.principle)[0]
    if len(neg):                                         # the same objects anywhere in the ring
        spread, fits = place_once(rng.take(neg).fork(0), r[neg], live[neg], in_wedge(np.zeros(len(neg)),
                                  np.full(len(neg), 360.0), inner, outer), 0.006, CANDIDATES)
        centres[neg] = spread
        x, y = spread[..., 0] - CENTRE, spread[..., 1] - CENTRE
        sector = ((np.degrees(np.arctan2(-y, x)) - a0[neg, None]) % 360 // width[neg, None]).astype(np.int64)
        code = _codes(a["color"][neg])
        mixed = np.zeros(len(neg), bool)
        for k in range(SECTORS):                         # some sector holds two colours
            inside = live[neg] & (sector == k)
            top = np.where(inside, code, -1).max(1)
            low = np.where(inside, code, np.iinfo(np.int64).max).min(1)
            mixed |= inside.any(1) & (top != low)
        ok[neg] &= fits & mixed
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": np.zeros((B, 1, K)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "rgb": rgb[:, None],
           "group": group[:, None], "start": a0, "sector": width}
    return got, ok


# ---------------------------------------------------------------- similarity: fixed number

FIXED_COUNTS = {"s": (3, 6), "m": (7, 14)}
FIXED_BASE = {"s": 0.04, "m": 0.032}
FIXED_GROUPS = max(CATEGORIES["fixed_number"].groups)
PER_GROUP = max(hi for _, hi in FIXED_COUNTS.values()) + 1


def fixed_number(rng: BatchRandom, batch: Batch) -> dict:
    """Scattered objects whose colour makes the groups (see :func:`_fixed_number_once`)."""
    return redrawn(rng, batch, _fixed_number_once)


def _fixed_number_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    """One draw of :func:`fixed_number`: ``G`` groups (sizes by the ``count`` mode), one
    clearly different colour per group, scattered over the canvas; a principle negative
    deals the same objects, in a random order, into one colour group more or fewer (``2 ..
    n // 2`` of them). Slots ``[B, 1, K]``: the objects in group order."""
    B, K, G = len(batch), FIXED_GROUPS * PER_GROUP, batch.groups
    _, n, live, group = grouped_slots(rng, batch, FIXED_COUNTS, FIXED_GROUPS, K)
    k = np.where(batch.principle, G, other_count(rng, G, 2, n // 2))
    colour_group = np.where(batch.principle[:, None], group, dealt(rng, live, k))
    a = attributes(rng, batch, np.where(live, colour_group, 0), live, k, FIXED_GROUPS + 1, cue="color")
    r = radii_of(a["size"], a["shape"], np.array([FIXED_BASE[q] for q in batch.quantity]))
    shade = rng.random(K, 3) * 24 - 12
    rgb = named_rgb(a["color"])
    rgb = np.where((batch.mode["color"] == "random")[:, None, None], np.clip(rgb + shade, 0, 255).astype(np.int64), rgb)
    centres, ok = place_once(rng, r, live, in_box((0.02, 0.02, 0.98, 0.98)), 0.025, CANDIDATES)
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": np.zeros((B, 1, K)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "rgb": rgb[:, None],
           "group": group[:, None], "colour_groups": k}
    return got, ok


# ---------------------------------------------------------------- proximity

PROX_COUNTS = {"s": (2, 3), "m": (4, 5), "l": (6, 8), "xl": (9, 12)}
PROX_BASE = {"s": 0.04, "m": 0.034, "l": 0.028, "xl": 0.024}
PROX_GROUPS = 5              # clusters: the rule's 2-4, or one more in a principle negative
PER_CLUSTER = max(hi for _, hi in PROX_COUNTS.values()) + 1
PLACE_TRIES = 6              # placements tried with the same objects before new ones are drawn
GAP_IN, GAP_OUT = 0.008, 0.1


def in_discs(centre: np.ndarray, radius: np.ndarray) -> Region:
    """Centres keeping a disc inside the disc of its slot (``centre [B,K,2]``, ``radius
    [B,K]``), at least its own radius from the middle (as :func:`scenes.elvis.geometry.in_disc`)."""
    return in_sector(centre[..., 0], centre[..., 1], 0.0, radius)


def mst_margins(points: np.ndarray, live: np.ndarray, *counts: np.ndarray) -> list[np.ndarray]:
    """:func:`scenes.elvis.geometry.mst_margin` of each sample's live ``points [B,K,2]``
    into ``k [B]`` clusters, for each ``k`` of ``counts`` (each sample's tree built once):
    one ``[B]`` per ``k``."""
    out = np.zeros((len(counts), len(points)))
    for b in range(len(points)):
        out[:, b] = geo.mst_margin_each(points[b][live[b]], [int(k[b]) for k in counts])
    return list(out)


def dealt(rng: BatchRandom, live: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Each live object's part ``[B,K]`` when a random order of them is split into ``k [B]``
    near-equal parts (the first ones one longer, as ``np.array_split``)."""
    n = live.sum(1)
    position = np.argsort(np.argsort(np.where(live, rng.random(live.shape[1]), 2.0), 1, kind="stable"), 1,
                          kind="stable")
    q, rem = n // np.maximum(k, 1), n % np.maximum(k, 1)
    big = rem * (q + 1)
    part = np.where(position < big[:, None], position // (q + 1)[:, None],
                    rem[:, None] + (position - big[:, None]) // np.maximum(q, 1)[:, None])
    return np.where(live, part, 0)


def other_count(rng: BatchRandom, G: np.ndarray, low: int, high: np.ndarray) -> np.ndarray:
    """``G - 1`` or ``G + 1`` (evenly where both lie in ``low .. high``), per sample."""
    fewer, more = (G - 1 >= low) & (G - 1 <= high), (G + 1 >= low) & (G + 1 <= high)
    u = rng.random()
    return np.where(fewer & more, np.where(u < 0.5, G - 1, G + 1), np.where(fewer, G - 1, G + 1))


def clustered(rng: BatchRandom, batch: Batch, r: np.ndarray, live: np.ndarray, group: np.ndarray) -> tuple:
    """Centres ``[B,K,2]`` of objects (``r``, ``live``, rule groups ``group``) packed into
    separated clusters: the rule's groups when the principle holds, else the same objects
    dealt into one cluster more or one fewer (``2 .. min(5, n)``) whose clusters must not
    read as the rule's. Placement is tried :data:`PLACE_TRIES` times with the same objects.
    Returns ``(centres, clusters [B], ok [B])``."""
    B, K = r.shape
    G, n = batch.groups, live.sum(1)
    k = np.where(batch.principle, G, other_count(rng, G, 2, np.minimum(5, n)))
    member = np.where(batch.principle[:, None], group, dealt(rng, live, k))
    rng.drawn += 1
    centres, ok = np.zeros((B, K, 2)), np.zeros(B, bool)
    todo = np.arange(B)
    for attempt in range(PLACE_TRIES):
        sub = rng.take(todo).fork(attempt)
        got, fine = _clusters_once(sub, r[todo], live[todo], member[todo], k[todo])
        margin, rule = mst_margins(got, live[todo], k[todo], G[todo])
        fine &= (margin >= 1.8) & (batch.principle[todo] | (rule < 1.5))
        centres[todo[fine]], ok[todo[fine]] = got[fine], True
        todo = todo[~fine]
        if not len(todo):
            break
    return centres, k, ok


def _clusters_once(rng: BatchRandom, r: np.ndarray, live: np.ndarray, member: np.ndarray, k: np.ndarray) -> tuple:
    """One placement of :func:`clustered`: cluster discs anywhere in the canvas, ``GAP_OUT``
    apart, each as large as its objects packed at a cluster's density (and able to hold
    its largest one anywhere), then the objects inside them. Returns ``(centres, ok)``."""
    B, K = r.shape
    inside = (member[:, :, None] == np.arange(PROX_GROUPS)[None, None, :]) & live[:, :, None]    # [B,K,C]
    packed = np.sqrt((((r + GAP_IN) ** 2)[:, :, None] * inside).sum(1) / 0.42)
    room = 2 * np.where(inside, r[:, :, None], 0.0).max(1) + 0.004
    cr = np.maximum(packed, room)
    used = np.arange(PROX_GROUPS)[None, :] < k[:, None]
    hubs, ok = place_once(rng, cr, used, in_box((0.01, 0.01, 0.99, 0.99)), GAP_OUT, CANDIDATES)
    rows = np.arange(B)[:, None]
    centres, fits = place_once(rng, r, live, in_discs(hubs[rows, member], cr[rows, member]), GAP_IN, CANDIDATES)
    return centres, ok & fits


def fixed_props(rng: BatchRandom, batch: Batch) -> dict:
    """Groups of nearby objects whose shapes, colours and sizes follow the task's modes."""
    return redrawn(rng, batch, functools.partial(_proximity_once, first_rule=False))


def red_triangle(rng: BatchRandom, batch: Batch) -> dict:
    """Groups of nearby objects; a group's first object carries the rule (every marked
    group's, all of them or at least one by the task's qualifier)."""
    return redrawn(rng, batch, functools.partial(_proximity_once, first_rule=True))


def _proximity_once(rng: BatchRandom, batch: Batch, first_rule: bool) -> tuple[dict, np.ndarray]:
    """One draw of the proximity categories: ``G`` groups (2-12 objects each by quantity
    class) placed as :func:`clustered`. With ``first_rule`` (red_triangle) only each marked
    group's first object follows the relevant properties (every group's, or with the
    ``exist`` qualifier a random 1..G-1 of them); an attribute negative of ``exist`` breaks one
    relevant property of every group's first object, and no object outside the rule matches
    every relevant value by chance. Slots ``[B, 1, K]``: the objects in group order."""
    B, K, G = len(batch), 4 * PER_CLUSTER, batch.groups
    sizes, n, live, group = grouped_slots(rng, batch, PROX_COUNTS, 4, K)
    starts = np.cumsum(sizes, 1) - sizes
    rule = None
    cat = CATEGORIES[batch.category]
    attr_neg = np.zeros(B, bool)
    for p in cat.props:
        attr_neg |= batch.broken.get(p, np.zeros(B, bool))
    if first_rule:
        first = (np.arange(K)[None, :] == np.take_along_axis(starts, group, 1)) & live
        exist = np.array([q == "exist" for q in batch.qualifier])
        marks = rng.integers(1, np.maximum(G, 2))                       # how many groups an ``exist`` task marks
        keys = np.where(np.arange(4)[None, :] < G[:, None], rng.random(4), 2.0)     # a random order of the groups
        ranked = np.argsort(np.argsort(keys, 1, kind="stable"), 1, kind="stable")
        marked = np.where((exist & ~attr_neg)[:, None], ranked < marks[:, None], True)
        rule = first & np.take_along_axis(marked, group, 1)
    a = attributes(rng, batch, group, live, G, 4, rule=rule)
    if first_rule:
        a = _break_first(rng, batch, a, first, exist & attr_neg)
        a = _no_stray_match(rng, batch, a, live & ~rule)
    r = radii_of(a["size"], a["shape"], np.array([PROX_BASE[q] for q in batch.quantity]))
    centres, clusters, ok = clustered(rng, batch, r, live, group)
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": np.zeros((B, 1, K)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "group": group[:, None],
           "clusters": clusters}
    if first_rule:                                        # each group's first object, by index
        got["lists"] = {"first_objects": np.where(np.arange(4)[None, :] < G[:, None], starts, -1)}
    return got, ok


def _rel_values(batch: Batch) -> dict:
    """Per property of the category: ``(pool, ok, bad)`` on the plain background."""
    allowed = CATEGORIES[batch.category].values
    return {p: _values(p, tuple(allowed.get(p) or ()), (BACKGROUND,)) for p in ("shape", "color", "size")}


def _relevant(batch: Batch) -> list[str]:
    return [p for p in ("shape", "color", "size") if p in batch.mode]


def _break_first(rng: BatchRandom, batch: Batch, a: dict, first: np.ndarray, rows: np.ndarray) -> dict:
    """In samples ``rows``, every first object gets one relevant property (at random) a value
    clearly not allowed, so that no group keeps a matching object."""
    return _set_bad(rng, batch, a, first & rows[:, None])


def _no_stray_match(rng: BatchRandom, batch: Batch, a: dict, others: np.ndarray) -> dict:
    """Objects ``others`` that match every relevant value by chance get one relevant property
    (at random) a value clearly not allowed."""
    vals = _rel_values(batch)
    match = others.copy()
    for p in _relevant(batch):
        rel = batch.mode[p] == "relevant"
        match &= ~rel[:, None] | np.isin(a[p], np.asarray(vals[p][1], dtype=object))
    match &= np.stack([batch.mode[p] == "relevant" for p in _relevant(batch)], 1).any(1)[:, None]
    return _set_bad(rng, batch, a, match)


def _set_bad(rng: BatchRandom, batch: Batch, a: dict, where: np.ndarray) -> dict:
    """Objects ``where [B,K]``: one of their sample's relevant properties, drawn per object,
    takes a value clearly not allowed (drawn per object)."""
    B, K = where.shape
    vals = _rel_values(batch)
    props = _relevant(batch)
    rel = np.stack([batch.mode[p] == "relevant" for p in props], 1)               # [B,P]
    u_prop, u_val = rng.random(K), rng.random(K)
    nrel = rel.sum(1)
    which = _pick(u_prop, np.maximum(nrel, 1)[:, None])                           # the k-th relevant property
    rank = np.cumsum(rel, 1) - 1
    out = {p: v.copy() for p, v in a.items()}
    for j, p in enumerate(props):
        hit = where & (rel[:, j] & (rank[:, j] >= 0))[:, None] & (which == rank[:, j][:, None])
        bad = vals[p][2]
        out[p][hit] = np.asarray(bad, dtype=object)[_pick(u_val, len(bad))][hit]
    return out


# ---------------------------------------------------------------- proximity: circle features, grid

DISC = (47, 79, 79)           # the background disc of circle_features
CIRCLE_COUNTS = {"s": (2, 3), "m": (4, 5), "l": (6, 7), "xl": (8, 10)}
CIRCLE_BASE = {"s": 0.032, "m": 0.028, "l": 0.025, "xl": 0.022}
RING_GROUP = 0.14            # a group on the ring packs into a disc at most this wide (radius)
ARCS = 5                     # groups on the ring: the rule's 2-4, or one more in a principle negative
PER_ARC = max(hi for _, hi in CIRCLE_COUNTS.values())


def circle_features(rng: BatchRandom, batch: Batch) -> dict:
    """Groups on a ring over a large backdrop disc (see :func:`_circle_features_once`)."""
    out = redrawn(rng, batch, _circle_features_once)
    B = len(batch)
    return {**out, "under": {"center": np.full((B, 2), CENTRE), "radius": np.full(B, 0.46),
                             "rgb": np.broadcast_to(np.array(DISC), (B, 3)).copy()}}


def _packed_radius(r: np.ndarray, inside: np.ndarray, gap: float = GAP_IN) -> np.ndarray:
    """``[B,C]``: the radius of the disc each set ``inside [B,K,C]`` of discs ``r [B,K]``
    fills at a cluster's density."""
    return np.sqrt((((r + gap) ** 2)[:, :, None] * inside).sum(1) / 0.42)


def _circle_features_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    """One draw of :func:`circle_features`: ``G`` groups of objects (colours visible on the
    disc), each packed into a small disc at equal angles on a ring of radius 0.27; a
    principle negative deals the same objects into one arc more or fewer, packed as densely
    as the rule's groups would be, so that the arcs do not read as the rule's."""
    B, K, G = len(batch), 4 * PER_ARC, batch.groups
    _, n, live, group = grouped_slots(rng, batch, CIRCLE_COUNTS, 4, K)
    a = attributes(rng, batch, group, live, G, 4, behind=(BACKGROUND, DISC))
    r = radii_of(a["size"], a["shape"], np.array([CIRCLE_BASE[q] for q in batch.quantity]))
    arcs = np.where(batch.principle, G, other_count(rng, G, 2, np.full(B, 5)))
    member = np.where(batch.principle[:, None], group, dealt(rng, live, arcs))
    own = (group[:, :, None] == np.arange(4)[None, None, :]) & live[:, :, None]
    mine = (member[:, :, None] == np.arange(ARCS)[None, None, :]) & live[:, :, None]
    rule_used = np.arange(4)[None, :] < G[:, None]
    dense = np.where(batch.principle, 1.0,
                     (np.minimum(1.0, RING_GROUP / np.maximum(_packed_radius(r, own), 1e-12)) * rule_used).sum(1)
                     / G)
    room = 2 * np.where(mine, r[:, :, None], 0.0).max(1) + 0.004
    cr = np.maximum(np.minimum(dense[:, None] * _packed_radius(r, mine), RING_GROUP), room)       # [B,ARCS]
    a0 = rng.random() * 360
    ang = np.radians(a0[:, None] + 360.0 * np.arange(ARCS)[None, :] / arcs[:, None])
    hub = np.stack([CENTRE + 0.27 * np.cos(ang), CENTRE - 0.27 * np.sin(ang)], -1)
    rows = np.arange(B)[:, None]
    centres, ok = place_once(rng, r, live, in_discs(hub[rows, member], cr[rows, member]), GAP_IN, CANDIDATES)
    margin, rule = mst_margins(centres, live, arcs, G)
    ok &= ((arcs <= 1) | (margin >= 1.8)) & (batch.principle | (rule < 1.5))
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": np.zeros((B, 1, K)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "group": group[:, None], "clusters": arcs}
    return got, ok


GRID_SIDE = {"s": 5, "m": 6, "l": 8, "xl": 10}
CELLS = max(GRID_SIDE.values()) ** 2


def grid(rng: BatchRandom, batch: Batch) -> dict:
    """A grid with one interior row and one interior column left empty (see :func:`_grid_once`)."""
    return redrawn(rng, batch, _grid_once)


def _grid_once(rng: BatchRandom, batch: Batch) -> tuple[dict, np.ndarray]:
    """One draw of :func:`grid`: a ``k x k`` grid (by quantity class) with an empty interior
    row and column making four blocks (the groups); a principle negative bridges the empty
    row or column with 1-2 objects on one side of the crossing and empties as many other
    cells, so that the count stays and the blocks join. Slots ``[B, 1, CELLS]``: the kept
    cells in reading order."""
    B = len(batch)
    k = np.array([GRID_SIDE[q] for q in batch.quantity])
    step = 0.86 / k
    row, col = rng.integers(1, k - 1), rng.integers(1, k - 1)
    cell = np.arange(CELLS)[None, :]
    i, j = cell // k[:, None], cell % k[:, None]
    inside = cell < (k * k)[:, None]
    holes = inside & ((i == row[:, None]) | (j == col[:, None]))
    along_row = rng.random() < 0.5
    side_coin, u_n, u_start, u_free = rng.random(), rng.random(), rng.random(), rng.random(CELLS)
    cross = np.where(along_row, col, row)
    t = np.arange(max(GRID_SIDE.values()))[None, :]
    on_line = t < k[:, None]
    side = on_line & np.where((side_coin < 0.5)[:, None], t > cross[:, None], t < cross[:, None])
    side = np.where(side.any(1)[:, None], side, on_line & (t != cross[:, None]))
    m = side.sum(1)
    nb = np.minimum(m, 1 + (u_n * 2).astype(np.int64))
    start = _pick(u_start, m - nb + 1)
    rank = np.cumsum(side, 1) - 1
    span = side & (rank >= start[:, None]) & (rank < (start + nb)[:, None])          # the bridge, along the line
    line_i, line_j = np.where(along_row[:, None], row[:, None], t), np.where(along_row[:, None], t, col[:, None])
    bridge = np.zeros_like(holes)
    bb, tt = np.nonzero(span)
    bridge[bb, line_i[bb, tt] * k[bb] + line_j[bb, tt]] = True
    free = inside & ~holes
    order = np.argsort(np.where(free, u_free, 2.0), 1, kind="stable")
    moved = np.zeros_like(holes)
    took = np.arange(CELLS)[None, :] < nb[:, None]
    np.put_along_axis(moved, order, took, 1)
    moved &= free
    neg = ~batch.principle
    holes = np.where(neg[:, None], (holes & ~bridge) | moved, holes)
    keep = inside & ~holes
    n = keep.sum(1)
    order = np.argsort(~keep, 1, kind="stable")                                  # kept cells first, in reading order
    ki, kj = np.take_along_axis(i, order, 1), np.take_along_axis(j, order, 1)
    live = np.arange(CELLS)[None, :] < n[:, None]
    group = np.where(live, (ki > row[:, None]) * 2 + (kj > col[:, None]), 0)
    a = attributes(rng, batch, group, live, np.full(B, 4), 4)
    r = radii_of(a["size"], a["shape"], 0.24 * step)
    centres = np.stack([0.07 + (kj + 0.5) * step[:, None], 0.07 + (ki + 0.5) * step[:, None]], -1)
    margin, = mst_margins(centres, live, np.full(B, 4))
    ok = np.where(batch.principle, margin >= 1.8, margin < 1.5)
    got = {"valid": live[:, None], "center": centres[:, None], "rotation": np.zeros((B, 1, CELLS)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "group": group[:, None],
           "grid": k, "empty_row": row, "empty_col": col}
    return got, ok


# ---------------------------------------------------------------- closure: big outlines

OUTLINE_COUNTS = {"s": (5, 7), "m": (8, 10), "l": (10, 12), "xl": (13, 15)}
BIG_RADIUS = {1: 0.36, 2: 0.2, 3: 0.18, 4: 0.165}
FIGURES = max(BIG_RADIUS)
PER_FIGURE = max(hi for _, hi in OUTLINE_COUNTS.values())
JITTER = (0.08, 0.04, 0.02, 0.0)          # figure-slot jitter tried, largest first


@functools.lru_cache(maxsize=None)
def _outline_table(kind: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where :func:`scenes.elvis.geometry.outline` puts its ``n`` points on a ``kind``:
    ``(side, t, angle)`` ``[n]`` each, point ``p`` at ``a * (1 - t) + b * t`` between corners
    ``side`` and ``side + 1``; a circle's points at ``angle`` degrees from the rotation."""
    if kind == "circle":
        return np.zeros(n, np.int64), np.zeros(n), 360.0 * np.arange(n) / n
    sides = {"triangle": 3, "square": 4}[kind]
    extra = n - sides
    side, t = [], []
    for i in range(sides):
        per = extra // sides + (1 if i < extra % sides else 0)
        side += [i] * (per + 1)
        t += [0.0] + [(j + 1) / (per + 1) for j in range(per)]
    return np.array(side), np.array(t), np.zeros(n)


def outlines(kind: str, centre: np.ndarray, radius: np.ndarray, rotation: np.ndarray, n: np.ndarray,
             slots: int) -> np.ndarray:
    """``[B,G,slots,2]``: the first ``n[b]`` points of :func:`scenes.elvis.geometry.outline`
    on each figure (``centre [B,G,2]``, ``radius`` and ``rotation [B,G]``), zeros after."""
    B, G = radius.shape
    side, t, angle = (np.zeros((B, slots)) for _ in range(3))
    for m in np.unique(n):
        rows = n == m
        a, b, c = _outline_table(kind, int(m))
        side[rows, :m], t[rows, :m], angle[rows, :m] = a, b, c
    side = side.astype(np.int64)
    cx, cy = centre[..., 0][..., None], centre[..., 1][..., None]
    if kind == "circle":
        ang = np.radians(rotation[..., None] + angle[:, None, :])
        return np.stack([cx + radius[..., None] * np.cos(ang), cy - radius[..., None] * np.sin(ang)], -1)
    sides = {"triangle": 3, "square": 4}[kind]
    start = 90.0 if sides == 3 else 45.0

    def corner(i):
        ang = np.radians(rotation[..., None] + start + 360.0 * i / sides)
        return np.stack([cx + radius[..., None] * np.cos(ang), cy - radius[..., None] * np.sin(ang)], -1)
    a, b = corner(side[:, None, :]), corner((side[:, None, :] + 1) % sides)
    tt = t[:, None, :, None]
    return a * (1 - tt) + b * tt


def figure_slots(rng: BatchRandom, G: np.ndarray, extent: np.ndarray, gap: float = 0.01, width: int = FIGURES) -> tuple:
    """Centres ``[B, width, 2]`` of ``G <= width`` discs of radius ``extent [B]`` at least ``gap``
    apart and inside the canvas: the fixed slots of ``G`` figures turned by a random multiple
    of 90 degrees, with the largest jitter of :data:`JITTER` that fits. Returns ``(centres,
    ok [B])``."""
    from .layouts import SLOTS
    B = len(G)
    base = np.zeros((B, width, 2))
    for g in np.unique(G):
        base[G == g, :g] = np.array(SLOTS[int(g)])
    base = turned(base, 90.0 * rng.integers(0, 4))
    u = rng.random(len(JITTER), width, 2)
    used = np.arange(width)[None, :] < G[:, None]
    out, ok = base.copy(), np.zeros(B, bool)
    for k, scale in enumerate(JITTER):
        c = base + (u[:, k] * 2 - 1) * scale
        inside = (((c - extent[:, None, None] >= 0.005) & (c + extent[:, None, None] <= 0.995)).all(2) | ~used).all(1)
        d = np.hypot(*(c[:, :, None] - c[:, None]).transpose(3, 0, 1, 2))
        pair = used[:, :, None] & used[:, None, :] & ~np.eye(width, dtype=bool)[None]
        apart = ((d >= 2 * extent[:, None, None] + gap) | ~pair).all((1, 2))
        take = inside & apart & ~ok
        out[take], ok = c[take], ok | take
    return out, ok


def big_triangle(rng: BatchRandom, batch: Batch) -> dict:
    """Small objects along the outlines of large triangles (see :func:`_big_once`)."""
    return _big(rng, batch, "triangle")


def big_square(rng: BatchRandom, batch: Batch) -> dict:
    """Small objects along the outlines of large squares (see :func:`_big_once`)."""
    return _big(rng, batch, "square")


def big_circle(rng: BatchRandom, batch: Batch) -> dict:
    """Small objects along the outlines of large circles (see :func:`_big_once`)."""
    return _big(rng, batch, "circle")


def _big(rng: BatchRandom, batch: Batch, kind: str) -> dict:
    out = redrawn(rng, batch, functools.partial(_big_once, kind=kind))

    def describe(b: int) -> dict:
        figs = []
        for g in range(int(batch.groups[b])):
            fig = {"kind": kind, "center": out["fig_center"][b, g].tolist(), "radius": float(out["fig_radius"][b, g]),
                   "rotation": float(out["fig_rotation"][b, g])}
            moved = out["moved"][b, g]
            if moved[0] >= 0:
                fig["displaced"] = {"objects": [int(v) for v in moved[1:] if v >= 0],
                                    "distance": float(out["moved_distance"][b, g])}
            figs.append(fig)
        return {"figures": figs}
    hidden = ("fig_center", "fig_radius", "fig_rotation", "moved", "moved_distance")
    return {**{k: v for k, v in out.items() if k not in hidden}, "describe": describe}


def _big_once(rng: BatchRandom, batch: Batch, kind: str) -> tuple[dict, np.ndarray]:
    """One draw of the big-outline categories: ``G`` figures, ``n`` objects on each outline
    (every corner, the rest spread evenly), their base size a third of the outline's spacing,
    placed by :func:`_outlined` (tried :data:`PLACE_TRIES` times with the same objects, so
    that which objects a scene holds does not depend on how easily they fit). Slots ``[B, 1,
    K]``: the objects figure by figure."""
    B, G = len(batch), batch.groups
    K = FIGURES * PER_FIGURE
    lo = np.array([OUTLINE_COUNTS[q][0] for q in batch.quantity])
    hi = np.array([OUTLINE_COUNTS[q][1] for q in batch.quantity])
    n = rng.integers(lo, hi + 1)
    R = np.array([BIG_RADIUS[int(g)] for g in G])
    base = np.array([_outline_base(kind, float(r), int(m)) for r, m in zip(R, n)])
    live = np.arange(K)[None, :] < (G * n)[:, None]
    group = np.where(live, np.arange(K)[None, :] // n[:, None], 0)
    a = attributes(rng, batch, group, live, G, FIGURES)
    r = radii_of(a["size"], a["shape"], base)
    rng.drawn += 1
    geometry, ok = {}, np.zeros(B, bool)
    todo = np.arange(B)
    for attempt in range(PLACE_TRIES):
        got, fine = _outlined(rng.take(todo).fork(attempt), batch.take(todo), kind, n[todo], R[todo], base[todo],
                              r[todo], live[todo], group[todo])
        for key, value in got.items():
            geometry.setdefault(key, np.zeros((B,) + value.shape[1:], value.dtype))[todo[fine]] = value[fine]
        ok[todo[fine]] = True
        todo = todo[~fine]
        if not len(todo):
            break
    out = {"valid": live[:, None], "center": geometry["center"][:, None], "rotation": np.zeros((B, 1, K)),
           "radius": r[:, None], **{p: v[:, None] for p, v in a.items()}, "group": group[:, None],
           **{k: v for k, v in geometry.items() if k != "center"}}
    return out, ok


def _outlined(rng: BatchRandom, batch: Batch, kind: str, n, R, base, r, live, group) -> tuple[dict, np.ndarray]:
    """Figures of varied size (80-100% of the slot's radius, any rotation) at the fixed slots
    with as much jitter as fits, the objects (``r``, ``live``, ``group``) on their outlines;
    a principle negative pushes a stretch of the objects of a random non-empty set of
    figures straight off the outline, choosing among candidates the one that keeps the
    scene's nearest-neighbour and spread statistics
    (:func:`scenes.elvis.layouts._displace_stretch`, per sample, from its own generator).
    Returns ``(geometry, ok)``: ``center [B,K,2]`` and the figures' descriptions."""
    from .layouts import SMALLEST_FIGURE, _displace_stretch
    B, K, G = len(batch), r.shape[1], batch.groups
    hubs, ok = figure_slots(rng, G, R + base * SIZES["large"])
    rot, scale = rng.random(FIGURES) * 360, SMALLEST_FIGURE + rng.random(FIGURES) * (1 - SMALLEST_FIGURE)
    fig_r = R[:, None] * scale
    pts = outlines(kind, hubs, fig_r, rot, n, PER_FIGURE)                     # [B,F,P,2]
    pos = np.arange(K)[None, :] % n[:, None]
    centres = pts[np.arange(B)[:, None], np.minimum(group, FIGURES - 1), np.minimum(pos, PER_FIGURE - 1)]
    centres = np.where(live[..., None], centres, 0.0)
    moved = np.full((B, FIGURES, PER_FIGURE + 1), -1)
    distance = np.zeros((B, FIGURES))
    u_hit, u_hit1 = rng.random(FIGURES), rng.random()
    rng.drawn += 1
    neg = np.nonzero(~batch.principle & ok)[0]
    if len(neg):
        keys = rng.take(neg).fork(0).keys
        for b, key in zip(neg, keys):                         # the near-miss search, per negative
            gen = np.random.Generator(np.random.Philox(key=int(key)))
            m, g_count = int(n[b]), int(G[b])
            hit = [g for g in range(g_count) if u_hit[b, g] < 0.5] or [int(u_hit1[b] * g_count)]
            c = np.ascontiguousarray(centres[b, :g_count * m])
            rad = np.ascontiguousarray(r[b, :g_count * m])
            try:
                for g in hit:
                    how = _displace_stretch(gen, c, rad, g * m, m, hubs[b, g], float(fig_r[b, g]),
                                            (SMALLEST_FIGURE * R[b], R[b]))
                    fig_r[b, g] = how["radius"]
                    moved[b, g, 0], moved[b, g, 1:1 + len(how["objects"])] = 1, how["objects"]
                    distance[b, g] = how["distance"]
            except PlacementError:
                ok[b] = False
                continue
            centres[b, :g_count * m] = c
    ok &= _apart(centres, r, live, 0.004)
    ok &= (((centres - r[..., None] >= 0.005) & (centres + r[..., None] <= 0.995)).all(2) | ~live).all(1)
    return {"center": centres, "fig_center": hubs, "fig_radius": fig_r, "fig_rotation": rot, "moved": moved,
            "moved_distance": distance}, ok


@functools.lru_cache(maxsize=None)
def _outline_base(kind: str, R: float, n: int) -> float:
    """The objects' base size on ``n``-point outlines of ``kind`` at slot radius ``R``: a
    third of the closest spacing on a figure of the average size, at most 0.032."""
    from kernels import outline_stats as ks

    from .layouts import SMALLEST_FIGURE
    probe = geo.outline(kind, (0, 0), R * (1 + SMALLEST_FIGURE) / 2, 0.0, n)
    return min(0.3 * float(np.float64(ks.closest_pair(probe))), 0.032)


def _apart(c: np.ndarray, r: np.ndarray, live: np.ndarray, gap: float) -> np.ndarray:
    """``[B]``: whether every two live discs (``c [B,K,2]``, ``r [B,K]``) lie ``gap`` apart."""
    from kernels import outline_stats as ks
    return ks.apart_each(np.ascontiguousarray(c, np.float64), np.ascontiguousarray(r, np.float64),
                         np.ascontiguousarray(live), gap)


def _codes(names: np.ndarray) -> np.ndarray:
    """Names ``[...]`` as integers (equal names, equal codes)."""
    _, inverse = np.unique(names.astype(str), return_inverse=True)
    return inverse.reshape(names.shape)


def named_rgb(colours: np.ndarray) -> np.ndarray:
    """``colours`` (names, any shape) as RGB ints ``[..., 3]``."""
    table = named_colours()
    return looked_up(colours, lambda c: table[c] if c is not None else (0, 0, 0), np.int64, (3,))


def looked_up(names: np.ndarray, value, dtype, tail: tuple = ()) -> np.ndarray:
    """``value(name)`` (a scalar, or an array of shape ``tail``) for every element of
    ``names`` (any shape), each distinct name looked up once: ``names.shape + tail`` of
    ``dtype`` (a per-element ``np.vectorize`` or list of tuples costs a few ms per batch)."""
    flat = names.ravel().tolist()
    seen = {c: k for k, c in enumerate(dict.fromkeys(flat))}
    table = np.array([value(c) for c in seen], dtype=dtype).reshape((len(seen),) + tail)
    return table[np.fromiter(map(seen.__getitem__, flat), np.int64, len(flat))].reshape(names.shape + tail)
