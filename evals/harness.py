"""``evaluate``: samples -> rendered images -> protocol conversations -> runner -> parsed,
scored results.

Every turn's reply is cached in ``DIR/cache.jsonl`` keyed by (sample id and task settings,
turn, the turn's prompt, the runner's identity, protocol, image size), so an interrupted run
resumes without asking the model again, and another model (a checkpoint of other contents,
even in a folder of the same name) never reuses these replies. Each family's section of
``summary.md`` comes from the report it registered. ``DIR/results.json`` (one object per
sample, scored on the protocol's chosen reply), ``DIR/transcripts.jsonl`` (every turn),
``DIR/summary.md`` and ``DIR/accuracy.png`` are rewritten at the end. Every results row
names the model and the protocol, so rows of several runs can be reported together. With a
model ``judge``, every free-text final reply is also graded by the family's model judge
(``model_judge`` in its row, cached like the turns); the family's reader stays the score
and ``summary.md`` reports how often the two agree. ``DIR/eval_run.json`` records what produced the
run (procvis version and git commit, the model and its source and generation settings,
protocol, seed, count, panel sizes, settings, the dataset folder read with ``data``, samples
per task), and ``summary.md`` says it in one line. Samples are rendered afresh, or read from
a dataset folder written by ``procvis generate`` with the same requests and scores.
"""
from __future__ import annotations

import hashlib
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

from .runners import answer_space, runner_identity


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


def _converse(samples, protocol: Protocol, runner: Runner, cache: _Cache, size: int,
              images: list | None = None) -> list[list[Turn]]:
    """Run ``protocol`` on every sample (its panels: ``images``, else rendered at ``size``),
    one batched runner call per round of turns. A turn marked ``shared`` is asked once per
    batch (and cached once) whoever asks it. Returns each sample's answered turns."""
    model = runner_identity(runner)

    def key(i):
        return _turn_key(samples[i], convs[i], model, protocol.name, size)

    images = render_samples(samples, size) if images is None else images
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


def _turn_key(sample, turns: list[Turn], model: str, protocol: str, size: int) -> str:
    """The cache key of the last of ``turns`` of ``sample``: the sample (id and settings) and
    turn index, or the shared turn's key, with a digest of the turn's prompt, the runner's
    identity ``model``, the ``protocol`` name and the image ``size``."""
    t = turns[-1]
    ident = ["shared", t.shared] if t.shared else [sample.id, len(turns) - 1]
    settings = [sample.settings] if sample.settings else []        # another image folder is another sample
    prompt = hashlib.sha256(t.prompt.encode()).hexdigest()
    return json.dumps([*ident, *settings, prompt, model, protocol, size], sort_keys=True)


class _CachedJudge:
    """``runner`` as a judge whose replies are kept in the run's cache, keyed by its identity
    and the judge prompt (which holds the graded answer)."""

    def __init__(self, runner: Runner, cache: _Cache):
        self.runner, self.cache, self.name = runner, cache, runner.name
        self.identity = runner_identity(runner)

    def generate(self, requests: list[Request]) -> list[str]:
        """One verdict reply per request, in order, from the cache or else asked of the judge."""
        keys = [json.dumps(["judge", self.identity, hashlib.sha256(r.prompt.encode()).hexdigest()])
                for r in requests]
        todo = {k: r for k, r in zip(keys, requests) if k not in self.cache.replies}
        if todo:
            replies = self.runner.generate(list(todo.values()))
            if len(replies) != len(todo) or not all(isinstance(r, str) for r in replies):
                raise UserError(f"judge {self.name!r} returned {len(replies)} replies for {len(todo)} requests "
                                "(expected one string per request)")
            self.cache.put(zip(todo, replies))
        return [self.cache.replies[k] for k in keys]


def _check_judge(judge: Runner | None, tasks) -> None:
    if judge is None:
        return
    open_tasks = [t for t in tasks if t.open_answer]
    if not open_tasks:
        raise UserError(f"--judge {judge.name!r}: a model judge grades free-text answers, and none of the "
                        f"{len(tasks)} tasks has one")
    missing = sorted({t.family for t in open_tasks if get_family(t.family).judge_fn is None})
    if missing:
        raise UserError(f"--judge {judge.name!r}: family {missing[0]!r} declares no model judge for its free-text "
                        "answers")


