"""Render throughput: procvis's numba and torch paths (and CUDA when present) against a
Pillow ImageDraw reference drawing the *same* scenes, plain and 4x supersampled, at 224 and
512 px with 5, 20 and 100 primitives per image, plus PNG encoding cost. One run, one table.

Every figure is images per second, end to end from scene objects (collation included for
procvis; Pillow walks the same primitive lists), median over repeats with the
inter-quartile range. Run: ``procvis bench [--results benchmarks/RESULTS.md]``.
"""
from __future__ import annotations

import io
import math
import os
import platform
import statistics
import time
from datetime import datetime, timezone

import numpy as np
import torch
from PIL import Image, ImageDraw

from engine import Scene, SceneBatch, render
from engine.shapes import SHAPES, draw_shape
from kernels.primitives import ELLIPSE, POLYGON

from .results_file import commit, publish



def make_scenes(n_prims: int, batch: int, seed: int = 0) -> list[Scene]:
    """ELVIS-like scenes: ``n_prims`` filled shapes of the 12 kinds, radius 2-6% of the width,
    random colours on light grey. Deterministic in ``seed``."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(batch):
        s = Scene(background=(211, 211, 211))
        for _ in range(n_prims):
            draw_shape(s, SHAPES[int(rng.integers(len(SHAPES)))], tuple(rng.uniform(0.05, 0.95, 2)),
                       float(rng.uniform(0.02, 0.06)), tuple(int(v) for v in rng.integers(0, 200, 3)))
        out.append(s)
    return out


def pillow_draw(scene: Scene, size: int, ss: int = 1, resample: str = "reduce") -> np.ndarray:
    """The reference: ImageDraw at ``ss`` times the size, then ``reduce(ss)`` or a LANCZOS
    resize (what reference generators do). Returns ``[H,W,3]`` uint8."""
    S = size * ss
    img = Image.new("RGB", (S, S), tuple(int(round(c * 255)) if isinstance(c, float) else c for c in scene.background))
    draw = ImageDraw.Draw(img)
    for p in sorted(scene.primitives, key=lambda q: q.order):
        col = tuple(int(round(c * 255)) for c in p.color)
        cx, cy = p.center[0] * S, p.center[1] * S
        if p.geom == ELLIPSE:
            rx, ry = p.scale[0] * S, p.scale[1] * S
            draw.ellipse((cx - rx, cy - ry, cx + rx, cy + ry), fill=col)
        elif p.geom == POLYGON:
            c, s = math.cos(p.rotation), math.sin(p.rotation)
            lx, ly = p.verts[:, 0] * p.scale[0] * S, p.verts[:, 1] * p.scale[1] * S
            pts = list(zip((cx + c * lx - s * ly).tolist(), (cy + s * lx + c * ly).tolist()))
            draw.polygon(pts, fill=col)
    if ss > 1:
        img = img.reduce(ss) if resample == "reduce" else img.resize((size, size), Image.LANCZOS)
    return np.asarray(img)


def rate(n_images: int, fn, repeats: int) -> tuple[float, float]:
    """Images per second of ``fn`` (which draws ``n_images``): the median over ``repeats``
    timed calls after one warm-up call (JIT compilation, caches), and the inter-quartile
    range of those per-call rates."""
    fn()
    rates = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        rates.append(n_images / (time.perf_counter() - t))
    q = statistics.quantiles(rates, n=4) if len(rates) >= 2 else [rates[0]] * 3
    return statistics.median(rates), q[2] - q[0]


def run(quick: bool = False) -> dict:
    repeats = 2 if quick else 7
    batch = 16 if quick else 64
    sizes = (224,) if quick else (224, 512)
    counts = (5, 20) if quick else (5, 20, 100)
    cuda = torch.cuda.is_available()
    rows = []
    # A new process is slow for its first second or so (JIT loading, thread start-up, the
    # allocator growing its heap: fresh pages fault, and faulting threads serialise); timing
    # that would measure the process, not the renderer.
    for size in sizes:
        warm = SceneBatch.from_scenes(make_scenes(20, batch, seed=0))
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < (0.3 if quick else 1.5):
            render(warm, size, backend="numba")
    for size in sizes:
        for n in counts:
            scenes = make_scenes(n, batch, seed=n)
            small = scenes[: max(4, batch // 8)]
            row = {"size": size, "prims": n}
            # Each timing renders the batch 4 times: single ~10 ms calls are at the mercy of
            # whatever else the machine runs.
            row["numba"] = rate(4 * batch, lambda: [render(scenes, size, backend="numba") for _ in range(4)], repeats)
            collated = SceneBatch.from_scenes(scenes)
            row["numba_render"] = rate(4 * batch, lambda: [render(collated, size, backend="numba") for _ in range(4)],
                                        repeats)
            tb = len(small) if (size > 224 or n > 20) else batch // 2
            row["torch_cpu"] = rate(tb, lambda: render(scenes[:tb], size, backend="torch"), max(1, repeats // 2))
            if cuda:
                big = scenes * 16
                def on_gpu():
                    render(big, size, device="cuda", backend="torch")
                    torch.cuda.synchronize()
                row["cuda"] = rate(len(big), on_gpu, repeats)
            row["pillow"] = rate(batch, lambda: [pillow_draw(s, size) for s in scenes], repeats)
            row["pillow_ss4"] = rate(len(small), lambda: [pillow_draw(s, size, 4) for s in small], repeats)
            row["pillow_ss4_lanczos"] = rate(len(small), lambda: [pillow_draw(s, size, 4, "lanczos") for s in small],
                                              repeats)
            ours = render(small, size).permute(0, 2, 3, 1).numpy().astype(np.int16)
            ref = np.stack([pillow_draw(s, size, 4) for s in small]).astype(np.int16)
            row["mean_abs_diff_vs_ss4"] = float(np.abs(ours - ref).mean())
            rows.append(row)
            print(f"{size}px {n:>3} prims: numba {row['numba'][0]:8.0f}/s  torch {row['torch_cpu'][0]:6.0f}/s  "
                  f"pillow {row['pillow'][0]:7.0f}/s  ss4 {row['pillow_ss4'][0]:6.0f}/s  "
                  f"ss4+lanczos {row['pillow_ss4_lanczos'][0]:5.0f}/s", flush=True)
    png = {}
    imgs = render(make_scenes(20, 32, seed=99), 224)
    for level in (1, 6):
        def enc():
            for im in imgs:
                Image.fromarray(im.permute(1, 2, 0).numpy()).save(io.BytesIO(), format="PNG", compress_level=level)
        png[level] = rate(len(imgs), enc, repeats)
    meta = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit(),
            "cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "torch_threads": torch.get_num_threads(), "torch": torch.__version__, "numpy": np.__version__,
            "pillow": Image.__version__, "cuda": torch.cuda.get_device_name(0) if cuda else "none",
            "batch": batch, "repeats": repeats}
    import numba

    meta["numba"] = numba.__version__
    return {"rows": rows, "png": png, "meta": meta}


def to_markdown(res: dict) -> str:
    m = res["meta"]
    cuda = any("cuda" in r for r in res["rows"])
    head = ["size", "prims", "numba", "numba, collated batch", "torch CPU"] + (["CUDA"] if cuda else []) + [
        "Pillow", "Pillow 4x SS (reduce)", "Pillow 4x SS (LANCZOS)", "numba / SS reduce", "numba / SS LANCZOS",
        "mean abs diff vs SS (0-255)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    f = lambda v: f"{v[0]:,.0f} ± {v[1] / 2:,.0f}"  # noqa: E731
    for r in res["rows"]:
        cells = [str(r["size"]), str(r["prims"]), f(r["numba"]), f(r["numba_render"]), f(r["torch_cpu"])] + ([f(r["cuda"])] if cuda else [])
        cells += [f(r["pillow"]), f(r["pillow_ss4"]), f(r["pillow_ss4_lanczos"]),
                  f"{r['numba'][0] / r['pillow_ss4'][0]:.1f}x", f"{r['numba'][0] / r['pillow_ss4_lanczos'][0]:.1f}x",
                  f"{r['mean_abs_diff_vs_ss4']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    png = res["png"]
    meta = ", ".join(f"{k} {v}" for k, v in m.items())
    return ("Images per second (median ± half the inter-quartile range), end to end from scene objects "
            "(\"numba, collated batch\" starts from an already collated SceneBatch: the kernel without "
            "Python collation).\n\n"
            + "\n".join(lines)
            + f"\n\nPNG encoding at 224 px (Pillow, one core): compress_level 1: {png[1][0]:,.0f} images/s; "
              f"compress_level 6: {png[6][0]:,.0f} images/s.\n\nRun: {meta}.\n")


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "render-bench", "Render throughput (`procvis bench`)")


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--results")
    a = ap.parse_args()
    raise SystemExit(main(a.quick, a.results))
