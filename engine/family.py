"""A benchmark family as a plug-in: one folder ``scenes/<family>/`` that declares a
:class:`Family` and registers, on it, its tasks, protocols and report section.

    from engine.family import Family, Setting

    FAMILY = Family("mine", "What the family measures.",
                    settings=[Setting("images", "where photos come from", default="generated")])

    @FAMILY.task("mine/count/{shape}", shape=["circle", "star"])
    def count(rng, shape): ...          # -> engine.Draw

    @FAMILY.protocol
    class Staged(Protocol): ...

    @FAMILY.report
    def report(results, folder, title) -> str: ...   # the family's section of summary.md

    @FAMILY.runner("mine-baseline", help="a classifier trained per task")
    def baseline(arg, seed, device, batch_size): ...   # -> Runner for --model mine-baseline[:ARG]

Optional: tasks that a setting provides rather than the code (``task_source``: one task per
folder a setting names, with ``Setting(..., tasks="mine/real/*")`` so other tasks stay
unbound), a model judge for free-text answers (``model_judge``, used by ``procvis eval
--judge``) and a report over several runs (``report_runs``, used by ``procvis report``).

That is the whole contract: the registry finds the folder, the generic tests cover every
task, and the harness, CLI and report code need no change.
"""
from __future__ import annotations

import fnmatch
import itertools
import os
from dataclasses import dataclass
from typing import Any, Callable

from . import registry
from .protocol import Protocol
from .replies import Reader
from .task import Task


@dataclass(frozen=True)
class Setting:
    """A family setting that changes samples (so it is part of every task's identity).

    ``default`` applies unless the environment variable ``env`` is set or a value is given
    (``--set family.name=value``); ``check(value) -> value`` normalises a value (e.g. makes
    a folder path absolute) or raises :class:`engine.errors.UserError` naming what is allowed.
    ``tasks`` (a glob of task ids) limits the setting to the tasks it changes: other tasks
    are not bound to it, so their identity and records stay as they were."""

    name: str
    help: str
    default: Any
    env: str | None = None
    check: Callable[[Any], Any] | None = None
    tasks: str | None = None

    def concerns(self, task_id: str | None) -> bool:
        """Whether this setting is part of task ``task_id``'s identity (``None``: any task)."""
        return self.tasks is None or task_id is None or fnmatch.fnmatchcase(task_id, self.tasks)


