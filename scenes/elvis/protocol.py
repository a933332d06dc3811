"""The ELVIS protocols and their label reader.

The paper's two stages, with its prompts: for each test image of a task, turn 1
shows the task's train split (positives first, then negatives) and asks for the rule
(*rule induction*, one reply per task, shared by its test images); turn 2 is a fresh
conversation that gives that rule and the test image and asks for ``positive`` or
``negative``. ``elvis`` names the Gestalt principle (principle-aware, the paper's default);
``elvis-blind`` leaves it out. ``--count N`` means N images per class per split.
"""
from __future__ import annotations

import re

from engine.lazy import lazy_module
from engine.protocol import Protocol, Turn
from engine.registry import task_of
from engine.replies import Parsed
from engine.sample import Sample

from .family import FAMILY
from .tasks import LABELS, split_indices

rendering = lazy_module("engine.rendering")     # torch: loaded when a protocol first renders

INDUCTION = ("You are an AI reasoning about visual patterns using Gestalt principles.{principle}\n\n"
             "The positive examples are {positives}. The negative examples are {negatives}.\n\n"
             "Based on the Positive and Negative examples, infer the logic rules that distinguishes them. "
             "Output ONLY the rules.")
PREDICTION = ("Using the following reasoning rules: {rules}. Classify this image as Positive or Negative. "
              "Only answer with positive or negative for each image.")


def induction_prompt(principle: str | None, per_class: int) -> str:
    """Stage 1's prompt for ``per_class`` positives (images 1..n) and negatives (n+1..2n)."""
    names = [f"image {k:02d}" for k in range(1, 2 * per_class + 1)]
    return INDUCTION.format(principle=f" Principle under consideration: {principle}." if principle else "",
                            positives=", ".join(names[:per_class]), negatives=", ".join(names[per_class:]))


def prediction_prompt(rules: str) -> str:
    return PREDICTION.format(rules=(rules or "").strip().rstrip("."))


_NEG = r"(?:not|isn't|is not|never|no)\s+(?:an?\s+|the\s+)?"


def parse_label(reply) -> Parsed:
    """``positive``/``negative`` from a reply: the bare word first (strict); otherwise every
    occurrence of either word, a negated one ("not positive") counting as its opposite; a
    reply whose occurrences disagree ("positive or negative") or that has none is a format
    error."""
    text = reply.strip().lower() if isinstance(reply, str) else ""
    if text in LABELS:
        return Parsed(text, True)
    found = set()
    for m in re.finditer(r"\b(positive|negative)\b", text):
        negated = re.search(_NEG + r"$", text[:m.start()])
        word = m.group(1)
        found.add(LABELS[1 - LABELS.index(word)] if negated else word)
    return Parsed(found.pop() if len(found) == 1 else None, False)


class _Elvis(Protocol):
    aware = True

    def __init__(self):
        self.per_class = 3
        self._shown: dict = {}            # (task, seed, per_class, size) -> train images, for the current task

    def indices(self, count: int) -> list[int]:
        self.per_class = int(count)
        return split_indices(self.per_class)["test"]

    def parse(self, reply: str, sample: Sample, task) -> Parsed:
        return parse_label(reply)

    def first(self, sample: Sample, images) -> Turn:
        size = tuple(images[0].shape[-2:])
        key = (sample.task, sample.seed, self.per_class, size)
        if key not in self._shown:
            train = task_of(sample).samples(sample.seed, split_indices(self.per_class)["train"])
            ordered = [s for s in train if s.meta["label"] == 1] + [s for s in train if s.meta["label"] == 0]
            self._shown = {key: list(rendering.render([s.panels[0] for s in ordered], size))}
        shown = self._shown[key]
        principle = sample.meta["principle"] if self.aware else None
        return Turn(induction_prompt(principle, self.per_class), shown,
                    shared=f"{sample.task}:{sample.seed}:{self.per_class}:induction",
                    gold=sample.meta["rule"]["text"])

    def next(self, sample: Sample, images, turns):
        if len(turns) == 1:
            return Turn(prediction_prompt(turns[0].reply), list(images), history=False)
        return None


@FAMILY.protocol
class ElvisAware(_Elvis):
    """ELVIS: rule induction naming the principle, then per-image classification (the paper's)."""

    name = "elvis"


@FAMILY.protocol
class ElvisBlind(_Elvis):
    """ELVIS: as elvis, without the principle's name."""

    name = "elvis-blind"
    aware = False

