"""``bongard/<style>/<category>/<concept>``: one sample is one problem.

Panels: the collage first (2x3 left, separator, 2x3 right, all symbolic, so it renders in
one pass at any size), then the 12 single panels, left ones first (protocols that show
panels one by one or in pairs use them), then one held-out panel per side. A one-turn
prompt shows the collage alone (``prompt_panels``). The answer is two sentences, left concept then right concept;
replies are graded by the rule-based judge (:mod:`scenes.bongard.judge`).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.compose import inset
from engine.errors import UserError
from engine.placement import PlacementError
from engine.sample import Draw
from engine.scene import Scene

from . import aerial, classic  # noqa: F401  (register the concepts)
from .concepts import CONCEPTS, Concept
from .family import FAMILY
from .folders import IMAGE_SUFFIXES, read_image

SYSTEM = ("You are a vision understanding module designed to provide short, clear, and accurate answers. Your goal is "
          "to solve a Bongard problem consisting of a collage with six images on the left side and six images on the "
          "right side. All left images share a common concept that none of the right images have, and all right "
          "images share a different common concept that none of the left images have. Your task is to identify both "
          "concepts. The answer must consist of exactly two plain sentences: the first sentence describes the "
          "concept of the left side, and the second sentence describes the concept of the right side. Do not use "
          "markdown, bullet points, or any formatting. Keep each sentence short and clear.")
DIRECT = ("Here is the Bongard problem collage. Provide your answer as two plain sentences: first the concept for all "
          "left images, then the concept for all right images.")
PER_SIDE = 6
HELD_OUT = 1                   # extra panels per side (after the 12) for a classification variant
ATTEMPTS = 50

# Collage geometry in panel units: per side 2 columns x 3 rows, a margin around and between
# panels; the separator between the sides.
MARGIN = 0.08
SEPARATOR = 0.3
SIDE = 2 + 3 * MARGIN                        # one side's width: margin, panel, margin, panel, margin


def collage_shape() -> tuple[float, float]:
    """(width, height) of a collage in panel units."""
    return 2 * SIDE + SEPARATOR, 3 + 4 * MARGIN


def collage_pixels(panel: int) -> tuple[int, int]:
    """``(height, width)`` in pixels of a collage whose panels are ``panel`` pixels wide."""
    w, h = collage_shape()
    return round(h * panel), round(w * panel)


def panel_boxes() -> list[tuple[float, float, float, float]]:
    """``(x0, y0, x1, y1)`` of the 12 panels in panel units, left side first, row by row:
    both sides laid out alike, so every panel shows whole and at one size."""
    out = []
    for side in (0, 1):
        start = side * (SIDE + SEPARATOR)
        for k in range(PER_SIDE):
            r, c = divmod(k, 2)
            x0, y0 = start + MARGIN + c * (1 + MARGIN), MARGIN + r * (1 + MARGIN)
            out.append((x0, y0, x0 + 1, y0 + 1))
    return out


def collage(left: list[Scene], right: list[Scene]) -> Scene:
    """Six left and six right panel scenes as one collage scene: 2x3 per side, margins, and
    a black separator bar. Render it at :func:`collage_pixels` to keep panels square."""
    if len(left) != PER_SIDE or len(right) != PER_SIDE:
        raise ValueError(f"a collage needs {PER_SIDE} left and {PER_SIDE} right panels, got {len(left)} and {len(right)}")
    W, H = collage_shape()
    u = 1.0 / W                                    # one panel unit in scene units
    grey = (235, 235, 235)
    s = Scene(background=grey)
    boxes = panel_boxes()
    for p, (x0, y0, _, _) in zip(list(left) + list(right), boxes):
        inset(s, p, ((x0 + 0.5) * u, (y0 + 0.5) * u), u)
    # Panels may draw a little past their edges (round line caps, shapes at the border): the
    # margins around and between them are painted over, then the separator and the frames.
    for side in (0, 1):
        start = side * (SIDE + SEPARATOR)
        for x in (start, start + 1 + MARGIN, start + 2 + 2 * MARGIN):
            s.rectangle(((x + MARGIN / 2) * u, H / 2 * u), (MARGIN * u, H * u), color=grey)
    for y in (0, 1 + MARGIN, 2 + 2 * MARGIN, 3 + 3 * MARGIN):
        s.rectangle((W / 2 * u, (y + MARGIN / 2) * u), (W * u, MARGIN * u), color=grey)
    mid = (SIDE + SEPARATOR / 2) * u           # over the margins beside it too: no seam where two paints meet
    s.rectangle((mid, H / 2 * u), ((SEPARATOR + 2 * MARGIN) * u, H * u), color=grey)
    for x0, y0, _, _ in boxes:
        s.rectangle(((x0 + 0.5) * u, (y0 + 0.5) * u), (u, u), color=(90, 90, 90), fill=False, stroke=0.01 * u)
    s.rectangle((mid, H / 2 * u), (SEPARATOR * 0.35 * u, (3 + 2 * MARGIN) * u), color=(0, 0, 0))
    return s


def photo_panel(image: np.ndarray) -> Scene:
    """A square panel showing ``image`` (``[3, S, S]`` uint8) whole, as a sprite."""
    p = Scene(background=(255, 255, 255))
    p.sprite(image, (0.5, 0.5), (1.0, 1.0))
    return p


def collage_from_folders(folder) -> Scene:
    """A collage of real images: ``folder/left`` and ``folder/right`` must each hold exactly
    six readable images (sorted by name); each becomes a square panel (centre crop)."""
    root = Path(folder)
    sides = []
    for name in ("left", "right"):
        d = root / name
        if not d.is_dir():
            raise UserError(f"{str(d)!r} is not a folder; a collage folder needs left/ and right/ with six images each")
        files = sorted(p for p in d.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if len(files) != PER_SIDE:
            raise UserError(f"{str(d)!r} holds {len(files)} images; a collage needs exactly {PER_SIDE} per side")
        sides.append([photo_panel(read_image(f)) for f in files])
    return collage(*sides)


def problem(c: Concept, rng) -> Draw:
    """One problem of concept ``c``: the collage, the 12 panels, and held-out panels' facts."""
    sides = {0: [], 1: []}
    facts = {0: [], 1: []}
    for side in (0, 1):
        for _ in range(PER_SIDE + HELD_OUT):
            for _ in range(ATTEMPTS):
                try:
                    scene, f = c.panel(rng, side)
                    break
                except PlacementError:
                    continue
            else:
                raise RuntimeError(f"{c.task_id}: no panel layout in {ATTEMPTS} attempts")
            sides[side].append(scene)
            facts[side].append(f)
    left, right = sides[0][:PER_SIDE], sides[1][:PER_SIDE]
    meta = {"category": c.category, "style": c.style, "concept": c.name, "rule": c.rule,
            "reference": {"left": c.left, "right": c.right},
            "correct_examples": [list(x) for x in c.correct], "incorrect_examples": [list(x) for x in c.incorrect],
            "panels": {"left": facts[0][:PER_SIDE], "right": facts[1][:PER_SIDE]},
            "held_out": {"left": facts[0][PER_SIDE:], "right": facts[1][PER_SIDE:]}}
    held = [sides[0][PER_SIDE:], sides[1][PER_SIDE:]]
    panels = [collage(left, right)] + left + right + held[0] + held[1]
    width, height = collage_shape()
    return Draw(panels, SYSTEM + "\n\n" + DIRECT, f"{c.left} {c.right}", "single", meta=meta,
                gold_text=f"{c.left} {c.right}", prompt_panels=[0],
                panel_extents=[(round(height, 4), round(width, 4))] + [(1.0, 1.0)] * (len(panels) - 1),
                caption=f"{c.category}: left: {c.left} right: {c.right}")


def _about(style: str, category: str, concept: str) -> str:
    c = CONCEPTS[f"bongard/{style}/{category}/{concept}"]
    return f"Bongard {style} {category}: {c.left} / {c.right}"


@FAMILY.task(cases={tid: {"style": c.style, "category": c.category, "concept": c.name} for tid, c in CONCEPTS.items()},
             description=_about, open_answer=True)
def bongard_problem(rng, style: str, category: str, concept: str) -> Draw:
    """One problem of the concept ``bongard/<style>/<category>/<concept>``."""
    return problem(CONCEPTS[f"bongard/{style}/{category}/{concept}"], rng)
