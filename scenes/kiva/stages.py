"""The option sets of the two verbal stages, as the paper and its released scripts ask them.

Stage 1 ("what changed"): the true domain and two other domains, shuffled, then "No change
between pictures" and "Doesn't apply". Stage 2 ("how"): the true change and one other change
of the same domain, shuffled, then the same two; the other change is the one the wrong
option shows, except for number, where the scripts offer the opposite change ("increased by
2" against "decreased by 2", "doubled" against "halved") while the wrong option shows one
object more or fewer than the right count. A no-change
control's answer is "No change between pictures" at both stages. Chance excludes "Doesn't
apply", as the paper computes it: 1 in 4 for stage 1, 1 in 3 for stage 2 (and for the
extrapolation's (A)(B)(C)).
"""
from __future__ import annotations

import numpy as np

NO_CHANGE = "No change between pictures"
DOESNT_APPLY = "Doesn't apply"
DOMAIN_WORDS = {"colour": "Color of objects", "size": "Size of objects", "number": "Number of objects",
                "rotation": "Orientation of objects", "reflection": "Orientation of objects"}
CATEGORIES = ("Color of objects", "Size of objects", "Number of objects", "Orientation of objects")


def _stage(choices: list[str], gold: str) -> dict:
    options = list(choices) + [NO_CHANGE, DOESNT_APPLY]
    return {"options": options, "gold": options.index(gold) + 1}


def what_stage(rng: np.random.Generator, right: str, control: bool, others=None) -> dict:
    """Stage 1: ``right`` (a domain's words) and two distractors (drawn from ``others``,
    default the other domains), in a seeded order. ``{"options": [...], "gold": n}``, ``n``
    counting from 1."""
    pool = [c for c in (others if others is not None else CATEGORIES) if c != right]
    picked = [pool[int(i)] for i in rng.permutation(len(pool))[:2]]
    choices = [right, *picked]
    choices = [choices[int(i)] for i in rng.permutation(3)]
    return _stage(choices, NO_CHANGE if control else right)


def how_stage(rng: np.random.Generator, right: str, wrong: str, control: bool) -> dict:
    """Stage 2: the true change and the ``wrong`` one, in a seeded order."""
    choices = [right, wrong] if rng.random() < 0.5 else [wrong, right]
    return _stage(choices, NO_CHANGE if control else right)


def chance(stage: dict) -> float:
    """A stage's chance: one over its options, "Doesn't apply" excluded."""
    return 1.0 / sum(o != DOESNT_APPLY for o in stage["options"])


def guesses(stage: dict) -> list[str]:
    """The answers a guesser chooses among: ``(n)`` for every option but "Doesn't apply"."""
    return [f"({k + 1})" for k, o in enumerate(stage["options"]) if o != DOESNT_APPLY]
