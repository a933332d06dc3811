"""``procvis export``: samples as a task that another evaluation framework runs unchanged,
scored by procvis's own readers.

* ``procvis export lmms-eval PATTERN --out DIR``: an lmms-eval task folder. One task YAML per
  procvis task (``NAME_<task>``, all tagged ``NAME``: ``--tasks NAME`` runs them all), its
  samples in ``data/<task>.jsonl`` (read with the ``json`` dataset builder, an absolute
  ``data_files`` path), its panels as PNG files under ``images/``, and ``utils.py`` with
  ``doc_to_visual``, ``doc_to_text`` and ``process_results``. Run with
  ``lmms-eval --include_path DIR --tasks NAME ...``.
* ``procvis export vlmevalkit PATTERN --out DIR``: ``DIR/NAME.tsv`` in VLMEvalKit's image
  dataset convention (``index``, ``image``: base64 PNG, a list of them for several panels,
  ``question``, ``answer``, plus ``options`` and the procvis record) and ``score.py``, which
  scores VLMEvalKit's prediction file. With ``LMUData=DIR`` VLMEvalKit loads ``NAME`` as a
  custom dataset (no source change) and asks the question as written; it cannot score a
  custom free-answer dataset itself, so ``python DIR/score.py PREDICTIONS`` does.

The prompt, the panels and their order are those of the protocol's single turn, exactly as
``procvis eval`` sends them; a reply is scored by :mod:`engine.readers` (the task's reader,
or the protocol's), which the exported scripts import: from an installed procvis, else from
the source folder recorded at export (no torch or 3D stack is needed there). Protocols of
several turns cannot be written as one prompt and are refused, naming those that can.
"""
from __future__ import annotations

import base64
import csv
import io
import json
import re
import shutil
import time
from pathlib import Path

from engine.cli import Command, positive_int, sampling_options, settings_of, writable_folder
from engine.errors import UserError
from engine.readers import record
from engine.registry import check_fit, get_protocol, panel_size, protocols, resolve

FRAMEWORKS = ("lmms-eval", "vlmevalkit")
EXPORT_FILE = "export.json"
ROOT = Path(__file__).resolve().parents[1]          # the procvis source folder (its engine/ package)
RENDER_BATCH = 32


def _args(p) -> None:
    p.add_argument("framework", choices=FRAMEWORKS, help="lmms-eval (a task folder) or vlmevalkit (a TSV dataset)")
    p.add_argument("pattern", help="task id or glob pattern")
    p.add_argument("--out", required=True, help="folder to write the task into")
    p.add_argument("--protocol", default="direct",
                   help="a protocol of one turn: direct, bongard-direct or perceptv")
    p.add_argument("--name", default="procvis",
                   help="lmms-eval: tag and task-name prefix; VLMEvalKit: the dataset name (NAME.tsv)")
    p.add_argument("--max-new-tokens", type=positive_int("--max-new-tokens", 1 << 20), default=None, metavar="N",
                   help="lmms-eval generation limit (default: the families' defaults, e.g. KiVA 300)")
    sampling_options(p, count=10, size=None)


def _check(a) -> None:
    """Refuse a ``--name`` that cannot name a task or file (one-line :class:`UserError`)."""
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", a.name):
        raise UserError(f"--name {a.name!r}: use letters, digits and '_', starting with a letter")


def _run(a) -> int:
    """``procvis export``: returns the exit status (0)."""
    from engine.outputs import procvis_version         # torch: loaded when the command runs

    _check(a)
    settings = settings_of(a)
    tasks = resolve(a.pattern, settings)
    proto = get_protocol(a.protocol)
    check_fit(proto, tasks)
    if proto.name not in single_turn():
        _several_turns(proto)
    writable_folder(a.out, "--out")
    started = _clear(Path(a.out))
    writer = (LmmsEvalWriter if a.framework == "lmms-eval" else VLMEvalKitWriter)(Path(a.out), a.name)
    tokens = a.max_new_tokens or _default_tokens(tasks)
    n = 0
    for task in tasks:
        items = list(export_items(task, proto, a.count, a.seed, a.size))
        writer.add(task.id, items, tokens)
        n += len(items)
    writer.close({"procvis_version": procvis_version(), "pattern": a.pattern, "protocol": proto.name,
                  "seed": a.seed, "count": a.count, "size": a.size, "settings": settings, "samples": n})
    _record_files(Path(a.out), writer.written)
    print(f"wrote {n} samples of {len(tasks)} tasks for {a.framework} to {a.out}; {writer.hint}")
    return 0


