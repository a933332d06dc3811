"""Where generation time goes, per family, in one process: sampling (the task's Python),
collation (scenes into padded tensors), rendering (the batched kernels), PNG encoding and
writing files with metadata, per sample, beside the end-to-end rate of ``procvis generate``'s
shard writer on the same tasks. Run: ``procvis bench profile [--quick] [--results ...]``.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from engine.batch import SceneBatch
from engine.canvas import canvas_size
from engine.outputs import RunConfig, encode_png, write_shard
from engine.registry import get_task, list_tasks
from engine.rendering import render

from .results_file import publish, run_meta

FAMILIES = ("shapes/*", "elvis/*", "perceptv/*", "kiva/*", "bongard/classic/*", "bongard/aerial/*", "jigsaw/*")
SIZE = 224
STAGES = ("sampling", "collation", "rendering", "encoding", "writing")


def _tasks(pattern: str, n: int) -> list[str]:
    """Up to ``n`` task ids of ``pattern``, spread evenly over its sorted list."""
    ids = list_tasks(pattern)
    return [ids[k * len(ids) // n] for k in range(min(n, len(ids)))]


def _stages(pattern: str, per_task: int, n_tasks: int, tmp: Path) -> dict:
    """Seconds per sample in each of :data:`STAGES` for ``per_task`` samples of ``n_tasks``
    tasks of ``pattern``."""
    times = dict.fromkeys(STAGES, 0.0)
    count = 0
    for tid in _tasks(pattern, n_tasks):
        t = time.perf_counter()
        samples = get_task(tid).samples(1, range(per_task))
        times["sampling"] += time.perf_counter() - t
        groups: dict = {}
        for s in samples:
            for k, p in enumerate(s.panels):
                groups.setdefault(s.panel_hw(k, canvas_size(SIZE)), []).append(p)
        images = []
        for hw, panels in groups.items():
            t = time.perf_counter()
            batch = SceneBatch.from_scenes(panels)
            times["collation"] += time.perf_counter() - t
            t = time.perf_counter()
            images += list(render(batch, hw))
            times["rendering"] += time.perf_counter() - t
        t = time.perf_counter()
        blobs = [encode_png(im) for im in images]
        times["encoding"] += time.perf_counter() - t
        t = time.perf_counter()
        with open(tmp / "metadata.jsonl", "a") as meta:
            for k, (s, blob) in enumerate(zip(samples, blobs)):
                (tmp / f"{count + k}.png").write_bytes(blob)
                meta.write(json.dumps(s.record()) + "\n")
        times["writing"] += time.perf_counter() - t
        count += len(samples)
    return {k: v / count for k, v in times.items()} | {"n": count}


def _end_to_end(pattern: str, per_task: int, n_tasks: int, tmp: Path) -> float:
    """Samples per second through the dataset shard writer (imagefolder) on the same tasks."""
    count, t = 0, time.perf_counter()
    for tid in _tasks(pattern, n_tasks):
        cfg = RunConfig(pattern=tid, seed=2, count=per_task, size=SIZE, format="imagefolder", shard_size=per_task)
        write_shard(str(tmp / tid.replace("/", "_")), cfg, tid, 0)
        count += per_task
    return count / (time.perf_counter() - t)


def run(quick: bool = False) -> dict:
    per_task, n_tasks = (4, 2) if quick else (16, 8)
    tmp = Path(tempfile.mkdtemp(prefix="procvis-profile-bench-"))
    kept = os.environ.get("PROCVIS_PHOTO_CACHE")
    os.environ["PROCVIS_PHOTO_CACHE"] = str(tmp / "photos")     # Jigsaw's photos drawn here, as a first run draws them
    try:
        render([get_task("shapes/count/circle").sample(0, 0).panels[0]], SIZE)       # warm-up: kernel compilation
        res = {"per_task": per_task, "n_tasks": n_tasks, "families": {}}
        for pattern in FAMILIES:
            (tmp / "stages").mkdir(exist_ok=True)
            stages = _stages(pattern, per_task, n_tasks, tmp / "stages")
            res["families"][pattern] = {**stages, "end_to_end": _end_to_end(pattern, per_task, n_tasks, tmp)}
            shutil.rmtree(tmp / "stages")
        res["meta"] = run_meta()
        return res
    finally:
        if kept is None:
            os.environ.pop("PROCVIS_PHOTO_CACHE", None)
        else:
            os.environ["PROCVIS_PHOTO_CACHE"] = kept
        shutil.rmtree(tmp, ignore_errors=True)


def to_markdown(r: dict) -> str:
    lines = [f"Milliseconds per sample by stage ({r['per_task']} samples of each of up to {r['n_tasks']} tasks per "
             f"family, {SIZE} px, one process, after a warm-up), and samples per second end to end through the shard "
             "writer (sample, render, PNG, metadata) on the same tasks; Jigsaw's built-in photos drawn in the run "
             "(an empty photo cache, as in a machine's first run):", "",
             "| family | " + " | ".join(STAGES) + " | total ms | generate samples/s |",
             "|---|" + "---|" * (len(STAGES) + 2)]
    for pattern, f in r["families"].items():
        total = sum(f[s] for s in STAGES)
        lines.append(f"| `{pattern}` | " + " | ".join(f"{1000 * f[s]:.2f}" for s in STAGES)
                     + f" | {1000 * total:.2f} | {f['end_to_end']:,.1f} |")
    lines += ["", "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "profile-bench", "Where generation time goes (`procvis bench profile`)")
