"""Real Bongard problems as tasks ``bongard/real/<category>/<name>``, one per problem folder
under the setting ``bongard.problems`` (layout and checks: :mod:`scenes.bongard.folders`).

Sample ``(task, seed, index)``: six images per side, every one when a side holds six, else
six drawn with the sample's generator (so seeded by task, seed and index like every
procvis sample), shown in file-name order. Panels in the procedural problems' order, so
every strategy runs unchanged: the collage, the 12 single panels (left first), then the
held-out panels, one per side that has one: drawn from ``test/``, else an image of that side
the sample does not show. Replies are graded against the folder's two rule sentences.
"""
from __future__ import annotations

from pathlib import Path

from engine.sample import Draw

from .family import FAMILY
from .folders import PER_SIDE, problems, read_image
from .tasks import DIRECT, SYSTEM, collage, collage_shape, photo_panel

PREFIX = "bongard/real/"


def real_cases(settings: dict) -> dict[str, dict]:
    """``{task id: params}`` of the problems under the family ``settings`` (none when unset)."""
    root = (settings or {}).get("problems") or ""
    return {tid: {"category": p.category, "name": p.name} for tid, p in problems(root).items()} if root else {}


def _about(category: str, name: str) -> str:
    return f"Bongard real problem {name} ({category})"


def choose(files, rng, k: int = PER_SIDE) -> tuple[list, list]:
    """``(shown, rest)``: ``k`` of ``files`` (all when there are ``k``) in their order, and the others."""
    if len(files) == k:
        return list(files), []
    picked = set(int(i) for i in rng.choice(len(files), size=k, replace=False))
    return [f for i, f in enumerate(files) if i in picked], [f for i, f in enumerate(files) if i not in picked]


@FAMILY.task_source(PREFIX, real_cases, description=_about, open_answer=True)
def real_problem(rng, category: str, name: str, settings: dict) -> Draw:
    """One real problem from the folder the setting ``bongard.problems`` names."""
    root = Path(settings["problems"])
    p = problems(str(root))[f"{PREFIX}{category}/{name}"]
    left, left_rest = choose(p.left, rng)
    right, right_rest = choose(p.right, rng)
    held = []
    for test, rest in ((p.test_left, left_rest), (p.test_right, right_rest)):
        pool = test or rest
        held.append([pool[int(rng.integers(len(pool)))]] if pool else [])
    rel = lambda files: [f.relative_to(root / name).as_posix() for f in files]  # noqa: E731
    shown = [photo_panel(read_image(f)) for f in left + right]
    panels = [collage(shown[:PER_SIDE], shown[PER_SIDE:])] + shown + [photo_panel(read_image(f))
                                                                       for f in held[0] + held[1]]
    meta = {"category": category, "style": "real", "concept": name,
            "rule": {"left": p.left_rule, "right": p.right_rule},
            "reference": {"left": p.left_rule, "right": p.right_rule},
            "correct_examples": [], "incorrect_examples": [],
            "images": {"left": rel(left), "right": rel(right)},
            "held_out": {"left": rel(held[0]), "right": rel(held[1])}}
    width, height = collage_shape()
    gold = f"{p.left_rule} {p.right_rule}"
    return Draw(panels, SYSTEM + "\n\n" + DIRECT, gold, "single", meta=meta, gold_text=gold, prompt_panels=[0],
                panel_extents=[(round(height, 4), round(width, 4))] + [(1.0, 1.0)] * (len(panels) - 1),
                caption=f"{category}: left: {p.left_rule} right: {p.right_rule}")
