"""ELVIS dataset generation: every task x 12 images at 224 px to PNG (``procvis generate``,
both cores), against a Pillow implementation drawing the same scenes and writing the same
files, in one run; plus the render-only rates.

Every procvis sample is first turned into a scene by the task (shared by both sides); the
Pillow side then draws that scene with ``ImageDraw`` (aliased, as the public generator
draws, and 4x supersampled for procvis's anti-aliased quality), encodes the PNG and writes
the same metadata line, in two processes like procvis. Run:
``procvis bench elvis [--quick] [--results benchmarks/RESULTS.md]``.
"""
from __future__ import annotations

import io
import json
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image

from engine import render
from engine.outputs import RunConfig, generate, write_shard
from engine.registry import get_task, list_tasks

from .render_bench import pillow_draw, rate
from .results_file import publish, run_meta

SIZE = 224
PER_TASK = 12
REFERENCE_RATE = 64.0          # images/s of the public generator, one core (spec)


def _pillow_shard(args) -> int:
    tid, folder, ss = args
    samples = get_task(tid).samples(0, range(PER_TASK))
    out = Path(folder) / tid.replace("/", "__")
    out.mkdir(parents=True)
    lines = []
    for s in samples:
        img = pillow_draw(s.panels[0], SIZE, ss)
        buf = io.BytesIO()
        Image.fromarray(img).save(buf, format="PNG", compress_level=1)
        (out / f"{s.index:06d}_0.png").write_bytes(buf.getvalue())
        lines.append(json.dumps(s.record(), sort_keys=True))
    (out / "metadata.jsonl").write_text("\n".join(lines) + "\n")
    return len(samples)


def _pillow_end_to_end(tasks, folder, ss: int, workers: int = 2) -> float:
    t = time.perf_counter()
    with ProcessPoolExecutor(workers) as ex:
        n = sum(ex.map(_pillow_shard, [(tid, folder, ss) for tid in tasks], chunksize=4))
    return n / (time.perf_counter() - t)


def _procvis_end_to_end(pattern: str, folder: str, workers: int = 2) -> tuple[float, int]:
    t = time.perf_counter()
    m = generate(pattern, folder, count=PER_TASK, size=SIZE, fmt="imagefolder", workers=workers, progress=False)
    return m["total"] / (time.perf_counter() - t), m["total"]


def run(quick: bool = False) -> dict:
    everything = list_tasks("elvis/*")
    subset = everything[:: 40 if quick else 10]
    tmp = Path(tempfile.mkdtemp(prefix="procvis-elvis-bench-"))
    try:
        res = {"tasks": len(everything), "subset_tasks": len(subset)}
        # render only, from scenes sampled once
        scenes = [p for tid in subset[:24] for s in get_task(tid).samples(0, range(PER_TASK)) for p in s.panels]
        batch = scenes[:256]
        render(batch, SIZE)
        res["render_numba"] = rate(len(batch), lambda: render(batch, SIZE), 3 if quick else 7)
        few = batch[:64]
        res["render_pillow"] = rate(len(few), lambda: [pillow_draw(s, SIZE) for s in few], 3 if quick else 7)
        res["render_pillow_ss4"] = rate(len(few), lambda: [pillow_draw(s, SIZE, 4) for s in few], 3 if quick else 5)
        t = time.perf_counter()
        n = sum(len(get_task(tid).samples(0, range(PER_TASK))) for tid in subset[:60])
        res["sampling_one_core"] = n / (time.perf_counter() - t)
        # end to end on the subset, both sides, two processes each
        res["pillow_e2e"] = _pillow_end_to_end(subset, tmp / "pillow", 1)
        res["pillow_ss4_e2e"] = _pillow_end_to_end(subset[: max(8, len(subset) // 4)], tmp / "pillow4", 4)
        res["procvis_full"] = None if quick else _procvis_end_to_end("elvis/*", str(tmp / "full"))
        sub_dir = tmp / "subset"
        sub_dir.mkdir()
        res["procvis_subset"] = _procvis_subset(subset, sub_dir)
        res["meta"] = run_meta()
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _procvis_subset(tasks, folder: Path) -> float:
    """procvis on exactly the Pillow side's tasks: two processes, each generating its half."""
    halves = [tasks[0::2], tasks[1::2]]
    t = time.perf_counter()
    with ProcessPoolExecutor(2) as ex:
        n = sum(ex.map(_procvis_tasks, [(h, str(folder / str(k))) for k, h in enumerate(halves)]))
    return n / (time.perf_counter() - t)


def _procvis_tasks(args) -> int:
    import numba
    import torch

    tasks, folder = args
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    n = 0
    for tid in tasks:
        cfg = RunConfig(pattern=tid, seed=0, count=PER_TASK, size=SIZE, format="imagefolder", shard_size=PER_TASK)
        n += write_shard(folder, cfg, tid, 0)
    return n


def to_markdown(r: dict) -> str:
    f = lambda v: f"{v[0]:,.0f} ± {v[1] / 2:,.0f}"  # noqa: E731
    lines = [
        f"All {r['tasks']:,} ELVIS tasks x {PER_TASK} images at {SIZE} px, PNG + metadata.jsonl, 2 processes.",
        "",
        "| what | images/s |",
        "|---|---|",
    ]
    if r["procvis_full"]:
        rate_, n = r["procvis_full"]
        lines.append(f"| procvis `generate 'elvis/*' --count 12 --format imagefolder --workers 2` ({n:,} images) "
                     f"| **{rate_:,.0f}** ({rate_ / REFERENCE_RATE:.1f}x the public generator's 64/s) |")
    lines += [
        f"| procvis, same {r['subset_tasks']} tasks as the Pillow rows | {r['procvis_subset']:,.0f} |",
        f"| Pillow drawing the same scenes, aliased, same files | {r['pillow_e2e']:,.0f} |",
        f"| Pillow drawing the same scenes, 4x supersampled + reduce(4), same files | {r['pillow_ss4_e2e']:,.0f} |",
        f"| scene sampling alone (Python, one core) | {r['sampling_one_core']:,.0f} |",
        "",
        "Render only (scenes already sampled, 256 ELVIS images, median ± half IQR):",
        "",
        "| renderer | images/s |",
        "|---|---|",
        f"| procvis numba (both cores) | {f(r['render_numba'])} |",
        f"| Pillow ImageDraw, aliased (one core) | {f(r['render_pillow'])} |",
        f"| Pillow 4x supersampled + reduce(4) (one core) | {f(r['render_pillow_ss4'])} |",
        "",
        f"procvis end to end / Pillow end to end on the same tasks: {r['procvis_subset'] / r['pillow_e2e']:.2f}x "
        f"(aliased), {r['procvis_subset'] / r['pillow_ss4_e2e']:.2f}x (supersampled).",
        "",
        "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + ".",
    ]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "elvis-bench", "ELVIS generation (`procvis bench elvis`)")
