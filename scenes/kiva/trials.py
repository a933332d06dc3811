"""``kiva/<domain>/<parameter>``: KiVA (kids) visual-analogy trials on rendered 3D objects.

A trial shows a given transformation (train input -> train output) of one object, then a
different test object and three options: (A)(B)(C) = the correct transformation, the same
domain with the wrong parameter, and the unchanged test input, in a seeded shuffle; "(D)"
means none applies. One trial in ten (``index % 10 == 9``) is a no-change control: the given
pair does not change, so the unchanged option is the answer. Objects for rotation and
reflection are *measured*: a trial is used only when every option differs visibly from
every other and the given pair visibly changes (a symmetric bowl never qualifies).

Panels: the stitched composite (given pair on top, the labelled option pairs below), then
train input, train output, test input and options A, B, C as separate images.
"""
from __future__ import annotations

import numpy as np

from engine.lazy import lazy_module
from engine.sample import Draw
from engine.scene import Scene

from .family import FAMILY
from .objects import OBJECTS

# torch and the GL stack: loaded when the first trial is drawn, so that listing tasks stays fast
T = lazy_module("kernels.sprites")
views = lazy_module("scenes.kiva.views")

SPRITE = 128
KIDS = {"colour": ("red", "green", "blue"), "size": ("x2", "x0.5"), "number": ("+1", "+2", "-1", "-2"),
        "rotation": ("+90", "-90", "180"), "reflection": ("x", "y")}
DOMAIN_WORDS = {"colour": "Color of objects", "size": "Size of objects", "number": "Number of objects",
                "rotation": "Orientation of objects", "reflection": "Orientation of objects"}
SPEC_WORDS = {"red": "The objects turned red.", "green": "The objects turned green.", "blue": "The objects turned blue.",
              "x2": "The objects got bigger.", "x0.5": "The objects got smaller.",
              "+1": "The number of objects increased by 1.", "+2": "The number of objects increased by 2.",
              "-1": "The number of objects decreased by 1.", "-2": "The number of objects decreased by 2.",
              "+90": "The objects rotated 90 degrees clockwise.", "-90": "The objects rotated 90 degrees counterclockwise.",
              "180": "The objects rotated 180 degrees.", "x": "The objects flipped upside down.",
              "y": "The objects flipped sideways."}
SYSTEM = ("You are an excellent visual puzzle solver! You will be given a visual puzzle that requires using visual "
          "analogical reasoning. You will think \"step-by-step\" and carefully examine the visual evidence before "
          "providing an answer. You are given a visual puzzle. The puzzle features a left-to-right transformation of "
          "an object on top and three left-to-right transformations of a different object on the bottom marked by (A) "
          "or (B) or (C). The transformations involve a change of either the size, orientation, number, or color of an "
          "object.")
EXTRAPOLATE = ("Which one of the three left-to-right object transformations (marked by either (A), (B) or (C)) on the "
               "bottom of the puzzle is the same as the left-to-right transformation on the top of the puzzle? Answer "
               "with the correct letter surrounded by parentheses (or (D) if none of the options apply), then provide a "
               "\"step-by-step\" reasoning for your choice.")
OPTIONS = ["(A)", "(B)", "(C)", "(D)"]
MIN_CHANGE = 0.02              # share of pixels that must differ for two images to count as different
SHAPE_CHANGE = 0.04            # share of the silhouettes' union that must differ (rotation, reflection)
TARGETS = {"red": (255, 0, 0), "green": (0, 128, 0), "blue": (0, 0, 255), "yellow": (255, 255, 0)}


def tint(sprites, colour: str):
    """``sprites [B, 4, S, S]`` blended towards the named target colour (``grey``: luma)."""
    return T.recolour(sprites, "grey" if colour == "grey" else TARGETS[colour])


def wrong_parameter(domain: str, param: str) -> str:
    """The option of the same domain with the wrong parameter (the spec's pairing)."""
    if domain == "colour":
        raise ValueError("the colour domain's wrong option depends on the start colour")
    return {"x2": "x0.5", "x0.5": "x2", "+90": "180", "-90": "180", "180": "+90", "x": "y", "y": "x",
            "+1": "+1", "+2": "+2", "-1": "-1", "-2": "-2"}[param]


def _apply(domain: str, param: str, base, start: int | str):
    """(input, output) RGBA sprites ``[4, S, S]`` of one object for one transformation."""
    b = base[None]
    if domain == "colour":
        inp = tint(b, start)
        return inp[0], tint(inp, param)[0]
    if domain == "size":
        inp = T.scale(b, 0.45)
        return inp[0], T.scale(inp, 2.0 if param == "x2" else 0.5)[0]
    if domain == "number":
        n = int(start)
        return T.copies(base, n), T.copies(base, n + int(param))
    if domain == "rotation":
        inp = T.fit_for_rotation(b)
        return inp[0], T.rotate(inp, {"+90": 90, "-90": -90, "180": 180}[param])[0]
    inp = T.fit_for_rotation(b)
    return inp[0], T.reflect(inp, param)[0]


