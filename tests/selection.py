"""Which registered tasks the fast generic tests take."""
from collections import defaultdict

import pytest

from engine.registry import list_tasks

# One pattern per family that keeps the family's evaluation tests quick (ELVIS has 3,388 tasks).
FAMILY_SAMPLE = {"elvis": "elvis/closure/feature_triangle/*", "perceptv": "perceptv/count*",
                 "bongard": "bongard/classic/s*/*", "kiva": "kiva/colour/*", "kiva_adults": "kiva_adults/reflection/*",
                 "kiva_compositional": "kiva_compositional/size+reflection/*"}


def representatives(ids=None, keep: int = 8) -> list[str]:
    """Every task, except that a folder of more than ``keep`` tasks (e.g. one ELVIS category
    with its factor grid) is represented by its first and last two; slow runs take all."""
    by = defaultdict(list)
    for t in list_tasks() if ids is None else ids:
        by[t.rsplit("/", 1)[0]].append(t)
    return sorted(x for v in by.values() for x in (v if len(v) <= keep else v[:2] + v[-2:]))


def slow_except(ids, keep) -> list:
    """``ids`` as the parameters of a sweep: those in ``keep`` run in the default suite
    (``make test``), the others in the slow one (``make test-slow``, which runs only tests
    marked slow): the two suites together cover the whole sweep."""
    keep = set(keep)
    missing = keep - set(ids)
    if missing:
        raise ValueError(f"kept parameters that the sweep does not have: {sorted(missing)}")
    return [i if i in keep else pytest.param(i, marks=pytest.mark.slow) for i in ids]


# The built-in Jigsaw image set cut to 30 images of 96 px: quick to draw, enough for every task.
SMALL_IMAGES = {"jigsaw.images": "generated:30", "jigsaw.image_size": 96}


def family_pattern(family: str) -> str:
    return FAMILY_SAMPLE.get(family, f"{family}/*")
