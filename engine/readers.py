"""Scoring replies with procvis's own readers, from a plain record of the sample: what an
exported task (``procvis export``) and any other framework call to score a model's reply
exactly as ``procvis eval`` does.

Importing this module and scoring with it loads no tensor library and no 3D stack (no
torch, open3d or pyrender; the family declarations it reads use the standard library,
numpy and Pillow) and needs no numba (the compiled sampling kernels import without it;
``tests/test_export.py`` scores with numba unimportable), and renders nothing: a reply is
read by the task's reader, or the protocol's when it has its own, from the sample's record
alone.

A *record* (:func:`record`) is a JSON object: ``id``, ``task``, ``seed``, ``index``,
``protocol``, ``answer_type``, ``options``, ``answer`` (the gold answer as drawn: a string or
a list), ``gold`` (its canonical text, what a parsed reply must equal), ``gold_text`` (the
family's gold reply when it has one), ``question``, ``meta`` and ``settings``.
"""
from __future__ import annotations

import json

from .errors import UserError
from .registry import bound_task, family_of, get_family, get_protocol
from .replies import Parsed, is_correct, read_answer
from .sample import Sample

RECORD_KEYS = ("id", "task", "seed", "index", "protocol", "answer_type", "options", "answer", "gold", "gold_text",
               "question", "meta", "settings")


def _plain(value):
    """``value`` with numpy scalars and arrays, tuples and sets made JSON values (lists, numbers)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    if hasattr(value, "tolist"):                 # numpy scalar or array
        return _plain(value.tolist())
    return value


def record(sample: Sample, protocol: str = "direct") -> dict:
    """The JSON-ready scoring record of ``sample`` asked under ``protocol`` (its name): every
    field a reader or the scoring looks at, as listed in :data:`RECORD_KEYS`. Returns a dict."""
    return {"id": sample.id, "task": sample.task, "seed": sample.seed, "index": sample.index, "protocol": protocol,
            "answer_type": sample.answer_type, "options": list(sample.options) if sample.options is not None else None,
            "answer": _plain(sample.answer), "gold": sample.answer_text, "gold_text": sample.gold_text,
            "question": sample.question, "meta": _plain(sample.meta), "settings": _plain(sample.settings)}


def sample_of(rec: dict) -> Sample:
    """The :class:`~engine.sample.Sample` a record describes, without panels (readers never
    look at them); a :class:`UserError` naming the missing field for a record that lacks one."""
    missing = [k for k in ("id", "task", "answer_type", "answer", "gold") if k not in rec]
    if missing:
        raise UserError(f"procvis record {rec.get('id', '?')!r}: missing field {missing[0]!r}")
    return Sample(task=rec["task"], seed=int(rec.get("seed", 0)), index=int(rec.get("index", 0)), panels=[],
                  question=rec.get("question", ""), answer=rec["answer"], answer_type=rec["answer_type"],
                  options=rec.get("options"), meta=dict(rec.get("meta") or {}), gold_text=rec.get("gold_text"),
                  settings=rec.get("settings") or None)


class _FamilyReader:
    """A stand-in for a task no longer listed where the record is scored (a task that a
    family setting provides, e.g. a folder of real problems that is not there): it reads
    replies with its family's reader."""

    def __init__(self, task_id: str):
        self.id = task_id
        self.reader = get_family(family_of(task_id)).reader

    def read(self, reply: str, sample: Sample) -> Parsed:
        """The canonical answer ``reply`` states, read by the family's reader."""
        return (self.reader or read_answer)(reply, sample)


def _task(task_id: str, settings: dict | None):
    """The task that drew a record's sample (under its recorded settings), or a
    :class:`_FamilyReader` where that task cannot be listed here."""
    try:
        return bound_task(task_id, settings)
    except (UserError, OSError):                 # UnknownTaskError is one
        return _FamilyReader(task_id)


def read(reply: str, rec: dict) -> Parsed:
    """``reply`` read as ``procvis eval`` reads the scored reply of the record's sample: by
    the protocol's reader (default: the task's). Returns the :class:`~engine.replies.Parsed`."""
    sample = sample_of(rec)
    protocol = get_protocol(rec.get("protocol") or "direct")
    return protocol.parse(reply, sample, _task(sample.task, sample.settings))


def score(reply: str, rec: dict) -> dict:
    """``reply`` scored against the record: ``{"correct": bool, "format_error": bool,
    "parsed": canonical answer text or None, "strict": bool}``, as ``results.json`` has it."""
    parsed = read(reply, rec)
    return {"correct": is_correct(parsed, rec["gold"], rec["answer_type"]), "format_error": parsed.format_error,
            "parsed": parsed.value, "strict": parsed.strict}


def loads(text: str | dict) -> dict:
    """A record from its JSON text (or the dict itself); a :class:`UserError` for text that
    is not a JSON object."""
    if isinstance(text, dict):
        return text
    try:
        rec = json.loads(text)
    except (TypeError, json.JSONDecodeError):
        rec = None
    if not isinstance(rec, dict):
        raise UserError(f"procvis record {str(text)[:60]!r}: not a JSON object")
    return rec


def summarise(rows: list[dict]) -> dict:
    """Per-task accuracy of scored rows (each with ``task``, ``correct``, ``format_error``):
    ``{task: {"n", "correct", "accuracy", "format_errors"}}`` plus ``"overall"`` (the mean of
    the tasks' accuracies, as ``procvis eval`` prints it). Returns a dict."""
    out: dict[str, dict] = {}
    for r in rows:
        t = out.setdefault(r["task"], {"n": 0, "correct": 0, "format_errors": 0})
        t["n"] += 1
        t["correct"] += bool(r["correct"])
        t["format_errors"] += bool(r["format_error"])
    for t in out.values():
        t["accuracy"] = t["correct"] / t["n"]
    mean = sum(t["accuracy"] for t in out.values()) / len(out) if out else 0.0
    return {**dict(sorted(out.items())), "overall": {"tasks": len(out), "accuracy": mean}}
