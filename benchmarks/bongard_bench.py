"""Bongard problem generation: problems per second end to end (sampling, the collage and
the 12 panels plus held-out ones rendered, PNG files and metadata written), per style, in
one process, against the figure reported for Bongard-LOGO's generator (about 0.12 s per
image through turtle graphics, PostScript and Ghostscript: 1.4-1.7 s per problem).
Run: ``procvis bench bongard [--quick] [--results ...]``.
"""
from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from engine.outputs import RunConfig, write_shard
from engine.registry import list_tasks

from .results_file import publish, run_meta

REFERENCE_SECONDS = (1.4, 1.7)


def run(quick: bool = False) -> dict:
    per_task = 2 if quick else 10
    tmp = Path(tempfile.mkdtemp(prefix="procvis-bongard-bench-"))
    try:
        res = {"per_task": per_task, "styles": {}}
        for panel in (128, 256):
            for style in ("classic", "aerial"):
                tasks = list_tasks(f"bongard/{style}/*")
                if panel == 128 and style == "classic":      # warm-up: JIT compilation, glyph atlas
                    write_shard(str(tmp / "warm"), RunConfig(tasks[0], 0, 2, panel, "imagefolder", 2), tasks[0], 0)
                t = time.perf_counter()
                for k, tid in enumerate(tasks):
                    cfg = RunConfig(pattern=tid, seed=0, count=per_task, size=panel, format="imagefolder",
                                    shard_size=per_task)
                    write_shard(str(tmp / f"{style}{panel}"), cfg, tid, 0)
                res["styles"][(style, panel)] = len(tasks) * per_task / (time.perf_counter() - t)
        res["meta"] = run_meta()
        return res
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def to_markdown(r: dict) -> str:
    lo, hi = REFERENCE_SECONDS
    lines = [f"{r['per_task']} problems per concept, one process: each problem is sampled, its collage, 12 panels and "
             "2 held-out panels rendered (the collage at 4.7 x 3.3 panels), PNG files and metadata written.", "",
             "| style | panel px | problems/s | s per problem | vs 1.4-1.7 s per problem |", "|---|---|---|---|---|"]
    for (style, panel), rate in r["styles"].items():
        lines.append(f"| {style} | {panel} | {rate:,.1f} | {1 / rate:.3f} | {lo * rate:,.0f}-{hi * rate:,.0f}x |")
    lines += ["", "Run: " + ", ".join(f"{k} {v}" for k, v in r["meta"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "bongard-bench", "Bongard generation (`procvis bench bongard`)")
