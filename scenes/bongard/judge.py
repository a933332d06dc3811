"""Grading two-sentence Bongard answers: the rule-based judge (the family's reply reader) and
the seed's model judge through the runner interface.

The rule-based judge splits a reply into its first two sentences (left concept, right
concept) and finds, in each, the longest keyword of either side's keyword list (longest
first, so "no circle" beats "circle"). The answer is correct when the first sentence names
the left side's concept and the second the right side's. Deterministic and free; its
agreement with the stored correct/incorrect paraphrases is tested for every concept.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from engine.protocol import Request
from engine.replies import Parsed

from .concepts import CONCEPTS

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


def sentences(reply: str) -> list[str]:
    """The non-empty sentences of ``reply``, in order."""
    return [s.strip() for s in _SENTENCE.findall(reply or "") if s.strip(" .!?\n")]


def _norm(text: str) -> str:
    return " " + re.sub(r"\s+", " ", re.sub(r"[^a-z0-9 ]+", " ", text.lower())).strip() + " "


def side_of(sentence: str, keywords) -> int | None:
    """0 or 1: which side's keyword the sentence names (longest match wins), else None.
    Keywords match from the start of a word (``"triangle"`` matches ``"triangles"``); short
    ones (up to two characters) match whole words only (``"3"`` does not match ``"35"``)."""
    text = _norm(sentence)
    best, side = 0, None
    for k, words in enumerate(keywords):
        for w in words:
            pat = _norm(w)
            if len(pat.strip()) > 2:
                pat = pat.rstrip()
            if pat in text and len(pat) > best:
                best, side = len(pat), k
    return side


def judge(concept_id: str, reply: str) -> bool:
    """Whether ``reply`` states the left then the right concept of ``concept_id``."""
    c = CONCEPTS[concept_id]
    parts = sentences(reply)
    if len(parts) < 2:
        return False
    return side_of(parts[0], c.keywords) == 0 and side_of(parts[1], c.keywords) == 1


def read_answer(reply, sample):
    """The reader registered for Bongard tasks: a correct answer reads as the gold text, any
    other non-empty reply as itself (wrong), an empty one as a format error."""
    text = reply.strip() if isinstance(reply, str) else ""
    if not text:
        return Parsed(None, False)
    return Parsed(sample.answer_text if judge(sample.task, text) else text, len(sentences(text)) == 2)


# The seed's judge prompts (appendix B), for a model judge through the runner interface.
JUDGE_SYSTEM = (
    "You evaluate the user's answer by comparing it with reference answers for a given task. You see: reference "
    "answers, examples of correct and incorrect answers, and the user answer. Each answer contains features of the "
    "right and left class. Identify the target property that distinguishes the right class from the left. This may "
    "describe semantics, form, presence, quantity, or size of objects. The user answer may contain features of both "
    "right and left classes, or an explicit target property separating these classes. If two features are "
    "indicated, formulate the target property based on them. The answer is correct if the target property matches "
    "the reference or correct examples, accounting for generalization, paraphrasing, synonyms, word order changes, or "
    "simplification. The answer is incorrect if the target property is missing or wrong. Do not accept answers "
    "similar to or matching incorrect examples. Focus on meaning, not exact wording. Ignore minor differences in "
    "style, grammar, or phrasing. Respond with only one word: correct or incorrect.")


# ---------------------------------------------------------------- the model judge

JUDGE_USER = ("Task-specific evaluation instruction:\n{instruction}\nReference answers:\nLeft: {ref_left}\n"
              "Right: {ref_right}\nExamples of correct answers:\n{correct}\nExamples of incorrect answers:\n{incorrect}\n"
              "Model answer:\n{answer}")


def class_instructions() -> dict[str, str]:
    """The seed's category-specific judge instructions (appendix B.3), verbatim."""
    return json.loads((Path(__file__).parent / "judge_instructions.json").read_text())


def judge_prompt(concept, answer: str) -> str:
    """The seed's judge prompt (system + user template + the category's instruction)."""
    ex = lambda pairs: "\n".join(f"Example {i + 1}:\nLeft: {a}\nRight: {b}" for i, (a, b) in enumerate(pairs))  # noqa: E731
    return JUDGE_SYSTEM + "\n\n" + JUDGE_USER.format(
        instruction=class_instructions()[concept.category], ref_left=concept.left, ref_right=concept.right,
        correct=ex(concept.correct), incorrect=ex(concept.incorrect), answer=answer)


def model_judge(runner, items) -> list[bool]:
    """Grade ``items`` (``(task id, answer)`` pairs) with a text model through the runner
    interface: a reply whose first word is ``correct`` accepts."""
    reqs = [Request(id=f"judge:{k}", task=tid, images=[], prompt=judge_prompt(CONCEPTS[tid], answer),
                    answer_type="single", gold="correct")
            for k, (tid, answer) in enumerate(items)]
    replies = runner.generate(reqs) if reqs else []
    return [r.strip().lower().split()[0].strip(".,:") == "correct" if r.strip() else False for r in replies]


def judge_agreement(grade) -> dict:
    """How often ``grade(task id, answer) -> bool`` agrees with the stored labels: every
    concept's reference, its correct paraphrases (accept) and incorrect ones (reject)."""
    items = []
    for tid, c in CONCEPTS.items():
        items.append((tid, f"{c.left} {c.right}", True))
        items += [(tid, f"{a} {b}", True) for a, b in c.correct]
        items += [(tid, f"{a} {b}", False) for a, b in c.incorrect]
    hits = [grade(tid, ans) == label for tid, ans, label in items]
    return {"items": len(items), "agreement": sum(hits) / len(items)}
