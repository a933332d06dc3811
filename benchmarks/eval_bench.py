"""Evaluation throughput: samples per second from sampling to parsed answer with the tiny
checkpoint, in process (rendered tensors go straight into the processor) against the file
round trip older harnesses use (render -> PNG file -> PIL -> tensor -> processor), in one
run. Run: ``procvis bench eval [--results benchmarks/RESULTS.md]``.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from engine.outputs import render_samples
from engine.registry import get_task, list_tasks
from evals.hf_runner import HFRunner
from engine.replies import parse_reply
from engine.protocol import Request
from evals.tiny_model import build_tiny_model

from .render_bench import rate
from .results_file import publish

PATTERN = "shapes/*"


def _requests(samples, images):
    return [Request(id=s.id, task=s.task, images=ims, prompt=s.question, answer_type=s.answer_type,
                    options=s.options, gold=s.answer_text) for s, ims in zip(samples, images)]


def _via_files(images, folder: Path):
    out = []
    for k, ims in enumerate(images):
        back = []
        for j, im in enumerate(ims):
            path = folder / f"{k}_{j}.png"
            Image.fromarray(im.permute(1, 2, 0).numpy()).save(path, format="PNG")
            with Image.open(path) as f:
                back.append(torch.from_numpy(np.asarray(f.convert("RGB")).copy()).permute(2, 0, 1))
        out.append(back)
    return out


def run(quick: bool = False) -> dict:
    n = 16 if quick else 64
    size = 224
    repeats = 2 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        runner = HFRunner(build_tiny_model(Path(tmp) / "tiny"), batch_size=8, max_new_tokens=8)
        tasks = [get_task(t) for t in list_tasks(PATTERN)]

        def samples():
            return [tasks[i % len(tasks)].sample(0, i // len(tasks)) for i in range(n)]

        def in_process():
            ss = samples()
            replies = runner.generate(_requests(ss, render_samples(ss, size)))
            return [parse_reply(r, s.answer_type, s.options) for r, s in zip(replies, ss)]

        def file_round_trip():
            ss = samples()
            with tempfile.TemporaryDirectory() as d:
                images = _via_files(render_samples(ss, size), Path(d))
            replies = runner.generate(_requests(ss, images))
            return [parse_reply(r, s.answer_type, s.options) for r, s in zip(replies, ss)]

        res = {name: rate(n, fn, repeats) for name, fn in (("in_process", in_process),
                                                             ("file_round_trip", file_round_trip))}
        same = [p.value for p in in_process()] == [p.value for p in file_round_trip()]
    return {"rates": res, "n": n, "size": size, "same_answers": same, "runner": runner.name}


def to_markdown(r: dict) -> str:
    ip, fr = r["rates"]["in_process"], r["rates"]["file_round_trip"]
    return (f"Samples per second from sampling to parsed answer, tiny checkpoint (`procvis tiny-model`, greedy, "
            f"8 new tokens, batch 8), {r['n']} `{PATTERN}` samples at {r['size']} px, median of repeats (± half "
            f"the inter-quartile range):\n\n| path | samples/s |\n|---|---|\n"
            f"| in process (tensors into the processor) | {ip[0]:,.1f} ± {ip[1] / 2:,.1f} |\n"
            f"| file round trip (PNG file, PIL, tensor) | {fr[0]:,.1f} ± {fr[1] / 2:,.1f} |\n\n"
            f"Speed-up {ip[0] / fr[0]:.2f}x; both paths gave the same answers: {r['same_answers']}.\n")


def main(quick: bool = False, out: str | None = None) -> int:
    return publish(to_markdown(run(quick)), out, "eval-bench", "Evaluation throughput (`procvis bench eval`)")
