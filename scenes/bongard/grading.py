"""The model judge of every Bongard sample, procedural or real, with the seed's judge prompt,
for ``procvis eval --judge`` (the rule judge reads replies as the family's reader,
:func:`.judge.read_answer`)."""
from __future__ import annotations

from types import SimpleNamespace

from engine.protocol import Request

from .concepts import CONCEPTS
from .family import FAMILY
from .judge import accepts, judge_prompt


def reference(sample):
    """What the model judge compares an answer with: the concept of a procedural sample,
    else the sample's category and reference sentences (no example answers)."""
    if sample.task in CONCEPTS:
        return CONCEPTS[sample.task]
    ref = sample.meta["reference"]
    return SimpleNamespace(category=sample.meta.get("category", ""), left=ref["left"], right=ref["right"],
                           correct=tuple(map(tuple, sample.meta.get("correct_examples", ()))),
                           incorrect=tuple(map(tuple, sample.meta.get("incorrect_examples", ()))))


@FAMILY.model_judge
def judge_replies(runner, pairs) -> list[bool]:
    """One verdict per ``(sample, reply)`` (:func:`.judge.accepts` reads each judge reply)."""
    reqs = [Request(id=f"judge:{s.id}", task=s.task, images=[], prompt=judge_prompt(reference(s), reply or ""),
                    answer_type="single", gold="correct", settings=s.settings)
            for s, reply in pairs]
    return [accepts(r) for r in (runner.generate(reqs) if reqs else [])]
