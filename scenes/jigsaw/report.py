"""The Jigsaw section of an evaluation report in the paper's results-table layout: the seven
scored columns and their unweighted mean ("Overall"), under the paper's human row and the
chance and p<0.05 rows computed for the items at hand. Order generation (an open answer)
is reported beside the table, not in the overall, as in the paper.

The human row is the paper's measurement on its own photographs (a 220-image subset), so it
is labelled as such and shown as a reference, not as a score on these items.
"""
from __future__ import annotations

from engine.registry import get_task
from engine.stats import chance, critical_accuracy, percent

from .family import FAMILY

COLUMNS = (("MP easy", "jigsaw/missing_piece/easy"), ("MP hard", "jigsaw/missing_piece/hard"),
           ("PL easy", "jigsaw/localization/easy"), ("PL hard", "jigsaw/localization/hard"),
           ("CV", "jigsaw/connection"), ("AD", "jigsaw/anomaly"), ("OR", "jigsaw/order_restoration"))
OPEN = "jigsaw/order_generation"
HUMANS = (99.55, 100.00, 95.45, 91.36, 93.18, 97.27, 97.73)     # the paper's Table 3; overall 96.36
HUMANS_LABEL = "Humans (paper, its photographs, 220-image subset)"
EMPTY = "—"


def _cells(values: list[float | None]) -> list[str]:
    """Percent cells of the seven columns and their mean over the columns present; ``—`` for
    a missing column, and for the mean when a column is missing or has no value."""
    shown = [f"{v:.2f}" if v is not None else EMPTY for v in values]
    known = [v for v in values if v is not None]
    return shown + [f"{sum(known) / len(known):.2f}" if known and len(known) == len(values) else EMPTY]


def reference_rows(counts: dict[str, int], settings: dict | None = None) -> tuple[list, list]:
    """``(chance, critical)``: per column, the chance accuracy (percent) of a guess drawn from
    the task's answer distribution and the accuracy an exact one-sided binomial test over the
    column's ``counts[task]`` items needs at p<0.05 (``None`` where a column has no items, or
    where even all of them would not reach it: never above 100%)."""
    ch, crit = [], []
    for _, tid in COLUMNS:
        n = counts.get(tid, 0)
        if not n:
            ch.append(None)
            crit.append(None)
            continue
        p0 = chance(get_task(tid, settings).answer_distribution)
        c = critical_accuracy(n, p0)
        ch.append(percent(p0))
        crit.append(percent(c, 1) if c == c else None)
    return ch, crit


def table(results: list[dict], title: str = "") -> list[str]:
    """Markdown lines: header, the human row, chance and p<0.05 rows for the items present,
    then one row per (model, protocol) in order of appearance, with order generation's
    accuracy in a last column (not in the overall)."""
    groups: dict[tuple[str, str], dict[str, list[bool]]] = {}
    counts: dict[str, int] = {}
    for r in results:
        key = (r.get("model") or title or "this run", r.get("protocol", "direct"))
        groups.setdefault(key, {}).setdefault(r["task"], []).append(bool(r["correct"]))
    for by in groups.values():
        for tid, v in by.items():
            counts[tid] = max(counts.get(tid, 0), len(v))
    ch, crit = reference_rows(counts)
    row = lambda cells: "| " + " | ".join(cells) + " |"  # noqa: E731
    lines = [row(["Model", "Protocol"] + [c for c, _ in COLUMNS] + ["Overall", "OG (open)"]),
             "|" + "---|" * (len(COLUMNS) + 4),
             row([HUMANS_LABEL, EMPTY] + _cells(list(HUMANS)) + [EMPTY]),
             row(["Random", EMPTY] + _cells(ch) + [EMPTY]),
             row(["Random (p<0.05)", EMPTY] + _cells(crit) + [EMPTY])]
    for key, by in groups.items():
        acc = [100 * sum(by[t]) / len(by[t]) if by.get(t) else None for _, t in COLUMNS]
        og = f"{100 * sum(by[OPEN]) / len(by[OPEN]):.2f}" if by.get(OPEN) else EMPTY
        lines.append(row([f"`{key[0]}`", f"`{key[1]}`"] + _cells(acc) + [og]))
    return lines


@FAMILY.report
def report(results: list[dict], folder=None, title: str = "") -> str:
    """The Jigsaw section: the paper's columns, Overall = the unweighted mean of the seven
    scored columns (shown only when all seven were run), chance and p<0.05 rows for these
    item counts (the paper's Table 2 rows at 1,100 items per column: 30.21 and 32.56 overall)."""
    if not results:
        return ""
    return "\n".join(["## Jigsaw-Puzzles (the paper's columns)", "",
                      "MP: missing piece, PL: piece localization, CV: connection verification, AD: anomaly "
                      "detection, OR: order restoration; Overall: their unweighted mean; OG: order generation, an "
                      "open answer outside the overall. Accuracy in percent.", ""] + table(results, title)) + "\n"
