"""``kiva_adults/<domain>/<parameter>``: the adults' 29 sub-domains. Beyond the kids' set:
yellow and grey targets with train input, test input, target and wrong option all in
different colours; stretching along one axis (the wrong option stretches the other);
multiplying and dividing counts, with different start counts for the given pair and the
test; rotations by 45 and 135 degrees from a random start orientation; reflection about
both axes. Colours blend into the original object, copies keep their size; layout, stages,
controls and the measured suitability of objects as in :mod:`scenes.kiva.trials`."""
from __future__ import annotations

import numpy as np

from engine.sample import Draw

from .family import FAMILY
from .presentation import finish, present
from .stages import DOMAIN_WORDS, how_stage, what_stage
from .trials import DRAWS, INPUT_SCALE, QUESTION, T, draw_objects, how_wrong, suitable, tint, torch

TINTS = ("red", "green", "blue", "yellow")
ADULTS = {
    "colour": ("red", "green", "blue", "yellow", "grey"),
    "size": ("x2", "x0.5", "x2_x", "x0.5_x", "x2_y", "x0.5_y"),
    "number": ("+1", "+2", "-1", "-2", "x2", "x3", "/2", "/3"),
    "rotation": ("+90", "-90", "180", "+45", "-45", "+135", "-135"),
    "reflection": ("x", "y", "both"),
}
STARTS = {"+1": (2, 3, 4), "+2": (2, 3, 4), "-1": (3, 4, 5), "-2": (3, 4, 5), "x2": (2, 3, 4), "x3": (1, 2, 3),
          "/2": (4, 6, 8), "/3": (3, 6, 9)}
ANGLE = {"+90": 90, "-90": -90, "180": 180, "+45": 45, "-45": -45, "+135": 135, "-135": -135}
HOW = {"red": "The objects turned red.", "green": "The objects turned green.", "blue": "The objects turned blue.",
       "yellow": "The objects turned yellow.", "grey": "The objects turned grey.",
       "x2": "The objects got twice as big.", "x0.5": "The objects got half as big.",
       "x2_x": "The objects got twice as wide.", "x0.5_x": "The objects got half as wide.",
       "x2_y": "The objects got twice as tall.", "x0.5_y": "The objects got half as tall.",
       "+1": "One object was added.", "+2": "Two objects were added.", "-1": "One object was taken away.",
       "-2": "Two objects were taken away.", ("number", "x2"): "The number of objects doubled.",
       ("number", "x3"): "The number of objects tripled.", "/2": "The number of objects halved.",
       "/3": "The number of objects became a third.",
       "+90": "The objects rotated 90 degrees clockwise.", "-90": "The objects rotated 90 degrees counterclockwise.",
       "180": "The objects rotated 180 degrees.", "+45": "The objects rotated 45 degrees clockwise.",
       "-45": "The objects rotated 45 degrees counterclockwise.", "+135": "The objects rotated 135 degrees clockwise.",
       "-135": "The objects rotated 135 degrees counterclockwise.", "x": "The objects flipped upside down.",
       "y": "The objects flipped sideways.", "both": "The objects flipped upside down and sideways."}
WRONG_ANGLE = {"+90": "180", "-90": "180", "180": "+90", "+45": "-45", "-45": "+45", "+135": "-135", "-135": "+135"}


