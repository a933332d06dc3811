"""Streams with batched sampling against drawing one sample at a time, side by side in one
run: images/s of ``engine.stream`` (which draws batched tasks a batch at a time) and of the
one-at-a-time path (``task.sample`` per sample, then the same batched renderer) on the same
positions, at 224 px in the main process. Run: ``procvis bench stream [--quick] [--results ...]``.
"""
from __future__ import annotations

import time

from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from engine.streams import stream

from .results_file import publish, run_meta

PATTERNS = ("shapes/count/*", "shapes/*", "elvis/*")
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


def run(quick: bool = False) -> dict:
    batches, repeats = (2, 1) if quick else (6, 3)
    rows = []
    for pattern in PATTERNS:
        s = stream(pattern, seed=0, batch_size=BATCH, size=SIZE, count=BATCH * batches)
        ids = list_tasks(pattern)
        tasks = [get_task(t) for t in ids]
        batched = sum(t.batched for t in tasks)

        def streamed():
            for b in s:
                b["images"]
        positions = range(BATCH * batches)

        def alone():
            for lo in range(0, len(positions), BATCH):
                render_samples([tasks[i % len(tasks)].sample(0, i // len(tasks)) for i in positions[lo:lo + BATCH]],
                               SIZE)
        rows.append({"pattern": pattern, "tasks": len(ids), "batched": batched,
                     "stream": _rate(streamed, len(positions), repeats), "alone": _rate(alone, len(positions), repeats)})
        print(rows[-1], flush=True)
    return {"rows": rows, "meta": run_meta(batch=BATCH, size=SIZE)}


def to_markdown(r: dict) -> str:
    m = r["meta"]
    lines = [f"{m['cores']} cores, torch {m['torch']}, commit {m['commit']}, {m['date']}; batches of {BATCH} at "
             f"{SIZE} px in the main process, best of 3.", "",
             "| pattern | tasks (batched) | stream, images/s | one sample at a time, images/s | ratio |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for row in r["rows"]:
        lines.append(f"| `{row['pattern']}` | {row['tasks']} ({row['batched']}) | {row['stream']:,.0f} | "
                     f"{row['alone']:,.0f} | {row['stream'] / row['alone']:.1f}x |")
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "stream-bench", "Batched sampling in streams (`procvis bench stream`)")