def _clear(out: Path) -> int:
    """Remove what an earlier export wrote to ``out`` (the files its ``export.json`` lists,
    VLMEvalKit's decoded panels of its TSV, or, for one that stopped while writing, the files
    written since it started: stale task files or images would be run or shown again),
    leaving anything else there; then mark the folder as being written. Returns the start time (``time.time_ns``). A :class:`UserError`
    naming the folder when it is not empty and no export wrote it."""
    if out.is_dir() and any(out.iterdir()):
        try:
            info = json.loads((out / EXPORT_FILE).read_text())
        except (OSError, ValueError):
            raise UserError(f"--out {str(out)!r} is not empty; give a new or empty folder, or one 'procvis export' "
                            "wrote") from None
        old = [out / f for f in info.get("files", [])]
        if info.get("writing"):
            old += [p for p in out.rglob("*") if p.is_file() and p.stat().st_mtime_ns >= info["started_ns"]]
        for p in old:
            p.unlink(missing_ok=True)
        if info.get("framework") == "vlmevalkit":         # VLMEvalKit's decoded copies of that TSV's panels
            shutil.rmtree(out / "images" / str(info.get("name")), ignore_errors=True)
        for d in sorted((p for p in out.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            if not any(d.iterdir()):
                d.rmdir()
    out.mkdir(parents=True, exist_ok=True)
    started = time.time_ns()
    (out / EXPORT_FILE).write_text(json.dumps({"writing": True, "started_ns": started}))
    return started


def _record_files(out: Path, written: list[str]) -> None:
    """Add to ``export.json`` the files this export wrote (``written``, relative paths), so
    the next export into the folder removes exactly them."""
    info = json.loads((out / EXPORT_FILE).read_text())
    info["files"] = sorted(set(written))
    (out / EXPORT_FILE).write_text(json.dumps(info, indent=1) + "\n")


def _default_tokens(tasks) -> int:
    """The reply length limit of ``tasks``: the largest of their families' defaults."""
    from .hf_runner import default_max_new_tokens        # torch: loaded when the command runs

    return default_max_new_tokens(t.family for t in tasks)


def single_turn(protocols_by_name: dict | None = None) -> list[str]:
    """The protocols whose conversation is one turn by declaration: those that do not
    override ``next``, or that declare ``steps() == 1`` (a strategy of steps);
    :func:`export_items` still checks every sample. Returns their names."""
    from engine.protocol import Protocol

    known = protocols_by_name if protocols_by_name is not None else protocols()
    return [n for n, cls in known.items()
            if cls.next is Protocol.next or (callable(getattr(cls, "steps", None)) and cls().steps() == 1)]


def _one_turn(proto, sample, images):
    """The protocol's first turn of ``sample``, checked to be its whole conversation: a
    :class:`UserError` naming the protocol where it asks (or answers itself) another turn."""
    turn = proto.first(sample, images)
    answered = turn.reply is not None
    turn.reply = turn.gold or sample.reply_text
    if answered or proto.next(sample, images, [turn]) is not None:
        _several_turns(proto)
    return turn


def _several_turns(proto) -> None:
    """Raise the one-line :class:`UserError` for a protocol of several turns, naming the
    protocols of one turn that fit its family."""
    fits = [n for n in single_turn() if protocols()[n].family in (None, proto.family)]
    raise UserError(f"--protocol {proto.name!r} asks several turns, which one exported prompt cannot hold; "
                    f"protocols of one turn here: {', '.join(fits)}")


def export_items(task, proto, count: int, seed: int, size: int | None):
    """Yield, for each of ``count`` samples of ``task`` under ``proto``: ``{"record": the
    scoring record, "prompt": the turn's text, "images": its panels as PNG bytes}``."""
    from engine.outputs import render_samples          # torch: loaded when the command runs

    samples = task.samples(seed, proto.indices(count))
    for lo in range(0, len(samples), RENDER_BATCH):
        chunk = samples[lo:lo + RENDER_BATCH]
        for s, ims in zip(chunk, render_samples(chunk, panel_size(task, size))):
            turn = _one_turn(proto, s, ims)
            yield {"record": record(s, proto.name), "prompt": turn.prompt, "images": [_png(t) for t in turn.images]}


def _png(image) -> bytes:
    """A ``[3,H,W]`` uint8 tensor as PNG bytes."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(image.permute(1, 2, 0).contiguous().cpu().numpy()).save(buf, format="PNG")
    return buf.getvalue()


def slug(task_id: str) -> str:
    """``task_id`` as a file and task name: runs of other characters than letters and digits
    become ``_``."""
    return re.sub(r"[^A-Za-z0-9]+", "_", task_id).strip("_")


_IMPORT_READERS = '''
PROCVIS_ROOT = {root!r}          # the procvis source at export, used when procvis is not installed here


def _readers():
    """procvis's light readers module (no torch, no 3D stack)."""
    try:
        from engine import readers
    except ImportError:
        sys.path.append(PROCVIS_ROOT)
        from engine import readers
    return readers
'''

LMMS_UTILS = '''"""procvis task for lmms-eval, written by `procvis export lmms-eval`: the prompts and panels
of procvis's protocol, each reply scored by procvis's own reader (engine.readers)."""
import json
import os
import sys

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
''' + _IMPORT_READERS + '''

def doc_to_visual(doc):
    """The sample's panels, in the order procvis sends them."""
    return [Image.open(os.path.join(HERE, p)).convert("RGB") for p in doc["images"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The protocol's prompt, unchanged."""
    return doc["question"]


def process_results(doc, results):
    """accuracy (1 or 0) and format_error (1: the reader found no answer) of the reply."""
    scored = _readers().score(results[0] if results else "", json.loads(doc["procvis"]))
    return {"accuracy": float(scored["correct"]), "format_error": float(scored["format_error"])}
'''


class LmmsEvalWriter:
    """Writes an lmms-eval task folder (see the module's docstring)."""

    def __init__(self, out: Path, name: str):
        self.out, self.name, self.tasks = out, name, []
        self.written = ["utils.py"]                  # relative paths, for the next export to remove
        self.hint = f"run: lmms-eval --include_path {out} --tasks {name} --model ..."
        (out / "data").mkdir(parents=True, exist_ok=True)

    def add(self, task_id: str, items: list[dict], max_new_tokens: int) -> None:
        """Write one procvis task: its YAML, data rows and PNG panels."""
        s = slug(task_id)
        (self.out / "images" / s).mkdir(parents=True, exist_ok=True)
        rows = []
        for i, it in enumerate(items):
            paths = [f"images/{s}/{i}_{k}.png" for k in range(len(it["images"]))]
            for p, png in zip(paths, it["images"]):
                (self.out / p).write_bytes(png)
            self.written += paths
            rows.append({"doc_id": i, "id": it["record"]["id"], "task": task_id, "question": it["prompt"],
                         "answer": it["record"]["gold"], "images": paths,
                         "procvis": json.dumps(it["record"], ensure_ascii=False)})
        data = self.out / "data" / f"{s}.jsonl"
        data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        (self.out / f"{self.name}_{s}.yaml").write_text(self._yaml(task_id, s, data.resolve(), max_new_tokens))
        self.tasks.append(f"{self.name}_{s}")
        self.written += [f"data/{s}.jsonl", f"{self.name}_{s}.yaml"]

    def _yaml(self, task_id: str, s: str, data: Path, max_new_tokens: int) -> str:
        """The task YAML of one procvis task (strings written as JSON, which YAML reads)."""
        q = json.dumps
        return (f"task: {q(self.name + '_' + s)}\ntag: {q(self.name)}\ndataset_path: json\n"
                f"dataset_kwargs:\n  data_files:\n    test: {q(str(data))}\ntest_split: test\n"
                "output_type: generate_until\ndoc_to_visual: !function utils.doc_to_visual\n"
                "doc_to_text: !function utils.doc_to_text\ndoc_to_target: answer\n"
                f"generation_kwargs:\n  max_new_tokens: {max_new_tokens}\n  temperature: 0\n  do_sample: false\n"
                "  until: []\nprocess_results: !function utils.process_results\nmetric_list:\n"
                "  - metric: accuracy\n    aggregation: mean\n    higher_is_better: true\n"
                "  - metric: format_error\n    aggregation: mean\n    higher_is_better: false\n"
                f"metadata:\n  version: 1.0\n  procvis_task: {q(task_id)}\n")

    def close(self, info: dict) -> None:
        """Write ``utils.py`` and ``export.json`` (what produced the folder, and its tasks)."""
        (self.out / "utils.py").write_text(LMMS_UTILS.replace("{root!r}", repr(str(ROOT))))
        (self.out / "export.json").write_text(json.dumps({**info, "framework": "lmms-eval", "name": self.name,
                                                          "tasks": self.tasks}, indent=1) + "\n")


SCORE_SCRIPT = '''"""Score VLMEvalKit's predictions of a procvis dataset with procvis's own readers.

    python score.py PREDICTIONS [--tsv NAME.tsv]

PREDICTIONS: the file VLMEvalKit wrote (.xlsx, .tsv, .csv, .json or .jsonl) with the
columns ``index`` and ``prediction``. Prints per-task accuracy as JSON and writes it beside
PREDICTIONS as ``*_procvis.json``; every row must have a prediction."""
import argparse
import csv
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = {name!r}
''' + _IMPORT_READERS + '''

def _rows(path):
    """The prediction file's rows as dicts."""
    if path.endswith(".xlsx"):
        import pandas as pd

        return pd.read_excel(path, dtype=str).to_dict("records")       # a reply "7" stays "7", not 7.0
    if path.endswith(".jsonl"):
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    if path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        return data if isinstance(data, list) else data.get("records", [])
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\\t" if path.endswith(".tsv") else ","))


def _records(tsv):
    """index -> procvis record, from the exported TSV."""
    csv.field_size_limit(sys.maxsize)
    with open(tsv, encoding="utf-8", newline="") as f:
        return {str(r["index"]): json.loads(r["procvis"]) for r in csv.DictReader(f, delimiter="\\t")}


def score(predictions, tsv=None):
    """Per-task accuracy of the predictions (see engine.readers.summarise)."""
    readers = _readers()
    records = _records(tsv or os.path.join(HERE, NAME + ".tsv"))
    rows, seen = [], set()
    for r in _rows(predictions):
        key = str(r.get("index"))
        if key not in records:
            raise SystemExit(f"{predictions}: a prediction row has index {r.get('index')!r}, which {NAME}.tsv "
                             f"does not hold (it holds 0..{len(records) - 1}); is this another dataset's file?")
        if key in seen:
            continue                                                        # a repeated row counts once
        seen.add(key)
        rec = records[key]
        reply = r.get("prediction")
        reply = "" if reply is None or reply != reply else str(reply)       # empty cell: no answer
        rows.append({"id": rec["id"], "task": rec["task"], "reply": reply, **readers.score(reply, rec)})
    missing = len(records) - len(seen)
    if missing:
        raise SystemExit(f"{predictions}: {missing} of {len(records)} samples have no prediction row")
    return readers.summarise(rows), rows


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("predictions")
    p.add_argument("--tsv", default=None)
    a = p.parse_args()
    summary, rows = score(a.predictions, a.tsv)
    with open(os.path.splitext(a.predictions)[0] + "_procvis.json", "w", encoding="utf-8") as f:
        json.dump({"summary": summary, "rows": rows}, f, indent=1, ensure_ascii=False)
    print(json.dumps(summary, indent=1))
'''


class VLMEvalKitWriter:
    """Writes ``NAME.tsv`` and ``score.py`` (see the module's docstring)."""

    COLUMNS = ("index", "image", "question", "answer", "options", "task", "id", "procvis")

    def __init__(self, out: Path, name: str):
        out.mkdir(parents=True, exist_ok=True)
        self.out, self.name, self.index = out, name, 0
        self.hint = (f"run VLMEvalKit with LMUData={out} --data {name} (inference), then "
                     f"python {out / 'score.py'} PREDICTIONS")
        self.file = open(out / f"{name}.tsv", "w", encoding="utf-8", newline="")
        self.written = [f"{name}.tsv", "score.py"]
        self.tsv = csv.writer(self.file, delimiter="\t", quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        self.tsv.writerow(self.COLUMNS)

    def add(self, task_id: str, items: list[dict], max_new_tokens: int) -> None:
        """Append one procvis task's rows (``max_new_tokens``: VLMEvalKit sets its own)."""
        for it in items:
            images = [base64.b64encode(png).decode("ascii") for png in it["images"]]
            rec = it["record"]
            self.tsv.writerow([self.index, images[0] if len(images) == 1 else json.dumps(images), it["prompt"],
                               rec["gold"], json.dumps(rec["options"]) if rec["options"] else "", task_id,
                               rec["id"], json.dumps(rec, ensure_ascii=False)])
            self.index += 1

    def close(self, info: dict) -> None:
        """Finish the TSV; write ``score.py`` and ``export.json``."""
        self.file.close()
        (self.out / "score.py").write_text(SCORE_SCRIPT.replace("{name!r}", repr(self.name))
                                           .replace("{root!r}", repr(str(ROOT))))
        (self.out / "export.json").write_text(json.dumps({**info, "framework": "vlmevalkit", "name": self.name,
                                                          "tsv": f"{self.name}.tsv", "rows": self.index},
                                                         indent=1) + "\n")


EXPORT = Command("export", "write samples as a task another framework runs (lmms-eval task folder, VLMEvalKit TSV), "
                 "scored by procvis's readers", _args, _run)
