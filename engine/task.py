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
import sys
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
    group: str | None = None                  # batched: the param whose value lets tasks share one draw

    @functools.cached_property
    def batch_key(self):
        """What tasks drawn in one call of a batched ``fn`` share (``None``: not batched): the
        function, the settings and, for a grouped task, its :attr:`group` param's value."""
        if not self.batched:
            return None
        return (self.fn, json.dumps(self.settings, sort_keys=True),
                self.id if self.group is None else repr(self.params[self.group]))

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
        drawing_starts()
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
        """The samples ``indices`` (as :meth:`sample` gives each; a batched task draws them
        :data:`BATCH` at a time)."""
        indices = list(indices)
        if not self.batched:
            return [self.sample(seed, i) for i in indices]
        out = []
        for a in range(0, len(indices), BATCH):
            part = indices[a:a + BATCH]
            drawn = self.batch(seed, part)
            out += [self.build(drawn.draw(b), seed, i) for b, i in enumerate(part)]
        return out

    def batch(self, seed: int, indices):
        """Samples ``indices`` (at least one) of a batched task drawn at once: an
        :class:`engine.batched.ShapeBatch` whose row ``b`` is sample ``indices[b]`` (the same
        whatever else the batch holds)."""
        return draw_together(seed, [(self, i) for i in indices])

    def read(self, reply: str, sample: Sample) -> Parsed:
        """The canonical answer a reply states, read in the task's own format."""
        return (self.reader or read_answer)(reply, sample)


BATCH = 256   # samples of a batched task drawn in one call by ``samples``


def draw_together(seed: int, members: list[tuple[Task, int]]):
    """Samples ``(task, index)`` of batched tasks sharing one :attr:`Task.batch_key`, drawn in
    one call: an :class:`engine.batched.ShapeBatch` whose row ``b`` is ``members[b]``'s sample,
    the same whatever else the batch holds. The function gets ``rng`` (a
    :class:`engine.batched.BatchRandom` keyed per sample), ``index`` ``[B]`` int64 if it takes
    it, ``settings`` if it takes it, and the tasks' params: as they are for an ungrouped task
    (one task per call), one list over the batch each for a grouped one."""
    from .batched import BatchRandom, member_keys

    if not members:
        raise ValueError("no samples to draw: give at least one (task, index)")
    tasks = [t for t, _ in members]
    first = tasks[0]
    if not first.batched:
        raise TypeError(f"task {first.id} draws one sample at a time; use sample()")
    if any(t.batch_key != first.batch_key for t in tasks):
        odd = next(t.id for t in tasks if t.batch_key != first.batch_key)
        raise ValueError(f"tasks {first.id} and {odd} cannot be drawn in one batch (another function, "
                         "group or settings)")
    drawing_starts()
    wants = _parameters(first.fn)
    kwargs = dict(first.params) if first.group is None else {k: [t.params[k] for t in tasks] for k in first.params}
    if "settings" in wants:
        kwargs["settings"] = dict(first.settings or {})
    if "index" in wants:
        import numpy as np
        kwargs["index"] = np.array([int(i) for _, i in members], dtype=np.int64)
    return first.fn(BatchRandom(member_keys(seed, [(t.id, i) for t, i in members])), **kwargs)


def drawing_starts() -> None:
    """:func:`kernels.raster_numba.drawing_starts` where the renderer is imported: a note
    waiting for the first drawing (the command line's; sampling kernels compile on first use
    too) is said now. Nothing when none waits or the renderer was never imported."""
    rn = sys.modules.get("kernels.raster_numba")
    if rn is not None:
        rn.drawing_starts()


@functools.lru_cache(maxsize=None)
def _parameters(fn) -> frozenset:
    return frozenset(inspect.signature(fn).parameters)
