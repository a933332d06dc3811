"""Jigsaw generation: how fast the built-in photographs are drawn, and items per second end
to end for every Jigsaw task on them (hard distractors searched, panels rendered, PNG files
and metadata written), in a first process that draws every photo it touches (an empty photo
cache) and in a second one that reads them from the disk cache the first filled
(:mod:`scenes.jigsaw.photo_cache`). Run: ``procvis bench jigsaw [--quick] [--results ...]``.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.outputs import RunConfig, write_shard
from engine.registry import list_tasks

from .results_file import publish, run_meta

ROOT = Path(__file__).resolve().parent.parent


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


def items_per_s(per_task: int) -> dict:
    """Items per second of every Jigsaw task, ``per_task`` items each through the shard writer
    (imagefolder, 224 px), in this process, after a warm-up at another photo size."""
    from scenes.jigsaw import photos

    photos.photo(10_000, 0, 96)                       # kernel compilation, outside the photo cache's sizes
    tmp = Path(tempfile.mkdtemp(prefix="procvis-jigsaw-bench-"))
    try:
        rates = {}
        for tid in list_tasks("jigsaw/*"):
            cfg = RunConfig(pattern=tid, seed=0, count=per_task, size=224, format="imagefolder", shard_size=per_task)
            t = time.perf_counter()
            write_shard(str(tmp / tid.replace("/", "_")), cfg, tid, 0)
            rates[tid] = per_task / (time.perf_counter() - t)
        return rates
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _in_a_new_process(per_task: int, cache: Path) -> dict:
    """:func:`items_per_s` in a fresh process whose photo cache is ``cache``."""
    code = f"import json; from benchmarks.jigsaw_bench import items_per_s; print(json.dumps(items_per_s({per_task})))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "PROCVIS_PHOTO_CACHE": str(cache)})
    if out.returncode:
        raise RuntimeError(f"the timed process failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool = False) -> dict:
    n, per_task = (10, 4) if quick else (60, 40)
    res = {"per_task": per_task, "photos": {s: _photos(n, s) for s in (384, 768)}}
    cache = Path(tempfile.mkdtemp(prefix="procvis-jigsaw-cache-"))
    try:
        res["tasks"] = _in_a_new_process(per_task, cache)          # an empty photo cache
        res["tasks_kept"] = _in_a_new_process(per_task, cache)     # the photos the first one kept
        res["meta"] = run_meta()
        return res
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def to_markdown(r: dict) -> str:
    lines = ["Built-in photographs (`scenes/jigsaw/photos.py`), drawn one at a time as the tasks ask for them:", "",
             "| photo px | photos/s | ms per photo | of which numpy textures (ms) |", "|---|---|---|---|"]
    for size, p in r["photos"].items():
        lines.append(f"| {size} | {1 / p['total']:,.1f} | {1000 * p['total']:.0f} | {1000 * p['background']:.0f} |")
    lines += ["", f"Items per second, {r['per_task']} items per task at 224 px panels through the shard writer: in a "
              "first process with an empty photo cache (it draws every photo it touches; hard items also draw the "
              "photos their distractors come from) and in the next process, which reads them from the disk cache "
              "(`scenes/jigsaw/photo_cache.py`):", "", "| task | first process, items/s | next process, items/s |",
              "|---|---|---|"]
    lines += [f"| `{t}` | {v:,.1f} | {r['tasks_kept'][t]:,.1f} |" for t, v in r["tasks"].items()]
    lines += ["", "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "jigsaw-bench", "Jigsaw generation (`procvis bench jigsaw`)")
