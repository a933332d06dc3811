"""Task registry: ``@register_task`` records a family's parameterised tasks under stable ids;
``list_tasks("elvis/*")`` filters them with glob patterns; ``get_task(id)`` returns one.

A task is a pure function ``fn(rng, **params) -> Draw``; the registry hands it the
per-sample generator of :func:`engine.rng.sample_rng`, so ``task.sample(seed, index)`` is
the same wherever and whenever it is called. Tasks are discovered by importing the
``scenes`` package (each family registers on import).
"""
from __future__ import annotations

import fnmatch
import importlib
import inspect
import itertools
from dataclasses import dataclass, field
from typing import Callable

from .rng import sample_rng
from .sample import Draw, Sample
from .scene import Scene


class UnknownTaskError(ValueError):
    """A task id or pattern that names no registered task."""


@dataclass(frozen=True)
class Task:
    """A registered task: an id, its sampling function and the parameters bound to it."""

    id: str
    fn: Callable[..., Draw] = field(repr=False)
    params: dict = field(default_factory=dict)
    description: str = ""
    answer_distribution: dict | None = None   # gold answer -> probability, when known exactly
    rank: int = 0                             # position in a family's results table
    reader: Callable | None = field(default=None, repr=False)   # reply, sample -> Parsed (the family's format)
    open_answer: bool = False                 # free text graded by a judge: no answer distribution, chance 0

    @property
    def family(self) -> str:
        return self.id.split("/", 1)[0]

    def sample(self, seed: int, index: int) -> Sample:
        """The sample ``(self.id, seed, index)``: pure and deterministic."""
        rng = sample_rng(seed, self.id, index)
        kwargs = dict(self.params)
        if _takes_index(self.fn):
            kwargs["index"] = index
        d = self.fn(rng, **kwargs)
        if not isinstance(d, Draw):
            raise TypeError(f"task {self.id} returned {type(d).__name__}, expected engine.Draw")
        panels = d.panels if isinstance(d.panels, list) else [d.panels]
        s = Sample(task=self.id, seed=int(seed), index=int(index), panels=panels, question=d.question,
                   answer=d.answer, answer_type=d.answer_type,
                   options=list(d.options) if d.options is not None else None,
                   meta={"params": dict(self.params), **d.meta})
        s.validate()
        return s

    def samples(self, seed: int, indices) -> list[Sample]:
        return [self.sample(seed, i) for i in indices]


_TASKS: dict[str, Task] = {}
_discovered = False


def _takes_index(fn) -> bool:
    return "index" in inspect.signature(fn).parameters


def register_task(pattern: str, description: str = "", answer_distribution=None, rank: int = 0, reader=None,
                  open_answer: bool = False, **grid):
    """Register ``fn`` once per combination of ``grid`` values, with id ``pattern.format(**params)``.

    ``answer_distribution`` (a dict, or a callable of the params returning one) states the
    exact distribution of gold answers, from which chance baselines are computed; ``rank``
    orders a family's tasks in its results table; ``reader(reply, sample) -> Parsed`` reads
    replies written in the family's own answer format (default: ``evals.parsing``);
    ``open_answer`` marks free-text answers that a judge grades (no guess can be drawn).

    Example::

        @register_task("shapes/count/{kind}", kind=["circle", "star"])
        def count(rng, kind): ...
    """
    def deco(fn):
        names = list(grid)
        for values in itertools.product(*(grid[n] for n in names)):
            params = dict(zip(names, values))
            tid = pattern.format(**params)
            if tid in _TASKS and _TASKS[tid].fn is not fn:
                raise ValueError(f"task id {tid!r} is registered twice")
            dist = answer_distribution(**params) if callable(answer_distribution) else answer_distribution
            _TASKS[tid] = Task(tid, fn, params, description or (fn.__doc__ or "").strip().split("\n")[0],
                               dist, rank, reader, open_answer)
        return fn
    return deco


def _discover() -> None:
    global _discovered
    if not _discovered:
        _discovered = True
        importlib.import_module("scenes")


def list_tasks(pattern: str | None = None) -> list[str]:
    """Sorted ids of the registered tasks matching the glob ``pattern`` (all when ``None``)."""
    _discover()
    ids = sorted(_TASKS)
    return ids if pattern is None else [t for t in ids if fnmatch.fnmatchcase(t, pattern)]


def get_task(task_id: str) -> Task:
    """The task with this exact id, or ``UnknownTaskError`` naming close matches."""
    _discover()
    if task_id not in _TASKS:
        family = task_id.split("/", 1)[0]
        near = [t for t in sorted(_TASKS) if t.startswith(family + "/")][:5]
        hint = f"; tasks of {family!r} include {', '.join(near)}" if near else f"; families: {', '.join(families())}"
        raise UnknownTaskError(f"unknown task {task_id!r}{hint}")
    return _TASKS[task_id]


def families() -> list[str]:
    _discover()
    return sorted({t.split("/", 1)[0] for t in _TASKS})


def resolve(pattern: str) -> list[Task]:
    """Tasks matching ``pattern`` (an exact id or a glob); ``UnknownTaskError`` if none does."""
    ids = list_tasks(pattern)
    if not ids:
        raise UnknownTaskError(f"no registered task matches {pattern!r}; families: {', '.join(families())} "
                               f"(try 'procvis list' or a pattern such as '{families()[0]}/*')")
    return [_TASKS[t] for t in ids]


__all__ = ["Task", "register_task", "list_tasks", "get_task", "resolve", "families", "UnknownTaskError",
           "Draw", "Sample", "Scene"]
