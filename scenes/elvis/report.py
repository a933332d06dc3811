"""The ELVIS section of an evaluation report.

Per task: accuracy, precision, recall and F1 of the positive class (0 when a denominator is
0; a reply that names no label counts as the wrong label), then mean ± std over tasks per
principle and per category, next to the accuracy on each kind of negative pooled over the
group's images (principle broken, attribute broken: a model that ignores the principle
fails only the first), and the share of tasks whose F1 reaches each threshold (the paper's
F1-threshold curve), plotted with the mean F1 per category.
"""
from __future__ import annotations

import math
from pathlib import Path

from engine.lazy import lazy_module

from .family import FAMILY

plots = lazy_module("engine.plots")             # drawn by the renderer (torch): loaded when a report is written

THRESHOLDS = [round(0.05 * k, 2) for k in range(21)]
KINDS = ("principle", "attribute")


def task_metrics(results: list[dict]) -> dict[str, dict]:
    """Per ELVIS task: n, accuracy, precision, recall, F1 (positive class), and for each kind
    of negative the images and correct replies (``"<kind>_n"``, ``"<kind>_correct"``)."""
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
        for kind in KINDS:
            of_kind = [r for r in rs if r.get("negative") == kind]
            out[task][f"{kind}_n"] = len(of_kind)
            out[task][f"{kind}_correct"] = sum(1 for r in of_kind if r["correct"])
    return out


def _mean_std(values) -> tuple[float, float]:
    n = len(values)
    m = sum(values) / n
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / n)


def grouped(metrics: dict, by: str) -> dict[str, dict]:
    """Mean and std over tasks of each metric, per ``principle`` or ``category``, and the
    pooled accuracy on each kind of negative (``"<kind>"``: ``(accuracy, images)``, NaN when
    the group has none)."""
    groups: dict[str, list[dict]] = {}
    for m in metrics.values():
        groups.setdefault(m[by], []).append(m)
    return {g: {"tasks": len(ms), **{k: _mean_std([m[k] for m in ms]) for k in ("accuracy", "precision", "recall", "f1")},
                **{kind: _pooled(ms, kind) for kind in KINDS}}
            for g, ms in sorted(groups.items())}


def _pooled(ms: list[dict], kind: str) -> tuple[float, int]:
    n = sum(m.get(f"{kind}_n", 0) for m in ms)
    return (sum(m.get(f"{kind}_correct", 0) for m in ms) / n if n else float("nan")), n


def f1_curve(metrics: dict, thresholds=THRESHOLDS) -> list[tuple[float, float]]:
    """``(t, share of tasks with F1 >= t)`` for each threshold."""
    f1 = [m["f1"] for m in metrics.values()]
    return [(t, sum(v >= t - 1e-12 for v in f1) / len(f1)) for t in thresholds]


def to_markdown(metrics: dict) -> str:
    pm = lambda v: f"{v[0]:.3f} ± {v[1]:.3f}"  # noqa: E731
    kind = lambda v: "–" if v[1] == 0 else f"{v[0]:.3f} ({v[1]})"  # noqa: E731
    overall = grouped({k: {**m, "all": "all"} for k, m in metrics.items()}, "all")["all"]
    lines = ["## ELVIS", "", f"{len(metrics)} tasks. Mean ± std over tasks; chance accuracy is 0.5 (balanced classes). "
             "The last two columns are the accuracy on negatives that break the principle and on negatives that "
             "break an attribute rule, pooled over the images (their number in brackets); a model that ignores the "
             "principle fails the first and passes the second.", "",
             f"Overall: accuracy {pm(overall['accuracy'])}, F1 {pm(overall['f1'])}; principle negatives "
             f"{kind(overall['principle'])}, attribute negatives {kind(overall['attribute'])}.", ""]
    for by in ("principle", "category"):
        lines += [f"| {by} | tasks | accuracy | precision | recall | F1 | principle neg. | attribute neg. |",
                  "|---|---|---|---|---|---|---|---|"]
        for g, r in grouped(metrics, by).items():
            lines.append(f"| {g} | {r['tasks']} | {pm(r['accuracy'])} | {pm(r['precision'])} | {pm(r['recall'])} | "
                         f"{pm(r['f1'])} | {kind(r['principle'])} | {kind(r['attribute'])} |")
        lines.append("")
    curve = f1_curve(metrics)
    lines += ["Share of tasks with F1 ≥ threshold:", "",
              "| F1 ≥ | " + " | ".join(f"{t:.2f}" for t, _ in curve[::2]) + " |",
              "|---|" + "---|" * len(curve[::2]),
              "| tasks | " + " | ".join(f"{100 * v:.0f}%" for _, v in curve[::2]) + " |", "",
              "![F1-threshold curve](elvis_f1_threshold.png) ![F1 per category](elvis_categories.png)", ""]
    return "\n".join(lines)


@FAMILY.report
def report(results: list[dict], folder, title: str = "") -> str:
    """The ELVIS section of ``summary.md`` and its two plots (empty when no ELVIS task ran)."""
    metrics = task_metrics(results)
    if not metrics:
        return ""
    folder = Path(folder)
    curves = {p: f1_curve({k: m for k, m in metrics.items() if m["principle"] == p})
              for p in sorted({m["principle"] for m in metrics.values()})}
    curves["all"] = f1_curve(metrics)
    plots.curve_plot(curves, folder / "elvis_f1_threshold.png", f"{title}: share of tasks with F1 >= threshold",
               "F1 threshold", "tasks")
    cats = grouped(metrics, "category")
    plots.value_bars({c: r["f1"][0] for c, r in cats.items()}, folder / "elvis_categories.png",
               f"{title}: mean F1 per category", errors={c: r["f1"][1] for c, r in cats.items()})
    return to_markdown(metrics)
