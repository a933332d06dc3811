"""Percept-V generation: the 6,000-sample dataset (30 domains x 20 sizes x 10 instances)
end to end and render-only, against reference-style generators written the way the public
scripts are (Pillow canvases and matplotlib figures saved to PNG, rejection sampling) for
four domains, in one run. Run: ``procvis bench perceptv [--quick] [--results ...]``.

The matplotlib rows need the ``bench`` extra (``pip install -e '.[bench]'``); without it
they are left out and the table says so.
"""
from __future__ import annotations

import io
import math
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from engine import render
from engine.outputs import RunConfig, generate, write_shard
from engine.registry import get_task

from .render_bench import rate
from .results_file import publish, run_meta

PER_DOMAIN = 200
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


# ---------------------------------------------------------------- reference-style generators

def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def ref_counting_circles(rng, n) -> bytes:
    """Pillow, 500x300, black circles of radius 10-30 placed by rejection."""
    img = Image.new("RGB", (500, 300), "white")
    d = ImageDraw.Draw(img)
    placed = []
    while len(placed) < n:
        r = int(rng.integers(10, 31))
        x, y = int(rng.integers(r, 500 - r)), int(rng.integers(r, 300 - r))
        if all(math.hypot(x - a, y - b) >= r + c for a, b, c in placed):
            placed.append((x, y, r))
            d.ellipse((x - r, y - r, x + r, y + r), fill="black")
    return _png(img)


def ref_locate_circles_colour(rng, n) -> bytes:
    """Pillow, 680x680: a numbered 6x6 grid of coloured circles, n of them green."""
    img = Image.new("RGB", (680, 680), "white")
    d = ImageDraw.Draw(img)
    font = ImageFont.truetype(FONT, 20)
    green = set(rng.choice(36, n, replace=False).tolist())
    for k in range(7):
        d.line((40 + 100 * k, 40, 40 + 100 * k, 640), fill="black", width=2)
        d.line((40, 40 + 100 * k, 640, 40 + 100 * k), fill="black", width=2)
    for k in range(6):
        d.text((85 + 100 * k, 10), str(k + 1), fill="black", font=font)
        d.text((12, 80 + 100 * k), str(k + 1), fill="black", font=font)
    for c in range(36):
        r, col = divmod(c, 6)
        x0, y0 = 40 + 100 * col + 5, 40 + 100 * r + 5
        colour = "green" if c in green else ["red", "blue", "purple", "yellow"][int(rng.integers(4))]
        d.ellipse((x0, y0, x0 + 90, y0 + 90), fill=colour)
    return _png(img)


def ref_graph_counting(rng, n) -> bytes:
    """matplotlib, 12x12 in: light-blue nodes (size 2000) and grey edges of a random graph."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    m = 0 if n == 1 else int(rng.integers(n - 1, min(len(pairs), n + 5) + 1))
    edges = [pairs[int(k)] for k in rng.choice(len(pairs), m, replace=False)] if m else []
    pos = rng.uniform(0, 1, (n, 2))
    fig = plt.figure(figsize=(12, 12))
    ax = fig.add_subplot()
    for i, j in edges:
        ax.plot(*pos[[i, j]].T, color="gray", zorder=1)
    ax.scatter(pos[:, 0], pos[:, 1], s=2000, color="lightblue", zorder=2)
    ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def ref_sort_circles(rng, n) -> bytes:
    """matplotlib, (3n)x5 in: labelled black circles of distinct radii in a row."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    radii = []
    while len(radii) < n:
        r = rng.uniform(0.3, 2.0)
        if all(abs(r - q) >= 0.05 for q in radii):
            radii.append(r)
    fig, ax = plt.subplots(figsize=(3 * n, 5))
    x = 0.0
    prev = 0.0
    for i, r in enumerate(radii):
        x += prev + r + 0.5
        prev = r
        ax.add_patch(plt.Circle((x, 2), r, color="black"))
        ax.text(x, 2, str(i + 1), color="white", fontsize=24, ha="center", va="center")
    ax.set_xlim(0, x + 2)
    ax.set_ylim(0, 4)
    ax.set_aspect("equal")
    ax.axis("off")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


