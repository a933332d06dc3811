"""The evaluation contracts: protocols turn a sample into a conversation of turns, runners
answer requests, readers score replies.

A protocol opens with a first user turn (text plus images), then, after each reply, either
asks a further turn or stops; the reply it names is scored. The harness (``evals``) drives
the conversations of a whole batch in lockstep, one batched runner call per round, and
saves every transcript. Task and model meet only at :class:`Request`: protocols never see a
model and runners never see a task.

``direct`` (the question with the panels the sample's prompt shows, one turn) fits every
task; a family adds its own protocols with ``@FAMILY.protocol`` (rule induction then
classification, exemplar-first, staged questions, iterative strategies).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar
from typing import Protocol as _Interface

if TYPE_CHECKING:
    import torch

    from .replies import Parsed
    from .sample import Sample
    from .task import Task


@dataclass
class Turn:
    """One user turn: ``prompt`` with ``images`` (``[3,H,W]`` uint8), and the model's ``reply``.

    ``shared``: a key naming a turn that several samples ask identically (e.g. one rule
    induction per task), asked once and its reply reused; ``history``: whether the earlier
    turns are sent with this one (False: a fresh conversation); ``gold``: what an oracle
    replies to this turn (default: the sample's gold reply); ``choices``: the answers a
    guesser picks among for this turn, e.g. a staged question's option numbers (default:
    the task's answer distribution); a turn created with ``reply`` already set is answered
    by the protocol itself (a solved exemplar)."""

    prompt: str
    images: list[torch.Tensor] = field(default_factory=list)
    reply: str | None = None
    shared: str | None = None
    history: bool = True
    gold: str | None = None
    choices: list[str] | None = None


@dataclass
class Request:
    """One model call: the current user turn (``prompt`` with ``images``, ``[3,H,W]`` uint8
    tensors in order) after ``history``, the earlier turns of the conversation as
    ``(prompt, images, reply)`` triples. ``answer_type``/``options`` describe the expected
    answer; ``gold`` and ``task`` are for the oracle and baseline runners only."""

    id: str
    task: str
    images: list[torch.Tensor]
    prompt: str
    answer_type: str
    options: list[str] | None = None
    gold: str = field(default="", repr=False)
    history: list[tuple[str, list[torch.Tensor], str]] = field(default_factory=list)
    settings: dict | None = None
    choices: list[str] | None = None


class Runner(_Interface):
    """Anything with a ``name`` and ``generate(requests) -> list[str]``, one reply per
    request, in order."""

    name: str

    def generate(self, requests: list[Request]) -> list[str]: ...


class Protocol:
    """A multi-turn program. Override :meth:`first` and, for several turns, :meth:`next` and
    :meth:`scored`. ``family`` is the plug-in whose tasks the protocol fits (``None``: any
    task); ``@FAMILY.protocol`` sets it."""

    name: ClassVar[str] = "protocol"
    family: ClassVar[str | None] = None

    def indices(self, count: int) -> list[int]:
        """The sample indices evaluated when ``count`` is asked (default ``0 .. count-1``)."""
        return list(range(count))

    def parse(self, reply: str, sample: Sample, task: Task) -> Parsed:
        """Read the scored reply (default: the task's reader)."""
        return task.read(reply, sample)

    def first(self, sample: Sample, images: list[torch.Tensor]) -> Turn:
        raise NotImplementedError

    def next(self, sample: Sample, images: list[torch.Tensor], turns: list[Turn]) -> Turn | None:
        """The turn after ``turns`` (all answered), or ``None`` when the conversation is over."""
        return None

    def extras(self, sample: Sample, turns: list[Turn]) -> dict[str, Any]:
        """Extra fields for the sample's results row (e.g. earlier stages' correctness)."""
        return {}

    def scored(self, turns: list[Turn]) -> int:
        """Index of the turn whose reply is scored (default: the last)."""
        return len(turns) - 1


class Direct(Protocol):
    """One turn: the sample's question with the panels its prompt shows (all by default)."""

    name = "direct"

    def first(self, sample: Sample, images: list[torch.Tensor]) -> Turn:
        return Turn(sample.question, [images[i] for i in sample.shown], gold=sample.reply_text)
