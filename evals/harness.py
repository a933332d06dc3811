"""``evaluate``: samples -> rendered images -> requests -> runner -> parsed, scored results.

The direct protocol: one request per sample with every panel as an image and the sample's
question as the prompt. Results are cached per request in ``DIR/cache.jsonl`` keyed by
(sample id, runner, protocol, image size), so an interrupted run resumes without asking the
model again; ``DIR/results.json`` and ``DIR/summary.md`` are rewritten at the end.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from engine.outputs import render_samples
from engine.registry import resolve

from .baselines import chance, critical_accuracy, percent
from .parsing import is_correct, parse_reply
from .runners import Request, Runner, answer_space

PROTOCOL = "direct"


def _key(sample_id: str, runner: Runner, size: int) -> str:
    return json.dumps([sample_id, runner.name, PROTOCOL, size])


def evaluate(pattern: str, runner: Runner, out: str, count: int = 10, seed: int = 0, batch_size: int = 8,
             size: int = 224, progress: bool = True) -> dict:
    """Run ``runner`` on ``count`` samples of every task matching ``pattern``; write
    ``results.json``, ``summary.md`` and the resume cache under ``out``. Returns the summary."""
    if int(count) != count or count <= 0:
        raise ValueError(f"count={count!r} must be a positive integer")
    if int(batch_size) != batch_size or batch_size <= 0:
        raise ValueError(f"batch_size={batch_size!r} must be a positive integer")
    tasks = resolve(pattern)
    root = Path(out)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"cannot create output directory {str(root)!r}: {e.strerror}") from None
    cache_path = root / "cache.jsonl"
    cache: dict[str, str] = {}
    if cache_path.exists():
        for line in cache_path.read_text().splitlines():
            try:
                rec = json.loads(line)
                cache[rec["key"]] = rec["reply"]
            except (json.JSONDecodeError, KeyError):
                continue   # a line cut short by an interruption
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks) * count, unit="request", desc=f"eval {runner.name}", file=sys.stderr)
    results = []
    with open(cache_path, "a") as cache_file:
        for task in tasks:
            samples = task.samples(seed, range(count))
            for lo in range(0, count, batch_size):
                chunk = samples[lo:lo + batch_size]
                todo = [s for s in chunk if _key(s.id, runner, size) not in cache]
                if todo:
                    images = render_samples(todo, size)
                    reqs = [Request(id=s.id, task=s.task, images=ims, prompt=s.question, answer_type=s.answer_type,
                                    options=s.options, gold=s.answer_text) for s, ims in zip(todo, images)]
                    replies = runner.generate(reqs)
                    if len(replies) != len(reqs) or not all(isinstance(r, str) for r in replies):
                        raise ValueError(f"runner {runner.name!r} returned {len(replies)} replies for {len(reqs)} "
                                         "requests (expected one string per request)")
                    for s, reply in zip(todo, replies):
                        cache[_key(s.id, runner, size)] = reply
                        cache_file.write(json.dumps({"key": _key(s.id, runner, size), "reply": reply}) + "\n")
                    cache_file.flush()
                    os.fsync(cache_file.fileno())
                for s in chunk:
                    reply = cache[_key(s.id, runner, size)]
                    parsed = parse_reply(reply, s.answer_type, s.options)
                    results.append({"id": s.id, "task": s.task, "prompt": s.question, "reply": reply,
                                    "parsed": parsed.value, "correct": is_correct(parsed, s.answer_text, s.answer_type),
                                    "format_error": parsed.format_error, "gold": s.answer_text})
                if bar:
                    bar.update(len(chunk))
    if bar:
        bar.close()
    summary = summarise(results)
    _write(root / "results.json", json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    _write(root / "summary.md", to_markdown(summary, runner.name, pattern, count, seed)
           + "\n![accuracy per task](accuracy.png)\n\nBars: accuracy; grey tick: chance; red tick: p<0.05.\n")
    from .plots import accuracy_bars

    accuracy_bars(summary, root / "accuracy.png", f"{runner.name} on {pattern}")
    return summary


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(text)
    tmp.replace(path)


def summarise(results: list[dict]) -> dict:
    """Per task: n, accuracy, format errors, chance and the p<0.05 critical accuracy."""
    by_task: dict[str, list[dict]] = {}
    for r in results:
        by_task.setdefault(r["task"], []).append(r)
    rows = {}
    for task, rs in by_task.items():
        n = len(rs)
        p0 = chance(dict(answer_space(task)))
        rows[task] = {"n": n, "accuracy": sum(r["correct"] for r in rs) / n,
                      "format_errors": sum(r["format_error"] for r in rs) / n, "chance": p0,
                      "critical": critical_accuracy(n, p0) if 0 < p0 < 1 else float("nan")}
    return rows


def to_markdown(rows: dict, runner: str, pattern: str, count: int, seed: int) -> str:
    lines = [f"# Evaluation of `{runner}` on `{pattern}`", "",
             f"{count} samples per task, seed {seed}, protocol `{PROTOCOL}`. Chance is the accuracy of a guess "
             "drawn from the task's answer distribution; *p<0.05* is the accuracy needed to beat it in an exact "
             "one-sided binomial test over n items.", "",
             "| task | n | accuracy % | format errors % | chance % | p<0.05 % |", "|---|---|---|---|---|---|"]
    for task, r in sorted(rows.items()):
        lines.append(f"| {task} | {r['n']} | {percent(r['accuracy']):.2f} | {percent(r['format_errors']):.2f} | "
                     f"{percent(r['chance']):.2f} | {percent(r['critical'], 1):.2f} |")
    families: dict[str, list[dict]] = {}
    for task, r in rows.items():
        families.setdefault(task.split("/")[0], []).append(r)
    lines += ["", "| family | tasks | mean accuracy % | mean chance % |", "|---|---|---|---|"]
    for fam, rs in sorted(families.items()):
        lines.append(f"| {fam} | {len(rs)} | {percent(sum(r['accuracy'] for r in rs) / len(rs)):.2f} | "
                     f"{percent(sum(r['chance'] for r in rs) / len(rs)):.2f} |")
    return "\n".join(lines) + "\n"
