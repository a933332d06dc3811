"""Run with TRITON_INTERPRET=1 (or on a GPU): the largest difference, in 0..255 levels, of the
fused pass against the tiled torch path and against numba, on scenes of every geometry the
fused pass draws and an empty one, at a canvas size that is not a multiple of the tile, whole
and cut into chunks, over scene colours and over a background image. Prints one JSON line."""
import json
import os
import sys

import torch

from benchmarks.render_bench import make_scenes
from engine import Scene
from engine.rendering import render
from kernels import raster_torch


def every_geometry() -> list[Scene]:
    """Scenes of outlines, rings, strokes, rotations, transparency and explicit draw order."""
    a = Scene(background=(250, 250, 240))
    a.circle((0.3, 0.3), 0.2, color=(200, 30, 30), fill=False, stroke=0.03)
    a.ring((0.7, 0.3), 0.2, 0.12, color=(30, 30, 200), alpha=0.6)
    a.ellipse((0.5, 0.7), (0.3, 0.1), rotation=30, color=(20, 160, 20), alpha=0.5, order=2)
    a.star((0.5, 0.5), 0.3, points=7, rotation=12, color=(240, 200, 0), order=1)
    a.polygon((0.2, 0.8), 0.15, 6, color=(0, 0, 0), fill=False, stroke=0.01)
    b = Scene(background=(20, 20, 20))
    b.spline([(0.05, 0.9), (0.3, 0.1), (0.6, 0.8), (0.95, 0.2)], width=0.02, color=(255, 255, 255))
    b.line((0.1, 0.1), (0.9, 0.5), width=0.04, color=(0, 200, 200), alpha=0.7)
    b.arrow((0.8, 0.9), (0.3, 0.6), width=0.02, color=(250, 120, 0))
    b.heart((0.25, 0.35), 0.15, rotation=-40, color=(255, 0, 120))
    b.pacman((0.7, 0.7), 0.15, mouth=70, direction=200, color=(255, 255, 0))
    b.triangle((0.0, 0.0), (1.2, 0.1), (0.5, -0.3), color=(90, 90, 250))          # leaves the canvas
    return [a, b]


def _render(scenes, size, device, background=None, fused=True, budgets=None):
    """Rendered ``[B,3,H,W]`` int32 on the CPU: with the fused pass or the tiled path, with the
    torch path's work budgets replaced by ``budgets`` (small ones cut the batch into chunks)."""
    saved = raster_torch.budgets
    if budgets:
        raster_torch.budgets = lambda dev: budgets
    if not fused:
        os.environ[raster_torch.FUSED_ENV] = "0"
    try:
        return render(scenes, size, device=device, backend="torch", background=background).cpu().int()
    finally:
        raster_torch.budgets = saved
        os.environ.pop(raster_torch.FUSED_ENV, None)


def main(device: str) -> dict:
    """Largest differences of the fused pass from the tiled path and from numba, whole
    batches and a batch cut into chunks (at most 7 entries each, or one scene), over scene
    colours and over a background image."""
    # interpreted on the CPU every scene costs seconds: 6 random ones there (with the other
    # three, still more scenes than the 7-entry chunks below hold), 20 on a GPU
    scenes = every_geometry() + make_scenes(6 if device == "cpu" else 20, 2, seed=5) + [Scene()]
    size = (40, 56)
    assert raster_torch._fused(torch.device(device)) is not None
    photo = torch.rand(len(scenes), 3, *size, generator=torch.Generator().manual_seed(1))
    out = {"tiled": 0, "numba": 0}
    for background, budgets in ((None, None), (photo, None), (None, (7, 1 << 24))):
        numba = render(scenes, size, device="cpu", backend="numba", background=background).int()
        fused = _render(scenes, size, device, background, True, budgets)
        tiled = _render(scenes, size, device, background, False, budgets)
        out["tiled"] = max(out["tiled"], (fused - tiled).abs().max().item())
        out["numba"] = max(out["numba"], (fused - numba).abs().max().item())
    out["drawn"] = (fused[:-1] != fused[:-1, :, :1, :1]).float().mean().item()     # the empty scene aside
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "cpu")))
