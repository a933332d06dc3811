"""Percept-V domains built from rows or a line-up of objects: compare, identify, match, sort.

As in the reference, a row domain is a tall panel one row wide with one square row per
problem size (a quarter of the native side each: 128 px, 2,688 px tall at size 20), and
sort_circles a wide strip that grows with its circles.
"""
from __future__ import annotations

import numpy as np

from engine.scene import Scene

from .common import WHITE, Form, domain, extent, pick, shape

ROW_SHAPES = ("circle", "triangle", "square", "pentagon")


ROW = 0.25                 # a row's side in units of the native side


def _rows(n):
    """Row centres (top to bottom) and the row height, in scene units (the panel is one row
    wide): rows 1..n of a panel n + 1 rows tall, as the reference's (n + 1)-inch figure."""
    return [float(i + 1) for i in range(n)], 1.0


def _tall(n):
    """The ``(height, width)`` of a panel of n rows."""
    return extent(ROW * (n + 1), ROW)


def _separators(s: Scene, ys, h, every=True):
    for y in (ys if every else ys[:-1]):
        s.line((0.0, y + h / 2), (1.0, y + h / 2), width=0.016, color=(0, 0, 0))


@domain("comparing_size", "list", "D,SM,SR", 30,
        Form("list", ("ANSWER",), item="word", sep=" ", case="title", vocab=("blue", "green")))
def comparing_size(rng, n, instance):
    """Rows of a blue and a green circle; which is bigger in each row, top to bottom."""
    ys, h = _rows(n)
    s = Scene(background=WHITE)
    answer = []
    for y in ys:
        while True:
            r1, r2 = rng.uniform(0.25, 1.0, 2)
            if abs(r1 - r2) >= 0.25:
                break
        scale = min(0.2, h * 0.4)
        s.circle((0.25, y), r1 * scale, color=(0, 0, 255))
        s.circle((0.75, y), r2 * scale, color=(0, 128, 0))
        answer.append("blue" if r1 > r2 else "green")
    _separators(s, ys, h)
    return s, answer, {}, _tall(n)


ID_SHAPES = {"circle": (0, 0, 255), "triangle": (255, 0, 0), "diamond": (0, 128, 0), "pentagon": (0, 191, 191),
             "hexagon": (191, 0, 191)}


@domain("identifying_shapes", "list", "M", 30,
        Form("list", ("ANSWER",), item="word", sep=" ", case="title", vocab=tuple(ID_SHAPES)))
def identifying_shapes(rng, n, instance):
    """Rows of one coloured shape each; the shape names, top to bottom."""
    ys, h = _rows(n)
    s = Scene(background=WHITE)
    kinds = [pick(rng, list(ID_SHAPES)) for _ in ys]
    for y, k in zip(ys, kinds):
        shape(s, k, (0.5, y), 0.3 * h, ID_SHAPES[k])
    _separators(s, ys, h, every=False)
    return s, kinds, {}, _tall(n)


def _matching(rng, n, second):
    ys, h = _rows(n)
    first = [pick(rng, ROW_SHAPES) for _ in ys]
    other = [pick(rng, ROW_SHAPES) for _ in ys]
    panels = []
    for kinds, style in ((first, "filled"), (other, second)):
        s = Scene(background=WHITE)
        for y, k in zip(ys, kinds):
            r = 0.15 * h
            if style == "outline":
                shape(s, k, (0.5, y), r, (0, 0, 255), fill=False, stroke=0.03)
            else:
                shape(s, k, (0.5, y), r, (0, 0, 255), flip=style == "shadow")
        _separators(s, ys, h)
        panels.append(s)
    return panels, str(sum(a == b for a, b in zip(first, other))), {"first": first, "second": other}, _tall(n)


@domain("match_outline", "single", "D,SM,C", 30, Form("single", ("ANSWER",)))
def match_outline(rng, n, instance):
    """Two images of n rows: filled shapes, then outlines; how many rows match."""
    return _matching(rng, n, "outline")


@domain("match_shadow", "single", "D,SM,C", 30, Form("single", ("ANSWER",)))
def match_shadow(rng, n, instance):
    """Two images of n rows: shapes, then upside-down silhouettes; how many rows match."""
    return _matching(rng, n, "shadow")


def _spaced(rng, n: int, lo: float, hi: float, gap: float, integer: bool = False) -> np.ndarray:
    """``n`` values in ``[lo, hi]`` pairwise at least ``gap`` apart, in random order, drawn
    about uniformly over all such sets (``integer``: whole numbers) in one pass: sorted draws from
    the range shortened by the ``n - 1`` gaps, each then moved up by the gaps below it.
    Redrawing a value until it keeps clear of the earlier ones, as the reference does, stalls
    once the range is nearly full (sort_circles from n = 27)."""
    room = hi - lo - (n - 1) * gap
    if room < 0:
        raise ValueError(f"{n} values {gap} apart do not fit in [{lo}, {hi}]")
    u = np.sort(rng.integers(0, int(room) + 1, n) if integer else rng.uniform(0, room, n))
    return rng.permutation(lo + u + gap * np.arange(n))


STRIP = 0.6            # sort_circles: the strip's height in units of the native side (4 data units)


@domain("sort_circles", "list", "D,M", 30, Form("list", sep=" "))
def sort_circles(rng, n, instance):
    """n labelled black circles in a row; the labels from the smallest to the largest."""
    radii = _spaced(rng, n, 0.3, 2.0, 0.05)
    xs = np.cumsum(np.concatenate([[0.0], radii[:-1]]) + radii + 0.5)
    width = xs[-1] + radii[-1] + 1.0                # data units, as the reference lays the row out
    unit = 1.0 / width                              # scene units per data unit; the strip is 4 units tall
    s = Scene(background=WHITE)
    for i, (x, r) in enumerate(zip(xs, radii)):
        c = (x * unit + 0.5 * unit, 2.0 * unit)
        s.circle(c, r * unit, color=(0, 0, 0))
        s.text(str(i + 1), c, height=0.6 * r * unit, color=(255, 255, 255))
    panel = extent(STRIP, STRIP * width / 4.0)
    return s, [str(i + 1) for i in np.argsort(radii, kind="stable")], {"radii": radii.round(4).tolist()}, panel


@domain("sort_lines", "list", "D,M", 40, Form("list", sep=" "))
def sort_lines(rng, n, instance):
    """n labelled vertical lines on a common baseline; the labels from shortest to longest."""
    # pairwise 20 px apart as the reference draws them, closer where n lines do not fit so (n > 36)
    lengths = [int(v) for v in _spaced(rng, n, 250, 960, min(20, (960 - 250) // max(n - 1, 1)), integer=True)]
    s = Scene(background=WHITE)
    step = 1.0 / (n + 1)
    for i, v in enumerate(lengths):
        x = step * (i + 1)
        top = 0.99 - v / 1000
        col = tuple(int(c) for c in rng.integers(50, 206, 3))
        s.line((x, 0.99), (x, top), width=0.004, color=col)
        s.text(str(i + 1), (x, top - 0.02), height=min(0.03, step * 0.8), color=(0, 0, 0))
    return s, [str(i + 1) for i in np.argsort(lengths, kind="stable")], {"lengths": lengths}
