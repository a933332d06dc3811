"""Evaluation protocols: multi-turn programs that turn a sample into a conversation.

A protocol opens with a first user turn (text plus images), then, after each reply, either
asks a further turn or stops; the reply it names is scored. The harness drives the
conversations of a whole batch in lockstep (one batched runner call per round) and saves
every transcript. ``direct`` (the question with every panel, one turn) is the protocol of
single-answer and order-generation tasks; the families add theirs (rule induction then
classification, exemplar-first, staged questions, iterative strategies).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch

from engine.sample import Sample

from .parsing import Parsed, parse_reply


@dataclass
class Turn:
    """One user turn: ``prompt`` with ``images`` (``[3,H,W]`` uint8), and the model's ``reply``.

    ``shared``: a key naming a turn that several samples ask identically (e.g. one rule
    induction per task), asked once and its reply reused; ``history``: whether the earlier
    turns are sent with this one (False: a fresh conversation); ``gold``: the reply an oracle
    gives to a turn that is not the scored one."""

    prompt: str
    images: list[torch.Tensor] = field(default_factory=list)
    reply: str | None = None
    shared: str | None = None
    history: bool = True
    gold: str | None = None              # what an oracle replies to this turn (default: the sample's answer)


class Protocol:
    """Override :meth:`first` and, for several turns, :meth:`next` and :meth:`scored`."""

    name = "protocol"

    def indices(self, count: int) -> list[int]:
        """The sample indices evaluated when ``count`` is asked (default ``0 .. count-1``)."""
        return list(range(count))

    def parse(self, reply: str, sample: Sample) -> Parsed:
        """Read the scored reply: the task's own reader when its family has an answer format,
        else the answer type's strict-then-lenient parser."""
        from engine.registry import get_task

        reader = get_task(sample.task).reader
        return reader(reply, sample) if reader else parse_reply(reply, sample.answer_type, sample.options)

    def first(self, sample: Sample, images: list[torch.Tensor]) -> Turn:
        raise NotImplementedError

    def next(self, sample: Sample, images: list[torch.Tensor], turns: list[Turn]) -> Turn | None:
        """The turn after ``turns`` (all answered), or ``None`` when the conversation is over."""
        return None

    def extras(self, sample: Sample, turns: list[Turn]) -> dict:
        """Extra fields for the sample's results row (e.g. earlier stages' correctness)."""
        return {}

    def scored(self, turns: list[Turn]) -> int:
        """Index of the turn whose reply is scored (default: the last)."""
        return len(turns) - 1


class Direct(Protocol):
    """One turn: the sample's question with every panel in order (or the panels its
    ``meta["prompt_panels"]`` names, e.g. a Bongard collage)."""

    name = "direct"

    def first(self, sample: Sample, images: list[torch.Tensor]) -> Turn:
        shown = [images[i] for i in sample.meta.get("prompt_panels", range(len(images)))]
        return Turn(sample.question, shown, gold=sample.meta.get("gold_text"))


PROTOCOLS: dict[str, type] = {"direct": Direct}


def register_protocol(cls: type) -> type:
    """Class decorator: make ``cls`` available as ``--protocol cls.name``."""
    PROTOCOLS[cls.name] = cls
    return cls


def get_protocol(name: str) -> Protocol:
    if name not in PROTOCOLS:
        import evals.elvis  # noqa: F401  (the families register their protocols on import)
        import evals.bongard  # noqa: F401
        import evals.kiva  # noqa: F401
        import evals.perceptv  # noqa: F401
    if name not in PROTOCOLS:
        raise ValueError(f"protocol={name!r}; available: {', '.join(sorted(PROTOCOLS))}")
    return PROTOCOLS[name]()
