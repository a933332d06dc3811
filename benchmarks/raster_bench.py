"""Replaced kernels, before and after, in one run: the numba rasterizer (split into small
functions, output pool without reference counts), the torch rasterizer's glyph and sprite
sampling (hand-written bilinear gather -> ``grid_sample``), and the sprite warps (affine
grid -> kornia) and copies (straight -> premultiplied alpha).

The "before" code is read from git at ``BEFORE`` (the last commit with the old kernels) and
run on the same inputs as the current code in the same benchmark run: the torch and sprite
rows interleave both in one process; the numba rows alternate child processes (each times
one kernel) and keep each side's best round, because numba's dispatcher caches argument
types per process and two kernels in one process disturb each other's timings.
Run: ``procvis bench raster [--quick] [--results benchmarks/RESULTS.md]``.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from engine import Scene, SceneBatch
from kernels import raster_numba, raster_torch
from kernels import sprites as new_sprites
from kernels.glyphs import load_atlas
from kernels.raster import prepare

from .render_bench import make_scenes
from .results_file import publish, run_meta

BEFORE = "2741456"
ROOT = Path(__file__).resolve().parents[1]
# The old modules imported their structures from kernels.raster; they now live in kernels.primitives.
SHIM = "from kernels.primitives import *  # noqa\nfrom kernels.raster import world_vertices  # noqa\n"


def _old_module(path: str, name: str, folder: Path):
    """Module ``name`` from ``git show BEFORE:path``, its ``from .raster`` import pointed at the shim."""
    src = subprocess.run(["git", "show", f"{BEFORE}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    (folder / f"{name}.py").write_text(src.replace("from .raster import", "from _old_shim import"))
    import importlib

    return importlib.import_module(name)


def _seconds(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def _pair(old_fn, new_fn, n: int, repeats: int) -> tuple[float, float]:
    """Items per second (median) of two functions doing ``n`` items, their calls interleaved
    so that drift hits both alike."""
    old_fn(), new_fn()                              # compile and warm up
    olds, news = zip(*((_seconds(old_fn), _seconds(new_fn)) for _ in range(repeats)))
    return n / statistics.median(olds), n / statistics.median(news)


NUMBA_CASES = ((224, 5), (224, 20), (224, 100), (512, 20), (512, 100))


def _numba_child(which: str, runs: int) -> dict:
    """Images per second of one numba kernel (``old`` or ``new``), best of ``runs`` batches of 64."""
    kernel = raster_numba
    if which == "old":
        folder = Path(tempfile.mkdtemp(prefix="procvis-raster-bench-"))
        (folder / "_old_shim.py").write_text(SHIM)
        sys.path.insert(0, str(folder))
        kernel = _old_module("kernels/raster_numba.py", "_old_raster_numba", folder)
    out, atlas = {}, load_atlas().sdf
    for size, prims in NUMBA_CASES:
        batch = SceneBatch.from_scenes(make_scenes(prims, 64, seed=prims))
        prep = raster_numba.prepare(batch.primitives, size, size)
        args = (prep, size, size, batch.background.numpy(), None, atlas, batch.sprites.contiguous().numpy(),
                batch.sprite_hw.numpy().astype(np.int64))
        kernel.rasterize(*args)
        out[f"{size} px, {prims} shapes"] = 64 / min(_seconds(lambda: kernel.rasterize(*args)) for _ in range(runs))
    return out


def _numba_rows(quick: bool) -> list[dict]:
    best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
    for _ in range(3 if quick else 8):
        for which in ("old", "new"):
            cmd = [sys.executable, "-m", "benchmarks.raster_bench", "--child", which, "--runs", "5" if quick else "15"]
            rates = json.loads(subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout)
            for case, rate in rates.items():
                best[which][case] = max(best[which].get(case, 0.0), rate)
    return [{"op": f"numba raster, {case}", "before": best["old"][case], "after": best["new"][case]}
            for case in best["new"]]


def _text_and_sprites(rng: np.random.Generator, n: int = 12) -> Scene:
    """Random text lines and RGBA sprites (what the sampling change touches), rotated."""
    s = Scene(background=tuple(int(v) for v in rng.integers(0, 256, 3)))
    for k in range(n):
        c, rot = tuple(rng.uniform(0.1, 0.9, 2)), float(rng.uniform(-180, 180))
        if k % 2:
            s.text("AbQ09?!", c, height=float(rng.uniform(0.04, 0.2)), rotation=rot,
                   color=tuple(int(v) for v in rng.integers(0, 256, 3)))
        else:
            img = rng.integers(0, 256, size=(4, 24, 31)).astype(np.uint8)
            s.sprite(img, c, (float(rng.uniform(0.1, 0.4)), float(rng.uniform(0.1, 0.4))), rotation=rot)
    return s


def _torch_rows(old, quick: bool) -> list[dict]:
    rng = np.random.default_rng(3)
    scenes = [_text_and_sprites(rng) for _ in range(16)]
    batch = SceneBatch.from_scenes(scenes)
    atlas = torch.from_numpy(load_atlas().sdf)
    out = []
    for size in (128, 256):
        prep = prepare(batch.primitives, size, size)
        bg = batch.background[:, :, None, None].expand(16, 3, size, size)
        args = (prep, size, size, bg, atlas, batch.sprites, batch.sprite_hw)
        a, b = _pair(lambda: old.rasterize(*args), lambda: raster_torch.rasterize(*args), 16, 3 if quick else 7)
        out.append({"op": f"torch raster, text + sprites, {size} px", "before": a, "after": b})
    return out


def _sprite_rows(old, quick: bool) -> list[dict]:
    g = torch.Generator().manual_seed(0)
    s = (torch.rand(32, 4, 128, 128, generator=g) * 255).to(torch.uint8)
    one = s[0]
    ops = [("sprite scale x0.45", lambda m: m.scale(s, 0.45)), ("sprite stretch x2 (one axis)", lambda m: m.scale(s, 2.0, 1.0)),
           ("sprite rotate 45", lambda m: m.rotate(s, 45)), ("sprite reflect", lambda m: m.reflect(s, "y")),
           ("sprite copies x4 (one canvas)", lambda m: torch.stack([m.copies(one, 4) for _ in range(32)]))]
    rows = []
    for name, op in ops:
        a, b = _pair(lambda: op(old), lambda: op(new_sprites), 32, 5 if quick else 15)
        rows.append({"op": name, "before": a, "after": b})
    return rows


def run(quick: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="procvis-raster-bench-") as tmp:
        folder = Path(tmp)
        (folder / "_old_shim.py").write_text(SHIM)
        sys.path.insert(0, str(folder))
        try:
            old_torch = _old_module("kernels/raster_torch.py", "_old_raster_torch", folder)
            old_sprites = _old_module("scenes/kiva/transforms.py", "_old_sprites", folder)
            rows = _numba_rows(quick) + _torch_rows(old_torch, quick) + _sprite_rows(old_sprites, quick)
        finally:
            sys.path.remove(str(folder))
    return {"rows": rows, "meta": run_meta(torch_threads=torch.get_num_threads(), before=BEFORE)}


def to_markdown(r: dict) -> str:
    lines = [f"Images per second of the code at commit {r['meta']['before']} (before) and now (after), same inputs, "
             "same run: the numba rows are each side's best of alternating processes (batches of 64, both cores), "
             "the others medians of interleaved repeats.", "",
             "| operation | before | after | after / before |", "|---|---|---|---|"]
    for row in r["rows"]:
        lines.append(f"| {row['op']} | {row['before']:,.0f} | {row['after']:,.0f} | "
                     f"{row['after'] / row['before']:.2f}x |")
    meta = ", ".join(f"{k} {v}" for k, v in r["meta"].items())
    return "\n".join(lines) + f"\n\nRun: {meta}.\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "raster-bench", "Replaced kernels, before and after (`procvis bench raster`)")


if __name__ == "__main__":
    if "--child" in sys.argv:
        runs = int(sys.argv[sys.argv.index("--runs") + 1])
        print(json.dumps(_numba_child(sys.argv[sys.argv.index("--child") + 1], runs)))
    else:
        sys.exit(main(quick="--quick" in sys.argv))
