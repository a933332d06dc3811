"""Reading model replies: the contract (:class:`Parsed`, the reader signature) and the
default reader of each answer type.

A *reader* is ``reader(reply: str, sample: Sample) -> Parsed``: it reads the reply the way
the sample's prompt asks for it and returns the canonical answer text it states (or
``None``). A family whose answers have their own format registers its reader with its
tasks; every other task is read by :func:`read_answer`: the strict answer format first,
then a documented lenient fallback. A reply neither reading accepts is a *format error*,
counted apart from wrong answers.

Lenient rules (applied only when the strict form fails):

* letter options (``A``..``D``): the first standalone option letter, e.g. ``"(B)"``,
  ``"Answer: C."``; a reply naming two different letters is a format error;
* word options (``yes``/``no``, kind names): the only option word present, ignoring case and
  punctuation; two different option words present is a format error;
* three-line "Judgment / Error Position / Error Type" answers: the three fields found
  anywhere in the reply, ignoring case and extra spaces;
* ``single``: the explicit final answer: the value after the last ``Answer:`` /
  ``Final answer:`` / ``The answer is`` / ``\\boxed{}`` (to the end of its line), else the
  last non-empty line; markdown emphasis and code marks are ignored, surrounding
  punctuation trimmed, case ignored;
* ``list`` / ``set``: the last ``[...]`` in the reply, items trimmed; a reply offering
  alternatives (``[a, b] or [b, a]?``) is a format error.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from typing import TYPE_CHECKING, Callable

from .answers import format_answer, parse_answer

if TYPE_CHECKING:
    from .sample import Sample


@dataclass(frozen=True)
class Parsed:
    """``value``: the canonical answer text read from the reply, or ``None``;
    ``strict``: whether the strict format matched; ``format_error``: nothing could be read."""

    value: str | None
    strict: bool

    @property
    def format_error(self) -> bool:
        return self.value is None


Reader = Callable[[str, "Sample"], Parsed]
"""``reader(reply, sample) -> Parsed``: how a task's replies are read."""

_TRIM = " \t\r\n.,;:!?\"'`*()[]{}<>"
MARKER = r"(?:the\s+)?(?:final\s+)?answer\s+is\s*:?|(?:final\s+)?answer\s*[:=]"
"""An explicit final-answer marker (``Answer:``, ``Final answer:``, ``The answer is``), lower case."""


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
"""The whole numbers 0..20 as words, at their own index."""


def _unwrap(text: str) -> str:
    """``text`` without ``\\boxed{}``/``\\text{}`` wrappers and markdown emphasis or code marks."""
    t = re.sub(r"\\(?:boxed|text|mathrm|textbf)\s*\{([^{}]*)\}", r"\1", text)
    return re.sub(r"\*+|__+|`+", "", t)


def clean(text: str) -> str:
    """``text`` lower-cased and unwrapped (:func:`_unwrap`), without ``$`` and double quotes,
    and without quote, heading and bullet marks at line starts."""
    t = re.sub(r"\$+|\"", "", _unwrap(text.lower()))
    return re.sub(r"(?m)^[ \t]*(?:#+|>|[-•*])[ \t]+", "", t)


def final_answer(text: str) -> str:
    """The text a reply gives as its final answer, as written (case kept): what follows the
    last final-answer marker on its line (the next line when that is empty), else the last
    non-empty line; markdown marks removed, surrounding punctuation trimmed ("" for none)."""
    t = _unwrap(text)
    hits = list(re.finditer(MARKER, t, flags=re.I))
    if hits:
        rest = t[hits[-1].end():].lstrip(" \t")
        lines = rest.splitlines()
        body = lines[0] if lines and lines[0].strip(_TRIM) else next((ln for ln in lines[1:2]), "")
        if body.strip(_TRIM):
            return body.strip(_TRIM)
    lines = [ln for ln in t.splitlines() if ln.strip(_TRIM)]
    return lines[-1].strip(_TRIM) if lines else ""


def _letters(options) -> bool:
    return bool(options) and all(len(o) == 1 and o.isalpha() and o.isupper() for o in options)


def _three_line(options) -> bool:
    return bool(options) and all(o.startswith("Judgment:") for o in options)


def _read_three_line(reply: str) -> str | None:
    fields = {}
    for key, name in (("judgment", "Judgment"), ("position", "Error Position"), ("type", "Error Type")):
        m = re.search(name.replace(" ", r"\s*") + r"\s*:\s*([A-Da-d]?)(?![A-Za-z])", reply, flags=re.I)
        if not m:
            return None
        fields[key] = m.group(1).upper()
    if fields["judgment"] == "A":
        return "Judgment: A\nError Position:\nError Type:"
    if fields["judgment"] == "B" and fields["position"] and fields["type"] in ("A", "B"):
        return f"Judgment: B\nError Position: {fields['position']}\nError Type: {fields['type']}"
    return None


def parse_reply(reply: str, answer_type: str, options: list[str] | None = None) -> Parsed:
    """Read ``reply`` as an answer of ``answer_type`` (with ``options`` for fixed answers)."""
    text = reply if isinstance(reply, str) else ""
    stripped = text.strip()
    if answer_type == "fixed":
        opts = list(options or [])
        if _three_line(opts):
            norm = "\n".join(line.strip() for line in stripped.splitlines())
            if norm in opts:
                return Parsed(norm, True)
            value = _read_three_line(text)
            return Parsed(value if value in opts else None, False)
        if stripped in opts:
            return Parsed(stripped, True)
        if _letters(opts):
            found = {m for m in re.findall(r"(?<![A-Za-z])([A-Z])(?![A-Za-z])", text) if m in opts}
            return Parsed(found.pop() if len(found) == 1 else None, False)
        words = {o for o in opts if re.search(r"(?<![a-z])" + re.escape(o.lower()) + r"(?![a-z])", text.lower())}
        # "not positive" names no option unambiguously: a negated option word is not an answer
        words = {w for w in words if not re.search(r"\bnot\s+" + re.escape(w.lower()) + r"\b", text.lower())}
        return Parsed(words.pop() if len(words) == 1 else None, False)
    if answer_type == "single":
        if not stripped:
            return Parsed(None, False)
        answer = final_answer(stripped)
        return Parsed(answer or None, answer == stripped)
    if answer_type in ("list", "set"):
        try:
            return Parsed(format_answer(parse_answer(stripped, answer_type), answer_type), True)
        except ValueError:
            pass
        hits = list(re.finditer(r"\[([^\[\]]*)\]", text))
        if not hits:
            return Parsed(None, False)
        m = hits[-1]
        if re.match(r"\s*(?:\?|or\b)", text[m.end():]) or (len(hits) > 1 and re.search(r"\bor\s*$", text[:m.start()])):
            return Parsed(None, False)              # alternatives, not an answer
        items = [i.strip(_TRIM) for i in m.group(1).split(",") if i.strip(_TRIM)]
        return Parsed(format_answer(items, answer_type) if items else None, False)
    raise ValueError(f"answer_type={answer_type!r}; allowed: single, fixed, list, set")


def read_answer(reply: str, sample: Sample) -> Parsed:
    """The default reader: :func:`parse_reply` with the sample's answer type and options."""
    return parse_reply(reply, sample.answer_type, sample.options)


def is_correct(parsed: Parsed, gold: str, answer_type: str) -> bool:
    """Exact match of the parsed answer with the gold text (``single``: ignoring case)."""
    if parsed.value is None:
        return False
    if answer_type == "single":
        return parsed.value.strip().lower() == gold.strip().lower()
    return parsed.value == gold
