"""What a task produces: panels (scenes), question, gold answer, how the sample is shown and
read, and the family's own metadata."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .answers import check_answer, format_answer
from .scene import Scene

# The typed fields below (how a sample is shown and scored, and the settings it was drawn
# under) are written into a record's ``meta`` under these names when set, so a dataset row
# carries them without a schema change; ``meta`` itself must not use these names.
TYPED_META = ("gold_text", "prompt_panels", "panel_extents", "caption", "settings")


@dataclass
class Draw:
    """What a task's sampling function returns; the registry turns it into a :class:`Sample`.

    Attributes:
        panels: one scene, or several for multi-image samples (each stored as its own image).
        question: the prompt text of a one-turn protocol.
        answer: a string (``single``/``fixed``) or a list of strings (``list``/``set``).
        answer_type: ``single``, ``fixed``, ``list`` or ``set``.
        options: the answer space of a ``fixed`` answer.
        meta: the family's own fields (JSON-serialisable), everything needed to re-derive the
            answer.
        gold_text: the gold answer written as the family's replies write it (what an oracle
            replies, e.g. ``COUNT:7``); default: the canonical answer text.
        prompt_panels: the panels a one-turn prompt shows, in order (default: all).
        panel_extents: ``(height, width)`` of each panel in units of the requested size
            (default: every panel square), e.g. a collage wider than a panel.
        caption: what a contact sheet prints under the sample (default: the question).
    """

    panels: Scene | list[Scene]
    question: str
    answer: Any
    answer_type: str
    options: list[str] | None = None
    meta: dict = field(default_factory=dict)
    gold_text: str | None = None
    prompt_panels: list[int] | None = None
    panel_extents: list[tuple[float, float]] | None = None
    caption: str | None = None


@dataclass
class Sample:
    """One generated sample, identified by ``(task, seed, index)`` under its task's family
    ``settings`` (``None`` when the family has none); see :class:`Draw` for the other fields."""

    task: str
    seed: int
    index: int
    panels: list[Scene]
    question: str
    answer: Any
    answer_type: str
    options: list[str] | None
    meta: dict
    gold_text: str | None = None
    prompt_panels: list[int] | None = None
    panel_extents: list[tuple[float, float]] | None = None
    caption: str | None = None
    settings: dict | None = None

    @property
    def id(self) -> str:
        return f"{self.task}:{self.seed}:{self.index}"

    @property
    def answer_text(self) -> str:
        """The canonical text of the gold answer."""
        return format_answer(self.answer, self.answer_type)

    @property
    def reply_text(self) -> str:
        """The gold answer as a reply in the family's format (what an oracle says)."""
        return self.gold_text if self.gold_text is not None else self.answer_text

    @property
    def shown(self) -> list[int]:
        """Indices of the panels a one-turn prompt shows."""
        return list(self.prompt_panels) if self.prompt_panels is not None else list(range(len(self.panels)))

    def panel_hw(self, k: int, size: tuple[int, int]) -> tuple[int, int]:
        """Pixel ``(height, width)`` of panel ``k`` when panels are rendered at ``size = (H, W)``."""
        H, W = size
        if self.panel_extents is None:
            return H, W
        h, w = self.panel_extents[k]
        return round(h * H), round(w * W)

    def record(self) -> dict:
        """The sample's metadata row (everything but pixels), JSON-serialisable. The typed
        presentation fields that are set travel inside ``meta`` under their own names."""
        meta = dict(self.meta)
        for name in TYPED_META:
            value = getattr(self, name)
            if value is not None:
                meta[name] = [list(v) for v in value] if name == "panel_extents" else value
        return {"id": self.id, "task": self.task, "seed": self.seed, "index": self.index,
                "question": self.question, "answer": self.answer_text, "answer_type": self.answer_type,
                "options": list(self.options) if self.options else [], "num_panels": len(self.panels),
                "meta": meta}

    def validate(self) -> None:
        """Raise ``ValueError`` when the sample breaks the answer schema or its own fields."""
        check_answer(self.answer, self.answer_type, self.options)
        clash = sorted(set(self.meta) & set(TYPED_META))
        if clash:
            raise ValueError(f"{self.id}: meta keys {clash} are typed Sample fields; set the fields instead")
        if not self.panels or not all(isinstance(p, Scene) for p in self.panels):
            raise ValueError(f"{self.id}: panels must be a non-empty list of Scene")
        if not isinstance(self.question, str) or not self.question.strip():
            raise ValueError(f"{self.id}: the question is empty")
        n = len(self.panels)
        if self.prompt_panels is not None and not all(0 <= int(i) < n for i in self.prompt_panels):
            raise ValueError(f"{self.id}: prompt_panels {self.prompt_panels} name panels outside 0..{n - 1}")
        if self.panel_extents is not None and len(self.panel_extents) != n:
            raise ValueError(f"{self.id}: {len(self.panel_extents)} panel extents for {n} panels")
