"""KiVA trial generation for the kids', adults' and compositional variants: trials per
second end to end with sprites cached (sampling, the measured choice of objects, the tensor
transforms, the composite and six panels rendered at the native size, PNG files and metadata
written, one process), against the public scripts' 3-31 trials/s, and the one-off cost of
rendering a new object's sprite. Run: ``procvis bench kiva [--quick] [--results ...]``.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from engine.outputs import RunConfig, write_shard
from engine.registry import list_tasks
from kernels.mesh_render import render_parts
from scenes.kiva.objects import OBJECTS, build
from scenes.kiva.presentation import NATIVE
from scenes.kiva.trials import SPRITE
from scenes.kiva.views import sprite

from .results_file import publish, run_meta

REFERENCE = (3.0, 31.0)


def run(quick: bool = False) -> dict:
    per_task = 4 if quick else 20
    tmp = Path(tempfile.mkdtemp(prefix="procvis-kiva-bench-"))
    try:
        for name in OBJECTS:                      # fill the sprite cache first
            sprite(name, "front", SPRITE)
        res = {"per_task": per_task, "domains": {}}
        for tid in list_tasks("kiva*/*"):
            variant, domain = tid.split("/")[:2]
            t = time.perf_counter()
            write_shard(str(tmp), RunConfig(tid, 0, per_task, NATIVE, "imagefolder", per_task), tid, 0)
            dt = time.perf_counter() - t
            n, s = res["domains"].get(f"{variant}/{domain}", (0, 0.0))
            res["domains"][f"{variant}/{domain}"] = (n + per_task, s + dt)
        names = OBJECTS[:6 if quick else 20]
        t = time.perf_counter()
        for name in names:
            render_parts(build(name), "front", SPRITE)
        res["sprite_ms"] = (time.perf_counter() - t) / len(names) * 1000
        res["meta"] = run_meta()
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def to_markdown(r: dict) -> str:
    lo, hi = REFERENCE
    lines = [f"{r['per_task']} trials per sub-domain, one process, sprites cached, panels at the native size (the "
             f"composite {NATIVE} x {NATIVE * 5 // 8} px and six separate images of {NATIVE // 3} px), PNG files and "
             "metadata written.", "",
             "| domain | trials/s | vs the public scripts' 3-31 trials/s |", "|---|---|---|"]
    total_n = total_s = 0
    for d, (n, s) in sorted(r["domains"].items()):
        lines.append(f"| {d} | {n / s:,.1f} | {n / s / hi:.1f}-{n / s / lo:.0f}x |")
        total_n, total_s = total_n + n, total_s + s
    lines += [f"| all | {total_n / total_s:,.1f} | {total_n / total_s / hi:.1f}-{total_n / total_s / lo:.0f}x |", "",
              f"Rendering a new object's sprite (open3d mesh → pyrender/EGL, {SPRITE} px): {r['sprite_ms']:.0f} ms, once per "
              "(object, view, size); later trials read it from the cache.", "",
              "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "kiva-bench", "KiVA trial generation (`procvis bench kiva`)")
