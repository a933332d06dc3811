"""One report over several evaluation runs (``procvis report RUN1 RUN2 ... --out DIR``): each
run folder holds the ``results.json`` of ``procvis eval``, one model under one protocol; its
rows name both. Each family's section comes from its runs reporter (one table over all runs,
e.g. Bongard's models x strategies), else from its report once per run."""
from __future__ import annotations

import json
import re
from pathlib import Path

from . import registry
from .errors import UserError


def read_runs(folders) -> list[dict]:
    """The results rows of every run folder, in order, each with ``run`` (the folder) added.
    A folder without a readable ``results.json``, rows that do not name their model and
    protocol, or a sample scored twice for one model and protocol is a one-line
    :class:`UserError`."""
    rows, seen = [], {}
    for folder in folders:
        path = Path(folder) / "results.json"
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            raise UserError(f"{str(path)!r} does not exist; give run folders written by 'procvis eval'") from None
        except (OSError, json.JSONDecodeError) as e:
            raise UserError(f"cannot read {str(path)!r}: {e}") from None
        if not isinstance(data, list) or not all(isinstance(r, dict) and "task" in r and "correct" in r for r in data):
            raise UserError(f"{str(path)!r} is not a results file of 'procvis eval' (a list of rows with task and "
                            "correct)")
        for r in data:
            if "model" not in r or "protocol" not in r:
                raise UserError(f"{str(path)!r}: rows do not name their model and protocol (written by an older "
                                "procvis); run the same 'procvis eval' again: cached replies are reused")
            key = (r["model"], r["protocol"], r["id"])
            if key in seen and seen[key] != str(folder):
                raise UserError(f"{str(folder)!r} and {seen[key]!r} both score sample {r['id']!r} of model "
                                f"{r['model']!r} under protocol {r['protocol']!r}; give each run once")
            seen[key] = str(folder)
            rows.append({**r, "run": str(folder)})
    return rows


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "run"


def runs_markdown(rows: list[dict], out: Path) -> str:
    """``report.md`` for ``rows`` (see :func:`read_runs`): the runs, then each family's section."""
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in rows:
        runs.setdefault((r["run"], r["model"], r["protocol"]), []).append(r)
    lines = [f"# Report over {len(runs)} runs", "", "| run | model | protocol | tasks | samples | accuracy % |",
             "|---|---|---|---|---|---|"]
    for (run, model, protocol), rs in runs.items():
        acc = 100 * sum(bool(r["correct"]) for r in rs) / len(rs)
        lines.append(f"| {run} | `{model}` | `{protocol}` | {len({r['task'] for r in rs})} | {len(rs)} | {acc:.2f} |")
    sections = []
    by_family: dict[str, list[dict]] = {}
    for r in rows:
        by_family.setdefault(registry.family_of(r["task"]), []).append(r)
    for name in sorted(by_family):
        fam, rs = registry.get_family(name), by_family[name]
        if fam.runs_reporter is not None:
            sections.append(fam.runs_reporter(rs, out, ""))
        elif fam.reporter is not None:
            for (run, model, protocol), group in runs.items():
                mine = [r for r in group if registry.family_of(r["task"]) == name]
                if mine:
                    folder = out / _slug(f"{model}-{protocol}")
                    folder.mkdir(parents=True, exist_ok=True)
                    sections.append(fam.reporter(mine, folder, f"{model}, {protocol}"))
    return "\n".join(lines) + "\n\n" + "\n".join(s for s in sections if s)


def write_report(folders, out) -> Path:
    """Read the run ``folders``, write ``out/report.md`` (and the families' plots); returns its path."""
    rows = read_runs(folders)
    root = Path(out)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create folder {str(root)!r}: {e.strerror}") from None
    path = root / "report.md"
    tmp = root / ".tmp-report.md"
    tmp.write_text(runs_markdown(rows, root))
    tmp.replace(path)
    return path
