"""The Percept-V section of an evaluation report: accuracy (all-or-nothing exact match) and
format errors per domain, per TVPS-4 skill (a domain counts in each skill it tests) and per
problem size, with the accuracy-vs-size curve of every skill (the paper's Figure 2)."""
from __future__ import annotations

from pathlib import Path

from engine.lazy import lazy_module

from .common import DOMAINS, SKILL_NAMES, size_instance
from .family import FAMILY

plots = lazy_module("engine.plots")             # drawn by the renderer (torch): loaded when a report is written


def rows(results: list[dict]) -> list[dict]:
    """The Percept-V results with their domain (``name (fixed)`` for a ``perceptv_fixed``
    task), size, skills and whether the task is a fixed variant."""
    out = []
    for r in results:
        root, _, name = r["task"].partition("/")
        if root in ("perceptv", "perceptv_fixed"):
            index = int(r["id"].rsplit(":", 1)[1])
            fixed = root == "perceptv_fixed"
            out.append({**r, "domain": f"{name} (fixed)" if fixed else name, "fixed": fixed,
                        "size": size_instance(index % 1_000_000)[0], "skills": DOMAINS[name].skills})
    return out


def _acc(rs) -> tuple[float, float, int]:
    return (sum(r["correct"] for r in rs) / len(rs), sum(r["format_error"] for r in rs) / len(rs), len(rs))


def tables(rs: list[dict]) -> dict:
    """Accuracy and format-error rate by domain (fixed variants as their own rows), and, over
    the benchmark's own domains only, by skill and by size (and skill x size)."""
    by = {"domain": {}, "skill": {}, "size": {}, "skill_size": {}}
    for r in rs:
        by["domain"].setdefault(r["domain"], []).append(r)
        if r.get("fixed"):
            continue
        by["size"].setdefault(r["size"], []).append(r)
        for k in r["skills"]:
            by["skill"].setdefault(SKILL_NAMES[k], []).append(r)
            by["skill_size"].setdefault((SKILL_NAMES[k], r["size"]), []).append(r)
    return {k: {g: _acc(v) for g, v in sorted(d.items())} for k, d in by.items()}


def to_markdown(t: dict) -> str:
    lines = ["## Percept-V", "", "Accuracy is all-or-nothing exact match; format errors (replies that follow no "
             "reading of the output format) are counted apart. Skills and sizes pool the benchmark's domains; "
             "a fixed variant (`perceptv_fixed/`, a reference shortcut removed) is its own row by domain.", ""]
    for key, title in (("skill", "skill"), ("domain", "domain"), ("size", "size")):
        lines += [f"| {title} | n | accuracy % | format errors % |", "|---|---|---|---|"]
        for g, (acc, fe, n) in t[key].items():
            lines.append(f"| {g} | {n} | {100 * acc:.2f} | {100 * fe:.2f} |")
        if key == "skill" and t[key]:
            mean = sum(a for a, _, _ in t[key].values()) / len(t[key])
            lines.append(f"| average of skills | | {100 * mean:.2f} | |")
        lines.append("")
    if t["size"]:
        lines += ["![accuracy vs size per skill](perceptv_sizes.png)", ""]
    return "\n".join(lines)


@FAMILY.report
def report(results: list[dict], folder, title: str = "") -> str:
    """The Percept-V section of ``summary.md`` and its plot (empty when no Percept-V task ran)."""
    rs = rows(results)
    if not rs:
        return ""
    t = tables(rs)
    if not t["size"]:                         # fixed variants only: no skill curve to draw
        return to_markdown(t)
    sizes = sorted(t["size"])
    lo, hi = sizes[0], max(sizes[-1], sizes[0] + 1)
    curves = {}
    for skill in t["skill"]:
        pts = [((s - lo) / (hi - lo), t["skill_size"][(skill, s)][0]) for s in sizes if (skill, s) in t["skill_size"]]
        curves[skill] = pts
    plots.curve_plot(curves, Path(folder) / "perceptv_sizes.png", f"{title}: accuracy by problem size",
               f"problem size ({lo} to {hi})", "accuracy", xlabels=(lo, hi))
    return to_markdown(t)
