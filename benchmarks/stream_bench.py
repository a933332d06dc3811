"""Streams with batched sampling against drawing one sample at a time, side by side in one
run: images/s of ``engine.stream`` (which draws batched tasks a batch at a time) and of the
one-at-a-time path (``task.sample`` per sample, then the same batched renderer) on the same
positions, at 224 px in the main process; and the stream again in a process that loaded torch
before procvis, so that torch's idle OpenMP threads spin as they do by default (procvis makes
them sleep: see ``engine/__init__.py``). Run: ``procvis bench stream [--quick] [--results ...]``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.streams import stream

from .results_file import publish, run_meta

PATTERNS = ("shapes/count/*", "shapes/*", "elvis/*", "elvis/symmetry/*", "perceptv/*")
ROOT = Path(__file__).resolve().parent.parent
SIZE, BATCH = 224, 128


def _rate(fn, images: int, repeats: int) -> float:
    """Images/s of ``fn`` (which makes ``images``): the best of ``repeats`` timed calls after a warm-up."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return images / best


def stream_rate(pattern: str, batches: int, repeats: int, ahead: bool = True) -> float:
    """Images/s of ``stream(pattern)`` over ``batches`` batches of :data:`BATCH` in this process
    (``ahead=False``: each batch drawn, then rendered, before the next is drawn)."""
    s = stream(pattern, seed=0, batch_size=BATCH, size=SIZE, count=BATCH * batches, ahead=ahead)

    def streamed():
        for b in s:
            b["images"]
    return _rate(streamed, BATCH * batches, repeats)


def spinning_rate(pattern: str, batches: int, repeats: int) -> float:
    """:func:`stream_rate` in a fresh process that imports torch before procvis, with
    ``OMP_WAIT_POLICY`` unset: torch's threads keep their default (spin before sleeping)."""
    code = (f"import torch, json; from benchmarks.stream_bench import stream_rate; "
            f"print(json.dumps(stream_rate({pattern!r}, {batches}, {repeats})))")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool = False) -> dict:
    least, repeats = (2, 1) if quick else (6, 3)
    rows = []
    for pattern in PATTERNS:
        ids = list_tasks(pattern)
        tasks = [get_task(t) for t in ids]
        # every task once at least (a stream takes its tasks in turn, so a shorter run would
        # time only the first ones: for 'elvis/*' closure and continuity)
        batches = least if quick else max(least, -(-len(ids) // BATCH))
        batched = sum(t.batched for t in tasks)
        positions = range(BATCH * batches)

        def alone():
            for lo in range(0, len(positions), BATCH):
                render_samples([tasks[i % len(tasks)].sample(0, i // len(tasks)) for i in positions[lo:lo + BATCH]],
                               SIZE)
        rows.append({"pattern": pattern, "tasks": len(ids), "batched": batched, "images": BATCH * batches,
                     "stream": stream_rate(pattern, batches, repeats),
                     "unoverlapped": stream_rate(pattern, batches, repeats, ahead=False),
                     "alone": _rate(alone, len(positions), repeats),
                     "spinning": spinning_rate(pattern, batches, repeats)})
        print(rows[-1], flush=True)
    return {"rows": rows, "meta": run_meta(batch=BATCH, size=SIZE)}


def to_markdown(r: dict) -> str:
    m = r["meta"]
    lines = [f"{m['cores']} cores, torch {m['torch']}, commit {m['commit']}, {m['date']}; batches of {BATCH} at "
             f"{SIZE} px in the main process, every task at least once, best of 3. Stream: iterated (each batch "
             "rendered on a helper thread while the next is drawn); no overlap: the same batches drawn, then "
             "rendered, one after the other; one sample at a time: `task.sample` per sample, then the batched "
             "renderer (ratio: stream / that). Last column: the stream with torch's idle threads spinning (torch "
             "imported before procvis, `OMP_WAIT_POLICY` unset).", "",
             "| pattern | tasks (batched) | images | stream, images/s | no overlap, images/s | "
             "one sample at a time, images/s | ratio | threads spinning, images/s |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in r["rows"]:
        lines.append(f"| `{row['pattern']}` | {row['tasks']} ({row['batched']}) | {row.get('images', '')} | "
                     f"{row['stream']:,.0f} | {row['unoverlapped']:,.0f} | "
                     f"{row['alone']:,.0f} | {row['stream'] / row['alone']:.1f}x | {row['spinning']:,.0f} |")
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "stream-bench", "Batched sampling in streams (`procvis bench stream`)")