def _count(start: int, param: str) -> int:
    op, k = param[0], int(param[1:])
    return {"+": start + k, "-": start - k, "x": start * k, "/": start // k}[op]


def _wrong_count(start: int, param: str) -> int:
    if param[0] in "+-":
        return start - 1 if param[0] == "+" else start + 1
    right = _count(start, param)
    return right + 1 if right < 9 else right - 1


def _size(img, param):
    f = 2.0 if param.startswith("x2") else 0.5
    if param.endswith("_x"):
        return T.scale(img, f, 1.0)
    if param.endswith("_y"):
        return T.scale(img, 1.0, f)
    return T.scale(img, f)


def _pair(rng, domain, param, a, b, tint_in, tint_test, start_in, start_test):
    """``(train_in, train_out, test_in, correct, wrong, colours, wrong parameter)``."""
    if domain == "colour":
        wrong = str(next(c for c in rng.permutation(list(ADULTS["colour"])) if c not in (param, tint_in, tint_test)))
        both = torch.stack([a, b])
        out = tint(both, param)
        tr, te, bad = tint(a[None], tint_in)[0], tint(b[None], tint_test)[0], tint(b[None], wrong)[0]
        colours = [(tr, tint_in), (te, tint_test), (out[0], param), (out[1], param), (bad, wrong)]
        return tr, out[0], te, out[1], bad, colours, wrong
    if domain == "size":
        x = T.scale(torch.stack([a, b]), INPUT_SCALE)
        wrong = {"x2": "x0.5", "x0.5": "x2", "x2_x": "x2_y", "x2_y": "x2_x", "x0.5_x": "x0.5_y", "x0.5_y": "x0.5_x"}[param]
        out = _size(x, param)
        return x[0], out[0], x[1], out[1], _size(x[1:], wrong)[0], (), wrong
    if domain == "number":
        right = _count(start_test, param)
        return (T.copies(a, start_in), T.copies(a, _count(start_in, param)), T.copies(b, start_test),
                T.copies(b, right), T.copies(b, _wrong_count(start_test, param)), (),
                f"{_wrong_count(start_test, param)} objects")
    tr, te = T.fit_for_rotation(a[None]), T.fit_for_rotation(b[None])
    if domain == "rotation":
        tr, te = T.rotate(tr, start_in), T.rotate(te, start_test)          # a random start orientation
        wrong = WRONG_ANGLE[param]
        return (tr[0], T.rotate(tr, ANGLE[param])[0], te[0], T.rotate(te, ANGLE[param])[0],
                T.rotate(te, ANGLE[wrong])[0], (), wrong)
    wrong = {"x": "y", "y": "x", "both": "x"}[param]
    return tr[0], T.reflect(tr, param)[0], te[0], T.reflect(te, param)[0], T.reflect(te, wrong)[0], (), wrong


@FAMILY.task(cases={f"kiva_adults/{d}/{p.replace('/', 'div')}": {"domain": d, "param": p}
                    for d, ps in ADULTS.items() for p in ps},
             description=lambda domain, param: f"KiVA adults {domain}: {param}",
             answer_distribution={"(A)": 1 / 3, "(B)": 1 / 3, "(C)": 1 / 3})
def adult_trial(rng: np.random.Generator, index: int, domain: str, param: str, settings) -> Draw:
    """One adults' trial of ``domain`` with ``param``; see :mod:`scenes.kiva.trials`."""
    control = index % 10 == 9
    shape_only = domain in ("rotation", "reflection")
    for _ in range(DRAWS):
        train_obj, test_obj, a, b = draw_objects(rng, settings, ADULTS["colour"] if domain == "colour" else ())
        tints = [str(c) for c in rng.permutation([t for t in TINTS if t != param])[:2]]
        starts = [int(x) for x in rng.permutation(STARTS[param])[:2]] if domain == "number" else \
            [45 * int(x) for x in rng.integers(0, 8, 2)] if domain == "rotation" else [0, 0]
        train_in, train_out, test_in, correct, wrong, colours, wrong_param = _pair(rng, domain, param, a, b,
                                                                                   *tints, *starts)
        if suitable(train_in, train_out, test_in, correct, wrong, shape_only, colours):
            break
    else:
        raise RuntimeError(f"kiva_adults/{domain}/{param}: no suitable objects in {DRAWS} draws (index {index})")
    panels, order, answer = present(rng, control, train_in, train_out, test_in, correct, wrong)
    text = lambda p: HOW.get((domain, p)) or HOW[p]  # noqa: E731
    return finish(panels, QUESTION, answer, {
        "domain": domain, "parameter": param, "control": control, "objects": [train_obj, test_obj], "tints": tints,
        "starts": starts, "wrong": wrong_param, "options": order,
        "what": what_stage(rng, DOMAIN_WORDS[domain], control),
        "how": how_stage(rng, text(param), text(how_wrong(domain, param, wrong_param)), control)})
