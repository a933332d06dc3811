"""Result plots drawn by the engine itself (no plotting library): bars, markers, labels."""
from __future__ import annotations

import math
from pathlib import Path

from .preview import printable, save_png
from .rendering import render
from .scene import Scene


MAX_BARS = 60


def _fold(rows: dict) -> dict:
    """Rows averaged one folder level up (``a/b/c`` -> ``a/b/*``); no significance tick."""
    groups: dict[str, list[dict]] = {}
    for t, r in rows.items():
        head = t.rstrip("/*").rsplit("/", 1)[0] if t.count("/") > 1 else t
        groups.setdefault(head + "/*" if head != t else t, []).append(r)
    return {g: {"accuracy": sum(r["accuracy"] for r in rs) / len(rs), "chance": sum(r["chance"] for r in rs) / len(rs),
                "critical": float("nan") if len(rs) > 1 else rs[0]["critical"]} for g, rs in groups.items()}


def _canvas(W: int, title: str, title_h: int, title_chars: int) -> tuple[Scene, float]:
    """A white chart scene with its title in the top-left corner, and the scene units of one
    pixel of a ``W`` px wide image."""
    u = 1.0 / W
    s = Scene(background=(255, 255, 255))
    s.text(printable(title)[:title_chars], (12 * u, 22 * u), height=title_h * u, anchor="left", color=(20, 20, 20))
    return s, u


def accuracy_bars(rows: dict, path: str | Path, title: str = "") -> Path:
    """Horizontal bars of accuracy per task with the chance (grey tick) and p<0.05 (red tick)
    levels; ``rows`` as returned by ``evals.harness.summarise``. More than ``MAX_BARS`` tasks
    are shown as the means of their folders (e.g. one bar per ELVIS category). Writes a PNG."""
    while len(rows) > MAX_BARS and any(t.count("/") > 1 for t in rows):
        rows = _fold(rows)
    tasks = sorted(rows)
    W = 900
    row_h, top, left, right = 26, 50, 330, 60
    H = top + row_h * len(tasks) + 40
    s, u = _canvas(W, title, 18, 90)
    span = W - left - right
    for k in range(0, 101, 25):                      # grid and axis labels
        x = (left + span * k / 100) * u
        s.line((x, (top - 6) * u), (x, (top + row_h * len(tasks)) * u), width=1 * u, color=(220, 220, 220))
        s.text(f"{k}%", (x, (top + row_h * len(tasks) + 16) * u), height=13 * u, color=(90, 90, 90))
    for i, t in enumerate(tasks):
        r = rows[t]
        y = (top + row_h * i + row_h / 2) * u
        s.text(printable(t)[:44], ((left - 10) * u, y), height=14 * u, anchor="right", color=(20, 20, 20))
        w = max(span * r["accuracy"], 1.0)
        s.rectangle(((left + w / 2) * u, y), (w * u, (row_h - 8) * u), color=(60, 110, 200))
        for level, col in ((r["chance"], (120, 120, 120)), (r["critical"], (200, 40, 40))):
            if level == level:                       # not NaN
                x = (left + span * level) * u
                s.line((x, y - (row_h / 2 - 2) * u), (x, y + (row_h / 2 - 2) * u), width=3 * u, color=col)
        s.text(f"{100 * r['accuracy']:.1f}", ((left + w + 6) * u, y), height=12 * u, anchor="left", color=(20, 20, 20))
    return save_png(render([s], (H, W))[0], path)


PALETTE = [(60, 110, 200), (220, 120, 30), (40, 160, 80), (200, 40, 40), (140, 80, 190), (20, 20, 20),
           (0, 170, 170), (150, 110, 60)]


def whole_ticks(lo: float, hi: float, most: int = 6) -> list[int]:
    """At most ``most`` whole numbers from ``lo`` to ``hi``, evenly stepped, starting at the first."""
    first, last = int(math.ceil(lo)), int(math.floor(hi))
    step = max(1, math.ceil((last - first) / (most - 1)))
    return list(range(first, last + 1, step))


