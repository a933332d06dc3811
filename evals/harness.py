"""``evaluate``: samples -> rendered images -> protocol conversations -> runner -> parsed,
scored results.

Every turn's reply is cached in ``DIR/cache.jsonl`` keyed by (sample id and task settings,
runner, protocol, turn, image size), so an interrupted run resumes without asking the model
again. Each family's section of ``summary.md`` comes from the report it registered.
``DIR/results.json`` (one object per sample, scored on the protocol's chosen reply),
``DIR/transcripts.jsonl`` (every turn), ``DIR/summary.md`` and ``DIR/accuracy.png`` are
rewritten at the end.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from engine.errors import UserError
from engine.outputs import render_samples
from engine.plots import accuracy_bars
from engine.protocol import Protocol, Request, Runner, Turn
from engine.registry import check_fit, get_family, get_protocol, get_task, panel_size, resolve
from engine.replies import is_correct
from engine.stats import chance, critical_accuracy, percent

from .runners import answer_space


class _Cache:
    def __init__(self, path: Path):
        self.path, self.replies = path, {}
        if path.exists():
            for line in path.read_text().splitlines():
                try:
                    rec = json.loads(line)
                    self.replies[rec["key"]] = rec["reply"]
                except (json.JSONDecodeError, KeyError):
                    continue   # a line cut short by an interruption
        self.file = open(path, "a")

    def put(self, pairs) -> None:
        for key, reply in pairs:
            self.replies[key] = reply
            self.file.write(json.dumps({"key": key, "reply": reply}) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())


def _converse(samples, protocol: Protocol, runner: Runner, cache: _Cache, size: int) -> list[list[Turn]]:
    """Run ``protocol`` on every sample, one batched runner call per round of turns. A turn
    marked ``shared`` is asked once per batch (and cached once) whoever asks it."""
    def key(i):
        t = convs[i][-1]
        s = samples[i]
        ident = ["shared", t.shared] if t.shared else [s.id, len(convs[i]) - 1]
        settings = [s.settings] if s.settings else []          # another image folder is another sample
        return json.dumps([*ident, *settings, runner.name, protocol.name, size], sort_keys=True)

    images = render_samples(samples, size)
    convs = [[protocol.first(s, ims)] for s, ims in zip(samples, images)]
    active = list(range(len(samples)))
    while active:
        todo, seen = [], set()
        stateful = getattr(runner, "stateful", False)    # keeps what a shared turn built in memory
        for i in active:
            if convs[i][-1].reply is not None:             # a turn the protocol answered itself
                continue
            k = key(i)
            if (k not in cache.replies or (stateful and convs[i][-1].shared)) and k not in seen:
                seen.add(k)
                todo.append(i)
        if todo:
            reqs = []
            for i in todo:
                s, turns = samples[i], convs[i]
                past = [(t.prompt, t.images, t.reply) for t in turns[:-1]] if turns[-1].history else []
                reqs.append(Request(id=f"{s.id}#{len(turns) - 1}", task=s.task, images=turns[-1].images,
                                    prompt=turns[-1].prompt, answer_type=s.answer_type, options=s.options,
                                    gold=turns[-1].gold or s.reply_text, history=past, settings=s.settings,
                                    choices=turns[-1].choices))
            replies = runner.generate(reqs)
            if len(replies) != len(reqs) or not all(isinstance(r, str) for r in replies):
                raise UserError(f"runner {runner.name!r} returned {len(replies)} replies for {len(reqs)} requests "
                                 "(expected one string per request)")
            cache.put((key(i), r) for i, r in zip(todo, replies))
        still = []
        for i in active:
            if convs[i][-1].reply is None:
                convs[i][-1].reply = cache.replies[key(i)]
            nxt = protocol.next(samples[i], images[i], convs[i])
            if nxt is not None:
                convs[i].append(nxt)
                still.append(i)
        active = still
    return convs


def evaluate(pattern: str, runner: Runner, out: str, count: int = 10, seed: int = 0, batch_size: int = 8,
             size: int | None = None, progress: bool = True, protocol: str = "direct",
             settings: dict | None = None) -> dict:
    """Run ``runner`` under ``protocol`` on ``count`` samples of every task matching
    ``pattern`` (with family ``settings``, e.g. ``{"jigsaw.images": DIR}``), rendered at
    ``size`` px (None: each family's native size); write the results files under ``out``.
    Returns the per-task summary."""
    if int(count) != count or count <= 0:
        raise UserError(f"count={count!r} must be a positive integer")
    if int(batch_size) != batch_size or batch_size <= 0:
        raise UserError(f"batch_size={batch_size!r} must be a positive integer")
    proto = get_protocol(protocol)
    tasks = resolve(pattern, settings)
    check_fit(proto, tasks)
    root = Path(out)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output directory {str(root)!r}: {e.strerror}") from None
    cache = _Cache(root / "cache.jsonl")
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks) * len(proto.indices(count)), unit="sample", desc=f"eval {runner.name}", file=sys.stderr)
    results, transcripts = [], []
    try:
        for task in tasks:
            samples = task.samples(seed, proto.indices(count))
            for lo in range(0, len(samples), batch_size):
                chunk = samples[lo:lo + batch_size]
                for s, turns in zip(chunk, _converse(chunk, proto, runner, cache, panel_size(task, size))):
                    t = turns[proto.scored(turns)]
                    parsed = proto.parse(t.reply, s, task)
                    results.append({"id": s.id, "task": s.task, "prompt": t.prompt, "reply": t.reply,
                                    "parsed": parsed.value, "correct": is_correct(parsed, s.answer_text, s.answer_type),
                                    "format_error": parsed.format_error, "gold": s.answer_text,
                                    **_negative(s), **proto.extras(s, turns)})
                    transcripts.append({"id": s.id, "task": s.task, "protocol": proto.name,
                                        "turns": [{"prompt": u.prompt, "images": len(u.images), "reply": u.reply}
                                                  for u in turns]})
                if bar:
                    bar.update(len(chunk))
    finally:
        cache.file.close()
        if bar:
            bar.close()
    summary = summarise(results, tasks)
    _write(root / "results.json", json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    _write(root / "transcripts.jsonl", "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in transcripts))
    families = "\n".join(part for part in family_sections(results, tasks, root, runner.name) if part)
    _write(root / "summary.md", to_markdown(summary, runner.name, pattern, count, seed, proto.name)
           + "\n![accuracy per task](accuracy.png)\n\nBars: accuracy; grey tick: chance; red tick: p<0.05.\n"
           + ("\n" + families if families else ""))
    accuracy_bars(summary, root / "accuracy.png", f"{runner.name} on {pattern}")
    return summary


def _negative(sample) -> dict:
    """The kind of negative a sample is, for rows of tasks whose records name one
    (``meta["negative"]``, None for a positive), so reports can score each kind apart."""
    return {"negative": sample.meta["negative"]} if "negative" in sample.meta else {}


def family_sections(results: list[dict], tasks, folder: Path, title: str) -> list[str]:
    """Each family's section of ``summary.md``, from the report it registered, given the
    results of its own tasks (families in name order)."""
    family = {t.id: t.family for t in tasks}
    out = []
    for name in sorted(set(family.values())):
        reporter = get_family(name).reporter
        if reporter is not None:
            out.append(reporter([r for r in results if family.get(r["task"]) == name], folder, title))
    return out


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    tmp.write_text(text)
    tmp.replace(path)


def task_chance(t) -> float:
    """The chance row of task ``t``: 0 for free text, else as its family states it (from the
    reader's acceptance sets), else ``sum p^2`` over its answer distribution."""
    if t.open_answer:
        return 0.0
    stated = get_family(t.family).chance_of(t)
    return stated if stated is not None else chance(dict(answer_space(t)))


def summarise(results: list[dict], tasks=()) -> dict:
    """Per task: n, accuracy, format errors, chance and the p<0.05 critical accuracy. Chance
    comes from each task as given in ``tasks`` (bound to the run's settings), else as
    registered with default settings."""
    bound = {t.id: t for t in tasks}
    by_task: dict[str, list[dict]] = {}
    for r in results:
        by_task.setdefault(r["task"], []).append(r)
    rows = {}
    for task, rs in by_task.items():
        n = len(rs)
        p0 = task_chance(bound.get(task) or get_task(task))
        rows[task] = {"n": n, "accuracy": sum(r["correct"] for r in rs) / n,
                      "format_errors": sum(r["format_error"] for r in rs) / n, "chance": p0,
                      "critical": critical_accuracy(n, p0) if 0 < p0 < 1 else float("nan")}
    return rows


def _critical(level: float) -> str:
    """A p<0.05 level as printed: ``–`` where no accuracy over n items reaches it."""
    return f"{percent(level, 1):.2f}" if level == level else "–"


def to_markdown(rows: dict, runner: str, pattern: str, count: int, seed: int, protocol: str = "direct") -> str:
    lines = [f"# Evaluation of `{runner}` on `{pattern}`", "",
             f"{count} samples per task, seed {seed}, protocol `{protocol}`. Chance is the accuracy of a guess "
             "drawn from the task's answer distribution, scored by the task's reader; *p<0.05* is the accuracy needed to "
             "beat it in an exact one-sided binomial test over n items (– where even n of n would not).", "",
             "| task | n | accuracy % | format errors % | chance % | p<0.05 % |", "|---|---|---|---|---|---|"]
    for task, r in sorted(rows.items()):
        lines.append(f"| {task} | {r['n']} | {percent(r['accuracy']):.2f} | {percent(r['format_errors']):.2f} | "
                     f"{percent(r['chance']):.2f} | {_critical(r['critical'])} |")
    families: dict[str, list[dict]] = {}
    for task, r in rows.items():
        families.setdefault(task.split("/")[0], []).append(r)
    lines += ["", "| family | tasks | mean accuracy % | mean chance % |", "|---|---|---|---|"]
    for fam, rs in sorted(families.items()):
        lines.append(f"| {fam} | {len(rs)} | {percent(sum(r['accuracy'] for r in rs) / len(rs)):.2f} | "
                     f"{percent(sum(r['chance'] for r in rs) / len(rs)):.2f} |")
    return "\n".join(lines) + "\n"