class Family:
    """A family plug-in; see the module docstring."""

    def __init__(self, name: str, about: str, settings=(), reader: Reader | None = None, block: int = 1,
                 native_size: int = 224):
        self.name = name
        self.about = about
        self.settings: dict[str, Setting] = {s.name: s for s in settings}
        self.reader = reader              # how its tasks' replies are read (default: by answer type)
        self.block = int(block)           # indices per copy of the benchmark (Percept-V: 10 per size 1..20)
        self.native_size = int(native_size)   # panel side (px) evaluations and audits render at by default
        self.reporter: Callable[..., str] | None = None
        self.runs_reporter: Callable[..., str] | None = None
        self.exemptions: list[tuple[str, str, str]] = []     # (task glob, audit bar, reason)
        self.concept_fn: Callable[..., Any] | None = None
        self.chance_fn: Callable[..., float | None] | None = None
        self.judge_fn: Callable[..., list[bool]] | None = None
        self.attributes_fn: Callable[..., Any] | None = None
        self.shortcut_fn: Callable[..., dict | None] | None = None
        registry.add_family(self)

    def __repr__(self) -> str:
        return f"Family({self.name!r})"

    # ---------------------------------------------------------------- registration
    def task(self, pattern: str | None = None, cases: dict[str, dict] | None = None, *, description="",
             answer_distribution=None, rank=0, reader: Reader | None = None, open_answer: bool = False,
             overall: bool = True, batched: bool = False, group: str | None = None, options=None, **grid):
        """Decorator: register ``fn`` once per task, with id ``pattern.format(**params)`` for
        every combination of the ``grid`` lists, or once per entry of ``cases``
        (``{task id: params}``). ``description``, ``answer_distribution`` (answer ->
        probability, when known exactly; chance rows are computed from it) and ``rank``
        (position in the results table) may be callables of the params. ``reader`` overrides
        the family's reader; ``open_answer`` marks free text graded by a judge; ``overall=False``
        leaves the task out of its family's overall row (as a paper's overall may). ``batched``:
        ``fn(rng: engine.batched.BatchRandom, **params)`` draws a whole batch (see
        :mod:`engine.batched`); ``group`` (batched only) names the param whose equal values let
        tasks be drawn in one call, each param then given as a list over the batch (see
        :func:`engine.task.draw_together`). ``options`` (a list, or a callable of the params): the answer
        choices every sample of the task offers, in order, when all its samples offer the same;
        streams then read label maps without drawing, and each sample is checked to offer them."""
        if (pattern is None) == (cases is None):
            raise ValueError("give either a pattern with grid lists or cases, not both")
        if group is not None and not batched:
            raise ValueError(f"group={group!r} needs batched=True")

        def deco(fn):
            if cases is not None:
                entries = list(cases.items())
            else:
                names = list(grid)
                entries = []
                for values in itertools.product(*(grid[n] for n in names)):
                    params = dict(zip(names, values))
                    entries.append((pattern.format(**params), params))
            for tid, params in entries:
                about = _value(description, params) or (fn.__doc__ or "").strip().split("\n")[0]
                registry.add_task(Task(tid, fn, self.name, dict(params), about, _value(answer_distribution, params),
                                       int(_value(rank, params) or 0), reader or self.reader, open_answer,
                                       overall=overall, batched=batched, group=group,
                                       options=_options(_value(options, params))))
            return fn
        return deco

    def task_source(self, prefix: str, cases: Callable[[dict], dict[str, dict]], *, description="",
                    reader: Reader | None = None, open_answer: bool = False):
        """Decorator: register ``fn`` for tasks that the family's settings provide rather than
        the code, e.g. one task per problem folder a setting names. ``cases(settings) ->
        {task id: params}`` lists them under the family's resolved settings (own names); every
        id starts with ``prefix``. They are listed, resolved and bound like registered tasks
        wherever the settings are known (:func:`engine.registry.resolve`, ``get_task``,
        ``bound_task``); ``description`` may be a callable of the params."""
        if not prefix.endswith("/") or prefix.count("/") < 2:
            raise ValueError(f"task source prefix {prefix!r} must name a folder below the family root, e.g. 'mine/real/'")

        def deco(fn):
            about = (fn.__doc__ or "").strip().split("\n")[0]
            registry.add_source(prefix, Task(prefix, fn, self.name, {}, about, None, 0, reader or self.reader,
                                             open_answer), cases, description)
            return fn
        return deco

    def protocol(self, cls: type[Protocol]) -> type[Protocol]:
        """Class decorator: ``cls`` becomes ``--protocol cls.name`` for this family's tasks."""
        cls.family = self.name
        registry.add_protocol(cls)
        return cls

    def runner(self, name: str, help: str) -> Callable:
        """Decorator: ``factory(arg, seed=, device=, batch_size=) -> Runner`` answers
        ``--model name`` (``arg`` None) and ``--model name:ARG``; a baseline that only makes
        sense for this family's protocols (a classifier trained per task) lives here. The
        factory should import heavy packages itself, so listing runners stays cheap."""
        def deco(factory):
            registry.add_runner(name, factory, help)
            return factory
        return deco

    def exempt(self, pattern: str, bar: str, reason: str) -> None:
        """Tasks matching the glob ``pattern`` cannot meet audit ``bar`` by design; ``reason``
        (the paper's own definition, stated) is printed next to them in ``AUDIT.md``. Bars:
        ``probe``, ``reader``, ``legibility``, ``solvability``, ``shortcut`` (a pixel solver the
        family states puzzles for: :meth:`shortcut`), and ``predictable`` (answers
        that follow from the parameters, e.g. a count that is the problem size)."""
        if not reason.strip():
            raise ValueError(f"exemption of {pattern!r} from {bar!r} needs a reason")
        self.exemptions.append((pattern, bar, reason.strip()))

    def concept(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: ``fn(task, kind) -> properties`` names what a task's rule is about among
        ``color``, ``size``, ``shape``, ``count``, ``overlap`` (which overlapping objects
        merge) and ``position`` (where objects sit relative to one another), as far as a
        negative of ``kind`` (``None``: any sample) may change it. The audit's nuisance probe
        leaves out the statistics of those properties (a colour rule's negatives differ in
        colour by design); everything else, and every property a kind must keep, stays in."""
        self.concept_fn = fn
        return fn

    def concept_of(self, task, kind: str | None = None) -> set[str]:
        """The properties :meth:`concept` declares for ``task`` and ``kind`` (none by default)."""
        return set(self.concept_fn(task, kind)) if self.concept_fn else set()

    def attributes(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Decorator: ``fn(sample) -> (panels, states) | None`` for a family whose answer is a
        rule over labelled panels (Bongard: six panels per side): ``panels`` lists ``(label,
        {attribute: value})`` pairs, what each panel shows as named numbers, and
        ``states(attribute) -> bool`` says which attributes state the rule. The audit fits its
        nuisance probe on every other attribute: if they tell the labels apart, the rule has
        a second valid answer."""
        self.attributes_fn = fn
        return fn

    def shortcut(self, fn: Callable[..., dict | None]) -> Callable[..., dict | None]:
        """Decorator: ``fn(sample) -> puzzle | None`` states the question structure of a
        sample that a non-learned pixel solver could answer (puzzles of image tiles: which
        panel has the hole, which panels are candidates, the options; the forms are listed
        in :mod:`evals.audit.seams`), read from the panels' order and the question, never
        from the answer. The audit solves it from the rendered pixels and bars its accuracy
        (``shortcut``); ``None``: not a puzzle that solver answers."""
        self.shortcut_fn = fn
        return fn

    def chance(self, fn: Callable[..., float | None]) -> Callable[..., float | None]:
        """Decorator: ``fn(task) -> float | None``, the chance row of ``task`` as the family
        computes it (from its reader's acceptance sets, e.g. any of several right answers);
        ``None`` (and the default): from the task's answer distribution, ``sum p^2``."""
        self.chance_fn = fn
        return fn

    def chance_of(self, task) -> float | None:
        """The chance :meth:`chance` states for ``task``, or None."""
        return self.chance_fn(task) if self.chance_fn else None

    def model_judge(self, fn: Callable[..., list[bool]]) -> Callable[..., list[bool]]:
        """Decorator: ``fn(runner, pairs) -> [bool, ...]`` grades free-text replies with a
        model through the runner interface, one verdict per ``(sample, reply)`` pair (what
        ``procvis eval --judge MODEL`` reports beside the family's own reader)."""
        self.judge_fn = fn
        return fn

    def exemption(self, task_id: str, bar: str) -> str | None:
        """The reason ``task_id`` is exempt from ``bar``, or ``None``."""
        return next((r for p, b, r in self.exemptions if b == bar and fnmatch.fnmatchcase(task_id, p)), None)

    def report(self, fn: Callable[..., str]) -> Callable[..., str]:
        """Decorator: ``fn(results, folder, title) -> markdown``, the family's section of an
        evaluation's ``summary.md`` (``results``: the rows of this family's tasks)."""
        self.reporter = fn
        return fn

    def report_runs(self, fn: Callable[..., str]) -> Callable[..., str]:
        """Decorator: ``fn(results, folder, title) -> markdown`` for the rows of several runs
        at once (each row names its ``model`` and ``protocol``), e.g. one table of models x
        strategies; ``procvis report RUN...`` uses it, else :meth:`report` once per run."""
        self.runs_reporter = fn
        return fn

    # ---------------------------------------------------------------- settings
    def resolve_settings(self, given: dict, task_id: str | None = None) -> dict:
        """Every setting's value (only those that concern ``task_id`` when given):
        ``given["<family>.<name>"]``, else ``$env``, else the default, each passed through its
        check."""
        out = {}
        for s in self.settings.values():
            if not s.concerns(task_id):
                continue
            key = f"{self.name}.{s.name}"
            if key in given:
                value = given[key]
            elif s.env and os.environ.get(s.env):
                value = os.environ[s.env]
            else:
                value = s.default
            out[s.name] = s.check(value) if s.check else value
        return out


def _value(v, params):
    return v(**params) if callable(v) else v


def _options(v) -> tuple | None:
    return None if v is None else tuple(str(o) for o in v)
