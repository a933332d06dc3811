"""Jigsaw generation: how fast the built-in photographs are drawn, and items per second end
to end for every Jigsaw task on them (the photos drawn on first use, hard distractors
searched, panels rendered, PNG files and metadata written), in one process.
Run: ``procvis bench jigsaw [--quick] [--results ...]``.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from engine.outputs import RunConfig, write_shard
from engine.registry import list_tasks

from .results_file import publish, run_meta


def _photos(n: int, size: int) -> dict:
    """Seconds per built-in photo at ``size`` px, split into the numpy textures and the rest."""
    from scenes.jigsaw import photos

    photos.photo(10_000, 0, size)                     # warm-up: kernel compilation
    t = time.perf_counter()
    for k in range(n):
        photos.photo(20_000 + k // photos.SHOTS, k % photos.SHOTS, size)
    total = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for k in range(n):
        pl = photos.place(20_000 + k // photos.SHOTS)
        photos.background(pl, k, size)
    return {"total": total, "background": (time.perf_counter() - t) / n}


def run(quick: bool = False) -> dict:
    n, per_task = (10, 4) if quick else (60, 40)
    res = {"per_task": per_task, "photos": {s: _photos(n, s) for s in (384, 768)}, "tasks": {}}
    tmp = Path(tempfile.mkdtemp(prefix="procvis-jigsaw-bench-"))
    try:
        for tid in list_tasks("jigsaw/*"):
            cfg = RunConfig(pattern=tid, seed=0, count=per_task, size=224, format="imagefolder", shard_size=per_task)
            t = time.perf_counter()
            write_shard(str(tmp / tid.replace("/", "_")), cfg, tid, 0)
            res["tasks"][tid] = per_task / (time.perf_counter() - t)
        res["meta"] = run_meta()
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def to_markdown(r: dict) -> str:
    lines = ["Built-in photographs (`scenes/jigsaw/photos.py`), drawn one at a time as the tasks ask for them:", "",
             "| photo px | photos/s | ms per photo | of which numpy textures (ms) |", "|---|---|---|---|"]
    for size, p in r["photos"].items():
        lines.append(f"| {size} | {1 / p['total']:,.1f} | {1000 * p['total']:.0f} | {1000 * p['background']:.0f} |")
    lines += ["", f"Items per second, {r['per_task']} items per task at 224 px panels, one process, photos drawn on "
              "first use (each process draws every photo it touches once; hard items also draw the photos their "
              "distractors come from):", "", "| task | items/s |", "|---|---|"]
    lines += [f"| `{t}` | {v:,.1f} |" for t, v in r["tasks"].items()]
    lines += ["", "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "jigsaw-bench", "Jigsaw generation (`procvis bench jigsaw`)")