# domain -> (reference generator, its style, the procvis image side with about the reference's pixel count)
REFERENCES = {"counting_circles": (ref_counting_circles, "Pillow, 500x300", 500),
              "locate_circles_colour": (ref_locate_circles_colour, "Pillow, 680x680, grid + text", 680),
              "graph_counting": (ref_graph_counting, "matplotlib, 1200x1200", 1200),
              "sort_circles": (ref_sort_circles, "matplotlib, (300n)x500 tight", 650)}


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def _ref_rate(fn, sizes) -> float:
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    for n in sizes:
        fn(rng, n)
    return len(sizes) / (time.perf_counter() - t)


def _ours_rate(name: str, count: int, folder: Path, size: int = 512) -> float:
    tid = f"perceptv/{name}"
    cfg = RunConfig(pattern=tid, seed=0, count=count, size=size, format="imagefolder", shard_size=count)
    t = time.perf_counter()
    write_shard(str(folder / name), cfg, tid, 0)
    return count / (time.perf_counter() - t)


def run(quick: bool = False) -> dict:
    count = 40 if quick else PER_DOMAIN
    sizes = [i // 10 % 20 + 1 for i in range(count)]
    tmp = Path(tempfile.mkdtemp(prefix="procvis-perceptv-bench-"))
    try:
        res = {"count": count, "domains": []}
        import numba
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        numba.set_num_threads(1)
        try:
            _ours_rate("counting_circles", 10, tmp / "warm")       # JIT compilation and caches first
            for name, (fn, kind, side) in REFERENCES.items():
                ours = _ours_rate(name, count, tmp, side)
                ref = None if kind.startswith("matplotlib") and not _has_matplotlib() else _ref_rate(fn, sizes)
                res["domains"].append({"domain": name, "kind": kind, "side": side, "ours": ours, "ref": ref})
        finally:
            torch.set_num_threads(threads)
            numba.set_num_threads(threads)
        scenes = [p for name in ("counting_circles", "grid_path", "maze_solving", "colours_present", "sort_lines")
                  for s in get_task(f"perceptv/{name}").samples(0, range(0, 200, 4)) for p in s.panels]
        res["render"] = rate(len(scenes), lambda: render(scenes, 512), 3 if quick else 5)
        if not quick:
            t = time.perf_counter()
            m = generate("perceptv/*", str(tmp / "all"), count=PER_DOMAIN, size=512, fmt="imagefolder", workers=2,
                         progress=False)
            res["full"] = (m["total"] / (time.perf_counter() - t), m["total"])
        else:
            res["full"] = None
        res["meta"] = run_meta(matplotlib=_has_matplotlib())
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def to_markdown(r: dict) -> str:
    lines = []
    if r["full"]:
        rate_, n = r["full"]
        lines += [f"The whole dataset: `procvis generate 'perceptv/*' --count 200 --size 512 --format imagefolder "
                  f"--workers 2`: {n:,} samples in {n / rate_:.1f} s, **{rate_:,.0f} samples/s**.", ""]
    lines += [f"Per domain, {r['count']} samples (sizes 1-20), PNG files, one process each side:", "",
              "| domain | reference style | procvis side (px) | procvis samples/s | reference samples/s | procvis / reference |",
              "|---|---|---|---|---|---|"]
    for d in r["domains"]:
        ref = f"{d['ref']:,.1f}" if d["ref"] else "not run (no matplotlib)"
        ratio = f"{d['ours'] / d['ref']:.1f}x" if d["ref"] else "-"
        lines.append(f"| {d['domain']} | {d['kind']} | {d['side']} | {d['ours']:,.1f} | {ref} | {ratio} |")
    v = r["render"]
    lines += ["", f"Render only (250 scenes of five domains at 512 px, both cores): {v[0]:,.0f} ± {v[1] / 2:,.0f} images/s.",
              "", "Run: " + ", ".join(f"{k} {val}" for k, val in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "perceptv-bench", "Percept-V generation (`procvis bench perceptv`)")
