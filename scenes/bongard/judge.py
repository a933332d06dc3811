"""Grading two-sentence Bongard answers: the rule-based judge (the family's reply reader) and
the seed's model judge through the runner interface.

The rule-based judge compares meaning, not words: the reply's left and right sentences
(:func:`answer_sides`) and the two reference sentences are parsed into structured meaning
(:mod:`scenes.bongard.meaning`: kinds, attributes, counts, relations, negation), and each
answer sentence must state what distinguishes its side's reference from the other side's, with
the same polarity, state nothing of the other side's, and contradict nothing of its own. So
"None of the images includes a circle" matches "There is no circle", "The triangle is below the
circle" matches "The circle is above the triangle", and an answer naming another attribute, a
wrong value, or the sides swapped is rejected. Deterministic and free; its agreement with the
stored correct/incorrect paraphrases is tested for every concept.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from engine.protocol import Request
from engine.replies import Parsed

from .concepts import CONCEPTS
from .matching import expand, side_matches
from .meaning import parse, tokens

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_CLAUSE = re.compile(r"[^;]+;?")
_ITEM = re.compile(r"^\s*(?:\d+\s*[.)]|[-*\u2022]|\(?[a-z]\))\s+(?=.*[a-z])", re.M | re.I)
_SIDE_NOUN = r"(?:\s+(?:sides?|images?|panels?|pictures?|sets?|groups?|columns?|examples?|collages?|class|category))"
_COLLAGE_NOUN = r"(?:\s+sides?)?\s+(?:images?|panels?|pictures?|sets?|groups?|columns?|examples?|collages?)"
_VERB = r"(?:have|has|show|shows|contain|contains|are|is|depict|depicts|feature|features|display|displays)"
_LABELS = (
    # "Left: ...", "Right side - ..."
    re.compile(rf"^(?:the\s+)?(left|right){_SIDE_NOUN}*\s*(?::|\s[-\u2013\u2014]|=)\s*", re.I),
    # "On the left, ...", "In the right images, ..."
    re.compile(rf"^(?:in|on|for)\s+(?:all\s+)?(?:the\s+)?(left|right){_SIDE_NOUN}*\s*,\s*", re.I),
    # "Left images show ...", "The left side has ..."
    re.compile(rf"^(?:all\s+)?(?:the\s+)?(left|right){_SIDE_NOUN}*\s+(?=(?:all\s+)?{_VERB}\b)", re.I),
    # "The left images: ...", "Left side panels large figures"
    re.compile(rf"^(?:all\s+)?(?:the\s+)?(left|right){_COLLAGE_NOUN}\s+", re.I),
)
# an inline side label that starts a new part: "Left: three. Right: five.", "left has three, right has five"
_INLINE = re.compile(rf"(?<=\S)\s+(?=(?:the\s+)?(?:left|right){_SIDE_NOUN}*\s*:)|"
                     rf"\s*(?:[,;]\s*(?:and\s+|while\s+|whereas\s+|but\s+)?|\s(?:and|while|whereas|but)\s+)"
                     rf"(?=(?:the\s+|all\s+)?(?:left|right){_SIDE_NOUN}*\s+(?:all\s+)?{_VERB}\b)", re.I)


def _clean(reply: str) -> str:
    text = re.sub(r"[*_`#]+", "", reply or "")
    text = re.sub(r"^\s*(?:final\s+)?answer\s*:\s*", "", text, flags=re.I)
    return _INLINE.sub("\n", _ITEM.sub("", text))


def sentences(reply: str) -> list[str]:
    """The non-empty sentences of ``reply``, in order: split at ``. ! ?`` and line ends (at ``;``
    too when that alone gives two or more); list markers and emphasis removed; an inline
    ``Right:`` label starts a new sentence."""
    out = [s.strip() for s in _SENTENCE.findall(_clean(reply)) if s.strip(" .!?;\n")]
    if len(out) == 1:
        parts = [s.strip() for s in _CLAUSE.findall(out[0]) if s.strip(" .!?;\n")]
        out = parts if len(parts) > 1 else out
    return out


def side_label(sentence: str) -> tuple[str | None, str]:
    """``(side, rest)``: the side a sentence is labelled with (``"left"``/``"right"``, or None)
    and the sentence without its label."""
    for pat in _LABELS:
        m = pat.match(sentence)
        if m and sentence[m.end():].strip(" .!?;"):
            return m.group(1).lower(), sentence[m.end():]
    return None, sentence


def answer_sides(reply: str) -> tuple[str | None, str | None]:
    """The reply's left-concept and right-concept sentences: by their labels when both sides are
    labelled, else the first two sentences; None where missing."""
    labelled = [side_label(s) for s in sentences(reply)]
    by_side = {}
    for side, rest in labelled:
        if side and side not in by_side:
            by_side[side] = rest
    if len(by_side) == 2:
        return by_side["left"], by_side["right"]
    rest = [r for _, r in labelled]
    return (rest[0] if rest else None), (rest[1] if len(rest) > 1 else None)


def _words(sentence: str) -> set[str]:
    return set(tokens(sentence)) - {"the", "a", "an", "is", "are", "of", "in", "on", "all", "each", "there", "this"}


def _word_side(answer: str, ref: str, other: str) -> bool:
    """The fallback for references whose meanings the parser cannot tell apart: the answer names
    a word only its side's reference has, and none only the other's."""
    a, r, o = _words(answer), _words(ref), _words(other)
    return bool(a & (r - o)) and not a & (o - r)


def judge_rule(left: str, right: str, reply: str) -> bool:
    """Whether the reply's first (or ``Left:``-labelled) sentence states the meaning of the
    reference sentence ``left`` and its second (``Right:``) that of ``right``."""
    a, b = answer_sides(reply)
    if a is None or b is None:
        return False
    ml, mr = parse(left), parse(right)
    if expand(ml.claims) == expand(mr.claims):
        return _word_side(a, left, right) and _word_side(b, right, left)
    return side_matches(parse(a), ml, mr) and side_matches(parse(b), mr, ml)


def judge(concept_id: str, reply: str) -> bool:
    """Whether ``reply`` states the left then the right concept of ``concept_id``."""
    c = CONCEPTS[concept_id]
    return judge_rule(c.left, c.right, reply)


def read_answer(reply, sample):
    """The reader of every Bongard task, procedural or real: a reply the rule judge accepts
    against the sample's two reference sentences (``meta["reference"]``) reads as the gold
    text, any other non-empty reply as itself (wrong), an empty one as a format error."""
    text = reply.strip() if isinstance(reply, str) else ""
    if not text:
        return Parsed(None, False)
    ref = sample.meta["reference"]
    return Parsed(sample.answer_text if judge_rule(ref["left"], ref["right"], text) else text,
                  len(sentences(text)) == 2)


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


NO_INSTRUCTION = "No category is given: judge by the reference answers alone."


def judge_prompt(concept, answer: str) -> str:
    """The seed's judge prompt (system + user template + the category's instruction; a
    category the seed has none for, such as an uncategorised real problem, gets
    :data:`NO_INSTRUCTION`). ``concept``: anything with ``category``, ``left``, ``right``,
    ``correct`` and ``incorrect``."""
    ex = lambda pairs: "\n".join(f"Example {i + 1}:\nLeft: {a}\nRight: {b}" for i, (a, b) in enumerate(pairs))  # noqa: E731
    return JUDGE_SYSTEM + "\n\n" + JUDGE_USER.format(
        instruction=class_instructions().get(concept.category, NO_INSTRUCTION), ref_left=concept.left,
        ref_right=concept.right, correct=ex(concept.correct), incorrect=ex(concept.incorrect), answer=answer)


def accepts(judge_reply: str) -> bool:
    """Whether a judge model's reply accepts: its first word is ``correct``."""
    words = (judge_reply or "").strip().lower().split()
    return bool(words) and words[0].strip(".,:!") == "correct"


def model_judge(runner, items) -> list[bool]:
    """Grade ``items`` (``(task id, answer)`` pairs) with a text model through the runner
    interface (:func:`accepts` reads each reply)."""
    reqs = [Request(id=f"judge:{k}", task=tid, images=[], prompt=judge_prompt(CONCEPTS[tid], answer),
                    answer_type="single", gold="correct")
            for k, (tid, answer) in enumerate(items)]
    return [accepts(r) for r in (runner.generate(reqs) if reqs else [])]


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
