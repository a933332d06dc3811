"""What a task produces: panels (scenes), question, gold answer and metadata."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .answers import check_answer, format_answer
from .scene import Scene


@dataclass
class Draw:
    """What a task's sampling function returns; the registry turns it into a :class:`Sample`.

    ``panels`` is one scene, or several for multi-image samples (each stored as its own
    image). ``answer`` is a string (``single``/``fixed``) or a list of strings
    (``list``/``set``); ``options`` is the answer space of a ``fixed`` answer.
    """

    panels: Scene | list[Scene]
    question: str
    answer: Any
    answer_type: str
    options: list[str] | None = None
    meta: dict = field(default_factory=dict)


@dataclass
class Sample:
    """One generated sample, identified by ``(task, seed, index)``."""

    task: str
    seed: int
    index: int
    panels: list[Scene]
    question: str
    answer: Any
    answer_type: str
    options: list[str] | None
    meta: dict

    @property
    def id(self) -> str:
        return f"{self.task}:{self.seed}:{self.index}"

    @property
    def answer_text(self) -> str:
        """The canonical text of the gold answer."""
        return format_answer(self.answer, self.answer_type)

    def record(self) -> dict:
        """The sample's metadata row (everything but pixels), JSON-serialisable."""
        return {"id": self.id, "task": self.task, "seed": self.seed, "index": self.index,
                "question": self.question, "answer": self.answer_text, "answer_type": self.answer_type,
                "options": list(self.options) if self.options else [], "num_panels": len(self.panels),
                "meta": self.meta}

    def validate(self) -> None:
        """Raise ``ValueError`` when the sample breaks the answer schema."""
        check_answer(self.answer, self.answer_type, self.options)
        if not self.panels or not all(isinstance(p, Scene) for p in self.panels):
            raise ValueError(f"{self.id}: panels must be a non-empty list of Scene")
        if not isinstance(self.question, str) or not self.question.strip():
            raise ValueError(f"{self.id}: the question is empty")