def curve_plot(curves: dict, path: str | Path, title: str = "", xlabel: str = "", ylabel: str = "",
               xlabels: tuple | None = None) -> Path:
    """Line plot of ``curves`` (name -> ``[(x, y), ...]``, both in 0..1) with a legend;
    ``xlabels = (lo, hi)`` labels the x axis in those units instead of 0..1, at whole numbers
    (a problem size has no 4.75). Writes a PNG."""
    W, H = 820, 480
    left, right, top, bottom = 70, 230, 50, 60
    s, u = _canvas(W, title, 16, 80)
    pw, ph = W - left - right, H - top - bottom
    X = lambda x: (left + pw * x) * u  # noqa: E731
    Y = lambda y: (top + ph * (1 - y)) * u  # noqa: E731
    if xlabels is None:
        xticks = [(k / 4, f"{k / 4:.2f}") for k in range(5)]
    else:
        xticks = [((v - xlabels[0]) / (xlabels[1] - xlabels[0]), str(v)) for v in whole_ticks(*xlabels)]
    for v, tick in xticks:
        s.line((X(v), Y(0)), (X(v), Y(1)), width=1 * u, color=(225, 225, 225))
        s.text(tick, (X(v), (top + ph + 16) * u), height=12 * u, color=(90, 90, 90))
    for k in range(0, 5):
        v = k / 4
        s.line((X(0), Y(v)), (X(1), Y(v)), width=1 * u, color=(225, 225, 225))
        s.text(f"{100 * v:.0f}%", ((left - 8) * u, Y(v)), height=12 * u, anchor="right", color=(90, 90, 90))
    s.text(printable(xlabel), (X(0.5), (H - 18) * u), height=13 * u, color=(40, 40, 40))
    s.text(printable(ylabel), (14 * u, Y(1.04)), height=13 * u, anchor="left", color=(40, 40, 40))
    for i, (name, pts) in enumerate(curves.items()):
        col = PALETTE[i % len(PALETTE)]
        if len(pts) >= 2:
            s.polyline([(X(x), Y(y)) for x, y in pts], width=2.5 * u, color=col)
        y = top + 14 + 22 * i
        s.line(((W - right + 16) * u, y * u), ((W - right + 40) * u, y * u), width=3 * u, color=col)
        s.text(printable(name)[:28], ((W - right + 46) * u, y * u), height=13 * u, anchor="left", color=(20, 20, 20))
    return save_png(render([s], (H, W))[0], path)


def value_bars(values: dict, path: str | Path, title: str = "", errors: dict | None = None) -> Path:
    """Horizontal bars of ``values`` (name -> 0..1), with ± ``errors`` whiskers. Writes a PNG."""
    names = list(values)
    W = 760
    row_h, top, left, right = 24, 50, 230, 70
    H = top + row_h * len(names) + 40
    s, u = _canvas(W, title, 16, 80)
    span = W - left - right
    for k in range(0, 5):
        x = (left + span * k / 4) * u
        s.line((x, (top - 6) * u), (x, (top + row_h * len(names)) * u), width=1 * u, color=(225, 225, 225))
        s.text(f"{k / 4:.2f}", (x, (top + row_h * len(names) + 16) * u), height=12 * u, color=(90, 90, 90))
    for i, name in enumerate(names):
        v = max(0.0, min(1.0, values[name]))
        y = (top + row_h * i + row_h / 2) * u
        s.text(printable(name)[:30], ((left - 8) * u, y), height=13 * u, anchor="right", color=(20, 20, 20))
        w = max(span * v, 1.0)
        s.rectangle(((left + w / 2) * u, y), (w * u, (row_h - 8) * u), color=(60, 110, 200))
        if errors and errors.get(name):
            e = span * errors[name]
            lo, hi = max(left, left + span * v - e), min(left + span, left + span * v + e)
            s.line((lo * u, y), (hi * u, y), width=2 * u, color=(30, 30, 30))
        s.text(f"{v:.2f}", ((left + w + 6) * u, y), height=12 * u, anchor="left", color=(20, 20, 20))
    return save_png(render([s], (H, W))[0], path)
