"""``kiva_compositional/<domain>+<domain>/<param>+<param>``: two kids' transformations
chained in one trial (colour, size, rotation, reflection). The options are the full chained
transformation (correct), the first transformation with the second's wrong parameter, and
the unchanged test input; layout, controls and eligibility as in :mod:`scenes.kiva.trials`."""
from __future__ import annotations

import itertools

import numpy as np

from engine.sample import Draw

from .family import FAMILY
from .presentation import finish, present
from .stages import DOMAIN_WORDS, how_stage, what_stage
from .trials import (DRAWS, INPUT_SCALE, KIDS, QUESTION, SPEC_WORDS, T, differ, draw_objects, suitable, tint,
                     torch, wrong_parameter)

PAIRS = (("colour", "size"), ("colour", "rotation"), ("colour", "reflection"), ("size", "rotation"),
         ("size", "reflection"))
COLOURS = KIDS["colour"]


def prepare(sprites):
    """The inputs of a chained trial ``[B, 4, S, S]``: shrunk so that size doubling and
    rotation both fit."""
    return T.scale(sprites, INPUT_SCALE)


def step(img, domain: str, param: str):
    """One transformation of prepared images ``[B, 4, S, S]``; colour blends into what it
    is given (chains start with colour, on the untinted object)."""
    if domain == "colour":
        return tint(img, param)
    if domain == "size":
        return T.scale(img, 2.0 if param == "x2" else 0.5)
    if domain == "rotation":
        return T.rotate(img, {"+90": 90, "-90": -90, "180": 180}[param])
    return T.reflect(img, param)


def chain(img, steps):
    for d, p in steps:
        img = step(img, d, p)
    return img


def _cases() -> dict[str, dict]:
    return {f"kiva_compositional/{d1}+{d2}/{p1}+{p2}": {"domains": [d1, d2], "parameters": [p1, p2]}
            for d1, d2 in PAIRS for p1, p2 in itertools.product(KIDS[d1], KIDS[d2])}


def _words(d1: str, d2: str) -> str:
    return f"{DOMAIN_WORDS[d1]} and {DOMAIN_WORDS[d2].lower()}"


@FAMILY.task(cases=_cases(), description=lambda domains, parameters: "KiVA compositional: "
             f"{SPEC_WORDS[parameters[0]]} {SPEC_WORDS[parameters[1]]}",
             answer_distribution={"(A)": 1 / 3, "(B)": 1 / 3, "(C)": 1 / 3})
def compositional_trial(rng: np.random.Generator, index: int, domains, parameters, settings) -> Draw:
    """One trial chaining ``domains[0]`` with ``parameters[0]`` and then ``domains[1]``. The
    inputs carry a start colour when colour is in the chain; its output blends the target
    into the original object. Stage 1 offers both domains together, each alone, "No change"
    and "Doesn't apply"; stage 2 the true pair of changes and the wrong option's pair."""
    control = index % 10 == 9
    d1, d2 = domains
    p1, p2 = parameters
    for _ in range(DRAWS):
        train_obj, test_obj, a, b = draw_objects(rng, settings, COLOURS if "colour" in domains else ())
        start = None
        if "colour" in domains:
            target = parameters[domains.index("colour")]
            start = str(rng.choice([c for c in COLOURS if c != target]))
        wrong2 = next(c for c in COLOURS if c not in (p2, start)) if d2 == "colour" else wrong_parameter(d2, p2)
        base = prepare(torch.stack([a, b]))
        shown = tint(base, start) if start else base
        out = chain(base, [(d1, p1), (d2, p2)])
        wrong = chain(base[1:], [(d1, p1), (d2, wrong2)])[0]
        colours = []
        if start:
            colours = [(shown[0], start), (shown[1], start), (out[0], p1), (out[1], p1), (wrong, p1)]
        # the right and wrong options differ only in the second change: for a turn or a flip,
        # their outlines must differ (a symmetric object would differ in shading alone)
        if suitable(shown[0], out[0], shown[1], out[1], wrong, False, colours) and (
                d2 not in ("rotation", "reflection") or differ(out[1], wrong, shape_only=True)):
            break
    else:
        raise RuntimeError(f"kiva_compositional/{d1}+{d2}: no suitable objects in {DRAWS} draws (index {index})")
    panels, order, answer = present(rng, control, shown[0], out[0], shown[1], out[1], wrong)
    return finish(panels, QUESTION, answer, {
        "domains": [d1, d2], "parameters": [p1, p2], "control": control, "objects": [train_obj, test_obj],
        "start": start, "wrong": [p1, wrong2], "options": order,
        "what": what_stage(rng, _words(d1, d2), control, others=[DOMAIN_WORDS[d1], DOMAIN_WORDS[d2]]),
        "how": how_stage(rng, f"{SPEC_WORDS[p1]} {SPEC_WORDS[p2]}", f"{SPEC_WORDS[p1]} {SPEC_WORDS[wrong2]}", control)})
