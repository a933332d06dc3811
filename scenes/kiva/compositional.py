"""``kiva_compositional/<domain>+<domain>/<param>+<param>``: two kids' transformations
chained in one trial (colour, size, rotation, reflection). The options are the full chained
transformation (correct), the first transformation with the second's wrong parameter, and
the unchanged test input; layout, controls and eligibility as in :mod:`scenes.kiva.trials`."""
from __future__ import annotations

import itertools

import numpy as np

from engine.sample import Draw

from .family import FAMILY
from .objects import OBJECTS
from .trials import DOMAIN_WORDS, KIDS, SPEC_WORDS, SPRITE, T, eligible, finish, present, tint, views, wrong_parameter

PAIRS = (("colour", "size"), ("colour", "rotation"), ("colour", "reflection"), ("size", "rotation"),
         ("size", "reflection"))
COLOURS = KIDS["colour"]


def prepare(base, start: str | None):
    """The input of a chained trial: shrunk so size doubling and rotation both fit, tinted
    with ``start`` when colour is in the chain. ``[1, 4, S, S]``."""
    x = T.scale(base[None], 0.45)
    return tint(x, start) if start else x


def step(img, domain: str, param: str):
    """One transformation of a prepared image ``[1, 4, S, S]``."""
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


@FAMILY.task(cases=_cases(), description=lambda domains, parameters: "KiVA compositional: "
             f"{SPEC_WORDS[parameters[0]]} {SPEC_WORDS[parameters[1]]}",
             answer_distribution={"(A)": 1 / 3, "(B)": 1 / 3, "(C)": 1 / 3})
def compositional_trial(rng: np.random.Generator, index: int, domains, parameters) -> Draw:
    """One trial chaining ``domains[0]`` with ``parameters[0]`` and then ``domains[1]``."""
    control = index % 10 == 9
    d1, d2 = domains
    p1, p2 = parameters
    for _ in range(40):
        train_obj, test_obj = (OBJECTS[int(i)] for i in rng.choice(len(OBJECTS), 2, replace=False))
        start = None
        if "colour" in domains:
            target = parameters[domains.index("colour")]
            start = str(rng.choice([c for c in COLOURS if c != target]))
        wrong2 = next(c for c in COLOURS if c not in (p2, start)) if d2 == "colour" else wrong_parameter(d2, p2)
        tr = prepare(views.sprite(train_obj, "front", SPRITE), start)
        te = prepare(views.sprite(test_obj, "front", SPRITE), start)
        train_out = chain(tr, [(d1, p1), (d2, p2)])[0]
        correct = chain(te, [(d1, p1), (d2, p2)])[0]
        wrong = chain(te, [(d1, p1), (d2, wrong2)])[0]
        if eligible(tr[0], train_out, [correct, wrong, te[0]], False):
            break
    else:
        raise RuntimeError(f"kiva_compositional/{d1}+{d2}: no eligible objects in 40 draws (index {index})")
    panels, order, answer = present(rng, control, tr[0], train_out, te[0], correct, wrong)
    both = f"{DOMAIN_WORDS[d1]} and {DOMAIN_WORDS[d2].lower()}"
    what = [both, DOMAIN_WORDS[d1], DOMAIN_WORDS[d2], "No change between pictures", "Doesn't apply"]
    how = [f"{SPEC_WORDS[a]} {SPEC_WORDS[b]}" for a, b in itertools.product(KIDS[d1], KIDS[d2])] + ["Doesn't apply"]
    combos = list(itertools.product(KIDS[d1], KIDS[d2]))
    return finish(panels, answer, {
        "domains": [d1, d2], "parameters": [p1, p2], "control": control, "objects": [train_obj, test_obj],
        "start": start, "wrong": [p1, wrong2], "options": order, "what": {"options": what, "gold": 4 if control else 1},
        "how": {"options": how, "gold": None if control else combos.index((p1, p2)) + 1}})
