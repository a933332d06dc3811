"""Chance rows of the Percept-V domains.

Chance is the accuracy of a guess drawn from a domain's gold-answer distribution over the
benchmark's size mix (10 problems per size 1..20), scored as the domain's reader scores it
(in ``cross_and_knots`` any safe cell is right). Over ``N`` problems ``s`` it is estimated
without bias as::

    sum_s sum_{s' != s} [answer(s') accepted for s] / (N (N - 1))

It is exact where every size fixes the answer (a count that is the problem size), or every
size and instance slot (a fixed variant's yes on even instances, no on odd): then chance is
``sum_a (slots answering a / slots)^2``. Otherwise it is estimated over ``N = 20,000``
problems (1,000 per size) at a seed no dataset uses, with its standard error. The values
live in ``chance.json`` next to this module; ``python -m scenes.perceptv.chance`` recomputes
them (about 15 minutes on 2 cores), ``--check`` compares a fresh smaller estimate.
"""
from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from collections import Counter
from pathlib import Path

from .common import INSTANCES, SIZES, size_instance

CACHE = Path(__file__).with_name("chance.json")
SEED = 2 ** 31 - 1                    # the seed answer distributions are drawn at: no dataset uses it
N = 20_000
BLOCK = INSTANCES * SIZES             # one benchmark copy: 10 problems per size


def accepted(sample) -> set[str]:
    """The canonical answer texts the reader scores right for ``sample``."""
    return {sample.answer_text, *map(str, sample.meta.get("accepted") or ())}


def estimate(task, n: int = N, seed: int = SEED) -> dict:
    """``{"chance", "se", "method", "n"}`` of ``task`` from ``n`` problems (a multiple of 200,
    so every size counts equally) at ``seed``."""
    if n % BLOCK:
        raise ValueError(f"n={n} must be a multiple of {BLOCK} (10 problems per size 1..{SIZES})")
    samples = task.samples(seed, range(n))
    answers = [s.answer_text for s in samples]
    accepts = [accepted(s) for s in samples]
    for name, slot in (("size", lambda i: size_instance(i)[0]), ("size and instance slot", lambda i: i % BLOCK)):
        given: dict[int, set[str]] = {}
        for i, acc in enumerate(accepts):
            given.setdefault(slot(i), set()).update(acc)
        if all(len(v) == 1 for v in given.values()):
            fixed = Counter(next(iter(v)) for v in given.values())
            return {"chance": round(sum((k / len(given)) ** 2 for k in fixed.values()), 12), "se": 0.0,
                    "method": f"exact: each {name} fixes the answer", "n": n}
    counts = Counter(answers)
    h = [(sum(counts[g] for g in acc) - 1) / (n - 1) for acc in accepts]
    mean = sum(h) / n
    var = sum((x - mean) ** 2 for x in h) / (n - 1)
    return {"chance": round(mean, 6), "se": round(2 * math.sqrt(var / n), 6), "method": f"estimated over {n} problems",
            "n": n}


@functools.lru_cache(maxsize=1)
def table() -> dict[str, dict]:
    """The cached chance rows: ``{task id: {"chance", "se", "method", "n"}}``."""
    return json.loads(CACHE.read_text()) if CACHE.exists() else {}


def chance_of(task) -> float | None:
    """The cached chance of ``task`` (None when it has no row)."""
    row = table().get(task.id)
    return None if row is None else row["chance"]


def _one(task_id: str, n: int) -> tuple[str, dict]:
    from engine.registry import get_task

    return task_id, estimate(get_task(task_id), n)


def main(argv=None) -> int:
    from concurrent.futures import ProcessPoolExecutor

    from engine.registry import list_tasks

    ap = argparse.ArgumentParser(prog="python -m scenes.perceptv.chance", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=N, help="problems per domain (a multiple of 200)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--check", action="store_true", help="compare with the cache instead of writing it")
    ap.add_argument("--tasks", default="perceptv*/*", help="the tasks to compute (others keep their cached rows)")
    a = ap.parse_args(argv)
    if a.n <= 0 or a.n % BLOCK:
        ap.error(f"--n {a.n}: a positive multiple of {BLOCK} (10 problems per size 1..{SIZES}), e.g. {N}")
    ids = list_tasks(a.tasks)
    if not ids or not all(t.startswith("perceptv") for t in ids):
        ap.error(f"--tasks {a.tasks!r} names no Percept-V task; e.g. 'perceptv*/*' or 'perceptv_fixed/*'")
    with ProcessPoolExecutor(a.workers) as pool:
        rows = dict(pool.map(_one, ids, [a.n] * len(ids)))
    if a.check:
        worst = 0.0
        for tid, r in sorted(rows.items()):
            c = table()[tid]
            z = abs(r["chance"] - c["chance"]) / max(math.hypot(r["se"], c["se"]), 1e-12)
            worst = max(worst, z if r["se"] or c["se"] else 0.0 if r["chance"] == c["chance"] else math.inf)
            print(f"{tid:40s} cached {100 * c['chance']:7.3f}%  fresh {100 * r['chance']:7.3f}% ± {100 * r['se']:.3f}")
        print(f"largest difference: {worst:.2f} standard errors")
        return 0 if worst < 4 else 1
    rows = {**{k: v for k, v in table().items() if k in list_tasks("perceptv*/*")}, **rows}
    CACHE.write_text(json.dumps(dict(sorted(rows.items())), indent=1) + "\n")
    print(f"wrote {len(rows)} chance rows to {CACHE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
