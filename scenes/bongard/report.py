"""The Bongard section of an evaluation report: accuracy per category in the seed's
results-table layout, with its human baseline row."""
from __future__ import annotations

from .family import FAMILY

HUMANS = {"all": 0.745, "number": 0.823, "presence": 0.734, "same": 0.577, "semantic": 0.853, "shape": 0.801,
          "size": 0.778, "spatial": 0.518}
COLUMNS = ("all", "number", "presence", "same", "semantic", "shape", "size", "spatial")


@FAMILY.report
def report(results: list[dict], folder=None, title: str = "") -> str:
    """Accuracy per category in the seed's results-table layout, with its human baseline row."""
    rs = [r for r in results if r["task"].startswith("bongard/")]
    if not rs:
        return ""
    by: dict[str, list[bool]] = {"all": []}
    for r in rs:
        cat = r["task"].split("/")[2]
        by.setdefault(cat, []).append(r["correct"])
        by["all"].append(r["correct"])
    row = lambda name, vals: "| " + name + " | " + " | ".join(vals) + " |"  # noqa: E731
    fmt = lambda c: f"{sum(by[c]) / len(by[c]):.3f}" if by.get(c) else "-"  # noqa: E731
    lines = ["## Bongard", "", f"{len(rs)} problems, graded by the rule-based judge (first sentence: left concept, "
             "second: right).", "", row("Model", COLUMNS), "|" + "---|" * (len(COLUMNS) + 1),
             row("Humans (seed)", [f"{HUMANS[c]:.3f}" for c in COLUMNS]), row(title or "this run", [fmt(c) for c in COLUMNS]),
             ""]
    return "\n".join(lines)
