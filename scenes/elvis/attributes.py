"""Object attributes of ELVIS scenes: shapes, named colours, size classes, and how a task's
property modes turn into per-object values.

Modes (see :class:`scenes.elvis.factors.Factors`): a *relevant* property takes the
category's values on every rule object of a positive; an *irrelevant* one takes one value
per image; any other property is drawn per object. An attribute negative gives some rule
objects a value far from the allowed ones.
"""
from __future__ import annotations

import functools

import numpy as np
from PIL import ImageColor

from .factors import CATEGORIES

BACKGROUND = (211, 211, 211)
SHAPES = ("triangle", "square", "circle", "pentagon", "hexagon", "star", "cross", "plus", "diamond",
          "heart", "spade", "club")
SIZES = {"small": 0.7, "medium": 1.0, "large": 1.45}
MIN_CONTRAST = 100.0          # RGB distance an object colour keeps from what lies behind it
NEAR = 90.0                   # colours closer than this to an allowed colour count as that colour


@functools.lru_cache(maxsize=None)
def named_colours() -> dict[str, tuple[int, int, int]]:
    """The CSS named colours -> RGB."""
    return {name: ImageColor.getrgb(ImageColor.colormap[name])[:3] for name in sorted(ImageColor.colormap)}


def distance(a, b) -> float:
    return float(np.linalg.norm(np.subtract(a, b, dtype=np.float64)))


@functools.lru_cache(maxsize=None)
def colour_pool(behind: tuple = (BACKGROUND,)) -> tuple[str, ...]:
    """Names of the named colours that stay visible on every colour in ``behind``."""
    return tuple(n for n, rgb in named_colours().items() if all(distance(rgb, b) >= MIN_CONTRAST for b in behind))


def far_from(pool, allowed, prop: str) -> list:
    """Values of ``pool`` that are clearly not any of ``allowed`` (colours: by distance)."""
    return list(_far_from(tuple(pool), tuple(allowed), prop))


@functools.lru_cache(maxsize=4096)
def _far_from(pool: tuple, allowed: tuple, prop: str) -> tuple:
    if prop != "color" or not allowed or not pool:
        return tuple(v for v in pool if v not in allowed)
    table = named_colours()
    p = np.array([table[v] for v in pool], dtype=np.float64)
    a = np.array([table[v] for v in allowed], dtype=np.float64)
    ok = (np.linalg.norm(p[:, None] - a[None], axis=-1) >= NEAR).all(1)
    return tuple(v for v, k in zip(pool, ok) if k)


def pool_of(prop: str, behind) -> list:
    if prop == "shape":
        return list(SHAPES)
    if prop == "size":
        return list(SIZES)
    if prop == "color":
        return list(colour_pool(tuple(behind)))
    raise ValueError(f"no value pool for property {prop!r}")


def pick(rng: np.random.Generator, values, size=None):
    """One of ``values`` drawn uniformly, or a list of ``size`` of them."""
    if not isinstance(values, (list, tuple)):
        values = list(values)
    if size is None:
        return values[int(rng.integers(len(values)))]
    return [values[i] for i in rng.integers(len(values), size=size).tolist()]


def distinct(rng: np.random.Generator, pool, k: int, prop: str, avoid=()) -> list:
    """``k`` values of ``pool`` pairwise clearly different (and clearly not ``avoid``)."""
    out: list = []
    for v in rng.permutation(len(pool)):
        cand = pool[int(v)]
        if far_from([cand], list(out) + list(avoid), prop):
            out.append(cand)
            if len(out) == k:
                return out
    raise ValueError(f"fewer than {k} clearly different {prop} values")


def varied(rng: np.random.Generator, pool, n: int) -> list:
    """``n`` values drawn per object, with at least two different ones when ``n >= 2``."""
    vals = pick(rng, pool, n)
    if n >= 2 and len(set(vals)) == 1:
        vals[int(rng.integers(n))] = pick(rng, [v for v in pool if v != vals[0]])
    return vals


def assign(rng: np.random.Generator, factors, allowed: dict, groups: list[int], rule: list[bool],
           broken: dict, behind=(BACKGROUND,), per_group=(), cue: str | None = None) -> dict[str, list]:
    """Shape, colour and size of every object.

    ``groups[i]`` is object i's group, ``rule[i]`` whether the rule speaks of it; ``broken``
    maps a relevant property to the groups whose rule objects must violate it. Properties in
    ``per_group`` take one value per group (a relevant one cycles through the allowed values
    by group). The similarity ``cue`` property always takes clearly different values per
    group: the allowed ones when relevant, otherwise drawn per image. Returns ``{prop: [value per object]}`` for shape, color and size.
    """
    n = len(groups)
    ng = max(groups) + 1 if groups else 0
    out: dict[str, list] = {}
    for prop in ("shape", "color", "size"):
        pool = pool_of(prop, behind)
        mode = factors.mode(prop) if prop in _props(factors) else "fixed"
        ok = [v for v in allowed.get(prop) or [] if v in pool] or allowed.get(prop) or []
        bad = far_from(pool, ok, prop) if ok else pool
        if mode == "fixed":                      # not a property of this category: the category's value
            vals = [ok[0] if ok else pool[0]] * n
        elif prop == cue:
            gv = [ok[g % len(ok)] for g in range(ng)] if mode == "relevant" else distinct(rng, pool, ng, prop)
            vals = [gv[g] for g in groups]
        elif prop in per_group:
            if mode == "relevant":
                gv = [ok[g % len(ok)] for g in range(ng)]
            elif mode == "irrelevant":
                gv = [pick(rng, pool)] * ng
            else:
                gv = varied(rng, pool, ng)
            vals = [gv[g] for g in groups]
        elif mode == "relevant":
            vals = pick(rng, ok, n)
        elif mode == "irrelevant":
            vals = [pick(rng, pool)] * n
        else:
            vals = varied(rng, pool, n)
        if mode == "relevant":
            vals = [v if r else pick(rng, pool) for v, r in zip(vals, rule)]
            hit = set(broken.get(prop, ()))
            if hit:
                if prop == cue:
                    keep = [gv[g] for g in range(ng) if g not in hit]
                    new = distinct(rng, bad, len(hit), prop, avoid=keep)
                    repl = dict(zip(sorted(hit), new))
                    vals = [repl.get(g, v) for v, g in zip(vals, groups)]
                elif prop in per_group:
                    repl = {g: pick(rng, bad) for g in hit}
                    vals = [repl[g] if (g in repl and r) else v for v, g, r in zip(vals, groups, rule)]
                else:
                    vals = [pick(rng, bad) if (g in hit and r) else v for v, g, r in zip(vals, groups, rule)]
        out[prop] = vals
    return out


def _props(factors) -> tuple[str, ...]:
    return CATEGORIES[factors.category].props
