"""How a KiVA trial is shown: the stitched composite (the given pair on top, the three
labelled option pairs below) and the separate images (train input, train output, test input,
options A, B, C), each at its own extent, and the seeded shuffle of the options.

At the native size (:data:`NATIVE` px wide) the composite is 864 x 540 and every separate
image 288 x 288: the smallest thing any option shows (a halved object, one of nine copies,
the arrow) is then at least 24 px across in the composite.
"""
from __future__ import annotations

import numpy as np

from engine.sample import Draw
from engine.scene import Scene

NATIVE = 864                                 # px: the composite's width at the family's native size
COMPOSITE = (0.625, 1.0)                     # (height, width) in units of the requested size
SEPARATE = (1 / 3, 1 / 3)
EXTENTS = [COMPOSITE] + [SEPARATE] * 6
OPTIONS = ["(A)", "(B)", "(C)", "(D)"]
OPTION_SPRITE = 0.135                        # an option's sprites' side, in composite widths
TOP_SPRITE = 0.27


def _panel(img) -> Scene:
    s = Scene(background=(255, 255, 255))
    s.sprite(img, (0.5, 0.5), (0.92, 0.92))
    return s


def composite(train_in, train_out, test_in, options) -> Scene:
    """The stitched presentation (scene units: x in [0, 1], y in [0, 0.625]): the given pair
    on top, a line, then three boxes labelled (A) (B) (C), each the test input -> an option."""
    s = Scene(background=(255, 255, 255))
    s.sprite(train_in, (0.30, 0.155), (TOP_SPRITE, TOP_SPRITE))
    s.arrow((0.45, 0.155), (0.55, 0.155), width=0.01, color=(0, 0, 0))
    s.sprite(train_out, (0.70, 0.155), (TOP_SPRITE, TOP_SPRITE))
    s.line((0.01, 0.305), (0.99, 0.305), width=0.003, color=(0, 0, 0))
    w = OPTION_SPRITE
    for k, opt in enumerate(options):
        x0 = 0.01 + k * 0.33
        s.text(OPTIONS[k], (x0 + 0.16, 0.335), height=0.03, color=(0, 0, 0))
        s.rectangle((x0 + 0.16, 0.48), (0.32, 0.25), color=(90, 90, 90), fill=False, stroke=0.002)
        s.sprite(test_in, (x0 + 0.0775, 0.48), (w, w))
        s.arrow((x0 + 0.151, 0.48), (x0 + 0.179, 0.48), width=0.005, color=(0, 0, 0))
        s.sprite(opt, (x0 + 0.2525, 0.48), (w, w))
    return s


def present(rng: np.random.Generator, control: bool, train_in, train_out, test_in, correct, wrong):
    """Shuffle the options (seeded) and build the panels: the composite, then the given pair,
    the test input and the options. A control's given pair does not change. Returns
    ``(panels, option order, answer letter)``."""
    if control:
        train_out = train_in
    opts = {"correct": correct, "wrong": wrong, "unchanged": test_in}
    order = [str(k) for k in rng.permutation(list(opts))]
    answer = OPTIONS[order.index("unchanged" if control else "correct")]
    shown = [opts[k] for k in order]
    panels = [composite(train_in, train_out, test_in, shown), _panel(train_in), _panel(train_out), _panel(test_in)]
    return panels + [_panel(x) for x in shown], order, answer


def finish(panels, question: str, answer: str, meta: dict) -> Draw:
    """The trial as a sample: the extrapolation question, the letter answer, the metadata,
    each panel at its extent."""
    return Draw(panels, question, answer, "fixed", options=OPTIONS, meta=meta, gold_text=answer,
                prompt_panels=[0], panel_extents=list(EXTENTS))
