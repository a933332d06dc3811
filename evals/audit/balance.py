"""Answer balance and predictability: how often each gold answer occurs, overall and per
parameter value, and how well an answer can be guessed without looking at the picture: the
best constant answer, and the best answer given the task's parameters and problem size
alone (learned on half the samples, tested on the other half)."""
from __future__ import annotations

import json
from collections import Counter

from .probe import wilson


def _key(record: dict) -> str:
    """What a sample's answer may be predicted from without its pixels: the task parameters
    and, where the record states one, the problem size."""
    meta = record["meta"]
    return json.dumps([meta.get("params", {}), meta.get("size")], sort_keys=True, default=str)


def balance(records: list[dict]) -> dict:
    """For sample ``records`` (``Sample.record()``) of one task: ``{"answers": {answer: share},
    "by_size": {size: {answer: share}}, "constant": best constant accuracy, "from_params":
    {"accuracy", "low", "high", "n"}}``, the last from even-indexed samples predicting the
    odd-indexed ones."""
    answers = [r["answer"] for r in records]
    n = len(answers)
    shares = {a: c / n for a, c in sorted(Counter(answers).items())}
    sizes: dict = {}
    for r in records:
        size = r["meta"].get("size")
        if size is not None:
            sizes.setdefault(str(size), []).append(r["answer"])
    by_size = {s: {a: c / len(v) for a, c in sorted(Counter(v).items())} for s, v in sorted(sizes.items())}
    constant = max(shares.values()) if shares else 0.0
    train = [r for r in records if r["index"] % 2 == 0]
    test = [r for r in records if r["index"] % 2 == 1]
    table: dict[str, Counter] = {}
    for r in train:
        table.setdefault(_key(r), Counter())[r["answer"]] += 1
    overall = Counter(r["answer"] for r in train)
    fallback = overall.most_common(1)[0][0] if overall else None
    hits = sum(r["answer"] == (table[_key(r)].most_common(1)[0][0] if _key(r) in table else fallback) for r in test)
    low, high = wilson(hits, len(test))
    return {"answers": shares, "by_size": by_size, "constant": constant,
            "from_params": {"accuracy": hits / len(test) if test else float("nan"), "low": low, "high": high,
                            "n": len(test)}}
