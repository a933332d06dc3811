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
from PIL import Image

from engine.compose import inset
from engine.errors import UserError
from engine.placement import PlacementError
from engine.sample import Draw
from engine.scene import Scene

from . import aerial, classic  # noqa: F401  (register the concepts)
from .concepts import CONCEPTS, Concept
from .family import FAMILY

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

# Collage geometry in panel units: 2 columns x 3 rows per side.
MARGIN = 0.08
SEPARATOR = 0.3


def collage_shape() -> tuple[float, float]:
    """(width, height) of a collage in panel units."""
    return 4 + 3 * MARGIN + 2 * MARGIN + SEPARATOR, 3 + 4 * MARGIN


def collage_pixels(panel: int) -> tuple[int, int]:
    """``(height, width)`` in pixels of a collage whose panels are ``panel`` pixels wide."""
    w, h = collage_shape()
    return round(h * panel), round(w * panel)


def collage(left: list[Scene], right: list[Scene]) -> Scene:
    """Six left and six right panel scenes as one collage scene: 2x3 per side, margins, and
    a black separator bar. Render it at :func:`collage_pixels` to keep panels square."""
    if len(left) != PER_SIDE or len(right) != PER_SIDE:
        raise ValueError(f"a collage needs {PER_SIDE} left and {PER_SIDE} right panels, got {len(left)} and {len(right)}")
    W, H = collage_shape()
    u = 1.0 / W                                    # one panel unit in scene units
    grey = (235, 235, 235)
    s = Scene(background=grey)
    boxes = []
    for side, panels in enumerate((left, right)):
        x0 = MARGIN if side == 0 else 2 + 3 * MARGIN + SEPARATOR
        for k, p in enumerate(panels):
            r, c = divmod(k, 2)
            cx = (x0 + c * (1 + MARGIN) + 0.5) * u
            cy = (MARGIN + r * (1 + MARGIN) + 0.5) * u
            inset(s, p, (cx, cy), u)
            boxes.append((cx, cy))
    # Panels may draw a little past their edges (round line caps, shapes at the border): the
    # margins are painted over them, then the frames.
    xs = [MARGIN / 2, 2 + 2.5 * MARGIN, 2 + 3.5 * MARGIN + SEPARATOR, W - MARGIN / 2, 1 + 1.5 * MARGIN,
          3 + 4.5 * MARGIN + SEPARATOR]
    widths = [MARGIN, MARGIN, MARGIN, MARGIN, MARGIN, MARGIN]
    for x, w in zip(xs, widths):
        s.rectangle((x * u, H / 2 * u), (w * u, H * u), color=grey)
    for y in (MARGIN / 2, 1.5 * MARGIN + 1, 2.5 * MARGIN + 2, H - MARGIN / 2):
        s.rectangle((W / 2 * u, y * u), (W * u, MARGIN * u), color=grey)
    s.rectangle(((2 + 3 * MARGIN + SEPARATOR / 2) * u, H / 2 * u), (SEPARATOR * u, H * u), color=grey)
    for cx, cy in boxes:
        s.rectangle((cx, cy), (u, u), color=(90, 90, 90), fill=False, stroke=0.01 * u)
    mid = (2 + 3 * MARGIN + SEPARATOR / 2) * u
    s.rectangle((mid, H / 2 * u), (SEPARATOR * 0.35 * u, (3 + 2 * MARGIN) * u), color=(0, 0, 0))
    return s


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")


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
        panels = []
        for f in files:
            try:
                img = Image.open(f).convert("RGB")
            except OSError as e:
                raise UserError(f"cannot read image {str(f)!r}: {e}") from None
            side = min(img.size)
            left, top = (img.size[0] - side) // 2, (img.size[1] - side) // 2
            arr = np.asarray(img.crop((left, top, left + side, top + side)))
            p = Scene(background=(255, 255, 255))
            p.sprite(np.ascontiguousarray(arr.transpose(2, 0, 1)), (0.5, 0.5), (1.0, 1.0))
            panels.append(p)
        sides.append(panels)
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
