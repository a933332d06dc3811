"""The Bongard section of an evaluation report in the seed's results-table layout: one row per
model and strategy, columns all and each category, under the seed's human row.

The human row is the seed's measurement on its own real images, so it is labelled as such
and repeated over every table as a reference, not as a score on these problems. Rows of
several runs (``procvis report RUN1 RUN2 ...``; one run is one model under one strategy)
make one table; each results row names its model and protocol.
"""
from __future__ import annotations

from .family import FAMILY

HUMANS = {"all": 0.745, "number": 0.823, "presence": 0.734, "same": 0.577, "semantic": 0.853, "shape": 0.801,
          "size": 0.778, "spatial": 0.518}
HUMANS_LABEL = "Humans (paper, real images)"
COLUMNS = ("all", "number", "presence", "same", "semantic", "shape", "size", "spatial")
STYLES = {"classic": "classic procedural problems", "aerial": "aerial procedural problems",
          "real": "real problems from folders"}
EMPTY = "—"
JUDGES = "judges agree"      # share of replies the model judge graded as the rule judge did


def accuracy_table(results: list[dict], title: str = "") -> list[str]:
    """Markdown lines of one table: the human row, the chance row (``—``: free-text answers
    have none), then one row per (model, strategy) in order of appearance, accuracy in
    ``all`` and each category (``—`` where a row has no problem of that category). A row
    without ``model`` is labelled ``title``. When rows were also graded by a model judge, a
    last column gives how often it agreed with the rule judge."""
    groups: dict[tuple[str, str], dict[str, list[bool]]] = {}
    agree: dict[tuple[str, str], list[bool]] = {}
    extra = []
    for r in results:
        key = (r.get("model") or title or "this run", r.get("protocol", "direct"))
        cat = r["task"].split("/")[2]
        if cat not in COLUMNS and cat not in extra:
            extra.append(cat)                       # e.g. uncategorised real problems
        by = groups.setdefault(key, {"all": []})
        by.setdefault(cat, []).append(bool(r["correct"]))
        by["all"].append(bool(r["correct"]))
        if "model_judge" in r:
            agree.setdefault(key, []).append(bool(r["model_judge"]) == bool(r["correct"]))
    columns = list(COLUMNS) + sorted(extra)
    judged = [JUDGES] if agree else []
    fmt = lambda by, c: f"{sum(by[c]) / len(by[c]):.3f}" if by.get(c) else EMPTY  # noqa: E731
    row = lambda cells: "| " + " | ".join(cells) + " |"  # noqa: E731
    lines = [row(["Model", "Strategy", "n"] + columns + judged), "|" + "---|" * (len(columns) + len(judged) + 3),
             row([HUMANS_LABEL, EMPTY, EMPTY] + [f"{HUMANS[c]:.3f}" if c in HUMANS else EMPTY for c in columns]
                 + [EMPTY] * len(judged)),
             row(["Chance", EMPTY, EMPTY] + [EMPTY] * (len(columns) + len(judged)))]
    for key, by in groups.items():
        a = agree.get(key)
        judges = ([f"{sum(a) / len(a):.3f} ({len(a)})" if a else EMPTY]) if judged else []
        lines.append(row([f"`{key[0]}`", f"`{key[1]}`", str(len(by["all"]))] + [fmt(by, c) for c in columns] + judges))
    return lines


@FAMILY.report
def report(results: list[dict], folder=None, title: str = "") -> str:
    """The Bongard section: one table per style present (classic, aerial, real), rows model x
    strategy, columns all and the categories, graded by the rule-based judge."""
    rs = [r for r in results if r["task"].startswith("bongard/")]
    if not rs:
        return ""
    lines = ["## Bongard", "", f"{len(rs)} problems, graded by the rule-based judge (first sentence: left concept, "
             "second: right). Accuracy per model and strategy, overall and per category.", ""]
    order = list(STYLES)
    styles = sorted({r["task"].split("/")[1] for r in rs}, key=lambda s: (order.index(s) if s in order else len(order), s))
    for style in styles:
        if len(styles) > 1:
            lines += [f"### {STYLES.get(style, style)}", ""]
        lines += accuracy_table([r for r in rs if r["task"].split("/")[1] == style], title) + [""]
    lines += [f"*{HUMANS_LABEL}*: the seed paper's human accuracy, measured on the paper's own real images; it is "
              f"shown for reference and was not measured on these problems. Chance is {EMPTY}: a free-text "
              "answer has no answer distribution to guess from."]
    if any("model_judge" in r for r in rs):
        lines += ["", f"*{JUDGES}*: the share of replies (and their number) that the model judge graded as the "
                  "rule judge did (`procvis eval --judge`)."]
    return "\n".join(lines + [""])


FAMILY.report_runs(report)
