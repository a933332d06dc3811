"""Grading replies by a sample's own reference sentences (real problems carry them in
``meta["reference"]``): the reader of real problems, through the rule judge's
``judge_rule(left, right, reply)``, and the model judge of every Bongard sample, with the
seed's judge prompt, for ``procvis eval --judge``."""
from __future__ import annotations

import importlib
from types import SimpleNamespace

from engine.protocol import Request
from engine.replies import Parsed

from .concepts import CONCEPTS
from .family import FAMILY

# the module itself (the package exports a function of the same name); its rule judge is
# looked up when a reply is read
rule = importlib.import_module(__package__ + ".judge")

NO_INSTRUCTION = "No category is given: judge by the reference answers alone."


def read_real(reply, sample) -> Parsed:
    """The reader of real problems: a reply the rule judge accepts against the sample's two
    reference sentences reads as the gold text, any other non-empty reply as itself (wrong),
    an empty one as a format error."""
    text = reply.strip() if isinstance(reply, str) else ""
    if not text:
        return Parsed(None, False)
    ref = sample.meta["reference"]
    ok = rule.judge_rule(ref["left"], ref["right"], text)
    return Parsed(sample.answer_text if ok else text, len(rule.sentences(text)) == 2)


def reference(sample):
    """What the model judge compares an answer with: the concept of a procedural sample,
    else the sample's category and reference sentences (no example answers)."""
    if sample.task in CONCEPTS:
        return CONCEPTS[sample.task]
    ref = sample.meta["reference"]
    return SimpleNamespace(category=sample.meta.get("category", ""), left=ref["left"], right=ref["right"],
                           correct=tuple(map(tuple, sample.meta.get("correct_examples", ()))),
                           incorrect=tuple(map(tuple, sample.meta.get("incorrect_examples", ()))))


def judge_prompt_for(sample, answer: str) -> str:
    """The seed's judge prompt for ``answer`` to ``sample`` (a category the seed has no
    instruction for, such as an uncategorised real problem, gets :data:`NO_INSTRUCTION`)."""
    ref = reference(sample)
    if ref.category in rule.class_instructions():
        return rule.judge_prompt(ref, answer)
    ex = lambda pairs: "\n".join(f"Example {i + 1}:\nLeft: {a}\nRight: {b}" for i, (a, b) in enumerate(pairs))  # noqa: E731
    return rule.JUDGE_SYSTEM + "\n\n" + rule.JUDGE_USER.format(
        instruction=NO_INSTRUCTION, ref_left=ref.left, ref_right=ref.right, correct=ex(ref.correct),
        incorrect=ex(ref.incorrect), answer=answer)


@FAMILY.model_judge
def judge_replies(runner, pairs) -> list[bool]:
    """One verdict per ``(sample, reply)``: a judge reply whose first word is ``correct``
    accepts (an empty reply rejects)."""
    reqs = [Request(id=f"judge:{s.id}", task=s.task, images=[], prompt=judge_prompt_for(s, reply or ""),
                    answer_type="single", gold="correct", settings=s.settings)
            for s, reply in pairs]
    replies = runner.generate(reqs) if reqs else []
    return [bool(r.strip()) and r.strip().lower().split()[0].strip(".,:!") == "correct" for r in replies]
