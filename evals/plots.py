"""Result plots drawn by the engine itself (no plotting library): bars, markers, labels."""
from __future__ import annotations

from pathlib import Path

from engine.preview import printable, save_png
from engine.render import render
from engine.scene import Scene


def accuracy_bars(rows: dict, path: str | Path, title: str = "") -> Path:
    """Horizontal bars of accuracy per task with the chance (grey tick) and p<0.05 (red tick)
    levels; ``rows`` as returned by ``evals.harness.summarise``. Writes a PNG."""
    tasks = sorted(rows)
    W = 900
    row_h, top, left, right = 26, 50, 330, 60
    H = top + row_h * len(tasks) + 40
    u = 1.0 / W
    s = Scene(background=(255, 255, 255))
    s.text(printable(title)[:90], (12 * u, 22 * u), height=18 * u, anchor="left", color=(20, 20, 20))
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
