"""``kiva/<domain>/<parameter>``: KiVA (kids) visual-analogy trials on rendered 3D objects.

A trial shows a given transformation (train input -> train output) of one object, then a
different test object and three options: (A)(B)(C) = the correct transformation, the same
domain with the wrong parameter, and the unchanged test input, in a seeded shuffle; "(D)"
means none applies. One trial in ten (``index % 10 == 9``) is a no-change control: the given
pair does not change, so the unchanged option is the answer.

The rules follow the paper's released data: a colour change blends the target colour into
the *original* object (inputs are the original blended with a start colour); copies keep
their size whatever their number. Which objects suit a trial is *measured* on the drawn
sprites, for built-in and user objects alike (:func:`suitable`): every option differs
visibly from every other and the given pair changes (a symmetric bowl never rotates
visibly), every named colour lands within 20 degrees of its hue, and every object stands out
from the white background.

Panels: the stitched composite, then train input, train output, test input and options A,
B, C as separate images (:mod:`scenes.kiva.presentation`).
"""
from __future__ import annotations

import functools

import numpy as np

from engine.errors import UserError
from engine.lazy import lazy_module
from engine.sample import Draw

from . import library
from .family import FAMILY
from .presentation import finish, present
from .stages import DOMAIN_WORDS, how_stage, what_stage

# torch kernels: loaded when the first trial is drawn, so that listing tasks stays fast
T = lazy_module("kernels.sprites")
torch = lazy_module("torch")

SPRITE = 256
KIDS = {"colour": ("red", "green", "blue"), "size": ("x2", "x0.5"), "number": ("+1", "+2", "-1", "-2"),
        "rotation": ("+90", "-90", "180"), "reflection": ("x", "y")}
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
QUESTION = SYSTEM + "\n\n" + EXTRAPOLATE
MIN_CHANGE = 0.02              # share of pixels that must differ for two images to count as different
SHAPE_CHANGE = 0.04            # share of the silhouettes' union that must differ (rotation, reflection)
TARGETS = {"red": (255, 0, 0), "green": (0, 128, 0), "blue": (0, 0, 255), "yellow": (255, 255, 0)}
HUES = {"red": 0.0, "green": 120.0, "blue": 240.0, "yellow": 60.0}
HUE_TOLERANCE = 20.0           # degrees: a tinted object's hue must lie this close to its colour's
MIN_CONTRAST = 0.5             # share of an object's pixels that must stand out from the white background
INPUT_SCALE = 0.5              # size trials: inputs at half the fitted object, so that doubling still fits
DRAWS = 60                     # object pairs tried before a trial gives up


def tint(sprites, colour: str):
    """``sprites [B, 4, S, S]`` blended towards the named target colour (``grey``: luma)."""
    return T.recolour(sprites, "grey" if colour == "grey" else TARGETS[colour])


def how_wrong(domain: str, param: str, wrong: str) -> str:
    """The stage-2 distractor: the change the wrong option shows (``wrong``), for number the
    opposite operation (as the paper's scripts word it: +2 against -2, x3 against /3)."""
    if domain == "number":
        return {"+": "-", "-": "+", "x": "/", "/": "x"}[param[0]] + param[1:]
    return wrong


def wrong_parameter(domain: str, param: str) -> str:
    """The option of the same domain with the wrong parameter (the spec's pairing)."""
    if domain == "colour":
        raise ValueError("the colour domain's wrong option depends on the start colour")
    return {"x2": "x0.5", "x0.5": "x2", "+90": "180", "-90": "180", "180": "+90", "x": "y", "y": "x"}[param]


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


def suitable(train_in, train_out, test_in, correct, wrong, shape_only: bool, colours=()) -> bool:
    """Whether a drawn trial is fit to show: the given pair visibly changes, the three options
    all differ visibly, every image stands out from the white background (:data:`MIN_CONTRAST`),
    and every ``(image, colour)`` of ``colours`` has its colour's hue (within
    :data:`HUE_TOLERANCE`; grey has none to check)."""
    options = [correct, wrong, test_in]
    if not (differ(train_in, train_out, shape_only)
            and all(differ(options[i], options[j], shape_only) for i in range(3) for j in range(i + 1, 3))):
        return False
    if any(T.contrast(im) < MIN_CONTRAST for im in (train_in, train_out, test_in, correct, wrong)):
        return False
    return all(hue_ok(im, colour) for im, colour in colours)


def hue_ok(image, colour: str) -> bool:
    """Whether ``image`` ``[4, S, S]`` shows ``colour``: its mean hue within HUE_TOLERANCE of
    the colour's (grey has no hue to check)."""
    if colour == "grey":
        return True
    hue = T.mean_hue(image)
    return hue is not None and T.hue_distance(hue, HUES[colour]) <= HUE_TOLERANCE


