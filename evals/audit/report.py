"""``audit.json`` and ``AUDIT.md`` (with plots) from an audit's result."""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

from engine.plots import accuracy_bars

from .legibility import MIN_EXTENT, MIN_TEXT
from .run import BARS, MARGIN, SHOTS, group_of


def _pct(x) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.0f}%"


def _probe_cell(p: dict) -> str:
    if not p or not p.get("n"):
        return "–"
    return f"{_pct(p['accuracy'])} [{_pct(p['low'])}, {_pct(p['high'])}] vs {_pct(p['chance'])}"


def _family_table(tasks: dict) -> list[str]:
    lines = ["| family | tasks | " + " | ".join(BARS) + " |", "|---|---|" + "---|" * len(BARS)]
    by_family: dict[str, list[dict]] = {}
    for r in tasks.values():
        by_family.setdefault(r["family"], []).append(r)
    for fam, rs in sorted(by_family.items()):
        cells = []
        for b in BARS:
            c = Counter(r["bars"][b].split(":")[0] for r in rs)
            cells.append(", ".join(f"{n} {k}" for k, n in sorted(c.items())))
        lines.append(f"| {fam} | {len(rs)} | " + " | ".join(cells) + " |")
    return lines


def _group_table(groups: dict, tasks: dict) -> list[str]:
    lines = ["| group | tasks | held-out tasks | " + " | ".join(f"{k}-shot" for k in SHOTS)
             + " | worst negative kind | reader fp / fn / crashes | smallest object / text (px) | unsolvable turns |",
             "|---|---|---|" + "---|" * len(SHOTS) + "---|---|---|---|"]
    by_group: dict[str, list[dict]] = {}
    for t, r in tasks.items():
        by_group.setdefault(group_of(t), []).append(r)
    for g, rs in sorted(by_group.items()):
        pr = groups.get(g, {})
        kinds = pr.get("kinds", {})
        worst = max(kinds.items(), key=lambda kv: kv[1]["high"], default=None)
        rd = [r["reader"] for r in rs if "skipped" not in r["reader"]]
        fp = sum(r["compliant_false_positives"] for r in rd)
        fn = sum(r["compliant_false_negatives"] for r in rd)
        crash = sum(r["crashes"] for r in rd)
        ext = [r["legibility"]["min_extent"] for r in rs if r["legibility"]["min_extent"] is not None]
        txt = [r["legibility"]["min_text"] for r in rs if r["legibility"]["min_text"] is not None]
        uns = sum(s["unsolvable"] for r in rs for s in r["solvability"].values())
        lines.append(f"| `{g}` | {len(rs)} | {_probe_cell(pr.get('held_out'))} | "
                     + " | ".join(_probe_cell(pr.get(f"shots{k}")) for k in SHOTS)
                     + f" | {f'{worst[0]}: ' + _probe_cell(worst[1]) if worst else '–'} | {fp} / {fn} / {crash} | "
                     f"{min(ext) if ext else '–'} / {min(txt) if txt else '–'} | {uns} |")
    return lines


def _failures(tasks: dict, limit: int = 60) -> list[str]:
    lines = []
    for t, r in sorted(tasks.items()):
        bad = [f"**{b}** " + ("fail (the group's probes, above)" if b == "probe" and v.startswith("fail")
                                   and "sides" not in r.get("probe", {}) else v)
               for b, v in r["bars"].items() if v.startswith(("fail", "exempt"))]
        if bad:
            lines.append(f"- `{t}`: " + "; ".join(bad))
    if len(lines) > limit:
        lines = lines[:limit] + [f"- … and {len(lines) - limit} more (all in `audit.json`)"]
    return lines


def _shortcuts(tasks: dict) -> list[str]:
    """One line per task that a pixel solver was run on: its accuracy and the verdict."""
    return [f"- `{t}`: {_probe_cell(r['shortcut'])} — {r['bars'].get('shortcut', 'n/a').split(':')[0]}"
            for t, r in sorted(tasks.items()) if r.get("shortcut")]


def _predictable(tasks: dict) -> list[str]:
    lines = []
    for t, r in sorted(tasks.items()):
        b = r["balance"]
        fp = b["from_params"]
        if fp["n"] and fp["low"] > b["constant"] + MARGIN:
            note = f"by design: {b['by_design']}" if b.get("by_design") else "not declared by design"
            lines.append(f"- `{t}`: from parameters {_pct(fp['accuracy'])} (lower bound {_pct(fp['low'])}) "
                         f"vs best constant {_pct(b['constant'])} — {note}")
    return lines


def write_report(result: dict, out: str | Path) -> Path:
    """Write ``audit.json``, ``AUDIT.md`` and ``probe.png`` under ``out``; returns the markdown path."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    (root / "audit.json").write_text(json.dumps(result, indent=1, default=str) + "\n")
    cfg, tasks, groups = result["config"], result["tasks"], result["groups"]
    rows = {g: {"accuracy": p["shots3"]["accuracy"], "chance": p["shots3"]["chance"],
                "critical": p["shots3"]["chance"] + MARGIN} for g, p in groups.items()
            if p["shots3"]["n"] and not math.isnan(p["shots3"]["accuracy"])}
    if rows:
        accuracy_bars(rows, root / "probe.png", "rule-blind probe, 3-shot, per group")
    shown = f"{cfg['size']} px" if isinstance(cfg["size"], int) else "each family's native size"
    md = [f"# Audit of `{cfg['pattern']}`", "",
          f"{len(tasks)} tasks, {cfg['count']} samples each (seed {cfg['seed']}, {shown}), "
          f"{result['seconds']:.0f} s.", "",
          "Bars: **probe** — a rule-blind classifier on nuisance statistics (ink, colours, edges, blob count, "
          "size and spread, nearest-neighbour distance, from pixels and from the scene) must not beat chance by "
          f"more than {100 * MARGIN:.0f} points at the upper 95% bound, fitted on held-out tasks, few-shot "
          f"({', '.join(map(str, SHOTS))} per class) and positives against each negative kind; for a rule over "
          "labelled panels (Bongard), the same classifiers on every attribute of the panels the rule is not about "
          "(counts, sizes, colours, kinds, positions of every object type, the background), panels of "
          "even-numbered problems against odd ones; **reader** — no "
          "wrong answer read as right and no prompt-compliant right answer read as wrong, no crash; "
          f"**legibility** — every object at least {MIN_EXTENT} px, text at least {MIN_TEXT} px high, nothing "
          "hidden; **solvability** — every protocol turn shows what it asks about.", "",
          "## Per family", "", *_family_table(tasks), "",
          "## Per group", "", "Probe cells: accuracy [95% interval] vs chance (majority class).", "",
          *_group_table(groups, tasks), ""]
    if rows:
        md += ["![3-shot probe per group](probe.png)", "", "Bars: probe accuracy; grey tick: chance; red tick: "
               "the bar (chance + 10 points).", ""]
    short = _shortcuts(tasks)
    if short:
        md += ["## Seam-matching solver", "", "Tasks a family states as pixel puzzles, answered from the rendered "
               "pixels by the piece, hole or arrangement whose edges best continue the picture (`shortcut` bar: "
               f"its upper bound must not exceed chance by more than {100 * MARGIN:.0f} points): accuracy "
               "[95% interval] vs chance — verdict.", "", *short, ""]
    md += ["## Failing and exempt tasks", "", *(_failures(tasks) or ["None."]), "",
           "## Answers predictable from the parameters", "", *(_predictable(tasks) or ["None."]), ""]
    path = root / "AUDIT.md"
    path.write_text("\n".join(md))
    return path
