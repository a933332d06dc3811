"""Percept-V protocols and report.

``perceptv`` is the benchmark's zero-shot protocol: the domain's prompt (with its output
format line and the closing instruction) and the image(s), one turn. ``perceptv-1shot``
first shows a solved exemplar, a different instance of the same domain and size with its
gold answer written in the output format, as an earlier exchange, then asks the problem.

The report gives accuracy (all-or-nothing exact match) and format errors per domain, per
TVPS-4 skill (a domain counts in each skill it tests) and per problem size, with the
accuracy-vs-size curve of every skill (the paper's Figure 2).
"""
from __future__ import annotations

from pathlib import Path

from engine.outputs import render_samples
from engine.sample import Sample

from .protocols import Protocol, Turn, register_protocol

EXEMPLAR_OFFSET = 1_000_000          # exemplars come from indices no dataset of 200 per domain uses


@register_protocol
class PerceptV(Protocol):
    """Zero-shot: the prompt and the image(s)."""

    name = "perceptv"

    def first(self, sample: Sample, images) -> Turn:
        return Turn(sample.question, list(images), gold=sample.meta.get("gold_text"))


@register_protocol
class PerceptVOneShot(Protocol):
    """One solved exemplar of the same domain and size, then the problem."""

    name = "perceptv-1shot"

    def first(self, sample: Sample, images) -> Turn:
        from engine.registry import get_task

        # same size (index // 10 % 20), another instance
        ex = get_task(sample.task).sample(sample.seed, EXEMPLAR_OFFSET + sample.index)
        shown = render_samples([ex], tuple(images[0].shape[-2:]))[0]
        return Turn(ex.question, list(shown), reply=ex.meta["gold_text"])

    def next(self, sample: Sample, images, turns):
        if len(turns) == 1:
            return Turn(sample.question, list(images), gold=sample.meta.get("gold_text"))
        return None


def rows(results: list[dict]) -> list[dict]:
    """The Percept-V results with their domain, size and skills."""
    from scenes.perceptv import DOMAINS, size_instance

    out = []
    for r in results:
        if r["task"].startswith("perceptv/"):
            name = r["task"].split("/", 1)[1]
            index = int(r["id"].rsplit(":", 1)[1])
            out.append({**r, "domain": name, "size": size_instance(index % 1_000_000)[0],
                        "skills": DOMAINS[name].skills})
    return out


def _acc(rs) -> tuple[float, float, int]:
    return (sum(r["correct"] for r in rs) / len(rs), sum(r["format_error"] for r in rs) / len(rs), len(rs))


def tables(rs: list[dict]) -> dict:
    """Accuracy and format-error rate by domain, by skill and by size (and skill x size)."""
    from scenes.perceptv import SKILL_NAMES

    by = {"domain": {}, "skill": {}, "size": {}, "skill_size": {}}
    for r in rs:
        by["domain"].setdefault(r["domain"], []).append(r)
        by["size"].setdefault(r["size"], []).append(r)
        for k in r["skills"]:
            by["skill"].setdefault(SKILL_NAMES[k], []).append(r)
            by["skill_size"].setdefault((SKILL_NAMES[k], r["size"]), []).append(r)
    return {k: {g: _acc(v) for g, v in sorted(d.items())} for k, d in by.items()}


def to_markdown(t: dict) -> str:
    lines = ["## Percept-V", "", "Accuracy is all-or-nothing exact match; format errors (replies that follow no "
             "reading of the output format) are counted apart.", ""]
    for key, title in (("skill", "skill"), ("domain", "domain"), ("size", "size")):
        lines += [f"| {title} | n | accuracy % | format errors % |", "|---|---|---|---|"]
        for g, (acc, fe, n) in t[key].items():
            lines.append(f"| {g} | {n} | {100 * acc:.2f} | {100 * fe:.2f} |")
        if key == "skill" and t[key]:
            mean = sum(a for a, _, _ in t[key].values()) / len(t[key])
            lines.append(f"| average of skills | | {100 * mean:.2f} | |")
        lines.append("")
    lines += ["![accuracy vs size per skill](perceptv_sizes.png)", ""]
    return "\n".join(lines)


def report(results: list[dict], folder, title: str = "") -> str:
    """The Percept-V section of ``summary.md`` and its plot (empty when no Percept-V task ran)."""
    rs = rows(results)
    if not rs:
        return ""
    from .plots import curve_plot

    t = tables(rs)
    sizes = sorted(t["size"])
    lo, hi = sizes[0], max(sizes[-1], sizes[0] + 1)
    curves = {}
    for skill in t["skill"]:
        pts = [((s - lo) / (hi - lo), t["skill_size"][(skill, s)][0]) for s in sizes if (skill, s) in t["skill_size"]]
        curves[skill] = pts
    curve_plot(curves, Path(folder) / "perceptv_sizes.png", f"{title}: accuracy by problem size",
               f"problem size ({lo} to {hi})", "accuracy", xlabels=(lo, hi))
    return to_markdown(t)
