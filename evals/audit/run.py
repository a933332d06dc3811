"""``procvis audit``: measure, for every task matching a pattern, whether its score can be
trusted, and judge the bars.

Per task: answer balance and predictability (:mod:`.balance`), the nuisance probe few-shot
as a protocol allows (:mod:`.probe` on :mod:`.features`), the reply battery (:mod:`.battery`),
legibility from pixels (:mod:`.legibility`) and the solvability of every protocol that fits
the task (:mod:`.solvability`). Per group of tasks (the id without its last part): the probe
fitted on half the tasks and tested on the others, and the pooled few-shot probes.

The bars (:data:`BARS`) are judged per task; a family exempts a task from a bar only with
a stated reason (``FAMILY.exempt``). A family that states its samples as pixel puzzles
(``FAMILY.shortcut``) also gets the ``shortcut`` bar: a seam-matching solver (:mod:`.seams`)
must not beat chance by more than ``MARGIN`` at the upper 95% bound.
"""
from __future__ import annotations

import math
import sys
import time
from collections import Counter

import numpy as np

from engine.errors import UserError
from engine.outputs import render_samples
from engine.registry import get_family, panel_size, protocols, resolve
from engine.stats import chance as stats_chance

from .balance import balance
from .battery import run_battery
from .features import FEATURES, concept_columns, sample_features
from .legibility import MIN_EXTENT, MIN_TEXT, sample_legibility
from .probe import few_shot_split, pool, probe, wilson
from . import seams
from .sides import PROBLEMS, task_side_probe
from .solvability import audit_protocol

MARGIN = 0.10               # the probe's upper bound may exceed chance by at most this
SHOTS = (3, 10)             # examples per class a protocol shows (3: the ELVIS default, 10: a generous one)
PROBE_N = 200              # held-out answers a group's probe needs for its interval to be about +-7 points
KIND_N = 3 * PROBE_N       # ... and a probe of positives against one kind of negative: +-4 points, so that a
                           # probe at chance does not fail the bar by the luck of a few hundred answers
MAX_COUNT = 400             # samples per task at most, however small the group
MAX_CLASSES = 10            # answers with more distinct values are not probed (counts, coordinates, lists)
BARS = ("probe", "reader", "legibility", "solvability")


def _discrete(samples) -> bool:
    """Whether the probe applies: fixed or single answers taking between 2 and ``MAX_CLASSES``
    values (a task whose answer never changes, e.g. a Bongard concept, has nothing to probe)."""
    kinds = {s.answer_type for s in samples}
    return bool(samples) and kinds <= {"fixed", "single"} and 2 <= len({s.answer_text for s in samples}) <= MAX_CLASSES


def _kind(sample) -> str | None:
    """The kind of a negative example, when the record names one (``meta["negative"]``)."""
    kind = sample.meta.get("negative")
    return str(kind) if kind else None