def differ(a, b, shape_only: bool = False) -> bool:
    """Whether two RGBA images ``[4, S, S]`` differ visibly: more than MIN_CHANGE of their
    pixels change by more than 40 levels; with ``shape_only`` (rotation, reflection) the
    silhouettes must differ on more than SHAPE_CHANGE of their union, so that shading alone
    never counts."""
    if a.shape != b.shape:
        return True
    if shape_only:
        return T.silhouette_change(a, b) > SHAPE_CHANGE
    return T.pixel_change(a, b) > MIN_CHANGE


def _panel(img) -> Scene:
    s = Scene(background=(255, 255, 255))
    s.sprite(img, (0.5, 0.5), (0.92, 0.92))
    return s


def composite(train_in, train_out, test_in, options) -> Scene:
    """The stitched presentation: the given pair on top, three labelled option pairs below."""
    s = Scene(background=(255, 255, 255))
    w = 0.15
    s.sprite(train_in, (0.32, 0.16), (0.26, 0.26))
    s.arrow((0.45, 0.16), (0.55, 0.16), width=0.012, color=(0, 0, 0))
    s.sprite(train_out, (0.68, 0.16), (0.26, 0.26))
    s.line((0.02, 0.33), (0.98, 0.33), width=0.004, color=(0, 0, 0))
    for k, opt in enumerate(options):
        x0 = 0.02 + k * 0.33
        s.rectangle((x0 + 0.155, 0.62), (0.31, 0.52), color=(90, 90, 90), fill=False, stroke=0.003)
        s.text(OPTIONS[k], (x0 + 0.155, 0.41), height=0.045, color=(0, 0, 0))
        s.sprite(test_in, (x0 + 0.08, 0.62), (w, w))
        s.arrow((x0 + 0.135, 0.62), (x0 + 0.175, 0.62), width=0.006, color=(0, 0, 0))
        s.sprite(opt, (x0 + 0.235, 0.62), (w, w))
    return s


def eligible(train_in, train_out, options, shape_only: bool) -> bool:
    """Whether the given pair visibly changes and the three options all differ visibly."""
    return differ(train_in, train_out, shape_only) and all(
        differ(options[i], options[j], shape_only) for i in range(3) for j in range(i + 1, 3))


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


def finish(panels, answer: str, meta: dict) -> Draw:
    """The trial as a sample: the extrapolation question, the letter answer, the metadata."""
    return Draw(panels, SYSTEM + "\n\n" + EXTRAPOLATE, answer, "fixed", options=OPTIONS, meta=meta,
                gold_text=answer, prompt_panels=[0])


@FAMILY.task(cases={f"kiva/{d}/{p}": {"domain": d, "param": p} for d, ps in KIDS.items() for p in ps},
             description=lambda domain, param: f"KiVA {domain}: {SPEC_WORDS[param]}",
             answer_distribution={"(A)": 1 / 3, "(B)": 1 / 3, "(C)": 1 / 3})
def trial(rng: np.random.Generator, index: int, domain: str, param: str) -> Draw:
    """One KiVA trial; see the module docstring."""
    control = index % 10 == 9
    for _ in range(40):
        train_obj, test_obj = (OBJECTS[int(i)] for i in rng.choice(len(OBJECTS), 2, replace=False))
        start: int | str = 0
        if domain == "colour":
            start = [c for c in KIDS["colour"] if c != param][int(rng.integers(2))]
            wrong = next(c for c in KIDS["colour"] if c not in (param, start))
        elif domain == "number":
            start = int(rng.choice([2, 3, 4] if param.startswith("+") else [3, 4, 5]))
            wrong = None
        else:
            wrong = wrong_parameter(domain, param)
        a = views.sprite(train_obj, "front", SPRITE)
        b = views.sprite(test_obj, "front", SPRITE)
        train_in, train_out = _apply(domain, param, a, start)
        test_in, correct = _apply(domain, param, b, start)
        if domain == "number":          # the same domain, the wrong count: start - 1 (for +), start + 1 (for -)
            wrong_img = T.copies(b, int(start) - 1 if param.startswith("+") else int(start) + 1)
            wrong_label = f"start{'-1' if param.startswith('+') else '+1'}"
        else:
            wrong_img = _apply(domain, wrong, b, start)[1]
            wrong_label = wrong
        if eligible(train_in, train_out, [correct, wrong_img, test_in], domain in ("rotation", "reflection")):
            break
    else:
        raise RuntimeError(f"kiva/{domain}/{param}: no eligible objects in 40 draws (index {index})")
    panels, order, answer = present(rng, control, train_in, train_out, test_in, correct, wrong_img)
    others = [d for d in ("colour", "size", "number", "rotation") if d != ("rotation" if domain == "reflection" else domain)]
    shown_domains = [("rotation" if domain == "reflection" else domain)] + [str(d) for d in rng.permutation(others)[:2]]
    shown_domains = [shown_domains[int(i)] for i in rng.permutation(3)]
    what = [DOMAIN_WORDS[d] for d in shown_domains] + ["No change between pictures", "Doesn't apply"]
    what_gold = "No change between pictures" if control else DOMAIN_WORDS[domain]
    how = [SPEC_WORDS[p] for p in KIDS[domain]] + ["Doesn't apply"]
    return finish(panels, answer, {
        "domain": domain, "parameter": param, "control": control, "objects": [train_obj, test_obj], "start": start,
        "wrong": wrong_label, "options": order, "what": {"options": what, "gold": what.index(what_gold) + 1},
        "how": {"options": how, "gold": None if control else KIDS[domain].index(param) + 1}})