@functools.lru_cache(maxsize=256)
def _pool(folder: str, colours: tuple[str, ...]) -> tuple[str, ...]:
    """The objects that stand out from the background and, blended with each of ``colours``,
    show that colour: measured once per object library."""
    settings = {"objects": folder}
    out = []
    for name in library.names(settings):
        img = library.sprite(name, SPRITE, settings)
        if T.contrast(img) >= MIN_CONTRAST and all(hue_ok(tint(img[None], c)[0], c) for c in colours):
            out.append(name)
    if len(out) < 2:
        raise UserError(f"kiva objects {folder or '(built-in)'}: only {len(out)} object(s) stand out from a white "
                        f"background{' and take the colours ' + ', '.join(colours) if colours else ''}; "
                        "a trial needs 2 (use objects of lighter, less saturated colours)")
    return tuple(out)


def draw_objects(rng: np.random.Generator, settings, colours=()) -> tuple[str, str, object, object]:
    """Two different objects of the trial's library and their fitted sprites ``[4, S, S]``,
    drawn among those that suit the trial's ``colours`` (:func:`_pool`)."""
    pool = _pool((settings or {}).get("objects") or "", tuple(sorted(set(colours))))
    i, j = rng.choice(len(pool), 2, replace=False)
    a, b = pool[int(i)], pool[int(j)]
    return a, b, library.sprite(a, SPRITE, settings), library.sprite(b, SPRITE, settings)


def _kids(domain: str, param: str, a, b, start):
    """``(train_in, train_out, test_in, correct, wrong, colours, wrong parameter)`` of a
    kids' trial."""
    if domain == "colour":
        wrong = next(c for c in KIDS["colour"] if c not in (param, start))
        both = torch.stack([a, b])
        inp, out, bad = tint(both, start), tint(both, param), tint(both[1:], wrong)[0]
        colours = [(inp[0], start), (inp[1], start), (out[0], param), (out[1], param), (bad, wrong)]
        return inp[0], out[0], inp[1], out[1], bad, colours, wrong
    if domain == "number":
        n = int(start)
        bad = n - 1 if param[0] == "+" else n + 1          # the same domain, the wrong count
        return (T.copies(a, n), T.copies(a, n + int(param)), T.copies(b, n), T.copies(b, n + int(param)),
                T.copies(b, bad), (), f"start{'-1' if param[0] == '+' else '+1'}")
    wrong = wrong_parameter(domain, param)
    if domain == "size":
        x = T.scale(torch.stack([a, b]), INPUT_SCALE)
        f = {"x2": 2.0, "x0.5": 0.5}
        out, bad = T.scale(x, f[param]), T.scale(x[1:], f[wrong])[0]
        return x[0], out[0], x[1], out[1], bad, (), wrong
    x = T.fit_for_rotation(torch.stack([a, b]))
    if domain == "rotation":
        deg = {"+90": 90, "-90": -90, "180": 180}
        out, bad = T.rotate(x, deg[param]), T.rotate(x[1:], deg[wrong])[0]
    else:
        out, bad = T.reflect(x, param), T.reflect(x[1:], wrong)[0]
    return x[0], out[0], x[1], out[1], bad, (), wrong


@FAMILY.task(cases={f"kiva/{d}/{p}": {"domain": d, "param": p} for d, ps in KIDS.items() for p in ps},
             description=lambda domain, param: f"KiVA {domain}: {SPEC_WORDS[param]}",
             answer_distribution={"(A)": 1 / 3, "(B)": 1 / 3, "(C)": 1 / 3})
def trial(rng: np.random.Generator, index: int, domain: str, param: str, settings) -> Draw:
    """One KiVA trial; see the module docstring."""
    control = index % 10 == 9
    for _ in range(DRAWS):
        start: int | str = 0
        if domain == "colour":
            start = [c for c in KIDS["colour"] if c != param][int(rng.integers(2))]
        train_obj, test_obj, a, b = draw_objects(rng, settings, KIDS["colour"] if domain == "colour" else ())
        if domain == "number":
            start = int(rng.choice([2, 3, 4] if param.startswith("+") else [3, 4, 5]))
        train_in, train_out, test_in, correct, wrong_img, colours, wrong = _kids(domain, param, a, b, start)
        if suitable(train_in, train_out, test_in, correct, wrong_img, domain in ("rotation", "reflection"), colours):
            break
    else:
        raise RuntimeError(f"kiva/{domain}/{param}: no suitable objects in {DRAWS} draws (index {index})")
    panels, order, answer = present(rng, control, train_in, train_out, test_in, correct, wrong_img)
    return finish(panels, QUESTION, answer, {
        "domain": domain, "parameter": param, "control": control, "objects": [train_obj, test_obj], "start": start,
        "wrong": wrong, "options": order,
        "what": what_stage(rng, DOMAIN_WORDS[domain], control),
        "how": how_stage(rng, SPEC_WORDS[param], SPEC_WORDS[how_wrong(domain, param, wrong)], control)})
