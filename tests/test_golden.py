"""Pinned outputs: the pixels (and question and answer) of two samples of one task of every
task folder, as sha256 digests in ``tests/golden.json``. A refactor must leave them alone; a
change that alters samples on purpose updates the file and says why in its commit:

    python -m tests.test_golden --update

KiVA is left out: its sprites come from the machine's OpenGL driver, not from procvis.
"""
import hashlib
import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from engine.outputs import render_samples
from engine.registry import get_task, list_tasks

GOLDEN = Path(__file__).with_name("golden.json")
SEED, INDICES, SIZE = 3, (0, 1), 48


def pinned_tasks() -> list[str]:
    """The first task of every task folder, KiVA's left out."""
    first = defaultdict(list)
    for t in list_tasks():
        first[t.rsplit("/", 1)[0]].append(t)
    return sorted(ids[0] for folder, ids in first.items() if not folder.startswith("kiva"))


def digest(task_id: str) -> str:
    samples = get_task(task_id).samples(SEED, INDICES)
    h = hashlib.sha256()
    for s, images in zip(samples, render_samples(samples, SIZE)):
        h.update(json.dumps([s.question, s.answer_text]).encode())
        for im in images:
            h.update(im.numpy().tobytes())
    return h.hexdigest()[:24]


@pytest.mark.parametrize("task_id", pinned_tasks())
def test_samples_match_the_pinned_digests(task_id):
    pinned = json.loads(GOLDEN.read_text())
    assert task_id in pinned, f"{task_id} is not pinned: run python -m tests.test_golden --update"
    assert digest(task_id) == pinned[task_id]


if __name__ == "__main__" and "--update" in sys.argv:
    GOLDEN.write_text(json.dumps({t: digest(t) for t in pinned_tasks()}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