def blind(task, X: np.ndarray, kind: str | None = None) -> np.ndarray:
    """``X`` with the statistics of what the task's rule is about (for negatives of ``kind``,
    as its family declares: ``FAMILY.concept``) set to zero, so that the probe cannot use them."""
    props = get_family(task.family).concept_of(task, kind)
    if not props:
        return X
    X = X.copy()
    X[:, concept_columns(props, X.shape[1] // len(FEATURES))] = 0.0
    return X


def task_probes(task, samples, X: np.ndarray) -> dict:
    """The few-shot probes of one task: ``{"shots3": ..., "shots10": ..., "kinds": {kind: ...}}``,
    each trained on the first samples of every class and tested on the rest, on the
    statistics that do not state the task's rule (:func:`blind`). A kind's probe takes as
    many positives as it has negatives of that kind, so that its chance is 50%."""
    y = np.array([s.answer_text for s in samples])
    out = {}
    Xa = blind(task, X)
    for k in SHOTS:
        train, test = few_shot_split(list(y), k)
        out[f"shots{k}"] = probe(Xa[train], y[train], Xa[test], y[test])
    kinds = sorted({_kind(s) for s in samples} - {None})
    out["kinds"] = {}
    positives = [i for i, s in enumerate(samples) if _kind(s) is None]
    for kind in kinds:
        Xk = blind(task, X, kind)
        negatives = [i for i, s in enumerate(samples) if _kind(s) == kind]
        m = min(len(positives), len(negatives))       # as many positives as negatives: chance is 50%
        idx = sorted(positives[:m] + negatives[:m])
        labels = [y[i] for i in idx]
        train, test = few_shot_split(labels, SHOTS[0])
        idx = np.array(idx)
        out["kinds"][kind] = probe(Xk[idx[train]], y[idx[train]], Xk[idx[test]], y[idx[test]])
    return out


def _sample_count(first: list, group_size: int, probe_n: int) -> int:
    """How many samples a task is audited on, given its ``first`` samples (as many as the
    audit's count): more in a small group, so that the group's probes test on ``probe_n``
    answers and its probes of positives against each kind of negative on three times as
    many (a kind drawn rarely needs more samples); a task the probe does not apply to keeps
    the count."""
    count = len(first)
    if not _discrete(first):
        return count
    need = -(-2 * probe_n // group_size)
    kinds = Counter(_kind(s) for s in first)
    if len(kinds) > 1:
        smallest = min(min(kinds[None], v) for k, v in kinds.items() if k is not None) / count
        kind_n = KIND_N * probe_n // PROBE_N
        need = max(need, math.ceil((kind_n / (2 * group_size) + SHOTS[0]) / max(smallest, 1 / count)))
    return min(MAX_COUNT, max(count, need))


def audit_task(task, count: int, seed: int, size: int, legible: int = 2, solve: int = 2, samples=None) -> dict:
    """Every per-task measure of ``task`` on samples ``0..count-1`` at ``seed`` (``samples``,
    when the caller drew them already), rendered at ``size`` px; legibility on the first
    ``legible`` samples, solvability on ``solve`` per protocol. Returns the task's row
    (``X``/``y`` kept for the group probes under ``_data``)."""
    samples = samples if samples is not None else task.samples(seed, range(count))
    images = render_samples(samples, size)
    row: dict = {"task": task.id, "family": task.family, "n": count, "answer_type": samples[0].answer_type,
                 "balance": balance([s.record() for s in samples])}
    if _discrete(samples):
        X = np.stack([sample_features(s, ims) for s, ims in zip(samples, images)])
        row["probe"] = task_probes(task, samples, X)
        row["_data"] = (blind(task, X), np.array([s.answer_text for s in samples]), [_kind(s) for s in samples])
    family = get_family(task.family)
    if family.attributes_fn:                # a rule over labelled panels: facts only, nothing rendered
        sides = task_side_probe(samples + task.samples(seed, range(count, PROBLEMS)), family)
        if sides:
            row["probe"] = {"sides": sides}
    if family.shortcut_fn:
        short = shortcut(task, samples, images, family)
        if short:
            row["shortcut"] = short
    row["reader"] = {"skipped": "free-text answer, graded by a judge"} if task.open_answer \
        else run_battery(task, samples[:3])
    leg = [sample_legibility(s, ims, (size, size)) for s, ims in zip(samples[:legible], images[:legible])]
    ext = [r["min_extent"] for r in leg if r["min_extent"] is not None]
    txt = [r["min_text"] for r in leg if r["min_text"] is not None]
    row["legibility"] = {"min_extent": min(ext) if ext else None, "min_text": min(txt) if txt else None,
                         "hidden": sum(r["hidden"] for r in leg), "samples": len(leg)}
    row["solvability"] = {}
    for name, cls in protocols().items():
        if cls.family in (None, task.family):
            proto = cls()
            wanted = proto.indices(solve)[:solve]
            if all(i < count for i in wanted):          # already drawn and rendered above
                row["solvability"][name] = audit_protocol(proto, [samples[i] for i in wanted], size,
                                                          [images[i] for i in wanted])
            else:
                row["solvability"][name] = audit_protocol(proto, task.samples(seed, wanted), size)
    return row


def shortcut(task, samples, images, family) -> dict | None:
    """The family's pixel puzzles (``FAMILY.shortcut``) answered by the seam solver
    (:mod:`.seams`): ``{"n", "correct", "accuracy", "low", "high", "chance", "unread"}``
    (``unread``: samples whose pixels did not show the stated structure), or ``None`` when
    the family states no puzzle for the task."""
    k = n = unread = 0
    for s, ims in zip(samples, images):
        puzzle = family.shortcut_fn(s)
        if puzzle is None:
            continue
        guess = seams.solve(puzzle, ims)
        n += 1
        unread += guess is None
        k += guess == s.answer_text
    if not n:
        return None
    low, high = wilson(k, n)
    chance = family.chance_of(task)
    if chance is None and task.answer_distribution:
        chance = stats_chance(task.answer_distribution)
    return {"n": n, "correct": k, "accuracy": k / n, "low": low, "high": high,
            "chance": float("nan") if chance is None else chance, "unread": unread}


def group_of(task_id: str) -> str:
    """The group a task's probes pool with: its id without the last part."""
    return task_id.rsplit("/", 1)[0] if "/" in task_id else task_id


def group_probes(rows: list[dict]) -> dict:
    """Per group: the held-out-task probe (fitted on every other task of the group, tested on
    the rest; a group of one task splits its samples by index parity), the pooled few-shot
    probes, and the pooled positives-against-each-negative-kind probes."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if "_data" in r:
            groups.setdefault(group_of(r["task"]), []).append(r)
    out = {}
    for g, rs in sorted(groups.items()):
        shapes = {r["_data"][0].shape[1] for r in rs}
        if len(shapes) == 1:
            out[g] = {"held_out": _held_out(rs)}
        else:
            out[g] = {"held_out": {"n": 0, "accuracy": float("nan"), "note": "tasks show different panel counts"}}
        for k in SHOTS:
            out[g][f"shots{k}"] = pool([r["probe"][f"shots{k}"] for r in rs])
        kinds = sorted({k for r in rs for k in r["probe"]["kinds"]})
        out[g]["kinds"] = {k: pool([r["probe"]["kinds"][k] for r in rs if k in r["probe"]["kinds"]]) for k in kinds}
        out[g]["tasks"] = len(rs)
    return out


def _held_out(rs: list[dict]) -> dict:
    if len(rs) == 1:
        X, y, _ = rs[0]["_data"]
        even, odd = np.arange(0, len(y), 2), np.arange(1, len(y), 2)
        return probe(X[even], y[even], X[odd], y[odd])
    fit = [r["_data"] for i, r in enumerate(rs) if i % 2 == 0]
    test = [r["_data"] for i, r in enumerate(rs) if i % 2 == 1]
    return probe(np.concatenate([d[0] for d in fit]), np.concatenate([d[1] for d in fit]),
                 np.concatenate([d[0] for d in test]), np.concatenate([d[1] for d in test]))


def _over(p: dict) -> bool:
    return bool(p.get("n")) and not math.isnan(p.get("chance", float("nan"))) and p["high"] > p["chance"] + MARGIN


def judge(row: dict, group: dict | None) -> dict:
    """``{bar: "pass" | "fail: why" | "exempt: reason" | "n/a"}`` for one task row."""
    family = get_family(row["family"])
    verdict = {}
    sides = row.get("probe", {}).get("sides")
    if sides:
        verdict["probe"] = (f"fail: the attributes the rule is not about tell the sides apart: "
                            f"{100 * sides['accuracy']:.0f}% (bound {100 * sides['high']:.0f}%, chance "
                            f"{100 * sides['chance']:.0f}%; strongest: {sides['strongest'][0][0]})"
                            if _over(sides) else "pass")
    elif group is None:
        verdict["probe"] = "n/a"
    else:
        probes = {"held-out tasks": group["held_out"], **{f"{k}-shot": group[f"shots{k}"] for k in SHOTS},
                  **{f"positives vs {k} negatives": p for k, p in group["kinds"].items()}}
        over = [f"{name} {100 * p['accuracy']:.0f}% (bound {100 * p['high']:.0f}%, chance {100 * p['chance']:.0f}%)"
                for name, p in probes.items() if _over(p)]
        verdict["probe"] = "fail: " + "; ".join(over) if over else "pass"
    rd = row["reader"]
    if "skipped" in rd:
        verdict["reader"] = "n/a"
    else:
        bad = [f"{rd[k]} {k.replace('compliant_', '').replace('_', ' ')}"
               for k in ("compliant_false_positives", "compliant_false_negatives", "crashes") if rd.get(k)]
        verdict["reader"] = "fail: " + ", ".join(bad) if bad else "pass"
    lg = row["legibility"]
    small = []
    if lg["min_extent"] is not None and lg["min_extent"] < MIN_EXTENT:
        small.append(f"object {lg['min_extent']} px")
    if lg["min_text"] is not None and lg["min_text"] < MIN_TEXT:
        small.append(f"text {lg['min_text']} px")
    if lg["hidden"]:
        small.append(f"{lg['hidden']} hidden objects")
    verdict["legibility"] = "fail: " + ", ".join(small) if small else "pass"
    unsolved = [f"{name}: {r['unsolvable']} of {r['turns']} turns" for name, r in row["solvability"].items()
                if r["unsolvable"]]
    verdict["solvability"] = "fail: " + "; ".join(unsolved) if unsolved else "pass"
    short = row.get("shortcut")
    if short:
        verdict["shortcut"] = (f"fail: the seam solver answers {100 * short['accuracy']:.0f}% (bound "
                               f"{100 * short['high']:.0f}%, chance {100 * short['chance']:.0f}%)"
                               if _over(short) else "pass")
    for bar in [*BARS, "shortcut"] if short else BARS:
        reason = family.exemption(row["task"], bar)
        if reason and verdict[bar].startswith("fail"):
            verdict[bar] = f"exempt: {reason}"
    return verdict


def audit(pattern: str | list[str], count: int = 24, seed: int = 0, size: int | None = None,
          settings: dict | None = None, progress: bool = True, probe_n: int = PROBE_N) -> dict:
    """Audit every task matching ``pattern`` (a glob, or a list of them) on at least ``count`` samples per task (more in
    a small group: see ``PROBE_N``), rendered at ``size`` px (None: each family's native size, as an evaluation
    renders them). Returns ``{"config", "tasks": {id: row},
    "groups": {group: probes}, "seconds"}``; every task row carries its ``bars``."""
    if int(count) != count or count < 8:
        raise UserError(f"--count {count!r}: the audit needs at least 8 samples per task")
    patterns = [pattern] if isinstance(pattern, str) else list(pattern)
    seen: dict[str, object] = {}
    for p in patterns:
        seen.update((t.id, t) for t in resolve(p, settings))
    tasks = [seen[k] for k in sorted(seen)]
    sizes: dict[str, int] = {}
    for t in tasks:
        sizes[group_of(t.id)] = sizes.get(group_of(t.id), 0) + 1
    start = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(tasks), unit="task", desc="audit", file=sys.stderr)
    rows = []
    for task in tasks:
        first = task.samples(seed, range(count))
        n = _sample_count(first, sizes[group_of(task.id)], probe_n)
        rows.append(audit_task(task, n, seed, panel_size(task, size),
                               samples=first + task.samples(seed, range(count, n))))
        if bar:
            bar.update(1)
    if bar:
        bar.close()
    groups = group_probes(rows)
    for r in rows:
        r["bars"] = judge(r, groups.get(group_of(r["task"])) if "_data" in r else None)
        r["balance"]["by_design"] = get_family(r["family"]).exemption(r["task"], "predictable")
        r.pop("_data", None)
    return {"config": {"pattern": " ".join(patterns), "count": count, "seed": seed, "size": size or "native"},
            "tasks": {r["task"]: r for r in rows}, "groups": groups, "seconds": time.perf_counter() - start}
