"""The ELVIS protocol and scorer.

Protocol (the paper's two stages, with its prompts): for each test image of a task, turn 1
shows the task's train split (positives first, then negatives) and asks for the rule
(*rule induction*, one reply per task, shared by its test images); turn 2 is a fresh
conversation that gives that rule and the test image and asks for ``positive`` or
``negative``. ``elvis`` names the Gestalt principle (principle-aware, the paper's default);
``elvis-blind`` leaves it out. ``--count N`` means N images per class per split.

Scoring per task: accuracy, precision, recall and F1 of the positive class (0 when a
denominator is 0; a reply that names no label counts as the wrong label), then mean ± std
over tasks per principle and per category, and the share of tasks whose F1 reaches each
threshold (the paper's F1-threshold curve).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

from engine.render import render
from engine.sample import Sample

from .parsing import Parsed
from .protocols import Protocol, Turn, register_protocol

INDUCTION = ("You are an AI reasoning about visual patterns using Gestalt principles.{principle}\n\n"
             "The positive examples are {positives}. The negative examples are {negatives}.\n\n"
             "Based on the Positive and Negative examples, infer the logic rules that distinguishes them. "
             "Output ONLY the rules.")
PREDICTION = ("Using the following reasoning rules: {rules}. Classify this image as Positive or Negative. "
              "Only answer with positive or negative for each image.")
LABELS = ("positive", "negative")
THRESHOLDS = [round(0.05 * k, 2) for k in range(21)]


def induction_prompt(principle: str | None, per_class: int) -> str:
    """Stage 1's prompt for ``per_class`` positives (images 1..n) and negatives (n+1..2n)."""
    names = [f"image {k:02d}" for k in range(1, 2 * per_class + 1)]
    return INDUCTION.format(principle=f" Principle under consideration: {principle}." if principle else "",
                            positives=", ".join(names[:per_class]), negatives=", ".join(names[per_class:]))


def prediction_prompt(rules: str) -> str:
    return PREDICTION.format(rules=(rules or "").strip().rstrip("."))


_NEG = r"(?:not|isn't|is not|never|no)\s+(?:an?\s+|the\s+)?"


def parse_label(reply) -> Parsed:
    """``positive``/``negative`` from a reply: the bare word first (strict); otherwise every
    occurrence of either word, a negated one ("not positive") counting as its opposite; a
    reply whose occurrences disagree ("positive or negative") or that has none is a format
    error."""
    text = reply.strip().lower() if isinstance(reply, str) else ""
    if text in LABELS:
        return Parsed(text, True)
    found = set()
    for m in re.finditer(r"\b(positive|negative)\b", text):
        negated = re.search(_NEG + r"$", text[:m.start()])
        word = m.group(1)
        found.add(LABELS[1 - LABELS.index(word)] if negated else word)
    return Parsed(found.pop() if len(found) == 1 else None, False)


class _Elvis(Protocol):
    aware = True

    def __init__(self):
        self.per_class = 3
        self._shown: dict = {}            # (task, seed, per_class, size) -> train images, for the current task

    def indices(self, count: int) -> list[int]:
        from scenes.elvis import split_indices

        self.per_class = int(count)
        return split_indices(self.per_class)["test"]

    def parse(self, reply: str, sample: Sample) -> Parsed:
        return parse_label(reply)

    def first(self, sample: Sample, images) -> Turn:
        from engine.registry import get_task
        from scenes.elvis import split_indices

        size = tuple(images[0].shape[-2:])
        key = (sample.task, sample.seed, self.per_class, size)
        if key not in self._shown:
            train = get_task(sample.task).samples(sample.seed, split_indices(self.per_class)["train"])
            ordered = [s for s in train if s.meta["label"] == 1] + [s for s in train if s.meta["label"] == 0]
            self._shown = {key: list(render([s.panels[0] for s in ordered], size))}
        shown = self._shown[key]
        principle = sample.meta["principle"] if self.aware else None
        return Turn(induction_prompt(principle, self.per_class), shown,
                    shared=f"{sample.task}:{sample.seed}:{self.per_class}:induction",
                    gold=sample.meta["rule"]["text"])

    def next(self, sample: Sample, images, turns):
        if len(turns) == 1:
            return Turn(prediction_prompt(turns[0].reply), list(images), history=False)
        return None


@register_protocol
class ElvisAware(_Elvis):
    """Rule induction naming the principle, then per-image classification."""

    name = "elvis"