def evaluate(pattern: str, runner: Runner, out: str, count: int | None = None, seed: int | None = None,
             batch_size: int = 8, size: int | None = None, progress: bool = True, protocol: str = "direct",
             settings: dict | None = None, judge: Runner | None = None, data: str | None = None,
             run: dict | None = None) -> dict:
    """Run ``runner`` under ``protocol`` on ``count`` samples of every task matching
    ``pattern`` (with family ``settings``, e.g. ``{"jigsaw.images": DIR}``), rendered at
    ``size`` px (None: each family's native size), or read from the dataset folder ``data``
    (written by ``procvis generate``: its seed, size and settings, and its count; a
    seed, size or settings given that differ, or a count above its, are refused; see :mod:`evals.datafolder`). ``count`` None: 10, ``seed``
    None: 0, unless ``data`` decides them; write the results files under ``out``,
    with ``eval_run.json`` recording the provenance (``run``: further entries for it, e.g. the
    command's generation options). With a ``judge`` runner, free-text final replies are also
    graded by their family's model judge. Returns the per-task summary."""
    source = None
    if data is not None:
        from .datafolder import DataFolder

        source = DataFolder(data)
        seed, size, settings, count = source.fit(seed, size, settings, count)
    count = 10 if count is None else count
    seed = 0 if seed is None else seed
    if int(count) != count or count <= 0:
        raise UserError(f"count={count!r} must be a positive integer")
    if int(batch_size) != batch_size or batch_size <= 0:
        raise UserError(f"batch_size={batch_size!r} must be a positive integer")
    proto = get_protocol(protocol)
    tasks = resolve(pattern, settings)
    check_fit(proto, tasks)
    _check_judge(judge, tasks)
    if source is not None:
        source.check_tasks(tasks, proto.indices(count))
    root = Path(out)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create output directory {str(root)!r}: {e.strerror}") from None
    results, transcripts = _run_tasks(tasks, proto, runner, judge, root, count, seed, batch_size, size, progress,
                                      source)
    summary = summarise(results, tasks)
    info = provenance(runner, judge, pattern, proto.name, tasks, count, seed, size, settings, batch_size, data,
                      summary, run)
    _write(root / "results.json", json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    _write(root / "transcripts.jsonl", "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in transcripts))
    _write(root / RUN_FILE, json.dumps(info, indent=1, ensure_ascii=False) + "\n")
    families = "\n".join(part for part in family_sections(results, tasks, root, runner.name) if part)
    agreement = judge_section(results, judge.name) if judge is not None else ""
    _write(root / "summary.md", to_markdown(summary, runner.name, pattern, count, seed, proto.name)
           + "\n" + provenance_line(info) + "\n"
           + "\n![accuracy per task](accuracy.png)\n\nBars: accuracy; grey tick: chance; red tick: p<0.05.\n"
           + ("\n" + agreement if agreement else "") + ("\n" + families if families else ""))
    accuracy_bars(summary, root / "accuracy.png", f"{runner.name} on {pattern}")
    return summary


def _run_tasks(tasks, proto: Protocol, runner: Runner, judge: Runner | None, root: Path, count: int, seed: int,
               batch_size: int, size: int | None, progress: bool, source) -> tuple[list[dict], list[dict]]:
    """Converse with ``runner`` on every task's samples (panels from ``source``, a
    :class:`~evals.datafolder.DataFolder`, when given, else rendered) and score them.
    Returns the results rows and the transcripts."""
    cache = _Cache(root / "cache.jsonl")
    judged = _CachedJudge(judge, cache) if judge is not None else None
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
                images = source.images(chunk) if source is not None else None
                rows = []
                for s, turns in zip(chunk, _converse(chunk, proto, runner, cache, panel_size(task, size), images)):
                    t = turns[proto.scored(turns)]
                    parsed = proto.parse(t.reply, s, task)
                    rows.append({"id": s.id, "task": s.task, "model": runner.name, "protocol": proto.name,
                                 "prompt": t.prompt, "reply": t.reply, "parsed": parsed.value,
                                 "correct": is_correct(parsed, s.answer_text, s.answer_type),
                                 "format_error": parsed.format_error, "gold": s.answer_text,
                                 **_negative(s), **proto.extras(s, turns)})
                    transcripts.append({"id": s.id, "task": s.task, "protocol": proto.name,
                                        "turns": [{"prompt": u.prompt, "images": len(u.images), "reply": u.reply}
                                                  for u in turns]})
                if judged is not None and task.open_answer:
                    verdicts = get_family(task.family).judge_fn(judged, [(s, r["reply"]) for s, r in zip(chunk, rows)])
                    for r, v in zip(rows, verdicts):
                        r["model_judge"] = bool(v)
                results += rows
                if bar:
                    bar.update(len(chunk))
    finally:
        cache.file.close()
        if bar:
            bar.close()
    return results, transcripts


RUN_FILE = "eval_run.json"


def git_commit() -> dict:
    """The git commit of the procvis source in use, when it runs from a git checkout:
    ``{"commit": SHA, "dirty": whether tracked files differ from it}``, else ``{}``."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        sha = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    return {"commit": sha, "dirty": bool(status.strip())} if sha else {}


def _model_record(runner: Runner) -> dict:
    """What names ``runner``: its name, identity, where it came from (``source``: a folder,
    a Hub id and revision, a replies file) and its generation settings, when it states them."""
    out = {"name": runner.name, "identity": runner_identity(runner)}
    for attr in ("source", "settings"):
        value = getattr(runner, attr, None)
        if isinstance(value, dict):
            out[attr if attr == "source" else "generation"] = value
    return out


def provenance(runner: Runner, judge: Runner | None, pattern: str, protocol: str, tasks, count: int, seed: int,
               size: int | None, settings: dict | None, batch_size: int, data: str | None, summary: dict,
               extra: dict | None = None) -> dict:
    """The ``eval_run.json`` of an evaluation: procvis version and git commit, the model (and
    judge) with generation settings, protocol, pattern, seed, count, panel size per task,
    family settings, the dataset folder read (if any) and the samples scored per task;
    ``extra`` entries are added. Returns it as a dict."""
    from engine.outputs import procvis_version

    info = {"procvis_version": procvis_version(), **git_commit(), "model": _model_record(runner),
            "judge": _model_record(judge) if judge is not None else None, "protocol": protocol,
            "pattern": pattern, "seed": seed, "count": count, "size": size,
            "panel_sizes": {t.id: panel_size(t, size) for t in tasks}, "settings": dict(settings or {}),
            "batch_size": batch_size, "data": str(Path(data).resolve()) if data is not None else None,
            "samples": {task: r["n"] for task, r in sorted(summary.items())}}
    info["total"] = sum(info["samples"].values())
    return {**info, **(extra or {})}


def provenance_line(info: dict) -> str:
    """The line of ``summary.md`` that says what produced it (from :func:`provenance`)."""
    commit = f", commit {info['commit'][:12]}{' (modified)' if info.get('dirty') else ''}" if info.get("commit") else ""
    model = info["model"]
    source = model.get("source", {})
    where = source.get("id") and f"{source['id']}@{source.get('revision')}" or source.get("path") \
        or source.get("replies") or model["name"]
    gen = model.get("generation")
    gen_text = ", ".join(f"{k} {v}" for k, v in gen.items()) if gen else "none stated"
    sizes = sorted(set(info["panel_sizes"].values()))
    data = f"; samples read from `{info['data']}`" if info.get("data") else ""
    return (f"Run: procvis {info['procvis_version']}{commit}; model `{where}` (generation: {gen_text}); protocol "
            f"`{info['protocol']}`, seed {info['seed']}, {info['count']} samples per task ({info['total']} scored), "
            f"panel size {', '.join(map(str, sizes))} px{data}. Everything is in {RUN_FILE}.")


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
    """Per task: n, accuracy, format errors, chance, the p<0.05 critical accuracy and whether
    the answer is free text (``open_answer``: chance 0, printed as ``—``). Chance
    comes from each task as given in ``tasks`` (bound to the run's settings), else as
    registered with default settings."""
    bound = {t.id: t for t in tasks}
    by_task: dict[str, list[dict]] = {}
    for r in results:
        by_task.setdefault(r["task"], []).append(r)
    rows = {}
    for task, rs in by_task.items():
        n = len(rs)
        t = bound.get(task) or get_task(task)
        p0 = task_chance(t)
        rows[task] = {"n": n, "accuracy": sum(r["correct"] for r in rs) / n,
                      "format_errors": sum(r["format_error"] for r in rs) / n, "chance": p0,
                      "critical": critical_accuracy(n, p0) if 0 < p0 < 1 else float("nan"),
                      "open_answer": bool(t.open_answer), "overall": bool(t.overall)}
    return rows


OPEN = "—"          # chance and its test have no meaning for a free-text answer


def _critical(level: float) -> str:
    """A p<0.05 level as printed: ``–`` where no accuracy over n items reaches it."""
    return f"{percent(level, 1):.2f}" if level == level else "–"


def to_markdown(rows: dict, runner: str, pattern: str, count: int, seed: int, protocol: str = "direct") -> str:
    """The head of ``summary.md``: one row per task, then one per family (chance and its
    test printed as ``—`` for free-text answers, and left out of a family's mean chance; tasks
    registered outside their family's overall, like Jigsaw's order generation, are left out of
    both means and counted apart)."""
    lines = [f"# Evaluation of `{runner}` on `{pattern}`", "",
             f"{count} samples per task, seed {seed}, protocol `{protocol}`. Chance is the accuracy of a guess "
             "drawn from the task's answer distribution, scored by the task's reader; *p<0.05* is the accuracy needed to "
             "beat it in an exact one-sided binomial test over n items (– where even n of n would not). A free-text "
             f"answer graded by a judge has no answer distribution to guess from: {OPEN}.", "",
             "| task | n | accuracy % | format errors % | chance % | p<0.05 % |", "|---|---|---|---|---|---|"]
    for task, r in sorted(rows.items()):
        open_answer = r.get("open_answer", False)
        chance_text = OPEN if open_answer else f"{percent(r['chance']):.2f}"
        lines.append(f"| {task} | {r['n']} | {percent(r['accuracy']):.2f} | {percent(r['format_errors']):.2f} | "
                     f"{chance_text} | {OPEN if open_answer else _critical(r['critical'])} |")
    families: dict[str, list[dict]] = {}
    for task, r in rows.items():
        families.setdefault(task.split("/")[0], []).append(r)
    lines += ["", "| family | tasks | mean accuracy % | mean chance % |", "|---|---|---|---|"]
    for fam, rs in sorted(families.items()):
        counted = [r for r in rs if r.get("overall", True)] or rs
        closed = [r["chance"] for r in counted if not r.get("open_answer", False)]
        mean_chance = f"{percent(sum(closed) / len(closed)):.2f}" if closed else OPEN
        tasks = f"{len(counted)}" + (f" (+{len(rs) - len(counted)} outside the overall)" if len(counted) < len(rs) else "")
        lines.append(f"| {fam} | {tasks} | {percent(sum(r['accuracy'] for r in counted) / len(counted)):.2f} | "
                     f"{mean_chance} |")
    return "\n".join(lines) + "\n"


def judge_agreement(results: list[dict]) -> dict | None:
    """How the model judge's verdicts (``model_judge``) agree with the score (``correct``,
    the rule judge) over the rows that have both: ``n``, ``agree`` (a share), the confusion
    counts ``both``, ``rule_only``, ``model_only``, ``neither`` and Cohen's ``kappa`` (NaN
    when both judges give one verdict throughout). None when no row was judged."""
    rs = [r for r in results if "model_judge" in r]
    if not rs:
        return None
    n = len(rs)
    both = sum(r["correct"] and r["model_judge"] for r in rs)
    rule_only = sum(r["correct"] and not r["model_judge"] for r in rs)
    model_only = sum(not r["correct"] and r["model_judge"] for r in rs)
    neither = n - both - rule_only - model_only
    agree = (both + neither) / n
    p_rule, p_model = (both + rule_only) / n, (both + model_only) / n
    expected = p_rule * p_model + (1 - p_rule) * (1 - p_model)
    kappa = (agree - expected) / (1 - expected) if expected < 1 else float("nan")
    return {"n": n, "agree": agree, "both": both, "rule_only": rule_only, "model_only": model_only,
            "neither": neither, "kappa": kappa}


def judge_section(results: list[dict], judge: str) -> str:
    """The section of ``summary.md`` comparing the model judge ``judge`` with the score."""
    a = judge_agreement(results)
    if a is None:
        return ""
    kappa = f"{a['kappa']:.3f}" if a["kappa"] == a["kappa"] else OPEN
    return "\n".join([
        "## Judges", "",
        f"The rule judge (the family's reader) gives the score; the model judge `{judge}` graded the same "
        f"{a['n']} final replies. They agree on {a['both'] + a['neither']} of {a['n']} "
        f"({percent(a['agree']):.2f}%), Cohen's kappa {kappa}.", "",
        "| | model judge: correct | model judge: incorrect |", "|---|---|---|",
        f"| rule judge: correct | {a['both']} | {a['rule_only']} |",
        f"| rule judge: incorrect | {a['model_only']} | {a['neither']} |", ""])
