"""Bongard concepts: what separates the six left panels from the six right ones.

A :class:`Concept` names its category (the seed's: size, number, spatial, same, shape,
semantic, presence), the rule of each side in words and as data, reference sentences, and
correct and incorrect paraphrases for judging answers. ``panel(rng, side)`` draws one panel
(``side`` 0 = left, 1 = right) and returns it with its *facts*: what was drawn, as data, so
a checker independent of the generator can confirm the panel follows its side's rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

CATEGORIES = ("size", "number", "spatial", "same", "shape", "semantic", "presence")


@dataclass(frozen=True)
class Concept:
    style: str
    category: str
    name: str
    left: str                      # reference sentence for the left side
    right: str                     # reference sentence for the right side
    rule: dict                     # structured rule: {"property": ..., "left": ..., "right": ...}
    panel: Callable = field(repr=False)
    correct: tuple = ()            # ((left, right), ...) paraphrases a judge must accept
    incorrect: tuple = ()          # ((left, right), ...) answers a judge must reject
    keywords: tuple = ()           # ((left words...), (right words...)): unused by the judge, which parses meaning
    # size, amount, count or presence concepts: what they add is what a global ink statistic
    # measures (compensating with other objects would make those a second answer)
    ink_is_the_concept: bool = False

    @property
    def task_id(self) -> str:
        return f"bongard/{self.style}/{self.category}/{self.name}"


CONCEPTS: dict[str, Concept] = {}


def concept(style: str, category: str, name: str, left: str, right: str, rule: dict, correct=(), incorrect=(),
            keywords=((), ()), ink_is_the_concept=False):
    """Register ``fn(rng, side) -> (Scene, facts)`` as a concept."""
    if category not in CATEGORIES:
        raise ValueError(f"category={category!r}; allowed: {', '.join(CATEGORIES)}")

    def deco(fn):
        c = Concept(style, category, name, left, right, rule, fn, tuple(correct), tuple(incorrect), tuple(keywords),
                    ink_is_the_concept)
        if len(c.correct) < 2 or len(c.incorrect) < 2:
            raise ValueError(f"{c.task_id}: needs at least two correct and two incorrect paraphrases")
        CONCEPTS[c.task_id] = c
        return fn
    return deco
