"""The task record: a registered sampling function, the parameters bound to it, and the
family settings it runs with.

A task is a pure function ``fn(rng, **params) -> Draw``: the registry hands it the
per-sample generator of :func:`engine.rng.sample_rng`, so ``task.sample(seed, index)`` is
the same wherever and whenever it is called. A function that takes ``index`` gets the
sample index; one that takes ``settings`` gets the task's family settings (image folders,
which objects to draw...), which are part of the task's identity: they are recorded in every sample.
"""
from __future__ import annotations

import functools
import inspect
import json
from dataclasses import dataclass, field, replace
from typing import Callable

from .replies import Parsed, Reader, read_answer
from .rng import sample_rng
from .sample import Draw, Sample


@dataclass(frozen=True)
class Task:
    """A registered task: an id, its sampling function and the parameters bound to it."""

    id: str
    fn: Callable[..., Draw] = field(repr=False)
    family: str                               # the plug-in (scenes/<family>/) that registered it
    params: dict = field(default_factory=dict)
    description: str = ""
    answer_distribution: dict | None = None   # gold answer -> probability, when known exactly
    rank: int = 0                             # position in a family's results table
    reader: Reader | None = field(default=None, repr=False)   # reply, sample -> Parsed
    open_answer: bool = False                 # free text graded by a judge: no answer distribution, chance 0
    settings: dict | None = None              # the family's settings (None: the family has none)
    overall: bool = True                      # counts in its family's overall (the paper may leave a task out)
    batched: bool = False                     # fn draws whole batches (engine.batched); sample() is a batch of one
    options: tuple | None = None              # the answer choices every sample offers, when declared

    @property
    def root(self) -> str:
        """The first part of the id (``perceptv_fixed`` for ``perceptv_fixed/count``)."""
        return self.id.split("/", 1)[0]

    @property
    def identity(self) -> str:
        """What decides this task's samples besides seed and index: the id and its settings."""
        return self.id if not self.settings else f"{self.id}?{json.dumps(self.settings, sort_keys=True)}"

    def bind(self, settings: dict) -> Task:
        """This task with ``settings`` (complete, already checked by its family)."""
        return replace(self, settings=dict(settings))

    def sample(self, seed: int, index: int) -> Sample:
        """The sample ``(self.id, seed, index)`` under the task's settings: pure and deterministic."""
        if self.batched:
            return self.build(self.batch(seed, [index]).draw(0), seed, index)
        rng = sample_rng(seed, self.id, index)
        kwargs = dict(self.params)
        wants = _parameters(self.fn)
        if "index" in wants:
            kwargs["index"] = index
        if "settings" in wants:
            kwargs["settings"] = dict(self.settings or {})
        return self.build(self.fn(rng, **kwargs), seed, index)

    def build(self, d: Draw, seed: int, index: int) -> Sample:
        """The validated :class:`Sample` of this task holding draw ``d`` as ``(seed, index)``
        (what :meth:`sample` returns; a family that draws outside the grid of registered
        parameters, such as Percept-V at an explicit size, builds its samples with it)."""
        if not isinstance(d, Draw):
            raise TypeError(f"task {self.id} returned {type(d).__name__}, expected engine.Draw")
        panels = d.panels if isinstance(d.panels, list) else [d.panels]
        s = Sample(task=self.id, seed=int(seed), index=int(index), panels=panels, question=d.question,
                   answer=d.answer, answer_type=d.answer_type,
                   options=list(d.options) if d.options is not None else None,
                   meta={"params": dict(self.params), **d.meta}, gold_text=d.gold_text, prompt_panels=d.prompt_panels,
                   panel_extents=d.panel_extents, caption=d.caption,
                   settings=dict(self.settings) if self.settings else None)
        s.validate()
        if self.options is not None and tuple(map(str, s.options or ())) != self.options:
            raise ValueError(f"task {self.id}: sample {index} offers options {s.options!r}, but the task declares "
                             f"{list(self.options)!r}")
        return s

    def samples(self, seed: int, indices) -> list[Sample]:
        return [self.sample(seed, i) for i in indices]

    def batch(self, seed: int, indices):
        """Samples ``indices`` of a batched task drawn at once: an :class:`engine.batched.ShapeBatch`
        whose row ``b`` is sample ``indices[b]`` (the same whatever else the batch holds)."""
        if not self.batched:
            raise TypeError(f"task {self.id} draws one sample at a time; use sample()")
        from .batched import BatchRandom, batch_keys

        wants = _parameters(self.fn)
        if "index" in wants:
            raise TypeError(f"task {self.id}: a batched task draws each sample from its key and takes no index")
        kwargs = dict(self.params, **({"settings": dict(self.settings or {})} if "settings" in wants else {}))
        return self.fn(BatchRandom(batch_keys(seed, self.id, indices)), **kwargs)

    def read(self, reply: str, sample: Sample) -> Parsed:
        """The canonical answer a reply states, read in the task's own format."""
        return (self.reader or read_answer)(reply, sample)


@functools.lru_cache(maxsize=None)
def _parameters(fn) -> frozenset:
    return frozenset(inspect.signature(fn).parameters)