@register_protocol
class ElvisBlind(_Elvis):
    """As ``elvis`` without the principle name."""

    name = "elvis-blind"
    aware = False


# ---------------------------------------------------------------- scoring

def task_metrics(results: list[dict]) -> dict[str, dict]:
    """Per ELVIS task: n, accuracy, precision, recall, F1 (positive class)."""
    by: dict[str, list[dict]] = {}
    for r in results:
        if r["task"].startswith("elvis/"):
            by.setdefault(r["task"], []).append(r)
    out = {}
    for task, rs in by.items():
        tp = sum(1 for r in rs if r["gold"] == "positive" and r["correct"])
        fn = sum(1 for r in rs if r["gold"] == "positive" and not r["correct"])
        tn = sum(1 for r in rs if r["gold"] == "negative" and r["correct"])
        fp = sum(1 for r in rs if r["gold"] == "negative" and not r["correct"])
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        _, principle, category = task.split("/")[:3]
        out[task] = {"n": len(rs), "accuracy": (tp + tn) / len(rs), "precision": prec, "recall": rec, "f1": f1,
                     "principle": principle, "category": category}
    return out


def _mean_std(values) -> tuple[float, float]:
    n = len(values)
    m = sum(values) / n
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / n)


def grouped(metrics: dict, by: str) -> dict[str, dict]:
    """Mean and std over tasks of each metric, per ``principle`` or ``category``."""
    groups: dict[str, list[dict]] = {}
    for m in metrics.values():
        groups.setdefault(m[by], []).append(m)
    return {g: {"tasks": len(ms), **{k: _mean_std([m[k] for m in ms]) for k in ("accuracy", "precision", "recall", "f1")}}
            for g, ms in sorted(groups.items())}


def f1_curve(metrics: dict, thresholds=THRESHOLDS) -> list[tuple[float, float]]:
    """``(t, share of tasks with F1 >= t)`` for each threshold."""
    f1 = [m["f1"] for m in metrics.values()]
    return [(t, sum(v >= t - 1e-12 for v in f1) / len(f1)) for t in thresholds]


def to_markdown(metrics: dict) -> str:
    pm = lambda v: f"{v[0]:.3f} ± {v[1]:.3f}"  # noqa: E731
    lines = ["## ELVIS", "", f"{len(metrics)} tasks. Mean ± std over tasks; chance accuracy is 0.5 (balanced classes).",
             ""]
    for by in ("principle", "category"):
        lines += [f"| {by} | tasks | accuracy | precision | recall | F1 |", "|---|---|---|---|---|---|"]
        for g, r in grouped(metrics, by).items():
            lines.append(f"| {g} | {r['tasks']} | {pm(r['accuracy'])} | {pm(r['precision'])} | {pm(r['recall'])} | "
                         f"{pm(r['f1'])} |")
        lines.append("")
    curve = f1_curve(metrics)
    lines += ["Share of tasks with F1 ≥ threshold:", "",
              "| F1 ≥ | " + " | ".join(f"{t:.2f}" for t, _ in curve[::2]) + " |",
              "|---|" + "---|" * len(curve[::2]),
              "| tasks | " + " | ".join(f"{100 * v:.0f}%" for _, v in curve[::2]) + " |", "",
              "![F1-threshold curve](elvis_f1_threshold.png) ![F1 per category](elvis_categories.png)", ""]
    return "\n".join(lines)


def report(results: list[dict], folder, title: str = "") -> str:
    """The ELVIS section of ``summary.md`` and its two plots (empty when no ELVIS task ran)."""
    metrics = task_metrics(results)
    if not metrics:
        return ""
    from .plots import curve_plot, value_bars

    folder = Path(folder)
    curves = {p: f1_curve({k: m for k, m in metrics.items() if m["principle"] == p})
              for p in sorted({m["principle"] for m in metrics.values()})}
    curves["all"] = f1_curve(metrics)
    curve_plot(curves, folder / "elvis_f1_threshold.png", f"{title}: share of tasks with F1 >= threshold",
               "F1 threshold", "tasks")
    cats = grouped(metrics, "category")
    value_bars({c: r["f1"][0] for c, r in cats.items()}, folder / "elvis_categories.png",
               f"{title}: mean F1 per category", errors={c: r["f1"][1] for c, r in cats.items()})
    return to_markdown(metrics)
