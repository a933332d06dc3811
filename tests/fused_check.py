"""Run with TRITON_INTERPRET=1 (or on a GPU): the largest difference, in 0..255 levels, of the
fused pass against the tiled torch path and against numba, on scenes of every geometry the
fused pass draws, at a canvas size that is not a multiple of the tile. Prints one JSON line."""
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


def main(device: str) -> dict:
    scenes = every_geometry() + make_scenes(20, 3, seed=5)
    size = (56, 72)
    assert raster_torch._fused(torch.device(device)) is not None
    fused = render(scenes, size, device=device, backend="torch").cpu().int()
    os.environ[raster_torch.FUSED_ENV] = "0"
    tiled = render(scenes, size, device=device, backend="torch").cpu().int()
    os.environ.pop(raster_torch.FUSED_ENV)
    numba = render(scenes, size, device="cpu", backend="numba").int()
    return {"tiled": (fused - tiled).abs().max().item(), "numba": (fused - numba).abs().max().item(),
            "drawn": (fused != fused[:, :, :1, :1]).float().mean().item()}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1] if len(sys.argv) > 1 else "cpu")))
