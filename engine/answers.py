"""Answer types and their canonical text form.

``single``: one value (``"7"``, ``"red"``); ``fixed``: a fixed-length answer, one of the
sample's ``options`` when it has them (a choice), else one string such as ``"2 5"``;
``list``: ordered values; ``set``: unordered values. Lists and sets are written as
``[a, b, c]`` (sets sorted), which :func:`parse_answer` reads back strictly.
"""
from __future__ import annotations

ANSWER_TYPES = ("single", "fixed", "list", "set")


def check_answer(answer, answer_type: str, options=None) -> None:
    """Raise ``ValueError`` naming the problem when ``answer`` does not fit ``answer_type``."""
    if answer_type not in ANSWER_TYPES:
        raise ValueError(f"answer_type={answer_type!r}; allowed: {', '.join(ANSWER_TYPES)}")
    if answer_type in ("single", "fixed"):
        if not isinstance(answer, str) or not answer:
            raise ValueError(f"a {answer_type} answer must be a non-empty string, got {answer!r}")
        if answer_type == "fixed" and options and answer not in options:
            raise ValueError(f"fixed answer {answer!r} is not among its options {options!r}")
    else:
        if not isinstance(answer, (list, tuple)) or not all(isinstance(a, str) and a for a in answer):
            raise ValueError(f"a {answer_type} answer must be a list of non-empty strings, got {answer!r}")
        if any("," in a or "[" in a or "]" in a for a in answer):
            raise ValueError(f"{answer_type} items may not contain ',', '[' or ']': {answer!r}")
        if answer_type == "set" and len(set(answer)) != len(answer):
            raise ValueError(f"a set answer has repeated items: {answer!r}")


def format_answer(answer, answer_type: str) -> str:
    """The canonical text of an answer."""
    if answer_type in ("single", "fixed"):
        return str(answer)
    items = sorted(answer) if answer_type == "set" else list(answer)
    return "[" + ", ".join(items) + "]"


def parse_answer(text: str, answer_type: str):
    """Strictly read canonical answer text back: a string, or a list for list/set answers.
    Raises ``ValueError`` when the text is not in the canonical form."""
    t = text.strip()
    if answer_type in ("single", "fixed"):
        if not t:
            raise ValueError("empty answer")
        return t
    if answer_type not in ANSWER_TYPES:
        raise ValueError(f"answer_type={answer_type!r}; allowed: {', '.join(ANSWER_TYPES)}")
    if not (t.startswith("[") and t.endswith("]")):
        raise ValueError(f"a {answer_type} answer must look like [a, b, c], got {text!r}")
    body = t[1:-1].strip()
    items = [s.strip() for s in body.split(",")] if body else []
    if any(not s for s in items):
        raise ValueError(f"empty item in {text!r}")
    return sorted(items) if answer_type == "set" else items
