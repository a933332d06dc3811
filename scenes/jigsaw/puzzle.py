"""What a pixel-reading solver is asked by a jigsaw sample: its question structure (which
panel has the hole, which panels are candidates, what the options list), stated for the
audit's shortcut solver. Read from the panels (their order and the labels drawn on them) and
the question text only, never from the record's answer or metadata."""
from __future__ import annotations

import itertools
import re

from kernels.glyphs import load_atlas

from .family import FAMILY

LETTERS = "ABCD"
LISTED = re.compile(r"\b([A-D])\. \[(\d), (\d), (\d), (\d)\]")


def _fmt(order) -> str:
    return "[" + ", ".join(str(v) for v in order) + "]"


def drawn_labels(scene, grid: int) -> list[str]:
    """The one-letter labels drawn on ``scene`` (a ``grid x grid`` picture filling the
    panel), in the reading order of the cells they sit in: what a solver reads off the
    panel."""
    charset = load_atlas().charset
    at = {}
    for p in scene.primitives:
        if p.kind == "text":
            x, y = p.center
            at[min(int(y * grid), grid - 1) * grid + min(int(x * grid), grid - 1)] = charset[p.index]
    return [at[c] for c in sorted(at)]


@FAMILY.shortcut
def puzzle(sample) -> dict | None:
    """The sample's puzzle in the form :mod:`evals.audit.seams` reads, or ``None`` for tasks
    seams do not answer (connection, anomaly)."""
    task = sample.task
    if task.startswith("jigsaw/missing_piece/"):
        return {"kind": "fill", "image": 0, "grid": 3, "options": {a: 1 + k for k, a in enumerate(LETTERS)}}
    if task.startswith("jigsaw/localization/"):
        easy = task.endswith("/easy")
        g = 2 if easy else 3
        return {"kind": "place", "image": 0, "piece": 1, "grid": g, "options": drawn_labels(sample.panels[0], g)}
    if task == "jigsaw/order_restoration":
        listed = {m.group(1): [int(v) for v in m.groups()[1:]] for m in LISTED.finditer(sample.question)}
        return {"kind": "arrange", "tiles": [0, 1, 2, 3], "grid": 2, "options": listed} if listed else None
    if task == "jigsaw/order_generation":
        orders = [[p.index(r) + 1 for r in range(4)] for p in itertools.permutations(range(4))]
        return {"kind": "arrange", "tiles": [0, 1, 2, 3], "grid": 2, "options": {_fmt(o): o for o in orders}}
    return None


FAMILY.exempt("jigsaw/missing_piece/easy", "shortcut",
              "the paper's easy distractors are cut from random other images at the same position, so they are "
              "meant to be told apart by how they continue the picture")
FAMILY.exempt("jigsaw/localization/*", "shortcut",
              "the task asks where the piece continues the picture; items whose true place is not strictly the "
              "most continuous are redrawn, so seams answer every item by design")
FAMILY.exempt("jigsaw/order_*", "shortcut",
              "the task asks which arrangement continues the picture; images whose own arrangement is not strictly "
              "the most continuous are passed over, so seams answer every item by design")
