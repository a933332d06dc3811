"""Object attributes of ELVIS scenes: shapes, named colours, size classes and which colours
stay visible (the rules that turn a task's property modes into per-object values are
:func:`scenes.elvis.batched.attributes`).

Modes (see :class:`scenes.elvis.factors.Factors`): a *relevant* property takes the
category's values on every rule object of a positive; an *irrelevant* one takes one value
per image; any other property is drawn per object. An attribute negative gives some rule
objects a value far from the allowed ones.
"""
from __future__ import annotations

import functools

import numpy as np
from PIL import ImageColor


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
